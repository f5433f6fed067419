/*
 * policy_llm_roles: perception, planning, evaluation and the evidence filter
 * as policy callbacks: each renders its request, asks (ask_role) and takes
 * the fallback policy's decision when the model gave none.
 */
#include "policy_llm_int.h"
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

/* The curated text of the last one or two steps on the path to id that
 * read something, newest first, each within half of cap: what perception
 * reports on. */
static char *recent_text(const struct mcts_tree *t, int id, size_t cap)
{
    struct buf b = BUF_INIT;
    int shown = 0;
    for (int k = id; k > 0 && shown < 2; k = t->nodes[k].parent) {
        const struct mcts_node *n = &t->nodes[k];
        if (n->status != MCTS_DONE || n->duplicate || !n->obs_text || !*n->obs_text) continue;
        char *args = args_text(n->args, 160);
        char *body = prompt_cap(n->obs_text, cap / 2, 0);
        buf_printf(&b, "%s%s %s:\n%s", b.len ? "\n" : "", n->action ? n->action : "?", args, body);
        chomp(&b);
        buf_addc(&b, '\n');
        free(args);
        free(body);
        shown++;
    }
    chomp(&b);
    if (!b.len) buf_adds(&b, "(no code read yet)");
    return buf_take(&b);
}

struct perceive_ctx { char *report; };

static int check_perception_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct perceive_ctx *pc = ctx;
    free(pc->report);
    pc->report = NULL;
    return llm_check_perception(obj, &pc->report, notes, err, errlen);
}

/* A node of a tree, for the renders of the roles that look at one. */
struct node_at {
    const struct mcts_tree *t;
    int id;
};

static char *render_perception(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                               size_t errlen)
{
    const struct node_at *at = ctx;
    const struct mcts_tree *t = at->t;
    const struct mcts_node *n = mcts_node(t, at->id);
    char *traj = trajectory_text(t, n->parent, 1, c->trajectory);
    char *recent = recent_text(t, n->parent, c->recent);
    char *sib = siblings_text(t, at->id, c->siblings);
    char *leads = leads_text(t, at->id, c->leads);
    struct prompt_var v[] = {{"question", t->question, 2000}, {"qtype", qtype_name(p), 0}, {"trajectory", traj, 0},
                             {"recent", recent, 0},           {"siblings", sib, 0},         {"leads", leads, 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_PERCEPTION, v, ARRAY_LEN(v), err, errlen);
    free(traj);
    free(recent);
    free(sib);
    free(leads);
    return prompt;
}

int lp_perceive(void *ctx, const struct mcts_tree *t, int id, char **report, struct policy_usage *u,
                char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    const struct mcts_node *n = mcts_node(t, id);
    if (!n) {
        snprintf(err, errlen, "perception: no node %d", id);
        return -1;
    }
    struct perceive_ctx pc = {NULL};
    struct node_at at = {t, id};
    struct role_call call = {.role = LLM_ROLE_PERCEPTION, .temperature = p->cfg.explore_temperature,
                             .check = check_perception_cb, .cctx = &pc};
    char note[1400];
    int rc = run_role(p, &call, render_perception, &at, "report", u, note, sizeof note, err, errlen);
    if (rc == 0) {
        *report = pc.report;
        return 0;
    }
    free(pc.report);
    if (rc < 0) return -1;
    char *fb = NULL;
    if (!p->has_fallback || !p->fallback.perceive) {
        *report = xasprintf("[%s]", note);
        return 0;
    }
    char ferr[512] = "";
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.perceive(p->fallback.ctx, t, id, &fb, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        free(fb);
        return fallback_failed(p, &call, "report", ferr, err, errlen);
    }
    *report = xasprintf("[%s]\n%s", note, fb ? fb : "");
    free(fb);
    return 0;
}

struct plan_ctx {
    int no_semantic;
    struct policy_action a;
};

static int check_plan_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct plan_ctx *pc = ctx;
    policy_action_clear(&pc->a);
    return llm_check_plan(obj, pc->no_semantic, &pc->a, notes, err, errlen);
}

