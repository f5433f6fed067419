/*
 * llm_config: resolving the model settings from options, environment and the
 * config file (precedence and keys in llm_config.h). The file is read into a
 * small table first; each field then takes the first source that has it, and
 * remembers the source's name so that errors can say where a bad value came
 * from.
 */
#include "llm_config.h"
#include "url.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

const char *const config_role_names[CONFIG_NROLES] = {
#define LLM_ROLE(id, name, ...) name,
#include "llm_roles.def"
};


enum fkey {
    F_API_BASE, F_API_KEY, F_MODEL, F_PROVIDER, F_EMBED_BASE, F_EMBED_MODEL, F_EMBED_KEY,
    F_JSON_MODE, F_TIMEOUT_CONNECT, F_TIMEOUT_TOTAL, F_RETRIES, F_BACKOFF, F_BACKOFF_MAX,
    F_RETRY_AFTER_MAX, F_MAX_REPLY, F_MAX_TOKENS, F_TEMPERATURE, F_EMBED_BATCH,
    F_MCP_TOKEN, F_MCP_ORIGINS, F_MCP_MAX_REQUESTS, F_MCP_MAX_SESSIONS, F_API,
    F_TIMEOUT_IDLE, F_STREAM, F_COUNT
};

static const char *const fkey_names[F_COUNT] = {
    "api_base", "api_key", "model", "provider", "embed_base", "embed_model", "embed_key",
    "json_mode", "timeout_connect_ms", "timeout_total_ms", "retries", "backoff_ms",
    "backoff_max_ms", "retry_after_max_ms", "max_reply_bytes", "max_tokens", "temperature",
    "embed_batch",
    "mcp_token", "mcp_allowed_origins", "mcp_max_requests", "mcp_max_sessions", "api",
    "timeout_idle_ms", "stream",
};

struct fileval {
    char *v[F_COUNT];
    int line[F_COUNT];
    const char *path;
};

