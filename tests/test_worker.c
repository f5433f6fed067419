/* Tests of the worker thread driven only through commands and observed only
 * through events: pause, step, prune, expand, resume to Finish, answer and
 * transcripts, new question, finish now, quit; a failing open hook; signals
 * blocked in the worker; a search that met a damaged index asked again after
 * the hooks reopen (check) it. Waits are bounded only as a guard against hangs. */
#include "tap.h"
#include "harness.h"
#include "evq_next.h"
#include "toy_policy.h"
#include "worker.h"
#include "transcript.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct seen {
    int added, last_added, last_parent, last_flags;
    int root_visits;
    int answers, answer_finished;
    char answer[256], cites[256];
    enum evq_state state;
    char state_text[64];
    char log[256];
    int logs_written;
    int status[64];
    char question[64];
};

static void apply(struct seen *s, const struct evq_event *e)
{
    switch (e->kind) {
    case EVQ_QUESTION:
        snprintf(s->question, sizeof s->question, "%s", e->text ? e->text : "");
        s->added = 0;
        s->root_visits = 0;
        break;
    case EVQ_NODE_ADDED:
        s->added++;
        s->last_added = e->node;
        s->last_parent = e->parent;
        break;
    case EVQ_NODE_UPDATED:
        if (e->node == 0) s->root_visits = e->visits;
        if (e->node >= 0 && e->node < 64) s->status[e->node] = e->status;
        if (e->node == s->last_added) s->last_flags = e->flags;
        break;
    case EVQ_ANSWER:
        s->answers++;
        s->answer_finished = (int)e->a;
        snprintf(s->answer, sizeof s->answer, "%s", e->text ? e->text : "");
        snprintf(s->cites, sizeof s->cites, "%s", e->text2 ? e->text2 : "");
        break;
    case EVQ_STATE:
        s->state = e->state;
        snprintf(s->state_text, sizeof s->state_text, "%s", e->text ? e->text : "");
        break;
    case EVQ_LOG:
        snprintf(s->log, sizeof s->log, "%s", e->text ? e->text : "");
        if (strstr(s->log, "transcript written")) s->logs_written++;
        break;
    default:
        break;
    }
}

enum until { U_ROOT_VISITS, U_STATE, U_LOG, U_STATUS, U_ANSWERS, U_WRITTEN, U_QUESTION };

/* Applies events until the condition holds; 0 on a hang. */
static int wait_until(struct evq *q, struct seen *s, enum until u, int arg, const char *text)
{
    for (;;) {
        switch (u) {
        case U_ROOT_VISITS: if (s->root_visits == arg) return 1; break;
        case U_STATE: if ((int)s->state == arg) return 1; break;
        case U_LOG: if (strstr(s->log, text)) return 1; break;
        case U_STATUS: if (s->status[arg] == MCTS_PRUNED) return 1; break;
        case U_ANSWERS: if (s->answers == arg) return 1; break;
        case U_WRITTEN: if (s->logs_written == arg) return 1; break;
        case U_QUESTION: if (strcmp(s->question, text) == 0) return 1; break;
        }
        struct evq_event e;
        if (!next_event(q, &e)) return 0;
        apply(s, &e);
        evq_event_clear(&e);
    }
}

struct hooks {
    struct toy *toy;
    int fail, opened, closed, sigint_blocked;
    const atomic_int *cancel;
    int damaged;                /* answers the damage hook finds damaged, from the first on */
    int asked;                  /* damage hook calls */
    int fail_reopen;            /* an open after the first fails */
};

static int hook_open(void *ctx, struct evq *events, const atomic_int *cancel, struct search_config *sc, struct policy *p,
                     struct policy_executor *ex, struct policy_curator *cu, char *err, size_t errlen)
{
    struct hooks *h = ctx;
    (void)sc;
    h->cancel = cancel;
    evq_post_state(events, EVQ_STATE_INDEXING, 3, 3, "index ready");
    sigset_t cur;
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    h->sigint_blocked = sigismember(&cur, SIGINT) == 1 && sigismember(&cur, SIGWINCH) == 1;
    if (h->fail || (h->fail_reopen && h->opened)) {
        snprintf(err, errlen, "cannot open index 'x.sqlite': no such file");
        return -1;
    }
    h->opened++;
    *p = toy_policy(h->toy);
    *ex = toy_executor(h->toy);
    *cu = toy_curator(h->toy);
    return 0;
}

