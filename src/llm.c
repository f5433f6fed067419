/*
 * llm: the parts every chat backend shares (see llm.h): construction from the
 * config, the HTTP call with its error mapping, token estimation and cost,
 * and the per-tag usage ledger.
 */
#include "llm.h"
#include "llm_stream.h"
#include "url.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void llm_request_init(struct llm_request *r)
{
    memset(r, 0, sizeof *r);
    r->temperature = LLM_TEMPERATURE_DEFAULT;
}

void llm_reply_free(struct llm_reply *r)
{
    if (!r) return;
    free(r->text);
    r->text = NULL;
    free(r->reasoning);
    r->reasoning = NULL;
}

static const char *const fail_names[] = {"none", "transient", "context_length", "bad_parameter", "auth",
                                         "not_found", "bad_request", "bad_reply", "cancelled", "quota",
                                         "provider_error", "refusal", "unasked_stream"};

const char *llm_fail_name(enum llm_fail k)
{
    return (unsigned)k < ARRAY_LEN(fail_names) ? fail_names[k] : "none";
}

int llm_fail_persistent(enum llm_fail k)
{
    return k == LLM_FAIL_AUTH || k == LLM_FAIL_NOT_FOUND || k == LLM_FAIL_BAD_PARAMETER || k == LLM_FAIL_BAD_REQUEST ||
           k == LLM_FAIL_QUOTA;
}

static const char *http_name(const struct llm_backend *b)
{
    return ((const struct llm_http_backend *)b->impl)->label;
}

/* Counted at no fewer bytes a token than this (or the server's own ratio
 * when higher), the estimate of a request's tokens runs low: a request is
 * held back as too long only when it surely is. */
#define ROOM_BYTES_PER_TOKEN 4

static size_t http_room(const struct llm_backend *b)
{
    const struct llm_http_backend *hb = b->impl;
    long window = atomic_load(&hb->window);
    if (window <= 0) return 0;
    long ratio = atomic_load(&hb->bytes_per_token_x100);
    if (ratio < ROOM_BYTES_PER_TOKEN * 100) ratio = ROOM_BYTES_PER_TOKEN * 100;
    return (size_t)window * (size_t)ratio / 100;
}

size_t llm_backend_room(const struct llm_backend *b)
{
    return b && b->room ? b->room(b) : 0;
}

static void http_free(struct llm_backend *b)
{
    struct llm_http_backend *hb = b->impl;
    free(hb->base);
    if (hb->key) {
        memset(hb->key, 0, strlen(hb->key));
        free(hb->key);
    }
    free(hb->model);
    free(hb->label);
    pthread_mutex_destroy(&hb->dropped_lock);
    free(hb);
    free(b);
}

struct llm_backend *llm_http_backend_new(const struct drqa_config *c, const char *model, const char *label,
                                         int (*chat)(struct llm_backend *, const struct llm_request *,
                                                     struct llm_reply *),
                                         char *err, size_t errlen)
{
    if (!model) {
        snprintf(err, errlen, "no chat model is configured; set --model, DRQA_MODEL or 'model =' in the config file");
        return NULL;
    }
    struct llm_http_backend *hb = xcalloc(1, sizeof *hb);
    hb->base = xstrdup(c->api_base);
    hb->key = c->api_key ? xstrdup(c->api_key) : NULL;
    hb->model = xstrdup(model);
    char *safe = url_redact(c->api_base);
    hb->label = xasprintf("%s %s at %s", label, model, safe);
    free(safe);
    hb->temperature = c->temperature;
    config_http_opts(c, &hb->http);
    config_profile(c, model, &hb->prof);
    atomic_init(&hb->adjust, 0);
    pthread_mutex_init(&hb->dropped_lock, NULL);
    atomic_init(&hb->window, 0);
    atomic_init(&hb->bytes_per_token_x100, 0);
    atomic_init(&hb->cut_tokens, 0);
    atomic_init(&hb->cut_bytes, 0);
    atomic_init(&hb->cut_noted, 0);
    atomic_init(&hb->out_cap, 0);
    atomic_init(&hb->raised_limit, 0);
    atomic_init(&hb->responses, hb->prof.api == LLM_API_RESPONSES);
    struct llm_backend *b = xcalloc(1, sizeof *b);
    b->chat = chat;
    b->name = http_name;
    b->free = http_free;
    b->room = http_room;
    b->impl = hb;
    return b;
}

const struct llm_profile *llm_backend_profile(const struct llm_backend *b)
{
    return b && b->name == http_name ? &((const struct llm_http_backend *)b->impl)->prof : NULL;
}

void llm_backend_free(struct llm_backend *b)
{
    if (b && b->free) b->free(b);
}

int llm_check_request(const struct llm_request *req, struct llm_reply *reply)
{
    reply->fail = LLM_FAIL_BAD_REQUEST;
    if (!req->nmessages || !req->messages) {
        snprintf(reply->error, sizeof reply->error, "a chat request needs at least one message");
        return -1;
    }
    for (size_t i = 0; i < req->nmessages; i++) {
        const struct llm_message *m = &req->messages[i];
        if (!m->role || (strcmp(m->role, "user") && strcmp(m->role, "assistant"))) {
            snprintf(reply->error, sizeof reply->error,
                     "message %zu has role '%s'; use user or assistant (the system prompt goes in llm_request.system)",
                     i, m->role ? m->role : "(null)");
            return -1;
        }
        if (!m->content) {
            snprintf(reply->error, sizeof reply->error, "message %zu has no content", i);
            return -1;
        }
    }
    reply->fail = LLM_FAIL_NONE;
    return 0;
}

static int fitted_limit(const struct llm_http_backend *hb, const struct llm_request *req, int limit);

int llm_reply_limit(const struct llm_http_backend *hb, const struct llm_request *req)
{
    int limit = req->max_tokens > 0 ? req->max_tokens : hb->prof.max_output;
    long raised = atomic_load(&hb->raised_limit);
    if (raised > limit) limit = (int)raised;
    if (limit <= 0) return 0;   /* none sent: the server's own */
    long cap = atomic_load(&hb->out_cap);
    if (cap > 0 && limit > cap) limit = (int)cap;
    return fitted_limit(hb, req, limit);
}

int llm_send_temperature(const struct llm_http_backend *hb, const struct llm_request *req, int adjust, double *t)
{
    *t = req->temperature >= 0 ? req->temperature : hb->temperature;
    return hb->prof.temperature && !(adjust & LLM_ADJ_NO_TEMPERATURE);
}

int llm_system_as_user(const struct llm_http_backend *hb, int adjust)
{
    return hb->prof.system_user || (adjust & LLM_ADJ_SYSTEM_USER);
}

void llm_add_messages(cJSON *msgs, const struct llm_request *req, int with_system, int fold)
{
    int folded = 0;
    if (req->system && with_system && !fold) llm_add_message(msgs, "system", req->system);
    for (size_t i = 0; i < req->nmessages; i++) {
        const struct llm_message *m = &req->messages[i];
        if (req->system && fold && !folded && !strcmp(m->role, "user")) {
            char *both = xasprintf("%s\n\n%s", req->system, m->content);
            llm_add_message(msgs, m->role, both);
            free(both);
            folded = 1;
        } else {
            llm_add_message(msgs, m->role, m->content);
        }
    }
}

/* ---- errors: kinds and the one adjustment ---- */

/* The fields of an error body: OpenAI {"error":{"message","type","param",
 * "code"}}, Anthropic {"type":"error","error":{"type","message"}}, vLLM
 * {"object":"error","message","type","param","code"} (or wrapped in "error"),
 * llama.cpp {"error":{"code","message","type"}}, text-generation-inference
 * {"error":"...","error_type":"..."}. Lower-cased copies. */
struct err_info {
    char message[400], type[64], param[64], code[64];
};

