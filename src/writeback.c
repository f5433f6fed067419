/*
 * writeback: a file's dirty pages written back while it is being written
 * (writeback.h).
 */
#include "writeback.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct writeback {
    int fd;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int stop;
    int passes;   /* -1 once the call failed */
};

static void *run(void *arg)
{
    struct writeback *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec until = monotonic_after_ms(WRITEBACK_PERIOD_MS);
        while (!w->stop && pthread_cond_timedwait(&w->wake, &w->mu, &until) != ETIMEDOUT) {
        }
        if (w->stop) break;
        pthread_mutex_unlock(&w->mu);
        int rc = sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        pthread_mutex_lock(&w->mu);
        if (rc != 0) {
            w->passes = -1;
            break;
        }
        w->passes++;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct writeback *writeback_start(int fd)
{
    struct writeback *w = xcalloc(1, sizeof *w);
    w->fd = fd;
    pthread_mutex_init(&w->mu, NULL);
    cond_init_monotonic(&w->wake);
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

int writeback_stop(struct writeback *w)
{
    if (!w) return 0;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    int passes = w->passes;
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return passes;
}
