/*
 * ui_main: ui_run, the curses front end's main loop. One thread (this one)
 * owns the terminal. It polls stdin and the worker's wake pipe, applies the
 * worker's events to its model, turns keys into commands through the keymap
 * table, marks the panes a change touches, and then draws only the dirty
 * panes with one doupdate() per turn of the loop. The search runs in the
 * worker thread (session.c); the front end never waits for it, except to
 * join it when quitting.
 */
#include "ui.h"
#include "cli.h"
#include "cli_settings.h"
#include "index_scan.h"
#include "session.h"
#include "sqlx.h"
#include "store.h"
#include "test_hooks.h"
#include "transcript.h"
#include "worker.h"
#include "llm_config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <locale.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct pane_ops *const pane_ops_table[PANE_COUNT] = {
    &pane_tree_ops, &pane_node_ops, &pane_evidence_ops, &pane_answer_ops,
    &pane_file_ops, &pane_help_ops, &pane_status_ops, &pane_input_ops,
};

static volatile sig_atomic_t got_int, got_term;
/* The signal handler's wake-up: a signal that comes while the loop is not in
 * poll (drawing, reading keys) would otherwise be seen only at the next key
 * or event, and a finished search has none to come. */
static int sig_pipe[2] = {-1, -1};

/* Bracketed paste on or off (xterm's mode 2004; terminals without it ignore it). */
static void paste_mode(int on)
{
    fputs(on ? "\033[?2004h" : "\033[?2004l", stdout);
    fflush(stdout);
}

/* In a signal handler: wakes the loop's wait. */
static void sig_wake(void)
{
    int e = errno;
    if (sig_pipe[1] >= 0 && write(sig_pipe[1], "", 1) < 0) { /* full: a wake-up is pending already */ }
    errno = e;
}

static void on_signal(int sig)
{
    if (sig == SIGINT) got_int = 1;
    else got_term = sig;
    sig_wake();
}

/* curses' own SIGWINCH handler (it marks the size as changed, read as
 * KEY_RESIZE): the resize wakes the wait too, as the signals above do. */
static struct sigaction curses_winch;
static int winch_caught;   /* on_winch is installed, curses_winch to be put back */

static void on_winch(int sig, siginfo_t *info, void *uctx)
{
    if (curses_winch.sa_flags & SA_SIGINFO) {
        if (curses_winch.sa_sigaction) curses_winch.sa_sigaction(sig, info, uctx);
    } else if (curses_winch.sa_handler != SIG_DFL && curses_winch.sa_handler != SIG_IGN) {
        curses_winch.sa_handler(sig);
    }
    sig_wake();
}

static void sig_pipe_drain(void)
{
    char b[64];
    while (sig_pipe[0] >= 0 && read(sig_pipe[0], b, sizeof b) > 0) {}
}

/* ------------------------------------------------------------- helpers */

/* A message that announces what a command will do; it goes once the
 * search's state changes (the status line then says what happened), so a
 * "resuming" never outlives the search it resumed. */
static void announce(struct ui *ui, const char *text)
{
    ui_message(ui, 0, "%s", text);
    ui->msg_transient = 1;
}

static int search_running(const struct ui *ui)
{
    if (ui->replay) return 0;
    switch (ui->m.state) {
    case EVQ_STATE_INDEXING:
    case EVQ_STATE_SEARCHING:
    case EVQ_STATE_PAUSED:
    case EVQ_STATE_ANSWERING: return 1;
    default: return 0;
    }
}

/* -------------------------------------------------------------- layout */

static void place(struct pane *p, int y, int x, int h, int w)
{
    if (p->win) delwin(p->win);
    p->win = NULL;
    p->y = y, p->x = x, p->h = h, p->w = w;
    if (h > 0 && w > 0) p->win = newwin(h, w, y, x);
    p->dirty = 1;
}

static void hide(struct pane *p)
{
    if (p->win) delwin(p->win);
    p->win = NULL;
    p->h = p->w = 0;
}

static int visible(const struct ui *ui, int pane)
{
    return ui->panes[pane].win != NULL;
}

/* 1 when the pane is part of the screen as it stands (zoomed or not): the
 * tree always, the file view while open, else the node and evidence panes,
 * and the answer once there is one. */
static int pane_available(const struct ui *ui, int pane)
{
    switch (pane) {
    case PANE_TREE: return 1;
    case PANE_FILE: return ui->file_text != NULL;
    case PANE_NODE:
    case PANE_EVIDENCE: return !ui->file_text;
    case PANE_ANSWER: return !ui->file_text && (ui->m.answer != NULL || ui->m.writing.active);
    default: return 0;
    }
}

static void layout(struct ui *ui)
{
    int rows = LINES, cols = COLS;
    for (int i = 0; i < PANE_COUNT; i++) hide(&ui->panes[i]);
    wnoutrefresh(stdscr);
    place(&ui->panes[PANE_STATUS], rows - 2, 0, 1, cols);
    place(&ui->panes[PANE_INPUT], rows - 1, 0, 1, cols);
    int bh = rows - 2;
    if (bh < 3) bh = 0;
    if (ui->help_open) {
        place(&ui->panes[PANE_HELP], 0, 0, bh, cols);
        ui->layout_stale = 0;
        return;
    }
    /* the tree takes a share of the width, the right panes keep 36 columns */
    int lw = cols * 11 / 20;
    if (cols - lw < 36) lw = cols - 36 > cols / 2 ? cols - 36 : cols / 2;
    if (ui->zoom && pane_available(ui, ui->focus)) {
        /* the focused pane alone (z) */
        place(&ui->panes[ui->focus], 0, 0, bh, cols);
        ui->layout_stale = 0;
        return;
    }
    ui->zoom = 0;
    place(&ui->panes[PANE_TREE], 0, 0, bh, lw);
    int rx = lw, rw = cols - lw;
    if (ui->file_text) {
        place(&ui->panes[PANE_FILE], 0, rx, bh, rw);
    } else if (ui->m.answer || ui->m.writing.active) {
        int nh = bh / 4 > 3 ? bh / 4 : 3;
        int eh = bh / 3 > 3 ? bh / 3 : 3;
        int ah = bh - nh - eh;
        place(&ui->panes[PANE_NODE], 0, rx, nh, rw);
        place(&ui->panes[PANE_EVIDENCE], nh, rx, eh, rw);
        place(&ui->panes[PANE_ANSWER], nh + eh, rx, ah, rw);
    } else {
        int nh = bh * 2 / 5 > 3 ? bh * 2 / 5 : 3;
        place(&ui->panes[PANE_NODE], 0, rx, nh, rw);
        place(&ui->panes[PANE_EVIDENCE], nh, rx, bh - nh, rw);
    }
    if (!visible(ui, ui->focus)) ui->focus = PANE_TREE;
    ui->layout_stale = 0;
}

