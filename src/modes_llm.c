/*
 * modes_llm: direct prompting and the two RAG baselines on a chat model (see
 * modes_llm.h for what each mode shows the model and how its citations are
 * checked). This file renders the retrieved spans into the prompt, talks to
 * the backend, re-asks once for bad citations and fills the engine's result.
 */
#include "modes_llm.h"
#include "policy_llm.h"
#include "prompt.h"
#include "qparse.h"
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SPAN_ROOM 200   /* below this many bytes left, no further span is shown */
#define RANGES_CAP 1200     /* valid spans listed in a re-ask */

static const char *const vars_direct[] = {"question", NULL};
static const char *const vars_rag[] = {"question", "retrieval", "context", NULL};

struct modes_llm {
    struct llm_backend *backend;   /* borrowed */
    struct prompt *direct, *rag;
};

struct modes_llm *modes_llm_new(struct llm_backend *backend, char *err, size_t errlen)
{
    if (!backend) {
        snprintf(err, errlen, "the model-backed modes need a chat backend; configure a model (--model, --api-base)");
        return NULL;
    }
    struct modes_llm *m = xcalloc(1, sizeof *m);
    m->backend = backend;
    if (!(m->direct = prompt_load("direct", NULL, 0, vars_direct, err, errlen)) ||
        !(m->rag = prompt_load("rag", NULL, 0, vars_rag, err, errlen))) {
        modes_llm_free(m);
        return NULL;
    }
    return m;
}

void modes_llm_free(struct modes_llm *m)
{
    if (!m) return;
    prompt_free(m->direct);
    prompt_free(m->rag);
    free(m);
}

/* ---- the context ---- */

/* label on one line, at most cap bytes */
static void add_label(struct buf *b, const char *label, size_t cap)
{
    if (!label || !*label) return;
    buf_adds(b, "  ");
    size_t n = 0;
    for (const char *s = label; *s && n < cap; s++, n++) buf_addc(b, *s == '\n' || *s == '\t' || *s == '\r' ? ' ' : *s);
}

/* One span under cap bytes into b; the range shown goes to shown. */
static void render_span(struct buf *b, const struct evidence_span *sp, size_t cap, struct evidence *shown)
{
    struct buf body = BUF_INIT;
    int end = sp->end_line;
    if (sp->elided || !sp->text || !*sp->text) {
        char *t = prompt_cap(sp->text && *sp->text ? sp->text : "(no text)", cap, 0);
        buf_adds(&body, t);
        free(t);
        if (!str_ends(buf_str(&body), "\n")) buf_addc(&body, '\n');
    } else {
        const char *s = sp->text;
        int line = sp->start_line;
        end = sp->start_line - 1;
        while (*s && line <= sp->end_line) {
            const char *nl = strchr(s, '\n');
            size_t len = nl ? (size_t)(nl - s) : strlen(s);
            size_t before = body.len;
            buf_printf(&body, "%5d  %.*s\n", line, (int)len, s);
            if (body.len > cap && line > sp->start_line) {   /* the first line always goes in */
                body.len = before;
                body.data[before] = 0;
                break;
            }
            end = line++;
            s += len + (nl ? 1 : 0);
        }
        if (end < sp->start_line) end = sp->start_line;
    }
    buf_printf(b, "%s:%d-%d", sp->path, sp->start_line, end);
    add_label(b, sp->label, 160);
    buf_addc(b, '\n');
    buf_add(b, body.data ? body.data : "", body.len);
    buf_addc(b, '\n');
    buf_free(&body);
    struct evidence_span *k;
    if (sp->elided || end == sp->end_line) {
        k = evidence_add(shown, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, sp->score);
    } else {
        char *t = evidence_span_lines(sp, sp->start_line, end);
        k = evidence_add(shown, sp->path, sp->start_line, end, t, sp->label, sp->score);
        free(t);
    }
    k->elided = sp->elided;
}

/* The context block for spans: each span's header `path:start-end  label`
 * and its numbered lines, under the caps above (span_cap per span, at most
 * total bytes in all); the ranges actually shown are appended to shown (with
 * the text shown). Caller frees. */
static char *modes_llm_context(const struct evidence *spans, size_t span_cap, size_t total, struct evidence *shown)
{
    struct buf b = BUF_INIT;
    for (size_t i = 0; spans && i < spans->n; i++) {
        if (b.len + MIN_SPAN_ROOM > total) break;
        size_t room = total - b.len - MIN_SPAN_ROOM / 2;   /* the header and label fit in the rest */
        render_span(&b, &spans->v[i], room < span_cap ? room : span_cap, shown);
    }
    if (!b.len) buf_adds(&b, "(nothing was retrieved)\n");
    return buf_take(&b);
}

/* ---- talking to the model ---- */

/* One call at temperature 0; *text is the reply, trimmed and capped (caller
 * frees). 0, or -1 with err. Tokens go to r whatever happens. */