static void lower_copy(char *dst, size_t n, const cJSON *v)
{
    dst[0] = 0;
    if (cJSON_IsString(v)) snprintf(dst, n, "%s", v->valuestring);
    else if (cJSON_IsNumber(v)) snprintf(dst, n, "%d", v->valueint);
    for (char *p = dst; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
}

static void parse_err(const char *body, size_t len, struct err_info *ei)
{
    memset(ei, 0, sizeof *ei);
    cJSON *doc = body ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *j = http_error_root(doc);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(e)) {   /* the message itself, its kind beside it */
        lower_copy(ei->message, sizeof ei->message, e);
        lower_copy(ei->type, sizeof ei->type, cJSON_GetObjectItemCaseSensitive(j, "error_type"));
    }
    if (!cJSON_IsObject(e)) e = j;
    if (cJSON_IsObject(e) && !ei->message[0]) {
        lower_copy(ei->message, sizeof ei->message, cJSON_GetObjectItemCaseSensitive(e, "message"));
        lower_copy(ei->type, sizeof ei->type, cJSON_GetObjectItemCaseSensitive(e, "type"));
        lower_copy(ei->param, sizeof ei->param, cJSON_GetObjectItemCaseSensitive(e, "param"));
        lower_copy(ei->code, sizeof ei->code, cJSON_GetObjectItemCaseSensitive(e, "code"));
    }
    if (!ei->message[0] && cJSON_IsString(e)) lower_copy(ei->message, sizeof ei->message, e);
    if (!ei->message[0] && body && !doc) {   /* a plain-text error */
        snprintf(ei->message, sizeof ei->message, "%.*s", (int)(len < 399 ? len : 399), body);
        for (char *p = ei->message; *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    }
    cJSON_Delete(doc);
}

/* A refusal for length: an input longer than the model takes, as http.c
 * reads the servers' words (http_input_too_long), or a code, type or phrase
 * only chat servers use. */
static int is_context_error(long status, const struct err_info *ei, const char *body)
{
    if (http_input_too_long(status, body, NULL)) return 1;
    static const char *const pats[] = {"context_length_exceeded", "exceed_context_size", "exceeds the context",
                                       "context window", "prompt is too long", "context length"};
    for (size_t i = 0; i < ARRAY_LEN(pats); i++)
        if (strstr(ei->code, pats[i]) || strstr(ei->type, pats[i]) || strstr(ei->message, pats[i])) return 1;
    return 0;
}

static enum llm_fail kind_of_status(long status, const struct err_info *ei, const char *body)
{
    /* a refusal of this prompt's content: another prompt goes through, so
     * the search goes on without this step */
    if (http_prompt_refused(status, body)) return LLM_FAIL_BAD_REPLY;
    if ((status == 429 && http_quota_exhausted(body)) || http_billing_refused(status, body)) return LLM_FAIL_QUOTA;
    if (status == 501) return LLM_FAIL_BAD_REQUEST;   /* Not Implemented: the same request fails again */
    if (http_model_unloadable(status, body)) return LLM_FAIL_BAD_REQUEST;   /* so does a model too big to load */
    if (status == 429 || status == 408 || status == 529 || status >= 500) return LLM_FAIL_TRANSIENT;
    if (is_context_error(status, ei, body) || status == 413) return LLM_FAIL_CONTEXT_LENGTH;
    if (status == 401 || status == 403) return LLM_FAIL_AUTH;
    if (status == 404 || !strcmp(ei->code, "model_not_found") ||
        (strstr(ei->message, "model") && (strstr(ei->message, "does not exist") || strstr(ei->message, "not found"))))
        return LLM_FAIL_NOT_FOUND;
    if (!strcmp(ei->code, "unsupported_parameter") || !strcmp(ei->code, "unsupported_value"))
        return LLM_FAIL_BAD_PARAMETER;
    return LLM_FAIL_BAD_REQUEST;
}

/* The words with which servers refuse a parameter: OpenAI and Azure
 * "Unsupported parameter: 'max_tokens' is not supported with this model",
 * "Unsupported value: 'temperature' does not support 0.2 with this model",
 * "Unrecognized request argument supplied: reasoning_effort"; Anthropic
 * "`temperature` is deprecated for this model.", "`temperature` may only be
 * set to 1 when thinking is enabled or in adaptive mode", "Thinking may not
 * be enabled when `tool_choice` forces tool use."; vLLM's request
 * validation (pydantic) "Extra inputs are not permitted" (extra_forbidden);
 * llama.cpp, LiteLLM and others "not supported". */
static const char *const refusal_words[] = {
    "unsupported", "not supported", "does not support", "only the default", "not permitted", "not allowed",
    "unrecognized", "unknown", "invalid", "unavailable", "deprecated", "may only be set to", "extra inputs",
    "extra_forbidden", "unexpected", "may not", "cannot be used", "no longer supported"};

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether s holds word as a whole name, not inside a longer one. */
static int has_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
        if ((p == s || !name_char(p[-1])) && !name_char(p[n])) return 1;
    return 0;
}

/* Does the refusal name parameter `name`? Its param field (the name, or a
 * path under it: response_format.json_schema), else the message naming it
 * among words of refusal. */
static int names_param(const struct err_info *ei, const char *name)
{
    size_t n = strlen(name);
    if (ei->param[0])
        return !strncmp(ei->param, name, n) && (!ei->param[n] || ei->param[n] == '.' || ei->param[n] == '[');
    if (!has_word(ei->message, name)) return 0;
    for (size_t i = 0; i < ARRAY_LEN(refusal_words); i++)
        if (strstr(ei->message, refusal_words[i])) return 1;
    return 0;
}

/* A refusal of the system role: OpenAI's o1-mini and o1-preview "Unsupported
 * value: 'messages[0].role' does not support 'system' with this model."
 * (param messages[0].role, code unsupported_value); chat templates without
 * a system turn (Gemma's, through vLLM or llama.cpp) "System role not
 * supported". */
static int refuses_system_role(const struct err_info *ei)
{
    const char *m = ei->message;
    if (str_starts(ei->param, "messages") && strstr(ei->param, "role") && strstr(m, "system")) return 1;
    return strstr(m, "system role not supported") || strstr(m, "system role is not supported") ||
           (strstr(m, "'system'") && strstr(m, "role") && (strstr(m, "does not support") || strstr(m, "unsupported")));
}

/* A structured-output backend refusing the schema: vLLM's "The provided
 * JSON schema contains features not supported by xgrammar." (its xgrammar
 * backend, which lacked numeric ranges in some versions) or "Grammar error:
 * ..."; llama.cpp's failed schema-to-grammar conversion. */
static int schema_unsupported(const struct err_info *ei)
{
    const char *m = ei->message;
    return strstr(m, "xgrammar") || strstr(m, "grammar error") || strstr(m, "failed to parse grammar") ||
           (strstr(m, "json schema") && (strstr(m, "not supported") || strstr(m, "unsupported")));
}

static int is_anthropic(const struct llm_http_backend *hb)
{
    return hb->prof.family == LLM_FAMILY_ANTHROPIC;
}

/* The optional request fields a refusal is adjusted for with an LLM_ADJ_*
 * bit; any other optional top-level field named is dropped as it is. */
static const struct {
    const char *field;
    int bit;
} field_bits[] = {
    {"temperature", LLM_ADJ_NO_TEMPERATURE}, {"reasoning_effort", LLM_ADJ_NO_EFFORT},
    {"response_format", LLM_ADJ_NO_SCHEMA},  {"tools", LLM_ADJ_NO_SCHEMA},
    {"tool_choice", LLM_ADJ_NO_TOOL_CHOICE},
};

/* Fields without which there is no request: never dropped. */
static int required_field(const struct llm_http_backend *hb, const char *k)
{
    return !strcmp(k, "model") || !strcmp(k, "messages") || !strcmp(k, "input") || !strcmp(k, "system") ||
           (is_anthropic(hb) && !strcmp(k, "max_tokens"));
}

