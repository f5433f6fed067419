/* Tests for the LLM policy: each role's reply checks on valid, fenced,
 * prose-wrapped, malformed and adversarial replies (wrong types, values out
 * of range, unknown actions, invented spans, huge strings); the re-ask loop
 * (the fake's request log shows the second request carrying the problem);
 * the fallback after three unusable replies, noted; a transient HTTP failure
 * taking the fallback's decision, marked, and a persistent one failing the
 * role for the engine to stop; the answer's citation check and
 * question-type re-ask; temperatures and json_mode in the request bodies;
 * token accounting per role; and the API key kept out of everything but the
 * auth header. All against tests/fake_llm.py on 127.0.0.1. */
#include "tap.h"
#include "harness.h"
#include "fake_llm.h"
#include "llm_config.h"
#include "curate.h"
#include "llm.h"
#include "fake_backend.h"
#include "mcts.h"
#include "policy_llm.h"
#include "policy_tree.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#define KEY "sk-test-Qz8SECRETpolicyKey41"

static struct fake f;
static char dir[256];

/* ---- a scripted fallback policy that counts its calls ---- */

struct fb {
    int perceive, plan, evaluate, answer;
};

static int fb_perceive(void *ctx, const struct mcts_tree *t, int id, char **report, struct policy_usage *u, char *err,
                       size_t errlen)
{
    (void)t; (void)id; (void)u; (void)err; (void)errlen;
    ((struct fb *)ctx)->perceive++;
    *report = xstrdup("fallback report");
    return 0;
}

static int fb_plan(void *ctx, const struct mcts_tree *t, int id, const char *report, struct policy_action *out,
                   struct policy_usage *u, char *err, size_t errlen)
{
    (void)t; (void)id; (void)report; (void)u; (void)err; (void)errlen;
    ((struct fb *)ctx)->plan++;
    out->name = xstrdup("ListFiles");
    out->args = cJSON_CreateObject();
    out->rationale = xstrdup("fallback rationale");
    return 0;
}

static int fb_evaluate(void *ctx, const struct mcts_tree *t, int id, struct policy_eval *out, struct policy_usage *u,
                       char *err, size_t errlen)
{
    (void)t; (void)id; (void)u; (void)err; (void)errlen;
    ((struct fb *)ctx)->evaluate++;
    out->value = 33;
    out->feedback = xstrdup("fallback feedback");
    return 0;
}

static int fb_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
                     struct policy_usage *u, char *err, size_t errlen)
{
    (void)t; (void)ids; (void)nids; (void)u; (void)err; (void)errlen;
    ((struct fb *)ctx)->answer++;
    out->markdown = xstrdup("fallback answer");
    return 0;
}

static struct fb fbc;
static struct policy fbpol = {
    .name = "testfb", .ctx = &fbc, .perceive = fb_perceive, .plan = fb_plan, .evaluate = fb_evaluate, .answer = fb_answer};

/* ---- the fake's script ---- */

static cJSON *rule(cJSON *rules, const char *match, int times, const char *content)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "match", match);
    if (times > 0) cJSON_AddNumberToObject(r, "times", times);
    if (content) cJSON_AddStringToObject(r, "content", content);
    cJSON_AddItemToArray(rules, r);
    return r;
}

static char *script(void)
{
    cJSON *root = cJSON_CreateObject(), *rs = cJSON_AddArrayToObject(root, "rules"), *r;
    r = rule(rs, "case:plan-valid", 0,
             "{\"action\":\"FindClass\",\"args\":{\"class_name\":\"Router\"},\"rationale\":\"the question names Router\"}");
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "input", 100);
    cJSON_AddNumberToObject(u, "output", 10);
    r = rule(rs, "case:plan-fenced", 0, "{\"action\":\"FindFunction\",\"args\":{\"function_name\":\"match\",\"class_name\":\"Router\"}}");
    cJSON_AddStringToObject(r, "fault", "prose");
    rule(rs, "case:plan-prose", 0,
         "I would look at the router next. {\"action\": \"Outline\", \"args\": {\"path\": \"tinyweb/routing.py\"}, "
         "\"rationale\": \"see {it}\"} That should help.");
    rule(rs, "case:plan-reask", 1, "{action: FindClass, args: {class_name: Router}}");
    rule(rs, "case:plan-reask", 0, "{\"action\":\"findclass\",\"args\":\"{\\\"class_name\\\": \\\"Router\\\"}\"}");
    rule(rs, "case:plan-bad", 0, "{\"action\":\"RunShell\",\"args\":{\"cmd\":\"rm -rf /\"}}");
    r = rule(rs, "case:plan-500", 0, NULL);
    cJSON_AddNumberToObject(r, "status", 500);
    cJSON_AddStringToObject(r, "error", "backend exploded");
    r = rule(rs, "case:plan-401", 0, NULL);
    cJSON_AddNumberToObject(r, "status", 401);
    cJSON_AddStringToObject(r, "error", "invalid key");
    r = rule(rs, "case:plan-echo", 0, NULL);
    cJSON_AddStringToObject(r, "fault", "echo_key");
    struct buf big = BUF_INIT;
    buf_adds(&big, "{\"action\":\"FindClass\",\"args\":{\"class_name\":\"");
    for (int i = 0; i < 3000; i++) buf_addc(&big, 'A');
    buf_adds(&big, "\"}}");
    rule(rs, "case:plan-huge", 1, buf_str(&big));
    buf_reset(&big);
    buf_adds(&big, "{\"action\":\"FindClass\",\"args\":{\"class_name\":\"Router\"},\"rationale\":\"");
    for (int i = 0; i < 100000; i++) buf_addc(&big, 'r');
    buf_adds(&big, "\"}");
    rule(rs, "case:plan-huge", 0, buf_str(&big));
    buf_free(&big);
    rule(rs, "case:plan-semantic", 1, "{\"action\":\"SemanticSearch\",\"args\":{\"query\":\"routing\"}}");
    rule(rs, "case:plan-semantic", 0, "{\"action\":\"FindClass\",\"args\":{\"class_name\":\"Router\"}}");

    rule(rs, "case:plan-pick", 0,
         "A format example: {\"value\": 80}. A first try: {\"action\": \"find_class\", \"args\": {}}. "
         "My plan:\n```json\n{\"action\": \"FindClass\", \"args\": {\"class-name\": \"Router\",},}\n```");
    rule(rs, "case:plan-placeholder", 1,
         "{\"action\": \"ActionName\", \"args\": {\"argument\": \"value\"}, \"rationale\": \"one sentence\"}");
    rule(rs, "case:plan-placeholder", 0, "{\"action\": \"ListFiles\", \"args\": {}}");
    rule(rs, "case:eval-fraction", 0,
         "<think>The step looks weak, {\"value\": 5} maybe.</think>\n{\"value\": 0.8, \"feedback\": \"read the caller\"}");
    rule(rs, "case:eval-quoted", 0, "{\"value\":\"85\",\"feedback\":\"inspect call sites\\nnext\"}");
    rule(rs, "case:eval-range", 1, "{\"value\":150,\"feedback\":\"x\"}");
    rule(rs, "case:eval-range", 0, "{\"value\":60,\"suggestion\":\"read the definition\"}");
    rule(rs, "case:eval-bad", 0, "{\"value\":\"high\"}");

    rule(rs, "case:perceive", 1,
         "{\"summary\":\"dispatch found\",\"candidates\":[\"Router.match\", 7]}");
    rule(rs, "case:perceive", 0,
         "```json\n{\"summary\":\"dispatch found\",\"redundant\":[\"FindClass Router\"],\"unexplored\":"
         "[\"tinyweb/routing.py\",\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"],\"gaps\":[],\"candidates\":[\"Router.match\"]}\n```");

    rule(rs, "case:filter-mixed", 0,
         "{\"spans\":[{\"path\":\"tinyweb/app.py\",\"start_line\":47,\"end_line\":48},"
         "{\"path\":\"tinyweb/invented.py\",\"start_line\":1,\"end_line\":9},"
         "{\"path\":\"tinyweb/app.py\",\"start_line\":50,\"end_line\":70}]}");
    rule(rs, "case:filter-invented", 0, "{\"spans\":[{\"path\":\"nope.py\",\"start_line\":1,\"end_line\":2}]}");

    rule(rs, "case:answer-reask", 1,
         "{\"answer\":\"It is `tinyweb/app.py:46-51`, see also `tinyweb/nowhere.py:1-3`.\"}");
    rule(rs, "case:answer-reask", 0,
         "{\"answer\":\"The view function is called in `tinyweb/app.py:46-51`, at `tinyweb/app.py:51`.\"}");
    rule(rs, "case:answer-stubborn", 0,
         "{\"answer\":\"It is in `tinyweb/app.py:46-51` and in `tinyweb/ghost.py:5-9` for sure.\"}");
    rule(rs, "case:answer-nocite", 1, "{\"answer\":\"In the application module, inside the App class.\"}");
    rule(rs, "case:answer-nocite", 0, "{\"answer\":\"In `tinyweb/app.py:46-51`, App.dispatch_request.\"}");
    rule(rs, "case:answer-bad", 0, "  \n ");
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

