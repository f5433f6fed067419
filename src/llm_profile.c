/*
 * llm_profile: the table of model profiles (see llm_profile.h) and the
 * config spelling of its fields.
 *
 * Prices are list prices in USD per million tokens, given only where they
 * are public, stable and known for the exact model name; a family row after
 * them carries the quirks without a price, so a newer or differently priced
 * variant (gpt-5-pro, o3-pro, gpt-4o-2024-05-13) is shown as unpriced rather
 * than priced wrongly; price.MODEL.* or profile.GLOB.price_* in the config
 * file fills them in. Open models behind OpenAI-compatible servers (vLLM,
 * llama.cpp, Ollama) are self-hosted and unpriced. The cached price is what a
 * prompt-cache hit costs (OpenAI: cached input; Anthropic: cache read, a
 * tenth of the input price); Anthropic's cache writes are counted at 1.25
 * times the input price by the backend. A server that reports the cost of a
 * call itself (OpenRouter's usage.cost) is believed over the table.
 *
 * A row says only what is known of its models: a parameter is sent where the
 * row positively knows the model takes it (or the config file sets it), so a
 * name in no row gets a request with nothing optional in it (OpenAI-
 * compatible: no reply limit, no temperature, no reasoning_effort, no
 * response_format) and works with next month's models; what a server refuses
 * all the same is learned from its 400 (llm.c).
 *
 * Sources, as of December 2026: OpenAI's models and pricing pages
 * (developers.openai.com/api/docs/models, .../api/docs/pricing), Anthropic's
 * model overview pages (platform.claude.com/docs/en/models/NAME/overview,
 * which list context, max output, thinking and prices) and pricing page
 * (platform.claude.com/docs/en/about-claude/pricing), each row saying which.
 */
#include "llm_profile.h"
#include "util.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MCT LLM_TOKENS_MAX_COMPLETION_TOKENS
#define MT LLM_TOKENS_MAX_TOKENS
#define JS LLM_SCHEMA_JSON_SCHEMA
#define JO LLM_SCHEMA_JSON_OBJECT
#define TOOL LLM_SCHEMA_TOOL
#define NOSCHEMA LLM_SCHEMA_NONE
#define T_NONE LLM_THINKING_NONE
#define T_FIELD LLM_THINKING_FIELD
#define T_TAGS LLM_THINKING_TAGS
#define T_BLOCKS LLM_THINKING_BLOCKS
#define TOOLA LLM_SCHEMA_TOOL_AUTO
#define OPENAI LLM_FAMILY_OPENAI
#define ANTHROPIC LLM_FAMILY_ANTHROPIC
#define NP -1, -1, -1   /* not priced */
#define SYS_ROLE 0      /* the system prompt as a system message */
#define SYS_USER 1      /* the system prompt folded into the first user message */

struct row {
    enum llm_family family;
    const char *pattern;
    enum llm_token_param token_param;
    int temperature, effort_param, max_output;
    long context;
    enum llm_schema_mode schema;
    enum llm_thinking thinking;
    double pin, pcached, pout;
    int system_user;
};

/* API family, glob, token param, temperature, reasoning_effort, max output,
 * context, schema, thinking, prices (input, cached input, output)[, system
 * folded into the first user message] */
