#!/bin/sh
# Short, seeded runs of every libFuzzer target (fuzz/, built by mk/hardening.am
# when configure found clang with libFuzzer): each starts from its seed corpus
# under fuzz/corpus/NAME (copied to a temp dir, so the source tree is never
# written), runs every seed -- the regression inputs of bugs found earlier are
# among them -- and then a fixed number of mutated inputs with -seed=1. A
# crash, sanitizer report, leak or an input running over 30 s fails the test.
# Skips when the targets were not built. bench/fuzz.sh runs them for longer.
: "${top_srcdir:=.}" "${top_builddir:=.}"
F="$top_builddir/fuzz"
# target:mutated runs (the parser target is the slowest per input)
TARGETS="jsonx:2000 roles:2000 fpattern:2000 parse:300 transcript:1000 action:300 mcp:300"
if [ ! -x "$F/fuzz_jsonx" ]; then
    echo "1..0 # SKIP fuzz targets not built (configure found no clang with -fsanitize=fuzzer; see FUZZ_CC)"
    exit 0
fi
. "$top_srcdir/tests/lib.sh"

for tr in $TARGETS; do
    t=${tr%%:*}
    runs=${tr#*:}
    mkdir -p "$T/$t" "$T/$t-art"
    cp "$top_srcdir/fuzz/corpus/$t/"* "$T/$t/"
    nseeds=$(ls "$top_srcdir/fuzz/corpus/$t" | wc -l)
    # the seeds alone, each must run clean (regressions)
    "$F/fuzz_$t" -timeout=30 -rss_limit_mb=2048 -artifact_prefix="$T/$t-art/" \
        "$top_srcdir/fuzz/corpus/$t/"* >"$T/$t-seeds.log" 2>&1
    rc=$?
    ok $rc "fuzz_$t: the $nseeds seed inputs run clean"
    [ $rc = 0 ] || sed 's/^/#   /' "$T/$t-seeds.log" | grep -v '^#   Running:\|^#   Executed' | tail -30
    "$F/fuzz_$t" -runs="$runs" -seed=1 -timeout=30 -max_len=4096 -rss_limit_mb=2048 \
        -artifact_prefix="$T/$t-art/" -print_final_stats=1 "$T/$t" >"$T/$t.log" 2>&1
    rc=$?
    ok $rc "fuzz_$t: $runs mutated inputs (-seed=1), no crash, leak or timeout"
    if [ $rc != 0 ]; then
        grep -A30 'ERROR\|runtime error\|deadly signal\|timeout' "$T/$t.log" | head -40 | sed 's/^/#   /'
        for a in "$T/$t-art/"*; do [ -f "$a" ] && { echo "#   input ($a):"; od -c "$a" | head -8 | sed 's/^/#   /'; }; done
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/$t.log")
    echo "# fuzz_$t: ${execs:-?} inputs executed"
done
echo "1..$n"
exit $fail
