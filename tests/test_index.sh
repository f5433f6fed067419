#!/bin/sh
# test_index.sh: drqa-tui --index-only on temporary copies of the pyrepo
# fixture: exact counts and rows, warm and incremental updates compared with a
# fresh index of the same tree, an update killed half way, files that cannot be
# indexed, directory listings kept between walks (only changed directories are
# read again), a git work tree, the error cases, and no side files after a
# clean exit.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
# the program with the test hook DRQA_TEST_KILL_AFTER (mk/index.am)
. "$top_srcdir/tests/lib.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
DUMP="$PYTHON3 $top_srcdir/tests/index_dump.py"
q() { sqlite3 -batch "$1" "$2"; }
# the same with the functions that read file texts (drqa_text, the view chunks' text)
qt() { "$PYTHON3" "$top_srcdir/tests/index_sql.py" "$1" "$2"; }
# counts FILE: the summary line compared below
counts() {
    $PYTHON3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f, s, e = d["files"], d["symbols"], d["edges"]
print("files=%d unchanged=%d updated=%d added=%d deleted=%d parsed=%d skipped=%d" % (
    f["indexed"], f["unchanged"], f["updated"], f["added"], f["deleted"], f["parsed"], f["skipped"]))
print("classes=%d functions=%d methods=%d variables=%d imports=%d calls=%d" % (
    s["classes"], s["functions"], s["methods"], s["variables"], d["imports"], d["calls"]))
print(" ".join("%s=%d/%d" % (k, e[k]["resolved"], e[k]["unresolved"]) for k in ("calls", "inherits", "imports", "contains")))
print("parse_errors=%d/%d decode_errors=%d/%d" % (d["parse_errors"]["files"], d["parse_errors"]["nodes"],
      d["decode_errors"]["files"], d["decode_errors"]["bytes"]))' "$1" | tr '\n' ' ' | sed 's/ $//'
}
index() {  # index REPO INDEX [extra options]: writes $T/out.json, returns the status
    r=$1 i=$2; shift 2
    "$DRQA" --json --no-progress --index "$i" "$@" --index-only "$r" >"$T/out.json" 2>"$T/err.txt"
}

SYMS="classes=16 functions=19 methods=99 variables=20 imports=33 calls=215"
EDGES="calls=68/147 inherits=4/3 imports=24/9 contains=112/0"

# ---- a fresh index of the fixture ----------------------------------------------
R="$T/repo"
cp -R "$FIX" "$R"
I="$T/idx/a.sqlite"
index "$R" "$I"
ok $? "indexing the fixture succeeds"
is "$(counts "$T/out.json")" \
   "files=15 unchanged=0 updated=0 added=15 deleted=0 parsed=15 skipped=0 $SYMS $EDGES parse_errors=1/4 decode_errors=0/0" \
   "fresh index: file, symbol and edge counts"
is "$(jget "$T/out.json" rebuilt)" "true" "a new index is reported as built from scratch"
is "$(stat -c %a "$T/idx")" "700" "the index directory is owner-only"
is "$(stat -c %a "$I")" "600" "the index file is owner-only"
is "$(q "$I" "SELECT value FROM meta WHERE key = 'repo_root'")" "$(cd "$R" && pwd -P)" "meta records the repository root"
is "$(q "$I" "SELECT count(*) FROM meta WHERE key IN ('indexed_at', 'drqa_version', 'grammars') AND value <> ''")" "3" \
   "meta records time, version and grammars"
# a fresh build creates its secondary indexes after resolving; FindReferences'
# two edge lookups must find them (partial indexes serve only queries whose
# WHERE implies theirs)
is "$(q "$I" "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges' ORDER BY name" | tr '\n' ' ')" \
   "edges_dst edges_target " "a fresh index has the edges indexes, created after resolving"
plan() { q "$I" "EXPLAIN QUERY PLAN $1" | tr '\n' ' '; }
like "$(plan "SELECT line FROM edges WHERE kind = 0 AND dst_id = 1")" "USING INDEX edges_dst" \
   "callers of a definition are read through edges_dst"
like "$(plan "SELECT line FROM edges WHERE kind = 0 AND dst_id IS NULL AND target_name = 'save'")" \
   "USING INDEX edges_target" "unresolved calls by name are read through edges_target"
like "$(plan "DELETE FROM edges WHERE id BETWEEN (SELECT lo FROM edge_runs WHERE file_id = 3)
              AND (SELECT hi FROM edge_runs WHERE file_id = 3) AND src_file = 3")" \
   "SEARCH edges USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)" "a file's edges are deleted by their run of ids"
is "$(q "$I" "SELECT count(*) FROM edge_runs r JOIN (SELECT src_file, min(id) AS a, max(id) AS b, count(*) AS n
              FROM edges GROUP BY src_file) e ON e.src_file = r.file_id WHERE e.a = r.lo AND e.b = r.hi")" \
   "$(q "$I" "SELECT count(DISTINCT src_file) FROM edges")" "every file's edges are one run, recorded in edge_runs"

is "$(qt "$I" "SELECT start_line || '-' || end_line || '|' || body_line || '|' || signature || '|' || ifnull(decorators, '-') || '|' || drqa_doc(docstring)
              FROM symbols WHERE qualname = 'SessionBase.flush' AND kind = 'method'")" \
   "67-74|67|def flush(self)|-|Remove the current session data from the store and regenerate the key.

Used when the user logs out." "method row: span, signature, docstring"
# compact stored forms (src/store_rows.h), read back as written by the
# generated columns: a qualified name without its name, a signature without
# its keyword and name, the docstring packed, kinds as numbers
is "$(q "$I" "SELECT kind_s || '|' || quote(qualname_s) || '|' || unicode(signature_s) || substr(signature_s, 2) || '|' ||
              typeof(docstring) || '|' || (length(docstring) < 99)
              FROM symbols WHERE qualname = 'SessionBase.flush'")" "2|'SessionBase.'|1(self)|blob|1" \
   "a method is stored as kind 2, 'SessionBase.', its signature as keyword 1 and '(self)', its docstring packed"
is "$(q "$I" "SELECT quote(qualname_s) || '|' || qualname FROM symbols WHERE qualname = 'check_password'")" \
   "NULL|check_password" "a top-level qualified name is not stored: it is the name"
is "$(q "$I" "SELECT count(*) FROM symbols WHERE qualname_s = qualname OR (signature_s = signature AND signature LIKE 'def %')")" \
   "0" "no qualified name or def signature is stored whole"
