/* Tests of parallel expansion (search_config.parallel = K > 1) with the
 * scripted policy: role calls really overlap (the toy holds the first K calls
 * of a role at a gate until K have arrived, so a run that completes without a
 * timed-out wait proves K were in flight at once), callbacks not declared
 * thread-safe never overlap while the others still do, tree invariants and
 * virtual loss after every run, no duplicate siblings when siblings plan at
 * the same moment, Finish and finish-now let the batch complete and start no
 * other, the budget and the iteration limit, prune and force around batches
 * and during one, errors, the no-mcts ablation, K = 1 being the sequential
 * search byte for byte, and the worker stepping one batch at a time. */
#include "tap.h"
#include "search_harness.h"
#include "search.h"
#include "transcript.h"
#include "worker.h"

#include <math.h>
#include <poll.h>
#include <stdatomic.h>

/* Steps to the end; the iterations of each step go to steps[] (up to 32). */
static int run_all(struct search *s, int *steps, int *nsteps)
{
    int n = 0, k, total = 0;
    while ((k = search_step(s)) > 0) {
        if (steps && n < 32) steps[n] = k;
        n++;
        total += k;
    }
    if (nsteps) *nsteps = n;
    return total;
}

/* No two siblings that were executed share an action key. */
static int duplicate_siblings(const struct mcts_tree *t)
{
    int bad = 0;
    for (int i = 0; i < t->n; i++) {
        const struct mcts_node *p = mcts_node(t, i);
        for (int a = 0; a < p->nchildren; a++)
            for (int b = a + 1; b < p->nchildren; b++) {
                const struct mcts_node *x = mcts_node(t, p->children[a]);
                const struct mcts_node *y = mcts_node(t, p->children[b]);
                if (x->args_key && y->args_key &&
                    strcmp(x->args_key, y->args_key) == 0)
                    bad++;
            }
    }
    return bad;
}

static void parallel_config(struct search_config *c, int k)
{
    search_config_defaults(c);
    c->parallel = k;
    c->policy_thread_safe = c->executor_thread_safe = c->curator_thread_safe = 1;
}

/* ---- hooks run inside role calls, while the batch is in flight ---- */

struct flight {
    struct search *s;
    int at;                  /* act at the perceive call of this node */
    atomic_int acted;        /* the hook runs on every expansion thread */
    int finish_now;          /* 1: search_finish_now; 0: prune the root's children */
    int prune_rc[4];         /* results of pruning nodes 1..3 */
    char prune_err[4][256];
};

static void flight_hook(void *ctx, const char *role, int id)
{
    struct flight *f = ctx;
    if (id != f->at || strcmp(role, "perceive") != 0 || atomic_exchange(&f->acted, 1)) return;
    if (f->finish_now) {
        search_finish_now(f->s);
        return;
    }
    for (int c = 1; c <= 3; c++)
        f->prune_rc[c] = search_prune(f->s, c, f->prune_err[c], sizeof f->prune_err[c]);
}

/* ---- the worker, driven by commands ---- */

static int next_event(struct evq *q, struct evq_event *e)
{
    for (;;) {
        if (evq_pop(q, e)) return 1;
        struct pollfd p = {evq_wake_fd(q), POLLIN, 0};
        if (poll(&p, 1, 20000) <= 0) return 0;   /* a hang, reported as a failure */
        evq_drain_wake(q);
    }
}

struct seen {
    int added, root_visits, answers;
    enum evq_state state;
};

/* Applies events until root visits reach `visits` (or, with visits < 0, an
 * answer arrives) and then the worker reports `state`; 0 on a hang. */
static int wait_for(struct evq *q, struct seen *s, int visits, enum evq_state state)
{
    int reached = 0;
    for (;;) {
        if (!reached) reached = visits >= 0 ? s->root_visits == visits : s->answers > 0;
        if (reached && s->state == state) return 1;
        struct evq_event e;
        if (!next_event(q, &e)) return 0;
        if (e.kind == EVQ_NODE_ADDED) s->added++;
        if (e.kind == EVQ_NODE_UPDATED && e.node == 0) s->root_visits = e.visits;
        if (e.kind == EVQ_ANSWER) s->answers++;
        if (e.kind == EVQ_STATE) s->state = e.state;
        evq_event_clear(&e);
    }
}

