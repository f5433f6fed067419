/*
 * llm_reply: the small steps the HTTP backends (llm_openai.c,
 * llm_responses.c, llm_anthropic.c) share around a call: wiping the key's
 * header, reading the type of a reply's part, gathering its reasoning and
 * reading its usage details.
 */
#include "llm.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

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
