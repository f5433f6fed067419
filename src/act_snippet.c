/*
 * act_snippet: FindCodeSnippet, exact code search that ignores whitespace
 * differences: line breaks, indentation, spaces around punctuation. Both the
 * snippet and the file text are normalised the same way (action_normalize_ws:
 * whitespace runs vanish except one space between two word characters) and
 * compared with memmem; a table of line starts maps each hit back to its exact
 * line range. Candidates come from the FTS5 index (the body terms of the
 * snippet, all required) so a single call reads only a few files; when the
 * prefilter finds nothing verifiable, every file is scanned (its normalised
 * text is cached per connection, so later full scans cost one memmem pass).
 * A one-word snippet has no inner word: the files where its parts are words
 * of their own are searched first, and the result says so.
 */
#include "action.h"
#include "fpattern.h"
#include "tok.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNIPPET_FTS_TERMS 8
#define SNIPPET_CACHE_AT 24     /* more candidate files than this: scan the cached normalised text */

struct occ {
    long long file_id;
    const char *path;     /* owned by the cache or by the candidate list */
    int start, end;
};

struct occs {
    struct occ *v;
    size_t n, cap;
    size_t total;         /* also those past the limit */
};

static int line_of(const int *line_at, int nlines, size_t off)
{
    int lo = 0, hi = nlines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if ((size_t)line_at[mid] <= off) lo = mid; else hi = mid - 1;
    }
    return lo + 1;
}

static void scan(const struct action_normtext *t, const char *needle, size_t nl, struct occs *o, size_t limit)
{
    const char *hay = t->norm, *end = t->norm + t->nlen;
    while (hay < end) {
        const char *hit = memmem(hay, (size_t)(end - hay), needle, nl);
        if (!hit) break;
        size_t off = (size_t)(hit - t->norm);
        o->total++;
        if (o->n < limit) {
            ARRAY_GROW(o->v, o->n, o->cap, 16);
            struct occ *x = &o->v[o->n++];
            x->file_id = t->file_id;
            x->path = t->path;
            x->start = line_of(t->line_at, t->nlines, off);
            x->end = line_of(t->line_at, t->nlines, off + nl - 1);
        }
        hay = hit + 1;
    }
}

/* FTS expression requiring the snippet's whole-word terms in the body column;
 * words cut by the snippet's edges may be partial identifiers, so they are left
 * out. Returns 0 when no usable term remains. */
struct termset { char *t[SNIPPET_FTS_TERMS]; size_t n; };

static void collect_term(const char *term, size_t len, void *ctx)
{
    struct termset *ts = ctx;
    for (size_t i = 0; i < ts->n; i++)
        if (strlen(ts->t[i]) == len && memcmp(ts->t[i], term, len) == 0) return;
    if (ts->n < SNIPPET_FTS_TERMS) { ts->t[ts->n++] = xstrndup(term, len); return; }
    /* keep the longest terms: they are the rarest on average */
    size_t shortest = 0;
    for (size_t i = 1; i < ts->n; i++)
        if (strlen(ts->t[i]) < strlen(ts->t[shortest])) shortest = i;
    if (strlen(ts->t[shortest]) < len) {
        free(ts->t[shortest]);
        ts->t[shortest] = xstrndup(term, len);
    }
}

