#!/bin/sh
# test_index_wal.sh: a clean exit leaves no -wal or -shm file beside the
# index (--index-only, --ask, an action call), while a reader in another
# process that still has the index open keeps them and goes on reading; the
# last connection to close removes them. (The front end's clean exit is
# checked by tests/test_ui_line.sh.)
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-wal-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_CACHE_HOME="$T/cache"
. "$top_srcdir/tests/tap.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"
sides() { ls "$T" | grep -E '^idx\.sqlite-(wal|shm)$' | tr '\n' ' '; }

"$DRQA" --index-only --no-progress --index "$IDX" "$FIX" >/dev/null 2>"$T/err"
ok $? "--index-only builds the index"
is "$(sides)" "" "--index-only leaves no -wal or -shm file"
"$DRQA" --policy offline --iterations 4 --index "$IDX" --ask "How are URL rules registered?" "$FIX" >"$T/ans" 2>"$T/err"
ok $? "--ask answers"
is "$(sides)" "" "--ask leaves no -wal or -shm file"
"$DRQA" --index "$IDX" --action FindClass '{"class_name":"App"}' "$FIX" >/dev/null 2>"$T/err"
ok $? "an action call runs"
is "$(sides)" "" "an action call leaves no -wal or -shm file"

# a reader elsewhere: it holds a read transaction across a whole --ask
"$PYTHON3" - "$IDX" "$T" <<'PY' &
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
while [ ! -e "$T/ready" ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done
"$DRQA" --policy offline --iterations 4 --index "$IDX" --ask "How are URL rules registered?" "$FIX" >/dev/null 2>"$T/err"
ok $? "--ask answers while another process reads the index"
is "$(sides)" "idx.sqlite-shm idx.sqlite-wal " "the reader's files are left alone while it has the index open"
touch "$T/go"
wait $reader
ok $? "the reader goes on reading and closes without an error"
set -- $(cat "$T/read" 2>/dev/null)
[ "${1:-0}" -gt 0 ] && [ "${1:-0}" = "${2:-}" ]
ok $? "it read the same files before and after ($*)"
is "$(sides)" "" "its close, the last, removes them"
echo "1..$n"
exit $fail
