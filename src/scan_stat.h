/*
 * scan_stat: the stats of the files a walk lists, taken together once the
 * walk is done, on several threads. A walk that reuses its recorded directory
 * listings does little else than stat every file, one system call each: a
 * tree of 100,000 files spends most of a no-change check there, and the calls
 * are independent. Each file keeps its place in the batch, so what the scan
 * does with the stats afterwards does not depend on the number of threads.
 */
#ifndef DRQA_SCAN_STAT_H
#define DRQA_SCAN_STAT_H

#include <stddef.h>
#include <sys/stat.h>

struct lang;

struct scan_stat_item {
    size_t path;              /* offset of the path (relative to the root) in the batch's paths */
    const struct lang *lang;
    int via_link;             /* found under a directory reached through a symlink */
    int found;                /* 1 when the stat succeeded */
    unsigned mode;
    long long size, dev, ino;
    struct timespec mtim, ctim;
};

struct scan_stats {
    char *paths; size_t lpaths, cappaths;   /* NUL-terminated paths, one after another */
    struct scan_stat_item *items; size_t n, cap;
};

/* Queues rel (relative to the root) to be stat'ed. */
void scan_stats_add(struct scan_stats *b, const char *rel, const struct lang *lang, int via_link);

/* Stats every queued path against rootfd without following a final symlink,
 * as fstatat(rootfd, rel, AT_SYMLINK_NOFOLLOW) does: a path that is gone (or
 * otherwise cannot be stat'ed) is left with found = 0. threads: how many to
 * use, 0 for one per core when the batch is large enough to gain from it. */
void scan_stats_run(struct scan_stats *b, int rootfd, int threads);

/* The path of item i, and its stat as a struct stat (the fields the scan
 * uses: mode, size, times, device and inode; the rest zero). */
const char *scan_stats_path(const struct scan_stats *b, size_t i);
void scan_stats_get(const struct scan_stats *b, size_t i, struct stat *st);

void scan_stats_free(struct scan_stats *b);

#endif