/* Below this size the panes cannot show their columns and ids. */
#define UI_MIN_COLS 60
#define UI_MIN_LINES 16

static void draw(struct ui *ui)
{
    if (COLS < UI_MIN_COLS || LINES < UI_MIN_LINES) {
        /* a notice instead of panes too narrow to read; the panes come
         * back, redrawn whole, once the terminal is large enough again */
        erase();
        char a[64], b[64];
        snprintf(a, sizeof a, "terminal too small (%dx%d):", COLS, LINES);
        snprintf(b, sizeof b, "drqa-tui needs at least %dx%d", UI_MIN_COLS, UI_MIN_LINES);
        mvaddnstr(0, 0, a, COLS);
        if (LINES > 1) mvaddnstr(1, 0, b, COLS);
        curs_set(0);
        refresh();
        ui->layout_stale = 1;
        ui_dirty_all(ui);
        return;
    }
    if (ui->layout_stale) layout(ui);
    for (int i = 0; i < PANE_COUNT; i++) {
        struct pane *p = &ui->panes[i];
        if (i == PANE_INPUT || !p->win || !p->dirty) continue;
        werase(p->win);
        p->ops->draw(ui, p);
        wnoutrefresh(p->win);
        p->dirty = 0;
    }
    /* The input line last: it owns the terminal's cursor while editing. */
    struct pane *in = &ui->panes[PANE_INPUT];
    int editing = ui->edit == EDIT_ASK || ui->edit == EDIT_FIND;
    if (in->win && (in->dirty || editing)) {
        if (in->dirty) {
            werase(in->win);
            in->ops->draw(ui, in);
            in->dirty = 0;
        }
        wnoutrefresh(in->win);
    }
    curs_set(editing ? 1 : 0);
    doupdate();
}

/* ----------------------------------------------------------- file view */

/* ------------------------------------------------------------- events */

static void apply_events(struct ui *ui)
{
    struct evq_event e;
    evq_drain_wake(ui->ev);
    while (evq_pop(ui->ev, &e)) {
        int node;
        enum evq_state before = ui->m.state;
        int was_writing = ui->m.writing.active;
        int d = ui_model_apply(&ui->m, &e, &node);
        /* the answer as checked replaces the text as written: read from its start */
        if (e.kind == EVQ_ANSWER && was_writing) ui->panes[PANE_ANSWER].top = 0;
        if (e.kind == EVQ_STATE && e.state != before && ui->msg && ui->msg_transient) {
            free(ui->msg);
            ui->msg = NULL;
            ui_dirty(ui, PANE_INPUT);
        }
        if (e.kind == EVQ_STATE && e.state == EVQ_STATE_INDEXING && ui->db) {
            /* the worker updates the index (or checks it and puts a rebuilt
             * one in its place): the file view opens it again when next used */
            sqlite3_close(ui->db);
            ui->db = NULL;
        }
        ui_clock_event(&ui->clock, &e, ui->m.state, now_ms());
        if (e.kind == EVQ_QUESTION) {
            ui->selected = 0;
            ui->follow = 1;
            if (ui->asked == 1) ui->asked = 2;
            ui->panes[PANE_ANSWER].cursor = 0;
            ui->panes[PANE_ANSWER].top = 0;
            if (ui->file_text) ui_close_file(ui);
            free(ui->msg);
            ui->msg = NULL;
        } else if (e.kind == EVQ_NODE_ADDED && ui->follow) {
            ui_select(ui, node, 0);
        } else if (e.kind == EVQ_STATE) {
            if (e.state == EVQ_STATE_ERROR && e.text) ui_message(ui, 1, "%s", e.text);
            /* a pause goes on into the next question's search: say so */
            if (ui->asked == 2 && e.state == EVQ_STATE_PAUSED)
                ui_message(ui, 0, "this search starts paused, the pause still on: p resumes it, s runs one iteration");
            if (ui->asked == 2) ui->asked = 0;
        } else if (e.kind == EVQ_LOG) {
            ui_remember(ui, ui->m.message);
            free(ui->msg);   /* the newest message wins */
            ui->msg = NULL;
        }
        if (d & UI_DIRTY_TREE) ui_dirty(ui, PANE_TREE);
        if ((d & UI_DIRTY_NODE) && (node == ui->selected || node < 0)) {
            ui_dirty(ui, PANE_NODE);
            ui_dirty(ui, PANE_EVIDENCE);
        }
        if (d & UI_DIRTY_ANSWER) ui_dirty(ui, PANE_ANSWER);
        if (d & UI_DIRTY_STATUS) ui_dirty(ui, PANE_STATUS);
        if (d & UI_DIRTY_MESSAGE) ui_dirty(ui, PANE_INPUT);
        if (d & UI_DIRTY_LAYOUT) ui->layout_stale = 1;
        if (d == UI_DIRTY_ALL) ui->layout_stale = 1;
        evq_event_clear(&e);
    }
}

/* ------------------------------------------------------------ commands */

