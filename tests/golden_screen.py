#!/usr/bin/env python3
"""golden_screen: a captured front-end screen checked against the engine's
transcript, then reduced to its layout for the golden comparison.

usage: golden_screen.py SCREEN TRANSCRIPT.json > MASKED

Every tree row (the left pane, narrow or wide columns) must show what the
transcript records for its node: the id at its depth, its action (the
whole name or the short one the man page lists), N, Q, the newest UCT mark as a child ('>' when it won, '-' when none)
and the status; the rows marked '*' are the answer's path. What the policy
decides is masked: which actions, their text, the evidence, the answer, how
many nodes the tree has (every row of the tree pane is "<tree>"), the
numbers on the status line and what the titles say after the pane's name.
So the masked screen pins the layout (where each pane is, how wide, what it
is called) and this script the engine's numbers, and neither depends on the
policy's tuning. Mismatches go to stderr and the exit status is 1.
"""
import json, os, re, sys

SEP = "\u2502"
ABBREV = {"pending": "pend", "running": "run", "done": "done", "finished": "fin", "pruned": "prun",
          "error": "err", "duplicate": "dup", "forced": "forc"}


def action_abbrev():
    """The short action names of a narrow tree, {full: short}, as the man
    page lists them ("\\fBClass\\fR (FindClass), ...")."""
    man = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "man", "drqa-tui.1")
    text = open(man, encoding="utf-8").read()
    para = text[text.index("fixed short one:"):]
    para = para[:para.index("a name is")]
    return {full: short for short, full in re.findall(r"\\fB(\w+)\\fR\s+\((\w+)\)", para)}


def status_word(n):
    if n["duplicate"]:
        return "duplicate"
    if n["forced"] and n["status"] != "done":
        return "forced"
    return n["status"]


def uct_text(n, decimals):
    marks = [m for m in n["uct"] if not m["new"]]
    if not marks:
        return "-"
    m = marks[-1]
    d = 0 if abs(m["score"]) >= 1000 else decimals
    return (">" if m.get("chosen") else "") + "%.*f" % (d, m["score"])


def main():
    screen = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
    tr = json.load(open(sys.argv[2]))
    nodes = {n["id"]: n for n in tr["nodes"]}
    best = set(tr["answer"]["path"]) if tr.get("answer") else set()
    header = screen[0].split(SEP)[0]
    wide = " status" in header
    step, decimals = (2, 1) if wide else (1, 0)
    bad, seen, out = [], set(), []
    abbrev = action_abbrev()
    row = re.compile(r"^(.)( *)([-+ ]?)(\d+) (.*?) +(\d+) +(\S+) *(>?[-0-9.]+|inf) +(\S+) *$")
    for i, line in enumerate(screen):
        left, sep, right = line.partition(SEP)
        if i == 0:
            t0 = re.match(r"^ ?\w+", right)
            out.append((re.sub(r"\d+", "#", left) + sep + (t0.group(0) if t0 else "")).rstrip())
            continue
        if not sep:   # the status and message lines
            if i == len(screen) - 1:
                out.append("<message line>")
            else:
                out.append(re.sub(r"\d+", "#", re.sub(r"done: \S+", "done: <reason>", line)).rstrip())
            continue
        m = row.match(left)
        if m:
            mark, pad, fold, nid, label, N, Q, U, st = m.groups()
            nid = int(nid)
            n = nodes.get(nid)
            seen.add(nid)
            if n is None:
                bad.append("row %d: node %d is not in the transcript" % (i, nid))
            else:
                want_q = "%.*f" % (decimals, n["q"]) if n["visits"] > 0 else "-"
                want_st = status_word(n) if wide else ABBREV.get(status_word(n), status_word(n))
                # after the mark: step columns per level, then the fold character
                depth = (len(pad) + len(fold) - 1) // step
                checks = [("depth", depth, min(n["depth"], 12)), ("N", int(N), n["visits"]), ("Q", Q, want_q),
                          ("UCT", U, uct_text(n, decimals)), ("status", st, want_st),
                          ("best path", mark == "*", nid in best)]
                first = label.split()[0] if label.split() else ""
                action = n["action"] or ("question" if n["parent"] < 0 else "(planning)")
                checks.append(("action", first, first if first == abbrev.get(action) else action))
                for what, got, want in checks:
                    if got != want:
                        bad.append("node %d: %s on screen %r, transcript %r" % (nid, what, got, want))
        # a row of the tree pane, whether it holds a node or not
        left = "<tree>".ljust(len(left))
        title = re.match(r"^ ?(Node|Evidence|Answer|Citations|Tree|File|Help)\b", right)
        right = title.group(0) if title else ""
        out.append((left + sep + right).rstrip())
    rows_fit = len(screen) - 3
    want_rows = min(len(nodes), rows_fit)
    if len(seen) < want_rows:
        bad.append("the tree shows %d rows, the transcript has %d nodes" % (len(seen), len(nodes)))
    for b in bad:
        print(b, file=sys.stderr)
    print("\n".join(out))
    return 1 if bad else 0


sys.exit(main())
