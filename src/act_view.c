/*
 * act_view: reading the repository through the index. ViewCode shows files,
 * line ranges and definitions with line numbers (a large class as a skeleton
 * unless one of its members is asked for), within a token budget per call and
 * with an explicit "ask for lines X-Y" when cut. Outline lists the definitions
 * of a file or package with their spans; ListFiles lists files with sizes and
 * line counts. Every caller-given path is confined to the repository first
 * (pathsafe) and the text comes from the index's stored file texts, never
 * the live tree.
 */
#include "action.h"
#include "fpattern.h"
#include "fuzzy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define VIEW_SKELETON_LINES 150   /* classes longer than this are shown as a skeleton */
#define VIEW_WINDOW 10            /* 'path:120' without an enclosing definition: +-10 lines */
#define VIEW_DIR_FILES 30
#define LIST_MAX_FILES 500

enum tail_kind { TAIL_NONE, TAIL_RANGE, TAIL_LINE, TAIL_MEMBER };

struct spec {
    char *head;                   /* path or symbol */
    enum tail_kind tail;
    int a, b;                     /* TAIL_RANGE / TAIL_LINE */
    char *member;                 /* TAIL_MEMBER */
};

static int is_ident_dotted(const char *s)
{
    if (!*s) return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || (unsigned char)*p >= 0x80)) return 0;
    return isalpha((unsigned char)*s) || *s == '_' || (unsigned char)*s >= 0x80;
}

/* 'path:10-20', 'path:10', 'path:Class.method', 'path', 'symbol'. Also
 * 'path#L10-L20' and 'path:L10-L20' as models often write them. */
static void spec_parse(const char *in, struct spec *sp)
{
    memset(sp, 0, sizeof *sp);
    while (isspace((unsigned char)*in)) in++;
    size_t n = strlen(in);
    while (n && isspace((unsigned char)in[n - 1])) n--;
    char *s = xstrndup(in, n);
    char *sep = strrchr(s, ':');
    char *hash = strrchr(s, '#');
    if (hash && (!sep || hash > sep)) sep = hash;
    if (sep) {
        const char *t = sep + 1;
        int a = 0, b = 0, da = 0, db = 0;
        const char *p = t;
        if (*p == 'L') p++;
        /* line numbers saturate: a model may write any number of digits */
        while (isdigit((unsigned char)*p)) { a = a > 99999999 ? 999999999 : a * 10 + (*p - '0'); p++; da++; }
        if (*p == '-') {
            p++;
            if (*p == 'L') p++;
            while (isdigit((unsigned char)*p)) { b = b > 99999999 ? 999999999 : b * 10 + (*p - '0'); p++; db++; }
        }
        if (da && !*p && (db || p[-1] != '-')) {
            *sep = 0;
            sp->tail = db ? TAIL_RANGE : TAIL_LINE;
            sp->a = a;
            sp->b = db ? b : a;
        } else if (*sep == ':' && is_ident_dotted(t)) {
            *sep = 0;
            sp->tail = TAIL_MEMBER;
            sp->member = xstrdup(t);
        }
    }
    sp->head = s;
}

static void spec_free(struct spec *sp)
{
    free(sp->head);
    free(sp->member);
}

/* --------------------------------------------------------------- budgeting */

struct budget {
    size_t cap, used;     /* bytes of rendered text (tokens * 4) */
    int exhausted;
};

static size_t span_cost(const struct evidence_span *sp)
{
    size_t lines = 1, w = 2;
    for (int e = sp->end_line; e; e /= 10) w++;
    for (const char *p = sp->text; p && *p; p++) lines += *p == '\n';
    return strlen(sp->path) + 24 + (sp->label ? strlen(sp->label) : 0) + (sp->text ? strlen(sp->text) : 0) +
           lines * w;
}

/* Cuts sp's text so that it costs at most max bytes; returns the first line
 * not shown (0 when nothing was cut). */
