/* Tests of the answer written while the worker answers, observed only
 * through events: a policy whose answer hands pieces to its sink (as the
 * llm policy does) makes the worker post them as EVQ_ANSWER_DELTA, resets
 * included, after the answering state and before the EVQ_ANSWER that
 * replaces them; worker_stop_answer, called while the policy is blocked in
 * its answer, makes the sink return nonzero, and the stopped answer comes
 * marked (EVQ_ANSWER's b, the transcript's "stopped"); the next answer is
 * not stopped; the sink is taken away after each answer. Waits are bounded
 * only as a guard against hangs. */
#include "tap.h"
#include "harness.h"
#include "evq_next.h"
#include "toy_policy.h"
#include "worker.h"

#include <dirent.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- a policy double: the toy's search, an answer written in pieces ---- */

static policy_answer_sink sink_fn;
static void *sink_ud;
static int sink_sets, sink_clears;
static int block_until_stopped;   /* the answer goes on writing until its reader stops it */

static void set_sink(void *ctx, policy_answer_sink fn, void *ud)
{
    (void)ctx;
    sink_fn = fn;
    sink_ud = ud;
    if (fn) sink_sets++;
    else sink_clears++;
}

static int piece(int kind, const char *text)
{
    return sink_fn ? sink_fn(sink_ud, kind, text, text ? strlen(text) : 0) : 0;
}

static int stream_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
                         struct policy_usage *u, char *err, size_t errlen)
{
    (void)ctx; (void)t; (void)ids; (void)nids; (void)u; (void)err; (void)errlen;
    if (!block_until_stopped) {
        piece(0, "Half");
        piece(2, NULL);
        piece(0, "Streamed ");
        piece(1, "(thinking)");
        piece(0, "answer.");
        out->markdown = xstrdup("Streamed answer.");
        return 0;
    }
    int stopped = piece(0, "Partial ");
    /* a model that writes on and on: only the reader's stop ends it (the
     * guard, 20 s, only keeps a broken test from hanging) */
    for (int i = 0; !stopped && i < 4000; i++) {
        nanosleep(&(struct timespec){0, 5000000}, NULL);
        stopped = piece(0, ".");
    }
    out->markdown = xstrdup(stopped ? "Partial\n\n_Stopped while it was being written._\n" : "never stopped");
    out->stopped = stopped;
    return 0;
}

static struct toy toy;

static int hook_open(void *ctx, struct evq *events, const atomic_int *cancel, struct search_config *sc, struct policy *p,
                     struct policy_executor *ex, struct policy_curator *cu, char *err, size_t errlen)
{
    (void)ctx; (void)events; (void)cancel; (void)sc; (void)err; (void)errlen;
    *p = toy_policy(&toy);
    p->answer = stream_answer;
    p->set_answer_sink = set_sink;
    *ex = toy_executor(&toy);
    *cu = toy_curator(&toy);
    return 0;
}

/* ---- what the UI would see ---- */

struct seen {
    struct buf deltas;        /* "T:text|", "r:text|", "R|" */
    int answering_first;      /* the answering state came before the first piece */
    enum evq_state state;
    int answers, stopped;
    char answer[256];
};

/* Applies events until the n-th answer (want_delta: until a first piece);
 * 0 on a hang. */
static int wait_for(struct evq *q, struct seen *s, int answers, int want_delta)
{
    while (s->answers < answers && !(want_delta && s->deltas.len)) {
        struct evq_event e;
        if (!next_event(q, &e)) return 0;
        if (e.kind == EVQ_STATE) s->state = e.state;
        if (e.kind == EVQ_ANSWER_DELTA) {
            if (!s->deltas.len) s->answering_first = s->state == EVQ_STATE_ANSWERING;
            if (e.a == EVQ_DELTA_RESET) buf_adds(&s->deltas, "R|");
            else buf_printf(&s->deltas, "%c:%s|", e.a == EVQ_DELTA_TEXT ? 'T' : 'r', e.text ? e.text : "");
        }
        if (e.kind == EVQ_ANSWER) {
            s->answers++;
            s->stopped = (int)e.b;
            snprintf(s->answer, sizeof s->answer, "%s", e.text ? e.text : "");
        }
        evq_event_clear(&e);
    }
    return 1;
}

