/*
 * http: the JSON POST with timeouts, retries, a reply cap, cancellation and
 * secret redaction that the model clients share (see http.h). Each call uses
 * its own curl easy handle driven by a multi handle that is polled in short
 * slices, so a cancel flag set by another thread is noticed within one slice
 * even while the server sends nothing; the progress callback checks the same
 * flag while data flows.
 *
 * libcurl is opened on first use (dlopen) rather than linked: its dependency
 * tree (TLS, Kerberos, LDAP, ...) would otherwise be loaded and relocated at
 * every start of the program, which costs more than a no-change index update,
 * and only the modes that talk to a model server need it.
 */
#include "http.h"
#include "url.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#define CURL_DISABLE_TYPECHECK   /* its macros would call the names redefined below */
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define POLL_SLICE_MS 25

void http_opts_defaults(struct http_opts *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = 10000;
    o->total_timeout_ms = 300000;
    o->max_attempts = 4;
    o->backoff_base_ms = 500;
    o->backoff_max_ms = 20000;
    o->retry_after_max_ms = 60000;
    o->max_reply = 8u << 20;
    o->idle_timeout_ms = 120000;
}

/* The libcurl functions used here, as (return type, name, parameters). */
#define CURL_FUNCS(X) \
    X(CURLcode, curl_global_init, (long)) \
    X(CURL *, curl_easy_init, (void)) \
    X(CURLcode, curl_easy_setopt, (CURL *, CURLoption, ...)) \
    X(CURLcode, curl_easy_getinfo, (CURL *, CURLINFO, ...)) \
    X(void, curl_easy_cleanup, (CURL *)) \
    X(const char *, curl_easy_strerror, (CURLcode)) \
    X(CURLM *, curl_multi_init, (void)) \
    X(CURLMcode, curl_multi_add_handle, (CURLM *, CURL *)) \
    X(CURLMcode, curl_multi_perform, (CURLM *, int *)) \
    X(CURLMcode, curl_multi_poll, (CURLM *, struct curl_waitfd *, unsigned int, int, int *)) \
    X(CURLMsg *, curl_multi_info_read, (CURLM *, int *)) \
    X(CURLMcode, curl_multi_remove_handle, (CURLM *, CURL *)) \
    X(CURLMcode, curl_multi_cleanup, (CURLM *)) \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist *, const char *)) \
    X(void, curl_slist_free_all, (struct curl_slist *))

#define CURL_PTR(ret, name, params) static ret(*p_##name) params;
CURL_FUNCS(CURL_PTR)
#undef CURL_PTR
/* from here on, every curl_* call goes through the loaded pointer (curl.h
 * defines the first two as macros checking the argument count) */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (*p_curl_global_init)
#define curl_easy_init (*p_curl_easy_init)
#define curl_easy_setopt (*p_curl_easy_setopt)
#define curl_easy_getinfo (*p_curl_easy_getinfo)
#define curl_easy_cleanup (*p_curl_easy_cleanup)
#define curl_easy_strerror (*p_curl_easy_strerror)
#define curl_multi_init (*p_curl_multi_init)
#define curl_multi_add_handle (*p_curl_multi_add_handle)
#define curl_multi_perform (*p_curl_multi_perform)
#define curl_multi_poll (*p_curl_multi_poll)
#define curl_multi_info_read (*p_curl_multi_info_read)
#define curl_multi_remove_handle (*p_curl_multi_remove_handle)
#define curl_multi_cleanup (*p_curl_multi_cleanup)
#define curl_slist_append (*p_curl_slist_append)
#define curl_slist_free_all (*p_curl_slist_free_all)

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_load_error[256];   /* set when libcurl could not be loaded */

static void curl_init_once(void)
{
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(curl_load_error, sizeof curl_load_error, "%s", e ? e : "libcurl.so.4 not found");
        return;
    }
    /* the object pointer to function pointer conversion POSIX guarantees for dlsym */
