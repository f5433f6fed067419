/*
 * answer: the extractive answer builder and citation checks (see answer.h).
 * Everything in the Markdown it writes is read from the spans or the index:
 * names, signatures, docstrings, comments and code lines.
 */
#include "answer.h"
#include "answer_setting.h"
#include "metrics.h"
#include "fpattern.h"
#include "index.h"
#include "parse.h"
#include "sqlx.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct cand {
    struct evidence_span sp;   /* owned copies of path, text, label */
    char *qual, *sig, *doc, *kind;   /* from the index, each may be NULL */
    double prior, score;
    int order;
    int prose;                 /* a file of prose (its chunks are text): calls nothing */
    int big;                   /* index of the long span it was cut from, or -1 */
    int def_start, def_end;    /* lines of the definition qual names, 0 when unknown */
    int named;                 /* a view of the one definition of a name the question writes explicitly:
                                  2 the whole of it, 1 its start (named_first) */
    int caller;                /* the line where it calls the name whose callers the question asks
                                  (qparse.callers_of), 0 when it does not (callers_first) */
    int subclass;              /* a class whose bases name the class whose subclasses the question
                                  asks (qparse.subclasses_of) */
    int in_named_file;         /* its file is one the question names ("What does cli.py do?") */
};

static void cand_free(struct cand *c)
{
    free(c->sp.path);
    free(c->sp.text);
    free(c->sp.label);
    free(c->qual);
    free(c->sig);
    free(c->doc);
    free(c->kind);
}

/* The statements enclosing and refine run for every candidate or long
 * span: each prepared on its first use and kept for the rest of the answer
 * (answer_build finalizes them) */
struct enclosing_st {
    sqlite3_stmt *def, *prose;   /* enclosing's */
    sqlite3_stmt *refine;        /* refine's */
};

/* The innermost definition enclosing [a, b] of path: a span within a
 * variable's own lines ('RETRIES = 3', a mapping written over many lines) is
 * that variable's definition. */
static void enclosing(sqlite3 *db, struct enclosing_st *k, struct cand *c)
{
    if (!db) return;
    if (!k->def && sqlite3_prepare_v2(db,
                                      "SELECT s.qualname, s.signature, drqa_doc(s.docstring), s.kind, s.start_line, s.end_line "
                                      "FROM symbols s "
                                      "JOIN files f ON f.id = s.file_id WHERE f.path = ?1 AND s.start_line <= ?2 "
                                      "AND s.end_line >= ?3 ORDER BY s.end_line - s.start_line LIMIT 1",
                                      -1, &k->def, NULL) != SQLITE_OK)
        return;
    sqlite3_stmt *st = k->def;
    sqlite3_bind_text(st, 1, c->sp.path, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, c->sp.start_line);
    sqlite3_bind_int(st, 3, c->sp.end_line);
    if (sqlite3_step(st) == SQLITE_ROW) {
        c->qual = sqlx_col_dup_nonempty(st, 0);
        c->sig = sqlx_col_dup_nonempty(st, 1);
        c->doc = sqlx_col_dup_nonempty(st, 2);
        c->kind = sqlx_col_dup_nonempty(st, 3);
        c->def_start = sqlite3_column_int(st, 4);
        c->def_end = sqlite3_column_int(st, 5);
    }
    sqlite3_reset(st);
    if (c->qual) return;
    if (!k->prose && sqlite3_prepare_v2(db,
                                        "SELECT 1 FROM chunk_spans c JOIN files f ON f.id = c.file_id WHERE f.path = ?1 "
                                        "AND c.kind = 'text' LIMIT 1",
                                        -1, &k->prose, NULL) != SQLITE_OK)
        return;
    st = k->prose;
    sqlite3_bind_text(st, 1, c->sp.path, -1, SQLITE_STATIC);
    c->prose = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_reset(st);
}

/* The last dotted component of a qualified name, or the name after
 * def/class in a label. Static buffer of the caller. */
static const char *short_name(const struct cand *c, char *out, size_t outlen)
{
    const char *src = c->qual;
    if (!src && c->sp.label) {
        src = c->sp.label;
        if (!strncmp(src, "async ", 6)) src += 6;
        if (!strncmp(src, "def ", 4)) src += 4;
        else if (!strncmp(src, "class ", 6)) src += 6;
        else if (!strncmp(src, "module ", 7)) src = NULL;
    }
    out[0] = 0;
    if (!src) return out;
    size_t n = 0;
    while (src[n] && (isalnum((unsigned char)src[n]) || src[n] == '_' || src[n] == '.')) n++;
    const char *s = src;
    for (size_t i = 0; i < n; i++)
        if (src[i] == '.') s = src + i + 1;
    size_t m = (size_t)(src + n - s);
    if (m >= outlen) m = outlen - 1;
    memcpy(out, s, m);
    out[m] = 0;
    return out;
}

double answer_span_relevance(const struct qparse *q, const struct evidence_span *sp)
{
    double t = sp->text ? qparse_match(q, sp->text, strlen(sp->text), NULL) : 0;
    double l = sp->label ? qparse_match(q, sp->label, strlen(sp->label), NULL) : 0;
    double p = qparse_match(q, sp->path, strlen(sp->path), NULL);
    return t + 0.5 * l + 0.2 * p;
}

/* The best score of path among w[0..n), relative to w[0]'s (0-1). */
static double list_prior(const struct qwindow *w, size_t n, const char *path)
{
    if (!n || w[0].score <= 0) return 0;
    double best = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(w[i].path, path) && w[i].score > best) best = w[i].score;
    return best / w[0].score;
}

static double file_prior(const struct answer_opts *o, const char *path)
{
    return o ? list_prior(o->prior, o->nprior, path) : 0;
}

static double file_evidence(const struct answer_opts *o, const char *path)
{
    return o ? list_prior(o->files, o->nfiles, path) : 0;
}

/* ndefs: how many candidates define a name the question writes literally
 * and c defines; the bonus for the question's own name is shared among them,
 * since a name defined in many places (`clean()`, `get()`) says little about
 * which of them the question is about. */
static void score_cand(const struct qparse *q, const struct answer_opts *o, struct cand *c, size_t ndefs)
{
    double rel = answer_span_relevance(q, &c->sp);
    if (c->qual) rel += 0.5 * qparse_match(q, c->qual, strlen(c->qual), NULL);
    char nm[128];
    short_name(c, nm, sizeof nm);
    double lit = 0;
    for (size_t i = 0; i < q->nids && *nm; i++)
        if (!strcmp(q->ids[i].base, nm)) lit = 0.6 / (double)(ndefs ? ndefs : 1);
    int lines = c->sp.end_line - c->sp.start_line + 1;
    double len_pen = 1.0 + (lines > 60 ? (lines - 60) / 240.0 : 0);
    c->score = (rel + lit) / len_pen + 0.25 * c->prior + 0.3 * file_prior(o, c->sp.path) +
               ANSWER_FILE_EVIDENCE_WEIGHT * file_evidence(o, c->sp.path) +
               ANSWER_CENTRAL_WEIGHT * (o ? list_prior(o->central, o->ncentral, c->sp.path) : 0);
}

/* A verbatim span of pool holding all of sp's lines, or NULL. */
static const struct evidence_span *verbatim_cover(const struct evidence *pool, const struct evidence_span *sp)
{
    for (size_t i = 0; i < pool->n; i++) {
        const struct evidence_span *v = &pool->v[i];
        if (!v->elided && v->text && v->path && !strcmp(v->path, sp->path) && v->start_line <= sp->start_line &&
            sp->end_line <= v->end_line)
            return v;
    }
    return NULL;
}

struct cands {
    struct cand *v;
    size_t n, cap;
};

static struct cand *cands_add(struct cands *cs, const struct evidence_span *sp, int a, int b, char *text, double prior,
                              int order)
{
    ARRAY_GROW(cs->v, cs->n, cs->cap, 16);
    struct cand *c = &cs->v[cs->n++];
    memset(c, 0, sizeof *c);
    c->sp.path = xstrdup(sp->path);
    c->sp.start_line = a;
    c->sp.end_line = b;
    c->sp.text = text;
    c->sp.label = sp->label ? xstrdup(sp->label) : NULL;
    c->sp.elided = sp->elided;
    c->prior = prior;
    c->order = order;
    c->big = -1;
    return c;
}

