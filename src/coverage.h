/*
 * coverage: how much of the question the evidence of a path holds. One
 * computation, read by everything that speaks of it: the offline policy's
 * perception report, its evaluation feedback and its planner, so that a
 * node pane never shows "covers 100%" beside a list of missing words, nor a
 * report and a feedback that disagree on what is missing.
 *
 * The measure: the idf-weighted share of the question's terms (qparse.h)
 * found in the text of a span seen on the path from the root to a node,
 * that node included (a label only restates a line of it). "Missing" is
 * every term it does not find.
 *
 * Ownership: struct coverage owns hit (coverage_free).
 */
#ifndef DRQA_COVERAGE_H
#define DRQA_COVERAGE_H

#include "mcts.h"
#include "qparse.h"
#include "util.h"

#define COVERAGE_NAMED 8   /* missing terms named before "and K more" */

struct coverage {
    double share;          /* 0-1 */
    unsigned char *hit;    /* hit[i]: term i of the question is found */
    size_t nterms;
};

/* The coverage of the path root .. id (id itself included; the root holds
 * no evidence, so id 0 or a bad id gives 0 and nothing found). */
void coverage_of_path(const struct qparse *q, const struct mcts_tree *t, int id, struct coverage *out);
void coverage_free(struct coverage *c);   /* accepts NULL */
/* 1 when every term is found (share 1, nothing missing). */
int coverage_complete(const struct coverage *c);
/* Appends "covers N% of the question<aside>; missing: a, b, c" (aside may
 * be NULL; at most max missing terms named, then "and K more"; no "missing"
 * part when none is): the one wording of it. When the question has words no
 * term can match (a run of Japanese written without spaces) it reads "covers N% of the
 * words it can look for<aside>; missing: ...; no index term can match `w`". */
void coverage_describe(const struct qparse *q, const struct coverage *c, const char *aside, size_t max,
                       struct buf *b);

#endif
