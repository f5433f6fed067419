/*
 * llm_reply: the small steps the HTTP backends (llm_openai.c,
 * llm_responses.c, llm_anthropic.c) and the stream reader share around a
 * call: building and wiping the key's header, reading the type of a reply's
 * part, gathering its reasoning, reading its usage and counting its tokens
 * and cost.
 */
#include "llm.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* An Entra ID access token is a JWT: base64url of '{"' first. */
static int is_jwt(const char *key)
{
    return str_starts(key, "eyJ") && strchr(key, '.') != NULL;
}

char *llm_openai_auth_header(const struct llm_http_backend *hb)
{
    if (!hb->key) return NULL;
    /* Azure takes its resource keys in api-key; Entra ID tokens as Bearer */
    if (hb->azure && !is_jwt(hb->key)) return xasprintf("api-key: %s", hb->key);
    return xasprintf("Authorization: Bearer %s", hb->key);
}

void llm_header_free(char *header)
{
    if (!header) return;
    memset(header, 0, strlen(header));
    free(header);
}

void llm_reply_add_reasoning(struct llm_reply *reply, const char *s, size_t n)
{
    char *old = reply->reasoning;
    reply->reasoning = old ? xasprintf("%s\n%.*s", old, (int)n, s) : xstrndup(s, n);
    free(old);
}

void llm_reply_usage_details(struct llm_reply *reply, const cJSON *usage, const char *in_details,
                             const char *out_details)
{
    long cached = llm_usage_field(cJSON_GetObjectItemCaseSensitive(usage, in_details), "cached_tokens");
    long reasoning = llm_usage_field(cJSON_GetObjectItemCaseSensitive(usage, out_details), "reasoning_tokens");
    reply->cached_tokens = cached > 0 ? cached : 0;
    reply->reasoning_tokens = reasoning > 0 ? reasoning : 0;
}

const char *llm_json_type(const cJSON *o)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    return cJSON_IsString(type) ? type->valuestring : "";
}

long llm_usage_field(const cJSON *usage, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (long)v->valuedouble : -1;
}

long llm_estimate_tokens(size_t bytes) { return (long)((bytes + 3) / 4); }

void llm_account(struct llm_http_backend *hb, const struct llm_request *req, struct llm_reply *reply,
                 long input_tokens, long output_tokens)
{
    reply->tokens_estimated = 0;
    if (input_tokens < 0) {
        size_t bytes = req->system ? strlen(req->system) : 0;
        for (size_t i = 0; i < req->nmessages; i++)
            bytes += req->messages[i].content ? strlen(req->messages[i].content) : 0;
        input_tokens = llm_estimate_tokens(bytes);
        reply->tokens_estimated = 1;
    }
    if (output_tokens < 0) {
        size_t bytes = (reply->text ? strlen(reply->text) : 0) + (reply->reasoning ? strlen(reply->reasoning) : 0);
        output_tokens = llm_estimate_tokens(bytes);
        reply->tokens_estimated = 1;
    }
    reply->input_tokens = input_tokens;
    reply->output_tokens = output_tokens;
    const struct llm_profile *p = &hb->prof;
    if (p->price_input < 0 || p->price_output < 0) {
        reply->cost_usd = -1;
        return;
    }
    double cached_price = p->price_cached >= 0 ? p->price_cached : p->price_input;
    long cached = reply->cached_tokens > 0 ? reply->cached_tokens : 0;
    long written = reply->cache_write_tokens > 0 ? reply->cache_write_tokens : 0;
    long plain = input_tokens - cached - written;
    if (plain < 0) plain = 0;
    /* Anthropic bills a 5-minute cache write at 1.25 times the input price */
    reply->cost_usd = (plain * p->price_input + cached * cached_price + written * p->price_input * 1.25 +
                       output_tokens * p->price_output) / 1e6;
}
