#!/bin/sh
# A caller that calls the same callee several times is one call edge, at its
# first call, counting the sites (edges.n; parse_merge_calls): generated rule
# tables and tests call the same few names thousands of times. Nothing of the
# count is lost: the summary's calls are call sites, FindReferences lists
# each caller once with how many calls it makes, and an update (the writer's
# own insert, not the fresh build's resolver) stores the same. Checked on a
# repository the test writes.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

R="$T/repo"
mkdir -p "$R/pkg"
: >"$R/pkg/__init__.py"
cat >"$R/pkg/m.py" <<'EOF'
def g(x):
    return x


def f(a):
    b = g(a)
    c = g(b)
    return g(c) + g(g(1))


def h():
    return g(2)


g(3)
g(4)
EOF

I="$T/index.sqlite"
"$DRQA" --index "$I" --no-progress --index-only --json "$R" >"$T/sum" 2>"$T/err"
ok $? "the repository is indexed"

# facts: the edges rows of calls and the summary's counts
facts() {
    "$PYTHON3" - "$I" "$T/sum" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT coalesce(s.name, '-'), e.line, coalesce(e.n, 1) FROM edges e "
                  "LEFT JOIN symbols s ON s.id = e.src_id WHERE e.kind = 0 ORDER BY e.line").fetchall()
for name, line, n in rows:
    print("edge", name, line, n)
print("rows", len(rows))
s = json.load(open(sys.argv[2]))
print("calls", s["calls"], s["edges"]["calls"]["resolved"], s["edges"]["calls"]["unresolved"])
EOF
}
facts >"$T/facts"
sed 's/^/# /' "$T/facts"
grep -qx 'edge f 6 5' "$T/facts"
ok $? "f's five calls of g are one edge at the first (line 6), counting 5"
grep -qx 'edge h 12 1' "$T/facts" && grep -qx 'edge - 15 2' "$T/facts"
ok $? "h's one call and the module's two are an edge each"
grep -qx 'rows 3' "$T/facts"
ok $? "three call edges, not eight"
grep -qx 'calls 8 8 0' "$T/facts"
ok $? "the summary counts the 8 call sites, all resolved"

"$DRQA" --index "$I" --no-progress --action FindReferences '{"symbol": "g"}' "$R" >"$T/refs" 2>"$T/err"
ok $? "FindReferences g runs"
"$PYTHON3" - "$T/refs" >"$T/rfacts" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for it in d["items"]:
    print("item", it.get("in", "-"), it["line"], it.get("calls"))
print("listing", json.dumps(d["listing"]))
EOF
sed 's/^/# /' "$T/rfacts"
[ "$(grep -c '^item' "$T/rfacts")" = 3 ] && grep -qx 'item f 6 5' "$T/rfacts"
ok $? "each caller listed once, f with its 5 calls"
grep -q 'callers (3; 8 call sites)' "$T/rfacts" && grep -q 'in f  g  (5 calls, the first shown)' "$T/rfacts"
ok $? "the listing says how many callers and call sites, and f's count"

# an update: the writer inserts the edges of a changed file itself
sed -i 's/^    return g(2)$/    return g(2) + g(5)/' "$R/pkg/m.py"
"$DRQA" --index "$I" --no-progress --index-only --json "$R" >"$T/sum" 2>"$T/err"
ok $? "the changed file is indexed again"
facts >"$T/facts"
sed 's/^/# /' "$T/facts"
grep -qx 'edge h 12 2' "$T/facts" && grep -qx 'edge f 6 5' "$T/facts" && grep -qx 'rows 3' "$T/facts"
ok $? "after the update h's two calls are one edge counting 2"
grep -qx 'calls 9 9 0' "$T/facts"
ok $? "and the summary counts 9 call sites"

echo "1..$n"
exit $fail