is "$(q "$I" "SELECT typeof(c.kind_s) || typeof(c.hash_s) || length(c.hash_s) || '|' || c.kind || '|' || typeof(c.head)
              FROM chunk_spans c JOIN symbols s ON s.id = c.symbol_id WHERE s.qualname = 'SessionBase.flush'")" \
   "integerblob8|function|integer" "a chunk's kind is a number, its hash 8 bytes, a method's class header line an offset"
is "$(q "$I" "SELECT count(*) FROM chunk_spans WHERE hash NOT GLOB '[0-9a-f]*' OR length(hash) <> 16")" "0" \
   "every chunk hash reads back as 16 hex digits"
is "$(q "$I" "SELECT start_line || '-' || end_line || '|' || body_line || '|' || decorators FROM symbols WHERE qualname = 'SessionBase.session_key'")" \
   "27-30|28|property" "a @property method starts at its decorator"
is "$(q "$I" "SELECT decorators || '|' || is_async || '|' || signature FROM symbols WHERE qualname = 'Client.aget'")" \
   "retry(times=2)|1|async def aget(self, path)" "decorator with arguments on an async method"
is "$(q "$I" "SELECT p.qualname FROM symbols s JOIN symbols p ON p.id = s.parent_id WHERE s.qualname = 'Client.Response.ok'")" \
   "Client.Response" "a nested class's method has the nested class as parent"
is "$(q "$I" "SELECT s.bases || '|' || s.decorators FROM symbols s WHERE s.qualname = 'DatabaseSession'")" \
   'SessionBase|backends.register("db")' "class bases and decorator"

# imports
is "$(q "$I" "SELECT r.path FROM imports i JOIN files f ON f.id = i.file_id JOIN files r ON r.id = i.resolved_file_id
              WHERE f.path = 'tinyweb/sessions/base.py' AND i.level = 2 AND i.module = 'core' AND i.name = 'Base'")" \
   "tinyweb/core/__init__.py" "'from ..core import Base' resolves to the package's __init__"
is "$(q "$I" "SELECT r.path FROM imports i JOIN files f ON f.id = i.file_id JOIN files r ON r.id = i.resolved_file_id
              WHERE f.path = 'tinyweb/app.py' AND i.level = 1 AND i.module = '' AND i.name = 'auth'")" \
   "tinyweb/auth.py" "'from . import auth' resolves to the module file"
is "$(q "$I" "SELECT r.path FROM imports i JOIN files f ON f.id = i.file_id JOIN files r ON r.id = i.resolved_file_id
              WHERE f.path = 'tinyweb/sessions/db.py' AND i.module = 'tinyweb.sessions.base' AND i.name = 'UpdateError'")" \
   "tinyweb/sessions/base.py" "an absolute import of the package's own module resolves"
is "$(q "$I" "SELECT count(*) FROM imports WHERE module IN ('logging', 'time', 're') AND resolved_file_id IS NULL")" "3" \
   "standard library imports stay unresolved"
is "$(q "$I" "SELECT substr('..........', 1, i.level) || i.module || '>' || d.path FROM imports i
              JOIN files s ON s.id = i.file_id JOIN files d ON d.id = i.resolved_file_id
              WHERE s.path = 'tinyweb/app.py' AND i.line = 6")" \
   ".>tinyweb/auth.py" "an import links the two files"

# inheritance
inh() {
    q "$I" "SELECT coalesce(e.target, e.target_name) || '>' || d.qualname || '@' || f.path FROM edges e
            JOIN symbols s ON s.id = e.src_id JOIN symbols d ON d.id = e.dst_id JOIN files f ON f.id = e.dst_file
            WHERE e.kind = 1 AND s.qualname = '$1'"
}
is "$(inh Scaffold)" "CoreBase>Base@tinyweb/core/base.py" "a base imported under an alias resolves across files"
is "$(inh SessionBase)" "Base>Base@tinyweb/core/base.py" "a base re-exported by a package __init__ resolves to its definition"
is "$(inh DatabaseSession)" "SessionBase>SessionBase@tinyweb/sessions/base.py" "second level of the chain"
is "$(inh App)" "Scaffold>Scaffold@tinyweb/core/scaffold.py" "App inherits Scaffold"
is "$(q "$I" "SELECT count(*) FROM edges WHERE kind = 1 AND target_name = 'Exception' AND dst_id IS NULL")" "3" \
   "builtin bases stay unresolved"

# calls
call() {
    q "$I" "SELECT d.qualname || '@' || f.path FROM edges e JOIN symbols s ON s.id = e.src_id
            JOIN symbols d ON d.id = e.dst_id JOIN files f ON f.id = e.dst_file
            WHERE e.kind = 0 AND s.qualname = '$1' AND coalesce(e.target, e.target_name) = '$2'"
}
is "$(call SessionBase.flush self.delete)" "SessionBase.delete@tinyweb/sessions/base.py" "self.method() resolves in its class"
is "$(call DatabaseSession.save self.get_expiry_date)" "SessionBase.get_expiry_date@tinyweb/sessions/base.py" \
   "self.method() resolves through a base class in another file"
is "$(call App.__init__ self.get_setting)" "Base.get_setting@tinyweb/core/base.py" "self.method() through a three-level chain"
is "$(call authenticate check_password)" "check_password@tinyweb/utils.py" "a call of an imported function resolves across files"
is "$(call DatabaseSession.__init__ 'super().__init__')" "SessionBase.__init__@tinyweb/sessions/base.py" "super().m() resolves in the base"
is "$(call check_password make_password)" "make_password@tinyweb/utils.py" "a call within the file"
is "$(q "$I" "SELECT ifnull(e.dst_id, 'NULL') || '|' || e.target_name FROM edges e JOIN symbols s ON s.id = e.src_id
              WHERE e.kind = 0 AND s.qualname = 'logout' AND e.target = 'request.session.flush'")" "NULL|flush" \
   "a call on an object of unknown type stays unresolved with its name"
is "$(q "$I" "SELECT count(*) FROM symbols s JOIN symbols d ON d.parent_id = s.id
              WHERE s.qualname = 'SessionBase' AND d.qualname = 'SessionBase.flush'")" "1" \
   "a method's parent is its class"
is "$(q "$I" "SELECT count(*) FROM edges WHERE kind NOT IN (0, 1)")" "0" \
   "edges hold calls (0) and inherits (1) only: containment is parent_id, imports are in imports"
is "$(q "$I" "SELECT count(*) FROM edges WHERE target = target_name OR target_name IS NULL")" "0" \
   "a target that is its own last component is stored once (target NULL)"
is "$(q "$I" "SELECT target_s FROM edges e JOIN symbols s ON s.id = e.src_id
              WHERE e.kind = 0 AND s.qualname = 'logout' AND e.target = 'request.session.flush'")" "request.session." \
   "a dotted target is stored without its last component"