static int span_cut(struct evidence_span *sp, size_t max)
{
    if (span_cost(sp) <= max) return 0;
    size_t w = 2;
    for (int e = sp->end_line; e; e /= 10) w++;
    size_t used = strlen(sp->path) + 24 + (sp->label ? strlen(sp->label) : 0);
    int ln = sp->start_line, last_shown = sp->start_line - 1;
    char *s = sp->text, *cut = s;
    while (*s) {
        char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (used + n + w + 1 > max) break;
        used += n + w + 1;
        int a, z;
        if (sp->elided && action_marker_parse(s, n, &a, &z)) ln = z + 1;
        else ln++;
        last_shown = ln - 1;
        cut = s + n;
        if (!nl) break;
        s = nl + 1;
    }
    if (last_shown < sp->start_line) return sp->start_line;
    *cut = 0;
    int first_missing = last_shown + 1;
    sp->end_line = last_shown;
    return first_missing;
}

/* Adds a span within the budget; cuts it or notes it as not shown. */
static void add_span(struct action_result *out, struct budget *bg, const char *path, int start, int end,
                     const char *text, const char *label, int elided)
{
    if (bg->exhausted) {
        action_result_note(out, "not shown (token budget reached): ViewCode %s:%d-%d", path, start, end);
        return;
    }
    struct evidence_span *sp = evidence_add(&out->ev, path, start, end, text, label, 0);
    sp->elided = elided;
    size_t cost = span_cost(sp);
    if (bg->used + cost <= bg->cap) {
        bg->used += cost;
        return;
    }
    int orig_end = end;
    int first_missing = span_cut(sp, bg->cap > bg->used ? bg->cap - bg->used : 0);
    bg->exhausted = 1;
    out->truncated = 1;
    if (first_missing <= start) {
        /* nothing of it fits */
        free(sp->path); free(sp->text); free(sp->label);
        out->ev.n--;
        action_result_note(out, "not shown (token budget reached): ViewCode %s:%d-%d", path, start, orig_end);
        return;
    }
    bg->used = bg->cap;
    action_result_note(out, "truncated at the token budget: lines %d-%d of %s are not shown; "
                       "ViewCode %s:%d-%d to read them", first_missing, orig_end, path, path, first_missing,
                       orig_end);
}

/* --------------------------------------------------------------- ViewCode */

static int is_kind(const struct action_symbol *s, const char *k)
{
    return s->kind && strcmp(s->kind, k) == 0;
}

static char *label_of(const struct action_symbol *s)
{
    if (s->signature && *s->signature) return xstrdup(s->signature);
    return xasprintf("%s %s", s->kind, s->qualname);
}

/* A definition: functions whole, classes whole up to VIEW_SKELETON_LINES. */
static void view_symbol(struct action_ctx *ctx, const struct action_symbol *s, struct action_result *out,
                        struct budget *bg)
{
    struct action_file f;
    if (action_file_load(ctx, NULL, s->file_id, &f) != 1) return;
    int end = s->end_line > f.nlines ? f.nlines : s->end_line;
    char *label = label_of(s);
    if (is_kind(s, "class") && end - s->start_line + 1 > VIEW_SKELETON_LINES) {
        int elided;
        char *text = action_skeleton(ctx, &f, s->start_line, end, &elided);
        add_span(out, bg, f.path, s->start_line, end, text, label, elided);
        action_result_note(out, "class %s has %d lines: shown as a skeleton; ask for '%s:%s.<method>' or a line "
                           "range to read a body", s->qualname, end - s->start_line + 1, f.path, s->qualname);
        free(text);
    } else {
        char *text = action_file_lines(&f, s->start_line, end);
        add_span(out, bg, f.path, s->start_line, end, text, label, 0);
        free(text);
    }
    free(label);
    action_file_free(&f);
}

