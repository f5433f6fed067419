/*
 * search_harness.h: what the search tests (test_search, test_search_parallel)
 * share over the scripted policy of toy_policy.h: a search over the toy,
 * the tree's invariants, and a count of the search's events. Include once
 * per test program, after tap.h.
 */
#ifndef DRQA_SEARCH_HARNESS_H
#define DRQA_SEARCH_HARNESS_H

#include "mcts.h"
#include "search.h"
#include "toy_policy.h"

#include <math.h>

static struct search *run(struct toy *t, struct search_config *c, const char *q)
{
    struct policy p = toy_policy(t);
    struct policy_executor e = toy_executor(t);
    struct policy_curator cu = toy_curator(t);
    return search_new(c, &p, &e, &cu, q);
}

/* visits(n) = [n != root] + sum visits(children); W(n) = V(n) + sum W(children);
 * at most max_expand children; every non-root node that ran has a value, and
 * one that did not (exhausted) has nothing backed up. settled: also
 * no virtual loss left and no node running or pending (after a batch of
 * parallel expansions). Returns the id of the first violation or -1. */
static int tree_violation(const struct mcts_tree *t, int settled)
{
    for (int i = 0; i < t->n; i++) {
        const struct mcts_node *n = mcts_node(t, i);
        int visits = i ? 1 : 0;
        double w = i ? n->value : 0;
        if (n->exhausted) {   /* not run (no distinct action was left): nothing backed up */
            if (n->visits || n->value_sum != 0 || n->nchildren || (settled && n->virtual_loss)) return i;
            continue;
        }
        for (int k = 0; k < n->nchildren; k++) {
            visits += mcts_node(t, n->children[k])->visits;
            w += mcts_node(t, n->children[k])->value_sum;
        }
        if (n->visits != visits || fabs(n->value_sum - w) > 1e-9 || n->nchildren > t->max_expand)
            return i;
        if (settled && n->virtual_loss != 0) return i;
        if (i && !n->has_value) return i;
        if (settled && i && (n->status == MCTS_RUNNING || n->status == MCTS_PENDING)) return i;
    }
    return -1;
}
static int __attribute__((unused)) check_invariants(const struct mcts_tree *t) { return tree_violation(t, 0); }
static int __attribute__((unused)) check_settled(const struct mcts_tree *t) { return tree_violation(t, 1); }

/* events[ev]: how many of each event the search reported (c.on_event = count_event) */
static int events[6];
static void count_event(void *ctx, const struct search *s, enum search_event ev, int id)
{
    events[ev]++;
}

#endif
