#!/usr/bin/env python3
"""ui_screen: facts about captured front-end screens, checked against the
worker's transcript (the engine's record) or the file shown, for the tmux
tests of the tree pane and the file view. Nothing here knows the offline
policy's tree: every check is a rule that holds for any tree.

usage:
  ui_screen.py ancestors TRANSCRIPT SCREEN...
      the node at the cursor (the node pane's title) and every one of its
      ancestors are rows of the tree pane
  ui_screen.py labels TRANSCRIPT SCREEN COLS [whole]
      the tree pane is at least half of COLS wide; each row's action is the
      node's action, whole or its short name from the man page; the argument
      shown is the start of one of the node's arguments (a ViewCode span
      keeps its end when its directories give way), cut only with a marker;
      the number columns line up under the title's. At 80 columns rows up to
      depth 3 show at least 3 characters of an argument; with "whole" every
      argument is shown whole and a ViewCode row shows its span
  ui_screen.py uct TRANSCRIPT SCREEN
      the UCT column shows the newest mark of each node within 5% (the
      column may write 1.2e6) and the columns line up
  ui_screen.py file FILE SCREEN COLS
      the file view's rows show FILE's lines: a row numbered N shows line N
      from the title's column on ('col C', else 1), with a marker at the
      right edge exactly when the line goes on past it and one at the left
      when scrolled; with 'wrap' in the title a line goes on, unmarked, on
      the unnumbered rows below it. Prints "rows R cut K wrapped W".
  ui_screen.py matches FILE SCREEN.ESC NEEDLE
      (a NO_COLOR screen with its attributes) in the file view's text every
      cell of an occurrence of NEEDLE is underlined and no other cell is;
      prints the number of occurrences in view and how many are reversed
      (the current match)
Failures go to stderr, exit status 1.
"""
import json, os, re, sys

SEP = "\u2502"
ELL = "\u2026"


def fail(msgs):
    for m in msgs:
        print(m, file=sys.stderr)
    return 1 if msgs else 0


def load_nodes(path):
    tr = json.load(open(path))
    return {n["id"]: n for n in tr["nodes"]}


def man_abbrev():
    man = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "man", "drqa-tui.1")
    text = open(man, encoding="utf-8").read()
    para = text[text.index("fixed short one:"):]
    para = para[:para.index("a name is")]
    return {full: short for short, full in re.findall(r"\\fB(\w+)\\fR\s+\((\w+)\)", para)}


def read_screen(path):
    return open(path, encoding="utf-8", errors="replace").read().rstrip("\n").split("\n")


ROW = re.compile(r"^(.)( *)([-+ ]?)(\d+)(?: (.*?))? +(\S+) +(\S+) +(\S+) +(\S+) *$")
# (the focused pane's title holds a line between its name and its columns)
HEAD = re.compile(r"^ Tree (\d+)(?: \[zoom: z\])?[ \u2501=]* +(N) +(Q) +(UCT) +(st|status) *$")


def tree_part(line):
    return line.split(SEP)[0]


def tree_rows(screen):
    """(row index, match) of every tree row."""
    out = []
    for i, line in enumerate(screen[1:-2], 1):
        m = ROW.match(tree_part(line))
        if m:
            out.append((i, m))
    return out


def selected(screen):
    m = re.search(SEP + r" ?Node (\d+)\b", screen[0])
    return int(m.group(1)) if m else None


def cmd_ancestors(args):
    nodes = load_nodes(args[0])
    bad, tall = [], 0
    for path in args[1:]:
        screen = read_screen(path)
        sel = selected(screen)
        if sel is None:
            bad.append("%s: no node pane title" % path)
            continue
        shown = {int(m.group(4)) for _, m in tree_rows(screen)}
        body = len(screen) - 3
        hm = re.match(r"^ Tree (\d+)", screen[0])
        if hm and int(hm.group(1)) > body:
            tall += 1
        if sel not in shown:
            bad.append("%s: node %d (at the cursor) is not on screen" % (path, sel))
        n = nodes.get(sel)
        while n is not None and n["parent"] is not None and n["parent"] >= 0:
            if n["parent"] not in shown:
                bad.append("%s: node %d's ancestor %d is not on screen" % (path, sel, n["parent"]))
            n = nodes.get(n["parent"])
    print("screens %d tall %d" % (len(args) - 1, tall))
    return fail(bad)


def header_cols(screen):
    """End columns of N, Q and UCT and the start column of the status."""
    m = HEAD.match(tree_part(screen[0]).rstrip())
    if not m:
        return None
    return m.end(2), m.end(3), m.end(4), m.start(5)


