/*
 * transcript: JSON and Markdown forms of a search, credential filtering, and
 * loading a JSON transcript back into a tree. See transcript.h.
 */
#include "transcript.h"
#include "llm_config.h"
#include "url.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- credential filtering ---- */

int transcript_secret_name(const char *name)
{
    static const char *const words[] = {"key", "secret", "passw", "authoriz", "credential",
                                        "cookie", "bearer", "session"};
    if (!name) return 0;
    char *l = str_lower(name);
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(words) && !bad; i++) bad = strstr(l, words[i]) != NULL;
    if (!bad && strstr(l, "token") && !str_ends(l, "tokens")) bad = 1;
    if (!bad && (strcmp(l, "auth") == 0 || str_starts(l, "auth_") || str_starts(l, "auth-") ||
                 str_ends(l, "_auth") || str_ends(l, "-auth")))
        bad = 1;
    free(l);
    return bad;
}

static int secret_value(const char *s)
{
    char *l = str_lower(s);
    int bad = str_starts(l, "sk-") || str_starts(l, "bearer ") || str_starts(l, "basic ") ||
              str_starts(l, "ghp_") || str_starts(l, "xoxb-");
    free(l);
    return bad;
}

/* A copy of a URL without user:password@ and without its query string. */
static char *scrub_url(const char *s)
{
    const char *scheme = strstr(s, "://");
    if (!scheme) return xstrdup(s);
    const char *host = scheme + 3;
    const char *end = host + strcspn(host, "/?#");
    const char *at = memchr(host, '@', (size_t)(end - host));
    struct buf b = BUF_INIT;
    buf_add(&b, s, (size_t)(host - s));
    buf_adds(&b, at ? at + 1 : host);
    char *out = buf_take(&b);
    out[strcspn(out, "?#")] = 0;
    return out;
}

static void filter_secrets(cJSON *o)
{
    cJSON *m = o ? o->child : NULL;
    while (m) {
        cJSON *next = m->next;
        if (cJSON_IsObject(o) && transcript_secret_name(m->string)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(o, m));
        } else if (cJSON_IsString(m) && secret_value(m->valuestring)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(o, m));
        } else if (cJSON_IsString(m) && strstr(m->valuestring, "://")) {
            char *clean = scrub_url(m->valuestring);
            cJSON_SetValuestring(m, clean);
            free(clean);
        } else if (cJSON_IsObject(m) || cJSON_IsArray(m)) {
            filter_secrets(m);
        }
        m = next;
    }
}

static void add_str(cJSON *o, const char *name, const char *v)
{
    if (v) cJSON_AddStringToObject(o, name, v);
    else cJSON_AddNullToObject(o, name);
}

/* A base URL, without the credentials it may carry (url.h). */
static void add_url(cJSON *o, const char *name, const char *v)
{
    char *safe = v ? url_redact(v) : NULL;
    add_str(o, name, safe);
    free(safe);
}

static void add_u64(cJSON *o, const char *name, uint64_t v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    cJSON_AddStringToObject(o, name, tmp);
}

void transcript_config_resolve(struct transcript_config *c, const struct drqa_config *cfg)
{
    c->policy = cfg->policy == POLICY_LLM ? "llm" : "offline";
    if (cfg->policy == POLICY_LLM) {
        c->provider = config_provider_name(cfg->provider);
        c->model = cfg->model;
        c->api_base = cfg->api_base;
    } else {
        c->provider = c->model = c->api_base = NULL;
    }
    c->embed_base = cfg->embed_base;
    c->embed_model = cfg->embed_model;
}

