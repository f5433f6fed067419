/*
 * llm_anthropic: the Anthropic messages API. POST {base}/v1/messages with
 * x-api-key and anthropic-version: 2023-06-01; max_tokens is required (the
 * profile's, else LLM_ANTHROPIC_DEFAULT_MAX). The
 * system prompt is one text block marked cache_control ephemeral, and so is
 * the stable head of the first message (llm_request.cache_prefix) as a block
 * of its own: the cached prefix is then tools + system + that head, which
 * from the second call of a role on is read from the cache once it reaches
 * the model's minimum cacheable length (1024 to 4096 tokens; a shorter
 * prefix is simply not cached, and the system breakpoint alone seldom
 * reaches it).
 * Structured output is tool use: with a schema and the profile's schema
 * "tool", the request offers one tool {name, description, input_schema} and
 * forces it with tool_choice ("tool_auto": offered only, for the models
 * that think and refuse forced tool use); the tool_use block's input,
 * printed as JSON, is the reply text. Otherwise the text is the concatenation of the text
 * blocks; thinking blocks are the reasoning. Counts come from usage:
 * input_tokens plus cache_read_input_tokens and cache_creation_input_tokens
 * (the API reports the three apart) and output_tokens.
 */
#include "llm.h"
#include "llm_stream.h"
#include "url.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *anthropic_body(const struct llm_http_backend *hb, const struct llm_request *req, int adjust)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", hb->model);
    int limit = llm_reply_limit(hb, req);   /* required by the API */
    cJSON_AddNumberToObject(root, "max_tokens", limit > 0 ? limit : LLM_ANTHROPIC_DEFAULT_MAX);
    if (llm_streams(hb)) cJSON_AddTrueToObject(root, "stream");
    if (req->system) {
        cJSON *sys = cJSON_AddArrayToObject(root, "system");
        cJSON *blk = cJSON_CreateObject();
        cJSON_AddStringToObject(blk, "type", "text");
        cJSON_AddStringToObject(blk, "text", req->system);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(blk, "cache_control"), "type", "ephemeral");
        cJSON_AddItemToArray(sys, blk);
    }
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    for (size_t i = 0; i < req->nmessages; i++) {
        const char *c = req->messages[i].content;
        size_t n = strlen(c), head = i == 0 ? req->cache_prefix : 0;
        if (!head || head > n) {
            llm_add_message(msgs, req->messages[i].role, c);
            continue;
        }
        /* the stable head as its own block, the breakpoint after it; the
         * rest (the call's own part) in a second block */
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", req->messages[i].role);
        cJSON *blocks = cJSON_AddArrayToObject(m, "content");
        cJSON *blk = cJSON_CreateObject();
        cJSON_AddStringToObject(blk, "type", "text");
        char *h = xstrndup(c, head);
        cJSON_AddStringToObject(blk, "text", h);
        free(h);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(blk, "cache_control"), "type", "ephemeral");
        cJSON_AddItemToArray(blocks, blk);
        if (head < n) {
            blk = cJSON_CreateObject();
            cJSON_AddStringToObject(blk, "type", "text");
            cJSON_AddStringToObject(blk, "text", c + head);
            cJSON_AddItemToArray(blocks, blk);
        }
        cJSON_AddItemToArray(msgs, m);
    }
    double t;
    if (llm_send_temperature(hb, req, adjust, &t)) cJSON_AddNumberToObject(root, "temperature", t);
    enum llm_schema_mode mode = hb->prof.schema;
    if (req->schema && (mode == LLM_SCHEMA_TOOL || mode == LLM_SCHEMA_TOOL_AUTO) && !(adjust & LLM_ADJ_NO_SCHEMA)) {
        const char *name = req->schema_name ? req->schema_name : "reply";
        cJSON *tools = cJSON_AddArrayToObject(root, "tools");
        cJSON *tool = cJSON_CreateObject();
        cJSON_AddStringToObject(tool, "name", name);
        cJSON_AddStringToObject(tool, "description", "Give the reply asked for, as this tool's input.");
        cJSON_AddItemToObject(tool, "input_schema", cJSON_Duplicate(req->schema, 1));
        cJSON_AddItemToArray(tools, tool);
        /* forced, unless the model thinks (forced tool use is refused then:
         * the tool is offered and its input or the text is the reply) */
        if (mode == LLM_SCHEMA_TOOL && !(adjust & LLM_ADJ_NO_TOOL_CHOICE)) {
            cJSON *choice = cJSON_AddObjectToObject(root, "tool_choice");
            cJSON_AddStringToObject(choice, "type", "tool");
            cJSON_AddStringToObject(choice, "name", name);
        }
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

/* One exchange and the reading of its reply. */
static int anthropic_once(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                          const char *const *headers, struct llm_reply *reply)
{
    cJSON *j = NULL;
    int rc = llm_http_exchange(hb, req, url, headers, anthropic_body, &llm_stream_messages_api, reply, &j);
    if (rc != LLM_OK) goto out;

    const cJSON *content = cJSON_GetObjectItemCaseSensitive(j, "content"), *blk;
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(j, "stop_reason");
    struct buf text = BUF_INIT;
    int ntext = 0;
    char *tool_input = NULL;
    const cJSON *blocks = cJSON_IsArray(content) ? content : NULL;
    cJSON_ArrayForEach(blk, blocks) {
        const char *ty = llm_json_type(blk);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(blk, "thinking");
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(blk, "input");
        if (!strcmp(ty, "text") && cJSON_IsString(t)) {
            buf_adds(&text, t->valuestring);
            ntext++;
        } else if (!strcmp(ty, "thinking") && cJSON_IsString(th) && *th->valuestring) {
            llm_reply_add_reasoning(reply, th->valuestring, strlen(th->valuestring));
        } else if (!strcmp(ty, "tool_use") && req->schema && cJSON_IsObject(in) && !tool_input) {
            tool_input = cJSON_PrintUnformatted(in);
        }
    }
    /* cut short: at max_tokens, or at the end of the model's context window
     * (stop_reason model_context_window_exceeded, Claude Sonnet 4.5 on) */
    reply->truncated = cJSON_IsString(stop) && (strcmp(stop->valuestring, "max_tokens") == 0 ||
                                                strcmp(stop->valuestring, "model_context_window_exceeded") == 0);
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    long in = llm_usage_field(usage, "input_tokens");
    long cread = llm_usage_field(usage, "cache_read_input_tokens");
    long cwrite = llm_usage_field(usage, "cache_creation_input_tokens");
    reply->cached_tokens = cread > 0 ? cread : 0;
    reply->cache_write_tokens = cwrite > 0 ? cwrite : 0;
    if (in >= 0) in += reply->cached_tokens + reply->cache_write_tokens;
    if (cJSON_IsString(stop) && strcmp(stop->valuestring, "refusal") == 0) {
        /* Claude 4's classifiers stop a reply with stop_reason "refusal",
         * keeping what was written before as text: a partial reply that
         * would read as a whole one. It is dropped and the call fails. */
        const cJSON *det = cJSON_GetObjectItemCaseSensitive(j, "stop_details");
        const cJSON *expl = cJSON_GetObjectItemCaseSensitive(det, "explanation");
        snprintf(reply->error, sizeof reply->error,
                 "the model declined to answer (stop_reason refusal%s%s); its partial reply from %s was dropped",
                 cJSON_IsString(expl) ? ": " : "", cJSON_IsString(expl) ? expl->valuestring : "", url);
        reply->fail = LLM_FAIL_REFUSAL;
        rc = LLM_ERR_REPLY;
        free(tool_input);
    } else if (tool_input) {
        reply->text = tool_input;
    } else if (!ntext && !reply->reasoning && !reply->truncated) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has no text content (stop_reason %s); the model answered with nothing usable",
                 url, cJSON_IsString(stop) ? stop->valuestring : "missing");
        reply->fail = LLM_FAIL_BAD_REPLY;
        rc = LLM_ERR_REPLY;
    } else {
        rc = llm_take_text(hb, reply, buf_str(&text), url);
    }
    buf_free(&text);
    llm_account(hb, req, reply, in, llm_usage_field(usage, "output_tokens"));
out:
    cJSON_Delete(j);
    return rc;
}

static int anthropic_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply)
{
    struct llm_http_backend *hb = b->impl;
    memset(reply, 0, sizeof *reply);
    reply->cost_usd = -1;
    if (llm_check_request(req, reply)) return LLM_ERR_REQUEST;
    /* Accept a base given with or without the /v1 the API paths start with. */
    char *url = url_join(hb->base, url_path_ends(hb->base, "/v1") ? "/messages" : "/v1/messages");
    char *auth = hb->key ? xasprintf("x-api-key: %s", hb->key) : NULL;
    const char *headers[] = {"anthropic-version: 2023-06-01", auth, NULL};
    int rc = llm_once_raising(hb, req, url, headers, reply, anthropic_once);
    llm_header_free(auth);
    free(url);
    return rc;
}

struct llm_backend *llm_anthropic_new(const struct drqa_config *c, const char *model, char *err, size_t errlen)
{
    return llm_http_backend_new(c, model, "anthropic", anthropic_chat, err, errlen);
}
