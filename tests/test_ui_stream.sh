#!/bin/sh
# test_ui_stream.sh: the front end with --policy llm against the fake model
# server streaming the answer a token every 30 ms, in tmux at 100x40. The
# Answer pane appears and fills while the answer is written, titled so, and
# the status line shows the estimated rate; Esc then stops it: the part
# written is kept with its verified citation, marked as stopped in the pane
# and in the transcript (JSON and Markdown), and the rest never comes. C-c
# stops the next answer the same way, without asking to quit.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
. "$top_srcdir/tests/fake_llm.sh"
. "$top_srcdir/tests/stream_fixture.sh"
trap 'fake_stop; cleanup' EXIT
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
"$DRQA" --index-only --no-progress --index "$T/idx.sqlite" "$T/repo" >/dev/null 2>&1
words=$("$PYTHON3" -c 'print(" ".join("w%d" % i for i in range(600)))')
for c in esc ctc; do
    stream_script "$T/script.json" "$c" 30 "The view is called in \`tinyweb/app.py:46-51\`, then $words LASTWORD."
done
fake_start "$T/script.json" "$T/requests.jsonl" || exit 1
mkdir -p "$T/tr"
run_ui 100 40 DRQA_API_KEY=sk-ui-stream -- --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --iterations 4 --index "$T/idx.sqlite" --transcript-dir "$T/tr" "$T/repo" "$(stream_question esc)"
wait_for 'Answer \(being written; Esc stops\)' 1500
ok $? "the Answer pane appears while the answer is written, titled so"
wait_for 'then w0 w1 w2 w3'
ok $? "it fills as the text arrives"
wait_for 'answering: writing ~[0-9]+ tok/s est\., Esc stops'
ok $? "the status line shows the rate, marked estimated, and the stop key"
keys Escape
wait_for 'Answer \(stopped, incomplete\)'
ok $? "Esc stops the answer: the pane says it is stopped"
wait_for '_Stopped while it was being written: this'
ok $? "the part written is kept, marked as incomplete"
wait_for '\[1\] tinyweb/app\.py:46-51'
ok $? "its verified citation is listed"
wait_for '\| done: '
ok $? "the search is done"
grep -q LASTWORD "$T/screen"
ok $((! $?)) "the rest of the answer never came"
i=0
while ! ls "$T"/tr/*.md >/dev/null 2>&1 && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
grep -q '"stopped":[[:space:]]*true' "$T"/tr/*.json
ok $? "the transcript JSON marks the answer stopped"
grep -q 'Stopped while it was being written' "$T"/tr/*.md
ok $? "the transcript Markdown says so"
grep -q LASTWORD "$T"/tr/*.md
ok $((! $?)) "and holds only the part written"

# the next answer, stopped by C-c
keys a
wait_for '^Ask: '
keys -l "$(stream_question ctc)"
keys Enter
wait_for 'Answer \(being written; Esc stops\)' 1500
ok $? "a new question: its answer is written"
wait_for 'then w0 w1 w2 w3'
keys C-c
wait_for 'Answer \(stopped, incomplete\)'
ok $? "C-c stops it too"
grep -q 'Quit? (y/n)' "$T/screen"
ok $((! $?)) "without asking to quit"
keys q
wait_for '^EXIT=0'
ok $? "q then quits"
echo "1..$n"
exit $fail