/* K = 3: three expansions in flight at once */
static void test_overlap(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    int steps[32], nsteps;

    toy_init(&t);
    t.gate = TOY_GATE_PERCEIVE;
    t.gate_n = 3;
    parallel_config(&c, 3);
    c.on_event = count_event;
    s = run(&t, &c, "how does routing work?");
    is_int(run_all(s, steps, &nsteps), 15, "15 iterations");
    ok(nsteps == 5 && steps[0] == 3 && steps[1] == 3 && steps[2] == 3 && steps[3] == 3 && steps[4] == 3,
       "in 5 steps of a batch of 3 each");
    is_int(t.waits_timed_out, 0, "the first 3 perceive calls all arrived while the others waited");
    is_int(t.max_in_flight, 3, "at most and at least 3 role calls were in flight at once");
    tr = search_tree(s);
    is_int(search_stop_reason(s), SEARCH_STOP_ITERATIONS, "stopped by the iteration limit");
    is_int(tr->iterations, 15, "the tree counts iterations");
    is_int(tr->n, 16, "one node per iteration");
    is_int(mcts_node(tr, 0)->visits, 15, "root visits = iterations");
    is_int(check_settled(tr), -1, "visits, value sums, <= 3 children, no virtual loss left");
    ok(mcts_node(tr, 1)->parent == 0 && mcts_node(tr, 2)->parent == 0 && mcts_node(tr, 3)->parent == 0,
       "the first batch widens the root three times (the in-flight children count against max_expand)");
    int made_in = 1, done = 1;
    for (int i = 1; i < tr->n; i++) {
        made_in &= mcts_node(tr, i)->iteration == i;
        done &= mcts_node(tr, i)->status == MCTS_DONE;
    }
    ok(made_in && done, "node i was made in iteration i and is done");
    ok(t.calls_perceive == 15 && t.calls_plan == 15 && t.calls_exec == 15 && t.calls_curate == 15 &&
       t.calls_eval == 15, "each role once per iteration");
    is_str(mcts_node(tr, 2)->report, "node 2 under 0 with 2 siblings",
           "a policy call sees the siblings already selected in its batch");
    is_int(events[SEARCH_EV_NODE_ADDED], 15, "one node-added event per iteration");
    is_int(events[SEARCH_EV_EVIDENCE], 15, "one evidence event per iteration");
    is_int(events[SEARCH_EV_STOPPED], 1, "one stopped event");
    int depth_sum = 0;
    for (int i = 1; i < tr->n; i++) depth_sum += mcts_node(tr, i)->depth;
    is_int(events[SEARCH_EV_NODE_UPDATED], depth_sum + 15, "an update for every node on each backed-up path");
    is_int(search_step(s), 0, "a finished search does not step");
    search_free(s);

    /* K = 2: the pool never runs more than K */
    toy_init(&t);
    t.gate = TOY_GATE_EVAL;
    t.gate_n = 2;
    parallel_config(&c, 2);
    c.iterations = 6;
    s = run(&t, &c, "q");
    run_all(s, steps, &nsteps);
    ok(nsteps == 3 && t.waits_timed_out == 0 && t.max_in_flight == 2, "K = 2: batches of 2, 2 calls in flight at most and at least");
    is_int(check_settled(search_tree(s)), -1, "K = 2: invariants hold");
    search_free(s);
}