/* A whole file, its large classes as skeletons. */
static void view_file(struct action_ctx *ctx, const struct action_file *f, struct action_result *out,
                      struct budget *bg)
{
    if (f->nlines == 0) {
        action_result_note(out, "%s is empty", f->path);
        return;
    }
    struct buf b = BUF_INIT;
    int pos = 1, elided = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db,
            "SELECT start_line, end_line FROM symbols WHERE file_id = ? AND kind = 'class' AND "
            "end_line - start_line + 1 > ? ORDER BY start_line", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, f->id);
        sqlite3_bind_int(st, 2, VIEW_SKELETON_LINES);
        while (sqlite3_step(st) == SQLITE_ROW) {
            int s = sqlite3_column_int(st, 0), e = sqlite3_column_int(st, 1);
            if (s < pos) continue;   /* nested in a class already shown as a skeleton */
            if (s > pos) {
                char *t = action_file_lines(f, pos, s - 1);
                if (b.len) buf_addc(&b, '\n');
                buf_adds(&b, t);
                free(t);
            }
            int el;
            char *t = action_skeleton(ctx, f, s, e, &el);
            if (b.len || s > 1) buf_addc(&b, '\n');
            buf_adds(&b, t);
            free(t);
            elided |= el;
            pos = e + 1;
        }
        sqlite3_finalize(st);
    }
    if (pos <= f->nlines) {
        char *t = action_file_lines(f, pos, f->nlines);
        if (b.len || pos > 1) buf_addc(&b, '\n');
        buf_adds(&b, t);
        free(t);
    }
    if (elided)
        action_result_note(out, "%s: classes over %d lines are shown as skeletons; ask for 'path:Class.method' or a "
                           "line range to read a body", f->path, VIEW_SKELETON_LINES);
    add_span(out, bg, f->path, 1, f->nlines, buf_str(&b), NULL, elided);
    buf_free(&b);
}

static void view_range(struct action_ctx *ctx, const struct action_file *f, int a, int b, int snap,
                       struct action_result *out, struct budget *bg)
{
    if (b < a) { int t = a; a = b; b = t; }
    if (a < 1) a = 1;
    if (b > f->nlines) b = f->nlines;
    char *label = NULL;
    if (snap) {
        struct action_symbol s1, s2;
        int h1 = action_symbol_at(ctx, f->id, a, "'function','method','class'", &s1);
        int h2 = action_symbol_at(ctx, f->id, b, "'function','method','class'", &s2);
        /* widen to the definitions the ends fall in */
        if (h1 && s1.start_line < a) a = s1.start_line;
        if (h2 && s2.end_line > b) b = s2.end_line;
        if (h1 && h2 && s1.id == s2.id) label = label_of(&s1);
        if (h1) action_symbol_free(&s1);
        if (h2) action_symbol_free(&s2);
    }
    if (!label) {
        struct action_symbol s;
        if (action_symbol_at(ctx, f->id, a, "'function','method','class'", &s)) {
            if (s.end_line >= b) label = xasprintf("in %s", s.signature ? s.signature : s.qualname);
            action_symbol_free(&s);
        }
    }
    char *text = action_file_lines(f, a, b);
    add_span(out, bg, f->path, a, b, text, label, 0);
    free(text);
    free(label);
}

static void view_line(struct action_ctx *ctx, const struct action_file *f, int line, struct action_result *out,
                      struct budget *bg)
{
    struct action_symbol s;
    if (action_symbol_at(ctx, f->id, line, "'function','method'", &s)) {
        if (s.end_line - s.start_line + 1 <= ACTION_DEF_MAX_LINES) {
            view_symbol(ctx, &s, out, bg);
            action_symbol_free(&s);
            return;
        }
        action_symbol_free(&s);
    }
    view_range(ctx, f, line - VIEW_WINDOW, line + VIEW_WINDOW, 0, out, bg);
}

/* Definitions of name in one file: the qualified name, else the last
 * component, exact case first. Queried by file so that common names
 * ('__init__', 'get') do not load every definition of the repository. */
