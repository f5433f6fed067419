/*
 * semantic: hybrid bm25 + dense retrieval over the index's chunks (see
 * semantic.h for the ranking). A struct semantic_cache, which its caller
 * owns, holds one connection's chunk list (id, file, kind) in id order, the
 * file list (path, test or not) and the dense matrices, rebuilt when the
 * stamp of the chunk list changes.
 */
#include "semantic.h"
#include "store_rows.h"
#include "fpattern.h"
#include "tok.h"
#include "util.h"
#include "semantic_local.h"
#include "linepost.h"
#include "sqlx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCAND 100         /* candidates taken from each list before fusion */
#define RRF_K 60.0
#define PRIOR_MODULE 0.8  /* module windows: unnamed stretches of top-level code */
#define PRIOR_TEST 0.9    /* test code when the category is 'any' */
#define PRIOR_TEXT 0.7    /* text files (docs, settings): below code, which most questions are about */
#define TEXT_MAX 16384    /* longer spans are cut at a line end and marked elided */
#define FTS_MAX_TERMS 64
#define BM25_POSTING_BUDGET 4000  /* chunks a bm25 query may have to score (see bm25_match) */

/* bm25() column weights, in chunks_fts column order (name, doc, body, path). A
 * qualified name is a handful of terms chosen to say what the code is; a
 * docstring is prose written to describe it; the path names the module; the
 * body is mostly incidental identifiers. */
#define BM25_WEIGHTS "4.0, 2.0, 1.0, 1.5"

enum { KIND_FUNCTION, KIND_CLASS, KIND_MODULE, KIND_TEXT };

struct sem_chunk { int64_t id; int file; unsigned char kind; };
struct sem_file { int64_t id; size_t path_at; unsigned char is_test; };   /* path: file_path */

/* One connection's cache (semantic.h). Owns everything it points to. */
struct semantic_cache {
    sqlite3 *db;
    char stamp[17];
    long long data_version;
    int total_changes;
    size_t n;
    struct sem_chunk *chunks;     /* ascending id */
    long *ord;                    /* parallel to chunks: place in (path, id) order, the tie-break */
    /* parallel to chunks: chunks.hash at text + hash_at[i] (chunk_hash), kept
     * only once remote vectors were asked for (want_hashes): they are found
     * by chunk hash, local ones are not */
    size_t *hash_at;
    int keep_hashes;
    size_t nfiles;
    struct sem_file *files;       /* ascending id */
    /* the paths and hashes, each NUL-terminated, in one block: a few
     * allocations where one per string costs as much as reading the rows */
    struct buf text;
    /* local vectors, rows parallel to chunks (NULL until first needed): the
     * stored bytes without their scale, which normalising cancels, in blocks
     * of DENSE_BLOCK rows interleaved (see rank_local), and each row's
     * 1 / norm of those bytes */
    signed char *local;           /* local_bytes of xcalloc_large */
    size_t local_bytes;
    float *local_inv;
    /* local is NULL but the stored model of stamp has its matrix: the first
     * question text is scored reading the matrix part by part (most
     * processes ask one); a second one loads it (local_ensure) */
    int local_stored;
    int local_streamed;           /* a question text was scored that way */
    /* the last question scored against the local vectors (its text) and
     * every chunk's score, which the same question asked again (with
     * another filter or category, by another step of the search) reuses */
    char *dense_text;
    float *dense_score;
    int dense_known;              /* terms of the question the model knows: 0, no scores */
    /* a text its owner will score later (semantic_cache_expect) and, once
     * the pass that streamed the matrix for another text scored it too, its
     * scores: asking it then reads the matrix no second time */
    char *expect_text;
    char *expect_done;            /* expect_text when expect_score holds its scores */
    float *expect_score;
    int expect_known;
    long long local_ndocs;
    struct vec_local_fit *local_fit;  /* kept when the model could not be stored */
    int vocab_ready;              /* temp.drqa_semantic_vocab exists on this connection */
    /* the terms' document counts looked up so far: the vocabulary counts a
     * term's documents by reading its whole posting list (tens of ms for a
     * common word on a large index), and a search asks the same terms again
     * and again, with other filters */
    struct term_df { char *term; long df; } *dfs;
    size_t ndfs, capdfs;
    /* remote vectors, rows parallel to chunks (zero rows: not embeddable) */
    float *remote;
    int remote_dim;
    char *remote_model;
};

static void local_free(struct semantic_cache *c)
{
    xfree_large(c->local, c->local_bytes);
    free(c->local_inv);
    c->local = NULL;
    c->local_inv = NULL;
    c->local_bytes = 0;
}

static void cache_clear(struct semantic_cache *c)
{
    free(c->files);
    free(c->chunks);
    free(c->ord);
    free(c->hash_at);
    buf_free(&c->text);
    local_free(c);
    free(c->dense_text);
    free(c->dense_score);
    c->dense_text = NULL;
    c->dense_score = NULL;
    for (size_t i = 0; i < c->ndfs; i++) free(c->dfs[i].term);
    free(c->dfs);
    c->dfs = NULL;
    c->ndfs = c->capdfs = 0;
    free(c->expect_done);
    free(c->expect_score);
    c->expect_done = NULL;
    c->expect_score = NULL;
    free(c->remote);
    free(c->remote_model);
    c->remote = NULL;
    c->remote_model = NULL;
    c->remote_dim = 0;
    vec_local_fit_free(c->local_fit);
    free(c->local_fit);
    c->files = NULL;
    c->chunks = NULL;
    c->ord = NULL;
    c->hash_at = NULL;
    c->local_fit = NULL;
    c->local_stored = c->local_streamed = 0;
    c->n = c->nfiles = 0;
    c->stamp[0] = 0;
}

struct semantic_cache *semantic_cache_new(sqlite3 *db)
{
    struct semantic_cache *c = xcalloc(1, sizeof *c);
    c->db = db;
    c->data_version = -1;
    c->total_changes = -1;
    return c;
}

void semantic_cache_free(struct semantic_cache *c)
{
    if (!c) return;
    cache_clear(c);
    free(c->expect_text);
    free(c);
}

void semantic_cache_expect(struct semantic_cache *c, const char *text)
{
    if (!c) return;
    free(c->expect_text);
    c->expect_text = text && *text ? xstrdup(text) : NULL;
}

/* ---- small parsers and predicates ---- */

int semantic_parse_category(const char *s, enum semantic_category *out)
{
    if (!s || !*s || !strcmp(s, "any") || !strcmp(s, "all")) *out = SEMANTIC_ANY;
    else if (!strcmp(s, "implementation") || !strcmp(s, "impl")) *out = SEMANTIC_IMPLEMENTATION;
    else if (!strcmp(s, "test") || !strcmp(s, "tests")) *out = SEMANTIC_TEST;
    else return -1;
    return 0;
}

/* The file_pattern filter: the actions' glob (fpattern.h), which matches the
 * whole path or a tail of it starting after a '/'. */
static int path_matches(const char *pattern, const char *path)
{
    return fpattern_match(pattern, path);
}

/* The question's distinct terms, in order, at most FTS_MAX_TERMS. */
struct qterms { char *t[FTS_MAX_TERMS]; long df[FTS_MAX_TERMS]; int n; };

static void qterm_add(const char *t, size_t len, void *ctx)
{
    struct qterms *q = ctx;
    if (q->n >= FTS_MAX_TERMS) return;
    for (int i = 0; i < q->n; i++)
        if (strncmp(q->t[i], t, len) == 0 && q->t[i][len] == 0) return;
    q->df[q->n] = 0;
    q->t[q->n++] = xstrndup(t, len);
}

