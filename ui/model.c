/*
 * model: the front end's mirror of the search tree, updated from events and
 * read by the panes (see model.h).
 */
#include "model.h"
#include "text.h"
#include "transcript.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void writing_clear(struct ui_model *m)
{
    buf_free(&m->writing.text);
    memset(&m->writing, 0, sizeof m->writing);
}

static void reset_extras(struct ui_model *m)
{
    free(m->folded);
    m->folded = NULL;
    m->folded_cap = 0;
    free(m->best);
    m->best = NULL;
    m->nbest = 0;
    m->best_stale = 1;
    m->newest = -1;
    m->iteration = 0;
}

void ui_model_init(struct ui_model *m, const char *question, int max_expand, double c,
                   unsigned long long seed, int iterations_total)
{
    memset(m, 0, sizeof *m);
    m->max_expand = max_expand;
    m->c = c;
    m->seed = seed;
    m->iterations_total = iterations_total;
    m->t = mcts_new(question ? question : "", max_expand, c, seed);
    m->state = EVQ_STATE_IDLE;
    m->message_node = -1;
    reset_extras(m);
}

void ui_model_init_replay(struct ui_model *m, struct mcts_tree *tree, struct search_answer *answer,
                          cJSON *config)
{
    memset(m, 0, sizeof *m);
    m->t = tree;
    m->answer = answer;
    m->config = config;
    m->max_expand = tree->max_expand;
    m->c = tree->c;
    m->seed = tree->seed;
    m->iterations_total = tree->iterations;
    m->state = EVQ_STATE_DONE;
    m->state_text = tree->stop_reason ? xstrdup(tree->stop_reason) : NULL;
    m->tokens_in = tree->tokens_in;
    m->tokens_out = tree->tokens_out;
    m->message_node = -1;
    m->searches = 1;
    reset_extras(m);
    m->iteration = tree->iterations;
    if (config) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(config, "iterations");
        if (cJSON_IsNumber(it)) m->iterations_total = it->valueint;
    }
}

void ui_model_free(struct ui_model *m)
{
    if (!m) return;
    mcts_free(m->t);
    search_answer_free(m->answer);
    cJSON_Delete(m->config);
    free(m->folded);
    free(m->best);
    free(m->state_text);
    free(m->message);
    writing_clear(m);
    memset(m, 0, sizeof *m);
}

static void set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? xstrdup(src) : NULL;
}

/* Appends node id under parent whatever the parent's state: the worker has
 * already decided, the mirror only records. */
static struct mcts_node *mirror_add(struct mcts_tree *t, int id, int parent)
{
    if (id != t->n || parent < 0 || parent >= t->n) return NULL;
    struct mcts_node *p = &t->nodes[parent];
    enum mcts_status st = p->status;
    int dup = p->duplicate, max = t->max_expand, forced = t->forced;
    p->status = MCTS_DONE;
    p->duplicate = 0;
    t->max_expand = INT_MAX;
    int got = mcts_add_child(t, parent);
    p = &t->nodes[parent];
    p->status = st;
    p->duplicate = dup;
    t->max_expand = max;
    t->forced = forced;
    return got == id ? &t->nodes[id] : NULL;
}

/* "Name {json}" from the worker's action label. */
static void set_action(struct mcts_node *n, const char *label)
{
    if (!label || !*label || n->parent < 0) return;
    const char *sp = strchr(label, ' ');
    size_t len = sp ? (size_t)(sp - label) : strlen(label);
    free(n->action);
    n->action = xstrndup(label, len);
    cJSON_Delete(n->args);
    n->args = sp ? cJSON_Parse(sp + 1) : NULL;
    if (n->args && !cJSON_IsObject(n->args)) {
        cJSON_Delete(n->args);
        n->args = NULL;
    }
}

