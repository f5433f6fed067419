/*
 * log: the thread-safe log file. Messages carry a timestamp; URL credentials
 * and registered secrets are redacted before they are written (log.c).
 * util.h includes this header, so every module can log.
 */
#ifndef DRQA_LOG_H
#define DRQA_LOG_H

/* Opens (appends to) path, owner-only; log_open(NULL) disables logging. 0, or -1 when it cannot be opened. */
int log_open(const char *path);
void log_close(void);
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
