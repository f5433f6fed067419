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
fields are ignored. Every set prints one table (overall, then one per
repository) with file-hit@1, file-hit@5 both ways, identifier recall and the
median wall seconds per question; the sets named by --pool (default dev and
dev2) are then scored together, as one pool of questions. Each repository's
table ends with its verdict (mcts not below the BM25 anchor in either count of
file-hit@5), each set's with how many answers number their spans or cite [n]
out of step with their citation list, and the pooled table with the goals
(mcts against the anchor and rag-window), each met or MISSED with its margin. Indexes are kept in
the work directory, one per repository, and shared between sets.
Standard library only.

  quality.py --drqa BIN (--set NAME:QUESTIONS:REPO=DIR[,REPO=DIR...] ... |
                         --questions FILE --repo NAME=DIR [--repo ...])
             [--pool dev,dev2] [--modes mcts,rag-function,rag-window,no-mcts]
             [--jobs N] [--workdir DIR] [--limit N] [--extra ARG ...] [--detail]
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

# the functions that read an index's file texts (tests/index_sql.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import index_sql  # noqa: E402

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
        db = index_sql.connect(index_path)
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


def run_mode(args, mode, repo, qfile, index, outdir, repo_dir):
    out = os.path.join(outdir, "%s.%s.jsonl" % (repo, mode))
    if os.path.exists(out) and not args.resume:
        os.remove(out)
    cmd = [args.drqa, "--quiet", "--no-progress", "--policy", "offline", "--index", index,
           "--batch", qfile, "--out", out, "--jobs", str(args.jobs)] + MODES[mode] + args.extra + [repo_dir]
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


def report(args, path, reference):
    """file-hit@1, file-hit@5 (distinct files and first five citations) and
    identifier recall of one answers file, by drqa-tui --report."""
    out = subprocess.check_output([args.drqa, "--report", path, "--reference", reference, "--json"])
    systems = json.loads(out)["systems"]
    if len(systems) > 1:
        sys.exit("quality.py: %s holds %d systems, expected one" % (path, len(systems)))
    if not systems:
        return {"n": 0, "hit1": None, "hit5": None, "hit5c": None, "recall": None}
    s = systems[0]
    return {"n": s["file_hit@5"]["n"], "hit1": s["file_hit@1"]["mean"], "hit5": s["file_hit@5"]["mean"],
            "hit5c": s["file_hit@5_citations"]["mean"], "recall": s["identifier_recall"]["mean"]}


def write_lines(path, lines):
    with open(path, "w") as f:
        for j in lines:
            f.write(json.dumps(j) + "\n")


def per_question(args, workdir, lines, reference, key="file_hit@5"):
    """{id: 1, 0, or None when the reference cannot score it}: key of every
    line scored on its own, in one --report call (each line is its own
    system there)."""
    path = os.path.join(workdir, "per-question.jsonl")
    marked = []
    for i, j in enumerate(lines):
        j = dict(j)
        j["mode"], j["policy"] = "q%d" % i, "detail"
        marked.append(j)
    write_lines(path, marked)
    out = subprocess.check_output([args.drqa, "--report", path, "--reference", reference, "--json"])
    got = {}
    for s in json.loads(out)["systems"]:
        i = int(s["system"].split("/")[0][1:])
        got[lines[i]["id"]] = None if not s[key]["n"] else 1 if (s[key]["mean"] or 0) > 0 else 0
    return got


def median(v):
    v = sorted(v)
    if not v:
        return None
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def parse_set(text):
    """NAME:QUESTIONS:REPO=DIR[,REPO=DIR...]"""
    name, rest = text.split(":", 1)
    qfile, repos = rest.rsplit(":", 1)
    return name, qfile, dict(r.split("=", 1) for r in repos.split(",") if r)


