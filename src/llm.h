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
 * What a request looks like follows the model's profile (llm_profile.h):
 * what the protocol requires, plus only what the profile positively knows
 * the model takes or the config sets: the reply-limit parameter, whether a
 * temperature or reasoning_effort is sent, and structured output: with
 * llm_request.schema, OpenAI-compatible servers get response_format
 * json_schema (or json_object) and Anthropic a tool (forced, or offered to a
 * model that thinks) whose input_schema is the schema, the tool's input
 * becoming the reply text. A model name in no row gets nothing optional. A
 * 400 (or 422) that names an optional field the request sent (OpenAI's
 * param, or the message naming it with words such as "unsupported",
 * "deprecated", "may only be set to", "Unrecognized request argument",
 * "Extra inputs are not permitted") is understood once: the field is
 * dropped or switched (max_tokens for max_completion_tokens), a refused
 * system role folds the system prompt into the first user message, the
 * request is sent again, and the adjustment holds for the rest of the run
 * for that model (a note says so once on stderr, with the config line that
 * makes it permanent, and in the log). Thinking never reaches llm_reply.text: <think>...</think> in
 * the content (also an unclosed leading block, or reasoning ended by a bare
 * </think>), message.reasoning_content / reasoning and Anthropic thinking
 * blocks go to llm_reply.reasoning; a reply with reasoning and no answer is
 * an error that says to raise the reply limit. The Anthropic system prompt
 * carries cache_control, and so does llm_request.cache_prefix, the stable
 * head of the first message, so that the cached prefix (tools, system and
 * that head) can reach the model's minimum cacheable length; cache reads and
 * writes are counted apart in the ledger.
 *
 * Every failed call has a kind (enum llm_fail): transient ones (connection,
 * timeout, 429, 5xx, 529 overloaded) may succeed later; persistent ones
 * (llm_fail_persistent: auth, not_found, bad_parameter, bad_request, quota)
 * will not, and the caller should stop and show the message, which names the
 * cause and never the key.
 *
 * A backend may be used from several threads at once: each call has its own
 * curl handle and touches nothing shared but the usage it is given, which
 * locks, and the learned adjustments, which are atomic. Cancellation is per
 * request (llm_request.cancel).
 */
#ifndef DRQA_LLM_H
#define DRQA_LLM_H

#include "llm_config.h"
#include "http.h"
#include "llm_profile.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct llm_message {
    const char *role;          /* "user" or "assistant" */
    const char *content;
};

#define LLM_TEMPERATURE_DEFAULT (-1.0)

/* What a streamed reply hands its reader as it arrives (llm_request.on_delta). */
enum llm_delta_kind {
    LLM_DELTA_TEXT = 0,        /* a piece of the answer text (thinking already taken out) */
    LLM_DELTA_REASONING = 1,   /* a piece of the model's reasoning */
    LLM_DELTA_RESET = 2,       /* what was handed so far is void (the call failed or is sent
                                * again): the reader drops it; text is NULL, len 0 */
};
/* Called in the calling thread for each piece; returns 0 to go on, nonzero
 * to stop the reply (the connection is closed; see llm_reply.stopped). */
typedef int (*llm_delta_fn)(void *ud, enum llm_delta_kind kind, const char *text, size_t len);

