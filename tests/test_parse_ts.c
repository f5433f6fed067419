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
#define PARSE_FIXTURES "mixed/web"
#include "parse_harness.h"

#include <stdlib.h>
#include <string.h>

extern const struct lang parse_typescript, parse_tsx, parse_javascript;

static void test_cart(void)
{
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
    check_fixture(&parse_typescript, "src/cart.ts", syms, imports, calls, 0);
}

static void test_view(void)
{
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
    check_fixture(&parse_tsx, "src/view.tsx", syms, imports, calls, 0);
    /* the same JSX is an error for the plain TypeScript grammar: the extension picks the grammar */
    TSParser *p = ts_parser_new();
    struct parse_result r;
    size_t len;
    char *text = fixture("src/view.tsx", &len);
    int rc = text ? parse_typescript.extract(p, text, len, &r) : -1;
    is_int(rc, 0, "view.tsx with the typescript grammar is extracted (errors are counted, not fatal)");
    ok(rc == 0 && r.parse_errors > 0, "view.tsx with the typescript grammar has parse errors (%d)",
       rc == 0 ? r.parse_errors : -1);
    if (rc == 0) parse_result_free(&r);
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
