/*
 * coverage: the question's share held by a path's evidence (see coverage.h).
 */
#include "coverage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void coverage_of_path(const struct qparse *q, const struct mcts_tree *t, int id, struct coverage *out)
{
    out->nterms = q->nterms;
    out->hit = xcalloc(q->nterms ? q->nterms : 1, 1);
    out->share = 0;
    for (const struct mcts_node *m = mcts_node(t, id); m && m->id > 0; m = mcts_node(t, m->parent)) {
        for (size_t k = 0; k < m->obs.n; k++) {
            const struct evidence_span *sp = &m->obs.v[k];
            if (sp->text) qparse_match(q, sp->text, strlen(sp->text), out->hit);
        }
    }
    double w = 0;
    for (size_t i = 0; i < q->nterms; i++)
        if (out->hit[i]) w += q->weights[i];
    if (q->total_weight > 0) out->share = w / q->total_weight;
    if (coverage_complete(out)) out->share = 1;   /* no rounding may say less than all */
}

void coverage_free(struct coverage *c)
{
    if (!c) return;
    free(c->hit);
    c->hit = NULL;
}

int coverage_complete(const struct coverage *c)
{
    for (size_t i = 0; i < c->nterms; i++)
        if (!c->hit[i]) return 0;
    return 1;
}

void coverage_describe(const struct qparse *q, const struct coverage *c, const char *aside, size_t max,
                       struct buf *b)
{
    /* a share that rounds to 100 while a term is missing says 99 */
    double pct = floor(100 * c->share + 0.5);
    if (pct >= 100 && !coverage_complete(c)) pct = 99;
    buf_printf(b, "covers %.0f%% of the question%s", pct, aside ? aside : "");
    size_t named = 0, missing = 0;
    for (size_t i = 0; i < c->nterms && i < q->nterms; i++) {
        if (c->hit[i]) continue;
        missing++;
        if (named < max) buf_printf(b, "%s%s", named++ ? ", " : "; missing: ", q->terms[i]);
    }
    if (missing > named) buf_printf(b, " and %zu more", missing - named);
}
