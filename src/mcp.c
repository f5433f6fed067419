/*
 * mcp: the MCP server core (see mcp.h): JSON-RPC framing and errors, the
 * lifecycle (initialize, ping, logging/setLevel), the tools generated from
 * the action registry plus ask and recheck, the index built in the
 * background and refreshed before each call, slots bounding the calls that
 * run at once, progress and cancellation.
 */
#include <config.h>  /* autoconf: PACKAGE_VERSION */
#include "mcp.h"
#include "action.h"
#include "engine.h"
#include "recheck.h"
#include "semantic.h"
#include "util.h"
#include "watch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* JSON-RPC 2.0 error codes */
#define MCP_ID_MAX 9007199254740991.0   /* 2^53 - 1: the largest integer a JSON number holds exactly */

enum { RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601, RPC_PARAMS = -32602,
       RPC_INTERNAL = -32603, RPC_SHUTDOWN = -32000 };

/* Bounds of a structured result: a model's context is not a dump. The text
 * is bounded by the action's token budget (action_result_render). */
#define MCP_MAX_SPANS 50
#define MCP_MAX_ITEMS 100
#define MCP_WAIT_TICK_MS 100

static const char *const versions[] = {MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26"};

static const char *const level_names[] = {"debug", "info", "notice", "warning", "error", "critical", "alert",
                                          "emergency"};
enum { LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING, LOG_ERROR };
#define LOG_NLEVELS ((int)ARRAY_LEN(level_names))

enum tool_kind { TOOL_ACTION, TOOL_ASK, TOOL_RECHECK };

struct mcp_tool {
    char *name;                      /* owned */
    enum tool_kind kind;
    const struct action_def *def;    /* TOOL_ACTION: the registry's (static) */
};

/* One engine per slot, opened on first use and again after the index was
 * written (gen): at most nslots tool calls run at once. */
struct mcp_slot {
    struct engine *e;
    unsigned long gen;
    atomic_int cancel;               /* aborts the engine's model requests */
    int busy;
};

/* A request in flight, for notifications/cancelled. */
struct mcp_req {
    char *key;                       /* its id as JSON text */
    atomic_int cancel;
    struct mcp_slot *slot;           /* while it holds one (under the session's lock) */
    struct mcp_req *next;
};

struct mcp_session {
    struct mcp_server *s;
    pthread_mutex_t lock;            /* reqs, level, version, the default sink */
    char version[16];
    int level;                       /* the lowest level sent */
    mcp_send_fn dsend;
    void *dctx;
    struct mcp_req *reqs;
    /* cancellations of ids not (yet) in flight: a transport may apply a
     * notification before the thread running its request has started it */
    char *early[16];
    size_t nearly;
    int ended;                       /* mcp_session_cancel_all: every request is cancelled */
    struct mcp_session *next;        /* the server's list (under its lock) */
};

struct mcp_server {
    struct engine_settings set;      /* a copy: progress never goes to the terminal */
    int quiet;
    struct mcp_tool *tools;
    size_t ntools;
    cJSON *tools_json;               /* the tools/list result's array */

    pthread_mutex_t lock;            /* everything below but update_lock's */
    pthread_cond_t cond;             /* the index's state changed, a slot was freed, a stop */
    int ready;                       /* the first index is built (or failed: index_error) */
    char *index_error;
    char phase[32];
    size_t done, total;
    unsigned long state_seq;         /* bumped on every state change, for progress */
    unsigned long gen;               /* bumped whenever the index was written after start */
    struct engine_shared *sh;
    struct mcp_slot *slots;
    int nslots, nfree;
    struct mcp_session *sessions;
    pthread_t indexer;
    int indexer_started;
    atomic_int stop;

    pthread_mutex_t update_lock;     /* one index update at a time; with it: */
    int64_t last_check_us;           /* when the last freshness check started */
    struct watch *watch;             /* the repository's directories, or NULL: check every call */
    int refresh_pending;             /* the last update failed: try again at the next call */
};

/* ------------------------------------------------------------ messages */

static char *print_msg(cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    if (!s) abort();   /* cJSON fails only when out of memory */
    return s;
}

static void send_json(mcp_send_fn send, void *ctx, cJSON *j)
{
    char *s = print_msg(j);
    send(ctx, s);
    free(s);
}

/* A new JSON-RPC message; send_msg sends and deletes it. */
static cJSON *rpc_msg(void)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "jsonrpc", "2.0");
    return j;
}

static void send_msg(mcp_send_fn send, void *ctx, cJSON *j)
{
    send_json(send, ctx, j);
    cJSON_Delete(j);
}

/* A request id or progress token as the client wrote it: an integer is
 * written as an integer ("id":1000000000000000, not 1e+15, which a client
 * matching ids by value or reading them as integers does not match). */
static cJSON *id_copy(const cJSON *id)
{
    if (cJSON_IsNumber(id) && fabs(id->valuedouble) <= MCP_ID_MAX && id->valuedouble == floor(id->valuedouble)) {
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)id->valuedouble);
        return cJSON_CreateRaw(num);
    }
    return cJSON_Duplicate(id, 1);
}

static void send_error(mcp_send_fn send, void *ctx, const cJSON *id, int code, const char *msg)
{
    cJSON *j = rpc_msg();
    /* no id when it is unknown (a parse error): the MCP schema makes it
     * optional and allows no null, which the official SDK refuses */
    if (id) cJSON_AddItemToObject(j, "id", id_copy(id));
    cJSON *e = cJSON_AddObjectToObject(j, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    send_msg(send, ctx, j);
}

static void send_result(mcp_send_fn send, void *ctx, const cJSON *id, cJSON *result)
{
    cJSON *j = rpc_msg();
    cJSON_AddItemToObject(j, "id", id_copy(id));
    cJSON_AddItemToObject(j, "result", result);
    send_msg(send, ctx, j);
}

static void send_notification(mcp_send_fn send, void *ctx, const char *method, cJSON *params)
{
    cJSON *j = rpc_msg();
    cJSON_AddStringToObject(j, "method", method);
    cJSON_AddItemToObject(j, "params", params);
    send_msg(send, ctx, j);
}

const char *mcp_negotiate_version(const char *requested)
{
    for (size_t i = 0; requested && i < ARRAY_LEN(versions); i++)
        if (!strcmp(requested, versions[i])) return versions[i];
    return MCP_PROTOCOL_LATEST;
}

static int is_request(const cJSON *j)
{
    return cJSON_IsObject(j) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "method")) &&
           cJSON_GetObjectItemCaseSensitive(j, "id");
}

int mcp_is_request(const char *msg, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(msg, len);
    int r = is_request(j);
    const cJSON *m;
    if (cJSON_IsArray(j)) cJSON_ArrayForEach(m, j) r |= is_request(m);   /* a batch holding a request */
    cJSON_Delete(j);
    return r;
}

/* --------------------------------------------------------------- logging */

static int level_of(const char *name)
{
    for (int i = 0; name && i < LOG_NLEVELS; i++)
        if (!strcmp(name, level_names[i])) return i;
    return -1;
}

static cJSON *log_params(int level, const char *text)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "level", level_names[level]);
    cJSON_AddStringToObject(p, "logger", "drqa-tui");
    cJSON_AddStringToObject(p, "data", text);
    return p;
}