static int need_live(struct ui *ui)
{
    if (!ui->replay) return 1;
    ui_message(ui, 1, "a replayed transcript cannot be searched further");
    return 0;
}

/* The next (dir 1) or previous node matching the search text, in the order
 * of the tree's rows (a match inside a folded subtree is unfolded),
 * wrapping around at the ends. */
static void find(struct ui *ui, int dir)
{
    if (!ui->find || !*ui->find) {
        ui_message(ui, 1, "no search text: press / first");
        return;
    }
    int *order;
    int n = (int)ui_model_order(&ui->m, &order), at = 0;
    for (int i = 0; i < n; i++)
        if (order[i] == ui->selected) at = i;
    for (int k = 1; k <= n; k++) {
        int i = at + dir * k;
        int id = order[(i % n + n) % n];
        if (ui_model_match(&ui->m, id, ui->find)) {
            /* which match it is, in the rows' order, and how many there are */
            int nth = 0, total = 0;
            for (int j = 0; j < n; j++)
                if (ui_model_match(&ui->m, order[j], ui->find)) {
                    total++;
                    if (order[j] == id) nth = total;
                }
            ui_select(ui, id, 1);
            ui_message(ui, 0, "node %d matches '%s' (match %d/%d%s)", id, ui->find, nth, total,
                       i >= n ? ", wrapped around to the top" : i < 0 ? ", wrapped around to the bottom" : "");
            free(order);
            return;
        }
    }
    free(order);
    ui_message(ui, 1, "no node matches '%s'", ui->find);
}

/* A live search is exported by the worker, from the engine's own tree (every
 * fact it records: rationale, timings, UCT history, RNG state); a replay from
 * the transcript it loaded. */
static void do_export(struct ui *ui)
{
    char err[512];
    char *jp, *mp;
    if (!ui->replay) {
        if (ui_make_dirs(ui->export_dir, err, sizeof err) != 0) {
            ui_message(ui, 1, "export failed: %s", err);
            return;
        }
        if (ui->worker) cmdq_push(ui->cmd, CMD_EXPORT, -1, ui->export_dir);
        else ui_message(ui, 1, "nothing to export: the search did not start");
        return;
    }
    if (ui_model_export(&ui->m, ui->export_dir, NULL, &jp, &mp, err, sizeof err) != 0) {
        ui_message(ui, 1, "export failed: %s", err);
        return;
    }
    size_t jl = strlen(jp);
    /* the pair differs only in its extension: the line keeps room for the path */
    if (jl > 5 && !strncmp(jp, mp, jl - 5) && !strcmp(mp + jl - 5, ".md")) ui_message(ui, 0, "exported %s and .md", jp);
    else ui_message(ui, 0, "exported %s and %s", jp, mp);
    free(jp);
    free(mp);
}

static void focus_step(struct ui *ui, int dir)
{
    static const int order[] = {PANE_TREE, PANE_NODE, PANE_EVIDENCE, PANE_ANSWER, PANE_FILE};
    int n = (int)ARRAY_LEN(order), at = 0;
    for (int i = 0; i < n; i++)
        if (order[i] == ui->focus) at = i;
    for (int k = 1; k <= n; k++) {
        int cand = order[((at + dir * k) % n + n) % n];
        if (ui->zoom ? pane_available(ui, cand) : visible(ui, cand)) {
            ui_dirty(ui, ui->focus);
            ui->focus = cand;
            ui_dirty(ui, cand);
            if (ui->zoom) ui->layout_stale = 1;   /* the zoom follows the focus */
            return;
        }
    }
}

static void start_edit(struct ui *ui, enum ui_edit mode, const char *initial)
{
    ui->edit = mode;
    ui_history_reset(&ui->hist);
    buf_reset(&ui->line);
    buf_adds(&ui->line, initial ? initial : "");
    ui->line_pos = ui->line.len;
    ui_dirty(ui, PANE_INPUT);
}

/* 1 when a search is under way (searching or paused); else says why `what`
 * cannot be done now and returns 0. */
static int search_active(struct ui *ui, const char *what)
{
    switch (ui->m.state) {
    case EVQ_STATE_SEARCHING:
    case EVQ_STATE_PAUSED: return 1;
    case EVQ_STATE_IDLE: ui_message(ui, 1, "nothing to %s: ask a question first (a)", what); break;
    case EVQ_STATE_INDEXING: ui_message(ui, 1, "cannot %s yet: the index is being updated", what); break;
    case EVQ_STATE_ANSWERING: ui_message(ui, 1, "cannot %s: the search is answering", what); break;
    case EVQ_STATE_DONE:
        ui_message(ui, 1, "nothing to %s: the search is done (%s); a asks a new question", what,
                   ui->m.t->stop_reason ? ui->m.t->stop_reason : "stopped");
        break;
    case EVQ_STATE_ERROR: ui_message(ui, 1, "cannot %s: the search could not start", what); break;
    }
    return 0;
}

/* Esc or C-c while the model writes the answer: the worker stops it at its
 * next piece (the connection is closed; the part written so far is the
 * answer, marked as stopped). 1 when this asked it to. */
static int stop_answer(struct ui *ui)
{
    if (ui->replay || !ui->worker || ui->m.state != EVQ_STATE_ANSWERING || ui->m.writing.stop_asked) return 0;
    worker_stop_answer(ui->worker);
    ui->m.writing.stop_asked = 1;
    ui_dirty(ui, PANE_ANSWER);
    announce(ui, "stopping the answer: the part written so far is kept");
    return 1;
}

/* 1 when the tree's selected node is on screen for a command that acts on
 * it; else (the file view covers the node's panes) says so and returns 0. */
static int tree_node_in_view(struct ui *ui, const char *what)
{
    if (!ui->file_text) return 1;
    ui_message(ui, 1, "%s the tree's node %d: close the file view first (Esc)", what, ui->selected);
    return 0;
}