def run_set(args, name, qpath, repos, modes, rows):
    """Runs every mode over one question set; returns its answers lines and
    seconds per question, by repository and row."""
    workdir = os.path.join(args.workdir, name)
    os.makedirs(workdir, exist_ok=True)
    questions = []
    with open(qpath) as f:
        for raw in f:
            if raw.strip():
                questions.append(json.loads(raw))
    if args.limit:
        questions = questions[:args.limit]
    by_repo = {}
    for q in questions:
        if q.get("repo") not in repos:
            sys.exit("quality.py: question %s of %s is about repo '%s'; give --repo %s=DIR" %
                     (q.get("id"), qpath, q.get("repo"), q.get("repo")))
        by_repo.setdefault(q["repo"], []).append(q)
    lines = {r: {m: [] for m in rows} for r in by_repo}
    secs = {r: {m: [] for m in rows} for r in by_repo}
    errors = {m: 0 for m in modes}
    for repo, qs in sorted(by_repo.items()):
        base = os.path.basename(os.path.normpath(repos[repo]))
        # indexes are shared between sets: one per repository
        index = os.path.join(args.workdir, "%s.sqlite" % repo)
        subprocess.check_call([args.drqa, "--quiet", "--no-progress", "--index", index, "--index-only",
                               repos[repo]], stdout=subprocess.DEVNULL)
        qfile = os.path.join(workdir, "%s.questions.jsonl" % repo)
        write_lines(qfile, [{"id": q["id"], "question": q["question"]} for q in qs])
        for m in modes:
            got, _, nerr = run_mode(args, m, repo, qfile, index, workdir, repos[repo])
            errors[m] += nerr
            lines[repo][m] += got
            secs[repo][m] += [j.get("wall_ms", 0) / 1000.0 for j in got]
        paths = repo_files(index)
        anchor = Anchor(index)
        for q in qs:
            lines[repo]["ceiling"].append(answer_line(q, "ceiling", base,
                                                      [(p, 1, 1, "") for p in ceiling_citations(q, base, paths)]))
            t0 = time.monotonic()
            top = [(p, a, b, t) for p, a, b, t, _, _ in anchor.top(q["question"], 5)]
            secs[repo]["anchor"].append(time.monotonic() - t0)
            lines[repo]["anchor"].append(answer_line(q, "anchor", base, top))
    return lines, secs, errors, by_repo


def score_rows(args, workdir, tag, lines, reference, rows):
    out = {}
    for m in rows:
        path = os.path.join(workdir, "%s.%s.jsonl" % (tag, m))
        write_lines(path, lines[m])
        out[m] = report(args, path, reference)
    return out


def pct(v):
    return "-" if v is None else "%.1f" % (100 * v)


def print_table(title, rows, scores, secs, errors=None):
    print(title)
    print("  %-13s %5s %7s %7s %9s %9s %9s %7s" % ("", "n", "hit@1", "hit@5", "hit@5 c.", "id-recall", "median s",
                                                  "errors"))
    for m in rows:
        sc = scores[m]
        med = median(secs.get(m, []))
        ceiling = m == "ceiling"
        print("  %-13s %5d %7s %7s %9s %9s %9s %7s" % (
            "BM25 anchor" if m == "anchor" else m, sc["n"], "-" if ceiling else pct(sc["hit1"]), pct(sc["hit5"]), "-" if ceiling else pct(sc["hit5c"]),
            "-" if ceiling else pct(sc["recall"]), "-" if med is None else "%.3f" % med,
            "-" if not errors or m not in errors else errors[m]))


def agreement(lines):
    """How many answers number their spans or cite [n] out of step with
    their citation list: the body's "n. `path:a-b`" items must be the
    citations in order, and every [n] of the head must name an entry of the
    list."""
    bad = 0
    for j in lines:
        ans = j.get("answer") or ""
        if not ans:
            continue
        cites = ["%s:%d-%d" % (c["path"], c["start_line"], c["end_line"]) for c in j.get("citations") or []]
        items = re.findall(r"^(\d+)\. `([^`]+)`", ans, re.M)
        head = ans.split("\n", 1)[0] if ans.startswith("**In short:**") else ""
        refs = [int(n) for n in re.findall(r"\[(\d+)\]", head)]   # the head's claims (code lines hold x[1])
        if items and ([s for _, s in items] != cites or [int(n) for n, _ in items] != list(range(1, len(items) + 1))):
            bad += 1
        elif any(n < 1 or n > len(cites) for n in refs):
            bad += 1
    return bad


