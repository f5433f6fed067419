/*
 * index_scan: lists the source files of a repository (see index_scan.h). git decides what
 * belongs to a work tree because it already knows the ignore rules; outside
 * git a walk with a fixed list of directories that never hold the project's
 * own code. Symlinks are followed only when they stay inside the root, and
 * directories are tracked by (device, inode) so that a link back up the tree
 * cannot make the walk loop or list a directory twice. A walk given the
 * listings it recorded last time (struct scan_dirs) only stats a directory
 * whose listing still holds, instead of opening and reading it.
 */
#include "index_scan.h"
#include "ignore.h"
#include "parse.h"
#include "scan_stat.h"
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
    ARRAY_GROW(r->skips, r->nskips, r->capskips, 16);
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
    ARRAY_GROW(r->files, r->nfiles, r->capfiles, 256);
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
    for (size_t i = 0; i < r->nrules; i++) free(r->rules[i].rule);
    free(r->files);
    free(r->skips);
    free(r->rules);
    memset(r, 0, sizeof *r);
}

/* Counts one path left out by rule (taken over). */
static void count_rule(struct scan_result *r, char *rule)
{
    for (size_t i = 0; i < r->nrules; i++)
        if (strcmp(r->rules[i].rule, rule) == 0) {
            r->rules[i].paths++;
            free(rule);
            return;
        }
    ARRAY_GROW(r->rules, r->nrules, r->caprules, 8);
    r->rules[r->nrules].rule = rule;
    r->rules[r->nrules++].paths = 1;
}

/* ---- shared by both listings ---------------------------------------------- */

/* A symlink to a directory, walked after everything else, with the ignore
 * files that applied where it was found. */
struct deferred {
    char *rel;
    struct ignore_file **stack;
    size_t nstack;
};

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
    struct deferred *deferred;
    size_t ndeferred, capdeferred;
    int no_ignore;                /* --no-ignore: only version-control metadata is left out */
    /* the ignore files that apply to the directory being walked, lowest
     * precedence first, and every file read (owned here) */
    struct ignore_file **stack;
    size_t nstack, capstack;
    struct ignore_file **ifiles;
    size_t nifiles, capifiles;
    /* walk mode */
    int rootfd;
    struct scan_dirs *dirs;       /* recorded listings, or NULL */
    int in_link;                  /* walking a directory reached through a symlink */
    long long racy_ns;            /* a directory changed at or after this is read again next time */
    /* the files the walk listed (in r->files, their stat not yet taken),
     * stat'ed once it is done; mode and found are filled then */
    struct queued { size_t file; unsigned mode; int found; } *queued;
    size_t nqueued, capqueued;
    int git;                     /* the files are git's list: a queued one may be a symlink */
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

static size_t utf8_valid_prefix(const char *s, size_t n);

/* 1 when a file (or the target of a followed symlink) with a language, of
 * this mode and size, is not to be listed: it is then added to the skips. */
static int skip_file(struct scanner *s, const char *rel, const struct lang *lang, unsigned mode, long long size)
{
    if (lang->skip) {
        scan_add_skip(s->r, rel, lang->skip, size);
        return 1;
    }
    if (!S_ISREG(mode)) {
        scan_add_skip(s->r, rel, "not a regular file", -1);
        return 1;
    }
    if (s->max > 0 && size > s->max) {
        skip_too_large(s, rel, size);
        return 1;
    }
    size_t len = strlen(rel);
    if (utf8_valid_prefix(rel, len) != len) {
        /* paths are UTF-8 in the index, the JSON output and model prompts */
        scan_add_skip(s->r, rel, "file name is not valid UTF-8", -1);
        return 1;
    }
    return 0;
}

/* A regular file (or the target of a followed symlink) with a language. */
static void consider_file(struct scanner *s, const char *rel, const struct lang *lang, const struct stat *st,
                          int via_link)
{
    if (!skip_file(s, rel, lang, (unsigned)st->st_mode, (long long)st->st_size))
        add_file(s->r, rel, lang, st, via_link || s->in_link);
}

/* A regular file the walk found, or a file git lists (which may be a
 * symlink or gone from the work tree): listed in its place now, stat'ed
 * later (consider_queued). */
static void queue_file(struct scanner *s, const char *rel, const struct lang *lang)
{
    struct scan_result *r = s->r;
    ARRAY_GROW(r->files, r->nfiles, r->capfiles, 256);
    struct scan_file *f = &r->files[r->nfiles++];
    memset(f, 0, sizeof *f);
    f->path = xstrdup(rel);
    f->lang = lang;
    f->via_link = s->in_link;
    ARRAY_GROW(s->queued, s->nqueued, s->capqueued, 256);
    s->queued[s->nqueued++] = (struct queued){.file = r->nfiles - 1};
}

