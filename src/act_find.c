/*
 * act_find: FindClass and FindFunction, the name-based lookups of paper 3.2.
 * A name is tried exactly, then ignoring case, then as a dotted name (module
 * and/or enclosing class: 'flask.app.Flask', 'Flask.run', 'app.Flask.run'),
 * and only then fuzzily over the distinct names of the index (edit distance,
 * substring, subsequence), so a model's near miss still lands. Every match says
 * how it matched. Several definitions of one name come back as a ranked
 * disambiguation list, with the code of the first few and of the first
 * module-level one; when file_pattern filters everything out, the results
 * without it are shown and labelled so.
 */
#include "action.h"
#include "fpattern.h"
#include "fuzzy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIND_CODE_SPANS 3      /* definitions shown with code; the rest are listed */
#define FIND_FUZZY_NAMES 6

struct match {
    struct action_symbol s;
    const char *how;
    double score;
};

struct matches {
    struct match *v;
    size_t n;
};

static void matches_free(struct matches *m)
{
    for (size_t i = 0; i < m->n; i++) action_symbol_free(&m->v[i].s);
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

static double how_score(const char *how)
{
    if (strcmp(how, "exact") == 0) return 1.0;
    if (strcmp(how, "dotted") == 0) return 0.97;
    return 0.95;   /* case-insensitive */
}

/* Exact, case-insensitive or dotted definitions of name. -1 on a database error. */
static int lookup(struct action_ctx *ctx, const char *name, const char *kinds, const char *pattern,
                  struct matches *m)
{
    struct action_symbol *syms;
    const char *how;
    int n = action_lookup_symbols(ctx, name, kinds, pattern, &syms, &how);
    if (n <= 0) return n;
    m->v = xreallocarray(m->v, m->n + (size_t)n, sizeof *m->v);
    for (int i = 0; i < n; i++) {
        struct match *x = &m->v[m->n++];
        x->s = syms[i];
        x->how = how;
        x->score = how_score(how);
    }
    free(syms);
    return n;
}

/* Fuzzy stage: nearest distinct names of the kind, then their definitions. */
static int lookup_fuzzy(struct action_ctx *ctx, const char *query, int which, const char *kinds,
                        const char *pattern, struct matches *m)
{
    const char *dot = strrchr(query, '.');
    const char *last = dot ? dot + 1 : query;
    size_t nn;
    const char *const *names = action_cache_names(ctx, which, &nn);
    struct fuzzy_hit hits[FIND_FUZZY_NAMES];
    size_t nh = fuzzy_best(last, names, nn, FIND_FUZZY_NAMES, hits);
    int total = 0;
    for (size_t i = 0; i < nh; i++) {
        struct matches one = {NULL, 0};
        int n = lookup(ctx, names[hits[i].index], kinds, pattern, &one);
        if (n < 0) {
            matches_free(&one);
            return -1;
        }
        for (size_t j = 0; j < one.n; j++) {
            one.v[j].how = "fuzzy";
            one.v[j].score = 0.9 * hits[i].score;
        }
        m->v = xreallocarray(m->v, m->n + one.n, sizeof *m->v);
        memcpy(m->v + m->n, one.v, one.n * sizeof *one.v);
        m->n += one.n;
        total += (int)one.n;
        free(one.v);
    }
    return total;
}

static void add_item(struct action_result *out, const struct match *x)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", x->s.name);
    cJSON_AddStringToObject(o, "qualname", x->s.qualname);
    cJSON_AddStringToObject(o, "kind", x->s.kind);
    cJSON_AddStringToObject(o, "path", x->s.path);
    if (x->s.module) cJSON_AddStringToObject(o, "module", x->s.module);
    cJSON_AddNumberToObject(o, "start_line", x->s.start_line);
    cJSON_AddNumberToObject(o, "end_line", x->s.end_line);
    if (x->s.signature) cJSON_AddStringToObject(o, "signature", x->s.signature);
    if (x->s.bases) cJSON_AddStringToObject(o, "bases", x->s.bases);
    cJSON_AddStringToObject(o, "match", x->how);
    cJSON_AddNumberToObject(o, "score", x->score);
    cJSON_AddItemToArray(out->items, o);
}

