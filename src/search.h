/*
 * search: Algorithm 1 of DeepRepoQA, one iteration per search_step():
 *
 *   select (UCT, mcts.h) -> expand (add a child) -> perceive -> plan
 *   -> execute + curate -> evaluate -> back-propagate
 *
 * until a Finish action is planned, the iterations are used up, the token
 * budget is spent, or no node can be expanded any more. search_answer() then
 * builds the answer from the best trajectory (3.4.5).
 *
 * Rules the engine enforces whatever the policy does:
 *   - A failed role call (perceive, plan, execute, curate, evaluate) marks the
 *     new node status error with the message; the node is backed up with
 *     value 0 so the iteration still counts, and the search goes on.
 *   - Loop protection: a planned action whose normalised (name, args) equals
 *     that of a sibling or of an ancestor on the path is not executed (a
 *     Finish equals any other Finish: mcts_action_key). The policy is asked
 *     again (max_replans times, the report telling it which action was
 *     refused), then the fallback policy's plan is taken when it is
 *     distinct; failing that, no distinct action is left: the new node is
 *     recorded without an action (exhausted, status pruned, no value backed
 *     up: neither a step nor a failure) and its parent is closed (it takes
 *     no more children) with a note saying why. No node is ever a duplicate
 *     of a sibling.
 *   - Finish is not executed against the index: its node gets no observation,
 *     is evaluated like any other (Algorithm 1 evaluates before checking for
 *     Finish), becomes status finished and stops the search.
 *   - Values are clamped into 0-100; a NaN value is an evaluation error.
 *   - The token budget is checked after every iteration (a single iteration
 *     can overshoot it; no call is cut in half).
 *
 * Ablations (section 5.2):
 *   no_mcts        greedy single trajectory: always expand the last node
 *                  created (or its nearest expandable ancestor).
 *   no_perception  perceive is not called; the report is "".
 *   no_evaluation  evaluate is not called; the value comes from the policy's
 *                  cheap rollout when it has one, else the neutral 50, so
 *                  selection is driven by visit counts alone.
 *
 * Parallel expansion (search_config.parallel = K > 1, --parallel K). The LLM
 * calls dominate the wall time, so each step runs a batch of up to K
 * expansions whose role calls overlap:
 *   - the K nodes are selected one after another (UCT, as above), each new
 *     child adding a virtual loss to its path (mcts.h), so the next
 *     selection is pushed elsewhere; in-flight children count against their
 *     parent's max_expand. A forced node is the batch's first selection. The
 *     batch never runs more iterations than remain; it is smaller when fewer
 *     nodes can be expanded;
 *   - the per-node pipeline (perceive, plan, execute + curate, evaluate) runs
 *     on the calling thread and K - 1 pool threads owned by the search
 *     (created by the first batch, joined by search_free, all signals
 *     blocked in them). The search's lock is released during every callback;
 *     a policy callback is handed a private copy of the tree taken when the
 *     call starts (it sees siblings still in flight as they were then).
 *     Everything that changes the tree happens under the lock: adding
 *     children, storing reports, actions, observations and values, the
 *     duplicate check (against every sibling with a recorded action,
 *     including siblings still in flight: the first action recorded wins and
 *     a later equal one is refused and re-planned), back-propagation and
 *     taking the virtual loss back;
 *   - callbacks are called concurrently only when declared thread-safe
 *     (policy_thread_safe, executor_thread_safe, curator_thread_safe). The
 *     others run one at a time under a single lock shared by all of them
 *     (they may share state, e.g. one sqlite connection), while the
 *     thread-safe ones still overlap with them and with each other;
 *   - the step returns when the whole batch has been recorded. A Finish
 *     stops the search after its batch: the other expansions in flight
 *     complete and are recorded, nothing new starts. The token budget and
 *     the iteration limit are checked before each batch (a batch can
 *     overshoot the budget by up to K iterations). search_prune,
 *     search_force and search_finish_now may be called from another thread
 *     (or from on_event) while a batch runs: a prune of a subtree holding an
 *     in-flight node is refused, a force applies to the next batch, finish
 *     now lets the batch complete and starts no other. Failed role calls are
 *     recorded on their node exactly as above;
 *   - with K > 1 the tree may differ from run to run even for one seed:
 *     what a policy call sees of siblings still in flight, and which of two
 *     equal actions is recorded first, depend on timing; the seed still
 *     fixes every random tie-break. K <= 1 is the sequential algorithm,
 *     exactly: no pool, no copies, byte-identical transcripts for the same
 *     seed. The no_mcts ablation always runs one expansion at a time (its
 *     single trajectory is sequential by nature).
 *
 * Events and threads: on_event and clock_ms are called with the search's
 * lock held, one call at a time (from the stepping thread or a pool thread).
 * on_event may read the tree and may call search_prune, search_force and
 * search_finish_now (the lock is recursive); it must not step or free the
 * search. Any thread may call search_prune, search_force, search_finish_now,
 * search_done and search_stop_reason at any time; search_step,
 * search_answer and search_free are for the one thread that drives the
 * search, and the tree (search_tree) may be read directly only by that
 * thread between steps, or inside on_event.
 *
 * Ownership: the search owns its tree. The policy, executor and curator
 * structs are copied; their ctx pointers stay with the caller and must
 * outlive the search.
 */
