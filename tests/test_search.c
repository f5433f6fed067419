/* Tests of Algorithm 1 with a scripted policy: tree invariants, Finish,
 * pruning and forcing, determinism by seed, loop protection, grounded
 * answers, failed role calls, the token budget and the ablations. */
#include "tap.h"
#include "search_harness.h"
#include "search.h"
#include "transcript.h"

#include <math.h>

static int run_all(struct search *s)
{
    int n = 0;
    while (search_step(s)) n++;
    return n;
}

/* a full run: invariants */
static void test_full_run(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;

    toy_init(&t);
    search_config_defaults(&c);
    c.on_event = count_event;
    struct search *s = run(&t, &c, "how does routing work?");
    is_int(run_all(s), 15, "15 iterations by default");
    tr = search_tree(s);
    is_int(search_stop_reason(s), SEARCH_STOP_ITERATIONS, "stopped by the iteration limit");
    is_str(tr->stop_reason, "iterations", "the tree records why");
    is_int(tr->iterations, 15, "the tree counts iterations");
    is_int(mcts_node(tr, 0)->visits, 15, "root visits = iterations done");
    is_int(tr->n, 16, "one node per iteration");
    is_int(check_invariants(tr), -1, "visits = 1 + children's, W = V + children's W, <= 3 children");
    int iters_ok = 1, qmean = 1;
    for (int i = 1; i < tr->n; i++) {
        const struct mcts_node *n = mcts_node(tr, i);
        iters_ok &= n->iteration == i && n->status == MCTS_DONE;
        if (n->nchildren == 0) qmean &= fabs(mcts_q(n) - n->value) < 1e-9;
    }
    ok(iters_ok, "node i was made in iteration i and is done");
    ok(qmean, "a leaf's Q is its evaluation value (the single-step simulation sets Q)");
    is_int(t.calls_perceive, 15, "perceive once per iteration");
    is_int(t.calls_plan, 15, "plan once per iteration");
    is_int(t.calls_exec, 15, "execute once per iteration");
    is_int(t.calls_curate, 15, "curate once per iteration");
    is_int(t.calls_eval, 15, "evaluate once per iteration");
    is_str(mcts_node(tr, 3)->obs_text, "FindFunction {\"function_name\":\"f3\"}: 1 span(s)",
           "the curated rendering is kept (the curator is given the action with its arguments)");
    is_str(mcts_node(tr, 3)->report, "node 3 under 2 with 0 siblings", "the report is kept");
    is_int(events[SEARCH_EV_NODE_ADDED], 15, "one node-added event per iteration");
    is_int(events[SEARCH_EV_EVIDENCE], 15, "one evidence event per iteration");
    is_int(events[SEARCH_EV_STOPPED], 1, "one stopped event");
    int depth_sum = 0;
    for (int i = 1; i < tr->n; i++) depth_sum += mcts_node(tr, i)->depth;
    is_int(events[SEARCH_EV_NODE_UPDATED], depth_sum + 15, "an update for every node on each backed-up path");
    int recorded = 1;
    for (int i = 1; i < tr->n; i++) {
        const struct mcts_node *n = mcts_node(tr, i);
        for (int k = 0; k < n->nuct; k++) recorded &= n->uct[k].iteration > n->iteration;
    }
    ok(recorded, "UCT marks come from selections after the node existed");
    is_int(search_step(s), 0, "a finished search does not step");
    search_free(s);
}

/* Finish stops the search; the answer comes from it */
static void test_finish(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;

    toy_init(&t);
    t.finish_at = 3;
    search_config_defaults(&c);
    c.finish_min_value = 0;   /* the toy values node 3 at 21: every Finish stops here */
    s = run(&t, &c, "q");
    is_int(run_all(s), 3, "Finish at node 3 stops after 3 iterations");
    tr = search_tree(s);
    is_int(search_stop_reason(s), SEARCH_STOP_FINISH, "stop reason: finish");
    is_int(mcts_node(tr, 3)->status, MCTS_FINISHED, "the Finish node is finished");
    ok(mcts_node(tr, 3)->has_value && mcts_node(tr, 3)->visits == 1, "the Finish node was evaluated and backed up");
    is_int(t.calls_exec, 2, "Finish is not executed against the index");
    struct search_answer *a = search_answer(s);
    ok(a->from_finished && a->finish_node == 3 && a->path[a->npath - 1] == 3,
       "the answer comes from the finished trajectory");
    is_int(a->path[0], 0, "the trajectory starts at the root");
    is_int(a->cites.n, 1, "one citation");
    ok(a->cites.n && !a->fallback_cite && a->dropped == 0, "the policy's citation was verified");
    search_answer_free(a);

    /* Forcing reopens a search that stopped on Finish */
    char err[256];
    is_int(search_force(s, 3, err, sizeof err), -1, "a finished node cannot be expanded");
    is_int(search_force(s, 1, err, sizeof err), 0, "force node 1 after Finish");
    ok(!search_done(s), "the search is running again");
    is_int(search_step(s), 1, "and steps");
    is_int(mcts_node(search_tree(s), 4)->parent, 1, "the forced node got the child");
    ok(mcts_node(search_tree(s), 4)->forced, "marked forced");
    search_free(s);
}

