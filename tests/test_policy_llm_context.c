/* Tests for what the LLM policy's agents are shown and how each request is
 * laid out, against tests/fake_llm.py on 127.0.0.1:
 *   - each role's static text is the system prompt, byte-identical on every
 *     call, and none of it is repeated in the per-call request (so a
 *     server's prefix cache can keep it);
 *   - perception sees the code the last steps read; planning and evaluation
 *     see the path's span headers; a Finish's evaluation sees the path's code;
 *   - the filter sees every candidate (header and first lines) and the
 *     action's arguments; an empty choice keeps the best-ranked candidate;
 *   - the answer role replies in plain Markdown (no response_format), and is
 *     given the evidence ranked, so a decisive span read last is not cut;
 *   - a request over the model's context window is sent once more, shorter. */
#include "tap.h"
#include "harness.h"
#include "fake_llm.h"
#include "llm_config.h"
#include "llm.h"
#include "fake_backend.h"
#include "mcts.h"
#include "policy_llm.h"
#include "policy_tree.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static struct fake f;
static char dir[256];
static const char *srcdirs[1];

static const char *SCRIPT =
    "{\"rules\": ["
    " {\"match\": \"case:answer-retry\", \"times\": 1, \"status\": 503, \"error\": \"overloaded\"},"
    " {\"match\": \"case:ctx-tiny\", \"endpoint\": \"chat\", \"status\": 400,"
    "  \"error\": \"This model's maximum context length is 256 tokens. However, your messages resulted in 1900 "
    "tokens. Please reduce the length of the messages.\"},"
    " {\"match\": \"case:ctx-limit\", \"endpoint\": \"chat\", \"times\": 1, \"status\": 400,"
    "  \"error\": \"This model's maximum context length is 1024 tokens. However, your messages resulted in 4000 "
    "tokens. Please reduce the length of the messages.\"},"
    " {\"match\": \"You are the Perception Agent\", \"content\": \"{\\\"summary\\\": \\\"s\\\", \\\"redundant\\\": [],"
    " \\\"unexplored\\\": [], \\\"gaps\\\": [], \\\"candidates\\\": []}\"},"
    " {\"match\": \"You are the Planning Agent\", \"content\": \"{\\\"rationale\\\": \\\"r\\\", \\\"action\\\":"
    " \\\"FindClass\\\", \\\"args\\\": {\\\"class_name\\\": \\\"Router\\\"}}\"},"
    " {\"match\": \"You are the Evaluation Agent\", \"content\": \"{\\\"rationale\\\": \\\"r\\\", \\\"value\\\": 70,"
    " \\\"feedback\\\": \\\"f\\\"}\"},"
    " {\"match\": \"case:filter-empty\", \"content\": \"{\\\"rationale\\\": \\\"none fits\\\", \\\"spans\\\": []}\"},"
    " {\"match\": \"You are the Evidence Filter\", \"content\": \"{\\\"spans\\\": [{\\\"path\\\": \\\"pkg/c.py\\\","
    " \\\"start_line\\\": 1, \\\"end_line\\\": 3}]}\"},"
    " {\"match\": \"You are the Answer Agent\", \"content\": \"The view is called in `tinyweb/app.py:46-51`.\\n\\n"
    "- late: `pkg/late.py:1-3`\"}"
    "]}";

static struct llm_backend *mk_backend_model(const char *model_env)
{
    char path[128];
    snprintf(path, sizeof path, "%s/test.conf", dir);
    char ebase[160];
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s/v1", f.base);
    const char *env[] = {ebase, model_env, "DRQA_PROVIDER=openai", NULL};
    return fake_backend(path, "retries = 0\nbackoff_ms = 1\ntimeout_total_ms = 10000\njson_mode = true\n", env);
}

static struct llm_backend *mk_backend(void)
{
    return mk_backend_model("DRQA_MODEL=fake-model");
}

static struct llm_policy *mk_policy(struct llm_backend *b, struct llm_policy_caps *caps)
{
    struct llm_policy_config c;
    llm_policy_config_init(&c);
    c.backend = b;
    c.prompt_dirs = srcdirs;
    c.nprompt_dirs = 1;
    c.filter_min_bytes = -1;
    if (caps) c.caps = *caps;
    char err[512];
    struct llm_policy *p = llm_policy_new(&c, err, sizeof err);
    if (!p) diag("llm_policy_new: %s", err);
    return p;
}

