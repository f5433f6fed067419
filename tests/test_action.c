/* Unit tests for the action engine against a small index built here with the
 * store schema: FindClass, FindFunction, FindCodeSnippet, ViewCode, Outline,
 * ListFiles, FindReferences, argument validation and rendering. The
 * repository's files are also written to disk so that path confinement
 * (realpath, symlinks) is exercised for real. */
#include "tap.h"
#include "harness.h"
#include "action.h"
#include "index.h"
#include "index_int.h"   /* index_edge_bind_target: rows written as the writer writes them */
#include "store.h"
#include "tok.h"
#include "util.h"
#include "ztext.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static sqlite3 *db;
static char root[256];

static const char APP_PY[] =
    "import os\n"                                  /* 1 */
    "from .base import Base\n"                     /* 2 */
    "\n"
    "\n"
    "class App(Base):\n"                           /* 5 */
    "    \"\"\"The application.\"\"\"\n"
    "\n"
    "    def run(self, host=None):\n"              /* 8 */
    "        \"\"\"Run it.\"\"\"\n"
    "        self.dispatch(host)\n"                /* 10 */
    "        return host\n"
    "\n"
    "    def dispatch(self, req):\n"               /* 13 */
    "        return helper(req)\n"
    "\n"
    "\n"
    "def helper(x):\n"                             /* 17 */
    "    return x  +  1\n"
    "\n"
    "\n"
    "def make_app():\n"                            /* 21 */
    "    app = App()\n"
    "    app.run(\n"
    "        \"localhost\")\n"
    "    return app\n";                            /* 25 */

static const char BASE_PY[] =
    "class Base:\n"
    "    def run(self):\n"
    "        pass\n"
    "\n"
    "\n"
    "class Application(Base):\n"
    "    pass\n";

static const char OTHER_PY[] =
    "class App:\n"
    "    \"\"\"Another app.\"\"\"\n"
    "    def run(self):\n"
    "        return 2\n";

static const char TEST_PY[] =
    "from pkg.app import App, helper\n"
    "\n"
    "\n"
    "def test_run():\n"
    "    a = App()\n"
    "    assert helper(1) == 2\n";

static const char INIT_PY[] = "from .app import App\n";

static const char CALLER_PY[] =
    "from pkg import App\n"
    "\n"
    "\n"
    "def start():\n"
    "    return App().run()\n";

static void exec(const char *sql)
{
    char err[512];
    if (store_exec(db, sql, err, sizeof err)) diag("sql failed: %s: %s", sql, err);
}

