/*
 * action: the registry of actions, argument validation, dispatch, results and
 * their JSON and prompt renderings, plus the toolkit the handlers share: files
 * with line tables, symbol rows, definitions as evidence (whole or as a
 * skeleton), elision markers, and a per-connection cache of the distinct
 * names, the paths and the normalised text of the index. See action.h.
 */
#include "action.h"
#include "text_feed.h"
#include "fpattern.h"
#include "fuzzy.h"
#include "linepost.h"
#include "pathsafe.h"
#include "qparse.h"
#include "semantic.h"
#include "sqlx.h"
#include "util.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- registry */

/* The built-in actions are action_table.c's rows; action_register adds others. */

#define ACTION_MAX_DEFS 32
static const struct action_def *table[ACTION_MAX_DEFS];
static size_t ntable;
static const char *names[ACTION_MAX_DEFS + 1];

static void table_init(void)
{
    if (ntable) return;
    for (size_t i = 0; i < action_nbuiltin; i++) {
        table[ntable] = &action_builtin[i];
        names[ntable++] = action_builtin[i].name;
    }
    names[ntable] = NULL;
}

const struct action_def *action_find(const char *name)
{
    table_init();
    for (size_t i = 0; name && i < ntable; i++)
        if (strcmp(table[i]->name, name) == 0) return table[i];
    return NULL;
}

const char *action_arg_default(const char *action, const char *arg)
{
    for (const struct action_arg_default *d = action_arg_defaults; action && arg && d->action; d++)
        if (!strcasecmp(d->action, action) && !strcmp(d->arg, arg)) return d->value;
    return NULL;
}

int action_register(const struct action_def *def, char *err, size_t errlen)
{
    table_init();
    if (!def || !def->name || !*def->name || !def->args || !def->run) {
        snprintf(err, errlen, "action_register: an action needs a name, an argument list and a handler");
        return -1;
    }
    for (size_t i = 0; i < ntable; i++)
        if (strcmp(table[i]->name, def->name) == 0) {
            table[i] = def;
            return 0;
        }
    if (ntable == ACTION_MAX_DEFS) {
        snprintf(err, errlen, "action_register: cannot add '%s', the table holds %d actions", def->name,
                 ACTION_MAX_DEFS);
        return -1;
    }
    /* new actions go before Finish, which stays last in prompts */
    table[ntable] = table[ntable - 1];
    table[ntable - 1] = def;
    ntable++;
    for (size_t i = 0; i < ntable; i++) names[i] = table[i]->name;
    names[ntable] = NULL;
    return 0;
}

const char *const *action_names(void)
{
    table_init();
    return names;
}

static const char *type_name(enum action_arg_type t)
{
    switch (t) {
    case ACTION_ARG_STRING: return "string";
    case ACTION_ARG_STRING_LIST: return "array of strings";
    case ACTION_ARG_INT: return "integer";
    case ACTION_ARG_BOOL: return "boolean";
    }
    return "?";
}

cJSON *action_def_json(const struct action_def *d)
{
    if (!d) return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "description", d->description ? d->description : "");
    cJSON *args = cJSON_AddArrayToObject(o, "arguments");
    for (const struct action_arg *a = d->args; a->name; a++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", a->name);
        cJSON_AddStringToObject(x, "type", type_name(a->type));
        cJSON_AddBoolToObject(x, "required", a->required);
        cJSON_AddStringToObject(x, "description", a->description ? a->description : "");
        cJSON_AddItemToArray(args, x);
    }
    return o;
}

cJSON *action_schema_json(void)
{
    table_init();
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < ntable; i++) cJSON_AddItemToArray(arr, action_def_json(table[i]));
    return arr;
}

static void expected_fields(const struct action_def *def, char *out, size_t n)
{
    size_t o = 0;
    out[0] = 0;
    for (const struct action_arg *a = def->args; a->name && o < n; a++)
        o += (size_t)snprintf(out + o, n - o, "%s%s (%s%s)", o ? ", " : "", a->name, type_name(a->type),
                              a->required ? ", required" : "");
}

int action_validate(const struct action_def *def, const cJSON *args, char *err, size_t errlen)
{
    char fields[512];
    expected_fields(def, fields, sizeof fields);
    if (!cJSON_IsObject(args)) {
        snprintf(err, errlen, "%s: the arguments must be a JSON object with the fields %s", def->name, fields);
        return ACTION_EINVAL;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, args) {
        const struct action_arg *a = def->args;
        while (a->name && strcmp(a->name, it->string) != 0) a++;
        if (!a->name) {
            snprintf(err, errlen, "%s: unknown field '%s'; the fields are %s", def->name, it->string, fields);
            return ACTION_EINVAL;
        }
        if (cJSON_IsNull(it) && !a->required) continue;
        int good = 0;
        switch (a->type) {
        case ACTION_ARG_STRING: good = cJSON_IsString(it); break;
        case ACTION_ARG_BOOL: good = cJSON_IsBool(it); break;
        case ACTION_ARG_INT: good = cJSON_IsNumber(it) && it->valuedouble == (double)(long long)it->valuedouble; break;
        case ACTION_ARG_STRING_LIST: {
            good = cJSON_IsArray(it);
            int i = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, it) {
                if (!cJSON_IsString(e)) {
                    snprintf(err, errlen, "%s: element %d of field '%s' must be a string", def->name, i, a->name);
                    return ACTION_EINVAL;
                }
                i++;
            }
            if (good && i == 0) {
                snprintf(err, errlen, "%s: field '%s' must not be empty (an array of strings)", def->name, a->name);
                return ACTION_EINVAL;
            }
            break;
        }
        }
        if (!good) {
            snprintf(err, errlen, "%s: field '%s' must be %s %s%s", def->name, a->name,
                     a->type == ACTION_ARG_STRING_LIST || a->type == ACTION_ARG_INT ? "an" : "a", type_name(a->type),
                     a->type == ACTION_ARG_STRING_LIST ? " (e.g. [\"pkg/mod.py:10-40\"])" : "");
            return ACTION_EINVAL;
        }
        if (a->type == ACTION_ARG_STRING && a->required == 1 && !*it->valuestring) {
            snprintf(err, errlen, "%s: field '%s' must not be empty", def->name, a->name);
            return ACTION_EINVAL;
        }
    }
    for (const struct action_arg *a = def->args; a->name; a++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, a->name);
        if (a->required && (!v || cJSON_IsNull(v))) {
            snprintf(err, errlen, "%s: missing required field '%s' (%s: %s)", def->name, a->name, type_name(a->type),
                     a->description);
            return ACTION_EINVAL;
        }
    }
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(args, "file_pattern");
    if (cJSON_IsString(fp) && !fpattern_valid(fp->valuestring, err, errlen)) return ACTION_EINVAL;
    return ACTION_OK;
}

static void cache_check(struct action_ctx *ctx);

