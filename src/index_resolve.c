/*
 * index_resolve: turns the names written in the code into rows of the index. Runs
 * after every update that changed a file, over the whole repository, because
 * a change in one file can re-point imports, bases and calls in any other.
 *
 * Modules are known by three names: the dotted path from the repository root
 * ('src.pkg.mod'), the name Python would import them by, found by walking up
 * the directories that hold an __init__.py ('pkg.mod'), and, when the root is
 * itself a package, that name under the root's package ('flask.app' for a
 * repository rooted at site-packages/flask). Relative imports are worked out
 * from the importing module's package. A name used in a file is looked up
 * through that file's imports (following re-exports a few hops), then among
 * the file's own definitions, then as the only definition of that name in
 * the repository's files of the same language (a TypeScript base class is
 * never a Go struct; JavaScript, TypeScript and TSX count as one language,
 * since they import each other); anything else stays unresolved rather than
 * guessed.
 * A Go package is a directory of files sharing one scope: an import binds the
 * package's name (the last element of its path) unless an alias is written,
 * and 'pkg.F' is F defined in any file of that package.
 */
#include "index_int.h"
#include "parse.h"
#include "sqlx.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a map from (integer, string) to an integer -------------------------------- */

#define AMBIGUOUS (-2)
/* find_in_file's memo values besides a symbol index */
#define MEMO_NONE (-1)               /* not known */
#define MEMO_MISS (-3)               /* known: no such symbol */
#define MEMO_BUSY (-4)               /* being worked out (a cycle when met again) */

struct ment { long long a; const char *s; long long v; };
struct map { struct ment *e; size_t n, cap; };

static uint64_t mhash(long long a, const char *s)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ^ (h >> 31);
}

static struct ment *map_slot(const struct map *m, long long a, const char *s)
{
    size_t j = (size_t)mhash(a, s) & (m->cap - 1);
    while (m->e[j].s && !(m->e[j].a == a && strcmp(m->e[j].s, s) == 0)) j = (j + 1) & (m->cap - 1);
    return &m->e[j];
}

static long long map_get(const struct map *m, long long a, const char *s)
{
    if (!m->cap || !s) return -1;
    struct ment *e = map_slot(m, a, s);
    return e->s ? e->v : -1;
}

/* unique: a second different value marks the key AMBIGUOUS; else the first value stays. */
static void map_put(struct map *m, long long a, const char *s, long long v, int unique)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct map old = *m;
        m->cap = old.cap ? old.cap * 2 : 1024;
        m->e = xcalloc(m->cap, sizeof *m->e);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.e[i].s) {
                *map_slot(m, old.e[i].a, old.e[i].s) = old.e[i];
                m->n++;
            }
        free(old.e);
    }
    struct ment *e = map_slot(m, a, s);
    if (e->s) {
        if (unique && e->v != v) e->v = AMBIGUOUS;
        return;
    }
    e->a = a;
    e->s = s;
    e->v = v;
    m->n++;
}

static void map_free(struct map *m) { free(m->e); memset(m, 0, sizeof *m); }

/* ---- the repository in memory --------------------------------------------------- */

struct rfile {
    long long id; char *path, *module; int is_init, has_star; size_t imp0, nimp;
    const struct lang *lang;   /* its extractor, for path-style imports (lang->import_module) */
    long long lang_key;        /* keys the fallbacks: lang_key_of(lang) */
    long long pkg;             /* Go: id of the package's first file, the key of its scope in pkgtop; else 0 */
};
struct rsym { long long id, file, parent; char kind; char *name; };
struct rimp {
    long long id, file, resolved, old_resolved;
    int line, level, name_is_module;
    char *module, *name, *alias;
};

struct repo {
    struct rfile *files; size_t nfiles;
    struct rsym *syms; size_t nsyms;
    struct rimp *imps; size_t nimps;
    struct map modules;        /* (0, name) -> file index */
    struct map top;            /* (file id, name) -> sym index of a top-level symbol */
    struct map children;       /* (parent id, name) -> sym index */
    struct map gclass;         /* (lang_key, name) -> unique top-level class, or AMBIGUOUS */
    struct map gdef;           /* (lang_key, name) -> unique top-level function or class */
    struct map pkgtop;         /* (Go package's first file id, name) -> sym index of a top-level symbol */
    struct map fileidx;        /* (file id, "") -> file index */
    struct map memo;           /* (file id, name) -> find_in_file's answer (see there) */
    struct map bound;          /* (file id, name) -> import binding it (bind_imports) */
    long cycle_hits;
    /* resolved bases: class sym index -> list of base sym indexes */
    long long *base_next, *base_head, *base_dst;  size_t nbases, capbases;
    char **strs; size_t nstrs, capstrs;           /* strings made here, freed at the end */
};

static char *keep(struct repo *R, char *s)
{
    ARRAY_GROW(R->strs, R->nstrs, R->capstrs, 256);
    return R->strs[R->nstrs++] = s;
}