/* ---- backend and policy ---- */

static struct llm_backend *mk_backend(int json_mode)
{
    char path[128], conf[256];
    snprintf(path, sizeof path, "%s/test.conf", dir);
    /* fake-model is in no profile row: the temperature is sent (each role's
     * own) because the config sets one */
    snprintf(conf, sizeof conf, "retries = 0\nbackoff_ms = 1\ntimeout_total_ms = 10000\nmax_tokens = 512\njson_mode = %s\n"
             "temperature = 0.2\n", json_mode ? "true" : "false");
    char ebase[160];
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s/v1", f.base);
    const char *env[] = {ebase, "DRQA_MODEL=fake-model", "DRQA_PROVIDER=openai", "DRQA_API_KEY=" KEY, NULL};
    return fake_backend(path, conf, env);
}

static const char *srcdirs[1];

static struct llm_policy *mk_policy(struct llm_backend *b, const struct policy *fallback, struct llm_usage *run)
{
    struct llm_policy_config c;
    llm_policy_config_init(&c);
    c.backend = b;
    c.fallback = fallback;
    c.run_usage = run;
    c.prompt_dirs = srcdirs;
    c.nprompt_dirs = 1;
    c.filter_min_bytes = -1;
    char err[512];
    struct llm_policy *p = llm_policy_new(&c, err, sizeof err);
    if (!p) diag("llm_policy_new: %s", err);
    return p;
}

/* ---- a small tree ----
 * root -> 1 FindFunction dispatch_request (value 70, app.py:46-51)
 *      -> 2 FindClass Router (value 40, routing.py:33-60)
 *      -> 3 new (pending)
 *      1 -> 4 new (pending) */
static const char *DISPATCH =
    "    def dispatch_request(self, request):\n"
    "        \"\"\"Match the URL and call the view function.\"\"\"\n"
    "        endpoint, args = self.router.match(request.path, request.method)\n"
    "        for func in self.before_request_funcs:\n"
    "            func(request)\n"
    "        return self.view_functions[endpoint](request, **args)";

static struct mcts_tree *mk_tree(const char *question)
{
    struct mcts_tree *t = mcts_new(question, 3, -1, 1);
    mcts_add_child(t, 0);
    set_node(t, 1, "FindFunction", "{\"function_name\":\"dispatch_request\"}", 70, "tinyweb/app.py", 46, 51, DISPATCH,
             "def dispatch_request(self, request)");
    mcts_node_mut(t, 1)->feedback = xstrdup("inspect Router.match next");
    mcts_add_child(t, 0);
    set_node(t, 2, "FindClass", "{\"class_name\":\"Router\"}", 40, "tinyweb/routing.py", 33, 60, "class Router:\n    ...",
             "class Router");
    mcts_node_mut(t, 2)->obs.v[0].elided = 1;
    mcts_add_child(t, 0);
    mcts_add_child(t, 1);
    return t;
}

/* The prompt of the n-th recorded request (0-based), or "". */
static char *req_prompt(int n)
{
    cJSON *arr = fake_requests(&f);
    const cJSON *r = cJSON_GetArrayItem(arr, n);
    const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(r, "prompt"));
    char *s = xstrdup(p ? p : "");
    cJSON_Delete(arr);
    return s;
}

static int nreq(void)
{
    cJSON *arr = fake_requests(&f);
    int n = cJSON_GetArraySize(arr);
    cJSON_Delete(arr);
    return n;
}

static cJSON *req_body(int n)
{
    cJSON *arr = fake_requests(&f);
    cJSON *b = fake_body(cJSON_GetArrayItem(arr, n));
    cJSON_Delete(arr);
    return b;
}

/* ---- pure checks ---- */