/* pruning and forcing mid-search */
static void test_prune_force(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    char err[256];

    toy_init(&t);
    search_config_defaults(&c);
    c.iterations = 12;
    s = run(&t, &c, "q");
    for (int i = 0; i < 3; i++) search_step(s);
    tr = search_tree(s);
    /* toy values: node1 48, node2 85, node3 21. Iteration 2: UCT(1) = 48 ties
       UCT_new(root) = 48 and ties widen. Iteration 3: UCT(2) = 85 + 50 sqrt(ln 2)
       = 126.6 beats UCT_new(root) = 66.5 + 41.6 = 108.1: descend into node 2. */
    ok(mcts_node(tr, 1)->parent == 0 && mcts_node(tr, 2)->parent == 0, "iteration 2 widens the root on a tie");
    is_int(mcts_node(tr, 3)->parent, 2, "iteration 3 descends into the higher-UCT child");
    const struct mcts_node *r0 = mcts_node(tr, 0);
    ok(r0->nuct == 2 && fabs(r0->uct[1].score - (66.5 + 50 * sqrt(log(2.0)))) < 1e-9,
       "the root's UCT_new in iteration 3 is as documented: %g", r0->nuct == 2 ? r0->uct[1].score : -1);
    ok(fabs(mcts_node(tr, 2)->last_uct - (85 + 50 * sqrt(log(2.0)))) < 1e-9, "and node 2's UCT");
    int marks_before = mcts_node(tr, 2)->nuct;
    is_int(search_prune(s, 2, err, sizeof err), 0, "prune the best child");
    is_int(mcts_node(tr, 3)->status, MCTS_PRUNED, "its subtree is pruned with it");
    is_int(search_force(s, 1, err, sizeof err), 0, "force the other child");
    search_step(s);
    is_int(mcts_node(tr, 4)->parent, 1, "forced expansion is honoured");
    run_all(s);
    int under_pruned = 0;
    for (int i = 4; i < tr->n; i++) under_pruned += mcts_node(tr, i)->parent == 2 || mcts_node(tr, i)->parent == 3;
    is_int(under_pruned, 0, "nothing was expanded under the pruned subtree");
    is_int(mcts_node(tr, 2)->nuct, marks_before, "and it was never scored after the prune");
    is_int(check_invariants(tr), -1, "invariants hold with pruning and forcing");
    is_int(search_prune(s, 0, err, sizeof err), -1, "the root cannot be pruned");
    search_free(s);
}

/* determinism by seed */
static void test_seed(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    struct search_answer *a;

    char *runs[3];
    unsigned long long seeds[3] = {7, 7, 8};
    for (int r = 0; r < 3; r++) {
        toy_init(&t);
        t.flat_values = 1;   /* all ties: the seed decides */
        search_config_defaults(&c);
        c.seed = seeds[r];
        c.clock_ms = toy_clock;
        toy_clock_now = 0;
        s = run(&t, &c, "q");
        run_all(s);
        a = search_answer(s);
        runs[r] = transcript_json(search_tree(s), NULL, a);
        search_answer_free(a);
        search_free(s);
    }
    ok(strcmp(runs[0], runs[1]) == 0, "the same seed gives byte-identical transcripts");
    ok(strcmp(runs[0], runs[2]) != 0, "another seed gives another tree");
    for (int r = 0; r < 3; r++) free(runs[r]);
}