/* The adjustment for a 400 refusing something body sent, or 0; *what names
 * it. Returns -1 with drop set to the field's name when the field is to be
 * dropped as it is (no bit covers it). */
static int adjustment_for(const struct llm_http_backend *hb, const struct llm_request *req, const struct err_info *ei,
                          const char *body, int adjust, const char **what, char *drop, size_t droplen)
{
    const char *m = ei->message;
    if (!is_anthropic(hb) && req->system && !llm_system_as_user(hb, adjust) && refuses_system_role(ei)) {
        *what = "the system role";
        return LLM_ADJ_SYSTEM_USER;
    }
    /* the Responses API's spellings (llm_responses.c): param "reasoning.effort", "text.format..." */
    if (strstr(body, "\"reasoning\":{\"effort\":") && !(adjust & LLM_ADJ_NO_EFFORT) && names_param(ei, "reasoning")) {
        *what = "reasoning.effort";
        return LLM_ADJ_NO_EFFORT;
    }
    if (strstr(body, "\"text\":{\"format\":") && !(adjust & LLM_ADJ_NO_SCHEMA) && names_param(ei, "text.format")) {
        *what = "text.format";
        return LLM_ADJ_NO_SCHEMA;
    }
    /* Alibaba's DashScope (Qwen3 and other hybrid thinkers): "parameter.
     * enable_thinking must be set to false for non-streaming calls" (or its
     * Chinese wording); ModelScope: "enable thinking can not be support when
     * `stream=False`" */
    if (!(adjust & LLM_ADJ_NO_THINKING) && !is_anthropic(hb) &&
        (strstr(m, "enable_thinking") || strstr(m, "enable thinking")) &&
        (strstr(m, "non-streaming") || strstr(m, "stream=false") || strstr(m, "\xe9\x9d\x9e\xe6\xb5\x81\xe5\xbc\x8f"))) {
        *what = "enable_thinking";
        return LLM_ADJ_NO_THINKING;
    }
    /* LM Studio takes structured output only as a schema: "'response_format.
     * type' must be 'json_schema' or 'text'" (older: "must be 'json_schema'") */
    if (!(adjust & (LLM_ADJ_JSON_SCHEMA | LLM_ADJ_NO_SCHEMA)) && strstr(body, "\"type\":\"json_object\"") &&
        strstr(m, "json_schema") && strstr(m, "response_format") && strstr(m, "must be")) {
        *what = "response_format json_object";
        return LLM_ADJ_JSON_SCHEMA;
    }
    if (!(adjust & LLM_ADJ_NO_SCHEMA) && strstr(body, "\"response_format\":") &&
        (names_param(ei, "json_schema") || names_param(ei, "json_object") || schema_unsupported(ei))) {
        *what = "response_format";
        return LLM_ADJ_NO_SCHEMA;
    }
    if (!(adjust & LLM_ADJ_NO_SCHEMA) && strstr(body, "\"tools\":") && names_param(ei, "input_schema")) {
        *what = "tools";
        return LLM_ADJ_NO_SCHEMA;
    }
    /* then each optional field the body holds that the refusal names: the
     * reply limit switched to its other name, then not sent (OpenAI-
     * compatible only; Anthropic requires max_tokens); a field with a bit
     * adjusted for; any other dropped */
    cJSON *doc = cJSON_Parse(body);
    const cJSON *f;
    int bit = 0;
    cJSON_ArrayForEach(f, doc) {
        const char *k = f->string;
        if (!k || required_field(hb, k) || !names_param(ei, k)) continue;
        if (!strcmp(k, "max_tokens") || !strcmp(k, "max_completion_tokens")) {
            bit = adjust & LLM_ADJ_TOKEN_PARAM ? LLM_ADJ_NO_LIMIT : LLM_ADJ_TOKEN_PARAM;
        } else {
            bit = -1;
            for (size_t i = 0; i < ARRAY_LEN(field_bits); i++)
                if (!strcmp(k, field_bits[i].field)) bit = field_bits[i].bit;
        }
        if (bit > 0 && (adjust & bit)) {   /* adjusted for already, and still sent: nothing more to do */
            bit = 0;
            continue;
        }
        snprintf(drop, droplen, "%s", k);
        *what = drop;
        break;
    }
    cJSON_Delete(doc);
    return bit;
}

/* Each adjustment as a message says it, and the config file line that makes
 * it permanent (NULL when no profile field sets it); LLM_ADJ_TOKEN_PARAM's
 * depend on the parameter sent (adjustment). */
static const struct {
    int bit;
    const char *text, *fix;
} adjustments[] = {
    {LLM_ADJ_NO_LIMIT, "sending no reply limit (the server's own holds)", "max_output = 0"},
    {LLM_ADJ_NO_TEMPERATURE, "sending no temperature (the model's default)", "temperature = default"},
    {LLM_ADJ_NO_EFFORT, "sending no reasoning_effort", "reasoning_effort = default"},
    {LLM_ADJ_NO_SCHEMA, "asking for JSON in the text instead of structured output", "schema = none"},
    {LLM_ADJ_JSON_SCHEMA, "sending response_format json_schema instead (the server takes no json_object)",
     "schema = json_schema"},
    {LLM_ADJ_NO_THINKING,
     "sending enable_thinking false (the server thinks only in streamed replies, and streaming is off)", NULL},
    {LLM_ADJ_SYSTEM_USER, "putting the system prompt at the head of the first user message instead",
     "system = user"},
    {LLM_ADJ_NO_TOOL_CHOICE, "offering the reply tool without forcing it", "schema = tool_auto"},
    {-1, "sending it no more", NULL},
};

/* What adjustment bit does as a message says it (fix 0), or the config
 * file line that makes it permanent (fix 1; NULL when none). */
static const char *adjustment(int bit, const struct llm_http_backend *hb, int fix)
{
    if (bit == LLM_ADJ_TOKEN_PARAM) {
        int sent_max_tokens = hb->prof.token_param == LLM_TOKENS_MAX_TOKENS;
        if (fix) return sent_max_tokens ? "token_param = max_completion_tokens" : "token_param = max_tokens";
        return sent_max_tokens ? "sending max_completion_tokens instead" : "sending max_tokens instead";
    }
    for (size_t i = 0; i < ARRAY_LEN(adjustments); i++)
        if (adjustments[i].bit == bit) return fix ? adjustments[i].fix : adjustments[i].text;
    return fix ? NULL : "asking for JSON in the text instead of structured output";
}

/* body without the top-level fields dropped for the run (body itself when
 * none is; else a new string and body freed). */
static char *drop_fields(struct llm_http_backend *hb, char *body)
{
    pthread_mutex_lock(&hb->dropped_lock);
    int n = hb->ndropped;
    char names[LLM_ADJ_MAX_DROPPED][40];
    memcpy(names, hb->dropped, sizeof names);
    pthread_mutex_unlock(&hb->dropped_lock);
    if (!n) return body;
    cJSON *doc = cJSON_Parse(body);
    if (!doc) return body;
    for (int i = 0; i < n; i++) cJSON_DeleteItemFromObjectCaseSensitive(doc, names[i]);
    char *out = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    free(body);
    return out;
}

/* Keeps field in the dropped list; 1 when it was not there before. */
static int drop_field(struct llm_http_backend *hb, const char *field)
{
    int added = 0;
    pthread_mutex_lock(&hb->dropped_lock);
    int i;
    for (i = 0; i < hb->ndropped && strcmp(hb->dropped[i], field); i++) {
    }
    if (i == hb->ndropped && i < LLM_ADJ_MAX_DROPPED) {
        snprintf(hb->dropped[hb->ndropped++], sizeof hb->dropped[0], "%s", field);
        added = 1;
    }
    pthread_mutex_unlock(&hb->dropped_lock);
    return added;
}

