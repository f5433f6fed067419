/*
 * pane_evidence: the selected node's curated evidence as the curator
 * rendered it: 'path:start-end  label' headers (highlighted), each over its
 * lines, numbered from the header's start line; notes and listings outside
 * spans are shown as they are. Scrolls when focused; the span in view (the
 * last header at or above the top line, else the first) is highlighted, and
 * Enter opens it in the file view.
 */
#include "ui.h"

#include <stdio.h>
#include <string.h>

/* What a node that holds no evidence says instead: why, as its status and
 * action tell (a Finish reads nothing, a step may find nothing, fail or be
 * pruned before it ran), "yet" only while it may still read something. */
static const char *no_evidence(const struct mcts_node *n)
{
    if (!n || n->parent < 0) return "(the root has no evidence)";
    int finish = n->action && !strncmp(n->action, "Finish", 6);
    switch (n->status) {
    case MCTS_PENDING:
    case MCTS_RUNNING: return "(no evidence yet)";
    case MCTS_FINISHED: return "(Finish reads no code: the answer draws on the evidence read before it)";
    case MCTS_ERROR: return "(the step failed before it read anything)";
    case MCTS_PRUNED:
        if (n->exhausted) return "(no action was left for it: it read nothing)";
        return n->refused ? "(a Finish refused: no code had been read on its path)" : "(pruned before it read anything)";
    case MCTS_DONE:
        if (n->refused) return "(a Finish refused: no code had been read on its path)";
        return finish ? "(Finish reads no code)" : "(this step found nothing)";
    }
    return "(no evidence)";
}

/* The document of the selected node's evidence; span headers are tagged
 * 1, 2, ... in order. */
static void build(struct ui *ui, struct pane *p, struct doc *d0)
{
    const struct mcts_node *n = mcts_node(ui->m.t, ui->selected);
    struct doc d = {0};
    int w = p->w - 2, spans = 0;
    const char *text = n ? n->obs_text : NULL;
    if (!text || !*text) {
        doc_add(ui, &d, no_evidence(n), w, 0, R_DIM, 0);
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
                doc_add(ui, &d, line, w, 4, R_HEADER, ++spans);
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
    *d0 = d;
}

/* The tag of the span in view: the last header at or above the top line,
 * else the first below it; 0 when there is none. */
static int span_in_view(const struct pane *p, const struct doc *d)
{
    int tag = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (!d->v[i].tag) continue;
        if ((int)i <= p->top || !tag) tag = d->v[i].tag;
        if ((int)i > p->top) break;
    }
    return tag;
}

static void draw(struct ui *ui, struct pane *p)
{
    struct doc d;
    build(ui, p, &d);
    char info[64] = "";
    if (d.n > (size_t)(p->h - 1)) snprintf(info, sizeof info, "%d/%zu", p->top + 1, d.n);
    draw_title(ui, p, "Evidence", info);
    doc_draw(ui, p, &d, ui->focus == PANE_EVIDENCE ? span_in_view(p, &d) : 0);
    doc_clear(&d);
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    if (cmd != UI_CMD_ACTIVATE) return pane_scroll(p, cmd);
    const struct mcts_node *n = mcts_node(ui->m.t, ui->selected);
    struct doc d;
    build(ui, p, &d);
    int tag = span_in_view(p, &d);
    doc_clear(&d);
    /* the tag-th header of the rendering names the span */
    const char *s = n && tag > 0 ? n->obs_text : NULL;
    for (int k = 0; s && *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s), pl;
        int a, b;
        if (ui_span_header(s, len, &pl, &a, &b) && ++k == tag) {
            char *path = xstrndup(s, pl);
            ui_open_span(ui, path, a, b);
            free(path);
            return 1;
        }
        s = nl ? nl + 1 : NULL;
    }
    ui_message(ui, 1, "this node has no evidence span to open");
    return 1;
}

const struct pane_ops pane_evidence_ops = {"evidence", draw, command, NULL};
