/*
 * test_parse_java: the Java extractor on tests/fixtures/mixed (Cart.java covers
 * classes, interfaces, enums, records, nested/inner/anonymous classes, Javadoc,
 * annotations, fields, imports and calls) plus small inline cases: every
 * symbol, import and call is compared exactly, one line per item.
 * DRQA_DUMP=1 prints what the extractor produced.
 */
#include "parse.h"
#include "tap.h"
#include "util.h"
#define PARSE_FIXTURES "mixed/java/src/main/java/org/example/shop"
#include "parse_harness.h"

#include <stdlib.h>
#include <string.h>

extern const struct lang parse_java;

static void test_cart(void)
{
    static const char *const syms[] = {
        "class Cart 14-70@16 ^- | public class Cart<T extends Item> extends BaseCart implements Iterable<T>, "
        "Serializable | Entity~Table(name = \"carts\") | A shopping cart holding line items.~~@author shop team | "
        "BaseCart, Iterable, Serializable",
        "variable Cart.MAX_LINES 18-18@18 ^Cart | - | - | Largest number of lines a cart may hold. | -",
        "variable Cart.lines 19-19@19 ^Cart | - | - | - | -",
        "variable Cart.saved 19-19@19 ^Cart | - | - | - | -",
        "method Cart.Cart 22-25@22 ^Cart | public Cart() | - | Creates an empty cart. | -",
        "method Cart.add 31-38@32 ^Cart | public synchronized boolean add(T item) throws CartFullException | "
        "Override | Adds an item.~@param item the item | -",
        "method Cart.iterator 40-46@40 ^Cart | public Iterator<T> iterator() | - | - | -",
        "class Cart.Totals 49-55@49 ^Cart | static class Totals | - | Totals per currency. | -",
        "variable Cart.Totals.cents 50-50@50 ^Totals | - | - | - | -",
        "method Cart.Totals.withTax 52-54@52 ^Totals | long withTax(double rate) | - | - | -",
        "class Cart.Line 57-59@57 ^Cart | class Line | - | - | -",
        "method Cart.Line.Line 58-58@58 ^Line | Line() | - | - | -",
        "class Cart.Listener 61-63@61 ^Cart | interface Listener extends EventListener | - | - | EventListener",
        "method Cart.Listener.changed 62-62@62 ^Listener | void changed(Cart<?> cart) | - | - | -",
        "class Cart.State 65-69@65 ^Cart | enum State | - | - | -",
        "method Cart.State.isOpen 68-68@68 ^State | boolean isOpen() | - | - | -",
        "class Pair 72-74@72 ^- | record Pair<A, B>(A first, B second) implements Comparable<Pair<A, B>> | - | - | "
        "Comparable",
        "method Pair.compareTo 73-73@73 ^Pair | public int compareTo(Pair<A, B> o) | - | - | -",
        "class Pricing 76-83@77 ^- | interface Pricing<T> extends Function<T, Long> | FunctionalInterface | - | "
        "Function",
        "method Pricing.price 78-78@78 ^Pricing | long price(T item) | - | - | -",
        "method Pricing.priceAll 80-82@80 ^Pricing | default long priceAll(List<T> items) | - | - | -",
        NULL,
    };
    static const char *const imports[] = {
        "3 java.util | ArrayList | - | 0",
        "4 java.util | List | - | 0",
        "5 java.util.concurrent | * | - | 0",
        "6 java.util.Objects | requireNonNull | - | 0",
        "7 org.example.shop.Prices | * | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "19 ArrayList <- Cart",
        "24 ArrayList <- Cart.Cart",
        "33 requireNonNull <- Cart.add",
        "34 lines.size <- Cart.add",
        "35 CartFullException <- Cart.add",
        "37 lines.add <- Cart.add",
        "41 Iterator <- Cart.iterator",
        "43 lines.size <- Cart.iterator",
        "44 lines.get <- Cart.iterator",
        "53 Math.round <- Cart.Totals.withTax",
        "81 items.stream().mapToLong(this::price).sum <- Pricing.priceAll",
        "81 items.stream().mapToLong <- Pricing.priceAll",
        "81 items.stream <- Pricing.priceAll",
        NULL,
    };
    check_fixture(&parse_java, "Cart.java", syms, imports, calls, 0);
}

