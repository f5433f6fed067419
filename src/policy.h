/*
 * policy: the interface between the search engine and whatever decides what
 * to do (an offline deterministic policy, an LLM policy, a scripted test
 * policy). The engine owns the tree and the loop of Algorithm 1; a policy
 * plays the paper's four roles on a read-only view of the tree:
 *
 *   perceive  situational report for a new node, from the root-to-node
 *             trajectory and the attempts of its siblings (section 3.3.1)
 *   plan      the next action for the new node (3.3.2); it should avoid the
 *             actions of siblings and ancestors, and the engine enforces it
 *   evaluate  a value 0-100 and feedback for the node's action and curated
 *             observation (3.3.4); the value sets Q of the new node
 *   answer    the final answer and its citations from a trajectory (3.4.5)
 *
 * plus an optional cheap `rollout` value used by the no-evaluation ablation.
 * The action itself is run by an executor (the Execution Agent's index
 * lookups) and its raw output is filtered by a curator (evidence curation);
 * both are passed to the engine next to the policy.
 *
 * Every call returns 0 on success or -1 with a message in err; the engine
 * records a failure on the node (status error) and the search goes on. Every
 * call reports the tokens it spent in *usage (left zero by non-LLM policies)
 * so the engine can account for them and enforce --budget-tokens.
 *
 * Ownership: results written through out-pointers are malloc'd by the policy
 * and handed to the engine, which frees them. The tree is borrowed and must
 * not be modified or kept past the call. `ctx` belongs to whoever built the
 * policy; the engine never frees it.
 */
#ifndef DRQA_POLICY_H
#define DRQA_POLICY_H

#include "evidence.h"

#include <cjson/cJSON.h>
#include <stddef.h>

struct mcts_tree;

/* What one role call reports beside its result. `notes` collects what the
 * node should say about how the decision was reached (a reply coerced into
 * shape, a fallback decision); `fallback` is set when the decision came from
 * the fallback policy instead of the model; `fail_kind` says, for a failed
 * call, whether trying again later may help (enum policy_fail). */
enum policy_fail {
    POLICY_FAIL_NONE = 0,
    POLICY_FAIL_TRANSIENT,     /* the server or network failed; nothing is known of the evidence */
    POLICY_FAIL_PERSISTENT,    /* the request will keep failing (auth, model, parameters): stop */
};

#define POLICY_NOTES_MAX 768

struct policy_usage {
    long long input_tokens;
    long long output_tokens;
    int fallback;
    enum policy_fail fail_kind;
    char notes[POLICY_NOTES_MAX];   /* "; "-joined, cut at the cap */
};