static const char *queued_path(void *ctx, size_t i)
{
    struct scanner *s = ctx;
    return s->r->files[s->queued[i].file].path;
}

/* On a stat thread: writes only what is i's. */
static void queued_put(void *ctx, size_t i, const struct stat *st)
{
    struct scanner *s = ctx;
    struct queued *q = &s->queued[i];
    struct scan_file *f = &s->r->files[q->file];
    q->mode = (unsigned)st->st_mode;
    q->found = 1;
    f->size = (long long)st->st_size;
    f->mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
    f->ctime_ns = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    f->dev = (long long)st->st_dev;
    f->ino = (long long)st->st_ino;
}

/* The files the walk queued, stat'ed all at once; then each is kept in its
 * place or left out, in the order the walk met them, as consider_file would
 * have when it met them. A file gone since its directory was listed is left
 * out, as a file gone before it was. */
static void consider_symlink(struct scanner *s, const char *rel, const char *full, const struct lang *lang, int walk);

static void consider_queued(struct scanner *s, int threads)
{
    struct scan_result *r = s->r;
    scan_stats_run(s->rootfd, s->nqueued, queued_path, queued_put, s, threads);
    size_t w = 0, q = 0;
    struct scan_file *links = NULL;   /* git lists a symlink as a file: considered as one after */
    size_t nlinks = 0, caplinks = 0;
    for (size_t i = 0; i < r->nfiles; i++) {
        struct scan_file *f = &r->files[i];
        if (q < s->nqueued && s->queued[q].file == i) {
            const struct queued *e = &s->queued[q++];
            if (e->found && s->git && S_ISLNK(e->mode)) {
                ARRAY_GROW(links, nlinks, caplinks, 8);
                links[nlinks++] = *f;
                continue;
            }
            if (!e->found || skip_file(s, f->path, f->lang, e->mode, f->size)) {
                free(f->path);
                continue;
            }
        }
        r->files[w++] = *f;
    }
    r->nfiles = w;
    free(s->queued);
    s->queued = NULL;
    s->nqueued = s->capqueued = 0;
    for (size_t i = 0; i < nlinks; i++) {   /* appended: scan_repo sorts what is out of order */
        char *full = xasprintf("%s/%s", s->root, links[i].path);
        consider_symlink(s, links[i].path, full, links[i].lang, 0);
        free(full);
        free(links[i].path);
    }
    free(links);
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
            ARRAY_GROW(s->deferred, s->ndeferred, s->capdeferred, 8);
            struct deferred *d = &s->deferred[s->ndeferred++];
            d->rel = xstrdup(rel);
            d->nstack = s->nstack;
            d->stack = xmalloc((s->nstack ? s->nstack : 1) * sizeof *d->stack);
            if (s->nstack) memcpy(d->stack, s->stack, s->nstack * sizeof *d->stack);
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
static char *git_run(const char *const argv[], size_t *len)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, environ);
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
    const char *ls[] = {"git", "-C", (char *)root, "ls-files", "-z", "--cached", "--others",
                  "--exclude-standard", NULL};
    char *list = git_run(ls, len);
    if (list && *len == 0) {
        const char *ci[] = {"git", "-C", (char *)root, "check-ignore", "-q", ".", NULL};
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

static struct ignore_file *load_ignore(int base, const char *sub, const char *dir, const char *name);
static char *path_ignored_by(struct ignore_file *const *files, size_t n, const char *rel, int is_dir);
static void stack_push(struct scanner *s, struct ignore_file *f);

static int cmp_ignore_base(const void *a, const void *b)
{
    return strcmp((*(struct ignore_file *const *)a)->base, (*(struct ignore_file *const *)b)->base);
}

/* The rule that leaves the file at path out by its name, or NULL: a
 * minified script (name.min.js) is built from a source shipped beside it,
 * usually, and is one line, thousands of bytes long, that no answer can
 * cite. */
static const char *file_name_rule(const char *path, int no_ignore)
{
    if (no_ignore) return NULL;
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    if (str_ends(name, ".min.js") || str_ends(name, ".min.mjs") || str_ends(name, ".min.cjs"))
        return "*.min.js (minified JavaScript)";
    return NULL;
}

/* The .drqaignore files git lists (so neither ignored nor outside the tree),
 * parents before their subdirectories, onto the scanner's stack. */
static void git_drqaignores(struct scanner *s, const char *list, size_t len)
{
    for (size_t i = 0; i < len;) {
        const char *rel = list + i;
        size_t n = strnlen(rel, len - i);
        i += n + 1;
        const char *slash = strrchr(rel, '/');
        if (strcmp(slash ? slash + 1 : rel, ".drqaignore") != 0) continue;
        char *dir = xstrndup(rel, slash ? (size_t)(slash - rel) : 0);
        char *full = *dir ? xasprintf("%s/%s", s->root, dir) : xstrdup(s->root);
        struct ignore_file *f = load_ignore(AT_FDCWD, full, dir, ".drqaignore");
        if (f) stack_push(s, f);
        free(full);
        free(dir);
    }
    if (s->nstack > 1) qsort(s->stack, s->nstack, sizeof *s->stack, cmp_ignore_base);
}

#define SCAN_SUBMODULE_NOTE "(its files are left out; index the submodule as a repository of its own)"
#define SCAN_SUBMODULE_RULE "git submodule " SCAN_SUBMODULE_NOTE

static void scan_git_list(struct scanner *s, const char *list, size_t len)
{
    struct buf full = BUF_INIT;
    git_drqaignores(s, list, len);
    for (size_t i = 0; i < len;) {
        const char *rel = list + i;
        size_t n = strnlen(rel, len - i);
        i += n + 1;
        if (n == 0) continue;
        const struct lang *lang = parse_lang_for_path(rel);
        if (!lang) {
            /* git lists a submodule as one entry, its directory: its files
             * are not the repository's, and the summary says they are left out */
            struct stat dst;
            buf_reset(&full);
            buf_printf(&full, "%s/%s", s->root, rel);
            if (lstat(full.data, &dst) == 0 && S_ISDIR(dst.st_mode))
                count_rule(s->r, xstrdup(SCAN_SUBMODULE_RULE));
            continue;
        }
        const char *frule = file_name_rule(rel, s->no_ignore);
        char *why = frule ? xstrdup(frule) : s->nstack ? path_ignored_by(s->stack, s->nstack, rel, 0) : NULL;
        if (why) {
            count_rule(s->r, why);
            continue;
        }
        /* stat'ed with the others (consider_queued): one tracked but
         * deleted in the work tree is left out */
        queue_file(s, rel, lang);
    }
    buf_free(&full);
}

/* ---- what is left out ------------------------------------------------------ */

/* Version-control metadata: never listed, not even with --no-ignore. */
static int vcs_dir_name(const char *name)
{
    return strcmp(name, ".git") == 0 || strcmp(name, ".hg") == 0 || strcmp(name, ".svn") == 0;
}

/* The ignore files read in every directory, lowest precedence first. */
static const char *const ignore_names[] = {".gitignore", ".ignore", ".drqaignore", NULL};
/* Files whose presence is the evidence that a directory holds no project source. */
static const char *const marker_names[] = {"pyvenv.cfg", "package.json", "CACHEDIR.TAG", "PKG-INFO", NULL};

static int name_in(const char *name, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return 0;
}

/* The rule that leaves the directory name out by its name and its parent's
 * contents (parent_pkg: a package.json beside it), or NULL. */
static const char *dir_name_rule(const char *name, int no_ignore, int parent_pkg)
{
    if (vcs_dir_name(name)) return "version-control metadata";
    if (no_ignore) return NULL;
    if (strcmp(name, "__pycache__") == 0) return "__pycache__ (compiled Python)";
    if (strcmp(name, ".tox") == 0) return ".tox (tox environments)";
    if (strcmp(name, "node_modules") == 0 && parent_pkg) return "node_modules beside a package.json";
    return NULL;
}

/* What a directory's own entries show it to be, or NULL: marks holds which of
 * marker_names it has, activate whether it has a bin/activate. */
static const char *dir_content_rule(const char *name, unsigned marks, int activate)
{
    if (marks & 1u) return "virtualenv (pyvenv.cfg)";
    if (activate) return "virtualenv (bin/activate)";
    if (marks & 4u) return "cache directory (CACHEDIR.TAG)";
    if ((marks & 8u) && str_ends(name, ".egg-info")) return "package metadata (*.egg-info with PKG-INFO)";
    return NULL;
}

static unsigned marker_bit(const char *name)
{
    for (unsigned i = 0; marker_names[i]; i++)
        if (strcmp(name, marker_names[i]) == 0) return 1u << i;
    return 0;
}

/* Reads the small file sub (relative to the open directory base) into a
 * malloc'd buffer, or NULL when it cannot be read. */
static char *read_small(int base, const char *sub, size_t *len)
{
    int fd = openat(base, sub, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct buf b = BUF_INIT;
    char tmp[8192];
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buf_add(&b, tmp, (size_t)n);
        if (b.len > (1u << 20)) break;   /* no ignore file is this large */
    }
    close(fd);
    *len = b.len;
    return buf_take(&b);
}

/* Parses the ignore file name of the directory dir (sub relative to base). */
static struct ignore_file *load_ignore(int base, const char *sub, const char *dir, const char *name)
{
    char *p = *sub ? xasprintf("%s/%s", sub, name) : xstrdup(name);
    size_t len = 0;
    char *text = read_small(base, p, &len);
    free(p);
    if (!text) return NULL;
    struct ignore_file *f = ignore_file_parse(dir, name, text, len);
    free(text);
    return f;
}

static void stack_push(struct scanner *s, struct ignore_file *f)
{
    ARRAY_GROW(s->stack, s->nstack, s->capstack, 8);
    s->stack[s->nstack++] = f;
    ARRAY_GROW(s->ifiles, s->nifiles, s->capifiles, 8);
    s->ifiles[s->nifiles++] = f;
}

/* The ignore rule excluding rel, described (malloc'd), or NULL. */
static char *ignored_by(struct ignore_file *const *stack, size_t n, const char *rel, int is_dir)
{
    const struct ignore_file *f;
    const struct ignore_rule *r = ignore_decide(stack, n, rel, is_dir, &f);
    return r && !r->negate ? ignore_rule_describe(f, r) : NULL;
}

/* The rule excluding rel or one of the directories above it (as a walk
 * would meet them, top down), described (malloc'd), or NULL. */
static char *path_ignored_by(struct ignore_file *const *files, size_t n, const char *rel, int is_dir)
{
    char *tmp = xstrdup(rel);
    for (char *p = strchr(tmp, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        char *why = ignored_by(files, n, tmp, 1);
        *p = '/';
        if (why) {
            free(tmp);
            return why;
        }
    }
    free(tmp);
    return ignored_by(files, n, rel, is_dir);
}

int scan_git_provenance(const char *root_abs, char commit[41], int *dirty)
{
    commit[0] = 0;
    *dirty = 0;
    if (!in_git_work_tree(root_abs)) return -1;
    const char *rp[] = {"git", "-C", (char *)root_abs, "rev-parse", "--verify", "-q", "HEAD", NULL};
    size_t n = 0;
    char *o = git_run(rp, &n);
    if (!o) return -1;
    int ok = n >= 40 && strspn(o, "0123456789abcdef") == 40;
    if (ok) {
        memcpy(commit, o, 40);
        commit[40] = 0;
    }
    free(o);
    if (!ok) return -1;
    const char *st[] = {"git", "-C", (char *)root_abs, "status", "--porcelain", "-z", "--untracked-files=normal", "--", ".",
                  NULL};
    o = git_run(st, &n);
    *dirty = !o || n > 0;   /* a status git cannot give is not claimed clean */
    free(o);
    return 0;
}

/* ---- walk ----------------------------------------------------------------- */

/* ' .py .pyi ... .txt' and the text kinds' file names: what is listed. */
static void add_kinds(struct buf *b)
{
    for (size_t i = 0; parse_languages[i]; i++)
        for (const char *const *e = parse_languages[i]->extensions; *e; e++) buf_printf(b, " %s", *e);
    for (size_t i = 0; parse_text_kinds[i]; i++) {
        for (const char *const *e = parse_text_kinds[i]->extensions; *e; e++) buf_printf(b, " %s", *e);
        for (const char *const *e = parse_text_kinds[i]->names; e && *e; e++) buf_printf(b, " %s", *e);
    }
}

char *scan_dirs_stamp(void)
{
    /* '2': the encoding of scan_dir.entries */
    struct buf b = BUF_INIT;
    buf_adds(&b, "2 files");
    add_kinds(&b);
    buf_adds(&b, "; ignore files");
    for (size_t i = 0; ignore_names[i]; i++) buf_printf(&b, " %s", ignore_names[i]);
    buf_adds(&b, "; markers");
    for (size_t i = 0; marker_names[i]; i++) buf_printf(&b, " %s", marker_names[i]);
    return buf_take(&b);
}

/* An entry of a listing, as the walk uses it. */
enum { ENT_DIR = 'd', ENT_LINK = 'l', ENT_FILE = 'f', ENT_IGNORE = 'i', ENT_MARK = 'm' };

struct dent {
    char *name;
    unsigned char type;          /* ENT_* once classified; DT_* while read */
};

static int cmp_dent(const void *a, const void *b)
{
    return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* A listing's entries are kept as records 'type name NUL', sorted by name,
 * holding only what the walk uses: subdirectories (but version-control
 * metadata), symlinks, entries whose name has a language, ignore files and
 * the marker files that show what a directory is. */
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
        if (!nul || (type != ENT_DIR && type != ENT_LINK && type != ENT_FILE && type != ENT_IGNORE &&
                     type != ENT_MARK)) {
            free(*out);
            *out = NULL;
            *n = 0;
            return -1;
        }
        ARRAY_GROW(*out, *n, cap, 16);
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
    ARRAY_GROW(d->old, d->nold, d->capold, 256);
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
    ARRAY_GROW(d->fresh, d->nfresh, d->capfresh, 64);
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
            ARRAY_GROW(ents, nents, cap, 64);
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
 * package called env is ordinary project code): a bin/activate, looked up
 * only when there is a 'bin'. sub is the directory's path relative to the
 * open directory base ("" for base). */
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
                         size_t nents, int has_pkg);

/* The listing ents of the directory rel, found at sub relative to dbase
 * (entries at rel/name + ebaseoff relative to dbase): left out when its
 * contents show it is no project source, else its ignore files apply to what
 * it holds and it is walked. */
static void walk_listing(struct scanner *s, int dbase, const char *dsub, const char *rel, size_t ebaseoff,
                         const struct dent *ents, size_t nents)
{
    unsigned marks = 0;
    int bin = 0;
    for (size_t i = 0; i < nents; i++) {
        if (ents[i].type == ENT_MARK) marks |= marker_bit(ents[i].name);
        if (ents[i].type == ENT_DIR && strcmp(ents[i].name, "bin") == 0) bin = 1;
    }
    if (*rel && !s->no_ignore) {
        const char *slash = strrchr(rel, '/');
        const char *rule = dir_content_rule(slash ? slash + 1 : rel, marks, bin && has_activate(dbase, dsub));
        if (rule) {
            count_rule(s->r, xstrdup(rule));
            return;
        }
    }
    size_t keep = s->nstack;
    if (!s->no_ignore)
        for (size_t k = 0; ignore_names[k]; k++)
            for (size_t i = 0; i < nents; i++)
                if (ents[i].type == ENT_IGNORE && strcmp(ents[i].name, ignore_names[k]) == 0) {
                    struct ignore_file *f = load_ignore(dbase, dsub, rel, ignore_names[k]);
                    if (f) stack_push(s, f);
                }
    walk_entries(s, dbase, rel, ebaseoff, ents, nents, (marks & 2u) != 0);
    s->nstack = keep;
}

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
                walk_listing(s, base, sub, rel, baseoff, ents, nents);
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
    size_t w = 0;
    for (size_t i = 0; i < nents; i++) {
        const char *name = ents[i].name;
        unsigned char type = ents[i].type;
        if (type == DT_UNKNOWN) {
            struct stat cst;
            if (fstatat(fd, name, &cst, AT_SYMLINK_NOFOLLOW) != 0) {
                free(ents[i].name);
                continue;
            }
            type = S_ISDIR(cst.st_mode) ? DT_DIR : S_ISLNK(cst.st_mode) ? DT_LNK : DT_REG;
        }
        unsigned char t = type == DT_DIR ? (vcs_dir_name(name) ? 0 : ENT_DIR)
                        : type == DT_LNK ? ENT_LINK
                        : name_in(name, marker_names) ? ENT_MARK
                        : parse_lang_for_path(name) ? ENT_FILE
                        : name_in(name, ignore_names) ? ENT_IGNORE : 0;
        if (!t) {
            free(ents[i].name);
            continue;
        }
        ents[w].name = ents[i].name;
        ents[w++].type = t;
    }
    nents = w;
    if (s->dirs) {
        struct buf enc = BUF_INIT;
        for (size_t i = 0; i < nents; i++) encode_entry(&enc, ents[i].type, ents[i].name);
        dirs_record(s, old, rel, &st, complete, &enc);
        buf_free(&enc);
    }
    walk_listing(s, fd, "", rel, *rel ? strlen(rel) + 1 : 0, ents, nents);
    for (size_t i = 0; i < nents; i++) free(ents[i].name);
    free(ents);
    if (fd != base) close(fd);
}

