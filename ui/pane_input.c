/*
 * pane_input: the bottom line. While a question or a search text is typed it
 * is the line editor (prompt, text, cursor); while quitting waits for a yes
 * it asks; otherwise it shows the latest message (the front end's own, else
 * the search's last log line) or a hint.
 */
#include "ui.h"

#include <string.h>

static void draw(struct ui *ui, struct pane *p)
{
    if (ui->edit == EDIT_ASK || ui->edit == EDIT_FIND) {
        const char *prompt = ui->edit == EDIT_ASK ? "Ask: " : ui->find_file ? "Find in file: " : "Find: ";
        int x = draw_safe(p->win, 0, 0, p->w, prompt, strlen(prompt), ui_attr(ui, R_HEADER));
        struct buf b = BUF_INIT, pre = BUF_INIT;
        text_safe(&b, ui->line.data ? ui->line.data : "", ui->line.len, 0, ui->text_flags);
        text_safe(&pre, ui->line.data ? ui->line.data : "", ui->line_pos, 0, ui->text_flags);
        int room = p->w - x - 1;
        int cw = text_width(buf_str(&pre), pre.len);
        /* Scroll the text left so the cursor stays on screen. */
        size_t skip = 0;
        while (cw - text_width(buf_str(&b), skip) > room && skip < b.len) {
            skip++;
            while (skip < b.len && (b.data[skip] & 0xc0) == 0x80) skip++;
        }
        draw_safe(p->win, 0, x, room, buf_str(&b) + skip, b.len - skip, ui_attr(ui, R_NORMAL));
        if (ui->edit == EDIT_ASK && ui->line.len == 0) {
            /* first contact: say what the line is for */
            char *hint = xasprintf("a question about %s, then Enter (Esc: the keys, F1: help)",
                                   ui->repo_name ? ui->repo_name : "the repository");
            draw_text(ui, p->win, 0, x + 1, p->w - x - 1, hint, R_DIM);
            free(hint);
        }
        int cx = x + cw - text_width(buf_str(&b), skip);
        wmove(p->win, 0, cx < p->w ? cx : p->w - 1);
        buf_free(&b);
        buf_free(&pre);
        return;
    }
    if (ui->edit == EDIT_CONFIRM_QUIT) {
        const char *q = ui->m.state == EVQ_STATE_INDEXING
                            ? "Indexing is under way (quitting keeps the previous index). Quit? (y/n)"
                            : "A search is running. Quit? (y/n)";
        draw_safe(p->win, 0, 0, p->w, q, strlen(q), ui_attr(ui, R_ERROR));
        return;
    }
    const char *msg = ui->msg ? ui->msg : ui->m.message;
    if (msg) draw_text(ui, p->win, 0, 0, p->w, msg, ui->msg && ui->msg_error ? R_ERROR : R_MESSAGE);
    else draw_text(ui, p->win, 0, 0, p->w, ui->replay ? "replay: ? help, q quit"
                                                      : "? help  a ask  p pause  s step  f finish  q quit",
                   R_DIM);
}

const struct pane_ops pane_input_ops = {"input", draw, NULL, NULL};
