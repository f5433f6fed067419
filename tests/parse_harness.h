/*
 * parse_harness: the checks shared by the language extractor tests
 * (test_parse_java, _js, _ts, _go). Each symbol, import and call is turned
 * into one line of text and compared exactly with the expected list, so a
 * failure shows the whole item; DRQA_DUMP=1 prints what the extractor
 * produced. Header-only: include it after parse.h, tap.h and util.h.
 */
#ifndef DRQA_PARSE_HARNESS_H
#define DRQA_PARSE_HARNESS_H

#include "parse.h"
#include "tap.h"
#include "ts_arena.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static inline const char *kind_name(enum parse_kind k)
{
    return k == PARSE_CLASS ? "class" : k == PARSE_FUNCTION ? "function" : k == PARSE_METHOD ? "method" : "variable";
}

/* One symbol as a line: kind [async] qualname start-end@body ^parent | sig | decorators | doc | bases
 * (line breaks shown as '~') */
static inline char *sym_line(const struct parse_result *r, size_t i)
{
    const struct parse_symbol *s = &r->syms[i];
    struct buf b = BUF_INIT;
    buf_printf(&b, "%s%s %s %d-%d@%d ^%s | %s | %s | %s | %s", kind_name(s->kind), s->is_async ? " async" : "",
               s->qualname, s->start_line,
               s->end_line, s->body_line, s->parent >= 0 ? r->syms[s->parent].name : "-",
               s->signature ? s->signature : "-", s->decorators ? s->decorators : "-",
               s->docstring ? s->docstring : "-", s->bases ? s->bases : "-");
    for (char *p = b.data; *p; p++)
        if (*p == '\n') *p = '~';
    return buf_take(&b);
}

static inline char *import_line(const struct parse_import *im)
{
    return xasprintf("%d %s | %s | %s | %d", im->line, im->module, im->name ? im->name : "-",
                     im->alias ? im->alias : "-", im->level);
}

static inline char *call_line(const struct parse_result *r, size_t i)
{
    const struct parse_call *c = &r->calls[i];
    return xasprintf("%d %s <- %s", c->line, c->callee, c->caller >= 0 ? r->syms[c->caller].qualname : "-");
}

static inline void check_list(const char *what, size_t n, char *(*get)(const struct parse_result *, size_t),
                              const struct parse_result *r, const char *const *want)
{
    size_t nw = 0;
    while (want[nw]) nw++;
    for (size_t i = 0; i < n || i < nw; i++) {
        char *got = i < n ? get(r, i) : NULL;
        if (getenv("DRQA_DUMP")) diag("%s", got ? got : "(none)");
        const char *w = i < nw ? want[i] : "(nothing more expected)";
        is_str(got, w, "%s %zu", what, i);
        free(got);
    }
}

static inline char *imp_get(const struct parse_result *r, size_t i) { return import_line(&r->imports[i]); }

/* Extracts text twice: with a parser whose tree is freed as usual, then with
 * a parser made in a tree-sitter arena that drops the tree whole
 * (ts_arena.h), as the indexer's threads parse; both must give the lists. */
static inline void check(const struct lang *l, const char *text, size_t len, const char *const *syms, const char *const *imports,
                         const char *const *calls, int errors)
{
    static struct ts_arena *arena;
    if (!arena) {
        ts_arena_install();
        arena = ts_arena_new(0);
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass && !ok(arena != NULL, "a tree-sitter arena")) break;
        if (pass) ts_arena_begin(arena);
        TSParser *p = ts_parser_new();
        struct parse_result r;
        is_int(l->extract(p, text, len, &r), 0, "extract returns 0%s", pass ? " (in an arena)" : "");
        check_list("symbol", r.nsyms, sym_line, &r, syms);
        check_list("import", r.nimports, imp_get, &r, imports);
        check_list("call", r.ncalls, call_line, &r, calls);
        is_int(r.parse_errors, errors, "parse errors");
        parse_result_free(&r);
        ts_parser_delete(p);
        if (pass) ts_arena_end(arena);
    }
}

/* A set of module names for the import_module hooks. */
static const char *const *known;
static inline int in_known(void *ctx, const char *name)
{
    (void)ctx;
    for (size_t i = 0; known[i]; i++)
        if (strcmp(known[i], name) == 0) return 1;
    return 0;
}

static inline void check_import_module(const struct lang *l, const char *from, const char *module, const char *want)
{
    char *got = l->import_module(from, module, in_known, NULL);
    if (want) is_str(got, want, "import '%s' in %s", module, from);
    else ok(got == NULL, "import '%s' in %s names no repository module (got '%s')", module, from, got ? got : "");
    free(got);
}

#ifdef PARSE_FIXTURES
/* fixture(rel, &len): the text of tests/fixtures/PARSE_FIXTURES/rel (define
 * PARSE_FIXTURES before including this header), with a test line saying it
 * was read; NULL when it was not. */
static inline char *fixture(const char *rel, size_t *len)
{
    char *path = xasprintf("%s/tests/fixtures/%s/%s", DRQA_SRCDIR, PARSE_FIXTURES, rel);
    char *text = read_file(path, 1 << 20, len);
    ok(text != NULL, "read %s", rel);
    free(path);
    return text;
}

/* check() on a fixture file */
static inline void check_fixture(const struct lang *l, const char *rel, const char *const *syms,
                                 const char *const *imports, const char *const *calls, int errors)
{
    size_t len;
    char *text = fixture(rel, &len);
    if (text) check(l, text, len, syms, imports, calls, errors);
    free(text);
}
#endif

#endif
