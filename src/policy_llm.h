/*
 * policy_llm: the paper's four agents played by a chat model (section 3.3),
 * behind the role interface of policy.h, plus the LLM stage of evidence
 * curation as a policy_curator:
 *
 *   perceive  the Perception Agent: a short situational report (redundant
 *             work, promising regions seen but not opened, gaps and
 *             conflicts, candidate names) from the root-to-node path with
 *             its span headers, the curated code of the last two steps, the
 *             siblings' attempts and the files/symbols seen but not opened;
 *   plan      the Planning Agent: {"rationale", "action", "args"} following
 *             action_schema_json(), told the question's literal identifiers
 *             (F1), the path's span headers and the siblings' actions;
 *   curate    the Evidence Filter: the rule-based curation (curate.h) ranks
 *             and compresses the raw result; the model is shown every span
 *             of it (the ranked ones first, each header with its first
 *             lines) and the action with its arguments, and picks the spans
 *             that matter as {path, start_line, end_line}; every triple is
 *             checked against the raw result and one that no raw span covers
 *             is dropped, never invented; the kept text is cut from the raw
 *             span; an empty choice keeps the best-ranked candidate, noted.
 *             A small result (under filter_min_bytes) is kept without
 *             asking: there is nothing to choose from;
 *   evaluate  the Evaluation Agent: a value 0-100 and a one-line suggestion,
 *             from the step's observation and the path's span headers (for
 *             a Finish: the code read on its path);
 *   answer    answer synthesis at temperature 0, in plain Markdown citing
 *             `path:start-end`, from the trajectory's evidence ranked by
 *             relevance and step value (whole spans within caps.evidence);
 *             a citation that no span of the trajectory covers, an answer
 *             citing nothing, or one that clearly does not address the
 *             question's type (what/where/how/why) is re-asked once with the
 *             list of valid spans; citations still invalid are then removed
 *             from the text;
 *   rollout   the fallback policy's cheap value, when it has one.
 *
 * Exploration roles run at explore_temperature (0.7, paper 4.5), the answer
 * at answer_temperature (0). Each role's static text (the part of its
 * template before the "----- request -----" line) is its system prompt,
 * rendered once, byte-identical on every call, so servers can keep it in
 * their prefix cache; the rest is the per-call request. That request begins
 * with a head that is the same for every call of a question (the question,
 * its type and identifiers, and the repository outline that
 * llm_policy_config.outline builds once per question, sized so that the
 * cached prefix reaches the model's minimum cacheable length), which a
 * prompt cache keeps too (llm_request.cache_prefix).
 *
 * Structured output. Every role but the answer asks for one JSON object,
 * with its schema (llm_request.schema: the transport sends it the server's
 * way, llm.h), takes the first object of the reply that passes the role's
 * check (jsonx), coercing the common slips with a note each. An unusable
 * reply is re-asked with the problem (the bad reply, capped, and the message
 * go back to the model), up to max_attempts replies in all; then the step
 * takes the fallback policy's decision (the offline policy in the program;
 * the rule-based curation for the filter).
 *
 * Failed calls (after the client's own retries), by the transport's kind:
 * transient ones (network, 429, 5xx, a garbled reply, an error body sent
 * with status 200, a refusal) take the fallback's
 * decision for that role; a request over the context window is rendered
 * again with the caps cut (caps_for) and sent once more; persistent ones
 * (auth, unknown model, refused parameters, other 4xx, or a connection
 * refused, reset or cut short before any call of the run succeeded, or the
 * same failure LLM_POLICY_SAME_FAILURES times in a row with no call of the
 * run answered) fail the role with
 * policy_usage.fail_kind POLICY_FAIL_PERSISTENT, and the engine stops the
 * search. The answer call is asked once more after a transient failure.
 * Every fallback decision is marked in policy_usage (fallback, notes: "planning:
 * the model call failed (...); used the offline plan"), which the engine
 * keeps on the node, and in the log and the question's notes. Model output
 * never crashes the policy: sizes are capped, types checked, numbers ranged.
 *
 * Token use. Every prompt is rendered with byte caps (trajectory, siblings,
 * observations, raw results, evidence) so a question's input stays bounded;
 * struct llm_policy_caps lists them. Tokens are accounted per role tag
 * ("perception", "planning", "filter", "evaluation", "answer") for the
 * current question (reset when the question changes) and, when given, in a
 * run-wide ledger; every call also reports them through policy_usage.
 *
 * The API key is the backend's business: nothing here sees, logs or stores it.
 *
 * Threads: one llm_policy serves one question at a time, and its roles and
 * its curator are thread-safe for that question: parallel expansion
 * (search.h, policy_thread_safe and curator_thread_safe) may call them from
 * several threads at once; the model calls then overlap, while the fallback
 * policy is only ever called by one thread at a time. The notes are to be
 * read when no call is in flight. The backend may be shared. Ownership: the backend, the fallback policy and the
 * run ledger are borrowed and must outlive the policy.
 */
