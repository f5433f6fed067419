#!/usr/bin/env python3
"""index_dump: prints an index's content in a canonical form for comparison.

Row ids differ between an index updated step by step and one built fresh, so
every reference to a row is replaced by that row's natural key (a file by its
path, a symbol by its file, qualified name and first line) and the rows of each
table are sorted. Two indexes of the same tree must print the same text.
meta is left out: it records when the index was written.

usage: index_dump.py INDEX.sqlite
"""
import sys

import index_sql


def main():
    db = index_sql.connect(sys.argv[1])
    q = db.execute
    path = {i: p for i, p in q("SELECT id, path FROM files")}
    sym = {}
    for i, f, qual, line in q("SELECT id, file_id, qualname, start_line FROM symbols"):
        sym[i] = "%s:%s@%d" % (path.get(f), qual, line)
    out = []

    def table(name, rows):
        for r in sorted(repr(tuple(x)) for x in rows):
            out.append("%s %s" % (name, r))

    table("files", q("SELECT path, lang, size, mtime_ns, hash, nlines, module, parse_errors, "
                     "decode_errors, drqa_text(ztext, tlen) FROM files"))
    table("skipped", q("SELECT path, reason, size FROM skipped"))
    table("symbols", ((path.get(f), sym.get(p), k, n, qn, s, e, b, sig, dec, doc, bases, a)
                      for f, p, k, n, qn, s, e, b, sig, dec, doc, bases, a in
                      q("SELECT file_id, parent_id, kind, name, qualname, start_line, end_line, body_line, "
                        "signature, decorators, docstring, bases, is_async FROM symbols")))
    table("imports", ((path.get(f), l, m, n, a, lv, path.get(r))
                      for f, l, m, n, a, lv, r in
                      q("SELECT file_id, line, module, name, alias, level, resolved_file_id FROM imports")))
    table("edges", ((k, path.get(sf), sym.get(si), l, t, tn, sym.get(di), path.get(df))
                    for k, sf, si, l, t, tn, di, df in
                    q("SELECT kind, src_file, src_id, line, target, target_name, dst_id, dst_file FROM edges")))
    # what the FTS index holds of each chunk, term by term (its content is
    # computed by a function of the program, which this connection lacks)
    q("CREATE VIRTUAL TABLE temp.dump_vocab USING fts5vocab(main, 'chunks_fts', 'instance')")
    terms = {}
    for term, doc, col, off in q("SELECT term, doc, col, offset FROM temp.dump_vocab"):
        terms.setdefault(doc, []).append((col, off, term))
    fts = {d: " ".join("%s:%d:%s" % x for x in sorted(v)) for d, v in terms.items()}
    chunk_ids = set()
    rows = []
    for i, f, s, k, a, b, t, h in q("SELECT c.id, c.file_id, c.symbol_id, c.kind, c.start_line, c.end_line, "
                                    "c.text, c.hash FROM chunks c"):
        chunk_ids.add(i)
        rows.append((path.get(f), sym.get(s), k, a, b, t, h, fts.get(i)))
    table("chunks", rows)
    orphans = [d for d in fts if d not in chunk_ids]
    out.append("fts_orphans %d" % len(orphans))
    n_fts = q("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0]
    n_chunks = q("SELECT count(*) FROM chunks").fetchone()[0]
    out.append("fts_rows %d chunks %d" % (n_fts, n_chunks))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
