/*
 * mcts: the search tree, UCT selection, expansion and back-propagation. The
 * rules are stated in mcts.h; this file implements exactly those. Nothing
 * here calls a policy, takes a lock or knows about threads: the search
 * (search.c) owns the tree and serialises every change to it.
 */
#include "mcts.h"
#include "action.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const status_names[] = {
    [MCTS_PENDING] = "pending", [MCTS_RUNNING] = "running", [MCTS_DONE] = "done",
    [MCTS_FINISHED] = "finished", [MCTS_PRUNED] = "pruned", [MCTS_ERROR] = "error",
};

const char *mcts_status_name(enum mcts_status s)
{
    if ((unsigned)s >= ARRAY_LEN(status_names)) return "unknown";
    return status_names[s];
}

int mcts_status_parse(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(status_names); i++)
        if (name && strcmp(name, status_names[i]) == 0) return (int)i;
    return -1;
}

static void node_init(struct mcts_node *n, int id, int parent, int depth)
{
    memset(n, 0, sizeof *n);
    n->id = id;
    n->parent = parent;
    n->depth = depth;
    n->dup_of = -1;
    n->status = MCTS_PENDING;
}

static void node_free(struct mcts_node *n)
{
    free(n->children);
    free(n->action);
    cJSON_Delete(n->args);
    free(n->args_key);
    free(n->rationale);
    free(n->report);
    evidence_free(&n->obs);
    free(n->obs_text);
    free(n->feedback);
    free(n->uct);
    free(n->error);
    free(n->notes);
}

struct mcts_tree *mcts_new(const char *question, int max_expand, double c, uint64_t seed)
{
    struct mcts_tree *t = xcalloc(1, sizeof *t);
    t->question = xstrdup(question ? question : "");
    t->max_expand = max_expand > 0 ? max_expand : MCTS_DEFAULT_MAX_EXPAND;
    t->c = c >= 0 ? c : MCTS_DEFAULT_C;
    t->seed = seed;
    rng_seed(&t->rng, seed);
    t->forced = -1;
    t->cap = 16;
    t->nodes = xcalloc((size_t)t->cap, sizeof *t->nodes);
    node_init(&t->nodes[0], 0, -1, 0);
    t->nodes[0].status = MCTS_DONE;
    t->n = 1;
    return t;
}

void mcts_free(struct mcts_tree *t)
{
    if (!t) return;
    for (int i = 0; i < t->n; i++) node_free(&t->nodes[i]);
    free(t->nodes);
    free(t->question);
    free(t->stop_reason);
    free(t);
}

const struct mcts_node *mcts_node(const struct mcts_tree *t, int id)
{
    return (t && id >= 0 && id < t->n) ? &t->nodes[id] : NULL;
}

struct mcts_node *mcts_node_mut(struct mcts_tree *t, int id)
{
    return (t && id >= 0 && id < t->n) ? &t->nodes[id] : NULL;
}

/* Visits and value sum as UCT sees them: in-flight visits count as value 0. */
static double eff_visits(const struct mcts_node *n)
{
    return (double)n->visits + n->virtual_loss;
}

double mcts_q(const struct mcts_node *n)
{
    double v = eff_visits(n);
    return v > 0 ? n->value_sum / v : 0;
}

int mcts_expandable(const struct mcts_tree *t, int id)
{
    const struct mcts_node *n = mcts_node(t, id);
    return n && n->status == MCTS_DONE && !n->duplicate && !n->refused && !n->closed && n->nchildren < t->max_expand;
}

int mcts_add_child(struct mcts_tree *t, int parent)
{
    if (!mcts_expandable(t, parent)) return -1;
    ARRAY_GROW(t->nodes, t->n, t->cap, 16);
    int id = t->n++;
    struct mcts_node *p = &t->nodes[parent];
    node_init(&t->nodes[id], id, parent, p->depth + 1);
    ARRAY_GROW(p->children, p->nchildren, p->children_cap, 4);
    p->children[p->nchildren++] = id;
    return id;
}

static double log_visits(const struct mcts_node *n)
{
    double v = eff_visits(n);
    return v > 1 ? log(v) : 0;
}

double mcts_uct(const struct mcts_tree *t, int id)
{
    const struct mcts_node *c = mcts_node(t, id);
    if (!c || c->parent < 0) return 0;
    double nc = eff_visits(c);
    if (nc <= 0) return HUGE_VAL;
    return mcts_q(c) + t->c * sqrt(log_visits(&t->nodes[c->parent]) / nc);
}

