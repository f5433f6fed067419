"""sse_wire: a whole model reply as the event stream its API sends when the
request says "stream": true, for the loopback servers of the tests
(tests/fake_llm.py, tests/model_emu.py). One implementation of each wire
format, as the providers document them:

  chat       OpenAI-compatible chat completions: chat.completion.chunk
             objects as `data:` lines, the role first, reasoning_content
             deltas (or thinking content parts, Magistral), content deltas,
             a last chunk with finish_reason (and choices[0].error when the
             provider failed), with stream_options.include_usage a chunk of
             "choices": [] and the usage, then `data: [DONE]`
  messages   Anthropic: event: message_start (the message with its input
             usage), ping, per block content_block_start / content_block_delta
             (text_delta, thinking_delta and signature_delta, input_json_delta)
             / content_block_stop, message_delta (stop_reason, the output usage),
             message_stop
  responses  OpenAI Responses API: response.created, response.output_item.added,
             response.reasoning_summary_text.delta, response.output_text.delta,
             response.output_item.done, then response.completed (or
             response.incomplete) with the whole response

Text is cut into pieces of about a token (a word with the white space before
it). send() writes the events with chunked transfer encoding, waiting
delay_s before each piece; a fault bends the stream:
  disconnect   half the events, then the connection is dropped mid-body
  stall        half the events, then nothing for hang_s seconds
  malformed    half the events, then one whose data is not JSON
  error_event  half the events, then the API's error event (chat: a chunk
               {"error": {...}}; messages: event: error, overloaded_error)
  end_early    half the events, then a clean end of the body
"""
import json
import re
import socket
import time


def pieces(text):
    """The text cut into token-sized pieces that join back into it."""
    if not text:
        return []
    return re.findall(r"\s*\S{1,12}|\s+", text)


def _ev(data, event=None):
    return (event, data if isinstance(data, str) else json.dumps(data))


def chat_events(obj, include_usage=True):
    head = {k: obj[k] for k in ("id", "created", "model") if k in obj}
    head["object"] = "chat.completion.chunk"

    def chunk(delta, finish=None, extra=None):
        c = dict(head, choices=[dict({"index": 0, "delta": delta, "finish_reason": finish}, **(extra or {}))])
        return _ev(c)

    out = []
    choices = obj.get("choices") or []
    c0 = choices[0] if choices else {}
    msg = c0.get("message") or {}
    if choices:
        out.append(chunk({"role": "assistant", "content": ""}))
    if msg.get("reasoning_content"):
        out += [chunk({"reasoning_content": p}) for p in pieces(msg["reasoning_content"])]
    content = msg.get("content")
    if isinstance(content, list):   # Magistral's parts, each streamed as parts
        for part in content:
            if part.get("type") == "thinking":
                text = "".join(t.get("text", "") for t in part.get("thinking") or [])
                out += [chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": p}]}]})
                        for p in pieces(text)]
            elif part.get("type") == "text":
                out += [chunk({"content": [{"type": "text", "text": p}]}) for p in pieces(part.get("text", ""))]
    elif isinstance(content, str):
        out += [chunk({"content": p}) for p in pieces(content)]
    if msg.get("refusal"):
        out += [chunk({"refusal": p}) for p in pieces(msg["refusal"])]
    extra = {"error": c0["error"]} if c0.get("error") else None
    if choices:
        out.append(chunk({}, c0.get("finish_reason", "stop"), extra))
    if include_usage and obj.get("usage") is not None:
        out.append(_ev(dict(head, choices=[], usage=obj["usage"])))
    out.append(_ev("[DONE]"))
    return out


