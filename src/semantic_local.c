/*
 * semantic_local: random-indexing vectors fitted on the repository's own chunks.
 * See semantic_local.h for the method. Everything here is deterministic: index
 * vectors come from a hash of the term, chunks are visited in the order of
 * their files' paths, then of their ids, and sums run in a fixed order, so two
 * fits of the same index give the same bytes. That order is the order of a
 * fresh index's ids; an index brought to the same tree by updates (which gives
 * re-parsed files' chunks new ids, in the same order within each file) fits
 * the same bytes too.
 */
#include "semantic_local.h"
#include "tok.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define D VEC_LOCAL_DIM
#define RI_NNZ 8              /* non-zeros of an index vector */
#define W_NAME 3.0f           /* a term in the qualified name says most about a chunk */
#define W_DOC 2.0f            /* docstring words are chosen by a human to describe it */
#define W_BODY 1.0f
#define MIX_OWN 0.35f         /* share of a term's own index vector in its vector */
#define CENTRE_MIN_TERMS 1000  /* fewer shared terms: too few to estimate their mean */

/* ---- term map: open addressing, keys owned by the fit's terms array ---- */

struct term_map {
    size_t cap;       /* power of two */
    uint32_t *slot;   /* index into the fit's terms + 1; 0 = empty */
};

static uint64_t term_hash(const char *s, size_t n) { return hash64(s, n); }

static void map_init(struct term_map *m)
{
    m->cap = 1024;
    m->slot = xcalloc(m->cap, sizeof *m->slot);
}

