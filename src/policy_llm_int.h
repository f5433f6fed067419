/*
 * policy_llm_int: what the files of the LLM policy share (policy_llm*.c) and
 * nothing else includes: the policy's state, the role call and the helpers
 * that cross from one file to another. The public face is policy_llm.h.
 */
#ifndef DRQA_POLICY_LLM_INT_H
#define DRQA_POLICY_LLM_INT_H

#include "policy_llm.h"
#include "answer_stream.h"
#include "evidence.h"
#include "jsonx.h"
#include "mcts.h"
#include "prompt.h"
#include "qparse.h"
#include "util.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define MAX_ARG_BYTES 2000       /* a longer string argument in a plan is refused */
#define MAX_RATIONALE 400
#define MAX_FEEDBACK 300
#define MAX_REPORT_ITEM 200
#define MAX_REPORT_ITEMS 5
#define MAX_SUMMARY 600
#define MAX_ANSWER 16000
#define MAX_FILTER_SPANS 12
#define MAX_LEADS 8
#define SPANS_PER_STEP 4
#define NOTES_PREFIX_CAP 600     /* notes and listings of a raw result kept with the curated text */

struct llm_policy {
    struct llm_policy_config cfg;
    struct policy fallback;         /* copy; name NULL when none */
    int has_fallback;
    struct prompt *prompts[LLM_ROLE_N];
    char *system[LLM_ROLE_N];       /* each role's static text, rendered once (NULL: none) */
    struct prompt *request[LLM_ROLE_N];   /* each role's per-call template */
    char *stable_tail[LLM_ROLE_N];  /* where a request's stable head ends (stable_head_tail) */
    int head_outline[LLM_ROLE_N];   /* the outline is part of that head */
    char *actions_text;             /* the action schema as the planner sees it */
    cJSON *schema[LLM_ROLE_N];      /* each JSON role's reply schema, for structured output */

    char *question;                 /* the question the state below belongs to */
    struct qparse q;
    int have_q;
    char *outline;                  /* its repository outline (cfg.outline; NULL: none) */
    struct llm_usage usage;         /* this question */
    char **notes;
    size_t nnotes;

    long calls;                     /* all questions */
    long answered_calls;            /* calls that got a reply (all questions) */
    /* the run's failures while no call has been answered: how many in a row
     * were the same (kind and message), and the last one */
    int same_fails;
    enum llm_fail last_kind;
    char last_fail[512];
    /* this question: its last failed call's message, and whether the answer
     * was the fallback's */
    char q_last_error[512];
    char q_last_retry[512];     /* why the question's last call sent again (the ledger's retried_calls) was */
    int q_answer_fallback;
    int q_answer_cut;               /* the answer taken stopped at the model's output limit */
    long long model_ms;
    struct answer_stream stream;    /* the answer role's reader (policy.set_answer_sink) */

    /* Parallel expansion calls the roles from several threads at once (for
     * one question): lock guards the state above, fallback_lock serialises
     * the fallback policy, which need not be thread-safe. */
    pthread_mutex_t lock, fallback_lock;
};
/* Checks one reply object: 0 to use it, or -1 with the problem in err. A
 * coercion is noted in notes (a scratch record: kept only when the object is
 * used). */
typedef int (*reply_check)(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen);
/* A check of a reply that is text, not JSON (the answer role's Markdown). */
typedef int (*text_check)(void *ctx, const char *text, char *err, size_t errlen);

/* Why a model call failed, as the role decides what to do next:
 *   transient   the network or the server (timeouts, refused connections,
 *               429, 5xx, a garbled reply): the role takes the fallback
 *               policy's decision, and nothing is learnt of the evidence;
 *   context     the request is longer than the model's context window: the
 *               role shrinks it once and asks again;
 *   persistent  every later call would fail the same way (a bad key, an
 *               unknown model, a refused parameter): the search stops;
 *   cancelled   the user stopped the search. */
enum call_fail { CALL_FAIL_TRANSIENT, CALL_FAIL_CONTEXT, CALL_FAIL_PERSISTENT, CALL_FAIL_CANCELLED };
typedef void (*cite_fn)(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z);
/* One role's request rendered with the given caps (caller frees), or NULL
 * with err. ctx is the role's own state. */
typedef char *(*role_render)(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                             size_t errlen);

/* A role call: what converse needs, and what it says back. */
struct role_call {
    enum llm_role role;
    double temperature;
    reply_check check;        /* JSON roles */
    text_check tcheck;        /* the answer */
    void *cctx;
    char **reply_text;        /* optional: the reply that passed */
    char *prompt;             /* the last request sent (owned; role_call_done frees it) */
    char problem[1024], cerr[768];
    enum call_fail why;
};

