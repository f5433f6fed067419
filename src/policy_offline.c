/*
 * policy_offline: the model-free policy (see policy_offline.h). The state of
 * a node is read from the tree (its path's actions and evidence, its
 * siblings' actions); question analysis and name matches are computed once
 * per question and kept in the policy.
 */
#include "policy_offline.h"
#include "coverage.h"
#include "fpattern.h"
#include "answer.h"
#include "answer_fuse.h"
#include "fuse.h"
#include "mcts.h"
#include "qparse.h"
#include "semantic.h"
#include "tok.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name of the index whose parts the question contains. */
struct named {
    char *name;
    int is_class;
    double score;
};

struct offline_policy {
    struct offline_config cfg;
    char *question;            /* the question the analysis below belongs to */
    struct qparse q;
    int q_ok;
    char q_err[256];
    struct named *named;
    size_t nnamed;
    struct qwindow *wins;      /* where the question's words concentrate */
    size_t nwins;
    char *files[OFFLINE_PRIOR_FILES];   /* their distinct files, implementation first (borrowed from wins) */
    size_t nfiles;
    struct named *fnamed;      /* files whose names are made of the question's rare words */
    size_t nfnamed;
    /* span_symbol's statement, prepared once: it runs for every span the
     * policy weighs (a hundred a question), and preparing costs more than
     * running it (the policy's callbacks run one at a time) */
    sqlite3_stmt *span_st;
    double fuse_k;             /* the answer's rank fusion constant (fuse.h); 0: the tree's answer alone */
};

/* ------------------------------------------------------------- helpers */

static int streq(const char *a, const char *b) { return a && b && !strcmp(a, b); }

static int index_has(struct offline_policy *p, const char *name, int which)
{
    if (!p->cfg.actx || !name) return 0;
    size_t n = 0;
    const char *const *v = action_cache_names(p->cfg.actx, which, &n);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v[mid], name);
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return 0;
}

struct parts_ctx {
    const struct qparse *q;
    int total, matched;
    double weight;
};

static void name_part(const char *t, size_t n, void *ctx)
{
    struct parts_ctx *c = ctx;
    c->total++;
    int i = qparse_term_index(c->q, t, n);
    if (i >= 0) {
        c->matched++;
        c->weight += c->q->weights[i];
    }
}

static int cmp_named(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->name, y->name);
}

#define NAMED_KEEP 8

/* Names of the index made only of the question's words ("session base" ->
 * SessionBase, "dispatch request" -> dispatch_request, "router" -> Router). */
static void find_named(struct offline_policy *p)
{
    if (!p->cfg.actx || !p->q.nterms) return;
    size_t cap = 0;
    for (int which = ACTION_NAMES_CLASSES; which <= ACTION_NAMES_FUNCTIONS; which++) {
        size_t n = 0;
        const char *const *v = action_cache_names(p->cfg.actx, which, &n);
        for (size_t i = 0; i < n; i++) {
            const char *nm = v[i];
            size_t len = strlen(nm);
            if (len < 4 || (nm[0] == '_' && nm[1] == '_')) continue;
            struct parts_ctx c = {&p->q, 0, 0, 0};
            tok_each(nm, len, TOK_NO_JOINED, name_part, &c);
            if (c.total == 0 || c.matched < c.total) continue;
            /* a one-word name must be a rare word of the question */
            double score = c.weight * (c.total >= 2 ? 1.5 : 1.0);
            if (c.total == 1 && c.weight < 1.5) continue;
            if (which == ACTION_NAMES_CLASSES) score *= 1.2;
            int dup = 0;
            for (size_t k = 0; k < p->nnamed; k++)
                if (!strcmp(p->named[k].name, nm)) {
                    dup = 1;
                    if (which == ACTION_NAMES_CLASSES) p->named[k].is_class = 1;
                }
            if (dup) continue;
            ARRAY_GROW(p->named, p->nnamed, cap, 16);
            p->named[p->nnamed].name = xstrdup(nm);
            p->named[p->nnamed].is_class = which == ACTION_NAMES_CLASSES;
            p->named[p->nnamed].score = score;
            p->nnamed++;
        }
    }
    if (p->nnamed) qsort(p->named, p->nnamed, sizeof *p->named, cmp_named);
    while (p->nnamed > NAMED_KEEP) free(p->named[--p->nnamed].name);
}

#define FNAMED_KEEP 3

/* Files whose base names are made of the question's rare words ("the
 * documentation generation system" -> autosummary/generate.py, "the CLI
 * helper" -> cli.py): a module's name is a definition's name one level up.
 * At least half of the name's parts must be words of the question, and the
 * matched ones rare on average (weight 1.5 each); tests only when the
 * question is about tests. */
static void find_named_files(struct offline_policy *p)
{
    if (!p->cfg.actx || !p->q.nterms) return;
    size_t np = 0, cap = 0;
    const char *const *paths = action_cache_paths(p->cfg.actx, &np);
    for (size_t i = 0; i < np; i++) {
        const char *path = paths[i];
        if (!p->q.about_tests && fpattern_is_test(path)) continue;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *dot = strrchr(base, '.');
        size_t len = dot && dot > base ? (size_t)(dot - base) : strlen(base);
        if (len < 3 || base[0] == '_') continue;
        struct parts_ctx c = {&p->q, 0, 0, 0};
        tok_each(base, len, TOK_NO_JOINED, name_part, &c);
        if (c.total == 0 || c.matched == 0 || 2 * c.matched < c.total) continue;
        if (c.weight < 1.5 * c.matched) continue;
        double score = c.weight * c.matched / c.total;
        ARRAY_GROW(p->fnamed, p->nfnamed, cap, 8);
        p->fnamed[p->nfnamed].name = xstrdup(path);
        p->fnamed[p->nfnamed].is_class = 0;
        p->fnamed[p->nfnamed].score = score;
        p->nfnamed++;
    }
    if (p->nfnamed) qsort(p->fnamed, p->nfnamed, sizeof *p->fnamed, cmp_named);
    while (p->nfnamed > FNAMED_KEEP) free(p->fnamed[--p->nfnamed].name);
}

/* Windows of the repository where the question's words concentrate: the
 * "promising regions" a perception report points at, before any action. */
static void find_regions(struct offline_policy *p)
{
    if (!p->cfg.db) return;
    char err[256];
    int n = qparse_windows(&p->q, p->cfg.db, OFFLINE_WINDOW_LINES, OFFLINE_WINDOW_LINES / 10, 4 * OFFLINE_PRIOR_FILES,
                           &p->wins, err, sizeof err);
    if (n < 0) {
        log_msg("offline policy: %s", err);
        return;
    }
    p->nwins = (size_t)n;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < p->nwins && p->nfiles < OFFLINE_PRIOR_FILES; i++) {
            const char *path = p->wins[i].path;
            /* implementation first, unless the question is about tests */
            if (!p->q.about_tests && fpattern_is_test(path) != pass) continue;
            if (p->q.about_tests && pass) break;
            int dup = 0;
            for (size_t k = 0; k < p->nfiles; k++) dup |= !strcmp(p->files[k], path);
            if (!dup) p->files[p->nfiles++] = p->wins[i].path;
        }
}

static void forget_question(struct offline_policy *p)
{
    qparse_windows_free(p->wins, p->nwins);
    p->wins = NULL;
    p->nwins = 0;
    p->nfiles = 0;
    free(p->question);
    p->question = NULL;
    qparse_free(&p->q);
    for (size_t i = 0; i < p->nnamed; i++) free(p->named[i].name);
    free(p->named);
    p->named = NULL;
    p->nnamed = 0;
    for (size_t i = 0; i < p->nfnamed; i++) free(p->fnamed[i].name);
    free(p->fnamed);
    p->fnamed = NULL;
    p->nfnamed = 0;
    p->q_ok = 0;
}

