/*
 * llm_openai: the OpenAI chat-completions API, which most servers speak
 * (OpenAI, vLLM, Ollama's /v1, llama.cpp server, OpenRouter, DeepSeek, Kimi,
 * GLM, Qwen). POST {base}/chat/completions with an optional Bearer key (local
 * servers need none). The body is model and messages plus what the model's
 * profile (llm.h) positively knows it takes: the reply limit as max_tokens
 * or max_completion_tokens (none for a model in no row), a temperature only
 * where the model takes one, the system prompt folded into the first user
 * message for a model without a system role, reasoning_effort when the profile sets one, and
 * response_format json_schema {name, schema, strict: false} (or json_object)
 * when the request asks for JSON and the profile has structured output. The
 * text is choices[0].message.content without its thinking;
 * message.reasoning_content (vLLM, DeepSeek, llama.cpp) or message.reasoning
 * (Ollama, OpenRouter) is the reasoning. Counts come from usage:
 * prompt_tokens (with prompt_tokens_details.cached_tokens) and
 * completion_tokens (with completion_tokens_details.reasoning_tokens).
 *
 * A model served on the Responses API alone (its profile's api, or a 404/400
 * from chat completions saying "only supported in v1/responses") is asked
 * there instead (llm_responses.c), for the rest of the run; the switch is
 * said once on stderr. Azure OpenAI (llm_azure_new) is this backend with the
 * key in an api-key header and its URL forms checked when it is built.
 */
#include "llm.h"
#include "llm_stream.h"
#include "url.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *openai_body(const struct llm_http_backend *hb, const struct llm_request *req, int adjust)
{
    const struct llm_profile *p = &hb->prof;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", hb->model);
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    llm_add_messages(msgs, req, 1, llm_system_as_user(hb, adjust));
    /* the reply as an event stream, with the usage in its last chunk (a
     * server that refuses either has it dropped: llm.c's adjustment) */
    if (llm_streams(hb)) {
        cJSON_AddTrueToObject(root, "stream");
        cJSON_AddTrueToObject(cJSON_AddObjectToObject(root, "stream_options"), "include_usage");
    }
    /* the rest is optional: sent only where the profile knows the model
     * takes it or the config sets it */
    double t;
    if (llm_send_temperature(hb, req, adjust, &t)) cJSON_AddNumberToObject(root, "temperature", t);
    enum llm_token_param tp = p->token_param;
    if (adjust & LLM_ADJ_TOKEN_PARAM)
        tp = tp == LLM_TOKENS_MAX_TOKENS ? LLM_TOKENS_MAX_COMPLETION_TOKENS : LLM_TOKENS_MAX_TOKENS;
    int limit = llm_reply_limit(hb, req);
    if (limit > 0 && !(adjust & LLM_ADJ_NO_LIMIT)) cJSON_AddNumberToObject(root, llm_token_param_name(tp), limit);
    if (p->effort_param && p->effort[0] && !(adjust & LLM_ADJ_NO_EFFORT))
        cJSON_AddStringToObject(root, "reasoning_effort", p->effort);
    if (adjust & LLM_ADJ_NO_THINKING) cJSON_AddFalseToObject(root, "enable_thinking");
    enum llm_schema_mode mode = adjust & LLM_ADJ_NO_SCHEMA ? LLM_SCHEMA_NONE : p->schema;
    /* a server that refused json_object gets the schema, or any object */
    int as_schema = (adjust & LLM_ADJ_JSON_SCHEMA) && mode == LLM_SCHEMA_JSON_OBJECT && (req->schema || req->json_mode);
    int schema_mode = mode == LLM_SCHEMA_JSON_SCHEMA || mode == LLM_SCHEMA_TOOL || mode == LLM_SCHEMA_TOOL_AUTO;
    if ((schema_mode && req->schema) || as_schema) {
        cJSON *rf = cJSON_AddObjectToObject(root, "response_format");
        cJSON_AddStringToObject(rf, "type", "json_schema");
        cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
        cJSON_AddStringToObject(js, "name", req->schema && req->schema_name ? req->schema_name : "reply");
        cJSON *sch = req->schema ? cJSON_Duplicate(req->schema, 1) : cJSON_CreateObject();
        if (!req->schema) cJSON_AddStringToObject(sch, "type", "object");
        cJSON_AddItemToObject(js, "schema", sch);
        cJSON_AddBoolToObject(js, "strict", 0);
    } else if (mode != LLM_SCHEMA_NONE && (req->schema || req->json_mode)) {
        cJSON *rf = cJSON_AddObjectToObject(root, "response_format");
        cJSON_AddStringToObject(rf, "type", "json_object");
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

/* message.content as a list of parts (Mistral's Magistral models: a
 * {"type": "thinking", "thinking": [{"type": "text", "text"}]} part, then
 * {"type": "text", "text"} parts; other servers send text parts alone): the
 * text parts put together in order, NULL when there is none; thinking goes
 * to reply->reasoning. */
static char *content_parts(const cJSON *parts, struct llm_reply *reply)
{
    struct buf text = BUF_INIT, think = BUF_INIT;
    int any = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, parts) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "text");
        if (cJSON_IsString(p)) {
            buf_adds(&text, p->valuestring);
            any = 1;
        } else if (cJSON_IsString(type) && !strcmp(type->valuestring, "text") && cJSON_IsString(t)) {
            buf_adds(&text, t->valuestring);
            any = 1;
        } else if (cJSON_IsString(type) && !strcmp(type->valuestring, "thinking")) {
            const cJSON *th = cJSON_GetObjectItemCaseSensitive(p, "thinking"), *q;
            const cJSON *list = cJSON_IsArray(th) ? th : NULL;
            if (cJSON_IsString(th)) buf_adds(&think, th->valuestring);
            cJSON_ArrayForEach(q, list) {
                const cJSON *qt = cJSON_GetObjectItemCaseSensitive(q, "text");
                if (cJSON_IsString(qt)) buf_adds(&think, qt->valuestring);
            }
        }
    }
    if (think.len && !reply->reasoning) reply->reasoning = buf_take(&think);
    buf_free(&think);
    if (!any) {
        buf_free(&text);
        return NULL;
    }
    return buf_take(&text);
}