is "$(q "$I" "SELECT count(*) FROM symbols WHERE parent_id IS NOT NULL")" "112" \
   "the summary's contains count is the symbols with a parent"

# chunks and full-text search
is "$(qt "$I" "SELECT substr(c.text, 1, instr(c.text, char(10)) - 1) FROM chunks c JOIN symbols s ON s.id = c.symbol_id
              WHERE s.qualname = 'SessionBase.flush'")" "class SessionBase(Base):" "a method chunk opens with its class header"
is "$(qt "$I" "SELECT (instr(c.text, 'def add(self, pattern, endpoint, methods=None): ...') > 0) || (instr(c.text, 'self.rules.append(rule)') > 0)
              FROM chunks c JOIN symbols s ON s.id = c.symbol_id WHERE s.qualname = 'Router' AND c.kind = 'class'")" "10" \
   "a class chunk holds method signatures without bodies"
is "$(qt "$I" "SELECT kind || ':' || count(*) FROM chunks GROUP BY kind ORDER BY kind" | tr '\n' ' ')" \
   "class:16 function:111 module:15 text:1 " "chunks per kind"
# the FTS table keeps only its index (its content is computed from the chunks):
# the rows it indexed are those of its docsize table
is "$(q "$I" "SELECT count(*) || ' ' || count(c.id) FROM chunks_fts_docsize d LEFT JOIN chunk_spans c ON c.id = d.id")" \
   "$(qt "$I" "SELECT count(*) || ' ' || count(*) FROM chunks")" "one FTS row per chunk"
is "$(q "$I" "SELECT count(*) FROM sqlite_master WHERE name = 'chunks_fts_content'")" "0" \
   "the FTS table keeps no copy of the text"
is "$(qt "$I" "SELECT s.qualname FROM chunks_fts x JOIN chunks c ON c.id = x.rowid JOIN symbols s ON s.id = c.symbol_id
              WHERE chunks_fts MATCH 'name:flush' ORDER BY s.qualname" | tr '\n' ' ')" "SessionBase.flush " \
   "FTS name column finds the method"
is "$(q "$I" "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'path:session AND body:flush'")" "2" \
   "FTS path and body columns"
