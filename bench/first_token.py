#!/usr/bin/env python3
"""first_token.py: the figures of bench/first-token.sh from one run.

  first_token.py SEND_TIMES OUT TIMES END_MARK START

SEND_TIMES is bench/emu_send_times.py's record of the emulator's events;
OUT and TIMES are tests/ask_pty.py's output and read times of the program
that showed the answer; END_MARK is what it shows once the whole answer is
there (the citation list's heading); START is when the program was started
(seconds since the epoch). The answer's stream is the first one
of the run (sent after START) whose text is not a
JSON reply (the JSON roles stream too). Prints one JSON
object: first_ms (the first answer token from its send to the first read
of the terminal that holds it), full_s (the first token's send to END_MARK
on the terminal), server_s (the first to the last answer token sent),
run_s (the program's start to END_MARK), gap_ms (the median wait between two answer tokens as sent: the anchor),
tokens, and token (the first token's text).
"""
import json
import sys


def main():
    send_times, out_path, times_path, end_mark = sys.argv[1:5]
    start = float(sys.argv[5])
    reads = [tuple(float(x) for x in line.split()) for line in open(times_path)]
    streams = {}
    for line in open(send_times):
        r = json.loads(line)
        if r["t"] >= start:   # this run's (the emulator may have served others before)
            streams.setdefault(r["stream"], []).append(r)
    answer = None
    for sid in sorted(streams):
        pieces = [r for r in streams[sid] if r["text"].strip()]
        if pieces and not pieces[0]["text"].lstrip().startswith(("{", "```")):
            answer = pieces
            break
    if not answer:
        sys.exit("first_token.py: no answer stream in %s" % send_times)
    out = open(out_path, "rb").read()
    tok = answer[0]["text"].strip()[:12].encode()
    t0 = answer[0]["t"]
    before = 0   # the output's length when the token was sent: it is looked for after that
    for t, n in reads:
        if t < t0:
            before = int(n)
    at = out.find(tok, before)
    end = out.find(end_mark.encode(), at if at >= 0 else before)
    if at < 0 or end < 0:
        sys.exit("first_token.py: %r%s never reached the terminal" % (tok, "" if at < 0 else " or its end"))
    t_first = next(t for t, n in reads if n >= at + len(tok))
    t_full = next(t for t, n in reads if n >= end + len(end_mark))
    gaps = sorted(b["t"] - a["t"] for a, b in zip(answer, answer[1:]))
    print(json.dumps({
        "first_ms": round((t_first - t0) * 1000, 1),
        "full_s": round(t_full - t0, 3),
        "server_s": round(answer[-1]["t"] - t0, 3),
        "run_s": round(t_full - start, 3),
        "gap_ms": round(gaps[len(gaps) // 2] * 1000, 1) if gaps else None,
        "tokens": len(answer),
        "token": tok.decode("utf-8", "replace"),
    }))


if __name__ == "__main__":
    main()
