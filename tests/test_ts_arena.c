/*
 * test_ts_arena: tree-sitter's memory a file at a time (src/ts_arena.h).
 * The allocation functions tree-sitter is given, called directly: blocks
 * reused by class, calloc zeroing a reused block, realloc keeping the bytes,
 * blocks of whole slabs, glibc's blocks freed as glibc's. Then through
 * tree-sitter: a tree made in an arena is the tree made without one, the
 * next file starts again from the bottom of the arena, a file too large for
 * the arena takes the rest from glibc and says so, and a tree made without
 * an arena is freed as usual while one is begun.
 */
#include "tap.h"
#include "ts_arena.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

/* tree-sitter's allocation functions, as ts_set_allocator set them */
extern void *(*ts_current_malloc)(size_t);
extern void *(*ts_current_calloc)(size_t, size_t);
extern void *(*ts_current_realloc)(void *, size_t);
extern void (*ts_current_free)(void *);

#define SMALL_RESERVE ((size_t)64 << 16)   /* 64 slabs: 4 MiB */

static void test_blocks(void)
{
    struct ts_arena *a = ts_arena_new(0);
    ok(a != NULL, "an arena reserves its address space");
    if (!a) return;
    ts_arena_begin(a);
    ok(ts_arena_reclaims(), "an arena begun holds what tree-sitter allocates");
    char *p = ts_current_malloc(24);
    ok(p && ((uintptr_t)p & 15) == 0, "blocks are 16-byte aligned");
    ts_current_free(p);
    ok(ts_current_malloc(20) == p, "a freed block is the next of its class");
    memset(p, 0xAA, 32);
    ts_current_free(p);
    unsigned char *z = ts_current_calloc(2, 16);
    int zero = z == (unsigned char *)p;
    for (int i = 0; i < 32; i++) zero = zero && z[i] == 0;
    ok(zero, "calloc clears a reused block");
    char *r = ts_current_malloc(40);
    memcpy(r, "0123456789abcdefghijklmnopqrstuvwxyzABC", 40);
    ok(ts_current_realloc(r, 48) == r, "realloc within the block's class keeps the block");
    char *r2 = ts_current_realloc(r, 3000);
    ok(r2 != r && memcmp(r2, "0123456789abcdefghijklmnopqrstuvwxyzABC", 40) == 0,
       "realloc past the class moves the bytes");
    ok(ts_current_malloc(48) == r, "and frees the old block");
    char *big = ts_current_malloc((size_t)100 << 10);
    memset(big, 1, (size_t)100 << 10);
    ok(big && ((uintptr_t)big & 15) == 0, "a block of whole slabs");
    big = ts_current_realloc(big, (size_t)300 << 10);
    ok(big[0] == 1 && big[(100 << 10) - 1] == 1, "grows with its bytes");
    ts_current_free(big);
    char *g = malloc(64);   /* glibc's, freed while the arena is begun */
    ts_current_free(g);
    char *g2 = malloc(64);
    g2 = ts_current_realloc(g2, 128);   /* glibc's stays glibc's */
    ts_arena_end(a);
    ts_current_free(g2);
    ok(!ts_arena_reclaims(), "nothing is held once the arena ends");
    ok(ts_arena_peak(a) >= ((size_t)400 << 10), "the peak counts the whole slabs");
    void *m = ts_current_malloc(24);
    ok(m != p, "without an arena, blocks are glibc's");
    ts_current_free(m);
    ts_arena_begin(a);
    ok(ts_current_malloc(24) == p, "the next file starts again from the bottom");
    ts_arena_end(a);
    ts_arena_free(a);
}

static char *tree_text(TSTree *t)
{
    char *s = ts_node_string(ts_tree_root_node(t));
    char *c = xstrdup(s);
    ts_current_free(s);   /* the arena's or glibc's: the function knows which */
    return c;
}

/* A module of n functions, each calling the one before. */
static char *module(int n)
{
    struct buf b = BUF_INIT;
    for (int i = 0; i < n; i++)
        buf_printf(&b, "def f%d(x, y=%d):\n    return f%d(x + %d, [y, 'v%d'])\n\n", i, i, i ? i - 1 : 0, i, i);
    return buf_take(&b);
}

static TSTree *parse(TSParser *p, const char *src)
{
    return ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
}

static void test_trees(void)
{
    char *small = module(5), *large = module(2000);
    TSParser *plain = ts_parser_new();
    ts_parser_set_language(plain, tree_sitter_python());
    TSTree *t = parse(plain, small);
    char *want_small = tree_text(t);
    ts_tree_delete(t);
    t = parse(plain, large);
    char *want_large = tree_text(t);
    TSTree *keep = parse(plain, small);   /* freed later, inside an arena */
    ts_tree_delete(t);

    struct ts_arena *a = ts_arena_new(SMALL_RESERVE);
    ok(a != NULL, "a small arena");
    if (!a) return;
    const void *first_root = NULL;
    for (int round = 0; round < 2; round++) {
        ts_arena_begin(a);
        TSParser *p = ts_parser_new();
        ts_parser_set_language(p, tree_sitter_python());
        t = parse(p, small);
        char *got = tree_text(t);
        is_str(got, want_small, "round %d: the tree made in the arena is the tree made without one", round);
        ok(ts_arena_reclaims(), "round %d: all of it in the arena", round);
        if (round == 0) first_root = ts_tree_root_node(t).id;
        else ok(ts_tree_root_node(t).id == first_root, "round 1: the same blocks again, from the bottom");
        free(got);
        ts_parser_delete(p);
        ts_arena_end(a);
    }
    size_t peak_small = ts_arena_peak(a);
    ok(peak_small > 0 && peak_small <= SMALL_RESERVE, "the small module fits in the arena (%zu bytes)", peak_small);

    ts_arena_begin(a);
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    t = parse(p, large);
    ok(!ts_arena_reclaims(), "a large module runs out of the arena's room");
    char *got = tree_text(t);
    is_str(got, want_large, "its tree, partly glibc's, is the tree made without an arena");
    free(got);
    ts_tree_delete(t);   /* as the caller must, since the arena does not hold it all */
    ts_tree_delete(keep);   /* a tree made without an arena: glibc's blocks */
    ts_parser_delete(p);
    ts_arena_end(a);
    ok(ts_arena_peak(a) == SMALL_RESERVE, "the arena was used to its end");

    ts_arena_begin(a);
    ok(ts_arena_reclaims(), "the next file begins with the arena's whole room");
    ts_arena_end(a);
    ts_arena_free(a);
    ts_parser_delete(plain);
    free(want_small);
    free(want_large);
    free(small);
    free(large);
}

int main(void)
{
    ts_arena_install();
    ts_arena_install();   /* a second call does nothing */
    test_blocks();
    test_trees();
    return done_testing();
}