#define CURL_SYM(ret, name, params)                                                             \
    if (!curl_load_error[0]) {                                                                  \
        void *f = dlsym(lib, #name);                                                            \
        if (f) memcpy(&p_##name, &f, sizeof f);                                                 \
        else snprintf(curl_load_error, sizeof curl_load_error, "libcurl.so.4 has no %s", #name); \
    }
    CURL_FUNCS(CURL_SYM)
#undef CURL_SYM
    if (curl_load_error[0]) {
        dlclose(lib);
        return;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);   /* lib stays open for the life of the process */
}

void http_global_init(void) { pthread_once(&curl_once, curl_init_once); }

void http_result_free(struct http_result *res)
{
    if (!res) return;
    free(res->body);
    free(res->server_message);
    res->body = NULL;
    res->server_message = NULL;
}

/* A malloc'd copy of s with secret, whole or cut short, and every secret
 * of the process replaced. */
static char *redact_dup(const char *s, const char *secret)
{
    char *r = str_redact_secret(s, secret);
    char *all = secret_scrub(r);
    free(r);
    return all;
}

char *http_redact(char *s, size_t size, const char *secret)
{
    if (!s || !size) return s;
    char *r = redact_dup(s, secret);
    snprintf(s, size, "%s", r);
    free(r);
    return s;
}

static char *json_msg(const cJSON *v)
{
    if (cJSON_IsString(v) && v->valuestring[0]) return xstrdup(v->valuestring);
    return NULL;
}

const cJSON *http_error_root(const cJSON *doc)
{
    return cJSON_IsArray(doc) ? cJSON_GetArrayItem(doc, 0) : doc;
}

char *http_error_message(const char *body)
{
    if (!body || !*body) return NULL;
    cJSON *doc = cJSON_Parse(body);
    if (!doc) return NULL;
    const cJSON *j = http_error_root(doc);
    char *m = NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsObject(e)) {
        m = json_msg(cJSON_GetObjectItemCaseSensitive(e, "message"));
        if (!m) m = json_msg(cJSON_GetObjectItemCaseSensitive(e, "type"));
    } else if (cJSON_IsString(e)) {
        m = json_msg(e);
    }
    if (!m) m = json_msg(cJSON_GetObjectItemCaseSensitive(j, "message"));
    if (!m) m = json_msg(cJSON_GetObjectItemCaseSensitive(j, "detail"));
    cJSON_Delete(doc);
    return m;
}

long http_body_retry_delay_ms(const char *body)
{
    cJSON *doc = body && *body ? cJSON_Parse(body) : NULL;
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(http_error_root(doc), "error"), "details");
    const cJSON *list = cJSON_IsArray(details) ? details : NULL, *d;
    long ms = -1;
    cJSON_ArrayForEach(d, list) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(d, "@type");
        const cJSON *delay = cJSON_GetObjectItemCaseSensitive(d, "retryDelay");
        if (!cJSON_IsString(type) || !str_ends(type->valuestring, "google.rpc.RetryInfo") || !cJSON_IsString(delay))
            continue;
        /* a protobuf Duration in JSON: seconds with up to nine decimals and an 's' */
        const char *v = delay->valuestring;
        char *end;
        errno = 0;
        double secs = strtod(v, &end);
        if (end != v && !strcmp(end, "s") && !errno && secs >= 0 && secs <= 86400 && isdigit((unsigned char)*v))
            ms = (long)(secs * 1000.0 + 0.5);
        break;
    }
    cJSON_Delete(doc);
    return ms;
}

/* The error message of body, lower-cased; "" when it has none. */
static void lower_message(const char *body, char *dst, size_t dstlen)
{
    dst[0] = 0;
    char *m = http_error_message(body);
    if (!m) return;
    snprintf(dst, dstlen, "%s", m);
    free(m);
    for (char *p = dst; *p; p++) *p = (char)tolower((unsigned char)*p);
}

int http_prompt_refused(long status, const char *body)
{
    if (status != 400) return 0;
    char m[512];
    lower_message(body, m, sizeof m);
    if (strstr(m, "flagged as potentially violating") || strstr(m, "content management policy")) return 1;
    cJSON *j = body && *body ? cJSON_Parse(body) : NULL;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(http_error_root(j), "error"),
                                                         "code");
    int r = cJSON_IsString(code) && (!strcmp(code->valuestring, "invalid_prompt") ||
                                     !strcmp(code->valuestring, "content_filter"));
    cJSON_Delete(j);
    return r;
}

