/*
 * worker: the search thread. One loop: apply queued commands, run one
 * iteration if allowed, otherwise answer a finished search or block for the
 * next command. Everything the UI needs leaves as events. See worker.h.
 */
#include "worker.h"
#include "transcript.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct worker {
    struct worker_config cfg;         /* strings below are owned copies */
    char *question, *transcript_dir;
    cJSON *transcript_config;
    struct evq *ev;
    struct cmdq *cmd;
    pthread_t thread;
    int running;                      /* the thread was started and not joined */
    atomic_int cancel;
    atomic_int stop_answer;           /* worker_stop_answer: read by answer_piece */

    /* Thread state: touched only by the worker thread. */
    struct search *s;
    struct search_answer *answer;     /* of the finished search, while answered */
    int paused, step_pending, answered, quit;
    int opened;                       /* hooks.open succeeded (else open_err says why) */
    char open_err[512];
    int rechecked;                    /* the search asks again after the index was checked */
    enum evq_state state;
};

static void post_state(struct worker *w, enum evq_state st, const char *text)
{
    w->state = st;
    evq_post_state(w->ev, st, 0, 0, text);
}

static char *action_label(const struct mcts_node *n)
{
    if (!n->action) return xstrdup(n->parent < 0 ? "(question)" : "");
    char *args = n->args ? cJSON_PrintUnformatted(n->args) : NULL;
    char *label = xasprintf("%s %s", n->action, args ? args : "{}");
    if (args) cJSON_free(args);
    return label;
}

static void node_event(struct worker *w, enum evq_kind kind, const struct mcts_node *n)
{
    struct evq_event e;
    evq_event_init(&e, kind);
    e.node = n->id;
    e.parent = n->parent;
    e.iteration = n->iteration;
    e.status = (int)n->status;
    e.visits = n->visits;
    e.q = mcts_q(n);
    e.value = n->value;
    e.flags = (n->duplicate ? EVQ_FLAG_DUPLICATE : 0) | (n->forced ? EVQ_FLAG_FORCED : 0) |
              (n->has_value ? EVQ_FLAG_HAS_VALUE : 0) | (n->fallback ? EVQ_FLAG_FALLBACK : 0) |
              (n->refused ? EVQ_FLAG_REFUSED : 0);
    char *label = action_label(n);
    e.text = label;
    e.text2 = n->error ? n->error : n->feedback;
    e.text3 = n->notes;
    evq_post(w->ev, &e);
    free(label);
}

/* Every score the selection of `iteration` computed, in tree order: the
 * children it compared at each node it descended through, the winners
 * marked. Marks are appended in selection order, so each node's marks of
 * that selection are at the end of its list. */
static void post_selection(struct worker *w, const struct mcts_tree *t, int iteration)
{
    for (int id = 0; id < t->n; id++) {
        const struct mcts_node *n = &t->nodes[id];
        int k = n->nuct;
        while (k > 0 && n->uct[k - 1].iteration == iteration) k--;
        for (; k < n->nuct; k++) {
            struct evq_event e;
            evq_event_init(&e, EVQ_UCT);
            e.node = id;
            e.parent = n->parent;
            e.iteration = iteration;
            e.uct = n->uct[k].score;
            e.a = n->uct[k].as_new;
            e.b = n->uct[k].chosen;
            evq_post(w->ev, &e);
        }
    }
}

static void on_search_event(void *ctx, const struct search *s, enum search_event ev, int id)
{
    struct worker *w = ctx;
    const struct mcts_node *n = mcts_node(search_tree(s), id);
    struct evq_event e;
    switch (ev) {
    case SEARCH_EV_NODE_ADDED:
        post_selection(w, search_tree(s), n->iteration);
        node_event(w, EVQ_NODE_ADDED, n);
        /* the last word on an asked-for expansion: it happened */
        if (n->forced) evq_post_log(w->ev, id, "node %d expanded as asked: node %d is its new child", n->parent, id);
        break;
    case SEARCH_EV_ACTION:
    case SEARCH_EV_NODE_UPDATED:
        node_event(w, EVQ_NODE_UPDATED, n);
        if (n->status == MCTS_ERROR && ev == SEARCH_EV_NODE_UPDATED && n->visits == 1)
            evq_post_log(w->ev, id, "node %d failed: %s", id, n->error);
        if (n->exhausted && ev == SEARCH_EV_NODE_UPDATED)
            evq_post_log(w->ev, n->parent, "node %d: no distinct action left to try; it takes no more children",
                         n->parent);
        break;
    case SEARCH_EV_REPORT:
    case SEARCH_EV_EVIDENCE:
        evq_event_init(&e, ev == SEARCH_EV_REPORT ? EVQ_REPORT : EVQ_EVIDENCE);
        e.node = id;
        e.parent = n->parent;
        e.text = ev == SEARCH_EV_REPORT ? n->report : n->obs_text;
        evq_post(w->ev, &e);
        break;
    case SEARCH_EV_STOPPED:
        break;   /* the loop reports the end once the answer is ready */
    }
}

