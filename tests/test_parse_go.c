/*
 * test_parse_go: the Go extractor on tests/fixtures/mixed/go (a package with
 * structs, interfaces, embedded fields, grouped types and consts, generics,
 * value and pointer receivers, doc comments, aliased imports; a main package
 * importing it) plus inline cases, the package-directory module names and the
 * resolution of import paths to repository packages. Every symbol, import and
 * call is compared exactly. DRQA_DUMP=1 prints what the extractor produced.
 */
#include "parse.h"
#include "tap.h"
#include "util.h"
#define PARSE_FIXTURES "mixed/go"
#include "parse_harness.h"

#include <stdlib.h>
#include <string.h>

extern const struct lang parse_go;

static void test_store(void)
{
    static const char *const syms[] = {
        "variable ErrMissing 14-14@14 ^- | - | - | ErrMissing is returned for unknown SKUs. | -",
        "variable MaxItems 18-18@18 ^- | - | - | MaxItems bounds a store. | -",
        "variable minItems 19-19@19 ^- | - | - | - | -",
        "class Store 24-29@24 ^- | type Store struct | - | Store holds stock counts.~It is safe for concurrent use. | "
        "sync.Mutex, Base",
        "class Counter 32-35@32 ^- | type Counter interface | - | Counter counts things. | fmt.Stringer",
        "method Counter.Count 34-34@34 ^Counter | Count(sku string) (int, error) | - | - | -",
        "class ID 37-37@37 ^- | type ID int64 | - | - | -",
        "class Pair 41-41@41 ^- | type Pair struct | - | Pair is two stores. | -",
        "class Alias 42-42@42 ^- | type Alias = Store | - | - | -",
        "function NewStore 46-48@46 ^- | func NewStore(db sq.DB) *Store | - | NewStore makes an empty store. | -",
        "method Store.Count 51-59@51 ^Store | func (s *Store) Count(sku string) (int, error) | - | "
        "Count returns the stock of sku. | -",
        "method Store.String 61-61@61 ^Store | func (Store) String() string | - | - | -",
        "function Map 63-69@63 ^- | func Map[T any, U any](xs []T, f func(T) U) []U | - | - | -",
        NULL,
    };
    static const char *const imports[] = {
        "5 errors | - | - | 0",
        "6 fmt | - | - | 0",
        "7 example.com/shop/internal/sql | - | sq | 0",
        "8 embed | - | _ | 0",
        "11 sync | - | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "14 errors.New <- -",
        "47 Store <- NewStore",
        "47 make <- NewStore",
        "52 s.Lock <- Store.Count",
        "53 s.Unlock <- Store.Count",
        "56 fmt.Errorf <- Store.Count",
        "64 make <- Map",
        "64 len <- Map",
        "66 append <- Map",
        "66 f <- Map",
        NULL,
    };
    check_fixture(&parse_go, "inventory/store.go", syms, imports, calls, 0);
}

static void test_main(void)
{
    static const char *const syms[] = {"function main 9-15@9 ^- | func main() | - | - | -", NULL};
    static const char *const imports[] = {
        "4 log | - | - | 0",
        "6 example.com/shop/inventory | - | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "10 inventory.NewStore <- main",
        "11 log.Println <- main",
        "11 s.String <- main",
        "12 s.Count <- main",
        "13 log.Fatal <- main",
        NULL,
    };
    check_fixture(&parse_go, "cmd/shopd/main.go", syms, imports, calls, 0);
}

/* Generic receivers, receivers of types declared elsewhere, a comment that is
 * separated by a blank line, dot imports, blank vars, local declarations
 * (not symbols), and calls inside function literals. */
static void test_inline(void)
{
    static const char src[] =
        "package list\n"
        "import . \"strings\"\n"
        "type List[T comparable] struct{ items []T }\n"
        "// detached\n"
        "\n"
        "func (l *List[T]) Push(v T) { l.items = append(l.items, v) }\n"
        "func (o Other) M() { var local = 1; _ = local; go func() { work(ToUpper(\"x\")) }() }\n"
        "var _ = 3\n"
        "var a, b = 1, 2\n";
    static const char *const syms[] = {
        "class List 3-3@3 ^- | type List[T comparable] struct | - | - | -",
        "method List.Push 6-6@6 ^List | func (l *List[T]) Push(v T) | - | - | -",
        "method Other.M 7-7@7 ^- | func (o Other) M() | - | - | -",
        "variable a 9-9@9 ^- | - | - | - | -",
        "variable b 9-9@9 ^- | - | - | - | -",
        NULL,
    };
    static const char *const imports[] = {"2 strings | - | . | 0", NULL};
    static const char *const calls[] = {
        "6 append <- List.Push",
        "7 work <- Other.M",
        "7 ToUpper <- Other.M",
        NULL,
    };
    check(&parse_go, src, sizeof src - 1, syms, imports, calls, 0);
}

static void test_modules(void)
{
    static const char *const cases[][2] = {
        {"go/inventory/store.go", "go/inventory"},
        {"main.go", ""},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *m = parse_go.module_name(cases[i][0]);
        is_str(m, cases[i][1], "module_name(%s)", cases[i][0]);
        free(m);
    }
    ok(parse_lang_for_path("a/b.go") == &parse_go, "parse_lang_for_path picks go for .go");
    static const char *const mods[] = {"go/inventory", "go/cmd/shopd", "vendorlike/sql", NULL};
    known = mods;
    check_import_module(&parse_go, "go/cmd/shopd/main.go", "example.com/shop/inventory", "go/inventory");
    check_import_module(&parse_go, "go/inventory/store.go", "example.com/shop/cmd/shopd", "go/cmd/shopd");
    check_import_module(&parse_go, "go/inventory/store.go", "fmt", NULL);
    check_import_module(&parse_go, "other/x.go", "example.com/shop/internal/sql", NULL);
}

int main(void)
{
    test_store();
    test_main();
    test_inline();
    test_modules();
    return done_testing();
}