static void test_check_plan(void)
{
    struct policy_action a;
    char err[1024];
    cJSON *o = cJSON_Parse("{\"action\":\"FindClass\",\"args\":{\"class_name\":\"App\"},\"rationale\":\"r\"}");
    ok(llm_check_plan(o, 0, &a, NULL, err, sizeof err) == 0 && !strcmp(a.name, "FindClass") && !strcmp(a.rationale, "r"),
       "plan: a valid reply");
    policy_action_clear(&a);
    cJSON_Delete(o);

    struct {
        const char *json, *want, *name;
        int no_semantic;
    } bad[] = {
        {"{\"action\":\"RunShell\",\"args\":{}}", "field \"action\" must be one of FindClass, ", "unknown action", 0},
        {"{\"args\":{}}", "\"action\"", "missing action", 0},
        {"{\"action\":7}", "\"action\"", "action of the wrong type", 0},
        {"{\"action\":\"FindClass\",\"args\":5}", "field \"args\" must be a JSON object", "args of the wrong type", 0},
        {"{\"action\":\"FindClass\",\"args\":{}}", "class_name", "missing required argument", 0},
        {"{\"action\":\"FindClass\",\"args\":{\"class_name\":\"A\",\"bogus\":1}}", "unknown field 'bogus'",
         "unknown argument", 0},
        {"{\"action\":\"FindClass\",\"args\":{\"class_name\":7}}", "class_name", "argument of the wrong type", 0},
        {"{\"action\":\"SemanticSearch\",\"args\":{\"query\":\"x\"}}", "(not available in this run)",
         "SemanticSearch refused under no_semantic", 1},
        {"{\"action\":\"ViewCode\",\"args\":{\"code_span_list\":[]}}", "must not be empty", "empty span list", 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        o = cJSON_Parse(bad[i].json);
        err[0] = 0;
        int rc = llm_check_plan(o, bad[i].no_semantic, &a, NULL, err, sizeof err);
        ok(rc == -1 && strstr(err, bad[i].want) && a.name == NULL, "plan refused: %s", bad[i].name);
        if (rc != -1 || !strstr(err, bad[i].want)) diag("err: %s", err);
        cJSON_Delete(o);
    }

    struct buf big = BUF_INIT;
    buf_adds(&big, "{\"action\":\"SemanticSearch\",\"args\":{\"query\":\"");
    for (int i = 0; i < 2500; i++) buf_addc(&big, 'q');
    buf_adds(&big, "\"}}");
    o = cJSON_Parse(buf_str(&big));
    ok(llm_check_plan(o, 0, &a, NULL, err, sizeof err) == -1 &&
           strstr(err, "field \"args.query\" is too long (2500 bytes; at most 2000)"),
       "plan refused: a huge string argument");
    cJSON_Delete(o);
    buf_free(&big);

    o = cJSON_Parse("{\"action\":\"finish\",\"arguments\":{\"answer\":\"a\",\"finish_reason\":\"done\"}}");
    ok(llm_check_plan(o, 0, &a, NULL, err, sizeof err) == 0 && !strcmp(a.name, "Finish") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a.args, "answer")), "a"),
       "plan: name matched case-insensitively, 'arguments' accepted");
    policy_action_clear(&a);
    cJSON_Delete(o);

    /* coercions, each noted */
    struct {
        const char *json, *name, *args, *notes;
    } co[] = {
        {"{\"action\":\"FindClass\",\"args\":{\"class_name\":\"App\"}}", "FindClass", "{\"class_name\":\"App\"}", ""},
        {"{\"action\":\"find_function\",\"args\":{\"function-name\":\"match\",\"className\":\"Router\"}}", "FindFunction",
         "{\"function_name\":\"match\",\"class_name\":\"Router\"}",
         "read action \"find_function\" as FindFunction; read \"function-name\" as function_name; "
         "read \"className\" as class_name"},
        {"{\"action\":\"Find Function\",\"parameters\":{\"Function Name\":\"run\"}}", "FindFunction",
         "{\"function_name\":\"run\"}",
         "read \"parameters\" as \"args\"; read action \"Find Function\" as FindFunction; read \"Function Name\" as function_name"},
        {"{\"action\":{\"name\":\"ViewCode\",\"args\":{\"code_span_list\":\"app.py:1-9\"}},\"rationale\":\"look\"}",
         "ViewCode", "{\"code_span_list\":[\"app.py:1-9\"]}",
         "read the nested \"action\" object as the action and its arguments; read code_span_list given as a string as a list"},
        {"{\"name\":\"FindClass\",\"arguments\":{\"class_name\":[\"Router\"]}}", "FindClass", "{\"class_name\":\"Router\"}",
         "read \"name\" as \"action\"; read \"arguments\" as \"args\"; read class_name given as a one-item list as a string"},
        {"{\"action\":\"ViewCode\",\"args\":{\"code_span_list\":\"a.py:1-9, b.py:3-4\",\"snap-to-definition\":\"true\"}}",
         "ViewCode", "{\"code_span_list\":[\"a.py:1-9\",\"b.py:3-4\"],\"snap_to_definition\":true}",
         "read \"snap-to-definition\" as snap_to_definition; read code_span_list given as a string as a list; "
         "read snap_to_definition given as a string as a boolean"},
        {"{\"action\":\"outline\",\"args\":\"{\\\"path\\\": \\\"pkg\\\"}\"}", "Outline", "{\"path\":\"pkg\"}",
         "read action \"outline\" as Outline; read \"args\" given as a JSON string"},
    };
    for (size_t i = 0; i < ARRAY_LEN(co); i++) {
        struct policy_usage nu;
        memset(&nu, 0, sizeof nu);
        o = cJSON_Parse(co[i].json);
        int rc = llm_check_plan(o, 0, &a, &nu, err, sizeof err);
        char *args = rc == 0 ? cJSON_PrintUnformatted(a.args) : xstrdup(err);
        ok(rc == 0 && !strcmp(a.name, co[i].name) && !strcmp(args, co[i].args), "plan coerced: %s", co[i].json);
        if (rc != 0 || strcmp(args, co[i].args)) diag("got %s", args);
        is_str(nu.notes, co[i].notes, "plan coerced (%zu): noted", i);
        free(args);
        policy_action_clear(&a);
        cJSON_Delete(o);
    }
    struct {
        const char *json, *want;
    } ph[] = {
        {"{\"action\":\"ActionName\",\"args\":{\"argument\":\"value\"}}",
         "field \"action\" holds \"ActionName\", the placeholder of the prompt's example; write the real value"},
        {"{\"action\":\"FindClass\",\"args\":{\"argument\":\"value\"}}",
         "field \"args\" holds \"argument\", the placeholder of the prompt's example"},
        {"{\"action\":\"Outline\",\"args\":{\"path\":\"path/to/file.py\"}}",
         "field \"args.path\" holds \"path/to/file.py\", the placeholder"},
        {"{\"action\":\"ViewCode\",\"args\":{\"code_span_list\":[\"a.py:1-3\",\"...\"]}}",
         "field \"args.code_span_list\" holds \"...\", the placeholder"},
        {"{\"action\":\"Finish\",\"args\":{\"answer\":\" ... \",\"finish_reason\":\"done\"}}",
         "field \"args.answer\" holds \"...\", the placeholder"},
        {"{\"action\":\"ListFiles\",\"args\":{},\"rationale\":\"one sentence\"}",
         "field \"rationale\" holds \"one sentence\", the placeholder"},
        {"{\"action\":\"FindClass\",\"args\":{\"class_name\":\"A\",\"class-name\":\"B\"}}", "unknown field 'class-name'"},
    };
    for (size_t i = 0; i < ARRAY_LEN(ph); i++) {
        o = cJSON_Parse(ph[i].json);
        err[0] = 0;
        int rc = llm_check_plan(o, 0, &a, NULL, err, sizeof err);
        ok(rc == -1 && strstr(err, ph[i].want) && !a.name, "plan refused: %s", ph[i].json);
        if (!strstr(err, ph[i].want)) diag("err: %s", err);
        cJSON_Delete(o);
    }
}

static void test_check_eval(void)
{
    double v = -1;
    char *fb = NULL, err[512];
    cJSON *o = cJSON_Parse("{\"value\": 85, \"feedback\": \"inspect\\ncall   sites\"}");
    ok(llm_check_eval(o, &v, &fb, NULL, err, sizeof err) == 0 && v == 85, "eval: valid value");
    is_str(fb, "inspect call sites", "eval: feedback made one line");
    free(fb);
    cJSON_Delete(o);
    const char *bad[][2] = {{"{\"value\": 150}", "field \"value\" must be a number from 0 to 100, got 150"},
                            {"{\"value\": -3}", "from 0 to 100"},
                            {"{\"value\": \"high\"}", "from 0 to 100"},
                            {"{\"feedback\": \"x\"}", "\"value\""},
                            {"{\"value\": 5, \"feedback\": 9}", "\"feedback\""}};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        o = cJSON_Parse(bad[i][0]);
        fb = NULL;
        err[0] = 0;
        ok(llm_check_eval(o, &v, &fb, NULL, err, sizeof err) == -1 && strstr(err, bad[i][1]) && !fb, "eval refused: %s",
           bad[i][0]);
        cJSON_Delete(o);
    }
    struct buf big = BUF_INIT;
    buf_adds(&big, "{\"value\": 12.5, \"suggestion\": \"");
    for (int i = 0; i < 5000; i++) buf_addc(&big, 'z');
    buf_adds(&big, "\"}");
    o = cJSON_Parse(buf_str(&big));
    ok(llm_check_eval(o, &v, &fb, NULL, err, sizeof err) == 0 && v == 12.5 && fb && strlen(fb) == 300,
       "eval: 'suggestion' accepted, a huge one capped at 300 bytes");
    free(fb);
    cJSON_Delete(o);
    buf_free(&big);

    /* the 0-100 value as models write it (the rule and its edges: test_jsonx) */
    struct {
        const char *json;
        double want;
        const char *notes;
    } co[] = {
        {"{\"value\": 0.8}", 80, "value 0.8 read as 80"},
        {"{\"value\": \"85/100\"}", 85, "value \"85/100\" read as 85"},
        {"{\"value\": \"85%\"}", 85, "value \"85%\" read as 85"},
        {"{\"value\": 1}", 1, ""},
        {"{\"value\": 0}", 0, ""},
        {"{\"value\": \"1/1\"}", 100, "value \"1/1\" read as 100"},
        {"{\"score\": 0.25}", 25, "read \"score\" as \"value\"; score 0.25 read as 25"},
    };
    for (size_t i = 0; i < ARRAY_LEN(co); i++) {
        struct policy_usage nu;
        memset(&nu, 0, sizeof nu);
        o = cJSON_Parse(co[i].json);
        fb = NULL;
        v = -1;
        ok(llm_check_eval(o, &v, &fb, &nu, err, sizeof err) == 0 && fabs(v - co[i].want) < 1e-9, "eval coerced: %s -> %g",
           co[i].json, v);
        is_str(nu.notes, co[i].notes, "eval coerced (%zu): noted", i);
        free(fb);
        cJSON_Delete(o);
    }
    o = cJSON_Parse("{\"value\": 75, \"feedback\": \"...\"}");
    fb = NULL;
    ok(llm_check_eval(o, &v, &fb, NULL, err, sizeof err) == -1 && !fb &&
           strstr(err, "field \"feedback\" holds \"...\", the placeholder of the prompt's example"),
       "eval refused: the example's feedback copied");
    cJSON_Delete(o);
}

