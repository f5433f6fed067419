/*
 * ui: what the curses front end's files share. The front end is one struct
 * ui owned by the UI thread (the only thread that calls curses): the model of
 * the search (model.h), the panes, the line editor, the open file view, and
 * the queues to the search worker.
 *
 * Each pane is a file of its own (pane_*.c) behind struct pane_ops: draw
 * fills its window from the model, command reacts to a key's command while
 * the pane has the focus, click to a mouse press. Handlers change state and
 * mark panes dirty (ui_dirty); only the main loop draws, and it draws only
 * the dirty panes, then calls doupdate() once.
 */
#ifndef DRQA_UI_UI_H
#define DRQA_UI_UI_H

#include "evq.h"
#include "history.h"
#include "keymap.h"
#include "model.h"
#include "cli_opts.h"
#include "text.h"
#include "util.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <stdint.h>

struct ui;
struct pane;

struct pane_ops {
    const char *name;
    void (*draw)(struct ui *ui, struct pane *p);
    /* A command while focused; 1 when it was handled. May be NULL. */
    int (*command)(struct ui *ui, struct pane *p, enum ui_cmd cmd);
    /* A click at window row y, column x. May be NULL. */
    void (*click)(struct ui *ui, struct pane *p, int y, int x);
};

enum pane_id {
    PANE_TREE, PANE_NODE, PANE_EVIDENCE, PANE_ANSWER, PANE_FILE, PANE_HELP, PANE_STATUS,
    PANE_INPUT, PANE_COUNT
};

struct pane {
    const struct pane_ops *ops;
    WINDOW *win;           /* NULL while hidden */
    int y, x, h, w;
    int dirty;
    int top;               /* first content row shown */
    int cursor;            /* pane-specific: citation index in the answer pane */
    int nrows;             /* content rows at the last draw (scroll bounds) */
    int follow_cursor;     /* keep the cursor row in view (cleared by scrolling) */
};

/* Colours and their monochrome stand-ins, by role. */
enum ui_role {
    R_NORMAL, R_TITLE, R_TITLE_FOCUS, R_CURSOR, R_BEST, R_RUNNING, R_FINISHED, R_PRUNED,
    R_ERROR, R_HEADER, R_LINENO, R_SPAN, R_STATUS, R_MESSAGE, R_DIM, R_MATCH, R_MATCH_CUR, R_ROLE_COUNT
};

/* Messages kept in full for the help screen. */
#define UI_RECENT 20

enum ui_edit { EDIT_NONE, EDIT_ASK, EDIT_FIND, EDIT_CONFIRM_QUIT };

/* Key codes defined for the start and end of a bracketed paste. */
#define UI_KEY_PASTE_BEGIN (KEY_MAX + 1)
#define UI_KEY_PASTE_END (KEY_MAX + 2)

/* A document of display rows (already safe and wrapped) for the text panes. */
struct doc_row {
    char *text;            /* safe text */
    int role;
    int tag;               /* pane-specific: citation number (1-based) in the answer */
};
struct doc {
    struct doc_row *v;
    size_t n, cap;
};

struct ui {
    const struct drqa_opts *o;
    struct ui_model m;
    int replay;
    int text_flags;        /* TEXT_ASCII when the terminal's locale is not UTF-8 */

    struct pane panes[PANE_COUNT];
    int focus;             /* PANE_TREE .. PANE_ANSWER, or PANE_FILE while open */
    int selected;          /* the node at the tree cursor */
    int follow;            /* the cursor follows the newest node */
    int asked;             /* 1: a question asked here awaits its search's first state; 2: it has come */
    int help_open;
    int zoom;              /* the focused pane alone fills the screen (z) */
    int quit;
    int layout_stale;
    int *tree_shown;       /* node ids of the tree pane's rows as drawn (pinned ancestors first) */
    int tree_nshown;

    /* line editor (question, search, quit confirmation); text is UTF-8 */
    enum ui_edit edit;
    struct buf line;
    size_t line_pos;       /* byte offset of the cursor */
    int pasting;           /* inside a bracketed paste */
    struct ui_history hist;    /* the questions asked, across runs (Up/Down) */
    char *find;            /* the last search text */
    char *msg;             /* the front end's own message; overrides the log line */
    int msg_error;
    int msg_transient;     /* msg announces a command: gone once the state changes */
    char *recent[UI_RECENT];   /* the last messages in full, oldest first (the help screen's end) */
    int nrecent;