/* A command while the help screen is open: it closes, redraws or scrolls. */
static void help_command(struct ui *ui, enum ui_cmd cmd)
{
    if (cmd == UI_CMD_CLOSE || cmd == UI_CMD_HELP || cmd == UI_CMD_QUIT) {
        ui->help_open = 0;
        ui->layout_stale = 1;
    } else if (cmd == UI_CMD_REDRAW) {
        clearok(curscr, TRUE);
        ui_dirty_all(ui);
    } else {
        pane_scroll(&ui->panes[PANE_HELP], cmd);
    }
}

/* The commands sent to the worker's search (pause, step, prune, expand,
 * finish, ask): 1 when cmd is one of them. */
static int search_command(struct ui *ui, enum ui_cmd cmd)
{
    switch (cmd) {
    case UI_CMD_PAUSE:
        if (!need_live(ui)) break;
        if (ui->m.state == EVQ_STATE_PAUSED) {
            cmdq_push(ui->cmd, CMD_RESUME, -1, NULL);
            announce(ui, "resuming");
        } else if (ui->m.state == EVQ_STATE_SEARCHING || ui->m.state == EVQ_STATE_INDEXING) {
            cmdq_push(ui->cmd, CMD_PAUSE, -1, NULL);
            announce(ui, ui->m.state == EVQ_STATE_INDEXING ? "the search will start paused once the index is ready"
                                                           : "pausing after this iteration");
        } else {
            ui_message(ui, 1, "no search is running (state %s)", evq_state_name(ui->m.state));
        }
        break;
    case UI_CMD_STEP:
        if (!need_live(ui) || !search_active(ui, "step")) break;
        cmdq_push(ui->cmd, CMD_STEP, -1, NULL);
        announce(ui, "one iteration, then paused");
        break;
    case UI_CMD_PRUNE: {
        if (!need_live(ui) || !tree_node_in_view(ui, "x prunes")) break;
        const struct mcts_node *nd = mcts_node(ui->m.t, ui->selected);
        if (nd && nd->status == MCTS_PRUNED) {
            ui_message(ui, 1, "node %d is pruned already", ui->selected);
            break;
        }
        cmdq_push(ui->cmd, CMD_PRUNE, ui->selected, NULL);
        ui_message(ui, 0, "pruning node %d", ui->selected);
        break;
    }
    case UI_CMD_FORCE:
        if (!need_live(ui) || !tree_node_in_view(ui, "e expands")) break;
        cmdq_push(ui->cmd, CMD_EXPAND, ui->selected, NULL);
        ui_message(ui, 0, "asking to expand node %d next", ui->selected);
        break;
    case UI_CMD_FINISH:
        if (!need_live(ui) || !search_active(ui, "finish")) break;
        cmdq_push(ui->cmd, CMD_FINISH, -1, NULL);
        announce(ui, "finishing: answering from the best path");
        break;
    case UI_CMD_ASK:
        if (!need_live(ui)) break;
        start_edit(ui, EDIT_ASK, NULL);
        break;
    default: return 0;
    }
    return 1;
}

static void run_command(struct ui *ui, enum ui_cmd cmd)
{
    struct pane *fp = &ui->panes[ui->focus];
    if (ui->help_open) {
        help_command(ui, cmd);
        return;
    }
    if (search_command(ui, cmd)) return;
    switch (cmd) {
    case UI_CMD_FIND:
        /* in the file view, / searches the file */
        ui->find_file = ui->file_text && ui->focus == PANE_FILE;
        start_edit(ui, EDIT_FIND, NULL);
        break;
    case UI_CMD_FIND_NEXT:
    case UI_CMD_FIND_PREV:
        if (ui->file_text && ui->focus == PANE_FILE) file_find(ui, cmd == UI_CMD_FIND_NEXT ? 1 : -1, 0);
        else find(ui, cmd == UI_CMD_FIND_NEXT ? 1 : -1);
        break;
    case UI_CMD_WRAP:
        if (ui->file_text) ui->panes[PANE_FILE].ops->command(ui, &ui->panes[PANE_FILE], cmd);
        else ui_message(ui, 1, "W wraps the file view's lines: open a span first (Enter on a citation)");
        break;
    case UI_CMD_BEST: {
        size_t n;
        const int *b = ui_model_best(&ui->m, &n, NULL);
        if (n) {
            ui_select(ui, b[n - 1], 1);
            ui->focus = PANE_TREE;
            ui_dirty(ui, PANE_TREE);
        }
        break;
    }
    case UI_CMD_FOLLOW:
        ui->follow = 1;
        if (ui->m.newest >= 0) ui_select(ui, ui->m.newest, 0);
        ui_dirty(ui, PANE_STATUS);
        break;
    case UI_CMD_EXPORT: do_export(ui); break;
    case UI_CMD_HELP:
        ui->help_open = 1;
        ui->panes[PANE_HELP].top = 0;
        ui->layout_stale = 1;
        break;
    case UI_CMD_CLOSE:
        if (ui->file_text) ui_close_file(ui);
        else if (stop_answer(ui)) break;
        else if (ui->msg) {
            free(ui->msg);
            ui->msg = NULL;
            ui_dirty(ui, PANE_INPUT);
        }
        break;
    case UI_CMD_REDRAW:
        clearok(curscr, TRUE);
        ui_dirty_all(ui);
        break;
    case UI_CMD_QUIT:
        if (ui->file_text && ui->focus == PANE_FILE) {
            ui_close_file(ui);
        } else if (search_running(ui)) {
            ui->edit = EDIT_CONFIRM_QUIT;
            ui_dirty(ui, PANE_INPUT);
        } else {
            ui->quit = 1;
        }
        break;
    case UI_CMD_ZOOM:
        ui->zoom = !ui->zoom;
        ui->layout_stale = 1;
        break;
    case UI_CMD_FOCUS_NEXT: focus_step(ui, 1); break;
    case UI_CMD_FOCUS_PREV: focus_step(ui, -1); break;
    default:
        if (fp->ops->command) fp->ops->command(ui, fp, cmd);
        break;
    }
}

