/*
 * llm_anthropic: the Anthropic messages API. POST {base}/v1/messages with
 * x-api-key and anthropic-version: 2023-06-01; the system prompt is a
 * top-level field and max_tokens is required. The API has no response_format,
 * so json_mode changes nothing here: the prompt asks for JSON and jsonx finds
 * it in the text. The text is the concatenation of the reply's text blocks;
 * the counts come from usage.input_tokens / usage.output_tokens.
 */
#include "llm.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *anthropic_body(const struct llm_http_backend *hb, const struct llm_request *req)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", hb->model);
    cJSON_AddNumberToObject(root, "max_tokens", req->max_tokens > 0 ? req->max_tokens : hb->max_tokens);
    if (req->system) cJSON_AddStringToObject(root, "system", req->system);
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    for (size_t i = 0; i < req->nmessages; i++) llm_add_message(msgs, req->messages[i].role, req->messages[i].content);
    cJSON_AddNumberToObject(root, "temperature", req->temperature >= 0 ? req->temperature : hb->temperature);
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

static int anthropic_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply)
{
    struct llm_http_backend *hb = b->impl;
    memset(reply, 0, sizeof *reply);
    reply->cost_usd = -1;
    if (llm_check_request(req, reply)) return LLM_ERR_REQUEST;
    /* Accept a base given with or without the /v1 the API paths start with. */
    char *url = xasprintf("%s%s/messages", hb->base, str_ends(hb->base, "/v1") ? "" : "/v1");
    char *auth = hb->key ? xasprintf("x-api-key: %s", hb->key) : NULL;
    const char *headers[] = {"anthropic-version: 2023-06-01", auth, NULL};
    char *body = anthropic_body(hb, req);
    cJSON *j = NULL;
    int rc = llm_http_call(hb, req, url, headers, body, reply, &j);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    free(body);
    if (rc != LLM_OK) goto out;

    const cJSON *content = cJSON_GetObjectItemCaseSensitive(j, "content"), *blk;
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(j, "stop_reason");
    struct buf text = BUF_INIT;
    int ntext = 0;
    const cJSON *blocks = cJSON_IsArray(content) ? content : NULL;
    cJSON_ArrayForEach(blk, blocks) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(blk, "type");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "text") == 0 && cJSON_IsString(t)) {
            buf_adds(&text, t->valuestring);
            ntext++;
        }
    }
    if (!ntext) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no text content (stop_reason %s); the model answered with nothing usable",
                 url, cJSON_IsString(stop) ? stop->valuestring : "missing");
        buf_free(&text);
        rc = LLM_ERR_REPLY;
        goto out;
    }
    reply->text = buf_take(&text);
    reply->truncated = cJSON_IsString(stop) && strcmp(stop->valuestring, "max_tokens") == 0;
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    llm_account(hb, req, reply, llm_usage_field(usage, "input_tokens"), llm_usage_field(usage, "output_tokens"));
out:
    cJSON_Delete(j);
    free(url);
    return rc;
}

struct llm_backend *llm_anthropic_new(const struct drqa_config *c, char *err, size_t errlen)
{
    return llm_http_backend_new(c, "anthropic", anthropic_chat, err, errlen);
}