int http_billing_refused(long status, const char *body)
{
    if (status == 402) return 1;
    if (status != 400 && status != 403) return 0;
    char m[512];
    lower_message(body, m, sizeof m);
    return strstr(m, "credit balance is too low") != NULL;
}

int http_input_too_long(long status, const char *body, long *limit_tokens)
{
    if (limit_tokens) *limit_tokens = -1;
    if (status < 400) return 0;
    char m[512];
    lower_message(body, m, sizeof m);
    /* the limit as each server words it, then the phrases that carry none */
    static const char *const limits[] = {
        "maximum context length is ",     /* OpenAI, vLLM */
        "maximum input length is ",       /* OpenAI embeddings */
        "must have less than ",           /* text-embeddings-inference */
        "current batch size: ",           /* llama.cpp, newer wording */
    };
    static const char *const phrases[] = {
        "too large to process",           /* llama.cpp: larger than the physical batch */
        "exceeds the context length", "input length exceeds", "exceeds maximum context length",  /* Ollama */
        "maximum context length", "maximum input length", "must have less than",
        "exceed context limit",           /* Anthropic: input and max_tokens over the window */
        "exceeds the maximum number of tokens allowed",   /* Gemini: "The input token count (K) exceeds ..." */
        "`inputs` tokens + `max_new_tokens`",             /* text-generation-inference: input and reply */
    };
    for (size_t i = 0; i < ARRAY_LEN(limits); i++) {
        long v = str_number_after(m, limits[i]);
        if (v > 0) {
            if (limit_tokens) *limit_tokens = v;
            return 1;
        }
    }
    for (size_t i = 0; i < ARRAY_LEN(phrases); i++)
        if (strstr(m, phrases[i])) return 1;
    return 0;
}

int http_quota_exhausted(const char *body)
{
    cJSON *j = body && *body ? cJSON_Parse(body) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(http_error_root(j), "error");
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(e, "details");
    const cJSON *vals[] = {cJSON_GetObjectItemCaseSensitive(e, "code"), cJSON_GetObjectItemCaseSensitive(e, "type"),
                           cJSON_GetObjectItemCaseSensitive(details, "error_code")};
    int r = 0;
    for (size_t i = 0; i < ARRAY_LEN(vals); i++)
        if (cJSON_IsString(vals[i]) && (strcmp(vals[i]->valuestring, "insufficient_quota") == 0 ||
                                        strcmp(vals[i]->valuestring, "enforced_spend_limit_reached") == 0))
            r = 1;
    cJSON_Delete(j);
    return r;
}

struct xfer {
    struct buf body;
    int too_large;
    atomic_int *cancel;
    char retry_after[64];      /* the Retry-After header's value, "" when none */
    char retry_after_ms[64];   /* the retry-after-ms header's value, "" when none */
    /* a streamed reply (http_post_stream): a 2xx text/event-stream body goes
     * to fn as it arrives instead of into body */
    CURL *h;
    http_stream_fn fn;
    void *ud;
    int mode;                  /* 0: no byte of the body yet; 1: kept in body; 2: handed to fn */
    int stopped;               /* fn asked to stop */
    size_t streamed, max;      /* bytes handed to fn; the reply cap */
    long idle_ms;              /* no byte moving for this long ends the attempt (0: no limit) */
    int64_t last_ms;           /* when a byte last moved */
    curl_off_t last_dn, last_un;
    int idle;                  /* the idle limit ended the attempt */
};

/* Copies the value of header `name` (lower case, with its colon) from the
 * header line p into dst when the line is that header. */
static void keep_header(const char *p, size_t len, const char *name, char *dst, size_t dstlen)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(p, name, nl) != 0) return;
    size_t vl = len - nl;
    if (vl >= dstlen) vl = dstlen - 1;
    memcpy(dst, p + nl, vl);
    dst[vl] = 0;
}