/* -------------------------------------------------------------- input */

/* The keymap's name for a key read by wget_wch; "" when it has none. */
static void ui_key_name(int rc, wint_t ch, char *out, size_t n)
{
    out[0] = 0;
    if (rc == KEY_CODE_YES) {
        switch (ch) {
        case KEY_UP: snprintf(out, n, "Up"); break;
        case KEY_DOWN: snprintf(out, n, "Down"); break;
        case KEY_LEFT: snprintf(out, n, "Left"); break;
        case KEY_RIGHT: snprintf(out, n, "Right"); break;
        case KEY_NPAGE: snprintf(out, n, "PgDn"); break;
        case KEY_PPAGE: snprintf(out, n, "PgUp"); break;
        case KEY_HOME: snprintf(out, n, "Home"); break;
        case KEY_END: snprintf(out, n, "End"); break;
        case KEY_ENTER: snprintf(out, n, "Enter"); break;
        case KEY_BTAB: snprintf(out, n, "BTab"); break;
        case KEY_BACKSPACE: snprintf(out, n, "Backspace"); break;
        case KEY_DC: snprintf(out, n, "Delete"); break;
        default:
            if (ch >= KEY_F(1) && ch <= KEY_F(12)) snprintf(out, n, "F%d", (int)(ch - KEY_F0));
        }
        return;
    }
    if (ch == '\r' || ch == '\n') snprintf(out, n, "Enter");
    else if (ch == '\t') snprintf(out, n, "Tab");
    else if (ch == 27) snprintf(out, n, "Esc");
    else if (ch == ' ') snprintf(out, n, "Space");
    else if (ch == 127 || ch == 8) snprintf(out, n, "Backspace");
    else if (ch < 32) snprintf(out, n, "C-%c", (char)(ch + 'a' - 1));
    else if (ch < 128) snprintf(out, n, "%c", (char)ch);
}

/* Inserts the character ch at the line editor's cursor. */
static void line_insert(struct ui *ui, wint_t ch)
{
    struct buf *l = &ui->line;
    char mb[8];
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t n = wcrtomb(mb, (wchar_t)ch, &st);
    if (n == (size_t)-1 || l->len + n > 4000) return;
    buf_add(l, mb, n);
    memmove(l->data + ui->line_pos + n, l->data + ui->line_pos, l->len - n - ui->line_pos);
    memcpy(l->data + ui->line_pos, mb, n);
    ui->line_pos += n;
}

/* The byte offset of the character after the one at pos. */
static size_t next_char(const struct buf *l, size_t pos)
{
    if (pos >= l->len) return l->len;
    pos++;
    while (pos < l->len && (l->data[pos] & 0xc0) == 0x80) pos++;
    return pos;
}

/* Removes bytes [a, b) of the line, the cursor at a. */
static void line_cut(struct ui *ui, size_t a, size_t b)
{
    struct buf *l = &ui->line;
    memmove(l->data + a, l->data + b, l->len - b + 1);
    l->len -= b - a;
    ui->line_pos = a;
}

static void edit_key(struct ui *ui, int rc, wint_t ch, const char *name)
{
    struct buf *l = &ui->line;
    if (!strcmp(name, "Enter")) {
        char *text = buf_take(l);
        enum ui_edit mode = ui->edit;
        ui->edit = EDIT_NONE;
        if (mode == EDIT_ASK && text[strspn(text, " \t")]) {   /* blanks alone ask nothing */
            char herr[512];
            cmdq_push(ui->cmd, CMD_NEW_QUESTION, -1, text);
            ui->asked = 1;
            if (ui_history_add(&ui->hist, text, herr, sizeof herr) != 0) ui_message(ui, 1, "%s", herr);
            else ui_message(ui, 0, "asking: %s", text);
        } else if (mode == EDIT_FIND && *text) {
            free(ui->find);
            ui->find = xstrdup(text);
            if (ui->find_file && ui->file_text) file_find(ui, 1, 1);
            else find(ui, 1);
        }
        free(text);
        ui_dirty(ui, PANE_INPUT);
        return;
    }
    if (!strcmp(name, "Esc") || !strcmp(name, "C-c")) {
        /* a question typed and cancelled is kept, not lost: Up brings it back */
        if (ui->edit == EDIT_ASK && l->len) {
            ui_history_aside(&ui->hist, buf_str(l));
            ui_message(ui, 0, "question put aside: a, then Up, brings it back");
        }
        ui->edit = EDIT_NONE;
        ui_history_reset(&ui->hist);
        buf_reset(l);
        ui_dirty(ui, PANE_INPUT);
        return;
    }
    if (!strcmp(name, "Backspace")) {
        if (ui->line_pos > 0) {
            size_t s = ui->line_pos - 1;
            while (s > 0 && (l->data[s] & 0xc0) == 0x80) s--;
            memmove(l->data + s, l->data + ui->line_pos, l->len - ui->line_pos + 1);
            l->len -= ui->line_pos - s;
            ui->line_pos = s;
        }
    } else if (!strcmp(name, "Left")) {
        while (ui->line_pos > 0) {
            ui->line_pos--;
            if ((l->data[ui->line_pos] & 0xc0) != 0x80) break;
        }
    } else if (!strcmp(name, "Right")) {
        while (ui->line_pos < l->len) {
            ui->line_pos++;
            if (ui->line_pos == l->len || (l->data[ui->line_pos] & 0xc0) != 0x80) break;
        }
    } else if ((!strcmp(name, "Up") || !strcmp(name, "Down")) && ui->edit == EDIT_ASK) {
        /* the questions asked before, this run's and earlier runs' */
        const char *h = ui_history_move(&ui->hist, name[0] == 'U' ? -1 : 1, buf_str(l));
        if (h) {
            char *copy = xstrdup(h);   /* h may be the draft the next move frees */
            buf_reset(l);
            buf_adds(l, copy);
            free(copy);
            ui->line_pos = l->len;
        }
    } else if (!strcmp(name, "C-u")) {
        buf_reset(l);
        ui->line_pos = 0;
    } else if (!strcmp(name, "Home") || !strcmp(name, "C-a")) {
        ui->line_pos = 0;
    } else if (!strcmp(name, "End") || !strcmp(name, "C-e")) {
        ui->line_pos = l->len;
    } else if (!strcmp(name, "Delete") || !strcmp(name, "C-d")) {
        line_cut(ui, ui->line_pos, next_char(l, ui->line_pos));
    } else if (!strcmp(name, "C-w")) {
        size_t s = ui->line_pos;
        while (s > 0 && l->data[s - 1] == ' ') s--;
        while (s > 0 && l->data[s - 1] != ' ') s--;
        line_cut(ui, s, ui->line_pos);
    } else if (rc == OK && (ch >= 32 && ch != 127)) {
        line_insert(ui, ch);
    }
    ui_dirty(ui, PANE_INPUT);
}

