/*
 * derive: what questions read besides the index's own rows — the local
 * vectors (semantic_local.h), the line postings (linepost.h) and the symbol
 * names (action.h) — built while a fresh index is written, so that the first
 * question reads them as every later one does instead of making them.
 *
 * Each is derived from the whole index and stamped with the index state it
 * was made from; a question finding no current one makes it (as it did
 * before any was built here), so an index updated in place keeps them
 * consistent through their stamps. A fresh build makes them from what it has
 * in memory anyway: the parser threads tokenise each file's lines while its
 * text is decoded (derive_lines), the writer hands in every file and chunk
 * as it writes them (derive_file, derive_chunk), each file with its place in
 * path order (the files are written in the order they are parsed in). Once every
 * file is written the line postings are stored and the vectors are fitted on
 * a thread of their own (derive_start), a large fit's quantised vectors once
 * the edges are resolved (derive_fit), while the writer goes on; derive_store then
 * writes the vectors and the names, just before the build commits. All of it is in the build's transaction: a
 * build killed before its commit leaves the previous index and its derived
 * rows as they were, and a committed one has them current.
 *
 * Ownership: the caller owns the struct derive; derive_free accepts NULL and
 * joins a fit still running.
 */
#ifndef DRQA_DERIVE_H
#define DRQA_DERIVE_H

#include <sqlite3.h>
#include <stddef.h>

#include "index_chunk.h"
#include "linepost.h"

struct derive;

struct derive *derive_new(void);
void derive_free(struct derive *d);

/* On a parser thread: the line postings of a file's decoded text, into out
 * (linepost_file_free it, or hand it to derive_file). */
void derive_lines(const char *text, size_t len, struct linepost_file *out);

/* On the writer: a file written with id file_id, its place in path order
 * among the files the build writes, and its lines (NULL: none made; their
 * bytes are taken), then each of its chunks as written (id cid); or a place
 * that has no file (derive_skip: the file was skipped). Every place from 0
 * on is handed in once, in any order: a file that comes before its turn
 * waits (its lines and copies of its chunks' terms) until the places before
 * it are in, so that what is built is what path order would build. */
void derive_file(struct derive *d, size_t place, long long file_id, struct linepost_file *lines);
void derive_skip(struct derive *d, size_t place);
void derive_chunk(struct derive *d, long long cid, const struct chunk *c);

/* Every file is written (db's files rows are final): the line postings are
 * stored in db's write transaction now, and the vectors' fit starts, on a
 * thread of its own: all of it when it allocates at most fit_budget bytes
 * (vec_local_build_bytes), else its float rows only (derive_fit). */
void derive_start(struct derive *d, sqlite3 *db, size_t fit_budget);

/* The edges are resolved: the fit goes on to its quantised vectors, beside
 * the writer (started now if derive_start did not). The fit's quantised
 * vectors and resolving's tables are the largest things a build of a large
 * tree holds besides the fit's rows, and one after the other they do not
 * add up. */
void derive_fit(struct derive *d);

/* Waits for the fit and stores the vectors, line postings and names in db's
 * write transaction (stamped with what db holds now: call it once nothing
 * else is left to write). What cannot be stored is left out, with a line in
 * the log, and made by the first question instead; the build goes on. */
void derive_store(struct derive *d, sqlite3 *db);

#endif