static long long sym_index(const struct repo *R, long long id)
{
    size_t lo = 0, hi = R->nsyms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (R->syms[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < R->nsyms && R->syms[lo].id == id ? (long long)lo : -1;
}

static long long file_index(const struct repo *R, long long id) { return map_get(&R->fileidx, id, ""); }

/* The key of file fid's language for the repository-wide fallbacks. */
static long long lang_key(const struct repo *R, long long fid)
{
    long long fi = file_index(R, fid);
    return fi >= 0 ? R->files[fi].lang_key : 0;
}

/* A top-level symbol of file fid, or of any file of its Go package; -1 when none. */
static long long top_in_scope(const struct repo *R, long long fid, const char *name)
{
    long long s = map_get(&R->top, fid, name);
    if (s >= 0) return s;
    long long fi = file_index(R, fid);
    return fi >= 0 && R->files[fi].pkg ? map_get(&R->pkgtop, R->files[fi].pkg, name) : -1;
}

/* The name Python imports a file by: its path below the topmost directory
 * chain holding __init__.py files. NULL when that equals the path name. */
static char *import_name(const struct map *pkgdirs, const char *path, const char *module)
{
    if (!module) return NULL;
    /* count how many leading directories are not packages */
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    int ndirs = 0;
    for (char *p = dir; *p; p++) ndirs += *p == '/';
    int pkg_depth = 0;                 /* package directories directly above the file */
    while (slash) {
        *slash = 0;
        if (map_get(pkgdirs, 0, dir) < 0) break;
        pkg_depth++;
        slash = strrchr(dir, '/');
    }
    free(dir);
    int drop = ndirs - pkg_depth;      /* leading components that are plain directories */
    if (drop <= 0) return NULL;
    const char *m = module;
    for (int i = 0; i < drop && m; i++) {
        m = strchr(m, '.');
        if (m) m++;
    }
    return m && *m ? xstrdup(m) : NULL;
}

/* The package the root directory itself is, when it holds __init__.py:
 * 'flask' for .../site-packages/flask, 'django.db' for .../django/db. */
static char *root_package(const char *root)
{
    struct buf b = BUF_INIT;
    char *dir = xstrdup(root);
    for (;;) {
        char *init = xasprintf("%s/__init__.py", dir);
        int is_pkg = access(init, F_OK) == 0;
        free(init);
        char *slash = strrchr(dir, '/');
        if (!is_pkg || !slash || !slash[1]) break;
        char *name = b.len ? xasprintf("%s.%s", slash + 1, b.data) : xstrdup(slash + 1);
        buf_reset(&b);
        buf_adds(&b, name);
        free(name);
        *slash = 0;
        if (!*dir) break;
    }
    free(dir);
    return b.len ? buf_take(&b) : (buf_free(&b), NULL);
}

/* 1 + the index in parse_languages of the language whose definitions a file
 * of language name may fall back on (its family, else itself); 0 when unknown. */
static long long lang_key_of(const char *name)
{
    for (size_t k = 0; parse_languages[k]; k++)
        if (strcmp(parse_languages[k]->name, name) == 0 && parse_languages[k]->family) {
            name = parse_languages[k]->family;
            break;
        }
    for (size_t k = 0; parse_languages[k]; k++)
        if (strcmp(parse_languages[k]->name, name) == 0) return (long long)k + 1;
    return 0;
}

static int load(struct repo *R, sqlite3 *db, const char *root)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, path, module, lang FROM files ORDER BY id", -1, &st, NULL)) return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ARRAY_GROW(R->files, R->nfiles, cap, 256);
        struct rfile *f = &R->files[R->nfiles++];
        memset(f, 0, sizeof *f);
        f->id = sqlite3_column_int64(st, 0);
        f->path = sqlx_col_dup(st, 1);
        f->module = sqlx_col_dup(st, 2);
        const char *lang = (const char *)sqlite3_column_text(st, 3);
        for (size_t k = 0; lang && parse_languages[k]; k++)
            if (strcmp(parse_languages[k]->name, lang) == 0) f->lang = parse_languages[k];
        f->lang_key = lang ? lang_key_of(lang) : 0;
        const char *base = strrchr(f->path, '/');
        base = base ? base + 1 : f->path;
        f->is_init = strncmp(base, "__init__.", 9) == 0;
    }
    sqlite3_finalize(st);

    /* directories that are packages */
    struct map pkgdirs = {0}, gopkgs = {0};
    for (size_t i = 0; i < R->nfiles; i++) {
        map_put(&R->fileidx, R->files[i].id, "", (long long)i, 0);
        struct rfile *f = &R->files[i];
        if (f->lang && f->module && f->lang->package_dirs) {
            map_put(&gopkgs, 0, f->module, f->id, 0);   /* the first file (by id) keys the package */
            f->pkg = map_get(&gopkgs, 0, f->module);
        }
        if (!R->files[i].is_init) continue;
        const char *slash = strrchr(R->files[i].path, '/');
        char *d = slash ? xstrndup(R->files[i].path, (size_t)(slash - R->files[i].path)) : xstrdup("");
        map_put(&pkgdirs, 0, keep(R, d), 1, 0);
    }
    /* module names: path names first (a .py before its .pyi stub: files are by id, so sort
     * preference is applied by registering .py files in a first pass) */
    char *rootpkg = root_package(root);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < R->nfiles; i++) {
            struct rfile *f = &R->files[i];
            if (!f->module || str_ends(f->path, ".pyi") != pass) continue;
            map_put(&R->modules, 0, f->module, (long long)i, 0);
        }
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < R->nfiles; i++) {
            struct rfile *f = &R->files[i];
            if (!f->module || str_ends(f->path, ".pyi") != pass) continue;
            char *imp = import_name(&pkgdirs, f->path, f->module);
            const char *short_name = imp ? imp : f->module;
            if (imp) map_put(&R->modules, 0, keep(R, imp), (long long)i, 0);
            if (rootpkg) {
                char *full = *short_name ? xasprintf("%s.%s", rootpkg, short_name) : xstrdup(rootpkg);
                map_put(&R->modules, 0, keep(R, full), (long long)i, 0);
            }
        }
    free(rootpkg);
    map_free(&pkgdirs);
    map_free(&gopkgs);

    cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, file_id, parent_id, kind, name FROM symbols ORDER BY id", -1, &st, NULL))
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ARRAY_GROW(R->syms, R->nsyms, cap, 1024);
        struct rsym *y = &R->syms[R->nsyms++];
        y->id = sqlite3_column_int64(st, 0);
        y->file = sqlite3_column_int64(st, 1);
        y->parent = sqlite3_column_type(st, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 2);
        const char *k = (const char *)sqlite3_column_text(st, 3);
        y->kind = k ? k[0] : 'v';                /* class, function, method, variable */
        y->name = sqlx_col_dup(st, 4);
        if (!y->name) y->name = xstrdup("");
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < R->nsyms; i++) {
        struct rsym *y = &R->syms[i];
        if (y->parent) {
            map_put(&R->children, y->parent, y->name, (long long)i, 0);
            continue;
        }
        map_put(&R->top, y->file, y->name, (long long)i, 0);
        long long fi = file_index(R, y->file);
        long long lk = fi >= 0 ? R->files[fi].lang_key : 0;
        if (y->kind == 'c') map_put(&R->gclass, lk, y->name, (long long)i, 1);
        if (y->kind == 'c' || y->kind == 'f') map_put(&R->gdef, lk, y->name, (long long)i, 1);
        if (fi >= 0 && R->files[fi].pkg) map_put(&R->pkgtop, R->files[fi].pkg, y->name, (long long)i, 0);
    }

    cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, file_id, line, module, name, alias, level, resolved_file_id "
                               "FROM imports ORDER BY file_id, id", -1, &st, NULL))
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ARRAY_GROW(R->imps, R->nimps, cap, 1024);
        struct rimp *m = &R->imps[R->nimps++];
        memset(m, 0, sizeof *m);
        m->id = sqlite3_column_int64(st, 0);
        m->file = sqlite3_column_int64(st, 1);
        m->line = sqlite3_column_int(st, 2);
        m->module = sqlx_col_dup(st, 3);
        if (!m->module) m->module = xstrdup("");
        m->name = sqlx_col_dup(st, 4);
        m->alias = sqlx_col_dup(st, 5);
        m->level = sqlite3_column_int(st, 6);
        m->old_resolved = sqlite3_column_type(st, 7) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 7);
        long long fi = file_index(R, m->file);
        if (fi >= 0) {
            struct rfile *f = &R->files[fi];
            if (!f->nimp) f->imp0 = R->nimps - 1;
            f->nimp++;
        }
    }
    sqlite3_finalize(st);
    return 0;
}

