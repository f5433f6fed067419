#!/usr/bin/env python3
"""quality: answer quality of drqa-tui's headless modes without a judge model.

Runs `drqa-tui --batch` over a question set for each mode, then scores every
mode with `drqa-tui --report ANSWERS --reference QUESTIONS --json`, the one
implementation of the grounding metrics (src/metrics.h):
  hit@5 cites  the same over the first five citations, repeats counted
               (file_hit@5_citations of the report);
  file-hit@5   share of questions where one of the first five distinct cited
               files matches a gold file: the last min(2, a, b) path
               components compared, the cited path counted from the
               repository directory's own name ('app.py' cited in flask/ is
               'flask/app.py'), so a one-component gold path is compared with
               the base name;
  id-recall    share of the gold identifiers found in the answer plus the text
               of its cited evidence (mean over questions).
Two more rows are scored by the same report:
  ceiling      an answer citing, for each gold file, the existing file of the
               repository that shares the most trailing path components with
               it: how many questions can score at all (some gold files do not
               exist in the installed trees);
  anchor       flat BM25 over the index's function chunks, top 5 (the five
               chunks cited, their text as evidence), measured in the same run.

The question file is JSONL with id, repo, question, gold_files,
gold_identifiers and reference_answer (the dev benchmark's format); other
fields are ignored. Standard library only.

  quality.py --drqa BIN --questions FILE --repo NAME=DIR [--repo ...]
             [--modes mcts,rag-function,rag-window,no-mcts] [--jobs N]
             [--workdir DIR] [--limit N] [--extra ARG ...] [--detail]
"""
import argparse
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import time

MODES = {
    "mcts": ["--mode", "mcts"],
    "rag-function": ["--mode", "rag-function"],
    "rag-window": ["--mode", "rag-window"],
    "direct": ["--mode", "direct"],
    "no-mcts": ["--mode", "mcts", "--no-mcts"],
    "no-perception": ["--mode", "mcts", "--no-perception"],
    "no-evaluation": ["--mode", "mcts", "--no-evaluation"],
    "no-semantic": ["--mode", "mcts", "--no-semantic"],
}

STOP = set("""a about after all also an and any are as at be been before being between both but by can
could did do does doing during each for from had has have having how if in into is it its itself just
may might more most must no not of on once only or other our out over own same should so some such than
that the their them then there these they this those through to too under until up upon us use used
using very via was we were what when where whether which while who whom why will with within without
would you your""".split())


def split_ident(word):
    out = []
    for part in re.split(r"_+", word):
        out += re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", part)
    return out


def terms(text):
    """Code-aware terms: identifiers split at '_' and case changes, kept whole too."""
    out = []
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        parts = [p.lower() for p in split_ident(w)]
        for p in parts:
            if len(p) > 1 and p not in STOP:
                out.append(p)
        if len(parts) > 1:
            out.append(w.lower().replace("_", ""))
    return out


class Anchor:
    """Flat BM25 (k1 1.2, b 0.75) over the function chunks of one index."""

    def __init__(self, index_path):
        db = sqlite3.connect("file:%s?mode=ro" % index_path, uri=True)
        rows = db.execute("SELECT f.path, c.start_line, c.end_line, c.text FROM chunks c "
                          "JOIN files f ON f.id = c.file_id WHERE c.kind = 'function' ORDER BY c.id").fetchall()
        db.close()
        self.docs = []
        self.df = {}
        total = 0
        for path, a, b, text in rows:
            tf = {}
            ts = terms(text)
            for t in ts:
                tf[t] = tf.get(t, 0) + 1
            for t in tf:
                self.df[t] = self.df.get(t, 0) + 1
            self.docs.append((path, a, b, text, tf, len(ts)))
            total += len(ts)
        self.avg = total / len(self.docs) if self.docs else 1.0

    def top(self, question, k=5):
        q = list(dict.fromkeys(terms(question)))
        n = len(self.docs)
        scored = []
        for i, (_, _, _, _, tf, dl) in enumerate(self.docs):
            s = 0.0
            for t in q:
                f = tf.get(t)
                if not f:
                    continue
                df = self.df[t]
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * dl / self.avg))
            if s > 0:
                scored.append((-s, i))
        scored.sort()
        return [self.docs[i] for _, i in scored[:k]]


