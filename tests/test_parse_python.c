/*
 * test_parse_python: the Python extractor against inline sources with every
 * field spelled out: definitions (kinds, qualnames, spans, signatures,
 * decorators, docstrings, bases), variables, every import form, calls and
 * their callers; then damaged and hostile input (syntax errors, deep nesting,
 * NUL and random bytes, an empty file), module names and the grammar check.
 * All of it twice: with one parser whose trees are freed as usual, then with
 * a parser per file in a tree-sitter arena (ts_arena.h), as the indexer's
 * threads parse.
 */
#include "parse.h"
#include "tap.h"
#include "ts_arena.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const struct lang parse_python;

static TSParser *parser;
static struct ts_arena *arena;   /* set: each extraction in it */

static int run(const char *src, size_t len, struct parse_result *r)
{
    if (!arena) return parse_python.extract(parser, src, len, r);
    ts_arena_begin(arena);
    TSParser *p = ts_parser_new();
    int rc = parse_python.extract(p, src, len, r);
    ts_parser_delete(p);
    ts_arena_end(arena);
    return rc;
}

static int extract(const char *src, struct parse_result *r)
{
    return run(src, strlen(src), r);
}

/* NULL-aware string comparison: want NULL means the field must be NULL. */
static int same(const char *got, const char *want, const char *what)
{
    if (!want && !got) return 1;
    if (want && got && strcmp(got, want) == 0) return 1;
    diag("%s: got '%s', want '%s'", what, got ? got : "(null)", want ? want : "(null)");
    return 0;
}

struct want_sym {
    enum parse_kind kind;
    const char *qualname, *name;
    int parent, start, body, end, is_async;
    const char *signature, *decorators, *docstring, *bases;
};

static void check_syms(const struct parse_result *r, const struct want_sym *w, size_t n, const char *label)
{
    is_int(r->nsyms, n, "%s: %zu symbols", label, n);
    for (size_t i = 0; i < n && i < r->nsyms; i++) {
        const struct parse_symbol *s = &r->syms[i];
        int good = s->kind == w[i].kind && s->parent == w[i].parent && s->start_line == w[i].start &&
                   s->body_line == w[i].body && s->end_line == w[i].end && s->is_async == w[i].is_async;
        if (!good)
            diag("kind %d/%d parent %d/%d lines %d,%d,%d/%d,%d,%d async %d/%d", s->kind, w[i].kind, s->parent,
                 w[i].parent, s->start_line, s->body_line, s->end_line, w[i].start, w[i].body, w[i].end,
                 s->is_async, w[i].is_async);
        good &= same(s->qualname, w[i].qualname, "qualname");
        good &= same(s->name, w[i].name, "name");
        good &= same(s->signature, w[i].signature, "signature");
        good &= same(s->decorators, w[i].decorators, "decorators");
        good &= same(s->docstring, w[i].docstring, "docstring");
        good &= same(s->bases, w[i].bases, "bases");
        ok(good, "%s: symbol %zu is %s", label, i, w[i].qualname);
    }
}

#define C PARSE_CLASS
#define F PARSE_FUNCTION
#define M PARSE_METHOD
#define V PARSE_VARIABLE

