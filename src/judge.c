/*
 * judge: the five-dimension LLM judge (rubric in prompts/judge.txt): reading
 * and validating its JSON reply, asking again with the validation error, and
 * building one chat backend per judge from --judge-model specs and the judges
 * file. Rules and formats are in judge.h.
 */
#include "judge.h"
#include "jsonx.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- replies ---- */

/* Copies s into out (size n) without cutting a UTF-8 sequence. */
static void copy_utf8(char *out, size_t n, const char *s)
{
    size_t len = strlen(s);
    if (len >= n) {
        len = n - 1;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
    }
    memcpy(out, s, len);
    out[len] = 0;
}

int judge_parse_reply(const char *text, struct judge_scores *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    char perr[256];
    cJSON *obj = jsonx_parse_object(text ? text : "", perr, sizeof perr);
    if (!obj) {
        snprintf(err, errlen, "no JSON object in the reply (%s)", perr);
        return -1;
    }
    struct jsonx_check c;
    jsonx_check_init(&c);
    for (int d = 0; d < EVAL_NDIM; d++) {
        long v = 0;
        if (jsonx_int(&c, obj, eval_dims[d], 1, 20, 1, &v) == 1) s->v[d] = (int)v;
    }
    const char *why = jsonx_string(&c, obj, "rationale", 0);
    if (why) copy_utf8(s->rationale, sizeof s->rationale, why);
    int rc = 0;
    if (c.nerr) {
        snprintf(err, errlen, "%s", jsonx_check_message(&c));
        rc = -1;
    }
    jsonx_check_free(&c);
    cJSON_Delete(obj);
    return rc;
}

void judge_ask(struct llm_backend *b, const char *prompt, struct llm_usage *usage, struct judge_outcome *out)
{
    memset(out, 0, sizeof *out);
    struct llm_message msgs[1 + 2 * JUDGE_MAX_REASKS];
    char *owned[2 * JUDGE_MAX_REASKS];
    size_t nmsg = 0, nowned = 0;
    msgs[nmsg++] = (struct llm_message){"user", prompt};
    char verr[400] = "";
    for (int attempt = 0; attempt <= JUDGE_MAX_REASKS; attempt++) {
        struct llm_request req;
        llm_request_init(&req);
        req.messages = msgs;
        req.nmessages = nmsg;
        req.temperature = 0.0;
        req.json_mode = 1;
        req.tag = "judge";
        struct llm_reply reply;
        int rc = llm_chat(b, &req, &reply, usage);
        out->attempts++;
        out->input_tokens += reply.input_tokens;
        out->output_tokens += reply.output_tokens;
        if (rc != LLM_OK || !reply.text) {
            snprintf(out->error, sizeof out->error, "the judge call failed: %s", reply.error);
            llm_reply_free(&reply);
            goto done;
        }
        if (judge_parse_reply(reply.text, &out->s, verr, sizeof verr) == 0) {
            out->ok = 1;
            llm_reply_free(&reply);
            goto done;
        }
        if (attempt == JUDGE_MAX_REASKS) {
            llm_reply_free(&reply);
            break;
        }
        owned[nowned] = reply.text;
        reply.text = NULL;
        msgs[nmsg++] = (struct llm_message){"assistant", owned[nowned++]};
        owned[nowned] = xasprintf("Your reply could not be used: %s. Reply with only the JSON object "
                                  "{\"correctness\": N, \"completeness\": N, \"relevance\": N, \"clarity\": N, "
                                  "\"reasoning\": N, \"rationale\": \"one or two sentences\"}, each N a whole "
                                  "number from 1 to 20.",
                                  verr);
        msgs[nmsg++] = (struct llm_message){"user", owned[nowned++]};
        llm_reply_free(&reply);
    }
    snprintf(out->error, sizeof out->error, "no valid reply in %d attempts; the last: %s", out->attempts, verr);
done:
    for (size_t i = 0; i < nowned; i++) free(owned[i]);
}

/* ---- prompt ---- */

static const char *const judge_placeholders[] = {"question", "reference", "answer", NULL};

struct prompt *judge_prompt_load(char *err, size_t errlen)
{
    struct prompt *p = prompt_load("judge", NULL, 0, judge_placeholders, err, errlen);
    if (!p) return NULL;
    for (size_t i = 0; judge_placeholders[i]; i++) {
        char ph[40];
        snprintf(ph, sizeof ph, "{{%s}}", judge_placeholders[i]);
        if (!strstr(p->text, ph)) {
            snprintf(err, errlen, "%s: the judge prompt has no %s; it needs {{question}}, {{reference}} and "
                     "{{answer}}", p->path, ph);
            prompt_free(p);
            return NULL;
        }
    }
    return p;
}

char *judge_prompt_render(const struct prompt *p, const char *question, const char *reference, const char *answer,
                          char *err, size_t errlen)
{
    /* Caps keep one prompt bounded whatever an answers file holds. */
    struct prompt_var vars[] = {
        {"question", question, 8 * 1024},
        {"reference", reference, 48 * 1024},
        {"answer", answer, 48 * 1024},
    };
    return prompt_render(p, vars, ARRAY_LEN(vars), err, errlen);
}

