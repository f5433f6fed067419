/*
 * jsonx: finding a JSON object in free text and checking its fields (see
 * jsonx.h). A leading thinking block is skipped first. A candidate starts at
 * a '{' followed (after white space) by a quote or '}' -- every JSON object
 * does, and most prose braces do not (', and typographic quotes are let in
 * too, for the repairs); its end is found with a string-aware brace count and
 * the span is handed to cJSON, and when cJSON refuses it, to the repairs and
 * cJSON again. The next candidate is looked for after the end of this one,
 * valid or not: an object inside another, or inside a broken one, is part of
 * it, never a reply of its own. At most MAX_CANDIDATES candidates are tried,
 * and every byte is scanned, repaired and parsed at most a fixed number of
 * times, so the work stays linear in the reply size however hostile the
 * text.
 */
#include "jsonx.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CANDIDATES 64
#define MAX_DEPTH 1000   /* cJSON's nesting limit */

enum scan_end { SCAN_CLOSED, SCAN_OPEN, SCAN_TOO_DEEP };

/* From text[s] == '{': sets *end to the index of the matching '}'. Only
 * braces decide the match (cJSON judges brackets); both count toward depth. */
static enum scan_end match_braces(const char *t, size_t n, size_t s, size_t *end)
{
    int braces = 0, nest = 0, in_str = 0;
    for (size_t k = s; k < n; k++) {
        char ch = t[k];
        if (in_str) {
            if (ch == '\\') k++;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            if (++nest > MAX_DEPTH) return SCAN_TOO_DEEP;
            if (ch == '{') braces++;
        } else if (ch == '}' || ch == ']') {
            nest--;
            if (ch == '}' && --braces == 0) {
                *end = k;
                return SCAN_CLOSED;
            }
        }
    }
    return SCAN_OPEN;
}

static void snippet(const char *t, size_t n, size_t at, char *out, size_t outlen)
{
    size_t k = 0;
    for (size_t i = at; i < n && k + 1 < outlen && k < 24; i++)
        out[k++] = isprint((unsigned char)t[i]) ? t[i] : ' ';
    out[k] = 0;
}

/* ---- the repairs ---- */

enum {
    REP_COMMA = 1,      /* {"a": 1,} and [1, 2,] */
    REP_SQUOTE = 2,     /* {'a': 'b'} */
    REP_SMART = 4,      /* {“a”: “b”} */
    REP_COMMENT = 8,    /* // ... and / * ... * / outside strings */
    REP_PYLIT = 16,     /* True, False, None */
};

/* 3 when t[k] starts a typographic quote (U+2018, U+2019, U+201C, U+201D), else 0. */
static size_t smart_quote(const char *t, size_t n, size_t k)
{
    if (k + 2 >= n || (unsigned char)t[k] != 0xE2 || (unsigned char)t[k + 1] != 0x80) return 0;
    unsigned char c = (unsigned char)t[k + 2];
    return c == 0x98 || c == 0x99 || c == 0x9C || c == 0x9D ? 3 : 0;
}

/* Past white space and comments from k. */
static size_t skip_blank(const char *t, size_t n, size_t k)
{
    for (;;) {
        while (k < n && isspace((unsigned char)t[k])) k++;
        if (k + 1 < n && t[k] == '/' && t[k + 1] == '/') {
            while (k < n && t[k] != '\n') k++;
        } else if (k + 1 < n && t[k] == '/' && t[k + 1] == '*') {
            const char *e = memmem(t + k + 2, n - k - 2, "*/", 2);
            k = e ? (size_t)(e - t) + 2 : n;
        } else {
            return k;
        }
    }
}

/* A string delimited by ' or typographic quotes from t[k] into b as a JSON
 * string. It ends at its closing quote followed by what may follow a string
 * (':', ',', '}', ']'), so an apostrophe inside ("the router's") stays. */
static size_t alt_string(const char *t, size_t n, size_t k, struct buf *b, unsigned *what)
{
    int smart = t[k] != '\'';
    *what |= smart ? REP_SMART : REP_SQUOTE;
    k += smart ? 3 : 1;
    buf_addc(b, '"');
    while (k < n) {
        size_t q = smart ? smart_quote(t, n, k) : t[k] == '\'';
        if (q) {
            size_t j = skip_blank(t, n, k + q);
            if (j >= n || strchr(":,}]", t[j])) {
                buf_addc(b, '"');
                return k + q;
            }
        }
        if (t[k] == '\\' && k + 1 < n) {
            if (t[k + 1] != '\'') buf_addc(b, '\\');
            buf_addc(b, t[k + 1]);
            k += 2;
            continue;
        }
        if (t[k] == '"') buf_adds(b, "\\\"");
        else buf_addc(b, t[k]);
        k++;
    }
    return n;
}