/* callbacks not declared thread-safe run one at a time */
static void test_not_thread_safe(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;

    toy_init(&t);
    t.gate = TOY_GATE_PERCEIVE;
    t.gate_n = 3;
    t.exec_wait_plans = 3;  /* the first execute holds the serial lock until all three are planned */
    t.probe_ms = 200;       /* and then gives another execute or curate time to start */
    parallel_config(&c, 3);
    c.executor_thread_safe = c.curator_thread_safe = 0;
    c.iterations = 3;
    s = run(&t, &c, "q");
    is_int(run_all(s, NULL, NULL), 3, "serialised executor and curator: one batch of 3");
    is_int(t.max_ex_in_flight, 1, "executor and curator calls never overlapped");
    is_int(t.max_in_flight, 3, "while the policy's calls still overlapped");
    is_int(t.waits_timed_out, 0, "even with an executor call in progress (the other two planned during it)");
    is_int(check_settled(search_tree(s)), -1, "invariants hold");
    search_free(s);

    toy_init(&t);
    t.probe_ms = 200;
    parallel_config(&c, 3);
    c.policy_thread_safe = c.executor_thread_safe = c.curator_thread_safe = 0;
    c.iterations = 3;
    s = run(&t, &c, "q");
    is_int(run_all(s, NULL, NULL), 3, "nothing declared thread-safe: still a batch of 3");
    is_int(t.max_all_in_flight, 1, "no two callbacks ever ran at once (the first perceive and execute waited in vain)");
    is_int(check_settled(search_tree(s)), -1, "invariants hold");
    search_free(s);
}

/* siblings planning the same action at the same moment */
static void test_sibling_duplicates(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;

    toy_init(&t);
    t.dup = TOY_DUP_SIBLING;
    t.gate = TOY_GATE_PLAN;
    t.gate_n = 3;
    parallel_config(&c, 3);
    c.iterations = 3;
    s = run(&t, &c, "q");
    run_all(s, NULL, NULL);
    tr = search_tree(s);
    is_int(t.waits_timed_out, 0, "the three siblings' first plans were in flight together");
    int winner = -1, dups = 0, dup_ok = 1;
    for (int i = 1; i <= 3; i++) {
        if (!mcts_node(tr, i)->exhausted) winner = winner < 0 ? i : 99;
        else dups++;
    }
    for (int i = 1; i <= 3; i++) {
        const struct mcts_node *n = mcts_node(tr, i);
        dup_ok &= !n->duplicate && (!n->exhausted || (!n->action && n->status == MCTS_PRUNED));
    }
    ok(winner >= 1 && winner <= 3 && dups == 2, "exactly one sibling runs the action (node %d), two take none", winner);
    ok(dup_ok, "those two are recorded without an action, pruned, and no node is a duplicate");
    ok(mcts_node(tr, 0)->closed, "the root takes no more children");
    is_int(t.calls_plan, 1 + 3 + 3, "each loser was re-planned max_replans times");
    is_int(t.calls_exec, 1, "the action was executed once");
    is_int(check_settled(tr), -1, "invariants hold with concurrent duplicates");
    search_free(s);

    toy_init(&t);
    t.dup = TOY_DUP_SIBLING;
    parallel_config(&c, 3);
    s = run(&t, &c, "q");
    run_all(s, NULL, NULL);
    tr = search_tree(s);
    is_int(duplicate_siblings(tr), 0, "a whole run: no two executed siblings share an action");
    is_int(check_settled(tr), -1, "and its invariants hold");
    search_free(s);
}

/* Finish: the batch completes, no other starts */
static void test_finish(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    int steps[32], nsteps;

    toy_init(&t);
    t.finish_at = 5;
    parallel_config(&c, 3);
    memset(events, 0, sizeof events);
    c.on_event = count_event;
    s = run(&t, &c, "q");
    is_int(run_all(s, steps, &nsteps), 6, "Finish at node 5 (second batch): 6 iterations");
    is_int(nsteps, 2, "in 2 steps");
    tr = search_tree(s);
    is_int(search_stop_reason(s), SEARCH_STOP_FINISH, "stop reason: finish");
    is_int(mcts_node(tr, 5)->status, MCTS_FINISHED, "node 5 is finished");
    ok(tr->n == 7 && mcts_node(tr, 4)->status == MCTS_DONE && mcts_node(tr, 6)->status == MCTS_DONE &&
       mcts_node(tr, 4)->visits == 1 && mcts_node(tr, 6)->visits == 1,
       "its batch companions 4 and 6 completed and were backed up; nothing else started");
    is_int(t.calls_perceive, 6, "six expansions were perceived");
    is_int(events[SEARCH_EV_STOPPED], 1, "one stopped event");
    is_int(check_settled(tr), -1, "invariants hold");
    struct search_answer *a = search_answer(s);
    ok(a->from_finished && a->finish_node == 5, "the answer comes from the finished node");
    search_answer_free(a);
    search_free(s);
}

