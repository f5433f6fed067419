/*
 * policy_llm_answer: the answer role. The evidence of the trajectory, ranked,
 * goes to the model; the answer is re-asked once for its problems (citations
 * outside the evidence, none, the wrong question type), and what cites no
 * evidence is removed.
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

/* ---- answer synthesis ---- */

struct answer_ctx {
    char *answer;
    int unwrapped;   /* answer is the "answer" string of a JSON object in the reply */
};

static void count_cite(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z)
{
    (void)start, (void)end, (void)path, (void)plen, (void)a, (void)z;
    ++*(int *)ctx;
}

/* The text of s[0, n) cites a span (path:line). */
static int cites_any(const char *s, size_t n)
{
    char *t = xstrndup(s, n);
    int k = 0;
    scan_citations(t, count_cite, &k);
    free(t);
    return k > 0;
}

struct answer_object {
    const char *text;
    size_t n;
    char *answer;
};

/* An object with an "answer" string is the reply's answer when nothing
 * around it cites code: the words around it are a wrapper ("Sure! Here is
 * my reply:", a ```json fence), never part of the answer. An answer in
 * Markdown that shows such an object as an example cites its code outside
 * it, and is kept whole. */
static int take_answer_object(void *ctx, const struct jsonx_candidate *c)
{
    struct answer_object *ao = ctx;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->obj, "answer");
    if (!cJSON_IsString(a) || !a->valuestring[0]) return 1;
    if (cites_any(ao->text, c->start) || cites_any(ao->text + c->start + c->len, ao->n - c->start - c->len)) return 1;
    ao->answer = xstrdup(a->valuestring);
    return 0;
}

/* The answer role replies in Markdown (its thinking, if any, was taken out
 * by the transport, llm.h). A reply that holds a JSON object with an
 * "answer" string (what models trained on JSON tasks send anyway, small
 * open ones in a ```json fence between words of their own, with a trailing
 * comma) gives that string (take_answer_object); a fence around a whole
 * Markdown reply is taken off. */
