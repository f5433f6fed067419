/*
 * pane_help: the help screen, generated from the keymap table (keymap_help)
 * so that it lists exactly the keys the program obeys, followed by the
 * legend of the tree's columns, status words and short action names and of
 * the file view's markers. Covers the panes while open; scrolls; Esc, q or
 * ? closes it.
 */
#include "ui.h"

#include <stdio.h>

static const char legend[] =
    "\nTree columns\n"
    "  *              the node is on the current best path\n"
    "  + / -          a folded / unfolded subtree\n"
    "  N Q UCT        visits, mean value (0-100), UCT score at the last selection\n"
    "                 that compared the node: >97 it won there, - none has yet\n"
    "                 (a narrow tree drops UCT, then N, then status; z shows all)\n"
    "  status         pend(ing) run(ning) done fin(ished) prun(ed) err(or)\n"
    "                 dup(licate) forc(ed: expanded on request)\n"
    "  pinned rows    the cursor's ancestors scrolled off above stay at the top\n"    "  cursor held    (status line) the cursor stays where you moved it; F follows\n"
    "                 the node being expanded again\n"
    "  \u2501\u2501 in a title  the focused pane (= without UTF-8)\n"
    "\nActions in a narrow tree\n";

static const char file_legend[] =
    "\nFile view\n"
    "  \u00bb / \u00ab          the line goes on past the right / left edge (> and < without UTF-8)\n"
    "  h l Left Right the view scrolls sideways while lines are cut; W wraps them\n"
    "  / n N          search the file: matches highlighted, n and N in reading order\n";

static void draw(struct ui *ui, struct pane *p)
{
    struct buf b = BUF_INIT;
    keymap_help(&b);
    buf_adds(&b, legend);
    tree_abbrev_legend(&b);
    buf_adds(&b, file_legend);
    if (ui->nrecent) buf_adds(&b, "\nRecent messages (newest last, in full)\n");
    for (int i = 0; i < ui->nrecent; i++) buf_printf(&b, "  %s\n", ui->recent[i]);
    struct doc d = {0};
    const char *s = buf_str(&b);
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char *line = xstrndup(s, len);
        doc_add(ui, &d, line, p->w - 2, 17, len && line[0] != ' ' ? R_HEADER : R_NORMAL, 0);
        free(line);
        if (!nl) break;
        s = nl + 1;
    }
    buf_free(&b);
    char info[64] = "Esc closes";
    if (d.n > (size_t)(p->h - 1)) snprintf(info, sizeof info, "%d/%zu  Esc closes", p->top + 1, d.n);
    draw_title(ui, p, "Help: drqa-tui keys", info);
    doc_draw(ui, p, &d, 0);
    doc_clear(&d);
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    (void)ui;
    return pane_scroll(p, cmd);
}

const struct pane_ops pane_help_ops = {"help", draw, command, NULL};
