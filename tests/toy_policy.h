/*
 * toy_policy.h: a scripted policy, executor and curator for the search tests.
 * Every behaviour is chosen by fields of struct toy, so a test can make a role
 * fail at a given node, repeat actions, finish at a given node, spend tokens,
 * or cite spans that were or were not seen. Deterministic: nothing depends on
 * time or addresses. Include once per test program.
 *
 * Safe to call from several threads (a search with parallel > 1 may declare
 * it thread-safe): every counter and every field a call writes is changed
 * under the toy's mutex, and the calls read only the tree they are given.
 * For the parallel tests it also counts how many calls are in flight at once
 * (policy roles, and executor + curator, separately), can hold the first
 * calls of a role at a gate until a given number of them have arrived (so a
 * passing test proves they overlapped, without measuring time), and can run
 * a hook at the start of every policy role call (to prune or finish while
 * other expansions are in flight). Every wait is bounded by guard_ms only as
 * a guard against hangs; a wait that hits it is counted in waits_timed_out.
 */
#ifndef DRQA_TOY_POLICY_H
#define DRQA_TOY_POLICY_H

#include "mcts.h"
#include "policy.h"
#include "search.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum toy_dup { TOY_DUP_NONE, TOY_DUP_SIBLING, TOY_DUP_ANCESTOR, TOY_DUP_ONCE };
/* TOY_CITE_TREE: the first span of every node of the tree that has one,
 * whatever its status, on the trajectory or not */
/* TOY_CITE_READ: lines of a window the answer read itself (handed back in
 * policy_answer.read, seen by no node), and lines past that window */
/* TOY_CITE_READ_OUTLINE: the outline of a class the answer read itself,
 * cited as exactly its lines and as lines inside it */
/* TOY_CITE_READ_NAMED: two parts of a window the answer read, one cited
 * with the policy's own label, one with none */
enum toy_cite { TOY_CITE_GOOD, TOY_CITE_BOGUS, TOY_CITE_NONE, TOY_CITE_PARTIAL, TOY_CITE_TREE, TOY_CITE_READ,
                TOY_CITE_READ_OUTLINE, TOY_CITE_READ_NAMED };
enum toy_gate { TOY_GATE_NONE, TOY_GATE_PERCEIVE, TOY_GATE_PLAN, TOY_GATE_EVAL };

struct toy {
    int finish_at;              /* plan Finish at this node id (0: never) */
    int fail_perceive_at, fail_plan_at, fail_exec_at, fail_eval_at, fail_answer;
    int fail_curate_at;
    int fail_eval_all;          /* every evaluation fails */
    enum policy_fail fail_kind; /* the kind reported with the plan and evaluate failures */
    int use_forced_value;       /* evaluate returns forced_value for every node */
    double forced_value;
    enum toy_dup dup;
    enum toy_cite cite;
    int answer_from_tree;       /* the policy's answer_from_tree */
    int flat_values;            /* every value 50 (ties everywhere) */
    long long tokens_per_call;  /* input tokens charged per role call; output = half */
    double rollout_value;       /* returned by the rollout; < 0: no rollout */
    int calls_perceive, calls_plan, calls_eval, calls_answer, calls_rollout, calls_exec,
        calls_curate;
    char refused_report[512];   /* the last report that carried a refusal */

    /* Concurrency instruments; all under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int in_flight, max_in_flight;         /* perceive, plan, evaluate and rollout calls */
    int ex_in_flight, max_ex_in_flight;   /* execute and curate calls */
    int all_in_flight, max_all_in_flight; /* both kinds */
    enum toy_gate gate;                   /* after the first gate_skip calls of this role, */
    int gate_skip, gate_n, gate_arrived;  /* the next gate_n wait until all have arrived */
    int probe_ms;                         /* > 0: the first perceive and the first execute
                                             each wait this long for another call of their
                                             kind to start (a wait meant to time out, so that
                                             an overlap that should not happen shows) */
    int exec_wait_plans;                  /* the first execute waits until this many plan
                                             calls have started */
    int guard_ms;                         /* bound of the waits above; default 10000 */
    int waits_timed_out;                  /* gate and plan waits that hit guard_ms */
    /* Called at the start of every policy role call, outside mu. */
    void (*hook)(void *ctx, const char *role, int id);
    void *hook_ctx;
};

/* Waits on the toy's condition until *v >= want or ms pass; mu held. Returns
 * 1 when the condition holds. */
static int toy_wait_at_least(struct toy *t, const int *v, int want, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (*v < want)
        if (pthread_cond_timedwait(&t->cv, &t->mu, &until) == ETIMEDOUT) return *v >= want;
    return 1;
}

