#!/bin/sh
# probe: another program's WAL-mode sqlite file given as --index is refused
# by --index-only, --action and --ask with nothing created beside it (no -wal,
# no -shm) and nothing changed; a -wal and -shm that were there stay.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_wal_foreign
mkdir "$T/w"
"$PYTHON3" - "$T/w" <<'PY'
import sqlite3, sys, os
for name, app in (("plain.db", 0), ("app.db", 42)):
    c = sqlite3.connect(os.path.join(sys.argv[1], name))
    c.execute("pragma journal_mode=wal")
    if app:
        c.execute("pragma application_id=%d" % app)
    c.execute("create table t(x)")
    c.commit()
    c.close()
PY
before=$(cd "$T/w" && ls | tr '\n' ' ' && sha256sum -- * | sha256sum)
for db in plain.db app.db; do
    for mode in "--index-only" "--action ListFiles {}" "--ask where"; do
        # shellcheck disable=SC2086
        "$DRQA" --index "$T/w/$db" --no-progress $mode "$R" >/dev/null 2>&1
        rc=$?
        [ $rc -eq 2 ] || probe_done 1 "$db ${mode%% *}: exit $rc, not 2"
        after=$(cd "$T/w" && ls | tr '\n' ' ' && sha256sum -- * | sha256sum)
        [ "$after" = "$before" ] || probe_done 1 "$db ${mode%% *}: the directory changed: $(ls "$T/w" | tr '\n' ' ')"
    done
done
"$PYTHON3" - "$T/w/live.db" <<'PY'
import sqlite3, sys, os
c = sqlite3.connect(sys.argv[1])
c.execute("pragma journal_mode=wal")
c.execute("pragma wal_autocheckpoint=0")
c.execute("create table t(x)")
c.commit()
os._exit(0)
PY
"$DRQA" --index "$T/w/live.db" --no-progress --index-only "$R" >/dev/null 2>&1
[ "$(ls "$T/w" | grep -c '^live\.db')" -eq 3 ] || probe_done 1 "a -wal or -shm that was there is gone"
probe_done 0