def check_columns(screen, bad):
    want = header_cols(screen)
    if want is None:
        bad.append("no tree title with its column names: %r" % screen[0])
        return
    for i, m in tree_rows(screen):
        got = (m.end(6), m.end(7), m.end(8), m.start(9))
        if got != want:
            bad.append("row %d: columns end at %s, the title's at %s: %r" % (i, got, want, tree_part(screen[i])))


def arg_values(n):
    """What a node's row may show of its arguments: any one of them, or one
    followed by " in FILE_PATTERN" when the action is limited to files."""
    args = n.get("args") or {}
    out = []
    for v in args.values():
        if isinstance(v, str):
            out.append(v.split("\n")[0])
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
    fp = args.get("file_pattern")
    if isinstance(fp, str) and fp:
        out.extend("%s in %s" % (v, fp.split("\n")[0]) for v in list(out) if v != fp)
    return out


def cmd_labels(args):
    nodes = load_nodes(args[0])
    screen = read_screen(args[1])
    cols = int(args[2])
    whole = len(args) > 3 and args[3] == "whole"
    abbrev = man_abbrev()
    bad = []
    sep = screen[1].find(SEP)
    if sep < cols // 2:
        bad.append("the tree pane is %d of %d columns (less than half)" % (sep + 1, cols))
    check_columns(screen, bad)
    rows = tree_rows(screen)
    if len(rows) < min(len(nodes), len(screen) - 3):
        bad.append("%d tree rows on screen for %d nodes" % (len(rows), len(nodes)))
    views = 0
    for i, m in rows:
        nid = int(m.group(4))
        n = nodes.get(nid)
        if n is None:
            bad.append("row %d: node %d is not in the transcript" % (i, nid))
            continue
        label = m.group(5) or ""
        word, _, rest = label.partition(" ")
        if n["parent"] is None or n["parent"] < 0:
            if word != "question":
                bad.append("row %d: the root reads %r" % (i, label))
            continue
        action = n["action"] or "(planning)"
        if word not in (action, abbrev.get(action)):
            bad.append("node %d: the action reads %r, not %s or its short name %s" % (nid, word, action,
                                                                                   abbrev.get(action)))
        vals = arg_values(n) if action != "Finish" else []
        core = rest
        if core.endswith(ELL):
            core = core[:-1]
        ok = not rest or any(v.startswith(core) for v in vals)
        if rest.startswith(ELL):
            ok = any(v.endswith(rest[1:]) and "/" in v for v in vals)
        if not ok:
            bad.append("node %d: the argument reads %r, none of %r" % (nid, rest, vals))
        if cols <= 80 and vals and n["depth"] <= 3 and len(core.strip(ELL)) < 3:
            bad.append("node %d at depth %d: only %r of its argument is shown" % (nid, n["depth"], rest))
        if whole and vals and ELL in rest:
            bad.append("node %d: the argument is cut (%r) at %d columns" % (nid, rest, cols))
        if action == "ViewCode":
            views += 1
            spans = (n.get("args") or {}).get("code_span_list") or []
            if whole and spans and rest != spans[0] + (" +%d" % (len(spans) - 1) if len(spans) > 1 else ""):
                bad.append("node %d: ViewCode shows %r, its span is %r" % (nid, rest, spans[0]))
    print("rows %d viewcode %d" % (len(rows), views))
    return fail(bad)


def cmd_uct(args):
    nodes = load_nodes(args[0])
    screen = read_screen(args[1])
    bad = []
    check_columns(screen, bad)
    big = 0
    for i, m in tree_rows(screen):
        n = nodes.get(int(m.group(4)))
        if n is None:
            continue
        marks = [k for k in n["uct"] if not k["new"]]
        shown = m.group(8)
        if not marks:
            if shown != "-":
                bad.append("node %d: UCT %r, no mark in the transcript" % (n["id"], shown))
            continue
        k = marks[-1]
        want_gt = bool(k.get("chosen"))
        if shown.startswith(">") != want_gt:
            bad.append("node %d: UCT %r, winner %s" % (n["id"], shown, want_gt))
        try:
            v = float(shown.lstrip(">"))
        except ValueError:
            bad.append("node %d: UCT %r is not a number" % (n["id"], shown))
            continue
        if abs(v - k["score"]) > 0.05 * abs(k["score"]) + 0.5:
            bad.append("node %d: UCT %r, the transcript %.1f" % (n["id"], shown, k["score"]))
        if abs(k["score"]) >= 10000:
            big += 1
    print("uct>=10000 %d" % big)
    return fail(bad)


