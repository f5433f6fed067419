/*
 * index_write: the one sqlite writer of an update. Prepared statements write
 * a parsed file's rows (file, symbols, imports, edges, chunks, full text),
 * deleting what an earlier version of the file left; a fresh build keeps its
 * edges in memory for index_resolve.
 */
#include "index_int.h"
#include "index_chunk.h"
#include "parse.h"
#include "sigclean.h"
#include "sqlx.h"
#include "index_scan.h"
#include "store.h"
#include "store_rows.h"
#include "store_text.h"
#include "util.h"
#include "ztext.h"
#include <config.h>  /* autoconf: PACKAGE_VERSION */

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the writer --------------------------------------------------------------- */

const char *const index_write_sql[S_COUNT] = {
    [S_DEL_FTS] = "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunk_spans WHERE file_id = ?1)",
    [S_DEL_CHUNKS] = "DELETE FROM chunk_spans WHERE file_id = ?1",
    [S_DEL_SYMS] = "DELETE FROM symbols WHERE file_id = ?1",
    [S_DEL_IMPORTS] = "DELETE FROM imports WHERE file_id = ?1",
    /* the file's run of edge ids; src_file too, so that a wrong run could
     * only leave rows behind, never take another file's */
    [S_DEL_EDGES] = "DELETE FROM edges WHERE id BETWEEN (SELECT lo FROM edge_runs WHERE file_id = ?1) AND "
                    "(SELECT hi FROM edge_runs WHERE file_id = ?1) AND src_file = ?1",
    [S_DEL_EDGE_RUN] = "DELETE FROM edge_runs WHERE file_id = ?1",
    [S_DEL_FILE] = "DELETE FROM files WHERE id = ?1",
    [S_INS_FILE] = "INSERT INTO files(path, lang, size, mtime_ns, hash, nlines, module, parse_errors, "
                   "decode_errors, ztext, tlen, ctime_ns, ino) "
                   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?14, ?12, ?13)",
    [S_UPD_FILE] = "UPDATE files SET path = ?1, lang = ?2, size = ?3, mtime_ns = ?4, hash = ?5, nlines = ?6, "
                   "module = ?7, parse_errors = ?8, decode_errors = ?9, ztext = ?10, tlen = ?14, ctime_ns = ?12, "
                   "ino = ?13 WHERE id = ?11",
    [S_TOUCH_FILE] = "UPDATE files SET size = ?1, mtime_ns = ?2, ctime_ns = ?4, ino = ?5 WHERE id = ?3",
    [S_INS_SYM] = "INSERT INTO symbols(file_id, parent_id, kind_s, name, qualname_s, start_line, end_line, body_line, "
                  "signature_s, decorators, docstring, bases, is_async) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [S_INS_IMPORT] = "INSERT INTO imports(file_id, line, module, name, alias, level) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [S_INS_EDGE] = INDEX_EDGE_INSERT_SQL,
    [S_EDGE_RUN] = INDEX_EDGE_RUN_SQL,
    [S_INS_CHUNK] = "INSERT INTO chunk_spans(file_id, symbol_id, kind_s, start_line, end_line, text, hash_s, head, off, len, "
                    "name) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [S_INS_FTS] = "INSERT INTO chunks_fts(rowid, name, doc, body, path) VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_INS_SKIP] = "INSERT OR REPLACE INTO skipped(path, reason, size) VALUES(?1, ?2, ?3)",
};

int step(struct writer *w, int s, char *err, size_t errlen)
{
    int rc = sqlite3_step(w->st[s]);
    sqlite3_reset(w->st[s]);
    sqlite3_clear_bindings(w->st[s]);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(w->db));
        return -1;
    }
    return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, i);
}

static void bind_id(sqlite3_stmt *st, int i, long long id)
{
    if (id > 0) sqlite3_bind_int64(st, i, id);
    else sqlite3_bind_null(st, i);
}

