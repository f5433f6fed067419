/*
 * keymap: the one table of the front end's keys. Each row names a command,
 * the keys bound to it (space-separated key names) and its help text; from it
 * come the command enum, the key lookup, the help screen and the man page's
 * KEYS section (keymap_man; tests/test_keymap compares it with
 * man/drqa-tui.1, so the three cannot drift apart).
 *
 * Key names: a printable character stands for itself ("j", "?", "/"); the
 * others are Up Down Left Right PgUp PgDn Home End Enter Tab BTab Esc Space
 * Backspace F1..F12 and C-x for Control-x. ui/ maps curses key codes to these
 * names (ui_key_name), so this file needs no curses and is tested alone.
 *
 * Which keys reach the table: in the tree and text panes all of them; while
 * the question or search line is being edited, the line editor takes the keys
 * first (Enter, Esc, Backspace, Delete, C-d, C-w, C-u, C-a, C-e, Home, End,
 * Left, Right, Up and Down for the question history, text and bracketed
 * pastes; the man page's DESCRIPTION lists them).
 */
#ifndef DRQA_UI_KEYMAP_H
#define DRQA_UI_KEYMAP_H

#include "util.h"

#include <stddef.h>

/* K(id, group, keys, help) */
#define UI_KEYMAP(K)                                                                               \
    K(DOWN, "Moving", "j Down", "move the cursor down (tree, citations) or scroll down")           \
    K(UP, "Moving", "k Up", "move the cursor up or scroll up")                                     \
    K(PAGE_DOWN, "Moving", "PgDn C-f", "one page down")                                            \
    K(PAGE_UP, "Moving", "PgUp C-b", "one page up")                                                \
    K(TOP, "Moving", "g Home", "to the first line")                                                \
    K(BOTTOM, "Moving", "G End", "to the last line")                                               \
    K(COLLAPSE, "Moving", "h Left", "collapse the subtree, or go to the parent node; file view: scroll left") \
    K(EXPAND, "Moving", "l Right", "expand the collapsed subtree; file view: scroll right")        \
    K(ACTIVATE, "Moving", "Enter Space", "tree: fold or unfold; answer: open the cited span; evidence: open the span in view") \
    K(FOCUS_NEXT, "Moving", "Tab", "focus the next pane (tree, node, evidence, answer)")          \
    K(FOCUS_PREV, "Moving", "BTab", "focus the previous pane")                                    \
    K(ZOOM, "Moving", "z", "show the focused pane alone on the whole screen, or all panes again")  \
    K(BEST, "Moving", "b", "jump to the best node (the end of the current best path)")            \
    K(FOLLOW, "Moving", "F", "let the cursor follow the node being expanded again")               \
    K(FIND, "Moving", "/", "search nodes by text (action, report, evidence, feedback); in the file view, search the file") \
    K(FIND_NEXT, "Moving", "n", "next match, in screen order (the tree's rows, the file's lines)") \
    K(FIND_PREV, "Moving", "N", "previous match, in screen order")                                 \
    K(PAUSE, "Search", "p", "pause the search, or resume it")                                     \
    K(STEP, "Search", "s", "run one iteration, then stay paused")                                 \
    K(PRUNE, "Search", "x", "prune the selected subtree (never selected again; after the answer, the answer is drawn again without it)")                  \
    K(FORCE, "Search", "e", "expand the selected node in the next iteration")                     \
    K(FINISH, "Search", "f", "finish now: answer from the best path so far")                      \
    K(ASK, "Search", "a", "ask a new question (the current search is dropped)")                   \
    K(EXPORT, "Other", "w", "export the transcript (JSON and Markdown)")                          \
    K(WRAP, "Other", "W", "file view: wrap long lines, or cut them again (marked at the edge)")  \
    K(CLOSE, "Other", "Esc", "close the file view (back to the pane it came from) or the help screen") \
    K(HELP, "Other", "? F1", "show this help")                                                    \
    K(REDRAW, "Other", "C-l", "redraw the screen")                                                \
    K(QUIT, "Other", "q", "quit (asks first while a search runs)")

enum ui_cmd {
    UI_CMD_NONE = -1,
#define UI_KEYMAP_ENUM(id, group, keys, help) UI_CMD_##id,
    UI_KEYMAP(UI_KEYMAP_ENUM)
#undef UI_KEYMAP_ENUM
    UI_CMD_COUNT
};

struct ui_keydef {
    enum ui_cmd cmd;
    const char *name;     /* the id as written in the table: "PAGE_DOWN" */
    const char *group;
    const char *keys;     /* space-separated key names */
    const char *help;
};

extern const struct ui_keydef ui_keymap[UI_CMD_COUNT];

/* The command bound to a key name, or UI_CMD_NONE. */
enum ui_cmd keymap_lookup(const char *key);
/* The help screen's lines (group headings, then "  keys    help"), appended
 * to out one per line. */
void keymap_help(struct buf *out);
/* The man page's KEYS section body (roff, without the .SH line). */
void keymap_man(struct buf *out);
/* Calls fn for every key name of a row (split at spaces). */
void keymap_each_key(const struct ui_keydef *d, void (*fn)(void *ctx, const char *key), void *ctx);

#endif