/* ---- judges ---- */

struct jfile_entry {
    char *name;
    char *model, *base, *key, *provider;
    int line, provider_line, base_line;
};

struct jfile {
    char *path;
    struct jfile_entry *v;
    size_t n;
};

static void jfile_free(struct jfile *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].name);
        free(f->v[i].model);
        free(f->v[i].base);
        free(f->v[i].key);
        free(f->v[i].provider);
    }
    free(f->v);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static struct jfile_entry *jfile_get(struct jfile *f, const char *name, size_t nlen, int line)
{
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->v[i].name) == nlen && memcmp(f->v[i].name, name, nlen) == 0) return &f->v[i];
    f->v = xreallocarray(f->v, f->n + 1, sizeof *f->v);
    struct jfile_entry *e = &f->v[f->n++];
    memset(e, 0, sizeof *e);
    e->name = xstrndup(name, nlen);
    e->line = line;
    return e;
}

static const char *env_get(const char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') return *env + n + 1;
    return NULL;
}

static int valid_url(const char *s)
{
    return str_starts(s, "http://") || str_starts(s, "https://");
}

static int parse_provider(const char *s, enum llm_provider *p)
{
    const struct llm_provider_info *pi = llm_provider_find(s);
    if (!pi) return -1;
    *p = pi->id;
    return 0;
}

/* What a judges file's lines are read into. */
struct jfile_lines {
    struct jfile *f;
    const char *path;
    char *err;
    size_t errlen;
};

/* One line of the judges file (config_kv_parse's fn). */
static int jfile_line(void *arg, int lineno, char *key, char *val)
{
    struct jfile_lines *L = arg;
    const char *path = L->path;
    char *err = L->err;
    size_t errlen = L->errlen;
    if (!val) {
        snprintf(err, errlen, "%s:%d: expected 'judge.NAME.FIELD = value'; fix or comment out the line with #",
                 path, lineno);
        return -1;
    }
    const char *dot = strrchr(key, '.');
    if (!str_starts(key, "judge.") || !dot || dot <= key + 6) {
        snprintf(err, errlen, "%s:%d: '%s' is not a judge key; write judge.NAME.model, judge.NAME.base, "
                 "judge.NAME.key or judge.NAME.provider", path, lineno, key);
        return -1;
    }
    const char *field = dot + 1;
    if (!*val) {
        snprintf(err, errlen, "%s:%d: '%s' has no value; give one or remove the line", path, lineno, key);
        return -1;
    }
    struct jfile_entry *e = jfile_get(L->f, key + 6, (size_t)(dot - key - 6), lineno);
    char **slot = NULL;
    if (strcmp(field, "model") == 0) slot = &e->model;
    else if (strcmp(field, "base") == 0) { slot = &e->base; e->base_line = lineno; }
    else if (strcmp(field, "key") == 0) slot = &e->key;
    else if (strcmp(field, "provider") == 0) { slot = &e->provider; e->provider_line = lineno; }
    if (!slot) {
        snprintf(err, errlen, "%s:%d: unknown judge field '%s'; use model, base, key or provider", path, lineno,
                 field);
        return -1;
    }
    enum llm_provider p;
    if (slot == &e->provider && parse_provider(val, &p)) {
        char names[200];
        snprintf(err, errlen, "%s:%d: unknown provider (values are not shown); use %s", path, lineno,
                 llm_provider_choices(names, sizeof names, 1));
        return -1;
    }
    if (slot == &e->base && !valid_url(val)) {
        snprintf(err, errlen, "%s:%d: a judge base must start with http:// or https:// (values are not shown)", path,
                 lineno);
        return -1;
    }
    free(*slot);
    *slot = xstrdup(val);
    return 0;
}

static int jfile_read(struct jfile *f, const char *path, int required, char *err, size_t errlen)
{
    size_t len;
    struct stat st;
    char *text = read_file_ex(path, 1 << 20, &len, 0, &st);
    if (!text) {
        if (!required && errno == ENOENT) return 0;
        snprintf(err, errlen, "cannot read the judges file '%s': %s; check the path", path, strerror(errno));
        return -1;
    }
    f->path = xstrdup(path);
    struct jfile_lines L = {f, path, err, errlen};
    int rc = config_kv_parse(text, jfile_line, &L);
    free(text);
    /* a key, or a server a key is sent to: the file must be the user's own (llm_config.h) */
    for (size_t i = 0; i < f->n && !rc; i++)
        if (f->v[i].key || f->v[i].base) {
            char *setting = xasprintf("judge.%s.%s", f->v[i].name, f->v[i].key ? "key" : "base");
            rc = config_file_trusted(path, &st, setting, err, errlen);
            free(setting);
        }
    return rc;
}

static char *strip_slash(const char *s)
{
    char *d = xstrdup(s);
    size_t n = strlen(d);
    while (n && d[n - 1] == '/') d[--n] = 0;
    return d;
}

