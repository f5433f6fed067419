/*
 * engine: the glue that answers one question headless. It builds
 *   - the executor: the action engine (action.h) on a connection of its own,
 *     with SemanticSearch refused under --no-semantic;
 *   - the curator: rule-based evidence curation (curate.h) within a budget;
 *   - the policy chosen by the configuration (llm_config.h);
 * and runs one question in a mode of the paper's Tables 2-3:
 *   mcts          Algorithm 1 (search.h) with the ablations of the options;
 *   direct        no repository context at all: without a model it can only
 *                 say so, and it does, citing nothing;
 *   rag-function  the top-10 function/class chunks by SemanticSearch;
 *   rag-window    the top-10 windows of 500 lines (50 overlapping) by BM25
 *                 over the question's terms, computed on the fly;
 * returning the answer, its citations (verified against the evidence the mode
 * saw), that evidence, and the statistics a batch line records.
 *
 * Threads: engine_shared_open() runs once in the main thread (it brings the
 * index up to date and registers SemanticSearch); then every thread opens
 * its own struct engine (its own read-only sqlite connection) and asks its
 * questions through it.
 */
#ifndef DRQA_ENGINE_H
#define DRQA_ENGINE_H

#include "evidence.h"
#include "flatrank.h"
#include "index.h"
#include "llm_config.h"
#include "policy.h"
#include "search.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>

struct action_ctx;

enum engine_mode { ENGINE_MCTS, ENGINE_DIRECT, ENGINE_RAG_FUNCTION, ENGINE_RAG_WINDOW };

#define ENGINE_RAG_TOP 10
#define ENGINE_WINDOW_LINES FLATRANK_LINES     /* rag-window's windows are the flat ranker's */
#define ENGINE_WINDOW_OVERLAP FLATRANK_OVERLAP
#define ENGINE_CURATE_BUDGET 4000   /* tokens (bytes / 4) of curated evidence per action */

/* Runs one action for a search step (struct policy_executor's execute, with
 * the action context and --no-semantic given): the spans go to raw, the
 * result's notes and listings to *text (the curator renders the spans it
 * keeps). SemanticSearch is refused when no_semantic is set. Returns 0, or
 * -1 with a message. */
int engine_execute_action(struct action_ctx *actx, int no_semantic, const char *name, const cJSON *args,
                          struct evidence *raw, char **text, char *err, size_t errlen);

/* The rule-based curator (struct policy_curator's curate): curate() within
 * ENGINE_CURATE_BUDGET, rendered as the raw text followed by each kept span
 * under its path:start-end header. ctx is unused. */
int engine_curate_rules(void *ctx, const char *question, const char *action, const struct evidence *raw,
                        const char *raw_text, struct evidence *curated, char **text,
                        struct policy_usage *usage, char *err, size_t errlen);

/* NULL or "" gives mcts. -1 on anything else. */
int engine_parse_mode(const char *s, enum engine_mode *out);
const char *engine_mode_name(enum engine_mode m);

struct engine_shared;
struct engine;
struct search_config;
struct llm_usage;

/* What a caller that owns the terminal (the front end) adds to the one
 * builder: the index update's progress, and a cancel flag that stops the
 * index update (the previous index stays as it was) and aborts model
 * requests in flight. Every member may be NULL. */
struct engine_hooks {
    void (*progress)(void *ctx, size_t done, size_t total);
    void *progress_ctx;
    /* the index update's phases (index_options.phase), then "vectors" while
     * SemanticSearch fits, loads or fetches its vectors; may be NULL */
    void (*phase)(void *ctx, const char *name);
    const atomic_int *cancel;
    struct llm_usage *usage;   /* counts the run's model calls (NULL: the engine's own) */
};

/* What the engine is asked to run with, as a front end gathers it (the
 * command line's, in src/cli_settings.c). Strings are borrowed. */
struct engine_settings {
    struct index_request index;      /* the repository and how its index is kept */
    struct config_overrides config;  /* the model configuration's first layer (llm_config.h) */
    struct search_config search;     /* iterations, budgets (budget_usd also limits the backends), ablations */
    const char *mode;                /* mcts, direct, rag-function or rag-window; NULL: mcts */
    int no_semantic;                 /* no SemanticSearch action; BM25 alone for rag-function */
    int quiet;                       /* no warnings on stderr */
};

/* Checks the settings (mode, policy), brings the index of set->index.repo up
 * to date and prepares SemanticSearch. set is copied; the strings it points
 * to must outlive the result. Returns 0, or -1 with a message naming what is
 * wrong; *usage is set to 1 when the fault is the caller's (a missing
 * repository, a bad mode), 0 otherwise. */
