/*
 * flatrank: the flat ranker's evidence. The windows of the repository where
 * the question's words concentrate most (qparse_windows: BM25 over
 * fixed-size line windows of every file), read from the index as spans with
 * their text. It is what --mode rag-window answers from, and the second
 * ranking the offline policy's answer fuses with its tree's (fuse.h): a
 * ranker that looks at every file at once, where the tree looks where its
 * steps led.
 */
#ifndef DRQA_FLATRANK_H
#define DRQA_FLATRANK_H

#include "evidence.h"
#include "qparse.h"
#include "semantic.h"

#include <sqlite3.h>
#include <stddef.h>

#define FLATRANK_TOP 10            /* windows ... */
#define FLATRANK_LINES 500         /* ... of this many lines ... */
#define FLATRANK_OVERLAP 50        /* ... overlapping by this many */

/* Appends the top k windows of lines lines (overlapping by overlap) to
 * pool, best first, each labelled "lines A-B" with the prior 1/(1 + rank)
 * as its score. Returns how many, or -1 with a message naming the index
 * when it cannot be read. */
int flatrank_windows(const struct qparse *q, sqlite3 *db, int lines, int overlap, size_t k, struct evidence *pool,
                     char *err, size_t errlen);

/* Appends to pool, best first, the first k spans of found (a SemanticSearch
 * result, best first) that are functions or classes: module and text
 * windows are left out, as --mode rag-function leaves them out. Each keeps
 * its text, label and view, its score the prior 1/(1 + rank). Returns how
 * many. */
size_t flatrank_definitions(const struct evidence *found, size_t k, struct evidence *pool);

/* The flat ranker's third view: the top k function and class chunks of the
 * repository for question, as SemanticSearch ranks them in mode (with the
 * local vectors), appended to pool as flatrank_definitions does. Returns how
 * many, or -1 with a message when the index cannot be searched. */
int flatrank_chunks(struct semantic_cache *c, const char *question, enum semantic_mode mode, size_t k,
                    struct evidence *pool, char *err, size_t errlen);

#endif
