/*
 * test_answer: which spans the extractive answer cites (src/answer.c): at
 * most ANSWER_MAX_CITES, the leading ones from distinct files, then by
 * score with at most ANSWER_PER_FILE spans per file, except the file of the
 * best span, which may give up to ANSWER_PER_TOP_FILE; nothing that does
 * not touch the question; every citation one of the pool's spans. The
 * relations it states are calls in code, not in comments or docstrings, and
 * never to a name several cited definitions share unless self.name() in a
 * method picks its own class's definition, nor a special method ('__init__',
 * super().name()) to another class's; the bonus for defining a
 * name the question writes is shared among that name's definitions. A long
 * span is cited by the definition inside it that does the work, even a long
 * one. A class outline does not keep a method read in full inside it out.
 * The one definition of a name the question writes explicitly is cited
 * first, by one of its views, and its class line calls nothing. A method
 * is called through its class's name or self, a module's function through
 * its module or by its name, not through any receiver;
 * a class inherits from its bases, not from its metaclass. A ranked pool
 * (a fusion) keeps its order, except that a definition another file's
 * leading citation already names waits behind the other files.
 */
#include "answer.h"
#include "store.h"
#include "tap.h"
#include "harness.h"
#include "util.h"

#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t count_path(const struct evidence *c, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) n += !strcmp(c->v[i].path, path);
    return n;
}

/* n non-overlapping 10-line spans of path whose comment is about */
static void add_spans(struct evidence *pool, const char *path, int n, const char *about)
{
    for (int i = 0; i < n; i++) {
        char text[256], label[64];
        snprintf(text, sizeof text, "def part_%d(self):\n    # %s\n    pass\n", i, about);
        snprintf(label, sizeof label, "def part_%d(self)", i);
        evidence_add(pool, path, 1 + 20 * i, 10 + 20 * i, text, label, 1.0 / (1.0 + i));
    }
}

/* The answer to q over pool (db may be NULL); its citations go to cites. */
static char *answer_of(const struct qparse *q, const struct evidence *pool, sqlite3 *db, struct evidence *cites)
{
    char *md = NULL, err[256];
    ok(answer_build(q, pool, db, NULL, &md, cites, err, sizeof err) == 0, "the answer is built");
    return md;
}

/* Adds files a (path pa, 30 lines) and b (pb, 10 lines) and the symbol rows
 * given as (file_id, kind, name, qualname, start, end, signature) tuples. */
static int two_files(sqlite3 *db, int a, const char *pa, int b, const char *pb, const char *symbol_rows)
{
    char *sql = xasprintf("INSERT INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) VALUES "
                          "(%d, '%s', 'python', 0, 0, '', 30, X'', 0), (%d, '%s', 'python', 0, 0, '', 10, X'', 0);"
                          "INSERT INTO symbols(file_id, kind_s, name, qualname_s, start_line, end_line, signature_s) "
                          "VALUES %s;",
                          a, pa, b, pb, symbol_rows);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    free(sql);
    return rc;
}

/* The index of the named-class question: Loader is a class, make_loader a function. */
static int names_loader(void *ctx, const char *name, size_t n, int which)
{
    (void)ctx;
    if (which == QPARSE_NAMES_PROJECT) return 0;   /* the repository is named neither */
    if (n == 6 && !memcmp(name, "Loader", 6)) return which != QPARSE_NAMES_FUNCTIONS;
    if (n == 11 && !memcmp(name, "make_loader", 11)) return which != QPARSE_NAMES_CLASSES;
    return 0;
}

/* A span of a pool, as the tables below give them. */
struct span_row {
    const char *path;
    int a, b;
    const char *text, *label;
};

/* The pool of the rows rows[0..n), each with prior 1. */
static void add_rows(struct evidence *pool, const struct span_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) evidence_add(pool, rows[i].path, rows[i].a, rows[i].b, rows[i].text, rows[i].label, 1.0);
}

/* The relations the answer to question over rows states: each of says[]
 * is in it, none of nots[] (both NULL-terminated), each a test. */
static void check_relations(sqlite3 *db, const char *question, const struct span_row *rows, size_t n,
                            const char *const *says, const char *const *nots)
{
    struct qparse q;
    char err[256];
    ok(qparse_question(question, &q, err, sizeof err) == 0, "parses: %s", question);
    struct evidence pool = EVIDENCE_INIT, cites = EVIDENCE_INIT;
    add_rows(&pool, rows, n);
    char *md = NULL;
    ok(answer_build(&q, &pool, db, NULL, &md, &cites, err, sizeof err) == 0, "the answer is built");
    for (size_t i = 0; says[i]; i++) ok(md && strstr(md, says[i]), "says: %s", says[i]);
    for (size_t i = 0; nots[i]; i++) ok(md && !strstr(md, nots[i]), "does not say: %s", nots[i]);
    free(md);
    evidence_free(&cites);
    evidence_free(&pool);
    qparse_free(&q);
}

/* A case of check_relations over two files and their symbols (two_files). */
struct relation_case {
    const char *what;
    int fa;
    const char *pa;
    int fb;
    const char *pb;
    const char *symbols;
    const char *question;
    const struct span_row *rows;
    size_t nrows;
    const char *const *says, *const *nots;
};

static const struct span_row recv_spans[] = {
    {"pkg/store.py", 2, 5, "    def get(self, key):\n        # get the key from the store\n        return key\n\n",
     "def get(self, key)"},
    {"pkg/store.py", 7, 10,
     "    def put(self, key, value):\n        # put the key in the store\n        self.get(key)\n\n",
     "def put(self, key, value)"},
    {"pkg/handle.py", 1, 5,
     "def handle(options):\n    # get the store key from the options\n    key = options.get(\"key\")\n"
     "    return key\n\n",
     "def handle(options)"},
    {"pkg/handle.py", 6, 9, "def fetch(key):\n    # get the key through the store class\n    return Store.get(None, key)\n\n",
     "def fetch(key)"},
};

