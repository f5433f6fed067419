/*
 * report: reading references, answers and scores files, and turning score
 * lines into the paper's tables (overall and per dimension per system, per
 * judge, per question type and subtype, tokens per question, grounding).
 * File formats and the cell rules are in report.h.
 */
#include "report.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_MAX_FILE (512u << 20)

const char *const eval_dims[EVAL_NDIM] = {"correctness", "completeness", "relevance", "clarity", "reasoning"};
const char *const eval_dim_titles[EVAL_NDIM] = {"Correctness", "Completeness", "Relevance", "Clarity", "Reasoning"};

int eval_jsonl_each(const char *path, int (*fn)(void *ctx, const cJSON *obj, int line, char *err, size_t errlen),
                    void *ctx, char *err, size_t errlen)
{
    size_t len;
    char *text = read_file(path, EVAL_MAX_FILE, &len);
    if (!text) {
        snprintf(err, errlen, "cannot read '%s': %s; check the path", path, strerror(errno));
        return -1;
    }
    int rc = 0, lineno = 0;
    char *save = NULL;
    for (char *line = text; line && !rc; line = save) {
        save = memchr(line, '\n', len - (size_t)(line - text));
        if (save) *save++ = 0;
        lineno++;
        size_t ll = strlen(line);
        if (ll != (size_t)((save ? save - 1 : text + len) - line)) {
            snprintf(err, errlen, "%s:%d: the line holds a NUL byte; the file must be UTF-8 JSON lines", path, lineno);
            rc = -1;
            break;
        }
        while (ll && isspace((unsigned char)line[ll - 1])) line[--ll] = 0;
        const char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        cJSON *obj = cJSON_Parse(s);
        if (!obj || !cJSON_IsObject(obj)) {
            snprintf(err, errlen, "%s:%d: not a JSON object (%.*s%s); each line must be one object", path, lineno,
                     utf8_cut(s, 40), s,
                     strlen(s) > 40 ? "..." : "");
            cJSON_Delete(obj);
            rc = -1;
            break;
        }
        rc = fn(ctx, obj, lineno, err, errlen);
        cJSON_Delete(obj);
    }
    free(text);
    return rc;
}

char *eval_id_string(const cJSON *id)
{
    if (cJSON_IsString(id)) return xstrdup(id->valuestring);
    if (cJSON_IsNumber(id) && id->valuedouble == floor(id->valuedouble) && fabs(id->valuedouble) < 1e15)
        return xasprintf("%.0f", id->valuedouble);
    return NULL;
}

/* An optional string field: 0 with *out (owned copy, or NULL when absent or
 * null), -1 with err when it has another type. */
static int opt_string(const cJSON *o, const char *field, char **out, const char *path, int line, char *err,
                      size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsString(v)) {
        snprintf(err, errlen, "%s:%d: field \"%s\" must be a string", path, line, field);
        return -1;
    }
    *out = xstrdup(v->valuestring);
    return 0;
}

/* An optional array of strings into a strv. */
static int opt_strings(const cJSON *o, const char *field, struct strv *out, const char *path, int line, char *err,
                       size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field), *x;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsArray(v)) {
        snprintf(err, errlen, "%s:%d: field \"%s\" must be an array of strings", path, line, field);
        return -1;
    }
    cJSON_ArrayForEach(x, v) {
        if (!cJSON_IsString(x)) {
            snprintf(err, errlen, "%s:%d: field \"%s\" must be an array of strings", path, line, field);
            return -1;
        }
        strv_add(out, x->valuestring);
    }
    return 0;
}

/* Whitespace runs as one space, trimmed (caller frees). */
static char *norm_ws(const char *s)
{
    struct buf b = BUF_INIT;
    int space = 0;
    for (; s && *s; s++) {
        if (isspace((unsigned char)*s)) { space = b.len > 0; continue; }
        if (space) buf_addc(&b, ' ');
        space = 0;
        buf_addc(&b, *s);
    }
    return buf_take(&b);
}

/* ---- references ---- */

