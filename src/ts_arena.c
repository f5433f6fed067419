/*
 * ts_arena: tree-sitter's memory for one file at a time (ts_arena.h).
 *
 * The reservation is cut into slabs of TS_SLAB bytes, taken in order from
 * the bottom. A slab holds blocks of one size class; its first
 * TS_SLAB_HEAD bytes say which, so a block's class is found from its
 * address. Classes go by 16 bytes up to 1 KiB, then by powers of two up to
 * 16 KiB; a freed block goes on its class's free list for the next block of
 * that class. A block larger than the largest class takes whole slabs of
 * its own, kept until the arena ends (tree-sitter makes few: under 1 MB in
 * all for any of sympy's files). Ending the arena empties the free lists
 * and starts from the bottom again.
 */
#include "ts_arena.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tree_sitter/api.h>

#define TS_SLAB ((size_t)1 << 16)
#define TS_SLAB_HEAD 16
#define TS_SMALL_CLASSES 64                       /* 16 .. 1024 by 16 */
#define TS_CLASSES (TS_SMALL_CLASSES + 4)         /* then 2, 4, 8, 16 KiB */
#define TS_LARGEST ((size_t)16 << 10)
#define TS_WHOLE 0xffffffffu                      /* a slab header: a block of whole slabs */

struct ts_arena {
    char *map;                   /* the reservation, as mmap returned it */
    size_t maplen;
    char *base, *end;            /* its slabs */
    char *top;                   /* the next slab to take */
    char *touched;               /* pages below it may be resident */
    void *free_list[TS_CLASSES];
    char *bump[TS_CLASSES], *bump_end[TS_CLASSES];   /* the class's open slab */
    int spilled;                 /* a block came from glibc since begin */
    size_t peak;
};

struct slab_head {
    uint32_t cls;                /* a class, or TS_WHOLE */
    uint32_t nslabs;             /* for TS_WHOLE: how many slabs the block takes */
};

static __thread struct ts_arena *current;

static size_t class_size(unsigned c)
{
    return c < TS_SMALL_CLASSES ? (size_t)(c + 1) * 16 : (size_t)1024 << (c - TS_SMALL_CLASSES + 1);
}

static unsigned class_of(size_t n)
{
    if (n <= 1024) return n ? (unsigned)((n + 15) >> 4) - 1 : 0;
    unsigned c = TS_SMALL_CLASSES;
    while (class_size(c) < n) c++;
    return c;
}

static int owns(const struct ts_arena *a, const void *p)
{
    return (const char *)p >= a->base && (const char *)p < a->end;
}

static struct slab_head *head_of(const void *p)
{
    return (struct slab_head *)((uintptr_t)p & ~(uintptr_t)(TS_SLAB - 1));
}

static char *take_slabs(struct ts_arena *a, size_t k)
{
    if ((size_t)(a->end - a->top) / TS_SLAB < k) return NULL;
    char *s = a->top;
    a->top += k * TS_SLAB;
    if (a->top > a->touched) a->touched = a->top;
    return s;
}

static void *arena_alloc(struct ts_arena *a, size_t n)
{
    if (n > TS_LARGEST) {
        if (n > SIZE_MAX - TS_SLAB) return NULL;
        size_t k = (n + TS_SLAB_HEAD + TS_SLAB - 1) / TS_SLAB;
        if (k > UINT32_MAX) return NULL;
        char *s = take_slabs(a, k);
        if (!s) return NULL;
        *(struct slab_head *)s = (struct slab_head){TS_WHOLE, (uint32_t)k};
        return s + TS_SLAB_HEAD;
    }
    unsigned c = class_of(n);
    void *p = a->free_list[c];
    if (p) {
        a->free_list[c] = *(void **)p;
        return p;
    }
    size_t sz = class_size(c);
    if (!a->bump[c] || (size_t)(a->bump_end[c] - a->bump[c]) < sz) {
        char *s = take_slabs(a, 1);
        if (!s) return NULL;
        *(struct slab_head *)s = (struct slab_head){c, 1};
        a->bump[c] = s + TS_SLAB_HEAD;
        a->bump_end[c] = s + TS_SLAB;
    }
    p = a->bump[c];
    a->bump[c] += sz;
    return p;
}