static int symbols_in_file(struct action_ctx *ctx, const char *name, long long file_id, struct action_symbol **syms)
{
    const char *dot = strrchr(name, '.');
    sqlite3_stmt *st;
    *syms = NULL;
    if (sqlite3_prepare_v2(ctx->db, "SELECT " ACTION_SYMBOL_COLUMNS " WHERE s.file_id = ?1 AND "
                           "(s.qualname = ?2 COLLATE NOCASE OR s.name = ?3 COLLATE NOCASE) "
                           "ORDER BY s.qualname = ?2 DESC, s.qualname = ?2 COLLATE NOCASE DESC, s.name = ?3 DESC, "
                           "s.start_line", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, file_id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, dot ? dot + 1 : name, -1, SQLITE_STATIC);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        struct action_symbol s;
        action_symbol_from_row(st, &s);
        /* 'A.b' must not pick another class's 'b' */
        if (dot && strcasecmp(s.qualname, name) != 0 && !str_ends(s.qualname, name)) {
            action_symbol_free(&s);
            continue;
        }
        *syms = xreallocarray(*syms, (size_t)n + 1, sizeof **syms);
        (*syms)[n++] = s;
    }
    sqlite3_finalize(st);
    return n;
}

/* Definitions of name anywhere (file_pattern applies), best first. */
static int symbols_named(struct action_ctx *ctx, const char *name, const char *pattern, struct action_symbol **syms)
{
    const char *how;
    return action_lookup_symbols(ctx, name, NULL, pattern, syms, &how);
}

static void symbol_suggestions(struct action_ctx *ctx, const char *name, struct buf *b)
{
    const char *dot = strrchr(name, '.');
    size_t nn;
    const char *const *names = action_cache_names(ctx, ACTION_NAMES_ALL, &nn);
    struct fuzzy_hit hits[5];
    size_t nh = fuzzy_best(dot ? dot + 1 : name, names, nn, 5, hits);
    for (size_t i = 0; i < nh; i++) buf_printf(b, "%s%s", i ? ", " : "", names[hits[i].index]);
}

/* Files under dir (a relative path without trailing '/'); appends up to max to b. */
static size_t files_under(struct action_ctx *ctx, const char *dir, size_t max, struct buf *b)
{
    size_t np, count = 0;
    const char *const *paths = action_cache_paths(ctx, &np);
    size_t dl = strlen(dir);
    for (size_t i = 0; i < np; i++) {
        if (dl && (strncmp(paths[i], dir, dl) != 0 || paths[i][dl] != '/')) continue;
        if (b && count < max) buf_printf(b, "%s%s", count ? ", " : "", paths[i]);
        count++;
    }
    return count;
}