int ui_span_header(const char *s, size_t len, size_t *pathlen, int *start, int *end)
{
    size_t i = 0;
    while (i < len && s[i] != ':' && s[i] != ' ' && s[i] != '\t') i++;
    if (i == 0 || i >= len || s[i] != ':') return 0;
    *pathlen = i;
    long a = 0, b = 0;
    size_t d = ++i;
    while (i < len && s[i] >= '0' && s[i] <= '9' && i - d < 9) a = a * 10 + (s[i++] - '0');
    if (i == d || i >= len || s[i] != '-') return 0;
    d = ++i;
    while (i < len && s[i] >= '0' && s[i] <= '9' && i - d < 9) b = b * 10 + (s[i++] - '0');
    if (i == d || (i < len && s[i] != ' ') || a < 1 || b < a) return 0;
    *start = (int)a;
    *end = (int)b;
    return 1;
}

/* The spans of a rendered observation: each 'path:start-end  label' header
 * and the lines under it (at most end - start + 1 of them). */
static void parse_spans(struct evidence *ev, const char *text)
{
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t pl;
        int a, b;
        if (!ui_span_header(p, len, &pl, &a, &b)) {
            p = nl ? nl + 1 : NULL;
            continue;
        }
        char *path = xstrndup(p, pl);
        const char *lab = p + pl;
        while (lab < p + len && *lab != ' ') lab++;
        while (lab < p + len && *lab == ' ') lab++;
        char *label = lab < p + len ? xstrndup(lab, (size_t)(p + len - lab)) : NULL;
        struct buf body = BUF_INIT;
        const char *q = nl ? nl + 1 : NULL;
        for (int k = a; k <= b && q && *q; k++) {
            const char *qn = strchr(q, '\n');
            size_t ql = qn ? (size_t)(qn - q) : strlen(q);
            size_t hp;
            int ha, hb;
            if (ui_span_header(q, ql, &hp, &ha, &hb)) break;
            if (k > a) buf_addc(&body, '\n');
            buf_add(&body, q, ql);
            q = qn ? qn + 1 : NULL;
        }
        evidence_add(ev, path, a, b, body.len ? buf_str(&body) : NULL, label, 0);
        buf_free(&body);
        free(path);
        free(label);
        p = q;
    }
}

static void update_node(struct mcts_node *n, const struct evq_event *e)
{
    n->status = (enum mcts_status)e->status;
    n->visits = e->visits;
    n->value_sum = e->q * e->visits;
    n->has_value = (e->flags & EVQ_FLAG_HAS_VALUE) != 0;
    n->value = e->value;
    n->duplicate = (e->flags & EVQ_FLAG_DUPLICATE) != 0;
    n->forced = (e->flags & EVQ_FLAG_FORCED) != 0;
    n->refused = (e->flags & EVQ_FLAG_REFUSED) != 0;
    if (e->flags & EVQ_FLAG_FALLBACK) n->fallback |= 1;   /* the UI shows whether, not which role */
    if (e->text3) set_str(&n->notes, e->text3);
    if (n->iteration == 0 && e->iteration > 0) n->iteration = e->iteration;
    set_action(n, e->text);
    if (n->status == MCTS_ERROR) {
        set_str(&n->error, e->text2);
    } else if (e->text2) {
        set_str(&n->feedback, e->text2);
    }
}

static void new_question(struct ui_model *m, const char *q)
{
    mcts_free(m->t);
    m->t = mcts_new(q ? q : "", m->max_expand, m->c, m->seed);
    search_answer_free(m->answer);
    m->answer = NULL;
    m->tokens_in = m->tokens_out = 0;
    m->searches++;
    free(m->message);   /* the last search's log line is not this one's */
    m->message = NULL;
    m->message_node = -1;
    reset_extras(m);
    writing_clear(m);
}

/* "path:start-end" lines into citations (text is not sent with them). */
static void parse_cites(struct evidence *ev, const char *s)
{
    while (s && *s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char *line = xstrndup(s, len);
        char *colon = strrchr(line, ':');
        int a, b;
        if (colon && sscanf(colon + 1, "%d-%d", &a, &b) == 2) {
            *colon = 0;
            evidence_add(ev, line, a, b, NULL, NULL, 0);
        }
        free(line);
        s = nl ? nl + 1 : NULL;
    }
}