/* loop protection: siblings */
static void test_loop_siblings(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;

    toy_init(&t);
    t.dup = TOY_DUP_SIBLING;
    search_config_defaults(&c);
    c.iterations = 3;
    s = run(&t, &c, "q");
    run_all(s);
    tr = search_tree(s);
    ok(!mcts_node(tr, 1)->duplicate && mcts_node(tr, 1)->status == MCTS_DONE, "the first child runs its action");
    ok(mcts_node(tr, 2)->exhausted && !mcts_node(tr, 2)->action && !mcts_node(tr, 2)->duplicate,
       "the second would repeat it (other case and spacing): it takes no action, and is no duplicate");
    is_int(mcts_node(tr, 2)->status, MCTS_PRUNED, "it is recorded pruned, not failed");
    ok(str_starts(mcts_node(tr, 2)->feedback, "Not run: every action proposed here repeated"), "and says why");
    ok(mcts_node(tr, 0)->closed && mcts_node(tr, 0)->notes && strstr(mcts_node(tr, 0)->notes, "no distinct action left"),
       "its parent takes no more children and its notes say so");
    is_int(t.calls_plan, 1 + 3 + 1, "the repeat was planned 1 + max_replans times");
    is_int(t.calls_exec, 2, "a repeated action is never executed");
    ok(mcts_node(tr, 3)->status == MCTS_DONE && mcts_node(tr, 3)->parent == 1,
       "the same name under another parent runs");
    ok(!mcts_node(tr, 2)->has_value && mcts_node(tr, 2)->visits == 0, "nothing is backed up for it");
    ok(str_starts(t.refused_report, "node 2 under 0 with 1 siblings\n[engine] Refused FindFunction {\"function_name\":\"HELPER_0\"}: it repeats the action of node 1"), "the re-plan report says what was refused");
    ok(!mcts_expandable(tr, 0) && !mcts_expandable(tr, 2), "neither it nor its closed parent is expanded");
    is_int(check_invariants(tr), -1, "invariants hold with a closed node");
    search_free(s);
}

/* a policy that changes its mind after one refusal */
static void test_loop_replan(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;

    toy_init(&t);
    t.dup = TOY_DUP_ONCE;
    search_config_defaults(&c);
    c.iterations = 2;
    s = run(&t, &c, "q");
    run_all(s);
    tr = search_tree(s);
    ok(!mcts_node(tr, 2)->duplicate, "a re-planned action is used when it is new");
    is_int(t.calls_plan, 3, "after one extra plan call");
    search_free(s);
}

/* loop protection: ancestors */
static void test_loop_ancestors(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;

    toy_init(&t);
    t.dup = TOY_DUP_ANCESTOR;
    search_config_defaults(&c);
    c.iterations = 6;
    c.no_mcts = 1;
    s = run(&t, &c, "q");
    run_all(s);
    tr = search_tree(s);
    ok(mcts_node(tr, 2)->exhausted && mcts_node(tr, 2)->parent == 1, "repeating the parent's action is not run");
    ok(mcts_node(tr, 1)->closed, "and node 1 takes no more children");
    is_int(mcts_node(tr, 3)->parent, 0, "so the greedy path goes on from its nearest expandable ancestor");
    ok(mcts_node(tr, 3)->status == MCTS_DONE && mcts_node(tr, 4)->exhausted && mcts_node(tr, 4)->parent == 3,
       "and is cut again below");
    int any_dup = 0;
    for (int i = 1; i < tr->n; i++) any_dup |= mcts_node(tr, i)->duplicate;
    ok(!any_dup, "no node is a duplicate");
    is_int(check_invariants(tr), -1, "invariants hold");
    search_free(s);
}

