/*
 * llm: one interface in front of every chat model server. A struct
 * llm_backend is a small vtable (chat, name, free); llm_openai_new speaks the
 * OpenAI chat-completions API (OpenAI, vLLM, Ollama /v1, llama.cpp server,
 * OpenRouter, DeepSeek, Kimi, GLM, Qwen...), llm_anthropic_new the Anthropic
 * messages API, and other code (the offline policy, tests) may fill in its own
 * vtable. Every reply carries token counts, from the server's `usage` or
 * estimated from bytes/4 when the server gives none (then flagged), and a cost
 * when the config file prices the model; struct llm_usage adds them up per
 * role tag, and a caller keeps one per question and one per run.
 *
 * A backend may be used from several threads at once: each call has its own
 * curl handle and touches nothing shared but the usage it is given, which
 * locks. Cancellation is per request (llm_request.cancel).
 */
#ifndef DRQA_LLM_H
#define DRQA_LLM_H

#include "config.h"
#include "http.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct llm_message {
    const char *role;          /* "user" or "assistant" */
    const char *content;
};

#define LLM_TEMPERATURE_DEFAULT (-1.0)

struct llm_request {
    const char *system;        /* system prompt, may be NULL */
    const struct llm_message *messages;
    size_t nmessages;
    double temperature;        /* LLM_TEMPERATURE_DEFAULT: the configured one */
    int max_tokens;            /* <= 0: the configured max_tokens */
    int json_mode;             /* the caller wants one JSON object; sent as
                                * response_format only when the config enables
                                * json_mode (not every server accepts it) */
    const char *tag;           /* role tag for accounting ("planning", ...); NULL: "other" */
    atomic_int *cancel;        /* optional; nonzero cancels the request */
};

/* Zeroes r and sets the defaults above. */
void llm_request_init(struct llm_request *r);

enum llm_rc {
    LLM_OK = 0,
    LLM_ERR_CANCELLED = -1,
    LLM_ERR_TIMEOUT = -2,
    LLM_ERR_CONNECT = -3,
    LLM_ERR_STATUS = -4,       /* the server answered with an error status */
    LLM_ERR_TOO_LARGE = -5,
    LLM_ERR_REPLY = -6,        /* the reply is not what the API promises */
    LLM_ERR_REQUEST = -7,      /* the request itself is unusable */
};

struct llm_reply {
    char *text;                /* the model's text (owned; NULL on failure) */
    long input_tokens, output_tokens;
    int tokens_estimated;      /* counts are bytes/4, the server sent no usage */
    int truncated;             /* the model stopped at the token limit */
    long http_status;
    int attempts;
    double cost_usd;           /* < 0 when the model has no price */
    long latency_ms;
    char error[512];           /* why the call failed; never holds the key */
};

void llm_reply_free(struct llm_reply *r);   /* frees text, keeps the rest; NULL ok */

struct llm_backend {
    /* Fills reply (always; llm_reply_free it) and returns an llm_rc. */
    int (*chat)(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply);
    /* "openai-compatible qwen3-coder at http://..." (owned by the backend) */
    const char *(*name)(const struct llm_backend *b);
    void (*free)(struct llm_backend *b);
    void *impl;
};

/* The backend for c->provider; NULL with err when no model is configured. */
struct llm_backend *llm_backend_new(const struct drqa_config *c, char *err, size_t errlen);
struct llm_backend *llm_openai_new(const struct drqa_config *c, char *err, size_t errlen);
struct llm_backend *llm_anthropic_new(const struct drqa_config *c, char *err, size_t errlen);
void llm_backend_free(struct llm_backend *b);   /* NULL ok */

/* Accounting: per role tag plus a total. Thread-safe. */
#define LLM_USAGE_MAX_TAGS 24

struct llm_usage_entry {
    char tag[32];
    long calls, failures;
    long input_tokens, output_tokens;
    long estimated_calls;      /* calls whose counts were estimated */
    long unpriced_calls;       /* successful calls without a price */
    double cost_usd;           /* sum over priced calls */
};

struct llm_usage {
    pthread_mutex_t lock;
    size_t ntags;
    struct llm_usage_entry tags[LLM_USAGE_MAX_TAGS];  /* the last slot takes "other" overflow */
    struct llm_usage_entry total;
};

void llm_usage_init(struct llm_usage *u);
void llm_usage_destroy(struct llm_usage *u);   /* NULL ok */
/* Adds one call's reply under tag (NULL: "other"); a failed call (text NULL)
 * counts as a call and a failure with the tokens the reply reports. */
void llm_usage_add(struct llm_usage *u, const char *tag, const struct llm_reply *r);
/* Adds tokens that did not come from a chat reply (embeddings). */
void llm_usage_add_tokens(struct llm_usage *u, const char *tag, long input_tokens, long output_tokens,
                          int estimated, double cost_usd);
void llm_usage_merge(struct llm_usage *dst, struct llm_usage *src);
/* Copies the entry for tag (NULL: the total). Returns 0, or -1 when the tag has none. */
int llm_usage_get(struct llm_usage *u, const char *tag, struct llm_usage_entry *out);
/* {"total": {...}, "by_tag": {"planning": {...}, ...}} (caller deletes). */
cJSON *llm_usage_json(struct llm_usage *u);

/* Calls b->chat and, when usage is not NULL, accounts the reply under req->tag. */
int llm_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply,
             struct llm_usage *usage);

/* bytes/4 rounded up: the estimate used when a server reports no usage. */
long llm_estimate_tokens(size_t bytes);

/* ---- for backend implementations (llm_openai.c, llm_anthropic.c) ---- */

/* What an HTTP chat backend knows; backend->impl points to it. */
struct llm_http_backend {
    char *base, *key, *model, *label;
    int json_mode, max_tokens;
    double temperature;
    struct http_opts http;
    int priced;
    double price_in, price_out;   /* USD per million tokens */
};

/* Builds a backend around an llm_http_backend copied from c; label is the
 * provider's display name. NULL with err when c has no model. */
struct llm_backend *llm_http_backend_new(const struct drqa_config *c, const char *label,
                                         int (*chat)(struct llm_backend *, const struct llm_request *,
                                                     struct llm_reply *),
                                         char *err, size_t errlen);
/* Checks the request (roles, at least one message). 0 or -1 with reply->error. */
int llm_check_request(const struct llm_request *req, struct llm_reply *reply);
/* POSTs body to url with headers and maps the outcome into reply; returns an
 * llm_rc. On LLM_OK *json is the parsed reply object (caller deletes). */
int llm_http_call(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                  const char *const *headers, const char *body, struct llm_reply *reply, cJSON **json);
/* Fills token counts (estimating the missing ones) and cost. */
void llm_account(struct llm_http_backend *hb, const struct llm_request *req, struct llm_reply *reply,
                 long input_tokens, long output_tokens);
/* Appends {"role","content"} to a messages array (both APIs use this shape). */
void llm_add_message(cJSON *msgs, const char *role, const char *content);
/* A non-negative number field of a usage object, or -1 when absent or bad. */
long llm_usage_field(const cJSON *usage, const char *name);

#endif
