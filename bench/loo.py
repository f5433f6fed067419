#!/usr/bin/env python3
"""loo: answer quality judged leave-one-repository-out.

Every question of every set is grouped by the repository it asks about (a
repository asked about in several sets is one group). The offline answer's
constant (DRQA_FUSE_K, the rank fusion constant of src/fuse.h; "off" for the
tree's answer alone) is run at each value of --grid; for each repository, the
value is chosen on all the OTHER repositories' questions pooled (the best
file-hit@5 plus file-hit@5 over citations; ties: the earlier grid value) and
only then scored on the one left out. The left-out scores make the mcts row:
no repository's questions ever chose the constant they are scored with. The
value chosen on every repository at once is printed too: it is the one to
ship.

Per repository it prints the ceiling (a gold file exists in the tree), mcts
(leave-one-out, with the value chosen), rag-window and the BM25 anchor
(quality.py's: flat BM25 over function chunks, top 5): file-hit@5 over the
first five distinct files and over the first five citations, identifier
recall, and mcts minus rag-window. Then the pooled figure (every question
once), the worst repository beside it, and the goals, each MET or MISSED with
its margin: mcts >= rag-window + 3 and >= BM25 + 8 file-hit@5 (both counts),
identifier recall >= BM25 + 12, no repository below rag-window by more than 2
points (both counts). Scores are drqa-tui --report's (src/metrics.h).
With --detail it then lists every question mcts misses while a gold file
is in the tree, with what rag-window and the anchor found and whether mcts
cited the file after its fifth (ranking) or never (recall).
Standard library only.

  loo.py --drqa BIN --set NAME:QUESTIONS:REPO=DIR[,REPO=DIR...] ...
         [--grid off,10,60] [--jobs N] [--workdir DIR] [--detail]
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402  (the runner, the anchor and the report of bench/quality.py)

METRICS = ("hit5", "hit5c", "recall")


def score(args, path, reference):
    """(n, hit5, hit5c, recall) sums, so that repositories can be pooled."""
    out = subprocess.check_output([args.drqa, "--report", path, "--reference", reference, "--json"])
    systems = json.loads(out)["systems"]
    if not systems:
        return {"n": 0, "nr": 0, "hit5": 0.0, "hit5c": 0.0, "recall": 0.0}
    s = systems[0]
    n, nr = s["file_hit@5"]["n"], s["identifier_recall"]["n"]
    return {"n": n, "nr": nr, "hit5": n * (s["file_hit@5"]["mean"] or 0),
            "hit5c": n * (s["file_hit@5_citations"]["mean"] or 0),
            "recall": nr * (s["identifier_recall"]["mean"] or 0)}


def later_files(line):
    """The line with its first five distinct files' citations taken out: a
    hit there is a gold file the answer cites, but after the fifth file."""
    first = []
    for c in line.get("citations", []):
        if c["path"] not in first:
            first.append(c["path"])
    j = dict(line)
    j["citations"] = [c for c in line.get("citations", []) if c["path"] not in first[:5]]
    return j


def print_detail(args, rows, ref, chosen):
    """Each question a gold file of which is in the tree (the ceiling) but
    not among mcts's first five distinct files: whether rag-window or the
    BM25 anchor found one there, and whether mcts cited one after its fifth
    file (a ranking miss) or never (a recall miss)."""
    print()
    print("misses (ceiling hit, mcts hit@5 miss): rw/bm25: that row hit; later: mcts cites a gold file after its "
          "fifth file")
    totals = {"misses": 0, "rw": 0, "bm25": 0, "later": 0}
    for r in sorted(rows):
        m = rows[r]["mcts@%s" % chosen[r]]
        ceil, hm, hw, ha, hl = (quality.per_question(args, os.path.join(args.workdir, "loo"), lines, ref) for lines in
                                (rows[r]["ceiling"], m, rows[r]["rag-window"], rows[r]["anchor"],
                                 [later_files(j) for j in m]))
        for j in m:
            q = j["id"]
            if not ceil.get(q) or hm.get(q):
                continue
            totals["misses"] += 1
            w, a, lt = hw.get(q) or 0, ha.get(q) or 0, hl.get(q) or 0
            totals["rw"] += w
            totals["bm25"] += a
            totals["later"] += lt
            print("  %-24s rw %d  bm25 %d  later %d  %s" % (q, w, a, lt, j.get("question", "")[:90]))
    print("  %d misses: rag-window hits %d of them, the BM25 anchor %d; mcts cites a gold file after its fifth "
          "file in %d, never in %d" % (totals["misses"], totals["rw"], totals["bm25"], totals["later"],
                                        totals["misses"] - totals["later"]))


def add(a, b):
    return {k: a[k] + b[k] for k in a}


def mean(s, k):
    d = s["nr"] if k == "recall" else s["n"]
    return 100.0 * s[k] / d if d else None


ZERO = {"n": 0, "nr": 0, "hit5": 0.0, "hit5c": 0.0, "recall": 0.0}


def load_questions(sets):
    """Questions by repository, ids made unique across sets; the reference
    file every score reads."""
    by_repo, dirs = {}, {}
    for name, qpath, repos in sets:
        with open(qpath) as f:
            for raw in f:
                if not raw.strip():
                    continue
                q = json.loads(raw)
                if q.get("repo") not in repos:
                    sys.exit("loo.py: question %s of %s is about repo '%s'; give REPO=DIR in its --set" %
                             (q.get("id"), qpath, q.get("repo")))
                q["id"] = "%s:%s" % (name, q["id"])
                by_repo.setdefault(q["repo"], []).append(q)
                dirs[q["repo"]] = repos[q["repo"]]
    return by_repo, dirs


def run_repo(args, repo, qs, repo_dir, grid):
    """Answers lines of every row for one repository: ceiling, anchor,
    rag-window and mcts at each grid value."""
    wd = os.path.join(args.workdir, "loo")
    os.makedirs(wd, exist_ok=True)
    index = os.path.join(args.workdir, "%s.sqlite" % repo)
    subprocess.check_call([args.drqa, "--quiet", "--no-progress", "--index", index, "--index-only", repo_dir],
                          stdout=subprocess.DEVNULL)
    qfile = os.path.join(wd, "%s.questions.jsonl" % repo)
    quality.write_lines(qfile, [{"id": q["id"], "question": q["question"]} for q in qs])
    lines, secs = {}, {}
    runs = [("rag-window", "rag-window", None)] + [("mcts@%s" % g, "mcts", g) for g in grid]
    for row, mode, g in runs:
        env_before = os.environ.get("DRQA_FUSE_K")
        if g is not None and g != "default":
            os.environ["DRQA_FUSE_K"] = g
        try:
            got, _, _ = quality.run_mode(args, mode, repo + "." + row.replace("@", "-"), qfile, index, wd, repo_dir)
        finally:
            if env_before is None:
                os.environ.pop("DRQA_FUSE_K", None)
            else:
                os.environ["DRQA_FUSE_K"] = env_before
        lines[row] = got
        secs[row] = [j.get("wall_ms", 0) / 1000.0 for j in got]
    base = os.path.basename(os.path.normpath(repo_dir))
    paths = quality.repo_files(index)
    anchor = quality.Anchor(index)
    lines["ceiling"], lines["anchor"], secs["anchor"] = [], [], []
    for q in qs:
        lines["ceiling"].append(quality.answer_line(q, "ceiling", base, [(p, 1, 1, "") for p in
                                                                          quality.ceiling_citations(q, base, paths)]))
        t0 = time.monotonic()
        top = [(p, a, b, t) for p, a, b, t, _, _ in anchor.top(q["question"], 5)]
        secs["anchor"].append(time.monotonic() - t0)
        lines["anchor"].append(quality.answer_line(q, "anchor", base, top))
    return lines, secs


def choose(scores, grid, left_out):
    """The grid value with the best pooled hit@5 + hit@5 c. on every
    repository but left_out (ties: the earlier value)."""
    best, best_v = None, None
    for g in grid:
        tot = ZERO
        for r, s in scores.items():
            if r != left_out:
                tot = add(tot, s["mcts@%s" % g])
        v = tot["hit5"] + tot["hit5c"]
        if best_v is None or v > best_v + 1e-9:
            best, best_v = g, v
    return best


def fmt(v):
    return "    -" if v is None else "%5.1f" % v


def print_table(scores, grid, chosen, secs):
    print("%-18s %4s %5s %7s | %-17s | %-17s | %-17s | %-11s" % (
        "", "n", "ceil", "k", "mcts (LOO)", "rag-window", "BM25 anchor", "mcts - rw"))
    print("%-18s %4s %5s %7s | %5s %5s %5s | %5s %5s %5s | %5s %5s %5s | %5s %5s" % (
        "repository", "", "hit5", "chosen", "hit5", "hit5c", "idrec", "hit5", "hit5c", "idrec", "hit5", "hit5c",
        "idrec", "hit5", "hit5c"))
    pooled = {"ceiling": ZERO, "mcts": ZERO, "rag-window": ZERO, "anchor": ZERO}
    worst = {}
    for r in sorted(scores):
        s = scores[r]
        m = s["mcts@%s" % chosen[r]]
        w, a = s["rag-window"], s["anchor"]
        pooled["ceiling"] = add(pooled["ceiling"], s["ceiling"])
        pooled["mcts"] = add(pooled["mcts"], m)
        pooled["rag-window"] = add(pooled["rag-window"], w)
        pooled["anchor"] = add(pooled["anchor"], a)
        d = {k: (mean(m, k) - mean(w, k)) if m["n"] else None for k in ("hit5", "hit5c")}
        for k in ("hit5", "hit5c"):
            if d[k] is not None and (k not in worst or d[k] < worst[k][1]):
                worst[k] = (r, d[k])
        print("%-18s %4d %5s %7s | %s %s %s | %s %s %s | %s %s %s | %+5.1f %+5.1f" % (
            r, m["n"], fmt(mean(s["ceiling"], "hit5")), chosen[r],
            fmt(mean(m, "hit5")), fmt(mean(m, "hit5c")), fmt(mean(m, "recall")),
            fmt(mean(w, "hit5")), fmt(mean(w, "hit5c")), fmt(mean(w, "recall")),
            fmt(mean(a, "hit5")), fmt(mean(a, "hit5c")), fmt(mean(a, "recall")), d["hit5"] or 0, d["hit5c"] or 0))
    m, w, a = pooled["mcts"], pooled["rag-window"], pooled["anchor"]
    print("%-18s %4d %5s %7s | %s %s %s | %s %s %s | %s %s %s | %+5.1f %+5.1f" % (
        "POOLED", m["n"], fmt(mean(pooled["ceiling"], "hit5")), "LOO",
        fmt(mean(m, "hit5")), fmt(mean(m, "hit5c")), fmt(mean(m, "recall")),
        fmt(mean(w, "hit5")), fmt(mean(w, "hit5c")), fmt(mean(w, "recall")),
        fmt(mean(a, "hit5")), fmt(mean(a, "hit5c")), fmt(mean(a, "recall")),
        mean(m, "hit5") - mean(w, "hit5"), mean(m, "hit5c") - mean(w, "hit5c")))
    print("worst repository (mcts - rag-window): hit@5 %s %+.1f; hit@5 c. %s %+.1f" % (
        worst["hit5"][0], worst["hit5"][1], worst["hit5c"][0], worst["hit5c"][1]))
    med = {k: quality.median(v) for k, v in secs.items() if v}
    print("median seconds per question: %s" % ", ".join("%s %.3f" % (k, v) for k, v in sorted(med.items())))
    print("goals (pooled, leave-one-repository-out mcts):")
    goals = []
    for k, name in (("hit5", "hit@5"), ("hit5c", "hit@5 c.")):
        goals.append(("mcts %s >= rag-window + 3" % name, mean(m, k) - mean(w, k), 3))
        goals.append(("mcts %s >= BM25 + 8" % name, mean(m, k) - mean(a, k), 8))
    goals.append(("mcts id-recall >= BM25 + 12", mean(m, "recall") - mean(a, "recall"), 12))
    for k, name in (("hit5", "hit@5"), ("hit5c", "hit@5 c.")):
        goals.append(("no repository below rag-window - 2 (%s; worst %s)" % (name, worst[k][0]), worst[k][1], -2))
    for name, d, want in goals:
        print("  %-52s %+6.1f  %s (margin %+.1f)" % (name, d, "MET" if d >= want - 1e-9 else "MISSED", d - want))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drqa", required=True)
    ap.add_argument("--set", action="append", default=[], help="NAME:QUESTIONS:REPO=DIR[,REPO=DIR...] (repeatable)")
    ap.add_argument("--grid", default="off,10,60",
                    help="DRQA_FUSE_K values ('default': leave it unset, for a build without it)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--detail", action="store_true",
                    help="list the misses: what the other rows found, and whether mcts cited the file later")
    args = ap.parse_args()
    args.resume, args.extra = False, []
    sets = [quality.parse_set(x) for x in args.set]
    if not sets:
        sys.exit("loo.py: give --set NAME:FILE:REPO=DIR,... (bench/loo.sh gives every set there is)")
    grid = [g for g in args.grid.split(",") if g]
    args.workdir = args.workdir or os.path.join(os.environ.get("TMPDIR", "/tmp"), "drqa-loo-%d" % os.getuid())
    os.makedirs(args.workdir, exist_ok=True)
    by_repo, dirs = load_questions(sets)
    ref = os.path.join(args.workdir, "loo.reference.jsonl")
    quality.write_lines(ref, [q for r in sorted(by_repo) for q in by_repo[r]])
    scores, secs, rows = {}, {}, {}
    for repo in sorted(by_repo):
        lines, sc = run_repo(args, repo, by_repo[repo], dirs[repo], grid)
        rows[repo] = lines
        scores[repo] = {}
        for row, got in lines.items():
            path = os.path.join(args.workdir, "loo", "%s.%s.scored.jsonl" % (repo, row.replace("@", "-")))
            quality.write_lines(path, got)
            scores[repo][row] = score(args, path, ref)
        for row, v in sc.items():
            secs.setdefault(row, []).extend(v)
    chosen = {r: choose(scores, grid, r) for r in scores}
    print("leave-one-repository-out over %d repositories, %d questions; grid of DRQA_FUSE_K: %s" % (
        len(scores), sum(len(v) for v in by_repo.values()), ", ".join(grid)))
    print("hit5: a gold file among the first 5 distinct cited files; hit5c: among the first 5 citations;")
    print("idrec: identifier recall; k chosen: the grid value chosen on the other repositories.")
    print()
    print_table(scores, grid, chosen, secs)
    every = choose(scores, grid, None)
    print("chosen on every repository (the value to ship): %s" % every)
    print("per grid value, pooled over every repository (hit5 / hit5c / idrec):")
    for g in grid:
        tot = ZERO
        for r in scores:
            tot = add(tot, scores[r]["mcts@%s" % g])
        print("  %-8s %s %s %s" % (g, fmt(mean(tot, "hit5")), fmt(mean(tot, "hit5c")), fmt(mean(tot, "recall"))))
    if args.detail:
        print_detail(args, rows, ref, chosen)


if __name__ == "__main__":
    main()