static void qterms_free(struct qterms *q)
{
    for (int i = 0; i < q->n; i++) free(q->t[i]);
    q->n = 0;
}

/* Each term as an FTS5 string (a '"' doubled), joined with OR. */
static char *match_expr(char *const *t, int n)
{
    if (!n) return NULL;
    struct buf out = BUF_INIT;
    for (int i = 0; i < n; i++) {
        if (i) buf_adds(&out, " OR ");
        buf_addc(&out, '"');
        for (const char *p = t[i]; *p; p++) {
            if (*p == '"') buf_addc(&out, '"');
            buf_addc(&out, *p);
        }
        buf_addc(&out, '"');
    }
    return buf_take(&out);
}

char *semantic_fts_query(const char *text)
{
    struct qterms q = {.n = 0};
    if (text) tok_each(text, strlen(text), TOK_STOPWORDS, qterm_add, &q);
    char *m = match_expr(q.t, q.n);
    qterms_free(&q);
    return m;
}

static int cmp_df(const void *a, const void *b)
{
    const long *x = a, *y = b;   /* pairs {df, index} */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The number of chunks holding term, through vocab (its statement), or
 * as looked up before while c holds the same chunks. */
static long term_df(struct semantic_cache *c, sqlite3_stmt *vocab, const char *term)
{
    for (size_t i = 0; i < c->ndfs; i++)
        if (!strcmp(c->dfs[i].term, term)) return c->dfs[i].df;
    sqlite3_bind_text(vocab, 1, term, -1, SQLITE_STATIC);
    int rc = sqlite3_step(vocab);
    long df = rc == SQLITE_ROW ? (long)sqlite3_column_int64(vocab, 0) : 0;
    sqlite3_reset(vocab);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) {   /* an error is not remembered */
        ARRAY_GROW(c->dfs, c->ndfs, c->capdfs, 16);
        c->dfs[c->ndfs++] = (struct term_df){xstrdup(term), df};
    }
    return df;
}

/* The MATCH expression for the bm25 list. Terms absent from the index are
 * left out (they cannot match), and when the terms together occur in more
 * than BM25_POSTING_BUDGET chunks the most frequent ones are dropped until
 * the rest fit: FTS5 scores every matching row, so a question made of words
 * common in a large repository would otherwise cost tens of milliseconds,
 * while such words carry the least weight in bm25 (lowest idf). The rarest
 * term is always kept. */
static char *bm25_match(sqlite3 *db, struct semantic_cache *c, const char *text)
{
    struct qterms q = {.n = 0};
    tok_each(text, strlen(text), TOK_STOPWORDS, qterm_add, &q);
    if (!q.n) return NULL;
    sqlite3_stmt *st = NULL;
    if (!c->vocab_ready &&
        sqlite3_exec(db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.drqa_semantic_vocab "
                         "USING fts5vocab(main, 'chunks_fts', 'row')", NULL, NULL, NULL) == SQLITE_OK)
        c->vocab_ready = 1;
    if (!c->vocab_ready ||
        sqlite3_prepare_v2(db, "SELECT doc FROM temp.drqa_semantic_vocab WHERE term = ?1", -1, &st, NULL) != SQLITE_OK) {
        /* no frequencies: every term, unpruned */
        char *m = match_expr(q.t, q.n);
        qterms_free(&q);
        return m;
    }
    long order[FTS_MAX_TERMS][2];
    for (int i = 0; i < q.n; i++) {
        q.df[i] = term_df(c, st, q.t[i]);
        order[i][0] = q.df[i];
        order[i][1] = i;
    }
    sqlite3_finalize(st);
    qsort(order, (size_t)q.n, sizeof order[0], cmp_df);
    char *keep[FTS_MAX_TERMS];
    int nk = 0;
    long total = 0;
    for (int j = 0; j < q.n; j++) {
        long df = order[j][0];
        if (df == 0) continue;
        if (nk && total + df > BM25_POSTING_BUDGET) break;
        total += df;
        keep[nk++] = q.t[order[j][1]];
    }
    char *m = match_expr(keep, nk);
    qterms_free(&q);
    return m;
}

/* ---- the chunk list and its stamp ---- */

static void stamp_mix(uint64_t *h, const void *p, size_t n)
{
    uint64_t x = hash64(p, n);
    *h = (*h ^ x) * 0x100000001b3ULL + (x >> 7);
}

struct path_key { const char *path; size_t i; };

static int cmp_path_key(const void *a, const void *b)
{
    const struct path_key *x = a, *y = b;
    return strcmp(x->path, y->path);
}

/* The hash of chunk i; only with keep_hashes. */
static const char *chunk_hash(const struct semantic_cache *c, size_t i)
{
    return c->text.data + c->hash_at[i];
}

static const char *file_path(const struct semantic_cache *c, const struct sem_file *f)
{
    return c->text.data + f->path_at;
}

/* Ties in every ranking are broken by c->ord: chunks in the order of their
 * files' paths, then of their ids. A fresh index assigns ids in that order;
 * an updated one gives a re-parsed file's chunks new, higher ids, but keeps
 * their order within the file. So an index brought to a tree by updates
 * ranks exactly like a fresh index of the same tree. */
static void order_chunks(struct semantic_cache *c)
{
    struct path_key *byp = xmalloc((c->nfiles ? c->nfiles : 1) * sizeof *byp);
    long *rank = xmalloc((c->nfiles ? c->nfiles : 1) * sizeof *rank);
    for (size_t i = 0; i < c->nfiles; i++) byp[i] = (struct path_key){file_path(c, &c->files[i]), i};
    if (c->nfiles) qsort(byp, c->nfiles, sizeof *byp, cmp_path_key);
    for (size_t r = 0; r < c->nfiles; r++) rank[byp[r].i] = (long)r;
    /* chunks are in ascending id order: counting them per file rank and
     * handing out places in that order sorts by (rank, id) */
    long *start = xcalloc(c->nfiles + 1, sizeof *start);
    for (size_t i = 0; i < c->n; i++) start[rank[c->chunks[i].file] + 1]++;
    for (size_t r = 0; r < c->nfiles; r++) start[r + 1] += start[r];
    c->ord = xmalloc((c->n ? c->n : 1) * sizeof *c->ord);
    for (size_t i = 0; i < c->n; i++) c->ord[i] = start[rank[c->chunks[i].file]]++;
    free(start);
    free(rank);
    free(byp);
}



struct id_at { int64_t id; size_t at; };

static int cmp_id_at(const void *a, const void *b)
{
    int64_t x = ((const struct id_at *)a)->id, y = ((const struct id_at *)b)->id;
    return x < y ? -1 : x > y;
}

/* The largest chunk id when it is a plausible count to reserve room for
 * (at most 1 << 24), else 0. */
static size_t largest_chunk_id(sqlite3 *db)
{
    sqlite3_stmt *st;
    sqlite3_int64 v = 0;
    if (sqlite3_prepare_v2(db, "SELECT max(id) FROM chunk_spans", -1, &st, NULL) != SQLITE_OK) return 0;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v > 0 && v <= (1 << 24) ? (size_t)v : 0;
}