static int is_w(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* 1 when snip, spaces aside, is one word ("DEFAULT_TIMEOUT", "elper"). */
static int one_word(const char *snip)
{
    while (isspace((unsigned char)*snip)) snip++;
    if (!*snip) return 0;
    while (is_w((unsigned char)*snip)) snip++;
    while (isspace((unsigned char)*snip)) snip++;
    return !*snip;
}

/* The FTS query for snip's terms: those of its inner words, since its first
 * and last words may be parts of longer ones in the code; with whole, those
 * of every word. NULL when there are none. */
static char *fts_query(const char *snip, int whole)
{
    size_t n = strlen(snip);
    size_t a = 0, b = n;
    while (a < n && isspace((unsigned char)snip[a])) a++;
    while (b > a && isspace((unsigned char)snip[b - 1])) b--;
    if (!whole && a < b && is_w((unsigned char)snip[a])) while (a < b && is_w((unsigned char)snip[a])) a++;
    if (!whole && b > a && is_w((unsigned char)snip[b - 1])) while (b > a && is_w((unsigned char)snip[b - 1])) b--;
    if (a >= b) return NULL;
    struct termset ts = {{0}, 0};
    tok_each(snip + a, b - a, 0, collect_term, &ts);
    if (!ts.n) return NULL;
    struct buf q = BUF_INIT;
    buf_adds(&q, "body : (");
    for (size_t i = 0; i < ts.n; i++) {
        buf_printf(&q, "%s\"", i ? " AND " : "");
        for (const char *p = ts.t[i]; *p; p++) {
            if (*p == '"') buf_addc(&q, '"');
            buf_addc(&q, *p);
        }
        buf_addc(&q, '"');
        free(ts.t[i]);
    }
    buf_addc(&q, ')');
    return buf_take(&q);
}

/* Candidate files from FTS. Few candidates are normalised on the fly; many,
 * or any once the connection holds the normalised text of the whole index,
 * are scanned from that cache. Returns the number of candidate files (-1 on a
 * database error). */
static int search_fts(struct action_ctx *ctx, const char *snip, int whole, const char *needle, size_t nl,
                      const char *pattern, struct occs *o, size_t limit, struct action_normtext **owned, size_t *nowned)
{
    char *q = fts_query(snip, whole);
    if (!q) return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db,
            "SELECT f.id, f.path FROM files f WHERE f.id IN (SELECT c.file_id FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?) ORDER BY f.path", -1, &st,
            NULL) != SQLITE_OK) {
        free(q);
        return -1;
    }
    sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
    long long *ids = NULL;
    char **paths = NULL;
    size_t n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 1);
        if (!fpattern_match(pattern, path)) continue;
        ids = xreallocarray(ids, n + 1, sizeof *ids);
        paths = xreallocarray(paths, n + 1, sizeof *paths);
        ids[n] = sqlite3_column_int64(st, 0);
        paths[n++] = xstrdup(path);
    }
    sqlite3_finalize(st);
    free(q);
    int use_cache = action_cache_has_normtext(ctx) || n > SNIPPET_CACHE_AT;
    sqlite3_stmt *tx = NULL;
    if (rc == SQLITE_DONE && !use_cache &&
        sqlite3_prepare_v2(ctx->db, "SELECT drqa_file_text(id, hash, ztext, tlen) FROM files WHERE id = ?", -1, &tx,
                           NULL) != SQLITE_OK)
        rc = SQLITE_ERROR;
    for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
        if (use_cache) {
            const struct action_normtext *t = action_cache_normtext_of(ctx, ids[i]);
            if (t) scan(t, needle, nl, o, limit);
            continue;
        }
        sqlite3_reset(tx);
        sqlite3_bind_int64(tx, 1, ids[i]);
        int trc = sqlite3_step(tx);
        if (trc == SQLITE_DONE) continue;
        if (trc != SQLITE_ROW) {   /* a text that cannot be read: the caller reports sqlite's message */
            rc = trc;
            break;
        }
        size_t len = (size_t)sqlite3_column_bytes(tx, 0);
        const char *text = (const char *)sqlite3_column_text(tx, 0);
        struct action_normtext t = {0};
        t.file_id = ids[i];
        int lines = 1;
        for (size_t k = 0; k < len; k++) lines += text[k] == '\n';
        t.nlines = lines;
        t.line_at = xmalloc((size_t)lines * sizeof *t.line_at);
        t.norm = xmalloc(len + 1);
        t.nlen = action_normalize_ws(text, len, t.norm, t.line_at, lines);
        t.path = paths[i];
        paths[i] = NULL;   /* owned by the normtext now */
        *owned = xreallocarray(*owned, *nowned + 1, sizeof **owned);
        (*owned)[(*nowned)++] = t;
        scan(&(*owned)[*nowned - 1], needle, nl, o, limit);
    }
    sqlite3_finalize(tx);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    free(ids);
    return rc == SQLITE_DONE ? (int)n : -1;
}

static void search_all(struct action_ctx *ctx, const char *needle, size_t nl, const char *pattern, struct occs *o,
                       size_t limit)
{
    size_t n;
    const struct action_normtext *all = action_cache_normtext(ctx, &n);
    for (size_t i = 0; i < n; i++)
        if (fpattern_match(pattern, all[i].path)) scan(&all[i], needle, nl, o, limit);
}

static int occ_cmp(const void *x, const void *y)
{
    const struct occ *a = x, *b = y;
    int r = strcmp(a->path, b->path);
    return r ? r : a->start - b->start;
}

