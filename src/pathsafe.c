/*
 * pathsafe: keeps every caller-given path inside the repository (see
 * pathsafe.h). The index holds the text of every file, so actions read from
 * it; this check still runs first so that a refused path gets a clear answer
 * and a symlink pointing out of the tree is never followed by anyone.
 */
#include "pathsafe.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *pathsafe_normalize(const char *rel)
{
    size_t n = strlen(rel);
    char *out = xmalloc(n + 1);
    size_t o = 0;
    const char *p = rel;
    while (*p) {
        while (*p == '/') p++;
        const char *e = p;
        while (*e && *e != '/') e++;
        size_t len = (size_t)(e - p);
        if (len == 0) break;
        if (len == 1 && p[0] == '.') {
            /* skip */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (o == 0) { free(out); return NULL; }
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--;
        } else {
            if (o) out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p = e;
    }
    out[o] = 0;
    return out;
}

/* 1 when abs (a realpath) is root or lies below it. */
static int inside(const char *root, const char *abs)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/') return 1;
    return strncmp(abs, root, n) == 0 && (abs[n] == 0 || abs[n] == '/');
}

int pathsafe_resolve(const char *root_abs, const char *given, char **rel, char *err, size_t errlen)
{
    *rel = NULL;
    if (!given || !*given) {
        snprintf(err, errlen, "empty path: give a path relative to the repository root");
        return -1;
    }
    for (const char *c = given; *c; c++)
        if ((unsigned char)*c < 0x20) {
            snprintf(err, errlen, "path '%s' contains a control character", given);
            return -1;
        }
    char root[PATH_MAX];
    if (!realpath(root_abs, root)) {
        snprintf(err, errlen, "repository root '%s' cannot be resolved: %s", root_abs, strerror(errno));
        return -1;
    }
    const char *r = given;
    size_t rl = strlen(root_abs);
    if (given[0] == '/') {
        /* absolute: accepted only below the root (as given or as resolved) */
        if (strncmp(given, root_abs, rl) == 0 && (given[rl] == 0 || given[rl] == '/'))
            r = given + rl;
        else if (strncmp(given, root, strlen(root)) == 0 &&
                 (given[strlen(root)] == 0 || given[strlen(root)] == '/'))
            r = given + strlen(root);
        else {
            snprintf(err, errlen, "path '%s' is outside the repository; give a path relative to the repository root",
                     given);
            return -1;
        }
    }
    char *norm = pathsafe_normalize(r);
    if (!norm) {
        snprintf(err, errlen, "path '%s' leaves the repository through '..'; give a path relative to the repository root",
                 given);
        return -1;
    }
    /* Resolve the longest prefix that exists on disk: a symlink anywhere in it
     * must stay inside the root. */
    char *probe = xasprintf("%s/%s", root, norm);
    for (;;) {
        char real[PATH_MAX];
        if (realpath(probe, real)) {
            if (!inside(root, real)) {
                snprintf(err, errlen, "path '%s' resolves through a symbolic link to '%s', outside the repository",
                         given, real);
                free(probe);
                free(norm);
                return -1;
            }
            break;
        }
        char *slash = strrchr(probe, '/');
        if (!slash || (size_t)(slash - probe) <= strlen(root)) break;
        *slash = 0;
    }
    free(probe);
    *rel = norm;
    return 0;
}