/* Module name -> path ('tinyweb.app' -> 'tinyweb/app.py'); malloc'd or NULL. */
static char *path_of_module(struct action_ctx *ctx, const char *module)
{
    sqlite3_stmt *st;
    char *p = NULL;
    if (sqlite3_prepare_v2(ctx->db, "SELECT path FROM files WHERE module = ? ORDER BY length(path) LIMIT 1", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, module, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) p = xstrdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    return p;
}

/* One entry of code_span_list. Returns 0 when something was shown, else -1
 * with the reason in why. */
/* Lines sp->a-sp->b of f: a reversed range is read forwards and one running
 * past an end is clamped, with a note; one with no line in the file fails
 * (-1, why says so). */
static int view_spec_range(struct action_ctx *ctx, const char *entry, const struct spec *sp,
                           const struct action_file *f, int snap, struct action_result *out, struct budget *bg,
                           struct buf *why)
{
    int lo = sp->a < sp->b ? sp->a : sp->b, hi = sp->a < sp->b ? sp->b : sp->a;
    if (hi < 1) {
        buf_printf(why, "'%s': line numbers start at 1 (%s has %d lines)", entry, f->path, f->nlines);
        return -1;
    }
    if (lo > f->nlines) {
        buf_printf(why, "'%s': %s has only %d lines", entry, f->path, f->nlines);
        return -1;
    }
    int clo = lo < 1 ? 1 : lo, chi = hi > f->nlines ? f->nlines : hi;
    if (clo != sp->a || chi != sp->b)
        action_result_note(out, "'%s' is read as lines %d-%d (%s has %d lines)", entry, clo, chi, f->path,
                           f->nlines);
    view_range(ctx, f, clo, chi, snap, out, bg);
    return 0;
}

/* Line sp->a of f, or -1 with why when f has no such line. */
static int view_spec_line(struct action_ctx *ctx, const char *entry, const struct spec *sp,
                          const struct action_file *f, struct action_result *out, struct budget *bg, struct buf *why)
{
    if (sp->a < 1) {
        buf_printf(why, "'%s': line numbers start at 1 (%s has %d lines)", entry, f->path, f->nlines);
        return -1;
    }
    if (sp->a > f->nlines) {
        buf_printf(why, "'%s': %s has only %d lines", entry, f->path, f->nlines);
        return -1;
    }
    view_line(ctx, f, sp->a, out, bg);
    return 0;
}

/* The definition sp->member in f, or -1 with why naming where a definition
 * of that name is, if anywhere. */
static int view_spec_member(struct action_ctx *ctx, const char *entry, const struct spec *sp,
                            const struct action_file *f, struct action_result *out, struct budget *bg,
                            struct buf *why)
{
    struct action_symbol *syms;
    int n = symbols_in_file(ctx, sp->member, f->id, &syms);
    if (n <= 0) {
        struct buf sug = BUF_INIT;
        struct action_symbol *any;
        int m = symbols_named(ctx, sp->member, NULL, &any);
        for (int i = 0; i < m && i < 5; i++)
            buf_printf(&sug, "%s%s:%s", i ? ", " : "", any[i].path, any[i].qualname);
        for (int i = 0; i < m; i++) action_symbol_free(&any[i]);
        if (m > 0) free(any);
        buf_printf(why, "'%s': no definition '%s' in %s%s%s", entry, sp->member, f->path,
                   sug.len ? "; it is defined in " : "", buf_str(&sug));
        buf_free(&sug);
        return -1;
    }
    view_symbol(ctx, &syms[0], out, bg);
    for (int i = 0; i < n; i++) action_symbol_free(&syms[i]);
    free(syms);
    return 0;
}

/* The part of the file f that sp names: all of it, a range, a line or a
 * definition. 0, or -1 with why. */
static int view_in_file(struct action_ctx *ctx, const char *entry, const struct spec *sp,
                        const struct action_file *f, int snap, struct action_result *out, struct budget *bg,
                        struct buf *why)
{
    switch (sp->tail) {
    case TAIL_NONE: view_file(ctx, f, out, bg); return 0;
    case TAIL_RANGE: return view_spec_range(ctx, entry, sp, f, snap, out, bg, why);
    case TAIL_LINE: return view_spec_line(ctx, entry, sp, f, out, bg, why);
    default: return view_spec_member(ctx, entry, sp, f, out, bg, why);
    }
}

/* The first definition named sp->head (file_pattern first, then anywhere,
 * with a note), the others listed in a note. 1 when there was one. */
static int view_named_symbol(struct action_ctx *ctx, const struct spec *sp, const char *pattern,
                             struct action_result *out, struct budget *bg)
{
    struct action_symbol *syms;
    int n = symbols_named(ctx, sp->head, pattern, &syms);
    if (n == 0 && pattern && *pattern) {
        n = symbols_named(ctx, sp->head, NULL, &syms);
        if (n > 0) action_result_note(out, "no '%s' with file_pattern '%s'; showing it without", sp->head, pattern);
    }
    if (n <= 0) return 0;
    view_symbol(ctx, &syms[0], out, bg);
    if (n > 1) {
        struct buf others = BUF_INIT;
        for (int i = 1; i < n && i < 10; i++)
            buf_printf(&others, "%s%s:%d", i > 1 ? ", " : "", syms[i].path, syms[i].start_line);
        action_result_note(out, "'%s' has %d definitions; shown: %s:%d; others: %s%s", sp->head, n,
                           syms[0].path, syms[0].start_line, buf_str(&others), n > 10 ? ", ..." : "");
        buf_free(&others);
    }
    for (int i = 0; i < n; i++) action_symbol_free(&syms[i]);
    free(syms);
    return 1;
}

/* why for an entry that names nothing in the index: the nearest paths and,
 * for a bare name, the nearest symbols. */
static void view_near_miss(struct action_ctx *ctx, const char *entry, const struct spec *sp, struct buf *why)
{
    struct buf sug = BUF_INIT;
    size_t ns = action_suggest_paths(ctx, sp->head, 5, &sug);
    if (sp->tail == TAIL_NONE && is_ident_dotted(sp->head) && !strchr(sp->head, '/')) {
        struct buf syms = BUF_INIT;
        symbol_suggestions(ctx, sp->head, &syms);
        if (syms.len) {
            buf_printf(&sug, "%s; symbols: %s", ns ? "" : "(no similar path)", buf_str(&syms));
            ns++;
        }
        buf_free(&syms);
    }
    buf_printf(why, "'%s': no such file or symbol in the index%s%s", entry, ns ? "; nearest: " : "", buf_str(&sug));
    buf_free(&sug);
}

/* Not a file: a directory (why lists some of its files), a symbol, or a near
 * miss (why says what is nearest). 0 when something was shown. */
static int view_not_file(struct action_ctx *ctx, const char *entry, const struct spec *sp, const char *rel,
                         const char *pattern, struct action_result *out, struct budget *bg, struct buf *why)
{
    size_t nfiles = files_under(ctx, rel, 0, NULL);
    if (*rel && nfiles) {
        struct buf list = BUF_INIT;
        files_under(ctx, rel, VIEW_DIR_FILES, &list);
        buf_printf(why, "'%s' is a directory with %zu indexed files (%s%s); use Outline for its definitions or "
                   "name a file", entry, nfiles, buf_str(&list), nfiles > VIEW_DIR_FILES ? ", ..." : "");
        buf_free(&list);
        return -1;
    }
    if (sp->tail == TAIL_NONE && is_ident_dotted(sp->head) && view_named_symbol(ctx, sp, pattern, out, bg)) return 0;
    view_near_miss(ctx, entry, sp, why);
    return -1;
}

static int view_one(struct action_ctx *ctx, const char *entry, const char *pattern, int snap,
                    struct action_result *out, struct budget *bg, struct buf *why)
{
    struct spec sp;
    spec_parse(entry, &sp);
    int r = -1;
    char *rel = NULL, *modpath = NULL;
    char perr[512];
    struct action_file f = {0};
    if (!*sp.head) {
        buf_printf(why, "'%s': no path or symbol given", entry);
        goto done;
    }
    if (action_resolve_path(ctx, sp.head, &rel, perr, sizeof perr) != ACTION_OK) {
        buf_printf(why, "'%s': %s", entry, perr);
        goto done;
    }
    int found = action_file_load(ctx, rel, -1, &f);
    if (found < 0) {
        buf_printf(why, "'%s': cannot read the index: %s", entry, sqlite3_errmsg(ctx->db));
        goto done;
    }
    if (!found && is_ident_dotted(sp.head) && strchr(sp.head, '.') && (modpath = path_of_module(ctx, sp.head)))
        found = action_file_load(ctx, modpath, -1, &f) == 1;
    r = found ? view_in_file(ctx, entry, &sp, &f, snap, out, bg, why)
              : view_not_file(ctx, entry, &sp, rel, pattern, out, bg, why);
done:
    action_file_free(&f);
    free(rel);
    free(modpath);
    spec_free(&sp);
    return r;
}

int action_view_code(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err,
                     size_t errlen)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(args, "code_span_list");
    const char *pattern = action_arg_str(args, "file_pattern");
    int snap = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "snap_to_definition"));
    long long tokens = ctx->token_budget > 0 ? ctx->token_budget : ACTION_DEFAULT_BUDGET;
    struct budget bg = {(size_t)tokens * 4, 0, 0};
    struct buf why = BUF_INIT;
    int shown = 0, failed = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        /* the same entry twice: once is enough */
        int dup = 0;
        for (const cJSON *p = list->child; p != e; p = p->next)
            if (strcmp(p->valuestring, e->valuestring) == 0) dup = 1;
        if (dup) continue;
        size_t before = out->ev.n;
        struct buf one = BUF_INIT;
        if (view_one(ctx, e->valuestring, pattern, snap, out, &bg, &one) == 0) {
            shown++;
            for (size_t i = before; i < out->ev.n; i++) {
                const struct evidence_span *s = &out->ev.v[i];
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "request", e->valuestring);
                cJSON_AddStringToObject(o, "path", s->path);
                cJSON_AddNumberToObject(o, "start_line", s->start_line);
                cJSON_AddNumberToObject(o, "end_line", s->end_line);
                if (s->label) cJSON_AddStringToObject(o, "label", s->label);
                cJSON_AddBoolToObject(o, "skeleton", s->elided);
                cJSON_AddItemToArray(out->items, o);
            }
        } else {
            failed++;
            action_result_note(out, "%s", buf_str(&one));
            if (why.len) buf_adds(&why, "; ");
            buf_adds(&why, buf_str(&one));
        }
        buf_free(&one);
    }
    int r = ACTION_OK;
    if (!shown && failed) {
        snprintf(err, errlen, "ViewCode: %s", buf_str(&why));
        r = ACTION_EINVAL;
    }
    buf_free(&why);
    return r;
}

