/* Tests for config: precedence of options, DRQA_* variables, vendor variables
 * and the config file (one table row per case), file parsing and its errors,
 * the policy line, and the key kept out of it. */
#include "tap.h"
#include "harness.h"
#include "llm_config.h"
#include "util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct row {
    const char *name;
    const char *o_provider, *o_base, *o_model, *o_policy;
    const char *env[6];
    const char *file;          /* config file text, or NULL for none */
    int rc;
    const char *provider, *base, *key, *model;  /* key/model "" means NULL */
    const char *describe;      /* exact line, or NULL to skip; on failure: a substring of err */
};

static const struct row rows[] = {
    {"nothing set", 0, 0, 0, 0, {0}, NULL, 0, "openai", "https://api.openai.com/v1", "", "",
     "policy: offline (no model configured; set DRQA_MODEL or --model to use one)"},
    {"DRQA_MODEL and DRQA_API_BASE", 0, 0, 0, 0,
     {"DRQA_MODEL=qwen3-coder", "DRQA_API_BASE=http://127.0.0.1:8000/v1/"}, NULL, 0,
     "openai", "http://127.0.0.1:8000/v1", "", "qwen3-coder",
     "policy: llm (openai-compatible, model qwen3-coder at http://127.0.0.1:8000/v1)"},
    {"--model beats DRQA_MODEL beats file", 0, 0, "cli-model", 0, {"DRQA_MODEL=env-model"}, "model = file-model\n", 0,
     "openai", "https://api.openai.com/v1", "", "cli-model", NULL},
    {"DRQA_MODEL beats file", 0, 0, 0, 0, {"DRQA_MODEL=env-model"}, "model = file-model\n", 0,
     "openai", "https://api.openai.com/v1", "", "env-model", NULL},
    {"an empty variable counts as unset", 0, 0, 0, 0, {"DRQA_MODEL="}, "model = file-model\n", 0,
     "openai", "https://api.openai.com/v1", "", "file-model", NULL},
    {"--api-base beats DRQA_API_BASE", 0, "http://127.0.0.1:1/v1", 0, 0, {"DRQA_API_BASE=http://127.0.0.1:2/v1"}, NULL, 0,
     "openai", "http://127.0.0.1:1/v1", "", "", NULL},
    {"DRQA_API_KEY beats OPENAI_API_KEY", 0, 0, 0, 0, {"DRQA_API_KEY=k-drqa", "OPENAI_API_KEY=k-openai"}, "api_key = k-file\n", 0,
     "openai", "https://api.openai.com/v1", "k-drqa", "", NULL},
    {"OPENAI_API_KEY beats the file", 0, 0, 0, 0, {"OPENAI_API_KEY=k-openai"}, "api_key = k-file\n", 0,
     "openai", "https://api.openai.com/v1", "k-openai", "", NULL},
    {"the file key when nothing else", 0, 0, 0, 0, {0}, "api_key = \"k-file\"\n", 0,
     "openai", "https://api.openai.com/v1", "k-file", "", NULL},
    {"ANTHROPIC_API_KEY alone implies anthropic", 0, 0, 0, 0, {"ANTHROPIC_API_KEY=k-anth", "DRQA_MODEL=claude-x"}, NULL, 0,
     "anthropic", "https://api.anthropic.com", "k-anth", "claude-x",
     "policy: llm (anthropic, model claude-x at https://api.anthropic.com)"},
    {"ANTHROPIC_API_KEY with OPENAI_API_KEY stays openai", 0, 0, 0, 0, {"ANTHROPIC_API_KEY=k-anth", "OPENAI_API_KEY=k-openai"}, NULL, 0,
     "openai", "https://api.openai.com/v1", "k-openai", "", NULL},
    {"ANTHROPIC_API_KEY with a base in the file stays openai, no key", 0, 0, 0, 0, {"ANTHROPIC_API_KEY=k-anth"},
     "api_base = http://127.0.0.1:9/v1\n", 0, "openai", "http://127.0.0.1:9/v1", "", "", NULL},
    {"--provider anthropic never takes OPENAI_API_KEY", "anthropic", 0, 0, 0, {"OPENAI_API_KEY=k-openai"}, NULL, 0,
     "anthropic", "https://api.anthropic.com", "", "", NULL},
    {"DRQA_PROVIDER anthropic takes ANTHROPIC_API_KEY over the file", 0, 0, 0, 0,
     {"DRQA_PROVIDER=anthropic", "ANTHROPIC_API_KEY=k-anth"}, "api_key = k-file\n", 0,
     "anthropic", "https://api.anthropic.com", "k-anth", "", NULL},
    {"file provider anthropic", 0, 0, 0, 0, {0}, "provider = anthropic\nmodel = claude-y\n", 0,
     "anthropic", "https://api.anthropic.com", "", "claude-y", NULL},
    {"OLLAMA_HOST gives {host}/v1", 0, 0, 0, 0, {"OLLAMA_HOST=127.0.0.1:11434"}, NULL, 0,
     "openai", "http://127.0.0.1:11434/v1", "", "", NULL},
    {"OLLAMA_HOST with a scheme", 0, 0, 0, 0, {"OLLAMA_HOST=http://10.0.0.2:11434"}, NULL, 0,
     "openai", "http://10.0.0.2:11434/v1", "", "", NULL},
    {"OPENAI_BASE_URL beats OLLAMA_HOST", 0, 0, 0, 0, {"OLLAMA_HOST=127.0.0.1:11434", "OPENAI_BASE_URL=http://127.0.0.1:3/v1"}, NULL, 0,
     "openai", "http://127.0.0.1:3/v1", "", "", NULL},
    {"OLLAMA_HOST beats the file", 0, 0, 0, 0, {"OLLAMA_HOST=127.0.0.1:11434"}, "api_base = http://127.0.0.1:4/v1\n", 0,
     "openai", "http://127.0.0.1:11434/v1", "", "", NULL},
    {"DRQA_API_BASE beats OLLAMA_HOST", 0, 0, 0, 0, {"OLLAMA_HOST=127.0.0.1:11434", "DRQA_API_BASE=http://127.0.0.1:5/v1"}, NULL, 0,
     "openai", "http://127.0.0.1:5/v1", "", "", NULL},
    {"--policy offline with a model", 0, 0, "m", "offline", {0}, NULL, 0,
     "openai", "https://api.openai.com/v1", "", "m", "policy: offline (--policy offline)"},
    {"the key never shows in the policy line", 0, "http://user:pw@127.0.0.1:6/v1", "m", "llm", {"DRQA_API_KEY=sk-secret"}, NULL, 0,
     "openai", "http://user:pw@127.0.0.1:6/v1", "sk-secret", "m",
     "policy: llm (openai-compatible, model m at http://[redacted]@127.0.0.1:6/v1)"},
    {"--policy llm needs a model", 0, 0, 0, "llm", {0}, NULL, -1, 0, 0, 0, 0, "--policy llm needs a model"},
    {"--policy must be offline or llm", 0, 0, "m", "auto", {0}, NULL, -1, 0, 0, 0, 0, "--policy takes offline or llm, not 'auto'"},
    {"unknown provider names its source", 0, 0, 0, 0, {"DRQA_PROVIDER=gemini"}, NULL, -1, 0, 0, 0, 0,
     "unknown provider 'gemini' (from DRQA_PROVIDER); use openai (any OpenAI-compatible server), anthropic or azure"},
    {"the provider table's alias", 0, 0, 0, 0, {"DRQA_PROVIDER=openai-compatible"}, NULL, 0,
     "openai", "https://api.openai.com/v1", "", "", NULL},
    {"the provider table's default base and key variable", 0, 0, 0, 0,
     {"DRQA_PROVIDER=anthropic", "ANTHROPIC_API_KEY=k-anth", "OPENAI_API_KEY=k-oai"}, NULL, 0,
     "anthropic", "https://api.anthropic.com", "k-anth", "", NULL},
    {"a base without a scheme", 0, 0, 0, 0, {"DRQA_API_BASE=127.0.0.1:8000/v1"}, NULL, -1, 0, 0, 0, 0,
     "the API base '127.0.0.1:8000/v1' (from DRQA_API_BASE) must start with http:// or https://"},
    /* Azure OpenAI: no public endpoint, its own key variable, never OpenAI's */
    {"provider azure needs the resource's endpoint", "azure", 0, "gpt-4o", 0, {"AZURE_OPENAI_API_KEY=k-az"}, NULL, -1,
     0, 0, 0, 0, "provider azure needs the endpoint of your resource"},
    {"provider azure takes AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY, not OPENAI_API_KEY", 0, 0, 0, 0,
     {"DRQA_PROVIDER=azure-openai", "AZURE_OPENAI_ENDPOINT=https://r.openai.azure.com/openai/v1/",
      "OPENAI_API_KEY=k-oai", "AZURE_OPENAI_API_KEY=k-az"}, NULL, 0,
     "azure", "https://r.openai.azure.com/openai/v1", "k-az", "", NULL},
    {"api takes chat or responses", 0, 0, 0, 0, {0}, "api = stream\n", -1, 0, 0, 0, 0,
     "api takes chat or responses; fix the value on that line"},
    {"a bad provider in the file names file:line", 0, 0, 0, 0, {0}, "# models\n\nprovider = palm\n", -1, 0, 0, 0, 0,
     "config:3: unknown provider"},
};