int action_run(struct action_ctx *ctx, const char *name, const cJSON *args, struct action_result *out,
               char *err, size_t errlen)
{
    action_result_init(out);
    const struct action_def *def = action_find(name);
    if (!def) {
        /* a case slip or a near miss gets the intended name */
        table_init();
        const char *best = NULL;
        double bs = 0;
        for (size_t i = 0; name && i < ntable; i++) {
            double s = fuzzy_score(name, table[i]->name);
            if (s > bs) { bs = s; best = table[i]->name; }
        }
        char list[512];
        size_t o = 0;
        for (size_t i = 0; i < ntable && o < sizeof list; i++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", table[i]->name);
        if (best)
            snprintf(err, errlen, "unknown action '%s' (did you mean %s?); the actions are %s", name ? name : "",
                     best, list);
        else
            snprintf(err, errlen, "unknown action '%s'; the actions are %s", name ? name : "", list);
        return ACTION_EINVAL;
    }
    out->action = xstrdup(def->name);
    int r = action_validate(def, args, err, errlen);
    if (r) return r;
    if (!def->run) {
        if (strcmp(def->name, "Finish") == 0)
            snprintf(err, errlen, "Finish ends the search; it is not run against the index");
        else
            snprintf(err, errlen, "%s is not available: it is not enabled in this run", def->name);
        return ACTION_EINVAL;
    }
    if (!ctx || !ctx->db) {
        snprintf(err, errlen, "%s: no index is open", def->name);
        return ACTION_EFAIL;
    }
    cache_check(ctx);
    free(ctx->failed);
    ctx->failed = NULL;
    r = def->run(ctx, args, out, err, errlen);
    if (ctx->failed) {   /* the handler's own message, when it failed, says more */
        if (r == ACTION_OK) snprintf(err, errlen, "%s: cannot read the index: %s", def->name, ctx->failed);
        r = ACTION_EFAIL;
    }
    free(ctx->failed);
    ctx->failed = NULL;
    return r;
}

/* The byte offset of a \u0000 escape inside a string of the JSON text, or
 * -1. cJSON keeps strings NUL-terminated, so such a string would be cut
 * there: "a.py\u0000../x" would be read as "a.py". */
static long json_nul_escape(const char *text)
{
    int in_string = 0;
    for (const char *p = text; *p; p++) {
        if (!in_string) {
            in_string = *p == '"';
        } else if (*p == '"') {
            in_string = 0;
        } else if (*p == '\\' && p[1]) {
            if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0) return (long)(p - text);
            p++;   /* the escaped character, a backslash or a quote included */
        }
    }
    return -1;
}

cJSON *action_args_parse(const char *name, const char *json, char *err, size_t errlen)
{
    const char *text = json ? json : "", *end = NULL;
    cJSON *args = cJSON_ParseWithOpts(text, &end, 1);
    long nul = args ? json_nul_escape(text) : -1;
    if (nul >= 0) {
        snprintf(err, errlen, "%s: a string of the arguments holds a NUL (\\u0000 at byte %ld), which no path, name "
                 "or text to look for contains; remove it", name ? name : "action", nul + 1);
        cJSON_Delete(args);
        return NULL;
    }
    if (args) return args;
    const char *at = end && end >= text ? end : cJSON_GetErrorPtr();
    if (!at || at < text || at > text + strlen(text)) at = text + strlen(text);
    /* was it one whole value followed by more text? */
    cJSON *head = cJSON_ParseWithOpts(text, NULL, 0);
    int trailing = head != NULL;
    cJSON_Delete(head);
    if (*at)
        snprintf(err, errlen, "%s: the arguments are not valid JSON: %s at byte %ld ('%.*s'); give one object like "
                 "{\"field\": \"value\"} and nothing after it", name ? name : "action",
                 trailing ? "unexpected text after the object" : "a syntax error", (long)(at - text) + 1,
                 utf8_cut(at, 20), at);
    else
        snprintf(err, errlen, "%s: the arguments are not valid JSON: the input ends at byte %ld before the value "
                 "does; give an object like {\"field\": \"value\"}", name ? name : "action", (long)(at - text));
    return NULL;
}

int action_run_json(struct action_ctx *ctx, const char *name, const char *args_json, struct action_result *out,
                    char *err, size_t errlen)
{
    cJSON *args = action_args_parse(name, args_json, err, errlen);
    if (!args) {
        action_result_init(out);
        return ACTION_EINVAL;
    }
    int r = action_run(ctx, name, args, out, err, errlen);
    cJSON_Delete(args);
    return r;
}

const char *action_arg_str(const cJSON *args, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ----------------------------------------------------------------- results */

void action_result_init(struct action_result *r)
{
    memset(r, 0, sizeof *r);
    r->items = cJSON_CreateArray();
}

void action_result_free(struct action_result *r)
{
    if (!r) return;
    free(r->action);
    evidence_free(&r->ev);
    cJSON_Delete(r->items);
    for (size_t i = 0; i < r->nnotes; i++) free(r->notes[i]);
    free(r->notes);
    buf_free(&r->listing);
    memset(r, 0, sizeof *r);
}

void action_result_note(struct action_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *note = xvasprintf(fmt, ap);
    va_end(ap);
    size_t n = strlen(note);
    if (n > ACTION_NOTE_MAX) {
        /* a note that repeats an argument of 100 KB ("no class named '...'")
         * would take a model's context twice over (notes and text) */
        int keep = utf8_cut(note, ACTION_NOTE_MAX);
        char *cut = xasprintf("%.*s... (a note of %zu bytes, cut)", keep, note, n);
        free(note);
        note = cut;
    }
    r->notes = xreallocarray(r->notes, r->nnotes + 1, sizeof *r->notes);
    r->notes[r->nnotes++] = note;
}

void action_read_failed(struct action_ctx *ctx, const char *fmt, ...)
{
    if (ctx->failed) return;   /* the first reason is the one told */
    va_list ap;
    va_start(ap, fmt);
    ctx->failed = xvasprintf(fmt, ap);
    va_end(ap);
}

cJSON *action_result_to_json(const struct action_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "action", r->action ? r->action : "");
    cJSON_AddItemToObject(o, "items", r->items ? cJSON_Duplicate(r->items, 1) : cJSON_CreateArray());
    cJSON_AddItemToObject(o, "evidence", evidence_to_json(&r->ev));
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; i < r->nnotes; i++) cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes[i]));
    if (r->listing.len) cJSON_AddStringToObject(o, "listing", buf_str(&r->listing));
    cJSON_AddBoolToObject(o, "truncated", r->truncated);
    return o;
}

void action_marker(struct buf *b, int indent, const char *path, int a, int bl, const char *why)
{
    buf_printf(b, "%*s... (lines %d-%d elided%s%s; ViewCode %s:%d-%d to read them)", indent, "", a, bl,
               why ? ": " : "", why ? why : "", path, a, bl);
}