struct plan_at {
    const struct mcts_tree *t;
    int id;
    const char *report;
};

static char *render_planning(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                             size_t errlen)
{
    const struct plan_at *at = ctx;
    const struct mcts_tree *t = at->t;
    const struct mcts_node *n = mcts_node(t, at->id);
    const struct mcts_node *par = mcts_node(t, n->parent);
    char *steps = trajectory_text(t, n->parent, 1, c->trajectory);
    char *sib = siblings_text(t, at->id, c->siblings);
    char *ids = identifiers_text(p);
    char *feedback = one_line(par && par->feedback ? par->feedback : "(none)", MAX_FEEDBACK);
    /* The engine's refusal of a repeated action ends the report: keep the end. */
    char *rep = prompt_cap(at->report && *at->report ? at->report : "(no report)", c->report, 1);
    struct prompt_var v[] = {{"question", t->question, 2000}, {"identifiers", ids, 0}, {"report", rep, 0},
                             {"trajectory", steps, 0},        {"siblings", sib, 0},    {"feedback", feedback, 0},
                             {"actions", p->actions_text, 0}, {"qtype", qtype_name(p), 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_PLANNING, v, ARRAY_LEN(v), err, errlen);
    free(steps);
    free(sib);
    free(ids);
    free(feedback);
    free(rep);
    return prompt;
}

int lp_plan(void *ctx, const struct mcts_tree *t, int id, const char *report, struct policy_action *out,
            struct policy_usage *u, char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    const struct mcts_node *n = mcts_node(t, id);
    if (!n) {
        snprintf(err, errlen, "planning: no node %d", id);
        return -1;
    }
    struct plan_ctx pc = {p->cfg.no_semantic, {0}};
    struct plan_at at = {t, id, report};
    struct role_call call = {.role = LLM_ROLE_PLANNING, .temperature = p->cfg.explore_temperature,
                             .check = check_plan_cb, .cctx = &pc};
    char note[1400];
    int rc = run_role(p, &call, render_planning, &at, "plan", u, note, sizeof note, err, errlen);
    if (rc == 0) {
        *out = pc.a;
        return 0;
    }
    policy_action_clear(&pc.a);
    if (rc < 0) return -1;
    if (!p->has_fallback || !p->fallback.plan) {
        snprintf(err, errlen, "%s", note);
        return -1;
    }
    char ferr[512] = "";
    struct policy_action fa = {0};
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.plan(p->fallback.ctx, t, id, report ? report : "", &fa, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        policy_action_clear(&fa);
        return fallback_failed(p, &call, "plan", ferr, err, errlen);
    }
    char *r = xasprintf("[%s]%s%s", note, fa.rationale ? " " : "", fa.rationale ? fa.rationale : "");
    free(fa.rationale);
    fa.rationale = r;
    *out = fa;
    return 0;
}

/* The engine refused the model's Finish on this node as often as it asks
 * again (nothing read on its path): the fallback plans the node, noted. */
int lp_plan_fallback(void *ctx, const struct mcts_tree *t, int id, const char *report,
                     struct policy_action *out, struct policy_usage *u, char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    struct policy_action fa = {0};
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.plan(p->fallback.ctx, t, id, report ? report : "", &fa, u, err, errlen);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        policy_action_clear(&fa);
        return -1;
    }
    /* the engine asks for the fallback's plan for one of two refusals, and
     * its last line in the report says which */
    const char *why = report ? strstr(report, "[engine] Refused ") : NULL;
    for (const char *w = why; w; w = strstr(w + 1, "[engine] Refused ")) why = w;
    char note[300];
    if (why && strstr(why, ": it repeats "))
        snprintf(note, sizeof note, "planning: the model repeated an action already in the tree as often as it was "
                 "asked again; used the %s plan", p->fallback.name);
    else
        snprintf(note, sizeof note, "planning: the model planned Finish with no code read on its path, refused; used "
                 "the %s plan", p->fallback.name);
    add_note(p, note);
    u->fallback = 1;
    policy_usage_note(u, "%s", note);
    char *r = xasprintf("[%s]%s%s", note, fa.rationale ? " " : "", fa.rationale ? fa.rationale : "");
    free(fa.rationale);
    fa.rationale = r;
    *out = fa;
    return 0;
}