static void test_check_perception(void)
{
    char *r = NULL, err[512];
    cJSON *o = cJSON_Parse("{\"summary\":\"s\",\"redundant\":[],\"unexplored\":[\"a\",\"b\"],"
                           "\"candidates\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"]}");
    ok(llm_check_perception(o, &r, NULL, err, sizeof err) == 0, "perception: valid");
    is_str(r, "Summary: s\nUnexplored: a; b\nCandidates: 1; 2; 3; 4; 5", "report rendered, lists cut at five");
    free(r);
    cJSON_Delete(o);
    const char *bad[][2] = {{"{\"gaps\":[]}", "\"summary\""},
                            {"{\"summary\":\"s\",\"gaps\":5}", "\"gaps\""},
                            {"{\"summary\":\"...\"}", "field \"summary\" holds \"...\", the placeholder"},
                            {"{\"summary\":\"s\",\"gaps\":[\"...\"]}", "field \"gaps\" holds \"...\", the placeholder"},
                            {"{\"summary\":\"s\",\"candidates\":[\"a\",{\"x\":1}]}",
                             "element 1 of field \"candidates\" must be a string"}};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        o = cJSON_Parse(bad[i][0]);
        r = NULL;
        ok(llm_check_perception(o, &r, NULL, err, sizeof err) == -1 && strstr(err, bad[i][1]) && !r,
           "perception refused: %s", bad[i][0]);
        cJSON_Delete(o);
    }
    struct policy_usage nu;
    memset(&nu, 0, sizeof nu);
    o = cJSON_Parse("{\"summary\":\"s\",\"candidates\":\"Router.match, App.run\",\"gaps\":\"none\"}");
    r = NULL;
    ok(llm_check_perception(o, &r, &nu, err, sizeof err) == 0, "perception: lists given as strings accepted");
    is_str(r, "Summary: s\nCandidates: Router.match; App.run", "perception: the string read as a list, \"none\" as empty");
    is_str(nu.notes, "read \"gaps\" given as a string as a list of 0; read \"candidates\" given as a string as a list of 2",
           "perception: both noted");
    free(r);
    cJSON_Delete(o);
}

static void test_check_filter(void)
{
    struct evidence raw = EVIDENCE_INIT, out = EVIDENCE_INIT;
    evidence_add(&raw, "a.py", 10, 14, "l10\nl11\nl12\nl13\nl14", "def f()", 1);
    evidence_add(&raw, "b.py", 1, 5, "class B:\n    ... (lines 2-5 elided)", "class B", 1)->elided = 1;
    char err[1024];
    int dropped = -1;
    cJSON *o = cJSON_Parse("{\"spans\":[{\"path\":\"a.py\",\"start_line\":11,\"end_line\":12},"
                           "{\"path\":\"b.py\",\"start_line\":2,\"end_line\":3},"
                           "{\"path\":\"c.py\",\"start_line\":1,\"end_line\":2},"
                           "{\"path\":\"a.py\",\"start_line\":13,\"end_line\":20},"
                           "{\"path\":\"a.py\",\"start_line\":12,\"end_line\":12}]}");
    ok(llm_check_filter(o, &raw, NULL, &out, &dropped, NULL, err, sizeof err) == 0, "filter: mixed reply accepted");
    is_int(out.n, 2, "filter: two spans kept (invented, overreaching and covered ones not)");
    is_int(dropped, 2, "filter: the invented and the overreaching span counted as dropped");
    ok(out.n == 2 && !strcmp(out.v[0].path, "a.py") && out.v[0].start_line == 11 && out.v[0].end_line == 12,
       "filter: the narrowed range is kept");
    is_str(out.n ? out.v[0].text : NULL, "l11\nl12", "filter: its text is cut from the raw span");
    ok(out.n == 2 && out.v[1].elided && out.v[1].start_line == 1 && out.v[1].end_line == 5,
       "filter: an elided raw span is kept whole");
    is_str(out.n ? out.v[0].label : NULL, "def f()", "filter: lines within a definition keep its label");
    evidence_free(&out);
    cJSON_Delete(o);
    /* lines of a window: labelled with their own range, not the window's */
    struct evidence win = EVIDENCE_INIT;
    evidence_add(&win, "w.py", 1, 6, "a\nb\nc\nd\ne\nf", "lines 1-6", 1);
    o = cJSON_Parse("{\"spans\":[{\"path\":\"w.py\",\"start_line\":2,\"end_line\":3}]}");
    ok(llm_check_filter(o, &win, NULL, &out, &dropped, NULL, err, sizeof err) == 0 && out.n == 1,
       "filter: part of a window kept");
    is_str(out.n ? out.v[0].label : NULL, "lines 2-3", "filter: its label is its own range");
    evidence_free(&out);
    evidence_free(&win);
    cJSON_Delete(o);

    o = cJSON_Parse("{\"spans\":[{\"path\":\"zz.py\",\"start_line\":1,\"end_line\":2}]}");
    ok(llm_check_filter(o, &raw, NULL, &out, &dropped, NULL, err, sizeof err) == -1 && out.n == 0, "filter: all invented is refused");
    is_str(err, "none of the 1 spans lies inside the result; use only these ranges (or sub-ranges): a.py:10-14, b.py:1-5",
           "filter: the re-ask lists the valid ranges");
    cJSON_Delete(o);

    const char *bad[][2] = {{"{\"spans\":[{\"path\":\"a.py\",\"start_line\":\"x\",\"end_line\":2}]}", "spans[0].start_line"},
                            {"{\"spans\":[{\"path\":\"a.py\",\"start_line\":12,\"end_line\":11}]}",
                             "end_line 11 is before start_line 12"},
                            {"{\"spans\":[\"somewhere\"]}", "element 0 of field \"spans\" must be an object"},
                            {"{\"spans\":[{\"path\":\"dir/file.py\",\"start_line\":10,\"end_line\":24}]}",
                             "field \"spans[0].path\" holds \"dir/file.py\", the placeholder of the prompt's example"},
                            {"{\"spans\":[{\"path\":\"a.py\",\"lines\":\"ten\"}]}", "field \"spans[0].lines\" must be"},
                            {"{\"spans\":{}}", "\"spans\""},
                            {"{}", "\"spans\""}};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        o = cJSON_Parse(bad[i][0]);
        err[0] = 0;
        int rc = llm_check_filter(o, &raw, NULL, &out, &dropped, NULL, err, sizeof err);
        ok(rc == -1 && strstr(err, bad[i][1]) && out.n == 0, "filter refused: %s", bad[i][0]);
        if (rc != -1 || !strstr(err, bad[i][1])) diag("err: %s", err);
        cJSON_Delete(o);
    }
    o = cJSON_Parse("{\"spans\":[]}");
    ok(llm_check_filter(o, &raw, NULL, &out, &dropped, NULL, err, sizeof err) == 0 && out.n == 0,
       "filter: an empty list means nothing is relevant");
    cJSON_Delete(o);

    /* line ranges as models write them, each noted */
    struct {
        const char *json, *notes;
    } co[] = {
        {"{\"spans\":[{\"path\":\"a.py\",\"start_line\":\"11-12\"}]}", "read start_line \"A-B\" as lines A to B (1 span)"},
        {"{\"spans\":[{\"path\":\"a.py\",\"lines\":\"11 - 12\"}]}", "read \"lines\" as start_line and end_line (1 span)"},
        {"{\"spans\":[{\"path\":\"a.py\",\"lines\":[11, 12]}]}", "read \"lines\" as start_line and end_line (1 span)"},
        {"{\"spans\":[\"a.py:11-12\"]}", "read 1 span written \"path:start-end\""},
        {"{\"spans\":\"a.py:11-12\"}", "read \"spans\" given as a string as a list; read 1 span written \"path:start-end\""},
    };
    for (size_t i = 0; i < ARRAY_LEN(co); i++) {
        struct policy_usage nu;
        memset(&nu, 0, sizeof nu);
        o = cJSON_Parse(co[i].json);
        int rc = llm_check_filter(o, &raw, NULL, &out, &dropped, &nu, err, sizeof err);
        ok(rc == 0 && out.n == 1 && out.v[0].start_line == 11 && out.v[0].end_line == 12 && !strcmp(out.v[0].text, "l11\nl12"),
           "filter coerced: %s", co[i].json);
        if (rc) diag("err: %s", err);
        is_str(nu.notes, co[i].notes, "filter coerced (%zu): noted", i);
        evidence_free(&out);
        cJSON_Delete(o);
    }
    o = cJSON_Parse("{\"spans\":[{\"path\":\"a.py\",\"lines\":12}]}");
    ok(llm_check_filter(o, &raw, NULL, &out, &dropped, NULL, err, sizeof err) == 0 && out.n == 1 &&
           out.v[0].start_line == 12 && out.v[0].end_line == 12,
       "filter: \"lines\": 12 is one line");
    evidence_free(&out);
    cJSON_Delete(o);
    evidence_free(&raw);
}

