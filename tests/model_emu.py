#!/usr/bin/env python3
"""model_emu: a loopback model server that answers drqa-tui's roles by reading
their prompts, the way a model of a given family and serving stack would.

Unlike tests/fake_llm.py, which replays a script, the emulator decides from
what the prompt shows: the question text, identifiers written in it, span
headers `path:START-END` (with an optional symbol) and the code lines under
them, the actions listed as tried. It never sees reference answers; the
`guided` profile alone is given gold FILES (--gold) and says so in its log.

Served on 127.0.0.1 only, on an ephemeral port (or --port) printed on stdout
and written to --port-file:
  POST .../chat/completions   OpenAI-compatible chat completions
  POST .../messages           Anthropic messages API (/v1/messages)
  POST .../embeddings         deterministic vectors (tests/fake_llm.py's)

Roles are recognised by "You are the Perception Agent", "... Planning Agent",
"... Evidence Filter", "... Evaluation Agent", "... Answer Agent" and
"You are a judge" / "grading an answer" in the system prompt or the first
user message; the question is the first line starting with "Question".

Profiles (--profile, comma-separated; they combine where it makes sense):
  clean      well-formed JSON per role; honours response_format
             json_schema / json_object (a json_schema needs a name, and with
             strict every object closed and fully required, or a 400 with
             OpenAI's message; the reply has the schema's required fields,
             as constrained decoding gives; "schema_ok" in the log says
             whether the emulator's own object already had them);
             usage.prompt_tokens_details.
             cached_tokens counts the prefix shared with the previous request
             of the same role, in 16-token blocks (vLLM/OpenAI prefix cache)
  reasoning  OpenAI reasoning-model API: 400 on max_tokens and on any
             temperature but 1, with OpenAI's bodies; takes
             max_completion_tokens and reasoning_effort; reasoning tokens
             count against max_completion_tokens (content "" and
             finish_reason "length" when the budget is too small); usage has
             completion_tokens_details.reasoning_tokens
  think      Qwen3/QwQ/DeepSeek-R1 behind vLLM/llama.cpp/Ollama: thinking of
             1-3k tokens with a draft JSON object holding wrong values, as
             <think>...</think> before the answer in content or, per
             --think-mode (tags, field, mixed: seeded per request), as
             reasoning_content beside it; thinking counts against max_tokens;
             off with chat_template_kwargs.enable_thinking false (vLLM),
             "think": false (Ollama) or /no_think in the prompt (Qwen3)
  magistral  Mistral's Magistral: like think, its thinking sent as a content
             part: message.content is [{"type": "thinking", "thinking":
             [{"type": "text", "text": ...}]}, {"type": "text", "text": ...}]
  small      a small open model: ```json fences, prose around the JSON,
             trailing commas, copied placeholders from the prompt's examples,
             a string where a list is expected, class-name for class_name,
             values on 0-1, an early Finish on the first planning call, empty
             filter choices, raw newlines inside the answer's JSON string;
             ignores response_format
  anthropic  messages API: x-api-key (401) and anthropic-version (400)
             required, max_tokens required, system top-level (string or
             blocks with cache_control); tools + tool_choice answered with a
             tool_use block; usage with cache_read_input_tokens /
             cache_creation_input_tokens for the prefix up to the last
             cache_control block (cached from --cache-min-tokens, default
             1024, as Anthropic does)
  ctx-limit  400 above --ctx-limit N tokens (prompt bytes / 4), in the
             --ctx-form openai (default), vllm or llamacpp error body
  ctx-vllm   vLLM serving with a small --max-model-len (--ctx-limit N): the
             input (prompt bytes / 4) plus the request's max_tokens must fit
             in N, else a 400 in vLLM's words ("'max_tokens' or
             'max_completion_tokens' is too large: M. This model's maximum
             context length is N tokens and your request has K input
             tokens", or "However, your request has K input tokens" when the
             input alone does not fit)
  ollama-cut Ollama past its context length (--ctx-limit N as num_ctx): a
             prompt of more than N tokens (bytes / 4) is cut to its last N/2
             tokens and answered with 200 as if whole, usage.prompt_tokens
             N/2 + 2 (ollama#17427, #3839); the role, the question and the
             rules at the head are lost, and the reply is decided from the
             tail alone; no prompt_tokens_details, as Ollama sends none
  out-cap    a hosted model that writes at most --out-cap N tokens (DeepSeek's
             deepseek-chat: 8192) while the client's config asks for more: a
             max_tokens over N is refused in DeepSeek's words (400 "Invalid
             max_tokens value, the valid range of max_tokens is [1, N]")
  lmstudio   LM Studio's server: response_format json_object refused (400
             {"error": "'response_format.type' must be 'json_schema' or
             'text'"}, its whole body a string), json_schema honoured as clean
  flaky      seeded faults: 429 without Retry-After, 500/502/503 with typical
             bodies, a hang of --hang-seconds; never more than
             --flaky-max-row (default 2) faults in a row for the same prompt,
             so a retry mostly succeeds
  -- reply shapes of servers that answer 200 with something other than a
  -- completion (each body as the provider documents it):
  http200-error  a gateway's top-level error body with status 200
             ({"error": {"message", "type", "param", "code"}}, OpenAI's
             shape) on some requests (--shape-rate, seeded), never twice in a
             row for the same prompt; the rest as clean
  choice-error  OpenRouter's per-choice error: status 200, choices[0] with
             finish_reason "error", empty content and error {code, message,
             metadata} (its NonStreamingChoice), on some requests as above
  unasked-sse  a server that streams whatever it is asked: every chat request,
             "stream": false included, is answered text/event-stream with
             `data: {chat.completion.chunk}` lines and `data: [DONE]` (the
             reply decided as clean)
  refusal    a model that declines every request: message.refusal set,
             content null, finish_reason "stop" (OpenAI); Anthropic:
             stop_reason "refusal" with no content
  length-empty  a reasoning model whose reply limit is spent on reasoning:
             finish_reason "length" (Anthropic: stop_reason "max_tokens"),
             content "", usage.completion_tokens_details.reasoning_tokens
             the whole limit, until a request raises the limit above the
             first one it sent; then answered as clean
  finish-now  a model that plans Finish (an answer from memory) whenever
             nothing has been read on the node's path; otherwise as clean
  --- transports (Azure OpenAI, the Responses API, Anthropic's cache minimums)
  azure      Azure OpenAI: chat at /openai/deployments/D/chat/completions
             with ?api-version= required (else 404 {"error": {"code": "404",
             "message": "Resource not found"}}, as Azure answers a path it
             does not serve), or the v1 endpoint /openai/v1/chat/completions
             (and /openai/v1/responses) with no api-version; the key in an
             api-key header (an Authorization: Bearer is taken only for an
             Entra ID token, a JWT "eyJ...") else 401 with Azure's body
             ("Access denied due to invalid subscription key or wrong API
             endpoint..."); answered as clean
  responses  OpenAI's Responses API, POST /v1/responses: input (string or
             role/content items), instructions, max_output_tokens,
             reasoning.effort, text.format (json_schema or json_object);
             response_format and max_tokens refused with OpenAI's "moved to"
             bodies, messages as unknown; replies with output[] (a reasoning
             item, then a message with an output_text part), status
             incomplete with incomplete_details.reason max_output_tokens when
             reasoning spent the budget, usage.input_tokens(_details.
             cached_tokens) / output_tokens(_details.reasoning_tokens).
             /v1/chat/completions answers a Responses-only model (gpt-5-pro,
             *-codex, o3-pro, o1-pro) 404 "This model is only supported in
             v1/responses and not in v1/chat/completions." and serves others
             as clean
  anthropic-cache  anthropic, with the cache minimums Anthropic documents per
             model (prompt-caching page): 1024 tokens for Claude Opus 4.1 /
             Opus 4 / Sonnet 4.5 / Sonnet 4 / Sonnet 3.7, 2048 for Sonnet 4.6
             and Haiku 3.5 / 3, 4096 for Opus 4.5 and later and Haiku 4.5
             (and for names it does not know); a prompt is the tools, then
             the system blocks, then the message blocks, and each block marked
             cache_control ends a prefix (bytes / 4 tokens) cached once it
             reaches the model's minimum: cache_read_input_tokens is the
             longest such prefix cached before, cache_creation_input_tokens
             what the last one adds beyond it; nothing under the minimum
  guided     like clean, and given --gold FILE (JSONL of {id or question,
             gold_files}) it plans ViewCode on the gold file of the question
             it recognises from the prompt's question text (mapped onto the
             tree under --gold-root DIR by the longest common path tail)

Profiles of the current model generation (December 2026), each error body in
its provider's documented shape:
  temp-deprecated  Claude Opus 4.7 / 4.8 (with anthropic): a temperature is
             refused, 400 invalid_request_error "`temperature` is deprecated
             for this model."
  claude5    the Claude 5 generation (with anthropic): adaptive thinking on
             by default: a thinking block (1-3k tokens) before the answer,
             counted against max_tokens (stop_reason max_tokens with the
             thinking alone when it does not fit); a temperature but 1 refused
             ("`temperature` may only be set to 1 when thinking is enabled or
             in adaptive mode"), and forced tool use refused (the models'
             pages: "forced tool use returns an error"; the wording here is
             the emulator's)
  system-role  a model without a system role: a system (or developer)
             message refused, for o1-* names with OpenAI's body (400
             unsupported_value, param messages[0].role), else with vLLM's
             for a chat template that raises "System role not supported"
  strict-params  a server that validates the request against the fields it
             knows (model, messages, max_tokens, temperature, top_p, n, stop,
             stream, seed, user, the penalties, logit_bias): any other is
             refused, in Azure OpenAI's words ("Unrecognized request argument
             supplied: X", --strict-form openai, the default) or vLLM's
             pydantic body ("Extra inputs are not permitted", --strict-form
             vllm)

Streaming: a request with "stream": true is answered as the event stream its
API sends (tests/sse_wire.py: chat.completion.chunk lines with reasoning_content
and content deltas and, with stream_options.include_usage, a usage chunk, then
[DONE]; Anthropic's message_start / content_block_* (text, thinking with its
signature, tool input as input_json_delta) / message_delta / message_stop;
the Responses API's response.* events), in every profile: each models a
server that streams. Replies that carry no completion (errors, http200-error)
are sent whole, as servers do. --token-delay-ms N (or MODEL_EMU_TOKEN_DELAY_MS)
waits N ms before each piece of about a token (default 0); the reply decided
is the same streamed or not.

Every request is one JSON line in --log: n, t (seconds since start), path,
role, question (first 200 bytes), profile, status, fault, params (the body's
top-level fields but messages/system/tools, so max_tokens, temperature,
response_format...), headers (names; credential values redacted), prompt
bytes, usage, decision (the action, spans or value chosen), the reply text
sent (the content, first 4000 bytes), and with --log-bodies the raw body.

Bounded: exits after --max-seconds (default 1800) and as soon as its parent
process goes away. Standard library only.
"""
import argparse
import hashlib
import json
import os
import random
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm import blocks_text, embed_vector, serve  # noqa: E402  (one implementation of each)
import sse_wire  # noqa: E402  (the event streams of each API)

