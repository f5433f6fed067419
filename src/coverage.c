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

/* The question's words no index term can match (qparse_unmatchable), so no
 * evidence can cover them: the first max appended to out as "`w1`, `w2`";
 * returns how many there are. */
static size_t unmatchable_words(const struct qparse *q, size_t max, struct buf *out)
{
    size_t k = 0;
    for (size_t w = 0; w < q->nwords; w++) {
        const char *s = q->words[w];
        int again = 0;
        for (size_t v = 0; v < w && !again; v++) again = !strcmp(q->words[v], s);
        if (again || !qparse_unmatchable(s)) continue;
        if (k < max) buf_printf(out, "%s`%s`", k ? ", " : "", s);
        k++;
    }
    return k;
}

void coverage_describe(const struct qparse *q, const struct coverage *c, const char *aside, size_t max,
                       struct buf *b)
{
    /* a share that rounds to 100 while a term is missing says 99 */
    double pct = floor(100 * c->share + 0.5);
    if (pct >= 100 && !coverage_complete(c)) pct = 99;
    /* words no term can match (a run of Japanese) are not part of the
     * share: said, so that 100% is never "of the question" while they are */
    struct buf un = BUF_INIT;
    size_t nun = unmatchable_words(q, max, &un);
    buf_printf(b, "covers %.0f%% of %s%s", pct, nun ? "the words it can look for" : "the question", aside ? aside : "");
    size_t named = 0, missing = 0;
    for (size_t i = 0; i < c->nterms && i < q->nterms; i++) {
        if (c->hit[i]) continue;
        missing++;
        if (named < max) buf_printf(b, "%s%s", named++ ? ", " : "; missing: ", q->terms[i]);
    }
    if (missing > named) buf_printf(b, " and %zu more", missing - named);
    if (nun) buf_printf(b, "; no index term can match %s%s", buf_str(&un), nun > max ? " and more" : "");
    buf_free(&un);
}
