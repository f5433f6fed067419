/*
 * watch: a directory tree watched with inotify (see watch.h). Each watch
 * descriptor maps to its directory's path so that a directory created or
 * moved in later can be watched in turn.
 */
#include "watch.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <fcntl.h>
#include <sys/inotify.h>

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | \
                    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
#define WATCH_MAX_DIRS 100000

struct watch {
    int fd;
    char **path;                 /* by watch descriptor; NULL when unused */
    size_t npath;
    size_t ndirs;
    int lost;                    /* a directory could not be watched: report a change at every look */
};

static int is_vcs(const char *name)
{
    return !strcmp(name, ".git") || !strcmp(name, ".hg") || !strcmp(name, ".svn");
}

/* Watches dir and every directory below it. -1 when the limit is met. */
static int add_tree(struct watch *w, const char *dir)
{
    if (w->ndirs >= WATCH_MAX_DIRS) return -1;
    int wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
    if (wd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -1;
    if ((size_t)wd >= w->npath) {
        size_t n = xgrow_cap(w->npath, (size_t)wd, 64);
        w->path = xreallocarray(w->path, n, sizeof *w->path);
        memset(w->path + w->npath, 0, (n - w->npath) * sizeof *w->path);
        w->npath = n;
    }
    if (!w->path[wd]) {
        w->path[wd] = xstrdup(dir);
        w->ndirs++;
    }
    DIR *d = opendir(dir);
    if (!d) return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_vcs(e->d_name)) continue;
        int isdir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;
            char *p = xasprintf("%s/%s", dir, e->d_name);
            isdir = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
            free(p);
        }
        if (!isdir) continue;
        char *sub = xasprintf("%s/%s", dir, e->d_name);
        rc = add_tree(w, sub);
        free(sub);
    }
    closedir(d);
    return rc;
}

struct watch *watch_open(const char *root, char *err, size_t errlen)
{
    struct watch *w = xcalloc(1, sizeof *w);
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0) {
        snprintf(err, errlen, "cannot watch '%s' for changes: %s", root, strerror(errno));
        free(w);
        return NULL;
    }
    if (add_tree(w, root)) {
        snprintf(err, errlen, "cannot watch every directory of '%s' for changes (%zu watched): %s", root, w->ndirs,
                 errno == ENOSPC ? "the inotify watch limit (fs.inotify.max_user_watches) is reached"
                                 : strerror(errno));
        watch_close(w);
        return NULL;
    }
    return w;
}

int watch_changed(struct watch *w)
{
    int changed = w->lost;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n <= 0) break;   /* EAGAIN: nothing more queued */
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_IGNORED) {
                if (ev->wd >= 0 && (size_t)ev->wd < w->npath && w->path[ev->wd]) {
                    free(w->path[ev->wd]);
                    w->path[ev->wd] = NULL;
                    w->ndirs--;
                }
                continue;
            }
            changed = 1;
            if (ev->mask & IN_Q_OVERFLOW) continue;
            /* a directory made or moved in: watch it and what it holds */
            if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && ev->len && !is_vcs(ev->name) &&
                ev->wd >= 0 && (size_t)ev->wd < w->npath && w->path[ev->wd]) {
                char *sub = xasprintf("%s/%s", w->path[ev->wd], ev->name);
                if (add_tree(w, sub)) w->lost = 1;
                free(sub);
            }
        }
    }
    return changed;
}

void watch_close(struct watch *w)
{
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    for (size_t i = 0; i < w->npath; i++) free(w->path[i]);
    free(w->path);
    free(w);
}

#else  /* no inotify: the caller walks the tree every time */

struct watch *watch_open(const char *root, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot watch '%s' for changes on this system", root);
    return NULL;
}

int watch_changed(struct watch *w)
{
    (void)w;
    return 1;
}

void watch_close(struct watch *w) { (void)w; }

#endif