static void test_citations(void)
{
    struct evidence c = EVIDENCE_INIT;
    size_t n = llm_parse_citations("See `tinyweb/app.py:46-51` and tinyweb/routing.py:120, not http://127.0.0.1:8080/x "
                                   "nor 10.0.0.1:22; app.py:L3-L5, pkg/a.py:3\xe2\x80\x93" "9, a:5 and x.py:9-2.",
                                   &c);
    is_int(n, 4, "four citations found");
    const char *want[] = {"tinyweb/app.py:46-51", "tinyweb/routing.py:120-120", "app.py:3-5", "pkg/a.py:3-9"};
    for (size_t i = 0; i < 4 && i < c.n; i++) {
        char got[128];
        snprintf(got, sizeof got, "%s:%d-%d", c.v[i].path, c.v[i].start_line, c.v[i].end_line);
        is_str(got, want[i], "citation %zu", i);
    }
    evidence_free(&c);

    /* a percent-encoded path outside the repository is removed whole */
    struct evidence seen = EVIDENCE_INIT;
    evidence_add(&seen, "tinyweb/app.py", 1, 80, NULL, NULL, 0);
    int removed = 0;
    char *md = llm_strip_citations("See `%2e%2e/etc/passwd:1-3` and %2e%2e/%2e%2e/etc/shadow:2, "
                                   "then tinyweb/app.py:46-51.", &seen, &removed);
    is_str(md, "See  and , then tinyweb/app.py:46-51.", "percent-encoded citations are removed whole, no fragment");
    is_int(removed, 2, "two citations removed");
    free(md);
    evidence_free(&seen);

    char why[256];
    ok(llm_answer_misses_type("where", "It is in the App class of the application.", 0, why, sizeof why) &&
           strstr(why, "where-question"),
       "a where-answer without a location misses its type");
    ok(!llm_answer_misses_type("where", "In tinyweb/app.py:46-51, the dispatch method.", 1, why, sizeof why),
       "a where-answer with a citation addresses it");
    ok(llm_answer_misses_type("why", "The function dispatch_request matches the URL.", 1, why, sizeof why) &&
           strstr(why, "why-question"),
       "a why-answer with no reason misses its type");
    ok(!llm_answer_misses_type("why", "It matches first because routes must be known before calling.", 1, why,
                               sizeof why),
       "a why-answer with a reason addresses it");
    ok(llm_answer_misses_type("how", "It is the Router class in the module.", 1, why, sizeof why),
       "a how-answer naming a thing and no mechanism misses its type");
    ok(!llm_answer_misses_type("what", "It is the Router class in the module.", 1, why, sizeof why),
       "a what-answer naming the thing addresses it");
    ok(llm_answer_misses_type("what", "Router.", 1, why, sizeof why) && strstr(why, "too short"),
       "a three-word answer is too short");
    ok(llm_answer_misses_type("what", "I don't know what this does at all.", 0, why, sizeof why),
       "a refusal without citations misses");
}

/* ---- against the fake ---- */