static int ref_line(void *ctx, const cJSON *o, int line, char *err, size_t errlen)
{
    struct eval_refs *r = ctx;
    struct eval_ref x;
    memset(&x, 0, sizeof x);
    x.line = line;
    struct strv files = STRV_INIT, idents = STRV_INIT;
    char *ans = NULL, *refans = NULL;
    int rc = -1;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    if (id && !cJSON_IsNull(id) && !(x.id = eval_id_string(id))) {
        snprintf(err, errlen, "%s:%d: field \"id\" must be a string or a whole number", r->path, line);
        goto out;
    }
    if (opt_string(o, "question", &x.question, r->path, line, err, errlen) ||
        opt_string(o, "answer", &ans, r->path, line, err, errlen) ||
        opt_string(o, "reference_answer", &refans, r->path, line, err, errlen) ||
        opt_string(o, "category_type", &x.category_type, r->path, line, err, errlen) ||
        opt_string(o, "category", &x.category, r->path, line, err, errlen) ||
        opt_strings(o, "gold_files", &files, r->path, line, err, errlen) ||
        opt_strings(o, "gold_identifiers", &idents, r->path, line, err, errlen))
        goto out;
    if (!x.question || !*x.question) {
        snprintf(err, errlen, "%s:%d: no \"question\"; a reference line needs the question and its answer", r->path,
                 line);
        goto out;
    }
    if (!refans && !ans) {
        snprintf(err, errlen, "%s:%d: no \"reference_answer\" (dev benchmark format) or \"answer\" (SWE-QA format)",
                 r->path, line);
        goto out;
    }
    x.answer = refans ? refans : ans;
    if (refans) free(ans);
    refans = ans = NULL;
    metrics_gold_init(&x.gold, (const char *const *)files.v, files.n, (const char *const *)idents.v, idents.n,
                      x.answer);
    ARRAY_GROW(r->v, r->n, r->cap, 64);
    r->v[r->n++] = x;
    memset(&x, 0, sizeof x);
    rc = 0;
out:
    free(x.id);
    free(x.question);
    free(x.category_type);
    free(x.category);
    free(ans);
    free(refans);
    strv_free(&files);
    strv_free(&idents);
    return rc;
}

int eval_refs_load(struct eval_refs *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = xstrdup(path);
    if (eval_jsonl_each(path, ref_line, r, err, errlen)) return -1;
    if (!r->n) {
        snprintf(err, errlen, "%s: no reference lines; expected one JSON object per line with question and answer",
                 path);
        return -1;
    }
    return 0;
}

void eval_refs_free(struct eval_refs *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        struct eval_ref *x = &r->v[i];
        free(x->id);
        free(x->question);
        free(x->answer);
        free(x->category_type);
        free(x->category);
        metrics_gold_free(&x->gold);
    }
    free(r->v);
    free(r->path);
    memset(r, 0, sizeof *r);
}

const struct eval_ref *eval_refs_find(const struct eval_refs *r, const char *id, const char *question)
{
    if (!r) return NULL;
    if (id)
        for (size_t i = 0; i < r->n; i++)
            if (r->v[i].id && strcmp(r->v[i].id, id) == 0) return &r->v[i];
    if (!question) return NULL;
    char *q = norm_ws(question);
    const struct eval_ref *found = NULL;
    for (size_t i = 0; i < r->n && !found; i++) {
        char *rq = norm_ws(r->v[i].question);
        if (strcmp(q, rq) == 0) found = &r->v[i];
        free(rq);
    }
    free(q);
    return found;
}

/* ---- answers ---- */

void eval_answer_clear(struct eval_answer *x)
{
    if (!x) return;
    free(x->id);
    free(x->question);
    free(x->answer);
    free(x->mode);
    free(x->policy);
    free(x->model);
    free(x->error);
    strv_free(&x->cited);
    free(x->evidence);
    memset(x, 0, sizeof *x);
}

/* The total of a model ledger ("usage": {"total": {"cached_input_tokens",
 * "cost_usd"}}, llm_usage_json) when the line has one. */
/* A line's "tokens": {"input": N, "output": M}, when it is there and not null
 * (then *has = 1). Returns -1, with a message naming the line, when it is
 * another value. */
static int line_tokens(const cJSON *o, int *has, double *in, double *out, const char *path, int line, char *err,
                       size_t errlen)
{
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(o, "tokens");
    if (!tk || cJSON_IsNull(tk)) return 0;
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(tk, "input");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(tk, "output");
    if (!cJSON_IsObject(tk) || !cJSON_IsNumber(i) || !cJSON_IsNumber(u)) {
        snprintf(err, errlen, "%s:%d: field \"tokens\" must be {\"input\": N, \"output\": M}", path, line);
        return -1;
    }
    *has = 1;
    *in = i->valuedouble;
    *out = u->valuedouble;
    return 0;
}

static void usage_total(const cJSON *o, int *has, double *cached, double *cost)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "usage"), "total");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(t, "cached_input_tokens");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(t, "cost_usd");
    *has = cJSON_IsObject(t);
    *cached = cJSON_IsNumber(c) ? c->valuedouble : 0;
    *cost = cJSON_IsNumber(u) ? u->valuedouble : -1;
}