static const char DEFS[] =
    "\"\"\"Module doc.\"\"\"\n"                                   /* 1 */
    "import os\n"                                                 /* 2 */
    "\n"
    "\n"
    "class Base:\n"                                               /* 5 */
    "    pass\n"
    "\n"
    "\n"
    "@register\n"                                                 /* 9 */
    "@app.route(\"/x\",\n"
    "           methods=[\"GET\"])\n"
    "class Flask(Base, mixins.Scaffold, metaclass=Meta, **kw):\n" /* 12 */
    "    \"\"\"The app.\n"
    "\n"
    "    Longer text\n"
    "      indented.\n"
    "    \"\"\"\n"
    "    debug = False\n"                                         /* 18 */
    "    x: int = 3\n"
    "    a, (b, *c) = 1, (2, 3)\n"                                /* 20 */
    "    one = two = 5\n"
    "    obj.attr = 6\n"
    "\n"
    "    def run(self, host=None,\n"                              /* 24 */
    "            port: int = 5000) -> None:  # trailing\n"
    "        r'''Run it.\\n'''\n"
    "        def helper(x):\n"                                    /* 27 */
    "            return os.path.join(x, host)\n"
    "        return helper(host)\n"
    "\n"
    "    @property\n"                                             /* 31 */
    "    def name(self):\n"
    "        \"Name.\"\n"
    "        return self._name\n"
    "\n"
    "    async def fetch(self, *, url):\n"                        /* 36 */
    "        await self.client.get(url)\n"
    "\n"
    "    class Config:\n"                                         /* 39 */
    "        level = 1\n"
    "\n"
    "        def method(self):\n"                                 /* 42 */
    "            \"\"\"Tab\tand \\\"quotes\\\" \\\\ end\"\"\"\n"
    "\n"
    "\n"
    "async def main():\n"                                        /* 46 */
    "    f = lambda y: y + 1\n"
    "    local = 3\n"
    "    return f(2)\n"
    "\n"
    "\n"
    "def outer():\n"                                              /* 52 */
    "    def inner():\n"
    "        class Local:\n"
    "            pass\n"
    "        return Local()\n"
    "    return inner\n"
    "\n"
    "\n"
    "if DEBUG:\n"                                                 /* 60 */
    "    def debug_only(): pass\n"
    "else:\n"
    "    LEVEL = 2\n";

static void test_definitions(void)
{
    static const struct want_sym w[] = {
        {C, "Base", "Base", -1, 5, 5, 6, 0, "class Base", NULL, NULL, NULL},
        {C, "Flask", "Flask", -1, 9, 12, 43, 0, "class Flask(Base, mixins.Scaffold, metaclass=Meta, **kw)",
         "register\napp.route(\"/x\", methods=[\"GET\"])", "The app.\n\nLonger text\n  indented.",
         "Base, mixins.Scaffold"},
        {V, "Flask.debug", "debug", 1, 18, 18, 18, 0, NULL, NULL, NULL, NULL},
        {V, "Flask.x", "x", 1, 19, 19, 19, 0, NULL, NULL, NULL, NULL},
        {V, "Flask.a", "a", 1, 20, 20, 20, 0, NULL, NULL, NULL, NULL},
        {V, "Flask.b", "b", 1, 20, 20, 20, 0, NULL, NULL, NULL, NULL},
        {V, "Flask.c", "c", 1, 20, 20, 20, 0, NULL, NULL, NULL, NULL},
        {V, "Flask.one", "one", 1, 21, 21, 21, 0, NULL, NULL, NULL, NULL},
        {V, "Flask.two", "two", 1, 21, 21, 21, 0, NULL, NULL, NULL, NULL},
        {M, "Flask.run", "run", 1, 24, 24, 29, 0, "def run(self, host=None, port: int = 5000) -> None", NULL,
         "Run it.\\n", NULL},
        {F, "Flask.run.helper", "helper", 9, 27, 27, 28, 0, "def helper(x)", NULL, NULL, NULL},
        {M, "Flask.name", "name", 1, 31, 32, 34, 0, "def name(self)", "property", "Name.", NULL},
        {M, "Flask.fetch", "fetch", 1, 36, 36, 37, 1, "async def fetch(self, *, url)", NULL, NULL, NULL},
        {C, "Flask.Config", "Config", 1, 39, 39, 43, 0, "class Config", NULL, NULL, NULL},
        {V, "Flask.Config.level", "level", 13, 40, 40, 40, 0, NULL, NULL, NULL, NULL},
        {M, "Flask.Config.method", "method", 13, 42, 42, 43, 0, "def method(self)", NULL,
         "Tab     and \"quotes\" \\ end", NULL},
        {F, "main", "main", -1, 46, 46, 49, 1, "async def main()", NULL, NULL, NULL},
        {F, "outer", "outer", -1, 52, 52, 57, 0, "def outer()", NULL, NULL, NULL},
        {F, "outer.inner", "inner", 17, 53, 53, 56, 0, "def inner()", NULL, NULL, NULL},
        {C, "outer.inner.Local", "Local", 18, 54, 54, 55, 0, "class Local", NULL, NULL, NULL},
        {F, "debug_only", "debug_only", -1, 61, 61, 61, 0, "def debug_only()", NULL, NULL, NULL},
        {V, "LEVEL", "LEVEL", -1, 63, 63, 63, 0, NULL, NULL, NULL, NULL},
    };
    struct parse_result r;
    is_int(extract(DEFS, &r), 0, "definitions: extract succeeds");
    is_int(r.parse_errors, 0, "definitions: no parse errors");
    check_syms(&r, w, ARRAY_LEN(w), "definitions");
    /* lambdas and function locals ('f', 'local' in main) are not symbols */
    int lambda_or_local = 0;
    for (size_t i = 0; i < r.nsyms; i++)
        if (!strcmp(r.syms[i].name, "f") || !strcmp(r.syms[i].name, "local") || !strcmp(r.syms[i].name, "y"))
            lambda_or_local = 1;
    ok(!lambda_or_local, "definitions: no symbols for lambdas or function locals");
    parse_result_free(&r);
}

