/* Tests for http: the JSON POST against the loopback fake server, every fault
 * it can inject, retries counted in its request log, cancellation from another
 * thread, and the API key kept out of errors and logs. */
#include "tap.h"
#include "fake_llm.h"
#include "harness.h"
#include "http.h"
#include "util.h"

#include <pthread.h>

#define KEY "sk-test-Zq8SECRETkey42"

static const char *script =
    "{\"rules\": ["
    " {\"match\": \"case:500\", \"status\": 500, \"error\": \"backend exploded\"},"
    " {\"match\": \"case:429\", \"times\": 1, \"status\": 429, \"retry_after\": 1, \"error\": \"slow down\"},"
    " {\"match\": \"case:429\", \"content\": \"fine now\"},"
    " {\"match\": \"case:cap429\", \"times\": 1, \"status\": 429, \"retry_after\": 100},"
    " {\"match\": \"case:cap429\", \"content\": \"fine now\"},"
    " {\"match\": \"case:ra-none\", \"status\": 429},"
    " {\"match\": \"case:ra-zero\", \"status\": 429, \"retry_after\": \"0\"},"
    " {\"match\": \"case:ra-neg\", \"status\": 429, \"retry_after\": \"-5\"},"
    " {\"match\": \"case:ra-junk\", \"status\": 429, \"retry_after\": \"abc\"},"
    " {\"match\": \"case:ra-huge\", \"status\": 429, \"retry_after\": \"99999999999999999999999\"},"
    " {\"match\": \"case:ra-deadline\", \"times\": 1, \"status\": 429, \"retry_after\": \"100\"},"
    " {\"match\": \"case:ra-deadline\", \"content\": \"fine now\"},"
    " {\"match\": \"case:ra-ms\", \"times\": 1, \"status\": 429, \"retry_after\": 1, \"headers\": {\"retry-after-ms\": \"7\"}},"
    " {\"match\": \"case:ra-ms\", \"content\": \"fine now\"},"
    " {\"match\": \"case:junkms\", \"times\": 1, \"status\": 429, \"retry_after\": 1, \"headers\": {\"retry-after-ms\": \"soon\"}},"
    " {\"match\": \"case:junkms\", \"content\": \"fine now\"},"
    " {\"match\": \"case:ra-529\", \"times\": 1, \"status\": 529, \"headers\": {\"retry-after-ms\": \"9\"}, \"error_body\":"
    " {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}},"
    " {\"match\": \"case:ra-529\", \"content\": \"fine now\"},"
    " {\"match\": \"case:ra-503\", \"times\": 1, \"status\": 503, \"retry_after\": 1},"
    " {\"match\": \"case:ra-503\", \"content\": \"fine now\"},"
    " {\"match\": \"case:quota\", \"status\": 429, \"retry_after\": 1, \"error_body\": {\"error\": {\"message\": \"You exceeded your"
    " current quota, please check your plan and billing details.\", \"type\": \"insufficient_quota\", \"param\": null,"
    " \"code\": \"insufficient_quota\"}}},"
    " {\"match\": \"case:gemini429\", \"times\": 1, \"status\": 429, \"error_body\": [{\"error\": {\"code\": 429,"
    " \"message\": \"You exceeded your current quota, please check your plan and billing details.\", \"status\":"
    " \"RESOURCE_EXHAUSTED\", \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.QuotaFailure\", \"violations\":"
    " [{\"quotaMetric\": \"generativelanguage.googleapis.com/generate_content_free_tier_requests\", \"quotaId\":"
    " \"GenerateRequestsPerMinutePerProjectPerModel-FreeTier\"}]}, {\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\","
    " \"retryDelay\": \"1s\"}]}}]},"
    " {\"match\": \"case:gemini400\", \"status\": 400, \"error_body\": [{\"error\": {\"code\": 400, \"message\":"
    " \"Invalid JSON payload received.\", \"status\": \"INVALID_ARGUMENT\"}}]},"
    " {\"match\": \"case:ollama-mem\", \"status\": 500, \"error_body\": {\"error\": \"model requires more system memory"
    " (5.3 GiB) than is available (3.5 GiB)\"}},"
    " {\"match\": \"case:rate429\", \"times\": 1, \"status\": 429, \"error_body\": {\"error\":"
    " {\"message\": \"Rate limit reached for requests\", \"type\": \"requests\", \"param\": null, \"code\": \"rate_limit_exceeded\"}}},"
    " {\"match\": \"case:rate429\", \"content\": \"fine now\"},"
    " {\"match\": \"case:501\", \"status\": 501, \"error_body\": {\"error\": {\"code\": 501, \"message\": \"This server does not"
    " support embeddings. Start it with `--embeddings`\", \"type\": \"not_supported_error\"}}},"
    " {\"match\": \"case:loading\", \"times\": 5, \"status\": 503, \"error_body\": {\"error\": {\"code\": 503, \"message\":"
    " \"Loading model\", \"type\": \"unavailable_error\"}}},"
    " {\"match\": \"case:loading\", \"content\": \"loaded\"},"
    " {\"match\": \"case:stuck-loading\", \"status\": 503, \"error_body\": {\"error\": {\"code\": 503, \"message\":"
    " \"Loading model\", \"type\": \"unavailable_error\"}}},"
    " {\"match\": \"case:400\", \"status\": 400, \"error\": \"model 'nope' does not exist\"},"
    " {\"match\": \"case:close\", \"fault\": \"close\"},"
    " {\"match\": \"case:sstall\", \"times\": 1, \"stream_fault\": \"stall\", \"hang_s\": 20, \"content\": \"a b c d e f\"},"
    " {\"match\": \"case:sstall\", \"content\": \"a b c d e f\"},"
    " {\"match\": \"case:swhole\", \"stream\": false, \"content\": \"whole one\"},"
    " {\"match\": \"case:s500\", \"times\": 1, \"status\": 500, \"error\": \"not yet\"},"
    " {\"match\": \"case:s500\", \"content\": \"after the 500\"},"
    " {\"match\": \"case:sslow\", \"content\": \"p1 p2 p3 p4 p5 p6 p7 p8 p9 p10\", \"token_delay_ms\": 100},"
    " {\"match\": \"case:truncate\", \"fault\": \"truncate\"},"
    " {\"match\": \"case:oversize\", \"fault\": \"oversize\", \"oversize_bytes\": 3000000},"
    " {\"match\": \"case:hang\", \"fault\": \"hang\", \"hang_s\": 30},"
    " {\"match\": \"case:slow500\", \"status\": 500},"
    " {\"match\": \"case:echo\", \"fault\": \"echo_key\"},"
    " {\"match\": \"case:latency\", \"delay_ms\": 150, \"content\": \"late but fine\"}"
    "], \"default\": {\"content\": \"hello\"}}";