/* The repaired text of the candidate t[0, n) (caller frees), *what saying
 * which repairs were made; NULL when there was nothing to repair. */
static char *repair(const char *t, size_t n, unsigned *what)
{
    struct buf b = BUF_INIT;
    *what = 0;
    size_t k = 0;
    while (k < n) {
        char ch = t[k];
        if (ch == '"') {   /* a JSON string, copied */
            buf_addc(&b, '"');
            for (k++; k < n && t[k] != '"'; k++) {
                if (t[k] == '\\' && k + 1 < n) {
                    buf_addc(&b, t[k++]);
                    buf_addc(&b, t[k]);
                } else {
                    buf_addc(&b, t[k]);
                }
            }
            if (k < n) {
                buf_addc(&b, '"');
                k++;
            }
        } else if (ch == '\'' || smart_quote(t, n, k)) {
            k = alt_string(t, n, k, &b, what);
        } else if (ch == ',' && skip_blank(t, n, k + 1) < n && strchr("}]", t[skip_blank(t, n, k + 1)])) {
            *what |= REP_COMMA;
            k++;
        } else if (ch == '/' && skip_blank(t, n, k) != k) {
            *what |= REP_COMMENT;
            k = skip_blank(t, n, k);
        } else if (isalpha((unsigned char)ch) && (k == 0 || !(isalnum((unsigned char)t[k - 1]) || t[k - 1] == '_'))) {
            size_t e = k;
            while (e < n && (isalnum((unsigned char)t[e]) || t[e] == '_')) e++;
            static const char *const py[][2] = {{"True", "true"}, {"False", "false"}, {"None", "null"}};
            const char *lit = NULL;
            for (size_t i = 0; i < ARRAY_LEN(py) && !lit; i++)
                if (e - k == strlen(py[i][0]) && memcmp(t + k, py[i][0], e - k) == 0) lit = py[i][1];
            if (lit) *what |= REP_PYLIT;
            if (lit) buf_adds(&b, lit);
            else buf_add(&b, t + k, e - k);
            k = e;
        } else {
            buf_addc(&b, ch);
            k++;
        }
    }
    if (!*what) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

static void describe_repairs(unsigned what, char *out, size_t n)
{
    static const struct { unsigned bit; const char *words; } names[] = {
        {REP_COMMA, "removed trailing commas"},
        {REP_SQUOTE, "read single-quoted strings as JSON strings"},
        {REP_SMART, "read typographic quotes as JSON quotes"},
        {REP_COMMENT, "removed comments"},
        {REP_PYLIT, "read True/False/None as true/false/null"},
    };
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < ARRAY_LEN(names) && len < n; i++)
        if (what & names[i].bit) len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", names[i].words);
}

/* ---- thinking, candidates ---- */

/* Where the reply proper starts in t[0, n): after a leading <think>...</think>
 * (or <thinking>...</thinking>) block; after the opening tag of such a block
 * never closed; after a closing tag that has no opening one (a chat template
 * that opened the block in the prompt: *orphan is set). 0 without thinking. */
static size_t thinking_end(const char *t, size_t n, int *orphan)
{
    static const char *const tags[][2] = {{"<think>", "</think>"}, {"<thinking>", "</thinking>"}};
    size_t i = 0;
    while (i < n && isspace((unsigned char)t[i])) i++;
    *orphan = 0;
    for (size_t k = 0; k < ARRAY_LEN(tags); k++) {
        size_t ol = strlen(tags[k][0]), cl = strlen(tags[k][1]);
        if (n - i < ol || memcmp(t + i, tags[k][0], ol) != 0) continue;
        const char *c = memmem(t + i + ol, n - i - ol, tags[k][1], cl);
        return c ? (size_t)(c - t) + cl : i + ol;
    }
    for (size_t k = 0; k < ARRAY_LEN(tags); k++) {
        size_t cl = strlen(tags[k][1]);
        const char *c = memmem(t, n, tags[k][1], cl);
        if (c) {
            *orphan = 1;
            return (size_t)(c - t) + cl;
        }
    }
    return 0;
}

/* Offers the candidates of text[i, n) to fn until it takes one (0). *offered
 * counts the valid (or repaired) objects offered; first_err describes the
 * first candidate that was not one. */
