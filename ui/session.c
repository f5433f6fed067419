/*
 * session: starts and stops the search worker for the front end (session.h).
 */
#include "session.h"
#include "index.h"
#include "ui.h"
#include "worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/toy_policy.h"

struct session {
    struct drqa_opts o;        /* a copy: progress never goes to the terminal */
    struct evq *ev;
    struct toy toy;
};

static struct session *the_session;

static void on_progress(void *ctx, size_t done, size_t total)
{
    struct session *s = ctx;
    evq_post_state(s->ev, EVQ_STATE_INDEXING, (long long)done, (long long)total, NULL);
}

static int hook_open(void *ctx, struct evq *events, const atomic_int *cancel, struct policy *policy,
                     struct policy_executor *executor, struct policy_curator *curator, char *err,
                     size_t errlen)
{
    (void)cancel;
    struct session *s = ctx;
    s->ev = events;
    evq_post_state(events, EVQ_STATE_INDEXING, 0, 0, NULL);
    struct index_options io = {0};
    io.threads = s->o.threads;
    io.max_file_size = s->o.max_file_size;
    io.progress = on_progress;
    io.progress_ctx = s;
    if (index_ensure_ex(&s->o, &io, NULL, NULL, NULL, NULL, err, errlen) != 0) return -1;
    toy_init(&s->toy);
    s->toy.finish_at = 9;
    *policy = toy_policy(&s->toy);
    *executor = toy_executor(&s->toy);
    *curator = toy_curator(&s->toy);
    return 0;
}

int session_start(struct ui *ui, char *err, size_t errlen)
{
    struct session *s = xcalloc(1, sizeof *s);
    s->o = *ui->o;
    s->o.no_progress = 1;
    struct worker_config cfg;
    memset(&cfg, 0, sizeof cfg);
    search_config_from_opts(&cfg.search, ui->o);
    cfg.hooks.ctx = s;
    cfg.hooks.open = hook_open;
    cfg.question = ui->o->question;
    const char *sp = getenv("DRQA_TUI_START_PAUSED");
    cfg.start_paused = sp && *sp && strcmp(sp, "0") != 0;
    cfg.transcript_dir = ui->o->transcript_dir;
    cfg.transcript_config = ui->m.config;
    if (worker_start(&ui->worker, &cfg, ui->ev, ui->cmd, err, errlen) != 0) {
        free(s);
        return -1;
    }
    the_session = s;
    return 0;
}

void session_stop(struct ui *ui)
{
    if (ui->worker) {
        worker_stop(ui->worker);
        worker_free(ui->worker);
        ui->worker = NULL;
    }
    free(the_session);
    the_session = NULL;
}