/* Reads chunks and files. With c == NULL only computes the stamp. */
static int read_chunks(sqlite3 *db, struct semantic_cache *c, char stamp[17], char *err, size_t errlen)
{
    sqlite3_stmt *st;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t cap = 0;
    /* The files in path order, which the path index holds with their ids
     * (the table's rows hold each file's text too: reading them was most of
     * this), then in id order for the stamp and the cache. */
    if (sqlite3_prepare_v2(db, "SELECT id, path FROM files ORDER BY path", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    struct buf own = BUF_INIT, *names = c ? &c->text : &own;
    struct id_at *byid = NULL;
    size_t nf = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 1);
        if (!p) p = "";
        ARRAY_GROW(byid, nf, cap, 256);
        byid[nf++] = (struct id_at){sqlite3_column_int64(st, 0), names->len};
        buf_add(names, p, strlen(p) + 1);
    }
    sqlite3_finalize(st);
    if (nf) qsort(byid, nf, sizeof *byid, cmp_id_at);
    if (c) c->files = xmalloc((nf ? nf : 1) * sizeof *c->files);
    for (size_t i = 0; i < nf; i++) {
        const char *p = names->data + byid[i].at;
        stamp_mix(&h, &byid[i].id, sizeof byid[i].id);
        stamp_mix(&h, p, strlen(p));
        if (c) c->files[c->nfiles++] = (struct sem_file){byid[i].id, byid[i].at, (unsigned char)fpattern_is_test(p)};
    }
    free(byid);
    buf_free(&own);
    cap = 0;
    /* the list at its size from the start: grown chunk by chunk, it was
     * copied as it doubled (ids are positive and distinct, so the largest
     * bounds the count; a sparse range after many updates only reserves) */
    if (c) {
        cap = largest_chunk_id(db);
        if (cap) {
            c->chunks = xreallocarray(c->chunks, cap, sizeof *c->chunks);
            if (c->keep_hashes) c->hash_at = xreallocarray(c->hash_at, cap, sizeof *c->hash_at);
        }
    }
    /* every chunk, each question: the stored kind and hash, read as the view
     * chunks gives them without sqlite computing it row by row */
    if (sqlite3_prepare_v2(db, "SELECT id, file_id, kind_s, hash_s FROM chunk_spans ORDER BY id", -1, &st, NULL) !=
        SQLITE_OK)
        goto fail;
    size_t fi = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), fid = sqlite3_column_int64(st, 1);
        char hbuf[17];
        const char *kind = store_chunk_kind_of(st, 2);
        const char *hash = store_hash_of(st, 3, hbuf);
        if (!kind) kind = "";
        if (!hash) hash = "";
        stamp_mix(&h, &id, sizeof id);
        stamp_mix(&h, &fid, sizeof fid);
        stamp_mix(&h, kind, strlen(kind));
        stamp_mix(&h, hash, strlen(hash));
        if (!c) continue;
        /* chunks of one file are usually adjacent: try the last file first */
        if (!(fi < c->nfiles && c->files[fi].id == fid)) {
            size_t lo = 0, hi = c->nfiles;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (c->files[mid].id < fid) lo = mid + 1; else hi = mid;
            }
            fi = lo;
        }
        if (fi >= c->nfiles || c->files[fi].id != fid) continue;  /* orphan chunk */
        if (c->n == cap) {
            cap = xgrow_cap(cap, c->n, 1024);
            c->chunks = xreallocarray(c->chunks, cap, sizeof *c->chunks);
            if (c->keep_hashes) c->hash_at = xreallocarray(c->hash_at, cap, sizeof *c->hash_at);
        }
        unsigned char k = !strcmp(kind, "class")    ? KIND_CLASS
                        : !strcmp(kind, "module") ? KIND_MODULE
                        : !strcmp(kind, "text")   ? KIND_TEXT
                                                  : KIND_FUNCTION;
        c->chunks[c->n] = (struct sem_chunk){id, (int)fi, k};
        if (c->keep_hashes) {
            c->hash_at[c->n] = c->text.len;
            buf_add(&c->text, hash, strlen(hash) + 1);
        }
        c->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) goto fail;
    hash64_hex(h, stamp);
    if (c) order_chunks(c);
    return 0;
fail:
    snprintf(err, errlen, "cannot read the index's chunks: %s (run drqa-tui --index-only --check on the repository to check it and rebuild it when damaged)",
             sqlite3_errmsg(db));
    return -1;
}

/* Makes the next cache_refresh keep the chunks' hashes, reading the chunks
 * again when they were read without. */
static void want_hashes(struct semantic_cache *c)
{
    if (c->keep_hashes) return;
    c->keep_hashes = 1;
    cache_clear(c);
}

/* Makes the cache match the database's current chunks. */
static int cache_refresh(sqlite3 *db, struct semantic_cache *c, char *err, size_t errlen)
{
    long long dv = sqlx_data_version(db);
    int tc = sqlite3_total_changes(db);
    if (c->stamp[0] && dv == c->data_version && tc == c->total_changes) return 0;
    char stamp[17];
    if (c->stamp[0]) {
        if (read_chunks(db, NULL, stamp, err, errlen)) return -1;
        if (!strcmp(stamp, c->stamp)) {
            c->data_version = dv;
            c->total_changes = tc;
            return 0;
        }
    }
    cache_clear(c);
    if (read_chunks(db, c, stamp, err, errlen)) {
        cache_clear(c);
        return -1;
    }
    memcpy(c->stamp, stamp, sizeof stamp);
    c->data_version = dv;
    c->total_changes = tc;
    return 0;
}

static long chunk_index(const struct semantic_cache *c, int64_t id)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->chunks[mid].id < id) lo = mid + 1; else hi = mid;
    }
    return lo < c->n && c->chunks[lo].id == id ? (long)lo : -1;
}

/* ---- local vectors ---- */

/* The chunk vectors of the local model are stored whole in vec_matrix, in
 * chunk id order and stamped with the chunk list they belong to, in parts of
 * MATRIX_PART rows, as the cache holds them: a part is its rows' 1 / norm
 * (floats), then their signed bytes (the quantised vectors, vec_local_quantise,
 * without the scale), interleaved in blocks as rank_local reads them; a
 * process reads them in a few blob reads and copies. They are written in the
 * transaction that stores the model (vec_term_blocks, vec_models), so a stored
 * model always has its matrix; stale parts (another stamp) are never read.
 * The table is created on first write. The model name says the layout. */
#define MATRIX_PART 4096   /* a multiple of DENSE_BLOCK: a part holds whole blocks */
#define MATRIX_ROW (sizeof(float) + VEC_LOCAL_DIM)
#define MATRIX_MODEL VEC_LOCAL_MODEL "/q8blocks8"

#define DENSE_BLOCK 8      /* rows whose dot products are taken side by side (rank_local) */

/* Sets row i of c's local vectors from a quantised vector (VEC_LOCAL_QBYTES). */
static void local_set_row(struct semantic_cache *c, size_t i, const unsigned char *stored)
{
    const signed char *b = (const signed char *)stored + 4;
    long long ss = 0;
    for (int k = 0; k < VEC_LOCAL_DIM; k++) ss += (long long)b[k] * b[k];
    c->local_inv[i] = ss > 0 ? (float)(1.0 / sqrt((double)ss)) : 0.0f;
    size_t i0 = i - i % DENSE_BLOCK;
    signed char *m = c->local + i0 * VEC_LOCAL_DIM;
    if (i0 + DENSE_BLOCK <= c->n)
        for (int k = 0; k < VEC_LOCAL_DIM; k++) m[(size_t)k * DENSE_BLOCK + i % DENSE_BLOCK] = b[k];
    else
        memcpy(m + (i % DENSE_BLOCK) * VEC_LOCAL_DIM, b, VEC_LOCAL_DIM);
}

static void local_alloc(struct semantic_cache *c)
{
    c->local_bytes = c->n * VEC_LOCAL_DIM;
    c->local = xcalloc_large(c->local_bytes);
    c->local_inv = xcalloc(c->n ? c->n : 1, sizeof *c->local_inv);
}

/* A stamp of the index read without its chunk list: the files (their ids,
 * paths and content hashes), the version and summary of the index, and the
 * count and largest id of the chunks. fit_save records it next to the
 * chunk list's stamp, so that setup can tell the stored vectors are current
 * without reading every chunk. It only decides whether setup fits now: each
 * connection's first query still checks the chunk list's own stamp. */
