/*
 * Unit tests for what questions keep in the index to avoid reading all of it
 * again: the line postings (linepost.h) that qparse_windows scores windows
 * from, and the distinct symbol names of action_cache_names. Each must give
 * exactly what computing it from the index's rows gives (qparse_windows_scan;
 * the GROUP BY over symbols), be built on first use, be refused once the
 * files change, and never be used half-written or malformed.
 */
#include "tap.h"
#include "harness.h"
#include "action.h"
#include "linepost.h"
#include "qparse.h"
#include "store.h"
#include "util.h"
#include "ztext.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int64_t add_file(sqlite3 *db, const char *path, const char *text, const char *hash)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO files(path, lang, size, mtime_ns, hash, nlines, ztext, tlen) "
                           "VALUES(?1, 'python', ?2, 0, ?3, 1, ?4, ?2)", -1, &st, NULL);
    size_t zl;
    unsigned char *z = ztext_pack(text, strlen(text), &zl);
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)strlen(text));
    sqlite3_bind_text(st, 3, hash, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 4, z, (int)zl, free);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return sqlite3_last_insert_rowid(db);
}

/* A new text and hash for the file at path; 0 when one row changed. */
static int set_text(sqlite3 *db, const char *path, const char *text, const char *hash)
{
    sqlite3_stmt *st;
    size_t zl;
    unsigned char *z = ztext_pack(text, strlen(text), &zl);
    sqlite3_prepare_v2(db, "UPDATE files SET ztext = ?1, tlen = ?2, hash = ?3 WHERE path = ?4", -1, &st, NULL);
    sqlite3_bind_blob(st, 1, z, (int)zl, free);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)strlen(text));
    sqlite3_bind_text(st, 3, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, path, -1, SQLITE_STATIC);
    int r = sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(db) == 1 ? 0 : -1;
    sqlite3_finalize(st);
    return r;
}

static void add_symbol(sqlite3 *db, int64_t file, const char *kind, const char *name)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO symbols(file_id, kind_s, name, qualname_s, start_line, end_line) "
                           "VALUES(?1, ?2, ?3, ?3, 1, 2)", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, file);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

static const char *const WORDS[] = {
    "connect", "connection", "connections", "connected", "connecting", "session", "sessions", "getResponse",
    "get_response", "HTTPResponse", "flush", "cycle_key", "redirect", "redirects", "redirected", "mount",
    "adapter", "adapters", "expire", "expiry", "expires", "self", "return", "value", "x", "if", "none",
    "compile", "compiler", "compiled", "url", "rule", "rules", "limit_7", "limit_77", "limit_777", "café",
};

/* A tree of files with terms in many lines: several windows per file,
 * stems that match by prefix, a file without a final newline, an empty
 * file, one of newlines only, repeated terms on a line. */
static void fill(sqlite3 *db)
{
    unsigned s = 12345;
    for (int f = 0; f < 24; f++) {
        struct buf b = BUF_INIT;
        int nlines = f == 0 ? 0 : f == 1 ? 5 : 10 + (f * 37) % 420;
        for (int l = 0; l < nlines; l++) {
            if (f == 1) { buf_addc(&b, '\n'); continue; }
            int nw = (int)((s = s * 1103515245u + 12345u) >> 16) % 9;
            for (int w = 0; w < nw; w++) {
                s = s * 1103515245u + 12345u;
                buf_printf(&b, "%s%s", w ? (w % 3 ? " " : ".") : "    ", WORDS[(s >> 16) % ARRAY_LEN(WORDS)]);
            }
            if (l + 1 < nlines || f % 5) buf_addc(&b, '\n');
        }
        char path[64], hash[32];
        snprintf(path, sizeof path, "pkg/m%02d/mod%02d.py", (f * 7) % 5, f);
        snprintf(hash, sizeof hash, "h%d", f);
        add_file(db, path, buf_str(&b), hash);
        buf_free(&b);
    }
}

static const char *const QUESTIONS[] = {
    "How does the session connect and redirect?",
    "Where is getResponse compiled?",
    "What does the adapter mount when a connection expires?",
    "Which rules limit the URL?",
    "How is LIMIT_77 used by the expiry of sessions?",
    "What does café return?",
    "self value none return",
};

static const int CONFIGS[][2] = {{200, 20}, {500, 50}, {3, 1}, {1, 0}, {7, 0}, {40, 39}};

/* qparse_windows against qparse_windows_scan for every question and window
 * shape: the same windows, in the same order, with the same scores. */
