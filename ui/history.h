/*
 * history: the question line's Up/Down history, kept across runs in the XDG
 * state directory (history.c). No curses.
 */
#ifndef DRQA_UI_HISTORY_H
#define DRQA_UI_HISTORY_H

#include <stddef.h>

#define UI_HISTORY_MAX 500

struct ui_history {
    char **v;        /* oldest first */
    int n, cap;
    int pos;         /* the entry on the line while browsing, or -1 */
    char *draft;     /* the line as typed before browsing began */
    char *aside;     /* a question cancelled unasked (Esc, C-c), newest of all; not in the file */
    char *path;      /* the file, or NULL (no HOME) */
};

/* $XDG_STATE_HOME/drqa-tui/history, else ~/.local/state/drqa-tui/history;
 * NULL without either (caller frees). */
char *ui_history_path(void);
/* Reads the file at path (may be NULL or missing: an empty history). */
void ui_history_load(struct ui_history *h, const char *path);
/* Adds a question and appends it to the file; -1 with a message when the
 * file cannot be written (the entry is still kept for this run). */
int ui_history_add(struct ui_history *h, const char *line, char *err, size_t errlen);
/* Up (dir -1) or Down (+1) from the line's current text: the text to put on
 * the line, or NULL when there is nothing to move to. Moving down past the
 * newest entry gives back the draft typed before browsing. */
const char *ui_history_move(struct ui_history *h, int dir, const char *current);
/* Keeps text, a question cancelled before it was asked, for this run only:
 * Up brings it back first, until it is asked or another is put aside. */
void ui_history_aside(struct ui_history *h, const char *text);
/* Browsing ends (the line was edited or closed). */
void ui_history_reset(struct ui_history *h);
void ui_history_free(struct ui_history *h);

#endif
