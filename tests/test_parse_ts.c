/*
 * test_parse_ts: the TypeScript and TSX extractors on tests/fixtures/mixed/web
 * (interfaces, type aliases, const enums, an abstract decorated generic class
 * with implements, overloads, namespaces, 'import x = require()', a React
 * component file) and the resolution of relative imports to repository
 * modules. Every symbol, import and call is compared exactly.
 * DRQA_DUMP=1 prints what the extractor produced.
 */
#include "parse.h"
#include "tap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

extern const struct lang parse_typescript, parse_tsx, parse_javascript;

static const char *kind_name(enum parse_kind k)
{
    return k == PARSE_CLASS ? "class" : k == PARSE_FUNCTION ? "function" : k == PARSE_METHOD ? "method" : "variable";
}

/* One symbol as a line: kind [async] qualname start-end@body ^parent | sig | decorators | doc | bases
 * (line breaks shown as '~') */
static char *sym_line(const struct parse_result *r, size_t i)
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

static char *import_line(const struct parse_import *im)
{
    return xasprintf("%d %s | %s | %s | %d", im->line, im->module, im->name ? im->name : "-",
                     im->alias ? im->alias : "-", im->level);
}

static char *call_line(const struct parse_result *r, size_t i)
{
    const struct parse_call *c = &r->calls[i];
    return xasprintf("%d %s <- %s", c->line, c->callee, c->caller >= 0 ? r->syms[c->caller].qualname : "-");
}

