/*
 * draw: the only way text reaches the screen. Every string from a file, a
 * model or the user passes through text_safe before curses sees it, and is
 * cut to the columns it may use, so a pane never writes outside its window
 * and no escape sequence reaches the terminal. Also the documents of wrapped
 * rows that the text panes scroll through, and the attribute each role is
 * drawn with. And how a handler asks for drawing: a pane marked dirty
 * (ui_dirty), a message on the input line (ui_message).
 */
#include "ui.h"

#include <stdlib.h>
#include <string.h>

/* The attribute of each role: a colour pair when the terminal has colours and
 * NO_COLOR is unset, else a monochrome attribute. */
void draw_init_attrs(struct ui *ui)
{
    const char *nc = getenv("NO_COLOR");
    int color = has_colors() && !(nc && *nc);
    static const struct { short fg, bg; attr_t mono, extra; } spec[R_ROLE_COUNT] = {
        [R_NORMAL] = {-1, -1, A_NORMAL, A_NORMAL},
        [R_TITLE] = {COLOR_WHITE, COLOR_BLUE, A_UNDERLINE, A_NORMAL},
        [R_TITLE_FOCUS] = {COLOR_BLACK, COLOR_CYAN, A_REVERSE, A_BOLD},
        [R_CURSOR] = {COLOR_BLACK, COLOR_WHITE, A_REVERSE, A_NORMAL},
        [R_BEST] = {COLOR_GREEN, -1, A_BOLD, A_BOLD},
        [R_RUNNING] = {COLOR_YELLOW, -1, A_BOLD, A_NORMAL},
        [R_FINISHED] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
        [R_PRUNED] = {COLOR_MAGENTA, -1, A_DIM, A_NORMAL},
        [R_ERROR] = {COLOR_RED, -1, A_BOLD, A_BOLD},
        [R_HEADER] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
        [R_LINENO] = {COLOR_YELLOW, -1, A_DIM, A_NORMAL},
        [R_SPAN] = {COLOR_BLACK, COLOR_YELLOW, A_STANDOUT, A_NORMAL},
        [R_STATUS] = {COLOR_BLACK, COLOR_GREEN, A_REVERSE, A_NORMAL},
        [R_MESSAGE] = {-1, -1, A_NORMAL, A_NORMAL},
        [R_DIM] = {COLOR_BLUE, -1, A_DIM, A_NORMAL},
        [R_MATCH] = {COLOR_BLACK, COLOR_MAGENTA, A_UNDERLINE | A_BOLD, A_NORMAL},
        [R_MATCH_CUR] = {COLOR_WHITE, COLOR_RED, A_REVERSE | A_UNDERLINE | A_BOLD, A_BOLD},
    };
    if (color) {
        start_color();
        use_default_colors();
    }
    for (int r = 0; r < R_ROLE_COUNT; r++) {
        if (!color || (spec[r].fg == -1 && spec[r].bg == -1)) {
            ui->attrs[r] = spec[r].mono;
            continue;
        }
        init_pair((short)r, spec[r].fg, spec[r].bg);
        ui->attrs[r] = COLOR_PAIR(r) | spec[r].extra;
    }
}

attr_t ui_attr(const struct ui *ui, enum ui_role r)
{
    return ui->attrs[r];
}

int draw_safe(WINDOW *win, int y, int x, int w, const char *s, size_t len, attr_t a)
{
    if (w <= 0 || !win) return 0;
    int used;
    size_t n = text_fit(s, len, w, &used);
    wattrset(win, a);
    mvwaddnstr(win, y, x, s, (int)n);
    wattrset(win, A_NORMAL);
    return used;
}

void draw_text(struct ui *ui, WINDOW *win, int y, int x, int w, const char *raw, enum ui_role r)
{
    struct buf b = BUF_INIT;
    text_safe(&b, raw ? raw : "", raw ? strlen(raw) : 0, 0, ui->text_flags);
    draw_safe(win, y, x, w, buf_str(&b), b.len, ui_attr(ui, r));
    buf_free(&b);
}

void draw_title(struct ui *ui, struct pane *p, const char *title, const char *info)
{
    int focused = ui->focus == (int)(p - ui->panes);
    attr_t a = ui_attr(ui, focused ? R_TITLE_FOCUS : R_TITLE);
    wattrset(p->win, a);
    wmove(p->win, 0, 0);
    for (int i = 0; i < p->w; i++) waddch(p->win, ' ');
    wattrset(p->win, A_NORMAL);
    char *t = text_safe_dup(title, ui->text_flags);
    int used = draw_safe(p->win, 0, 1, p->w - 2, t, strlen(t), a);
    free(t);
    /* a zoomed pane says so, and how to go back */
    if (focused && ui->zoom) used += draw_safe(p->win, 0, 1 + used, p->w - 2 - used, " [zoom: z]", 10, a);
    int info_x = p->w - 1;
    if (info && *info) {
        char *s = text_safe_dup(info, ui->text_flags);
        int iw = text_width(s, strlen(s));
        int room = p->w - used - 3;
        if (room > 0) {
            if (iw > room) iw = room;
            info_x = p->w - 1 - iw;
            draw_safe(p->win, 0, info_x, iw, s, strlen(s), a);
        }
        free(s);
    }
    /* The focused pane's title is also drawn as a heavy line between its
     * name and its info: the focus shows without colours, too (NO_COLOR,
     * a monochrome terminal, a screen copied as text). */
    if (focused && p->w < COLS) {
        const char *bar = ui->text_flags & TEXT_ASCII ? "=" : "\u2501";
        for (int x = used + 2; x < info_x - 1; x++) draw_safe(p->win, 0, x, 1, bar, strlen(bar), a);
    }
}