/* root -> 1 FindFunction dispatch_request (app.py:46-51, value 70)
 *           -> 2 ViewCode pkg/late.py (value 95) -> 3 (new) */
static struct mcts_tree *mk_tree(const char *question)
{
    struct mcts_tree *t = mcts_new(question, 3, -1, 1);
    mcts_add_child(t, 0);
    set_node(t, 1, "FindFunction", "{\"function_name\":\"dispatch_request\"}", 70, "tinyweb/app.py", 46, 51,
             "    def dispatch_request(self, request):\n        MARKER_DISPATCH_BODY = 1\n        return view(request)",
             "def dispatch_request(self, request)");
    mcts_add_child(t, 1);
    set_node(t, 2, "ViewCode", "{\"code_span_list\":[\"pkg/late.py:1-3\"]}", 95, "pkg/late.py", 1, 3,
             "def late():\n    MARKER_LATE_DECISIVE = 2\n    return 2", "def late()");
    mcts_add_child(t, 2);
    return t;
}

/* The recorded requests whose text contains needle, in order (caller deletes). */
static cJSON *requests_of(const char *needle)
{
    cJSON *arr = fake_requests(&f), *r, *out = cJSON_CreateArray();
    cJSON_ArrayForEach(r, arr) {
        const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(r, "prompt"));
        if (p && strstr(p, needle)) cJSON_AddItemToArray(out, fake_body(r));
    }
    cJSON_Delete(arr);
    return out;
}

static const char *msg(const cJSON *body, int i, const char *field)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(body, "messages"), i), field));
}

static void test_layout_and_context(struct llm_policy *p)
{
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("Where is the decision made?");
    struct policy_usage u = {0};
    char err[512], *report = NULL;
    struct policy_action a = {0};
    struct policy_eval e = {0};
    ok(pol.perceive(pol.ctx, t, 3, &report, &u, err, sizeof err) == 0, "perceive node 3");
    ok(pol.plan(pol.ctx, t, 3, report ? report : "", &a, &u, err, sizeof err) == 0, "plan node 3");
    policy_action_clear(&a);
    ok(pol.plan(pol.ctx, t, 3, "another report", &a, &u, err, sizeof err) == 0, "plan node 3 again");
    set_node(t, 3, "Finish", "{\"answer\":\"see late\",\"finish_reason\":\"found\"}", 0, NULL, 0, 0, NULL, NULL);
    ok(pol.evaluate(pol.ctx, t, 3, &e, &u, err, sizeof err) == 0 && e.value == 70, "evaluate the Finish");
    free(report);
    policy_action_clear(&a);
    policy_eval_clear(&e);

    cJSON *plans = requests_of("You are the Planning Agent");
    ok(cJSON_GetArraySize(plans) == 2, "two planning requests");
    const char *s0 = msg(cJSON_GetArrayItem(plans, 0), 0, "content"), *s1 = msg(cJSON_GetArrayItem(plans, 1), 0, "content");
    ok(s0 && s1 && !strcmp(msg(cJSON_GetArrayItem(plans, 0), 0, "role"), "system") && !strcmp(s0, s1),
       "planning: the static text is the system prompt, byte-identical on both calls");
    const char *u0 = msg(cJSON_GetArrayItem(plans, 0), 1, "content");
    ok(u0 && str_starts(u0, "Question (") && !strstr(u0, "You are the Planning Agent") && !strstr(u0, "Rules:"),
       "planning: the request starts with the question and repeats nothing of the static text");
    ok(s0 && strstr(s0, "FindClass") && strstr(s0, "code_span_list"), "planning: the action list is in the system prompt");
    ok(u0 && strstr(u0, "tinyweb/app.py:46-51") && strstr(u0, "pkg/late.py:1-3"),
       "planning sees the span headers of the path's evidence");
    cJSON_Delete(plans);

    cJSON *per = requests_of("You are the Perception Agent");
    const char *pu = msg(cJSON_GetArrayItem(per, 0), 1, "content");
    ok(pu && strstr(pu, "MARKER_LATE_DECISIVE") && strstr(pu, "MARKER_DISPATCH_BODY"),
       "perception sees the code read in the last two steps");
    cJSON_Delete(per);

    cJSON *ev = requests_of("You are the Evaluation Agent");
    const char *eu = msg(cJSON_GetArrayItem(ev, 0), 1, "content");
    ok(eu && strstr(eu, "MARKER_LATE_DECISIVE") && strstr(eu, "MARKER_DISPATCH_BODY") && strstr(eu, "pkg/late.py:1-3"),
       "the evaluation of a Finish sees the code read on its path");
    cJSON_Delete(ev);

    /* the answer: plain Markdown, no response_format, the evidence ranked */
    struct policy_answer ans = {0};
    int ids[] = {0, 1, 2};
    ok(pol.answer(pol.ctx, t, ids, 3, &ans, &u, err, sizeof err) == 0 && ans.markdown &&
           str_starts(ans.markdown, "The view is called in `tinyweb/app.py:46-51`."),
       "answer: a plain Markdown reply is the answer");
    is_int((int)ans.cites.n, 2, "answer: both citations verified");
    cJSON *an = requests_of("You are the Answer Agent");
    const cJSON *body = cJSON_GetArrayItem(an, 0);
    ok(body && !cJSON_GetObjectItem(body, "response_format"), "answer: no response_format (it is not JSON)");
    const char *au = msg(body, 1, "content");
    const char *late = au ? strstr(au, "MARKER_LATE_DECISIVE") : NULL, *disp = au ? strstr(au, "MARKER_DISPATCH_BODY") : NULL;
    ok(late && disp && late < disp, "answer: the span of the highest-valued step comes first");
    cJSON_Delete(an);
    policy_answer_clear(&ans);
    mcts_free(t);
}