static void check_list(const char *what, size_t n, char *(*get)(const struct parse_result *, size_t),
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

static char *imp_get(const struct parse_result *r, size_t i) { return import_line(&r->imports[i]); }

static void check(const struct lang *l, const char *text, size_t len, const char *const *syms, const char *const *imports,
                  const char *const *calls, int errors)
{
    TSParser *p = ts_parser_new();
    struct parse_result r;
    is_int(l->extract(p, text, len, &r), 0, "extract returns 0");
    check_list("symbol", r.nsyms, sym_line, &r, syms);
    check_list("import", r.nimports, imp_get, &r, imports);
    check_list("call", r.ncalls, call_line, &r, calls);
    is_int(r.parse_errors, errors, "parse errors");
    parse_result_free(&r);
    ts_parser_delete(p);
}

/* A set of module names for the import_module hooks. */
static const char *const *known;
static int in_known(void *ctx, const char *name)
{
    (void)ctx;
    for (size_t i = 0; known[i]; i++)
        if (strcmp(known[i], name) == 0) return 1;
    return 0;
}

static void check_import_module(const struct lang *l, const char *from, const char *module, const char *want)
{
    char *got = l->import_module(from, module, in_known, NULL);
    if (want) is_str(got, want, "import '%s' in %s", module, from);
    else ok(got == NULL, "import '%s' in %s names no repository module (got '%s')", module, from, got ? got : "");
    free(got);
}

static char *fixture(const char *rel, size_t *len)
{
    char *path = xasprintf("%s/tests/fixtures/mixed/web/%s", DRQA_SRCDIR, rel);
    char *text = read_file(path, 1 << 20, len);
    ok(text != NULL, "read %s", rel);
    free(path);
    return text;
}

static void test_cart(void)
{
    size_t len;
    char *text = fixture("src/cart.ts", &len);
    if (!text) return;
    static const char *const syms[] = {
        "class Priced 6-9@6 ^- | interface Priced<T> extends Named, Comparable<T> | - | Anything with a price. | "
        "Named, Comparable",
        "method Priced.price 7-7@7 ^Priced | price(currency?: string): number | - | - | -",
        "variable Priced.sku 8-8@8 ^Priced | - | - | - | -",
        "class Listener 11-11@11 ^- | type Listener<T> | - | - | -",
        "class Currency 13-13@13 ^- | const enum Currency | - | - | -",
        "class Cart 18-32@19 ^- | abstract class Cart<T extends Priced<T>> extends Store<T> implements Iterable<T>, "
        "Disposable | Injectable({providedIn: 'root'}) | A cart of priced items. | Store, Iterable, Disposable",
        "variable Cart.items 20-20@20 ^Cart | - | - | - | -",
        "method Cart.constructor 22-24@22 ^Cart | constructor(private readonly name: string) | - | - | -",
        "method Cart.checkout 26-26@26 ^Cart | abstract checkout(): Promise<void> | - | - | -",
        "method Cart.total 28-31@29 ^Cart | public total(currency: Currency = Currency.EUR): number | Memo() | - | -",
        "function load 34-34@34 ^- | function load(path: string): string | - | - | -",
        "function load 35-37@35 ^- | function load(path: string, enc?: string): string | - | - | -",
        "function helper 40-40@40 ^- | function helper(): void | - | - | -",
        "function toRouter 43-43@43 ^- | const toRouter = <T,>(c: Cart<T>): Router => | - | - | -",
        NULL,
    };
    static const char *const imports[] = {
        "1 ./item | Item | - | 0",
        "2 fs | - | fs | 0",
        "3 ../lib | Router | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "18 Injectable <- -",
        "23 super <- Cart.constructor",
        "28 Memo <- Cart",
        "30 this.items.reduce <- Cart.total",
        "30 it.price <- Cart.total",
        "36 fs.readFileSync(path, enc ?? 'utf8').toString <- load",
        "36 fs.readFileSync <- load",
        "40 load <- helper",
        "43 Router <- toRouter",
        NULL,
    };
    check(&parse_typescript, text, len, syms, imports, calls, 0);
    free(text);
}

static void test_view(void)
{
    size_t len;
    char *text = fixture("src/view.tsx", &len);
    if (!text) return;
    static const char *const syms[] = {
        "function CartView 5-8@5 ^- | function CartView({cart}: {cart: Cart<any>}) | - | Shows a cart's total. | -",
        "class Panel 10-14@10 ^- | class Panel extends React.Component<Props> | - | - | React.Component",
        "method Panel.render 11-13@11 ^Panel | render() | - | - | -",
        NULL,
    };
    static const char *const imports[] = {
        "1 react | default | React | 0",
        "1 react | useState | - | 0",
        "2 ./cart | Cart | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "6 useState <- CartView",
        "7 setOpen <- CartView",
        "7 cart.total <- CartView",
        "12 CartView <- Panel.render",
        NULL,
    };
    check(&parse_tsx, text, len, syms, imports, calls, 0);
    free(text);
    /* the same JSX is an error for the plain TypeScript grammar: the extension picks the grammar */
    TSParser *p = ts_parser_new();
    struct parse_result r;
    text = fixture("src/view.tsx", &len);
    if (text && parse_typescript.extract(p, text, len, &r) == 0) {
        ok(r.parse_errors > 0, "view.tsx with the typescript grammar has parse errors (%d)", r.parse_errors);
        parse_result_free(&r);
    }
    free(text);
    ts_parser_delete(p);
}

static void test_modules(void)
{
    ok(parse_lang_for_path("a/b.ts") == &parse_typescript, "parse_lang_for_path picks typescript for .ts");
    ok(parse_lang_for_path("a/b.tsx") == &parse_tsx, "parse_lang_for_path picks tsx for .tsx");
    char *m = parse_tsx.module_name("web/src/view.tsx");
    is_str(m, "web/src/view", "module_name(web/src/view.tsx)");
    free(m);
    static const char *const mods[] = {"web/lib", "web/lib/router", "web/src/cart", "web/src/app", NULL};
    known = mods;
    check_import_module(&parse_typescript, "web/src/view.tsx", "./cart", "web/src/cart");
    check_import_module(&parse_typescript, "web/src/view.tsx", "./cart.js", "web/src/cart");
    check_import_module(&parse_typescript, "web/src/cart.ts", "../lib", "web/lib");
    check_import_module(&parse_javascript, "web/src/app.js", "../lib/router.js", "web/lib/router");
    check_import_module(&parse_javascript, "web/lib/index.js", "./router", "web/lib/router");
    check_import_module(&parse_javascript, "web/src/app.js", "./util", NULL);
    check_import_module(&parse_javascript, "web/src/app.js", "react", NULL);
    check_import_module(&parse_javascript, "web/src/app.js", "../../../x", NULL);
}

int main(void)
{
    test_cart();
    test_view();
    test_modules();
    return done_testing();
}
