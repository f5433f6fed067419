#!/bin/sh
# test_scan_ignore.sh: which files of a tree are indexed, on trees made here.
# Outside git: directories left out by evidence (a virtualenv, node_modules
# beside a package.json, __pycache__), never by a common name such as build or
# dist; .gitignore and .ignore files read with git's semantics (nested files,
# negation, '**', directory-only, anchored and escaped patterns). Inside git:
# git's listing. Everywhere: .drqaignore, --no-ignore, the count of paths each
# rule left out, and --explain PATH. Also a copy of the shape of Debian's pip
# (a package directory named build) found by FindFunction.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
git_private

# indexed REPO [options]: the indexed paths of a fresh index, space-separated
indexed() {
    r=$1
    shift
    rm -f "$T/i.sqlite"*
    "$DRQA" --json --no-progress --index "$T/i.sqlite" "$@" --index-only "$r" >"$T/out.json" 2>"$T/err.txt" ||
        { echo "index failed: $(cat "$T/err.txt")"; return; }
    sqlite3 -batch "$T/i.sqlite" "SELECT path FROM files ORDER BY path" | tr '\n' ' ' | sed 's/ $//'
}
py() { mkdir -p "$(dirname "$1")" && echo "${2:-X = 1}" >"$1"; }

# ---- packages named build and dist -------------------------------------------
B="$T/b"
py "$B/pkg/__init__.py"
py "$B/pkg/build/wheel.py" 'def build_wheel(): pass'
py "$B/pkg/dist/tool.py"
py "$B/main.py"
is "$(indexed "$B")" "main.py pkg/__init__.py pkg/build/wheel.py pkg/dist/tool.py" \
   "outside git: a package directory named build or dist is indexed"
cp -r "$B" "$T/bg"
git -C "$T/bg" init -q
is "$(indexed "$T/bg")" "main.py pkg/__init__.py pkg/build/wheel.py pkg/dist/tool.py" \
   "inside git: a package directory named build or dist is indexed"
printf 'build/\n' >"$T/bg/.gitignore"
is "$(indexed "$T/bg")" "main.py pkg/__init__.py pkg/dist/tool.py" "inside git: git's .gitignore is honoured"

# the shape of Debian's /usr/lib/python3/dist-packages/pip
PIP="$T/dist-packages/pip"
py "$PIP/__init__.py"
py "$PIP/_internal/__init__.py"
py "$PIP/_internal/operations/__init__.py"
py "$PIP/_internal/operations/build/__init__.py"
printf 'import os\n\n\ndef build_wheel_pep517(name, backend, metadata_directory, tempd):\n    return os.path.join(tempd, name)\n' \
    >"$PIP/_internal/operations/build/wheel.py"
"$DRQA" --no-progress --index "$T/pip.sqlite" --action FindFunction '{"function_name":"build_wheel_pep517"}' "$PIP" \
    >"$T/pip.json" 2>"$T/err.txt"
is "$(jget "$T/pip.json" items.0.path)" "_internal/operations/build/wheel.py" \
   "FindFunction build_wheel_pep517 on pip's shape finds operations/build/wheel.py"

# ---- evidence ------------------------------------------------------------------
E="$T/e"
py "$E/app.py"
py "$E/venv/lib/site.py"; touch "$E/venv/pyvenv.cfg"
py "$E/env/mod.py"                                   # a package called env: no pyvenv.cfg
py "$E/.venv2/x.py"; mkdir -p "$E/.venv2/bin"; touch "$E/.venv2/bin/activate"
py "$E/web/node_modules/dep/index.js" 'module.exports = 1;'; echo '{}' >"$E/web/package.json"
py "$E/web/src/node_modules/own.js" 'module.exports = 2;'  # no package.json beside it
py "$E/__pycache__/c.py"
py "$E/.tox/py3/t.py"
py "$E/.mypy_cache/m.py"; touch "$E/.mypy_cache/CACHEDIR.TAG"
py "$E/demo.egg-info/e.py"; touch "$E/demo.egg-info/PKG-INFO"
is "$(indexed "$E")" "app.py env/mod.py web/src/node_modules/own.js" \
   "outside git: virtualenvs, node_modules beside package.json, caches, egg-info and __pycache__ are left out by evidence"
is "$($PYTHON3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["ignored"]: print("%d %s" % (r["paths"], r["rule"]))' "$T/out.json")" \
"1 .tox (tox environments)
1 __pycache__ (compiled Python)
1 cache directory (CACHEDIR.TAG)
1 node_modules beside a package.json
1 package metadata (*.egg-info with PKG-INFO)
1 virtualenv (bin/activate)
1 virtualenv (pyvenv.cfg)" "--index-only --json counts the paths each rule left out"