int action_marker_parse(const char *line, size_t len, int *a, int *b)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    static const char pre[] = "... (lines ";
    if (len - i < sizeof pre - 1 || memcmp(line + i, pre, sizeof pre - 1) != 0) return 0;
    i += sizeof pre - 1;
    int x = 0, y = 0, dx = 0, dy = 0;
    while (i < len && isdigit((unsigned char)line[i])) { x = x * 10 + (line[i++] - '0'); dx++; }
    if (i >= len || line[i] != '-') return 0;
    i++;
    while (i < len && isdigit((unsigned char)line[i])) { y = y * 10 + (line[i++] - '0'); dy++; }
    if (!dx || !dy || y < x) return 0;
    *a = x;
    *b = y;
    return 1;
}

static int digits(int n)
{
    int d = 1;
    while (n >= 10) { n /= 10; d++; }
    return d;
}

char *action_result_render(const struct action_result *r, long long token_budget)
{
    struct buf b = BUF_INIT;
    size_t cap = token_budget > 0 ? (size_t)token_budget * 4 : (size_t)-1;
    for (size_t i = 0; i < r->nnotes; i++) buf_printf(&b, "Note: %s\n", r->notes[i]);
    if (r->listing.len) {
        const char *s = buf_str(&r->listing);
        const char *end = s + r->listing.len;
        while (s < end) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
            if (b.len + n + 1 > cap) {
                buf_printf(&b, "[truncated: the listing goes on; the token budget of %lld is reached. "
                               "Narrow the pattern or path to see the rest]\n", token_budget);
                return buf_take(&b);
            }
            buf_add(&b, s, n);
            buf_addc(&b, '\n');
            s += n + 1;
        }
    }
    for (size_t i = 0; i < r->ev.n; i++) {
        const struct evidence_span *sp = &r->ev.v[i];
        size_t mark = b.len;
        if (b.len) buf_addc(&b, '\n');
        buf_printf(&b, "%s:%d-%d", sp->path, sp->start_line, sp->end_line);
        if (sp->label) buf_printf(&b, "  %s", sp->label);
        if (sp->elided) buf_adds(&b, "  (parts elided)");
        buf_addc(&b, '\n');
        if (b.len > cap) {
            b.len = mark;
            b.data[b.len] = 0;
            buf_printf(&b, "[truncated: the token budget of %lld is reached; not shown:", token_budget);
            for (size_t j = i; j < r->ev.n; j++)
                buf_printf(&b, " %s:%d-%d", r->ev.v[j].path, r->ev.v[j].start_line, r->ev.v[j].end_line);
            buf_adds(&b, "]\n");
            return buf_take(&b);
        }
        int w = digits(sp->end_line);
        int ln = sp->start_line;
        const char *s = sp->text ? sp->text : "";
        const char *end = s + strlen(s);
        while (s <= end && ln <= sp->end_line) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
            int a, z;
            size_t before = b.len;
            int is_marker = sp->elided && action_marker_parse(s, n, &a, &z);
            if (is_marker) buf_printf(&b, "%*s  %.*s\n", w, "", (int)n, s);
            else buf_printf(&b, "%*d  %.*s\n", w, ln, (int)n, s);
            if (b.len > cap) {
                b.len = before;
                b.data[b.len] = 0;
                buf_printf(&b, "[truncated: the token budget of %lld is reached; ask for %s:%d-%d to read the rest]\n",
                           token_budget, sp->path, ln, sp->end_line);
                for (size_t j = i + 1; j < r->ev.n; j++)
                    buf_printf(&b, "[not shown: %s:%d-%d]\n", r->ev.v[j].path, r->ev.v[j].start_line,
                               r->ev.v[j].end_line);
                return buf_take(&b);
            }
            ln = is_marker ? z + 1 : ln + 1;
            if (!nl) break;
            s = nl + 1;
        }
    }
    return buf_take(&b);
}

/* ------------------------------------------------------------------- files */

int action_file_load(struct action_ctx *ctx, const char *path, long long id, struct action_file *f)
{
    memset(f, 0, sizeof *f);
    sqlite3_stmt *st;
    const char *sql = id >= 0 ? "SELECT id, path, drqa_file_text(id, hash, ztext, tlen) FROM files WHERE id = ?"
                              : "SELECT id, path, drqa_file_text(id, hash, ztext, tlen) FROM files WHERE path = ?";
    if (sqlite3_prepare_v2(ctx->db, sql, -1, &st, NULL) != SQLITE_OK) {
        action_read_failed(ctx, "%s", sqlite3_errmsg(ctx->db));
        return -1;
    }
    if (id >= 0) sqlite3_bind_int64(st, 1, id);
    else sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE) action_read_failed(ctx, "%s", sqlite3_errmsg(ctx->db));
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : -1;
    }
    f->id = sqlite3_column_int64(st, 0);
    f->path = xstrdup((const char *)sqlite3_column_text(st, 1));
    int n = sqlite3_column_bytes(st, 2);
    f->text = xstrndup((const char *)sqlite3_column_text(st, 2), (size_t)n);
    f->len = (size_t)n;
    sqlite3_finalize(st);
    int lines = 1;
    for (const char *p = f->text; (p = memchr(p, '\n', f->len - (size_t)(p - f->text))); p++) lines++;
    if (f->len && f->text[f->len - 1] == '\n') lines--;   /* a final newline ends, not starts, a line */
    if (f->len == 0) lines = 0;
    f->nlines = lines;
    f->line_off = xmalloc(((size_t)lines + 1) * sizeof *f->line_off);
    size_t k = 0;
    if (lines) f->line_off[k++] = 0;
    for (size_t i = 0; i < f->len && k < (size_t)lines; i++)
        if (f->text[i] == '\n') f->line_off[k++] = i + 1;
    f->line_off[lines] = f->len;
    return 1;
}

void action_file_free(struct action_file *f)
{
    if (!f) return;
    free(f->path);
    free(f->text);
    free(f->line_off);
    memset(f, 0, sizeof *f);
}

const char *action_file_line(const struct action_file *f, int k, size_t *len)
{
    if (k < 1 || k > f->nlines) { *len = 0; return ""; }
    size_t a = f->line_off[k - 1], b = f->line_off[k];
    if (b > a && f->text[b - 1] == '\n') b--;
    if (b > a && f->text[b - 1] == '\r') b--;
    *len = b - a;
    return f->text + a;
}

char *action_file_lines(const struct action_file *f, int start, int end)
{
    if (start < 1) start = 1;
    if (end > f->nlines) end = f->nlines;
    struct buf b = BUF_INIT;
    for (int k = start; k <= end; k++) {
        size_t n;
        const char *s = action_file_line(f, k, &n);
        if (k > start) buf_addc(&b, '\n');
        buf_add(&b, s, n);
    }
    return buf_take(&b);
}

/* ----------------------------------------------------------------- symbols */

