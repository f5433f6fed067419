#!/usr/bin/env python3
"""tree_truth.py: what a search tree says about itself is true (transcripts).

  tree_truth.py CHECK TRANSCRIPT.json...   CHECK: siblings, evidence, coverage

siblings  no node has two children with the same action and normalised
          arguments: name case, key order, surrounding and repeated
          whitespace, letter case of values, null and empty members, and
          arguments equal to their default (SemanticSearch's category 'any',
          ViewCode's snap_to_definition false) do not matter; a Finish is a
          Finish whatever its arguments. Children with no action (not run)
          are left out.
evidence  every citation of the answer is read by a node the answer names:
          the nodes listed on its "_Evidence:" line, or, when it has none,
          the path it says the answer was drawn from; or the line names it,
          by number, as read for the answer outside the search (the flat
          ranker's windows, which the search verifies citations against).
coverage  the coverage a node's feedback states ("covers N% of the question;
          missing: ...") is the one its children's reports state for the
          path they start from, and no statement says 100% beside a missing
          term.
Prints one line per violation; exits 1 when there is any.
"""
import json
import re
import sys

DEFAULTS = {"semanticsearch": {"category": "any"}, "viewcode": {"snap_to_definition": False}}


def norm(v):
    if isinstance(v, str):
        return " ".join(v.split()).lower()
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if x is not None and not (isinstance(x, str) and not x.strip())}
    return v


def key(n):
    a = (n.get("action") or "").lower()
    if a == "finish":
        return a
    args = norm(n.get("args") or {})
    for k, d in DEFAULTS.get(a, {}).items():
        if args.get(k) == d:
            del args[k]
    return a + " " + json.dumps(args, sort_keys=True)


def siblings(t, nodes, say):
    for n in t["nodes"]:
        seen = {}
        for c in n.get("children", []):
            m = nodes[c]
            if not m.get("action"):
                continue
            k = key(m)
            if k in seen:
                say("node %d has two children with one action: %d and %d (%s)" % (n["id"], seen[k], c, k))
            seen.setdefault(k, c)


def reads(m, c):
    for o in m.get("observation") or []:
        if o["path"] != c["path"]:
            continue
        if o["start_line"] <= c["start_line"] and c["end_line"] <= o["end_line"]:
            return True
    return False


def evidence(t, nodes, say):
    a = t.get("answer") or {}
    md = a.get("markdown") or ""
    line = next((l for l in md.split("\n") if l.startswith("_Evidence:")), None)
    if line is not None:
        named = {int(x) for x in re.findall(r"\bnodes? ((?:\d+(?:, )?)+)", line) for x in x.split(", ") if x}
        # citations the answer read itself, outside the search, named by number
        outside = re.search(r"((?:\[\d+\](?:, )?)+) read for the answer outside the search", line)
        read_outside = {int(x) for x in re.findall(r"\[(\d+)\]", outside.group(1))} if outside else set()
    else:
        named, read_outside = set(a.get("path") or []), set()
    for i, c in enumerate(a.get("citations") or []):
        if i + 1 in read_outside:
            continue
        if not any(reads(nodes[k], c) for k in named if k in nodes):
            who = [k for k in nodes if reads(nodes[k], c)]
            say("citation [%d] %s:%d-%d is read by none of the nodes the answer names %s (read by %s)"
                % (i + 1, c["path"], c["start_line"], c["end_line"], sorted(named), who))


STATED = re.compile(r"covers (\d+)% of the question(?: \([^)]*\))?(; missing: ([^;\n]*))?")


def stated(text, prefix=""):
    """(percent, missing terms) of the first coverage statement, or None."""
    for l in (text or "").split("\n"):
        if not l.startswith(prefix):
            continue
        m = STATED.search(l)
        if m:
            miss = m.group(3) or ""
            return int(m.group(1)), [w for w in re.split(r", | and \d+ more", miss) if w]
    return None


def coverage(t, nodes, say):
    for n in t["nodes"]:
        fb = stated(n.get("feedback"))
        for what, s in (("feedback", fb), ("report", stated(n.get("report"), "coverage"))):
            if s and s[0] == 100 and s[1]:
                say("node %d: its %s says 100%% beside missing %s" % (n["id"], what, s[1]))
        old = re.search(r"covers (\d+)%[^;]*; missing: ([^;]*)", n.get("feedback") or "")
        rep = re.search(r"not yet matched: ([^\n]*)", n.get("report") or "")
        if old and old.group(1) == "100":
            say("node %d: feedback says 100%% beside missing %s" % (n["id"], old.group(2)))
        for c in n.get("children", []):
            r = stated(nodes[c].get("report"), "coverage")
            crep = re.search(r"not yet matched: ([^\n]*)", nodes[c].get("report") or "")
            if fb and r and fb != r:
                say("node %d states %s, its child %d's report %s" % (n["id"], fb, c, r))
            if old and crep and set(old.group(2).split(", ")) - set(crep.group(1).split(", ")):
                say("node %d says missing: %s, its child %d's report not yet matched: %s"
                    % (n["id"], old.group(2), c, crep.group(1)))
        if rep and old and set(old.group(2).split(", ")) - set(rep.group(1).split(", ")):
            say("node %d says missing: %s after its report said only %s was" % (n["id"], old.group(2), rep.group(1)))


def main():
    check = {"siblings": siblings, "evidence": evidence, "coverage": coverage}[sys.argv[1]]
    bad = 0
    for f in sys.argv[2:]:
        t = json.load(open(f))
        nodes = {n["id"]: n for n in t["nodes"]}

        def say(msg, f=f):
            nonlocal bad
            bad += 1
            print("%s: %s" % (f.rsplit("/", 1)[-1], msg))

        check(t, nodes, say)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