/* ----------------------------------------------------------------- Outline */

static void outline_file(struct action_ctx *ctx, long long file_id, const char *path, int nlines,
                         struct action_result *out)
{
    buf_printf(&out->listing, "%s (%d lines)\n", path, nlines);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db,
            "SELECT id, parent_id, kind, qualname, start_line, end_line, signature FROM symbols "
            "WHERE file_id = ? ORDER BY start_line, end_line DESC", -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, file_id);
    /* depth by parent: ids of the open ancestors and whether each is a class */
    long long stack_id[64];
    int stack_cls[64], depth = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(st, 0);
        long long parent = sqlite3_column_int64(st, 1);
        const char *kind = (const char *)sqlite3_column_text(st, 2);
        const char *qual = (const char *)sqlite3_column_text(st, 3);
        int s = sqlite3_column_int(st, 4), e = sqlite3_column_int(st, 5);
        const char *sig = (const char *)sqlite3_column_text(st, 6);
        while (depth > 0 && stack_id[depth - 1] != parent) depth--;
        /* functions nested in functions are details: skipped */
        if (depth > 0 && !stack_cls[depth - 1]) continue;
        if (parent && depth == 0) continue;
        int is_cls = kind && strcmp(kind, "class") == 0;
        const char *short_name = strrchr(qual, '.');
        short_name = short_name ? short_name + 1 : qual;
        buf_printf(&out->listing, "%*s%d-%d  ", 2 + 2 * depth, "", s, e);
        if (sig && *sig) buf_printf(&out->listing, "%s\n", sig);
        else buf_printf(&out->listing, "%s (%s)\n", short_name, kind);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddStringToObject(o, "qualname", qual);
        cJSON_AddStringToObject(o, "kind", kind);
        cJSON_AddNumberToObject(o, "start_line", s);
        cJSON_AddNumberToObject(o, "end_line", e);
        if (sig) cJSON_AddStringToObject(o, "signature", sig);
        cJSON_AddItemToArray(out->items, o);
        if (depth < 64) {
            stack_id[depth] = id;
            stack_cls[depth] = is_cls;
            depth++;
        }
    }
    sqlite3_finalize(st);
}

