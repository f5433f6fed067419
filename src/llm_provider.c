/*
 * llm_provider: the chat API providers, one row each (llm_config.h's
 * llm_provider_info: names, default base, key variable, constructor), and
 * the backend of a configuration made from its provider's row. Apart from
 * llm.c, so that the configuration (llm_config.c) reads the table without
 * calling into the transport that reads the configuration.
 */
#include "llm.h"
#include "llm_config.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

const struct llm_provider_info llm_providers[] = {
    {LLM_PROVIDER_OPENAI, "openai", "openai-compatible", "any OpenAI-compatible server", "openai-compatible",
     "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL", 1, LLM_FAMILY_OPENAI, llm_openai_new},
    {LLM_PROVIDER_ANTHROPIC, "anthropic", NULL, NULL, "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
     NULL, 0, LLM_FAMILY_ANTHROPIC, llm_anthropic_new},
    /* no default base: every Azure resource has its own endpoint */
    {LLM_PROVIDER_AZURE, "azure", "azure-openai", "Azure OpenAI", "azure-openai", NULL, "AZURE_OPENAI_API_KEY",
     "AZURE_OPENAI_ENDPOINT", 0, LLM_FAMILY_OPENAI, llm_azure_new},
};
const size_t llm_nproviders = ARRAY_LEN(llm_providers);

static int word_in(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ' ');
        size_t m = e ? (size_t)(e - p) : strlen(p);
        if (m == n && memcmp(p, w, n) == 0) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

const struct llm_provider_info *llm_provider_find(const char *name)
{
    for (size_t i = 0; name && i < llm_nproviders; i++)
        if (strcmp(llm_providers[i].name, name) == 0 || word_in(llm_providers[i].aliases, name))
            return &llm_providers[i];
    return NULL;
}

const struct llm_provider_info *llm_provider_get(enum llm_provider p)
{
    for (size_t i = 0; i < llm_nproviders; i++)
        if (llm_providers[i].id == p) return &llm_providers[i];
    return &llm_providers[0];
}

const char *llm_provider_choices(char *out, size_t outlen, int notes)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < llm_nproviders; i++) {
        const struct llm_provider_info *p = &llm_providers[i];
        if (i) buf_adds(&b, i + 1 == llm_nproviders ? " or " : ", ");
        buf_adds(&b, p->name);
        if (notes && p->note) buf_printf(&b, " (%s)", p->note);
    }
    snprintf(out, outlen, "%s", b.data ? b.data : "");
    buf_free(&b);
    return out;
}

struct llm_backend *llm_backend_new_model(const struct drqa_config *c, const char *model, char *err, size_t errlen)
{
    return llm_provider_get(c->provider)->create(c, model, err, errlen);
}

struct llm_backend *llm_backend_new(const struct drqa_config *c, char *err, size_t errlen)
{
    return llm_backend_new_model(c, c->model, err, errlen);
}
