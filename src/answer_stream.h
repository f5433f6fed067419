/*
 * answer_stream: the answer role's text on its way to its readers while the
 * model writes it. The llm policy holds one per policy (set by
 * policy.set_answer_sink) and attaches it to each answer-role request as
 * llm_request.on_delta; the JSON roles are parsed only when complete and get
 * nothing of this.
 *
 * It forwards the reply's pieces to the reader's policy_answer_sink, keeps
 * the text that arrived since the last reset (what a stopped answer keeps),
 * says "written again" (kind 2) before a second answer call that follows a
 * first one the reader saw (the re-ask, the call asked once more), and
 * remembers that the reader stopped the answer: from then on every piece
 * asks the transport to stop, so no later call of the answer is written.
 *
 * One answer is written at a time (the search answers once, under its
 * lock); the reader's sink runs in the thread that asks.
 */
#ifndef DRQA_ANSWER_STREAM_H
#define DRQA_ANSWER_STREAM_H

#include "llm.h"
#include "policy.h"
#include "util.h"

#include <stddef.h>

struct answer_stream {
    policy_answer_sink fn;   /* NULL: no reader; requests get no on_delta */
    void *ud;
    struct buf text;         /* the answer's text since the last reset, as the reader got it */
    int handed;              /* the reader got pieces since the last reset */
    int stopped;             /* the reader returned nonzero */
    /* A reply written as {"answer": "..."} (the roles' JSON habit, which
     * the answer's check unwraps) reaches the reader as the string's text,
     * decoded as it comes, not as JSON: */
    int form;                /* 0 not known yet, 1 plain text, 2 in the string, 3 past it */
    struct buf head;         /* form 0: what came before the form is known */
    char esc[8];             /* form 2: an escape cut across pieces */
    size_t nesc;
};

/* A new reader (fn NULL: none) for the next answer; what the last one got
 * is forgotten. */
void answer_stream_set(struct answer_stream *s, policy_answer_sink fn, void *ud);
void answer_stream_free(struct answer_stream *s);   /* the buffer; s itself is the caller's */

/* Before an answer-role request is sent: with a reader, sets req->on_delta
 * and delta_ud, and when the reader saw pieces of an earlier call, tells it
 * to drop them (kind 2). Without a reader, leaves req alone. */
void answer_stream_attach(struct answer_stream *s, struct llm_request *req);

/* 1 when the reader stopped the answer. */
int answer_stream_stopped(const struct answer_stream *s);

/* The answer a stopped call leaves (after answer_stream_stopped): the text
 * that had arrived, a citation cut off by the stop dropped, every citation
 * no span of seen covers removed (said in a line), the verified ones in
 * out->cites, a line saying it was stopped and is incomplete, and
 * out->stopped set; noted in u. */
void answer_stream_keep(const struct answer_stream *s, const struct evidence *seen, struct policy_answer *out,
                        struct policy_usage *u);

#endif
