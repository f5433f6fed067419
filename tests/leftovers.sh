#!/bin/sh
# leftovers.sh DIR: run by `make check` after the tests (Makefile.am,
# check-local) on the TMPDIR it gave them. Fails, naming them, when the tests
# left a file or directory in DIR, or a process still runs that was started
# with a path under DIR or has its working directory there (a fake server, a
# drqa-tui a test forgot to stop); such processes are stopped. DIR is removed
# either way, so the next run starts clean.
d=$1
[ -n "$d" ] && [ -d "$d" ] || exit 0
rc=0
procs=
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" = "$$" ] && continue
  args=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
  cwd=$(readlink "$p/cwd" 2>/dev/null)
  case "$args $cwd/" in *"$d"/*) procs="$procs $pid" ;; esac
done
if [ -n "$procs" ]; then
  echo "FAIL: processes the tests started still run (each test stops what it starts):"
  for pid in $procs; do
    printf '  %s %s\n' "$pid" "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
  done
  # shellcheck disable=SC2086
  kill $procs 2>/dev/null
  rc=1
fi
if [ -n "$(ls -A "$d")" ]; then
  echo "FAIL: the tests left these behind in $d (each test removes what it makes):"
  ls -lAR "$d" | head -40
  rc=1
fi
rm -rf "$d"
[ "$rc" = 0 ] && echo "PASS: the tests left no file in their TMPDIR and no process running"
exit "$rc"