void action_symbol_from_row(sqlite3_stmt *st, struct action_symbol *s)
{
    s->id = sqlite3_column_int64(st, 0);
    s->file_id = sqlite3_column_int64(st, 1);
    s->parent_id = sqlite3_column_int64(st, 2);
    s->kind = sqlx_col_dup(st, 3);
    s->name = sqlx_col_dup(st, 4);
    s->qualname = sqlx_col_dup(st, 5);
    s->start_line = sqlite3_column_int(st, 6);
    s->end_line = sqlite3_column_int(st, 7);
    s->body_line = sqlite3_column_type(st, 8) == SQLITE_NULL ? s->start_line : sqlite3_column_int(st, 8);
    s->signature = sqlx_col_dup(st, 9);
    s->docstring = sqlx_col_dup(st, 10);
    s->bases = sqlx_col_dup(st, 11);
    s->path = sqlx_col_dup(st, 12);
    s->module = sqlx_col_dup(st, 13);
    s->importers = 0;
}

void action_symbol_free(struct action_symbol *s)
{
    if (!s) return;
    free(s->kind); free(s->name); free(s->qualname); free(s->signature);
    free(s->docstring); free(s->bases); free(s->path); free(s->module);
    memset(s, 0, sizeof *s);
}

int action_symbol_at(struct action_ctx *ctx, long long file_id, int line, const char *kinds, struct action_symbol *s)
{
    char *sql = xasprintf("SELECT " ACTION_SYMBOL_COLUMNS " WHERE s.file_id = ?1 AND s.start_line <= ?2 AND "
                          "s.end_line >= ?2%s%s%s ORDER BY s.start_line DESC, s.end_line ASC LIMIT 1",
                          kinds ? " AND s.kind IN (" : "", kinds ? kinds : "", kinds ? ")" : "");
    sqlite3_stmt *st;
    int found = 0;
    memset(s, 0, sizeof *s);
    if (sqlite3_prepare_v2(ctx->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, file_id);
        sqlite3_bind_int(st, 2, line);
        if (sqlite3_step(st) == SQLITE_ROW) {
            action_symbol_from_row(st, s);
            found = 1;
        }
        sqlite3_finalize(st);
    }
    free(sql);
    return found;
}

/* Rank of a definition among several of one name: library code before tests
 * (fpattern_is_test), then the ones more files import by name (the public
 * one a package re-exports: xarray's open_dataset of backends/api.py, not
 * tutorial.py's or a backend's method), shallow paths before deep ones, then
 * path and line order. */
static int depth_of(const char *p)
{
    int d = 0;
    for (; *p; p++) d += *p == '/';
    return d;
}

/* Sets each module-level definition's importers: the files importing its
 * name from its file. */
static void count_importers(struct action_ctx *ctx, struct action_symbol *v, size_t n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db, "SELECT count(DISTINCT file_id) FROM imports WHERE resolved_file_id = ?1 "
                                    "AND name = ?2", -1, &st, NULL) != SQLITE_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i].parent_id) continue;   /* a method or a nested function: never imported by name */
        sqlite3_bind_int64(st, 1, v[i].file_id);
        sqlite3_bind_text(st, 2, v[i].name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) v[i].importers = sqlite3_column_int(st, 0);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

static int sym_rank_cmp(const void *x, const void *y)
{
    const struct action_symbol *a = x, *b = y;
    int ta = fpattern_is_test(a->path), tb = fpattern_is_test(b->path);
    if (ta != tb) return ta - tb;
    if (a->importers != b->importers) return b->importers - a->importers;
    int da = depth_of(a->path), db = depth_of(b->path);
    if (da != db) return da - db;
    int r = strcmp(a->path, b->path);
    if (r) return r;
    return a->start_line - b->start_line;
}

/* Case-insensitive: does s end with "." + tail (or equal tail)? */
static int dotted_tail(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    if (m > n) return 0;
    if (strcasecmp(s + n - m, tail) != 0) return 0;
    return m == n || s[n - m - 1] == '.';
}

int action_lookup_symbols(struct action_ctx *ctx, const char *name, const char *kinds, const char *file_pattern,
                          struct action_symbol **out, const char **how)
{
    *out = NULL;
    *how = NULL;
    const char *dot = strrchr(name, '.');
    const char *last = dot ? dot + 1 : name;
    if (!*last) return 0;
    char *sql = xasprintf("SELECT " ACTION_SYMBOL_COLUMNS " WHERE s.name = ?1 COLLATE NOCASE%s%s%s",
                          kinds ? " AND s.kind IN (" : "", kinds ? kinds : "", kinds ? ")" : "");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db, sql, -1, &st, NULL) != SQLITE_OK) {
        free(sql);
        return -1;
    }
    free(sql);
    sqlite3_bind_text(st, 1, last, -1, SQLITE_STATIC);
    /* tiers: 0 exact, 1 case-insensitive, 2 dotted exact case, 3 dotted any case */
    struct action_symbol *tier[4] = {NULL, NULL, NULL, NULL};
    size_t nt[4] = {0, 0, 0, 0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct action_symbol s;
        action_symbol_from_row(st, &s);
        int t = -1;
        if (!fpattern_match(file_pattern, s.path)) t = -1;
        else if (!dot) t = strcmp(s.name, name) == 0 ? 0 : 1;
        else {
            char *full = xasprintf("%s%s%s", s.module ? s.module : "", s.module && *s.module ? "." : "", s.qualname);
            int m_exact = strcmp(s.qualname, name) == 0 || strcmp(full, name) == 0 ||
                          (dotted_tail(full, name) && strstr(full, name) != NULL);
            if (m_exact) t = 2;
            else if (strcasecmp(s.qualname, name) == 0 || dotted_tail(full, name)) t = 3;
            free(full);
        }
        if (t < 0) {
            action_symbol_free(&s);
            continue;
        }
        tier[t] = xreallocarray(tier[t], nt[t] + 1, sizeof **tier);
        tier[t][nt[t]++] = s;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        for (int t = 0; t < 4; t++) {
            for (size_t i = 0; i < nt[t]; i++) action_symbol_free(&tier[t][i]);
            free(tier[t]);
        }
        return -1;
    }
    static const char *const hows[] = {"exact", "case-insensitive", "dotted", "dotted"};
    int best = -1;
    for (int t = 0; t < 4 && best < 0; t++)
        if (nt[t]) best = t;
    for (int t = 0; t < 4; t++) {
        if (t == best) continue;
        for (size_t i = 0; i < nt[t]; i++) action_symbol_free(&tier[t][i]);
        free(tier[t]);
    }
    if (best < 0) return 0;
    if (nt[best] > 1) count_importers(ctx, tier[best], nt[best]);
    qsort(tier[best], nt[best], sizeof **tier, sym_rank_cmp);
    *out = tier[best];
    *how = hows[best];
    return (int)nt[best];
}

/* ------------------------------------------------- definitions, skeletons */