double mcts_uct_new(const struct mcts_tree *t, int id)
{
    const struct mcts_node *s = mcts_node(t, id);
    if (!s) return 0;
    return mcts_q(s) + t->c * sqrt(log_visits(s));
}

void mcts_mark_uct(struct mcts_node *n, int iteration, int as_new, double score)
{
    ARRAY_GROW(n->uct, n->nuct, n->uct_cap, 4);
    n->uct[n->nuct++] = (struct mcts_uct_mark){iteration, as_new, score, 0};
    if (!as_new) n->last_uct = score;
}

const struct mcts_uct_mark *mcts_last_mark(const struct mcts_node *n, int as_new)
{
    for (int k = n->nuct - 1; k >= 0; k--)
        if (n->uct[k].as_new == as_new) return &n->uct[k];
    return NULL;
}

/* Marks the newest score of id (as a child, or as_new) as the winner. */
static void mark_chosen(struct mcts_tree *t, int id, int as_new)
{
    struct mcts_node *n = &t->nodes[id];
    for (int k = n->nuct - 1; k >= 0; k--)
        if (n->uct[k].as_new == as_new) {
            n->uct[k].chosen = 1;
            return;
        }
}

/* open[i]: node i is not pruned and its subtree holds an expandable node.
 * Children always have larger ids than their parent, so one backward pass
 * sees every child before its parent. */
static unsigned char *open_map(const struct mcts_tree *t)
{
    unsigned char *open = xcalloc((size_t)t->n, 1);
    for (int i = t->n - 1; i >= 0; i--) {
        const struct mcts_node *n = &t->nodes[i];
        if (n->status == MCTS_PRUNED) continue;
        if (mcts_expandable(t, i)) open[i] = 1;
        for (int k = 0; k < n->nchildren && !open[i]; k++)
            if (open[n->children[k]]) open[i] = 1;
    }
    return open;
}

static int take_forced(struct mcts_tree *t, int *was_forced)
{
    int f = t->forced;
    t->forced = -1;
    if (f >= 0 && mcts_expandable(t, f)) {
        if (was_forced) *was_forced = 1;
        return f;
    }
    return -1;
}

int mcts_select(struct mcts_tree *t, int iteration, int *was_forced)
{
    if (was_forced) *was_forced = 0;
    int f = take_forced(t, was_forced);
    if (f >= 0) return f;

    unsigned char *open = open_map(t);
    int *ties = xmalloc((size_t)t->n * sizeof *ties);
    int s = open[0] ? 0 : -1;
    while (s >= 0) {
        struct mcts_node *sn = &t->nodes[s];
        double best = -HUGE_VAL;
        int nties = 0;
        for (int k = 0; k < sn->nchildren; k++) {
            int c = sn->children[k];
            if (!open[c]) continue;
            double u = mcts_uct(t, c);
            mcts_mark_uct(&t->nodes[c], iteration, 0, u);
            if (u > best) {
                best = u;
                nties = 0;
            }
            if (u == best) ties[nties++] = c;
        }
        if (nties == 0) break;              /* open without open children: expandable */
        if (mcts_expandable(t, s)) {
            double un = mcts_uct_new(t, s);
            mcts_mark_uct(sn, iteration, 1, un);
            if (un >= best) {
                mark_chosen(t, s, 1);
                break;
            }
        }
        s = nties == 1 ? ties[0] : ties[rng_below(&t->rng, (uint32_t)nties)];
        mark_chosen(t, s, 0);
    }
    free(ties);
    free(open);
    return s;
}

int mcts_select_greedy(struct mcts_tree *t, int *was_forced)
{
    if (was_forced) *was_forced = 0;
    int f = take_forced(t, was_forced);
    if (f >= 0) return f;
    for (int id = t->n - 1; id >= 0; id = t->nodes[id].parent)
        if (mcts_expandable(t, id)) return id;
    return -1;
}

void mcts_backprop(struct mcts_tree *t, int id, double value)
{
    for (; id >= 0 && id < t->n; id = t->nodes[id].parent) {
        t->nodes[id].visits++;
        t->nodes[id].value_sum += value;
    }
}