static void set_answer(struct ui_model *m, const struct evq_event *e)
{
    search_answer_free(m->answer);
    struct search_answer *a = xcalloc(1, sizeof *a);
    a->markdown = xstrdup(e->text ? e->text : "");
    parse_cites(&a->cites, e->text2);
    a->finish_node = e->node;
    a->from_finished = e->a != 0;
    int *ids = NULL, fin = 0;
    if (e->node > 0 && mcts_node(m->t, e->node)) a->npath = mcts_path(m->t, e->node, &ids);
    else a->npath = search_best_trajectory(m->t, &ids, &fin);
    a->path = ids;
    a->tokens_in = a->tokens_out = 0;
    a->stopped = e->b != 0;
    a->written_by = e->text3 ? xstrdup(e->text3) : NULL;
    m->answer = a;
    writing_clear(m);   /* the answer as checked replaces the text as written */
}

/* A piece of the answer being written: the Answer pane shows it at once
 * (and appears with the first). */
static int apply_piece(struct ui_model *m, const struct evq_event *e)
{
    struct ui_writing *w = &m->writing;
    int dirty = UI_DIRTY_ANSWER | UI_DIRTY_STATUS | (w->active ? 0 : UI_DIRTY_LAYOUT);
    int64_t now = now_ms();
    if (!w->active) {
        w->active = 1;
        w->reasoning_only = 1;
        w->t_first = now;
    } else if (e->a != EVQ_DELTA_RESET) {
        w->bytes += e->b;
    }
    w->t_last = now;
    if (e->a == EVQ_DELTA_RESET) {
        buf_reset(&w->text);
        w->rewrites++;
        w->reasoning_only = 1;
    } else if (e->a == EVQ_DELTA_TEXT && e->text) {
        buf_adds(&w->text, e->text);
        w->reasoning_only = 0;
    }
    return dirty;
}

int ui_model_writing_rate(const struct ui_model *m, double *tok_s)
{
    const struct ui_writing *w = &m->writing;
    if (!w->active || w->t_last - w->t_first < 200) return 0;
    *tok_s = (double)w->bytes / 4.0 / ((double)(w->t_last - w->t_first) / 1000.0);
    return 1;
}

int ui_model_apply(struct ui_model *m, const struct evq_event *e, int *node)
{
    int dirty = 0, id = -1;
    struct mcts_node *n;
    switch (e->kind) {
    case EVQ_QUESTION:
        new_question(m, e->text);
        dirty = UI_DIRTY_ALL;
        id = 0;
        break;
    case EVQ_NODE_ADDED:
        n = mcts_node_mut(m->t, e->node);
        if (!n) n = mirror_add(m->t, e->node, e->parent);
        if (!n) break;
        update_node(n, e);
        n->iteration = e->iteration;
        m->newest = e->node;
        if (e->iteration > m->iteration) m->iteration = e->iteration;
        if (m->iteration > m->t->iterations) m->t->iterations = m->iteration;
        m->best_stale = 1;
        id = e->node;
        dirty = UI_DIRTY_TREE | UI_DIRTY_STATUS | UI_DIRTY_NODE;
        break;
    case EVQ_NODE_UPDATED:
        n = mcts_node_mut(m->t, e->node);
        if (!n) break;
        update_node(n, e);
        m->best_stale = 1;
        id = e->node;
        dirty = UI_DIRTY_TREE | UI_DIRTY_NODE;
        break;
    case EVQ_REPORT:
    case EVQ_EVIDENCE:
        n = mcts_node_mut(m->t, e->node);
        if (!n) break;
        set_str(e->kind == EVQ_REPORT ? &n->report : &n->obs_text, e->text ? e->text : "");
        if (e->kind == EVQ_EVIDENCE) {
            evidence_free(&n->obs);
            parse_spans(&n->obs, n->obs_text);
            m->best_stale = 1;
        }
        id = e->node;
        dirty = UI_DIRTY_NODE;
        break;
    case EVQ_LOG:
        set_str(&m->message, e->text);
        m->message_node = e->node;
        id = e->node;
        dirty = UI_DIRTY_MESSAGE;
        break;
    case EVQ_STATE:
        m->state = e->state;
        m->progress_done = e->a;
        m->progress_total = e->b;
        set_str(&m->state_text, e->text);
        if (e->state == EVQ_STATE_DONE && e->text) set_str(&m->t->stop_reason, e->text);
        dirty = UI_DIRTY_STATUS;
        break;
    case EVQ_ANSWER:
        set_answer(m, e);
        id = e->node;
        dirty = UI_DIRTY_ANSWER | UI_DIRTY_LAYOUT | UI_DIRTY_TREE | UI_DIRTY_STATUS;
        break;
    case EVQ_ANSWER_DELTA:
        dirty = apply_piece(m, e);
        break;
    case EVQ_UCT:
        n = mcts_node_mut(m->t, e->node);
        if (!n) break;
        mcts_mark_uct(n, e->iteration, e->a != 0, e->uct);
        n->uct[n->nuct - 1].chosen = e->b != 0;
        id = e->node;
        dirty = UI_DIRTY_TREE | UI_DIRTY_NODE;
        break;
    case EVQ_TOKENS:
        m->tokens_in = e->a;
        m->tokens_out = e->b;
        m->t->tokens_in = e->a;
        m->t->tokens_out = e->b;
        dirty = UI_DIRTY_STATUS;
        break;
    }
    if (node) *node = id;
    return dirty;
}

