/*
 * llm_stream: the stream reader every API shares (see llm_stream.h): the SSE
 * events parsed as JSON and handed to the API's assembler, the think filter
 * over streamed text, the pieces handed to on_delta, the end of a stream
 * read into a reply; and the assembler of OpenAI-compatible chat chunks.
 */
#include "llm_stream.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_event(void *ud, const char *event, const char *data, size_t len);

struct llm_stream *llm_stream_new(const struct llm_stream_api *api, const struct llm_request *req)
{
    struct llm_stream *s = xcalloc(1, sizeof *s);
    s->api = api;
    s->req = req;
    sse_init(&s->sse, 0, on_event, s);
    return s;
}

/* Drops everything read; the reader is as new. */
static void clear(struct llm_stream *s)
{
    sse_free(&s->sse);
    sse_init(&s->sse, 0, on_event, s);
    buf_free(&s->tf.hold);
    memset(&s->tf, 0, sizeof s->tf);
    cJSON_Delete(s->doc);
    cJSON_Delete(s->usage);
    cJSON_Delete(s->error);
    cJSON_Delete(s->choice_error);
    s->doc = s->usage = s->error = s->choice_error = NULL;
    buf_free(&s->content);
    buf_free(&s->reasoning);
    buf_free(&s->refusal);
    for (int i = 0; i < s->nblocks; i++) {
        cJSON_Delete(s->blocks[i].block);
        buf_free(&s->blocks[i].text);
        buf_free(&s->blocks[i].signature);
    }
    memset(s->blocks, 0, sizeof s->blocks);
    s->nblocks = s->tool_text = s->any_content = s->any_choice = s->bad = s->done = 0;
    s->finish[0] = s->err[0] = 0;
}

void llm_stream_free(struct llm_stream *s)
{
    if (!s) return;
    clear(s);
    sse_free(&s->sse);
    buf_free(&s->text);
    free(s);
}

void llm_stream_reset_text(struct llm_stream *s)
{
    if (s->handed && s->req->on_delta) s->req->on_delta(s->req->delta_ud, LLM_DELTA_RESET, NULL, 0);
    s->handed = 0;
    buf_reset(&s->text);
    s->tf.any_text = 0;
}

/* One piece to the reader, as it is (answer text without its leading white space). */
static int hand(struct llm_stream *s, enum llm_delta_kind kind, const char *p, size_t n)
{
    if (kind == LLM_DELTA_TEXT && !s->tf.any_text) {
        while (n && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) { p++; n--; }
        if (n) s->tf.any_text = 1;
    }
    if (!n) return 0;
    if (kind == LLM_DELTA_TEXT) buf_add(&s->text, p, n);
    s->handed = 1;
    if (s->req->on_delta && s->req->on_delta(s->req->delta_ud, kind, p, n)) s->stopped = 1;
    return s->stopped;
}

static const char OPEN[] = "<think>", CLOSE[] = "</think>";

/* The bytes at the end of p (n) that may start tag: held until more comes. */
static size_t tag_start(const char *p, size_t n, const char *tag)
{
    for (size_t k = strlen(tag) - 1; k > 0; k--)
        if (k <= n && !memcmp(p + n - k, tag, k)) return k;
    return 0;
}

/* Streamed text through the think filter: what is inside <think>...</think>
 * (and, before any tag, what a bare </think> ends: the chat template opened
 * the block in the prompt) is reasoning. `last`: no more text comes. */
