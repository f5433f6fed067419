/*
 * curate: ranking, merging, boilerplate collapsing and budgeting of evidence
 * for one question (see curate.h). Pure functions over an evidence list; no
 * index access, so the search can curate any action's output, including
 * SemanticSearch's.
 */
#include "curate.h"
#include "action.h"
#include "tok.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDENT_WEIGHT 4.0

/* ------------------------------------------------------------ identifiers */

static int idc(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

static int looks_like_code(const char *w, size_t n, int call)
{
    if (call) return 1;
    int upper_inner = 0, lower = 0, digit = 0, alpha = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        if (c == '_' || c == '.') return n > 1;
        if (isupper(c) && i > 0) upper_inner = 1;
        if (islower(c)) lower = 1;
        if (isdigit(c)) digit = 1;
        if (isalpha(c)) alpha = 1;
    }
    return (upper_inner && lower) || (digit && alpha);
}

static void add_id(char ***ids, size_t *n, const char *w, size_t len)
{
    while (len && (w[len - 1] == '.')) len--;
    if (len < 2) return;
    for (size_t i = 0; i < *n; i++)
        if (strlen((*ids)[i]) == len && memcmp((*ids)[i], w, len) == 0) return;
    *ids = xreallocarray(*ids, *n + 1, sizeof **ids);
    (*ids)[(*n)++] = xstrndup(w, len);
}

size_t curate_identifiers(const char *q, char ***ids)
{
    size_t n = 0;
    *ids = NULL;
    for (const char *p = q; *p;) {
        if (*p == '`') {
            const char *e = strchr(p + 1, '`');
            if (e) {
                const char *a = p + 1, *b = e;
                while (a < b && !idc((unsigned char)*a)) a++;
                while (b > a && !idc((unsigned char)b[-1])) b--;
                if (b > a) add_id(ids, &n, a, (size_t)(b - a));
                p = e + 1;
                continue;
            }
        }
        if (idc((unsigned char)*p)) {
            const char *s = p;
            while (idc((unsigned char)*p) || (*p == '.' && idc((unsigned char)p[1]))) p++;
            int call = p[0] == '(' && p[1] == ')';
            if (looks_like_code(s, (size_t)(p - s), call)) add_id(ids, &n, s, (size_t)(p - s));
            continue;
        }
        p++;
    }
    return n;
}

/* ----------------------------------------------------------------- terms */

struct terms {
    char **v;
    size_t n, cap;
};

static int term_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void term_add(const char *t, size_t len, void *ctx)
{
    struct terms *ts = ctx;
    ARRAY_GROW(ts->v, ts->n, ts->cap, 32);
    ts->v[ts->n++] = xstrndup(t, len);
}

/* Sorted unique terms of the text. */
static void terms_of(const char *text, int flags, struct terms *ts)
{
    memset(ts, 0, sizeof *ts);
    if (!text) return;
    tok_each(text, strlen(text), flags, term_add, ts);
    if (!ts->n) return;
    qsort(ts->v, ts->n, sizeof *ts->v, term_cmp);
    size_t k = 1;
    for (size_t i = 1; i < ts->n; i++) {
        if (strcmp(ts->v[i], ts->v[k - 1]) == 0) free(ts->v[i]);
        else ts->v[k++] = ts->v[i];
    }
    ts->n = k;
}

static int terms_has(const struct terms *ts, const char *t)
{
    return ts->n && bsearch(&t, ts->v, ts->n, sizeof *ts->v, term_cmp) != NULL;
}

static void terms_free(struct terms *ts)
{
    for (size_t i = 0; i < ts->n; i++) free(ts->v[i]);
    free(ts->v);
}

static char *span_words(const struct evidence_span *s)
{
    return xasprintf("%s\n%s\n%s", s->path, s->label ? s->label : "", s->text ? s->text : "");
}

double curate_relevance(const char *question, const struct evidence_span *span)
{
    struct terms q, t;
    terms_of(question, TOK_STOPWORDS, &q);
    char *w = span_words(span);
    terms_of(w, 0, &t);
    double r = 0;
    for (size_t i = 0; i < q.n; i++) r += terms_has(&t, q.v[i]);
    char **ids;
    size_t nid = curate_identifiers(question, &ids);
    for (size_t i = 0; i < nid; i++) {
        r += text_has_word(w, ids[i]) ? IDENT_WEIGHT : 0;
        free(ids[i]);
    }
    free(ids);
    free(w);
    terms_free(&q);
    terms_free(&t);
    return r;
}

