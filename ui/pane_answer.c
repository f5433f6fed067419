/*
 * pane_answer: the answer once the search has given one, then its citations
 * as 'path:start-end' lines. Up and down move between citations while
 * the list is on screen and scroll the text otherwise, the page keys scroll
 * the text, and Enter (or a click) opens the cited span in the file view.
 * While the model writes the answer, the pane shows the text as it arrives
 * (no citations yet), titled so; the answer as checked replaces it when it
 * comes, and a stopped one keeps "stopped" in its title.
 */
#include "ui.h"

#include <stdio.h>
#include <string.h>

/* The answer as it is written: its text so far, or what it waits for. */
static void build_writing(struct ui *ui, const struct ui_writing *wr, int w, struct doc *d)
{
    if (wr->rewrites) doc_add(ui, d, "(the answer is being written again)", w, 0, R_DIM, 0);
    if (wr->text.len) doc_add(ui, d, buf_str(&wr->text), w, 0, R_NORMAL, 0);
    else doc_add(ui, d, wr->reasoning_only ? "(the model is reasoning before it writes)" : "", w, 0, R_DIM, 0);
    if (wr->stop_asked) doc_add(ui, d, "(stopping: the part written so far is kept)", w, 0, R_DIM, 0);
}

static void build(struct ui *ui, struct pane *p, struct doc *d)
{
    const struct search_answer *a = ui->m.answer;
    int w = p->w - 2;
    if (ui->m.writing.active) {
        build_writing(ui, &ui->m.writing, w, d);
        return;
    }
    if (!a) return;
    if (!a->from_finished)
        doc_add(ui, d, "(no trajectory reached Finish)", w, 0,
                R_DIM, 0);
    doc_add(ui, d, a->markdown ? a->markdown : "", w, 0, R_NORMAL, 0);
    doc_add(ui, d, "", w, 0, R_NORMAL, 0);
    doc_add(ui, d, a->cites.n ? "Citations (Enter opens):" : "Citations: none", w, 0, R_HEADER, 0);
    for (size_t i = 0; i < a->cites.n; i++) {
        const struct evidence_span *c = &a->cites.v[i];
        char *s = xasprintf("[%zu] %s:%d-%d%s%s", i + 1, c->path, c->start_line, c->end_line,
                            c->label ? "  " : "", c->label ? c->label : "");
        doc_add(ui, d, s, w, 4, R_NORMAL, (int)i + 1);
        free(s);
    }
}

/* The first and last rows of citation tag in d (-1 when absent). */
static void cite_rows(const struct doc *d, int tag, int *first, int *last)
{
    *first = *last = -1;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].tag == tag) {
            if (*first < 0) *first = (int)i;
            *last = (int)i;
        }
}

static void draw(struct ui *ui, struct pane *p)
{
    struct doc d = {0};
    build(ui, p, &d);
    size_t nc = ui->m.answer && !ui->m.writing.active ? ui->m.answer->cites.n : 0;
    if (p->cursor >= (int)nc) p->cursor = nc ? (int)nc - 1 : 0;
    if (ui->m.writing.active && (int)d.n > p->h - 1) p->top = (int)d.n - (p->h - 1);   /* the newest text */
    /* keep the selected citation in view */
    if (nc) {
        int first, last;
        cite_rows(&d, p->cursor + 1, &first, &last);
        int body = p->h - 1;
        if (p->follow_cursor && first >= 0) {
            if (last >= p->top + body) p->top = last - body + 1;
            if (first < p->top) p->top = first;
        }
    }
    char info[48] = "";
    if (nc) snprintf(info, sizeof info, "cite %d/%zu", p->cursor + 1, nc);
    const char *title = ui->m.answer && ui->m.answer->from_finished ? "Answer" : "Answer (best path)";
    char by[96];
    /* the fallback's answer is never titled as the model's (--ask's heading) */
    if (ui->m.answer && ui->m.answer->written_by) {
        snprintf(by, sizeof by, "The %s policy's answer (the model's answer call failed)", ui->m.answer->written_by);
        title = by;
    }
    if (ui->m.writing.active) title = "Answer (being written; Esc stops)";
    else if (ui->m.answer && ui->m.answer->stopped) title = "Answer (stopped, incomplete)";
    draw_title(ui, p, title, info);
    doc_draw(ui, p, &d, ui->focus == PANE_ANSWER && nc ? p->cursor + 1 : 0);
    doc_clear(&d);
}

/* g and G go to the first and the last line (G also to the last
 * citation). j and k move between the citations while the selected one is
 * on screen, and scroll a line otherwise: through the text above the list,
 * and past its ends (k on the first citation scrolls up, it never jumps). */
static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    size_t nc = ui->m.answer && !ui->m.writing.active ? ui->m.answer->cites.n : 0;
    if (cmd == UI_CMD_TOP || cmd == UI_CMD_BOTTOM) {
        p->cursor = cmd == UI_CMD_BOTTOM && nc ? (int)nc - 1 : 0;
        p->follow_cursor = 0;
        return pane_scroll(p, cmd);
    }
    if (nc && (cmd == UI_CMD_DOWN || cmd == UI_CMD_UP)) {
        struct doc d = {0};
        build(ui, p, &d);
        int first, last, c = p->cursor + (cmd == UI_CMD_DOWN ? 1 : -1);
        cite_rows(&d, p->cursor + 1, &first, &last);
        doc_clear(&d);
        if (first >= p->top && last < p->top + p->h - 1 && c >= 0 && c < (int)nc) {
            p->cursor = c;
            p->follow_cursor = 1;
            p->dirty = 1;
            return 1;
        }
    }
    if (cmd == UI_CMD_ACTIVATE) {
        if (nc) ui_open_citation(ui, (size_t)p->cursor);
        return 1;
    }
    if (pane_scroll(p, cmd)) {
        p->follow_cursor = 0;
        return 1;
    }
    return 0;
}

static void click(struct ui *ui, struct pane *p, int y, int x)
{
    (void)x;
    struct doc d = {0};
    build(ui, p, &d);
    int at = p->top + y - 1;
    if (y >= 1 && at < (int)d.n && d.v[at].tag > 0) {
        p->cursor = d.v[at].tag - 1;
        p->follow_cursor = 1;
        ui_open_citation(ui, (size_t)p->cursor);
    }
    doc_clear(&d);
}

const struct pane_ops pane_answer_ops = {"answer", draw, command, click};