/* Definitions lying inside a long span, each as its own candidate. */
static size_t refine(sqlite3 *db, struct enclosing_st *k, const struct evidence_span *sp, double prior, int order,
                     struct cands *cs)
{
    if (!k->refine &&
        sqlite3_prepare_v2(db,
                           "SELECT s.start_line, s.end_line, s.qualname, s.signature, drqa_doc(s.docstring), s.kind "
                           "FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ?1 "
                           "AND s.start_line >= ?2 AND s.end_line <= ?3 AND s.kind != 'variable' "
                           "AND s.end_line - s.start_line < ?4 ORDER BY s.start_line",
                           -1, &k->refine, NULL) != SQLITE_OK)
        return 0;
    sqlite3_stmt *st = k->refine;
    sqlite3_bind_text(st, 1, sp->path, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, sp->start_line);
    sqlite3_bind_int(st, 3, sp->end_line);
    sqlite3_bind_int(st, 4, ANSWER_REFINE_MAX_DEF);
    size_t added = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int a = sqlite3_column_int(st, 0), b = sqlite3_column_int(st, 1);
        char *text = text_lines(sp->text, sp->start_line, a, b);
        if (!text) continue;
        struct cand *c = cands_add(cs, sp, a, b, text, prior, order);
        free(c->sp.label);
        c->sp.label = sqlx_col_dup_nonempty(st, 3);
        c->qual = sqlx_col_dup_nonempty(st, 2);
        c->sig = sqlx_col_dup_nonempty(st, 3);
        c->doc = sqlx_col_dup_nonempty(st, 4);
        c->kind = sqlx_col_dup_nonempty(st, 5);
        c->def_start = a;
        c->def_end = b;
        c->big = order;
        added++;
    }
    sqlite3_reset(st);
    return added;
}

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int xr = x->caller || x->subclass, yr = y->caller || y->subclass;
    if (xr != yr) return yr - xr;
    if (x->named != y->named) return y->named - x->named;
    if (x->in_named_file != y->in_named_file) return y->in_named_file - x->in_named_file;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->order - y->order;
}

/* First sentence (or first line) of a docstring, trimmed; caller frees. */
static char *first_sentence(const char *doc)
{
    while (*doc && isspace((unsigned char)*doc)) doc++;
    const char *e = doc;
    while (*e && *e != '\n' && !(*e == '.' && (e[1] == ' ' || e[1] == '\n' || !e[1]))) e++;
    if (*e == '.') e++;
    return xstrndup(doc, (size_t)(e - doc));
}

/* The docstring written in a span's text (after its def/class line), when
 * the index did not give one. */
static char *doc_from_text(const char *text)
{
    if (!text) return NULL;
    const char *p = strstr(text, "\"\"\"");
    const char *q = strstr(text, "'''");
    if (!p || (q && q < p)) p = q;
    if (!p || p - text > 400) return NULL;
    const char *delim = p[0] == '"' ? "\"\"\"" : "'''";
    const char *e = strstr(p + 3, delim);
    if (!e) return NULL;
    return xstrndup(p + 3, (size_t)(e - p - 3));
}

struct line_pick {
    int line;
    double score;
};

static int cmp_pick(const void *a, const void *b)
{
    const struct line_pick *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->line - y->line;
}

static int cmp_pick_line(const void *a, const void *b)
{
    return ((const struct line_pick *)a)->line - ((const struct line_pick *)b)->line;
}

/* The up to k lines of a verbatim span that match the question best; its
 * first line too unless the heading shows it (first_shown: a signature). */
static size_t decisive_lines(const struct qparse *q, const struct cand *c, size_t k, int first_shown,
                             struct line_pick *out)
{
    if (!c->sp.text || c->sp.elided) return 0;
    size_t n = 0, cap = 0;
    struct line_pick *all = NULL;
    const char *p = c->sp.text;
    int line = c->sp.start_line;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *s = p;
        while (s < p + len && isspace((unsigned char)*s)) s++;
        int skip = s == p + len || (first_shown && line == c->sp.start_line) || !strncmp(s, "\"\"\"", 3) ||
                   !strncmp(s, "'''", 3);
        if (!skip) {
            double sc = qparse_match(q, p, len, NULL);
            for (size_t i = 0; i < q->nids; i++)
                if (len >= strlen(q->ids[i].base) && memmem(p, len, q->ids[i].base, strlen(q->ids[i].base))) sc += 0.3;
            if (sc > 0) {
                ARRAY_GROW(all, n, cap, 32);
                all[n].line = line;
                all[n].score = sc;
                n++;
            }
        }
        if (!nl) break;
        p = nl + 1;
        line++;
    }
    if (n) qsort(all, n, sizeof *all, cmp_pick);
    if (n > k) n = k;
    if (n) memcpy(out, all, n * sizeof *out);   /* all is NULL when nothing was picked */
    free(all);
    if (n) qsort(out, n, sizeof *out, cmp_pick_line);
    return n;
}

static void quote_lines(struct buf *b, const struct cand *c, const struct line_pick *picks, size_t n)
{
    if (!n) return;
    buf_adds(b, "\n   ```\n");
    for (size_t i = 0; i < n; i++) {
        char *l = text_lines(c->sp.text, c->sp.start_line, picks[i].line, picks[i].line);
        if (!l) continue;
        const char *s = l;
        while (*s == ' ' || *s == '\t') s++;
        buf_printf(b, "   %d: %.*s\n", picks[i].line, utf8_cut(s, 160), s);
        free(l);
    }
    buf_adds(b, "   ```\n");
}

static const char *display_name(const struct cand *c, char *out, size_t outlen)
{
    /* a span of no definition (module-level code, a window) is named by
     * where it is: its label, "lines 1-361", names nothing */
    if (c->qual) snprintf(out, outlen, "%s", c->qual);
    else if (c->sp.label && strncmp(c->sp.label, "lines ", 6) && strncmp(c->sp.label, "module ", 7))
        snprintf(out, outlen, "%s", c->sp.label);
    else snprintf(out, outlen, "%s:%d-%d", c->sp.path, c->sp.start_line, c->sp.end_line);
    return out;
}

/* 1 when the call at p in text t has one of the receivers recvs: "" a bare
 * name(), else recv.name() with nothing longer before recv. */
static int receiver_is(const char *t, const char *p, const char *const *recvs)
{
    for (size_t i = 0; recvs[i]; i++) {
        size_t rl = strlen(recvs[i]);
        if (!rl) {
            if (p == t || p[-1] != '.') return 1;
            continue;
        }
        const char *r = p - rl - 1;
        if (p - t >= (ptrdiff_t)rl + 1 && p[-1] == '.' && !strncmp(r, recvs[i], rl) &&
            (r == t || !(isalnum((unsigned char)r[-1]) || r[-1] == '_' || r[-1] == '.')))
            return 1;
    }
    return 0;
}

/* Is name called in text (name followed by '(' after a non-word byte)? Line
 * number of the first call, or 0. Comments and strings are not code:
 * "# set by Form.clean()" and 'factorint(12, visual=True)' call nothing. recvs (NULL-terminated; NULL:
 * any call) are the receivers a call may have: "" a bare name(), "self"
 * self.name(), and so on. */
