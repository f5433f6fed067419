/*
 * policy_tree.h: building small search trees by hand for the LLM policy's
 * tests: set_node gives a node its action, value and one span of evidence
 * (none when path is NULL) and backs the value up. Include once per test
 * program.
 */
#ifndef DRQA_POLICY_TREE_H
#define DRQA_POLICY_TREE_H

#include "mcts.h"
#include "util.h"

static void __attribute__((unused)) set_node(struct mcts_tree *t, int id, const char *action, const char *args,
                                             double value, const char *path, int a, int z, const char *text,
                                             const char *label)
{
    struct mcts_node *n = mcts_node_mut(t, id);
    n->action = xstrdup(action);
    n->args = cJSON_Parse(args);
    n->status = MCTS_DONE;
    n->has_value = 1;
    n->value = value;
    if (path) evidence_add(&n->obs, path, a, z, text, label, 1);
    n->obs_text = path ? xasprintf("%s:%d-%d  %s\n%s\n", path, a, z, label, text) : xstrdup("");
    mcts_backprop(t, id, value);
}

#endif
