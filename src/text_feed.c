/*
 * text_feed: the files' texts read ahead on a thread (see text_feed.h).
 */
#include "text_feed.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The statement's next row as an item; SQLITE_ROW, or its end (SQLITE_DONE)
 * or error, with sqlite's message in *err. */
static int feed_step(struct text_feed *f, struct feed_item *it, char **err)
{
    int rc = sqlite3_step(f->st);
    if (rc == SQLITE_ROW) {
        it->id = sqlite3_column_int64(f->st, 0);
        it->path = xstrdup((const char *)sqlite3_column_text(f->st, 1));
        it->len = (size_t)sqlite3_column_bytes(f->st, 2);
        it->text = xmalloc(it->len + 1);
        if (it->len) memcpy(it->text, sqlite3_column_blob(f->st, 2), it->len);
        it->text[it->len] = 0;
    } else if (rc != SQLITE_DONE) {
        *err = xstrdup(sqlite3_errmsg(sqlite3_db_handle(f->st)));
    }
    return rc;
}

static void *feed_run(void *arg)
{
    struct text_feed *f = arg;
    char *err = NULL;
    int rc;
    struct feed_item it;
    while ((rc = feed_step(f, &it, &err)) == SQLITE_ROW) {
        pthread_mutex_lock(&f->mu);
        if (!f->stop && (f->n == FEED_TEXTS || (f->n && f->bytes + it.len > FEED_BYTES))) {
            f->blocked = 1;
            pthread_cond_signal(&f->more);   /* the caller may be waiting for half a queue */
            while (!f->stop && f->n && (f->n > FEED_HALF || f->bytes + it.len > FEED_BYTES / 2))
                pthread_cond_wait(&f->room, &f->mu);
            f->blocked = 0;
        }
        if (f->stop) {
            pthread_mutex_unlock(&f->mu);
            free(it.path);
            free(it.text);
            rc = SQLITE_DONE;
            break;
        }
        f->q[(f->head + f->n++) % FEED_TEXTS] = it;
        f->bytes += it.len;
        if (f->n >= FEED_HALF) pthread_cond_signal(&f->more);
        pthread_mutex_unlock(&f->mu);
    }
    pthread_mutex_lock(&f->mu);
    f->done = 1;
    f->rc = rc;
    f->err = err;
    pthread_cond_signal(&f->more);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

void text_feed_start(struct text_feed *f, sqlite3_stmt *st)
{
    memset(f, 0, sizeof *f);
    f->st = st;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->more, NULL);
    pthread_cond_init(&f->room, NULL);
    f->threaded = pthread_create(&f->thread, NULL, feed_run, f) == 0;
}

int text_feed_next(struct text_feed *f, struct feed_item *it)
{
    if (!f->threaded) {
        if (f->done) return 0;
        int rc = feed_step(f, it, &f->err);
        if (rc == SQLITE_ROW) return 1;
        f->done = 1;
        f->rc = rc;
        return 0;
    }
    pthread_mutex_lock(&f->mu);
    while (!f->done && (!f->n || (f->n < FEED_HALF && !f->blocked))) pthread_cond_wait(&f->more, &f->mu);
    int got = f->n > 0;
    if (got) {
        *it = f->q[f->head];
        f->head = (f->head + 1) % FEED_TEXTS;
        f->n--;
        f->bytes -= it->len;
        if (f->blocked && (!f->n || (f->n <= FEED_HALF && f->bytes <= FEED_BYTES / 2))) pthread_cond_signal(&f->room);
    }
    pthread_mutex_unlock(&f->mu);
    return got;
}

int text_feed_end(struct text_feed *f, int read_all, char **err)
{
    if (f->threaded) {
        pthread_mutex_lock(&f->mu);
        f->stop = 1;
        pthread_cond_signal(&f->room);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
        for (; f->n; f->n--, f->head = (f->head + 1) % FEED_TEXTS) {
            free(f->q[f->head].path);
            free(f->q[f->head].text);
        }
    }
    pthread_cond_destroy(&f->room);
    pthread_cond_destroy(&f->more);
    pthread_mutex_destroy(&f->mu);
    sqlite3_finalize(f->st);
    int rc = read_all && f->done ? f->rc : SQLITE_DONE;
    if (rc != SQLITE_DONE) *err = f->err;
    else free(f->err);
    return rc;
}
