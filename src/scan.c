/*
 * scan: lists the source files of a repository (see scan.h). git decides what
 * belongs to a work tree because it already knows the ignore rules; outside
 * git a walk with a fixed list of directories that never hold the project's
 * own code. Symlinks are followed only when they stay inside the root, and
 * directories are tracked by (device, inode) so that a link back up the tree
 * cannot make the walk loop or list a directory twice. A walk given the
 * listings it recorded last time (struct scan_dirs) only stats a directory
 * whose listing still holds, instead of opening and reading it.
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
#include <time.h>
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

static void add_file(struct scan_result *r, const char *path, const struct lang *lang, const struct stat *st,
                     int via_link)
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
    f->ctime_ns = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    f->dev = (long long)st->st_dev;
    f->ino = (long long)st->st_ino;
    f->via_link = via_link;
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
    /* walk mode */
    int rootfd;
    struct scan_dirs *dirs;       /* recorded listings, or NULL */
    int in_link;                  /* walking a directory reached through a symlink */
    long long racy_ns;            /* a directory changed at or after this is read again next time */
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
static void consider_file(struct scanner *s, const char *rel, const struct lang *lang, const struct stat *st,
                          int via_link)
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
    add_file(s->r, rel, lang, st, via_link || s->in_link);
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
        consider_file(s, rel, lang, &st, 1);
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
        else consider_file(s, rel, lang, &st, 0);
    }
    buf_free(&full);
}

/* ---- walk ----------------------------------------------------------------- */

/* Directories that never hold the project's own sources. */
static const char *const skip_dir_names[] = {
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".mypy_cache",
    ".pytest_cache", "build", "dist", "venv", ".venv", NULL,
};

static int skip_dir_name(const char *name)
{
    for (size_t i = 0; skip_dir_names[i]; i++)
        if (strcmp(name, skip_dir_names[i]) == 0) return 1;
    return str_ends(name, ".egg-info");
}

char *scan_dirs_stamp(void)
{
    /* '1': the encoding of scan_dir.entries */
    struct buf b = BUF_INIT;
    buf_adds(&b, "1 files");
    for (size_t i = 0; parse_languages[i]; i++)
        for (const char *const *e = parse_languages[i]->extensions; *e; e++) buf_printf(&b, " %s", *e);
    buf_adds(&b, "; skipped");
    for (size_t i = 0; skip_dir_names[i]; i++) buf_printf(&b, " %s", skip_dir_names[i]);
    buf_adds(&b, " *.egg-info");
    return buf_take(&b);
}

/* An entry of a listing, as the walk uses it. */
enum { ENT_DIR = 'd', ENT_LINK = 'l', ENT_FILE = 'f', ENT_VENV = 'v' };

struct dent {
    char *name;
    unsigned char type;          /* ENT_* once classified; DT_* while read */
};

static int cmp_dent(const void *a, const void *b)
{
    return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* A listing's entries are kept as records 'type name NUL', sorted by name,
 * holding only what the walk uses: subdirectories not skipped by name,
 * symlinks, and other entries whose name has a language. A virtualenv with a
 * pyvenv.cfg is the single record 'v' with an empty name. */
static void encode_entry(struct buf *b, unsigned char type, const char *name)
{
    buf_add(b, (const char *)&type, 1);
    buf_add(b, name, strlen(name) + 1);
}

/* The records of entries[0..len) as dents whose names point into entries;
 * -1 when the bytes are not a well-formed listing. */
static int decode_entries(const char *entries, size_t len, struct dent **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < len;) {
        unsigned char type = (unsigned char)entries[i++];
        const char *nul = i < len ? memchr(entries + i, 0, len - i) : NULL;
        if (!nul || (type != ENT_DIR && type != ENT_LINK && type != ENT_FILE && type != ENT_VENV)) {
            free(*out);
            *out = NULL;
            *n = 0;
            return -1;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = xrealloc(*out, cap * sizeof **out);
        }
        (*out)[*n].name = (char *)(entries + i);
        (*out)[*n].type = type;
        (*n)++;
        i = (size_t)(nul - entries) + 1;
    }
    return 0;
}