/* answers carry a citation that was seen */
static void test_citations_seen(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    struct search_answer *a;

    enum toy_cite modes[3] = {TOY_CITE_BOGUS, TOY_CITE_NONE, TOY_CITE_PARTIAL};
    for (int m = 0; m < 3; m++) {
        toy_init(&t);
        t.cite = modes[m];
        t.finish_at = 3;
        search_config_defaults(&c);
        s = run(&t, &c, "q");
        run_all(s);
        a = search_answer(s);
        tr = search_tree(s);
        int seen = a->cites.n > 0;
        for (size_t i = 0; i < a->cites.n; i++) {
            int covered = 0;
            for (size_t k = 0; k < a->npath; k++)
                covered |= evidence_covers(&mcts_node(tr, a->path[k])->obs, a->cites.v[i].path,
                                           a->cites.v[i].start_line, a->cites.v[i].end_line);
            seen &= covered;
        }
        ok(seen, "cite mode %d: every citation lies in evidence on the trajectory", m);
        if (m == 0) {
            is_int(a->dropped, 1, "an invented citation is dropped");
            ok(a->fallback_cite, "and the trajectory's best span is cited instead");
            is_str(a->cites.v[0].path, "pkg/f2.py", "the best-scored span on the trajectory");
        } else if (m == 1) {
            ok(a->fallback_cite && a->dropped == 0, "no citation from the policy: the best span is cited");
        } else {
            is_int(a->cites.n, 1, "a sub-range is kept, an overrunning range dropped");
            is_int(a->dropped, 1, "the overrunning one counts as dropped");
            is_str(a->cites.v[0].text, "    y = 1", "a sub-range cites exactly its lines");
        }
        search_answer_free(a);
        search_free(s);
    }
    /* an outline verifies a citation of exactly its lines, not of lines
     * inside it, whose bodies it left out */
    for (int m = 0; m < 2; m++) {
        toy_init(&t);
        t.cite = m ? TOY_CITE_GOOD : TOY_CITE_PARTIAL;
        t.finish_at = 3;
        search_config_defaults(&c);
        s = run(&t, &c, "q");
        run_all(s);
        struct mcts_tree *mt = (struct mcts_tree *)search_tree(s);   /* the test marks every span an outline */
        for (int id = 1; id < mt->n; id++)
            for (size_t k = 0; k < mt->nodes[id].obs.n; k++) mt->nodes[id].obs.v[k].elided = 1;
        a = search_answer(s);
        if (m) {
            ok(a->cites.n == 1 && !a->fallback_cite && a->dropped == 0 && a->cites.v[0].elided,
               "an outline verifies a citation of exactly its lines");
        } else {
            is_int(a->dropped, 2, "an outline verifies neither a line inside it nor a range past it");
            ok(a->fallback_cite, "so the trajectory's best span is cited instead");
        }
        search_answer_free(a);
        search_free(s);
    }
}

/* lines the answer read itself, outside the tree (policy_answer.read),
 * verify a citation as a node's evidence does, and only within them; an
 * outline it read, exactly its lines */
static void test_citations_read(void)
{
    struct toy t;
    struct search_config c;
    for (int outline = 0; outline < 2; outline++) {
        toy_init(&t);
        t.cite = outline ? TOY_CITE_READ_OUTLINE : TOY_CITE_READ;
        t.finish_at = 3;
        search_config_defaults(&c);
        struct search *s = run(&t, &c, "q");
        run_all(s);
        struct search_answer *a = search_answer(s);
        if (!outline) {
            ok(a->cites.n == 1 && !a->fallback_cite && !strcmp(a->cites.v[0].path, "flat/window.py"),
               "a citation of lines the answer read is kept");
            is_str(a->cites.n ? a->cites.v[0].text : "", "b = 2\nc = 3", "with the text of exactly its lines");
            is_int(a->dropped, 1, "lines past what it read are dropped");
        } else {
            /* a class chunk read as its outline: not the lines inside it,
             * whose bodies it left out */
            ok(a->cites.n == 1 && !a->fallback_cite && a->cites.v[0].elided && a->cites.v[0].start_line == 10 &&
                   a->cites.v[0].end_line == 40,
               "an outline the answer read verifies a citation of exactly its lines");
            is_int(a->dropped, 1, "and not a citation of lines inside it");
        }
        search_answer_free(a);
        search_free(s);
    }
}

/* a citation's label names its own lines: the policy's label when it gave
 * one, else what the reading that verifies it says of them; a window's
 * range ("lines 1-40") is never passed on to other lines */
static void test_citation_labels(void)
{
    struct toy t;
    struct search_config c;
    toy_init(&t);
    t.cite = TOY_CITE_READ_NAMED;
    t.finish_at = 3;
    search_config_defaults(&c);
    struct search *s = run(&t, &c, "q");
    run_all(s);
    struct search_answer *a = search_answer(s);
    is_int(a->cites.n, 2, "both parts of the window are cited");
    is_str(a->cites.n > 0 ? a->cites.v[0].label : NULL, "Chunk.run", "the policy's label is kept");
    is_str(a->cites.n > 1 ? a->cites.v[1].label : NULL, "lines 21-30",
           "a part of a window is labelled with its own lines, not the window's");
    search_answer_free(a);
    search_free(s);

    struct evidence ev = EVIDENCE_INIT;
    evidence_add(&ev, "m.py", 5, 90, NULL, "module lines 5-90", 1);
    evidence_add(&ev, "m.py", 5, 90, NULL, "def f(x)", 1);
    evidence_add(&ev, "m.py", 5, 90, NULL, "in class View", 1);
    evidence_add(&ev, "m.py", 5, 90, NULL, "lines 5-90 of a list", 1);
    evidence_add(&ev, "m.py", 5, 90, NULL, NULL, 1);
    const char *want[] = {"module lines 6-7", "def f(x)", "in class View", "lines 5-90 of a list", NULL};
    for (size_t i = 0; i < ev.n; i++) {
        char *l = evidence_label_within(&ev.v[i], 6, 7), *same = evidence_label_within(&ev.v[i], 5, 90);
        if (want[i]) {
            is_str(l, want[i], "label of lines 6-7 within '%s'", ev.v[i].label);
            is_str(same, ev.v[i].label, "the same lines keep their label '%s'", ev.v[i].label);
        } else {
            ok(!l && !same, "no label within a span that has none");
        }
        free(l);
        free(same);
    }
    evidence_free(&ev);
}