static int quick_stamp(sqlite3 *db, char out[96])
{
    return linepost_index_stamp(db, "SELECT count(*) || ':' || coalesce(max(id), 0) FROM chunk_spans", out, 96);
}

/* 1 when sql, its parameters bound to a, b and c (NULL: fewer), returns a row. */
static int row_exists(sqlite3 *db, const char *sql, const char *a, const char *b, const char *c)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return 0;   /* no such table yet */
    const char *v[] = {a, b, c};
    for (int i = 0; i < 3 && v[i]; i++) sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    int ok = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return ok;
}

/* 1 when the vectors stored whole were recorded with quick stamp q and are
 * those of the stored model. */
static int matrix_current(sqlite3 *db, const char *q)
{
    return row_exists(db, "SELECT 1 FROM vec_matrix_quick k JOIN vec_models m ON m.model = ?1 AND m.stamp = k.stamp "
                          "WHERE k.model = ?2 AND k.quick = ?3 AND EXISTS (SELECT 1 FROM vec_matrix x "
                          "WHERE x.model = ?2 AND x.stamp = k.stamp)", VEC_LOCAL_MODEL, MATRIX_MODEL, q);
}

/* 1 when vec_matrix holds vectors of this layout for the chunk list of stamp. */
static int matrix_stored(sqlite3 *db, const char *stamp)
{
    return row_exists(db, "SELECT 1 FROM vec_matrix WHERE model = ?1 AND stamp = ?2", MATRIX_MODEL, stamp, NULL);
}

/* Records the quick stamp of the index as w sees it, in w's write
 * transaction, when its chunk list is still the one of stamp. -1 when the
 * table cannot be written. */
static int quick_record_on(sqlite3 *w, const char *stamp)
{
    char q[96], now[17];
    if (quick_stamp(w, q) || read_chunks(w, NULL, now, NULL, 0) || strcmp(now, stamp)) return 0;
    sqlite3_stmt *k = NULL;
    int ok = sqlite3_exec(w, "CREATE TABLE IF NOT EXISTS vec_matrix_quick(model TEXT PRIMARY KEY, quick TEXT NOT NULL, "
                             "stamp TEXT NOT NULL)", NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(w, "INSERT OR REPLACE INTO vec_matrix_quick(model, quick, stamp) VALUES(?1, ?2, ?3)",
                                -1, &k, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(k, 1, MATRIX_MODEL, -1, SQLITE_STATIC);
        sqlite3_bind_text(k, 2, q, -1, SQLITE_STATIC);
        sqlite3_bind_text(k, 3, stamp, -1, SQLITE_STATIC);
        ok = sqlite3_step(k) == SQLITE_DONE;
    }
    sqlite3_finalize(k);
    return ok ? 0 : -1;
}

/* The same in a transaction of its own, through a writable connection. */
static void quick_record(sqlite3 *db, const char *stamp)
{
    sqlite3 *w = sqlx_writer_open(db);
    if (!w) return;
    if (sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK)
        sqlite3_exec(w, quick_record_on(w, stamp) == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    sqlx_writer_close(db, w);
}

/* Hands each stored part of the matrix of c->stamp to fn in order: its first
 * row, its row count and its bytes (want scales, then want rows of
 * VEC_LOCAL_DIM signed bytes; not aligned). 1 when the parts were whole and
 * covered c's n chunks. */
static int matrix_each(sqlite3 *db, const struct semantic_cache *c,
                       void (*fn)(void *ctx, size_t row, size_t want, const unsigned char *q), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT part, rows FROM vec_matrix WHERE model = ?1 AND stamp = ?2 "
                               "ORDER BY part", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, MATRIX_MODEL, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->stamp, -1, SQLITE_STATIC);
    size_t rows = 0, nparts = (c->n + MATRIX_PART - 1) / MATRIX_PART;
    long long part = 0;
    int ok = 1;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        size_t want = c->n - rows < MATRIX_PART ? c->n - rows : MATRIX_PART;
        const unsigned char *q = sqlite3_column_blob(st, 1);
        if (sqlite3_column_int64(st, 0) != part || (size_t)sqlite3_column_bytes(st, 1) != want * MATRIX_ROW) {
            ok = 0;
            break;
        }
        fn(ctx, rows, want, q);
        rows += want;
        part++;
    }
    sqlite3_finalize(st);
    return ok && (size_t)part == nparts && rows == c->n;
}

static void load_part(void *ctx, size_t row, size_t want, const unsigned char *q)
{
    struct semantic_cache *c = ctx;
    memcpy(c->local_inv + row, q, want * sizeof(float));
    memcpy(c->local + row * VEC_LOCAL_DIM, q + want * sizeof(float), want * VEC_LOCAL_DIM);
}

/* Reads the matrix of c->stamp into c's local vectors (allocated); 1 when complete. */
static int matrix_load(sqlite3 *db, struct semantic_cache *c) { return matrix_each(db, c, load_part, c); }

/* Stores the fit f as the model of c->stamp and c's local vectors (set from
 * f) as the matrix, inside w's write transaction; -1 with a message. */
