/*
 * url: joining an API path into a base URL and redacting the credentials a
 * URL can carry (see url.h). Only the shape of a URL is looked at: scheme,
 * authority up to the first '/', '?' or '#', path, query, fragment.
 */
#include "url.h"
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REDACTED "[redacted]"

/* Where the authority of url starts (after "scheme://"), or url itself. */
static const char *authority(const char *url)
{
    const char *s = strstr(url, "://");
    return s ? s + 3 : url;
}

/* The length of url's part before its query or fragment. */
static size_t before_query(const char *url)
{
    const char *a = authority(url);
    return (size_t)(a - url) + strcspn(a, "?#");
}

char *url_join(const char *base, const char *path)
{
    size_t n = before_query(base);
    size_t host = (size_t)(authority(base) - base);
    while (n > host && base[n - 1] == '/') n--;
    return xasprintf("%.*s%s%s", (int)n, base, path, base + before_query(base));
}

int url_path_ends(const char *url, const char *suffix)
{
    size_t n = before_query(url), sl = strlen(suffix);
    while (n && url[n - 1] == '/') n--;
    return n >= sl && memcmp(url + n - sl, suffix, sl) == 0;
}

/* Adds url[0, n) to b, redacted. */
static void redact_into(struct buf *b, const char *url, size_t n)
{
    const char *end = url + n, *a = strstr(url, "://");
    a = a && a < end ? a + 3 : url;
    const char *auth_end = a;
    while (auth_end < end && !strchr("/?#", *auth_end)) auth_end++;
    const char *at = NULL;
    for (const char *p = a; p < auth_end; p++)
        if (*p == '@') at = p;
    buf_add(b, url, (size_t)(a - url));
    if (at) {
        buf_adds(b, REDACTED);
        a = at;
    }
    const char *q = a;
    while (q < end && *q != '?' && *q != '#') q++;
    buf_add(b, a, (size_t)(q - a));
    if (q == end || *q == '#') {
        buf_add(b, q, (size_t)(end - q));
        return;
    }
    /* the query: name=value pairs split by '&' or ';' */
    const char *p = q;
    while (p < end && *p != '#') {
        buf_addc(b, *p++);   /* '?', '&' or ';' */
        const char *pe = p;
        while (pe < end && !strchr("&;#", *pe)) pe++;
        const char *eq = memchr(p, '=', (size_t)(pe - p));
        if (eq && str_secret_name(p, (size_t)(eq - p))) {
            buf_add(b, p, (size_t)(eq + 1 - p));
            buf_adds(b, REDACTED);
        } else {
            buf_add(b, p, (size_t)(pe - p));
        }
        p = pe;
    }
    buf_add(b, p, (size_t)(end - p));
}

char *url_redact(const char *url)
{
    struct buf b = BUF_INIT;
    redact_into(&b, url ? url : "", strlen(url ? url : ""));
    return buf_take(&b);
}

/* The next "http://" or "https://" in s (any case), or NULL. */
static const char *next_url(const char *s)
{
    for (; *s; s++)
        if ((*s == 'h' || *s == 'H') && (!strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8))) return s;
    return NULL;
}

char *url_redact_text(const char *text)
{
    struct buf b = BUF_INIT;
    const char *s = text ? text : "", *u;
    while ((u = next_url(s))) {
        buf_add(&b, s, (size_t)(u - s));
        size_t n = strcspn(u, " \t\r\n\"'`<>");
        redact_into(&b, u, n);
        s = u + n;
    }
    buf_adds(&b, s);
    return buf_take(&b);
}

static void drop_value(char **text, const char *v, size_t n)
{
    if (n < 4) return;
    char *r = str_redact(*text, v, n);
    free(*text);
    *text = r;
}

char *url_redact_echo(const char *text, const char *url)
{
    char *out = xstrdup(text ? text : "");
    if (url) {
        const char *a = authority(url), *end = a + strcspn(a, "/?#"), *at = NULL;
        for (const char *p = a; p < end; p++)
            if (*p == '@') at = p;
        if (at) {
            const char *colon = memchr(a, ':', (size_t)(at - a));
            drop_value(&out, a, (size_t)(at - a));
            if (colon) drop_value(&out, colon + 1, (size_t)(at - colon - 1));
        }
        const char *q = strchr(end, '?');
        for (const char *p = q; p && *p && *p != '#';) {
            p++;
            const char *pe = p + strcspn(p, "&;#");
            const char *eq = memchr(p, '=', (size_t)(pe - p));
            if (eq && str_secret_name(p, (size_t)(eq - p))) drop_value(&out, eq + 1, (size_t)(pe - eq - 1));
            p = pe;
        }
    }
    char *r = url_redact_text(out);
    free(out);
    return r;
}

void url_redact_buf(char *s, size_t size)
{
    if (!s || !size || !next_url(s)) return;
    char *r = url_redact_text(s);
    snprintf(s, size, "%s", r);
    free(r);
}