struct llm_request {
    const char *system;        /* system prompt, may be NULL */
    const struct llm_message *messages;
    size_t nmessages;
    double temperature;        /* LLM_TEMPERATURE_DEFAULT: the configured one */
    int max_tokens;            /* <= 0: the configured max_tokens */
    int json_mode;             /* the caller wants one JSON object (json_object
                                * when the profile has structured output) */
    const char *schema_name;   /* with schema: the role's JSON schema for structured */
    const cJSON *schema;       /* output (borrowed; NULL: none) */
    const char *tag;           /* role tag for accounting ("planning", ...); NULL: "other" */
    size_t cache_prefix;       /* bytes at the start of messages[0].content that every call of
                                * this kind repeats (a question's stable context): a prompt
                                * cache may keep them; Anthropic gets a cache breakpoint after
                                * them. 0: none */
    atomic_int *cancel;        /* optional; nonzero cancels the request */
    llm_delta_fn on_delta;     /* optional: the reply's pieces as they arrive (streamed replies;
                                * a whole reply gives its text in one piece) */
    void *delta_ud;
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

/* Why a call failed. */
enum llm_fail {
    LLM_FAIL_NONE = 0,
    LLM_FAIL_TRANSIENT,        /* connect, timeout, 429, 5xx but 501, 529 overloaded */
    LLM_FAIL_CONTEXT_LENGTH,   /* the prompt (plus the reply limit) is over the context window */
    LLM_FAIL_BAD_PARAMETER,    /* a parameter refused even after the one adjustment */
    LLM_FAIL_AUTH,             /* 401, 403 */
    LLM_FAIL_NOT_FOUND,        /* 404, unknown model */
    LLM_FAIL_BAD_REQUEST,      /* another 4xx, 501 Not Implemented, or a request refused before sending */
    LLM_FAIL_BAD_REPLY,        /* malformed or empty body, only reasoning, too large */
    LLM_FAIL_CANCELLED,
    LLM_FAIL_QUOTA,            /* 429 saying the account's quota or spend limit is used up
                                * (OpenAI insufficient_quota): billing, not a rate */
    LLM_FAIL_PROVIDER,         /* status 200 carrying an error instead of a completion: a gateway's
                                * top-level {"error": ...}, or OpenRouter's choices[0].error with
                                * finish_reason "error"; the provider's message is kept */
    LLM_FAIL_REFUSAL,          /* the model declined (OpenAI message.refusal, Anthropic stop_reason
                                * "refusal"): another prompt may go through */
    LLM_FAIL_STREAM,           /* no longer given: an event stream is read whether it was asked
                                * for or not (kept so that the kinds keep their numbers) */
};

/* "transient", "context_length", ... ("none" for LLM_FAIL_NONE). */
const char *llm_fail_name(enum llm_fail k);
/* 1 for the kinds that repeating the same request will not cure (auth,
 * not_found, bad_parameter, bad_request, quota). */
int llm_fail_persistent(enum llm_fail k);

struct llm_reply {
    char *text;                /* the model's text (owned; NULL on failure) */
    char *reasoning;           /* thinking the model returned apart (owned; may be NULL) */
    long input_tokens, output_tokens;   /* input counts cached tokens too; output counts reasoning */
    long cached_tokens;        /* input tokens read from the server's prompt cache */
    long cache_write_tokens;   /* input tokens written to it (Anthropic) */
    long reasoning_tokens;     /* output tokens spent on reasoning */
    enum llm_fail fail;        /* LLM_FAIL_NONE on success */
    int tokens_estimated;      /* counts are bytes/4, the server sent no usage */
    int truncated;             /* the model stopped at the token limit */
    long http_status;
    int attempts;
    double cost_usd;           /* < 0 when the model has no price */
    long latency_ms;
    char error[512];           /* why the call failed; never holds the key */
    char retried[512];         /* why the last attempt sent again failed, "" when none was
                                * (http_result.retried): said even when the call succeeded */
    int streamed;              /* the reply came as an event stream */
    int stopped;               /* on_delta asked to stop: the call returns LLM_ERR_CANCELLED,
                                * fail LLM_FAIL_CANCELLED, and text holds what had arrived
                                * (may be NULL), which is not a complete reply */
};

void llm_reply_free(struct llm_reply *r);   /* frees text and reasoning, keeps the rest; NULL ok */

struct llm_backend {
    /* Fills reply (always; llm_reply_free it) and returns an llm_rc. */
    int (*chat)(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply);
    /* "openai-compatible qwen3-coder at http://..." (owned by the backend) */
    const char *(*name)(const struct llm_backend *b);
    void (*free)(struct llm_backend *b);
    /* Optional (NULL: never known): the most request bytes (system prompt
     * and messages) the model's context window is known to take, once a
     * refusal named the window (a longer one is refused by any server, with
     * whatever reply limit); 0 while it is not known. */
    size_t (*room)(const struct llm_backend *b);
    void *impl;
};

/* b->room, or 0 when b has none. */
size_t llm_backend_room(const struct llm_backend *b);

/* The backend for c->provider and c->model; NULL with err when no model is configured. */
struct llm_backend *llm_backend_new(const struct drqa_config *c, char *err, size_t errlen);
/* The same for another model name (a per-role model): same provider, base, key and limits. */
struct llm_backend *llm_backend_new_model(const struct drqa_config *c, const char *model, char *err, size_t errlen);
struct llm_backend *llm_openai_new(const struct drqa_config *c, const char *model, char *err, size_t errlen);
struct llm_backend *llm_anthropic_new(const struct drqa_config *c, const char *model, char *err, size_t errlen);
/* Azure OpenAI: llm_openai_new over the resource's classic deployment URL
 * (.../openai/deployments/D?api-version=V) or its v1 endpoint
 * (.../openai/v1; a bare resource URL is taken as that), the key in an
 * api-key header (an Entra ID token, a JWT, as a Bearer token). */
struct llm_backend *llm_azure_new(const struct drqa_config *c, const char *model, char *err, size_t errlen);
/* The OpenAI Responses API (llm_responses.c) on an openai-compatible or
 * Azure backend: llm_openai_new's backend sends here every request once
 * hb->responses is set. */
int llm_responses_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply);
void llm_backend_free(struct llm_backend *b);   /* NULL ok */

