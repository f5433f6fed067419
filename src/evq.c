/*
 * evq: the event queue with its wake pipe and the command queue with its
 * condvar. Both are growable ring buffers under one mutex each. See evq.h.
 */
#include "evq.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const kind_names[] = {
    [EVQ_QUESTION] = "question",
    [EVQ_NODE_ADDED] = "node-added", [EVQ_NODE_UPDATED] = "node-updated",
    [EVQ_REPORT] = "report",         [EVQ_EVIDENCE] = "evidence",
    [EVQ_LOG] = "log",               [EVQ_STATE] = "state",
    [EVQ_ANSWER] = "answer",         [EVQ_TOKENS] = "tokens",
    [EVQ_UCT] = "uct",               [EVQ_ANSWER_DELTA] = "answer-delta",
};

static const char *const state_names[] = {
    [EVQ_STATE_IDLE] = "idle",           [EVQ_STATE_INDEXING] = "indexing",
    [EVQ_STATE_SEARCHING] = "searching", [EVQ_STATE_PAUSED] = "paused",
    [EVQ_STATE_ANSWERING] = "answering", [EVQ_STATE_DONE] = "done",
    [EVQ_STATE_ERROR] = "error",
};

static const char *const cmd_names[] = {
    [CMD_PAUSE] = "pause",   [CMD_RESUME] = "resume", [CMD_STEP] = "step",
    [CMD_PRUNE] = "prune",   [CMD_EXPAND] = "expand", [CMD_FINISH] = "finish",
    [CMD_NEW_QUESTION] = "new-question", [CMD_QUIT] = "quit", [CMD_EXPORT] = "export",
};

const char *evq_kind_name(enum evq_kind k)
{
    return (unsigned)k < ARRAY_LEN(kind_names) ? kind_names[k] : "unknown";
}

const char *evq_state_name(enum evq_state s)
{
    return (unsigned)s < ARRAY_LEN(state_names) ? state_names[s] : "unknown";
}

const char *cmdq_kind_name(enum cmdq_kind k)
{
    return (unsigned)k < ARRAY_LEN(cmd_names) ? cmd_names[k] : "unknown";
}

void evq_event_init(struct evq_event *e, enum evq_kind kind)
{
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->node = e->parent = -1;
}

void evq_event_clear(struct evq_event *e)
{
    if (!e) return;
    free(e->text);
    free(e->text2);
    free(e->text3);
    e->text = e->text2 = e->text3 = NULL;
}

void cmdq_cmd_clear(struct cmdq_cmd *c)
{
    if (!c) return;
    free(c->text);
    c->text = NULL;
}

/* A ring of fixed-size items; grows by doubling. */
struct ring {
    char *v;
    size_t item, head, n, cap;
};

static void ring_push(struct ring *r, const void *item)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        char *v = xmalloc(cap * r->item);
        for (size_t i = 0; i < r->n; i++)
            memcpy(v + i * r->item, r->v + ((r->head + i) % r->cap) * r->item, r->item);
        free(r->v);
        r->v = v;
        r->cap = cap;
        r->head = 0;
    }
    memcpy(r->v + ((r->head + r->n) % r->cap) * r->item, item, r->item);
    r->n++;
}

static int ring_pop(struct ring *r, void *out)
{
    if (r->n == 0) return 0;
    memcpy(out, r->v + r->head * r->item, r->item);
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return 1;
}

struct evq {
    pthread_mutex_t mu;
    struct ring ring;
    int wake[2];
};

static int set_flags(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
    int fdfl = fcntl(fd, F_GETFD);
    if (fdfl < 0 || fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) < 0) return -1;
    return 0;
}