static int fit_save_on(sqlite3 *w, const struct semantic_cache *c, const struct vec_local_fit *f, char *err,
                       size_t errlen)
{
    sqlite3_stmt *ins = NULL;
    if (sqlite3_exec(w, "CREATE TABLE IF NOT EXISTS vec_matrix(model TEXT NOT NULL, stamp TEXT NOT NULL, "
                        "part INTEGER NOT NULL, rows BLOB NOT NULL, PRIMARY KEY(model, part))",
                     NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot store local vectors: %s", sqlite3_errmsg(w));
        return -1;
    }
    unsigned char *part_buf = xmalloc(MATRIX_PART * MATRIX_ROW);
    int ok = vec_local_save_on(w, f, c->stamp, err, errlen) == 0;
    /* one matrix at a time: any other (stamp, layout) is stale */
    ok = ok && sqlite3_exec(w, "DELETE FROM vec_matrix", NULL, NULL, NULL) == SQLITE_OK &&
         quick_record_on(w, c->stamp) == 0 &&
         sqlite3_prepare_v2(w, "INSERT INTO vec_matrix(model, stamp, part, rows) VALUES(?1, ?2, ?3, ?4)", -1, &ins,
                            NULL) == SQLITE_OK;
    for (size_t r = 0, part = 0; ok && r < c->n; r += MATRIX_PART, part++) {
        size_t nr = c->n - r < MATRIX_PART ? c->n - r : MATRIX_PART;
        sqlite3_bind_text(ins, 1, MATRIX_MODEL, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 2, c->stamp, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 3, (sqlite3_int64)part);
        memcpy(part_buf, c->local_inv + r, nr * sizeof(float));
        memcpy(part_buf + nr * sizeof(float), c->local + r * VEC_LOCAL_DIM, nr * VEC_LOCAL_DIM);
        sqlite3_bind_blob64(ins, 4, part_buf, nr * MATRIX_ROW, SQLITE_STATIC);
        ok = sqlite3_step(ins) == SQLITE_DONE;
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    free(part_buf);
    if (!ok && !*err) snprintf(err, errlen, "cannot store local vectors: %s", sqlite3_errmsg(w));
    return ok ? 0 : -1;
}

/* The same in one transaction of its own on w. */
static int fit_save(sqlite3 *w, const struct semantic_cache *c, const struct vec_local_fit *f, char *err, size_t errlen)
{
    if (sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot store local vectors: %s", sqlite3_errmsg(w));
        return -1;   /* another process is writing the index: kept in memory only */
    }
    int ok = fit_save_on(w, c, f, err, errlen) == 0;
    if (sqlite3_exec(w, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK && ok) {
        snprintf(err, errlen, "cannot store local vectors: %s", sqlite3_errmsg(w));
        sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL);
        ok = 0;
    }
    return ok ? 0 : -1;
}

/* 1 when f's chunks are c's, in the same (id) order. */
static int fit_aligned(const struct semantic_cache *c, const struct vec_local_fit *f)
{
    int aligned = f->n == c->n;
    for (size_t i = 0; aligned && i < c->n; i++) aligned = f->ids[i] == c->chunks[i].id;
    return aligned;
}

/* Sets c's local vectors from the fit's chunk vectors, as they are stored:
 * a connection that fits ranks as those that read them. */
static void local_from_fit(struct semantic_cache *c, struct vec_local_fit *f)
{
    local_alloc(c);
    for (size_t i = 0; i < c->n; i++) local_set_row(c, i, f->qvecs + i * VEC_LOCAL_QBYTES);
    free(f->qvecs);
    f->qvecs = NULL;
}

int semantic_store_fit_on(sqlite3 *w, struct vec_local_fit *f, char *err, size_t errlen)
{
    struct semantic_cache *c = semantic_cache_new(w);
    int rc = -1;
    if (cache_refresh(w, c, err, errlen)) goto out;
    if (!fit_aligned(c, f)) {
        snprintf(err, errlen, "cannot store local vectors: the chunks fitted are not the index's (%zu fitted, %zu "
                 "in the index)", f->n, c->n);
        goto out;
    }
    local_from_fit(c, f);
    rc = fit_save_on(w, c, f, err, errlen);
out:
    semantic_cache_free(c);
    return rc;
}

/* Loads the stored chunk vectors when the stored model matches the stamp;
 * otherwise fits the model and stores it (or keeps it in memory when the
 * database cannot be written). */
static int local_ensure(sqlite3 *db, struct semantic_cache *c, char *err, size_t errlen)
{
    if (c->local) return 0;
    long long ndocs = 0;
    if (vec_local_stored(db, c->stamp, &ndocs)) {
        local_alloc(c);
        if (matrix_load(db, c)) {
            c->local_ndocs = ndocs;
            return 0;
        }
        /* no matrix of this chunk list (an index of an earlier layout): refit below */
        local_free(c);
    }
    struct vec_local_fit *f = xcalloc(1, sizeof *f);
    if (vec_local_fit(db, f, err, errlen)) {
        free(f);
        return -1;
    }
    /* the fit read the chunks in id order, as the cache did */
    if (!fit_aligned(c, f)) {
        /* the index changed between the two reads: the next query starts over */
        vec_local_fit_free(f);
        free(f);
        c->stamp[0] = 0;
        snprintf(err, errlen, "the index changed while local vectors were computed; try again");
        return -1;
    }
    local_from_fit(c, f);
    /* an unwritable or busy database keeps the model in memory for this connection */
    char e2[256] = "";
    sqlite3 *w = sqlx_writer_open(db);
    int saved = w && fit_save(w, c, f, e2, sizeof e2) == 0;
    if (w && !saved) log_msg("semantic: %s", e2);
    sqlx_writer_close(db, w);
    c->local_ndocs = f->ndocs;
    if (saved) {
        vec_local_fit_free(f);
        free(f);
        c->total_changes = sqlite3_total_changes(db);
        c->data_version = sqlx_data_version(db);
    } else {
        c->local_fit = f;   /* query terms are looked up in memory */
    }
    return 0;
}

/* Makes the local model of c's chunks known: the stored one when it has its
 * matrix (local_stored: the vectors are read when scored), else as
 * local_ensure loads or fits it. */
static int local_model(sqlite3 *db, struct semantic_cache *c, char *err, size_t errlen)
{
    if (c->local || c->local_stored) return 0;
    long long ndocs = 0;
    if (vec_local_stored(db, c->stamp, &ndocs) && matrix_stored(db, c->stamp)) {
        c->local_stored = 1;
        c->local_ndocs = ndocs;
        return 0;
    }
    return local_ensure(db, c, err, errlen);
}

/* ---- remote vectors ---- */

static void normalise_vec(float *v, int dim)
{
    double n = 0;
    for (int i = 0; i < dim; i++) n += (double)v[i] * v[i];
    if (n > 0)
        for (int i = 0; i < dim; i++) v[i] = (float)(v[i] / sqrt(n));
}

/* Embeds texts[0..n) through r; checks the dimension against *dim (0: first
 * call sets it) and normalises. Returns a malloc'd n * dim array or NULL + err. */
static float *remote_embed(const struct semantic_remote *r, const char *const *texts, size_t n, int *dim,
                           char *err, size_t errlen)
{
    float *v = NULL;
    int d = 0;
    char e2[512] = "";
    if (r->fn(r->cfg, texts, n, &v, &d, e2, sizeof e2) != 0 || !v || d <= 0) {
        snprintf(err, errlen, "remote embeddings (model '%s') failed: %s", r->model, *e2 ? e2 : "no vectors returned");
        free(v);
        return NULL;
    }
    if (*dim && d != *dim) {
        snprintf(err, errlen, "remote embedding model '%s' returned %d dimensions, earlier %d; "
                 "the embeddings cache has mixed vectors for this model name", r->model, d, *dim);
        free(v);
        return NULL;
    }
    *dim = d;
    for (size_t i = 0; i < n; i++) normalise_vec(v + i * (size_t)d, d);
    return v;
}

/* The cached vectors of model for chunk texts the index no longer holds are
 * kept for a text that comes back (a branch switched back, an edit undone),
 * at most as many as the index has chunks (live): the oldest go first, so
 * that a tree edited for months does not grow the cache without end. Best
 * effort: a failure is logged. */
static void prune_stale(sqlite3 *w, const char *model, size_t live)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w, "DELETE FROM embeddings WHERE rowid IN (SELECT rowid FROM embeddings WHERE model = ?1 "
                              "AND hash NOT IN (SELECT hash FROM chunk_spans) ORDER BY rowid LIMIT max(0, (SELECT "
                              "count(*) FROM embeddings WHERE model = ?1 AND hash NOT IN (SELECT hash FROM "
                              "chunk_spans)) - ?2))", -1, &st, NULL) != SQLITE_OK) {
        log_msg("semantic: cannot prune the embeddings cache: %s", sqlite3_errmsg(w));
        return;
    }
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)live);
    if (sqlite3_step(st) != SQLITE_DONE) log_msg("semantic: cannot prune the embeddings cache: %s", sqlite3_errmsg(w));
    else if (sqlite3_changes(w)) log_msg("semantic: %d stale vectors of '%s' dropped", sqlite3_changes(w), model);
    sqlite3_finalize(st);
}

/* Fills the cache's remote matrix: stored vectors by (hash, model) first, the
 * rest embedded in batches and stored. */