/* Accounting: per role tag plus a total. Thread-safe. */
#define LLM_USAGE_MAX_TAGS 24

struct llm_usage_entry {
    char tag[32];
    long calls, failures;
    long input_tokens, output_tokens;
    long cached_input_tokens, reasoning_tokens;   /* parts of input and output */
    long cache_write_tokens;   /* part of input: written to the prompt cache (Anthropic) */
    long estimated_calls;      /* calls whose counts were estimated */
    long unpriced_calls;       /* successful calls without a price */
    long retried_calls;        /* calls whose request the transport sent again (llm_reply.retried) */
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
/* {"total": {...}, "by_tag": {"planning": {...}, ...}} (caller deletes);
 * each entry: calls, failures, input_tokens, cached_input_tokens,
 * cache_write_tokens, output_tokens, reasoning_tokens, estimated_calls, unpriced_calls, cost_usd
 * (null when nothing was priced). */
cJSON *llm_usage_json(struct llm_usage *u);
/* The ledger in one line from llm_usage_json's object: "tokens perception 3
 * calls 8.1k in (6.0k cached, 1.1k cache write) 1.2k out $0.012; ...; total 14 calls ... $0.05"
 * (a role without a price shows "unpriced"). Caller frees; NULL for no calls. */
char *llm_usage_line(const cJSON *usage_json);

/* Calls b->chat and, when usage is not NULL, accounts the reply under req->tag. */
int llm_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *reply,
             struct llm_usage *usage);

/* bytes/4 rounded up: the estimate used when a server reports no usage. */
long llm_estimate_tokens(size_t bytes);

/* ---- for backend implementations (llm_openai.c, llm_anthropic.c) ---- */

/* Adjustments learned from the server's refusals (llm_http_backend.adjust). */
enum {
    LLM_ADJ_TOKEN_PARAM = 1,      /* use the other reply-limit parameter than the profile's */
    LLM_ADJ_NO_TEMPERATURE = 2,   /* send no temperature */
    LLM_ADJ_NO_EFFORT = 4,        /* send no reasoning_effort */
    LLM_ADJ_NO_SCHEMA = 8,        /* no response_format / tools: JSON in the text */
    LLM_ADJ_NO_THINKING = 16,     /* send "enable_thinking": false (a server that thinks only when streaming) */
    LLM_ADJ_JSON_SCHEMA = 32,     /* json_object refused, json_schema taken (LM Studio): send json_schema */
    LLM_ADJ_NO_LIMIT = 64,        /* OpenAI-compatible: send no reply limit (both names refused) */
    LLM_ADJ_SYSTEM_USER = 128,    /* the system role refused: fold the system prompt into the first user message */
    LLM_ADJ_NO_TOOL_CHOICE = 256, /* forced tool use refused: offer the tool, do not force it */
};

/* Top-level request fields a refusal made the backend drop that no
 * LLM_ADJ_* bit covers (a field another request builder adds), at most
 * this many a backend. */
#define LLM_ADJ_MAX_DROPPED 8

