#!/usr/bin/env python3
"""index_sql: reads an index with the SQL functions its views and file texts need.

The index keeps each file's text as a gzip stream (files.ztext, its length in
files.tlen; src/ztext.h), read through drqa_text(ztext, tlen) or
drqa_file_text(id, hash, ztext, tlen), and the view chunks puts chunk texts
together with drqa_cached_span and drqa_load_span, and unpacks a class
outline, kept packed against its span, with drqa_outline, and a docstring
packed against common words (store_text.c's DOC_DICT) with drqa_doc
(src/store_text.h). The sqlite3 shell lacks them; this module gives a Python connection the same
functions, keeping no texts. (drqa_terms, which chunks_fts_src calls, is the
program's tokenizer and is not here.)

usage: index_sql.py INDEX.sqlite SQL   prints the rows as `sqlite3 -batch` does
       (columns joined by '|', NULL as nothing)
import: connect(path) -> sqlite3.Connection (read-only)
"""
import ast
import os
import re
import sqlite3
import sys
import zlib


def doc_dict():
    """The words docstrings are packed against, as src/store_text.c spells them."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "store_text.c")
    with open(src, encoding="utf-8") as f:
        m = re.search(r"static const char DOC_DICT\[\] =(.*?);", f.read(), re.S)
    return "".join(ast.literal_eval(s) for s in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(1))).encode()


def unpack(z, n):
    """The text of a stored stream, as bytes; ValueError when it is damaged."""
    d = zlib.decompressobj(31)
    t = d.decompress(z) + d.flush()
    if not d.eof or d.unused_data or len(t) != n:
        raise ValueError("damaged file text")
    return t


def unpack_ref(z, ref):
    """A text packed against ref (src/ztext.h: ztext_ref_pack), as bytes."""
    n = int.from_bytes(z[:4], "little")
    d = zlib.decompressobj(-15, zdict=bytes(ref[-32768:])) if ref else zlib.decompressobj(-15)
    t = d.decompress(z[4:]) + d.flush()
    if not d.eof or d.unused_data or len(t) != n:
        raise ValueError("damaged chunk text")
    return t


def register(db):
    last = {}

    def text(z, n):
        return None if z is None else unpack(z, n).decode("utf-8")

    def load_span(fid, h, z, n, off, ln):
        if z is None:
            return None
        if last.get("key") != (fid, h):
            last["key"], last["text"] = (fid, h), unpack(z, n)
        t = last["text"]
        if off is None or ln is None or off < 0 or off >= len(t) or ln <= 0:
            return b""
        return t[off:off + ln]   # a BLOB: the view concatenates it as text

    db.create_function("drqa_text", 2, text, deterministic=True)
    db.create_function("drqa_file_text", 4, lambda fid, h, z, n: text(z, n))
    db.create_function("drqa_load_span", 6, load_span)
    db.create_function("drqa_cached_span", 4, lambda fid, h, off, ln: None)
    db.create_function("drqa_outline", 3,
                       lambda z, ref, h: None if ref is None else unpack_ref(z, ref).decode("utf-8"))
    words = []

    def doc(v):
        if not isinstance(v, bytes):
            return v
        if not words:
            words.append(doc_dict())
        t = unpack_ref(v[4:], words[0])
        if zlib.crc32(t) != int.from_bytes(v[:4], "little"):
            raise ValueError("damaged docstring")
        return t.decode("utf-8")

    db.create_function("drqa_doc", 1, doc, deterministic=True)


def connect(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    register(db)
    return db


def main():
    db = connect(sys.argv[1])
    for row in db.execute(sys.argv[2]):
        sys.stdout.write("|".join("" if v is None else str(v) for v in row) + "\n")


if __name__ == "__main__":
    main()
