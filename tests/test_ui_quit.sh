#!/bin/sh
# test_ui_quit.sh: quitting while the index is being updated (tmux 100x30).
# A repository whose index is built, then grown by a generated package large
# enough to take seconds to index: the front end starts updating it; q asks
# (naming indexing, not a search), y exits at once -- the update is
# cancelled, not waited for -- and the previous index is intact (same files,
# integrity ok, no side file left). C-c asks too and a second C-c exits 130;
# SIGTERM exits 143. Quitting a first index build says that it drops it,
# not that a previous index is kept. The first update is held before it
# resolves names (the test build's DRQA_TEST_PHASE_HOLD, never let go), so
# it cannot end by itself: an exit shows it was cancelled, not waited for,
# with no clock in the test; bench/ui-quit.sh measures the exit latency.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
IDX="$T/idx.sqlite"
"$DRQA" --index-only --no-progress --index "$IDX" "$T/repo" >/dev/null 2>&1
ok $? "the small repository is indexed"
count_files() {
    "$PYTHON3" - "$IDX" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
print(db.execute("SELECT count(*) FROM files").fetchone()[0])
PY
}
n0=$(count_files)
"$PYTHON3" - "$T/repo/gen" <<'PY'
import os, sys
os.makedirs(sys.argv[1])
for i in range(3000):
    with open(os.path.join(sys.argv[1], "m%05d.py" % i), "w") as f:
        for j in range(30):
            f.write("class C%d_%d(Base%d):\n    def method_%d(self, x):\n        return helper_%d(x)\n\n"
                    % (i, j, j, j, j))
PY
mkdir "$T/hold" && touch "$T/hold/scan" "$T/hold/parse"

run_ui 100 30 DRQA_TEST_PHASE_HOLD="$T/hold" -- --policy offline --index "$IDX" "$T/repo" "Where is the session cookie signed?"
wait_for 'indexing 2/5: parse [1-9][0-9]*/3[0-9]{3}' 1500
ok $? "the front end is updating the index (files written)"
keys q
wait_for 'Indexing is under way \(quitting keeps the previous index\)\. Quit\? \(y/n\)'
ok $? "q asks, naming the indexing"
keys y
wait_for '^EXIT=0'
ok $? "y exits 0, without waiting for the update (held before it resolves names, it never ends by itself)"
[ "$(count_files)" = "$n0" ]
ok $? "the previous index is intact ($n0 files, integrity ok)"
[ -z "$(ls "$T" | grep -E '^idx\.sqlite.+' | grep -v -E -- '-(wal|shm)$')" ]
ok $? "no side file is left beside it"

run_ui 100 30 -- --policy offline --index "$IDX" "$T/repo" "Where is the session cookie signed?"
wait_for 'indexing 2/5: parse [1-9][0-9]*/3[0-9]{3}' 1500
keys C-c
wait_for 'Indexing is under way .*Quit\? \(y/n\)'
ok $? "C-c asks as q does"
keys C-c
wait_for '^EXIT=130' 400
ok $? "a second C-c exits 130"

run_ui 100 30 -- --policy offline --index "$IDX" "$T/repo" "Where is the session cookie signed?"
wait_for 'indexing 2/5: parse [1-9][0-9]*/3[0-9]{3}' 1500
sh_pid=$(tm list-panes -t "$S" -F '#{pane_pid}')
ui_pid=$(ps -o pid= --ppid "$sh_pid" | tr -d ' ' | head -1)
[ -n "$ui_pid" ] && kill -TERM "$ui_pid"
wait_for '^EXIT=143' 400
ok $? "SIGTERM exits 143"
[ "$(count_files)" = "$n0" ]
ok $? "the previous index is still intact"

# a first index: there is no previous one to keep
rm -f "$IDX" "$IDX"-wal "$IDX"-shm
run_ui 100 30 -- --policy offline --index "$IDX" "$T/repo" "Where is the session cookie signed?"
wait_for 'indexing 2/5: parse [1-9][0-9]*/3[0-9]{3}' 1500
keys q
wait_for 'The first index is being built \(quitting drops it; the next start builds it again\)\. Quit\? \(y/n\)'
ok $? "q during a first index says that quitting drops it"
! grep -q 'previous index' "$T/screen"
ok $? "and promises no previous index"
keys y
wait_for '^EXIT=0' 400
ok $? "y exits 0"
[ -z "$(ls "$T" | grep -E '^idx\.sqlite')" ]
ok $? "nothing is left where the index was to be"
echo "1..$n"
exit $fail