int delete_file_rows(struct writer *w, long long id, int and_file, char *err, size_t errlen)
{
    for (int s = S_DEL_FTS; s <= S_DEL_FILE; s++) {
        if (s == S_DEL_FILE && !and_file) break;
        sqlite3_bind_int64(w->st[s], 1, id);
        if (step(w, s, err, errlen)) return -1;
    }
    return 0;
}

static int kind_number(enum parse_kind k)
{
    switch (k) {
    case PARSE_CLASS: return STORE_SYM_CLASS;
    case PARSE_FUNCTION: return STORE_SYM_FUNCTION;
    case PARSE_METHOD: return STORE_SYM_METHOD;
    case PARSE_VARIABLE: return STORE_SYM_VARIABLE;
    }
    return STORE_SYM_VARIABLE;
}

/* v[0..n) as a text, or NULL */
static void bind_text_n(sqlite3_stmt *st, int i, const char *v, size_t n)
{
    if (v) sqlite3_bind_text64(st, i, v, n, SQLITE_TRANSIENT, SQLITE_UTF8);
    else sqlite3_bind_null(st, i);
}

static const char *last_component(const char *s)
{
    const char *p = strrchr(s, '.');
    return p ? p + 1 : s;
}

/* An edge as written, unresolved: index_resolve sets its destination. */
static int insert_edge(struct writer *w, int kind, long long file, long long src, int line, int n, const char *target,
                       const char *target_name, char *err, size_t errlen)
{
    sqlite3_stmt *st = w->st[S_INS_EDGE];
    sqlite3_bind_int(st, 1, kind);
    sqlite3_bind_int64(st, 2, file);
    bind_id(st, 3, src);
    sqlite3_bind_int(st, 4, line);
    index_edge_bind_target(st, 5, target, target_name, &w->scratch);
    bind_text(st, 6, target_name);
    if (n > 1) sqlite3_bind_int(st, 9, n);
    if (step(w, S_INS_EDGE, err, errlen)) return -1;
    if (index_edge_run_note(&w->run, w->st[S_EDGE_RUN], file, sqlite3_last_insert_rowid(w->db))) {
        snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(w->db));
        return -1;
    }
    return 0;
}

void pending_free(struct index_edges *P)
{
    free(P->v);
    free(P->strs);
    free(P->set);
    memset(P, 0, sizeof *P);
}

/* Inserts the kept edges, in their order, and keeps no more (the budget is spent). */
int flush_pending(struct writer *w, char *err, size_t errlen)
{
    struct index_edges *P = w->pending;
    w->pending = NULL;
    for (size_t i = 0; i < P->n; i++) {
        const struct index_edge *e = &P->v[i];
        if (insert_edge(w, e->kind, e->file, e->src, e->line, e->n, index_edge_str(P, e->target),
                        index_edge_str(P, e->target_name), err, errlen))
            return -1;
    }
    pending_free(P);
    return 0;
}

/* The slot of set for the string s of n bytes: its offset, or an empty slot. */
static uint32_t *pending_slot(const struct index_edges *P, const char *s, size_t n)
{
    size_t j = (size_t)hash64(s, n) & (P->setcap - 1);
    while (P->set[j] != INDEX_EDGE_NONE &&
           !(strncmp(P->strs + P->set[j], s, n) == 0 && P->strs[P->set[j] + n] == 0))
        j = (j + 1) & (P->setcap - 1);
    return &P->set[j];
}

/* s kept in P's strings: its offset, the same for every equal string; a
 * suffix of the string of offset prev (a target's last component) shares
 * its bytes. */