static char dir[256];

static int write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    fputs(text, fp);
    return fclose(fp);
}

static void run_row(const struct row *r)
{
    struct config_overrides o = {0};
    o.provider = r->o_provider;
    o.api_base = r->o_base;
    o.model = r->o_model;
    o.policy = r->o_policy;
    char cfgdir[128], cfg[160], xdg[160];
    snprintf(cfgdir, sizeof cfgdir, "%s/xdg/drqa-tui", dir);
    snprintf(cfg, sizeof cfg, "%s/config", cfgdir);
    unlink(cfg);
    if (r->file) write_text(cfg, r->file);
    snprintf(xdg, sizeof xdg, "XDG_CONFIG_HOME=%s/xdg", dir);
    const char *env[8];
    size_t n = 0;
    env[n++] = xdg;
    for (size_t i = 0; i < ARRAY_LEN(r->env) && r->env[i]; i++) env[n++] = r->env[i];
    env[n] = NULL;
    struct drqa_config c;
    char err[512] = "", line[256];
    int rc = config_load_env(&c, &o, env, err, sizeof err);
    if (!is_int(rc, r->rc, "%s: result", r->name)) diag("err: %s", err);
    if (rc == 0 && r->rc == 0) {
        is_str(config_provider_name(c.provider), r->provider, "%s: provider", r->name);
        is_str(c.api_base, r->base, "%s: base", r->name);
        is_str(c.api_key ? c.api_key : "", r->key, "%s: key", r->name);
        is_str(c.model ? c.model : "", r->model, "%s: model", r->name);
        const char *d = config_describe(&c, line, sizeof line);
        if (r->describe) is_str(d, r->describe, "%s: policy line", r->name);
        ok(!c.api_key || !strstr(line, c.api_key), "%s: no key in the policy line", r->name);
    } else if (rc != 0 && r->describe) {
        ok(strstr(err, r->describe) != NULL, "%s: error says '%s': %s", r->name, r->describe, err);
    }
    config_free(&c);
}

