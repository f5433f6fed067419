#!/bin/sh
# probe out_stdout_full: an answer lost to a full stdout (--ask, --json, --action, --index-only) exits 1 naming standard output
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
for m in ask json action index; do
    case $m in
    ask) drqa --ask "$Q" >/dev/full ;;
    json) drqa --json --ask "$Q" >/dev/full ;;
    action) drqa --action Outline "{\"path\": \"tinyweb/auth.py\"}" >/dev/full ;;
    index) drqa --index-only >/dev/full ;;
    esac
    [ "$rc" = 1 ] || failed "$m into /dev/full exited $rc"
    grep -q "standard output\|stdout" "$T/err" || failed "$m: stderr does not name standard output"
done
held
