/*
 * scan: lists the source files of a repository (see scan.h). git decides what
 * belongs to a work tree because it already knows the ignore rules; outside
 * git a walk with a fixed list of directories that never hold the project's
 * own code. Symlinks are followed only when they stay inside the root, and
 * directories are tracked by (device, inode) so that a link back up the tree
 * cannot make the walk loop or list a directory twice.
 */
#include "scan.h"
#include "parse.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void scan_add_skip(struct scan_result *r, const char *path, const char *reason, long long size)
{
    if (r->nskips == r->capskips) {
        r->capskips = r->capskips ? r->capskips * 2 : 16;
        r->skips = xrealloc(r->skips, r->capskips * sizeof *r->skips);
    }
    size_t len;
    int bad;
    /* the index holds UTF-8 only: an undecodable name is shown with U+FFFD */
    r->skips[r->nskips].path = scan_decode_utf8(path, strlen(path), &len, &bad);
    r->skips[r->nskips].reason = xstrdup(reason);
    r->skips[r->nskips].size = size;
    r->nskips++;
}

static void add_file(struct scan_result *r, const char *path, const struct lang *lang, const struct stat *st)
{
    if (r->nfiles == r->capfiles) {
        r->capfiles = r->capfiles ? r->capfiles * 2 : 256;
        r->files = xrealloc(r->files, r->capfiles * sizeof *r->files);
    }
    struct scan_file *f = &r->files[r->nfiles++];
    f->path = xstrdup(path);
    f->lang = lang;
    f->size = (long long)st->st_size;
    f->mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

void scan_result_free(struct scan_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nfiles; i++) free(r->files[i].path);
    for (size_t i = 0; i < r->nskips; i++) {
        free(r->skips[i].path);
        free(r->skips[i].reason);
    }
    free(r->files);
    free(r->skips);
    memset(r, 0, sizeof *r);
}

/* ---- shared by both listings ---------------------------------------------- */

struct scanner {
    const char *root;
    size_t rootlen;
    long long max;
    struct scan_result *r;
    /* directories seen, as an open-addressing set of (dev, ino) */
    struct devino { dev_t dev; ino_t ino; int used; } *seen;
    size_t nseen, capseen;
    /* symlinks to directories inside the root, walked after everything else
     * so that a directory is always listed under its own path first */
    char **deferred;
    size_t ndeferred;
};

static size_t devino_slot(const struct scanner *s, dev_t dev, ino_t ino)
{
    uint64_t h = ((uint64_t)dev * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)ino * 0xC2B2AE3D27D4EB4FULL);
    return (size_t)(h ^ (h >> 29)) & (s->capseen - 1);
}

static int seen_has(const struct scanner *s, dev_t dev, ino_t ino)
{
    if (!s->capseen) return 0;
    for (size_t j = devino_slot(s, dev, ino); s->seen[j].used; j = (j + 1) & (s->capseen - 1))
        if (s->seen[j].dev == dev && s->seen[j].ino == ino) return 1;
    return 0;
}

/* Returns 1 when (dev, ino) was already present, else adds it and returns 0. */
static int seen_add(struct scanner *s, dev_t dev, ino_t ino)
{
    if ((s->nseen + 1) * 2 > s->capseen) {
        struct devino *old = s->seen;
        size_t oldcap = s->capseen;
        s->capseen = oldcap ? oldcap * 2 : 256;
        s->seen = xcalloc(s->capseen, sizeof *s->seen);
        for (size_t i = 0; i < oldcap; i++) {
            if (!old[i].used) continue;
            size_t j = devino_slot(s, old[i].dev, old[i].ino);
            while (s->seen[j].used) j = (j + 1) & (s->capseen - 1);
            s->seen[j] = old[i];
        }
        free(old);
    }
    size_t j = devino_slot(s, dev, ino);
    while (s->seen[j].used) {
        if (s->seen[j].dev == dev && s->seen[j].ino == ino) return 1;
        j = (j + 1) & (s->capseen - 1);
    }
    s->seen[j].used = 1;
    s->seen[j].dev = dev;
    s->seen[j].ino = ino;
    s->nseen++;
    return 0;
}

static void skip_too_large(struct scanner *s, const char *rel, long long size)
{
    char why[96];
    snprintf(why, sizeof why, "too large (%lld bytes > %lld)", size, s->max);
    scan_add_skip(s->r, rel, why, size);
}