/* Local classes nest under their method; enum constants with bodies and
 * lambdas define nothing; a Javadoc separated by code is not a docstring;
 * qualified 'new' and generic calls keep the written type without arguments. */
static void test_inline(void)
{
    static const char src[] =
        "/** File header, not a doc. */\n"
        "package a.b;\n"
        "import Single;\n"
        "enum Op implements IntBinaryOperator {\n"
        "    PLUS { public int applyAsInt(int x, int y) { return add(x, y); } };\n"
        "    /** Orphan. */\n"
        "\n"
        "\n"
        "    private int n;\n"
        "}\n"
        "@interface Marker { String value() default \"\"; }\n"
        "abstract class Runner {\n"
        "    abstract void run(Runnable r);\n"
        "    void go() {\n"
        "        class Local extends java.util.ArrayList<String> { void m() { helper(); } }\n"
        "        run(() -> new java.util.HashMap<String, Integer>());\n"
        "        this.<String>generic(\"x\");\n"
        "    }\n"
        "}\n";
    static const char *const syms[] = {
        "class Op 4-10@4 ^- | enum Op implements IntBinaryOperator | - | - | IntBinaryOperator",
        "variable Op.n 9-9@9 ^Op | - | - | - | -",
        "class Marker 11-11@11 ^- | @interface Marker | - | - | -",
        "class Runner 12-19@12 ^- | abstract class Runner | - | - | -",
        "method Runner.run 13-13@13 ^Runner | abstract void run(Runnable r) | - | - | -",
        "method Runner.go 14-18@14 ^Runner | void go() | - | - | -",
        "class Runner.go.Local 15-15@15 ^go | class Local extends java.util.ArrayList<String> | - | - | "
        "java.util.ArrayList",
        "method Runner.go.Local.m 15-15@15 ^Local | void m() | - | - | -",
        NULL,
    };
    static const char *const imports[] = {"3  | Single | - | 0", NULL};
    static const char *const calls[] = {
        "5 add <- Op",
        "15 helper <- Runner.go.Local.m",
        "16 run <- Runner.go",
        "16 java.util.HashMap <- Runner.go",
        "17 this.generic <- Runner.go",
        NULL,
    };
    check(&parse_java, src, sizeof src - 1, syms, imports, calls, 0);
}

static void test_broken(void)
{
    /* an unterminated class still yields its symbol and counts the error */
    static const char src[] = "class A {\n  void f() { g(; }\n";
    TSParser *p = ts_parser_new();
    struct parse_result r;
    is_int(parse_java.extract(p, src, sizeof src - 1, &r), 0, "broken: extract returns 0");
    ok(r.parse_errors > 0, "broken: parse errors counted (%d)", r.parse_errors);
    ok(r.nsyms >= 1 && strcmp(r.syms[0].qualname, "A") == 0, "broken: class A still found");
    parse_result_free(&r);
    ts_parser_delete(p);
}

static void test_module_name(void)
{
    static const char *const cases[][2] = {
        {"src/main/java/org/example/shop/Cart.java", "org.example.shop.Cart"},
        {"src/org/x/Y.java", "org.x.Y"},
        {"lib/Foo.java", "lib.Foo"},
        {"Foo.java", "Foo"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *m = parse_java.module_name(cases[i][0]);
        is_str(m, cases[i][1], "module_name(%s)", cases[i][0]);
        free(m);
    }
    const struct lang *l = parse_lang_for_path("a/B.java");
    ok(l == &parse_java, "parse_lang_for_path picks java for .java");
}

int main(void)
{
    test_cart();
    test_inline();
    test_broken();
    test_module_name();
    return done_testing();
}
