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
    int rc = llm_http_exchange(hb, req, url, headers, responses_body, reply, &j);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    if (rc != LLM_OK) goto out;

    struct buf text = BUF_INIT, refusal = BUF_INIT;
    int nparts = 0;
    const cJSON *output = cJSON_GetObjectItemCaseSensitive(j, "output"), *item;
    const cJSON *items = cJSON_IsArray(output) ? output : NULL;
    cJSON_ArrayForEach(item, items) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
        const char *ty = cJSON_IsString(type) ? type->valuestring : "";
        if (!strcmp(ty, "reasoning")) {
            const cJSON *summary = cJSON_GetObjectItemCaseSensitive(item, "summary"), *s;
            const cJSON *list = cJSON_IsArray(summary) ? summary : NULL;
            cJSON_ArrayForEach(s, list) {
                const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "text");
                if (!cJSON_IsString(st) || !*st->valuestring) continue;
                char *old = reply->reasoning;
                reply->reasoning = old ? xasprintf("%s\n%s", old, st->valuestring) : xstrdup(st->valuestring);
                free(old);
            }
            continue;
        }
        if (strcmp(ty, "message")) continue;   /* tool calls and the like: none were offered */
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(item, "content"), *part;
        const cJSON *parts = cJSON_IsArray(content) ? content : NULL;
        cJSON_ArrayForEach(part, parts) {
            const cJSON *pt = cJSON_GetObjectItemCaseSensitive(part, "type");
            const char *pty = cJSON_IsString(pt) ? pt->valuestring : "";
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
    long cached = llm_usage_field(cJSON_GetObjectItemCaseSensitive(usage, "input_tokens_details"), "cached_tokens");
    long reasoning = llm_usage_field(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens_details"),
                                     "reasoning_tokens");
    reply->cached_tokens = cached > 0 ? cached : 0;
    reply->reasoning_tokens = reasoning > 0 ? reasoning : 0;
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
