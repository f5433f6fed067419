/*
 * policy_llm_call: one role call, from the rendered request to a checked
 * reply. converse talks to the backend and re-asks with the problem of an
 * unusable reply; ask_role renders a role's request (shorter when over the
 * context window) and classifies a failed call for the role's fallback.
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

/* ---- talking to the model ---- */

/* The objects of one reply offered to a role's check in turn (jsonx_each_object). */
struct pick {
    reply_check check;
    void *cctx;
    int refused;
    char *problem;                  /* the first refused object's problem */
    size_t problen;
    struct policy_usage notes;      /* the used object's repairs and coercions */
};

static int pick_object(void *ctx, const struct jsonx_candidate *cand)
{
    struct pick *pk = ctx;
    struct policy_usage notes;
    char why[1024] = "";
    memset(&notes, 0, sizeof notes);
    if (cand->repairs[0]) policy_usage_note(&notes, "repaired the JSON: %s", cand->repairs);
    if (pk->check(pk->cctx, cand->obj, &notes, why, sizeof why) == 0) {
        pk->notes = notes;
        return 0;
    }
    if (pk->refused++ == 0)
        snprintf(pk->problem, pk->problen, "%s", why[0] ? why : "the reply does not have the fields asked for");
    return 1;
}

/* The role's view of the transport's failure kind (llm.h). A backend that
 * sets no kind (one filled in by other code) is classified by its return
 * code and status. */
static enum call_fail classify_call(int crc, const struct llm_reply *r)
{
    switch (r->fail) {
    case LLM_FAIL_NONE: break;
    case LLM_FAIL_CANCELLED: return CALL_FAIL_CANCELLED;
    case LLM_FAIL_CONTEXT_LENGTH: return CALL_FAIL_CONTEXT;
    case LLM_FAIL_TRANSIENT:
    case LLM_FAIL_BAD_REPLY:
    case LLM_FAIL_PROVIDER:
    case LLM_FAIL_REFUSAL: return CALL_FAIL_TRANSIENT;
    default: return llm_fail_persistent(r->fail) ? CALL_FAIL_PERSISTENT : CALL_FAIL_TRANSIENT;
    }
    switch (crc) {
    case LLM_ERR_CANCELLED: return CALL_FAIL_CANCELLED;
    case LLM_ERR_STATUS:
        return r->http_status == 408 || r->http_status == 429 || r->http_status >= 500 ? CALL_FAIL_TRANSIENT
                                                                                        : CALL_FAIL_PERSISTENT;
    case LLM_ERR_REQUEST: return CALL_FAIL_PERSISTENT;
    default: return CALL_FAIL_TRANSIENT;
    }
}

static void account(struct llm_policy *p, enum llm_role role, const struct llm_reply *r, struct policy_usage *u)
{
    llm_usage_add(&p->usage, llm_role_name(role), r);
    if (p->cfg.run_usage) llm_usage_add(p->cfg.run_usage, llm_role_name(role), r);
    if (u) {
        u->input_tokens += r->input_tokens > 0 ? r->input_tokens : 0;
        u->output_tokens += r->output_tokens > 0 ? r->output_tokens : 0;
    }
}

/* A usable reply's text goes to *reply_text (freed when NULL); the rest of
 * the reply (its reasoning) is released. Returns 0. */
static int take_reply(struct llm_reply *rep, char **reply_text)
{
    if (reply_text) *reply_text = rep->text;
    else free(rep->text);
    rep->text = NULL;
    llm_reply_free(rep);
    return 0;
}

/* The request of one attempt of role: its static text as the system
 * prompt, the messages m, structured output unless the role answers in
 * text, the answer role's reply streamed to its reader. */
static void role_request(struct llm_policy *p, enum llm_role role, const struct llm_message *m, size_t nm,
                         double temperature, int json, const char *prompt, struct llm_request *req)
{
    llm_request_init(req);
    req->system = p->system[role];
    req->messages = m;
    req->nmessages = nm;
    req->temperature = temperature;
    req->max_tokens = p->cfg.max_tokens;
    req->json_mode = json;
    if (json && p->schema[role]) {
        req->schema_name = llm_role_name(role);
        req->schema = p->schema[role];
    }
    req->tag = llm_role_name(role);
    req->cancel = p->cfg.cancel;
    req->cache_prefix = stable_prefix(p, role, prompt);
    if (role == LLM_ROLE_ANSWER) answer_stream_attach(&p->stream, req);
}

/* Sends req to role's model, timed and accounted; a call that answered
 * resets the run's count of same failures. Returns llm_chat's code. */
