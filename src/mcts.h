/*
 * mcts: the search tree of DeepRepoQA (section 3.4) as plain data plus the
 * tree-only steps of Algorithm 1: selection by UCT, expansion (adding a child)
 * and back-propagation. No policy calls happen here; search.c drives the loop.
 *
 * Nodes live in one array and are named by dense ids (root 0, then in order of
 * creation); parents and children refer to ids, never pointers, so ids can be
 * handed to other threads and written to transcripts.
 *
 * Values are on the evaluator's 0-100 scale. A node's visit count N and value
 * sum W give Q = W / N. The single-step simulation's value V of a new node
 * sets its Q (N = 1, W = V) and is added to every ancestor (N += 1, W += V),
 * so the root's N is the number of iterations and every other node's N is 1
 * plus the sum of its children's N.
 *
 * Selection (mcts_select). From the root, at node s:
 *   - a child c is a candidate when c is not pruned and its subtree still
 *     holds an expandable node ("open");
 *   - s itself is expandable when its status is done (or it is the root), it
 *     is not a duplicate, not closed (no distinct action was left to add
 *     under it), and it has fewer than max_expand children;
 *   - each candidate child scores UCT(c) = Q(c) + C * sqrt(ln N(s) / N(c));
 *   - when s is expandable it also scores as the would-be new child, with
 *     first-play urgency: Q = Q(s) (the mean of what was found below s, the
 *     best guess for an untried action) and N = 1 (its first visit):
 *         UCT_new(s) = Q(s) + C * sqrt(ln N(s))
 *     (N(s) == 0 only for the root before the first iteration, and a node
 *     without children is chosen without comparison);
 *   - s is selected when it is expandable and UCT_new(s) >= the best
 *     candidate's UCT (ties favour widening); otherwise selection descends
 *     into the best candidate, ties broken by the seeded RNG.
 *   - when a forced node (mcts_force) is set and still expandable, it is
 *     selected without any comparison, once.
 * Finished, error and duplicate nodes are leaves (never expanded); pruned
 * subtrees are skipped entirely. Every score computed during a selection is
 * recorded on its node (last_uct and the uct history) for the UI and the
 * transcript, the winner of each comparison marked chosen; so after a
 * selection every child of every node it descended through holds the score
 * it had there (mcts_last_mark).
 *
 * The exploration constant C. UCB1's sqrt(2) is meant for rewards in [0, 1];
 * our values span 0-100, so C must be scaled with them. With C ~ 1 the bonus
 * is at most a point or two and selection is greedy; with C ~ 141 (sqrt(2) *
 * 100) the bonus of a once-visited node outweighs any value gap and selection
 * is nearly breadth-first. The default C = 50 puts the bonus on the order of
 * the spread of the evaluator's values: under a parent with N = 10, a child
 * visited once gets +75.9 and one visited three times +43.8, so a gap of
 * 30-40 points is worth about one extra visit.
 *
 * Ownership: the tree owns every node and every string, cJSON and evidence
 * list in it. mcts_node() hands out borrowed pointers, valid until the next
 * call that adds a node.
 *
 * Parallel expansion (--parallel K, driven by search.c). Several selections
 * are made before their values come back: each new child is running (so it is
 * neither expandable nor open, and it already counts against its parent's
 * max_expand), and mcts_virtual_loss adds one in-flight visit to it and to
 * every ancestor. UCT and Q count an in-flight visit as a visit of value 0
 * (N + VL visits, the same W), which pushes the next selection away from
 * that path. When the value arrives the virtual loss is taken back and the
 * real visit backed up, so once nothing is in flight every virtual_loss is
 * 0 again. Policies that run while other expansions are in flight read a
 * private copy of the tree (mcts_clone).
 */
#ifndef DRQA_MCTS_H
#define DRQA_MCTS_H

#include "evidence.h"
#include "rng.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define MCTS_DEFAULT_C 50.0
#define MCTS_DEFAULT_MAX_EXPAND 3
#define MCTS_VALUE_MAX 100.0
#define MCTS_NEUTRAL_VALUE 50.0   /* no-evaluation ablation without a rollout */
#define MCTS_FAILED_VALUE 0.0     /* backed up for error and duplicate nodes */

enum mcts_status {
    MCTS_PENDING,    /* added, simulation not started */
    MCTS_RUNNING,    /* simulation in progress */
    MCTS_DONE,       /* evaluated and backed up */
    MCTS_FINISHED,   /* its action was Finish */
    MCTS_PRUNED,     /* cut by the user; never selected again */
    MCTS_ERROR,      /* a role call failed; see error */
};

const char *mcts_status_name(enum mcts_status s);
int mcts_status_parse(const char *name);   /* -1 when unknown */

/* The roles of one simulation, as bits (mcts_node.fallback). */
enum mcts_role_bit {
    MCTS_ROLE_PERCEIVE = 1,
    MCTS_ROLE_PLAN = 2,
    MCTS_ROLE_CURATE = 4,
    MCTS_ROLE_EVALUATE = 8,
};
#define MCTS_ROLE_NAMES {"perceive", "plan", "curate", "evaluate"}

struct mcts_uct_mark {
    int iteration;   /* the selection (iteration number) that computed it */
    int as_new;      /* 0: UCT(c) as a child; 1: UCT_new as a candidate parent */
    double score;
    int chosen;      /* this score won its comparison: the child descended into, or
                      * (as_new) the node widened */
};

struct mcts_node {
    int id, parent, depth;     /* root: id 0, parent -1, depth 0 */
    int *children;
    int nchildren, children_cap;
    int iteration;             /* the iteration that created it (root 0) */

