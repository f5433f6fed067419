/* Unit tests for store: schema creation, version check and rebuild, defaults. */
#include "tap.h"
#include "harness.h"
#include "sqlx.h"
#include "store.h"
#include "store_rows.h"
#include "util.h"
#include "ztext.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Stores text as the file row id (path, hash), as the indexer does. */
static void put_file(sqlite3 *db, int id, const char *path, const char *hash, const void *z, size_t zl, long long tlen)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) "
                           "VALUES(?1, ?2, 'python', ?3, 0, ?4, 1, ?5, ?3)", -1, &st, NULL);
    sqlite3_bind_int(st, 1, id);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, tlen);
    sqlite3_bind_text(st, 4, hash, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 5, z, (int)zl, SQLITE_TRANSIENT);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

static void put_text(sqlite3 *db, int id, const char *path, const char *hash, const char *text)
{
    size_t zl;
    unsigned char *z = ztext_pack(text, strlen(text), &zl);
    put_file(db, id, path, hash, z, zl, (long long)strlen(text));
    free(z);
}

/* The first column of sql's first row as a malloc'd string ("(null)" for
 * NULL); NULL when the statement fails, with sqlite's message in err. */
/* chunk id of file fid: the made-up text packed against ref, the file's bytes [off, off + len) */
static void put_outline(sqlite3 *db, int id, int fid, const char *text, const char *ref, size_t off, size_t len)
{
    size_t zl;
    unsigned char *z = ztext_ref_pack(NULL, ref, len, text, strlen(text), &zl);
    char h[17];
    hash64_hex(hash64(text, strlen(text)), h);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO chunk_spans(id, file_id, kind_s, start_line, end_line, text, off, len, "
                           "hash_s) VALUES (?1, ?2, 'class', 3, 5, ?3, ?4, ?5, ?6)", -1, &st, NULL);
    sqlite3_bind_int(st, 1, id);
    sqlite3_bind_int(st, 2, fid);
    sqlite3_bind_blob(st, 3, z, (int)zl, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, (long long)off);
    sqlite3_bind_int64(st, 5, (long long)len);
    sqlite3_bind_text(st, 6, h, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) diag("put_outline: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    free(z);
}

static char *one(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char *v = NULL;
    *err = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return NULL;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? xstrdup("(null)") : xstrdup((const char *)sqlite3_column_text(st, 0));
    else if (rc != SQLITE_DONE)
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return v;
}

static unsigned long long rnd_state = 2463534242ULL;
static unsigned rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (unsigned)(rnd_state >> 11);
}

/* File texts: stored compressed, read back through drqa_text and the view
 * chunks exactly; a damaged one is an error naming what to do, never
 * another text. */
