#!/usr/bin/env python3
"""fake_llm: a scripted loopback stand-in for OpenAI- and Anthropic-compatible
model servers, used by the tests so that the HTTP clients are exercised
against real sockets without any model.

It binds 127.0.0.1 on an ephemeral port (or --port), prints the port on stdout
and writes it to --port-file, and answers:

  POST .../chat/completions   OpenAI chat completions format
  POST .../messages           Anthropic messages format
  POST .../embeddings         OpenAI embeddings: deterministic vectors built
                              from hashed words (FNV-1a 64 of each
                              whitespace-separated word: index h % dim, sign
                              from bit 32, weight 2), data listed in reverse
                              order unless "embed_shuffle" is false

Replies come from a JSON script file:

  {"rules":    [REPLY, ...],   first rule whose "match" substring occurs in
                               the prompt (and whose "endpoint", if given,
                               is chat|messages|embeddings) and which has
                               uses left ("times") is used
   "sequence": [REPLY, ...],   else the next of these, in order
   "default":  REPLY,          else this
   "embed_dim": 8,
   "embed_max_tokens": N,      embeddings: refuse a request holding an input of
                               more than N tokens (counted by embed_tokens), as
   "embed_limit_style": S}     server S words it: "llamacpp" (500, the limit
                               named as the batch size), "llamacpp-old" (500,
                               no number), "vllm" (400), "openai" (400), "tei"
                               (413)

A rule may also hold "body_has" / "body_lacks": a substring the raw request
body must / must not contain (a server that refuses a parameter only when
it is sent).

A REPLY may hold: "content" (the model text), "usage" ({"input": N,
"output": M}, optionally "cached" and "reasoning" (OpenAI's
prompt_tokens_details.cached_tokens and
completion_tokens_details.reasoning_tokens; Anthropic's
cache_read_input_tokens) and "cache_write" (Anthropic's
cache_creation_input_tokens), or null to leave usage out; by default bytes/4
is reported), "reasoning" (OpenAI-compatible: message.reasoning_content, as
vLLM and DeepSeek send it; Anthropic: a thinking block before the text),
"tool_input" (Anthropic: a tool_use block with this input, named as the
request's tool_choice, stop_reason tool_use), "error_body" (with "status": the
exact error JSON to send, e.g. a provider's documented body),
"content_parts" (OpenAI-compatible: message.content as a list of parts, as
Mistral's Magistral models send it: a {"type": "thinking", "thinking":
[{"type": "text", "text": REASONING}]} part when "reasoning" is given, then
the content as {"type": "text", "text": ...} parts, split in two),
"finish" (finish/stop reason), "status" (an error status: the body is the
provider's error JSON with "error" as the message), "retry_after" (header
value), "headers" (more headers of an error reply, e.g. {"retry-after-ms":
"7"}), "delay_ms" (latency before answering), and "fault", one of:
  hang           read the request, then send nothing for "hang_s" seconds
  close          close the connection without a reply
  truncate       Content-Length larger than the body sent, then close
  malformed      a 200 reply whose body is not JSON
  oversize       a valid reply of "oversize_bytes" bytes (default 10 MB)
  empty_choices  "choices": [] (Anthropic: "content": [])
  null_content   message content null (Anthropic: no text block)
  prose          the content wrapped in prose and a ```json fence
  echo_key       401 whose message repeats the credential it was sent
  error_200      status 200 with the provider's error JSON as the body
  bad_index      embeddings: an index out of range
A request with "stream": true is answered as an event stream in its API's
wire format (tests/sse_wire.py), unless the script's top-level "stream" is
false (a server that ignores the field) or the REPLY's is; a REPLY with
"stream": "always" streams unasked too. A streamed REPLY may hold
"token_delay_ms" (a wait before each piece) and "stream_fault": disconnect,
stall (for "hang_s"), malformed, error_event or end_early (sse_wire.py).
A REPLY with "max_model_len" N plays a server with that context window: the
input counts (prompt bytes + 3) // 4 tokens, the reply limit the request's
max_tokens (or max_completion_tokens); an input of N or more, or input plus
limit over N, is refused as "context_style" words it: "vllm" (400, the
limit named with the input), "vllm-old" (400, "(K in the messages, M in the
completion)"), "anthropic" (400, "input length and `max_tokens` exceed
context limit: K + M > N"), "tgi" (text-generation-inference: 422,
{"error": "Input validation error: ...", "error_type": "validation"}); else
the reply is sent.
A REPLY with "max_output" N plays a model that writes at most N tokens: a
reply limit over N is refused as "output_style" words it: "openai" (400,
"max_tokens is too large: M. This model supports at most N completion
tokens, whereas you provided M.", param max_tokens), "anthropic" (400,
"max_tokens: M > N, which is the maximum allowed number of output tokens for
MODEL"), "deepseek" (400, "Invalid max_tokens value, the valid range of
max_tokens is [1, N]"), "groq" (400, "`max_tokens` must be less than or equal
to `N`, ..."), "tgi" (422, "`max_new_tokens` must be <= N. Given: M").
Every request is appended to --log as one JSON line before it is answered:
{"n", "method", "path", "headers" (names lowercased), "body" (raw text),
"prompt" (the text matched against), "rule"}.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import sse_wire  # noqa: E402  (tests/sse_wire.py: the event streams of each API)
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fnv1a64(data):
    h = 1469598103934665603
    for b in data:
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def embed_tokens(text):
    """Tokens of text as a subword tokenizer cuts code: a digit or a mark is
    one, a run of letters one per four (WordPiece and BPE split identifiers)."""
    n = 0
    run = 0
    for ch in text:
        if ch.isalpha():
            run += 1
            continue
        n += (run + 3) // 4
        run = 0
        if not ch.isspace():
            n += 1
    return n + (run + 3) // 4


def too_long_reply(style, limit, given):
    """The status and body a server of that style sends for an input of
    `given` tokens over `limit`."""
    if style == "llamacpp":
        return 500, {"error": {"code": 500, "message": "input (%d tokens) is too large to process. increase the "
                               "physical batch size (current batch size: %d)" % (given, limit), "type": "server_error"}}
    if style == "llamacpp-old":
        return 500, {"error": {"code": 500, "message": "input is too large to process. increase the physical batch size",
                               "type": "server_error"}}
    if style == "vllm":
        return 400, {"object": "error", "message": "This model's maximum context length is %d tokens. However, you "
                     "requested %d tokens in the input for embedding generation. Please reduce the length of the "
                     "input." % (limit, given), "type": "BadRequestError", "param": None, "code": 400}
    if style == "tei":
        return 413, {"error": "Input validation error: `inputs` must have less than %d tokens. Given: %d" % (limit, given),
                     "error_type": "Validation"}
    return 400, {"error": {"message": "This model's maximum context length is %d tokens, however you requested %d tokens "
                           "(%d in your prompt; 0 for the completion). Please reduce your prompt; or completion length."
                           % (limit, given, given), "type": "invalid_request_error", "param": None, "code": None}}


def context_refusal(style, window, given, limit):
    """The status and body a server of that style sends for a request of
    `given` input tokens and reply limit `limit` over a `window`-token
    context, or None when it fits."""
    if given < window and given + limit <= window:
        return None
    if style == "tgi":
        if given >= window:
            msg = "Input validation error: `inputs` must have less than %d tokens. Given: %d" % (window, given)
        else:
            msg = "Input validation error: `inputs` tokens + `max_new_tokens` must be <= %d. Given: %d `inputs` " \
                  "tokens and %d `max_new_tokens`" % (window, given, limit)
        return 422, {"error": msg, "error_type": "validation"}
    if style == "anthropic":
        msg = "input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or " \
              "`max_tokens` and try again" % (given, limit, window)
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
    if given >= window:
        msg = "This model's maximum context length is %d tokens. However, your request has %d input tokens. " \
              "Please reduce the length of the input messages." % (window, given)
    elif style == "vllm-old":
        msg = "This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the " \
              "messages, %d in the completion). Please reduce the length of the messages or completion." \
              % (window, given + limit, given, limit)
    else:
        msg = "'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is " \
              "%d tokens and your request has %d input tokens (%d > %d - %d)." % (limit, window, given, limit,
                                                                                  window, given)
    return 400, {"object": "error", "message": msg, "type": "BadRequestError", "param": None, "code": 400}


def output_refusal(style, cap, limit, model, param):
    """The status and body a server of that style sends for a reply limit
    `limit` (sent as `param`) over the model's output limit `cap`."""
    if style == "anthropic":
        msg = "max_tokens: %d > %d, which is the maximum allowed number of output tokens for %s" % (limit, cap, model)
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
    if style == "deepseek":
        return 400, {"error": {"message": "Invalid max_tokens value, the valid range of max_tokens is [1, %d]" % cap,
                               "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}
    if style == "groq":
        return 400, {"error": {"message": "`max_tokens` must be less than or equal to `%d`, the maximum value for "
                                          "`max_tokens` is less than the `context_window` for this model" % cap,
                               "type": "invalid_request_error"}}
    if style == "tgi":
        return 422, {"error": "Input validation error: `max_new_tokens` must be <= %d. Given: %d" % (cap, limit),
                     "error_type": "validation"}
    return 400, {"error": {"message": "%s is too large: %d. This model supports at most %d completion tokens, whereas "
                                      "you provided %d." % (param, limit, cap, limit),
                           "type": "invalid_request_error", "param": param, "code": None}}


def embed_vector(text, dim):
    v = [0.0] * dim
    for w in text.split():
        h = fnv1a64(w.encode("utf-8"))
        v[h % dim] += -2.0 if (h >> 32) & 1 else 2.0
    return v


def blocks_text(x):
    if isinstance(x, str):
        return x
    if isinstance(x, list):
        return "\n".join(b.get("text", "") for b in x if isinstance(b, dict))
    return ""


class State:
    def __init__(self, script, log_path):
        self.script = script
        self.rules = [dict(r) for r in script.get("rules", [])]
        self.sequence = list(script.get("sequence", []))
        self.default = script.get("default", {"content": "ok"})
        self.lock = threading.Lock()
        self.n = 0
        self.log = open(log_path, "a", encoding="utf-8")

    def pick(self, endpoint, prompt, raw=""):
        with self.lock:
            for i, r in enumerate(self.rules):
                if "endpoint" in r and r["endpoint"] != endpoint:
                    continue
                if "match" in r and r["match"] not in prompt:
                    continue
                if "body_has" in r and r["body_has"] not in raw:
                    continue
                if "body_lacks" in r and r["body_lacks"] in raw:
                    continue
                if "times" in r:
                    if r["times"] <= 0:
                        continue
                    r["times"] -= 1
                return "rule%d" % i, r
            if self.sequence:
                return "sequence", self.sequence.pop(0)
            return "default", self.default

    def record(self, entry):
        with self.lock:
            entry["n"] = self.n
            self.n += 1
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-llm/1"
    state = None

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj, extra=None):
        body = json.dumps(obj).encode("utf-8")
        self.send_raw(status, body, extra)

    def send_raw(self, status, body, extra=None, length=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def error_body(self, kind, status, message):
        if kind == "messages":
            return {"type": "error", "error": {"type": "fake_error", "message": message}}
        return {"error": {"message": message, "type": "fake_error", "code": status}}

    def do_GET(self):
        self.send_json(404, {"error": {"message": "only POST is served"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        path = self.path
        route = path.split("?", 1)[0]   # a base URL may carry a query string
        if route.endswith("/chat/completions"):
            kind = "chat"
        elif route.endswith("/messages"):
            kind = "messages"
        elif route.endswith("/embeddings"):
            kind = "embeddings"
        else:
            kind = None
        try:
            req = json.loads(raw) if raw else {}
        except ValueError:
            req = None
        prompt = ""
        if isinstance(req, dict):
            if kind == "embeddings":
                inp = req.get("input", [])
                prompt = "\n".join(inp) if isinstance(inp, list) else str(inp)
            else:
                parts = [blocks_text(req.get("system", ""))]
                for m in req.get("messages", []) or []:
                    if isinstance(m, dict):
                        parts.append(blocks_text(m.get("content", "")))
                prompt = "\n".join(parts)
        name, r = self.state.pick(kind, prompt, raw) if kind else ("none", {})
        self.state.record({
            "method": "POST", "path": path, "rule": name, "prompt": prompt,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": raw,
        })
        if kind is None:
            self.send_json(404, {"error": {"message": "no such endpoint: " + path}})
            return
        if req is None:
            self.send_json(400, self.error_body(kind, 400, "request body is not JSON"))
            return
        if r.get("delay_ms"):
            time.sleep(r["delay_ms"] / 1000.0)
        fault = r.get("fault")
        if fault == "hang":
            time.sleep(r.get("hang_s", 60))
            self.close_connection = True
            return
        if fault == "close":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if fault == "echo_key":
            cred = self.headers.get("x-api-key") or self.headers.get("Authorization", "")
            cred = cred.replace("Bearer ", "")
            self.send_json(401, self.error_body(kind, 401, "Incorrect API key provided: " + cred))
            return
        if r.get("max_model_len") and kind in ("chat", "messages"):
            limit = req.get("max_tokens") or req.get("max_completion_tokens") or 0
            refusal = context_refusal(r.get("context_style", "vllm"), r["max_model_len"], (len(prompt) + 3) // 4,
                                      limit)
            if refusal:
                self.send_json(refusal[0], refusal[1])
                return
        if r.get("max_output") and kind in ("chat", "messages"):
            param = "max_completion_tokens" if "max_completion_tokens" in req else "max_tokens"
            limit = req.get(param) or 0
            if limit > r["max_output"]:
                st, body = output_refusal(r.get("output_style", "openai"), r["max_output"], limit,
                                          req.get("model", ""), param)
                self.send_json(st, body)
                return
        if r.get("status", 200) >= 400:
            extra = {}
            if "retry_after" in r:
                extra["Retry-After"] = str(r["retry_after"])
            extra.update({k: str(v) for k, v in (r.get("headers") or {}).items()})
            st = r["status"]
            body = r["error_body"] if "error_body" in r else self.error_body(kind, st, r.get("error", "fake error %d" % st))
            self.send_json(st, body, extra)
            return
        if fault == "error_200":
            self.send_json(200, self.error_body(kind, 200, r.get("error", "upstream provider failed")))
            return
        if fault == "malformed":
            self.send_raw(200, b"<html>upstream said no</html> {\"choices\": [")
            return
        if kind == "embeddings":
            self.embeddings(req, r)
            return
        content = r.get("content", "ok")
        if fault == "prose":
            content = "Sure, here is the result you asked for:\n```json\n" + content + \
                "\n```\nLet me know if you need more."
        if fault == "oversize":
            content = "x" * int(r.get("oversize_bytes", 10 * 1024 * 1024))
        usage = r.get("usage", {"input": (len(prompt) + 3) // 4, "output": (len(content) + 3) // 4})
        model = req.get("model", "")
        if kind == "chat":
            msg = {"role": "assistant", "content": None if fault == "null_content" else content}
            if r.get("content_parts") and fault != "null_content":
                half = len(content) // 2
                parts = [{"type": "text", "text": content[:half]}, {"type": "text", "text": content[half:]}]
                if "reasoning" in r:
                    parts.insert(0, {"type": "thinking", "thinking": [{"type": "text", "text": r["reasoning"]}]})
                msg["content"] = parts
            elif "reasoning" in r:
                msg["reasoning_content"] = r["reasoning"]
            obj = {"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                   "choices": [] if fault == "empty_choices" else
                   [{"index": 0, "message": msg, "finish_reason": r.get("finish", "stop")}]}
            if usage is not None:
                obj["usage"] = {"prompt_tokens": usage["input"], "completion_tokens": usage["output"],
                                "total_tokens": usage["input"] + usage["output"]}
                if "cached" in usage:
                    obj["usage"]["prompt_tokens_details"] = {"cached_tokens": usage["cached"]}
                if "reasoning" in usage:
                    obj["usage"]["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning"]}
                if "cost" in usage:   # OpenRouter: the call's cost in USD
                    obj["usage"]["cost"] = usage["cost"]
        else:
            blocks = [{"type": "text", "text": content}]
            if fault == "empty_choices":
                blocks = []
            elif fault == "null_content":
                blocks = [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]
            stop = r.get("finish", "end_turn")
            if "tool_input" in r:
                tname = (req.get("tool_choice") or {}).get("name", "reply")
                blocks = [{"type": "tool_use", "id": "toolu_fake", "name": tname, "input": r["tool_input"]}]
                stop = "tool_use"
            if "reasoning" in r:
                blocks.insert(0, {"type": "thinking", "thinking": r["reasoning"], "signature": "fake"})
            obj = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                   "content": blocks, "stop_reason": stop}
            if "stop_details" in r:
                obj["stop_details"] = r["stop_details"]
            if usage is not None:
                obj["usage"] = {"input_tokens": usage["input"], "output_tokens": usage["output"]}
                if "cached" in usage:
                    obj["usage"]["cache_read_input_tokens"] = usage["cached"]
                if "cache_write" in usage:
                    obj["usage"]["cache_creation_input_tokens"] = usage["cache_write"]
        if self.streams(req, r, fault):
            include_usage = bool((req.get("stream_options") or {}).get("include_usage")) or kind == "messages"
            events = sse_wire.events_for(kind, obj, include_usage)
            sse_wire.send(self, kind, events, r.get("token_delay_ms", 0) / 1000.0, r.get("stream_fault"),
                          r.get("hang_s", 30))
            return
        body = json.dumps(obj).encode("utf-8")
        if fault == "truncate":
            self.close_connection = True
            self.send_raw(200, body[: len(body) // 2], length=len(body) + 1000)
            return
        self.send_raw(200, body)

    def streams(self, req, r, fault):
        """Whether this reply goes out as an event stream: asked for, and
        neither the script ("stream": false, a server that ignores the
        field) nor a fault of whole bodies says otherwise; "stream":
        "always" streams unasked."""
        if fault in ("truncate", "oversize") or not self.state.script.get("stream", True):
            return False
        if r.get("stream") == "always":
            return True
        return req.get("stream") is True and r.get("stream", True) is not False

    def embeddings(self, req, r):
        inp = req.get("input", [])
        if isinstance(inp, str):
            inp = [inp]
        dim = int(self.state.script.get("embed_dim", 8))
        limit = self.state.script.get("embed_max_tokens")
        if limit:
            given = max([embed_tokens(t) for t in inp] or [0])
            if given > limit:
                st, body = too_long_reply(self.state.script.get("embed_limit_style", "openai"), limit, given)
                self.send_json(st, body)
                return
        data = [{"object": "embedding", "index": i, "embedding": embed_vector(t, dim)}
                for i, t in enumerate(inp)]
        if r.get("fault") == "bad_index" and data:
            data[0]["index"] = len(inp) + 5
        if r.get("fault") == "empty_choices":
            data = []
        if self.state.script.get("embed_shuffle", True):
            data.reverse()
        words = sum(len(t.split()) for t in inp)
        obj = {"object": "list", "data": data, "model": req.get("model", "")}
        usage = r.get("usage", {"input": words})
        if usage is not None:
            obj["usage"] = {"prompt_tokens": usage["input"], "total_tokens": usage["input"]}
        body = json.dumps(obj).encode("utf-8")
        if r.get("fault") == "truncate":
            self.close_connection = True
            self.send_raw(200, body[: len(body) // 2], length=len(body) + 1000)
            return
        self.send_raw(200, body)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gives up mid-reply (reply cap, cancel, timeout) is
        # part of the tests, not an error worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="scripted loopback LLM server for tests")
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    Handler.state = State(script, a.log)
    return serve(Server(("127.0.0.1", a.port), Handler), a.port_file)


def serve(srv, port_file):
    """Announces srv's port (stdout, and port_file written atomically) and
    serves until SIGTERM or an interrupt; shared with tests/model_emu.py."""
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    port = srv.server_address[1]
    if port_file:
        tmp = port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, port_file)
    print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
