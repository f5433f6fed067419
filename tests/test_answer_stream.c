/* Tests for the answer role's text on its way to its reader
 * (policy.set_answer_sink, answer_stream.h), against a backend double that
 * hands its reply in pieces to llm_request.on_delta as a streaming client
 * does and stops when the reader asks: the pieces reach the sink in order;
 * a re-asked answer is announced as written again; a stopped answer keeps
 * what arrived with its verified citations, a citation cut off by the stop
 * and an invented one removed, marked as stopped, with no fallback answer
 * and no further call; the JSON roles get no reader; without a sink nothing
 * is attached; the offline policy has no set_answer_sink. */
#include "tap.h"
#include "llm.h"
#include "mcts.h"
#include "policy_llm.h"
#include "policy_offline.h"
#include "policy_tree.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---- the backend double: each call replies with the next script's pieces ---- */

struct script {
    const char *pieces[8];   /* NULL-terminated; "\x02" stands for a reset */
};

static const struct script *scripts;
static int nscripts, ncalls, nattached;

static int dbl_chat(struct llm_backend *b, const struct llm_request *req, struct llm_reply *rep)
{
    (void)b;
    memset(rep, 0, sizeof *rep);
    const struct script *s = &scripts[ncalls < nscripts ? ncalls : nscripts - 1];
    ncalls++;
    nattached += req->on_delta != NULL;
    struct buf text = BUF_INIT;
    for (int i = 0; s->pieces[i]; i++) {
        int reset = !strcmp(s->pieces[i], "\x02");
        if (reset) buf_reset(&text);
        else buf_adds(&text, s->pieces[i]);
        if (req->on_delta && req->on_delta(req->delta_ud, reset ? LLM_DELTA_RESET : LLM_DELTA_TEXT,
                                           reset ? NULL : s->pieces[i], reset ? 0 : strlen(s->pieces[i]))) {
            rep->stopped = 1;
            rep->fail = LLM_FAIL_CANCELLED;
            snprintf(rep->error, sizeof rep->error, "stopped by the reader");
            rep->text = buf_take(&text);
            return LLM_ERR_CANCELLED;
        }
    }
    rep->text = buf_take(&text);
    rep->output_tokens = 10;
    return LLM_OK;
}

static const char *dbl_name(const struct llm_backend *b)
{
    (void)b;
    return "double";
}

static void dbl_free(struct llm_backend *b) { (void)b; }

static struct llm_backend dbl = {dbl_chat, dbl_name, dbl_free, NULL, NULL};

/* ---- the reader: records what it got, stops after stop_after text pieces ---- */

struct reader {
    struct buf log;   /* "T:piece|", "R|" for a reset */
    int texts, stop_after;
};

static int sink(void *ud, int kind, const char *text, size_t len)
{
    struct reader *r = ud;
    if (kind == 2) buf_adds(&r->log, "R|");
    else buf_printf(&r->log, "%c:%.*s|", kind ? 'r' : 'T', (int)len, text);
    if (kind == 0) r->texts++;
    return r->stop_after && r->texts >= r->stop_after;
}

/* ---- a fallback that counts its answers ---- */

static int fb_answers;

static int fb_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
                     struct policy_usage *u, char *err, size_t errlen)
{
    (void)ctx; (void)t; (void)ids; (void)nids; (void)u; (void)err; (void)errlen;
    fb_answers++;
    out->markdown = xstrdup("fallback answer");
    return 0;
}

static struct policy fbpol = {.name = "testfb", .answer = fb_answer};

static struct mcts_tree *mk_tree(void)
{
    struct mcts_tree *t = mcts_new("Where is the view function called?", 3, -1, 1);
    mcts_add_child(t, 0);
    set_node(t, 1, "FindFunction", "{\"function_name\":\"dispatch_request\"}", 70, "tinyweb/app.py", 46, 51,
             "    def dispatch_request(self, request):\n        return self.view_functions[endpoint](**args)\n",
             "def dispatch_request(self, request)");
    return t;
}

/* Runs the answer role over scripts s (n of them) with reader r (NULL: no
 * sink); the answer in *a. Returns the role's code. */
