/*
 * test_fuse: reciprocal rank fusion of citation lists (src/fuse.c): files
 * ordered by the sum of 1 / (k + rank) over the lists; one span of every
 * file before any file's second; the span from the list ranking the file
 * best, its further spans from that list, then from the other; overlapping spans and exact repeats of a file left out; at most max;
 * three lists as well as two;
 * a larger k letting agreement outweigh a single first place.
 */
#include "fuse.h"
#include "tap.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the spans of spec, "path:a-b path:a-b ...", to l; each span's
 * text names it. */
static void fill(struct evidence *l, const char *spec)
{
    char path[64];
    int a, b, used;
    while (sscanf(spec, " %63[^:]:%d-%d%n", path, &a, &b, &used) == 3) {
        char text[96];
        snprintf(text, sizeof text, "%s %d-%d", path, a, b);
        evidence_add(l, path, a, b, text, NULL, 0);
        spec += used;
    }
}

/* The fused citations as "path:a-b path:a-b ...". */
static char *order(const struct evidence *out)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < out->n; i++)
        buf_printf(&b, "%s%s:%d-%d", i ? " " : "", out->v[i].path, out->v[i].start_line, out->v[i].end_line);
    return buf_take(&b);
}

static void check(const struct evidence *t, const struct evidence *w, double k, size_t max, const char *want,
                  const char *what)
{
    struct evidence out = EVIDENCE_INIT;
    const struct evidence *lists[2] = {t, w};
    size_t n = fuse_citations(lists, 2, k, max, &out);
    char *got = order(&out);
    is_str(got, want, "%s", what);
    is_int((int)n, (int)out.n, "%s: the count returned", what);
    free(got);
    evidence_free(&out);
}

int main(void)
{
    struct evidence t = EVIDENCE_INIT, w = EVIDENCE_INIT;
    /* the tree: a.py twice, then b.py, c.py; the windows: b.py, d.py, a.py */
    fill(&t, "a.py:10-20 a.py:40-50 b.py:1-9 c.py:5-6");
    fill(&w, "b.py:3-30 d.py:1-2 a.py:15-25 a.py:60-70");
    /* k 60: b (1/62 + 1/61) before a (1/61 + 1/63), then d (1/62) before
     * c (1/63); b.py's span from the windows, which rank it first, a.py's
     * from the tree; then a.py's further spans, the tree's and then the
     * windows' (b.py:1-9 and a.py:15-25 overlap spans taken) */
    check(&t, &w, 60, 0, "b.py:3-30 a.py:10-20 d.py:1-2 c.py:5-6 a.py:40-50 a.py:60-70",
          "k 60: one span of each file in fused order, then the files' further spans");
    check(&t, &w, 1, 3, "b.py:3-30 a.py:10-20 d.py:1-2", "at most max");
    struct evidence t2 = EVIDENCE_INIT, w2 = EVIDENCE_INIT;
    /* x.py:40-60 overlaps the first span, x.py:1-50 repeats it */
    fill(&t2, "x.py:1-50 x.py:40-60 x.py:1-50 x.py:70-80");
    fill(&w2, "y.py:1-500");
    check(&t2, &w2, 60, 0, "x.py:1-50 y.py:1-500 x.py:70-80", "overlaps and repeats within a file are left out");
    /* agreement against a single first place: v and z are first in one
     * list each, u third in both. k 0.5: 1/1.5 > 2/3.5, the first places
     * come first; k 60: 2/63 > 1/61, agreement does */
    struct evidence t3 = EVIDENCE_INIT, w3 = EVIDENCE_INIT;
    fill(&t3, "v.py:1-2 p.py:1-2 u.py:1-2");
    fill(&w3, "z.py:1-2 q.py:1-2 u.py:1-2");
    check(&t3, &w3, 0.5, 0, "v.py:1-2 z.py:1-2 u.py:1-2 p.py:1-2 q.py:1-2", "k small: first places come first");
    check(&t3, &w3, 60, 0, "u.py:1-2 v.py:1-2 z.py:1-2 p.py:1-2 q.py:1-2", "k large: a file both lists hold comes first");
    /* a third list (the offline answer's function and class chunks): u.py,
     * third in two lists and first in the third, comes before any single
     * first place; its leading span is the third list's, which ranks it
     * best, its further span the tree's */
    struct evidence c3 = EVIDENCE_INIT, out3 = EVIDENCE_INIT;
    fill(&c3, "u.py:5-9");
    const struct evidence *three[3] = {&t3, &w3, &c3};
    fuse_citations(three, 3, 10, 0, &out3);
    char *got3 = order(&out3);
    is_str(got3, "u.py:5-9 v.py:1-2 z.py:1-2 p.py:1-2 q.py:1-2 u.py:1-2", "three lists: agreement of all three first");
    free(got3);
    evidence_free(&out3);
    evidence_free(&c3);
    /* one list empty: the other's order, kept */
    struct evidence none = EVIDENCE_INIT;
    check(&t, &none, 60, 0, "a.py:10-20 b.py:1-9 c.py:5-6 a.py:40-50", "one list alone: its files in order");
    check(&none, &none, 60, 0, "", "nothing to fuse");
    /* the position is handed on as the score: 1 / (1 + position) */
    struct evidence out = EVIDENCE_INIT;
    const struct evidence *lists[2] = {&t, &w};
    fuse_citations(lists, 2, 60, 0, &out);
    ok(out.n == 6 && out.v[0].score == 1.0 && out.v[4].score == 0.2, "scores 1 / (1 + position)");
    ok(out.v[0].text && !strcmp(out.v[0].text, "b.py 3-30"), "the span keeps its text");
    evidence_free(&out);
    evidence_free(&t);
    evidence_free(&w);
    evidence_free(&t2);
    evidence_free(&w2);
    evidence_free(&t3);
    evidence_free(&w3);
    return done_testing();
}
