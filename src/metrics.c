/*
 * metrics: file-hit@k and identifier recall (definitions in metrics.h), and
 * the two text scanners behind them: file paths mentioned in prose and names
 * in backticks. Pure functions over strings; no I/O and no model.
 */
#include "metrics.h"
#include "langext.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void strv_add(struct strv *s, const char *str)
{
    ARRAY_GROW(s->v, s->n, s->cap, 8);
    s->v[s->n++] = xstrdup(str);
}

int strv_has(const struct strv *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], str) == 0) return 1;
    return 0;
}

void strv_add_unique(struct strv *s, const char *str)
{
    if (!strv_has(s, str)) strv_add(s, str);
}

void strv_free(struct strv *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* ---- paths ---- */

/* Drops "./" and "/" prefixes. */
static const char *path_trim(const char *p)
{
    for (;;) {
        if (p[0] == '.' && p[1] == '/') p += 2;
        else if (p[0] == '/') p++;
        else return p;
    }
}

static size_t ncomponents(const char *p, size_t len)
{
    size_t n = len ? 1 : 0;
    for (size_t i = 0; i < len; i++)
        if (p[i] == '/') n++;
    return n;
}

/* Start of the last k components of p[0, len). */
static const char *last_components(const char *p, size_t len, size_t k)
{
    size_t seen = 0;
    for (size_t i = len; i > 0; i--)
        if (p[i - 1] == '/' && ++seen == k) return p + i;
    return p;
}

int metrics_path_match(const char *a, const char *b)
{
    if (!a || !b) return 0;
    a = path_trim(a);
    b = path_trim(b);
    size_t la = strlen(a), lb = strlen(b);
    while (la && a[la - 1] == '/') la--;
    while (lb && b[lb - 1] == '/') lb--;
    size_t na = ncomponents(a, la), nb = ncomponents(b, lb);
    size_t k = na < nb ? na : nb;
    if (k > 2) k = 2;
    if (k == 0) return 0;
    const char *sa = last_components(a, la, k), *sb = last_components(b, lb, k);
    size_t ra = la - (size_t)(sa - a), rb = lb - (size_t)(sb - b);
    return ra == rb && memcmp(sa, sb, ra) == 0;
}

/* Extensions that make a token a file path: the languages' (langext.h) and
 * these. A bare name (no '/') ending in .json is taken for a module
 * (`flask.json`), not a file. */
static const char *const file_exts[] = {
    "pyx", "kt", "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "rs", "rb", "php", "cs", "swift", "sh",
    "md", "rst", "txt", "toml", "cfg", "ini", "yaml", "yml", "json", "xml", "html", "css", "in",
};

static int known_ext(const char *tok, size_t len, int bare)
{
    size_t dot = len;
    while (dot > 0 && tok[dot - 1] != '.' && tok[dot - 1] != '/') dot--;
    if (dot == 0 || tok[dot - 1] != '.' || dot == 1 || tok[dot - 2] == '/' || tok[dot - 2] == '.') return 0;
    const char *ext = tok + dot;
    size_t el = len - dot;
    if (langext_language(ext - 1, el + 1)) return 1;
    for (size_t i = 0; i < ARRAY_LEN(file_exts); i++)
        if (strlen(file_exts[i]) == el && memcmp(file_exts[i], ext, el) == 0)
            return !(bare && strcmp(file_exts[i], "json") == 0);
    return 0;
}

static int path_char(char c)
{
    return is_word(c) || c == '.' || c == '/' || c == '-';
}

void metrics_paths_in_text(const char *text, struct strv *out)
{
    if (!text) return;
    const char *p = text;
    while (*p) {
        if (!path_char(*p)) { p++; continue; }
        const char *s = p;
        while (path_char(*p)) p++;
        size_t len = (size_t)(p - s);
        while (len && (s[len - 1] == '.' || s[len - 1] == '-' || s[len - 1] == '/')) len--;
        /* An URL's host or a "word.word" inside a longer dotted name is not a
         * file: the token must stand alone. */
        if (s > text && (s[-1] == ':' || s[-1] == '@')) continue;
        if (len && known_ext(s, len, memchr(s, '/', len) == NULL)) {
            char *tok = xstrndup(s, len);
            const char *t = path_trim(tok);
            if (*t) strv_add_unique(out, t);
            free(tok);
        }
    }
}

/* ---- identifiers ---- */

/* 1 when s[0, len) is a dotted name: [A-Za-z_][A-Za-z0-9_]* joined by '.'. */
static int dotted_name(const char *s, size_t len)
{
    int at_start = 1;
    if (!len) return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (at_start) {
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return 0;
            at_start = 0;
        } else if (c == '.') {
            at_start = 1;
        } else if (!is_word(c)) {
            return 0;
        }
    }
    return !at_start;
}

static void add_span(const char *s, size_t len, struct strv *out)
{
    while (len && (*s == ' ' || *s == '\t')) { s++; len--; }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    if (len && s[len - 1] == ')') {
        /* f(...) with one balanced group at the end: the name is f. */
        const char *open = memchr(s, '(', len);
        if (!open) return;
        int depth = 0;
        for (const char *c = open; c < s + len; c++) {
            if (*c == '(') depth++;
            else if (*c == ')' && --depth == 0 && c != s + len - 1) return;
        }
        if (depth != 0) return;
        len = (size_t)(open - s);
    }
    if (!dotted_name(s, len)) return;
    if (memchr(s, '.', len) && known_ext(s, len, 0)) return;   /* a file name such as app.py */
    char *name = xstrndup(s, len);
    strv_add_unique(out, name);
    free(name);
}

