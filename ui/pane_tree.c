/*
 * pane_tree: the live search tree on the left. The rows are rebuilt from the
 * model at every draw (folded subtrees and the cursor are kept by node id, so
 * nothing is lost when the tree grows); each row shows the node's id, action
 * and key argument (ViewCode's span as path:start-end), visits N, mean value
 * Q, the UCT score it had at the newest selection that compared it ('>' when
 * it won there) and its status, with the current best path marked '*'.
 *
 * Room is shared deliberately: the number columns always fit their values
 * (UCT has one decimal in a wide pane below 1000, none from 1000 on, and a
 * value too wide even so is written 1.2e5, never cut); an action's name
 * gives way to its fixed short name (FindClass -> Class) before the
 * argument is squeezed, the argument is cut with a marker, and a name is
 * never cut inside. The man page lists the same short names. The ancestors of the node at the cursor
 * are always on screen: those scrolled off above are pinned at the top of
 * the pane, so the node never sits on the top row without its parents.
 */
#include "ui.h"
#include "action.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The short name used when a row is too narrow for the full one: the
 * action's row says it (action_table.c). */
const char *tree_action_abbrev(const char *action)
{
    const struct action_def *d = action_find(action);
    return d ? d->short_name : NULL;
}

void tree_abbrev_legend(struct buf *out)
{
    for (const char *const *n = action_names(); *n; n++) {
        const char *ab = tree_action_abbrev(*n);
        if (ab && strcmp(ab, *n)) buf_printf(out, "  %-14s %s\n", ab, *n);
    }
}

static const char *abbrev(const char *status)
{
    static const char *const map[][2] = {
        {"pending", "pend"}, {"running", "run"}, {"done", "done"}, {"finished", "fin"},
        {"pruned", "prun"}, {"error", "err"}, {"duplicate", "dup"}, {"forced", "forc"}};
    for (size_t i = 0; i < ARRAY_LEN(map); i++)
        if (!strcmp(map[i][0], status)) return map[i][1];
    return status;
}

static int wide(const struct pane *p)
{
    return p->w >= 56;
}

/* Column widths: N, Q, UCT (with the winner's '>'), status; 0 for a column
 * left out. */
struct colw { int n, q, u, st; };

/* Columns to the left of the numbers a label needs (cursor mark, some
 * indentation, fold mark, id, short action name and a few argument
 * characters): in a narrow tree the number columns give way to it, the
 * least telling first (UCT, then N, then status), as htop drops columns;
 * Q always stays. */
#define LABEL_MIN 18

static int cols_width(struct colw c)
{
    int w = 0, k = 0;
    int v[4] = {c.n, c.q, c.u, c.st};
    for (int i = 0; i < 4; i++)
        if (v[i]) w += v[i] + (k++ ? 1 : 0);
    return w;
}

static struct colw colw(const struct pane *p)
{
    struct colw c = wide(p) ? (struct colw){4, 5, 8, 9} : (struct colw){3, 4, 6, 4};
    int W = p->w - 1;
    if (W - cols_width(c) - 1 < LABEL_MIN) c.u = 0;
    if (W - cols_width(c) - 1 < LABEL_MIN) c.n = 0;
    if (W - cols_width(c) - 1 < LABEL_MIN) c.st = 0;
    return c;
}

/* The columns shown, each right-aligned in its width (status left-aligned),
 * one space between. */
static void cols_format(char *out, size_t len, struct colw c, const char *n, const char *q, const char *u,
                        const char *st)
{
    int at = 0;
    out[0] = 0;
    const char *val[4] = {n, q, u, st};
    int w[4] = {c.n, c.q, c.u, c.st};
    for (int i = 0; i < 4 && at < (int)len; i++) {
        if (!w[i]) continue;
        at += snprintf(out + at, len - (size_t)at, i == 3 ? "%s%-*s" : "%s%*s", at ? " " : "", w[i], val[i]);
    }
}

/* v in at most width columns: with the decimals asked for if they fit,
 * fewer if not, then as 1.2e4 or 1e4 (the exponent without '+' or leading
 * zeros). */
static void fmt_fit(char *out, size_t n, double v, int decimals, int width)
{
    if (isinf(v)) {
        snprintf(out, n, "%s", v < 0 ? "-inf" : "inf");
        return;
    }
    for (int d = decimals; d >= 0; d--) {
        snprintf(out, n, "%.*f", d, v);
        if ((int)strlen(out) <= width) return;
    }
    for (int d = 1; d >= 0; d--) {
        char e[32];
        snprintf(e, sizeof e, "%.*e", d, v);
        char *x = strchr(e, 'e');
        if (!x) continue;
        int ex = atoi(x + 1);
        snprintf(out, n, "%.*se%d", (int)(x - e), e, ex);
        if ((int)strlen(out) <= width) return;
    }
}