/* OpenAI's refusal of a model on chat completions that it serves on the
 * Responses API alone: 404 (or 400) "This model is only supported in
 * v1/responses and not in v1/chat/completions." */
static int responses_only_refusal(const struct llm_reply *reply)
{
    return (reply->http_status == 404 || reply->http_status == 400) &&
           strstr(reply->error, "only supported in v1/responses") != NULL;
}

/* One exchange and the reading of its reply. */
static int openai_once(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                       const char *const *headers, struct llm_reply *reply)
{
    cJSON *j = NULL;
    int rc = llm_http_exchange(hb, req, url, headers, openai_body, &llm_stream_chat_api, reply, &j);
    if (rc != LLM_OK) goto out;

    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    if (!cJSON_IsObject(c0)) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no choices; the server returned no completion (check the model name)", url);
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
        goto out;
    }
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const cJSON *finish0 = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
    const cJSON *cerr = cJSON_GetObjectItemCaseSensitive(c0, "error");
    const cJSON *refusal0 = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
    if ((cJSON_IsObject(cerr) || cJSON_IsString(cerr)) ||
        (cJSON_IsString(finish0) && !strcmp(finish0->valuestring, "error"))) {
        /* OpenRouter: a provider failing mid-generation leaves status 200,
         * finish_reason "error" and choices[0].error {code, message} */
        if (cerr && !cJSON_IsNull(cerr)) {
            reply->fail = llm_body_error(cerr, "the provider behind", url, reply->error, sizeof reply->error);
            size_t n = strlen(reply->error);
            snprintf(reply->error + n, sizeof reply->error - n, " (choices[0].error, finish_reason %s)",
                     cJSON_IsString(finish0) ? finish0->valuestring : "missing");
        } else {
            snprintf(reply->error, sizeof reply->error,
                     "the provider behind %s stopped the reply with finish_reason \"error\" and gave no reason", url);
            reply->fail = LLM_FAIL_PROVIDER;
        }
        rc = LLM_ERR_REPLY;
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
        llm_account(hb, req, reply, llm_usage_field(u, "prompt_tokens"), llm_usage_field(u, "completion_tokens"));
        goto out;
    }
    if (cJSON_IsString(refusal0) && *refusal0->valuestring) {
        /* OpenAI structured outputs: the model declined; content is null */
        snprintf(reply->error, sizeof reply->error, "the model declined to answer (message.refusal): %.300s",
                 refusal0->valuestring);
        reply->fail = LLM_FAIL_REFUSAL;
        rc = LLM_ERR_REPLY;
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
        llm_account(hb, req, reply, llm_usage_field(u, "prompt_tokens"), llm_usage_field(u, "completion_tokens"));
        goto out;
    }
    char *parts_text = NULL;   /* content given as a list of parts, put together */
    if (cJSON_IsArray(content)) {
        parts_text = content_parts(content, reply);
        content = NULL;
    }
    const cJSON *finish = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
    const cJSON *rc_field = cJSON_GetObjectItemCaseSensitive(msg, "reasoning_content");
    if (!cJSON_IsString(rc_field)) rc_field = cJSON_GetObjectItemCaseSensitive(msg, "reasoning");
    if (cJSON_IsString(rc_field) && *rc_field->valuestring) reply->reasoning = xstrdup(rc_field->valuestring);
    reply->truncated = cJSON_IsString(finish) && strcmp(finish->valuestring, "length") == 0;
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    llm_reply_usage_details(reply, usage, "prompt_tokens_details", "completion_tokens_details");
    if (cJSON_IsString(finish) && strcmp(finish->valuestring, "content_filter") == 0) {
        /* the provider's content filter stopped the reply; what came before
         * it (Azure OpenAI keeps it) is a partial reply that would read as a
         * whole one: dropped, and the call fails */
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s was stopped by the provider's content filter (finish_reason content_filter); "
                 "its partial content was dropped",
                 url);
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
    } else if (!cJSON_IsString(content) && !parts_text && !reply->reasoning && !reply->truncated) {
        const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no message content (finish_reason %s%s%s); the model answered with nothing usable",
                 url, cJSON_IsString(finish) ? finish->valuestring : "missing",
                 cJSON_IsString(refusal) ? ", refusal: " : "", cJSON_IsString(refusal) ? refusal->valuestring : "");
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
    } else {
        rc = llm_take_text(hb, reply, parts_text ? parts_text : cJSON_IsString(content) ? content->valuestring : "", url);
    }
    free(parts_text);
    /* a failed reply still spent its tokens */
    llm_account(hb, req, reply, llm_usage_field(usage, "prompt_tokens"), llm_usage_field(usage, "completion_tokens"));
    /* a router that bills the call says what it cost (OpenRouter's
     * usage.cost, USD): believed over the table's prices */
    const cJSON *cost = cJSON_GetObjectItemCaseSensitive(usage, "cost");
    if (cJSON_IsNumber(cost) && cost->valuedouble >= 0) reply->cost_usd = cost->valuedouble;
    rc = llm_check_cut(hb, req, reply, rc);