static int scan(const char *text, size_t i, size_t n, jsonx_object_fn fn, void *ctx, int *offered, char *first_err,
                size_t felen)
{
    int tried = 0;
    while (i < n && tried < MAX_CANDIDATES) {
        const char *p = memchr(text + i, '{', n - i);
        if (!p) break;
        size_t s = (size_t)(p - text), j = s + 1;
        while (j < n && isspace((unsigned char)text[j])) j++;
        if (j < n && text[j] != '"' && text[j] != '}' && text[j] != '\'' && !smart_quote(text, n, j)) {
            i = s + 1;
            continue;
        }
        tried++;
        size_t e = 0;
        enum scan_end r = j >= n ? SCAN_OPEN : match_braces(text, n, s, &e);
        if (r != SCAN_CLOSED) {
            /* An object that never closes runs to the end of the text:
             * whatever starts inside it is a fragment of it (a reply cut off
             * at max_tokens), not the answer. */
            if (!first_err[0] && r == SCAN_TOO_DEEP)
                snprintf(first_err, felen,
                         "the JSON object starting at byte %zu is nested more than %d levels deep; answer with a flat object",
                         s, MAX_DEPTH);
            else if (!first_err[0])
                snprintf(first_err, felen,
                         "the JSON object starting at byte %zu is never closed (the reply may have been cut off); "
                         "answer with one complete, shorter JSON object", s);
            break;
        }
        size_t len = e - s + 1;
        const char *stop = NULL;
        unsigned what = 0;
        cJSON *v = cJSON_ParseWithLengthOpts(text + s, len, &stop, 0);
        if (!cJSON_IsObject(v)) {
            cJSON_Delete(v);
            char *fixed = repair(text + s, len, &what);
            v = fixed ? cJSON_Parse(fixed) : NULL;
            free(fixed);
            if (!cJSON_IsObject(v)) {
                cJSON_Delete(v);
                v = NULL;
            }
            if (!v && !first_err[0]) {
                size_t at = stop && stop >= text + s && stop <= text + e + 1 ? (size_t)(stop - text) : s;
                char near[32];
                snippet(text, n, at, near, sizeof near);
                snprintf(first_err, felen,
                         "the JSON object starting at byte %zu is not valid JSON near byte %zu ('%s'); "
                         "use double-quoted keys and strings",
                         s, at, near);
            }
        }
        if (v) {
            char repairs[256];
            describe_repairs(what, repairs, sizeof repairs);
            struct jsonx_candidate c = {v, s, len, repairs};
            (*offered)++;
            int took = fn(ctx, &c) == 0;
            cJSON_Delete(v);
            if (took) return 0;
        }
        i = e + 1;
    }
    return 1;
}

int jsonx_each_object(const char *text, size_t n, jsonx_object_fn fn, void *ctx, char *err, size_t errlen)
{
    if (!text) {
        snprintf(err, errlen, "the reply is empty; answer with a single JSON object");
        return -1;
    }
    int orphan, offered = 0;
    char first_err[400] = "";
    size_t from = thinking_end(text, n, &orphan);
    if (scan(text, from, n, fn, ctx, &offered, first_err, sizeof first_err) == 0) return 0;
    /* A closing tag with no opening one may be a string value mentioning it. */
    if (orphan && !offered && !first_err[0] &&
        scan(text, 0, n, fn, ctx, &offered, first_err, sizeof first_err) == 0)
        return 0;
    if (offered) return 1;
    if (first_err[0])
        snprintf(err, errlen, "%s", first_err);
    else if (from > 0)
        snprintf(err, errlen, "the reply holds no JSON object after its thinking block; answer with a single JSON object");
    else
        snprintf(err, errlen, "the reply holds no JSON object; answer with a single JSON object");
    return -1;
}

struct first_ctx {
    size_t start, len;
    cJSON *obj;
};

static int take_first(void *ctx, const struct jsonx_candidate *c)
{
    struct first_ctx *f = ctx;
    f->start = c->start;
    f->len = c->len;
    return 0;
}

static int keep_first(void *ctx, const struct jsonx_candidate *c)
{
    ((struct first_ctx *)ctx)->obj = cJSON_Duplicate(c->obj, 1);
    return 0;
}

int jsonx_find_object(const char *text, size_t n, size_t *start, size_t *len, char *err, size_t errlen)
{
    struct first_ctx f = {0, 0, NULL};
    if (jsonx_each_object(text, n, take_first, &f, err, errlen) != 0) return -1;
    *start = f.start;
    *len = f.len;
    return 0;
}

