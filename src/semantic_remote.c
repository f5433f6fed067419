/*
 * semantic_remote: batched calls to an OpenAI-compatible /embeddings endpoint
 * (see semantic_remote.h). Each reply is checked before its vectors are used:
 * one vector per input, every index in range and seen once, one dimension
 * throughout, numbers only.
 */
#include "semantic_remote.h"
#include "url.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH 64

int embed_config_from(struct embed_config *e, const struct drqa_config *c, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->price_in = -1;
    if (!c->embed_base || !c->embed_model) {
        snprintf(err, errlen,
                 "no remote embeddings configured; set --embed-model (or DRQA_EMBED_MODEL, or embed_model in the config file)%s",
                 c->embed_base ? "" : " and --embed-base");
        return -1;
    }
    e->base = c->embed_base;
    e->model = c->embed_model;
    e->key = c->embed_key;
    e->batch = (size_t)c->embed_batch;
    config_http_opts(c, &e->http);
    /* an input price alone is enough for embeddings */
    for (size_t i = 0; i < c->nprices; i++)
        if (strcmp(c->prices[i].model, c->embed_model) == 0 && c->prices[i].input >= 0)
            e->price_in = c->prices[i].input;
    return 0;
}

static int rc_from_http(int rc)
{
    switch (rc) {
    case HTTP_ERR_CANCELLED: return LLM_ERR_CANCELLED;
    case HTTP_ERR_TIMEOUT: return LLM_ERR_TIMEOUT;
    case HTTP_ERR_CONNECT: return LLM_ERR_CONNECT;
    case HTTP_ERR_STATUS: return LLM_ERR_STATUS;
    case HTTP_ERR_TOO_LARGE: return LLM_ERR_TOO_LARGE;
    default: return LLM_ERR_REQUEST;
    }
}

/* One request for texts[0, n): rows written to out (n * dim, allocated on the
 * first batch when *dim is 0). When the server refused an input as too long,
 * *too_long is set and *limit holds the token limit it named (or -1). */
static int embed_batch(const struct embed_config *e, const char *url, const char *const *texts, size_t n,
                       size_t first, float **out, int *dim, size_t total, int *too_long, long *limit, char *err,
                       size_t errlen)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "model", e->model);
    cJSON *inp = cJSON_AddArrayToObject(req, "input");
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(inp, cJSON_CreateString(texts[i] ? texts[i] : ""));
        bytes += texts[i] ? strlen(texts[i]) : 0;
    }
    char *body = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    char *auth = e->key ? xasprintf("Authorization: Bearer %s", e->key) : NULL;
    const char *headers[] = {auth, NULL};
    struct http_opts o = e->http;
    o.secret = e->key;
    struct http_result res;
    int rc = http_post_json(url, headers, body, &o, &res);
    free(body);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    *too_long = rc == HTTP_ERR_STATUS && http_input_too_long(res.status, res.body, limit);
    if (rc != HTTP_OK) {
        /* llama.cpp's server (and Ollama's runner under it) answers 501 "does
         * not support embeddings. Start it with --embeddings": Ollama's user
         * must pick an embedding model instead, as the flag is not theirs */
        snprintf(err, errlen, "embeddings: %s%s", res.err,
                 res.status == 501 ? " (llama-server serves /embeddings only when started with --embeddings; "
                                     "with Ollama, set --embed-model to an embedding model)" : "");
        http_result_free(&res);
        return rc_from_http(rc);
    }
    cJSON *j = cJSON_ParseWithLength(res.body, res.body_len);
    http_result_free(&res);
    rc = LLM_ERR_REPLY;
    unsigned char *seen = xcalloc(n, 1);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data"), *item;
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "the embeddings reply from %s is not a JSON object; check that it is an OpenAI-compatible server", url);
        goto out;
    }
    if (!cJSON_IsArray(data) || (size_t)cJSON_GetArraySize(data) != n) {
        snprintf(err, errlen, "the embeddings reply from %s holds %d vectors for %zu inputs", url,
                 cJSON_IsArray(data) ? cJSON_GetArraySize(data) : 0, n);
        goto out;
    }
    size_t pos = 0;
    cJSON_ArrayForEach(item, data) {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(item, "index");
        const cJSON *vec = cJSON_GetObjectItemCaseSensitive(item, "embedding");
        double di = cJSON_IsNumber(idx) ? idx->valuedouble : (double)pos;
        pos++;
        if (di < 0 || di >= (double)n || di != floor(di) || seen[(size_t)di]) {
            snprintf(err, errlen, "the embeddings reply from %s has a bad or repeated index %g (inputs 0 to %zu)", url, di,
                     n - 1);
            goto out;
        }
        size_t k = (size_t)di;
        seen[k] = 1;
        int d = cJSON_IsArray(vec) ? cJSON_GetArraySize(vec) : 0;
        if (d <= 0 || (*dim && d != *dim)) {
            snprintf(err, errlen, "the embeddings reply from %s has a vector of %d numbers at index %zu where %d were expected",
                     url, d, k, *dim ? *dim : 1);
            goto out;
        }
        if (!*dim) {
            *dim = d;
            *out = xcalloc(total * (size_t)d, sizeof **out);
        }
        float *row = *out + (first + k) * (size_t)d;
        const cJSON *x;
        int c = 0;
        double norm = 0;
        cJSON_ArrayForEach(x, vec) {
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
                snprintf(err, errlen, "the embeddings reply from %s has a non-number in the vector at index %zu", url, k);
                goto out;
            }
            row[c++] = (float)x->valuedouble;
            norm += x->valuedouble * x->valuedouble;
        }
        if (norm > 0) {
            norm = sqrt(norm);
            for (int i = 0; i < d; i++) row[i] = (float)(row[i] / norm);
        }
    }
    if (e->usage) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
        const cJSON *pt = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
        if (!cJSON_IsNumber(pt)) pt = cJSON_GetObjectItemCaseSensitive(u, "total_tokens");
        int estimated = !cJSON_IsNumber(pt);
        long tokens = estimated ? llm_estimate_tokens(bytes) : (long)pt->valuedouble;
        llm_usage_add_tokens(e->usage, "embed", tokens, 0, estimated, e->price_in >= 0 ? tokens * e->price_in / 1e6 : -1);
    }
    rc = LLM_OK;