int engine_shared_open(const struct engine_settings *set, struct engine_shared **out, int *usage, char *err,
                       size_t errlen);
/* The same with hooks (may be NULL). */
int engine_shared_open_hooked(const struct engine_settings *set, const struct engine_hooks *hooks,
                              struct engine_shared **out, int *usage, char *err, size_t errlen);
/* The repository's absolute path and the index path the engine uses. */
const char *engine_repo_abs(const struct engine_shared *sh);
const char *engine_index_path(const struct engine_shared *sh);
void engine_shared_free(struct engine_shared *sh);   /* accepts NULL */
/* The line saying which policy answers (config_describe). */
const char *engine_policy_line(const struct engine_shared *sh);
const char *engine_policy_name(const struct engine_shared *sh);
/* The llm policy's chat model, or NULL with the offline policy. */
const char *engine_model_name(const struct engine_shared *sh);
enum engine_mode engine_mode_of(const struct engine_shared *sh);

/* One per thread. Returns 0, or -1 with a message. */
int engine_open(const struct engine_shared *sh, struct engine **out, char *err, size_t errlen);
/* The same with a cancel flag of this engine's own (NULL: the shared hooks'
 * flag): setting it aborts this engine's model requests in flight and no
 * other's, so a server running several questions at once stops only the
 * one its client gave up. */
int engine_open_cancel(const struct engine_shared *sh, const atomic_int *cancel, struct engine **out, char *err,
                       size_t errlen);
/* Brings the index of sh up to date again (the same options and hooks as
 * engine_shared_open_hooked; hooks may be NULL) and, when anything changed,
 * prepares SemanticSearch and the line postings for the new contents. One
 * caller at a time; engines open on sh read on meanwhile (each update is one
 * transaction, a rebuild is renamed into place when complete). *changed is
 * set to 1 when the index was written, *rebuilt when it is a new file (open
 * engines still read the old one: reopen them). Returns 0, or -1 with a
 * message. */
int engine_shared_refresh(struct engine_shared *sh, const struct engine_hooks *hooks, int *changed, int *rebuilt,
                          char *err, size_t errlen);
void engine_close(struct engine *e);   /* accepts NULL */
/* The engine's action context (its connection), for a front end that runs
 * actions by themselves as --action does (action_run); owned by e. */
struct action_ctx *engine_action_ctx(struct engine *e);

struct engine_result {
    char *question;
    char *answer;              /* Markdown; NULL when the question failed */
    struct evidence cites;     /* most important first, verified, with text */
    struct evidence evidence;  /* what the answer was drawn from, with text */
    const char *mode, *policy; /* static strings */
    const char *model;         /* the llm policy's chat model (borrowed from the engine); NULL offline */
    const char *repo_name;     /* the repository directory's own name (borrowed from the engine) */
    char commit[41];           /* HEAD's commit the index describes ("" outside git) */
    int dirty;                 /* ... and the indexed files differed from it */
    int iterations;
    long long tokens_in, tokens_out;
    long long wall_ms;
    char *stop_reason;         /* mcts: why the search stopped; else NULL */
    int fallback_steps;        /* mcts: steps a role of which the fallback policy decided */
    int failed_steps;          /* mcts: steps that failed (status error) */
    char *error;               /* NULL on success */
    cJSON *usage;              /* mcts with a model: the question's ledger (llm_usage_json); else NULL */
    char *damage;              /* the index was found damaged while answering (store_text_damage): the
                                * answer lacks what could not be read; NULL when nothing was */
    /* Who decided. answered_by: "model" (the llm policy's answer call),
     * "offline" (the offline policy: configured, or the llm policy's fallback),
     * NULL when there is no answer. model_calls and failed_calls are the
     * question's ledger (usage.total.calls and .failures). no_model: model
     * calls were made and none succeeded; error then says so with the last
     * reason, answer is NULL and the offline policy's answer, if any, is in
     * offline_answer. fallback_reason: why the last step fell back (NULL when
     * none did). verified_citations: citations of the answer verified
     * against the evidence (0 when none survived and only the trajectory's
     * best span is listed). */
    const char *answered_by;
    long model_calls, failed_calls;
    int no_model;
    char *offline_answer;
    char *fallback_reason;
    char *last_failure;        /* why the last failed model call failed (retried or not), or NULL */
    long retried_calls;        /* model calls whose request was sent again (llm_policy_outcome) */
    char *last_retry;          /* why the last of them was, or NULL */
    int verified_citations;
    char **cite_hashes;        /* cites.n hashes of each cited span's lines as the index holds them
                                * (recheck.h), NULL where the lines could not be read */
    int unwrapped;             /* the model's reply held the answer in a JSON object's "answer"
                                * string: answer is that string (search_answer.unwrapped) */
    int stopped;               /* the answer's reader (engine_ask_hooks.answer_sink) stopped it while it
                                * was written: answer is the part that had arrived and says so; its
                                * line then has "stopped": true */
};

