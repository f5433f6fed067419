/*
 * store: the on-disk index, one sqlite file per repository. This header is the
 * contract between the indexer (writes) and the actions (read). The schema is
 * versioned with PRAGMA user_version: an index written by another version is
 * rebuilt from scratch, never misread.
 *
 * Every index the project writes carries PRAGMA application_id
 * STORE_APPLICATION_ID; an older index (written before the marker) is known
 * by its meta and files tables. A file that is neither is never written to:
 * store_classify says what it is and store_open refuses it.
 *
 * Conventions: paths are relative to the repository root with '/' separators;
 * lines are 1-based and inclusive; every text column is valid UTF-8 (invalid
 * bytes in source files are replaced with U+FFFD when decoded).
 *
 * Tables (see STORE_SCHEMA in store.c for the exact DDL):
 *   meta(key, value)          repo_root, indexed_at, drqa_version, grammar versions,
 *                             dirs_stamp (what the kept directory listings hold)
 *   files                     one row per indexed file, with its decoded text
 *                             compressed (ztext, tlen: ztext.h), read through
 *                             the SQL functions of store_text.h, which fail
 *                             with a message for a damaged stream
 *   skipped(path, reason)     files left out and why (too large, binary, ...)
 *   dirs                      directory listings kept by the walk between updates
 *   symbols                   classes, functions, methods, module-level variables
 *   imports                   import statements, resolved to repo files where possible
 *   edges                     calls and inherits relations (imports: the imports
 *                             table; contains: symbols.parent_id); a caller's
 *                             calls of one callee are one edge at the first,
 *                             n counting them
 *   chunk_spans + chunks_fts  retrieval units (as spans of their file's text, a
 *                             class outline packed against its span) and
 *                             their code-aware FTS5 terms; the view chunks puts
 *                             each unit's text together. chunks_fts keeps only
 *                             its index: its content is the view chunks_fts_src,
 *                             which computes the terms again (drqa_terms)
 *   embeddings                vectors cached by (content hash, model)
 *   vec_models                local vector model: its fit stamp (its term
 *                             vectors: vec_term_blocks, made on first store
 *                             by semantic_local.c; vec_terms holds an
 *                             earlier layout's, removed with the next fit)
 * Made by questions, not by the indexer, each stamped with what it was made
 * from and made again when that changed (absent in a fresh index):
 *   vec_matrix                the local chunk vectors whole (semantic.c)
 *   lp_meta, lp_terms         line postings of the files (linepost.h)
 *   act_names                 the distinct symbol names (action.c)
 */
#ifndef DRQA_STORE_H
#define DRQA_STORE_H

#include <sqlite3.h>
#include <stddef.h>

#define STORE_SCHEMA_VERSION 16
#define STORE_APPLICATION_ID 0x44525141   /* "DRQA" */

/* What is at an index path, found without writing to it. */
enum store_kind {
    STORE_ABSENT,        /* nothing there, or an empty regular file: free to create */
    STORE_OURS,          /* a regular file holding one of the project's indexes */
    STORE_DAMAGED,       /* ours by its header, but sqlite cannot read it */
    STORE_FOREIGN,       /* anything else: refused, never written */
};

/* Classifies path. *version (may be NULL) receives the user_version of an
 * index of ours (-1 when damaged). For STORE_FOREIGN, err names the path, what
 * it is and what to do. Never blocks on a FIFO and never opens a device. */
enum store_kind store_classify(const char *path, int *version, char *err, size_t errlen);

/* Runs PRAGMA quick_check on the index at path (read-only), then inflates
 * every file's stored text (an index of this schema). Returns 1 when both
 * find it sound, 0 when damaged, with the first complaint in detail. */
int store_quick_check(const char *path, char *detail, size_t detaillen);

/* Opens (creating when needed) the index at path. A schema of another version is
 * dropped and recreated (*rebuilt set to 1) when the file is one of ours; a
 * database of another application is refused, never dropped. readonly: never
 * creates or rebuilds; a missing or foreign index is an error. On error returns -1 and writes a
 * message naming the path into err. The caller closes *db with sqlite3_close. */
int store_open(const char *path, int readonly, sqlite3 **db, int *rebuilt, char *err, size_t errlen);

/* Makes every sqlite connection the process opens from now on know the
 * functions the schema's views and the readers of file texts call:
 * drqa_terms (see chunks_fts_src) and store_text.h's drqa_text,
 * drqa_file_text, drqa_load_span and drqa_cached_span.
 * store_open and store_classify call it; a caller opening an index with
 * sqlite3_open directly, before either ran, calls it first. */
void store_functions_init(void);

/* Default index path for a repository (absolute path): under
 * $XDG_CACHE_HOME/drqa-tui/ (or ~/.cache/drqa-tui/), named after the
 * repository's base name and a hash of its path. Returns a malloc'd string. */
char *store_default_path(const char *repo_abs);

/* Creates the directory holding path (mode 0700) when missing. -1 + err on failure. */
int store_mkdir_for(const char *path, char *err, size_t errlen);

/* meta table helpers; store_meta_get returns a malloc'd string or NULL. */
int store_meta_set(sqlite3 *db, const char *key, const char *value);
char *store_meta_get(sqlite3 *db, const char *key);

/* Runs sql (no result rows); on error writes sqlite's message into err. */
int store_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* The file's text by path (malloc'd, caller frees) and its id, or NULL:
 * with err empty when the file is not in the index, else saying why it
 * could not be read (a damaged stored text). */
char *store_file_text(sqlite3 *db, const char *path, long long *file_id, size_t *len, char *err, size_t errlen);

#endif
