/*
 * llm_profile: what a chat model expects of a request and how it answers,
 * in one table (llm_profile.c). A row matches a provider and a model-name
 * glob (fnmatch, case-insensitive); the first match wins, so the table lists
 * the most specific patterns first and ends with a default row per provider.
 * A row gives:
 *   token_param   the name of the reply limit: max_tokens, or
 *                 max_completion_tokens (OpenAI's reasoning models, which
 *                 count their reasoning against it)
 *   temperature   whether a temperature may be sent (reasoning models accept
 *                 only their default, so none is sent; a row that does not
 *                 positively know the model takes one sends none, and so
 *                 does a name in no row, unless the config file sets
 *                 temperature)
 *   effort_param  whether the model takes reasoning_effort; effort is the
 *                 value sent ("": none is sent, the server's default holds;
 *                 the config sets one)
 *   max_output    the reply limit sent when neither the request nor the
 *                 config names one; thinking models need far more than 2048.
 *                 0: none is sent (OpenAI-compatible servers then use their
 *                 own, the rest of the context window); the Anthropic API
 *                 requires one and gets LLM_ANTHROPIC_DEFAULT_MAX
 *   context       the context window in tokens (0: unknown)
 *   schema        structured output: json_schema (response_format with the
 *                 role's schema), json_object, tool (Anthropic tool use with
 *                 input_schema, forced with tool_choice), tool_auto (the
 *                 tool offered, not forced: a model that always thinks
 *                 refuses forced tool use) or none (JSON asked for in the
 *                 text)
 *   thinking      where a thinking model puts its reasoning: none, field
 *                 (message.reasoning_content), tags (<think>...</think> in the
 *                 content) or blocks (Anthropic thinking blocks). Every
 *                 backend strips and separates all of them whatever the row
 *                 says; the row documents what to expect and --show-profile
 *                 prints it
 *   system        role (the system prompt as a system message) or user
 *                 (folded into the first user message: OpenAI's o1-mini and
 *                 o1-preview refuse the system role)
 *   prices        USD per million input, cached input and output tokens
 *                 (< 0: not priced)
 * A model name is matched as written, then without a router's vendor prefix
 * (openai/gpt-5, anthropic/claude-sonnet-4.5: the part after the last '/'),
 * then with dots between digits as dashes (claude-sonnet-4.5 as Anthropic
 * spells it, claude-sonnet-4-5); a Claude name behind an OpenAI-compatible
 * router takes the Claude row's quirks and prices.
 *   api           chat (POST /chat/completions) or responses (POST
 *                 /responses); the models OpenAI serves on the Responses API
 *                 alone (gpt-5-pro, o3-pro, o1-pro, the *-codex models; list
 *                 in llm_profile.c) get responses whatever their row
 *   cache_min     the shortest prompt prefix, in tokens, that the provider's
 *                 prompt cache keeps (Anthropic documents one per model; 0:
 *                 none known); the LLM policy sizes a question's repository
 *                 outline so that the cached prefix reaches it (policy_llm.h)
 *   stream        on (every row): each request asks for its reply as an
 *                 event stream, read as it arrives (llm_stream.h); off for
 *                 a server or proxy that cannot stream (--no-stream and the
 *                 config's stream = false set it off for every model)
 * The config file overrides any field per model glob
 * (profile.GLOB.FIELD = VALUE, llm_profile_set) and prices with
 * price.MODEL.input/.output (exact names); see llm_config.h.
 */
#ifndef DRQA_LLM_PROFILE_H
#define DRQA_LLM_PROFILE_H

#include <stdio.h>

/* The reply limit sent to the Anthropic API (which requires one) when the
 * profile sends none */
#define LLM_ANTHROPIC_DEFAULT_MAX 16384

enum llm_token_param { LLM_TOKENS_MAX_TOKENS, LLM_TOKENS_MAX_COMPLETION_TOKENS };
enum llm_schema_mode { LLM_SCHEMA_NONE, LLM_SCHEMA_JSON_OBJECT, LLM_SCHEMA_JSON_SCHEMA, LLM_SCHEMA_TOOL,
                       LLM_SCHEMA_TOOL_AUTO };
enum llm_thinking { LLM_THINKING_NONE, LLM_THINKING_FIELD, LLM_THINKING_TAGS, LLM_THINKING_BLOCKS };
/* The OpenAI API a request goes to: chat completions, or the Responses API
 * (POST /responses), the only one some models answer on. */
enum llm_api { LLM_API_CHAT, LLM_API_RESPONSES };
/* The API family a provider speaks (its row in llm_provider.c): OpenAI's
 * (chat completions or Responses, which every OpenAI-compatible server
 * copies) or Anthropic's Messages API. It picks the rows its models take
 * and what the API requires of a request. */
enum llm_family { LLM_FAMILY_OPENAI, LLM_FAMILY_ANTHROPIC };

struct llm_profile {
    enum llm_family family;        /* the API the rows were taken for */
    const char *pattern;           /* model-name glob of the row that matched */
    enum llm_token_param token_param;
    int temperature;               /* 1: a temperature may be sent */
    int effort_param;              /* 1: the model takes reasoning_effort */
    char effort[12];               /* "": not sent; else none, minimal, low, medium, high, xhigh */
    int max_output;
    long context;
    enum llm_schema_mode schema;
    enum llm_thinking thinking;
    int system_user;               /* 1: the system prompt goes into the first user message */
    double price_input, price_cached, price_output;   /* USD per million; < 0: unknown */
    enum llm_api api;              /* OpenAI-compatible providers: chat or responses */
    int cache_min;                 /* smallest cacheable prefix in tokens; 0: none known */
    int stream;                    /* 1: replies are asked for as event streams */
};

/* The table's row for a model over the API family, copied into out (the
 * default row when nothing more specific matches). */
void llm_profile_lookup(enum llm_family family, const char *model, struct llm_profile *out);

/* Sets one field from its config spelling: api (chat|responses), token_param,
 * temperature (allowed|default), reasoning_effort (default|none|minimal|low|
 * medium|high|xhigh; a value also marks the parameter as taken), max_output
 * (0: not sent), context, schema (json_schema|json_object|tool|tool_auto|
 * none), thinking (none|field|tags|blocks), system (role|user), price_input,
 * price_cached, price_output, cache_min, stream (on|off). p may be
 * NULL to only check. Returns 0, or -1 with err saying what the field takes. */
int llm_profile_set(struct llm_profile *p, const char *field, const char *value, char *err, size_t errlen);

/* The number v spells, into *out when it is finite and within lo-hi: 0,
 * else -1 (a config value: profile fields, prices, temperature). */
int llm_parse_number(const char *v, double lo, double hi, double *out);
/* Whether glob matches model (case-insensitive fnmatch). */
int llm_profile_match(const char *glob, const char *model);

const char *llm_token_param_name(enum llm_token_param t);   /* "max_tokens", ... */
const char *llm_schema_name(enum llm_schema_mode s);        /* "json_schema", ... */
const char *llm_thinking_name(enum llm_thinking t);         /* "tags", ... */
const char *llm_api_name(enum llm_api a);                   /* "chat" or "responses" */
const char *llm_family_name(enum llm_family f);             /* "openai" or "anthropic" */

/* The profile in `key = value` lines, the spelling the config file takes. */
void llm_profile_print(FILE *fp, const char *model, const struct llm_profile *p);

#endif
