#!/bin/sh
# test_leftovers.sh: tests/leftovers.sh, the check `make check` runs on the
# tests' TMPDIR after them, fails when it should and only then:
#   an empty directory passes and is removed;
#   a file left there fails, is named, and the directory is removed;
#   a process working there fails, is named, and is stopped.
set -u
: "${top_srcdir:?}"
. "$top_srcdir/tests/lib.sh"

L="$top_srcdir/tests/leftovers.sh"

d="$T/empty"
mkdir "$d"
out=$(sh "$L" "$d")
is "$?" 0 "an empty directory passes"
like "$out" "PASS: the tests left no file" "and says so"
ok "$([ ! -e "$d" ]; echo $?)" "and is removed"

d="$T/file"
mkdir -p "$d/sub"
echo x >"$d/sub/forgotten.json"
out=$(sh "$L" "$d")
is "$?" 1 "a file left behind fails"
like "$out" "forgotten.json" "and is named"
ok "$([ ! -e "$d" ]; echo $?)" "the directory is removed either way"

d="$T/proc"
mkdir "$d"
(cd "$d" && exec sleep 300) &
pid=$!
at_exit "kill $pid 2>/dev/null"
tries=0
while [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" != "$d" ] && [ $tries -lt 100 ]; do
    sleep 0.05
    tries=$((tries + 1))
done
out=$(sh "$L" "$d")
is "$?" 1 "a process working there fails"
like "$out" "$pid sleep 300" "and is named with its command line"
tries=0   # stopped: gone, or a zombie until this shell reaps it
while [ -d "/proc/$pid" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ] && [ $tries -lt 100 ]; do
    sleep 0.05
    tries=$((tries + 1))
done
st=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)
ok "$([ -z "$st" ] || [ "$st" = Z ]; echo $?)" "and is stopped (state '${st:-gone}')"

echo "1..$n"
exit $fail
