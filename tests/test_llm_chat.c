/* Tests for the chat backends (OpenAI-compatible and Anthropic) against the
 * loopback fake: the request each sends (body fields, headers), replies and
 * every fault the fake injects, token accounting from usage and estimated,
 * cancellation, the usage ledger, and the key kept out of logs, errors and
 * request bodies. Each scenario runs once per provider. */
#include "tap.h"
#include "fake_llm.h"
#include "llm_config.h"
#include "jsonx.h"
#include "llm.h"
#include "fake_backend.h"
#include "harness.h"
#include "util.h"

#include <math.h>
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
    " {\"match\": \"case:window-anthropic\", \"content\": \"{\\\"a\\\": \", \"finish\": \"model_context_window_exceeded\"},"
    " {\"match\": \"case:stopped-anthropic\", \"content\": \"Hello..\", \"finish\": \"refusal\","
    "  \"stop_details\": {\"type\": \"refusal\", \"category\": \"cyber\", \"explanation\": \"declined here\"}},"
    " {\"match\": \"case:stopped-openai\", \"content\": \"Hello..\", \"finish\": \"content_filter\"},"
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

/* The second server: documented refusals and replies of real model families. */
static const char *script2 =
    "{\"rules\": ["
    /* refusals of the current model generation (llm_profile.c's sources) */
    " {\"match\": \"case:temp-deprecated\", \"body_has\": \"\\\"temperature\\\"\", \"status\": 400, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": \"`temperature` is deprecated for this model.\"}}},"
    " {\"match\": \"case:temp-deprecated\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:claude5-temp\", \"body_has\": \"\\\"temperature\\\"\", \"status\": 400, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": \"`temperature` may only be set to 1 when thinking is enabled or in adaptive mode\"}}},"
    " {\"match\": \"case:claude5-temp\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:forced-tool\", \"body_has\": \"\\\"tool_choice\\\"\", \"status\": 400, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": \"Thinking may not be enabled when `tool_choice` forces tool use.\"}}},"
    " {\"match\": \"case:forced-tool\", \"tool_input\": {\"action\": \"Finish\", \"args\": {}}},"
    " {\"match\": \"case:sysrole\", \"body_has\": \"\\\"role\\\":\\\"system\\\"\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Unsupported value: 'messages[0].role' does not support 'system' with this model.\", \"type\": \"invalid_request_error\", \"param\": \"messages[0].role\", \"code\": \"unsupported_value\"}}},"
    " {\"match\": \"case:sysrole\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:gemma-sys\", \"body_has\": \"\\\"role\\\":\\\"system\\\"\", \"status\": 400, \"error_body\": {\"object\": \"error\", \"message\": \"System role not supported\", \"type\": \"BadRequestError\", \"param\": null, \"code\": 400}},"
    " {\"match\": \"case:gemma-sys\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:strict-vllm\", \"body_has\": \"\\\"reasoning_effort\\\"\", \"status\": 400, \"error_body\": {\"object\": \"error\", \"message\": \"[{'type': 'extra_forbidden', 'loc': ('body', 'reasoning_effort'), 'msg': 'Extra inputs are not permitted', 'input': 'low'}]\", \"type\": \"BadRequestError\", \"param\": null, \"code\": 400}},"
    " {\"match\": \"case:strict-vllm\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:strict-azure\", \"body_has\": \"\\\"max_completion_tokens\\\"\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Unrecognized request argument supplied: max_completion_tokens\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": null}}},"
    " {\"match\": \"case:strict-azure\", \"body_has\": \"\\\"reasoning_effort\\\"\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Unrecognized request argument supplied: reasoning_effort\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": null}}},"
    " {\"match\": \"case:strict-azure\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:or-cost\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\", \"usage\": {\"input\": 1000, \"output\": 100, \"cost\": 0.00123}},"
    " {\"match\": \"case:adj\", \"body_has\": \"\\\"max_tokens\\\"\", \"status\": 400, \"error_body\": {\"error\": {"
    "\"message\": \"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\","
    "\"type\": \"invalid_request_error\", \"param\": \"max_tokens\", \"code\": \"unsupported_parameter\"}}},"
    " {\"match\": \"case:adj\", \"body_has\": \"\\\"temperature\\\"\", \"status\": 400, \"error_body\": {\"error\": {"
    "\"message\": \"Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1) value is supported.\","
    "\"type\": \"invalid_request_error\", \"param\": \"temperature\", \"code\": \"unsupported_value\"}}},"
    " {\"match\": \"case:adj\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:schema-refused\", \"body_has\": \"json_schema\", \"status\": 400, \"error_body\": {\"error\": {"
    "\"message\": \"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.\","
    "\"type\": \"invalid_request_error\", \"param\": \"response_format\", \"code\": null}}},"
    " {\"match\": \"case:schema-refused\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:tools-refused\", \"body_has\": \"\\\"tools\\\"\", \"status\": 400, \"error_body\": {\"type\": \"error\","
    "\"error\": {\"type\": \"invalid_request_error\", \"message\": \"tools: Extra inputs are not permitted\"}}},"
    " {\"match\": \"case:tools-refused\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:stuck\", \"body_has\": \"max_\", \"status\": 400, \"error_body\": {\"error\": {"
    "\"message\": \"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\","
    "\"type\": \"invalid_request_error\", \"param\": \"max_tokens\", \"code\": \"unsupported_parameter\"}}},"
    " {\"match\": \"case:ctx-openai\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"This model's maximum context length is "
    "128000 tokens. However, your messages resulted in 130517 tokens. Please reduce the length of the messages.\","
    "\"type\": \"invalid_request_error\", \"param\": \"messages\", \"code\": \"context_length_exceeded\"}}},"
    " {\"match\": \"case:ctx-vllm\", \"status\": 400, \"error_body\": {\"object\": \"error\", \"message\": \"This model's maximum context "
    "length is 32768 tokens. However, you requested 40960 tokens (24576 in the messages, 16384 in the completion). Please reduce the "
    "length of the messages or completion.\", \"type\": \"BadRequestError\", \"param\": null, \"code\": 400}},"
    " {\"match\": \"case:ctx-llamacpp\", \"status\": 400, \"error_body\": {\"error\": {\"code\": 400, \"message\": \"the request exceeds "
    "the available context size, try increasing it\", \"type\": \"exceed_context_size_error\", \"n_prompt_tokens\": 5012, \"n_ctx\": 4096}}},"
    " {\"match\": \"case:xgrammar\", \"body_has\": \"response_format\", \"status\": 400, \"error_body\": {\"object\": \"error\", "
    "\"message\": \"The provided JSON schema contains features not supported by xgrammar.\", \"type\": \"BadRequestError\", "
    "\"param\": null, \"code\": 400}},"
    " {\"match\": \"case:xgrammar\", \"content\": \"{\\\"value\\\": 70}\"},"
    " {\"match\": \"case:lms-new\", \"body_has\": \"json_object\", \"status\": 400, \"error_body\": {\"error\": "
    "\"'response_format.type' must be 'json_schema' or 'text'\"}},"
    " {\"match\": \"case:lms-new\", \"content\": \"{\\\"value\\\": 74}\"},"
    " {\"match\": \"case:lms-old\", \"body_has\": \"json_object\", \"status\": 400, \"error_body\": {\"error\": "
    "\"'response_format.type' must be 'json_schema'\"}},"
    " {\"match\": \"case:lms-old\", \"content\": \"{\\\"value\\\": 75}\"},"
    " {\"match\": \"case:deepseek-rf\", \"body_has\": \"json_schema\", \"status\": 400, \"error_body\": {\"error\": "
    "{\"message\": \"This response_format type is unavailable now\", \"type\": \"invalid_request_error\", \"param\": null, "
    "\"code\": \"invalid_request_error\"}}},"
    " {\"match\": \"case:deepseek-rf\", \"content\": \"{\\\"value\\\": 76}\"},"
    " {\"match\": \"case:dashscope\", \"body_has\": \"enable_thinking\", \"content\": \"{\\\"value\\\": 71}\"},"
    " {\"match\": \"case:dashscope\", \"status\": 400, \"error_body\": {\"error\": {\"code\": \"invalid_parameter_error\", "
    "\"param\": null, \"message\": \"parameter.enable_thinking must be set to false for non-streaming calls\", \"type\": "
    "\"invalid_request_error\"}}},"
    " {\"match\": \"case:dashscope-zh\", \"body_has\": \"enable_thinking\", \"content\": \"{\\\"value\\\": 73}\"},"
    " {\"match\": \"case:dashscope-zh\", \"status\": 400, \"error_body\": {\"error\": {\"code\": \"invalid_parameter_error\", "
    "\"param\": null, \"message\": \"parameter.enable_thinking必须设置为false才能进行非流式调用\", \"type\": "
    "\"invalid_request_error\"}}},"
    " {\"match\": \"case:modelscope\", \"body_has\": \"enable_thinking\", \"content\": \"{\\\"value\\\": 72}\"},"
    " {\"match\": \"case:modelscope\", \"status\": 400, \"error_body\": {\"error\": {\"code\": \"invalid_parameter_error\", "
    "\"message\": \"enable thinking can not be support when `stream=False`.\", \"type\": \"invalid_request_error\"}}},"
    " {\"match\": \"case:fit-vllm \", \"max_model_len\": 1500, \"context_style\": \"vllm\", \"content\": \"{}\"},"
    " {\"match\": \"case:fit-vllm-old\", \"max_model_len\": 1500, \"context_style\": \"vllm-old\", \"content\": \"{}\"},"
    " {\"match\": \"case:fit-anthropic\", \"max_model_len\": 1500, \"context_style\": \"anthropic\", \"content\": \"{}\"},"
    " {\"match\": \"case:fit-tgi\", \"max_model_len\": 1500, \"context_style\": \"tgi\", \"content\": \"{}\"},"
    " {\"match\": \"case:cap-openai \", \"max_output\": 16384, \"output_style\": \"openai\", \"content\": \"{}\"},"
    " {\"match\": \"case:cap-openai-mct\", \"max_output\": 100000, \"output_style\": \"openai\", \"content\": \"{}\"},"
    " {\"match\": \"case:cap-anthropic\", \"max_output\": 32000, \"output_style\": \"anthropic\", \"content\": \"{}\"},"
    " {\"match\": \"case:cap-deepseek\", \"max_output\": 8192, \"output_style\": \"deepseek\", \"content\": \"{}\"},"
    " {\"match\": \"case:cap-groq\", \"max_output\": 8192, \"output_style\": \"groq\", \"content\": \"{}\"},"
    " {\"match\": \"case:cap-tgi\", \"max_output\": 2048, \"output_style\": \"tgi\", \"content\": \"{}\"},"
    " {\"match\": \"case:ctx-gemini\", \"status\": 400, \"error_body\": [{\"error\": {\"code\": 400, \"message\": \"The input "
    "token count (1234567) exceeds the maximum number of tokens allowed (1048576).\", \"status\": \"INVALID_ARGUMENT\"}}]},"
    " {\"match\": \"case:ollama-mem\", \"status\": 500, \"error_body\": {\"error\": \"model requires more system memory "
    "(5.3 GiB) than is available (3.5 GiB)\"}},"
    " {\"match\": \"case:ctx-anthropic\", \"status\": 400, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": "
    "\"invalid_request_error\", \"message\": \"prompt is too long: 212345 tokens > 200000 maximum\"}}},"
    " {\"match\": \"case:auth401\", \"status\": 401, \"error_body\": {\"error\": {\"message\": \"Incorrect API key provided.\","
    "\"type\": \"invalid_request_error\", \"param\": null, \"code\": \"invalid_api_key\"}}},"
    " {\"match\": \"case:auth403\", \"status\": 403, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": \"permission_error\","
    "\"message\": \"Your API key does not have permission to use the specified resource.\"}}},"
    " {\"match\": \"case:notfound\", \"status\": 404, \"error_body\": {\"error\": {\"message\": \"The model `gpt-9` does not exist or you "
    "do not have access to it.\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": \"model_not_found\"}}},"
    " {\"match\": \"case:badreq\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Invalid 'messages[0].content': string too "
    "long.\", \"type\": \"invalid_request_error\", \"param\": \"messages[0].content\", \"code\": \"string_above_max_length\"}}},"
    " {\"match\": \"case:overloaded\", \"status\": 529, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\","
    "\"message\": \"Overloaded\"}}},"
    " {\"match\": \"case:ratelimit\", \"status\": 429, \"retry_after\": 0, \"error_body\": {\"error\": {\"message\": \"Rate limit reached "
    "for requests\", \"type\": \"requests\", \"param\": null, \"code\": \"rate_limit_exceeded\"}}},"
    " {\"match\": \"case:quota\", \"status\": 429, \"error_body\": {\"error\": {\"message\": \"You exceeded your current quota, "
    "please check your plan and billing details.\", \"type\": \"insufficient_quota\", \"param\": null, \"code\": \"insufficient_quota\"}}},"
    " {\"match\": \"case:flagged\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"Invalid prompt: your prompt was "
    "flagged as potentially violating our usage policy. Please try again with a different prompt.\", \"type\": "
    "\"invalid_request_error\", \"param\": null, \"code\": \"invalid_prompt\"}}},"
    " {\"match\": \"case:azure-filter\", \"status\": 400, \"error_body\": {\"error\": {\"message\": \"The response was filtered due "
    "to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.\", \"type\": null, "
    "\"param\": \"prompt\", \"code\": \"content_filter\", \"status\": 400}}},"
    " {\"match\": \"case:credit-low\", \"status\": 400, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": "
    "\"invalid_request_error\", \"message\": \"Your credit balance is too low to access the Anthropic API. Please go to "
    "Plans & Billing to upgrade or purchase credits.\"}}},"
    " {\"match\": \"case:billing402\", \"status\": 402, \"error_body\": {\"type\": \"error\", \"error\": {\"type\": "
    "\"billing_error\", \"message\": \"There is an issue with the billing or payment information of the account.\"}}},"
    " {\"match\": \"case:ollama404\", \"status\": 404, \"error_body\": {\"error\": {\"message\": \"model \\\"qwen3:8b\\\" not found, "
    "try pulling it first\", \"type\": \"api_error\", \"param\": null, \"code\": null}}},"
    " {\"match\": \"case:loading\", \"status\": 503, \"error_body\": {\"error\": {\"code\": 503, \"message\": \"Loading model\","
    "\"type\": \"unavailable_error\"}}},"
    " {\"match\": \"case:not-impl\", \"status\": 501, \"error_body\": {\"error\": {\"code\": 501, \"message\": \"This server "
    "does not support embeddings. Start it with `--embeddings`\", \"type\": \"not_supported_error\"}}},"
    " {\"match\": \"case:malformed\", \"fault\": \"malformed\"},"
    " {\"match\": \"case:think-tags\", \"content\": \"<think>Maybe {\\\"action\\\": \\\"ViewCode\\\"} first.</think>\\n{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:think-bare\", \"content\": \"The user wants {\\\"x\\\": 1}.</think>\\n\\n{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:think-unclosed\", \"content\": \"<think>still weighing {\\\"a\\\": 1} and\", \"finish\": \"length\"},"
    " {\"match\": \"case:harmony-tags\", \"content\": \"<|channel|>analysis<|message|>The user wants a plan; maybe "
    "{\\\"action\\\": \\\"ViewCode\\\"} first.<|end|><|start|>assistant<|channel|>final<|message|>{\\\"action\\\": "
    "\\\"Finish\\\"}<|return|>\"},"
    " {\"match\": \"case:harmony-bare\", \"content\": \"analysisWe need a plan. {\\\"action\\\": \\\"ViewCode\\\"} could "
    "work.assistantfinal{\\\"action\\\": \\\"Finish\\\"}\"},"
    " {\"match\": \"case:harmony-cut\", \"content\": \"<|channel|>analysis<|message|>Still weighing {\\\"a\\\": 1} and\", "
    "\"finish\": \"length\"},"
    " {\"match\": \"case:think-field\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\", \"reasoning\": \"Step 1: {\\\"action\\\": \\\"ViewCode\\\"}\"},"
    " {\"match\": \"case:magistral\", \"content_parts\": true, \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\", \"reasoning\": \"Step 1: {\\\"action\\\": \\\"ViewCode\\\"}\"},"
    " {\"match\": \"case:text-parts\", \"content_parts\": true, \"content\": \"{\\\"value\\\": 70}\"},"
    " {\"match\": \"case:only-reasoning\", \"content\": \"\", \"reasoning\": \"I am still thinking about the\", \"finish\": \"length\"},"
    " {\"match\": \"case:tool\", \"tool_input\": {\"action\": \"Finish\", \"args\": {}},"
    "\"usage\": {\"input\": 100, \"output\": 10, \"cached\": 1000, \"cache_write\": 200}},"
    " {\"match\": \"case:cached\", \"content\": \"{}\", \"usage\": {\"input\": 8000, \"output\": 100, \"cached\": 6000, \"reasoning\": 40}},"
    /* Ollama past num_ctx 2048: the last 1026 tokens kept, a 200 (ollama#17427) */
    " {\"match\": \"case:cut-ollama\", \"content\": \"{\\\"action\\\": \\\"Finish\\\"}\", \"usage\": {\"input\": 1026, \"output\": 9}},"
    " {\"match\": \"case:cache-a\", \"content\": \"{}\", \"usage\": {\"input\": 300, \"output\": 9}},"
    " {\"match\": \"case:cache-b\", \"content\": \"{}\", \"usage\": {\"input\": 301, \"output\": 9}}"
    "], \"default\": {\"content\": \"{\\\"action\\\": \\\"Finish\\\"}\"}}";

