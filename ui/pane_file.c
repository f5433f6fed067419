/*
 * pane_file: a cited span in its file, read from the index (the text the
 * search saw, not whatever the file holds now). Line numbers on the left,
 * the cited lines highlighted, long lines cut at the pane's edge; scrolls,
 * and Esc closes it. Only the rows on screen are made safe and drawn, so
 * large files cost nothing extra.
 */
#include "ui.h"

#include <stdio.h>
#include <string.h>

static void draw(struct ui *ui, struct pane *p)
{
    char *title = xasprintf("%s:%d-%d", ui->file_path ? ui->file_path : "?", ui->file_start,
                            ui->file_end);
    int body = p->h - 1;
    p->nrows = ui->file_nlines;
    if (p->top > p->nrows - body) p->top = p->nrows - body;
    if (p->top < 0) p->top = 0;
    char info[64];
    snprintf(info, sizeof info, "line %d/%d  Esc closes", p->top + 1, ui->file_nlines);
    draw_title(ui, p, title, info);
    free(title);
    char num[32];
    snprintf(num, sizeof num, "%d", ui->file_nlines);
    int nw = (int)strlen(num);
    struct buf b = BUF_INIT;
    for (int r = 0; r < body && p->top + r < ui->file_nlines; r++) {
        int ln = p->top + r;          /* 0-based */
        size_t off = ui->file_lines[ln];
        size_t end = ln + 1 < ui->file_nlines ? ui->file_lines[ln + 1] : strlen(ui->file_text);
        if (end > off && ui->file_text[end - 1] == '\n') end--;
        int in_span = ln + 1 >= ui->file_start && ln + 1 <= ui->file_end;
        attr_t a = ui_attr(ui, in_span ? R_SPAN : R_NORMAL);
        if (in_span) mvwhline(p->win, r + 1, 0, ' ' | a, p->w);
        snprintf(num, sizeof num, "%*d ", nw > 10 ? 10 : nw, ln + 1);
        int x = draw_safe(p->win, r + 1, 0, p->w, num, strlen(num), ui_attr(ui, in_span ? R_SPAN : R_LINENO));
        buf_reset(&b);
        text_safe(&b, ui->file_text + off, end - off, 0, ui->text_flags);
        draw_safe(p->win, r + 1, x, p->w - x, buf_str(&b), b.len, a);
    }
    buf_free(&b);
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    (void)ui;
    return pane_scroll(p, cmd);
}

const struct pane_ops pane_file_ops = {"file", draw, command, NULL};
