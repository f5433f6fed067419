/* Tests of the event queue (order, copied strings, wake pipe) and the command
 * queue (order, blocking wait), including several producer threads. */
#include "tap.h"
#include "evq.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>

static int readable(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

struct producer {
    struct evq *q;
    int who;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (int i = 0; i < 1000; i++) {
        struct evq_event e;
        evq_event_init(&e, EVQ_LOG);
        e.node = p->who;
        e.a = i;
        evq_post(p->q, &e);
    }
    return NULL;
}

static void *push_later(void *arg)
{
    struct cmdq *q = arg;
    cmdq_push(q, CMD_PRUNE, 7, NULL);
    return NULL;
}

int main(void)
{
    char err[256];
    struct evq *q = evq_new(err, sizeof err);
    ok(q != NULL, "an event queue");
    ok(!readable(evq_wake_fd(q)), "the wake fd is quiet when nothing was posted");
    struct evq_event e;
    is_int(evq_pop(q, &e), 0, "popping an empty queue gives nothing");

    char text[16] = "report one";
    evq_event_init(&e, EVQ_REPORT);
    e.node = 3;
    e.text = text;
    evq_post(q, &e);
    text[0] = 'X';   /* the queue holds its own copy */
    evq_post_log(q, 4, "line %d", 2);
    evq_post_state(q, EVQ_STATE_INDEXING, 5, 10, "parsing");
    ok(readable(evq_wake_fd(q)), "posting makes the wake fd readable");
    is_int(evq_pending(q), 3, "three events pending");
    is_int(evq_drain_wake(q), 3, "one wake byte per post");
    ok(!readable(evq_wake_fd(q)), "draining quiets the wake fd");

    is_int(evq_pop(q, &e), 1, "pop the first");
    ok(e.kind == EVQ_REPORT && e.node == 3, "events come out in order: report for node 3");
    is_str(e.text, "report one", "with its own copy of the text");
    evq_event_clear(&e);
    evq_pop(q, &e);
    ok(e.kind == EVQ_LOG && e.node == 4, "then the log line");
    is_str(e.text, "line 2", "formatted");
    evq_event_clear(&e);
    evq_pop(q, &e);
    ok(e.kind == EVQ_STATE && e.state == EVQ_STATE_INDEXING && e.a == 5 && e.b == 10, "then the state with progress");
    is_str(e.text, "parsing", "and its detail");
    evq_event_clear(&e);
    is_int(evq_pop(q, &e), 0, "then nothing");
    is_str(evq_kind_name(EVQ_ANSWER), "answer", "kind names");
    is_str(evq_state_name(EVQ_STATE_PAUSED), "paused", "state names");

    /* growth past the initial ring and wrap-around */
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 300; i++) {
            evq_event_init(&e, EVQ_TOKENS);
            e.a = i;
            evq_post(q, &e);
        }
        int in_order = 1;
        for (int i = 0; i < 300; i++) in_order &= evq_pop(q, &e) == 1 && e.a == i;
        ok(in_order, "300 events come back in order (round %d)", round);
        evq_drain_wake(q);
    }

    /* several producers: each one's events keep their order */
    struct producer ps[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        ps[i] = (struct producer){q, i};
        pthread_create(&th[i], NULL, produce, &ps[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    int next[4] = {0, 0, 0, 0}, order_ok = 1, total = 0;
    while (evq_pop(q, &e)) {
        order_ok &= e.node >= 0 && e.node < 4 && e.a == next[e.node];
        if (e.node >= 0 && e.node < 4) next[e.node]++;
        total++;
    }
    is_int(total, 4000, "4000 events from 4 threads, none lost");
    ok(order_ok, "each producer's events in its order");
    ok(evq_drain_wake(q) > 0, "with wake bytes");

    /* leftovers are freed with the queue (checked under the sanitizers) */
    evq_post_log(q, -1, "left behind");
    evq_free(q);
    evq_free(NULL);

    struct cmdq *c = cmdq_new();
    struct cmdq_cmd cmd;
    is_int(cmdq_pop(c, &cmd), 0, "an empty command queue gives nothing");
    cmdq_push(c, CMD_PAUSE, -1, NULL);
    cmdq_push(c, CMD_NEW_QUESTION, -1, "why?");
    cmdq_push(c, CMD_EXPAND, 12, NULL);
    is_int(cmdq_pending(c), 3, "three commands pending");
    cmdq_pop(c, &cmd);
    is_int(cmd.kind, CMD_PAUSE, "commands come out in order: pause");
    cmdq_pop(c, &cmd);
    ok(cmd.kind == CMD_NEW_QUESTION && cmd.text && strcmp(cmd.text, "why?") == 0, "new question with its text");
    cmdq_cmd_clear(&cmd);
    cmdq_wait(c, &cmd);
    ok(cmd.kind == CMD_EXPAND && cmd.node == 12, "wait returns a queued command at once");
    pthread_t t;
    pthread_create(&t, NULL, push_later, c);
    cmdq_wait(c, &cmd);
    ok(cmd.kind == CMD_PRUNE && cmd.node == 7, "wait blocks until another thread pushes");
    pthread_join(t, NULL);
    is_str(cmdq_kind_name(CMD_QUIT), "quit", "command names");
    cmdq_push(c, CMD_NEW_QUESTION, -1, "left behind");
    cmdq_free(c);
    cmdq_free(NULL);
    return done_testing();
}
