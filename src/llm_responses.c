/*
 * llm_responses: the OpenAI Responses API, POST {base}/responses, for the
 * models served there alone (gpt-5-pro, o3-pro, o1-pro, the codex models)
 * or for any model whose profile says api = responses. It runs on an
 * openai-compatible (or Azure v1) backend, llm_openai.c, which sends here
 * once hb->responses is set.
 *
 * Request: model, instructions (the system prompt), input (the messages as
 * {role, content}), max_output_tokens (it counts reasoning, as
 * max_completion_tokens does), a temperature only where the profile allows
 * one, reasoning {effort} only when the profile sets an effort, store false
 * (nothing is kept on the server), and structured output as text.format
 * {type: json_schema, name, schema, strict: false} (or {type: json_object}).
 * Reply: the output_text parts of the message items of output[], in order;
 * reasoning items carry no answer (their summaries, when any, are the
 * reasoning); a refusal part is a failed call that shows it; status
 * "incomplete" with incomplete_details.reason "max_output_tokens" is a reply
 * cut at the limit. Counts come from usage: input_tokens (with
 * input_tokens_details.cached_tokens) and output_tokens (with
 * output_tokens_details.reasoning_tokens). Error bodies have the chat API's
 * shape, {"error": {"message", "type", "param", "code"}}, and go through the
 * same exchange (llm_http_exchange): statuses, kinds, and the one
 * adjustment of a parameter the 400 names.
 */
#include "llm.h"
#include "llm_stream.h"
#include "url.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *responses_body(const struct llm_http_backend *hb, const struct llm_request *req, int adjust)
{
    const struct llm_profile *p = &hb->prof;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", hb->model);
    if (req->system) cJSON_AddStringToObject(root, "instructions", req->system);
    cJSON *input = cJSON_AddArrayToObject(root, "input");
    for (size_t i = 0; i < req->nmessages; i++) llm_add_message(input, req->messages[i].role, req->messages[i].content);
    cJSON_AddNumberToObject(root, "max_output_tokens", llm_reply_limit(hb, req));
    double t;
    if (llm_send_temperature(hb, req, adjust, &t)) cJSON_AddNumberToObject(root, "temperature", t);
    if (p->effort_param && p->effort[0] && !(adjust & LLM_ADJ_NO_EFFORT))
        cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "reasoning"), "effort", p->effort);
    cJSON_AddFalseToObject(root, "store");
    if (llm_streams(hb)) cJSON_AddTrueToObject(root, "stream");
    enum llm_schema_mode mode = adjust & LLM_ADJ_NO_SCHEMA ? LLM_SCHEMA_NONE : p->schema;
    if ((mode == LLM_SCHEMA_JSON_SCHEMA || mode == LLM_SCHEMA_TOOL) && req->schema) {
        cJSON *fmt = cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "text"), "format");
        cJSON_AddStringToObject(fmt, "type", "json_schema");
        cJSON_AddStringToObject(fmt, "name", req->schema_name ? req->schema_name : "reply");
        cJSON_AddItemToObject(fmt, "schema", cJSON_Duplicate(req->schema, 1));
        cJSON_AddBoolToObject(fmt, "strict", 0);
    } else if (mode != LLM_SCHEMA_NONE && (req->schema || req->json_mode)) {
        cJSON *fmt = cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "text"), "format");
        cJSON_AddStringToObject(fmt, "type", "json_object");
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

/* The URL of the Responses API under hb's base: {base}/responses (OpenAI
 * /v1, Azure's /openai/v1, any compatible server). */
static char *responses_url(const struct llm_http_backend *hb)
{
    return url_join(hb->base, "/responses");
}