/* The UCT column: the score the node had as a child at the newest
 * selection that compared it (the engine's record, mcts_last_mark), '>'
 * before it when it won that comparison; '-' when no selection scored it. */
static void fmt_uct(char *out, size_t n, const struct mcts_node *nd, int decimals, int width)
{
    const struct mcts_uct_mark *mk = mcts_last_mark(nd, 0);
    if (!mk) {
        snprintf(out, n, "-");
        return;
    }
    char num[32];
    int gt = mk->chosen ? 1 : 0;
    if (fabs(mk->score) >= 1000) decimals = 0;   /* four digits are enough to compare */
    fmt_fit(num, sizeof num, mk->score, decimals, width - gt);
    snprintf(out, n, "%s%s", gt ? ">" : "", num);
}

/* The right-hand columns of a node's row. */
static void columns(const struct pane *p, const struct mcts_node *n, char *out, size_t len)
{
    char v[16], q[16], u[40];
    int w = wide(p);
    struct colw c = colw(p);
    fmt_fit(v, sizeof v, n->visits, 0, c.n);
    if (n->visits > 0) fmt_fit(q, sizeof q, mcts_q(n), w ? 1 : 0, c.q);
    else snprintf(q, sizeof q, "-");
    fmt_uct(u, sizeof u, n, w ? 1 : 0, c.u);
    /* a root without a question has no state to show (not "done") */
    const char *st = n->parent < 0 && n->visits == 0 && n->nchildren == 0 && !n->has_value ? "-"
                                                                                        : ui_model_status_word(n);
    cols_format(out, len, c, v, q, u, w ? st : abbrev(st));
}

static enum ui_role row_role(struct ui *ui, const struct mcts_node *n)
{
    if (n->duplicate) return R_DIM;
    switch (n->status) {
    case MCTS_PENDING:
    case MCTS_RUNNING: return R_RUNNING;
    case MCTS_FINISHED: return R_FINISHED;
    case MCTS_PRUNED: return R_PRUNED;
    case MCTS_ERROR: return R_ERROR;
    case MCTS_DONE: break;
    }
    return ui_model_on_best(&ui->m, n->id) ? R_BEST : R_NORMAL;
}

/* Below this many argument columns a row uses the action's short name. */
#define ARG_ROOM 12

/* The marker of text cut at its end (or, for a path, at its start). */
static const char *cut_mark(const struct ui *ui)
{
    return ui->text_flags & TEXT_ASCII ? "~" : "\u2026";
}

/* Draws the safe text s in at most w columns at y, x; cut text ends with the
 * marker. A span (from_left: "path:start-end") is cut at its start instead,
 * the same way at any width: the marker, then the longest tail that fits,
 * starting at a directory when it would start inside one, so that the file
 * name's end and the lines always stay ("…base.py:743-790"). Returns the
 * columns used. */
static int draw_cut(struct ui *ui, WINDOW *win, int y, int x, int w, const char *s, attr_t a, int from_left)
{
    size_t len = strlen(s);
    int sw = text_width(s, len);
    if (sw <= w) return draw_safe(win, y, x, w, s, len, a);
    if (w < 2) return 0;
    const char *mk = cut_mark(ui);
    if (from_left) {
        size_t off = text_fit_tail(s, len, w - 1);
        size_t path_end = strcspn(s, ":");
        const char *sl = off < path_end && off > 0 && s[off - 1] != '/' ? memchr(s + off, '/', path_end - off) : NULL;
        if (sl) off = (size_t)(sl - s) + 1;
        int used = draw_safe(win, y, x, 1, mk, strlen(mk), a);
        return used + draw_safe(win, y, x + used, w - used, s + off, len - off, a);
    }
    int used = draw_safe(win, y, x, w - 1, s, len, a);
    return used + draw_safe(win, y, x + used, 1, mk, strlen(mk), a);
}

/* The label of a row, "id action argument", in w columns from x: the full
 * action name when it leaves ARG_ROOM columns for the argument (or the whole
 * argument), else its short name, else none; the argument takes what is
 * left. */