static const struct row rows[] = {
    /* OpenAI: the gpt-5 family reasons (max_completion_tokens counts the
     * reasoning; only the default temperature) */
    {OPENAI, "gpt-5-mini", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.25, 0.025, 2.00, SYS_ROLE},
    {OPENAI, "gpt-5-mini-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.25, 0.025, 2.00, SYS_ROLE},
    {OPENAI, "gpt-5-nano", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.05, 0.005, 0.40, SYS_ROLE},
    {OPENAI, "gpt-5-nano-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.05, 0.005, 0.40, SYS_ROLE},
    {OPENAI, "gpt-5", MCT, 0, 1, 32768, 400000, JS, T_NONE, 1.25, 0.125, 10.00, SYS_ROLE},
    {OPENAI, "gpt-5-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 1.25, 0.125, 10.00, SYS_ROLE},
    {OPENAI, "gpt-5.1", MCT, 0, 1, 32768, 400000, JS, T_NONE, 1.25, 0.125, 10.00, SYS_ROLE},
    {OPENAI, "gpt-5.1-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 1.25, 0.125, 10.00, SYS_ROLE},
    /* the current gpt-5.x models (pricing page, December 2026); reasoning_effort
     * none to xhigh; gpt-5.5 has a 1.05M-token window (models page) */
    {OPENAI, "gpt-5.2", MCT, 0, 1, 32768, 400000, JS, T_NONE, 1.75, 0.175, 14.00, SYS_ROLE},
    {OPENAI, "gpt-5.2-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 1.75, 0.175, 14.00, SYS_ROLE},
    {OPENAI, "gpt-5.4", MCT, 0, 1, 32768, 400000, JS, T_NONE, 2.50, 0.25, 15.00, SYS_ROLE},
    {OPENAI, "gpt-5.4-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 2.50, 0.25, 15.00, SYS_ROLE},
    {OPENAI, "gpt-5.4-mini", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.75, 0.075, 4.50, SYS_ROLE},
    {OPENAI, "gpt-5.4-mini-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.75, 0.075, 4.50, SYS_ROLE},
    {OPENAI, "gpt-5.4-nano", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.20, 0.02, 1.25, SYS_ROLE},
    {OPENAI, "gpt-5.4-nano-20*", MCT, 0, 1, 32768, 400000, JS, T_NONE, 0.20, 0.02, 1.25, SYS_ROLE},
    {OPENAI, "gpt-5.5", MCT, 0, 1, 32768, 1050000, JS, T_NONE, 5.00, 0.50, 30.00, SYS_ROLE},
    {OPENAI, "gpt-5.5-20*", MCT, 0, 1, 32768, 1050000, JS, T_NONE, 5.00, 0.50, 30.00, SYS_ROLE},
    /* any other gpt-5 model (gpt-5.6, -pro, -codex...): the family's quirks, unpriced */
    {OPENAI, "gpt-5*", MCT, 0, 1, 32768, 400000, JS, T_NONE, NP, SYS_ROLE},
    /* o-series reasoning models */
    {OPENAI, "o4-mini", MCT, 0, 1, 32768, 200000, JS, T_NONE, 1.10, 0.275, 4.40, SYS_ROLE},
    {OPENAI, "o4-mini-20*", MCT, 0, 1, 32768, 200000, JS, T_NONE, 1.10, 0.275, 4.40, SYS_ROLE},
    {OPENAI, "o3-mini", MCT, 0, 1, 32768, 200000, JS, T_NONE, 1.10, 0.55, 4.40, SYS_ROLE},
    {OPENAI, "o3-mini-20*", MCT, 0, 1, 32768, 200000, JS, T_NONE, 1.10, 0.55, 4.40, SYS_ROLE},
    {OPENAI, "o3", MCT, 0, 1, 32768, 200000, JS, T_NONE, 2.00, 0.50, 8.00, SYS_ROLE},
    {OPENAI, "o3-20*", MCT, 0, 1, 32768, 200000, JS, T_NONE, 2.00, 0.50, 8.00, SYS_ROLE},
    {OPENAI, "o1", MCT, 0, 1, 32768, 200000, JS, T_NONE, 15.00, 7.50, 60.00, SYS_ROLE},
    {OPENAI, "o1-20*", MCT, 0, 1, 32768, 200000, JS, T_NONE, 15.00, 7.50, 60.00, SYS_ROLE},
    /* o1-mini and o1-preview refuse the system role (400 unsupported_value,
     * param messages[0].role), reasoning_effort and structured output */
    {OPENAI, "o1-mini*", MCT, 0, 0, 32768, 128000, NOSCHEMA, T_NONE, NP, SYS_USER},
    {OPENAI, "o1-preview*", MCT, 0, 0, 32768, 128000, NOSCHEMA, T_NONE, NP, SYS_USER},
    {OPENAI, "o[1-9]*", MCT, 0, 1, 32768, 200000, JS, T_NONE, NP, SYS_ROLE},
    /* gpt-4.1 and gpt-4o: chat models */
    {OPENAI, "gpt-4.1-nano*", MT, 1, 0, 4096, 1047576, JS, T_NONE, 0.10, 0.025, 0.40, SYS_ROLE},
    {OPENAI, "gpt-4.1-mini*", MT, 1, 0, 4096, 1047576, JS, T_NONE, 0.40, 0.10, 1.60, SYS_ROLE},
    {OPENAI, "gpt-4.1*", MT, 1, 0, 4096, 1047576, JS, T_NONE, 2.00, 0.50, 8.00, SYS_ROLE},
    {OPENAI, "gpt-4o-mini", MT, 1, 0, 4096, 128000, JS, T_NONE, 0.15, 0.075, 0.60, SYS_ROLE},
    {OPENAI, "gpt-4o-mini-2024-07-18", MT, 1, 0, 4096, 128000, JS, T_NONE, 0.15, 0.075, 0.60, SYS_ROLE},
    {OPENAI, "gpt-4o", MT, 1, 0, 4096, 128000, JS, T_NONE, 2.50, 1.25, 10.00, SYS_ROLE},
    {OPENAI, "gpt-4o-2024-08-06", MT, 1, 0, 4096, 128000, JS, T_NONE, 2.50, 1.25, 10.00, SYS_ROLE},
    {OPENAI, "gpt-4o-2024-11-20", MT, 1, 0, 4096, 128000, JS, T_NONE, 2.50, 1.25, 10.00, SYS_ROLE},
    {OPENAI, "gpt-4o*", MT, 1, 0, 4096, 128000, JS, T_NONE, NP, SYS_ROLE},
    /* open models behind OpenAI-compatible servers (vLLM, llama.cpp server,
     * Ollama /v1): names as Ollama (qwen3:8b) and Hugging Face
     * (Qwen/Qwen3-8B) spell them; each accepts response_format json_schema */
    {OPENAI, "*qwen2.5-coder*", MT, 1, 0, 4096, 32768, JS, T_NONE, NP, SYS_ROLE},
    {OPENAI, "*qwen3-coder*", MT, 1, 0, 8192, 262144, JS, T_NONE, NP, SYS_ROLE},
    {OPENAI, "*qwen3*instruct-2507*", MT, 1, 0, 8192, 262144, JS, T_NONE, NP, SYS_ROLE},
    {OPENAI, "*qwen3*", MT, 1, 0, 16384, 32768, JS, T_TAGS, NP, SYS_ROLE},
    {OPENAI, "*qwq*", MT, 1, 0, 16384, 131072, JS, T_TAGS, NP, SYS_ROLE},
    {OPENAI, "deepseek-reasoner", MT, 1, 0, 32768, 65536, NOSCHEMA, T_FIELD, NP, SYS_ROLE},
    {OPENAI, "*deepseek-r1*", MT, 1, 0, 16384, 131072, JS, T_TAGS, NP, SYS_ROLE},
    {OPENAI, "deepseek-chat", MT, 1, 0, 8192, 65536, JO, T_NONE, NP, SYS_ROLE},
    {OPENAI, "*deepseek-v3*", MT, 1, 0, 8192, 131072, JS, T_NONE, NP, SYS_ROLE},
    {OPENAI, "*llama*3*", MT, 1, 0, 4096, 131072, JS, T_NONE, NP, SYS_ROLE},
    /* Gemini through its OpenAI-compatible endpoint (also as google/gemini-*
     * behind routers): 2.5 models think by default, and the thinking counts
     * against the reply limit; 1M-token context */
    {OPENAI, "*gemini-2.5*", MT, 1, 0, 16384, 1048576, JS, T_NONE, NP, SYS_ROLE},
    {OPENAI, "*gemini*", MT, 1, 0, 8192, 1048576, JS, T_NONE, NP, SYS_ROLE},
    /* OpenAI's open-weight gpt-oss (Ollama gpt-oss:20b, vLLM openai/gpt-oss-120b,
     * Groq, LM Studio): reasons before answering, the reasoning in a field
     * (reasoning or reasoning_content) and counted against max_tokens;
     * reasoning_effort taken; 128k context. No response_format: with its
     * harmony format, servers' structured output returned empty or broken
     * content (Ollama 0.11 "Structured output ... gpt-oss:20b not working",
     * vLLM "not correctly enforced when using GPT-OSS"), so JSON is asked
     * for in the text */
    {OPENAI, "*gpt-oss*", MT, 1, 1, 16384, 131072, NOSCHEMA, T_FIELD, NP, SYS_ROLE},
    /* Mistral's reasoning models: thinking comes back as a content part
     * (llm_openai.c) and counts against max_tokens; 128k context, best
     * under 40k (the model card's advice) */
    {OPENAI, "magistral*", MT, 1, 0, 16384, 40960, JO, T_FIELD, NP, SYS_ROLE},
    /* anything else OpenAI-compatible: nothing optional is sent (no reply
     * limit: the server's own; no temperature; plain JSON in the text, or
     * json_object with json_mode = true in the config) */
    {OPENAI, "*", MT, 0, 0, 0, 0, NOSCHEMA, T_NONE, NP, SYS_ROLE},
    /* Anthropic: structured output through tool use; thinking blocks from
     * 3.7 on (only when thinking is enabled, which these requests do not ask
     * for, except on the models that always think).
     * The Claude 5 generation (model overview pages, December 2026): 1M-token
     * window, 128K max output, adaptive thinking on by default (always on for
     * Opus 5.5 and Fable 5.1) and spending the reply limit, so the limit is
     * sized for it; a temperature other than the default is refused ("may
     * only be set to 1 when thinking is enabled or in adaptive mode") and so
     * is forced tool use (the tool is offered, not forced) */
    {ANTHROPIC, "claude-fable-5-1*", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 10.00, 1.00, 50.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-5-5*", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 4.00, 0.40, 20.00, SYS_ROLE},
    {ANTHROPIC, "claude-sonnet-5-5*", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 2.00, 0.20, 10.00, SYS_ROLE},
    /* Haiku 5.5 is priced "from $0.10 / $0.50": the rate depends on more
     * than the name, so it is left unpriced */
    {ANTHROPIC, "claude-haiku-5-5*", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, NP, SYS_ROLE},
    /* legacy Opus 5 and Sonnet 5 (their overview pages: $5 / $0.50 / $25 and $2 / $0.20 / $10) */
    {ANTHROPIC, "claude-opus-5", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 5.00, 0.50, 25.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-5-20*", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 5.00, 0.50, 25.00, SYS_ROLE},
    {ANTHROPIC, "claude-sonnet-5", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 2.00, 0.20, 10.00, SYS_ROLE},
    {ANTHROPIC, "claude-sonnet-5-20*", MT, 0, 0, 32768, 1000000, TOOLA, T_BLOCKS, 2.00, 0.20, 10.00, SYS_ROLE},
    /* Opus 4.7 and 4.8: temperature deprecated (400 "`temperature` is
     * deprecated for this model."); Opus 4.6 and later cost $5 / $0.50 /
     * $25 with a 1M-token window, Opus 4.5 the same prices with 200K
     * (overview pages) */
    {ANTHROPIC, "claude-opus-4-8*", MT, 0, 0, 16384, 1000000, TOOL, T_BLOCKS, 5.00, 0.50, 25.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-4-7*", MT, 0, 0, 16384, 1000000, TOOL, T_BLOCKS, 5.00, 0.50, 25.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-4-6*", MT, 1, 0, 16384, 1000000, TOOL, T_BLOCKS, 5.00, 0.50, 25.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-4-5*", MT, 1, 0, 16384, 200000, TOOL, T_BLOCKS, 5.00, 0.50, 25.00, SYS_ROLE},
    /* Opus 4 and 4.1: $15 / $1.50 / $75 (pricing page) */
    {ANTHROPIC, "claude-opus-4-1*", MT, 1, 0, 8192, 200000, TOOL, T_BLOCKS, 15.00, 1.50, 75.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-4-0*", MT, 1, 0, 8192, 200000, TOOL, T_BLOCKS, 15.00, 1.50, 75.00, SYS_ROLE},
    {ANTHROPIC, "claude-opus-4-20*", MT, 1, 0, 8192, 200000, TOOL, T_BLOCKS, 15.00, 1.50, 75.00, SYS_ROLE},
    /* another Opus 4.x: the newer ones refuse a temperature; unpriced */
    {ANTHROPIC, "claude-opus-4*", MT, 0, 0, 16384, 200000, TOOL, T_BLOCKS, NP, SYS_ROLE},
    {ANTHROPIC, "claude-sonnet-4*", MT, 1, 0, 8192, 200000, TOOL, T_BLOCKS, 3.00, 0.30, 15.00, SYS_ROLE},
    {ANTHROPIC, "claude-haiku-4*", MT, 1, 0, 8192, 200000, TOOL, T_BLOCKS, 1.00, 0.10, 5.00, SYS_ROLE},
    {ANTHROPIC, "claude-3-7-sonnet*", MT, 1, 0, 8192, 200000, TOOL, T_BLOCKS, 3.00, 0.30, 15.00, SYS_ROLE},
    {ANTHROPIC, "claude-3-5-sonnet*", MT, 1, 0, 8192, 200000, TOOL, T_NONE, 3.00, 0.30, 15.00, SYS_ROLE},
    {ANTHROPIC, "claude-3-5-haiku*", MT, 1, 0, 8192, 200000, TOOL, T_NONE, 0.80, 0.08, 4.00, SYS_ROLE},
    /* any other Claude: every Claude takes tools (offered, not forced, as a
     * model that thinks needs), no temperature, room for thinking */
    {ANTHROPIC, "claude-*", MT, 0, 0, 32768, 200000, TOOLA, T_BLOCKS, NP, SYS_ROLE},
    /* another model behind the Anthropic API: max_tokens (required) and
     * nothing optional */
    {ANTHROPIC, "*", MT, 0, 0, LLM_ANTHROPIC_DEFAULT_MAX, 0, NOSCHEMA, T_NONE, NP, SYS_ROLE},
};

int llm_profile_match(const char *glob, const char *model)
{
    return glob && model && fnmatch(glob, model, FNM_CASEFOLD) == 0;
}

/* The first row of family matching name (or its dotted version spelled with
 * dashes), or NULL; the family's default row "*" only when with_default. */
static const struct row *find_row(enum llm_family family, const char *name, const char *dashed, int with_default)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        if (rows[i].family != family) continue;
        if (!with_default && !strcmp(rows[i].pattern, "*")) continue;
        if (llm_profile_match(rows[i].pattern, name) || (dashed && llm_profile_match(rows[i].pattern, dashed)))
            return &rows[i];
    }
    return NULL;
}

/* The models OpenAI serves on the Responses API alone: chat completions
 * answers them 404 "This model is only supported in v1/responses and not in
 * v1/chat/completions." (platform.openai.com/docs/models: gpt-5-pro,
 * gpt-5-codex, gpt-5.1-codex(-mini/-max), codex-mini-latest, o3-pro,
 * o1-pro). Kept apart from the rows, which give the quirks of the family. */
static const char *const responses_only[] = {"gpt-5*-pro", "gpt-5*-pro-20*", "*-codex", "*-codex-*",
                                             "codex-*", "o3-pro", "o3-pro-20*", "o1-pro", "o1-pro-20*"};

/* Anthropic's minimum cacheable prompt length per model, in tokens: a prefix
 * marked cache_control that is shorter is processed without caching (Anthropic,
 * "Prompt caching", Cache limitations: docs.claude.com/en/docs/build-with-claude/
 * prompt-caching): 4096 for Claude Opus 4.5 and later and Haiku 4.5, 2048 for
 * Sonnet 4.6 and Haiku 3.5 / 3, 1024 for Opus 4.1 / 4, Sonnet 4.5 / 4, Sonnet
 * 3.7 and Opus 3. The Claude 5 generation is not listed there; it is taken
 * at 4096 like the newest listed, and a name not matched at all gets 4096
 * too (the policy then sizes the outline for the largest minimum, which also
 * passes a smaller one). Matched after a router's "vendor/" prefix, with "."
 * or "-" between version numbers. Kept apart from the rows so that a row
 * added for a new model need not know it. */
static const struct {
    const char *pattern;
    int tokens;
} cache_minimums[] = {
    {"claude-opus-4[-.][5-9]*", 4096},  {"claude-haiku-4*", 4096},     {"claude-sonnet-4[-.][6-9]*", 2048},
    {"claude-sonnet-4*", 1024},         {"claude-opus-4*", 1024},      {"claude-3[-.]7-sonnet*", 1024},
    {"claude-3[-.]5-sonnet*", 1024},    {"claude-3-opus*", 1024},      {"claude-3[-.]5-haiku*", 2048},
    {"claude-3-haiku*", 2048},          {"*", 4096},
};

static int cache_minimum(const char *model)
{
    const char *slash = model ? strrchr(model, '/') : NULL;
    const char *name = slash ? slash + 1 : model ? model : "";
    for (size_t i = 0; i < ARRAY_LEN(cache_minimums); i++)
        if (llm_profile_match(cache_minimums[i].pattern, name)) return cache_minimums[i].tokens;
    return 0;
}

void llm_profile_lookup(enum llm_family family, const char *model, struct llm_profile *out)
{
    if (family != LLM_FAMILY_ANTHROPIC) family = LLM_FAMILY_OPENAI;
    const char *full = model ? model : "";
    /* a router's vendor prefix (openai/gpt-5, anthropic/claude-sonnet-4.5):
     * the part after the last '/' */
    const char *slash = strrchr(full, '/');
    const char *name = slash ? slash + 1 : full;
    /* dots between digits as dashes: claude-sonnet-4.5 is claude-sonnet-4-5 */
    char dashed[160];
    snprintf(dashed, sizeof dashed, "%s", name);
    int changed = 0;
    for (char *p = dashed; *p; p++)
        if (*p == '.' && p > dashed && p[-1] >= '0' && p[-1] <= '9' && p[1] >= '0' && p[1] <= '9') {
            *p = '-';
            changed = 1;
        }
    const char *alt = changed ? dashed : NULL;
    const struct row *r = find_row(family, full, NULL, 0);
    if (!r && slash) r = find_row(family, name, alt, 0);
    if (!r && !slash && alt) r = find_row(family, name, alt, 0);
    /* Claude behind an OpenAI-compatible router or proxy: the Claude row's
     * quirks and prices, over the OpenAI-compatible API */
    int claude_via_openai = 0;
    if (!r && family == LLM_FAMILY_OPENAI && !strncasecmp(name, "claude-", 7)) {
        r = find_row(LLM_FAMILY_ANTHROPIC, name, alt, 0);
        claude_via_openai = r != NULL;
    }
    if (!r) r = find_row(family, full, NULL, 1);
    memset(out, 0, sizeof *out);
    out->family = family;
    out->pattern = r->pattern;
    out->token_param = r->token_param;
    out->temperature = r->temperature;
    out->effort_param = r->effort_param;
    out->max_output = r->max_output;
    out->context = r->context;
    out->schema = r->schema;
    out->thinking = r->thinking;
    out->system_user = r->system_user;
    /* every server of the table's providers streams (OpenAI's, Anthropic's
     * and the OpenAI-compatible servers' chat APIs document "stream"); one
     * that cannot is set off by profile.GLOB.stream = off or --no-stream */
    out->stream = 1;
    out->price_input = r->pin;
    out->price_cached = r->pcached;
    out->price_output = r->pout;
    if (claude_via_openai) {
        /* structured output as response_format json_schema; the router
         * passes the reasoning in a field, not as blocks */
        out->schema = LLM_SCHEMA_JSON_SCHEMA;
        out->thinking = LLM_THINKING_FIELD;
    }
    out->api = LLM_API_CHAT;
    /* only Anthropic's cache needs a breakpoint past a minimum; OpenAI's
     * prefix cache keeps what it can by itself */
    if (family == LLM_FAMILY_ANTHROPIC) out->cache_min = cache_minimum(model);
    if (family == LLM_FAMILY_OPENAI && model && !strchr(model, '/'))   /* a router's vendor/name: its own API */
        for (size_t i = 0; i < ARRAY_LEN(responses_only) && model; i++)
            if (llm_profile_match(responses_only[i], model)) out->api = LLM_API_RESPONSES;
}

static const char *const token_names[] = {"max_tokens", "max_completion_tokens"};
static const char *const schema_names[] = {"none", "json_object", "json_schema", "tool", "tool_auto"};
static const char *const thinking_names[] = {"none", "field", "tags", "blocks"};
static const char *const efforts[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
static const char *const api_names[] = {"chat", "responses"};

const char *llm_api_name(enum llm_api a) { return api_names[a == LLM_API_RESPONSES]; }
const char *llm_family_name(enum llm_family w) { return w == LLM_FAMILY_ANTHROPIC ? "anthropic" : "openai"; }

const char *llm_token_param_name(enum llm_token_param t) { return token_names[t == MCT]; }
const char *llm_schema_name(enum llm_schema_mode s)
{
    return (unsigned)s < ARRAY_LEN(schema_names) ? schema_names[s] : "none";
}
const char *llm_thinking_name(enum llm_thinking t) { return (unsigned)t < 4 ? thinking_names[t] : "none"; }

static int name_index(const char *const *names, size_t n, const char *v)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(names[i], v) == 0) return (int)i;
    return -1;
}

int llm_parse_number(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi) return -1;
    *out = d;
    return 0;
}

int llm_profile_set(struct llm_profile *p, const char *field, const char *value, char *err, size_t errlen)
{
    struct llm_profile scratch;
    if (!p) p = &scratch;
    double d;
    int k;
    if (!strcmp(field, "api")) {
        if ((k = name_index(api_names, 2, value)) < 0) goto bad;
        p->api = k ? LLM_API_RESPONSES : LLM_API_CHAT;
    } else if (!strcmp(field, "token_param")) {
        if ((k = name_index(token_names, 2, value)) < 0) goto bad;
        p->token_param = k ? MCT : MT;
    } else if (!strcmp(field, "temperature")) {
        if (!strcasecmp(value, "allowed")) p->temperature = 1;
        else if (!strcasecmp(value, "default")) p->temperature = 0;
        else goto bad;
    } else if (!strcmp(field, "reasoning_effort")) {
        if (!strcasecmp(value, "default")) {
            p->effort[0] = 0;
        } else if ((k = name_index(efforts, ARRAY_LEN(efforts), value)) >= 0) {
            p->effort_param = 1;
            snprintf(p->effort, sizeof p->effort, "%s", efforts[k]);
        } else {
            goto bad;
        }
    } else if (!strcmp(field, "max_output")) {
        if (llm_parse_number(value, 0, 1000000, &d) || d != floor(d)) goto bad;
        p->max_output = (int)d;
    } else if (!strcmp(field, "context")) {
        if (llm_parse_number(value, 0, 100000000, &d) || d != floor(d)) goto bad;
        p->context = (long)d;
    } else if (!strcmp(field, "schema")) {
        if ((k = name_index(schema_names, ARRAY_LEN(schema_names), value)) < 0) goto bad;
        p->schema = (enum llm_schema_mode)k;
    } else if (!strcmp(field, "thinking")) {
        if ((k = name_index(thinking_names, 4, value)) < 0) goto bad;
        p->thinking = (enum llm_thinking)k;
    } else if (!strcmp(field, "system")) {
        if (!strcasecmp(value, "role")) p->system_user = 0;
        else if (!strcasecmp(value, "user")) p->system_user = 1;
        else goto bad;
    } else if (!strcmp(field, "price_input") || !strcmp(field, "price_cached") || !strcmp(field, "price_output")) {
        if (llm_parse_number(value, 0, 1e6, &d)) goto bad;
        if (field[6] == 'i') p->price_input = d;
        else if (field[6] == 'c') p->price_cached = d;
        else p->price_output = d;
    } else if (!strcmp(field, "cache_min")) {
        if (llm_parse_number(value, 0, 1000000, &d) || d != floor(d)) goto bad;
        p->cache_min = (int)d;
    } else if (!strcmp(field, "stream")) {
        static const char *const stream_words[] = {"off", "on", "false", "true", "no", "yes"};
        if ((k = name_index(stream_words, ARRAY_LEN(stream_words), value)) < 0) goto bad;
        p->stream = k % 2;
    } else {
        snprintf(err, errlen,
                 "'%s' is not a profile field; use api, token_param, temperature, reasoning_effort, max_output, "
                 "context, schema, thinking, system, price_input, price_cached, price_output, cache_min or stream",
                 field);
        return -1;
    }
    return 0;
bad:;
    const char *takes = !strcmp(field, "api") ? "chat or responses"
                      : !strcmp(field, "token_param") ? "max_tokens or max_completion_tokens"
                      : !strcmp(field, "temperature") ? "allowed or default"
                      : !strcmp(field, "reasoning_effort") ? "default (not sent), none, minimal, low, medium, high or xhigh"
                      : !strcmp(field, "max_output") ? "a whole number of tokens from 0 (none sent) to 1000000"
                      : !strcmp(field, "context") ? "a whole number of tokens (0: unknown)"
                      : !strcmp(field, "schema") ? "json_schema, json_object, tool, tool_auto or none"
                      : !strcmp(field, "system") ? "role or user"
                      : !strcmp(field, "thinking") ? "none, field, tags or blocks"
                      : !strcmp(field, "cache_min") ? "a whole number of tokens (0: no minimum known)"
                      : !strcmp(field, "stream") ? "on or off"
                      : "a price in USD per million tokens (a number >= 0)";
    (void)value;   /* never shown: a config line's value may be a key */
    snprintf(err, errlen, "profile field %s takes %s", field, takes);
    return -1;
}

static void price_line(FILE *fp, const char *name, double v)
{
    if (v >= 0) fprintf(fp, "%s = %g\n", name, v);
    else fprintf(fp, "%s = (not priced)\n", name);
}

void llm_profile_print(FILE *fp, const char *model, const struct llm_profile *p)
{
    fprintf(fp, "model = %s\nprovider = %s\nmatched = %s\n", model ? model : "(none)", llm_family_name(p->family),
            p->pattern);
    fprintf(fp, "token_param = %s\n", llm_token_param_name(p->token_param));
    fprintf(fp, "temperature = %s\n", p->temperature ? "allowed" : "default");
    fprintf(fp, "reasoning_effort = %s%s\n", p->effort[0] ? p->effort : "default",
            p->effort_param ? "" : " (the model takes no reasoning_effort)");
    if (p->max_output) fprintf(fp, "max_output = %d\n", p->max_output);
    else if (p->family == LLM_FAMILY_ANTHROPIC)
        fprintf(fp, "max_output = 0 (%d sent: the API requires one)\n", LLM_ANTHROPIC_DEFAULT_MAX);
    else fprintf(fp, "max_output = 0 (none sent: the server's own)\n");
    fprintf(fp, "context = %ld\n", p->context);
    fprintf(fp, "schema = %s\nthinking = %s\n", llm_schema_name(p->schema), llm_thinking_name(p->thinking));
    fprintf(fp, "system = %s\n", p->system_user ? "user" : "role");
    price_line(fp, "price_input", p->price_input);
    price_line(fp, "price_cached", p->price_cached);
    price_line(fp, "price_output", p->price_output);
    if (p->family != LLM_FAMILY_ANTHROPIC) fprintf(fp, "api = %s\n", llm_api_name(p->api));
    if (p->cache_min) fprintf(fp, "cache_min = %d\n", p->cache_min);
    fprintf(fp, "stream = %s\n", p->stream ? "on" : "off");
}