static const char IMPORTS[] =
    "import os\n"
    "import os.path\n"
    "import a.b as c, d\n"
    "from x.y import z as w, v\n"
    "from . import m\n"
    "from .. import (p,\n"
    "    q as r)\n"
    "from ..pkg import *\n"
    "from .sib.mod import thing\n"
    "from __future__ import annotations\n"
    "try:\n"
    "    import ujson as json\n"
    "except ImportError:\n"
    "    import json\n"
    "if TYPE_CHECKING:\n"
    "    from typing import Any\n"
    "def f():\n"
    "    import inside\n"
    "from ... import up3\n";

static void test_imports(void)
{
    static const struct {
        int line;
        const char *module, *name, *alias;
        int level;
    } w[] = {
        {1, "os", NULL, NULL, 0},          {2, "os.path", NULL, NULL, 0},    {3, "a.b", NULL, "c", 0},
        {3, "d", NULL, NULL, 0},           {4, "x.y", "z", "w", 0},          {4, "x.y", "v", NULL, 0},
        {5, "", "m", NULL, 1},             {6, "", "p", NULL, 2},            {7, "", "q", "r", 2},
        {8, "pkg", "*", NULL, 2},          {9, "sib.mod", "thing", NULL, 1}, {10, "__future__", "annotations", NULL, 0},
        {12, "ujson", NULL, "json", 0},    {14, "json", NULL, NULL, 0},      {16, "typing", "Any", NULL, 0},
        {18, "inside", NULL, NULL, 0},     {19, "", "up3", NULL, 3},
    };
    struct parse_result r;
    is_int(extract(IMPORTS, &r), 0, "imports: extract succeeds");
    is_int(r.nimports, ARRAY_LEN(w), "imports: one row per imported name");
    for (size_t i = 0; i < ARRAY_LEN(w) && i < r.nimports; i++) {
        const struct parse_import *m = &r.imports[i];
        int good = m->line == w[i].line && m->level == w[i].level;
        if (!good) diag("line %d/%d level %d/%d", m->line, w[i].line, m->level, w[i].level);
        good &= same(m->module, w[i].module, "module");
        good &= same(m->name, w[i].name, "name");
        good &= same(m->alias, w[i].alias, "alias");
        ok(good, "imports: %zu is %s%s%s", i, w[i].module, w[i].name ? " / " : "", w[i].name ? w[i].name : "");
    }
    is_int(r.nsyms, 1, "imports: the function around the nested import is the only symbol");
    parse_result_free(&r);
}

