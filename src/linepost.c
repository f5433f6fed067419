/*
 * linepost: line postings of the index's files (see linepost.h).
 *
 * Encoding. lp_terms.post is a run of varints, three per line holding the
 * term: the file's ord minus the previous posting's, the line minus the
 * previous posting's line when the ord is the same (else the line itself),
 * and the count. lp_meta holds 'stamp' (text), 'file_id' (int64 per ord,
 * little-endian), 'nlines' (varint per ord) and 'lens' (varint per line).
 */
#include "linepost.h"
#include "sqlx.h"
#include "tok.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Changing the tokenisation or the encoding must change this: postings of
 * another format then never match. */
#define LP_FORMAT "lp1"

/* ---- varints ---- */

static void put_varint(struct buf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        t[n++] = (unsigned char)(c | (v ? 0x80 : 0));
    } while (v);
    buf_add(b, (const char *)t, n);
}

/* Reads one varint from *p (< end); -1 when truncated or too long. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* ---- the stamp of the files ---- */

/* A connection's last stamp, kept while nothing can have changed its files
 * since: no commit by another connection (PRAGMA data_version, read before
 * the files), no change of its own (sqlite3_total_changes) and none of the
 * schema (PRAGMA schema_version: a table dropped counts no change). A question
 * takes the stamp several times (postings, caches), and each is a read of
 * every file's row. The memo lives as long as its connection: it is the
 * user data of a function registered on it, freed when it closes, so a
 * later connection at the same address never finds it. */
struct stamp_memo {
    sqlite3 *db;
    long long version, schema;
    int changes, valid;
    char stamp[40];
    struct stamp_memo *next;
};

static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static struct stamp_memo *memos;

static void memo_gone(void *p)
{
    pthread_mutex_lock(&memo_mu);
    for (struct stamp_memo **m = &memos; *m; m = &(*m)->next)
        if (*m == p) {
            *m = (*m)->next;
            break;
        }
    pthread_mutex_unlock(&memo_mu);
    free(p);
}

static void memo_fn(sqlite3_context *c, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    sqlite3_result_null(c);
}

/* db's memo, registered on first use; NULL when it cannot be. */
static struct stamp_memo *memo_of(sqlite3 *db)
{
    pthread_mutex_lock(&memo_mu);
    struct stamp_memo *m = memos;
    while (m && m->db != db) m = m->next;
    pthread_mutex_unlock(&memo_mu);
    if (m) return m;
    m = xcalloc(1, sizeof *m);
    m->db = db;
    if (sqlite3_create_function_v2(db, "drqa_stamp_memo", 0, SQLITE_UTF8, m, memo_fn, NULL, NULL, memo_gone) !=
        SQLITE_OK)
        return NULL;   /* sqlite called memo_gone on m */
    pthread_mutex_lock(&memo_mu);
    m->next = memos;
    memos = m;
    pthread_mutex_unlock(&memo_mu);
    return m;
}

static int versions(sqlite3 *db, long long *data, long long *schema)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT d.data_version, s.schema_version FROM pragma_data_version d, "
                           "pragma_schema_version s", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int ok = sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *data = sqlite3_column_int64(st, 0);
        *schema = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

static int files_stamp_read(sqlite3 *db, char out[40]);

int linepost_files_stamp(sqlite3 *db, char out[40])
{
    struct stamp_memo *m = memo_of(db);
    long long version = 0, schema = 0;
    int changes = sqlite3_total_changes(db);
    if (!m || versions(db, &version, &schema)) return files_stamp_read(db, out);
    pthread_mutex_lock(&memo_mu);
    int hit = m->valid && m->version == version && m->schema == schema && m->changes == changes;
    if (hit) memcpy(out, m->stamp, sizeof m->stamp);
    pthread_mutex_unlock(&memo_mu);
    if (hit) return 0;
    if (files_stamp_read(db, out)) return -1;
    pthread_mutex_lock(&memo_mu);
    memcpy(m->stamp, out, sizeof m->stamp);
    m->version = version;
    m->schema = schema;
    m->changes = changes;
    m->valid = 1;
    pthread_mutex_unlock(&memo_mu);
    return 0;
}