static void repo_free(struct repo *R)
{
    for (size_t i = 0; i < R->nfiles; i++) {
        free(R->files[i].path);
        free(R->files[i].module);
    }
    for (size_t i = 0; i < R->nsyms; i++) free(R->syms[i].name);
    for (size_t i = 0; i < R->nimps; i++) {
        free(R->imps[i].module);
        free(R->imps[i].name);
        free(R->imps[i].alias);
    }
    for (size_t i = 0; i < R->nstrs; i++) free(R->strs[i]);
    free(R->strs);
    free(R->files);
    free(R->syms);
    free(R->imps);
    free(R->base_next);
    free(R->base_head);
    free(R->base_dst);
    map_free(&R->modules);
    map_free(&R->top);
    map_free(&R->children);
    map_free(&R->gclass);
    map_free(&R->gdef);
    map_free(&R->pkgtop);
    map_free(&R->fileidx);
    map_free(&R->memo);
    map_free(&R->bound);
}

/* The memo entry for (fid, name), created (with a kept copy of name) when missing. */
static struct ment *memo_entry(struct repo *R, long long fid, const char *name)
{
    if (map_get(&R->memo, fid, name) == -1 && !(R->memo.cap && map_slot(&R->memo, fid, name)->s))
        map_put(&R->memo, fid, keep(R, xstrdup(name)), MEMO_NONE, 0);
    return map_slot(&R->memo, fid, name);
}

