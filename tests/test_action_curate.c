/* Unit tests for curate: identifier extraction, merging, ranking, boilerplate
 * collapsing, focused quotes and the token budget. */
#include "tap.h"
#include "curate.h"
#include "util.h"

#include <stdlib.h>

/* Lines a..b of a synthetic file whose line k reads "line k". */
static char *lines(int a, int b)
{
    struct buf t = BUF_INIT;
    for (int k = a; k <= b; k++) buf_printf(&t, "%sline %d", k > a ? "\n" : "", k);
    return buf_take(&t);
}

int main(void)
{
    char **ids;
    size_t n = curate_identifiers("Why does `App.run` call parse_args_spec() and HTTPServer, not getResponse or v2? Why",
                                  &ids);
    is_int(n, 5, "five identifiers");
    if (n == 5) {
        is_str(ids[0], "App.run", "backquoted dotted name");
        is_str(ids[1], "parse_args_spec", "snake_case");
        is_str(ids[2], "HTTPServer", "capitals inside");
        is_str(ids[3], "getResponse", "camelCase");
        is_str(ids[4], "v2", "letters with digits");
    }
    for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
    n = curate_identifiers("how does the router work", &ids);
    is_int(n, 0, "plain words are not identifiers");
    free(ids);

    /* merging overlapping and adjacent spans of one file */
    struct evidence raw = EVIDENCE_INIT, out = EVIDENCE_INIT;
    char *t1 = lines(1, 5), *t2 = lines(4, 8), *t3 = lines(9, 10), *t4 = lines(20, 21);
    evidence_add(&raw, "m.py", 1, 5, t1, "a", 0);
    evidence_add(&raw, "m.py", 4, 8, t2, "b", 0);
    evidence_add(&raw, "m.py", 9, 10, t3, NULL, 0);
    evidence_add(&raw, "m.py", 20, 21, t4, NULL, 0);
    n = curate("what is line", &raw, 0, &out);
    is_int(n, 2, "three spans merge into one, the distant one stays");
    char *want = lines(1, 10);
    ok(out.n >= 1 && out.v[0].start_line == 1 && out.v[0].end_line == 10, "merged 1-10");
    is_str(out.n ? out.v[0].text : "", want, "merged text has every line once");
    is_str(out.n ? out.v[0].label : "", "a; b", "labels joined");
    free(want);
    evidence_free(&raw);
    evidence_free(&out);
    free(t1); free(t2); free(t3); free(t4);

    /* a skeleton covered by a verbatim span is dropped */
    evidence_add(&raw, "c.py", 10, 20, "class C:\n    ... (lines 12-20 elided; ViewCode c.py:12-20 to read them)", "class C", 0)
        ->elided = 1;
    char *t5 = lines(5, 25);
    evidence_add(&raw, "c.py", 5, 25, t5, NULL, 0);
    n = curate("line", &raw, 0, &out);
    ok(n == 1 && out.v[0].start_line == 5 && !out.v[0].elided, "the verbatim span wins");
    evidence_free(&raw);
    evidence_free(&out);
    free(t5);

    /* ranking: literal identifier first, term overlap next, unrelated discarded */
    evidence_add(&raw, "z.py", 1, 1, "x = compute(1)", NULL, 0);
    evidence_add(&raw, "b.py", 1, 1, "def parse_args(spec): pass", NULL, 0);
    evidence_add(&raw, "a.py", 1, 2, "def handler():\n    return parse_args_spec(handler)", NULL, 0);
    n = curate("Where is parse_args_spec called to build arguments?", &raw, 0, &out);
    is_int(n, 2, "the unrelated span is discarded");
    is_str(out.n ? out.v[0].path : "", "a.py", "the literal identifier ranks first");
    is_str(out.n > 1 ? out.v[1].path : "", "b.py", "shared terms next");
    ok(out.n > 1 && out.v[0].score > out.v[1].score, "scores are the relevance, descending");
    struct evidence out2 = EVIDENCE_INIT;
    curate("Where is parse_args_spec called to build arguments?", &raw, 0, &out2);
    ok(out2.n == out.n && strcmp(out2.v[0].path, out.v[0].path) == 0 && out2.v[0].score == out.v[0].score,
       "deterministic");
    evidence_free(&out2);
    evidence_free(&raw);
    evidence_free(&out);

    /* boilerplate: imports, a long table and a long string constant */
    struct buf b = BUF_INIT;
    buf_adds(&b, "import os\nimport sys\nfrom a import (\n    b,\n    c,\n)\n\nCODES = {\n");
    for (int i = 0; i < 20; i++) buf_printf(&b, "    %d: 'code %d',\n", i, i);
    buf_adds(&b, "}\nHELP = \"\"\"\n");
    for (int i = 0; i < 15; i++) buf_printf(&b, "help text %d\n", i);
    buf_adds(&b, "\"\"\"\n\ndef lookup(code):\n    return CODES[code]");
    evidence_add(&raw, "codes.py", 1, 49, buf_str(&b), NULL, 0);
    n = curate("how does lookup find a code", &raw, 0, &out);
    is_int(n, 1, "one span");
    is_str(out.n ? out.v[0].text : "",
           "... (lines 1-6 elided: import block of 6 lines; ViewCode codes.py:1-6 to read them)\n"
           "\n"
           "CODES = {\n"
           "    ... (lines 9-28 elided: long literal of 20 lines; ViewCode codes.py:9-28 to read them)\n"
           "}\n"
           "HELP = \"\"\"\n"
           "... (lines 31-45 elided: long string of 15 lines; ViewCode codes.py:31-45 to read them)\n"
           "\"\"\"\n"
           "\n"
           "def lookup(code):\n"
           "    return CODES[code]", "imports, table and string collapsed");
    ok(out.n && out.v[0].elided, "marked elided");
    evidence_free(&out);
    /* an identifier of the question inside the block keeps it */
    n = curate("what is in `sys` and `CODES`", &raw, 0, &out);
    ok(out.n && strstr(out.v[0].text, "import sys\n") && strstr(out.v[0].text, "    7: 'code 7',\n"),
       "blocks holding question identifiers stay verbatim");
    evidence_free(&out);
    evidence_free(&raw);
    buf_free(&b);

    /* the budget: what fits whole, then a focused quote with exact lines */
    for (int i = 1; i <= 200; i++) buf_printf(&b, "%s    value_%d = compute(%d)", i > 1 ? "\n" : "", i, i);
    evidence_add(&raw, "big.py", 101, 300, buf_str(&b), "def big()", 0);
    evidence_add(&raw, "small.py", 1, 1, "value_150 = 1", NULL, 0);
    n = curate("where is value_150 set?", &raw, 300, &out);
    is_int(n, 2, "the small span whole and a quote of the big one");
    is_str(out.n ? out.v[0].path : "", "big.py", "the big span ranks first");
    ok(out.n && out.v[0].start_line <= 250 && out.v[0].end_line >= 250 && out.v[0].end_line - out.v[0].start_line < 40,
       "a window around line 250 (value_150): %d-%d", out.n ? out.v[0].start_line : 0, out.n ? out.v[0].end_line : 0);
    is_str(out.n ? out.v[0].label : "", "def big() (excerpt)", "labelled as an excerpt");
    ok(out.n && strstr(out.v[0].text, "    value_150 = compute(150)") != NULL, "holding the line");
    char exp[64];
    snprintf(exp, sizeof exp, "    value_%d = compute(%d)", out.n ? out.v[0].start_line - 100 : 0,
             out.n ? out.v[0].start_line - 100 : 0);
    ok(out.n && str_starts(out.v[0].text, exp), "its first line is line %d of the file", out.n ? out.v[0].start_line : 0);
    size_t total = 0;
    for (size_t i = 0; i < out.n; i++) total += strlen(out.v[i].text);
    ok(total <= 1200, "within 300 tokens of text (%zu bytes)", total);
    evidence_free(&out);
    evidence_free(&raw);
    buf_free(&b);

    /* a whole file over the budget whose import block is collapsed: the
     * quote comes from the verbatim text, never nothing */
    buf_adds(&b, "import os\nimport sys\nimport re\nimport json\n\n");
    for (int i = 1; i <= 200; i++) buf_printf(&b, "def helper_%d():\n    return render_template_%d()\n", i, i);
    evidence_add(&raw, "templating.py", 1, 405, buf_str(&b), NULL, 0);
    n = curate("how is render_template_120 reached?", &raw, 300, &out);
    is_int(n, 1, "a whole file over the budget, imports collapsed: one span kept");
    ok(out.n && !out.v[0].elided && strstr(out.v[0].text, "render_template_120()") && out.v[0].start_line > 1,
       "a verbatim quote around the relevant line (%d-%d)", out.n ? out.v[0].start_line : 0,
       out.n ? out.v[0].end_line : 0);
    evidence_free(&out);
    evidence_free(&raw);
    buf_free(&b);

    /* an outline too big for the budget, alone: its head is kept, range whole */
    for (int i = 1; i <= 300; i++) buf_printf(&b, "%s    def method_%d(self): ...", i > 1 ? "\n" : "", i);
    evidence_add(&raw, "big.py", 10, 4000, buf_str(&b), "class Big", 0)->elided = 1;
    n = curate("what does class Big do?", &raw, 300, &out);
    is_int(n, 1, "an outline over the budget, nothing else: one span kept");
    ok(out.n && out.v[0].elided && out.v[0].start_line == 10 && out.v[0].end_line == 4000 &&
           strstr(out.v[0].text, "more lines of this outline not shown") && strlen(out.v[0].text) <= 1200,
       "its head, the outline's range, a line saying what was left out");
    evidence_free(&out);
    evidence_free(&raw);
    buf_free(&b);

    evidence_free(&raw);
    is_int(curate("anything", &raw, 100, &out), 0, "no spans in, none out");
    return done_testing();
}
