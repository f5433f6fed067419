/*
 * llm_openai: the OpenAI chat-completions API, which most servers speak
 * (OpenAI, vLLM, Ollama's /v1, llama.cpp server, OpenRouter, DeepSeek, Kimi,
 * GLM, Qwen). POST {base}/chat/completions with an optional Bearer key (local
 * servers need none); response_format json_object when both the request and
 * the config ask for JSON; the text is choices[0].message.content and the
 * counts come from usage.prompt_tokens / usage.completion_tokens.
 */
#include "llm.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *openai_body(const struct llm_http_backend *hb, const struct llm_request *req)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", hb->model);
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    if (req->system) llm_add_message(msgs, "system", req->system);
    for (size_t i = 0; i < req->nmessages; i++) llm_add_message(msgs, req->messages[i].role, req->messages[i].content);
    double t = req->temperature >= 0 ? req->temperature : hb->temperature;
    cJSON_AddNumberToObject(root, "temperature", t);
    cJSON_AddNumberToObject(root, "max_tokens", req->max_tokens > 0 ? req->max_tokens : hb->max_tokens);
    cJSON_AddBoolToObject(root, "stream", 0);
    if (req->json_mode && hb->json_mode) {
        cJSON *rf = cJSON_AddObjectToObject(root, "response_format");
        cJSON_AddStringToObject(rf, "type", "json_object");
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

static int openai_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply)
{
    struct llm_http_backend *hb = b->impl;
    memset(reply, 0, sizeof *reply);
    reply->cost_usd = -1;
    if (llm_check_request(req, reply)) return LLM_ERR_REQUEST;
    char *url = xasprintf("%s/chat/completions", hb->base);
    char *auth = hb->key ? xasprintf("Authorization: Bearer %s", hb->key) : NULL;
    const char *headers[] = {auth, NULL};
    char *body = openai_body(hb, req);
    cJSON *j = NULL;
    int rc = llm_http_call(hb, req, url, headers, body, reply, &j);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    free(body);
    if (rc != LLM_OK) goto out;

    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    if (!cJSON_IsObject(c0)) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no choices; the server returned no completion (check the model name)", url);
        rc = LLM_ERR_REPLY;
        goto out;
    }
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const cJSON *finish = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
    if (!cJSON_IsString(content)) {
        const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no message content (finish_reason %s%s%s); the model answered with nothing usable",
                 url, cJSON_IsString(finish) ? finish->valuestring : "missing",
                 cJSON_IsString(refusal) ? ", refusal: " : "", cJSON_IsString(refusal) ? refusal->valuestring : "");
        rc = LLM_ERR_REPLY;
        goto out;
    }
    reply->text = xstrdup(content->valuestring);
    reply->truncated = cJSON_IsString(finish) && strcmp(finish->valuestring, "length") == 0;
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    llm_account(hb, req, reply, llm_usage_field(usage, "prompt_tokens"), llm_usage_field(usage, "completion_tokens"));
out:
    cJSON_Delete(j);
    free(url);
    return rc;
}

struct llm_backend *llm_openai_new(const struct drqa_config *c, char *err, size_t errlen)
{
    return llm_http_backend_new(c, "openai-compatible", openai_chat, err, errlen);
}