/* finish now while a batch is in flight */
static void test_finish_now(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    int steps[32], nsteps;

    struct flight fl;
    memset(&fl, 0, sizeof fl);
    atomic_init(&fl.acted, 0);
    toy_init(&t);
    t.hook = flight_hook;
    t.hook_ctx = &fl;
    parallel_config(&c, 3);
    s = run(&t, &c, "q");
    fl.s = s;
    fl.at = 4;
    fl.finish_now = 1;
    is_int(run_all(s, steps, &nsteps), 6, "finish now during the second batch: 6 iterations");
    tr = search_tree(s);
    ok(atomic_load(&fl.acted) && search_stop_reason(s) == SEARCH_STOP_USER, "stop reason: user");
    ok(tr->n == 7 && mcts_node(tr, 5)->visits == 1 && mcts_node(tr, 6)->visits == 1,
       "the expansions in flight completed and were recorded");
    is_int(check_settled(tr), -1, "invariants hold");
    search_free(s);
}

/* prune while a batch is in flight */
static void test_prune_in_flight(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    struct flight fl;

    memset(&fl, 0, sizeof fl);
    atomic_init(&fl.acted, 0);
    toy_init(&t);
    t.hook = flight_hook;
    t.hook_ctx = &fl;
    t.gate = TOY_GATE_PERCEIVE;   /* the second batch's perceive calls wait for each other, */
    t.gate_skip = 3;              /* so none of its nodes is done when node 5's hook prunes */
    t.gate_n = 3;
    parallel_config(&c, 3);
    s = run(&t, &c, "q");
    fl.s = s;
    fl.at = 5;
    run_all(s, NULL, NULL);
    tr = search_tree(s);
    int refused = 0, pruned = 0, agree = 1;
    for (int ch = 1; ch <= 3; ch++) {
        int holds_flight = 0;   /* a node of the second batch (4-6) lies below ch */
        for (int i = 4; i <= 6; i++)
            for (int a2 = i; a2 > 0; a2 = mcts_node(tr, a2)->parent) holds_flight |= a2 == ch;
        if (holds_flight) {
            agree &= fl.prune_rc[ch] == -1 && strstr(fl.prune_err[ch], "still being worked on") != NULL;
            refused++;
        } else {
            agree &= fl.prune_rc[ch] == 0 && mcts_node(tr, ch)->status == MCTS_PRUNED;
            pruned++;
        }
    }
    ok(atomic_load(&fl.acted) && agree && t.waits_timed_out == 0,
       "a prune during flight is refused exactly for the subtrees holding in-flight nodes");
    ok(refused >= 1 && pruned >= 1, "both cases happened (%d refused, %d pruned)", refused, pruned);
    int below_pruned = 0;
    for (int i = 7; i < tr->n; i++)
        for (int a2 = mcts_node(tr, i)->parent; a2 > 0; a2 = mcts_node(tr, a2)->parent)
            below_pruned += mcts_node(tr, a2)->status == MCTS_PRUNED;
    is_int(below_pruned, 0, "later batches never expanded a pruned subtree");
    is_int(tr->iterations, 15, "and the search ran its 15 iterations");
    is_int(check_settled(tr), -1, "invariants hold with a prune during flight");
    search_free(s);
}

