/*
 * http: one JSON POST over libcurl with the failure handling every model API
 * needs. Connect and per-attempt total timeouts (for a streamed reply,
 * http_post_stream, an idle limit in place of the total); bounded retries with
 * exponential backoff and jitter on timeouts, connection errors, 408, 429 and
 * 5xx (honouring a usable retry-after-ms or Retry-After, capped by
 * retry_after_max_ms and total_timeout_ms; a missing, zero, negative or
 * garbled one gets the backoff), but not on 501 Not Implemented or a 429 that
 * says the account's quota is used up, which waiting does not cure; a cap
 * on the reply size; cancellation from another thread through an atomic flag
 * that the curl progress callback and the backoff sleep both watch (CURLOPT_NOSIGNAL is set, so this is safe in a
 * worker thread). Errors carry the HTTP status and the server's own message
 * (OpenAI and Anthropic error JSON understood). The caller names its secret
 * (the API key): it is replaced by "[redacted]" in every error message and log
 * line, even when a server echoes it back. Headers are never logged.
 */
#ifndef DRQA_HTTP_H
#define DRQA_HTTP_H

#include <stdatomic.h>
#include <cjson/cJSON.h>
#include <stddef.h>

enum http_rc {
    HTTP_OK = 0,
    HTTP_ERR_CANCELLED = -1,   /* the cancel flag was set */
    HTTP_ERR_TIMEOUT = -2,     /* connect or total timeout on the last attempt */
    HTTP_ERR_CONNECT = -3,     /* refused, reset, closed without reply, truncated */
    HTTP_ERR_STATUS = -4,      /* the server answered with a status >= 400 */
    HTTP_ERR_TOO_LARGE = -5,   /* the reply passed max_reply bytes */
    HTTP_ERR_OTHER = -6,       /* bad URL, resolver failure, curl setup */
    HTTP_ERR_STOPPED = -7,     /* http_post_stream: the reader asked to stop */
};

struct http_opts {
    long connect_timeout_ms;   /* default 10000 */
    long total_timeout_ms;     /* per attempt; default 300000 */
    int max_attempts;          /* >= 1; default 4 (one try plus three retries) */
    long backoff_base_ms;      /* first retry waits about this long; default 500 */
    long backoff_max_ms;       /* cap of the exponential backoff; default 20000 */
    long retry_after_max_ms;   /* cap on a server's Retry-After (also capped by
                                * total_timeout_ms); default 60000 */
    size_t max_reply;          /* reply size cap in bytes; default 8 MiB */
    long idle_timeout_ms;      /* http_post_stream: no byte moving for this long ends an
                                * attempt (a timeout, retried); 0: none; default 120000 */
    atomic_int *cancel;        /* optional; nonzero cancels (not owned) */
    const char *secret;        /* optional: redacted from messages and logs (not owned) */
};

/* Fills the defaults above. */
void http_opts_defaults(struct http_opts *o);

struct http_result {
    long status;               /* HTTP status of the last attempt, 0 when none */
    char *body;                /* reply of the last attempt, NUL-terminated, as the
                                * server sent it (not redacted; do not log it) (owned) */
    size_t body_len;
    int attempts;              /* requests sent (1 + retries) */
    long backoff_ms;           /* total wait planned between attempts */
    char *server_message;      /* the server's error message when status >= 400 (owned, redacted) */
    char err[512];             /* set when the call fails; names the URL and what to do */
    int streamed;              /* http_post_stream: the last attempt's body went to the
                                * reader (body is then empty) */
    char retried[512];         /* why the last attempt that was sent again failed ("" when
                                * none was): a reply that came after retries says it */
};

/*
 * POSTs body (JSON; NULL sends nothing) to url with the given "Name: value" headers (NULL-terminated
 * list, may be NULL; Content-Type: application/json is added). Returns HTTP_OK
 * when the final status is 2xx, else an http_rc with res->err set. res is always
 * filled and must be released with http_result_free.
 */
int http_post_json(const char *url, const char *const *headers, const char *body,
                   const struct http_opts *o, struct http_result *res);
void http_result_free(struct http_result *res);

/* A streamed reply's bytes as they arrive (p, n), or (NULL, 0) before an
 * attempt that follows one whose bytes were handed over: those are void.
 * Returns 0 to go on, nonzero to stop the transfer. */
typedef int (*http_stream_fn)(void *ud, const char *p, size_t n);

