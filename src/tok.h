/*
 * tok: code-aware terms for full-text search and local vectors. Identifiers are
 * split at underscores and case changes and also kept whole, lowercased and
 * lightly stemmed, so `getResponse`, `get_response` and "get response" meet:
 *   getResponse  -> "get response getrespons"
 * Index and query sides must use these same functions.
 */
#ifndef DRQA_TOK_H
#define DRQA_TOK_H

#include <stddef.h>
#include "util.h"

enum {
    TOK_STOPWORDS = 1,  /* drop English function words (for questions) */
    TOK_NO_JOINED = 2,  /* do not emit the joined form of split identifiers */
};

typedef void (*tok_cb)(const char *term, size_t len, void *ctx);

/* Calls cb for every term of text[0..n) in order. */
void tok_each(const char *text, size_t n, int flags, tok_cb cb, void *ctx);
/* Appends the terms to out separated by single spaces. */
void tok_terms(const char *text, size_t n, int flags, struct buf *out);
/* Light suffix stripping in place (plural, -ing, -ed); *len is updated. */
void tok_stem(char *w, size_t *len);
int tok_is_stopword(const char *w, size_t len);

#endif