/* A message for every session's default sink that asked for its level, and
 * stderr (warnings and errors always, the rest unless quiet). */
static void server_log(struct mcp_server *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void server_log(struct mcp_server *s, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvasprintf(fmt, ap);
    va_end(ap);
    log_msg("mcp: %s", text);
    if (level >= LOG_WARNING || !s->quiet) {
        char *safe = text_term_safe(text);
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
    }
    pthread_mutex_lock(&s->lock);
    for (struct mcp_session *ss = s->sessions; ss; ss = ss->next) {
        pthread_mutex_lock(&ss->lock);
        if (ss->dsend && level >= ss->level)
            send_notification(ss->dsend, ss->dctx, "notifications/message", log_params(level, text));
        pthread_mutex_unlock(&ss->lock);
    }
    pthread_mutex_unlock(&s->lock);
    free(text);
}

/* ------------------------------------------------------------------ tools */

/* FindCodeSnippet -> find_code_snippet */
static char *snake_name(const char *camel)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; camel[i]; i++) {
        unsigned char c = (unsigned char)camel[i], prev = i ? (unsigned char)camel[i - 1] : 0,
                      next = (unsigned char)camel[i + 1];
        if (i && isupper(c) && (islower(prev) || isdigit(prev) || (isupper(prev) && islower(next))))
            buf_addc(&b, '_');
        buf_addc(&b, (char)tolower(c));
    }
    return buf_take(&b);
}

static cJSON *prop(const char *type, const char *description)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "type", type);
    if (description) cJSON_AddStringToObject(p, "description", description);
    return p;
}

/* A schema whose value is of either type: {"type": [t1, t2], "description": ...}. */
static cJSON *prop2(const char *t1, const char *t2, const char *description)
{
    const char *types[] = {t1, t2};
    cJSON *p = cJSON_CreateObject();
    cJSON_AddItemToObject(p, "type", cJSON_CreateStringArray(types, 2));
    cJSON_AddStringToObject(p, "description", description);
    return p;
}

/* Adds "required": [the names up to NULL] to an object schema. */
static void required(cJSON *schema, ...)
{
    cJSON *req = cJSON_AddArrayToObject(schema, "required");
    va_list ap;
    va_start(ap, schema);
    for (const char *n; (n = va_arg(ap, const char *));) cJSON_AddItemToArray(req, cJSON_CreateString(n));
    va_end(ap);
}

/* inputSchema from the argument table (JSON Schema 2020-12, the default
 * dialect of MCP tool schemas). */
static cJSON *input_schema(const struct action_def *d)
{
    cJSON *sc = cJSON_CreateObject();
    cJSON_AddStringToObject(sc, "type", "object");
    cJSON *props = cJSON_AddObjectToObject(sc, "properties");
    cJSON *req = cJSON_CreateArray();
    for (const struct action_arg *a = d->args; a->name; a++) {
        cJSON *p;
        switch (a->type) {
        case ACTION_ARG_STRING_LIST:
            p = prop("array", a->description);
            cJSON_AddItemToObject(p, "items", prop("string", NULL));
            cJSON_AddNumberToObject(p, "minItems", 1);
            break;
        case ACTION_ARG_INT: p = prop("integer", a->description); break;
        case ACTION_ARG_BOOL: p = prop("boolean", a->description); break;
        case ACTION_ARG_STRING:
        default:
            p = prop("string", a->description);
            /* "" is a value where the table says so (Outline's path: the whole repository) */
            if (a->required && a->required != ACTION_ARG_EMPTY_OK) cJSON_AddNumberToObject(p, "minLength", 1);
            if (a->choices) {   /* the values the action takes, for a client that checks before it calls */
                cJSON *en = cJSON_AddArrayToObject(p, "enum");
                for (const char *const *v = a->choices; *v; v++) cJSON_AddItemToArray(en, cJSON_CreateString(*v));
            }
            break;
        }
        cJSON_AddItemToObject(props, a->name, p);
        if (a->required) cJSON_AddItemToArray(req, cJSON_CreateString(a->name));
    }
    cJSON_AddItemToObject(sc, "required", req);
    cJSON_AddBoolToObject(sc, "additionalProperties", 0);
    return sc;
}

static cJSON *span_schema(int with_hash)
{
    cJSON *sp = prop("object", NULL);
    cJSON *pp = cJSON_AddObjectToObject(sp, "properties");
    cJSON_AddItemToObject(pp, "path", prop("string", "repository-relative path"));
    cJSON_AddItemToObject(pp, "start_line", prop("integer", "first line, 1-based"));
    cJSON_AddItemToObject(pp, "end_line", prop("integer", "last line, inclusive"));
    cJSON_AddItemToObject(pp, "symbol",
                          prop2("string", "null", "what the span is: 'class Flask(App)', 'def run(self, ...)'"));
    cJSON_AddItemToObject(pp, "elided", prop("boolean", "the text is an outline, not the verbatim lines"));
    if (with_hash) cJSON_AddItemToObject(pp, "text_hash", prop("string", "hash of the cited lines' text (recheck)"));
    required(sp, "path", "start_line", "end_line", NULL);
    return sp;
}

static cJSON *array_of(cJSON *items, const char *description)
{
    cJSON *a = prop("array", description);
    cJSON_AddItemToObject(a, "items", items);
    return a;
}

static cJSON *action_output_schema(void)
{
    cJSON *sc = prop("object", NULL);
    cJSON *pp = cJSON_AddObjectToObject(sc, "properties");
    cJSON_AddItemToObject(pp, "action", prop("string", "the action that ran"));
    cJSON_AddItemToObject(pp, "spans", array_of(span_schema(0), "the code found, best first"));
    cJSON_AddItemToObject(pp, "items", array_of(prop("object", NULL), "one object per match, fields by action"));
    cJSON_AddItemToObject(pp, "notes", array_of(prop("string", NULL), "suggestions, fallbacks, what was cut"));
    cJSON_AddItemToObject(pp, "truncated", prop("boolean", "something was cut to fit; the notes say what"));
    cJSON_AddItemToObject(pp, "more_spans", prop("integer", "spans left out of this result"));
    cJSON_AddItemToObject(pp, "more_items", prop("integer", "items left out of this result"));
    required(sc, "action", "spans", "truncated", NULL);
    return sc;
}

static cJSON *annotations(const char *title, int idempotent, int open_world)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddBoolToObject(a, "readOnlyHint", 1);
    cJSON_AddBoolToObject(a, "destructiveHint", 0);
    cJSON_AddBoolToObject(a, "idempotentHint", idempotent);
    cJSON_AddBoolToObject(a, "openWorldHint", open_world);
    return a;
}

/* A tool's entry of tools/list; takes in and out. */
static cJSON *tool_json(const char *name, const char *title, const char *description, cJSON *in, cJSON *out,
                        int idempotent)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "name", name);
    cJSON_AddStringToObject(t, "title", title);
    cJSON_AddStringToObject(t, "description", description);
    cJSON_AddItemToObject(t, "inputSchema", in);
    cJSON_AddItemToObject(t, "outputSchema", out);
    cJSON_AddItemToObject(t, "annotations", annotations(title, idempotent, 0));
    return t;
}

