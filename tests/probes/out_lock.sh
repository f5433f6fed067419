#!/bin/sh
# probe out_lock: a --batch --out file is locked for the run: a second run exits 5 and leaves it as it was
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 4
drqa --quiet --batch "$T/q.jsonl" --out "$T/a.jsonl"
head -n 2 "$T/a.jsonl" >"$T/b.jsonl"; cp "$T/b.jsonl" "$T/b.orig"
"$PYTHON3" -c "import fcntl, os, sys, time
f = open(sys.argv[1], \"a\"); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], \"w\").close()
for _ in range(1200):
    if os.path.exists(sys.argv[3]): break
    time.sleep(0.1)" "$T/b.jsonl" "$T/locked" "$T/release" &
PROBE_PIDS=$!
wait_for "$T/locked" || failed "the lock holder did not start"
drqa --quiet --batch "$T/q.jsonl" --out "$T/b.jsonl"
: >"$T/release"
[ "$rc" = 5 ] || failed "status $rc, not 5"
grep -q "another drqa-tui is writing" "$T/err" || failed "no word of the other run"
cmp -s "$T/b.jsonl" "$T/b.orig" || failed "the locked file changed"
held
