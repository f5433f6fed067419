/*
 * store_rows: the compact forms a few columns of the index are written in,
 * and the SQL that gives them back. Each such column is stored under the
 * name with "_s" appended, and the plain column is a generated one (sqlite's
 * VIRTUAL: computed when read, no bytes stored) with the same name and
 * values as before, so that no reader of the index changes. Only the
 * indexer (and test fixtures) write the stored forms, with the functions
 * below.
 *
 *   symbols.kind       kind_s: STORE_SYM_* (an integer, not a word a row)
 *   symbols.qualname   qualname_s: the part before name (store_prefix_form)
 *   symbols.signature  signature_s: the keyword and name left out (store_sig_form)
 *   edges.target       target_s: the part before target_name (store_prefix_form)
 *   chunk_spans.kind   kind_s: STORE_CHUNK_* (an integer)
 *   chunk_spans.hash   hash_s: the 8 bytes the 16 hex digits spell
 *
 * symbols.docstring is not generated (sqlite can inflate nothing): it holds
 * the text, or a BLOB packed against a dictionary of common words
 * (store_text.h's drqa_doc, which every reader calls).
 */
#ifndef DRQA_STORE_ROWS_H
#define DRQA_STORE_ROWS_H

#include <sqlite3.h>
#include <stddef.h>

#include "util.h"

/* symbols.kind_s (the order of parse.h's enum parse_kind) */
enum store_sym_kind { STORE_SYM_CLASS, STORE_SYM_FUNCTION, STORE_SYM_METHOD, STORE_SYM_VARIABLE };
#define STORE_SYM_KIND_SQL                                                                                    \
    "CASE kind_s WHEN 0 THEN 'class' WHEN 1 THEN 'function' WHEN 2 THEN 'method' WHEN 3 THEN 'variable' "     \
    "ELSE kind_s END"

/* chunk_spans.kind_s of a chunk kind, -1 for a kind without a number
 * (then the word itself is stored, and read back as it is) */
int store_chunk_kind(const char *kind);
/* The kind a row's column i of chunk_spans.kind_s stands for (a static
 * string, or the column's own text), as the generated column gives it:
 * for a reader of many rows, which need not have sqlite compute it. */
const char *store_chunk_kind_of(sqlite3_stmt *st, int i);
#define STORE_CHUNK_KIND_SQL                                                                                  \
    "CASE kind_s WHEN 0 THEN 'function' WHEN 1 THEN 'class' WHEN 2 THEN 'module' WHEN 3 THEN 'text' "        \
    "ELSE kind_s END"

/* A dotted name whose last part is kept in a column of its own (a
 * qualified name and its name, a call target and the name it ends in) is
 * stored without that part: NULL (returned, *len 0) when full is last; full
 * up to and with the dot before last when it ends in '.' last (and does not
 * begin with byte 1); else full itself, or (when reading it back would take
 * it for one of those: it ends in '.' or begins with byte 1) byte 1 and
 * full, in scratch. The value is the *len bytes at the returned pointer. */
const char *store_prefix_form(const char *full, const char *last, size_t *len, struct buf *scratch);
/* ... and back: the SQL of the full value, of the stored column col and the
 * last part's column last; when_null is the SQL of the value where col is
 * NULL (a qualified name: its name; a call target: NULL, as before) */
#define STORE_PREFIX_SQL(col, last, when_null)                                                                \
    "CASE WHEN " col " IS NULL THEN " when_null " WHEN unicode(" col ") = 1 THEN substr(" col ", 2) "          \
    "WHEN substr(" col ", -1) = '.' THEN " col " || " last " ELSE " col " END"

/* A signature that begins with one of these keywords and then the
 * symbol's name ('def run(self)') is stored as the keyword's number (one
 * byte) and what follows the name ('(self)'); a signature that begins with a
 * byte up to STORE_SIG_VERBATIM is stored behind that byte; any other as it
 * is. The value is the *len bytes at the returned pointer (NULL for none). */
#define STORE_SIG_KEYWORDS(X) X(1, "def ") X(2, "class ") X(3, "async def ") X(4, "function ") X(5, "func ")
#define STORE_SIG_VERBATIM 6
#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x)
const char *store_sig_form(const char *sig, const char *name, size_t *len, struct buf *scratch);
#define STORE_SIG_WHEN_(n, kw) " WHEN " #n " THEN '" kw "' || name || substr(signature_s, 2)"
#define STORE_SIG_SQL                                                                                         \
    "CASE unicode(signature_s)" STORE_SIG_KEYWORDS(STORE_SIG_WHEN_)                                           \
    " WHEN " STORE_STR(STORE_SIG_VERBATIM) " THEN substr(signature_s, 2) ELSE signature_s END"

/* chunk_spans.hash_s of a hash64 hex string: its 8 bytes in out and 1, or
 * 0 when it is not 16 lower-case hex digits (then it is stored as it is) */
int store_hash_bytes(const char *hex, unsigned char out[8]);
/* The hash a row's column i of chunk_spans.hash_s stands for, as the
 * generated column gives it: in buf (or the column's own text) */
const char *store_hash_of(sqlite3_stmt *st, int i, char buf[17]);
#define STORE_HASH_SQL "CASE WHEN typeof(hash_s) = 'blob' THEN lower(hex(hash_s)) ELSE hash_s END"

#endif