/* a Finish with no code read on its path is refused and re-planned */
static void test_finish_unread(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    struct search_answer *a;

    /* --- a Finish with no code read on its path is refused and re-planned --- */
    toy_init(&t);
    t.finish_at = 1;   /* the first step plans Finish, before anything was read */
    search_config_defaults(&c);
    c.iterations = 4;
    s = run(&t, &c, "q");
    run_all(s);
    tr = search_tree(s);
    is_int(t.calls_plan >= c.max_replans + 1 ? 1 : 0, 1, "the planner was asked again after the refusal");
    ok(strstr(t.refused_report, "Refused Finish: no code has been read on this path") != NULL,
       "the re-plan is told why the Finish was refused");
    ok(mcts_node(tr, 1)->refused && mcts_node(tr, 1)->status == MCTS_DONE,
       "a Finish planned again after every re-plan is recorded as refused");
    ok(!mcts_node(tr, 1)->has_value || mcts_node(tr, 1)->value == 0, "a refused Finish is worth nothing");
    ok(!mcts_expandable(tr, 1), "and is never expanded");
    is_int(t.calls_exec, tr->n - 2, "it was not run; every other step was");
    ok(search_stop_reason(s) != SEARCH_STOP_FINISH, "a refused Finish does not end the search");
    a = search_answer(s);
    ok(a->finish_node != 1 && a->cites.n >= 1, "the answer comes from evidenced nodes and cites them");
    search_answer_free(a);
    search_free(s);
}

/* a Finish valued below the threshold does not stop the search */
static void test_finish_low_value(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;

    toy_init(&t);
    t.finish_at = 3;   /* valued 21 by the toy, with code on its path (node 1 or 2) */
    search_config_defaults(&c);
    c.iterations = 6;
    s = run(&t, &c, "q");
    is_int(run_all(s), 6, "a Finish valued 21 (threshold 50) leaves the search running to its iterations");
    tr = search_tree(s);
    is_int(mcts_node(tr, 3)->status, MCTS_FINISHED, "the low Finish stays a finished candidate");
    is_int(search_stop_reason(s), SEARCH_STOP_ITERATIONS, "stop reason: iterations");
    search_free(s);
    {
        int found = 0;
        for (int at = 2; at <= 10 && !found; at++) {
            toy_init(&t);
            t.finish_at = at;
            t.use_forced_value = 1;
            t.forced_value = 50;
            search_config_defaults(&c);
            c.iterations = 12;
            s = run(&t, &c, "q");
            int ran = run_all(s);
            tr = search_tree(s);
            if (at < tr->n && mcts_node(tr, at)->status == MCTS_FINISHED) {
                found = 1;
                is_int(ran, at, "a Finish valued at the threshold (50) stops the search (node %d)", at);
                is_int(search_stop_reason(s), SEARCH_STOP_FINISH, "stop reason: finish");
            }
            search_free(s);
        }
        ok(found, "a Finish with code on its path was found");
    }
}