static int check_answer_text(void *ctx, const char *text, char *err, size_t errlen)
{
    struct answer_ctx *ac = ctx;
    const char *t = text + strspn(text, " \t\r\n");
    char *md = NULL;
    if (strstr(t, "\"answer\"")) {
        struct answer_object ao = {t, strlen(t), NULL};
        char jerr[256];
        if (jsonx_each_object(t, ao.n, take_answer_object, &ao, jerr, sizeof jerr) == 0) md = ao.answer;
    }
    ac->unwrapped = md != NULL;
    if (!md && (str_starts(t, "```markdown\n") || str_starts(t, "```md\n") || str_starts(t, "```\n"))) {
        const char *body = strchr(t, '\n') + 1;
        const char *end = body + strlen(body);
        while (end > body && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r')) end--;
        if (end - body >= 3 && strncmp(end - 3, "```", 3) == 0) md = xstrndup(body, (size_t)(end - 3 - body));
    }
    if (!md) md = xstrdup(t);
    size_t len = strlen(md);
    while (len && (md[len - 1] == '\n' || md[len - 1] == ' ' || md[len - 1] == '\r')) md[--len] = 0;
    if (!len) {
        free(md);
        snprintf(err, errlen, "the reply is empty");
        return -1;
    }
    free(ac->answer);
    ac->answer = prompt_cap(md, MAX_ANSWER, 0);
    free(md);
    return 0;
}

/* Every distinct span on the trajectory, root first. */
void trajectory_spans(const struct mcts_tree *t, const int *ids, size_t nids, struct evidence *out)
{
    for (size_t i = 0; i < nids; i++) {
        const struct mcts_node *n = mcts_node(t, ids[i]);
        for (size_t k = 0; n && k < n->obs.n; k++) {
            const struct evidence_span *sp = &n->obs.v[k];
            if (evidence_covers(out, sp->path, sp->start_line, sp->end_line)) continue;
            evidence_add(out, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, sp->score)->elided =
                sp->elided;
        }
    }
}

struct cite_check {
    const struct evidence *seen;
    struct evidence valid, invalid;
};

static void classify_cite(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z)
{
    (void)start;
    (void)end;
    struct cite_check *cc = ctx;
    char *p = xstrndup(path, plen);
    struct evidence *to = evidence_covers(cc->seen, p, a, z) ? &cc->valid : &cc->invalid;
    if (!has_exact(to, p, a, z)) evidence_add(to, p, a, z, NULL, NULL, 0);
    free(p);
}

static const char *type_hint(const char *qtype)
{
    if (streq(qtype, "where")) return "A where-question: give the location first (file and lines), then what is there.";
    if (streq(qtype, "why")) return "A why-question: state the reason or purpose, backed by the code and its comments.";
    if (streq(qtype, "how")) return "A how-question: describe the mechanism step by step, following the calls.";
    if (streq(qtype, "what")) return "A what-question: say what it is or does, from its definition and documentation.";
    return "";
}

/* The problems of an answer for a re-ask ("" when none). */
static void answer_problems(struct llm_policy *p, const char *answer, const struct evidence *seen, struct buf *msg,
                            int *ninvalid, int *nvalid)
{
    struct cite_check cc = {seen, EVIDENCE_INIT, EVIDENCE_INIT};
    scan_citations(answer, classify_cite, &cc);
    *ninvalid = (int)cc.invalid.n;
    *nvalid = (int)cc.valid.n;
    if (cc.invalid.n) {
        buf_adds(msg, "These citations match no evidence you were shown: ");
        list_ranges(msg, &cc.invalid, 400);
        buf_adds(msg, ". ");
    }
    if (seen->n && cc.valid.n == 0) buf_adds(msg, "The answer must cite at least one span of the evidence. ");
    char why[256];
    if (llm_answer_misses_type(qtype_name(p), answer, (int)cc.valid.n, why, sizeof why))
        buf_printf(msg, "It does not address the question: %s. ", why);
    if (msg->len && seen->n) {
        struct buf ranges = BUF_INIT;
        list_ranges(&ranges, seen, 1200);
        buf_printf(msg, "The spans you may cite (or sub-ranges of them): %s.", buf_str(&ranges));
        buf_free(&ranges);
    }
    evidence_free(&cc.valid);
    evidence_free(&cc.invalid);
}

/* Every distinct span of the trajectory with a rank: its relevance to the
 * question (curate.h) plus the value the evaluator gave the step that found
 * it, so decisive evidence found late is not lost behind early noise. */
struct ranked_span {
    const struct evidence_span *sp;
    double rank;
    size_t order;
};

static int by_rank(const void *a, const void *b)
{
    const struct ranked_span *x = a, *y = b;
    if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The evidence text for the answer: whole spans, best ranked first, until
 * cap; the spans left out are listed by header, so the model knows they
 * exist, and *left says how many. */
static char *ranked_evidence(const struct llm_policy *p, const struct mcts_tree *t, const int *ids, size_t nids,
                             const struct evidence *seen, size_t cap, size_t span_cap, size_t *left)
{
    struct ranked_span *r = xcalloc(seen->n + 1, sizeof *r);
    for (size_t i = 0; i < seen->n; i++) {
        const struct evidence_span *sp = &seen->v[i];
        double value = 0;
        for (size_t k = 0; k < nids; k++) {
            const struct mcts_node *n = mcts_node(t, ids[k]);
            if (n && n->has_value && evidence_covers(&n->obs, sp->path, sp->start_line, sp->end_line) &&
                n->value > value)
                value = n->value;
        }
        r[i] = (struct ranked_span){sp, curate_relevance(p->question ? p->question : "", sp) + value / 25.0, i};
    }
    qsort(r, seen->n, sizeof *r, by_rank);
    struct buf b = BUF_INIT, rest = BUF_INIT;
    *left = 0;
    for (size_t i = 0; i < seen->n; i++) {
        struct buf one = BUF_INIT;
        numbered_span(&one, r[i].sp, span_cap);
        if (b.len + one.len <= cap || b.len == 0) {
            buf_add(&b, one.data ? one.data : "", one.len);
        } else {
            buf_printf(&rest, "- %s:%d-%d\n", r[i].sp->path, r[i].sp->start_line, r[i].sp->end_line);
            (*left)++;
        }
        buf_free(&one);
    }
    if (!b.len) buf_adds(&b, "(no evidence was gathered)");
    if (rest.len) {
        buf_printf(&b, "\nAlso read, not shown for lack of room (cite them only by what the steps say):\n%s",
                   buf_str(&rest));
    }
    buf_free(&rest);
    free(r);
    return buf_take(&b);
}

struct answer_at {
    const struct mcts_tree *t;
    const int *ids;
    size_t nids;
    const struct evidence *seen;
};

static char *render_answer(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                           size_t errlen)
{
    const struct answer_at *at = ctx;
    size_t left = 0;
    char *evtext = ranked_evidence(p, at->t, at->ids, at->nids, at->seen, c->evidence, c->span, &left);
    char *traj = trajectory_text(at->t, at->nids ? at->ids[at->nids - 1] : 0, 1, c->steps);
    char note[96] = " (best ranked first)";
    if (left) snprintf(note, sizeof note, " (best ranked first; %zu more listed by header at the end)", left);
    const char *qt = qtype_name(p);
    struct prompt_var v[] = {{"question", at->t->question, 2000}, {"qtype", qt, 0}, {"type_hint", type_hint(qt), 0},
                             {"trajectory", traj, 0}, {"evidence", evtext, 0}, {"evidence_note", note, 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_ANSWER, v, ARRAY_LEN(v), err, errlen);
    free(traj);
    free(evtext);
    return prompt;
}

/* The answer as said (malloc'd): its citations that match no evidence on
 * the trajectory removed, and a line for each thing the reader must know:
 * citations removed, a reply cut at the model's output limit (cut:
 * finish_reason "length", stop_reason "max_tokens"). */
static char *answer_said(struct llm_policy *p, const char *answer, const struct evidence *seen, int cut)
{
    int removed = 0;
    char *md = llm_strip_citations(answer, seen, &removed);
    if (removed) {
        char *m2 = xasprintf("%s\n\n_%d citation%s that matched no evidence on the trajectory %s removed._\n", md,
                             removed, removed == 1 ? "" : "s", removed == 1 ? "was" : "were");
        free(md);
        md = m2;
        char note[200];
        snprintf(note, sizeof note, "answer: removed %d citation%s outside the evidence", removed,
                 removed == 1 ? "" : "s");
        add_note(p, note);
    }
    if (cut) {
        char *m3 = xasprintf("%s\n\n_The model stopped at its output limit: this answer is cut short (raise "
                             "max_tokens for a whole one)._\n", md);
        free(md);
        md = m3;
        add_note(p, "answer: the reply stopped at the model's output limit; the answer is cut short");
    }
    return md;
}

int lp_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
              struct policy_usage *u, char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    struct evidence seen = EVIDENCE_INIT;
    trajectory_spans(t, ids, nids, &seen);
    struct answer_ctx ac = {NULL};
    char *first_reply = NULL;
    struct answer_at at = {t, ids, nids, &seen};
    struct role_call call = {.role = LLM_ROLE_ANSWER, .temperature = p->cfg.answer_temperature,
                             .tcheck = check_answer_text, .cctx = &ac, .reply_text = &first_reply};
    int rc = ask_role(p, &call, render_answer, &at, u, err, errlen);
    if (rc == -1 && call.why == CALL_FAIL_TRANSIENT) {
        /* The answer is the one call whose fallback costs the most: after the
         * client's own retries failed, it is asked once more. */
        policy_usage_note(u, "answer: the model call failed (%s); asked once more", call.cerr);
        rc = ask_role(p, &call, render_answer, &at, u, err, errlen);
    }
    if (rc == -2 || (rc == -1 && answer_stream_stopped(&p->stream))) {
        /* rendering failed, or the reader stopped the answer: what it got is kept */
        if (rc == -1) answer_stream_keep(&p->stream, &seen, out, u);
        role_call_done(&call);
        evidence_free(&seen);
        return rc == -1 ? 0 : -1;
    }
    const char *prompt = call.prompt;
    char *problem = call.problem;
    const size_t problem_size = sizeof call.problem;
    if (rc == 0) {
        pthread_mutex_lock(&p->lock);
        int cut = p->q_answer_cut;   /* of the reply taken; a re-ask's answer, kept, brings its own */
        pthread_mutex_unlock(&p->lock);
        struct buf msg = BUF_INIT;
        int ninvalid = 0, nvalid = 0;
        answer_problems(p, ac.answer, &seen, &msg, &ninvalid, &nvalid);
        if (msg.len) {   /* one re-ask for the content */
            struct answer_ctx ac2 = {NULL};
            char *feedback = xasprintf("%s\nReply again with the Markdown answer only.", buf_str(&msg));
            char p2[1024], e2[768];
            enum call_fail why2;
            int rc2 = converse(p, LLM_ROLE_ANSWER, prompt, p->cfg.answer_temperature, 1, first_reply, feedback, NULL,
                               check_answer_text, &ac2, NULL, u, p2, sizeof p2, e2, sizeof e2, &why2);
            free(feedback);
            if (rc2 == 0) {
                struct buf msg2 = BUF_INIT;
                int ni2 = 0, nv2 = 0;
                answer_problems(p, ac2.answer, &seen, &msg2, &ni2, &nv2);
                /* Keep the second answer unless it lost every valid citation the first had. */
                if (nv2 > 0 || nvalid == 0) {
                    free(ac.answer);
                    ac.answer = ac2.answer;
                    ac.unwrapped = ac2.unwrapped;
                    ac2.answer = NULL;
                    pthread_mutex_lock(&p->lock);
                    cut = p->q_answer_cut;
                    pthread_mutex_unlock(&p->lock);
                }
                buf_free(&msg2);
            } else {
                char note[1200];
                snprintf(note, sizeof note, "answer re-ask %s: %s; kept the first answer",
                         rc2 < 0 ? "failed" : "unusable", rc2 < 0 ? e2 : p2);
                add_note(p, note);
            }
            free(ac2.answer);
        }
        buf_free(&msg);
        char *md = answer_said(p, ac.answer, &seen, cut);
        struct cite_check cc = {&seen, EVIDENCE_INIT, EVIDENCE_INIT};
        scan_citations(md, classify_cite, &cc);
        out->markdown = md;
        out->unwrapped = ac.unwrapped;
        evidence_copy(&out->cites, &cc.valid);
        evidence_free(&cc.valid);
        evidence_free(&cc.invalid);
    }
    free(first_reply);
    free(ac.answer);
    role_call_done(&call);
    evidence_free(&seen);
    if (rc == 0) return 0;
    /* Whatever the failure, the fallback's answer from the evidence read is
     * better than none (a persistent failure still stops the search). */
    if (rc < 0 && call.why == CALL_FAIL_PERSISTENT && p->has_fallback) call.why = CALL_FAIL_TRANSIENT;
    if (rc < 0 && !failed_call(p, LLM_ROLE_ANSWER, call.why, call.cerr, 1, u, problem, problem_size, err, errlen))
        return -1;
    char note[1400];
    fallback_used(p, LLM_ROLE_ANSWER, rc < 0, problem, NULL, "answer", u, note, sizeof note);
    pthread_mutex_lock(&p->lock);
    p->q_answer_fallback = 1;
    pthread_mutex_unlock(&p->lock);
    if (!p->has_fallback || !p->fallback.answer) {
        snprintf(err, errlen, "%s", note);
        return -1;
    }
    char ferr[512] = "";
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.answer(p->fallback.ctx, t, ids, nids, out, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        snprintf(err, errlen, "answer: %s; the %s answer failed too: %s", problem, p->fallback.name, ferr);
        return -1;
    }
    out->written_by = p->fallback.name;
    return 0;
}
