/*
 * pane_evidence: the selected node's curated evidence as the curator
 * rendered it: 'path:start-end  label' headers (highlighted), each over its
 * lines, numbered from the header's start line; notes and listings outside
 * spans are shown as they are. Scrolls when focused.
 */
#include "ui.h"

#include <stdio.h>
#include <string.h>

static void draw(struct ui *ui, struct pane *p)
{
    const struct mcts_node *n = mcts_node(ui->m.t, ui->selected);
    struct doc d = {0};
    int w = p->w - 2;
    const char *text = n ? n->obs_text : NULL;
    if (!text || !*text) {
        doc_add(ui, &d, n && n->parent < 0 ? "(the root has no evidence)" : "(no evidence yet)", w, 0,
                R_DIM, 0);
    } else {
        const char *s = text;
        int line_no = 0, left = 0;
        while (*s) {
            const char *nl = strchr(s, '\n');
            size_t len = nl ? (size_t)(nl - s) : strlen(s);
            char *line = xstrndup(s, len);
            size_t pl;
            int a, b;
            if (ui_span_header(s, len, &pl, &a, &b)) {
                doc_add(ui, &d, line, w, 4, R_HEADER, 0);
                line_no = a;
                left = b - a + 1;
            } else if (left > 0) {
                char *numbered = xasprintf("%5d  %s", line_no++, line);
                doc_add(ui, &d, numbered, w, 7, R_NORMAL, 0);
                free(numbered);
                left--;
            } else {
                doc_add(ui, &d, line, w, 2, R_NORMAL, 0);
            }
            free(line);
            if (!nl) break;
            s = nl + 1;
        }
    }
    char info[64] = "";
    if (d.n > (size_t)(p->h - 1)) snprintf(info, sizeof info, "%d/%zu", p->top + 1, d.n);
    draw_title(ui, p, "Evidence", info);
    doc_draw(ui, p, &d, 0);
    doc_clear(&d);
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    (void)ui;
    return pane_scroll(p, cmd);
}

const struct pane_ops pane_evidence_ops = {"evidence", draw, command, NULL};