static uint32_t pending_str_add(struct index_edges *P, const char *s, uint32_t prev)
{
    if (!s) return INDEX_EDGE_NONE;
    size_t n = strlen(s);
    if (prev != INDEX_EDGE_NONE) {
        size_t pn = strlen(P->strs + prev);
        if (n <= pn && memcmp(P->strs + prev + pn - n, s, n) == 0) return (uint32_t)(prev + pn - n);
    }
    if ((P->nset + 1) * 2 > P->setcap) {
        uint32_t *old = P->set;
        size_t oldcap = P->setcap;
        P->setcap = oldcap ? oldcap * 2 : 256;
        P->set = xreallocarray(NULL, P->setcap, sizeof *P->set);
        memset(P->set, 0xff, P->setcap * sizeof *P->set);
        for (size_t i = 0; i < oldcap; i++)
            if (old[i] != INDEX_EDGE_NONE) {
                const char *k = P->strs + old[i];
                *pending_slot(P, k, strlen(k)) = old[i];
            }
        free(old);
    }
    uint32_t *slot = pending_slot(P, s, n);
    if (*slot != INDEX_EDGE_NONE) return *slot;
    if (P->len + n + 1 > P->strcap) {
        P->strcap = xgrow_cap(P->strcap, P->len + n + 1, 1 << 16);
        P->strs = xrealloc(P->strs, P->strcap);
    }
    memcpy(P->strs + P->len, s, n + 1);
    P->len += n + 1;
    *slot = (uint32_t)(P->len - n - 1);
    P->nset++;
    return *slot;
}

static int add_edge(struct writer *w, int kind, long long file, long long src, int line, int n, const char *target,
                    const char *target_name, char *err, size_t errlen)
{
    struct index_edges *P = w->pending;
    size_t more = (target ? strlen(target) : 0) + (target_name ? strlen(target_name) : 0) + 2;
    if (P && ((P->n + 1) * sizeof *P->v + P->len + P->setcap * sizeof *P->set + more > w->pending_budget ||
              file > UINT32_MAX || src > UINT32_MAX) &&
        flush_pending(w, err, errlen))
        return -1;
    if (!w->pending) return insert_edge(w, kind, file, src, line, n, target, target_name, err, errlen);
    P = w->pending;
    ARRAY_GROW(P->v, P->n, P->cap, 4096);
    struct index_edge *e = &P->v[P->n++];
    e->kind = (unsigned char)kind;
    e->line = line;
    e->n = n;
    e->file = (uint32_t)file;
    e->src = (uint32_t)(src > 0 ? src : 0);
    e->target = pending_str_add(P, target, INDEX_EDGE_NONE);
    e->target_name = pending_str_add(P, target_name, e->target);
    return 0;
}

/* The file's row: inserted, or updated in place (keeping its id) when the
 * file was indexed before, after its old rows are deleted. *fid receives its id. */
static int write_file_row(struct writer *w, const struct job *j, const struct result *r, long long *fid,
                          char *err, size_t errlen)
{
    long long id = j->old_id;
    if (id && delete_file_rows(w, id, 0, err, errlen)) return -1;
    int s = id ? S_UPD_FILE : S_INS_FILE;
    sqlite3_stmt *st = w->st[s];
    sqlite3_bind_text(st, 1, j->sf->path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, j->sf->lang->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->size);
    sqlite3_bind_int64(st, 4, r->mtime_ns);
    sqlite3_bind_text(st, 5, r->hash, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, r->nlines);
    bind_text(st, 7, r->module);
    sqlite3_bind_int(st, 8, r->pr.parse_errors);
    sqlite3_bind_int(st, 9, r->decode_errors);
    sqlite3_bind_blob64(st, 10, r->ztext, r->zlen, SQLITE_STATIC);
    if (id) sqlite3_bind_int64(st, 11, id);
    sqlite3_bind_int64(st, 12, r->ctime_ns);
    sqlite3_bind_int64(st, 13, r->ino);
    sqlite3_bind_int64(st, 14, (sqlite3_int64)r->textlen);
    if (step(w, s, err, errlen)) return -1;
    *fid = id ? id : sqlite3_last_insert_rowid(w->db);
    return 0;
}