/* Applies events until the search is done (its transcript is written
 * after its answer); 0 on a hang. */
static int wait_done(struct evq *q, struct seen *s)
{
    while (s->state != EVQ_STATE_DONE) {
        struct evq_event e;
        if (!next_event(q, &e)) return 0;
        if (e.kind == EVQ_STATE) s->state = e.state;
        evq_event_clear(&e);
    }
    return 1;
}

/* The text of the one file in dir ending in suffix (caller frees), or NULL. */
static char *only_file(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    char *text = NULL;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (str_ends(de->d_name, suffix)) {
            char *path = xasprintf("%s/%s", dir, de->d_name);
            free(text);
            text = read_file(path, 0, NULL);
            unlink(path);
            free(path);
        }
    if (d) closedir(d);
    return text;
}

/* A worker over the toy search with the policy double, asking "first",
 * writing its transcripts into dir; NULL when it did not start. */
static struct worker *start(struct evq *ev, struct cmdq *cmd, const char *dir)
{
    toy_init(&toy);
    toy.finish_at = 3;
    struct worker_config wc = {.hooks = {NULL, hook_open, NULL, NULL}, .question = "first", .transcript_dir = dir};
    search_config_defaults(&wc.search);
    wc.search.iterations = 10;
    wc.search.finish_min_value = 0;   /* the toy values Finish at 31: let it stop the search */
    struct worker *w = NULL;
    char err[256];
    if (worker_start(&w, &wc, ev, cmd, err, sizeof err) != 0) diag("%s", err);
    return w;
}

int main(void)
{
    char dir[256], err[256];
    ok(temp_dir(dir, sizeof dir, "wstream") != NULL, "temp dir");
    struct evq *ev = evq_new(err, sizeof err);
    struct cmdq *cmd = cmdq_new();
    struct worker *w = start(ev, cmd, dir);
    ok(w != NULL, "start the worker");

    struct seen s = {BUF_INIT, 0, EVQ_STATE_IDLE, 0, 0, ""};
    ok(wait_for(ev, &s, 1, 0), "the search answers");
    is_str(buf_str(&s.deltas), "T:Half|R|T:Streamed |r:(thinking)|T:answer.|",
           "the pieces are posted in order: text, the reset, reasoning");
    ok(s.answering_first, "after the answering state");
    ok(str_starts(s.answer, "Streamed answer.") && !s.stopped, "then the answer, not stopped: %s", s.answer);
    ok(sink_sets == 1 && sink_clears == 1 && !sink_fn, "the sink is set for the answer and taken away after it");
    ok(wait_done(ev, &s), "done");
    char *md = only_file(dir, ".md"), *js = only_file(dir, ".json");
    ok(js && !strstr(js, "\"stopped\""), "its transcript has no stopped mark");
    free(md);
    free(js);

    /* a stop while the policy is blocked in its answer */
    block_until_stopped = 1;
    buf_reset(&s.deltas);
    cmdq_push(cmd, CMD_NEW_QUESTION, -1, "second");
    ok(wait_for(ev, &s, 2, 1), "the second answer is being written");
    is_str(buf_str(&s.deltas), "T:Partial |", "its first piece came");
    worker_stop_answer(w);
    ok(wait_for(ev, &s, 2, 0), "after the stop the answer comes");
    ok(s.stopped && str_starts(s.answer, "Partial") && strstr(s.answer, "Stopped while"),
       "marked as stopped, the part written kept: %s", s.answer);
    ok(wait_done(ev, &s), "done");
    md = only_file(dir, ".md");
    js = only_file(dir, ".json");
    ok(js && strstr(js, "\"stopped\":\ttrue"), "the transcript JSON says it was stopped");
    ok(md && strstr(md, "Stopped while it was being written"), "and its Markdown says so");
    free(md);
    free(js);

    /* the stop ended with that answer */
    block_until_stopped = 0;
    cmdq_push(cmd, CMD_NEW_QUESTION, -1, "third");
    ok(wait_for(ev, &s, 3, 0) && !s.stopped, "the next answer is not stopped");

    worker_free(w);
    evq_free(ev);
    cmdq_free(cmd);
    buf_free(&s.deltas);
    remove_tree(dir);   /* with the transcripts the answers wrote */
    return done_testing();
}