/* prune and force between batches */
static void test_prune_force(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    char err[256];

    toy_init(&t);
    parallel_config(&c, 3);
    s = run(&t, &c, "q");
    is_int(search_step(s), 3, "first batch");
    is_int(search_prune(s, 2, err, sizeof err), 0, "prune node 2 between batches");
    is_int(search_force(s, 3, err, sizeof err), 0, "force node 3");
    is_int(search_step(s), 3, "second batch");
    tr = search_tree(s);
    ok(mcts_node(tr, 4)->parent == 3 && mcts_node(tr, 4)->forced, "the batch's first expansion is the forced one");
    ok(mcts_node(tr, 5)->parent != 2 && mcts_node(tr, 6)->parent != 2, "and none is under the pruned node");
    run_all(s, NULL, NULL);
    is_int(check_settled(tr), -1, "invariants hold");
    search_free(s);
}

/* token budget: checked before each batch */
static void test_token_budget(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    int steps[32], nsteps;

    toy_init(&t);
    t.tokens_per_call = 100;   /* 600 per iteration */
    parallel_config(&c, 3);
    c.budget_tokens = 2000;
    s = run(&t, &c, "q");
    is_int(run_all(s, steps, &nsteps), 6, "a 2000-token budget at 600 per iteration: two batches of 3");
    tr = search_tree(s);
    is_int(search_stop_reason(s), SEARCH_STOP_BUDGET, "stop reason: budget");
    is_int(tr->tokens_in + tr->tokens_out, 3600, "tokens are accounted exactly");
    is_int(mcts_node(tr, 4)->tokens_in, 400, "and per node");
    search_free(s);
}

/* the iteration limit caps the last batch */
static void test_iteration_limit(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    int steps[32], nsteps;

    toy_init(&t);
    parallel_config(&c, 3);
    c.iterations = 7;
    s = run(&t, &c, "q");
    is_int(run_all(s, steps, &nsteps), 7, "7 iterations with K = 3");
    ok(nsteps == 3 && steps[0] == 3 && steps[1] == 3 && steps[2] == 1, "in batches of 3, 3 and 1");
    search_free(s);
}

/* fewer expandable nodes than K */
static void test_few_expandable(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;

    toy_init(&t);
    t.fail_eval_all = 1;
    parallel_config(&c, 3);
    c.max_expand = 1;
    s = run(&t, &c, "q");
    is_int(search_step(s), 1, "one child allowed: a batch of 1");
    is_int(search_step(s), 0, "then nothing is expandable");
    is_int(search_stop_reason(s), SEARCH_STOP_EXHAUSTED, "stop reason: exhausted");
    search_free(s);
}

/* failed role calls are recorded on their nodes */
static void test_failed_roles(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;

    toy_init(&t);
    t.fail_plan_at = 2;
    t.fail_exec_at = 5;
    parallel_config(&c, 3);
    s = run(&t, &c, "q");
    is_int(run_all(s, NULL, NULL), 15, "failures do not stop the search");
    tr = search_tree(s);
    ok(mcts_node(tr, 2)->status == MCTS_ERROR && str_starts(mcts_node(tr, 2)->error, "plan: toy plan failure"),
       "node 2: plan error: %s", mcts_node(tr, 2)->error);
    ok(mcts_node(tr, 5)->status == MCTS_ERROR && str_starts(mcts_node(tr, 5)->error, "execute: FindFunction: toy executor"),
       "node 5: execute error: %s", mcts_node(tr, 5)->error);
    ok(mcts_node(tr, 2)->nchildren == 0 && mcts_node(tr, 5)->nchildren == 0, "error nodes are never expanded");
    is_int(check_settled(tr), -1, "invariants hold");
    search_free(s);
}

/* the no-mcts ablation stays one trajectory */
static void test_no_mcts(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    const struct mcts_tree *tr;
    int steps[32], nsteps;

    toy_init(&t);
    parallel_config(&c, 3);
    c.no_mcts = 1;
    c.iterations = 6;
    s = run(&t, &c, "q");
    run_all(s, steps, &nsteps);
    tr = search_tree(s);
    int chain = nsteps == 6;
    for (int i = 1; i < tr->n; i++) chain &= mcts_node(tr, i)->parent == i - 1;
    ok(chain, "no-mcts with K = 3: six single steps, each node the child of the last");
    search_free(s);
}

