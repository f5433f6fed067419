/*
 * navigate: where a handler sends the user. Selecting a node of the tree
 * (ui_select), and opening an indexed file's lines in the file view
 * (ui_open_span, ui_open_citation) or closing it (ui_close_file). The panes
 * call these from their commands and the main loop from its own, so they sit
 * below both: the main loop holds the panes' ops, and a pane reaches the
 * file view and the selection through here rather than through ui_main.c.
 */
#include "ui.h"
#include "store.h"

#include <stdlib.h>
#include <string.h>

void ui_select(struct ui *ui, int id, int by_user)
{
    if (!mcts_node(ui->m.t, id)) return;
    if (by_user && ui->follow) {
        ui->follow = 0;
        ui_dirty(ui, PANE_STATUS);
    }
    ui_model_reveal(&ui->m, id);
    if (id != ui->selected) {
        ui->selected = id;
        ui->panes[PANE_NODE].top = 0;
        ui->panes[PANE_EVIDENCE].top = 0;
        ui_dirty(ui, PANE_NODE);
        ui_dirty(ui, PANE_EVIDENCE);
    }
    ui_dirty(ui, PANE_TREE);
}

void ui_close_file(struct ui *ui)
{
    free(ui->file_path);
    free(ui->file_text);
    free(ui->file_lines);
    ui->file_path = ui->file_text = NULL;
    ui->file_lines = NULL;
    ui->file_nlines = 0;
    /* back to the pane it was opened from (layout() falls back to the tree
     * should that pane be gone) */
    if (ui->focus == PANE_FILE) ui->focus = ui->file_from;
    ui->layout_stale = 1;
}

void ui_open_citation(struct ui *ui, size_t index)
{
    const struct search_answer *a = ui->m.answer;
    if (!a || index >= a->cites.n) return;
    const struct evidence_span *c = &a->cites.v[index];
    ui_open_span(ui, c->path, c->start_line, c->end_line);
}

void ui_open_span(struct ui *ui, const char *path, int start_line, int end_line)
{
    struct { const char *path; int start_line, end_line; } sp = {path, start_line, end_line}, *c = &sp;
    char err[512] = "";
    if (!ui->db && ui->index_path) {
        if (store_open(ui->index_path, 1, &ui->db, NULL, err, sizeof err) != 0) ui->db = NULL;
    }
    size_t len = 0;
    char *text = ui->db ? store_file_text(ui->db, c->path, NULL, &len, err, sizeof err) : NULL;
    if (!text) {
        if (ui->db && *err) ui_message(ui, 1, "%s cannot be shown: %s", c->path, err);
        else ui_message(ui, 1, "%s is not in the index%s%s", c->path, *err ? ": " : "", err);
        return;
    }
    ui_close_file(ui);
    ui->file_from = ui->focus == PANE_FILE ? PANE_TREE : ui->focus;
    ui->file_path = xstrdup(c->path);
    ui->file_text = text;
    ui->file_start = c->start_line;
    ui->file_end = c->end_line;
    size_t cap = 0;
    ui->file_lines = NULL;
    ui->file_nlines = 0;
    for (size_t off = 0; off < len || ui->file_nlines == 0;) {
        ARRAY_GROW(ui->file_lines, ui->file_nlines, cap, 64);
        ui->file_lines[ui->file_nlines++] = off;
        const char *nl = memchr(text + off, '\n', len - off);
        if (!nl) break;
        off = (size_t)(nl - text) + 1;
        if (off >= len) break;
    }
    ui->panes[PANE_FILE].top = c->start_line > 3 ? c->start_line - 3 : 0;
    file_view_reset(ui);
    ui->focus = PANE_FILE;
    ui->layout_stale = 1;
}
