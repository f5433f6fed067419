/*
 * watch: whether anything changed under a directory tree since the last
 * look, without walking it. On Linux every directory of the tree (but
 * .git, .hg and .svn below the top) is watched with inotify; a look drains
 * the queued events, adding watches for directories made since. A write is
 * queued by the kernel before the write returns, so a change made before a
 * look is seen by it. Where the tree cannot be watched (no inotify, too many
 * directories for the user's watch limit) watch_open fails and the caller
 * walks the tree every time instead (index_update's own check).
 *
 * Threads: one caller at a time per watch (the caller's update lock).
 */
#ifndef DRQA_WATCH_H
#define DRQA_WATCH_H

#include <stddef.h>

struct watch;

/* Watches root. NULL with err when it cannot (see above). */
struct watch *watch_open(const char *root, char *err, size_t errlen);
/* 1 when anything under root changed since the previous call (or since
 * watch_open for the first), or when events were lost; 0 when nothing did. */
int watch_changed(struct watch *w);
void watch_close(struct watch *w);   /* accepts NULL */

#endif