static int calls_at_ex(const struct cand *c, const char *name, const char *const *recvs)
{
    size_t nl = strlen(name);
    if (!c->sp.text || nl < 2 || c->sp.elided || c->prose) return 0;
    const char *t = c->sp.text;
    int line = c->sp.start_line;
    char in_doc = 0;                   /* the quote of an open triple-quoted string */
    for (const char *p = t; *p; p++) {
        if (*p == '\n') { line++; continue; }
        if ((*p == '"' || *p == '\'') && p[1] == *p && p[2] == *p) {
            if (!in_doc) in_doc = *p;
            else if (in_doc == *p) in_doc = 0;
            p += 2;
            continue;
        }
        if (in_doc) continue;
        /* a string literal on one line: 'use name(x)' is text, not a call
         * (an f-string's text is read, for the calls in its braces) */
        if ((*p == '"' || *p == '\'') && !(p > t && (p[-1] == 'f' || p[-1] == 'F'))) {
            char q = *p;
            while (p[1] && p[1] != '\n' && p[1] != q) p += p[1] == '\\' && p[2] && p[2] != '\n' ? 2 : 1;
            if (p[1] == q) p++;
            continue;
        }
        if (*p == '#') {               /* to the end of the line */
            while (p[1] && p[1] != '\n') p++;
            continue;
        }
        if (strncmp(p, name, nl) || p[nl] != '(') continue;
        if (p > t && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        /* super().name() is a base class's, which no citation is known to be */
        if (p - t >= 8 && !strncmp(p - 8, "super().", 8)) continue;
        /* not the definition itself: "def name(" nor "class Name(Base)" */
        if (p - t >= 4 && !strncmp(p - 4, "def ", 4)) continue;
        if (p - t >= 6 && !strncmp(p - 6, "class ", 6)) continue;
        if (recvs && !receiver_is(t, p, recvs)) continue;
        return line;
    }
    return 0;
}


/* The class part of a method's qualified name ("Flask" of
 * "Flask.dispatch_request"), as a length into c->qual; 0 when none. */
static size_t owner_len(const struct cand *c)
{
    const char *dot = c->qual ? strrchr(c->qual, '.') : NULL;
    return dot ? (size_t)(dot - c->qual) : 0;
}

static int same_owner(const struct cand *a, const struct cand *b)
{
    size_t la = owner_len(a), lb = owner_len(b);
    return la && la == lb && !strncmp(a->qual, b->qual, la) && !strcmp(a->sp.path, b->sp.path);
}

/* 1 when a and b both start the same definition: two views of one class or
 * function (its head read verbatim, its outline), which say nothing of each
 * other and are one citation's worth. */
static int same_definition(const struct cand *a, const struct cand *b)
{
    return a->def_start && a->def_start == b->def_start && a->sp.start_line == a->def_start &&
           b->sp.start_line == b->def_start && !strcmp(a->sp.path, b->sp.path);
}

/* How many files among sel[0..n) have a candidate of short name nm (two
 * spans of one definition are one definition). */
static size_t name_count(const struct cand *sel, size_t n, const char *nm)
{
    size_t k = 0;
    char nj[128];
    for (size_t j = 0; j < n; j++) {
        if (strcmp(short_name(&sel[j], nj, sizeof nj), nm)) continue;
        int again = 0;
        for (size_t i = 0; i < j && !again; i++)
            again = !strcmp(sel[i].sp.path, sel[j].sp.path) && !strcmp(short_name(&sel[i], nj, sizeof nj), nm);
        k += !again;
    }
    return k;
}

/* name_count of every candidate's short name among all of cs, each name
 * taken once (a window answer has hundreds of candidates: name_count for
 * each would compare every pair for every candidate). Caller frees. */
static size_t *name_counts(const struct cands *cs)
{
    size_t n = cs->n;
    char (*names)[128] = xcalloc(n ? n : 1, sizeof *names);
    unsigned char *first = xcalloc(n ? n : 1, 1);   /* no earlier candidate of its file has its name */
    size_t *count = xcalloc(n ? n : 1, sizeof *count);
    for (size_t j = 0; j < n; j++) short_name(&cs->v[j], names[j], sizeof names[j]);
    for (size_t j = 0; j < n; j++) {
        first[j] = 1;
        for (size_t i = 0; i < j && first[j]; i++)
            first[j] = strcmp(names[i], names[j]) || strcmp(cs->v[i].sp.path, cs->v[j].sp.path);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) count[i] += first[j] && !strcmp(names[i], names[j]);
    free(names);
    free(first);
    return count;
}

/* 1 when word w (length n) is at p in t as a whole word. */
static int word_at(const char *t, const char *p, const char *w, size_t n)
{
    return !strncmp(p, w, n) && !(isalnum((unsigned char)p[n]) || p[n] == '_') &&
           (p == t || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'));
}

/* 1 when c binds name itself, so that a bare name() in it calls its own
 * name, not a module's function: a parameter of its signature
 * ('loads=json.loads' in 'def from_env(prefix, loads=json.loads)'), or a
 * line of its body assigning it ('loads = pick()', 'for loads in ...'). */
static int binds_locally(const struct cand *c, const char *name)
{
    size_t n = strlen(name);
    const char *sig = c->sig, *lp = sig ? strchr(sig, '(') : NULL;
    for (const char *p = lp; p && *p; p++) {
        /* a parameter starts after '(' or ',' (then blanks and stars) */
        if (*p != '(' && *p != ',') continue;
        const char *a = p + 1;
        while (*a == ' ' || *a == '*') a++;
        if (word_at(sig, a, name, n)) return 1;
    }
    for (const char *l = c->sp.text; l && *l;) {
        const char *e = strchr(l, '\n');
        if (!e) e = l + strlen(l);
        const char *a = l;
        while (a < e && (*a == ' ' || *a == '\t')) a++;
        if (!strncmp(a, "for ", 4)) a += 4;
        if (word_at(l, a, name, n)) {
            const char *z = a + n;
            while (z < e && *z == ' ') z++;
            if (z < e && *z == ':') {                    /* an annotation: 'name: T = v' */
                while (z < e && *z != '=') z++;
            }
            if ((z < e && *z == '=' && z[1] != '=') || !strncmp(z, "in ", 3)) return 1;
        }
        l = *e ? e + 1 : e;
    }
    return 0;
}

/* The line where sel[i] calls sel[j], or 0. A method (its class known from
 * the index) is reached through its class's name (Owner.name()) or, from a
 * method of its own class, through self: kwargs.get() in Session.send is no
 * call of Session.get, nor obj.send() of a cited send(), whatever obj may
 * be. A module's function is reached by its name or through its module or a
 * package above it (api.get(), not kwargs.get() nor self.get()), when it is
 * the only cited definition of that name; a name several cited functions
 * share names none of them. */
static int resolved_call(const struct cand *sel, size_t n, size_t i, size_t j)
{
    char nj[128];
    short_name(&sel[j], nj, sizeof nj);
    if (!*nj) return 0;
    size_t ol = owner_len(&sel[j]);
    if (ol) {
        const char *cls = sel[j].qual;
        for (size_t k = 0; k < ol; k++)
            if (sel[j].qual[k] == '.') cls = sel[j].qual + k + 1;
        char owner[128];
        snprintf(owner, sizeof owner, "%.*s", (int)(sel[j].qual + ol - cls), cls);
        int at = calls_at_ex(&sel[i], nj, (const char *const[]){owner, NULL});
        if (at) return at;
        return same_owner(&sel[i], &sel[j]) ? calls_at_ex(&sel[i], nj, (const char *const[]){"self", NULL}) : 0;
    }
    /* a special method ('__init__') is every class's: never reached by name */
    size_t jl = strlen(nj);
    int dunder = jl > 4 && !strncmp(nj, "__", 2) && !strcmp(nj + jl - 2, "__");
    if (dunder || name_count(sel, n, nj) > 1) return 0;
    if (!sel[j].qual) return calls_at_ex(&sel[i], nj, NULL);   /* no index: what kind it is is not known */
    /* the module and the packages above it: the components of its path */
    char path[512];
    snprintf(path, sizeof path, "%s", sel[j].sp.path);
    const char *recvs[32] = {""};
    size_t nr = 1;
    for (char *c = path, *e; *c && nr + 1 < ARRAY_LEN(recvs); c = e + 1) {
        e = c + strcspn(c, "/");
        int last = !*e;
        *e = 0;
        char *dot = last ? strrchr(c, '.') : NULL;
        if (dot) *dot = 0;
        if (*c) recvs[nr++] = c;
        if (last) break;
    }
    recvs[nr] = NULL;
    /* a name the caller binds itself is its own when called bare */
    return calls_at_ex(&sel[i], nj, binds_locally(&sel[i], nj) ? recvs + 1 : recvs);
}

/* The base classes a class signature lists ("class Model(metaclass=
 * ModelBase)" has none): its parenthesised arguments but keyword ones
 * (metaclass=, total=) and unpacked ones (*bases), into out (", " between
 * them). Returns 1 when there is any. */
static int class_bases(const char *sig, char *out, size_t outlen)
{
    out[0] = 0;
    const char *lp = sig ? strchr(sig, '(') : NULL, *rp = lp ? strrchr(lp, ')') : NULL;
    if (!lp || !rp) return 0;
    struct buf b = BUF_INIT;
    for (const char *p = lp + 1; p < rp;) {
        const char *e = p;
        int depth = 0, keyword = 0;
        for (; e < rp && (depth > 0 || *e != ','); e++) {
            if (strchr("([{", *e)) depth++;
            else if (strchr(")]}", *e)) depth--;
            else if (*e == '=' && depth == 0) keyword = 1;
        }
        const char *a = p, *z = e;
        while (a < z && isspace((unsigned char)*a)) a++;
        while (z > a && isspace((unsigned char)z[-1])) z--;
        if (z > a && !keyword && *a != '*') buf_printf(&b, "%s%.*s", b.len ? ", " : "", (int)(z - a), a);
        p = e < rp ? e + 1 : rp;
    }
    snprintf(out, outlen, "%s", buf_str(&b));
    buf_free(&b);
    return out[0] != 0;
}

static void relations(const struct cand *sel, size_t n, struct buf *b)
{
    int any = 0;
    char ni[128], nj[128], di[256], dj[256];
    for (size_t i = 0; i < n; i++) {
        short_name(&sel[i], ni, sizeof ni);
        display_name(&sel[i], di, sizeof di);
        for (size_t j = 0; j < n; j++) {
            if (i == j) continue;
            short_name(&sel[j], nj, sizeof nj);
            if (!*nj || !strcmp(ni, nj)) continue;
            int at = resolved_call(sel, n, i, j);
            if (!at) continue;
            display_name(&sel[j], dj, sizeof dj);
            if (!any) buf_adds(b, "\n**Relations seen in the code:**\n\n");
            any = 1;
            buf_printf(b, "- `%s` calls `%s` (`%s:%d`)\n", di, dj, sel[i].sp.path, at);
        }
        const char *sig = sel[i].sig ? sel[i].sig : sel[i].sp.label;
        char bases[256];
        if (sel[i].kind && !strcmp(sel[i].kind, "class") && class_bases(sig, bases, sizeof bases)) {
            if (!any) buf_adds(b, "\n**Relations seen in the code:**\n\n");
            any = 1;
            buf_printf(b, "- `%s` inherits from `%s`\n", di, bases);
        }
    }
}

static const char *lead(enum qtype t)
{
    switch (t) {
    case QTYPE_WHERE: return "The code this question is about is located here, most relevant first:";
    case QTYPE_WHAT: return "What the repository's code defines for this, most relevant first:";
    case QTYPE_HOW: return "How it works, following the code that implements it:";
    case QTYPE_WHY: return "Why, as far as the code and its documentation state it:";
    case QTYPE_OTHER: break;
    }
    return "The relevant code, most relevant first:";
}

/* For how-questions: order a selection so that a caller comes before what
 * it calls, keeping the relevance order otherwise. */
static void order_by_calls(struct cand *sel, size_t n)
{
    for (size_t pass = 0; pass < n; pass++) {
        int moved = 0;
        for (size_t i = 1; i < n && !moved; i++) {
            for (size_t j = 0; j < i; j++) {
                /* sel[j] is called by the later sel[i] and does not call it back */
                if (resolved_call(sel, n, i, j) && !resolved_call(sel, n, j, i)) {
                    struct cand tmp = sel[i];
                    memmove(&sel[j + 1], &sel[j], (i - j) * sizeof *sel);
                    sel[j] = tmp;
                    moved = 1;
                    break;
                }
            }
        }
        if (!moved) break;
    }
}

/* ------------------------------------------------------------- the head */

static int is_definition(const struct cand *c)
{
    return c->qual && c->kind && (!strcmp(c->kind, "function") || !strcmp(c->kind, "method") ||
                                  !strcmp(c->kind, "class") || !strcmp(c->kind, "variable"));
}

static int is_variable(const struct cand *c) { return c->qual && c->kind && !strcmp(c->kind, "variable"); }

/* 1 when c's code holds name as a whole word. */
static int holds_word(const struct cand *c, const char *name)
{
    return c->sp.text && !c->sp.elided && !c->prose && text_has_word(c->sp.text, name);
}

/* The head when its subject, sel[s], is a variable: where it is defined, its
 * first line when short, and which other citations use it. */
static void write_head_variable(const struct cand *sel, size_t n, size_t s, struct buf *b)
{
    const struct cand *c = &sel[s];
    char nm[128], d[256];
    short_name(c, nm, sizeof nm);
    buf_printf(b, "**In short:** `%s` is defined in `%s` at line %d [%zu]", c->qual, c->sp.path, c->sp.start_line,
               s + 1);
    /* a definition on one line is quoted whole */
    const char *t = c->sp.text;
    size_t len = t && c->sp.start_line == c->sp.end_line ? strcspn(t, "\n") : 0;
    while (len && isspace((unsigned char)t[len - 1])) len--;
    if (len && len <= 100 && !memchr(t, '`', len)) buf_printf(b, ": `%.*s`", (int)len, t);
    size_t users[2];
    int nusers = 0;
    for (size_t i = 0; i < n && nusers < 2; i++) {
        if (i == s || !holds_word(&sel[i], nm)) continue;
        int again = 0;   /* two spans of one function are one user */
        for (int u = 0; u < nusers; u++)
            again |= sel[users[u]].qual && sel[i].qual && !strcmp(sel[users[u]].qual, sel[i].qual);
        if (again) continue;
        users[nusers] = i;
        buf_adds(b, nusers++ ? " and " : "; it is used in ");
        buf_printf(b, "`%s` [%zu]", display_name(&sel[i], d, sizeof d), i + 1);
    }
    buf_adds(b, ".\n\n");
}

/* The setting the first citations read that the question asks of
 * (answer_setting.h), over the code spans among them. */
static int find_setting(const struct qparse *q, const struct cand *sel, size_t n, struct answer_setting *out)
{
    const char *texts[ANSWER_SETTING_SPANS] = {0};
    int starts[ANSWER_SETTING_SPANS] = {0};
    size_t k = n < ANSWER_SETTING_SPANS ? n : ANSWER_SETTING_SPANS;
    for (size_t i = 0; i < k; i++)
        if (sel[i].sp.text && !sel[i].sp.elided && !sel[i].prose) {
            texts[i] = sel[i].sp.text;
            starts[i] = sel[i].sp.start_line;
        }
    return answer_setting_find(q, texts, starts, k, out);
}

static void head_name(struct buf *b, const struct cand *c)
{
    if (c->qual) buf_printf(b, "`%s` in `%s`", c->qual, c->sp.path);
    else buf_printf(b, "`%s:%d-%d`", c->sp.path, c->sp.start_line, c->sp.end_line);
}

/* One or two sentences stating what the cited code shows: the definition
 * that does what the question asks about, what calls it and what it calls
 * among the citations, and the setting that controls it when a cited span
 * reads one named by the question's words. Every claim carries the number
 * of its citation ([n], the position in the citation list). */
/* The name whose callers q asks for ("What calls get_response?"), or NULL. */
static const char *callee_of(const struct qparse *q)
{
    return q->callers_of && q->callers_of <= q->nids ? q->ids[q->callers_of - 1].base : NULL;
}

/* The class whose subclasses q asks for ("Which classes inherit from
 * BaseHandler?"), or NULL. */
static const char *base_of(const struct qparse *q)
{
    return q->subclasses_of && q->subclasses_of <= q->nids ? q->ids[q->subclasses_of - 1].base : NULL;
}

/* 1 when c is a class one of whose bases is base (by its last dotted
 * component: 'base.BaseHandler' names BaseHandler; 'Generic[T]' Generic). */
static int inherits_from(const struct cand *c, const char *base)
{
    if (!c->kind || strcmp(c->kind, "class")) return 0;
    char bases[512];
    if (!class_bases(c->sig ? c->sig : c->sp.label, bases, sizeof bases)) return 0;
    size_t bl = strlen(base);
    for (char *p = bases; *p;) {
        size_t n = strcspn(p, ",");
        char *e = p + n;
        size_t m = strcspn(p, "[");   /* no subscript */
        if (m > n) m = n;
        while (m && p[m - 1] == ' ') m--;
        const char *last = p;
        for (size_t k = 0; k < m; k++)
            if (p[k] == '.') last = p + k + 1;
        while (*last == ' ') last++;
        if ((size_t)(p + m - last) == bl && !strncmp(last, base, bl)) return 1;
        p = *e ? e + 1 : e;
        while (*p == ' ') p++;
    }
    return 0;
}

/* Names up to three of the citations that line() marks (a line above 0),
 * each with that line and its number: "`A` (`p:12`) [1], `B` (`q:3`) [2]
 * and `C` (`r:5`) [4], and N more cited below". */
static void list_marked(const struct cand *sel, size_t n, int (*line)(const struct cand *), struct buf *b)
{
    /* a place once: two citations holding the same line (a class's
     * definition and a window that starts at it) are one subclass or call */
    size_t k = 0, shown = 0;
    unsigned char *again = xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) {
        if (line(&sel[i]) <= 0) continue;
        for (size_t j = 0; j < i && !again[i]; j++)
            again[i] = line(&sel[j]) == line(&sel[i]) && !strcmp(sel[j].sp.path, sel[i].sp.path);
        k += !again[i];
    }
    char d[256];
    for (size_t i = 0; i < n && shown < 3; i++) {
        if (line(&sel[i]) <= 0 || again[i]) continue;
        shown++;
        buf_adds(b, shown == 1 ? "" : shown == k || shown == 3 ? " and " : ", ");
        if (sel[i].qual || (sel[i].sp.label && strncmp(sel[i].sp.label, "lines ", 6) &&
                            strncmp(sel[i].sp.label, "module ", 7)))
            buf_printf(b, "`%s` (`%s:%d`) [%zu]", display_name(&sel[i], d, sizeof d), sel[i].sp.path, line(&sel[i]),
                       i + 1);
        else   /* a span of no definition (a window, module code): where it is says all */
            buf_printf(b, "the code at `%s:%d` [%zu]", sel[i].sp.path, line(&sel[i]), i + 1);
    }
    if (k > shown) buf_printf(b, ", and %zu more cited below", k - shown);
    free(again);
}

static int call_line(const struct cand *c) { return c->caller; }
static int class_line(const struct cand *c) { return !c->subclass ? 0 : c->def_start ? c->def_start : c->sp.start_line; }

/* What the index records of the name a callers or subclasses question asks
 * about: its calls or subclasses (index_count_refs) and its definitions
 * (index_count_defs); -1 each when there is no such question or no index. */
struct relation_counts {
    long refs, defs;
};

/* The head of a question asking what calls a name, or for the subclasses
 * of a class: the cited code that calls it, each with the line of its call,
 * or the cited classes that inherit from it, each with the line of its
 * class statement. 0 when no citation is one (the usual head is written). */
static int write_head_relation(const struct qparse *q, const struct cand *sel, size_t n, long ndefs, struct buf *b)
{
    const char *x = callee_of(q), *base = base_of(q);
    int (*line)(const struct cand *) = x ? call_line : class_line;
    size_t k = 0;
    for (size_t i = 0; (x || base) && i < n; i++) k += line(&sel[i]) > 0;
    if (!k) return 0;
    buf_printf(b, "**In short:** `%s` is %s by ", x ? x : base, x ? "called" : "subclassed");
    list_marked(sel, n, line, b);
    buf_printf(b, ". These are the %s the cited code shows", x ? "calls" : "subclasses");
    /* a name several definitions share: the edges by name reach any of them */
    if (ndefs > 1)
        buf_printf(b, ", of any of the %ld %s named `%s`", ndefs, x ? "functions and methods" : "classes", x ? x : base);
    buf_adds(b, "; the index may list more (FindReferences).\n\n");
    return 1;
}

/* The subject of the head: among the leading citations, the definition of
 * a name the question writes (*named set), else the best definition, else
 * the first citation. */
static size_t head_subject(const struct qparse *q, const struct cand *sel, size_t n, int *named)
{
    *named = 0;
    for (size_t i = 0; i < n && i < 3; i++) {
        char nm[128];
        short_name(&sel[i], nm, sizeof nm);
        for (size_t k = 0; k < q->nids && is_definition(&sel[i]); k++)
            if (!strcmp(q->ids[k].base, nm)) {
                *named = 1;
                return i;
            }
    }
    for (size_t i = 0; i < n && i < 3; i++)
        if (is_definition(&sel[i])) return i;
    return 0;
}

/* The head's first claim about its subject c = sel[s]: what it is to the
 * question, as the question's type asks (absent: the question's words no
 * file says, when any), and for a what- or why-question what its
 * documentation says. */
static void write_claim(const struct qparse *q, const struct cand *c, size_t s, int named, const char *absent,
                        struct buf *b)
{
    int cls = c->kind && !strcmp(c->kind, "class");
    if (absent) {
        buf_adds(b, "the closest code is ");
        head_name(b, c);
        buf_printf(b, " [%zu]", s + 1);
        return;
    }
    if (!is_definition(c)) {
        buf_adds(b, "the question's words meet in ");
        head_name(b, c);
        buf_printf(b, " [%zu]", s + 1);
        return;
    }
    switch (q->type) {
    case QTYPE_WHERE:
    case QTYPE_WHAT:
        /* "Where is the Flask class defined?", "What does Session.request
         * do?": where the definition asked about is (and below, for a
         * what-question, what its documentation says) */
        if (named && c->def_start) {
            buf_printf(b, "`%s` is defined in `%s` at line %d [%zu]", c->qual, c->sp.path, c->def_start, s + 1);
            break;
        }
        if (q->type == QTYPE_WHERE) buf_adds(b, "this happens in ");
        head_name(b, c);
        if (q->type == QTYPE_WHERE) buf_printf(b, " [%zu]", s + 1);
        else buf_printf(b, " [%zu] %s", s + 1, cls ? "defines it" : "does it");
        break;
    case QTYPE_WHY:
        /* the reason is the reader's to draw: the head says where the
         * code bears on it, not that some code "does" a why */
        buf_adds(b, "the code that bears on it is ");
        head_name(b, c);
        buf_printf(b, " [%zu]", s + 1);
        break;
    default:
        buf_printf(b, "the %s that does it is ", cls ? "class" : "code");
        head_name(b, c);
        buf_printf(b, " [%zu]", s + 1);
        break;
    }
    char *doc = c->doc ? xstrdup(c->doc)
                       : (c->sp.end_line - c->sp.start_line < ANSWER_REFINE_LINES ? doc_from_text(c->sp.text) : NULL);
    if (doc && (q->type == QTYPE_WHAT || q->type == QTYPE_WHY)) {
        char *fs = first_sentence(doc);
        size_t fl = strlen(fs);
        while (fl && (fs[fl - 1] == '.' || fs[fl - 1] == ':' || isspace((unsigned char)fs[fl - 1]))) fs[--fl] = 0;
        if (*fs) buf_printf(b, ", documented as \"%.*s\"", utf8_cut(fs, 200), fs);
        free(fs);
    }
    free(doc);
}

/* The head when nothing else says more: a call seen between two other
 * citations, else the next file's best citation. */
static void write_see_also(const struct cand *sel, size_t n, size_t s, struct buf *b)
{
    char d[256], d2[256];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (i == j || i == s || j == s || !resolved_call(sel, n, i, j)) continue;
            buf_printf(b, " `%s` [%zu] calls `%s` [%zu].", display_name(&sel[i], d, sizeof d), i + 1,
                       display_name(&sel[j], d2, sizeof d2), j + 1);
            return;
        }
    if (n > 1 && s != 1 && strcmp(sel[1].sp.path, sel[s].sp.path)) {
        buf_adds(b, " See also ");
        head_name(b, &sel[1]);
        buf_adds(b, " [2].");
    } else if (n > 1 && s == 1) {
        buf_adds(b, " See also ");
        head_name(b, &sel[0]);
        buf_adds(b, " [1].");
    }
}