void metrics_identifiers_in_text(const char *text, struct strv *out)
{
    if (!text) return;
    const char *p = text;
    while (*p) {
        if (*p != '`') { p++; continue; }
        size_t run = 0;
        while (p[run] == '`') run++;
        const char *body = p + run;
        /* Find the closing run of the same length. */
        const char *q = body, *close = NULL;
        while (*q) {
            if (*q == '`') {
                size_t r = 0;
                while (q[r] == '`') r++;
                if (r == run) { close = q; break; }
                q += r;
                continue;
            }
            if (*q == '\n' && run < 3) break;   /* inline spans stay on one line */
            q++;
        }
        if (!close) { p = body; continue; }
        if (run < 3) add_span(body, (size_t)(close - body), out);   /* ``` fences hold code, not names */
        p = close + run;
    }
}

static int word_found(const char *needle, size_t nl, const char *text)
{
    if (!nl) return 0;
    for (const char *h = text; (h = strstr(h, needle)) != NULL; h++) {
        char before = h > text ? h[-1] : ' ', after = h[nl];
        int edge_l = is_word(needle[0]), edge_r = is_word(needle[nl - 1]);
        if ((!edge_l || !is_word(before)) && (!edge_r || !is_word(after))) return 1;
    }
    return 0;
}

int metrics_identifier_found(const char *ident, const char *text)
{
    if (!ident || !text || !*ident) return 0;
    if (word_found(ident, strlen(ident), text)) return 1;
    const char *dot = strrchr(ident, '.');
    if (dot && dot[1]) return word_found(dot + 1, strlen(dot + 1), text);
    return 0;
}

/* ---- per answer ---- */

void metrics_gold_init(struct metrics_gold *g, const char *const *files, size_t nfiles,
                       const char *const *idents, size_t nidents, const char *reference_text)
{
    memset(g, 0, sizeof *g);
    for (size_t i = 0; i < nfiles; i++)
        if (files[i] && *path_trim(files[i])) strv_add_unique(&g->files, path_trim(files[i]));
    if (!g->files.n) {
        metrics_paths_in_text(reference_text, &g->files);
        g->files_from_text = 1;
    }
    for (size_t i = 0; i < nidents; i++)
        if (idents[i] && *idents[i]) strv_add_unique(&g->idents, idents[i]);
    if (!g->idents.n) {
        metrics_identifiers_in_text(reference_text, &g->idents);
        g->idents_from_text = 1;
    }
}

void metrics_gold_free(struct metrics_gold *g)
{
    if (!g) return;
    strv_free(&g->files);
    strv_free(&g->idents);
}

static int file_hit(const struct metrics_gold *g, const char *const *cited, size_t ncited, size_t k, int distinct)
{
    if (!g->files.n) return -1;
    struct strv seen = STRV_INIT;
    int hit = 0;
    size_t taken = 0;
    for (size_t i = 0; i < ncited && taken < k && !hit; i++) {
        if (!cited[i] || !*path_trim(cited[i])) continue;
        const char *c = path_trim(cited[i]);
        if (distinct && strv_has(&seen, c)) continue;
        strv_add(&seen, c);
        taken++;
        for (size_t j = 0; j < g->files.n && !hit; j++) hit = metrics_path_match(c, g->files.v[j]);
    }
    strv_free(&seen);
    return hit;
}

int metrics_file_hit(const struct metrics_gold *g, const char *const *cited, size_t ncited, size_t k)
{
    return file_hit(g, cited, ncited, k, 1);
}

int metrics_file_hit_cites(const struct metrics_gold *g, const char *const *cited, size_t ncited, size_t k)
{
    return file_hit(g, cited, ncited, k, 0);
}

/* answer without its sentences that name what the repository lacks
 * (METRICS_ABSENT_LEAD up to the next ". "), malloc'd. */
static char *without_absent(const char *answer)
{
    size_t n = strlen(answer), lead = strlen(METRICS_ABSENT_LEAD), k = 0;
    char *out = xmalloc(n + 1);
    for (const char *p = answer; *p;) {
        const char *a = strstr(p, METRICS_ABSENT_LEAD);
        if (!a) a = p + strlen(p);
        memcpy(out + k, p, (size_t)(a - p));
        k += (size_t)(a - p);
        if (!*a) break;
        const char *e = strstr(a + lead, ". ");
        p = e ? e + 1 : a + strlen(a);
    }
    out[k] = 0;
    return out;
}

void metrics_compute(const struct metrics_gold *g, const char *const *cited, size_t ncited, const char *answer,
                     const char *evidence, struct metrics_result *r)
{
    memset(r, 0, sizeof *r);
    r->hit1 = metrics_file_hit(g, cited, ncited, 1);
    r->hit5 = metrics_file_hit(g, cited, ncited, 5);
    r->hit5c = metrics_file_hit_cites(g, cited, ncited, 5);
    r->idents_total = (int)g->idents.n;
    char *said = without_absent(answer ? answer : "");
    for (size_t i = 0; i < g->idents.n; i++)
        if (metrics_identifier_found(g->idents.v[i], said) ||
            metrics_identifier_found(g->idents.v[i], evidence ? evidence : ""))
            r->idents_found++;
    free(said);
    r->ident_recall = r->idents_total ? (double)r->idents_found / r->idents_total : -1.0;
}