#ifndef DRQA_POLICY_LLM_H
#define DRQA_POLICY_LLM_H

#include "llm.h"
#include "policy.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>

#define LLM_POLICY_EXPLORE_TEMPERATURE 0.7
#define LLM_POLICY_ANSWER_TEMPERATURE 0.0
#define LLM_POLICY_ATTEMPTS 3              /* one reply and two re-asks */
#define LLM_POLICY_SAME_FAILURES 3         /* the same failure this many times, no call of the run
                                            * answered: persistent (the search stops) */
#define LLM_POLICY_OUTLINE_MAX 32768       /* bytes: the outline's ceiling whatever the minimum */

/* The roles of src/llm_roles.def, in its order. */
enum llm_role {
#define LLM_ROLE(id, ...) LLM_ROLE_##id,
#include "llm_roles.def"
    LLM_ROLE_N
};

/* The role's name in llm_roles.def ("perception", ...): its prompt file
 * name and usage tag. */
const char *llm_role_name(enum llm_role r);

/* Byte caps of the rendered prompt parts; 0 takes the default shown. */
struct llm_policy_caps {
    size_t trajectory;     /* path steps with span headers (perception, planning): 1200 */
    size_t steps;          /* path steps with span headers (evaluation, answer): 1000 */
    size_t siblings;       /* 400 */
    size_t leads;          /* 400 */
    size_t report;         /* perception report in the planning prompt: 700 */
    size_t recent;         /* curated text of the last two steps (perception): 1600 */
    size_t observation;    /* a node's curated observation (evaluation): 1500 */
    size_t raw;            /* every candidate's header and first lines (filter): 3600 */
    size_t evidence;       /* ranked evidence given to the answer, whole spans: 20000;
                            * half of it for a Finish's evaluation */
    size_t span;           /* any one span's text in the answer prompt: 2400 */
    size_t reply_echo;     /* a bad reply sent back with a re-ask: 1200 */
    int no_outline;        /* leave the repository outline out (a request shortened for a
                            * context window, or once the window is known to be small) */
};

struct llm_policy_config {
    struct llm_backend *backend;       /* required; borrowed */
    struct llm_backend *role_backend[LLM_ROLE_N];   /* a role's own model (NULL: backend); borrowed */
    const struct policy *fallback;     /* used for a step whose replies are unusable; may be NULL
                                        * (the step then fails); borrowed, copied */
    struct llm_usage *run_usage;       /* optional run-wide ledger; borrowed */
    double explore_temperature;        /* < 0: LLM_POLICY_EXPLORE_TEMPERATURE */
    double answer_temperature;         /* < 0: LLM_POLICY_ANSWER_TEMPERATURE */
    int max_attempts;                  /* replies per role call; <= 0: LLM_POLICY_ATTEMPTS */
    int max_tokens;                    /* reply limit per call; <= 0: the configured one */
    int no_semantic;                   /* SemanticSearch is neither offered nor accepted */
    long long curate_budget;           /* tokens kept by the rule-based curation; 0: 1500 */
    long filter_min_bytes;             /* ask the filter only above this rendering size;
                                        * 0: 1200; < 0: always ask */
    const char *const *prompt_dirs;    /* NULL: prompt_default_dirs() */
    size_t nprompt_dirs;
    struct llm_policy_caps caps;
    atomic_int *cancel;                /* optional, passed to every request */
    /* optional: the repository outline for a question within budget bytes
     * (caller frees; NULL: none), called once per question from whichever
     * role thread asks first, to fill {{outline}} in every role's stable
     * head; outline.h builds it from the index */
    char *(*outline)(void *ctx, const char *question, size_t budget);
    void *outline_ctx;
};

/* Zeroes c and sets the documented defaults (temperatures, attempts). */
void llm_policy_config_init(struct llm_policy_config *c);