/* A regular file (or the target of a followed symlink) with a language. */
static void consider_file(struct scanner *s, const char *rel, const struct lang *lang, const struct stat *st)
{
    if (!S_ISREG(st->st_mode)) {
        scan_add_skip(s->r, rel, "not a regular file", -1);
        return;
    }
    if (s->max > 0 && (long long)st->st_size > s->max) {
        skip_too_large(s, rel, (long long)st->st_size);
        return;
    }
    size_t len;
    int bad;
    free(scan_decode_utf8(rel, strlen(rel), &len, &bad));
    if (bad) {
        /* paths are UTF-8 in the index, the JSON output and model prompts */
        scan_add_skip(s->r, rel, "file name is not valid UTF-8", -1);
        return;
    }
    add_file(s->r, rel, lang, st);
}

/* 1 when the real path p lies inside the root (or is the root). */
static int inside_root(const struct scanner *s, const char *p)
{
    if (strcmp(s->root, "/") == 0) return 1;
    return strncmp(p, s->root, s->rootlen) == 0 && (p[s->rootlen] == 0 || p[s->rootlen] == '/');
}

/* A symlink at rel (full path full). Files inside the root are listed under the
 * link's path; directories inside the root are deferred (walk mode) or left
 * out (git mode: git does not descend into them either). */
static void consider_symlink(struct scanner *s, const char *rel, const char *full, const struct lang *lang, int walk)
{
    struct stat st;
    if (stat(full, &st) != 0) {
        if (errno == ELOOP) scan_add_skip(s->r, rel, "symlink loop", -1);
        else if (lang) scan_add_skip(s->r, rel, "broken symlink", -1);
        return;
    }
    if (!S_ISDIR(st.st_mode) && !lang) return;
    char *real = realpath(full, NULL);
    if (!real) {
        scan_add_skip(s->r, rel, "unresolvable symlink", -1);
        return;
    }
    if (!inside_root(s, real)) {
        scan_add_skip(s->r, rel, "symlink outside the repository", -1);
    } else if (S_ISDIR(st.st_mode)) {
        if (!walk) scan_add_skip(s->r, rel, "symlink to a directory", -1);
        else {
            s->deferred = xrealloc(s->deferred, (s->ndeferred + 1) * sizeof *s->deferred);
            s->deferred[s->ndeferred++] = xstrdup(rel);
        }
    } else {
        consider_file(s, rel, lang, &st);
    }
    free(real);
}

/* ---- git ------------------------------------------------------------------ */

/* Runs git with argv (argv[0] = "git") and returns its standard output
 * (caller frees; *len its length), or NULL when git is missing or exits
 * non-zero. */
static char *git_run(char *const argv[], size_t *len)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        return NULL;
    }
    struct buf out = BUF_INIT;
    char tmp[65536];
    for (;;) {
        ssize_t n = read(pfd[0], tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buf_add(&out, tmp, (size_t)n);
    }
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        buf_free(&out);
        return NULL;
    }
    *len = out.len;
    return buf_take(&out);
}

/* git ls-files in root: its NUL-separated output (caller frees), or NULL when
 * git is missing, the root is not in a work tree, or git lists nothing because
 * the root itself is ignored by the enclosing work tree (a build or export
 * folder inside a checkout): git's view says nothing about such a tree, so it
 * is walked instead. */
static char *git_ls_files(const char *root, size_t *len)
{
    char *ls[] = {"git", "-C", (char *)root, "ls-files", "-z", "--cached", "--others",
                  "--exclude-standard", NULL};
    char *list = git_run(ls, len);
    if (list && *len == 0) {
        char *ci[] = {"git", "-C", (char *)root, "check-ignore", "-q", ".", NULL};
        size_t n;
        char *o = git_run(ci, &n);   /* exit 0: the root is ignored */
        if (o) {
            free(o);
            free(list);
            return NULL;
        }
    }
    return list;
}

/* A '.git' (directory, or file for worktrees and submodules) at or above root:
 * only then is git asked, which saves starting it for every other tree. */
static int in_git_work_tree(const char *root)
{
    if (getenv("GIT_DIR")) return 1;
    char *dir = xstrdup(root);
    int found = 0;
    for (;;) {
        char *g = xasprintf("%s/.git", *dir ? dir : "");
        found = access(g, F_OK) == 0;
        free(g);
        char *slash = strrchr(dir, '/');
        if (found || !slash) break;
        *slash = 0;
        if (!*dir && slash == dir) {
            found = access("/.git", F_OK) == 0;
            break;
        }
    }
    free(dir);
    return found;
}

static void scan_git_list(struct scanner *s, const char *list, size_t len)
{
    struct buf full = BUF_INIT;
    for (size_t i = 0; i < len;) {
        const char *rel = list + i;
        size_t n = strnlen(rel, len - i);
        i += n + 1;
        if (n == 0) continue;
        const struct lang *lang = parse_lang_for_path(rel);
        if (!lang) continue;
        buf_reset(&full);
        buf_printf(&full, "%s/%s", s->root, rel);
        struct stat st;
        if (lstat(full.data, &st) != 0) continue;   /* tracked but deleted in the work tree */
        if (S_ISLNK(st.st_mode)) consider_symlink(s, rel, full.data, lang, 0);
        else consider_file(s, rel, lang, &st);
    }
    buf_free(&full);
}