/* One judge from a name, an optional URL from the spec and the file's entry. */
static int judge_build(struct judge *j, const char *name, const char *url, const struct jfile_entry *e,
                       const struct drqa_config *cfg, const char *const *env, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->name = xstrdup(name);
    j->model = xstrdup(e && e->model ? e->model : name);
    int provider_given = e && e->provider;
    if (provider_given) parse_provider(e->provider, &j->provider);
    else j->provider = cfg->provider;
    const char *base = url ? url : e && e->base ? e->base : NULL;
    if (!base) {
        if (j->provider == cfg->provider && cfg->api_base) base = cfg->api_base;
        else base = llm_provider_get(j->provider)->default_base;
    }
    if (!base) {   /* a provider without a public endpoint (azure) */
        snprintf(err, errlen, "judge '%s': provider %s has no default endpoint; give the judge its base URL",
                 name, llm_provider_get(j->provider)->name);
        return -1;
    }
    j->base = strip_slash(base);
    const char *key = e && e->key ? e->key : NULL;
    if (!key && cfg->api_base && strcmp(j->base, cfg->api_base) == 0 && j->provider == cfg->provider)
        key = cfg->api_key;
    /* the vendor's key variable, only for the vendor's own endpoint */
    const struct llm_provider_info *pi = llm_provider_get(j->provider);
    if (!key && pi->default_base && strcmp(j->base, pi->default_base) == 0) key = env_get(env, pi->key_env);

    struct drqa_config jc = *cfg;   /* borrowed strings; never config_free'd */
    jc.provider = j->provider;
    jc.api_base = j->base;
    jc.api_key = (char *)key;
    jc.model = j->model;
    jc.temperature = 0.0;
    char berr[400];
    j->backend = llm_backend_new(&jc, berr, sizeof berr);
    if (!j->backend) {
        snprintf(err, errlen, "judge '%s': %s", name, berr);
        return -1;
    }
    return 0;
}

static void judge_clear(struct judge *j)
{
    free(j->name);
    free(j->model);
    free(j->base);
    llm_backend_free(j->backend);
}

void judge_set_free(struct judge_set *js)
{
    if (!js) return;
    for (size_t i = 0; i < js->n; i++) judge_clear(&js->v[i]);
    free(js->v);
    free(js->file);
    memset(js, 0, sizeof *js);
}

int judge_set_resolve(struct judge_set *js, const struct drqa_config *cfg, const char *const *specs, size_t nspecs,
                      const char *path, const char *const *env, char *err, size_t errlen)
{
    memset(js, 0, sizeof *js);
    if (!env) env = (const char *const *)environ;
    struct jfile f;
    memset(&f, 0, sizeof f);
    char *defpath = NULL;
    if (!path) {
        const char *xdg = env_get(env, "XDG_CONFIG_HOME"), *home = env_get(env, "HOME");
        if (xdg && xdg[0] == '/') defpath = xasprintf("%s/drqa-tui/judges", xdg);
        else if (home && *home) defpath = xasprintf("%s/.config/drqa-tui/judges", home);
    }
    int rc = -1;
    if ((path || defpath) && jfile_read(&f, path ? path : defpath, path != NULL, err, errlen)) goto out;
    if (f.path) js->file = xstrdup(f.path);

    size_t n = nspecs ? nspecs : f.n;
    js->v = xcalloc(n ? n : 1, sizeof *js->v);
    for (size_t i = 0; i < n; i++) {
        char *name = NULL;
        const char *url = NULL;
        if (nspecs) {
            const char *spec = specs[i], *at = NULL;
            for (const char *p = strchr(spec, '@'); p; p = strchr(p + 1, '@'))
                if (valid_url(p + 1) || strstr(p + 1, "://")) { at = p; break; }
            name = at ? xstrndup(spec, (size_t)(at - spec)) : xstrdup(spec);
            url = at ? at + 1 : NULL;
            if (!*name) {
                snprintf(err, errlen, "--judge-model '%s' has no model name; write NAME or NAME@URL", spec);
                free(name);
                goto out;
            }
            if (url && !valid_url(url)) {
                snprintf(err, errlen, "--judge-model '%s': the URL must start with http:// or https://", spec);
                free(name);
                goto out;
            }
        } else {
            name = xstrdup(f.v[i].name);
        }
        for (size_t k = 0; k < js->n; k++)
            if (strcmp(js->v[k].name, name) == 0) {
                snprintf(err, errlen, "judge '%s' is named twice; give each judge once", name);
                free(name);
                goto out;
            }
        const struct jfile_entry *e = NULL;
        for (size_t k = 0; k < f.n && !e; k++)
            if (strcmp(f.v[k].name, name) == 0) e = &f.v[k];
        int r = judge_build(&js->v[js->n], name, url, e, cfg, env, err, errlen);
        free(name);
        if (r) {
            judge_clear(&js->v[js->n]);
            goto out;
        }
        js->n++;
    }
    rc = 0;
out:
    if (rc) judge_set_free(js);
    jfile_free(&f);
    free(defpath);
    return rc;
}