static int prepare(struct offline_policy *p, const struct mcts_tree *t, char *err, size_t errlen)
{
    const char *question = t->question ? t->question : "";
    if (!p->question || strcmp(p->question, question)) {
        forget_question(p);
        p->question = xstrdup(question);
        /* answer_from ranks the chunks for the question itself (answer_fuse) */
        if (p->cfg.actx && !p->cfg.no_semantic && p->fuse_k > 0)
            semantic_cache_expect(semantic_cache_of(p->cfg.actx), question);
        p->q_ok = (p->cfg.actx ? qparse_question_names(question, action_index_defines, p->cfg.actx, &p->q, p->q_err,
                                                       sizeof p->q_err)
                               : qparse_question(question, &p->q, p->q_err, sizeof p->q_err)) == 0;
        if (p->q_ok) {
            qparse_weigh(&p->q, p->cfg.db);
            find_named(p);
            find_named_files(p);
            find_regions(p);
        }
    }
    if (!p->q_ok) {
        snprintf(err, errlen, "%s", p->q_err);
        return -1;
    }
    return 0;
}

/* The innermost definition enclosing a span: qualified name and kind. */
static int span_symbol(struct offline_policy *p, const struct evidence_span *sp, char **qual, char **kind)
{
    *qual = *kind = NULL;
    if (p->cfg.db && (p->span_st ||
                      sqlite3_prepare_v2(p->cfg.db,
                                         "SELECT s.qualname, s.kind FROM symbols s JOIN files f ON f.id = s.file_id "
                                         "WHERE f.path = ?1 AND s.start_line <= ?2 AND s.end_line >= ?3 "
                                         "AND s.kind != 'variable' ORDER BY s.end_line - s.start_line LIMIT 1",
                                         -1, &p->span_st, NULL) == SQLITE_OK)) {
        sqlite3_stmt *st = p->span_st;
        sqlite3_bind_text(st, 1, sp->path, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, sp->start_line);
        sqlite3_bind_int(st, 3, sp->end_line);
        if (sqlite3_step(st) == SQLITE_ROW) {
            *qual = xstrdup((const char *)sqlite3_column_text(st, 0));
            *kind = xstrdup((const char *)sqlite3_column_text(st, 1));
        }
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    return *qual != NULL;
}

/* How strongly the question's words concentrate in a file: the best score
 * of its windows relative to the best window overall (0-1). */
static double region_prior(const struct offline_policy *p, const char *path)
{
    if (!p->nwins || p->wins[0].score <= 0) return 0;
    for (size_t i = 0; i < p->nwins; i++)
        if (!strcmp(p->wins[i].path, path)) return p->wins[i].score / p->wins[0].score;
    return 0;
}

/* A span's relevance as the policy ranks it: its overlap with the question
 * plus the region prior of its file. */
static double span_score(const struct offline_policy *p, const struct evidence_span *sp)
{
    return answer_span_relevance(&p->q, sp) + 0.3 * region_prior(p, sp->path);
}

/* 1 when a definition of the index spans exactly the span's lines. */
static int span_is_definition(struct offline_policy *p, const struct evidence_span *sp)
{
    int found = 0;
    sqlite3_stmt *st;
    if (p->cfg.db && sqlite3_prepare_v2(p->cfg.db,
                                        "SELECT 1 FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ?1 "
                                        "AND s.start_line = ?2 AND s.end_line = ?3 LIMIT 1",
                                        -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, sp->path, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, sp->start_line);
        sqlite3_bind_int(st, 3, sp->end_line);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

static const char *arg_str(const cJSON *args, const char *name)
{
    const cJSON *v = args ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "FindClass(Router)", "SemanticSearch(session expiry)" */
static void describe_action(struct buf *b, const char *name, const cJSON *args)
{
    buf_adds(b, name ? name : "?");
    buf_addc(b, '(');
    const char *first = NULL;
    static const char *const keys[] = {"class_name", "function_name", "code_snippet", "query", "symbol", "path",
                                       NULL};
    for (int i = 0; keys[i] && !first; i++) first = arg_str(args, keys[i]);
    if (first) buf_printf(b, "%.*s", utf8_cut(first, 60), first);
    else if (args && cJSON_GetObjectItemCaseSensitive(args, "code_span_list")) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(args, "code_span_list");
        if (cJSON_GetArraySize(l) > 0 && cJSON_IsString(cJSON_GetArrayItem(l, 0)))
            buf_printf(b, "%.*s", utf8_cut(cJSON_GetArrayItem(l, 0)->valuestring, 60),
                       cJSON_GetArrayItem(l, 0)->valuestring);
    }
    const char *fp = arg_str(args, "file_pattern");
    if (fp) buf_printf(b, ", in %s", fp);
    buf_addc(b, ')');
}

/* ---------------------------------------------------------------- state */

struct lead {
    char *name;
    char *owner;          /* class of a method, or NULL */
    int is_class;
    double score;
    char *seen_in;        /* display of the span it came from */
};

struct ostate {
    int id, parent, depth, nsiblings;
    int *path;            /* root .. parent */
    size_t npath;
    const char *last_action;
    struct evidence pool;        /* every span on the path, in order, with a discovery prior */
    unsigned char *hit;          /* question terms matched by the path's evidence */
    double cov;                  /* their weighted share */
    double cov_before_last;      /* the same without the parent's evidence */
    int stalled;                 /* the parent's step found nothing new of the question */
    int best;                    /* index in pool of the most relevant span, -1 */
    double best_rel;
    int best_viewed;             /* a ViewCode on the path showed it */
    char *best_qual, *best_kind; /* its enclosing definition */
    int best_is_def;             /* the best span is that whole definition, verbatim */
    struct lead *leads;
    size_t nleads;
    char **looked;               /* names looked up on the path or by siblings (lowercase) */
    size_t nlooked;
    char **files;                /* files seen */
    size_t nfiles;
    const char *listed;          /* a file an Outline on the path listed, none of its code read */
};

static void st_free(struct ostate *s)
{
    free(s->path);
    evidence_free(&s->pool);
    free(s->hit);
    free(s->best_qual);
    free(s->best_kind);
    for (size_t i = 0; i < s->nleads; i++) {
        free(s->leads[i].name);
        free(s->leads[i].owner);
        free(s->leads[i].seen_in);
    }
    free(s->leads);
    for (size_t i = 0; i < s->nlooked; i++) free(s->looked[i]);
    free(s->looked);
    for (size_t i = 0; i < s->nfiles; i++) free(s->files[i]);
    free(s->files);
}

static void add_unique(char ***v, size_t *n, const char *s, int lower)
{
    char *x = lower ? str_lower(s) : xstrdup(s);
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], x)) {
            free(x);
            return;
        }
    *v = xreallocarray(*v, *n + 1, sizeof **v);
    (*v)[(*n)++] = x;
}

static int has_str(char *const *v, size_t n, const char *s, int lower)
{
    char *x = lower ? str_lower(s) : xstrdup(s);
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) found = !strcmp(v[i], x);
    free(x);
    return found;
}

static void note_looked(struct ostate *s, const struct mcts_node *n)
{
    if (!n->action) return;
    const char *keys[] = {"class_name", "function_name", "symbol", NULL};
    for (int i = 0; keys[i]; i++) {
        const char *v = arg_str(n->args, keys[i]);
        if (!v) continue;
        add_unique(&s->looked, &s->nlooked, v, 1);
        const char *dot = strrchr(v, '.');
        if (dot) add_unique(&s->looked, &s->nlooked, dot + 1, 1);
    }
}

static int is_view(const char *a) { return streq(a, "ViewCode"); }