static int filter_text(struct llm_stream *s, const char *p, size_t n, int last)
{
    struct think_filter *f = &s->tf;
    buf_add(&f->hold, p, n);
    size_t i = 0, len = f->hold.len;
    int rc = 0;
    while (i < len && !rc) {
        const char *rest = f->hold.data + i, *tag = f->in_think ? CLOSE : OPEN;
        size_t rn = len - i;
        const char *at = memmem(rest, rn, tag, strlen(tag));
        const char *bare = !f->in_think && !f->tagged ? memmem(rest, rn, CLOSE, 8) : NULL;
        if (bare && (!at || bare < at)) {
            /* the text handed so far was reasoning */
            char *early = s->text.len ? xstrdup(buf_str(&s->text)) : NULL;
            if (early) llm_stream_reset_text(s);
            rc = early ? hand(s, LLM_DELTA_REASONING, early, strlen(early)) : 0;
            free(early);
            rc = rc || hand(s, LLM_DELTA_REASONING, rest, (size_t)(bare - rest));
            f->tagged = 1;
            i += (size_t)(bare - rest) + 8;
        } else if (at) {
            rc = hand(s, f->in_think ? LLM_DELTA_REASONING : LLM_DELTA_TEXT, rest, (size_t)(at - rest));
            f->in_think = !f->in_think;
            f->tagged = 1;
            i += (size_t)(at - rest) + strlen(tag);
        } else {
            size_t keep = last ? 0 : tag_start(rest, rn, tag);
            size_t keep2 = last || f->in_think || f->tagged ? 0 : tag_start(rest, rn, CLOSE);
            if (keep2 > keep) keep = keep2;
            rc = hand(s, f->in_think ? LLM_DELTA_REASONING : LLM_DELTA_TEXT, rest, rn - keep);
            i += rn - keep;
            break;
        }
    }
    memmove(f->hold.data, f->hold.data + i, len - i);
    f->hold.len = len - i;
    f->hold.data[f->hold.len] = 0;
    return rc;
}

int llm_stream_emit(struct llm_stream *s, enum llm_delta_kind kind, const char *p, size_t n)
{
    if (s->stopped) return 1;
    if (!n) return 0;
    return kind == LLM_DELTA_TEXT ? filter_text(s, p, n, 0) : hand(s, kind, p, n);
}

static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    struct llm_stream *s = ud;
    if (s->api->wire == LLM_WIRE_CHAT && len == 6 && !memcmp(data, "[DONE]", 6)) {
        s->done = 1;
        return 0;
    }
    cJSON *j = cJSON_ParseWithLength(data, len);
    if (!cJSON_IsObject(j)) {
        char start[48];
        size_t k = 0;
        for (size_t i = 0; i < len && k < 40; i++) start[k++] = data[i] >= 32 && data[i] < 127 ? data[i] : ' ';
        start[k] = 0;
        snprintf(s->err, sizeof s->err, "has an event (%s) whose data is not a JSON object ('%s')", event, start);
        s->bad = 1;
        cJSON_Delete(j);
        return 1;
    }
    int rc = s->api->event(s, event, j);
    cJSON_Delete(j);
    return rc || s->stopped;
}

int llm_stream_feed(void *ud, const char *p, size_t n)
{
    struct llm_stream *s = ud;
    if (!p) {   /* the transfer is sent again: all of it is void */
        clear(s);
        llm_stream_reset_text(s);
        return 0;
    }
    if (s->stopped || s->bad) return 1;
    int rc = sse_feed(&s->sse, p, n);
    if (rc == SSE_TOO_LARGE) {
        snprintf(s->err, sizeof s->err, "has a line or event longer than %zu bytes", s->sse.max);
        s->bad = 1;
    }
    return rc != 0;
}

int llm_stream_sniffed(const char *body)
{
    const char *b = body ? body : "";
    while (*b == ' ' || *b == '\n' || *b == '\r' || *b == '\t') b++;
    return !strncmp(b, "data:", 5) || !strncmp(b, "event:", 6) || b[0] == ':';
}

int llm_stream_asked(const char *body)
{
    /* the top-level field as the body builders print it (a message's text
     * holding the same characters is escaped: \"stream\") */
    return body && strstr(body, "\"stream\":true") != NULL;
}

/* Replaces *slot with a copy of v (when v is not NULL or null). */
static void keep(cJSON **slot, const cJSON *v)
{
    if (!v || cJSON_IsNull(v)) return;
    cJSON_Delete(*slot);
    *slot = cJSON_Duplicate(v, 1);
}