/* ----------------------------------------------------------- span helpers */

struct cspan {
    struct evidence_span s;   /* owned copies */
    double rel;
    int dropped;
};

static int nlines_of(const char *text)
{
    int n = 1;
    for (const char *p = text; p && *p; p++) n += *p == '\n';
    return n;
}

/* Lines of a verbatim span as pointers into a copy. */
static char **split_lines(const char *text, int *n)
{
    *n = nlines_of(text);
    char **v = xmalloc((size_t)*n * sizeof *v);
    const char *p = text ? text : "";
    for (int i = 0; i < *n; i++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        v[i] = xstrndup(p, len);
        p = e ? e + 1 : p + len;
    }
    return v;
}

static void free_lines(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

static int span_order(const void *x, const void *y)
{
    const struct cspan *a = x, *b = y;
    int r = strcmp(a->s.path, b->s.path);
    if (r) return r;
    if (a->s.start_line != b->s.start_line) return a->s.start_line - b->s.start_line;
    return b->s.end_line - a->s.end_line;
}

static int rank_order(const void *x, const void *y)
{
    const struct cspan *a = x, *b = y;
    if (a->rel != b->rel) return a->rel > b->rel ? -1 : 1;
    if (a->s.score != b->s.score) return a->s.score > b->s.score ? -1 : 1;
    return span_order(x, y);
}

static void cspan_free(struct cspan *c)
{
    free(c->s.path);
    free(c->s.text);
    free(c->s.label);
}

/* b overlaps or touches a (same path, sorted by start): a absorbs b. */
static void merge_into(struct cspan *a, struct cspan *b)
{
    if (b->s.end_line > a->s.end_line) {
        int skip = a->s.end_line - b->s.start_line + 1;   /* lines of b already in a */
        const char *p = b->s.text ? b->s.text : "";
        for (int i = 0; i < skip && p; i++) {
            p = strchr(p, '\n');
            if (p) p++;
        }
        if (p) {
            char *t = xasprintf("%s\n%s", a->s.text ? a->s.text : "", p);
            free(a->s.text);
            a->s.text = t;
            a->s.end_line = b->s.end_line;
        }
    }
    if (!a->s.label && b->s.label) a->s.label = xstrdup(b->s.label);
    else if (a->s.label && b->s.label && strcmp(a->s.label, b->s.label) != 0 && !strstr(a->s.label, b->s.label)) {
        char *l = xasprintf("%s; %s", a->s.label, b->s.label);
        free(a->s.label);
        a->s.label = l;
    }
    if (b->s.score > a->s.score) a->s.score = b->s.score;
    b->dropped = 1;
}

/* ------------------------------------------------------------- collapsing */

static const char *lstrip(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

static int is_import_line(const char *l)
{
    l = lstrip(l);
    return str_starts(l, "import ") || (str_starts(l, "from ") && strstr(l, " import"));
}

static int bracket_delta(const char *l)
{
    int d = 0;
    for (const char *p = l; *p; p++) {
        if (*p == '#') break;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p && *p != q) p += (*p == '\\' && p[1]) ? 2 : 1;
            if (!*p) break;
            continue;
        }
        if (*p == '(' || *p == '[' || *p == '{') d++;
        else if (*p == ')' || *p == ']' || *p == '}') d--;
    }
    return d;
}

static int ends_with_opener(const char *l)
{
    size_t n = strlen(l);
    while (n && isspace((unsigned char)l[n - 1])) n--;
    return n && (l[n - 1] == '{' || l[n - 1] == '[' || l[n - 1] == '(');
}

static int opens_string_constant(const char *l)
{
    const char *eq = strchr(l, '=');
    if (!eq || eq[1] == '=') return 0;
    const char *p = lstrip(eq + 1);
    while (*p && strchr("rRbBuUfF", *p)) p++;
    return (str_starts(p, "\"\"\"") || str_starts(p, "'''")) && !strstr(p + 3, p[0] == '"' ? "\"\"\"" : "'''");
}

static int region_has_id(char **lines, int a, int b, char **ids, size_t nid)
{
    for (int i = a; i <= b; i++)
        for (size_t k = 0; k < nid; k++)
            if (text_has_word(lines[i], ids[k])) return 1;
    return 0;
}

