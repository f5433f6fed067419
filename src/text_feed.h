/*
 * text_feed: the files' texts, read from a statement in its order on a thread
 * of their own while the caller works on the ones read before.
 */
#ifndef DRQA_TEXT_FEED_H
#define DRQA_TEXT_FEED_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>

/* The files' texts for action_cache_normtext, read in path order on a
 * thread of their own while the caller normalises the ones read before:
 * reading a text inflates it (store_text.h), which costs about as much as
 * normalising it, and the first FindCodeSnippet that scans the whole index
 * waits for both. The connection is the reader's alone until text_feed_end.
 * Without a thread the caller reads each text itself. */
#define FEED_TEXTS 512                  /* texts read ahead at most ... */
#define FEED_BYTES ((size_t)4 << 20)    /* ... and bytes of them */
/* Each side waits for half the queue before waking the other, not for one
 * text: a handover per text of a hundred thousand small ones was a futex
 * wait and wake each, a cost of its own on a loaded machine. Half of 64
 * still made 3,000 handovers on the generated 100,000-file tree: with 512
 * its normalising took 514 ms CPU at best instead of 644 (median 630 and
 * 685, under load 6-7), and FEED_BYTES still bounds the memory. */
#define FEED_HALF (FEED_TEXTS / 2)

struct feed_item {
    long long id;
    char *path, *text;
    size_t len;
};

struct text_feed {
    sqlite3_stmt *st;
    int threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t more, room;
    struct feed_item q[FEED_TEXTS];
    size_t head, n, bytes;
    int done, stop;          /* the reader has finished (rc, err); the caller wants no more */
    int blocked;             /* the reader waits for room */
    int rc;
    char *err;
};

/* Starts reading st's rows (id, path, text) on a thread; without one the
 * caller reads each row itself in text_feed_next. */
void text_feed_start(struct text_feed *f, sqlite3_stmt *st);
/* The next text (the caller frees its path and text): 1, or 0 at the end,
 * with text_feed_end saying how it ended. */
int text_feed_next(struct text_feed *f, struct feed_item *it);
/* Stops the reader (the caller may stop before the end) and finalizes the
 * statement. SQLITE_DONE when every text was read or the caller stopped,
 * else the error, with sqlite's message in *err (the caller frees it). */
int text_feed_end(struct text_feed *f, int read_all, char **err);

#endif