static void test_plan_roles(struct llm_policy *p, struct llm_policy *nofb)
{
    struct policy pol;
    llm_policy_bind(p, &pol);
    char err[1024];
    struct policy_action a = {0};
    struct policy_usage u = {0};

    struct mcts_tree *t = mk_tree("case:plan-valid Where is Router.match used by App.dispatch_request?");
    int before = nreq();
    ok(pol.plan(pol.ctx, t, 4, "report text", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "FindClass") &&
           !strcmp(a.rationale, "the question names Router"),
       "plan: valid reply used");
    is_int(nreq() - before, 1, "plan: one request");
    is_int(u.input_tokens, 100, "plan: input tokens from the server's usage");
    is_int(u.output_tokens, 10, "plan: output tokens from the server's usage");
    char *pr = req_prompt(before);
    ok(strstr(pr, "You are the Planning Agent") && strstr(pr, "Router.match, App.dispatch_request") &&
           strstr(pr, "[1] FindFunction {\"function_name\":\"dispatch_request\"} -> value 70") &&
           strstr(pr, "inspect Router.match next") && strstr(pr, "report text") &&
           strstr(pr, "    class_name* (string): ") && strstr(pr, "- Finish: "),
       "plan prompt: role, literal identifiers, path, evaluator's suggestion, report, action schema");
    free(pr);
    cJSON *body = req_body(before);
    ok(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(body, "temperature")) - 0.7) < 1e-9,
       "plan: exploration temperature 0.7");
    ok(!cJSON_GetObjectItem(body, "response_format"), "plan: no response_format when json_mode is off");
    cJSON_Delete(body);
    policy_action_clear(&a);
    mcts_free(t);

    t = mk_tree("case:plan-fenced How does Router.match work?");
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "FindFunction"),
       "plan: JSON in a ```json fence inside prose");
    policy_action_clear(&a);
    mcts_free(t);

    t = mk_tree("case:plan-prose How does Router.match work?");
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "Outline") &&
           !strcmp(a.rationale, "see {it}"),
       "plan: JSON object wrapped in prose with braces in strings");
    policy_action_clear(&a);
    mcts_free(t);

    t = mk_tree("case:plan-reask How does Router.match work?");
    before = nreq();
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "FindClass") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a.args, "class_name")), "Router"),
       "plan: malformed reply re-asked, second reply used");
    is_int(nreq() - before, 2, "plan: two requests");
    body = req_body(before + 1);
    cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    /* [0] the role's static system prompt, [1] the request, [2] the bad reply, [3] the re-ask */
    const char *m2 = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 3), "content"));
    const char *m1 = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 2), "content"));
    ok(cJSON_GetArraySize(msgs) == 4 && m1 && !strcmp(m1, "{action: FindClass, args: {class_name: Router}}") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 2), "role")), "assistant") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "role")), "system"),
       "re-ask: the bad reply goes back as the assistant's turn, after the system prompt and the request");
    ok(m2 && str_starts(m2, "Your reply could not be used: no usable JSON object in the reply: ") &&
           strstr(m2, "Reply again with only the JSON object"),
       "re-ask: the second request carries the parse error");
    if (m2) diag("re-ask: %s", m2);
    cJSON_Delete(body);
    policy_action_clear(&a);
    mcts_free(t);

    t = mk_tree("case:plan-bad Where is Router?");
    before = nreq();
    int fbplan = fbc.plan;
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "ListFiles"),
       "plan: after three unusable replies the fallback's plan is used");
    is_int(nreq() - before, 3, "plan: three requests before falling back");
    is_int(fbc.plan - fbplan, 1, "plan: the fallback was asked once");
    ok(a.rationale && str_starts(a.rationale, "[planning reply unusable after 3 attempts: field \"action\" must be one "
                                              "of FindClass, ") &&
           strstr(a.rationale, "got \"RunShell\"; used the testfb plan] fallback rationale"),
       "plan: the fallback is noted in the rationale");
    if (a.rationale) diag("rationale: %s", a.rationale);
    body = req_body(before + 2);
    msgs = cJSON_GetObjectItem(body, "messages");
    m2 = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 3), "content"));
    ok(cJSON_GetArraySize(msgs) == 4 && m2 && strstr(m2, "got \"RunShell\""),
       "re-ask: the third request carries the validation error, not a growing history");
    cJSON_Delete(body);
    const char *const *notes;
    size_t nn = llm_policy_notes(p, &notes);
    ok(nn == 1 && str_starts(notes[0], "planning reply unusable after 3 attempts: "), "the fallback is in the notes");
    policy_action_clear(&a);

    struct policy pol2;
    llm_policy_bind(nofb, &pol2);
    ok(pol2.plan(pol2.ctx, t, 4, "", &a, &u, err, sizeof err) == -1 &&
           str_starts(err, "planning reply unusable after 3 attempts: ") && strstr(err, "used the fallback plan"),
       "plan without a fallback: the step fails with the note");
    ok(pol2.rollout == NULL && pol.rollout == NULL, "no rollout when the fallback has none");
    mcts_free(t);

    t = mk_tree("case:plan-500 Where is Router?");
    before = nreq();
    fbplan = fbc.plan;
    memset(&u, 0, sizeof u);
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && a.name && !strcmp(a.name, "ListFiles"),
       "plan: a failed HTTP call (500) takes the fallback's plan");
    is_int(fbc.plan - fbplan, 1, "plan: the fallback was asked once");
    ok(u.fallback && strstr(u.notes, "planning: the model call failed (") && strstr(u.notes, "backend exploded") &&
           strstr(u.notes, "used the testfb plan"),
       "plan: the fallback is marked for the node, with the cause: %s", u.notes);
    is_int(u.fail_kind, POLICY_FAIL_NONE, "plan: a step decided by the fallback is not a failure");
    policy_action_clear(&a);
    memset(&u, 0, sizeof u);
    ok(pol2.plan(pol2.ctx, t, 4, "", &a, &u, err, sizeof err) == -1 && u.fail_kind == POLICY_FAIL_TRANSIENT &&
           strstr(err, "backend exploded"),
       "plan without a fallback: a 500 fails the step as transient (not backed up as a value)");
    mcts_free(t);
    t = mk_tree("case:plan-401 Where is Router?");
    memset(&u, 0, sizeof u);
    fbplan = fbc.plan;
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == -1 && u.fail_kind == POLICY_FAIL_PERSISTENT &&
           strstr(err, "invalid key"),
       "plan: a 401 is persistent: the step fails and the search will stop, whatever the fallback");
    is_int(fbc.plan - fbplan, 0, "plan: no fallback for a persistent failure");
    is_int(nreq() - before, 3, "plan: a failed call is not re-asked by the policy (one call for each of the three plans)");
    mcts_free(t);

    t = mk_tree("case:plan-echo Where is Router?");
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == -1 && !strstr(err, KEY) && strstr(err, "[redacted]"),
       "plan: a server echoing the key: the error is redacted");
    mcts_free(t);

    t = mk_tree("case:plan-huge Where is Router?");
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "FindClass") &&
           strlen(a.rationale) == 400,
       "plan: huge argument re-asked, huge rationale capped");
    policy_action_clear(&a);
    mcts_free(t);

    t = mk_tree("case:plan-pick Where is Router?");
    memset(&u, 0, sizeof u);
    before = nreq();
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "FindClass") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a.args, "class_name")), "Router"),
       "plan: the first object that passes the check is used, not an earlier one of another shape");
    is_int(nreq() - before, 1, "plan: no re-ask for it");
    is_str(u.notes, "planning: repaired the JSON: removed trailing commas; read \"class-name\" as class_name",
           "plan: the repair and the coercion of the used object noted for the node, not those of a refused one");
    policy_action_clear(&a);
    mcts_free(t);

    t = mk_tree("case:plan-placeholder Where is Router?");
    memset(&u, 0, sizeof u);
    before = nreq();
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "ListFiles"),
       "plan: a copied example re-asked");
    pr = req_prompt(before + 1);
    ok(strstr(pr, "field \"action\" holds \"ActionName\", the placeholder of the prompt's example") &&
           strstr(pr, "field \"rationale\" holds \"one sentence\", the placeholder"),
       "plan: the re-ask says the example was copied");
    free(pr);
    is_str(u.notes, "", "plan: nothing coerced, nothing noted");
    policy_action_clear(&a);
    mcts_free(t);
}

static void test_semantic_refused(struct llm_backend *b)
{
    struct llm_policy_config c;
    llm_policy_config_init(&c);
    c.backend = b;
    c.no_semantic = 1;
    c.prompt_dirs = srcdirs;
    c.nprompt_dirs = 1;
    char err[512];
    struct llm_policy *p = llm_policy_new(&c, err, sizeof err);
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:plan-semantic Where is routing done?");
    struct policy_action a = {0};
    struct policy_usage u = {0};
    int before = nreq();
    ok(pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err) == 0 && !strcmp(a.name, "FindClass"),
       "no_semantic: SemanticSearch re-asked");
    char *pr = req_prompt(before);
    ok(!strstr(pr, "- SemanticSearch:"), "no_semantic: SemanticSearch is not offered");
    free(pr);
    policy_action_clear(&a);
    mcts_free(t);
    llm_policy_free(p);
}

