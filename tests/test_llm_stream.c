/* Tests for streamed replies. Unit: each API's recorded event stream, fed
 * into its assembler whole and cut at every split point, rebuilds the same
 * reply document and hands the same pieces (think tags split across pieces
 * taken out, a bare </think>, tool input as the text); a stop, a malformed
 * event, a stream cut short. Through the loopback fake (tests/fake_llm.py)
 * for both providers: pieces joined are the reply; the usage the server
 * reported is the ledger's, or estimated and marked when the stream has
 * none; a disconnect mid-stream and a stalled stream (the idle limit) are
 * sent again, the reader told to reset first and the final text without
 * duplicate pieces; a malformed event and an error event after partial
 * content fail the call and record nothing as complete; a stop from the
 * reader keeps the partial text marked as stopped; a server that ignores
 * "stream" and one that streams unasked; refusals of stream_options and of
 * stream handled by the one adjustment. */
#include "tap.h"
#include "fake_llm.h"
#include "llm_config.h"
#include "llm.h"
#include "llm_stream.h"
#include "fake_backend.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---- a reader that records what it is handed ---- */
struct rec {
    struct buf text, reasoning;
    int resets, pieces, stop_after;   /* stop_after: stop at that many text pieces (0: never) */
};

static int rec_delta(void *ud, enum llm_delta_kind kind, const char *t, size_t n)
{
    struct rec *r = ud;
    if (kind == LLM_DELTA_RESET) {
        r->resets++;
        buf_reset(&r->text);
        buf_reset(&r->reasoning);
        return 0;
    }
    buf_add(kind == LLM_DELTA_TEXT ? &r->text : &r->reasoning, t, n);
    if (kind == LLM_DELTA_TEXT) r->pieces++;
    return r->stop_after && r->pieces >= r->stop_after;
}

static void rec_free(struct rec *r)
{
    buf_free(&r->text);
    buf_free(&r->reasoning);
    memset(r, 0, sizeof *r);
}

/* ---- unit: recorded streams ---- */

static const char chat_stream[] =
    "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    ": a comment\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"weigh \"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"<thi\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"nk>draft</th\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ink>\\n\\nThe answer\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" is 42.\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7}}\n\n"
    "data: [DONE]\n\n";

static const char messages_stream[] =
    "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\r\n\r\n"
    "event: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n"
    "event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\r\n\r\n"
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"let me see\"}}\r\n\r\n"
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n"
    "event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n"
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\r\n\r\n"
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\" world\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n"
    "event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"reply\",\"input\":{}}}\r\n\r\n"
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"action\\\": \"}}\r\n\r\n"
    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Finish\\\"}\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":2}\r\n\r\n"
    "event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":33}}\r\n\r\n"
    "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";

static const char responses_stream[] =
    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\",\"status\":\"in_progress\",\"output\":[],\"error\":null}}\n\n"
    "event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"think\"}\n\n"
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Fine\"}\n\n"
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" answer\"}\n\n"
    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"status\":\"completed\",\"error\":null,"
    "\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"Fine answer\"}]}],"
    "\"usage\":{\"input_tokens\":9,\"output_tokens\":4}}}\n\n";

static const cJSON schema_any;   /* only its address: a request with a schema */

/* The assembler of an API, as its backend hands it to llm_http_exchange. */
static const struct llm_stream_api *api_of(enum llm_wire w)
{
    return w == LLM_WIRE_CHAT ? &llm_stream_chat_api
         : w == LLM_WIRE_MESSAGES ? &llm_stream_messages_api : &llm_stream_responses_api;
}

/* Feeds text cut at `cut`, returns the printed document ("" when none), and the pieces in rec. */
static char *assemble(enum llm_wire w, const char *text, size_t cut, int with_schema, struct rec *rc, int *fed)
{
    struct llm_request req;
    llm_request_init(&req);
    req.on_delta = rec_delta;
    req.delta_ud = rc;
    if (with_schema) req.schema = &schema_any;
    struct llm_stream *s = llm_stream_new(api_of(w), &req);
    size_t n = strlen(text);
    *fed = llm_stream_feed(s, text, cut) | llm_stream_feed(s, text + cut, n - cut);
    cJSON *doc = api_of(w)->doc(s);
    char *out = doc ? cJSON_PrintUnformatted(doc) : xstrdup("");
    cJSON_Delete(doc);
    llm_stream_free(s);
    return out;
}