/* The head of a what-question about one file it names and nothing else
 * ("What does cli.py do?"): the cited definitions of that file. 0 when the
 * first citation is not of it. */
static int write_head_file(const struct qparse *q, const struct cand *sel, size_t n, struct buf *b)
{
    if (q->type != QTYPE_WHAT || q->nfiles != 1 || q->nids || !sel[0].in_named_file) return 0;
    size_t k = 0, shown = 0;
    for (size_t i = 0; i < n; i++) k += sel[i].in_named_file && sel[i].qual;
    if (!k) return 0;
    char d[256];
    buf_printf(b, "**In short:** `%s` defines ", sel[0].sp.path);
    for (size_t i = 0; i < n && shown < 3; i++) {
        if (!sel[i].in_named_file || !sel[i].qual) continue;
        shown++;
        buf_adds(b, shown == 1 ? "" : shown == k || shown == 3 ? " and " : ", ");
        buf_printf(b, "`%s` [%zu]", display_name(&sel[i], d, sizeof d), i + 1);
    }
    if (k > shown) buf_printf(b, " (and %zu more cited below)", k - shown);
    buf_adds(b, ", among the code cited here; Outline on the file lists all it defines.\n\n");
    return 1;
}

/* When the question asks for callers or subclasses and no citation is one:
 * what the index records of them (nrefs, index_count_refs; -1 unknown), said
 * before the usual head. */
