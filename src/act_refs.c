/*
 * act_refs: FindReferences, the structural navigation the paper's failure
 * case F3 lacked ("did not follow imports"): who calls a symbol, who imports
 * it and which classes inherit from it, read from the edges and imports tables.
 * Resolved edges (dst_id = the symbol) are certain; edges the indexer could not
 * resolve are matched by the callee's last name and labelled unresolved, since
 * they may name another symbol of the same name. Imports through one level of
 * package re-export ('from pkg import App' where pkg/__init__.py imports App
 * from pkg/app.py) count as importers too.
 */
#include "action.h"
#include "fpattern.h"
#include "fuzzy.h"
#include "index.h"
#include "sqlx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ref_kind { REF_CALLER, REF_SUBCLASS, REF_IMPORTER };
static const char *const ref_names[] = {"caller", "subclass", "importer"};

struct ref {
    enum ref_kind kind;
    int resolved;
    long long file_id, src_id;
    char *path, *target, *in;   /* in: qualname of the enclosing symbol or NULL */
    int line;
    int sites;                  /* call sites in the caller (edges.n); 1 otherwise */
};

struct refs {
    struct ref *v;
    size_t n, cap;
};

static void refs_free(struct refs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].path);
        free(r->v[i].target);
        free(r->v[i].in);
    }
    free(r->v);
}

static int seen(const struct refs *r, enum ref_kind k, long long file_id, int line, const char *target)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].kind == k && r->v[i].file_id == file_id && r->v[i].line == line &&
            strcmp(r->v[i].target ? r->v[i].target : "", target ? target : "") == 0)
            return 1;
    return 0;
}

/* Runs sql (bound: ?1 int64, ?2 text) returning (file_id, path, line, target,
 * src_id, in-qualname, sites) rows and appends them. */
static int collect(struct action_ctx *ctx, const char *sql, long long i1, const char *t2, enum ref_kind kind,
                   int resolved, const char *pattern, struct refs *r)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    sqlite3_bind_int64(st, 1, i1);
    if (t2) sqlite3_bind_text(st, 2, t2, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 1);
        const char *target = (const char *)sqlite3_column_text(st, 3);
        long long fid = sqlite3_column_int64(st, 0);
        int line = sqlite3_column_int(st, 2);
        if (!fpattern_match(pattern, path) || seen(r, kind, fid, line, target)) continue;
        ARRAY_GROW(r->v, r->n, r->cap, 16);
        struct ref *x = &r->v[r->n++];
        x->kind = kind;
        x->resolved = resolved;
        x->file_id = fid;
        x->path = xstrdup(path);
        x->line = line;
        x->target = target ? xstrdup(target) : NULL;
        x->src_id = sqlite3_column_int64(st, 4);
        x->in = sqlx_col_dup(st, 5);
        x->sites = sqlite3_column_int(st, 6);
        if (x->sites < 1) x->sites = 1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* edges.kind as stored (index.h: INDEX_EDGE_CALLS, INDEX_EDGE_INHERITS) */
#define EDGE_CALLS "0"
#define EDGE_INHERITS "1"
_Static_assert(INDEX_EDGE_CALLS == 0 && INDEX_EDGE_INHERITS == 1, "EDGE_CALLS and EDGE_INHERITS are edges.kind");
#define EDGE_ROWS \
    "SELECT e.src_file, f.path, e.line, coalesce(e.target, e.target_name), e.src_id, s.qualname, " \
    "coalesce(e.n, 1) FROM edges e " \
    "JOIN files f ON f.id = e.src_file LEFT JOIN symbols s ON s.id = e.src_id "
#define IMPORT_ROWS \
    "SELECT i.file_id, f.path, i.line, " \
    "CASE WHEN i.level > 0 THEN 'from ' || substr('..........', 1, i.level) || i.module || ' import ' || i.name " \
    "ELSE 'from ' || i.module || ' import ' || i.name END || COALESCE(' as ' || i.alias, ''), " \
    "NULL, NULL, 1 FROM imports i JOIN files f ON f.id = i.file_id "