void doc_clear(struct doc *d)
{
    for (size_t i = 0; i < d->n; i++) free(d->v[i].text);
    free(d->v);
    memset(d, 0, sizeof *d);
}

static void doc_push(struct doc *d, const char *s, size_t len, int role, int tag)
{
    ARRAY_GROW(d->v, d->n, d->cap, 64);
    d->v[d->n].text = xstrndup(s, len);
    d->v[d->n].role = role;
    d->v[d->n].tag = tag;
    d->n++;
}

void doc_add(struct ui *ui, struct doc *d, const char *raw, int width, int indent, int role, int tag)
{
    if (width < 4) width = 4;
    if (indent > width / 2) indent = 0;
    const char *p = raw ? raw : "";
    struct buf b = BUF_INIT;
    for (;;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        buf_reset(&b);
        text_safe(&b, p, len, 0, ui->text_flags);
        const char *s = buf_str(&b);
        size_t left = b.len, off = 0;
        int first = 1;
        do {
            int w = first ? width : width - indent;
            size_t next;
            size_t row = text_wrap(s + off, left, w, &next);
            if (first) {
                doc_push(d, s + off, row, role, tag);
            } else {
                char *ind = xasprintf("%*s%.*s", indent, "", (int)row, s + off);
                doc_push(d, ind, strlen(ind), role, tag);
                free(ind);
            }
            off += next;
            left -= next;
            first = 0;
        } while (left > 0);
        if (!nl) break;
        p = nl + 1;
    }
    buf_free(&b);
}

void doc_draw(struct ui *ui, struct pane *p, const struct doc *d, int tag_highlight)
{
    int rows = p->h - 1;
    p->nrows = (int)d->n;
    if (p->top > (int)d->n - rows) p->top = (int)d->n - rows;
    if (p->top < 0) p->top = 0;
    for (int r = 0; r < rows && p->top + r < (int)d->n; r++) {
        const struct doc_row *row = &d->v[p->top + r];
        int role = row->role;
        if (tag_highlight && row->tag == tag_highlight) role = R_CURSOR;
        attr_t a = ui_attr(ui, role);
        if (role == R_CURSOR) {
            mvwhline(p->win, r + 1, 0, ' ' | a, p->w);
        }
        draw_safe(p->win, r + 1, 1, p->w - 2, row->text, strlen(row->text), a);
    }
}

int pane_scroll(struct pane *p, enum ui_cmd cmd)
{
    int max = p->nrows - (p->h - 1);
    return pane_scroll_max(p, cmd, max < 0 ? 0 : max);
}

int pane_scroll_max(struct pane *p, enum ui_cmd cmd, int max)
{
    int page = p->h > 2 ? p->h - 2 : 1;
    switch (cmd) {
    case UI_CMD_DOWN: p->top++; break;
    case UI_CMD_UP: p->top--; break;
    case UI_CMD_PAGE_DOWN: p->top += page; break;
    case UI_CMD_PAGE_UP: p->top -= page; break;
    case UI_CMD_TOP: p->top = 0; break;
    case UI_CMD_BOTTOM: p->top = max; break;
    default: return 0;
    }
    if (p->top > max) p->top = max;
    if (p->top < 0) p->top = 0;
    p->dirty = 1;
    return 1;
}

void ui_dirty(struct ui *ui, int pane)
{
    ui->panes[pane].dirty = 1;
}

void ui_dirty_all(struct ui *ui)
{
    for (int i = 0; i < PANE_COUNT; i++) ui->panes[i].dirty = 1;
}

void ui_remember(struct ui *ui, const char *text)
{
    if (!text || !*text) return;
    if (ui->nrecent == UI_RECENT) {
        free(ui->recent[0]);
        memmove(ui->recent, ui->recent + 1, (UI_RECENT - 1) * sizeof *ui->recent);
        ui->nrecent--;
    }
    ui->recent[ui->nrecent++] = xstrdup(text);
}

void ui_message(struct ui *ui, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct buf b = BUF_INIT;
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    free(ui->msg);
    ui->msg = buf_take(&b);
    ui_remember(ui, ui->msg);
    ui->msg_error = error;
    ui->msg_transient = 0;
    ui_dirty(ui, PANE_INPUT);
}