/* Fills out from m (best first). */
static void report(struct action_ctx *ctx, const char *what, const char *query, struct matches *m,
                   struct action_result *out)
{
    size_t max = ctx->max_results > 0 ? (size_t)ctx->max_results : ACTION_DEFAULT_MAX_RESULTS;
    size_t shown = m->n < max ? m->n : max;
    for (size_t i = 0; i < shown; i++) add_item(out, &m->v[i]);
    int fuzzy = m->n && strcmp(m->v[0].how, "fuzzy") == 0;
    size_t with_code = fuzzy ? 1 : FIND_CODE_SPANS;
    /* the first module-level definition is shown too, wherever it ranks: a
     * name written alone is usually that one's (sympy's simplify(), listed
     * after Basic.simplify and other methods of shallower files) */
    size_t top = shown;
    for (size_t i = 0; !fuzzy && i < shown && top == shown; i++)
        if (!strchr(m->v[i].s.qualname, '.')) top = i;
    for (size_t i = 0; i < shown; i++) {
        if (i >= with_code && i != top) continue;
        struct evidence_span *sp = action_add_definition(ctx, out, &m->v[i].s, m->v[i].score);
        if (sp && strcmp(m->v[i].how, "exact") != 0) {
            char *l = xasprintf("%s  [%s match for '%s']", sp->label ? sp->label : "", m->v[i].how, query);
            free(sp->label);
            sp->label = l;
        }
    }
    if (fuzzy) {
        struct buf b = BUF_INIT;
        for (size_t i = 0; i < shown && i < 8; i++)
            buf_printf(&b, "%s%s (%s:%d)", i ? ", " : "", m->v[i].s.qualname, m->v[i].s.path, m->v[i].s.start_line);
        action_result_note(out, "no %s named '%s'; did you mean: %s", what, query, buf_str(&b));
        buf_free(&b);
    } else if (m->n > 1) {
        struct buf b = BUF_INIT;
        for (size_t i = 0; i < shown; i++)
            buf_printf(&b, "%s%s:%d", i ? ", " : "", m->v[i].s.path, m->v[i].s.start_line);
        char also[64] = "";
        if (top < shown && top >= with_code) snprintf(also, sizeof also, " and the module-level one (%zu)", top + 1);
        action_result_note(out, "%zu definitions of '%s': %s%s; code is shown for the first %zu%s. "
                           "Narrow with file_pattern or a dotted name (module.%s)",
                           m->n, query, buf_str(&b), m->n > shown ? ", ..." : "",
                           shown < FIND_CODE_SPANS ? shown : (size_t)FIND_CODE_SPANS, also, m->v[0].s.name);
        buf_free(&b);
    }
    if (m->n > shown) {
        action_result_note(out, "%zu more matches not listed", m->n - shown);
        out->truncated = 1;
    }
}

static void count_files(struct action_ctx *ctx, long long *files, long long *syms)
{
    sqlite3_stmt *st;
    *files = *syms = 0;
    if (sqlite3_prepare_v2(ctx->db, "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM symbols)", -1, &st,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            *files = sqlite3_column_int64(st, 0);
            *syms = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
    }
}

/* The lookup ladder shared by both actions. */
static int find(struct action_ctx *ctx, const char *what, const char *query, int which, const char *kinds,
                const char *pattern, struct action_result *out, char *err, size_t errlen)
{
    struct matches m = {NULL, 0};
    int dropped_pattern = 0;
    int n = lookup(ctx, query, kinds, pattern, &m);
    if (n == 0 && pattern && *pattern) {
        n = lookup(ctx, query, kinds, NULL, &m);
        if (n > 0) dropped_pattern = 1;
    }
    if (n == 0) {
        n = lookup_fuzzy(ctx, query, which, kinds, pattern, &m);
        if (n == 0 && pattern && *pattern) {
            n = lookup_fuzzy(ctx, query, which, kinds, NULL, &m);
            if (n > 0) dropped_pattern = 1;
        }
    }
    if (n < 0) {
        matches_free(&m);
        snprintf(err, errlen, "cannot read symbols from the index: %s", sqlite3_errmsg(ctx->db));
        return ACTION_EFAIL;
    }
    /* fuzzy matches from several names: best score first, stable by rank */
    for (size_t i = 1; i < m.n; i++) {
        struct match x = m.v[i];
        size_t j = i;
        while (j > 0 && m.v[j - 1].score < x.score) { m.v[j] = m.v[j - 1]; j--; }
        m.v[j] = x;
    }
    if (dropped_pattern)
        action_result_note(out, "no results with file_pattern '%s'; showing results without it", pattern);
    if (m.n == 0) {
        long long files, syms;
        count_files(ctx, &files, &syms);
        action_result_note(out, "no %s named '%s' or with a similar name in the index (%lld files, %lld symbols); "
                           "try FindCodeSnippet or SemanticSearch", what, query, files, syms);
    } else {
        report(ctx, what, query, &m, out);
    }
    matches_free(&m);
    return ACTION_OK;
}

int action_find_class(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err,
                      size_t errlen)
{
    const char *name = action_arg_str(args, "class_name");
    const char *pattern = action_arg_str(args, "file_pattern");
    return find(ctx, "class", name, ACTION_NAMES_CLASSES, "'class'", pattern, out, err, errlen);
}

int action_find_function(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err,
                         size_t errlen)
{
    const char *name = action_arg_str(args, "function_name");
    const char *cls = action_arg_str(args, "class_name");
    const char *pattern = action_arg_str(args, "file_pattern");
    const char *kinds = "'function','method'";
    if (!cls || !*cls) return find(ctx, "function", name, ACTION_NAMES_FUNCTIONS, kinds, pattern, out, err, errlen);
    /* A method of a class: 'Class.name' as a dotted name; when the class has
     * no such method (inherited, or a wrong guess), the plain name. */
    char *q = xasprintf("%s.%s", cls, name);
    struct action_symbol *syms;
    const char *how;
    int n = action_lookup_symbols(ctx, q, kinds, pattern, &syms, &how);
    if (n == 0 && pattern && *pattern) n = action_lookup_symbols(ctx, q, kinds, NULL, &syms, &how);
    for (int i = 0; i < n; i++) action_symbol_free(&syms[i]);
    if (n > 0) free(syms);
    int r;
    if (n > 0) {
        r = find(ctx, "method", q, ACTION_NAMES_FUNCTIONS, kinds, pattern, out, err, errlen);
    } else {
        r = find(ctx, "function", name, ACTION_NAMES_FUNCTIONS, kinds, pattern, out, err, errlen);
        if (r == ACTION_OK)
            action_result_note(out, "class '%s' has no method '%s' in the index (it may be inherited); "
                               "showing definitions of '%s' anywhere", cls, name, name);
    }
    free(q);
    return r;
}
