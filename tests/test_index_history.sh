#!/bin/sh
# test_index_history.sh: an index brought to a tree by updates answers exactly
# like a fresh index of the same tree. Updates give a re-parsed file's rows
# new, higher ids than a fresh build would; nothing a user sees may depend on
# that. The repository is generated: handlers with the same words in files
# whose paths have the same length, so that their search scores tie exactly,
# and enough shared vocabulary that the local vectors sum many chunks per
# term, plus two identical files. The history re-parses the first file in
# path order, deletes and restores two others (one of the identical pair),
# and adds then removes a fourth.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
q() { sqlite3 -batch "$1" "$2"; }
# the same with the functions the view chunks calls (tests/index_sql.py)
qt() { "$PYTHON3" "$top_srcdir/tests/index_sql.py" "$1" "$2"; }

R="$T/repo"
mkdir -p "$R/svc"
"$PYTHON3" - "$R" <<'EOF'
import os, sys
root = sys.argv[1]
words = ["request", "session", "cookie", "header", "token", "cache", "route", "user", "queue", "retry"]
for i, name in enumerate("abcdefghijkl"):
    w = words[i % len(words)]
    v = words[(i + 3) % len(words)]
    with open(os.path.join(root, "svc", "h_%s.py" % name), "w") as f:
        f.write('"""Handlers for the %s service."""\n\n' % name)
        # the same text in every file: equal scores for 'handle incoming request'
        f.write("def handle(request):\n")
        f.write('    """Handle an incoming request and return a response."""\n')
        f.write("    return respond(request.body, status=200)\n\n\n")
        f.write("class %sStore:\n" % name.upper())
        f.write('    """Keeps the %s and the %s of a %s."""\n\n' % (w, v, words[(i + 5) % len(words)]))
        f.write("    def load_%s(self, key):\n" % w)
        f.write('        """Load the %s for key from the %s."""\n' % (w, v))
        f.write("        return self.%s_%s.get(key)\n\n" % (v, w))
        f.write("    def save_%s(self, key, value):\n" % v)
        f.write('        """Save the %s of key, then expire the %s."""\n' % (v, w))
        f.write("        self.%s[key] = value\n" % v)
        f.write("        return expire_%s(key)\n" % w)
with open(os.path.join(root, "svc", "util.py"), "w") as f:
    f.write("def respond(body, status):\n    return (status, body)\n")
# two copies of one file: every score of one is a score of the other
for name in ("same_a", "same_b"):
    with open(os.path.join(root, "svc", name + ".py"), "w") as f:
        f.write('def retry_queue(job):\n    """Retry the queued job later."""\n    return schedule(job)\n')
EOF

F="$T/fresh.sqlite" H="$T/hist.sqlite"
index() { "$DRQA" --no-progress --quiet --index "$1" --index-only "$R" >/dev/null 2>>"$T/err.txt"; }
index "$H"
ok $? "the first index of the history"
cp "$R/svc/h_a.py" "$T/h_a.py"
cp "$R/svc/h_f.py" "$T/h_f.py"
cp "$R/svc/same_a.py" "$T/same_a.py"
printf '\n# edited\n' >>"$R/svc/h_a.py"
rm "$R/svc/h_f.py" "$R/svc/same_a.py"
printf 'def handle(request):\n    return None\n' >"$R/svc/h_0.py"
index "$H"
ok $? "an update: one file edited, two deleted, one added"
cp "$T/h_a.py" "$R/svc/h_a.py"
cp "$T/h_f.py" "$R/svc/h_f.py"
cp "$T/same_a.py" "$R/svc/same_a.py"
rm "$R/svc/h_0.py"
index "$H"
ok $? "an update back to the first tree"
index "$F"
ok $? "a fresh index of the same tree"
# the premise: the history did move rows to new ids
is "$(qt "$H" "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'svc/h_a.py' AND c.id > (SELECT max(c2.id) FROM chunks c2 JOIN files f2 ON f2.id = c2.file_id WHERE f2.path = 'svc/h_l.py')")" \
   "$(qt "$H" "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'svc/h_a.py'")" \
   "the updated index numbers the first file's chunks after the last file's"