/* Names called (name followed by '(') and bases of classes in a span. */
static void leads_from_span(struct offline_policy *p, struct ostate *s, const struct evidence_span *sp, double weight,
                            const char *own)
{
    if (!sp->text) return;
    const char *t = sp->text;
    char display[160];
    snprintf(display, sizeof display, "%s:%d-%d", sp->path, sp->start_line, sp->end_line);
    for (const char *c = t; *c; c++) {
        if (!(isalpha((unsigned char)*c) || *c == '_')) continue;
        if (c > t && (isalnum((unsigned char)c[-1]) || c[-1] == '_')) continue;
        const char *e = c;
        while (isalnum((unsigned char)*e) || *e == '_') e++;
        size_t len = (size_t)(e - c);
        int call = *e == '(';
        int is_def = c - t >= 4 && (!strncmp(c - 4, "def ", 4) || (c - t >= 6 && !strncmp(c - 6, "class ", 6)));
        const char *name_start = c;
        c = e - 1;
        if (!call || is_def || len < 3 || len > 60) continue;
        char nm[64];
        memcpy(nm, name_start, len);
        nm[len] = 0;
        if (nm[0] == '_' && nm[1] == '_') continue;
        if (own && !strcmp(own, nm)) continue;
        int is_class = index_has(p, nm, ACTION_NAMES_CLASSES);
        int is_func = !is_class && index_has(p, nm, ACTION_NAMES_FUNCTIONS);
        if (!is_class && !is_func) continue;
        if (has_str(s->looked, s->nlooked, nm, 1)) continue;
        double sc = weight * (0.3 + 2.0 * qparse_match(&p->q, nm, len, NULL));
        int found = 0;
        for (size_t i = 0; i < s->nleads; i++)
            if (!strcmp(s->leads[i].name, nm)) {
                s->leads[i].score += 0.1 * sc;   /* called again: a little stronger */
                found = 1;
            }
        if (found) continue;
        s->leads = xreallocarray(s->leads, s->nleads + 1, sizeof *s->leads);
        struct lead *l = &s->leads[s->nleads++];
        l->name = xstrdup(nm);
        l->owner = NULL;
        l->is_class = is_class;
        l->score = sc;
        l->seen_in = xstrdup(display);
    }
    /* bases: 'class X(A, B)' on the span's first lines */
    const char *cl = strstr(t, "class ");
    if (cl && cl - t < 200) {
        const char *lp = strchr(cl, '('), *nl = strchr(cl, '\n');
        const char *rp = lp ? strchr(lp, ')') : NULL;
        if (lp && rp && (!nl || rp < nl)) {
            for (const char *b = lp + 1; b < rp;) {
                while (b < rp && !(isalpha((unsigned char)*b) || *b == '_')) b++;
                const char *e = b;
                while (e < rp && (isalnum((unsigned char)*e) || *e == '_' || *e == '.')) e++;
                if (e > b) {
                    const char *last = b;
                    for (const char *k = b; k < e; k++)
                        if (*k == '.') last = k + 1;
                    char nm[64];
                    size_t len = (size_t)(e - last);
                    if (len < sizeof nm && len >= 3) {
                        memcpy(nm, last, len);
                        nm[len] = 0;
                        if (index_has(p, nm, ACTION_NAMES_CLASSES) && !has_str(s->looked, s->nlooked, nm, 1) &&
                            strcmp(nm, "object")) {
                            s->leads = xreallocarray(s->leads, s->nleads + 1, sizeof *s->leads);
                            struct lead *l = &s->leads[s->nleads++];
                            l->name = xstrdup(nm);
                            l->owner = NULL;
                            l->is_class = 1;
                            l->score = weight * (0.4 + 2.0 * qparse_match(&p->q, nm, len, NULL));
                            l->seen_in = xstrdup(display);
                        }
                    }
                }
                b = e + 1;
            }
        }
    }
}

static int cmp_lead(const void *a, const void *b)
{
    const struct lead *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->name, y->name);
}

struct ranked {
    int idx;
    double rel;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->rel != y->rel) return x->rel > y->rel ? -1 : 1;
    return x->idx - y->idx;
}

/* Reads the state of the new node id from the tree. */
static void analyse(struct offline_policy *p, const struct mcts_tree *t, int id, struct ostate *s)
{
    memset(s, 0, sizeof *s);
    const struct mcts_node *n = mcts_node(t, id);
    s->id = id;
    s->parent = n->parent;
    s->depth = n->depth;
    s->best = -1;
    s->npath = mcts_path(t, n->parent, &s->path);
    const struct mcts_node *par = mcts_node(t, n->parent);
    s->last_action = par->action;
    for (int k = 0; k < par->nchildren; k++) {
        const struct mcts_node *c = mcts_node(t, par->children[k]);
        if (c->id == id) continue;
        s->nsiblings++;
        note_looked(s, c);
    }
    for (size_t i = 0; i < s->npath; i++) {
        const struct mcts_node *m = mcts_node(t, s->path[i]);
        note_looked(s, m);
        if (streq(m->action, "Outline") && !m->obs.n && m->obs_text && *m->obs_text) s->listed = arg_str(m->args, "path");
        for (size_t k = 0; k < m->obs.n; k++) {
            const struct evidence_span *sp = &m->obs.v[k];
            struct evidence_span *c = evidence_add(&s->pool, sp->path, sp->start_line, sp->end_line, sp->text,
                                                   sp->label, 1.0 / (1.0 + (double)k));
            c->elided = sp->elided;
            add_unique(&s->files, &s->nfiles, sp->path, 0);
        }
    }
    /* the coverage every role speaks of (coverage.h) */
    struct coverage now, before;
    coverage_of_path(&p->q, t, n->parent, &now);
    coverage_of_path(&p->q, t, par->parent, &before);
    s->hit = now.hit;
    s->cov = now.share;
    s->cov_before_last = before.share;
    coverage_free(&before);
    s->stalled = par->id != 0 && (par->obs.n == 0 || s->cov - s->cov_before_last < 0.05);

    /* rank the path's spans; the best one and leads from the top three */
    struct ranked *r = s->pool.n ? xmalloc(s->pool.n * sizeof *r) : NULL;
    for (size_t i = 0; i < s->pool.n; i++) {
        r[i].idx = (int)i;
        r[i].rel = span_score(p, &s->pool.v[i]);
    }
    if (s->pool.n) qsort(r, s->pool.n, sizeof *r, cmp_ranked);
    if (s->pool.n) {
        s->best = r[0].idx;
        s->best_rel = r[0].rel;
        const struct evidence_span *b = &s->pool.v[s->best];
        span_symbol(p, b, &s->best_qual, &s->best_kind);
        s->best_is_def = !b->elided && s->best_qual && span_is_definition(p, b);
        for (size_t i = 0; i < s->npath; i++) {
            const struct mcts_node *m = mcts_node(t, s->path[i]);
            if (is_view(m->action) && evidence_covers(&m->obs, b->path, b->start_line, b->end_line))
                s->best_viewed = 1;
        }
    }
    for (size_t i = 0; i < s->pool.n && i < 3; i++) {
        const struct evidence_span *sp = &s->pool.v[r[i].idx];
        char *qual = NULL, *kind = NULL;
        span_symbol(p, sp, &qual, &kind);
        const char *own = qual ? (strrchr(qual, '.') ? strrchr(qual, '.') + 1 : qual) : NULL;
        leads_from_span(p, s, sp, i == 0 ? 1.0 : i == 1 ? 0.7 : 0.5, own);
        free(qual);
        free(kind);
    }
    free(r);
    if (s->nleads) qsort(s->leads, s->nleads, sizeof *s->leads, cmp_lead);
}

/* ----------------------------------------------------------- candidates */

struct pcand {
    char *name;
    cJSON *args;
    char *why;
    double prio;
    int order;
};

struct pcands {
    struct pcand *v;
    size_t n, cap;
};

static void pc_free(struct pcands *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].name);
        cJSON_Delete(c->v[i].args);
        free(c->v[i].why);
    }
    free(c->v);
}

static void pc_add(struct pcands *c, double prio, const char *name, cJSON *args, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void pc_add(struct pcands *c, double prio, const char *name, cJSON *args, const char *fmt, ...)
{
    ARRAY_GROW(c->v, c->n, c->cap, 16);
    struct pcand *x = &c->v[c->n];
    x->name = xstrdup(name);
    x->args = args ? args : cJSON_CreateObject();
    va_list ap;
    va_start(ap, fmt);
    x->why = xvasprintf(fmt, ap);
    va_end(ap);
    x->prio = prio;
    x->order = (int)c->n;
    c->n++;
}

static int cmp_pcand(const void *a, const void *b)
{
    const struct pcand *x = a, *y = b;
    if (x->prio != y->prio) return x->prio > y->prio ? -1 : 1;
    return x->order - y->order;
}

static cJSON *args1(const char *k, const char *v)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, k, v);
    return a;
}

