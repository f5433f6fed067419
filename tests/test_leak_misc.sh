#!/bin/sh
# test_leak_misc.sh: small promises of the command line that were broken:
#  - Outline's path '' is the whole repository, as its description says;
#  - refusing another program's WAL-mode sqlite file as --index creates no
#    -wal or -shm beside it, and removes none that were there;
#  - a NUL (\u0000) inside a JSON string argument is refused, not cut;
#  - --exploration nan / inf are refused;
#  - a removed citation of a percent-encoded path outside the repository
#    leaves no fragment of it in the answer;
#  - a full disk while building names the index;
#  - the contents of git submodules are said to be left out (--index-only's
#    summary, --explain).
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
R="$T/repo"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$R"
IDX="$T/idx.sqlite"
"$DRQA" --index "$IDX" --no-progress --index-only "$R" >/dev/null 2>&1

# --- Outline '' is the whole repository
"$DRQA" --index "$IDX" --no-progress --action Outline '{"path": ""}' "$R" >"$T/o.json" 2>"$T/o.err"
is "$?" 0 "Outline {\"path\": \"\"} is taken (the whole repository, as its description says)"
files=$("$PYTHON3" -c "import json,sys; print(len({i['path'] for i in json.load(open(sys.argv[1]))['items']}))" "$T/o.json")
ok "$([ "${files:-0}" -gt 3 ] && echo 0 || echo 1)" "and outlines the files of the whole repository ($files)"
"$DRQA" --index "$IDX" --no-progress --action Outline '{}' "$R" >/dev/null 2>"$T/o2.err"
is "$?" 2 "Outline without a path is refused"
grep -q "missing required field 'path'.*'' for the whole repository" "$T/o2.err"
ok $? "saying '' is the whole repository"

# --- another program's WAL-mode database: nothing created, nothing removed
mkdir "$T/w"
"$PYTHON3" - "$T/w" <<'PY'
import sqlite3, sys, os
d = sys.argv[1]
for name, app in (("plain.db", 0), ("app.db", 42), ("odd?name%.db", 0)):
    c = sqlite3.connect(os.path.join(d, name))
    c.execute("pragma journal_mode=wal")
    if app:
        c.execute("pragma application_id=%d" % app)
    c.execute("create table t(x)")
    c.execute("insert into t values (1)")
    c.commit()
    c.close()
PY
before=$(cd "$T/w" && ls | tr '\n' ' ' && sha256sum -- * | sha256sum)
for db in plain.db app.db 'odd?name%.db'; do
    for mode in "--index-only" "--action ListFiles {}" "--ask where"; do
        # shellcheck disable=SC2086
        "$DRQA" --index "$T/w/$db" --no-progress $mode "$R" >/dev/null 2>"$T/w.err"
        rc=$?
        after=$(cd "$T/w" && ls | tr '\n' ' ' && sha256sum -- * | sha256sum)
        is "$rc:$after" "2:$before" "a WAL-mode database of another program ($db, ${mode%% *}): refused, no -wal or -shm left, unchanged"
    done
done
grep -q "another application" "$T/w.err"
ok $? "the refusal says it is another application's database"
# a -wal and -shm that were there (the other program is running) stay
"$PYTHON3" - "$T/w/live.db" <<'PY'
import sqlite3, sys, os
c = sqlite3.connect(sys.argv[1])
c.execute("pragma journal_mode=wal")
c.execute("pragma wal_autocheckpoint=0")
c.execute("create table t(x)")
c.execute("insert into t values (1)")
c.commit()
os._exit(0)   # no close: the -wal and -shm stay, as while their program runs
PY
"$DRQA" --index "$T/w/live.db" --no-progress --index-only "$R" >/dev/null 2>&1
rc=$?
is "$rc:$(ls "$T/w" | grep -c '^live\.db')" "2:3" "a database with its -wal and -shm: refused, all three files still there"

# --- a NUL inside a JSON string argument
"$DRQA" --index "$IDX" --no-progress --action ViewCode '{"code_span_list": ["tinyweb/app.py\u0000../../etc/passwd"]}' "$R" \
    >"$T/n.out" 2>"$T/n.err"
is "$?" 2 "a \\u0000 inside a JSON string argument is refused"
grep -q 'NUL' "$T/n.err"
ok $? "saying the string holds a NUL"
"$DRQA" --index "$IDX" --no-progress --action FindClass '{"class_name": "App\\u0000"}' "$R" >"$T/n2.out" 2>&1
is "$?" 0 "an escaped backslash before u0000 is no NUL"

# --- --exploration nan / inf
for v in nan inf -inf NaN 1e999; do
    "$DRQA" --index "$IDX" --no-progress --exploration "$v" --ask "where is App" "$R" >/dev/null 2>"$T/x.err"
    is "$?" 2 "--exploration $v is refused"
done
grep -q -- '--exploration' "$T/x.err"
ok $? "naming --exploration"

# --- a write failing for want of room names the index (a file size limit
# plays the full disk: sqlite sees the write cut short)
mkdir "$T/full"
many_modules "$T/many"
"$PYTHON3" -c 'import os, resource, signal, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (150000, 150000))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])' "$DRQA" --index "$T/full/idx.sqlite" --no-progress --index-only "$T/many" \
    >/dev/null 2>"$T/full.err"
is "$?" 1 "a write failing for want of room: exit 1"
grep -q "the index '$T/full/idx.sqlite'" "$T/full.err"
ok $? "the message names the index: $(head -c 200 "$T/full.err")"

# --- a git submodule's files are said to be left out
if command -v git >/dev/null 2>&1; then
    submodule_repo "$T/outer" "$T/inner"
    "$DRQA" --index "$T/sub.sqlite" --no-progress --index-only "$T/outer" >"$T/sub.out" 2>&1
    is "$?" 0 "--index-only of a repository with a submodule"
    grep -q '^ignored      1 path: git submodule (its files are left out' "$T/sub.out"
    ok $? "the summary says the submodule's files are left out"
    "$DRQA" --no-progress --index-only --explain sub/in.py "$T/outer" >"$T/subx.out" 2>&1
    grep -q "not indexed: .*the git submodule 'sub'" "$T/subx.out"
    ok $? "--explain of a file in it names the submodule: $(tail -1 "$T/subx.out")"
else
    for _ in 1 2 3; do skip "git is not installed"; done
fi

echo "1..$n"
exit $fail