static int files_stamp_read(sqlite3 *db, char out[40])
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, path, hash FROM files ORDER BY path", -1, &st, NULL) != SQLITE_OK)
        return -1;
    uint64_t h = 0xcbf29ce484222325ULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *p = (const char *)sqlite3_column_text(st, 1), *x = (const char *)sqlite3_column_text(st, 2);
        uint64_t parts[3] = {(uint64_t)id, hash64(p ? p : "", p ? strlen(p) : 0), hash64(x ? x : "", x ? strlen(x) : 0)};
        uint64_t v = hash64(parts, sizeof parts);
        h = (h ^ v) * 0x100000001b3ULL + (v >> 7);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return -1;
    char hex[17];
    hash64_hex(h, hex);
    snprintf(out, 40, "%s:%s", LP_FORMAT, hex);
    return 0;
}

static int mix_rows(sqlite3 *db, const char *sql, uint64_t *h)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        uint64_t x = hash64(v ? v : "", v ? strlen(v) : 0);
        *h = (*h ^ x) * 0x100000001b3ULL + (x >> 7);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int linepost_index_stamp(sqlite3 *db, const char *extra_sql, char *out, size_t outlen)
{
    char fs[40];
    if (linepost_files_stamp(db, fs)) return -1;
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    if (mix_rows(db, "SELECT key || '=' || value FROM meta WHERE key IN ('drqa_version', 'grammars', 'summary') "
                     "ORDER BY key", &h) ||
        (extra_sql && mix_rows(db, extra_sql, &h)))
        return -1;
    char hex[17];
    hash64_hex(h, hex);
    snprintf(out, outlen, "%s:%s", fs, hex);
    return 0;
}

/* The stored stamp matches: 1; else 0 (also when nothing is stored). */
static int stamp_stored(sqlite3 *db, const char *stamp)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT value FROM lp_meta WHERE key = 'stamp'", -1, &st, NULL) != SQLITE_OK) return 0;
    int ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
             !strcmp((const char *)sqlite3_column_text(st, 0), stamp);
    sqlite3_finalize(st);
    return ok;
}

/* ---- building ---- */

struct term {
    char *s;
    uint32_t n;
    uint32_t pf, pl, pc;    /* pending posting: ord, line, count (pc 0: none) */
    uint32_t wf, wl;        /* the last one written */
    int written;
    struct buf post;
};

struct build {
    struct term *t;
    size_t nt, cap;
    uint32_t *slot;         /* open addressing: term index + 1, 0 empty */
    size_t nslot;
    uint32_t ord, line, count;   /* where terms are being read */
};

static void flush_term(struct term *t)
{
    if (!t->pc) return;
    put_varint(&t->post, t->written ? t->pf - t->wf : t->pf);
    put_varint(&t->post, t->written && t->pf == t->wf ? t->pl - t->wl : t->pl);
    put_varint(&t->post, t->pc);
    t->wf = t->pf;
    t->wl = t->pl;
    t->written = 1;
    t->pc = 0;
}

static void grow(struct build *b)
{
    size_t ns = b->nslot ? b->nslot * 2 : 1 << 10;   /* one file's terms, at first */
    uint32_t *s = xcalloc(ns, sizeof *s);
    for (size_t i = 0; i < b->nt; i++) {
        size_t k = hash64(b->t[i].s, b->t[i].n) & (ns - 1);
        while (s[k]) k = (k + 1) & (ns - 1);
        s[k] = (uint32_t)i + 1;
    }
    free(b->slot);
    b->slot = s;
    b->nslot = ns;
}

/* The term s[0..n) of b, added when new. */
static struct term *term_of(struct build *b, const char *s, size_t n)
{
    if (2 * (b->nt + 1) > b->nslot) grow(b);
    size_t k = hash64(s, n) & (b->nslot - 1);
    while (b->slot[k]) {
        struct term *x = &b->t[b->slot[k] - 1];
        if (x->n == n && memcmp(x->s, s, n) == 0) return x;
        k = (k + 1) & (b->nslot - 1);
    }
    ARRAY_GROW(b->t, b->nt, b->cap, 4096);
    struct term *t = &b->t[b->nt];
    memset(t, 0, sizeof *t);
    t->s = xstrndup(s, n);
    t->n = (uint32_t)n;
    t->post = (struct buf)BUF_INIT;
    b->slot[k] = (uint32_t)++b->nt;
    return t;
}

static void on_term(const char *s, size_t n, void *ctx)
{
    struct build *b = ctx;
    b->count++;
    struct term *t = term_of(b, s, n);
    if (t->pc && t->pf == b->ord && t->pl == b->line) {
        t->pc++;
        return;
    }
    flush_term(t);
    t->pf = b->ord;
    t->pl = b->line;
    t->pc = 1;
}