def messages_events(obj):
    usage = dict(obj.get("usage") or {})
    start = {k: v for k, v in obj.items() if k not in ("content", "usage", "stop_reason", "stop_details")}
    start.update(content=[], stop_reason=None, stop_sequence=None)
    if usage:
        start["usage"] = dict(usage, output_tokens=1)
    out = [_ev({"type": "message_start", "message": start}, "message_start"),
           _ev({"type": "ping"}, "ping")]
    for i, b in enumerate(obj.get("content") or []):
        t = b.get("type")
        if t == "text":
            first, deltas = dict(b, text=""), [{"type": "text_delta", "text": p} for p in pieces(b.get("text", ""))]
        elif t == "thinking":
            first = dict(b, thinking="", signature="")
            deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(b.get("thinking", ""))]
            deltas.append({"type": "signature_delta", "signature": b.get("signature", "")})
        elif t == "tool_use":
            first = dict(b, input={})
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(json.dumps(b.get("input", {})))]
        else:
            first, deltas = b, []
        out.append(_ev({"type": "content_block_start", "index": i, "content_block": first}, "content_block_start"))
        out += [_ev({"type": "content_block_delta", "index": i, "delta": d}, "content_block_delta") for d in deltas]
        out.append(_ev({"type": "content_block_stop", "index": i}, "content_block_stop"))
    delta = {"stop_reason": obj.get("stop_reason"), "stop_sequence": obj.get("stop_sequence")}
    if "stop_details" in obj:
        delta["stop_details"] = obj["stop_details"]
    md = {"type": "message_delta", "delta": delta}
    if usage:
        md["usage"] = {"output_tokens": usage.get("output_tokens", 0)}
    out.append(_ev(md, "message_delta"))
    out.append(_ev({"type": "message_stop"}, "message_stop"))
    return out


def responses_events(obj):
    seq = [0]

    def ev(typ, **kw):
        seq[0] += 1
        return _ev(dict({"type": typ, "sequence_number": seq[0]}, **kw), typ)

    created = dict(obj, status="in_progress", output=[])
    created.pop("usage", None)
    out = [ev("response.created", response=created)]
    for i, item in enumerate(obj.get("output") or []):
        out.append(ev("response.output_item.added", output_index=i, item=dict(item, content=[], summary=[])))
        if item.get("type") == "reasoning":
            for j, s in enumerate(item.get("summary") or []):
                out += [ev("response.reasoning_summary_text.delta", item_id=item.get("id", ""), output_index=i,
                           summary_index=j, delta=p) for p in pieces(s.get("text", ""))]
        elif item.get("type") == "message":
            for j, part in enumerate(item.get("content") or []):
                if part.get("type") == "output_text":
                    out += [ev("response.output_text.delta", item_id=item.get("id", ""), output_index=i,
                               content_index=j, delta=p) for p in pieces(part.get("text", ""))]
        out.append(ev("response.output_item.done", output_index=i, item=item))
    last = "response.incomplete" if obj.get("status") == "incomplete" else "response.completed"
    out.append(ev(last, response=obj))
    return out


def events_for(wire, obj, include_usage=True):
    if wire == "messages":
        return messages_events(obj)
    if wire == "responses":
        return responses_events(obj)
    return chat_events(obj, include_usage)


def error_event(wire):
    if wire == "messages":
        return _ev({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")
    if wire == "responses":
        return _ev({"type": "error", "code": "server_error", "message": "The server had an error while "
                    "processing your request.", "param": None}, "error")
    return _ev({"error": {"message": "The server had an error while processing your request.",
                          "type": "server_error", "param": None, "code": None}})


def encode(ev):
    name, data = ev
    return ("event: %s\n" % name if name else "").encode() + b"".join(
        b"data: " + line.encode("utf-8") + b"\n" for line in data.split("\n")) + b"\n"


def send(h, wire, events, delay_s=0.0, fault=None, hang_s=30.0):
    """Writes events as a 200 text/event-stream reply on handler h (chunked;
    the connection is closed after it). Returns what was done, for a log."""
    h.protocol_version = "HTTP/1.1"
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Transfer-Encoding", "chunked")
    h.send_header("Connection", "close")
    h.end_headers()
    h.close_connection = True
    cut = len(events) // 2 if fault else len(events)

    def write(b):
        h.wfile.write(b"%x\r\n" % len(b) + b + b"\r\n")
        h.wfile.flush()

    try:
        for i, e in enumerate(events[:cut]):
            if delay_s > 0 and i:
                time.sleep(delay_s)
            write(encode(e))
        if fault == "disconnect":
            h.connection.shutdown(socket.SHUT_RDWR)
            return "disconnect after %d events" % cut
        if fault == "stall":
            time.sleep(hang_s)
            h.connection.shutdown(socket.SHUT_RDWR)
            return "stall after %d events" % cut
        if fault == "malformed":
            write(b"data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n")
        elif fault == "error_event":
            write(encode(error_event(wire)))
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()
    except (BrokenPipeError, ConnectionError, OSError):
        return "client went away"
    return "%s after %d events" % (fault, cut) if fault else "streamed %d events" % cut