static void write_relation_none(const struct qparse *q, long nrefs, struct buf *b)
{
    const char *x = callee_of(q), *base = base_of(q);
    if ((!x && !base) || nrefs < 0) return;
    if (nrefs == 0)
        buf_printf(b, "the index records no %s `%s` in the repository; ", x ? "call of" : "class inheriting from",
                   x ? x : base);
    else
        buf_printf(b, "the index records %ld %s `%s`, none among the code cited here (FindReferences lists them); ",
                   nrefs, x ? (nrefs == 1 ? "call of" : "calls of") : (nrefs == 1 ? "class inheriting from" :
                                                                        "classes inheriting from"),
                   x ? x : base);
}

static void write_head(const struct qparse *q, const struct cand *sel, size_t n, const struct relation_counts *rc,
                       struct buf *b)
{
    if (!n) return;
    if (write_head_relation(q, sel, n, rc->defs, b) || write_head_file(q, sel, n, b)) return;
    int named;
    size_t s = head_subject(q, sel, n, &named);
    const struct cand *c = &sel[s];
    if (is_variable(c)) {
        write_head_variable(sel, n, s, b);
        return;
    }
    /* words of the question the repository says nowhere: the head names
     * the closest code, not the code that does it */
    struct buf absent = BUF_INIT;
    size_t nabsent = named ? 0 : qparse_absent_words(q, ANSWER_ABSENT_WORDS, &absent);
    if (nabsent > ANSWER_ABSENT_WORDS) buf_printf(&absent, " and %zu more of its words", nabsent - ANSWER_ABSENT_WORDS);
    buf_adds(b, "**In short:** ");
    write_relation_none(q, rc->refs, b);
    write_claim(q, c, s, named, nabsent ? buf_str(&absent) : NULL, b);
    /* what calls it and what it calls, among the citations */
    char d[256];
    int ncallers = 0, ncallees = 0;
    for (size_t i = 0; i < n && ncallers < 2; i++) {
        if (i == s || same_definition(&sel[i], c) || !resolved_call(sel, n, i, s)) continue;
        buf_adds(b, ncallers++ ? " and " : "; it is called by ");
        buf_printf(b, "`%s` [%zu]", display_name(&sel[i], d, sizeof d), i + 1);
    }
    for (size_t j = 0; j < n && ncallees < 2; j++) {
        if (j == s || same_definition(&sel[j], c) || !resolved_call(sel, n, s, j)) continue;
        buf_adds(b, ncallees++ ? " and " : ncallers ? ", and it calls " : "; it calls ");
        buf_printf(b, "`%s` [%zu]", display_name(&sel[j], d, sizeof d), j + 1);
    }
    char bases[256];
    if (!ncallers && !ncallees && c->kind && !strcmp(c->kind, "class") &&
        class_bases(c->sig ? c->sig : c->sp.label, bases, sizeof bases))
        buf_printf(b, "; it inherits from `%s` [%zu]", bases, s + 1);
    buf_adds(b, ".");
    if (nabsent)
        buf_printf(b, " " METRICS_ABSENT_LEAD "%s, so the citations match the question's other words.",
                   buf_str(&absent));
    buf_free(&absent);
    struct answer_setting st;
    if (find_setting(q, sel, n, &st))
        buf_printf(b, " The setting `%s` controls it: `%s:%d` [%zu] reads it.", st.key, sel[st.cite].sp.path, st.line,
                   st.cite + 1);
    else if (!ncallers && !ncallees)
        write_see_also(sel, n, s, b);
    buf_adds(b, "\n\n");
}