/* Adds the terms of one file's text to b, at b->ord, line by line as
 * qparse_windows counts lines (one per line start), and each line's number
 * of terms to lens; returns the number of lines. */
static uint32_t add_lines(struct build *b, const char *text, size_t len, struct buf *lens)
{
    uint32_t nl = 0;
    for (size_t i = 0; text && i < len;) {
        const char *e = memchr(text + i, '\n', len - i);
        size_t j = e ? (size_t)(e - text) + 1 : len;
        b->line = ++nl;
        b->count = 0;
        tok_each(text + i, j - i, 0, on_term, b);
        put_varint(lens, b->count);
        i = j;
    }
    return nl;
}

static int cmp_term(const void *a, const void *b)
{
    const struct term *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int put_meta(sqlite3 *w, const char *key, const void *v, size_t n, int text)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w, "INSERT OR REPLACE INTO lp_meta(key, value) VALUES(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (text) sqlite3_bind_text(st, 2, v, (int)n, SQLITE_STATIC);
    else sqlite3_bind_blob64(st, 2, n ? v : "", n, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

/* Writes the postings of b and the files' meta data, stamped with stamp,
 * in w's write transaction, unless fail; frees what b, ids, nlines and lens
 * hold. Returns fail, or 1 when the rows could not be written. */
static int write_built(sqlite3 *w, struct build *b, struct buf *ids, struct buf *nlines, struct buf *lens,
                       const char *stamp, int fail)
{
    for (size_t i = 0; i < b->nt; i++) flush_term(&b->t[i]);
    free(b->slot);
    b->slot = NULL;
    if (b->nt) qsort(b->t, b->nt, sizeof *b->t, cmp_term);
    if (!fail)
        fail = sqlite3_exec(w, "CREATE TABLE IF NOT EXISTS lp_meta(key TEXT PRIMARY KEY, value);"
                               /* WITHOUT ROWID: one b-tree, not a table and its key's index */
                               "CREATE TABLE IF NOT EXISTS lp_terms(term TEXT PRIMARY KEY, post BLOB NOT NULL) WITHOUT ROWID;"
                               "DELETE FROM lp_terms; DELETE FROM lp_meta;", NULL, NULL, NULL) != SQLITE_OK;
    sqlite3_stmt *ins = NULL;
    if (!fail && sqlite3_prepare_v2(w, "INSERT INTO lp_terms(term, post) VALUES(?1, ?2)", -1, &ins, NULL) != SQLITE_OK)
        fail = 1;
    for (size_t i = 0; i < b->nt; i++) {
        if (!fail) {
            sqlite3_bind_text(ins, 1, b->t[i].s, (int)b->t[i].n, SQLITE_STATIC);
            sqlite3_bind_blob64(ins, 2, b->t[i].post.data, b->t[i].post.len, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE) fail = 1;
            sqlite3_reset(ins);
        }
        free(b->t[i].s);
        buf_free(&b->t[i].post);
    }
    sqlite3_finalize(ins);
    free(b->t);
    b->t = NULL;
    b->nt = b->cap = 0;
    if (!fail)
        fail = put_meta(w, "file_id", ids->data, ids->len, 0) || put_meta(w, "nlines", nlines->data, nlines->len, 0) ||
               put_meta(w, "lens", lens->data, lens->len, 0) || put_meta(w, "stamp", stamp, strlen(stamp), 1);
    buf_free(ids);
    buf_free(nlines);
    buf_free(lens);
    return fail;
}

/* Reads every file of w in its read transaction (stamp is of that
 * snapshot), then ends it and writes the postings in a write transaction,
 * left open for the caller to commit, when the files are still those read:
 * reading the files does not hold the index's writers back. */
static int build_write(sqlite3 *w, const char *stamp)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w, "SELECT id, drqa_text(ztext, tlen) FROM files ORDER BY path", -1, &st, NULL) != SQLITE_OK)
        return -1;
    struct build b = {0};
    struct buf ids = BUF_INIT, nlines = BUF_INIT, lens = BUF_INIT;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        buf_add(&ids, (const char *)&id, sizeof id);
        const char *text = (const char *)sqlite3_column_text(st, 1);
        put_varint(&nlines, add_lines(&b, text, (size_t)sqlite3_column_bytes(st, 1), &lens));
        b.ord++;
    }
    sqlite3_finalize(st);
    int fail = rc != SQLITE_DONE, current = 0;
    sqlite3_exec(w, "COMMIT", NULL, NULL, NULL);
    if (!fail) {
        char now[40];
        fail = sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK || linepost_files_stamp(w, now) ||
               strcmp(now, stamp) != 0;   /* changed meanwhile: a later question builds them */
        current = !fail && stamp_stored(w, stamp);   /* another process was quicker */
    }
    if (current) fail = 1;
    fail = write_built(w, &b, &ids, &nlines, &lens, stamp, fail);
    return current ? 0 : fail ? -1 : 0;
}

