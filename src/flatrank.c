/*
 * flatrank: the top BM25 windows read as evidence (see flatrank.h).
 */
#include "flatrank.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines [a, b] of the indexed file path (caller frees), or NULL: with err
 * set when the index could not be read. */
static char *file_lines(sqlite3 *db, const char *path, int a, int b, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT drqa_file_text(id, hash, ztext, tlen) FROM files WHERE path = ?", -1, &st,
                           NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the index: %s", sqlite3_errmsg(db));
        return NULL;
    }
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) snprintf(err, errlen, "cannot read the index: %s", sqlite3_errmsg(db));
    if (rc == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        const char *p = text;
        for (int l = 1; l < a && p; l++) {
            p = strchr(p, '\n');
            if (p) p++;
        }
        if (p) {
            const char *q = p;
            for (int l = a; l <= b && *q; l++) {
                const char *nl = strchr(q, '\n');
                if (!nl) { q += strlen(q); break; }
                q = l < b ? nl + 1 : nl;
            }
            out = xstrndup(p, (size_t)(q - p));
        }
    }
    sqlite3_finalize(st);
    return out;
}

int flatrank_windows(const struct qparse *q, sqlite3 *db, int lines, int overlap, size_t k, struct evidence *pool,
                     char *err, size_t errlen)
{
    struct qwindow *w;
    int n = qparse_windows(q, db, lines, overlap, k, &w, err, errlen);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        *err = 0;
        char *text = file_lines(db, w[i].path, w[i].start_line, w[i].end_line, err, errlen);
        if (!text && *err) {
            qparse_windows_free(w, (size_t)n);
            return -1;
        }
        char label[64];
        snprintf(label, sizeof label, "lines %d-%d", w[i].start_line, w[i].end_line);
        evidence_add(pool, w[i].path, w[i].start_line, w[i].end_line, text ? text : "", label, 1.0 / (1.0 + i));
        free(text);
    }
    qparse_windows_free(w, (size_t)n);
    return n;
}

size_t flatrank_definitions(const struct evidence *found, size_t k, struct evidence *pool)
{
    size_t rank = 0;
    for (size_t i = 0; i < found->n && rank < k; i++) {
        const struct evidence_span *sp = &found->v[i];
        if (sp->label && (!strncmp(sp->label, "module lines", 12) || !strncmp(sp->label, "text lines", 10)))
            continue;   /* functions and classes only */
        evidence_add(pool, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, 1.0 / (1.0 + (double)rank))
            ->elided = sp->elided;
        rank++;
    }
    return rank;
}

int flatrank_chunks(struct semantic_cache *c, const char *question, enum semantic_mode mode, size_t k,
                    struct evidence *pool, char *err, size_t errlen)
{
    struct evidence found = EVIDENCE_INIT;
    struct semantic_query sq = {0};
    sq.text = question;
    sq.category = SEMANTIC_ANY;
    sq.top_k = (int)(3 * k);   /* room for the module windows left out */
    sq.mode = mode;
    int rc = semantic_search(c, &sq, &found, err, errlen) < 0 ? -1 : (int)flatrank_definitions(&found, k, pool);
    evidence_free(&found);
    return rc;
}