def cmd_file(args):
    lines = open(args[0], encoding="utf-8").read().split("\n")
    screen = read_screen(args[1])
    cols = int(args[2])
    title = screen[0]
    x0 = title.index(SEP) + 1 if SEP in title else 0
    m = re.search(r" line \d+/\d+(  col (\d+)|  wrap)?", title)
    if not m:
        return fail(["no file view title: %r" % title])
    wrap = m.group(1) == "  wrap"
    col = int(m.group(2)) - 1 if m.group(2) else 0
    gw = len(str(int(re.search(r" line \d+/(\d+)", title).group(1)))) + 1
    tw = cols - x0 - gw
    bad, n, cut, wrapped = [], 0, 0, 0
    cont = None   # (line number, the columns shown so far) while a line wraps
    for i, line in enumerate(screen[1:-2], 1):
        right = line[x0:]
        num = right[:gw].strip()
        text = right[gw:].rstrip()
        if num.isdigit():
            ln = int(num)
            full = lines[ln - 1].expandtabs(8) if ln - 1 < len(lines) else ""
            n += 1
            if wrap:
                want = full[:tw]
                cont = (ln, tw) if len(full) > tw else None
            else:
                left = col > 0 and len(full) > 0
                more = len(full) > col + tw
                start = col + (1 if left else 0)
                body = full[start:start + tw - left - more]
                want = ("\u00ab" if left else "") + body
                if more:
                    want = want.ljust(tw - 1) + "\u00bb"
                    cut += 1
            if text != want.rstrip():
                bad.append("row %d (line %d): shows %r, want %r" % (i, ln, text, want.rstrip()))
        elif cont and wrap:
            ln, shown = cont
            full = lines[ln - 1].expandtabs(8)
            want = full[shown:shown + tw]
            if num or text != want.rstrip():
                bad.append("row %d: %r does not go on with line %d (%r)" % (i, right, ln, want))
            wrapped += 1
            cont = (ln, shown + tw) if len(full) > shown + tw else None
        elif right.strip():
            bad.append("row %d: neither a numbered line nor a wrapped one: %r" % (i, right))
    print("rows %d cut %d wrapped %d" % (n, cut, wrapped))
    return fail(bad)


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def cells(line):
    """(char, underline, reverse) per cell of a capture-pane -e line."""
    out, ul, rv = [], False, False
    pos = 0
    for m in SGR.finditer(line):
        for ch in line[pos:m.start()]:
            out.append((ch, ul, rv))
        pos = m.end()
        codes = [int(c) if c else 0 for c in m.group(1).split(";")] if m.group(1) else [0]
        for c in codes:
            if c == 0:
                ul = rv = False
            elif c == 4:
                ul = True
            elif c == 24:
                ul = False
            elif c == 7:
                rv = True
            elif c == 27:
                rv = False
    for ch in line[pos:]:
        out.append((ch, ul, rv))
    return out


def cmd_matches(args):
    needle = args[2].lower()
    screen = open(args[1], encoding="utf-8", errors="replace").read().rstrip("\n").split("\n")
    plain0 = "".join(c for c, _, _ in cells(screen[0]))
    cut = 0 if SEP not in plain0 else plain0.index(SEP) + 1
    # the file's lines in view: a numbered row and the wrapped rows after it
    lines, g = [], None
    for line in screen[1:-2]:
        cs = cells(line)[cut:]
        text = "".join(c for c, _, _ in cs)
        nm = re.match(r"^ *\d+ ", text)
        if nm:
            g = nm.end()
            lines.append(cs[g:])
        elif lines and g is not None and text.strip():
            lines[-1].extend(cs[g:])
    bad, found, current = [], 0, 0
    for li, cs in enumerate(lines):
        text = "".join(c for c, _, _ in cs).lower()
        want = [False] * len(cs)
        at = text.find(needle)
        while at >= 0:
            found += 1
            if all(cs[k][2] for k in range(at, at + len(needle))):
                current += 1
            for k in range(at, at + len(needle)):
                want[k] = True
            at = text.find(needle, at + len(needle))
        for k in range(len(cs)):
            if cs[k][1] != want[k]:
                # an occurrence cut off at the bottom of the pane
                if li == len(lines) - 1 and cs[k][1] and all(c[1] for c in cs[k:]):
                    break
                bad.append("file line %d in view, column %d (%r): underlined %s, in a match %s: %r"
                           % (li + 1, k, cs[k][0], cs[k][1], want[k], text))
                break
    print("found %d current %d" % (found, current))
    return fail(bad)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    return {"ancestors": cmd_ancestors, "labels": cmd_labels, "uct": cmd_uct, "file": cmd_file,
            "matches": cmd_matches}[cmd](args)


sys.exit(main())