/* ---- building as the files are written ---- */

/* A file's postings (linepost.h): its number of lines, the length and bytes
 * of its lens, its number of terms, then per term its length and bytes and
 * the length and bytes of its postings as a build at ord 0 encodes them. */
void linepost_file_make(const char *text, size_t len, struct linepost_file *out)
{
    struct build b = {0};
    struct buf lens = BUF_INIT;
    out->data = (struct buf)BUF_INIT;
    put_varint(&out->data, add_lines(&b, text, len, &lens));
    put_varint(&out->data, lens.len);
    buf_add(&out->data, lens.data ? lens.data : "", lens.len);
    put_varint(&out->data, b.nt);
    for (size_t i = 0; i < b.nt; i++) {
        struct term *t = &b.t[i];
        flush_term(t);
        put_varint(&out->data, t->n);
        buf_add(&out->data, t->s, t->n);
        put_varint(&out->data, t->post.len);
        buf_add(&out->data, t->post.data ? t->post.data : "", t->post.len);
        free(t->s);
        buf_free(&t->post);
    }
    free(b.t);
    free(b.slot);
    buf_free(&lens);
    buf_fit(&out->data);   /* held until the writer takes it */
}

void linepost_file_free(struct linepost_file *f)
{
    if (f) buf_free(&f->data);
}

struct linepost_builder {
    struct build b;
    struct buf ids, nlines, lens;
    int bad;                /* a file's postings were malformed: nothing is stored */
};

struct linepost_builder *linepost_builder_new(void) { return xcalloc(1, sizeof(struct linepost_builder)); }

/* Reads n bytes at *p (< end) into *s; -1 when truncated. */
static int get_bytes(const unsigned char **p, const unsigned char *end, uint64_t n, const unsigned char **s)
{
    if ((uint64_t)(end - *p) < n) return -1;
    *s = *p;
    *p += n;
    return 0;
}

/* Appends one file's postings to B's, at the next ord. */
static int builder_add(struct linepost_builder *B, const struct linepost_file *f)
{
    struct build *b = &B->b;
    const unsigned char *p = (const unsigned char *)f->data.data, *end = p + f->data.len, *s;
    uint64_t nl, n, nt;
    if (!f->data.len) {
        put_varint(&B->nlines, 0);
        return 0;
    }
    if (get_varint(&p, end, &nl) || get_varint(&p, end, &n) || get_bytes(&p, end, n, &s)) return -1;
    put_varint(&B->nlines, nl);
    buf_add(&B->lens, (const char *)s, n);
    if (get_varint(&p, end, &nt)) return -1;
    for (uint64_t i = 0; i < nt; i++) {
        const unsigned char *post, *q;
        if (get_varint(&p, end, &n) || get_bytes(&p, end, n, &s)) return -1;
        struct term *t = term_of(b, (const char *)s, n);
        if (get_varint(&p, end, &n) || get_bytes(&p, end, n, &post)) return -1;
        /* the file's postings as a build at ord 0 wrote them: (0, line,
         * count), then (0, line step, count) each. In the whole build the
         * first one's ord is this file's step from the term's previous file
         * (a new ord: its line stays whole) and the rest are the same bytes */
        uint64_t o;
        q = post;
        if (!n || get_varint(&q, post + n, &o) || o) return -1;
        put_varint(&t->post, t->written ? b->ord - t->wf : b->ord);
        buf_add(&t->post, (const char *)q, (size_t)(post + n - q));
        t->wf = b->ord;
        t->written = 1;
    }
    return 0;
}

void linepost_builder_add(struct linepost_builder *B, int64_t file_id, const struct linepost_file *f)
{
    buf_add(&B->ids, (const char *)&file_id, sizeof file_id);
    static const struct linepost_file none = {BUF_INIT};
    if (!B->bad && builder_add(B, f ? f : &none)) B->bad = 1;
    B->b.ord++;
}