void scan_dirs_add_old(struct scan_dirs *d, const char *path, size_t pathlen, long long dev, long long ino,
                       long long mtime_ns, long long ctime_ns, const void *entries, size_t len)
{
    if (d->nold == d->capold) {
        d->capold = d->capold ? d->capold * 2 : 256;
        d->old = xrealloc(d->old, d->capold * sizeof *d->old);
    }
    struct scan_dir *o = &d->old[d->nold++];
    o->path = xstrndup(path, pathlen);
    o->dev = dev;
    o->ino = ino;
    o->mtime_ns = mtime_ns;
    o->ctime_ns = ctime_ns;
    o->entries = xmalloc(len ? len : 1);
    if (len) memcpy(o->entries, entries, len);
    o->len = len;
    o->state = SCAN_DIR_UNSEEN;
}

static void dir_list_free(struct scan_dir *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].entries);
    }
    free(v);
}

void scan_dirs_free(struct scan_dirs *d)
{
    if (!d) return;
    dir_list_free(d->old, d->nold);
    dir_list_free(d->fresh, d->nfresh);
    memset(d, 0, sizeof *d);
}

size_t scan_dirs_changes(const struct scan_dirs *d)
{
    size_t n = d->nfresh;
    for (size_t i = 0; i < d->nold; i++) n += d->old[i].state == SCAN_DIR_UNSEEN;
    return n;
}

static int cmp_dir(const void *a, const void *b)
{
    return strcmp(((const struct scan_dir *)a)->path, ((const struct scan_dir *)b)->path);
}

