/*
 * rng: a small seeded pseudo-random generator (splitmix64) for the search's
 * tie-breaks. Its only job is reproducibility: the same seed and the same
 * sequence of calls give the same numbers on every platform, so the same seed
 * and the same policy grow the same tree. Not for anything security-related.
 */
#ifndef DRQA_RNG_H
#define DRQA_RNG_H

#include <stdint.h>

struct rng {
    uint64_t state;
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n) without modulo bias; n == 0 gives 0. */
uint32_t rng_below(struct rng *r, uint32_t n);

#endif