void transcript_stamp_created(cJSON *config)
{
    if (!config) return;
    const cJSON *had = cJSON_GetObjectItemCaseSensitive(config, "created");
    if (cJSON_IsString(had)) return;
    char stamp[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_DeleteItemFromObjectCaseSensitive(config, "created");
    cJSON_AddStringToObject(config, "created", stamp);
}

cJSON *transcript_config_json(const struct transcript_config *c)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "created", c->created);
    add_str(o, "repo", c->repo);
    add_str(o, "index", c->index_path);
    if (c->commit && *c->commit) {
        cJSON_AddStringToObject(o, "commit", c->commit);
        cJSON_AddBoolToObject(o, "dirty", c->dirty);
    } else {
        cJSON_AddNullToObject(o, "commit");
        cJSON_AddNullToObject(o, "dirty");
    }
    add_str(o, "mode", c->mode);
    add_str(o, "policy", c->policy);
    add_str(o, "provider", c->provider);
    add_str(o, "model", c->model);
    add_url(o, "api_base", c->api_base);
    add_url(o, "embed_base", c->embed_base);
    add_str(o, "embed_model", c->embed_model);
    cJSON_AddNumberToObject(o, "iterations", c->iterations);
    cJSON_AddNumberToObject(o, "max_expand", c->max_expand);
    cJSON_AddNumberToObject(o, "parallel", c->parallel);
    add_u64(o, "seed", c->seed);
    cJSON_AddNumberToObject(o, "budget_tokens", (double)c->budget_tokens);
    cJSON_AddNumberToObject(o, "exploration", c->exploration);
    cJSON_AddBoolToObject(o, "no_mcts", c->no_mcts);
    cJSON_AddBoolToObject(o, "no_perception", c->no_perception);
    cJSON_AddBoolToObject(o, "no_evaluation", c->no_evaluation);
    cJSON_AddBoolToObject(o, "no_semantic", c->no_semantic);
    if (c->extra) cJSON_AddItemToObject(o, "extra", cJSON_Duplicate(c->extra, 1));
    filter_secrets(o);
    return o;
}

/* ---- JSON ---- */

static cJSON *tokens_json(long long in, long long out)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "input", (double)in);
    cJSON_AddNumberToObject(o, "output", (double)out);
    return o;
}

/* The plain members of a node or an answer, described once for writing and
 * reading back: each table is a run of members in the order the file has
 * them; what needs more than a conversion (status, children, evidence, ...)
 * is written and read by hand between the runs. */
enum field_kind {
    F_INT,    /* int, a number */
    F_DBL,    /* double, a number */
    F_I64,    /* int64_t, a number */
    F_BOOL,   /* int, true/false; false when missing */
    F_SET,    /* int, written only when set (older readers see no new member) */
    F_STR,    /* char *, a string or null; read as a copy */
};

struct field {
    const char *name;
    enum field_kind kind;
    size_t off;
};

#define FIELD(type, member, kind) {#member, kind, offsetof(type, member)}
#define FIELDS_OF(table) table, ARRAY_LEN(table)

#define NODE_FIELD(member, kind) FIELD(struct mcts_node, member, kind)
static const struct field node_ids[] = {
    NODE_FIELD(id, F_INT), NODE_FIELD(parent, F_INT), NODE_FIELD(depth, F_INT), NODE_FIELD(iteration, F_INT),
};
static const struct field node_texts[] = {
    NODE_FIELD(args_key, F_STR), NODE_FIELD(rationale, F_STR), NODE_FIELD(report, F_STR),
};
static const struct field node_visits[] = {
    NODE_FIELD(feedback, F_STR), NODE_FIELD(visits, F_INT), NODE_FIELD(value_sum, F_DBL),
};
static const struct field node_flags[] = {
    NODE_FIELD(duplicate, F_BOOL), NODE_FIELD(dup_of, F_INT), NODE_FIELD(forced, F_BOOL),
    NODE_FIELD(error, F_STR), NODE_FIELD(transient, F_BOOL), NODE_FIELD(refused, F_BOOL),
    NODE_FIELD(exhausted, F_SET), NODE_FIELD(closed, F_SET),
};
static const struct field node_timings[] = {
    NODE_FIELD(started_ms, F_I64), NODE_FIELD(perceive_ms, F_I64), NODE_FIELD(plan_ms, F_I64),
    NODE_FIELD(execute_ms, F_I64), NODE_FIELD(evaluate_ms, F_I64),
};
#define ANSWER_FIELD(member, kind) FIELD(struct search_answer, member, kind)
static const struct field answer_fields[] = {
    ANSWER_FIELD(finish_node, F_INT), ANSWER_FIELD(from_finished, F_BOOL), ANSWER_FIELD(dropped, F_INT),
    ANSWER_FIELD(fallback_cite, F_BOOL), ANSWER_FIELD(error, F_STR), ANSWER_FIELD(failure, F_STR),
};

