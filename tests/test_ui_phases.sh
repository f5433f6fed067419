#!/bin/sh
# test_ui_phases.sh: first contact (tmux 100x30, a copy of the pyrepo
# fixture, a new index, offline policy). The status line names each phase of
# getting ready, in order, instead of standing at the last file count: scan,
# parse (with its count), resolve, write, vectors; each phase is held by
# DRQA_TEST_PHASE_HOLD until the test has read it. Then, with no question
# asked, the root row says there is no question yet instead of "done".
set -u
. "$top_srcdir/tests/ui_tmux.sh"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
mkdir "$T/hold"
run_ui 100 30 DRQA_TEST_PHASE_HOLD="$T/hold" -- --policy offline --index "$T/idx.sqlite" "$T/repo"
step() {   # step PHASE REGEX TEXT: the screen shows REGEX, then PHASE is let go
    wait_for "$2"
    ok $? "$3"
    touch "$T/hold/$1"
}
step scan '\| indexing 1/5: scan files' "the status line names the scan"
step parse '\| indexing 2/5: parse' "then parsing"
step resolve '\| indexing 3/5: resolve names' "then resolving names, not the last file count"
grep -q '100%' "$T/screen" && { ok 1 "no stale 100% while resolving"; } || ok 0 "no stale 100% while resolving"
step write '\| indexing 4/5: write indexes' "then writing the indexes"
step vectors '\| indexing 5/5: vectors' "then SemanticSearch's vectors"
wait_for '\| idle'
ok $? "and then it is ready"
keys Escape
sleep 0.1
wait_for '^ Tree 1 '
grep -E -q '^\*?-? *0 \(no question yet\)' "$T/screen" && ! grep -E '^ *\*? *0 ' "$T/screen" | grep -q 'done'
ok $? "the root says there is no question yet, and not done"
grep -q 'Question:' "$T/screen" && grep -q '(none yet: a asks one)' "$T/screen"
ok $? "so does the node pane"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