static int ref_cmp(const void *x, const void *y)
{
    const struct ref *a = x, *b = y;
    if (a->kind != b->kind) return (int)a->kind - (int)b->kind;
    if (a->resolved != b->resolved) return b->resolved - a->resolved;
    int c = strcmp(a->path, b->path);
    return c ? c : a->line - b->line;
}

static int gather(struct action_ctx *ctx, const struct action_symbol *defs, int ndefs, const char *name,
                  const char *pattern, struct refs *r)
{
    int rc = 0;
    int any_class = 0;
    for (int i = 0; i < ndefs && !rc; i++) {
        const struct action_symbol *d = &defs[i];
        int is_class = strcmp(d->kind, "class") == 0;
        any_class |= is_class;
        rc |= collect(ctx, EDGE_ROWS "WHERE e.kind = " EDGE_CALLS " AND e.dst_id = ?1", d->id, NULL, REF_CALLER, 1,
                      pattern, r);
        if (is_class)
            rc |= collect(ctx, EDGE_ROWS "WHERE e.kind = " EDGE_INHERITS " AND e.dst_id = ?1", d->id, NULL, REF_SUBCLASS, 1,
                          pattern, r);
        if (d->parent_id == 0) {
            /* direct importers, then importers through a re-exporting module */
            rc |= collect(ctx, IMPORT_ROWS "WHERE i.resolved_file_id = ?1 AND i.name = ?2", d->file_id, d->name,
                          REF_IMPORTER, 1, pattern, r);
            rc |= collect(ctx, IMPORT_ROWS "WHERE i.name = ?2 AND i.resolved_file_id IN (SELECT file_id FROM "
                          "imports WHERE resolved_file_id = ?1 AND name = ?2) AND i.file_id != ?1",
                          d->file_id, d->name, REF_IMPORTER, 1, pattern, r);
        }
    }
    /* edges the indexer left unresolved that end in the same name (calls of a
     * class are instantiations, so they count for classes too) */
    if (!rc)
        rc |= collect(ctx, EDGE_ROWS "WHERE e.kind = " EDGE_CALLS " AND e.dst_id IS NULL AND e.target_name = ?2", 0, name,
                      REF_CALLER, 0, pattern, r);
    if (!rc && (any_class || ndefs == 0))
        rc |= collect(ctx, EDGE_ROWS "WHERE e.kind = " EDGE_INHERITS " AND e.dst_id IS NULL AND e.target_name = ?2", 0,
                      name, REF_SUBCLASS, 0, pattern, r);
    return rc;
}