static void file_texts(sqlite3 *db, const char *path)
{
    char err[512];
    const char *a = "import os\n\nclass Session:\n    def flush(self):\n        os.sync()\n";
    const char *b = "def helper():\n    return 42\n";
    put_text(db, 1, "pkg/a.py", "h-a1", a);
    put_text(db, 2, "pkg/b.py", "h-b1", b);
    char *v = one(db, "SELECT drqa_text(ztext, tlen) FROM files WHERE id = 1", err, sizeof err);
    is_str(v, a, "drqa_text gives the stored text back");
    free(v);
    ok(count(db, "SELECT typeof(ztext) = 'blob' AND typeof(tlen) = 'integer' FROM files WHERE id = 1") == 1,
       "it is stored as a blob with its length");
    v = one(db, "SELECT drqa_text(NULL, 3)", err, sizeof err);
    is_str(v, "(null)", "drqa_text of NULL is NULL");
    free(v);
    size_t len = 0;
    long long fid = 0;
    v = store_file_text(db, "pkg/b.py", &fid, &len, err, sizeof err);
    ok(v && !strcmp(v, b) && len == strlen(b) && fid == 2, "store_file_text reads a text by path");
    free(v);
    v = store_file_text(db, "pkg/none.py", NULL, NULL, err, sizeof err);
    ok(!v && !*err, "store_file_text: a path not in the index is no error");
    /* kept texts: read again from what is kept, by file and content hash, the
     * last few read; more files than are kept, read round and round */
    int same = 0;
    for (int i = 0; i < 40; i++) {
        char *t = xasprintf("def f%d():\n    return %d\n", i % 13, i % 13);
        char *p = xasprintf("pkg/k%02d.py", i % 13), *h = xasprintf("h-k%d", i % 13);
        if (i < 13) put_text(db, 100 + i, p, h, t);
        char *sql = xasprintf("SELECT drqa_file_text(id, hash, ztext, tlen) FROM files WHERE id = %d", 100 + i % 13);
        v = one(db, sql, err, sizeof err);
        same += v && !strcmp(v, t);
        free(v);
        free(sql);
        free(t);
        free(p);
        free(h);
    }
    is_int(same, 40, "drqa_file_text gives each file's text, read again or kept, as drqa_text does");
    v = one(db, "SELECT drqa_file_text(NULL, NULL, ztext, tlen) FROM files WHERE id = 2", err, sizeof err);
    is_str(v, b, "without a key the text is read and not kept");
    free(v);
    store_exec(db, "DELETE FROM files WHERE id >= 100", err, sizeof err);

    /* chunks: spans of their file's text after their head, as before the texts were compressed */
    store_exec(db, "INSERT INTO chunk_spans(id, file_id, kind_s, start_line, end_line, head, off, len, hash_s) VALUES "
                   "(1, 1, 'function', 4, 5, 'class Session:\n', 26, 39, 'c1'),"
                   "(2, 1, 'module', 1, 1, NULL, 0, 9, 'c2'),"
                   "(3, 2, 'function', 1, 2, NULL, 0, 100, 'c3'),"
                   "(4, 1, 'module', 1, 1, NULL, 500, 10, 'c4'),"
                   "(5, 9, 'module', 1, 1, NULL, 0, 4, 'c5');", err, sizeof err);
    /* a made-up text (a class outline), packed against the class's lines */
    const char *outline = "class Session:\n    def flush(self): ...";
    size_t cls_off = (size_t)(strstr(a, "class") - a), cls_len = strlen(a) - cls_off - 1;
    put_outline(db, 6, 1, outline, a + cls_off, cls_off, cls_len);
    /* a head that is a line of the file: its offset times 65536 plus its length */
    char *sql7 = xasprintf("INSERT INTO chunk_spans(id, file_id, kind_s, start_line, end_line, head, off, len, hash_s) "
                           "VALUES (7, 1, 0, 4, 5, %lld, 26, 39, 'c7')", (long long)cls_off * 65536 + 14);
    store_exec(db, sql7, err, sizeof err);
    free(sql7);
    struct { int id; const char *want; } cs[] = {
        {1, "class Session:\n    def flush(self):\n        os.sync()\n"}, {2, "import os"}, {3, b}, {4, ""},
        {5, "(null)"}, {6, "class Session:\n    def flush(self): ..."}, {2, "import os"}, {1, "class Session:\n    def flush(self):\n        os.sync()\n"},
        {7, "class Session:\n    def flush(self):\n        os.sync()\n"}};
    int right = 0;
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char *sql = xasprintf("SELECT text FROM chunks WHERE id = %d", cs[i].id);
        v = one(db, sql, err, sizeof err);
        right += v && !strcmp(v, cs[i].want);
        if (!v || strcmp(v, cs[i].want)) diag("chunk %d: got '%s' (%s)", cs[i].id, v ? v : "NULL", err);
        free(v);
        free(sql);
    }
    is_int(right, (int)(sizeof cs / sizeof *cs),
           "the view chunks: spans, a span running past the end, one past it, no file row, a made-up text, each "
           "file again, a head kept as where its line is");
    is_int(count(db, "SELECT count(*) FROM chunks WHERE text LIKE '%os%'"), 3, "a scan of every chunk's text");
    /* the text of the file changes (and its hash with it): no span of the old one is given */
    put_text(db, 1, "pkg/a.py", "h-a2", "import sys\n");
    v = one(db, "SELECT text FROM chunks WHERE id = 2", err, sizeof err);
    is_str(v, "import sy", "a changed file's spans come from its new text");
    free(v);
    v = one(db, "SELECT text FROM chunks WHERE id = 6", err, sizeof err);
    ok(!v && strstr(err, "damaged chunk text") && strstr(err, "--index-only --check"),
       "an outline read against another text than its own is an error, not another text: %s", err);
    free(v);
    put_text(db, 1, "pkg/a.py", "h-a1", a);
    store_exec(db, "UPDATE chunk_spans SET hash_s = 'c6' WHERE id = 6", err, sizeof err);
    v = one(db, "SELECT text FROM chunks WHERE id = 6", err, sizeof err);
    ok(!v && strstr(err, "does not read back"), "and so is one whose hash is not its text's: %s", err);
    free(v);
    char qd[512];
    is_int(store_quick_check(path, qd, sizeof qd), 0, "store_quick_check finds it");
    ok(strstr(qd, "damaged chunk text") != NULL, "saying so: %s", qd);
    put_outline(db, 6, 1, outline, a + cls_off, cls_off, cls_len);
    is_int(store_quick_check(path, qd, sizeof qd), 1, "and is content with it sound: %s", qd);

    /* damage: every read of the text fails with a message saying what to do */
    size_t zl;
    unsigned char *z = ztext_pack(a, strlen(a), &zl);
    unsigned char *d = xmalloc(zl + 8);
    memcpy(d, z, zl);
    d[zl / 2] ^= 0x10;
    put_file(db, 1, "pkg/a.py", "h-a3", d, zl, (long long)strlen(a));
    v = one(db, "SELECT drqa_text(ztext, tlen) FROM files WHERE id = 1", err, sizeof err);
    ok(!v && strstr(err, "damaged file text") && strstr(err, "--index-only --check"),
       "a damaged text is an error that says what to do: %s", err);
    free(v);
    v = one(db, "SELECT text FROM chunks WHERE id = 1", err, sizeof err);
    ok(!v && strstr(err, "damaged file text"), "and so is a span of it");
    free(v);
    v = one(db, "SELECT count(*) FROM chunks WHERE text LIKE '%os%'", err, sizeof err);
    ok(!v && strstr(err, "damaged file text"), "and a scan that meets it: %s", err);
    free(v);
    v = one(db, "SELECT drqa_file_text(id, hash, ztext, tlen) FROM files WHERE id = 1", err, sizeof err);
    ok(!v && strstr(err, "damaged file text"), "and a read of the file that keeps its text");
    free(v);
    v = store_file_text(db, "pkg/a.py", NULL, NULL, err, sizeof err);
    ok(!v && strstr(err, "damaged file text"), "store_file_text says why it has no text");
    free(v);
    char detail[512];
    is_int(store_quick_check(path, detail, sizeof detail), 0, "store_quick_check finds the damaged text");
    ok(strstr(detail, "pkg/a.py") != NULL, "naming its file: %s", detail);
    put_file(db, 1, "pkg/a.py", "h-a1", z, zl, (long long)strlen(a) + 1);
    v = one(db, "SELECT drqa_text(ztext, tlen) FROM files WHERE id = 1", err, sizeof err);
    ok(!v && strstr(err, "damaged"), "a length beside it that is wrong: %s", err);
    free(v);
    put_file(db, 1, "pkg/a.py", "h-a1", z, zl, 1LL << 40);
    v = one(db, "SELECT drqa_text(ztext, tlen) FROM files WHERE id = 1", err, sizeof err);
    ok(!v && strstr(err, "cannot hold"), "a length no stream of its size holds: %s", err);
    free(v);
    store_exec(db, "UPDATE files SET tlen = 'many' WHERE id = 1", err, sizeof err);
    v = one(db, "SELECT drqa_text(ztext, tlen) FROM files WHERE id = 1", err, sizeof err);
    ok(!v && strstr(err, "damaged"), "a length that is no number: %s", err);
    free(v);

    /* random damage through SQL: the text whole, or an error */
    int bad = 0, refused = 0;
    for (int t = 0; t < 400; t++) {
        memcpy(d, z, zl);
        size_t n = zl;
        long long tl = (long long)strlen(a);
        switch (t % 5) {
        case 0: d[rnd() % zl] ^= (unsigned char)(1u << (rnd() % 8)); break;
        case 1: d[rnd() % zl] = (unsigned char)rnd(); break;
        case 2: n = rnd() % zl; break;
        case 3: n = zl + 1 + rnd() % 8; for (size_t j = zl; j < n; j++) d[j] = (unsigned char)rnd(); break;
        default: tl += (long long)(rnd() % 7) - 3; break;
        }
        char h[32];
        snprintf(h, sizeof h, "h-%d", t);   /* no span is served from an earlier read */
        put_file(db, 1, "pkg/a.py", h, d, n, tl);
        v = one(db, t % 2 ? (t % 4 == 1 ? "SELECT drqa_text(ztext, tlen) FROM files WHERE id = 1"
                                        : "SELECT drqa_file_text(id, hash, ztext, tlen) FROM files WHERE id = 1")
                          : "SELECT group_concat(text, '|') FROM (SELECT text FROM chunks WHERE id IN (1, 2) ORDER BY id)",
                err, sizeof err);
        const char *want = t % 2 ? a : "class Session:\n    def flush(self):\n        os.sync()\n|import os";
        if (v ? strcmp(v, want) != 0 : !strstr(err, "damaged file text")) bad++;
        refused += !v;
        free(v);
    }
    is_int(bad, 0, "random damage: the text whole or an error saying it is damaged, %d times of 400 an error", refused);
    ok(refused > 300, "most of the damage is refused (%d)", refused);
    put_text(db, 1, "pkg/a.py", "h-a1", a);
    is_int(store_quick_check(path, detail, sizeof detail), 1, "store_quick_check: every text sound again");
    free(d);
    free(z);
    store_exec(db, "DELETE FROM chunk_spans; DELETE FROM files", err, sizeof err);
}

