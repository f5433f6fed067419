/*
 * session: starts and stops the search worker for the front end (session.h).
 *
 * The worker's open hook composes the search's parts the way engine.c does
 * for --ask: the action engine as executor (SemanticSearch refused under
 * --no-semantic), rule-based curation rendered as 'path:start-end  label'
 * headers over the span text, and the offline policy, or with --policy llm
 * the LLM policy and its evidence filter, falling back to the offline policy
 * for a step whose replies are unusable. engine.h only runs whole questions,
 * so the parts are built here from the same modules (a caller-driven search
 * needs them one by one). Everything is made in the worker thread, which
 * alone uses them; the in-flight model request is cancelled through the
 * worker's cancel flag when the front end quits.
 */
#include "session.h"
#include "action.h"
#include "curate.h"
#include "engine.h"
#include "engine_llm.h"
#include "index.h"
#include "llm.h"
#include "policy_llm.h"
#include "policy_offline.h"
#include "semantic.h"
#include "ui.h"
#include "worker.h"
#include "../src/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session {
    struct drqa_opts o;          /* a copy: progress never goes to the terminal */
    struct evq *ev;
    /* built and used in the worker thread only */
    sqlite3 *db;
    char *repo_abs;
    struct action_ctx actx;
    int actx_ready;
    struct offline_policy *offline;
    struct policy fallback;
    struct drqa_config cfg;
    int cfg_loaded;
    struct engine_backends backends;
    struct llm_policy *llm;
    struct llm_usage usage;      /* every model call of the run; read by the status line */
};

static struct session *the_session;

static void on_progress(void *ctx, size_t done, size_t total)
{
    struct session *s = ctx;
    evq_post_state(s->ev, EVQ_STATE_INDEXING, (long long)done, (long long)total, NULL);
}

static int execute(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text,
                   char *err, size_t errlen)
{
    struct session *s = ctx;
    return engine_execute_action(&s->actx, s->o.no_semantic, name, args, raw, text, err, errlen);
}

static void hook_close(void *ctx)
{
    struct session *s = ctx;
    llm_policy_free(s->llm);
    s->llm = NULL;
    engine_backends_close(&s->backends);
    offline_policy_free(s->offline);
    s->offline = NULL;
    if (s->actx_ready) action_ctx_release(&s->actx);
    s->actx_ready = 0;
    if (s->db) {
        semantic_forget(s->db);
        sqlite3_close(s->db);
        s->db = NULL;
    }
    if (s->cfg_loaded) config_free(&s->cfg);
    s->cfg_loaded = 0;
    free(s->repo_abs);
    s->repo_abs = NULL;
}

static int hook_open(void *ctx, struct evq *events, const atomic_int *cancel, struct policy *policy,
                     struct policy_executor *executor, struct policy_curator *curator, char *err,
                     size_t errlen)
{
    struct session *s = ctx;
    s->ev = events;
    evq_post_state(events, EVQ_STATE_INDEXING, 0, 0, NULL);
    if (config_load(&s->cfg, &s->o, err, errlen) != 0) goto fail;
    s->cfg_loaded = 1;
    if (s->cfg.policy == POLICY_LLM && engine_backends_open(&s->cfg, 0, &s->backends, err, errlen)) goto fail;
    struct index_options io = {0};
    io.threads = s->o.threads;
    io.max_file_size = s->o.max_file_size;
    io.max_file_size_given = s->o.max_file_size_given;
    io.no_ignore = s->o.no_ignore;
    io.progress = on_progress;
    io.progress_ctx = s;
    if (index_ensure_ex(&s->o, &io, NULL, &s->db, &s->repo_abs, NULL, err, errlen) != 0) goto fail;
    sqlite3_busy_timeout(s->db, 5000);
    if (semantic_action_register(NULL, err, errlen) != 0) goto fail;
    if (!s->o.no_semantic && semantic_prepare(s->db, NULL, err, errlen) != 0) goto fail;
    action_ctx_init(&s->actx, s->db, s->repo_abs);
    s->actx_ready = 1;
    struct offline_config oc = {.db = s->db, .actx = &s->actx, .no_semantic = s->o.no_semantic};
    s->offline = offline_policy_new(&oc);
    offline_policy_set_iterations(s->offline, s->o.iterations);
    offline_policy_bind(s->offline, policy);
    executor->ctx = s;
    executor->execute = execute;
    curator->ctx = s;
    curator->curate = engine_curate_rules;
    if (s->backends.main) {
        s->fallback = *policy;
        struct llm_policy_config lc;
        llm_policy_config_init(&lc);
        lc.backend = s->backends.main;
        lc.run_usage = &s->usage;
        for (int k = 0; k < LLM_ROLE_N; k++) lc.role_backend[k] = s->backends.role[k];
        lc.fallback = &s->fallback;
        lc.no_semantic = s->o.no_semantic;
        lc.cancel = (atomic_int *)cancel;   /* only read by the requests */
        if (!(s->llm = llm_policy_new(&lc, err, errlen))) goto fail;
        llm_policy_bind(s->llm, policy);
        llm_policy_curator(s->llm, curator);
    }
    return 0;
fail:
    hook_close(s);
    return -1;
}

int session_start(struct ui *ui, char *err, size_t errlen)
{
    if (ui->o->mode && strcmp(ui->o->mode, "mcts") != 0) {
        snprintf(err, errlen, "the front end runs the tree search (--mode mcts); use --ask with "
                 "--mode %s", ui->o->mode);
        return -1;
    }
    struct session *s = xcalloc(1, sizeof *s);
    llm_usage_init(&s->usage);
    s->o = *ui->o;
    s->o.no_progress = 1;
    struct worker_config cfg;
    memset(&cfg, 0, sizeof cfg);
    search_config_from_opts(&cfg.search, ui->o);
    cfg.hooks.ctx = s;
    cfg.hooks.open = hook_open;
    cfg.hooks.close = hook_close;
    cfg.question = ui->o->question;
    const char *sp = getenv("DRQA_TUI_START_PAUSED");
    cfg.start_paused = sp && *sp && strcmp(sp, "0") != 0;
    cfg.transcript_dir = ui->o->transcript_dir;
    cfg.transcript_config = ui->m.config;
    if (worker_start(&ui->worker, &cfg, ui->ev, ui->cmd, err, errlen) != 0) {
        llm_usage_destroy(&s->usage);
        free(s);
        return -1;
    }
    the_session = s;
    ui->usage = &s->usage;
    return 0;
}

void session_stop(struct ui *ui)
{
    if (ui->worker) {
        worker_stop(ui->worker);
        worker_free(ui->worker);
        ui->worker = NULL;
    }
    ui->usage = NULL;
    if (the_session) llm_usage_destroy(&the_session->usage);
    free(the_session);
    the_session = NULL;
}
