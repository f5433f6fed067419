/*
 * llm_stream: a streamed reply read as it arrives. Each API's event stream
 * (OpenAI-compatible chat chunks, Anthropic messages events, Responses API
 * events) is read through one SSE reader (sse.h) by its assembler, which
 * rebuilds from the events the very JSON document the API returns for the
 * same request without "stream", so that everything that reads a whole reply
 * (thinking taken out, usage, refusals, a reply cut at its limit, tool input
 * as the reply text, errors in a 200 body) reads a streamed one unchanged.
 *
 * Meanwhile the pieces go to the request's on_delta as they arrive: answer
 * text as LLM_DELTA_TEXT, with <think>...</think> inside it (tags split across
 * pieces included) and the reasoning fields or blocks as LLM_DELTA_REASONING;
 * LLM_DELTA_RESET when what was handed is void (the transfer is sent again).
 * A nonzero from on_delta stops the stream: the transfer is aborted and the
 * text so far kept (llm_stream_text).
 *
 * A stream is complete only with its end: [DONE] or a finish_reason (chat),
 * message_stop or a stop_reason (messages), response.completed,
 * response.incomplete or response.failed (Responses). An event whose data is
 * not JSON fails the stream; so does one cut short, which is never taken for
 * a complete reply.
 */
#ifndef DRQA_LLM_STREAM_H
#define DRQA_LLM_STREAM_H

#include "llm.h"
#include "sse.h"

#define LLM_STREAM_MAX_BLOCKS 32   /* content blocks of one Anthropic reply kept */

/* <think>...</think> taken out of streamed text (llm_stream.c). */
struct think_filter {
    struct buf hold;           /* bytes that may start a tag, held back until the next piece */
    int in_think;              /* inside a block */
    int tagged;                /* a tag was seen: text before a bare </think> was handed as text */
    int any_text;              /* answer text was handed (leading white space is not) */
};

struct llm_stream {
    const struct llm_stream_api *api;   /* the API's assembler */
    const struct llm_request *req;
    struct sse sse;
    struct think_filter tf;
    struct buf text;           /* the answer text handed (think-stripped), for a stopped reply */
    int handed;                /* pieces were handed since the last reset */
    int stopped;               /* on_delta asked to stop */
    int bad;                   /* an event was not JSON (err says which) */
    int done;                  /* the stream's end arrived */
    char err[200];
    /* the reply being rebuilt: chat and Responses keep their text here */
    cJSON *doc;                /* the skeleton (first chunk, message_start, response.*) */
    cJSON *usage, *error;      /* the last usage seen; an error the stream carried */
    cJSON *choice_error;       /* chat: choices[0].error (OpenRouter) */
    struct buf content, reasoning, refusal;
    int any_content, any_choice;   /* chat: content (not "") came; a chunk had a choice */
    char finish[40];           /* chat finish_reason / messages stop_reason, "" until one came */
    /* messages: one entry per content block */
    struct {
        cJSON *block;          /* the block as content_block_start gave it */
        struct buf text;       /* its text, thinking or partial_json */
        struct buf signature;
    } blocks[LLM_STREAM_MAX_BLOCKS];
    int nblocks;
    int tool_text;             /* messages: a tool_use block's input is handed as the text */
};

/* An API's assembler. The backend that speaks the API hands it to
 * llm_http_exchange; the reader calls the assembler through it and knows no
 * API's events by name. */
struct llm_stream_api {
    enum llm_wire wire;
    /* an event's JSON: 0 to go on, nonzero to stop */
    int (*event)(struct llm_stream *s, const char *event, const cJSON *j);
    /* the rebuilt document; NULL when the stream did not end */
    cJSON *(*doc)(struct llm_stream *s);
};
extern const struct llm_stream_api llm_stream_chat_api;       /* llm_stream.c */
extern const struct llm_stream_api llm_stream_messages_api;   /* llm_stream_messages.c */
extern const struct llm_stream_api llm_stream_responses_api;  /* llm_responses.c */

struct llm_stream *llm_stream_new(const struct llm_stream_api *api, const struct llm_request *req);
void llm_stream_free(struct llm_stream *s);   /* NULL ok */
/* An http_stream_fn: reads bytes of the stream; (NULL, 0) voids what was read. */
int llm_stream_feed(void *s, const char *p, size_t n);
/* 1 when a whole body is an event stream (a server that streams whatever it
 * is asked): "data:", "event:" or ':' first. */
int llm_stream_sniffed(const char *body);
/* 1 when a request body asks for a stream ("stream": true). */
int llm_stream_asked(const char *body);
/*
 * The end of a reply read as a stream (res->streamed, or a whole body that is
 * one, fed here first): on LLM_OK *json is the rebuilt reply (caller
 * deletes); else reply's error and fail are set: stopped by on_delta
 * (LLM_ERR_CANCELLED, reply->stopped, text so far, tokens estimated), an event
 * not JSON, a stream cut short.
 */
int llm_stream_end(struct llm_stream *s, struct llm_http_backend *hb, const char *url,
                   const struct http_result *res, struct llm_reply *reply, cJSON **json);

/* ---- for the assemblers ---- */
/* Hands a piece to on_delta; TEXT goes through the think filter. 0, or 1 when
 * the reader asked to stop. */
int llm_stream_emit(struct llm_stream *s, enum llm_delta_kind kind, const char *p, size_t n);
/* Voids what was handed (LLM_DELTA_RESET when anything was). */
void llm_stream_reset_text(struct llm_stream *s);

#endif