static int indent_of(const char *s, size_t n)
{
    int i = 0;
    while ((size_t)i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    return i;
}

static int blank(const char *s, size_t n)
{
    return (size_t)indent_of(s, n) == n;
}

/* Last line of the signature starting at line k: where the bracket depth is
 * back to zero and the line ends with ':' (comments and simple strings skipped). */
static int signature_end(const struct action_file *f, int k, int limit)
{
    int depth = 0;
    for (int ln = k; ln <= limit && ln < k + 40; ln++) {
        size_t n;
        const char *s = action_file_line(f, ln, &n);
        char last = 0;
        for (size_t i = 0; i < n; i++) {
            char c = s[i];
            if (c == '#') break;
            if (c == '"' || c == '\'') {
                size_t j = i + 1;
                while (j < n && s[j] != c) j += s[j] == '\\' ? 2 : 1;
                i = j;
                last = c;
                continue;
            }
            if (c == '(' || c == '[' || c == '{') depth++;
            else if (c == ')' || c == ']' || c == '}') depth--;
            if (c != ' ' && c != '\t' && c != '\r') last = c;
        }
        if (depth <= 0 && last == ':') return ln;
    }
    return k;
}

/* Docstring lines right after line sig: returns the last docstring line, or sig. */
static int docstring_end(const struct action_file *f, int sig, int limit)
{
    int ln = sig + 1;
    if (ln > limit) return sig;
    size_t n;
    const char *s = action_file_line(f, ln, &n);
    size_t i = (size_t)indent_of(s, n);
    while (i < n && strchr("rRuUbBfF", s[i])) i++;
    if (i >= n || (s[i] != '"' && s[i] != '\'')) return sig;
    char q = s[i];
    int triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
    if (!triple) return ln;
    char close[4] = {q, q, q, 0};
    const char *rest = s + i + 3;
    size_t rn = n - i - 3;
    for (int k = ln; k <= limit; k++) {
        if (k > ln) rest = action_file_line(f, k, &rn);
        for (size_t j = 0; j + 3 <= rn; j++)
            if (memcmp(rest + j, close, 3) == 0) return k;
    }
    return ln;
}

char *action_skeleton(struct action_ctx *ctx, const struct action_file *f, int start, int end, int *elided)
{
    if (start < 1) start = 1;
    if (end > f->nlines) end = f->nlines;
    *elided = 0;
    if (end < start) return xstrdup("");
    int n = end - start + 1;
    unsigned char *keep = xmalloc((size_t)n);
    memset(keep, 1, (size_t)n);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db,
            "SELECT kind, start_line, end_line, COALESCE(body_line, start_line) FROM symbols "
            "WHERE file_id = ?1 AND start_line >= ?2 AND end_line <= ?3 AND kind IN ('function','method','class') "
            "ORDER BY start_line", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, f->id);
        sqlite3_bind_int(st, 2, start);
        sqlite3_bind_int(st, 3, end);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *kind = (const char *)sqlite3_column_text(st, 0);
            int s = sqlite3_column_int(st, 1), e = sqlite3_column_int(st, 2), b = sqlite3_column_int(st, 3);
            int sig = signature_end(f, b, e);
            int doc = docstring_end(f, sig, e);
            if (doc > sig + 10) doc = sig + 10;   /* long docstrings: their head */
            /* a class body stays; its methods are elided by their own rows */
            if (kind && strcmp(kind, "class") == 0) continue;
            (void)s;
            for (int k = doc + 1; k <= e; k++)
                if (k >= start && k <= end) keep[k - start] = 0;
        }
        sqlite3_finalize(st);
    }
    /* runs of one or two lines are cheaper to show than to mark */
    for (int i = 0; i < n;) {
        if (keep[i]) { i++; continue; }
        int j = i;
        while (j < n && !keep[j]) j++;
        int all_blank = 1;
        for (int k = i; k < j && all_blank; k++) {
            size_t len;
            const char *s = action_file_line(f, start + k, &len);
            all_blank = blank(s, len);
        }
        if (j - i <= 2 || all_blank) memset(keep + i, 1, (size_t)(j - i));
        i = j;
    }
    struct buf b = BUF_INIT;
    for (int i = 0; i < n;) {
        if (b.len) buf_addc(&b, '\n');
        if (keep[i]) {
            size_t len;
            const char *s = action_file_line(f, start + i, &len);
            buf_add(&b, s, len);
            i++;
            continue;
        }
        int j = i;
        int ind = -1;
        while (j < n && !keep[j]) {
            size_t len;
            const char *s = action_file_line(f, start + j, &len);
            if (ind < 0 && !blank(s, len)) ind = indent_of(s, len);
            j++;
        }
        /* trailing blank lines of the run stay visible as blank lines */
        int last = j - 1;
        while (last > i) {
            size_t len;
            const char *s = action_file_line(f, start + last, &len);
            if (!blank(s, len)) break;
            last--;
        }
        action_marker(&b, ind < 0 ? 0 : ind, f->path, start + i, start + last, NULL);
        for (int k = last + 1; k < j; k++) buf_addc(&b, '\n');
        *elided = 1;
        i = j;
    }
    free(keep);
    return buf_take(&b);
}

static char *sym_label(const struct action_symbol *s)
{
    if (s->signature && *s->signature) return xstrdup(s->signature);
    return xasprintf("%s %s", s->kind ? s->kind : "symbol", s->qualname ? s->qualname : "?");
}

struct evidence_span *action_add_definition(struct action_ctx *ctx, struct action_result *out,
                                            const struct action_symbol *s, double score)
{
    struct action_file f;
    if (action_file_load(ctx, NULL, s->file_id, &f) != 1) return NULL;
    int start = s->start_line, end = s->end_line > f.nlines ? f.nlines : s->end_line;
    char *label = sym_label(s);
    char *text;
    int elided = 0;
    int lines = end - start + 1;
    if (s->kind && strcmp(s->kind, "class") == 0 && lines > ACTION_CLASS_WHOLE_LINES) {
        text = action_skeleton(ctx, &f, start, end, &elided);
    } else if (lines > ACTION_DEF_MAX_LINES) {
        int keep_to = start + ACTION_DEF_MAX_LINES - 1;
        char *head = action_file_lines(&f, start, keep_to);
        struct buf b = BUF_INIT;
        buf_adds(&b, head);
        buf_addc(&b, '\n');
        size_t n;
        const char *ln = action_file_line(&f, keep_to + 1, &n);
        action_marker(&b, indent_of(ln, n), f.path, keep_to + 1, end, "the definition is long");
        free(head);
        text = buf_take(&b);
        elided = 1;
    } else {
        text = action_file_lines(&f, start, end);
    }
    struct evidence_span *sp = evidence_add(&out->ev, f.path, start, end, text, label, score);
    sp->elided = elided;
    free(text);
    free(label);
    action_file_free(&f);
    return sp;
}

/* ------------------------------------------------------------------- cache */

struct action_cache {
    long long data_version, changes;
    int names_built;
    char **names;                 /* distinct symbol names, owned: each alone, or in names_block */
    char *names_block;            /* the names as stored (names_load), in one allocation */
    size_t nblock;                /* names[0 .. nblock) point into names_block */
    size_t nnames;
    const char **cls, **fun;      /* views into names */
    size_t ncls, nfun;
    int paths_built;
    char **paths;                 /* sorted, owned */
    size_t npaths;
    int norm_built;
    char *norm_failed;            /* owned: why the texts could not be read (then norm is empty) */
    struct action_normtext *norm;   /* their text and lines are in norm_text and norm_lines */
    size_t nnorm;
    char *norm_text;
    int *norm_lines;
    struct norm_key { long long id; size_t idx; } *norm_by_id;   /* sorted by file id */
};

