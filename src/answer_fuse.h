/*
 * answer_fuse: an answer whose citations fuse three rankings (fuse.h): the
 * search tree's answer, which cites where the search's steps led, the flat
 * ranker's (flatrank.h), which cites the definitions inside the
 * repository's top BM25 windows as --mode rag-window does, and the
 * repository's top function and class chunks as --mode rag-function cites
 * them. Where the search looked in the wrong places the windows and chunks
 * still name the files, and where they miss the tree still does. The
 * windows and chunks are spans read for the answer: they are handed back so
 * that the search verifies the citations taken from them
 * (policy_answer.read), and the answer names the citations that no step of
 * the search read.
 */
#ifndef DRQA_ANSWER_FUSE_H
#define DRQA_ANSWER_FUSE_H

#include "evidence.h"
#include "qparse.h"
#include "semantic.h"

#include <sqlite3.h>
#include <stddef.h>

/* The third ranking fused in, when given: the repository's top function and
 * class chunks for the question (flatrank_chunks), cited as --mode
 * rag-function cites them. The windows rank files by where the question's
 * words crowd together in 500 lines; the chunks by the one definition that
 * says it best, which is how a small file or a single function far down a
 * long one comes first. */
struct answer_fuse_chunks {
    struct semantic_cache *cache;
    const char *question;
    enum semantic_mode mode;
};

/* Fuses tcites (the tree's answer's citations, best first; seen: every span
 * the tree read, as the search verifies against) with the flat ranker's
 * answer and, unless chunks is NULL, the chunks' answer, rank fusion
 * constant k, at most max citations. Writes the answer to *markdown (caller
 * frees), its citations to cites, the windows and chunks read to read.
 * Returns 0, or -1 with a message when the index cannot be read (the
 * outputs are then left empty). */
int answer_fuse(const struct qparse *q, sqlite3 *db, const struct answer_fuse_chunks *chunks,
                const struct evidence *seen, const struct evidence *tcites, double k, size_t max, char **markdown,
                struct evidence *cites, struct evidence *read, char *err, size_t errlen);

#endif