static const char CALLS[] =
    "setup()\n"
    "x = compute(1)(2)\n"
    "class K(make_base()):\n"
    "    attr = default()\n"
    "    @deco(arg())\n"
    "    def m(self, v=dflt()):\n"
    "        self.helper(\n"
    "            os.path.join(\"a\", \"b\"))\n"
    "        return (lambda: inner())()\n"
    "print(obj.method().chain(\n"
    "    1).final())\n";

static void test_calls(void)
{
    /* callers: -1 module, 1 class K, 3 method K.m; defaults, decorators and
     * bases run in the enclosing scope; a lambda's calls belong to its host */
    static const struct {
        int line, caller;
        const char *callee;
    } w[] = {
        {1, -1, "setup"},          {2, -1, "compute(1)"},          {2, -1, "compute"},
        {3, -1, "make_base"},      {4, 1, "default"},              {5, 1, "deco"},
        {5, 1, "arg"},             {6, 1, "dflt"},                 {7, 3, "self.helper"},
        {8, 3, "os.path.join"},    {9, 3, "(lambda: inner())"},    {9, 3, "inner"},
        {10, -1, "print"},         {11, -1, "obj.method().chain(1).final"},
        {10, -1, "obj.method().chain"}, {10, -1, "obj.method"},
    };
    struct parse_result r;
    is_int(extract(CALLS, &r), 0, "calls: extract succeeds");
    is_int(r.nsyms, 4, "calls: x, K, K.attr, K.m");
    if (r.nsyms == 4) {
        is_str(r.syms[1].qualname, "K", "calls: symbol 1 is K");
        is_str(r.syms[3].qualname, "K.m", "calls: symbol 3 is K.m");
        is_str(r.syms[1].bases, "make_base()", "calls: a call as a base is kept as written");
    }
    is_int(r.ncalls, ARRAY_LEN(w), "calls: every call node");
    for (size_t i = 0; i < ARRAY_LEN(w) && i < r.ncalls; i++) {
        const struct parse_call *c = &r.calls[i];
        int good = c->line == w[i].line && c->caller == w[i].caller;
        if (!good) diag("line %d/%d caller %d/%d", c->line, w[i].line, c->caller, w[i].caller);
        good &= same(c->callee, w[i].callee, "callee");
        ok(good, "calls: %zu is %s", i, w[i].callee);
    }
    parse_result_free(&r);

    /* a long callee expression is cut at 200 bytes */
    struct buf b = BUF_INIT;
    buf_adds(&b, "(lambda: ");
    for (int i = 0; i < 100; i++) buf_adds(&b, "a +\n ");
    buf_adds(&b, "1)()\n");
    is_int(extract(b.data, &r), 0, "long callee: extract succeeds");
    ok(r.ncalls == 1 && strlen(r.calls[0].callee) == 200 && !strchr(r.calls[0].callee, '\n') &&
           !strncmp(r.calls[0].callee, "(lambda: a + a + a", 18),
       "long callee: one line, cut at 200 bytes");
    parse_result_free(&r);
    buf_free(&b);
}