static void write_file(const char *rel, const char *text)
{
    char *p = xasprintf("%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    *slash = 0;
    char *cmd = xasprintf("mkdir -p '%s'", p);
    if (system(cmd) != 0) diag("mkdir failed");
    free(cmd);
    *slash = '/';
    FILE *fp = fopen(p, "w");
    fputs(text, fp);
    fclose(fp);
    free(p);
}

static long long add_file(const char *path, const char *module, const char *text)
{
    write_file(path, text);
    sqlite3_stmt *st;
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    sqlite3_prepare_v2(db, "INSERT INTO files(path, lang, size, mtime_ns, hash, nlines, module, ztext, tlen) "
                           "VALUES(?1, 'python', ?2, 0, 'h', ?3, ?4, ?5, ?2)", -1, &st, NULL);
    size_t zl;
    unsigned char *z = ztext_pack(text, strlen(text), &zl);
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (long long)strlen(text));
    sqlite3_bind_int(st, 3, lines);
    sqlite3_bind_text(st, 4, module, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 5, z, (int)zl, free);
    sqlite3_step(st);
    sqlite3_finalize(st);
    long long id = sqlite3_last_insert_rowid(db);
    /* one module chunk per file (the whole text as a span), with its FTS terms */
    sqlite3_prepare_v2(db, "INSERT INTO chunk_spans(file_id, kind_s, start_line, end_line, off, len, hash_s) "
                           "VALUES(?, 'module', 1, ?, 0, ?, 'h')", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, lines);
    sqlite3_bind_int64(st, 3, (long long)strlen(text));
    sqlite3_step(st);
    sqlite3_finalize(st);
    long long cid = sqlite3_last_insert_rowid(db);
    struct buf body = BUF_INIT, pth = BUF_INIT;
    tok_terms(text, strlen(text), 0, &body);
    tok_terms(path, strlen(path), 0, &pth);
    sqlite3_prepare_v2(db, "INSERT INTO chunks_fts(rowid, name, doc, body, path) VALUES(?, '', '', ?, ?)", -1, &st,
                       NULL);
    sqlite3_bind_int64(st, 1, cid);
    sqlite3_bind_text(st, 2, buf_str(&body), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, buf_str(&pth), -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    buf_free(&body);
    buf_free(&pth);
    return id;
}

static long long add_sym(long long file, long long parent, const char *kind, const char *name, const char *qual,
                         int start, int end, const char *sig, const char *bases)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO symbols(file_id, parent_id, kind_s, name, qualname_s, start_line, end_line, "
                           "body_line, signature_s, bases) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, file);
    if (parent) sqlite3_bind_int64(st, 2, parent); else sqlite3_bind_null(st, 2);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, qual, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, start);
    sqlite3_bind_int(st, 7, end);
    sqlite3_bind_int(st, 8, start);
    sqlite3_bind_text(st, 9, sig, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, bases, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return sqlite3_last_insert_rowid(db);
}

static void add_edge(const char *kind, long long src_file, long long src_id, int line, const char *target,
                     long long dst_id, long long dst_file)
{
    sqlite3_stmt *st;
    const char *dot = strrchr(target, '.');
    sqlite3_prepare_v2(db, "INSERT INTO edges(kind, src_file, src_id, line, target_s, target_name, dst_id, dst_file) "
                           "VALUES(?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
    /* as the indexer stores them: an integer kind, the target's stored form */
    struct buf scratch = BUF_INIT;
    sqlite3_bind_int(st, 1, strcmp(kind, "calls") == 0 ? INDEX_EDGE_CALLS : INDEX_EDGE_INHERITS);
    sqlite3_bind_int64(st, 2, src_file);
    if (src_id) sqlite3_bind_int64(st, 3, src_id); else sqlite3_bind_null(st, 3);
    sqlite3_bind_int(st, 4, line);
    index_edge_bind_target(st, 5, target, dot ? dot + 1 : target, &scratch);
    sqlite3_bind_text(st, 6, dot ? dot + 1 : target, -1, SQLITE_STATIC);
    if (dst_id) sqlite3_bind_int64(st, 7, dst_id); else sqlite3_bind_null(st, 7);
    if (dst_file) sqlite3_bind_int64(st, 8, dst_file); else sqlite3_bind_null(st, 8);
    sqlite3_step(st);
    sqlite3_finalize(st);
    buf_free(&scratch);
}

static void add_import(long long file, int line, const char *module, const char *name, int level, long long res)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO imports(file_id, line, module, name, level, resolved_file_id) "
                           "VALUES(?, ?, ?, ?, ?, ?)", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, file);
    sqlite3_bind_int(st, 2, line);
    sqlite3_bind_text(st, 3, module, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, level);
    if (res) sqlite3_bind_int64(st, 6, res); else sqlite3_bind_null(st, 6);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

/* The big class: 10 methods of 20 lines each plus a blank line; class 1-214. */
static char *big_text(void)
{
    struct buf b = BUF_INIT;
    buf_adds(&b, "class Big:\n    \"\"\"A big class.\"\"\"\n\n    LIMIT = 10\n\n");
    for (int i = 0; i < 10; i++) {
        buf_printf(&b, "    def m%d(self, x):\n        \"\"\"Method %d.\"\"\"\n        y = x + %d\n", i, i, i);
        for (int k = 0; k < 16; k++) buf_adds(&b, "        y = y + 1\n");
        buf_adds(&b, "        return y\n");
        if (i < 9) buf_adds(&b, "\n");
    }
    buf_adds(&b, "\n\ndef after():\n    return Big()\n");
    return buf_take(&b);
}

static void build_index(void)
{
    long long app = add_file("pkg/app.py", "pkg.app", APP_PY);
    long long base = add_file("pkg/base.py", "pkg.base", BASE_PY);
    long long other = add_file("pkg/other/app.py", "pkg.other.app", OTHER_PY);
    long long test = add_file("tests/test_app.py", "tests.test_app", TEST_PY);
    long long init = add_file("pkg/__init__.py", "pkg", INIT_PY);
    long long caller = add_file("pkg/caller.py", "pkg.caller", CALLER_PY);
    char *bt = big_text();
    long long big = add_file("pkg/big.py", "pkg.big", bt);
    free(bt);

    long long App = add_sym(app, 0, "class", "App", "App", 5, 14, "class App(Base)", "Base");
    long long run = add_sym(app, App, "method", "run", "App.run", 8, 11, "def run(self, host=None)", NULL);
    long long disp = add_sym(app, App, "method", "dispatch", "App.dispatch", 13, 14, "def dispatch(self, req)", NULL);
    long long helper = add_sym(app, 0, "function", "helper", "helper", 17, 18, "def helper(x)", NULL);
    long long make = add_sym(app, 0, "function", "make_app", "make_app", 21, 25, "def make_app()", NULL);
    long long Base = add_sym(base, 0, "class", "Base", "Base", 1, 3, "class Base", NULL);
    add_sym(base, Base, "method", "run", "Base.run", 2, 3, "def run(self)", NULL);
    long long Appl = add_sym(base, 0, "class", "Application", "Application", 6, 7, "class Application(Base)", "Base");
    long long App2 = add_sym(other, 0, "class", "App", "App", 1, 4, "class App", NULL);
    add_sym(other, App2, "method", "run", "App.run", 3, 4, "def run(self)", NULL);
    long long trun = add_sym(test, 0, "function", "test_run", "test_run", 4, 6, "def test_run()", NULL);
    long long start = add_sym(caller, 0, "function", "start", "start", 4, 5, "def start()", NULL);
    long long Big = add_sym(big, 0, "class", "Big", "Big", 1, 214, "class Big", NULL);
    add_sym(big, Big, "variable", "LIMIT", "Big.LIMIT", 4, 4, NULL, NULL);
    for (int i = 0; i < 10; i++) {
        char name[8], qual[16], sig[32];
        snprintf(name, sizeof name, "m%d", i);
        snprintf(qual, sizeof qual, "Big.m%d", i);
        snprintf(sig, sizeof sig, "def m%d(self, x)", i);
        add_sym(big, Big, "method", name, qual, 6 + 21 * i, 6 + 21 * i + 19, sig, NULL);
    }
    add_sym(big, 0, "function", "after", "after", 217, 218, "def after()", NULL);
    /* one name in library code whose path says "testing", deeper library
     * code, and a test: ranked by fpattern_is_test, then depth */
    static const char *const serve_py = "def serve_forever():\n    pass\n";
    add_sym(add_file("tests/test_serve.py", "tests.test_serve", serve_py), 0, "function", "serve_forever",
            "serve_forever", 1, 2, "def serve_forever()", NULL);
    add_sym(add_file("pkg/web/http/serve.py", "pkg.web.http.serve", serve_py), 0, "function", "serve_forever",
            "serve_forever", 1, 2, "def serve_forever()", NULL);
    add_sym(add_file("pkg/testing.py", "pkg.testing", serve_py), 0, "function", "serve_forever", "serve_forever",
            1, 2, "def serve_forever()", NULL);

    add_edge("inherits", app, App, 5, "Base", Base, base);
    add_edge("inherits", base, Appl, 6, "Base", Base, base);
    add_edge("calls", app, run, 10, "self.dispatch", disp, app);
    add_edge("calls", app, disp, 14, "helper", helper, app);
    add_edge("calls", app, make, 22, "App", App, app);
    add_edge("calls", app, make, 23, "app.run", 0, 0);
    add_edge("calls", test, trun, 5, "App", App, app);
    add_edge("calls", test, trun, 6, "helper", helper, app);
    add_edge("calls", caller, start, 5, "App", App, app);
    add_edge("calls", caller, start, 5, "App().run", 0, 0);
    add_import(init, 1, "app", "App", 1, app);
    add_import(app, 1, "os", NULL, 0, 0);
    add_import(app, 2, "base", "Base", 1, base);
    add_import(test, 1, "pkg.app", "App", 0, app);
    add_import(test, 1, "pkg.app", "helper", 0, app);
    add_import(caller, 1, "pkg", "App", 0, init);
}

static struct action_ctx ctx;

/* Runs an action from JSON text; returns the status, result in *r. */
static int run(const char *name, const char *json, struct action_result *r, char *err, size_t errlen)
{
    err[0] = 0;
    return action_run_json(&ctx, name, json, r, err, errlen);
}

static const char *item_str(const struct action_result *r, int i, const char *field)
{
    const cJSON *it = cJSON_GetArrayItem(r->items, i);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, field);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int item_int(const struct action_result *r, int i, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(r->items, i), field);
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

static int notes_have(const struct action_result *r, const char *needle)
{
    for (size_t i = 0; i < r->nnotes; i++)
        if (strstr(r->notes[i], needle)) return 1;
    for (size_t i = 0; i < r->nnotes; i++) diag("note: %s", r->notes[i]);
    return 0;
}

static void test_find_class(void)
{
    struct action_result r;
    char err[1024];
    is_int(run("FindClass", "{\"class_name\":\"App\"}", &r, err, sizeof err), ACTION_OK, "FindClass App");
    is_int(cJSON_GetArraySize(r.items), 2, "two definitions of App");
    is_str(item_str(&r, 0, "path"), "pkg/app.py", "the shallower path first");
    is_str(item_str(&r, 1, "path"), "pkg/other/app.py", "then the other");
    is_str(item_str(&r, 0, "match"), "exact", "labelled exact");
    is_str(item_str(&r, 0, "signature"), "class App(Base)", "with its signature");
    is_int(item_int(&r, 0, "start_line"), 5, "span start");
    is_int(item_int(&r, 0, "end_line"), 14, "span end");
    ok(notes_have(&r, "2 definitions of 'App': pkg/app.py:5, pkg/other/app.py:1"), "a disambiguation note");
    is_int(r.ev.n, 2, "code of both");
    is_str(r.ev.v[0].text, "class App(Base):\n    \"\"\"The application.\"\"\"\n\n    def run(self, host=None):\n"
           "        \"\"\"Run it.\"\"\"\n        self.dispatch(host)\n        return host\n\n"
           "    def dispatch(self, req):\n        return helper(req)", "a short class whole");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"app\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 2, "case-insensitive: two");
    is_str(item_str(&r, 0, "match"), "case-insensitive", "labelled case-insensitive");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"pkg.app.App\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 1, "module-dotted: one");
    is_str(item_str(&r, 0, "path"), "pkg/app.py", "the module's class");
    is_str(item_str(&r, 0, "match"), "dotted", "labelled dotted");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"other.app.App\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 1, "partial module path: one");
    is_str(item_str(&r, 0, "path"), "pkg/other/app.py", "the other module's class");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"Aplication\"}", &r, err, sizeof err);
    ok(cJSON_GetArraySize(r.items) >= 1, "a typo finds something");
    is_str(item_str(&r, 0, "qualname"), "Application", "fuzzy: Application first");
    is_str(item_str(&r, 0, "match"), "fuzzy", "labelled fuzzy");
    ok(notes_have(&r, "no class named 'Aplication'; did you mean: Application (pkg/base.py:6)"), "did you mean");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"App\",\"file_pattern\":\"other/*.py\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 1, "file_pattern narrows to one");
    is_str(item_str(&r, 0, "path"), "pkg/other/app.py", "the one under other/");
    is_int(r.nnotes, 0, "no notes for a single exact match");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"App\",\"file_pattern\":\"nothere/**\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 2, "file_pattern matching nothing: results without it");
    ok(notes_have(&r, "no results with file_pattern 'nothere/**'; showing results without it"), "labelled so");
    action_result_free(&r);

    run("FindClass", "{\"class_name\":\"Zzyzx\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 0, "nothing like Zzyzx");
    ok(notes_have(&r, "no class named 'Zzyzx' or with a similar name in the index (10 files"), "says so");
    action_result_free(&r);

    /* a large class comes back as a skeleton */
    run("FindClass", "{\"class_name\":\"Big\"}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "Big: one span");
    ok(r.ev.v[0].elided, "marked elided");
    is_int(r.ev.v[0].start_line, 1, "from line 1");
    is_int(r.ev.v[0].end_line, 214, "to 214");
    ok(str_starts(r.ev.v[0].text,
               "class Big:\n    \"\"\"A big class.\"\"\"\n\n    LIMIT = 10\n\n    def m0(self, x):\n"
               "        \"\"\"Method 0.\"\"\"\n"
               "        ... (lines 8-25 elided; ViewCode pkg/big.py:8-25 to read them)\n\n"
               "    def m1(self, x):\n        \"\"\"Method 1.\"\"\"\n"
               "        ... (lines 29-46 elided; ViewCode pkg/big.py:29-46 to read them)\n"),
       "skeleton: signatures, docstrings, markers");
    ok(str_ends(r.ev.v[0].text, "        ... (lines 197-214 elided; ViewCode pkg/big.py:197-214 to read them)"),
       "the last body elided too");
    char *txt = action_result_render(&r, 0);
    ok(strstr(txt, "pkg/big.py:1-214  class Big  (parts elided)\n  1  class Big:\n") != NULL, "rendered header");
    ok(strstr(txt, "  7          \"\"\"Method 0.\"\"\"\n             ... (lines 8-25 elided") != NULL,
       "markers are not numbered");
    ok(strstr(txt, " 26  \n 27      def m1(self, x):\n") != NULL, "numbering resumes after a marker");
    free(txt);
    action_result_free(&r);
}

static void test_find_function(void)
{
    struct action_result r;
    char err[1024];
    run("FindFunction", "{\"function_name\":\"run\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 3, "three run definitions");
    is_str(item_str(&r, 0, "qualname"), "App.run", "App.run first");
    is_str(item_str(&r, 0, "path"), "pkg/app.py", "in pkg/app.py");
    is_str(item_str(&r, 1, "qualname"), "Base.run", "then Base.run");
    is_str(item_str(&r, 2, "path"), "pkg/other/app.py", "then the deeper one");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"run\",\"class_name\":\"Base\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 1, "class_name narrows to one");
    is_str(item_str(&r, 0, "qualname"), "Base.run", "Base.run");
    is_str(item_str(&r, 0, "match"), "dotted", "labelled dotted");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"App.run\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 2, "Class.method: both App.run");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"pkg.app.App.run\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 1, "module.Class.method: one");
    is_int(item_int(&r, 0, "start_line"), 8, "at line 8");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"run\",\"class_name\":\"Nope\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 3, "unknown class: all definitions");
    ok(notes_have(&r, "class 'Nope' has no method 'run'"), "and says so");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"serve_forever\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 3, "three serve_forever definitions");
    is_str(item_str(&r, 0, "path"), "pkg/testing.py", "library code named testing.py is not a test: first");
    is_str(item_str(&r, 1, "path"), "pkg/web/http/serve.py", "then the deeper library code");
    is_str(item_str(&r, 2, "path"), "tests/test_serve.py", "the test last");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"helpr\"}", &r, err, sizeof err);
    is_str(item_str(&r, 0, "qualname"), "helper", "fuzzy: helpr -> helper");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"makeapp\"}", &r, err, sizeof err);
    is_str(item_str(&r, 0, "qualname"), "make_app", "fuzzy: makeapp -> make_app");
    action_result_free(&r);

    run("FindFunction", "{\"function_name\":\"helper\"}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "one span");
    is_str(r.ev.v[0].text, "def helper(x):\n    return x  +  1", "the function whole");
    is_str(r.ev.v[0].label, "def helper(x)", "labelled by signature");
    cJSON *j = action_result_to_json(&r);
    char *s = cJSON_PrintUnformatted(j);
    ok(strstr(s, "\"action\":\"FindFunction\",\"items\":[{\"name\":\"helper\",\"qualname\":\"helper\",\"kind\":\"function\","
                 "\"path\":\"pkg/app.py\",\"module\":\"pkg.app\",\"start_line\":17,\"end_line\":18,"
                 "\"signature\":\"def helper(x)\",\"match\":\"exact\",\"score\":1}]") != NULL, "JSON items");
    ok(strstr(s, "\"evidence\":[{\"path\":\"pkg/app.py\",\"start_line\":17,\"end_line\":18,") != NULL, "JSON evidence");
    free(s);
    cJSON_Delete(j);
    char *txt = action_result_render(&r, 0);
    is_str(txt, "pkg/app.py:17-18  def helper(x)\n17  def helper(x):\n18      return x  +  1\n", "rendered");
    free(txt);
    action_result_free(&r);
}

static void test_snippet(void)
{
    struct action_result r;
    char err[1024];
    is_int(run("FindCodeSnippet", "{\"code_snippet\":\"app.run(\\\"localhost\\\")\"}", &r, err, sizeof err), 0,
           "snippet across a line break");
    is_int(r.ev.n, 1, "one occurrence");
    is_str(r.ev.v[0].path, "pkg/app.py", "in pkg/app.py");
    is_int(r.ev.v[0].start_line, 23, "from line 23");
    is_int(r.ev.v[0].end_line, 24, "to line 24");
    is_str(item_str(&r, 0, "match"), "whitespace-insensitive", "labelled whitespace-insensitive");
    is_str(item_str(&r, 0, "in"), "make_app", "inside make_app");
    action_result_free(&r);

    run("FindCodeSnippet", "{\"code_snippet\":\"def run(self, host=None):\\n\\\"\\\"\\\"Run it.\\\"\\\"\\\"\\n  self.dispatch(host)\"}",
        &r, err, sizeof err);
    is_int(r.ev.n, 1, "multi-line snippet with other indentation");
    is_int(r.ev.v[0].start_line, 8, "starts at 8");
    is_int(r.ev.v[0].end_line, 10, "ends at 10");
    action_result_free(&r);

    run("FindCodeSnippet", "{\"code_snippet\":\"return x + 1\"}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "differing inner spaces");
    is_int(r.ev.v[0].start_line, 18, "line 18");
    action_result_free(&r);

    run("FindCodeSnippet", "{\"code_snippet\":\"elper(re\"}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "a partial identifier (full scan)");
    is_int(r.ev.v[0].start_line, 14, "line 14");
    is_str(item_str(&r, 0, "match"), "exact", "verbatim: exact");
    action_result_free(&r);

    /* one word: the files where it is a word of its own, and the result
     * says so; a part of a longer word still reaches every file */
    run("FindCodeSnippet", "{\"code_snippet\":\"helper\"}", &r, err, sizeof err);
    {
        int whole = 1;
        for (size_t i = 0; i < r.ev.n; i++) whole &= r.ev.v[i].text && strstr(r.ev.v[i].text, "helper") != NULL;
        ok(r.ev.n >= 3 && whole, "one word: %zu occurrences, each holding it", r.ev.n);
    }
    ok(notes_have(&r, "one word: looked for in the files where its parts are words of their own"),
       "says where it looked");
    action_result_free(&r);
    run("FindCodeSnippet", "{\"code_snippet\":\"elper\"}", &r, err, sizeof err);
    ok(r.ev.n >= 3 && !notes_have(&r, "one word:"), "a part of a word: every file, %zu occurrences", r.ev.n);
    action_result_free(&r);

    run("FindCodeSnippet", "{\"code_snippet\":\"App()\"}", &r, err, sizeof err);
    is_int(r.ev.n, 3, "three App() occurrences");
    is_str(r.ev.v[0].path, "pkg/app.py", "sorted by path: pkg/app.py");
    is_str(r.ev.v[1].path, "pkg/caller.py", "pkg/caller.py");
    is_str(r.ev.v[2].path, "tests/test_app.py", "tests/test_app.py");
    action_result_free(&r);

    run("FindCodeSnippet", "{\"code_snippet\":\"App()\",\"file_pattern\":\"tests/**\"}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "file_pattern keeps one");
    action_result_free(&r);

    run("FindCodeSnippet", "{\"code_snippet\":\"no such code here\"}", &r, err, sizeof err);
    is_int(r.ev.n, 0, "absent snippet");
    ok(notes_have(&r, "the snippet occurs nowhere"), "says so");
    action_result_free(&r);

    is_int(run("FindCodeSnippet", "{\"code_snippet\":\"  \\n \"}", &r, err, sizeof err), ACTION_EINVAL,
           "a blank snippet is refused");
    ok(strstr(err, "only whitespace") != NULL, "message: %s", err);
    action_result_free(&r);
}

static void test_view(void)
{
    struct action_result r;
    char err[1024];
    is_int(run("ViewCode", "{\"code_span_list\":[\"pkg/app.py:17-18\"]}", &r, err, sizeof err), 0, "a range");
    is_str(r.ev.v[0].text, "def helper(x):\n    return x  +  1", "exact lines");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"pkg/app.py:App.run\"]}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "path:Class.method");
    is_int(r.ev.v[0].start_line, 8, "App.run from 8");
    is_int(r.ev.v[0].end_line, 11, "to 11");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"App.dispatch\", \"helper\"]}", &r, err, sizeof err);
    is_int(r.ev.n, 2, "bare symbols");
    is_int(r.ev.v[0].start_line, 13, "App.dispatch at 13");
    is_int(r.ev.v[1].start_line, 17, "helper at 17");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"pkg/app.py:10\"]}", &r, err, sizeof err);
    is_int(r.ev.v[0].start_line, 8, "a single line shows its enclosing method");
    is_int(r.ev.v[0].end_line, 11, "whole");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"pkg/app.py:10-10\"],\"snap_to_definition\":true}", &r, err, sizeof err);
    is_int(r.ev.v[0].start_line, 8, "snap widens to the method start");
    is_int(r.ev.v[0].end_line, 11, "and end");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"pkg.base\"]}", &r, err, sizeof err);
    is_str(r.ev.v[0].path, "pkg/base.py", "a module name opens its file");
    is_int(r.ev.v[0].end_line, 7, "whole file");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"pkg/big.py\"]}", &r, err, sizeof err);
    is_int(r.ev.n, 1, "a whole file with a large class");
    ok(r.ev.v[0].elided, "elided");
    is_int(r.ev.v[0].end_line, 218, "to its last line");
    ok(str_ends(r.ev.v[0].text, "to read them)\n\n\ndef after():\n    return Big()"), "code after the class verbatim");
    ok(notes_have(&r, "classes over 150 lines are shown as skeletons"), "noted");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"Big\"]}", &r, err, sizeof err);
    ok(r.ev.n == 1 && r.ev.v[0].elided, "symbol Big: skeleton");
    ok(notes_have(&r, "class Big has 214 lines: shown as a skeleton"), "noted");
    action_result_free(&r);

    run("ViewCode", "{\"code_span_list\":[\"pkg/big.py:Big.m3\"]}", &r, err, sizeof err);
    ok(r.ev.n == 1 && !r.ev.v[0].elided, "a member of the large class: whole");
    is_int(r.ev.v[0].start_line, 69, "m3 at 69");
    is_int(r.ev.v[0].end_line, 88, "to 88");
    action_result_free(&r);

    /* token budget */
    ctx.token_budget = 100;
    run("ViewCode", "{\"code_span_list\":[\"pkg/big.py:1-200\", \"helper\"]}", &r, err, sizeof err);
    ok(r.truncated, "truncated at the budget");
    is_int(r.ev.n, 1, "one span fits, partly");
    int end = r.ev.v[0].end_line;
    ok(end > 1 && end < 200, "cut at line %d", end);
    char want[128];
    snprintf(want, sizeof want, "ViewCode pkg/big.py:%d-200 to read them", end + 1);
    ok(notes_have(&r, want), "says which lines to ask for: %s", want);
    ok(notes_have(&r, "not shown (token budget reached): ViewCode pkg/app.py:17-18"), "the next span is named");
    action_result_free(&r);
    ctx.token_budget = 0;

    /* confinement and missing paths */
    is_int(run("ViewCode", "{\"code_span_list\":[\"../../etc/passwd\"]}", &r, err, sizeof err), ACTION_EINVAL,
           "../../etc/passwd refused");
    ok(strstr(err, "leaves the repository") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[\"/etc/passwd\"]}", &r, err, sizeof err), ACTION_EINVAL,
           "/etc/passwd refused");
    ok(strstr(err, "outside the repository") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[\"leak\"]}", &r, err, sizeof err), ACTION_EINVAL,
           "a symlink out of the repo refused");
    ok(strstr(err, "symbolic link") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[\"pkg/ap.py\"]}", &r, err, sizeof err), ACTION_EINVAL,
           "a missing file");
    ok(strstr(err, "'pkg/ap.py': no such file or symbol in the index; nearest: pkg/app.py") != NULL,
       "nearest paths: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[\"pkg/other\"]}", &r, err, sizeof err), ACTION_EINVAL,
           "a directory");
    ok(strstr(err, "is a directory with 1 indexed files (pkg/other/app.py)") != NULL, "lists it: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[\"pkg/app.py:90-95\"]}", &r, err, sizeof err), ACTION_EINVAL,
           "a range past the end");
    ok(strstr(err, "pkg/app.py has only 25 lines") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[\"pkg/app.py:17-18\", \"nope.py\"]}", &r, err, sizeof err), 0,
           "one good span and one bad: ok");
    ok(r.ev.n == 1 && notes_have(&r, "'nope.py': no such file"), "the bad one is a note");
    action_result_free(&r);
}