static void mouse(struct ui *ui)
{
    MEVENT me;
    if (getmouse(&me) != OK) return;
    for (int i = 0; i < PANE_COUNT; i++) {
        struct pane *p = &ui->panes[i];
        if (!p->win || me.y < p->y || me.y >= p->y + p->h || me.x < p->x || me.x >= p->x + p->w)
            continue;
#ifdef BUTTON5_PRESSED
        if (me.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
            enum ui_cmd c = me.bstate & BUTTON4_PRESSED ? UI_CMD_UP : UI_CMD_DOWN;
            for (int k = 0; k < 3 && p->ops->command; k++) p->ops->command(ui, p, c);
            return;
        }
#endif
        if (me.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED)) {
            if (i <= PANE_FILE && ui->focus != i) {
                ui_dirty(ui, ui->focus);
                ui->focus = i;
                ui_dirty(ui, i);
            }
            if (p->ops->click) p->ops->click(ui, p, me.y - p->y, me.x - p->x);
        }
        return;
    }
}

/* Acts on one key read by wget_wch. */
static void one_key(struct ui *ui, int rc, wint_t ch)
{
    if (rc == KEY_CODE_YES && ch == KEY_RESIZE) {
        ui->layout_stale = 1;
        return;
    }
    if (rc == KEY_CODE_YES && ch == KEY_MOUSE) {
        mouse(ui);
        return;
    }
    /* bracketed paste: everything up to its end is text for the line
     * (a paste elsewhere opens the question line), newlines are spaces */
    if (rc == KEY_CODE_YES && ch == UI_KEY_PASTE_BEGIN) {
        ui->pasting = 1;
        if (ui->edit != EDIT_ASK && ui->edit != EDIT_FIND) start_edit(ui, EDIT_ASK, NULL);
        return;
    }
    if (rc == KEY_CODE_YES && ch == UI_KEY_PASTE_END) {
        ui->pasting = 0;
        return;
    }
    if (ui->pasting) {
        if (rc == OK && (ch == '\n' || ch == '\r' || ch == '\t')) ch = ' ';
        if (rc == OK && ch >= 32 && ch != 127) line_insert(ui, ch);
        ui_dirty(ui, PANE_INPUT);
        return;
    }
    char name[16];
    ui_key_name(rc, ch, name, sizeof name);
    if (ui->edit == EDIT_CONFIRM_QUIT) {
        ui->edit = EDIT_NONE;
        if (rc == OK && (ch == 'y' || ch == 'Y')) ui->quit = 1;
        else ui_message(ui, 0, "not quitting");
        ui_dirty(ui, PANE_INPUT);
        return;
    }
    if ((ui->edit == EDIT_ASK || ui->edit == EDIT_FIND) && !ui->help_open && strcmp(name, "F1") != 0) {
        edit_key(ui, rc, ch, name);   /* F1 opens the help even here; '?' is text */
        return;
    }
    enum ui_cmd cmd = keymap_lookup(name);
    if (cmd == UI_CMD_NONE) {
        if (*name) ui_message(ui, 1, "%s: no such key (? shows the keys)", name);
        return;
    }
    run_command(ui, cmd);
}

/* Keys that arrive together, faster than anyone types (at least three
 * printable characters, not all the same: a held key repeats one, and
 * newlines), are a paste from a terminal without bracketed paste. They are
 * text for the question line, never keys: a pasted "xqa" neither prunes nor
 * quits. Any other key among them (Tab, Esc, an arrow) makes them keys. */
#define UI_BURST_MIN 3

static int burst_is_text(const struct ui *ui, const int *rc, const wint_t *ch, int n)
{
    if (ui->pasting || ui->edit == EDIT_ASK || ui->edit == EDIT_FIND) return 0;
    int printable = 0, distinct = 0;
    for (int i = 0; i < n; i++) {
        if (rc[i] != OK) return 0;
        if (ch[i] == '\n' || ch[i] == '\r') continue;   /* a pasted line's end */
        if (ch[i] < 32 || ch[i] == 127) return 0;
        printable++;
        if (ch[i] != ch[0]) distinct = 1;
    }
    return printable >= UI_BURST_MIN && distinct;
}

/* Reads what the terminal has sent so far, then acts on it key by key, the
 * rest of it as a paste once it is a burst of text. */
static void read_keys(struct ui *ui)
{
    enum { CAP = 512 };
    int rc[CAP];
    wint_t ch[CAP];
    for (;;) {
        int n = 0;
        while (n < CAP && (rc[n] = wget_wch(stdscr, &ch[n])) != ERR) n++;
        for (int i = 0; i < n && !ui->quit; i++) {
            /* a key that opens a line (a, /) acts even so: what follows it
             * is typed on that line */
            char name[16];
            ui_key_name(rc[i], ch[i], name, sizeof name);
            enum ui_cmd c = keymap_lookup(name);
            if (c != UI_CMD_ASK && c != UI_CMD_FIND && burst_is_text(ui, rc + i, ch + i, n - i)) {
                start_edit(ui, EDIT_ASK, NULL);
                for (; i < n; i++) line_insert(ui, ch[i] < 32 ? ' ' : ch[i]);
                break;
            }
            one_key(ui, rc[i], ch[i]);
        }
        if (n < CAP || ui->quit) return;
    }
}