/* Keeps the Retry-After and retry-after-ms values of the reply (the last ones sent). */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * n;
    keep_header(p, len, "retry-after:", x->retry_after, sizeof x->retry_after);
    keep_header(p, len, "retry-after-ms:", x->retry_after_ms, sizeof x->retry_after_ms);
    return len;
}

long http_retry_after_ms_value(const char *value)
{
    if (!value) return -1;
    while (*value == ' ' || *value == '\t') value++;
    if (!isdigit((unsigned char)*value)) return -1;
    errno = 0;
    char *end;
    double ms = strtod(value, &end);
    while (isspace((unsigned char)*end)) end++;
    if (*end || errno == ERANGE || !(ms >= 1) || ms > (double)(LONG_MAX / 2)) return -1;
    return (long)ms;
}

long http_retry_after_ms(const char *value)
{
    if (!value) return -1;
    while (*value == ' ' || *value == '\t') value++;
    size_t n = strlen(value);
    while (n && isspace((unsigned char)value[n - 1])) n--;
    if (!n) return -1;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)value[i])) return -1;
    errno = 0;
    long long secs = strtoll(value, NULL, 10);
    if (errno == ERANGE || secs <= 0 || secs > LONG_MAX / 1000) return -1;
    return (long)secs * 1000;
}

/* A body that goes to the stream reader: a 2xx event stream. Errors and
 * whole JSON replies (a server that does not stream) are kept whole. */
static int stream_body(CURL *h)
{
    long status = 0;
    char *ct = NULL;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
    return status >= 200 && status < 300 && ct && !strncasecmp(ct, "text/event-stream", 17);
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * n;
    x->last_ms = now_ms();
    if (!x->mode) x->mode = x->fn && stream_body(x->h) ? 2 : 1;
    if (x->mode == 2) {
        if (x->streamed + len > x->max) {
            x->too_large = 1;
            return 0;
        }
        x->streamed += len;
        if (x->fn(x->ud, p, len)) {
            x->stopped = 1;
            return 0;
        }
        return len;
    }
    if (buf_add(&x->body, p, len)) {
        x->too_large = 1;
        return 0;
    }
    return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct xfer *x = ud;
    if (dn != x->last_dn || un != x->last_un) {   /* bytes moved, either way: not idle */
        x->last_dn = dn;
        x->last_un = un;
        x->last_ms = now_ms();
    }
    return x->cancel && atomic_load(x->cancel) ? 1 : 0;
}

static int cancelled(const struct http_opts *o) { return o->cancel && atomic_load(o->cancel); }