/* The inputSchema of a tool with one required argument. */
static cJSON *one_arg_schema(const char *name, cJSON *arg)
{
    cJSON *in = prop("object", NULL);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(in, "properties"), name, arg);
    required(in, name, NULL);
    cJSON_AddBoolToObject(in, "additionalProperties", 0);
    return in;
}

static cJSON *action_tool_json(const char *name, const struct action_def *d)
{
    char *desc = xasprintf("%s%s%s Read-only, on the repository's index, which is brought up to date with the "
                           "files before each call. Returns numbered source lines under 'path:start-end  symbol' "
                           "headers, and the same spans (path, start_line, end_line, symbol) in structuredContent; "
                           "a long result is cut with a line saying which lines to read next (view_code).",
                           d->description ? d->description : "", d->when ? " " : "", d->when ? d->when : "");
    cJSON *t = tool_json(name, d->name, desc, input_schema(d), action_output_schema(), 1);
    free(desc);
    return t;
}

static cJSON *ask_tool_json(void)
{
    cJSON *q = prop("string", "the question, in words, e.g. 'How does the app dispatch a request to a view?'");
    cJSON_AddNumberToObject(q, "minLength", 1);
    cJSON *out = prop("object", NULL);
    cJSON *pp = cJSON_AddObjectToObject(out, "properties");
    cJSON_AddItemToObject(pp, "question", prop("string", NULL));
    cJSON_AddItemToObject(pp, "answer", prop("string", "Markdown"));
    cJSON_AddItemToObject(pp, "citations", array_of(span_schema(1), "the spans the answer cites, most important first"));
    cJSON_AddItemToObject(pp, "commit",
                          prop2("string", "null", "HEAD's commit the index described (null outside git)"));
    cJSON_AddItemToObject(pp, "policy", prop("string", "offline or llm"));
    cJSON_AddItemToObject(pp, "iterations", prop("integer", NULL));
    required(out, "answer", "citations", NULL);
    return tool_json("ask", "Ask about the repository",
        "Answer a question about the repository with a grounded tree search over its code (the same search as "
        "drqa-tui --ask: the configured policy, offline by default). Use it for 'how/where/why' questions that "
        "need several lookups; for one name or one file, the lookup tools are faster. Takes seconds to minutes; "
        "send a progressToken to get progress. Returns the answer in Markdown and its citations as spans "
        "(path, start_line, end_line, symbol, text_hash) with the commit the index describes, so the answer can "
        "be rechecked later with the recheck tool.",
        one_arg_schema("question", q), out, 0);
}

static cJSON *recheck_tool_json(void)
{
    cJSON *saved = prop2("object", "string",
                         "the saved answer: an ask result's structuredContent, a --batch line, or a transcript, "
                         "as an object or as JSON text");
    cJSON *out = prop("object", NULL);
    cJSON *pp = cJSON_AddObjectToObject(out, "properties");
    cJSON *c = prop("object", NULL);
    cJSON *cp = cJSON_AddObjectToObject(c, "properties");
    cJSON_AddItemToObject(cp, "path", prop("string", NULL));
    cJSON_AddItemToObject(cp, "start_line", prop("integer", NULL));
    cJSON_AddItemToObject(cp, "end_line", prop("integer", NULL));
    cJSON *v = prop("string", NULL);
    const char *verdicts[] = {"unchanged", "moved", "changed", "gone", "unknown"};
    cJSON_AddItemToObject(v, "enum", cJSON_CreateStringArray(verdicts, (int)ARRAY_LEN(verdicts)));
    cJSON_AddItemToObject(cp, "verdict", v);
    cJSON_AddItemToObject(cp, "new_start_line", prop("integer", "moved: where the text is now"));
    cJSON_AddItemToObject(cp, "new_end_line", prop("integer", NULL));
    cJSON_AddItemToObject(pp, "citations", array_of(c, NULL));
    cJSON_AddItemToObject(pp, "stale", prop("boolean", "some citation changed or is gone: ask again"));
    required(out, "citations", "stale", NULL);
    return tool_json("recheck", "Recheck a saved answer",
        "Say whether a saved answer's citations still hold in the repository as it is now: for each cited span "
        "'unchanged', 'moved' (the same text at other lines, given), 'changed' or 'gone'. Use it before reusing "
        "an answer saved earlier (an ask result, a drqa-tui --batch line or a transcript) instead of asking "
        "again; ask again only when a citation changed or is gone.",
        one_arg_schema("saved", saved), out, 1);
}

static void tools_build(struct mcp_server *s)
{
    const char *const *names = action_names();
    size_t n = 0;
    while (names[n]) n++;
    s->tools = xcalloc(n + 2, sizeof *s->tools);
    s->tools_json = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const struct action_def *d = action_find(names[i]);
        if (!d || !d->run) continue;   /* schema only: Finish, or switched off */
        if (s->set.no_semantic && !strcmp(d->name, "SemanticSearch")) continue;
        struct mcp_tool *t = &s->tools[s->ntools++];
        t->name = snake_name(d->name);
        t->kind = TOOL_ACTION;
        t->def = d;
        cJSON_AddItemToArray(s->tools_json, action_tool_json(t->name, d));
    }
    s->tools[s->ntools++] = (struct mcp_tool){xstrdup("ask"), TOOL_ASK, NULL};
    cJSON_AddItemToArray(s->tools_json, ask_tool_json());
    s->tools[s->ntools++] = (struct mcp_tool){xstrdup("recheck"), TOOL_RECHECK, NULL};
    cJSON_AddItemToArray(s->tools_json, recheck_tool_json());
}

static const struct mcp_tool *tool_find(const struct mcp_server *s, const char *name)
{
    for (size_t i = 0; name && i < s->ntools; i++)
        if (!strcmp(s->tools[i].name, name)) return &s->tools[i];
    return NULL;
}

/* -------------------------------------------------------------- the index */