    /* file view of a cited span */
    char *file_path;
    int file_start, file_end;
    char *file_text;       /* the indexed text, or a message */
    size_t *file_lines;    /* offsets of line starts */
    int file_nlines;
    int file_hscroll;      /* columns scrolled right while long lines are cut */
    int file_wrap;         /* long lines wrap instead of being cut (W; kept across files) */
    int file_find_on;      /* the search text's matches in the file are highlighted */
    long file_match;       /* byte offset of the current match, or -1 */
    int find_file;         /* the search line being edited searches the file view */
    int file_from;         /* the pane focused when the file view opened; Esc goes back to it */
    sqlite3 *db;           /* read-only index connection, opened on first use */
    char *index_path, *repo_abs;

    /* status line */
    char *repo_name;
    char provenance[48];        /* '@' and HEAD's short commit, '*' when the tree differs; "" outside git */
    char policy_line[256];
    const char *fixed_elapsed;  /* shown instead of the clock (a test hook, test_hooks.h) */
    struct ui_clock clock;      /* the time searched: stops while paused or done */
    char shown_elapsed[32];

    attr_t attrs[R_ROLE_COUNT];

    struct evq *ev;
    struct cmdq *cmd;
    struct worker *worker;
    char *export_dir;
    struct llm_usage *usage;   /* the run's model-call ledger (session.c; locked inside), or NULL */
};

struct llm_usage;

extern const struct pane_ops pane_tree_ops, pane_node_ops, pane_evidence_ops, pane_answer_ops,
    pane_file_ops, pane_help_ops, pane_status_ops, pane_input_ops;

/* ui_main.c */
void ui_dirty(struct ui *ui, int pane);
void ui_dirty_all(struct ui *ui);
void ui_message(struct ui *ui, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Keeps a copy of a message among ui->recent (the oldest goes). */
void ui_remember(struct ui *ui, const char *text);
/* 0 when TERM names a terminal that addresses the cursor, else -1 with a
 * message saying what to do (termcheck.c). */
int ui_terminal_usable(char *err, size_t errlen);

/* navigate.c: what the panes and the main loop both call to move the user */
/* Selects node id in the tree; by_user stops following the newest node. */
void ui_select(struct ui *ui, int id, int by_user);
/* Opens the span of the answer's citation index in the file view. */
void ui_open_citation(struct ui *ui, size_t index);
/* Opens lines start_line..end_line of the indexed file path in the file view
 * (a message when the index does not hold it). */
void ui_open_span(struct ui *ui, const char *path, int start_line, int end_line);
/* Closes the file view, the focus back on the pane it was opened from. */
void ui_close_file(struct ui *ui);

/* draw.c: the roles' attributes and safe drawing helpers */
/* Sets ui->attrs for every role (after initscr). */
void draw_init_attrs(struct ui *ui);
attr_t ui_attr(const struct ui *ui, enum ui_role r);
/* Draws raw text (made safe here) at y, x in at most w columns. */
void draw_text(struct ui *ui, WINDOW *win, int y, int x, int w, const char *raw, enum ui_role r);
/* Draws safe text; returns the columns used. */
int draw_safe(WINDOW *win, int y, int x, int w, const char *s, size_t len, attr_t a);
/* The pane's title row: name, then info right-aligned. */
void draw_title(struct ui *ui, struct pane *p, const char *title, const char *info);
void doc_clear(struct doc *d);
/* Adds raw text split at newlines, made safe and wrapped at width (rows after
 * the first of each line are indented by indent columns). */
void doc_add(struct ui *ui, struct doc *d, const char *raw, int width, int indent, int role, int tag);
/* Draws rows [p->top, p->top + rows) of d below the title; clamps p->top. */
void doc_draw(struct ui *ui, struct pane *p, const struct doc *d, int tag_highlight);
/* Moves p->top for a scrolling command; 1 when cmd was a scroll. */
int pane_scroll(struct pane *p, enum ui_cmd cmd);
/* The same for a pane whose last top row is max (rows that are not p->nrows). */
int pane_scroll_max(struct pane *p, enum ui_cmd cmd, int max);

/* pane_tree.c: the short name of an action for a narrow tree (FindClass ->
 * Class), or NULL when it has none; the table as help lines. */
const char *tree_action_abbrev(const char *action);
void tree_abbrev_legend(struct buf *out);

/* pane_file.c: moves to the next (dir 1) or previous (-1) match of ui->find
 * in the file view, in reading order, wrapping around with a message; fresh
 * starts from the top line in view (a new search text). Highlights the
 * matches. */
void file_find(struct ui *ui, int dir, int fresh);
/* Back to the file view's start state for a newly opened file. */
void file_view_reset(struct ui *ui);

/* pane_status.c: the elapsed time as shown ("mm:ss", or DRQA_TUI_ELAPSED) */
void status_elapsed(struct ui *ui, char *out, size_t n);

#endif