int eval_answer_parse(struct eval_answer *x, const cJSON *o, const char *path, int line, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->line = line;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    if (id && !cJSON_IsNull(id)) {
        if (!(x->id = eval_id_string(id))) {
            snprintf(err, errlen, "%s:%d: field \"id\" must be a string or a whole number", path, line);
            goto fail;
        }
    } else {
        x->id = xasprintf("%d", line);
        x->id_from_line = 1;
    }
    if (opt_string(o, "question", &x->question, path, line, err, errlen) ||
        opt_string(o, "answer", &x->answer, path, line, err, errlen) ||
        opt_string(o, "mode", &x->mode, path, line, err, errlen) ||
        opt_string(o, "policy", &x->policy, path, line, err, errlen) ||
        opt_string(o, "model", &x->model, path, line, err, errlen) ||
        opt_string(o, "error", &x->error, path, line, err, errlen))
        goto fail;
    /* Cited paths are relative to the repository; the repository directory's
     * name, when the line gives it, is their first component (metrics.h). */
    const cJSON *rn = cJSON_GetObjectItemCaseSensitive(o, "repo_name");
    if (rn && !cJSON_IsNull(rn) && !cJSON_IsString(rn)) {
        snprintf(err, errlen, "%s:%d: field \"repo_name\" must be a string", path, line);
        goto fail;
    }
    const char *repo_name = cJSON_IsString(rn) && *rn->valuestring ? rn->valuestring : NULL;
    const char *lists[2] = {"citations", "evidence"};
    struct buf ev = BUF_INIT;
    for (int k = 0; k < 2; k++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, lists[k]), *c;
        if (!arr || cJSON_IsNull(arr)) continue;
        if (!cJSON_IsArray(arr)) {
            snprintf(err, errlen, "%s:%d: field \"%s\" must be an array of {\"path\", ...} objects", path, line,
                     lists[k]);
            buf_free(&ev);
            goto fail;
        }
        int i = 0;
        cJSON_ArrayForEach(c, arr) {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "path");
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "text");
            if (!cJSON_IsObject(c) || !cJSON_IsString(p) || (t && !cJSON_IsNull(t) && !cJSON_IsString(t))) {
                snprintf(err, errlen, "%s:%d: %s[%d] must be an object with a string \"path\"%s", path, line,
                         lists[k], i, k ? " and a string \"text\"" : "");
                buf_free(&ev);
                goto fail;
            }
            if (k == 0 && repo_name) {
                char *full = xasprintf("%s/%s", repo_name, p->valuestring);
                strv_add(&x->cited, full);
                free(full);
            } else if (k == 0) {
                strv_add(&x->cited, p->valuestring);
            } else if (cJSON_IsString(t)) {
                buf_adds(&ev, t->valuestring);
                buf_addc(&ev, '\n');
            }
            i++;
        }
    }
    x->evidence = buf_take(&ev);
    if (line_tokens(o, &x->has_tokens, &x->tokens_in, &x->tokens_out, path, line, err, errlen)) goto fail;
    usage_total(o, &x->has_usage, &x->tokens_cached, &x->cost_usd);
    if (!x->question && !id) {
        snprintf(err, errlen, "%s:%d: no \"id\" or \"question\"; an answer line needs one to find its reference",
                 path, line);
        goto fail;
    }
    return 0;
fail:
    eval_answer_clear(x);
    return -1;
}

struct answers_ctx {
    struct eval_answers *a;
};

static int answer_line(void *ctx, const cJSON *o, int line, char *err, size_t errlen)
{
    struct eval_answers *a = ((struct answers_ctx *)ctx)->a;
    struct eval_answer x;
    if (!cJSON_HasObjectItem(o, "answer")) {
        snprintf(err, errlen, "%s:%d: no \"answer\" field; is this a --batch answers file?", a->path, line);
        return -1;
    }
    if (eval_answer_parse(&x, o, a->path, line, err, errlen)) return -1;
    ARRAY_GROW(a->v, a->n, a->cap, 64);
    a->v[a->n++] = x;
    return 0;
}

int eval_answers_load(struct eval_answers *a, const char *path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->path = xstrdup(path);
    struct answers_ctx c = {a};
    if (eval_jsonl_each(path, answer_line, &c, err, errlen)) return -1;
    if (!a->n) {
        snprintf(err, errlen, "%s: no answer lines; expected the JSONL that --batch writes", path);
        return -1;
    }
    return 0;
}

void eval_answers_free(struct eval_answers *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n; i++) eval_answer_clear(&a->v[i]);
    free(a->v);
    free(a->path);
    memset(a, 0, sizeof *a);
}

char *eval_system_name(const char *mode, const char *policy, const char *model)
{
    if (model && *model)
        return xasprintf("%s/%s/%s", mode && *mode ? mode : "?", policy && *policy ? policy : "?", model);
    return xasprintf("%s/%s", mode && *mode ? mode : "?", policy && *policy ? policy : "?");
}