/* ---- walk ----------------------------------------------------------------- */

/* Directories that never hold the project's own sources. */
static int skip_dir_name(const char *name)
{
    static const char *const names[] = {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".mypy_cache",
        ".pytest_cache", "build", "dist", "venv", ".venv", NULL,
    };
    for (size_t i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return str_ends(name, ".egg-info");
}

struct dent {
    char *name;
    unsigned char type;
    ino_t ino;
};

static int cmp_dent(const void *a, const void *b)
{
    return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* A virtualenv whatever its name (so 'env' is only skipped when it is one: a
 * package called env is ordinary project code). Decided from the listing,
 * which costs no system call for the common directory without 'bin'. */
static int is_virtualenv(int fd, const struct dent *ents, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(ents[i].name, "pyvenv.cfg") == 0) return 1;
        if (strcmp(ents[i].name, "bin") == 0 && faccessat(fd, "bin/activate", F_OK, 0) == 0) return 1;
    }
    return 0;
}

/* Walks the directory rel, opened as fd (closed here). Paths are resolved
 * relative to the open directory: the kernel then walks one component per
 * entry instead of the whole path from the root. */
struct linux_dirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Each level of the walk holds a directory fd, and files are later opened by
 * their full path: deeper trees are left out (with a skip row). */
#define SCAN_MAX_DEPTH 256
static int nesting_too_deep(const struct scanner *s, const char *rel)
{
    int depth = 0;
    for (const char *p = rel; *p; p++) depth += *p == '/';
    return depth >= SCAN_MAX_DEPTH || s->rootlen + strlen(rel) + 2 >= PATH_MAX;
}

static void walk_fd(struct scanner *s, int fd, const char *rel, dev_t dev, ino_t ino)
{
    if (seen_add(s, dev, ino)) {
        close(fd);
        return;
    }
    /* getdents64 rather than readdir: fdopendir would fstat and fcntl every
     * directory, and a tree like django's has thousands of them */
    struct dent *ents = NULL;
    size_t nents = 0, cap = 0;
    /* on the heap: this function recurses once per directory level */
    enum { DBUF_SIZE = 32768 };
    char *dbuf = xmalloc(DBUF_SIZE);
    for (;;) {
        ssize_t got = getdents64(fd, dbuf, DBUF_SIZE);
        if (got <= 0) break;
        for (ssize_t off = 0; off < got;) {
            struct linux_dirent64 *e = (struct linux_dirent64 *)(dbuf + off);
            off += e->d_reclen;
            if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
            if (nents == cap) {
                cap = cap ? cap * 2 : 64;
                ents = xrealloc(ents, cap * sizeof *ents);
            }
            ents[nents].name = xstrdup(e->d_name);
            ents[nents].type = e->d_type;
            ents[nents].ino = (ino_t)e->d_ino;
            nents++;
        }
    }
    free(dbuf);
    int venv = *rel && is_virtualenv(fd, ents, nents);
    if (nents) qsort(ents, nents, sizeof *ents, cmp_dent);   /* qsort(NULL, 0) is undefined */
    struct buf child = BUF_INIT;
    for (size_t i = 0; !venv && i < nents; i++) {
        const char *name = ents[i].name;
        unsigned char type = ents[i].type;
        buf_reset(&child);
        if (*rel) buf_printf(&child, "%s/%s", rel, name);
        else buf_adds(&child, name);
        struct stat st;
        if (type == DT_UNKNOWN) {
            if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_FIFO;
        }
        if (type == DT_DIR) {
            if (skip_dir_name(name)) continue;
            if (nesting_too_deep(s, child.data)) {
                scan_add_skip(s->r, child.data, "directory nested too deeply", -1);
                continue;
            }
            int cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) scan_add_skip(s->r, child.data, "unreadable directory", -1);
            else walk_fd(s, cfd, child.data, dev, ents[i].ino);   /* a mount point shows its covered inode: harmless */
            continue;
        }
        const struct lang *lang = parse_lang_for_path(name);
        if (type == DT_LNK) {
            char *full = xasprintf("%s/%s", s->root, child.data);
            consider_symlink(s, child.data, full, lang, 1);
            free(full);
            continue;
        }
        if (!lang) continue;
        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        consider_file(s, child.data, lang, &st);
    }
    for (size_t i = 0; i < nents; i++) free(ents[i].name);
    free(ents);
    buf_free(&child);
    close(fd);
}