static void test_text_forms(void)
{
    struct parse_result r;
    /* CRLF line ends, a comment inside the parameters, a concatenated docstring,
     * a bytes 'docstring' (not one), positional-only and star parameters */
    const char *src =
        "class A(\r\n"
        "    B,  # first\r\n"
        "    C[int],\r\n"
        "):\r\n"
        "    'one ' \"two\"\r\n"
        "    def f(self, a,  # the a\r\n"
        "          /, *args, key='x  #y', **kw):\r\n"
        "        \"\"\"\r\n"
        "        Indented first.\r\n"
        "          more\r\n"
        "        \"\"\"\r\n"
        "    def g(self):\r\n"
        "        b'bytes'\r\n"
        "    def h(self): f'{x}'\r\n";
    is_int(extract(src, &r), 0, "text forms: extract succeeds");
    is_int(r.nsyms, 4, "text forms: A, A.f, A.g, A.h");
    if (r.nsyms == 4) {
        is_str(r.syms[0].signature, "class A(B, C[int],)", "text forms: class header without the comment");
        is_str(r.syms[0].bases, "B, C[int]", "text forms: bases across lines");
        is_str(r.syms[0].docstring, "one two", "text forms: concatenated docstring");
        is_int(r.syms[0].end_line, 14, "text forms: class ends on the last line");
        is_str(r.syms[1].signature, "def f(self, a, /, *args, key='x  #y', **kw)",
               "text forms: comment dropped, string default kept");
        is_str(r.syms[1].docstring, "Indented first.\n  more", "text forms: CRLF docstring cleaned");
        ok(r.syms[2].docstring == NULL, "text forms: bytes literal is not a docstring");
        ok(r.syms[3].docstring == NULL, "text forms: f-string is not a docstring");
        is_int(r.syms[3].start_line, 14, "text forms: one-line def");
        is_int(r.syms[3].end_line, 14, "text forms: one-line def ends on its line");
    }
    parse_result_free(&r);
}

static void test_syntax_error(void)
{
    /* tree-sitter folds everything after 'def bad(self:' into an ERROR node;
     * the definitions in it come back from their lines, nested by indentation */
    const char *src =
        "import os\n"
        "\n"
        "class A(Base):\n"
        "    def good(self):\n"
        "        return os.path.join(1, 2)\n"
        "\n"
        "    def bad(self:\n"
        "        x = [1, 2\n"
        "        return x\n"
        "\n"
        "    def method(self):\n"
        "        self.good()\n"
        "\n"
        "def after():\n"
        "    pass\n";
    static const struct want_sym w[] = {
        {C, "A", "A", -1, 3, 3, 15, 0, "class A(Base)", NULL, NULL, "Base"},
        {M, "A.good", "good", 0, 4, 4, 5, 0, "def good(self)", NULL, NULL, NULL},
        {M, "A.bad", "bad", 0, 7, 7, 9, 0, "def bad(self:", NULL, NULL, NULL},
        {M, "A.method", "method", 0, 11, 11, 12, 0, "def method(self)", NULL, NULL, NULL},
        {F, "after", "after", -1, 14, 14, 15, 0, "def after()", NULL, NULL, NULL},
    };
    struct parse_result r;
    is_int(extract(src, &r), 0, "syntax error: extract still succeeds");
    ok(r.parse_errors > 0, "syntax error: parse_errors counted (%d)", r.parse_errors);
    check_syms(&r, w, ARRAY_LEN(w), "syntax error");
    is_int(r.nimports, 1, "syntax error: the import is found");
    ok(r.ncalls >= 2 && !strcmp(r.calls[0].callee, "os.path.join") && r.calls[0].caller == 1 &&
           !strcmp(r.calls[r.ncalls - 1].callee, "self.good") && r.calls[r.ncalls - 1].caller == 3,
       "syntax error: calls inside the damage belong to the recovered method");
    parse_result_free(&r);

    /* an unclosed bracket in a class body: indentation puts the methods that
     * follow back in the class; a 'def' line inside a string stays text */
    const char *src2 =
        "class B:\n"
        "    x = (1,\n"
        "    def one(self):\n"
        "        pass\n"
        "    def two(self):\n"
        "        '''text\n"
        "def not_a_def():\n"
        "        '''\n"
        "        return 2\n";
    is_int(extract(src2, &r), 0, "broken class: extract succeeds");
    int one = -1, two = -1, fake = 0;
    for (size_t i = 0; i < r.nsyms; i++) {
        if (!strcmp(r.syms[i].name, "one")) one = (int)i;
        if (!strcmp(r.syms[i].name, "two")) two = (int)i;
        if (!strcmp(r.syms[i].name, "not_a_def")) fake = 1;
    }
    ok(one >= 0 && !strcmp(r.syms[one].qualname, "B.one") && r.syms[one].kind == PARSE_METHOD,
       "broken class: B.one is a method of B");
    ok(two >= 0 && !strcmp(r.syms[two].qualname, "B.two") && r.syms[two].end_line == 9,
       "broken class: B.two runs to its last line");
    ok(!fake, "broken class: 'def' inside a string is no definition");
    for (size_t i = 0; i < r.nsyms; i++)
        if (r.syms[i].parent >= (int)i) ok(0, "broken class: parent %d after child %zu", r.syms[i].parent, i);
    parse_result_free(&r);

    is_int(extract("def f(:\n    return )\nclass C:\n  def m(self): pass\n", &r), 0,
           "broken header: extract succeeds");
    ok(r.parse_errors > 0, "broken header: errors counted");
    ok(r.nsyms == 3 && !strcmp(r.syms[0].qualname, "f") && !strcmp(r.syms[2].qualname, "C.m") &&
           r.syms[2].kind == PARSE_METHOD,
       "broken header: f, C and C.m recovered");
    parse_result_free(&r);
}