static void post_tokens(struct worker *w)
{
    const struct mcts_tree *t = search_tree(w->s);
    struct evq_event e;
    evq_event_init(&e, EVQ_TOKENS);
    e.a = t->tokens_in;
    e.b = t->tokens_out;
    evq_post(w->ev, &e);
}

/* Starts the search of question, unless the hooks refuse it: then says why,
 * keeps the search there is (idle when none) and returns -1. */
static int start_search(struct worker *w, const char *question)
{
    char err[512] = "";
    if (w->cfg.hooks.refuse && w->cfg.hooks.refuse(w->cfg.hooks.ctx, question, err, sizeof err)) {
        evq_post_log(w->ev, -1, "%s", *err ? err : "the question cannot be searched");
        if (!w->s) post_state(w, EVQ_STATE_IDLE, NULL);
        return -1;
    }
    search_free(w->s);
    w->s = search_new(&w->cfg.search, &w->cfg.policy, &w->cfg.executor, &w->cfg.curator, question);
    w->answered = 0;
    w->step_pending = 0;
    w->rechecked = 0;
    struct evq_event e;
    evq_event_init(&e, EVQ_QUESTION);
    e.node = 0;
    e.text = (char *)question;
    evq_post(w->ev, &e);
    post_state(w, w->paused ? EVQ_STATE_PAUSED : EVQ_STATE_SEARCHING, NULL);
    return 0;
}

/* Writes DIR/drqa-STAMP-HASH{suffix}.json and .md of the search as it stands
 * (a: its answer, or NULL while it runs). export: one log line naming both
 * files; else a line per file. */
static void write_transcripts(struct worker *w, const char *dir, const char *suffix,
                              const struct search_answer *a, int export)
{
    const struct mcts_tree *t = search_tree(w->s);
    char stamp[32] = "unknown-time";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    char hex[17];
    hash64_hex(hash64(t->question, strlen(t->question)), hex);
    hex[8] = 0;
    char err[512];
    cJSON *config = w->transcript_config ? cJSON_Duplicate(w->transcript_config, 1) : cJSON_CreateObject();
    transcript_stamp_created(config);
    char *paths[2] = {NULL, NULL};
    int bad = 0;
    /* a name taken already (a second answer or export in the same second)
     * gets -2, -3, ...: nothing written before is replaced */
    for (int k = 1; k < 1000; k++) {
        char num[16] = "";
        if (k > 1) snprintf(num, sizeof num, "-%d", k);
        for (int md = 0; md < 2; md++) {
            free(paths[md]);
            paths[md] = xasprintf("%s/drqa-%s-%s%s%s.%s", dir, stamp, hex, suffix, num, md ? "md" : "json");
        }
        if (access(paths[0], F_OK) != 0 && access(paths[1], F_OK) != 0) break;
    }
    for (int md = 0; md < 2; md++) {
        int rc = md ? transcript_save_markdown(paths[md], t, a, err, sizeof err)
                    : transcript_save(paths[md], t, config, a, err, sizeof err);
        if (rc != 0) {
            evq_post_log(w->ev, -1, "%s%s", export ? "export failed: " : "", err);
            bad = 1;
        } else if (!export) {
            evq_post_log(w->ev, -1, "transcript written: %s", paths[md]);
        }
    }
    /* the two differ only in their extension: the line keeps room for the path */
    if (export && !bad) evq_post_log(w->ev, -1, "exported %s and .md", paths[0]);
    free(paths[0]);
    free(paths[1]);
    cJSON_Delete(config);
}

/* In the worker thread: hooks.open, then the search settings' event hook.
 * 0, or -1 with the error state posted (and kept in open_err). */
static int open_hooks(struct worker *w)
{
    w->opened = 1;
    w->open_err[0] = 0;
    if (w->cfg.hooks.open &&
        w->cfg.hooks.open(w->cfg.hooks.ctx, w->ev, &w->cancel, &w->cfg.search, &w->cfg.policy,
                          &w->cfg.executor, &w->cfg.curator, w->open_err, sizeof w->open_err) != 0) {
        w->opened = 0;
        post_state(w, EVQ_STATE_ERROR, w->open_err);
    }
    w->cfg.search.on_event = on_search_event;
    w->cfg.search.event_ctx = w;
    return w->opened ? 0 : -1;
}

/* The finished search met a damaged index (message says so): its answer
 * is dropped, the hooks close and open again (the open hook checks the
 * index and rebuilds it) and the question is asked again, once. */