int action_outline(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err, size_t errlen)
{
    const char *given = action_arg_str(args, "path");
    char *rel = NULL;
    int r;
    if (!*given || strcmp(given, ".") == 0 || strcmp(given, "/") == 0) rel = xstrdup("");
    else if ((r = action_resolve_path(ctx, given, &rel, err, errlen)) != ACTION_OK) return r;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db,
            "SELECT id, path, nlines FROM files WHERE path = ?1 OR ?1 = '' OR substr(path, 1, length(?1) + 1) = ?1 || '/' "
            "ORDER BY path", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "Outline: cannot read the index: %s", sqlite3_errmsg(ctx->db));
        free(rel);
        return ACTION_EFAIL;
    }
    sqlite3_bind_text(st, 1, rel, -1, SQLITE_STATIC);
    int nfiles = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (nfiles) buf_addc(&out->listing, '\n');
        outline_file(ctx, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                     sqlite3_column_int(st, 2), out);
        nfiles++;
    }
    sqlite3_finalize(st);
    if (!nfiles) {
        char *mp = is_ident_dotted(given) ? path_of_module(ctx, given) : NULL;
        if (mp) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddStringToObject(a, "path", mp);
            free(mp);
            free(rel);
            r = action_outline(ctx, a, out, err, errlen);
            cJSON_Delete(a);
            return r;
        }
        struct buf sug = BUF_INIT;
        size_t ns = action_suggest_paths(ctx, given, 5, &sug);
        snprintf(err, errlen, "Outline: '%s' is not an indexed file or directory%s%s", given,
                 ns ? "; nearest: " : "", buf_str(&sug));
        buf_free(&sug);
        free(rel);
        return ACTION_EINVAL;
    }
    free(rel);
    return ACTION_OK;
}