/* The symbols, in parse order (a parent before its members: parent_id is
 * what contains what); w->symids maps parse index -> row id. */
static int write_symbols(struct writer *w, long long fid, const struct result *r, char *err, size_t errlen)
{
    const struct parse_result *pr = &r->pr;
    if (pr->nsyms > w->nsymids) {
        w->nsymids = pr->nsyms;
        w->symids = xrealloc(w->symids, w->nsymids * sizeof *w->symids);
    }
    for (size_t i = 0; i < pr->nsyms; i++) {
        const struct parse_symbol *y = &pr->syms[i];
        sqlite3_stmt *st = w->st[S_INS_SYM];
        sqlite3_bind_int64(st, 1, fid);
        bind_id(st, 2, y->parent >= 0 && (size_t)y->parent < i ? w->symids[y->parent] : 0);
        sqlite3_bind_int(st, 3, kind_number(y->kind));
        bind_text(st, 4, y->name);
        size_t n;
        const char *v = store_prefix_form(y->qualname, y->name, &n, &w->scratch);
        bind_text_n(st, 5, v, n);
        sqlite3_bind_int(st, 6, y->start_line);
        sqlite3_bind_int(st, 7, y->end_line);
        sqlite3_bind_int(st, 8, y->body_line);
        v = store_sig_form(y->signature, y->name, &n, &w->scratch);
        bind_text_n(st, 9, v, n);
        bind_text(st, 10, y->decorators);
        if (r->docz && r->docz[i]) sqlite3_bind_blob64(st, 11, r->docz[i], r->docz_len[i], SQLITE_STATIC);
        else bind_text(st, 11, y->docstring);
        bind_text(st, 12, y->bases);
        sqlite3_bind_int(st, 13, y->is_async);
        if (step(w, S_INS_SYM, err, errlen)) return -1;
        w->symids[i] = sqlite3_last_insert_rowid(w->db);
    }
    return 0;
}

/* One unresolved 'inherits' edge per base expression of each class. */
static int write_inherits(struct writer *w, long long fid, const struct parse_result *pr, char *err, size_t errlen)
{
    for (size_t i = 0; i < pr->nsyms; i++) {
        const struct parse_symbol *y = &pr->syms[i];
        if (y->kind != PARSE_CLASS || !y->bases) continue;
        char *bases = xstrdup(y->bases);
        char *save = NULL;
        int rc = 0;
        for (char *b = strtok_r(bases, ",", &save); b && !rc; b = strtok_r(NULL, ",", &save)) {
            while (*b == ' ') b++;
            size_t n = strlen(b);
            while (n && b[n - 1] == ' ') b[--n] = 0;
            if (!n) continue;
            /* 'Generic[T]' names Generic */
            char *target = xstrdup(b);
            char *br = strpbrk(target, "[(");
            if (br) *br = 0;
            rc = add_edge(w, INDEX_EDGE_INHERITS, fid, w->symids[i], y->body_line, 1, b, last_component(target), err,
                          errlen);
            free(target);
        }
        free(bases);
        if (rc) return -1;
    }
    return 0;
}

/* One unresolved 'calls' edge per caller and callee (parse_merge_calls),
 * counting its call sites. */
static int write_calls(struct writer *w, long long fid, const struct parse_result *pr, char *err, size_t errlen)
{
    for (size_t i = 0; i < pr->ncalls; i++) {
        const struct parse_call *c = &pr->calls[i];
        long long src = c->caller >= 0 && (size_t)c->caller < pr->nsyms ? w->symids[c->caller] : 0;
        if (add_edge(w, INDEX_EDGE_CALLS, fid, src, c->line, c->n, c->callee, last_component(c->callee), err, errlen))
            return -1;
    }
    return 0;
}

