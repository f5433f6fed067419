/*
 * sse: the event-stream line reader (see sse.h). Bytes are gathered into the
 * current line until its end; each whole line is then read as a field.
 */
#include "sse.h"

#include <string.h>

void sse_init(struct sse *s, size_t max, sse_event_fn fn, void *ud)
{
    memset(s, 0, sizeof *s);
    s->max = max ? max : (size_t)1 << 20;
    s->line.max = s->max;
    s->data.max = s->max + 1;
    s->fn = fn;
    s->ud = ud;
}

void sse_free(struct sse *s)
{
    if (!s) return;
    buf_free(&s->line);
    buf_free(&s->data);
}

/* The blank line: hands the event over when it had data. */
static int dispatch(struct sse *s)
{
    int rc = 0;
    if (s->any_data) {
        size_t n = s->data.len;
        if (n && s->data.data[n - 1] == '\n') s->data.data[--n] = 0;   /* the last line's "\n" */
        rc = s->fn(s->ud, s->event[0] ? s->event : "message", n ? s->data.data : "", n);
    }
    buf_reset(&s->data);
    s->event[0] = 0;
    s->any_data = 0;
    return rc;
}

/* One whole line (without its end). */
static int field(struct sse *s, const char *l, size_t n)
{
    if (!n) return dispatch(s);
    if (l[0] == ':') return 0;   /* a comment (a keep-alive, often) */
    const char *colon = memchr(l, ':', n);
    size_t nl = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    size_t vn = (size_t)(l + n - v);
    if (vn && *v == ' ') { v++; vn--; }
    if (nl == 4 && !memcmp(l, "data", 4)) {
        if (buf_add(&s->data, v, vn) || buf_addc(&s->data, '\n')) return SSE_TOO_LARGE;
        s->any_data = 1;
    } else if (nl == 5 && !memcmp(l, "event", 5)) {
        if (vn >= sizeof s->event) vn = sizeof s->event - 1;   /* no name the APIs use is this long */
        memcpy(s->event, v, vn);
        s->event[vn] = 0;
    }
    return 0;   /* id, retry and unknown fields are ignored */
}

int sse_feed(struct sse *s, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s->after_cr && p[i] == '\n') {   /* the "\n" of a "\r\n" split from its "\r" */
            s->after_cr = 0;
            i++;
            continue;
        }
        s->after_cr = 0;
        size_t j = i;
        while (j < n && p[j] != '\n' && p[j] != '\r') j++;
        if (j > i && buf_add(&s->line, p + i, j - i)) return SSE_TOO_LARGE;
        if (j == n) break;   /* the line goes on in the next run */
        if (p[j] == '\r') s->after_cr = 1;
        int rc = field(s, s->line.len ? s->line.data : "", s->line.len);
        buf_reset(&s->line);
        if (rc) return rc;
        i = j + 1;
    }
    return 0;
}
