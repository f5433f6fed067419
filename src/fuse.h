/*
 * fuse: reciprocal rank fusion of ranked citation lists. Two rankers that
 * look at a repository differently (the search tree, which reads where its
 * steps led, and the flat ranker, which scores every file at once) each
 * order the files that answer a question; where either one misses, the
 * other often has the file among its first few. Each file scores
 * sum over the lists of 1 / (k + r), r its rank (1-based) among the list's
 * distinct files, absent lists adding nothing (Cormack, Clarke and
 * Buettcher 2009): a file both rank high comes first, a file one ranks
 * first still comes before one both rank low. k is the one constant: how
 * much a first place outweighs a fifth (k large: agreement counts, k small:
 * the first places do). Only ranks are used, so scores on different scales
 * (relevance, BM25) never need calibrating against each other.
 */
#ifndef DRQA_FUSE_H
#define DRQA_FUSE_H

#include "evidence.h"

#include <stddef.h>

#define FUSE_RRF_K 60.0   /* the customary value; bench/loo.sh chooses among others leave-one-repository-out */

/* Fuses nlists lists of citations (each best first) into out: first one
 * span of every file, files in fused order (ties: the better best rank,
 * then the earlier list), the span being the first the list ranking the
 * file best cites (ties: the earlier list); then, file by file in the same
 * order, the file's further spans: that list's, then the other lists' (in
 * list order), each in its list's order. A span overlapping one
 * already taken from the same file and seen the same way (verbatim, or as
 * an outline) is left out. At most max spans (0: no limit); each keeps its
 * text, label and view, its score set to 1 / (1 + position) so that the
 * order can be handed on (answer_opts.ranked). Returns out->n. */
size_t fuse_citations(const struct evidence *const *lists, size_t nlists, double k, size_t max,
                      struct evidence *out);

#endif