# ---- minified scripts, by their name -------------------------------------------
M="$T/m"
py "$M/web/app.js" 'function start() { return 1; }'
py "$M/web/app.min.js" 'function start(){return 1}'
py "$M/web/lib.min.mjs" 'export function f(){return 2}'
py "$M/web/admin.js" 'function admin() { return 3; }'
is "$(indexed "$M")" "web/admin.js web/app.js" "outside git: minified scripts (*.min.js, *.min.mjs) are left out"
is "$($PYTHON3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["ignored"]: print("%d %s" % (r["paths"], r["rule"]))' "$T/out.json")" \
   "2 *.min.js (minified JavaScript)" "and counted under their rule"
is "$(indexed "$M" --no-ignore)" "web/admin.js web/app.js web/app.min.js web/lib.min.mjs" "--no-ignore indexes them"
cp -r "$M" "$T/mg"
git -C "$T/mg" init -q
git -C "$T/mg" add -A
is "$(indexed "$T/mg")" "web/admin.js web/app.js" "inside git: minified scripts git lists are left out too"

# ---- .gitignore outside git, git's semantics -----------------------------------
G="$T/g"
py "$G/keep.py"
py "$G/a.gen.py"
py "$G/sub/b.gen.py"
py "$G/sub/keep.gen.py"            # re-included by sub/.gitignore
py "$G/top.py"                     # '/top.py' is anchored: only the root's
py "$G/sub/top.py"
py "$G/docs/x/y/tmp_1.py"          # 'docs/**/tmp_*.py'
py "$G/docs/tmp_2.py"
py "$G/docs/keep_3.py"
py "$G/mod.py/inner.py"            # 'mod.py/' matches the directory only
py "$G/lib/mod.py"
py "$G/#hash.py"                   # '\#hash.py'
py "$G/!bang.py"                   # '\!bang.py'
py "$G/trail.py"                   # 'trail.py ' (trailing space dropped)
py "$G/out/o.py"
py "$G/sub/out/o.py"               # '/out/' is anchored
printf '# a comment\n*.gen.py\n/top.py\ndocs/**/tmp_*.py\nmod.py/\n\\#hash.py\n\\!bang.py\ntrail.py   \n/out/\n' >"$G/.gitignore"
printf '!keep.gen.py\n' >"$G/sub/.gitignore"
is "$(indexed "$G")" "docs/keep_3.py keep.py lib/mod.py sub/keep.gen.py sub/out/o.py sub/top.py" \
   "outside git: nested .gitignore files with negation, '**', anchored, directory-only and escaped patterns"
like "$("$DRQA" --no-progress --index "$T/i.sqlite" --index-only "$G")" "ignored      2 paths: .gitignore:2: *.gen.py" \
     "--index-only prints how many paths a rule left out, with its file and line"
rm "$G/sub/.gitignore"
is "$(indexed "$G")" "docs/keep_3.py keep.py lib/mod.py sub/out/o.py sub/top.py" "without the nested file, its negation is gone"

# .ignore, and its precedence over .gitignore at the same level
I="$T/i"
py "$I/a.py"; py "$I/vendor/v.py"; py "$I/gen.py"
printf 'vendor/\n' >"$I/.ignore"
printf 'gen.py\n' >"$I/.gitignore"
is "$(indexed "$I")" "a.py" "outside git: .ignore is read too"
printf 'vendor/\n!gen.py\n' >"$I/.ignore"
is "$(indexed "$I")" "a.py gen.py" ".ignore takes precedence over .gitignore in the same directory"

# ---- .drqaignore, in and outside git -------------------------------------------
D="$T/d"
py "$D/a.py"; py "$D/secret/s.py"; py "$D/sub/fixtures/f.py"; py "$D/sub/k.py"
printf 'secret/\n' >"$D/.drqaignore"
printf 'fixtures\n' >"$D/sub/.drqaignore"
is "$(indexed "$D")" "a.py sub/k.py" "outside git: .drqaignore files are read"
git -C "$D" init -q && git -C "$D" add -A && git -C "$D" commit -qm init
is "$(indexed "$D")" "a.py sub/k.py" "inside git: .drqaignore leaves out tracked files too"
like "$("$DRQA" --no-progress --index "$T/i.sqlite" --index-only "$D")" "ignored      1 path: .drqaignore:1: secret/" \
     "inside git: the .drqaignore rule is counted"

