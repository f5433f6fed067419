#!/bin/sh
# test_term_bidi.sh: bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE,
# U+202C, the isolates U+2066-U+2069, U+200E/F, U+061C) in file names and
# file text never reach the terminal raw, as ESC and C1 do not: --index-only's
# skipped-file names, --explain, --ask's Markdown show "<U+202E>" as the front
# end does; --ask --json and --action write them as JSON escapes, so the
# value read back is unchanged.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
R="$T/repo"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$R"
RLO=$(printf '\342\200\256')
printf 'def reorder_me():\n    """Says \342\200\256 evil \342\200\254 and \342\201\246 iso \342\201\251 \342\200\217 \330\234 text"""\n    return "\342\200\256"\n' \
    >"$R/bidi.py"
printf '\000\001binary' >"$R/gnp.${RLO}exe.py"
printf 'def x():\n    pass\n' >"$R/name${RLO}yp.py"

# raw FILE...: bidirectional control characters written raw in the files
raw() {
    "$PYTHON3" - "$@" <<'PY'
import sys
bad = 0
for f in sys.argv[1:]:
    t = open(f, "rb").read().decode("utf-8", "replace")
    bad += sum(1 for c in t if c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
print(bad)
PY
}
IDX="$T/idx.sqlite"
"$DRQA" --index "$IDX" --no-progress --index-only "$R" >"$T/idx.out" 2>"$T/idx.err"
is "$?" 0 "--index-only of a repository with bidirectional controls in names and text"
is "$(raw "$T/idx.out" "$T/idx.err")" 0 "--index-only: no raw bidirectional control on stdout or stderr"
grep -q 'gnp\.<U+202E>exe\.py: binary' "$T/idx.out"
ok $? "--index-only: the skipped file's name shows <U+202E>"
"$DRQA" --no-progress --explain "gnp.${RLO}exe.py" "$R" >"$T/ex.out" 2>"$T/ex.err"
is "$(raw "$T/ex.out" "$T/ex.err")" 0 "--explain: no raw bidirectional control"
"$DRQA" --index "$IDX" --no-progress --iterations 3 --ask "What does reorder_me say?" "$R" >"$T/ask.out" 2>"$T/ask.err"
is "$?" 0 "--ask about the file with bidirectional controls"
is "$(raw "$T/ask.out" "$T/ask.err")" 0 "--ask Markdown: no raw bidirectional control on stdout or stderr"
grep -q '<U+202E> evil <U+202C>' "$T/ask.out"
ok $? "--ask Markdown: shown as <U+202E> and <U+202C>, as the front end shows them"
"$DRQA" --index "$IDX" --no-progress --iterations 3 --json --ask "What does reorder_me say?" "$R" >"$T/ask.json" 2>"$T/ask.jerr"
is "$?:$(raw "$T/ask.json" "$T/ask.jerr")" "0:0" "--ask --json: no raw bidirectional control"
"$PYTHON3" -c "import json,sys; d=json.load(open(sys.argv[1])); assert '\u202e evil \u202c' in json.dumps(d, ensure_ascii=False)" "$T/ask.json"
ok $? "--ask --json: the text read back holds the characters unchanged"
"$DRQA" --index "$IDX" --no-progress --action ViewCode '{"code_span_list":["bidi.py"]}' "$R" >"$T/act.out" 2>"$T/act.err"
is "$?:$(raw "$T/act.out" "$T/act.err")" "0:0" "--action ViewCode: no raw bidirectional control"
"$PYTHON3" -c "import json,sys; d=json.load(open(sys.argv[1])); assert '\u202e evil \u202c' in d['evidence'][0]['text']" "$T/act.out"
ok $? "--action ViewCode: the JSON text is exact"
"$DRQA" --index "$IDX" --no-progress --action ListFiles '{}' "$R" >"$T/ls.out" 2>"$T/ls.err"
is "$?:$(raw "$T/ls.out" "$T/ls.err")" "0:0" "--action ListFiles: a name with U+202E is not written raw"
"$DRQA" --index "$IDX" --no-progress --action ViewCode "{\"code_span_list\":[\"no${RLO}such.py\"]}" "$R" >"$T/e.out" 2>"$T/e.err"
is "$?:$(raw "$T/e.out" "$T/e.err")" "2:0" "an error naming a path with U+202E: not written raw"

echo "1..$n"
exit $fail