/* a transient failure is not backed up; a persistent one stops the search */
static void test_failures(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    struct search_answer *a;

    toy_init(&t);
    t.fail_plan_at = 2;
    t.fail_kind = POLICY_FAIL_TRANSIENT;
    search_config_defaults(&c);
    c.iterations = 6;
    s = run(&t, &c, "q");
    is_int(run_all(s), 6, "a transient plan failure: the search goes on");
    tr = search_tree(s);
    ok(mcts_node(tr, 2)->status == MCTS_ERROR && mcts_node(tr, 2)->transient, "node 2 failed, transient");
    ok(mcts_node(tr, 2)->visits == 0 && !mcts_node(tr, 2)->has_value,
       "a transient failure gets no value and no visit (it says nothing of the evidence)");
    {
        int sum = 0;
        for (int k = 0; k < mcts_node(tr, 0)->nchildren; k++) sum += mcts_node(tr, mcts_node(tr, 0)->children[k])->visits;
        is_int(mcts_node(tr, 0)->visits, sum, "the root's visits count only backed-up children");
    }
    search_free(s);
    toy_init(&t);
    t.fail_eval_at = 2;
    t.fail_kind = POLICY_FAIL_PERSISTENT;
    search_config_defaults(&c);
    c.iterations = 6;
    s = run(&t, &c, "q");
    is_int(run_all(s), 2, "a persistent evaluation failure at node 2 stops the search");
    is_int(search_stop_reason(s), SEARCH_STOP_ERROR, "stop reason: error");
    is_str(search_stop_message(s), "evaluate: toy evaluate failure at 2", "the stop names the cause");
    a = search_answer(s);
    ok(!a->failure && a->markdown && strstr(a->markdown, "The search stopped early on an error") &&
           strstr(a->markdown, "toy evaluate failure at 2"),
       "the answer from the steps before says why the search stopped");
    search_answer_free(a);
    char ferr[200];
    is_int(search_force(s, 1, ferr, sizeof ferr), -1, "a search stopped on an error cannot be resumed");
    search_free(s);
    toy_init(&t);
    t.fail_plan_at = 1;
    t.fail_kind = POLICY_FAIL_PERSISTENT;
    search_config_defaults(&c);
    s = run(&t, &c, "q");
    is_int(run_all(s), 1, "a persistent failure on the first step stops at once");
    a = search_answer(s);
    ok(a->failure && str_starts(a->failure, "every step of the search failed"), "and the answer is a failure: %s",
       a->failure ? a->failure : "(none)");
    search_answer_free(a);
    search_free(s);
}

/* failed role calls are recorded and the search goes on */
static void test_failed_roles(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    struct search_answer *a;

    const char *roles[] = {"perceive", "plan", "execute", "curate", "evaluate"};
    for (int r = 0; r < 5; r++) {
        toy_init(&t);
        if (r == 0) t.fail_perceive_at = 2;
        if (r == 1) t.fail_plan_at = 2;
        if (r == 2) t.fail_exec_at = 2;
        if (r == 3) t.fail_curate_at = 2;
        if (r == 4) t.fail_eval_at = 2;
        search_config_defaults(&c);
        c.iterations = 8;
        s = run(&t, &c, "q");
        is_int(run_all(s), 8, "%s failure: all 8 iterations still run", roles[r]);
        tr = search_tree(s);
        const struct mcts_node *n = mcts_node(tr, 2);
        ok(n->status == MCTS_ERROR && n->error && str_starts(n->error, roles[r]),
           "node 2 is an error naming the role: %s", n->error ? n->error : "(none)");
        ok(n->visits == 1 && n->value == 0 && n->nchildren == 0, "backed up once with value 0, never expanded");
        is_int(check_invariants(tr), -1, "invariants hold with an error node");
        if (r == 0) {
            /* one failed step among the rest: the answer says so, and it is still an answer */
            a = search_answer(s);
            int total = 0;
            for (int id = 1; id < tr->n; id++)
                total += tr->nodes[id].status == MCTS_ERROR || tr->nodes[id].status == MCTS_DONE ||
                         tr->nodes[id].status == MCTS_FINISHED;
            char *want = xasprintf("_1 of %d search steps failed and were left out; the first: %s_\n", total, n->error);
            ok(a->markdown && str_ends(a->markdown, want), "the answer ends with the failed step: %s", want);
            ok(!a->failure, "one failed step is not a failed search");
            free(want);
            search_answer_free(a);
        }
        search_free(s);
    }
    /* every step failed: not an answer, a failure naming the first reason */
    toy_init(&t);
    t.fail_eval_all = 1;
    t.fail_perceive_at = 1;
    search_config_defaults(&c);
    c.iterations = 1;
    s = run(&t, &c, "q");
    run_all(s);
    a = search_answer(s);
    is_str(a->failure, "every step of the search failed (1 of 1); the first: perceive: toy perceive failure at 1",
           "a search whose every step failed says so");
    search_answer_free(a);
    search_free(s);
    toy_init(&t);
    t.fail_answer = 1;
    t.finish_at = 3;
    search_config_defaults(&c);
    s = run(&t, &c, "q");
    run_all(s);
    a = search_answer(s);
    is_str(a->error, "answer: toy answer failure", "a failed answer call is reported");
    ok(a->markdown && str_starts(a->markdown, "toy finish answer\n\n_Evidence: the answer cites no code the search read;"),
       "the Finish action's answer stands in, its listed span said not to be its citation: %s",
       a->markdown ? a->markdown : "");
    ok(a->cites.n == 1 && a->fallback_cite, "still with a seen citation");
    search_answer_free(a);
    search_free(s);

    /* nothing left to expand */
    toy_init(&t);
    t.fail_eval_all = 1;
    search_config_defaults(&c);
    c.max_expand = 1;
    s = run(&t, &c, "q");
    is_int(run_all(s), 1, "with one child allowed and it failing, one iteration runs");
    is_int(search_stop_reason(s), SEARCH_STOP_EXHAUSTED, "then the search is exhausted");
    a = search_answer(s);
    ok(!a->from_finished && a->npath == 1, "the answer falls back to the root alone");
    ok(strstr(a->markdown, "No code evidence") != NULL, "and says nothing could be cited");
    search_answer_free(a);
    search_free(s);
}