/* The compact forms of store_rows.h read back through the generated
 * columns as the values they were made of, the awkward ones too. */
static void stored_forms(sqlite3 *db)
{
    char err[256];
    store_exec(db, "INSERT INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) "
                   "VALUES (900, 'forms.py', 'python', 0, 0, 'h', 0, x'', 0)", err, sizeof err);
    static const struct { const char *name, *qual, *sig; } syms[] = {
        {"run", "Flask.run", "def run(self, host=None)"},   /* a prefix, a keyword */
        {"run", "run", "async def run()"},                  /* its own name, another keyword */
        {"Flask", "Flask", "class Flask(App)"},
        {"x", "A.", "def y(x)"},                            /* ends in '.' but not in '.x': kept whole */
        {"x", "\1odd.x", "\1def x()"},                    /* begins with byte 1 / a control byte */
        {"x", "x.x", "func x() int"},
        {"", "A.", "function ()"},                          /* an empty name */
        {"b", "a.b", NULL},
        {"é", "Ünï.é", "def é(ß)"},
    };
    struct buf scratch = BUF_INIT, scratch2 = BUF_INIT;
    int right = 0, n = (int)(sizeof syms / sizeof *syms);
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "INSERT INTO symbols(id, file_id, kind_s, name, qualname_s, start_line, end_line, "
                               "signature_s) VALUES(?1, 900, ?2, ?3, ?4, 1, 1, ?5)", -1, &st, NULL);
        size_t ql, sl;
        const char *q = store_prefix_form(syms[i].qual, syms[i].name, &ql, &scratch);
        const char *g = store_sig_form(syms[i].sig, syms[i].name, &sl, &scratch2);
        sqlite3_bind_int(st, 1, 900 + i);
        sqlite3_bind_int(st, 2, i % 4);
        sqlite3_bind_text(st, 3, syms[i].name, -1, SQLITE_STATIC);
        if (q) sqlite3_bind_text64(st, 4, q, ql, SQLITE_TRANSIENT, SQLITE_UTF8);
        if (g) sqlite3_bind_text64(st, 5, g, sl, SQLITE_TRANSIENT, SQLITE_UTF8);
        if (sqlite3_step(st) != SQLITE_DONE) diag("insert %d: %s", i, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sqlite3_prepare_v2(db, "SELECT qualname, signature, kind FROM symbols WHERE id = ?1", -1, &st, NULL);
        sqlite3_bind_int(st, 1, 900 + i);
        static const char *const kinds[] = {"class", "function", "method", "variable"};
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *rq = (const char *)sqlite3_column_text(st, 0), *rs = (const char *)sqlite3_column_text(st, 1);
            const char *rk = (const char *)sqlite3_column_text(st, 2);
            int same = rq && !strcmp(rq, syms[i].qual) && (syms[i].sig ? rs && !strcmp(rs, syms[i].sig) : !rs) &&
                       rk && !strcmp(rk, kinds[i % 4]);
            right += same;
            if (!same) diag("symbol %d: '%s' '%s' '%s'", i, rq ? rq : "NULL", rs ? rs : "NULL", rk ? rk : "NULL");
        }
        sqlite3_finalize(st);
    }
    is_int(right, n, "qualified names, signatures and kinds read back as they were, awkward ones too");
    ok(store_prefix_form("Flask.run", "run", &(size_t){0}, &scratch) != scratch.data,
       "and a qualified name with its name at the end is stored without it, in place");
    static const struct { const char *target, *name; } edges[] = {
        {"request.session.flush", "flush"}, {"flush", "flush"}, {"dedent(\"x.", ""}, {"a.b.", "c"}, {"Generic[T]", "Generic"},
    };
    right = 0;
    n = (int)(sizeof edges / sizeof *edges);
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "INSERT INTO edges(id, kind, src_file, target_s, target_name) VALUES(?1, 0, 900, ?2, ?3)",
                           -1, &st, NULL);
        size_t tl;
        const char *t = store_prefix_form(edges[i].target, edges[i].name, &tl, &scratch);
        sqlite3_bind_int(st, 1, 900 + i);
        if (t) sqlite3_bind_text64(st, 2, t, tl, SQLITE_TRANSIENT, SQLITE_UTF8);
        sqlite3_bind_text(st, 3, edges[i].name, -1, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_finalize(st);
        sqlite3_prepare_v2(db, "SELECT coalesce(target, target_name) FROM edges WHERE id = ?1", -1, &st, NULL);
        sqlite3_bind_int(st, 1, 900 + i);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *r = (const char *)sqlite3_column_text(st, 0);
            right += r && !strcmp(r, edges[i].target);
            if (!r || strcmp(r, edges[i].target)) diag("edge %d: '%s'", i, r ? r : "NULL");
        }
        sqlite3_finalize(st);
    }
    is_int(right, n, "call targets read back as written");
    unsigned char h[8];
    ok(store_hash_bytes("00ff10a0b0c0d0e9", h) && h[1] == 0xff && h[7] == 0xe9 && !store_hash_bytes("00FF10a0b0c0d0e9", h) &&
       !store_hash_bytes("abc", h), "a hash is its 8 bytes only when it is 16 lower-case hex digits");
    is_int(store_chunk_kind("module"), 2, "a chunk kind has its number");
    is_int(store_chunk_kind("section"), -1, "and one without a number has none (stored as its word)");
    buf_free(&scratch);
    buf_free(&scratch2);
    store_exec(db, "DELETE FROM symbols WHERE file_id = 900; DELETE FROM edges WHERE src_file = 900; "
                   "DELETE FROM files WHERE id = 900", err, sizeof err);
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "store") != NULL, "temp dir");
    char *path = xasprintf("%s/sub/dir/index.sqlite", dir);
    char err[512];
    sqlite3 *db;
    int rebuilt;

    ok(store_open(path, 1, &db, &rebuilt, err, sizeof err) == -1, "read-only open of a missing index fails");
    ok(strstr(err, path) != NULL, "the error names the path: %s", err);
    is_int(store_mkdir_for(path, err, sizeof err), 0, "the index directory is created");
    struct stat st;
    ok(stat(path, &st) != 0, "no file before open");
    char *d = xasprintf("%s/sub/dir", dir);
    ok(stat(d, &st) == 0 && (st.st_mode & 0777) == 0700, "index directory is owner-only");
    free(d);

    is_int(store_open(path, 0, &db, &rebuilt, err, sizeof err), 0, "create a new index");
    is_int(rebuilt, 1, "a new index reports a fresh schema");
    is_int(count(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION, "user_version is the schema version");
    is_int(store_exec(db, "INSERT INTO chunks_fts(rowid, name, doc, body, path) VALUES(1, 'get response getresponse', '', '', '')", err, sizeof err), 0, "fts5 table accepts rows");
    is_int(count(db, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'getresponse'"), 1, "fts5 finds the joined term");
    stored_forms(db);
    is_int(store_meta_set(db, "repo_root", "/x"), 0, "meta set");
    char *v = store_meta_get(db, "repo_root");
    is_str(v, "/x", "meta get");
    free(v);

    /* sqlx: column copies and the other-connection stamp */
    sqlite3_stmt *q;
    sqlite3_prepare_v2(db, "SELECT 'x', NULL, ''", -1, &q, NULL);
    sqlite3_step(q);
    char *c0 = sqlx_col_dup(q, 0), *c1 = sqlx_col_dup(q, 1), *c2 = sqlx_col_dup(q, 2);
    char *n2 = sqlx_col_dup_nonempty(q, 2), *n0 = sqlx_col_dup_nonempty(q, 0);
    ok(c0 && !strcmp(c0, "x") && !c1 && c2 && !*c2, "sqlx_col_dup copies text, NULL for SQL NULL, keeps ''");
    ok(!n2 && n0 && !strcmp(n0, "x"), "sqlx_col_dup_nonempty gives NULL for ''");
    free(c0); free(c2); free(n0);
    sqlite3_finalize(q);
    sqlite3 *other;
    long long dv = sqlx_data_version(db);
    ok(dv >= 0, "data_version is read");
    store_meta_set(db, "k", "1");
    is_int(sqlx_data_version(db), dv, "this connection's own commit leaves data_version as it was");
    ok(sqlite3_open(path, &other) == SQLITE_OK, "a second connection");
    sqlite3_exec(other, "INSERT INTO meta(key, value) VALUES('k2', '2')", NULL, NULL, NULL);
    sqlite3_close(other);
    ok(sqlx_data_version(db) != dv, "another connection's commit changes data_version");
    store_exec(db, "DELETE FROM meta WHERE key IN ('k', 'k2')", err, sizeof err);
    sqlite3_close(db);

    is_int(store_open(path, 0, &db, &rebuilt, err, sizeof err), 0, "reopen");
    is_int(rebuilt, 0, "same version: kept as is");
    is_int(count(db, "SELECT count(*) FROM meta"), 1, "data survives a reopen");
    file_texts(db, path);
    store_exec(db, "PRAGMA user_version = 999", err, sizeof err);
    sqlite3_close(db);

    ok(store_open(path, 1, &db, &rebuilt, err, sizeof err) == -1, "read-only open of another version fails");
    ok(strstr(err, "--index-only") != NULL, "and says how to rebuild: %s", err);
    is_int(store_open(path, 0, &db, &rebuilt, err, sizeof err), 0, "writable open of another version");
    is_int(rebuilt, 1, "another version is rebuilt, not misread");
    is_int(count(db, "SELECT count(*) FROM meta"), 0, "the rebuilt index is empty");
    is_int(count(db, "SELECT count(*) FROM chunks_fts"), 0, "the rebuilt fts table is empty");
    sqlite3_close(db);

    char *junk = xasprintf("%s/junk.sqlite", dir);
    FILE *fp = fopen(junk, "w");
    fputs("this is not a database at all, just text that is long enough to fill a header......", fp);
    fclose(fp);
    ok(store_open(junk, 0, &db, &rebuilt, err, sizeof err) == -1, "a non-database file is refused");
    ok(strstr(err, junk) != NULL, "naming it: %s", err);

    setenv("XDG_CACHE_HOME", "/var/cache/x", 1);
    char *p1 = store_default_path("/srv/repos/flask"), *p2 = store_default_path("/home/me/flask");
    ok(str_starts(p1, "/var/cache/x/drqa-tui/flask-") && str_ends(p1, ".sqlite"), "default path under XDG_CACHE_HOME: %s", p1);
    ok(strcmp(p1, p2) != 0, "two repositories with one name get two indexes");
    free(p1); free(p2);

    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    free(cmd); free(junk); free(path);
    return done_testing();
}