static void test_hostile(void)
{
    struct parse_result r;
    struct buf b = BUF_INIT;
    enum { DEEP = 10000 };

    /* deep nesting: the walk keeps its stack on the heap */
    buf_adds(&b, "x = ");
    for (int i = 0; i < DEEP; i++) buf_addc(&b, '(');
    buf_addc(&b, '1');
    for (int i = 0; i < DEEP; i++) buf_addc(&b, ')');
    buf_addc(&b, '\n');
    is_int(run(b.data, b.len, &r), 0, "10000 nested parentheses: extract succeeds");
    ok(r.nsyms == 1 && !strcmp(r.syms[0].name, "x") && r.parse_errors == 0, "10000 nested parentheses: x found");
    parse_result_free(&r);

    buf_reset(&b);
    buf_adds(&b, "x = ");
    for (int i = 0; i < DEEP; i++) buf_addc(&b, '[');
    buf_addc(&b, '\n');
    is_int(run(b.data, b.len, &r), 0, "10000 unclosed brackets: extract succeeds");
    ok(r.parse_errors > 0, "10000 unclosed brackets: errors counted");
    parse_result_free(&r);

    buf_reset(&b);
    for (int i = 0; i < DEEP; i++) buf_adds(&b, "f(");
    for (int i = 0; i < DEEP; i++) buf_addc(&b, ')');
    buf_addc(&b, '\n');
    is_int(run(b.data, b.len, &r), 0, "10000 nested calls: extract succeeds");
    is_int(r.ncalls, DEEP, "10000 nested calls: each one found");
    ok(r.ncalls == DEEP && !strcmp(r.calls[DEEP - 1].callee, "f") && r.calls[DEEP - 1].caller == -1,
       "10000 nested calls: innermost callee is f");
    parse_result_free(&r);

    buf_reset(&b);
    buf_adds(&b, "y = a");
    for (int i = 0; i < DEEP; i++) buf_adds(&b, "()");
    buf_addc(&b, '\n');
    is_int(run(b.data, b.len, &r), 0, "10000 chained calls: extract succeeds");
    ok(r.ncalls == DEEP && strlen(r.calls[0].callee) == 200 && !strcmp(r.calls[DEEP - 1].callee, "a"),
       "10000 chained calls: outer callee capped, inner is a");
    parse_result_free(&r);

    /* 200 nested functions, the deepest the grammar's indent scanner tracks exactly */
    enum { NEST = 200 };
    buf_reset(&b);
    for (int i = 0; i < NEST; i++) buf_printf(&b, "%*sdef f%d():\n", i, "", i);
    buf_printf(&b, "%*spass\n", NEST, "");
    is_int(run(b.data, b.len, &r), 0, "200 nested defs: extract succeeds");
    is_int(r.nsyms, NEST, "200 nested defs: all found");
    if (r.nsyms == NEST) {
        is_int(r.syms[NEST - 1].parent, NEST - 2, "200 nested defs: parent chain");
        ok(str_starts(r.syms[NEST - 1].qualname, "f0.f1.f2.") && str_ends(r.syms[NEST - 1].qualname, ".f198.f199"),
           "200 nested defs: dotted qualname");
        is_int(r.syms[NEST - 1].end_line, NEST + 1, "200 nested defs: end line");
    }
    parse_result_free(&r);

    is_int(run("", 0, &r), 0, "empty file: extract succeeds");
    ok(r.nsyms == 0 && r.nimports == 0 && r.ncalls == 0 && r.parse_errors == 0, "empty file: nothing found");
    parse_result_free(&r);

    char nul[4096 + 32];
    memset(nul, 0, 4096);
    memcpy(nul + 4096, "def f(): pass\n", 14);
    is_int(run(nul, 4096 + 14, &r), 0, "NUL bytes: extract succeeds");
    ok(r.parse_errors > 0, "NUL bytes: counted as errors");
    parse_result_free(&r);

    /* random bytes, seeded; also invalid UTF-8 */
    uint64_t s = 0x9E3779B97F4A7C15ull;
    char *rnd = xmalloc(8192);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 8192; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            rnd[i] = (char)(s >> 56);
        }
        int rc = run(rnd, 8192, &r);
        ok(rc == 0 && r.parse_errors > 0, "random bytes %d: extract succeeds with errors", round);
        for (size_t i = 0; i < r.nsyms; i++)
            if (!r.syms[i].name || !r.syms[i].qualname) ok(0, "random bytes: symbol without a name");
        parse_result_free(&r);
    }
    free(rnd);
    buf_free(&b);
    parse_result_free(NULL);
}