# ---- --no-ignore -------------------------------------------------------------------
is "$(indexed "$E" --no-ignore)" ".mypy_cache/m.py .tox/py3/t.py .venv2/x.py __pycache__/c.py app.py demo.egg-info/e.py env/mod.py venv/lib/site.py web/node_modules/dep/index.js web/src/node_modules/own.js" \
   "--no-ignore: no directory is left out by evidence"
is "$(indexed "$G" --no-ignore | wc -w)" "16" "--no-ignore: .gitignore files are not read"
py "$T/bg/.git/hooks/h.py"
is "$(indexed "$T/bg" --no-ignore)" "main.py pkg/__init__.py pkg/build/wheel.py pkg/dist/tool.py" \
   "--no-ignore inside git: what git ignores is indexed, .git is not"
is "$(indexed "$D" --no-ignore)" "a.py secret/s.py sub/fixtures/f.py sub/k.py" "--no-ignore: .drqaignore is not read"
# the index records how its listing was made; an update without the option lists with the rules again
jb() { $PYTHON3 -c 'import json, sys; print(str(json.load(open(sys.argv[1]))["options"]["no_ignore"]).lower())' "$T/out.json"; }
is "$(jb) $(sqlite3 -batch "$T/i.sqlite" "SELECT value FROM meta WHERE key = 'no_ignore'")" "true 1" \
   "--no-ignore is recorded in the index and reported"
"$DRQA" --json --no-progress --index "$T/i.sqlite" --index-only "$D" >"$T/out.json" 2>"$T/err.txt"
is "$(jb) $(sqlite3 -batch "$T/i.sqlite" "SELECT value FROM meta WHERE key = 'no_ignore'") $(sqlite3 -batch "$T/i.sqlite" "SELECT count(*) FROM files WHERE path LIKE 'secret/%'")" \
   "false 0 0" "an update without it records that and drops what the rules leave out"

# ---- --explain ---------------------------------------------------------------------
printf '!keep.gen.py\n' >"$G/sub/.gitignore"
x() { "$DRQA" --index-only --explain "$1" "$2" 2>&1 | sed -n 's/^verdict   //p'; }
is "$(x sub/b.gen.py "$G")" "not indexed: left out by .gitignore:2: *.gen.py" "--explain names the rule, its file and line"
is "$(x sub/keep.gen.py "$G")" "indexed (python)" "--explain: a re-included file is indexed"
like "$("$DRQA" --index-only --explain sub/keep.gen.py "$G")" "re-included by sub/.gitignore:1: !keep.gen.py" \
     "--explain names the negation that re-included it"
is "$(x docs/x/y/tmp_1.py "$G")" "not indexed: left out by .gitignore:4: docs/**/tmp_*.py" "--explain: a '**' rule"
is "$(x out/o.py "$G")" "not indexed: left out by .gitignore:9: /out/" "--explain: a file below an ignored directory"
is "$(x venv/lib/site.py "$E")" "not indexed: left out by virtualenv (pyvenv.cfg)" "--explain: evidence"
is "$(x web/node_modules/dep/index.js "$E")" "not indexed: left out by node_modules beside a package.json" \
   "--explain: node_modules beside a package.json"
is "$(x env/mod.py "$E")" "indexed (python)" "--explain: a package called env is indexed"
is "$(x pkg/build/wheel.py "$T/bg")" "not indexed: left out by git: .gitignore:1:build/" "--explain inside git asks git"
is "$(x secret/s.py "$D")" "not indexed: left out by .drqaignore:1: secret/" "--explain inside git: .drqaignore"
is "$(x a.py "$D")" "indexed (python)" "--explain inside git: a tracked file is indexed"
is "$("$DRQA" --index-only --no-ignore --explain sub/b.gen.py "$G" | sed -n 's/^verdict   //p')" "indexed (python)" \
   "--explain --no-ignore: no ignore file applies"
is "$(x web/app.min.js "$M")" "not indexed: left out by *.min.js (minified JavaScript)" "--explain: a minified script"
is "$(x web/app.min.js "$T/mg")" "not indexed: left out by *.min.js (minified JavaScript)" \
   "--explain inside git: a minified script"
is "$(x README "$B")" "not indexed: no such file" "--explain: a missing file"
"$DRQA" --index-only --explain /etc/passwd "$B" >/dev/null 2>"$T/err.txt"
is "$?" "2" "--explain with a path outside the repository is a usage error"
like "$(cat "$T/err.txt")" "not inside the repository" "and says so"
echo "1..$n"
exit $fail