static void ix_phase(void *ctx, const char *name)
{
    struct mcp_server *s = ctx;
    pthread_mutex_lock(&s->lock);
    snprintf(s->phase, sizeof s->phase, "%s", name ? name : "");
    s->done = s->total = 0;
    s->state_seq++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void ix_progress(void *ctx, size_t done, size_t total)
{
    struct mcp_server *s = ctx;
    pthread_mutex_lock(&s->lock);
    s->done = done;
    s->total = total;
    s->state_seq++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void *indexer_main(void *arg)
{
    struct mcp_server *s = arg;
    struct engine_hooks h = {.progress = ix_progress, .progress_ctx = s, .phase = ix_phase, .cancel = &s->stop};
    struct engine_shared *sh = NULL;
    char err[2048];
    int usage;
    int64_t t0 = now_ms();
    int rc = engine_shared_open_hooked(&s->set, &h, &sh, &usage, err, sizeof err);
    pthread_mutex_lock(&s->lock);
    if (rc) s->index_error = xstrdup(err);
    s->sh = sh;
    s->ready = 1;
    s->last_check_us = now_us();
    s->state_seq++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    if (rc && !atomic_load(&s->stop)) server_log(s, LOG_ERROR, "the index could not be built: %s", err);
    else if (!rc) server_log(s, LOG_INFO, "the index of %s is ready (%lld ms); %s", engine_repo_abs(sh),
                             (long long)(now_ms() - t0), engine_policy_line(sh));
    return NULL;
}

struct mcp_server *mcp_server_new(const struct mcp_server_config *cfg, char *err, size_t errlen)
{
    const struct engine_settings *o = cfg->engine;
    const char *repo = o ? o->index.repo : NULL;
    struct stat st;
    if (!repo || !*repo) {
        snprintf(err, errlen, "no repository given: drqa-tui --mcp REPO");
        return NULL;
    }
    if (stat(repo, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the repository '%s' %s; give the repository's top directory", repo,
                 stat(repo, &st) != 0 ? "does not exist" : "is not a directory");
        return NULL;
    }
    enum engine_mode mode;
    if (engine_parse_mode(o->mode, &mode)) {
        snprintf(err, errlen, "unknown --mode '%s'; use mcts, direct, rag-function or rag-window", o->mode);
        return NULL;
    }
    /* the registry is complete before any thread reads it: SemanticSearch
     * is registered here as --action registers it (the engine registers it
     * again, with remote embeddings when configured, before a call runs) */
    if (!o->no_semantic && semantic_action_register(NULL, err, errlen)) return NULL;
    struct mcp_server *s = xcalloc(1, sizeof *s);
    s->set = *o;
    s->set.index.no_progress = 1;
    s->quiet = cfg->quiet || o->quiet;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->update_lock, NULL);
    cond_init_monotonic(&s->cond);
    s->nslots = s->nfree = cfg->max_calls > 0 ? cfg->max_calls : MCP_MAX_CALLS;
    s->slots = xcalloc((size_t)s->nslots, sizeof *s->slots);
    tools_build(s);
    /* watched before the first update starts, so that no change made
     * during it goes unseen */
    char werr[512];
    if (!(s->watch = watch_open(repo, werr, sizeof werr)))
        server_log(s, LOG_NOTICE, "%s; every call checks the files instead", werr);
    if (pthread_create(&s->indexer, NULL, indexer_main, s) != 0) {
        snprintf(err, errlen, "cannot start the indexing thread: %s", strerror(errno));
        mcp_server_free(s);
        return NULL;
    }
    s->indexer_started = 1;
    return s;
}

void mcp_server_shutdown(struct mcp_server *s)
{
    if (!s) return;
    atomic_store(&s->stop, 1);
    pthread_mutex_lock(&s->lock);
    for (struct mcp_session *ss = s->sessions; ss; ss = ss->next) {
        pthread_mutex_lock(&ss->lock);
        for (struct mcp_req *r = ss->reqs; r; r = r->next) {
            atomic_store(&r->cancel, 1);
            if (r->slot) atomic_store(&r->slot->cancel, 1);
        }
        pthread_mutex_unlock(&ss->lock);
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

void mcp_server_free(struct mcp_server *s)
{
    if (!s) return;
    if (s->indexer_started) {
        mcp_server_shutdown(s);
        pthread_join(s->indexer, NULL);
    }
    watch_close(s->watch);
    for (int i = 0; i < s->nslots; i++) engine_close(s->slots[i].e);
    free(s->slots);
    engine_shared_free(s->sh);
    for (size_t i = 0; i < s->ntools; i++) free(s->tools[i].name);
    free(s->tools);
    cJSON_Delete(s->tools_json);
    free(s->index_error);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->update_lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}

/* -------------------------------------------------------------- sessions */

struct mcp_session *mcp_session_new(struct mcp_server *s)
{
    struct mcp_session *ss = xcalloc(1, sizeof *ss);
    ss->s = s;
    pthread_mutex_init(&ss->lock, NULL);
    snprintf(ss->version, sizeof ss->version, "%s", MCP_PROTOCOL_LATEST);
    ss->level = LOG_INFO;
    pthread_mutex_lock(&s->lock);
    ss->next = s->sessions;
    s->sessions = ss;
    pthread_mutex_unlock(&s->lock);
    return ss;
}

void mcp_session_free(struct mcp_session *ss)
{
    if (!ss) return;
    struct mcp_server *s = ss->s;
    pthread_mutex_lock(&s->lock);
    for (struct mcp_session **p = &s->sessions; *p; p = &(*p)->next)
        if (*p == ss) {
            *p = ss->next;
            break;
        }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < ss->nearly; i++) free(ss->early[i]);
    while (ss->reqs) {   /* none should be left: every mcp_handle has returned */
        struct mcp_req *r = ss->reqs;
        ss->reqs = r->next;
        free(r->key);
        free(r);
    }
    pthread_mutex_destroy(&ss->lock);
    free(ss);
}

void mcp_session_cancel_all(struct mcp_session *ss)
{
    if (!ss) return;
    pthread_mutex_lock(&ss->lock);
    ss->ended = 1;
    for (struct mcp_req *r = ss->reqs; r; r = r->next) {
        atomic_store(&r->cancel, 1);
        if (r->slot) atomic_store(&r->slot->cancel, 1);
    }
    pthread_mutex_unlock(&ss->lock);
}

void mcp_session_set_default_send(struct mcp_session *ss, mcp_send_fn send, void *ctx)
{
    pthread_mutex_lock(&ss->lock);
    ss->dsend = send;
    ss->dctx = ctx;
    pthread_mutex_unlock(&ss->lock);
}

/* ----------------------------------------------------------------- a call */

struct call {
    struct mcp_session *ss;
    struct mcp_server *s;
    mcp_send_fn send;
    void *ctx;
    const cJSON *id;
    const cJSON *token;              /* _meta.progressToken, or NULL */
    double progress;                 /* strictly increasing, as the protocol asks */
    struct mcp_req *req;
    struct mcp_slot *slot;
    int asks;                        /* an ask: leaves one slot to lookups (slot_acquire) */
};

enum { CALL_OK = 0, CALL_FAIL = -1, CALL_CANCELLED = -2 };

static int call_cancelled(const struct call *c)
{
    return (c->req && atomic_load(&c->req->cancel)) || atomic_load(&c->s->stop);
}

static void call_progress(struct call *c, double total, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void call_progress(struct call *c, double total, const char *fmt, ...)
{
    /* a cancelled request is no longer active: nothing more refers to it */
    if (!c->token || call_cancelled(c)) return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvasprintf(fmt, ap);
    va_end(ap);
    c->progress += 1;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddItemToObject(p, "progressToken", id_copy(c->token));
    cJSON_AddNumberToObject(p, "progress", c->progress);
    if (total > 0) cJSON_AddNumberToObject(p, "total", total);
    cJSON_AddStringToObject(p, "message", msg);
    send_notification(c->send, c->ctx, "notifications/progress", p);
    free(msg);
}

static void call_log(struct call *c, int level, const char *text)
{
    pthread_mutex_lock(&c->ss->lock);
    int on = level >= c->ss->level;
    pthread_mutex_unlock(&c->ss->lock);
    if (on) send_notification(c->send, c->ctx, "notifications/message", log_params(level, text));
}

static void timed_wait(struct mcp_server *s)
{
    struct timespec ts = monotonic_after_ms(MCP_WAIT_TICK_MS);
    pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

/* Waits for the first index, with progress. CALL_FAIL with err when it
 * could not be built. */
static int wait_ready(struct call *c, char *err, size_t errlen)
{
    struct mcp_server *s = c->s;
    unsigned long seen = 0;
    char last[32] = "";
    int64_t last_ms = 0;
    pthread_mutex_lock(&s->lock);
    while (!s->ready && !call_cancelled(c)) {
        /* a new phase at once, file counts at most every MCP_WAIT_TICK_MS */
        if (c->token && s->state_seq != seen &&
            (strcmp(last, s->phase) || now_ms() - last_ms >= MCP_WAIT_TICK_MS)) {
            seen = s->state_seq;
            last_ms = now_ms();
            snprintf(last, sizeof last, "%s", s->phase);
            char phase[32];
            snprintf(phase, sizeof phase, "%s", s->phase[0] ? s->phase : "start");
            size_t done = s->done, total = s->total;
            pthread_mutex_unlock(&s->lock);
            if (total) call_progress(c, 0, "indexing the repository: %s %zu/%zu files", phase, done, total);
            else call_progress(c, 0, "indexing the repository: %s", phase);
            pthread_mutex_lock(&s->lock);
            continue;
        }
        timed_wait(s);
    }
    int rc = call_cancelled(c) ? CALL_CANCELLED : s->index_error ? CALL_FAIL : CALL_OK;
    if (rc == CALL_FAIL) snprintf(err, errlen, "the index could not be built: %s", s->index_error);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int slot_acquire(struct call *c)
{
    struct mcp_server *s = c->s;
    /* an ask may run for minutes on a model: asks leave the last free slot
     * to the lookups, so that a long ask never holds one up (one slot in
     * all: shared) */
    int keep = c->asks && s->nslots > 1 ? 1 : 0;
    pthread_mutex_lock(&s->lock);
    while (s->nfree <= keep && !call_cancelled(c)) timed_wait(s);
    if (call_cancelled(c)) {
        pthread_mutex_unlock(&s->lock);
        return CALL_CANCELLED;
    }
    struct mcp_slot *slot = NULL;
    for (int i = 0; i < s->nslots && !slot; i++)
        if (!s->slots[i].busy) slot = &s->slots[i];
    slot->busy = 1;
    s->nfree--;
    pthread_mutex_unlock(&s->lock);
    atomic_store(&slot->cancel, 0);
    pthread_mutex_lock(&c->ss->lock);
    c->slot = c->req->slot = slot;
    if (atomic_load(&c->req->cancel)) atomic_store(&slot->cancel, 1);
    pthread_mutex_unlock(&c->ss->lock);
    return CALL_OK;
}

static void slot_release(struct call *c)
{
    if (!c->slot) return;
    pthread_mutex_lock(&c->ss->lock);
    c->req->slot = NULL;
    pthread_mutex_unlock(&c->ss->lock);
    struct mcp_server *s = c->s;
    pthread_mutex_lock(&s->lock);
    c->slot->busy = 0;
    s->nfree++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    c->slot = NULL;
}

/* The refresh's phases as the call's progress. */
static void call_phase(void *ctx, const char *name)
{
    call_progress(ctx, 0, "updating the index: %s", name);
}

static void call_files(void *ctx, size_t done, size_t total)
{
    call_progress(ctx, 0, "updating the index: %zu/%zu files", done, total);
}

/* Brings the index up to date when files changed: when the watch saw a
 * change (or, with no watch, when no check started after this call
 * arrived: a check made meanwhile by another call covers this one too). */
static int refresh(struct call *c, int64_t arrived_us, char *err, size_t errlen)
{
    struct mcp_server *s = c->s;
    int rc = CALL_OK;
    pthread_mutex_lock(&s->update_lock);
    int due = s->refresh_pending || (s->watch ? watch_changed(s->watch) : s->last_check_us < arrived_us);
    pthread_mutex_lock(&s->lock);
    if (due) s->last_check_us = now_us();
    struct engine_shared *sh = s->sh;
    pthread_mutex_unlock(&s->lock);
    if (due) {
        struct engine_hooks h = {.progress = call_files, .progress_ctx = c, .phase = call_phase, .cancel = &s->stop};
        int changed = 0, rebuilt = 0;
        s->refresh_pending = 0;
        if (engine_shared_refresh(sh, &h, &changed, &rebuilt, err, errlen)) {
            s->refresh_pending = 1;
            rc = call_cancelled(c) ? CALL_CANCELLED : CALL_FAIL;
        } else if (changed) {
            pthread_mutex_lock(&s->lock);
            s->gen++;
            pthread_mutex_unlock(&s->lock);
        }
    }
    pthread_mutex_unlock(&s->update_lock);
    return rc;
}

/* The slot's engine, opened again when the index was written since. */
static struct engine *slot_engine(struct call *c, char *err, size_t errlen)
{
    struct mcp_server *s = c->s;
    pthread_mutex_lock(&s->lock);
    unsigned long gen = s->gen;
    struct engine_shared *sh = s->sh;
    pthread_mutex_unlock(&s->lock);
    struct mcp_slot *slot = c->slot;
    if (slot->e && slot->gen != gen) {
        engine_close(slot->e);
        slot->e = NULL;
    }
    if (!slot->e) {
        if (engine_open_cancel(sh, &slot->cancel, &slot->e, err, errlen)) return NULL;
        slot->gen = gen;
    }
    return slot->e;
}

/* Everything a tool needs before it runs: the index, a slot, freshness, an
 * engine. */
static int call_prepare(struct call *c, struct engine **e, char *err, size_t errlen)
{
    int64_t arrived = now_us();
    int rc = wait_ready(c, err, errlen);
    if (rc == CALL_OK) rc = slot_acquire(c);
    if (rc == CALL_OK) rc = refresh(c, arrived, err, errlen);
    if (rc == CALL_OK && !(*e = slot_engine(c, err, errlen))) rc = CALL_FAIL;
    if (rc == CALL_OK && call_cancelled(c)) rc = CALL_CANCELLED;
    return rc;
}

static cJSON *text_content(const char *text)
{
    cJSON *arr = cJSON_CreateArray();
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "type", "text");
    cJSON_AddStringToObject(t, "text", text);
    cJSON_AddItemToArray(arr, t);
    return arr;
}

static cJSON *tool_error(const char *msg)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "content", text_content(msg));
    cJSON_AddBoolToObject(r, "isError", 1);
    return r;
}

/* A tool's success: text for the model, sc (taken) for programs. */
static cJSON *tool_result(const char *text, cJSON *sc)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "content", text_content(text));
    cJSON_AddItemToObject(r, "structuredContent", sc);
    cJSON_AddBoolToObject(r, "isError", 0);
    return r;
}