static int chat(struct modes_llm *m, const char *tag, const struct llm_message *msgs, size_t n, struct engine_result *r,
                char **text, char *err, size_t errlen)
{
    struct llm_request req;
    llm_request_init(&req);
    req.messages = msgs;
    req.nmessages = n;
    req.temperature = LLM_POLICY_ANSWER_TEMPERATURE;
    req.tag = tag;
    struct llm_reply rep;
    memset(&rep, 0, sizeof rep);
    int rc = llm_chat(m->backend, &req, &rep, NULL);
    r->tokens_in += rep.input_tokens > 0 ? rep.input_tokens : 0;
    r->tokens_out += rep.output_tokens > 0 ? rep.output_tokens : 0;
    if (rc != LLM_OK || !rep.text) {
        snprintf(err, errlen, "the model call failed: %s", rep.error[0] ? rep.error : "the reply has no text");
        llm_reply_free(&rep);
        return -1;
    }
    const char *s = rep.text;
    while (isspace((unsigned char)*s)) s++;
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1])) len--;
    if (!len) {
        snprintf(err, errlen, "the model returned an empty answer%s",
                 rep.truncated ? " (it stopped at the token limit; raise max_tokens)" : "");
        llm_reply_free(&rep);
        return -1;
    }
    char *t = xstrndup(s, len);
    *text = prompt_cap(t, MODES_LLM_ANSWER_MAX, 0);
    free(t);
    if (rep.truncated) log_msg("modes: the %s answer stopped at the token limit", tag);
    llm_reply_free(&rep);
    return 0;
}

/* ---- citations ---- */

static void list_ranges(struct buf *b, const struct evidence *ev, size_t cap)
{
    size_t start = b->len;
    for (size_t i = 0; i < ev->n && b->len - start < cap; i++)
        buf_printf(b, "%s%s:%d-%d", i ? ", " : "", ev->v[i].path, ev->v[i].start_line, ev->v[i].end_line);
}

/* The citations of answer split into those inside shown and the others. */
static void split_cites(const char *answer, const struct evidence *shown, struct evidence *valid,
                        struct evidence *invalid)
{
    struct evidence all = EVIDENCE_INIT;
    llm_parse_citations(answer, &all);
    for (size_t i = 0; i < all.n; i++) {
        const struct evidence_span *c = &all.v[i];
        evidence_add(evidence_covers(shown, c->path, c->start_line, c->end_line) ? valid : invalid, c->path,
                     c->start_line, c->end_line, NULL, NULL, 0);
    }
    evidence_free(&all);
}

/* What is wrong with answer, for a re-ask ("" when nothing); *nvalid counts
 * its valid citations. */
static char *problems(const char *answer, const struct evidence *shown, const char *qtype, int *nvalid)
{
    struct evidence valid = EVIDENCE_INIT, invalid = EVIDENCE_INIT;
    split_cites(answer, shown, &valid, &invalid);
    *nvalid = (int)valid.n;
    struct buf b = BUF_INIT;
    if (invalid.n) {
        buf_adds(&b, "These citations match no span you were shown: ");
        list_ranges(&b, &invalid, 400);
        buf_adds(&b, ". ");
    }
    if (shown->n && !valid.n) buf_adds(&b, "The answer must cite at least one of the spans shown. ");
    char why[256];
    if (llm_answer_misses_type(qtype, answer, (int)valid.n, why, sizeof why))
        buf_printf(&b, "It does not address the question: %s. ", why);
    if (b.len && shown->n) {
        buf_adds(&b, "The spans you may cite (or sub-ranges of them): ");
        list_ranges(&b, shown, RANGES_CAP);
        buf_adds(&b, ".");
    }
    if (b.len) buf_adds(&b, "\nWrite the whole answer again, in Markdown.");
    evidence_free(&valid);
    evidence_free(&invalid);
    return buf_take(&b);
}

/* The covering span of a citation, a verbatim one preferred. */
static const struct evidence_span *cover(const struct evidence *ev, const char *path, int a, int z)
{
    const struct evidence_span *best = NULL;
    for (size_t i = 0; i < ev->n; i++) {
        const struct evidence_span *sp = &ev->v[i];
        if (strcmp(sp->path, path) || sp->start_line > a || z > sp->end_line) continue;
        if (!best || (best->elided && !sp->elided)) best = sp;
    }
    return best;
}

/* ---- the modes ---- */

static const char *qtype_of(const char *question, struct qparse *q, int *have)
{
    char err[256];
    *have = qparse_question(question, q, err, sizeof err) == 0;
    if (!*have) qparse_free(q);
    return *have && q->type != QTYPE_OTHER ? qparse_type_name(q->type) : "other";
}

static int answer_direct(struct modes_llm *m, struct engine_result *r, char *err, size_t errlen)
{
    struct prompt_var v[] = {{"question", r->question, 4000}};
    char *prompt = prompt_render(m->direct, v, ARRAY_LEN(v), err, errlen);
    if (!prompt) return -1;
    struct llm_message msg = {"user", prompt};
    char *text = NULL;
    int rc = chat(m, "direct", &msg, 1, r, &text, err, errlen);
    free(prompt);
    if (rc) return -1;
    struct evidence none = EVIDENCE_INIT;
    int removed = 0;
    char *md = llm_strip_citations(text, &none, &removed);
    free(text);
    struct buf b = BUF_INIT;
    buf_adds(&b, md);
    buf_adds(&b, "\n\n_Direct prompting: the model answered from its own knowledge, without any repository context, "
                 "so nothing is cited.");
    if (removed)
        buf_printf(&b, " %d file:line reference%s it gave could not have been read and %s removed.", removed,
                   removed == 1 ? "" : "s", removed == 1 ? "was" : "were");
    buf_adds(&b, "_\n");
    free(md);
    r->answer = buf_take(&b);
    return 0;
}