/* What an HTTP chat backend knows; backend->impl points to it. */
struct llm_http_backend {
    char *base, *key, *model, *label;
    double temperature;
    struct http_opts http;
    struct llm_profile prof;      /* config_profile of the model */
    atomic_int adjust;            /* LLM_ADJ_* bits, for the rest of the run */
    pthread_mutex_t dropped_lock; /* guards dropped and ndropped */
    char dropped[LLM_ADJ_MAX_DROPPED][40];   /* other top-level fields dropped for the run */
    int ndropped;
    atomic_long window;           /* the context window a refusal named, in tokens (0: not known) */
    atomic_long bytes_per_token_x100;   /* request bytes a token, x100, from a refusal's count (0: not known) */
    atomic_long out_cap;          /* the largest reply limit a refusal named, in tokens (0: not known) */
    atomic_long raised_limit;     /* the reply limit raised once for a model that spent it all on
                                   * reasoning (llm_raise_limit; 0: not raised) */
    /* a prompt count far below a request's bytes (llm_check_cut): the last
     * such count and the request's bytes, and whether the cut was noted */
    atomic_long cut_tokens, cut_bytes;
    atomic_int cut_noted;
    int azure;                    /* Azure OpenAI: the key goes in an api-key header (llm_openai.c) */
    atomic_int responses;         /* ask on the Responses API (the profile's api, or a chat refusal
                                   * saying the model is served there alone), for the rest of the run */
};

#define LLM_REPLY_MIN 256         /* a reply limit is never lowered below this */
#define LLM_REPLY_MARGIN 32       /* tokens kept free between the input and the window */
#define LLM_BYTES_PER_TOKEN 3     /* a prompt's bytes a token until the server's count is known (code runs 3-4) */

/* A server that cuts a prompt longer than its context window and answers as
 * if nothing happened (Ollama keeps the last half of its window: num_ctx
 * 2048 gives 1026 tokens, 4096 gives 2050; older versions kept the window
 * whole) leaves one tell: the prompt count in the reply's usage, far below
 * the request's bytes (more than LLM_CUT_BYTES_PER_TOKEN bytes a token) and
 * the same for requests of other lengths. The first such reply is taken; a
 * second with the same count for a request of another length fails as
 * LLM_FAIL_CONTEXT_LENGTH (its model saw only the tail: the rules and the
 * question at the head were lost), and the window is kept for the run, so
 * that longer requests are shortened before they are sent: twice the count
 * less two when that is a power of two (Ollama's half), else the count (a
 * later cut says nothing new: the requests it can be seen on are over that
 * window by any count of their bytes). Noted once on stderr with what to
 * change. Returns rc, or LLM_ERR_REPLY for such a reply. */
#define LLM_CUT_BYTES_PER_TOKEN 8
#define LLM_CUT_MIN_TOKENS 256
int llm_check_cut(struct llm_http_backend *hb, const struct llm_request *req, struct llm_reply *reply, int rc);

/* Builds a backend around an llm_http_backend copied from c for model; label
 * is the provider's display name. NULL with err when model is NULL. */
struct llm_backend *llm_http_backend_new(const struct drqa_config *c, const char *model, const char *label,
                                         int (*chat)(struct llm_backend *, const struct llm_request *,
                                                     struct llm_reply *),
                                         char *err, size_t errlen);
/* The profile a backend made by llm_backend_new resolved, or NULL for a
 * backend of another kind. */
const struct llm_profile *llm_backend_profile(const struct llm_backend *b);
/* Checks the request (roles, at least one message). 0 or -1 with reply->error. */
int llm_check_request(const struct llm_request *req, struct llm_reply *reply);
/* The API a reply comes from, for reading it as an event stream (llm_stream.h). */
enum llm_wire { LLM_WIRE_CHAT, LLM_WIRE_MESSAGES, LLM_WIRE_RESPONSES };
struct llm_stream_api;   /* an API's stream assembler (llm_stream.h) */
/* Whether requests to hb ask for a streamed reply ("stream": true): the
 * profile's stream field (on unless --no-stream, stream = false or
 * profile.GLOB.stream = off says otherwise). */
int llm_streams(const struct llm_http_backend *hb);
/* Builds the request body for the given adjustments (caller frees). */
typedef char *(*llm_body_fn)(const struct llm_http_backend *hb, const struct llm_request *req, int adjust);
/* POSTs the body to url with headers and maps the outcome into reply (error,
 * status, fail kind); a reply that comes as an event stream (asked for, or
 * not) is read as it arrives by the API's assembler (wire) and rebuilt into
 * the JSON a whole reply would be (llm_stream.h), its pieces handed to
 * req->on_delta; a 400 that refuses a parameter the body holds is
 * adjusted for (LLM_ADJ_*, or the field dropped) and sent again, once per
 * parameter, and a refused system role folds the system prompt into the
 * first user message. Returns an llm_rc; on LLM_OK *json is the parsed
 * reply object (caller deletes). */
