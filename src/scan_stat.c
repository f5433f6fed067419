/*
 * scan_stat: stats the files a walk listed, on several threads (see
 * scan_stat.h).
 */
#include "scan_stat.h"
#include "util.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A thread pays for itself only over a few thousand stats (one is a few
 * microseconds, starting a thread some tens); and few cores gain much more. */
#define SCAN_STAT_PER_THREAD 4096
#define SCAN_STAT_MAX_THREADS 8
/* Items a thread takes at a time: threads that share a core with other work
 * still end together. */
#define SCAN_STAT_CHUNK 256

void scan_stats_add(struct scan_stats *b, const char *rel, const struct lang *lang, int via_link)
{
    size_t len = strlen(rel) + 1;
    while (b->lpaths + len > b->cappaths) {
        b->cappaths = b->cappaths ? b->cappaths * 2 : 65536;
        b->paths = xrealloc(b->paths, b->cappaths);
    }
    memcpy(b->paths + b->lpaths, rel, len);
    ARRAY_GROW(b->items, b->n, b->cap, 256);
    struct scan_stat_item *it = &b->items[b->n++];
    memset(it, 0, sizeof *it);
    it->path = b->lpaths;
    it->lang = lang;
    it->via_link = via_link;
    b->lpaths += len;
}

struct stat_run {
    struct scan_stats *b;
    int rootfd;
    atomic_size_t next;
};

static void stat_one(struct scan_stats *b, int rootfd, size_t i)
{
    struct scan_stat_item *it = &b->items[i];
    struct stat st;
    if (fstatat(rootfd, b->paths + it->path, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    it->found = 1;
    it->mode = (unsigned)st.st_mode;
    it->size = (long long)st.st_size;
    it->dev = (long long)st.st_dev;
    it->ino = (long long)st.st_ino;
    it->mtim = st.st_mtim;
    it->ctim = st.st_ctim;
}

static void stat_part(void *ctx, int part, int nparts)
{
    (void)part;
    (void)nparts;
    struct stat_run *r = ctx;
    for (;;) {
        size_t from = atomic_fetch_add(&r->next, SCAN_STAT_CHUNK);
        if (from >= r->b->n) break;
        size_t to = from + SCAN_STAT_CHUNK < r->b->n ? from + SCAN_STAT_CHUNK : r->b->n;
        for (size_t i = from; i < to; i++) stat_one(r->b, r->rootfd, i);
    }
}

void scan_stats_run(struct scan_stats *b, int rootfd, int threads)
{
    if (threads <= 0) {
        size_t want = b->n / SCAN_STAT_PER_THREAD;
        threads = ncores();
        if (threads > SCAN_STAT_MAX_THREADS) threads = SCAN_STAT_MAX_THREADS;
        if ((size_t)threads > want) threads = want ? (int)want : 1;
    }
    struct stat_run r = {.b = b, .rootfd = rootfd};
    atomic_init(&r.next, 0);
    if (threads == 1) stat_part(&r, 0, 1);
    else run_parts(threads, stat_part, &r);
}

const char *scan_stats_path(const struct scan_stats *b, size_t i)
{
    return b->paths + b->items[i].path;
}

void scan_stats_get(const struct scan_stats *b, size_t i, struct stat *st)
{
    const struct scan_stat_item *it = &b->items[i];
    memset(st, 0, sizeof *st);
    st->st_mode = (mode_t)it->mode;
    st->st_size = (off_t)it->size;
    st->st_dev = (dev_t)it->dev;
    st->st_ino = (ino_t)it->ino;
    st->st_mtim = it->mtim;
    st->st_ctim = it->ctim;
}

void scan_stats_free(struct scan_stats *b)
{
    free(b->paths);
    free(b->items);
    memset(b, 0, sizeof *b);
}
