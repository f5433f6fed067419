#!/bin/sh
# test_data_safety_out.sh: nothing the headless modes write is lost without a
# word, one group per case:
#  stdout   --ask, --ask --json, --action and --index-only into a full disk
#           (/dev/full) exit 1 and name standard output;
#  lock     a --batch --out file is locked for the run: a second run exits 5
#           saying another drqa-tui writes it, and leaves it as it was; two
#           runs at once never write an id twice; a file holding an id twice
#           is refused;
#  ids      a number id is kept as its JSON text (1e400, 12345678901234567890)
#           and matched on resume;
#  pipes    --out /dev/stdout into a pipe, or a FIFO, is written and never read
#           back; --out /dev/full says the disk is full;
#  foreign  --out naming a file that is not an answers file, or an answers file
#           with a malformed line in the middle, is refused and left as it was;
#  busy     while another drqa-tui holds the index for an update, --ask,
#           --action and --batch answer from the index as it was, saying so,
#           and --index-only waits for it, saying so.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
BG=
at_exit 'rm -f "$T/hold"; for p in $BG; do kill "$p" 2>/dev/null; done; wait 2>/dev/null'
R="$T/repo"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$R"
chmod -R u+w "$R"   # a copy from a read-only source tree (distcheck)
IDX="$T/index.sqlite"
"$DRQA" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1
run() { "$DRQA" --index "$IDX" --no-progress --policy offline "$@" "$R" 2>"$T/err"; rc=$?; }
nlines() { wc -l <"$1" | tr -d ' '; }
dup_ids() { "$PYTHON3" -c 'import json, sys, collections
ids = collections.Counter(json.dumps(json.loads(l)["id"]) for l in open(sys.argv[1]) if l.strip())
print(sum(1 for v in ids.values() if v > 1))' "$1"; }

# ---- stdout: every write checked through close
Q="Where is the session flushed?"
for mode in ask json action index-only; do
    case $mode in
    ask) run --ask "$Q" >/dev/full ;;
    json) run --json --ask "$Q" >/dev/full ;;
    action) run --action Outline '{"path": "tinyweb/sessions"}' >/dev/full ;;
    index-only) run --index-only >/dev/full ;;
    esac
    is "$rc" 1 "$mode into a full disk: status 1"
    grep -q "standard output\|stdout" "$T/err"
    ok $? "$mode: the message names standard output: $(cat "$T/err")"
done

# ---- lock: one run at a time on an --out file
: >"$T/q.jsonl"
for i in $(seq 1 12); do printf '{"id": %d, "question": "Where is the session flushed? (%d)"}\n' "$i" "$i" >>"$T/q.jsonl"; done
run --quiet --batch "$T/q.jsonl" --out "$T/a.jsonl"
is "$rc" 0 "a batch of 12 questions"
head -n 5 "$T/a.jsonl" >"$T/held.jsonl"
cp "$T/held.jsonl" "$T/held.orig"
# a lock held by another run (here a holder that waits for $T/release)
"$PYTHON3" -c 'import fcntl, os, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close()
for _ in range(1200):
    if os.path.exists(sys.argv[3]): break
    time.sleep(0.1)' "$T/held.jsonl" "$T/locked" "$T/release" &
BG="$BG $!"
wait_file "$T/locked"
run --quiet --batch "$T/q.jsonl" --out "$T/held.jsonl"
is "$rc" 5 "--out locked by another run: status 5"
like "$(cat "$T/err")" "another drqa-tui is writing '$T/held.jsonl'" "the message says another drqa-tui writes the file"
cmp -s "$T/held.jsonl" "$T/held.orig"
ok $? "the locked file is left as it was"
: >"$T/release"
wait
BG=
run --quiet --batch "$T/q.jsonl" --out "$T/held.jsonl"
is "$rc" 0 "once the lock is gone, the run resumes"
is "$(nlines "$T/held.jsonl")" 12 "... and adds the 7 missing answers"
# two runs at once: whatever the interleaving, each id once
rm -f "$T/two.jsonl"
"$DRQA" --index "$IDX" --no-progress --policy offline --quiet --batch "$T/q.jsonl" --out "$T/two.jsonl" "$R" \
    2>"$T/err1" &