/* Start of a policy role call: the hook, the counters, the gate. */
static void toy_enter(struct toy *t, enum toy_gate role, const char *name, int id, int *calls)
{
    if (t->hook) t->hook(t->hook_ctx, name, id);
    pthread_mutex_lock(&t->mu);
    (*calls)++;
    if (++t->in_flight > t->max_in_flight) t->max_in_flight = t->in_flight;
    if (++t->all_in_flight > t->max_all_in_flight) t->max_all_in_flight = t->all_in_flight;
    if (role == TOY_GATE_PERCEIVE && *calls == 1 && t->probe_ms > 0)
        toy_wait_at_least(t, &t->in_flight, 2, t->probe_ms);
    if (role == t->gate && *calls > t->gate_skip && t->gate_arrived < t->gate_n) {
        t->gate_arrived++;
        pthread_cond_broadcast(&t->cv);
        if (!toy_wait_at_least(t, &t->gate_arrived, t->gate_n, t->guard_ms)) t->waits_timed_out++;
    }
    pthread_cond_broadcast(&t->cv);   /* evaluate calls are waited for */
    pthread_mutex_unlock(&t->mu);
}

static void toy_leave(struct toy *t)
{
    pthread_mutex_lock(&t->mu);
    t->in_flight--;
    t->all_in_flight--;
    pthread_mutex_unlock(&t->mu);
}

/* Start of an execute (exec 1) or curate (exec 0) call. */
static void toy_ex_enter(struct toy *t, int exec)
{
    pthread_mutex_lock(&t->mu);
    int nth = exec ? ++t->calls_exec : (++t->calls_curate, 0);
    if (++t->ex_in_flight > t->max_ex_in_flight) t->max_ex_in_flight = t->ex_in_flight;
    if (++t->all_in_flight > t->max_all_in_flight) t->max_all_in_flight = t->all_in_flight;
    pthread_cond_broadcast(&t->cv);
    if (nth == 1 && t->exec_wait_plans && !toy_wait_at_least(t, &t->calls_plan, t->exec_wait_plans, t->guard_ms))
        t->waits_timed_out++;
    if (nth == 1 && t->probe_ms > 0) toy_wait_at_least(t, &t->ex_in_flight, 2, t->probe_ms);
    pthread_mutex_unlock(&t->mu);
}

static void toy_ex_leave(struct toy *t)
{
    pthread_mutex_lock(&t->mu);
    t->ex_in_flight--;
    t->all_in_flight--;
    pthread_mutex_unlock(&t->mu);
}

static void toy_charge(struct toy *t, struct policy_usage *u)
{
    u->input_tokens = t->tokens_per_call;
    u->output_tokens = t->tokens_per_call / 2;
}

/* The value of a node: spread over 0-100, fixed per id. */
static double toy_value(const struct toy *t, int id)
{
    return t->flat_values ? 50 : (double)((id * 37 + 11) % 101);
}

static int toy_perceive_body(struct toy *t, const struct mcts_tree *tr, int id, char **report,
                             struct policy_usage *u, char *err, size_t errlen)
{
    toy_charge(t, u);
    if (id == t->fail_perceive_at) {
        snprintf(err, errlen, "toy perceive failure at %d", id);
        return -1;
    }
    const struct mcts_node *n = mcts_node(tr, id);
    *report = xasprintf("node %d under %d with %d siblings", id, n->parent,
                        mcts_node(tr, n->parent)->nchildren - 1);
    return 0;
}

static int toy_perceive(void *ctx, const struct mcts_tree *tr, int id, char **report,
                        struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    toy_enter(t, TOY_GATE_PERCEIVE, "perceive", id, &t->calls_perceive);
    int rc = toy_perceive_body(t, tr, id, report, u, err, errlen);
    toy_leave(t);
    return rc;
}

