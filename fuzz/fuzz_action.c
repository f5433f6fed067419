/*
 * fuzz_action: action arguments come from a model. The pyrepo fixture is
 * indexed once into a temporary file, copied into an in-memory database and
 * the file removed; then each input, "ActionName\n{json arguments}", is
 * checked against the schema (action_validate) and run (action_run_json)
 * against that index, and its result is rendered and turned into JSON, the
 * way the search and --action use it. Wrong names, wrong types, hostile
 * paths ('..', absolute, huge line numbers), patterns and snippets must end
 * in a result or an error message, never a crash; a refused call says why.
 */
#include "action.h"
#include "index.h"
#include "semantic.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sqlite3 *db;
static struct action_ctx ctx;
static const char *root = DRQA_SRCDIR "/tests/fixtures/pyrepo";

static void release(void)
{
    action_ctx_release(&ctx);
    sqlite3_close(db);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[1024];
    char dir[] = "/tmp/drqa-fuzz-action-XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    char *path = xasprintf("%s/index.sqlite", dir);
    struct index_options opt = {.threads = 1, .max_file_size = 1 << 20};
    if (index_update(root, path, &opt, NULL, err, sizeof err)) { fprintf(stderr, "%s\n", err); exit(1); }
    sqlite3 *file = NULL;
    if (sqlite3_open_v2(path, &file, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_open(":memory:", &db) != SQLITE_OK) { fprintf(stderr, "cannot open the index\n"); exit(1); }
    sqlite3_backup *b = sqlite3_backup_init(db, "main", file, "main");
    if (!b || sqlite3_backup_step(b, -1) != SQLITE_DONE) { fprintf(stderr, "cannot copy the index\n"); exit(1); }
    sqlite3_backup_finish(b);
    sqlite3_close(file);
    unlink(path);
    char *side = xasprintf("%s-wal", path); unlink(side); free(side);
    side = xasprintf("%s-shm", path); unlink(side); free(side);
    free(path);
    if (rmdir(dir)) { perror(dir); exit(1); }
    if (semantic_action_register(NULL, err, sizeof err)) { fprintf(stderr, "%s\n", err); exit(1); }
    action_ctx_init(&ctx, db, root);
    atexit(release);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *nl = strchr(buf, '\n');
    const char *name = buf, *json = "";
    if (nl) {
        *nl = 0;
        json = nl + 1;
    }
    char err[2048];
    const struct action_def *def = action_find(name);
    cJSON *args = cJSON_Parse(json);
    if (def && args) {
        err[0] = 0;
        if (action_validate(def, args, err, sizeof err) != ACTION_OK && !err[0]) abort();
    }
    cJSON_Delete(args);

    struct action_result r;
    err[0] = 0;
    int rc = action_run_json(&ctx, name, json, &r, err, sizeof err);
    if (rc == ACTION_OK) {
        cJSON *j = action_result_to_json(&r);
        char *s = cJSON_PrintUnformatted(j);
        char *text = action_result_render(&r, ACTION_DEFAULT_BUDGET);
        char *whole = action_result_render(&r, 0);
        if (!j || !s || !text || !whole) abort();
        free(whole);
        free(text);
        free(s);
        cJSON_Delete(j);
    } else if (!err[0]) {
        abort();   /* a refused call always says why */
    }
    action_result_free(&r);
    free(buf);
    return 0;
}