/* A repository path as the file_pattern of an action: escaped, so that a
 * name holding '[', '*' or '?' matches itself. */
static void add_path_pattern(cJSON *a, const char *path)
{
    char *pat = fpattern_escape(path);
    cJSON_AddStringToObject(a, "file_pattern", pat);
    free(pat);
}

static cJSON *find_args(int is_class, const char *name, const char *owner, const char *file)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, is_class ? "class_name" : "function_name", name);
    if (!is_class && owner) cJSON_AddStringToObject(a, "class_name", owner);
    if (file) add_path_pattern(a, file);
    return a;
}

static int path_has_action(const struct mcts_tree *t, const struct ostate *s, const char *name)
{
    for (size_t i = 0; i < s->npath; i++)
        if (streq(mcts_node(t, s->path[i])->action, name)) return 1;
    return 0;
}

/* Candidates from the question alone (what any node may still do). */
/* The first step for a name the question writes as code, at priority pr. */
static void id_candidate(struct offline_policy *p, struct pcands *c, const struct qident *id, double pr)
{
    /* a class or function the index does not define (a builtin such as
     * ValueError, a name from another library): looking it up finds
     * nothing, so other steps go first */
    int undefined = id->kind != QID_CONSTANT && p->cfg.actx && !index_has(p, id->base, ACTION_NAMES_CLASSES) &&
                    !index_has(p, id->base, ACTION_NAMES_FUNCTIONS);
    if (undefined) pr -= 60;
    int other = undefined && index_has(p, id->base, ACTION_NAMES_ALL);
    if (other) {
        /* a module-level object ('g'): ViewCode reads a bare symbol's
         * definition; a prefix that is no class the index defines ("flask.g":
         * the package or module the question writes it under) is not part of
         * the symbol */
        const char *dot = strrchr(id->name, '.');
        char *prefix = dot ? xstrndup(id->name, (size_t)(dot - id->name)) : NULL;
        const char *sym = prefix && !index_has(p, prefix, ACTION_NAMES_CLASSES) ? id->base : id->name;
        free(prefix);
        cJSON *a = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(a, "code_span_list"), cJSON_CreateString(sym));
        pc_add(c, pr + 60, "ViewCode", a, "the question names %s, which the index defines", id->name);
    } else if (id->kind == QID_CONSTANT) {
        pc_add(c, pr, "FindCodeSnippet", args1("code_snippet", id->base),
               "the question names the constant %s literally", id->name);
    } else if (id->kind == QID_CLASS) {
        pc_add(c, pr, "FindClass", args1("class_name", id->name), "the question names the class %s literally",
               id->name);
    } else {
        const char *fn = id->owner ? id->base : id->name;
        pc_add(c, pr, "FindFunction", find_args(0, fn, id->owner, NULL),
               "the question names the function %s literally", id->name);
    }
}

static void question_candidates(struct offline_policy *p, struct pcands *c, double shift)
{
    const struct qparse *q = &p->q;
    /* "What calls get_response?", "Which classes inherit from BaseHandler?":
     * the index's call and inheritance edges answer it */
    size_t rel = q->callers_of ? q->callers_of : q->subclasses_of;
    if (rel && rel <= q->nids) {
        const struct qident *id = &q->ids[rel - 1];
        pc_add(c, 101 + shift, "FindReferences", args1("symbol", id->name), "the question asks %s %s",
               q->callers_of ? "what calls" : "which classes inherit from", id->name);
    }
    for (size_t i = 0; i < q->nids; i++) id_candidate(p, c, &q->ids[i], 100 - (double)i + shift);
    for (size_t i = 0; i < q->nquotes; i++)
        pc_add(c, 95 - (double)i + shift, "FindCodeSnippet", args1("code_snippet", q->quotes[i]),
               "the question quotes this code");
    for (size_t i = 0; i < q->nfiles; i++)
        pc_add(c, 90 - (double)i + shift, "Outline", args1("path", q->files[i]), "the question names this file");
    char *phrase = qparse_phrase(q, 0);
    if (*phrase && !p->cfg.no_semantic) {
        cJSON *a = args1("query", phrase);
        cJSON_AddStringToObject(a, "category", q->about_tests ? "any" : "implementation");
        pc_add(c, 80 + shift, "SemanticSearch", a, q->about_tests ? "search the code and its tests for the question's words"
                                                                  : "search the implementation for the question's words");
    }
    for (size_t i = 0; i < p->nfiles && i < 3 && *phrase && !p->cfg.no_semantic; i++) {
        cJSON *a = args1("query", phrase);
        add_path_pattern(a, p->files[i]);
        pc_add(c, 70 - 5 * (double)i + shift, "SemanticSearch", a,
               "the question's words concentrate in %s", p->files[i]);
    }
    for (size_t i = 0; i < p->nfnamed && *phrase; i++) {
        const char *f = p->fnamed[i].name;
        double pr = 72 - 4 * (double)i;
        cJSON *a = p->cfg.no_semantic ? args1("path", f) : args1("query", phrase);
        if (!p->cfg.no_semantic) add_path_pattern(a, f);
        pc_add(c, pr + shift, p->cfg.no_semantic ? "Outline" : "SemanticSearch", a,
               "the file name %s is made of the question's words", f);
    }
    if (p->cfg.no_semantic)
        for (size_t i = 0; i < p->nfiles && i < 3; i++)
            pc_add(c, 70 - 5 * (double)i + shift, "Outline", args1("path", p->files[i]),
                   "the question's words concentrate in %s", p->files[i]);
    for (size_t i = 0; i < p->nnamed; i++) {
        const struct named *nm = &p->named[i];
        pc_add(c, 78 - 4 * (double)i + shift, nm->is_class ? "FindClass" : "FindFunction",
               find_args(nm->is_class, nm->name, NULL, NULL), "the index defines %s, made of the question's words",
               nm->name);
    }
    if (*phrase && !p->cfg.no_semantic) {
        /* the rarest half of the words: a narrower query that reaches tests and docs too */
        size_t k = q->nwords > 4 ? q->nwords / 2 + 1 : q->nwords;
        char *narrow = qparse_phrase(q, q->nids + k);
        if (strcmp(narrow, phrase)) {
            cJSON *a = args1("query", narrow);
            cJSON_AddStringToObject(a, "category", "any");
            pc_add(c, 60 + shift, "SemanticSearch", a, "a narrower search with the question's first words");
        } else {
            cJSON *a = args1("query", phrase);
            cJSON_AddStringToObject(a, "category", "any");
            pc_add(c, 60 + shift, "SemanticSearch", a, "the same words over all code, tests included");
        }
        free(narrow);
        /* the rarest words alone, two at a time: other ways in when the whole
         * question leads astray (F2) */
        size_t order[64], nw = 0;
        for (size_t i = 0; i < q->nwords && nw < 64; i++) order[nw++] = i;
        double *wt = xcalloc(nw ? nw : 1, sizeof *wt);
        for (size_t i = 0; i < nw; i++) {
            const char *w = q->words[order[i]];
            wt[i] = qparse_match(q, w, strlen(w), NULL);
        }
        for (size_t i = 1; i < nw; i++)
            for (size_t j = i; j > 0 && wt[j] > wt[j - 1]; j--) {
                double tw = wt[j]; wt[j] = wt[j - 1]; wt[j - 1] = tw;
                size_t to = order[j]; order[j] = order[j - 1]; order[j - 1] = to;
            }
        for (size_t i = 0; i + 1 < nw && i < 4; i += 2) {
            char *pair = xasprintf("%s %s", q->words[order[i]], q->words[order[i + 1]]);
            if (strcmp(pair, phrase)) {
                cJSON *a = args1("query", pair);
                cJSON_AddStringToObject(a, "category", "implementation");
                pc_add(c, 58 - 10 * (double)i + shift, "SemanticSearch", a, "the question's rarest words: %s", pair);
            }
            free(pair);
        }
        free(wt);
    }
    free(phrase);
}