static int toy_plan_body(struct toy *t, const struct mcts_tree *tr, int id, const char *report,
                         struct policy_action *out, struct policy_usage *u, char *err, size_t errlen)
{
    toy_charge(t, u);
    if (strstr(report, "[engine]")) {
        pthread_mutex_lock(&t->mu);
        snprintf(t->refused_report, sizeof t->refused_report, "%s", report);
        pthread_mutex_unlock(&t->mu);
    }
    if (id == t->fail_plan_at) {
        u->fail_kind = t->fail_kind;
        snprintf(err, errlen, "toy plan failure at %d", id);
        return -1;
    }
    const struct mcts_node *n = mcts_node(tr, id);
    out->args = cJSON_CreateObject();
    if (id == t->finish_at) {
        out->name = xstrdup("Finish");
        cJSON_AddStringToObject(out->args, "answer", "toy finish answer");
        return 0;
    }
    out->name = xstrdup("FindFunction");
    const struct mcts_node *p = mcts_node(tr, n->parent);
    if (t->dup == TOY_DUP_SIBLING) {
        /* every child of a node asks for the same function (case and spaces vary) */
        char *name = xasprintf(n->id % 2 ? "  helper_%d " : "HELPER_%d", n->parent);
        cJSON_AddStringToObject(out->args, "function_name", name);
        free(name);
    } else if (t->dup == TOY_DUP_ANCESTOR && p->action) {
        cJSON_AddItemToObject(out->args, "function_name",
                              cJSON_Duplicate(cJSON_GetObjectItem(p->args, "function_name"), 1));
    } else if (t->dup == TOY_DUP_ONCE && n->id > 1 && !strstr(report, "[engine]")) {
        cJSON_AddStringToObject(out->args, "function_name", "f1");   /* node 1's action */
    } else {
        char *name = xasprintf("f%d", id);
        cJSON_AddStringToObject(out->args, "function_name", name);
        free(name);
    }
    out->rationale = xasprintf("look at node %d's function", id);
    return 0;
}

static int toy_plan(void *ctx, const struct mcts_tree *tr, int id, const char *report,
                    struct policy_action *out, struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    toy_enter(t, TOY_GATE_PLAN, "plan", id, &t->calls_plan);
    int rc = toy_plan_body(t, tr, id, report, out, u, err, errlen);
    toy_leave(t);
    return rc;
}

static int toy_eval_body(struct toy *t, int id, struct policy_eval *out, struct policy_usage *u,
                         char *err, size_t errlen)
{
    toy_charge(t, u);
    if (id == t->fail_eval_at || t->fail_eval_all) {
        u->fail_kind = t->fail_kind;
        snprintf(err, errlen, "toy evaluate failure at %d", id);
        return -1;
    }
    out->value = t->use_forced_value ? t->forced_value : toy_value(t, id);
    out->feedback = xasprintf("feedback %d", id);
    return 0;
}

static int toy_eval(void *ctx, const struct mcts_tree *tr, int id, struct policy_eval *out,
                    struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    toy_enter(t, TOY_GATE_EVAL, "evaluate", id, &t->calls_eval);
    int rc = toy_eval_body(t, id, out, u, err, errlen);
    toy_leave(t);
    return rc;
}

static int toy_rollout(void *ctx, const struct mcts_tree *tr, int id, double *value,
                       struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    toy_enter(t, TOY_GATE_NONE, "rollout", id, &t->calls_rollout);
    *value = t->rollout_value;
    toy_leave(t);
    return 0;
}

static int toy_answer(void *ctx, const struct mcts_tree *tr, const int *ids, size_t nids,
                      struct policy_answer *out, struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    pthread_mutex_lock(&t->mu);
    t->calls_answer++;
    pthread_mutex_unlock(&t->mu);
    toy_charge(t, u);
    if (t->fail_answer) {
        snprintf(err, errlen, "toy answer failure");
        return -1;
    }
    out->markdown = xasprintf("toy answer over %zu nodes", nids);
    const struct mcts_node *last = NULL;
    for (size_t i = 0; i < nids; i++)
        if (mcts_node(tr, ids[i])->obs.n) last = mcts_node(tr, ids[i]);
    if (t->cite == TOY_CITE_TREE) {
        for (int id = 1; id < tr->n; id++) {
            const struct mcts_node *m = mcts_node(tr, id);
            if (m->obs.n)
                evidence_add(&out->cites, m->obs.v[0].path, m->obs.v[0].start_line, m->obs.v[0].end_line, NULL,
                             NULL, 0);
        }
    } else if (t->cite == TOY_CITE_READ) {
        evidence_add(&out->read, "flat/window.py", 1, 4, "a = 1\nb = 2\nc = 3\nd = 4", "lines 1-4", 1);
        evidence_add(&out->cites, "flat/window.py", 2, 3, NULL, NULL, 0);
        evidence_add(&out->cites, "flat/window.py", 3, 9, NULL, NULL, 0);
    } else if (t->cite == TOY_CITE_READ_NAMED) {
        evidence_add(&out->read, "flat/named.py", 1, 40, "x = 0\n", "lines 1-40", 1);
        evidence_add(&out->cites, "flat/named.py", 10, 20, NULL, "Chunk.run", 0);
        evidence_add(&out->cites, "flat/named.py", 21, 30, NULL, NULL, 0);
    } else if (t->cite == TOY_CITE_READ_OUTLINE) {
        evidence_add(&out->read, "flat/chunk.py", 10, 40, "class Chunk:\n    def run(self): ...", "Chunk", 1)
            ->elided = 1;
        evidence_add(&out->cites, "flat/chunk.py", 10, 40, NULL, NULL, 0);
        evidence_add(&out->cites, "flat/chunk.py", 12, 20, NULL, NULL, 0);
    } else if (t->cite == TOY_CITE_BOGUS || (!last && t->cite != TOY_CITE_NONE)) {
        evidence_add(&out->cites, "nowhere/made_up.py", 10, 20, NULL, NULL, 0);
    } else if (t->cite == TOY_CITE_GOOD) {
        const struct evidence_span *s = &last->obs.v[0];
        evidence_add(&out->cites, s->path, s->start_line, s->end_line, NULL, NULL, 0);
    } else if (t->cite == TOY_CITE_PARTIAL) {
        const struct evidence_span *s = &last->obs.v[0];
        evidence_add(&out->cites, s->path, s->start_line + 1, s->start_line + 1, NULL, NULL, 0);
        evidence_add(&out->cites, s->path, s->start_line, s->end_line + 5, NULL, NULL, 0);
    }
    return 0;
}