/* ---- modules and imports ------------------------------------------------------ */

static long long count_dots(const char *s)
{
    long long n = 0;
    for (; *s; s++) n += *s == '.';
    return n;
}

/* File index of an absolute dotted module name, or -1. The last resort drops
 * leading components ('myproj.flask.app' -> 'flask.app') but keeps at least two,
 * so that 'os.path' never lands on a repository file called path.py. */
static long long lookup_module(const struct repo *R, const char *name)
{
    if (!name || !*name) return -1;
    long long fi = map_get(&R->modules, 0, name);
    if (fi >= 0) return fi;
    for (const char *p = strchr(name, '.'); p && count_dots(p + 1) >= 1; p = strchr(p + 1, '.')) {
        fi = map_get(&R->modules, 0, p + 1);
        if (fi >= 0) return fi;
    }
    return -1;
}

/* The absolute module an import names (malloc'd), or NULL when a relative
 * import climbs above the top of the tree. */
static char *import_target(const struct repo *R, const struct rimp *m)
{
    if (m->level <= 0) return xstrdup(m->module);
    long long fi = file_index(R, m->file);
    if (fi < 0 || !R->files[fi].module) return NULL;
    const struct rfile *f = &R->files[fi];
    char *pkg = xstrdup(f->module);
    int up = m->level - (f->is_init ? 1 : 0);   /* a module's package is one step up; __init__ is its package */
    for (int i = 0; i < up; i++) {
        char *dot = strrchr(pkg, '.');
        if (dot) *dot = 0;
        else if (*pkg) pkg[0] = 0;
        else {
            free(pkg);
            return NULL;
        }
    }
    char *t;
    if (*m->module) t = *pkg ? xasprintf("%s.%s", pkg, m->module) : xstrdup(m->module);
    else t = xstrdup(pkg);
    free(pkg);
    return t;
}

static int module_exists(void *ctx, const char *name)
{
    return map_get(&((const struct repo *)ctx)->modules, 0, name) >= 0;
}

static void resolve_imports(struct repo *R)
{
    for (size_t i = 0; i < R->nimps; i++) {
        struct rimp *m = &R->imps[i];
        m->resolved = 0;
        m->name_is_module = 0;
        long long ffi = file_index(R, m->file);
        if (ffi >= 0 && R->files[ffi].lang && R->files[ffi].lang->import_module) {
            /* imports written as paths: the language names the module */
            char *t = R->files[ffi].lang->import_module(R->files[ffi].path, m->module, module_exists, R);
            long long fi = t ? map_get(&R->modules, 0, t) : -1;
            if (fi >= 0) m->resolved = R->files[fi].id;
            free(t);
            continue;
        }
        char *t = import_target(R, m);
        if (!t) continue;
        long long fi = -1;
        if (m->name && strcmp(m->name, "*") != 0) {
            /* 'from pkg import mod' names a module when pkg.mod is one */
            char *sub = *t ? xasprintf("%s.%s", t, m->name) : xstrdup(m->name);
            fi = m->level > 0 ? map_get(&R->modules, 0, sub) : lookup_module(R, sub);
            free(sub);
            if (fi >= 0) m->name_is_module = 1;
        }
        if (fi < 0 && *t) fi = m->level > 0 ? map_get(&R->modules, 0, t) : lookup_module(R, t);
        if (fi < 0 && !*t && m->level > 0) fi = map_get(&R->modules, 0, "");   /* the root package */
        if (fi >= 0) m->resolved = R->files[fi].id;
        free(t);
    }
}

/* ---- names --------------------------------------------------------------------- */

static long long find_in_file(struct repo *R, long long fid, const char *name, int depth);

/* A name bound by an import in file fid: the symbol it names (sym index),
 * -1 when none. *module_fid receives the file when the name is a module. */
static long long from_imports(struct repo *R, long long fid, const char *name, int depth, long long *module_fid)
{
    if (module_fid) *module_fid = 0;
    long long k = map_get(&R->bound, fid, name);
    if (k >= 0) {
        const struct rimp *m = &R->imps[k];
        if (!m->name || m->name_is_module) {
            if (module_fid) *module_fid = m->resolved;
            return -1;
        }
        long long s = find_in_file(R, m->resolved, m->name, depth + 1);
        if (s >= 0) return s;
    }
    long long fi = file_index(R, fid);
    if (fi < 0 || !R->files[fi].has_star) return -1;
    const struct rfile *f = &R->files[fi];
    for (size_t i = f->imp0; i < f->imp0 + f->nimp; i++) {
        const struct rimp *m = &R->imps[i];
        if (!m->resolved || !m->name || strcmp(m->name, "*") != 0) continue;
        long long s = find_in_file(R, m->resolved, name, depth + 1);
        if (s >= 0) return s;
    }
    return -1;
}