enum llm_fail llm_body_error(const cJSON *e, const char *who, const char *url, char *out, size_t outlen)
{
    const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
    const cJSON *code = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "code") : NULL;
    const cJSON *type = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "type") : NULL;
    char tag[96] = "";
    if (cJSON_IsString(type) && cJSON_IsString(code))
        snprintf(tag, sizeof tag, " (%.40s, %.40s)", type->valuestring, code->valuestring);
    else if (cJSON_IsString(type) || cJSON_IsString(code))
        snprintf(tag, sizeof tag, " (%.80s)", cJSON_IsString(type) ? type->valuestring : code->valuestring);
    else if (cJSON_IsNumber(code))
        snprintf(tag, sizeof tag, " (code %d)", code->valueint);
    /* the whole message is redacted before it is cut to fit: a key the
     * provider echoed across the cut would otherwise be shown in part */
    char *msg = xasprintf("%s %s answered status 200 with an error instead of a completion%s: %s", who, url, tag,
                          cJSON_IsString(m) && *m->valuestring ? m->valuestring : "(no message)");
    char *clean = secret_scrub(msg);
    str_copy_cut(out, outlen, clean);
    free(clean);
    free(msg);
    const char *c = cJSON_IsString(code) ? code->valuestring : cJSON_IsString(type) ? type->valuestring : "";
    int n = cJSON_IsNumber(code) ? code->valueint : 0;
    if (n == 401 || n == 403 || strstr(c, "invalid_api_key") || strstr(c, "authentication")) return LLM_FAIL_AUTH;
    if (n == 402 || strstr(c, "insufficient_quota") || strstr(c, "billing")) return LLM_FAIL_QUOTA;
    if (n == 404 || strstr(c, "model_not_found") || strstr(c, "not_found")) return LLM_FAIL_NOT_FOUND;
    return LLM_FAIL_PROVIDER;
}

/* One POST; fills reply (error, status, kind) and ei for a status error. A
 * reply that is an event stream is read by wire's assembler as it arrives
 * (or whole, from a server that streams unasked). */
static int post_once(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                     const char *const *headers, const char *body, const struct llm_stream_api *wire,
                     struct llm_reply *reply, cJSON **json, struct err_info *ei)
{
    struct http_opts o = hb->http;
    o.cancel = req->cancel;
    o.secret = hb->key;
    struct http_result res;
    struct llm_stream *st = llm_stream_new(wire, req);
    int64_t t0 = now_ms();
    int rc = llm_stream_asked(body) ? http_post_stream(url, headers, body, &o, llm_stream_feed, st, &res)
                                    : http_post_json(url, headers, body, &o, &res);
    reply->latency_ms += (long)(now_ms() - t0);
    reply->http_status = res.status;
    reply->attempts += res.attempts;
    if (res.retried[0]) snprintf(reply->retried, sizeof reply->retried, "%s", res.retried);
    *json = NULL;
    memset(ei, 0, sizeof *ei);
    cJSON *j = NULL;
    if (rc == HTTP_ERR_STOPPED || (rc == HTTP_OK && (res.streamed || llm_stream_sniffed(res.body)))) {
        /* stopped by the reader, a malformed event, or the whole stream read */
        rc = llm_stream_end(st, hb, url, &res, reply, &j);
        llm_stream_free(st);
        http_result_free(&res);
        if (rc != LLM_OK) return rc;
        goto read;
    }
    llm_stream_free(st);
    switch (rc) {
    case HTTP_OK: break;
    case HTTP_ERR_CANCELLED: rc = LLM_ERR_CANCELLED; reply->fail = LLM_FAIL_CANCELLED; break;
    case HTTP_ERR_TIMEOUT: rc = LLM_ERR_TIMEOUT; reply->fail = LLM_FAIL_TRANSIENT; break;
    case HTTP_ERR_CONNECT: rc = LLM_ERR_CONNECT; reply->fail = LLM_FAIL_TRANSIENT; break;
    case HTTP_ERR_STATUS:
        rc = LLM_ERR_STATUS;
        parse_err(res.body, res.body_len, ei);
        reply->fail = kind_of_status(res.status, ei, res.body);
        break;
    case HTTP_ERR_TOO_LARGE: rc = LLM_ERR_TOO_LARGE; reply->fail = LLM_FAIL_BAD_REPLY; break;
    default: rc = LLM_ERR_REQUEST; reply->fail = LLM_FAIL_BAD_REQUEST; break;
    }
    if (rc != LLM_OK) {
        snprintf(reply->error, sizeof reply->error, "%s", res.err);
        http_result_free(&res);
        return rc;
    }
    j = cJSON_ParseWithLength(res.body, res.body_len);
    if (!cJSON_IsObject(j)) {
        /* the excerpt is cut from the redacted body: a key across the cut
         * would otherwise be shown in part */
        char *clean = str_redact_secret(res.body ? res.body : "", hb->key);
        char start[48];
        size_t k = 0;
        for (size_t i = 0; clean[i] && k < 40; i++)
            start[k++] = clean[i] >= 32 && clean[i] < 127 ? clean[i] : ' ';
        start[k] = 0;
        free(clean);
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s is not a JSON object (%zu bytes starting '%s'); check that the API base points at the right kind of server",
                 url, res.body_len, start);
        http_redact(reply->error, sizeof reply->error, hb->key);
        cJSON_Delete(j);
        http_result_free(&res);
        reply->fail = LLM_FAIL_BAD_REPLY;
        return LLM_ERR_REPLY;
    }
    http_result_free(&res);
read:;
    /* Some gateways answer 200 with an error object instead of a completion
     * (OpenAI's {"error": {...}} shape, Anthropic's {"type": "error", ...}):
     * a failure with the provider's message, of the kind its code names */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (e && !cJSON_IsNull(e)) {
        reply->fail = llm_body_error(e, "the server at", url, reply->error, sizeof reply->error);
        cJSON_Delete(j);
        return LLM_ERR_REPLY;
    }
    *json = j;
    return LLM_OK;
}

/* The context window and the input tokens a context refusal names (-1 for
 * what it does not): vLLM "maximum context length is N tokens and your
 * request has K input tokens" (or "... N tokens. However, you requested T
 * tokens (K in the messages, M in the completion)"), OpenAI "(K in your
 * prompt; M for the completion)", Anthropic "input length and `max_tokens`
 * exceed context limit: K + M > N". */
static void context_numbers(const struct err_info *ei, long *window, long *input)
{
    const char *m = ei->message;
    *window = str_number_after(m, "maximum context length is ");
    *input = str_number_after(m, "your request has ");
    if (*input < 0) *input = str_number_after(m, "tokens (");   /* "(K in the messages" / "(K in your prompt" */
    if (*window < 0 && (*input = str_number_after(m, "context limit: ")) > 0) {
        const char *gt = strstr(m, " > ");
        *window = gt ? str_number_after(gt, " > ") : -1;
    }
    /* text-generation-inference: "`inputs` tokens + `max_new_tokens` must be
     * <= N. Given: K `inputs` tokens and M `max_new_tokens`"; "`inputs` must
     * have less than N tokens. Given: K" names the input's own limit, not the
     * window a reply limit is fitted into, so only its input is read */
    if (*window < 0 && strstr(m, "`inputs` tokens + `max_new_tokens`"))
        *window = str_number_after(m, "must be <= ");
    if (*input < 0) *input = str_number_after(m, "given: ");
    if (*window < 0) *window = str_number_after(m, "maximum number of tokens allowed (");
    if (*input < 0) *input = str_number_after(m, "input token count (");
}