is "$(PYTHONPATH="$top_srcdir/tests" $PYTHON3 -c 'import index_sql, sys
db = index_sql.connect(sys.argv[1])
bad = 0
for text, h in db.execute("SELECT text, hash FROM chunks"):
    v = 1469598103934665603  # util.c hash64 offset basis
    for b in text.encode():
        v = ((v ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    bad += "%016x" % v != h
print(bad)' "$I")" "0" "chunk hashes are hash64 of their text"
is "$(q "$I" "SELECT kind || ':' || typeof(text) || ':' || count(*) FROM chunk_spans WHERE text IS NOT NULL
              GROUP BY kind, typeof(text)" | tr '\n' ' ')" \
   "class:blob:16 " "only class outlines store their text, packed; every other chunk is a span of its file's text"
packed=$(q "$I" "SELECT sum(length(text)) FROM chunk_spans WHERE text IS NOT NULL")
plain=$(qt "$I" "SELECT sum(length(CAST(text AS BLOB))) FROM chunks WHERE kind = 'class'")
echo "# class outlines: $plain bytes, $packed packed"
test "$((packed * 4))" -lt "$plain"
ok $? "packed against their classes' lines, the outlines take less than a quarter of their bytes"

# ---- an index of an older schema is rebuilt, with a message -----------------------------
cp "$I" "$T/idx/old.sqlite"
q "$T/idx/old.sqlite" "PRAGMA user_version = 6"
"$DRQA" --no-progress --index "$T/idx/old.sqlite" --action ListFiles '{}' "$R" >/dev/null 2>"$T/err.txt"
is "$?" "0" "an index of schema 6 is used after a rebuild"
grep -q "written in another format (schema 6); it was rebuilt" "$T/err.txt"
ok $? "the rebuild is said on stderr"
is "$(q "$T/idx/old.sqlite" "PRAGMA user_version")" "$(q "$I" "PRAGMA user_version")" "and it has the current schema"

# ---- warm, touched, incremental --------------------------------------------------
$DUMP "$I" >"$T/d0.txt"
index "$R" "$I"
is "$(counts "$T/out.json")" \
   "files=15 unchanged=15 updated=0 added=0 deleted=0 parsed=0 skipped=0 $SYMS $EDGES parse_errors=1/4 decode_errors=0/0" \
   "warm run: nothing parsed"
$DUMP "$I" >"$T/d1.txt"
cmp -s "$T/d0.txt" "$T/d1.txt"
ok $? "warm run leaves the index as it was"
touch -d '2001-01-01 00:00:00' "$R/tinyweb/utils.py"
index "$R" "$I"
is "$(counts "$T/out.json")" \
   "files=15 unchanged=15 updated=0 added=0 deleted=0 parsed=0 skipped=0 $SYMS $EDGES parse_errors=1/4 decode_errors=0/0" \
   "a touched file with the same content is not parsed (counts taken from the tables agree)"

# edit, add, delete, rename
printf '\n\ndef whoami(request):\n    """The user of the request."""\n    return authenticate({}, request.user, "")\n' >>"$R/tinyweb/auth.py"
cat >"$R/tinyweb/extra.py" <<'EOF'
"""Sessions kept in a signed cookie."""
from .sessions.base import SessionBase as SB


class CookieSession(SB):
    def flush(self):
        super().flush()
        self.cycle_key()
EOF
rm "$R/tinyweb/testing.py"
mv "$R/tinyweb/core/scaffold.py" "$R/tinyweb/core/blueprint.py"
sed -i 's/from .core.scaffold import/from .core.blueprint import/' "$R/tinyweb/app.py"
index "$R" "$I"
is "$(jget "$T/out.json" files.indexed) $(jget "$T/out.json" files.unchanged) $(jget "$T/out.json" files.updated) $(jget "$T/out.json" files.added) $(jget "$T/out.json" files.deleted)" \
   "15 11 2 2 2" "incremental run: 2 updated, 2 added, 2 deleted"
I2="$T/idx/fresh.sqlite"
index "$R" "$I2"
$DUMP "$I" >"$T/inc.txt"
$DUMP "$I2" >"$T/fresh.txt"
cmp -s "$T/inc.txt" "$T/fresh.txt"
ok $? "the updated index equals a fresh index of the new tree"
[ $fail -eq 0 ] || diff "$T/inc.txt" "$T/fresh.txt" | head -20 | sed 's/^/# /'
is "$(inh App)" "Scaffold>Scaffold@tinyweb/core/blueprint.py" "a renamed base class file is followed"
is "$(call CookieSession.flush 'super().flush')" "SessionBase.flush@tinyweb/sessions/base.py" "calls of an added file resolve"
is "$(q "$I" "SELECT count(*) FROM files WHERE path IN ('tinyweb/testing.py', 'tinyweb/core/scaffold.py')")" "0" "deleted files are gone"
is "$(q "$I" "SELECT count(*) FROM symbols WHERE qualname LIKE 'Client%'")" "0" "with their symbols"

# ---- an update killed half way ----------------------------------------------------------
for f in app auth utils routing; do printf '\nMARKER_%s = 1\n' "$f" >>"$R/tinyweb/$f.py"; done
$DUMP "$I" >"$T/before.txt"
# drqa-tui itself has no test hook: the variable changes nothing
DRQA_TEST_KILL_AFTER=1 "$DRQA" --no-progress --index "$T/idx/nohook.sqlite" --index-only "$R" >/dev/null 2>&1
is "$?" "0" "drqa-tui ignores DRQA_TEST_KILL_AFTER (the hook is only in the test build)"
DRQA_TEST_KILL_AFTER=2 "$DRQA_HOOKS" --no-progress --index "$I" --index-only "$R" >/dev/null 2>&1
is "$?" "137" "the update is killed after writing two files"
$DUMP "$I" >"$T/after-kill.txt"
cmp -s "$T/before.txt" "$T/after-kill.txt"
ok $? "after the kill the index holds the previous update"
is "$(q "$I" "SELECT count(*) FROM symbols WHERE name LIKE 'MARKER%'")" "0" "no row of the killed update is visible"
index "$R" "$I"
is "$(jget "$T/out.json" files.updated)" "4" "the next run updates the four files"
index "$R" "$I2"
$DUMP "$I" >"$T/inc.txt"
$DUMP "$I2" >"$T/fresh.txt"
cmp -s "$T/inc.txt" "$T/fresh.txt"
ok $? "and then equals a fresh index"
I3="$T/idx/killed-first.sqlite"
DRQA_TEST_KILL_AFTER=3 "$DRQA_HOOKS" --no-progress --index "$I3" --index-only "$R" >/dev/null 2>&1
is "$?" "137" "a first index can be killed too"
test ! -e "$I3"
ok $? "a killed first index leaves no index file behind"
test -s "$I3.tmp"
ok $? "but its side file, not empty"
index "$R" "$I3"
ok $? "the next run builds it (emptying the side file)"
$DUMP "$I3" >"$T/inc.txt"
cmp -s "$T/inc.txt" "$T/fresh.txt"
ok $? "and it equals a fresh index"

# ---- first builds racing: one builds, the others wait and find it ------------------------
C="$T/idx/race.sqlite"
# (stderr apart: a run that waits for the builder says so there)
for k in 1 2 3; do "$DRQA" --json --no-progress --index "$C" --index-only "$FIX" >"$T/race$k.json" 2>"$T/race$k.err" & done
wait
is "$(for k in 1 2 3; do jget "$T/race$k.json" files.added; done | sort | tr '\n' ' ')" "0 0 15 " \
   "three simultaneous first runs: one builds the index, two find it built"
test ! -e "$C.tmp"
ok $? "no side file is left"

# ---- files that cannot be indexed, directories that are not the project's ----------------
P="$T/prob"
cp -R "$FIX" "$P"
printf 'x = 1\000\000binary\n' >"$P/tinyweb/bin.py"
printf 'NAME = "caf\351"\n# \377\376\n' >"$P/tinyweb/badutf8.py"
$PYTHON3 -c 'import sys; open(sys.argv[1], "w").write("x = 1\n" * 200000)' "$P/big.py"
ln -s ../tinyweb "$P/tinyweb/loop"
ln -s a_loop.py "$P/tinyweb/b_loop.py"
ln -s b_loop.py "$P/tinyweb/a_loop.py"
echo 'SECRET = 1' >"$T/outside_target.py"
ln -s "$T/outside_target.py" "$P/tinyweb/outside.py"
ln -s tinyweb/core "$P/corelink"
# left out by what they hold or by their name alone when that is certain
for d in node_modules .tox .venv venv __pycache__ .git pkg.egg-info .mypy_cache; do
    mkdir -p "$P/$d" && echo 'HIDDEN = 1' >"$P/$d/hidden.py"
done
echo '{}' >"$P/package.json"
touch "$P/.venv/pyvenv.cfg" "$P/pkg.egg-info/PKG-INFO" "$P/.mypy_cache/CACHEDIR.TAG"
mkdir -p "$P/venv/bin" && touch "$P/venv/bin/activate"
# a common name alone is no evidence: build/ and dist/ may be packages
for d in build dist; do
    mkdir -p "$P/$d" && echo 'SHOWN = 1' >"$P/$d/shown.py"
done
mkdir -p "$P/myenv" && touch "$P/myenv/pyvenv.cfg" && echo 'HIDDEN = 1' >"$P/myenv/hidden.py"
echo 'x = 1' >"$P/tinyweb/unreadable.py"
chmod 000 "$P/tinyweb/unreadable.py"
RUNAS=""
UNREADABLE="tinyweb/unreadable.py: unreadable (Permission denied)
"
if [ "$(id -u)" = 0 ]; then
    # root reads everything: run this index as nobody so the file is unreadable
    if command -v setpriv >/dev/null 2>&1; then
        RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups"
        chmod 755 "$T"
        mkdir -p "$T/pidx" && chmod 777 "$T/pidx"
    else
        echo "# running as root without setpriv: the unreadable file is read"
        rm -f "$P/tinyweb/unreadable.py"
        UNREADABLE=""
    fi
fi
PI="$T/pidx/p.sqlite"
mkdir -p "$T/pidx"
$RUNAS "$DRQA" --json --no-progress --index "$PI" --index-only "$P" >"$T/out.json" 2>"$T/err.txt"
ok $? "indexing a tree with problem files succeeds"
NSKIP=8
[ -n "$UNREADABLE" ] || NSKIP=7
is "$(jget "$T/out.json" files.indexed) $(jget "$T/out.json" files.skipped)" "18 $NSKIP" "18 files indexed (README.md as text), the problem files skipped"
is "$($PYTHON3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["skipped"]: print("%s: %s" % (s["path"], s["reason"]))' "$T/out.json")" \
"big.py: too large (1200000 bytes > 1048576)
corelink: symlink to a directory listed under its own path
tinyweb/a_loop.py: symlink loop
tinyweb/b_loop.py: symlink loop
tinyweb/bin.py: binary (NUL byte in the first 8 KiB)
tinyweb/loop: symlink loop
tinyweb/outside.py: symlink outside the repository
${UNREADABLE%
}" "each skipped file with its reason"
is "$(jget "$T/out.json" decode_errors.files) $(jget "$T/out.json" decode_errors.bytes)" "1 3" "invalid UTF-8 bytes are counted"
is "$(qt "$PI" "SELECT decode_errors || '|' || (instr(drqa_text(ztext, tlen), char(65533)) > 0) FROM files WHERE path = 'tinyweb/badutf8.py'")" "3|1" \
   "invalid bytes are stored as U+FFFD"
is "$(qt "$PI" "SELECT count(*) FROM files WHERE drqa_text(ztext, tlen) LIKE '%HIDDEN%'")" "0" "caches, virtualenvs, node_modules and VCS directories are not walked"
is "$(qt "$PI" "SELECT group_concat(path, ' ') FROM (SELECT path FROM files WHERE drqa_text(ztext, tlen) LIKE '%SHOWN%' ORDER BY path)")" \
   "build/shown.py dist/shown.py" "directories named build and dist are walked"
"$DRQA" --no-progress --index "$PI" --index-only "$P" >"$T/out.txt" 2>&1
grep -q '^  tinyweb/outside.py: symlink outside the repository$' "$T/out.txt"
ok $? "the text report lists each skipped path"
grep -q '^decode errors 3 bytes in 1 files$' "$T/out.txt"
ok $? "the text report counts decode errors"

# ---- kept directory listings: a walk reads only directories that changed ---------------
# Directories are dated two hours back after they change (old_dirs) so that
# their listings are trusted: a directory changed within a couple of seconds
# of a walk is read again by the next one. (Dating one back changes its ctime,
# which also has it read again once.)
W="$T/walk"
cp -R "$FIX" "$W"
WI="$T/idx/walk.sqlite"
WF="$T/idx/walk-fresh.sqlite"
old_dirs() { for d in "$@"; do touch -d '2 hours ago' "$W/$d"; done; }
# dirs: directories read and taken from their kept listing by the last run
dirs() { echo "$(jget "$T/out.json" dirs.listed) $(jget "$T/out.json" dirs.cached)"; }
# same_as_fresh WHAT: the index of the walked tree equals a fresh index of it
same_as_fresh() {
    rm -f "$WF"*
    "$DRQA" --json --no-progress --index "$WF" --index-only "$W" >/dev/null 2>&1
    $DUMP "$WI" >"$T/walk-inc.txt"
    $DUMP "$WF" >"$T/walk-fresh.txt"
    cmp -s "$T/walk-inc.txt" "$T/walk-fresh.txt"
    ok $? "$1"
    cmp -s "$T/walk-inc.txt" "$T/walk-fresh.txt" || diff "$T/walk-inc.txt" "$T/walk-fresh.txt" | head -10 | sed 's/^/# /'
}
drow() { q "$WI" "SELECT count(*) FROM dirs WHERE CAST(path AS TEXT) = '$1'"; }
find "$W" -type d -exec touch -d '2 hours ago' {} +
index "$W" "$WI"
is "$(dirs) $(q "$WI" "SELECT count(*) FROM dirs")" "5 0 5" "a first walk reads every directory and keeps each listing"
index "$W" "$WI"
is "$(dirs)" "0 5" "a warm run reads no directory: every listing is kept"
is "$(jget "$T/out.json" files.unchanged) $(jget "$T/out.json" files.parsed)" "15 0" "and finds every file unchanged"

echo 'ADDED = 1' >"$W/tinyweb/core/added.py"
old_dirs tinyweb/core
index "$W" "$WI"
is "$(dirs) $(jget "$T/out.json" files.added)" "1 4 1" "a file added to a kept directory: that directory is read again, the file indexed"
same_as_fresh "after adding a file to a kept directory the index equals a fresh one"

mkdir "$W/tinyweb/sessions/backends"
printf 'from ..base import SessionBase\n\n\nclass FileSession(SessionBase):\n    pass\n' >"$W/tinyweb/sessions/backends/file.py"
old_dirs tinyweb/sessions tinyweb/sessions/backends
index "$W" "$WI"
is "$(dirs) $(jget "$T/out.json" files.added) $(drow tinyweb/sessions/backends)" "2 4 1 1" \
   "a new directory: it and its parent are read, its file indexed, its listing kept"
same_as_fresh "after adding a directory the index equals a fresh one"

rm "$W/tinyweb/testing.py"
old_dirs tinyweb
index "$W" "$WI"
is "$(dirs) $(jget "$T/out.json" files.deleted)" "1 5 1" "a deleted file is noticed"
same_as_fresh "after deleting a file the index equals a fresh one"

mv "$W/tinyweb/sessions" "$W/tinyweb/store"
sed -i 's/from \.sessions/from .store/' "$W"/tinyweb/*.py
old_dirs tinyweb tinyweb/store tinyweb/store/backends
index "$W" "$WI"
is "$(dirs) $(jget "$T/out.json" files.added) $(jget "$T/out.json" files.deleted)" "3 3 4 4" \
   "a renamed directory: it, what it holds and its parent are read, its files move"
is "$(drow tinyweb/sessions) $(drow tinyweb/sessions/backends) $(drow tinyweb/store) $(drow tinyweb/store/backends)" "0 0 1 1" \
   "the old directories' listings are dropped, the new ones kept"
same_as_fresh "after renaming a directory the index equals a fresh one"

rm -r "$W/tinyweb/store/backends"
old_dirs tinyweb/store
index "$W" "$WI"
is "$(dirs) $(jget "$T/out.json" files.deleted) $(drow tinyweb/store/backends)" "1 4 1 0" \
   "a removed directory: its files and its listing are gone"
same_as_fresh "after removing a directory the index equals a fresh one"

# a file of no language changes a directory but not the index: only its listing is written
echo notes >"$W/tinyweb/NOTES.dat"
old_dirs tinyweb
before=$(q "$WI" "SELECT ctime_ns FROM dirs WHERE CAST(path AS TEXT) = 'tinyweb'")
index "$W" "$WI"
is "$(dirs) $(jget "$T/out.json" files.unchanged)" "1 4 15" "a non-source file added: its directory is read again"
ok "$([ "$(q "$WI" "SELECT ctime_ns FROM dirs WHERE CAST(path AS TEXT) = 'tinyweb'")" != "$before" ]; echo $?)" \
   "and its new listing is kept though no file changed"
index "$W" "$WI"
is "$(dirs)" "0 5" "so that the next run reads nothing"

# racy: a directory changed moments before the walk is not trusted next time
touch "$W/tinyweb/core"
index "$W" "$WI"
is "$(dirs) $(q "$WI" "SELECT mtime_ns FROM dirs WHERE CAST(path AS TEXT) = 'tinyweb/core'")" "1 4 -1" \
   "a directory changed within the racy window is read and its listing marked untrusted"
index "$W" "$WI"
is "$(jget "$T/out.json" dirs.listed)" "1" "so the next run reads it again"
old_dirs tinyweb/core
index "$W" "$WI"
index "$W" "$WI"
is "$(dirs)" "0 5" "once it is old enough its listing is trusted again"

# a kept listing does not hide a virtualenv made by adding bin/activate below it
mkdir -p "$W/env/bin"
echo 'ENVMOD = 1' >"$W/env/mod.py"
old_dirs . env env/bin
index "$W" "$WI"
is "$(q "$WI" "SELECT count(*) FROM files WHERE path = 'env/mod.py'")" "1" "a directory named env is project code"
touch "$W/env/bin/activate"
touch -d '2 hours ago' "$W/env/bin"
index "$W" "$WI"
is "$(jget "$T/out.json" dirs.listed) $(q "$WI" "SELECT count(*) FROM files WHERE path = 'env/mod.py'")" "0 0" \
   "until bin/activate makes it a virtualenv, seen through its kept listing"
same_as_fresh "with a virtualenv found through a kept listing the index equals a fresh one"

# a symlinked directory is walked under the link's path, its listing kept under that path
mkdir -p "$W/build/gen"
echo 'GEN = 1' >"$W/build/gen/g.py"
printf '/build/\n' >"$W/.ignore"
ln -s build/gen "$W/genlink"
ln -s ../tinyweb "$W/tinyweb/loop"
old_dirs . build build/gen tinyweb
index "$W" "$WI"
index "$W" "$WI"
is "$(dirs) $(drow genlink) $(q "$WI" "SELECT count(*) FROM files WHERE path = 'genlink/g.py'")" "0 7 1 1" \
   "a warm run takes a linked directory's listing from the record too"
is "$(q "$WI" "SELECT path || ': ' || reason FROM skipped")" "tinyweb/loop: symlink loop" "a link loop is still reported"
echo 'GEN2 = 1' >"$W/build/gen/g2.py"
index "$W" "$WI"
is "$(jget "$T/out.json" dirs.listed) $(jget "$T/out.json" files.added)" "1 1" "a file added behind the link is found"
same_as_fresh "with a linked directory the index equals a fresh one"

# a kept listing that cannot be decoded is not used
q "$WI" "UPDATE dirs SET entries = X'64' WHERE CAST(path AS TEXT) = 'tinyweb/core'"
index "$W" "$WI"
is "$(jget "$T/out.json" dirs.listed)" "2" "a listing that does not decode is read again (with genlink, changed moments ago)"
same_as_fresh "and the index equals a fresh one"

# listings kept under other rules (another set of languages) are not used
q "$WI" "UPDATE meta SET value = 'other' WHERE key = 'dirs_stamp'"
index "$W" "$WI"
is "$(jget "$T/out.json" dirs.cached) $(q "$WI" "SELECT value = '$(q "$WF" "SELECT value FROM meta WHERE key = 'dirs_stamp'")' FROM meta WHERE key = 'dirs_stamp'")" \
   "0 1" "listings kept under another stamp are read again and rewritten"

# ---- a git work tree: git's file list ------------------------------------------------------
if command -v git >/dev/null 2>&1; then
    G="$T/git"
    cp -R "$FIX" "$G"
    mkdir -p "$G/build" && echo 'GENERATED = 1' >"$G/build/gen.py"
    echo 'ignored_*.py' >"$G/.gitignore"
    echo 'X = 1' >"$G/ignored_one.py"
    (cd "$G" && git init -q && git add -A && git -c user.name=t -c user.email=t@example.org commit -qm fixture) >/dev/null 2>&1
    echo 'NEW = 1' >"$G/tinyweb/untracked.py"
    index "$G" "$T/idx/git.sqlite"
    is "$(q "$T/idx/git.sqlite" "SELECT count(*) || ' ' || sum(path = 'build/gen.py') || ' ' || sum(path = 'tinyweb/untracked.py') || ' ' || sum(path = 'ignored_one.py') FROM files")" \
       "17 1 1 0" "in a git work tree: tracked and untracked files, not ignored ones"
    is "$(jget "$T/out.json" dirs.listed) $(q "$T/idx/git.sqlite" "SELECT count(*) FROM dirs")" "0 0" \
       "git's listing reads and keeps no directory listing"
    # A folder the work tree ignores (a build or export folder inside a checkout)
    # holds a tree git says nothing about: it is walked.
    echo '/export*/' >>"$G/.gitignore"
    cp -R "$FIX" "$G/export-a"
    index "$G/export-a" "$T/idx/gitign.sqlite"
    is "$(q "$T/idx/gitign.sqlite" "SELECT count(*) FROM files")" \
       "15" "a folder ignored by the enclosing work tree is walked, not taken as empty"
fi

# ---- errors ------------------------------------------------------------------------------
"$DRQA" --no-progress --index "$T/idx/e.sqlite" --index-only "$T/nope" >/dev/null 2>"$T/err.txt"
is "$?" "2" "a missing repository is a usage error"
grep -q "'$T/nope' does not exist" "$T/err.txt"
ok $? "the message names the missing path"
"$DRQA" --no-progress --index "$T/idx/e.sqlite" --index-only "$R/README.md" >/dev/null 2>"$T/err.txt"
is "$?" "2" "a file as the repository is a usage error"
grep -q "README.md' is not a directory" "$T/err.txt"
ok $? "the message says it is not a directory"
"$DRQA" --no-progress --index /etc/passwd/x.sqlite --index-only "$R" >/dev/null 2>"$T/err.txt"
is "$?" "1" "an index path that cannot be created fails"
grep -q "/etc/passwd.*--index" "$T/err.txt"
ok $? "the message names the directory and suggests --index"
test ! -e "$T/idx/e.sqlite"
ok $? "failed runs create no index"
sqlite3 "$I" "PRAGMA user_version = 999"
index "$R" "$I"
ok $? "an index of another schema version is accepted"
is "$(jget "$T/out.json" rebuilt) $(jget "$T/out.json" files.added)" "true 15" "and rebuilt from scratch"
is "$(q "$I" "PRAGMA user_version")" "$(q "$I2" "PRAGMA user_version")" "with the current schema version"
$DUMP "$I" >"$T/inc.txt"
cmp -s "$T/inc.txt" "$T/fresh.txt"
ok $? "the rebuilt index equals a fresh one"

# ---- names across languages and Go packages --------------------------------------------
M="$T/mixed"
cp -R "$top_srcdir/tests/fixtures/mixed" "$M"
printf 'package inventory\n\nfunc Reset() {}\n' >"$M/go/inventory/reset.go"
printf 'package main\n\nfunc start() {}\n' >"$M/go/cmd/shopd/start.go"
printf 'package main\n\nimport inv "example.com/shop/inventory"\n\nfunc run() {\n\tinventory.Reset()\n\tinv.Reset()\n\tstart()\n}\n' \
    >"$M/go/cmd/shopd/run.go"
"$DRQA" --no-progress --index "$T/idx/mixed.sqlite" --index-only "$M" >/dev/null 2>"$T/err.txt"
ok $? "the mixed repository indexes"
# edges KIND TARGET: 'source file target -> destination file qualname' for each edge
edges() {
    q "$T/idx/mixed.sqlite" "SELECT f.path || ' ' || coalesce(e.target, e.target_name) || ' -> ' ||
        coalesce(g.path || ' ' || d.qualname, '-') FROM edges e JOIN files f ON f.id = e.src_file
        LEFT JOIN symbols d ON d.id = e.dst_id LEFT JOIN files g ON g.id = d.file_id
        WHERE e.kind = (CASE '$1' WHEN 'calls' THEN 0 ELSE 1 END) AND coalesce(e.target, e.target_name) = '$2'
        ORDER BY f.path, e.id" | tr '\n' ';'
}
is "$(edges inherits Store)" "web/src/cart.ts Store -> -;" \
   "a TypeScript base class never resolves to a Go struct of the same name"
is "$(edges calls Router)" "web/lib/router.js Router -> web/lib/router.js Router;web/src/cart.ts Router -> web/lib/router.js Router;" \
   "TypeScript still falls back on a unique JavaScript definition"
is "$(edges calls inventory.NewStore)" "go/cmd/shopd/main.go inventory.NewStore -> go/inventory/store.go NewStore;" \
   "a Go import binds the package's name: pkg.Func resolves to the package's function"
is "$(edges calls inventory.Reset)" "go/cmd/shopd/run.go inventory.Reset -> -;" \
   "an aliased Go import does not bind the package's name"
is "$(edges calls inv.Reset)" "go/cmd/shopd/run.go inv.Reset -> go/inventory/reset.go Reset;" \
   "the alias names the package, whose functions span its files"
is "$(edges calls start)" "go/cmd/shopd/run.go start -> go/cmd/shopd/start.go start;" \
   "a Go function resolves to another file of the same package"

# ---- row ids follow the paths, not the order the threads finish in -------------------
# a_big.py takes the first thread a while; the small files behind it finish
# first on the other thread. Written in completion order, their ids would
# come before a_big.py's, and ties broken by id would vary between builds.
O="$T/order"
mkdir -p "$O"
i=0
while [ $i -lt 6000 ]; do
    printf 'def f%d(a, b):\n    """doc %d"""\n    return g(a) + h(b) * %d\n\n' $i $i $i
    i=$((i + 1))
done >"$O/a_big.py"
for f in b c d e f g h i j k l m n o p; do printf 'def %s_fn():\n    return 1\n' "$f" >"$O/$f.py"; done
order_ok=0
for run in 1 2 3; do
    rm -f "$T/idx/order.sqlite"*
    "$DRQA" --no-progress --threads 2 --index "$T/idx/order.sqlite" --index-only "$O" >/dev/null 2>"$T/err.txt" || order_ok=1
    by_id=$(q "$T/idx/order.sqlite" "SELECT path FROM files ORDER BY id" | tr '\n' ' ')
    by_path=$(q "$T/idx/order.sqlite" "SELECT path FROM files ORDER BY path" | tr '\n' ' ')
    [ "$by_id" = "$by_path" ] || { order_ok=1; echo "# run $run: files by id: $by_id"; }
    chunks=$(qt "$T/idx/order.sqlite" "SELECT count(*) FROM (SELECT f.path AS path,
        lag(f.path) OVER (ORDER BY c.id) AS prev FROM chunks c JOIN files f ON f.id = c.file_id) WHERE prev > path")
    [ "$chunks" = 0 ] || { order_ok=1; echo "# run $run: $chunks chunks follow a chunk of a later path"; }
done
ok $order_ok "on two threads, file and chunk ids follow path order in three fresh builds"

# ---- big files go to one thread, the others pass them by -------------------------
# Three big files (over INDEX_BIG_SIZE, 128 KiB) among small ones: on two or
# three threads, one thread parses the big ones while the others go past them;
# every row comes out as one thread writes it, ids included.
B="$T/bigs"
mkdir -p "$B/pkg"
for name in a_one m_two pkg/z_three; do
    awk -v n="$name" 'BEGIN { for (i = 0; i < 5000; i++)
        printf "def %s_%d(a, b):\n    \"\"\"doc %d\"\"\"\n    return helper(a) + other(b) * %d\n\n", substr(n, 1, 1), i, i, i }' \
        >"$B/$name.py"
done
for f in b c d e f g h i j k l n o p q r; do
    printf 'from a_one import a_1\n\ndef %s_fn():\n    return a_1(1, 2)\n' "$f" >"$B/$f.py"
    printf 'def %s_in():\n    return 2\n' "$f" >"$B/pkg/$f.py"
done
big_ok=0
[ "$(wc -c <"$B/a_one.py")" -gt 131072 ] || { big_ok=1; echo "# a_one.py is not big"; }
all_rows() { q "$1" "SELECT * FROM files ORDER BY id; SELECT * FROM symbols ORDER BY id;
    SELECT * FROM chunk_spans ORDER BY id; SELECT * FROM edges ORDER BY id; SELECT * FROM imports ORDER BY id"; }
for th in 1 2 3; do
    rm -f "$T/idx/bigs$th.sqlite"*
    # a job no thread takes would hang the build: timeout makes that a failure
    timeout 120 "$DRQA" --no-progress --threads $th --index "$T/idx/bigs$th.sqlite" --index-only "$B" >/dev/null 2>"$T/err.txt" ||
        { big_ok=1; echo "# --threads $th failed: $(cat "$T/err.txt")"; }
done
one=$(all_rows "$T/idx/bigs1.sqlite")
[ "$(q "$T/idx/bigs1.sqlite" "SELECT count(*) FROM files")" = 35 ] || big_ok=1
for th in 2 3; do
    [ "$(all_rows "$T/idx/bigs$th.sqlite")" = "$one" ] || { big_ok=1; echo "# --threads $th wrote other rows than one thread"; }
done
ok $big_ok "three big files among small ones: on two and three threads, every row as one thread writes it"

# the parsed files waiting for the writer are bounded by what they hold
# (INDEX_HELD_BUDGET): with a budget of one byte, a small file is parsed only
# while nothing waits, or when it is the next the writer needs; the build
# neither hangs nor writes other rows, and its log says what waited
held_ok=0
for th in 2 3; do
    rm -f "$T/idx/held$th.sqlite"* "$T/held$th.log"
    DRQA_TEST_HELD_BUDGET=1 timeout 120 "$DRQA_HOOKS" --no-progress --threads $th --log "$T/held$th.log" \
        --index "$T/idx/held$th.sqlite" --index-only "$B" >/dev/null 2>"$T/err.txt" ||
        { held_ok=1; echo "# --threads $th with a one-byte budget failed: $(cat "$T/err.txt")"; }
    [ "$(all_rows "$T/idx/held$th.sqlite")" = "$one" ] || { held_ok=1; echo "# --threads $th wrote other rows"; }
    grep -q "results waiting for it held at most [0-9]* KB" "$T/held$th.log" ||
        { held_ok=1; echo "# --threads $th: no line on what waited in the log"; }
done
ok $held_ok "with a one-byte budget for the results waiting, two and three threads write every row as one does"

# nothing but big files: the second thread parses one beside the owner's as a guest
BB="$T/onlybig"
mkdir -p "$BB"
cp "$B/a_one.py" "$BB/a.py"; cp "$B/m_two.py" "$BB/b.py"; cp "$B/pkg/z_three.py" "$BB/c.py"; cp "$B/a_one.py" "$BB/d.py"
only_ok=0
for th in 1 2; do
    rm -f "$T/idx/onlybig$th.sqlite"*
    timeout 120 "$DRQA" --no-progress --threads $th --index "$T/idx/onlybig$th.sqlite" --index-only "$BB" >/dev/null 2>"$T/err.txt" ||
        { only_ok=1; echo "# --threads $th failed: $(cat "$T/err.txt")"; }
done
[ "$(q "$T/idx/onlybig1.sqlite" "SELECT count(*) FROM files")" = 4 ] || only_ok=1
[ "$(all_rows "$T/idx/onlybig2.sqlite")" = "$(all_rows "$T/idx/onlybig1.sqlite")" ] || only_ok=1
ok $only_ok "a tree of big files alone: on two threads, every row as one thread writes it"

# ---- a fresh build's edges: kept in memory and inserted resolved, or (past
# the memory budget) inserted as they come and resolved in place -------------------
E="$T/edges"
rm -rf "$E" && cp -R "$FIX" "$E"
rm -f "$T/idx/kept.sqlite"* "$T/idx/flushed.sqlite"*
"$DRQA" --no-progress --index "$T/idx/kept.sqlite" --index-only "$E" >/dev/null 2>"$T/err.txt"
DRQA_TEST_EDGE_BUDGET=2000 "$DRQA_HOOKS" --no-progress --index "$T/idx/flushed.sqlite" --index-only "$E" >/dev/null 2>"$T/err.txt"
rows() { q "$1" "SELECT * FROM edges ORDER BY id; SELECT * FROM imports ORDER BY id"; }
kept=$(rows "$T/idx/kept.sqlite")
ok "$([ -n "$kept" ] && [ "$(q "$T/idx/kept.sqlite" "SELECT count(*) FROM edges")" -gt 100 ]; echo $?)" \
   "the fixture has edges to compare"
is "$(rows "$T/idx/flushed.sqlite")" "$kept" \
   "edges kept in memory and resolved before the insert are the rows, ids included, of edges resolved in place"

# A clean exit leaves no -wal or -shm file beside the index (--index-only,
# --ask, an action call), while a reader in another process that still has
# the index open keeps them and goes on reading; the last connection to
# close removes them. (The front end's clean exit: tests/test_ui_line.sh.)
W="$T/wal"
mkdir -p "$W"
WIDX="$W/idx.sqlite"
sides() { ls "$W" | grep -E '^idx\.sqlite-(wal|shm)$' | tr '\n' ' '; }

"$DRQA" --index-only --no-progress --index "$WIDX" "$FIX" >/dev/null 2>"$W/err"
ok $? "--index-only builds the index"
is "$(sides)" "" "--index-only leaves no -wal or -shm file"
"$DRQA" --policy offline --iterations 4 --index "$WIDX" --ask "How are URL rules registered?" "$FIX" >"$W/ans" 2>"$W/err"
ok $? "--ask answers"
is "$(sides)" "" "--ask leaves no -wal or -shm file"
"$DRQA" --index "$WIDX" --action FindClass '{"class_name":"App"}' "$FIX" >/dev/null 2>"$W/err"
ok $? "an action call runs"
is "$(sides)" "" "an action call leaves no -wal or -shm file"

# a reader elsewhere: it holds a read transaction across a whole --ask
"$PYTHON3" - "$WIDX" "$W" <<'PY' &
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN")
before = db.execute("SELECT count(*) FROM files").fetchone()[0]
open(os.path.join(sys.argv[2], "ready"), "w").close()
go = os.path.join(sys.argv[2], "go")
for _ in range(3000):          # bounded: 60 s at most
    if os.path.exists(go):
        break
    time.sleep(0.02)
after = db.execute("SELECT count(*) FROM files").fetchone()[0]
db.execute("COMMIT")
open(os.path.join(sys.argv[2], "read"), "w").write("%d %d\n" % (before, after))
db.close()
PY
reader=$!
i=0
while [ ! -e "$W/ready" ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done
"$DRQA" --policy offline --iterations 4 --index "$WIDX" --ask "How are URL rules registered?" "$FIX" >/dev/null 2>"$W/err"
ok $? "--ask answers while another process reads the index"
is "$(sides)" "idx.sqlite-shm idx.sqlite-wal " "the reader's files are left alone while it has the index open"
touch "$W/go"
wait $reader
ok $? "the reader goes on reading and closes without an error"
set -- $(cat "$W/read" 2>/dev/null)
[ "${1:-0}" -gt 0 ] && [ "${1:-0}" = "${2:-}" ]
ok $? "it read the same files before and after ($*)"
is "$(sides)" "" "its close, the last, removes them"

# --index PATH whose directories do not exist: they are made, private (the man page says so)
"$DRQA" --index "$T/made/deeper/ix.sqlite" --no-progress --index-only "$FIX" >/dev/null 2>&1
ok $? "--index under directories that do not exist: indexed"
is "$(stat -c %a "$T/made" "$T/made/deeper" 2>&1 | tr '\n' ' ')" "700 700 " "the directories are made with mode 0700"

echo "1..$n"
exit $fail
