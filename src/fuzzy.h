/*
 * fuzzy: approximate name matching for the actions, so that a model's
 * slightly wrong identifier ('RequestContex', 'request_ctx', 'reqctx') still
 * finds the definition, and so that "did you mean" suggestions are ranked.
 * Comparisons ignore ASCII case and '_' separators count like any character.
 * Every function is pure and deterministic.
 */
#ifndef DRQA_FUZZY_H
#define DRQA_FUZZY_H

#include <stddef.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent transpositions),
 * case-insensitive. Stops early: returns max + 1 as soon as the distance must
 * exceed max. */
int fuzzy_distance(const char *a, const char *b, int max);

/* How well query matches cand as an in-order subsequence, in (0, 1]; 0 when it
 * is not a subsequence. Matches at word starts (after '_', '.', '/', at case
 * changes) and contiguous runs score higher. */
double fuzzy_subseq(const char *query, const char *cand);

/* Combined similarity in [0, 1]; 0 means "not similar enough to suggest".
 * 1 only for a case-insensitive equal string. Edit distance counts when it is
 * at most max(1, len/3); a substring or subsequence match counts otherwise. */
double fuzzy_score(const char *query, const char *cand);

struct fuzzy_hit {
    size_t index;    /* into the candidate array */
    double score;
};

/* The k best candidates by fuzzy_score (score > 0), best first; ties by the
 * shorter candidate, then byte order. Returns the number written to out. */
size_t fuzzy_best(const char *query, const char *const *cands, size_t n, size_t k, struct fuzzy_hit *out);

#endif