def repo_files(index_path):
    db = sqlite3.connect("file:%s?mode=ro" % index_path, uri=True)
    paths = [r[0] for r in db.execute("SELECT path FROM files")]
    db.close()
    return paths


def common_tail(a, b):
    x, y = [p for p in a.split("/") if p], [p for p in b.split("/") if p]
    n = 0
    while n < min(len(x), len(y)) and x[-1 - n] == y[-1 - n]:
        n += 1
    return n


def ceiling_citations(q, base, paths):
    """For each gold file, the repository file sharing the most trailing
    components with it (base name at least); the report decides whether it
    matches."""
    out = []
    for g in q.get("gold_files") or []:
        best, score = None, 0
        for p in paths:
            s = common_tail(base + "/" + p, g)
            if s > score:
                best, score = p, s
        if best and best not in out:
            out.append(best)
    return out[:5]


def answer_line(q, mode, base, cites):
    """An answers line (the --batch format) for the rows scored here."""
    return {"id": q["id"], "question": q["question"], "answer": "",
            "citations": [{"path": p, "start_line": a, "end_line": b} for p, a, b, _ in cites],
            "evidence": [{"path": p, "start_line": a, "end_line": b, "text": t} for p, a, b, t in cites],
            "mode": mode, "policy": "none", "repo_name": base, "error": None}


def run_mode(args, mode, repo, qfile, index, outdir):
    out = os.path.join(outdir, "%s.%s.jsonl" % (repo, mode))
    if os.path.exists(out) and not args.resume:
        os.remove(out)
    cmd = [args.drqa, "--quiet", "--no-progress", "--policy", "offline", "--index", index,
           "--batch", qfile, "--out", out, "--jobs", str(args.jobs)] + MODES[mode] + args.extra + [args.repos[repo]]
    t0 = time.monotonic()
    rc = subprocess.call(cmd)
    wall = time.monotonic() - t0
    if rc not in (0, 1):
        sys.exit("quality.py: %s failed with status %d" % (" ".join(cmd), rc))
    lines = []
    errors = 0
    with open(out) as f:
        for raw in f:
            if raw.strip():
                j = json.loads(raw)
                errors += 1 if j.get("error") else 0
                lines.append(j)
    return lines, wall, errors


def report(args, path):
    """file-hit@5 and identifier recall of one answers file, by drqa-tui --report."""
    out = subprocess.check_output([args.drqa, "--report", path, "--reference", args.questions, "--json"])
    systems = json.loads(out)["systems"]
    if len(systems) != 1:
        sys.exit("quality.py: %s holds %d systems, expected one" % (path, len(systems)))
    s = systems[0]
    return (s["file_hit@5"]["mean"], s["identifier_recall"]["mean"], s["file_hit@5"]["n"],
            s["file_hit@5_citations"]["mean"])