static void walk_dir(struct scanner *s, const char *rel)
{
    char *full = *rel ? xasprintf("%s/%s", s->root, rel) : xstrdup(s->root);
    int fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(full);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (*rel) scan_add_skip(s->r, rel, "unreadable directory", -1);
        if (fd >= 0) close(fd);
        return;
    }
    walk_fd(s, fd, rel, st.st_dev, st.st_ino);
}

/* A deferred directory symlink: walked unless it leads to a directory already
 * listed, which is a loop when the target encloses the link. */
static void walk_deferred(struct scanner *s, const char *rel)
{
    char *full = xasprintf("%s/%s", s->root, rel);
    struct stat st;
    if (stat(full, &st) == 0) {
        if (!seen_has(s, st.st_dev, st.st_ino)) {
            walk_dir(s, rel);
        } else {
            char *real = realpath(full, NULL);
            char *linkdir = xstrdup(full);
            char *slash = strrchr(linkdir, '/');
            if (slash) *slash = 0;
            char *reallink = realpath(linkdir, NULL);
            size_t rl = real ? strlen(real) : 0;
            int loop = real && reallink && strncmp(reallink, real, rl) == 0 &&
                       (reallink[rl] == 0 || reallink[rl] == '/');
            scan_add_skip(s->r, rel, loop ? "symlink loop" : "symlink to a directory listed under its own path", -1);
            free(real);
            free(linkdir);
            free(reallink);
        }
    }
    free(full);
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const struct scan_file *)a)->path, ((const struct scan_file *)b)->path);
}

static int cmp_skip(const void *a, const void *b)
{
    return strcmp(((const struct scan_skip *)a)->path, ((const struct scan_skip *)b)->path);
}

int scan_repo(const char *root_abs, long long max_file_size, struct scan_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(root_abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs,
                 errno ? strerror(errno) : "not a directory");
        return -1;
    }
    struct scanner s = {.root = root_abs, .rootlen = strlen(root_abs), .max = max_file_size, .r = out};
    size_t len = 0;
    char *list = in_git_work_tree(root_abs) ? git_ls_files(root_abs, &len) : NULL;
    if (list) {
        out->used_git = 1;
        scan_git_list(&s, list, len);
        free(list);
    } else {
        DIR *d = opendir(root_abs);
        if (!d) {
            snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs, strerror(errno));
            return -1;
        }
        closedir(d);
        walk_dir(&s, "");
        /* walking a deferred link may defer more (links inside it) */
        for (size_t i = 0; i < s.ndeferred; i++) walk_deferred(&s, s.deferred[i]);
    }
    for (size_t i = 0; i < s.ndeferred; i++) free(s.deferred[i]);
    free(s.deferred);
    free(s.seen);
    if (out->nfiles) qsort(out->files, out->nfiles, sizeof *out->files, cmp_file);
    /* git may list a path twice (unmerged stages): keep one */
    size_t w = 0;
    for (size_t i = 0; i < out->nfiles; i++) {
        if (w && strcmp(out->files[w - 1].path, out->files[i].path) == 0) {
            free(out->files[i].path);
            continue;
        }
        out->files[w++] = out->files[i];
    }
    out->nfiles = w;
    if (out->nskips) qsort(out->skips, out->nskips, sizeof *out->skips, cmp_skip);
    return 0;
}

/* ---- content checks ------------------------------------------------------- */

int scan_is_binary(const char *s, size_t n)
{
    return memchr(s, 0, n < 8192 ? n : 8192) != NULL;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c >= 0x01 && c < 0x80) return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) { len = 3; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) { len = 3; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) { len = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) { len = 4; hi = 0x8F; }
    else return 0;
    if (n < len) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return len;
}

char *scan_decode_utf8(const char *s, size_t n, size_t *outlen, int *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    *bad = 0;
    /* fast path: the common all-valid file is copied once */
    while (i < n) {
        if (p[i] >= 0x01 && p[i] < 0x80) { i++; continue; }
        size_t l = utf8_seq(p + i, n - i);
        if (!l) break;
        i += l;
    }
    if (i == n) {
        *outlen = n;
        return xstrndup(s, n);
    }
    char *out = xmalloc(n * 3 + 1);
    memcpy(out, s, i);
    size_t o = i;
    while (i < n) {
        size_t l = utf8_seq(p + i, n - i);
        if (l) {
            memcpy(out + o, p + i, l);
            o += l;
            i += l;
        } else {
            out[o++] = (char)0xEF;
            out[o++] = (char)0xBF;
            out[o++] = (char)0xBD;
            (*bad)++;
            i++;
        }
    }
    out[o] = 0;
    *outlen = o;
    return out;
}
