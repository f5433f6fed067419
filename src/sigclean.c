/*
 * sigclean: temporary files removed on SIGTERM, SIGINT and SIGHUP (sigclean.h).
 *
 * The table is fixed and static so that the handler touches no allocator
 * and takes no lock: a slot moves FREE -> FILLING -> READY under atomics,
 * and the handler reads only READY slots, calling unlink(2) (async-signal
 * safe) on their paths.
 */
#include "sigclean.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define SIGCLEAN_SLOTS 8
#define SIGCLEAN_PATH 4096

enum { FREE, FILLING, READY };

static struct {
    atomic_int state;
    char path[SIGCLEAN_PATH];
} slots[SIGCLEAN_SLOTS];

static const int caught[] = {SIGTERM, SIGINT, SIGHUP};
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void unlink_with(const char *path, size_t n, const char *suffix)
{
    char p[SIGCLEAN_PATH + 16];
    size_t k = strlen(suffix);
    memcpy(p, path, n);
    memcpy(p + n, suffix, k + 1);
    unlink(p);
}

static void on_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < SIGCLEAN_SLOTS; i++) {
        if (atomic_load(&slots[i].state) != READY) continue;
        size_t n = strlen(slots[i].path);
        unlink(slots[i].path);
        unlink_with(slots[i].path, n, "-journal");
        unlink_with(slots[i].path, n, "-wal");
        unlink_with(slots[i].path, n, "-shm");
    }
    /* end as the signal would have: the default action, delivered when the
     * handler returns (the signal is blocked while it runs) */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    errno = saved;
}

static void install(void)
{
    for (size_t i = 0; i < sizeof caught / sizeof *caught; i++) {
        struct sigaction old, sa;
        if (sigaction(caught[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue;   /* ignored, or handled by the program: left as it is */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t k = 0; k < sizeof caught / sizeof *caught; k++) sigaddset(&sa.sa_mask, caught[k]);
        sigaction(caught[i], &sa, NULL);
    }
}

int sigclean_add(const char *path)
{
    size_t n = strlen(path);
    if (n >= SIGCLEAN_PATH) return -1;
    pthread_once(&installed, install);
    for (int i = 0; i < SIGCLEAN_SLOTS; i++) {
        int want = FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &want, FILLING)) continue;
        memcpy(slots[i].path, path, n + 1);
        atomic_store(&slots[i].state, READY);
        return i;
    }
    return -1;
}

void sigclean_remove(int slot)
{
    if (slot >= 0 && slot < SIGCLEAN_SLOTS) atomic_store(&slots[slot].state, FREE);
}