/* token budget */
static void test_token_budget(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    struct search_answer *a;
    char err[256];

    toy_init(&t);
    t.tokens_per_call = 100;   /* 150 per call: perceive, plan, curate, evaluate = 600 per iteration */
    search_config_defaults(&c);
    c.budget_tokens = 2000;
    s = run(&t, &c, "q");
    is_int(run_all(s), 4, "a 2000-token budget at 600 per iteration stops after 4");
    tr = search_tree(s);
    is_int(search_stop_reason(s), SEARCH_STOP_BUDGET, "stop reason: budget");
    is_int(tr->tokens_in + tr->tokens_out, 2400, "tokens are accounted exactly");
    is_int(mcts_node(tr, 1)->tokens_in, 400, "and per node");
    is_int(search_force(s, 1, err, sizeof err), -1, "no forcing once the budget is spent");
    a = search_answer(s);
    is_int(tr->tokens_in, 1700, "the answer call is accounted too");
    search_answer_free(a);
    search_free(s);
}

/* ablations */
static void test_ablations(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;

    toy_init(&t);
    search_config_defaults(&c);
    c.no_mcts = 1;
    c.iterations = 6;
    s = run(&t, &c, "q");
    run_all(s);
    tr = search_tree(s);
    int chain = 1;
    for (int i = 1; i < tr->n; i++) chain &= mcts_node(tr, i)->parent == i - 1;
    ok(chain, "no-mcts: a single greedy trajectory (each node the child of the last)");
    is_int(check_invariants(tr), -1, "no-mcts: invariants hold");
    search_free(s);

    toy_init(&t);
    search_config_defaults(&c);
    c.no_perception = 1;
    c.iterations = 4;
    s = run(&t, &c, "q");
    run_all(s);
    is_int(t.calls_perceive, 0, "no-perception: perceive is never called");
    is_str(mcts_node(search_tree(s), 2)->report, "", "no-perception: the report is empty");
    search_free(s);

    toy_init(&t);
    t.rollout_value = 33;
    search_config_defaults(&c);
    c.no_evaluation = 1;
    c.iterations = 4;
    s = run(&t, &c, "q");
    run_all(s);
    is_int(t.calls_eval, 0, "no-evaluation: evaluate is never called");
    is_int(t.calls_rollout, 4, "no-evaluation: the rollout gives the values");
    ok(mcts_node(search_tree(s), 3)->value == 33, "with its value");
    search_free(s);

    toy_init(&t);
    search_config_defaults(&c);
    c.no_evaluation = 1;
    c.iterations = 4;
    s = run(&t, &c, "q");
    run_all(s);
    ok(mcts_node(search_tree(s), 2)->value == MCTS_NEUTRAL_VALUE, "no-evaluation without a rollout: the neutral 50");
    search_free(s);
}

/* values out of range, not a number; no answer function */
static void test_values_and_no_answer(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    struct search_answer *a;

    toy_init(&t);
    t.use_forced_value = 1;
    t.forced_value = 250;
    search_config_defaults(&c);
    c.iterations = 2;
    s = run(&t, &c, "q");
    run_all(s);
    ok(mcts_node(search_tree(s), 1)->value == 100, "a value above 100 is clamped to 100");
    search_free(s);
    t.forced_value = NAN;
    s = run(&t, &c, "q");
    run_all(s);
    ok(mcts_node(search_tree(s), 1)->status == MCTS_ERROR &&
       strstr(mcts_node(search_tree(s), 1)->error, "not a number"), "a NaN value is an evaluation error");
    search_free(s);

    toy_init(&t);
    search_config_defaults(&c);
    c.iterations = 2;
    {
        struct policy p = toy_policy(&t);
        p.answer = NULL;
        struct policy_executor ex = toy_executor(&t);
        s = search_new(&c, &p, &ex, NULL, "q");
    }
    run_all(s);
    is_str(mcts_node(search_tree(s), 2)->obs_text, "pkg/f2.py:10-12  def f2()\ndef x():\n    y = 1\n    return y\n",
           "without a curator the raw spans are the observation, rendered by the engine");
    a = search_answer(s);
    ok(str_starts(a->markdown, "No synthesised answer is available.") &&
       strstr(a->markdown, "- `pkg/f2.py:10-12` def f2()"), "without an answer function the evidence is listed");
    ok(a->fallback_cite && a->cites.n == 1 && strcmp(a->cites.v[0].path, "pkg/f2.py") == 0, "and its best span cited");
    search_answer_free(a);
    search_free(s);
}