static int run(struct llm_policy *p, const struct script *s, int n, struct reader *r, struct policy_answer *a)
{
    scripts = s;
    nscripts = n;
    ncalls = nattached = 0;
    fb_answers = 0;
    struct policy pol;
    llm_policy_bind(p, &pol);
    pol.set_answer_sink(pol.ctx, r ? sink : NULL, r);
    struct mcts_tree *t = mk_tree();
    int ids[] = {0, 1};
    char err[512] = "";
    struct policy_usage u = {0};
    memset(a, 0, sizeof *a);
    int rc = pol.answer(pol.ctx, t, ids, 2, a, &u, err, sizeof err);
    if (rc) diag("answer: %s", err);
    pol.set_answer_sink(pol.ctx, NULL, NULL);
    mcts_free(t);
    return rc;
}

static void test_pieces(struct llm_policy *p)
{
    static const struct script s[] = {{{"It is called in ", "`tinyweb/app.py:50-51`", ", by the app.", NULL}}};
    struct reader r = {BUF_INIT, 0, 0};
    struct policy_answer a;
    ok(run(p, s, 1, &r, &a) == 0, "whole answer: succeeds");
    is_str(buf_str(&r.log), "T:It is called in |T:`tinyweb/app.py:50-51`|T:, by the app.|",
           "the reader gets every piece in order, and no reset before the first call");
    is_str(a.markdown, "It is called in `tinyweb/app.py:50-51`, by the app.", "the answer is the whole text");
    ok(!a.stopped && a.cites.n == 1, "not stopped; its citation verified");
    is_int(nattached, 1, "the answer's request carries on_delta");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* the double's own reset (a call sent again by the transport) */
    static const struct script s2[] = {{{"Half an ans", "\x02", "It is called in `tinyweb/app.py:50-51`.", NULL}}};
    r = (struct reader){BUF_INIT, 0, 0};
    ok(run(p, s2, 1, &r, &a) == 0, "an answer sent again by the transport: succeeds");
    is_str(buf_str(&r.log), "T:Half an ans|R|T:It is called in `tinyweb/app.py:50-51`.|", "the reset reaches the reader");
    is_int(ncalls, 1, "one call");
    policy_answer_clear(&a);
    buf_free(&r.log);

    ok(run(p, s, 1, NULL, &a) == 0 && nattached == 0, "no sink: the request carries no on_delta");
    policy_answer_clear(&a);
}

/* A reply written as {"answer": "..."} reaches the reader as the string's
 * text, decoded as it comes (escapes cut across pieces included), so what
 * is shown is what the check keeps; a stop keeps that text, not JSON; a
 * reply that only opens with '{' is text as it is. */