static void fields_json(cJSON *o, const void *base, const struct field *f, size_t n)
{
    for (; n--; f++) {
        const char *at = (const char *)base + f->off;
        switch (f->kind) {
        case F_INT: cJSON_AddNumberToObject(o, f->name, *(const int *)at); break;
        case F_DBL: cJSON_AddNumberToObject(o, f->name, *(const double *)at); break;
        case F_I64: cJSON_AddNumberToObject(o, f->name, (double)*(const int64_t *)at); break;
        case F_BOOL: cJSON_AddBoolToObject(o, f->name, *(const int *)at); break;
        case F_SET: if (*(const int *)at) cJSON_AddBoolToObject(o, f->name, 1); break;
        case F_STR: add_str(o, f->name, *(char *const *)at); break;
        }
    }
}

static cJSON *node_json(const struct mcts_node *n)
{
    cJSON *o = cJSON_CreateObject();
    fields_json(o, n, FIELDS_OF(node_ids));
    cJSON_AddStringToObject(o, "status", mcts_status_name(n->status));
    cJSON *ch = cJSON_AddArrayToObject(o, "children");
    for (int k = 0; k < n->nchildren; k++) cJSON_AddItemToArray(ch, cJSON_CreateNumber(n->children[k]));
    add_str(o, "action", n->action);
    if (n->args) cJSON_AddItemToObject(o, "args", cJSON_Duplicate(n->args, 1));
    else cJSON_AddNullToObject(o, "args");
    fields_json(o, n, FIELDS_OF(node_texts));
    cJSON_AddItemToObject(o, "observation", evidence_to_json(&n->obs));
    add_str(o, "observation_text", n->obs_text);
    if (n->has_value) cJSON_AddNumberToObject(o, "value", n->value);
    else cJSON_AddNullToObject(o, "value");
    fields_json(o, n, FIELDS_OF(node_visits));
    cJSON_AddNumberToObject(o, "q", mcts_q(n));
    cJSON_AddNumberToObject(o, "last_uct", n->last_uct);
    cJSON *u = cJSON_AddArrayToObject(o, "uct");
    for (int k = 0; k < n->nuct; k++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddNumberToObject(m, "iteration", n->uct[k].iteration);
        cJSON_AddBoolToObject(m, "new", n->uct[k].as_new);
        cJSON_AddNumberToObject(m, "score", n->uct[k].score);
        cJSON_AddBoolToObject(m, "chosen", n->uct[k].chosen);
        cJSON_AddItemToArray(u, m);
    }
    fields_json(o, n, FIELDS_OF(node_flags));
    add_str(o, "notes", n->notes);
    cJSON *fb = cJSON_AddArrayToObject(o, "fallback");
    static const char *const roles[] = MCTS_ROLE_NAMES;
    for (unsigned k = 0; k < sizeof roles / sizeof roles[0]; k++)
        if (n->fallback & (1u << k)) cJSON_AddItemToArray(fb, cJSON_CreateString(roles[k]));
    cJSON_AddItemToObject(o, "tokens", tokens_json(n->tokens_in, n->tokens_out));
    fields_json(cJSON_AddObjectToObject(o, "timings"), n, FIELDS_OF(node_timings));
    return o;
}

static cJSON *answer_json(const struct search_answer *a)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "markdown", a->markdown);
    cJSON_AddItemToObject(o, "citations", evidence_to_json(&a->cites));
    cJSON *p = cJSON_AddArrayToObject(o, "path");
    for (size_t i = 0; i < a->npath; i++) cJSON_AddItemToArray(p, cJSON_CreateNumber(a->path[i]));
    fields_json(o, a, FIELDS_OF(answer_fields));
    cJSON_AddItemToObject(o, "tokens", tokens_json(a->tokens_in, a->tokens_out));
    if (a->stopped) cJSON_AddTrueToObject(o, "stopped");   /* only then: older readers see no new field */
    if (a->written_by) cJSON_AddStringToObject(o, "written_by", a->written_by);   /* likewise */
    return o;
}