/* ---- rows ---- */

void report_init(struct report *r)
{
    memset(r, 0, sizeof *r);
}

static void row_clear(struct report_row *w)
{
    free(w->file);
    free(w->system);
    free(w->category_type);
    free(w->category);
    for (size_t i = 0; i < w->npj; i++) free(w->pj[i].judge);
    free(w->pj);
}

void report_free(struct report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) row_clear(&r->rows[i]);
    free(r->rows);
    strv_free(&r->judges);
    memset(r, 0, sizeof *r);
}

static struct report_row *row_new(struct report *r)
{
    ARRAY_GROW(r->rows, r->n, r->cap, 64);
    struct report_row *w = &r->rows[r->n++];
    memset(w, 0, sizeof *w);
    w->hit1 = w->hit5 = w->hit5c = -1;
    w->ident_recall = -1;
    return w;
}

/* A score 1..20 (or a mean of them) or null. */
static int num_field(const cJSON *o, const char *field, double lo, double hi, int *present, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    *present = 0;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi) return -1;
    *present = 1;
    *out = v->valuedouble;
    return 0;
}

struct file_ctx {
    struct report *r;
    const char *path, *base;
    const struct eval_refs *refs;
};

static void fill_categories(struct report_row *w, const struct eval_ref *ref)
{
    if (!ref) return;
    if (!w->category_type && ref->category_type) w->category_type = xstrdup(ref->category_type);
    if (!w->category && ref->category) w->category = xstrdup(ref->category);
}

static int scores_line(struct file_ctx *c, struct report_row *w, const cJSON *o, int line, char *err, size_t errlen)
{
    const char *path = c->path;
    char *mode = NULL, *policy = NULL, *model = NULL, *id = NULL, *question = NULL;
    int rc = -1, present;
    if (opt_string(o, "mode", &mode, path, line, err, errlen) ||
        opt_string(o, "policy", &policy, path, line, err, errlen) ||
        opt_string(o, "model", &model, path, line, err, errlen) ||
        opt_string(o, "question", &question, path, line, err, errlen) ||
        opt_string(o, "category_type", &w->category_type, path, line, err, errlen) ||
        opt_string(o, "category", &w->category, path, line, err, errlen))
        goto out;
    id = eval_id_string(cJSON_GetObjectItemCaseSensitive(o, "id"));
    w->system = eval_system_name(mode, policy, model);
    if (c->refs) fill_categories(w, eval_refs_find(c->refs, id, question));

    const cJSON *judges = cJSON_GetObjectItemCaseSensitive(o, "judges"), *j;
    if (!cJSON_IsArray(judges)) {
        snprintf(err, errlen, "%s:%d: field \"judges\" must be an array", path, line);
        goto out;
    }
    w->npj = (size_t)cJSON_GetArraySize(judges);
    w->njudges = (int)w->npj;
    w->pj = xcalloc(w->npj ? w->npj : 1, sizeof *w->pj);
    size_t k = 0;
    cJSON_ArrayForEach(j, judges) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "judge");
        double t = 0;
        if (!cJSON_IsString(name) || num_field(j, "total", 5, 100, &present, &t)) {
            snprintf(err, errlen, "%s:%d: judges[%zu] needs a string \"judge\" and a \"total\" from 5 to 100 or null",
                     path, line, k);
            goto out;
        }
        w->pj[k].judge = xstrdup(name->valuestring);
        w->pj[k].ok = present;
        w->pj[k].total = t;
        strv_add_unique(&c->r->judges, name->valuestring);
        k++;
    }
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(o, "scores");
    if (scores && !cJSON_IsNull(scores)) {
        if (!cJSON_IsObject(scores)) {
            snprintf(err, errlen, "%s:%d: field \"scores\" must be an object or null", path, line);
            goto out;
        }
        for (int d = 0; d < EVAL_NDIM; d++) {
            if (num_field(scores, eval_dims[d], 1, 20, &present, &w->dims[d]) || !present) {
                snprintf(err, errlen, "%s:%d: scores.%s must be a number from 1 to 20", path, line, eval_dims[d]);
                goto out;
            }
            w->total += w->dims[d];
        }
        w->judged = 1;
    }
    if (line_tokens(o, &w->has_tokens, &w->tokens_in, &w->tokens_out, path, line, err, errlen)) goto out;
    usage_total(o, &w->has_usage, &w->tokens_cached, &w->cost_usd);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metrics");
    if (m && !cJSON_IsNull(m)) {
        double h1 = -1, h5 = -1, h5c = -1, ir = -1;
        int p1, p5, p5c, pr;
        if (!cJSON_IsObject(m) || num_field(m, "file_hit@1", 0, 1, &p1, &h1) ||
            num_field(m, "file_hit@5", 0, 1, &p5, &h5) || num_field(m, "file_hit@5_citations", 0, 1, &p5c, &h5c) ||
            num_field(m, "identifier_recall", 0, 1, &pr, &ir)) {
            snprintf(err, errlen, "%s:%d: field \"metrics\" must hold file_hit@1, file_hit@5 (0, 1 or null) and "
                     "identifier_recall (0 to 1 or null)", path, line);
            goto out;
        }
        w->hit1 = p1 ? (int)h1 : -1;
        w->hit5 = p5 ? (int)h5 : -1;
        w->hit5c = p5c ? (int)h5c : -1;   /* absent in scores written before it existed */
        w->ident_recall = pr ? ir : -1;
    }
    rc = 0;