#ifndef DRQA_SEARCH_H
#define DRQA_SEARCH_H

#include "evidence.h"
#include "mcts.h"
#include "policy.h"

#include <stddef.h>
#include <stdint.h>

struct search;

/* What changed, for the worker to turn into UI events. The tree may be read
 * (mcts_node) during the callback but not changed. */
enum search_event {
    SEARCH_EV_NODE_ADDED,    /* a new child exists (pending/running) */
    SEARCH_EV_REPORT,        /* its perception report is set */
    SEARCH_EV_ACTION,        /* its action is planned */
    SEARCH_EV_EVIDENCE,      /* its curated observation is set */
    SEARCH_EV_NODE_UPDATED,  /* status, value, visits or Q changed */
    SEARCH_EV_STOPPED,       /* the search is over; node is -1 */
};

enum search_stop {
    SEARCH_RUNNING,
    SEARCH_STOP_FINISH,      /* a Finish action was planned */
    SEARCH_STOP_ITERATIONS,  /* max iterations done */
    SEARCH_STOP_BUDGET,      /* the token budget is spent */
    SEARCH_STOP_EXHAUSTED,   /* no node can be expanded */
    SEARCH_STOP_USER,        /* search_finish_now */
    SEARCH_STOP_ERROR,       /* a role call failed in a way that every later call would too
                              * (search_stop_message says which) */
    SEARCH_STOP_BUDGET_USD,  /* the cost budget (--budget-usd) is spent */
};

const char *search_stop_name(enum search_stop s);

#define SEARCH_FINISH_MIN_VALUE 50.0

struct search_config {
    int iterations;              /* N, default 15 */
    int max_expand;              /* default 3 */
    double exploration;          /* UCT constant C; < 0 gives MCTS_DEFAULT_C */
    unsigned long long seed;     /* tie-breaks; default 1 */
    long long budget_tokens;     /* input + output; 0 = no budget */
    double budget_usd;           /* model cost; 0 = no budget; needs spent_usd */
    double (*spent_usd)(void *ctx);   /* the cost so far (the caller's ledger) */
    void *spent_ctx;
    int no_mcts, no_perception, no_evaluation;
    int max_replans;             /* extra plan calls after a duplicate or a refused Finish, default 2 */
    double finish_min_value;     /* a Finish valued below this does not stop the search; default
                                  * SEARCH_FINISH_MIN_VALUE; 0: every Finish stops it */
    int parallel;                /* K expansions in flight per step; <= 1: one (sequential) */
    /* Callbacks that may run on several threads at once when parallel > 1;
     * those left 0 are called one at a time (see above). */
    int policy_thread_safe, executor_thread_safe, curator_thread_safe;
    int64_t (*clock_ms)(void);   /* NULL: now_ms; tests pass a fake for exact transcripts */
    void (*on_event)(void *ctx, const struct search *s, enum search_event ev, int node_id);
    void *event_ctx;
};

void search_config_defaults(struct search_config *c);

/* The question is copied. Never fails (allocation aborts). */
struct search *search_new(const struct search_config *cfg, const struct policy *policy,
                          const struct policy_executor *executor,
                          const struct policy_curator *curator, const char *question);
void search_free(struct search *s);   /* accepts NULL */

#define SEARCH_MAX_PARALLEL 64

