/*
 * evq_next.h: the next event of a queue for the tests that watch a worker
 * through its events. Include after tap.h and evq.h (with poll.h).
 */
#ifndef DRQA_EVQ_NEXT_H
#define DRQA_EVQ_NEXT_H

#include "evq.h"

#include <poll.h>

/* Next event, or 0 when none came for 20 s (a hang, reported as a failure). */
static int next_event(struct evq *q, struct evq_event *e)
{
    for (;;) {
        if (evq_pop(q, e)) return 1;
        struct pollfd p = {evq_wake_fd(q), POLLIN, 0};
        if (poll(&p, 1, 20000) <= 0) return 0;
        evq_drain_wake(q);
    }
}

#endif
