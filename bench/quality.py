#!/usr/bin/env python3
"""quality: answer quality of drqa-tui's headless modes without a judge model.

Runs `drqa-tui --batch` over a question set for each mode and prints, per mode:
  file-hit@5   share of questions where one of the first five citations names a
               gold file (compared on the last two path components, the path
               taken below the repository directory's own name);
  id-recall    share of the gold identifiers found in the answer plus the text
               of the cited evidence (mean over questions);
next to an anchor measured in the same run: flat BM25 over the index's function
chunks, top 5, scored the same way (file-hit@5 on the five chunks' paths,
identifier recall on their text).

The question file is JSONL with id, repo, question, gold_files and
gold_identifiers; every other field is ignored. Standard library only.

  quality.py --drqa BIN --questions FILE --repo NAME=DIR [--repo ...]
             [--modes mcts,rag-function,rag-window,no-mcts] [--jobs N]
             [--workdir DIR] [--limit N] [--extra ARG ...]
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


def last2(path):
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    return "/".join(parts[-2:])


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


def ident_found(ident, text):
    name = ident.strip("`").rstrip("()")
    name = name.split(".")[-1] if "." in name else name
    if not name:
        return False
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", text) is not None


class Anchor:
    """Flat BM25 (k1 1.2, b 0.75) over the function chunks of one index."""

    def __init__(self, index_path):
        db = sqlite3.connect("file:%s?mode=ro" % index_path, uri=True)
        rows = db.execute("SELECT f.path, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
                          "WHERE c.kind = 'function' ORDER BY c.id").fetchall()
        db.close()
        self.docs = []
        self.df = {}
        total = 0
        for path, text in rows:
            tf = {}
            ts = terms(text)
            for t in ts:
                tf[t] = tf.get(t, 0) + 1
            for t in tf:
                self.df[t] = self.df.get(t, 0) + 1
            self.docs.append((path, text, tf, len(ts)))
            total += len(ts)
        self.avg = total / len(self.docs) if self.docs else 1.0

    def top(self, question, k=5):
        q = list(dict.fromkeys(terms(question)))
        n = len(self.docs)
        scored = []
        for i, (path, text, tf, dl) in enumerate(self.docs):
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


def cited_text(line):
    """The answer plus the cited lines of the evidence the line carries."""
    parts = [line.get("answer") or ""]
    ev = line.get("evidence") or []
    for c in line.get("citations") or []:
        for e in ev:
            if e["path"] != c["path"] or e["end_line"] < c["start_line"] or c["end_line"] < e["start_line"]:
                continue
            text = e.get("text") or ""
            lines = text.split("\n")
            if len(lines) == e["end_line"] - e["start_line"] + 1:
                a = max(c["start_line"], e["start_line"]) - e["start_line"]
                b = min(c["end_line"], e["end_line"]) - e["start_line"] + 1
                parts.append("\n".join(lines[a:b]))
            else:
                parts.append(text)
    return "\n".join(parts)


def score_line(q, line, base):
    gold = {last2(g) for g in q.get("gold_files") or []}
    cites = [last2(base + "/" + c["path"]) for c in (line.get("citations") or [])[:5]]
    hit = 1.0 if gold and any(c in gold for c in cites) else 0.0
    ids = q.get("gold_identifiers") or []
    text = cited_text(line)
    rec = sum(1 for i in ids if ident_found(i, text)) / len(ids) if ids else None
    return hit, rec


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
    lines = {}
    with open(out) as f:
        for raw in f:
            raw = raw.strip()
            if raw:
                j = json.loads(raw)
                lines[str(j["id"])] = j
    return lines, wall


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

    results = {m: [] for m in modes + ["anchor"]}
    walls = {m: 0.0 for m in modes}
    errors = {m: 0 for m in modes}
    for repo, qs in sorted(by_repo.items()):
        # paths are relative to the repository directory, whose own name is the
        # first component upstream ('app.py' in flask/ is 'flask/app.py')
        base = os.path.basename(os.path.normpath(args.repos[repo]))
        index = os.path.join(workdir, "%s.sqlite" % repo)
        subprocess.check_call([args.drqa, "--quiet", "--no-progress", "--index", index, "--index-only",
                               args.repos[repo]], stdout=subprocess.DEVNULL)
        qfile = os.path.join(workdir, "%s.questions.jsonl" % repo)
        with open(qfile, "w") as f:
            for q in qs:
                f.write(json.dumps({"id": q["id"], "question": q["question"]}) + "\n")
        for m in modes:
            lines, wall = run_mode(args, m, repo, qfile, index, workdir)
            walls[m] += wall
            for q in qs:
                line = lines.get(str(q["id"]))
                if line is None or line.get("error"):
                    errors[m] += 1
                    line = line or {}
                results[m].append((q["id"],) + score_line(q, line, base))
        anchor = Anchor(index)
        for q in qs:
            top = anchor.top(q["question"], 5)
            gold = {last2(g) for g in q.get("gold_files") or []}
            hit = 1.0 if any(last2(base + "/" + p) in gold for p, _, _, _ in top) else 0.0
            ids = q.get("gold_identifiers") or []
            text = "\n".join(t for _, t, _, _ in top)
            rec = sum(1 for i in ids if ident_found(i, text)) / len(ids) if ids else None
            results["anchor"].append((q["id"], hit, rec))

    def pct(v):
        return "%.1f%%" % (100 * v)

    print("%-14s %9s %12s %10s %7s %9s" % ("mode", "questions", "file-hit@5", "id-recall", "errors", "wall s"))
    a_hit = a_rec = None
    for m in ["anchor"] + modes:
        rows = results[m]
        hit = sum(r[1] for r in rows) / len(rows) if rows else 0
        recs = [r[2] for r in rows if r[2] is not None]
        rec = sum(recs) / len(recs) if recs else 0
        if m == "anchor":
            a_hit, a_rec = hit, rec
        print("%-14s %9d %12s %10s %7s %9s" % (m, len(rows), pct(hit), pct(rec),
                                               "-" if m == "anchor" else errors[m],
                                               "-" if m == "anchor" else "%.1f" % walls[m]))
    print()
    print("ratios against the anchor (flat BM25 over function chunks, top 5) measured above:")
    for m in modes:
        rows = results[m]
        hit = sum(r[1] for r in rows) / len(rows) if rows else 0
        recs = [r[2] for r in rows if r[2] is not None]
        rec = sum(recs) / len(recs) if recs else 0
        print("  %-14s file-hit@5 x%.2f   id-recall x%.2f" % (m, hit / a_hit if a_hit else float("nan"),
                                                              rec / a_rec if a_rec else float("nan")))
    if os.environ.get("QUALITY_DETAIL"):
        for m in modes:
            print("\n%s misses:" % m, " ".join(str(r[0]) for r in results[m] if r[1] == 0))


if __name__ == "__main__":
    main()
