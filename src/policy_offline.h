/*
 * policy_offline: the deterministic policy that needs no model, the default
 * for every user without one. It plays the paper's four roles (policy.h) on
 * the question's analysis (qparse.h), the evidence on the trajectory and the
 * index's names and term statistics:
 *
 *   perceive  a short report: the question's type and terms, the path so
 *             far, how much of the question the evidence covers and which
 *             terms it does not, the best span and whether it was opened,
 *             leads (names called or inherited in the best evidence that were
 *             not looked up yet) and what the siblings already tried;
 *   plan      an ordered list of candidate actions, the first one that no
 *             sibling or ancestor has taken wins, so the k-th sibling takes
 *             the k-th best candidate (F2: branches start differently):
 *               1. the literal identifiers of the question, FindClass or
 *                  FindFunction (F1: verify literal names), quoted code with
 *                  FindCodeSnippet, mentioned files with Outline;
 *               2. SemanticSearch on the question's content (implementation
 *                  code), also within the files where the question's words
 *                  concentrate (BM25 over windows of lines: the "promising
 *                  regions" of perception), names of the index made of the
 *                  question's words;
 *               3. from the evidence: anchor the best span on its definition
 *                  (FindClass/FindFunction with its file), follow names it
 *                  calls or inherits, FindReferences when keyword search
 *                  stalls (F3: callers, subclasses, importers), Outline;
 *               4. ViewCode of the best span, then Finish once the evidence
 *                  covers the question well enough or the path is deep (E.3);
 *             without a perception report it follows only the question
 *             (steps 1, 2 and 4): the no-perception ablation;
 *   evaluate  0-100 from the idf-weighted overlap of the new evidence and of
 *             the whole path with the question, the gain in coverage, novelty
 *             of files and spans, and a bonus when a literal name of the
 *             question was found; one line of feedback naming the next step;
 *   rollout   the cheap value of the no-evaluation ablation: the new
 *             evidence's overlap alone;
 *   answer    the extractive answer (answer.h) over the trajectory's spans
 *             and every other span the tree's executed nodes saw, trajectory
 *             spans preferred (answer_from_tree: the search verifies the
 *             citations against the whole tree).
 *
 * Deterministic: the same index, question and tree give the same decisions.
 * Spends no tokens. One policy serves one thread; it re-reads the question
 * whenever the tree's question changes.
 */
#ifndef DRQA_POLICY_OFFLINE_H
#define DRQA_POLICY_OFFLINE_H

#include "action.h"
#include "policy.h"

#include <sqlite3.h>

#define OFFLINE_MAX_DEPTH 6
#define OFFLINE_PRIOR_FILES 5      /* promising files kept per question */
#define OFFLINE_WINDOW_LINES 200   /* window size when looking for them */
#define OFFLINE_ANSWER_CITES 10    /* citations of an answer at most */
#define OFFLINE_HEAD_LINES 60      /* a file's head read after its outline: docstring, imports */

struct offline_config {
    sqlite3 *db;              /* the index (borrowed): term weights and definitions; may be NULL */
    struct action_ctx *actx;  /* the index's names (borrowed); may be NULL */
    int no_semantic;          /* never plan SemanticSearch (the --no-semantic ablation) */
    int max_depth;            /* Finish at this depth at the latest; 0: OFFLINE_MAX_DEPTH */
    int iterations;           /* the search's budget: after two thirds of it, paths are closed
                                 (ViewCode, then Finish) instead of widened; 0: no budget */
};

struct offline_policy;

struct offline_policy *offline_policy_new(const struct offline_config *cfg);   /* never NULL */
void offline_policy_free(struct offline_policy *p);                          /* accepts NULL */
/* Changes the iteration budget of offline_config (per search). */
void offline_policy_set_iterations(struct offline_policy *p, int iterations);
/* Fills a policy struct whose ctx is p (name "offline"). */
void offline_policy_bind(struct offline_policy *p, struct policy *out);

/* The ordered candidates the planner would consider for node_id (a new node
 * of t), before duplicates are removed: JSON [{"action", "args", "why",
 * "priority"}], for tests and the UI. perceived: as if a report was made.
 * Caller deletes. NULL when the question cannot be read. */
cJSON *offline_policy_candidates(struct offline_policy *p, const struct mcts_tree *t, int node_id, int perceived);

#endif