def not_below(scores):
    """The per-repository verdict: mcts not below the BM25 anchor in either
    count of file-hit@5."""
    if "mcts" not in scores or "anchor" not in scores:
        return None
    m, a = scores["mcts"], scores["anchor"]
    below = [k for k, name in (("hit5", "hit@5"), ("hit5c", "hit@5 c.")) if m[k] is not None and a[k] is not None
             and m[k] < a[k] - 1e-9]
    return "not below BM25: yes" if not below else "not below BM25: NO (%s below)" % ", ".join(
        {"hit5": "hit@5", "hit5c": "hit@5 c."}[k] for k in below)


def print_verdict(scores, repo_verdicts):
    """The goals on the pooled questions, each with its measured margin."""
    if not all(k in scores for k in ("mcts", "anchor", "rag-window")):
        print("  goals: need the mcts, anchor and rag-window rows")
        return
    m, a, w = scores["mcts"], scores["anchor"], scores["rag-window"]
    goals = []
    for k, name in (("hit5", "hit@5"), ("hit5c", "hit@5 c.")):
        goals.append(("mcts %s >= BM25 + 8" % name, 100 * (m[k] - a[k]), 8))
        goals.append(("mcts %s >= rag-window + 5" % name, 100 * (m[k] - w[k]), 5))
    goals.append(("mcts id-recall >= BM25 + 12", 100 * (m["recall"] - a["recall"]), 12))
    print("  goals:")
    for name, d, want in goals:
        print("    %-34s %+6.1f  %s" % (name, d, "met" if d >= want - 1e-9 else "MISSED"))
    below = [r for r, v in repo_verdicts if v and not v.endswith("yes")]
    print("    %-34s %s" % ("no repository below BM25", "met" if not below else "MISSED (%s)" % ", ".join(below)))


