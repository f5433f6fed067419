/*
 * test_offline_files: what the offline policy makes of files as wholes, on
 * repositories the test writes: a file whose name is made of the question's
 * words is a place to search first (not a test file, unless the question is
 * about tests), between files that define the same code the answer cites
 * first the one the others import, and the fused answer chooses among every
 * span the rankings fused, however many files come before the one the
 * question names.
 */
#include "action.h"
#include "answer_fuse.h"
#include "qparse.h"
#include "index.h"
#include "mcts.h"
#include "policy_offline.h"
#include "semantic.h"
#include "store.h"
#include "tap.h"
#include "harness.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct repo {
    char dir[256];
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
    ok(temp_dir(r->dir, sizeof r->dir, "offfiles") != NULL, "temp dir");
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

static void test_central_file(void)
{
    /* the same class defined again in two dialects, which import the core
     * one; the core file sorts last by name, and its text is as long, so
     * neither the order of the results nor the text tells it apart */
    static const char *const body =
        "from typing import Any\n\n"
        "class OperatorClassSegment:\n"
        "    \"\"\"An operator class reference in an index definition.\"\"\"\n"
        "    kind = 'operator_class'\n";
    static const char *const dialect =
        "from dialects import zcore\n\n"
        "class OperatorClassSegment:\n"
        "    \"\"\"An operator class reference in an index definition.\"\"\"\n"
        "    kind = 'operator_class'\n";
    static const char *const files[] = {
        "dialects/__init__.py", "",
        "dialects/alpha.py", NULL,
        "dialects/beta.py", NULL,
        "dialects/zcore.py", NULL,
        NULL};
    const char *f[sizeof files / sizeof *files];
    memcpy(f, files, sizeof files);
    f[3] = f[5] = dialect;
    f[7] = body;
    /* the tree's own ranking (DRQA_FUSE_K=off: fused with the windows, a
     * copy the windows rank first may lead) */
    setenv("DRQA_FUSE_K", "off", 1);
    struct repo r;
    repo_open(&r, f);
    unsetenv("DRQA_FUSE_K");

    const char *q = "Why does the segment class for operator class references exist?";
    struct mcts_tree *t = mcts_new(q, 3, -1, 1);
    /* a path of two lookups, one in a dialect and then one in the core
     * file: both spans are equally relevant and equally placed, so only the
     * order of discovery and the imports can tell them apart */
    const char *where[2] = {"dialects/alpha.py", "dialects/zcore.py"};
    int ids[2];
    char err[256] = "";
    for (int k = 0; k < 2; k++) {
        ids[k] = mcts_add_child(t, k ? ids[0] : 0);
        ok(ids[k] > 0, "node %d added", k + 1);
        if (ids[k] <= 0) exit(done_testing() || 1);
        struct mcts_node *nk = mcts_node_mut(t, ids[k]);
        nk->action = xstrdup("FindClass");
        nk->args = cJSON_CreateObject();
        cJSON_AddStringToObject(nk->args, "class_name", "OperatorClassSegment");
        cJSON_AddStringToObject(nk->args, "file_pattern", where[k]);
        struct action_result res;
        is_int(action_run(&r.actx, nk->action, nk->args, &res, err, sizeof err), ACTION_OK, "FindClass in %s %s",
               where[k], err);
        evidence_copy(&nk->obs, &res.ev);
        action_result_free(&res);
        nk->status = MCTS_DONE;
        ok(nk->obs.n == 1 && !strcmp(nk->obs.v[0].path, where[k]), "it finds the class in %s", where[k]);
    }

    int path[3] = {0, ids[0], ids[1]};
    struct policy_answer ans = {0};
    struct policy_usage u = {0};
    ok(r.pol.answer(r.op, t, path, 3, &ans, &u, err, sizeof err) == 0, "answer %s", err);
    is_str(ans.cites.n ? ans.cites.v[0].path : "", "dialects/zcore.py",
           "the file the others import is cited first by the tree's ranking");
    policy_answer_clear(&ans);
    mcts_free(t);
    repo_close(&r);
}

/* The fused answer picks its citations from every span the rankings fused,
 * not from the first max of them: a definition the question names in
 * backticks leads the answer even where the fusion ranks its file twelfth
 * (the tree cites it last, the windows not at all). */