/* --------------------------------------------------------------- ListFiles */

int action_list_files(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err,
                      size_t errlen)
{
    const char *pattern = action_arg_str(args, "pattern");
    if (pattern && !fpattern_valid(pattern, err, errlen)) return ACTION_EINVAL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(ctx->db, "SELECT path, size, nlines FROM files ORDER BY path", -1, &st, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "ListFiles: cannot read the index: %s", sqlite3_errmsg(ctx->db));
        return ACTION_EFAIL;
    }
    size_t n = 0;
    long long total_lines = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);
        if (!fpattern_match(pattern, path)) continue;
        long long size = sqlite3_column_int64(st, 1);
        int lines = sqlite3_column_int(st, 2);
        total_lines += lines;
        if (n++ >= LIST_MAX_FILES) continue;
        buf_printf(&out->listing, "%s  %d lines  %lld bytes\n", path, lines, size);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddNumberToObject(o, "size", (double)size);
        cJSON_AddNumberToObject(o, "lines", lines);
        cJSON_AddItemToArray(out->items, o);
    }
    sqlite3_finalize(st);
    if (n > LIST_MAX_FILES) {
        out->truncated = 1;
        action_result_note(out, "%zu files match; the first %d are listed. Narrow the pattern", n, LIST_MAX_FILES);
    } else if (n == 0) {
        struct buf sug = BUF_INIT;
        size_t ns = pattern ? action_suggest_paths(ctx, pattern, 5, &sug) : 0;
        action_result_note(out, "no indexed file matches '%s'%s%s", pattern ? pattern : "", ns ? "; nearest: " : "",
                           buf_str(&sug));
        buf_free(&sug);
    } else {
        buf_printf(&out->listing, "%zu files, %lld lines\n", n, total_lines);
    }
    return ACTION_OK;
}