static void test_module_names(void)
{
    static const struct {
        const char *path, *module;
    } w[] = {
        {"pkg/sub/mod.py", "pkg.sub.mod"}, {"pkg/__init__.py", "pkg"}, {"mod.pyi", "mod"},
        {"__init__.py", ""},               {"a/b/__init__.pyi", "a.b"}, {"setup.py", "setup"},
        {"pkg/__main__.py", "pkg.__main__"},
    };
    for (size_t i = 0; i < ARRAY_LEN(w); i++) {
        char *m = parse_python.module_name(w[i].path);
        is_str(m, w[i].module, "module_name(%s)", w[i].path);
        free(m);
    }
}

static void test_registry(void)
{
    char err[256] = "";
    is_int(parse_check_grammars(err, sizeof err), 0, "grammar ABI check passes");
    if (err[0]) diag("%s", err);
    ok(parse_lang_for_path("a/b.py") == &parse_python, "lang for .py");
    ok(parse_lang_for_path("stubs/b.pyi") == &parse_python, "lang for .pyi");
    ok(parse_lang_for_path("b.pyc") == NULL, "no lang for .pyc");
    ok(parse_lang_for_path("dir.py/README") == NULL, "no lang for a file in a .py directory");
    ok(parse_lang_for_path(".py") == NULL, "no lang for a hidden '.py'");
    int found = 0;
    for (size_t i = 0; parse_languages[i]; i++) found |= parse_languages[i] == &parse_python;
    ok(found, "python is in parse_languages");
    is_str(parse_python.name, "python", "language name");
}

int main(void)
{
    ts_arena_install();
    parser = ts_parser_new();
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            arena = ts_arena_new(0);
            if (!ok(arena != NULL, "a tree-sitter arena")) break;
            diag("again, each file in an arena");
        }
        test_definitions();
        test_imports();
        test_calls();
        test_text_forms();
        test_syntax_error();
        test_hostile();
        test_module_names();
        test_registry();
    }
    ok(ts_arena_peak(arena) > 0, "the arena held the trees");
    ts_arena_free(arena);
    ts_parser_delete(parser);
    return done_testing();
}
