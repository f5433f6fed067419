/*
 * fpattern: glob matching for the actions' file_pattern argument (see
 * fpattern.h for the accepted syntax). A small backtracking matcher; patterns
 * are short and paths shallow, so the worst case stays far below a
 * microsecond-scale budget per path. Braces are expanded up front.
 */
#include "fpattern.h"
#include "langext.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Matches one character class starting at p (just after '['); sets *end past ']'.
 * Returns 1/0, or -1 when the class is not closed. */
static int class_match(const char *p, char c, const char **end)
{
    int neg = 0, hit = 0;
    if (*p == '!' || *p == '^') { neg = 1; p++; }
    const char *start = p;
    while (*p && (*p != ']' || p == start)) {
        char lo = *p;
        if (lo == '\\' && p[1]) lo = *++p;
        char hi = lo;
        if (p[1] == '-' && p[2] && p[2] != ']') {
            hi = p[2];
            if (hi == '\\' && p[3]) { hi = p[3]; p++; }
            p += 2;
        }
        if (c >= lo && c <= hi) hit = 1;
        p++;
    }
    if (*p != ']') return -1;
    *end = p + 1;
    return c != '/' && (hit ^ neg);
}

/* 1 match, 0 no match, or (for pruning, as in wildmatch) GLOB_ABORT_ALL: the
 * text ran out, so no later start of an enclosing star can match either, and
 * GLOB_ABORT_TO_STARSTAR: a '*' met a '/', which only a '**' can get past.
 * Without them a pattern of many stars backtracks exponentially. */
#define GLOB_ABORT_ALL (-1)
#define GLOB_ABORT_TO_STARSTAR (-2)

static int glob(const char *p, const char *s)
{
    while (*p) {
        if (p[0] == '*' && p[1] == '*' && (p[2] == '/' || p[2] == 0)) {
            /* '**' as a component: only where a component starts */
            if (p[2] == 0) return 1;
            const char *rest = p + 3;
            for (;;) {
                int r = glob(rest, s);
                if (r == 1 || r == GLOB_ABORT_ALL) return r;
                const char *slash = strchr(s, '/');
                if (!slash) return GLOB_ABORT_ALL;
                s = slash + 1;
            }
        }
        switch (*p) {
        case '*': {
            while (*p == '*') p++;
            for (;;) {
                int r = glob(p, s);
                if (r != 0) return r;
                if (*s == 0) return GLOB_ABORT_ALL;
                if (*s == '/') return GLOB_ABORT_TO_STARSTAR;
                s++;
            }
        }
        case '?':
            if (*s == 0) return GLOB_ABORT_ALL;
            if (*s == '/') return 0;
            p++; s++;
            break;
        case '[': {
            const char *end;
            if (*s == 0) return GLOB_ABORT_ALL;
            int r = class_match(p + 1, *s, &end);
            if (r < 0) { if (*s != '[') return 0; p++; s++; break; }
            if (!r) return 0;
            p = end; s++;
            break;
        }
        case '\\':
            if (p[1]) p++;
            /* fall through */
        default:
            if (*s == 0) return GLOB_ABORT_ALL;
            if (*p != *s) return 0;
            p++; s++;
        }
    }
    return *s == 0;
}

/* Whole path, or any tail of it after a '/'. */
static int match_tails(const char *p, const char *path)
{
    if (glob(p, path) == 1) return 1;
    for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/'))
        if (glob(p, s + 1) == 1) return 1;
    return 0;
}

static int match_one(const char *pat, const char *path)
{
    while (*pat == '/') pat++;
    while (pat[0] == '.' && pat[1] == '/') pat += 2;
    if (!*pat) return 1;
    size_t n = strlen(pat);
    char *dir = xmalloc(n + 4);
    memcpy(dir, pat, n);
    /* a directory matches the files below it */
    if (pat[n - 1] == '/') memcpy(dir + n, "**", 3);
    else memcpy(dir + n, "/**", 4);
    int r = (pat[n - 1] != '/' && match_tails(pat, path)) || match_tails(dir, path);
    free(dir);
    return r;
}

