#!/usr/bin/env python3
"""emu_send_times.py: tests/model_emu.py with the time each event of a
streamed reply is sent written down, for bench/first-token.sh.

  emu_send_times.py --send-times FILE [model_emu.py's options]

Every event the emulator writes (tests/sse_wire.py's send) becomes one JSON
line in FILE just before its bytes go out: {"stream": N (the reply's
number, in the order the replies began), "t": seconds since the epoch
(time.time()), "text": the content delta it carries ("" for the others)}.
The emulator itself runs unchanged.
"""
import json
import os
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "tests"))
import sse_wire  # noqa: E402
import model_emu  # noqa: E402

_lock = threading.Lock()
_streams = [0]
_local = threading.local()
_log = None


def _content(data):
    """The content text of a chat chunk's delta, or ""."""
    try:
        d = json.loads(data)
        c = (d.get("choices") or [{}])[0].get("delta", {}).get("content")
        return c if isinstance(c, str) else ""
    except (ValueError, AttributeError, IndexError):
        return ""


def _wrap_send(send):
    def timed_send(h, wire, events, *args, **kw):
        with _lock:
            _streams[0] += 1
            _local.stream = _streams[0]
        return send(h, wire, events, *args, **kw)
    return timed_send


def _wrap_encode(encode):
    def timed_encode(e):
        data = e[1] if isinstance(e, tuple) else ""
        rec = {"stream": getattr(_local, "stream", 0), "t": time.time(), "text": _content(data)}
        with _lock:
            _log.write(json.dumps(rec) + "\n")
            _log.flush()
        return encode(e)
    return timed_encode


def main():
    global _log
    args = sys.argv[1:]
    if "--send-times" not in args:
        sys.exit("emu_send_times.py: --send-times FILE is required")
    i = args.index("--send-times")
    _log = open(args[i + 1], "a")
    del args[i:i + 2]
    sse_wire.send = _wrap_send(sse_wire.send)
    sse_wire.encode = _wrap_encode(sse_wire.encode)
    sys.argv = [sys.argv[0]] + args
    model_emu.main()


if __name__ == "__main__":
    main()