static void build_candidates(struct offline_policy *p, const struct mcts_tree *t, struct ostate *s, int perceived,
                             struct pcands *c)
{
    int max_depth = p->cfg.max_depth > 0 ? p->cfg.max_depth : OFFLINE_MAX_DEPTH;
    const struct evidence_span *best = s->best >= 0 ? &s->pool.v[s->best] : NULL;
    int last_view = is_view(s->last_action);

    /* Finish: after reading the best span again, or at the depth limit. */
    if (s->depth >= max_depth && s->pool.n)
        pc_add(c, 200, "Finish", NULL, "the path is %d steps deep", s->depth - 1);
    /* late in the search: close the path UCT chose rather than run out */
    int late = p->cfg.iterations > 0 && t->n - 1 >= (2 * p->cfg.iterations) / 3;
    if (last_view && s->pool.n && (s->cov >= 0.35 || s->depth >= 4 || late))
        pc_add(c, 98, "Finish", NULL, "the best span was just read again and the evidence covers %.0f%% of the question",
               100 * s->cov);

    question_candidates(p, c, s->depth > 1 ? -30 : 0);
    if (s->depth <= 1) return;

    /* an outline lists a file's definitions but reads none of its code: its
     * head (the module's docstring and imports) says what the file is for */
    if (s->listed && !has_str(s->files, s->nfiles, s->listed, 0)) {
        char span[512];
        snprintf(span, sizeof span, "%s:1-%d", s->listed, OFFLINE_HEAD_LINES);
        cJSON *a = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(a, "code_span_list"), cJSON_CreateString(span));
        pc_add(c, 85, "ViewCode", a, "the outline of %s read none of its code: read its head", s->listed);
    }

    if (best) {
        /* open the best span before finishing (E.3) */
        if (!s->best_viewed) {
            char span[512];
            int end = best->end_line - best->start_line > 150 ? best->start_line + 150 : best->end_line;
            snprintf(span, sizeof span, "%s:%d-%d", best->path, best->start_line, end);
            cJSON *a = cJSON_CreateObject();
            cJSON *l = cJSON_AddArrayToObject(a, "code_span_list");
            cJSON_AddItemToArray(l, cJSON_CreateString(span));
            /* one line (a call or a class statement FindReferences found)
             * is read as the definition around it */
            if (best->start_line == best->end_line) cJSON_AddTrueToObject(a, "snap_to_definition");
            int ready = s->depth >= 3 || late || (perceived && s->stalled);
            pc_add(c, ready ? 93 : 35, "ViewCode", a, "read the best span %s again before answering", span);
        }
    }
    if (!perceived) return;

    if (best && s->best_qual) {
        /* anchor the best span on its definition (symbol-level anchoring) */
        const char *dot = strrchr(s->best_qual, '.');
        const char *base = dot ? dot + 1 : s->best_qual;
        int is_class = streq(s->best_kind, "class");
        if (!has_str(s->looked, s->nlooked, base, 1) && !s->best_is_def) {
            char *owner = NULL;
            if (!is_class && dot) {
                const char *prev = dot;
                while (prev > s->best_qual && prev[-1] != '.') prev--;
                owner = xstrndup(prev, (size_t)(dot - prev));
            }
            pc_add(c, 76, is_class ? "FindClass" : "FindFunction", find_args(is_class, base, owner, best->path),
                   "anchor the best span on its definition %s in %s", s->best_qual, best->path);
            free(owner);
        }
        /* the class a method belongs to, for its docstring and neighbours */
        if (!is_class && dot) {
            const char *prev = dot;
            while (prev > s->best_qual && prev[-1] != '.') prev--;
            char *owner = xstrndup(prev, (size_t)(dot - prev));
            if (isupper((unsigned char)owner[0]) && !has_str(s->looked, s->nlooked, owner, 1))
                pc_add(c, 55, "FindClass", find_args(1, owner, NULL, best->path), "the class %s holds the best span",
                       owner);
            free(owner);
        }
    }
    for (size_t i = 0; i < s->nleads && i < 4; i++) {
        const struct lead *l = &s->leads[i];
        pc_add(c, 50 + 25 * (l->score > 1 ? 1 : l->score), l->is_class ? "FindClass" : "FindFunction",
               find_args(l->is_class, l->name, NULL, NULL), "%s is %s in %s", l->name,
               l->is_class ? "used or inherited" : "called", l->seen_in);
    }
    if (best && s->best_qual) {
        /* structural fallback when keyword search stalls (F3) */
        double pr = s->stalled ? 72 : p->q.type == QTYPE_WHERE ? 45 : 30;
        pc_add(c, pr, "FindReferences", args1("symbol", s->best_qual), "%s: who calls, imports or subclasses %s",
               s->stalled ? "the last step added nothing new" : "structure around the best span", s->best_qual);
    }
    for (size_t i = 0, k = 0; i < p->nfiles && k < 2 && !p->cfg.no_semantic; i++) {
        if (has_str(s->files, s->nfiles, p->files[i], 0)) continue;
        char *phrase = qparse_phrase(&p->q, 0);
        if (!*phrase) {   /* no words to search for (the question names only a file) */
            free(phrase);
            break;
        }
        cJSON *a = args1("query", phrase);
        add_path_pattern(a, p->files[i]);
        pc_add(c, 62 - 5 * (double)k++, "SemanticSearch", a, "a promising file not looked at yet: %s", p->files[i]);
        free(phrase);
    }
    if (best && !path_has_action(t, s, "Outline"))
        pc_add(c, 25, "Outline", args1("path", best->path), "the definitions around the best span in %s", best->path);
    if (s->pool.n && s->depth >= 3)
        pc_add(c, 10, "Finish", NULL, "nothing better is left to try");
}

/* An action already run elsewhere in the tree ranks a little lower, so that
 * branches look at different things before they repeat each other (F2). */
static void penalise_tried(const struct mcts_tree *t, struct pcands *c)
{
    for (size_t i = 0; i < c->n; i++) {
        if (streq(c->v[i].name, "Finish")) continue;
        char *key = mcts_action_key(c->v[i].name, c->v[i].args);
        for (int k = 1; k < t->n; k++)
            if (t->nodes[k].args_key && !strcmp(t->nodes[k].args_key, key)) {
                c->v[i].prio -= 8;
                break;
            }
        free(key);
    }
}

static void sort_candidates(struct pcands *c) { qsort(c->v, c->n, sizeof *c->v, cmp_pcand); }

cJSON *offline_policy_candidates(struct offline_policy *p, const struct mcts_tree *t, int node_id, int perceived)
{
    char err[256];
    if (prepare(p, t, err, sizeof err) || !mcts_node(t, node_id) || node_id == 0) return NULL;
    struct ostate s;
    analyse(p, t, node_id, &s);
    struct pcands c = {0};
    build_candidates(p, t, &s, perceived, &c);
    sort_candidates(&c);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < c.n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "action", c.v[i].name);
        cJSON_AddItemToObject(o, "args", cJSON_Duplicate(c.v[i].args, 1));
        cJSON_AddStringToObject(o, "why", c.v[i].why);
        cJSON_AddNumberToObject(o, "priority", c.v[i].prio);
        cJSON_AddItemToArray(arr, o);
    }
    pc_free(&c);
    st_free(&s);
    return arr;
}

/* ---------------------------------------------------------------- roles */

#define REPORT_MARK "situation:"

