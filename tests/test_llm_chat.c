/* Tests for the chat backends (OpenAI-compatible and Anthropic) against the
 * loopback fake: the request each sends (body fields, headers), replies and
 * every fault the fake injects, token accounting from usage and estimated,
 * cancellation, the usage ledger, and the key kept out of logs, errors and
 * request bodies. Each scenario runs once per provider. */
#include "tap.h"
#include "fake_llm.h"
#include "../src/config.h"   /* a bare "config.h" here would find autoconf's */
#include "jsonx.h"
#include "llm.h"
#include "fake_backend.h"
#include "util.h"

#include <pthread.h>
#include <sys/stat.h>

#define KEY "sk-chat-Vb7SECRET19key"

static const char *script =
    "{\"rules\": ["
    " {\"match\": \"case:happy\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\", \"usage\": {\"input\": 11, \"output\": 7}},"
    " {\"match\": \"case:nousage\", \"content\": \"twelve bytes\", \"usage\": null},"
    " {\"match\": \"case:prose\", \"fault\": \"prose\", \"content\": \"{\\\"a\\\": 1}\"},"
    " {\"match\": \"case:length-openai\", \"content\": \"{\\\"a\\\": \", \"finish\": \"length\"},"
    " {\"match\": \"case:length-anthropic\", \"content\": \"{\\\"a\\\": \", \"finish\": \"max_tokens\"},"
    " {\"match\": \"openai case:429\", \"times\": 1, \"status\": 429, \"retry_after\": 0},"
    " {\"match\": \"anthropic case:429\", \"times\": 1, \"status\": 429, \"retry_after\": 0},"
    " {\"match\": \"case:429\", \"content\": \"after 429\"},"
    " {\"match\": \"case:500\", \"status\": 500, \"error\": \"backend exploded\"},"
    " {\"match\": \"case:malformed\", \"fault\": \"malformed\"},"
    " {\"match\": \"case:truncate\", \"fault\": \"truncate\"},"
    " {\"match\": \"case:oversize\", \"fault\": \"oversize\"},"
    " {\"match\": \"case:empty\", \"fault\": \"empty_choices\"},"
    " {\"match\": \"case:nullcontent\", \"fault\": \"null_content\"},"
    " {\"match\": \"case:close\", \"fault\": \"close\"},"
    " {\"match\": \"case:hang\", \"fault\": \"hang\", \"hang_s\": 30},"
    " {\"match\": \"case:echo\", \"fault\": \"echo_key\"},"
    " {\"match\": \"case:error200\", \"fault\": \"error_200\", \"error\": \"provider overloaded\"}"
    "], \"default\": {\"content\": \"default reply\"}}";

static struct fake f;
static char dir[160];
static int anthropic;

/* A backend for the current provider from config file lines (plus common ones). */
static struct llm_backend *mk(const char *base, const char *lines, int with_key)
{
    char path[256], conf[1024];
    snprintf(path, sizeof path, "%s/test.conf", dir);
    snprintf(conf, sizeof conf, "retries = 2\nbackoff_ms = 5\nbackoff_max_ms = 20\ntimeout_total_ms = 5000\n"
                                "max_tokens = 256\nprice.fake-model.input = 2\nprice.fake-model.output = 8\n%s",
             lines ? lines : "");
    char ebase[160], ekey[64] = "DRQA_API_KEY=" KEY;
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s", base);
    const char *env[] = {ebase, "DRQA_MODEL=fake-model", anthropic ? "DRQA_PROVIDER=anthropic" : "DRQA_PROVIDER=openai",
                         with_key ? ekey : NULL, NULL};
    return fake_backend(path, conf, env);
}

static int ask(struct llm_backend *b, const char *tag, const char *user, struct llm_reply *r, struct llm_usage *u)
{
    struct llm_message m[] = {{"user", user}};
    struct llm_request q;
    llm_request_init(&q);
    q.system = "You are the planner.";
    q.messages = m;
    q.nmessages = 1;
    q.tag = tag;
    return llm_chat(b, &q, r, u);
}