static void cache_clear(struct action_cache *c)
{
    for (size_t i = c->nblock; i < c->nnames; i++) free(c->names[i]);
    free(c->names_block);
    free(c->names); free(c->cls); free(c->fun);
    for (size_t i = 0; i < c->npaths; i++) free(c->paths[i]);
    free(c->paths);
    free(c->norm_failed);
    free(c->norm_text);
    free(c->norm_lines);
    free(c->norm);
    free(c->norm_by_id);
    long long dv = c->data_version, ch = c->changes;
    memset(c, 0, sizeof *c);
    c->data_version = dv;
    c->changes = ch;
}

void action_ctx_init(struct action_ctx *ctx, sqlite3 *db, const char *repo_root)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->db = db;
    ctx->repo_root = repo_root;
}

void action_ctx_release(struct action_ctx *ctx)
{
    if (!ctx) return;
    free(ctx->failed);
    ctx->failed = NULL;
    semantic_cache_free(ctx->semantic);
    ctx->semantic = NULL;
    if (!ctx->cache) return;
    cache_clear(ctx->cache);
    free(ctx->cache);
    ctx->cache = NULL;
}

/* Drops the cache when this or another connection changed the index. */
static void cache_check(struct action_ctx *ctx)
{
    if (!ctx->cache) {
        ctx->cache = xcalloc(1, sizeof *ctx->cache);
        ctx->cache->data_version = sqlx_data_version(ctx->db);
        ctx->cache->changes = sqlite3_total_changes(ctx->db);
        return;
    }
    long long dv = sqlx_data_version(ctx->db), ch = sqlite3_total_changes(ctx->db);
    if (dv != ctx->cache->data_version || ch != ctx->cache->changes) {
        cache_clear(ctx->cache);
        ctx->cache->data_version = dv;
        ctx->cache->changes = ch;
    }
}

static struct action_cache *cache_of(struct action_ctx *ctx)
{
    if (!ctx->cache) cache_check(ctx);
    return ctx->cache;
}

/* The distinct symbol names are also kept in the index (act_names), as one
 * blob stamped with the files they were read from and the version and
 * summary of the index that parsed them: reading them back costs one row,
 * where grouping and sorting every symbol costs a pass and a sort per
 * process. Each name is a flags byte (1 class, 2 function or method), its
 * bytes and a NUL, in name order. */
static int names_stamp(sqlite3 *db, char out[64])
{
    memcpy(out, "n1:", 3);
    return linepost_index_stamp(db, NULL, out + 3, 64 - 3);
}

/* Adds a name: name itself when in_block (it is in names_block, and so are
 * all names before it), else a copy. */
static void names_push(struct action_cache *c, size_t *cap, const char *name, int flags, int in_block)
{
    if (c->nnames == *cap) {
        *cap = xgrow_cap(*cap, c->nnames, 256);
        c->names = xreallocarray(c->names, *cap, sizeof *c->names);
        c->cls = xreallocarray(c->cls, *cap, sizeof *c->cls);
        c->fun = xreallocarray(c->fun, *cap, sizeof *c->fun);
    }
    char *nm = in_block ? (char *)name : xstrdup(name);
    c->nblock += in_block;
    c->names[c->nnames++] = nm;
    if (flags & 1) c->cls[c->ncls++] = nm;
    if (flags & 2) c->fun[c->nfun++] = nm;
}

/* The entries (a flags byte, then a NUL-terminated name) in [p, end). */
static size_t names_count(const char *p, const char *end)
{
    size_t n = 0;
    for (const char *z; p && p < end && (z = memchr(p + 1, 0, (size_t)(end - p - 1))); p = z + 1) n++;
    return n;
}

static int names_load(sqlite3 *db, const char *stamp, struct action_cache *c)
{
    sqlite3_stmt *st;
    /* the blob's size only (sqlite reads no more of the row for it) */
    if (sqlite3_prepare_v2(db, "SELECT id, length(names) FROM act_names WHERE stamp = ?1 AND typeof(names) = 'blob'",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, stamp, -1, SQLITE_STATIC);
    int ok = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        size_t len = (size_t)sqlite3_column_int64(st, 1);
        /* the names stay where they are in one copy of the blob, read
         * straight into it: its megabytes are not first copied by sqlite */
        c->names_block = xmalloc(len + 1);
        sqlite3_blob *bl = NULL;
        int read = len == 0 || (len <= INT_MAX &&
                                sqlite3_blob_open(db, "main", "act_names", "names", sqlite3_column_int64(st, 0), 0,
                                                  &bl) == SQLITE_OK &&
                                sqlite3_blob_read(bl, c->names_block, (int)len, 0) == SQLITE_OK);
        sqlite3_blob_close(bl);
        const char *p = read && len ? c->names_block : NULL, *end = c->names_block + len;
        /* the three lists sized once: grown name by name, hundreds of
         * thousands of names were most of a later question's reading them */
        size_t cap = c->nnames + names_count(p, end);
        c->names = xreallocarray(c->names, cap ? cap : 1, sizeof *c->names);
        c->cls = xreallocarray(c->cls, cap ? cap : 1, sizeof *c->cls);
        c->fun = xreallocarray(c->fun, cap ? cap : 1, sizeof *c->fun);
        ok = read;
        while (p && p < end) {
            const char *z = memchr(p + 1, 0, (size_t)(end - p - 1));
            if (!z) { ok = 0; break; }
            names_push(c, &cap, p + 1, (unsigned char)*p, 1);
            p = z + 1;
        }
    }
    sqlite3_finalize(st);
    if (!ok) {
        /* a damaged list: nothing of it stays for names_query to add to */
        free(c->names_block);
        free(c->names); free(c->cls); free(c->fun);
        c->names_block = NULL;
        c->names = NULL;
        c->cls = c->fun = NULL;
        c->nnames = c->nblock = c->ncls = c->nfun = 0;
    }
    return ok;
}

static void names_query(sqlite3 *db, struct action_cache *c)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db,
            "SELECT name, MAX(kind = 'class'), MAX(kind IN ('function','method')) FROM symbols "
            "GROUP BY name ORDER BY name", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            names_push(c, &cap, (const char *)sqlite3_column_text(st, 0),
                       (sqlite3_column_int(st, 1) ? 1 : 0) | (sqlite3_column_int(st, 2) ? 2 : 0), 0);
        sqlite3_finalize(st);
    }
}