/* Executes FindFunction(function_name) as one span in a file named after it. */
static int toy_exec_body(struct toy *t, const cJSON *args, struct evidence *raw, char **text,
                         char *err, size_t errlen)
{
    const cJSON *fn = cJSON_GetObjectItem(args, "function_name");
    const char *f = cJSON_IsString(fn) ? fn->valuestring : "none";
    int num = 0;
    sscanf(f, "f%d", &num);
    if (num && num == t->fail_exec_at) {
        snprintf(err, errlen, "toy executor failure for %s", f);
        return -1;
    }
    char *path = xasprintf("pkg/%s.py", f);
    char *label = xasprintf("def %s()", f);
    evidence_add(raw, path, 10, 12, "def x():\n    y = 1\n    return y", label, num);
    free(path);
    free(label);
    *text = NULL;
    return 0;
}

static int toy_exec(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text,
                    char *err, size_t errlen)
{
    struct toy *t = ctx;
    toy_ex_enter(t, 1);
    int rc = toy_exec_body(t, args, raw, text, err, errlen);
    toy_ex_leave(t);
    return rc;
}

/* Keeps the raw spans, renders them its own way. */
static int toy_curate_body(struct toy *t, const char *action, const struct evidence *raw,
                           struct evidence *curated, char **text, struct policy_usage *u, char *err,
                           size_t errlen)
{
    toy_charge(t, u);
    if (raw->n && (int)raw->v[0].score == t->fail_curate_at && t->fail_curate_at) {
        snprintf(err, errlen, "toy curate failure");
        return -1;
    }
    evidence_copy(curated, raw);
    *text = xasprintf("%s: %zu span(s)", action, raw->n);
    return 0;
}

static int toy_curate(void *ctx, const char *question, const char *action, const struct evidence *raw,
                      const char *raw_text, struct evidence *curated, char **text,
                      struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    toy_ex_enter(t, 0);
    int rc = toy_curate_body(t, action, raw, curated, text, u, err, errlen);
    toy_ex_leave(t);
    return rc;
}

static struct policy toy_policy(struct toy *t)
{
    struct policy p = {.name = "toy",
                       .ctx = t,
                       .perceive = toy_perceive,
                       .plan = toy_plan,
                       .evaluate = toy_eval,
                       .rollout = t->rollout_value >= 0 ? toy_rollout : NULL,
                       .answer = toy_answer,
                       .answer_from_tree = t->answer_from_tree};
    return p;
}

static struct policy_executor toy_executor(struct toy *t)
{
    struct policy_executor e = {t, toy_exec};
    return e;
}

static struct policy_curator toy_curator(struct toy *t)
{
    struct policy_curator c = {t, toy_curate};
    return c;
}

static void toy_init(struct toy *t)
{
    static const pthread_mutex_t mu0 = PTHREAD_MUTEX_INITIALIZER;
    static const pthread_cond_t cv0 = PTHREAD_COND_INITIALIZER;
    memset(t, 0, sizeof *t);
    t->mu = mu0;
    t->cv = cv0;
    t->fail_perceive_at = t->fail_plan_at = t->fail_exec_at = t->fail_eval_at = -100;
    t->rollout_value = -1;
    t->guard_ms = 10000;
}

static int64_t toy_clock_now;
/* A clock that advances 5 ms per reading, so timings are exact and repeatable. */
static int64_t __attribute__((unused)) toy_clock(void)
{
    return toy_clock_now += 5;
}

#endif