struct canceller {
    atomic_int *flag;
    int before;   /* requests already logged with the tag: the fake's log spans both providers */
};

static void *cancel_when_seen(void *arg)
{
    struct canceller *c = arg;
    for (int i = 0; i < 400 && fake_count(&f, "case:hang cancel") <= c->before; i++) {
        struct timespec ts = {0, 25 * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_store(c->flag, 1);
    return NULL;
}

static void run(const char *pname)
{
    char base[128];
    if (anthropic) snprintf(base, sizeof base, "%s", f.base);
    else snprintf(base, sizeof base, "%s/v1", f.base);
    struct llm_backend *b = mk(base, "json_mode = true\n", 1);
    ok(b != NULL, "%s: backend made", pname);
    if (!b) return;
    struct llm_reply r;
    struct llm_usage u;
    llm_usage_init(&u);
    char tag[64];
#define T(s) (snprintf(tag, sizeof tag, "%s " s, pname), tag)

    /* happy path: request fields and headers */
    struct llm_message m[] = {{"user", "Where is routing done? case:happy"}, {"assistant", "Looking."}, {"user", "go on"}};
    struct llm_request q;
    llm_request_init(&q);
    q.system = "You are the planner.";
    q.messages = m;
    q.nmessages = 3;
    q.temperature = 0;
    q.json_mode = 1;
    q.tag = "planning";
    is_int(llm_chat(b, &q, &r, &u), LLM_OK, "%s: a chat call succeeds", pname);
    is_str(r.text, "{\"action\": \"Finish\"}", "%s: the reply text", pname);
    is_int(r.input_tokens, 11, "%s: input tokens from usage", pname);
    is_int(r.output_tokens, 7, "%s: output tokens from usage", pname);
    is_int(r.tokens_estimated, 0, "%s: not estimated", pname);
    ok(r.cost_usd > 77.9e-6 && r.cost_usd < 78.1e-6, "%s: cost 11*2 + 7*8 per million = 78e-6 USD (%g)", pname, r.cost_usd);
    is_int(r.http_status, 200, "%s: status", pname);
    llm_reply_free(&r);
    cJSON *req = fake_last(&f, "case:happy");
    cJSON *body = fake_body(req);
    is_str(cJSON_GetObjectItem(req, "path")->valuestring, anthropic ? "/v1/messages" : "/v1/chat/completions",
           "%s: the endpoint path", pname);
    is_str(cJSON_GetObjectItem(body, "model")->valuestring, "fake-model", "%s: model", pname);
    ok(cJSON_GetObjectItem(body, "temperature") && cJSON_GetObjectItem(body, "temperature")->valuedouble == 0,
       "%s: temperature 0 sent", pname);
    is_int(cJSON_GetObjectItem(body, "max_tokens")->valueint, 256, "%s: max_tokens from the config", pname);
    cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    if (anthropic) {
        cJSON *sys0 = cJSON_GetArrayItem(cJSON_GetObjectItem(body, "system"), 0);
        is_str(sys0 ? cJSON_GetObjectItem(sys0, "text")->valuestring : "(none)", "You are the planner.",
               "%s: top-level system, one text block", pname);
        cJSON *cc = sys0 ? cJSON_GetObjectItem(sys0, "cache_control") : NULL;
        is_str(cc ? cJSON_GetObjectItem(cc, "type")->valuestring : "(none)", "ephemeral",
               "%s: the system prompt is marked for the prompt cache", pname);
        is_int(cJSON_GetArraySize(msgs), 3, "%s: three messages", pname);
        is_str(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "role")->valuestring, "assistant", "%s: roles kept", pname);
        is_str(fake_header(req, "x-api-key"), KEY, "%s: x-api-key header", pname);
        is_str(fake_header(req, "anthropic-version"), "2023-06-01", "%s: anthropic-version header", pname);
        ok(fake_header(req, "authorization") == NULL, "%s: no Authorization header", pname);
        ok(cJSON_GetObjectItem(body, "response_format") == NULL, "%s: no response_format (not in the API)", pname);
    } else {
        is_int(cJSON_GetArraySize(msgs), 4, "%s: system plus three messages", pname);
        is_str(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "role")->valuestring, "system", "%s: system first", pname);
        is_str(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "content")->valuestring, "You are the planner.",
               "%s: system content", pname);
        is_str(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 3), "content")->valuestring, "go on", "%s: last message", pname);
        is_str(fake_header(req, "authorization"), "Bearer " KEY, "%s: Bearer header", pname);
        cJSON *rf = cJSON_GetObjectItem(body, "response_format");
        const char *rft = rf ? cJSON_GetObjectItem(rf, "type")->valuestring : "(none)";
        is_str(rft, "json_object", "%s: response_format json_object", pname);
    }
    cJSON_Delete(body);
    cJSON_Delete(req);

    /* no usage: estimated from bytes/4 */
    is_int(ask(b, "evaluation", T("case:nousage"), &r, &u), LLM_OK, "%s: a reply without usage", pname);
    size_t inbytes = strlen("You are the planner.") + strlen(tag);
    is_int(r.input_tokens, (long)((inbytes + 3) / 4), "%s: input estimated as bytes/4 rounded up", pname);
    is_int(r.output_tokens, 3, "%s: 12 bytes of output estimate 3 tokens", pname);
    is_int(r.tokens_estimated, 1, "%s: flagged as estimated", pname);
    llm_reply_free(&r);

    /* prose around JSON, truncated output */
    is_int(ask(b, "planning", T("case:prose"), &r, &u), LLM_OK, "%s: prose-wrapped reply", pname);
    char err[256];
    cJSON *j = jsonx_parse_object(r.text, err, sizeof err);
    ok(j && cJSON_GetObjectItem(j, "a") && cJSON_GetObjectItem(j, "a")->valueint == 1, "%s: jsonx finds the object in it", pname);
    cJSON_Delete(j);
    llm_reply_free(&r);
    snprintf(tag, sizeof tag, "case:length-%s", pname);
    is_int(ask(b, "planning", tag, &r, &u), LLM_OK, "%s: a reply cut at the token limit", pname);
    is_int(r.truncated, 1, "%s: is flagged truncated", pname);
    llm_reply_free(&r);
    is_int(ask(b, "planning", T("case:default"), &r, &u), LLM_OK, "%s: a reply that stopped normally", pname);
    is_int(r.truncated, 0, "%s: is not flagged truncated", pname);
    llm_reply_free(&r);

    /* retries and faults */
    is_int(ask(b, "planning", T("case:429"), &r, &u), LLM_OK, "%s: 429 then success", pname);
    is_int(r.attempts, 2, "%s: two attempts", pname);
    is_int(fake_count(&f, tag), 2, "%s: the fake saw two", pname);
    llm_reply_free(&r);
    is_int(ask(b, "planning", T("case:500"), &r, &u), LLM_ERR_STATUS, "%s: 500 fails", pname);
    is_int(fake_count(&f, tag), 3, "%s: after 1 + retries = 3 attempts", pname);
    ok(strstr(r.error, "HTTP 500") && strstr(r.error, "backend exploded"), "%s: error names status and message: %s", pname, r.error);
    is_int(r.http_status, 500, "%s: status kept", pname);
    ok(r.text == NULL, "%s: no text on failure", pname);
    is_int(ask(b, "planning", T("case:malformed"), &r, &u), LLM_ERR_REPLY, "%s: a body that is not JSON", pname);
    ok(strstr(r.error, "is not a JSON object") != NULL, "%s: %s", pname, r.error);
    is_int(fake_count(&f, tag), 1, "%s: a malformed body is not retried", pname);
    is_int(ask(b, "planning", T("case:truncate"), &r, &u), LLM_ERR_CONNECT, "%s: a truncated body", pname);
    is_int(fake_count(&f, tag), 3, "%s: truncation is retried to the bound", pname);
    ok(strstr(r.error, "cut short") != NULL, "%s: %s", pname, r.error);
    is_int(ask(b, "planning", T("case:empty"), &r, &u), LLM_ERR_REPLY, "%s: empty choices", pname);
    ok(strstr(r.error, anthropic ? "has no text content" : "has no choices") != NULL, "%s: %s", pname, r.error);
    is_int(ask(b, "planning", T("case:nullcontent"), &r, &u), LLM_ERR_REPLY, "%s: no content", pname);
    ok(strstr(r.error, anthropic ? "has no text content (stop_reason end_turn)" : "has no message content (finish_reason stop)") != NULL,
       "%s: %s", pname, r.error);
    is_int(ask(b, "planning", T("case:close"), &r, &u), LLM_ERR_CONNECT, "%s: connection closed without reply", pname);
    is_int(fake_count(&f, tag), 3, "%s: retried to the bound", pname);
    is_int(ask(b, "planning", T("case:echo"), &r, &u), LLM_ERR_STATUS, "%s: 401 echoing the key", pname);
    ok(!strstr(r.error, KEY) && strstr(r.error, "[redacted]"), "%s: the key is redacted from the error: %s", pname, r.error);
    is_int(ask(b, "planning", T("case:error200"), &r, &u), LLM_ERR_REPLY, "%s: 200 with an error body", pname);
    ok(strstr(r.error, "answered with an error: provider overloaded") != NULL, "%s: %s", pname, r.error);
    llm_backend_free(b);

    b = mk(base, "max_reply_bytes = 1048576\n", 1);
    is_int(ask(b, "planning", T("case:oversize"), &r, &u), LLM_ERR_TOO_LARGE, "%s: a 10 MB reply over a 1 MiB cap", pname);
    ok(strstr(r.error, "larger than 1048576 bytes") != NULL, "%s: %s", pname, r.error);
    is_int(fake_count(&f, tag), 1, "%s: not retried", pname);
    llm_backend_free(b);

    b = mk(base, "timeout_total_ms = 300\nretries = 1\n", 1);
    is_int(ask(b, "planning", T("case:hang"), &r, &u), LLM_ERR_TIMEOUT, "%s: a hung server times out", pname);
    is_int(fake_count(&f, tag), 2, "%s: retried once (retries = 1)", pname);
    llm_backend_free(b);

    /* cancellation from another thread */
    b = mk(base, "timeout_total_ms = 20000\n", 1);
    atomic_int flag = 0;
    struct canceller c = {&flag, fake_count(&f, "case:hang cancel")};
    pthread_t th;
    pthread_create(&th, NULL, cancel_when_seen, &c);
    struct llm_message cm[] = {{"user", "case:hang cancel"}};
    llm_request_init(&q);
    q.messages = cm;
    q.nmessages = 1;
    q.cancel = &flag;
    is_int(llm_chat(b, &q, &r, &u), LLM_ERR_CANCELLED, "%s: cancelled mid-request", pname);
    pthread_join(th, NULL);
    ok(strstr(r.error, "cancelled") != NULL, "%s: %s", pname, r.error);
    is_int(r.attempts, 1, "%s: not retried", pname);
    llm_backend_free(b);

    /* json_mode off in the config: no response_format even if asked */
    b = mk(base, NULL, 0);
    llm_request_init(&q);
    struct llm_message jm[] = {{"user", T("case:nojson")}};
    q.messages = jm;
    q.nmessages = 1;
    q.json_mode = 1;
    q.max_tokens = 99;
    is_int(llm_chat(b, &q, &r, NULL), LLM_OK, "%s: a call without a key", pname);
    is_str(r.text, "default reply", "%s: the default reply", pname);
    llm_reply_free(&r);
    req = fake_last(&f, tag);
    body = fake_body(req);
    ok(cJSON_GetObjectItem(body, "response_format") == NULL, "%s: no response_format when the config has json_mode off", pname);
    is_int(cJSON_GetObjectItem(body, "max_tokens")->valueint, 99, "%s: the request's max_tokens wins", pname);
    ok(cJSON_GetObjectItem(body, "temperature")->valuedouble == 0.2, "%s: the configured temperature by default", pname);
    ok(!fake_header(req, "authorization") && !fake_header(req, "x-api-key"), "%s: no auth header without a key", pname);
    if (anthropic) ok(cJSON_GetObjectItem(body, "system") == NULL, "%s: no system field without a system prompt", pname);
    else is_int(cJSON_GetArraySize(cJSON_GetObjectItem(body, "messages")), 1, "%s: no system message without a prompt", pname);
    cJSON_Delete(body);
    cJSON_Delete(req);

    /* a bad request is refused before sending */
    struct llm_message bad[] = {{"system", "nope case:badrole"}};
    llm_request_init(&q);
    q.messages = bad;
    q.nmessages = 1;
    is_int(llm_chat(b, &q, &r, NULL), LLM_ERR_REQUEST, "%s: a system role inside messages is refused", pname);
    is_int(fake_count(&f, "case:badrole"), 0, "%s: nothing was sent", pname);
    llm_backend_free(b);

    /* connection refused */
    char refused[96];
    snprintf(refused, sizeof refused, "http://127.0.0.1:%d", fake_closed_port());
    b = mk(refused, NULL, 1);
    is_int(ask(b, "planning", "case:refused", &r, &u), LLM_ERR_CONNECT, "%s: a closed port", pname);
    is_int(r.attempts, 3, "%s: retried to the bound", pname);
    ok(strstr(r.error, "cannot connect to") != NULL, "%s: %s", pname, r.error);
    llm_backend_free(b);

    /* the ledger: ok calls are happy, nousage, prose, length, 429 */
    struct llm_usage_entry e;
    is_int(llm_usage_get(&u, "planning", &e), 0, "%s: planning has an entry", pname);
    is_int(e.calls, 16, "%s: 16 planning calls", pname);
    is_int(e.failures, 11, "%s: 11 of them failed", pname);
    is_int(llm_usage_get(&u, "evaluation", &e), 0, "%s: evaluation has an entry", pname);
    is_int(e.calls, 1, "%s: one evaluation call", pname);
    is_int(e.estimated_calls, 1, "%s: estimated", pname);
    llm_usage_get(&u, NULL, &e);
    is_int(e.calls, 18, "%s: 18 calls in total (one untagged)", pname);
    is_int(llm_usage_get(&u, "other", &e), 0, "%s: an untagged call counts as other", pname);
    llm_usage_destroy(&u);