void mcts_virtual_loss(struct mcts_tree *t, int id, int delta)
{
    for (; id >= 0 && id < t->n; id = t->nodes[id].parent) t->nodes[id].virtual_loss += delta;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

struct mcts_tree *mcts_clone(const struct mcts_tree *t)
{
    struct mcts_tree *c = xmalloc(sizeof *c);
    *c = *t;
    c->question = xstrdup(t->question);
    c->stop_reason = dup_or_null(t->stop_reason);
    c->cap = t->n;
    c->nodes = xcalloc((size_t)c->cap, sizeof *c->nodes);
    for (int i = 0; i < t->n; i++) {
        const struct mcts_node *a = &t->nodes[i];
        struct mcts_node *b = &c->nodes[i];
        *b = *a;
        b->children_cap = a->nchildren;
        b->children = NULL;
        if (a->nchildren) {
            b->children = xmalloc((size_t)a->nchildren * sizeof *b->children);
            memcpy(b->children, a->children, (size_t)a->nchildren * sizeof *b->children);
        }
        b->action = dup_or_null(a->action);
        b->args = a->args ? cJSON_Duplicate(a->args, 1) : NULL;
        b->args_key = dup_or_null(a->args_key);
        b->rationale = dup_or_null(a->rationale);
        b->report = dup_or_null(a->report);
        b->obs = (struct evidence)EVIDENCE_INIT;
        evidence_copy(&b->obs, &a->obs);
        b->obs_text = dup_or_null(a->obs_text);
        b->feedback = dup_or_null(a->feedback);
        b->error = dup_or_null(a->error);
        b->notes = dup_or_null(a->notes);
        b->uct_cap = a->nuct;
        b->uct = NULL;
        if (a->nuct) {
            b->uct = xmalloc((size_t)a->nuct * sizeof *b->uct);
            memcpy(b->uct, a->uct, (size_t)a->nuct * sizeof *b->uct);
        }
    }
    return c;
}

int mcts_prune(struct mcts_tree *t, int id, char *err, size_t errlen)
{
    if (!mcts_node(t, id)) {
        snprintf(err, errlen, "cannot prune node %d: there is no such node (the tree has %d)", id,
                 t->n);
        return -1;
    }
    if (id == 0) {
        snprintf(err, errlen, "cannot prune the root; ask a new question instead");
        return -1;
    }
    /* Refuse before changing anything, so a prune is all or nothing. */
    int *stack = xmalloc((size_t)t->n * sizeof *stack);
    int top = 0;
    stack[top++] = id;
    while (top > 0) {
        int i = stack[--top];
        if (t->nodes[i].status == MCTS_RUNNING || t->nodes[i].status == MCTS_PENDING) {
            snprintf(err, errlen, "cannot prune node %d: node %d is still being worked on", id, i);
            free(stack);
            return -1;
        }
        for (int k = 0; k < t->nodes[i].nchildren; k++) stack[top++] = t->nodes[i].children[k];
    }
    top = 0;
    stack[top++] = id;
    while (top > 0) {
        int i = stack[--top];
        t->nodes[i].status = MCTS_PRUNED;
        if (t->forced == i) t->forced = -1;
        for (int k = 0; k < t->nodes[i].nchildren; k++) stack[top++] = t->nodes[i].children[k];
    }
    free(stack);
    return 0;
}

int mcts_force(struct mcts_tree *t, int id, char *err, size_t errlen)
{
    const struct mcts_node *n = mcts_node(t, id);
    if (!n) {
        snprintf(err, errlen, "cannot expand node %d: there is no such node (the tree has %d)", id,
                 t->n);
        return -1;
    }
    if (!mcts_expandable(t, id)) {
        /* each case in its own words; the children limit only where it applies */
        if (n->status == MCTS_DONE && !n->duplicate && !n->refused)
            snprintf(err, errlen, "cannot expand node %d: it is already fully expanded (a node takes at most %d children)",
                     id, t->max_expand);
        else
            snprintf(err, errlen, "cannot expand node %d: %s", id,
                     n->status == MCTS_FINISHED ? "it is finished (Finish ends its path: it has no children)"
                     : n->status == MCTS_PRUNED ? "it is pruned (a pruned subtree is never searched again)"
                     : n->status == MCTS_ERROR  ? "its action failed (a failed node has no children)"
                     : n->status != MCTS_DONE   ? "its action has not finished yet (try again once it has)"
                     : n->duplicate             ? "it is a duplicate (it repeats another node's action)"
                                                : "it is a Finish the search refused (no code on its path)");
        return -1;
    }
    t->forced = id;
    return 0;
}

/* ---- canonical action keys ---- */

static void key_string(struct buf *b, const char *s)
{
    buf_addc(b, '"');
    while (isspace((unsigned char)*s)) s++;
    int pending_space = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isspace(ch)) {
            pending_space = 1;
            continue;
        }
        if (pending_space) buf_addc(b, ' ');
        pending_space = 0;
        if (ch == '"' || ch == '\\') buf_addc(b, '\\');
        buf_addc(b, (char)tolower(ch));
    }
    buf_addc(b, '"');
}