/* The names each file's resolved imports bind, for from_imports: 'from m
 * import n as a' binds a, 'import a.b' binds 'a.b' (used whole as the head
 * of 'a.b.f'), 'import a.b as n' binds n. The first binding of a name wins. */
static void bind_imports(struct repo *R)
{
    for (size_t i = 0; i < R->nimps; i++) {
        const struct rimp *m = &R->imps[i];
        if (!m->resolved) continue;
        if (m->name && strcmp(m->name, "*") == 0) {
            long long fi = file_index(R, m->file);
            if (fi >= 0) R->files[fi].has_star = 1;
            continue;
        }
        const char *bound = m->alias ? m->alias : m->name ? m->name : m->module;
        long long fi = file_index(R, m->file);
        if (!m->alias && !m->name && fi >= 0 && R->files[fi].pkg) {
            /* Go: 'import "example.com/shop/inventory"' binds inventory */
            const char *slash = strrchr(m->module, '/');
            bound = slash ? slash + 1 : m->module;
        }
        map_put(&R->bound, m->file, bound, (long long)i, 0);
    }
}

/* A top-level symbol of file fid, following re-exports ('from .base import Base'
 * in a package's __init__) and star imports. Answers are memoised: packages
 * like sympy star-import each other, and an unmemoised search revisits the
 * same (file, name) pairs combinatorially often. A search that ran into a
 * pair still being worked out (an import cycle) may have missed a path, so
 * its answer is not kept: that keeps results independent of the order in
 * which names are asked, and so an updated index equal to a fresh one. */
static long long find_in_file(struct repo *R, long long fid, const char *name, int depth)
{
    (void)depth;   /* cycles, not depth, bound the search */
    long long s = top_in_scope(R, fid, name);
    if (s >= 0) return s;
    long long m = map_get(&R->memo, fid, name);
    if (m == MEMO_BUSY) {
        R->cycle_hits++;
        return -1;
    }
    if (m >= 0) return m;
    if (m == MEMO_MISS) return -1;
    struct ment *e = memo_entry(R, fid, name);
    e->v = MEMO_BUSY;
    long before = R->cycle_hits;
    s = from_imports(R, fid, name, 0, NULL);
    e = memo_entry(R, fid, name);          /* the table may have grown */
    e->v = R->cycle_hits != before ? MEMO_NONE : s >= 0 ? s : MEMO_MISS;
    return s;
}

/* A module a dotted head ('models', 'os.path', 'sessions.base') names in file fid. */
static long long module_named(struct repo *R, long long fid, const char *head)
{
    long long mf = 0;
    from_imports(R, fid, head, 0, &mf);
    return mf;
}

static long long member(struct repo *R, long long cls, const char *name, int depth)
{
    if (cls < 0 || depth > 12) return -1;
    long long s = map_get(&R->children, R->syms[cls].id, name);
    if (s >= 0) return s;
    for (long long b = R->base_head ? R->base_head[cls] : -1; b >= 0; b = R->base_next[b]) {
        s = member(R, R->base_dst[b], name, depth + 1);
        if (s >= 0) return s;
    }
    return -1;
}

static long long bases_member(struct repo *R, long long cls, const char *name)
{
    for (long long b = R->base_head ? R->base_head[cls] : -1; b >= 0; b = R->base_next[b]) {
        long long s = member(R, R->base_dst[b], name, 1);
        if (s >= 0) return s;
    }
    return -1;
}

/* The class enclosing symbol index s (s itself when it is a class), or -1. */
static long long enclosing_class(struct repo *R, long long s)
{
    for (int guard = 0; s >= 0 && guard < 64; guard++) {
        if (R->syms[s].kind == 'c') return s;
        if (!R->syms[s].parent) return -1;
        s = sym_index(R, R->syms[s].parent);
    }
    return -1;
}

/* A dotted expression 'a.b.C' in file fid: C in the module a.b names, or a
 * member of the class a.b names. */
static long long resolve_dotted(struct repo *R, long long fid, const char *expr, int want_class);

static long long resolve_plain(struct repo *R, long long fid, const char *name, int want_class)
{
    long long s = from_imports(R, fid, name, 0, NULL);
    if (s >= 0) return s;
    s = top_in_scope(R, fid, name);
    if (s >= 0 && (!want_class || R->syms[s].kind == 'c')) return s;
    s = map_get(want_class ? &R->gclass : &R->gdef, lang_key(R, fid), name);
    return s >= 0 ? s : -1;
}