char *transcript_json(const struct mcts_tree *t, const cJSON *config, const struct search_answer *a)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", TRANSCRIPT_FORMAT);
    cJSON_AddNumberToObject(root, "version", TRANSCRIPT_VERSION);
    cJSON_AddStringToObject(root, "question", t->question);
    if (config) {
        cJSON *c = cJSON_Duplicate(config, 1);
        filter_secrets(c);
        cJSON_AddItemToObject(root, "config", c);
    } else {
        cJSON_AddNullToObject(root, "config");
    }
    cJSON *s = cJSON_AddObjectToObject(root, "search");
    cJSON_AddNumberToObject(s, "max_expand", t->max_expand);
    cJSON_AddNumberToObject(s, "exploration", t->c);
    add_u64(s, "seed", t->seed);
    add_u64(s, "rng_state", t->rng.state);
    cJSON_AddNumberToObject(s, "iterations", t->iterations);
    cJSON_AddNumberToObject(s, "forced", t->forced);
    add_str(s, "stop_reason", t->stop_reason);
    cJSON_AddItemToObject(s, "tokens", tokens_json(t->tokens_in, t->tokens_out));
    cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
    for (int i = 0; i < t->n; i++) cJSON_AddItemToArray(nodes, node_json(&t->nodes[i]));
    if (a) cJSON_AddItemToObject(root, "answer", answer_json(a));
    else cJSON_AddNullToObject(root, "answer");
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) abort();   /* cJSON fails only when out of memory */
    char *out = xasprintf("%s\n", text);
    cJSON_free(text);
    return out;
}