/* call_prepare for a tool: the engine, or NULL when the tool is to return
 * *rc now, with *result the tool error saying why unless it was cancelled. */
static struct engine *tool_engine(struct call *c, cJSON **result, int *rc)
{
    char err[2048];
    struct engine *e = NULL;
    *rc = call_prepare(c, &e, err, sizeof err);
    if (*rc == CALL_OK) return e;
    if (*rc != CALL_CANCELLED) {
        *result = tool_error(err);
        *rc = CALL_OK;
    }
    return NULL;
}

static cJSON *span_json(const struct evidence_span *sp)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "path", sp->path);
    cJSON_AddNumberToObject(x, "start_line", sp->start_line);
    cJSON_AddNumberToObject(x, "end_line", sp->end_line);
    if (sp->label) cJSON_AddStringToObject(x, "symbol", sp->label);
    else cJSON_AddNullToObject(x, "symbol");
    cJSON_AddBoolToObject(x, "elided", sp->elided);
    return x;
}

static int run_action_tool(struct call *c, const struct mcp_tool *t, const cJSON *args, cJSON **result)
{
    char err[2048];
    /* bad arguments are the action's own message, before any waiting */
    if (action_validate(t->def, args, err, sizeof err) != ACTION_OK) {
        *result = tool_error(err);
        return CALL_OK;
    }
    int rc;
    struct engine *e = tool_engine(c, result, &rc);
    if (!e) return rc;
    struct action_ctx *actx = engine_action_ctx(e);
    struct action_result r;
    rc = action_run(actx, t->def->name, args, &r, err, sizeof err);
    if (rc != ACTION_OK) {
        action_result_free(&r);
        *result = tool_error(err);
        return CALL_OK;
    }
    char *text = action_result_render(&r, actx->token_budget > 0 ? actx->token_budget : ACTION_DEFAULT_BUDGET);
    cJSON *sc = cJSON_CreateObject();
    cJSON_AddStringToObject(sc, "action", t->def->name);
    cJSON *spans = cJSON_AddArrayToObject(sc, "spans");
    for (size_t i = 0; i < r.ev.n && i < MCP_MAX_SPANS; i++) cJSON_AddItemToArray(spans, span_json(&r.ev.v[i]));
    cJSON *items = cJSON_AddArrayToObject(sc, "items");
    int nitems = cJSON_GetArraySize(r.items), k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, r.items) {
        if (k++ == MCP_MAX_ITEMS) break;
        cJSON_AddItemToArray(items, cJSON_Duplicate(it, 1));
    }
    cJSON *notes = cJSON_AddArrayToObject(sc, "notes");
    for (size_t i = 0; i < r.nnotes; i++) cJSON_AddItemToArray(notes, cJSON_CreateString(r.notes[i]));
    cJSON_AddBoolToObject(sc, "truncated", r.truncated);
    if (r.ev.n > MCP_MAX_SPANS) cJSON_AddNumberToObject(sc, "more_spans", (double)(r.ev.n - MCP_MAX_SPANS));
    if (nitems > MCP_MAX_ITEMS) cJSON_AddNumberToObject(sc, "more_items", nitems - MCP_MAX_ITEMS);
    *result = tool_result(text, sc);
    free(text);
    action_result_free(&r);
    return CALL_OK;
}