/* Collapses boilerplate of a verbatim span in place. */
static void collapse(struct cspan *c, char **ids, size_t nid)
{
    if (c->s.elided || !c->s.text) return;
    int n;
    char **L = split_lines(c->s.text, &n);
    /* kind per line: 0 keep, else the id of the collapsed region it belongs to */
    int *region = xcalloc((size_t)n, sizeof *region);
    const char **why = xcalloc((size_t)n + 1, sizeof *why);
    int nreg = 0;
    for (int i = 0; i < n;) {
        /* an import block, with parenthesised continuations and blank lines inside */
        if (is_import_line(L[i])) {
            int j = i, last = i, count = 0;
            while (j < n) {
                if (is_import_line(L[j])) {
                    int d = bracket_delta(L[j]);
                    count++;
                    while (d > 0 && j + 1 < n) { j++; d += bracket_delta(L[j]); }
                    last = j;
                    j++;
                } else if (!*lstrip(L[j])) j++;
                else break;
            }
            if (count >= CURATE_IMPORTS_MIN && !region_has_id(L, i, last, ids, nid)) {
                nreg++;
                for (int k = i; k <= last; k++) region[k] = nreg;
                why[nreg] = "import block";
            }
            i = last + 1;
            continue;
        }
        /* a long literal display or string constant: keep its first and last line */
        int end = -1;
        const char *what = NULL;
        if (ends_with_opener(L[i])) {
            int d = bracket_delta(L[i]);
            int j = i + 1;
            while (j < n && d > 0) d += bracket_delta(L[j++]);
            if (d <= 0) { end = j - 1; what = "long literal"; }
        } else if (opens_string_constant(L[i])) {
            const char *q = strstr(L[i], "\"\"\"") ? "\"\"\"" : "'''";
            for (int j = i + 1; j < n; j++)
                if (strstr(L[j], q)) { end = j; what = "long string"; break; }
        }
        if (end > i && end - i - 1 > CURATE_COLLAPSE_MIN && !region_has_id(L, i, end - 1, ids, nid)) {
            nreg++;
            for (int k = i + 1; k < end; k++) region[k] = nreg;
            why[nreg] = what;
            i = end + 1;
            continue;
        }
        i++;
    }
    if (nreg) {
        struct buf b = BUF_INIT;
        for (int i = 0; i < n;) {
            if (b.len || i) buf_addc(&b, '\n');
            if (!region[i]) {
                buf_adds(&b, L[i]);
                i++;
                continue;
            }
            int j = i;
            while (j < n && region[j] == region[i]) j++;
            int ind = (int)(lstrip(L[i]) - L[i]);
            char what[64];
            snprintf(what, sizeof what, "%s of %d lines", why[region[i]], j - i);
            action_marker(&b, ind, c->s.path, c->s.start_line + i, c->s.start_line + j - 1, what);
            i = j;
        }
        free(c->s.text);
        c->s.text = buf_take(&b);
        c->s.elided = 1;
    }
    free(region);
    free(why);
    free_lines(L, n);
}

/* ---------------------------------------------------------------- budget */

static size_t cost_bytes(const struct evidence_span *s)
{
    size_t lines = (size_t)nlines_of(s->text);
    return strlen(s->path) + 16 + (s->label ? strlen(s->label) + 2 : 0) + (s->text ? strlen(s->text) : 0) + lines * 6;
}

/* A window of a verbatim span around its most relevant line that costs at most
 * max bytes; 0 when not even three lines fit. */
