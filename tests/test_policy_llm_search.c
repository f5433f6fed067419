/* The LLM policy driving a whole search over an index of a copy of
 * tests/fixtures/pyrepo, against the scripted fake server which recognises
 * each role from its prompt: the planned chain FindFunction -> ViewCode ->
 * Finish runs, the filter's invented span is dropped, the answer's invented
 * citation is re-asked and the final answer cites only evidence seen on the
 * trajectory; tokens add up per role; the API key is in no request body,
 * transcript or log, only in the auth header. A second search gets unusable planning
 * replies throughout and runs on the offline policy's plans, each noted. */
#include "tap.h"
#include "harness.h"
#include "fake_llm.h"
#include "llm_config.h"
#include "action.h"
#include "index.h"
#include "llm.h"
#include "fake_backend.h"
#include "policy_llm.h"
#include "policy_offline.h"
#include "search.h"
#include "transcript.h"
#include "util.h"

#include <sqlite3.h>
#include <stdlib.h>

#define KEY "sk-search-Lm3SECRETkey77"

static struct fake f;
static char T[256];

static int ex_execute(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text, char *err,
                      size_t errlen)
{
    struct action_result r;
    if (action_run(ctx, name, args, &r, err, errlen) != ACTION_OK) {
        action_result_free(&r);
        return -1;
    }
    evidence_copy(raw, &r.ev);
    *text = action_result_render(&r, 0);
    action_result_free(&r);
    return 0;
}

static void rule(cJSON *rs, const char *match, int times, const char *content)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "match", match);
    if (times > 0) cJSON_AddNumberToObject(r, "times", times);
    cJSON_AddStringToObject(r, "content", content);
    cJSON_AddItemToArray(rs, r);
}