static const struct span_row mod_spans[] = {
    {"pkg/api.py", 1, 4, "def fetch(url):\n    # fetch the url\n    return url\n\n", "def fetch(url)"},
    {"pkg/client.py", 1, 4,
     "def load(opts):\n    # fetch the url from the client options\n    return opts.fetch(\"url\") or self.fetch()\n\n",
     "def load(opts)"},
    {"pkg/client.py", 5, 8, "def pull(url):\n    # the client fetches the url\n    return api.fetch(url)\n\n",
     "def pull(url)"},
    {"pkg/client.py", 9, 10, "def take(url):\n    return fetch(url)  # the client's url\n", "def take(url)"},
};

static const struct span_row shadow_spans[] = {
    {"pkg/codec.py", 1, 4, "def loads(text):\n    # load the config values from text\n    return text\n\n",
     "def loads(text)"},
    {"pkg/config.py", 1, 5,
     "def from_env(prefix: str, *, loads=json.loads):\n    # load the config values from the environment\n"
     "    value = loads(prefix)\n    return value\n\n",
     "def from_env(prefix: str, *, loads=json.loads)"},
    {"pkg/config.py", 6, 10,
     "def from_file(path):\n    # load the config values from a file\n    loads = pick(path)\n"
     "    return loads(path)\n\n",
     "def from_file(path)"},
    {"pkg/codec.py", 6, 9,
     "def from_text(text):\n    # load the config values from text\n    return loads(text)\n\n",
     "def from_text(text)"},
};

static const struct relation_case relation_cases[] = {
    {"with a store class and two functions", 8, "pkg/store.py", 9, "pkg/handle.py",
     "(8, 'class', 'Store', 'Store', 1, 20, 'class Store'),"
     "(8, 'method', 'get', 'Store.get', 2, 5, 'def get(self, key)'),"
     "(8, 'method', 'put', 'Store.put', 7, 10, 'def put(self, key, value)'),"
     "(9, 'function', 'handle', 'handle', 1, 5, 'def handle(options)'),"
     "(9, 'function', 'fetch', 'fetch', 6, 9, 'def fetch(key)')",
     "How does the store get and put a key?", recv_spans, ARRAY_LEN(recv_spans),
     (const char *const[]){"`fetch` calls `Store.get` (`pkg/handle.py:8`)",
                           "`Store.put` calls `Store.get` (`pkg/store.py:9`)", NULL},
     (const char *const[]){"`handle` calls `Store.get`", NULL}},
    {"with a module function and three callers", 12, "pkg/api.py", 13, "pkg/client.py",
     "(12, 'function', 'fetch', 'fetch', 1, 4, 'def fetch(url)'),"
     "(13, 'function', 'load', 'load', 1, 4, 'def load(opts)'),"
     "(13, 'function', 'pull', 'pull', 5, 8, 'def pull(url)'),"
     "(13, 'function', 'take', 'take', 9, 10, 'def take(url)')",
     "How does the client fetch a url?", mod_spans, ARRAY_LEN(mod_spans),
     (const char *const[]){"`pull` calls `fetch` (`pkg/client.py:7`)", "`take` calls `fetch` (`pkg/client.py:10`)",
                           NULL},
     (const char *const[]){"`load` calls `fetch`", NULL}},
    {"with a module function and callers binding its name themselves", 14, "pkg/codec.py", 15, "pkg/config.py",
     "(14, 'function', 'loads', 'loads', 1, 4, 'def loads(text)'),"
     "(15, 'function', 'from_env', 'from_env', 1, 5, 'def from_env(prefix: str, *, loads=json.loads)'),"
     "(15, 'function', 'from_file', 'from_file', 6, 10, 'def from_file(path)'),"
     "(14, 'function', 'from_text', 'from_text', 6, 9, 'def from_text(text)')",
     "How are the config values loaded?", shadow_spans, ARRAY_LEN(shadow_spans),
     (const char *const[]){"`from_text` calls `loads` (`pkg/codec.py:8`)", NULL},
     (const char *const[]){"`from_env` calls `loads`", "`from_file` calls `loads`", NULL}},
};

/* Releases an answer, its citations and the pool it came from. */
static void answer_done(char *md, struct evidence *cites, struct evidence *pool)
{
    free(md);
    evidence_free(cites);
    evidence_free(pool);
}

/* One span of a two-span pool (first_of_two). */
struct pool_span {
    const char *path, *text, *label;
    int end;
    double score;
};

/* For each of the two questions: a pool of spans a (scored higher) and b
 * gives an answer whose first citation is in first[i], and both files are
 * cited. */
static void first_of_two(sqlite3 *db, const char *const questions[2], const char *const first[2],
                         const struct pool_span *a, const struct pool_span *b)
{
    char err[256];
    for (int i = 0; i < 2; i++) {
        struct qparse q;
        ok(qparse_question(questions[i], &q, err, sizeof err) == 0, "parses: %s", questions[i]);
        struct evidence pool = EVIDENCE_INIT, cites = EVIDENCE_INIT;
        evidence_add(&pool, a->path, 1, a->end, a->text, a->label, a->score);
        evidence_add(&pool, b->path, 1, b->end, b->text, b->label, b->score);
        char *md = answer_of(&q, &pool, db, &cites);
        is_str(cites.n ? cites.v[0].path : "", first[i], "%s: %s is cited first", questions[i], first[i]);
        ok(cites.n == 2, "%s: both files are cited (%zu)", questions[i], cites.n);
        answer_done(md, &cites, &pool);
        qparse_free(&q);
    }
}