static int write_private(const char *path, const char *text, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write transcript '%s': %s (check the --transcript-dir "
                 "directory exists and is writable)", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int rc = fchmod(fd, 0600);
    char *clean = secret_scrub(text);   /* a key a reply or message carried never reaches the file */
    if (rc == 0) rc = write_all(fd, clean, strlen(clean));
    free(clean);
    /* on disk before the name: a crash never leaves an empty transcript under it */
    if (rc == 0) rc = fsync(fd);
    if (close(fd) != 0) rc = -1;
    if (rc == 0 && rename(tmp, path) != 0) rc = -1;
    if (rc != 0) {
        snprintf(err, errlen, "cannot write transcript '%s': %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

int transcript_save(const char *path, const struct mcts_tree *t, const cJSON *config,
                    const struct search_answer *a, char *err, size_t errlen)
{
    char *text = transcript_json(t, config, a);
    int rc = write_private(path, text, err, errlen);
    free(text);
    return rc;
}

/* ---- Markdown ---- */

static void md_action(struct buf *b, const struct mcts_node *n)
{
    char *args = n->args ? cJSON_PrintUnformatted(n->args) : NULL;
    buf_printf(b, "`%s %s`", n->action ? n->action : "(no action)", args ? args : "{}");
    if (args) cJSON_free(args);
}

static void md_quote(struct buf *b, const char *label, const char *text)
{
    if (!text || !*text) return;
    buf_printf(b, "%s:\n\n", label);
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        buf_adds(b, "> ");
        buf_add(b, p, len);
        buf_addc(b, '\n');
        p += len;
        if (*p) p++;
    }
    buf_addc(b, '\n');
}

/* Node id and its subtree, one line a node, indented by depth: the whole
 * tree, pruned and refused nodes included, as the front end showed it. */
static void md_tree(struct buf *b, const struct mcts_tree *t, int id, const int *path, size_t npath)
{
    const struct mcts_node *n = mcts_node(t, id);
    if (id) {
        int on = 0;
        for (size_t i = 1; i < npath && !on; i++) on = path[i] == id;
        for (int d = 1; d < n->depth; d++) buf_adds(b, "  ");
        buf_printf(b, "- %s%d ", on ? "*" : "", id);
        if (n->action) md_action(b, n);
        else buf_adds(b, "(no action)");
        buf_printf(b, " %s", n->refused ? "refused" : n->duplicate ? "duplicate" : mcts_status_name(n->status));
        if (n->has_value && !n->refused) buf_printf(b, ", value %g", n->value);
        buf_printf(b, ", Q %.2f, N %d\n", mcts_q(n), n->visits);
    }
    for (int k = 0; k < n->nchildren; k++) md_tree(b, t, n->children[k], path, npath);
}

char *transcript_markdown(const struct mcts_tree *t, const struct search_answer *a)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "# %s\n\n", t->question && *t->question ? t->question : "(no question asked)");
    int *ids = NULL;
    size_t nids;
    int from_finished = 0;
    if (a) {
        ids = xmalloc((a->npath ? a->npath : 1) * sizeof *ids);
        memcpy(ids, a->path, a->npath * sizeof *ids);
        nids = a->npath;
        from_finished = a->from_finished;
    } else {
        nids = search_best_trajectory(t, &ids, &from_finished);
    }
    buf_adds(&b, "## Answer\n\n");
    if (a) {
        buf_adds(&b, a->markdown ? a->markdown : "");
        if (!str_ends(buf_str(&b), "\n")) buf_addc(&b, '\n');
        if (!a->from_finished)
            buf_adds(&b, "\n_No trajectory reached Finish._\n");
        if (a->error) buf_printf(&b, "\n_The answer step failed (%s); this is the fallback._\n", a->error);
        if (a->written_by)
            buf_printf(&b, "\n_The model's answer call failed: the %s policy wrote this answer._\n", a->written_by);
        if (a->failure) buf_printf(&b, "\n_%s._\n", a->failure);
        buf_adds(&b, "\n### Citations\n\n");
        for (size_t i = 0; i < a->cites.n; i++) {
            const struct evidence_span *c = &a->cites.v[i];
            buf_printf(&b, "- `%s:%d-%d`%s%s\n", c->path, c->start_line, c->end_line,
                       c->label ? " " : "", c->label ? c->label : "");
        }
        if (a->cites.n == 0) buf_adds(&b, "- (none)\n");
    } else {
        buf_adds(&b, "_No answer was produced._\n");
    }

    buf_printf(&b, "\n## Trajectory (%s)\n\n",
               from_finished ? "best finished" : "highest value, no node finished");
    for (size_t i = 1; i < nids; i++) {
        const struct mcts_node *n = &t->nodes[ids[i]];
        buf_printf(&b, "### %zu. Node %d: ", i, n->id);
        md_action(&b, n);
        buf_printf(&b, "\n\nStatus %s", mcts_status_name(n->status));
        if (n->has_value) buf_printf(&b, ", value %g", n->value);
        buf_printf(&b, ", Q %.2f, visits %d.\n\n", mcts_q(n), n->visits);
        if (n->rationale && *n->rationale) buf_printf(&b, "Rationale: %s\n\n", n->rationale);
        md_quote(&b, "Perception", n->report);
        if (n->obs_text && *n->obs_text) {
            buf_adds(&b, "Evidence:\n\n```text\n");
            buf_adds(&b, n->obs_text);
            if (!str_ends(n->obs_text, "\n")) buf_addc(&b, '\n');
            buf_adds(&b, "```\n\n");
        }
        md_quote(&b, "Evaluation", n->feedback);
        md_quote(&b, "Notes", n->notes);
        if (n->error) buf_printf(&b, "Error: %s\n\n", n->error);
    }
    buf_adds(&b, "## Tree\n\nEvery node, the trajectory's marked `*`: action, status, value, Q and visits N.\n\n");
    md_tree(&b, t, 0, ids, nids);
    buf_addc(&b, '\n');
    free(ids);
    buf_printf(&b, "## Search\n\n%d iteration%s, %d node%s, ", t->iterations, t->iterations == 1 ? "" : "s", t->n,
               t->n == 1 ? "" : "s");
    if (t->stop_reason) buf_printf(&b, "stopped by %s", t->stop_reason);
    else buf_adds(&b, "not stopped when this was written");
    buf_printf(&b, "; tokens %lld in, %lld out.\n", t->tokens_in, t->tokens_out);
    /* model and repository text may hold ESC, OSC or C1 sequences: a
     * Markdown file is read in terminals too, so they are written visibly */
    char *raw = buf_take(&b), *safe = text_term_safe(raw);
    free(raw);
    return safe;
}

int transcript_save_markdown(const char *path, const struct mcts_tree *t,
                             const struct search_answer *a, char *err, size_t errlen)
{
    char *text = transcript_markdown(t, a);
    int rc = write_private(path, text, err, errlen);
    free(text);
    return rc;
}

/* ---- loading ---- */

struct rd {
    const char *name;
    char *err;
    size_t errlen;
    int bad;
};

static const cJSON *get(struct rd *r, const cJSON *o, const char *key, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && !r->bad) {
        snprintf(r->err, r->errlen, "transcript '%s': %s has no \"%s\"", r->name, where, key);
        r->bad = 1;
    }
    return v;
}

