/*
 * ignore: gitignore-style rules (see ignore.h). The glob itself is
 * fpattern_glob, the one the actions' file_pattern uses; this module adds
 * git's line syntax, anchoring, directory-only rules and precedence.
 */
#include "ignore.h"
#include "fpattern.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void parse_line(struct ignore_file *f, char *s, size_t n, int line, size_t *cap)
{
    /* trailing spaces go unless escaped with a backslash */
    while (n > 0 && s[n - 1] == ' ') {
        size_t bs = 0;
        while (bs + 1 < n && s[n - 2 - bs] == '\\') bs++;
        if (bs % 2) break;
        n--;
    }
    s[n] = 0;
    if (n == 0 || s[0] == '#') return;
    struct ignore_rule r = {.line = line, .text = xstrdup(s)};
    char *p = s;
    if (*p == '!') {
        r.negate = 1;
        p++;
    }
    size_t m = strlen(p);
    if (m > 0 && p[m - 1] == '/' && (m < 2 || p[m - 2] != '\\')) {
        r.dironly = 1;
        p[--m] = 0;
    }
    /* a separator at the start or in the middle anchors the pattern */
    for (const char *q = p; *q; q++) {
        if (*q == '\\' && q[1]) { q++; continue; }
        if (*q == '/') { r.anchored = 1; break; }
    }
    while (*p == '/') p++;
    if (!*p) {
        free(r.text);
        return;
    }
    r.pat = xstrdup(p);
    ARRAY_GROW(f->rules, f->nrules, *cap, 8);
    f->rules[f->nrules++] = r;
}

struct ignore_file *ignore_file_parse(const char *dir, const char *name, const char *text, size_t len)
{
    struct ignore_file *f = xcalloc(1, sizeof *f);
    f->base = xstrdup(dir);
    f->baselen = strlen(dir);
    f->path = *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
    size_t cap = 0;
    int line = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len;
        line++;
        char *s = xstrndup(text + i, e - i);
        parse_line(f, s, strlen(s), line, &cap);   /* a NUL inside ends the line */
        free(s);
        i = e + 1;
    }
    return f;
}

void ignore_file_free(struct ignore_file *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->nrules; i++) {
        free(f->rules[i].pat);
        free(f->rules[i].text);
    }
    free(f->rules);
    free(f->path);
    free(f->base);
    free(f);
}

static int rule_matches(const struct ignore_rule *r, const char *sub, int is_dir)
{
    if (r->dironly && !is_dir) return 0;
    if (r->anchored) return fpattern_glob(r->pat, sub);
    const char *slash = strrchr(sub, '/');
    return fpattern_glob(r->pat, slash ? slash + 1 : sub);
}

const struct ignore_rule *ignore_decide(struct ignore_file *const *files, size_t n, const char *rel, int is_dir,
                                        const struct ignore_file **from)
{
    for (size_t k = n; k-- > 0;) {
        const struct ignore_file *f = files[k];
        const char *sub = rel;
        if (f->baselen) {
            if (strncmp(rel, f->base, f->baselen) != 0 || rel[f->baselen] != '/') continue;
            sub = rel + f->baselen + 1;
        }
        for (size_t i = f->nrules; i-- > 0;)
            if (rule_matches(&f->rules[i], sub, is_dir)) {
                if (from) *from = f;
                return &f->rules[i];
            }
    }
    return NULL;
}

char *ignore_rule_describe(const struct ignore_file *f, const struct ignore_rule *r)
{
    return xasprintf("%s:%d: %s", f->path, r->line, r->text);
}