static void ask_progress(void *ctx, int iterations, int max_iterations, double best)
{
    struct call *c = ctx;
    call_progress(c, 0, "searching: iteration %d of %d, best value %.0f", iterations, max_iterations, best);
}

/* The arguments of ask and recheck: only the named fields, as the schema
 * says, with a message in the actions' words. */
static cJSON *check_fields(const char *tool, const cJSON *args, const char *const *fields)
{
    char err[2048];
    if (!cJSON_IsObject(args)) {
        snprintf(err, sizeof err, "%s: the arguments must be a JSON object with the field '%s'", tool, fields[0]);
        return tool_error(err);
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, args) {
        size_t i = 0;
        while (fields[i] && strcmp(fields[i], it->string)) i++;
        if (!fields[i]) {
            snprintf(err, sizeof err, "%s: unknown field '%s'; the field is '%s'", tool, it->string, fields[0]);
            return tool_error(err);
        }
    }
    return NULL;
}

/* The ask tool's structuredContent: the answer, its citations as spans
 * with their text hashes, and the provenance recheck reads back. */
static cJSON *ask_result_json(const struct engine_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "question", r->question ? r->question : "");
    cJSON_AddStringToObject(o, "answer", r->answer ? r->answer : "");
    cJSON *cites = cJSON_AddArrayToObject(o, "citations");
    for (size_t i = 0; i < r->cites.n; i++) {
        cJSON *x = span_json(&r->cites.v[i]);
        if (r->cite_hashes && r->cite_hashes[i]) cJSON_AddStringToObject(x, "text_hash", r->cite_hashes[i]);
        cJSON_AddItemToArray(cites, x);
    }
    if (r->commit[0]) cJSON_AddStringToObject(o, "commit", r->commit);
    else cJSON_AddNullToObject(o, "commit");
    cJSON_AddBoolToObject(o, "dirty", r->dirty);
    if (r->repo_name) cJSON_AddStringToObject(o, "repo_name", r->repo_name);
    cJSON_AddStringToObject(o, "mode", r->mode ? r->mode : "mcts");
    cJSON_AddStringToObject(o, "policy", r->policy ? r->policy : "offline");
    if (r->model) cJSON_AddStringToObject(o, "model", r->model);
    cJSON_AddNumberToObject(o, "iterations", r->iterations);
    if (r->stop_reason) cJSON_AddStringToObject(o, "stop_reason", r->stop_reason);
    return o;
}

static int run_ask_tool(struct call *c, const cJSON *args, cJSON **result)
{
    static const char *const fields[] = {"question", NULL};
    if ((*result = check_fields("ask", args, fields))) return CALL_OK;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(args, "question");
    if (!cJSON_IsString(q) || !*q->valuestring) {
        *result = tool_error(q ? "ask: field 'question' must be a non-empty string"
                               : "ask: missing required field 'question' (string: the question, in words)");
        return CALL_OK;
    }
    int rc;
    c->asks = 1;
    struct engine *e = tool_engine(c, result, &rc);
    if (!e) return rc;
    struct engine_ask_hooks h = {.progress = ask_progress, .ctx = c, .cancel = &c->req->cancel};
    struct engine_result r;
    call_progress(c, 0, "searching");
    int arc = engine_ask_hooked(e, q->valuestring, NULL, &h, &r);
    if (call_cancelled(c)) {
        engine_result_free(&r);
        return CALL_CANCELLED;
    }
    if (arc || !r.answer) {
        *result = tool_error(r.error ? r.error : "the question could not be answered");
        engine_result_free(&r);
        return CALL_OK;
    }
    cJSON *sc = ask_result_json(&r);
    char *md = engine_result_markdown(&r);
    if (r.damage) {   /* said beside the answer; the client decides whether to ask again */
        char *m = xasprintf("the index was found damaged while answering, so the answer lacks what could not be "
                            "read: %s; drqa-tui --index-only --check REPO rebuilds it", r.damage);
        call_log(c, LOG_WARNING, m);
        char *both = xasprintf("%s\nWarning: %s\n", md, m);
        free(md);
        md = both;
        free(m);
    }
    *result = tool_result(md, sc);
    free(md);
    engine_result_free(&r);
    return CALL_OK;
}

