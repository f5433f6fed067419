/*
 * history: the question line's history, kept across runs in
 * $XDG_STATE_HOME/drqa-tui/history (default ~/.local/state/drqa-tui/history),
 * one question per line, oldest first, at most UI_HISTORY_MAX of them. The
 * file is read once at start and appended to when a question is asked, so
 * two front ends running at once both keep theirs. Written owner-only; a
 * history that cannot be read or written costs the history, nothing else.
 * No curses here.
 */
#include "history.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *ui_history_path(void)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') return xasprintf("%s/drqa-tui/history", xdg);
    if (home && *home) return xasprintf("%s/.local/state/drqa-tui/history", home);
    return NULL;
}

static void push(struct ui_history *h, const char *line)
{
    if (!*line) return;
    if (h->n && !strcmp(h->v[h->n - 1], line)) return;   /* a repeat is kept once */
    if (h->n == UI_HISTORY_MAX) {
        free(h->v[0]);
        memmove(h->v, h->v + 1, (size_t)(h->n - 1) * sizeof *h->v);
        h->n--;
    }
    ARRAY_GROW(h->v, h->n, h->cap, 32);
    h->v[h->n++] = xstrdup(line);
}

void ui_history_load(struct ui_history *h, const char *path)
{
    memset(h, 0, sizeof *h);
    h->pos = -1;
    if (!path) return;
    h->path = xstrdup(path);
    FILE *f = fopen(path, "r");
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        push(h, line);
    }
    free(line);
    fclose(f);
}

/* mkdir -p of path's directory, owner-only for what it creates. */
static int make_parent(const char *path)
{
    char *d = xstrdup(path);
    char *slash = strrchr(d, '/');
    int rc = 0;
    if (slash && slash != d) {
        *slash = 0;
        for (char *p = d + 1;; p++) {
            if (*p != '/' && *p) continue;
            char c = *p;
            *p = 0;
            if (mkdir(d, 0700) != 0 && errno != EEXIST) { rc = -1; break; }
            *p = c;
            if (!c) break;
        }
    }
    free(d);
    return rc;
}

int ui_history_add(struct ui_history *h, const char *line, char *err, size_t errlen)
{
    h->pos = -1;
    if (h->aside && !strcmp(h->aside, line)) {
        free(h->aside);   /* asked after all: an entry like any other now */
        h->aside = NULL;
    }
    /* one line per entry: a newline or a carriage return would split it */
    char *flat = xstrdup(line);
    for (char *p = flat; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    int repeat = h->n && !strcmp(h->v[h->n - 1], flat);
    push(h, flat);
    int rc = 0;
    if (h->path && *flat && !repeat) {
        int fd = -1;
        if (make_parent(h->path) == 0)
            fd = open(h->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "cannot keep the question in the history '%s': %s", h->path,
                     strerror(errno));
            rc = -1;
        } else {
            struct buf b = BUF_INIT;
            buf_printf(&b, "%s\n", flat);
            if (write(fd, b.data, b.len) != (ssize_t)b.len) {
                snprintf(err, errlen, "cannot write the history '%s': %s", h->path, strerror(errno));
                rc = -1;
            }
            buf_free(&b);
            close(fd);
        }
    }
    free(flat);
    return rc;
}

/* Entry i of the history as browsed: the file's and this run's questions,
 * then the question put aside, if any. */
static const char *entry(const struct ui_history *h, int i)
{
    return i < h->n ? h->v[i] : h->aside;
}

const char *ui_history_move(struct ui_history *h, int dir, const char *current)
{
    int n = h->n + (h->aside ? 1 : 0);
    if (n == 0) return NULL;
    if (h->pos < 0) {
        if (dir > 0) return NULL;          /* below the newest: nothing newer */
        free(h->draft);
        h->draft = xstrdup(current ? current : "");
        h->pos = n - 1;
        return entry(h, h->pos);
    }
    int to = h->pos + dir;
    if (to < 0) return entry(h, h->pos);    /* the oldest stays */
    if (to >= n) {
        h->pos = -1;
        return h->draft ? h->draft : "";
    }
    h->pos = to;
    return entry(h, h->pos);
}

void ui_history_aside(struct ui_history *h, const char *text)
{
    free(h->aside);
    h->aside = *text ? xstrdup(text) : NULL;
    h->pos = -1;
}

void ui_history_reset(struct ui_history *h)
{
    h->pos = -1;
}

void ui_history_free(struct ui_history *h)
{
    for (int i = 0; i < h->n; i++) free(h->v[i]);
    free(h->v);
    free(h->draft);
    free(h->aside);
    free(h->path);
    memset(h, 0, sizeof *h);
}