static struct scan_dir *dirs_find(struct scan_dirs *d, const char *path)
{
    size_t lo = 0, hi = d ? d->nold : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(d->old[mid].path, path);
        if (c == 0) return &d->old[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* How long after its last change a directory's listing is not trusted: well
 * above the coarsest timestamp tick of a local file system, and of a clock
 * read a little behind the file system's. */
#define SCAN_RACY_NS (2 * 1000000000LL)

static long long ts_ns(const struct timespec *t)
{
    return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* Records the listing just read of the directory rel (stat st, taken before
 * reading), unless it equals the recorded one. */
static void dirs_record(struct scanner *s, struct scan_dir *old, const char *rel, const struct stat *st,
                        int trusted, struct buf *entries)
{
    long long mtime = ts_ns(&st->st_mtim);
    /* an entry added in the tick the directory was read would leave its mtime
     * as recorded: a directory changed this recently is read again next time */
    if (!trusted || mtime >= s->racy_ns) mtime = -1;
    if (old && old->dev == (long long)st->st_dev && old->ino == (long long)st->st_ino && old->mtime_ns == mtime &&
        old->ctime_ns == ts_ns(&st->st_ctim) && old->len == entries->len &&
        (!entries->len || memcmp(old->entries, entries->data, entries->len) == 0))
        return;
    struct scan_dirs *d = s->dirs;
    if (d->nfresh == d->capfresh) {
        d->capfresh = d->capfresh ? d->capfresh * 2 : 64;
        d->fresh = xrealloc(d->fresh, d->capfresh * sizeof *d->fresh);
    }
    struct scan_dir *f = &d->fresh[d->nfresh++];
    f->path = xstrdup(rel);
    f->dev = (long long)st->st_dev;
    f->ino = (long long)st->st_ino;
    f->mtime_ns = mtime;
    f->ctime_ns = ts_ns(&st->st_ctim);
    f->len = entries->len;
    f->entries = xmalloc(f->len ? f->len : 1);
    if (f->len) memcpy(f->entries, entries->data, f->len);
    f->state = SCAN_DIR_RELISTED;
}

/* The kernel's record for getdents64. */
struct linux_dirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Reads the open directory fd: its entries (caller frees names and array).
 * -1 when reading failed part way. getdents64 rather than readdir: fdopendir
 * would fstat and fcntl every directory, and a tree like django's has
 * thousands of them. */
static int read_dir(int fd, struct dent **out, size_t *n)
{
    struct dent *ents = NULL;
    size_t nents = 0, cap = 0;
    int rc = 0;
    /* on the heap: the walk recurses once per directory level */
    enum { DBUF_SIZE = 32768 };
    char *dbuf = xmalloc(DBUF_SIZE);
    for (;;) {
        ssize_t got = getdents64(fd, dbuf, DBUF_SIZE);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) rc = -1;
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
            nents++;
        }
    }
    free(dbuf);
    *out = ents;
    *n = nents;
    return rc;
}

/* A virtualenv whatever its name (so 'env' is only skipped when it is one: a
 * package called env is ordinary project code), decided from the listing: a
 * pyvenv.cfg, or a bin/activate (looked up only when there is a 'bin'). sub is
 * the directory's path relative to the open directory base ("" for base). */
static int has_activate(int base, const char *sub)
{
    char *p = *sub ? xasprintf("%s/bin/activate", sub) : xstrdup("bin/activate");
    int r = faccessat(base, p, F_OK, 0) == 0;
    free(p);
    return r;
}

/* Each level of the walk may hold a directory fd, and files are later opened by
 * their full path: deeper trees are left out (with a skip row). */
#define SCAN_MAX_DEPTH 256
static int nesting_too_deep(const struct scanner *s, const char *rel)
{
    int depth = 0;
    for (const char *p = rel; *p; p++) depth += *p == '/';
    return depth >= SCAN_MAX_DEPTH || s->rootlen + strlen(rel) + 2 >= PATH_MAX;
}

/* Walks the directory rel. Paths are resolved relative to an open directory,
 * base: the kernel then walks a few components per entry instead of the whole
 * path from the root. base is the nearest enclosing directory that was read
 * (the root at first), and rel + baseoff is the path relative to it (rel + 0
 * when base is the root). A directory whose recorded listing still holds is
 * not opened at all: its entries are found relative to the same base. follow:
 * rel is a symlink to a directory (deferred), followed. */
static void walk_entries(struct scanner *s, int base, const char *rel, size_t baseoff, const struct dent *ents,
                         size_t nents);

static void walk(struct scanner *s, int base, const char *rel, size_t baseoff, int follow)
{
    const char *sub = rel + baseoff;
    struct scan_dir *old = dirs_find(s->dirs, rel);
    struct stat st;
    int fd = -1, stated = 0;
    if (old) {
        /* is the recorded listing still right? */
        int r = *sub ? fstatat(base, sub, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) : fstat(base, &st);
        if (r != 0 || !S_ISDIR(st.st_mode)) {
            if (*rel) scan_add_skip(s->r, rel, "unreadable directory", -1);
            return;
        }
        stated = 1;
        if (old->mtime_ns != -1 && old->mtime_ns == ts_ns(&st.st_mtim) && old->ctime_ns == ts_ns(&st.st_ctim) &&
            old->dev == (long long)st.st_dev && old->ino == (long long)st.st_ino) {
            struct dent *ents;
            size_t nents;
            if (decode_entries(old->entries, old->len, &ents, &nents) == 0) {
                if (seen_add(s, st.st_dev, st.st_ino)) {
                    free(ents);
                    return;
                }
                old->state = SCAN_DIR_KEPT;
                s->dirs->cached++;
                int venv = nents == 1 && ents[0].type == ENT_VENV;
                for (size_t i = 0; !venv && *rel && i < nents; i++)
                    if (strcmp(ents[i].name, "bin") == 0) venv = has_activate(base, sub);
                if (!venv) walk_entries(s, base, rel, baseoff, ents, nents);
                free(ents);
                return;
            }
        }
    }
    if (*sub) {
        fd = openat(base, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
        if (fd < 0) {
            scan_add_skip(s->r, rel, "unreadable directory", -1);
            return;
        }
    } else {
        fd = base;   /* the root: read through the caller's descriptor */
    }
    if (!stated && fstat(fd, &st) != 0) {
        if (*rel) scan_add_skip(s->r, rel, "unreadable directory", -1);
        if (fd != base) close(fd);
        return;
    }
    if (seen_add(s, st.st_dev, st.st_ino)) {
        if (fd != base) close(fd);
        return;
    }
    struct dent *ents;
    size_t nents;
    int complete = read_dir(fd, &ents, &nents) == 0;
    if (s->dirs) {
        s->dirs->listed++;
        if (old) old->state = SCAN_DIR_RELISTED;
    }
    if (nents) qsort(ents, nents, sizeof *ents, cmp_dent);   /* qsort(NULL, 0) is undefined */
    /* keep only what the walk uses, classified */
    int pyvenv = 0, bin = 0;
    size_t w = 0;
    for (size_t i = 0; i < nents; i++) {
        const char *name = ents[i].name;
        unsigned char type = ents[i].type;
        if (strcmp(name, "pyvenv.cfg") == 0) pyvenv = 1;
        if (strcmp(name, "bin") == 0) bin = 1;
        if (type == DT_UNKNOWN) {
            struct stat cst;
            if (fstatat(fd, name, &cst, AT_SYMLINK_NOFOLLOW) != 0) {
                free(ents[i].name);
                continue;
            }
            type = S_ISDIR(cst.st_mode) ? DT_DIR : S_ISLNK(cst.st_mode) ? DT_LNK : DT_REG;
        }
        unsigned char t = type == DT_DIR ? (skip_dir_name(name) ? 0 : ENT_DIR)
                        : type == DT_LNK ? ENT_LINK
                        : parse_lang_for_path(name) ? ENT_FILE : 0;
        if (!t) {
            free(ents[i].name);
            continue;
        }
        ents[w].name = ents[i].name;
        ents[w++].type = t;
    }
    nents = w;
    int venv = *rel && (pyvenv || (bin && has_activate(fd, "")));
    if (s->dirs) {
        struct buf enc = BUF_INIT;
        if (*rel && pyvenv) encode_entry(&enc, ENT_VENV, "");
        else
            for (size_t i = 0; i < nents; i++) encode_entry(&enc, ents[i].type, ents[i].name);
        dirs_record(s, old, rel, &st, complete, &enc);
        buf_free(&enc);
    }
    if (!venv) walk_entries(s, fd, rel, *rel ? strlen(rel) + 1 : 0, ents, nents);
    for (size_t i = 0; i < nents; i++) free(ents[i].name);
    free(ents);
    if (fd != base) close(fd);
}

/* The entries of the directory rel, sorted by name (see walk for base and baseoff). */
static void walk_entries(struct scanner *s, int base, const char *rel, size_t baseoff, const struct dent *ents,
                         size_t nents)
{
    struct buf child = BUF_INIT;
    for (size_t i = 0; i < nents; i++) {
        const char *name = ents[i].name;
        buf_reset(&child);
        if (*rel) buf_printf(&child, "%s/%s", rel, name);
        else buf_adds(&child, name);
        if (ents[i].type == ENT_DIR) {
            if (skip_dir_name(name)) continue;
            if (nesting_too_deep(s, child.data)) {
                scan_add_skip(s->r, child.data, "directory nested too deeply", -1);
                continue;
            }
            walk(s, base, child.data, baseoff, 0);
            continue;
        }
        const struct lang *lang = parse_lang_for_path(name);
        if (ents[i].type == ENT_LINK) {
            char *full = xasprintf("%s/%s", s->root, child.data);
            consider_symlink(s, child.data, full, lang, 1);
            free(full);
            continue;
        }
        if (ents[i].type != ENT_FILE || !lang) continue;
        struct stat st;
        if (fstatat(base, child.data + baseoff, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        consider_file(s, child.data, lang, &st, 0);
    }
    buf_free(&child);
}

/* A deferred directory symlink: walked unless it leads to a directory already
 * listed, which is a loop when the target encloses the link. */
static void walk_deferred(struct scanner *s, const char *rel)
{
    char *full = xasprintf("%s/%s", s->root, rel);
    struct stat st;
    if (stat(full, &st) == 0) {
        if (!seen_has(s, st.st_dev, st.st_ino)) {
            s->in_link = 1;
            walk(s, s->rootfd, rel, 0, 1);
            s->in_link = 0;
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

int scan_repo(const char *root_abs, long long max_file_size, struct scan_dirs *dirs, struct scan_result *out,
              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(root_abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs,
                 errno ? strerror(errno) : "not a directory");
        return -1;
    }
    struct scanner s = {.root = root_abs, .rootlen = strlen(root_abs), .max = max_file_size, .r = out};
    if (dirs) dirs->listed = dirs->cached = 0;
    size_t len = 0;
    char *list = in_git_work_tree(root_abs) ? git_ls_files(root_abs, &len) : NULL;
    if (list) {
        out->used_git = 1;
        scan_git_list(&s, list, len);
        free(list);
    } else {
        s.rootfd = open(root_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s.rootfd < 0) {
            snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs, strerror(errno));
            return -1;
        }
        if (dirs) {
            /* looked up by binary search: the caller adds them in path order */
            for (size_t i = 1; i < dirs->nold; i++)
                if (strcmp(dirs->old[i - 1].path, dirs->old[i].path) >= 0) {
                    qsort(dirs->old, dirs->nold, sizeof *dirs->old, cmp_dir);
                    break;
                }
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            s.racy_ns = ts_ns(&now) - SCAN_RACY_NS;
            s.dirs = dirs;
        }
        walk(&s, s.rootfd, "", 0, 0);
        /* walking a deferred link may defer more (links inside it) */
        for (size_t i = 0; i < s.ndeferred; i++) walk_deferred(&s, s.deferred[i]);
        close(s.rootfd);
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
