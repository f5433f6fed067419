/*
 * fuzz_fpattern: file_pattern comes from a model. The input is split at its
 * first newline into a pattern and a path; fpattern_valid and fpattern_match
 * must return (no overflow, no runaway recursion on '**', '{' groups or
 * classes), and one property is checked: a path escaped character by
 * character ('\c') is a pattern that matches that path.
 */
#include "fpattern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;   /* patterns and paths are short; longer adds nothing */
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *nl = memchr(buf, '\n', size);
    const char *pattern = buf, *path = "";
    if (nl) {
        *nl = 0;
        path = nl + 1;
    }
    char err[512];
    err[0] = 0;
    if (!fpattern_valid(pattern, err, sizeof err) && !err[0]) abort();
    fpattern_match(pattern, path);
    fpattern_match(path, pattern);

    size_t n = strlen(path);
    char *esc = malloc(2 * n + 1), *o = esc;
    if (esc) {
        for (size_t i = 0; i < n; i++) { *o++ = '\\'; *o++ = path[i]; }
        *o = 0;
        if (n && !fpattern_match(esc, path)) abort();
        free(esc);
    }
    free(buf);
    return 0;
}
