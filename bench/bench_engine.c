/*
 * bench_engine: the driver of bench/engine.sh. Runs one question through the
 * search with the LLM policy (offline fallback, LLM evidence filter) against
 * whatever model server the environment configures (the loopback fake in the
 * benchmark), and prints one JSON line of measurements: iterations, wall
 * time of the whole question (search and answer), the time spent inside the
 * actions and inside model calls (so the engine's own time is what remains),
 * model calls, and tokens in and out, in total and per role. SemanticSearch
 * is registered with local vectors.
 *
 *   bench_engine [--parallel K] [--iterations N] [--filter-always|--filter-never]
 *                --prompts DIR --index FILE REPO QUESTION
 *
 * The index must exist (drqa-tui --index-only --index FILE REPO).
 */
#include "action.h"
#include "llm.h"
#include "policy_llm.h"
#include "policy_offline.h"
#include "search.h"
#include "semantic.h"
#include "store.h"
#include "util.h"

#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct exec_ctx {
    struct action_ctx actx;
    long long action_us;
};

static int ex_execute(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text, char *err,
                      size_t errlen)
{
    struct exec_ctx *x = ctx;
    int64_t t0 = now_us();
    struct action_result r;
    int rc = action_run(&x->actx, name, args, &r, err, errlen);
    if (rc == ACTION_OK) {
        evidence_copy(raw, &r.ev);
        *text = action_result_render(&r, 0);
    }
    action_result_free(&r);
    x->action_us += now_us() - t0;
    return rc == ACTION_OK ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_engine [--parallel K] [--iterations N] [--filter-always|--filter-never] "
                    "--prompts DIR --index FILE REPO QUESTION\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int parallel = 1, iterations = 15;
    long filter_min = 0;
    const char *prompts = NULL, *index = NULL;
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--parallel") && i + 1 < argc) parallel = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--filter-always")) filter_min = -1;
        else if (!strcmp(argv[i], "--filter-never")) filter_min = LONG_MAX;
        else if (!strcmp(argv[i], "--prompts") && i + 1 < argc) prompts = argv[++i];
        else if (!strcmp(argv[i], "--index") && i + 1 < argc) index = argv[++i];
        else usage();
    }
    if (argc - i != 2 || !prompts || !index) usage();
    const char *repo = argv[i], *question = argv[i + 1];

    char err[1024];
    struct config_overrides o = {0};
    struct drqa_config cfg;
    if (config_load(&cfg, &o, err, sizeof err) != 0) {
        fprintf(stderr, "bench_engine: %s\n", err);
        return 1;
    }
    struct llm_backend *b = llm_backend_new(&cfg, err, sizeof err);
    config_free(&cfg);
    if (!b) {
        fprintf(stderr, "bench_engine: %s\n", err);
        return 1;
    }
    if (semantic_action_register(NULL, err, sizeof err) != 0) {
        fprintf(stderr, "bench_engine: %s\n", err);
        return 1;
    }
    sqlite3 *db = NULL;
    store_functions_init();   /* the schema's views call the project's functions */
    if (sqlite3_open_v2(index, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_engine: cannot open %s\n", index);
        return 1;
    }
    char *root = realpath(repo, NULL);
    struct exec_ctx x = {.action_us = 0};
    action_ctx_init(&x.actx, db, root);

    struct offline_config oc = {.db = db, .actx = &x.actx, .iterations = iterations};
    struct offline_policy *off = offline_policy_new(&oc);
    struct policy offpol;
    offline_policy_bind(off, &offpol);

    const char *dirs[] = {prompts};
    struct llm_policy_config lc;
    llm_policy_config_init(&lc);
    lc.backend = b;
    lc.fallback = &offpol;
    lc.filter_min_bytes = filter_min;
    lc.prompt_dirs = dirs;
    lc.nprompt_dirs = 1;
    struct llm_policy *lp = llm_policy_new(&lc, err, sizeof err);
    if (!lp) {
        fprintf(stderr, "bench_engine: %s\n", err);
        return 1;
    }
    struct policy pol;
    struct policy_curator cu;
    llm_policy_bind(lp, &pol);
    llm_policy_curator(lp, &cu);
    struct policy_executor ex = {&x, ex_execute};

    struct search_config sc;
    search_config_defaults(&sc);
    sc.iterations = iterations;
    sc.parallel = parallel;
    sc.policy_thread_safe = 1;
    sc.curator_thread_safe = 1;

    int64_t t0 = now_us();
    struct search *s = search_new(&sc, &pol, &ex, &cu, question);
    while (search_step(s) > 0) {}
    struct search_answer *a = search_answer(s);
    int64_t wall_us = now_us() - t0;

    const struct mcts_tree *t = search_tree(s);
    long calls = 0;
    long long model_ms = 0;
    llm_policy_stats(lp, &calls, &model_ms);
    int errors = 0;
    for (int k = 1; k < t->n; k++) errors += mcts_node(t, k)->status == MCTS_ERROR;
    const char *const *notes;
    size_t nnotes = llm_policy_notes(lp, &notes);

    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "parallel", parallel);
    cJSON_AddNumberToObject(out, "iterations", t->iterations);
    cJSON_AddStringToObject(out, "stop", search_stop_name(search_stop_reason(s)));
    cJSON_AddNumberToObject(out, "wall_ms", (double)wall_us / 1000.0);
    cJSON_AddNumberToObject(out, "action_ms", (double)x.action_us / 1000.0);
    cJSON_AddNumberToObject(out, "model_ms", (double)model_ms);
    cJSON_AddNumberToObject(out, "calls", (double)calls);
    cJSON_AddNumberToObject(out, "tokens_in", (double)t->tokens_in);
    cJSON_AddNumberToObject(out, "tokens_out", (double)t->tokens_out);
    cJSON_AddNumberToObject(out, "node_errors", errors);
    cJSON_AddNumberToObject(out, "fallback_notes", (double)nnotes);
    cJSON_AddNumberToObject(out, "citations", (double)a->cites.n);
    cJSON_AddItemToObject(out, "usage", llm_policy_usage_json(lp));
    char *js = cJSON_PrintUnformatted(out);
    puts(js);
    free(js);
    cJSON_Delete(out);

    search_answer_free(a);
    search_free(s);
    llm_policy_free(lp);
    offline_policy_free(off);
    llm_backend_free(b);
    action_ctx_release(&x.actx);
    sqlite3_close(db);
    free(root);
    return 0;
}