static void draw_label(struct ui *ui, WINDOW *win, int y, int x, int w, const struct mcts_node *nd, attr_t a)
{
    char id[16];
    snprintf(id, sizeof id, "%d", nd->id);
    int used = draw_safe(win, y, x, w, id, strlen(id), a);
    if (used < (int)strlen(id)) return;
    x += used, w -= used;
    const char *full;
    if (nd->parent < 0) full = *ui->m.t->question ? "question" : "(no question yet)";
    else full = nd->action ? nd->action : nd->status == MCTS_PRUNED ? "(nothing new)" : "(planning)";
    char *raw = ui_model_arg(&ui->m, nd->id);
    char *arg = raw ? text_safe_dup(raw, ui->text_flags) : NULL;
    free(raw);
    int argw = arg ? text_width(arg, strlen(arg)) : 0;
    int want = argw < ARG_ROOM ? argw : ARG_ROOM;
    int fw = (int)strlen(full);
    const char *name = NULL;
    const char *ab = nd->parent >= 0 ? tree_action_abbrev(nd->action) : NULL;
    if (1 + fw + (arg ? 1 + want : 0) <= w) name = full;
    else {
        if (ab && 1 + (int)strlen(ab) <= w) name = ab;
        else if (1 + fw <= w) name = full;
    }
    if (!name && w >= 3) {
        /* never a blank row: the short name, cut and marked */
        x += draw_safe(win, y, x, 1, " ", 1, a);
        draw_cut(ui, win, y, x, w - 1, ab ? ab : full, a, 0);
    }
    if (name) {
        x += draw_safe(win, y, x, 1, " ", 1, a);
        x += draw_safe(win, y, x, w - 1, name, strlen(name), a);
        w -= 1 + (int)strlen(name);
        /* at least two columns of argument, or none */
        if (arg && w >= 3) {
            x += draw_safe(win, y, x, 1, " ", 1, a);
            int span = nd->action && !strcmp(nd->action, "ViewCode");
            draw_cut(ui, win, y, x, w - 1, arg, a, span);
        }
    }
    free(arg);
}

/* The tree's top row and its pinned rows for the cursor at row cur: the
 * cursor's ancestors that are scrolled off above are pinned (up to body - 1
 * of them, the deepest kept) and the rest of the pane scrolls so that the
 * cursor is on screen. Fills pin[] with row indices, returns how many. */
static int scroll_rows(struct pane *p, const struct ui_model *m, const int *rows, size_t n, int cur, int body,
                       int *pin)
{
    int nanc = 0;
    int *anc = xmalloc(((size_t)m->t->n + 1) * sizeof *anc);
    /* the ancestors' row indices, deepest first (they are all visible rows) */
    const struct mcts_node *nd = mcts_node(m->t, rows[cur]);
    int r = cur;
    while (nd && nd->parent >= 0) {
        int pid = nd->parent;
        while (r > 0 && rows[r] != pid) r--;
        if (rows[r] != pid) break;
        anc[nanc++] = r;
        nd = mcts_node(m->t, pid);
    }
    int top = p->top;
    if (top > (int)n - body) top = (int)n - body;
    if (top < 0) top = 0;
    if (cur < top) top = cur;
    int k;
    for (;;) {
        k = 0;
        for (int i = 0; i < nanc; i++)
            if (anc[i] < top) k++;
        if (k > body - 1) k = body - 1;
        if (k < 0) k = 0;
        if (cur < top + body - k) break;
        top = cur - (body - k) + 1;
    }
    /* the k deepest ancestors above the top, shallowest first */
    int np = 0;
    for (int i = nanc - 1; i >= 0; i--)
        if (anc[i] < top) pin[np++] = anc[i];
    if (np > k) {
        memmove(pin, pin + (np - k), (size_t)k * sizeof *pin);
        np = k;
    }
    free(anc);
    p->top = top;
    return np;
}