/* The largest reply limit a refusal of the reply limit names, or -1:
 * OpenAI "max_tokens is too large: M. This model supports at most N
 * completion tokens", Anthropic "max_tokens: M > N, which is the maximum
 * allowed number of output tokens for MODEL", DeepSeek "the valid range of
 * max_tokens is [1, N]", Groq "`max_tokens` must be less than or equal to
 * `N`" (older: "max_tokens for `MODEL` must be less than or equal to N"),
 * text-generation-inference "`max_new_tokens` must be <= N. Given: M". */
static long output_cap(const struct err_info *ei)
{
    const char *m = ei->message, *p;
    long n = -1;
    if (strstr(m, "completion tokens")) n = str_number_after(m, "supports at most ");
    if (n < 0 && strstr(m, "maximum allowed number of output tokens") && (p = strstr(m, " > ")))
        n = str_number_after(p, " > ");
    if (n < 0) n = str_number_after(m, "valid range of max_tokens is [1, ");
    if (n < 0 && (strstr(m, "max_tokens") || strstr(m, "max_completion_tokens")) &&
        (p = strstr(m, "must be less than or equal to "))) {
        p += strlen("must be less than or equal to ");
        n = str_number_after(p, *p == '`' ? "`" : "");
    }
    if (n < 0 && !strstr(m, "`inputs` tokens +")) n = str_number_after(m, "`max_new_tokens` must be <= ");
    return n;
}

/* The bytes of a request's text: the system prompt and the messages. */
static size_t request_bytes(const struct llm_request *req)
{
    size_t bytes = req->system ? strlen(req->system) : 0;
    for (size_t i = 0; i < req->nmessages; i++) bytes += req->messages[i].content ? strlen(req->messages[i].content) : 0;
    return bytes;
}

/* The reply limit for a request once the window is known: what is left of
 * the window after the input, estimated from its bytes at the ratio the
 * server's own count gave (LLM_BYTES_PER_TOKEN until then), when that is
 * below the limit and still LLM_REPLY_MIN or more. */
static int fitted_limit(const struct llm_http_backend *hb, const struct llm_request *req, int limit)
{
    long window = atomic_load(&hb->window);
    if (window <= 0) return limit;
    long ratio = atomic_load(&hb->bytes_per_token_x100);
    if (ratio <= 0) ratio = LLM_BYTES_PER_TOKEN * 100;
    long input = (long)((request_bytes(req) * 100 + (size_t)ratio - 1) / (size_t)ratio);
    long room = window - input - LLM_REPLY_MARGIN;
    return room < limit && room >= LLM_REPLY_MIN ? (int)room : limit;
}

/* Keeps what a context refusal told: the window (the smallest named wins)
 * and the bytes a token of this request (the smallest ratio wins, so that
 * estimates run high). */
static void learn_window(struct llm_http_backend *hb, const struct llm_request *req, long window, long input)
{
    if (window > 0) {
        long cur = atomic_load(&hb->window);
        while ((cur <= 0 || window < cur) && !atomic_compare_exchange_weak(&hb->window, &cur, window)) {
        }
    }
    size_t bytes = request_bytes(req);
    if (input > 0 && bytes > 0) {
        long ratio = (long)(bytes * 100 / (size_t)input);
        if (ratio < 1) ratio = 1;
        long cur = atomic_load(&hb->bytes_per_token_x100);
        while ((cur <= 0 || ratio < cur) && !atomic_compare_exchange_weak(&hb->bytes_per_token_x100, &cur, ratio)) {
        }
    }
}

/* The window of a server that kept count tokens of a longer prompt (llm.h). */
static long cut_window(long count)
{
    long half = count - 2;
    return half >= 512 && (half & (half - 1)) == 0 ? 2 * half : count;
}

int llm_check_cut(struct llm_http_backend *hb, const struct llm_request *req, struct llm_reply *reply, int rc)
{
    long n = reply->input_tokens;
    size_t bytes = request_bytes(req);
    if (rc != LLM_OK || reply->tokens_estimated || n < LLM_CUT_MIN_TOKENS ||
        bytes / LLM_CUT_BYTES_PER_TOKEN <= (size_t)n)
        return rc;
    long prev = atomic_exchange(&hb->cut_tokens, n);
    long prev_bytes = atomic_exchange(&hb->cut_bytes, (long)bytes);
    if (prev != n || prev_bytes == (long)bytes) return rc;   /* a first sighting, or the same request again */
    long window = cut_window(n);
    learn_window(hb, req, window, 0);   /* not the bytes a token: the count is of what was kept */
    if (!atomic_exchange(&hb->cut_noted, 1)) {
        log_msg("llm: %s reported %ld prompt tokens for requests of %ld and %zu bytes: it cuts longer prompts to fit "
                "its context window; requests are shortened to fit %ld tokens for the rest of the run",
                hb->label, n, prev_bytes, bytes, window);
        fprintf(stderr, "drqa-tui: note: model %s: the server kept %ld tokens of prompts several times longer and "
                        "said nothing (Ollama does so past its context length); requests are shortened to fit %ld "
                        "tokens for the rest of the run. Raise the server's context length (Ollama: "
                        "OLLAMA_CONTEXT_LENGTH, or num_ctx in the model's Modelfile; its OpenAI-compatible API "
                        "ignores options.num_ctx)\n",
                hb->model, n, window);
    }
    reply->fail = LLM_FAIL_CONTEXT_LENGTH;
    snprintf(reply->error, sizeof reply->error,
             "the server kept %ld tokens of this %zu-byte request (as of an earlier one of %ld bytes): it cut the "
             "prompt to fit a context window of about %ld tokens without saying so; the reply answers only the "
             "prompt's tail", n, bytes, prev_bytes, window);
    return LLM_ERR_REPLY;
}

int llm_streams(const struct llm_http_backend *hb) { return hb->prof.stream; }

