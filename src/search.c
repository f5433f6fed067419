/*
 * search: the driver of Algorithm 1 over an mcts tree, a policy, an executor
 * and a curator. The rules it enforces (errors on nodes, loop protection,
 * Finish, budget, ablations, answer grounding) and the parallel expansion
 * with its locking are described in search.h.
 *
 * One pipeline serves both regimes. A sequential step holds the search's
 * lock throughout and hands callbacks the live tree. In a parallel batch the
 * same code runs on several threads; call_begin/call_end bracket every
 * callback: they copy the tree for a policy call, release the lock (and take
 * the serial lock for a callback not declared thread-safe), then take the
 * lock back, after which every node pointer is fetched again (another thread
 * may have grown the node array meanwhile).
 */
#include "search.h"
#include "util.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct search {
    struct search_config cfg;
    struct policy pol;
    struct policy_executor ex;
    struct policy_curator cu;
    struct mcts_tree *t;
    enum search_stop stop;
    char *stop_message;         /* why, for SEARCH_STOP_ERROR */
    int64_t t0;

    /* Guards everything in this struct and the tree. Recursive, so that
     * on_event may call search_prune and friends. */
    pthread_mutex_t mu;
    pthread_mutex_t serial;     /* held around callbacks not declared thread-safe */
    pthread_cond_t work;        /* a batch has jobs to take, or quit */
    pthread_cond_t done;        /* a job of the batch was recorded */
    pthread_t *pool;            /* parallel - 1 threads, made by the first batch */
    int npool;
    int batch;                  /* a parallel batch is running */
    int *jobs;                  /* the batch: ids of the nodes being expanded */
    int njobs, jobs_cap, next_job, jobs_done;
    int quit;
};

static const char *const stop_names[] = {
    [SEARCH_RUNNING] = "running",
    [SEARCH_STOP_FINISH] = "finish",
    [SEARCH_STOP_ITERATIONS] = "iterations",
    [SEARCH_STOP_BUDGET] = "budget",
    [SEARCH_STOP_EXHAUSTED] = "exhausted",
    [SEARCH_STOP_USER] = "user",
    [SEARCH_STOP_ERROR] = "error",
    [SEARCH_STOP_BUDGET_USD] = "budget-usd",
};

const char *search_stop_name(enum search_stop s)
{
    return (unsigned)s < ARRAY_LEN(stop_names) ? stop_names[s] : "unknown";
}

void search_config_defaults(struct search_config *c)
{
    memset(c, 0, sizeof *c);
    c->iterations = 15;
    c->max_expand = MCTS_DEFAULT_MAX_EXPAND;
    c->exploration = -1;
    c->seed = 1;
    c->max_replans = 2;
    c->parallel = 1;
    c->finish_min_value = SEARCH_FINISH_MIN_VALUE;
}

/* The lock of a search that callers hold as const (reads of the stop state). */
static pthread_mutex_t *mutex_of(const struct search *s)
{
    return (pthread_mutex_t *)&s->mu;
}

static void lock(const struct search *s)
{
    pthread_mutex_lock(mutex_of(s));
}

static void unlock(const struct search *s)
{
    pthread_mutex_unlock(mutex_of(s));
}

static int64_t clock_now(const struct search *s)
{
    return s->cfg.clock_ms ? s->cfg.clock_ms() : now_ms();
}

static void emit(const struct search *s, enum search_event ev, int id)
{
    if (s->cfg.on_event) s->cfg.on_event(s->cfg.event_ctx, s, ev, id);
}

/* Like allocation, creating a lock fails only when memory is exhausted. */
static void must(int rc, const char *what)
{
    if (rc == 0) return;
    fprintf(stderr, "drqa-tui: search: cannot create %s: %s\n", what, strerror(rc));
    abort();
}

struct search *search_new(const struct search_config *cfg, const struct policy *policy,
                          const struct policy_executor *executor,
                          const struct policy_curator *curator, const char *question)
{
    struct search *s = xcalloc(1, sizeof *s);
    if (cfg) s->cfg = *cfg;
    else search_config_defaults(&s->cfg);
    if (s->cfg.iterations < 0) s->cfg.iterations = 0;
    if (s->cfg.max_replans < 0) s->cfg.max_replans = 0;
    if (policy) s->pol = *policy;
    if (executor) s->ex = *executor;
    if (curator) s->cu = *curator;
    s->t = mcts_new(question, s->cfg.max_expand, s->cfg.exploration, s->cfg.seed);
    s->t0 = clock_now(s);

    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    must(pthread_mutex_init(&s->mu, &attr), "a mutex");
    pthread_mutexattr_destroy(&attr);
    must(pthread_mutex_init(&s->serial, NULL), "a mutex");
    must(pthread_cond_init(&s->work, NULL), "a condition variable");
    must(pthread_cond_init(&s->done, NULL), "a condition variable");
    return s;
}

void search_free(struct search *s)
{
    if (!s) return;
    lock(s);
    s->quit = 1;
    pthread_cond_broadcast(&s->work);
    unlock(s);
    for (int i = 0; i < s->npool; i++) pthread_join(s->pool[i], NULL);
    free(s->pool);
    free(s->jobs);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->serial);
    pthread_mutex_destroy(&s->mu);
    mcts_free(s->t);
    free(s->stop_message);
    free(s);
}

int search_done(const struct search *s)
{
    lock(s);
    int done = s->stop != SEARCH_RUNNING;
    unlock(s);
    return done;
}

enum search_stop search_stop_reason(const struct search *s)
{
    lock(s);
    enum search_stop why = s->stop;
    unlock(s);
    return why;
}

const char *search_stop_message(const struct search *s)
{
    lock(s);
    const char *m = s->stop == SEARCH_STOP_ERROR ? s->stop_message : NULL;
    unlock(s);
    return m;
}

const struct mcts_tree *search_tree(const struct search *s)
{
    return s->t;
}

const struct search_config *search_config(const struct search *s)
{
    return &s->cfg;
}

static void set_stop(struct search *s, enum search_stop why)
{
    s->stop = why;
    free(s->t->stop_reason);
    s->t->stop_reason = why == SEARCH_RUNNING ? NULL : xstrdup(search_stop_name(why));
    if (why != SEARCH_RUNNING) emit(s, SEARCH_EV_STOPPED, -1);
}

static int budget_spent(const struct search *s)
{
    return s->cfg.budget_tokens > 0 &&
           s->t->tokens_in + s->t->tokens_out >= s->cfg.budget_tokens;
}