p1=$!
"$DRQA" --index "$IDX" --no-progress --policy offline --quiet --batch "$T/q.jsonl" --out "$T/two.jsonl" "$R" \
    2>"$T/err2" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
is "$(dup_ids "$T/two.jsonl")" 0 "two runs on one --out: no id written twice (statuses $r1 and $r2)"
is "$(nlines "$T/two.jsonl")" 12 "... and every question answered once"
case "$r1$r2" in 00|05|50) ok 0 "a run that met the other's lock exits 5, else 0" ;; *) ok 1 "statuses $r1 $r2" ;; esac
# a file that holds an id twice is refused
cat "$T/held.orig" "$T/held.orig" >"$T/dup.jsonl"
cp "$T/dup.jsonl" "$T/dup.orig"
run --quiet --batch "$T/q.jsonl" --out "$T/dup.jsonl"
is "$rc" 2 "an --out holding an id twice: status 2"
like "$(cat "$T/err")" "dup.jsonl:6: the id of this answer is also the id of line 1" "the message names both lines"
cmp -s "$T/dup.jsonl" "$T/dup.orig"
ok $? "... and the file is left as it was"

# ---- ids: kept as their JSON text
printf '%s\n' '{"id": 1e400, "question": "Where is the session flushed?"}' \
    '{"id": 12345678901234567890, "question": "What does routing do?"}' \
    '{"id": -0.50, "question": "How are cookies parsed?"}' >"$T/ids.jsonl"
run --quiet --batch "$T/ids.jsonl" --out "$T/ids.out"
is "$rc" 0 "a batch with ids no double holds"
is "$(cut -d, -f1 "$T/ids.out" | tr '\n' ' ')" '{"id":1e400 {"id":12345678901234567890 {"id":-0.50 ' \
    "each id written back as it was given"
run --batch "$T/ids.jsonl" --out "$T/ids.out"
is "$rc" 0 "the same batch again"
like "$(cat "$T/err")" "0 answered, 0 failed, 3 skipped" "... finds every id answered"
is "$(nlines "$T/ids.out")" 3 "... and adds no line"
printf '%s\n' '{"id": 12345678901234567891, "question": "What does routing do?"}' >"$T/ids2.jsonl"
run --quiet --batch "$T/ids2.jsonl" --out "$T/ids.out"
is "$(nlines "$T/ids.out")" 4 "an id that only a double would confuse with another is its own"

# ---- pipes, FIFOs and devices: written, never read back
printf '%s\n' '{"id": "p", "question": "Where is the session flushed?"}' >"$T/one.jsonl"
timeout 120 "$DRQA" --index "$IDX" --no-progress --policy offline --batch "$T/one.jsonl" --out /dev/stdout "$R" \
    2>"$T/err" | cat >"$T/piped"
is "$(nlines "$T/piped")" 1 "--out /dev/stdout into a pipe: the answer goes down the pipe"
like "$(cat "$T/err")" "is not a regular file" "... and stderr says nothing is read back from it"
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
BG="$BG $!"
timeout 120 "$DRQA" --index "$IDX" --no-progress --policy offline --quiet --batch "$T/one.jsonl" --out "$T/fifo" "$R" \
    2>"$T/err"
is "$?" 0 "--out a FIFO: status 0"
wait
BG=
is "$(nlines "$T/from-fifo")" 1 "... and the reader got the answer"
run --batch "$T/one.jsonl" --out /dev/full
is "$rc" 1 "--out /dev/full: status 1"
like "$(cat "$T/err")" "No space left on device" "... and the message says the disk is full"
case "$(cat "$T/err")" in *"too large"*) ok 1 "... not that the file is too large" ;; *) ok 0 "... not that the file is too large" ;; esac

