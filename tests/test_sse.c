/* Tests for the event-stream reader: a recorded stream with every line form
 * (comments, event names, multi-line data, "\r\n", a lone "\r", no space after
 * the colon, id and retry fields, an unterminated last event) gives the same
 * events whole, byte by byte and cut at every split point into two and three
 * runs; bounded sizes; a stop asked by the callback. */
#include "tap.h"
#include "sse.h"

#include <stdlib.h>
#include <string.h>

static const char stream[] =
    ": keep-alive comment\n"
    "event: message_start\r\n"
    "data: {\"type\":\"message_start\"}\r\n"
    "\r\n"
    "data:no space\n"
    "data:  two spaces\n"
    "data\n"
    "\n"
    "id: 7\n"
    "retry: 100\n"
    "event: ping\rdata: {}\r\r"
    "event: named\n"
    "data: first\n"
    "data: second\n"
    "\n"
    "event: empty-is-not-dispatched\n"
    "\n"
    "data: after a dropped name\n"
    "\n"
    "data: [DONE]\n"
    "\n"
    "data: unterminated at the end";

static const char want[] =
    "message_start|{\"type\":\"message_start\"}\n"
    "message|no space\n two spaces\n\n"
    "ping|{}\n"
    "named|first\nsecond\n"
    "message|after a dropped name\n"
    "message|[DONE]\n";

static int collect(void *ud, const char *event, const char *data, size_t len)
{
    struct buf *b = ud;
    buf_printf(b, "%s|%.*s\n", event, (int)len, data);
    return strlen(data) != len;   /* data is NUL-terminated at len */
}

static char *run(size_t cut1, size_t cut2)
{
    struct buf out = BUF_INIT;
    struct sse s;
    sse_init(&s, 0, collect, &out);
    size_t n = sizeof stream - 1;
    int rc = sse_feed(&s, stream, cut1);
    rc |= sse_feed(&s, stream + cut1, cut2 - cut1);
    rc |= sse_feed(&s, stream + cut2, n - cut2);
    sse_free(&s);
    if (rc) buf_adds(&out, "(error)");
    return buf_take(&out);
}

static int stop_at_second(void *ud, const char *event, const char *data, size_t len)
{
    (void)event; (void)data; (void)len;
    return ++*(int *)ud == 2 ? 7 : 0;
}

int main(void)
{
    size_t n = sizeof stream - 1;
    char *whole = run(n, n);
    is_str(whole, want, "the whole stream gives its events");
    free(whole);

    int bad2 = 0;
    for (size_t i = 0; i <= n; i++) {
        char *got = run(i, i);
        if (strcmp(got, want)) bad2++;
        free(got);
    }
    is_int(bad2, 0, "every split into two runs gives the same events");

    int bad3 = 0;
    for (size_t i = 0; i <= n; i++)
        for (size_t j = i; j <= n; j += 3) {
            char *got = run(i, j);
            if (strcmp(got, want)) bad3++;
            free(got);
        }
    is_int(bad3, 0, "splits into three runs give the same events");

    struct buf out = BUF_INIT;
    struct sse s;
    sse_init(&s, 0, collect, &out);
    for (size_t i = 0; i < n; i++) sse_feed(&s, stream + i, 1);
    sse_free(&s);
    is_str(buf_str(&out), want, "byte by byte gives the same events");
    buf_free(&out);

    sse_init(&s, 16, collect, &out);
    is_int(sse_feed(&s, "data: 0123456789abcdefghij", 26), SSE_TOO_LARGE, "a line over the bound fails");
    sse_free(&s);
    sse_init(&s, 16, collect, &out);
    int rc = 0;
    for (int i = 0; i < 8 && !rc; i++) rc = sse_feed(&s, "data: 0123\n", 11);
    is_int(rc, SSE_TOO_LARGE, "an event whose data passes the bound fails");
    sse_free(&s);
    buf_free(&out);

    int calls = 0;
    sse_init(&s, 0, stop_at_second, &calls);
    rc = sse_feed(&s, "data: a\n\ndata: b\n\ndata: c\n\n", 27);
    is_int(rc, 7, "the callback's nonzero stops the stream and is returned");
    is_int(calls, 2, "no event is read after the stop");
    sse_free(&s);
    return done_testing();
}
