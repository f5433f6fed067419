/*
 * session: starts and stops the search worker for the front end (session.h).
 *
 * The search is the one --ask runs: the worker's open hook builds it with
 * the engine's own builder (engine_shared_open_hooked, engine_open,
 * engine_search_parts: the index, SemanticSearch with the remote embedder
 * when one is configured, the policy, executor, curator and search
 * settings), adding only the front end's hooks: indexing progress as state
 * events, the worker's cancel flag (it stops an index update and aborts a
 * model request in flight when the front end quits) and the usage ledger
 * the status line reads. A search that met a damaged index has it checked
 * and rebuilt, then asks again, as --ask does (hook_damage). Everything is
 * made in the worker thread, which alone uses it.
 */
#include "session.h"
#include "cli_settings.h"
#include "engine.h"
#include "llm.h"
#include "test_hooks.h"
#include "ui.h"
#include "worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

struct session {
    struct engine_settings set;  /* progress never goes to the terminal */
    struct evq *ev;
    /* built and used in the worker thread only */
    struct engine_shared *sh;
    struct engine *e;
    struct llm_usage usage;      /* every model call of the run; read by the status line */
    const char *phase;           /* the index update's phase (static), or NULL */
    const atomic_int *cancel;
};

static struct session *the_session;

static void on_progress(void *ctx, size_t done, size_t total)
{
    struct session *s = ctx;
    evq_post_state(s->ev, EVQ_STATE_INDEXING, (long long)done, (long long)total,
                   s->phase ? s->phase : "parse");
}

/* The index update (and then SemanticSearch) enters a phase: the status
 * line names it instead of standing at the last file count. */
static void on_phase(void *ctx, const char *name)
{
    struct session *s = ctx;
    s->phase = name;
    evq_post_state(s->ev, EVQ_STATE_INDEXING, 0, 0, name);
    test_hook_phase_hold(name, s->cancel);   /* the tests read each phase off the screen */
}

static void hook_close(void *ctx)
{
    struct session *s = ctx;
    engine_close(s->e);
    s->e = NULL;
    engine_shared_free(s->sh);
    s->sh = NULL;
}

/* A search met a damaged index: said as --ask says it. The first time the
 * worker closes and opens again, and that open checks the index (moving a
 * damaged one aside and building another) before the question is asked
 * again. */
static char *hook_damage(void *ctx, int rechecked)
{
    struct session *s = ctx;
    char *d = s->e ? engine_damage(s->e) : NULL;
    if (!d) return NULL;
    if (!rechecked) s->set.index.opt.check = 1;
    char *m = engine_damage_message(d, rechecked);
    free(d);
    return m;
}

/* A question with nothing to look for is refused as --ask refuses it. */
static int hook_refuse(void *ctx, const char *question, char *err, size_t errlen)
{
    struct session *s = ctx;
    return s->e ? engine_check_question(s->e, question, err, errlen) : 0;
}

static int hook_open(void *ctx, struct evq *events, const atomic_int *cancel, struct search_config *sc,
                     struct policy *policy, struct policy_executor *executor, struct policy_curator *curator,
                     char *err, size_t errlen)
{
    struct session *s = ctx;
    s->ev = events;
    s->cancel = cancel;
    evq_post_state(events, EVQ_STATE_INDEXING, 0, 0, NULL);
    struct engine_hooks h = {.progress = on_progress, .progress_ctx = s, .phase = on_phase, .cancel = cancel,
                             .usage = &s->usage};
    int usage;
    if (engine_shared_open_hooked(&s->set, &h, &s->sh, &usage, err, errlen) ||
        engine_open(s->sh, &s->e, err, errlen)) {
        hook_close(s);
        return -1;
    }
    engine_search_parts(s->e, sc, policy, executor, curator);
    return 0;
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
    cli_engine_settings(&s->set, ui->o);
    s->set.index.no_progress = 1;
    struct worker_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.search = s->set.search;   /* replaced by the engine's in the open hook */
    cfg.hooks.ctx = s;
    cfg.hooks.open = hook_open;
    cfg.hooks.close = hook_close;
    cfg.hooks.damage = hook_damage;
    cfg.hooks.refuse = hook_refuse;
    cfg.question = ui->o->question;
    cfg.start_paused = test_hook_start_paused();
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