static void draw(struct ui *ui, struct pane *p)
{
    int *rows;
    size_t n = ui_model_rows(&ui->m, &rows);
    int W = p->w - 1;          /* the last column is the separator */
    struct colw c = colw(p);
    char info[96];
    cols_format(info, sizeof info, c, "N", "Q", "UCT", wide(p) ? "status" : "st");
    char title[64];
    snprintf(title, sizeof title, "Tree %d", ui->m.t->n);
    /* the title's info ends where the rows' columns end */
    draw_title(ui, p, title, info);
    int body = p->h - 1;
    int cur = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i] == ui->selected) cur = (int)i;
    p->nrows = (int)n;
    free(ui->tree_shown);
    ui->tree_shown = xmalloc(((size_t)(body > 0 ? body : 1)) * sizeof *ui->tree_shown);
    ui->tree_nshown = 0;
    int *pin = xmalloc(((size_t)(body > 0 ? body : 1)) * sizeof *pin);
    int npin = n && body > 0 ? scroll_rows(p, &ui->m, rows, n, cur, body, pin) : 0;
    int step = wide(p) ? 2 : 1;
    for (int r = 0; r < body; r++) {
        int at = r < npin ? pin[r] : p->top + (r - npin);
        if (at >= (int)n) break;
        const struct mcts_node *nd = mcts_node(ui->m.t, rows[at]);
        ui->tree_shown[ui->tree_nshown++] = nd->id;
        int y = r + 1;
        enum ui_role role = row_role(ui, nd);
        int is_cur = nd->id == ui->selected;
        attr_t a = ui_attr(ui, is_cur ? R_CURSOR : role);
        /* the last pinned row is underlined when rows are hidden below it */
        attr_t extra = r == npin - 1 && pin[r] + 1 < p->top ? A_UNDERLINE : 0;
        if (is_cur || extra) mvwhline(p->win, y, 0, ' ' | a | extra, W);
        char cols[96];
        columns(p, nd, cols, sizeof cols);
        int cw = (int)strlen(cols);
        int left = W - cw - 1;
        int x = 0;
        int best = ui_model_on_best(&ui->m, nd->id);
        x += draw_safe(p->win, y, x, 1, best ? "*" : " ", 1, ui_attr(ui, is_cur ? R_CURSOR : R_BEST) | extra);
        int depth = nd->depth < 12 ? nd->depth : 12;
        x += step * depth;
        const char *fold = nd->nchildren == 0 ? " " : ui_model_folded(&ui->m, nd->id) ? "+" : "-";
        if (x < left) x += draw_safe(p->win, y, x, left - x, fold, 1, a | extra);
        if (x < left) draw_label(ui, p->win, y, x, left - x, nd, a | extra);
        if (W - cw >= 0) draw_safe(p->win, y, W - cw, cw, cols, strlen(cols), a | extra);
    }
    free(pin);
    free(rows);
    /* The separator as text: ACS line drawing does not survive every
     * terminal (or tmux's capture), a box-drawing character or '|' does. */
    const char *bar = ui->text_flags & TEXT_ASCII ? "|" : "\u2502";
    if (p->w < COLS)   /* not when zoomed: nothing to separate */
        for (int y = 0; y < p->h; y++) draw_safe(p->win, y, p->w - 1, 1, bar, strlen(bar), ui_attr(ui, R_DIM));
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    int *rows;
    size_t n = ui_model_rows(&ui->m, &rows);
    int cur = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i] == ui->selected) cur = (int)i;
    int page = p->h > 2 ? p->h - 2 : 1;
    int to = cur, handled = 1;
    const struct mcts_node *nd = mcts_node(ui->m.t, ui->selected);
    switch (cmd) {
    case UI_CMD_DOWN: to = cur + 1; break;
    case UI_CMD_UP: to = cur - 1; break;
    case UI_CMD_PAGE_DOWN: to = cur + page; break;
    case UI_CMD_PAGE_UP: to = cur - page; break;
    case UI_CMD_TOP: to = 0; break;
    case UI_CMD_BOTTOM: to = (int)n - 1; break;
    case UI_CMD_COLLAPSE:
        if (nd && nd->nchildren && !ui_model_folded(&ui->m, nd->id)) {
            ui_model_set_folded(&ui->m, nd->id, 1);
            ui->follow = 0;
        } else if (nd && nd->parent >= 0) {
            ui_select(ui, nd->parent, 1);
        }
        break;
    case UI_CMD_EXPAND:
        if (nd && ui_model_folded(&ui->m, nd->id)) ui_model_set_folded(&ui->m, nd->id, 0);
        else if (nd && nd->nchildren) ui_select(ui, nd->children[0], 1);
        break;
    case UI_CMD_ACTIVATE:
        if (nd && nd->nchildren) {
            ui_model_set_folded(&ui->m, nd->id, !ui_model_folded(&ui->m, nd->id));
            ui->follow = 0;
        }
        break;
    default: handled = 0;
    }
    if (to != cur && n) {
        if (to < 0) to = 0;
        if (to >= (int)n) to = (int)n - 1;
        ui_select(ui, rows[to], 1);
    }
    free(rows);
    if (handled) p->dirty = 1;
    return handled;
}

static void click(struct ui *ui, struct pane *p, int y, int x)
{
    (void)x;
    (void)p;
    /* the rows as drawn: pinned ancestors first */
    if (y < 1 || y > ui->tree_nshown) return;
    int id = ui->tree_shown[y - 1];
    if (id == ui->selected) command(ui, p, UI_CMD_ACTIVATE);
    else ui_select(ui, id, 1);
}

const struct pane_ops pane_tree_ops = {"tree", draw, command, click};
