/*
 * policy_llm: the four agents and the evidence filter played by a chat model
 * (see policy_llm.h for the roles, the structured-output loop, the fallback
 * and the token caps). This file holds the roles' names and templates and
 * builds the policy; the work is in policy_llm_render.c (the tree as prompt
 * text), policy_llm_call.c (talking to the model), policy_llm_check.c (the
 * replies' checks), policy_llm_roles.c (perception, planning, evaluation, the
 * filter) and policy_llm_answer.c (the answer), sharing policy_llm_int.h.
 */
#include "policy_llm_int.h"
#include "llm_config.h"
#include "action.h"
#include "curate.h"
#include "jsonx.h"
#include "mcts.h"
#include "prompt.h"
#include "qparse.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The roles' names are the configuration's (model.ROLE, --role-model): both
 * come from llm_roles.def. */
const char *llm_role_name(enum llm_role r)
{
    return (unsigned)r < LLM_ROLE_N ? config_role_names[r] : "other";
}

/* The placeholders each role's template may use (llm_roles.def). */
#define LLM_ROLE(id, name, ...) static const char *const vars_##id[] = {__VA_ARGS__, NULL};
#include "llm_roles.def"
static const char *const *const role_vars[LLM_ROLE_N] = {
#define LLM_ROLE(id, ...) [LLM_ROLE_##id] = vars_##id,
#include "llm_roles.def"
};

void llm_policy_config_init(struct llm_policy_config *c)
{
    memset(c, 0, sizeof *c);
    c->explore_temperature = LLM_POLICY_EXPLORE_TEMPERATURE;
    c->answer_temperature = LLM_POLICY_ANSWER_TEMPERATURE;
    c->max_attempts = LLM_POLICY_ATTEMPTS;
}

static void caps_defaults(struct llm_policy_caps *c)
{
    if (!c->trajectory) c->trajectory = 1200;
    if (!c->steps) c->steps = 1000;
    if (!c->siblings) c->siblings = 400;
    if (!c->leads) c->leads = 400;
    if (!c->report) c->report = 700;
    if (!c->recent) c->recent = 1600;
    if (!c->observation) c->observation = 1500;
    if (!c->raw) c->raw = 3600;
    if (!c->evidence) c->evidence = 20000;
    if (!c->span) c->span = 2400;
    if (!c->reply_echo) c->reply_echo = 1200;
}

/* ---- construction ---- */

struct llm_policy *llm_policy_new(const struct llm_policy_config *cfg, char *err, size_t errlen)
{
    if (!cfg || !cfg->backend) {
        snprintf(err, errlen, "the LLM policy needs a chat backend; configure a model (--model, --api-base)");
        return NULL;
    }
    struct llm_policy *p = xcalloc(1, sizeof *p);
    p->cfg = *cfg;
    if (p->cfg.explore_temperature < 0) p->cfg.explore_temperature = LLM_POLICY_EXPLORE_TEMPERATURE;
    if (p->cfg.answer_temperature < 0) p->cfg.answer_temperature = LLM_POLICY_ANSWER_TEMPERATURE;
    if (p->cfg.max_attempts <= 0) p->cfg.max_attempts = LLM_POLICY_ATTEMPTS;
    if (p->cfg.curate_budget <= 0) p->cfg.curate_budget = 1500;
    if (p->cfg.filter_min_bytes == 0) p->cfg.filter_min_bytes = 1200;
    p->cfg.prompt_dirs = NULL;   /* only used here */
    caps_defaults(&p->cfg.caps);
    if (cfg->fallback) {
        p->fallback = *cfg->fallback;
        p->has_fallback = 1;
        if (!p->fallback.name) p->fallback.name = "fallback";
    }
    llm_usage_init(&p->usage);
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->fallback_lock, NULL);
    p->actions_text = render_actions(cfg->no_semantic);
    build_schemas(p);
    for (int r = 0; r < LLM_ROLE_N; r++) {
        p->prompts[r] = prompt_load(config_role_names[r], cfg->prompt_dirs, cfg->nprompt_dirs, role_vars[r], err, errlen);
        if (!p->prompts[r] || split_template(p, (enum llm_role)r, err, errlen) != 0) {
            llm_policy_free(p);
            return NULL;
        }
    }
    return p;
}

void llm_policy_free(struct llm_policy *p)
{
    if (!p) return;
    forget_question(p);
    llm_usage_destroy(&p->usage);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->fallback_lock);
    for (int r = 0; r < LLM_ROLE_N; r++) {
        prompt_free(p->prompts[r]);
        prompt_free(p->request[r]);
        free(p->system[r]);
        free(p->stable_tail[r]);
        cJSON_Delete(p->schema[r]);
    }
    free(p->actions_text);
    answer_stream_free(&p->stream);
    free(p);
}

static void lp_set_answer_sink(void *ctx, policy_answer_sink fn, void *ud)
{
    answer_stream_set(&((struct llm_policy *)ctx)->stream, fn, ud);
}

void llm_policy_bind(struct llm_policy *p, struct policy *out)
{
    memset(out, 0, sizeof *out);
    out->name = "llm";
    out->ctx = p;
    out->perceive = lp_perceive;
    out->plan = lp_plan;
    out->evaluate = lp_evaluate;
    out->rollout = p->has_fallback && p->fallback.rollout ? lp_rollout : NULL;
    out->plan_fallback = p->has_fallback && p->fallback.plan ? lp_plan_fallback : NULL;
    out->answer = lp_answer;
    out->set_answer_sink = lp_set_answer_sink;
}

void llm_policy_curator(struct llm_policy *p, struct policy_curator *out)
{
    out->ctx = p;
    out->curate = lp_curate;
}

int llm_policy_tokens(struct llm_policy *p, const char *role, long *input, long *output)
{
    struct llm_usage_entry e;
    if (llm_usage_get(&p->usage, role, &e) != 0 || e.calls == 0) {
        if (input) *input = 0;
        if (output) *output = 0;
        return -1;
    }
    if (input) *input = e.input_tokens;
    if (output) *output = e.output_tokens;
    return 0;
}

cJSON *llm_policy_usage_json(struct llm_policy *p)
{
    return llm_usage_json(&p->usage);
}

size_t llm_policy_notes(const struct llm_policy *p, const char *const **notes)
{
    if (notes) *notes = (const char *const *)p->notes;
    return p->nnotes;
}

void llm_policy_outcome(struct llm_policy *p, struct llm_policy_outcome *out)
{
    memset(out, 0, sizeof *out);
    struct llm_usage_entry tot;
    llm_usage_get(&p->usage, NULL, &tot);
    out->calls = tot.calls;
    out->failed_calls = tot.failures;
    out->retried_calls = tot.retried_calls;
    pthread_mutex_lock(&p->lock);
    out->answer_fallback = p->q_answer_fallback;
    snprintf(out->last_error, sizeof out->last_error, "%s", p->q_last_error);
    snprintf(out->last_retry, sizeof out->last_retry, "%s", p->q_last_retry);
    pthread_mutex_unlock(&p->lock);
}

void llm_policy_stats(struct llm_policy *p, long *calls, long long *model_ms)
{
    pthread_mutex_lock(&p->lock);
    if (calls) *calls = p->calls;
    if (model_ms) *model_ms = p->model_ms;
    pthread_mutex_unlock(&p->lock);
}
