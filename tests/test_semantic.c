/*
 * Unit tests for semantic (SemanticSearch) and vec_local on a small index
 * written here: a few files of a web package, with files, symbols, chunks and
 * chunks_fts rows filled the way the indexer fills them (FTS columns through
 * tok_terms). Checks bm25 over split identifiers, FTS syntax escaping against
 * hostile input, category and file_pattern filters, the local vectors reaching
 * a chunk through co-occurrence only, determinism, storage of the model and
 * its invalidation when the chunks change.
 */
#include "tap.h"
#include "harness.h"
#include "action.h"
#include "fpattern.h"
#include "semantic.h"
#include "store.h"
#include "tok.h"
#include "util.h"
#include "semantic_local.h"
#include "ztext.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static int64_t next_symbol = 1;

static int64_t add_file(sqlite3 *db, const char *path, const char *text)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO files(path, lang, size, mtime_ns, hash, nlines, ztext, tlen) "
                           "VALUES(?1, 'python', ?2, 0, 'h', ?3, ?4, ?2)", -1, &st, NULL);
    int nl = 1;
    for (const char *p = text; *p; p++) nl += *p == '\n';
    size_t zl;
    unsigned char *z = ztext_pack(text, strlen(text), &zl);
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)strlen(text));
    sqlite3_bind_int(st, 3, nl);
    sqlite3_bind_blob(st, 4, z, (int)zl, free);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return sqlite3_last_insert_rowid(db);
}

static char *terms(const char *s)
{
    struct buf b = BUF_INIT;
    tok_terms(s, strlen(s), 0, &b);
    return buf_take(&b);
}

