/*
 * log: the thread-safe log file (--log). Every message is stamped and passes
 * the redactions first: a URL's credentials (url.h) and the secrets the
 * program registered (secret_add) never reach the file.
 */
#include "log.h"
#include "url.h"
#include "util.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_fp;

int log_open(const char *path)
{
    pthread_mutex_lock(&log_lock);
    if (log_fp) fclose(log_fp);
    log_fp = NULL;
    if (path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) log_fp = fdopen(fd, "a");
    }
    int ok = !path || log_fp;
    pthread_mutex_unlock(&log_lock);
    return ok ? 0 : -1;
}

void log_close(void) { log_open(NULL); }

void log_msg(const char *fmt, ...)
{
    pthread_mutex_lock(&log_lock);
    if (log_fp) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        fprintf(log_fp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
        struct buf b = BUF_INIT;
        va_list ap;
        va_start(ap, fmt);
        buf_vprintf(&b, fmt, ap);
        va_end(ap);
        char *safe = url_redact_text(buf_str(&b));   /* a URL's credentials never reach the file */
        char *clean = secret_scrub(safe);            /* nor a key, whole or cut short */
        fputs(clean, log_fp);
        free(clean);
        free(safe);
        buf_free(&b);
        fputc('\n', log_fp);
        fflush(log_fp);
    }
    pthread_mutex_unlock(&log_lock);
}
