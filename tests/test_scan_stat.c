/*
 * test_scan_stat: a walk that stats its files on several threads lists the
 * same files, skips and rules as one that stats them on one, whether it reads
 * the directories, takes their recorded listings or takes git's list; and scan_stats gives every
 * path its own stat, in its place, leaving out a path that is gone.
 */
#include "tap.h"
#include "harness.h"
#include "index_scan.h"
#include "scan_stat.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Files enough that every thread takes several of scan_stats' chunks. */
#define NFILES 3000

static void put(const char *root, const char *rel, size_t size)
{
    char *p = xasprintf("%s/%s", root, rel);
    char *dir = xstrdup(p);
    for (char *s = strchr(dir + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(dir, 0755);
        *s = '/';
    }
    FILE *f = fopen(p, "w");
    /* sizes differ from file to file: a stat given to the wrong path shows */
    for (size_t i = 0; f && i < size; i++) fputc(i % 64 ? 'x' : '\n', f);
    if (f) fclose(f);
    free(dir);
    free(p);
}

/* Nested package directories, ignore files, links, a directory walked only
 * through a link, one left out by its contents, a lock file, a file over the
 * size limit, a name that is not UTF-8 and a directory that cannot be read. */
static void make_tree(const char *root)
{
    char rel[128];
    for (int i = 0; i < NFILES; i++) {
        snprintf(rel, sizeof rel, "pkg%d/sub%d/deep%d/m%04d.py", i % 7, i % 3, i % 2, i);
        put(root, rel, 1 + (size_t)i);
    }
    put(root, ".gitignore", 0);
    char *gi = xasprintf("%s/.gitignore", root);
    FILE *f = fopen(gi, "w");
    /* outside_walk is walked only through the link to it */
    if (f) fputs("pkg1/sub1/\n*_gen.py\n/outside_walk/\n", f);
    if (f) fclose(f);
    free(gi);
    put(root, "pkg2/a_gen.py", 10);
    put(root, "venv/pyvenv.cfg", 5);
    put(root, "venv/lib/site.py", 5);
    put(root, "outside_walk/target.py", 12);
    put(root, "pkg3/poetry.lock", 7);
    put(root, "pkg4/huge.py", 5000);
    put(root, "pkg5/caf\xe9.py", 9);
    put(root, "locked/secret.py", 9);
    char *p = xasprintf("%s/pkg0/link.py", root);
    ok(symlink("sub0/deep0/m0000.py", p) == 0, "a link to a file inside");
    free(p);
    p = xasprintf("%s/pkg6/linked", root);
    ok(symlink("../outside_walk", p) == 0, "a link to a directory inside");
    free(p);
    p = xasprintf("%s/pkg6/broken.py", root);
    ok(symlink("nowhere.py", p) == 0, "a broken link");
    free(p);
}

/* Sets every directory's times an hour back, so that a walk trusts the
 * listings it records; then makes one unreadable (unless the test runs as
 * root, whom that does not stop). */
static void age_dirs(const char *root)
{
    char *cmd = xasprintf("find '%s' -type d -exec touch -h -d '1 hour ago' {} +", root);
    ok(system(cmd) == 0, "directories aged");
    free(cmd);
    char *p = xasprintf("%s/locked", root);
    chmod(p, 0);
    free(p);
}

static int same_result(const struct scan_result *a, const struct scan_result *b, const char *what)
{
    int same = a->nfiles == b->nfiles && a->nskips == b->nskips && a->nrules == b->nrules;
    for (size_t i = 0; same && i < a->nfiles; i++) {
        const struct scan_file *x = &a->files[i], *y = &b->files[i];
        same = !strcmp(x->path, y->path) && x->lang == y->lang && x->size == y->size && x->mtime_ns == y->mtime_ns &&
               x->ctime_ns == y->ctime_ns && x->dev == y->dev && x->ino == y->ino && x->via_link == y->via_link;
        if (!same) printf("# file %zu: %s / %s\n", i, x->path, y->path);
    }
    for (size_t i = 0; same && i < a->nskips; i++) {
        const struct scan_skip *x = &a->skips[i], *y = &b->skips[i];
        same = !strcmp(x->path, y->path) && !strcmp(x->reason, y->reason) && x->size == y->size;
        if (!same) printf("# skip %zu: %s / %s\n", i, x->path, y->path);
    }
    for (size_t i = 0; same && i < a->nrules; i++)
        same = !strcmp(a->rules[i].rule, b->rules[i].rule) && a->rules[i].paths == b->rules[i].paths;
    if (!same) printf("# %zu/%zu files, %zu/%zu skips, %zu/%zu rules\n", a->nfiles, b->nfiles, a->nskips, b->nskips,
                      a->nrules, b->nrules);
    return ok(same, "%s: the same listing on 1 and on 4 threads", what);
}

/* Every file listed has the stat of the file at its path (through a link for
 * one found through a link), and every generated file not ignored is listed:
 * NFILES less those below pkg1/sub1 (i % 21 == 1). */
static void listing_true(const char *root, const struct scan_result *r)
{
    size_t generated = 0;
    int right = 1;
    for (size_t i = 0; i < r->nfiles; i++) {
        const struct scan_file *f = &r->files[i];
        char *p = xasprintf("%s/%s", root, f->path);
        struct stat st;
        int same = stat(p, &st) == 0 && st.st_ino == (ino_t)f->ino && st.st_size == f->size;
        if (right && !same) printf("# %s\n", f->path);
        right &= same;
        generated += strstr(f->path, "/m") != NULL;
        free(p);
    }
    ok(right, "each file listed has its own stat");
    is_int(generated, NFILES - (NFILES + 19) / 21, "every generated file not ignored is listed");
}

static int has_file(const struct scan_result *r, const char *path)
{
    for (size_t i = 0; i < r->nfiles; i++)
        if (!strcmp(r->files[i].path, path)) return 1;
    return 0;
}

/* The recorded listings of a walk, as the next walk is given them. */
static void recorded(const struct scan_dirs *from, struct scan_dirs *to)
{
    memset(to, 0, sizeof *to);
    for (size_t i = 0; i < from->nfresh; i++) {
        const struct scan_dir *d = &from->fresh[i];
        scan_dirs_add_old(to, d->path, strlen(d->path), d->dev, d->ino, d->mtime_ns, d->ctime_ns, d->entries, d->len);
    }
}

static void scan_both_ways(const char *root)
{
    char err[512] = "";
    struct scan_result one, four;
    struct scan_options so1 = {.max_file_size = 4000, .stat_threads = 1}, so4 = so1;
    so4.stat_threads = 4;
    struct scan_dirs first = {0}, d1, d4;
    is_int(scan_repo(root, &so1, &first, &one, err, sizeof err), 0, "walk on 1 thread %s", err);
    is_int(scan_repo(root, &so4, NULL, &four, err, sizeof err), 0, "walk on 4 threads %s", err);
    ok(one.nfiles > NFILES / 2, "the walk lists the tree (%zu files)", one.nfiles);
    ok(has_file(&one, "pkg6/linked/target.py") && has_file(&one, "pkg0/link.py"), "files through links are listed");
    ok(!has_file(&one, "pkg1/sub1/deep0/m0001.py") && !has_file(&one, "pkg2/a_gen.py"), "ignored files are not");
    listing_true(root, &four);
    same_result(&one, &four, "directories read");
    scan_result_free(&one);
    scan_result_free(&four);

    recorded(&first, &d1);
    recorded(&first, &d4);
    is_int(scan_repo(root, &so1, &d1, &one, err, sizeof err), 0, "cached walk on 1 thread %s", err);
    is_int(scan_repo(root, &so4, &d4, &four, err, sizeof err), 0, "cached walk on 4 threads %s", err);
    ok(d1.cached > 20 && d1.listed == 0 && d4.cached == d1.cached, "the recorded listings are used (%ld, %ld read)",
       d4.cached, d4.listed);
    listing_true(root, &four);
    same_result(&one, &four, "recorded listings");
    scan_result_free(&one);
    scan_result_free(&four);
    scan_dirs_free(&first);
    scan_dirs_free(&d1);
    scan_dirs_free(&d4);
}

static int has_skip(const struct scan_result *r, const char *path, const char *reason)
{
    for (size_t i = 0; i < r->nskips; i++)
        if (!strcmp(r->skips[i].path, path) && !strcmp(r->skips[i].reason, reason)) return 1;
    return 0;
}

/* The same tree as a git work tree: git's list is stat'ed together too. A
 * tracked link to a file inside is listed under the link's path, a broken
 * one is a skip, a tracked file deleted from the work tree is left out. */
static void scan_git(const char *root)
{
    char *cmd = xasprintf("cd '%s' && git init -q . && git add -A . && rm pkg3/gone.py", root);
    put(root, "pkg3/gone.py", 3);
    if (system(cmd) != 0) {
        free(cmd);
        printf("ok %d # skip git cannot make the work tree\n", ++tap_n);
        return;
    }
    free(cmd);
    char err[512] = "";
    struct scan_result one, four;
    struct scan_options so1 = {.max_file_size = 4000, .stat_threads = 1}, so4 = so1;
    so4.stat_threads = 4;
    is_int(scan_repo(root, &so1, NULL, &one, err, sizeof err), 0, "git list on 1 thread %s", err);
    is_int(scan_repo(root, &so4, NULL, &four, err, sizeof err), 0, "git list on 4 threads %s", err);
    ok(one.used_git && one.nfiles > NFILES / 2, "git's list is used (%zu files)", one.nfiles);
    ok(has_file(&four, "pkg0/link.py") && !has_file(&four, "pkg3/gone.py") && has_file(&four, "pkg0/sub0/deep0/m0000.py"),
       "a tracked link is listed under its path, a deleted file is not");
    ok(has_skip(&four, "pkg6/broken.py", "broken symlink") && has_skip(&four, "pkg4/huge.py", "too large (5000 bytes > 4000)"),
       "a broken link and a file over the limit are skips");
    listing_true(root, &four);
    same_result(&one, &four, "git's list");
    scan_result_free(&one);
    scan_result_free(&four);
}

/* scan_stats_run by itself: each path's stat goes to that path, and a path
 * gone since it was listed (a file deleted between the listing and its stat)
 * gets none, on any number of threads. */
struct batch {
    char **paths;
    struct stat *st;
    int *calls;
};

static const char *batch_path(void *ctx, size_t i) { return ((struct batch *)ctx)->paths[i]; }

static void batch_put(void *ctx, size_t i, const struct stat *st)
{
    struct batch *b = ctx;
    b->st[i] = *st;
    b->calls[i]++;
}

static void stats_in_place(const char *root)
{
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct batch b = {xcalloc(NFILES, sizeof *b.paths), xcalloc(NFILES, sizeof *b.st), xcalloc(NFILES, sizeof *b.calls)};
    for (int i = 0; i < NFILES; i++)
        b.paths[i] = xasprintf(i == 1234 ? "pkg%d/sub%d/deep%d/gone%04d.py" : "pkg%d/sub%d/deep%d/m%04d.py", i % 7,
                               i % 3, i % 2, i);
    for (int threads = 1; threads <= 3; threads += 2) {
        memset(b.calls, 0, NFILES * sizeof *b.calls);
        scan_stats_run(rootfd, NFILES, batch_path, batch_put, &b, threads);
        int right = 1;
        for (size_t i = 0; right && i < NFILES; i++) {
            struct stat want;
            int there = fstatat(rootfd, b.paths[i], &want, AT_SYMLINK_NOFOLLOW) == 0;
            right = there ? b.calls[i] == 1 && b.st[i].st_ino == want.st_ino && b.st[i].st_size == want.st_size &&
                                b.st[i].st_mode == want.st_mode
                          : b.calls[i] == 0;
            if (!right) printf("# path %zu (%s): %d calls\n", i, b.paths[i], b.calls[i]);
        }
        ok(right, "%d thread(s): every path has its own stat", threads);
        ok(b.calls[1234] == 0, "%d thread(s): a path gone has none", threads);
    }
    for (int i = 0; i < NFILES; i++) free(b.paths[i]);
    free(b.paths);
    free(b.st);
    free(b.calls);
    close(rootfd);
}

int main(void)
{
    char dir[256];
    if (!temp_dir(dir, sizeof dir, "scanstat")) {
        printf("Bail out! cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    char *root = xasprintf("%s/repo", dir);
    mkdir(root, 0755);
    make_tree(root);
    age_dirs(root);
    scan_both_ways(root);
    stats_in_place(root);
    char *locked = xasprintf("%s/locked", root);
    chmod(locked, 0755);
    free(locked);
    scan_git(root);
    remove_tree(dir);
    free(root);
    return done_testing();
}