int llm_responses_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply)
{
    struct llm_http_backend *hb = b->impl;
    memset(reply, 0, sizeof *reply);
    reply->cost_usd = -1;
    if (llm_check_request(req, reply)) return LLM_ERR_REQUEST;
    char *url = responses_url(hb);
    char *auth = llm_openai_auth_header(hb);
    const char *headers[] = {auth, NULL};
    cJSON *j = NULL;
    int rc = llm_http_exchange(hb, req, url, headers, responses_body, &llm_stream_responses_api, reply, &j);
    llm_header_free(auth);
    if (rc != LLM_OK) goto out;

    struct buf text = BUF_INIT, refusal = BUF_INIT;
    int nparts = 0;
    const cJSON *output = cJSON_GetObjectItemCaseSensitive(j, "output"), *item;
    const cJSON *items = cJSON_IsArray(output) ? output : NULL;
    cJSON_ArrayForEach(item, items) {
        const char *ty = llm_json_type(item);
        if (!strcmp(ty, "reasoning")) {
            const cJSON *summary = cJSON_GetObjectItemCaseSensitive(item, "summary"), *s;
            const cJSON *list = cJSON_IsArray(summary) ? summary : NULL;
            cJSON_ArrayForEach(s, list) {
                const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "text");
                if (!cJSON_IsString(st) || !*st->valuestring) continue;
                llm_reply_add_reasoning(reply, st->valuestring, strlen(st->valuestring));
            }
            continue;
        }
        if (strcmp(ty, "message")) continue;   /* tool calls and the like: none were offered */
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(item, "content"), *part;
        const cJSON *parts = cJSON_IsArray(content) ? content : NULL;
        cJSON_ArrayForEach(part, parts) {
            const char *pty = llm_json_type(part);
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(part, "refusal");
            if (!strcmp(pty, "output_text") && cJSON_IsString(t)) {
                buf_adds(&text, t->valuestring);
                nparts++;
            } else if (!strcmp(pty, "refusal") && cJSON_IsString(r)) {
                buf_adds(&refusal, r->valuestring);
            }
        }
    }
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "incomplete_details"),
                                                        "reason");
    int incomplete = cJSON_IsString(status) && !strcmp(status->valuestring, "incomplete");
    reply->truncated = incomplete && cJSON_IsString(why) && !strcmp(why->valuestring, "max_output_tokens");
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    llm_reply_usage_details(reply, usage, "input_tokens_details", "output_tokens_details");
    if (refusal.len && !nparts) {
        snprintf(reply->error, sizeof reply->error, "the model declined to answer (refusal: %.300s); reply from %s",
                 buf_str(&refusal), url);
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
    } else if (incomplete && !reply->truncated && !nparts) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s is incomplete (%s) and has no text; the model answered with nothing usable",
                 url, cJSON_IsString(why) ? why->valuestring : "no reason given");
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
    } else if (!nparts && !reply->reasoning && !reply->truncated) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no output_text (status %s); the model answered with nothing usable", url,
                 cJSON_IsString(status) ? status->valuestring : "missing");
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
    } else {
        rc = llm_take_text(hb, reply, buf_str(&text), url);
    }
    buf_free(&text);
    buf_free(&refusal);
    llm_account(hb, req, reply, llm_usage_field(usage, "input_tokens"), llm_usage_field(usage, "output_tokens"));
out:
    cJSON_Delete(j);
    free(url);
    return rc;
}

/* ---- the Responses API's event stream (llm_stream.h) ----
 * response.created carries the response so far; response.output_text.delta
 * the answer text and response.reasoning_summary_text.delta (or
 * response.reasoning_text.delta) the reasoning, as they are written;
 * response.completed, response.incomplete and response.failed carry the
 * whole response, usage included, and end the stream; an error event ends
 * it with the error. The whole response is the reply when the last event
 * carries its output; else it is rebuilt from the deltas. */

static const char *event_type(const cJSON *j, const char *event)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
    return cJSON_IsString(t) ? t->valuestring : event;
}

static int delta_to(struct llm_stream *s, struct buf *b, enum llm_delta_kind kind, const cJSON *j)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "delta");
    if (!cJSON_IsString(d)) return 0;
    buf_adds(b, d->valuestring);
    return llm_stream_emit(s, kind, d->valuestring, strlen(d->valuestring));
}