static void test_answer_cap(struct llm_backend *b)
{
    struct llm_policy_caps caps = {0};
    caps.evidence = 200;   /* room for one span (the late one is about 100 bytes numbered, the other 175) */
    struct llm_policy *p = mk_policy(b, &caps);
    if (!p) return;
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:cap Where is the decision made?");
    struct policy_answer ans = {0};
    struct policy_usage u = {0};
    char err[512];
    int ids[] = {0, 1, 2};
    ok(pol.answer(pol.ctx, t, ids, 3, &ans, &u, err, sizeof err) == 0, "answer with little room for evidence");
    cJSON *an = requests_of("case:cap");
    const char *au = msg(cJSON_GetArrayItem(an, 0), 1, "content");
    ok(au && strstr(au, "MARKER_LATE_DECISIVE") && !strstr(au, "MARKER_DISPATCH_BODY") &&
           strstr(au, "- tinyweb/app.py:46-51"),
       "answer: the decisive late span is kept whole, the other listed by header, nothing cut from the front");
    cJSON_Delete(an);
    policy_answer_clear(&ans);
    mcts_free(t);
    llm_policy_free(p);
}

/* A transient failure of the answer call (after the client's retries) is
 * asked once more before the fallback's answer is taken. */
static void test_answer_retry(struct llm_policy *p)
{
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:answer-retry Where is the decision made?");
    struct policy_answer ans = {0};
    struct policy_usage u = {0};
    char err[512];
    int ids[] = {0, 1, 2};
    ok(pol.answer(pol.ctx, t, ids, 3, &ans, &u, err, sizeof err) == 0 && ans.markdown &&
           str_starts(ans.markdown, "The view is called in"),
       "answer: a 503 on the answer call, then the model's answer");
    is_int(fake_count(&f, "case:answer-retry"), 2, "two answer requests");
    ok(strstr(u.notes, "answer: the model call failed (") && strstr(u.notes, "asked once more") && !u.fallback,
       "noted, and not a fallback: %s", u.notes);
    policy_answer_clear(&ans);
    mcts_free(t);
}