static const char *env_get(const char *const *env, const char *name)
{
    const char *v = NULL;
    if (!env) {
        v = getenv(name);
    } else {
        size_t n = strlen(name);
        for (size_t i = 0; env[i]; i++)
            if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') v = env[i] + n + 1;
    }
    return v && *v ? v : NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

int config_kv_parse(char *text, config_kv_fn fn, void *arg)
{
    int lineno = 0, rc = 0;
    char *save = NULL;
    for (char *line = text; line && !rc; line = save) {
        save = strchr(line, '\n');
        if (save) *save++ = 0;
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = fn(arg, lineno, s, NULL);
            continue;
        }
        *eq = 0;
        char *key = trim(s), *val = trim(eq + 1);
        size_t vl = strlen(val);
        if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') { val[vl - 1] = 0; val++; }
        rc = fn(arg, lineno, key, val);
    }
    return rc;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (long)v;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < ARRAY_LEN(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(s, no[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

static struct config_price *price_slot(struct drqa_config *c, const char *model, size_t n)
{
    for (size_t i = 0; i < c->nprices; i++)
        if (strlen(c->prices[i].model) == n && strncmp(c->prices[i].model, model, n) == 0) return &c->prices[i];
    c->prices = xreallocarray(c->prices, c->nprices + 1, sizeof *c->prices);
    struct config_price *p = &c->prices[c->nprices++];
    p->model = xstrndup(model, n);
    p->input = p->output = -1;
    return p;
}

/* The length of the setting name s starts with: what an error may show of
 * a line that could hold a secret. */
static int name_len(const char *s)
{
    int n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.' || s[n] == '-') n++;
    return n;
}

int config_file_trusted(const char *path, const struct stat *st, const char *setting, char *err, size_t errlen)
{
    uid_t me = geteuid();
    if (st->st_uid != me && st->st_uid != 0) {
        snprintf(err, errlen, "refusing '%s': it sets %s but is owned by uid %ld, not by you (uid %ld), so its "
                 "owner could redirect or read your key; keep the file in your own name (chown) or move the "
                 "setting to the environment", path, setting, (long)st->st_uid, (long)me);
        return -1;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "refusing '%s': it sets %s but is writable by %s (mode %04o), so another user "
                 "could redirect or read your key; run chmod go-w '%s'", path, setting,
                 (st->st_mode & S_IWOTH) ? "everyone" : "its group", (unsigned)(st->st_mode & 07777), path);
        return -1;
    }
    return 0;
}

/* What a config file's lines are read into. */
struct layer {
    struct drqa_config *c;
    struct fileval *fv;
    const char *path;
    char *err;
    size_t errlen;
};

/* A value a line of the config file gives that its setting does not take:
 * the file, the line and the setting are named, never the value, which may
 * be a key written on the wrong line. */
static void bad_value(char *err, size_t errlen, const char *path, int line, const char *name, const char *takes)
{
    snprintf(err, errlen, "%s:%d: %s takes %s; fix the value on that line (values are not shown)", path, line,
             name, takes);
}

/* One line of the config file (config_kv_parse's fn). */
static int layer_line(void *arg, int lineno, char *key, char *val)
{
    struct layer *L = arg;
    struct drqa_config *c = L->c;
    struct fileval *fv = L->fv;
    const char *path = L->path;
    char *err = L->err;
    size_t errlen = L->errlen;
    int rc = 0;
    if (!val) {
        /* the line is never echoed: it may be a key written 'api_key: sk-...' */
        int nl = name_len(key), known = 0;
        for (int k = 0; k < F_COUNT && !known; k++)
            known = (int)strlen(fkey_names[k]) == nl && strncmp(key, fkey_names[k], (size_t)nl) == 0;
        if (known)
            snprintf(err, errlen, "%s:%d: expected 'key = value' after '%.*s' (the rest of the line is not "
                     "shown); fix or comment out the line with #", path, lineno, nl, key);
        else
            snprintf(err, errlen, "%s:%d: expected 'key = value' (the line is not shown); fix or comment out "
                     "the line with #", path, lineno);
        return -1;
    }
    if (!*key) {
        snprintf(err, errlen, "%s:%d: a line has no key before '='", path, lineno);
        return -1;
    }
    if (!*val) {
        snprintf(err, errlen, "%s:%d: '%s' has no value; give one or remove the line", path, lineno, key);
        return -1;
    }
    if (str_starts(key, "price.")) {
        const char *m = key + 6;
        int is_in = str_ends(m, ".input"), is_out = str_ends(m, ".output");
        size_t mlen = strlen(m) - (is_in ? 6 : is_out ? 7 : 0);
        double d;
        if ((!is_in && !is_out) || mlen == 0) {
            snprintf(err, errlen, "%s:%d: '%s' is not a price key; write price.MODEL.input or price.MODEL.output",
                     path, lineno, key);
            rc = -1;
        } else if (llm_parse_number(val, 0, 1e6, &d)) {
            bad_value(err, errlen, path, lineno, key, "a price in USD per million tokens (a number >= 0)");
            rc = -1;
        } else {
            struct config_price *p = price_slot(c, m, mlen);
            if (is_in) p->input = d; else p->output = d;
        }
        return rc;
    }
    if (str_starts(key, "profile.")) {
        const char *g = key + 8, *dot = strrchr(g, '.');
        char e2[300];
        if (!dot || dot == g || !dot[1]) {
            snprintf(err, errlen, "%s:%d: '%s' is not a profile key; write profile.MODEL-GLOB.FIELD = VALUE "
                     "(e.g. profile.o4-mini*.max_output = 32000)", path, lineno, key);
            rc = -1;
        } else if (llm_profile_set(NULL, dot + 1, val, e2, sizeof e2)) {
            snprintf(err, errlen, "%s:%d: %s; fix the value on that line (values are not shown)", path, lineno, e2);
            rc = -1;
        } else {
            c->overrides = xreallocarray(c->overrides, c->noverrides + 1, sizeof *c->overrides);
            struct config_profile_override *ov = &c->overrides[c->noverrides++];
            ov->glob = xstrndup(g, (size_t)(dot - g));
            ov->field = xstrdup(dot + 1);
            ov->value = xstrdup(val);
            snprintf(ov->src, sizeof ov->src, "%s:%d", path, lineno);
        }
        return rc;
    }
    if (str_starts(key, "model.")) {
        int r = -1;
        for (int i = 0; i < CONFIG_NROLES; i++)
            if (!strcmp(key + 6, config_role_names[i])) r = i;
        if (r < 0) {
            snprintf(err, errlen, "%s:%d: '%s' names no role; write model.ROLE with ROLE one of perception, "
                     "planning, filter, evaluation, answer", path, lineno, key);
            rc = -1;
        } else {
            free(c->role_model[r]);
            c->role_model[r] = xstrdup(val);
        }
        return rc;
    }
    int k;
    for (k = 0; k < F_COUNT; k++)
        if (strcmp(key, fkey_names[k]) == 0) break;
    if (k == F_COUNT) {
        struct buf b = BUF_INIT;
        for (int i = 0; i < F_COUNT; i++) buf_printf(&b, "%s%s", i ? ", " : "", fkey_names[i]);
        snprintf(err, errlen, "%s:%d: unknown key '%.*s'; known keys: %s, price.MODEL.input, price.MODEL.output, "
                 "profile.GLOB.FIELD, model.ROLE",
                 path, lineno, name_len(key), key, buf_str(&b));
        buf_free(&b);
        return -1;
    }
    free(fv->v[k]);
    fv->v[k] = xstrdup(val);
    fv->line[k] = lineno;
    return 0;
}

static int read_file_layer(struct drqa_config *c, struct fileval *fv, const char *path, int required,
                           char *err, size_t errlen)
{
    size_t len;
    struct stat st;
    char *text = read_file_ex(path, 1 << 20, &len, 0, &st);
    if (!text) {
        if (!required && errno == ENOENT) return 0;
        snprintf(err, errlen, "cannot read the config file '%s': %s; check the path%s", path, strerror(errno),
                 required ? " given to --config" : " or remove the file");
        return -1;
    }
    c->file = xstrdup(path);
    fv->path = c->file;
    struct layer L = {c, fv, path, err, errlen};
    int rc = config_kv_parse(text, layer_line, &L);
    free(text);
    /* a file that holds a key, or names the server a key is sent to */
    static const enum fkey guarded[] = {F_API_KEY, F_EMBED_KEY, F_API_BASE, F_EMBED_BASE, F_MCP_TOKEN};
    for (size_t i = 0; i < ARRAY_LEN(guarded) && !rc; i++)
        if (fv->v[guarded[i]]) rc = config_file_trusted(path, &st, fkey_names[guarded[i]], err, errlen);
    return rc;
}

/* One string setting: the value and the name of its source. */
struct pick {
    const char *val;
    char src[160];
};

static void pick_set(struct pick *p, const char *val, const char *src)
{
    p->val = val;
    snprintf(p->src, sizeof p->src, "%s", src);
}

static void pick_file(struct pick *p, const struct fileval *fv, enum fkey k)
{
    if (!fv->v[k]) return;
    p->val = fv->v[k];
    snprintf(p->src, sizeof p->src, "%s:%d", fv->path, fv->line[k]);
}

static char *dup_base(const char *s)
{
    if (!s) return NULL;
    char *d = xstrdup(s);
    size_t n = strlen(d);
    while (n && d[n - 1] == '/') d[--n] = 0;
    return d;
}

static int check_url(const struct pick *p, const struct fileval *fv, const char *what, char *err, size_t errlen)
{
    if (!p->val || str_starts(p->val, "http://") || str_starts(p->val, "https://")) return 0;
    if (p->val == fv->v[F_API_BASE] || p->val == fv->v[F_EMBED_BASE]) {   /* a line of the file: not shown */
        snprintf(err, errlen, "%s: %s must start with http:// or https:// (values are not shown)", p->src, what);
        return -1;
    }
    char *safe = url_redact(p->val);
    snprintf(err, errlen, "%s '%s' (from %s) must start with http:// or https://", what, safe, p->src);
    free(safe);
    return -1;
}

/* A numeric file setting, or its default. */
static int file_long(const struct fileval *fv, enum fkey k, long lo, long hi, long def, long *out,
                     char *err, size_t errlen)
{
    *out = def;
    if (!fv->v[k]) return 0;
    if (parse_long(fv->v[k], lo, hi, out) == 0) return 0;
    char takes[96];
    snprintf(takes, sizeof takes, "a whole number from %ld to %ld", lo, hi);
    bad_value(err, errlen, fv->path, fv->line[k], fkey_names[k], takes);
    return -1;
}

const char *config_provider_name(enum llm_provider p)
{
    return llm_provider_get(p)->name;
}

static void config_init(struct drqa_config *c)
{
    memset(c, 0, sizeof *c);
    c->policy = POLICY_OFFLINE;
    c->timeout_connect_ms = 10000;
    c->timeout_total_ms = 300000;
    c->timeout_idle_ms = 120000;
    c->retries = 3;
    c->backoff_ms = 500;
    c->backoff_max_ms = 20000;
    c->retry_after_max_ms = 60000;
    c->max_reply_bytes = 8 << 20;
    c->max_tokens = 2048;
    c->temperature = 0.2;
    c->embed_batch = 64;
    c->api = -1;
}

/* The per-role models and the policy, from the options (after the model is known). */
static int role_models_and_policy(struct drqa_config *c, const struct config_overrides *o, char *err, size_t errlen)
{
    /* per-role models: --role-model ROLE=NAME over model.ROLE */
    for (int i = 0; o && i < o->nrole_models; i++) {
        const char *rm = o->role_models[i], *eq = strchr(rm, '=');
        int r = -1;
        for (int k = 0; eq && k < CONFIG_NROLES; k++)
            if (strlen(config_role_names[k]) == (size_t)(eq - rm) && !strncmp(rm, config_role_names[k], (size_t)(eq - rm)))
                r = k;
        if (r < 0 || !eq[1]) {
            snprintf(err, errlen, "--role-model takes ROLE=MODEL with ROLE one of perception, planning, filter, "
                     "evaluation, answer (e.g. --role-model filter=gpt-4.1-mini), not '%s'", rm);
            return -1;
        }
        free(c->role_model[r]);
        c->role_model[r] = xstrdup(eq + 1);
    }

    /* policy */
    if (o && o->policy) {
        c->policy_explicit = 1;
        if (strcmp(o->policy, "offline") == 0) {
            c->policy = POLICY_OFFLINE;
        } else if (strcmp(o->policy, "llm") == 0) {
            if (!c->model) {
                snprintf(err, errlen, "--policy llm needs a model; set --model, DRQA_MODEL or 'model =' in the config file");
                return -1;
            }
            c->policy = POLICY_LLM;
        } else {
            snprintf(err, errlen, "--policy takes offline or llm, not '%s'", o->policy);
            return -1;
        }
    } else {
        c->policy = c->model ? POLICY_LLM : POLICY_OFFLINE;
    }
    return 0;
}

/* The settings only the config file gives (json_mode also from --json-mode,
 * stream also from --no-stream): numbers, switches and the MCP server's. */
static int file_settings(struct drqa_config *c, const struct fileval *fv, const struct config_overrides *o, char *err,
                         size_t errlen)
{
    /* json mode and numbers (file only) */
    c->json_mode = 0;
    if (fv->v[F_JSON_MODE] && parse_bool(fv->v[F_JSON_MODE], &c->json_mode)) {
        bad_value(err, errlen, fv->path, fv->line[F_JSON_MODE], "json_mode", "true or false");
        return -1;
    }
    if (o && o->json_mode) c->json_mode = 1;
    int stream = 1;
    if (fv->v[F_STREAM] && parse_bool(fv->v[F_STREAM], &stream)) {
        bad_value(err, errlen, fv->path, fv->line[F_STREAM], "stream", "true or false");
        return -1;
    }
    c->no_stream = !stream || (o && o->no_stream);
    long v;
    if (file_long(fv, F_TIMEOUT_CONNECT, 1, 3600000, c->timeout_connect_ms, &c->timeout_connect_ms, err, errlen) ||
        file_long(fv, F_TIMEOUT_TOTAL, 1, 86400000, c->timeout_total_ms, &c->timeout_total_ms, err, errlen) ||
        file_long(fv, F_TIMEOUT_IDLE, 1, 86400000, c->timeout_idle_ms, &c->timeout_idle_ms, err, errlen) ||
        file_long(fv, F_BACKOFF, 0, 3600000, c->backoff_ms, &c->backoff_ms, err, errlen) ||
        file_long(fv, F_BACKOFF_MAX, 0, 3600000, c->backoff_max_ms, &c->backoff_max_ms, err, errlen) ||
        file_long(fv, F_RETRY_AFTER_MAX, 0, 3600000, c->retry_after_max_ms, &c->retry_after_max_ms, err, errlen))
        return -1;
    if (file_long(fv, F_RETRIES, 0, 20, c->retries, &v, err, errlen)) return -1;
    c->retries = (int)v;
    if (file_long(fv, F_MAX_REPLY, 1024, LONG_MAX, (long)c->max_reply_bytes, &v, err, errlen)) return -1;
    c->max_reply_bytes = v;
    if (file_long(fv, F_MAX_TOKENS, 1, 1000000, c->max_tokens, &v, err, errlen)) return -1;
    c->max_tokens = (int)v;
    c->max_tokens_set = fv->v[F_MAX_TOKENS] != NULL;
    if (file_long(fv, F_EMBED_BATCH, 1, 4096, c->embed_batch, &v, err, errlen)) return -1;
    c->embed_batch = (int)v;
    if (fv->v[F_API]) {
        if (!strcmp(fv->v[F_API], "chat")) c->api = LLM_API_CHAT;
        else if (!strcmp(fv->v[F_API], "responses")) c->api = LLM_API_RESPONSES;
        else {
            bad_value(err, errlen, fv->path, fv->line[F_API], "api", "chat or responses");
            return -1;
        }
    }
    if (fv->v[F_TEMPERATURE] && llm_parse_number(fv->v[F_TEMPERATURE], 0, 2, &c->temperature)) {
        bad_value(err, errlen, fv->path, fv->line[F_TEMPERATURE], "temperature", "a number from 0 to 2");
        return -1;
    }
    c->temperature_set = fv->v[F_TEMPERATURE] != NULL;

    /* the MCP server over HTTP (mcp_http.h): only the config file sets these */
    if (fv->v[F_MCP_TOKEN]) c->mcp_token = xstrdup(fv->v[F_MCP_TOKEN]);
    secret_add(c->mcp_token);   /* a client's token is scrubbed like a key */
    if (fv->v[F_MCP_ORIGINS]) c->mcp_allowed_origins = xstrdup(fv->v[F_MCP_ORIGINS]);
    if (file_long(fv, F_MCP_MAX_REQUESTS, 1, 1024, 0, &v, err, errlen)) return -1;
    c->mcp_max_requests = (int)v;
    if (file_long(fv, F_MCP_MAX_SESSIONS, 1, 100000, 0, &v, err, errlen)) return -1;
    c->mcp_max_sessions = (int)v;
    return 0;
}

int config_load_env(struct drqa_config *c, const struct config_overrides *o, const char *const *env,
                    char *err, size_t errlen)
{
    config_init(c);
    struct fileval fv;
    memset(&fv, 0, sizeof fv);
    int rc = -1;
    if (!env) env = (const char *const *)environ;

    /* 4. the config file */
    if (o && o->config_path) {
        if (read_file_layer(c, &fv, o->config_path, 1, err, errlen)) goto out;
    } else {
        const char *xdg = env_get(env, "XDG_CONFIG_HOME"), *home = env_get(env, "HOME");
        char *path = xdg && xdg[0] == '/' ? xasprintf("%s/drqa-tui/config", xdg)
                   : home ? xasprintf("%s/.config/drqa-tui/config", home) : NULL;
        int r = path ? read_file_layer(c, &fv, path, 0, err, errlen) : 0;
        free(path);
        if (r) goto out;
    }

    const char *openai_key = env_get(env, "OPENAI_API_KEY"), *openai_base = env_get(env, "OPENAI_BASE_URL");
    const char *anthropic_key = env_get(env, "ANTHROPIC_API_KEY"), *ollama = env_get(env, "OLLAMA_HOST");
    char *ollama_base = NULL;
    if (ollama)
        ollama_base = strstr(ollama, "://") ? xasprintf("%s/v1", ollama) : xasprintf("http://%s/v1", ollama);

    /* provider */
    struct pick prov = {0};
    if (o && o->provider) pick_set(&prov, o->provider, "--provider");
    else if (env_get(env, "DRQA_PROVIDER")) pick_set(&prov, env_get(env, "DRQA_PROVIDER"), "DRQA_PROVIDER");
    else pick_file(&prov, &fv, F_PROVIDER);
    int explicit_base = (o && o->api_base) || env_get(env, "DRQA_API_BASE") || fv.v[F_API_BASE];
    if (prov.val) {
        const struct llm_provider_info *pi = llm_provider_find(prov.val);
        if (pi) {
            c->provider = pi->id;
        } else {
            char names[200];
            if (prov.val == fv.v[F_PROVIDER])   /* a line of the file: its value is not shown */
                snprintf(err, errlen, "%s: unknown provider (values are not shown); use %s", prov.src,
                         llm_provider_choices(names, sizeof names, 1));
            else
                snprintf(err, errlen, "unknown provider '%s' (from %s); use %s", prov.val, prov.src,
                         llm_provider_choices(names, sizeof names, 1));
            free(ollama_base);
            goto out;
        }
    } else if (anthropic_key && !explicit_base && !openai_key && !openai_base && !ollama &&
               !env_get(env, "DRQA_API_KEY") && !fv.v[F_API_KEY]) {
        c->provider = LLM_PROVIDER_ANTHROPIC;
    } else {
        c->provider = LLM_PROVIDER_OPENAI;
    }
    const struct llm_provider_info *pi = llm_provider_get(c->provider);
    const char *vendor_base = pi->base_env ? env_get(env, pi->base_env) : NULL;

    /* base */
    struct pick base = {0};
    if (o && o->api_base) pick_set(&base, o->api_base, "--api-base");
    else if (env_get(env, "DRQA_API_BASE")) pick_set(&base, env_get(env, "DRQA_API_BASE"), "DRQA_API_BASE");
    else if (vendor_base) pick_set(&base, vendor_base, pi->base_env);
    else if (pi->compatible && ollama_base) pick_set(&base, ollama_base, "OLLAMA_HOST");
    else pick_file(&base, &fv, F_API_BASE);
    if (!base.val) pick_set(&base, llm_provider_get(c->provider)->default_base, "the default");
    if (!base.val) {   /* a provider with no public endpoint: each resource has its own */
        snprintf(err, errlen, "provider %s needs the endpoint of your resource: set api_base (or --api-base, "
                 "DRQA_API_BASE, AZURE_OPENAI_ENDPOINT) to https://RESOURCE.openai.azure.com/openai/v1 or "
                 "https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT?api-version=VERSION",
                 llm_provider_get(c->provider)->name);
        free(ollama_base);
        goto out;
    }
    if (check_url(&base, &fv, "the API base", err, errlen)) { free(ollama_base); goto out; }
    c->api_base = dup_base(base.val);
    free(ollama_base);

    /* key */
    const char *key = env_get(env, "DRQA_API_KEY");
    if (!key) key = env_get(env, llm_provider_get(c->provider)->key_env);   /* openai_key or anthropic_key */
    if (!key) key = fv.v[F_API_KEY];
    c->api_key = key ? xstrdup(key) : NULL;

    /* model */
    const char *model = o && o->model ? o->model : env_get(env, "DRQA_MODEL");
    if (!model) model = fv.v[F_MODEL];
    c->model = model ? xstrdup(model) : NULL;

    /* embeddings */
    struct pick eb = {0};
    if (o && o->embed_base) pick_set(&eb, o->embed_base, "--embed-base");
    else if (env_get(env, "DRQA_EMBED_BASE")) pick_set(&eb, env_get(env, "DRQA_EMBED_BASE"), "DRQA_EMBED_BASE");
    else pick_file(&eb, &fv, F_EMBED_BASE);
    if (check_url(&eb, &fv, "the embeddings base", err, errlen)) goto out;
    c->embed_base = eb.val ? dup_base(eb.val) : pi->compatible ? xstrdup(c->api_base) : NULL;
    const char *em = o && o->embed_model ? o->embed_model : env_get(env, "DRQA_EMBED_MODEL");
    if (!em) em = fv.v[F_EMBED_MODEL];
    c->embed_model = em ? xstrdup(em) : NULL;
    const char *ek = env_get(env, "DRQA_EMBED_KEY");
    if (!ek) ek = fv.v[F_EMBED_KEY];
    if (!ek && c->embed_base && strcmp(c->embed_base, c->api_base) == 0) ek = c->api_key;
    c->embed_key = ek ? xstrdup(ek) : NULL;
    /* the keys are scrubbed from the log, transcripts and replies from here on */
    secret_add(c->api_key);
    secret_add(c->embed_key);

    if (file_settings(c, &fv, o, err, errlen)) goto out;

    if (role_models_and_policy(c, o, err, errlen)) goto out;
    rc = 0;
out:
    for (int k = 0; k < F_COUNT; k++) free(fv.v[k]);
    return rc;
}

int config_load(struct drqa_config *c, const struct config_overrides *o, char *err, size_t errlen)
{
    return config_load_env(c, o, NULL, err, errlen);
}

void config_free(struct drqa_config *c)
{
    if (!c) return;
    free(c->api_base);
    free(c->api_key);
    free(c->model);
    free(c->embed_base);
    free(c->embed_model);
    free(c->embed_key);
    for (size_t i = 0; i < c->nprices; i++) free(c->prices[i].model);
    free(c->prices);
    for (size_t i = 0; i < c->noverrides; i++) {
        free(c->overrides[i].glob);
        free(c->overrides[i].field);
        free(c->overrides[i].value);
    }
    free(c->overrides);
    for (int i = 0; i < CONFIG_NROLES; i++) free(c->role_model[i]);
    free(c->file);
    free(c->mcp_token);
    free(c->mcp_allowed_origins);
    memset(c, 0, sizeof *c);
}

const char *config_describe(const struct drqa_config *c, char *out, size_t outlen)
{
    char *base = url_redact(c->api_base);
    if (c->policy == POLICY_LLM)
        snprintf(out, outlen, "policy: llm (%s, model %s at %s)",
                 llm_provider_get(c->provider)->label, c->model, base);
    else if (c->policy_explicit)
        snprintf(out, outlen, "policy: offline (--policy offline)");
    else
        snprintf(out, outlen, "policy: offline (no model configured; set DRQA_MODEL or --model to use one)");
    free(base);
    return out;
}

int config_price(const struct drqa_config *c, const char *model, double *input, double *output)
{
    for (size_t i = 0; model && i < c->nprices; i++) {
        const struct config_price *p = &c->prices[i];
        if (strcmp(p->model, model) == 0 && p->input >= 0 && p->output >= 0) {
            *input = p->input;
            *output = p->output;
            return 0;
        }
    }
    return -1;
}

void config_profile(const struct drqa_config *c, const char *model, struct llm_profile *out)
{
    llm_profile_lookup(llm_provider_get(c->provider)->family, model, out);
    if (c->max_tokens_set) out->max_output = c->max_tokens;
    if (c->temperature_set) out->temperature = 1;
    if (c->json_mode && out->schema == LLM_SCHEMA_NONE && out->family == LLM_FAMILY_OPENAI)
        out->schema = LLM_SCHEMA_JSON_OBJECT;
    if (c->api >= 0 && out->family == LLM_FAMILY_OPENAI) out->api = (enum llm_api)c->api;
    char e[300];
    /* a glob matches the name as written or without a router's vendor
     * prefix (profile.gpt-5.5.* holds for openai/gpt-5.5) */
    const char *slash = model ? strrchr(model, '/') : NULL;
    for (size_t i = 0; i < c->noverrides; i++)   /* checked when the file was read */
        if (llm_profile_match(c->overrides[i].glob, model) || (slash && llm_profile_match(c->overrides[i].glob, slash + 1)))
            llm_profile_set(out, c->overrides[i].field, c->overrides[i].value, e, sizeof e);
    if (c->no_stream) out->stream = 0;   /* over every profile line: the run's choice */
    double pin, pout;
    if (config_price(c, model, &pin, &pout) == 0) {
        out->price_input = pin;
        out->price_output = pout;
        if (out->price_cached < 0) out->price_cached = pin;
    }
}

void config_http_opts(const struct drqa_config *c, struct http_opts *o)
{
    http_opts_defaults(o);
    o->connect_timeout_ms = c->timeout_connect_ms;
    o->total_timeout_ms = c->timeout_total_ms;
    o->idle_timeout_ms = c->timeout_idle_ms;
    o->max_attempts = c->retries + 1;
    o->backoff_base_ms = c->backoff_ms;
    o->backoff_max_ms = c->backoff_max_ms;
    o->retry_after_max_ms = c->retry_after_max_ms;
    o->max_reply = (size_t)c->max_reply_bytes;
}