static double num(struct rd *r, const cJSON *o, const char *key, const char *where)
{
    const cJSON *v = get(r, o, key, where);
    if (v && !cJSON_IsNumber(v) && !r->bad) {
        snprintf(r->err, r->errlen, "transcript '%s': %s \"%s\" must be a number", r->name, where, key);
        r->bad = 1;
    }
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* A string member or JSON null; returns a copy or NULL. */
static char *opt_str(struct rd *r, const cJSON *o, const char *key, const char *where)
{
    const cJSON *v = get(r, o, key, where);
    if (cJSON_IsString(v)) return xstrdup(v->valuestring);
    if (v && !cJSON_IsNull(v) && !r->bad) {
        snprintf(r->err, r->errlen, "transcript '%s': %s \"%s\" must be a string or null", r->name,
                 where, key);
        r->bad = 1;
    }
    return NULL;
}

static uint64_t u64(struct rd *r, const cJSON *o, const char *key, const char *where)
{
    const cJSON *v = get(r, o, key, where);
    if (cJSON_IsString(v)) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v->valuestring, &end, 10);
        if (!errno && end != v->valuestring && !*end) return x;
    }
    if (!r->bad) {
        snprintf(r->err, r->errlen, "transcript '%s': %s \"%s\" must be a decimal string", r->name,
                 where, key);
        r->bad = 1;
    }
    return 0;
}