static char url[128];

static char *body_for(const char *tag)
{
    return xasprintf("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}", tag);
}

static void fast(struct http_opts *o, int attempts);

static char *stream_body_for(const char *tag)
{
    return xasprintf("{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}", tag);
}

/* A stream reader that keeps what it is handed; (NULL, 0) counts a reset. */
struct sink {
    struct buf got;
    int resets, stop_at;   /* stop_at: stop once this many bytes came (0: never) */
};

static int sink_fn(void *ud, const char *p, size_t n)
{
    struct sink *k = ud;
    if (!p) {
        k->resets++;
        buf_reset(&k->got);
        return 0;
    }
    buf_add(&k->got, p, n);
    return k->stop_at && k->got.len >= (size_t)k->stop_at;
}

/* http_post_stream: the body handed as it arrives, the idle limit, retries and
 * the stop; whole replies and errors kept as http_post_json keeps them. */
static void streams(struct fake *f, const char *const *hdrs)
{
    struct http_opts o;
    struct http_result r;
    struct sink k = {BUF_INIT, 0, 0};
    fast(&o, 3);
    o.total_timeout_ms = 200;   /* not applied to a streamed reply */
    o.idle_timeout_ms = 300;
    char *b = stream_body_for("case:sslow");
    is_int(http_post_stream(url, hdrs, b, &o, sink_fn, &k, &r), HTTP_OK,
           "a stream longer than the total limit, never idle for 300 ms, is read");
    ok(r.streamed && r.body_len == 0, "it went to the reader, not into the body");
    ok(strstr(buf_str(&k.got), "data: ") && strstr(buf_str(&k.got), "[DONE]"), "the reader got the event stream");
    cJSON *req = fake_last(f, "case:sslow");
    const char *acc = fake_header(req, "accept");
    ok(acc && strstr(acc, "text/event-stream"), "the request accepts an event stream: %s", acc ? acc : "(none)");
    cJSON_Delete(req);
    http_result_free(&r);
    free(b);

    buf_reset(&k.got);
    b = stream_body_for("case:sstall");
    is_int(http_post_stream(url, hdrs, b, &o, sink_fn, &k, &r), HTTP_OK, "a stalled stream is dropped at the idle limit and sent again");
    is_int(r.attempts, 2, "two attempts");
    is_int(k.resets, 1, "the reader was told the first attempt's bytes are void");
    ok(strstr(buf_str(&k.got), "[DONE]") != NULL, "then got the whole second stream");
    http_result_free(&r);
    free(b);

    buf_reset(&k.got);
    k.resets = 0;
    b = stream_body_for("case:swhole");
    is_int(http_post_stream(url, hdrs, b, &o, sink_fn, &k, &r), HTTP_OK, "a whole JSON reply to a stream request");
    ok(!r.streamed && r.body && strstr(r.body, "whole one") && k.got.len == 0, "is kept in the body, the reader untouched");
    http_result_free(&r);
    free(b);

    b = stream_body_for("case:s500");
    is_int(http_post_stream(url, hdrs, b, &o, sink_fn, &k, &r), HTTP_OK, "a 500 before the stream is retried");
    ok(r.attempts == 2 && k.resets == 0, "as http_post_json retries it, no reset (nothing was handed)");
    http_result_free(&r);
    free(b);

    buf_reset(&k.got);
    k.stop_at = 40;
    b = stream_body_for("case:sslow");
    int64_t t0 = now_ms();
    is_int(http_post_stream(url, hdrs, b, &o, sink_fn, &k, &r), HTTP_ERR_STOPPED, "the reader's nonzero stops the transfer");
    ok(strstr(r.err, "stopped by its reader") != NULL, "%s", r.err);
    is_int(r.attempts, 1, "and it is not sent again");
    diag("stopped after %lld ms", (long long)(now_ms() - t0));
    http_result_free(&r);
    free(b);
    buf_free(&k.got);
}