/* Appends one note to u->notes ("; " between notes). u may be NULL. */
void policy_usage_note(struct policy_usage *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A planned action. name is an action of the action engine ("FindClass",
 * "FindFunction", "FindCodeSnippet", "ViewCode", "SemanticSearch") or
 * "Finish"; args is a JSON object (NULL means {}). */
struct policy_action {
    char *name;
    cJSON *args;
    char *rationale;   /* may be NULL */
};

struct policy_eval {
    double value;      /* 0-100; the engine clamps into range and rejects NaN */
    char *feedback;    /* may be NULL */
};

/* The answer: Markdown and the spans it cites (path and lines; text is not
 * needed, the engine takes it from the evidence it verifies against). */
struct policy_answer {
    char *markdown;
    struct evidence cites;
    int stopped;       /* the reader stopped the answer while it was written: markdown is
                        * the part that had arrived, marked as stopped */
    /* Spans the policy read for this answer outside the tree (the flat
     * ranker's windows, flatrank.h), with their text: a citation that no
     * node saw is verified against these, and the markdown says which
     * citations came from them. Usually empty. */
    struct evidence read;
    /* The policy that wrote the markdown when it is not this one (a
     * fallback's name, static: "offline"), else NULL: an answer the
     * fallback wrote for a model is never shown as the model's. */
    const char *written_by;
    /* The reply held the answer as the "answer" string of a JSON object
     * (with words or a fence around it): markdown is that string. */
    int unwrapped;
};

/* Where an answer being written goes as it arrives: kind 0 a piece of text,
 * 1 a piece of reasoning, 2 "drop what came so far" (the answer is being
 * written again). Returns nonzero to stop the answer (its reader gave up). */
typedef int (*policy_answer_sink)(void *ud, int kind, const char *text, size_t len);

struct policy {
    const char *name;  /* for transcripts and logs ("offline", "llm", ...) */
    void *ctx;

    /* Report for node_id, a new node whose parent was just selected. May be
     * NULL: the report is then empty, as in the no-perception ablation. */
    int (*perceive)(void *ctx, const struct mcts_tree *t, int node_id, char **report,
                    struct policy_usage *usage, char *err, size_t errlen);
    /* Required. report is "" when perception is off. When the engine asks
     * again after a duplicate, the report ends with a line saying which
     * action was refused. */
    int (*plan)(void *ctx, const struct mcts_tree *t, int node_id, const char *report,
                struct policy_action *out, struct policy_usage *usage, char *err, size_t errlen);
    /* Value of node_id once its action and observation are set. May be NULL:
     * then it is treated as the no-evaluation ablation. */
    int (*evaluate)(void *ctx, const struct mcts_tree *t, int node_id, struct policy_eval *out,
                    struct policy_usage *usage, char *err, size_t errlen);
    /* Optional: the cheap value used when evaluation is ablated (the paper's
     * "rollout-based evaluation"). NULL gives the neutral value 50. */
    int (*rollout)(void *ctx, const struct mcts_tree *t, int node_id, double *value,
                   struct policy_usage *usage, char *err, size_t errlen);
    /* Answer from a trajectory, ids root first (ids[0] == 0). May be NULL:
     * the engine then builds a plain answer from the evidence. */
    int (*answer)(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids,
                  struct policy_answer *out, struct policy_usage *usage, char *err, size_t errlen);
    /* 0: the answer cites the trajectory's evidence, and its citations are
     * verified against the trajectory. 1: it may cite any span the tree's
     * executed nodes saw (done or finished, not pruned), and is verified
     * against those (search_answer in search.h). */
    int answer_from_tree;
    /* Optional: the fallback policy's plan for node_id, for a node whose
     * Finish the engine refused (nothing read on its path) as often as it
     * asks again: the search goes on with an action that reads code. Sets
     * usage->fallback. NULL: the Finish is recorded refused and not run. */
    int (*plan_fallback)(void *ctx, const struct mcts_tree *t, int node_id, const char *report,
                         struct policy_action *out, struct policy_usage *usage, char *err, size_t errlen);
    /* Optional: the answer's text goes to fn(ud, ...) as it is written
     * (fn NULL: nowhere). A policy that writes its answer at once may leave
     * this NULL; its reader then gets the whole answer from the result. */
    void (*set_answer_sink)(void *ctx, policy_answer_sink fn, void *ud);
};

/* Runs one action against the repository index: raw spans into *raw (the
 * list is empty on entry) and a plain-text rendering into *text (malloc'd,
 * may be left NULL). */
struct policy_executor {
    void *ctx;
    int (*execute)(void *ctx, const char *name, const cJSON *args, struct evidence *raw,
                   char **text, char *err, size_t errlen);
};

/* Filters raw output into the node's curated observation (ranked,
 * de-duplicated, focused spans) and optionally its rendering. action is the
 * action as planned, its name then its JSON arguments
 * ("FindFunction {"function_name":"route"}"). A NULL curate function keeps
 * the raw spans as they are. */
struct policy_curator {
    void *ctx;
    int (*curate)(void *ctx, const char *question, const char *action, const struct evidence *raw,
                  const char *raw_text, struct evidence *curated, char **text,
                  struct policy_usage *usage, char *err, size_t errlen);
};

void policy_action_clear(struct policy_action *a);   /* frees members; accepts NULL */
void policy_eval_clear(struct policy_eval *e);
void policy_answer_clear(struct policy_answer *a);

#endif