/* A question that writes a name explicitly (`Flask`, "the Blueprint class",
 * jsonify(), "What does simplify do?") and whose candidates define it in one
 * file only asks about that definition: the spans that start it go first,
 * the one that holds all of it (a class's outline) before its head, whatever
 * else matches the question's words better (a class of 2,000 lines, seen
 * whole or by its head, scores below its own methods otherwise). A name
 * written alone whose candidates define it at module level in one file and
 * as methods elsewhere names the module-level one (sympy's simplify(), not
 * Basic.simplify), as FindFunction ranks them. A name defined in several
 * files otherwise (`get`, `__init__`) does not say which one is meant: it
 * keeps its bonus, shared among them (score_cand). ndefs: name_counts of cs. */
static int top_level(const struct cand *c) { return c->qual && !strchr(c->qual, '.'); }

static void named_first(const struct qparse *q, struct cands *cs, const size_t *ndefs)
{
    char nm[128], other[128];
    for (size_t i = 0; i < cs->n; i++) {
        struct cand *c = &cs->v[i];
        if (!is_definition(c) || !c->def_start || c->sp.start_line != c->def_start) continue;
        short_name(c, nm, sizeof nm);
        for (size_t k = 0; k < q->nids && !c->named; k++) {
            if (!q->ids[k].explicit_ || strcmp(q->ids[k].base, nm)) continue;
            int one = ndefs[i] == 1;
            if (!one && !strchr(q->ids[k].name, '.') && top_level(c)) {
                /* the only module-level definition of the name among them */
                one = 1;
                for (size_t j = 0; j < cs->n && one; j++) {
                    const struct cand *d = &cs->v[j];
                    if (is_definition(d) && top_level(d) && strcmp(d->sp.path, c->sp.path) &&
                        !strcmp(short_name(d, other, sizeof other), nm))
                        one = 0;
                }
            }
            if (one) c->named = c->sp.end_line == c->def_end ? 2 : 1;
        }
    }
}

/* 1 when path (relative to the repository) is the file a question writes
 * as name: the same, or one ends with the other after a '/' ("cli.py" and
 * "flask/cli.py" name src/flask/cli.py's "flask/cli.py"). */
static int same_file(const char *path, const char *name)
{
    size_t pl = strlen(path), nl = strlen(name);
    if (pl == nl) return !strcmp(path, name);
    const char *longer = pl > nl ? path : name, *shorter = pl > nl ? name : path;
    size_t ll = pl > nl ? pl : nl, sl = pl > nl ? nl : pl;
    return longer[ll - sl - 1] == '/' && !strcmp(longer + ll - sl, shorter);
}

/* A question asking what calls a name is answered by the code that calls
 * it: those candidates go first (in their order), the name's own
 * definitions after them. */
static void callers_first(const struct qparse *q, struct cands *cs)
{
    const char *x = callee_of(q);
    for (size_t i = 0; x && i < cs->n; i++) cs->v[i].caller = calls_at_ex(&cs->v[i], x, NULL);
    const char *base = base_of(q);
    for (size_t i = 0; base && i < cs->n; i++) cs->v[i].subclass = inherits_from(&cs->v[i], base);
    /* a file the question names ("What does cli.py do?", "in flask/cli.py"):
     * its spans go first, as a named definition's do */
    for (size_t i = 0; i < cs->n; i++)
        for (size_t k = 0; k < q->nfiles && !cs->v[i].in_named_file; k++)
            cs->v[i].in_named_file = same_file(cs->v[i].sp.path, q->files[k]);
}