static void every_split(const char *name, enum llm_wire w, const char *text, int with_schema, const char *want_text,
                        const char *want_reasoning, const char *const *doc_has)
{
    struct rec r0 = {0};
    int fed;
    char *whole = assemble(w, text, strlen(text), with_schema, &r0, &fed);
    is_int(fed, 0, "%s: the stream is read", name);
    for (size_t i = 0; doc_has[i]; i++)
        ok(strstr(whole, doc_has[i]) != NULL, "%s: the document holds %s", name, doc_has[i]);
    is_str(buf_str(&r0.text), want_text, "%s: the text pieces", name);
    is_str(buf_str(&r0.reasoning), want_reasoning, "%s: the reasoning pieces", name);
    int bad = 0;
    for (size_t cut = 0; cut <= strlen(text); cut++) {
        struct rec r = {0};
        char *got = assemble(w, text, cut, with_schema, &r, &fed);
        if (strcmp(got, whole) || strcmp(buf_str(&r.text), want_text) || strcmp(buf_str(&r.reasoning), want_reasoning))
            bad++;
        free(got);
        rec_free(&r);
    }
    is_int(bad, 0, "%s: every split point gives the same document and pieces", name);
    free(whole);
    rec_free(&r0);
}

static void unit(void)
{
    static const char *const chat_has[] = {"\"content\":\"<think>draft</think>\\n\\nThe answer is 42.\"",
                                           "\"reasoning_content\":\"weigh \"", "\"finish_reason\":\"stop\"",
                                           "\"usage\":{\"prompt_tokens\":11", "\"id\":\"c1\"", NULL};
    every_split("chat", LLM_WIRE_CHAT, chat_stream, 0, "The answer is 42.", "weigh draft", chat_has);
    static const char *const msg_has[] = {"{\"type\":\"thinking\",\"thinking\":\"let me see\",\"signature\":\"sig\"}",
                                          "{\"type\":\"text\",\"text\":\"Hello world\"}",
                                          "\"input\":{\"action\":\"Finish\"}", "\"stop_reason\":\"tool_use\"",
                                          "\"input_tokens\":20", "\"cache_read_input_tokens\":5",
                                          "\"output_tokens\":33", NULL};
    every_split("messages", LLM_WIRE_MESSAGES, messages_stream, 0, "Hello world", "let me see", msg_has);
    every_split("messages, tool input as the reply", LLM_WIRE_MESSAGES, messages_stream, 1, "{\"action\": \"Finish\"}",
                "let me see", msg_has);
    static const char *const resp_has[] = {"\"status\":\"completed\"", "\"text\":\"Fine answer\"",
                                           "\"input_tokens\":9", NULL};
    every_split("responses", LLM_WIRE_RESPONSES, responses_stream, 0, "Fine answer", "think", resp_has);

    /* the chat template opened the block: a bare </think> ends reasoning handed as text */
    const char *bare = "data: {\"choices\":[{\"delta\":{\"content\":\"plan it\"}}]}\n\n"
                       "data: {\"choices\":[{\"delta\":{\"content\":\" out</think>Done.\"}}]}\n\n"
                       "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    static const char *const bare_has[] = {"\"content\":\"plan it out</think>Done.\"", NULL};
    every_split("a bare </think>", LLM_WIRE_CHAT, bare, 0, "Done.", "plan it out", bare_has);

    struct rec r = {.stop_after = 2};
    int fed;
    char *d = assemble(LLM_WIRE_CHAT, chat_stream, strlen(chat_stream), 0, &r, &fed);
    ok(fed != 0, "a stop from the reader stops the stream");
    is_str(buf_str(&r.text), "The answer is 42.", "no piece after the stop");
    free(d);
    rec_free(&r);

    const char *bad = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {not json\n\n"
                      "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n";
    d = assemble(LLM_WIRE_CHAT, bad, 3, 0, &r, &fed);
    ok(fed != 0 && !*d, "a malformed event stops the stream, no document");
    free(d);
    rec_free(&r);
    d = assemble(LLM_WIRE_CHAT, chat_stream, 0, 0, &r, &fed);
    free(d);
    rec_free(&r);
    const char *cut = "data: {\"choices\":[{\"delta\":{\"content\":\"half an\"}}]}\n\n";
    d = assemble(LLM_WIRE_CHAT, cut, 5, 0, &r, &fed);
    is_str(d, "", "a stream without its end gives no document");
    free(d);
    rec_free(&r);
    d = assemble(LLM_WIRE_MESSAGES, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"
                 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                 "{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\","
                 "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"partial\"}}\n\nevent: error\ndata: {\"type\":"
                 "\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", 40, 0, &r, &fed);
    ok(strstr(d, "\"type\":\"error\"") && strstr(d, "overloaded_error"), "an error event after text: an error document");
    free(d);
    rec_free(&r);

    /* the Responses API's other ends: incomplete (at the limit), failed, an error event */
    d = assemble(LLM_WIRE_RESPONSES, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
                 "\"delta\":\"cut\"}\n\nevent: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":"
                 "{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[]}}\n\n",
                 9, 0, &r, &fed);
    ok(strstr(d, "\"status\":\"incomplete\"") && strstr(d, "\"text\":\"cut\""),
       "response.incomplete ends the stream, its output rebuilt from the deltas: %s", d);
    free(d);
    rec_free(&r);
    d = assemble(LLM_WIRE_RESPONSES, "data: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\","
                 "\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n", 7, 0, &r, &fed);
    ok(!strncmp(d, "{\"error\":", 9) && strstr(d, "boom"), "response.failed: an error document: %s", d);
    free(d);
    rec_free(&r);
    d = assemble(LLM_WIRE_RESPONSES, "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit\",\"message\":"
                 "\"slow down\"}\n\n", 20, 0, &r, &fed);
    ok(!strncmp(d, "{\"error\":", 9) && strstr(d, "slow down"), "an error event: an error document: %s", d);
    free(d);
    rec_free(&r);
}