/* Sleeps ms milliseconds in short slices; returns -1 as soon as the flag is set. */
static int sleep_cancellable(long ms, const struct http_opts *o)
{
    int64_t end = now_ms() + ms;
    for (;;) {
        if (cancelled(o)) return -1;
        int64_t left = end - now_ms();
        if (left <= 0) return 0;
        if (left > POLL_SLICE_MS) left = POLL_SLICE_MS;
        struct timespec ts = {0, (long)left * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static uint64_t jitter_state(void)
{
    static _Atomic uint64_t counter;
    uint64_t x = (uint64_t)now_us() ^ (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ULL);
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return x;
}

/* Backoff before retry number k (1-based): base * 2^(k-1), capped, then a
 * uniform jitter in [d/2, d] so that many clients do not retry in step. */
static long backoff_for(const struct http_opts *o, int k)
{
    long d = o->backoff_base_ms > 0 ? o->backoff_base_ms : 0;
    for (int i = 1; i < k && d < o->backoff_max_ms; i++) d *= 2;
    if (o->backoff_max_ms > 0 && d > o->backoff_max_ms) d = o->backoff_max_ms;
    if (d <= 1) return d;
    long half = d / 2;
    return half + (long)(jitter_state() % (uint64_t)(d - half + 1));
}

enum attempt_kind { A_DONE, A_CANCEL, A_TIMEOUT, A_CONNECT, A_TOO_LARGE, A_OTHER, A_STOPPED };

/* Runs one transfer on h through a multi handle; returns how it ended. */
static enum attempt_kind run_attempt(CURL *h, struct xfer *x, const struct http_opts *o,
                                     CURLcode *ccode)
{
    CURLM *m = curl_multi_init();
    if (!m) { *ccode = CURLE_OUT_OF_MEMORY; return A_OTHER; }
    curl_multi_add_handle(m, h);
    int running = 1, was_cancelled = 0;
    *ccode = CURLE_OK;
    for (;;) {
        CURLMcode mc = curl_multi_perform(m, &running);
        if (mc != CURLM_OK) { *ccode = CURLE_FAILED_INIT; break; }
        if (!running) break;
        if (cancelled(o)) { was_cancelled = 1; break; }
        if (x->idle_ms > 0 && now_ms() - x->last_ms > x->idle_ms) {
            x->idle = 1;
            break;
        }
        curl_multi_poll(m, NULL, 0, POLL_SLICE_MS, NULL);
    }
    int q;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &q)))
        if (msg->msg == CURLMSG_DONE) *ccode = msg->data.result;
    curl_multi_remove_handle(m, h);
    curl_multi_cleanup(m);
    if (x->stopped) return A_STOPPED;
    if (was_cancelled || *ccode == CURLE_ABORTED_BY_CALLBACK) return A_CANCEL;
    if (x->too_large) return A_TOO_LARGE;
    if (x->idle) return A_TIMEOUT;
    switch (*ccode) {
    case CURLE_OK: return A_DONE;
    case CURLE_OPERATION_TIMEDOUT: return A_TIMEOUT;
    case CURLE_COULDNT_CONNECT: case CURLE_GOT_NOTHING: case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: case CURLE_PARTIAL_FILE: case CURLE_SSL_CONNECT_ERROR:
        return A_CONNECT;
    default: return A_OTHER;
    }
}

int http_model_loading(long status, const char *body)
{
    if (status != 503) return 0;
    cJSON *j = body && *body ? cJSON_Parse(body) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
    int r = cJSON_IsString(m) && strcasecmp(m->valuestring, "Loading model") == 0;
    cJSON_Delete(j);
    return r;
}

int http_model_unloadable(long status, const char *body)
{
    if (status != 500) return 0;
    char m[512];
    lower_message(body, m, sizeof m);
    return strstr(m, "model requires more system memory") != NULL;
}

int http_status_persistent(long status, const char *body)
{
    return status == 501 || status == 402 || (status == 429 && http_quota_exhausted(body)) ||
           (status >= 500 && http_input_too_long(status, body, NULL)) || http_model_unloadable(status, body);
}

static const char *status_advice(long status, const char *body)
{
    if (status == 429 && http_quota_exhausted(body))
        return "the account's quota or spend limit is used up, which waiting will not cure; check the plan and "
               "billing details of the API key's account";
    if (http_prompt_refused(status, body))
        return "the provider's content policy refused this prompt; another prompt may pass";
    if (http_billing_refused(status, body))
        return "the account cannot pay for requests (credit balance or billing), which waiting will not cure; check "
               "the plan and billing details of the API key's account";
    if (http_input_too_long(status, body, NULL))
        return "an input is longer than the model accepts; send shorter texts or raise the server's limit";
    if (status == 501)
        return "the server does not implement this, and retrying will not change that; check how it was started";
    if (http_model_unloadable(status, body))
        return "the server cannot load the model, and retrying will not change that; pick a smaller model (or a "
               "smaller quantisation of it) or free memory on the server";
    if (status == 401 || status == 403)
        return "check the API key (DRQA_API_KEY, or api_key in the config file)";
    if (status == 404) return "check the API base URL and the model name";
    if (status == 400 || status == 422) return "the server rejected the request; check the model name and options";
    if (status == 429) return "the server is rate limiting; wait, lower --parallel, or raise retries in the config file";
    if (http_model_loading(status, body))
        return "the server was still loading the model; wait until its /health answers ok, or raise "
               "timeout_total_ms in the config file to wait longer";
    if (status >= 500) return "the server failed; try again later or check its logs";
    return "check the server and its configuration";
}

/* The URL as shown in messages and logs: no userinfo, no key-like query
 * values, no secret. */
