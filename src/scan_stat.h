/*
 * scan_stat: the stats of the files a walk lists, taken together once the
 * walk is done, on several threads. A walk that reuses its recorded directory
 * listings does little else than stat every file, one system call each: a
 * tree of 100,000 files spent most of a no-change check there, and the calls
 * are independent. Each stat goes to the file it is of, so what the scan does
 * with them afterwards does not depend on the number of threads.
 */
#ifndef DRQA_SCAN_STAT_H
#define DRQA_SCAN_STAT_H

#include <stddef.h>
#include <sys/stat.h>

/* Stats the n paths path(ctx, i) (relative to the directory rootfd) as
 * fstatat(rootfd, path, AT_SYMLINK_NOFOLLOW) does, and hands each stat taken
 * to put(ctx, i, st), on whichever thread took it: put must only write what
 * belongs to i. A path that is gone (or cannot be stat'ed) gets no call.
 * threads: how many to use, 0 for one per core when there are enough paths
 * to gain from it. */
void scan_stats_run(int rootfd, size_t n, const char *(*path)(void *ctx, size_t i),
                    void (*put)(void *ctx, size_t i, const struct stat *st), void *ctx, int threads);

#endif