static long long resolve_dotted(struct repo *R, long long fid, const char *expr, int want_class)
{
    const char *dot = strrchr(expr, '.');
    if (!dot) return resolve_plain(R, fid, expr, want_class);
    char *head = xstrndup(expr, (size_t)(dot - expr));
    const char *last = dot + 1;
    long long s = -1;
    long long mf = module_named(R, fid, head);
    if (mf) s = find_in_file(R, mf, last, 0);
    if (s < 0 && !mf) {
        if (!strchr(head, '.')) {
            long long cls = resolve_plain(R, fid, head, 1);
            if (cls >= 0 && R->syms[cls].kind == 'c') s = member(R, cls, last, 0);
        }
    }
    free(head);
    if (s >= 0 && want_class && R->syms[s].kind != 'c') s = -1;
    return s;
}

/* A call from symbol index caller (or -1) in file fid to callee as written. */
static long long resolve_call(struct repo *R, long long fid, long long caller, const char *callee)
{
    if (strncmp(callee, "self.", 5) == 0 || strncmp(callee, "cls.", 4) == 0) {
        const char *m = strchr(callee, '.') + 1;
        if (strchr(m, '.')) return -1;   /* self.attr.method: the attribute's type is unknown */
        long long cls = caller >= 0 ? enclosing_class(R, caller) : -1;
        return cls >= 0 ? member(R, cls, m, 0) : -1;
    }
    if (strncmp(callee, "super().", 8) == 0) {
        const char *m = callee + 8;
        if (strchr(m, '.')) return -1;
        long long cls = caller >= 0 ? enclosing_class(R, caller) : -1;
        return cls >= 0 ? bases_member(R, cls, m) : -1;
    }
    for (const char *p = callee; *p; p++)
        if (!(*p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z') || (unsigned char)*p >= 0x80))
            return -1;   /* f()(), a[0](): not a name */
    if (!strchr(callee, '.')) {
        /* a function defined in an enclosing function */
        for (long long s = caller; s >= 0 && R->syms[s].kind != 'c';) {
            long long c = map_get(&R->children, R->syms[s].id, callee);
            if (c >= 0 && R->syms[c].kind != 'v') return c;
            if (!R->syms[s].parent) break;
            s = sym_index(R, R->syms[s].parent);
        }
        long long s = top_in_scope(R, fid, callee);
        if (s >= 0 && R->syms[s].kind != 'v') return s;
        s = from_imports(R, fid, callee, 0, NULL);
        if (s >= 0) return s;
        s = map_get(&R->gdef, lang_key(R, fid), callee);
        return s >= 0 ? s : -1;
    }
    long long s = resolve_dotted(R, fid, callee, 0);
    return s >= 0 && R->syms[s].kind != 'v' ? s : -1;
}

/* ---- writing ------------------------------------------------------------------- */

static void add_base(struct repo *R, long long cls, long long dst)
{
    if (R->nbases == R->capbases) {   /* two arrays, one count */
        R->capbases = xgrow_cap(R->capbases, R->nbases, 256);
        R->base_next = xreallocarray(R->base_next, R->capbases, sizeof *R->base_next);
        R->base_dst = xreallocarray(R->base_dst, R->capbases, sizeof *R->base_dst);
    }
    R->base_dst[R->nbases] = dst;
    R->base_next[R->nbases] = R->base_head[cls];
    R->base_head[cls] = (long long)R->nbases++;
}

static int fail(sqlite3 *db, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot resolve %s in the index: %s", what, sqlite3_errmsg(db));
    return -1;
}

/* The symbol (index in R->syms) an edge of file fid from symbol src_id
 * (0: module level) to target resolves to, or -1. inherits: a base
 * expression, recorded as a base of src. */
static long long resolve_target(struct repo *R, int inherits, long long fid, long long src_id, const char *target)
{
    long long src = src_id ? sym_index(R, src_id) : -1;
    long long d = -1;
    if (!target) return -1;
    if (inherits) {
        char *t = xstrdup(target);
        char *br = strpbrk(t, "[(");
        if (br) *br = 0;
        d = resolve_dotted(R, fid, t, 1);
        if (d == src) d = -1;     /* 'class X(X)': a shadowed name, not itself */
        free(t);
        if (d >= 0 && src >= 0) add_base(R, src, d);
    } else {
        d = resolve_call(R, fid, src, target);
    }
    return d;
}

/* Recomputes dst of every edge of kind, in batches so that memory stays flat. */
static int resolve_edges(struct repo *R, sqlite3 *db, int kind, long counts[2], char *err, size_t errlen)
{
    const char *what = index_edge_kind_names[kind];
    int inherits = kind == INDEX_EDGE_INHERITS;
    sqlite3_stmt *sel, *upd;
    if (sqlite3_prepare_v2(db, "SELECT id, src_file, src_id, coalesce(target, target_name), dst_id, dst_file, coalesce(n, 1) FROM edges "
                               "WHERE kind = ?1 AND id > ?2 ORDER BY id LIMIT 4096", -1, &sel, NULL))
        return fail(db, what, err, errlen);
    if (sqlite3_prepare_v2(db, "UPDATE edges SET dst_id = ?1, dst_file = ?2 WHERE id = ?3", -1, &upd, NULL)) {
        sqlite3_finalize(sel);
        return fail(db, what, err, errlen);
    }
    struct row { long long id, file, src, dst, dst_file, new_dst, new_file, n; char *target; } *rows;
    rows = xmalloc(4096 * sizeof *rows);
    long long after = 0;
    int rc = 0;
    for (;;) {
        size_t n = 0;
        sqlite3_bind_int(sel, 1, kind);
        sqlite3_bind_int64(sel, 2, after);
        while (sqlite3_step(sel) == SQLITE_ROW) {
            struct row *r = &rows[n++];
            r->id = sqlite3_column_int64(sel, 0);
            r->file = sqlite3_column_int64(sel, 1);
            r->src = sqlite3_column_int64(sel, 2);
            r->target = sqlx_col_dup(sel, 3);
            r->dst = sqlite3_column_int64(sel, 4);
            r->dst_file = sqlite3_column_int64(sel, 5);
            r->n = sqlite3_column_int64(sel, 6);
        }
        sqlite3_reset(sel);
        if (n == 0) break;
        after = rows[n - 1].id;
        for (size_t i = 0; i < n && !rc; i++) {
            struct row *r = &rows[i];
            long long d = resolve_target(R, inherits, r->file, r->src, r->target);
            r->new_dst = d >= 0 ? R->syms[d].id : 0;
            counts[d >= 0 ? 0 : 1] += r->n;   /* call sites */
            r->new_file = d >= 0 ? R->syms[d].file : 0;
            if (r->new_dst == r->dst && r->new_file == r->dst_file) continue;
            if (r->new_dst) {
                sqlite3_bind_int64(upd, 1, r->new_dst);
                sqlite3_bind_int64(upd, 2, r->new_file);
            }
            sqlite3_bind_int64(upd, 3, r->id);
            if (sqlite3_step(upd) != SQLITE_DONE) rc = fail(db, what, err, errlen);
            sqlite3_reset(upd);
            sqlite3_clear_bindings(upd);
        }
        for (size_t i = 0; i < n; i++) free(rows[i].target);
        if (rc || n < 4096) break;
    }
    free(rows);
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    return rc;
}

/* Resolves the pending edges of one kind in their order, as resolve_edges
 * does the rows, into dst and dst_file. */
static void resolve_pending(struct repo *R, const struct index_edges *P, int kind, long long *dst,
                            long long *dst_file, long counts[2])
{
    for (size_t i = 0; i < P->n; i++) {
        const struct index_edge *e = &P->v[i];
        if (e->kind != kind) continue;
        long long d = resolve_target(R, kind == INDEX_EDGE_INHERITS, e->file, e->src, index_edge_str(P, e->target));
        dst[i] = d >= 0 ? R->syms[d].id : 0;
        dst_file[i] = d >= 0 ? R->syms[d].file : 0;
        counts[d >= 0 ? 0 : 1] += e->n;   /* call sites */
    }
}

/* Inserts the pending edges, in their order, with their destinations. */
static int insert_pending(sqlite3 *db, const struct index_edges *P, const long long *dst, const long long *dst_file,
                          char *err, size_t errlen)
{
    sqlite3_stmt *ins, *run_st;
    if (sqlite3_prepare_v2(db, INDEX_EDGE_INSERT_SQL, -1, &ins, NULL))
        return fail(db, "edges", err, errlen);
    if (sqlite3_prepare_v2(db, INDEX_EDGE_RUN_SQL, -1, &run_st, NULL)) {
        sqlite3_finalize(ins);
        return fail(db, "edges", err, errlen);
    }
    struct index_edge_run run = {0, 0, 0};
    struct buf scratch = BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < P->n && !rc; i++) {
        const struct index_edge *e = &P->v[i];
        long long d = dst[i], df = dst_file[i];
        const char *tn = index_edge_str(P, e->target_name);
        sqlite3_bind_int(ins, 1, e->kind);
        sqlite3_bind_int64(ins, 2, e->file);
        if (e->src) sqlite3_bind_int64(ins, 3, e->src);
        sqlite3_bind_int(ins, 4, e->line);
        index_edge_bind_target(ins, 5, index_edge_str(P, e->target), tn, &scratch);
        if (tn) sqlite3_bind_text(ins, 6, tn, -1, SQLITE_STATIC);
        if (d) sqlite3_bind_int64(ins, 7, d);
        if (df) sqlite3_bind_int64(ins, 8, df);
        if (e->n > 1) sqlite3_bind_int(ins, 9, e->n);
        if (sqlite3_step(ins) != SQLITE_DONE ||
            index_edge_run_note(&run, run_st, e->file, sqlite3_last_insert_rowid(db)))
            rc = fail(db, "edges", err, errlen);
        sqlite3_reset(ins);
        sqlite3_clear_bindings(ins);
    }
    if (!rc && index_edge_run_end(&run, run_st)) rc = fail(db, "edges", err, errlen);
    buf_free(&scratch);
    sqlite3_finalize(ins);
    sqlite3_finalize(run_st);
    return rc;
}

/* Writes imports.resolved_file_id where it changed; counts resolved (a
 * repository file) and unresolved imports. */
static int write_imports(struct repo *R, sqlite3 *db, long counts[2], char *err, size_t errlen)
{
    sqlite3_stmt *upd;
    if (sqlite3_prepare_v2(db, "UPDATE imports SET resolved_file_id = ?1 WHERE id = ?2", -1, &upd, NULL))
        return fail(db, "imports", err, errlen);
    int rc = 0;
    for (size_t i = 0; i < R->nimps && !rc; i++) {
        struct rimp *m = &R->imps[i];
        if (m->resolved != m->old_resolved) {
            if (m->resolved) sqlite3_bind_int64(upd, 1, m->resolved);
            sqlite3_bind_int64(upd, 2, m->id);
            if (sqlite3_step(upd) != SQLITE_DONE) rc = fail(db, "imports", err, errlen);
            sqlite3_reset(upd);
            sqlite3_clear_bindings(upd);
        }
        counts[m->resolved ? 0 : 1]++;
    }
    sqlite3_finalize(upd);
    return rc;
}

/* Resolves and writes the edges: those in the table, updated in place, or
 * the pending ones of a fresh build, inserted once resolved. Either way
 * imports are looked up first, then bases (method lookup through self.*
 * walks them), then calls, so that the resolver answers the same. */
static int resolve_all(struct repo *R, sqlite3 *db, const struct index_edges *pending, long c[][2], char *err,
                       size_t errlen)
{
    int rc = -1;
    if (!pending)
        return write_imports(R, db, c[INDEX_EDGE_IMPORTS], err, errlen) ||
                       resolve_edges(R, db, INDEX_EDGE_INHERITS, c[INDEX_EDGE_INHERITS], err, errlen) ||
                       resolve_edges(R, db, INDEX_EDGE_CALLS, c[INDEX_EDGE_CALLS], err, errlen)
                   ? -1 : 0;
    size_t n = pending->n ? pending->n : 1;
    long long *dst = xreallocarray(NULL, n, sizeof *dst), *dst_file = xreallocarray(NULL, n, sizeof *dst_file);
    resolve_pending(R, pending, INDEX_EDGE_INHERITS, dst, dst_file, c[INDEX_EDGE_INHERITS]);
    resolve_pending(R, pending, INDEX_EDGE_CALLS, dst, dst_file, c[INDEX_EDGE_CALLS]);
    /* the pending rows come first, as they would have been inserted while parsing */
    rc = insert_pending(db, pending, dst, dst_file, err, errlen) ||
                 write_imports(R, db, c[INDEX_EDGE_IMPORTS], err, errlen)
             ? -1 : 0;
    free(dst);
    free(dst_file);
    return rc;
}

int index_resolve(sqlite3 *db, const char *root_abs, const struct index_edges *pending, struct index_stats *counts,
                  char *err, size_t errlen)
{
    struct repo R;
    memset(&R, 0, sizeof R);
    int rc = -1;
    if (load(&R, db, root_abs)) {
        fail(db, "names", err, errlen);
        goto out;
    }
    R.base_head = xmalloc((R.nsyms ? R.nsyms : 1) * sizeof *R.base_head);
    for (size_t i = 0; i < R.nsyms; i++) R.base_head[i] = -1;
    resolve_imports(&R);
    bind_imports(&R);
    long c[INDEX_EDGE_KINDS][2];
    memset(c, 0, sizeof c);
    if (resolve_all(&R, db, pending, c, err, errlen)) goto out;
    if (counts) {
        /* the whole index is in memory now: count it here rather than query it again */
        counts->files = (long)R.nfiles;
        counts->imports = (long)R.nimps;
        counts->classes = counts->functions = counts->methods = counts->variables = 0;
        long nested = 0;
        for (size_t i = 0; i < R.nsyms; i++) {
            switch (R.syms[i].kind) {
            case 'c': counts->classes++; break;
            case 'f': counts->functions++; break;
            case 'm': counts->methods++; break;
            default: counts->variables++; break;
            }
            nested += R.syms[i].parent != 0;
        }
        c[INDEX_EDGE_CONTAINS][0] = nested;   /* one contains edge per nested symbol, always resolved */
        counts->calls = c[INDEX_EDGE_CALLS][0] + c[INDEX_EDGE_CALLS][1];
        for (int k = 0; k < INDEX_EDGE_KINDS; k++) {
            counts->edges_resolved[k] = c[k][0];
            counts->edges_unresolved[k] = c[k][1];
        }
    }
    rc = 0;
out:
    repo_free(&R);
    return rc;
}