def print_goals(scores, secs):
    """The differences issue-style goals are stated in, against rows of the same run."""
    if "mcts" not in scores or "anchor" not in scores:
        return
    m, a = scores["mcts"], scores["anchor"]

    def d(x, y):
        return "-" if x is None or y is None else "%+.1f" % (100 * (x - y))
    parts = ["mcts - anchor: hit@5 %s, hit@5 c. %s, id-recall %s" % (d(m["hit5"], a["hit5"]),
                                                                    d(m["hit5c"], a["hit5c"]),
                                                                    d(m["recall"], a["recall"]))]
    if "rag-window" in scores:
        w = scores["rag-window"]
        parts.append("mcts - rag-window: hit@5 %s, hit@5 c. %s" % (d(m["hit5"], w["hit5"]), d(m["hit5c"], w["hit5c"])))
    print("  " + "; ".join(parts))
    if "rag-function" in secs and secs["rag-function"] and secs.get("mcts"):
        print("  median time: mcts %.3f s, rag-function (the flat ranker in drqa-tui) %.3f s, x%.1f" %
              (median(secs["mcts"]), median(secs["rag-function"]),
               median(secs["mcts"]) / max(median(secs["rag-function"]), 1e-6)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drqa", required=True)
    ap.add_argument("--questions", help="one question set (with --repo)")
    ap.add_argument("--repo", action="append", default=[], help="NAME=DIR")
    ap.add_argument("--set", action="append", default=[], help="NAME:QUESTIONS:REPO=DIR[,REPO=DIR...] (repeatable)")
    ap.add_argument("--pool", default="dev,dev2", help="sets also scored together (comma-separated names)")
    ap.add_argument("--modes", default="mcts,rag-function,rag-window,no-mcts")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--resume", action="store_true", help="keep earlier answers in the work directory")
    ap.add_argument("--extra", action="append", default=[], help="one more drqa-tui argument (repeatable)")
    ap.add_argument("--detail", action="store_true", help="list, per mode, the questions with no file hit")
    args = ap.parse_args()
    sets = [parse_set(x) for x in args.set]
    if args.questions:
        sets.append((os.path.splitext(os.path.basename(args.questions))[0], args.questions,
                     dict(r.split("=", 1) for r in args.repo)))
    if not sets:
        sys.exit("quality.py: give --questions FILE --repo NAME=DIR ..., or --set NAME:FILE:REPO=DIR,...")
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            sys.exit("quality.py: unknown mode '%s' (known: %s)" % (m, ", ".join(MODES)))
    args.workdir = args.workdir or os.path.join(os.environ.get("TMPDIR", "/tmp"), "drqa-quality-%d" % os.getuid())
    os.makedirs(args.workdir, exist_ok=True)
    rows = ["ceiling", "anchor"] + modes
    pooled_lines = {m: [] for m in rows}
    pooled_secs = {m: [] for m in rows}
    pooled_refs = []
    pool = [x for x in args.pool.split(",") if x]
    pooled_verdicts = []
    print("anchor: flat BM25 over the index's function chunks, top 5, measured in this run (its time is this")
    print("script's Python, not drqa-tui's); hit@5: a gold file among the first 5 distinct cited files; hit@5 c.:")
    print("among the first 5 citations, repeats counted; median s: wall seconds per question (drqa-tui's wall_ms).")
    for name, qpath, repos in sets:
        lines, secs, errors, by_repo = run_set(args, name, qpath, repos, modes, rows)
        workdir = os.path.join(args.workdir, name)
        all_lines = {m: [j for r in sorted(lines) for j in lines[r][m]] for m in rows}
        all_secs = {m: [x for r in sorted(secs) for x in secs[r][m]] for m in rows}
        scores = score_rows(args, workdir, "all", all_lines, qpath, rows)
        nq = sum(len(v) for v in by_repo.values())
        print()
        print_table("== %s: %s, %d questions, ceiling %s%% (questions with a gold file in the trees)" %
                    (name, qpath, nq, pct(scores["ceiling"]["hit5"])), rows, scores, all_secs, errors)
        print_goals(scores, all_secs)
        print("  answers whose numbering disagrees with their citation list: %s" % ", ".join(
            "%s %d" % (m, agreement(all_lines[m])) for m in modes))
        for repo in sorted(lines):
            rs = score_rows(args, workdir, repo + ".all", lines[repo], qpath, rows)
            ceil = rs["ceiling"]["hit5"]
            print_table("  -- %s (%d questions, ceiling %s%%)" % (repo, len(by_repo[repo]), pct(ceil)), rows, rs,
                        secs[repo])
            v = not_below(rs)
            if v:
                print("     %s" % v)
            if name in pool:
                pooled_verdicts.append((repo, v))
        if args.detail or os.environ.get("QUALITY_DETAIL"):
            for m in rows:
                hits = per_question(args, workdir, all_lines[m], qpath)
                misses = [str(j["id"]) for j in all_lines[m] if hits.get(j["id"]) == 0]
                print("  %s misses: %s" % (m, " ".join(misses) or "-"))
        if name in pool:
            for m in rows:
                pooled_lines[m] += all_lines[m]
                pooled_secs[m] += all_secs[m]
            pooled_refs.append(qpath)
    if len(pooled_refs) > 1:
        ref = os.path.join(args.workdir, "pooled.reference.jsonl")
        with open(ref, "w") as out:
            for r in pooled_refs:
                with open(r) as f:
                    for raw in f:
                        if raw.strip():
                            out.write(raw.rstrip("\n") + "\n")
        scores = score_rows(args, args.workdir, "pooled", pooled_lines, ref, rows)
        print()
        print_table("== %s together (the questions pooled), ceiling %s%%" % (" + ".join(
            n for n, _, _ in sets if n in pool), pct(scores["ceiling"]["hit5"])), rows, scores, pooled_secs)
        print_goals(scores, pooled_secs)
        print_verdict(scores, pooled_verdicts)


if __name__ == "__main__":
    main()
