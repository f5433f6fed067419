#!/usr/bin/env python3
"""ask_pty.py: runs a command with its standard input and output on a
pseudo-terminal (so isatty(1) holds, as in a terminal) and its standard
error in a file, for the tests and benches of --ask on a terminal.

  ask_pty.py --out FILE [--err FILE] [--stop-after TEXT] [--times FILE]
             [--size COLSxROWS] [--keys-after TEXT --keys KEYS] [--guard S]
             -- COMMAND ARGS...

--out          everything the command wrote to the terminal, as written
--stop-after   once TEXT has appeared in the output, SIGINT is sent to the
               command, as C-c on a terminal does
--times        one line per read from the terminal: the wall-clock time
               (seconds since the epoch, as time.time()) and the output's
               length after the read
--size         the terminal's size (default 80x24)
--keys-after   once TEXT has appeared in the output (after --stop-after's
               signal, when both are given), KEYS are typed (written to the
               terminal; \\n for Enter)
--guard        seconds after which the command is killed (a hang; default 60)

Exits with the command's exit status (128 + N when a signal N ended it).
"""
import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--err", default=os.devnull)
    ap.add_argument("--stop-after")
    ap.add_argument("--times")
    ap.add_argument("--size", default="80x24")
    ap.add_argument("--keys-after")
    ap.add_argument("--keys", default="")
    ap.add_argument("--guard", type=float, default=60.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    master, slave = pty.openpty()
    cols, rows = (int(v) for v in a.size.split("x"))
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    with open(a.err, "wb") as err:
        p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=err, close_fds=True)
    os.close(slave)
    out = bytearray()
    times = []
    stop = a.stop_after.encode() if a.stop_after else None
    sent = False
    keys_after = a.keys_after.encode() if a.keys_after else None
    typed = False
    keys_from = 0   # the output's length when the signal went: keys wait for TEXT after it
    end = time.time() + a.guard
    while True:
        left = end - time.time()
        if left <= 0:
            p.kill()
            sys.stderr.write("ask_pty: the command ran over %g s and was killed\n" % a.guard)
            break
        r, _, _ = select.select([master], [], [], min(left, 1.0))
        if not r:
            if p.poll() is not None:
                break
            continue
        try:
            d = os.read(master, 65536)
        except OSError:   # EIO: the command closed the terminal
            break
        if not d:
            break
        out += d
        times.append((time.time(), len(out)))
        if stop and not sent and stop in out:
            p.send_signal(signal.SIGINT)
            sent = True
            keys_from = len(out)
        if keys_after and not typed and (sent or not stop) and keys_after in out[keys_from:]:
            os.write(master, a.keys.replace("\\n", "\r").encode())
            typed = True
    rc = p.wait()
    os.close(master)
    with open(a.out, "wb") as f:
        f.write(out)
    if a.times:
        with open(a.times, "w") as f:
            for t, n in times:
                f.write("%.6f %d\n" % (t, n))
    if stop and not sent:
        sys.stderr.write("ask_pty: %r never appeared in the output\n" % a.stop_after)
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main())