PROFILES = {"clean", "reasoning", "think", "magistral", "small", "anthropic", "ctx-limit", "ctx-vllm", "ollama-cut",
            "out-cap", "lmstudio", "flaky", "guided"}
# reply shapes (see the docstring's block of the same name)
PROFILES |= {"http200-error", "choice-error", "unasked-sse", "refusal", "length-empty", "finish-now"}

# ---- the current model generation (December 2026): see the docstring
PROFILES |= {"temp-deprecated", "claude5", "system-role", "strict-params"}
STRICT_KNOWN = {"model", "messages", "max_tokens", "temperature", "top_p", "n", "stop", "stream", "seed", "user",
                "presence_penalty", "frequency_penalty", "logit_bias",
                "stream_options"}   # documented beside stream by every server that streams (Azure OpenAI, vLLM)


def current_generation_refusal(prof, kind, req, msgs, strict_form):
    """(status, body, fault) for a request the current-generation profiles
    refuse, else None."""
    if kind == "messages" and "temp-deprecated" in prof and "temperature" in req:
        return 400, anthropic_error("invalid_request_error", "`temperature` is deprecated for this model."), \
            "temperature deprecated"
    if kind == "messages" and "claude5" in prof:
        t = req.get("temperature")
        if t is not None and t != 1:
            return 400, anthropic_error("invalid_request_error", "`temperature` may only be set to 1 when thinking "
                                        "is enabled or in adaptive mode"), "temperature with adaptive thinking"
        tc = req.get("tool_choice")
        if isinstance(tc, dict) and tc.get("type") in ("tool", "any"):
            return 400, anthropic_error("invalid_request_error", "Thinking may not be enabled when `tool_choice` "
                                        "forces tool use."), "forced tool use with thinking"
    if kind == "chat" and "system-role" in prof:
        for i, m in enumerate(msgs):
            if isinstance(m, dict) and m.get("role") in ("system", "developer"):
                if str(req.get("model", "")).startswith("o1"):
                    return 400, openai_error("Unsupported value: 'messages[%d].role' does not support '%s' with "
                                             "this model." % (i, m["role"]), "invalid_request_error",
                                             "messages[%d].role" % i, "unsupported_value"), "system role"
                return 400, {"object": "error", "message": "System role not supported", "type": "BadRequestError",
                             "param": None, "code": 400}, "system role"
    if kind == "chat" and "strict-params" in prof:
        for k in req:
            if k not in STRICT_KNOWN:
                if strict_form == "vllm":
                    body = {"object": "error", "message": "[{'type': 'extra_forbidden', 'loc': ('body', '%s'), "
                            "'msg': 'Extra inputs are not permitted', 'input': %r}]" % (k, req[k]),
                            "type": "BadRequestError", "param": None, "code": 400}
                else:
                    body = openai_error("Unrecognized request argument supplied: %s" % k, "invalid_request_error",
                                        None, None)
                return 400, body, "unknown field %s" % k
    return None
# ---- transports: Azure OpenAI, the Responses API, Anthropic's cache minimums (see the block "transports" below)
PROFILES |= {"azure", "responses", "anthropic-cache"}

ROLE_MARKS = [
    ("perception", "You are the Perception Agent"),
    ("planning", "You are the Planning Agent"),
    ("filter", "You are the Evidence Filter"),
    ("evaluation", "You are the Evaluation Agent"),
    ("answer", "You are the Answer Agent"),
    ("judge", "You are a judge"),
    ("judge", "grading an answer"),
]

ACTIONS = ["FindClass", "FindFunction", "FindCodeSnippet", "SemanticSearch", "ViewCode", "Outline",
           "ListFiles", "FindReferences", "Finish"]

STOP = set("""a about above after all also an and any are as at be been before being between both but by can
could did do does doing during each either for from had has have having how if in into is it its itself just
may might more most must no nor not of on once only or other our out over own same should so some such than
that the their them then there these they this those through to too under until up upon us use used uses
using very via was we were what when where whether which while who whom why will with within without
would you your code function functions class classes method methods file files module implementation
implemented implement work works handle handles handled role purpose mechanism framework library""".split())

HEADER_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w*):(\d+)-(\d+)")
NUMBERED_RE = re.compile(r"^\s*(\d+)[:|]?\s")


# ------------------------------------------------------------------ text

def split_ident(word):
    out = []
    for part in re.split(r"_+", word):
        out += re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", part)
    return out


def terms(text):
    """Lower-case content terms, identifiers split at '_' and case changes."""
    out = set()
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        parts = [p.lower() for p in split_ident(w)]
        for p in parts:
            if len(p) > 2 and p not in STOP:
                out.add(p)
                if p.endswith("s") and len(p) > 4:
                    out.add(p[:-1])
        if len(parts) > 1:
            out.add(w.lower().replace("_", ""))
    return out