cJSON *jsonx_parse_object(const char *text, char *err, size_t errlen)
{
    struct first_ctx f = {0, 0, NULL};
    if (jsonx_each_object(text, text ? strlen(text) : 0, keep_first, &f, err, errlen) != 0) return NULL;
    return f.obj;
}

void jsonx_check_init(struct jsonx_check *c)
{
    memset(c, 0, sizeof *c);
}

void jsonx_check_free(struct jsonx_check *c)
{
    if (!c) return;
    buf_free(&c->msg);
}

void jsonx_check_prefix(struct jsonx_check *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->prefix, sizeof c->prefix, fmt, ap);
    va_end(ap);
}

void jsonx_check_fail(struct jsonx_check *c, const char *fmt, ...)
{
    if (c->nerr++) buf_adds(&c->msg, "; ");
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&c->msg, fmt, ap);
    va_end(ap);
}

const char *jsonx_check_message(const struct jsonx_check *c) { return buf_str(&c->msg); }

/* "prefix.field" or "field", into out. */
static const char *fname(const struct jsonx_check *c, const char *field, char *out, size_t n)
{
    if (c->prefix[0]) snprintf(out, n, "%s.%s", c->prefix, field);
    else snprintf(out, n, "%s", field);
    return out;
}

/* What a value is, for messages: "\"high\" (a string)", "an object", ... */
static const char *describe(const cJSON *v, char *out, size_t n)
{
    if (cJSON_IsString(v)) {
        size_t l = strlen(v->valuestring);
        snprintf(out, n, "\"%.*s%s\" (a string)", utf8_cut(v->valuestring, 40), v->valuestring, l > 40 ? "..." : "");
    } else if (cJSON_IsNumber(v)) {
        snprintf(out, n, "%g (a number)", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        snprintf(out, n, "%s (a boolean)", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNull(v)) {
        snprintf(out, n, "null");
    } else if (cJSON_IsArray(v)) {
        snprintf(out, n, "an array");
    } else {
        snprintf(out, n, "an object");
    }
    return out;
}

static const cJSON *lookup(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, field) : NULL;
    if (v && !cJSON_IsNull(v)) return v;
    if (required) {
        char nm[200];
        jsonx_check_fail(c, "missing required field \"%s\"", fname(c, field, nm, sizeof nm));
    }
    return NULL;
}

/* Fails c with: field "F" must be what, got v. */
static void must_be(struct jsonx_check *c, const char *field, const char *what, const cJSON *v)
{
    char nm[200], d[80];
    jsonx_check_fail(c, "field \"%s\" must be %s, got %s", fname(c, field, nm, sizeof nm), what,
                     describe(v, d, sizeof d));
}

/* The field when it is present and is(field), else NULL (c failed when it
 * is of another type, or missing and required). */
static const cJSON *typed(struct jsonx_check *c, const cJSON *obj, const char *field, int required,
                          cJSON_bool (*is)(const cJSON *), const char *what)
{
    const cJSON *v = lookup(c, obj, field, required);
    if (v && !is(v)) {
        must_be(c, field, what, v);
        return NULL;
    }
    return v;
}

const char *jsonx_string(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    const cJSON *v = typed(c, obj, field, required, cJSON_IsString, "a string");
    if (!v) return NULL;
    if (required && !v->valuestring[0]) {
        char nm[200];
        jsonx_check_fail(c, "field \"%s\" must not be empty", fname(c, field, nm, sizeof nm));
        return NULL;
    }
    return v->valuestring;
}

/* A number, or a string holding exactly one. */
static int as_number(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) { *out = v->valuedouble; return 0; }
    if (!cJSON_IsString(v)) return -1;
    const char *s = v->valuestring;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return -1;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end || !isfinite(d)) return -1;
    *out = d;
    return 0;
}

int jsonx_number(struct jsonx_check *c, const cJSON *obj, const char *field, double lo, double hi, int required,
                 double *out)
{
    const cJSON *v = lookup(c, obj, field, required);
    if (!v) return required ? -1 : 0;
    double x;
    if (as_number(v, &x) || x < lo || x > hi) {
        char what[96];
        snprintf(what, sizeof what, "a number from %g to %g", lo, hi);
        must_be(c, field, what, v);
        return -1;
    }
    *out = x;
    return 1;
}

