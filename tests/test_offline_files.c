/*
 * test_offline_files: what the offline policy makes of files as wholes, on
 * repositories the test writes: a file whose name is made of the question's
 * words is a place to search first (not a test file, unless the question is
 * about tests).
 */
#include "action.h"
#include "index.h"
#include "mcts.h"
#include "policy_offline.h"
#include "semantic.h"
#include "store.h"
#include "tap.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct repo {
    char dir[64];
    char *root, *ipath;
    sqlite3 *db;
    struct action_ctx actx;
    struct offline_policy *op;
    struct policy pol;
};

static void put(const char *root, const char *rel, const char *text)
{
    char *path = xasprintf("%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    ok(f != NULL, "write %s", rel);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    free(path);
}

/* Indexes the files (pairs of path and text, NULL-terminated) and binds an
 * offline policy to the index. */
static void repo_open(struct repo *r, const char *const *files)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/drqa-test-offfiles-XXXXXX");
    ok(mkdtemp(r->dir) != NULL, "temp dir");
    r->root = xasprintf("%s/repo", r->dir);
    mkdir(r->root, 0755);
    for (size_t i = 0; files[i]; i += 2) put(r->root, files[i], files[i + 1]);
    r->ipath = xasprintf("%s/index.sqlite", r->dir);
    char err[512] = "";
    struct index_options io = {.threads = 1};
    is_int(index_update(r->root, r->ipath, &io, NULL, err, sizeof err), 0, "index the repository %s", err);
    is_int(store_open(r->ipath, 1, &r->db, NULL, err, sizeof err), 0, "open the index %s", err);
    action_ctx_init(&r->actx, r->db, r->root);
    struct offline_config oc = {.db = r->db, .actx = &r->actx};
    r->op = offline_policy_new(&oc);
    offline_policy_bind(r->op, &r->pol);
}

static void repo_close(struct repo *r)
{
    offline_policy_free(r->op);
    action_ctx_release(&r->actx);
    sqlite3_close(r->db);
    char *cmd = xasprintf("rm -rf '%s'", r->dir);
    ok(system(cmd) == 0, "remove the temp dir");
    free(cmd);
    free(r->root);
    free(r->ipath);
}

/* The why of the first-step candidate that searches within path, or NULL
 * (the string lives in cands). */
static const char *candidate_in(const cJSON *cands, const char *path)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cands) {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "args");
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(args, "file_pattern");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(c, "why");
        if (cJSON_IsString(fp) && !strcmp(fp->valuestring, path) && cJSON_IsString(why) &&
            strstr(why->valuestring, "file name"))
            return why->valuestring;
    }
    return NULL;
}

static void test_named_file(void)
{
    /* twenty other modules, so that the question's words are rare in the
     * repository, as a file name's words are in a real one */
    const char *files[2 * 24 + 1];
    char *filler[2 * 20];
    size_t n = 0;
    for (int i = 0; i < 20; i++) {
        filler[2 * i] = xasprintf("clock/extra/mod%02d.py", i);
        filler[2 * i + 1] = xasprintf("def helper_%d(entry, value):\n    \"\"\"Run one step.\"\"\"\n"
                                      "    return entry.next(value + %d)\n", i, i);
        files[n++] = filler[2 * i];
        files[n++] = filler[2 * i + 1];
    }
    static const char *const own[] = {
        "clock/__init__.py", "",
        /* no definition is named after the question's words: only the file is */
        "clock/scheduler.py",
        "def pick_next(queue):\n    \"\"\"The entry due first.\"\"\"\n    return min(queue, key=lambda e: e.due)\n",
        "clock/tasks.py",
        "class Entry:\n    def __init__(self, due):\n        self.due = due\n",
        "clock/tests/test_scheduler.py",
        "from clock.scheduler import pick_next\n\ndef test_pick():\n    assert pick_next([]) is None\n",
        NULL};
    for (size_t i = 0; own[i]; i++) files[n++] = own[i];
    files[n] = NULL;
    struct repo r;
    repo_open(&r, files);
    for (int i = 0; i < 40; i++) free(filler[i]);
    struct mcts_tree *t = mcts_new("Which entry does the scheduler run next?", 3, -1, 1);
    int id = mcts_add_child(t, 0);
    cJSON *cands = offline_policy_candidates(r.op, t, id, 1);
    ok(cands != NULL, "first-step candidates");
    const char *why = candidate_in(cands, "clock/scheduler.py");
    ok(why != NULL, "a search within clock/scheduler.py, named by the question's word: %s", why ? why : "(none)");
    ok(candidate_in(cands, "clock/tests/test_scheduler.py") == NULL,
       "its test file is not a named file for a question about the code");
    ok(candidate_in(cands, "clock/tasks.py") == NULL, "a file whose name is not in the question is not one");
    cJSON_Delete(cands);
    mcts_free(t);

    t = mcts_new("Which tests check the scheduler?", 3, -1, 1);
    id = mcts_add_child(t, 0);
    cands = offline_policy_candidates(r.op, t, id, 1);
    ok(candidate_in(cands, "clock/tests/test_scheduler.py") != NULL,
       "for a question about tests, the test file named by its words is one");
    cJSON_Delete(cands);
    mcts_free(t);
    repo_close(&r);
}

int main(void)
{
    char err[256] = "";
    is_int(semantic_action_register(NULL, err, sizeof err), 0, "SemanticSearch registered %s", err);
    test_named_file();
    return done_testing();
}
