/* Unit tests for the model profile table (llm_profile.c): the rows of the
 * current model generation, their prices, a router's vendor prefix and
 * Anthropic's dashes for OpenRouter's dots, a name in no row (nothing
 * optional), and the config spelling of the fields. */
#include "tap.h"
#include "llm_config.h"
#include "llm_profile.h"
#include "util.h"

#include <math.h>
#include <string.h>

struct want {
    const char *provider, *model;
    int temperature;     /* 1: a temperature may be sent */
    int max_output;      /* 0: none sent */
    const char *schema;
    double pin, pcached, pout;   /* < 0: unpriced */
    int system_user;
};

static const struct want wants[] = {
    /* Opus 4.7 / 4.8 deprecate temperature; Opus 4.6 and later cost $5 / $0.50 / $25 */
    {"anthropic", "claude-opus-4-7", 0, 16384, "tool", 5.00, 0.50, 25.00, 0},
    {"anthropic", "claude-opus-4-8", 0, 16384, "tool", 5.00, 0.50, 25.00, 0},
    {"anthropic", "claude-opus-4-6", 1, 16384, "tool", 5.00, 0.50, 25.00, 0},
    {"anthropic", "claude-opus-4-5-20251101", 1, 16384, "tool", 5.00, 0.50, 25.00, 0},
    {"anthropic", "claude-opus-4-1-20250805", 1, 8192, "tool", 15.00, 1.50, 75.00, 0},
    {"anthropic", "claude-opus-4-20250514", 1, 8192, "tool", 15.00, 1.50, 75.00, 0},
    {"anthropic", "claude-opus-4-9", 0, 16384, "tool", -1, -1, -1, 0},
    /* the Claude 5 generation: no temperature, room for thinking, the tool not forced */
    {"anthropic", "claude-opus-5-5", 0, 32768, "tool_auto", 4.00, 0.40, 20.00, 0},
    {"anthropic", "claude-sonnet-5-5", 0, 32768, "tool_auto", 2.00, 0.20, 10.00, 0},
    {"anthropic", "claude-haiku-5-5", 0, 32768, "tool_auto", -1, -1, -1, 0},
    {"anthropic", "claude-fable-5-1", 0, 32768, "tool_auto", 10.00, 1.00, 50.00, 0},
    {"anthropic", "claude-opus-5", 0, 32768, "tool_auto", 5.00, 0.50, 25.00, 0},
    {"anthropic", "claude-sonnet-5", 0, 32768, "tool_auto", 2.00, 0.20, 10.00, 0},
    {"anthropic", "claude-sonnet-4-5-20250929", 1, 8192, "tool", 3.00, 0.30, 15.00, 0},
    /* a Claude not in the table: tools offered, no temperature, room for thinking */
    {"anthropic", "claude-opus-6", 0, 32768, "tool_auto", -1, -1, -1, 0},
    /* another model behind the Anthropic API: only max_tokens (required) */
    {"anthropic", "kimi-k2", 0, LLM_ANTHROPIC_DEFAULT_MAX, "none", -1, -1, -1, 0},
    /* gpt-5.x */
    {"openai", "gpt-5.5", 0, 32768, "json_schema", 5.00, 0.50, 30.00, 0},
    {"openai", "gpt-5.4-mini", 0, 32768, "json_schema", 0.75, 0.075, 4.50, 0},
    {"openai", "gpt-5.2", 0, 32768, "json_schema", 1.75, 0.175, 14.00, 0},
    {"openai", "gpt-5.6", 0, 32768, "json_schema", -1, -1, -1, 0},
    {"openai", "o1-mini", 0, 32768, "none", -1, -1, -1, 1},
    {"openai", "o1-preview-2024-09-12", 0, 32768, "none", -1, -1, -1, 1},
    /* a router's vendor prefix, OpenRouter's dots */
    {"openai", "openai/gpt-5", 0, 32768, "json_schema", 1.25, 0.125, 10.00, 0},
    {"openai", "openai/gpt-5.1", 0, 32768, "json_schema", 1.25, 0.125, 10.00, 0},
    {"openai", "anthropic/claude-sonnet-4.5", 1, 8192, "json_schema", 3.00, 0.30, 15.00, 0},
    {"openai", "anthropic/claude-opus-4.7", 0, 16384, "json_schema", 5.00, 0.50, 25.00, 0},
    {"openai", "anthropic/claude-sonnet-5.5", 0, 32768, "json_schema", 2.00, 0.20, 10.00, 0},
    {"openai", "qwen/qwen3-coder", 1, 8192, "json_schema", -1, -1, -1, 0},
    /* a name in no row: nothing optional */
    {"openai", "acme-llm-7", 0, 0, "none", -1, -1, -1, 0},
    {"openai", "vendor/acme-llm-7.5", 0, 0, "none", -1, -1, -1, 0},
};

static int same(double a, double b) { return fabs(a - b) < 1e-9; }

int main(void)
{
    for (size_t i = 0; i < ARRAY_LEN(wants); i++) {
        const struct want *w = &wants[i];
        struct llm_profile p;
        llm_profile_lookup(llm_provider_find(w->provider)->family, w->model, &p);
        is_int(p.temperature, w->temperature, "%s: temperature %s", w->model, w->temperature ? "allowed" : "not sent");
        is_int(p.max_output, w->max_output, "%s: reply limit", w->model);
        is_str(llm_schema_name(p.schema), w->schema, "%s: schema", w->model);
        ok(same(p.price_input, w->pin) && same(p.price_cached, w->pcached) && same(p.price_output, w->pout),
           "%s: prices %g / %g / %g (got %g / %g / %g)", w->model, w->pin, w->pcached, w->pout, p.price_input,
           p.price_cached, p.price_output);
        is_int(p.system_user, w->system_user, "%s: system prompt %s", w->model, w->system_user ? "folded" : "as a role");
        is_str(llm_family_name(p.family), w->provider, "%s: sent over the %s API", w->model, w->provider);
    }
    /* no effort unless set; xhigh is a value */
    struct llm_profile p;
    llm_profile_lookup(LLM_FAMILY_OPENAI, "gpt-5.5", &p);
    is_str(p.effort, "", "gpt-5.5: no reasoning_effort unless set");
    char err[200];
    is_int(llm_profile_set(&p, "reasoning_effort", "xhigh", err, sizeof err), 0, "reasoning_effort xhigh is taken");
    is_str(p.effort, "xhigh", "... and set");
    is_int(llm_profile_set(&p, "max_output", "0", err, sizeof err), 0, "max_output 0 (none sent) is taken");
    is_int(llm_profile_set(&p, "system", "user", err, sizeof err), 0, "system = user is taken");
    is_int(p.system_user, 1, "... and set");
    is_int(llm_profile_set(&p, "schema", "tool_auto", err, sizeof err), 0, "schema = tool_auto is taken");
    is_int(llm_profile_set(&p, "system", "maybe", err, sizeof err), -1, "system takes role or user");
    ok(strstr(err, "role or user") != NULL, "the error says what it takes: %s", err);
    return done_testing();
}
