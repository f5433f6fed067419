#!/bin/sh
# Hostile repositories, made at test time in a temp dir: empty, only binaries,
# a 50 MB file (sparse), symlink loops, a FIFO and unreadable files and
# directories, 10,000 nested directories, file names that are not UTF-8, and
# files rewritten, truncated, deleted and created while the indexer runs.
# Each is indexed with exit status 0 and every problem counted as a skip row
# with its reason; --action still answers over what was indexed.
#
# Unreadable files: root reads whatever the permission bits say, so as root a
# chmod 000 file is indexed like any other (checked below). The unprivileged
# case runs the indexer as user nobody through setpriv when this test runs as
# root and nobody can reach the binary; otherwise those checks are skipped.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

# index NAME: --index-only --json of $T/NAME into $T/NAME.sqlite; status in $rc
index() { "$DRQA" --index "$T/$1.sqlite" --no-progress --index-only --json "$T/$1" >"$T/out" 2>"$T/err"; rc=$?; }
# q EXPR: a Python expression over the JSON in $T/out (d), which must be valid UTF-8 JSON
q() { "$PYTHON3" -c "import json,sys; d=json.loads(open('$T/out','rb').read().decode('utf-8')); r=($1); print(r if isinstance(r, str) else repr(r))"; }
skips() { q "sorted((s['path'], s['reason']) for s in d['skipped'])"; }
# act NAME ACTION JSON: --action over the index of $T/NAME
act() { "$DRQA" --index "$T/$1.sqlite" --no-progress --action "$2" "$3" "$T/$1" >"$T/out" 2>"$T/err"; rc=$?; }

# --- empty
mkdir "$T/empty"
index empty
is "$rc" 0 "empty: exit 0"
is "$(q "d['files']['indexed'], d['files']['skipped']")" "(0, 0)" "empty: nothing indexed, nothing skipped"
act empty ListFiles '{}'
is "$rc" 0 "empty: ListFiles answers"
is "$(q "d['items']")" "[]" "empty: with no files"
act empty FindClass '{"class_name":"App"}'
is "$rc" 0 "empty: FindClass answers"
is "$(q "len(d['items'])")" 0 "empty: with no match"
act empty FindReferences '{"symbol":"App"}'
is "$rc:$(q "len(d['items'])")" "0:0" "empty: FindReferences answers, no references (no qsort of nothing)"

# --- only binaries (sources with NUL bytes, and non-source files)
mkdir "$T/bin"
printf 'def f():\000\n' >"$T/bin/c.py"
printf '\177ELF\002\001\001\000\000\000' >"$T/bin/lib.py"
printf '\211PNG\r\n\032\n\000\000' >"$T/bin/logo.png"
printf 'package x\000' >"$T/bin/X.java"
index bin
is "$rc" 0 "binaries: exit 0"
is "$(skips)" "[('X.java', 'binary (NUL byte in the first 8 KiB)'), ('c.py', 'binary (NUL byte in the first 8 KiB)'), ('lib.py', 'binary (NUL byte in the first 8 KiB)')]" \
   "binaries: each source file skipped as binary, non-source files ignored"
act bin ListFiles '{}'
is "$rc:$(q "len(d['items'])")" "0:0" "binaries: ListFiles answers, no files"

# --- a 50 MB file (sparse) next to a normal one
mkdir "$T/big"
truncate -s 50M "$T/big/huge.py"
echo 'def small(): return 1' >"$T/big/ok.py"
index big
is "$rc" 0 "50 MB file: exit 0"
is "$(skips)" "[('huge.py', 'too large (52428800 bytes > 1048576)')]" "50 MB file: skipped as too large, with its size"
is "$(q "d['files']['indexed'], d['symbols']['functions']")" "(1, 1)" "50 MB file: the other file indexed"
act big FindFunction '{"function_name":"small"}'
is "$rc:$(q "d['items'][0]['path']")" "0:ok.py" "50 MB file: FindFunction answers"

# --- symlink loops: two links to each other, a link to its own directory, one to the parent
mkdir -p "$T/loop/d"
ln -s b "$T/loop/a"
ln -s a "$T/loop/b"
ln -s ../d "$T/loop/d/self"
ln -s .. "$T/loop/d/up"
ln -s /etc/passwd "$T/loop/d/out.py"
echo 'def inloop(): pass' >"$T/loop/d/m.py"
index loop
is "$rc" 0 "symlink loops: exit 0"
is "$(skips)" "[('a', 'symlink loop'), ('b', 'symlink loop'), ('d/out.py', 'symlink outside the repository'), ('d/self', 'symlink loop'), ('d/up', 'symlink loop')]" \
   "symlink loops: each loop and the link out skipped, with reasons"
is "$(q "d['files']['indexed']")" 1 "symlink loops: the real file indexed once"
act loop ViewCode '{"code_span_list":["d/m.py"]}'
is "$rc:$(q "d['evidence'][0]['path']")" "0:d/m.py" "symlink loops: ViewCode answers"

# --- a FIFO (would block a plain open) and unreadable files
mkdir -p "$T/perm/closed"
mkfifo "$T/perm/pipe.py"
echo 'def fine(): pass' >"$T/perm/ok.py"
echo 'def hidden(): pass' >"$T/perm/secret.py"
echo 'def inside(): pass' >"$T/perm/closed/z.py"
chmod 000 "$T/perm/secret.py" "$T/perm/closed"
index perm
is "$rc" 0 "FIFO and unreadable files: exit 0"
if [ "$(id -u)" = 0 ]; then
    is "$(skips)" "[('pipe.py', 'not a regular file')]" "as root: the FIFO skipped, never opened"
    is "$(q "d['files']['indexed']")" 3 "as root: mode 000 files and directories are read (root ignores permissions)"