# ---- foreign files: refused, untouched
printf 'my notes\nsecond line without newline' >"$T/notes.txt"
cp "$T/notes.txt" "$T/notes.orig"
run --quiet --batch "$T/one.jsonl" --out "$T/notes.txt"
is "$rc" 2 "--out a notes file: status 2"
like "$(cat "$T/err")" "notes.txt:1: not an answers line (the line is not a JSON object), so '$T/notes.txt' is not a --batch answers file" \
    "the message names the file and the line"
like "$(cat "$T/err")" "give another --out" "... and what to do"
cmp -s "$T/notes.txt" "$T/notes.orig"
ok $? "... and the file is left as it was"
{ head -n 2 "$T/a.jsonl"; echo '{"id": 3, "question": "trunc'; sed -n '4,$p' "$T/a.jsonl"; } >"$T/mid.jsonl"
cp "$T/mid.jsonl" "$T/mid.orig"
run --quiet --batch "$T/q.jsonl" --out "$T/mid.jsonl"
is "$rc" 2 "an answers file with a malformed line in the middle: status 2"
like "$(cat "$T/err")" "mid.jsonl:3: not an answers line (the line is not a JSON object)" "the message names the line"
cmp -s "$T/mid.jsonl" "$T/mid.orig"
ok $? "... and the file is left as it was"
printf '%s\n' '{"id": 1, "score": 3}' >"$T/other.jsonl"
run --quiet --batch "$T/q.jsonl" --out "$T/other.jsonl"
is "$rc" 2 "a JSONL file of something else: status 2"
like "$(cat "$T/err")" 'other.jsonl:1: not an answers line (the line has no "id", "answer" and "mode")' "the message says what the line lacks"

# ---- busy: another drqa-tui updating the index
if [ -x "$DRQA_HOOKS" ]; then
    echo "def added_for_the_update(): return 1" >>"$R/tinyweb/utils.py"
    rm -f "$T/hold"
    DRQA_TEST_HOLD="$T/hold" "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null \
        2>"$T/holder.err" &
    holder=$!
    BG="$BG $holder"
    wait_file "$T/hold"
    ok $? "another drqa-tui holds the index for an update"
    run --ask "$Q" >/dev/null
    is "$rc" 0 "--ask meanwhile: status 0"
    like "$(cat "$T/err")" "is updating the index '$IDX'; this run reads the index as it was before that update" \
        "... and it says another process updates the index"
    run --quiet --action Outline '{"path": "tinyweb/utils.py"}' >"$T/outline.json"
    is "$rc" 0 "--action meanwhile: status 0"
    case "$(cat "$T/outline.json")" in *added_for_the_update*) ok 1 "... reads the index as it was" ;;
    *) ok 0 "... reads the index as it was" ;; esac
    run --quiet --batch "$T/one.jsonl" --out "$T/busy.jsonl"
    is "$rc" 0 "--batch meanwhile: status 0"
    is "$(nlines "$T/busy.jsonl")" 1 "... with its answer"
    "$DRQA" --index "$IDX" --no-progress --index-only "$R" >/dev/null 2>"$T/wait.err" &
    waiter=$!
    BG="$BG $waiter"
    i=0
    while ! grep -q "waiting for it to finish" "$T/wait.err" && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
    like "$(cat "$T/wait.err")" "another process (another drqa-tui?) is updating the index '$IDX'; waiting for it to finish" \
        "--index-only meanwhile waits, and says so"
    rm -f "$T/hold"
    wait $holder
    is "$?" 0 "the holder's update completes"
    wait $waiter
    is "$?" 0 "the waiting --index-only completes after it"
    BG=
    run --quiet --action Outline '{"path": "tinyweb/utils.py"}' >"$T/outline.json"
    like "$(cat "$T/outline.json")" added_for_the_update "afterwards the index has the update"
else
    skip "no $DRQA_HOOKS (make check builds it)"
fi

echo "1..$n"
exit $fail