static int llm_stream_responses_event(struct llm_stream *s, const char *event, const cJSON *j)
{
    const char *type = event_type(j, event);
    const cJSON *resp = cJSON_GetObjectItemCaseSensitive(j, "response");
    if (!strcmp(type, "response.output_text.delta")) return delta_to(s, &s->content, LLM_DELTA_TEXT, j);
    if (!strcmp(type, "response.reasoning_summary_text.delta") || !strcmp(type, "response.reasoning_text.delta"))
        return delta_to(s, &s->reasoning, LLM_DELTA_REASONING, j);
    if (!strcmp(type, "response.refusal.delta")) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "delta");
        if (cJSON_IsString(d)) buf_adds(&s->refusal, d->valuestring);
        return 0;
    }
    if (cJSON_IsObject(resp)) {   /* response.created, .in_progress, .completed, .incomplete, .failed */
        cJSON_Delete(s->doc);
        s->doc = cJSON_Duplicate(resp, 1);
        if (!strcmp(type, "response.completed") || !strcmp(type, "response.incomplete") ||
            !strcmp(type, "response.failed"))
            s->done = 1;
        return 0;
    }
    if (!strcmp(type, "error")) {   /* {"type": "error", "code", "message", "param"} */
        cJSON_Delete(s->error);
        s->error = cJSON_CreateObject();
        static const char *const f[] = {"message", "code", "param"};
        for (size_t i = 0; i < ARRAY_LEN(f); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, f[i]);
            if (v) cJSON_AddItemToObject(s->error, f[i], cJSON_Duplicate(v, 1));
        }
        s->done = 1;
    }
    return 0;
}

/* output[] from the deltas, for a last event that carried none. */
static void output_from_deltas(struct llm_stream *s, cJSON *doc)
{
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "output");
    cJSON *out = cJSON_AddArrayToObject(doc, "output");
    if (s->reasoning.len) {
        cJSON *item = cJSON_CreateObject(), *part = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "type", "reasoning");
        cJSON_AddStringToObject(part, "type", "summary_text");
        cJSON_AddStringToObject(part, "text", buf_str(&s->reasoning));
        cJSON_AddItemToArray(cJSON_AddArrayToObject(item, "summary"), part);
        cJSON_AddItemToArray(out, item);
    }
    cJSON *msg = cJSON_CreateObject(), *part = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "type", "message");
    cJSON_AddStringToObject(msg, "role", "assistant");
    if (s->refusal.len) {
        cJSON_AddStringToObject(part, "type", "refusal");
        cJSON_AddStringToObject(part, "refusal", buf_str(&s->refusal));
    } else {
        cJSON_AddStringToObject(part, "type", "output_text");
        cJSON_AddStringToObject(part, "text", buf_str(&s->content));
    }
    cJSON_AddItemToArray(cJSON_AddArrayToObject(msg, "content"), part);
    cJSON_AddItemToArray(out, msg);
}

static cJSON *llm_stream_responses_doc(struct llm_stream *s)
{
    const cJSON *e = s->error ? s->error : cJSON_GetObjectItemCaseSensitive(s->doc, "error");
    if (e && !cJSON_IsNull(e)) {   /* an error event, or response.failed's error */
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "error", cJSON_Duplicate(e, 1));
        return doc;
    }
    if (!s->done) return NULL;
    cJSON *doc = cJSON_Duplicate(s->doc, 1);
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(doc, "output");
    if ((!cJSON_IsArray(out) || !cJSON_GetArraySize(out)) && (s->content.len || s->reasoning.len || s->refusal.len))
        output_from_deltas(s, doc);
    return doc;
}

const struct llm_stream_api llm_stream_responses_api = {LLM_WIRE_RESPONSES, llm_stream_responses_event,
                                                      llm_stream_responses_doc};