static void hook_close(void *ctx)
{
    ((struct hooks *)ctx)->closed++;
}

/* Refuses a question that opens with '?', as the front end's hook refuses one
 * with nothing to look for. */
static int hook_refuse(void *ctx, const char *question, char *err, size_t errlen)
{
    (void)ctx;
    if (question[0] != '?') return 0;
    snprintf(err, errlen, "the question '%s' has no words to look for", question);
    return 1;
}

static char *hook_damage(void *ctx, int rechecked)
{
    struct hooks *h = ctx;
    if (h->asked++ >= h->damaged) return NULL;
    return xasprintf("%s damaged file text (pkg/a.py)", rechecked ? "still" : "first");
}

/* A worker over a toy search whose damage hook finds h->damaged answers
 * damaged; its events until the first answer or error go into *s. */
static struct worker *damaged_worker(struct hooks *h, struct evq *ev, struct cmdq *cmd, struct seen *s)
{
    struct worker_config wc;
    memset(&wc, 0, sizeof wc);
    search_config_defaults(&wc.search);
    wc.search.iterations = 20;
    wc.search.finish_min_value = 0;
    wc.hooks = (struct worker_hooks){.ctx = h, .open = hook_open, .close = hook_close, .damage = hook_damage};
    wc.question = "third";
    toy_init(h->toy);
    h->toy->finish_at = 3;
    memset(s, 0, sizeof *s);
    s->last_added = -1;
    char err[256];
    struct worker *w = NULL;
    if (worker_start(&w, &wc, ev, cmd, err, sizeof err) != 0) return NULL;
    return w;
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "worker") != NULL, "temp dir");
    char err[256];
    struct evq *ev = evq_new(err, sizeof err);
    struct cmdq *cmd = cmdq_new();
    struct toy t;
    toy_init(&t);
    t.finish_at = 6;
    struct hooks h = {.toy = &t};
    cJSON *tcfg = cJSON_Parse("{\"mode\":\"mcts\",\"api_key\":\"SECRET\"}");

    struct worker_config wc;
    memset(&wc, 0, sizeof wc);
    search_config_defaults(&wc.search);
    wc.search.iterations = 20;
    wc.search.finish_min_value = 0;   /* the toy values Finish at 31: let it stop the search */
    wc.hooks = (struct worker_hooks){.ctx = &h, .open = hook_open, .close = hook_close, .refuse = hook_refuse};
    wc.question = "first";
    wc.start_paused = 1;
    wc.transcript_dir = dir;
    wc.transcript_config = tcfg;
    struct worker *w = NULL;
    is_int(worker_start(&w, &wc, ev, cmd, err, sizeof err), 0, "start the worker");
    cJSON_Delete(tcfg);   /* the worker keeps its own copy */

    struct seen s;
    memset(&s, 0, sizeof s);
    s.last_added = -1;
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_INDEXING, NULL), "the open hook can post indexing progress");
    ok(wait_until(ev, &s, U_QUESTION, 0, "first"), "the question is announced");
    ok(h.cancel == worker_cancel_flag(w) && atomic_load(h.cancel) == 0, "the hook got the cancel flag, clear");
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_PAUSED, NULL), "started paused");
    ok(h.sigint_blocked, "signals are blocked in the worker thread");

    cmdq_push(cmd, CMD_STEP, -1, NULL);
    ok(wait_until(ev, &s, U_ROOT_VISITS, 1, NULL), "step runs one iteration");
    cmdq_push(cmd, CMD_PAUSE, -1, NULL);
    s.state = EVQ_STATE_IDLE;
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_PAUSED, NULL), "pause is acknowledged");
    is_int(s.added, 1, "and after the step only one node exists");

    cmdq_push(cmd, CMD_PRUNE, 1, NULL);
    ok(wait_until(ev, &s, U_STATUS, 1, NULL), "prune 1: node 1 reported pruned");
    cmdq_push(cmd, CMD_PRUNE, 0, NULL);
    ok(wait_until(ev, &s, U_LOG, 0, "cannot prune the root"), "a refused prune is reported: %s", s.log);

    cmdq_push(cmd, CMD_STEP, -1, NULL);
    ok(wait_until(ev, &s, U_ROOT_VISITS, 2, NULL), "second step");
    ok(s.last_added == 2 && s.last_parent == 0, "node 2 under the root (node 1 is pruned)");
    cmdq_push(cmd, CMD_EXPAND, 2, NULL);
    ok(wait_until(ev, &s, U_LOG, 0, "node 2 will be expanded next"), "expand is acknowledged");
    cmdq_push(cmd, CMD_STEP, -1, NULL);
    ok(wait_until(ev, &s, U_ROOT_VISITS, 3, NULL), "third step");
    ok(s.last_added == 3 && s.last_parent == 2 && (s.last_flags & EVQ_FLAG_FORCED),
       "node 3 was expanded under the forced node 2");

    cmdq_push(cmd, CMD_RESUME, -1, NULL);
    ok(wait_until(ev, &s, U_ANSWERS, 1, NULL), "resumed, the search runs to Finish and answers");
    is_int(s.added, 6, "Finish came at node 6");
    ok(s.answer_finished, "the answer comes from the finished trajectory");
    ok(str_starts(s.answer, "toy answer over"), "the answer text is posted: %s", s.answer);
    ok(str_starts(s.cites, "pkg/") && str_ends(s.cites, "\n"), "with its citations, one a line");
    ok(wait_until(ev, &s, U_WRITTEN, 2, NULL), "JSON and Markdown transcripts are written");
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_DONE, NULL) && strcmp(s.state_text, "finish") == 0, "state done: finish");

    DIR *d = opendir(dir);
    int json = 0, md = 0, private = 1;
    char jpath[512] = "";
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char *path = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        private &= stat(path, &st) == 0 && (st.st_mode & 0777) == 0600;
        if (str_ends(de->d_name, ".json")) json++, snprintf(jpath, sizeof jpath, "%s", path);
        if (str_ends(de->d_name, ".md")) md++;
        free(path);
    }
    if (d) closedir(d);
    ok(json == 1 && md == 1 && private, "one JSON and one Markdown file, both 0600");
    struct mcts_tree *tree = NULL;
    ok(transcript_load(jpath, &tree, NULL, NULL, err, sizeof err) == 0 && tree && tree->n == 7 &&
       strcmp(tree->question, "first") == 0, "the transcript loads: 7 nodes of the first question");
    mcts_free(tree);
    char *jtext = read_file(jpath, 0, NULL);
    ok(jtext && !strstr(jtext, "SECRET") && strstr(jtext, "\"mode\""), "its configuration is written without the key");
    free(jtext);

    cmdq_push(cmd, CMD_PAUSE, -1, NULL);
    cmdq_push(cmd, CMD_NEW_QUESTION, -1, "second");
    ok(wait_until(ev, &s, U_QUESTION, 0, "second"), "a new question starts a new tree");
    cmdq_push(cmd, CMD_STEP, -1, NULL);
    ok(wait_until(ev, &s, U_ROOT_VISITS, 1, NULL), "which steps from a fresh root");
    is_int(s.added, 1, "one node in the new tree");
    cmdq_push(cmd, CMD_FINISH, -1, NULL);
    ok(wait_until(ev, &s, U_ANSWERS, 2, NULL), "finish now answers at once");
    ok(!s.answer_finished, "from the highest-value path, saying no node finished");
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_DONE, NULL) && strcmp(s.state_text, "user") == 0, "state done: user");
    /* a question the hooks refuse: said, and the tree there is kept */
    cmdq_push(cmd, CMD_NEW_QUESTION, -1, "?");
    ok(wait_until(ev, &s, U_LOG, 0, "has no words to look for"), "a refused question is said: %s", s.log);
    cmdq_push(cmd, CMD_EXPORT, -1, dir);
    ok(wait_until(ev, &s, U_LOG, 0, "exported"), "the worker goes on: %s", s.log);
    is_str(s.question, "second", "no new tree was started for it");
    is_int(s.added, 1, "and the question before keeps its tree");
    ok(s.state == EVQ_STATE_DONE, "and its state, done");

    is_int(worker_stop(w), 0, "quit joins the thread");
    is_int(atomic_load(worker_cancel_flag(w)), 1, "stopping raised the cancel flag");
    is_int(h.opened, 1, "open ran once");
    is_int(h.closed, 1, "close ran once, in the worker");
    worker_free(w);

    /* a failing open hook: reported, and the worker still quits cleanly */
    struct hooks hf = {.toy = &t, .fail = 1};
    wc.hooks = (struct worker_hooks){.ctx = &hf, .open = hook_open, .close = hook_close};
    wc.transcript_dir = NULL;
    wc.transcript_config = NULL;
    memset(&s, 0, sizeof s);
    is_int(worker_start(&w, &wc, ev, cmd, err, sizeof err), 0, "start a worker whose open fails");
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_ERROR, NULL), "the failure is posted as an error state");
    ok(strstr(s.state_text, "x.sqlite") != NULL, "naming the problem: %s", s.state_text);
    cmdq_push(cmd, CMD_STEP, -1, NULL);
    ok(wait_until(ev, &s, U_LOG, 0, "cannot step"), "commands are refused with the reason: %s", s.log);
    is_int(hf.closed, 0, "close is not called after a failed open");
    worker_free(w);
    is_int(hf.closed, 0, "not even at exit");

    /* a search that met a damaged index: said, checked (closed and opened
     * again), asked again; its first answer is never given */
    struct hooks hd = {&t, 0, 0, 0, 0, NULL, 1, 0, 0};
    w = damaged_worker(&hd, ev, cmd, &s);
    ok(w != NULL, "start a worker whose first answer meets a damaged index");
    ok(wait_until(ev, &s, U_LOG, 0, "first damaged file text (pkg/a.py)"),
       "the damage is said as the hook words it before the check: %s", s.log);
    is_int(s.answers, 0, "and the answer that lacks it is not given");
    ok(wait_until(ev, &s, U_QUESTION, 0, "third"), "the same question is asked again");
    ok(wait_until(ev, &s, U_ANSWERS, 1, NULL), "and answered");
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_DONE, NULL), "state done");
    ok(hd.opened == 2 && hd.closed == 1, "the hooks closed and opened again between (opened %d, closed %d)",
       hd.opened, hd.closed);
    ok(!strstr(s.log, "still damaged"), "nothing is said of damage in the answer asked again: %s", s.log);
    cmdq_push(cmd, CMD_NEW_QUESTION, -1, "fourth");
    ok(wait_until(ev, &s, U_ANSWERS, 2, NULL), "a new question is answered");
    is_int(hd.asked, 3, "the damage hook is asked after each search");
    worker_free(w);
    is_int(hd.closed, 2, "close ran once more, at exit");

    /* damaged again after the check: asked again once, then said beside the answer */
    struct hooks hd2 = {&t, 0, 0, 0, 0, NULL, 99, 0, 0};
    w = damaged_worker(&hd2, ev, cmd, &s);
    ok(wait_until(ev, &s, U_ANSWERS, 1, NULL), "damaged twice: the question asked again is answered");
    ok(wait_until(ev, &s, U_LOG, 0, "still damaged file text (pkg/a.py)"),
       "the damage met again is said beside the answer, as the hook words it after the check: %s", s.log);
    ok(hd2.opened == 2 && hd2.asked == 2, "one check only (opened %d, asked %d)", hd2.opened, hd2.asked);
    worker_free(w);

    /* the open after the damage fails: an error state, and the worker still quits cleanly */
    struct hooks hd3 = {&t, 0, 0, 0, 0, NULL, 1, 0, 1};
    w = damaged_worker(&hd3, ev, cmd, &s);
    ok(wait_until(ev, &s, U_STATE, EVQ_STATE_ERROR, NULL) && strstr(s.state_text, "x.sqlite"),
       "an open that fails after the damage is posted as an error: %s", s.state_text);
    is_int(s.answers, 0, "with no answer");
    cmdq_push(cmd, CMD_NEW_QUESTION, -1, "fifth");
    ok(wait_until(ev, &s, U_LOG, 0, "cannot new-question: cannot open index"), "commands are refused with the reason: %s", s.log);
    worker_free(w);
    ok(hd3.closed == 1, "close ran once, before the failed open (%d)", hd3.closed);

    evq_free(ev);
    cmdq_free(cmd);
    d = opendir(dir);
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char *path = xasprintf("%s/%s", dir, de->d_name);
        unlink(path);
        free(path);
    }
    if (d) closedir(d);
    rmdir(dir);
    return done_testing();
}