/* 1 when w's files, in path order, have the ids of ids. */
static int same_files(sqlite3 *w, const struct buf *ids)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w, "SELECT id FROM files ORDER BY path", -1, &st, NULL) != SQLITE_OK) return 0;
    size_t k = 0, n = ids->len / sizeof(int64_t);
    int same = 1;
    while (same && sqlite3_step(st) == SQLITE_ROW) {
        int64_t id;
        if (k < n) memcpy(&id, ids->data + k * sizeof id, sizeof id);
        same = k < n && id == sqlite3_column_int64(st, 0);
        k++;
    }
    sqlite3_finalize(st);
    return same && k == n;
}

int linepost_builder_store_on(struct linepost_builder *B, sqlite3 *w, char *err, size_t errlen)
{
    char stamp[40];
    int fail = B->bad || linepost_files_stamp(w, stamp) || !same_files(w, &B->ids);
    if (fail) snprintf(err, errlen, "the line postings built while indexing are not the index's files'; a question "
                       "builds them");
    if (write_built(w, &B->b, &B->ids, &B->nlines, &B->lens, stamp, fail) && !fail) {
        snprintf(err, errlen, "cannot store the line postings: %s", sqlite3_errmsg(w));
        fail = 1;
    }
    return fail ? -1 : 0;
}

void linepost_builder_free(struct linepost_builder *B)
{
    if (!B) return;
    for (size_t i = 0; i < B->b.nt; i++) {
        free(B->b.t[i].s);
        buf_free(&B->b.t[i].post);
    }
    free(B->b.t);
    free(B->b.slot);
    buf_free(&B->ids);
    buf_free(&B->nlines);
    buf_free(&B->lens);
    free(B);
}

int linepost_current(sqlite3 *db)
{
    char stamp[40];
    return linepost_files_stamp(db, stamp) == 0 && stamp_stored(db, stamp);
}

int linepost_build(sqlite3 *db, char *err, size_t errlen)
{
    char stamp[40];
    if (linepost_files_stamp(db, stamp)) {
        snprintf(err, errlen, "cannot read the files of the index: %s", sqlite3_errmsg(db));
        return -1;
    }
    if (stamp_stored(db, stamp)) return 1;
    sqlite3 *w = sqlx_writer_open(db);
    if (!w) return 0;
    int rc = 0;
    if (sqlite3_exec(w, "BEGIN", NULL, NULL, NULL) == SQLITE_OK) {
        /* the files again, in the snapshot they are read from: another
         * process may have built the postings, or changed the index */
        if (linepost_files_stamp(w, stamp) == 0 && (stamp_stored(w, stamp) || build_write(w, stamp) == 0) &&
            sqlite3_exec(w, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
            rc = 1;
        else
            sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL);
    }
    if (!rc) log_msg("linepost: the index's line postings were not stored: %s", sqlite3_errmsg(w));
    sqlx_writer_close(db, w);
    return rc;
}

/* ---- reading ---- */

struct meta_view { const void *p; size_t len; };

/* The lp_meta value of key, read where sqlite holds it (the postings of
 * every file are megabytes, read by each question twice): the statement to
 * finalize once *v is no longer used, or NULL when there is no such row. */
static sqlite3_stmt *meta_row(sqlite3 *db, const char *key, struct meta_view *v)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT value FROM lp_meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK) return NULL;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        v->p = sqlite3_column_blob(st, 0);
        v->len = (size_t)sqlite3_column_bytes(st, 0);
        if (v->p || !v->len) return st;
    }
    sqlite3_finalize(st);
    return NULL;
}

void linepost_close(struct linepost *lp)
{
    sqlite3_finalize(lp->lens_st);
    sqlite3_finalize(lp->range);
    sqlite3_finalize(lp->post);
    if (lp->own_txn) sqlite3_exec(lp->db, "COMMIT", NULL, NULL, NULL);
    free(lp->file_id);
    free(lp->nlines);
    free(lp->line0);
    memset(lp, 0, sizeof *lp);
}

const uint32_t *linepost_lens(const struct linepost *lp, size_t ord, uint32_t **buf, size_t *cap)
{
    uint32_t n = lp->nlines[ord];
    if (*cap < n) {
        *cap = n;
        *buf = xreallocarray(*buf, n, sizeof **buf);
    }
    /* whole and in range: linepost_open checked every one */
    const unsigned char *p = lp->lens + lp->line0[ord], *end = lp->lens + lp->lens_len;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = 0;
        get_varint(&p, end, &v);
        (*buf)[i] = (uint32_t)v;
    }
    return *buf;
}