static int remote_ensure(sqlite3 *db, struct semantic_cache *c, const struct semantic_remote *r, char *err, size_t errlen)
{
    if (c->remote && c->remote_model && !strcmp(c->remote_model, r->model)) return 0;
    free(c->remote);
    free(c->remote_model);
    c->remote = NULL;
    c->remote_model = NULL;
    int dim = 0;
    float **rows = xcalloc(c->n + 1, sizeof *rows);   /* per chunk, owned here until the matrix is built */
    size_t *missing = xcalloc(c->n + 1, sizeof *missing), nmiss = 0;
    sqlite3_stmt *st;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "SELECT dim, vec FROM embeddings WHERE hash = ?1 AND model = ?2", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the embeddings cache: %s", sqlite3_errmsg(db));
        goto out;
    }
    sqlite3_bind_text(st, 2, r->model, -1, SQLITE_STATIC);
    for (size_t i = 0; i < c->n; i++) {
        sqlite3_bind_text(st, 1, chunk_hash(c, i), -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            int d = sqlite3_column_int(st, 0);
            if (d > 0 && (!dim || d == dim) && sqlite3_column_bytes(st, 1) == d * (int)sizeof(float)) {
                dim = d;
                rows[i] = xmalloc((size_t)d * sizeof(float));
                memcpy(rows[i], sqlite3_column_blob(st, 1), (size_t)d * sizeof(float));
            }
        }
        sqlite3_reset(st);
        if (!rows[i]) missing[nmiss++] = i;
    }
    sqlite3_finalize(st);
    if (nmiss) {
        sqlite3_stmt *txt = NULL, *ins = NULL;
        sqlite3 *w = sqlx_writer_open(db);
        if (sqlite3_prepare_v2(db, "SELECT substr(text, 1, ?2) FROM chunks WHERE id = ?1", -1, &txt, NULL) != SQLITE_OK) {
            snprintf(err, errlen, "cannot read chunk text: %s", sqlite3_errmsg(db));
            sqlx_writer_close(db, w);
            goto out;
        }
        sqlite3_bind_int(txt, 2, SEMANTIC_EMBED_TEXT_MAX);
        if (w && sqlite3_prepare_v2(w, "INSERT OR REPLACE INTO embeddings(hash, model, dim, vec) VALUES(?1, ?2, ?3, ?4)",
                                    -1, &ins, NULL) != SQLITE_OK)
            ins = NULL;
        for (size_t b = 0; b < nmiss; b += SEMANTIC_EMBED_BATCH) {
            size_t nb = nmiss - b < SEMANTIC_EMBED_BATCH ? nmiss - b : SEMANTIC_EMBED_BATCH;
            char *texts[SEMANTIC_EMBED_BATCH];
            int trc = SQLITE_ROW;
            for (size_t j = 0; j < nb; j++) {
                sqlite3_bind_int64(txt, 1, c->chunks[missing[b + j]].id);
                int r1 = sqlite3_step(txt);
                const char *t = r1 == SQLITE_ROW ? (const char *)sqlite3_column_text(txt, 0) : NULL;
                if (r1 != SQLITE_ROW && r1 != SQLITE_DONE && trc == SQLITE_ROW) {
                    trc = r1;   /* a text that cannot be read: nothing is embedded in its place */
                    snprintf(err, errlen, "cannot read chunk text: %s", sqlite3_errmsg(db));
                }
                texts[j] = xstrdup(t && *t ? t : " ");
                sqlite3_reset(txt);
            }
            if (trc != SQLITE_ROW) {
                for (size_t j = 0; j < nb; j++) free(texts[j]);
                sqlite3_finalize(txt);
                sqlite3_finalize(ins);
                sqlx_writer_close(db, w);
                goto out;
            }
            float *v = remote_embed(r, (const char *const *)texts, nb, &dim, err, errlen);
            for (size_t j = 0; j < nb; j++) free(texts[j]);
            if (!v) {
                sqlite3_finalize(txt);
                sqlite3_finalize(ins);
                sqlx_writer_close(db, w);
                goto out;
            }
            if (ins) sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL);
            for (size_t j = 0; j < nb; j++) {
                size_t i = missing[b + j];
                rows[i] = xmalloc((size_t)dim * sizeof(float));
                memcpy(rows[i], v + j * (size_t)dim, (size_t)dim * sizeof(float));
                if (ins) {
                    sqlite3_bind_text(ins, 1, chunk_hash(c, i), -1, SQLITE_STATIC);
                    sqlite3_bind_text(ins, 2, r->model, -1, SQLITE_STATIC);
                    sqlite3_bind_int(ins, 3, dim);
                    sqlite3_bind_blob(ins, 4, rows[i], dim * (int)sizeof(float), SQLITE_STATIC);
                    sqlite3_step(ins);
                    sqlite3_reset(ins);
                }
            }
            if (ins) sqlite3_exec(w, "COMMIT", NULL, NULL, NULL);
            free(v);
        }
        sqlite3_finalize(txt);
        if (ins) prune_stale(w, r->model, c->n);
        sqlite3_finalize(ins);
        sqlx_writer_close(db, w);
        c->total_changes = sqlite3_total_changes(db);
        c->data_version = sqlx_data_version(db);
    }
    c->remote_dim = dim > 0 ? dim : 1;
    c->remote = xcalloc(c->n ? c->n * (size_t)c->remote_dim : 1, sizeof *c->remote);
    for (size_t i = 0; i < c->n; i++)
        if (rows[i]) memcpy(c->remote + i * (size_t)c->remote_dim, rows[i], (size_t)dim * sizeof(float));
    c->remote_model = xstrdup(r->model);
    rc = 0;
out:
    for (size_t i = 0; i < c->n; i++) free(rows[i]);
    free(rows);
    free(missing);
    return rc;
}

/* ---- ranking ---- */

struct cand { long idx; double score; long ord; };   /* ord: c->ord[idx] */

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int eligible(const struct semantic_cache *c, long i, const struct semantic_query *q)
{
    const struct sem_file *f = &c->files[c->chunks[i].file];
    if (q->category == SEMANTIC_IMPLEMENTATION && f->is_test) return 0;
    if (q->category == SEMANTIC_TEST && !f->is_test) return 0;
    return path_matches(q->file_pattern, file_path(c, f));
}

/* Up to NCAND eligible chunks by bm25, best first; score = -bm25 (higher is
 * better). FTS5 returns equal scores in rowid order, so the rows tied with the
 * NCAND-th are all read, and the list is ordered by cmp_cand before it is cut. */
static int rank_bm25(sqlite3 *db, struct semantic_cache *c, const struct semantic_query *q,
                     struct cand *out, size_t *nout, char *err, size_t errlen)
{
    *nout = 0;
    struct cand *v = NULL;
    size_t nv = 0, cap = 0;
    char *match = bm25_match(db, c, q->text);
    if (!match) return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
            "SELECT rowid, bm25(chunks_fts, " BM25_WEIGHTS ") AS r FROM chunks_fts "
            "WHERE chunks_fts MATCH ?1 ORDER BY r", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot search the index: %s", sqlite3_errmsg(db));
        free(match);
        return -1;
    }
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        double score = -sqlite3_column_double(st, 1);
        if (nv >= NCAND && score != v[NCAND - 1].score) break;
        long i = chunk_index(c, sqlite3_column_int64(st, 0));
        if (i < 0 || !eligible(c, i, q)) continue;
        ARRAY_GROW(v, nv, cap, NCAND);
        v[nv++] = (struct cand){i, score, c->ord[i]};
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        snprintf(err, errlen, "cannot search the index for '%s': %s", match, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        free(match);
        free(v);
        return -1;
    }
    sqlite3_finalize(st);
    free(match);
    if (nv) qsort(v, nv, sizeof *v, cmp_cand);
    *nout = nv < NCAND ? nv : NCAND;
    if (*nout) memcpy(out, v, *nout * sizeof *out);
    free(v);
    return 0;
}

/* A min-heap of the best NCAND (score, idx). */
static void heap_push(struct cand *h, size_t *n, struct cand x)
{
    if (*n == NCAND) {
        if (cmp_cand(&x, &h[0]) >= 0) return;   /* not better than the worst kept */
        h[0] = x;
        size_t i = 0;
        for (;;) {
            size_t l = 2 * i + 1, r = l + 1, w = i;
            if (l < *n && cmp_cand(&h[l], &h[w]) > 0) w = l;
            if (r < *n && cmp_cand(&h[r], &h[w]) > 0) w = r;
            if (w == i) break;
            struct cand t = h[i]; h[i] = h[w]; h[w] = t;
            i = w;
        }
        return;
    }
    size_t i = (*n)++;
    h[i] = x;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cmp_cand(&h[i], &h[p]) <= 0) break;
        struct cand t = h[i]; h[i] = h[p]; h[p] = t;
        i = p;
    }
}