static void ask_again(struct worker *w, const char *message)
{
    evq_post_log(w->ev, -1, "%s", message);
    char *q = xstrdup(search_tree(w->s)->question);
    search_free(w->s);   /* it uses what the hooks opened */
    w->s = NULL;
    search_answer_free(w->answer);
    w->answer = NULL;
    w->answered = 0;
    if (w->cfg.hooks.close) w->cfg.hooks.close(w->cfg.hooks.ctx);
    if (open_hooks(w) == 0) {
        start_search(w, q);
        w->rechecked = 1;
    }
    free(q);
}

/* The answer's pieces as the policy hands them (policy_answer_sink), out as
 * events; nonzero once the UI asked to stop. */
static int answer_piece(void *ud, int kind, const char *text, size_t len)
{
    struct worker *w = ud;
    if (atomic_load(&w->stop_answer)) return 1;
    struct evq_event e;
    evq_event_init(&e, EVQ_ANSWER_DELTA);
    e.a = kind;
    e.b = (long long)len;
    e.text = text && kind != EVQ_DELTA_RESET ? xstrndup(text, len) : NULL;
    evq_post(w->ev, &e);
    free(e.text);
    return atomic_load(&w->stop_answer);
}

static void answer(struct worker *w)
{
    atomic_store(&w->stop_answer, 0);   /* before the state: a stop asked from here on applies */
    post_state(w, EVQ_STATE_ANSWERING, NULL);
    struct policy *pol = &w->cfg.policy;
    if (pol->set_answer_sink) pol->set_answer_sink(pol->ctx, answer_piece, w);
    struct search_answer *a = search_answer(w->s);
    if (pol->set_answer_sink) pol->set_answer_sink(pol->ctx, NULL, NULL);
    char *damage = w->cfg.hooks.damage ? w->cfg.hooks.damage(w->cfg.hooks.ctx, w->rechecked) : NULL;
    if (damage && !w->rechecked) {
        search_answer_free(a);
        ask_again(w, damage);
        free(damage);
        return;
    }
    struct buf cites = BUF_INIT;
    for (size_t i = 0; i < a->cites.n; i++)
        buf_printf(&cites, "%s:%d-%d\n", a->cites.v[i].path, a->cites.v[i].start_line,
                   a->cites.v[i].end_line);
    struct evq_event e;
    evq_event_init(&e, EVQ_ANSWER);
    e.node = a->finish_node;
    e.a = a->from_finished;
    e.b = a->stopped;
    e.text = a->markdown;
    e.text2 = (char *)buf_str(&cites);
    e.text3 = a->written_by;
    evq_post(w->ev, &e);
    buf_free(&cites);
    if (a->error) evq_post_log(w->ev, -1, "%s", a->error);
    if (a->failure) evq_post_log(w->ev, -1, "%s", a->failure);
    if (damage) evq_post_log(w->ev, -1, "%s", damage);   /* met again after the check: said, not hidden */
    free(damage);
    post_tokens(w);
    if (w->transcript_dir) write_transcripts(w, w->transcript_dir, "", a, 0);
    search_answer_free(w->answer);
    w->answer = a;   /* kept for an export */
    w->answered = 1;
    post_state(w, EVQ_STATE_DONE, search_stop_name(search_stop_reason(w->s)));
}

