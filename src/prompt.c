/*
 * prompt: finding, checking and rendering the role templates of the LLM
 * policy (see prompt.h for the search order, the placeholder syntax and the
 * truncation markers).
 */
#include "prompt.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DRQA_PKGDATADIR
#define DRQA_PKGDATADIR "/usr/local/share/drqa-tui"
#endif
#ifndef DRQA_SRCDIR
#define DRQA_SRCDIR "."
#endif

#define MARKER_RESERVE 48   /* room kept for "[... N bytes truncated ...]" */

size_t prompt_default_dirs(char **dirs, size_t max)
{
    size_t n = 0;
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (n < max && xdg && *xdg) dirs[n++] = xasprintf("%s/drqa-tui/prompts", xdg);
    else if (n < max && home && *home) dirs[n++] = xasprintf("%s/.config/drqa-tui/prompts", home);
    if (n < max) dirs[n++] = xasprintf("%s/prompts", DRQA_PKGDATADIR);
    if (n < max) dirs[n++] = xasprintf("%s/prompts", DRQA_SRCDIR);
    return n;
}

void prompt_free(struct prompt *p)
{
    if (!p) return;
    free(p->name);
    free(p->path);
    free(p->text);
    free(p);
}

/* Length of the placeholder identifier at s (just after "{{") when it is
 * followed by "}}", else 0. */
static size_t ident_len(const char *s)
{
    size_t k = 0;
    while ((s[k] >= 'a' && s[k] <= 'z') || s[k] == '_' || (k > 0 && s[k] >= '0' && s[k] <= '9')) k++;
    return k > 0 && s[k] == '}' && s[k + 1] == '}' ? k : 0;
}

static int in_list(const char *const *list, const char *name, size_t n)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strlen(list[i]) == n && memcmp(list[i], name, n) == 0) return 1;
    return 0;
}

static int line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *p = text; p < at; p++)
        if (*p == '\n') line++;
    return line;
}

static void list_names(struct buf *b, const char *const *allowed)
{
    for (size_t i = 0; allowed && allowed[i]; i++) buf_printf(b, "%s{{%s}}", i ? ", " : "", allowed[i]);
}

int prompt_check(const struct prompt *p, const char *const *allowed, char *err, size_t errlen)
{
    for (const char *s = strstr(p->text, "{{"); s; s = strstr(s + 2, "{{")) {
        size_t k = ident_len(s + 2);
        if (!k || in_list(allowed, s + 2, k)) continue;
        struct buf names = BUF_INIT;
        list_names(&names, allowed);
        snprintf(err, errlen, "%s:%d: unknown placeholder {{%.*s}}; the %s prompt may use %s", p->path,
                 line_of(p->text, s), (int)k, s + 2, p->name, names.len ? buf_str(&names) : "none");
        buf_free(&names);
        return -1;
    }
    return 0;
}

struct prompt *prompt_load(const char *name, const char *const *dirs, size_t ndirs,
                           const char *const *allowed, char *err, size_t errlen)
{
    char *defaults[PROMPT_MAX_DIRS];
    size_t ndef = 0;
    if (!dirs) {
        ndef = prompt_default_dirs(defaults, PROMPT_MAX_DIRS);
        dirs = (const char *const *)defaults;
        ndirs = ndef;
    }
    struct prompt *p = NULL;
    struct buf tried = BUF_INIT;
    for (size_t i = 0; i < ndirs && !p; i++) {
        char *path = xasprintf("%s/%s.txt", dirs[i], name);
        size_t len = 0;
        errno = 0;
        char *text = read_file(path, PROMPT_MAX_BYTES, &len);
        if (!text) {
            if (errno == ENOENT || errno == ENOTDIR) {
                buf_printf(&tried, "%s%s", tried.len ? ", " : "", path);
                free(path);
                continue;
            }
            snprintf(err, errlen, "%s: cannot read the %s prompt: %s", path, name,
                     errno == EFBIG ? "larger than 256 KiB" : strerror(errno));
            free(path);
            goto out;
        }
        if (memchr(text, 0, len)) {
            snprintf(err, errlen, "%s: the %s prompt holds a NUL byte; it must be plain text", path, name);
            free(text);
            free(path);
            goto out;
        }
        p = xcalloc(1, sizeof *p);
        p->name = xstrdup(name);
        p->path = path;
        p->text = text;
    }
    if (!p) {
        snprintf(err, errlen, "the %s prompt (%s.txt) was not found; looked for %s", name, name,
                 tried.len ? buf_str(&tried) : "(no directory)");
        goto out;
    }
    if (allowed && prompt_check(p, allowed, err, errlen) != 0) {
        prompt_free(p);
        p = NULL;
    }
out:
    buf_free(&tried);
    for (size_t i = 0; i < ndef; i++) free(defaults[i]);
    return p;
}

/* Backs n up so that s[0, n) does not end inside a UTF-8 sequence. */
static size_t utf8_floor(const char *s, size_t n)
{
    size_t k = n;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return k;
}

char *prompt_cap(const char *s, size_t cap, int keep_tail)
{
    if (!s) return xstrdup("");
    size_t len = strlen(s);
    if (cap == 0 || len <= cap) return xstrdup(s);
    if (cap < 2 * MARKER_RESERVE) cap = 2 * MARKER_RESERVE;
    size_t keep = cap - MARKER_RESERVE;
    struct buf b = BUF_INIT;
    if (!keep_tail) {
        size_t k = utf8_floor(s, keep);
        const char *nl = memrchr(s, '\n', k);
        if (nl && (size_t)(nl - s) >= k / 2) k = (size_t)(nl - s) + 1;
        buf_add(&b, s, k);
        if (k && s[k - 1] != '\n') buf_addc(&b, '\n');
        buf_printf(&b, "[... %zu bytes truncated ...]", len - k);
    } else {
        size_t start = len - keep;
        while (start < len && ((unsigned char)s[start] & 0xC0) == 0x80) start++;
        const char *nl = memchr(s + start, '\n', len - start);
        if (nl && (size_t)(nl - s) + 1 - start <= keep / 2) start = (size_t)(nl - s) + 1;
        buf_printf(&b, "[... %zu bytes truncated ...]\n", start);
        buf_add(&b, s + start, len - start);
    }
    return buf_take(&b);
}

char *prompt_render(const struct prompt *p, const struct prompt_var *vars, size_t nvars, char *err,
                    size_t errlen)
{
    struct buf b = BUF_INIT;
    const char *s = p->text;
    for (;;) {
        const char *o = strstr(s, "{{");
        if (!o) {
            buf_adds(&b, s);
            break;
        }
        size_t k = ident_len(o + 2);
        if (!k) {   /* literal "{{" */
            buf_add(&b, s, (size_t)(o - s) + 2);
            s = o + 2;
            continue;
        }
        buf_add(&b, s, (size_t)(o - s));
        const struct prompt_var *v = NULL;
        for (size_t i = 0; i < nvars && !v; i++)
            if (strlen(vars[i].name) == k && memcmp(vars[i].name, o + 2, k) == 0) v = &vars[i];
        if (!v) {
            snprintf(err, errlen, "%s:%d: placeholder {{%.*s}} has no value in the %s prompt", p->path,
                     line_of(p->text, o), (int)k, o + 2, p->name);
            buf_free(&b);
            return NULL;
        }
        char *val = prompt_cap(v->value, v->cap, 0);
        buf_adds(&b, val);
        free(val);
        s = o + 2 + k + 2;
    }
    return buf_take(&b);
}