static void test_json_form(struct llm_policy *p)
{
    static const struct script s[] = {{{"  {\"ans", "wer\": \"It is called in `tinyweb/app.py", ":50-51`.\\",
                                        "n\\nSee \\u00", "e9 \\\"x\\\".\"}", NULL}}};
    struct reader r = {BUF_INIT, 0, 0};
    struct policy_answer a;
    ok(run(p, s, 1, &r, &a) == 0, "a JSON-form answer: succeeds");
    struct buf got = BUF_INIT;   /* the text pieces the reader got, joined */
    for (const char *q = buf_str(&r.log); (q = strstr(q, "T:")); q += 2) {
        const char *e = strchr(q + 2, '|');
        buf_add(&got, q + 2, (size_t)(e - q - 2));
    }
    is_str(buf_str(&got), "It is called in `tinyweb/app.py:50-51`.\n\nSee \xc3\xa9 \"x\".",
           "the reader gets the answer's text, decoded, no JSON");
    is_str(a.markdown, buf_str(&got), "and it is the answer the check keeps");
    policy_answer_clear(&a);
    buf_free(&r.log);
    buf_free(&got);

    static const struct script s2[] = {{{"{\"answer\": \"It is called in ", "`tinyweb/app.py:50-51`, ", "then",
                                         NULL}}};
    r = (struct reader){BUF_INIT, 0, 2};
    ok(run(p, s2, 1, &r, &a) == 0 && a.stopped, "a JSON-form answer stopped: kept, marked");
    ok(a.markdown && str_starts(a.markdown, "It is called in `tinyweb/app.py:50-51`,") && !strchr(a.markdown, '{'),
       "it keeps the decoded text, not JSON: %s", a.markdown ? a.markdown : "");
    policy_answer_clear(&a);
    buf_free(&r.log);

    static const struct script s3[] = {{{"{x} is ", "set in `tinyweb/app.py:50-51`.", NULL}}};
    r = (struct reader){BUF_INIT, 0, 0};
    ok(run(p, s3, 1, &r, &a) == 0, "an answer opening with a brace: succeeds");
    is_str(buf_str(&r.log), "T:{x} is |T:set in `tinyweb/app.py:50-51`.|", "it reaches the reader as it is");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* a small open model's habit: the object in a ```json fence, a trailing comma */
    static const struct script s4[] = {{{"``", "`json\n{\n  \"answer\": \"It is called in ",
                                         "`tinyweb/app.py:50-51`.\",\n}\n```", NULL}}};
    r = (struct reader){BUF_INIT, 0, 0};
    ok(run(p, s4, 1, &r, &a) == 0, "a JSON answer in a ```json fence: succeeds");
    is_str(buf_str(&r.log), "T:It is called in |T:`tinyweb/app.py:50-51`.|",
           "the reader gets the string's text, no fence and no JSON");
    is_str(a.markdown, "It is called in `tinyweb/app.py:50-51`.", "and the check keeps that text");
    ok(a.unwrapped && a.cites.n == 1, "said to be unwrapped; its citation verified");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* words around the fence: streamed as they come, the check takes the string */
    static const struct script s5[] = {{{"Sure! Here is my reply:\n\n```json\n{\"answer\": \"It is called in ",
                                         "`tinyweb/app.py:50-51`.\"}\n```\n\nLet me know if you need more.",
                                         NULL}}};
    r = (struct reader){BUF_INIT, 0, 0};
    ok(run(p, s5, 1, &r, &a) == 0, "a JSON answer with words around its fence: succeeds");
    is_str(a.markdown, "It is called in `tinyweb/app.py:50-51`.", "the check keeps the string, not the wrapper");
    ok(a.unwrapped, "and says the answer was unwrapped");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* a Markdown answer that shows such an object as an example, citing outside it: kept whole */
    static const struct script s6[] = {{{"The view returns `{\"answer\": \"ok\"}` at `tinyweb/app.py:50-51`.", NULL}}};
    r = (struct reader){BUF_INIT, 0, 0};
    ok(run(p, s6, 1, &r, &a) == 0, "a Markdown answer with a JSON example: succeeds");
    is_str(a.markdown, "The view returns `{\"answer\": \"ok\"}` at `tinyweb/app.py:50-51`.",
           "it is kept whole: the object is an example, the citation outside it");
    ok(!a.unwrapped, "not unwrapped");
    policy_answer_clear(&a);
    buf_free(&r.log);
}

static void test_reask(struct llm_policy *p)
{
    /* an invented citation is re-asked once: the reader is told the answer is written again */
    static const struct script s[] = {{{"See `tinyweb/ghost.py:1-3`.", NULL}},
                                      {{"See ", "`tinyweb/app.py:46-51`.", NULL}}};
    struct reader r = {BUF_INIT, 0, 0};
    struct policy_answer a;
    ok(run(p, s, 2, &r, &a) == 0 && ncalls == 2, "re-ask: two calls");
    is_str(buf_str(&r.log), "T:See `tinyweb/ghost.py:1-3`.|R|T:See |T:`tinyweb/app.py:46-51`.|",
           "re-ask: a reset before the second answer's pieces");
    is_str(a.markdown, "See `tinyweb/app.py:46-51`.", "re-ask: the second answer is used");
    policy_answer_clear(&a);
    buf_free(&r.log);
}