int action_find_snippet(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err,
                        size_t errlen)
{
    const char *snip = action_arg_str(args, "code_snippet");
    const char *pattern = action_arg_str(args, "file_pattern");
    size_t sl = strlen(snip);
    char *needle = xmalloc(sl + 1);
    size_t nl = action_normalize_ws(snip, sl, needle, NULL, 0);
    needle[nl] = 0;
    if (nl == 0) {
        free(needle);
        snprintf(err, errlen, "FindCodeSnippet: field 'code_snippet' holds only whitespace; give some code");
        return ACTION_EINVAL;
    }
    size_t limit = ctx->max_results > 0 ? (size_t)ctx->max_results : ACTION_DEFAULT_MAX_RESULTS;
    struct occs o = {NULL, 0, 0, 0};
    struct action_normtext *owned = NULL;
    size_t nowned = 0;
    int dropped_pattern = 0, whole_words = 0, r = ACTION_OK;
    for (int pass = 0; pass < 2 && o.total == 0; pass++) {
        const char *pat = pass == 0 ? pattern : NULL;
        if (pass == 1 && !(pattern && *pattern)) break;
        /* One word has no inner word to look up: the files holding all its
         * parts as words of their own are searched, and only when none holds
         * it every file is (a part of a longer word, "elper"). */
        int whole = one_word(snip);
        int nf = search_fts(ctx, snip, whole, needle, nl, pat, &o, limit, &owned, &nowned);
        if (whole && nf > 0 && o.total) whole_words = 1;
        if (nf < 0) {
            snprintf(err, errlen, "FindCodeSnippet: cannot search the index: %s", sqlite3_errmsg(ctx->db));
            r = ACTION_EFAIL;
            goto done;
        }
        if (o.total == 0) search_all(ctx, needle, nl, pat, &o, limit);
        if (pass == 1 && o.total) dropped_pattern = 1;
    }
    if (dropped_pattern)
        action_result_note(out, "no results with file_pattern '%s'; showing results without it", pattern);
    if (whole_words)
        action_result_note(out, "one word: looked for in the files where its parts are words of their own; "
                           "inside longer names (a prefix or suffix joined to it) it was not looked for");
    if (o.n) qsort(o.v, o.n, sizeof *o.v, occ_cmp);
    struct action_file f = {0};
    for (size_t i = 0; i < o.n; i++) {
        struct occ *x = &o.v[i];
        if (f.id != x->file_id) {
            action_file_free(&f);
            if (action_file_load(ctx, NULL, x->file_id, &f) != 1) continue;
        }
        char *text = action_file_lines(&f, x->start, x->end);
        int verbatim = strstr(text, snip) != NULL;
        struct action_symbol s;
        char *label = NULL;
        if (action_symbol_at(ctx, f.id, x->start, "'function','method','class'", &s)) {
            label = xasprintf("in %s", s.signature ? s.signature : s.qualname);
            cJSON *o2 = cJSON_CreateObject();
            cJSON_AddStringToObject(o2, "path", f.path);
            cJSON_AddNumberToObject(o2, "start_line", x->start);
            cJSON_AddNumberToObject(o2, "end_line", x->end);
            cJSON_AddStringToObject(o2, "match", verbatim ? "exact" : "whitespace-insensitive");
            cJSON_AddStringToObject(o2, "in", s.qualname);
            cJSON_AddItemToArray(out->items, o2);
            action_symbol_free(&s);
        } else {
            cJSON *o2 = cJSON_CreateObject();
            cJSON_AddStringToObject(o2, "path", f.path);
            cJSON_AddNumberToObject(o2, "start_line", x->start);
            cJSON_AddNumberToObject(o2, "end_line", x->end);
            cJSON_AddStringToObject(o2, "match", verbatim ? "exact" : "whitespace-insensitive");
            cJSON_AddItemToArray(out->items, o2);
        }
        evidence_add(&out->ev, f.path, x->start, x->end, text, label, 1.0);
        free(label);
        free(text);
    }
    action_file_free(&f);
    if (o.total > o.n) {
        out->truncated = 1;
        action_result_note(out, "%zu occurrences; the first %zu are shown. Narrow with file_pattern", o.total, o.n);
    }
    if (o.total == 0)
        action_result_note(out, "the snippet occurs nowhere in the index%s%s%s (whitespace and line breaks are "
                           "ignored); check it or search a shorter part", pattern && *pattern ? " (also without file_pattern '" : "",
                           pattern && *pattern ? pattern : "", pattern && *pattern ? "')" : "");
done:
    for (size_t i = 0; i < nowned; i++) {
        free(owned[i].norm);
        free(owned[i].line_at);
        free((char *)owned[i].path);
    }
    free(owned);
    free(o.v);
    free(needle);
    return r;
}
