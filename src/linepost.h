/*
 * linepost: where each term of the index's files occurs, line by line, kept
 * in the index so that scoring windows of lines for a question (qparse.h,
 * qparse_windows) reads the postings of the question's terms instead of
 * tokenising every file again.
 *
 * What is stored is derived from the files table only: for every term of
 * tok_each(text, 0) over each file's text, the (file, line, count) triples of
 * the lines holding it, and for every file (in path order) its id, its
 * number of lines and each line's number of terms. Terms never cross a line
 * (tok.h splits at non-word bytes), so a window's terms are those of its
 * lines.
 *
 * The postings carry the stamp of the files they were built from (a hash of
 * every file's id, path and content hash, in path order): a changed index no
 * longer matches and linepost_open refuses it; linepost_build builds them
 * again. They are written in one transaction, so a killed build leaves the
 * previous state (stale postings are never used). Tables: lp_meta(key,
 * value), lp_terms(term, post), created on first build.
 */
#ifndef DRQA_LINEPOST_H
#define DRQA_LINEPOST_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The stamp of the index's files: a hash of every file's id, path and
 * content hash, in path order, prefixed with the postings' format. Caches
 * derived from the files are checked against it. -1 when unreadable. */
int linepost_files_stamp(sqlite3 *db, char out[40]);

/* The stamp of what the index holds, for caches derived from more than the
 * files: the files' stamp, then a hash of the index's version, grammars and
 * summary (meta) and of the rows of extra_sql (one column each) when it is
 * not NULL. -1 when unreadable. outlen 60 or more holds it whole. */
int linepost_index_stamp(sqlite3 *db, const char *extra_sql, char *out, size_t outlen);

/* Builds and stores the postings when none match the current files (through
 * a second, writable connection when db is read-only). Returns 1 when
 * postings of the current files are stored (built now or before), 0 when the
 * index cannot be written (read-only file, busy), -1 with a message when it
 * cannot be read. */
int linepost_build(sqlite3 *db, char *err, size_t errlen);

/* 1 when postings of db's current files are stored (linepost_build would
 * do nothing), else 0. Its stamp of the files is the one db keeps
 * (linepost_files_stamp): asked before another reader of db, it costs that
 * reader nothing, where a connection of its own would read every file's row
 * again. */
int linepost_current(sqlite3 *db);

/* Postings built while an index is written (derive.h) rather than read back
 * from it: linepost_file_make tokenises one file's decoded text (any thread);
 * linepost_builder_add takes each file's, in path order, with its id (f NULL
 * or empty: a file with no text); linepost_builder_store_on stores them, in
 * w's write transaction, stamped with the files w holds, and -1 with a
 * message, storing nothing, when those are not the files added. The bytes
 * stored are those linepost_build would store. */
struct linepost_file { struct buf data; };
void linepost_file_make(const char *text, size_t len, struct linepost_file *out);
void linepost_file_free(struct linepost_file *f);   /* its bytes; accepts NULL */
struct linepost_builder;
struct linepost_builder *linepost_builder_new(void);
void linepost_builder_add(struct linepost_builder *b, int64_t file_id, const struct linepost_file *f);
int linepost_builder_store_on(struct linepost_builder *b, sqlite3 *w, char *err, size_t errlen);
void linepost_builder_free(struct linepost_builder *b);   /* accepts NULL */

/* Stored postings of the current files, read in one snapshot of db (a read
 * transaction held until linepost_close, when db was in none). */
struct linepost {
    sqlite3 *db;
    int own_txn;
    size_t nfiles;          /* files in path order ("ord") */
    int64_t *file_id;       /* per ord */
    uint32_t *nlines;       /* per ord: 0 for a file with no text */
    size_t *line0;          /* per ord: where its lines start in lens */
    const unsigned char *lens;   /* terms on each line, all files' lines in order, as varints where */
    size_t lens_len;             /* sqlite holds them for lens_st (linepost_lens decodes them) */
    sqlite3_stmt *range, *post, *lens_st;
};

/* Fills lp (linepost_close it) and returns 1; 0 when no postings of the
 * current files are stored (lp then needs no close). */
int linepost_open(sqlite3 *db, struct linepost *lp);
void linepost_close(struct linepost *lp);

/* The terms on each line of file ord (nlines[ord] of them), decoded into
 * *buf, grown as needed (*cap elements; the caller frees it). Decoded a file
 * at a time: all files' counts at once are megabytes of fresh memory. */
const uint32_t *linepost_lens(const struct linepost *lp, size_t ord, uint32_t **buf, size_t *cap);

/* Calls cb for every stored term starting with prefix[0..n), in byte order;
 * cb returns nonzero to stop. */
void linepost_terms(struct linepost *lp, const char *prefix, size_t n,
                    int (*cb)(const char *term, size_t len, void *ctx), void *ctx);

/* Calls cb(ord, line, count) for every line holding term, in (ord, line)
 * order. Returns 0, or -1 when the stored postings are malformed. */
int linepost_each(struct linepost *lp, const char *term, size_t n,
                  void (*cb)(uint32_t ord, uint32_t line, uint32_t count, void *ctx), void *ctx);

#endif