static int write_imports(struct writer *w, long long fid, const struct parse_result *pr, char *err, size_t errlen)
{
    for (size_t i = 0; i < pr->nimports; i++) {
        const struct parse_import *im = &pr->imports[i];
        sqlite3_stmt *st = w->st[S_INS_IMPORT];
        sqlite3_bind_int64(st, 1, fid);
        sqlite3_bind_int(st, 2, im->line);
        sqlite3_bind_text(st, 3, im->module ? im->module : "", -1, SQLITE_STATIC);
        bind_text(st, 4, im->name);
        bind_text(st, 5, im->alias);
        sqlite3_bind_int(st, 6, im->level);
        if (step(w, S_INS_IMPORT, err, errlen)) return -1;
    }
    return 0;
}

/* Each chunk and its full-text row (rowid = chunks.id). */
static int write_chunks(struct writer *w, long long fid, const struct chunk_list *chunks, char *err, size_t errlen)
{
    for (size_t i = 0; i < chunks->n; i++) {
        const struct chunk *c = &chunks->v[i];
        sqlite3_stmt *st = w->st[S_INS_CHUNK];
        sqlite3_bind_int64(st, 1, fid);
        bind_id(st, 2, c->sym >= 0 ? w->symids[c->sym] : 0);
        int k = store_chunk_kind(c->kind);
        if (k >= 0) sqlite3_bind_int(st, 3, k);
        else sqlite3_bind_text(st, 3, c->kind, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, c->start_line);
        sqlite3_bind_int(st, 5, c->end_line);
        if (c->span) {   /* the text is the file's: only where it lies is written */
            if (c->head_line) sqlite3_bind_int64(st, 8, (long long)(c->head_off << 16 | (c->headlen - 1)));
            else if (c->headlen) sqlite3_bind_text(st, 8, c->text, (int)c->headlen, SQLITE_STATIC);
            sqlite3_bind_int64(st, 9, (long long)c->off);
            sqlite3_bind_int64(st, 10, (long long)c->len);
        } else {   /* made up of the lines [off, off + len): packed against them */
            sqlite3_bind_blob64(st, 6, c->packed, c->packed_len, SQLITE_STATIC);
            sqlite3_bind_int64(st, 9, (long long)c->off);
            sqlite3_bind_int64(st, 10, (long long)c->len);
        }
        unsigned char h[8];
        if (store_hash_bytes(c->hash, h)) sqlite3_bind_blob(st, 7, h, 8, SQLITE_TRANSIENT);
        else sqlite3_bind_text(st, 7, c->hash, -1, SQLITE_STATIC);
        if (!c->name_derived) sqlite3_bind_text(st, 11, c->fts_name, -1, SQLITE_STATIC);
        if (step(w, S_INS_CHUNK, err, errlen)) return -1;
        long long cid = sqlite3_last_insert_rowid(w->db);
        if (w->derive) derive_chunk(w->derive, cid, c);
        st = w->st[S_INS_FTS];
        sqlite3_bind_int64(st, 1, cid);
        sqlite3_bind_text(st, 2, c->fts_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, c->fts_doc, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, c->fts_body, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, c->fts_path, -1, SQLITE_STATIC);
        if (step(w, S_INS_FTS, err, errlen)) return -1;
    }
    return 0;
}

/* Writes a parsed file's rows. Calls and inherits edges go in unresolved;
 * index_resolve fills their destinations once every file is in. */
int write_parsed(struct writer *w, const struct job *j, struct result *r, char *err, size_t errlen)
{
    long long fid;
    if (write_file_row(w, j, r, &fid, err, errlen)) return -1;
    /* before its chunks, which derive_chunk hands in as the file's */
    if (w->derive) derive_file(w->derive, derive_place(j->place), fid, &r->lines);
    if (write_symbols(w, fid, r, err, errlen) || write_inherits(w, fid, &r->pr, err, errlen) ||
        write_calls(w, fid, &r->pr, err, errlen) || write_imports(w, fid, &r->pr, err, errlen) ||
        write_chunks(w, fid, &r->chunks, err, errlen))
        return -1;
    return 0;
}
