/*
 * rng: splitmix64 (Steele, Lea and Flood's mixing constants). One 64-bit
 * state word, a full period of 2^64 and good enough statistics for choosing
 * among tied candidates.
 */
#include "rng.h"

void rng_seed(struct rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
    if (n == 0) return 0;
    /* Reject the top partial block so every residue is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = rng_next(r);
    } while (x >= limit);
    return (uint32_t)(x % n);
}