static int cost_spent(const struct search *s)
{
    return s->cfg.budget_usd > 0 && s->cfg.spent_usd && s->cfg.spent_usd(s->cfg.spent_ctx) >= s->cfg.budget_usd;
}

/* Stops for a limit; returns 1 when it did. */
static int check_limits(struct search *s)
{
    if (budget_spent(s)) set_stop(s, SEARCH_STOP_BUDGET);
    else if (cost_spent(s)) set_stop(s, SEARCH_STOP_BUDGET_USD);
    else if (s->t->iterations >= s->cfg.iterations) set_stop(s, SEARCH_STOP_ITERATIONS);
    else return 0;
    return 1;
}

/* ---- calling out ---- */

enum callee { CALL_POLICY, CALL_EXECUTOR, CALL_CURATOR };

static int thread_safe(const struct search *s, enum callee c)
{
    return c == CALL_POLICY     ? s->cfg.policy_thread_safe
           : c == CALL_EXECUTOR ? s->cfg.executor_thread_safe
                                : s->cfg.curator_thread_safe;
}

/* Entered and left with the lock held. Returns the tree the callback may
 * read: the live one in a sequential step, else a copy in *copy (snapshot
 * requested by passing copy) that call_end frees. */
static const struct mcts_tree *call_begin(struct search *s, enum callee c, struct mcts_tree **copy)
{
    if (copy) *copy = NULL;
    if (!s->batch) return s->t;
    if (copy) *copy = mcts_clone(s->t);
    unlock(s);
    if (!thread_safe(s, c)) pthread_mutex_lock(&s->serial);
    return copy ? *copy : NULL;
}

static void call_end(struct search *s, enum callee c, struct mcts_tree *copy)
{
    if (!s->batch) return;
    if (!thread_safe(s, c)) pthread_mutex_unlock(&s->serial);
    mcts_free(copy);
    lock(s);
}

/* Adds a role call's tokens to the node and the tree, and keeps what the
 * call said of how it decided: its notes and whether the fallback decided
 * (role: an MCTS_ROLE_* bit, 0 for none). */
static void account(struct search *s, int id, unsigned role, const struct policy_usage *u)
{
    struct mcts_node *n = mcts_node_mut(s->t, id);
    long long in = u->input_tokens > 0 ? u->input_tokens : 0;
    long long out = u->output_tokens > 0 ? u->output_tokens : 0;
    if (n) {
        n->tokens_in += in;
        n->tokens_out += out;
        if (u->fallback) n->fallback |= role;
        if (u->notes[0]) {
            char *joined = n->notes ? xasprintf("%s; %s", n->notes, u->notes) : xstrdup(u->notes);
            free(n->notes);
            n->notes = joined;
        }
    }
    s->t->tokens_in += in;
    s->t->tokens_out += out;
}

/* Records a failed role call. The node is a leaf backed up with value 0,
 * unless the failure was the server's or the network's (kind transient):
 * that says nothing of the evidence, so the node gets no value and is not
 * backed up. A persistent failure (the same request would fail again: a
 * bad key, an unknown model, a refused parameter) stops the search. */
static void fail_kind(struct search *s, int id, const char *role, const char *msg, enum policy_fail kind)
{
    struct mcts_node *n = mcts_node_mut(s->t, id);
    n->status = MCTS_ERROR;
    free(n->error);
    n->error = xasprintf("%s: %s", role, msg && *msg ? msg : "failed without a message");
    n->transient = kind == POLICY_FAIL_TRANSIENT;
    n->has_value = !n->transient;
    n->value = MCTS_FAILED_VALUE;
    log_msg("search: node %d: %s%s", id, n->error, n->transient ? " (transient: not backed up)" : "");
    if (kind == POLICY_FAIL_PERSISTENT && s->stop == SEARCH_RUNNING) {
        free(s->stop_message);
        s->stop_message = xstrdup(n->error);
        set_stop(s, SEARCH_STOP_ERROR);
    }
}

static void fail(struct search *s, int id, const char *role, const char *msg)
{
    fail_kind(s, id, role, msg, POLICY_FAIL_NONE);
}

static char *render_evidence(const struct evidence *ev)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < ev->n; i++) {
        const struct evidence_span *sp = &ev->v[i];
        buf_printf(&b, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line,
                   sp->label ? "  " : "", sp->label ? sp->label : "");
        if (sp->text && *sp->text) {
            buf_adds(&b, sp->text);
            if (!str_ends(sp->text, "\n")) buf_addc(&b, '\n');
        }
    }
    return buf_take(&b);
}

static int is_finish(const char *name)
{
    return name && strcasecmp(name, "Finish") == 0;
}

/* 1 when a node on the path from the root to id holds code text seen by
 * an action: what a Finish needs before it may answer (paper 3.4.5). */
static int path_has_code(const struct mcts_tree *t, int id)
{
    for (; id > 0; id = t->nodes[id].parent) {
        const struct mcts_node *m = &t->nodes[id];
        if (m->status != MCTS_DONE || m->duplicate) continue;
        for (size_t k = 0; k < m->obs.n; k++)
            if (m->obs.v[k].text && *m->obs.v[k].text) return 1;
    }
    return 0;
}

/* The fallback policy's plan for node id when the policy repeats a child or
 * an ancestor as often as it is asked again: taken when it is distinct.
 * 0 with *a replaced and *key set, or -1 (no fallback, or it repeats too). */
static int plan_distinct_fallback(struct search *s, int id, const char *report, struct policy_action *a,
                                  char **key)
{
    if (!s->pol.plan_fallback) return -1;
    struct policy_action fa = {0};
    struct policy_usage fu = {0};
    char ferr[256] = "";
    struct mcts_tree *copy;
    const struct mcts_tree *view = call_begin(s, CALL_POLICY, &copy);
    int frc = s->pol.plan_fallback(s->pol.ctx, view, id, report, &fa, &fu, ferr, sizeof ferr);
    call_end(s, CALL_POLICY, copy);
    account(s, id, MCTS_ROLE_PLAN, &fu);
    if (frc != 0 || !fa.name || (fa.args && !cJSON_IsObject(fa.args))) {
        policy_action_clear(&fa);
        return -1;
    }
    if (!fa.args) fa.args = cJSON_CreateObject();
    char *k = mcts_action_key(fa.name, fa.args);
    if (mcts_find_duplicate(s->t, id, k) >= 0 || (is_finish(fa.name) && !path_has_code(s->t, mcts_node(s->t, id)->parent))) {
        free(k);
        policy_action_clear(&fa);
        return -1;
    }
    policy_action_clear(a);
    *a = fa;
    *key = k;
    return 0;
}