static char *safe_url_of(const char *url, const char *secret)
{
    char *r = url_redact(url);
    char *s = redact_dup(r, secret);
    free(r);
    return s;
}

/* The wait before the next attempt after a retryable status (429, 408,
 * 5xx, Anthropic's 529): the server's retry-after-ms (milliseconds, sent by
 * OpenAI and Anthropic and read first by their own SDKs) or Retry-After
 * (seconds or an HTTP-date; RFC 9110 names it for 429 and 503), else the
 * body's google.rpc.RetryInfo (Gemini's 429 says when a per-minute quota
 * frees up there, with no header), when it gives a usable one, capped by
 * retry_after_max_ms and by the per-attempt time limit (a request is never
 * told to wait longer than it may take); else -1, for the same jittered
 * backoff as a 5xx. */
static long retry_after_wait(const struct http_opts *o, const char *header, const char *ms_header, long curl_secs,
                             const char *body)
{
    long wait = http_retry_after_ms_value(ms_header);
    if (wait < 0) wait = http_retry_after_ms(header);
    /* an HTTP-date ("Wed, 21 Oct 2026 07:28:00 GMT"): libcurl's reading of it */
    if (wait < 0 && isalpha((unsigned char)header[strspn(header, " \t")]) && strstr(header, "GMT") &&
        curl_secs > 0 && curl_secs <= LONG_MAX / 1000)
        wait = curl_secs * 1000;
    if (wait < 0) wait = http_body_retry_delay_ms(body);
    if (wait < 0) return -1;
    if (o->retry_after_max_ms >= 0 && wait > o->retry_after_max_ms) wait = o->retry_after_max_ms;
    if (o->total_timeout_ms > 0 && wait > o->total_timeout_ms) wait = o->total_timeout_ms;
    return wait;
}

/* A curl handle set up for one attempt of the POST. */
static CURL *attempt_handle(const char *url, const char *body, struct curl_slist *hl, const struct http_opts *o,
                            struct xfer *x, char *cerr)
{
    CURL *h = curl_easy_init();
    if (!h) return NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "drqa-tui");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    /* a streamed reply has no whole-request limit: the idle limit watches it */
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, x->fn ? 0L : o->total_timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    return h;
}

/* How an attempt ended, for the loop: its rc and whether and when to retry. */
struct outcome {
    int rc, retryable, loading;
    long wait;                 /* -1: the backoff */
    const char *why;           /* what set the wait */
};

/* The server's error reply as res->server_message (redacted; an excerpt when
 * the body carries no message). */
static void keep_server_message(struct http_result *res, const char *body, const char *url, const char *secret)
{
    /* the whole text is redacted before an excerpt is cut from it: a key
     * across the cut would otherwise be shown in part */
    char *m = http_error_message(body);
    int excerpt = !m;
    if (!m && *body) m = xstrdup(body);
    if (!m) return;
    char *e = url_redact_echo(m, url);   /* a server may echo the URL's key back */
    res->server_message = redact_dup(e, secret);
    if (excerpt) res->server_message[utf8_cut(res->server_message, 200)] = 0;
    free(e);
    free(m);
}