act() { "$DRQA" --no-progress --quiet --index "$1" --action "$2" "$3" "$R" 2>&1; }
for query in "handle incoming request" "load the cache" "save the cookie then expire" "session token store"; do
    a=$(act "$F" SemanticSearch "{\"query\": \"$query\"}")
    b=$(act "$H" SemanticSearch "{\"query\": \"$query\"}")
    is "$b" "$a" "SemanticSearch '$query': the updated index ranks like the fresh one"
done
# the tie the history could break: the fresh order, path order, comes first
paths=$(act "$F" SemanticSearch '{"query": "handle incoming request"}' |
    "$PYTHON3" -c 'import json, sys; print(" ".join(i["path"] for i in json.load(sys.stdin)["items"][:3]))')
is "$paths" "svc/h_a.py svc/h_b.py svc/h_c.py" "equal scores are ranked in path order"
# the local vectors fitted on each index (by the searches above) are the same bytes
blob() { q "$1" "SELECT $4 FROM $2 ORDER BY $3" | cksum; }
tv="hex(terms) || hex(dfs) || hex(vecs)"
test -n "$(q "$F" "SELECT 1 FROM vec_term_blocks LIMIT 1")" &&
    [ "$(blob "$H" vec_term_blocks first "$tv")" = "$(blob "$F" vec_term_blocks first "$tv")" ]
ok $? "the same term vectors"
# the matrix holds the chunks in id order, 4096 a part; a part is each row's
# float, then the rows' 256 bytes interleaved in blocks of 8 (semantic.c):
# each chunk's row, by where the chunk is
rows() {
    "$PYTHON3" - "$1" <<'PY' | { [ -n "${RAW:-}" ] && cat || cksum; }
import math, sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
chunks = db.execute("SELECT f.path, c.start_line, c.end_line, c.kind FROM chunk_spans c "
                    "JOIN files f ON f.id = c.file_id ORDER BY c.id").fetchall()
parts = [r[0] for r in db.execute("SELECT rows FROM vec_matrix ORDER BY part")]
n, D, P, B = len(chunks), 256, 4096, 8
out = []
for i, key in enumerate(chunks):
    part, r = parts[i // P], i % P
    nr = min(P, n - (i // P) * P)
    inv, body = part[4 * r:4 * r + 4], part[4 * nr:]
    b0 = r - r % B
    if (i - i % B) + B <= n:
        row = bytes(body[b0 * D + k * B + r % B] for k in range(D))
    else:
        row = body[r * D:(r + 1) * D]
    # each row read where its 1 / norm says it is
    ss = sum((x - 256 if x > 127 else x) ** 2 for x in row)
    if abs(struct.unpack("=f", inv)[0] - (1 / math.sqrt(ss) if ss else 0)) > 1e-6:
        print("row %d of the matrix is not where its norm says" % i)
    out.append("%s %d %d %s %s %s" % (key + (inv.hex(), row.hex())))
print("\n".join(sorted(out)))
PY
}
ok "$([ "$(q "$F" "SELECT count(*) FROM vec_matrix")" -ge 1 ] && echo 0 || echo 1)" "the chunk vectors are stored"
ok "$(RAW=1 rows "$F" | grep -c "not where" | grep -qx 0; echo $?)" "the matrix reads back row by row as laid out"
is "$(rows "$H")" "$(rows "$F")" "the same chunk vectors"
for question in "How is an incoming request handled?" "Where is the cookie saved and expired?"; do
    a=$("$DRQA" --no-progress --quiet --policy offline --index "$F" --ask "$question" "$R" 2>&1)
    b=$("$DRQA" --no-progress --quiet --policy offline --index "$H" --ask "$question" "$R" 2>&1)
    is "$b" "$a" "--ask '$question': the same answer from both indexes"
done
# rag-window scores fixed windows of every file, in file order: same_a.py
# was deleted and restored, so the updated index numbers it after same_b.py
for mode in rag-window rag-function; do
    a=$("$DRQA" --no-progress --quiet --mode $mode --index "$F" --ask "How is a queued job retried?" "$R" 2>&1)
    b=$("$DRQA" --no-progress --quiet --mode $mode --index "$H" --ask "How is a queued job retried?" "$R" 2>&1)
    is "$b" "$a" "--mode $mode: the same answer from both indexes"
done
is "$(cat "$T/err.txt")" "" "nothing on stderr"

echo "1..$n"
exit $fail