/* finish now */
static void test_finish_now(void)
{
    struct toy t;
    struct search_config c;
    struct search *s;
    struct search_answer *a;

    toy_init(&t);
    search_config_defaults(&c);
    s = run(&t, &c, "q");
    search_step(s);
    search_step(s);
    search_finish_now(s);
    ok(search_done(s) && search_stop_reason(s) == SEARCH_STOP_USER, "finish now stops the search");
    is_int(search_step(s), 0, "no more steps");
    a = search_answer(s);
    ok(!a->from_finished && a->finish_node == -1, "no node finished: the answer says so");
    is_int(a->path[a->npath - 1], 2, "and uses the highest-Q path (node 2, value 85 > node 1, 48)");
    search_answer_free(a);
    search_free(s);
}

/* Citations verified against the trajectory, or against the whole tree
 * when the policy answers from it (the offline policy): then every span
 * an executed node saw stands, and a pruned subtree's spans do not. */
static void test_citations_verified(void)
{
    struct toy t;
    struct search_config c;
    const struct mcts_tree *tr;
    struct search *s;
    struct search_answer *a;
    char err[256] = "";

    for (int from_tree = 0; from_tree < 2; from_tree++) {
        toy_init(&t);
        t.cite = TOY_CITE_TREE;
        t.answer_from_tree = from_tree;
        search_config_defaults(&c);
        c.iterations = 8;
        s = run(&t, &c, "q");
        for (int i = 0; i < 4; i++) search_step(s);
        tr = search_tree(s);
        is_int(search_prune(s, 1, err, sizeof err), 0, "prune node 1 %s", err);
        run_all(s);
        a = search_answer(s);
        int executed = 0, pruned = 0, cited_pruned = 0, off_path = 0;
        for (int id = 1; id < tr->n; id++) {
            const struct mcts_node *m = mcts_node(tr, id);
            if (!m->obs.n) continue;
            if (m->status == MCTS_PRUNED) pruned++;
            else if (m->status == MCTS_DONE || m->status == MCTS_FINISHED) executed++;
        }
        for (size_t i = 0; i < a->cites.n; i++) {
            int on_path = 0, in_pruned = 0;
            for (int id = 1; id < tr->n; id++) {
                const struct mcts_node *m = mcts_node(tr, id);
                if (!m->obs.n || strcmp(m->obs.v[0].path, a->cites.v[i].path)) continue;
                in_pruned |= m->status == MCTS_PRUNED;
                for (size_t k = 0; k < a->npath; k++) on_path |= a->path[k] == id;
            }
            cited_pruned += in_pruned;
            off_path += !on_path;
        }
        ok(pruned > 0 && executed > (int)a->npath, "from_tree %d: a pruned subtree and branches off the path", from_tree);
        is_int(cited_pruned, 0, "from_tree %d: nothing of the pruned subtree is cited", from_tree);
        if (from_tree) {
            is_int((int)a->cites.n, executed, "from the tree: every executed node's span is cited");
            ok(off_path > 0, "spans off the trajectory among them");
            is_int(a->dropped, pruned, "only the pruned subtree's spans are dropped");
        } else {
            is_int(off_path, 0, "from the trajectory: only its spans are cited");
            ok(a->dropped > 0 && a->cites.n < (size_t)executed, "the rest is dropped");
        }
        search_answer_free(a);
        search_free(s);
    }
}

int main(void)
{
    test_full_run();
    test_finish();
    test_prune_force();
    test_seed();
    test_loop_siblings();
    test_loop_replan();
    test_loop_ancestors();
    test_citations_seen();
    test_citations_read();
    test_citation_labels();
    test_finish_unread();
    test_finish_low_value();
    test_failures();
    test_failed_roles();
    test_token_budget();
    test_ablations();
    test_values_and_no_answer();
    test_finish_now();
    test_citations_verified();
    return done_testing();
}