static void test_fused_named(void)
{
    enum { NOTHER = 12 };
    const char *files[2 * (NOTHER + 1) + 1];
    char *texts[NOTHER];
    char paths[NOTHER][32];
    for (int i = 0; i < NOTHER; i++) {
        snprintf(paths[i], sizeof paths[i], "books/ledger%02d.py", i);
        texts[i] = xasprintf("def balance_%02d(ledger):\n    \"\"\"Balance the ledger entries.\"\"\"\n"
                             "    return sum(ledger.entries)\n", i);
        files[2 * i] = paths[i];
        files[2 * i + 1] = texts[i];
    }
    files[2 * NOTHER] = "tools/misc.py";
    files[2 * NOTHER + 1] = "def reconcile(x):\n    return x\n";
    files[2 * NOTHER + 2] = NULL;
    struct repo r;
    repo_open(&r, files);
    char err[256] = "";
    struct qparse q;
    ok(qparse_question("What does `reconcile` do with the ledger entries?", &q, err, sizeof err) == 0, "parses %s",
       err);
    qparse_weigh(&q, r.db);
    /* the tree's citations: every ledger file, then the named function */
    struct evidence tcites = EVIDENCE_INIT, cites = EVIDENCE_INIT, read = EVIDENCE_INIT;
    for (int i = 0; i < NOTHER; i++) evidence_add(&tcites, paths[i], 1, 3, texts[i], NULL, 1.0 / (1 + i));
    evidence_add(&tcites, "tools/misc.py", 1, 2, "def reconcile(x):\n    return x", NULL, 1.0 / (1 + NOTHER));
    char *md = NULL;
    ok(answer_fuse(&q, r.db, NULL, &tcites, &tcites, 60, 10, &md, &cites, &read, err, sizeof err) == 0,
       "fused answer %s", err);
    is_str(cites.n ? cites.v[0].path : "", "tools/misc.py",
           "the named definition leads, though the fusion ranks its file twelfth");
    ok(cites.n <= 10, "at most max citations (%zu)", cites.n);
    free(md);
    evidence_free(&tcites);
    evidence_free(&cites);
    evidence_free(&read);
    qparse_free(&q);
    for (int i = 0; i < NOTHER; i++) free(texts[i]);
    repo_close(&r);
}

/* Once the fused answer cites five files, its other citations read further
 * into them (answer_opts.deep_rest): the best file's second definition
 * comes sixth, before a sixth file the tree also cites. */
static void test_fused_deep(void)
{
    enum { NFILES = 7 };
    const char *files[2 * NFILES + 1];
    char *texts[NFILES];
    char paths[NFILES][32];
    for (int i = 0; i < NFILES; i++) {
        snprintf(paths[i], sizeof paths[i], "books/ledger%02d.py", i);
        /* the first file's second definition starts 80 lines below its first */
        texts[i] = xasprintf("def balance_%02d(ledger):\n    \"\"\"Balance the ledger entries.\"\"\"\n"
                             "    return sum(ledger.entries)\n%s",
                             i, i ? "" : "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
                                         "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
                                         "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
                                         "def audit_ledger(ledger):\n    \"\"\"Audit the ledger's balance.\"\"\"\n"
                                         "    return balance_00(ledger)\n");
        files[2 * i] = paths[i];
        files[2 * i + 1] = texts[i];
    }
    files[2 * NFILES] = NULL;
    struct repo r;
    repo_open(&r, files);
    char err[256] = "";
    struct qparse q;
    ok(qparse_question("How is the ledger balance audited?", &q, err, sizeof err) == 0, "parses %s", err);
    qparse_weigh(&q, r.db);
    /* the tree's citations: one definition of each file, then the first
     * file's second one */
    struct evidence tcites = EVIDENCE_INIT, cites = EVIDENCE_INIT, read = EVIDENCE_INIT;
    for (int i = 0; i < NFILES; i++) evidence_add(&tcites, paths[i], 1, 3, texts[i], NULL, 1.0 / (1 + i));
    evidence_add(&tcites, paths[0], 84, 86,
                 "def audit_ledger(ledger):\n    \"\"\"Audit the ledger's balance.\"\"\"\n    return balance_00(ledger)\n",
                 NULL, 1.0 / (1 + NFILES));
    char *md = NULL;
    ok(answer_fuse(&q, r.db, NULL, &tcites, &tcites, 60, 8, &md, &cites, &read, err, sizeof err) == 0,
       "fused answer %s", err);
    size_t files_first = 0;
    while (files_first < cites.n && files_first < 5) {
        size_t k = 0;
        while (k < files_first && strcmp(cites.v[k].path, cites.v[files_first].path)) k++;
        if (k < files_first) break;
        files_first++;
    }
    is_int((long)files_first, 5, "the first five citations name five files");
    int deep_at = -1, sixth_file_at = -1;
    for (size_t i = 5; i < cites.n; i++) {
        if (deep_at < 0 && !strcmp(cites.v[i].path, paths[0]) && cites.v[i].start_line >= 84) deep_at = (int)i;
        int seen = 0;
        for (size_t k = 0; k < 5; k++) seen |= !strcmp(cites.v[k].path, cites.v[i].path);
        if (sixth_file_at < 0 && !seen) sixth_file_at = (int)i;
    }
    ok(deep_at >= 0 && (sixth_file_at < 0 || deep_at < sixth_file_at),
       "the first file's second definition (citation %d) comes before a sixth file (%d)", deep_at + 1,
       sixth_file_at + 1);
    free(md);
    evidence_free(&tcites);
    evidence_free(&cites);
    evidence_free(&read);
    qparse_free(&q);
    for (int i = 0; i < NFILES; i++) free(texts[i]);
    repo_close(&r);
}

int main(void)
{
    char err[256] = "";
    is_int(semantic_action_register(NULL, err, sizeof err), 0, "SemanticSearch registered %s", err);
    test_named_file();
    test_central_file();
    test_fused_named();
    test_fused_deep();
    return done_testing();
}