static char *script(void)
{
    cJSON *root = cJSON_CreateObject(), *rs = cJSON_AddArrayToObject(root, "rules");
    /* Search B: planning replies are never usable; its answer cites a span it may not have seen. */
    rule(rs, "case:garbage\nIdentifiers written", 0, "I am not sure what to do next.");
    rule(rs, "case:garbage\nA how-question", 0,
         "{\"answer\": \"Router.match walks the rules and then calls the converter (`tinyweb/routing.py:120-139`).\"}");
    /* Search A and the shared roles. */
    rule(rs, "You are the Perception Agent", 0,
         "{\"summary\": \"the dispatch method is the lead\", \"candidates\": [\"App.dispatch_request\"]}");
    rule(rs, "You are the Planning Agent", 1,
         "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\", \"class_name\": \"App\"},"
         " \"rationale\": \"the question names it\"}");
    rule(rs, "You are the Planning Agent", 1,
         "Reading the file around it:\n```json\n{\"action\": \"ViewCode\", \"args\": {\"code_span_list\": "
         "[\"tinyweb/app.py:40-60\"]}}\n```");
    rule(rs, "You are the Planning Agent", 0,
         "{\"action\": \"Finish\", \"args\": {\"answer\": \"see tinyweb/app.py\", \"finish_reason\": \"the call is found\"}}");
    rule(rs, "You are the Evidence Filter", 0,
         "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51},"
         " {\"path\": \"tinyweb/invented.py\", \"start_line\": 1, \"end_line\": 9}]}");
    rule(rs, "You are the Evaluation Agent", 0, "{\"value\": 80, \"feedback\": \"read the definition\"}");
    rule(rs, "You are the Answer Agent", 1,
         "{\"answer\": \"It is called in `tinyweb/app.py:46-51` and `tinyweb/nowhere.py:1-3`.\"}");
    rule(rs, "You are the Answer Agent", 0,
         "{\"answer\": \"`App.dispatch_request` (`tinyweb/app.py:46-51`) matches the URL and then calls the view "
         "function at `tinyweb/app.py:51`.\"}");
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

static struct llm_backend *mk_backend(void)
{
    char ebase[160];
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s/v1", f.base);
    const char *env[] = {ebase, "DRQA_MODEL=fake-model", "DRQA_PROVIDER=openai", "DRQA_API_KEY=" KEY, NULL};
    char cpath[128];
    snprintf(cpath, sizeof cpath, "%s/none.conf", T);
    return fake_backend(cpath, "retries = 0\nbackoff_ms = 1\n", env);
}

/* Every citation of a lies in the observation of a node of its trajectory. */
static int all_seen(const struct mcts_tree *t, const struct search_answer *a)
{
    for (size_t i = 0; i < a->cites.n; i++) {
        int seen = 0;
        for (size_t k = 0; k < a->npath && !seen; k++)
            seen = evidence_covers(&mcts_node(t, a->path[k])->obs, a->cites.v[i].path, a->cites.v[i].start_line,
                                   a->cites.v[i].end_line);
        if (!seen) return 0;
    }
    return 1;
}

static long role_in(struct llm_policy *p, const char *role)
{
    long in = 0;
    llm_policy_tokens(p, role, &in, NULL);
    return in;
}

int main(void)
{
    if (!temp_dir(T, sizeof T, "llmsearch")) return 1;
    char *logpath = xasprintf("%s/drqa.log", T);
    log_open(logpath);
    const char *top = getenv("top_srcdir");
    if (!top || !*top) top = DRQA_SRCDIR;
    char *cmd = xasprintf("cp -r '%s/tests/fixtures/pyrepo' '%s/repo'", top, T);
    int cprc = system(cmd);
    free(cmd);
    char *repo = xasprintf("%s/repo", T), *ipath = xasprintf("%s/index.sqlite", T);
    char *pdir = xasprintf("%s/prompts", top);
    const char *dirs[] = {pdir};
    char err[1024];
    struct index_options io = {.threads = 1};
    if (cprc != 0 || index_update(repo, ipath, &io, NULL, err, sizeof err) != 0) {
        ok(0, "index the fixture: %s", err);
        return done_testing();
    }
    sqlite3 *db = NULL;
    sqlite3_open_v2(ipath, &db, SQLITE_OPEN_READONLY, NULL);
    struct action_ctx actx;
    action_ctx_init(&actx, db, repo);

    char *s = script();
    if (fake_start(&f, s) != 0) {
        free(s);
        ok(0, "fake server started");
        return done_testing();
    }
    free(s);
    struct llm_backend *b = mk_backend();

    struct offline_config oc = {.db = db, .actx = &actx, .no_semantic = 1};
    struct offline_policy *off = offline_policy_new(&oc);
    struct policy offpol;
    offline_policy_bind(off, &offpol);

    struct llm_policy_config lc;
    llm_policy_config_init(&lc);
    lc.backend = b;
    lc.fallback = &offpol;
    lc.no_semantic = 1;
    lc.filter_min_bytes = -1;
    lc.prompt_dirs = dirs;
    lc.nprompt_dirs = 1;
    struct llm_policy *lp = llm_policy_new(&lc, err, sizeof err);
    ok(lp != NULL, "LLM policy built with the offline fallback");
    if (!lp) diag("%s", err);
    struct policy pol;
    struct policy_curator cu;
    llm_policy_bind(lp, &pol);
    llm_policy_curator(lp, &cu);
    struct policy_executor ex = {&actx, ex_execute};

    /* ---- search A: the scripted chain ---- */
    struct search_config sc;
    search_config_defaults(&sc);
    sc.max_expand = 1;
    const char *qa = "Where does App.dispatch_request call the view function?";
    struct search *sa = search_new(&sc, &pol, &ex, &cu, qa);
    while (search_step(sa)) {}
    const struct mcts_tree *t = search_tree(sa);
    is_str(search_stop_name(search_stop_reason(sa)), "finish", "A: the search stops on Finish");
    is_int(t->iterations, 3, "A: three iterations");
    const struct mcts_node *n1 = mcts_node(t, 1), *n2 = mcts_node(t, 2), *n3 = mcts_node(t, 3);
    ok(n1 && n2 && n3 && !strcmp(n1->action, "FindFunction") && !strcmp(n2->action, "ViewCode") &&
           !strcmp(n3->action, "Finish") && n3->status == MCTS_FINISHED,
       "A: FindFunction, ViewCode, Finish");
    ok(n1 && n1->status == MCTS_DONE && n1->value == 80 && !strcmp(n1->feedback, "read the definition") &&
           !strcmp(n1->report, "Summary: the dispatch method is the lead\nCandidates: App.dispatch_request"),
       "A: report, value and feedback from the model");
    ok(n1 && n1->obs.n == 1 && !strcmp(n1->obs.v[0].path, "tinyweb/app.py") && n1->obs.v[0].start_line == 46 &&
           n1->obs.v[0].end_line == 51,
       "A: the filter's invented span is dropped");
    ok(n2 && n2->obs.n == 1 && n2->obs.v[0].start_line == 46 && n2->obs.v[0].end_line == 51 &&
           n2->obs.v[0].text && str_starts(n2->obs.v[0].text, "    def dispatch_request(self, request):") &&
           str_ends(n2->obs.v[0].text, "return self.view_functions[endpoint](request, **args)"),
       "A: ViewCode narrowed to the lines the filter chose, text from the file");

    struct search_answer *a = search_answer(sa);
    ok(a->from_finished && !a->error, "A: the answer comes from the finished trajectory");
    is_int(a->dropped, 0, "A: no citation left for the engine to drop");
    is_int(a->fallback_cite, 0, "A: the answer's own citations are used");
    is_int(a->cites.n, 1, "A: one citation (the line inside the span is the same evidence)");
    ok(all_seen(t, a), "A: every citation was seen on the trajectory");
    ok(!strstr(a->markdown, "nowhere.py") && strstr(a->markdown, "`tinyweb/app.py:46-51`"),
       "A: the invented citation was re-asked away");
    is_int(fake_count(&f, "These citations match no evidence you were shown: tinyweb/nowhere.py:1-3."), 1,
           "A: one re-ask named the invented citation");

    char *tj = transcript_json(t, NULL, a), *tm = transcript_markdown(t, a);
    ok(tj && tm && !strstr(tj, KEY) && !strstr(tm, KEY), "A: the transcripts do not hold the key");
    free(tj);
    free(tm);

    cJSON *reqs = fake_requests(&f), *r;
    int unmatched = 0, nr = 0, keyed = 0, leaked = 0;
    long fake_in = 0;
    cJSON_ArrayForEach(r, reqs) {
        nr++;
        const char *rule_name = cJSON_GetStringValue(cJSON_GetObjectItem(r, "rule"));
        if (!rule_name || !strcmp(rule_name, "default")) unmatched++;
        const char *h = fake_header(r, "authorization");
        keyed += h && strstr(h, KEY) != NULL;
        const char *bd = cJSON_GetStringValue(cJSON_GetObjectItem(r, "body"));
        leaked += bd && strstr(bd, KEY) != NULL;
        const char *pr = cJSON_GetStringValue(cJSON_GetObjectItem(r, "prompt"));
        fake_in += ((long)strlen(pr ? pr : "") + 3) / 4;
    }
    cJSON_Delete(reqs);
    is_int(unmatched, 0, "A: every request was recognised by its role");
    is_int(keyed, nr, "A: every request authenticates with the key");
    is_int(leaked, 0, "A: no request body holds the key");
    /* 3 perception + 3 planning + 2 filter + 3 evaluation + 2 answer */
    is_int(nr, 13, "A: thirteen model calls");
    long tin = 0, tout = 0;
    llm_policy_tokens(lp, NULL, &tin, &tout);
    is_int(tin, fake_in, "A: input tokens are the server's counts");
    is_int(t->tokens_in, tin, "A: the tree's total equals the policy's (answer included)");
    is_int(role_in(lp, "perception") + role_in(lp, "planning") + role_in(lp, "filter") + role_in(lp, "evaluation") +
               role_in(lp, "answer"),
           tin, "A: the roles add up to the total");
    search_answer_free(a);
    search_free(sa);

    /* ---- search B: unusable plans throughout ---- */
    sc.max_expand = 3;
    sc.iterations = 6;
    const char *qb = "How does the router match a path to an endpoint? case:garbage";
    struct search *sb = search_new(&sc, &pol, &ex, &cu, qb);
    while (search_step(sb)) {}
    t = search_tree(sb);
    int noted = 0, errors = 0;
    for (int i = 1; i < t->n; i++) {
        const struct mcts_node *n = mcts_node(t, i);
        if (n->status == MCTS_ERROR) {
            errors++;
            diag("node %d: %s", i, n->error);
        }
        if (n->rationale && str_starts(n->rationale, "[planning reply unusable after 3 attempts: no usable JSON object "
                                                     "in the reply: ") &&
            strstr(n->rationale, "; used the offline plan]"))
            noted++;
    }
    ok(t->iterations >= 1 && errors == 0, "B: the search runs on without errors (%d iterations)", t->iterations);
    is_int(noted, t->n - 1, "B: every node's plan is the offline one, noted in its rationale");
    const char *const *notes;
    size_t nn = llm_policy_notes(lp, &notes);
    ok(nn >= (size_t)noted, "B: the notes list them too");
    a = search_answer(sb);
    ok(all_seen(t, a) && a->dropped == 0, "B: every citation of the answer was seen");
    ok(a->cites.n >= 1, "B: the answer cites something");
    search_answer_free(a);
    search_free(sb);

    log_close();
    size_t loglen = 0;
    char *logtext = read_file(logpath, 1 << 24, &loglen);
    ok(logtext && strstr(logtext, "planning reply unusable") && !strstr(logtext, KEY), "the log has the notes, not the key");
    free(logtext);
    free(logpath);
    llm_policy_free(lp);
    offline_policy_free(off);
    llm_backend_free(b);
    fake_stop(&f);
    action_ctx_release(&actx);
    sqlite3_close(db);
    cmd = xasprintf("rm -rf '%s'", T);
    if (system(cmd) != 0) diag("cleanup failed");
    free(cmd);
    free(repo);
    free(ipath);
    free(pdir);
    return done_testing();
}