int linepost_open(sqlite3 *db, struct linepost *lp)
{
    memset(lp, 0, sizeof *lp);
    lp->db = db;
    if (sqlite3_get_autocommit(db) && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK) lp->own_txn = 1;
    char stamp[40];
    struct meta_view ids = {0}, nl = {0}, lens = {0};
    sqlite3_stmt *m[3] = {NULL, NULL, NULL};
    int ok = linepost_files_stamp(db, stamp) == 0 && stamp_stored(db, stamp) &&
             (m[0] = meta_row(db, "file_id", &ids)) && (m[1] = meta_row(db, "nlines", &nl)) &&
             (m[2] = meta_row(db, "lens", &lens)) &&
             sqlite3_prepare_v2(db, "SELECT term FROM lp_terms WHERE term >= ?1 ORDER BY term", -1, &lp->range,
                                NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(db, "SELECT post FROM lp_terms WHERE term = ?1", -1, &lp->post, NULL) == SQLITE_OK;
    if (ok) {
        lp->nfiles = ids.len / sizeof(int64_t);
        lp->file_id = xmalloc((lp->nfiles ? lp->nfiles : 1) * sizeof *lp->file_id);
        if (ids.len) memcpy(lp->file_id, ids.p, lp->nfiles * sizeof *lp->file_id);
        lp->nlines = xmalloc((lp->nfiles ? lp->nfiles : 1) * sizeof *lp->nlines);
        lp->line0 = xmalloc((lp->nfiles ? lp->nfiles : 1) * sizeof *lp->line0);
        const unsigned char *p = nl.len ? nl.p : (const unsigned char *)"", *end = p + nl.len;
        for (size_t f = 0; ok && f < lp->nfiles; f++) {
            uint64_t v;
            if (get_varint(&p, end, &v) || v > UINT32_MAX) ok = 0;
            else lp->nlines[f] = (uint32_t)v;
        }
        ok = ok && p == end;
        /* the lines' counts stay where sqlite holds them, checked here */
        lp->lens = p = lens.len ? lens.p : (const unsigned char *)"";
        lp->lens_len = lens.len;
        end = p + lens.len;
        for (size_t f = 0; ok && f < lp->nfiles; f++) {
            lp->line0[f] = (size_t)(p - lp->lens);
            for (uint32_t i = 0; ok && i < lp->nlines[f]; i++) {
                uint64_t v;
                if (get_varint(&p, end, &v) || v > UINT32_MAX) ok = 0;
            }
        }
        ok = ok && p == end;
    }
    lp->lens_st = m[2];   /* finalized by linepost_close */
    for (int i = 0; i < 2; i++) sqlite3_finalize(m[i]);
    if (!ok) {
        linepost_close(lp);
        return 0;
    }
    return 1;
}

void linepost_terms(struct linepost *lp, const char *prefix, size_t n,
                    int (*cb)(const char *term, size_t len, void *ctx), void *ctx)
{
    sqlite3_bind_text(lp->range, 1, prefix, (int)n, SQLITE_STATIC);
    while (sqlite3_step(lp->range) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(lp->range, 0);
        size_t len = (size_t)sqlite3_column_bytes(lp->range, 0);
        if (!t || len < n || memcmp(t, prefix, n) != 0) break;
        if (cb(t, len, ctx)) break;
    }
    sqlite3_reset(lp->range);
}

int linepost_each(struct linepost *lp, const char *term, size_t n,
                  void (*cb)(uint32_t ord, uint32_t line, uint32_t count, void *ctx), void *ctx)
{
    sqlite3_bind_text(lp->post, 1, term, (int)n, SQLITE_STATIC);
    int rc = 0;
    if (sqlite3_step(lp->post) == SQLITE_ROW) {
        const unsigned char *p = sqlite3_column_blob(lp->post, 0);
        const unsigned char *end = p + sqlite3_column_bytes(lp->post, 0);
        uint64_t ord = 0, line = 0;
        int first = 1;
        while (p && p < end) {
            uint64_t df, dl, c;
            if (get_varint(&p, end, &df) || get_varint(&p, end, &dl) || get_varint(&p, end, &c)) {
                rc = -1;
                break;
            }
            ord = first ? df : ord + df;
            line = (!first && df == 0) ? line + dl : dl;
            first = 0;
            if (ord >= lp->nfiles || line < 1 || line > lp->nlines[ord]) {
                rc = -1;
                break;
            }
            cb((uint32_t)ord, (uint32_t)line, (uint32_t)c, ctx);
        }
    }
    sqlite3_reset(lp->post);
    return rc;
}
