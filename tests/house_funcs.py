#!/usr/bin/env python3
"""house_funcs: the length of every C function in the files named.

A function is a top-level '{...}' block that follows a ')': its name is the
word before the '(' matching that ')', its first line the line of that name
and its last line the line of the closing brace, as ctags counts them
(`ctags --kinds-c=f --fields=+ne`). Comments, string and character literals
and preprocessor lines (with their continuations) are blanked first, so that
braces and parentheses inside them do not count; line breaks are kept.

usage: house_funcs.py FILE...
prints one line per function: LINES NAME FILE:FIRST
"""
import re
import sys


def blank(text):
    """text with comments, literals and preprocessor lines as spaces."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":
            # a directive runs to a newline not escaped by a backslash
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                if text[i] != "\n":
                    out[i] = " "
                i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if text[k] != "\n":
                    out[k] = " "
            i = end
            continue
        if c in "\"'":
            k = i + 1
            while k < n and text[k] != c and text[k] != "\n":
                k += 2 if text[k] == "\\" else 1
            for j in range(i + 1, min(k, n)):
                if text[j] != "\n":
                    out[j] = " "
            i = k + 1
            continue
        i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of each function in text."""
    code = blank(text)
    line_of = []
    ln = 1
    for ch in code:
        line_of.append(ln)
        if ch == "\n":
            ln += 1
    found = []
    depth = 0
    start = None
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                k = i - 1
                while k >= 0 and code[k].isspace():
                    k -= 1
                start = k if k >= 0 and code[k] == ")" else None
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0 and start is not None:
                name, first = name_before(code, start, line_of)
                if name:
                    found.append((name, first, line_of[i]))
                start = None
    return found


def name_before(code, close, line_of):
    """The word before the '(' that matches the ')' at close, and its line."""
    depth = 0
    k = close
    while k >= 0:
        if code[k] == ")":
            depth += 1
        elif code[k] == "(":
            depth -= 1
            if depth == 0:
                break
        k -= 1
    k -= 1
    while k >= 0 and code[k].isspace():
        k -= 1
    m = re.search(r"[A-Za-z_]\w*$", code[max(0, k - 200):k + 1])
    if not m:
        return None, None
    return m.group(0), line_of[k]


def main():
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            print("%d %s %s:%d" % (last - first + 1, name, path, first))


if __name__ == "__main__":
    main()