def question_identifiers(q):
    """Names written literally in the question: `backticked`, dotted,
    snake_case, CamelCase (an inner capital), in order of appearance."""
    found = []

    def add(x):
        x = x.strip("`'\".,;:()?")
        if x and x not in found and len(x) > 2:
            found.append(x)
    for m in re.finditer(r"`([^`]+)`", q):
        add(m.group(1).split("(")[0])
    for m in re.finditer(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+", q):
        if not re.search(r"\.(?:py|js|ts|go|java|md|txt|json)$", m.group(0)) or "/" in m.group(0):
            add(m.group(0))
    for m in re.finditer(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b_[a-z]\w*\b", q):
        add(m.group(0))
    for m in re.finditer(r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b|\b[A-Z]{2,}[a-z]\w*\b", q):
        add(m.group(0))
    return found


def role_of(texts):
    for t in texts:
        for role, mark in ROLE_MARKS:
            if mark in t:
                return role
    return None


def find_question(text):
    m = re.search(r"(?m)^\s*Question[^:\n]{0,40}:\s*(.+)$", text)
    if m and m.group(1).strip():
        return m.group(1).strip()
    m = re.search(r"(?m)^\s*Question[^:\n]{0,40}:\s*\n\s*(.+)$", text)
    return m.group(1).strip() if m else ""


def section(text, start_pat, stop_pats):
    """The text after a line matching start_pat up to the next line matching
    one of stop_pats (loose: prompts are rewritten often)."""
    m = re.search(start_pat, text, re.M)
    if not m:
        return ""
    rest = text[m.end():]
    end = len(rest)
    for p in stop_pats:
        s = re.search(p, rest, re.M)
        if s and s.start() < end:
            end = s.start()
    return rest[:end]


class Span:
    def __init__(self, path, a, b, symbol, lines):
        self.path, self.a, self.b, self.symbol, self.lines = path, a, b, symbol, lines

    def key(self):
        return "%s:%d-%d" % (self.path, self.a, self.b)

    def text(self):
        return self.symbol + "\n" + "\n".join(self.lines)


def spans_in(text):
    """Span headers `path:START-END [symbol]`. A header that starts a line
    (after a list mark or step number) owns the lines under it until the next
    header; one inside a line takes the rest of the clause as its symbol.
    Lines giving an example ("citations like `pkg/x.py:1-2`") are skipped."""
    out = []
    cur = None
    for line in text.split("\n"):
        s = line.strip()
        s2 = re.sub(r"^(?:[-*>]\s+|\[\d+\]\s+|\d+[.)]\s+|#+\s+)", "", s).lstrip("`")
        m = HEADER_RE.match(s2)
        if m and not NUMBERED_RE.match(s):
            a, b = int(m.group(2)), int(m.group(3))
            if 0 < a <= b:
                sym = s2[m.end():].strip(" `-:\u2014")
                cur = Span(m.group(1), a, b, sym, [])
                out.append(cur)
                continue
        if not re.search(r"\blike\b|for example|e\.g\.", line):
            for m in HEADER_RE.finditer(line):
                a, b = int(m.group(2)), int(m.group(3))
                if 0 < a <= b:
                    sym = re.split(r"[;,|]", line[m.end():])[0].strip(" `-:()")
                    out.append(Span(m.group(1), a, b, sym[:80], []))
        if cur is not None and len(cur.lines) < 400:
            cur.lines.append(line)
    return out


def narrow(p, s, width=40):
    """A span cut to the window of its numbered lines richest in the
    question's terms (a span over 2*width lines only; lines shown without
    numbers are never narrowed: their numbers are unknown)."""
    nums = []
    for ln in s.lines:
        m = NUMBERED_RE.match(ln)
        if m and s.a <= int(m.group(1)) <= s.b:
            nums.append((int(m.group(1)), ln))
    if s.b - s.a + 1 <= 2 * width or len(nums) < width:
        return s.a, s.b
    best, at = -1, nums[0][0]
    for i in range(0, len(nums) - width + 1, 5):
        sc = len(p.qterms & terms(" ".join(ln for _, ln in nums[i:i + width])))
        if sc > best:
            best, at = sc, nums[i][0]
    return at, min(s.b, at + width - 1)


def symbol_name(symbol):
    """The defined name in a span's symbol text ('def dumps(self, ...)' ->
    'dumps', 'DefaultJSONProvider.dumps' as is), or ''."""
    m = re.search(r"(?:\b(?:def|class|function|func)\s+)?([A-Za-z_][\w.]*)", symbol or "")
    if m and m.group(1) in ("in", "def", "class", "async"):
        m = re.search(r"\b(?:def|class)\s+([A-Za-z_][\w.]*)", symbol)
    return m.group(1) if m else ""


def file_paths_in(text):
    return list(dict.fromkeys(re.findall(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|js|ts|go|java))\b", text)))


def overlap(qterms, text):
    if not qterms:
        return 0.0
    t = terms(text)
    return len(qterms & t) / len(qterms)


# ------------------------------------------------------------------ roles

class Prompt:
    """What one request shows: role, question, spans, sections."""

    def __init__(self, system, user_msgs, all_text):
        self.system = system
        self.first_user = user_msgs[0] if user_msgs else ""
        self.text = all_text
        self.role = role_of([system, self.first_user, all_text])
        # With a system message the static text (rules, action list, worked
        # examples) lives there and the request's own facts in the user
        # message: the question, spans and steps are read from the latter, so
        # an example in the rules is never taken for this request's.
        self.dyn = self.first_user if system.strip() else system + "\n" + self.first_user
        self.question = find_question(self.first_user) or find_question(system)
        self.qterms = terms(self.question)
        self.idents = question_identifiers(self.question)
        m = re.search(r"(?m)^Identifiers written literally in the question:\s*(.+)$", self.first_user) or \
            re.search(r"(?m)^Identifiers written literally in the question:\s*(.+)$", system)
        if m and not re.match(r"\(?none\b", m.group(1).strip()):
            for x in re.split(r"[,\s]+", m.group(1)):
                x = x.strip("`'\".;")
                if x and x not in self.idents:
                    self.idents.append(x)
        self.body = system + "\n" + self.first_user
        self.asks_json_answer = bool(re.search(r'\{\s*\\?"answer\\?"\s*:', self.body))


def tried_actions(text):
    """(action, canonical args) pairs written in the prompt's dynamic parts."""
    out = set()
    for m in re.finditer(r"\b(%s)\b\s*(\{[^\n]*\})" % "|".join(ACTIONS), text):
        try:
            args = json.loads(m.group(2))
        except ValueError:
            j = m.group(2)
            end = j.find("}")
            try:
                args = json.loads(j[:end + 1])
            except ValueError:
                args = {"raw": j}
        out.add((m.group(1), json.dumps(args, sort_keys=True)))
    return out


def dynamic_text(p):
    """The prompt without its action list and guidelines (the static text that
    names every action)."""
    t = p.dyn
    t = re.sub(r"(?ms)^Available actions.*?(?=^\S.*:\s*$|^Guidelines|^Reply|\Z)", "", t)
    t = re.sub(r"(?ms)^Guidelines:.*?(?=^Reply|\Z)", "", t)
    return t


def trajectory_text(p):
    return section(p.dyn, r"^(?:Steps on the path|Path from the root|Steps before this one|Steps of the best|"
                           r"Trajectory|Path so far)[^\n]*\n",
                   [r"^(?:Actions already tried|Attempts of sibling|Evaluator's suggestion|Available actions|"
                    r"Files and symbols seen|This step|Evidence read|Situational report|Guidelines|Reply)"])


def viewed_on_path(p):
    """Spans the path read with ViewCode: the ViewCode steps of the trajectory
    and span headers listed under them."""
    traj = trajectory_text(p)
    views = []
    for m in re.finditer(r"ViewCode\s*(\{[^\n]*\})", traj):
        try:
            views += list(json.loads(m.group(1)).get("code_span_list", []))
        except (ValueError, AttributeError):
            views.append(m.group(1))
    return views, traj


def best_spans(p, spans, k, exclude=()):
    scored = []
    seen = {}
    for s in spans:   # one per location: the occurrence with the most lines shown
        if s.key() not in seen or len(s.lines) > len(seen[s.key()].lines):
            seen[s.key()] = s
    for i, s in enumerate(seen.values()):
        if s.key() in exclude:
            continue
        sc = overlap(p.qterms, s.path.replace("/", " ") + " " + s.text())
        for ident in p.idents:
            last = ident.split(".")[-1]
            if last and (last in s.symbol or any(last in ln for ln in s.lines[:60])):
                sc += 0.5
        scored.append((-sc, i, s))
    scored.sort(key=lambda x: (x[0], x[1]))
    return [(s, -sc) for sc, _, s in scored[:k]]


class Decider:
    def __init__(self, profiles, gold, gold_roots):
        self.profiles = profiles
        self.gold = gold
        self.gold_files = self._tree_files(gold_roots)
        self.gold_memo = {}

    @staticmethod
    def _tree_files(roots):
        out = []
        for r in roots:
            base = os.path.basename(os.path.normpath(r))
            for d, _, fs in os.walk(r):
                for f in fs:
                    full = os.path.join(d, f)
                    out.append((base, os.path.relpath(full, r)))
        return out

    def gold_for(self, question):
        if not self.gold or not question:
            return []
        key = question.strip()
        if key not in self.gold_memo:
            self.gold_memo[key] = self._gold_for(key)
        return self.gold_memo[key]

    def _gold_for(self, question):
        g = self.gold.get(question)
        if g is None:
            return []
        out = []
        for gf in g:
            best, score = None, 0
            gc = [c for c in gf.split("/") if c]
            for base, rel in self.gold_files:
                rc = [base] + rel.split("/")
                n = 0
                while n < min(len(gc), len(rc)) and gc[-1 - n] == rc[-1 - n]:
                    n += 1
                if n > score:
                    best, score = rel, n
            if best and score >= min(2, len(gc)) and best not in out:
                out.append(best)
        return out

    # each returns (object, decision summary)
    def perception(self, p, rng):
        spans = spans_in(dynamic_text(p))
        files = file_paths_in(dynamic_text(p))
        tried = sorted(a for a, _ in tried_actions(dynamic_text(p)))
        views, _ = viewed_on_path(p)
        unexplored = [s.key() + (" " + s.symbol if s.symbol else "") for s, _ in best_spans(p, spans, 3)
                      if s.key() not in views] or files[:3]
        seen = " ".join(s.text() for s in spans)
        gaps = sorted(p.qterms - terms(seen))[:5]
        cands = p.idents[:3] + [symbol_name(s.symbol) for s, _ in best_spans(p, spans, 2)]
        obj = {"summary": "%d spans shown, %d code views on the path; %s" % (
                   len(spans), len(views), "the question's terms %s are not in the code yet" % ", ".join(gaps[:3])
                   if gaps else "the code shown covers the question's terms"),
               "redundant": tried[:5], "unexplored": unexplored[:5], "gaps": gaps,
               "candidates": list(dict.fromkeys(c for c in cands if c))[:5]}
        return obj, "candidates=%s" % obj["candidates"]

    def planning(self, p, rng, small):
        dyn = dynamic_text(p)
        tried = tried_actions(dyn)
        tried_names = {(a, json.loads(k).get("class_name") or json.loads(k).get("function_name") or
                        json.loads(k).get("query") or "") for a, k in tried}
        views, traj = viewed_on_path(p)
        steps = len(re.findall(r"(?m)^\s*\[\d+\]|^\s*(?:step|Step)\s+\d+", traj))
        spans = spans_in(dyn)
        listed = {a for a in ACTIONS if re.search(r"(?m)^\s*-?\s*%s\b" % a, p.body)} or set(ACTIONS)

        def fresh(action, args):
            return (action, json.dumps(args, sort_keys=True)) not in tried

        if small and steps == 0 and not views and rng.random() < 0.5:
            return {"rationale": "The framework is well known, I can answer directly.", "action": "Finish",
                    "args": {"answer": "It is handled by the framework's core module.", "finish_reason": "known"}}, \
                "early Finish (no code seen)"
        if "finish-now" in self.profiles and steps == 0 and not views:
            return {"rationale": "I know this framework; no need to read the code.", "action": "Finish",
                    "args": {"answer": "It is done in the framework's core module, as usual.",
                             "finish_reason": "known from memory"}}, "finish-now (nothing read)"
        if "guided" in self.profiles:
            for gf in self.gold_for(p.question):
                if not any(gf in v for v in views):
                    args = {"code_span_list": [gf]}
                    if fresh("ViewCode", args):
                        return {"rationale": "Read %s, the file that holds the answer." % gf,
                                "action": "ViewCode", "args": args}, "guided ViewCode %s" % gf
        if views:
            cites = [v for v in views if isinstance(v, str)][:3]
            cited = [s.key() for s, _ in best_spans(p, spans, 3)] or cites
            return {"rationale": "The path has read the code that answers the question.", "action": "Finish",
                    "args": {"answer": "The code at %s answers it." % ", ".join("`%s`" % c for c in cited),
                             "finish_reason": "the decisive code was read with ViewCode"}}, "Finish after views"
        if spans and "ViewCode" in listed:
            for s, sc in best_spans(p, spans, 5, exclude=set(views)):
                args = {"code_span_list": [s.key()]}
                if sc > 0 and fresh("ViewCode", args):
                    return {"rationale": "Read %s%s, the most promising span shown." % (
                        s.key(), " (" + s.symbol + ")" if s.symbol else ""), "action": "ViewCode",
                        "args": args}, "ViewCode best span %s" % s.key()
        cands = []
        m = re.search(r'(?mi)^\W*candidates\W*\s*(.+)$', section(p.dyn, r"^Situational report", [r"^Steps on the path"]))
        if m:
            cands = [c for c in re.findall(r"[A-Za-z_][\w.]*", m.group(1)) if re.search(r"[A-Z_.]", c[1:])]
        for ident in p.idents + [c for c in cands if c not in p.idents][:3]:
            parts = ident.split(".")
            last = parts[-1]
            if last[:1].isupper() and "FindClass" in listed:
                action, args = "FindClass", {"class_name": ident}
            elif "FindFunction" in listed:
                action, args = "FindFunction", {"function_name": last}
                if len(parts) > 1 and parts[-2][:1].isupper():
                    args["class_name"] = parts[-2]
            else:
                continue
            if fresh(action, args) and (action, ident) not in tried_names and (action, last) not in tried_names:
                return {"rationale": "Look up %s, written in the question." % ident, "action": action,
                        "args": args}, "%s %s" % (action, ident)
        words = [w for w in re.findall(r"[A-Za-z_][\w.]*", p.question) if w.lower() not in STOP and len(w) > 2]
        queries = [" ".join(words[:8]), " ".join(words[:4]), " ".join(words[4:10])]
        for i, q in enumerate(queries):
            if not q:
                continue
            args = {"query": q, "category": "implementation" if i < 2 else "any"}
            if "SemanticSearch" in listed and fresh("SemanticSearch", args) and ("SemanticSearch", q) not in tried_names:
                return {"rationale": "Search by meaning for the question's content words.",
                        "action": "SemanticSearch", "args": args}, "SemanticSearch %r" % q
        for f in file_paths_in(dyn):
            args = {"code_span_list": [f]}
            if f not in views and fresh("ViewCode", args) and overlap(p.qterms, f.replace("/", " ")) > 0:
                return {"rationale": "Read %s, a promising file listed." % f, "action": "ViewCode",
                        "args": args}, "ViewCode file %s" % f
        return {"rationale": "Nothing new is left to try; answer from what was found.", "action": "Finish",
                "args": {"answer": "The evidence found so far is all there is.", "finish_reason": "exhausted"}}, \
            "Finish (exhausted)"

    def filter(self, p, rng, small):
        res = section(p.dyn, r"^(?:Result|Candidates|Observation|Spans)[^\n]*\n",
                      [r"^(?:Pick the spans|Reply with|Rules|Guidelines)"]) or p.dyn
        spans = spans_in(res)
        keep = [(s, sc) for s, sc in best_spans(p, spans, 3) if sc > 0]
        if small and rng.random() < 0.25:
            keep = []
        out = []
        for s, _ in keep:
            a, b = narrow(p, s)
            out.append({"path": s.path, "start_line": a, "end_line": b})
        obj = {"rationale": "kept the spans that share the question's words (%d of %d)" % (len(keep), len(spans)),
               "spans": out, "note": "kept %d of %d spans sharing the question's words" % (len(keep), len(spans))}
        return obj, "kept %s" % ["%s:%d-%d" % (o["path"], o["start_line"], o["end_line"]) for o in out]

    def evaluation(self, p, rng):
        obs = section(p.dyn, r"^(?:Its observation|Observation|Evidence)[^\n]*\n",
                      [r"^(?:Scale|Reply with|Score|Rules|Guidelines)"])
        step = section(p.dyn, r"^This step:", [r"$"])
        is_finish = "Finish" in step.split("\n")[0] if step else False
        spans = spans_in(obs if obs else p.dyn)
        if is_finish:
            spans = spans_in(p.dyn)
        text = " ".join(s.text() for s in spans)
        f = overlap(p.qterms, text)
        if not spans:
            value = 10 if not is_finish else 5
            why = "no code span is shown" + (" for this Finish" if is_finish else "")
        else:
            value = int(round(min(95, 25 + 90 * f)))
            why = "the code shown holds %d%% of the question's terms" % round(100 * f)
        obj = {"rationale": why + ".", "value": value,
               "feedback": "read the definition with ViewCode" if spans else "look up the names in the question"}
        return obj, "value %d" % value

    def answer(self, p, rng):
        ev = section(p.dyn, r"^(?:Evidence|Spans|Context)[^\n]*\n", [r"^(?:Write a concise|Reply with|Rules|Cite)"])
        spans = spans_in(ev or p.dyn)
        # what the trajectory read with ViewCode first: a model cites what it chose to read
        views, _ = viewed_on_path(p)
        vfiles = {str(v).split(":")[0] for v in views}
        ranked = best_spans(p, spans, len(spans) + 1)
        best = [s for s, _ in ranked if s.path in vfiles][:2]
        best += [s for s, _ in ranked if s not in best][:3 - len(best)]
        lines = ["From the code shown:", ""]
        for s in best:
            code = [ln.strip() for ln in s.lines if ln.strip() and not ln.strip().startswith(("...", "[..."))][:2]
            code = [re.sub(r"^\d+[:|]?\s*", "", c)[:100] for c in code]
            lines.append("- `%s`%s: %s" % (s.key(), " (%s)" % s.symbol[:60] if s.symbol else "",
                                            "`" + code[0].replace("`", "'") + "`" if code else "see the lines cited"))
        if not best:
            lines.append("- No code was shown, so this cannot be answered from the repository.")
        md = "\n".join(lines)
        return md, "cites %s" % [s.key() for s in best]

    def judge(self, p, rng):
        ref = section(p.dyn, r"^Reference answer:?\s*\n", [r"^Candidate answer"])
        cand = section(p.dyn, r"^Candidate answer:?\s*\n", [r"^Score the candidate"])
        f = overlap(terms(ref), cand)
        s = max(1, min(20, int(round(4 + 16 * f))))
        return {"correctness": s, "completeness": s, "relevance": s, "clarity": s, "reasoning": s,
                "rationale": "the candidate shares %d%% of the reference's terms" % round(100 * f)}, "score %d" % s


# ------------------------------------------------------------------ profiles: shaping replies

def draft_json(role):
    """A draft object inside the thinking, with wrong values."""
    return {
        "planning": {"action": "Finish", "args": {"answer": "draft: probably in utils.py", "finish_reason": "draft"}},
        "perception": {"summary": "draft", "candidates": ["draft_helper"]},
        "filter": {"spans": [{"path": "draft/nowhere.py", "start_line": 1, "end_line": 2}]},
        "evaluation": {"value": 3, "feedback": "draft"},
        "answer": {"answer": "draft answer without any citation"},
        "judge": {"correctness": 1, "completeness": 1, "relevance": 1, "clarity": 1, "reasoning": 1},
    }.get(role, {"draft": True})


def thinking(p, rng):
    n = rng.randint(1000, 3000)   # tokens of thinking
    sents = ["Okay, the question is: %s" % p.question[:200],
             "Let me look at what the prompt shows and which role I play (%s)." % p.role,
             "A first draft of the reply could be %s but let me check it against the prompt." %
             json.dumps(draft_json(p.role)),
             "Hmm, wait. That draft does not match what is shown; I should use the spans listed instead."]
    filler = "I re-read the spans, the names in the question and the rules, and weigh each option again. "
    out = " ".join(sents) + " "
    while len(out) < 4 * n:
        out += filler
    return out[:4 * n].rstrip() + " So the final reply follows."


def placeholderize(role, obj, p, rng):
    if role == "planning" and "ActionName" in p.body:
        return {"action": "ActionName", "args": {"argument": "value"}, "rationale": "one sentence"}
    if role == "filter" and "dir/file.py" in p.body:
        return {"spans": [{"path": "dir/file.py", "start_line": 10, "end_line": 24}], "note": "optional, one line"}
    if role == "filter" and "path/to/file.py" in p.body:
        return {"spans": [{"path": "path/to/file.py", "start_line": 10, "end_line": 24}]}
    if role == "evaluation" and re.search(r'"value":\s*75', p.body):
        return {"value": 75, "feedback": "..."}
    return obj


def small_slips(role, obj, rng):
    obj = json.loads(json.dumps(obj))
    if role == "perception" and rng.random() < 0.5:
        for k in ("candidates", "unexplored", "gaps", "redundant"):
            if isinstance(obj.get(k), list):
                obj[k] = ", ".join(obj[k])
    if role == "planning":
        args = obj.get("args", {})
        if "class_name" in args and rng.random() < 0.4:
            args["class-name"] = args.pop("class_name")
        if "code_span_list" in args and rng.random() < 0.5:
            args["code_span_list"] = args["code_span_list"][0]
    if role == "evaluation" and rng.random() < 0.4:
        obj["value"] = round(obj["value"] / 100.0, 2)
    return obj


def dumps_trailing_commas(obj):
    s = json.dumps(obj, indent=2)
    return re.sub(r"(\S)(\n\s*[}\]])", r"\1,\2", s)


def small_wrap(text, rng):
    r = rng.random()
    if r < 0.35:
        return "```json\n%s\n```" % text
    if r < 0.6:
        return "Sure! Here is my reply:\n\n```json\n%s\n```\n\nLet me know if you need anything else." % text
    if r < 0.75:
        return "Here is the JSON you asked for: %s I hope this helps." % text
    return text


def small_json(role, obj, rng):
    if role == "answer" and rng.random() < 0.4:
        # Markdown inside a JSON string, newlines left raw: invalid JSON
        return '{"answer": "%s"}' % obj["answer"].replace('"', '\\"')
    if rng.random() < 0.3:
        return dumps_trailing_commas(obj)
    return json.dumps(obj)


def conform(obj, schema):
    """What a server with constrained decoding returns: the object with every
    required field of the schema present (a missing one filled by type) and
    the schema's property order."""
    if not isinstance(schema, dict) or not isinstance(obj, dict):
        return obj
    props = schema.get("properties") or {}
    out = {}
    for k in list(props) + [k for k in obj if k not in props]:
        if k in obj:
            v = obj[k]
            sub = props.get(k)
            if isinstance(v, dict):
                v = conform(v, sub)
            elif isinstance(v, list) and isinstance(sub, dict) and isinstance(sub.get("items"), dict):
                v = [conform(x, sub["items"]) for x in v]
            out[k] = v
        elif k in (schema.get("required") or []):
            t = (props.get(k) or {}).get("type")
            out[k] = {"string": "-", "array": [], "integer": 0, "number": 0, "boolean": False,
                      "object": {}}.get(t if isinstance(t, str) else "string", "-")
    if schema.get("additionalProperties") is False:
        out = {k: v for k, v in out.items() if k in props}
    return out


def schema_ok(obj, schema):
    """Loose check of an object against a JSON schema's required fields."""
    if not isinstance(schema, dict):
        return True
    req = schema.get("required") or []
    return isinstance(obj, dict) and all(k in obj for k in req)


# ------------------------------------------------------------------ server

class State:
    def __init__(self, a):
        self.a = a
        self.profiles = set(a.profile.split(","))
        self.lock = threading.Lock()
        self.n = 0
        self.t0 = time.monotonic()
        self.log = open(a.log, "a", encoding="utf-8") if a.log else None
        self.prev_by_role = {}
        self.anthropic_cache = set()
        self.attempts = {}
        self.faults_in_row = {}
        self.shape_last = {}       # reply shapes: the prompt's last request met the shape
        self.first_limit = {}      # length-empty: the first reply limit seen, per model
        gold = {}
        if a.gold:
            with open(a.gold, encoding="utf-8") as f:
                for raw in f:
                    if raw.strip():
                        j = json.loads(raw)
                        if j.get("question"):
                            gold[j["question"].strip()] = list(j.get("gold_files") or [])
        self.decider = Decider(self.profiles, gold, a.gold_root)

    def rng_for(self, key):
        """A generator seeded by --seed, the request's text and how often that
        text was asked: reproducible whatever the order of concurrent requests."""
        with self.lock:
            k = self.attempts.get(key, 0)
            self.attempts[key] = k + 1
        h = hashlib.sha256(("%d|%s|%d" % (self.a.seed, key, k)).encode()).hexdigest()
        return random.Random(int(h[:16], 16)), k

    def cached_prefix(self, role, text):
        with self.lock:
            prev = self.prev_by_role.get(role)
            self.prev_by_role[role] = text
        if not prev:
            return 0
        n = 0
        m = min(len(prev), len(text))
        while n < m and prev[n] == text[n]:
            n += 1
        return (n // 4) // 16 * 16

    def record(self, entry):
        with self.lock:
            entry["n"] = self.n
            entry["t"] = round(time.monotonic() - self.t0, 3)
            self.n += 1
            if self.log:
                self.log.write(json.dumps(entry) + "\n")
                self.log.flush()


def openai_error(message, typ, param, code):
    return {"error": {"message": message, "type": typ, "param": param, "code": code}}


def anthropic_error(typ, message):
    return {"type": "error", "error": {"type": typ, "message": message}}


class Handler(BaseHTTPRequestHandler):
    server_version = "model-emu/1"
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj, extra=None):
        self.send_raw(status, json.dumps(obj).encode("utf-8"), extra)

    def send_raw(self, status, body, extra=None, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):
        self.send_json(404, {"error": {"message": "only POST is served"}})

    def do_POST(self):
        st = self.state
        self.as_responses = False   # one handler serves every request of a kept-alive connection
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        path = self.path.split("?")[0]
        entry = {"path": path, "profile": st.a.profile, "bytes": len(raw),
                 "headers": sorted(k.lower() for k in self.headers.keys()),
                 "auth": bool(self.headers.get("Authorization") or self.headers.get("x-api-key") or
                              self.headers.get("api-key"))}
        if transport_gate(self, entry):   # azure, responses: a refusal was sent
            return
        if st.a.log_bodies:
            entry["body"] = raw.decode("utf-8", "replace")
        try:
            req = json.loads(raw.decode("utf-8")) if raw else None
        except ValueError:
            req = None
        self.stream_wanted = isinstance(req, dict) and (req.get("stream") is True or "unasked-sse" in st.profiles)
        so = req.get("stream_options") if isinstance(req, dict) else None
        self.include_usage = isinstance(so, dict) and so.get("include_usage") is True
        if self.stream_wanted:
            entry["stream"] = {"asked": req.get("stream") is True, "usage": self.include_usage}
        if path.endswith("/embeddings"):
            kind = "embeddings"
        elif path.endswith("/chat/completions"):
            kind = "chat"
        elif path.endswith("/messages"):
            kind = "messages"
        elif path.endswith("/responses") and ("responses" in st.profiles or "azure" in st.profiles):
            kind = "responses"
        else:
            entry.update(status=404)
            st.record(entry)
            self.send_json(404, {"error": {"message": "no such endpoint: %s (served: .../chat/completions, "
                                                      "/v1/messages, .../embeddings)" % path}})
            return
        if not isinstance(req, dict):
            entry.update(status=400)
            st.record(entry)
            body = anthropic_error("invalid_request_error", "request body is not valid JSON") if kind == "messages" \
                else openai_error("We could not parse the JSON body of your request.", "invalid_request_error",
                                  None, None)
            self.send_json(400, body)
            return
        entry["params"] = {k: v for k, v in req.items() if k not in ("messages", "system", "tools", "input")}
        if kind == "embeddings":
            self.embeddings(req, entry)
            return
        if kind == "chat" and "responses" in st.profiles and responses_chat_refusal(self, req, entry):
            return
        if kind == "responses":
            req = responses_request(self, req, entry)
            if req is None:
                return
            kind = "chat"
        try:
            self.chat(kind, req, entry)
        except (ConnectionError, BrokenPipeError):
            raise
        except Exception as e:  # a bug of the emulator must show, not hang the client
            entry.update(status=500, fault="emulator error: %r" % e)
            st.record(entry)
            self.send_json(500, {"error": {"message": "model_emu internal error: %r" % e, "type": "server_error"}})

    def embeddings(self, req, entry):
        inp = req.get("input", [])
        if isinstance(inp, str):
            inp = [inp]
        data = [{"object": "embedding", "index": i, "embedding": embed_vector(t, self.state.a.embed_dim)}
                for i, t in enumerate(inp)]
        words = sum(len(t.split()) for t in inp)
        entry.update(status=200, role="embeddings", usage={"prompt_tokens": words})
        self.state.record(entry)
        self.send_json(200, {"object": "list", "data": data, "model": req.get("model", ""),
                             "usage": {"prompt_tokens": words, "total_tokens": words}})

    def fail(self, entry, status, body, fault, extra=None, raw=None, ctype="application/json"):
        entry.update(status=status, fault=fault)
        self.state.record(entry)
        if raw is not None:
            self.send_raw(status, raw, extra, ctype)
        elif status == 200 and completion_wire(body):   # a refusal, a choice error: still a completion
            self.send_completion(body)
        else:
            self.send_json(status, body, extra)

    def send_completion(self, obj):
        """A completion, as an event stream when the request asked for one
        (or the server streams unasked), else whole."""
        if not self.stream_wanted:
            self.send_json(200, obj)
            return
        wire = completion_wire(obj)
        events = sse_wire.events_for(wire, obj, self.include_usage)
        sse_wire.send(self, wire, events, self.state.a.token_delay_ms / 1000.0)

    def chat(self, kind, req, entry):
        st = self.state
        a = st.a
        prof = st.profiles
        # --- the messages
        msgs = req.get("messages") or []
        system_parts, user_msgs, all_parts = [], [], []
        if kind == "messages":
            system_parts.append(blocks_text(req.get("system", "")))
        for m in msgs:
            if not isinstance(m, dict):
                continue
            t = blocks_text(m.get("content", ""))
            if m.get("role") in ("system", "developer"):
                system_parts.append(t)
                continue
            if m.get("role") == "user":
                user_msgs.append(t)
            all_parts.append(t)
        system = "\n".join(x for x in system_parts if x)
        all_text = system + "\n" + "\n".join(all_parts)
        cut_count = None
        if "ollama-cut" in prof and len(all_text.encode("utf-8")) // 4 > a.ctx_limit:
            # what the model is given: the tail, as one user turn
            keep = a.ctx_limit // 2
            tail = all_text.encode("utf-8")[-4 * keep:].decode("utf-8", "ignore")
            entry["cut"] = {"tokens": len(all_text.encode("utf-8")) // 4, "kept": keep + 2}
            system, user_msgs, all_text, cut_count = "", [tail], tail, keep + 2
        p = Prompt(system, user_msgs, all_text)
        entry.update(role=p.role, question=p.question[:200], prompt_bytes=len(all_text.encode("utf-8")))
        if "guided" in prof:
            entry["gold_files_known"] = bool(st.decider.gold_for(p.question))
        rng, attempt = st.rng_for(all_text)
        entry["attempt"] = attempt

        # --- request validation per API
        if kind == "messages":
            if not self.headers.get("x-api-key"):
                self.fail(entry, 401, anthropic_error("authentication_error", "x-api-key header is required"),
                          "no x-api-key")
                return
            if not self.headers.get("anthropic-version"):
                self.fail(entry, 400, anthropic_error("invalid_request_error", "anthropic-version: header is required"),
                          "no anthropic-version")
                return
            if not isinstance(req.get("max_tokens"), int):
                self.fail(entry, 400, anthropic_error("invalid_request_error", "max_tokens: Field required"),
                          "no max_tokens")
                return
            if any(isinstance(m, dict) and m.get("role") == "system" for m in msgs):
                self.fail(entry, 400, anthropic_error(
                    "invalid_request_error",
                    "messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, "
                    "not \"system\" as an input message role."), "system role in messages")
                return
        if "reasoning" in prof and kind == "chat":
            if "max_tokens" in req:
                self.fail(entry, 400, openai_error(
                    "Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead.", "invalid_request_error", "max_tokens",
                    "unsupported_parameter"), "max_tokens rejected")
                return
            t = req.get("temperature")
            if t is not None and t != 1:
                self.fail(entry, 400, openai_error(
                    "Unsupported value: 'temperature' does not support %s with this model. Only the default (1) "
                    "value is supported." % fmt_num(t), "invalid_request_error", "temperature",
                    "unsupported_value"), "temperature rejected")
                return
            eff = req.get("reasoning_effort")
            if eff is not None and eff not in ("minimal", "low", "medium", "high"):
                self.fail(entry, 400, openai_error(
                    "Invalid value: '%s'. Supported values are: 'low', 'medium', and 'high'." % eff,
                    "invalid_request_error", "reasoning_effort", "invalid_value"), "bad reasoning_effort")
                return
        refusal = current_generation_refusal(prof, kind, req, msgs, a.strict_form)
        if refusal:
            self.fail(entry, refusal[0], refusal[1], refusal[2])
            return
        if "ctx-limit" in prof:
            ntok = len(all_text.encode("utf-8")) // 4
            if ntok > a.ctx_limit:
                form = a.ctx_form
                if form == "vllm":
                    body = {"object": "error", "message": "This model's maximum context length is %d tokens. However, "
                            "you requested %d tokens (%d in the messages, %d in the completion). Please reduce the "
                            "length of the messages or completion." % (a.ctx_limit, ntok + req_max(req), ntok,
                                                                        req_max(req)),
                            "type": "BadRequestError", "param": None, "code": 400}
                elif form == "llamacpp":
                    body = {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                      "increasing it", "type": "exceed_context_size_error",
                                      "n_prompt_tokens": ntok, "n_ctx": a.ctx_limit}}
                elif kind == "messages":
                    body = anthropic_error("invalid_request_error", "prompt is too long: %d tokens > %d maximum"
                                           % (ntok, a.ctx_limit))
                else:
                    body = openai_error("This model's maximum context length is %d tokens. However, your messages "
                                        "resulted in %d tokens. Please reduce the length of the messages."
                                        % (a.ctx_limit, ntok), "invalid_request_error", "messages",
                                        "context_length_exceeded")
                entry["ctx"] = {"tokens": ntok, "limit": a.ctx_limit, "form": form}
                self.fail(entry, 400, body, "context_length_exceeded")
                return
        if "ctx-vllm" in prof:
            ntok = len(all_text.encode("utf-8")) // 4
            mt = req_max(req)
            if ntok >= a.ctx_limit or ntok + mt > a.ctx_limit:
                if ntok >= a.ctx_limit:
                    msg = ("This model's maximum context length is %d tokens. However, your request has %d input "
                           "tokens. Please reduce the length of the input messages." % (a.ctx_limit, ntok))
                else:
                    msg = ("'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context "
                           "length is %d tokens and your request has %d input tokens (%d > %d - %d)."
                           % (mt, a.ctx_limit, ntok, mt, a.ctx_limit, ntok))
                entry["ctx"] = {"tokens": ntok, "max_tokens": mt, "limit": a.ctx_limit, "form": "vllm"}
                self.fail(entry, 400, {"object": "error", "message": msg, "type": "BadRequestError", "param": None,
                                       "code": 400}, "context_length_exceeded")
                return
        if "out-cap" in prof and req_max(req) > a.out_cap:
            entry["cap"] = {"max_tokens": req_max(req), "limit": a.out_cap}
            self.fail(entry, 400, {"error": {"message": "Invalid max_tokens value, the valid range of max_tokens is "
                                                        "[1, %d]" % a.out_cap, "type": "invalid_request_error",
                                             "param": None, "code": "invalid_request_error"}},
                      "max_tokens_over_limit")
            return
        rf = req.get("response_format") if isinstance(req.get("response_format"), dict) else {}
        if "lmstudio" in prof and rf.get("type") not in (None, "json_schema", "text"):
            entry["refused"] = {"response_format": rf.get("type")}
            self.fail(entry, 400, {"error": "'response_format.type' must be 'json_schema' or 'text'"},
                      "response_format_refused")
            return
        if "flaky" in prof:
            key = all_text
            with st.lock:
                inrow = st.faults_in_row.get(key, 0)
            r = rng.random()
            fault = None
            if inrow < a.flaky_max_row:
                if r < 0.12:
                    fault = "429"
                elif r < 0.16:
                    fault = "500"
                elif r < 0.19:
                    fault = "502"
                elif r < 0.22:
                    fault = "503"
                elif r < 0.22 + a.hang_rate:
                    fault = "hang"
            with st.lock:
                st.faults_in_row[key] = inrow + 1 if fault else 0
            if fault == "429":
                body = anthropic_error("rate_limit_error", "Number of request tokens has exceeded your per-minute "
                                       "rate limit") if kind == "messages" else openai_error(
                    "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. Please try "
                    "again in 120ms.", "requests", None, "rate_limit_exceeded")
                self.fail(entry, 429, body, "429")
                return
            if fault == "500":
                self.fail(entry, 500, openai_error("The server had an error while processing your request. Sorry "
                                                   "about that!", "server_error", None, None), "500")
                return
            if fault == "502":
                self.fail(entry, 502, None, "502", raw=b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n"
                          b"<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
                          b"</body>\r\n</html>\r\n", ctype="text/html")
                return
            if fault == "503":
                body = anthropic_error("overloaded_error", "Overloaded") if kind == "messages" else openai_error(
                    "The engine is currently overloaded, please try again later.", "server_error", None, None)
                self.fail(entry, 503 if kind == "chat" else 529, body, "503")
                return
            if fault == "hang":
                entry.update(status=0, fault="hang %gs" % a.hang_seconds)
                st.record(entry)
                time.sleep(a.hang_seconds)
                self.close_connection = True
                return

        rf0 = req.get("response_format") if kind == "chat" else None
        if isinstance(rf0, dict) and rf0.get("type") == "json_schema" and not ("small" in prof):
            problem = strict_schema_problem(rf0.get("json_schema"))
            if problem:
                self.fail(entry, 400, openai_error(problem, "invalid_request_error", "response_format", None),
                          "bad json_schema")
                return

        # --- reply shapes (http200-error, choice-error, refusal; unasked-sse streams the reply decided)
        if self.reply_shape(kind, req, entry, all_text, rng):
            return

        # --- the decision
        d = st.decider
        small = "small" in prof
        role = p.role
        if role == "perception":
            obj, why = d.perception(p, rng)
        elif role == "planning":
            obj, why = d.planning(p, rng, small)
        elif role == "filter":
            obj, why = d.filter(p, rng, small)
        elif role == "evaluation":
            obj, why = d.evaluation(p, rng)
        elif role == "answer":
            md, why = d.answer(p, rng)
            obj = {"answer": md} if p.asks_json_answer else None
        elif role == "judge":
            obj, why = d.judge(p, rng)
        else:
            md = "I am a model emulator; this prompt names no role I know (%d bytes)." % len(all_text)
            obj, why = None, "no role"
        entry["decision"] = why

        # --- shaping the reply per profile
        tool = None
        rf = req.get("response_format") if kind == "chat" else None
        tools = req.get("tools") if kind == "messages" else None
        if obj is not None and small:
            if rng.random() < 0.15:
                obj = placeholderize(role, obj, p, rng)
                entry["slip"] = "placeholder"
            obj = small_slips(role, obj, rng)
            text = small_wrap(small_json(role, obj, rng), rng)
        elif obj is not None:
            if role == "answer" and not p.asks_json_answer:
                text = obj["answer"]
            else:
                text = json.dumps(obj)
            if tools and isinstance(tools, list) and tools and kind == "messages":
                tc = req.get("tool_choice") or {}
                name = tc.get("name") if isinstance(tc, dict) and tc.get("type") == "tool" else tools[0].get("name")
                schema = next((t.get("input_schema") for t in tools if t.get("name") == name), None)
                if role == "answer" and not p.asks_json_answer and isinstance(schema, dict) and \
                        "answer" in (schema.get("properties") or {}):
                    obj = {"answer": md}
                ok0 = schema_ok(obj, schema)
                obj = conform(obj, schema)
                tool = {"type": "tool_use", "id": "toolu_%s" % hashlib.sha1(text.encode()).hexdigest()[:20],
                        "name": name or "reply", "input": obj}
                entry["schema_ok"] = ok0
            if isinstance(rf, dict) and rf.get("type") == "json_schema":
                sch = (rf.get("json_schema") or {}).get("schema")
                if role == "answer" and not p.asks_json_answer and isinstance(sch, dict) and \
                        "answer" in (sch.get("properties") or {}):
                    obj = {"answer": md}
                entry["schema_ok"] = schema_ok(obj, sch)
                obj = conform(obj, sch)
                text = json.dumps(obj)
        else:
            text = md if small is False or rng.random() < 0.7 else "Sure, here is the answer.\n\n" + md
        reasoning = None
        ctk = req.get("chat_template_kwargs") if isinstance(req.get("chat_template_kwargs"), dict) else {}
        thinking_off = ctk.get("enable_thinking") is False or req.get("think") is False or \
            "/no_think" in all_text
        thinks = "think" in prof or "magistral" in prof
        if thinks and thinking_off:
            entry["think"] = "off"
            if "/no_think" in all_text and kind == "chat":
                text = "<think>\n\n</think>\n\n" + text   # Qwen3's soft switch leaves an empty block
        elif thinks:
            th = thinking(p, rng)
            mode = a.think_mode if a.think_mode != "mixed" else ("field" if rng.random() < 0.5 else "tags")
            if "magistral" in prof:
                mode = "parts"
            entry["think"] = mode
            if mode in ("field", "parts") and kind == "chat":
                reasoning = th
            else:
                text = "<think>\n%s\n</think>\n\n%s" % (th, text)
                if tool is not None:
                    tool = None
                    entry["think"] = "tags (tool use dropped)"
        # Claude 5 thinks by default: a thinking block before the answer
        c5_thinking = None
        if "claude5" in prof and kind == "messages":
            c5_thinking = thinking(p, rng)
            entry["think"] = "blocks"
        # --- token accounting and limits
        in_tok = len(all_text.encode("utf-8")) // 4
        out_tok = max(1, len(text.encode("utf-8")) // 4)
        reason_tok = 0
        finish = "stop"
        limit = None
        if kind == "chat":
            limit = req.get("max_completion_tokens", req.get("max_tokens"))
        else:
            limit = req.get("max_tokens")
        if "reasoning" in prof or getattr(self, "as_responses", False):
            effort = req.get("reasoning_effort") or "medium"
            reason_tok = {"minimal": 0, "low": 300, "medium": 1200, "high": 4000}.get(effort, 1200) + \
                rng.randint(0, 400)
            if isinstance(limit, int) and reason_tok + out_tok > limit:
                reason_tok = min(reason_tok, limit)
                text, out_tok, finish = "", 0, "length"
        if c5_thinking is not None:
            reason_tok = len(c5_thinking.encode("utf-8")) // 4
            if isinstance(limit, int) and reason_tok + out_tok > limit:
                c5_thinking = c5_thinking[:4 * limit]
                reason_tok = limit
                text, out_tok, finish, tool = "", 0, "length", None
        if "length-empty" in prof and isinstance(limit, int):
            model0 = req.get("model", "")
            with st.lock:
                first = st.first_limit.setdefault(model0, limit)
            entry["first_limit"] = first
            if limit <= first:
                reason_tok = limit
                text, out_tok, finish = "", 0, "length"
                tool = None
        if reasoning is not None:
            reason_tok = len(reasoning.encode("utf-8")) // 4
            if isinstance(limit, int) and reason_tok + out_tok > limit:
                reasoning = reasoning[:4 * limit]
                reason_tok = limit
                text, out_tok, finish = "", 0, "length"
        elif isinstance(limit, int) and out_tok > limit:
            text = text.encode("utf-8")[:4 * limit].decode("utf-8", "ignore")
            out_tok, finish = limit, "length"
        if isinstance(limit, int) and finish != "length" and tool is not None and out_tok > limit:
            finish = "length"
        entry["finish"] = finish
        entry["reply"] = text[:4000]
        model = req.get("model", "")
        if kind == "chat":
            cached = st.cached_prefix(role or "?", "\n".join(json.dumps(m, sort_keys=True) for m in msgs))
            msg = {"role": "assistant", "content": text}
            if entry.get("think") == "parts":
                msg["content"] = ([{"type": "thinking", "thinking": [{"type": "text", "text": reasoning}]}]
                                  if reasoning else []) + [{"type": "text", "text": text}]
            elif reasoning is not None:
                msg["reasoning_content"] = reasoning
            usage = {"prompt_tokens": in_tok, "completion_tokens": out_tok + reason_tok,
                     "total_tokens": in_tok + out_tok + reason_tok,
                     "prompt_tokens_details": {"cached_tokens": min(cached, in_tok)}}
            if "ollama-cut" in prof:
                usage = {"prompt_tokens": cut_count or in_tok, "completion_tokens": out_tok,
                         "total_tokens": (cut_count or in_tok) + out_tok}
            if "reasoning" in prof or "length-empty" in prof or reasoning is not None:
                usage["completion_tokens_details"] = {"reasoning_tokens": reason_tok}
            obj_out = {"id": "chatcmpl-emu%d" % st.n, "object": "chat.completion", "created": int(time.time()),
                       "model": model, "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                       "usage": usage}
        else:
            cread, ccreate, rest = self.anthropic_cache_usage(req, in_tok)
            usage = {"input_tokens": rest, "output_tokens": out_tok, "cache_read_input_tokens": cread,
                     "cache_creation_input_tokens": ccreate}
            blocks = [tool] if tool is not None else ([{"type": "text", "text": text}] if text else [])
            if c5_thinking is not None:
                usage["output_tokens"] = out_tok + reason_tok
                th = {"type": "thinking", "thinking": c5_thinking,
                      "signature": hashlib.sha256(c5_thinking.encode("utf-8")).hexdigest()}
                blocks = [th] + blocks
            stop = {"stop": "end_turn", "length": "max_tokens"}[finish]
            if tool is not None and finish == "stop":
                stop = "tool_use"
            obj_out = {"id": "msg_emu%d" % st.n, "type": "message", "role": "assistant", "model": model,
                       "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if getattr(self, "as_responses", False):
            obj_out = responses_reply(obj_out, reason_tok)
            usage = obj_out["usage"]
        entry.update(status=200, usage=usage)
        st.record(entry)
        self.send_completion(obj_out)

    # ---------------------------------------------- reply shapes (one block)
    def reply_shape(self, kind, req, entry, all_text, rng):
        """The 200 replies that carry no completion. True when one was sent."""
        st = self.state
        a = st.a
        prof = st.profiles
        model = req.get("model", "")
        in_tok = len(all_text.encode("utf-8")) // 4
        if "refusal" in prof:
            msg = "I'm sorry, but I can't help with that request."
            if kind == "chat":
                obj = {"id": "chatcmpl-emu%d" % st.n, "object": "chat.completion", "created": int(time.time()),
                       "model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": None,
                                                                            "refusal": msg},
                                                    "logprobs": None, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": in_tok, "completion_tokens": 12, "total_tokens": in_tok + 12}}
            else:
                obj = {"id": "msg_emu%d" % st.n, "type": "message", "role": "assistant", "model": model,
                       "content": [], "stop_reason": "refusal", "stop_sequence": None,
                       "usage": {"input_tokens": in_tok, "output_tokens": 0}}
            entry["usage"] = obj["usage"]
            self.fail(entry, 200, obj, "refusal")
            return True
        for shape in ("http200-error", "choice-error"):
            if shape not in prof:
                continue
            with st.lock:
                last = st.shape_last.get(all_text, False)
            hit = not last and rng.random() < a.shape_rate
            with st.lock:
                st.shape_last[all_text] = hit
            if not hit:
                continue
            if shape == "http200-error":
                obj = openai_error("The server had an error processing your request. Sorry about that! You can "
                                   "retry your request, or contact us through our help center if the error persists.",
                                   "server_error", None, None)
            else:
                obj = {"id": "gen-emu%d" % st.n, "object": "chat.completion", "created": int(time.time()),
                       "model": model, "provider": "EmuProvider",
                       "choices": [{"index": 0, "finish_reason": "error", "native_finish_reason": "error",
                                    "message": {"role": "assistant", "content": ""},
                                    "error": {"code": 502, "message": "Upstream provider EmuProvider returned an "
                                              "error: connection reset while generating",
                                              "metadata": {"provider_name": "EmuProvider"}}}],
                       "usage": {"prompt_tokens": in_tok, "completion_tokens": 0, "total_tokens": in_tok}}
                entry["usage"] = obj["usage"]
            self.fail(entry, 200, obj, shape)
            return True
        return False

    def anthropic_cache_usage(self, req, in_tok):
        """Cache read/creation for the system blocks up to the last one marked
        cache_control (the tools and messages are not marked by drqa-tui's
        requests; a marked message block extends the prefix too)."""
        st = self.state
        if "anthropic-cache" in st.profiles:
            return anthropic_cache_minimums(st, req, in_tok)
        parts = []
        marked = ""
        sysv = req.get("system")
        blocks = sysv if isinstance(sysv, list) else []
        for b in blocks:
            if isinstance(b, dict):
                parts.append(b.get("text", ""))
                if b.get("cache_control"):
                    marked = "\n".join(parts)
        for m in req.get("messages") or []:
            c = m.get("content") if isinstance(m, dict) else None
            if isinstance(c, list):
                for b in c:
                    if isinstance(b, dict):
                        parts.append(b.get("text", ""))
                        if b.get("cache_control"):
                            marked = "\n".join(parts)
        if not marked:
            return 0, 0, in_tok
        ptok = len(marked.encode("utf-8")) // 4
        if ptok < st.a.cache_min_tokens:
            return 0, 0, in_tok
        h = hashlib.sha256(marked.encode("utf-8")).hexdigest()
        with st.lock:
            hit = h in st.anthropic_cache
            st.anthropic_cache.add(h)
        ptok = min(ptok, in_tok)
        return (ptok, 0, in_tok - ptok) if hit else (0, ptok, in_tok - ptok)


# ------------------------------------------------------------------ transports
# Azure OpenAI, the Responses API and Anthropic's cache minimums: the bodies
# and rules of the providers' documentation (profiles azure, responses,
# anthropic-cache in the module docstring).

AZURE_401 = {"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API "
                       "endpoint. Make sure to provide a valid key for an active subscription and use a correct "
                       "regional API endpoint for your resource."}}
AZURE_404 = {"error": {"code": "404", "message": "Resource not found"}}
RESPONSES_ONLY_RE = re.compile(r"^(gpt-5[.\d]*-pro(-20\d\d.*)?|.*-codex(-.*)?|codex-.*|o3-pro(-20.*)?|o1-pro(-20.*)?)$")
RESPONSES_KEYS = {"model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "reasoning", "text",
                  "store", "stream", "metadata", "tools", "tool_choice", "parallel_tool_calls", "previous_response_id",
                  "truncation", "user", "include", "background", "service_tier", "prompt_cache_key"}


def completion_wire(obj):
    """The API a completion object belongs to (chat, messages, responses), or
    None for a body that is no completion (an error)."""
    if not isinstance(obj, dict):
        return None
    if "choices" in obj:
        return "chat"
    if obj.get("type") == "message":
        return "messages"
    if obj.get("object") == "response":
        return "responses"
    return None


def transport_gate(h, entry):
    """The azure and responses profiles' refusals before a request is read
    as a chat; True when one was sent."""
    st = h.state
    path, _, query = h.path.partition("?")
    if "azure" in st.profiles:
        m = re.match(r"^/openai/deployments/([^/]+)/(chat/completions|embeddings)$", path)
        v1 = re.match(r"^/openai/v1/(chat/completions|responses|embeddings)$", path)
        entry["azure"] = {"deployment": m.group(1) if m else None, "v1": bool(v1),
                          "api_version": "api-version=" in query}
        if not (m and "api-version=" in query) and not v1:
            h.fail(entry, 404, AZURE_404, "azure: no such path or no api-version")
            return True
        auth = h.headers.get("Authorization") or ""
        if not h.headers.get("api-key") and not (auth.startswith("Bearer eyJ") and "." in auth):
            h.fail(entry, 401, AZURE_401, "azure: no api-key")
            return True
    return False


def responses_chat_refusal(h, req, entry):
    """responses: chat completions for a model served on /v1/responses alone."""
    model = str(req.get("model") or "")
    if RESPONSES_ONLY_RE.match(model):
        h.fail(entry, 404, openai_error("This model is only supported in v1/responses and not in "
                                        "v1/chat/completions.", "invalid_request_error", "model", None),
               "responses-only model on chat completions")
        return True
    return False


def responses_request(h, req, entry):
    """A Responses API request checked and turned into the chat request the
    decider reads; None when a refusal was sent."""
    entry["params"].pop("instructions", None)
    h.as_responses = True
    if "response_format" in req:
        h.fail(entry, 400, openai_error("Unsupported parameter: 'response_format'. In the Responses API, this "
                                        "parameter has moved to 'text.format'. Try again with the new parameter. "
                                        "See the API documentation for more information.", "invalid_request_error",
                                        "response_format", "unsupported_parameter"), "response_format on responses")
        return None
    if "max_tokens" in req or "max_completion_tokens" in req:
        k = "max_tokens" if "max_tokens" in req else "max_completion_tokens"
        h.fail(entry, 400, openai_error("Unsupported parameter: '%s'. In the Responses API, this parameter has "
                                        "moved to 'max_output_tokens'. Try again with the new parameter. See the "
                                        "API documentation for more information." % k, "invalid_request_error", k,
                                        "unsupported_parameter"), "%s on responses" % k)
        return None
    for k in req:
        if k not in RESPONSES_KEYS:
            h.fail(entry, 400, openai_error("Unknown parameter: '%s'." % k, "invalid_request_error", k,
                                            "unknown_parameter"), "unknown parameter %s" % k)
            return None
    inp = req.get("input")
    if not isinstance(inp, (str, list)):
        h.fail(entry, 400, openai_error("Missing required parameter: 'input'.", "invalid_request_error", "input",
                                        "missing_required_parameter"), "no input")
        return None
    model = str(req.get("model") or "")
    if RESPONSES_ONLY_RE.match(model) and "temperature" in req:
        h.fail(entry, 400, openai_error("Unsupported parameter: 'temperature' is not supported with this model.",
                                        "invalid_request_error", "temperature", "unsupported_parameter"),
               "temperature rejected")
        return None
    eff = (req.get("reasoning") or {}).get("effort") if isinstance(req.get("reasoning"), dict) else None
    if eff is not None and model.startswith(("gpt-5-pro", "o3-pro", "o1-pro")) and eff != "high":
        h.fail(entry, 400, openai_error("Unsupported value: '%s' is not supported with the '%s' model. Supported "
                                        "values are: 'high'." % (eff, model), "invalid_request_error",
                                        "reasoning.effort", "unsupported_value"), "bad reasoning.effort")
        return None
    msgs = []
    if isinstance(req.get("instructions"), str):
        msgs.append({"role": "system", "content": req["instructions"]})
    if isinstance(inp, str):
        msgs.append({"role": "user", "content": inp})
    else:
        for it in inp:
            if isinstance(it, dict) and it.get("role") in ("user", "assistant", "system", "developer"):
                c = it.get("content")
                if isinstance(c, list):   # input_text / output_text parts
                    c = "\n".join(x.get("text", "") for x in c if isinstance(x, dict))
                msgs.append({"role": it["role"], "content": c if isinstance(c, str) else ""})
    chat = {"model": model, "messages": msgs}
    if "max_output_tokens" in req:
        chat["max_completion_tokens"] = req["max_output_tokens"]
    chat["reasoning_effort"] = eff or "medium"
    if "temperature" in req:
        chat["temperature"] = req["temperature"]
    fmt = (req.get("text") or {}).get("format") if isinstance(req.get("text"), dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        chat["response_format"] = {"type": "json_schema", "json_schema": {
            "name": fmt.get("name"), "schema": fmt.get("schema"), "strict": fmt.get("strict", False)}}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        chat["response_format"] = {"type": "json_object"}
    return chat


def responses_reply(chat_out, reason_tok):
    """A chat completion as the Responses API returns it."""
    c0 = chat_out["choices"][0]
    text = c0["message"].get("content") or ""
    u = chat_out.get("usage") or {}
    out_tok = u.get("completion_tokens", 0)
    n = re.sub(r"\D", "", chat_out.get("id", "")) or "0"
    output = [{"type": "reasoning", "id": "rs_emu%s" % n, "summary": []}]
    incomplete = c0.get("finish_reason") == "length"
    if text or not incomplete:
        output.append({"type": "message", "id": "msg_emu%s" % n, "status": "incomplete" if incomplete else "completed",
                       "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]})
    return {"id": "resp_emu%s" % n, "object": "response", "created_at": chat_out.get("created", 0),
            "status": "incomplete" if incomplete else "completed", "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "model": chat_out.get("model", ""), "output": output,
            "usage": {"input_tokens": u.get("prompt_tokens", 0),
                      "input_tokens_details": {"cached_tokens": (u.get("prompt_tokens_details") or {}).get(
                          "cached_tokens", 0)},
                      "output_tokens": out_tok, "output_tokens_details": {"reasoning_tokens": reason_tok},
                      "total_tokens": u.get("prompt_tokens", 0) + out_tok}}


# Anthropic's minimum cacheable prompt per model (docs.anthropic.com, prompt
# caching, "Cache limitations"); a name not listed gets the largest.
CACHE_MINIMUMS = [(r"claude-opus-4-(5|6|7|8)|claude-opus-[5-9]|claude-haiku-4-5", 4096),
                  (r"claude-sonnet-4-6|claude-3-5-haiku|claude-3-haiku", 2048),
                  (r"claude-opus-4-1|claude-opus-4(-20|$)|claude-sonnet-4-5|claude-sonnet-4(-20|$)|claude-3-7-sonnet",
                   1024)]


def cache_minimum(model):
    for pat, n in CACHE_MINIMUMS:
        if re.match(pat, model or ""):
            return n
    return 4096


def anthropic_cache_minimums(st, req, in_tok):
    """(read, created, rest) as Anthropic counts them: the prompt is tools,
    then system blocks, then message blocks; each block marked cache_control
    ends a prefix that is cached once it reaches the model's minimum. The
    longest such prefix cached before is read, what the last one adds beyond
    it is written; nothing is cached under the minimum."""
    parts, marks = [], []
    for t in req.get("tools") or []:
        if isinstance(t, dict):
            parts.append(json.dumps(t, sort_keys=True))
            if t.get("cache_control"):
                marks.append(len(parts))
    sysv = req.get("system")
    for b in (sysv if isinstance(sysv, list) else [{"text": sysv}] if isinstance(sysv, str) else []):
        if isinstance(b, dict):
            parts.append(b.get("text", ""))
            if b.get("cache_control"):
                marks.append(len(parts))
    for m in req.get("messages") or []:
        c = m.get("content") if isinstance(m, dict) else None
        for b in (c if isinstance(c, list) else [{"text": c}] if isinstance(c, str) else []):
            if isinstance(b, dict):
                parts.append(b.get("text", ""))
                if b.get("cache_control"):
                    marks.append(len(parts))
    minimum = cache_minimum(req.get("model"))
    read = last = 0
    for k in marks:
        text = "\n".join(parts[:k])
        ptok = min(len(text.encode("utf-8")) // 4, in_tok)
        if ptok < minimum:
            continue
        h = hashlib.sha256(("%s|%s" % (req.get("model"), text)).encode("utf-8")).hexdigest()
        with st.lock:
            if h in st.anthropic_cache:
                read = max(read, ptok)
            st.anthropic_cache.add(h)
        last = max(last, ptok)
    created = max(0, last - read)
    return read, created, in_tok - read - created


def strict_schema_problem(js):
    """OpenAI's checks of response_format json_schema: a name, and under
    strict every object closed (additionalProperties false) with every
    property required. The message is OpenAI's; None when acceptable."""
    if not isinstance(js, dict) or not js.get("name"):
        return "Missing required parameter: 'response_format.json_schema.name'."
    name = js["name"]
    if not isinstance(js.get("schema"), dict):
        return "Missing required parameter: 'response_format.json_schema.schema'."
    if not js.get("strict"):
        return None

    def walk(node, ctx):
        if not isinstance(node, dict):
            return None
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                return ("Invalid schema for response_format '%s': In context=(%s), 'additionalProperties' is "
                        "required to be supplied and to be false." % (name, ctx))
            props = node.get("properties") or {}
            req = node.get("required") or []
            for k in props:
                if k not in req:
                    return ("Invalid schema for response_format '%s': In context=(%s), 'required' is required to "
                            "be supplied and to be an array including every key in properties. Missing '%s'."
                            % (name, ctx, k))
            for k, v in props.items():
                r = walk(v, (ctx + ", " if ctx else "") + "'properties', '%s'" % k)
                if r:
                    return r
        if isinstance(node.get("items"), dict):
            return walk(node["items"], (ctx + ", " if ctx else "") + "'items'")
        for key in ("anyOf", "oneOf"):
            for i, v in enumerate(node.get(key) or []):
                r = walk(v, (ctx + ", " if ctx else "") + "'%s', '%d'" % (key, i))
                if r:
                    return r
        return None
    return walk(js["schema"], "")


def req_max(req):
    v = req.get("max_tokens", req.get("max_completion_tokens", 0))
    return v if isinstance(v, int) else 0


def fmt_num(t):
    return ("%g" % t) if isinstance(t, (int, float)) else json.dumps(t)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError, socket.timeout)):
            return
        super().handle_error(request, client_address)


def watchdog(max_seconds, parent):
    t0 = time.monotonic()
    while True:
        time.sleep(0.2)
        if os.getppid() != parent:
            os._exit(0)
        if max_seconds and time.monotonic() - t0 > max_seconds:
            sys.stderr.write("model_emu: --max-seconds %g reached, exiting\n" % max_seconds)
            os._exit(0)


def main():
    ap = argparse.ArgumentParser(description="loopback model emulator that reads drqa-tui's prompts")
    ap.add_argument("--profile", default="clean", help="comma-separated: " + ", ".join(sorted(PROFILES)))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log")
    ap.add_argument("--log-bodies", action="store_true", help="also log each request's raw body")
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=1800)
    ap.add_argument("--ctx-limit", type=int, default=8192)
    ap.add_argument("--ctx-form", choices=["openai", "vllm", "llamacpp"], default="openai")
    ap.add_argument("--out-cap", type=int, default=8192, help="out-cap: the most reply tokens a request may ask for")
    ap.add_argument("--think-mode", choices=["tags", "field", "mixed"], default="mixed")
    ap.add_argument("--hang-seconds", type=float, default=30)
    ap.add_argument("--hang-rate", type=float, default=0.02)
    ap.add_argument("--flaky-max-row", type=int, default=2, help="flaky: most faults in a row for one prompt")
    ap.add_argument("--cache-min-tokens", type=int, default=1024, help="anthropic: smallest cacheable prefix")
    ap.add_argument("--embed-dim", type=int, default=8)
    ap.add_argument("--shape-rate", type=float, default=0.15, help="http200-error, choice-error: share of requests")
    ap.add_argument("--gold", help="guided: JSONL of {question, gold_files}")
    ap.add_argument("--gold-root", action="append", default=[], help="guided: a repository tree the gold paths name")
    ap.add_argument("--token-delay-ms", type=float, default=float(os.environ.get("MODEL_EMU_TOKEN_DELAY_MS") or 0),
                    help="a streamed reply waits this long before each piece (default 0)")
    ap.add_argument("--strict-form", choices=["openai", "vllm"], default="openai",
                    help="strict-params: the refusal's wording (Azure OpenAI's or vLLM's)")
    a = ap.parse_args()
    bad = set(a.profile.split(",")) - PROFILES
    if bad:
        ap.error("unknown profile %s (known: %s)" % (", ".join(sorted(bad)), ", ".join(sorted(PROFILES))))
    if "guided" in a.profile.split(",") and not a.gold:
        ap.error("--profile guided needs --gold FILE (JSONL with question and gold_files)")
    Handler.state = State(a)
    srv = Server(("127.0.0.1", a.port), Handler)
    threading.Thread(target=watchdog, args=(a.max_seconds, os.getppid()), daemon=True).start()
    return serve(srv, a.port_file)


if __name__ == "__main__":
    sys.exit(main())