const int *ui_model_best(struct ui_model *m, size_t *n, int *finished)
{
    if (m->best_stale) {
        free(m->best);
        m->best = NULL;
        m->nbest = search_best_trajectory(m->t, &m->best, &m->best_finished);
        m->best_stale = 0;
    }
    if (n) *n = m->nbest;
    if (finished) *finished = m->best_finished;
    return m->best;
}

int ui_model_on_best(struct ui_model *m, int id)
{
    size_t n;
    const int *b = ui_model_best(m, &n, NULL);
    if (n <= 1) return 0;   /* the root alone is no path */
    for (size_t i = 0; i < n; i++)
        if (b[i] == id) return 1;
    return 0;
}

int ui_model_folded(const struct ui_model *m, int id)
{
    return id >= 0 && id < m->folded_cap && m->folded[id];
}

void ui_model_set_folded(struct ui_model *m, int id, int folded)
{
    if (id < 0) return;
    if (id >= m->folded_cap) {
        int cap = (int)xgrow_cap((size_t)m->folded_cap, (size_t)id, 64);
        m->folded = xrealloc(m->folded, (size_t)cap);
        memset(m->folded + m->folded_cap, 0, (size_t)(cap - m->folded_cap));
        m->folded_cap = cap;
    }
    m->folded[id] = folded != 0;
}

void ui_model_reveal(struct ui_model *m, int id)
{
    const struct mcts_node *n = mcts_node(m->t, id);
    for (int p = n ? n->parent : -1; p >= 0; p = m->t->nodes[p].parent)
        if (ui_model_folded(m, p)) ui_model_set_folded(m, p, 0);
}

static size_t dfs_rows(const struct ui_model *m, int **rows, int skip_folded)
{
    const struct mcts_tree *t = m->t;
    int *out = xmalloc((size_t)(t->n ? t->n : 1) * sizeof *out);
    int *stack = xmalloc((size_t)(t->n ? t->n : 1) * sizeof *stack);
    size_t n = 0, sp = 0;
    stack[sp++] = 0;
    while (sp) {
        int id = stack[--sp];
        out[n++] = id;
        const struct mcts_node *nd = &t->nodes[id];
        if (skip_folded && ui_model_folded(m, id)) continue;
        for (int k = nd->nchildren - 1; k >= 0; k--) stack[sp++] = nd->children[k];
    }
    free(stack);
    *rows = out;
    return n;
}