/* One chunk covering lines a..b of the file's text; qualname NULL for a module window. */
static void add_chunk(sqlite3 *db, int64_t file, const char *path, const char *text, int a, int b,
                      const char *qualname, const char *doc)
{
    const char *s = text;
    for (int l = 1; l < a; l++) s = strchr(s, '\n') + 1;
    const char *e = s;
    for (int l = a; l <= b && *e; l++) {
        const char *nl = strchr(e, '\n');
        e = nl ? nl + 1 : e + strlen(e);
    }
    char *body = xstrndup(s, (size_t)(e - s));
    char hex[17];
    hash64_hex(hash64(body, strlen(body)), hex);
    sqlite3_stmt *st;
    int64_t sym = 0;
    if (qualname) {
        sym = next_symbol++;
        const char *dot = strrchr(qualname, '.');
        sqlite3_prepare_v2(db, "INSERT INTO symbols(id, file_id, kind_s, name, qualname_s, start_line, end_line, docstring) "
                               "VALUES(?1, ?2, 'function', ?3, ?4, ?5, ?6, ?7)", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, sym);
        sqlite3_bind_int64(st, 2, file);
        sqlite3_bind_text(st, 3, dot ? dot + 1 : qualname, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, qualname, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, a);
        sqlite3_bind_int(st, 6, b);
        sqlite3_bind_text(st, 7, doc, -1, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    char *n = terms(qualname ? qualname : ""), *d = terms(doc ? doc : ""), *bt = terms(body), *p = terms(path);
    /* a span of the file's text, as the indexer writes a function chunk */
    sqlite3_prepare_v2(db, "INSERT INTO chunk_spans(file_id, symbol_id, kind_s, start_line, end_line, off, len, hash_s, name) "
                           "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?9, ?7, ?8)", -1, &st, NULL);
    sqlite3_bind_text(st, 8, n, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 1, file);
    if (sym) sqlite3_bind_int64(st, 2, sym); else sqlite3_bind_null(st, 2);
    sqlite3_bind_text(st, 3, qualname ? "function" : "module", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, a);
    sqlite3_bind_int(st, 5, b);
    sqlite3_bind_int64(st, 6, (long long)(s - text));
    sqlite3_bind_int64(st, 9, (long long)(e - s));
    sqlite3_bind_text(st, 7, hex, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    int64_t id = sqlite3_last_insert_rowid(db);
    sqlite3_prepare_v2(db, "INSERT INTO chunks_fts(rowid, name, doc, body, path) VALUES(?1, ?2, ?3, ?4, ?5)",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, n, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, d, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, bt, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, p, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    free(n); free(d); free(bt); free(p); free(body);
}

static const char AUTH[] =
    "from .sessions.db import DatabaseSession\n"                        /* 1 */
    "\n"
    "def logout(request):\n"                                             /* 3 */
    "    \"\"\"End the user's visit: forget who they are.\"\"\"\n"
    "    request.session.flush()\n"
    "    request.user = None\n"                                          /* 6 */
    "\n"
    "def login(request, user):\n"                                        /* 8 */
    "    \"\"\"Remember the user for the following requests.\"\"\"\n"
    "    request.session.cycle_key()\n"
    "    request.session['user_id'] = user.pk\n"                         /* 11 */
    "\n"
    "def check_password(user, raw):\n"                                   /* 13 */
    "    \"\"\"Compare a raw password with the stored hash.\"\"\"\n"
    "    return constant_time_compare(make_hash(raw, user.salt), user.password_hash)\n"; /* 15 */

static const char SESS[] =
    "class DatabaseSession:\n"                                           /* 1 */
    "    def flush(self):\n"                                             /* 2 */
    "        \"\"\"Delete the stored row and clear the data.\"\"\"\n"
    "        self.clear()\n"
    "        self.delete(self.session_key)\n"
    "        self.session_key = None\n"                                  /* 6 */
    "\n"
    "    def cycle_key(self):\n"                                         /* 8 */
    "        \"\"\"Keep the data under a new key.\"\"\"\n"
    "        data = self._session\n"
    "        key = self.session_key\n"
    "        self.create()\n"
    "        self._session_cache = data\n"
    "        self.delete(key)\n";                                        /* 14 */

static const char UTILS[] =
    "import time\n"                                                      /* 1 */
    "\n"
    "def parseHttpDate(value):\n"                                        /* 3 */
    "    \"\"\"Turn an RFC 7231 timestamp into seconds since the epoch.\"\"\"\n"
    "    return time.mktime(email_utils.parsedate(value))\n"             /* 5 */
    "\n"
    "def quote_etag(etag):\n"                                            /* 7 */
    "    \"\"\"Wrap an entity tag in double quotes unless it is weak.\"\"\"\n"
    "    if etag.startswith('W/'):\n"
    "        return etag\n"
    "    return '\"%s\"' % etag\n";                                      /* 11 */

static const char ROUTING[] =
    "class Router:\n"                                                    /* 1 */
    "    def add_url_rule(self, rule, endpoint, view_func):\n"           /* 2 */
    "        \"\"\"Connect a URL rule to a view function.\"\"\"\n"
    "        self.rules.append(Rule(rule, endpoint))\n"
    "        self.view_functions[endpoint] = view_func\n"                /* 5 */
    "\n"
    "    def match(self, path, method):\n"                               /* 7 */
    "        for rule in self.rules:\n"
    "            if rule.matches(path, method):\n"
    "                return rule.endpoint\n"
    "        raise NotFound(path)\n";                                    /* 11 */

static const char TEST_AUTH[] =
    "from web.auth import logout, login\n"                               /* 1 */
    "\n"
    "def test_logout_flushes_session(client):\n"                         /* 3 */
    "    login(client.request, make_user())\n"
    "    logout(client.request)\n"
    "    assert client.request.session.flush_called\n"                   /* 6 */
    "\n"
    "def test_login_cycles_key(client):\n"                               /* 8 */
    "    login(client.request, make_user())\n"
    "    assert client.request.session.cycle_key_called\n";              /* 10 */

static void build(sqlite3 *db)
{
    int64_t f;
    f = add_file(db, "web/auth.py", AUTH);
    add_chunk(db, f, "web/auth.py", AUTH, 1, 1, NULL, NULL);
    add_chunk(db, f, "web/auth.py", AUTH, 3, 6, "logout", "End the user's visit: forget who they are.");
    add_chunk(db, f, "web/auth.py", AUTH, 8, 11, "login", "Remember the user for the following requests.");
    add_chunk(db, f, "web/auth.py", AUTH, 13, 15, "check_password", "Compare a raw password with the stored hash.");
    f = add_file(db, "web/sessions/db.py", SESS);
    add_chunk(db, f, "web/sessions/db.py", SESS, 2, 6, "DatabaseSession.flush", "Delete the stored row and clear the data.");
    add_chunk(db, f, "web/sessions/db.py", SESS, 8, 14, "DatabaseSession.cycle_key", "Keep the data under a new key.");
    f = add_file(db, "web/utils.py", UTILS);
    add_chunk(db, f, "web/utils.py", UTILS, 3, 5, "parseHttpDate", "Turn an RFC 7231 timestamp into seconds since the epoch.");
    add_chunk(db, f, "web/utils.py", UTILS, 7, 11, "quote_etag", "Wrap an entity tag in double quotes unless it is weak.");
    f = add_file(db, "web/routing.py", ROUTING);
    add_chunk(db, f, "web/routing.py", ROUTING, 2, 5, "Router.add_url_rule", "Connect a URL rule to a view function.");
    add_chunk(db, f, "web/routing.py", ROUTING, 7, 11, "Router.match", NULL);
    f = add_file(db, "tests/test_auth.py", TEST_AUTH);
    add_chunk(db, f, "tests/test_auth.py", TEST_AUTH, 3, 6, "test_logout_flushes_session", NULL);
    add_chunk(db, f, "tests/test_auth.py", TEST_AUTH, 8, 10, "test_login_cycles_key", NULL);
}

static int search(struct semantic_cache *sc, const char *text, enum semantic_mode mode, enum semantic_category cat,
                  const char *pattern, int k, struct evidence *ev)
{
    char err[512] = "";
    struct semantic_query q = {text, cat, pattern, k, mode, NULL};
    evidence_free(ev);
    int n = semantic_search(sc, &q, ev, err, sizeof err);
    if (n < 0) diag("semantic_search('%s'): %s", text, err);
    return n;
}

/* Two fits of the same bytes: chunk and term vectors, document frequencies. */
static int same_fit(const struct vec_local_fit *a, const struct vec_local_fit *b)
{
    return a->n == b->n && a->nterms == b->nterms && a->n > 0 && !memcmp(a->ids, b->ids, a->n * sizeof *a->ids) &&
           !memcmp(a->qvecs, b->qvecs, a->n * VEC_LOCAL_QBYTES) &&
           !memcmp(a->qtvecs, b->qtvecs, a->nterms * VEC_LOCAL_QBYTES) &&
           !memcmp(a->df, b->df, a->nterms * sizeof *a->df);
}

/* The parts of a fit's stages, one call a stage: 1, 4, 2, 7, 3; and the
 * stages begun when its gate was passed (-1: not yet). */
struct stages { int calls, gated_after; };
static int changing_parts(void *ctx)
{
    static const int k[] = {1, 4, 2, 7, 3};
    struct stages *s = ctx;
    return k[(s->calls++) % 5];
}

static void stage_gate(void *ctx)
{
    struct stages *s = ctx;
    s->gated_after = s->calls;
}

static int rank_of(const struct evidence *ev, const char *label)
{
    for (size_t i = 0; i < ev->n; i++)
        if (ev->v[i].label && !strcmp(ev->v[i].label, label)) return (int)i;
    return -1;
}

/* 1 when a and b list the same results with the same scores (and some). */
static int same_results(const struct evidence *a, const struct evidence *b)
{
    int same = a->n == b->n && a->n > 0;
    for (size_t i = 0; same && i < a->n; i++) same = !strcmp(a->v[i].label, b->v[i].label) && a->v[i].score == b->v[i].score;
    return same;
}

/* The dense 'logout' query of the tests below through a new read-only
 * connection to the index at path, with a cache of its own. */
static void dense_fresh(const char *path, struct evidence *ev)
{
    char err[512];
    sqlite3 *db;
    ok(store_open(path, 1, &db, NULL, err, sizeof err) == 0, "read-only connection");
    struct semantic_cache *sc = semantic_cache_new(db);
    search(sc, "logout", SEMANTIC_DENSE, SEMANTIC_IMPLEMENTATION, NULL, 20, ev);
    semantic_cache_free(sc);
    sqlite3_close(db);
}

/* Counts the statements run on a connection whose SQL holds a string. */
struct stmt_count { const char *sql; int n; };

static int trace_count(unsigned type, void *ctx, void *p, void *x)
{
    (void)type;
    (void)x;
    struct stmt_count *k = ctx;
    const char *sql = sqlite3_sql(p);
    if (sql && strstr(sql, k->sql)) k->n++;
    return 0;
}

/* n dense questions asked in turn through a new read-only connection to the
 * index at path; expect (or NULL): the text the cache is told to expect.
 * Returns how many times the matrix was read. */
static int dense_texts(const char *path, const char *expect, const char *const *texts, int n, struct evidence *ev)
{
    char err[512];
    sqlite3 *db;
    struct stmt_count reads = {"SELECT part, rows FROM vec_matrix", 0};
    ok(store_open(path, 1, &db, NULL, err, sizeof err) == 0, "read-only connection");
    sqlite3_trace_v2(db, SQLITE_TRACE_STMT, trace_count, &reads);
    struct semantic_cache *sc = semantic_cache_new(db);
    semantic_cache_expect(sc, expect);
    for (int i = 0; i < n; i++) search(sc, texts[i], SEMANTIC_DENSE, SEMANTIC_ANY, NULL, 20, &ev[i]);
    semantic_cache_free(sc);
    sqlite3_close(db);
    return reads.n;
}

/* The label of result i, or "(none)". */
static const char *lab(const struct evidence *ev, size_t i)
{
    return i < ev->n && ev->v[i].label ? ev->v[i].label : "(none)";
}

/* A stand-in for a remote embedding service: hashed bag of terms, 64 dims. */
static int fake_calls, fake_texts, fake_fail;

static void fake_term(const char *t, size_t n, void *ctx)
{
    float *v = ctx;
    uint64_t h = hash64(t, n);
    v[h % 64] += (h >> 32) & 1 ? 1.0f : -1.0f;
}

static int fake_embed(const struct embed_config *cfg, const char *const *texts, size_t n, float **vecs, int *dim,
                      char *err, size_t errlen)
{
    (void)cfg;
    fake_calls++;
    if (fake_fail) {
        snprintf(err, errlen, "HTTP 503 from the fake service");
        return -1;
    }
    fake_texts += (int)n;
    *dim = 64;
    *vecs = xcalloc(n * 64, sizeof(float));
    for (size_t i = 0; i < n; i++) tok_each(texts[i], strlen(texts[i]), TOK_STOPWORDS, fake_term, *vecs + i * 64);
    return 0;
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "semantic") != NULL, "temp dir");
    char *path = xasprintf("%s/index.sqlite", dir);
    char err[512];
    sqlite3 *db;
    is_int(store_open(path, 0, &db, NULL, err, sizeof err), 0, "open a new index");
    struct semantic_cache *sc = semantic_cache_new(db), *sc2;
    build(db);
    struct evidence ev = EVIDENCE_INIT;

    /* parsers (the test-path rule is tests/test_action_fpattern.c's) */
    enum semantic_category cat;
    ok(semantic_parse_category("implementation", &cat) == 0 && cat == SEMANTIC_IMPLEMENTATION &&
       semantic_parse_category(NULL, &cat) == 0 && cat == SEMANTIC_ANY &&
       semantic_parse_category("docs", &cat) == -1, "categories parse");

    /* the MATCH expression */
    char *m = semantic_fts_query("How does getResponse NEAR(\"x\") work? get_response");
    is_str(m, "\"get\" OR \"response\" OR \"getresponse\" OR \"near\" OR \"work\"", "query terms quoted and OR-ed, duplicates dropped");
    free(m);
    ok(semantic_fts_query("the of and ? !") == NULL, "a query of stopwords has no terms");

    /* bm25: a function found by its split identifier words */
    is_int(search(sc, "parse the HTTP date", SEMANTIC_BM25, SEMANTIC_ANY, NULL, 3, &ev), 1, "bm25: one chunk has these words");
    is_str(lab(&ev, 0), "parseHttpDate", "bm25 ranks parseHttpDate first for 'parse the HTTP date'");
    is_str(ev.n ? ev.v[0].path : "(none)", "web/utils.py", "with its path");
    ok(ev.n && ev.v[0].start_line == 3 && ev.v[0].end_line == 5, "and its lines 3-5");
    ok(ev.n && ev.v[0].text && str_starts(ev.v[0].text, "def parseHttpDate(value):") &&
       str_ends(ev.v[0].text, "parsedate(value))"), "the span text is those lines of the file");
    is_int(search(sc, "session key", SEMANTIC_BM25, SEMANTIC_ANY, NULL, 3, &ev), 3, "bm25 returns top_k results");
    ok(ev.n == 3 && ev.v[0].score >= ev.v[1].score && ev.v[1].score >= ev.v[2].score && ev.v[2].score > 0,
       "scores are positive and decrease");

    is_int(count(db, "SELECT count(*) FROM vec_models"), 0, "bm25 alone computes no vectors");

    /* hostile input never breaks the MATCH query */
    static const char *const hostile[] = {
        "\"", "\"\"\"", "((session", "session)", "AND", "OR NOT", "NEAR(session flush, 2)",
        "session AND OR NOT", "*", "flush*", "name:flush", "^flush", "-flush", "+", "{name doc}: x",
        "col:\"x\" AND ^y*", "'; DROP TABLE chunks; --", "\\", "ünïcödé ßession", "\xff\xfe broken utf8",
    };
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(hostile); i++) {
        char e2[256] = "";
        struct semantic_query q = {hostile[i], SEMANTIC_ANY, NULL, 5, SEMANTIC_HYBRID, NULL};
        if (semantic_search(sc, &q, &ev, e2, sizeof e2) < 0) {
            diag("'%s' failed: %s", hostile[i], e2);
            bad++;
        }
    }
    is_int(bad, 0, "%zu hostile queries run without error", ARRAY_LEN(hostile));
    is_int(search(sc, "name:flush", SEMANTIC_BM25, SEMANTIC_ANY, NULL, 1, &ev), 1, "'name:flush' is searched as words");
    is_str(lab(&ev, 0), "DatabaseSession.flush", "and finds flush");
    is_int(count(db, "SELECT count(*) FROM chunks"), 12, "the chunks are intact");
    struct semantic_query empty = {"", SEMANTIC_ANY, NULL, 5, SEMANTIC_HYBRID, NULL};
    ok(semantic_search(sc, &empty, &ev, err, sizeof err) == -1 && strstr(err, "query"), "an empty query is an error: %s", err);

    /* category */
    search(sc, "logout session flush", SEMANTIC_BM25, SEMANTIC_TEST, NULL, 5, &ev);
    int only_tests = ev.n > 0;
    for (size_t i = 0; i < ev.n; i++) only_tests &= fpattern_is_test(ev.v[i].path);
    ok(only_tests, "category test keeps only test files (%zu results)", ev.n);
    is_str(lab(&ev, 0), "test_logout_flushes_session", "the test of logout comes first");
    search(sc, "logout session flush", SEMANTIC_HYBRID, SEMANTIC_IMPLEMENTATION, NULL, 10, &ev);
    int no_tests = ev.n > 0;
    for (size_t i = 0; i < ev.n; i++) no_tests &= !fpattern_is_test(ev.v[i].path);
    ok(no_tests, "category implementation excludes test files (%zu results)", ev.n);
    search(sc, "logout session flush", SEMANTIC_HYBRID, SEMANTIC_ANY, NULL, 20, &ev);
    ok(rank_of(&ev, "test_logout_flushes_session") >= 0 && rank_of(&ev, "logout") >= 0,
       "category any has both");

    /* file_pattern */
    search(sc, "session key data", SEMANTIC_HYBRID, SEMANTIC_ANY, "sessions/*.py", 10, &ev);
    int in_sessions = ev.n == 2;
    for (size_t i = 0; i < ev.n; i++) in_sessions &= !strcmp(ev.v[i].path, "web/sessions/db.py");
    ok(in_sessions, "file_pattern sessions/*.py keeps the two session chunks (%zu)", ev.n);
    is_int(search(sc, "session key data", SEMANTIC_HYBRID, SEMANTIC_ANY, "*.rst", 10, &ev), 0,
           "a pattern matching no file gives no results");
    ok(search(sc, "session", SEMANTIC_HYBRID, SEMANTIC_ANY, "web/[abc", 10, &ev) == -1, "a malformed pattern is an error");
    search(sc, "rule", SEMANTIC_BM25, SEMANTIC_ANY, "routing.py", 10, &ev);
    ok(ev.n == 2 && !strcmp(ev.v[0].path, "web/routing.py"), "a bare file name matches the base name (%zu)", ev.n);

    /* local vectors: 'logout' is not a term of the flush chunk (name, doc or
     * code), but logout() calls flush(): co-occurrence links them */
    is_int(search(sc, "logout", SEMANTIC_BM25, SEMANTIC_IMPLEMENTATION, NULL, 10, &ev), 1,
           "bm25 finds only the logout function for 'logout'");
    search(sc, "logout", SEMANTIC_DENSE, SEMANTIC_IMPLEMENTATION, NULL, 20, &ev);
    for (size_t i = 0; i < ev.n; i++) diag("dense %zu: %s %.4f", i, ev.v[i].label, ev.v[i].score);
    int r_flush = rank_of(&ev, "DatabaseSession.flush"), r_date = rank_of(&ev, "parseHttpDate");
    is_str(lab(&ev, 0), "logout", "dense ranks logout itself first");
    ok(r_flush > 0 && (r_date < 0 || r_flush < r_date),
       "dense ranks flush (%d) above the unrelated parseHttpDate (%d)", r_flush, r_date);
    double s_flush = r_flush >= 0 ? ev.v[r_flush].score : 0;
    is_int(count(db, "SELECT length(rows) FROM vec_matrix"), 12 * (4 + VEC_LOCAL_DIM),
           "every chunk's local vector is stored, quantised (a float and 256 bytes a row), in the matrix");
    is_int(count(db, "SELECT count(*) FROM embeddings"), 0, "and nowhere else");
    ok(count(db, "SELECT sum(length(dfs)) / 4 FROM vec_term_blocks") > 50, "term vectors are stored");
    is_int(count(db, "SELECT count(*) FROM vec_models"), 1, "the model is stamped");
    /* the fit's arithmetic in parts on threads gives the bytes of one part */
    {
        struct vec_local_fit f1, fk;
        int ok1 = vec_local_fit_parts(db, &f1, 1, err, sizeof err) == 0, same = 0;
        for (int k = 2; ok1 && k <= 5; k += 3) {
            if (vec_local_fit_parts(db, &fk, k, err, sizeof err)) break;
            same = same_fit(&f1, &fk);
            vec_local_fit_free(&fk);
            ok(same, "a fit in %d parts gives the bytes of a fit in one (%zu chunks, %zu terms)", k, f1.n, f1.nterms);
        }
        /* and in a number of parts that changes from one stage to the next */
        struct vec_local_build *B = vec_local_build_new();
        sqlite3_stmt *st = NULL;
        sqlite3_prepare_v2(db,
            "SELECT c.id, c.hash, x.name, x.doc, x.body FROM chunks c JOIN files f ON f.id = c.file_id "
            "LEFT JOIN chunks_fts x ON x.rowid = c.id ORDER BY f.path, c.id", -1, &st, NULL);
        while (sqlite3_step(st) == SQLITE_ROW)
            vec_local_build_chunk(B, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                                  (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
                                  (const char *)sqlite3_column_text(st, 4));
        sqlite3_finalize(st);
        ok(vec_local_build_bytes(B) >= f1.n * VEC_LOCAL_QBYTES + f1.nterms * VEC_LOCAL_QBYTES,
           "a fit's memory is foretold: at least its quantised vectors (%zu bytes)", vec_local_build_bytes(B));
        struct stages st5 = {0, -1};
        vec_local_build_fit_by(B, &fk, &(struct vec_local_parts){changing_parts, stage_gate, &st5});
        ok(ok1 && st5.calls == 5 && same_fit(&f1, &fk),
           "a fit whose stages run in 1, 4, 2, 7 and 3 parts gives the bytes of a fit in one (%d stages)", st5.calls);
        is_int(st5.gated_after, 3, "its gate comes once its float rows are made, before its quantised vectors");
        vec_local_fit_free(&fk);
        /* its float rows mapped for huge pages, as a large repository's
         * are, or malloc'd: the same bytes */
        size_t was = vec_local_huge_min;
        struct vec_local_fit fh, fm;
        vec_local_huge_min = 0;
        int okh = vec_local_fit_parts(db, &fh, 2, err, sizeof err) == 0;
        vec_local_huge_min = SIZE_MAX;
        int okm = vec_local_fit_parts(db, &fm, 2, err, sizeof err) == 0;
        vec_local_huge_min = was;
        ok(okh && okm && same_fit(&fh, &fm) && same_fit(&f1, &fh),
           "a fit's rows mapped for huge pages give the bytes of rows malloc'd");
        if (okh) vec_local_fit_free(&fh);
        if (okm) vec_local_fit_free(&fm);
        /* a fit kept in memory (an index that cannot be written) embeds a
         * question as the stored model does */
        float q1[VEC_LOCAL_DIM], q2[VEC_LOCAL_DIM];
        int k1 = ok1 ? vec_local_embed_query(db, &f1, 0, "logout of the session and flush it", q1) : 0;
        int k2 = ok1 ? vec_local_embed_query(db, NULL, f1.ndocs, "logout of the session and flush it", q2) : -1;
        ok(k1 > 0 && k1 == k2 && !memcmp(q1, q2, sizeof q1),
           "a question embedded by the fit in memory is the one embedded by the stored model (%d, %d terms)", k1, k2);
        /* every term, each read from its block of the stored model, in
         * blocks of 128 and of 8 (first, middle and last of a block) */
        for (int round = 0; ok1 && round < 2; round++) {
            size_t was_block = vec_local_term_block, alike = 0, known = 0;
            vec_local_term_block = round ? 8 : 128;
            sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
            int saved = vec_local_save_on(db, &f1, "test-stamp", err, sizeof err) == 0;
            sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
            vec_local_term_block = was_block;
            long long blocks = count(db, "SELECT count(*) FROM vec_term_blocks");
            for (size_t t = 0; saved && t < f1.nterms; t++) {
                int a = vec_local_embed_query(db, &f1, 0, f1.terms[t], q1);
                int b = vec_local_embed_query(db, NULL, f1.ndocs, f1.terms[t], q2);
                alike += a == b && !memcmp(q1, q2, sizeof q1);
                known += b > 0;
            }
            ok(saved && alike == f1.nterms && known > f1.nterms / 2 && blocks == (round ? 16 : 1),
               "each of the %zu terms is embedded from %lld stored blocks as by the fit in memory (%zu the same, "
               "%zu known)", f1.nterms, blocks, alike, known);
        }
        if (ok1) vec_local_fit_free(&f1);
        else ok(0, "fit: %s", err);
    }

    /* the same question with another category reuses the scores: the
     * results are those of a new cache asked only that */
    {
        struct evidence e_any = EVIDENCE_INIT;
        search(sc, "logout", SEMANTIC_DENSE, SEMANTIC_ANY, NULL, 20, &e_any);
        struct semantic_cache *fresh = semantic_cache_new(db);
        search(fresh, "logout", SEMANTIC_DENSE, SEMANTIC_ANY, NULL, 20, &ev);
        ok(same_results(&ev, &e_any), "a question asked again with another category ranks as a new cache does (%zu results)", ev.n);
        semantic_cache_free(fresh);
        evidence_free(&e_any);
    }

    /* hybrid: union of both lists */
    search(sc, "logout", SEMANTIC_HYBRID, SEMANTIC_IMPLEMENTATION, NULL, 5, &ev);
    is_str(lab(&ev, 0), "logout", "hybrid ranks logout first");
    ok(rank_of(&ev, "DatabaseSession.flush") > 0, "hybrid brings in flush, which bm25 alone cannot find");

    /* determinism: the same query again, and from a new connection reading the stored model */
    search(sc, "logout", SEMANTIC_DENSE, SEMANTIC_IMPLEMENTATION, NULL, 20, &ev);
    ok(rank_of(&ev, "DatabaseSession.flush") == r_flush && ev.v[r_flush].score == s_flush, "same results twice");
    struct evidence ev1 = EVIDENCE_INIT;
    evidence_copy(&ev1, &ev);
    dense_fresh(path, &ev);
    ok(same_results(&ev, &ev1), "a new connection loads the stored vectors: the fitting connection's order and scores exactly");
    evidence_free(&ev1);

    /* a text the cache expects is scored on the pass that streams the
     * matrix for the first question: asked next, the matrix is read no
     * second time, and every result is the one asked without the hint */
    {
        const char *const texts[3] = {"logout", "flush the session", "login key"};
        struct evidence plain[3] = {EVIDENCE_INIT, EVIDENCE_INIT, EVIDENCE_INIT};
        struct evidence hinted[3] = {EVIDENCE_INIT, EVIDENCE_INIT, EVIDENCE_INIT};
        int r_plain = dense_texts(path, NULL, texts, 3, plain);
        int r_hinted = dense_texts(path, texts[1], texts, 3, hinted);
        for (int i = 0; i < 3; i++)
            ok(same_results(&plain[i], &hinted[i]), "'%s' ranks the same with the second text expected (%zu results)",
               texts[i], plain[i].n);
        is_int(r_plain, 2, "without the hint the matrix is read twice for three texts (streamed, then loaded)");
        is_int(r_hinted, 2, "with it, as often: the third text loads it");
        is_int(dense_texts(path, NULL, texts, 2, plain), 2, "without the hint two texts read it twice");
        is_int(dense_texts(path, texts[1], texts, 2, hinted), 1, "with the second expected, once");
        struct evidence same[3] = {EVIDENCE_INIT, EVIDENCE_INIT, EVIDENCE_INIT};
        const char *const again[3] = {"logout", "logout", "flush the session"};
        int r_same = dense_texts(path, "logout", again, 3, same);
        ok(same_results(&same[0], &plain[0]) && same_results(&same[2], &plain[1]),
           "expecting the first text itself changes nothing");
        is_int(r_same, 2, "and reads the matrix as without the hint");
        /* another text asked between the streamed pass and the expected
         * one (the search's later queries) loads the matrix: the expected
         * text's scores, made on the first pass, are kept for it */
        const char *const between[3] = {"logout", "login key", "flush the session"};
        struct evidence mid[3] = {EVIDENCE_INIT, EVIDENCE_INIT, EVIDENCE_INIT};
        is_int(dense_texts(path, between[2], between, 3, mid), 2,
               "a text asked in between loads the matrix once; the expected one reads it no more");
        ok(same_results(&mid[1], &plain[2]) && same_results(&mid[2], &plain[1]),
           "and the expected text, asked last, ranks as without the hint");
        for (int i = 0; i < 3; i++) evidence_free(&mid[i]);
        for (int i = 0; i < 3; i++) {
            evidence_free(&plain[i]);
            evidence_free(&hinted[i]);
            evidence_free(&same[i]);
        }
    }

    /* a search asks the same words with other filters: the vocabulary,
     * which counts a term's chunks by reading its postings, is asked once a
     * term while the chunks stay the same, and the results are a fresh
     * cache's */
    {
        sqlite3 *db3;
        ok(store_open(path, 1, &db3, NULL, err, sizeof err) == 0, "read-only connection");
        struct stmt_count looks = {"drqa_semantic_vocab WHERE term", 0};
        sqlite3_trace_v2(db3, SQLITE_TRACE_STMT, trace_count, &looks);
        struct semantic_cache *s3 = semantic_cache_new(db3);
        struct evidence e2 = EVIDENCE_INIT;
        const char *const pats[3] = {NULL, "sessions/*.py", "auth.py"};
        int same = 1;
        for (int i = 0; i < 3; i++) {
            struct evidence e3 = EVIDENCE_INIT;
            search(s3, "flush session", SEMANTIC_BM25, SEMANTIC_ANY, pats[i], 20, &e2);
            struct semantic_cache *fresh = semantic_cache_new(db3);
            search(fresh, "flush session", SEMANTIC_BM25, SEMANTIC_ANY, pats[i], 20, &e3);
            semantic_cache_free(fresh);
            same = same && e2.n == e3.n;
            for (size_t j = 0; same && j < e2.n; j++)
                same = !strcmp(e2.v[j].label, e3.v[j].label) && e2.v[j].score == e3.v[j].score;
            evidence_free(&e3);
        }
        ok(same, "three patterns rank as fresh caches do");
        looks.n = 0;
        for (int i = 0; i < 3; i++) search(s3, "flush session", SEMANTIC_BM25, SEMANTIC_ANY, pats[i], 20, &e2);
        is_int(looks.n, 0, "the same two terms again: the vocabulary is not asked");
        semantic_cache_free(s3);
        evidence_free(&e2);
        sqlite3_close(db3);
    }

    /* the matrix is the chunk vectors' one store: without it the model is
     * fitted again, to the same scores, and a stale matrix is not read */
    is_int(count(db, "SELECT count(*) FROM vec_matrix"), 1, "the 12 chunk vectors are stored whole, in one part");
    evidence_copy(&ev1, &ev);   /* from a connection that read the matrix */
    store_exec(db, "DELETE FROM vec_matrix", err, sizeof err);
    dense_fresh(path, &ev);
    ok(same_results(&ev, &ev1), "with the matrix gone, a refit gives exactly the stored matrix's results");
    is_int(count(db, "SELECT count(*) FROM vec_matrix"), 1, "and the matrix is stored again by that read-only connection");
    store_exec(db, "UPDATE vec_matrix SET rows = zeroblob(length(rows))", err, sizeof err);
    dense_fresh(path, &ev);
    is_int((int)ev.n, 0, "a zeroed matrix of the current stamp is what is read (no dense result)");
    store_exec(db, "UPDATE vec_matrix SET stamp = '0000000000000000'", err, sizeof err);
    dense_fresh(path, &ev);
    ok(same_results(&ev, &ev1), "a matrix of another chunk list is not read");
    evidence_free(&ev1);
    sqlite3 *db2;

    /* setup finds the stored vectors current from a quick stamp of the index
     * (files, meta, chunk count), recorded next to the matrix; a changed
     * file changes it, and setup then checks the chunk list itself */
    is_int(store_open(path, 1, &db2, NULL, err, sizeof err), 0, "read-only connection");
    sc2 = semantic_cache_new(db2);
    is_int(semantic_prepare(sc2, NULL, err, sizeof err), 0, "setup with the vectors stored");
    semantic_cache_free(sc2);
    char *quick1 = NULL, *model1 = NULL;
    {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "SELECT k.quick, m.stamp FROM vec_matrix_quick k, vec_models m", -1, &st, NULL);
        if (sqlite3_step(st) == SQLITE_ROW) {
            quick1 = xstrdup((const char *)sqlite3_column_text(st, 0));
            model1 = xstrdup((const char *)sqlite3_column_text(st, 1));
        }
        sqlite3_finalize(st);
    }
    ok(quick1 != NULL, "the quick stamp is recorded");
    store_exec(db, "UPDATE files SET hash = 'h-moved' WHERE path = 'web/auth.py'", err, sizeof err);
    sc2 = semantic_cache_new(db2);
    is_int(semantic_prepare(sc2, NULL, err, sizeof err), 0, "setup after a file's hash changed");
    semantic_cache_free(sc2);
    char *sql = xasprintf("SELECT count(*) FROM vec_matrix_quick k, vec_models m WHERE k.quick != '%s' AND m.stamp = '%s'",
                          quick1 ? quick1 : "", model1 ? model1 : "");
    is_int(count(db, sql), 1, "a new quick stamp is recorded; the chunks did not change, so neither did the model");
    free(sql);
    free(quick1);
    free(model1);
    sqlite3_close(db2);

    /* invalidation: a new chunk is seen by the next query, and the model refitted */
    char *stamp_before = NULL;
    {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "SELECT stamp FROM vec_models", -1, &st, NULL);
        if (sqlite3_step(st) == SQLITE_ROW) stamp_before = xstrdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    static const char SIGNAL[] =
        "def user_logged_out(sender, request):\n"
        "    \"\"\"Tell listeners that a visit ended.\"\"\"\n"
        "    send(sender, request)\n";
    /* rows an earlier layout kept (chunk vectors in embeddings, another
     * local model's terms) go with the next fit; a remote model's stay */
    store_exec(db, "INSERT INTO embeddings(hash, model, dim, vec) VALUES('h-old', 'local:ri256-v0', 256, x'00');"
                   "INSERT INTO embeddings(hash, model, dim, vec) VALUES('h-old', 'remote-x', 1, x'00');"
                   "INSERT INTO vec_terms(model, term, df, vec) VALUES('local:ri256-v0', 'old', 1, x'00')", err, sizeof err);
    search(sc, "logged out", SEMANTIC_DENSE, SEMANTIC_ANY, NULL, 3, &ev);   /* scored before the change */
    int64_t f = add_file(db, "web/signals.py", SIGNAL);
    add_chunk(db, f, "web/signals.py", SIGNAL, 1, 3, "user_logged_out", "Tell listeners that a visit ended.");
    search(sc, "logged out", SEMANTIC_DENSE, SEMANTIC_ANY, NULL, 3, &ev);
    is_str(lab(&ev, 0), "user_logged_out", "the new chunk is found by the next dense query");
    is_int(count(db, "SELECT length(rows) FROM vec_matrix"), 13 * (4 + VEC_LOCAL_DIM), "the refit stored 13 chunk vectors");
    is_int(count(db, "SELECT count(*) FROM embeddings WHERE model GLOB 'local:*'"), 0,
           "the refit removed the chunk vectors an earlier layout kept in embeddings");
    is_int(count(db, "SELECT count(*) FROM vec_terms WHERE model != '" VEC_LOCAL_MODEL "'"), 0,
           "and an earlier local model's term vectors");
    is_int(count(db, "SELECT count(*) FROM embeddings WHERE model = 'remote-x'"), 1, "but not a remote model's vectors");
    store_exec(db, "DELETE FROM embeddings", err, sizeof err);
    {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "SELECT stamp FROM vec_models", -1, &st, NULL);
        int changed = sqlite3_step(st) == SQLITE_ROW && stamp_before &&
                      strcmp(stamp_before, (const char *)sqlite3_column_text(st, 0)) != 0;
        sqlite3_finalize(st);
        ok(changed, "the model's stamp changed");
    }
    free(stamp_before);
    /* a change by another connection is noticed too */
    is_int(store_open(path, 0, &db2, NULL, err, sizeof err), 0, "second writer connection");
    store_exec(db2, "DELETE FROM chunks_fts WHERE rowid = (SELECT max(id) FROM chunks);"
                    "DELETE FROM chunk_spans WHERE id = (SELECT max(id) FROM chunk_spans)", err, sizeof err);
    sqlite3_close(db2);
    search(sc, "logged out", SEMANTIC_DENSE, SEMANTIC_ANY, NULL, 10, &ev);
    is_int(rank_of(&ev, "user_logged_out"), -1, "a chunk deleted by another connection is gone from the results");
    is_int(count(db, "SELECT length(rows) FROM vec_matrix"), 12 * (4 + VEC_LOCAL_DIM), "and the model was refitted on 12 chunks");

    /* remote embeddings through a client function: chunks embedded once, in
     * batches, cached by (hash, model) across connections */
    struct semantic_remote remote = {fake_embed, NULL, "fake-64"};
    struct semantic_query rq = {"logout", SEMANTIC_IMPLEMENTATION, NULL, 3, SEMANTIC_DENSE, &remote};
    evidence_free(&ev);
    int got = semantic_search(sc, &rq, &ev, err, sizeof err);
    is_int(got, 1, "remote dense search: one chunk shares a term with 'logout' under the fake vectors");
    is_str(lab(&ev, 0), "logout", "remote vectors rank logout first");
    ok(fake_calls == 2 && fake_texts == 13, "12 chunks in one batch plus the query (%d calls, %d texts)", fake_calls, fake_texts);
    is_int(count(db, "SELECT count(*) FROM embeddings WHERE model = 'fake-64' AND dim = 64"), 12, "remote vectors are stored");
    evidence_free(&ev);
    semantic_search(sc, &rq, &ev, err, sizeof err);
    ok(fake_calls == 3 && fake_texts == 14, "a second query embeds only the query");
    is_int(store_open(path, 1, &db2, NULL, err, sizeof err), 0, "read-only connection");
    sc2 = semantic_cache_new(db2);
    evidence_free(&ev);
    got = semantic_search(sc2, &rq, &ev, err, sizeof err);
    is_int(got, 1, "remote search on a new connection");
    ok(fake_calls == 4 && fake_texts == 15, "a new connection reads the stored vectors (%d texts)", fake_texts);
    add_chunk(db, f, "web/signals.py", SIGNAL, 1, 3, "user_logged_out", "Tell listeners that a visit ended.");
    evidence_free(&ev);
    semantic_search(sc2, &rq, &ev, err, sizeof err);
    ok(fake_calls == 6 && fake_texts == 17, "after a new chunk only that chunk is embedded (%d texts)", fake_texts);
    is_int(count(db, "SELECT count(*) FROM embeddings WHERE model = 'fake-64'"), 13,
           "a read-only connection stored it through a writer connection");
    semantic_cache_free(sc2);
    sqlite3_close(db2);
    fake_fail = 1;
    rq.text = "sign out";
    evidence_free(&ev);
    ok(semantic_search(sc, &rq, &ev, err, sizeof err) == -1 && strstr(err, "fake-64") && strstr(err, "503"),
       "a failing service is an error naming the model and the cause: %s", err);
    struct semantic_remote nomodel = {fake_embed, NULL, ""};
    rq.remote = &nomodel;
    ok(semantic_search(sc, &rq, &ev, err, sizeof err) == -1 && strstr(err, "model"), "a remote without a model name is refused");

    /* the SemanticSearch action */
    is_int(semantic_action_register(NULL, err, sizeof err), 0, "SemanticSearch registers with the action registry");
    struct action_ctx actx;
    action_ctx_init(&actx, db, dir);
    struct action_result ar;
    is_int(action_run_json(&actx, "SemanticSearch", "{\"query\": \"logout\", \"category\": \"implementation\"}",
                           &ar, err, sizeof err), ACTION_OK, "the action runs");
    ok(ar.ev.n == 5 && !strcmp(ar.ev.v[0].label, "logout") && cJSON_GetArraySize(ar.items) == 5,
       "five spans and five items, logout first (%zu)", ar.ev.n);
    action_result_free(&ar);
    is_int(action_run_json(&actx, "SemanticSearch", "{\"query\": \"logout\", \"category\": \"docs\"}",
                           &ar, err, sizeof err), ACTION_EINVAL, "an unknown category is refused");
    ok(strstr(err, "docs") && strstr(err, "implementation"), "naming it and the choices: %s", err);
    action_result_free(&ar);
    is_int(action_run_json(&actx, "SemanticSearch", "{\"query\": \"logout\", \"file_pattern\": \"*.rst\"}",
                           &ar, err, sizeof err), ACTION_OK, "no match is not an error");
    ok(ar.ev.n == 0 && ar.nnotes == 1 && strstr(ar.notes[0], "no code matched"), "but a note says so");
    action_result_free(&ar);
    ok(actx.semantic && semantic_cache_of(&actx) == actx.semantic, "the context owns one SemanticSearch cache");
    action_ctx_release(&actx);
    ok(!actx.semantic, "and releasing the context frees it");

    evidence_free(&ev);
    semantic_cache_free(sc);
    sqlite3_close(db);

    /* bm25 term pruning: a word in more chunks than the posting budget is
     * dropped when rarer words fill it, so only the rare word's chunk matches */
    char *path2 = xasprintf("%s/big.sqlite", dir);
    is_int(store_open(path2, 0, &db, NULL, err, sizeof err), 0, "open a second index");
    sc = semantic_cache_new(db);
    store_exec(db, "BEGIN", err, sizeof err);
    static const char FILLER[] = "def filler():\n    return common_value\n";
    static const char TARGET[] = "def target():\n    return common_value + zebra_stripes\n";
    int64_t ff = add_file(db, "pkg/filler.py", FILLER);
    for (int i = 0; i < 4100; i++) add_chunk(db, ff, "pkg/filler.py", FILLER, 1, 2, "filler", NULL);
    int64_t tf = add_file(db, "pkg/target.py", TARGET);
    add_chunk(db, tf, "pkg/target.py", TARGET, 1, 2, "target", NULL);
    store_exec(db, "COMMIT", err, sizeof err);
    is_int(search(sc, "common value zebra", SEMANTIC_BM25, SEMANTIC_ANY, NULL, 10, &ev), 1,
           "with 4101 chunks holding 'common', only the chunk with the rare 'zebra' is scored");
    is_str(lab(&ev, 0), "target", "and it is the target");
    is_int(search(sc, "common value", SEMANTIC_BM25, SEMANTIC_ANY, NULL, 10, &ev), 10,
           "a question of common words alone still gets results (the rarest term is kept)");
    evidence_free(&ev);
    semantic_cache_free(sc);
    sqlite3_close(db);
    free(path2);

    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    free(cmd);
    free(path);
    return done_testing();
}