/* One iteration of Algorithm 1, or with cfg.parallel = K > 1 one batch of up
 * to K (see above). Returns the number of iterations that ran (1 for a
 * sequential step), 0 when the search is (now) over and nothing ran. Role
 * failures are not returned: they are recorded on the node. */
int search_step(struct search *s);
/* The same with K given (clamped to SEARCH_MAX_PARALLEL) instead of
 * cfg.parallel. */
int search_step_parallel(struct search *s, int k);
int search_done(const struct search *s);
enum search_stop search_stop_reason(const struct search *s);
/* Why the search stopped on SEARCH_STOP_ERROR ("planning: the server at ...
 * answered 401 ..."), else NULL. Valid until the search is freed. */
const char *search_stop_message(const struct search *s);
const struct mcts_tree *search_tree(const struct search *s);
const struct search_config *search_config(const struct search *s);

/* User control between iterations. Prune: id and its subtree are never
 * selected again. Force: id is expanded in the next iteration whatever its
 * UCT; if the search had stopped on Finish or by the user it resumes, as long
 * as iterations and budget remain. A prune that cuts away every finished
 * node that stopped the search resumes it the same way (it has not
 * finished any more). Finish now: stop and answer from what is there. Each returns 0 or -1 with a message. */
int search_prune(struct search *s, int id, char *err, size_t errlen);
int search_force(struct search *s, int id, char *err, size_t errlen);
/* Finish now also drops a pending force: returns the node that was to be
 * expanded next, or -1. */
int search_finish_now(struct search *s);

struct search_answer {
    char *markdown;
    struct evidence cites;    /* verified: path, lines and text of evidence seen */
    int *path;                /* the trajectory, root first */
    size_t npath;
    int finish_node;          /* the Finish node, or -1 */
    int from_finished;        /* 1: best finished trajectory; 0: no node finished,
                                 the highest-value path was used */
    int dropped;              /* citations given by the policy that no span seen
                                 covers (removed; see search_answer) */
    int fallback_cite;        /* 1: none survived, the trajectory's best span was cited */
    char *error;              /* the policy's answer failure, or NULL */
    char *written_by;         /* the fallback policy that wrote the answer for the
                                 configured one (policy_answer.written_by), or NULL */
    int unwrapped;            /* policy_answer.unwrapped */
    char *failure;            /* every expanded step failed: "every step of the search
                                 failed (N of N); the first: ...", or the search stopped
                                 on an error before any step succeeded; else NULL. When
                                 only some failed, markdown ends with a line saying
                                 how many and the first reason (and why the search
                                 stopped, when it stopped on an error) */
    long long tokens_in, tokens_out;
    int stopped;              /* the policy's answer was stopped while it was written
                                 (policy_answer.stopped): markdown is the part that
                                 had arrived and says so */
};

/* The answer for the current tree (normally called once search_done).
 *
 * Trajectory: the path to the finished node with the highest value (ties:
 * lowest id), pruned nodes excluded. When none finished: from the root,
 * repeatedly the child with the highest Q (ties: lowest id) among children
 * that are done or finished and not duplicates, to a leaf.
 *
 * Citations are kept only when evidence seen verifies them: verbatim lines
 * that hold them, or an outline (elided span) of exactly their lines (its
 * text is the outline; an outline verifies no lines inside it), seen on the
 * trajectory, or, for a policy with answer_from_tree, on any done or
 * finished node of the tree, or else in what the policy read for the answer
 * outside the tree (policy_answer.read). The text is taken from that span; one citation
 * per lines and kind of view. At least one span is cited: when
 * none survives, the trajectory's best-scored span (ties: earliest) is. When
 * the trajectory has no evidence at all, there are no citations and the
 * markdown says so. When the policy's answer call fails, the answer is built
 * from the Finish node's "answer" argument or the evidence list, and error
 * holds the failure. Tokens spent are added to the tree's totals.
 * Returns a caller-owned answer (search_answer_free); never NULL. */
struct search_answer *search_answer(struct search *s);
void search_answer_free(struct search_answer *a);   /* accepts NULL */

/* Trajectory choice alone (for the UI): returns the count, ids in *ids (caller
 * frees), and whether it ends on a finished node. */
size_t search_best_trajectory(const struct mcts_tree *t, int **ids, int *from_finished);

#endif