static size_t block_size(const void *p)
{
    const struct slab_head *h = head_of(p);
    return h->cls == TS_WHOLE ? (size_t)h->nslabs * TS_SLAB - TS_SLAB_HEAD : class_size(h->cls);
}

static void arena_release(struct ts_arena *a, void *p)
{
    const struct slab_head *h = head_of(p);
    if (h->cls == TS_WHOLE) return;   /* its slabs come back when the arena ends */
    *(void **)p = a->free_list[h->cls];
    a->free_list[h->cls] = p;
}

/* ---- what tree-sitter calls ---- */

static void *hook_malloc(size_t n)
{
    struct ts_arena *a = current;
    if (a) {
        void *p = arena_alloc(a, n);
        if (p) return p;
        a->spilled = 1;
    }
    return xmalloc(n);
}

static void *hook_calloc(size_t m, size_t n)
{
    struct ts_arena *a = current;
    if (a && (n == 0 || m <= SIZE_MAX / n)) {
        void *p = arena_alloc(a, m * n);
        if (p) return memset(p, 0, m * n);
        a->spilled = 1;
    }
    return xcalloc(m, n);
}

static void *hook_realloc(void *p, size_t n)
{
    if (!p) return hook_malloc(n);
    struct ts_arena *a = current;
    if (!a || !owns(a, p)) return xrealloc(p, n);
    size_t o = block_size(p);
    if (n <= o) return p;
    void *q = hook_malloc(n);
    memcpy(q, p, o);
    arena_release(a, p);
    return q;
}

static void hook_free(void *p)
{
    if (!p) return;
    struct ts_arena *a = current;
    if (a && owns(a, p)) arena_release(a, p);
    else free(p);
}

static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void install(void)
{
    ts_set_allocator(hook_malloc, hook_calloc, hook_realloc, hook_free);
}

void ts_arena_install(void)
{
    pthread_once(&install_once, install);
}

struct ts_arena *ts_arena_new(size_t reserve)
{
    if (!reserve) reserve = TS_ARENA_RESERVE;
    reserve = (reserve + TS_SLAB - 1) & ~(TS_SLAB - 1);
    if (reserve > SIZE_MAX - TS_SLAB) return NULL;
    size_t len = reserve + TS_SLAB;   /* room to align the first slab */
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    struct ts_arena *a = xcalloc(1, sizeof *a);
    a->map = m;
    a->maplen = len;
    a->base = (char *)(((uintptr_t)m + TS_SLAB - 1) & ~(uintptr_t)(TS_SLAB - 1));
    a->end = a->base + reserve;
    a->top = a->touched = a->base;
    return a;
}

void ts_arena_free(struct ts_arena *a)
{
    if (!a) return;
    if (current == a) current = NULL;
    munmap(a->map, a->maplen);
    free(a);
}

void ts_arena_begin(struct ts_arena *a)
{
    current = a;
    a->spilled = 0;
}

void ts_arena_end(struct ts_arena *a)
{
    if (current == a) current = NULL;
    size_t used = (size_t)(a->top - a->base);
    if (used > a->peak) a->peak = used;
    if ((size_t)(a->touched - a->base) > TS_ARENA_KEEP) {
        madvise(a->base + TS_ARENA_KEEP, (size_t)(a->touched - a->base) - TS_ARENA_KEEP, MADV_DONTNEED);
        a->touched = a->base + TS_ARENA_KEEP;
    }
    a->top = a->base;
    memset(a->free_list, 0, sizeof a->free_list);
    memset(a->bump, 0, sizeof a->bump);
    memset(a->bump_end, 0, sizeof a->bump_end);
}

int ts_arena_reclaims(void)
{
    return current && !current->spilled;
}

size_t ts_arena_peak(const struct ts_arena *a)
{
    return a ? a->peak : 0;
}
