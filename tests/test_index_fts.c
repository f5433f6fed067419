/*
 * test_index_fts: the full-text table keeps only its index; its content is
 * computed from the chunks (chunks_fts_src). The terms the indexer inserted
 * and the terms computed from what the index holds must be the same, or a
 * later delete would remove the wrong terms and leave stale ones behind.
 * After a fresh build and after updates that change, delete, add and empty
 * files, the terms the FTS index holds (fts5vocab 'instance') must equal
 * those of a table indexed afresh from chunks_fts_src, row by row, and every
 * chunk must have exactly one FTS row.
 */
#include "tap.h"
#include "harness.h"
#include "index.h"
#include "store.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *root, *ipath;

static void put(const char *rel, const char *text)
{
    char *p = xasprintf("%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    *slash = 0;
    mkdir(p, 0700);
    *slash = '/';
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    free(p);
}

/* Updates the index and compares its FTS index with one built from
 * chunks_fts_src. stale: the word 'stale' is in the tree now. */
static void check(const char *what, int stale)
{
    char err[1024];
    struct index_options opt = {.threads = 2, .max_file_size = 1 << 20};
    struct index_stats S;
    is_int(index_update(root, ipath, &opt, &S, err, sizeof err), 0, "%s: the update succeeds %s", what, err);
    sqlite3 *db;
    if (store_open(ipath, 0, &db, NULL, err, sizeof err) != 0) {
        ok(0, "%s: open the index: %s", what, err);
        return;
    }
    is_int(store_exec(db,
                      "CREATE VIRTUAL TABLE temp.fresh USING fts5(name, doc, body, path, tokenize = 'unicode61');"
                      "INSERT INTO temp.fresh(rowid, name, doc, body, path) SELECT id, name, doc, body, path FROM chunks_fts_src;"
                      "CREATE VIRTUAL TABLE temp.v_kept USING fts5vocab(main, 'chunks_fts', 'instance');"
                      "CREATE VIRTUAL TABLE temp.v_fresh USING fts5vocab(temp, 'fresh', 'instance');",
                      err, sizeof err),
           0, "%s: a table indexed afresh from the chunks %s", what, err);
    long long chunks = count(db, "SELECT count(*) FROM chunk_spans");
    ok(chunks > 0, "%s: the index has chunks (%lld)", what, chunks);
    is_int(count(db, "SELECT count(*) FROM chunks_fts_docsize"), chunks, "%s: one FTS row per chunk", what);
    is_int(count(db, "SELECT count(*) FROM chunks_fts_docsize WHERE id NOT IN (SELECT id FROM chunk_spans)"), 0,
           "%s: no FTS row of a chunk that is gone", what);
    long long n = count(db, "SELECT count(*) FROM temp.v_kept");
    ok(n > 0, "%s: the FTS index holds terms (%lld)", what, n);
    is_int(count(db, "SELECT count(*) FROM temp.v_fresh"), n, "%s: as many as the chunks give", what);
    is_int(count(db, "SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.v_kept EXCEPT "
                     "SELECT term, doc, col, offset FROM temp.v_fresh)"), 0,
           "%s: no term the chunks do not give (stale terms of a change)", what);
    is_int(count(db, "SELECT count(*) FROM (SELECT term, doc, col, offset FROM temp.v_fresh EXCEPT "
                     "SELECT term, doc, col, offset FROM temp.v_kept)"), 0,
           "%s: every term the chunks give", what);
    long long hits = count(db, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'body:stale'");
    ok(stale ? hits > 0 : hits == 0, "%s: a word is found %s (%lld chunks)", what,
       stale ? "while the tree has it" : "no more once the tree lost it", hits);
    sqlite3_close(db);
}

int main(void)
{
    char tmpl[256];
    char *dir = temp_dir(tmpl, sizeof tmpl, "fts");
    if (!dir) return 1;
    root = xasprintf("%s/repo", dir);
    ipath = xasprintf("%s/idx.sqlite", dir);
    mkdir(root, 0700);
    put("pkg/__init__.py", "from .core import Engine\n");
    put("pkg/core.py",
        "\"\"\"The engine and its parts.\"\"\"\nimport os\n\n\nclass Engine(Base):\n"
        "    \"\"\"Runs the work.\"\"\"\n\n    limit = 3\n\n    def start(self, when=None):\n"
        "        \"\"\"Start the engine.\"\"\"\n        return self.spin(when)\n\n"
        "    def spin(self, n):\n        return os.getpid() + n\n\n\ndef helper(x):\n    return Engine().start(x)\n");
    put("pkg/util.py", "def quote(s):\n    \"\"\"Quote s for the shell.\"\"\"\n    return \"'\" + s + \"'\"\n\nVALUE = 1\n");
    put("README.md", "# Engine\n\nHow to start it.\n\n## Limits\n\nThree at most.\n");
    /* minified: two definitions on one line make one chunk named for both,
     * a name the index cannot derive from one symbol, so it is stored */
    put("web/min.js", "function alpha(){return 1}function beta(){return 2}\n");
    put("web/app.js", "function render(node) {\n  return node;\n}\n");
    check("fresh build", 0);
    {
        char err[256];
        sqlite3 *db;
        if (store_open(ipath, 1, &db, NULL, err, sizeof err) == 0) {
            is_int(count(db, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'name:beta AND name:alpha'"), 1,
                   "the merged chunk of a minified line is found by either name");
            long long stored = count(db, "SELECT count(*) FROM chunk_spans WHERE name IS NOT NULL");
            long long all = count(db, "SELECT count(*) FROM chunk_spans");
            ok(stored > 0 && stored * 2 < all, "names are stored only where they cannot be derived (%lld of %lld)",
               stored, all);
            is_int(count(db, "SELECT count(*) FROM chunk_spans c JOIN symbols s ON s.id = c.symbol_id "
                             "WHERE c.name IS NOT NULL AND s.name = 'render'"), 0,
                   "a function's chunk name is derived, not stored");
            sqlite3_close(db);
        } else {
            ok(0, "open the index read-only: %s", err);
        }
    }

    put("pkg/core.py",
        "\"\"\"The engine, changed.\"\"\"\n\n\nclass Engine:\n    def start(self):\n"
        "        \"\"\"Begin.\"\"\"\n        return 1\n");
    put("pkg/util.py", "# nothing left here\n");
    put("README.md", "# Engine\n\nNo limits now.\n");
    check("after edits", 0);

    put("pkg/util.py", "def stale_helper():\n    \"\"\"A stale docstring.\"\"\"\n    return 'stale'\n");
    check("a file edited twice", 1);
    put("pkg/util.py", "def quote(s):\n    return s\n");
    char *gone = xasprintf("%s/README.md", root);
    unlink(gone);
    free(gone);
    put("pkg/extra.py", "class Extra(object):\n    def run(self):\n        return 2\n");
    check("after a delete and an add", 0);

    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    free(cmd);
    free(root);
    free(ipath);
    return done_testing();
}