int llm_http_exchange(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                      const char *const *headers, llm_body_fn build, const struct llm_stream_api *wire,
                      struct llm_reply *reply, cJSON **json)
{
    int rc = LLM_ERR_REQUEST;
    int refit = 0;
    for (int round = 0; round < 8; round++) {
        int adjust = atomic_load(&hb->adjust);
        int sent_limit = llm_reply_limit(hb, req);
        char *body = drop_fields(hb, build(hb, req, adjust));
        struct err_info ei;
        rc = post_once(hb, req, url, headers, body, wire, reply, json, &ei);
        /* a reply limit over what the model may write at all (a config's
         * max_tokens above the model's output limit): the limit named is
         * kept for the run and the request sent again with it, in the same
         * parameter (the refusal names the parameter, but not as unsupported) */
        long cap = rc == LLM_ERR_STATUS && (reply->http_status == 400 || reply->http_status == 422) &&
                           reply->fail != LLM_FAIL_CONTEXT_LENGTH ? output_cap(&ei) : -1;
        if (cap >= 1 && cap < sent_limit) {
            free(body);
            long cur = atomic_load(&hb->out_cap);
            while ((cur <= 0 || cap < cur) && !atomic_compare_exchange_weak(&hb->out_cap, &cur, cap)) {
            }
            if (cur <= 0 || cap < cur) {
                log_msg("llm: %s accepts at most %ld reply tokens; reply limit %d lowered to %ld for the rest of the run",
                        hb->label, cap, sent_limit, cap);
                fprintf(stderr, "drqa-tui: note: model %s accepts at most %ld reply tokens; the reply limit is %ld "
                                "for the rest of the run (max_tokens in the config sets it)\n", hb->model, cap, cap);
            }
            reply->error[0] = 0;
            reply->fail = LLM_FAIL_NONE;
            continue;
        }
        const char *what = NULL;
        char drop[40] = "";
        int bit = rc == LLM_ERR_STATUS && (reply->http_status == 400 || reply->http_status == 422) &&
                          reply->fail != LLM_FAIL_CONTEXT_LENGTH
                      ? adjustment_for(hb, req, &ei, body, adjust, &what, drop, sizeof drop) : 0;
        free(body);
        if (rc == LLM_ERR_STATUS && reply->fail == LLM_FAIL_CONTEXT_LENGTH && !refit) {
            /* over the window with the reply limit counted in (vLLM and
             * Anthropic add max_tokens to the input): when the input alone
             * leaves room, the reply limit is lowered to it and the request
             * sent again; the window is kept for the later requests */
            long window, input;
            context_numbers(&ei, &window, &input);
            learn_window(hb, req, window, input);
            int limit = llm_reply_limit(hb, req);
            if (limit < sent_limit) {
                log_msg("llm: %s: the context window is %ld tokens and the input %ld; reply limit %d lowered to %d",
                        hb->label, window, input, sent_limit, limit);
                refit = 1;
                reply->error[0] = 0;
                reply->fail = LLM_FAIL_NONE;
                continue;
            }
        }
        if (!bit) {
            if (rc == LLM_ERR_STATUS && reply->fail == LLM_FAIL_BAD_REQUEST && adjust &&
                (names_param(&ei, "max_tokens") || names_param(&ei, "max_completion_tokens") ||
                 names_param(&ei, "temperature") || names_param(&ei, "response_format") || names_param(&ei, "tools")))
                reply->fail = LLM_FAIL_BAD_PARAMETER;
            if (reply->fail == LLM_FAIL_BAD_PARAMETER) {
                char e2[360];
                snprintf(e2, sizeof e2, "%.350s", reply->error);
                snprintf(reply->error, sizeof reply->error,
                         "%s (a parameter the model refuses even after adjusting the request; set it in the config "
                         "file: profile.%s.FIELD, see --show-profile)", e2, hb->model);
            }
            break;
        }
        int fresh = bit > 0 ? !(atomic_fetch_or(&hb->adjust, bit) & bit) : drop_field(hb, drop);
        if (fresh) {
            char e2[360];
            const char *fix = adjustment(bit, hb, 1), *does = adjustment(bit, hb, 0);
            snprintf(e2, sizeof e2, "%.350s", reply->error);
            log_msg("llm: %s refused '%s' (%s); %s for the rest of the run", hb->label, what, e2, does);
            fprintf(stderr, "drqa-tui: note: model %s refused '%s'; %s for the rest of the run%s%s%s%s%s\n", hb->model,
                    what, does, fix ? " (to make it permanent: profile." : "", fix ? hb->model : "",
                    fix ? "." : "", fix ? fix : "", fix ? " in the config file)" : "");
        }
        reply->error[0] = 0;
        reply->fail = LLM_FAIL_NONE;
    }
    return rc;
}

/* ---- reply text and thinking ---- */

static void add_reasoning(struct llm_reply *reply, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) { s++; n--; }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t')) n--;
    if (n) llm_reply_add_reasoning(reply, s, n);
}

/* The text of gpt-oss's harmony format as some servers pass it through
 * unparsed (llama.cpp without its gpt-oss chat parser, older LM Studio):
 * "<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final
 * <|message|>...[<|return|>]", or with the special tokens dropped in
 * detokenising, "analysis...assistantfinal...". The analysis goes to
 * reasoning; returns where the final message starts (its end in *len), or
 * NULL when s is not in that format. */
static const char *harmony_final(struct llm_reply *reply, const char *s, size_t *len)
{
    static const char FINAL[] = "<|channel|>final<|message|>", ANALYSIS[] = "<|channel|>analysis<|message|>";
    const char *f = NULL, *body = NULL;
    for (const char *p = strstr(s, FINAL); p; p = strstr(p + 1, FINAL)) f = p;
    if (f) {
        body = f + sizeof FINAL - 1;
        const char *a = strstr(s, ANALYSIS);
        if (a && a < f) {
            a += sizeof ANALYSIS - 1;
            const char *e = strstr(a, "<|end|>");
            add_reasoning(reply, a, (size_t)((e && e < f ? e : f) - a));
        }
    } else if (!strncmp(s, ANALYSIS, sizeof ANALYSIS - 1)) {
        /* analysis only: cut at the limit before the final message */
        const char *a = s + sizeof ANALYSIS - 1, *e = strstr(a, "<|end|>");
        add_reasoning(reply, a, e ? (size_t)(e - a) : strlen(a));
        *len = 0;
        return s + strlen(s);
    } else if (!strncmp(s, "analysis", 8)) {
        for (const char *p = strstr(s, "assistantfinal"); p; p = strstr(p + 1, "assistantfinal")) f = p;
        if (!f) return NULL;
        add_reasoning(reply, s + 8, (size_t)(f - s - 8));
        body = f + 14;
    } else {
        return NULL;
    }
    size_t n = strlen(body);
    static const char *const ends[] = {"<|return|>", "<|end|>", "<|call|>"};
    for (size_t i = 0; i < ARRAY_LEN(ends); i++) {
        const char *e = strstr(body, ends[i]);
        if (e && (size_t)(e - body) < n) n = (size_t)(e - body);
    }
    *len = n;
    return body;
}

int llm_take_text(struct llm_http_backend *hb, struct llm_reply *reply, const char *content, const char *url)
{
    struct buf out = BUF_INIT;
    const char *s = content ? content : "";
    size_t hlen = 0;
    const char *hfinal = harmony_final(reply, s, &hlen);
    char *hcopy = hfinal ? xstrndup(hfinal, hlen) : NULL;
    if (hcopy) s = hcopy;
    const char *first_close = strstr(s, "</think>"), *first_open = strstr(s, "<think>");
    if (first_close && (!first_open || first_close < first_open)) {
        /* the template opened the block in the prompt: reasoning ends at a bare </think> */
        add_reasoning(reply, s, (size_t)(first_close - s));
        s = first_close + 8;
    }
    for (;;) {
        const char *o = strstr(s, "<think>");
        if (!o) break;
        buf_add(&out, s, (size_t)(o - s));
        const char *c = strstr(o + 7, "</think>");
        if (!c) {   /* unclosed: the rest is reasoning cut at the limit */
            add_reasoning(reply, o + 7, strlen(o + 7));
            s = o + strlen(o);
            break;
        }
        add_reasoning(reply, o + 7, (size_t)(c - o - 7));
        s = c + 8;
    }
    buf_adds(&out, s);
    const char *t = buf_str(&out);
    size_t n = out.len, a = 0;
    while (a < n && (t[a] == ' ' || t[a] == '\n' || t[a] == '\r' || t[a] == '\t')) a++;
    while (n > a && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == '\t')) n--;
    if (n == a && (reply->reasoning || reply->truncated)) {
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s has %s and no answer%s; raise max_tokens or the profile's max_output "
                 "(profile.%s.max_output = 32000 in the config file)",
                 url, reply->reasoning ? "only reasoning" : "nothing",
                 reply->truncated ? " (it stopped at the token limit)" : "", hb->model);
        http_redact(reply->error, sizeof reply->error, hb->key);
        buf_free(&out);
        free(hcopy);
        reply->fail = LLM_FAIL_BAD_REPLY;
        return LLM_ERR_REPLY;
    }
    reply->text = xstrndup(t + a, n - a);
    buf_free(&out);
    free(hcopy);
    return LLM_OK;
}