/* Reads attempt number `attempt`, which ended as k with status, into res->err and out. */
static void attempt_outcome(enum attempt_kind k, CURLcode cc, const char *cerr, long status, curl_off_t retry_after,
                            const struct xfer *x, const struct http_opts *o, const char *url, const char *safe_url,
                            int attempt, struct http_result *res, struct outcome *out)
{
    const char *s = attempt == 1 ? "" : "s";
    *out = (struct outcome){HTTP_ERR_OTHER, 0, 0, -1, "backoff"};
    switch (k) {
    case A_STOPPED:
        snprintf(res->err, sizeof res->err, "the reply from %s was stopped by its reader", safe_url);
        out->rc = HTTP_ERR_STOPPED;
        break;
    case A_CANCEL:
        snprintf(res->err, sizeof res->err, "request to %s cancelled", safe_url);
        out->rc = HTTP_ERR_CANCELLED;
        break;
    case A_TOO_LARGE:
        snprintf(res->err, sizeof res->err,
                 "the reply from %s is larger than %zu bytes; raise max_reply_bytes in the config file if this is expected",
                 safe_url, o->max_reply);
        out->rc = HTTP_ERR_TOO_LARGE;
        break;
    case A_TIMEOUT:
        if (x->idle)
            snprintf(res->err, sizeof res->err,
                     "no byte from %s for %ld ms (the idle limit) after %d attempt%s; the server stalled: check it, "
                     "or raise timeout_idle_ms in the config file", safe_url, o->idle_timeout_ms, attempt, s);
        else
            snprintf(res->err, sizeof res->err,
                     "no complete reply from %s within the time limits (connect %ld ms, total %ld ms) after %d attempt%s; check the server or raise timeout_total_ms in the config file",
                     safe_url, o->connect_timeout_ms, o->total_timeout_ms, attempt, s);
        out->rc = HTTP_ERR_TIMEOUT;
        out->retryable = 1;
        break;
    case A_CONNECT:
        snprintf(res->err, sizeof res->err, "%s %s after %d attempt%s (%s); %s",
                 cc == CURLE_PARTIAL_FILE || x->mode == 2 ? "the reply was cut short from" :
                 cc == CURLE_GOT_NOTHING ? "the connection was closed without a reply by" :
                 "cannot connect to", safe_url, attempt, s, cerr[0] ? cerr : curl_easy_strerror(cc),
                 cc == CURLE_COULDNT_CONNECT ? "is the server running at that address?" :
                 "the server or a proxy dropped the connection; check its logs");
        out->rc = HTTP_ERR_CONNECT;
        out->retryable = 1;
        break;
    case A_OTHER:
        snprintf(res->err, sizeof res->err, "request to %s failed: %s; check the URL", safe_url,
                 cerr[0] ? cerr : curl_easy_strerror(cc));
        break;
    case A_DONE: {
        if (status >= 200 && status < 300) { out->rc = HTTP_OK; break; }
        const char *b = buf_str(&x->body);
        keep_server_message(res, b, url, o->secret);
        snprintf(res->err, sizeof res->err, "HTTP %ld from %s after %d attempt%s: %s; %s", status, safe_url,
                 attempt, s, res->server_message ? res->server_message : "(no message)", status_advice(status, b));
        out->rc = HTTP_ERR_STATUS;
        out->loading = http_model_loading(status, b);
        if ((status == 429 || status == 408 || status >= 500) && !http_status_persistent(status, b)) {
            out->retryable = 1;
            if ((out->wait = retry_after_wait(o, x->retry_after, x->retry_after_ms, (long)retry_after, b)) >= 0)
                out->why = x->retry_after_ms[0] && http_retry_after_ms_value(x->retry_after_ms) >= 0 ? "retry-after-ms"
                           : x->retry_after[0] ? "Retry-After" : "the body's retryDelay";
        }
        break;
    }
    }
}

