/*
 * sigclean: temporary files removed when a catchable signal ends the
 * process. A fresh index is built in a side file (INDEX.tmp) that can reach
 * hundreds of megabytes; SIGTERM, SIGINT or SIGHUP during the build must not
 * leave it behind. A path is registered while its file exists and is ours;
 * the handler unlinks every registered path (and its sqlite -journal, -wal
 * and -shm) and then lets the signal end the process as it would have
 * (the shell sees status 128+N). The handler is installed only for a signal
 * whose disposition is still the default: a front end with handlers of its
 * own (the curses UI) cancels and cleans up its updates itself.
 */
#ifndef DRQA_SIGCLEAN_H
#define DRQA_SIGCLEAN_H

/* Registers path (copied); returns a slot for sigclean_remove, or -1 when
 * the table is full or the path too long (the file is then only removed by
 * the normal cleanup). */
int sigclean_add(const char *path);

/* Forgets a slot (-1 is ignored): call before the file is renamed or removed. */
void sigclean_remove(int slot);

#endif