out:
    free(mode);
    free(policy);
    free(model);
    free(id);
    free(question);
    return rc;
}

static int answers_row(struct file_ctx *c, struct report_row *w, const cJSON *o, int line, char *err, size_t errlen)
{
    struct eval_answer x;
    if (eval_answer_parse(&x, o, c->path, line, err, errlen)) return -1;
    w->system = eval_system_name(x.mode, x.policy, x.model);
    w->has_tokens = x.has_tokens;
    w->tokens_in = x.tokens_in;
    w->tokens_out = x.tokens_out;
    w->has_usage = x.has_usage;
    w->tokens_cached = x.tokens_cached;
    w->cost_usd = x.cost_usd;
    const struct eval_ref *ref = eval_refs_find(c->refs, x.id_from_line ? NULL : x.id, x.question);
    if (c->refs && !ref) {
        snprintf(err, errlen, "%s:%d: no reference for id '%s' in %s (matched by id, then by question text)",
                 c->path, line, x.id, c->refs->path);
        eval_answer_clear(&x);
        return -1;
    }
    if (ref) {
        struct metrics_result m;
        metrics_compute(&ref->gold, (const char *const *)x.cited.v, x.cited.n, x.answer, x.evidence, &m);
        w->hit1 = m.hit1;
        w->hit5 = m.hit5;
        w->hit5c = m.hit5c;
        w->ident_recall = m.ident_recall;
        fill_categories(w, ref);
    }
    eval_answer_clear(&x);
    return 0;
}

static int report_line(void *ctx, const cJSON *o, int line, char *err, size_t errlen)
{
    struct file_ctx *c = ctx;
    int is_scores = cJSON_HasObjectItem(o, "judges"), is_answers = cJSON_HasObjectItem(o, "answer");
    if (!is_scores && !is_answers) {
        snprintf(err, errlen, "%s:%d: neither a scores line (from --judge, with \"judges\") nor an answers line "
                 "(from --batch, with \"answer\")", c->path, line);
        return -1;
    }
    struct report_row *w = row_new(c->r);
    w->file = xstrdup(c->base);
    int rc = is_scores ? scores_line(c, w, o, line, err, errlen) : answers_row(c, w, o, line, err, errlen);
    if (rc) {
        row_clear(w);
        c->r->n--;
    }
    return rc;
}

int report_add_file(struct report *r, const char *path, const struct eval_refs *refs, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    struct file_ctx c = {r, path, slash ? slash + 1 : path, refs};
    size_t before = r->n;
    if (eval_jsonl_each(path, report_line, &c, err, errlen)) {
        while (r->n > before) row_clear(&r->rows[--r->n]);   /* a refused file adds nothing */
        return -1;
    }
    if (r->n == before) {
        snprintf(err, errlen, "%s: no lines; expected the JSONL written by --judge or --batch", path);
        return -1;
    }
    return 0;
}

/* ---- aggregation ---- */

struct mean {
    double sum;
    int n;
};

static void mean_add(struct mean *m, double v)
{
    m->sum += v;
    m->n++;
}

static void cell_mean(struct buf *b, const struct mean *m, const char *fmt)
{
    if (!m->n) {
        buf_adds(b, "- (n=0)");
        return;
    }
    buf_printf(b, fmt, m->sum / m->n);
    buf_printf(b, " (n=%d)", m->n);
}

/* 1234567.4 -> "1,234,567" */
static void thousands(struct buf *b, double v)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.0f", v);
    const char *s = tmp;
    if (*s == '-') buf_addc(b, *s++);
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        buf_addc(b, s[i]);
        if ((n - i - 1) % 3 == 0 && i + 1 < n) buf_addc(b, ',');
    }
}