static void fast(struct http_opts *o, int attempts)
{
    http_opts_defaults(o);
    o->max_attempts = attempts;
    o->backoff_base_ms = 10;
    o->backoff_max_ms = 40;
    o->connect_timeout_ms = 2000;
    o->total_timeout_ms = 10000;
}

struct canceller {
    struct fake *f;
    const char *needle;
    int want;
    atomic_int *flag;
};

/* Sets the flag once the fake has recorded `want` requests with needle (bounded). */
static void *cancel_when_seen(void *arg)
{
    struct canceller *c = arg;
    for (int i = 0; i < 400 && fake_count(c->f, c->needle) < c->want; i++) {
        struct timespec ts = {0, 25 * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_store(c->flag, 1);
    return NULL;
}

int main(void)
{
    struct fake f;
    if (fake_start(&f, script)) {
        ok(0, "the fake server starts");
        return done_testing();
    }
    snprintf(url, sizeof url, "%s/v1/chat/completions", f.base);
    char logpath[160];
    snprintf(logpath, sizeof logpath, "%s/client.log", f.dir);
    log_open(logpath);

    struct http_opts o;
    struct http_result r;
    const char *hdrs[] = {"Authorization: Bearer " KEY, NULL};
    char *b;

    /* happy path */
    fast(&o, 3);
    o.secret = KEY;
    b = body_for("case:happy");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_OK, "a plain POST succeeds");
    is_int(r.status, 200, "status 200");
    is_int(r.attempts, 1, "one attempt");
    ok(r.body && strstr(r.body, "\"hello\"") != NULL, "the body holds the scripted content");
    cJSON *req = fake_last(&f, "case:happy");
    ok(req != NULL, "the fake recorded the request");
    is_str(fake_header(req, "authorization"), "Bearer " KEY, "the auth header arrived as given");
    is_str(fake_header(req, "content-type"), "application/json", "content type is JSON");
    is_str(cJSON_GetObjectItem(req, "body")->valuestring, b, "the body arrived unchanged");
    is_str(cJSON_GetObjectItem(req, "path")->valuestring, "/v1/chat/completions", "the path is the URL's");
    cJSON_Delete(req);
    http_result_free(&r);
    free(b);

    /* 500: bounded retries, error names status and server message */
    fast(&o, 3);
    b = body_for("case:500");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "500 fails after retries");
    is_int(r.attempts, 3, "three attempts were made");
    is_int(fake_count(&f, "case:500"), 3, "the fake saw exactly three requests");
    is_int(r.status, 500, "the status is kept");
    ok(strstr(r.err, "HTTP 500") && strstr(r.err, "backend exploded"), "error names status and message: %s", r.err);
    is_str(r.server_message, "backend exploded", "server message extracted from the error JSON");
    ok(r.backoff_ms >= 15 && r.backoff_ms <= 30, "backoff 10 then 20 ms, each jittered into [d/2, d]: %ld", r.backoff_ms);
    http_result_free(&r);
    free(b);

    /* the server's wait, honoured: a retried reply, then success, the wait
     * planned exactly the one the server asked for (capped by
     * retry_after_max_ms). retry-after-ms (OpenAI, Anthropic; their SDKs
     * read it before Retry-After) first, a garbled one leaves Retry-After;
     * on every retried status, not only 429 (Anthropic's 529 overloaded, a
     * 503: RFC 9110 names Retry-After for it); Gemini sends no header but a
     * google.rpc.RetryInfo in the body, which is a list of errors */
    static const struct { const char *c; long cap_ms, want_ms; const char *what; } waits[] = {
        {"case:429", 5000, 1000, "429: Retry-After: 1 is honoured as 1000 ms"},
        {"case:cap429", 300, 300, "429: Retry-After: 100 is capped at retry_after_max_ms"},
        {"case:ra-ms", 5000, 7, "429: retry-after-ms: 7 is honoured before Retry-After: 1"},
        {"case:junkms", 5000, 1000, "429: a garbled retry-after-ms leaves Retry-After: 1"},
        {"case:ra-529", 5000, 9, "529: retry-after-ms: 9 is honoured"},
        {"case:ra-503", 5000, 1000, "503: Retry-After: 1 is honoured"},
        {"case:gemini429", 5000, 1000, "Gemini's 429: its google.rpc.RetryInfo retryDelay 1s is honoured as 1000 ms"},
    };
    for (size_t i = 0; i < ARRAY_LEN(waits); i++) {
        fast(&o, 3);
        o.retry_after_max_ms = waits[i].cap_ms;
        b = body_for(waits[i].c);
        is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_OK, "%s: retried, then success", waits[i].c);
        is_int(r.attempts, 2, "%s: two attempts", waits[i].c);
        is_int(fake_count(&f, waits[i].c), 2, "%s: the fake saw two requests", waits[i].c);
        is_int(r.backoff_ms, waits[i].want_ms, "%s", waits[i].what);
        http_result_free(&r);
        free(b);
    }

    /* 429 without a usable Retry-After: the jittered backoff of a 5xx, not an
     * immediate retry (attempts counted by the fake, waits planned by the
     * client and, loosely, the time it really slept) */
    static const char *const unusable[] = {"case:ra-none", "case:ra-zero", "case:ra-neg", "case:ra-junk",
                                           "case:ra-huge"};
    for (size_t i = 0; i < ARRAY_LEN(unusable); i++) {
        fast(&o, 3);
        o.retry_after_max_ms = 5000;
        b = body_for(unusable[i]);
        int64_t t0 = now_ms();
        is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "%s: 429 every time fails after retries",
               unusable[i]);
        int64_t took = now_ms() - t0;
        is_int(fake_count(&f, unusable[i]), 3, "%s: the fake saw three requests", unusable[i]);
        ok(r.backoff_ms >= 15 && r.backoff_ms <= 30, "%s: backoff 10 then 20 ms, jittered into [d/2, d]: %ld",
           unusable[i], r.backoff_ms);
        ok(took >= 15, "%s: the client slept at least the minimum backoff in total (%lld ms)", unusable[i],
           (long long)took);
        http_result_free(&r);
        free(b);
    }
    fast(&o, 1);
    b = body_for("case:gemini400");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "a Gemini 400 fails");
    is_str(r.server_message, "Invalid JSON payload received.", "the message of a list of errors is read");
    http_result_free(&r);
    free(b);
    is_int((int)http_body_retry_delay_ms("{\"error\": {\"details\": [{\"@type\": "
                                         "\"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"0.5s\"}]}}"),
           500, "retryDelay 0.5s is 500 ms");
    is_int((int)http_body_retry_delay_ms("{\"error\": {\"details\": [{\"@type\": "
                                         "\"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"soon\"}]}}"),
           -1, "a retryDelay that is no duration is unusable");
    is_int((int)http_body_retry_delay_ms("{\"error\": {\"details\": [{\"@type\": "
                                         "\"type.googleapis.com/google.rpc.Help\", \"retryDelay\": \"5s\"}]}}"),
           -1, "a retryDelay outside a RetryInfo is not taken");
    is_int((int)http_body_retry_delay_ms("not json"), -1, "no body: no delay");
    /* Ollama cannot load a model too big for the machine's memory: every
     * retry would fail the same way (and spend seconds trying to load it) */
    fast(&o, 3);
    b = body_for("case:ollama-mem");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "Ollama's model-too-big 500 fails");
    is_int(r.attempts, 1, "Ollama's model-too-big 500 is not retried");
    ok(strstr(r.err, "requires more system memory") && strstr(r.err, "smaller model"),
       "the error says why and what to do: %s", r.err);
    http_result_free(&r);
    free(b);
    is_int((int)http_retry_after_ms(" 7 "), 7000, "Retry-After ' 7 ' is 7000 ms");
    is_int((int)http_retry_after_ms("1.5"), -1, "Retry-After '1.5' is unusable");
    is_int((int)http_retry_after_ms(""), -1, "an empty Retry-After is unusable");

    /* an honoured Retry-After never waits longer than the request may take */
    fast(&o, 2);
    o.retry_after_max_ms = 60000;
    o.total_timeout_ms = 250;
    b = body_for("case:ra-deadline");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_OK, "429 with Retry-After: 100 then success");
    is_int(r.backoff_ms, 250, "Retry-After: 100 is capped at the request's time limit (timeout_total_ms)");
    http_result_free(&r);
    free(b);


    is_int((int)http_retry_after_ms_value(" 250 "), 250, "retry-after-ms ' 250 ' is 250 ms");
    is_int((int)http_retry_after_ms_value("12.7"), 12, "retry-after-ms '12.7' is 12 ms");
    is_int((int)http_retry_after_ms_value("0"), -1, "retry-after-ms '0' is unusable");
    is_int((int)http_retry_after_ms_value("-4"), -1, "retry-after-ms '-4' is unusable");
    is_int((int)http_retry_after_ms_value("1e99"), -1, "retry-after-ms '1e99' is unusable");


    /* a 429 that says the quota is used up is billing, not a rate: waiting
     * does not cure it, so it is not retried and the error says so */
    fast(&o, 3);
    b = body_for("case:quota");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "429 insufficient_quota fails");
    is_int(fake_count(&f, "case:quota"), 1, "429 insufficient_quota: the fake saw one request, no retries");
    is_int(r.backoff_ms, 0, "429 insufficient_quota: no wait planned");
    ok(strstr(r.err, "quota") && strstr(r.err, "billing") && !strstr(r.err, "rate limiting"),
       "429 insufficient_quota: the error says it is the quota, not a rate limit: %s", r.err);
    http_result_free(&r);
    free(b);
    fast(&o, 3);
    b = body_for("case:rate429");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_OK, "429 rate_limit_exceeded is still retried");
    is_int(fake_count(&f, "case:rate429"), 2, "429 rate_limit_exceeded: two requests");
    http_result_free(&r);
    free(b);
    is_int(http_quota_exhausted("{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"x\","
                                " \"details\": {\"error_code\": \"enforced_spend_limit_reached\"}}}"),
           1, "Anthropic's enforced_spend_limit_reached is a used-up quota");
    is_int(http_quota_exhausted("{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"x\"}}"), 0,
           "Anthropic's plain rate_limit_error is not");

    /* billing refusals: Anthropic's 402 billing_error, and its 400 about a
     * credit balance too low; an ordinary 400 is not one */
    is_int(http_billing_refused(402, "{\"type\": \"error\", \"error\": {\"type\": \"billing_error\", \"message\": \"x\"}}"), 1,
           "402 billing_error is a billing refusal");
    is_int(http_billing_refused(400, "{\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": "
                                     "\"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
                                     "upgrade or purchase credits.\"}}"), 1,
           "Anthropic's 400 credit balance too low is a billing refusal");
    is_int(http_billing_refused(400, "{\"error\": {\"message\": \"Invalid 'messages'\", \"type\": \"invalid_request_error\"}}"),
           0, "an ordinary 400 is not");
    is_int(http_status_persistent(402, "{}"), 1, "402 is not retried");

    /* inputs over the model's limit, as each server words it, with the limit */
    static const struct { long status; const char *body; long limit; } toolong[] = {
        {500, "{\"error\": {\"code\": 500, \"message\": \"input is too large to process. increase the physical batch size\", "
              "\"type\": \"server_error\"}}", -1},
        {500, "{\"error\": {\"code\": 500, \"message\": \"input (992 tokens) is too large to process. increase the physical "
              "batch size (current batch size: 512)\", \"type\": \"server_error\"}}", 512},
        {400, "{\"object\": \"error\", \"message\": \"This model's maximum context length is 512 tokens. However, you requested "
              "613 tokens in the input for embedding generation. Please reduce the length of the input.\", \"type\": "
              "\"BadRequestError\", \"param\": null, \"code\": 400}", 512},
        {400, "{\"error\": {\"message\": \"This model's maximum context length is 8192 tokens, however you requested 9017 tokens "
              "(9017 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.\", \"type\": "
              "\"invalid_request_error\", \"param\": null, \"code\": null}}", 8192},
        {413, "{\"error\": \"Input validation error: `inputs` must have less than 512 tokens. Given: 613\", \"error_type\": "
              "\"Validation\"}", 512},
        {500, "{\"error\": {\"message\": \"the input length exceeds the context length\", \"type\": \"api_error\"}}", -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(toolong); i++) {
        long lim = 0;
        is_int(http_input_too_long(toolong[i].status, toolong[i].body, &lim), 1, "too long %zu: recognised", i);
        is_int(lim, toolong[i].limit, "too long %zu: limit %ld", i, toolong[i].limit);
    }
    is_int(http_input_too_long(500, "{\"error\": {\"code\": 500, \"message\": \"CUDA out of memory\"}}", NULL), 0,
           "another 500 is not an input too long");
    is_int(http_status_persistent(500, toolong[0].body), 1, "llama.cpp's input too large is not retried");
    is_int(http_status_persistent(500, "{\"error\": {\"message\": \"boom\"}}"), 0, "another 500 is retried");

    /* 501 Not Implemented (llama.cpp's not_supported_error, e.g. embeddings
     * on a server started without --embeddings) is not retried */
    fast(&o, 3);
    b = body_for("case:501");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "501 fails");
    is_int(fake_count(&f, "case:501"), 1, "501: the fake saw one request, no retries");
    ok(strstr(r.err, "--embeddings") && !strstr(r.err, "try again later"),
       "501: the error keeps the server's message and does not say to try again: %s", r.err);
    http_result_free(&r);
    free(b);

    /* llama.cpp answers 503 "Loading model" on every route until its model
     * is loaded: those replies do not use up the attempts, and the wait for
     * them is bounded by the request's time limit */
    fast(&o, 2);
    b = body_for("case:loading");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_OK, "503 Loading model five times, then a reply");
    is_int(fake_count(&f, "case:loading"), 6, "503 Loading model: six requests with max_attempts 2");
    ok(r.body && strstr(r.body, "loaded"), "503 Loading model: the reply after loading is the one returned");
    http_result_free(&r);
    free(b);
    fast(&o, 2);
    o.total_timeout_ms = 100;
    b = body_for("case:stuck-loading");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "a model that never loads fails");
    is_int(r.backoff_ms, 100, "the wait for loading is the request's time limit, no more: %ld", r.backoff_ms);
    ok(strstr(r.err, "still loading the model") != NULL, "the error says the model was still loading: %s", r.err);
    http_result_free(&r);
    free(b);

    /* 400: not retried */
    fast(&o, 3);
    b = body_for("case:400");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "400 fails");
    is_int(fake_count(&f, "case:400"), 1, "a 400 is not retried");
    ok(strstr(r.err, "HTTP 400") && strstr(r.err, "model 'nope' does not exist"), "error: %s", r.err);
    http_result_free(&r);
    free(b);

    /* connection closed without a reply */
    fast(&o, 2);
    b = body_for("case:close");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_CONNECT, "a closed connection is a connection error");
    is_int(fake_count(&f, "case:close"), 2, "and it is retried up to the bound");
    ok(strstr(r.err, "closed without a reply") != NULL, "error says so: %s", r.err);
    http_result_free(&r);
    free(b);

    /* truncated body */
    fast(&o, 2);
    b = body_for("case:truncate");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_CONNECT, "a truncated body fails");
    is_int(fake_count(&f, "case:truncate"), 2, "and is retried up to the bound");
    ok(strstr(r.err, "cut short") != NULL, "error says the reply was cut short: %s", r.err);
    http_result_free(&r);
    free(b);

    /* oversized reply */
    fast(&o, 3);
    o.max_reply = 1 << 20;
    b = body_for("case:oversize");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_TOO_LARGE, "an oversized reply fails");
    is_int(fake_count(&f, "case:oversize"), 1, "and is not retried");
    ok(strstr(r.err, "larger than 1048576 bytes") != NULL, "error names the cap: %s", r.err);
    ok(r.body_len <= (1u << 20), "no more than the cap was kept (%zu)", r.body_len);
    http_result_free(&r);
    free(b);

    /* latency under the limit is fine */
    fast(&o, 1);
    b = body_for("case:latency");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_OK, "a slow reply within the limit succeeds");
    http_result_free(&r);
    free(b);

    /* hang past the total timeout */
    fast(&o, 2);
    o.total_timeout_ms = 300;
    b = body_for("case:hang");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_TIMEOUT, "a hung server times out");
    is_int(fake_count(&f, "case:hang"), 2, "timeouts are retried up to the bound");
    ok(strstr(r.err, "total 300 ms") != NULL, "error names the limit: %s", r.err);
    http_result_free(&r);
    free(b);

    /* connection refused */
    int port = fake_closed_port();
    char refused[96];
    snprintf(refused, sizeof refused, "http://127.0.0.1:%d/v1/chat/completions", port);
    fast(&o, 3);
    b = body_for("case:refused");
    is_int(http_post_json(refused, hdrs, b, &o, &r), HTTP_ERR_CONNECT, "a closed port is a connection error");
    is_int(r.attempts, 3, "refused connections are retried up to the bound");
    ok(strstr(r.err, "cannot connect to") && strstr(r.err, refused), "error names the URL: %s", r.err);
    http_result_free(&r);
    free(b);

    /* cancellation mid-request */
    atomic_int flag = 0;
    fast(&o, 3);
    o.total_timeout_ms = 20000;
    o.cancel = &flag;
    b = body_for("case:hang cancel-me");
    struct canceller c = {&f, "cancel-me", 1, &flag};
    pthread_t th;
    pthread_create(&th, NULL, cancel_when_seen, &c);
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_CANCELLED, "a request cancelled from another thread stops");
    pthread_join(th, NULL);
    ok(strstr(r.err, "cancelled") != NULL, "error says cancelled: %s", r.err);
    is_int(r.attempts, 1, "a cancelled request is not retried");
    http_result_free(&r);
    free(b);

    /* cancellation during the backoff sleep */
    atomic_store(&flag, 0);
    fast(&o, 2);
    o.backoff_base_ms = 20000;
    o.backoff_max_ms = 20000;
    o.cancel = &flag;
    b = body_for("case:slow500");
    c = (struct canceller){&f, "case:slow500", 1, &flag};
    pthread_create(&th, NULL, cancel_when_seen, &c);
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_CANCELLED, "cancelling during the backoff stops the wait");
    pthread_join(th, NULL);
    is_int(fake_count(&f, "case:slow500"), 1, "no second attempt was sent");
    http_result_free(&r);
    free(b);

    /* a flag already set sends nothing */
    b = body_for("case:never");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_CANCELLED, "a set flag cancels before sending");
    is_int(fake_count(&f, "case:never"), 0, "nothing was sent");
    http_result_free(&r);
    free(b);

    /* a server echoing the key back */
    fast(&o, 1);
    o.secret = KEY;
    b = body_for("case:echo");
    is_int(http_post_json(url, hdrs, b, &o, &r), HTTP_ERR_STATUS, "401 fails");
    ok(strstr(r.err, KEY) == NULL, "the key is not in the error: %s", r.err);
    ok(strstr(r.err, "[redacted]") && strstr(r.err, "HTTP 401"), "the echoed key is redacted");
    ok(strstr(r.server_message, KEY) == NULL, "nor in the server message");
    ok(strstr(r.err, "API key") != NULL, "the advice points at the key");
    http_result_free(&r);
    free(b);
    log_close();
    ok(file_count(logpath, "http: POST") > 0, "requests were logged");
    ok(file_count(logpath, KEY) == 0, "the key never reached the log");

    streams(&f, hdrs);

    /* a second fake: replies in sequence, then the default */
    struct fake g;
    ok(fake_start(&g, "{\"sequence\": [{\"status\": 503, \"error\": \"warming up\"}, {\"content\": \"second\"}],"
                      " \"default\": {\"content\": \"third\"}}") == 0, "a sequence-scripted fake starts");
    char url2[128];
    snprintf(url2, sizeof url2, "%s/chat/completions", g.base);
    fast(&o, 1);
    b = body_for("seq");
    is_int(http_post_json(url2, NULL, b, &o, &r), HTTP_ERR_STATUS, "sequence 1: the scripted 503");
    ok(strstr(r.err, "HTTP 503") && strstr(r.err, "warming up"), "%s", r.err);
    http_result_free(&r);
    is_int(http_post_json(url2, NULL, b, &o, &r), HTTP_OK, "sequence 2");
    ok(r.body && strstr(r.body, "\"second\""), "the second scripted reply");
    http_result_free(&r);
    is_int(http_post_json(url2, NULL, b, &o, &r), HTTP_OK, "then the default");
    ok(r.body && strstr(r.body, "\"third\""), "the default reply");
    http_result_free(&r);
    free(b);
    cJSON *seqlog = fake_requests(&g);
    is_int(cJSON_GetArraySize(seqlog), 3, "three requests recorded");
    is_str(cJSON_GetObjectItem(cJSON_GetArrayItem(seqlog, 2), "rule")->valuestring, "default", "the last from the default");
    cJSON_Delete(seqlog);
    fake_stop(&g);

    /* pure helpers */
    char *m = http_error_message("{\"error\":{\"message\":\"Incorrect model\",\"type\":\"invalid_request_error\"}}");
    is_str(m, "Incorrect model", "OpenAI error JSON");
    free(m);
    m = http_error_message("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");
    is_str(m, "Overloaded", "Anthropic error JSON");
    free(m);
    m = http_error_message("{\"error\":\"model not found\"}");
    is_str(m, "model not found", "Ollama-style string error");
    free(m);
    m = http_error_message("{\"detail\":\"Not Found\"}");
    is_str(m, "Not Found", "detail field");
    free(m);
    ok(http_error_message("<html>502</html>") == NULL, "not JSON: no message");
    char s[64] = "key abcdef and abcdef";
    is_str(http_redact(s, sizeof s, "abcdef"), "key [redacted] and [redacted]", "redaction replaces every copy");
    char s2[16] = "abc";
    is_str(http_redact(s2, sizeof s2, "abc"), "abc", "secrets under 4 bytes are not searched for");

    fake_stop(&f);
    return done_testing();
}