static void test_eval_perceive(struct llm_policy *p)
{
    struct policy pol;
    llm_policy_bind(p, &pol);
    char err[1024];
    struct policy_usage u = {0};
    struct policy_eval e = {0, NULL};

    struct mcts_tree *t = mk_tree("case:eval-quoted How does dispatch work?");
    set_node(t, 3, "ViewCode", "{\"code_span_list\":[\"tinyweb/app.py:40-60\"]}", 0, "tinyweb/app.py", 46, 51, DISPATCH,
             "def dispatch_request(self, request)");
    int before = nreq();
    ok(pol.evaluate(pol.ctx, t, 3, &e, &u, err, sizeof err) == 0 && e.value == 85, "eval: a quoted number accepted");
    is_str(e.feedback, "inspect call sites next", "eval: feedback as one line");
    char *pr = req_prompt(before);
    ok(strstr(pr, "You are the Evaluation Agent") && strstr(pr, "This step: ViewCode {\"code_span_list\":[\"tinyweb/app.py:40-60\"]}") &&
           strstr(pr, "self.view_functions[endpoint]"),
       "eval prompt: the step and its observation");
    free(pr);
    policy_eval_clear(&e);
    mcts_free(t);

    t = mk_tree("case:eval-fraction How does dispatch work?");
    set_node(t, 3, "FindClass", "{\"class_name\":\"App\"}", 0, "tinyweb/app.py", 22, 30, "class App:", "class App");
    memset(&u, 0, sizeof u);
    ok(pol.evaluate(pol.ctx, t, 3, &e, &u, err, sizeof err) == 0 && e.value == 80 && !strcmp(e.feedback, "read the caller"),
       "eval: the object in the thinking block skipped, a value on 0-1 read on 0-100");
    is_str(u.notes, "evaluation: value 0.8 read as 80", "eval: the coercion noted for the node");
    policy_eval_clear(&e);
    mcts_free(t);

    t = mk_tree("case:eval-range How does dispatch work?");
    set_node(t, 3, "FindClass", "{\"class_name\":\"App\"}", 0, "tinyweb/app.py", 22, 30, "class App:", "class App");
    before = nreq();
    ok(pol.evaluate(pol.ctx, t, 3, &e, &u, err, sizeof err) == 0 && e.value == 60 &&
           !strcmp(e.feedback, "read the definition"),
       "eval: out-of-range value re-asked");
    pr = req_prompt(before + 1);
    ok(strstr(pr, "field \"value\" must be a number from 0 to 100, got 150") != NULL, "eval: the re-ask names the range");
    free(pr);
    policy_eval_clear(&e);
    mcts_free(t);

    t = mk_tree("case:eval-bad How does dispatch work?");
    set_node(t, 3, "FindClass", "{\"class_name\":\"App\"}", 0, "tinyweb/app.py", 22, 30, "class App:", "class App");
    ok(pol.evaluate(pol.ctx, t, 3, &e, &u, err, sizeof err) == 0 && e.value == 33 && e.feedback &&
           str_starts(e.feedback, "[evaluation reply unusable after 3 attempts: field \"value\" must be a number") &&
           strstr(e.feedback, "used the testfb evaluation] fallback feedback"),
       "eval: fallback after three bad values, noted in the feedback");
    policy_eval_clear(&e);
    mcts_free(t);

    t = mk_tree("case:perceive How does Router.match dispatch?");
    char *report = NULL;
    before = nreq();
    ok(pol.perceive(pol.ctx, t, 3, &report, &u, err, sizeof err) == 0, "perceive: succeeds after one re-ask");
    is_str(report,
           "Summary: dispatch found\nRedundant: FindClass Router\nUnexplored: tinyweb/routing.py; a; b; c; d\n"
           "Candidates: Router.match",
           "perceive: fenced reply rendered, list capped at five");
    is_int(nreq() - before, 2, "perceive: a non-string candidate was re-asked");
    pr = req_prompt(before);
    ok(strstr(pr, "You are the Perception Agent") &&
           strstr(pr, "- FindFunction {\"function_name\":\"dispatch_request\"} -> value 70; found tinyweb/app.py:46-51") &&
           strstr(pr, "- FindClass {\"class_name\":\"Router\"} -> value 40; found tinyweb/routing.py:33-60") &&
           strstr(pr, "- tinyweb/app.py:46-51  def dispatch_request(self, request)\n- tinyweb/routing.py:33-60  class Router"),
       "perceive prompt: siblings' attempts and what they found, leads not opened yet");
    free(pr);
    pr = req_prompt(before + 1);
    ok(strstr(pr, "element 1 of field \"candidates\" must be a string") != NULL, "perceive: the re-ask names the element");
    free(pr);
    free(report);
    mcts_free(t);
}

static void test_filter(struct llm_policy *p)
{
    struct policy_curator cu;
    llm_policy_curator(p, &cu);
    struct evidence raw = EVIDENCE_INIT, cur = EVIDENCE_INIT;
    evidence_add(&raw, "tinyweb/app.py", 46, 51, DISPATCH, "def dispatch_request(self, request)", 1);
    char err[512], *text = NULL;
    struct policy_usage u = {0};
    int before = nreq();
    ok(cu.curate(cu.ctx, "case:filter-mixed how is the view called?", "ViewCode", &raw,
                 "Note: one match\ntinyweb/app.py:46-51  def dispatch_request(self, request)\n46 ...", &cur, &text, &u,
                 err, sizeof err) == 0,
       "filter: succeeds");
    is_int(nreq() - before, 1, "filter: one request");
    ok(cur.n == 1 && cur.v[0].start_line == 47 && cur.v[0].end_line == 48, "filter: the valid span kept, narrowed");
    ok(cur.n == 1 && !strcmp(cur.v[0].text,
                             "        \"\"\"Match the URL and call the view function.\"\"\"\n"
                             "        endpoint, args = self.router.match(request.path, request.method)"),
       "filter: text cut from the raw result, not from the reply");
    ok(text && str_starts(text, "Note: one match\ntinyweb/app.py:47-48  def dispatch_request"),
       "filter: notes kept before the curated spans");
    char *pr = req_prompt(before);
    ok(strstr(pr, "You are the Evidence Filter") && strstr(pr, "   51          return self.view_functions"),
       "filter prompt: numbered lines of the candidates");
    free(pr);
    ok(u.input_tokens > 0, "filter: tokens reported to the engine");
    free(text);
    evidence_free(&cur);

    ok(cu.curate(cu.ctx, "case:filter-invented how is the view called?", "ViewCode", &raw, NULL, &cur, &text, &u, err,
                 sizeof err) == 0,
       "filter: invented spans only: still succeeds");
    struct evidence want = EVIDENCE_INIT;
    curate("case:filter-invented how is the view called?", &raw, 1500, &want);
    ok(cur.n == want.n && cur.n == 1 && cur.v[0].start_line == want.v[0].start_line &&
           cur.v[0].end_line == want.v[0].end_line,
       "filter: falls back to the rule-based curation");
    ok(text && str_starts(text, "[filter reply unusable after 3 attempts: none of the 1 spans lies inside the result; "
                                "use only these ranges (or sub-ranges): tinyweb/app.py:46-51; used the rule-based curation]\n"),
       "filter: the fallback noted at the head of the observation");
    if (text) diag("%.*s", 200, text);
    evidence_free(&want);
    free(text);
    evidence_free(&cur);
    evidence_free(&raw);
}