int llm_raise_limit(struct llm_http_backend *hb, struct llm_reply *reply, int sent)
{
    const struct llm_profile *p = &hb->prof;
    int reasons = reply->reasoning_tokens > 0 || reply->reasoning || p->thinking != LLM_THINKING_NONE ||
                  p->effort_param;
    if (reply->text || !reply->truncated || !reasons || sent <= 0) return 0;
    long cur = atomic_load(&hb->raised_limit);
    if (cur > sent) return 1;   /* raised by another call since this one was sent */
    if (cur > 0) {              /* raised once already, and spent again */
        size_t n = strlen(reply->error);
        snprintf(reply->error + n, sizeof reply->error - n, " (the limit was already raised once, to %ld tokens)", cur);
        return 0;
    }
    long want = 2L * sent;
    if (want < 16384) want = 16384;
    if (want > 131072) want = 131072;
    long cap = atomic_load(&hb->out_cap);
    if (cap > 0 && want > cap) want = cap;
    if (want <= sent) return 0;
    if (atomic_compare_exchange_strong(&hb->raised_limit, &cur, want)) {
        log_msg("llm: %s spent its whole reply limit of %d tokens on reasoning; the limit is %ld for the rest of "
                "the run", hb->label, sent, want);
        fprintf(stderr, "drqa-tui: note: model %s spent its whole reply limit of %d tokens on reasoning and wrote "
                        "no answer; the limit is %ld for the rest of the run (profile.%s.max_output = %ld in the "
                        "config file makes it permanent)\n", hb->model, sent, want, hb->model, want);
    }
    return atomic_load(&hb->raised_limit) > sent;
}

int llm_once_raising(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                     const char *const *headers, struct llm_reply *reply, llm_once_fn once)
{
    int sent = llm_reply_limit(hb, req);
    int rc = once(hb, req, url, headers, reply);
    if (rc != LLM_ERR_REPLY || !llm_raise_limit(hb, reply, sent)) return rc;
    struct llm_reply first = *reply;   /* its counts stay; its text goes */
    llm_reply_free(&first);
    if (req->on_delta) req->on_delta(req->delta_ud, LLM_DELTA_RESET, NULL, 0);   /* its pieces go too */
    memset(reply, 0, sizeof *reply);
    reply->cost_usd = -1;
    rc = once(hb, req, url, headers, reply);
    reply->input_tokens += first.input_tokens;
    reply->output_tokens += first.output_tokens;
    reply->reasoning_tokens += first.reasoning_tokens;
    reply->cached_tokens += first.cached_tokens;
    reply->cache_write_tokens += first.cache_write_tokens;
    reply->attempts += first.attempts;
    if (!reply->retried[0] && first.retried[0]) snprintf(reply->retried, sizeof reply->retried, "%s", first.retried);
    reply->latency_ms += first.latency_ms;
    if (first.cost_usd > 0) reply->cost_usd = (reply->cost_usd > 0 ? reply->cost_usd : 0) + first.cost_usd;
    if (rc == LLM_ERR_REPLY) llm_raise_limit(hb, reply, llm_reply_limit(hb, req));
    return rc;
}

/* A model may repeat the key it was sent (a prompt that quotes a config
 * file, a server that echoes its request), and a backend's message may quote
 * the server: the reply's text, reasoning and error never hold the key, whole
 * or cut short, before anyone shows, logs or saves them. */
static void scrub_field(char **s, const char *key)
{
    if (!*s) return;
    char *r = str_redact_secret(*s, key), *all = secret_scrub(r);
    free(r);
    free(*s);
    *s = all;
}

static void scrub_reply(struct llm_backend *b, struct llm_reply *reply)
{
    const char *key = b->name == http_name ? ((const struct llm_http_backend *)b->impl)->key : NULL;
    scrub_field(&reply->text, key);
    scrub_field(&reply->reasoning, key);
    char *e = xstrdup(reply->error);
    scrub_field(&e, key);
    str_copy_cut(reply->error, sizeof reply->error, e);
    free(e);
}

/* Between a backend and the request's reader: knows whether pieces were
 * handed, so that a reset reaches the reader only when there is something
 * to void, and redacts the pieces as the whole reply is (a key a server
 * echoes, split across pieces or not, never reaches the reader). */
struct delta_tap {
    const struct llm_request *req;
    int handed;
    struct secret_stream ss[2];   /* LLM_DELTA_TEXT, LLM_DELTA_REASONING */
};

static int tap_pass(struct delta_tap *t, enum llm_delta_kind kind, const char *text, size_t len, int final)
{
    char *out = secret_stream_next(&t->ss[kind], text, len, final);
    int rc = 0;
    if (*out || (!len && !final)) {   /* an empty piece still reaches the reader, as it came */
        t->handed = 1;
        rc = t->req->on_delta(t->req->delta_ud, kind, out, strlen(out));
    }
    free(out);
    return rc;
}

static int tap_delta(void *ud, enum llm_delta_kind kind, const char *text, size_t len)
{
    struct delta_tap *t = ud;
    if (kind == LLM_DELTA_TEXT || kind == LLM_DELTA_REASONING) return tap_pass(t, kind, text, len, 0);
    secret_stream_clear(&t->ss[0]);
    secret_stream_clear(&t->ss[1]);
    if (!t->handed) return 0;
    t->handed = 0;
    return t->req->on_delta(t->req->delta_ud, kind, text, len);
}

int llm_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply,
             struct llm_usage *usage)
{
    struct delta_tap tap = {req, 0, {{BUF_INIT, 0}, {BUF_INIT, 0}}};
    struct llm_request tapped = *req;
    if (req->on_delta) {
        tapped.on_delta = tap_delta;
        tapped.delta_ud = &tap;
    }
    int rc = b->chat(b, &tapped, reply);
    url_redact_buf(reply->error, sizeof reply->error);   /* every backend's messages name its URL */
    scrub_reply(b, reply);
    /* a whole reply reaches the reader in one piece; a failed one voids what it had */
    if (req->on_delta && rc == LLM_OK && reply->text && !tap.handed && !tap.ss[0].acc.len)
        req->on_delta(req->delta_ud, LLM_DELTA_TEXT, reply->text, strlen(reply->text));
    else if (req->on_delta && rc == LLM_OK) {   /* what was held back for a secret that did not come */
        tap_pass(&tap, LLM_DELTA_REASONING, NULL, 0, 1);
        tap_pass(&tap, LLM_DELTA_TEXT, NULL, 0, 1);
    } else if (req->on_delta && !reply->stopped)
        tap_delta(&tap, LLM_DELTA_RESET, NULL, 0);
    secret_stream_clear(&tap.ss[0]);
    secret_stream_clear(&tap.ss[1]);
    if (rc != LLM_OK && reply->fail == LLM_FAIL_NONE) reply->fail = LLM_FAIL_BAD_REPLY;
    log_msg("llm: %s [%s] %s%s%s: %ld in (%ld cached, %ld cache write) + %ld out (%ld reasoning) tokens%s, %ld ms, %d attempt%s",
            b->name(b), req->tag ? req->tag : "other", rc == LLM_OK ? "ok" : llm_fail_name(reply->fail),
            rc == LLM_OK ? "" : ": ", rc == LLM_OK ? "" : reply->error, reply->input_tokens, reply->cached_tokens,
            reply->cache_write_tokens, reply->output_tokens, reply->reasoning_tokens, reply->tokens_estimated ? " (estimated)" : "",
            reply->latency_ms, reply->attempts, reply->attempts == 1 ? "" : "s");
    if (usage) llm_usage_add(usage, req->tag, reply);
    return rc;
}

/* ---- usage ledger ---- */

void llm_usage_init(struct llm_usage *u)
{
    memset(u, 0, sizeof *u);
    pthread_mutex_init(&u->lock, NULL);
    snprintf(u->total.tag, sizeof u->total.tag, "total");
}

void llm_usage_destroy(struct llm_usage *u)
{
    if (u) pthread_mutex_destroy(&u->lock);
}

/* The entry for tag, created if new; the last slot collects overflow. Locked by caller. */
static struct llm_usage_entry *entry_for(struct llm_usage *u, const char *tag)
{
    if (!tag || !*tag) tag = "other";
    for (size_t i = 0; i < u->ntags; i++)
        if (strcmp(u->tags[i].tag, tag) == 0) return &u->tags[i];
    if (u->ntags >= LLM_USAGE_MAX_TAGS - 1) tag = "other";
    for (size_t i = 0; i < u->ntags; i++)
        if (strcmp(u->tags[i].tag, tag) == 0) return &u->tags[i];
    struct llm_usage_entry *e = &u->tags[u->ntags++];
    memset(e, 0, sizeof *e);
    snprintf(e->tag, sizeof e->tag, "%s", tag);
    return e;
}