/* No distinct action is left for a new child of id's parent: the child is
 * not run (it is recorded pruned, with no value backed up, so it counts as
 * neither a step nor a failure) and the parent takes no more children and
 * says why in its notes. */
static void close_exhausted(struct search *s, int id, const char *last, int dup)
{
    struct mcts_node *n = mcts_node_mut(s->t, id);
    int parent = n->parent;
    n->exhausted = 1;
    n->feedback = xasprintf("Not run: every action proposed here repeated a sibling or an ancestor (the last, %s, "
                            "repeats node %d); node %d takes no more children.", last ? last : "?", dup, parent);
    struct mcts_node *p = mcts_node_mut(s->t, parent);
    p->closed = 1;
    const char *why = "no distinct action left: every proposal for a new child repeated a child or an ancestor";
    char *joined = p->notes ? xasprintf("%s; %s", p->notes, why) : xstrdup(why);
    free(p->notes);
    p->notes = joined;
    log_msg("search: node %d: %s (the last, %s, repeats node %d)", parent, why, last ? last : "?", dup);
}

/* Plans the node's action with loop protection. Returns 0 with the action
 * stored on the node, or -1 after recording the error. The duplicate check
 * runs under the lock against the live tree, so concurrent plans of
 * siblings see each other's recorded actions. */
static int plan_node(struct search *s, int id, char *err, size_t errlen)
{
    struct mcts_node *n = mcts_node_mut(s->t, id);
    struct buf report = BUF_INIT;
    buf_adds(&report, n->report ? n->report : "");
    int64_t t_start = clock_now(s);
    int rc = -1;
    for (int attempt = 0;; attempt++) {
        struct policy_action a = {0};
        struct policy_usage u = {0};
        err[0] = 0;
        int prc = -1;
        if (s->pol.plan) {
            struct mcts_tree *copy;
            const struct mcts_tree *view = call_begin(s, CALL_POLICY, &copy);
            prc = s->pol.plan(s->pol.ctx, view, id, buf_str(&report), &a, &u, err, errlen);
            call_end(s, CALL_POLICY, copy);
        } else {
            snprintf(err, errlen, "the policy has no plan function");
        }
        account(s, id, MCTS_ROLE_PLAN, &u);
        n = mcts_node_mut(s->t, id);
        if (prc != 0) {
            fail_kind(s, id, "plan", err, u.fail_kind);
            policy_action_clear(&a);
            break;
        }
        if (!a.name || !*a.name) {
            fail(s, id, "plan", "the policy returned an action without a name");
            policy_action_clear(&a);
            break;
        }
        if (!a.args) a.args = cJSON_CreateObject();
        if (!cJSON_IsObject(a.args)) {
            char *msg = xasprintf("the arguments of %s must be a JSON object", a.name);
            fail(s, id, "plan", msg);
            free(msg);
            policy_action_clear(&a);
            break;
        }
        if (is_finish(a.name) && !path_has_code(s->t, n->parent)) {
            if (attempt < s->cfg.max_replans) {
                buf_printf(&report, "%s[engine] Refused Finish: no code has been read on this path yet, "
                           "and an answer needs at least one cited code span. Choose an action that finds or "
                           "reads code (FindClass, FindFunction, FindCodeSnippet, SemanticSearch, ViewCode).",
                           report.len ? "\n" : "");
                policy_action_clear(&a);
                continue;
            }
            /* a model that will not look: the fallback's plan for this
             * node reads code instead, marked as the fallback's */
            struct policy_action fa = {0};
            struct policy_usage fu = {0};
            int frc = -1;
            if (s->pol.plan_fallback) {
                char ferr[256] = "";
                struct mcts_tree *copy;
                const struct mcts_tree *view = call_begin(s, CALL_POLICY, &copy);
                frc = s->pol.plan_fallback(s->pol.ctx, view, id, buf_str(&report), &fa, &fu, ferr, sizeof ferr);
                call_end(s, CALL_POLICY, copy);
                if (frc != 0) log_msg("search: node %d: the fallback plan for a refused Finish failed: %s", id, ferr);
            }
            n = mcts_node_mut(s->t, id);
            if (frc == 0 && fa.name && !is_finish(fa.name) && (!fa.args || cJSON_IsObject(fa.args))) {
                account(s, id, MCTS_ROLE_PLAN, &fu);
                policy_action_clear(&a);
                a = fa;
                if (!a.args) a.args = cJSON_CreateObject();
            } else {
                policy_action_clear(&fa);
                n->refused = 1;   /* recorded, never run, never expanded */
            }
        }
        char *key = mcts_action_key(a.name, a.args);
        int dup = mcts_find_duplicate(s->t, id, key);
        if (dup >= 0) {
            if (attempt < s->cfg.max_replans) {
                char *args = cJSON_PrintUnformatted(a.args);
                buf_printf(&report, "%s[engine] Refused %s %s: it repeats the action of node %d on "
                           "this path or a sibling. Choose a different action.",
                           report.len ? "\n" : "", a.name, args ? args : "{}", dup);
                free(args);
                free(key);
                policy_action_clear(&a);
                continue;
            }
            free(key);
            key = NULL;
            if (plan_distinct_fallback(s, id, buf_str(&report), &a, &key) != 0) {
                close_exhausted(s, id, a.name, dup);
                policy_action_clear(&a);
                rc = 0;
                break;
            }
        }
        n = mcts_node_mut(s->t, id);
        n->action = a.name;
        n->args = a.args;
        n->rationale = a.rationale;
        n->args_key = key;
        rc = 0;
        break;
    }
    n = mcts_node_mut(s->t, id);
    n->plan_ms = clock_now(s) - t_start;
    buf_free(&report);
    return rc;
}