static void test_filter(struct llm_policy *p)
{
    struct policy_curator cu;
    llm_policy_curator(p, &cu);
    struct evidence raw = EVIDENCE_INIT, cur = EVIDENCE_INIT;
    char label[32];
    for (int i = 0; i < 8; i++) {
        char path[32], text[200];
        snprintf(path, sizeof path, "pkg/m%d.py", i);
        snprintf(label, sizeof label, "def handler_%d()", i);
        snprintf(text, sizeof text, "def handler_%d():\n    # CANDIDATE_LINE_%d\n    return %d", i, i, i);
        evidence_add(&raw, path, 1, 3, text, label, 1);
    }
    evidence_add(&raw, "pkg/c.py", 1, 3, "def route():\n    # route the request\n    return 0", "def route()", 1);
    char *text = NULL, err[512];
    struct policy_usage u = {0};
    ok(cu.curate(cu.ctx, "How is the request routed?", "SemanticSearch {\"query\":\"route request\"}", &raw, NULL, &cur,
                 &text, &u, err, sizeof err) == 0 && cur.n == 1 && !strcmp(cur.v[0].path, "pkg/c.py"),
       "filter: the chosen span is kept");
    cJSON *fl = requests_of("route request");
    const char *fu = msg(cJSON_GetArrayItem(fl, 0), 1, "content");
    int all = fu != NULL;
    for (int i = 0; i < 8 && fu; i++) {
        char needle[32];
        snprintf(needle, sizeof needle, "pkg/m%d.py:1-3", i);
        all &= strstr(fu, needle) != NULL;
    }
    ok(all, "filter: every candidate's header is shown");
    ok(fu && strstr(fu, "CANDIDATE_LINE_0") && strstr(fu, "Action: SemanticSearch {\"query\":\"route request\"}"),
       "filter: with their first lines, and the action's arguments");
    cJSON_Delete(fl);
    free(text);
    evidence_free(&cur);
    memset(&u, 0, sizeof u);
    ok(cu.curate(cu.ctx, "case:filter-empty How is the request routed?", "SemanticSearch {}", &raw, NULL, &cur, &text,
                 &u, err, sizeof err) == 0 && cur.n == 1,
       "filter: an empty choice keeps one span, the best-ranked candidate");
    ok(strstr(u.notes, "filter: chose no span; kept the best-ranked candidate") != NULL, "and says so in the node's notes");
    free(text);
    evidence_free(&cur);
    evidence_free(&raw);
}

static void test_context_shrink(struct llm_policy *p)
{
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:ctx-limit Where is the view function called by dispatch_request?");
    struct policy_usage u = {0};
    char err[512];
    struct policy_action a = {0};
    int before = fake_count(&f, "case:ctx-limit");
    struct buf rep = BUF_INIT;
    for (int i = 0; i < 60; i++) buf_printf(&rep, "report line %d about the routing tables\n", i);
    ok(pol.plan(pol.ctx, t, 3, buf_str(&rep), &a, &u, err, sizeof err) == 0 && a.name && !strcmp(a.name, "FindClass"),
       "a plan over the context window is sent again, shorter, and succeeds");
    is_int(fake_count(&f, "case:ctx-limit") - before, 2, "two requests");
    cJSON *rq = requests_of("case:ctx-limit");
    int n = cJSON_GetArraySize(rq);
    const char *first = msg(cJSON_GetArrayItem(rq, n - 2), 1, "content"), *second = msg(cJSON_GetArrayItem(rq, n - 1), 1, "content");
    ok(first && second && strlen(second) < strlen(first), "the second request is shorter (%zu < %zu bytes)",
       second ? strlen(second) : 0, first ? strlen(first) : 0);
    ok(strstr(u.notes, "over the model's context window") != NULL && !u.fallback, "noted on the node; not a fallback");
    size_t second_len = second ? strlen(second) : 0;
    cJSON_Delete(rq);
    /* the refusal named the window (1024 tokens): a later request over it
     * is sent shorter at once, not refused first */
    policy_action_clear(&a);
    struct policy_usage u2 = {0};
    before = fake_count(&f, "case:ctx-limit");
    ok(pol.plan(pol.ctx, t, 3, buf_str(&rep), &a, &u2, err, sizeof err) == 0 && a.name && !strcmp(a.name, "FindClass"),
       "a later plan over the known window succeeds");
    is_int(fake_count(&f, "case:ctx-limit") - before, 1, "one request: the shorter one, at once");
    rq = requests_of("case:ctx-limit");
    n = cJSON_GetArraySize(rq);
    const char *sent = msg(cJSON_GetArrayItem(rq, n - 1), 1, "content");
    ok(sent && second_len && strlen(sent) == second_len, "it is the shorter request (%zu bytes)", sent ? strlen(sent) : 0);
    ok(strstr(u2.notes, "over the model's context window; sent a shorter one") != NULL && !u2.fallback,
       "noted on the node; not a fallback");
    cJSON_Delete(rq);
    buf_free(&rep);
    policy_action_clear(&a);
    mcts_free(t);
}

/* A window so small that even the shortened request is surely over it:
 * after the refusal that names it, no request is sent, then or on a later
 * call; the call fails as over the window, saying why (with a fallback, as
 * in a search, the fallback decides: failed_call). */
