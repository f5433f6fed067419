/*
 * model: the front end's own picture of the search, built only from the
 * worker's events (evq.h) or, for --replay, loaded from a transcript. No
 * curses here: the panes read the model, the main loop feeds it, and the
 * unit test drives it with hand-made events.
 *
 * The tree is kept as a struct mcts_tree mirror (ids dense, parents before
 * children, as the worker numbers them), so the best path is computed by the
 * engine's own rule (search_best_trajectory) and an export is an ordinary
 * transcript. Evidence travels only as its rendering; the spans are
 * recovered from its 'path:start-end  label' headers and the lines under
 * them (ui_span_header), which is also what tells the best-path rule that a
 * node holds evidence. Every UCT score of every selection arrives as its own
 * event (EVQ_UCT), so the mirror holds the engine's UCT history and the panes
 * show the numbers the transcript records (mcts_last_mark). What events do
 * not carry stays empty in the mirror: per-node tokens and timings, the
 * rationale. A replayed transcript has all of it.
 *
 * Beside the tree the model keeps what only the front end needs: which
 * subtrees are folded (by node id, so a rebuilt row list keeps them), the
 * search state and indexing progress, token totals, the newest node, the
 * answer and its citations, and the last log line.
 *
 * Ownership: the model owns its tree, answer, config and strings.
 */
#ifndef DRQA_UI_MODEL_H
#define DRQA_UI_MODEL_H

#include "evq.h"
#include "mcts.h"
#include "search.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* What an event changed, for the panes' redraw flags. */
#define UI_DIRTY_TREE 1
#define UI_DIRTY_NODE 2       /* the selected node's panes (node, evidence) */
#define UI_DIRTY_ANSWER 4
#define UI_DIRTY_STATUS 8
#define UI_DIRTY_MESSAGE 16
#define UI_DIRTY_LAYOUT 32    /* pane sizes change (the answer appeared or went) */
#define UI_DIRTY_ALL 63

struct ui_model {
    struct mcts_tree *t;           /* never NULL after init */
    struct search_answer *answer;  /* NULL until the search answered */
    cJSON *config;                 /* a replayed transcript's configuration, or NULL */
    int max_expand;
    double c;
    unsigned long long seed;
    int iterations_total;          /* N of "iteration i/N" */

    unsigned char *folded;         /* by node id */
    int folded_cap;

    enum evq_state state;
    long long progress_done, progress_total;   /* indexing */
    char *state_text;
    long long tokens_in, tokens_out;
    int iteration;                 /* of the newest node */
    int newest;                    /* the newest node (the one being expanded), or -1 */
    int searches;                  /* questions begun (EVQ_QUESTION count) */
    char *message;                 /* the last log line, or NULL */
    int message_node;

    int *best;                     /* the current best path, root first */
    size_t nbest;
    int best_finished;
    int best_stale;

    /* The answer while the model writes it (EVQ_ANSWER_DELTA), until its
     * EVQ_ANSWER replaces it: the text since it was last written again, how
     * often it was, and for the status line's rate the bytes (text and
     * reasoning) after the first piece and the times of the first and the
     * latest piece (ms). stop_asked: the front end asked to stop it. */
    struct ui_writing {
        int active;
        struct buf text;
        int rewrites;
        int reasoning_only;        /* only reasoning has come since the last reset */
        long long bytes;
        int64_t t_first, t_last;
        int stop_asked;
    } writing;
};

void ui_model_init(struct ui_model *m, const char *question, int max_expand, double c,
                   unsigned long long seed, int iterations_total);
/* Takes ownership of tree, answer (may be NULL) and config (may be NULL). */
void ui_model_init_replay(struct ui_model *m, struct mcts_tree *tree, struct search_answer *answer,
                          cJSON *config);
void ui_model_free(struct ui_model *m);

/* Applies one event; returns the UI_DIRTY_* bits it affects. *node (may be
 * NULL) receives the node the event was about, or -1. */
int ui_model_apply(struct ui_model *m, const struct evq_event *e, int *node);

/* The rate the answer is written at, estimated in tokens a second (4 bytes
 * a token: pieces need not be tokens): 1 and *tok_s once pieces have come
 * over at least a fifth of a second, else 0. */
int ui_model_writing_rate(const struct ui_model *m, double *tok_s);

/* The best path (cached until the tree changes); 1 in *finished when it ends
 * on a finished node. */
const int *ui_model_best(struct ui_model *m, size_t *n, int *finished);
int ui_model_on_best(struct ui_model *m, int id);

/* Visible rows of the tree in depth-first order (children in creation
 * order), skipping the descendants of folded nodes. Returns the count; *rows
 * is caller-freed. */
size_t ui_model_rows(const struct ui_model *m, int **rows);
/* Every node in the same order, folded subtrees included (the rows they
 * would have unfolded). */
size_t ui_model_order(const struct ui_model *m, int **rows);
int ui_model_folded(const struct ui_model *m, int id);
void ui_model_set_folded(struct ui_model *m, int id, int folded);
/* Unfolds every ancestor of id so that it is visible. */
void ui_model_reveal(struct ui_model *m, int id);

/* The node's action name and its key argument, e.g. "FindClass Flask"
 * (caller frees); "question" for the root, "(planning)" before a plan. */
char *ui_model_label(const struct ui_model *m, int id);
/* The node's key argument, one line (caller frees), or NULL when it has
 * none (the root, a Finish, a node before its plan), with " in PATTERN" when
 * the action is limited to files (file_pattern). ViewCode's is the span it
 * reads, path:start-end (' +N' when it reads N more). */
char *ui_model_arg(const struct ui_model *m, int id);
/* The status word shown for a node: pending, running, done, finished,
 * pruned, error, duplicate, forced, refused (a Finish not run). */
const char *ui_model_status_word(const struct mcts_node *n);
/* 1 when the node's action, arguments, report, evidence, feedback or error
 * contains needle (ASCII case-insensitive). */
int ui_model_match(const struct ui_model *m, int id, const char *needle);

/* 1 when s[0..len) starts with a span header 'path:start-end' (path without
 * spaces, 1 <= start <= end, then the end of the line or a space): the path's
 * length and the lines. */
int ui_span_header(const char *s, size_t len, size_t *pathlen, int *start, int *end);

/* The search's clock: the time it spent searching, from its question on. It
 * stops while the search is paused and while it is done, and goes on when a
 * prune or an expansion resumes a finished search, without counting the
 * time it stood done. */
struct ui_clock {
    int64_t start;      /* ms of the question; 0 before any */
    int64_t stopped;    /* ms not counted so far (paused or done) */
    int64_t since;      /* ms when the current stop began, or 0 while it runs */
};
/* Feeds one event at time now (ms): a question starts the clock (stopped if
 * state is paused), a state stops or starts it. */
void ui_clock_event(struct ui_clock *c, const struct evq_event *e, enum evq_state state, int64_t now);
/* The ms searched by now, or -1 before any question. */
int64_t ui_clock_elapsed(const struct ui_clock *c, int64_t now);

/* mkdir -p dir, owner-only for what it creates; -1 with a message. */
int ui_make_dirs(const char *dir, char *err, size_t errlen);

/* Writes the transcript (JSON and Markdown) into dir as
 * drqa-YYYYmmdd-HHMMSS-HASH-export.{json,md} (the suffix keeps it from
 * replacing the worker's own transcript of the same second); the paths are
 * returned (caller frees).
 * stamp NULL: the local time. Returns 0, or -1 with a message. */
int ui_model_export(const struct ui_model *m, const char *dir, const char *stamp, char **json_path,
                    char **md_path, char *err, size_t errlen);

#endif
