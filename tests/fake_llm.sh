# fake_llm.sh: the scripted fake model server (tests/fake_llm.py) for the
# shell tests, sourced after top_srcdir (and PYTHON3) are set.
#   fake_start SCRIPT LOG  starts a server on a free loopback port with the
#                          script file SCRIPT, its requests logged to LOG (one
#                          JSON line each) and its stderr to LOG.err; waits
#                          (polling its port file, at most 30 s) until it
#                          listens; sets $port and $fake_pid. Returns 1, with
#                          a TAP comment, when it never came up.
#   fake_stop              stops every server fake_start started.
# Several servers may run at once (read $port after each start).
fake_pids=
fake_pid=
port=
fake_start() {
    rm -f "$2.port"
    "${PYTHON3:-python3}" "$top_srcdir/tests/fake_llm.py" --script "$1" --log "$2" --port-file "$2.port" \
        >/dev/null 2>"$2.err" &
    fake_pid=$!
    fake_pids="$fake_pids $fake_pid"
    i=0
    while [ ! -s "$2.port" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    port=$(cat "$2.port" 2>/dev/null)
    if [ -z "$port" ]; then
        echo "# the fake server ($1) never wrote its port: $(cat "$2.err" 2>/dev/null)"
        return 1
    fi
}
fake_stop() {
    for p in $fake_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    fake_pids=
    fake_pid=
}