static int same_as_scan(sqlite3 *db, const char *what)
{
    int all = 1;
    for (size_t i = 0; i < ARRAY_LEN(QUESTIONS); i++) {
        struct qparse q;
        char err[256];
        qparse_question(QUESTIONS[i], &q, err, sizeof err);
        qparse_weigh(&q, db);
        /* 60: every window that scores; 3: the best few of them */
        for (size_t c = 0; c < 2 * ARRAY_LEN(CONFIGS); c++) {
            struct qwindow *a = NULL, *b = NULL;
            size_t best = c % 2 ? 3 : 60;
            int na = qparse_windows(&q, db, CONFIGS[c / 2][0], CONFIGS[c / 2][1], best, &a, err, sizeof err);
            int nb = qparse_windows_scan(&q, db, CONFIGS[c / 2][0], CONFIGS[c / 2][1], best, &b, err, sizeof err);
            int same = na == nb && na > 0;
            for (int k = 0; same && k < na; k++)
                same = !strcmp(a[k].path, b[k].path) && a[k].start_line == b[k].start_line &&
                       a[k].end_line == b[k].end_line && a[k].score == b[k].score;
            if (!same) {
                diag("%s: '%s' windows of %d/%d (best %zu): %d from postings, %d from the scan", what, QUESTIONS[i],
                     CONFIGS[c / 2][0], CONFIGS[c / 2][1], best, na, nb);
                all = 0;
            }
            qparse_windows_free(a, na > 0 ? (size_t)na : 0);
            qparse_windows_free(b, nb > 0 ? (size_t)nb : 0);
        }
        qparse_free(&q);
    }
    return all;
}

static int stored(sqlite3 *db)
{
    struct linepost lp;
    if (!linepost_open(db, &lp)) return 0;
    linepost_close(&lp);
    return 1;
}

/* The names a fresh action context reads, as one string. */
static char *names_of(sqlite3 *db, int which)
{
    struct action_ctx ctx;
    action_ctx_init(&ctx, db, "/nonexistent");
    size_t n = 0;
    const char *const *v = action_cache_names(&ctx, which, &n);
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < n; i++) buf_printf(&b, "%s%s", i ? "," : "", v[i]);
    action_ctx_release(&ctx);
    return buf_take(&b);
}