struct sys {
    char *name;
    int questions, unjudged, judged_rows;
    struct mean dims[EVAL_NDIM], total, tok_in, tok_out, tok_cached, cost, hit1, hit5, hit5c, ident;
    int unpriced;                    /* rows with a ledger but no price */
    struct mean *per_judge;          /* by index in report.judges */
};

/* The display name of each row's system (see report.h): owned strings. */
static char **row_system_names(const struct report *r)
{
    char **names = xcalloc(r->n ? r->n : 1, sizeof *names);
    for (size_t i = 0; i < r->n; i++) {
        int clash = 0;
        for (size_t j = 0; j < r->n && !clash; j++)
            clash = strcmp(r->rows[j].system, r->rows[i].system) == 0 && strcmp(r->rows[j].file, r->rows[i].file);
        names[i] = clash ? xasprintf("%s [%s]", r->rows[i].system, r->rows[i].file) : xstrdup(r->rows[i].system);
    }
    return names;
}

static size_t sys_index(struct sys **v, size_t *n, const char *name, size_t njudges)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].name, name) == 0) return i;
    *v = xreallocarray(*v, *n + 1, sizeof **v);
    struct sys *s = &(*v)[*n];
    memset(s, 0, sizeof *s);
    s->name = xstrdup(name);
    s->per_judge = xcalloc(njudges ? njudges : 1, sizeof *s->per_judge);
    return (*n)++;
}

static void sys_add(struct sys *s, const struct report_row *w, const struct strv *judges)
{
    s->questions++;
    if (w->njudges) {
        if (w->judged) {
            for (int d = 0; d < EVAL_NDIM; d++) mean_add(&s->dims[d], w->dims[d]);
            mean_add(&s->total, w->total);
        } else {
            s->unjudged++;
        }
        s->judged_rows++;
    }
    for (size_t k = 0; k < w->npj; k++) {
        if (!w->pj[k].ok) continue;
        for (size_t j = 0; j < judges->n; j++)
            if (strcmp(judges->v[j], w->pj[k].judge) == 0) mean_add(&s->per_judge[j], w->pj[k].total);
    }
    if (w->has_tokens) {
        mean_add(&s->tok_in, w->tokens_in);
        mean_add(&s->tok_out, w->tokens_out);
    }
    if (w->has_usage) {
        mean_add(&s->tok_cached, w->tokens_cached);
        if (w->cost_usd >= 0) mean_add(&s->cost, w->cost_usd);
        else s->unpriced++;
    }
    if (w->hit1 >= 0) mean_add(&s->hit1, w->hit1);
    if (w->hit5 >= 0) mean_add(&s->hit5, w->hit5);
    if (w->hit5c >= 0) mean_add(&s->hit5c, w->hit5c);
    if (w->ident_recall >= 0) mean_add(&s->ident, w->ident_recall);
}

static struct sys *systems(const struct report *r, size_t *nsys)
{
    char **names = row_system_names(r);
    struct sys *v = NULL;
    *nsys = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t k = sys_index(&v, nsys, names[i], r->judges.n);
        sys_add(&v[k], &r->rows[i], &r->judges);
    }
    for (size_t i = 0; i < r->n; i++) free(names[i]);
    free(names);
    return v;
}

static void systems_free(struct sys *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].per_judge);
    }
    free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted distinct category types, or the subtypes of one type. */
static void categories(const struct report *r, const char *of_type, struct strv *out)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct report_row *w = &r->rows[i];
        if (!w->category_type) continue;
        if (!of_type) strv_add_unique(out, w->category_type);
        else if (strcmp(w->category_type, of_type) == 0 && w->category) strv_add_unique(out, w->category);
    }
    if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, cmp_str);
}

static void category_row(const struct report *r, char **names, struct sys *sv, size_t nsys, const char *type,
                         const char *sub, struct buf *b)
{
    buf_printf(b, "| %s | %s |", type, sub ? sub : "(all)");
    for (size_t s = 0; s < nsys; s++) {
        struct mean m = {0, 0};
        for (size_t i = 0; i < r->n; i++) {
            const struct report_row *w = &r->rows[i];
            if (strcmp(names[i], sv[s].name) || !w->judged || !w->category_type || strcmp(w->category_type, type))
                continue;
            if (sub && (!w->category || strcmp(w->category, sub))) continue;
            mean_add(&m, w->total);
        }
        buf_adds(b, " ");
        cell_mean(b, &m, "%.2f");
        buf_adds(b, " |");
    }
    buf_adds(b, "\n");
}