static struct fake f, g;
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
    /* a model in no row: a temperature goes out only because the config sets one */
    struct llm_backend *b = mk(base, "json_mode = true\ntemperature = 0.2\n", 1);
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
    if (anthropic) {
        /* Claude's stop at the end of its context window is a cut reply too */
        struct llm_usage u2;   /* kept out of the ledger counted below */
        llm_usage_init(&u2);
        is_int(ask(b, "planning", "case:window-anthropic", &r, &u2), LLM_OK, "%s: a reply cut at the context window", pname);
        is_int(r.truncated, 1, "%s: model_context_window_exceeded is flagged truncated", pname);
        llm_reply_free(&r);
        llm_usage_destroy(&u2);
    }
    snprintf(tag, sizeof tag, "case:stopped-%s", pname);
    is_int(ask(b, "answer", tag, &r, &u), LLM_ERR_REPLY, "%s: a reply stopped by a refusal or content filter fails", pname);
    is_int(r.fail, anthropic ? LLM_FAIL_REFUSAL : LLM_FAIL_BAD_REPLY,
           "%s: as a refusal or a bad reply (the step falls back, the search goes on)", pname);
    ok(r.text == NULL, "%s: its partial text is not taken as the reply", pname);
    ok(strstr(r.error, anthropic ? "declined to answer (stop_reason refusal: declined here)"
                                 : "content filter (finish_reason content_filter)") != NULL,
       "%s: the error says so: %s", pname, r.error);
    is_int(fake_count(&f, tag), 1, "%s: a refusal is not retried as it is", pname);
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
    ok(strstr(r.error, "answered status 200 with an error instead of a completion") &&
       strstr(r.error, "provider overloaded"), "%s: %s", pname, r.error);
    is_str(llm_fail_name(r.fail), "provider_error", "%s: 200 with an error body: kind provider_error", pname);
    llm_backend_free(b);

    b = mk(base, "max_reply_bytes = 1048576\n", 1);
    is_int(ask(b, "planning", T("case:oversize"), &r, &u), LLM_ERR_TOO_LARGE, "%s: a 10 MB reply over a 1 MiB cap", pname);
    ok(strstr(r.error, "larger than 1048576 bytes") != NULL, "%s: %s", pname, r.error);
    is_int(fake_count(&f, tag), 1, "%s: not retried", pname);
    llm_backend_free(b);

    b = mk(base, "timeout_idle_ms = 300\nretries = 1\n", 1);
    is_int(ask(b, "planning", T("case:hang"), &r, &u), LLM_ERR_TIMEOUT, "%s: a hung server times out", pname);
    is_int(fake_count(&f, tag), 2, "%s: retried once (retries = 1)", pname);
    ok(strstr(r.error, "no byte from") && strstr(r.error, "timeout_idle_ms"), "%s: the idle limit is named: %s", pname,
       r.error);
    llm_backend_free(b);
    /* a whole reply asked for: the whole-request limit governs it */
    b = mk(base, "stream = false\ntimeout_total_ms = 300\nretries = 1\n", 1);
    is_int(ask(b, "planning", T("case:hang"), &r, &u), LLM_ERR_TIMEOUT, "%s: no stream: a hung server times out",
           pname);
    ok(strstr(r.error, "total 300 ms") != NULL, "%s: no stream: the total limit is named: %s", pname, r.error);
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
    b = mk(base, "temperature = 0.2\n", 0);
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
    is_int(e.calls, 17, "%s: 17 planning calls", pname);
    is_int(e.failures, 12, "%s: 12 of them failed", pname);
    is_int(llm_usage_get(&u, "evaluation", &e), 0, "%s: evaluation has an entry", pname);
    is_int(e.calls, 1, "%s: one evaluation call", pname);
    is_int(e.estimated_calls, 1, "%s: estimated", pname);
    is_int(llm_usage_get(&u, "answer", &e), 0, "%s: answer has an entry", pname);
    is_int(e.failures, 1, "%s: the refused answer counts as a failed call", pname);
    llm_usage_get(&u, NULL, &e);
    is_int(e.calls, 20, "%s: 20 calls in total (one untagged)", pname);
    is_int(llm_usage_get(&u, "other", &e), 0, "%s: an untagged call counts as other", pname);
    llm_usage_destroy(&u);