static int timed_chat(struct llm_policy *p, enum llm_role role, const struct llm_request *req, struct llm_reply *rep,
                      struct policy_usage *u)
{
    memset(rep, 0, sizeof *rep);
    int64_t t0 = now_ms();
    int crc = llm_chat(backend_of(p, role), req, rep, NULL);
    pthread_mutex_lock(&p->lock);
    p->model_ms += now_ms() - t0;
    p->calls++;
    if (rep->retried[0]) snprintf(p->q_last_retry, sizeof p->q_last_retry, "%s", rep->retried);
    pthread_mutex_unlock(&p->lock);
    account(p, role, rep, u);
    if (crc == LLM_OK && rep->text) {
        pthread_mutex_lock(&p->lock);
        p->answered_calls++;
        p->same_fails = 0;
        pthread_mutex_unlock(&p->lock);
    }
    return crc;
}

/* A failed call (crc, rep): err says so and *why how it failed. */
static void call_failed(struct llm_policy *p, int crc, const struct llm_reply *rep, char *err, size_t errlen,
                        enum call_fail *why)
{
    snprintf(err, errlen, "the model call failed: %s", rep->error[0] ? rep->error : "no reply text");
    *why = classify_call(crc, rep);
    /* A connection failing before any call of this run succeeded (refused,
     * reset, a reply cut short: LLM_ERR_CONNECT) is not a hiccup: a wrong
     * address, a server that is not running, or a proxy that drops its
     * replies. */
    pthread_mutex_lock(&p->lock);
    if (crc == LLM_ERR_CONNECT && p->answered_calls == 0) *why = CALL_FAIL_PERSISTENT;
    snprintf(p->q_last_error, sizeof p->q_last_error, "%s", rep->error[0] ? rep->error : "no reply text");
    /* The same failure on every call of the run, none answered (a server
     * that always refuses, always errs, always streams) will not pass by
     * asking again: after LLM_POLICY_SAME_FAILURES of them it is persistent,
     * and the search stops. */
    if (p->answered_calls == 0 && *why == CALL_FAIL_TRANSIENT) {
        if (p->same_fails && rep->fail == p->last_kind && !strcmp(p->last_fail, p->q_last_error))
            p->same_fails++;
        else
            p->same_fails = 1;
        p->last_kind = rep->fail;
        snprintf(p->last_fail, sizeof p->last_fail, "%s", p->q_last_error);
        if (p->same_fails >= LLM_POLICY_SAME_FAILURES) {
            *why = CALL_FAIL_PERSISTENT;
            size_t n = strlen(err);
            snprintf(err + n, errlen > n ? errlen - n : 0,
                     " (the same failure on all %d calls of this run so far, none answered: taken as "
                     "persistent)",
                     p->same_fails);
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* Whether a text role's reply passes tcheck; else problem says why. */
static int text_usable(text_check tcheck, void *cctx, const char *text, char *problem, size_t problen)
{
    problem[0] = 0;
    if (tcheck(cctx, text, problem, problen) == 0) return 1;
    if (!problem[0]) snprintf(problem, problen, "the reply is not an answer");
    return 0;
}

/* Whether a JSON role's reply holds an object that passes check: the first
 * one that does is the reply (its notes go to u and the log); else problem
 * names the first one's problem. */
static int json_usable(enum llm_role role, reply_check check, void *cctx, const struct llm_reply *rep,
                       struct policy_usage *u, char *problem, size_t problen)
{
    char perr[512];
    struct pick pk = {check, cctx, 0, problem, problen, {0}};
    int prc = jsonx_each_object(rep->text, strlen(rep->text), pick_object, &pk, perr, sizeof perr);
    if (prc == 0) {
        if (pk.notes.notes[0]) {
            policy_usage_note(u, "%s: %s", llm_role_name(role), pk.notes.notes);
            log_msg("llm policy: %s: %s", llm_role_name(role), pk.notes.notes);
        }
        return 1;
    }
    if (prc < 0)
        snprintf(problem, problen, "no usable JSON object in the reply: %s%s", perr,
                 rep->truncated ? " (the reply was cut at the token limit; answer more briefly)" : "");
    else if (pk.refused > 1 && strlen(problem) + 80 < problen)
        snprintf(problem + strlen(problem), problen - strlen(problem),
                 " (and none of the %d other JSON objects in the reply was usable)", pk.refused - 1);
    return 0;
}

/* The next attempt's earlier exchange: the unusable reply (capped) and the
 * feedback naming its problem and what to send instead. */
static void reask(struct llm_policy *p, const char *text, const char *problem, const char *instead, char **echo,
                  char **again)
{
    free(*echo);
    *echo = prompt_cap(text, p->cfg.caps.reply_echo, 0);
    free(*again);
    *again = xasprintf("Your reply could not be used: %s\nReply again with %s", problem, instead);
}

/*
 * One role call with structured output. The role's static text goes out as
 * the system prompt and the prompt as one user message (after
 * prior_reply/prior_feedback as an earlier exchange when given); each reply
 * is parsed (jsonx) and checked, or given whole to tcheck when the role
 * answers in text; an unusable one is sent back with the problem, up to
 * `attempts` replies. Returns 0 when a reply passed check (its text in
 * *reply_text when not NULL, caller frees), 1 when none did (the last
 * problem in problem), -1 when a call failed (err, and why in *why).
 */
int converse(struct llm_policy *p, enum llm_role role, const char *prompt, double temperature,
             int attempts, const char *prior_reply, const char *prior_feedback, reply_check check,
             text_check tcheck, void *cctx, char **reply_text, struct policy_usage *u, char *problem,
             size_t problen, char *err, size_t errlen, enum call_fail *why)
{
    *why = CALL_FAIL_TRANSIENT;
    char *echo = prior_reply ? prompt_cap(prior_reply, p->cfg.caps.reply_echo, 0) : NULL;
    char *again = prior_feedback ? xstrdup(prior_feedback) : NULL;
    int rc = 1;
    snprintf(problem, problen, "no reply");
    for (int attempt = 0; attempt < attempts; attempt++) {
        struct llm_message m[3] = {{"user", prompt}};
        size_t nm = 1;
        if (echo && again) {
            m[nm++] = (struct llm_message){"assistant", *echo ? echo : "(empty reply)"};
            m[nm++] = (struct llm_message){"user", again};
        }
        struct llm_request req;
        role_request(p, role, m, nm, temperature, tcheck == NULL, prompt, &req);
        struct llm_reply rep;
        int crc = timed_chat(p, role, &req, &rep, u);
        if (crc != LLM_OK || !rep.text) {
            call_failed(p, crc, &rep, err, errlen, why);
            llm_reply_free(&rep);
            rc = -1;
            break;
        }
        if (tcheck ? text_usable(tcheck, cctx, rep.text, problem, problen)
                   : json_usable(role, check, cctx, &rep, u, problem, problen)) {
            if (role == LLM_ROLE_ANSWER) {   /* an answer taken as it stopped at the limit says so (lp_answer) */
                pthread_mutex_lock(&p->lock);
                p->q_answer_cut = rep.truncated;
                pthread_mutex_unlock(&p->lock);
            }
            rc = take_reply(&rep, reply_text);
            break;
        }
        reask(p, rep.text, problem,
              tcheck ? "the Markdown answer only."
                     : "only the JSON object asked for above, with every field of the right type.",
              &echo, &again);
        llm_reply_free(&rep);
    }
    free(echo);
    free(again);
    return rc;
}

/* ---- the roles ---- */

/* The caps of a render once the model said the request is over its context
 * window: a quarter of each (an eighth of the trajectory, whose oldest steps
 * go first), so one shorter request has a real chance to fit. */
static struct llm_policy_caps caps_for(const struct llm_policy *p, int shrink)
{
    struct llm_policy_caps c = p->cfg.caps;
    if (shrink) {
        c.trajectory /= 8;
        c.steps /= 8;
        c.siblings /= 4;
        c.leads /= 4;
        c.report /= 4;
        c.recent /= 4;
        c.observation /= 4;
        c.raw /= 4;
        c.evidence /= 4;
        c.span /= 4;
        c.no_outline = 1;
    }
    return c;
}

/* The note of a step the fallback decided, in the node's notes and the
 * question's notes: "planning: the model call failed (...); used the offline
 * plan" or "planning reply unusable after 3 attempts: ...". */
void fallback_used(struct llm_policy *p, enum llm_role role, int call_failed, const char *problem,
                   const char *source, const char *what, struct policy_usage *u, char *note, size_t notelen)
{
    if (!source) source = p->has_fallback ? p->fallback.name : "fallback";
    if (call_failed)
        snprintf(note, notelen, "%s: the model call failed (%s); used the %s %s", llm_role_name(role), problem, source,
                 what);
    else
        snprintf(note, notelen, "%s reply unusable after %d attempts: %s; used the %s %s", llm_role_name(role),
                 p->cfg.max_attempts, problem, source, what);
    add_note(p, note);
    if (u) {
        u->fallback = 1;
        policy_usage_note(u, "%s", note);
    }
}

/* After converse returned -1 for a role: 1 when the role should take its
 * fallback decision (a transient failure, or a request still over the
 * context window after shrinking), with the reason in problem; 0 when the
 * role fails, with err and u->fail_kind set for the engine (persistent:
 * the search stops; transient without a fallback: not backed up). */
int failed_call(struct llm_policy *p, enum llm_role role, enum call_fail why, const char *cerr,
                int can_fall_back, struct policy_usage *u, char *problem, size_t problen, char *err,
                size_t errlen)
{
    snprintf(err, errlen, "%s: %s", llm_role_name(role), cerr);
    if (why == CALL_FAIL_CANCELLED) return 0;
    if (why == CALL_FAIL_PERSISTENT) {
        u->fail_kind = POLICY_FAIL_PERSISTENT;
        return 0;
    }
    if (!can_fall_back || !p->has_fallback) {
        u->fail_kind = why == CALL_FAIL_TRANSIENT ? POLICY_FAIL_TRANSIENT : POLICY_FAIL_NONE;
        return 0;
    }
    snprintf(problem, problen, "%s", cerr);
    return 1;
}

/* Renders and sends a role's request (converse). When the model says the
 * request is over its context window, it is rendered once more with the caps
 * cut (caps_for) and sent again, noted on the node. A request over a window
 * the backend knows already (llm_backend_room) is rendered short at once,
 * and one surely over it even so is not sent (it would be refused, or cut
 * by the server and answered from its tail): the call fails as over the
 * window and the role's fallback decides. Returns converse's code, or -2
 * when rendering failed (err). */
int ask_role(struct llm_policy *p, struct role_call *rc, role_render render, const void *rctx,
             struct policy_usage *u, char *err, size_t errlen)
{
    int r = -1;
    rc->why = CALL_FAIL_TRANSIENT;
    const struct llm_backend *b = backend_of(p, rc->role);
    for (int shrink = 0; shrink < 2; shrink++) {
        struct llm_policy_caps c = caps_for(p, shrink);
        size_t room = llm_backend_room(b);
        /* a window learnt from a refusal is smaller than the profile said:
         * the path needs the room, so the outline is left out */
        if (room) c.no_outline = 1;
        free(rc->prompt);
        rc->prompt = render(p, rctx, &c, err, errlen);
        if (!rc->prompt) return -2;
        /* over a window learnt already: the shorter request at once, and
         * none when even that is over it */
        size_t len = strlen(rc->prompt) + (p->system[rc->role] ? strlen(p->system[rc->role]) : 0);
        if (room && len > room && !shrink) {
            policy_usage_note(u, "%s: the request was over the model's context window; sent a shorter one",
                              llm_role_name(rc->role));
            continue;
        }
        /* room counts 4 bytes a token, which English prose can pass: only a
         * request an eighth over it (4.5 bytes a token) is surely over */
        if (room && len > room + room / 8) {
            snprintf(rc->cerr, sizeof rc->cerr, "even shortened, the request (%zu bytes) is over the model's "
                     "context window (about %zu bytes); not sent", len, room);
            rc->why = CALL_FAIL_CONTEXT;
            r = -1;
            break;
        }
        r = converse(p, rc->role, rc->prompt, rc->temperature, p->cfg.max_attempts, NULL, NULL, rc->check, rc->tcheck,
                     rc->cctx, rc->reply_text, u, rc->problem, sizeof rc->problem, rc->cerr, sizeof rc->cerr, &rc->why);
        if (r >= 0 || rc->why != CALL_FAIL_CONTEXT || shrink) break;
        policy_usage_note(u, "%s: the request was over the model's context window; sent a shorter one",
                          llm_role_name(rc->role));
    }
    return r;
}

void role_call_done(struct role_call *rc)
{
    free(rc->prompt);
    rc->prompt = NULL;
}

/* A role's turn, the part every role shares: asks the model (ask_role) and,
 * when no reply passed, decides between failing and the fallback
 * (failed_call), noting a fallback (fallback_used: the note, naming `what`
 * the fallback decides, goes in note). Returns 0 when a reply passed the
 * role's check, 1 when the role's fallback is to decide, -1 when the role
 * fails (err). */
int run_role(struct llm_policy *p, struct role_call *call, role_render render, const void *rctx, const char *what,
             struct policy_usage *u, char *note, size_t notelen, char *err, size_t errlen)
{
    int rc = ask_role(p, call, render, rctx, u, err, errlen);
    role_call_done(call);
    if (rc == -2) return -1;
    if (rc == 0) return 0;
    if (rc < 0 && !failed_call(p, call->role, call->why, call->cerr, 1, u, call->problem, sizeof call->problem, err,
                               errlen))
        return -1;
    fallback_used(p, call->role, rc < 0, call->problem, NULL, what, u, note, notelen);
    return 1;
}

/* The fallback asked by run_role failed too (ferr): -1 with both problems in err. */
int fallback_failed(const struct llm_policy *p, const struct role_call *call, const char *what, const char *ferr,
                    char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s; the %s %s failed too: %s", llm_role_name(call->role), call->problem,
             p->fallback.name, what, ferr);
    return -1;
}