#undef T
}

static int file_contains(const char *path, const char *needle)
{
    size_t len;
    char *t = read_file(path, 0, &len);
    int r = t && strstr(t, needle) != NULL;
    free(t);
    return r;
}

int main(void)
{
    if (fake_start(&f, script)) {
        ok(0, "the fake server starts");
        return done_testing();
    }
    snprintf(dir, sizeof dir, "%s", f.dir);
    char logpath[200];
    snprintf(logpath, sizeof logpath, "%s/client.log", dir);
    log_open(logpath);
    anthropic = 0;
    run("openai");
    anthropic = 1;
    run("anthropic");
    log_close();

    ok(file_contains(logpath, "llm: "), "calls were logged");
    ok(!file_contains(logpath, KEY), "the key never reached the log");
    cJSON *all = fake_requests(&f), *rq;
    int leaks = 0, auth_seen = 0;
    cJSON_ArrayForEach(rq, all) {
        if (strstr(cJSON_GetObjectItem(rq, "body")->valuestring, KEY)) leaks++;
        cJSON *h;
        cJSON_ArrayForEach(h, cJSON_GetObjectItem(rq, "headers")) {
            if (!strstr(h->valuestring, KEY)) continue;
            if (strcmp(h->string, "authorization") == 0 || strcmp(h->string, "x-api-key") == 0) auth_seen++;
            else leaks++;
        }
    }
    ok(auth_seen > 10, "the key was sent in auth headers (%d requests)", auth_seen);
    is_int(leaks, 0, "the key is in no body and no other header");
    cJSON_Delete(all);

    /* the ledger by itself */
    struct llm_usage a, t;
    llm_usage_init(&a);
    llm_usage_init(&t);
    struct llm_reply r1 = {.text = "x", .input_tokens = 100, .output_tokens = 10, .cost_usd = 0.5};
    struct llm_reply r2 = {.text = "y", .input_tokens = 50, .output_tokens = 5, .tokens_estimated = 1, .cost_usd = -1};
    struct llm_reply r3 = {.text = NULL, .cost_usd = -1};
    llm_usage_add(&a, "perception", &r1);
    llm_usage_add(&a, "perception", &r2);
    llm_usage_add(&a, "evaluation", &r3);
    llm_usage_add_tokens(&a, "embed", 40, 0, 0, -1);
    llm_usage_merge(&t, &a);
    llm_usage_merge(&t, &a);
    struct llm_usage_entry e;
    llm_usage_get(&t, NULL, &e);
    is_int(e.calls, 8, "merged twice: 8 calls");
    is_int(e.input_tokens, 380, "input tokens add up");
    is_int(e.output_tokens, 30, "output tokens add up");
    is_int(e.failures, 2, "failures add up");
    is_int(e.estimated_calls, 2, "estimated calls add up");
    is_int(e.unpriced_calls, 4, "unpriced calls add up");
    ok(e.cost_usd == 1.0, "cost adds up (%g)", e.cost_usd);
    is_int(llm_usage_get(&t, "planning", &e), -1, "an unused tag has no entry");
    cJSON *uj = llm_usage_json(&a);
    char *us = cJSON_PrintUnformatted(uj);
    ok(strstr(us, "\"perception\":{\"calls\":2,\"failures\":0,\"input_tokens\":150,\"cached_input_tokens\":0,"
                  "\"output_tokens\":15,\"reasoning_tokens\":0,\"estimated_calls\":1,\"unpriced_calls\":1,"
                  "\"cost_usd\":0.5}") != NULL, "usage JSON: %s", us);
    ok(strstr(us, "\"evaluation\":{\"calls\":1,\"failures\":1,\"input_tokens\":0,\"cached_input_tokens\":0,"
                  "\"output_tokens\":0,\"reasoning_tokens\":0,\"estimated_calls\":0,\"unpriced_calls\":0,"
                  "\"cost_usd\":null}") != NULL, "no cost when nothing was priced");
    free(us);
    cJSON_Delete(uj);
    for (int i = 0; i < 40; i++) {
        char tg[16];
        snprintf(tg, sizeof tg, "t%d", i);
        llm_usage_add(&a, tg, &r1);
    }
    is_int(a.ntags, LLM_USAGE_MAX_TAGS, "tags beyond the table's size");
    is_int(llm_usage_get(&a, "other", &e), 0, "... go to 'other'");
    is_int(e.calls, 40 - (LLM_USAGE_MAX_TAGS - 1 - 3), "every overflow call is counted there");
    llm_usage_destroy(&a);
    llm_usage_destroy(&t);
    llm_usage_destroy(NULL);

    struct drqa_config none;
    const char *env[] = {NULL};
    char err[256];
    config_load_env(&none, NULL, env, err, sizeof err);
    ok(llm_backend_new(&none, err, sizeof err) == NULL && strstr(err, "no chat model is configured"),
       "no model: no backend: %s", err);
    config_free(&none);
    llm_backend_free(NULL);

    fake_stop(&f);
    return done_testing();
}