/* The entries of the directory rel, sorted by name (see walk for base and
 * baseoff); has_pkg: it holds a package.json. */
static void walk_entries(struct scanner *s, int base, const char *rel, size_t baseoff, const struct dent *ents,
                         size_t nents, int has_pkg)
{
    struct buf child = BUF_INIT;
    for (size_t i = 0; i < nents; i++) {
        const char *name = ents[i].name;
        buf_reset(&child);
        if (*rel) {
            buf_adds(&child, rel);
            buf_addc(&child, '/');
        }
        buf_adds(&child, name);
        if (ents[i].type == ENT_DIR) {
            const char *rule = dir_name_rule(name, s->no_ignore, has_pkg);
            if (rule) {
                count_rule(s->r, xstrdup(rule));
                continue;
            }
            char *why = ignored_by(s->stack, s->nstack, child.data, 1);
            if (why) {
                count_rule(s->r, why);
                continue;
            }
            if (nesting_too_deep(s, child.data)) {
                scan_add_skip(s->r, child.data, "directory nested too deeply", -1);
                continue;
            }
            walk(s, base, child.data, baseoff, 0);
            continue;
        }
        if (ents[i].type != ENT_LINK && ents[i].type != ENT_FILE) continue;
        const struct lang *lang = parse_lang_for_path(name);
        if (ents[i].type == ENT_FILE && !lang) continue;
        /* git does not follow links: a directory-only rule does not match one */
        const char *frule = file_name_rule(name, s->no_ignore);
        char *why = frule ? xstrdup(frule) : ignored_by(s->stack, s->nstack, child.data, 0);
        if (why) {
            count_rule(s->r, why);
            continue;
        }
        if (ents[i].type == ENT_LINK) {
            char *full = xasprintf("%s/%s", s->root, child.data);
            consider_symlink(s, child.data, full, lang, 1);
            free(full);
            continue;
        }
        queue_file(s, child.data, lang);
    }
    buf_free(&child);
}