static int run_recheck_tool(struct call *c, const cJSON *args, cJSON **result)
{
    static const char *const fields[] = {"saved", NULL};
    if ((*result = check_fields("recheck", args, fields))) return CALL_OK;
    const cJSON *saved = cJSON_GetObjectItemCaseSensitive(args, "saved");
    cJSON *parsed = NULL;
    if (cJSON_IsString(saved)) {
        parsed = cJSON_Parse(saved->valuestring);
        if (!parsed) {
            *result = tool_error("recheck: field 'saved' is not JSON text; pass the saved answer as an object or "
                                 "as its JSON text");
            return CALL_OK;
        }
        saved = parsed;
    }
    if (!cJSON_IsObject(saved)) {
        cJSON_Delete(parsed);
        *result = tool_error(saved ? "recheck: field 'saved' must be an object (the saved answer) or its JSON text"
                                   : "recheck: missing required field 'saved' (the saved answer)");
        return CALL_OK;
    }
    int rc;
    struct engine *e = tool_engine(c, result, &rc);
    if (!e) {
        cJSON_Delete(parsed);
        return rc;
    }
    char err[2048];
    struct recheck_report rep;
    if (recheck_answer(engine_action_ctx(e), saved, &rep, err, sizeof err)) {
        cJSON_Delete(parsed);
        *result = tool_error(err);
        return CALL_OK;
    }
    cJSON_Delete(parsed);
    char *text = recheck_report_text(&rep);
    *result = tool_result(text, recheck_report_json(&rep));
    free(text);
    recheck_report_free(&rep);
    return CALL_OK;
}

static struct mcp_req *req_add(struct mcp_session *ss, const cJSON *id)
{
    struct mcp_req *r = xcalloc(1, sizeof *r);
    r->key = print_msg((cJSON *)id);
    pthread_mutex_lock(&ss->lock);
    r->next = ss->reqs;
    ss->reqs = r;
    if (atomic_load(&ss->s->stop) || ss->ended) atomic_store(&r->cancel, 1);
    for (size_t i = 0; i < ss->nearly; i++)
        if (!strcmp(ss->early[i], r->key)) {
            atomic_store(&r->cancel, 1);
            free(ss->early[i]);
            ss->early[i] = ss->early[--ss->nearly];
            break;
        }
    pthread_mutex_unlock(&ss->lock);
    return r;
}

static void req_remove(struct mcp_session *ss, struct mcp_req *r)
{
    pthread_mutex_lock(&ss->lock);
    for (struct mcp_req **p = &ss->reqs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    pthread_mutex_unlock(&ss->lock);
    free(r->key);
    free(r);
}

static void req_cancel(struct mcp_session *ss, const cJSON *id)
{
    if (!id) return;
    char *key = print_msg((cJSON *)id);
    int found = 0;
    pthread_mutex_lock(&ss->lock);
    for (struct mcp_req *r = ss->reqs; r; r = r->next)
        if (!strcmp(r->key, key)) {
            atomic_store(&r->cancel, 1);
            if (r->slot) atomic_store(&r->slot->cancel, 1);
            found = 1;
        }
    if (!found) {   /* kept for a request about to start (the oldest make room) */
        if (ss->nearly == ARRAY_LEN(ss->early)) {
            free(ss->early[0]);
            memmove(ss->early, ss->early + 1, (ss->nearly - 1) * sizeof *ss->early);
            ss->nearly--;
        }
        ss->early[ss->nearly++] = key;
        key = NULL;
    }
    pthread_mutex_unlock(&ss->lock);
    free(key);
}

/* tools/call: 1 when a response was sent, 2 when the call was cancelled. */
static int tools_call(struct call *c, const cJSON *params)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
    if (!cJSON_IsString(name)) {
        send_error(c->send, c->ctx, c->id, RPC_PARAMS, "tools/call needs params.name, the tool's name (see tools/list)");
        return 1;
    }
    const struct mcp_tool *t = tool_find(c->s, name->valuestring);
    if (!t) {
        struct buf b = BUF_INIT;
        buf_printf(&b, "unknown tool '%s'; the tools are ", name->valuestring);
        for (size_t i = 0; i < c->s->ntools; i++) buf_printf(&b, "%s%s", i ? ", " : "", c->s->tools[i].name);
        send_error(c->send, c->ctx, c->id, RPC_PARAMS, buf_str(&b));
        buf_free(&b);
        return 1;
    }
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
    cJSON *empty = NULL;
    if (!args || cJSON_IsNull(args)) args = empty = cJSON_CreateObject();
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
    if (cJSON_IsString(token) || cJSON_IsNumber(token)) c->token = token;
    c->req = req_add(c->ss, c->id);
    cJSON *result = NULL;
    int rc;
    switch (t->kind) {
    case TOOL_ACTION: rc = run_action_tool(c, t, args, &result); break;
    case TOOL_ASK: rc = run_ask_tool(c, args, &result); break;
    case TOOL_RECHECK:
    default: rc = run_recheck_tool(c, args, &result); break;
    }
    slot_release(c);
    req_remove(c->ss, c->req);
    c->req = NULL;
    cJSON_Delete(empty);
    if (rc == CALL_CANCELLED) {
        cJSON_Delete(result);
        return 2;
    }
    send_result(c->send, c->ctx, c->id, result);
    return 1;
}

static void initialize(struct call *c, const cJSON *params)
{
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
    const char *v = mcp_negotiate_version(cJSON_IsString(pv) ? pv->valuestring : NULL);
    pthread_mutex_lock(&c->ss->lock);
    snprintf(c->ss->version, sizeof c->ss->version, "%s", v);
    pthread_mutex_unlock(&c->ss->lock);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "protocolVersion", v);
    cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
    cJSON *tools = cJSON_AddObjectToObject(caps, "tools");
    cJSON_AddBoolToObject(tools, "listChanged", 0);
    cJSON_AddObjectToObject(caps, "logging");
    cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", "drqa-tui");
    cJSON_AddStringToObject(info, "title", "drqa-tui repository index");
    cJSON_AddStringToObject(info, "version", PACKAGE_VERSION);
    cJSON_AddStringToObject(r, "instructions",
        "Tools over a tree-sitter index of one repository, kept up to date with its files. Look code up by name "
        "(find_class, find_function), by exact text (find_code_snippet), by meaning (semantic_search), read it "
        "(view_code, outline, list_files), follow it (find_references); ask answers a whole question with cited "
        "spans, and recheck says whether a saved answer's citations still hold. Paths are relative to the "
        "repository.");
    send_result(c->send, c->ctx, c->id, r);
}

static void set_level(struct call *c, const cJSON *params)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(params, "level");
    int level = cJSON_IsString(l) ? level_of(l->valuestring) : -1;
    if (level < 0) {
        send_error(c->send, c->ctx, c->id, RPC_PARAMS,
                   "logging/setLevel needs params.level: debug, info, notice, warning, error, critical, alert or "
                   "emergency");
        return;
    }
    pthread_mutex_lock(&c->ss->lock);
    c->ss->level = level;
    pthread_mutex_unlock(&c->ss->lock);
    send_result(c->send, c->ctx, c->id, cJSON_CreateObject());
}

/* A string, or an integer a JSON number holds exactly (|id| <= 2^53 - 1:
 * beyond it the value read is not the one written, and the response would
 * carry another id). */