static void test_context_hopeless(void)
{
    struct llm_backend *b = mk_backend_model("DRQA_MODEL=fake-model");
    struct llm_policy *p = b ? mk_policy(b, NULL) : NULL;
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:ctx-tiny Where is the view function called by dispatch_request?");
    struct policy_usage u = {0};
    char err[512];
    struct policy_action a = {0};
    int before = fake_count(&f, "case:ctx-tiny");
    ok(pol.plan(pol.ctx, t, 3, "a report", &a, &u, err, sizeof err) != 0 && strstr(err, "not sent") &&
           strstr(err, "over the model's context window"),
       "a plan over a tiny window fails, saying why: %s", err);
    is_int(fake_count(&f, "case:ctx-tiny") - before, 1, "one request: refused, naming 256 tokens; the shorter one not sent");
    policy_action_clear(&a);
    struct policy_usage u2 = {0};
    before = fake_count(&f, "case:ctx-tiny");
    ok(pol.plan(pol.ctx, t, 3, "a report", &a, &u2, err, sizeof err) != 0 && strstr(err, "not sent"),
       "a later plan fails the same way");
    is_int(fake_count(&f, "case:ctx-tiny") - before, 0, "with no request sent");
    policy_action_clear(&a);
    mcts_free(t);
    llm_policy_free(p);
    llm_backend_free(b);
}

/* A model whose profile takes JSON schemas gets each JSON role's schema,
 * its properties in the order the prompt asks for them. */
static void test_schemas(void)
{
    struct llm_backend *b = mk_backend_model("DRQA_MODEL=gpt-4o-mini");
    struct llm_policy *p = b ? mk_policy(b, NULL) : NULL;
    ok(p != NULL, "a policy on a model that takes JSON schemas");
    if (!p) {
        llm_backend_free(b);
        return;
    }
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:schema Where is the decision made?");
    struct policy_usage u = {0};
    char err[512];
    struct policy_action a = {0};
    ok(pol.plan(pol.ctx, t, 3, "", &a, &u, err, sizeof err) == 0, "plan with a schema");
    struct policy_answer ans = {0};
    int ids[] = {0, 1, 2};
    ok(pol.answer(pol.ctx, t, ids, 3, &ans, &u, err, sizeof err) == 0, "answer");
    cJSON *pl = requests_of("case:schema");
    const cJSON *rf = cJSON_GetObjectItem(cJSON_GetArrayItem(pl, 0), "response_format");
    const cJSON *js = cJSON_GetObjectItem(rf, "json_schema");
    const cJSON *props = cJSON_GetObjectItem(cJSON_GetObjectItem(js, "schema"), "properties");
    ok(rf && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(rf, "type")), "json_schema") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(js, "name")), "planning"),
       "planning: response_format json_schema named planning");
    ok(props && props->child && !strcmp(props->child->string, "rationale") &&
           props->child->next && !strcmp(props->child->next->string, "action"),
       "planning: rationale comes first in the schema, then the action");
    const cJSON *en = cJSON_GetObjectItem(cJSON_GetObjectItem(props, "action"), "enum"), *x;
    int has_find = 0, has_finish = 0;
    cJSON_ArrayForEach(x, en) {
        has_find |= !strcmp(x->valuestring, "FindClass");
        has_finish |= !strcmp(x->valuestring, "Finish");
    }
    ok(has_find && has_finish, "planning: the action is an enum of the actions");
    const cJSON *last = cJSON_GetArrayItem(pl, cJSON_GetArraySize(pl) - 1);
    ok(!cJSON_GetObjectItem(last, "response_format") && strstr(msg(last, 0, "content"), "You are the Answer Agent"),
       "answer: no schema, no response_format");
    cJSON_Delete(pl);
    policy_action_clear(&a);
    policy_answer_clear(&ans);
    mcts_free(t);
    llm_policy_free(p);
    llm_backend_free(b);
}

int main(void)
{
    if (!temp_dir(dir, sizeof dir, "llmctx")) return 1;
    const char *top = getenv("top_srcdir");
    char *pd = xasprintf("%s/prompts", top && *top ? top : DRQA_SRCDIR);
    srcdirs[0] = pd;
    if (fake_start(&f, SCRIPT) != 0) {
        ok(0, "fake server started");
        return done_testing();
    }
    struct llm_backend *b = mk_backend();
    struct llm_policy *p = b ? mk_policy(b, NULL) : NULL;
    ok(p != NULL, "a policy from the shipped prompts");
    if (p) {
        test_layout_and_context(p);
        test_answer_cap(b);
        test_filter(p);
        test_answer_retry(p);
        test_context_shrink(p);
        test_context_hopeless();
        test_schemas();
    }
    llm_policy_free(p);
    llm_backend_free(b);
    fake_stop(&f);
    free(pd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    return done_testing();
}