struct evq *evq_new(char *err, size_t errlen)
{
    struct evq *q = xcalloc(1, sizeof *q);
    q->wake[0] = q->wake[1] = -1;
    if (pipe(q->wake) != 0 || set_flags(q->wake[0]) != 0 || set_flags(q->wake[1]) != 0) {
        snprintf(err, errlen, "cannot create the event wake pipe: %s (too many open files?)",
                 strerror(errno));
        if (q->wake[0] >= 0) close(q->wake[0]);
        if (q->wake[1] >= 0) close(q->wake[1]);
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    q->ring.item = sizeof(struct evq_event);
    return q;
}

void evq_free(struct evq *q)
{
    if (!q) return;
    struct evq_event e;
    while (ring_pop(&q->ring, &e)) evq_event_clear(&e);
    free(q->ring.v);
    close(q->wake[0]);
    close(q->wake[1]);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

void evq_post(struct evq *q, const struct evq_event *e)
{
    struct evq_event c = *e;
    c.text = e->text ? xstrdup(e->text) : NULL;
    c.text2 = e->text2 ? xstrdup(e->text2) : NULL;
    c.text3 = e->text3 ? xstrdup(e->text3) : NULL;
    pthread_mutex_lock(&q->mu);
    ring_push(&q->ring, &c);
    pthread_mutex_unlock(&q->mu);
    /* A full pipe already guarantees a wake-up; EAGAIN is fine. */
    ssize_t w;
    do {
        w = write(q->wake[1], "", 1);
    } while (w < 0 && errno == EINTR);
}

void evq_post_log(struct evq *q, int node, const char *fmt, ...)
{
    struct evq_event e;
    evq_event_init(&e, EVQ_LOG);
    e.node = node;
    struct buf b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    e.text = (char *)buf_str(&b);
    evq_post(q, &e);
    buf_free(&b);
}

void evq_post_state(struct evq *q, enum evq_state state, long long a, long long b, const char *text)
{
    struct evq_event e;
    evq_event_init(&e, EVQ_STATE);
    e.state = state;
    e.a = a;
    e.b = b;
    e.text = (char *)text;
    evq_post(q, &e);
}

int evq_pop(struct evq *q, struct evq_event *out)
{
    pthread_mutex_lock(&q->mu);
    int got = ring_pop(&q->ring, out);
    pthread_mutex_unlock(&q->mu);
    return got;
}

size_t evq_pending(struct evq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->ring.n;
    pthread_mutex_unlock(&q->mu);
    return n;
}

int evq_wake_fd(const struct evq *q)
{
    return q->wake[0];
}

size_t evq_drain_wake(struct evq *q)
{
    char tmp[256];
    size_t total = 0;
    for (;;) {
        ssize_t r = read(q->wake[0], tmp, sizeof tmp);
        if (r > 0) total += (size_t)r;
        else if (r < 0 && errno == EINTR) continue;
        else break;
    }
    return total;
}

struct cmdq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ring ring;
};

struct cmdq *cmdq_new(void)
{
    struct cmdq *q = xcalloc(1, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->ring.item = sizeof(struct cmdq_cmd);
    return q;
}

void cmdq_free(struct cmdq *q)
{
    if (!q) return;
    struct cmdq_cmd c;
    while (ring_pop(&q->ring, &c)) cmdq_cmd_clear(&c);
    free(q->ring.v);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

void cmdq_push(struct cmdq *q, enum cmdq_kind kind, int node, const char *text)
{
    struct cmdq_cmd c = {kind, node, text ? xstrdup(text) : NULL};
    pthread_mutex_lock(&q->mu);
    ring_push(&q->ring, &c);
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

int cmdq_pop(struct cmdq *q, struct cmdq_cmd *out)
{
    pthread_mutex_lock(&q->mu);
    int got = ring_pop(&q->ring, out);
    pthread_mutex_unlock(&q->mu);
    return got;
}

void cmdq_wait(struct cmdq *q, struct cmdq_cmd *out)
{
    pthread_mutex_lock(&q->mu);
    while (!ring_pop(&q->ring, out)) pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

size_t cmdq_pending(struct cmdq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->ring.n;
    pthread_mutex_unlock(&q->mu);
    return n;
}
