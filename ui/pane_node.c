/*
 * pane_node: the selected node in words: its action with the full arguments,
 * status, the evaluation (value, N, Q, UCT) and feedback or error, then the
 * perception report the plan was made from; for the root, the question and
 * the run's model-call ledger per role. Scrolls when focused.
 */
#include "ui.h"
#include "llm.h"

#include <stdio.h>
#include <string.h>

static void draw(struct ui *ui, struct pane *p)
{
    const struct mcts_node *n = mcts_node(ui->m.t, ui->selected);
    char title[48];
    snprintf(title, sizeof title, "Node %d", n ? n->id : -1);
    struct doc d = {0};
    int w = p->w - 2;
    if (n && n->parent < 0) {
        doc_add(ui, &d, "Question:", w, 0, R_HEADER, 0);
        doc_add(ui, &d, *ui->m.t->question ? ui->m.t->question : "(none yet: a asks one)", w, 2,
                R_NORMAL, 0);
        char *s = xasprintf("visits %d   Q %.1f   iterations %d/%d", n->visits, mcts_q(n),
                            ui->m.iteration, ui->m.iterations_total);
        doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
        free(s);
        cJSON *uj = ui->usage ? llm_usage_json(ui->usage) : NULL;
        char *line = uj ? llm_usage_line(uj) : NULL;
        if (line) {
            doc_add(ui, &d, "Model calls:", w, 0, R_HEADER, 0);
            doc_add(ui, &d, line + strlen("tokens "), w, 2, R_NORMAL, 0);
        }
        free(line);
        cJSON_Delete(uj);
    } else if (n) {
        char *args = n->args ? cJSON_PrintUnformatted(n->args) : NULL;
        char *s = xasprintf("Action: %s %s", n->action ? n->action : "(not planned yet)",
                            args ? args : "");
        doc_add(ui, &d, s, w, 2, R_HEADER, 0);
        free(s);
        if (args) cJSON_free(args);
        s = xasprintf("status %s%s   iteration %d   parent %d", ui_model_status_word(n),
                      n->forced && n->status != MCTS_DONE ? " (forced)" : "", n->iteration, n->parent);
        doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
        free(s);
        char v[32] = "-";
        if (n->has_value) snprintf(v, sizeof v, "%.1f", n->value);
        s = xasprintf("value %s   N %d   Q %.1f", v, n->visits, mcts_q(n));
        doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
        free(s);
        const struct mcts_uct_mark *mk = mcts_last_mark(n, 0), *mn = mcts_last_mark(n, 1);
        if (mk) s = xasprintf("UCT %.1f at selection %d: %s", mk->score, mk->iteration,
                              mk->chosen ? "chosen over its siblings" : "a sibling was chosen");
        else s = xasprintf("UCT - (no selection compared it yet)");
        doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
        free(s);
        if (mn) {
            s = xasprintf("UCT of a new child %.1f at selection %d: %s", mn->score, mn->iteration,
                          mn->chosen ? "widened here" : "descended instead");
            doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
            free(s);
        }
        if (n->error) {
            s = xasprintf("error: %s", n->error);
            doc_add(ui, &d, s, w, 2, R_ERROR, 0);
            free(s);
        }
        if (n->feedback && *n->feedback) {
            s = xasprintf("feedback: %s", n->feedback);
            doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
            free(s);
        }
        if (n->notes && *n->notes) {
            s = xasprintf("notes: %s%s", n->fallback ? "(fallback decision) " : "", n->notes);
            doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
            free(s);
        }
        if (n->rationale && *n->rationale) {
            s = xasprintf("rationale: %s", n->rationale);
            doc_add(ui, &d, s, w, 2, R_NORMAL, 0);
            free(s);
        }
        doc_add(ui, &d, "Report:", w, 0, R_HEADER, 0);
        doc_add(ui, &d, n->report && *n->report ? n->report : "(none yet)", w, 2, R_NORMAL, 0);
    }
    char info[64] = "";
    if (d.n > (size_t)(p->h - 1)) snprintf(info, sizeof info, "%d/%zu", p->top + 1, d.n);
    draw_title(ui, p, title, info);
    doc_draw(ui, p, &d, 0);
    doc_clear(&d);
}

static int command(struct ui *ui, struct pane *p, enum ui_cmd cmd)
{
    (void)ui;
    return pane_scroll(p, cmd);
}

const struct pane_ops pane_node_ops = {"node", draw, command, NULL};