/* A deferred directory symlink: walked unless it leads to a directory already
 * listed, which is a loop when the target encloses the link. */
static void walk_deferred(struct scanner *s, const struct deferred *d)
{
    const char *rel = d->rel;
    char *full = xasprintf("%s/%s", s->root, rel);
    struct stat st;
    if (stat(full, &st) == 0) {
        if (!seen_has(s, st.st_dev, st.st_ino)) {
            /* the ignore files of the directories above the link apply */
            s->nstack = 0;
            for (size_t i = 0; i < d->nstack; i++) {
                ARRAY_GROW(s->stack, s->nstack, s->capstack, 8);
                s->stack[s->nstack++] = d->stack[i];
            }
            s->in_link = 1;
            walk(s, s->rootfd, rel, 0, 1);
            s->in_link = 0;
            s->nstack = 0;
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

static int cmp_rule(const void *a, const void *b)
{
    return strcmp(((const struct scan_rule_count *)a)->rule, ((const struct scan_rule_count *)b)->rule);
}

int scan_repo(const char *root_abs, const struct scan_options *so, struct scan_dirs *dirs, struct scan_result *out,
              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(root_abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs,
                 errno ? strerror(errno) : "not a directory");
        return -1;
    }
    struct scanner s = {.root = root_abs, .rootlen = strlen(root_abs), .max = so->max_file_size, .r = out,
                        .no_ignore = so->no_ignore};
    if (dirs) dirs->listed = dirs->cached = 0;
    size_t len = 0;
    char *list = !so->no_ignore && in_git_work_tree(root_abs) ? git_ls_files(root_abs, &len) : NULL;
    if (list) {
        out->used_git = 1;
        s.git = 1;
        s.rootfd = open(root_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s.rootfd < 0) {
            snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs, strerror(errno));
            free(list);
            return -1;
        }
        scan_git_list(&s, list, len);
        free(list);
        consider_queued(&s, so->stat_threads);
        close(s.rootfd);
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
        for (size_t i = 0; i < s.ndeferred; i++) walk_deferred(&s, &s.deferred[i]);
        consider_queued(&s, so->stat_threads);
        close(s.rootfd);
    }
    for (size_t i = 0; i < s.ndeferred; i++) {
        free(s.deferred[i].rel);
        free(s.deferred[i].stack);
    }
    free(s.deferred);
    free(s.seen);
    for (size_t i = 0; i < s.nifiles; i++) ignore_file_free(s.ifiles[i]);
    free(s.ifiles);
    free(s.stack);
    if (out->nrules) qsort(out->rules, out->nrules, sizeof *out->rules, cmp_rule);
    /* a walk mostly lists in path order already: sorting is then for nothing */
    size_t sorted = 1;
    while (sorted < out->nfiles && cmp_file(&out->files[sorted - 1], &out->files[sorted]) < 0) sorted++;
    if (sorted < out->nfiles) qsort(out->files, out->nfiles, sizeof *out->files, cmp_file);
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

/* ---- explain --------------------------------------------------------------- */

/* 1 when the file name exists in the directory sub of the root (fd). */
static int has_entry(int rootfd, const char *sub, const char *name)
{
    char *p = *sub ? xasprintf("%s/%s", sub, name) : xstrdup(name);
    int r = faccessat(rootfd, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    free(p);
    return r;
}

/* git's verdict on rel: 'source:line:pattern' of the rule excluding it
 * (malloc'd), or NULL when git does not ignore it. */
static char *git_ignore_rule(const char *root, const char *rel)
{
    const char *ci[] = {"git", "-C", (char *)root, "check-ignore", "-v", "--", (char *)rel, NULL};
    size_t n = 0;
    char *o = git_run(ci, &n);
    if (!o) return NULL;   /* exit 1: not ignored */
    char *tab = memchr(o, '\t', n);
    if (tab) *tab = 0;
    /* source:line:pattern; a '!' pattern re-includes */
    char *c1 = strchr(o, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!tab || (c2 && c2[1] == '!')) {
        free(o);
        return NULL;
    }
    return o;
}

/* scan_explain in a git work tree: why git's listing or a .drqaignore file
 * leaves rel out (malloc'd), or NULL. */
static char *explain_git(struct scanner *sc, int rootfd, const char *root_abs, const char *rel, int is_dir, int exists,
                         char *list, size_t len)
{
    size_t n = strlen(rel);
    char *why = NULL;
    /* version-control metadata and what git ignores */
    for (const char *q = rel; !why && *q; q++)
        if ((q == rel || q[-1] == '/') && (strncmp(q, ".git", 4) == 0 && (!q[4] || q[4] == '/')))
            why = xstrdup("version-control metadata");
    if (!why && *rel) {
        char *g = git_ignore_rule(root_abs, rel);
        if (g) why = xasprintf("git: %s", g);
        free(g);
    }
    if (!why) {
        int listed = 0;
        char *sub = NULL;   /* the submodule rel lies in, when git lists one */
        for (size_t i = 0; i < len && !listed;) {
            const char *e = list + i;
            size_t m = strnlen(e, len - i);
            i += m + 1;
            listed = strcmp(e, rel) == 0 || (is_dir && (!*rel || (strncmp(e, rel, n) == 0 && e[n] == '/')));
            if (!sub && m && m < n && strncmp(rel, e, m) == 0 && rel[m] == '/') {
                struct stat dst;
                if (fstatat(rootfd, e, &dst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(dst.st_mode)) sub = xstrdup(e);
            }
            if (listed && is_dir && strcmp(e, rel) == 0) {
                struct stat dst;   /* the submodule itself */
                if (fstatat(rootfd, e, &dst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(dst.st_mode))
                    why = xstrdup(SCAN_SUBMODULE_RULE);
            }
        }
        if (!why && sub) why = xasprintf("the git submodule '%s' " SCAN_SUBMODULE_NOTE, sub);
        free(sub);
        if (!why && !listed && exists) why = xstrdup("git: not listed by git ls-files");
    }
    const char *frule = is_dir ? NULL : file_name_rule(rel, sc->no_ignore);
    if (!why && frule) why = xstrdup(frule);
    if (!why) {
        git_drqaignores(sc, list, len);
        why = *rel ? path_ignored_by(sc->stack, sc->nstack, rel, is_dir) : NULL;
    }
    return why;
}

/* scan_explain outside git: each directory from the root down, as the walk
 * meets it; why a rule leaves rel out (malloc'd), or NULL, with the rule
 * that re-includes it, if any, in out. */
static char *explain_walk(struct scanner *sc, int rootfd, const struct scan_options *so, const char *rel, int is_dir,
                          struct buf *out)
{
    char *why = NULL;
    /* each directory from the root down, as the walk meets it */
    char *tmp = xstrdup(rel);
    char *comp = tmp;
    int parent_pkg = has_entry(rootfd, "", "package.json");
    for (;;) {
        char *dir = xstrndup(tmp, comp == tmp ? 0 : (size_t)(comp - tmp - 1));
        if (!so->no_ignore)
            for (size_t k = 0; ignore_names[k]; k++) {
                struct ignore_file *f = load_ignore(rootfd, dir, dir, ignore_names[k]);
                if (f) stack_push(sc, f);
            }
        free(dir);
        if (!*comp) break;
        char *slash = strchr(comp, '/');
        if (slash) *slash = 0;
        int comp_dir = slash || is_dir;
        const char *rule = comp_dir ? dir_name_rule(comp, so->no_ignore, parent_pkg) : file_name_rule(comp, so->no_ignore);
        if (rule) why = xstrdup(rule);
        if (!why) why = ignored_by(sc->stack, sc->nstack, tmp, comp_dir);
        if (!why && comp_dir && !so->no_ignore) {
            unsigned marks = 0;
            for (size_t k = 0; marker_names[k]; k++)
                if (has_entry(rootfd, tmp, marker_names[k])) marks |= 1u << k;
            rule = dir_content_rule(comp, marks, has_activate(rootfd, tmp));
            if (rule) why = xstrdup(rule);
        }
        if (why) {
            if (slash) buf_printf(out, "directory %s\n", tmp);
            break;
        }
        if (!slash) break;
        parent_pkg = has_entry(rootfd, tmp, "package.json");
        *slash = '/';
        comp = slash + 1;
    }
    free(tmp);
    const struct ignore_file *f;
    const struct ignore_rule *r = !why && *rel ? ignore_decide(sc->stack, sc->nstack, rel, is_dir, &f) : NULL;
    if (r && r->negate) {
        char *d = ignore_rule_describe(f, r);
        buf_printf(out, "rule      re-included by %s\n", d);
        free(d);
    }
    return why;
}

int scan_explain(const char *root_abs, const struct scan_options *so, const char *path, struct buf *out, char *err,
                 size_t errlen)
{
    size_t rl = strlen(root_abs);
    const char *p = path;
    if (*p == '/') {
        if (strncmp(p, root_abs, rl) != 0 || (p[rl] && p[rl] != '/')) {
            snprintf(err, errlen, "--explain '%s': the path is not inside the repository '%s'; give it relative to the repository",
                     path, root_abs);
            return -1;
        }
        p += rl;
    }
    while (*p == '/') p++;
    while (p[0] == '.' && p[1] == '/') p += 2;
    char *rel = xstrdup(p);
    size_t n = strlen(rel);
    while (n > 0 && rel[n - 1] == '/') rel[--n] = 0;
    for (char *q = rel; *q; q++)
        if ((q == rel || q[-1] == '/') && q[0] == '.' && q[1] == '.' && (q[2] == '/' || !q[2])) {
            snprintf(err, errlen, "--explain '%s': give the path inside the repository without '..'", path);
            free(rel);
            return -1;
        }
    int rootfd = open(root_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        snprintf(err, errlen, "cannot read the repository directory '%s': %s", root_abs, strerror(errno));
        free(rel);
        return -1;
    }
    struct stat st;
    int exists = *rel ? fstatat(rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 : fstat(rootfd, &st) == 0;
    int is_dir = exists && S_ISDIR(st.st_mode);
    buf_printf(out, "path      %s%s\n", *rel ? rel : ".", exists ? (is_dir ? " (directory)" : "") : " (does not exist)");
    size_t len = 0;
    char *list = !so->no_ignore && in_git_work_tree(root_abs) ? git_ls_files(root_abs, &len) : NULL;
    struct scanner s = {.root = root_abs, .rootlen = rl, .no_ignore = so->no_ignore};
    char *why = NULL;
    if (so->no_ignore) buf_adds(out, "listing   a walk of everything but version-control metadata (--no-ignore)\n");
    if (list) {
        buf_adds(out, "listing   git ls-files --cached --others --exclude-standard, then .drqaignore files\n");
        why = explain_git(&s, rootfd, root_abs, rel, is_dir, exists, list, len);
    } else {
        if (!so->no_ignore) buf_adds(out, "listing   a walk (not a git work tree): .gitignore, .ignore and .drqaignore files, "
                                          "directories shown to hold no project source\n");
        why = explain_walk(&s, rootfd, so, rel, is_dir, out);
    }
    if (why) {
        buf_printf(out, "verdict   not indexed: left out by %s\n", why);
    } else if (!exists) {
        buf_adds(out, "verdict   not indexed: no such file\n");
    } else if (is_dir) {
        buf_adds(out, "verdict   walked: files below it are indexed unless a rule leaves them out\n");
    } else {
        const struct lang *lang = parse_lang_for_path(rel);
        if (!lang) {
            buf_adds(out, "verdict   not indexed: not a kind of file the index reads (extensions and names:");
            add_kinds(out);
            buf_adds(out, ")\n");
        } else if (lang->skip) {
            buf_printf(out, "verdict   not indexed: %s\n", lang->skip);
        } else if (so->max_file_size > 0 && (long long)st.st_size > so->max_file_size) {
            buf_printf(out, "verdict   not indexed: too large (%lld bytes > %lld; see --max-file-size)\n",
                       (long long)st.st_size, so->max_file_size);
        } else {
            buf_printf(out, "verdict   indexed (%s%s)\n", lang->name, parse_is_text(lang) ? ", as text chunks" : "");
        }
    }
    free(why);
    free(list);
    for (size_t i = 0; i < s.nifiles; i++) ignore_file_free(s.ifiles[i]);
    free(s.ifiles);
    free(s.stack);
    close(rootfd);
    free(rel);
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

/* The length of the longest valid UTF-8 prefix of s[0..n) (no NUL byte). */
static size_t utf8_valid_prefix(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (p[i] >= 0x01 && p[i] < 0x80) { i++; continue; }
        size_t l = utf8_seq(p + i, n - i);
        if (!l) break;
        i += l;
    }
    return i;
}

char *scan_decode_utf8(const char *s, size_t n, size_t *outlen, int *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    *bad = 0;
    /* fast path: the common all-valid file is copied once */
    size_t i = utf8_valid_prefix(s, n);
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