/* "By question type": each system's Overall per category and subcategory. */
static void md_by_type(const struct report *r, struct sys *sv, size_t nsys, struct buf *b)
{
    char **names = row_system_names(r);
    struct strv types = STRV_INIT;
    categories(r, NULL, &types);
    buf_adds(b, "## By question type (Overall)\n\n| Type | Subtype |");
    for (size_t s = 0; s < nsys; s++) buf_printf(b, " %s |", sv[s].name);
    buf_adds(b, "\n|---|---|");
    for (size_t s = 0; s < nsys; s++) buf_adds(b, "---|");
    buf_adds(b, "\n");
    for (size_t t = 0; t < types.n; t++) {
        category_row(r, names, sv, nsys, types.v[t], NULL, b);
        struct strv subs = STRV_INIT;
        categories(r, types.v[t], &subs);
        for (size_t k = 0; k < subs.n; k++) category_row(r, names, sv, nsys, types.v[t], subs.v[k], b);
        strv_free(&subs);
    }
    buf_adds(b, "\n");
    strv_free(&types);
    for (size_t i = 0; i < r->n; i++) free(names[i]);
    free(names);
}

/* "Tokens per question": each system's mean input/output tokens. */
static void md_tokens(const struct sys *sv, size_t nsys, struct buf *b)
{
    buf_adds(b, "## Tokens per question (input/output, mean)\n\n| System | Tokens |\n|---|---|\n");
    for (size_t s = 0; s < nsys; s++) {
        buf_printf(b, "| %s | ", sv[s].name);
        if (sv[s].tok_in.n) {
            thousands(b, sv[s].tok_in.sum / sv[s].tok_in.n);
            buf_addc(b, '/');
            thousands(b, sv[s].tok_out.sum / sv[s].tok_out.n);
            buf_printf(b, " (n=%d) |\n", sv[s].tok_in.n);
        } else {
            buf_adds(b, "- (n=0) |\n");
        }
    }
    buf_adds(b, "\n");
}

/* "Model cost per question": each system's mean cached tokens and cost. */
static void md_cost(const struct sys *sv, size_t nsys, struct buf *b)
{
    buf_adds(b, "## Model cost per question (mean)\n\n| System | Cached input tokens | Cost (USD) |\n|---|---|---|\n");
    for (size_t s = 0; s < nsys; s++) {
        buf_printf(b, "| %s | ", sv[s].name);
        if (sv[s].tok_cached.n) {
            thousands(b, sv[s].tok_cached.sum / sv[s].tok_cached.n);
            buf_printf(b, " (n=%d) | ", sv[s].tok_cached.n);
        } else {
            buf_adds(b, "- (n=0) | ");
        }
        if (sv[s].cost.n) buf_printf(b, "%.4f (n=%d)", sv[s].cost.sum / sv[s].cost.n, sv[s].cost.n);
        else buf_adds(b, "- (n=0)");
        if (sv[s].unpriced) buf_printf(b, ", %d unpriced", sv[s].unpriced);
        buf_adds(b, " |\n");
    }
    buf_adds(b, "\n");
}

/* "Grounding": the metrics computed without a model, per system. */
static void md_grounding(const struct sys *sv, size_t nsys, struct buf *b)
{
    buf_adds(b, "## Grounding (no model)\n\nfile-hit@k: a gold file among the first k distinct cited files; "
                "file-hit@5 (citations): among the first five citations, repeats counted; "
                "identifier recall: share of the reference's identifiers found in the answer and its evidence.\n\n"
                "| System | file-hit@1 | file-hit@5 | file-hit@5 (citations) | Identifier recall |\n"
                "|---|---|---|---|---|\n");
    for (size_t s = 0; s < nsys; s++) {
        buf_printf(b, "| %s | ", sv[s].name);
        cell_mean(b, &sv[s].hit1, "%.2f");
        buf_adds(b, " | ");
        cell_mean(b, &sv[s].hit5, "%.2f");
        buf_adds(b, " | ");
        cell_mean(b, &sv[s].hit5c, "%.2f");
        buf_adds(b, " | ");
        cell_mean(b, &sv[s].ident, "%.2f");
        buf_adds(b, " |\n");
    }
}