static void test_answer(struct llm_policy *p)
{
    struct policy pol;
    llm_policy_bind(p, &pol);
    char err[1024];
    struct policy_usage u = {0};
    struct policy_answer a = {0};
    int ids[] = {0, 1};

    struct mcts_tree *t = mk_tree("case:answer-reask Where is the view function called?");
    int before = nreq();
    ok(pol.answer(pol.ctx, t, ids, 2, &a, &u, err, sizeof err) == 0, "answer: succeeds");
    is_int(nreq() - before, 2, "answer: an invented citation is re-asked once");
    is_str(a.markdown, "The view function is called in `tinyweb/app.py:46-51`, at `tinyweb/app.py:51`.",
           "answer: the second answer is used");
    ok(a.cites.n == 2 && a.cites.v[1].start_line == 51 && a.cites.v[1].end_line == 51, "answer: its citations listed");
    char *pr = req_prompt(before + 1);
    ok(strstr(pr, "These citations match no evidence you were shown: tinyweb/nowhere.py:1-3.") &&
           strstr(pr, "The spans you may cite (or sub-ranges of them): tinyweb/app.py:46-51."),
       "answer re-ask: names the invalid citation and lists the valid spans");
    free(pr);
    pr = req_prompt(before);
    ok(strstr(pr, "You are the Answer Agent") && strstr(pr, "   51          return self.view_functions") &&
           strstr(pr, "A where-question: give the location first"),
       "answer prompt: numbered evidence and the type hint");
    free(pr);
    cJSON *body = req_body(before);
    ok(cJSON_GetNumberValue(cJSON_GetObjectItem(body, "temperature")) == 0, "answer: temperature 0");
    cJSON_Delete(body);
    policy_answer_clear(&a);
    mcts_free(t);

    t = mk_tree("case:answer-stubborn Where is the view function called?");
    ok(pol.answer(pol.ctx, t, ids, 2, &a, &u, err, sizeof err) == 0, "answer: stubborn invalid citation");
    is_str(a.markdown,
           "It is in `tinyweb/app.py:46-51` and in  for sure.\n\n_1 citation that matched no evidence on the "
           "trajectory was removed._\n",
           "answer: the invalid citation removed from the text and the removal said");
    ok(a.cites.n == 1 && !strcmp(a.cites.v[0].path, "tinyweb/app.py"), "answer: only the seen span cited");
    policy_answer_clear(&a);
    mcts_free(t);

    t = mk_tree("case:answer-nocite Where is the view function called?");
    before = nreq();
    ok(pol.answer(pol.ctx, t, ids, 2, &a, &u, err, sizeof err) == 0 && a.cites.n == 1, "answer: no citation re-asked");
    pr = req_prompt(before + 1);
    ok(strstr(pr, "The answer must cite at least one span") && strstr(pr, "a where-question asks for a location"),
       "answer re-ask: asks for a citation and a location");
    free(pr);
    policy_answer_clear(&a);
    mcts_free(t);

    t = mk_tree("case:answer-bad Where is the view function called?");
    int fa = fbc.answer;
    ok(pol.answer(pol.ctx, t, ids, 2, &a, &u, err, sizeof err) == 0 && !strcmp(a.markdown, "fallback answer") &&
           fbc.answer - fa == 1,
       "answer: an empty reply three times: the fallback's answer");
    policy_answer_clear(&a);
    mcts_free(t);
}

static void test_json_mode(void)
{
    struct llm_backend *b = mk_backend(1);
    struct llm_policy *p = mk_policy(b, &fbpol, NULL);
    struct policy pol;
    llm_policy_bind(p, &pol);
    struct mcts_tree *t = mk_tree("case:plan-valid Where is Router?");
    struct policy_action a = {0};
    struct policy_usage u = {0};
    char err[512];
    int before = nreq();
    pol.plan(pol.ctx, t, 4, "", &a, &u, err, sizeof err);
    cJSON *body = req_body(before);
    is_str(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(body, "response_format"), "type")),
           "json_object", "json_mode on: response_format sent");
    cJSON_Delete(body);
    policy_action_clear(&a);
    mcts_free(t);
    llm_policy_free(p);
    llm_backend_free(b);
}

static void test_usage_and_key(struct llm_policy *p, struct llm_usage *run, const char *logpath)
{
    long in = 0, out = 0;
    /* The last question was answer-bad: three answer calls. */
    ok(llm_policy_tokens(p, "answer", &in, &out) == 0 && in > 0 && out > 0, "tokens of the current question per role");
    ok(llm_policy_tokens(p, "planning", &in, &out) == -1 && in == 0, "roles of earlier questions are not counted");
    cJSON *arr = fake_requests(&f), *r;
    int leaks = 0, auth = 0, n = 0;
    cJSON_ArrayForEach(r, arr) {
        n++;
        const char *bodytxt = cJSON_GetStringValue(cJSON_GetObjectItem(r, "body"));
        const char *h = fake_header(r, "authorization");
        if (h && strstr(h, KEY)) auth++;
        if (bodytxt && strstr(bodytxt, KEY)) leaks++;
    }
    cJSON_Delete(arr);
    is_int(auth, n, "every request carries the key in its auth header");
    is_int(leaks, 0, "no request body carries the key");
    struct llm_usage_entry tot;
    llm_usage_get(run, NULL, &tot);
    int others = fake_count(&f, "case:plan-semantic") + fake_count(&f, "case:plan-valid Where is Router?");
    is_int(tot.calls, n - others, "run ledger: every call of the policies that share it");
    size_t len = 0;
    char *log = read_file(logpath, 1 << 24, &len);
    ok(log && len > 0 && !strstr(log, KEY), "the log has notes and no key");
    ok(log && strstr(log, "planning reply unusable after 3 attempts"), "the log records the fallback");
    free(log);
    cJSON *j = llm_policy_usage_json(p);
    char *js = cJSON_PrintUnformatted(j);
    ok(js && !strstr(js, KEY) && strstr(js, "\"answer\""), "usage JSON per role, no key");
    free(js);
    cJSON_Delete(j);
}

static void test_bad_prompt_dir(struct llm_backend *b)
{
    char d[128], path[160];
    snprintf(d, sizeof d, "%s/prompts", dir);
    mkdir(d, 0700);
    const char *names[] = {"perception", "planning", "filter", "evaluation", "answer"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s.txt", d, names[i]);
        FILE *fp = fopen(path, "w");
        fprintf(fp, "%s {{question}}%s\n", names[i], i == 1 ? " {{questoin}}" : "");
        fclose(fp);
    }
    const char *dirs[] = {d};
    struct llm_policy_config c;
    llm_policy_config_init(&c);
    c.backend = b;
    c.prompt_dirs = dirs;
    c.nprompt_dirs = 1;
    char err[512], want[400];
    ok(llm_policy_new(&c, err, sizeof err) == NULL, "an unknown placeholder in an override stops construction");
    snprintf(want, sizeof want, "%s/planning.txt:1: unknown placeholder {{questoin}}", d);
    ok(str_starts(err, want), "the error names the file and line");
    c.backend = NULL;
    ok(llm_policy_new(&c, err, sizeof err) == NULL && strstr(err, "needs a chat backend"), "no backend: an error");
}

int main(void)
{
    if (!temp_dir(dir, sizeof dir, "llmpol")) return 1;
    const char *top = getenv("top_srcdir");
    char *pd = xasprintf("%s/prompts", top && *top ? top : DRQA_SRCDIR);
    srcdirs[0] = pd;
    char logpath[128];
    snprintf(logpath, sizeof logpath, "%s/drqa.log", dir);
    log_open(logpath);

    test_check_plan();
    test_check_eval();
    test_check_perception();
    test_check_filter();
    test_citations();

    char *s = script();
    if (fake_start(&f, s) != 0) {
        free(s);
        ok(0, "fake server started");
        return done_testing();
    }
    free(s);
    struct llm_backend *b = mk_backend(0);
    struct llm_usage run;
    llm_usage_init(&run);
    struct llm_policy *p = mk_policy(b, &fbpol, &run);
    struct llm_policy *nofb = mk_policy(b, NULL, &run);
    ok(p && nofb, "policies built from the shipped prompts");
    if (p && nofb) {
        test_plan_roles(p, nofb);
        test_semantic_refused(b);
        test_eval_perceive(p);
        test_filter(p);
        test_answer(p);
        test_json_mode();
        test_usage_and_key(p, &run, logpath);
        test_bad_prompt_dir(b);
    }
    llm_policy_free(p);
    llm_policy_free(nofb);
    llm_usage_destroy(&run);
    llm_backend_free(b);
    log_close();
    fake_stop(&f);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    free(cmd);
    free(pd);
    return done_testing();
}