#undef T
}

/* A backend on the second server for model under the given provider. */
static struct llm_backend *mk2(const char *model, int anth, const char *lines)
{
    char path[256], conf[1024], base[160], emodel[128];
    snprintf(path, sizeof path, "%s/test2.conf", dir);
    snprintf(conf, sizeof conf, "retries = 2\nbackoff_ms = 5\nbackoff_max_ms = 20\ntimeout_total_ms = 5000\n%s",
             lines ? lines : "");
    snprintf(base, sizeof base, "DRQA_API_BASE=%s%s", g.base, anth ? "" : "/v1");
    snprintf(emodel, sizeof emodel, "DRQA_MODEL=%s", model);
    const char *env[] = {base, emodel, anth ? "DRQA_PROVIDER=anthropic" : "DRQA_PROVIDER=openai", NULL};
    return fake_backend(path, conf, env);
}

static int ask2(struct llm_backend *b, const char *user, double temperature, const cJSON *schema, struct llm_reply *r)
{
    struct llm_message m[] = {{"user", user}};
    struct llm_request q;
    llm_request_init(&q);
    q.system = "You are the planner.";
    q.messages = m;
    q.nmessages = 1;
    q.temperature = temperature;
    q.json_mode = 1;
    q.schema = schema;
    q.schema_name = schema ? "plan" : NULL;
    q.tag = "planning";
    return llm_chat(b, &q, r, NULL);
}

/* The body of the last request whose prompt holds needle (caller deletes). */
static cJSON *body2(const char *needle)
{
    cJSON *req = fake_last(&g, needle);
    cJSON *b = fake_body(req);
    cJSON_Delete(req);
    return b;
}

static int has(const cJSON *o, const char *k) { return cJSON_GetObjectItem(o, k) != NULL; }

