/*
 * worker: the thread that owns a search. It runs iterations while not paused,
 * reads commands (cmdq) between iterations and blocks on them while paused or
 * idle, and reports everything it does as events (evq) carrying node ids and
 * copied strings, never pointers into its tree. When a search ends it builds
 * the answer, posts it, and writes the transcript (JSON and Markdown) when a
 * transcript directory is set.
 *
 * Per-thread resources (its own sqlite connection, its LLM clients) are the
 * caller's business: the worker calls hooks.open in its own thread before the
 * first search to obtain the policy, executor and curator, and hooks.close
 * after the last. All signals are blocked in the worker thread so that the UI
 * thread alone handles SIGINT, SIGWINCH and friends.
 *
 * Commands: pause; resume; step (one iteration, also with search.parallel =
 * K > 1, then paused; refused with a log line when there is nothing to step); prune id; expand id (next iteration
 * expands it; resumes a search that stopped on Finish or by the user);
 * commands are read between steps, so with K > 1 they apply between batches;
 * finish (stop and answer now); new question (drops
 * the current search, starts another with the same settings); export dir
 * (writes the transcript of the search as it stands, the engine's own tree
 * with everything it records, refused while no question was asked); quit. Every
 * pause and resume is acknowledged by a state event, and a refused command by
 * a log event naming the reason.
 */
#ifndef DRQA_WORKER_H
#define DRQA_WORKER_H

#include "evq.h"
#include "policy.h"
#include "search.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>

struct worker_hooks {
    void *ctx;
    /* In the worker thread: open per-thread resources (and index, posting
     * EVQ_STATE indexing progress to events if it likes), then fill the
     * policy, executor and curator (their ctx pointers stay the hook's) and
     * adjust the search settings (its on_event and event_ctx are kept).
     * cancel becomes 1 when the worker is being stopped: LLM clients should
     * check it (e.g. from curl's progress callback) to abort a request in
     * flight. NULL open: the ones in worker_config are used. */
    int (*open)(void *ctx, struct evq *events, const atomic_int *cancel, struct search_config *search,
                struct policy *policy, struct policy_executor *executor, struct policy_curator *curator,
                char *err, size_t errlen);
    void (*close)(void *ctx);   /* in the worker thread at exit; may be NULL */
    /* In the worker thread once a search has its answer: NULL, or what to
     * say of damage the search met in the index (its reads failed, so the
     * answer lacks what they were for), malloc'd. rechecked 0: the worker
     * says it instead of giving that answer, closes and opens again (close,
     * then open, which should check the index and rebuild it) and asks the
     * question again; 1 (asked again so): it is said beside the answer.
     * May be NULL. */
    char *(*damage)(void *ctx, int rechecked);
    /* In the worker thread before a question's search: 0 to search it, or
     * nonzero with err set when it cannot be (nothing to look for): the
     * worker says err and keeps the search it has. May be NULL. */
    int (*refuse)(void *ctx, const char *question, char *err, size_t errlen);
};

struct worker_config {
    struct search_config search;      /* on_event and event_ctx are replaced */
    struct policy policy;             /* used when hooks.open is NULL */
    struct policy_executor executor;
    struct policy_curator curator;
    struct worker_hooks hooks;
    const char *question;             /* NULL: idle until a new-question command */
    int start_paused;
    const char *transcript_dir;       /* NULL: no transcripts */
    const cJSON *transcript_config;   /* written into transcripts (filtered); may be NULL */
};

struct worker;

/* Copies cfg (strings and JSON included) and starts the thread. The queues
 * are borrowed and must outlive the worker. */
int worker_start(struct worker **out, const struct worker_config *cfg, struct evq *events,
                 struct cmdq *commands, char *err, size_t errlen);
/* Sets the cancel flag, pushes quit and waits for the thread; returns 0.
 * Safe to call twice. */
int worker_stop(struct worker *w);
/* The flag handed to hooks.open; 1 once worker_stop began. */
const atomic_int *worker_cancel_flag(const struct worker *w);
/* Stops the answer being written (from any thread): the connection is
 * closed at its next piece, and the part written so far is the answer,
 * marked as stopped (search_answer.stopped). While the worker answers, its
 * pieces go out as EVQ_ANSWER_DELTA events; a stop asked before the answer
 * began applies to it. No-op for a policy that writes its answer at once. */
void worker_stop_answer(struct worker *w);
/* Stops the worker if still running and frees it; accepts NULL. */
void worker_free(struct worker *w);

#endif