struct eval_ctx {
    double value;
    char *feedback;
};

static int check_eval_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct eval_ctx *ec = ctx;
    free(ec->feedback);
    ec->feedback = NULL;
    return llm_check_eval(obj, &ec->value, &ec->feedback, notes, err, errlen);
}

/* What the evaluator sees of a step: its curated observation, or for a
 * Finish the code read on its path (the spans, numbered, within cap). */
static char *observation_text(const struct llm_policy *p, const struct mcts_tree *t, const struct mcts_node *n,
                              size_t cap)
{
    if (streq(n->action, "Finish")) {
        int *ids = NULL;
        size_t nids = mcts_path(t, n->parent, &ids);
        struct evidence seen = EVIDENCE_INIT;
        trajectory_spans(t, ids, nids, &seen);
        free(ids);
        struct buf b = BUF_INIT;
        buf_adds(&b, "(Finish is not run against the repository. The code read on its path:)\n");
        for (size_t i = 0; i < seen.n && b.len < cap; i++) numbered_span(&b, &seen.v[i], p->cfg.caps.span);
        if (!seen.n) buf_adds(&b, "(none)\n");
        evidence_free(&seen);
        char *r = prompt_cap(buf_str(&b), cap, 0);
        buf_free(&b);
        return r;
    }
    if (n->obs.n == 0 && (!n->obs_text || !*n->obs_text)) return xstrdup("(nothing found)");
    return prompt_cap(n->obs_text && *n->obs_text ? n->obs_text : "(spans without text)", cap, 0);
}