static int execute_node(struct search *s, int id, char *err, size_t errlen)
{
    struct mcts_node *n = mcts_node_mut(s->t, id);
    /* Set once by the plan and never changed or freed before the tree is, so
     * they stay valid while the lock is released. */
    const char *action = n->action;
    const cJSON *args = n->args;
    int64_t t_start = clock_now(s);
    struct evidence raw = EVIDENCE_INIT, curated = EVIDENCE_INIT;
    char *raw_text = NULL;
    int rc = -1;
    err[0] = 0;
    if (!s->ex.execute) {
        fail(s, id, "execute", "no action executor is configured");
        goto out;
    }
    call_begin(s, CALL_EXECUTOR, NULL);
    int xrc = s->ex.execute(s->ex.ctx, action, args, &raw, &raw_text, err, errlen);
    call_end(s, CALL_EXECUTOR, NULL);
    if (xrc != 0) {
        char *msg = xasprintf("%s: %s", action, err);
        fail(s, id, "execute", msg);
        free(msg);
        goto out;
    }
    if (s->cu.curate) {
        struct policy_usage u = {0};
        char *text = NULL;
        err[0] = 0;
        call_begin(s, CALL_CURATOR, NULL);
        char *args_json = args ? cJSON_PrintUnformatted(args) : NULL;
        char *label = xasprintf("%s %s", action, args_json ? args_json : "{}");
        cJSON_free(args_json);
        int crc = s->cu.curate(s->cu.ctx, s->t->question, label, &raw, raw_text, &curated, &text,
                               &u, err, errlen);
        free(label);
        call_end(s, CALL_CURATOR, NULL);
        account(s, id, MCTS_ROLE_CURATE, &u);
        if (crc != 0) {
            free(text);
            fail_kind(s, id, "curate", err, u.fail_kind);
            goto out;
        }
        n = mcts_node_mut(s->t, id);
        n->obs = curated;
        curated = (struct evidence)EVIDENCE_INIT;
        n->obs_text = text ? text : render_evidence(&n->obs);
    } else {
        n = mcts_node_mut(s->t, id);
        n->obs = raw;
        raw = (struct evidence)EVIDENCE_INIT;
        n->obs_text = raw_text ? raw_text : render_evidence(&n->obs);
        raw_text = NULL;
    }
    rc = 0;
out:
    evidence_free(&raw);
    evidence_free(&curated);
    free(raw_text);
    mcts_node_mut(s->t, id)->execute_ms = clock_now(s) - t_start;
    return rc;
}

static int evaluate_node(struct search *s, int id, char *err, size_t errlen)
{
    int64_t t_start = clock_now(s);
    struct policy_usage u = {0};
    double v = MCTS_NEUTRAL_VALUE;
    char *feedback = NULL;
    int rc = 0;
    err[0] = 0;
    if (!s->cfg.no_evaluation && s->pol.evaluate) {
        struct policy_eval e = {0, NULL};
        struct mcts_tree *copy;
        const struct mcts_tree *view = call_begin(s, CALL_POLICY, &copy);
        rc = s->pol.evaluate(s->pol.ctx, view, id, &e, &u, err, errlen);
        call_end(s, CALL_POLICY, copy);
        v = e.value;
        feedback = e.feedback;
        if (rc == 0 && isnan(v)) {
            snprintf(err, errlen, "the policy returned a value that is not a number");
            rc = -1;
        }
    } else if (s->pol.rollout) {
        struct mcts_tree *copy;
        const struct mcts_tree *view = call_begin(s, CALL_POLICY, &copy);
        rc = s->pol.rollout(s->pol.ctx, view, id, &v, &u, err, errlen);
        call_end(s, CALL_POLICY, copy);
        if (rc == 0 && isnan(v)) {
            snprintf(err, errlen, "the rollout returned a value that is not a number");
            rc = -1;
        }
    }
    account(s, id, MCTS_ROLE_EVALUATE, &u);
    struct mcts_node *n = mcts_node_mut(s->t, id);
    n->evaluate_ms = clock_now(s) - t_start;
    if (rc != 0) {
        free(feedback);
        fail_kind(s, id, s->cfg.no_evaluation || !s->pol.evaluate ? "rollout" : "evaluate", err, u.fail_kind);
        return -1;
    }
    if (v < 0) v = 0;
    if (v > MCTS_VALUE_MAX) v = MCTS_VALUE_MAX;
    n->has_value = 1;
    n->value = v;
    n->feedback = feedback;
    return 0;
}

/* The single-step simulation of a new node; leaves status and value set. */
static void simulate(struct search *s, int id)
{
    char err[1024];
    struct mcts_node *n = mcts_node_mut(s->t, id);

    if (!s->cfg.no_perception && s->pol.perceive) {
        int64_t t_start = clock_now(s);
        struct policy_usage u = {0};
        char *report = NULL;
        err[0] = 0;
        struct mcts_tree *copy;
        const struct mcts_tree *view = call_begin(s, CALL_POLICY, &copy);
        int rc = s->pol.perceive(s->pol.ctx, view, id, &report, &u, err, sizeof err);
        call_end(s, CALL_POLICY, copy);
        account(s, id, MCTS_ROLE_PERCEIVE, &u);
        n = mcts_node_mut(s->t, id);
        n->perceive_ms = clock_now(s) - t_start;
        if (rc != 0) {
            free(report);
            n->report = xstrdup("");
            fail_kind(s, id, "perceive", err, u.fail_kind);
            return;
        }
        n->report = report ? report : xstrdup("");
    } else {
        n->report = xstrdup("");
    }
    emit(s, SEARCH_EV_REPORT, id);

    if (plan_node(s, id, err, sizeof err) != 0) return;
    emit(s, SEARCH_EV_ACTION, id);
    n = mcts_node_mut(s->t, id);
    if (n->exhausted) {
        n->status = MCTS_PRUNED;
        n->obs_text = xstrdup("");
        return;   /* backup() updates the parent, whose notes say it is closed */
    }
    if (n->refused) {
        n->status = MCTS_DONE;
        n->has_value = 1;
        n->value = MCTS_FAILED_VALUE;
        n->feedback = xstrdup("Not executed: a Finish with no code read on its path was refused.");
        n->obs_text = xstrdup("");
        return;
    }
    if (is_finish(n->action)) {
        n->obs_text = xstrdup("");
    } else {
        if (execute_node(s, id, err, sizeof err) != 0) return;
        emit(s, SEARCH_EV_EVIDENCE, id);
    }
    if (evaluate_node(s, id, err, sizeof err) != 0) return;
    n = mcts_node_mut(s->t, id);
    n->status = is_finish(n->action) ? MCTS_FINISHED : MCTS_DONE;
}

