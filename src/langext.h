/*
 * langext: which language of src/languages.def a file extension belongs to,
 * compiled in or not. For the code that tells a file name from other words
 * (qparse.c's question terms, metrics.c's cited paths, fpattern.c's test
 * files) without a list of its own, so that a language's extension added to
 * its row counts everywhere.
 */
#ifndef DRQA_LANGEXT_H
#define DRQA_LANGEXT_H
#include <stddef.h>

/* The name of the language ("python") whose extension is the len bytes at
 * ext, dot included (".py"), or NULL. */
const char *langext_language(const char *ext, size_t len);
#endif