/* ---- OpenAI-compatible chat: chat.completion.chunk objects, then [DONE] ---- */

/* delta.content as a list of parts (Mistral's Magistral: thinking parts, then text parts). */
static int chat_parts(struct llm_stream *s, const cJSON *parts)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, parts) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "text");
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(p, "thinking"), *q;
        if (cJSON_IsString(type) && !strcmp(type->valuestring, "text") && cJSON_IsString(t)) {
            buf_adds(&s->content, t->valuestring);
            s->any_content |= *t->valuestring != 0;
            if (llm_stream_emit(s, LLM_DELTA_TEXT, t->valuestring, strlen(t->valuestring))) return 1;
        } else if (cJSON_IsString(type) && !strcmp(type->valuestring, "thinking")) {
            const cJSON *list = cJSON_IsArray(th) ? th : NULL;
            if (cJSON_IsString(th)) {
                buf_adds(&s->reasoning, th->valuestring);
                if (llm_stream_emit(s, LLM_DELTA_REASONING, th->valuestring, strlen(th->valuestring))) return 1;
            }
            cJSON_ArrayForEach(q, list) {
                const cJSON *qt = cJSON_GetObjectItemCaseSensitive(q, "text");
                if (!cJSON_IsString(qt)) continue;
                buf_adds(&s->reasoning, qt->valuestring);
                if (llm_stream_emit(s, LLM_DELTA_REASONING, qt->valuestring, strlen(qt->valuestring))) return 1;
            }
        }
    }
    return 0;
}

static int llm_stream_chat_event(struct llm_stream *s, const char *event, const cJSON *j)
{
    (void)event;
    if (!s->doc) {
        s->doc = cJSON_CreateObject();
        static const char *const kept[] = {"id", "created", "model", "system_fingerprint", "provider"};
        for (size_t i = 0; i < ARRAY_LEN(kept); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, kept[i]);
            if (v) cJSON_AddItemToObject(s->doc, kept[i], cJSON_Duplicate(v, 1));
        }
    }
    /* an error after (or instead of) the content: the stream's end */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (e && !cJSON_IsNull(e)) {
        keep(&s->error, e);
        s->done = 1;
        return 0;
    }
    keep(&s->usage, cJSON_GetObjectItemCaseSensitive(j, "usage"));
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    if (!c0) return 0;   /* the usage chunk: choices [] */
    s->any_choice = 1;
    const cJSON *finish = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
    if (cJSON_IsString(finish)) snprintf(s->finish, sizeof s->finish, "%s", finish->valuestring);
    keep(&s->choice_error, cJSON_GetObjectItemCaseSensitive(c0, "error"));
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(c0, "delta");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(d, "content");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(d, "reasoning_content");
    if (!cJSON_IsString(r)) r = cJSON_GetObjectItemCaseSensitive(d, "reasoning");
    const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(d, "refusal");
    if (cJSON_IsString(refusal)) buf_adds(&s->refusal, refusal->valuestring);
    if (cJSON_IsString(r) && *r->valuestring) {
        buf_adds(&s->reasoning, r->valuestring);
        if (llm_stream_emit(s, LLM_DELTA_REASONING, r->valuestring, strlen(r->valuestring))) return 1;
    }
    if (cJSON_IsArray(content)) return chat_parts(s, content);
    if (!cJSON_IsString(content)) return 0;
    buf_adds(&s->content, content->valuestring);
    s->any_content |= *content->valuestring != 0;   /* the role chunk's "" is no content */
    return llm_stream_emit(s, LLM_DELTA_TEXT, content->valuestring, strlen(content->valuestring));
}

