# ui_tmux.sh: shell helpers for the tmux-driven front end tests (sourced).
# A private tmux server (-L) per test, killed on exit; screens are read with
# capture-pane and waited for by bounded polling, never by fixed sleeps. The
# temporary directory, HOME and the rest come from tests/lib.sh.
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux is not installed"
    exit 0
fi
# the directory's name as short as it was: the screens show paths under it
lib_name=ui-test
. "$top_srcdir/tests/lib.sh"
SOCK="drqa-ui-$$"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
# kill-server leaves the socket file behind: remove it too.
at_exit 'tm kill-server 2>/dev/null; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"'
unset NO_COLOR

# A failed test (tap.sh) shows the last screen captured.
tap_fail_hook() { [ -f "$T/screen" ] && sed 's/^/#   |/' "$T/screen"; }

# run_ui W H ENV... -- ARGS...: starts drqa-tui in a new tmux session "ui";
# when it exits the pane shows "EXIT=<status>". With a test hook among the
# ENV (DRQA_TUI_*, DRQA_TEST_*: ui/test_hooks.h) it is the test build,
# $DRQA_HOOKS, since drqa-tui itself reads none.
run_ui() {
    w=$1 h=$2; shift 2
    envs="" prog=$DRQA
    while [ "$1" != "--" ]; do
        case $1 in DRQA_TUI_* | DRQA_TEST_*) prog=$DRQA_HOOKS ;; esac
        envs="$envs $1"
        shift
    done
    shift
    args=""
    for a in "$@"; do args="$args '$a'"; done
    # the shell outlives a C-c sent to the front end (trap ':' leaves the
    # child's SIGINT at its default) so that its exit status is shown
    printf '#!/bin/sh\ntrap : INT\nenv LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color%s "%s"%s 2>"%s/stderr"\necho "EXIT=$?"\nexec sleep 600\n' \
        "$envs" "$prog" "$args" "$T" >"$T/run.sh"
    # A new session before the old one goes: the server exits with its last.
    old=$S
    S="ui$((${S#ui} + 1))"
    tm new-session -d -s "$S" -x "$w" -y "$h" "sh $T/run.sh"
    [ "$old" = ui0 ] || tm kill-session -t "$old"
}
S=ui0
# screen: the pane as drawn. A frame is written top down, in more than one
# write when it is large, and tmux may be asked for the pane between two of
# them (the rows below still the last frame's; on a loaded machine the
# program may wait for a core in between): the pane is captured again 20 ms
# later until two captures in a row are the same, at most 5 times; a screen
# that keeps changing (a live search) is taken as last captured.
screen() {
    tm capture-pane -p -t "$S" >"$T/.cap0" || return 1
    _caps=0
    while [ $_caps -lt 5 ]; do
        sleep 0.02
        tm capture-pane -p -t "$S" >"$T/.cap1" || return 1
        cmp -s "$T/.cap0" "$T/.cap1" && break
        mv "$T/.cap1" "$T/.cap0"
        _caps=$((_caps + 1))
    done
    cat "$T/.cap0"
}
# wait_for REGEX [TRIES]: polls the screen (every 20 ms, 500 tries by default)
# until a line matches; the screen is left in $T/screen either way.
wait_for() { wait_screen "${2:-500}" screen_has "$1"; }
# wait_all REGEX...: the same until one screen has a line matching each
# REGEX; wait_until CMD...: until CMD, reading $T/screen, succeeds. A screen
# may be read between the frames of one key or the layouts of keys sent
# together (screen waits only for the frame being written): what a check
# reads on one screen is waited for on one screen, not by its first line
# alone.
wait_all() { wait_screen 500 screen_has "$@"; }
wait_until() { wait_screen 500 "$@"; }
# screen_has REGEX...: every REGEX matches a line of $T/screen; else $missed names the first that does not
screen_has() {
    for re in "$@"; do grep -E -q -- "$re" "$T/screen" || { missed=$re; return 1; }; done
}
# wait_screen TRIES CMD...: wait_until with another number of tries. The
# tries are for an idle machine; a loaded one (CI runs as many tests at once
# as it has cores) draws slower, so each is allowed UI_WAIT_SCALE (3) times
# as many: a wait that is met returns at once, only a failure takes longer.
wait_screen() {
    i=0 max=$(($1 * ${UI_WAIT_SCALE:-3}))
    shift
    while [ $i -lt "$max" ]; do
        screen >"$T/screen" 2>"$T/tmux.err" || { echo "# tmux: $(cat "$T/tmux.err")"; return 1; }
        missed="$*"
        "$@" && return 0
        i=$((i + 1))
        sleep 0.02
    done
    echo "# waited in vain for: $missed"
    sed 's/^/#   |/' "$T/screen"
    return 1
}
keys() { tm send-keys -t "$S" "$@"; }
resize() { tm resize-window -t "$S" -x "$1" -y "$2"; }
# focus_pane NAME: Tab until the pane whose title begins with NAME (Tree,
# Node, Evidence, Answer) has the focus (a bar in its title), each Tab sent
# once the last one is drawn. Keys sent together go round the layout of the
# moment they are read: an answer arriving between them adds a pane, and a
# blind "Tab Tab Tab" then stops elsewhere.
focused_name() { grep -o '[A-Z][A-Za-z]*[^│━=]*━' "$T/screen" | head -1 | cut -d' ' -f1; }
has_focus() { [ -n "$(focused_name)" ]; }
focus_moved() { f=$(focused_name); [ -n "$f" ] && [ "$f" != "$1" ]; }
focus_pane() {
    _tabs=0
    while [ $_tabs -lt 6 ]; do
        wait_until has_focus || return 1
        _cur=$(focused_name)
        [ "$_cur" = "$1" ] && return 0
        keys Tab
        wait_until focus_moved "$_cur" || return 1
        _tabs=$((_tabs + 1))
    done
    echo "# no pane named $1 took the focus after 6 Tabs"
    return 1
}