/* Writes c's names under stamp in w's write transaction; -1 when it cannot. */
static int names_write_on(sqlite3 *w, const char *stamp, const struct action_cache *c)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0, ic = 0, jf = 0; i < c->nnames; i++) {
        int flags = 0;
        if (ic < c->ncls && c->cls[ic] == c->names[i]) flags |= 1, ic++;
        if (jf < c->nfun && c->fun[jf] == c->names[i]) flags |= 2, jf++;
        buf_addc(&b, (char)flags);
        buf_add(&b, c->names[i], strlen(c->names[i]) + 1);
    }
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_exec(w, "CREATE TABLE IF NOT EXISTS act_names(id INTEGER PRIMARY KEY CHECK (id = 1), "
                             "stamp TEXT NOT NULL, names BLOB NOT NULL)", NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(w, "INSERT OR REPLACE INTO act_names(id, stamp, names) VALUES(1, ?1, ?2)", -1, &st,
                                NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, stamp, -1, SQLITE_STATIC);
        sqlite3_bind_blob64(st, 2, b.len ? b.data : "", b.len, SQLITE_STATIC);
        ok = sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    buf_free(&b);
    return ok ? 0 : -1;
}

/* Stores c's names under stamp when the index still has that stamp. */
static void names_save(sqlite3 *db, const char *stamp, const struct action_cache *c)
{
    sqlite3 *w = sqlx_writer_open(db);
    if (!w) return;
    char now[64];
    if (sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) {
        int ok = names_stamp(w, now) == 0 && !strcmp(now, stamp) && names_write_on(w, stamp, c) == 0;
        sqlite3_exec(w, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    }
    sqlx_writer_close(db, w);
}

int action_names_store_on(sqlite3 *w, char *err, size_t errlen)
{
    struct action_cache c = {0};
    char stamp[64];
    names_query(w, &c);
    int rc = names_stamp(w, stamp) == 0 && names_write_on(w, stamp, &c) == 0 ? 0 : -1;
    if (rc) snprintf(err, errlen, "cannot store the symbol names: %s", sqlite3_errmsg(w));
    cache_clear(&c);
    return rc;
}

const char *const *action_cache_names(struct action_ctx *ctx, int which, size_t *n)
{
    struct action_cache *c = cache_of(ctx);
    if (!c->names_built) {
        c->names_built = 1;
        /* the stamp and the names from one snapshot */
        int own = sqlite3_get_autocommit(ctx->db) && sqlite3_exec(ctx->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
        char stamp[64];
        int stamped = names_stamp(ctx->db, stamp) == 0;
        int loaded = stamped && names_load(ctx->db, stamp, c);
        if (!loaded) names_query(ctx->db, c);
        if (own) sqlite3_exec(ctx->db, "COMMIT", NULL, NULL, NULL);
        if (stamped && !loaded) {
            names_save(ctx->db, stamp, c);
            /* this connection's own write must not drop what it just read */
            c->data_version = sqlx_data_version(ctx->db);
            c->changes = sqlite3_total_changes(ctx->db);
        }
    }
    switch (which) {
    case ACTION_NAMES_CLASSES: *n = c->ncls; return (const char *const *)c->cls;
    case ACTION_NAMES_FUNCTIONS: *n = c->nfun; return (const char *const *)c->fun;
    default: *n = c->nnames; return (const char *const *)c->names;
    }
}

/* 1 when name[0..n) is, in any case, the last component of the repository's
 * root, or a top-level package of it as written or in lower case: a path
 * "NAME/__init__.py" or "src/NAME/__init__.py" among the indexed files. */
static int names_project(struct action_ctx *ctx, const char *name, size_t n)
{
    const char *root = ctx->repo_root;
    if (root) {
        size_t rl = strlen(root);
        while (rl > 1 && root[rl - 1] == '/') rl--;
        size_t b = rl;
        while (b > 0 && root[b - 1] != '/') b--;
        if (rl - b == n && !strncasecmp(root + b, name, n)) return 1;
    }
    sqlite3_stmt *st;
    /* A directory indexed that is itself a package (an installed tree such
     * as dist-packages/sympy) is the project: its subpackages are its parts
     * (`simplify`, `solvers`), not its name. */
    if (!ctx->db || sqlite3_prepare_v2(ctx->db, "SELECT 1 FROM files WHERE path IN (?1 || '/__init__.py', "
                                               "'src/' || ?1 || '/__init__.py') AND NOT EXISTS (SELECT 1 FROM files "
                                               "WHERE path = '__init__.py') LIMIT 1",
                                       -1, &st, NULL) != SQLITE_OK)
        return 0;
    char *lower = xstrndup(name, n);
    for (char *p = lower; *p; p++) *p = (char)tolower((unsigned char)*p);
    int found = 0;
    for (int k = 0; k < 2 && !found; k++) {
        sqlite3_bind_text(st, 1, k ? lower : name, (int)n, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    free(lower);
    return found;
}

int action_index_defines(void *ctx, const char *name, size_t n, int which)
{
    if (which == QPARSE_NAMES_PROJECT) return names_project(ctx, name, n);
    size_t nn = 0;
    const char *const *v = action_cache_names(ctx, which == QPARSE_NAMES_CLASSES     ? ACTION_NAMES_CLASSES
                                                   : which == QPARSE_NAMES_FUNCTIONS ? ACTION_NAMES_FUNCTIONS
                                                                                     : ACTION_NAMES_ALL,
                                              &nn);
    size_t lo = 0, hi = nn;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(v[mid], name, n);
        if (c == 0 && v[mid][n]) c = 1;
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

const char *const *action_cache_paths(struct action_ctx *ctx, size_t *n)
{
    struct action_cache *c = cache_of(ctx);
    if (!c->paths_built) {
        c->paths_built = 1;
        sqlite3_stmt *st;
        size_t cap = 0;
        if (sqlite3_prepare_v2(ctx->db, "SELECT path FROM files ORDER BY path", -1, &st, NULL) == SQLITE_OK) {
            while (sqlite3_step(st) == SQLITE_ROW) {
                ARRAY_GROW(c->paths, c->npaths, cap, 256);
                c->paths[c->npaths++] = xstrdup((const char *)sqlite3_column_text(st, 0));
            }
            sqlite3_finalize(st);
        }
    }
    *n = c->npaths;
    return (const char *const *)c->paths;
}

static int is_wordc(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* isspace and is_wordc of every byte, taken once (the locale is set before
 * any search): normalising the whole index's text calls them per byte. */
enum { WS_SPACE = 1, WS_WORD = 2 };
static unsigned char ws_class[256];
static pthread_once_t ws_once = PTHREAD_ONCE_INIT;

static void ws_class_init(void)
{
    for (int c = 0; c < 256; c++)
        ws_class[c] = (unsigned char)((isspace(c) ? WS_SPACE : 0) | (is_wordc((unsigned char)c) ? WS_WORD : 0));
}

size_t action_normalize_ws(const char *in, size_t len, char *out, int *line_at, int nlines)
{
    size_t o = 0;
    int line = 0, pending_space = 0;
    pthread_once(&ws_once, ws_class_init);
    if (line_at && nlines > 0) line_at[0] = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '\n') {
            line++;
            if (line_at && line < nlines) line_at[line] = (int)o;
            pending_space = 1;
            continue;
        }
        if (ws_class[c] & WS_SPACE) { pending_space = 1; continue; }
        if (pending_space && o > 0 && (ws_class[(unsigned char)out[o - 1]] & WS_WORD) && (ws_class[c] & WS_WORD))
            out[o++] = ' ';
        pending_space = 0;
        out[o++] = (char)c;
    }
    /* out is not NUL-terminated here: the caller sized it and knows o */
    return o;
}

static int norm_key_cmp(const void *x, const void *y)
{
    const struct norm_key *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

const struct action_normtext *action_cache_normtext(struct action_ctx *ctx, size_t *n)
{
    struct action_cache *c = cache_of(ctx);
    if (!c->norm_built) {
        c->norm_built = 1;
        size_t np;
        const char *const *paths = action_cache_paths(ctx, &np);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(ctx->db, "SELECT id, path, drqa_text(ztext, tlen) FROM files ORDER BY path", -1, &st,
                               NULL) == SQLITE_OK) {
            c->norm = xcalloc(np ? np : 1, sizeof *c->norm);
            /* every file's text and lines in two blocks; offsets until they stop growing */
            size_t *at = xmalloc((np ? np : 1) * 2 * sizeof *at);
            size_t ntext = 0, ntextcap = 0, nline = 0, nlinecap = 0;
            size_t pi = 0;
            struct text_feed feed;
            struct feed_item it;
            int read_all = 1;
            text_feed_start(&feed, st);
            while (text_feed_next(&feed, &it)) {
                const char *path = it.path, *text = it.text;
                size_t len = it.len;
                while (pi < np && strcmp(paths[pi], path) != 0) pi++;
                if (pi == np || c->nnorm == np) {
                    free(it.path);
                    free(it.text);
                    read_all = 0;
                    break;
                }
                struct action_normtext *t = &c->norm[c->nnorm++];
                t->file_id = it.id;
                t->path = paths[pi];
                int lines = 1;
                for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
                t->nlines = lines;
                if (ntext + len + 1 > ntextcap) {
                    ntextcap = xgrow_cap(ntextcap, ntext + len, 1 << 16);
                    c->norm_text = xrealloc(c->norm_text, ntextcap);
                }
                if (nline + (size_t)lines > nlinecap) {
                    nlinecap = xgrow_cap(nlinecap, nline + (size_t)lines - 1, 1 << 14);
                    c->norm_lines = xreallocarray(c->norm_lines, nlinecap, sizeof *c->norm_lines);
                }
                at[2 * (c->nnorm - 1)] = ntext;
                at[2 * (c->nnorm - 1) + 1] = nline;
                t->nlen = action_normalize_ws(text, len, c->norm_text + ntext, c->norm_lines + nline, lines);
                c->norm_text[ntext + t->nlen] = 0;
                ntext += t->nlen + 1;
                nline += (size_t)lines;
                free(it.path);
                free(it.text);
            }
            char *ferr = NULL;
            if (text_feed_end(&feed, read_all, &ferr) != SQLITE_DONE) {
                /* a text that cannot be read: no scan passes for one of the whole index */
                c->norm_failed = ferr ? ferr : xstrdup("a file's text could not be read");
                c->nnorm = 0;
            }
            for (size_t i = 0; i < c->nnorm; i++) {
                c->norm[i].norm = c->norm_text + at[2 * i];
                c->norm[i].line_at = c->norm_lines + at[2 * i + 1];
            }
            free(at);
            c->norm_by_id = xmalloc((c->nnorm ? c->nnorm : 1) * sizeof *c->norm_by_id);
            for (size_t i = 0; i < c->nnorm; i++) {
                c->norm_by_id[i].id = c->norm[i].file_id;
                c->norm_by_id[i].idx = i;
            }
            qsort(c->norm_by_id, c->nnorm, sizeof *c->norm_by_id, norm_key_cmp);
        } else {
            c->norm_failed = xstrdup(sqlite3_errmsg(ctx->db));
        }
    }
    if (c->norm_failed) action_read_failed(ctx, "%s", c->norm_failed);
    *n = c->nnorm;
    return c->norm;
}

int action_cache_has_normtext(struct action_ctx *ctx)
{
    return cache_of(ctx)->norm_built;
}

const struct action_normtext *action_cache_normtext_of(struct action_ctx *ctx, long long file_id)
{
    size_t n;
    const struct action_normtext *all = action_cache_normtext(ctx, &n);
    const struct norm_key *by = ctx->cache->norm_by_id;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (by[mid].id < file_id) lo = mid + 1; else hi = mid;
    }
    return lo < n && by[lo].id == file_id ? &all[by[lo].idx] : NULL;
}

/* ------------------------------------------------------------------- paths */

int action_resolve_path(struct action_ctx *ctx, const char *given, char **rel, char *err, size_t errlen)
{
    if (!ctx->repo_root) {
        snprintf(err, errlen, "no repository root is known; cannot resolve '%s'", given);
        return ACTION_EFAIL;
    }
    return pathsafe_resolve(ctx->repo_root, given, rel, err, errlen) ? ACTION_EINVAL : ACTION_OK;
}

static int hit_by_score(const void *x, const void *y)
{
    const struct fuzzy_hit *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

size_t action_suggest_paths(struct action_ctx *ctx, const char *given, size_t k, struct buf *b)
{
    size_t np;
    const char *const *paths = action_cache_paths(ctx, &np);
    if (!np || !k) return 0;
    const char *gb = strrchr(given, '/');
    gb = gb ? gb + 1 : given;
    struct fuzzy_hit *hits = xmalloc(np * sizeof *hits);
    size_t nh = 0;
    /* each path scores the better of whole-path and basename similarity */
    for (size_t i = 0; i < np; i++) {
        const char *pb = strrchr(paths[i], '/');
        pb = pb ? pb + 1 : paths[i];
        double s = fuzzy_score(given, paths[i]);
        double s2 = *gb ? fuzzy_score(gb, pb) * 0.95 : 0;
        if (s2 > s) s = s2;
        if (s > 0) hits[nh++] = (struct fuzzy_hit){i, s};
    }
    qsort(hits, nh, sizeof *hits, hit_by_score);
    if (nh > k) nh = k;
    if (nh == 0) {
        /* nothing similar: the files of the deepest directory that exists */
        char *dir = xstrdup(given);
        char *slash;
        while ((slash = strrchr(dir, '/'))) {
            *slash = 0;
            size_t dl = strlen(dir);
            for (size_t i = 0; i < np && nh < k; i++)
                if (strncmp(paths[i], dir, dl) == 0 && paths[i][dl] == '/') hits[nh++] = (struct fuzzy_hit){i, 0};
            if (nh) break;
        }
        free(dir);
    }
    for (size_t i = 0; i < nh; i++) buf_printf(b, "%s%s", i ? ", " : "", paths[hits[i].index]);
    free(hits);
    return nh;
}
