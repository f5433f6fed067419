/* Unit tests for the tree alone: UCT as documented in mcts.h, expansion
 * limits, back-propagation, virtual loss, pruning, forcing, action keys,
 * deep copies, the seeded RNG. */
#include "tap.h"
#include "mcts.h"
#include "rng.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

/* A done child of parent with value v, backed up. */
static int child(struct mcts_tree *t, int parent, double v)
{
    int id = mcts_add_child(t, parent);
    if (id < 0) return id;
    struct mcts_node *n = mcts_node_mut(t, id);
    n->status = MCTS_DONE;
    n->has_value = 1;
    n->value = v;
    mcts_backprop(t, id, v);
    return id;
}

int main(void)
{
    /* RNG */
    struct rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    int same = 1;
    for (int i = 0; i < 100; i++) same &= rng_next(&a) == rng_next(&b);
    ok(same, "the same seed gives the same sequence");
    rng_seed(&b, 43);
    ok(rng_next(&a) != rng_next(&b), "another seed gives another sequence");
    int in_range = 1, seen[3] = {0, 0, 0};
    for (int i = 0; i < 300; i++) {
        uint32_t x = rng_below(&a, 3);
        in_range &= x < 3;
        if (x < 3) seen[x]++;
    }
    ok(in_range && seen[0] && seen[1] && seen[2], "rng_below stays in range and reaches every value");
    rng_seed(&a, 0);
    is_int(rng_next(&a), 0xe220a8397b1dcdafULL, "splitmix64 from seed 0 gives its published first output");

    /* defaults */
    struct mcts_tree *t = mcts_new("q", 0, -1, 7);
    ok(near(t->c, 50.0), "default exploration constant is 50");
    is_int(t->max_expand, 3, "default max_expand is 3");
    is_int(t->n, 1, "a new tree is just the root");
    is_int(mcts_node(t, 0)->parent, -1, "the root has no parent");
    ok(mcts_node(t, 1) == NULL, "no node 1 yet");
    is_int(mcts_select(t, 1, NULL), 0, "the first selection is the root");

    /* back-propagation, the paper's running mean (node5 60 -> 70 after a child of 80) */
    int n1 = child(t, 0, 60);
    int n2 = child(t, 0, 40);
    is_int(n1, 1, "ids are dense: 1");
    is_int(n2, 2, "ids are dense: 2");
    is_int(mcts_node(t, 0)->visits, 2, "root visits = values backed up");
    ok(near(mcts_q(mcts_node(t, 0)), 50), "root Q is the mean of the backed-up values");
    int n3 = child(t, n1, 80);
    ok(near(mcts_q(mcts_node(t, n1)), 70), "a node at 60 with a child of 80 goes to 70");
    is_int(mcts_node(t, n1)->visits, 2, "its visits go to 2");
    is_int(mcts_node(t, n3)->depth, 2, "depth follows the parent");

    /* UCT exactly as documented: Q(c) + C sqrt(ln N(s) / N(c)) */
    double ln3 = log(3.0);
    ok(near(mcts_uct(t, n1), 70 + 50 * sqrt(ln3 / 2)), "UCT of node 1 = 70 + 50 sqrt(ln 3 / 2)");
    ok(near(mcts_uct(t, n2), 40 + 50 * sqrt(ln3 / 1)), "UCT of node 2 = 40 + 50 sqrt(ln 3)");
    ok(near(mcts_uct_new(t, 0), 60 + 50 * sqrt(ln3)), "UCT_new of the root = Q(root) + C sqrt(ln N)");
    /* root: UCT_new 112.4 > node1 107.1 > node2 92.4: the root widens */
    is_int(mcts_select(t, 4, NULL), 0, "an expandable node whose UCT_new beats its children is chosen");
    ok(near(mcts_node(t, n1)->last_uct, 70 + 50 * sqrt(ln3 / 2)), "the selection recorded node 1's UCT");
    const struct mcts_node *root = mcts_node(t, 0);
    ok(root->nuct == 1 && root->uct[0].as_new && root->uct[0].iteration == 4 &&
       near(root->uct[0].score, 60 + 50 * sqrt(ln3)),
       "and the root's UCT_new, marked as such, with the iteration");

    /* Fill the root: then selection must descend into the best child. */
    int n4 = child(t, 0, 10);
    is_int(n4, 4, "third child of the root");
    is_int(mcts_add_child(t, 0), -1, "a fourth child is refused (max_expand 3)");
    ok(!mcts_expandable(t, 0), "a full node is not expandable");
    /* N(root)=4: node1 70+50 sqrt(ln4/2)=111.6; node2 40+58.9; node4 10+58.9;
       node1's own UCT_new: Q 70 + 50 sqrt(ln 2) = 111.6 vs child n3 80 + 41.6 = 121.6 */
    is_int(mcts_select(t, 5, NULL), n3, "selection descends by UCT to the best open leaf");
    ok(near(mcts_node(t, n3)->last_uct, 80 + 50 * sqrt(log(2.0) / 1)), "node 3's UCT recorded");

    /* Virtual loss (for parallel expansion): an in-flight visit counts as a
       visit of value 0 in UCT, both for the node and as its parent's N. */
    mcts_node_mut(t, n2)->virtual_loss = 1;
    ok(near(mcts_uct(t, n2), 40.0 / 2 + 50 * sqrt(log(4.0) / 2)), "virtual loss lowers Q and raises N");
    mcts_node_mut(t, n2)->virtual_loss = 0;

    /* Leaves that may not be expanded */
    mcts_node_mut(t, n3)->status = MCTS_FINISHED;
    ok(!mcts_expandable(t, n3), "a finished node is not expandable");
    {
        char why[256];
        is_int(mcts_force(t, n3, why, sizeof why), -1, "a finished node cannot be forced");
        ok(strstr(why, "finished") && !strstr(why, "at most"),
           "and the message says why in its own words, not the children limit: %s", why);
    }
    is_int(mcts_select(t, 6, NULL), n1, "so node 1 widens instead");
    mcts_node_mut(t, n3)->status = MCTS_ERROR;
    ok(!mcts_expandable(t, n3), "an error node is not expandable");
    mcts_node_mut(t, n3)->status = MCTS_DONE;
    mcts_node_mut(t, n3)->duplicate = 1;
    ok(!mcts_expandable(t, n3), "a duplicate is not expandable");
    mcts_node_mut(t, n3)->duplicate = 0;

    /* Pruning */
    char err[256];
    is_int(mcts_prune(t, 0, err, sizeof err), -1, "the root cannot be pruned");
    is_int(mcts_prune(t, 99, err, sizeof err), -1, "a missing node cannot be pruned");
    ok(strstr(err, "no such node") != NULL, "and the message says so: %s", err);
    is_int(mcts_prune(t, n1, err, sizeof err), 0, "prune node 1");
    is_int(mcts_node(t, n3)->status, MCTS_PRUNED, "its subtree is pruned too");
    int never = 1;
    for (int it = 10; it < 20; it++) {
        int s = mcts_select(t, it, NULL);
        never &= s != n1 && s != n3;
    }
    ok(never, "pruned nodes are never selected");
    int marks_after = 0;
    for (int k = 0; k < mcts_node(t, n1)->nuct; k++) marks_after += mcts_node(t, n1)->uct[k].iteration >= 10;
    is_int(marks_after, 0, "nor even scored");

    /* Forcing */
    is_int(mcts_force(t, n1, err, sizeof err), -1, "a pruned node cannot be forced");
    ok(strstr(err, "pruned") != NULL, "and the message says why: %s", err);
    is_int(mcts_force(t, 0, err, sizeof err), -1, "a full node cannot be forced");
    ok(strstr(err, "at most") != NULL, "and the message names the children limit: %s", err);
    is_int(mcts_force(t, n4, err, sizeof err), 0, "force node 4");
    int forced = 0;
    is_int(mcts_select(t, 30, &forced), n4, "the forced node is selected next");
    ok(forced, "and reported as forced");
    is_int(t->forced, -1, "only once");
    mcts_free(t);

    /* Nothing left to expand */
    t = mcts_new("q", 1, 50, 1);
    int only = child(t, 0, 30);
    mcts_node_mut(t, only)->status = MCTS_ERROR;
    is_int(mcts_select(t, 2, NULL), -1, "no expandable node: selection returns -1");
    is_int(mcts_select_greedy(t, NULL), -1, "greedy too");
    mcts_free(t);

    /* Greedy selection: the last node, else its nearest expandable ancestor */
    t = mcts_new("q", 2, 50, 1);
    int g1 = child(t, 0, 50), g2 = child(t, g1, 50);
    is_int(mcts_select_greedy(t, NULL), g2, "greedy picks the last node");
    mcts_node_mut(t, g2)->status = MCTS_ERROR;
    is_int(mcts_select_greedy(t, NULL), g1, "or its nearest expandable ancestor");

    /* Ties are broken by the RNG, the same way for the same seed */
    mcts_free(t);
    int picks[2][8];
    for (int run = 0; run < 2; run++) {
        t = mcts_new("q", 3, 50, 99);
        for (int k = 0; k < 3; k++) child(t, 0, 50);
        for (int k = 0; k < 8; k++) picks[run][k] = mcts_select(t, k + 1, NULL);
        mcts_free(t);
    }
    ok(memcmp(picks[0], picks[1], sizeof picks[0]) == 0, "tie-breaks repeat with the seed");
    int varied = 0;
    for (int k = 1; k < 8; k++) varied |= picks[0][k] != picks[0][0];
    ok(varied, "and spread over the tied children: %d %d %d %d", picks[0][0], picks[0][1], picks[0][2], picks[0][3]);

    /* Action keys and duplicates */
    cJSON *x = cJSON_Parse("{\"b\":\"  Flask   App \",\"a\":null,\"c\":\"\"}");
    cJSON *y = cJSON_Parse("{\"b\":\"flask app\"}");
    cJSON *z = cJSON_Parse("{\"b\":\"flask apps\"}");
    char *kx = mcts_action_key("FindClass", x), *ky = mcts_action_key("findclass", y),
         *kz = mcts_action_key("FindClass", z);
    is_str(kx, "findclass {\"b\":\"flask app\"}", "a key is the lowercased name and canonical args");
    is_str(kx, ky, "case, spacing, null and empty members do not matter");
    ok(strcmp(kx, kz) != 0, "different values give different keys");
    cJSON *o1 = cJSON_Parse("{\"x\":1,\"y\":[\"A\",2]}"), *o2 = cJSON_Parse("{\"y\":[\"a\",2],\"x\":1.0}");
    char *k1 = mcts_action_key("V", o1), *k2 = mcts_action_key("V", o2);
    is_str(k1, k2, "member order does not matter");

    t = mcts_new("q", 3, 50, 1);
    int d1 = child(t, 0, 50), d2 = mcts_add_child(t, 0);
    mcts_node_mut(t, d1)->args_key = xstrdup(kx);
    is_int(mcts_find_duplicate(t, d2, ky), d1, "a sibling with the same key is found");
    is_int(mcts_find_duplicate(t, d2, kz), -1, "another key is not");
    mcts_node_mut(t, d2)->status = MCTS_DONE;
    int d3 = mcts_add_child(t, d1);
    is_int(mcts_find_duplicate(t, d3, ky), d1, "an ancestor with the same key is found");
    int *path = NULL;
    size_t np = mcts_path(t, d3, &path);
    ok(np == 3 && path[0] == 0 && path[1] == d1 && path[2] == d3, "path runs root first");
    free(path);
    mcts_free(t);
    free(kx), free(ky), free(kz), free(k1), free(k2);
    cJSON_Delete(x), cJSON_Delete(y), cJSON_Delete(z), cJSON_Delete(o1), cJSON_Delete(o2);

    /* Virtual loss along a path, and a copy of the tree that shares nothing */
    t = mcts_new("where is routing?", 3, 50, 9);
    int v1 = child(t, 0, 60), v2 = child(t, v1, 40);
    int v3 = mcts_add_child(t, v2);
    mcts_node_mut(t, v3)->status = MCTS_RUNNING;
    mcts_virtual_loss(t, v3, 1);
    ok(mcts_node(t, v3)->virtual_loss == 1 && mcts_node(t, v2)->virtual_loss == 1 &&
       mcts_node(t, v1)->virtual_loss == 1 && mcts_node(t, 0)->virtual_loss == 1,
       "virtual loss is added from the node up to the root");
    ok(near(mcts_q(mcts_node(t, v1)), 100.0 / 3), "and counts as a visit of value 0 in Q");
    ok(!mcts_expandable(t, v3) && mcts_node(t, v2)->nchildren == 1, "the in-flight child is not expandable but is counted");
    mcts_node_mut(t, v2)->args = cJSON_Parse("{\"function_name\":\"route\"}");
    mcts_node_mut(t, v2)->action = xstrdup("FindFunction");
    evidence_add(&mcts_node_mut(t, v2)->obs, "app/routing.py", 3, 9, "def route():\n    pass", "def route()", 1);
    mcts_mark_uct(mcts_node_mut(t, v1), 4, 0, 12.5);
    struct mcts_tree *cl = mcts_clone(t);
    ok(cl->n == t->n && strcmp(cl->question, t->question) == 0 && cl->nodes != t->nodes, "a clone has the same nodes, its own array");
    const struct mcts_node *c2 = mcts_node(cl, v2);
    ok(c2->parent == v1 && c2->nchildren == 1 && c2->children[0] == v3 && c2->children != mcts_node(t, v2)->children,
       "same links, own children arrays");
    ok(strcmp(c2->action, "FindFunction") == 0 && c2->action != mcts_node(t, v2)->action &&
       c2->args != mcts_node(t, v2)->args && cJSON_Compare(c2->args, mcts_node(t, v2)->args, 1),
       "own copies of the action and its arguments");
    ok(c2->obs.n == 1 && c2->obs.v != mcts_node(t, v2)->obs.v && strcmp(c2->obs.v[0].text, "def route():\n    pass") == 0,
       "own copy of the evidence");
    ok(mcts_node(cl, v1)->nuct == 1 && mcts_node(cl, v1)->uct != mcts_node(t, v1)->uct &&
       mcts_node(cl, v3)->virtual_loss == 1 && mcts_node(cl, 0)->visits == 2,
       "UCT marks, virtual loss and visits are copied");
    int grown = child(cl, v2, 70);
    ok(grown == 4 && t->n == 4 && mcts_node(t, v2)->nchildren == 1 && mcts_node(t, 0)->visits == 2,
       "growing the clone leaves the original alone");
    mcts_free(cl);
    mcts_virtual_loss(t, v3, -1);
    mcts_backprop(t, v3, 30);
    ok(mcts_node(t, 0)->virtual_loss == 0 && mcts_node(t, 0)->visits == 3 && near(mcts_q(mcts_node(t, v1)), 130.0 / 3),
       "taking the virtual loss back and backing up the value leaves plain visits");
    mcts_free(t);

    is_str(mcts_status_name(MCTS_FINISHED), "finished", "status names");
    is_int(mcts_status_parse("pruned"), MCTS_PRUNED, "status names parse back");
    is_int(mcts_status_parse("nope"), -1, "unknown status names are refused");
    return done_testing();
}