size_t ui_model_rows(const struct ui_model *m, int **rows)
{
    return dfs_rows(m, rows, 1);
}

size_t ui_model_order(const struct ui_model *m, int **rows)
{
    return dfs_rows(m, rows, 0);
}

/* The argument that says most about an action, by the actions' schemas. */
static const char *key_arg(const cJSON *args)
{
    static const char *const keys[] = {"class_name", "function_name", "code_snippet", "query",
                                       "file_path", "path", "symbol", "name", "pattern",
                                       "file_pattern", "answer"};
    if (!args) return NULL;
    for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, keys[i]);
        if (cJSON_IsString(v) && *v->valuestring) return v->valuestring;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, args) if (cJSON_IsString(v) && *v->valuestring) return v->valuestring;
    return NULL;
}

/* 1 when a ViewCode entry names its lines: 'path:120-180' or 'path:120'. */
static int spec_has_lines(const char *spec)
{
    const char *c = strrchr(spec, ':');
    if (!c || !c[1]) return 0;
    for (const char *p = c + 1; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '-')) return 0;
    return 1;
}

/* ViewCode's span: the first entry of code_span_list when it names its
 * lines, else the span the observation resolved it to (a symbol or a whole
 * file becomes path:start-end once read), else the entry as written; ' +N'
 * when more entries follow. */
static char *view_span(const struct mcts_node *n)
{
    const cJSON *l = n->args ? cJSON_GetObjectItemCaseSensitive(n->args, "code_span_list") : NULL;
    const cJSON *first = cJSON_IsArray(l) ? cJSON_GetArrayItem(l, 0) : NULL;
    const char *spec = cJSON_IsString(first) ? first->valuestring : NULL;
    int more = cJSON_IsArray(l) ? cJSON_GetArraySize(l) - 1 : 0;
    struct buf b = BUF_INIT;
    if (spec && spec_has_lines(spec)) {
        buf_adds(&b, spec);
    } else if (n->obs.n) {
        const struct evidence_span *sp = &n->obs.v[0];
        size_t pl = spec ? strcspn(spec, ":") : 0;
        /* the resolved span of this entry: same path (or the entry was a bare symbol) */
        for (size_t i = 0; spec && i < n->obs.n; i++)
            if (strlen(n->obs.v[i].path) == pl && !strncmp(n->obs.v[i].path, spec, pl)) {
                sp = &n->obs.v[i];
                break;
            }
        buf_printf(&b, "%s:%d-%d", sp->path, sp->start_line, sp->end_line);
    } else if (spec) {
        buf_adds(&b, spec);
    } else {
        return NULL;
    }
    if (more > 0) buf_printf(&b, " +%d", more);
    return buf_take(&b);
}

char *ui_model_arg(const struct ui_model *m, int id)
{
    const struct mcts_node *n = mcts_node(m->t, id);
    if (!n || n->parent < 0 || !n->action || strcmp(n->action, "Finish") == 0) return NULL;
    if (strcmp(n->action, "ViewCode") == 0) {
        char *s = view_span(n);
        if (s) return s;
    }
    const char *k = key_arg(n->args);
    if (!k) return NULL;
    /* One line: the argument's first line only, and the files it is limited
     * to, which tell apart siblings that search the same words */
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(n->args, "file_pattern");
    if (cJSON_IsString(fp) && *fp->valuestring && fp->valuestring != k)
        return xasprintf("%.*s in %.*s", (int)strcspn(k, "\n"), k, (int)strcspn(fp->valuestring, "\n"),
                         fp->valuestring);
    return xstrndup(k, strcspn(k, "\n"));
}

char *ui_model_label(const struct ui_model *m, int id)
{
    const struct mcts_node *n = mcts_node(m->t, id);
    if (!n) return xstrdup("");
    if (n->parent < 0) return xstrdup(*m->t->question ? "question" : "(no question yet)");
    if (!n->action) return xstrdup(n->status == MCTS_PRUNED ? "(nothing new)" : "(planning)");
    char *k = ui_model_arg(m, id);
    if (!k) return xstrdup(n->action);
    char *s = xasprintf("%s %s", n->action, k);
    free(k);
    return s;
}

