/*
 * scan_stat: stats the files a walk listed, on several threads (see
 * scan_stat.h).
 */
#include "scan_stat.h"
#include "util.h"

#include <fcntl.h>
#include <stdatomic.h>

/* A thread pays for itself only over a few thousand stats (one is a few
 * microseconds, starting a thread some tens); and few cores gain much more. */
#define SCAN_STAT_PER_THREAD 4096
#define SCAN_STAT_MAX_THREADS 8
/* Paths a thread takes at a time: threads that share a core with other work
 * still end together. */
#define SCAN_STAT_CHUNK 256

struct stat_run {
    int rootfd;
    size_t n;
    const char *(*path)(void *ctx, size_t i);
    void (*put)(void *ctx, size_t i, const struct stat *st);
    void *ctx;
    atomic_size_t next;
};

static void stat_part(void *arg, int part, int nparts)
{
    (void)part;
    (void)nparts;
    struct stat_run *r = arg;
    for (;;) {
        size_t from = atomic_fetch_add(&r->next, SCAN_STAT_CHUNK);
        if (from >= r->n) break;
        size_t to = from + SCAN_STAT_CHUNK < r->n ? from + SCAN_STAT_CHUNK : r->n;
        for (size_t i = from; i < to; i++) {
            struct stat st;
            if (fstatat(r->rootfd, r->path(r->ctx, i), &st, AT_SYMLINK_NOFOLLOW) == 0) r->put(r->ctx, i, &st);
        }
    }
}

void scan_stats_run(int rootfd, size_t n, const char *(*path)(void *ctx, size_t i),
                    void (*put)(void *ctx, size_t i, const struct stat *st), void *ctx, int threads)
{
    if (threads <= 0) {
        size_t want = n / SCAN_STAT_PER_THREAD;
        threads = ncores();
        if (threads > SCAN_STAT_MAX_THREADS) threads = SCAN_STAT_MAX_THREADS;
        if ((size_t)threads > want) threads = want ? (int)want : 1;
    }
    struct stat_run r = {.rootfd = rootfd, .n = n, .path = path, .put = put, .ctx = ctx};
    atomic_init(&r.next, 0);
    if (threads == 1) stat_part(&r, 0, 1);
    else run_parts(threads, stat_part, &r);
}