/* K = 1 is the sequential search, byte for byte */
static void test_sequential_same(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    struct search_answer *a;

    {
        char *runs[5];
        for (int r = 0; r < 5; r++) {
            toy_init(&t);
            t.flat_values = 1;   /* ties everywhere: the seed decides */
            t.tokens_per_call = 10;
            search_config_defaults(&c);
            c.seed = r == 4 ? 8 : 7;
            c.clock_ms = toy_clock;
            toy_clock_now = 0;
            if (r == 1) c.parallel = 0;
            if (r == 2) c.policy_thread_safe = c.executor_thread_safe = c.curator_thread_safe = 1;
            if (r == 3) c.parallel = 3;   /* the explicit K below wins */
            s = run(&t, &c, "q");
            if (r == 3) {
                while (search_step_parallel(s, 1)) {
                }
            } else {
                run_all(s, NULL, NULL);
            }
            a = search_answer(s);
            runs[r] = transcript_json(search_tree(s), NULL, a);
            search_answer_free(a);
            search_free(s);
        }
        ok(strcmp(runs[0], runs[1]) == 0, "parallel 1 (the default) and parallel 0 give byte-identical transcripts");
        ok(strcmp(runs[0], runs[2]) == 0, "thread-safety flags change nothing when K = 1");
        ok(strcmp(runs[0], runs[3]) == 0, "search_step_parallel(s, 1) is the same search whatever cfg.parallel says");
        ok(strcmp(runs[0], runs[4]) != 0, "(another seed gives another transcript: the comparison can fail)");
        for (int r = 0; r < 5; r++) free(runs[r]);
    }
}

/* under K = 3 the worker still steps one iteration at a time */
static void test_worker_steps(void)
{
    struct toy t;
    char err[256];

    {
        struct evq *ev = evq_new(err, sizeof err);
        struct cmdq *cmd = cmdq_new();
        toy_init(&t);
        struct worker_config wc;
        memset(&wc, 0, sizeof wc);
        parallel_config(&wc.search, 3);
        wc.policy = toy_policy(&t);
        wc.executor = toy_executor(&t);
        wc.curator = toy_curator(&t);
        wc.question = "q";
        wc.start_paused = 1;
        struct worker *w = NULL;
        struct seen sn;
        memset(&sn, 0, sizeof sn);
        is_int(worker_start(&w, &wc, ev, cmd, err, sizeof err), 0, "worker with K = 3");
        ok(wait_for(ev, &sn, 0, EVQ_STATE_PAUSED), "started paused");
        cmdq_push(cmd, CMD_STEP, -1, NULL);
        sn.state = EVQ_STATE_IDLE;
        ok(wait_for(ev, &sn, 1, EVQ_STATE_PAUSED), "step: root visits 1, paused again");
        is_int(sn.added, 1, "one step ran one iteration, not a batch of 3");
        cmdq_push(cmd, CMD_PRUNE, 1, NULL);
        cmdq_push(cmd, CMD_STEP, -1, NULL);
        sn.state = EVQ_STATE_IDLE;
        ok(wait_for(ev, &sn, 2, EVQ_STATE_PAUSED), "prune, then another step");
        is_int(sn.added, 2, "another single iteration");
        cmdq_push(cmd, CMD_FINISH, -1, NULL);
        ok(wait_for(ev, &sn, -1, EVQ_STATE_DONE), "finish answers");
        is_int(sn.added, 2, "nothing ran after finish");
        worker_free(w);
        is_int(t.calls_perceive, 2, "the policy saw exactly the two steps");
        evq_free(ev);
        cmdq_free(cmd);
    }
}

int main(void)
{
    test_overlap();
    test_not_thread_safe();
    test_sibling_duplicates();
    test_finish();
    test_finish_now();
    test_prune_in_flight();
    test_prune_force();
    test_token_budget();
    test_iteration_limit();
    test_few_expandable();
    test_failed_roles();
    test_no_mcts();
    test_sequential_same();
    test_worker_steps();
    return done_testing();
}