static int focused_quote(const struct cspan *c, const struct terms *q, char **ids, size_t nid, size_t max,
                         struct evidence_span *out)
{
    if (c->s.elided || !c->s.text) return 0;
    int n;
    char **L = split_lines(c->s.text, &n);
    int best = 0;
    double bs = -1;
    for (int i = 0; i < n; i++) {
        struct terms t;
        terms_of(L[i], 0, &t);
        double s = 0;
        for (size_t k = 0; k < q->n; k++) s += terms_has(&t, q->v[k]);
        for (size_t k = 0; k < nid; k++) s += text_has_word(L[i], ids[k]) ? IDENT_WEIGHT : 0;
        terms_free(&t);
        if (s > bs) { bs = s; best = i; }
    }
    int a = best, b = best;
    size_t used = strlen(c->s.path) + 16 + (c->s.label ? strlen(c->s.label) + 12 : 12) + strlen(L[best]) + 6;
    if (used > max) { free_lines(L, n); return 0; }
    /* grow both ways, a line at a time, while it fits */
    for (int grew = 1; grew;) {
        grew = 0;
        if (a > 0 && used + strlen(L[a - 1]) + 7 <= max) { a--; used += strlen(L[a]) + 7; grew = 1; }
        if (b < n - 1 && used + strlen(L[b + 1]) + 7 <= max) { b++; used += strlen(L[b]) + 7; grew = 1; }
    }
    if (b - a + 1 < 3 && n >= 3) { free_lines(L, n); return 0; }
    struct buf t = BUF_INIT;
    for (int i = a; i <= b; i++) {
        if (i > a) buf_addc(&t, '\n');
        buf_adds(&t, L[i]);
    }
    memset(out, 0, sizeof *out);
    out->path = xstrdup(c->s.path);
    out->start_line = c->s.start_line + a;
    out->end_line = c->s.start_line + b;
    out->text = buf_take(&t);
    out->label = xasprintf("%s%s(excerpt)", c->s.label ? c->s.label : "", c->s.label ? " " : "");
    free_lines(L, n);
    return 1;
}

/* The first lines of an outline (an elided span) that cost at most max
 * bytes, ending with a line that says how many lines were left out; the
 * range stays the outline's. 0 when not even one line fits. */
static int outline_head(const struct cspan *c, size_t max, struct evidence_span *out)
{
    if (!c->s.text) return 0;
    int n;
    char **L = split_lines(c->s.text, &n);
    size_t used = strlen(c->s.path) + 16 + (c->s.label ? strlen(c->s.label) + 2 : 0) + 60;
    int k = 0;
    while (k < n && used + strlen(L[k]) + 7 <= max) used += strlen(L[k++]) + 7;
    if (k == 0) {
        free_lines(L, n);
        return 0;
    }
    struct buf t = BUF_INIT;
    for (int i = 0; i < k; i++) {
        if (i) buf_addc(&t, '\n');
        buf_adds(&t, L[i]);
    }
    if (k < n) buf_printf(&t, "\n[... %d more lines of this outline not shown ...]", n - k);
    memset(out, 0, sizeof *out);
    out->path = xstrdup(c->s.path);
    out->start_line = c->s.start_line;
    out->end_line = c->s.end_line;
    out->text = buf_take(&t);
    out->elided = 1;
    out->label = c->s.label ? xstrdup(c->s.label) : NULL;
    free_lines(L, n);
    return 1;
}

/* ------------------------------------------------------------------ curate */

/* The raw spans copied, sorted by file and line, verbatim spans of one file
 * that overlap or touch merged, and skeletons a verbatim span covers
 * dropped. *n is the number of raw spans in, the number kept out. */
static struct cspan *merged_spans(const struct evidence *raw, size_t *n_io)
{
    size_t n = *n_io;
    struct cspan *c = xcalloc(n, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        const struct evidence_span *s = &raw->v[i];
        c[i].s.path = xstrdup(s->path);
        c[i].s.text = s->text ? xstrdup(s->text) : xstrdup("");
        c[i].s.label = s->label ? xstrdup(s->label) : NULL;
        c[i].s.start_line = s->start_line;
        c[i].s.end_line = s->end_line;
        c[i].s.score = s->score;
        c[i].s.elided = s->elided;
    }
    /* merge verbatim spans of one file that overlap or touch; drop skeletons
     * that a verbatim span covers */
    qsort(c, n, sizeof *c, span_order);
    for (size_t i = 0; i < n; i++) {
        if (c[i].dropped) continue;
        for (size_t j = i + 1; j < n && strcmp(c[j].s.path, c[i].s.path) == 0; j++) {
            if (c[j].dropped) continue;
            if (c[j].s.start_line > c[i].s.end_line + 1) break;
            if (!c[i].s.elided && !c[j].s.elided) merge_into(&c[i], &c[j]);
            else if (c[i].s.elided && !c[j].s.elided && c[j].s.start_line <= c[i].s.start_line &&
                     c[j].s.end_line >= c[i].s.end_line) c[i].dropped = 1;
            else if (!c[i].s.elided && c[j].s.elided && c[j].s.end_line <= c[i].s.end_line) c[j].dropped = 1;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].dropped) cspan_free(&c[i]);
        else c[k++] = c[i];
    }
    n = k;
    *n_io = n;
    return c;
}