/* The candidates of pool, scored and sorted best first: every span (an
 * outline read verbatim too as those lines), and the definitions inside a
 * long one. With opts->ranked the pool's order is kept: its spans score by
 * their prior alone and are not cut. */
static void collect_cands(const struct qparse *q, const struct evidence *pool, sqlite3 *db,
                          const struct answer_opts *opts, struct cands *cs)
{
    int ranked = opts && opts->ranked;
    struct enclosing_st enc = {NULL, NULL, NULL};
    for (size_t i = 0; i < pool->n; i++) {
        const struct evidence_span *sp = &pool->v[i];
        if (!sp->path || sp->start_line < 1 || sp->end_line < sp->start_line) continue;
        /* An outline whose lines were also read verbatim is cited as those
         * lines, as the search verifies it (it prefers the verbatim view):
         * otherwise the cited outline would become a verbatim citation there
         * and merge with another, and the answer's numbering would no longer
         * match the citation list. */
        struct evidence_span view;
        char *view_text = NULL;
        if (sp->elided) {
            const struct evidence_span *v = verbatim_cover(pool, sp);
            if (v && (view_text = text_lines(v->text, v->start_line, sp->start_line, sp->end_line))) {
                view = *sp;
                view.text = view_text;
                view.elided = 0;
                sp = &view;
            }
        }
        int dup = 0;
        for (size_t k = 0; k < cs->n && !dup; k++)
            if (!strcmp(cs->v[k].sp.path, sp->path) && cs->v[k].sp.start_line == sp->start_line &&
                cs->v[k].sp.end_line == sp->end_line)
                dup = 1;
        if (dup) {
            free(view_text);
            continue;
        }
        double prior = sp->score > 0 && sp->score <= 1 ? sp->score : 0;
        int lines = sp->end_line - sp->start_line + 1;
        if (!ranked && lines > ANSWER_REFINE_LINES && db && !sp->elided && sp->text)
            refine(db, &enc, sp, prior, (int)i, cs);
        struct cand *c = cands_add(cs, sp, sp->start_line, sp->end_line, sp->text ? xstrdup(sp->text) : NULL,
                                   prior, (int)i);
        enclosing(db, &enc, c);
        free(view_text);
    }
    sqlite3_finalize(enc.def);
    sqlite3_finalize(enc.prose);
    sqlite3_finalize(enc.refine);
    size_t *ndefs = name_counts(cs);
    for (size_t i = 0; i < cs->n; i++)
        if (ranked) cs->v[i].score = cs->v[i].prior;
        else score_cand(q, opts, &cs->v[i], ndefs[i]);
    named_first(q, cs, ndefs);
    callers_first(q, cs);
    free(ndefs);
    qsort(cs->v, cs->n, sizeof *cs->v, cmp_cand);
}

/* 1 when the question is about prose rather than code: it names a file the
 * index reads as text (a README, a changelog, a config file: parse_text's
 * kinds, so that a text kind added there counts here), or the changelog or
 * the readme. ("documentation" is not enough: a question about a
 * documentation tool's code says it of the code.) */
static int asks_about_prose(const struct qparse *q)
{
    static const char *const words[] = {"changelog", "readme"};
    for (size_t i = 0; i < q->nfiles; i++)
        if (parse_is_text(parse_lang_for_path(q->files[i]))) return 1;
    for (size_t i = 0; i < q->nwords; i++)
        for (size_t k = 0; k < ARRAY_LEN(words); k++)
            if (!strcasecmp(q->words[i], words[k])) return 1;
    return 0;
}

/* 1 when one of sel[0..n) cites path. */
static int path_cited(const struct cand *sel, size_t n, const char *path)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(sel[k].sp.path, path)) return 1;
    return 0;
}

/* 1 when a candidate of code other than cs->v[i] holds a word of the
 * question (rel[j] > 0: answer_span_relevance), is not taken and is in a
 * file sel has no pick of yet: a file of prose at i waits for it. */
static int code_waits(const struct cands *cs, const unsigned char *taken, const double *rel, const struct cand *sel,
                      size_t nsel, size_t i)
{
    for (size_t j = 0; j < cs->n; j++) {
        if (j == i || taken[j] || cs->v[j].prose || rel[j] <= 0) continue;
        if (!path_cited(sel, nsel, cs->v[j].sp.path)) return 1;
    }
    return 0;
}

/* For each candidate: 1 when it is a definition in a test file whose name a
 * candidate outside the tests defines too (a test's subclass overriding the
 * method, a stub of the function): a stand-in for the code the question is
 * about, which says where to look once that code is cited; 2 when it is a
 * test itself (a definition of a test file named test...): it exercises
 * that code and is not it, so it does not lead the answer. Caller frees. */
static unsigned char *test_stand_ins(const struct cands *cs)
{
    size_t n = cs->n;
    unsigned char *in_test = xcalloc(n ? n : 1, 1), *stand = xcalloc(n ? n : 1, 1);
    char (*names)[128] = xcalloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; i < n; i++) {
        if (!is_definition(&cs->v[i])) continue;
        short_name(&cs->v[i], names[i], sizeof names[i]);
        in_test[i] = fpattern_is_test(cs->v[i].sp.path) != 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (in_test[i] && !strncasecmp(names[i], "test", 4)) stand[i] = 2;
        for (size_t j = 0; j < n && in_test[i] && names[i][0] && !stand[i]; j++)
            stand[i] = !in_test[j] && names[j][0] && !strcmp(names[i], names[j]);
    }
    free(names);
    free(in_test);
    return stand;
}

/* Selection: best first, no overlap within a file, at most two cut from
 * the same long span. The first `distinct` picks come from distinct files
 * (the leading citations say where to look; a second span of the best file
 * is worth less than the best span of another), then the rest by score, a
 * few per file; the file of the best span may give more, since that is
 * where the answer's other parts (the helpers, the class around a method,
 * the callers) usually are. An outline (elided span) and verbatim lines are
 * different views of a file: neither counts against the other's overlap or
 * per-file share. A file of prose (documentation, a changelog, a config
 * file: text chunks, no code) takes a distinct-file pick only when no file
 * of code that holds a word of the question is left to take it, unless the
 * question is about prose: a developer's question is answered by code
 * first, and a changelog that mentions every name would otherwise come
 * before it; a question only the README answers still cites it first. A
 * test's definition of a name the code defines too (test_stand_ins) takes no
 * distinct-file pick unless the question speaks of tests: a checkout's tests
 * override the method a how-question is about in a dozen test classes; and a
 * test (test_x, TestX in a test file) is not the first pick then. deep
 * (answer_opts.deep_rest): the rest come from the files already cited
 * before any other file.
 * Returns how many of cs went to sel (room for max). */