static int truthy(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void read_tokens(struct rd *r, const cJSON *o, const char *where, long long *in, long long *out)
{
    const cJSON *tk = get(r, o, "tokens", where);
    *in = (long long)num(r, tk, "input", "tokens");
    *out = (long long)num(r, tk, "output", "tokens");
}

/* Reads the members fields_json wrote into base; a missing one is an error
 * (where names the object) but for F_BOOL and F_SET. */
static void fields_read(struct rd *r, const cJSON *o, void *base, const struct field *f, size_t n,
                        const char *where)
{
    for (; n--; f++) {
        char *at = (char *)base + f->off;
        switch (f->kind) {
        case F_INT: *(int *)at = (int)num(r, o, f->name, where); break;
        case F_DBL: *(double *)at = num(r, o, f->name, where); break;
        case F_I64: *(int64_t *)at = (int64_t)num(r, o, f->name, where); break;
        case F_BOOL:
        case F_SET: *(int *)at = truthy(o, f->name); break;
        case F_STR: *(char **)at = opt_str(r, o, f->name, where); break;
        }
    }
}

static void read_node(struct rd *r, struct mcts_tree *t, const cJSON *o, int i)
{
    char where[48];
    snprintf(where, sizeof where, "node %d", i);
    struct mcts_node *n = &t->nodes[i];
    memset(n, 0, sizeof *n);
    fields_read(r, o, n, FIELDS_OF(node_ids), where);
    const cJSON *st = get(r, o, "status", where);
    int status = cJSON_IsString(st) ? mcts_status_parse(st->valuestring) : -1;
    if (status < 0 && !r->bad) {
        snprintf(r->err, r->errlen, "transcript '%s': %s has an unknown status", r->name, where);
        r->bad = 1;
    }
    n->status = status < 0 ? MCTS_ERROR : (enum mcts_status)status;
    const cJSON *ch = get(r, o, "children", where);
    n->nchildren = cJSON_GetArraySize(ch);
    n->children_cap = n->nchildren;
    n->children = n->nchildren ? xmalloc((size_t)n->nchildren * sizeof *n->children) : NULL;
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, ch) n->children[k++] = cJSON_IsNumber(c) ? c->valueint : -1;
    n->action = opt_str(r, o, "action", where);
    const cJSON *args = get(r, o, "args", where);
    n->args = cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) : NULL;
    fields_read(r, o, n, FIELDS_OF(node_texts), where);
    const cJSON *obs = get(r, o, "observation", where);
    if (obs && !r->bad) {
        char e[256];
        if (evidence_from_json(obs, &n->obs, e, sizeof e) != 0) {
            snprintf(r->err, r->errlen, "transcript '%s': %s observation: %s", r->name, where, e);
            r->bad = 1;
        }
    }
    n->obs_text = opt_str(r, o, "observation_text", where);
    const cJSON *v = get(r, o, "value", where);
    n->has_value = cJSON_IsNumber(v);
    n->value = n->has_value ? v->valuedouble : 0;
    fields_read(r, o, n, FIELDS_OF(node_visits), where);
    const cJSON *u = get(r, o, "uct", where);
    cJSON_ArrayForEach(c, u) {
        mcts_mark_uct(n, (int)num(r, c, "iteration", "uct mark"), truthy(c, "new"), num(r, c, "score", "uct mark"));
        n->uct[n->nuct - 1].chosen = truthy(c, "chosen");
    }
    n->last_uct = num(r, o, "last_uct", where);
    fields_read(r, o, n, FIELDS_OF(node_flags), where);
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(o, "notes");   /* optional: older transcripts */
    n->notes = cJSON_IsString(notes) ? xstrdup(notes->valuestring) : NULL;
    static const char *const roles[] = MCTS_ROLE_NAMES;
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(o, "fallback");
    cJSON_ArrayForEach(c, fb)
        for (unsigned ri = 0; ri < sizeof roles / sizeof roles[0]; ri++)
            if (cJSON_IsString(c) && strcmp(c->valuestring, roles[ri]) == 0) n->fallback |= 1u << ri;
    read_tokens(r, o, where, &n->tokens_in, &n->tokens_out);
    fields_read(r, get(r, o, "timings", where), n, FIELDS_OF(node_timings), "timings");
}

/* Ids dense, parents before children, child lists matching parent links. */
static void check_shape(struct rd *r, const struct mcts_tree *t)
{
    for (int i = 0; i < t->n && !r->bad; i++) {
        const struct mcts_node *n = &t->nodes[i];
        int ok = n->id == i && (i == 0 ? n->parent == -1 : n->parent >= 0 && n->parent < i);
        for (int k = 0; ok && k < n->nchildren; k++) {
            int c = n->children[k];
            ok = c > i && c < t->n && t->nodes[c].parent == i;
        }
        if (!ok) {
            snprintf(r->err, r->errlen, "transcript '%s': node %d has an inconsistent id, parent or "
                     "children list (the file was edited or truncated)", r->name, i);
            r->bad = 1;
        }
    }
}

static struct search_answer *read_answer(struct rd *r, const cJSON *o)
{
    struct search_answer *a = xcalloc(1, sizeof *a);
    a->markdown = opt_str(r, o, "markdown", "answer");
    const cJSON *cites = get(r, o, "citations", "answer");
    if (cites && !r->bad) {
        char e[256];
        if (evidence_from_json(cites, &a->cites, e, sizeof e) != 0) {
            snprintf(r->err, r->errlen, "transcript '%s': answer citations: %s", r->name, e);
            r->bad = 1;
        }
    }
    const cJSON *p = get(r, o, "path", "answer");
    a->npath = (size_t)cJSON_GetArraySize(p);
    a->path = xmalloc((a->npath ? a->npath : 1) * sizeof *a->path);
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, p) a->path[i++] = cJSON_IsNumber(c) ? c->valueint : -1;
    fields_read(r, o, a, FIELDS_OF(answer_fields), "answer");
    a->stopped = truthy(o, "stopped");
    const cJSON *wb = cJSON_GetObjectItemCaseSensitive(o, "written_by");
    if (cJSON_IsString(wb) && wb->valuestring[0]) a->written_by = xstrdup(wb->valuestring);
    read_tokens(r, o, "answer", &a->tokens_in, &a->tokens_out);
    return a;
}