static int skip_member(const cJSON *v)
{
    if (cJSON_IsNull(v)) return 1;
    if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        while (isspace((unsigned char)*s)) s++;
        return *s == 0;
    }
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/* 1 when member m of action's arguments holds the value the action takes
 * when it is left out (action_arg_default). */
static int is_default(const char *action, const cJSON *m)
{
    const char *d = action && m->string ? action_arg_default(action, m->string) : NULL;
    if (!d) return 0;
    if (cJSON_IsBool(m)) return !strcmp(d, cJSON_IsTrue(m) ? "true" : "false");
    if (!cJSON_IsString(m)) return 0;
    const char *s = m->valuestring;
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return n == strlen(d) && strncasecmp(s, d, n) == 0;
}

static void key_value(struct buf *b, const cJSON *v, const char *action)
{
    if (cJSON_IsObject(v)) {
        size_t n = 0, i = 0;
        const cJSON *m;
        cJSON_ArrayForEach(m, v) n++;
        const cJSON **ms = xmalloc((n ? n : 1) * sizeof *ms);
        cJSON_ArrayForEach(m, v) ms[i++] = m;
        qsort(ms, n, sizeof *ms, cmp_names);
        buf_addc(b, '{');
        int first = 1;
        for (i = 0; i < n; i++) {
            if (skip_member(ms[i]) || is_default(action, ms[i])) continue;
            if (!first) buf_addc(b, ',');
            first = 0;
            key_string(b, ms[i]->string ? ms[i]->string : "");
            buf_addc(b, ':');
            key_value(b, ms[i], NULL);
        }
        buf_addc(b, '}');
        free(ms);
    } else if (cJSON_IsArray(v)) {
        buf_addc(b, '[');
        const cJSON *m;
        int first = 1;
        cJSON_ArrayForEach(m, v) {
            if (!first) buf_addc(b, ',');
            first = 0;
            key_value(b, m, NULL);
        }
        buf_addc(b, ']');
    } else if (cJSON_IsString(v)) {
        key_string(b, v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        buf_printf(b, "%.17g", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        buf_adds(b, cJSON_IsTrue(v) ? "true" : "false");
    } else {
        buf_adds(b, "null");
    }
}

char *mcts_action_key(const char *name, const cJSON *args)
{
    struct buf b = BUF_INIT;
    for (const char *p = name ? name : ""; *p; p++) buf_addc(&b, (char)tolower((unsigned char)*p));
    if (!strcmp(buf_str(&b), "finish")) return buf_take(&b);
    buf_addc(&b, ' ');
    if (args) key_value(&b, args, name);
    else buf_adds(&b, "{}");
    return buf_take(&b);
}

int mcts_find_duplicate(const struct mcts_tree *t, int node_id, const char *key)
{
    const struct mcts_node *n = mcts_node(t, node_id);
    if (!n || !key || n->parent < 0) return -1;
    const struct mcts_node *p = &t->nodes[n->parent];
    for (int k = 0; k < p->nchildren; k++) {
        const struct mcts_node *s = &t->nodes[p->children[k]];
        if (s->id != node_id && s->args_key && strcmp(s->args_key, key) == 0) return s->id;
    }
    for (int a = n->parent; a >= 0; a = t->nodes[a].parent)
        if (t->nodes[a].args_key && strcmp(t->nodes[a].args_key, key) == 0) return a;
    return -1;
}

size_t mcts_path(const struct mcts_tree *t, int id, int **ids)
{
    *ids = NULL;
    const struct mcts_node *n = mcts_node(t, id);
    if (!n) return 0;
    size_t len = (size_t)n->depth + 1;
    int *v = xmalloc(len * sizeof *v);
    for (size_t i = len; i-- > 0; id = t->nodes[id].parent) v[i] = id;
    *ids = v;
    return len;
}