static void profiles(const char *logpath)
{
    struct llm_reply r;
    cJSON *schema = cJSON_Parse("{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\"}},"
                                "\"required\":[\"action\"]}");

    /* an unknown reasoning model behind a gateway, with a reply limit and a
     * temperature set in the config: each documented refusal is adjusted
     * for once */
    struct llm_backend *b = mk2("my-reasoner", 0, "max_tokens = 4000\ntemperature = 0.7\n");
    is_int(ask2(b, "case:adj first", 0.7, NULL, &r), LLM_OK, "adjust: a refused max_tokens and temperature end in a reply");
    is_str(r.text, "{\"action\": \"Finish\"}", "adjust: the reply text");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:adj first"), 3, "adjust: three requests (refused max_tokens, refused temperature, ok)");
    cJSON *bd = body2("case:adj first");
    ok(has(bd, "max_completion_tokens") && !has(bd, "max_tokens"), "adjust: the retry sends max_completion_tokens");
    ok(!has(bd, "temperature"), "adjust: the retry drops the temperature");
    cJSON_Delete(bd);
    is_int(ask2(b, "case:adj second", 0.7, NULL, &r), LLM_OK, "adjust: the next call succeeds");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:adj second"), 1, "adjust: remembered: the next request goes out right the first time");
    bd = body2("case:adj second");
    ok(has(bd, "max_completion_tokens") && !has(bd, "max_tokens") && !has(bd, "temperature"),
       "adjust: ... with max_completion_tokens and no temperature");
    cJSON_Delete(bd);
    llm_backend_free(b);
    is_int(file_count(logpath, "refused 'max_tokens'"), 1, "adjust: the max_tokens adjustment is said once in the log");
    is_int(file_count(logpath, "refused 'temperature'"), 1, "adjust: the temperature adjustment is said once");

    /* the adjustment fails: bad_parameter, a persistent kind */
    b = mk2("my-reasoner", 0, "max_tokens = 4000\n");
    is_int(ask2(b, "case:stuck", -1, NULL, &r), LLM_ERR_STATUS, "stuck: a parameter refused after the adjustment fails");
    is_int(fake_count(&g, "case:stuck"), 2, "stuck: one adjustment, not more");
    is_str(llm_fail_name(r.fail), "bad_parameter", "stuck: kind bad_parameter");
    ok(llm_fail_persistent(r.fail), "stuck: bad_parameter is persistent");
    ok(strstr(r.error, "profile.my-reasoner.") != NULL, "stuck: the error says how to set the profile: %s", r.error);
    llm_backend_free(b);

    /* o4-mini by its profile: right the first time; a config override adds reasoning_effort */
    b = mk2("o4-mini", 0, "profile.o4-*.reasoning_effort = low\n");
    is_int(ask2(b, "case:o4 plain", 0.7, schema, &r), LLM_OK, "o4-mini: a call");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:o4 plain"), 1, "o4-mini: one request");
    bd = body2("case:o4 plain");
    ok(cJSON_GetObjectItem(bd, "max_completion_tokens") && cJSON_GetObjectItem(bd, "max_completion_tokens")->valueint == 32768 &&
       !has(bd, "max_tokens"), "o4-mini: max_completion_tokens 32768 from the profile");
    ok(!has(bd, "temperature"), "o4-mini: no temperature");
    is_str(cJSON_GetObjectItem(bd, "reasoning_effort") ? cJSON_GetObjectItem(bd, "reasoning_effort")->valuestring : "(none)",
           "low", "o4-mini: reasoning_effort from the config's profile override");
    cJSON *rf = cJSON_GetObjectItem(bd, "response_format");
    cJSON *js = rf ? cJSON_GetObjectItem(rf, "json_schema") : NULL;
    is_str(rf ? cJSON_GetObjectItem(rf, "type")->valuestring : "(none)", "json_schema", "o4-mini: response_format json_schema");
    ok(js && !strcmp(cJSON_GetObjectItem(js, "name")->valuestring, "plan") && cJSON_IsFalse(cJSON_GetObjectItem(js, "strict")) &&
       cJSON_Compare(cJSON_GetObjectItem(js, "schema"), schema, 1), "o4-mini: the role's schema, its name, strict false");
    cJSON_Delete(bd);
    llm_backend_free(b);

    /* overrides: token parameter, reply limit and schema for a glob */
    b = mk2("fake-model", 0, "profile.fake-*.token_param = max_completion_tokens\nprofile.fake-*.max_output = 12345\n"
                             "profile.fake-*.temperature = default\nprofile.fake-*.schema = json_object\n");
    is_int(ask2(b, "case:override", 0.2, schema, &r), LLM_OK, "override: a call");
    llm_reply_free(&r);
    bd = body2("case:override");
    ok(cJSON_GetObjectItem(bd, "max_completion_tokens") && cJSON_GetObjectItem(bd, "max_completion_tokens")->valueint == 12345,
       "override: token_param and max_output from the config file");
    ok(!has(bd, "temperature"), "override: temperature = default sends none");
    rf = cJSON_GetObjectItem(bd, "response_format");
    is_str(rf ? cJSON_GetObjectItem(rf, "type")->valuestring : "(none)", "json_object", "override: schema = json_object");
    cJSON_Delete(bd);
    llm_backend_free(b);

    /* gpt-4o: json_schema refused -> JSON in the text, once, remembered */
    b = mk2("gpt-4o", 0, NULL);
    is_int(ask2(b, "case:schema-refused one", 0, schema, &r), LLM_OK, "schema refused: still a reply");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:schema-refused one"), 2, "schema refused: sent again");
    bd = body2("case:schema-refused one");
    ok(!has(bd, "response_format") && has(bd, "max_tokens") && has(bd, "temperature"),
       "schema refused: the retry has no response_format, the rest as before");
    cJSON_Delete(bd);
    is_int(ask2(b, "case:schema-refused two", 0, schema, &r), LLM_OK, "schema refused: the next call");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:schema-refused two"), 1, "schema refused: remembered");
    llm_backend_free(b);

    /* a server refusing the schema: JSON in the text, not a failed run.
     * vLLM's xgrammar backend (numeric ranges in some versions); DeepSeek,
     * which takes no json_schema ("This response_format type is unavailable
     * now"; a config asking for it) */
    static const struct { const char *model, *conf, *match; } schema_refusers[] = {
        {"Qwen/Qwen2.5-Coder-7B-Instruct", NULL, "case:xgrammar"},
        {"deepseek-chat", "profile.deepseek-chat.schema = json_schema\n", "case:deepseek-rf"},
    };
    for (size_t i = 0; i < ARRAY_LEN(schema_refusers); i++) {
        const char *m = schema_refusers[i].match;
        b = mk2(schema_refusers[i].model, 0, schema_refusers[i].conf);
        is_int(ask2(b, m, 0, schema, &r), LLM_OK, "%s: the schema refused: still a reply (%s)", m, r.error);
        llm_reply_free(&r);
        is_int(fake_count(&g, m), 2, "%s: the schema refused: sent again", m);
        bd = body2(m);
        ok(!has(bd, "response_format"), "%s: the retry has no response_format", m);
        cJSON_Delete(bd);
        llm_backend_free(b);
    }

    /* LM Studio takes structured output only as json_schema: a json_object
     * request (Magistral's profile, or json_mode = true) is sent again as a
     * schema (the role's, or any object), and later calls go so at once */
    static const char *const lmstudio[] = {"case:lms-new", "case:lms-old"};
    for (size_t i = 0; i < ARRAY_LEN(lmstudio); i++) {
        const cJSON *sc = i == 0 ? schema : NULL;
        b = mk2("magistral-small-2509", 0, NULL);
        is_int(ask2(b, lmstudio[i], 0, sc, &r), LLM_OK, "%s: a reply after the refusal: %s", lmstudio[i], r.error);
        is_int(fake_count(&g, lmstudio[i]), 2, "%s: refused once, sent again", lmstudio[i]);
        llm_reply_free(&r);
        bd = body2(lmstudio[i]);
        const cJSON *fmt = cJSON_GetObjectItem(bd, "response_format");
        is_str(cJSON_GetStringValue(cJSON_GetObjectItem(fmt, "type")), "json_schema", "%s: sent again as json_schema",
               lmstudio[i]);
        const cJSON *jsch = cJSON_GetObjectItem(fmt, "json_schema");
        char *got = cJSON_PrintUnformatted(cJSON_GetObjectItem(jsch, "schema"));
        char *want = sc ? cJSON_PrintUnformatted(sc) : xstrdup("{\"type\":\"object\"}");
        is_str(got, want, "%s: with %s", lmstudio[i], sc ? "the role's schema" : "an object schema (no role schema)");
        free(got);
        free(want);
        cJSON_Delete(bd);
        is_int(ask2(b, lmstudio[i], 0, sc, &r), LLM_OK, "%s: a later call", lmstudio[i]);
        is_int(fake_count(&g, lmstudio[i]), 3, "%s: a later call is sent as json_schema at once", lmstudio[i]);
        llm_reply_free(&r);
        llm_backend_free(b);
    }

    /* Alibaba's DashScope and ModelScope refuse a non-streaming call to a
     * model that thinks: sent again with enable_thinking false, which holds
     * for the rest of the run */
    static const char *const streamers[] = {"case:dashscope", "case:dashscope-zh", "case:modelscope"};
    for (size_t i = 0; i < ARRAY_LEN(streamers); i++) {
        b = mk2("qwen3-32b", 0, NULL);
        is_int(ask2(b, streamers[i], 0, NULL, &r), LLM_OK, "%s: a reply after the refusal: %s", streamers[i], r.error);
        is_int(fake_count(&g, streamers[i]), 2, "%s: refused once, sent again", streamers[i]);
        bd = body2(streamers[i]);
        ok(cJSON_IsFalse(cJSON_GetObjectItem(bd, "enable_thinking")), "%s: sent again with enable_thinking false",
           streamers[i]);
        cJSON_Delete(bd);
        llm_reply_free(&r);
        is_int(ask2(b, streamers[i], 0, NULL, &r), LLM_OK, "%s: a later call", streamers[i]);
        is_int(fake_count(&g, streamers[i]), 3, "%s: a later call is sent with it at once", streamers[i]);
        llm_reply_free(&r);
        llm_backend_free(b);
    }

    /* a model name in no row gets nothing optional: OpenAI-compatible, model
     * and messages alone; Anthropic, what its API requires (model,
     * max_tokens, messages) and the system prompt */
    for (int anth = 0; anth < 2; anth++) {
        b = mk2("acme-llm-7", anth, NULL);
        const char *m = anth ? "case:minimal anthropic" : "case:minimal openai";
        is_int(ask2(b, m, 0.7, schema, &r), LLM_OK, "%s: a call", m);
        llm_reply_free(&r);
        bd = body2(m);
        char keys[256] = "";
        const cJSON *fld;
        cJSON_ArrayForEach(fld, bd) {
            strncat(keys, fld->string, sizeof keys - strlen(keys) - 2);
            strcat(keys, " ");
        }
        is_str(keys, anth ? "model max_tokens stream system messages " : "model messages stream stream_options ",
               "%s: no optional parameter in the request, but the stream asked for", m);
        if (anth)
            is_int(cJSON_GetObjectItem(bd, "max_tokens")->valueint, LLM_ANTHROPIC_DEFAULT_MAX,
                   "%s: the required max_tokens is the default's", m);
        cJSON_Delete(bd);
        llm_backend_free(b);
    }

    /* Claude Opus 4.7 and 4.8 refuse a temperature ("deprecated"): none is
     * sent; one the config sets is dropped after the refusal, once */
    static const char *const opus47[] = {"claude-opus-4-7", "claude-opus-4-8-20261015"};
    for (size_t i = 0; i < ARRAY_LEN(opus47); i++) {
        b = mk2(opus47[i], 1, NULL);
        char m[64];
        snprintf(m, sizeof m, "case:temp-deprecated [%s]", opus47[i]);
        is_int(ask2(b, m, 0.7, schema, &r), LLM_OK, "%s: a call: %s", opus47[i], r.error);
        llm_reply_free(&r);
        is_int(fake_count(&g, m), 1, "%s: right the first time", opus47[i]);
        bd = body2(m);
        ok(!has(bd, "temperature"), "%s: no temperature sent", opus47[i]);
        cJSON_Delete(bd);
        llm_backend_free(b);
    }
    b = mk2("claude-opus-4-7", 1, "temperature = 0.3\n");
    is_int(ask2(b, "case:temp-deprecated configured", 0.7, schema, &r), LLM_OK,
           "opus 4.7, temperature configured: a reply after the refusal: %s", r.error);
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:temp-deprecated configured"), 2, "opus 4.7: refused once, sent again without it");
    is_int(ask2(b, "case:temp-deprecated again", 0.7, schema, &r), LLM_OK, "opus 4.7: a later call");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:temp-deprecated again"), 1, "opus 4.7: remembered for the model");
    llm_backend_free(b);
    is_int(file_count(logpath, "refused 'temperature' (the server at"), 0, "(the log line names the refusal)");

    /* the Claude 5 generation: adaptive thinking, no temperature, a reply
     * limit with room for thinking, the tool offered and not forced */
    static const char *const claude5[] = {"claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-1",
                                          "claude-opus-5", "claude-sonnet-5"};
    for (size_t i = 0; i < ARRAY_LEN(claude5); i++) {
        b = mk2(claude5[i], 1, NULL);
        char m[64];
        snprintf(m, sizeof m, "case:claude5-temp [%s]", claude5[i]);
        is_int(ask2(b, m, 0.7, schema, &r), LLM_OK, "%s: a call: %s", claude5[i], r.error);
        llm_reply_free(&r);
        is_int(fake_count(&g, m), 1, "%s: right the first time", claude5[i]);
        bd = body2(m);
        ok(!has(bd, "temperature") && !has(bd, "tool_choice") && has(bd, "tools"),
           "%s: no temperature, the tool offered, not forced", claude5[i]);
        ok(cJSON_GetObjectItem(bd, "max_tokens")->valueint >= 32000, "%s: a reply limit sized for thinking (%d)",
           claude5[i], cJSON_GetObjectItem(bd, "max_tokens")->valueint);
        cJSON_Delete(bd);
        llm_backend_free(b);
    }
    b = mk2("claude-sonnet-5-5", 1, "temperature = 0.3\n");
    is_int(ask2(b, "case:claude5-temp configured", 0.7, schema, &r), LLM_OK,
           "claude 5, temperature configured: \"may only be set to 1\" adjusted for: %s", r.error);
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:claude5-temp configured"), 2, "claude 5: refused once, sent again");
    llm_backend_free(b);
    /* forced tool use refused by a model that thinks: offered, not forced */
    b = mk2("claude-sonnet-4-5", 1, NULL);
    is_int(ask2(b, "case:forced-tool", 0, schema, &r), LLM_OK, "forced tool refused: a reply: %s", r.error);
    is_str(r.text, "{\"action\":\"Finish\",\"args\":{}}", "forced tool refused: the tool input is the reply");
    llm_reply_free(&r);
    bd = body2("case:forced-tool");
    ok(has(bd, "tools") && !has(bd, "tool_choice"), "forced tool refused: sent again with the tool, not forced");
    cJSON_Delete(bd);
    llm_backend_free(b);

    /* a refused system role: the system prompt folded into the first user
     * message (OpenAI's o1 body; Gemma's template through vLLM); o1-mini's
     * row folds it at once */
    static const char *const sysrefusers[] = {"case:sysrole", "case:gemma-sys"};
    for (size_t i = 0; i < ARRAY_LEN(sysrefusers); i++) {
        b = mk2(i ? "gemma-2-27b-it" : "o1-like-mini", 0, NULL);
        is_int(ask2(b, sysrefusers[i], 0, NULL, &r), LLM_OK, "%s: a reply after the refusal: %s", sysrefusers[i], r.error);
        llm_reply_free(&r);
        is_int(fake_count(&g, sysrefusers[i]), 2, "%s: refused once, sent again", sysrefusers[i]);
        bd = body2(sysrefusers[i]);
        cJSON *m0 = cJSON_GetArrayItem(cJSON_GetObjectItem(bd, "messages"), 0);
        is_str(cJSON_GetStringValue(cJSON_GetObjectItem(m0, "role")), "user", "%s: the first message is the user's",
               sysrefusers[i]);
        ok(str_starts(cJSON_GetStringValue(cJSON_GetObjectItem(m0, "content")), "You are the planner.\n\ncase:"),
           "%s: with the system prompt at its head", sysrefusers[i]);
        is_int(cJSON_GetArraySize(cJSON_GetObjectItem(bd, "messages")), 1, "%s: no system message left", sysrefusers[i]);
        cJSON_Delete(bd);
        llm_backend_free(b);
    }
    b = mk2("o1-mini", 0, NULL);
    is_int(ask2(b, "case:sysrole o1-mini", 0, NULL, &r), LLM_OK, "o1-mini: a call");
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:sysrole o1-mini"), 1, "o1-mini: its row folds the system prompt at once");
    llm_backend_free(b);

    /* servers that refuse a field they do not know: vLLM's request
     * validation ("Extra inputs are not permitted"), Azure OpenAI with an
     * older api-version ("Unrecognized request argument supplied") */
    b = mk2("o4-mini", 0, "profile.o4-*.reasoning_effort = low\n");
    is_int(ask2(b, "case:strict-vllm", 0, NULL, &r), LLM_OK, "strict vllm: a reply: %s", r.error);
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:strict-vllm"), 2, "strict vllm: reasoning_effort refused once");
    bd = body2("case:strict-vllm");
    ok(!has(bd, "reasoning_effort") && has(bd, "max_completion_tokens"), "strict vllm: dropped, the rest kept");
    cJSON_Delete(bd);
    llm_backend_free(b);
    b = mk2("o4-mini", 0, "profile.o4-*.reasoning_effort = xhigh\n");
    is_int(ask2(b, "case:strict-azure", 0, NULL, &r), LLM_OK, "strict azure: a reply: %s", r.error);
    llm_reply_free(&r);
    is_int(fake_count(&g, "case:strict-azure"), 3, "strict azure: max_completion_tokens, then reasoning_effort refused");
    bd = body2("case:strict-azure");
    ok(has(bd, "max_tokens") && !has(bd, "max_completion_tokens") && !has(bd, "reasoning_effort"),
       "strict azure: max_tokens instead, no reasoning_effort");
    cJSON_Delete(bd);
    llm_backend_free(b);
    ok(file_count(logpath, "profile.o4-mini.token_param = max_tokens") == 0,
       "(the config line is said on stderr, not in the log)");

    /* gpt-5.x takes reasoning_effort xhigh; router-prefixed names are the
     * vendor's models */
    b = mk2("openai/gpt-5.5", 0, "profile.gpt-5.5.reasoning_effort = xhigh\n");
    is_int(ask2(b, "case:prefixed gpt", 0.7, schema, &r), LLM_OK, "openai/gpt-5.5: a call");
    ok(r.cost_usd > 0, "openai/gpt-5.5: priced as gpt-5.5 (%g)", r.cost_usd);
    llm_reply_free(&r);
    bd = body2("case:prefixed gpt");
    ok(has(bd, "max_completion_tokens") && !has(bd, "temperature") && !has(bd, "max_tokens"),
       "openai/gpt-5.5: the gpt-5 family's request");
    is_str(cJSON_GetStringValue(cJSON_GetObjectItem(bd, "reasoning_effort")), "xhigh", "gpt-5.5: reasoning_effort xhigh");
    cJSON_Delete(bd);
    llm_backend_free(b);

    /* OpenRouter's usage.cost is the call's cost */
    b = mk2("anthropic/claude-sonnet-4.5", 0, NULL);
    is_int(ask2(b, "case:or-cost", 0, NULL, &r), LLM_OK, "openrouter: a call");
    ok(fabs(r.cost_usd - 0.00123) < 1e-12, "openrouter: usage.cost is the cost (%g)", r.cost_usd);
    llm_reply_free(&r);
    llm_backend_free(b);

    /* Anthropic: forced tool use with the schema; the tool input is the text; cache usage */
    b = mk2("claude-sonnet-4-5-20250929", 1, NULL);
    is_int(ask2(b, "case:tool", 0, schema, &r), LLM_OK, "anthropic tool: a call");
    is_str(r.text, "{\"action\":\"Finish\",\"args\":{}}", "anthropic tool: the tool_use input is the reply text");
    is_int(r.input_tokens, 1300, "anthropic tool: input counts cache reads and writes (100 + 1000 + 200)");
    is_int(r.cached_tokens, 1000, "anthropic tool: cache_read_input_tokens are the cached tokens");
    ok(fabs(r.cost_usd - (100 * 3.0 + 1000 * 0.3 + 200 * 3.0 * 1.25 + 10 * 15.0) / 1e6) < 1e-12,
       "anthropic tool: cost from the profile's prices, cache reads and writes priced apart (%g)", r.cost_usd);
    llm_reply_free(&r);
    bd = body2("case:tool");
    cJSON *tool = cJSON_GetArrayItem(cJSON_GetObjectItem(bd, "tools"), 0);
    ok(tool && !strcmp(cJSON_GetObjectItem(tool, "name")->valuestring, "plan") &&
       cJSON_Compare(cJSON_GetObjectItem(tool, "input_schema"), schema, 1), "anthropic tool: one tool with the schema");
    cJSON *tc = cJSON_GetObjectItem(bd, "tool_choice");
    ok(tc && !strcmp(cJSON_GetObjectItem(tc, "type")->valuestring, "tool") &&
       !strcmp(cJSON_GetObjectItem(tc, "name")->valuestring, "plan"), "anthropic tool: forced by tool_choice");
    cJSON *sys0 = cJSON_GetArrayItem(cJSON_GetObjectItem(bd, "system"), 0);
    ok(sys0 && cJSON_GetObjectItem(sys0, "cache_control"), "anthropic tool: cache_control on the system prompt");
    cJSON_Delete(bd);
    is_int(ask2(b, "case:tools-refused", 0, schema, &r), LLM_OK, "anthropic tools refused: JSON in the text instead");
    is_int(fake_count(&g, "case:tools-refused"), 2, "anthropic tools refused: sent again once");
    bd = body2("case:tools-refused");
    ok(!has(bd, "tools") && !has(bd, "tool_choice"), "anthropic tools refused: the retry has no tools");
    cJSON_Delete(bd);
    llm_reply_free(&r);
    llm_backend_free(b);

    /* thinking */
    b = mk2("qwen3:8b", 0, NULL);
    /* where each family puts its thinking: the reply is the text, never the
     * JSON inside the thinking, which is kept apart as reasoning (NULL: none
     * expected). Qwen3's <think> tags (and a bare </think>), vLLM's and
     * DeepSeek's reasoning_content, Mistral's Magistral content parts (a
     * thinking part, then text parts) and text parts alone */
    static const struct { const char *c, *what, *text, *reasoning; } thinking[] = {
        {"case:think-tags", "think tags", "{\"action\": \"Finish\"}", "Maybe {\"action\": \"ViewCode\"} first."},
        {"case:think-bare", "bare </think>", "{\"action\": \"Finish\"}", NULL},
        {"case:think-field", "reasoning_content", "{\"action\": \"Finish\"}", "Step 1: {\"action\": \"ViewCode\"}"},
        {"case:magistral", "content parts with thinking", "{\"action\": \"Finish\"}", "Step 1: {\"action\": \"ViewCode\"}"},
        {"case:text-parts", "text parts", "{\"value\": 70}", NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(thinking); i++) {
        is_int(ask2(b, thinking[i].c, 0, NULL, &r), LLM_OK, "%s: a reply", thinking[i].what);
        is_str(r.text, thinking[i].text, "%s: the text is the reply", thinking[i].what);
        if (thinking[i].reasoning) is_str(r.reasoning, thinking[i].reasoning, "%s: kept apart as reasoning", thinking[i].what);
        llm_reply_free(&r);
    }
    is_int(ask2(b, "case:think-unclosed", 0, NULL, &r), LLM_ERR_REPLY, "unclosed <think> at the limit: an error");
    is_str(llm_fail_name(r.fail), "bad_reply", "unclosed <think>: kind bad_reply");
    ok(strstr(r.error, "only reasoning") && strstr(r.error, "token limit") && strstr(r.error, "max_output"),
       "unclosed <think>: the error names the cause and the fix: %s", r.error);
    ok(r.text == NULL && r.reasoning && strstr(r.reasoning, "still weighing"), "unclosed <think>: no text, the reasoning kept");
    llm_reply_free(&r);
    /* gpt-oss's harmony channels passed through unparsed: the final
     * message is the text, the analysis the reasoning */
    static const char *const harmony[] = {"case:harmony-tags", "case:harmony-bare"};
    for (size_t i = 0; i < ARRAY_LEN(harmony); i++) {
        is_int(ask2(b, harmony[i], 0, NULL, &r), LLM_OK, "%s: a reply", harmony[i]);
        is_str(r.text, "{\"action\": \"Finish\"}", "%s: the final message is the text", harmony[i]);
        ok(r.reasoning && strstr(r.reasoning, "ViewCode") && !strstr(r.reasoning, "<|"),
           "%s: the analysis is the reasoning, without channel tags", harmony[i]);
        llm_reply_free(&r);
    }
    is_int(ask2(b, "case:harmony-cut", 0, NULL, &r), LLM_ERR_REPLY, "harmony analysis cut at the limit: an error");
    ok(r.text == NULL && r.reasoning && strstr(r.reasoning, "Still weighing"), "harmony analysis cut: kept as reasoning");
    llm_reply_free(&r);
    is_int(ask2(b, "case:only-reasoning", 0, NULL, &r), LLM_ERR_REPLY, "empty content with reasoning: an error");
    ok(strstr(r.error, "raise max_tokens") != NULL, "empty content with reasoning: says to raise max_tokens: %s", r.error);
    llm_reply_free(&r);
    llm_backend_free(b);

    /* failure kinds of documented error bodies */
    static const struct { const char *model; int anth; const char *c; const char *kind; int persistent; } kinds[] = {
        {"gpt-4o", 0, "case:ctx-openai", "context_length", 0},
        {"Qwen/Qwen3-8B", 0, "case:ctx-vllm", "context_length", 0},
        {"qwen2.5-coder", 0, "case:ctx-llamacpp", "context_length", 0},
        {"claude-sonnet-4-5", 1, "case:ctx-anthropic", "context_length", 0},
        {"gpt-4o", 0, "case:auth401", "auth", 1},
        {"claude-sonnet-4-5", 1, "case:auth403", "auth", 1},
        {"gpt-9", 0, "case:notfound", "not_found", 1},
        {"gpt-4o", 0, "case:badreq", "bad_request", 1},
        {"claude-sonnet-4-5", 1, "case:overloaded", "transient", 0},
        {"gpt-4o", 0, "case:ratelimit", "transient", 0},
        {"gpt-4o", 0, "case:malformed", "bad_reply", 0},
        {"gpt-4o", 0, "case:quota", "quota", 1},
        {"o4-mini", 0, "case:flagged", "bad_reply", 0},
        {"gpt-4o", 0, "case:azure-filter", "bad_reply", 0},
        {"claude-sonnet-4-5", 1, "case:credit-low", "quota", 1},
        {"claude-sonnet-4-5", 1, "case:billing402", "quota", 1},
        {"qwen3:8b", 0, "case:ollama404", "not_found", 1},
        {"qwen2.5-coder", 0, "case:not-impl", "bad_request", 1},
        {"gemini-2.5-flash", 0, "case:ctx-gemini", "context_length", 0},
        {"llama3.1:8b", 0, "case:ollama-mem", "bad_request", 1},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        b = mk2(kinds[i].model, kinds[i].anth, NULL);
        ask2(b, kinds[i].c, 0, NULL, &r);
        is_str(llm_fail_name(r.fail), kinds[i].kind, "kind: %s is %s: %s", kinds[i].c, kinds[i].kind, r.error);
        is_int(llm_fail_persistent(r.fail), kinds[i].persistent, "kind: %s %s persistent", kinds[i].c,
               kinds[i].persistent ? "is" : "is not");
        llm_reply_free(&r);
        llm_backend_free(b);
    }
    /* a server whose context window (1500 tokens) cannot hold the input and
     * the profile's reply limit (4096): vLLM and Anthropic refuse, naming the
     * window and the input; the reply limit is lowered to what the input
     * leaves and the request sent again, and the later requests are fitted
     * at once; an input over the window alone stays a context failure */
    static const struct { const char *model; int anth; const char *c; } fits[] = {
        {"meta-llama/Llama-3.2-3B-Instruct", 0, "case:fit-vllm "},
        {"meta-llama/Llama-3.2-3B-Instruct", 0, "case:fit-vllm-old"},
        {"claude-haiku-4-5", 1, "case:fit-anthropic"},
        {"meta-llama/Llama-3.1-8B-Instruct", 0, "case:fit-tgi"},
    };
    for (size_t i = 0; i < ARRAY_LEN(fits); i++) {
        b = mk2(fits[i].model, fits[i].anth, "max_tokens = 4096\n");
        struct buf pr = BUF_INIT;
        buf_printf(&pr, "%s", fits[i].c);
        while (pr.len < 2000) buf_adds(&pr, " the evidence of one step, quoted at length;");
        int before = fake_count(&g, fits[i].c);
        int crc = ask2(b, buf_str(&pr), 0, NULL, &r);
        is_int(crc, LLM_OK, "fit %s: the call succeeds: %s", fits[i].c, r.error);
        is_int(fake_count(&g, fits[i].c) - before, 2, "fit %s: refused once, then sent with a lower reply limit", fits[i].c);
        cJSON *sent_body = body2(fits[i].c);
        long input = (long)(strlen("You are the planner.") + 1 + pr.len + 3) / 4;   /* as the fake counts */
        int sent = cJSON_GetObjectItem(sent_body, "max_tokens") ? cJSON_GetObjectItem(sent_body, "max_tokens")->valueint : -1;
        ok(sent >= LLM_REPLY_MIN && sent + input <= 1500 && sent > 1500 - input - 2 * LLM_REPLY_MARGIN,
           "fit %s: the reply limit sent again is what the window leaves (%d of 1500, input about %ld)", fits[i].c, sent,
           input);
        cJSON_Delete(sent_body);
        llm_reply_free(&r);
        before = fake_count(&g, fits[i].c);
        is_int(ask2(b, buf_str(&pr), 0, NULL, &r), LLM_OK, "fit %s: a later call succeeds", fits[i].c);
        is_int(fake_count(&g, fits[i].c) - before, 1, "fit %s: a later call is fitted at once", fits[i].c);
        llm_reply_free(&r);
        /* an input the window cannot hold at all */
        while (pr.len < 8000) buf_adds(&pr, " the evidence of one step, quoted at length;");
        before = fake_count(&g, fits[i].c);
        ask2(b, buf_str(&pr), 0, NULL, &r);
        is_str(llm_fail_name(r.fail), "context_length", "fit %s: an input over the window fails as context_length: %s",
               fits[i].c, r.error);
        ok(fake_count(&g, fits[i].c) - before <= 2, "fit %s: without endless resending", fits[i].c);
        llm_reply_free(&r);
        buf_free(&pr);
        llm_backend_free(b);
    }

    /* a configured reply limit over what the model may write at all: each
     * server's refusal names the model's limit; the request is sent again
     * with it, in the same parameter (not switched to the other one), and
     * later requests are sent with it at once */
    static const struct { const char *model; int anth; const char *c; const char *conf; const char *param; int cap; } caps[] = {
        {"gpt-4o", 0, "case:cap-openai ", "max_tokens = 32768\n", "max_tokens", 16384},
        {"o4-mini", 0, "case:cap-openai-mct", "max_tokens = 200000\n", "max_completion_tokens", 100000},
        {"claude-opus-4-1", 1, "case:cap-anthropic", "max_tokens = 64000\n", "max_tokens", 32000},
        {"deepseek-chat", 0, "case:cap-deepseek", "max_tokens = 16384\n", "max_tokens", 8192},
        {"llama-3.1-8b-instant", 0, "case:cap-groq", "max_tokens = 32768\n", "max_tokens", 8192},
        {"meta-llama/Llama-3.1-8B-Instruct", 0, "case:cap-tgi", "max_tokens = 4096\n", "max_tokens", 2048},
    };
    for (size_t i = 0; i < ARRAY_LEN(caps); i++) {
        b = mk2(caps[i].model, caps[i].anth, caps[i].conf);
        int before = fake_count(&g, caps[i].c);
        is_int(ask2(b, caps[i].c, 0, NULL, &r), LLM_OK, "cap %s: the call succeeds: %s", caps[i].c, r.error);
        is_int(fake_count(&g, caps[i].c) - before, 2, "cap %s: refused once, then sent with the model's limit", caps[i].c);
        cJSON *sent_body = body2(caps[i].c);
        const cJSON *lim = cJSON_GetObjectItem(sent_body, caps[i].param);
        const char *other = strcmp(caps[i].param, "max_tokens") ? "max_tokens" : "max_completion_tokens";
        ok(cJSON_IsNumber(lim) && lim->valueint == caps[i].cap && !has(sent_body, other),
           "cap %s: sent again with %s = %d (got %d), the same parameter", caps[i].c, caps[i].param, caps[i].cap,
           cJSON_IsNumber(lim) ? lim->valueint : -1);
        cJSON_Delete(sent_body);
        llm_reply_free(&r);
        before = fake_count(&g, caps[i].c);
        is_int(ask2(b, caps[i].c, 0, NULL, &r), LLM_OK, "cap %s: a later call succeeds", caps[i].c);
        is_int(fake_count(&g, caps[i].c) - before, 1, "cap %s: a later call is sent with the limit at once", caps[i].c);
        llm_reply_free(&r);
        llm_backend_free(b);
    }
    /* a refusal that names a limit of something else stays what it was */
    b = mk2("gpt-4o", 0, NULL);
    ask2(b, "case:badreq", 0, NULL, &r);
    is_str(llm_fail_name(r.fail), "bad_request", "cap: an unrelated 400 is not read as a reply limit: %s", r.error);
    llm_reply_free(&r);
    llm_backend_free(b);

    /* llama.cpp's 503 while loading is waited on for the request's time
     * limit, then fails as transient, saying why */
    b = mk2("qwen2.5-coder", 0, "timeout_total_ms = 60\n");
    ask2(b, "case:loading", 0, NULL, &r);
    is_str(llm_fail_name(r.fail), "transient", "kind: 503 Loading model is transient: %s", r.error);
    is_int(llm_fail_persistent(r.fail), 0, "kind: 503 Loading model is not persistent");
    ok(strstr(r.error, "still loading the model") != NULL, "kind: 503 Loading model says so: %s", r.error);
    llm_reply_free(&r);
    llm_backend_free(b);

    /* the quota and Not Implemented refusals are sent once, not retried */
    b = mk2("gpt-4o", 0, NULL);
    ask2(b, "case:quota", 0, NULL, &r);
    is_int(r.attempts, 1, "kind: insufficient_quota is not retried");
    ok(strstr(r.error, "billing") != NULL, "kind: insufficient_quota says to check billing: %s", r.error);
    llm_reply_free(&r);
    ask2(b, "case:not-impl", 0, NULL, &r);
    is_int(r.attempts, 1, "kind: 501 is not retried");
    llm_reply_free(&r);
    llm_backend_free(b);
    /* a prompt refused for its content: the error says so, not to check the model */
    b = mk2("o4-mini", 0, NULL);
    ask2(b, "case:flagged", 0, NULL, &r);
    ok(strstr(r.error, "content policy refused this prompt") && !strstr(r.error, "check the model name"),
       "kind: a flagged prompt is said to be refused for its content: %s", r.error);
    is_int(r.attempts, 1, "kind: a flagged prompt is sent once");
    llm_reply_free(&r);
    llm_backend_free(b);
    /* Anthropic's billing refusals (a 400 whose message says the credit
     * balance is too low, and 402 billing_error) say to check billing, not
     * the request or the server */
    b = mk2("claude-sonnet-4-5", 1, NULL);
    static const char *const billing[] = {"case:credit-low", "case:billing402"};
    for (size_t i = 0; i < ARRAY_LEN(billing); i++) {
        ask2(b, billing[i], 0, NULL, &r);
        is_int(r.attempts, 1, "kind: %s is sent once", billing[i]);
        ok(strstr(r.error, "billing") && !strstr(r.error, "check the model name") &&
           !strstr(r.error, "check the server and its configuration"),
           "kind: %s says to check billing: %s", billing[i], r.error);
        llm_reply_free(&r);
    }
    llm_backend_free(b);
    char refused[96];
    snprintf(refused, sizeof refused, "http://127.0.0.1:%d", fake_closed_port());
    b = mk(refused, NULL, 0);
    ask(b, "planning", "case:refused kind", &r, NULL);
    is_str(llm_fail_name(r.fail), "transient", "kind: a closed port is transient");
    llm_backend_free(b);

    /* the ledger: cached and reasoning tokens, cost from the profile, one line */
    b = mk2("gpt-4.1-mini", 0, NULL);
    struct llm_usage u;
    llm_usage_init(&u);
    struct llm_message m[] = {{"user", "case:cached"}};
    struct llm_request q;
    llm_request_init(&q);
    q.messages = m;
    q.nmessages = 1;
    q.tag = "planning";
    is_int(llm_chat(b, &q, &r, &u), LLM_OK, "ledger: a call with cached tokens");
    is_int(r.cached_tokens, 6000, "ledger: prompt_tokens_details.cached_tokens read");
    is_int(r.reasoning_tokens, 40, "ledger: completion_tokens_details.reasoning_tokens read");
    ok(fabs(r.cost_usd - (2000 * 0.40 + 6000 * 0.10 + 100 * 1.60) / 1e6) < 1e-12,
       "ledger: cached input at the cached price (%g)", r.cost_usd);
    llm_reply_free(&r);
    struct llm_usage_entry e;
    llm_usage_get(&u, "planning", &e);
    is_int(e.cached_input_tokens, 6000, "ledger: the role's cached input tokens");
    is_int(e.reasoning_tokens, 40, "ledger: the role's reasoning tokens");
    cJSON *uj = llm_usage_json(&u);
    char *line = llm_usage_line(uj);
    is_str(line, "tokens planning 1 call 8.0k in (6.0k cached) 100 out (40 reasoning) $0.0016; "
                 "total 1 call 8.0k in (6.0k cached) 100 out (40 reasoning) $0.0016", "ledger: the one-line form");
    free(line);
    cJSON_Delete(uj);
    llm_usage_destroy(&u);
    llm_backend_free(b);

    /* a server that cuts a long prompt and says nothing but its count */
    struct buf big = BUF_INIT, bigger = BUF_INIT, mid = BUF_INIT;
    buf_adds(&big, "case:cut-ollama ");
    buf_adds(&bigger, "case:cut-ollama ");
    buf_adds(&mid, "case:cut-ollama ");
    for (int i = 0; i < 900; i++) buf_adds(&big, "def f(x): ");
    for (int i = 0; i < 1200; i++) buf_adds(&bigger, "def f(x): ");
    for (int i = 0; i < 700; i++) buf_adds(&mid, "def f(x): ");
    b = mk2("qwen2.5-coder:7b", 0, NULL);
    is_int(ask2(b, big.data, 0.2, NULL, &r), LLM_OK, "cut: a first reply counting 1026 tokens of %zu bytes is taken",
           big.len);
    is_int((long)llm_backend_room(b), 0, "cut: no window is assumed from one reply");
    llm_reply_free(&r);
    is_int(ask2(b, bigger.data, 0.2, NULL, &r), LLM_ERR_REPLY, "cut: the same count for a longer request fails the reply");
    is_int(r.fail, LLM_FAIL_CONTEXT_LENGTH, "cut: as a context-length failure (the caller shortens the request)");
    ok(strstr(r.error, "kept 1026 tokens of this") != NULL, "cut: the error says what the server did: %s", r.error);
    is_int((long)llm_backend_room(b), 2048 * 4, "cut: the window is kept: 2048 tokens (Ollama keeps half, and two)");
    llm_reply_free(&r);
    is_int(file_count(logpath, "cuts longer prompts to fit its context window"), 1, "cut: noted in the log");
    is_int(ask2(b, big.data, 0.2, NULL, &r), LLM_ERR_REPLY, "cut: a request cut again fails again");
    is_int((long)llm_backend_room(b), 2048 * 4, "cut: the window stays");
    llm_reply_free(&r);
    is_int(file_count(logpath, "cuts longer prompts to fit its context window"), 1, "cut: noted once");
    is_int(ask2(b, mid.data, 0.2, NULL, &r), LLM_OK, "cut: a request within the count's bytes is taken (%zu bytes)",
           mid.len);
    llm_reply_free(&r);
    llm_backend_free(b);
    /* counts that differ (a prompt cache counting only new tokens, say) */
    b = mk2("qwen2.5-coder:7b", 0, NULL);
    size_t mark = strlen("case:cut-ollama ");
    char *ca = xasprintf("case:cache-a %s", big.data + mark), *cb = xasprintf("case:cache-b %s", bigger.data + mark);
    int both = ask2(b, ca, 0.2, NULL, &r) == LLM_OK;
    llm_reply_free(&r);
    both &= ask2(b, cb, 0.2, NULL, &r) == LLM_OK;
    llm_reply_free(&r);
    ok(both && llm_backend_room(b) == 0, "cut: low counts that differ are taken, no window assumed");
    llm_backend_free(b);
    /* the same request sent again (a retry) is no second length */
    b = mk2("qwen2.5-coder:7b", 0, NULL);
    both = ask2(b, big.data, 0.2, NULL, &r) == LLM_OK;
    llm_reply_free(&r);
    both &= ask2(b, big.data, 0.2, NULL, &r) == LLM_OK;
    llm_reply_free(&r);
    ok(both && llm_backend_room(b) == 0, "cut: the same request twice is taken twice");
    llm_backend_free(b);
    free(ca);
    free(cb);
    buf_free(&big);
    buf_free(&bigger);
    buf_free(&mid);
    cJSON_Delete(schema);
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
    if (fake_start(&g, script2)) {
        ok(0, "the second fake server starts");
    } else {
        profiles(logpath);
        fake_stop(&g);
    }
    log_close();

    ok(file_count(logpath, "llm: ") > 0, "calls were logged");
    ok(file_count(logpath, KEY) == 0, "the key never reached the log");
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
    struct llm_reply r1 = {.text = (char *)"x", .input_tokens = 100, .output_tokens = 10, .cost_usd = 0.5};
    struct llm_reply r2 = {.text = (char *)"y", .input_tokens = 50, .output_tokens = 5, .tokens_estimated = 1, .cost_usd = -1};
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
                  "\"cache_write_tokens\":0,\"output_tokens\":15,\"reasoning_tokens\":0,\"estimated_calls\":1,\"unpriced_calls\":1,"
                  "\"cost_usd\":0.5}") != NULL, "usage JSON: %s", us);
    ok(strstr(us, "\"evaluation\":{\"calls\":1,\"failures\":1,\"input_tokens\":0,\"cached_input_tokens\":0,"
                  "\"cache_write_tokens\":0,\"output_tokens\":0,\"reasoning_tokens\":0,\"estimated_calls\":0,\"unpriced_calls\":0,"
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
