#!/usr/bin/env python3
"""check: validate development question files (bench/devq/devq*.jsonl).

For every question line:
  - the fields id, repo, category_type, question, gold_files,
    gold_identifiers and reference_answer are present and non-empty
    (category_type one of what/how/why/where);
  - ids are unique (within a file and across the files given);
  - every gold file exists under PYLIB (default
    /usr/lib/python3/dist-packages), inside the directory of the question's
    repo; a path written in the upstream layout ('src/jinja2/x.py') is looked
    up without its leading 'src/';
  - every gold identifier's last dotted component ('Class.method' ->
    'method', 'self._wrapped' -> '_wrapped') occurs as a whole word in at
    least one of the question's gold files.
With --strict, also: 4-8 gold identifiers, each (its last dotted component)
named inside a backticked span of the reference answer, and each gold file
path named in the reference answer.

Prints the problems, then a summary (questions per repo and category type,
how many need two or more files); exits 1 when a check failed.
Standard library only.

  check.py [--pylib DIR] [--strict] FILE.jsonl [FILE.jsonl ...]
"""
import argparse
import json
import os
import re
import sys

FIELDS = ("id", "repo", "category_type", "question", "gold_files", "gold_identifiers", "reference_answer")
CATEGORIES = ("what", "how", "why", "where")


def resolve(pylib, path):
    """The existing file a gold path names, or None."""
    cands = [path]
    if path.startswith("src/"):
        cands.append(path[len("src/"):])
    for c in cands:
        full = os.path.join(pylib, c)
        if os.path.isfile(full):
            return full
    return None


def last_component(ident):
    ident = ident.strip().rstrip("()")
    return ident.split(".")[-1]


_text_cache = {}


def file_text(path):
    if path not in _text_cache:
        with open(path, encoding="utf-8", errors="replace") as f:
            _text_cache[path] = f.read()
    return _text_cache[path]


def occurs_as_word(name, text):
    return re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), text) is not None


def check_file(path, args, seen_ids, problems):
    questions = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            where = "%s:%d" % (path, lineno)
            try:
                q = json.loads(raw)
            except ValueError as e:
                problems.append("%s: not JSON (%s)" % (where, e))
                continue
            qid = q.get("id", "?")
            where = "%s:%d (%s)" % (path, lineno, qid)
            bad = False
            for k in FIELDS:
                v = q.get(k)
                if v is None or v == "" or v == []:
                    problems.append("%s: field '%s' missing or empty" % (where, k))
                    bad = True
            if bad:
                continue
            if not isinstance(q["gold_files"], list) or not isinstance(q["gold_identifiers"], list):
                problems.append("%s: gold_files and gold_identifiers must be lists" % where)
                continue
            if q["category_type"] not in CATEGORIES:
                problems.append("%s: category_type '%s' is not one of %s" % (where, q["category_type"],
                                                                             "/".join(CATEGORIES)))
            if qid in seen_ids:
                problems.append("%s: id already used at %s" % (where, seen_ids[qid]))
            else:
                seen_ids[qid] = where
            files = []
            for g in q["gold_files"]:
                full = resolve(args.pylib, g)
                if full is None:
                    problems.append("%s: gold file '%s' does not exist under %s" % (where, g, args.pylib))
                    continue
                rel = os.path.relpath(full, args.pylib)
                if rel.split(os.sep)[0] != q["repo"]:
                    problems.append("%s: gold file '%s' is not inside repo '%s'" % (where, g, q["repo"]))
                files.append(full)
            if files:
                texts = [file_text(f) for f in files]
                for ident in q["gold_identifiers"]:
                    name = last_component(ident)
                    if not name or not any(occurs_as_word(name, t) for t in texts):
                        problems.append("%s: identifier '%s' occurs in none of its gold files" % (where, ident))
            if args.strict:
                n = len(q["gold_identifiers"])
                if not 4 <= n <= 8:
                    problems.append("%s: %d gold identifiers (strict: 4-8)" % (where, n))
                ref = q["reference_answer"]
                spans = re.findall(r"`([^`]+)`", ref)
                for ident in q["gold_identifiers"]:
                    name = last_component(ident)
                    if not any(occurs_as_word(name, s) for s in spans):
                        problems.append("%s: reference answer does not name `%s` in backticks" % (where, ident))
                for g in q["gold_files"]:
                    if g not in ref:
                        problems.append("%s: reference answer does not name the file %s" % (where, g))
            questions.append(q)
    return questions


def summary(path, qs):
    repos = sorted({q["repo"] for q in qs})
    print("%s: %d questions" % (path, len(qs)))
    print("  %-10s %5s %5s %5s %5s %6s %6s" % ("repo", *CATEGORIES, "total", "2+file"))
    for r in repos + ["all"]:
        sel = [q for q in qs if r == "all" or q["repo"] == r]
        counts = [sum(1 for q in sel if q["category_type"] == c) for c in CATEGORIES]
        multi = sum(1 for q in sel if len(q["gold_files"]) > 1)
        print("  %-10s %5d %5d %5d %5d %6d %6d" % (r, *counts, len(sel), multi))
    nids = [len(q["gold_identifiers"]) for q in qs]
    if nids:
        print("  gold identifiers per question: min %d, mean %.1f, max %d" % (min(nids), sum(nids) / len(nids),
                                                                             max(nids)))
    backticked = sum(1 for q in qs if "`" in q["question"])
    print("  questions naming an identifier in backticks: %d" % backticked)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pylib", default="/usr/lib/python3/dist-packages")
    ap.add_argument("--strict", action="store_true", help="also check the devq2 style (4-8 identifiers, "
                    "all named in the reference answer)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    seen_ids = {}
    failed = False
    for path in args.files:
        problems = []
        qs = check_file(path, args, seen_ids, problems)
        for p in problems:
            print("FAIL " + p)
        summary(path, qs)
        print("  %s" % ("OK" if not problems else "%d problem(s)" % len(problems)))
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