/* ---- through the fake server ---- */

#define KEY "sk-stream-Qx81SECRETkey"

static const char *script =
    "{\"rules\": ["
    " {\"match\": \"case:plain\", \"content\": \"The quick brown fox jumps over the lazy dog.\", \"reasoning\": \"first think\","
    "  \"usage\": {\"input\": 31, \"output\": 17}},"
    " {\"match\": \"case:nousage\", \"content\": \"twelve bytes\", \"usage\": null},"
    " {\"match\": \"case:echo\", \"content\": \"your key sk-stream-Qx81SECRETkey is here\"},"
    " {\"match\": \"case:disconnect\", \"endpoint\": \"chat\", \"times\": 2, \"stream_fault\": \"disconnect\", \"content\": \"one two three four five six\"},"
    " {\"match\": \"case:disconnect\", \"endpoint\": \"messages\", \"times\": 2, \"stream_fault\": \"disconnect\", \"content\": \"one two three four five six\"},"
    " {\"match\": \"case:disconnect\", \"content\": \"one two three four five six\"},"
    " {\"match\": \"case:stall\", \"endpoint\": \"chat\", \"times\": 2, \"stream_fault\": \"stall\", \"hang_s\": 20, \"content\": \"alpha beta gamma delta\"},"
    " {\"match\": \"case:stall\", \"endpoint\": \"messages\", \"times\": 2, \"stream_fault\": \"stall\", \"hang_s\": 20, \"content\": \"alpha beta gamma delta\"},"
    " {\"match\": \"case:stall\", \"content\": \"alpha beta gamma delta\"},"
    " {\"match\": \"case:malformed\", \"stream_fault\": \"malformed\", \"content\": \"a b c d e f g h\"},"
    " {\"match\": \"case:errevent\", \"stream_fault\": \"error_event\", \"content\": \"a b c d e f g h\"},"
    " {\"match\": \"case:endearly\", \"stream_fault\": \"end_early\", \"content\": \"a b c d e f g h\"},"
    " {\"match\": \"case:stop\", \"content\": \"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10\", \"token_delay_ms\": 5},"
    " {\"match\": \"case:whole\", \"stream\": false, \"content\": \"a whole reply\"},"
    " {\"match\": \"case:always\", \"stream\": \"always\", \"content\": \"streamed unasked\"},"
    " {\"match\": \"case:no-options\", \"body_has\": \"stream_options\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Unrecognized request argument supplied: stream_options\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": null}}},"
    " {\"match\": \"case:no-options\", \"content\": \"without options\"},"
    " {\"match\": \"case:no-stream\", \"body_has\": \"\\\"stream\\\"\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Unsupported parameter: 'stream' is not supported with this model.\", \"type\": \"invalid_request_error\", \"param\": \"stream\", \"code\": \"unsupported_parameter\"}}},"
    " {\"match\": \"case:no-stream\", \"content\": \"whole after refusal\"},"
    " {\"match\": \"case:tool\", \"tool_input\": {\"action\": \"Finish\", \"args\": {}}, \"reasoning\": \"thought\"}"
    "], \"default\": {\"content\": \"default reply\"}}";