/* Local vectors are held as signed bytes in blocks of DENSE_BLOCK rows,
 * interleaved (the k-th value of the block's row r at k * DENSE_BLOCK + r),
 * the last n % DENSE_BLOCK rows as rows: a block's dot products then go four
 * rows to a vector operation. Each row's sum is still taken value by value in
 * order, with the same float operations as a plain loop, then scaled by the
 * row's 1 / norm: a row scores the same in a block or alone. */
typedef float dense_v4 __attribute__((vector_size(16)));
typedef signed char dense_c4 __attribute__((vector_size(4)));

/* Scores n rows held as c holds them (local, from a block's start, and
 * their inv) against the question's vector qv into score. */
static void score_block_rows(const signed char *local, const float *inv, size_t n, const float *qv, float *score)
{
    const int dim = VEC_LOCAL_DIM;
    for (size_t i0 = 0; i0 < n; i0 += DENSE_BLOCK) {
        size_t nb = n - i0 < DENSE_BLOCK ? n - i0 : DENSE_BLOCK;
        float s[DENSE_BLOCK] = {0};
        const signed char *v = local + i0 * (size_t)dim;
        if (nb == DENSE_BLOCK) {
            dense_v4 s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
            for (int k = 0; k < dim; k++) {
                dense_v4 x = {qv[k], qv[k], qv[k], qv[k]};
                dense_c4 v0, v1;
                memcpy(&v0, v + (size_t)k * DENSE_BLOCK, sizeof v0);
                memcpy(&v1, v + (size_t)k * DENSE_BLOCK + 4, sizeof v1);
                s0 += __builtin_convertvector(v0, dense_v4) * x;
                s1 += __builtin_convertvector(v1, dense_v4) * x;
            }
            memcpy(s, &s0, sizeof s0);
            memcpy(s + 4, &s1, sizeof s1);
        } else {
            for (size_t r = 0; r < nb; r++)
                for (int k = 0; k < dim; k++) s[r] += (float)v[r * (size_t)dim + (size_t)k] * qv[k];
        }
        for (size_t r = 0; r < nb; r++) score[i0 + r] = s[r] * inv[i0 + r];
    }
}

/* Scores every row of c's local vectors. */
static void score_rows(const struct semantic_cache *c, const float *qv, float *score)
{
    score_block_rows(c->local, c->local_inv, c->n, qv, score);
}

struct score_ctx {
    const float *qv;
    float *score, *inv;   /* inv: one part's scales, aligned */
    const float *qv2;     /* or NULL */
    float *score2;
};

static void score_part(void *ctx, size_t row, size_t want, const unsigned char *q)
{
    struct score_ctx *x = ctx;
    memcpy(x->inv, q, want * sizeof(float));
    score_block_rows((const signed char *)q + want * sizeof(float), x->inv, want, x->qv, x->score + row);
    if (x->qv2) score_block_rows((const signed char *)q + want * sizeof(float), x->inv, want, x->qv2, x->score2 + row);
}

/* Scores every row of the matrix stored for c->stamp, part by part as
 * matrix_load reads it (a part holds whole blocks, so every row is scored
 * as score_rows scores it), without holding the matrix: 1 when every part
 * was there and whole, else 0. qv2 (or NULL): a second vector, scored into
 * score2 in the same pass. */
static int score_stored(sqlite3 *db, const struct semantic_cache *c, const float *qv, float *score, const float *qv2,
                        float *score2)
{
    struct score_ctx x = {qv, score, xmalloc(MATRIX_PART * sizeof(float)), qv2, score2};
    int ok = matrix_each(db, c, score_part, &x);
    free(x.inv);
    return ok;
}

/* Every chunk's score for the question text against the local vectors, kept
 * in c until another question (a search asks the same one several times,
 * with other filters); 0 when the model knows none of its terms. */
static int local_scores(sqlite3 *db, struct semantic_cache *c, const char *text, char *err, size_t errlen)
{
    if (c->dense_text && !strcmp(c->dense_text, text)) return c->dense_known;
    free(c->dense_text);
    c->dense_text = NULL;
    if (c->expect_done && !strcmp(c->expect_done, text)) {
        /* scored when the matrix was streamed for an earlier text */
        free(c->dense_score);
        c->dense_score = c->expect_score;
        c->dense_known = c->expect_known;
        c->dense_text = c->expect_done;
        c->expect_score = NULL;
        c->expect_done = NULL;
        return c->dense_known;
    }
    int stream = !c->local && c->local_stored && !c->local_streamed;
    if (!stream && local_ensure(db, c, err, errlen)) return -1;
    float qv[VEC_LOCAL_DIM], qv2[VEC_LOCAL_DIM];
    c->dense_known = vec_local_embed_query(db, c->local_fit, c->local_ndocs, text, qv);
    if (c->dense_known > 0) {
        if (!c->dense_score) c->dense_score = xmalloc((c->n ? c->n : 1) * sizeof *c->dense_score);
        /* the expected text rides along on the one pass over the stored matrix */
        int ride = stream && c->expect_text && strcmp(c->expect_text, text) && !c->expect_done;
        if (ride) {
            c->expect_known = vec_local_embed_query(db, c->local_fit, c->local_ndocs, c->expect_text, qv2);
            if (c->expect_known > 0) c->expect_score = xmalloc((c->n ? c->n : 1) * sizeof *c->expect_score);
        }
        int two = ride && c->expect_known > 0;
        c->local_streamed |= stream;
        int streamed = stream && score_stored(db, c, qv, c->dense_score, two ? qv2 : NULL, c->expect_score);
        if (ride && streamed) c->expect_done = xstrdup(c->expect_text);
        if (!streamed) {
            if (ride) {   /* this pass was to score it; a later one that reads the matrix does not */
                free(c->expect_score);
                c->expect_score = NULL;
            }
            /* the matrix is incomplete: loaded or fitted again, as a first read would */
            if (local_ensure(db, c, err, errlen)) return -1;
            c->dense_known = vec_local_embed_query(db, c->local_fit, c->local_ndocs, text, qv);
            if (c->dense_known > 0) score_rows(c, qv, c->dense_score);
        }
    }
    c->dense_text = xstrdup(text);
    return c->dense_known;
}

/* The best NCAND eligible chunks by their local scores (local_scores). */
static void rank_local(const struct semantic_cache *c, const struct semantic_query *q, struct cand *out,
                       size_t *nout)
{
    *nout = 0;
    for (size_t i = 0; i < c->n; i++) {
        float sc = c->dense_score[i];
        if (sc <= 0 || !eligible(c, (long)i, q)) continue;
        heap_push(out, nout, (struct cand){(long)i, sc, c->ord[i]});
    }
    qsort(out, *nout, sizeof *out, cmp_cand);
}

/* Remote vectors: float rows, L2-normalised. */
static void rank_dense(const struct semantic_cache *c, const float *m, int dim, const float *qv,
                       const struct semantic_query *q, struct cand *out, size_t *nout)
{
    *nout = 0;
    for (size_t i = 0; i < c->n; i++) {
        const float *v = m + i * (size_t)dim;
        float s = 0;
        for (int k = 0; k < dim; k++) s += v[k] * qv[k];
        if (s <= 0 || !eligible(c, (long)i, q)) continue;
        heap_push(out, nout, (struct cand){(long)i, s, c->ord[i]});
    }
    qsort(out, *nout, sizeof *out, cmp_cand);
}