static cJSON *llm_stream_chat_doc(struct llm_stream *s)
{
    cJSON *doc;
    if (s->error) {
        doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "error", cJSON_Duplicate(s->error, 1));
        return doc;
    }
    if (!s->done && !s->finish[0]) return NULL;
    doc = s->doc ? cJSON_Duplicate(s->doc, 1) : cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "object", "chat.completion");
    cJSON *c0 = cJSON_CreateObject(), *msg = cJSON_CreateObject();
    cJSON_AddNumberToObject(c0, "index", 0);
    cJSON_AddStringToObject(msg, "role", "assistant");
    if (s->any_content) cJSON_AddStringToObject(msg, "content", buf_str(&s->content));
    else cJSON_AddNullToObject(msg, "content");
    if (s->reasoning.len) cJSON_AddStringToObject(msg, "reasoning_content", buf_str(&s->reasoning));
    if (s->refusal.len) cJSON_AddStringToObject(msg, "refusal", buf_str(&s->refusal));
    cJSON_AddItemToObject(c0, "message", msg);
    if (s->finish[0]) cJSON_AddStringToObject(c0, "finish_reason", s->finish);
    else cJSON_AddNullToObject(c0, "finish_reason");
    if (s->choice_error) cJSON_AddItemToObject(c0, "error", cJSON_Duplicate(s->choice_error, 1));
    cJSON *choices = cJSON_AddArrayToObject(doc, "choices");
    if (s->any_choice) cJSON_AddItemToArray(choices, c0);
    else cJSON_Delete(c0);   /* a stream of no choice: "choices": [] as a whole reply would say */
    if (s->usage) cJSON_AddItemToObject(doc, "usage", cJSON_Duplicate(s->usage, 1));
    return doc;
}

const struct llm_stream_api llm_stream_chat_api = {LLM_WIRE_CHAT, llm_stream_chat_event,
                                                  llm_stream_chat_doc};

/* ---- the end of a stream ---- */

static const char *end_event(enum llm_wire w)
{
    return w == LLM_WIRE_CHAT ? "no [DONE] and no finish_reason"
         : w == LLM_WIRE_MESSAGES ? "no message_stop and no stop_reason" : "no response.completed";
}

int llm_stream_end(struct llm_stream *s, struct llm_http_backend *hb, const char *url,
                   const struct http_result *res, struct llm_reply *reply, cJSON **json)
{
    *json = NULL;
    reply->streamed = 1;
    if (!res->streamed && !s->stopped && !s->bad && res->body) {
        /* a whole body that is an event stream; its last event may lack the blank line */
        llm_stream_feed(s, res->body, res->body_len);
        llm_stream_feed(s, "\n\n", 2);
    }
    if (!s->stopped && !s->bad) filter_text(s, "", 0, 1);
    if (s->stopped) {
        /* the reader stopped the reply: what had arrived is kept, not as a complete reply */
        const char *t = buf_str(&s->text);
        size_t n = s->text.len;
        while (n && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == '\t')) n--;
        reply->text = n ? xstrndup(t, n) : NULL;
        reply->stopped = 1;
        reply->fail = LLM_FAIL_CANCELLED;
        snprintf(reply->error, sizeof reply->error, "the reply from %s was stopped after %zu bytes of its text", url,
                 n);
        llm_account(hb, s->req, reply, -1, -1);
        return LLM_ERR_CANCELLED;
    }
    if (s->bad) {
        snprintf(reply->error, sizeof reply->error, "the event stream from %s %s; check the server or turn streaming "
                 "off (--no-stream, or stream = false in the config file)", url, s->err);
        reply->fail = LLM_FAIL_BAD_REPLY;
        llm_stream_reset_text(s);
        return LLM_ERR_REPLY;
    }
    cJSON *doc = s->api->doc(s);
    if (!doc) {
        snprintf(reply->error, sizeof reply->error, "the event stream from %s ended before the reply did (%s): the "
                 "server or a proxy cut it short; the partial reply was dropped", url, end_event(s->api->wire));
        reply->fail = LLM_FAIL_TRANSIENT;
        llm_stream_reset_text(s);
        return LLM_ERR_CONNECT;
    }
    *json = doc;
    return LLM_OK;
}