static struct fake f;
static char dir[256];
static int anthropic;

static struct llm_backend *mk(const char *lines)
{
    char path[128], conf[512], ebase[160];
    snprintf(path, sizeof path, "%s/test.conf", dir);
    snprintf(conf, sizeof conf, "retries = 2\nbackoff_ms = 5\nbackoff_max_ms = 20\ntimeout_idle_ms = 300\n%s",
             lines ? lines : "");
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s%s", f.base, anthropic ? "" : "/v1");
    const char *env[] = {ebase, "DRQA_MODEL=fake-model", anthropic ? "DRQA_PROVIDER=anthropic" : "DRQA_PROVIDER=openai",
                         "DRQA_API_KEY=" KEY, NULL};
    return fake_backend(path, conf, env);
}

static int ask(struct llm_backend *b, const char *user, struct rec *rc, int with_schema, struct llm_reply *r,
               struct llm_usage *u)
{
    static cJSON *schema;
    if (!schema) schema = cJSON_Parse("{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\"}}}");
    struct llm_message m[] = {{"user", user}};
    struct llm_request q;
    llm_request_init(&q);
    q.messages = m;
    q.nmessages = 1;
    q.tag = "answer";
    q.on_delta = rec_delta;
    q.delta_ud = rc;
    if (with_schema) {
        q.schema = schema;
        q.schema_name = "reply";
    }
    memset(r, 0, sizeof *r);
    return llm_chat(b, &q, r, u);
}