/* The rows of check_leading_files: a changelog and a module of code; a
 * test overriding a method of the code, and that code. */
static void add_selection_rows(sqlite3 *db)
{
    ok(sqlite3_exec(db,
                    "INSERT INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) VALUES "
                    "(90, 'CHANGES.rst', 'rst', 0, 0, '', 12, X'', 0), "
                    "(91, 'jobs/retry.py', 'python', 0, 0, '', 12, X'', 0), "
                    "(92, 'tests/test_views.py', 'python', 0, 0, '', 12, X'', 0), "
                    "(93, 'web/app.py', 'python', 0, 0, '', 12, X'', 0), "
                    "(94, 'tests/test_dispatch.py', 'python', 0, 0, '', 12, X'', 0);"
                    "INSERT INTO chunk_spans(file_id, symbol_id, kind_s, start_line, end_line, hash_s) VALUES "
                    "(90, NULL, 3, 1, 12, '');"
                    "INSERT INTO symbols(file_id, kind_s, name, qualname_s, start_line, end_line, signature_s) VALUES "
                    "(91, 'function', 'run_with_retries', 'run_with_retries', 1, 12, "
                    "'def run_with_retries(job, max_retries=3)'), "
                    "(92, 'method', 'dispatch_request', 'Index.dispatch_request', 1, 3, "
                    "'def dispatch_request(self)'), "
                    "(93, 'method', 'dispatch_request', 'App.dispatch_request', 1, 6, "
                    "'def dispatch_request(self, ctx)'), "
                    "(94, 'function', 'test_request_dispatched_to_view', 'test_request_dispatched_to_view', 1, 4, "
                    "'def test_request_dispatched_to_view(app)');",
                    NULL, NULL, NULL) == SQLITE_OK,
       "with a changelog, a module of code, a test overriding a method of the code and a test of it");
}

/* Which file leads the answer, two questions each (first_of_two):
 *  - a file of prose (text chunks: a changelog, documentation) that says the
 *    question's words more than the code does takes none of the leading
 *    distinct-file citations; the code comes first, the prose after it. A
 *    question that names the changelog has it first.
 *  - a test's override of a method the code defines (a stand-in) scores
 *    above the code's own definition in the pool: the code's file is cited
 *    first, the test's after it. A question about the tests keeps the test's
 *    file first.
 *  - so does a test itself (test_..., in a test file) that says the
 *    question's words more than the code. */
static const struct leading_case {
    const char *questions[2], *first[2];
    struct pool_span a, b;
} leading_cases[] = {
    {{"How are failed jobs retried?", "What does CHANGES.rst say about retrying failed jobs?"},
     {"jobs/retry.py", "CHANGES.rst"},
     {"CHANGES.rst",
      "- Failed jobs are retried: a failed job is retried up to max_retries times.\n"
      "- Each retry of a failed job waits longer than the last retry.\n",
      NULL, 12, 1.0},
     {"jobs/retry.py",
      "def run_with_retries(job, max_retries=3):\n    attempt = 0\n    while True:\n        try:\n"
      "            return job()\n        except Exception:\n            attempt += 1\n",
      "def run_with_retries(job, max_retries=3)", 12, 0.5}},
    {{"How is a request dispatched to its view?", "How do the tests dispatch a request to their view?"},
     {"web/app.py", "tests/test_views.py"},
     {"tests/test_views.py",
      "def dispatch_request(self):\n    # dispatch the request to the view\n    return 'request dispatched'\n",
      "def dispatch_request(self)", 3, 1.0},
     {"web/app.py",
      "def dispatch_request(self, ctx):\n    req = ctx.request\n    rule = req.url_rule\n"
      "    view = self.view_functions[rule.endpoint]\n    args = req.view_args\n    return view(**args)\n",
      "def dispatch_request(self, ctx)", 6, 0.5}},
    {{"How is a request dispatched to its view?", "How do the tests dispatch a request to their view?"},
     {"web/app.py", "tests/test_dispatch.py"},
     {"tests/test_dispatch.py",
      "def test_request_dispatched_to_view(app):\n    # a request is dispatched to its view\n"
      "    view = app.dispatch_request(request)\n    assert view\n",
      "def test_request_dispatched_to_view(app)", 4, 1.0},
     {"web/app.py",
      "def dispatch_request(self, ctx):\n    req = ctx.request\n    rule = req.url_rule\n"
      "    view = self.view_functions[rule.endpoint]\n    args = req.view_args\n    return view(**args)\n",
      "def dispatch_request(self, ctx)", 6, 0.5}},
};

static void check_leading_files(sqlite3 *db)
{
    for (size_t k = 0; k < ARRAY_LEN(leading_cases); k++) {
        const struct leading_case *c = &leading_cases[k];
        first_of_two(db, c->questions, c->first, &c->a, &c->b);
    }
}