/* The model a role talks to: its own (model.ROLE) or the main one. */
static inline struct llm_backend *backend_of(const struct llm_policy *p, enum llm_role role)
{
    return p->cfg.role_backend[role] ? p->cfg.role_backend[role] : p->cfg.backend;
}

static inline int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* policy_llm_render.c */
char *one_line(const char *s, size_t cap);
char *args_text(const cJSON *args, size_t cap);
void add_note(struct llm_policy *p, const char *note);
void forget_question(struct llm_policy *p);
void ensure_question(struct llm_policy *p, const char *question);
const char *outline_in(const struct llm_policy *p, const struct llm_policy_caps *c);
const char *qtype_name(const struct llm_policy *p);
char *render_actions(int no_semantic);
void chomp(struct buf *b);
char *trajectory_text(const struct mcts_tree *t, int upto, int spans, size_t cap);
char *siblings_text(const struct mcts_tree *t, int id, size_t cap);
char *leads_text(const struct mcts_tree *t, int id, size_t cap);
char *identifiers_text(const struct llm_policy *p);
void numbered_span(struct buf *b, const struct evidence_span *sp, size_t cap);
void build_schemas(struct llm_policy *p);
char *render_role(struct llm_policy *p, enum llm_role role, const struct prompt_var *vars, size_t n,
                  char *err, size_t errlen);
size_t stable_prefix(const struct llm_policy *p, enum llm_role role, const char *prompt);
int split_template(struct llm_policy *p, enum llm_role r, char *err, size_t errlen);

/* policy_llm_call.c */
int converse(struct llm_policy *p, enum llm_role role, const char *prompt, double temperature,
             int attempts, const char *prior_reply, const char *prior_feedback, reply_check check,
             text_check tcheck, void *cctx, char **reply_text, struct policy_usage *u, char *problem,
             size_t problen, char *err, size_t errlen, enum call_fail *why);
void fallback_used(struct llm_policy *p, enum llm_role role, int call_failed, const char *problem,
                   const char *source, const char *what, struct policy_usage *u, char *note, size_t notelen);
int failed_call(struct llm_policy *p, enum llm_role role, enum call_fail why, const char *cerr,
                int can_fall_back, struct policy_usage *u, char *problem, size_t problen, char *err,
                size_t errlen);
int ask_role(struct llm_policy *p, struct role_call *rc, role_render render, const void *rctx,
             struct policy_usage *u, char *err, size_t errlen);
void role_call_done(struct role_call *rc);
int run_role(struct llm_policy *p, struct role_call *call, role_render render, const void *rctx, const char *what,
             struct policy_usage *u, char *note, size_t notelen, char *err, size_t errlen);
int fallback_failed(const struct llm_policy *p, const struct role_call *call, const char *what, const char *ferr,
                    char *err, size_t errlen);

/* policy_llm_check.c */
void list_ranges(struct buf *b, const struct evidence *ev, size_t cap);
int has_exact(const struct evidence *ev, const char *path, int a, int z);
void scan_citations(const char *text, cite_fn fn, void *ctx);

/* policy_llm_roles.c */
int lp_perceive(void *ctx, const struct mcts_tree *t, int id, char **report, struct policy_usage *u,
                char *err, size_t errlen);
int lp_plan(void *ctx, const struct mcts_tree *t, int id, const char *report, struct policy_action *out,
            struct policy_usage *u, char *err, size_t errlen);
int lp_plan_fallback(void *ctx, const struct mcts_tree *t, int id, const char *report,
                     struct policy_action *out, struct policy_usage *u, char *err, size_t errlen);
int lp_evaluate(void *ctx, const struct mcts_tree *t, int id, struct policy_eval *out, struct policy_usage *u,
                char *err, size_t errlen);
int lp_rollout(void *ctx, const struct mcts_tree *t, int id, double *value, struct policy_usage *u, char *err,
               size_t errlen);
int lp_curate(void *ctx, const char *question, const char *action, const struct evidence *raw,
              const char *raw_text, struct evidence *curated, char **text, struct policy_usage *u, char *err,
              size_t errlen);

/* policy_llm_answer.c */
void trajectory_spans(const struct mcts_tree *t, const int *ids, size_t nids, struct evidence *out);
int lp_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
              struct policy_usage *u, char *err, size_t errlen);

#endif