static int valid_id(const cJSON *id)
{
    return cJSON_IsString(id) ||
           (cJSON_IsNumber(id) && fabs(id->valuedouble) <= MCP_ID_MAX && id->valuedouble == floor(id->valuedouble));
}

/* 1 when the JSON text msg escapes a NUL (\u0000) in a string: the
 * library's strings end there, so what would be read is not what was sent
 * (a path cut short, a question cut to its first words, an id that matches
 * no request). */
static int escapes_nul(const char *msg, size_t len)
{
    for (size_t i = 0; i + 6 <= len; i++) {
        if (msg[i] != '\\') continue;
        if (msg[i + 1] == 'u' && !strncmp(msg + i + 2, "0000", 4)) return 1;
        i++;   /* an escaped character: "\\u0000" is a backslash and text */
    }
    return 0;
}

int mcp_session_takes_batches(struct mcp_session *ss)
{
    pthread_mutex_lock(&ss->lock);
    int r = !strcmp(ss->version, "2025-03-26");
    pthread_mutex_unlock(&ss->lock);
    return r;
}

/* A batch's responses, gathered to be sent as one array; what else its
 * calls send (progress, log messages) goes out at once. */
struct batch_sink {
    mcp_send_fn send;
    void *ctx;
    pthread_mutex_t mu;
    cJSON *responses;
};

static void batch_send(void *ctx, const char *json)
{
    struct batch_sink *b = ctx;
    cJSON *m = cJSON_Parse(json);
    if (!m || cJSON_GetObjectItemCaseSensitive(m, "method")) {   /* a notification of ours */
        cJSON_Delete(m);
        b->send(b->ctx, json);
        return;
    }
    pthread_mutex_lock(&b->mu);
    cJSON_AddItemToArray(b->responses, m);
    pthread_mutex_unlock(&b->mu);
}

/* Protocol 2025-03-26 takes JSON-RPC batches (2025-06-18 removed them): each
 * message in turn, as if it came alone, the responses sent together as one
 * array (none: nothing is sent, as for a batch of notifications). */
static void handle_batch(struct mcp_session *ss, const cJSON *batch, mcp_send_fn send, void *ctx)
{
    struct batch_sink b = {send, ctx, PTHREAD_MUTEX_INITIALIZER, cJSON_CreateArray()};
    const cJSON *m;
    cJSON_ArrayForEach(m, batch) {
        if (cJSON_IsArray(m)) {   /* no batch inside a batch */
            send_error(batch_send, &b, NULL, RPC_INVALID, "Invalid Request: a batch inside a batch");
            continue;
        }
        char *one = cJSON_PrintUnformatted(m);
        mcp_handle(ss, one, strlen(one), batch_send, &b);
        free(one);
    }
    if (cJSON_GetArraySize(b.responses) > 0) send_json(send, ctx, b.responses);
    cJSON_Delete(b.responses);
    pthread_mutex_destroy(&b.mu);
}

int mcp_handle(struct mcp_session *ss, const char *msg, size_t len, mcp_send_fn send, void *ctx)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(msg, len, &end, 0);
    if (j) {   /* nothing but white space may follow the message */
        while (end < msg + len && isspace((unsigned char)*end)) end++;
        if (end != msg + len) {
            cJSON_Delete(j);
            j = NULL;
        }
    }
    if (!j) {
        size_t at = end && end >= msg ? (size_t)(end - msg) : 0;
        char m[128];
        snprintf(m, sizeof m, "Parse error: not a JSON message (near byte %zu)", at + 1);
        send_error(send, ctx, NULL, RPC_PARSE, m);
        return 1;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(j, "method");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(j, "jsonrpc");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "params");
    int rc = 1;
    if (escapes_nul(msg, len)) {
        /* a request gets the error (a string id may itself be the one cut
         * short: only a number is sent back); a notification, nothing */
        if (id || cJSON_IsArray(j))   /* a batch: which of its messages is unknown */
            send_error(send, ctx, cJSON_IsNumber(id) && valid_id(id) ? id : NULL, RPC_INVALID,
                       "Invalid Request: a string holds a NUL character (\\u0000), which this server cannot read "
                       "whole; leave it out");
        goto out;
    }
    if (cJSON_IsArray(j)) {
        if (cJSON_GetArraySize(j) > 0 && mcp_session_takes_batches(ss)) {
            handle_batch(ss, j, send, ctx);
            rc = 0;
        } else {
            char e[200];
            snprintf(e, sizeof e, "Invalid Request: %s", cJSON_GetArraySize(j) == 0 ? "an empty batch"
                     : "batches are taken only at protocol version 2025-03-26 (later versions removed them); "
                       "send one message per line");
            send_error(send, ctx, NULL, RPC_INVALID, e);
        }
        goto out;
    }
    if (!cJSON_IsObject(j) || !cJSON_IsString(version) || strcmp(version->valuestring, "2.0") ||
        (method && !cJSON_IsString(method)) || (id && !valid_id(id)) || (params && !cJSON_IsObject(params) &&
                                                                          !cJSON_IsArray(params))) {
        send_error(send, ctx, id && valid_id(id) ? id : NULL, RPC_INVALID,
                   "Invalid Request: expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\", a "
                   "string method and a string id or an integer one within +-(2^53 - 1)");
        goto out;
    }
    if (!method) {   /* a response to a request of ours: we send none */
        rc = 0;
        if (!id || (!cJSON_GetObjectItemCaseSensitive(j, "result") && !cJSON_GetObjectItemCaseSensitive(j, "error"))) {
            send_error(send, ctx, id, RPC_INVALID, "Invalid Request: no method");
            rc = 1;
        }
        goto out;
    }
    const char *m = method->valuestring;
    if (!id) {   /* a notification */
        rc = 0;
        if (!strcmp(m, "notifications/cancelled")) req_cancel(ss, cJSON_GetObjectItemCaseSensitive(params, "requestId"));
        goto out;
    }
    struct call c = {.ss = ss, .s = ss->s, .send = send, .ctx = ctx, .id = id};
    if (atomic_load(&ss->s->stop)) send_error(send, ctx, id, RPC_SHUTDOWN, "the server is shutting down");
    else if (!strcmp(m, "initialize")) initialize(&c, params);
    else if (!strcmp(m, "ping")) send_result(send, ctx, id, cJSON_CreateObject());
    else if (!strcmp(m, "tools/list")) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "tools", cJSON_Duplicate(ss->s->tools_json, 1));
        send_result(send, ctx, id, r);
    } else if (!strcmp(m, "tools/call")) {
        rc = params && cJSON_IsObject(params) ? tools_call(&c, params) : 1;
        if (!params || !cJSON_IsObject(params))
            send_error(send, ctx, id, RPC_PARAMS, "tools/call needs params: {\"name\": ..., \"arguments\": {...}}");
    } else if (!strcmp(m, "logging/setLevel")) set_level(&c, params);
    else {
        char *e = xasprintf("Method not found: '%s' (this server offers initialize, ping, tools/list, tools/call and "
                            "logging/setLevel)", m);
        send_error(send, ctx, id, RPC_NO_METHOD, e);
        free(e);
    }
out:
    cJSON_Delete(j);
    return rc;
}