void report_markdown(const struct report *r, struct buf *b)
{
    size_t nsys;
    struct sys *sv = systems(r, &nsys);
    int any_judge = 0, any_tokens = 0, any_cat = 0, any_usage = 0;
    for (size_t i = 0; i < r->n; i++) {
        any_judge |= r->rows[i].njudges > 0;
        any_tokens |= r->rows[i].has_tokens;
        any_usage |= r->rows[i].has_usage;
        any_cat |= r->rows[i].category_type != NULL;
    }

    buf_adds(b, "## Overall\n\n");
    if (any_judge) {
        buf_adds(b, "Judges: ");
        for (size_t j = 0; j < r->judges.n; j++) buf_printf(b, "%s%s", j ? ", " : "", r->judges.v[j]);
        buf_adds(b, ". Each dimension 1-20, Overall their sum (100); a question's score is the mean over the "
                    "judges that answered; Unjudged: answers no judge scored, left out of the means.\n\n");
        buf_adds(b, "| System | Questions |");
        for (int d = 0; d < EVAL_NDIM; d++) buf_printf(b, " %s |", eval_dim_titles[d]);
        buf_adds(b, " Overall | Unjudged |\n|---|---|");
        for (int d = 0; d < EVAL_NDIM; d++) buf_adds(b, "---|");
        buf_adds(b, "---|---|\n");
        for (size_t s = 0; s < nsys; s++) {
            buf_printf(b, "| %s | %d |", sv[s].name, sv[s].questions);
            for (int d = 0; d < EVAL_NDIM; d++) {
                buf_adds(b, " ");
                cell_mean(b, &sv[s].dims[d], "%.2f");
                buf_adds(b, " |");
            }
            buf_adds(b, " ");
            cell_mean(b, &sv[s].total, "%.2f");
            buf_printf(b, " | %d |\n", sv[s].unjudged);
        }
        buf_adds(b, "\n");
    } else {
        buf_adds(b, "No judge scores in these files (answers files, or --judge ran with no judge model).\n\n");
    }

    if (any_judge && r->judges.n) {
        buf_adds(b, "## Per judge (Overall)\n\n| System |");
        for (size_t j = 0; j < r->judges.n; j++) buf_printf(b, " %s |", r->judges.v[j]);
        buf_adds(b, "\n|---|");
        for (size_t j = 0; j < r->judges.n; j++) buf_adds(b, "---|");
        buf_adds(b, "\n");
        for (size_t s = 0; s < nsys; s++) {
            buf_printf(b, "| %s |", sv[s].name);
            for (size_t j = 0; j < r->judges.n; j++) {
                buf_adds(b, " ");
                cell_mean(b, &sv[s].per_judge[j], "%.2f");
                buf_adds(b, " |");
            }
            buf_adds(b, "\n");
        }
        buf_adds(b, "\n");
    }

    if (any_judge && any_cat) {
        md_by_type(r, sv, nsys, b);
    }

    if (any_tokens) {
        md_tokens(sv, nsys, b);
    }

    if (any_usage) {
        md_cost(sv, nsys, b);
    }

    md_grounding(sv, nsys, b);
    systems_free(sv, nsys);
}

static void json_mean(cJSON *o, const char *name, const struct mean *m)
{
    cJSON *x = cJSON_AddObjectToObject(o, name);
    if (m->n) cJSON_AddNumberToObject(x, "mean", m->sum / m->n);
    else cJSON_AddNullToObject(x, "mean");
    cJSON_AddNumberToObject(x, "n", m->n);
}

cJSON *report_json(const struct report *r)
{
    size_t nsys;
    struct sys *sv = systems(r, &nsys);
    cJSON *root = cJSON_CreateObject();
    cJSON *js = cJSON_AddArrayToObject(root, "judges");
    for (size_t j = 0; j < r->judges.n; j++) cJSON_AddItemToArray(js, cJSON_CreateString(r->judges.v[j]));
    cJSON *arr = cJSON_AddArrayToObject(root, "systems");
    for (size_t s = 0; s < nsys; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "system", sv[s].name);
        cJSON_AddNumberToObject(o, "questions", sv[s].questions);
        cJSON_AddNumberToObject(o, "unjudged", sv[s].unjudged);
        for (int d = 0; d < EVAL_NDIM; d++) json_mean(o, eval_dims[d], &sv[s].dims[d]);
        json_mean(o, "overall", &sv[s].total);
        cJSON *pj = cJSON_AddObjectToObject(o, "per_judge");
        for (size_t j = 0; j < r->judges.n; j++) json_mean(pj, r->judges.v[j], &sv[s].per_judge[j]);
        json_mean(o, "tokens_input", &sv[s].tok_in);
        json_mean(o, "tokens_output", &sv[s].tok_out);
        json_mean(o, "tokens_cached_input", &sv[s].tok_cached);
        json_mean(o, "cost_usd", &sv[s].cost);
        cJSON_AddNumberToObject(o, "unpriced", sv[s].unpriced);
        json_mean(o, "file_hit@1", &sv[s].hit1);
        json_mean(o, "file_hit@5", &sv[s].hit5);
        json_mean(o, "file_hit@5_citations", &sv[s].hit5c);
        json_mean(o, "identifier_recall", &sv[s].ident);
        cJSON_AddItemToArray(arr, o);
    }
    systems_free(sv, nsys);
    return root;
}
