/* Tests for the grounding metrics on hand-made cases: path matching on the
 * last two components, paths found in prose, names found in backticks,
 * identifier matching on word boundaries with dotted names, file-hit@1/@5
 * with repeated citations, and identifier recall over answer plus evidence. */
#include "tap.h"
#include "metrics.h"

#include <stdlib.h>

static void path_cases(void)
{
    ok(metrics_path_match("src/flask/app.py", "flask/app.py"), "last two components equal");
    ok(metrics_path_match("src/flask/app.py", "pkg/src/flask/app.py"), "longer paths: last two compared");
    ok(metrics_path_match("src/flask/app.py", "app.py"), "a bare name matches on its one component");
    ok(metrics_path_match("./src/flask/app.py", "/src/flask/app.py"), "./ and / prefixes dropped");
    ok(!metrics_path_match("src/flask/app.py", "src/other/app.py"), "same name in another directory differs");
    ok(!metrics_path_match("flask/sansio/app.py", "flask/app.py"), "second-to-last component differs");
    ok(!metrics_path_match("src/flask/app.py", "src/flask/app.pyc"), "no partial component match");
    ok(!metrics_path_match("src/flask/xapp.py", "app.py"), "no substring match");
    ok(!metrics_path_match("", "app.py"), "empty path matches nothing");
    ok(metrics_path_match("a/b/c/d.py", "x/c/d.py"), "only two components compared");
}

static void text_paths(void)
{
    struct strv v = STRV_INIT;
    metrics_paths_in_text("In `src/flask/json/provider.py` (lines 144-148), see tests/test_json.py. "
                          "The `flask.json` module and setup.cfg; e.g. not a file; "
                          "https://example.com/x.py is a link; config/app.json too. Again src/flask/json/provider.py.",
                          &v);
    is_int(v.n, 4, "four distinct paths found");
    if (v.n == 4) {
        is_str(v.v[0], "src/flask/json/provider.py", "path in backticks");
        is_str(v.v[1], "tests/test_json.py", "path before a full stop");
        is_str(v.v[2], "setup.cfg", "bare file name");
        is_str(v.v[3], "config/app.json", "json with a directory is a file");
    }
    strv_free(&v);
    metrics_paths_in_text(NULL, &v);
    is_int(v.n, 0, "NULL text: nothing");
}

static void text_idents(void)
{
    struct strv v = STRV_INIT;
    metrics_identifiers_in_text("The `ensure_ascii` attribute on `DefaultJSONProvider` is passed to `json.dumps()` via "
                                "`kwargs.setdefault(\"a\", b)`; `app.py` is a file, `x = 1` is code, "
                                "`f(a) + g(b)` is an expression, ``__init__`` is rst, `ensure_ascii` again.\n"
                                "```python\nnot_an_ident = 1\n```\nA lone ` backtick.",
                                &v);
    is_int(v.n, 5, "five names found");
    const char *want[] = {"ensure_ascii", "DefaultJSONProvider", "json.dumps", "kwargs.setdefault", "__init__"};
    for (size_t i = 0; i < 5 && i < v.n; i++) is_str(v.v[i], want[i], "name %zu", i);
    strv_free(&v);
}

static void ident_match(void)
{
    const char *t = "calls self._got_registered_once and json.dumps(x); FooBar2 here; snake_case_name.";
    ok(metrics_identifier_found("_got_registered_once", t), "underscore name on word boundaries");
    ok(metrics_identifier_found("json.dumps", t), "dotted name found whole");
    ok(metrics_identifier_found("Blueprint._got_registered_once", t), "dotted name found by its last component");
    ok(!metrics_identifier_found("dump", t), "no match inside a longer word");
    ok(!metrics_identifier_found("foobar2", t), "case-sensitive");
    ok(!metrics_identifier_found("case", t), "underscore joins words");
    ok(metrics_identifier_found("snake_case_name", t), "name before a full stop");
    ok(!metrics_identifier_found("json.loads", t), "dotted name with another last component");
    ok(!metrics_identifier_found("registered", t), "part of an underscore name is no word");
    ok(!metrics_identifier_found("", t), "empty name never found");
}