static void served(const char *pname)
{
    struct llm_backend *b = mk(NULL);
    struct llm_usage u;
    llm_usage_init(&u);
    struct llm_reply r;
    struct rec rc = {0};
    char tag[64];

    is_int(ask(b, "case:plain", &rc, 0, &r, &u), LLM_OK, "%s: a streamed reply", pname);
    ok(r.streamed, "%s: read as a stream", pname);
    is_str(r.text, "The quick brown fox jumps over the lazy dog.", "%s: the reply text", pname);
    is_str(buf_str(&rc.text), r.text, "%s: the pieces joined are the text", pname);
    ok(rc.pieces > 3, "%s: in several pieces (%d)", pname, rc.pieces);
    is_str(buf_str(&rc.reasoning), "first think", "%s: the reasoning came as reasoning pieces", pname);
    is_int(r.input_tokens, 31, "%s: input tokens from the stream's usage", pname);
    is_int(r.output_tokens, 17, "%s: output tokens from the stream's usage", pname);
    ok(!r.tokens_estimated, "%s: not estimated", pname);
    snprintf(tag, sizeof tag, "case:plain");
    cJSON *req = fake_last(&f, tag), *body = fake_body(req);
    ok(cJSON_IsTrue(cJSON_GetObjectItem(body, "stream")), "%s: the request asked for a stream", pname);
    ok(anthropic || cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(body, "stream_options"), "include_usage")),
       "%s: and for the usage in it", pname);
    cJSON_Delete(body);
    cJSON_Delete(req);
    llm_reply_free(&r);
    rec_free(&rc);

    /* a key the server echoes, cut across pieces (about 12 bytes each) */
    is_int(ask(b, "case:echo", &rc, 0, &r, &u), LLM_OK, "%s: a reply echoing the key", pname);
    ok(rc.pieces > 1 && !strstr(buf_str(&rc.text), "Qx81") && !strstr(buf_str(&rc.text), "sk-stream-Q"),
       "%s: no piece the reader got holds any of the key: '%s'", pname, buf_str(&rc.text));
    is_str(buf_str(&rc.text), r.text, "%s: the pieces joined are the reply as redacted", pname);
    ok(r.text && strstr(r.text, "[redacted]"), "%s: which names the key redacted", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    is_int(ask(b, "case:nousage", &rc, 0, &r, &u), LLM_OK, "%s: a stream without usage", pname);
    ok(r.tokens_estimated, "%s: its tokens are estimated and marked", pname);
    is_int(r.output_tokens, 3, "%s: output estimated from the text (12 bytes)", pname);
    llm_reply_free(&r);
    rec_free(&rc);
    struct llm_usage_entry e;
    llm_usage_get(&u, "answer", &e);
    is_int(e.input_tokens - 31 >= 0 ? 31 : -1, 31, "%s: the ledger holds the server's input count", pname);
    is_int(e.estimated_calls, 1, "%s: the ledger marks the estimated call", pname);

    int before = fake_count(&f, "case:disconnect");
    is_int(ask(b, "case:disconnect", &rc, 0, &r, &u), LLM_OK, "%s: a disconnect mid-stream, sent again", pname);
    is_int(fake_count(&f, "case:disconnect") - before, 3, "%s: two cut streams, then a whole one", pname);
    is_int(rc.resets, 2, "%s: the reader was told to reset before each resend", pname);
    is_str(buf_str(&rc.text), "one two three four five six", "%s: no piece twice", pname);
    is_str(r.text, "one two three four five six", "%s: the text is the last stream's", pname);
    is_int(r.attempts, 3, "%s: three attempts", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    before = fake_count(&f, "case:stall");
    is_int(ask(b, "case:stall", &rc, 0, &r, &u), LLM_OK, "%s: a stalled stream, given up at the idle limit and sent again",
           pname);
    is_int(fake_count(&f, "case:stall") - before, 3, "%s: two stalls, then a whole stream", pname);
    is_str(buf_str(&rc.text), "alpha beta gamma delta", "%s: no piece twice after stalls", pname);
    ok(rc.resets >= 1, "%s: reset seen (%d)", pname, rc.resets);
    llm_reply_free(&r);
    rec_free(&rc);

    long fails = 0;
    llm_usage_get(&u, "answer", &e);
    fails = e.failures;
    is_int(ask(b, "case:malformed", &rc, 0, &r, &u), LLM_ERR_REPLY, "%s: a malformed event fails the call", pname);
    ok(strstr(r.error, "not a JSON object") != NULL, "%s: %s", pname, r.error);
    is_str(llm_fail_name(r.fail), "bad_reply", "%s: kind bad_reply", pname);
    ok(r.text == NULL && rc.text.len == 0 && rc.resets == 1, "%s: nothing kept, the reader reset", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    is_int(ask(b, "case:errevent", &rc, 0, &r, &u), LLM_ERR_REPLY, "%s: an error event after partial text fails",
           pname);
    ok(strstr(r.error, anthropic ? "Overloaded" : "had an error") != NULL, "%s: the provider's message: %s", pname,
       r.error);
    ok(r.text == NULL && rc.text.len == 0 && rc.resets == 1, "%s: the partial text is voided", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    is_int(ask(b, "case:endearly", &rc, 0, &r, &u), LLM_ERR_CONNECT, "%s: a stream that ends before its end fails",
           pname);
    ok(strstr(r.error, "ended before the reply did") != NULL, "%s: %s", pname, r.error);
    ok(r.text == NULL && rc.resets == 1, "%s: never taken for a complete reply", pname);
    llm_reply_free(&r);
    rec_free(&rc);
    llm_usage_get(&u, "answer", &e);
    is_int(e.failures - fails, 3, "%s: the ledger counts the three as failed calls", pname);

    rc.stop_after = 3;
    is_int(ask(b, "case:stop", &rc, 0, &r, &u), LLM_ERR_CANCELLED, "%s: the reader stops the reply", pname);
    ok(r.stopped && r.fail == LLM_FAIL_CANCELLED, "%s: marked stopped, kind cancelled", pname);
    is_str(r.text, "w1 w2 w3", "%s: the text that had arrived is kept", pname);
    ok(r.tokens_estimated, "%s: its tokens estimated", pname);
    is_int(rc.resets, 0, "%s: the reader keeps its pieces", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    is_int(ask(b, "case:whole", &rc, 0, &r, &u), LLM_OK, "%s: a server that ignores stream answers whole", pname);
    ok(!r.streamed, "%s: read as a whole reply", pname);
    is_int(rc.pieces, 1, "%s: its text in one piece", pname);
    is_str(buf_str(&rc.text), "a whole reply", "%s: that piece is the text", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    if (anthropic) {
        is_int(ask(b, "case:tool", &rc, 1, &r, &u), LLM_OK, "%s: tool input streamed", pname);
        is_str(r.text, "{\"action\":\"Finish\",\"args\":{}}", "%s: the tool input is the reply", pname);
        is_str(buf_str(&rc.text), "{\"action\": \"Finish\", \"args\": {}}", "%s: its JSON came as the text", pname);
        is_str(buf_str(&rc.reasoning), "thought", "%s: the thinking as reasoning", pname);
        llm_reply_free(&r);
        rec_free(&rc);
    }
    if (!anthropic) {
        is_int(ask(b, "case:no-options", &rc, 0, &r, &u), LLM_OK, "%s: stream_options refused, then dropped", pname);
        ok(r.streamed, "%s: still streamed", pname);
        req = fake_last(&f, "case:no-options");
        body = fake_body(req);
        ok(!cJSON_GetObjectItem(body, "stream_options") && cJSON_IsTrue(cJSON_GetObjectItem(body, "stream")),
           "%s: the resend has stream and no stream_options", pname);
        cJSON_Delete(body);
        cJSON_Delete(req);
        llm_reply_free(&r);
        rec_free(&rc);
    }
    is_int(ask(b, "case:no-stream", &rc, 0, &r, &u), LLM_OK, "%s: stream refused, then whole replies", pname);
    ok(!r.streamed, "%s: read whole", pname);
    is_str(buf_str(&rc.text), "whole after refusal", "%s: its text in one piece", pname);
    llm_reply_free(&r);
    rec_free(&rc);
    is_int(ask(b, "case:plain", &rc, 0, &r, &u), LLM_OK, "%s: the next call", pname);
    ok(!r.streamed, "%s: stays whole for the rest of the run", pname);
    llm_reply_free(&r);
    rec_free(&rc);

    llm_backend_free(b);

    b = mk("stream = false\n");
    is_int(ask(b, "case:always", &rc, 0, &r, &u), LLM_OK, "%s: a server that streams unasked is read", pname);
    is_str(r.text, "streamed unasked", "%s: its text", pname);
    ok(r.streamed, "%s: as a stream", pname);
    req = fake_last(&f, "case:always");
    body = fake_body(req);
    ok(!cJSON_GetObjectItem(body, "stream"), "%s: stream = false asks for none", pname);
    cJSON_Delete(body);
    cJSON_Delete(req);
    llm_reply_free(&r);
    rec_free(&rc);
    llm_backend_free(b);
    llm_usage_destroy(&u);
}

int main(void)
{
    unit();
    if (fake_start(&f, script)) {
        ok(0, "the fake server starts");
        return done_testing();
    }
    snprintf(dir, sizeof dir, "%s", f.dir);
    served("openai");
    anthropic = 1;
    served("anthropic");
    fake_stop(&f);
    return done_testing();
}