def write_lines(path, lines):
    with open(path, "w") as f:
        for j in lines:
            f.write(json.dumps(j) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drqa", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--repo", action="append", default=[], help="NAME=DIR")
    ap.add_argument("--modes", default="mcts,rag-function,rag-window,no-mcts")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--resume", action="store_true", help="keep earlier answers in the work directory")
    ap.add_argument("--extra", action="append", default=[], help="one more drqa-tui argument (repeatable)")
    ap.add_argument("--detail", action="store_true", help="list, per mode, the questions with no file hit")
    args = ap.parse_args()
    args.repos = dict(r.split("=", 1) for r in args.repo)
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            sys.exit("quality.py: unknown mode '%s' (known: %s)" % (m, ", ".join(MODES)))
    workdir = args.workdir or os.path.join(os.environ.get("TMPDIR", "/tmp"), "drqa-quality-%d" % os.getuid())
    os.makedirs(workdir, exist_ok=True)

    questions = []
    with open(args.questions) as f:
        for raw in f:
            if raw.strip():
                questions.append(json.loads(raw))
    if args.limit:
        questions = questions[:args.limit]
    by_repo = {}
    for q in questions:
        if q.get("repo") not in args.repos:
            sys.exit("quality.py: question %s is about repo '%s'; give --repo %s=DIR" % (q.get("id"), q.get("repo"),
                                                                                          q.get("repo")))
        by_repo.setdefault(q["repo"], []).append(q)

    rows = ["ceiling", "anchor"] + modes
    lines = {m: [] for m in rows}
    walls = {m: 0.0 for m in modes}
    errors = {m: 0 for m in modes}
    for repo, qs in sorted(by_repo.items()):
        base = os.path.basename(os.path.normpath(args.repos[repo]))
        index = os.path.join(workdir, "%s.sqlite" % repo)
        subprocess.check_call([args.drqa, "--quiet", "--no-progress", "--index", index, "--index-only",
                               args.repos[repo]], stdout=subprocess.DEVNULL)
        qfile = os.path.join(workdir, "%s.questions.jsonl" % repo)
        write_lines(qfile, [{"id": q["id"], "question": q["question"]} for q in qs])
        for m in modes:
            got, wall, nerr = run_mode(args, m, repo, qfile, index, workdir)
            walls[m] += wall
            errors[m] += nerr
            lines[m] += got
        paths = repo_files(index)
        anchor = Anchor(index)
        for q in qs:
            lines["ceiling"].append(answer_line(q, "ceiling", base,
                                                [(p, 1, 1, "") for p in ceiling_citations(q, base, paths)]))
            top = [(p, a, b, t) for p, a, b, t, _, _ in anchor.top(q["question"], 5)]
            lines["anchor"].append(answer_line(q, "anchor", base, top))

    scores = {}
    for m in rows:
        path = os.path.join(workdir, "all.%s.jsonl" % m)
        write_lines(path, lines[m])
        scores[m] = report(args, path)

    def pct(v):
        return "-" if v is None else "%.1f%%" % (100 * v)

    print("%-14s %9s %12s %12s %10s %7s %9s" % ("mode", "questions", "file-hit@5", "hit@5 cites", "id-recall",
                                                 "errors", "wall s"))
    for m in rows:
        hit, rec, n, hitc = scores[m]
        print("%-14s %9d %12s %12s %10s %7s %9s" % (m, n, pct(hit), "-" if m == "ceiling" else pct(hitc),
                                                    "-" if m == "ceiling" else pct(rec), errors.get(m, "-"),
                                                    "%.1f" % walls[m] if m in walls else "-"))
    a_hit, a_rec, _, _ = scores["anchor"]
    print()
    print("ratios against the anchor (flat BM25 over function chunks, top 5) measured above:")
    for m in modes:
        hit, rec, _, _ = scores[m]
        print("  %-14s file-hit@5 x%.2f   id-recall x%.2f" % (m, hit / a_hit if a_hit else float("nan"),
                                                              rec / a_rec if a_rec else float("nan")))
    if args.detail or os.environ.get("QUALITY_DETAIL"):
        # one report per line, so the per-question numbers come from the same code
        for m in rows:
            misses, partial = [], []
            for j in lines[m]:
                path = os.path.join(workdir, "one.jsonl")
                write_lines(path, [j])
                hit, rec, _ = report(args, path)
                if hit == 0:
                    misses.append(str(j["id"]))
                if rec is not None and rec < 1 and m != "ceiling":
                    partial.append("%s:%.0f%%" % (j["id"], 100 * rec))
            print("\n%s misses: %s" % (m, " ".join(misses) or "-"))
            if m != "ceiling":
                print("%s partial recall: %s" % (m, " ".join(partial) or "-"))


if __name__ == "__main__":
    main()