static char *names_queried(sqlite3 *db, const char *where)
{
    char *sql = xasprintf("SELECT name FROM symbols GROUP BY name HAVING %s ORDER BY name", where);
    sqlite3_stmt *st;
    struct buf b = BUF_INIT;
    sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    for (int i = 0; sqlite3_step(st) == SQLITE_ROW; i++)
        buf_printf(&b, "%s%s", i ? "," : "", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    free(sql);
    return buf_take(&b);
}

/* The normalised texts FindCodeSnippet scans (action_cache_normtext, read
 * while they are normalised) against each file's text normalised here, in
 * path order; 1 when all match. */
static int normtext_right(sqlite3 *db)
{
    struct action_ctx ctx;
    action_ctx_init(&ctx, db, "/nonexistent");
    size_t n = 0;
    const struct action_normtext *t = action_cache_normtext(&ctx, &n);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT id, path, drqa_text(ztext, tlen) FROM files ORDER BY path", -1, &st, NULL);
    size_t i = 0;
    int right = !ctx.failed;
    for (; right && sqlite3_step(st) == SQLITE_ROW; i++) {
        const char *text = (const char *)sqlite3_column_text(st, 2);
        size_t len = (size_t)sqlite3_column_bytes(st, 2);
        int lines = 1;
        for (size_t k = 0; k < len; k++) lines += text[k] == '\n';
        char *norm = xmalloc(len + 1);
        int *at = xmalloc((size_t)lines * sizeof *at);
        size_t nl = action_normalize_ws(text, len, norm, at, lines);
        right = i < n && t[i].file_id == sqlite3_column_int64(st, 0) &&
                !strcmp(t[i].path, (const char *)sqlite3_column_text(st, 1)) && t[i].nlen == nl &&
                !memcmp(t[i].norm, norm, nl) && t[i].nlines == lines && !memcmp(t[i].line_at, at, (size_t)lines * sizeof *at);
        free(norm);
        free(at);
    }
    sqlite3_finalize(st);
    action_ctx_release(&ctx);
    return right && i == n && n > 0;
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "derived") != NULL, "temp dir");
    char *path = xasprintf("%s/index.sqlite", dir);
    char err[512];
    sqlite3 *db, *ro;
    is_int(store_open(path, 0, &db, NULL, err, sizeof err), 0, "open a new index");
    fill(db);

    /* line postings */
    ok(!stored(db), "no postings before the first question");
    ok(same_as_scan(db, "first use"), "windows from the postings are the scan's windows, scores and order");
    ok(stored(db), "the first question stored the postings");
    ok(count(db, "SELECT count(*) FROM lp_terms WHERE term IN ('connect', 'connection', 'getresponse', 'caf\xc3\xa9')") == 4,
       "terms are stored as tok emits them");
    is_int(store_open(path, 1, &ro, NULL, err, sizeof err), 0, "read-only connection");
    ok(stored(ro) && same_as_scan(ro, "read-only"), "a read-only connection reads the same postings");
    ok(linepost_current(ro) == 1 && linepost_current(db) == 1, "and both say the postings are current");

    /* the files' stamp, kept by a connection, follows every change: another
     * connection's commit, its own row changes, a dropped table */
    char s0[40], s1[40], s2[40], s3[40];
    ok(linepost_files_stamp(ro, s0) == 0 && linepost_files_stamp(ro, s1) == 0 && !strcmp(s0, s1),
       "a connection's stamp is the same while nothing changed");
    ok(set_text(db, "pkg/m01/mod03.py", "def later():\n    return 3\n", "h-later") == 0 &&
       linepost_files_stamp(ro, s1) == 0 && strcmp(s0, s1) != 0, "another connection's change changes it");
    ok(linepost_files_stamp(db, s2) == 0 && !strcmp(s1, s2), "and it is the stamp the writer takes");
    ok(set_text(db, "pkg/m01/mod03.py", "def later():\n    return 4\n", "h-later2") == 0 &&
       linepost_files_stamp(db, s3) == 0 && strcmp(s2, s3) != 0, "the connection's own change changes it");
    sqlite3 *mem;
    ok(sqlite3_open(":memory:", &mem) == SQLITE_OK &&
       sqlite3_exec(mem, "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT, hash TEXT); "
                         "INSERT INTO files(path, hash) VALUES('a.py', 'h1'); "
                         "CREATE TABLE t(id INTEGER PRIMARY KEY)", NULL, NULL, NULL) == SQLITE_OK &&
       linepost_files_stamp(mem, s0) == 0 &&
       sqlite3_exec(mem, "DROP TABLE t; DROP TABLE files; CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT, "
                         "hash TEXT)", NULL, NULL, NULL) == SQLITE_OK &&
       linepost_files_stamp(mem, s1) == 0 && strcmp(s0, s1) != 0, "a table dropped and made again changes it");
    sqlite3_close(mem);

    /* a changed file, and a new one: refused until rebuilt, then right again */
    ok(set_text(db, "pkg/m02/mod06.py", "def session():\n    return redirect(connection)\n", "h-new") == 0 &&
       count(db, "SELECT count(*) FROM files WHERE hash = 'h-new'") == 1, "a file changes");
    ok(linepost_current(ro) == 0, "postings are no longer current once a file changed");
    ok(!stored(ro), "postings of other files are refused once a file changed");
    ok(same_as_scan(ro, "changed file"), "and the next question ranks the changed file as the scan does");
    ok(stored(ro), "it stored new postings (through a writer connection)");
    add_file(db, "pkg/zz.py", "session session session\nconnect\n", "h-zz");
    ok(linepost_current(db) == 0, "nor once a file is added");
    ok(!stored(db), "a new file makes them stale too");
    ok(same_as_scan(db, "new file"), "and the rebuilt postings count it");

    /* the normalised texts of every file, read ahead of their normalising:
     * more files and bytes than are read ahead at once */
    ok(normtext_right(db), "FindCodeSnippet's normalised texts are every file's, in path order");
    for (int i = 0; i < 3; i++) {
        struct buf big = BUF_INIT;
        while (big.len < ((size_t)3 << 20)) buf_printf(&big, "def f%zu(x):\n    return  x +\t%zu\n", big.len, big.len);
        char p[32], h[32];
        snprintf(p, sizeof p, "pkg/big%d.py", i);
        snprintf(h, sizeof h, "h-big%d", i);
        add_file(db, p, buf_str(&big), h);
        buf_free(&big);
    }
    for (int i = 0; i < 150; i++) {
        char p[32], h[32], t[64];
        snprintf(p, sizeof p, "pkg/small%03d.py", i);
        snprintf(h, sizeof h, "h-small%d", i);
        snprintf(t, sizeof t, "x%d  =\n  %d\n", i, i);
        add_file(db, p, t, h);
    }
    ok(normtext_right(db), "and with three files of 3 MB and 150 small ones among them");
    store_exec(db, "DELETE FROM files WHERE path LIKE 'pkg/big%' OR path LIKE 'pkg/small%'", err, sizeof err);

    /* never half-written: a build that did not commit leaves what was there */
    store_exec(db, "BEGIN; DELETE FROM lp_terms; DELETE FROM lp_meta WHERE key = 'lens';", err, sizeof err);
    ok(stored(ro), "a build in progress is not seen by a reader");
    store_exec(db, "ROLLBACK", err, sizeof err);
    ok(stored(ro) && same_as_scan(ro, "after a rollback"), "an interrupted build leaves the previous postings whole");

    /* malformed postings: the scan answers */
    store_exec(db, "UPDATE lp_terms SET post = x'ff' WHERE term = 'session'", err, sizeof err);
    ok(stored(db), "a damaged term still carries the current stamp");
    ok(same_as_scan(db, "damaged term"), "a damaged posting list falls back to the scan's windows");

    /* malformed line counts, read where sqlite holds them: refused whole */
    store_exec(db, "UPDATE lp_meta SET value = value || x'01' WHERE key = 'lens'", err, sizeof err);
    ok(!stored(db) && same_as_scan(db, "lens too long"), "line lengths with one too many are refused: the scan answers");
    store_exec(db, "UPDATE lp_meta SET value = substr(value, 1, length(value) - 2) WHERE key = 'lens'", err, sizeof err);
    ok(!stored(db) && same_as_scan(db, "lens cut short"), "and line lengths cut short");
    store_exec(db, "UPDATE lp_meta SET value = x'' WHERE key = 'nlines'", err, sizeof err);
    ok(!stored(db) && same_as_scan(db, "no line counts"), "and so are empty line counts");
    store_exec(db, "DELETE FROM lp_meta WHERE key = 'file_id'", err, sizeof err);
    ok(!stored(db) && same_as_scan(db, "no file ids"), "and postings without their file ids");

    /* symbol names */
    int64_t f = add_file(db, "pkg/names.py", "class SessionBase:\n    pass\n", "h-names");
    add_symbol(db, f, "class", "SessionBase");
    add_symbol(db, f, "function", "dispatch_request");
    add_symbol(db, f, "method", "dispatch_request");
    add_symbol(db, f, "variable", "LIMIT");
    add_symbol(db, f, "method", "Router");
    add_symbol(db, f, "class", "Router");
    char *all = names_of(db, ACTION_NAMES_ALL);
    char *want = names_queried(db, "1");
    is_str(all, want, "the names are those of the symbols, in name order");
    free(all);
    free(want);
    is_int(count(db, "SELECT count(*) FROM act_names"), 1, "and were stored");
    char *cls = names_of(ro, ACTION_NAMES_CLASSES), *fun = names_of(ro, ACTION_NAMES_FUNCTIONS);
    want = names_queried(db, "MAX(kind = 'class')");
    is_str(cls, want, "a new connection reads the classes back");
    free(want);
    want = names_queried(db, "MAX(kind IN ('function', 'method'))");
    is_str(fun, want, "and the functions");
    free(want);
    free(cls);
    free(fun);
    store_exec(db, "UPDATE act_names SET names = x'015a7a7a00'", err, sizeof err);
    all = names_of(ro, ACTION_NAMES_ALL);
    is_str(all, "Zzz", "the stored names are what is read while the index is unchanged");
    free(all);
    add_symbol(db, f, "function", "added_later");
    store_exec(db, "UPDATE files SET hash = 'h-names-2' WHERE id = (SELECT max(id) FROM files)", err, sizeof err);
    all = names_of(ro, ACTION_NAMES_ALL);
    want = names_queried(db, "1");
    is_str(all, want, "after the index changed they are read from the symbols again");
    ok(strstr(all, "added_later") != NULL, "with the new name");
    free(all);
    free(want);
    /* a damaged list (its last name cut short) is read from the symbols instead,
     * with nothing of the damaged one left in */
    store_exec(db, "UPDATE act_names SET names = names || x'015a7a7a00' || x'027171'", err, sizeof err);
    all = names_of(ro, ACTION_NAMES_ALL);
    want = names_queried(db, "1");
    is_str(all, want, "a stored list cut short is not used: the names are the symbols'");
    free(all);
    free(want);

    sqlite3_close(ro);
    sqlite3_close(db);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    free(cmd);
    free(path);
    return done_testing();
}
