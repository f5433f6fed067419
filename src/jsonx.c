/*
 * jsonx: finding a JSON object in free text and checking its fields (see
 * jsonx.h). A candidate starts at a '{' followed (after white space) by '"' or
 * '}' -- every JSON object does, and most prose braces do not (a ' is let in
 * too, so that a Python-style dict gets a useful error); its end is found
 * with a string-aware brace count and the span is handed to cJSON. At most
 * MAX_CANDIDATES candidates are tried, so the work stays linear in the reply
 * size however hostile the text.
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

int jsonx_find_object(const char *text, size_t n, size_t *start, size_t *len, char *err, size_t errlen)
{
    char first_err[400] = "";
    int tried = 0;
    size_t i = 0;
    while (i < n && tried < MAX_CANDIDATES) {
        const char *p = memchr(text + i, '{', n - i);
        if (!p) break;
        size_t s = (size_t)(p - text), j = s + 1;
        while (j < n && isspace((unsigned char)text[j])) j++;
        if (j < n && text[j] != '"' && text[j] != '}' && text[j] != '\'') { i = s + 1; continue; }
        tried++;
        size_t e = 0;
        enum scan_end r = j >= n ? SCAN_OPEN : match_braces(text, n, s, &e);
        if (r == SCAN_CLOSED) {
            const char *stop = NULL;
            cJSON *v = cJSON_ParseWithLengthOpts(text + s, e - s + 1, &stop, 0);
            int is_obj = cJSON_IsObject(v);
            cJSON_Delete(v);
            if (is_obj) {
                *start = s;
                *len = e - s + 1;
                return 0;
            }
            if (!first_err[0]) {
                size_t at = stop && stop >= text + s && stop <= text + e + 1 ? (size_t)(stop - text) : s;
                char near[32];
                snippet(text, n, at, near, sizeof near);
                snprintf(first_err, sizeof first_err,
                         "the JSON object starting at byte %zu is not valid JSON near byte %zu ('%s'); "
                         "use double-quoted keys and strings, no trailing commas and no comments",
                         s, at, near);
            }
        } else if (!first_err[0]) {
            if (r == SCAN_TOO_DEEP)
                snprintf(first_err, sizeof first_err,
                         "the JSON object starting at byte %zu is nested more than %d levels deep; answer with a flat object",
                         s, MAX_DEPTH);
            else
                snprintf(first_err, sizeof first_err,
                         "the JSON object starting at byte %zu is never closed (the reply may have been cut off); "
                         "answer with one complete, shorter JSON object", s);
        }
        /* An object that never closes runs to the end of the text: whatever
         * starts inside it is a fragment of it (a reply cut off at max_tokens),
         * not the answer. */
        if (r != SCAN_CLOSED) break;
        i = s + 1;
    }
    if (first_err[0])
        snprintf(err, errlen, "%s", first_err);
    else
        snprintf(err, errlen, "the reply holds no JSON object; answer with a single JSON object");
    return -1;
}

cJSON *jsonx_parse_object(const char *text, char *err, size_t errlen)
{
    size_t s, n;
    if (!text) {
        snprintf(err, errlen, "the reply is empty; answer with a single JSON object");
        return NULL;
    }
    if (jsonx_find_object(text, strlen(text), &s, &n, err, errlen)) return NULL;
    return cJSON_ParseWithLength(text + s, n);
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

const char *jsonx_string(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    const cJSON *v = lookup(c, obj, field, required);
    char nm[200], d[80];
    if (!v) return NULL;
    if (!cJSON_IsString(v)) {
        jsonx_check_fail(c, "field \"%s\" must be a string, got %s", fname(c, field, nm, sizeof nm),
                         describe(v, d, sizeof d));
        return NULL;
    }
    if (required && !v->valuestring[0]) {
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
    char nm[200], d[80];
    if (!v) return required ? -1 : 0;
    double x;
    if (as_number(v, &x) || x < lo || x > hi) {
        jsonx_check_fail(c, "field \"%s\" must be a number from %g to %g, got %s", fname(c, field, nm, sizeof nm),
                         lo, hi, describe(v, d, sizeof d));
        return -1;
    }
    *out = x;
    return 1;
}

int jsonx_int(struct jsonx_check *c, const cJSON *obj, const char *field, long lo, long hi, int required, long *out)
{
    const cJSON *v = lookup(c, obj, field, required);
    char nm[200], d[80];
    if (!v) return required ? -1 : 0;
    double x;
    if (as_number(v, &x) || x != floor(x) || x < (double)lo || x > (double)hi) {
        jsonx_check_fail(c, "field \"%s\" must be a whole number from %ld to %ld, got %s",
                         fname(c, field, nm, sizeof nm), lo, hi, describe(v, d, sizeof d));
        return -1;
    }
    *out = (long)x;
    return 1;
}

int jsonx_bool(struct jsonx_check *c, const cJSON *obj, const char *field, int required, int *out)
{
    const cJSON *v = lookup(c, obj, field, required);
    char nm[200], d[80];
    if (!v) return required ? -1 : 0;
    if (!cJSON_IsBool(v)) {
        jsonx_check_fail(c, "field \"%s\" must be true or false, got %s", fname(c, field, nm, sizeof nm),
                         describe(v, d, sizeof d));
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 1;
}

const cJSON *jsonx_array(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    const cJSON *v = lookup(c, obj, field, required);
    char nm[200], d[80];
    if (!v) return NULL;
    if (!cJSON_IsArray(v)) {
        jsonx_check_fail(c, "field \"%s\" must be an array, got %s", fname(c, field, nm, sizeof nm),
                         describe(v, d, sizeof d));
        return NULL;
    }
    return v;
}

const cJSON *jsonx_object(struct jsonx_check *c, const cJSON *obj, const char *field, int required)
{
    const cJSON *v = lookup(c, obj, field, required);
    char nm[200], d[80];
    if (!v) return NULL;
    if (!cJSON_IsObject(v)) {
        jsonx_check_fail(c, "field \"%s\" must be an object, got %s", fname(c, field, nm, sizeof nm),
                         describe(v, d, sizeof d));
        return NULL;
    }
    return v;
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