static double prior(const struct semantic_cache *c, long i, const struct semantic_query *q)
{
    double p = 1.0;
    if (c->chunks[i].kind == KIND_MODULE) p *= PRIOR_MODULE;
    if (c->chunks[i].kind == KIND_TEXT) p *= PRIOR_TEXT;
    if (q->category == SEMANTIC_ANY && c->files[c->chunks[i].file].is_test) p *= PRIOR_TEST;
    return p;
}

/* ---- results ---- */

/* Adds a chunk's lines to out; *stp: the statement, prepared on the first
 * call of a search and reset after each (the caller finalizes it). */
static int add_span(sqlite3 *db, sqlite3_stmt **stp, int64_t chunk_id, double score, struct evidence *out, char *err,
                    size_t errlen)
{
    if (!*stp && sqlite3_prepare_v2(db,
            "SELECT c.start_line, c.end_line, c.kind, s.qualname, f.path, drqa_file_text(f.id, f.hash, f.ztext, f.tlen) "
            "FROM chunk_spans c "
            "JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol_id WHERE c.id = ?1",
            -1, stp, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read a chunk: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_stmt *st = *stp;
    sqlite3_bind_int64(st, 1, chunk_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE)
            snprintf(err, errlen, "chunk %lld vanished from the index during the search", (long long)chunk_id);
        else
            snprintf(err, errlen, "cannot read a chunk: %s", sqlite3_errmsg(db));
        sqlite3_reset(st);
        return -1;
    }
    int a = sqlite3_column_int(st, 0), b = sqlite3_column_int(st, 1);
    const char *qual = (const char *)sqlite3_column_text(st, 3);
    const char *path = (const char *)sqlite3_column_text(st, 4);
    const char *text = (const char *)sqlite3_column_text(st, 5);
    if (!text) text = "";
    /* lines a..b of the file */
    const char *s = text;
    for (int line = 1; line < a && s; line++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    struct buf t = BUF_INIT;
    int elided = 0;
    if (s) {
        const char *e = s;
        for (int line = a; line <= b && *e; line++) {
            const char *nl = strchr(e, '\n');
            const char *next = nl ? nl + 1 : e + strlen(e);
            if ((size_t)(next - s) > TEXT_MAX) { elided = 1; break; }
            e = next;
        }
        size_t len = (size_t)(e - s);
        while (len && (s[len - 1] == '\n' || s[len - 1] == '\r')) len--;
        buf_add(&t, s, len);
    }
    char label[64];
    const char *ck = (const char *)sqlite3_column_text(st, 2);
    if (!qual || !*qual)
        snprintf(label, sizeof label, "%s lines %d-%d", ck && !strcmp(ck, "text") ? "text" : "module", a, b);
    struct evidence_span *sp = evidence_add(out, path ? path : "", a, b, buf_str(&t),
                                            qual && *qual ? qual : label, score);
    sp->elided = elided;
    buf_free(&t);
    sqlite3_reset(st);
    return 0;
}

static int remote_valid(const struct semantic_remote *r, char *err, size_t errlen)
{
    if (r && (!r->fn || !r->model || !*r->model)) {
        snprintf(err, errlen, "remote embeddings need a client and a model name (--embed-model)");
        return 0;
    }
    return 1;
}

int semantic_prepare(struct semantic_cache *c, const struct semantic_remote *remote, char *err, size_t errlen)
{
    if (!remote_valid(remote, err, errlen)) return -1;
    sqlite3 *db = c->db;
    if (!remote && !c->stamp[0]) {
        /* stored vectors of the current chunks are read by the first query
         * of each connection; reading them (or keeping the chunk list) here
         * too would do it twice: only the stamp is computed */
        char stamp[17], q[96];
        long long ndocs;
        if (quick_stamp(db, q) == 0 && matrix_current(db, q)) return 0;
        if (read_chunks(db, NULL, stamp, err, errlen)) return -1;
        if (vec_local_stored(db, stamp, &ndocs) && matrix_stored(db, stamp)) {
            quick_record(db, stamp);   /* for the next process */
            return 0;
        }
    }
    if (remote) want_hashes(c);
    if (cache_refresh(db, c, err, errlen)) return -1;
    if (remote) return remote_ensure(db, c, remote, err, errlen);
    return local_ensure(db, c, err, errlen);
}

int semantic_search(struct semantic_cache *c, const struct semantic_query *q, struct evidence *out, char *err,
                    size_t errlen)
{
    sqlite3 *db = c->db;
    if (!q->text || !*q->text) {
        snprintf(err, errlen, "SemanticSearch needs a query: say in words what the code does or is about");
        return -1;
    }
    if (!remote_valid(q->remote, err, errlen)) return -1;
    if (q->file_pattern && !fpattern_valid(q->file_pattern, err, errlen)) return -1;
    int top_k = q->top_k <= 0 ? SEMANTIC_DEFAULT_TOP_K : q->top_k > SEMANTIC_MAX_TOP_K ? SEMANTIC_MAX_TOP_K : q->top_k;
    if (q->remote) want_hashes(c);
    if (cache_refresh(db, c, err, errlen)) return -1;

    struct cand bm[NCAND], dn[NCAND];
    size_t nbm = 0, ndn = 0;
    if (q->mode != SEMANTIC_DENSE && rank_bm25(db, c, q, bm, &nbm, err, errlen)) return -1;
    if (q->mode != SEMANTIC_BM25 && q->remote) {
        if (remote_ensure(db, c, q->remote, err, errlen)) return -1;
        int dim = c->n ? c->remote_dim : 0;
        float *qv = remote_embed(q->remote, &q->text, 1, &dim, err, errlen);
        if (!qv) return -1;
        rank_dense(c, c->remote, dim, qv, q, dn, &ndn);
        free(qv);
    } else if (q->mode != SEMANTIC_BM25) {
        if (local_model(db, c, err, errlen)) return -1;
        int known = local_scores(db, c, q->text, err, errlen);
        if (known < 0) return -1;
        if (known > 0) rank_local(c, q, dn, &ndn);
    }

    /* fuse: a chunk may appear in both lists */
    struct cand all[2 * NCAND];
    size_t n = 0;
    if (q->mode == SEMANTIC_HYBRID) {
        for (int l = 0; l < 2; l++) {
            const struct cand *v = l ? dn : bm;
            size_t nv = l ? ndn : nbm;
            for (size_t r = 0; r < nv; r++) {
                double s = 1.0 / (RRF_K + (double)(r + 1));
                size_t j = 0;
                while (j < n && all[j].idx != v[r].idx) j++;
                if (j == n) all[n++] = (struct cand){v[r].idx, 0, v[r].ord};
                all[j].score += s;
            }
        }
    } else {
        const struct cand *v = q->mode == SEMANTIC_BM25 ? bm : dn;
        n = q->mode == SEMANTIC_BM25 ? nbm : ndn;
        memcpy(all, v, n * sizeof *all);
    }
    for (size_t j = 0; j < n; j++) all[j].score *= prior(c, all[j].idx, q);
    qsort(all, n, sizeof *all, cmp_cand);
    if (n > (size_t)top_k) n = (size_t)top_k;
    size_t before = out->n;
    sqlite3_stmt *span_st = NULL;
    int rc = 0;
    for (size_t j = 0; j < n && !rc; j++)
        rc = add_span(db, &span_st, c->chunks[all[j].idx].id, all[j].score, out, err, errlen);
    sqlite3_finalize(span_st);
    return rc ? -1 : (int)(out->n - before);
}