static void test_outline_list(void)
{
    struct action_result r;
    char err[1024];
    is_int(run("Outline", "{\"path\":\"pkg/app.py\"}", &r, err, sizeof err), 0, "Outline a file");
    is_str(buf_str(&r.listing),
           "pkg/app.py (25 lines)\n"
           "  5-14  class App(Base)\n"
           "    8-11  def run(self, host=None)\n"
           "    13-14  def dispatch(self, req)\n"
           "  17-18  def helper(x)\n"
           "  21-25  def make_app()\n", "outline text");
    is_int(cJSON_GetArraySize(r.items), 5, "five items");
    action_result_free(&r);

    run("Outline", "{\"path\":\"pkg/other\"}", &r, err, sizeof err);
    is_str(buf_str(&r.listing), "pkg/other/app.py (4 lines)\n  1-4  class App\n    3-4  def run(self)\n",
           "outline of a package directory");
    action_result_free(&r);

    is_int(run("Outline", "{\"path\":\"pkg/nothere.py\"}", &r, err, sizeof err), ACTION_EINVAL, "Outline missing");
    ok(strstr(err, "nearest: pkg/__init__.py, pkg/app.py, pkg/base.py") != NULL,
       "with the files of its directory as suggestions: %s", err);
    action_result_free(&r);

    run("ListFiles", "{\"pattern\":\"pkg/other/**\"}", &r, err, sizeof err);
    is_str(buf_str(&r.listing), "pkg/other/app.py  4 lines  70 bytes\n1 files, 4 lines\n", "ListFiles");
    action_result_free(&r);
    run("ListFiles", "{}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 10, "all ten files");
    action_result_free(&r);
    run("ListFiles", "{\"pattern\":\"*.rs\"}", &r, err, sizeof err);
    ok(notes_have(&r, "no indexed file matches '*.rs'"), "nothing matches");
    action_result_free(&r);
}

static void test_refs(void)
{
    struct action_result r;
    char err[1024];
    run("FindReferences", "{\"symbol\":\"helper\"}", &r, err, sizeof err);
    is_str(buf_str(&r.listing),
           "References to helper:\n"
           "  defined: function helper at pkg/app.py:17-18\n"
           "callers (2):\n"
           "  pkg/app.py:14  in App.dispatch  helper\n"
           "  tests/test_app.py:6  in test_run  helper\n"
           "importers (1):\n"
           "  tests/test_app.py:1  from pkg.app import helper\n", "helper: callers and importers");
    is_str(r.ev.v[0].text, "        return helper(req)", "evidence: the calling line");
    is_str(r.ev.v[0].label, "caller in App.dispatch", "labelled");
    action_result_free(&r);

    run("FindReferences", "{\"symbol\":\"pkg.app.App\"}", &r, err, sizeof err);
    is_str(buf_str(&r.listing),
           "References to pkg.app.App:\n"
           "  defined: class App at pkg/app.py:5-14\n"
           "callers (3):\n"
           "  pkg/app.py:22  in make_app  App\n"
           "  pkg/caller.py:5  in start  App\n"
           "  tests/test_app.py:5  in test_run  App\n"
           "importers (3):\n"
           "  pkg/__init__.py:1  from .app import App\n"
           "  pkg/caller.py:1  from pkg import App\n"
           "  tests/test_app.py:1  from pkg.app import App\n", "App: callers and importers (one via re-export)");
    action_result_free(&r);

    run("FindReferences", "{\"symbol\":\"Base\"}", &r, err, sizeof err);
    ok(strstr(buf_str(&r.listing), "subclasses (2):\n  pkg/app.py:5  in App  Base\n  pkg/base.py:6  in Application  Base\n")
       != NULL, "Base: two subclasses");
    action_result_free(&r);

    run("FindReferences", "{\"symbol\":\"App.run\"}", &r, err, sizeof err);
    ok(strstr(buf_str(&r.listing), "callers (2), unresolved, matched by name only:\n  pkg/app.py:23  in make_app  app.run\n"
              "  pkg/caller.py:5  in start  App().run\n") != NULL, "unresolved callers labelled");
    ok(notes_have(&r, "'App.run' has 2 definitions"), "both App.run");
    action_result_free(&r);

    run("FindReferences", "{\"symbol\":\"helper\",\"file_pattern\":\"tests/**\"}", &r, err, sizeof err);
    is_int(cJSON_GetArraySize(r.items), 2, "file_pattern restricts the sites");
    action_result_free(&r);
}

/* A note that would repeat a huge argument is cut at ACTION_NOTE_MAX and
 * says so: a 20,000-byte class name is not sent back whole, twice. */
static void test_long_note(void)
{
    struct action_result r;
    char err[1024];
    struct buf args = BUF_INIT;
    buf_adds(&args, "{\"class_name\":\"");
    for (int i = 0; i < 20000; i++) buf_addc(&args, 'Q');
    buf_adds(&args, "\"}");
    is_int(run("FindClass", buf_str(&args), &r, err, sizeof err), ACTION_OK, "FindClass of a 20,000-byte name runs");
    size_t longest = 0;
    int said = 0;
    for (size_t i = 0; i < r.nnotes; i++) {
        if (strlen(r.notes[i]) > longest) longest = strlen(r.notes[i]);
        said |= strstr(r.notes[i], "cut)") != NULL;
    }
    ok(r.nnotes > 0 && longest <= ACTION_NOTE_MAX + 64 && said, "its note is cut near %d bytes and says so (%zu)",
       ACTION_NOTE_MAX, longest);
    action_result_free(&r);
    buf_free(&args);
}

static void test_validation(void)
{
    struct action_result r;
    char err[1024];
    is_int(run("FindClas", "{\"class_name\":\"App\"}", &r, err, sizeof err), ACTION_EINVAL, "unknown action");
    ok(strstr(err, "unknown action 'FindClas' (did you mean FindClass?)") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("FindClass", "{\"class_name\":", &r, err, sizeof err), ACTION_EINVAL, "malformed JSON");
    ok(strstr(err, "not valid JSON") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("FindClass", "[\"App\"]", &r, err, sizeof err), ACTION_EINVAL, "an array instead of an object");
    ok(strstr(err, "must be a JSON object with the fields class_name (string, required), file_pattern (string)") != NULL,
       "message: %s", err);
    action_result_free(&r);
    is_int(run("FindClass", "{\"class_name\":\"App\",\"klass\":1}", &r, err, sizeof err), ACTION_EINVAL, "unknown field");
    ok(strstr(err, "unknown field 'klass'") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("FindClass", "{\"class_name\":5}", &r, err, sizeof err), ACTION_EINVAL, "wrong type");
    const char *e = err;
    is_str(e, "FindClass: field 'class_name' must be a string", "message names field and type");
    action_result_free(&r);
    is_int(run("FindClass", "{}", &r, err, sizeof err), ACTION_EINVAL, "missing field");
    ok(strstr(err, "missing required field 'class_name' (string") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("FindClass", "{\"class_name\":\"\"}", &r, err, sizeof err), ACTION_EINVAL, "empty required string");
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":\"pkg/app.py\"}", &r, err, sizeof err), ACTION_EINVAL,
           "a string where a list is expected");
    ok(strstr(err, "field 'code_span_list' must be an array of strings") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[1]}", &r, err, sizeof err), ACTION_EINVAL, "a number in the list");
    ok(strstr(err, "element 0 of field 'code_span_list' must be a string") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("ViewCode", "{\"code_span_list\":[],\"snap_to_definition\":\"yes\"}", &r, err, sizeof err),
           ACTION_EINVAL, "empty list");
    action_result_free(&r);
    is_int(run("FindClass", "{\"class_name\":\"App\",\"file_pattern\":\"[ab\"}", &r, err, sizeof err), ACTION_EINVAL,
           "bad file_pattern");
    ok(strstr(err, "unclosed '['") != NULL, "message: %s", err);
    action_result_free(&r);
    is_int(run("FindClass", "{\"class_name\":\"App\",\"file_pattern\":null}", &r, err, sizeof err), ACTION_OK,
           "null for an optional field is accepted");
    action_result_free(&r);
    is_int(run("Finish", "{\"answer\":\"x\",\"finish_reason\":\"y\"}", &r, err, sizeof err), ACTION_EINVAL,
           "Finish is not run here");
    ok(strstr(err, "Finish ends the search") != NULL, "message: %s", err);
    action_result_free(&r);

    const char *const *names = action_names();
    struct buf b = BUF_INIT;
    for (int i = 0; names[i]; i++) buf_printf(&b, "%s ", names[i]);
    ok(strncmp(buf_str(&b), "FindClass FindFunction FindCodeSnippet SemanticSearch ViewCode Outline ListFiles "
                            "FindReferences ", 89) == 0 && str_ends(buf_str(&b), "Finish "), "names in prompt order: %s",
       buf_str(&b));
    buf_free(&b);
    cJSON *schema = action_schema_json();
    cJSON *fc = cJSON_GetArrayItem(schema, 0);
    char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(fc, "arguments"));
    ok(strncmp(s, "[{\"name\":\"class_name\",\"type\":\"string\",\"required\":true,", 54) == 0, "schema: %s", s);
    free(s);
    cJSON_Delete(schema);
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "action") != NULL, "temp dir");
    snprintf(root, sizeof root, "%s/repo", dir);
    mkdir(root, 0700);
    char *ipath = xasprintf("%s/index.sqlite", dir);
    char err[512];
    is_int(store_open(ipath, 0, &db, NULL, err, sizeof err), 0, "index created");
    exec("BEGIN");
    build_index();
    exec("COMMIT");
    char *outside = xasprintf("%s/secret", dir);
    write_file("../secret", "secret\n");
    char *leak = xasprintf("%s/leak", root);
    ok(symlink(outside, leak) == 0, "a symlink leaving the repository");

    action_ctx_init(&ctx, db, root);
    test_find_class();
    test_find_function();
    test_snippet();
    test_view();
    test_outline_list();
    test_refs();
    test_validation();
    test_long_note();
    action_ctx_release(&ctx);
    action_ctx_release(NULL);
    action_result_free(NULL);

    sqlite3_close(db);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    free(cmd);
    free(ipath);
    free(outside);
    free(leak);
    return done_testing();
}