static void entry_add(struct llm_usage_entry *d, const struct llm_usage_entry *s)
{
    d->calls += s->calls;
    d->failures += s->failures;
    d->input_tokens += s->input_tokens;
    d->output_tokens += s->output_tokens;
    d->cached_input_tokens += s->cached_input_tokens;
    d->cache_write_tokens += s->cache_write_tokens;
    d->reasoning_tokens += s->reasoning_tokens;
    d->estimated_calls += s->estimated_calls;
    d->unpriced_calls += s->unpriced_calls;
    d->retried_calls += s->retried_calls;
    d->cost_usd += s->cost_usd;
}

static void add_locked(struct llm_usage *u, const char *tag, const struct llm_usage_entry *one)
{
    pthread_mutex_lock(&u->lock);
    entry_add(entry_for(u, tag), one);
    entry_add(&u->total, one);
    pthread_mutex_unlock(&u->lock);
}

void llm_usage_add(struct llm_usage *u, const char *tag, const struct llm_reply *r)
{
    struct llm_usage_entry one = {.calls = 1};
    one.failures = r->text ? 0 : 1;
    one.input_tokens = r->input_tokens;
    one.output_tokens = r->output_tokens;
    one.cached_input_tokens = r->cached_tokens > 0 ? r->cached_tokens : 0;
    one.cache_write_tokens = r->cache_write_tokens > 0 ? r->cache_write_tokens : 0;
    one.reasoning_tokens = r->reasoning_tokens > 0 ? r->reasoning_tokens : 0;
    one.estimated_calls = r->text && r->tokens_estimated;
    if (r->text && r->cost_usd < 0) one.unpriced_calls = 1;
    if (r->cost_usd > 0) one.cost_usd = r->cost_usd;
    one.retried_calls = r->retried[0] != 0;
    add_locked(u, tag, &one);
}

void llm_usage_add_tokens(struct llm_usage *u, const char *tag, long input_tokens, long output_tokens,
                          int estimated, double cost_usd)
{
    struct llm_usage_entry one = {.calls = 1};
    one.input_tokens = input_tokens;
    one.output_tokens = output_tokens;
    one.estimated_calls = estimated ? 1 : 0;
    if (cost_usd < 0) one.unpriced_calls = 1;
    else one.cost_usd = cost_usd;
    add_locked(u, tag, &one);
}

void llm_usage_merge(struct llm_usage *dst, struct llm_usage *src)
{
    struct llm_usage_entry tags[LLM_USAGE_MAX_TAGS];
    pthread_mutex_lock(&src->lock);
    size_t n = src->ntags;
    memcpy(tags, src->tags, n * sizeof tags[0]);
    pthread_mutex_unlock(&src->lock);
    for (size_t i = 0; i < n; i++) add_locked(dst, tags[i].tag, &tags[i]);
}

int llm_usage_get(struct llm_usage *u, const char *tag, struct llm_usage_entry *out)
{
    int rc = -1;
    pthread_mutex_lock(&u->lock);
    if (!tag) {
        *out = u->total;
        rc = 0;
    } else {
        for (size_t i = 0; i < u->ntags; i++)
            if (strcmp(u->tags[i].tag, tag) == 0) { *out = u->tags[i]; rc = 0; }
    }
    pthread_mutex_unlock(&u->lock);
    if (rc) {
        memset(out, 0, sizeof *out);
        snprintf(out->tag, sizeof out->tag, "%s", tag);
    }
    return rc;
}

static cJSON *entry_json(const struct llm_usage_entry *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "calls", (double)e->calls);
    cJSON_AddNumberToObject(o, "failures", (double)e->failures);
    cJSON_AddNumberToObject(o, "input_tokens", (double)e->input_tokens);
    cJSON_AddNumberToObject(o, "cached_input_tokens", (double)e->cached_input_tokens);
    cJSON_AddNumberToObject(o, "cache_write_tokens", (double)e->cache_write_tokens);
    cJSON_AddNumberToObject(o, "output_tokens", (double)e->output_tokens);
    cJSON_AddNumberToObject(o, "reasoning_tokens", (double)e->reasoning_tokens);
    cJSON_AddNumberToObject(o, "estimated_calls", (double)e->estimated_calls);
    cJSON_AddNumberToObject(o, "unpriced_calls", (double)e->unpriced_calls);
    if (e->calls > e->failures && e->unpriced_calls < e->calls - e->failures)
        cJSON_AddNumberToObject(o, "cost_usd", e->cost_usd);
    else
        cJSON_AddNullToObject(o, "cost_usd");
    return o;
}

cJSON *llm_usage_json(struct llm_usage *u)
{
    cJSON *root = cJSON_CreateObject(), *by = cJSON_CreateObject();
    pthread_mutex_lock(&u->lock);
    cJSON_AddItemToObject(root, "total", entry_json(&u->total));
    for (size_t i = 0; i < u->ntags; i++) cJSON_AddItemToObject(by, u->tags[i].tag, entry_json(&u->tags[i]));
    pthread_mutex_unlock(&u->lock);
    cJSON_AddItemToObject(root, "by_tag", by);
    return root;
}

/* 812, 8.1k, 12k, 3.4M */
static void short_count(struct buf *b, double v)
{
    if (v >= 1e6) buf_printf(b, "%.1fM", v / 1e6);
    else if (v >= 1e4) buf_printf(b, "%.0fk", v / 1e3);
    else if (v >= 1e3) buf_printf(b, "%.1fk", v / 1e3);
    else buf_printf(b, "%.0f", v);
}

static double num_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void entry_line(struct buf *b, const char *name, const cJSON *e)
{
    double calls = num_field(e, "calls"), cached = num_field(e, "cached_input_tokens");
    double reasoning = num_field(e, "reasoning_tokens"), written = num_field(e, "cache_write_tokens");
    buf_printf(b, "%s %.0f call%s ", name, calls, calls == 1 ? "" : "s");
    short_count(b, num_field(e, "input_tokens"));
    buf_adds(b, " in");
    if (cached > 0 || written > 0) {
        buf_adds(b, " (");
        if (cached > 0) {
            short_count(b, cached);
            buf_adds(b, " cached");
        }
        if (written > 0) {
            buf_adds(b, cached > 0 ? ", " : "");
            short_count(b, written);
            buf_adds(b, " cache write");
        }
        buf_addc(b, ')');
    }
    buf_addc(b, ' ');
    short_count(b, num_field(e, "output_tokens"));
    buf_adds(b, " out");
    if (reasoning > 0) {
        buf_adds(b, " (");
        short_count(b, reasoning);
        buf_adds(b, " reasoning)");
    }
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cost_usd");
    double unpriced = num_field(e, "unpriced_calls");
    if (cJSON_IsNumber(c)) buf_printf(b, " $%.*f%s", c->valuedouble < 0.1 ? 4 : 2, c->valuedouble,
                                      unpriced > 0 ? " (partly unpriced)" : "");
    else buf_adds(b, " unpriced");
}

char *llm_usage_line(const cJSON *usage_json)
{
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(usage_json, "total");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(usage_json, "by_tag"), *e;
    if (num_field(total, "calls") <= 0) return NULL;
    struct buf b = BUF_INIT;
    buf_adds(&b, "tokens ");
    cJSON_ArrayForEach(e, by) {
        entry_line(&b, e->string, e);
        buf_adds(&b, "; ");
    }
    entry_line(&b, "total", total);
    return buf_take(&b);
}

void llm_add_message(cJSON *msgs, const char *role, const char *content)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", content);
    cJSON_AddItemToArray(msgs, m);
}
