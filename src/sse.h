/*
 * sse: a reader of Server-Sent Events (text/event-stream, the WHATWG HTML
 * living standard's "event stream interpretation"), fed with whatever byte
 * runs a transport hands it. Lines may be split anywhere across runs and end
 * in "\n", "\r\n" or a lone "\r"; a line starting with ':' is a comment;
 * "event:" names the next event; "data:" lines are joined with "\n"; a blank
 * line dispatches the event (none when it had no data); "id:" and "retry:"
 * are read and ignored; one space after the colon is dropped. An event left
 * without its blank line at the end of the stream is not dispatched. Sizes
 * are bounded: a line or an event's data longer than max fails the stream.
 */
#ifndef DRQA_SSE_H
#define DRQA_SSE_H

#include "util.h"

#include <stddef.h>

/* One dispatched event: its name ("message" when none was given) and data
 * (NUL-terminated, len bytes; valid during the call). Returns 0 to go on,
 * nonzero to stop the stream (sse_feed returns that value). */
typedef int (*sse_event_fn)(void *ud, const char *event, const char *data, size_t len);

struct sse {
    struct buf line;           /* the line being read */
    struct buf data;           /* the event's data so far, each line with its "\n" */
    char event[64];            /* the event's name, "" when none given */
    int after_cr;              /* the last byte was a "\r": a "\n" next ends nothing */
    int any_data;              /* a data: line was seen since the last dispatch */
    size_t max;                /* bound of a line and of an event's data */
    sse_event_fn fn;
    void *ud;
};

#define SSE_TOO_LARGE (-1)     /* sse_feed: a line or an event passed max bytes */

/* max 0: 1 MiB. */
void sse_init(struct sse *s, size_t max, sse_event_fn fn, void *ud);
/* Reads n bytes; returns 0, fn's nonzero value, or SSE_TOO_LARGE. */
int sse_feed(struct sse *s, const char *p, size_t n);
/* Frees the buffers (the reader may be fed again after sse_init). NULL ok. */
void sse_free(struct sse *s);

#endif