static char *render_evaluation(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                               size_t errlen)
{
    const struct node_at *at = ctx;
    const struct mcts_tree *t = at->t;
    const struct mcts_node *n = mcts_node(t, at->id);
    char *traj = trajectory_text(t, n->parent, 1, c->steps);
    char *args = args_text(n->args, 600);
    char *action = xasprintf("%s %s", n->action, args);
    free(args);
    char *obs = observation_text(p, t, n, streq(n->action, "Finish") ? c->evidence / 2 : c->observation);
    struct prompt_var v[] = {{"question", t->question, 2000}, {"trajectory", traj, 0}, {"action", action, 0},
                             {"observation", obs, 0},         {"qtype", qtype_name(p), 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_EVALUATION, v, ARRAY_LEN(v), err, errlen);
    free(traj);
    free(action);
    free(obs);
    return prompt;
}

int lp_evaluate(void *ctx, const struct mcts_tree *t, int id, struct policy_eval *out, struct policy_usage *u,
                char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    const struct mcts_node *n = mcts_node(t, id);
    if (!n || !n->action) {
        snprintf(err, errlen, "evaluation: node %d has no action", id);
        return -1;
    }
    struct eval_ctx ec = {0, NULL};
    struct node_at at = {t, id};
    struct role_call call = {.role = LLM_ROLE_EVALUATION, .temperature = p->cfg.explore_temperature,
                             .check = check_eval_cb, .cctx = &ec};
    char note[1400];
    int rc = run_role(p, &call, render_evaluation, &at, "evaluation", u, note, sizeof note, err, errlen);
    if (rc == 0) {
        out->value = ec.value;
        out->feedback = ec.feedback;
        return 0;
    }
    free(ec.feedback);
    if (rc < 0) return -1;
    if (!p->has_fallback || !p->fallback.evaluate) {
        snprintf(err, errlen, "%s", note);
        return -1;
    }
    char ferr[512] = "";
    struct policy_eval fe = {0, NULL};
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.evaluate(p->fallback.ctx, t, id, &fe, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        policy_eval_clear(&fe);
        return fallback_failed(p, &call, "evaluation", ferr, err, errlen);
    }
    char *fb = xasprintf("[%s]%s%s", note, fe.feedback ? " " : "", fe.feedback ? fe.feedback : "");
    free(fe.feedback);
    out->value = fe.value;
    out->feedback = fb;
    return 0;
}

int lp_rollout(void *ctx, const struct mcts_tree *t, int id, double *value, struct policy_usage *u, char *err,
               size_t errlen)
{
    struct llm_policy *p = ctx;
    pthread_mutex_lock(&p->fallback_lock);
    int rc = p->fallback.rollout(p->fallback.ctx, t, id, value, u, err, errlen);
    pthread_mutex_unlock(&p->fallback_lock);
    return rc;
}

/* ---- the evidence filter (curator) ---- */

/* The part of a rendered raw result before its first span (notes, listings). */
static char *raw_preamble(const char *raw_text, const struct evidence *raw)
{
    if (!raw_text || !*raw_text) return xstrdup("");
    if (raw->n == 0) return prompt_cap(raw_text, NOTES_PREFIX_CAP * 4, 0);
    char *hdr = xasprintf("%s:%d-%d", raw->v[0].path, raw->v[0].start_line, raw->v[0].end_line);
    const char *at = NULL;
    for (const char *s = strstr(raw_text, hdr); s; s = strstr(s + 1, hdr))
        if (s == raw_text || s[-1] == '\n') {
            at = s;
            break;
        }
    free(hdr);
    /* An executor may render only notes and listings, leaving the spans to the curator. */
    size_t n = at ? (size_t)(at - raw_text) : strlen(raw_text);
    char *pre = xstrndup(raw_text, n);
    char *r = prompt_cap(pre, NOTES_PREFIX_CAP, 0);
    free(pre);
    return r;
}

static char *curated_text(const char *note, const char *preamble, const struct evidence *ev)
{
    struct buf b = BUF_INIT;
    if (note) buf_printf(&b, "[%s]\n", note);
    if (preamble && *preamble) {
        buf_adds(&b, preamble);
        if (b.data[b.len - 1] != '\n') buf_addc(&b, '\n');
    }
    for (size_t i = 0; i < ev->n; i++) {
        const struct evidence_span *sp = &ev->v[i];
        buf_printf(&b, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, sp->label ? "  " : "",
                   sp->label ? sp->label : "");
        if (sp->text && *sp->text) {
            buf_adds(&b, sp->text);
            if (!str_ends(sp->text, "\n")) buf_addc(&b, '\n');
        }
    }
    return buf_take(&b);
}

struct filter_ctx {
    const struct evidence *raw, *shown;
    struct evidence kept;
    int dropped;
};

static int check_filter_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct filter_ctx *fc = ctx;
    evidence_free(&fc->kept);
    return llm_check_filter(obj, fc->raw, fc->shown, &fc->kept, &fc->dropped, notes, err, errlen);
}

/* Every candidate for the filter: the rule-ranked ones first (cand, the
 * curation's choice with its focused text), then every other span of the
 * raw result, each as its header and first lines, numbered, so the model
 * chooses among all of them; within cap, those that do not fit are listed
 * by header alone. */
static char *candidates_text(const struct evidence *cand, const struct evidence *raw, size_t cap)
{
    struct buf b = BUF_INIT, rest = BUF_INIT;
    size_t n = cand->n;
    for (size_t i = 0; i < raw->n; i++)
        if (!evidence_covers(cand, raw->v[i].path, raw->v[i].start_line, raw->v[i].end_line)) n++;
    size_t per = n ? cap / n : cap;
    if (per < 240) per = 240;
    for (size_t i = 0; i < cand->n + raw->n; i++) {
        const struct evidence_span *sp = i < cand->n ? &cand->v[i] : &raw->v[i - cand->n];
        if (i >= cand->n && evidence_covers(cand, sp->path, sp->start_line, sp->end_line)) continue;
        struct buf one = BUF_INIT;
        numbered_span(&one, sp, per);
        if (b.len + one.len <= cap || b.len == 0) {
            buf_add(&b, one.data ? one.data : "", one.len);
        } else {
            char *label = one_line(sp->label, 90);
            buf_printf(&rest, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, *label ? "  " : "", label);
            free(label);
        }
        buf_free(&one);
    }
    if (rest.len) buf_printf(&b, "Also in the result (lines not shown):\n%s", buf_str(&rest));
    buf_free(&rest);
    return buf_take(&b);
}