static void handle(struct worker *w, struct cmdq_cmd *c)
{
    char err[512];
    switch (c->kind) {
    case CMD_PAUSE:
        w->paused = 1;
        w->step_pending = 0;
        post_state(w, EVQ_STATE_PAUSED, NULL);
        break;
    case CMD_RESUME:
        w->paused = 0;
        w->step_pending = 0;
        post_state(w, w->s && !search_done(w->s) ? EVQ_STATE_SEARCHING : w->state, NULL);
        break;
    case CMD_STEP:
        w->paused = 1;
        w->step_pending = w->s && !search_done(w->s);
        if (!w->step_pending) evq_post_log(w->ev, -1, "nothing to step: %s", w->s ? "the search is done" : "no question yet");
        else post_state(w, EVQ_STATE_SEARCHING, NULL);   /* paused again when the iteration is done */
        break;
    case CMD_PRUNE:
    case CMD_EXPAND:
        if (!w->s) {
            evq_post_log(w->ev, c->node, "no search is running; ask a question first");
            break;
        }
        if ((c->kind == CMD_PRUNE ? search_prune : search_force)(w->s, c->node, err, sizeof err) != 0) {
            evq_post_log(w->ev, c->node, "%s", err);
        } else if (c->kind == CMD_PRUNE) {
            /* the answer may stand on the pruned subtree: answer again
             * from the tree as it is now (the loop does, and writes it);
             * a prune of the Finish that ended it resumes the search */
            if (w->answered && !search_done(w->s)) {
                evq_post_log(w->ev, c->node, "node %d pruned: the search had not finished without it, it goes on",
                             c->node);
                w->answered = 0;
                post_state(w, w->paused ? EVQ_STATE_PAUSED : EVQ_STATE_SEARCHING, NULL);
            } else {
                evq_post_log(w->ev, c->node, "node %d pruned", c->node);
                if (search_done(w->s) && w->answered) w->answered = 0;
            }
        } else if (c->kind == CMD_EXPAND) {
            evq_post_log(w->ev, c->node, "node %d will be expanded next", c->node);
            if (!search_done(w->s) && w->answered) {
                w->answered = 0;
                post_state(w, w->paused ? EVQ_STATE_PAUSED : EVQ_STATE_SEARCHING, NULL);
            }
        }
        break;
    case CMD_FINISH:
        if (w->s) {
            int dropped = search_finish_now(w->s);
            if (dropped >= 0) evq_post_log(w->ev, dropped, "finishing: node %d will not be expanded", dropped);
        }
        break;
    case CMD_NEW_QUESTION:
        start_search(w, c->text ? c->text : "");
        break;
    case CMD_QUIT:
        w->quit = 1;
        break;
    case CMD_EXPORT:
        if (!w->s) evq_post_log(w->ev, -1, "nothing to export yet: ask a question first");
        else write_transcripts(w, c->text ? c->text : ".", "-export", w->answered ? w->answer : NULL, 1);
        break;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->paused = w->cfg.start_paused;
    if (open_hooks(w) == 0) {
        if (w->question) start_search(w, w->question);
        else post_state(w, EVQ_STATE_IDLE, NULL);
    }

    while (!w->quit) {
        struct cmdq_cmd c;
        while (!w->quit && cmdq_pop(w->cmd, &c)) {
            if (w->opened || c.kind == CMD_QUIT) handle(w, &c);
            else evq_post_log(w->ev, -1, "cannot %s: %s", cmdq_kind_name(c.kind), w->open_err);
            cmdq_cmd_clear(&c);
        }
        if (w->quit) break;
        if (w->s && !search_done(w->s) && (!w->paused || w->step_pending)) {
            /* a step is one iteration, whatever --parallel batches */
            if (w->step_pending) search_step_parallel(w->s, 1);
            else search_step(w->s);
            post_tokens(w);
            if (w->step_pending) {
                w->step_pending = 0;
                if (!search_done(w->s)) post_state(w, EVQ_STATE_PAUSED, NULL);
            }
            continue;
        }
        if (w->s && search_done(w->s) && !w->answered) {
            answer(w);
            continue;
        }
        cmdq_wait(w->cmd, &c);
        if (w->opened || c.kind == CMD_QUIT) handle(w, &c);
        else evq_post_log(w->ev, -1, "cannot %s: %s", cmdq_kind_name(c.kind), w->open_err);
        cmdq_cmd_clear(&c);
    }
    search_free(w->s);
    w->s = NULL;
    search_answer_free(w->answer);
    w->answer = NULL;
    if (w->opened && w->cfg.hooks.close) w->cfg.hooks.close(w->cfg.hooks.ctx);
    return NULL;
}

int worker_start(struct worker **out, const struct worker_config *cfg, struct evq *events,
                 struct cmdq *commands, char *err, size_t errlen)
{
    struct worker *w = xcalloc(1, sizeof *w);
    atomic_init(&w->cancel, 0);
    atomic_init(&w->stop_answer, 0);
    w->cfg = *cfg;
    w->cfg.search.on_event = on_search_event;
    w->cfg.search.event_ctx = w;
    w->question = cfg->question ? xstrdup(cfg->question) : NULL;
    w->transcript_dir = cfg->transcript_dir ? xstrdup(cfg->transcript_dir) : NULL;
    w->transcript_config = cfg->transcript_config ? cJSON_Duplicate(cfg->transcript_config, 1) : NULL;
    w->cfg.question = w->question;
    w->cfg.transcript_dir = w->transcript_dir;
    w->cfg.transcript_config = w->transcript_config;
    w->ev = events;
    w->cmd = commands;

    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the search thread: %s", strerror(rc));
        w->running = 0;
        worker_free(w);
        *out = NULL;
        return -1;
    }
    w->running = 1;
    *out = w;
    return 0;
}

int worker_stop(struct worker *w)
{
    if (!w || !w->running) return 0;
    atomic_store(&w->cancel, 1);
    cmdq_push(w->cmd, CMD_QUIT, -1, NULL);
    pthread_join(w->thread, NULL);
    w->running = 0;
    return 0;
}

void worker_stop_answer(struct worker *w)
{
    if (w) atomic_store(&w->stop_answer, 1);
}

const atomic_int *worker_cancel_flag(const struct worker *w)
{
    return &w->cancel;
}

void worker_free(struct worker *w)
{
    if (!w) return;
    worker_stop(w);
    free(w->question);
    free(w->transcript_dir);
    cJSON_Delete(w->transcript_config);
    free(w);
}