int transcript_parse(const char *text, const char *name, struct mcts_tree **tree, cJSON **config,
                     struct search_answer **answer, char *err, size_t errlen)
{
    struct rd r = {name ? name : "(text)", err, errlen, 0};
    *tree = NULL;
    if (config) *config = NULL;
    if (answer) *answer = NULL;
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(err, errlen, "transcript '%s' is not valid JSON (near byte %ld)", r.name,
                 at ? (long)(at - text) : 0L);
        return -1;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, TRANSCRIPT_FORMAT) != 0 ||
        !cJSON_IsNumber(ver) || ver->valueint != TRANSCRIPT_VERSION) {
        snprintf(err, errlen, "'%s' is not a drqa-tui transcript of version %d", r.name,
                 TRANSCRIPT_VERSION);
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *q = get(&r, root, "question", "the transcript");
    const cJSON *s = get(&r, root, "search", "the transcript");
    const cJSON *nodes = get(&r, root, "nodes", "the transcript");
    if (!r.bad && (!cJSON_IsString(q) || !cJSON_IsObject(s) || !cJSON_IsArray(nodes) ||
                   cJSON_GetArraySize(nodes) < 1)) {
        snprintf(err, errlen, "transcript '%s' needs a question string, a search object and at "
                 "least one node", r.name);
        r.bad = 1;
    }
    struct mcts_tree *t = NULL;
    struct search_answer *a = NULL;
    if (!r.bad) {
        t = mcts_new(q->valuestring, (int)num(&r, s, "max_expand", "search"),
                     num(&r, s, "exploration", "search"), u64(&r, s, "seed", "search"));
        t->rng.state = u64(&r, s, "rng_state", "search");
        t->iterations = (int)num(&r, s, "iterations", "search");
        t->forced = (int)num(&r, s, "forced", "search");
        t->stop_reason = opt_str(&r, s, "stop_reason", "search");
        read_tokens(&r, s, "search", &t->tokens_in, &t->tokens_out);
        /* Replace the fresh root (which owns nothing yet) with the file's nodes. */
        free(t->nodes);
        t->n = t->cap = cJSON_GetArraySize(nodes);
        t->nodes = xcalloc((size_t)t->n, sizeof *t->nodes);
        int i = 0;
        const cJSON *o;
        cJSON_ArrayForEach(o, nodes) read_node(&r, t, o, i++);
        check_shape(&r, t);
        const cJSON *ans = get(&r, root, "answer", "the transcript");
        if (cJSON_IsObject(ans)) a = read_answer(&r, ans);
    }
    if (r.bad) {
        mcts_free(t);
        search_answer_free(a);
        cJSON_Delete(root);
        return -1;
    }
    *tree = t;
    if (answer) *answer = a;
    else search_answer_free(a);
    if (config) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "config");
        *config = cJSON_IsObject(c) ? cJSON_Duplicate(c, 1) : NULL;
    }
    cJSON_Delete(root);
    return 0;
}

int transcript_load(const char *path, struct mcts_tree **tree, cJSON **config,
                    struct search_answer **answer, char *err, size_t errlen)
{
    size_t len;
    char *text = read_file(path, 256u << 20, &len);
    if (!text) {
        snprintf(err, errlen, "cannot read transcript '%s': %s", path, strerror(errno));
        *tree = NULL;
        return -1;
    }
    int rc = transcript_parse(text, path, tree, config, answer, err, errlen);
    free(text);
    return rc;
}
