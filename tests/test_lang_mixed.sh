#!/bin/sh
# test_lang_mixed.sh: tests/fixtures/mixed (Python, Java, JavaScript,
# TypeScript, TSX and Go files) indexed in one pass with --index-only --json:
# exact totals, symbols per language, imports resolved across files through
# each language's own rules, and FindClass and FindFunction finding Java,
# TypeScript and Go definitions.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
q() { sqlite3 -batch -separator ' ' "$1" "$2" | tr '\n' ';'; }

R="$T/repo"
cp -R "$top_srcdir/tests/fixtures/mixed" "$R"
I="$T/idx.sqlite"
"$DRQA" --json --no-progress --index "$I" --index-only "$R" >"$T/out.json" 2>"$T/err.txt"
is "$?" 0 "indexing the mixed repository succeeds"
is "$($PYTHON3 -c 'import json, sys
d = json.load(open(sys.argv[1])); s = d["symbols"]
print("files=%d classes=%d functions=%d methods=%d variables=%d imports=%d calls=%d parse_errors=%d" % (
    d["files"]["indexed"], s["classes"], s["functions"], s["methods"], s["variables"], d["imports"], d["calls"],
    d["parse_errors"]["nodes"]))' "$T/out.json")" \
   "files=13 classes=22 functions=18 methods=29 variables=14 imports=33 calls=64 parse_errors=0" \
   "index totals"

# lang files classes functions methods variables imports calls
is "$(q "$I" "SELECT f.lang, count(*),
        (SELECT count(*) FROM symbols s JOIN files g ON g.id = s.file_id WHERE g.lang = f.lang AND s.kind = 'class'),
        (SELECT count(*) FROM symbols s JOIN files g ON g.id = s.file_id WHERE g.lang = f.lang AND s.kind = 'function'),
        (SELECT count(*) FROM symbols s JOIN files g ON g.id = s.file_id WHERE g.lang = f.lang AND s.kind = 'method'),
        (SELECT count(*) FROM symbols s JOIN files g ON g.id = s.file_id WHERE g.lang = f.lang AND s.kind = 'variable'),
        (SELECT count(*) FROM imports i JOIN files g ON g.id = i.file_id WHERE g.lang = f.lang),
        (SELECT count(*) FROM edges e JOIN files g ON g.id = e.src_file WHERE g.lang = f.lang AND e.kind = 0)
      FROM files f GROUP BY f.lang ORDER BY f.lang")" \
   "go 2 5 3 3 3 7 15;java 4 10 0 13 5 6 15;javascript 3 1 9 7 4 13 17;markdown 1 0 0 0 0 0 0;python 1 1 1 1 0 1 4;tsx 1 1 1 1 0 3 4;typescript 1 4 4 4 2 3 9;" \
   "files and symbols per language"

is "$(q "$I" "SELECT f.module FROM files f ORDER BY f.path")" \
   ";go/cmd/shopd;go/inventory;org.example.shop.BaseCart;org.example.shop.Cart;org.example.shop.Checkout;org.example.shop.Item;tools.report;web/lib;web/lib/router;web/src/app;web/src/cart;web/src/view;" \
   "module names per language (none for the README, a text file)"

is "$(q "$I" "SELECT f.path, i.module, coalesce(i.name, '-'), r.path FROM imports i JOIN files f ON f.id = i.file_id
      JOIN files r ON r.id = i.resolved_file_id ORDER BY f.path, i.line, i.id")" \
   "go/cmd/shopd/main.go example.com/shop/inventory - go/inventory/store.go;java/src/main/java/org/example/shop/Checkout.java org.example.shop Cart java/src/main/java/org/example/shop/Cart.java;web/lib/index.js ./router - web/lib/router.js;web/src/app.js ../lib/router.js Router web/lib/router.js;web/src/app.js ../lib/router.js handle web/lib/router.js;web/src/app.js ./cart default web/src/cart.ts;web/src/cart.ts ../lib Router web/lib/index.js;web/src/view.tsx ./cart Cart web/src/cart.ts;" \
   "imports resolved to repository files (Go paths, Java packages, relative JS/TS paths)"

is "$(q "$I" "SELECT s.qualname, p.qualname FROM symbols s JOIN symbols p ON p.id = s.parent_id JOIN files f ON f.id = s.file_id
      WHERE f.lang = 'go' ORDER BY s.id")" \
   "Counter.Count Counter;Store.Count Store;Store.String Store;" \
   "Go methods are children of their receiver type"

is "$(q "$I" "SELECT coalesce(e.target, e.target_name), d.qualname, g.path FROM edges e JOIN symbols d ON d.id = e.dst_id
      JOIN files g ON g.id = d.file_id JOIN files f ON f.id = e.src_file WHERE e.kind = 1 AND f.lang = 'java' ORDER BY e.id")" \
   "BaseCart BaseCart java/src/main/java/org/example/shop/BaseCart.java;" \
   "Java extends resolves to the class in its own file"

# ---- actions across languages --------------------------------------------------------
"$DRQA" --no-progress --index "$I" --action FindClass '{"class_name":"Cart"}' "$R" >"$T/a.json" 2>"$T/a.err"
is "$?" 0 "FindClass Cart runs"
# paths FILE: the sorted distinct repository paths named anywhere in the items
paths() {
    $PYTHON3 -c 'import json, sys
d = json.load(open(sys.argv[1])); found = set()
def walk(v):
    if isinstance(v, dict): [walk(x) for x in v.values()]
    elif isinstance(v, list): [walk(x) for x in v]
    elif isinstance(v, str) and v.count("/") and not v.count(" ") and v.rsplit(".", 1)[-1] in ("java", "ts", "tsx", "js", "go", "py"): found.add(v)
walk(d.get("items", []))
print(";".join(sorted(found)))' "$1"
}
is "$(paths "$T/a.json")" "java/src/main/java/org/example/shop/Cart.java;web/src/cart.ts" \
   "FindClass Cart finds the Java class and the TypeScript class"
"$DRQA" --no-progress --index "$I" --action FindClass '{"class_name":"Store"}' "$R" >"$T/b.json" 2>&1
is "$(paths "$T/b.json")" "go/inventory/store.go" "FindClass Store finds the Go struct"
"$DRQA" --no-progress --index "$I" --action FindFunction '{"function_name":"Store.Count"}' "$R" >"$T/c.json" 2>&1
is "$(paths "$T/c.json")" "go/inventory/store.go" "FindFunction Store.Count finds the Go method"
"$DRQA" --no-progress --index "$I" --action FindFunction '{"function_name":"Cart.add"}' "$R" >"$T/d.json" 2>&1
is "$(paths "$T/d.json")" "java/src/main/java/org/example/shop/Cart.java" "FindFunction Cart.add finds the Java method"
"$DRQA" --no-progress --index "$I" --action FindFunction '{"function_name":"createRouter"}' "$R" >"$T/e.json" 2>&1
is "$(paths "$T/e.json")" "web/lib/router.js" "FindFunction createRouter finds the exports assignment"

echo "1..$n"
exit $fail
