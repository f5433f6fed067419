/*
 * pane_tree: the live search tree on the left. The rows are rebuilt from the
 * model at every draw (folded subtrees and the cursor are kept by node id, so
 * nothing is lost when the tree grows); each row shows the node's id, action
 * and key argument, visits N, mean value Q, the UCT score it had at the
 * newest selection that compared it ('>' when it won there) and its status,
 * with the current best path marked '*'.
 */
#include "ui.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

static void fmt_num(char *out, size_t n, double v, int decimals, int has)
{
    if (!has) snprintf(out, n, "-");
    else if (isinf(v)) snprintf(out, n, "inf");
    else snprintf(out, n, "%.*f", decimals, v);
}

/* The UCT column: the score the node had as a child at the newest
 * selection that compared it (the engine's record, mcts_last_mark), '>'
 * before it when it won that comparison; '-' when no selection scored it.
 * Four digits or more drop the decimals so the column keeps its width. */
static void fmt_uct(char *out, size_t n, const struct mcts_node *nd, int decimals)
{
    const struct mcts_uct_mark *mk = mcts_last_mark(nd, 0);
    char num[24];
    if (mk && fabs(mk->score) >= 1000) decimals = 0;
    fmt_num(num, sizeof num, mk ? mk->score : 0, decimals, mk != NULL);
    snprintf(out, n, "%s%s", mk && mk->chosen ? ">" : "", num);
}

/* The right-hand columns of a node's row. */
static void columns(const struct pane *p, const struct mcts_node *n, char *out, size_t len)
{
    char q[16], u[32];
    int w = wide(p);
    fmt_num(q, sizeof q, mcts_q(n), w ? 1 : 0, n->visits > 0);
    fmt_uct(u, sizeof u, n, w ? 1 : 0);
    /* a root without a question has no state to show (not "done") */
    const char *st = n->parent < 0 && n->visits == 0 && n->nchildren == 0 && !n->has_value ? "-"
                                                                                        : ui_model_status_word(n);
    /* the winner's '>' takes the space before the number */
    if (w) snprintf(out, len, "%4d %5s%7s %-9s", n->visits, q, u, st);
    else snprintf(out, len, "%3d %4s%5s %-4s", n->visits, q, u, abbrev(st));
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

static void draw(struct ui *ui, struct pane *p)
{
    int *rows;
    size_t n = ui_model_rows(&ui->m, &rows);
    char info[64];
    snprintf(info, sizeof info, wide(p) ? "   N     Q    UCT status   " : "  N    Q  UCT st  ");
    char title[64];
    snprintf(title, sizeof title, "Tree %d", ui->m.t->n);
    draw_title(ui, p, title, info);
    int W = p->w - 1;          /* the last column is the separator */
    int body = p->h - 1;
    int cur = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i] == ui->selected) cur = (int)i;
    if (cur < p->top) p->top = cur;
    if (cur >= p->top + body) p->top = cur - body + 1;
    if (p->top > (int)n - body) p->top = (int)n - body;
    if (p->top < 0) p->top = 0;
    p->nrows = (int)n;
    int step = wide(p) ? 2 : 1;
    for (int r = 0; r < body && p->top + r < (int)n; r++) {
        const struct mcts_node *nd = mcts_node(ui->m.t, rows[p->top + r]);
        int y = r + 1;
        enum ui_role role = row_role(ui, nd);
        int is_cur = nd->id == ui->selected;
        attr_t a = ui_attr(ui, is_cur ? R_CURSOR : role);
        if (is_cur) mvwhline(p->win, y, 0, ' ' | a, W);
        char cols[64];
        columns(p, nd, cols, sizeof cols);
        int cw = (int)strlen(cols);
        int left = W - cw - 1;
        int x = 0;
        int best = ui_model_on_best(&ui->m, nd->id);
        x += draw_safe(p->win, y, x, 1, best ? "*" : " ", 1, ui_attr(ui, is_cur ? R_CURSOR : R_BEST));
        int depth = nd->depth < 12 ? nd->depth : 12;
        x += step * depth;
        const char *fold = nd->nchildren == 0 ? " " : ui_model_folded(&ui->m, nd->id) ? "+" : "-";
        if (x < left) x += draw_safe(p->win, y, x, left - x, fold, 1, a);
        char *label = ui_model_label(&ui->m, nd->id);
        char *line = xasprintf("%d %s", nd->id, label);
        if (x < left) draw_text(ui, p->win, y, x, left - x, line, is_cur ? R_CURSOR : role);
        free(line);
        free(label);
        if (W - cw >= 0) draw_safe(p->win, y, W - cw, cw, cols, strlen(cols), a);
    }
    free(rows);
    /* The separator as text: ACS line drawing does not survive every
     * terminal (or tmux's capture), a box-drawing character or '|' does. */
    const char *bar = ui->text_flags & TEXT_ASCII ? "|" : "\u2502";
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
    if (y < 1) return;
    int *rows;
    size_t n = ui_model_rows(&ui->m, &rows);
    int at = p->top + y - 1;
    if (at >= 0 && at < (int)n) {
        if (rows[at] == ui->selected) command(ui, p, UI_CMD_ACTIVATE);
        else ui_select(ui, rows[at], 1);
    }
    free(rows);
}

const struct pane_ops pane_tree_ops = {"tree", draw, command, click};