int action_find_references(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err,
                           size_t errlen)
{
    const char *symbol = action_arg_str(args, "symbol");
    const char *pattern = action_arg_str(args, "file_pattern");
    struct action_symbol *defs = NULL;
    const char *how;
    int n = action_lookup_symbols(ctx, symbol, "'class','function','method'", NULL, &defs, &how);
    if (n < 0) {
        snprintf(err, errlen, "FindReferences: cannot read symbols: %s", sqlite3_errmsg(ctx->db));
        return ACTION_EFAIL;
    }
    const char *dot = strrchr(symbol, '.');
    const char *name = n > 0 ? defs[0].name : dot ? dot + 1 : symbol;
    struct refs r = {NULL, 0, 0};
    if (gather(ctx, defs, n, name, pattern, &r)) {
        snprintf(err, errlen, "FindReferences: cannot read edges: %s", sqlite3_errmsg(ctx->db));
        for (int i = 0; i < n; i++) action_symbol_free(&defs[i]);
        free(defs);
        refs_free(&r);
        return ACTION_EFAIL;
    }
    if (r.n) qsort(r.v, r.n, sizeof *r.v, ref_cmp);   /* qsort(NULL, 0) is undefined */

    if (n == 0) {
        size_t nn;
        const char *const *names = action_cache_names(ctx, ACTION_NAMES_ALL, &nn);
        struct fuzzy_hit hits[5];
        size_t nh = fuzzy_best(name, names, nn, 5, hits);
        struct buf b = BUF_INIT;
        for (size_t i = 0; i < nh; i++) buf_printf(&b, "%s%s", i ? ", " : "", names[hits[i].index]);
        action_result_note(out, "no definition of '%s' in the index%s%s; only references by name are listed",
                           symbol, nh ? "; did you mean: " : "", buf_str(&b));
        buf_free(&b);
    } else {
        buf_printf(&out->listing, "References to %s:\n", symbol);
        for (int i = 0; i < n; i++)
            buf_printf(&out->listing, "  defined: %s %s at %s:%d-%d\n", defs[i].kind, defs[i].qualname,
                       defs[i].path, defs[i].start_line, defs[i].end_line);
        if (n > 1)
            action_result_note(out, "'%s' has %d definitions; references to all of them are listed", symbol, n);
    }
    size_t limit = ctx->max_results > 0 ? (size_t)ctx->max_results : ACTION_DEFAULT_MAX_RESULTS;
    size_t counts[3][2] = {{0}}, sites[3][2] = {{0}};
    for (size_t i = 0; i < r.n; i++) {
        counts[r.v[i].kind][r.v[i].resolved]++;
        sites[r.v[i].kind][r.v[i].resolved] += (size_t)r.v[i].sites;
    }
    struct action_file f = {0};
    size_t shown_ev = 0;
    for (size_t i = 0; i < r.n; i++) {
        struct ref *x = &r.v[i];
        if (i == 0 || x->kind != r.v[i - 1].kind || x->resolved != r.v[i - 1].resolved) {
            size_t nk = counts[x->kind][x->resolved], ns = sites[x->kind][x->resolved];
            buf_printf(&out->listing, "%s%s (%zu", ref_names[x->kind], x->kind == REF_SUBCLASS ? "es" : "s", nk);
            /* a caller is listed once, at its first call of the symbol */
            if (ns != nk) buf_printf(&out->listing, "; %zu call sites", ns);
            buf_printf(&out->listing, ")%s:\n", x->resolved ? "" : ", unresolved, matched by name only");
        }
        buf_printf(&out->listing, "  %s:%d", x->path, x->line);
        if (x->in) buf_printf(&out->listing, "  in %s", x->in);
        if (x->target) buf_printf(&out->listing, "  %s", x->target);
        if (x->sites > 1) buf_printf(&out->listing, "  (%d calls, the first shown)", x->sites);
        buf_addc(&out->listing, '\n');
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", ref_names[x->kind]);
        cJSON_AddBoolToObject(o, "resolved", x->resolved);
        cJSON_AddStringToObject(o, "path", x->path);
        cJSON_AddNumberToObject(o, "line", x->line);
        if (x->in) cJSON_AddStringToObject(o, "in", x->in);
        if (x->target) cJSON_AddStringToObject(o, "target", x->target);
        if (x->kind == REF_CALLER) cJSON_AddNumberToObject(o, "calls", x->sites);
        cJSON_AddItemToArray(out->items, o);
        if (shown_ev >= limit) continue;
        if (f.id != x->file_id) {
            action_file_free(&f);
            if (action_file_load(ctx, NULL, x->file_id, &f) != 1) continue;
        }
        char *text = action_file_lines(&f, x->line, x->line);
        char *label = xasprintf("%s%s%s%s", ref_names[x->kind], x->resolved ? "" : " (unresolved)",
                                x->in ? " in " : "", x->in ? x->in : "");
        evidence_add(&out->ev, f.path, x->line, x->line, text, label, x->resolved ? 1.0 : 0.5);
        shown_ev++;
        free(label);
        free(text);
    }
    action_file_free(&f);
    if (r.n > shown_ev) {
        out->truncated = 1;
        action_result_note(out, "%zu references; the code of the first %zu is shown, all are listed", r.n, shown_ev);
    }
    if (r.n == 0)
        action_result_note(out, "no callers, importers or subclasses of '%s' were found in the index%s%s%s", symbol,
                           pattern ? " (file_pattern '" : "", pattern ? pattern : "", pattern ? "')" : "");
    for (int i = 0; i < n; i++) action_symbol_free(&defs[i]);
    free(defs);
    refs_free(&r);
    (void)how;
    return ACTION_OK;
}
