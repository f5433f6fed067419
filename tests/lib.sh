# lib.sh: the setup every shell test shares, sourced after top_srcdir is set
# (it sources tap.sh). After it:
#   $T                a private temporary directory, removed at exit (kept,
#                     and said, when KEEP is set), named after $lib_name when
#                     set (else after the script)
#   HOME, XDG_*_HOME  private directories under $T (HOME exists), and no model
#                     or provider variable of the caller's, so that nothing of
#                     the developer's own setup reaches a test
#   NO_PROXY          loopback, so that the tests' local servers are reached
#   $DRQA_HOOKS       the program built with the test hooks (mk/index.am)
# Helpers:
#   at_exit CMD             CMD runs at exit (in order), before $T goes
#   bg_start PORTFILE CMD.. CMD in the background (stdout dropped), killed at
#                           exit; waits (bounded poll) until it wrote its port
#                           to PORTFILE; sets $port and $bg_pid. Returns 1,
#                           with a TAP comment, when it never did.
#   bg_stop [PID]           stops one (default $bg_pid) and waits for it
#   emu_start NAME ARGS..   tests/model_emu.py logging to $T/NAME.log, port
#                           file $T/NAME.port, via bg_start; emu_stop stops it
#   git_private             git with no user or system configuration and a
#                           fixed author, for the repositories tests commit to
#   wait_file FILE [TRIES]  polls (every 0.1 s, 1200 tries by default) until
#                           FILE exists
#   wait_grep ERE FILE [TRIES]  the same until a line of FILE matches
#   need_hooks              for a test of the hooks alone: without $DRQA_HOOKS,
#                           one skipped test, the plan, and exit 0
#   many_modules DIR        DIR made, with 300 small Python modules in it
#   submodule_repo DIR SUB  git repositories: DIR (one file, out.py) holding
#                           SUB (one file, in.py) as its submodule 'sub'
#   ledger_class            prints a large Python class (Ledger: 30 methods of
#                           15 lines), for the tests of a class's outline
#   dispatch_script FILE ANSWER  a tests/fake_llm.py script for the question
#                           where App.dispatch_request calls the view: the
#                           model perceives it, finds it, then finishes,
#                           keeps tinyweb/app.py:46-51, values 80 and
#                           answers ANSWER
# fake_start and fake_stop (tests/fake_llm.sh) are there too; every fake
# server still running is stopped at exit. A test that sets its own EXIT trap
# calls cleanup in it.
: "${top_srcdir:?}" "${top_builddir:=.}" "${PYTHON3:=python3}"
# the interpreter itself, not a version manager's shim in front of it (pyenv's
# runs shell scripts on every call: a tenth of a second idle, seconds on a
# loaded machine, for tests that call Python hundreds of times)
lib_py=$("$PYTHON3" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$lib_py" ] && PYTHON3=$lib_py
export PYTHON3
# the program with the test hooks (DRQA_TEST_*, DRQA_TUI_*; mk/index.am)
: "${DRQA_HOOKS:=$top_builddir/tests/drqa-tui-hooks}"
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/fake_llm.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-${lib_name:-$(basename "$0" .sh)}.XXXXXX") || exit 99
lib_at_exit=
lib_bg_pids=
bg_pid=
at_exit() { lib_at_exit="$lib_at_exit
$1"; }
# Runs once even when called from a test's own trap and then the exit.
cleanup() {
    [ -n "$T" ] || return 0
    eval "$lib_at_exit"
    lib_at_exit=
    fake_stop
    for p in $lib_bg_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    lib_bg_pids=
    if [ -n "${KEEP:-}" ]; then
        echo "# kept $T"
    else
        chmod -R u+rwx "$T" 2>/dev/null
        rm -rf "$T"
    fi
    T=
}
trap cleanup EXIT
export HOME="$T/home" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data" \
    XDG_STATE_HOME="$T/state"
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
unset DRQA_MODEL DRQA_API_BASE DRQA_API_KEY DRQA_PROVIDER DRQA_EMBED_BASE DRQA_EMBED_MODEL DRQA_EMBED_KEY \
    OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY AZURE_OPENAI_API_KEY AZURE_OPENAI_ENDPOINT OLLAMA_HOST
mkdir -p "$HOME"

bg_start() {
    _pf=$1
    shift
    rm -f "$_pf"
    "$@" >/dev/null &
    bg_pid=$!
    lib_bg_pids="$lib_bg_pids $bg_pid"
    _i=0
    while [ ! -s "$_pf" ] && [ $_i -lt 600 ] && kill -0 "$bg_pid" 2>/dev/null; do sleep 0.05; _i=$((_i + 1)); done
    port=$(cat "$_pf" 2>/dev/null)
    [ -n "$port" ] && return 0
    echo "# $1 ${2:-} never wrote its port to $_pf"
    return 1
}
bg_stop() {
    _p=${1:-$bg_pid}
    [ -n "$_p" ] || return 0
    kill "$_p" 2>/dev/null
    wait "$_p" 2>/dev/null
    _rest=
    for _q in $lib_bg_pids; do [ "$_q" = "$_p" ] || _rest="$_rest $_q"; done
    lib_bg_pids=$_rest
    [ "$_p" = "$bg_pid" ] && bg_pid=
    return 0
}
emu_start() {
    _name=$1
    shift
    bg_start "$T/$_name.port" "$PYTHON3" "$top_srcdir/tests/model_emu.py" --log "$T/$_name.log" \
        --port-file "$T/$_name.port" --max-seconds 120 "$@"
}
emu_stop() { bg_stop; }

wait_file() {
    _i=0
    while [ ! -e "$1" ] && [ $_i -lt "${2:-1200}" ]; do sleep 0.1; _i=$((_i + 1)); done
    [ -e "$1" ]
}
wait_grep() {
    _i=0
    while ! grep -E -q -- "$1" "$2" 2>/dev/null && [ $_i -lt "${3:-1200}" ]; do sleep 0.1; _i=$((_i + 1)); done
    grep -E -q -- "$1" "$2" 2>/dev/null
}

need_hooks() {
    [ -x "$DRQA_HOOKS" ] && return 0
    skip "no $DRQA_HOOKS (make check builds it)"
    echo "1..$n"
    exit 0
}
git_private() {
    export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
        GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
}

many_modules() {
    mkdir -p "$1"
    _i=0
    while [ $_i -lt 300 ]; do
        printf 'def f%d(x):\n    """doc %d"""\n    return x + %d\n\nclass C%d:\n    def m(self):\n        return f%d(1)\n' \
            $_i $_i $_i $_i $_i >"$1/m$_i.py"
        _i=$((_i + 1))
    done
}

submodule_repo() {
    _g="git -c user.email=t@example.com -c user.name=t -c protocol.file.allow=always -c init.defaultBranch=main"
    mkdir -p "$1" "$2"
    printf 'def inner_fn():\n    return 1\n' >"$2/in.py"
    printf 'def outer_fn():\n    return 2\n' >"$1/out.py"
    (cd "$2" && $_g init -q && $_g add . && $_g commit -qm i) >/dev/null 2>&1
    (cd "$1" && $_g init -q && $_g submodule add -q "$2" sub && $_g add . && $_g commit -qm o) >/dev/null 2>&1
}

ledger_class() {
    printf 'class Ledger:\n    """Keeps accounts and settles them at the end of the day."""\n\n'
    i=0
    while [ $i -lt 30 ]; do
        printf '    def post_%d(self, amount):\n        """Post entry %d."""\n' $i $i
        k=0
        while [ $k -lt 12 ]; do printf '        total_%d = amount * %d\n' $k $k; k=$((k + 1)); done
        printf '        return total_0\n\n'
        i=$((i + 1))
    done
}

dispatch_script() {
    "$PYTHON3" - "$1" "$2" <<'PY'
import json, sys
def rule(agent, content, **more):
    return dict({"match": "You are the %s" % agent, "content": json.dumps(content)}, **more)
rules = [
    rule("Perception Agent", {"summary": "start", "candidates": ["App.dispatch_request"]}),
    rule("Planning Agent", {"action": "FindFunction", "args": {"function_name": "dispatch_request"}}, times=1),
    rule("Planning Agent", {"action": "Finish", "args": {"answer": "see app.py", "finish_reason": "found"}}),
    rule("Evidence Filter", {"spans": [{"path": "tinyweb/app.py", "start_line": 46, "end_line": 51}]}),
    rule("Evaluation Agent", {"value": 80, "feedback": "read it"}),
    rule("Answer Agent", {"answer": sys.argv[2]}),
]
json.dump({"rules": rules}, open(sys.argv[1], "w"), indent=1)
PY
}