struct filter_at {
    const char *question, *action;
    const struct evidence *cand, *raw;
};

static char *render_filter(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                           size_t errlen)
{
    const struct filter_at *at = ctx;
    char *shown = candidates_text(at->cand, at->raw, c->raw);
    struct prompt_var v[] = {{"question", at->question, 2000}, {"action", at->action ? at->action : "?", 800},
                             {"raw", shown, 0}, {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_FILTER, v, ARRAY_LEN(v), err, errlen);
    free(shown);
    return prompt;
}

int lp_curate(void *ctx, const char *question, const char *action, const struct evidence *raw,
              const char *raw_text, struct evidence *curated, char **text, struct policy_usage *u, char *err,
              size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, question);
    struct evidence cand = EVIDENCE_INIT;
    curate(question ? question : "", raw, p->cfg.curate_budget, &cand);
    char *pre = raw_preamble(raw_text, raw);
    char *shown = candidates_text(&cand, raw, p->cfg.caps.raw);
    long min = p->cfg.filter_min_bytes;
    struct filter_ctx fc = {raw, &cand, EVIDENCE_INIT, 0};
    struct role_call call = {.role = LLM_ROLE_FILTER, .temperature = p->cfg.explore_temperature,
                             .check = check_filter_cb, .cctx = &fc};
    if (cand.n == 0 || (min >= 0 && strlen(shown) <= (size_t)min)) {   /* nothing to choose from */
        evidence_copy(curated, &cand);
        *text = curated_text(NULL, pre, &cand);
        goto done;
    }
    struct filter_at at = {question, action, &cand, raw};
    int rc = ask_role(p, &call, render_filter, &at, u, err, errlen);
    char *problem = call.problem;
    if (rc == -2 || (rc == -1 && !failed_call(p, LLM_ROLE_FILTER, call.why, call.cerr, 1, u, problem,
                                              sizeof call.problem, err, errlen))) {
        role_call_done(&call);
        evidence_free(&fc.kept);
        free(pre);
        free(shown);
        evidence_free(&cand);
        return -1;
    }
    if (rc == 0 && fc.kept.n == 0) {
        /* An empty choice keeps the best rule-ranked span: erasing the
         * observation would lose what the action found. */
        evidence_add(curated, cand.v[0].path, cand.v[0].start_line, cand.v[0].end_line, cand.v[0].text,
                     cand.v[0].label, cand.v[0].score)->elided = cand.v[0].elided;
        const char *note = "filter: chose no span; kept the best-ranked candidate, not confirmed as relevant";
        policy_usage_note(u, "%s", note);
        *text = curated_text(note, pre, curated);
    } else if (rc == 0) {
        for (size_t i = 0; i < fc.kept.n; i++) fc.kept.v[i].score = curate_relevance(question, &fc.kept.v[i]);
        evidence_copy(curated, &fc.kept);
        if (fc.dropped) {
            policy_usage_note(u, "filter: dropped %d span%s outside the result", fc.dropped, fc.dropped == 1 ? "" : "s");
            log_msg("llm policy: filter dropped %d span%s outside the result", fc.dropped, fc.dropped == 1 ? "" : "s");
        }
        *text = curated_text(NULL, pre, &fc.kept);
    } else {
        char note[1400];
        fallback_used(p, LLM_ROLE_FILTER, rc < 0, problem, "rule-based", "curation", u, note, sizeof note);
        evidence_copy(curated, &cand);
        *text = curated_text(note, pre, &cand);
    }
    evidence_free(&fc.kept);
done:
    role_call_done(&call);
    free(pre);
    free(shown);
    evidence_free(&cand);
    return 0;
}