else
    is "$(skips)" "[('closed', 'unreadable directory'), ('pipe.py', 'not a regular file'), ('secret.py', 'unreadable (Permission denied)')]" \
       "unprivileged: the FIFO and the unreadable file and directory skipped, with reasons"
    is "$(q "d['files']['indexed']")" 1 "unprivileged: the readable file indexed"
fi
NOBODY=65534
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
   setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$DRQA" --version >/dev/null 2>&1; then
    chmod 755 "$T" "$T/perm"
    mkdir "$T/nobody" && chown $NOBODY:$NOBODY "$T/nobody"
    setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$DRQA" --index "$T/nobody/perm.sqlite" \
        --no-progress --index-only --json "$T/perm" >"$T/out" 2>"$T/err"
    is "$?" 0 "as nobody (setpriv): exit 0"
    is "$(skips)" "[('closed', 'unreadable directory'), ('pipe.py', 'not a regular file'), ('secret.py', 'unreadable (Permission denied)')]" \
       "as nobody: the FIFO, the unreadable file and directory skipped, with reasons"
    is "$(q "d['files']['indexed']")" 1 "as nobody: the readable file indexed"
    chmod 700 "$T"
else
    skip "unprivileged run: not root, no setpriv, or user nobody cannot run $DRQA"
    skip "unprivileged run"
    skip "unprivileged run"
fi
chmod 755 "$T/perm/closed"

# --- 10,000 nested directories (paths far beyond PATH_MAX)
mkdir "$T/deep"
"$PYTHON3" - "$T/deep" <<'PY'
import os, sys
os.chdir(sys.argv[1])
open('top.py', 'w').write('def top(): pass\n')
for _ in range(10000):
    os.mkdir('d')
    os.chdir('d')
open('bottom.py', 'w').write('def bottom(): pass\n')
PY
index deep
is "$rc" 0 "10,000 nested directories: exit 0 (no stack overflow)"
is "$(q "[(s['path'].count('/') + 1, s['reason']) for s in d['skipped']]")" "[(257, 'directory nested too deeply')]" \
   "nested directories: the 257th level skipped, one skip row"
act deep FindFunction '{"function_name":"top"}'
is "$rc:$(q "d['items'][0]['path']")" "0:top.py" "nested directories: FindFunction answers"

# --- file names that are not UTF-8, and one with a terminal escape
mkdir "$T/names"
echo 'def latin(): pass' >"$T/names/caf$(printf '\351').py"
echo 'def bad(): pass' >"$T/names/x$(printf '\377\376').py"
echo 'def esc(): pass' >"$T/names/e$(printf '\033')[31mred.py"
echo 'def plain(): pass' >"$T/names/plain.py"
index names
is "$rc" 0 "non-UTF-8 names: exit 0"
is "$(q "ascii(sorted((s['path'], s['reason']) for s in d['skipped']))")" \
   "[('caf\ufffd.py', 'file name is not valid UTF-8'), ('x\ufffd\ufffd.py', 'file name is not valid UTF-8')]" \
   "non-UTF-8 names: skipped with a reason, the name shown with U+FFFD (the JSON is valid UTF-8)"
act names ListFiles '{}'
is "$rc" 0 "non-UTF-8 names: ListFiles answers"
is "$(q "[i['path'] for i in d['items']]")" "['e\x1b[31mred.py', 'plain.py']" "the UTF-8 names are listed"
od -c "$T/out" | grep -q '033'
ok $((!$?)) "an escape character in a name never reaches stdout raw"

# --- files changing while the indexer runs: a writer loop bounded by a count
mkdir "$T/churn"
i=0
while [ $i -lt 200 ]; do printf 'def f%d(x):\n    return x + %d\n' $i $i >"$T/churn/m$i.py"; i=$((i + 1)); done
(
    j=0
    while [ $j -lt 20000 ] && [ ! -e "$T/stop" ]; do
        k=$((j % 200))
        case $((j % 4)) in
        0) printf 'def g%d(y):\n    return y * %d\n\nclass C%d:\n    pass\n' $j $j $j >"$T/churn/m$k.py" ;;
        1) : >"$T/churn/m$k.py" ;;
        2) rm -f "$T/churn/m$k.py" ;;
        3) printf 'def f%d(x):\n    return x + %d\n' $k $k >"$T/churn/m$k.py" ;;
        esac
        j=$((j + 1))
    done
    touch "$T/writer-done"
) &
writer=$!
churn_rc=0
r=0
while [ $r -lt 5 ]; do
    index churn
    [ "$rc" = 0 ] || { churn_rc=$rc; sed 's/^/#   /' "$T/err"; }
    r=$((r + 1))
done
touch "$T/stop"
wait $writer
is "$churn_rc" 0 "files changing during indexing: five updates, each exit 0"
index churn
is "$rc" 0 "files changing: the update after the writer stopped exits 0"
is "$(q "d['files']['indexed']")" "$(ls "$T/churn" | grep -c '\.py$')" "files changing: the index then holds exactly the files on disk"
act churn ListFiles '{}'
is "$rc" 0 "files changing: ListFiles answers"
act churn FindFunction '{"function_name":"f3"}'
is "$rc" 0 "files changing: FindFunction answers"

echo "1..$n"
exit $fail
