/*
 * llm: the parts every chat backend shares (see llm.h): construction from the
 * config, the HTTP call with its error mapping, token estimation and cost,
 * and the per-tag usage ledger.
 */
#include "llm.h"
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
}

long llm_estimate_tokens(size_t bytes) { return (long)((bytes + 3) / 4); }

static const char *http_name(const struct llm_backend *b)
{
    return ((const struct llm_http_backend *)b->impl)->label;
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
    free(hb);
    free(b);
}

struct llm_backend *llm_http_backend_new(const struct drqa_config *c, const char *label,
                                         int (*chat)(struct llm_backend *, const struct llm_request *,
                                                     struct llm_reply *),
                                         char *err, size_t errlen)
{
    if (!c->model) {
        snprintf(err, errlen, "no chat model is configured; set --model, DRQA_MODEL or 'model =' in the config file");
        return NULL;
    }
    struct llm_http_backend *hb = xcalloc(1, sizeof *hb);
    hb->base = xstrdup(c->api_base);
    hb->key = c->api_key ? xstrdup(c->api_key) : NULL;
    hb->model = xstrdup(c->model);
    hb->label = xasprintf("%s %s at %s", label, c->model, c->api_base);
    hb->json_mode = c->json_mode;
    hb->max_tokens = c->max_tokens;
    hb->temperature = c->temperature;
    config_http_opts(c, &hb->http);
    hb->priced = config_price(c, c->model, &hb->price_in, &hb->price_out) == 0;
    struct llm_backend *b = xcalloc(1, sizeof *b);
    b->chat = chat;
    b->name = http_name;
    b->free = http_free;
    b->impl = hb;
    return b;
}

struct llm_backend *llm_backend_new(const struct drqa_config *c, char *err, size_t errlen)
{
    return c->provider == LLM_PROVIDER_ANTHROPIC ? llm_anthropic_new(c, err, errlen) : llm_openai_new(c, err, errlen);
}

void llm_backend_free(struct llm_backend *b)
{
    if (b && b->free) b->free(b);
}

int llm_check_request(const struct llm_request *req, struct llm_reply *reply)
{
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
    return 0;
}

int llm_http_call(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                  const char *const *headers, const char *body, struct llm_reply *reply, cJSON **json)
{
    struct http_opts o = hb->http;
    o.cancel = req->cancel;
    o.secret = hb->key;
    struct http_result res;
    int64_t t0 = now_ms();
    int rc = http_post_json(url, headers, body, &o, &res);
    reply->latency_ms = (long)(now_ms() - t0);
    reply->http_status = res.status;
    reply->attempts = res.attempts;
    *json = NULL;
    switch (rc) {
    case HTTP_OK: break;
    case HTTP_ERR_CANCELLED: rc = LLM_ERR_CANCELLED; break;
    case HTTP_ERR_TIMEOUT: rc = LLM_ERR_TIMEOUT; break;
    case HTTP_ERR_CONNECT: rc = LLM_ERR_CONNECT; break;
    case HTTP_ERR_STATUS: rc = LLM_ERR_STATUS; break;
    case HTTP_ERR_TOO_LARGE: rc = LLM_ERR_TOO_LARGE; break;
    default: rc = LLM_ERR_REQUEST; break;
    }
    if (rc != LLM_OK) {
        snprintf(reply->error, sizeof reply->error, "%s", res.err);
        http_result_free(&res);
        return rc;
    }
    cJSON *j = cJSON_ParseWithLength(res.body, res.body_len);
    if (!cJSON_IsObject(j)) {
        char start[48];
        size_t k = 0;
        for (size_t i = 0; i < res.body_len && k < 40; i++)
            start[k++] = res.body[i] >= 32 && res.body[i] < 127 ? res.body[i] : ' ';
        start[k] = 0;
        snprintf(reply->error, sizeof reply->error,
                 "the reply from %s is not a JSON object (%zu bytes starting '%s'); check that the API base points at the right kind of server",
                 url, res.body_len, start);
        http_redact(reply->error, sizeof reply->error, hb->key);
        cJSON_Delete(j);
        http_result_free(&res);
        return LLM_ERR_REPLY;
    }
    http_result_free(&res);
    /* Some gateways answer 200 with an error object instead of a completion. */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (e && !cJSON_IsNull(e)) {
        const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
        snprintf(reply->error, sizeof reply->error, "the server at %s answered with an error: %s", url,
                 cJSON_IsString(m) ? m->valuestring : "(no message)");
        http_redact(reply->error, sizeof reply->error, hb->key);
        cJSON_Delete(j);
        return LLM_ERR_REPLY;
    }
    *json = j;
    return LLM_OK;
}

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
        output_tokens = llm_estimate_tokens(reply->text ? strlen(reply->text) : 0);
        reply->tokens_estimated = 1;
    }
    reply->input_tokens = input_tokens;
    reply->output_tokens = output_tokens;
    reply->cost_usd = hb->priced ? (input_tokens * hb->price_in + output_tokens * hb->price_out) / 1e6 : -1;
}

int llm_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply,
             struct llm_usage *usage)
{
    int rc = b->chat(b, req, reply);
    log_msg("llm: %s [%s] %s: %ld in + %ld out tokens%s, %ld ms, %d attempt%s", b->name(b),
            req->tag ? req->tag : "other", rc == LLM_OK ? "ok" : reply->error, reply->input_tokens,
            reply->output_tokens, reply->tokens_estimated ? " (estimated)" : "", reply->latency_ms,
            reply->attempts, reply->attempts == 1 ? "" : "s");
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
    d->estimated_calls += s->estimated_calls;
    d->unpriced_calls += s->unpriced_calls;
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
    one.estimated_calls = r->text && r->tokens_estimated;
    if (r->text && r->cost_usd < 0) one.unpriced_calls = 1;
    if (r->cost_usd > 0) one.cost_usd = r->cost_usd;
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
    cJSON_AddNumberToObject(o, "output_tokens", (double)e->output_tokens);
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

void llm_add_message(cJSON *msgs, const char *role, const char *content)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", content);
    cJSON_AddItemToArray(msgs, m);
}

long llm_usage_field(const cJSON *usage, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (long)v->valuedouble : -1;
}