static int op_perceive(void *ctx, const struct mcts_tree *t, int id, char **report, struct policy_usage *u, char *err,
                       size_t errlen)
{
    (void)u;
    struct offline_policy *p = ctx;
    if (prepare(p, t, err, errlen)) return -1;
    struct ostate s;
    analyse(p, t, id, &s);
    struct buf b = BUF_INIT;
    if (p->q.type == QTYPE_OTHER) buf_printf(&b, REPORT_MARK " a question of no set kind, step %d", s.depth);
    else buf_printf(&b, REPORT_MARK " a %s-question, step %d", qparse_type_name(p->q.type), s.depth);
    if (p->q.nids) {
        buf_adds(&b, "; literal names:");
        for (size_t i = 0; i < p->q.nids; i++) buf_printf(&b, " %s", p->q.ids[i].name);
    }
    buf_addc(&b, '\n');
    if (s.npath > 1) {
        buf_adds(&b, "path: ");
        for (size_t i = 1; i < s.npath; i++) {
            const struct mcts_node *m = mcts_node(t, s.path[i]);
            if (i > 1) buf_adds(&b, " -> ");
            describe_action(&b, m->action, m->args);
            buf_printf(&b, " [%zu]", m->obs.n);
        }
        buf_addc(&b, '\n');
    }
    struct coverage cov = {s.cov, s.hit, p->q.nterms};
    buf_adds(&b, "coverage: the path's evidence ");
    coverage_describe(&p->q, &cov, NULL, COVERAGE_NAMED, &b);
    buf_addc(&b, '\n');
    if (s.stalled) buf_adds(&b, "stalled: the last step added nothing new of the question\n");
    if (s.nfiles) {
        buf_printf(&b, "files seen (%zu):", s.nfiles);
        for (size_t i = 0; i < s.nfiles && i < 6; i++) buf_printf(&b, " %s", s.files[i]);
        if (s.nfiles > 6) buf_adds(&b, " ...");
        buf_addc(&b, '\n');
    }
    if (s.best >= 0) {
        const struct evidence_span *sp = &s.pool.v[s.best];
        buf_printf(&b, "best span: %s:%d-%d%s%s%s, %s\n", sp->path, sp->start_line, sp->end_line,
                   s.best_qual ? " (" : "", s.best_qual ? s.best_qual : "", s.best_qual ? ")" : "",
                   s.best_viewed ? "already opened" : "not opened yet");
    }
    if (s.nleads) {
        buf_adds(&b, "leads not looked up yet:");
        for (size_t i = 0; i < s.nleads && i < 5; i++)
            buf_printf(&b, "%s %s (%s in %s)", i ? "," : "", s.leads[i].name,
                       s.leads[i].is_class ? "class" : "called", s.leads[i].seen_in);
        buf_addc(&b, '\n');
    }
    if (p->nfiles) {
        buf_adds(&b, "promising files:");
        for (size_t i = 0; i < p->nfiles; i++)
            buf_printf(&b, " %s%s", p->files[i], has_str(s.files, s.nfiles, p->files[i], 0) ? " (seen)" : "");
        buf_addc(&b, '\n');
    }
    if (p->nnamed) {
        buf_adds(&b, "index names made of the question's words:");
        for (size_t i = 0; i < p->nnamed && i < 5; i++) buf_printf(&b, " %s", p->named[i].name);
        buf_addc(&b, '\n');
    }
    const struct mcts_node *par = mcts_node(t, s.parent);
    if (s.nsiblings) {
        buf_adds(&b, "siblings tried: ");
        int k = 0;
        for (int i = 0; i < par->nchildren; i++) {
            const struct mcts_node *c = mcts_node(t, par->children[i]);
            if (c->id == id || !c->action) continue;
            if (k++) buf_adds(&b, "; ");
            describe_action(&b, c->action, c->args);
            if (c->has_value) buf_printf(&b, " = %.0f", c->value);
        }
        buf_addc(&b, '\n');
    }
    *report = buf_take(&b);
    st_free(&s);
    return 0;
}

static int op_plan(void *ctx, const struct mcts_tree *t, int id, const char *report, struct policy_action *out,
                   struct policy_usage *u, char *err, size_t errlen)
{
    (void)u;
    struct offline_policy *p = ctx;
    if (prepare(p, t, err, errlen)) return -1;
    int perceived = report && !strncmp(report, REPORT_MARK, strlen(REPORT_MARK));
    struct ostate s;
    analyse(p, t, id, &s);
    struct pcands c = {0};
    build_candidates(p, t, &s, perceived, &c);
    if (perceived) penalise_tried(t, &c);
    sort_candidates(&c);
    int pick = -1;
    /* the first candidate no child or ancestor took (a Finish too: a
     * second one here would end the same path again) */
    for (size_t i = 0; i < c.n && pick < 0; i++) {
        char *key = mcts_action_key(c.v[i].name, c.v[i].args);
        int dup = mcts_find_duplicate(t, id, key) >= 0;
        free(key);
        if (!dup) pick = (int)i;
    }
    if (pick < 0) {
        /* everything was tried here: answer from what there is */
        out->name = xstrdup("Finish");
        out->args = cJSON_CreateObject();
        cJSON_AddStringToObject(out->args, "answer", "(built from the evidence by the offline policy)");
        cJSON_AddStringToObject(out->args, "finish_reason", "every candidate action was already tried");
        out->rationale = xstrdup("every candidate action was already tried on this path or by a sibling");
    } else {
        struct pcand *x = &c.v[pick];
        out->name = x->name;
        out->args = x->args;
        out->rationale = x->why;
        x->name = NULL;
        x->args = NULL;
        x->why = NULL;
        if (streq(out->name, "Finish")) {
            cJSON_AddStringToObject(out->args, "answer", "(built from the evidence by the offline policy)");
            cJSON_AddStringToObject(out->args, "finish_reason", out->rationale);
        }
    }
    pc_free(&c);
    st_free(&s);
    return 0;
}

/* 1 for a file of prose (documentation) by its extension. */
static int is_prose(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/')) return 0;
    return !strcmp(dot, ".md") || !strcmp(dot, ".rst") || !strcmp(dot, ".txt") || !strcmp(dot, ".adoc");
}

/* Coverage of the question by the path to id, the node's own relevance and
 * its novelty against the path before it. */
struct node_measure {
    double rel, cov, cov_before, novelty;
    int literal_found;
    size_t nspans;
};

static void measure(struct offline_policy *p, const struct mcts_tree *t, int id, struct node_measure *m)
{
    memset(m, 0, sizeof *m);
    const struct mcts_node *n = mcts_node(t, id);
    int *path = NULL;
    size_t np = mcts_path(t, id, &path);
    struct evidence prev = EVIDENCE_INIT;
    for (size_t i = 0; i + 1 < np; i++) {
        const struct mcts_node *a = mcts_node(t, path[i]);
        for (size_t k = 0; k < a->obs.n; k++)
            if (!a->obs.v[k].elided) evidence_add(&prev, a->obs.v[k].path, a->obs.v[k].start_line, a->obs.v[k].end_line,
                                                  NULL, NULL, 0);
    }
    size_t novel = 0;
    for (size_t k = 0; k < n->obs.n; k++) {
        const struct evidence_span *sp = &n->obs.v[k];
        double r = span_score(p, sp);
        if (r > m->rel) m->rel = r;
        /* new lines, or a definition narrowing a much longer span seen before
         * (symbol anchoring: the same code, pinned down) */
        int narrowest = 0;
        for (size_t j = 0; j < prev.n; j++) {
            const struct evidence_span *o = &prev.v[j];
            if (strcmp(o->path, sp->path) || o->start_line > sp->start_line || sp->end_line > o->end_line) continue;
            int len = o->end_line - o->start_line + 1;
            if (!narrowest || len < narrowest) narrowest = len;
        }
        if (!narrowest || 2 * (sp->end_line - sp->start_line + 1) <= narrowest) novel++;
        char *qual = NULL, *kind = NULL;
        span_symbol(p, sp, &qual, &kind);
        for (size_t i = 0; i < p->q.nids && qual; i++) {
            const char *b = strrchr(qual, '.') ? strrchr(qual, '.') + 1 : qual;
            if (!strcmp(b, p->q.ids[i].base)) m->literal_found = 1;
        }
        free(qual);
        free(kind);
    }
    struct coverage now, prior;
    coverage_of_path(&p->q, t, id, &now);
    coverage_of_path(&p->q, t, n->parent, &prior);
    m->cov = now.share;
    m->cov_before = prior.share;
    coverage_free(&now);
    coverage_free(&prior);
    m->nspans = n->obs.n;
    m->novelty = n->obs.n ? (double)novel / (double)n->obs.n : 0;
    if (m->rel > 1) m->rel = 1;
    free(path);
    evidence_free(&prev);
}

