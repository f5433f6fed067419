/*
 * llm_config: which model server to talk to, with what key, limits and prices.
 * Settings are resolved field by field with this precedence:
 *   1. command-line options (struct config_overrides)
 *   2. DRQA_API_BASE, DRQA_API_KEY, DRQA_MODEL, DRQA_PROVIDER,
 *      DRQA_EMBED_BASE, DRQA_EMBED_MODEL, DRQA_EMBED_KEY
 *   3. the vendors' variables: OPENAI_API_KEY and OPENAI_BASE_URL (provider
 *      openai), AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT (provider
 *      azure), ANTHROPIC_API_KEY (provider anthropic; when no provider, base
 *      or other key is set anywhere it implies provider anthropic at
 *      https://api.anthropic.com), OLLAMA_HOST (base {host}/v1)
 *   4. the config file: --config FILE, else $XDG_CONFIG_HOME/drqa-tui/config,
 *      else ~/.config/drqa-tui/config (a missing default file is fine)
 * A vendor key is only used for its own provider, so an OpenAI key is never
 * sent to an Anthropic endpoint and the other way round.
 *
 * The file holds `key = value` lines; blank lines and lines starting with #
 * are skipped; a value may be wrapped in double quotes. Keys: api_base,
 * api_key, model, provider, embed_base, embed_model, embed_key, json_mode,
 * timeout_connect_ms, timeout_total_ms, timeout_idle_ms (a streamed reply:
 * the longest wait for its next byte, in place of timeout_total_ms),
 * stream (false: ask for whole replies, as --no-stream does), retries,
 * backoff_ms, backoff_max_ms,
 * retry_after_max_ms, max_reply_bytes, max_tokens, temperature, embed_batch,
 * api (chat or responses: the OpenAI API every model is asked on, unless a
 * profile.<glob>.api line says otherwise for it),
 * price.<model>.input, price.<model>.output (USD per million tokens; an
 * exact model name), profile.<glob>.<field> (a model profile field for the
 * models the glob matches, llm_profile.h; a later line wins) and
 * model.<role> (the model one role uses: perception, planning, filter,
 * evaluation or answer; same provider, base and key; --role-model wins).
 * For --mcp-http: mcp_token (the bearer token clients must send),
 * mcp_allowed_origins (browser origins accepted beside the loopback ones),
 * mcp_max_requests and mcp_max_sessions (mcp_http.h's limits).
 * A file that sets api_key, embed_key, api_base, embed_base or mcp_token is refused
 * (config_file_trusted) unless it is owned by the user (or root) and not
 * writable by group or others, as ssh does; an error about a line never
 * shows more of it than the setting's name.
 *
 * The policy is --policy offline|llm; by default llm when a model is
 * configured, else offline. The API key is never part of config_describe.
 *
 * (Named llm_config so that it never collides with autoconf's <config.h>.)
 */
#ifndef DRQA_LLM_CONFIG_H
#define DRQA_LLM_CONFIG_H

#include "http.h"
#include "llm_profile.h"

#include <stddef.h>

enum llm_provider { LLM_PROVIDER_OPENAI, LLM_PROVIDER_ANTHROPIC, LLM_PROVIDER_AZURE };

struct drqa_config;
struct llm_backend;
/* The chat API providers, one row each (llm_providers[] in llm_provider.c): what
 * --provider, DRQA_PROVIDER, the config file's provider and a judge's
 * provider field accept, the base used when none is given, the vendor's
 * variables, the API family it speaks and the backend's constructor; no
 * other code tells the providers apart (adding one: HACKING.md, "A
 * provider"). */
struct llm_provider_info {
    enum llm_provider id;
    const char *name;          /* "openai" */
    const char *aliases;       /* other names accepted, space-separated, or NULL */
    const char *note;          /* said after the name in messages, or NULL */
    const char *label;         /* in config_describe: "openai-compatible" */
    const char *default_base;  /* "https://api.openai.com/v1" */
    const char *key_env;       /* "OPENAI_API_KEY" */
    const char *base_env;      /* the vendor's variable for the base ("OPENAI_BASE_URL"), or NULL */
    int compatible;            /* 1: any OpenAI-compatible server: OLLAMA_HOST may give the base
                                * (after base_env), which serves the embeddings too */
    enum llm_family family;    /* the API: which profile rows its models take, what a request needs */
    struct llm_backend *(*create)(const struct drqa_config *c, const char *model, char *err, size_t errlen);
};
extern const struct llm_provider_info llm_providers[];
extern const size_t llm_nproviders;
/* The provider called name (or one of its aliases), or NULL. */
const struct llm_provider_info *llm_provider_find(const char *name);
/* The row of p (every enum value has one). */
const struct llm_provider_info *llm_provider_get(enum llm_provider p);
/* The names for a message, into out: "openai or anthropic", with notes
 * "openai (any OpenAI-compatible server) or anthropic". Returns out. */
const char *llm_provider_choices(char *out, size_t outlen, int notes);
enum drqa_policy { POLICY_OFFLINE, POLICY_LLM };

struct config_price {
    char *model;
    double input, output;      /* USD per million tokens; < 0 when not given */
};