/* Expansion: a running child of sel for this iteration. */
static int expand(struct search *s, int sel, int iteration, int forced)
{
    struct mcts_tree *t = s->t;
    t->iterations = iteration;
    int id = mcts_add_child(t, sel);
    struct mcts_node *n = mcts_node_mut(t, id);
    n->iteration = iteration;
    n->forced = forced;
    n->started_ms = clock_now(s) - s->t0;
    n->status = MCTS_RUNNING;
    return id;
}

/* Back-propagation of a simulated node, with an update for each node on its path. */
static void backup(struct search *s, int id)
{
    struct mcts_tree *t = s->t;
    const struct mcts_node *n = mcts_node(t, id);
    if ((n->status != MCTS_ERROR || !n->transient) && !n->exhausted) mcts_backprop(t, id, n->value);
    for (int a = id; a >= 0; a = t->nodes[a].parent) emit(s, SEARCH_EV_NODE_UPDATED, a);
}

/* A Finish ends the search when its value reaches the threshold; a lower
 * one stays a finished candidate for the answer while the search goes on. */
static int finish_stops(const struct search *s, int id)
{
    const struct mcts_node *n = mcts_node(s->t, id);
    return n->status == MCTS_FINISHED && n->value >= s->cfg.finish_min_value;
}

/* 1 when a finished node that would stop the search is still in the tree
 * (not pruned). */
static int finish_stands(const struct search *s)
{
    for (int i = 1; i < s->t->n; i++)
        if (finish_stops(s, i)) return 1;
    return 0;
}

static int step_sequential(struct search *s)
{
    if (s->stop != SEARCH_RUNNING) return 0;
    if (check_limits(s)) return 0;
    struct mcts_tree *t = s->t;
    int iteration = t->iterations + 1, forced = 0;
    int sel = s->cfg.no_mcts ? mcts_select_greedy(t, &forced) : mcts_select(t, iteration, &forced);
    if (sel < 0) {
        set_stop(s, SEARCH_STOP_EXHAUSTED);
        return 0;
    }
    int id = expand(s, sel, iteration, forced);
    emit(s, SEARCH_EV_NODE_ADDED, id);
    simulate(s, id);
    backup(s, id);
    if (s->stop != SEARCH_RUNNING) return 1;
    if (finish_stops(s, id)) set_stop(s, SEARCH_STOP_FINISH);
    else check_limits(s);
    return 1;
}

/* ---- parallel batches ---- */

/* Takes jobs of the current batch until none is left; lock held. */
static void run_jobs(struct search *s)
{
    while (s->batch && s->next_job < s->njobs) {
        int id = s->jobs[s->next_job++];
        simulate(s, id);
        mcts_virtual_loss(s->t, id, -1);
        backup(s, id);
        s->jobs_done++;
        pthread_cond_broadcast(&s->done);
    }
}

static void *pool_main(void *arg)
{
    struct search *s = arg;
    lock(s);
    for (;;) {
        while (!s->quit && !(s->batch && s->next_job < s->njobs)) pthread_cond_wait(&s->work, &s->mu);
        if (s->quit) break;
        run_jobs(s);
    }
    unlock(s);
    return NULL;
}

/* Grows the pool to n threads. A thread that cannot be made is logged and
 * done without: the stepping thread takes every job left. */