const char *ui_model_status_word(const struct mcts_node *n)
{
    if (n->duplicate) return "duplicate";
    if (n->refused) return "refused";   /* a Finish not run: its Q is no value */
    switch (n->status) {
    case MCTS_PENDING: return "pending";
    case MCTS_RUNNING: return "running";
    case MCTS_DONE: return n->forced ? "forced" : "done";
    case MCTS_FINISHED: return "finished";
    case MCTS_PRUNED: return "pruned";
    case MCTS_ERROR: return "error";
    }
    return "?";
}

int ui_model_match(const struct ui_model *m, int id, const char *needle)
{
    const struct mcts_node *n = mcts_node(m->t, id);
    if (!n || !needle || !*needle) return 0;
    if (text_contains(n->action, needle) || text_contains(n->report, needle) ||
        text_contains(n->obs_text, needle) || text_contains(n->feedback, needle) ||
        text_contains(n->error, needle))
        return 1;
    if (n->parent < 0 && text_contains(m->t->question, needle)) return 1;
    if (n->args) {
        char *a = cJSON_PrintUnformatted(n->args);
        int hit = text_contains(a, needle);
        cJSON_free(a);
        if (hit) return 1;
    }
    return 0;
}

int ui_make_dirs(const char *dir, char *err, size_t errlen)
{
    char *d = xstrdup(dir);
    int rc = 0;
    for (char *p = d + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        if (mkdir(d, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create the transcript directory '%s': %s (pass "
                     "--transcript-dir DIR to write elsewhere)", d, strerror(errno));
            rc = -1;
            break;
        }
        *p = c;
        if (!c) break;
    }
    free(d);
    return rc;
}

int ui_model_export(const struct ui_model *m, const char *dir, const char *stamp, char **json_path,
                    char **md_path, char *err, size_t errlen)
{
    *json_path = *md_path = NULL;
    char now[32] = "unknown-time";
    if (!stamp) {
        time_t tt = time(NULL);
        struct tm tm;
        if (localtime_r(&tt, &tm)) strftime(now, sizeof now, "%Y%m%d-%H%M%S", &tm);
        stamp = now;
    }
    char hex[17];
    hash64_hex(hash64(m->t->question, strlen(m->t->question)), hex);
    hex[8] = 0;
    char *jp = xasprintf("%s/drqa-%s-%s-export.json", dir, stamp, hex);
    char *mp = xasprintf("%s/drqa-%s-%s-export.md", dir, stamp, hex);
    if (ui_make_dirs(dir, err, errlen) != 0 ||
        transcript_save(jp, m->t, m->config, m->answer, err, errlen) != 0 ||
        transcript_save_markdown(mp, m->t, m->answer, err, errlen) != 0) {
        free(jp);
        free(mp);
        return -1;
    }
    *json_path = jp;
    *md_path = mp;
    return 0;
}

void ui_clock_event(struct ui_clock *c, const struct evq_event *e, enum evq_state state, int64_t now)
{
    if (e->kind == EVQ_QUESTION) {
        c->start = now;
        c->stopped = 0;
        c->since = state == EVQ_STATE_PAUSED ? now : 0;
        return;
    }
    if (e->kind != EVQ_STATE || !c->start) return;
    int stop = e->state == EVQ_STATE_PAUSED || e->state == EVQ_STATE_DONE || e->state == EVQ_STATE_ERROR;
    int runs = e->state == EVQ_STATE_SEARCHING;
    if (stop && !c->since) c->since = now;
    else if (runs && c->since) {
        c->stopped += now - c->since;
        c->since = 0;
    }
}

int64_t ui_clock_elapsed(const struct ui_clock *c, int64_t now)
{
    if (!c->start) return -1;
    int64_t to = c->since ? c->since : now;
    int64_t ms = to - c->start - c->stopped;
    return ms < 0 ? 0 : ms;
}