static void per_answer(void)
{
    const char *files[] = {"src/flask/sansio/blueprints.py", "blueprints.py", "./src/flask/app.py"};
    const char *idents[] = {"Blueprint", "self.deferred_functions", "record_once", "Blueprint"};
    struct metrics_gold g;
    metrics_gold_init(&g, files, 3, idents, 4, "ignored when lists are given: `other`");
    is_int(g.files.n, 3, "gold files kept");
    is_int(g.idents.n, 3, "duplicate gold identifier counted once");
    ok(!g.files_from_text && !g.idents_from_text, "lists given: not from text");

    const char *cited1[] = {"src/flask/app.py", "src/flask/app.py", "x/a.py", "x/b.py", "x/c.py", "x/d.py"};
    struct metrics_result r;
    metrics_compute(&g, cited1, 6, "The Blueprint class", "def record_once(self): ...", &r);
    is_int(r.hit1, 1, "first citation is gold: hit@1");
    is_int(r.hit5, 1, "hit@5");
    is_int(r.idents_found, 2, "two identifiers found (answer + evidence)");
    is_int(r.idents_total, 3, "three identifiers");
    ok(r.ident_recall > 0.6666 && r.ident_recall < 0.6667, "recall 2/3");

    /* Repeats count once: the gold file is the 5th distinct path (hit@5) though the 7th citation. */
    const char *cited2[] = {"a/one.py", "a/one.py", "a/two.py", "a/three.py", "a/two.py", "a/four.py",
                            "flask/sansio/blueprints.py"};
    metrics_compute(&g, cited2, 7, NULL, NULL, &r);
    is_int(r.hit1, 0, "miss@1");
    is_int(r.hit5, 1, "5th distinct cited file is gold: hit@5");
    is_int(r.hit5c, 0, "but the 7th citation: a miss over the first five citations");
    is_int(metrics_file_hit_cites(&g, cited2 + 2, 5, 5), 1, "the 5th citation is gold: a hit over citations");
    is_int(r.idents_found, 0, "no text: nothing found");
    const char *cited3[] = {"a/1.py", "a/2.py", "a/3.py", "a/4.py", "a/5.py", "sansio/blueprints.py"};
    is_int(metrics_file_hit(&g, cited3, 6, 5), 0, "6th distinct file is beyond @5");
    is_int(metrics_file_hit(&g, cited3, 0, 5), 0, "no citations: miss");
    metrics_gold_free(&g);

    /* No lists: both from the reference text. */
    metrics_gold_init(&g, NULL, 0, NULL, 0, "See `Flask.run` in src/flask/app.py.");
    ok(g.files_from_text && g.idents_from_text, "from text");
    is_int(g.files.n, 1, "one file from text");
    is_int(g.idents.n, 1, "one identifier from text");
    const char *cited4[] = {"flask/app.py"};
    metrics_compute(&g, cited4, 1, "app.run() starts it", NULL, &r);
    is_int(r.hit1, 1, "text path matched");
    is_int(r.idents_found, 1, "Flask.run found by last component");
    metrics_gold_free(&g);

    /* A name the answer says the repository lacks is not found. */
    metrics_gold_init(&g, NULL, 0, NULL, 0, "See `Flask.run` and `make_app` in src/flask/app.py.");
    metrics_compute(&g, cited4, 1,
                    "**In short:** the closest code is `App.start`. " METRICS_ABSENT_LEAD
                    "`make_app`, so the citations match the question's other words. It calls `run` [2].",
                    NULL, &r);
    is_int(r.idents_found, 1, "a name said missing is not found; one named after that sentence is (run)");
    metrics_compute(&g, cited4, 1, METRICS_ABSENT_LEAD "`make_app` and `run`", NULL, &r);
    is_int(r.idents_found, 0, "a sentence of missing names to the end of the text hides them all");
    metrics_gold_free(&g);

    /* Nothing to compare: undefined, not zero. */
    metrics_gold_init(&g, NULL, 0, NULL, 0, "No paths or names here.");
    metrics_compute(&g, cited4, 1, "text", NULL, &r);
    is_int(r.hit1, -1, "no gold file: hit@1 undefined");
    is_int(r.hit5, -1, "no gold file: hit@5 undefined");
    ok(r.ident_recall < 0 && r.idents_total == 0, "no gold identifier: recall undefined");
    metrics_gold_free(&g);
    metrics_gold_free(NULL);
}

int main(void)
{
    path_cases();
    text_paths();
    text_idents();
    ident_match();
    per_answer();
    return done_testing();
}