static int op_evaluate(void *ctx, const struct mcts_tree *t, int id, struct policy_eval *out, struct policy_usage *u,
                       char *err, size_t errlen)
{
    (void)u;
    struct offline_policy *p = ctx;
    if (prepare(p, t, err, errlen)) return -1;
    const struct mcts_node *n = mcts_node(t, id);
    struct node_measure m;
    measure(p, t, id, &m);
    struct buf fb = BUF_INIT;
    if (streq(n->action, "Finish")) {
        out->value = 30 + 70 * m.cov_before;
        struct coverage cov;
        coverage_of_path(&p->q, t, id, &cov);
        buf_adds(&fb, "finishing: the path's evidence ");
        coverage_describe(&p->q, &cov, NULL, COVERAGE_NAMED, &fb);
        coverage_free(&cov);
    } else if (m.nspans == 0 && streq(n->action, "Outline") && n->obs_text && *n->obs_text) {
        /* a listing: where the definitions are, but no code read */
        out->value = 30;
        buf_printf(&fb, "an outline of %s: its definitions listed, none of its code read; next: read its head with "
                        "ViewCode or look up one of its definitions",
                   arg_str(n->args, "path") ? arg_str(n->args, "path") : "the file");
    } else if (m.nspans == 0) {
        out->value = 5;
        buf_adds(&fb, "nothing found; try other words, a structural step (FindReferences, Outline) or a name "
                      "seen in earlier evidence");
    } else {
        double gain = m.cov - m.cov_before;
        double novelty = is_view(n->action) ? 0.9 : m.novelty;
        double v = 0.45 * m.rel + 0.30 * m.cov + 0.25 * (gain * 3 > 1 ? 1 : gain * 3);
        v *= 0.6 + 0.4 * novelty;
        out->value = 100 * v + (m.literal_found ? 15 : 0);
        struct coverage cov;
        coverage_of_path(&p->q, t, id, &cov);
        char aside[48];
        snprintf(aside, sizeof aside, " (+%.0f by this step)", 100 * gain);
        coverage_describe(&p->q, &cov, aside, COVERAGE_NAMED, &fb);
        coverage_free(&cov);
        /* a step that found only tests or documentation, for a question
         * about the code itself, is worth less: the branch to expand is the
         * one that reached the defining code */
        if (!p->q.about_tests) {
            size_t side = 0;
            for (size_t k = 0; k < n->obs.n; k++) side += fpattern_is_test(n->obs.v[k].path) || is_prose(n->obs.v[k].path);
            if (side == n->obs.n) {
                out->value *= 0.6;
                buf_adds(&fb, "; only tests or documentation");
            }
        }
        /* where to go next */
        struct ostate s;
        memset(&s, 0, sizeof s);
        s.best = -1;
        for (size_t k = 0; k < n->obs.n && k < 2; k++) {
            char *qual = NULL, *kind = NULL;
            span_symbol(p, &n->obs.v[k], &qual, &kind);
            const char *own = qual ? (strrchr(qual, '.') ? strrchr(qual, '.') + 1 : qual) : NULL;
            leads_from_span(p, &s, &n->obs.v[k], k == 0 ? 1.0 : 0.7, own);
            free(qual);
            free(kind);
        }
        if (s.nleads) {
            qsort(s.leads, s.nleads, sizeof *s.leads, cmp_lead);
            buf_printf(&fb, "; next: look up %s (%s in %s)", s.leads[0].name,
                       s.leads[0].is_class ? "class" : "called", s.leads[0].seen_in);
        } else if (!is_view(n->action)) {
            buf_printf(&fb, "; next: open %s:%d-%d with ViewCode", n->obs.v[0].path, n->obs.v[0].start_line,
                       n->obs.v[0].end_line);
        } else {
            buf_adds(&fb, "; next: finish");
        }
        st_free(&s);
    }
    if (out->value > 100) out->value = 100;
    if (out->value < 0) out->value = 0;
    out->feedback = buf_take(&fb);
    return 0;
}

static int op_rollout(void *ctx, const struct mcts_tree *t, int id, double *value, struct policy_usage *u, char *err,
                      size_t errlen)
{
    (void)u;
    struct offline_policy *p = ctx;
    if (prepare(p, t, err, errlen)) return -1;
    const struct mcts_node *n = mcts_node(t, id);
    double rel = 0;
    for (size_t k = 0; k < n->obs.n; k++) {
        double r = span_score(p, &n->obs.v[k]);
        if (r > rel) rel = r;
    }
    *value = n->obs.n ? 10 + 80 * (rel > 1 ? 1 : rel) : 5;
    return 0;
}

/* 1 when a node's evidence may be cited: it was executed and not cut away. */
static int node_citable(const struct mcts_node *m)
{
    return m->status == MCTS_DONE || m->status == MCTS_FINISHED;
}

/* The index of the first span of pool with sp's lines (and view), or -1. */
static long pool_find(const struct evidence *pool, const struct evidence_span *sp)
{
    for (size_t j = 0; j < pool->n; j++) {
        const struct evidence_span *o = &pool->v[j];
        if (o->start_line == sp->start_line && o->end_line == sp->end_line && o->elided == sp->elided &&
            !strcmp(o->path, sp->path))
            return (long)j;
    }
    return -1;
}

/* The answer's pool: the trajectory's spans first, in order of discovery
 * (prior 1/(1 + rank) within their node), then every other span the tree saw
 * (it was seen, so it is verifiable), weighted by the value of the nodes that
 * found it and kept below the trajectory's (at most half of a trajectory
 * span's prior). The root's first search is usually the most precise step
 * of the whole search (E.3, early retrieval precision); when the best path
 * runs through another child, its hits still compete here on their own
 * relevance instead of being lost. A span off the path that several steps
 * found sums what each step gives it, as tree_files sums a file's votes: the
 * callee that three branches looked up (flask's `_find_error_handler`, from
 * both exception handlers) outranks a span one step found as high. Pooled
 * leave-one-repository-out over the 658 questions: file-hit@5 87.4 -> 87.7,
 * identifier recall 76.0 -> 76.1, no repository below rag-window. */
static void answer_pool(const struct mcts_tree *t, const int *ids, size_t nids, struct evidence *pool)
{
    for (size_t i = 0; i < nids; i++) {
        const struct mcts_node *m = mcts_node(t, ids[i]);
        for (size_t k = 0; k < m->obs.n; k++) {
            const struct evidence_span *sp = &m->obs.v[k];
            evidence_add(pool, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, 1.0 / (1.0 + (double)k))
                ->elided = sp->elided;
        }
    }
    size_t on_path_spans = pool->n;
    for (int id = 1; id < t->n; id++) {
        const struct mcts_node *m = mcts_node(t, id);
        int on_path = 0;
        for (size_t i = 0; i < nids && !on_path; i++) on_path = ids[i] == id;
        if (on_path || !node_citable(m) || m->duplicate) continue;
        double v = m->has_value ? m->value / 100.0 : 0.5;
        for (size_t k = 0; k < m->obs.n; k++) {
            const struct evidence_span *sp = &m->obs.v[k];
            double add = 0.5 * v / (1.0 + (double)k);
            long j = pool_find(pool, sp);
            if (j >= 0 && (size_t)j < on_path_spans) continue;   /* the trajectory's prior stands */
            if (j >= 0) {
                double sum = pool->v[j].score + add;
                pool->v[j].score = sum > 0.5 ? 0.5 : sum;
                continue;
            }
            evidence_add(pool, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, add)->elided = sp->elided;
        }
    }
}