    char *action;              /* NULL for the root and until planned */
    cJSON *args;               /* JSON object or NULL */
    char *args_key;            /* normalised name+args, for duplicate checks */
    char *rationale;
    char *report;              /* perception report ("" when ablated) */
    struct evidence obs;       /* curated observation */
    char *obs_text;            /* its rendering */

    int has_value;
    double value;              /* evaluation V, 0-100 */
    char *feedback;
    int visits;                /* N */
    double value_sum;          /* W; Q = W / N */
    double last_uct;           /* last UCT(c) computed by a selection, 0 if none */
    struct mcts_uct_mark *uct;
    int nuct, uct_cap;

    enum mcts_status status;
    int duplicate;             /* the plan repeated the action of node dup_of */
    int dup_of;
    int forced;                /* it was expanded by mcts_force */
    int refused;               /* a Finish the engine refused (no code on its path): not run */
    int exhausted;             /* no action was left for it that no sibling or ancestor took: not
                                * run, no value backed up, status pruned */
    int closed;                /* every action proposed for a new child here repeated a child or
                                * an ancestor: it takes no more children */
    int virtual_loss;          /* in-flight visits (parallel expansion) */
    char *error;               /* the failure, when status is error */
    int transient;             /* the failure was the server's or network's, not the evidence's:
                                * it is not backed up as a value */
    char *notes;               /* how decisions were reached ("; "-joined): replies coerced into
                                * shape, fallback decisions; NULL when none */
    unsigned fallback;         /* MCTS_ROLE_* bits of the roles decided by the fallback policy */

    long long tokens_in, tokens_out;
    int64_t started_ms;        /* since the search began */
    int64_t perceive_ms, plan_ms, execute_ms, evaluate_ms;
};

struct mcts_tree {
    char *question;
    int max_expand;
    double c;
    uint64_t seed;
    struct rng rng;
    struct mcts_node *nodes;
    int n, cap;
    int forced;                /* node to expand next, or -1 */
    /* Totals kept with the tree so a transcript is self-contained. */
    int iterations;
    long long tokens_in, tokens_out;
    char *stop_reason;         /* NULL while running */
};

/* max_expand <= 0 gives the default; c < 0 gives MCTS_DEFAULT_C. */
struct mcts_tree *mcts_new(const char *question, int max_expand, double c, uint64_t seed);
void mcts_free(struct mcts_tree *t);     /* accepts NULL */

const struct mcts_node *mcts_node(const struct mcts_tree *t, int id);  /* NULL if no such id */
struct mcts_node *mcts_node_mut(struct mcts_tree *t, int id);
double mcts_q(const struct mcts_node *n);            /* W / N, 0 when N == 0 */

int mcts_expandable(const struct mcts_tree *t, int id);
/* Adds a pending child; returns its id, or -1 when parent is not expandable. */
int mcts_add_child(struct mcts_tree *t, int parent);

/* UCT of a non-root node as a child of its parent, and of an expandable node
 * as a candidate for a new child, as defined above. */
double mcts_uct(const struct mcts_tree *t, int id);
double mcts_uct_new(const struct mcts_tree *t, int id);

/* Selects the node to expand in iteration `iteration` (recorded with the UCT
 * marks). Returns -1 when no node in the tree can be expanded. *was_forced
 * (may be NULL) tells whether a forced node was taken. */
int mcts_select(struct mcts_tree *t, int iteration, int *was_forced);
/* The no-MCTS ablation: the last node created if expandable, else its nearest
 * expandable ancestor (a forced node still wins). -1 when none. */
int mcts_select_greedy(struct mcts_tree *t, int *was_forced);

/* N += 1 and W += value from id up to the root. */
void mcts_backprop(struct mcts_tree *t, int id, double value);
/* virtual_loss += delta from id up to the root (+1 when an expansion of id
 * starts in flight, -1 when its value is backed up). */
void mcts_virtual_loss(struct mcts_tree *t, int id, int delta);

/* A deep copy of the whole tree (nodes, strings, arguments, evidence, UCT
 * marks, totals, RNG state): the same ids, sharing nothing with t. The
 * caller frees it with mcts_free. */
struct mcts_tree *mcts_clone(const struct mcts_tree *t);

/* Marks id and its whole subtree pruned. Fails for the root, a bad id, or a
 * running node. */
int mcts_prune(struct mcts_tree *t, int id, char *err, size_t errlen);
/* Makes id the next node to expand. Fails unless id is expandable. */
int mcts_force(struct mcts_tree *t, int id, char *err, size_t errlen);

/* Canonical form of an action for duplicate checks (caller frees): the name,
 * then the args with keys sorted, strings trimmed, lowercased and with inner
 * whitespace collapsed, null and empty-string members dropped, and members
 * equal to the registered action's default (action.h) dropped too, so that
 * {"category": "any"} is the SemanticSearch that names no category. A Finish
 * is a Finish whatever its arguments: the answer is built from the path it
 * ends, so a second one under the same parent adds nothing. */
char *mcts_action_key(const char *name, const cJSON *args);
/* The id of a sibling of node_id, or an ancestor on its path, whose action
 * key equals key; -1 when there is none. */
int mcts_find_duplicate(const struct mcts_tree *t, int node_id, const char *key);

/* Ids from the root to id (root first) into *ids (caller frees); returns the
 * count, 0 for a bad id. */
size_t mcts_path(const struct mcts_tree *t, int id, int **ids);

/* Appends a UCT mark to a node (used by selection and by transcript loading). */
void mcts_mark_uct(struct mcts_node *n, int iteration, int as_new, double score);
/* The node's newest mark of the kind as_new (0: as a child, the score
 * last_uct holds; 1: as a candidate for a new child), or NULL when no
 * selection scored it so. What the front end shows, live and replayed. */
const struct mcts_uct_mark *mcts_last_mark(const struct mcts_node *n, int as_new);

#endif