/* The parts of the tree search --ask runs on e, for a caller that drives the
 * search itself (the front end): *sc from the options (with the cost budget
 * and the thread-safety of the policy), the policy (the LLM policy with its
 * fallback, or the offline policy), the executor and the curator, all owned
 * by e. The same options give the same search everywhere. */
void engine_search_parts(struct engine *e, struct search_config *sc, struct policy *pol,
                         struct policy_executor *ex, struct policy_curator *cu);

/* 0 when question has something to look for in e's index (a word, a name the
 * index defines however short, a quoted snippet); else -1 with err set, as
 * --ask refuses it ("the question '?' has no words to look for"). */
int engine_check_question(struct engine *e, const char *question, char *err, size_t errlen);

/* What reading e's index met damaged (store_text_damage: a search over it
 * lacks what could not be read), malloc'd, or NULL when nothing was. */
char *engine_damage(struct engine *e);
/* What is said of that damage (malloc'd), by --ask and the front end alike:
 * before the index is checked and the question asked again (rechecked 0),
 * or beside an answer that met it again after the check (rechecked 1). */
char *engine_damage_message(const char *damage, int rechecked);

/* Answers question. transcript_stem (may be NULL): for mcts, the search is
 * written to STEM.json and STEM.md. Returns 0, or -1 with r->error set (r is
 * always filled; engine_result_free it). */
int engine_ask(struct engine *e, const char *question, const char *transcript_stem, struct engine_result *r);

/* What a caller serving questions to other programs adds to one question:
 * the tree search's progress (after each node is valued: iterations done of
 * the maximum, and the best value so far, 0-100) and a cancel flag read
 * between steps: once set, the search stops (r->error says it was
 * cancelled) and no further step starts. Every member may be NULL. */
struct engine_ask_hooks {
    void (*progress)(void *ctx, int iterations, int max_iterations, double best_value);
    void *ctx;
    const atomic_int *cancel;
    /* The answer as it is written (policy_answer_sink; NULL: not wanted),
     * with its own context. */
    policy_answer_sink answer_sink;
    void *answer_ctx;
};
int engine_ask_hooked(struct engine *e, const char *question, const char *transcript_stem,
                      const struct engine_ask_hooks *hooks, struct engine_result *r);
void engine_result_free(struct engine_result *r);   /* accepts NULL */

/* The batch line: {"id","question","answer","citations":[{"path",
 * "start_line","end_line"}],"evidence":[{"path","start_line","end_line",
 * "text"}],"mode","policy",["model"],"repo_name","iterations","tokens":{"input",
 * "output"},"usage","wall_ms","stop_reason","fallback_steps","failed_steps","commit","dirty","error",
 * "answered_by","model_calls","failed_calls","verified_citations","uncited"} and, when no model
 * call succeeded, "offline_answer" (answer is then null); "last_failure" when a
 * model call failed (its reason), "retried_calls" and "last_retry" when the
 * transport sent calls again;
 * uncited is true when the answer has no verified citation;
 * model is the llm policy's chat model (absent offline), so that --report
 * and --judge tell the answers of two models apart;
 * commit and dirty are the index's provenance (null outside git);
 * each citation also carries text_hash (recheck.h: what --recheck compares);
 * usage (only with a model, mcts) is the per-role ledger of llm_usage_json,
 * cost included; stop_reason is null and the counts 0 outside mcts. evidence is the cited spans with their text
 * (what the answer quotes; identifier recall reads it, metrics.h);
 * repo_name is the repository directory's own name, the first component of
 * the cited paths when they are matched against gold files. id is copied
 * (NULL gives null). "stopped": true is added only when the answer's reader
 * stopped it (struct engine_result). Caller deletes. */
cJSON *engine_result_json(const struct engine_result *r, const cJSON *id);

/* The Markdown printed by --ask: the answer and a list of its citations;
 * under --policy llm an answer the offline policy wrote for the model comes
 * under a heading saying so. Caller frees. */
char *engine_result_markdown(const struct engine_result *r);

#endif