/* Expands the first {a,b,...} group and recurses; no group: match_one. */
static int match_braces(const char *pat, const char *path, int depth)
{
    const char *open = NULL;
    for (const char *p = pat; *p; p++) {
        if (*p == '\\' && p[1]) { p++; continue; }
        if (*p == '{') { open = p; break; }
    }
    const char *close = open ? strchr(open, '}') : NULL;
    if (!open || !close || depth > 8) return match_one(pat, path);
    size_t pre = (size_t)(open - pat), post = strlen(close + 1);
    const char *alt = open + 1;
    for (;;) {
        const char *e = alt;
        while (e < close && *e != ',') e++;
        size_t al = (size_t)(e - alt);
        char *x = xmalloc(pre + al + post + 1);
        memcpy(x, pat, pre);
        memcpy(x + pre, alt, al);
        memcpy(x + pre + al, close + 1, post + 1);
        int r = match_braces(x, path, depth + 1);
        free(x);
        if (r) return 1;
        if (e >= close) return 0;
        alt = e + 1;
    }
}

int fpattern_glob(const char *pattern, const char *path)
{
    return glob(pattern, path) == 1;
}

int fpattern_match(const char *pattern, const char *path)
{
    if (!pattern || !*pattern) return 1;
    return match_braces(pattern, path, 0);
}

char *fpattern_escape(const char *path)
{
    struct buf b = BUF_INIT;
    for (const char *p = path ? path : ""; *p; p++) {
        if (strchr("*?[]{}\\", *p)) buf_addc(&b, '\\');
        buf_addc(&b, *p);
    }
    return buf_take(&b);
}

int fpattern_valid(const char *pattern, char *err, unsigned long errlen)
{
    int brace = 0;
    for (const char *p = pattern; p && *p; p++) {
        if (*p == '\\' && p[1]) { p++; continue; }
        if (*p == '[') {
            const char *end;
            if (class_match(p + 1, 'a', &end) < 0) {
                snprintf(err, errlen, "file_pattern '%s' has an unclosed '[' (write \\[ for a literal bracket)", pattern);
                return 0;
            }
            p = end - 1;
        } else if (*p == '{') brace++;
        else if (*p == '}' && brace) brace--;
    }
    if (brace) {
        snprintf(err, errlen, "file_pattern '%s' has an unclosed '{' (write {a,b} for alternatives)", pattern);
        return 0;
    }
    return 1;
}

/* *.test.EXT or *.spec.EXT with an EXT of the JavaScript or TypeScript
 * rows of languages.def */
static int js_test_name(const char *base)
{
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) return 0;
    const char *lang = langext_language(dot, strlen(dot));
    if (!lang || (strcmp(lang, "javascript") && strcmp(lang, "typescript") && strcmp(lang, "tsx"))) return 0;
    size_t n = (size_t)(dot - base);
    return (n > 5 && !memcmp(dot - 5, ".test", 5)) || (n > 5 && !memcmp(dot - 5, ".spec", 5));
}

int fpattern_is_test(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((str_starts(base, "test_") && str_ends(base, ".py")) || str_ends(base, "_test.py") ||
        !strcmp(base, "tests.py") || !strcmp(base, "conftest.py") || str_ends(base, "_test.go") ||
        (str_ends(base, "Test.java") && strlen(base) > 9) || (str_ends(base, "Tests.java") && strlen(base) > 10) ||
        js_test_name(base))
        return 1;
    for (const char *p = path; p < base;) {
        const char *e = strchr(p, '/');
        size_t n = (size_t)(e - p);
        if ((n == 5 && !memcmp(p, "tests", 5)) || (n == 4 && !memcmp(p, "test", 4)) ||
            (n == 9 && !memcmp(p, "__tests__", 9)))
            return 1;
        p = e + 1;
    }
    return 0;
}