int llm_http_exchange(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                      const char *const *headers, llm_body_fn body, const struct llm_stream_api *wire,
                      struct llm_reply *reply, cJSON **json);
/* The reply-limit value for req: the request's, else the profile's max_output;
 * once a refusal named the context window, no more than the window leaves
 * after the request's input (estimated), down to LLM_REPLY_MIN. */
int llm_reply_limit(const struct llm_http_backend *hb, const struct llm_request *req);
/* Whether a temperature goes out, and which one. */
int llm_send_temperature(const struct llm_http_backend *hb, const struct llm_request *req, int adjust, double *t);
/* Whether the system prompt goes into the first user message instead of a
 * system message (the profile says so, or the server refused the role). */
int llm_system_as_user(const struct llm_http_backend *hb, int adjust);
/* Appends the request's messages to msgs, the system prompt first as a
 * system message, or with fold put before the first user message's text. */
void llm_add_messages(cJSON *msgs, const struct llm_request *req, int with_system, int fold);
/* Takes the reply text: thinking moved to reply->reasoning (after any
 * already there), the rest trimmed into reply->text. When no answer is left
 * but there was reasoning, or the reply stopped at the limit with nothing,
 * fails with an error naming the cause. Returns an llm_rc. */
int llm_take_text(struct llm_http_backend *hb, struct llm_reply *reply, const char *content, const char *url);
/* A reply that stopped at its limit (sent: the limit the request carried)
 * with no answer, from a model that reasons (reasoning tokens or text, or a
 * profile that thinks or takes reasoning_effort): the first such reply of
 * the run raises the reply limit for the rest of the run (twice the
 * limit sent, at least 16384, at most 131072 and what the model accepts),
 * said once on stderr. Returns 1 when the caller should send the request
 * again (the limit is now above sent), 0 when the reply stands: its error
 * then says the raised limit was spent too. */
int llm_raise_limit(struct llm_http_backend *hb, struct llm_reply *reply, int sent);
/* One exchange of a backend (url and headers made by it), its reply read. */
typedef int (*llm_once_fn)(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                           const char *const *headers, struct llm_reply *reply);
/* once(), and once more when its reply spent the limit on reasoning and
 * llm_raise_limit raised it; the spent reply's tokens, attempts, time and
 * cost are added to the second's. Returns once()'s llm_rc. */
int llm_once_raising(struct llm_http_backend *hb, const struct llm_request *req, const char *url,
                     const char *const *headers, struct llm_reply *reply, llm_once_fn once);
/* Fills token counts (estimating the missing ones) and the cost from the
 * profile's prices; reply->cached_tokens etc. are read as set. */
void llm_account(struct llm_http_backend *hb, const struct llm_request *req, struct llm_reply *reply,
                 long input_tokens, long output_tokens);
/* An error object a 200 reply carried (a top-level "error", or a choice's):
 * the message naming who (e.g. "the server at") and url, with the provider's
 * type/code and message, into out; returns its kind (auth, quota, not_found
 * when the code says so, else provider_error). */
enum llm_fail llm_body_error(const cJSON *e, const char *who, const char *url, char *out, size_t outlen);
/* The credential header line for hb's key (caller wipes and frees), or NULL
 * when it has none: "Authorization: Bearer KEY", or for Azure "api-key: KEY". */
char *llm_openai_auth_header(const struct llm_http_backend *hb);
/* Appends {"role","content"} to a messages array (both APIs use this shape). */
void llm_add_message(cJSON *msgs, const char *role, const char *content);
/* A non-negative number field of a usage object, or -1 when absent or bad. */
long llm_usage_field(const cJSON *usage, const char *name);
/* The "type" string of a reply's part or item, or "" when it has none. */
const char *llm_json_type(const cJSON *o);
/* A request header holding the key: wiped, then freed (NULL ok). */
void llm_header_free(char *header);
/* Appends the n bytes at s to reply's reasoning, a line apart from what it
 * holds. */
void llm_reply_add_reasoning(struct llm_reply *reply, const char *s, size_t n);
/* The cached input and reasoning tokens of a usage object into reply, from
 * its in_details ("prompt_tokens_details") .cached_tokens and out_details
 * .reasoning_tokens (0 when absent). */
void llm_reply_usage_details(struct llm_reply *reply, const cJSON *usage, const char *in_details,
                             const char *out_details);

#endif