static void pool_grow(struct search *s, int n)
{
    if (n <= s->npool) return;
    s->pool = xreallocarray(s->pool, (size_t)n, sizeof *s->pool);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (s->npool < n) {
        int rc = pthread_create(&s->pool[s->npool], NULL, pool_main, s);
        if (rc != 0) {
            log_msg("search: cannot start an expansion thread (%s); running %d in parallel",
                    strerror(rc), s->npool + 1);
            break;
        }
        s->npool++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int step_batch(struct search *s, int k)
{
    if (s->stop != SEARCH_RUNNING) return 0;
    if (check_limits(s)) return 0;
    struct mcts_tree *t = s->t;
    if (k > s->cfg.iterations - t->iterations) k = s->cfg.iterations - t->iterations;
    if (k > s->jobs_cap) {
        s->jobs_cap = k;
        s->jobs = xreallocarray(s->jobs, (size_t)k, sizeof *s->jobs);
    }
    s->njobs = 0;
    for (int j = 0; j < k; j++) {
        int iteration = t->iterations + 1, forced = 0;
        int sel = mcts_select(t, iteration, &forced);
        if (sel < 0) break;
        int id = expand(s, sel, iteration, forced);
        mcts_virtual_loss(t, id, 1);
        s->jobs[s->njobs++] = id;
        emit(s, SEARCH_EV_NODE_ADDED, id);
    }
    if (s->njobs == 0) {
        set_stop(s, SEARCH_STOP_EXHAUSTED);
        return 0;
    }
    pool_grow(s, s->njobs - 1);
    s->batch = 1;
    s->next_job = s->jobs_done = 0;
    pthread_cond_broadcast(&s->work);
    run_jobs(s);
    while (s->jobs_done < s->njobs) pthread_cond_wait(&s->done, &s->mu);
    s->batch = 0;

    int finished = 0;
    for (int j = 0; j < s->njobs; j++) finished |= finish_stops(s, s->jobs[j]);
    if (s->stop == SEARCH_RUNNING) {
        if (finished) set_stop(s, SEARCH_STOP_FINISH);
        else check_limits(s);
    }
    return s->njobs;
}

int search_step_parallel(struct search *s, int k)
{
    if (k > SEARCH_MAX_PARALLEL) k = SEARCH_MAX_PARALLEL;
    lock(s);
    int ran = k > 1 && !s->cfg.no_mcts ? step_batch(s, k) : step_sequential(s);
    unlock(s);
    return ran;
}

int search_step(struct search *s)
{
    return search_step_parallel(s, s->cfg.parallel);
}

int search_prune(struct search *s, int id, char *err, size_t errlen)
{
    lock(s);
    enum mcts_status *before = xmalloc((size_t)s->t->n * sizeof *before);
    for (int i = 0; i < s->t->n; i++) before[i] = s->t->nodes[i].status;
    int rc = mcts_prune(s->t, id, err, errlen);
    if (rc == 0)
        for (int i = 0; i < s->t->n; i++)
            if (s->t->nodes[i].status != before[i]) emit(s, SEARCH_EV_NODE_UPDATED, i);
    free(before);
    if (rc == 0 && s->stop == SEARCH_STOP_FINISH && !finish_stands(s)) {
        /* the Finish that ended the search is cut away: the search has not
         * finished, so it goes on while iterations and budget remain */
        set_stop(s, SEARCH_RUNNING);
        check_limits(s);
    }
    unlock(s);
    return rc;
}

int search_force(struct search *s, int id, char *err, size_t errlen)
{
    lock(s);
    int rc = -1;
    if (s->stop == SEARCH_STOP_ERROR) {
        snprintf(err, errlen, "cannot expand node %d: the search stopped on an error: %s", id,
                 s->stop_message ? s->stop_message : "(no message)");
    } else if (s->stop == SEARCH_STOP_ITERATIONS || s->stop == SEARCH_STOP_BUDGET || s->stop == SEARCH_STOP_BUDGET_USD ||
        (s->stop != SEARCH_RUNNING &&
         (s->t->iterations >= s->cfg.iterations || budget_spent(s) || cost_spent(s)))) {
        snprintf(err, errlen, "cannot expand node %d: the search has used its %s", id,
                 budget_spent(s) ? "token budget" : cost_spent(s) ? "cost budget (--budget-usd)" : "iterations");
    } else if (mcts_force(s->t, id, err, errlen) == 0) {
        if (s->stop != SEARCH_RUNNING) set_stop(s, SEARCH_RUNNING);
        rc = 0;
    }
    unlock(s);
    return rc;
}

int search_finish_now(struct search *s)
{
    lock(s);
    int forced = s->t->forced;
    s->t->forced = -1;   /* nothing more is expanded, the asked-for node neither */
    if (s->stop == SEARCH_RUNNING) set_stop(s, SEARCH_STOP_USER);
    unlock(s);
    return forced;
}

/* ---- answers ---- */

static int usable(const struct mcts_node *n)
{
    return (n->status == MCTS_DONE || n->status == MCTS_FINISHED) && !n->duplicate;
}

static int path_has_evidence(const struct mcts_tree *t, int id)
{
    for (; id > 0; id = t->nodes[id].parent)
        if (t->nodes[id].obs.n > 0) return 1;
    return 0;
}

/* The trajectory an answer is built from: the highest-value finished node
 * whose path holds evidence (a Finish planned before anything was read cannot
 * ground an answer, so it loses to any evidenced one); failing that, the
 * evidenced node with the best mean value; failing that, the greedy path by Q. */
size_t search_best_trajectory(const struct mcts_tree *t, int **ids, int *from_finished)
{
    int best = -1, best_ev = 0;
    for (int i = 1; i < t->n; i++) {
        const struct mcts_node *n = &t->nodes[i];
        if (n->status != MCTS_FINISHED) continue;
        int ev = path_has_evidence(t, i);
        if (best < 0 || ev > best_ev || (ev == best_ev && n->value > t->nodes[best].value)) {
            best = i;
            best_ev = ev;
        }
    }
    if (best >= 0 && !best_ev) {
        int alt = -1;
        for (int i = 1; i < t->n; i++) {
            const struct mcts_node *n = &t->nodes[i];
            if (!usable(n) || n->obs.n == 0) continue;
            if (alt < 0 || mcts_q(n) > mcts_q(&t->nodes[alt])) alt = i;
        }
        if (alt >= 0) best = -1;
    }
    if (from_finished) *from_finished = best >= 0;
    if (best < 0) {
        for (int i = 1; i < t->n; i++) {
            const struct mcts_node *n = &t->nodes[i];
            if (!usable(n) || n->obs.n == 0) continue;
            if (best < 0 || mcts_q(n) > mcts_q(&t->nodes[best])) best = i;
        }
    }
    if (best < 0) {
        best = 0;
        for (;;) {
            const struct mcts_node *n = &t->nodes[best];
            int next = -1;
            for (int k = 0; k < n->nchildren; k++) {
                const struct mcts_node *c = &t->nodes[n->children[k]];
                if (!usable(c)) continue;
                if (next < 0 || mcts_q(c) > mcts_q(&t->nodes[next])) next = c->id;
            }
            if (next < 0) break;
            best = next;
        }
    }
    return mcts_path(t, best, ids);
}

/* 1 when node id's evidence may verify a citation: on the trajectory ids
 * (ids != NULL), or, for a policy that answers from the whole tree
 * (ids == NULL), any done or finished node (pruned, running and failed
 * nodes are out). */
static int node_in_scope(const struct mcts_tree *t, const int *ids, size_t nids, int id)
{
    if (!ids) return t->nodes[id].status == MCTS_DONE || t->nodes[id].status == MCTS_FINISHED;
    for (size_t i = 0; i < nids; i++)
        if (ids[i] == id) return 1;
    return 0;
}

/* The span of node m that verifies citation c: verbatim lines that hold c,
 * else (*outline) an outline (elided span) of exactly c's lines, which is
 * what was seen of them; an outline does not verify lines inside it, whose
 * bodies it left out. */
static const struct evidence_span *node_cover(const struct mcts_node *m, const struct evidence_span *c,
                                              const struct evidence_span **outline)
{
    for (size_t k = 0; k < m->obs.n; k++) {
        const struct evidence_span *sp = &m->obs.v[k];
        if (strcmp(sp->path, c->path)) continue;
        if (!sp->elided && sp->start_line <= c->start_line && c->end_line <= sp->end_line) return sp;
        if (sp->elided && !*outline && sp->start_line == c->start_line && sp->end_line == c->end_line)
            *outline = sp;
    }
    return NULL;
}

/* The span that verifies citation c among the nodes in scope (node_cover),
 * verbatim lines first. */
static const struct evidence_span *covering_span(const struct mcts_tree *t, const int *ids, size_t nids,
                                                 const struct evidence_span *c)
{
    const struct evidence_span *outline = NULL;
    for (int id = 1; id < t->n; id++) {
        if (!node_in_scope(t, ids, nids, id)) continue;
        const struct evidence_span *sp = node_cover(&t->nodes[id], c, &outline);
        if (sp) return sp;
    }
    return outline;
}

/* A span of read (the policy's own reading for its answer,
 * policy_answer.read) that verifies citation c as a node's reading does
 * (node_cover): verbatim lines that hold it first, else an outline of
 * exactly its lines (a class chunk read as its outline); or NULL. */
static const struct evidence_span *read_span(const struct evidence *read, const struct evidence_span *c)
{
    const struct evidence_span *outline = NULL;
    for (size_t k = 0; k < read->n; k++) {
        const struct evidence_span *sp = &read->v[k];
        if (strcmp(sp->path, c->path)) continue;
        if (!sp->elided && sp->start_line <= c->start_line && c->end_line <= sp->end_line) return sp;
        if (sp->elided && !outline && sp->start_line == c->start_line && sp->end_line == c->end_line)
            outline = sp;
    }
    return outline;
}

/* 1 when cites already holds a span of c's lines seen the same way
 * (verbatim, or as an outline): a method read in full is still cited
 * beside the outline of its class. */
static int covered_alike(const struct evidence *cites, const struct evidence_span *c, int elided)
{
    for (size_t i = 0; i < cites->n; i++) {
        const struct evidence_span *x = &cites->v[i];
        if (!x->elided == !elided && !strcmp(x->path, c->path) && x->start_line <= c->start_line &&
            c->end_line <= x->end_line)
            return 1;
    }
    return 0;
}

static const struct evidence_span *best_span(const struct mcts_tree *t, const int *ids, size_t nids)
{
    const struct evidence_span *best = NULL;
    for (size_t i = 0; i < nids; i++) {
        const struct evidence *ev = &t->nodes[ids[i]].obs;
        for (size_t k = 0; k < ev->n; k++)
            if (!best || ev->v[k].score > best->score) best = &ev->v[k];
    }
    return best;
}

static char *fallback_markdown(const struct mcts_tree *t, const int *ids, size_t nids)
{
    const struct mcts_node *last = &t->nodes[ids[nids - 1]];
    const cJSON *ans = last->args ? cJSON_GetObjectItemCaseSensitive(last->args, "answer") : NULL;
    if (is_finish(last->action) && cJSON_IsString(ans) && *ans->valuestring)
        return xstrdup(ans->valuestring);
    struct buf b = BUF_INIT;
    buf_adds(&b, "No synthesised answer is available. Evidence gathered on the best trajectory:\n\n");
    int any = 0;
    for (size_t i = 0; i < nids; i++) {
        const struct evidence *ev = &t->nodes[ids[i]].obs;
        for (size_t k = 0; k < ev->n; k++) {
            buf_printf(&b, "- `%s:%d-%d`%s%s\n", ev->v[k].path, ev->v[k].start_line,
                       ev->v[k].end_line, ev->v[k].label ? " " : "",
                       ev->v[k].label ? ev->v[k].label : "");
            any = 1;
        }
    }
    if (!any) buf_adds(&b, "- (none)\n");
    return buf_take(&b);
}

static int has_done_step(const struct mcts_tree *t)
{
    for (int id = 1; id < t->n; id++)
        if (t->nodes[id].status == MCTS_DONE || t->nodes[id].status == MCTS_FINISHED) return 1;
    return 0;
}

/* Failed steps are never silent (a model call that failed after its
 * retries, an action error): see struct search_answer's failure. */
static void note_failed_steps(const struct mcts_tree *t, struct search_answer *a)
{
    int failed = 0, done = 0;
    const char *first = NULL;
    for (int id = 1; id < t->n; id++) {
        const struct mcts_node *m = &t->nodes[id];
        if (m->status == MCTS_ERROR) {
            if (!failed++) first = m->error;
        } else if (m->status == MCTS_DONE || m->status == MCTS_FINISHED) {
            done++;
        }
    }
    if (!failed) return;
    const char *why = first && *first ? first : "no reason recorded";
    if (!done) {
        a->failure = xasprintf("every step of the search failed (%d of %d); the first: %s", failed, failed, why);
        return;
    }
    char *md = xasprintf("%s\n_%d of %d search steps failed and were left out; the first: %.*s_\n",
                         a->markdown ? a->markdown : "", failed, failed + done, utf8_cut(why, 300), why);
    free(a->markdown);
    a->markdown = md;
}

/* 1 when node m's evidence verifies citation c (node_cover). */
static int node_reads(const struct mcts_node *m, const struct evidence_span *c)
{
    const struct evidence_span *outline = NULL;
    return node_cover(m, c, &outline) || outline;
}

/* "FindFunction dispatch_request": a node's action in a few words. */
static void describe_node(struct buf *b, const struct mcts_node *m)
{
    buf_adds(b, m->action ? m->action : "?");
    const cJSON *v = m->args && m->args->child ? m->args->child : NULL;
    if (cJSON_IsArray(v)) v = v->child;
    if (cJSON_IsString(v)) buf_printf(b, " %.*s", utf8_cut(v->valuestring, 60), v->valuestring);
}

/* What the answer says about its evidence, made true: which citations the
 * best path read, and for each other one the node off the path that read it
 * (a policy answering from the whole tree ranks every span the search read,
 * the path's first), and which ones the policy read for the answer itself,
 * outside the tree (read: policy_answer.read, the flat ranker's windows).
 * Appended to the markdown, so every front end shows it. */
/* The Evidence line's opening, after the answer in a paragraph of its own
 * (the answer may not end its line), into b; the path's nodes into nodes
 * ("none" without any); which path they are. */
static const char *evidence_open(const struct search_answer *a, struct buf *b, struct buf *nodes)
{
    for (size_t k = 1; k < a->npath; k++) buf_printf(nodes, "%s%d", k > 1 ? ", " : "", a->path[k]);
    if (!nodes->len) buf_adds(nodes, "none");
    const char *md = a->markdown ? a->markdown : "";
    size_t mlen = strlen(md);
    buf_printf(b, "%s%s_Evidence: ", md, mlen && md[mlen - 1] != '\n' ? "\n\n" : "\n");
    return a->from_finished ? "the best path" : "the highest-value path (no path reached Finish)";
}

static void evidence_close(struct search_answer *a, struct buf *b, struct buf *nodes)
{
    free(a->markdown);
    a->markdown = buf_take(b);
    buf_free(nodes);
}

static void note_provenance(const struct mcts_tree *t, struct search_answer *a, const struct evidence *read)
{
    if (!a->cites.n) return;
    if (a->fallback_cite) {   /* the list is not the answer's: said, so no citation is passed off as one */
        struct buf b = BUF_INIT, nodes = BUF_INIT;
        const char *which = evidence_open(a, &b, &nodes);
        buf_printf(&b, "the answer cites no code the search read; the span listed is the best one read on %s "
                       "(nodes %s), not a citation of the answer's._\n", which, buf_str(&nodes));
        evidence_close(a, &b, &nodes);
        return;
    }
    struct buf on = BUF_INIT, off = BUF_INIT, nodes = BUF_INIT, win = BUF_INIT;
    int *first = xcalloc(a->cites.n, sizeof *first);   /* the off-path node that read cite i, or 0 */
    size_t non = 0, noff = 0, nnone = 0, nwin = 0;
    for (size_t i = 0; i < a->cites.n; i++) {
        const struct evidence_span *c = &a->cites.v[i];
        int found = 0;
        for (size_t k = 1; k < a->npath && !found; k++) found = node_reads(&t->nodes[a->path[k]], c);
        if (found) {
            buf_printf(&on, "%s[%zu]", non++ ? ", " : "", i + 1);
            continue;
        }
        for (int id = 1; id < t->n && !first[i]; id++) {
            const struct mcts_node *m = &t->nodes[id];
            if ((m->status == MCTS_DONE || m->status == MCTS_FINISHED) && node_reads(m, c)) first[i] = id;
        }
        if (first[i]) continue;
        if (read_span(read, c)) buf_printf(&win, "%s[%zu]", nwin++ ? ", " : "", i + 1);
        else nnone++;
    }
    /* one entry per node off the path, in the order of its first citation */
    for (size_t i = 0; i < a->cites.n; i++) {
        int id = first[i], seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = first[j] == id;
        if (!id || seen) continue;
        buf_printf(&off, "%snode %d (", noff++ ? "; " : "", id);
        describe_node(&off, &t->nodes[id]);
        buf_adds(&off, ") read");
        for (size_t j = i; j < a->cites.n; j++)
            if (first[j] == id) buf_printf(&off, " [%zu]", j + 1);
    }
    struct buf b = BUF_INIT;
    const char *which = evidence_open(a, &b, &nodes);
    if (!noff && !nnone && !nwin) buf_printf(&b, "every citation was read on %s, nodes %s._\n", which, buf_str(&nodes));
    else {
        if (non) buf_printf(&b, "%s read on %s, nodes %s; ", buf_str(&on), which, buf_str(&nodes));
        else buf_printf(&b, "none of the citations was read on %s (nodes %s); ", which, buf_str(&nodes));
        if (noff) buf_printf(&b, "also drawn from %s off it: %s%s", noff > 1 ? "nodes" : "a node", buf_str(&off),
                             nnone || nwin ? "; " : "");
        if (nwin) buf_printf(&b, "%s read for the answer outside the search%s", buf_str(&win), nnone ? "; " : "");
        if (nnone) buf_printf(&b, "%zu read by no node", nnone);
        buf_adds(&b, ". The answer ranks every span the search read, the path's first._\n");
    }
    evidence_close(a, &b, &nodes);
    free(first);
    buf_free(&on);
    buf_free(&off);
    buf_free(&win);
}

struct search_answer *search_answer(struct search *s)
{
    lock(s);
    struct mcts_tree *t = s->t;
    struct search_answer *a = xcalloc(1, sizeof *a);
    a->npath = search_best_trajectory(t, &a->path, &a->from_finished);
    int last = a->path[a->npath - 1];
    a->finish_node = t->nodes[last].status == MCTS_FINISHED ? last : -1;

    struct policy_answer pa = {0};
    if (s->pol.answer) {
        char err[1024] = "";
        struct policy_usage u = {0};
        int rc = s->pol.answer(s->pol.ctx, t, a->path, a->npath, &pa, &u, err, sizeof err);
        a->tokens_in = u.input_tokens > 0 ? u.input_tokens : 0;
        a->tokens_out = u.output_tokens > 0 ? u.output_tokens : 0;
        account(s, -1, 0, &u);
        if (rc != 0 || !pa.markdown) {
            a->error = xasprintf("answer: %s", rc != 0 && *err ? err : "the policy returned no answer");
            log_msg("search: %s", a->error);
            policy_answer_clear(&pa);
        }
    }
    a->markdown = pa.markdown ? pa.markdown : fallback_markdown(t, a->path, a->npath);
    if (pa.markdown && pa.written_by) a->written_by = xstrdup(pa.written_by);
    a->unwrapped = pa.markdown && pa.unwrapped;
    pa.markdown = NULL;
    a->stopped = pa.stopped;

    for (size_t i = 0; i < pa.cites.n; i++) {
        const struct evidence_span *c = &pa.cites.v[i];
        int valid = c->path && c->start_line >= 1 && c->end_line >= c->start_line;
        const struct evidence_span *sp =
            valid ? covering_span(t, s->pol.answer_from_tree ? NULL : a->path, a->npath, c) : NULL;
        if (!sp && valid) sp = read_span(&pa.read, c);   /* read for the answer, outside the tree */
        if (!sp) {
            a->dropped++;
            continue;
        }
        if (covered_alike(&a->cites, c, sp->elided)) continue;
        char *text = evidence_span_lines(sp, c->start_line, c->end_line);
        /* the policy's label names exactly its lines; the reading's only
         * what it read (evidence_label_within) */
        char *label = c->label && *c->label ? xstrdup(c->label) : evidence_label_within(sp, c->start_line, c->end_line);
        evidence_add(&a->cites, c->path, c->start_line, c->end_line, text, label, sp->score)
            ->elided = sp->elided;
        free(label);
        free(text);
    }

    if (a->cites.n == 0) {
        const struct evidence_span *sp = best_span(t, a->path, a->npath);
        if (sp) {
            evidence_add(&a->cites, sp->path, sp->start_line, sp->end_line, sp->text, sp->label,
                         sp->score)->elided = sp->elided;
            a->fallback_cite = 1;
        } else {
            char *md = xasprintf("%s\n\n_No code evidence was found on this trajectory, so nothing "
                                 "is cited._\n", a->markdown);
            free(a->markdown);
            a->markdown = md;
        }
    }
    note_provenance(t, a, &pa.read);
    policy_answer_clear(&pa);
    note_failed_steps(t, a);
    if (s->stop == SEARCH_STOP_ERROR && s->stop_message) {
        if (!a->failure && !has_done_step(t)) {
            a->failure = xasprintf("the search stopped: %s", s->stop_message);
        } else if (!a->failure) {
            char *md = xasprintf("%s\n_The search stopped early on an error that every further model call "
                                 "would repeat: %.*s_\n", a->markdown ? a->markdown : "",
                                 utf8_cut(s->stop_message, 300), s->stop_message);
            free(a->markdown);
            a->markdown = md;
        }
    }
    unlock(s);
    return a;
}

void search_answer_free(struct search_answer *a)
{
    if (!a) return;
    free(a->failure);
    free(a->markdown);
    evidence_free(&a->cites);
    free(a->path);
    free(a->error);
    free(a->written_by);
    free(a);
}
