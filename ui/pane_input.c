/*
 * pane_input: the bottom line. While a question or a search text is typed it
 * is the line editor (prompt, text, cursor); while quitting waits for a yes
 * it asks; otherwise it shows the latest message (the front end's own, else
 * the search's last log line) or a hint.
 */
#include "ui.h"

#include <string.h>
#include <unistd.h>

/* A message too wide for the line loses the leading directories of its
 * paths first (file names stay), then its end, each cut marked; the help
 * screen ends with the recent messages in full. */
static void draw_message(struct ui *ui, struct pane *p, const char *msg, enum ui_role r)
{
    const char *mk = ui->text_flags & TEXT_ASCII ? "~" : "\u2026";
    char *safe = text_safe_dup(msg, ui->text_flags);
    char *s = text_shorten_paths(safe, p->w, mk);
    size_t len = strlen(s);
    attr_t a = ui_attr(ui, r);
    if (text_width(s, len) <= p->w) {
        draw_safe(p->win, 0, 0, p->w, s, len, a);
    } else {
        int used = draw_safe(p->win, 0, 0, p->w - 1, s, len, a);
        draw_safe(p->win, 0, used, 1, mk, strlen(mk), a);
    }
    free(s);
    free(safe);
}

static void draw(struct ui *ui, struct pane *p)
{
    if (ui->edit == EDIT_ASK || ui->edit == EDIT_FIND) {
        const char *prompt = ui->edit == EDIT_ASK ? "Ask: " : ui->find_file ? "Find in file: " : "Find: ";
        int x = draw_safe(p->win, 0, 0, p->w, prompt, strlen(prompt), ui_attr(ui, R_HEADER));
        struct buf b = BUF_INIT, pre = BUF_INIT;
        text_safe(&b, ui->line.data ? ui->line.data : "", ui->line.len, 0, ui->text_flags);
        text_safe(&pre, ui->line.data ? ui->line.data : "", ui->line_pos, 0, ui->text_flags);
        /* the text scrolls sideways to keep the cursor on screen; a mark
         * at either end says that the line goes on past it */
        int room = p->w - x, tw = text_width(buf_str(&b), b.len);
        int cw = text_width(buf_str(&pre), pre.len);
        const char *lm = ui->text_flags & TEXT_ASCII ? "<" : "\u00ab", *rm = ui->text_flags & TEXT_ASCII ? ">" : "\u00bb";
        size_t skip = 0;
        int lead = 0, rmark = 0, ws = 0;
        for (;;) {
            lead = skip ? 1 : 0;
            rmark = tw - ws > room - lead - 1;   /* the rest and a cell for the cursor */
            if (cw - ws < room - lead - rmark || skip >= b.len) break;
            skip++;
            while (skip < b.len && (b.data[skip] & 0xc0) == 0x80) skip++;
            ws = text_width(buf_str(&b), skip);
        }
        if (lead) draw_safe(p->win, 0, x, 1, lm, strlen(lm), ui_attr(ui, R_DIM));
        draw_safe(p->win, 0, x + lead, room - lead - rmark, buf_str(&b) + skip, b.len - skip, ui_attr(ui, R_NORMAL));
        if (rmark) draw_safe(p->win, 0, p->w - 1, 1, rm, strlen(rm), ui_attr(ui, R_DIM));
        if (ui->edit == EDIT_ASK && ui->line.len == 0) {
            /* first contact: say what the line is for, and how to leave it */
            char *hint = xasprintf("a question about %s, then Enter (Esc: close this line, F1: the keys)",
                                   ui->repo_name ? ui->repo_name : "the repository");
            if ((int)strlen(hint) > p->w - x - 1) {
                free(hint);   /* a narrow line keeps how to leave it */
                hint = xstrdup("a question, then Enter (Esc: close this line)");
            }
            draw_text(ui, p->win, 0, x + 1, p->w - x - 1, hint, R_DIM);
            free(hint);
        }
        int cx = x + lead + cw - ws;
        wmove(p->win, 0, cx < p->w ? cx : p->w - 1);
        buf_free(&b);
        buf_free(&pre);
        return;
    }
    if (ui->edit == EDIT_CONFIRM_QUIT) {
        /* a first index is built beside the path and takes it when done:
         * while the path holds nothing, there is no previous index to keep */
        const char *q = ui->m.state != EVQ_STATE_INDEXING ? "A search is running. Quit? (y/n)"
                        : ui->index_path && access(ui->index_path, F_OK) == 0
                            ? "Indexing is under way (quitting keeps the previous index). Quit? (y/n)"
                            : "The first index is being built (quitting drops it; the next start builds it again). Quit? (y/n)";
        draw_safe(p->win, 0, 0, p->w, q, strlen(q), ui_attr(ui, R_ERROR));
        return;
    }
    const char *msg = ui->msg ? ui->msg : ui->m.message;
    if (msg) draw_message(ui, p, msg, ui->msg && ui->msg_error ? R_ERROR : R_MESSAGE);
    else draw_text(ui, p->win, 0, 0, p->w, ui->replay ? "replay: ? help, q quit"
                                                      : "? help  a ask  p pause  s step  f finish  q quit",
                   R_DIM);
}

const struct pane_ops pane_input_ops = {"input", draw, NULL, NULL};