struct config_profile_override {
    char *glob, *field, *value;
    char src[160];             /* file:line */
};

/* The roles a model can be chosen for (model.<role>, --role-model), in the
 * order of enum llm_role (policy_llm.h). */
enum config_role {
#define LLM_ROLE(id, ...) CONFIG_ROLE_##id,
#include "llm_roles.def"
    CONFIG_ROLE_COUNT
};
#define CONFIG_NROLES ((int)CONFIG_ROLE_COUNT)
extern const char *const config_role_names[CONFIG_NROLES];

/* Every string is owned by the struct (config_free releases them). */
struct drqa_config {
    enum drqa_policy policy;
    int policy_explicit;       /* --policy was given */
    enum llm_provider provider;
    char *api_base;            /* without a trailing '/' */
    char *api_key;             /* NULL when none (local servers need none) */
    char *model;               /* NULL when no model is configured */
    char *embed_base, *embed_model, *embed_key;  /* each may be NULL */
    int json_mode;
    long timeout_connect_ms, timeout_total_ms;
    long timeout_idle_ms;      /* a streamed reply: no byte for this long fails the attempt */
    int no_stream;             /* --no-stream or stream = false: whole replies for every model */
    int retries;               /* extra attempts after the first */
    long backoff_ms, backoff_max_ms, retry_after_max_ms;
    long long max_reply_bytes;
    int max_tokens;            /* reply limit sent with each request */
    int max_tokens_set;        /* max_tokens was given (else the profile's max_output) */
    double temperature;
    int temperature_set;       /* temperature was given: sent to every model (else where the profile allows) */
    int embed_batch;           /* texts per embeddings request */
    struct config_price *prices;
    size_t nprices;
    struct config_profile_override *overrides;   /* in file order */
    size_t noverrides;
    char *role_model[CONFIG_NROLES];   /* NULL: the role uses model */
    char *file;                /* the config file that was read, or NULL */
    /* --mcp-http: the bearer token every request must carry (NULL: none),
     * and origins accepted beside the loopback ones (space- or
     * comma-separated; NULL: none). A file that sets mcp_token must be
     * private to the user, as for api_key. Never printed. */
    char *mcp_token;
    char *mcp_allowed_origins;
    int mcp_max_requests, mcp_max_sessions;   /* 0: mcp_http's defaults */
    int api;                   /* the file's `api` line (enum llm_api) for every model, -1: none */
};

/* What the command line says of the model configuration (layer 1 above):
 * strings borrowed, NULL (0) where nothing was given. */
struct config_overrides {
    const char *config_path;   /* --config FILE */
    const char *policy;        /* "offline" or "llm" */
    const char *provider, *api_base, *model, *embed_base, *embed_model;
    int json_mode, no_stream;
    const char *const *role_models;   /* ROLE=NAME, nrole_models of them */
    int nrole_models;
};

/*
 * Resolves the configuration from o (may be NULL: no overrides), the
 * environment env (a NULL-terminated "NAME=value" list; NULL means the
 * process environment) and the config file.
 * Returns 0, or -1 with err naming the setting, where it came from (file:line
 * for the file) and what to do. c is always initialised; config_free it.
 */
int config_load_env(struct drqa_config *c, const struct config_overrides *o, const char *const *env,
                    char *err, size_t errlen);
int config_load(struct drqa_config *c, const struct config_overrides *o, char *err, size_t errlen);
void config_free(struct drqa_config *c);

/* The lines of a settings file written as the config file is (`key =
 * value`; the judges file too): text is split into lines in place, blank
 * lines and lines starting with # are skipped, and fn gets each other line's
 * number, its key and its value, both without surrounding white space and
 * the value without wrapping double quotes; val is NULL for a line without
 * '=' (key is then the whole line). Stops at the first fn that returns
 * non-zero and returns that; else 0. */
typedef int (*config_kv_fn)(void *arg, int lineno, char *key, char *val);
int config_kv_parse(char *text, config_kv_fn fn, void *arg);

/* 0 when the settings file at path, whose fstat is st and which sets
 * `setting` (a key, or the server a key goes to), may be trusted: owned by
 * the effective user or root, not writable by group or others; else -1 with
 * err saying why and what to run. */
struct stat;
int config_file_trusted(const char *path, const struct stat *st, const char *setting, char *err, size_t errlen);

/* The one line the program prints about the policy; never the key. Returns out. */
const char *config_describe(const struct drqa_config *c, char *out, size_t outlen);

/* Prices of model (USD per million tokens). Returns 0 when both are known. */
int config_price(const struct drqa_config *c, const char *model, double *input, double *output);

/* The profile of model under c's provider: the table's row, then c's
 * max_tokens and temperature (when given: a temperature configured is sent
 * to any model) and json_mode (json_object for a row without structured
 * output), then the matching profile.* lines, then price.MODEL.* for the
 * exact name. */
void config_profile(const struct drqa_config *c, const char *model, struct llm_profile *out);

/* HTTP limits from the config (timeouts, attempts, backoff, reply cap);
 * cancel and secret are left NULL. */
void config_http_opts(const struct drqa_config *c, struct http_opts *o);

const char *config_provider_name(enum llm_provider p);  /* llm_provider_get(p)->name */

#endif