int jsonx_int(struct jsonx_check *c, const cJSON *obj, const char *field, long lo, long hi, int required, long *out)
{
    const cJSON *v = lookup(c, obj, field, required);
    if (!v) return required ? -1 : 0;
    double x;
    if (as_number(v, &x) || x != floor(x) || x < (double)lo || x > (double)hi) {
        char what[96];
        snprintf(what, sizeof what, "a whole number from %ld to %ld", lo, hi);
        must_be(c, field, what, v);
        return -1;
    }
    *out = (long)x;
    return 1;
}

int jsonx_bool(struct jsonx_check *c, const cJSON *obj, const char *field, int required, int *out)
{
    const cJSON *v = lookup(c, obj, field, required);
    if (!v) return required ? -1 : 0;
    if (!cJSON_IsBool(v)) {
        must_be(c, field, "true or false", v);
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 1;
}

const cJSON *jsonx_array(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    return typed(c, obj, field, required, cJSON_IsArray, "an array");
}

const cJSON *jsonx_object(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    return typed(c, obj, field, required, cJSON_IsObject, "an object");
}

int jsonx_enum(struct jsonx_check *c, const cJSON *obj, const char *field, const char *const *allowed, size_t n,
               int required)
{
    const cJSON *v = lookup(c, obj, field, required);
    char nm[200], d[80];
    if (!v) return -1;
    if (cJSON_IsString(v))
        for (size_t i = 0; i < n; i++)
            if (strcmp(v->valuestring, allowed[i]) == 0) return (int)i;
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < n; i++) buf_printf(&b, "%s%s", i ? ", " : "", allowed[i]);
    jsonx_check_fail(c, "field \"%s\" must be one of %s; got %s", fname(c, field, nm, sizeof nm), buf_str(&b),
                     describe(v, d, sizeof d));
    buf_free(&b);
    return -1;
}

/* x rounded to six decimals, so that 0.8 * 100 prints as 80. */
static double tidy(double x)
{
    return round(x * 1e6) / 1e6;
}

/* "X%" or "X/Y" as a score, or -1. */
static double written_score(const char *s)
{
    char *end;
    while (isspace((unsigned char)*s)) s++;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || errno || !isfinite(x) || x < 0) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end == '%') {
        for (end++; isspace((unsigned char)*end); end++) {}
        return *end || x > 100 ? -1 : x;
    }
    if (*end != '/') return -1;
    const char *d = end + 1;
    double y = strtod(d, &end);
    if (end == d || errno || !isfinite(y) || y <= 0 || x > y) return -1;
    while (isspace((unsigned char)*end)) end++;
    return *end ? -1 : tidy(x / y * 100);
}

int jsonx_score(struct jsonx_check *c, const cJSON *obj, const char *field, int required, double *out, char *how,
                size_t howlen)
{
    const cJSON *v = lookup(c, obj, field, required);
    how[0] = 0;
    if (!v) return required ? -1 : 0;
    double x;
    if (as_number(v, &x) == 0) {
        if (x > 0 && x < 1) {
            double y = tidy(x * 100);
            snprintf(how, howlen, "%s %g read as %g", field, x, y);
            x = y;
        }
    } else {
        x = cJSON_IsString(v) ? written_score(v->valuestring) : -1;
        if (x >= 0) snprintf(how, howlen, "%s \"%.*s\" read as %g", field, utf8_cut(v->valuestring, 20), v->valuestring, x);
    }
    if (!(x >= 0 && x <= 100)) {
        how[0] = 0;
        must_be(c, field, "a number from 0 to 100", v);
        return -1;
    }
    *out = x;
    return 1;
}

cJSON *jsonx_split_list(const char *s)
{
    cJSON *arr = cJSON_CreateArray();
    const char *sep = strchr(s, '\n') ? "\n" : strchr(s, ';') ? ";" : ",";
    while (*s) {
        size_t len = strcspn(s, sep);
        const char *a = s, *z = s + len;
        while (a < z && isspace((unsigned char)*a)) a++;
        if (z - a >= 2 && (a[0] == '-' || a[0] == '*') && a[1] == ' ') a += 2;
        while (z > a && isspace((unsigned char)z[-1])) z--;
        size_t n = (size_t)(z - a);
        int none = (n == 4 && strncasecmp(a, "none", 4) == 0) || (n == 3 && strncasecmp(a, "n/a", 3) == 0) ||
                   (n == 1 && *a == '-');
        if (n && !none) {
            char *item = xstrndup(a, n);
            cJSON_AddItemToArray(arr, cJSON_CreateString(item));
            free(item);
        }
        s += len;
        if (*s) s++;
    }
    return arr;
}
