/*
 * text: making repository and model text safe to put on a terminal, and
 * measuring it. Nothing here calls curses, so it is unit-tested on its own.
 *
 * Files and model replies may hold anything: escape sequences that would move
 * the cursor, retitle the window or change colours, carriage returns, invalid
 * UTF-8, bidirectional overrides that reorder what is shown. text_safe turns
 * one line of such input into text that only ever prints visibly:
 *
 *   C0 controls      ^@ .. ^_  (ESC is ^[, CR is ^M); tab expands to spaces
 *   DEL              ^?
 *   C1 controls      \x80 .. \x9f (the 8-bit escape introducers)
 *   invalid UTF-8    \xNN for every byte that does not start a valid sequence
 *   other code points that are not printable (bidi overrides and isolates,
 *   line and paragraph separators, unassigned, anything wcwidth rejects)
 *                    <U+202E>
 *   non-ASCII in a non-UTF-8 locale (TEXT_ASCII): <U+00E9>
 *
 * Everything else (printable ASCII, printable UTF-8 including wide CJK) is
 * copied unchanged. A newline is not part of a line: callers split on '\n'
 * first (text_safe renders a stray one as ^J).
 *
 * The measuring functions take text that text_safe produced (valid UTF-8,
 * printable) and count display columns with wcwidth, which needs a UTF-8
 * LC_CTYPE (the program sets the locale at start; the tests set C.UTF-8).
 */
#ifndef DRQA_UI_TEXT_H
#define DRQA_UI_TEXT_H

#include "util.h"

#include <stddef.h>

#define TEXT_ASCII 1     /* escape every non-ASCII code point */
#define TEXT_TABSTOP 8

/* Appends the safe form of s[0..len) to out. col is the display column the
 * text starts at (for tab stops). Returns the column after the text. */
int text_safe(struct buf *out, const char *s, size_t len, int col, int flags);
/* The safe form of a NUL-terminated string (caller frees). */
char *text_safe_dup(const char *s, int flags);

/* Display columns of safe text. */
int text_width(const char *s, size_t len);
/* Bytes of the longest prefix of s[0..len) that fits in cols columns; its
 * width in *width (may be NULL). Never splits a character. */
size_t text_fit(const char *s, size_t len, int cols, int *width);
/* The next row when wrapping s[0..len) at cols columns: its length in bytes,
 * ending after the last space that lets it fit, or hard at the width when a
 * word is longer than the row. *next receives the offset where the following
 * row starts (spaces at the break are skipped). Always makes progress. */
size_t text_wrap(const char *s, size_t len, int cols, size_t *next);

/* The byte offset of the shortest tail of s[0..len) that fits in cols
 * columns (len when none does): where to start text cut at its start. */
size_t text_fit_tail(const char *s, size_t len, int cols);
/* Safe text s shortened towards cols columns by dropping the leading
 * directories of its paths (words holding a '/'), the longest path first,
 * each replaced by mark: "exported /home/u/a/b/f.json" becomes "exported
 * <mark>/b/f.json", so that file names stay. The result may still be wider
 * than cols when no path can lose more (caller frees). */
char *text_shorten_paths(const char *s, int cols, const char *mark);

/* Case-insensitive (ASCII) substring search; 1 when needle occurs in hay. */
int text_contains(const char *hay, const char *needle);

#endif