/*
 * http_post_json for a reply that may come as an event stream: a 2xx reply
 * with Content-Type text/event-stream goes to fn as it arrives (res->streamed
 * set, res->body empty); any other reply (an error, or whole JSON from a
 * server that does not stream) is kept in res->body as http_post_json keeps
 * it. The whole-request limit (total_timeout_ms) does not apply: an attempt
 * ends when no byte moves for idle_timeout_ms, and is then retried like a
 * timeout; so is a stream cut short, fn told first. Before the first byte of
 * a stream, retries, backoff and error bodies are http_post_json's. fn's
 * nonzero ends the call with HTTP_ERR_STOPPED.
 */
int http_post_stream(const char *url, const char *const *headers, const char *body, const struct http_opts *o,
                     http_stream_fn fn, void *ud, struct http_result *res);

/* A Retry-After value as delay-seconds: the milliseconds it asks for, or -1
 * when it is unusable (missing, 0, negative, not a whole number, too large
 * to hold); an unusable one gets the jittered backoff of a 5xx instead. */
long http_retry_after_ms(const char *value);

/* A retry-after-ms value (milliseconds, a whole or decimal number): the
 * milliseconds it asks for, or -1 when it is unusable (missing, below 1,
 * not a number, too large). */
long http_retry_after_ms_value(const char *value);

/* 1 when an error body says the account's quota or spend limit is used up:
 * OpenAI's 429 with error code or type "insufficient_quota", Anthropic's 429
 * with error.details.error_code "enforced_spend_limit_reached". */
int http_quota_exhausted(const char *body);

/* 1 when a 400 refuses this prompt's content rather than the request's
 * form: OpenAI's invalid_prompt ("your prompt was flagged as potentially
 * violating our usage policy", reasoning models) and Azure OpenAI's
 * content_filter ("... content management policy"). Another prompt may pass. */
int http_prompt_refused(long status, const char *body);

/* 1 when the server refuses to serve the account for billing: 402 (Anthropic's
 * billing_error), or Anthropic's 400 "Your credit balance is too low to access
 * the Anthropic API". Retrying will not change it. */
int http_billing_refused(long status, const char *body);

/* 1 when an error reply says an input is longer than the model takes:
 * llama.cpp's 500 "input (N tokens) is too large to process. increase the
 * physical batch size (current batch size: B)", vLLM's and OpenAI's 400
 * "This model's maximum context length is N tokens...", OpenAI's "maximum
 * input length is N tokens", text-embeddings-inference's 413 "`inputs` must
 * have less than N tokens", Ollama's "input length exceeds the context
 * length". *limit_tokens (may be NULL) gets the limit the message names, or -1. */
int http_input_too_long(long status, const char *body, long *limit_tokens);

/* 1 when a reply says the server cannot load the model at all: Ollama's 500
 * "model requires more system memory (X GiB) than is available (Y GiB)".
 * Every later call would fail the same way. */
int http_model_unloadable(long status, const char *body);

/* 1 when a status that would otherwise be retried will fail the same way
 * again: 501 Not Implemented, 402 Payment Required, a 429 that says the quota
 * is used up (http_quota_exhausted), a 5xx that says the input is too long
 * (llama.cpp, http_input_too_long) or that the model cannot be loaded
 * (http_model_unloadable). Such replies are not retried. */
int http_status_persistent(long status, const char *body);

/* 1 when a reply is llama.cpp's 503 {"error": {"code": 503, "message":
 * "Loading model", "type": "unavailable_error"}}, which its server sends on
 * every route until the model is loaded. Such replies are retried without
 * counting against max_attempts, for up to total_timeout_ms of waiting. */
int http_model_loading(long status, const char *body);

/* Replaces every occurrence of secret in s (in place, s has room for len+1
 * bytes) with "[redacted]" as far as space allows; a secret shorter than 4
 * bytes is not searched for. Returns s. */
char *http_redact(char *s, size_t size, const char *secret);

/* The error message in an OpenAI ({"error":{"message"}}), Anthropic
 * ({"type":"error","error":{"message"}}) or plain {"error":"..."} /
 * {"message"} / {"detail"} body, else NULL. Caller frees. */
char *http_error_message(const char *body);
/* The object a parsed error body is about: doc, or the first element of a
 * list of them (Google's APIs answer [{"error": {...}}]). */
const cJSON *http_error_root(const cJSON *doc);
/* The wait a Google API error body asks for before a retry, in ms: its
 * error.details' google.rpc.RetryInfo retryDelay ("36s", "0.5s"); -1 when
 * it has none (body may be a list of errors, as Google's APIs send them). */
long http_body_retry_delay_ms(const char *body);

/* Process-wide libcurl initialisation; called by http_post_json itself, but a
 * program may call it first from the main thread. */
void http_global_init(void);

#endif