static int cmp_qwindow(const void *a, const void *b)
{
    const struct qwindow *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* File-level evidence across the whole tree: every executed step votes for
 * the files it returned, 1/(k + rank) for its spans in rank order (a file
 * counted once per step, at its best rank), weighted by the step's value, so
 * that a file several independent searches agree on outranks one a single
 * search put first. Returns the files, best first (qparse_windows_free). */
static size_t tree_files(const struct mcts_tree *t, struct qwindow **out)
{
    struct qwindow *v = NULL;
    size_t n = 0, cap = 0;
    const double k = 2.0;
    for (int id = 1; id < t->n; id++) {
        const struct mcts_node *m = mcts_node(t, id);
        if (!node_citable(m) || m->duplicate || !m->obs.n) continue;
        double w = m->has_value ? 0.5 + m->value / 100.0 : 1.0;
        for (size_t r = 0; r < m->obs.n; r++) {
            const char *path = m->obs.v[r].path;
            int seen = 0;
            for (size_t j = 0; j < r && !seen; j++) seen = !strcmp(m->obs.v[j].path, path);
            if (seen) continue;
            double add = w / (k + (double)r);
            size_t i = 0;
            while (i < n && strcmp(v[i].path, path)) i++;
            if (i == n) {
                ARRAY_GROW(v, n, cap, 32);
                memset(&v[n], 0, sizeof v[n]);
                v[n].path = xstrdup(path);
                n++;
            }
            v[i].score += add;
        }
    }
    if (n) qsort(v, n, sizeof *v, cmp_qwindow);
    *out = v;
    return n;
}

/* The pool's files by how many other files of the repository import them
 * (log-scaled), best first (qparse_windows_free). */
static size_t central_files(sqlite3 *db, const struct evidence *pool, struct qwindow **out)
{
    struct qwindow *v = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = NULL;
    *out = NULL;
    if (!db || sqlite3_prepare_v2(db,
                                  "SELECT count(DISTINCT i.file_id) FROM imports i JOIN files f ON f.id = i.resolved_file_id "
                                  "WHERE f.path = ?1 AND i.file_id != f.id",
                                  -1, &st, NULL) != SQLITE_OK)
        return 0;
    for (size_t k = 0; k < pool->n; k++) {
        const char *path = pool->v[k].path;
        int dup = 0;
        for (size_t i = 0; i < n && !dup; i++) dup = !strcmp(v[i].path, path);
        if (dup) continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        int deg = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
        ARRAY_GROW(v, n, cap, 16);
        memset(&v[n], 0, sizeof v[n]);
        v[n].path = xstrdup(path);
        v[n].score = log1p((double)deg);
        n++;
    }
    sqlite3_finalize(st);
    if (n) qsort(v, n, sizeof *v, cmp_qwindow);
    *out = v;
    return n;
}

/* The tree's own answer: its pool ranked by answer_build with the priors of
 * where the question's words concentrate, the files the tree's steps
 * agree on and the files the repository builds on. */
static int tree_answer(struct offline_policy *p, const struct mcts_tree *t, const struct evidence *pool,
                       char **markdown, struct evidence *cites, char *err, size_t errlen)
{
    struct answer_opts ao = {0};
    ao.prior = p->wins;
    ao.nprior = p->nwins;
    struct qwindow *files = NULL;
    ao.nfiles = tree_files(t, &files);
    ao.files = files;
    struct qwindow *central = NULL;
    ao.ncentral = central_files(p->cfg.db, pool, &central);
    ao.central = central;
    /* the leading citations say where to look: five files when the tree
     * found five with anything of the question in them */
    ao.distinct_files = 5;
    ao.distinct_ratio = 0.1;
    ao.max_cites = OFFLINE_ANSWER_CITES;
    int rc = answer_build(&p->q, pool, p->cfg.db, &ao, markdown, cites, err, errlen);
    qparse_windows_free(files, ao.nfiles);
    qparse_windows_free(central, ao.ncentral);
    return rc;
}

/* The answer: the tree's own, fused with the flat ranker's windows and
 * chunks (answer_fuse.h) unless p->fuse_k is 0. Without the windows (an index that
 * cannot be read now) the tree's answer stands alone. */
static int answer_from(struct offline_policy *p, const struct mcts_tree *t, const int *ids, size_t nids,
                       struct policy_answer *out, char *err, size_t errlen)
{
    struct evidence pool = EVIDENCE_INIT, tcites = EVIDENCE_INIT;
    char *tmd = NULL;
    answer_pool(t, ids, nids, &pool);
    int rc = tree_answer(p, t, &pool, &tmd, &tcites, err, errlen);
    char ferr[256];
    /* the chunks as SemanticSearch ranks them: with the local vectors, as
     * --mode rag-function does, unless the ablation forbids them */
    struct answer_fuse_chunks chunks = {0};
    if (p->cfg.actx && p->question) {
        chunks.cache = semantic_cache_of(p->cfg.actx);
        chunks.question = p->question;
        chunks.mode = p->cfg.no_semantic ? SEMANTIC_BM25 : SEMANTIC_HYBRID;
    }
    if (!rc && p->fuse_k > 0 && p->cfg.db &&
        answer_fuse(&p->q, p->cfg.db, chunks.cache ? &chunks : NULL, &pool, &tcites, p->fuse_k, OFFLINE_ANSWER_CITES,
                    &out->markdown, &out->cites, &out->read, ferr, sizeof ferr) == 0) {
        free(tmd);
        evidence_free(&tcites);
    } else if (!rc) {
        if (p->fuse_k > 0 && p->cfg.db) log_msg("offline policy: the answer is the tree's alone: %s", ferr);
        out->markdown = tmd;
        out->cites = tcites;
    }
    evidence_free(&pool);
    return rc;
}

static int op_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
                     struct policy_usage *u, char *err, size_t errlen)
{
    (void)u;
    struct offline_policy *p = ctx;
    if (prepare(p, t, err, errlen)) return -1;
    /* the whole tree's spans: the search verifies against the whole tree
     * (answer_from_tree, set by offline_policy_bind) */
    return answer_from(p, t, ids, nids, out, err, errlen);
}

/* DRQA_FUSE_K: the rank fusion constant, "off" for the tree's answer alone;
 * for the benches that choose it on some repositories and score it on
 * others (bench/loo.sh). Anything else is an error worth seeing, not a
 * silent default. */
static double fuse_k_from_env(void)
{
    const char *v = getenv("DRQA_FUSE_K");
    if (!v || !*v) return FUSE_RRF_K;
    if (!strcmp(v, "off")) return 0;
    char *end;
    double k = strtod(v, &end);
    if (*end || !(k > 0)) {
        log_msg("offline policy: DRQA_FUSE_K='%s' is neither 'off' nor a positive number; using %g", v, FUSE_RRF_K);
        return FUSE_RRF_K;
    }
    return k;
}

struct offline_policy *offline_policy_new(const struct offline_config *cfg)
{
    struct offline_policy *p = xcalloc(1, sizeof *p);
    if (cfg) p->cfg = *cfg;
    p->fuse_k = fuse_k_from_env();
    return p;
}

void offline_policy_free(struct offline_policy *p)
{
    if (!p) return;
    forget_question(p);
    sqlite3_finalize(p->span_st);
    free(p);
}

void offline_policy_set_iterations(struct offline_policy *p, int iterations) { p->cfg.iterations = iterations; }

void offline_policy_bind(struct offline_policy *p, struct policy *out)
{
    memset(out, 0, sizeof *out);
    out->name = "offline";
    out->ctx = p;
    out->perceive = op_perceive;
    out->plan = op_plan;
    out->evaluate = op_evaluate;
    out->rollout = op_rollout;
    out->answer = op_answer;
    out->answer_from_tree = 1;
}
