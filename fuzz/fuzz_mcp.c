/*
 * fuzz_mcp: the MCP server's JSON-RPC reader. Messages come from whatever
 * program spawned the server. One server on the pyrepo fixture (its index in
 * a temporary directory, removed at exit) and one session take every input;
 * an input is split at newlines, as the stdio transport splits its stream,
 * and each piece is handed to mcp_handle. Whatever arrives (not JSON, a
 * batch, wrong types for the id, method or params, unknown methods and
 * tools, hostile tool arguments, cancellations of anything) must end in
 * messages that are each one JSON-RPC 2.0 object -- a response to the
 * request, a notification -- and mcp_handle's return must say whether a
 * response was sent, never a crash.
 */
#include "mcp.h"
#include "engine.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct engine_settings set;
static struct mcp_server *server;
static struct mcp_session *session;
static char dir[] = "/tmp/drqa-fuzz-mcp-XXXXXX";
static char *index_path;

struct sink {
    int responses;     /* messages with an id or an error: responses */
};

static void check_send(void *ctx, const char *json)
{
    struct sink *k = ctx;
    cJSON *j = cJSON_Parse(json);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "jsonrpc");
    if (!cJSON_IsObject(j) || !cJSON_IsString(v) || strcmp(v->valuestring, "2.0")) abort();
    if (strchr(json, '\n')) abort();   /* one message, one line */
    if (!cJSON_GetObjectItemCaseSensitive(j, "method")) k->responses++;
    cJSON_Delete(j);
}

static void release(void)
{
    mcp_server_shutdown(server);
    mcp_session_free(session);
    mcp_server_free(server);
    const char *ext[] = {"", "-wal", "-shm", ".tmp"};
    for (size_t i = 0; i < ARRAY_LEN(ext); i++) {
        char *p = xasprintf("%s%s", index_path, ext[i]);
        unlink(p);
        free(p);
    }
    free(index_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    index_path = xasprintf("%s/index.sqlite", dir);
    set.index.repo = DRQA_SRCDIR "/tests/fixtures/pyrepo";
    set.index.index_path = index_path;
    set.index.opt.threads = 1;
    set.index.opt.max_file_size = 1 << 20;
    set.index.opt.busy_read = 1;
    set.index.no_progress = 1;
    set.index.quiet = 1;
    search_config_defaults(&set.search);
    set.search.iterations = 2;   /* an ask stays short */
    set.mode = "mcts";
    set.quiet = 1;
    set.config.policy = "offline";
    char err[1024];
    struct mcp_server_config cfg = {.engine = &set, .quiet = 1};
    if (!(server = mcp_server_new(&cfg, err, sizeof err))) { fprintf(stderr, "%s\n", err); exit(1); }
    session = mcp_session_new(server);
    atexit(release);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct sink k = {0};
        int rc = mcp_handle(session, p, n, check_send, &k);
        /* 1: exactly one response was sent; 0 and 2 (a notification, a
         * cancelled request): none */
        if ((rc == 1) != (k.responses == 1) || k.responses > 1 || rc < 0 || rc > 2) abort();
        p += n + (nl ? 1 : 0);
    }
    return 0;
}