out:
    if (rc != LLM_OK && e->key) http_redact(err, errlen, e->key);
    if (rc != LLM_OK) url_redact_buf(err, errlen);
    free(seen);
    cJSON_Delete(j);
    return rc;
}

/* The length of the longest prefix of s within cap bytes that does not end
 * inside a UTF-8 sequence. */
static size_t utf8_prefix(const char *s, size_t len, size_t cap)
{
    if (len <= cap) return len;
    size_t k = cap;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return k;
}

/* The next bound after a refusal: the named limit in bytes, else half the
 * longest text sent; always below the longest (or 0: no shorter bound left). */
static size_t next_bound(long limit, size_t longest)
{
    size_t b = limit > 0 && (size_t)limit < SIZE_MAX / EMBED_BYTES_PER_TOKEN ? (size_t)limit * EMBED_BYTES_PER_TOKEN
                                                                              : longest / 2;
    if (b >= longest) b = longest / 2;
    return b < EMBED_MIN_BYTES ? 0 : b;
}

/* Keeps bound in *fit (the smallest one learnt wins). */
static void keep_bound(atomic_size_t *fit, size_t bound)
{
    if (!fit) return;
    size_t cur = atomic_load(fit);
    while ((cur == 0 || bound < cur) && !atomic_compare_exchange_weak(fit, &cur, bound)) {
    }
}

/* One batch, its texts cut to *bound (0: whole), cut further and sent again
 * while the server says an input is too long. */
static int embed_fitted(const struct embed_config *e, const char *url, const char *const *texts, size_t n,
                        size_t first, float **out, int *dim, size_t total, size_t *bound, char *err, size_t errlen)
{
    const char **use = xcalloc(n, sizeof *use);
    char **cut = xcalloc(n, sizeof *cut);
    int rc;
    for (;;) {
        size_t longest = 0;
        for (size_t i = 0; i < n; i++) {
            const char *t = texts[i] ? texts[i] : "";
            size_t len = strlen(t), k = *bound ? utf8_prefix(t, len, *bound) : len;
            free(cut[i]);
            cut[i] = k < len ? xstrndup(t, k) : NULL;
            use[i] = cut[i] ? cut[i] : t;
            if (k > longest) longest = k;
        }
        int too_long = 0;
        long limit = -1;
        rc = embed_batch(e, url, use, n, first, out, dim, total, &too_long, &limit, err, errlen);
        if (rc == LLM_OK || !too_long) break;
        size_t b = next_bound(limit, longest);
        if (!b) {
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, " (the longest input sent was %zu bytes; texts are not cut below %d bytes)",
                     longest, EMBED_MIN_BYTES);
            break;
        }
        log_msg("embed: %s refused an input of up to %zu bytes as too long (limit %ld tokens named); cutting "
                "texts to %zu bytes", url, longest, limit, b);
        *bound = b;
        keep_bound(e->fit_bytes, b);
    }
    for (size_t i = 0; i < n; i++) free(cut[i]);
    free(cut);
    free(use);
    return rc;
}

int embed_remote(const struct embed_config *e, const char *const *texts, size_t n, float **vecs, int *dim,
                 char *err, size_t errlen)
{
    *vecs = NULL;
    *dim = 0;
    if (!n) return LLM_OK;
    if (!e->base || !e->model) {
        snprintf(err, errlen, "embeddings need a base URL and a model; set --embed-base and --embed-model");
        return LLM_ERR_REQUEST;
    }
    size_t batch = e->batch ? e->batch : DEFAULT_BATCH;
    char *url = url_join(e->base, "/embeddings");
    float *out = NULL;
    int d = 0, rc = LLM_OK;
    size_t bound = e->fit_bytes ? atomic_load(e->fit_bytes) : 0;
    for (size_t i = 0; i < n && rc == LLM_OK; i += batch) {
        size_t m = n - i < batch ? n - i : batch;
        rc = embed_fitted(e, url, texts + i, m, i, &out, &d, n, &bound, err, errlen);
    }
    log_msg("embed: %zu texts to %s in batches of %zu: %s", n, url, batch, rc == LLM_OK ? "ok" : err);
    free(url);
    if (rc != LLM_OK) {
        free(out);
        return rc;
    }
    *vecs = out;
    *dim = d;
    return LLM_OK;
}
