/*
 * fuse: reciprocal rank fusion of citation lists (see fuse.h).
 */
#include "fuse.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct fused_file {
    const char *path;   /* borrowed from a list */
    double score;
    size_t best;        /* its best rank in any list (0-based) */
    size_t from;        /* the list giving that rank */
};

/* The 0-based rank of path among the distinct files of l, or -1. */
static long file_rank(const struct evidence *l, const char *path)
{
    long r = 0;
    for (size_t i = 0; i < l->n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = !strcmp(l->v[j].path, l->v[i].path);
        if (seen) continue;
        if (!strcmp(l->v[i].path, path)) return r;
        r++;
    }
    return -1;
}

static int cmp_fused(const void *a, const void *b)
{
    const struct fused_file *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->best != y->best) return x->best < y->best ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* 1 when out holds a span of sp's file, seen the same way, overlapping it. */
static int overlaps(const struct evidence *out, const struct evidence_span *sp)
{
    for (size_t i = 0; i < out->n; i++) {
        const struct evidence_span *o = &out->v[i];
        if (!o->elided == !sp->elided && !strcmp(o->path, sp->path) && o->start_line <= sp->end_line &&
            sp->start_line <= o->end_line)
            return 1;
    }
    return 0;
}

/* Appends sp to out unless max spans (0: no limit) are there already;
 * returns 0 when out is full. */
static int take(struct evidence *out, size_t start, size_t max, const struct evidence_span *sp)
{
    size_t pos = out->n - start;
    if (max && pos >= max) return 0;
    evidence_add(out, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, 1.0 / (1.0 + (double)pos))
        ->elided = sp->elided;
    return 1;
}

/* The files of every list, scored and sorted best first (caller frees). */
static size_t fused_files(const struct evidence *const *lists, size_t nlists, double k, struct fused_file **out)
{
    struct fused_file *f = NULL;
    size_t n = 0, cap = 0;
    for (size_t l = 0; l < nlists; l++) {
        for (size_t i = 0; i < lists[l]->n; i++) {
            const char *path = lists[l]->v[i].path;
            size_t j = 0;
            while (j < n && strcmp(f[j].path, path)) j++;
            if (j < n) continue;
            ARRAY_GROW(f, n, cap, 16);
            f[n].path = path;
            f[n].score = 0;
            f[n].best = (size_t)-1;
            f[n].from = 0;
            for (size_t m = 0; m < nlists; m++) {
                long r = file_rank(lists[m], path);
                if (r < 0) continue;
                f[n].score += 1.0 / (k + (double)r + 1.0);
                if ((size_t)r < f[n].best) {
                    f[n].best = (size_t)r;
                    f[n].from = m;
                }
            }
            n++;
        }
    }
    if (n) qsort(f, n, sizeof *f, cmp_fused);
    *out = f;
    return n;
}

size_t fuse_citations(const struct evidence *const *lists, size_t nlists, double k, size_t max,
                      struct evidence *out)
{
    struct fused_file *f;
    size_t n = fused_files(lists, nlists, k, &f);
    size_t start = out->n;
    int room = 1;
    /* the leading span of each file ... */
    for (size_t j = 0; j < n && room; j++) {
        const struct evidence *l = lists[f[j].from];
        for (size_t i = 0; i < l->n; i++)
            if (!strcmp(l->v[i].path, f[j].path)) {
                room = take(out, start, max, &l->v[i]);
                break;
            }
    }
    /* ... then its further spans: the ranking list's, then the others' */
    for (size_t j = 0; j < n && room; j++)
        for (size_t m = 0; m < nlists && room; m++) {
            const struct evidence *l = lists[(f[j].from + m) % nlists];
            for (size_t i = 0; i < l->n && room; i++)
                if (!strcmp(l->v[i].path, f[j].path) && !overlaps(out, &l->v[i]))
                    room = take(out, start, max, &l->v[i]);
        }
    free(f);
    return out->n - start;
}