static int answer_rag(struct modes_llm *m, enum engine_mode mode, struct engine_result *r, char *err, size_t errlen)
{
    int windows = mode == ENGINE_RAG_WINDOW;
    struct evidence shown = EVIDENCE_INIT;
    char *context = modes_llm_context(&r->evidence, windows ? MODES_LLM_WINDOW_BYTES : MODES_LLM_SPAN_BYTES,
                                      MODES_LLM_CONTEXT_BYTES, &shown);
    char retrieval[160];
    if (windows)
        snprintf(retrieval, sizeof retrieval, "the %zu best windows of %d lines (%d overlapping) by BM25 over the "
                 "question's terms", shown.n, ENGINE_WINDOW_LINES, ENGINE_WINDOW_OVERLAP);
    else
        snprintf(retrieval, sizeof retrieval, "the %zu best function and class chunks by semantic search", shown.n);
    struct prompt_var v[] = {{"question", r->question, 4000}, {"retrieval", retrieval, 0}, {"context", context, 0}};
    char *prompt = prompt_render(m->rag, v, ARRAY_LEN(v), err, errlen);
    free(context);
    if (!prompt) {
        evidence_free(&shown);
        return -1;
    }
    const char *tag = windows ? "rag-window" : "rag-function";
    struct qparse q;
    int have_q = 0;
    const char *qtype = qtype_of(r->question, &q, &have_q);
    struct llm_message msgs[3] = {{"user", prompt}};
    char *text = NULL;
    int rc = chat(m, tag, msgs, 1, r, &text, err, errlen);
    if (rc == 0) {
        int nvalid = 0;
        char *problem = problems(text, &shown, qtype, &nvalid);
        if (*problem) {   /* one re-ask, the first reply and what is wrong with it in the exchange */
            msgs[1] = (struct llm_message){"assistant", text};
            msgs[2] = (struct llm_message){"user", problem};
            char *again = NULL, e2[512];
            if (chat(m, tag, msgs, 3, r, &again, e2, sizeof e2) == 0) {
                int nvalid2 = 0;
                char *p2 = problems(again, &shown, qtype, &nvalid2);
                if (nvalid2 > 0 || nvalid == 0) {
                    free(text);
                    text = again;
                    again = NULL;
                }
                free(p2);
            } else {
                log_msg("modes: %s answer re-ask failed: %s; kept the first answer", tag, e2);
            }
            free(again);
        }
        free(problem);
        int removed = 0;
        char *md = llm_strip_citations(text, &shown, &removed);
        if (removed) {
            char *m2 = xasprintf("%s\n\n_%d citation%s outside the retrieved spans %s removed._\n", md, removed,
                                 removed == 1 ? "" : "s", removed == 1 ? "was" : "were");
            free(md);
            md = m2;
            log_msg("modes: %s answer: removed %d citation%s outside the retrieved spans", tag, removed,
                    removed == 1 ? "" : "s");
        }
        struct evidence valid = EVIDENCE_INIT, invalid = EVIDENCE_INIT;
        split_cites(md, &shown, &valid, &invalid);
        for (size_t i = 0; i < valid.n; i++) {
            const struct evidence_span *c = &valid.v[i];
            if (evidence_covers(&r->cites, c->path, c->start_line, c->end_line)) continue;
            const struct evidence_span *sp = cover(&shown, c->path, c->start_line, c->end_line);
            if (sp->elided) {
                evidence_add(&r->cites, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, sp->score)
                    ->elided = 1;
            } else {
                char *t = evidence_span_lines(sp, c->start_line, c->end_line);
                evidence_add(&r->cites, c->path, c->start_line, c->end_line, t, sp->label, sp->score);
                free(t);
            }
        }
        evidence_free(&valid);
        evidence_free(&invalid);
        r->answer = md;
    }
    free(text);
    free(prompt);
    if (have_q) qparse_free(&q);
    evidence_free(&shown);
    return rc;
}

int modes_llm_answer(struct modes_llm *m, enum engine_mode mode, struct engine_result *r)
{
    char err[768] = "";
    const char *name = r->mode ? r->mode : "baseline";   /* the engine's name for the mode */
    int rc;
    switch (mode) {
    case ENGINE_DIRECT: rc = answer_direct(m, r, err, sizeof err); break;
    case ENGINE_RAG_FUNCTION:
    case ENGINE_RAG_WINDOW: rc = answer_rag(m, mode, r, err, sizeof err); break;
    default:
        snprintf(err, sizeof err, "mode %s is not a baseline", name);
        rc = -1;
    }
    if (rc) {
        free(r->error);
        r->error = xasprintf("%s: %s", name, err);
    }
    return rc;
}