int main(void)
{
    struct qparse q;
    char err[256];
    ok(qparse_question("How does the session store save and load its data?", &q, err, sizeof err) == 0,
       "the question parses");

    /* the best file has six spans matching the whole question, three other
     * files four, two and two matching part of it */
    struct evidence pool = EVIDENCE_INIT, cites = EVIDENCE_INIT;
    add_spans(&pool, "pkg/store.py", 6, "the session store saves and loads the data");
    add_spans(&pool, "pkg/backend.py", 4, "the session store saves the data");
    add_spans(&pool, "pkg/cookie.py", 2, "the session data");
    add_spans(&pool, "pkg/signals.py", 2, "the session store");
    evidence_add(&pool, "pkg/unrelated.py", 1, 5, "def render(template):\n    return template\n", "def render(template)",
                 1.0);
    char *md = NULL;
    md = answer_of(&q, &pool, NULL, &cites);
    is_int(cites.n, ANSWER_MAX_CITES, "as many citations as the answer may hold");
    is_str(cites.n ? cites.v[0].path : "", "pkg/store.py", "the best span's file comes first");
    int distinct = cites.n >= 4 && strcmp(cites.v[0].path, cites.v[1].path) && strcmp(cites.v[1].path, cites.v[2].path) &&
                   strcmp(cites.v[0].path, cites.v[2].path) && strcmp(cites.v[2].path, cites.v[3].path) &&
                   strcmp(cites.v[0].path, cites.v[3].path) && strcmp(cites.v[1].path, cites.v[3].path);
    ok(distinct, "the first four citations come from four files");
    is_int(count_path(&cites, "pkg/store.py"), ANSWER_PER_TOP_FILE,
               "the best file gives more spans than the others may");
    ok(count_path(&cites, "pkg/backend.py") <= ANSWER_PER_FILE, "another file gives at most ANSWER_PER_FILE (%zu)",
       count_path(&cites, "pkg/backend.py"));
    is_int(count_path(&cites, "pkg/unrelated.py"), 0, "a span without the question's words is not cited");
    int in_pool = 1;
    for (size_t i = 0; i < cites.n; i++) in_pool &= evidence_covers(&pool, cites.v[i].path, cites.v[i].start_line,
                                                                   cites.v[i].end_line);
    ok(in_pool, "every citation is a span of the pool");
    ok(md && strstr(md, "pkg/store.py:1-10"), "the answer names the best span's location");
    free(md);
    evidence_free(&cites);

    /* few candidates: nothing is padded */
    struct evidence small = EVIDENCE_INIT;
    add_spans(&small, "pkg/store.py", 1, "the session store saves and loads the data");
    add_spans(&small, "pkg/backend.py", 1, "the session store saves the data");
    md = answer_of(&q, &small, NULL, &cites);
    is_int(cites.n, 2, "and cites each of its spans once");
    answer_done(md, &cites, &small);
    evidence_free(&pool);
    qparse_free(&q);

    /* relations: a call in a comment or a docstring is not a call; a call of
     * a name that two cited definitions share names neither */
    ok(qparse_question("How does the runner prepare and execute the job?", &q, err, sizeof err) == 0,
       "a second question parses");
    struct evidence rel = EVIDENCE_INIT;
    evidence_add(&rel, "pkg/runner.py", 1, 6,
                 "def run_job(self):\n    # the job was set up by prepare() before\n"
                 "    \"\"\"Runs the job; execute() is called elsewhere.\"\"\"\n    return self.job\n",
                 "def run_job(self)", 1.0);
    evidence_add(&rel, "pkg/runner.py", 10, 14, "def prepare(self):\n    # prepare the job\n    self.job = 1\n",
                 "def prepare(self)", 0.5);
    evidence_add(&rel, "pkg/exec.py", 1, 5, "def execute(self):\n    # execute the job\n    return self.job\n",
                 "def execute(self)", 0.5);
    evidence_add(&rel, "pkg/other.py", 1, 5, "def execute(self):\n    # execute the prepared job\n    pass\n",
                 "def execute(self)", 0.4);
    evidence_add(&rel, "pkg/main.py", 1, 5,
                 "def main(runner):\n    # run the job\n    runner.prepare()\n    runner.execute()\n",
                 "def main(runner)", 0.3);
    md = answer_of(&q, &rel, NULL, &cites);
    /* without an index, definitions are named by their labels */
    ok(md && !strstr(md, "`def run_job(self)` calls"), "no call is read out of a comment or a docstring");
    ok(md && strstr(md, "`def main(runner)` calls `def prepare(self)` (`pkg/main.py:3`)"), "a call in code is a relation");
    ok(md && !strstr(md, "calls `def execute(self)`"), "a call of a name two cited definitions share is not attributed");
    answer_done(md, &cites, &rel);
    /* a span of no definition (a window, labelled by its lines) is named by
     * where it is, not by "lines 1-5" as if that were a name */
    struct evidence win = EVIDENCE_INIT;
    evidence_add(&win, "pkg/runner.py", 10, 14, "def prepare(self):\n    # prepare the job\n    self.job = 1\n",
                 "def prepare(self)", 1.0);
    evidence_add(&win, "pkg/main.py", 1, 5, "import runner\n# run the job\nr = runner.Runner()\nr.prepare()\n",
                 "lines 1-5", 0.5);
    md = answer_of(&q, &win, NULL, &cites);
    ok(md && !strstr(md, "`lines 1-5`") && strstr(md, "`pkg/main.py:1-5` calls `def prepare(self)`"),
       "a window calling a cited definition is named by its place: %.200s", md ? md : "");
    answer_done(md, &cites, &win);
    qparse_free(&q);

    /* the bonus for a name the question writes is shared by its definitions */
    ok(qparse_question("Where does `clean()` validate every field of the submitted form data?", &q, err, sizeof err) == 0,
       "a question naming a common method parses");
    struct evidence lit = EVIDENCE_INIT;
    static const char *const clean_files[] = {"pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/d.py"};
    for (int i = 0; i < 4; i++)
        evidence_add(&lit, clean_files[i], 1, 3, "def clean(self):\n    return self.value\n", "def clean(self)", 1.0);
    evidence_add(&lit, "pkg/forms.py", 1, 6,
                 "def full_clean(self):\n    # check the values\n"
                 "    for field in self.fields:\n        field.clean()\n",
                 "def full_clean(self)", 1.0);
    md = answer_of(&q, &lit, NULL, &cites);
    is_str(cites.n ? cites.v[0].path : "", "pkg/forms.py",
               "the span about the question outranks four bare definitions of the name it writes");
    answer_done(md, &cites, &lit);
    struct evidence one = EVIDENCE_INIT;
    evidence_add(&one, "pkg/a.py", 1, 3, "def clean(self):\n    return self.value\n", "def clean(self)", 1.0);
    evidence_add(&one, "pkg/forms.py", 1, 6,
                 "def full_clean(self):\n    # check the values\n"
                 "    for field in self.fields:\n        field.clean()\n",
                 "def full_clean(self)", 1.0);
    md = answer_of(&q, &one, NULL, &cites);
    is_str(cites.n ? cites.v[0].path : "", "pkg/a.py", "a name defined once keeps its whole bonus");
    answer_done(md, &cites, &one);
    qparse_free(&q);

    /* a 300-line class seen whole: its 100-line method about the question is
     * what gets cited */
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "answer") != NULL, "a scratch directory");
    char *ipath = xasprintf("%s/index.sqlite", dir);
    sqlite3 *db = NULL;
    ok(store_open(ipath, 0, &db, NULL, err, sizeof err) == 0, "a scratch index opens");
    ok(sqlite3_exec(db,
                    /* the texts are not read here: an empty stored text stands for them */
                    "INSERT INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) "
                    "VALUES (1, 'pkg/big.py', 'python', 0, 0, '', 300, X'', 0);"
                    "INSERT INTO symbols(file_id, kind_s, name, qualname_s, start_line, end_line, signature_s) VALUES "
                    "(1, 'class', 'Big', 'Big', 1, 300, 'class Big'),"
                    "(1, 'method', 'other', 'Big.other', 10, 20, 'def other(self)'),"
                    "(1, 'method', 'work', 'Big.work', 120, 219, 'def work(self)');",
                    NULL, NULL, NULL) == SQLITE_OK,
       "with a class, a short method and a long one");
    struct buf big = BUF_INIT;
    for (int l = 1; l <= 300; l++) {
        if (l == 1) buf_adds(&big, "class Big:\n");
        else if (l == 10) buf_adds(&big, "    def other(self):\n");
        else if (l == 120) buf_adds(&big, "    def work(self):\n");
        else if (l > 120 && l <= 219 && l % 10 == 0) buf_adds(&big, "        # compress the payload before upload\n");
        else buf_adds(&big, "        pass\n");
    }
    ok(qparse_question("How is the payload compressed before the upload?", &q, err, sizeof err) == 0,
       "a question about the long method parses");
    struct evidence whole = EVIDENCE_INIT;
    evidence_add(&whole, "pkg/big.py", 1, 300, big.data, "class Big", 1.0);
    md = answer_of(&q, &whole, db, &cites);
    {
        int found = 0;
        for (size_t i = 0; i < cites.n; i++)
            found |= cites.v[i].start_line == 120 && cites.v[i].end_line == 219;
        ok(found, "the 100-line method inside the class is cited (%zu citations, first %d-%d)", cites.n,
           cites.n ? cites.v[0].start_line : 0, cites.n ? cites.v[0].end_line : 0);
    }
    is_str(cites.n ? cites.v[0].label : "", "Big.work", "first, by its qualified name");
    answer_done(md, &cites, &whole);
    buf_free(&big);
    qparse_free(&q);

    /* two cited dispatch methods: self.dispatch() in App reaches App's */
    ok(two_files(db, 2, "pkg/app.py", 3, "pkg/view.py",
                 "(2, 'class', 'App', 'App', 1, 30, 'class App'),"
                 "(2, 'method', 'handle', 'App.handle', 2, 6, 'def handle(self, request)'),"
                 "(2, 'method', 'dispatch', 'App.dispatch', 10, 14, 'def dispatch(self, request)'),"
                 "(3, 'class', 'View', 'View', 1, 10, 'class View'),"
                 "(3, 'method', 'dispatch', 'View.dispatch', 2, 6, 'def dispatch(self, request)')") == SQLITE_OK,
       "with two classes defining dispatch");
    ok(qparse_question("How does the app handle a request and dispatch it?", &q, err, sizeof err) == 0,
       "a question about dispatching parses");
    struct evidence disp = EVIDENCE_INIT;
    evidence_add(&disp, "pkg/app.py", 2, 6,
                 "    def handle(self, request):\n        # handle the request\n        return self.dispatch(request)\n"
                 "\n\n",
                 "def handle(self, request)", 1.0);
    evidence_add(&disp, "pkg/app.py", 10, 14,
                 "    def dispatch(self, request):\n        # dispatch the request to the app's handler\n"
                 "        return request\n\n\n",
                 "def dispatch(self, request)", 1.0);
    evidence_add(&disp, "pkg/view.py", 2, 6,
                 "    def dispatch(self, request):\n        # dispatch the request to a view\n        return request\n\n\n",
                 "def dispatch(self, request)", 1.0);
    md = answer_of(&q, &disp, db, &cites);
    is_int(cites.n, 3, "all three methods are cited");
    ok(md && strstr(md, "`App.handle` calls `App.dispatch` (`pkg/app.py:4`)"),
       "self.dispatch() in App is a call of App.dispatch");
    ok(md && !strstr(md, "calls `View.dispatch`"), "and not of View.dispatch");
    answer_done(md, &cites, &disp);
    qparse_free(&q);

    /* super().__init__() is a base class's, and __init__ is every class's:
     * neither is attributed to another cited class's __init__ */
    ok(two_files(db, 4, "pkg/dec.py", 5, "pkg/setup.py",
                 "(4, 'class', 'Decoder', 'Decoder', 1, 10, 'class Decoder(Base)'),"
                 "(4, 'method', '__init__', 'Decoder.__init__', 2, 5, 'def __init__(self, hook)'),"
                 "(5, 'class', 'Setup', 'Setup', 1, 10, 'class Setup'),"
                 "(5, 'method', '__init__', 'Setup.__init__', 2, 5, 'def __init__(self, app)')") == SQLITE_OK,
       "with two classes defining __init__");
    ok(qparse_question("How is the decoder hook set up?", &q, err, sizeof err) == 0, "a question about the hook parses");
    static const struct span_row sup_spans[] = {
        {"pkg/dec.py", 1, 6,
         "class Decoder(Base):\n    def __init__(self, hook):\n        # the decoder hook\n"
         "        super().__init__(hook=hook)\n        Base.__init__(self)\n\n",
         "class Decoder(Base)"},
        {"pkg/setup.py", 2, 5, "    def __init__(self, app):\n        # set up the decoder hook of the app\n"
         "        self.app = app\n\n", "def __init__(self, app)"},
    };
    struct evidence sup = EVIDENCE_INIT;
    add_rows(&sup, sup_spans, sizeof sup_spans / sizeof *sup_spans);
    md = answer_of(&q, &sup, db, &cites);
    is_int(cites.n, 2, "the class and the other __init__ are cited");
    ok(md && strstr(md, "`Setup.__init__`") && !strstr(md, "calls `Setup.__init__`"),
       "super().__init__() and Base.__init__() in Decoder are not calls of the one cited __init__, Setup's");
    answer_done(md, &cites, &sup);
    qparse_free(&q);

    /* An outline (elided span) of a class and a verbatim method inside it are
     * different views of the file: the outline, cited first, blocks neither
     * the method as an overlap nor a slot of its file. */
    ok(qparse_question("How does the Cache class expire its entries?", &q, err, sizeof err) == 0,
       "the outline question parses");
    struct evidence outl = EVIDENCE_INIT;
    evidence_add(&outl, "pkg/cache.py", 1, 300,
                 "class Cache:\n    \"\"\"Keeps entries and expires them.\"\"\"\n"
                 "    def expire(self):\n        ... (lines 4-40 elided; ViewCode pkg/cache.py:4-40 to read them)\n",
                 "class Cache", 1.0)->elided = 1;
    evidence_add(&outl, "pkg/cache.py", 3, 40,
                 "    def expire(self):\n        # expire the cache entries\n        return self.entries\n",
                 "def expire(self)", 0.5);
    md = answer_of(&q, &outl, NULL, &cites);
    is_int(cites.n, 2, "the outline and the method inside it are both cited");
    ok(cites.n == 2 && cites.v[0].elided != cites.v[1].elided, "one outline, one verbatim span");
    answer_done(md, &cites, &outl);
    qparse_free(&q);
    /* "Where is the Loader class defined?": the class's definition, seen by
     * its 150-line head and by its outline, comes first, over spans that
     * say Loader more often; its two views are one citation, and its own
     * class line is not a call of it */
    ok(two_files(db, 6, "pkg/loader.py", 7, "pkg/use.py",
                 "(6, 'class', 'Loader', 'Loader', 1, 300, 'class Loader(Base)'),"
                 "(6, 'method', 'load', 'Loader.load', 200, 210, 'def load(self)'),"
                 "(7, 'function', 'make_loader', 'make_loader', 1, 8, 'def make_loader()')") == SQLITE_OK,
       "with a long class and a function that makes one");
    ok(qparse_question_names("Where is the Loader class defined?", names_loader, NULL, &q, err, sizeof err) == 0,
       "the named-class question parses");
    struct buf head = BUF_INIT;
    buf_adds(&head, "class Loader(Base):\n    \"\"\"Loads things.\"\"\"\n");
    for (int l = 3; l <= 150; l++) buf_adds(&head, "    x = 1\n");
    struct evidence named = EVIDENCE_INIT;
    evidence_add(&named, "pkg/use.py", 1, 8,
                 "def make_loader():\n    # the Loader class: a Loader made like a Loader\n"
                 "    loader = Loader()\n    return loader\n",
                 "def make_loader()", 1.0);
    evidence_add(&named, "pkg/loader.py", 200, 210,
                 "    def load(self):\n        # the Loader class loads with the Loader\n        return self\n",
                 "def load(self)", 1.0);
    evidence_add(&named, "pkg/loader.py", 1, 300,
                 "class Loader(Base):\n    \"\"\"Loads things.\"\"\"\n"
                 "    def load(self):\n        ... (lines 200-210 elided; ViewCode pkg/loader.py:200-210 to read them)\n",
                 "class Loader(Base)", 0.5)->elided = 1;
    evidence_add(&named, "pkg/loader.py", 1, 150, head.data, "class Loader(Base)", 0.5);
    md = answer_of(&q, &named, db, &cites);
    ok(cites.n && !strcmp(cites.v[0].path, "pkg/loader.py") && cites.v[0].start_line == 1,
       "the class's definition is cited first (first %s:%d-%d)", cites.n ? cites.v[0].path : "",
       cites.n ? cites.v[0].start_line : 0, cites.n ? cites.v[0].end_line : 0);
    {
        int starts = 0;
        for (size_t i = 0; i < cites.n; i++) starts += !strcmp(cites.v[i].path, "pkg/loader.py") && cites.v[i].start_line == 1;
        is_int(starts, 1, "its head and its outline are cited once between them");
    }
    ok(md && strstr(md, "**In short:** `Loader` is defined in `pkg/loader.py` at line 1 [1]"),
       "the head says where the class is defined");
    ok(md && !strstr(md, "it calls `Loader`") && !strstr(md, "`Loader` calls `Loader`") &&
           strstr(md, "`Loader` inherits from `Base`") && strstr(md, "`make_loader` calls `Loader`"),
       "'class Loader(Base)' is not a call of Loader, the call in make_loader is");
    answer_done(md, &cites, &named);
    buf_free(&head);
    qparse_free(&q);

    /* who calls whom: a method is reached through its class's name or
     * through self in its own class (options.get() in a function calls no
     * cited Store.get); a module's function by its name or through its
     * module (api.fetch() and fetch() are calls of it, opts.fetch() and
     * self.fetch() are not) */
    for (size_t k = 0; k < ARRAY_LEN(relation_cases); k++) {
        const struct relation_case *rc = &relation_cases[k];
        ok(two_files(db, rc->fa, rc->pa, rc->fb, rc->pb, rc->symbols) == SQLITE_OK, "%s", rc->what);
        check_relations(db, rc->question, rc->rows, rc->nrows, rc->says, rc->nots);
    }

    /* a metaclass or another keyword in a class statement is no base class */
    ok(two_files(db, 10, "pkg/model.py", 11, "pkg/typed.py",
                 "(10, 'class', 'Model', 'Model', 1, 5, 'class Model(metaclass=ModelBase)'),"
                 "(11, 'class', 'Row', 'Row', 1, 5, 'class Row(Base, Generic[K, V], metaclass=Meta, total=False)')") ==
           SQLITE_OK,
       "with a class of a metaclass only and one of bases and keywords");
    ok(qparse_question("What do the model and the row keep?", &q, err, sizeof err) == 0, "the model question parses");
    struct evidence meta = EVIDENCE_INIT;
    evidence_add(&meta, "pkg/model.py", 1, 5, "class Model(metaclass=ModelBase):\n    # the model keeps fields\n", NULL, 1.0);
    evidence_add(&meta, "pkg/typed.py", 1, 5, "class Row(Base, Generic[K, V], metaclass=Meta, total=False):\n"
                 "    # the row keeps values\n", NULL, 1.0);
    md = answer_of(&q, &meta, db, &cites);
    ok(md && !strstr(md, "metaclass=ModelBase`") && !strstr(md, "`Model` inherits"), "Model inherits from nothing said");
    ok(md && strstr(md, "inherits from `Base, Generic[K, V]`") && !strstr(md, "total=False`"),
       "Row inherits from its two bases, its keywords left out");
    answer_done(md, &cites, &meta);
    qparse_free(&q);

    /* a ranked pool (a fusion) whose first six spans are one class each of
     * six dialect files defines again: the leading citations name it once,
     * and the grammar file ranked seventh is among the first five files */
    ok(sqlite3_exec(db,
                    "INSERT INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) "
                    "WITH RECURSIVE k(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM k WHERE v < 5) SELECT 20 + v, "
                    "'dialects/d' || v || '.py', 'python', 0, 0, '', 30, X'', 0 FROM k;"
                    "INSERT INTO symbols(file_id, kind_s, name, qualname_s, start_line, end_line, signature_s) "
                    "WITH RECURSIVE k(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM k WHERE v < 5) SELECT "
                    "20 + v, 'class', 'SelectSegment', 'SelectSegment', 1, 5, 'class SelectSegment' FROM k;"
                    "INSERT INTO files(id, path, lang, size, mtime_ns, hash, nlines, ztext, tlen) VALUES "
                    "(30, 'grammar/base.py', 'python', 0, 0, '', 30, X'', 0);"
                    "INSERT INTO symbols(file_id, kind_s, name, qualname_s, start_line, end_line, signature_s) VALUES "
                    "(30, 'method', 'copy', 'BaseGrammar.copy', 1, 5, 'def copy(self, insert)')",
                    NULL, NULL, NULL) == SQLITE_OK,
       "with six dialects defining one class and a grammar file");
    ok(qparse_question("How does the select segment insert a clause into its grammar?", &q, err, sizeof err) == 0,
       "the dialect question parses");
    struct evidence fused = EVIDENCE_INIT;
    for (int k = 0; k < 6; k++) {
        char path[32];
        snprintf(path, sizeof path, "dialects/d%d.py", k);
        evidence_add(&fused, path, 1, 5, "class SelectSegment:\n    # the select clause of the grammar\n", NULL,
                     1.0 / (1 + k));
    }
    evidence_add(&fused, "grammar/base.py", 1, 5, "def copy(self, insert):\n    # insert into a grammar\n", NULL,
                 1.0 / 7);
    struct answer_opts ro = {0};
    ro.ranked = 1;
    ro.distinct_files = 5;
    ro.distinct_ratio = 1e-9;
    md = NULL;
    ok(answer_build(&q, &fused, db, &ro, &md, &cites, err, sizeof err) == 0, "the fused answer is built %s", err);
    is_str(cites.n ? cites.v[0].path : "", "dialects/d0.py", "the best-ranked span is still cited first");
    {
        size_t at = cites.n;
        for (size_t i = 0; i < cites.n && at == cites.n; i++)
            if (!strcmp(cites.v[i].path, "grammar/base.py")) at = i;
        ok(at < 5, "the grammar file is among the first five citations (at %zu of %zu)", at + 1, cites.n);
    }
    answer_done(md, &cites, &fused);

    /* deep_rest: once five files are cited, the rest come from them (the
     * rest of the best file's code) before a sixth and seventh file */
    const char *const deep_paths[] = {"deep/a.py", "deep/b.py", "deep/c.py", "deep/d.py", "deep/e.py",
                                      "deep/f.py", "deep/g.py", "deep/a.py"};
    for (int k = 0; k < 8; k++)
        evidence_add(&fused, deep_paths[k], k == 7 ? 20 : 1, k == 7 ? 30 : 5,
                     "def insert(self, clause):\n    # insert the clause into the grammar\n", NULL, 1.0 / (1 + k));
    for (int deep = 0; deep < 2; deep++) {
        ro.deep_rest = deep;
        md = NULL;
        err[0] = 0;
        ok(answer_build(&q, &fused, db, &ro, &md, &cites, err, sizeof err) == 0, "the deep answer is built %s", err);
        ok(cites.n >= 6 && !strcmp(cites.v[5].path, deep ? "deep/a.py" : "deep/f.py") &&
               cites.v[5].start_line == (deep ? 20 : 1),
           "deep_rest %d: the sixth citation is %s (%s:%d)", deep, deep ? "the best file's other span" : "a sixth file",
           cites.n >= 6 ? cites.v[5].path : "-", cites.n >= 6 ? cites.v[5].start_line : 0);
        for (size_t i = 0; i < 5 && i < cites.n; i++)
            ok(!strcmp(cites.v[i].path, deep_paths[i]), "deep_rest %d: citation %zu is still %s", deep, i + 1,
               deep_paths[i]);
        free(md);
        evidence_free(&cites);
    }
    evidence_free(&fused);
    qparse_free(&q);

    /* "What does make_loader do?" names the definition asked about; a why
     * question's head says where the code bears on it, not that it "does it" */
    ok(qparse_question_names("What does make_loader do?", names_loader, NULL, &q, err, sizeof err) == 0,
       "the named what-question parses");
    struct evidence what = EVIDENCE_INIT;
    evidence_add(&what, "pkg/use.py", 1, 8, "def make_loader():\n    \"\"\"Make a loader.\"\"\"\n    return Loader()\n",
                 "def make_loader()", 1.0);
    md = answer_of(&q, &what, db, &cites);
    ok(md && strstr(md, "**In short:** `make_loader` is defined in `pkg/use.py` at line 1 [1], documented as "
                        "\"Make a loader\""),
       "the what-question's head names the definition and its documentation");
    answer_done(md, &cites, &what);
    qparse_free(&q);
    ok(qparse_question("Why does the loader make a new loader each time?", &q, err, sizeof err) == 0,
       "a why-question parses");
    struct evidence why = EVIDENCE_INIT;
    evidence_add(&why, "pkg/use.py", 1, 8, "def make_loader():\n    \"\"\"Make a new loader each time.\"\"\"\n"
                 "    return Loader()\n", "def make_loader()", 1.0);
    md = answer_of(&q, &why, db, &cites);
    ok(md && strstr(md, "**In short:** the code that bears on it is `make_loader` in `pkg/use.py` [1]") &&
           !strstr(md, "does it"),
       "the why-question's head says where the code bears on it");
    answer_done(md, &cites, &why);
    qparse_free(&q);

    /* "What does use.py do?": the file the question names is cited first,
     * over a span of another file that says the question's words more, and
     * the head says what it defines among the citations */
    ok(qparse_question("What does use.py do with the loader?", &q, err, sizeof err) == 0,
       "the file question parses");
    struct evidence fileq = EVIDENCE_INIT;
    evidence_add(&fileq, "pkg/loader.py", 200, 210,
                 "    def load(self):\n        # use the loader: what use.py does with the loader, its use\n"
                 "        return self\n", "def load(self)", 1.0);
    evidence_add(&fileq, "pkg/use.py", 1, 8, "def make_loader():\n    return Loader()\n", "def make_loader()", 0.2);
    md = answer_of(&q, &fileq, db, &cites);
    is_str(cites.n ? cites.v[0].path : "", "pkg/use.py", "the named file is cited first");
    ok(md && strstr(md, "**In short:** `pkg/use.py` defines `make_loader` [1], among the code cited here"),
       "the head says what it defines among the citations");
    answer_done(md, &cites, &fileq);
    qparse_free(&q);

    /* a variable's heading is its name alone: its first line, which the
     * heading of a function shows as the signature, is quoted */
    ok(two_files(db, 40, "pkg/globals.py", 41, "pkg/ctx.py",
                 "(40, 'variable', 'g', 'g', 2, 4, NULL),"
                 "(41, 'function', 'get_g', 'get_g', 1, 3, 'def get_g(app)')") == SQLITE_OK,
       "with a variable g and a function get_g");
    ok(qparse_question("What is g for the app?", &q, err, sizeof err) == 0, "the variable question parses");
    struct evidence var = EVIDENCE_INIT;
    evidence_add(&var, "pkg/globals.py", 2, 4, "g: AppGlobals = LocalProxy(\n    _cv_app, \"g\"\n)\n", NULL, 1.0);
    evidence_add(&var, "pkg/ctx.py", 1, 3, "def get_g(app):\n    return app.g\n\n", NULL, 0.5);
    md = answer_of(&q, &var, db, &cites);
    ok(md && strstr(md, "2: g: AppGlobals = LocalProxy("), "the variable's first line is quoted");
    ok(md && strstr(md, "`get_g`: `def get_g(app)`") && !strstr(md, "1: def get_g(app):"),
       "the function's is shown once, as its signature");
    answer_done(md, &cites, &var);
    qparse_free(&q);
    add_selection_rows(db);
    check_leading_files(db);
    sqlite3_close(db);
    unlink(ipath);
    free(ipath);
    rmdir(dir);
    return done_testing();
}
