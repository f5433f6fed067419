/*
 * evq: the two queues between the search worker and the UI thread.
 *
 * Events (worker -> UI): small tagged structs that carry node ids and copied
 * strings, never pointers into the worker's tree. evq_post appends under a
 * mutex and writes one byte to a non-blocking wake pipe; the UI polls
 * evq_wake_fd() with stdin, then calls evq_drain_wake() and pops until the
 * queue is empty (draining first means no post can be missed). The queue
 * grows as needed; events come out in the order they were posted.
 *
 * Commands (UI -> worker): pause, resume, step, prune id, expand id, finish,
 * new question, quit. cmdq_push appends under a mutex and signals a condvar;
 * the worker pops without blocking between iterations and blocks in
 * cmdq_wait while paused or idle. Commands come out in push order.
 *
 * Ownership: a posted event or pushed command is copied into the queue (its
 * strings duplicated); a popped one belongs to the caller, who releases its
 * strings with evq_event_clear / cmdq_cmd_clear. Queues free what is left in
 * them when destroyed. Both are safe for any number of threads.
 */
#ifndef DRQA_EVQ_H
#define DRQA_EVQ_H

#include <stddef.h>

enum evq_kind {
    EVQ_QUESTION,      /* a new search begins: text is the question; the tree is
                          just the root (node 0) again */
    EVQ_NODE_ADDED,    /* node, parent, iteration */
    EVQ_NODE_UPDATED,  /* node, status, visits, q, value, flags; text: action
                          label; text2: the error, else the evaluation feedback */
    EVQ_REPORT,        /* node; text: perception report */
    EVQ_EVIDENCE,      /* node; text: rendered curated observation */
    EVQ_LOG,           /* node (or -1); text: a log line */
    EVQ_STATE,         /* state; a/b: progress done/total when indexing; text: detail */
    EVQ_ANSWER,        /* text: answer markdown; text2: citations, one "path:start-end"
                          a line; a: 1 when from a finished trajectory; b: 1 when it
                          was stopped while written (search_answer.stopped); text3:
                          the fallback policy that wrote it, or NULL
                          (search_answer.written_by) */
    EVQ_TOKENS,        /* a: input tokens, b: output tokens (totals so far) */
    EVQ_UCT,           /* one score of a selection (struct mcts_uct_mark): node,
                          iteration, uct: the score; a: 1 for UCT_new (the node as
                          a candidate for a new child); b: 1 when it won */
    EVQ_ANSWER_DELTA,  /* a piece of the answer as the model writes it (before its
                          EVQ_ANSWER): a: EVQ_DELTA_*; text: the piece (NULL for a
                          reset); b: its length in bytes */
};

/* EVQ_ANSWER_DELTA's kind (policy_answer_sink's): */
#define EVQ_DELTA_TEXT 0       /* answer text */
#define EVQ_DELTA_REASONING 1  /* the model's reasoning before or between its text */
#define EVQ_DELTA_RESET 2      /* the answer is written again: drop its text so far */

enum evq_state {
    EVQ_STATE_IDLE,
    EVQ_STATE_INDEXING,
    EVQ_STATE_SEARCHING,
    EVQ_STATE_PAUSED,
    EVQ_STATE_ANSWERING,
    EVQ_STATE_DONE,
    EVQ_STATE_ERROR,
};

const char *evq_kind_name(enum evq_kind k);
const char *evq_state_name(enum evq_state s);

#define EVQ_FLAG_DUPLICATE 1
#define EVQ_FLAG_FORCED 2
#define EVQ_FLAG_HAS_VALUE 4
#define EVQ_FLAG_FALLBACK 8      /* a role of the node was decided by the fallback policy */
#define EVQ_FLAG_REFUSED 16      /* a Finish the engine refused: not run */

struct evq_event {
    enum evq_kind kind;
    int node, parent;        /* -1 when not about a node */
    int iteration;
    int status;              /* enum mcts_status */
    int visits;
    int flags;               /* EVQ_FLAG_* */
    double q, value, uct;
    enum evq_state state;
    long long a, b;
    char *text;              /* owned by the event, may be NULL */
    char *text2;
    char *text3;             /* node events: the node's notes */
};

/* An event with node = parent = -1 and everything else zero. */
void evq_event_init(struct evq_event *e, enum evq_kind kind);
void evq_event_clear(struct evq_event *e);   /* frees the strings; accepts NULL */

struct evq;

/* Returns NULL with a message when the wake pipe cannot be made. */
struct evq *evq_new(char *err, size_t errlen);
void evq_free(struct evq *q);                /* accepts NULL */

/* Copies e (and its strings) into the queue and wakes the reader. */
void evq_post(struct evq *q, const struct evq_event *e);
/* Convenience: a log line or state change. */
void evq_post_log(struct evq *q, int node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void evq_post_state(struct evq *q, enum evq_state state, long long a, long long b, const char *text);
/* Moves the oldest event into *out; returns 1, or 0 when the queue is empty. */
int evq_pop(struct evq *q, struct evq_event *out);
size_t evq_pending(struct evq *q);
/* The read end of the wake pipe: readable when events may be waiting. */
int evq_wake_fd(const struct evq *q);
/* Reads every pending wake byte (non-blocking); returns how many. */
size_t evq_drain_wake(struct evq *q);

enum cmdq_kind {
    CMD_PAUSE,
    CMD_RESUME,
    CMD_STEP,           /* run one iteration, then stay paused */
    CMD_PRUNE,          /* node */
    CMD_EXPAND,         /* node: expand it next */
    CMD_FINISH,         /* stop and answer now */
    CMD_NEW_QUESTION,   /* text */
    CMD_QUIT,
    CMD_EXPORT,         /* text: a directory; the worker writes the transcript of its
                           search as it stands (-export suffix) and logs where */
};

const char *cmdq_kind_name(enum cmdq_kind k);

struct cmdq_cmd {
    enum cmdq_kind kind;
    int node;
    char *text;         /* owned, may be NULL */
};

void cmdq_cmd_clear(struct cmdq_cmd *c);     /* accepts NULL */

struct cmdq;

struct cmdq *cmdq_new(void);
void cmdq_free(struct cmdq *q);              /* accepts NULL */
/* text is copied (may be NULL). */
void cmdq_push(struct cmdq *q, enum cmdq_kind kind, int node, const char *text);
/* 1 and the oldest command in *out, or 0 when there is none. */
int cmdq_pop(struct cmdq *q, struct cmdq_cmd *out);
/* Blocks until a command arrives, then pops it. */
void cmdq_wait(struct cmdq *q, struct cmdq_cmd *out);
size_t cmdq_pending(struct cmdq *q);

#endif