/* --------------------------------------------------------------- setup */

static void set_repo_name(struct ui *ui, const char *path)
{
    char *copy = xstrdup(path ? path : "?");
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/') copy[--n] = 0;
    free(ui->repo_name);
    ui->repo_name = xstrdup(basename(copy));
    free(copy);
}

static const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int setup_replay(struct ui *ui, const struct drqa_opts *o)
{
    struct mcts_tree *t;
    cJSON *cfg;
    struct search_answer *a;
    char err[1024];
    if (transcript_load(o->replay, &t, &cfg, &a, err, sizeof err) != 0) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return EXIT_USAGE;
    }
    ui_model_init_replay(&ui->m, t, a, cfg);
    ui->replay = 1;
    const char *repo = o->repo ? o->repo : json_str(cfg, "repo");
    set_repo_name(ui, repo ? repo : o->replay);
    /* the index the search read, as the transcript records it ("index";
     * "index_path" in hand-made files) */
    const char *ip = o->index_path ? o->index_path : json_str(cfg, "index");
    if (!ip) ip = json_str(cfg, "index_path");
    if (ip) ui->index_path = xstrdup(ip);
    else if (repo) {
        char *abs = realpath(repo, NULL);
        if (abs) ui->index_path = store_default_path(abs);
        free(abs);
    }
    const char *pol = json_str(cfg, "policy"), *model = json_str(cfg, "model");
    snprintf(ui->policy_line, sizeof ui->policy_line, "%s%s%s", pol ? pol : "?",
             model ? " " : "", model ? model : "");
    ui->selected = 0;
    ui->follow = 0;
    return EXIT_OK;
}

static int setup_live(struct ui *ui, const struct drqa_opts *o)
{
    struct stat st;
    if (!o->repo || stat(o->repo, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "drqa-tui: the repository '%s' %s\n", o->repo ? o->repo : "",
                o->repo && stat(o->repo, &st) == 0 ? "is not a directory" : "does not exist");
        return EXIT_USAGE;
    }
    ui->repo_abs = realpath(o->repo, NULL);
    if (!ui->repo_abs) {
        fprintf(stderr, "drqa-tui: cannot resolve '%s': %s\n", o->repo, strerror(errno));
        return EXIT_USAGE;
    }
    set_repo_name(ui, ui->repo_abs);
    ui->index_path = o->index_path ? xstrdup(o->index_path) : store_default_path(ui->repo_abs);
    struct drqa_config cfg;
    char err[1024];
    if (cli_config_load(&cfg, o, err, sizeof err) != 0) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        config_free(&cfg);
        return EXIT_USAGE;
    }
    /* The status line's short form; config_describe's sentence is in the log. */
    if (cfg.policy == POLICY_LLM)
        snprintf(ui->policy_line, sizeof ui->policy_line, "llm %s", cfg.model ? cfg.model : "?");
    else
        snprintf(ui->policy_line, sizeof ui->policy_line, "offline");
    char describe[512];
    log_msg("%s", config_describe(&cfg, describe, sizeof describe));
    /* The worker writes a transcript when a search ends: make sure it can. */
    if (o->transcript_dir && ui_make_dirs(o->transcript_dir, err, sizeof err) != 0) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        config_free(&cfg);
        return EXIT_FAIL;
    }
    struct search_config sc;
    cli_search_config(&sc, o);
    ui_model_init(&ui->m, o->question, sc.max_expand, sc.exploration, sc.seed, sc.iterations);
    struct transcript_config tc;
    cli_transcript_config(&tc, o);
    transcript_config_resolve(&tc, &cfg);
    tc.repo = ui->repo_abs;
    tc.index_path = ui->index_path;
    char commit[41];
    if (scan_git_provenance(ui->repo_abs, commit, &tc.dirty) == 0) {
        tc.commit = commit;
        snprintf(ui->provenance, sizeof ui->provenance, "@%.7s%s", commit, tc.dirty ? "*" : "");
    }
    ui->m.config = transcript_config_json(&tc);
    config_free(&cfg);
    return EXIT_OK;
}

static char *default_export_dir(const struct drqa_opts *o)
{
    if (o->transcript_dir) return xstrdup(o->transcript_dir);
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') return xasprintf("%s/drqa-tui/transcripts", xdg);
    if (home && *home) return xasprintf("%s/.local/share/drqa-tui/transcripts", home);
    return xstrdup("drqa-transcripts");
}

static void teardown(struct ui *ui)
{
    for (int i = 0; i < PANE_COUNT; i++) hide(&ui->panes[i]);
    ui_model_free(&ui->m);
    buf_free(&ui->line);
    ui_history_free(&ui->hist);
    free(ui->find);
    free(ui->msg);
    for (int i = 0; i < ui->nrecent; i++) free(ui->recent[i]);
    free(ui->file_path);
    free(ui->file_text);
    free(ui->file_lines);
    free(ui->tree_shown);
    sqlx_close(ui->db);
    free(ui->index_path);
    free(ui->repo_abs);
    free(ui->repo_name);
    free(ui->export_dir);
}

/* The questions asked before, and the one given on the command line: it is
 * asked as much as one typed on the question line. */
static void history_start(struct ui *ui)
{
    char *hp = ui_history_path();
    ui_history_load(&ui->hist, ui->replay ? NULL : hp);
    free(hp);
    char herr[512];
    if (!ui->replay && ui->o->question && ui_history_add(&ui->hist, ui->o->question, herr, sizeof herr) != 0)
        ui_message(ui, 1, "%s", herr);
}