struct llm_policy;

/* Loads and checks the five prompts (prompt.h). NULL with err naming the file
 * when one is missing or uses an unknown placeholder, or no backend is given. */
struct llm_policy *llm_policy_new(const struct llm_policy_config *cfg, char *err, size_t errlen);
void llm_policy_free(struct llm_policy *p);   /* accepts NULL */

/* Fills a policy struct (name "llm") whose ctx is p. rollout is set only when
 * the fallback has one. */
void llm_policy_bind(struct llm_policy *p, struct policy *out);
/* Fills a curator whose ctx is p: the filter role described above. */
void llm_policy_curator(struct llm_policy *p, struct policy_curator *out);

/* Tokens of the current question: role NULL gives the total. Returns 0, or
 * -1 when that role made no call. */
int llm_policy_tokens(struct llm_policy *p, const char *role, long *input, long *output);
/* llm_usage_json of the current question (caller deletes). */
cJSON *llm_policy_usage_json(struct llm_policy *p);

/* The fallback notes of the current question, in order (borrowed, valid
 * until the next call on p). */
size_t llm_policy_notes(const struct llm_policy *p, const char *const **notes);

/* Who decided the current question: its model calls and the failed ones
 * (the question's ledger), whether the answer was the fallback's, and the
 * last failed call's message ("" when none failed). */
struct llm_policy_outcome {
    long calls, failed_calls;
    int answer_fallback;
    char last_error[512];
    long retried_calls;        /* calls whose request the transport sent again (a 429 or 5xx, a
                                * stalled or cut stream), whether or not they then succeeded */
    char last_retry[512];      /* why the last of them was sent again */
};
void llm_policy_outcome(struct llm_policy *p, struct llm_policy_outcome *out);

/* Calls made and milliseconds spent waiting for the model (all questions),
 * so callers can tell engine time from model time. */
void llm_policy_stats(struct llm_policy *p, long *calls, long long *model_ms);

/* ---- parts exposed for tests ---- */

/* Citations `path:start-end` (or `path:line`) found in Markdown text,
 * appended to out in order of appearance (text NULL). Returns the count. */
size_t llm_parse_citations(const char *text, struct evidence *out);

/* text without the citations that no span of seen covers (seen empty: every
 * citation), with their enclosing backticks; *removed counts them. The
 * answer role's last step, for other answer writers (modes_llm.h). Caller
 * frees. */
char *llm_strip_citations(const char *text, const struct evidence *seen, int *removed);

/* 1 when answer clearly fails to address a question of this type
 * ("what", "where", "how", "why"; anything else is not checked), with the
 * reason in why. */
int llm_answer_misses_type(const char *qtype, const char *answer, int ncites, char *why, size_t whylen);

/* The reply checks. Each reads the slips whose meaning is clear (see the
 * list in policy_llm.c: "class-name" for class_name, a string for a list, a
 * value on 0-1 ...) and appends a short note per coercion to notes (may be
 * NULL); a value copied from a prompt's example is refused, saying so. */
/* Checks a planning reply object; 0, or -1 with the message a re-ask sends.
 * On success *out holds the action (policy_action_clear it). */
int llm_check_plan(const cJSON *obj, int no_semantic, struct policy_action *out, struct policy_usage *notes,
                   char *err, size_t errlen);
/* Checks an evaluation reply; 0 with value and feedback (caller frees), or -1. */
int llm_check_eval(const cJSON *obj, double *value, char **feedback, struct policy_usage *notes, char *err,
                   size_t errlen);
/* Checks a perception reply; 0 with the rendered report (caller frees), or -1. */
int llm_check_perception(const cJSON *obj, char **report, struct policy_usage *notes, char *err, size_t errlen);
/* Checks a filter reply against the raw result: a listed span is kept when a
 * span of raw or of shown (the curated candidates the model saw, derived from
 * raw; may be NULL) covers it, its text cut from the covering span (a
 * verbatim one preferred; an elided covering span is kept whole). Appends the
 * kept spans to out and counts the dropped ones. -1 on a type problem or when
 * every listed span was outside the result (err lists the valid ranges). */
int llm_check_filter(const cJSON *obj, const struct evidence *raw, const struct evidence *shown,
                     struct evidence *out, int *dropped, struct policy_usage *notes, char *err, size_t errlen);

#endif
