#!/usr/bin/env python3
"""model_emu_run: drqa-tui --batch over a question set with tests/model_emu.py
as the model, once per emulator profile, and what came out of it.

For each profile it starts the emulator on loopback, writes a config file for
the provider and model family the profile stands for, runs
`drqa-tui --batch` per repository (copies of the trees, made once in the
work directory, indexed once) and reads three things back: the --batch
answers lines, the emulator's request log and the per-question figures.

Per profile (one line each; --json prints them as one JSON object):
  questions      questions asked
  failed         lines with an error, or no line at all
  cited          answers with at least one verified citation (the
                 "citations" of the --batch line: only spans the search saw)
  model          answers written by the model (the emulator's answers start
                 "From the code shown:"; any other text is a fallback's)
  in/q, cached/q mean input and cached-input tokens per question, as the
                 emulator billed them (prompt_tokens and cached_tokens;
                 Anthropic: input + cache read + cache creation, and cache
                 read)
  client in/q    mean tokens.input of the --batch lines (what drqa-tui counted)
  out/q          mean output tokens per question, as the emulator billed them
  exit           the exit statuses drqa-tui gave (3: no model call
                 succeeded; 4: an answer cited nothing verified)
  non-200        requests answered with an error status, a hang or a reply
                 shape that carries no completion (status 200), by kind
  answer lost    questions whose last answer-role request met a transient
                 fault (429, 5xx, a hang: the answer is then a fallback's by
                 necessity)
  cut            requests whose prompt the server cut to its tail (ollama-cut)
  fallbacks      nodes whose decision a fallback made, per role, and nodes left
                 with a failed model call and no fallback (transcripts)
  survival       guided only: of the questions where the model viewed a gold
                 file, the share whose answer cites that file

With --compare-stream each profile runs twice, asking for whole replies
(stream = false) and for event streams, and the table says per profile how
many questions got the same answer (text and citations) and the same ledger
(calls, failures, input, cached, cache-write, output and reasoning tokens,
estimated calls) both ways, the streamed requests served, and the totals of
each run; --token-delay-ms sets the emulator's wait before each piece.

  model_emu_run.py --drqa BIN --questions FILE --repo NAME=DIR [--repo ...]
                   [--profiles clean,reasoning,...] [--iterations N] [--jobs N]
                   [--ids ID,ID,...] [--every K] [--limit N] [--workdir DIR] [--json]
                   [--keep] [--seed S] [--compare-stream] [--token-delay-ms N]
Standard library only. Status: 0 when every run finished (whatever it
found), 2 on a usage error or when drqa-tui crashed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.join(HERE, "model_emu.py")
SIGNATURE = "From the code shown:"

# profile -> (provider, model name of the family it stands for, emulator arguments, config lines)
RUNS = {
    "clean": ("openai", "gpt-4.1-mini", [], []),
    "reasoning": ("openai", "o4-mini", [], []),
    "think": ("openai", "qwen3-32b", ["--think-mode", "mixed"], []),
    # Mistral's reasoning model: thinking as a content part before the text
    "magistral": ("openai", "magistral-small-2509", [], []),
    "small": ("openai", "qwen2.5-coder:7b", [], []),
    # caching from any size: the run checks that the client marks a
    # byte-identical prefix; whether Anthropic's own minimum (1024 tokens for
    # Sonnet, by its tokenizer) is met is not decidable from bytes here
    "anthropic": ("anthropic", "claude-sonnet-4-5", ["--cache-min-tokens", "0"], []),
    # a window inside the range of the planning prompts' sizes: some requests
    # exceed it, by a margin that dropping old trajectory text can remove
    "ctx-limit": ("openai", "llama-3.1-8b-instruct", ["--ctx-limit", "1300"], []),
    # vLLM with --max-model-len 4096 counts max_tokens into the window: the
    # family's 4096-token reply limit leaves no room for any prompt until
    # the client fits it to what the refusal names
    "ctx-vllm": ("openai", "meta-llama/Llama-3.1-8B-Instruct", ["--ctx-limit", "4096"], []),
    # Ollama serving with num_ctx 1024 (set low to save memory; its old
    # default, 2048, cut 11 of the 3129 requests of a clean run): a longer
    # prompt is cut to its tail and answered with 200
    "ollama-cut": ("openai", "llama3.2:3b", ["--ctx-limit", "1024"], []),
    # a config's reply limit (16384) above the model's own (deepseek-chat
    # writes at most 8192): refused until the client takes the limit named
    "out-cap": ("openai", "deepseek-chat", ["--out-cap", "8192"], ["max_tokens = 16384"]),
    # LM Studio takes structured output only as json_schema; Magistral's
    # profile asks for json_object
    "lmstudio": ("openai", "magistral-small-2509", [], []),
    # one retry against up to two faults in a row: some role calls fail for good
    "flaky": ("openai", "gpt-4o-mini", ["--hang-seconds", "4", "--flaky-max-row", "2"],
              ["timeout_total_ms = 1500", "timeout_idle_ms = 1500", "retries = 1"]),
    "guided": ("openai", "gpt-4.1", [], []),
    # ---- reply shapes: 200 replies with no completion in them
    # a gateway's top-level error body with status 200, on some requests
    "http200-error": ("openai", "gpt-4.1-mini", [], []),
    # OpenRouter's choices[0].error with finish_reason "error", on some requests
    "choice-error": ("openai", "gpt-4.1-mini", [], []),
    # a server that streams every reply, asked or not: read all the same
    "unasked-sse": ("openai", "gpt-4.1-mini", [], []),
    # a model that declines everything: can never answer (exit status 3)
    "refusal": ("openai", "gpt-4o", [], []),
    # a reasoning model whose first reply limit is spent on reasoning
    "length-empty": ("openai", "o4-mini", [], []),
    # a model that plans Finish before reading anything
    "finish-now": ("openai", "gpt-4.1-mini", [], []),
}
# profiles whose server can never answer usably: every question fails, the
# run exits 3 (no model call succeeded) naming the server's reason
NEVER_ANSWERS = {"refusal"}

# ---- the current model generation (December 2026)
RUNS.update({
    # Claude Opus 4.7 refuses a temperature: its row sends none
    "temp-deprecated": ("anthropic", "claude-opus-4-7", ["--cache-min-tokens", "0"], []),
    # Claude Sonnet 5.5: adaptive thinking spends the reply limit; forced
    # tool use and a temperature are refused
    "claude5": ("anthropic", "claude-sonnet-5-5", ["--cache-min-tokens", "0"], []),
    # Gemma 2's chat template has no system turn; the model is in no row,
    # so the refusal is learned from the 400 and the prompt folded
    "system-role": ("openai", "gemma-2-27b-it", [], []),
    # Azure OpenAI with an older api-version: max_completion_tokens,
    # reasoning_effort and response_format are unknown fields there
    "strict-params": ("openai", "o4-mini", [], ["profile.o4-*.reasoning_effort = low"]),
    # ---- transports: Azure OpenAI's classic deployment URL (api-key header),
    # a model OpenAI serves on the Responses API alone, and Anthropic's cache
    # minimums as documented per model (Opus 4.5: 4096 tokens, the largest,
    # which only a prefix with the repository outline reaches)
    "azure": ("azure", "gpt-4o", [], []),
    "responses": ("openai", "gpt-5-pro", [], []),
    "anthropic-cache": ("anthropic", "claude-opus-4-5", [], []),
})
# profile -> the API base's path and query, where not the provider's usual one
BASE_PATHS = {"azure": "/openai/deployments/gpt-4o-prod?api-version=2024-10-21"}


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for raw in f:
                raw = raw.strip()
                if raw:
                    try:
                        out.append(json.loads(raw))
                    except ValueError:
                        pass
    return out


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def start_emu(profile, args, workdir, gold, roots, name=None):
    log = os.path.join(workdir, "emu.%s.jsonl" % (name or profile))
    port_file = os.path.join(workdir, "emu.%s.port" % (name or profile))
    for p in (log, port_file):
        if os.path.exists(p):
            os.remove(p)
    _, _, extra, _ = RUNS[profile]
    cmd = [sys.executable, EMU, "--profile", profile, "--seed", str(args.seed), "--log", log,
           "--port-file", port_file, "--max-seconds", str(args.max_seconds),
           "--token-delay-ms", str(args.token_delay_ms)] + extra
    if profile == "guided":
        cmd += ["--gold", gold] + sum((["--gold-root", r] for r in roots), [])
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    t0 = time.monotonic()
    while not os.path.exists(port_file):
        if proc.poll() is not None or time.monotonic() - t0 > 20:
            proc.kill()
            sys.exit("model_emu_run.py: the emulator did not start: %s" % " ".join(cmd))
        time.sleep(0.05)
    with open(port_file) as f:
        port = int(f.read())
    return proc, port, log


def config_for(profile, port, workdir, lines_extra=(), name=None):
    provider, model, _, lines = RUNS[profile]
    lines = list(lines) + list(lines_extra)
    base = "http://127.0.0.1:%d%s" % (port, BASE_PATHS.get(profile, "" if provider == "anthropic" else "/v1"))
    path = os.path.join(workdir, "config.%s" % (name or profile))
    with open(path, "w") as f:
        f.write("provider = %s\napi_base = %s\napi_key = sk-emu-%s\nmodel = %s\n" % (provider, base, profile, model))
        settings = {"retries": "3", "backoff_ms": "20", "backoff_max_ms": "200"}
        for ln in lines:
            k, v = [x.strip() for x in ln.split("=", 1)]
            settings[k] = v
        for k, v in settings.items():
            f.write("%s = %s\n" % (k, v))
    return path


def transcript_nodes(tdir):
    """Over the transcripts: nodes marked with a fallback decision, per role;
    nodes with notes (coercions, fallbacks); nodes left with a failed model
    call and no fallback mark. A plan the fallback made for a node whose
    model kept repeating an action already in the tree (the search takes no
    repeated child) is counted apart, as repeat_fills."""
    fb, noted, bare, repeats = {}, 0, 0, 0
    if os.path.isdir(tdir):
        for f in sorted(os.listdir(tdir)):
            if not f.endswith(".json"):
                continue
            try:
                with open(os.path.join(tdir, f), encoding="utf-8") as fh:
                    t = json.load(fh)
            except (OSError, ValueError):
                continue
            for n in t.get("nodes") or []:
                if "the model repeated an action already in the tree" in (n.get("notes") or ""):
                    repeats += 1
                    continue
                for r in n.get("fallback") or []:
                    fb[r] = fb.get(r, 0) + 1
                noted += 1 if n.get("notes") else 0
                if "model call failed" in (n.get("error") or "") and not n.get("fallback"):
                    bare += 1
    return {"fallback_nodes": fb, "noted_nodes": noted, "bare_failed_calls": bare, "repeat_fills": repeats}


def summarize(profile, qs, lines, log, gold_viewed, nodes, statuses=(), reasons=()):
    by_id = {}
    for j in lines:
        by_id[str(j.get("id"))] = j
    failed = cited = model = 0
    client_in = 0
    errors = []
    for q in qs:
        j = by_id.get(str(q["id"]))
        if j is None or j.get("error"):
            failed += 1
            errors.append("%s: %s" % (q["id"], "no line" if j is None else j.get("error")))
            continue
        if j.get("verified_citations", len(j.get("citations") or [])) > 0:
            cited += 1
        if SIGNATURE in (j.get("answer") or ""):
            model += 1
        client_in += (j.get("tokens") or {}).get("input", 0) or 0
    tin = tcached = tout = 0
    kinds = {}
    for e in log:
        u = e.get("usage") or {}
        if e.get("role") == "embeddings":
            continue
        tout += u.get("completion_tokens", u.get("output_tokens", 0)) or 0
        if "prompt_tokens" in u:
            tin += u.get("prompt_tokens", 0)
            tcached += (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        elif "input_tokens_details" in u:   # the Responses API
            tin += u.get("input_tokens", 0)
            tcached += (u.get("input_tokens_details") or {}).get("cached_tokens", 0)
        elif "input_tokens" in u:
            tin += u["input_tokens"] + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
            tcached += u.get("cache_read_input_tokens", 0)
        if e.get("status") != 200 or e.get("fault"):
            k = "%s %s" % (e.get("status"), e.get("fault") or "")
            kinds[k.strip()] = kinds.get(k.strip(), 0) + 1
    # questions whose last answer-role request met a transient fault (429,
    # 5xx, a hang): their answer is a fallback's by necessity, not a fault of
    # the model path (a 400 is the client's to avoid, and is not counted)
    last_answer = {}
    for e in log:
        if e.get("role") == "answer":
            last_answer[e.get("question", "")] = e.get("status")
    transient = (0, 429, 500, 502, 503, 529)   # 0: a hang
    # (a question whose answer the model wrote, and whose re-ask then met a
    # fault, lost nothing)
    written = set(str(j.get("id")) for j in lines if SIGNATURE in (j.get("answer") or ""))
    answer_lost = sum(1 for q in qs if last_answer.get(q["question"][:200], 200) in transient
                      and str(q["id"]) not in written)
    n = len(qs) or 1
    out = dict(nodes)
    emu_errors = sum(1 for e in log if str(e.get("fault") or "").startswith("emulator error"))
    out.update({"profile": profile, "answer_call_failed": answer_lost, "emulator_errors": emu_errors, "questions": len(qs), "failed": failed, "cited": cited, "model": model,
           "in_per_q": round(tin / n), "cached_per_q": round(tcached / n), "client_in_per_q": round(client_in / n),
           "out_per_q": round(tout / n), "exit_statuses": sorted(set(statuses)), "reasons": list(reasons)[:2],
           "answered_by_model": sum(1 for j in lines if j.get("answered_by") == "model"),
           "uncited": sum(1 for j in lines if j.get("uncited")),
           "requests": len(log), "non200": kinds, "errors": errors[:5],
           "cut": sum(1 for e in log if e.get("cut"))})
    if profile == "guided":
        viewed = survived = 0
        for q in qs:
            files = gold_viewed.get(str(q["id"]))
            j = by_id.get(str(q["id"]))
            if not files or j is None:
                continue
            viewed += 1
            if any(c.get("path") in files for c in j.get("citations") or []):
                survived += 1
        out["gold_viewed"] = viewed
        out["gold_cited"] = survived
    return out


def gold_views(log, qs):
    """Per question id, the gold files the guided model planned ViewCode on
    (its decisions in the log name them)."""
    by_text = {q["question"][:200]: str(q["id"]) for q in qs}
    out = {}
    for e in log:
        d = e.get("decision") or ""
        if e.get("role") == "planning" and d.startswith("guided ViewCode ") and e.get("status") == 200:
            qid = by_text.get(e.get("question", ""))
            if qid:
                out.setdefault(qid, set()).add(d[len("guided ViewCode "):])
    return out


def run_profile(ctx, prof, lines_extra, tag):
    """drqa-tui --batch over every repository with the emulator in profile
    prof (config lines_extra added; tag names the run's files): the summary
    (with the answers lines and the emulator log under "_lines", "_log") and
    2 when drqa-tui crashed, else 0."""
    args, workdir, by_repo = ctx["args"], ctx["workdir"], ctx["by_repo"]
    name_ = prof + ("." + tag if tag else "")
    proc, port, log = start_emu(prof, args, workdir, ctx["gold"], [ctx["trees"][r] for r in sorted(ctx["trees"])],
                                name_)
    cfg = config_for(prof, port, workdir, lines_extra, name_)
    lines = []
    statuses, reasons = [], []
    status = 0
    t0 = time.monotonic()
    try:
        for name in sorted(by_repo):
            out = os.path.join(workdir, "%s.%s.answers.jsonl" % (name_, name))
            if os.path.exists(out):
                os.remove(out)
            cmd = [args.drqa, "--quiet", "--no-progress", "--config", cfg, "--policy", "llm",
                   "--index", ctx["indexes"][name], "--batch", ctx["qfiles"][name], "--out", out,
                   "--jobs", str(args.jobs), "--iterations", str(args.iterations),
                   "--transcript-dir", os.path.join(workdir, "transcripts.%s" % name_), ctx["trees"][name]]
            with open(os.path.join(workdir, "%s.%s.stderr" % (name_, name)), "w") as err:
                rc = subprocess.call(cmd, env=ctx["env"], stderr=err)
            statuses.append(rc)
            with open(err.name, encoding="utf-8", errors="replace") as f:
                reasons += [ln.strip() for ln in f if "no model call succeeded" in ln]
            # 3: no model call succeeded; 4: an answer cites nothing verified
            if rc not in (0, 1, 3, 4):
                print("model_emu_run.py: %s: drqa-tui exited with status %d (see %s)"
                      % (prof, rc, err.name), file=sys.stderr)
                status = 2
            lines += read_jsonl(out)
    finally:
        proc.terminate()
        proc.wait()
    elog = read_jsonl(log)
    s = summarize(prof, ctx["qs"], lines, elog, gold_views(elog, ctx["qs"]),
                  transcript_nodes(os.path.join(workdir, "transcripts.%s" % name_)), statuses, reasons)
    s["wall_s"] = round(time.monotonic() - t0, 1)
    s["_lines"], s["_log"] = lines, elog
    return s, status


def ledger_of(j):
    """The ledger figures of one --batch line that a transport must not change."""
    t = (j.get("usage") or {}).get("total") or {}
    return tuple(t.get(k, 0) for k in ("calls", "failures", "input_tokens", "cached_input_tokens",
                                       "cache_write_tokens", "output_tokens", "reasoning_tokens", "estimated_calls"))


def compare_runs(prof, qs, whole, streamed):
    """Per question, whether the streamed run gave the whole-reply run's
    answer (text and citations) and ledger."""
    a = {str(j.get("id")): j for j in whole["_lines"]}
    b = {str(j.get("id")): j for j in streamed["_lines"]}
    same_answer = same_ledger = 0
    diffs = []
    for q in qs:
        x, y = a.get(str(q["id"])), b.get(str(q["id"]))
        if x is None or y is None:
            diffs.append("%s: no line in the %s run" % (q["id"], "whole" if x is None else "streamed"))
            continue
        if (x.get("answer"), x.get("citations"), x.get("error")) == (y.get("answer"), y.get("citations"),
                                                                     y.get("error")):
            same_answer += 1
        else:
            diffs.append("%s: the answers differ" % q["id"])
        if ledger_of(x) == ledger_of(y):
            same_ledger += 1
        else:
            diffs.append("%s: ledger %s whole, %s streamed" % (q["id"], ledger_of(x), ledger_of(y)))

    def total(run, k):
        return sum(((j.get("usage") or {}).get("total") or {}).get(k, 0) for j in run["_lines"])
    return {"profile": prof, "questions": len(qs), "same_answer": same_answer, "same_ledger": same_ledger,
            "streamed_requests": sum(1 for e in streamed["_log"] if (e.get("stream") or {}).get("asked")),
            "whole_requests_streamed": sum(1 for e in whole["_log"] if (e.get("stream") or {}).get("asked")),
            "requests": [len(whole["_log"]), len(streamed["_log"])],
            "input": [total(whole, "input_tokens"), total(streamed, "input_tokens")],
            "output": [total(whole, "output_tokens"), total(streamed, "output_tokens")],
            "estimated_calls": [total(whole, "estimated_calls"), total(streamed, "estimated_calls")],
            "failed": [whole["failed"], streamed["failed"]], "wall_s": [whole["wall_s"], streamed["wall_s"]],
            "diffs": diffs[:5]}


def print_comparison(results, as_json, workdir):
    if as_json:
        print(json.dumps({"workdir": workdir, "profiles": results}))
        return
    print("%-15s %4s %7s %7s %9s %19s %15s %9s %13s" % ("profile", "qs", "answers", "ledger", "streamed",
                                                       "input (whole/str.)", "output", "estimated", "wall s"))
    for r in results:
        print("%-15s %4d %7d %7d %9d %9d/%-9d %7d/%-7d %4d/%-4d %6.1f/%-6.1f" % (
            r["profile"], r["questions"], r["same_answer"], r["same_ledger"], r["streamed_requests"], r["input"][0],
            r["input"][1], r["output"][0], r["output"][1], r["estimated_calls"][0], r["estimated_calls"][1],
            r["wall_s"][0], r["wall_s"][1]))
        for d in r["diffs"][:3]:
            print("%-15s   %s" % ("", d[:200]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drqa", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--repo", action="append", default=[], help="NAME=DIR (copied into the work directory)")
    ap.add_argument("--profiles", default=",".join(RUNS))
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--every", type=int, default=1, help="only every K-th question (the first, the K+1-th, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=1200, help="emulator lifetime per profile")
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--compare-stream", action="store_true",
                    help="run each profile twice, whole replies (stream = false) and streamed, and compare")
    ap.add_argument("--token-delay-ms", type=float, default=0, help="the emulator's wait before each streamed piece")
    args = ap.parse_args()
    profiles = [p for p in args.profiles.split(",") if p]
    for p in profiles:
        if p not in RUNS:
            print("model_emu_run.py: unknown profile '%s' (known: %s)" % (p, ", ".join(RUNS)), file=sys.stderr)
            return 2
    repos = dict(r.split("=", 1) for r in args.repo)
    qs = read_jsonl(args.questions)
    if args.ids:
        want = args.ids.split(",")
        qs = [q for q in qs if str(q.get("id")) in want]
    if args.every > 1:
        qs = qs[::args.every]
    if args.limit:
        qs = qs[:args.limit]
    for q in qs:
        if q.get("repo") not in repos:
            print("model_emu_run.py: question %s is about repo '%s'; give --repo %s=DIR"
                  % (q.get("id"), q.get("repo"), q.get("repo")), file=sys.stderr)
            return 2
    workdir = args.workdir or tempfile.mkdtemp(prefix="drqa-emu-")
    os.makedirs(workdir, exist_ok=True)
    env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               HOME=os.path.join(workdir, "home"), XDG_CONFIG_HOME=os.path.join(workdir, "xdg-config"),
               XDG_CACHE_HOME=os.path.join(workdir, "xdg-cache"))
    for k in ("DRQA_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST"):
        env.pop(k, None)
    trees, indexes, qfiles = {}, {}, {}
    by_repo = {}
    for q in qs:
        by_repo.setdefault(q["repo"], []).append(q)
    for name in sorted(by_repo):
        src = os.path.normpath(repos[name])
        dst = os.path.join(workdir, "trees", os.path.basename(src))
        if not os.path.isdir(dst):
            shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        trees[name] = dst
        indexes[name] = os.path.join(workdir, "%s.sqlite" % name)
        subprocess.check_call([args.drqa, "--quiet", "--no-progress", "--policy", "offline", "--index", indexes[name],
                               "--index-only", dst], stdout=subprocess.DEVNULL, env=env)
        qfiles[name] = os.path.join(workdir, "%s.questions.jsonl" % name)
        write_jsonl(qfiles[name], [{"id": q["id"], "question": q["question"]} for q in by_repo[name]])
    gold = os.path.join(workdir, "gold.jsonl")
    write_jsonl(gold, [{"id": q["id"], "question": q["question"], "gold_files": q.get("gold_files") or []}
                       for q in qs])
    results = []
    status = 0
    ctx = {"args": args, "workdir": workdir, "gold": gold, "trees": trees, "indexes": indexes, "qfiles": qfiles,
           "by_repo": by_repo, "env": env, "qs": qs}
    for prof in profiles:
        if args.compare_stream:
            whole, _ = run_profile(ctx, prof, ["stream = false"], "whole")
            streamed, rc = run_profile(ctx, prof, [], "stream")
            results.append(compare_runs(prof, qs, whole, streamed))
        else:
            s, rc = run_profile(ctx, prof, [], "")
            s.pop("_lines")
            s.pop("_log")
            results.append(s)
        status = max(status, rc)
    if args.compare_stream:
        print_comparison(results, args.json, workdir)
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        return status
    if args.json:
        print(json.dumps({"workdir": workdir, "iterations": args.iterations, "profiles": results}))
    else:
        print("%-13s %4s %6s %5s %5s %4s %7s %8s %7s %8s %5s %6s  %s" % (
            "profile", "qs", "failed", "cited", "model", "lost", "in/q", "cached/q", "out/q", "client/q", "exit",
            "wall", "error replies; fallback nodes; bare failed calls"))
        for s in results:
            print("%-13s %4d %6d %5d %5d %4d %7d %8d %7d %8d %5s %6.1f  %s; %s; %d" % (
                s["profile"], s["questions"], s["failed"], s["cited"], s["model"], s["answer_call_failed"],
                s["in_per_q"], s["cached_per_q"], s["out_per_q"], s["client_in_per_q"],
                ",".join(str(x) for x in s["exit_statuses"]), s["wall_s"],
                ", ".join("%s x%d" % kv for kv in sorted(s["non200"].items())) or "-",
                ", ".join("%s x%d" % kv for kv in sorted(s["fallback_nodes"].items())) or "-",
                s["bare_failed_calls"]))
            if s["cut"]:
                print("%-10s prompts the server cut to their tail: %d of %d requests" % ("", s["cut"], s["requests"]))
            if "gold_viewed" in s:
                v = s["gold_viewed"]
                print("%-10s evidence survival: %d of %d answers cite the gold file the model viewed (%.1f%%)"
                      % ("", s["gold_cited"], v, 100.0 * s["gold_cited"] / v if v else 0.0))
            for e in s["errors"][:1 if s["profile"] in NEVER_ANSWERS else 5]:
                print("%-13s   failed: %s" % ("", e[:200]))
    if not args.keep and not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