static size_t select_cands(const struct qparse *q, const struct cands *cs, size_t max, size_t distinct, double ratio,
                           int deep, struct cand *sel)
{
    unsigned char *taken = xcalloc(cs->n ? cs->n : 1, 1);
    size_t nsel = 0;
    size_t ndistinct = 0;   /* how many picks the first pass made */
    int prose_ok = asks_about_prose(q), any_prose = 0;
    unsigned char *stand_in = q->about_tests ? xcalloc(cs->n ? cs->n : 1, 1) : test_stand_ins(cs);
    int other_lead = 0;   /* a candidate that is no test holds a word of the question */
    for (size_t i = 0; i < cs->n && !other_lead; i++) other_lead = stand_in[i] != 2 && cs->v[i].score > 0;
    for (size_t i = 0; i < cs->n; i++) any_prose |= cs->v[i].prose;
    /* the code's relevance, read only when a file of prose may have to wait */
    double *rel = xcalloc(cs->n ? cs->n : 1, sizeof *rel);
    for (size_t i = 0; i < cs->n && any_prose && !prose_ok; i++)
        if (!cs->v[i].prose) rel[i] = answer_span_relevance(q, &cs->v[i].sp);
    /* pass 0 and 1: the distinct-file picks, first without a definition
     * whose qualified name another file's pick already has (the same class
     * in each of a family of near-identical files says where to look once;
     * a ranked pool too: six dialects' copies of one class ranked first by
     * a fusion would otherwise fill its leading citations), then with;
     * pass 2: the rest (deep: first those of the files cited, pass 3 the
     * others) */
    for (int pass = 0; pass < (deep ? 4 : 3); pass++) {
        if (pass == 2) ndistinct = nsel;
        size_t limit = pass < 2 ? (max < distinct ? max : distinct) : max;
        for (size_t i = 0; i < cs->n && nsel < limit; i++) {
            const struct cand *c = &cs->v[i];
            if (taken[i] || (pass < 2 && c->prose && !prose_ok && code_waits(cs, taken, rel, sel, nsel, i))) continue;
            if (deep && pass == 2 && !path_cited(sel, nsel, c->sp.path)) continue;
            if ((pass < 2 && stand_in[i] == 1) || (nsel == 0 && stand_in[i] == 2 && other_lead)) continue;
            int per_file = 0, per_big = 0, overlap = 0, same_qual = 0;
            for (size_t k = 0; k < nsel; k++) {
                if (pass == 0 && c->qual && sel[k].qual && !strcmp(c->qual, sel[k].qual)) same_qual = 1;
                if (same_definition(c, &sel[k])) overlap = 1;   /* whichever view */
                if (strcmp(sel[k].sp.path, c->sp.path)) continue;
                /* the distinct-file picks: one per file, whichever view */
                if (pass < 2) {
                    per_file++;
                    continue;
                }
                if (sel[k].sp.elided != c->sp.elided) continue;
                per_file++;
                if (c->big >= 0 && sel[k].big == c->big) per_big++;
                if (c->sp.start_line <= sel[k].sp.end_line && sel[k].sp.start_line <= c->sp.end_line) overlap = 1;
            }
            int cap = pass < 2 ? 1 : nsel && !strcmp(c->sp.path, sel[0].sp.path) ? ANSWER_PER_TOP_FILE : ANSWER_PER_FILE;
            if (overlap || per_file >= cap || per_big >= 2 || same_qual) continue;
            if (nsel > 0 && c->score <= 0) break;   /* nothing of the question in it */
            /* a file of its own only when it is a real contender */
            if (pass < 2 && nsel > 0 && c->score < ratio * sel[0].score) break;
            sel[nsel++] = *c;
            taken[i] = 1;
        }
    }
    free(taken);
    free(rel);
    free(stand_in);
    /* how: the best span stays first (the decisive one), the others follow
     * the calls seen between them */
    /* (within the distinct-file picks and within the rest, so that the
     * leading citations still name distinct files) */
    if (q->type == QTYPE_HOW && nsel > 2) {
        size_t nd = ndistinct < nsel ? ndistinct : nsel;
        if (nd > 2) order_by_calls(sel + 1, nd - 1);
        if (nsel - nd > 1) order_by_calls(sel + nd, nsel - nd);
    }
    return nsel;
}

/* The numbered spans: location, name, signature, the first sentence of the
 * documentation and the decisive lines of each. */
static void write_spans(const struct qparse *q, const struct cand *sel, size_t nsel, struct buf *b)
{
    char name[256];
    for (size_t i = 0; i < nsel; i++) {
        const struct cand *c = &sel[i];
        display_name(c, name, sizeof name);
        buf_printf(b, "%zu. `%s:%d-%d`", i + 1, c->sp.path, c->sp.start_line, c->sp.end_line);
        if (c->qual || c->sp.label) buf_printf(b, " — `%s`", name);
        const char *sig = c->sig ? c->sig : NULL;
        int sig_shown = sig && c->qual && strcmp(sig, name);
        if (sig_shown) buf_printf(b, ": `%.*s`", utf8_cut(sig, 200), sig);
        char *doc = c->doc ? xstrdup(c->doc) : (c->sp.end_line - c->sp.start_line < ANSWER_REFINE_LINES
                                                    ? doc_from_text(c->sp.text) : NULL);
        if (doc) {
            char *fs = first_sentence(doc);
            if (*fs) buf_printf(b, "\n   %s says: \"%s\"", c->kind && !strcmp(c->kind, "class") ? "Its docstring" : "Its documentation", fs);
            free(fs);
            free(doc);
        }
        buf_addc(b, '\n');
        struct line_pick picks[3];
        /* a definition's first line is its signature: quoted when the
         * heading does not show it (a variable, a window, a line inside
         * the definition the heading names) */
        size_t np = decisive_lines(q, c, q->type == QTYPE_WHERE ? 1 : 2,
                                   sig_shown && c->def_start == c->sp.start_line, picks);
        if (c->caller) {   /* the call itself is what the question asks for */
            picks[0] = (struct line_pick){c->caller, 0};
            np = 1;
        }
        quote_lines(b, c, picks, np);
    }
}

static void add_cites(const struct cand *sel, size_t nsel, struct evidence *cites)
{
    for (size_t i = 0; i < nsel; i++) {
        struct evidence_span *sp = evidence_add(cites, sel[i].sp.path, sel[i].sp.start_line, sel[i].sp.end_line,
                                                sel[i].sp.text, sel[i].qual ? sel[i].qual : sel[i].sp.label,
                                                sel[i].score);
        sp->elided = sel[i].sp.elided;
    }
}

static void cands_free(struct cands *cs)
{
    for (size_t i = 0; i < cs->n; i++) cand_free(&cs->v[i]);
    free(cs->v);
}

int answer_build(const struct qparse *q, const struct evidence *pool, sqlite3 *db, const struct answer_opts *opts,
                 char **markdown, struct evidence *cites, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    size_t max = opts && opts->max_cites ? opts->max_cites : ANSWER_MAX_CITES;
    size_t distinct = opts && opts->distinct_files ? opts->distinct_files : ANSWER_DISTINCT_FILES;
    double ratio = opts && opts->distinct_ratio > 0 ? opts->distinct_ratio : ANSWER_DISTINCT_RATIO;
    struct buf b = BUF_INIT;
    if (markdown) *markdown = NULL;
    if (!pool || pool->n == 0) {
        if (!markdown) return 0;
        buf_printf(&b, "No code in the repository was found that matches this question, so nothing can be "
                        "cited. Try naming a class, function or file, or other words for what the code does.\n");
        if (opts && opts->note) buf_printf(&b, "\n_%s_\n", opts->note);
        *markdown = buf_take(&b);
        return 0;
    }

    struct cands cs = {0};
    collect_cands(q, pool, db, opts, &cs);
    struct cand *sel = xcalloc(max ? max : 1, sizeof *sel);
    size_t nsel = select_cands(q, &cs, max, distinct, ratio, opts && opts->deep_rest, sel);

    if (markdown) {   /* (NULL: the citations alone are wanted) */
        const char *rel = callee_of(q) ? callee_of(q) : base_of(q);
        struct relation_counts rc = {-1, -1};
        if (rel) {
            rc.refs = index_count_refs(db, rel, callee_of(q) ? INDEX_EDGE_CALLS : INDEX_EDGE_INHERITS);
            rc.defs = index_count_defs(db, rel, !callee_of(q));
        }
        write_head(q, sel, nsel, &rc, &b);
        int calls = 0, subs = 0;
        for (size_t i = 0; i < nsel; i++) {
            calls |= sel[i].caller > 0;
            subs |= sel[i].subclass;
        }
        buf_printf(&b, "%s\n\n", calls  ? "The code that calls it comes first, then the rest, most relevant first:"
                                 : subs ? "The classes that inherit from it come first, then the rest, most relevant first:"
                                        : lead(q->type));
        write_spans(q, sel, nsel, &b);
        relations(sel, nsel, &b);
        if (opts && opts->note) buf_printf(&b, "\n_%s_\n", opts->note);
        *markdown = buf_take(&b);
    }
    add_cites(sel, nsel, cites);
    free(sel);
    cands_free(&cs);
    return 0;
}

size_t answer_verify(const struct evidence *seen, struct evidence *cites)
{
    size_t w = 0, dropped = 0;
    for (size_t i = 0; i < cites->n; i++) {
        struct evidence_span *c = &cites->v[i];
        if (c->path && c->start_line >= 1 && c->end_line >= c->start_line &&
            evidence_covers(seen, c->path, c->start_line, c->end_line)) {
            cites->v[w++] = *c;
        } else {
            free(c->path);
            free(c->text);
            free(c->label);
            dropped++;
        }
    }
    cites->n = w;
    return dropped;
}