static void test_stop(struct llm_policy *p)
{
    static const struct script s[] = {{{"It is called in ", "`tinyweb/app.py:50-51`, ", "then ", "more", NULL}}};
    struct reader r = {BUF_INIT, 0, 2};
    struct policy_answer a;
    ok(run(p, s, 1, &r, &a) == 0, "stopped: the role succeeds with what arrived");
    is_int(ncalls, 1, "stopped: no further call (no retry, no re-ask)");
    is_int(fb_answers, 0, "stopped: not replaced by the fallback's answer");
    ok(a.stopped, "stopped: marked (policy_answer.stopped)");
    is_str(a.markdown,
           "It is called in `tinyweb/app.py:50-51`,\n\n_Stopped while it was being written: this answer is "
           "incomplete._\n",
           "stopped: the part that arrived, said to be incomplete");
    ok(a.cites.n == 1 && a.cites.v[0].start_line == 50 && a.cites.v[0].end_line == 51,
       "stopped: its verified citation kept");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* an invented citation removed; one cut off by the stop dropped */
    static const struct script s2[] = {{{"See `tinyweb/ghost.py:1-3` and ", "`tinyweb/app.py:4", "6-51`", NULL}}};
    r = (struct reader){BUF_INIT, 0, 2};
    ok(run(p, s2, 1, &r, &a) == 0 && a.stopped, "stopped mid-citation: kept, marked");
    is_str(a.markdown,
           "See  and\n\n_Stopped while it was being written: this answer is incomplete._\n\n_1 citation that "
           "matched no evidence on the trajectory was removed._\n",
           "stopped mid-citation: the cut citation dropped, the invented one removed and said");
    is_int(a.cites.n, 0, "stopped mid-citation: `tinyweb/app.py:4` is not taken for a citation");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* stopped before any text */
    static const struct script s3[] = {{{"", "x", NULL}}};
    r = (struct reader){BUF_INIT, 0, 1};
    ok(run(p, s3, 1, &r, &a) == 0 && a.stopped && a.cites.n == 0, "stopped at once: kept, marked");
    is_str(a.markdown, "_The answer was stopped before any of it was written._\n", "stopped at once: said so");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* stopped during the re-ask: the first answer, complete, is kept */
    static const struct script s4[] = {{{"In `tinyweb/app.py:46-51` or `tinyweb/ghost.py:1-2`.", NULL}},
                                       {{"In ", "`tinyweb/app.py:46-51`", NULL}}};
    r = (struct reader){BUF_INIT, 0, 2};
    ok(run(p, s4, 2, &r, &a) == 0 && !a.stopped, "stopped in the re-ask: the first, complete answer kept");
    ok(strstr(a.markdown, "In `tinyweb/app.py:46-51` or .") != NULL, "stopped in the re-ask: checked as always");
    policy_answer_clear(&a);
    buf_free(&r.log);

    /* the next answer is read by a new reader, not stopped */
    static const struct script s5[] = {{{"In `tinyweb/app.py:46-51`.", NULL}}};
    r = (struct reader){BUF_INIT, 0, 0};
    ok(run(p, s5, 1, &r, &a) == 0 && !a.stopped, "a stop does not outlive its answer");
    policy_answer_clear(&a);
    buf_free(&r.log);
}

int main(void)
{
    const char *top = getenv("top_srcdir");
    char *pd = xasprintf("%s/prompts", top && *top ? top : DRQA_SRCDIR);
    const char *dirs[] = {pd};
    struct llm_policy_config c;
    llm_policy_config_init(&c);
    c.backend = &dbl;
    c.fallback = &fbpol;
    c.prompt_dirs = dirs;
    c.nprompt_dirs = 1;
    char err[512];
    struct llm_policy *p = llm_policy_new(&c, err, sizeof err);
    ok(p != NULL, "policy built from the shipped prompts");
    if (!p) {
        diag("%s", err);
        free(pd);
        return done_testing();
    }
    struct policy pol;
    llm_policy_bind(p, &pol);
    ok(pol.set_answer_sink != NULL, "the llm policy takes an answer sink");
    test_pieces(p);
    test_reask(p);
    test_json_form(p);
    test_stop(p);
    llm_policy_free(p);

    struct offline_policy *op = offline_policy_new(NULL);
    struct policy off;
    offline_policy_bind(op, &off);
    ok(off.set_answer_sink == NULL, "the offline policy writes its answer at once: no sink");
    offline_policy_free(op);
    free(pd);
    return done_testing();
}