static int load_file(const char *text, struct drqa_config *c, char *err, size_t errlen)
{
    char path[128];
    snprintf(path, sizeof path, "%s/explicit.conf", dir);
    write_text(path, text);
    struct config_overrides o = {0};
    o.config_path = path;
    const char *env[] = {NULL};
    return config_load_env(c, &o, env, err, errlen);
}

/* config_kv_parse's fn for the test: records "N:key=val" (or "N:key" without '='), stops at key "stop". */
static int kv_record(void *arg, int lineno, char *key, char *val)
{
    buf_printf(arg, "%d:%s%s%s|", lineno, key, val ? "=" : "", val ? val : "");
    return strcmp(key, "stop") == 0 ? 7 : 0;
}

int main(void)
{
    ok(temp_dir(dir, sizeof dir, "config") != NULL, "temp dir");
    char sub[128];
    snprintf(sub, sizeof sub, "%s/xdg", dir);
    mkdir(sub, 0700);
    snprintf(sub, sizeof sub, "%s/xdg/drqa-tui", dir);
    mkdir(sub, 0700);

    for (size_t i = 0; i < ARRAY_LEN(rows); i++) run_row(&rows[i]);

    struct drqa_config c;
    char err[512];
    int rc = load_file("# drqa-tui settings\n"
                       "  api_base = http://127.0.0.1:8000/v1\n"
                       "model=qwen3-coder\n"
                       "json_mode = true\n"
                       "timeout_connect_ms = 1500\n"
                       "timeout_total_ms = 90000\n"
                       "retries = 2\n"
                       "backoff_ms = 100\n"
                       "max_reply_bytes = 65536\n"
                       "embed_model = nomic-embed\n"
                       "embed_batch = 16\n"
                       "price.gpt-4.1.input = 2.0\n"
                       "price.gpt-4.1.output = 8\n"
                       "price.cheap.input = 0.1\n",
                       &c, err, sizeof err);
    is_int(rc, 0, "a full config file parses: %s", rc ? err : "");
    is_str(c.model, "qwen3-coder", "model from the file");
    is_int(c.json_mode, 1, "json_mode = true");
    is_int(c.embed_batch, 16, "embed_batch");
    is_str(c.embed_base, "http://127.0.0.1:8000/v1", "embeddings default to the chat server for openai");
    is_str(c.embed_model, "nomic-embed", "embed_model");
    ok(c.file && str_ends(c.file, "/explicit.conf"), "the file read is remembered");
    struct http_opts ho;
    config_http_opts(&c, &ho);
    is_int(ho.connect_timeout_ms, 1500, "connect timeout reaches the http options");
    is_int(ho.total_timeout_ms, 90000, "total timeout reaches the http options");
    is_int(ho.max_attempts, 3, "retries = 2 means three attempts");
    is_int(ho.backoff_base_ms, 100, "backoff");
    is_int(ho.max_reply, 65536, "reply cap");
    double pin = 0, pout = 0;
    is_int(config_price(&c, "gpt-4.1", &pin, &pout), 0, "a model name with dots has a price");
    ok(pin == 2.0 && pout == 8.0, "prices 2 and 8 USD per million (got %g, %g)", pin, pout);
    is_int(config_price(&c, "cheap", &pin, &pout), -1, "a half-given price is not a price");
    is_int(config_price(&c, "qwen3-coder", &pin, &pout), -1, "no price for an unlisted model");
    config_free(&c);
    config_free(NULL);

    static const struct { const char *text, *want; } bad[] = {
        {"model = m\n\napi_base http://x\n", "explicit.conf:3: expected 'key = value' after 'api_base' (the rest of the line is not shown)"},
        {"modle = m\n", "explicit.conf:1: unknown key 'modle'; known keys: api_base"},
        {"model = m\nretries = many\n", "explicit.conf:2: retries takes a whole number from 0 to 20; fix the value on that line"},
        {"retries = 99\n", "explicit.conf:1: retries takes a whole number from 0 to 20; fix"},
        {"json_mode = maybe\n", "explicit.conf:1: json_mode takes true or false; fix"},
        {"price.gpt-4.1.input = cheap\n", "explicit.conf:1: price.gpt-4.1.input takes a price in USD per million tokens"},
        {"price.gpt = 1\n", "explicit.conf:1: 'price.gpt' is not a price key"},
        {"api_key =\n", "explicit.conf:1: 'api_key' has no value"},
        {"= x\n", "explicit.conf:1: a line has no key before '='"},
        {"temperature = hot\n", "explicit.conf:1: temperature takes a number from 0 to 2; fix"},
        {"embed_base = ftp://x\n", "explicit.conf:1: the embeddings base must start with http:// or https://"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        err[0] = 0;
        rc = load_file(bad[i].text, &c, err, sizeof err);
        ok(rc == -1 && strstr(err, bad[i].want), "bad file %zu: %s", i, err);
        config_free(&c);
    }

    /* a line that may hold a key is never echoed, only its setting's name */
    static const char *const leaky[] = {"api_key: sk-SECRET-7q\n", "api_key sk-SECRET-7q = x\n",
                                        "embed_key \"sk-SECRET-7q\"\n", "sk-SECRET-7q\n"};
    for (size_t i = 0; i < ARRAY_LEN(leaky); i++) {
        err[0] = 0;
        rc = load_file(leaky[i], &c, err, sizeof err);
        ok(rc == -1 && !strstr(err, "SECRET") && strstr(err, "explicit.conf:1:"),
           "malformed line %zu: file:line named, the value not echoed: %s", i, err);
        config_free(&c);
    }

    /* a value a setting does not take is never echoed either: a key written
     * on the wrong line (retries = sk-...) names only the file, line and setting */
    static const char *const wrong_line[] = {
        "retries", "max_tokens", "temperature", "timeout_total_ms", "backoff_ms", "max_reply_bytes", "embed_batch",
        "json_mode", "provider", "api_base", "embed_base", "price.gpt-4.1.input", "price.m.output",
        "profile.gpt-4*.max_output", "profile.o3*.token_param", "profile.x.reasoning_effort", "profile.x.schema"};
    for (size_t i = 0; i < ARRAY_LEN(wrong_line); i++) {
        char text[160];
        snprintf(text, sizeof text, "model = m\n%s = sk-WRONGLINE-9xQ\n", wrong_line[i]);
        err[0] = 0;
        rc = load_file(text, &c, err, sizeof err);
        ok(rc == -1 && !strstr(err, "WRONGLINE") && !strstr(err, "sk-") && strstr(err, "explicit.conf:2:"),
           "%s = KEY: file:line and setting named, the value not echoed: %s", wrong_line[i], err);
        config_free(&c);
    }

    /* a file holding a key (or the server it goes to) must be the user's own, as ssh wants */
    char cpath[160];
    snprintf(cpath, sizeof cpath, "%s/explicit.conf", dir);
    static const struct { const char *text; mode_t mode; int want; const char *msg; } perms[] = {
        {"api_key = sk-x1234\n", 0666, -1, "writable by everyone (mode 0666)"},
        {"embed_key = sk-x1234\n", 0620, -1, "writable by its group (mode 0620)"},
        {"api_base = http://127.0.0.1:9/v1\n", 0646, -1, "it sets api_base but is writable by everyone"},
        {"api_key = sk-x1234\n", 0600, 0, NULL},
        {"api_key = sk-x1234\n", 0644, 0, NULL},
        {"model = m\n", 0666, 0, NULL},
    };
    struct config_overrides o;
    for (size_t i = 0; i < ARRAY_LEN(perms); i++) {
        write_text(cpath, perms[i].text);
        chmod(cpath, perms[i].mode);
        o = (struct config_overrides){0};
        o.config_path = cpath;
        const char *env0[] = {NULL};
        err[0] = 0;
        rc = config_load_env(&c, &o, env0, err, sizeof err);
        if (perms[i].want)
            ok(rc == -1 && strstr(err, perms[i].msg) && strstr(err, "chmod go-w") && !strstr(err, "sk-x1234"),
               "mode %04o with %.*s: refused: %s", (unsigned)perms[i].mode, (int)strcspn(perms[i].text, " "),
               perms[i].text, err);
        else
            is_int(rc, 0, "mode %04o with %.*s: read %s", (unsigned)perms[i].mode, (int)strcspn(perms[i].text, " "),
                   perms[i].text, err);
        config_free(&c);
    }
    write_text(cpath, "api_key = sk-x1234\n");
    chmod(cpath, 0600);
    if (geteuid() == 0 && chown(cpath, 65534, 65534) == 0) {
        o = (struct config_overrides){0};
        o.config_path = cpath;
        const char *env0[] = {NULL};
        rc = config_load_env(&c, &o, env0, err, sizeof err);
        ok(rc == -1 && strstr(err, "owned by uid 65534, not by you"), "a key file owned by another user is refused: %s",
           err);
        config_free(&c);
        if (chown(cpath, 0, 0) != 0) diag("could not give %s back", cpath);
    } else {
        printf("ok %d - # SKIP a file owned by another user needs root to make (uid %ld)\n", ++tap_n,
               (long)geteuid());
    }
    unlink(cpath);

    o = (struct config_overrides){0};
    o.config_path = "/nonexistent/drqa.conf";
    const char *noenv[] = {NULL};
    rc = config_load_env(&c, &o, noenv, err, sizeof err);
    ok(rc == -1 && strstr(err, "cannot read the config file '/nonexistent/drqa.conf': No such file or directory"),
       "a missing --config file is an error: %s", err);
    config_free(&c);

    /* embeddings on another server: the chat key does not follow */
    const char *env2[] = {"DRQA_API_KEY=k-chat", "DRQA_EMBED_BASE=http://127.0.0.1:7/v1", NULL};
    o = (struct config_overrides){0};
    rc = config_load_env(&c, &o, env2, err, sizeof err);
    is_int(rc, 0, "embed base from DRQA_EMBED_BASE");
    ok(c.embed_key == NULL, "the chat key is not sent to another embeddings server");
    config_free(&c);
    const char *env3[] = {"DRQA_API_KEY=k-chat", "DRQA_EMBED_BASE=http://127.0.0.1:7/v1", "DRQA_EMBED_KEY=k-emb",
                          "DRQA_EMBED_MODEL=e5", NULL};
    rc = config_load_env(&c, &o, env3, err, sizeof err);
    is_str(c.embed_key, "k-emb", "DRQA_EMBED_KEY");
    is_str(c.embed_model, "e5", "DRQA_EMBED_MODEL");
    config_free(&c);
    const char *env4[] = {"DRQA_API_KEY=k-chat", NULL};
    rc = config_load_env(&c, &o, env4, err, sizeof err);
    is_str(c.embed_key, "k-chat", "same server: the chat key is the embeddings key");
    config_free(&c);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    /* the settings-file line reader shared with the judges file */
    {
        char text[] = "# comment\n\n  a = 1 \r\nb=\"q v\"\nno equals here\n\tc =\nstop = x\nafter = y\n";
        struct buf got = BUF_INIT;
        is_int(config_kv_parse(text, kv_record, &got), 7, "config_kv_parse returns what the callback stopped with");
        is_str(buf_str(&got), "3:a=1|4:b=q v|5:no equals here|6:c=|7:stop=x|",
               "config_kv_parse: comments and blank lines skipped, trimmed, unquoted, no '=' is val NULL, stops");
        buf_free(&got);
    }
    return done_testing();
}
