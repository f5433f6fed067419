/*
 * toy_policy.h: a scripted policy, executor and curator for the search tests.
 * Every behaviour is chosen by fields of struct toy, so a test can make a role
 * fail at a given node, repeat actions, finish at a given node, spend tokens,
 * or cite spans that were or were not seen. Deterministic: nothing depends on
 * time or addresses. Include once per test program.
 */
#ifndef DRQA_TOY_POLICY_H
#define DRQA_TOY_POLICY_H

#include "mcts.h"
#include "policy.h"
#include "search.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum toy_dup { TOY_DUP_NONE, TOY_DUP_SIBLING, TOY_DUP_ANCESTOR, TOY_DUP_ONCE };
enum toy_cite { TOY_CITE_GOOD, TOY_CITE_BOGUS, TOY_CITE_NONE, TOY_CITE_PARTIAL };

struct toy {
    int finish_at;              /* plan Finish at this node id (0: never) */
    int fail_perceive_at, fail_plan_at, fail_exec_at, fail_eval_at, fail_answer;
    int fail_curate_at;
    int fail_eval_all;          /* every evaluation fails */
    int use_forced_value;       /* evaluate returns forced_value for every node */
    double forced_value;
    enum toy_dup dup;
    enum toy_cite cite;
    int flat_values;            /* every value 50 (ties everywhere) */
    long long tokens_per_call;  /* input tokens charged per role call; output = half */
    double rollout_value;       /* returned by the rollout; < 0: no rollout */
    int calls_perceive, calls_plan, calls_eval, calls_answer, calls_rollout, calls_exec,
        calls_curate;
    char refused_report[512];   /* the last report that carried a refusal */
};

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

static int toy_perceive(void *ctx, const struct mcts_tree *tr, int id, char **report,
                        struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_perceive++;
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

static int toy_plan(void *ctx, const struct mcts_tree *tr, int id, const char *report,
                    struct policy_action *out, struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_plan++;
    toy_charge(t, u);
    if (strstr(report, "[engine]")) snprintf(t->refused_report, sizeof t->refused_report, "%s", report);
    if (id == t->fail_plan_at) {
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

static int toy_eval(void *ctx, const struct mcts_tree *tr, int id, struct policy_eval *out,
                    struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_eval++;
    toy_charge(t, u);
    if (id == t->fail_eval_at || t->fail_eval_all) {
        snprintf(err, errlen, "toy evaluate failure at %d", id);
        return -1;
    }
    out->value = t->use_forced_value ? t->forced_value : toy_value(t, id);
    out->feedback = xasprintf("feedback %d", id);
    return 0;
}

static int toy_rollout(void *ctx, const struct mcts_tree *tr, int id, double *value,
                       struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_rollout++;
    *value = t->rollout_value;
    return 0;
}

static int toy_answer(void *ctx, const struct mcts_tree *tr, const int *ids, size_t nids,
                      struct policy_answer *out, struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_answer++;
    toy_charge(t, u);
    if (t->fail_answer) {
        snprintf(err, errlen, "toy answer failure");
        return -1;
    }
    out->markdown = xasprintf("toy answer over %zu nodes", nids);
    const struct mcts_node *last = NULL;
    for (size_t i = 0; i < nids; i++)
        if (mcts_node(tr, ids[i])->obs.n) last = mcts_node(tr, ids[i]);
    if (t->cite == TOY_CITE_BOGUS || (!last && t->cite != TOY_CITE_NONE)) {
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
static int toy_exec(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text,
                    char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_exec++;
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

/* Keeps the raw spans, renders them its own way. */
static int toy_curate(void *ctx, const char *question, const char *action, const struct evidence *raw,
                      const char *raw_text, struct evidence *curated, char **text,
                      struct policy_usage *u, char *err, size_t errlen)
{
    struct toy *t = ctx;
    t->calls_curate++;
    toy_charge(t, u);
    if (raw->n && (int)raw->v[0].score == t->fail_curate_at && t->fail_curate_at) {
        snprintf(err, errlen, "toy curate failure");
        return -1;
    }
    evidence_copy(curated, raw);
    *text = xasprintf("%s: %zu span(s)", action, raw->n);
    return 0;
}

static struct policy toy_policy(struct toy *t)
{
    struct policy p = {"toy", t, toy_perceive, toy_plan, toy_eval,
                       t->rollout_value >= 0 ? toy_rollout : NULL, toy_answer};
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
    memset(t, 0, sizeof *t);
    t->fail_perceive_at = t->fail_plan_at = t->fail_exec_at = t->fail_eval_at = -100;
    t->rollout_value = -1;
}

static int64_t toy_clock_now;
/* A clock that advances 5 ms per reading, so timings are exact and repeatable. */
static int64_t __attribute__((unused)) toy_clock(void)
{
    return toy_clock_now += 5;
}

#endif