/* Sets each span's relevance: the question's terms weighted by their rarity
 * among the spans, plus the question's identifiers found literally. Returns
 * the highest. */
static double relevance(struct cspan *c, size_t n, const struct terms *q, char **ids, size_t nid)
{
    struct terms *st = xcalloc(n, sizeof *st);
    char **words = xcalloc(n, sizeof *words);
    for (size_t i = 0; i < n; i++) {
        words[i] = span_words(&c[i].s);
        terms_of(words[i], 0, &st[i]);
    }
    double maxrel = 0;
    for (size_t i = 0; i < n; i++) {
        double r = 0;
        for (size_t t = 0; t < q->n; t++) {
            if (!terms_has(&st[i], q->v[t])) continue;
            size_t df = 0;
            for (size_t j = 0; j < n; j++) df += terms_has(&st[j], q->v[t]);
            r += log(1.0 + (double)n / (double)df);
        }
        for (size_t t = 0; t < nid; t++) r += text_has_word(words[i], ids[t]) ? IDENT_WEIGHT : 0;
        c[i].rel = r;
        if (r > maxrel) maxrel = r;
    }
    for (size_t i = 0; i < n; i++) {
        terms_free(&st[i]);
        free(words[i]);
    }
    free(st);
    free(words);
    return maxrel;
}

size_t curate(const char *question, const struct evidence *raw, long long budget_tokens, struct evidence *out)
{
    size_t n = raw->n;
    if (!n) return 0;
    struct cspan *c = merged_spans(raw, &n);
    struct terms q;
    terms_of(question, TOK_STOPWORDS, &q);
    char **ids;
    size_t nid = curate_identifiers(question, &ids);
    double maxrel = relevance(c, n, &q, ids, nid);
    qsort(c, n, sizeof *c, rank_order);

    size_t cap = budget_tokens > 0 ? (size_t)budget_tokens * 4 : (size_t)-1, used = 0, added = 0;
    long outline = -1;   /* the best outline that did not fit */
    for (size_t i = 0; i < n; i++) {
        /* noise: nothing in common with the question while other spans have something */
        if (maxrel > 0 && c[i].rel <= 0) continue;
        /* a quote is cut from the verbatim text, before boilerplate is collapsed */
        struct cspan verbatim = c[i];
        verbatim.s.text = c[i].s.elided ? NULL : xstrdup(c[i].s.text);
        collapse(&c[i], ids, nid);
        size_t cost = cost_bytes(&c[i].s);
        if (used + cost <= cap) {
            struct evidence_span *s = evidence_add(out, c[i].s.path, c[i].s.start_line, c[i].s.end_line, c[i].s.text,
                                                   c[i].s.label, c[i].rel);
            s->elided = c[i].s.elided;
            used += cost;
            added++;
            free(verbatim.s.text);
            continue;
        }
        /* a quote leaves room for the spans ranked after it */
        struct evidence_span fq;
        size_t room = cap > used ? cap - used : 0;
        if (i + 1 < n) room /= 2;
        if (room && verbatim.s.text && focused_quote(&verbatim, &q, ids, nid, room, &fq)) {
            evidence_add(out, fq.path, fq.start_line, fq.end_line, fq.text, fq.label, c[i].rel);
            used += cost_bytes(&fq);
            added++;
            free(fq.path);
            free(fq.text);
            free(fq.label);
        } else if (!verbatim.s.text && outline < 0) {
            outline = (long)i;
        }
        free(verbatim.s.text);
    }
    /* What an action found is never curated down to nothing: an outline too
     * big for the budget (the skeleton of a large class or file) keeps its
     * head, its range whole, when nothing else was kept. */
    struct evidence_span oh;
    if (!added && outline >= 0 && outline_head(&c[outline], cap, &oh)) {
        evidence_add(out, oh.path, oh.start_line, oh.end_line, oh.text, oh.label, c[outline].rel)->elided = 1;
        added++;
        free(oh.path);
        free(oh.text);
        free(oh.label);
    }
    for (size_t i = 0; i < n; i++) cspan_free(&c[i]);
    free(c);
    for (size_t i = 0; i < nid; i++) free(ids[i]);
    free(ids);
    terms_free(&q);
    return added;
}