/* The POST with its retries (http_post_json, and http_post_stream when fn is set). */
static int post(const char *url, const char *const *headers, const char *body, const struct http_opts *opts,
                http_stream_fn fn, void *ud, struct http_result *res)
{
    struct http_opts o;
    if (opts) o = *opts; else http_opts_defaults(&o);
    if (o.max_attempts < 1) o.max_attempts = 1;
    if (!o.max_reply) o.max_reply = 8u << 20;
    memset(res, 0, sizeof *res);
    if (!body) body = "";
    http_global_init();
    if (curl_load_error[0]) {
        char *safe = safe_url_of(url, o.secret);
        snprintf(res->err, sizeof res->err,
                 "cannot send a request to %s: libcurl could not be loaded (%s); install libcurl4", safe,
                 curl_load_error);
        free(safe);
        return HTTP_ERR_OTHER;
    }

    char *safe_url = safe_url_of(url, o.secret);
    struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
    hl = curl_slist_append(hl, fn ? "Accept: text/event-stream, application/json" : "Accept: application/json");
    hl = curl_slist_append(hl, "Expect:");
    for (size_t i = 0; headers && headers[i]; i++) hl = curl_slist_append(hl, headers[i]);

    int rc = HTTP_ERR_OTHER;
    char cerr[CURL_ERROR_SIZE];
    struct xfer x = {.body = BUF_INIT, .cancel = o.cancel, .fn = fn, .ud = ud, .max = o.max_reply,
                     .idle_ms = fn ? o.idle_timeout_ms : 0};
    /* Replies saying the model is still loading do not use up attempts: the
     * wait for them is bounded by the request's own time limit instead. */
    int loading_replies = 0;
    long loading_budget = o.total_timeout_ms > 0 ? o.total_timeout_ms : 300000, loading_waited = 0;
    for (int attempt = 1;; attempt++) {
        if (cancelled(&o)) {
            snprintf(res->err, sizeof res->err, "request to %s cancelled", safe_url);
            rc = HTTP_ERR_CANCELLED;
            break;
        }
        if (x.streamed) fn(ud, NULL, 0);   /* what the last attempt handed over is void */
        buf_free(&x.body);
        x.body.max = o.max_reply;
        x.too_large = x.mode = x.stopped = x.idle = 0;
        x.streamed = 0;
        x.last_dn = x.last_un = 0;
        x.retry_after[0] = 0;
        x.retry_after_ms[0] = 0;
        cerr[0] = 0;
        CURL *h = x.h = attempt_handle(url, body, hl, &o, &x, cerr);
        if (!h) {
            snprintf(res->err, sizeof res->err, "cannot start a request to %s (curl_easy_init failed)", safe_url);
            rc = HTTP_ERR_OTHER;
            break;
        }
        int64_t t0 = x.last_ms = now_ms();
        CURLcode cc;
        enum attempt_kind k = run_attempt(h, &x, &o, &cc);
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_off_t retry_after = -1;
        curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
        curl_easy_cleanup(h);
        x.h = NULL;
        res->attempts = attempt;
        res->status = status;
        res->streamed = x.mode == 2;
        log_msg("http: POST %s attempt %d/%d: %s, status %ld, %zu bytes%s, %lld ms", safe_url, attempt,
                o.max_attempts, k == A_DONE ? "done" : x.idle ? "idle" : cerr[0] ? cerr : curl_easy_strerror(cc),
                status, x.mode == 2 ? x.streamed : x.body.len, x.mode == 2 ? " streamed" : "",
                (long long)(now_ms() - t0));

        free(res->server_message);
        res->server_message = NULL;
        struct outcome out;
        attempt_outcome(k, cc, cerr, status, retry_after, &x, &o, url, safe_url, attempt, res, &out);
        rc = out.rc;
        long wait = out.wait;
        http_redact(res->err, sizeof res->err, o.secret);
        url_redact_buf(res->err, sizeof res->err);
        if (!out.retryable) break;
        if (out.loading) {
            loading_replies++;
            if (wait < 0) wait = backoff_for(&o, loading_replies);
            if (loading_waited >= loading_budget) break;
            if (wait > loading_budget - loading_waited) wait = loading_budget - loading_waited;
            loading_waited += wait;
        } else if (attempt - loading_replies >= o.max_attempts) {
            break;
        }
        if (wait < 0) wait = backoff_for(&o, attempt - loading_replies);
        res->backoff_ms += wait;
        snprintf(res->retried, sizeof res->retried, "%s", res->err);   /* redacted above */
        log_msg("http: retrying %s in %ld ms (%s)", safe_url, wait, out.why);
        if (sleep_cancellable(wait, &o)) {
            snprintf(res->err, sizeof res->err, "request to %s cancelled", safe_url);
            rc = HTTP_ERR_CANCELLED;
            break;
        }
    }
    res->body_len = x.body.len;
    res->body = buf_take(&x.body);
    curl_slist_free_all(hl);
    free(safe_url);
    return rc;
}

int http_post_json(const char *url, const char *const *headers, const char *body,
                   const struct http_opts *opts, struct http_result *res)
{
    return post(url, headers, body, opts, NULL, NULL, res);
}

int http_post_stream(const char *url, const char *const *headers, const char *body, const struct http_opts *opts,
                     http_stream_fn fn, void *ud, struct http_result *res)
{
    return post(url, headers, body, opts, fn, ud, res);
}