static long map_find(const struct term_map *m, char *const *keys, const char *s, size_t n)
{
    size_t i = term_hash(s, n) & (m->cap - 1);
    while (m->slot[i]) {
        const char *k = keys[m->slot[i] - 1];
        if (strncmp(k, s, n) == 0 && k[n] == 0) return (long)m->slot[i] - 1;
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

static void map_put(struct term_map *m, const char *key, uint32_t idx);

static void map_grow(struct term_map *m, char *const *keys)
{
    uint32_t *old = m->slot;
    size_t oldcap = m->cap;
    m->cap *= 2;
    m->slot = xcalloc(m->cap, sizeof *m->slot);
    for (size_t i = 0; i < oldcap; i++)
        if (old[i]) map_put(m, keys[old[i] - 1], old[i] - 1);
    free(old);
}

static void map_put(struct term_map *m, const char *key, uint32_t idx)
{
    size_t i = term_hash(key, strlen(key)) & (m->cap - 1);
    while (m->slot[i]) i = (i + 1) & (m->cap - 1);
    m->slot[i] = idx + 1;
}

static void map_free(struct term_map *m)
{
    if (!m) return;
    free(m->slot);
    free(m);
}

/* ---- vectors ---- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static float norm2(const float *v)
{
    double s = 0;
    for (int i = 0; i < D; i++) s += (double)v[i] * v[i];
    return (float)sqrt(s);
}

static void normalise(float *v)
{
    float n = norm2(v);
    if (n > 0)
        for (int i = 0; i < D; i++) v[i] /= n;
}

static void axpy(float a, const float *x, float *y)
{
    for (int i = 0; i < D; i++) y[i] += a * x[i];
}

/* The fit's rows of floats (tvecs) are reached term by term from chunk after
 * chunk, all over the array: on 4 KiB pages nearly every row costs a TLB
 * miss. The array is mapped on its own, aligned to 2 MiB, and the kernel is
 * asked for transparent huge pages (madvise; where they are off it has 4 KiB
 * pages as before): on this project's benchmark machine django's context
 * stage (FIT_CONTEXT) took 60-93 ms instead of 170-187 ms, sympy's 220 ms
 * instead of 376 ms, the same bytes. An array smaller than
 * vec_local_huge_min is malloc'd. Zeroed, as mmap gives it; *mapped is what
 * rows_free unmaps (0: malloc'd). */
#define HUGE_ALIGN ((size_t)2 << 20)

size_t vec_local_huge_min = HUGE_ALIGN;

static float *rows_alloc(size_t nfloats, size_t *mapped)
{
    size_t len = (nfloats ? nfloats : 1) * sizeof(float);
    *mapped = 0;
#ifdef MADV_HUGEPAGE
    if (len >= vec_local_huge_min) {
        len = (len + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
        char *m = mmap(NULL, len + HUGE_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            char *a = (char *)(((uintptr_t)m + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1));
            if (a > m) munmap(m, (size_t)(a - m));
            munmap(a + len, (size_t)(m + HUGE_ALIGN - a));   /* the tail: a < m + HUGE_ALIGN */
            madvise(a, len, MADV_HUGEPAGE);
            *mapped = len;
            return (float *)a;
        }
    }
#endif
    return xcalloc(nfloats ? nfloats : 1, sizeof(float));
}

static void rows_free(float *p, size_t mapped)
{
    if (mapped) munmap(p, mapped);
    else free(p);
}

/* ---- fitting ---- */

struct posting { uint32_t term; float tf; };

/* Sorts a chunk's postings by term; each term is there once (add_column
 * adds up its weights as they come), so no order between equal keys is
 * left to the sort. Quicksort, then insertion sort over short runs. */
static void sort_postings(struct posting *p, size_t n)
{
    while (n > 16) {
        size_t m = n / 2;
        /* median of three to p[0] */
        if (p[m].term < p[0].term) { struct posting t = p[m]; p[m] = p[0]; p[0] = t; }
        if (p[n - 1].term < p[m].term) {
            struct posting t = p[n - 1]; p[n - 1] = p[m]; p[m] = t;
            if (p[m].term < p[0].term) { t = p[m]; p[m] = p[0]; p[0] = t; }
        }
        { struct posting t = p[m]; p[m] = p[0]; p[0] = t; }
        uint32_t pivot = p[0].term;
        size_t i = 1, j = n - 1;
        for (;;) {
            while (i <= j && p[i].term < pivot) i++;
            while (p[j].term > pivot) j--;
            if (i >= j) break;
            struct posting t = p[i]; p[i] = p[j]; p[j] = t;
            i++, j--;
        }
        { struct posting t = p[j]; p[j] = p[0]; p[0] = t; }
        /* p[j] is in place: recurse into the shorter side, loop on the longer */
        if (j < n - j - 1) {
            sort_postings(p, j);
            p += j + 1, n -= j + 1;
        } else {
            sort_postings(p + j + 1, n - j - 1);
            n = j;
        }
    }
    for (size_t i = 1; i < n; i++) {
        struct posting x = p[i];
        size_t k = i;
        for (; k > 0 && p[k - 1].term > x.term; k--) p[k] = p[k - 1];
        p[k] = x;
    }
}

struct fit_build {
    struct vec_local_fit *f;
    struct term_map *map;
    size_t termcap;
    int *df;                                       /* per term, chunks holding it (termcap of them) */
    uint32_t *at;                                  /* per term, its place in tmp + 1 (when tmp holds it there) */
    size_t nrows;                                  /* terms of two chunks or more */
    struct posting *tmp; size_t ntmp, captmp;      /* postings of the current chunk */
    struct posting *post; size_t npost, cappost;   /* all chunks, CSR order */
    size_t *off;                                   /* n + 1 offsets into post */
};

static uint32_t intern(struct fit_build *b, const char *s, size_t n)
{
    long i = map_find(b->map, b->f->terms, s, n);
    if (i >= 0) return (uint32_t)i;
    struct vec_local_fit *f = b->f;
    if (f->nterms == b->termcap) {
        b->termcap = xgrow_cap(b->termcap, f->nterms, 4096);
        f->terms = xreallocarray(f->terms, b->termcap, sizeof *f->terms);
        b->df = xreallocarray(b->df, b->termcap, sizeof *b->df);
        b->at = xreallocarray(b->at, b->termcap, sizeof *b->at);
    }
    b->df[f->nterms] = 0;
    b->at[f->nterms] = 0;
    f->terms[f->nterms] = xstrndup(s, n);
    if ((f->nterms + 1) * 2 > b->map->cap) map_grow(b->map, f->terms);
    map_put(b->map, f->terms[f->nterms], (uint32_t)f->nterms);
    return (uint32_t)f->nterms++;
}

/* The FTS columns hold terms already produced by tok_terms(), space separated. */
static void add_column(struct fit_build *b, const char *s, float w)
{
    if (!s) return;
    while (*s) {
        while (*s == ' ' || *s == '\n' || *s == '\t') s++;
        const char *e = s;
        while (*e && *e != ' ' && *e != '\n' && *e != '\t') e++;
        if (e > s) {
            /* a term seen before in this chunk adds its weight there, in
             * the order the terms come */
            uint32_t t = intern(b, s, (size_t)(e - s)), at = b->at[t];
            if (at && at <= b->ntmp && b->tmp[at - 1].term == t) {
                b->tmp[at - 1].tf += w;
            } else {
                ARRAY_GROW(b->tmp, b->ntmp, b->captmp, 256);
                b->tmp[b->ntmp++] = (struct posting){t, w};
                b->at[t] = (uint32_t)b->ntmp;
            }
        }
        s = e;
    }
}

static void close_chunk(struct fit_build *b)
{
    sort_postings(b->tmp, b->ntmp);
    for (size_t i = 0; i < b->ntmp; i++) {
        ARRAY_GROW(b->post, b->npost, b->cappost, 65536);
        b->post[b->npost++] = b->tmp[i];
        if (++b->df[b->tmp[i].term] == 2) b->nrows++;
    }
    b->ntmp = 0;
}

struct id_pos { int64_t id; size_t pos; };

static int cmp_id_pos(const void *a, const void *b)
{
    const struct id_pos *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

struct hash_pos { const char *hash; size_t pos; };

static int cmp_hash_pos(const void *a, const void *b)
{
    const struct hash_pos *x = a, *y = b;
    int c = strcmp(x->hash, y->hash);
    return c ? c : x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Stored vectors are keyed by the chunk's hash, and chunks with the same text
 * (hash) may still differ in name terms: every chunk of a hash takes the
 * vector of its last one in visit order (the one a fresh index's store kept
 * before), so that the process that fits ranks like the ones that load the
 * stored vectors, and the store keeps the same bytes whatever the ids. */
static void share_by_hash(struct vec_local_fit *f)
{
    size_t n = f->n;
    struct hash_pos *h = xmalloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = (struct hash_pos){f->hashes[i], i};
    qsort(h, n, sizeof *h, cmp_hash_pos);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && strcmp(h[j].hash, h[i].hash) == 0;) j++;
        for (size_t k = i; k + 1 < j; k++)
            memcpy(f->qvecs + h[k].pos * VEC_LOCAL_QBYTES, f->qvecs + h[j - 1].pos * VEC_LOCAL_QBYTES, VEC_LOCAL_QBYTES);
    }
    free(h);
}

/* The fit visits chunks in path order; its rows are handed out by id. */
static void by_id(struct vec_local_fit *f)
{
    size_t n = f->n;
    if (n < 2) return;
    share_by_hash(f);
    struct id_pos *o = xmalloc(n * sizeof *o);
    for (size_t i = 0; i < n; i++) o[i] = (struct id_pos){f->ids[i], i};
    qsort(o, n, sizeof *o, cmp_id_pos);
    char **hashes = xmalloc(n * sizeof *hashes);
    unsigned char *qvecs = xmalloc(n * VEC_LOCAL_QBYTES);
    for (size_t i = 0; i < n; i++) {
        f->ids[i] = o[i].id;
        hashes[i] = f->hashes[o[i].pos];
        memcpy(qvecs + i * VEC_LOCAL_QBYTES, f->qvecs + o[i].pos * VEC_LOCAL_QBYTES, VEC_LOCAL_QBYTES);
    }
    free(f->hashes);
    free(f->qvecs);
    f->hashes = hashes;
    f->qvecs = qvecs;
    free(o);
}

/* The stages of a fit's arithmetic, each run in parts (fit_part). */
enum { FIT_INDEX, FIT_CONTEXT, FIT_MIX, FIT_CHUNKS, FIT_TERMS };

#define NO_ROW UINT32_MAX

/* A term seen in one chunk only (most of a repository's vocabulary) has no
 * row of floats kept: its context vector is its chunk's signature, which is
 * computed again where its vector is needed, with the same operations in the
 * same order, so the bytes are those a kept row would give. */
struct fit_parts {
    struct vec_local_fit *f;
    const struct fit_build *b;
    uint16_t *ri;               /* per term, RI_NNZ codes of its index vector: place | 256 when negative */
    uint32_t *row;              /* per term, its row of tvecs, NO_ROW for a term of one chunk */
    float *tvecs;               /* per row, D floats: its context, then its final vector */
    size_t tvecs_mapped;        /* rows_alloc's */
    int stage;
    double mean[D];             /* FIT_MIX: mean of the context vectors ... */
    float centre[D];            /* ... and what is taken off each (zeros: not centred) */
};

/* r_t, the term's sparse random index vector, as codes: RI_NNZ places of D
 * drawn from a hash of the term, each +1 or -1. */
static void index_codes(const char *term, size_t n, uint16_t *out)
{
    uint64_t s = term_hash(term, n);
    for (int k = 0; k < RI_NNZ; k++) {
        uint64_t z = splitmix(&s);
        out[k] = (uint16_t)((z % D) | (((z >> 40) & 1) ? 0 : 256));
    }
}

/* Adds w * r_t to v, from its codes. */
static void add_codes(const uint16_t *code, float w, float *v)
{
    for (int k = 0; k < RI_NNZ; k++) v[code[k] & 255] += (code[k] & 256) ? -w : w;
}

/* Chunk c's signature: the normalised sum of its terms' index vectors, by weight. */
static void signature(const struct fit_parts *p, size_t c, float *sig)
{
    const struct fit_build *b = p->b;
    memset(sig, 0, D * sizeof *sig);
    for (size_t k = b->off[c]; k < b->off[c + 1]; k++)
        add_codes(p->ri + (size_t)b->post[k].term * RI_NNZ, b->post[k].tf, sig);
    normalise(sig);
}

/* A term's final vector from its context vector v (normalised), in place. */
static void mix(const struct fit_parts *p, size_t t, float *v)
{
    for (int i = 0; i < D; i++) v[i] -= p->centre[i];
    normalise(v);
    float own[D] = {0};
    add_codes(p->ri + t * RI_NNZ, 1.0f, own);
    normalise(own);
    for (int i = 0; i < D; i++) v[i] = MIX_OWN * own[i] + (1.0f - MIX_OWN) * v[i];
    normalise(v);
}

/* Chunk c's vector, quantised as stored; the vectors of its terms of one
 * chunk are made (and quantised) here. */
static void chunk_vector(const struct fit_parts *p, size_t c)
{
    const struct fit_build *b = p->b;
    float v[D] = {0}, sig[D], one[D];
    int have = 0;
    for (size_t k = b->off[c]; k < b->off[c + 1]; k++) {
        uint32_t t = b->post[k].term;
        if (p->row[t] != NO_ROW) {
            axpy(b->post[k].tf, p->tvecs + (size_t)p->row[t] * D, v);
            continue;
        }
        if (!have) signature(p, c, sig), have = 1;
        memset(one, 0, sizeof one);
        axpy(b->post[k].tf, sig, one);
        normalise(one);
        mix(p, t, one);
        vec_local_quantise(one, p->f->qtvecs + (size_t)t * VEC_LOCAL_QBYTES);
        axpy(b->post[k].tf, one, v);
    }
    normalise(v);
    vec_local_quantise(v, p->f->qvecs + c * VEC_LOCAL_QBYTES);
}

static void fit_part(void *ctx, int part, int nparts)
{
    struct fit_parts *p = ctx;
    struct vec_local_fit *f = p->f;
    const struct fit_build *b = p->b;
    size_t n = f->n, V = f->nterms;
    size_t c0 = n * (size_t)part / (size_t)nparts, c1 = n * (size_t)(part + 1) / (size_t)nparts;
    size_t t0 = V * (size_t)part / (size_t)nparts, t1 = V * (size_t)(part + 1) / (size_t)nparts;
    switch (p->stage) {
    case FIT_INDEX:
        for (size_t t = t0; t < t1; t++) index_codes(f->terms[t], strlen(f->terms[t]), p->ri + t * RI_NNZ);
        break;
    case FIT_CONTEXT:
        /* a term's context vector sums its chunks' signatures in chunk
         * order; a part owns the terms t with t % nparts == part. A
         * signature is cheap (RI_NNZ additions a posting): each part
         * computes those it needs rather than keeping a float row a chunk. */
        for (size_t c = 0; c < n; c++) {
            float sig[D];
            int have = 0;
            for (size_t k = b->off[c]; k < b->off[c + 1]; k++) {
                uint32_t t = b->post[k].term;
                if (t % (uint32_t)nparts != (uint32_t)part || p->row[t] == NO_ROW) continue;
                if (!have) signature(p, c, sig), have = 1;
                axpy(b->post[k].tf, sig, p->tvecs + (size_t)p->row[t] * D);
            }
        }
        for (size_t t = (size_t)part; t < V; t += (size_t)nparts)
            if (p->row[t] != NO_ROW) normalise(p->tvecs + (size_t)p->row[t] * D);
        break;
    case FIT_MIX:
        for (size_t t = t0; t < t1; t++)
            if (p->row[t] != NO_ROW) mix(p, t, p->tvecs + (size_t)p->row[t] * D);
        break;
    case FIT_CHUNKS:   /* quantised as they are stored */
        for (size_t c = c0; c < c1; c++) chunk_vector(p, c);
        break;
    case FIT_TERMS:   /* the term vectors kept as floats, as stored, once the chunks no longer need them */
        for (size_t t = t0; t < t1; t++)
            if (p->row[t] != NO_ROW)
                vec_local_quantise(p->tvecs + (size_t)p->row[t] * D, f->qtvecs + t * VEC_LOCAL_QBYTES);
        break;
    }
}

/* A fit being built: the chunks handed in so far (semantic_local.h). */
struct vec_local_build {
    struct vec_local_fit f;
    struct fit_build b;
    size_t capn;
};

struct vec_local_build *vec_local_build_new(void)
{
    struct vec_local_build *B = xcalloc(1, sizeof *B);
    B->b.f = &B->f;
    B->b.map = xcalloc(1, sizeof *B->b.map);
    map_init(B->b.map);
    B->f.map = B->b.map;
    B->b.off = xmalloc(sizeof *B->b.off);
    B->b.off[0] = 0;
    return B;
}

void vec_local_build_chunk(struct vec_local_build *B, int64_t id, const char *hash, const char *name,
                           const char *doc, const char *body)
{
    struct vec_local_fit *f = &B->f;
    struct fit_build *b = &B->b;
    if (f->n == B->capn) {   /* ids and hashes per chunk, off one more */
        B->capn = xgrow_cap(B->capn, f->n, 1024);
        f->ids = xreallocarray(f->ids, B->capn, sizeof *f->ids);
        f->hashes = xreallocarray(f->hashes, B->capn, sizeof *f->hashes);
        b->off = xreallocarray(b->off, B->capn + 1, sizeof *b->off);
    }
    f->ids[f->n] = id;
    f->hashes[f->n] = xstrdup(hash ? hash : "");
    add_column(b, name, W_NAME);
    add_column(b, doc, W_DOC);
    add_column(b, body, W_BODY);
    close_chunk(b);
    f->n++;
    b->off[f->n] = b->npost;
}

void vec_local_build_free(struct vec_local_build *B)
{
    if (!B) return;
    free(B->b.tmp);
    free(B->b.post);
    free(B->b.off);
    free(B->b.df);
    free(B->b.at);
    vec_local_fit_free(&B->f);
    free(B);
}

static void fit_arith(struct vec_local_build *B, struct vec_local_fit *f, const struct vec_local_parts *parts);

static int fixed_parts(void *ctx) { return *(const int *)ctx; }

int vec_local_build_fit(struct vec_local_build *B, struct vec_local_fit *out, int nparts)
{
    if (nparts <= 0) nparts = B->f.n < 2048 ? 1 : ncores() < 8 ? ncores() : 8;   /* threads cost more than a small fit */
    return vec_local_build_fit_by(B, out, &(struct vec_local_parts){fixed_parts, NULL, &nparts});
}

int vec_local_build_fit_by(struct vec_local_build *B, struct vec_local_fit *out, const struct vec_local_parts *parts)
{
    fit_arith(B, out, parts);
    free(B);
    return 0;
}

size_t vec_local_build_bytes(const struct vec_local_build *B)
{
    size_t V = B->f.nterms;
    return B->b.nrows * D * sizeof(float) + (B->f.n + V) * VEC_LOCAL_QBYTES +
           V * (RI_NNZ * sizeof(uint16_t) + sizeof(uint32_t));
}

int vec_local_fit(sqlite3 *db, struct vec_local_fit *f, char *err, size_t errlen)
{
    return vec_local_fit_parts(db, f, 0, err, errlen);
}

int vec_local_fit_parts(sqlite3 *db, struct vec_local_fit *f, int nparts, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
            "SELECT c.id, c.hash, x.name, x.doc, x.body FROM chunks c JOIN files f ON f.id = c.file_id "
            "LEFT JOIN chunks_fts x ON x.rowid = c.id ORDER BY f.path, c.id", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the chunks for local vectors: %s", sqlite3_errmsg(db));
        return -1;
    }
    struct vec_local_build *B = vec_local_build_new();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        vec_local_build_chunk(B, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                              (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
                              (const char *)sqlite3_column_text(st, 4));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot read the chunks for local vectors: %s", sqlite3_errmsg(db));
        vec_local_build_free(B);
        return -1;
    }
    return vec_local_build_fit(B, f, nparts);
}

/* The model of the chunks of B, into f; frees what B holds but B itself. */
/* Runs the fit's current stage in as many parts as asked for now (1 to 8). */
static void run_stage(struct fit_parts *fp, const struct vec_local_parts *parts)
{
    int k = parts->count(parts->ctx);
    run_parts(k < 1 ? 1 : k > 8 ? 8 : k, fit_part, fp);
}

static void fit_arith(struct vec_local_build *B, struct vec_local_fit *f, const struct vec_local_parts *parts)
{
    *f = B->f;
    struct fit_build b = B->b;
    b.f = f;
    free(b.tmp);
    free(b.at);
    size_t n = f->n, V = f->nterms;
    f->ndocs = (long long)n;
    f->df = b.df ? b.df : xcalloc(1, sizeof *f->df);   /* counted as the chunks came */
    /* tf-idf weight of each posting, in place */
    for (size_t k = 0; k < b.npost; k++) {
        struct posting *p = &b.post[k];
        float idf = (float)log((n + 1.0) / f->df[p->term]);
        p->tf = (1.0f + logf(p->tf)) * idf;
    }

    /* the arithmetic, on one thread per core: each part computes whole rows
     * (chunks or terms) in the order one thread would, so the bytes do not
     * depend on the number of parts */
    f->qvecs = xmalloc(n ? n * VEC_LOCAL_QBYTES : 1);
    struct fit_parts fp = {.f = f, .b = &b, .ri = xmalloc((V ? V : 1) * RI_NNZ * sizeof *fp.ri),
                           .row = xmalloc((V ? V : 1) * sizeof *fp.row)};
    size_t rows = 0;
    for (size_t t = 0; t < V; t++) fp.row[t] = f->df[t] >= 2 ? (uint32_t)rows++ : NO_ROW;
    fp.tvecs = rows_alloc(rows * D, &fp.tvecs_mapped);
    f->qtvecs = xmalloc(V ? V * VEC_LOCAL_QBYTES : 1);
    for (fp.stage = FIT_INDEX; fp.stage <= FIT_CONTEXT; fp.stage++) run_stage(&fp, parts);
    /* the mean of the context vectors over the terms seen in at least two
     * chunks: the direction all context vectors share (the repository's
     * common vocabulary) says nothing about a term. A tiny corpus is left
     * uncentred: its mean is mostly the few terms themselves. */
    size_t nmean = 0;
    for (size_t t = 0; t < V; t++) {
        if (f->df[t] >= 2) {
            for (int i = 0; i < D; i++) fp.mean[i] += fp.tvecs[(size_t)fp.row[t] * D + i];
            nmean++;
        }
    }
    if (nmean >= CENTRE_MIN_TERMS)
        for (int i = 0; i < D; i++) fp.centre[i] = (float)(fp.mean[i] / nmean);
    fp.stage = FIT_MIX;
    run_stage(&fp, parts);
    if (parts->gate) parts->gate(parts->ctx);
    fp.stage = FIT_CHUNKS;
    run_stage(&fp, parts);
    free(fp.ri);
    free(b.post);
    free(b.off);
    fp.stage = FIT_TERMS;
    run_stage(&fp, parts);
    rows_free(fp.tvecs, fp.tvecs_mapped);
    free(fp.row);
    by_id(f);
}

void vec_local_fit_free(struct vec_local_fit *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n && f->hashes; i++) free(f->hashes[i]);
    for (size_t i = 0; i < f->nterms; i++) free(f->terms[i]);
    free(f->ids);
    free(f->hashes);
    free(f->qvecs);
    free(f->terms);
    free(f->df);
    free(f->qtvecs);
    map_free(f->map);
    memset(f, 0, sizeof *f);
}

/* ---- storage ---- */

/* Vectors are stored as a float scale followed by D signed bytes: a quarter
 * of the space of float32, and far more precise than ranking needs. */
void vec_local_quantise(const float *v, unsigned char out[VEC_LOCAL_QBYTES])
{
    float mx = 0;
    for (int i = 0; i < D; i++) {
        float x = fabsf(v[i]);
        if (x > mx) mx = x;
    }
    float scale = mx > 0 ? mx / 127.0f : 1.0f;
    memcpy(out, &scale, sizeof scale);
    /* rounded to nearest, ties to even, as lrintf in the default rounding
     * mode: adding and taking off 1.5 * 2^23 leaves no fraction bits (exact
     * for |x| < 2^22; here |x| <= 127), without a library call */
    for (int i = 0; i < D; i++) {
        float t = v[i] / scale + 12582912.0f;
        out[4 + i] = (unsigned char)(signed char)(int)(t - 12582912.0f);
    }
}

int vec_local_dequantise(const void *blob, int len, float *v)
{
    if (len != VEC_LOCAL_QBYTES) return -1;
    const unsigned char *p = blob;
    float scale;
    memcpy(&scale, p, sizeof scale);
    for (int i = 0; i < D; i++) v[i] = (float)(signed char)p[4 + i] * scale;
    normalise(v);
    return 0;
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int cmp_term_ptr(const void *a, const void *b)
{
    return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

/* The term vectors go in blocks of vec_local_term_block terms (128), in
 * term order: a row (model, first term) of the terms (NUL-terminated), their
 * document frequencies (4 bytes each, little-endian) and their vectors. A
 * row a term took most of the time storing them (sympy: 93,000 terms, 0.2
 * s); a question reads the one block its term would be in. */
size_t vec_local_term_block = 128;

static const char BLOCKS_DDL[] =
    "CREATE TABLE IF NOT EXISTS vec_term_blocks(model TEXT NOT NULL, first TEXT NOT NULL, terms BLOB NOT NULL, "
    "dfs BLOB NOT NULL, vecs BLOB NOT NULL, PRIMARY KEY(model, first)) WITHOUT ROWID";

/* Appends the block of sorted terms ptr[0..n) to ins, bound to the model. */
static int put_block(sqlite3_stmt *ins, const struct vec_local_fit *f, char **const *ptr, size_t n, struct buf *terms,
                     struct buf *dfs, struct buf *vecs)
{
    buf_reset(terms);
    buf_reset(dfs);
    buf_reset(vecs);
    for (size_t i = 0; i < n; i++) {
        size_t t = (size_t)(ptr[i] - f->terms);
        buf_add(terms, f->terms[t], strlen(f->terms[t]) + 1);
        uint32_t df = (uint32_t)f->df[t];
        unsigned char le[4] = {(unsigned char)df, (unsigned char)(df >> 8), (unsigned char)(df >> 16),
                               (unsigned char)(df >> 24)};
        buf_add(dfs, (const char *)le, sizeof le);
        buf_add(vecs, (const char *)f->qtvecs + t * VEC_LOCAL_QBYTES, VEC_LOCAL_QBYTES);
    }
    sqlite3_bind_text(ins, 2, *ptr[0], -1, SQLITE_STATIC);
    sqlite3_bind_blob64(ins, 3, terms->data, terms->len, SQLITE_STATIC);
    sqlite3_bind_blob64(ins, 4, dfs->data, dfs->len, SQLITE_STATIC);
    sqlite3_bind_blob64(ins, 5, vecs->data, vecs->len, SQLITE_STATIC);
    return step_done(ins);
}

int vec_local_save_on(sqlite3 *db, const struct vec_local_fit *f, const char *stamp, char *err, size_t errlen)
{
    sqlite3_stmt *ins_t = NULL, *ins_m = NULL;
    char ***ptr = NULL;
    struct buf terms = BUF_INIT, dfs = BUF_INIT, vecs = BUF_INIT;
    int r = -1;
    /* the rows of every local model, this one's and earlier ones' (whose
     * chunk vectors were kept in embeddings, their term vectors a row each
     * in vec_terms) */
    if (sqlite3_exec(db, BLOCKS_DDL, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "DELETE FROM vec_terms WHERE model GLOB 'local:*';"
                         "DELETE FROM vec_term_blocks WHERE model GLOB 'local:*';"
                         "DELETE FROM embeddings WHERE model GLOB 'local:*';"
                         "DELETE FROM vec_models WHERE model GLOB 'local:*'", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO vec_term_blocks(model, first, terms, dfs, vecs) VALUES(?1, ?2, ?3, ?4, ?5)",
                           -1, &ins_t, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO vec_models(model, stamp, ndocs, dim) VALUES(?1, ?2, ?3, ?4)",
                           -1, &ins_m, NULL))
        goto out;
    sqlite3_bind_text(ins_t, 1, VEC_LOCAL_MODEL, -1, SQLITE_STATIC);
    /* in key order: each row is appended to the table's b-tree */
    ptr = xmalloc((f->nterms ? f->nterms : 1) * sizeof *ptr);
    for (size_t t = 0; t < f->nterms; t++) ptr[t] = &f->terms[t];
    if (f->nterms) qsort(ptr, f->nterms, sizeof *ptr, cmp_term_ptr);
    size_t per = vec_local_term_block ? vec_local_term_block : 1;
    for (size_t i = 0; i < f->nterms; i += per)
        if (put_block(ins_t, f, ptr + i, f->nterms - i < per ? f->nterms - i : per, &terms, &dfs, &vecs)) goto out;
    sqlite3_bind_text(ins_m, 1, VEC_LOCAL_MODEL, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins_m, 2, stamp, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins_m, 3, f->ndocs);
    sqlite3_bind_int(ins_m, 4, D);
    if (step_done(ins_m)) goto out;
    r = 0;
out:
    if (r) snprintf(err, errlen, "cannot store local vectors: %s", sqlite3_errmsg(db));
    free(ptr);
    buf_free(&terms);
    buf_free(&dfs);
    buf_free(&vecs);
    sqlite3_finalize(ins_t);
    sqlite3_finalize(ins_m);
    return r;
}

int vec_local_stored(sqlite3 *db, const char *stamp, long long *ndocs)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(db, "SELECT stamp, ndocs, dim FROM vec_models WHERE model = ?1", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, VEC_LOCAL_MODEL, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        if (s && strcmp(s, stamp) == 0 && sqlite3_column_int(st, 2) == D) {
            yes = 1;
            if (ndocs) *ndocs = sqlite3_column_int64(st, 1);
        }
    }
    sqlite3_finalize(st);
    return yes;
}

/* ---- questions ---- */

#define QMAX 128

struct qterms { char *t[QMAX]; int tf[QMAX]; int n; };

static void q_add(const char *term, size_t len, void *ctx)
{
    struct qterms *q = ctx;
    for (int i = 0; i < q->n; i++)
        if (strncmp(q->t[i], term, len) == 0 && q->t[i][len] == 0) { q->tf[i]++; return; }
    if (q->n == QMAX) return;
    q->t[q->n] = xstrndup(term, len);
    q->tf[q->n++] = 1;
}

/* term's document frequency in the block row st holds, its vector into v;
 * 0 when the block does not hold it (or is malformed). */
static int block_find(sqlite3_stmt *st, const char *term, float *v)
{
    const char *terms = sqlite3_column_blob(st, 0);
    size_t tlen = (size_t)sqlite3_column_bytes(st, 0);
    const unsigned char *dfs = sqlite3_column_blob(st, 1), *vecs = sqlite3_column_blob(st, 2);
    size_t ndfs = (size_t)sqlite3_column_bytes(st, 1) / 4, nvecs = (size_t)sqlite3_column_bytes(st, 2);
    size_t n = strlen(term) + 1;
    for (size_t i = 0, off = 0; terms && off < tlen && i < ndfs; i++) {
        const char *end = memchr(terms + off, 0, tlen - off);
        if (!end) return 0;
        size_t len = (size_t)(end - (terms + off)) + 1;
        if (len == n && memcmp(terms + off, term, n) == 0) {
            const unsigned char *d = dfs + 4 * i;
            if ((i + 1) * VEC_LOCAL_QBYTES > nvecs ||
                vec_local_dequantise(vecs + i * VEC_LOCAL_QBYTES, VEC_LOCAL_QBYTES, v) != 0)
                return 0;
            uint32_t df = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
            return df > INT32_MAX ? 0 : (int)df;
        }
        off += len;
    }
    return 0;
}

int vec_local_embed_query(sqlite3 *db, const struct vec_local_fit *fit, long long ndocs,
                          const char *text, float *out)
{
    struct qterms q = {0};
    memset(out, 0, D * sizeof *out);
    tok_each(text, strlen(text), TOK_STOPWORDS, q_add, &q);
    sqlite3_stmt *st = NULL;
    if (!fit && sqlite3_prepare_v2(db, "SELECT terms, dfs, vecs FROM vec_term_blocks WHERE model = ?1 AND first <= ?2 "
                                       "ORDER BY first DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        st = NULL;
    if (st) sqlite3_bind_text(st, 1, VEC_LOCAL_MODEL, -1, SQLITE_STATIC);
    if (fit) ndocs = fit->ndocs;
    int known = 0;
    float v[D];
    for (int i = 0; i < q.n; i++) {
        int df = 0;
        if (fit) {
            long k = map_find(fit->map, fit->terms, q.t[i], strlen(q.t[i]));
            if (k >= 0) {
                /* the bytes a stored model holds: a fit kept in memory embeds as it does */
                df = fit->df[k];
                vec_local_dequantise(fit->qtvecs + (size_t)k * VEC_LOCAL_QBYTES, VEC_LOCAL_QBYTES, v);
            }
        } else if (st) {
            sqlite3_bind_text(st, 2, q.t[i], -1, SQLITE_STATIC);
            if (sqlite3_step(st) == SQLITE_ROW) df = block_find(st, q.t[i], v);
            sqlite3_reset(st);
        }
        if (df > 0) {
            float idf = (float)log((ndocs + 1.0) / df);
            axpy((1.0f + logf((float)q.tf[i])) * idf, v, out);
            known++;
        }
        free(q.t[i]);
    }
    sqlite3_finalize(st);
    normalise(out);
    return known;
}