out:
    cJSON_Delete(j);
    return rc;
}

static int openai_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply)
{
    struct llm_http_backend *hb = b->impl;
    if (atomic_load(&hb->responses)) return llm_responses_chat(b, req, reply);
    memset(reply, 0, sizeof *reply);
    reply->cost_usd = -1;
    if (llm_check_request(req, reply)) return LLM_ERR_REQUEST;
    char *url = url_join(hb->base, "/chat/completions");
    char *auth = llm_openai_auth_header(hb);
    const char *headers[] = {auth, NULL};
    int rc = llm_once_raising(hb, req, url, headers, reply, openai_once);
    if (rc == LLM_ERR_STATUS && responses_only_refusal(reply)) {
        if (!atomic_exchange(&hb->responses, 1)) {
            log_msg("llm: %s is served on the Responses API alone; asking there for the rest of the run", hb->label);
            fprintf(stderr, "drqa-tui: note: model %s is served on the Responses API alone (its chat completions "
                            "answer: only supported in v1/responses); asking it there for the rest of the run "
                            "(profile.%s.api = responses in the config file says so from the start)\n",
                    hb->model, hb->model);
        }
        llm_header_free(auth);
        free(url);
        llm_reply_free(reply);
        return llm_responses_chat(b, req, reply);
    }
    llm_header_free(auth);
    free(url);
    return rc;
}

struct llm_backend *llm_openai_new(const struct drqa_config *c, const char *model, char *err, size_t errlen)
{
    struct llm_profile prof;
    if (model) config_profile(c, model, &prof);
    return llm_http_backend_new(c, model, model && prof.api == LLM_API_RESPONSES ? "openai-responses"
                                                                                  : "openai-compatible",
                                openai_chat, err, errlen);
}

/* The path part of url (after the authority), "" when none. */
static const char *url_path(const char *url)
{
    const char *a = strstr(url, "://");
    a = a ? a + 3 : url;
    return a + strcspn(a, "/?#");
}

struct llm_backend *llm_azure_new(const struct drqa_config *c, const char *model, char *err, size_t errlen)
{
    const char *path = url_path(c->api_base);
    struct drqa_config ac = *c;   /* borrowed strings, for the base taken */
    char *base = NULL;
    if (strstr(path, "/openai/deployments/")) {
        /* the classic form: the deployment routes, api-version is required */
        if (!strstr(path, "api-version=")) {
            char *safe = url_redact(c->api_base);
            snprintf(err, errlen, "the Azure OpenAI deployment URL '%s' has no api-version; add "
                     "?api-version=2024-10-21 (or the version your resource runs), or use the v1 endpoint "
                     "https://RESOURCE.openai.azure.com/openai/v1", safe);
            free(safe);
            return NULL;
        }
    } else if (path[strcspn(path, "?#")] == 0 && (!*path || !strcmp(path, "/openai"))) {
        /* the resource alone: its v1 endpoint, which needs no api-version */
        base = xasprintf("%s%s/v1", c->api_base, *path ? "" : "/openai");
        ac.api_base = base;
    }
    struct llm_backend *b = llm_openai_new(&ac, model, err, errlen);
    if (!b) {
        free(base);
        return NULL;
    }
    struct llm_http_backend *hb = b->impl;
    hb->azure = 1;
    if (atomic_load(&hb->responses) && strstr(path, "/openai/deployments/")) {
        snprintf(err, errlen, "model %s is served on the Responses API, which Azure OpenAI offers on its v1 "
                 "endpoint, not under a deployment URL; set api_base to https://RESOURCE.openai.azure.com/openai/v1 "
                 "and model to the deployment's name", model);
        llm_backend_free(b);
        free(base);
        return NULL;
    }
    char *safe = url_redact(ac.api_base);   /* base, when made here: freed only now */
    free(hb->label);
    hb->label = xasprintf("azure-openai%s %s at %s", atomic_load(&hb->responses) ? " responses" : "", model, safe);
    free(safe);
    free(base);
    return b;
}
