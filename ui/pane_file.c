/*
 * pane_file: a cited span in its file, read from the index (the text the
 * search saw, not whatever the file holds now). Line numbers on the left,
 * the cited lines highlighted. A line longer than the pane is cut at its
 * edge with a marker (» at the right, « at the left when scrolled; > and <
 * without UTF-8) and the view scrolls sideways (h/l, Left/Right), or long
 * lines wrap onto the following rows (W toggles). / searches the file: its
 * matches are highlighted, the current one apart, and n/N go to the next
 * and previous match in reading order, wrapping around at the ends with a
 * message. Esc closes. Only the rows on screen are made safe and drawn, so
 * large files cost nothing extra.
 */
#include "ui.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Columns one Left/Right moves the view. */
#define HSTEP 8

void file_view_reset(struct ui *ui)
{
    ui->file_hscroll = 0;
    ui->file_find_on = 0;
    ui->file_match = -1;
}

static size_t line_end(const struct ui *ui, int ln, int keep_nl)
{
    size_t end = ln + 1 < ui->file_nlines ? ui->file_lines[ln + 1] : strlen(ui->file_text);
    if (!keep_nl && end > ui->file_lines[ln] && ui->file_text[end - 1] == '\n') end--;
    return end;
}

/* The line holding byte offset off. */
static int line_of(const struct ui *ui, size_t off)
{
    int lo = 0, hi = ui->file_nlines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (ui->file_lines[mid] <= off) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The next match of needle (ASCII case-insensitive) in s[0..len) at or
 * after from, or -1. Matches never span a newline (needle has none). */
static long match_at(const char *s, size_t len, size_t from, const char *needle)
{
    size_t nl = strlen(needle);
    if (!nl || nl > len) return -1;
    for (size_t i = from; i + nl <= len; i++) {
        size_t k = 0;
        while (k < nl && tolower((unsigned char)s[i + k]) == tolower((unsigned char)needle[k])) k++;
        if (k == nl) return (long)i;
    }
    return -1;
}

/* A line as shown: its safe text, cut into runs of one role each. */
struct seg { size_t a, b; int role; };
struct shown {
    struct buf text;
    struct seg v[64];
    int n;
    int width;
};

static void shown_add(struct shown *sh, const char *s, size_t len, int role, int *col, int flags)
{
    if (!len) return;
    size_t a = sh->text.len;
    *col = text_safe(&sh->text, s, len, *col, flags);
    if (sh->n && sh->v[sh->n - 1].role == role) {
        sh->v[sh->n - 1].b = sh->text.len;
        return;
    }
    sh->v[sh->n++] = (struct seg){a, sh->text.len, role};
}

/* Line ln made safe, the search's matches in their own roles. */
static void shown_line(struct ui *ui, int ln, int base, struct shown *sh)
{
    buf_reset(&sh->text);
    sh->n = 0;
    size_t off = ui->file_lines[ln], end = line_end(ui, ln, 0);
    const char *s = ui->file_text;
    int col = 0;
    size_t at = off;
    if (ui->file_find_on && ui->find && *ui->find) {
        size_t nl = strlen(ui->find);
        long m;
        /* (a line with more matches than runs shows the rest plain) */
        while (at < end && sh->n < (int)ARRAY_LEN(sh->v) - 2 && (m = match_at(s, end, at, ui->find)) >= 0) {
            shown_add(sh, s + at, (size_t)m - at, base, &col, ui->text_flags);
            shown_add(sh, s + m, nl, m == ui->file_match ? R_MATCH_CUR : R_MATCH, &col, ui->text_flags);
            at = (size_t)m + nl;
        }
    }
    shown_add(sh, s + at, end - at, base, &col, ui->text_flags);
    sh->width = text_width(buf_str(&sh->text), sh->text.len);
}

/* Draws columns [from, from + ncols) of the shown line at y, x. */
static void draw_cols(struct ui *ui, WINDOW *win, int y, int x, const struct shown *sh, int from, int ncols)
{
    const char *t = buf_str(&sh->text);
    int c0 = 0;
    for (int i = 0; i < sh->n && ncols > 0; i++) {
        const char *s = t + sh->v[i].a;
        size_t len = sh->v[i].b - sh->v[i].a;
        int sw = text_width(s, len);
        attr_t a = ui_attr(ui, sh->v[i].role);
        if (c0 + sw > from) {
            size_t skip = 0;
            if (from > c0) {
                int used;
                skip = text_fit(s, len, from - c0, &used);
                if (used < from - c0) {
                    /* a wide character across the edge: a blank for its visible half */
                    size_t nx = skip + 1;
                    while (nx < len && (s[nx] & 0xc0) == 0x80) nx++;
                    skip = nx;
                    x += draw_safe(win, y, x, 1, " ", 1, a);
                    ncols--;
                }
            }
            int used = draw_safe(win, y, x, ncols, s + skip, len - skip, a);
            x += used;
            ncols -= used;
            from = c0 + sw;
        }
        c0 += sw;
    }
}

/* The gutter: line numbers' width and the text's columns. */
static int gutter(const struct ui *ui)
{
    char num[32];
    int nw = snprintf(num, sizeof num, "%d", ui->file_nlines);
    return (nw > 10 ? 10 : nw) + 1;
}

static int text_cols(const struct ui *ui, const struct pane *p)
{
    int w = p->w - gutter(ui);
    return w > 1 ? w : 1;
}

/* Rows line ln takes on screen. */
static int line_rows(struct ui *ui, const struct pane *p, int ln, struct shown *sh)
{
    if (!ui->file_wrap) return 1;
    shown_line(ui, ln, R_NORMAL, sh);
    int tw = text_cols(ui, p);
    return sh->width > tw ? (sh->width + tw - 1) / tw : 1;
}

/* The last top line that still fills the pane. */
static int max_top(struct ui *ui, const struct pane *p)
{
    int body = p->h - 1;
    if (!ui->file_wrap) return ui->file_nlines - body > 0 ? ui->file_nlines - body : 0;
    struct shown sh = {BUF_INIT, {{0}}, 0, 0};
    int ln = ui->file_nlines, rows = 0;
    while (ln > 0) {
        int r = line_rows(ui, p, ln - 1, &sh);
        if (rows + r > body) break;
        rows += r;
        ln--;
    }
    buf_free(&sh.text);
    return ln < ui->file_nlines ? ln : ui->file_nlines - 1;
}

static void draw(struct ui *ui, struct pane *p)
{
    char *title = xasprintf("%s:%d-%d", ui->file_path ? ui->file_path : "?", ui->file_start,
                            ui->file_end);
    int body = p->h - 1;
    p->nrows = ui->file_nlines;
    int mt = max_top(ui, p);
    if (p->top > mt) p->top = mt;
    if (p->top < 0) p->top = 0;
    char info[96], side[32] = "";
    if (ui->file_wrap) snprintf(side, sizeof side, "  wrap");
    else if (ui->file_hscroll) snprintf(side, sizeof side, "  col %d", ui->file_hscroll + 1);
    snprintf(info, sizeof info, "line %d/%d%s  Esc closes", p->top + 1, ui->file_nlines, side);
    /* when the pane is narrow the hint gives way first, then the path's
     * leading directories (the file name, its lines and the position stay) */
    if ((int)(strlen(title) + strlen(info)) + 3 > p->w) info[strlen(info) - strlen("  Esc closes")] = 0;
    const char *t = title, *sl;
    while ((int)(strlen(t) + strlen(info)) + 3 > p->w && (sl = strchr(t + (t != title), '/')))
        t = sl;
    char *shown = t == title ? xstrdup(title) : xasprintf("%s%s", ui->text_flags & TEXT_ASCII ? "~" : "\u2026", t);
    draw_title(ui, p, shown, info);
    free(shown);
    free(title);
    int g = gutter(ui), tw = text_cols(ui, p);
    int ascii = ui->text_flags & TEXT_ASCII;
    const char *lmark = ascii ? "<" : "\u00ab", *rmark = ascii ? ">" : "\u00bb";
    struct shown sh = {BUF_INIT, {{0}}, 0, 0};
    char num[32];
    int r = 0;
    for (int ln = p->top; r < body && ln < ui->file_nlines; ln++) {
        int in_span = ln + 1 >= ui->file_start && ln + 1 <= ui->file_end;
        int base = in_span ? R_SPAN : R_NORMAL;
        attr_t a = ui_attr(ui, base);
        shown_line(ui, ln, base, &sh);
        snprintf(num, sizeof num, "%*d ", g - 1, ln + 1);
        attr_t na = ui_attr(ui, in_span ? R_SPAN : R_LINENO);
        if (ui->file_wrap) {
            for (int from = 0; r < body && (from == 0 || from < sh.width); from += tw, r++) {
                if (in_span) mvwhline(p->win, r + 1, 0, ' ' | a, p->w);
                if (from == 0) draw_safe(p->win, r + 1, 0, g, num, strlen(num), na);
                draw_cols(ui, p->win, r + 1, g, &sh, from, tw);
            }
            continue;
        }
        if (in_span) mvwhline(p->win, r + 1, 0, ' ' | a, p->w);
        draw_safe(p->win, r + 1, 0, g, num, strlen(num), na);
        int from = ui->file_hscroll, x = g, cols = tw;
        int left = from > 0 && sh.width > 0, right = sh.width > from + tw;
        attr_t ma = ui_attr(ui, in_span ? R_SPAN : R_DIM) | A_BOLD;
        if (left && cols > 1) {
            draw_safe(p->win, r + 1, x, 1, lmark, strlen(lmark), ma);
            x++, from++, cols--;
        }
        if (right && cols > 1) {
            draw_safe(p->win, r + 1, g + tw - 1, 1, rmark, strlen(rmark), ma);
            cols--;
        }
        draw_cols(ui, p->win, r + 1, x, &sh, from, cols);
        r++;
    }
    buf_free(&sh.text);
}

/* The widest line in view, for the sideways scroll's bound. */
static int widest_in_view(struct ui *ui, const struct pane *p)
{
    struct shown sh = {BUF_INIT, {{0}}, 0, 0};
    int w = 0;
    for (int ln = p->top; ln < p->top + p->h - 1 && ln < ui->file_nlines; ln++) {
        shown_line(ui, ln, R_NORMAL, &sh);
        if (sh.width > w) w = sh.width;
    }
    buf_free(&sh.text);
    return w;
}

/* Scrolls so that line ln is in view (a third down the pane when it was not)
 * and, while lines are cut, its columns [c0, c1) too. */
static void reveal(struct ui *ui, struct pane *p, int ln, int c0, int c1)
{
    int body = p->h - 1;
    struct shown sh = {BUF_INIT, {{0}}, 0, 0};
    int rows = 0, seen = 0;
    for (int l = p->top; l < ui->file_nlines && rows < body; l++) {
        rows += line_rows(ui, p, l, &sh);
        if (l == ln && rows <= body) seen = 1;
    }
    if (ln < p->top || !seen) {
        int top = ln, above = 0;
        while (top > 0 && above + line_rows(ui, p, top - 1, &sh) <= body / 3) above += line_rows(ui, p, --top, &sh);
        p->top = top;
    }
    buf_free(&sh.text);
    if (!ui->file_wrap) {
        int tw = text_cols(ui, p) - 2;   /* the markers' columns */
        if (tw < 1) tw = 1;
        if (c0 < ui->file_hscroll + (ui->file_hscroll ? 1 : 0) || c1 > ui->file_hscroll + tw)
            ui->file_hscroll = c0 > tw / 3 ? c0 - tw / 3 : 0;
    }
    p->dirty = 1;
}

void file_find(struct ui *ui, int dir, int fresh)
{
    struct pane *p = &ui->panes[PANE_FILE];
    if (!ui->file_text) return;
    if (!ui->find || !*ui->find) {
        ui_message(ui, 1, "no search text: press / first");
        return;
    }
    const char *s = ui->file_text;
    size_t len = strlen(s);
    /* every match, counted, and the one to go to */
    long first = -1, last = -1, to = -1;
    int total = 0, index = 0, wrapped = 0;
    size_t from = fresh ? ui->file_lines[p->top < ui->file_nlines ? p->top : 0] : 0;
    long cur = ui->file_match;
    for (long m = match_at(s, len, 0, ui->find); m >= 0; m = match_at(s, len, (size_t)m + 1, ui->find)) {
        total++;
        if (first < 0) first = m;
        last = m;
        if (fresh) {
            if (dir > 0 && to < 0 && (size_t)m >= from) to = m, index = total;
            if (dir < 0 && (size_t)m < from) to = m, index = total;
        } else if (cur < 0) {
            if (to < 0) to = m, index = total;
        } else {
            if (dir > 0 && to < 0 && m > cur) to = m, index = total;
            if (dir < 0 && m < cur) to = m, index = total;
        }
    }
    if (!total) {
        ui->file_match = -1;
        ui->file_find_on = 1;
        p->dirty = 1;
        ui_message(ui, 1, "no match for '%s' in %s", ui->find, ui->file_path);
        return;
    }
    if (to < 0) {
        to = dir > 0 ? first : last;
        index = dir > 0 ? 1 : total;
        wrapped = 1;
    }
    ui->file_match = to;
    ui->file_find_on = 1;
    int ln = line_of(ui, (size_t)to);
    /* the match's columns on screen */
    struct buf b = BUF_INIT;
    size_t ls = ui->file_lines[ln];
    int c0 = text_safe(&b, s + ls, (size_t)to - ls, 0, ui->text_flags);
    c0 = text_width(buf_str(&b), b.len);
    text_safe(&b, s + to, strlen(ui->find), c0, ui->text_flags);
    int c1 = text_width(buf_str(&b), b.len);
    buf_free(&b);
    reveal(ui, p, ln, c0, c1);
    if (wrapped)
        ui_message(ui, 0, "'%s': match %d/%d, line %d (wrapped around to the %s)", ui->find, index, total, ln + 1,
                   dir > 0 ? "top" : "bottom");
    else ui_message(ui, 0, "'%s': match %d/%d, line %d", ui->find, index, total, ln + 1);
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    int mt = max_top(ui, p);   /* wrapped lines take several rows */
    if (pane_scroll_max(p, cmd, mt)) return 1;
    switch (cmd) {
    case UI_CMD_COLLAPSE:
    case UI_CMD_EXPAND:
        if (ui->file_wrap) {
            ui_message(ui, 1, "the lines wrap, nothing is hidden sideways (W cuts them again)");
            return 1;
        }
        if (cmd == UI_CMD_COLLAPSE) ui->file_hscroll -= HSTEP;
        else if (ui->file_hscroll + text_cols(ui, p) < widest_in_view(ui, p) + 1)
            ui->file_hscroll += HSTEP;   /* only while a line in view is cut at the right */
        if (ui->file_hscroll < 0) ui->file_hscroll = 0;
        break;
    case UI_CMD_WRAP:
        ui->file_wrap = !ui->file_wrap;
        ui->file_hscroll = 0;
        ui_message(ui, 0, ui->file_wrap ? "long lines wrap (W cuts them)" : "long lines are cut (W wraps them)");
        break;
    default: return 0;
    }
    if (p->top > mt) p->top = mt;
    if (p->top < 0) p->top = 0;
    p->dirty = 1;
    return 1;
}

const struct pane_ops pane_file_ops = {"file", draw, command, NULL};