static void curses_start(struct ui *ui)
{
    initscr();
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED
#ifdef BUTTON5_PRESSED
                  | BUTTON4_PRESSED | BUTTON5_PRESSED
#endif
              , NULL);
    mouseinterval(0);
    draw_init_attrs(ui);
    curs_set(0);
    /* bracketed paste: a paste arrives between these two keys */
    define_key("\033[200~", UI_KEY_PASTE_BEGIN);
    define_key("\033[201~", UI_KEY_PASTE_END);
    paste_mode(1);
    ui->layout_stale = 1;
    ui_dirty_all(ui);
    /* on_winch takes curses' place with curses' mask and restart flag (curses
     * leaves SIGWINCH without SA_RESTART), so that the worker's system calls
     * see a resize as they did */
    struct sigaction cur;
    if (sigaction(SIGWINCH, NULL, &cur) == 0 && !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_winch)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_winch;
        sa.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_RESTART);
        sa.sa_mask = cur.sa_mask;
        curses_winch = cur;
        winch_caught = sigaction(SIGWINCH, &sa, NULL) == 0;
    }
}

/* C-c (SIGINT: the terminal keeps its signal keys). On the question or
 * search line it cancels the line, as Esc does; while something runs it
 * asks as q does, and a second one quits; otherwise it quits (status 130). */
static void on_interrupt(struct ui *ui, int *rc)
{
    if (ui->edit == EDIT_ASK || ui->edit == EDIT_FIND) {
        edit_key(ui, OK, 3, "C-c");
    } else if (ui->edit == EDIT_NONE && stop_answer(ui)) {
        /* while the answer is written, as Esc */
    } else if (ui->edit == EDIT_CONFIRM_QUIT || !search_running(ui)) {
        ui->quit = 1;
        *rc = 128 + SIGINT;
    } else {
        run_command(ui, UI_CMD_QUIT);
    }
}

int ui_run(const struct drqa_opts *o)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "drqa-tui: the interactive front end needs a terminal; use --ask QUESTION "
                        "for a headless answer\n");
        return EXIT_USAGE;
    }
    char terr[512];
    if (ui_terminal_usable(terr, sizeof terr) != 0) {
        fprintf(stderr, "drqa-tui: %s\n", terr);
        return EXIT_USAGE;
    }
    struct ui ui;
    memset(&ui, 0, sizeof ui);
    ui.o = o;
    ui.selected = 0;
    ui.follow = 1;
    int rc = o->replay ? setup_replay(&ui, o) : setup_live(&ui, o);
    if (rc != EXIT_OK) {
        teardown(&ui);
        return rc;
    }
    ui.export_dir = default_export_dir(o);
    history_start(&ui);
    ui.fixed_elapsed = test_hook_elapsed();
    const char *cs = nl_langinfo(CODESET);
    ui.text_flags = cs && !strcmp(cs, "UTF-8") ? 0 : TEXT_ASCII;
    for (int i = 0; i < PANE_COUNT; i++) ui.panes[i].ops = pane_ops_table[i];

    char err[1024];
    ui.ev = evq_new(err, sizeof err);
    ui.cmd = cmdq_new();
    if (!ui.ev) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        cmdq_free(ui.cmd);
        teardown(&ui);
        return EXIT_FAIL;
    }

    if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) != 0) sig_pipe[0] = sig_pipe[1] = -1;   /* poll wakes on EINTR only */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    curses_start(&ui);

    rc = EXIT_OK;
    if (!ui.replay && session_start(&ui, err, sizeof err) != 0) {
        endwin();
        fprintf(stderr, "drqa-tui: %s\n", err);
        rc = EXIT_FAIL;
        goto out;
    }
    if (!ui.replay && !o->question) start_edit(&ui, EDIT_ASK, NULL);

    while (!ui.quit) {
        draw(&ui);
        int timeout = -1;
        if (search_running(&ui) && !ui.fixed_elapsed) timeout = 1000 - (int)(ui_clock_elapsed(&ui.clock, now_ms()) % 1000);
        struct pollfd pf[3] = {
            {STDIN_FILENO, POLLIN, 0}, {ui.ev ? evq_wake_fd(ui.ev) : -1, POLLIN, 0}, {sig_pipe[0], POLLIN, 0}};
        test_hook_wait_hold();
        int n = poll(pf, 3, timeout);
        if (n < 0 && errno != EINTR) break;
        if (n > 0 && (pf[2].revents & POLLIN)) sig_pipe_drain();
        if (got_term) {
            /* SIGTERM or SIGHUP: stop at once, with the shell's status for it */
            rc = 128 + (got_term == SIGHUP ? SIGHUP : SIGTERM);
            break;
        }
        if (got_int) {
            got_int = 0;
            on_interrupt(&ui, &rc);
        }
        if (pf[1].revents & POLLIN) apply_events(&ui);
        read_keys(&ui);   /* also picks up KEY_RESIZE after SIGWINCH */
        if (search_running(&ui) && !ui.fixed_elapsed) {
            char el[32];
            status_elapsed(&ui, el, sizeof el);
            if (strcmp(el, ui.shown_elapsed)) ui_dirty(&ui, PANE_STATUS);
        }
    }
out:
    /* the worker stops first (an index update in flight is cancelled, the
     * previous index kept), so the screen is never left blank meanwhile */
    session_stop(&ui);
    if (!isendwin()) {
        paste_mode(0);
        curs_set(1);
        endwin();
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (winch_caught) sigaction(SIGWINCH, &curses_winch, NULL);
    winch_caught = 0;
    for (int k = 0; k < 2; k++) {
        if (sig_pipe[k] >= 0) close(sig_pipe[k]);
        sig_pipe[k] = -1;
    }
    evq_free(ui.ev);
    cmdq_free(ui.cmd);
    teardown(&ui);
    return rc;
}
