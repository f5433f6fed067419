/*
 * test_offline_policy: the offline policy's decisions on the pyrepo fixture:
 * the first action for literal class names, quoted code and conceptual
 * questions; following a called method; siblings taking different
 * candidates; no evidence-derived leads without perception; evaluation
 * values and feedback; and whole searches whose answers cite spans that were
 * seen and exist, identically from run to run.
 */
#include "action.h"
#include "coverage.h"
#include "index.h"
#include "mcts.h"
#include "policy_tree.h"
#include "policy_offline.h"
#include "search.h"
#include "semantic.h"
#include "store.h"
#include "tap.h"
#include "harness.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sqlite3 *db;
static struct action_ctx actx;
static struct offline_policy *op;
static struct policy pol;
static char root[512];

static int execute(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text, char *err,
                   size_t errlen)
{
    (void)ctx;
    struct action_result r;
    int rc = action_run(&actx, name, args, &r, err, errlen);
    if (rc == ACTION_OK) {
        evidence_copy(raw, &r.ev);
        *text = action_result_render(&r, 0);
    }
    action_result_free(&r);
    return rc == ACTION_OK ? 0 : -1;
}

/* Plans node id and records the action on it as the engine would. */
static void plan_node(struct mcts_tree *t, int id, int perceive, struct policy_action *out)
{
    char err[256] = "";
    struct policy_usage u = {0};
    char *report = NULL;
    if (perceive) ok(pol.perceive(op, t, id, &report, &u, err, sizeof err) == 0, "perceive node %d", id);
    memset(out, 0, sizeof *out);
    ok(pol.plan(op, t, id, report ? report : "", out, &u, err, sizeof err) == 0, "plan node %d %s", id, err);
    struct mcts_node *n = mcts_node_mut(t, id);
    n->action = xstrdup(out->name);
    n->args = cJSON_Duplicate(out->args, 1);
    n->args_key = mcts_action_key(out->name, out->args);
    n->report = report ? report : xstrdup("");
}

/* Runs the planned action of node id into its observation. */
static void run_node(struct mcts_tree *t, int id)
{
    struct mcts_node *n = mcts_node_mut(t, id);
    char err[256];
    char *text = NULL;
    ok(execute(NULL, n->action, n->args, &n->obs, &text, err, sizeof err) == 0, "run %s", n->action);
    n->obs_text = text;
    n->status = MCTS_DONE;
}

/* The first span of a ViewCode's arguments, or NULL. */
static const char *first_span(const cJSON *args)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(args, "code_span_list");
    const cJSON *sp = cJSON_IsArray(l) ? cJSON_GetArrayItem(l, 0) : NULL;
    return cJSON_IsString(sp) ? sp->valuestring : NULL;
}

/* Adds the root's first child to t, plans it with perception and checks
 * that its action is want (what: the check's words), keeps the planned
 * action in *keep (policy_action_clear it) when keep is not NULL, and runs
 * it. Returns the child's id. */
static int first_step(struct mcts_tree *t, const char *want, const char *what, struct policy_action *keep)
{
    int id = mcts_add_child(t, 0);
    struct policy_action a;
    plan_node(t, id, 1, &a);
    is_str(a.name, want, "%s", what);
    if (keep) *keep = a;
    else policy_action_clear(&a);
    run_node(t, id);
    return id;
}

/* Adds a child to parent (its id in *child) and returns the planner's
 * candidates for it (cJSON_Delete them). */
static cJSON *child_candidates(struct mcts_tree *t, int parent, int *child)
{
    *child = mcts_add_child(t, parent);
    return offline_policy_candidates(op, t, *child, 1);
}

/* 1 when a ViewCode among the candidates reads a span starting with prefix. */
static int views_from(const cJSON *cands, const char *prefix)
{
    for (const cJSON *c = cands ? cands->child : NULL; c; c = c->next) {
        const char *sp = !strcmp(cJSON_GetObjectItem(c, "action")->valuestring, "ViewCode")
                             ? first_span(cJSON_GetObjectItem(c, "args"))
                             : NULL;
        if (sp && !strncmp(sp, prefix, strlen(prefix))) return 1;
    }
    return 0;
}

/* 1 when a SemanticSearch among the candidates has no query. */
static int searches_nothing(const cJSON *cands)
{
    for (const cJSON *c = cands ? cands->child : NULL; c; c = c->next) {
        const cJSON *qv = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "args"), "query");
        if (!strcmp(cJSON_GetObjectItem(c, "action")->valuestring, "SemanticSearch") &&
            (!cJSON_IsString(qv) || !*qv->valuestring))
            return 1;
    }
    return 0;
}

static const char *arg(const struct policy_action *a, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a->args, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void first_action(const char *question, const char *want, const char *key, const char *value)
{
    struct mcts_tree *t = mcts_new(question, 3, -1, 1);
    int id = mcts_add_child(t, 0);
    struct policy_action a;
    plan_node(t, id, 1, &a);
    is_str(a.name, want, "first action for: %s", question);
    if (key) is_str(arg(&a, key), value, "its %s", key);
    policy_action_clear(&a);
    mcts_free(t);
}

static void test_first_actions(void)
{
    first_action("What does the DatabaseSession class store?", "FindClass", "class_name", "DatabaseSession");
    first_action("How does SessionBase.cycle_key keep the data?", "FindFunction", "function_name", "cycle_key");
    first_action("Where is \"self.router.match(\" called?", "FindCodeSnippet", "code_snippet", "self.router.match(");
    first_action("How are expired sessions detected?", "SemanticSearch", "category", "implementation");
    first_action("What is in tinyweb/routing.py?", "Outline", "path", "tinyweb/routing.py");
    first_action("What calls cycle_key?", "FindReferences", "symbol", "cycle_key");
    first_action("Which classes inherit from SessionBase?", "FindReferences", "symbol", "SessionBase");
}

/* The report names the question's kind in plain words: "a how-question",
 * and for a question of no such kind not "a other-question". */
static void test_report_kind(void)
{
    const char *qs[2] = {"How are expired sessions detected?", "Explain the session store."};
    const char *want[2] = {"situation: a how-question", "situation: a question of no set kind"};
    for (int i = 0; i < 2; i++) {
        struct mcts_tree *t = mcts_new(qs[i], 3, -1, 1);
        int id = mcts_add_child(t, 0);
        char err[256] = "", *report = NULL;
        struct policy_usage u = {0};
        int rc = pol.perceive(op, t, id, &report, &u, err, sizeof err);
        ok(rc == 0 && report && strstr(report, want[i]), "%s: the report says '%s'%s%s", qs[i], want[i],
           rc ? ": " : "", rc ? err : "");
        free(report);
        mcts_free(t);
    }
}

/* A module-level object the question writes under its package
 * ("tinyweb.sessions.backends"): ViewCode reads the bare name the index
 * defines; the dotted name, no symbol of the index, failed. */
static void test_dotted_object(void)
{
    struct mcts_tree *t = mcts_new("How is tinyweb.sessions.backends filled?", 3, -1, 1);
    struct policy_action a;
    int id = first_step(t, "ViewCode", "a module-level object named in the question is read first", &a);
    const char *sp = first_span(a.args);
    is_str(sp ? sp : "", "backends", "by the name the index defines, not tinyweb.sessions.backends");
    policy_action_clear(&a);
    ok(mcts_node(t, id)->obs.n > 0, "and ViewCode finds it");
    mcts_free(t);
}

/* a call FindReferences found is one line: read again, it is read as the
 * definition around it */
static void test_reference_read_whole(void)
{
    struct mcts_tree *t = mcts_new("What calls cycle_key?", 3, -1, 1);
    int n1 = first_step(t, "FindReferences", "the callers first", NULL);
    const struct mcts_node *m = mcts_node(t, n1);
    ok(m->obs.n >= 1 && m->obs.v[0].start_line == m->obs.v[0].end_line, "a call is found, one line");
    int n2;
    cJSON *cands = child_candidates(t, n1, &n2);
    int snapped = 0, single = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cands) {
        const cJSON *args = cJSON_GetObjectItem(c, "args");
        if (strcmp(cJSON_GetObjectItem(c, "action")->valuestring, "ViewCode")) continue;
        const char *sp = first_span(args);
        int a0 = 0, b0 = 0;
        if (sp && strrchr(sp, ':') && sscanf(strrchr(sp, ':') + 1, "%d-%d", &a0, &b0) == 2 && a0 == b0) {
            single = 1;
            snapped |= cJSON_IsTrue(cJSON_GetObjectItem(args, "snap_to_definition"));
        }
    }
    ok(single && snapped, "reading the one line again widens it to its definition (snap_to_definition)");
    cJSON_Delete(cands);
    mcts_free(t);
}

/* "What does routing.py do?": the file is outlined first; the outline lists
 * definitions but reads no code, so its node says so (not "nothing found")
 * and its child reads the file's head; no search without words is planned. */
static void test_outline_then_head(void)
{
    struct mcts_tree *t = mcts_new("What does tinyweb/routing.py do?", 3, -1, 1);
    int n1 = first_step(t, "Outline", "the named file is outlined first", NULL);
    const struct mcts_node *m = mcts_node(t, n1);
    ok(m->obs.n == 0 && m->obs_text && strstr(m->obs_text, "Router"), "the outline lists definitions, no code span");
    char err[256] = "";
    struct policy_usage u = {0};
    struct policy_eval ev = {0};
    ok(pol.evaluate(op, t, n1, &ev, &u, err, sizeof err) == 0, "evaluate the outline %s", err);
    ok(ev.feedback && !strstr(ev.feedback, "nothing found") && strstr(ev.feedback, "outline"),
       "its feedback says it is an outline, not that nothing was found: %s", ev.feedback ? ev.feedback : "");
    ok(ev.value > 5, "and values it above a step that found nothing (%.0f)", ev.value);
    free(ev.feedback);
    mcts_node_mut(t, n1)->has_value = 1;
    mcts_node_mut(t, n1)->value = ev.value;
    int n2;
    cJSON *cands = child_candidates(t, n1, &n2);
    ok(views_from(cands, "tinyweb/routing.py:1-"), "its child reads the head of routing.py");
    ok(!searches_nothing(cands), "no SemanticSearch without a query is a candidate");
    struct policy_action b;
    plan_node(t, n2, 1, &b);
    is_str(b.name, "ViewCode", "and the planner takes it");
    policy_action_clear(&b);
    cJSON_Delete(cands);
    mcts_free(t);
}

static void test_follow_up(void)
{
    const char *q = "How does App.dispatch_request find the view function?";
    struct mcts_tree *t = mcts_new(q, 3, -1, 1);
    struct policy_action a;
    int n1 = first_step(t, "FindFunction", "the literal method first", &a);
    is_str(arg(&a, "function_name"), "dispatch_request", "by its name");
    is_str(arg(&a, "class_name"), "App", "in its class");
    policy_action_clear(&a);
    ok(mcts_node(t, n1)->obs.n >= 1, "found it");

    int n2;
    cJSON *cands = child_candidates(t, n1, &n2);
    int lead = 0, view = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, cands) {
        const char *name = cJSON_GetObjectItem(c, "action")->valuestring;
        const cJSON *fn = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "args"), "function_name");
        if (!strcmp(name, "FindFunction") && cJSON_IsString(fn) && !strcmp(fn->valuestring, "match") &&
            strstr(cJSON_GetObjectItem(c, "why")->valuestring, "called"))
            lead = 1;
        if (!strcmp(name, "ViewCode")) view = 1;
    }
    ok(lead, "the method it calls (router.match) is a candidate");
    ok(view, "reading the span again is a candidate");
    cJSON_Delete(cands);

    plan_node(t, n2, 1, &a);
    ok(!strcmp(a.name, "FindFunction") || !strcmp(a.name, "ViewCode") || !strcmp(a.name, "SemanticSearch"),
       "it follows the evidence: %s", a.name);
    diag("step 2: %s %s", a.name, a.rationale ? a.rationale : "");
    char *report = xstrdup(mcts_node(t, n2)->report);
    ok(strstr(report, "leads not looked up yet:") && strstr(report, "match"), "the report names the lead");
    ok(strstr(report, "best span: tinyweb/app.py:") != NULL, "the report names the best span");
    free(report);
    policy_action_clear(&a);

    /* without perception the plan uses no lead from the evidence */
    int n3 = mcts_add_child(t, n1);
    plan_node(t, n3, 0, &a);
    ok(!(strcmp(a.name, "FindFunction") == 0 && strcmp(arg(&a, "function_name"), "match") == 0),
       "no-perception does not follow leads: %s %s", a.name, arg(&a, "function_name"));
    policy_action_clear(&a);
    mcts_free(t);
}

static void test_siblings(void)
{
    const char *q = "How are expired sessions detected?";
    struct mcts_tree *t = mcts_new(q, 3, -1, 1);
    int first = mcts_add_child(t, 0);
    cJSON *cands = offline_policy_candidates(op, t, first, 1);
    char *keys[3];
    for (int k = 0; k < 3; k++) {
        int id = k == 0 ? first : mcts_add_child(t, 0);
        struct policy_action a;
        plan_node(t, id, 1, &a);
        keys[k] = xstrdup(mcts_node(t, id)->args_key);
        cJSON *c = cJSON_GetArrayItem(cands, k);
        char *want = mcts_action_key(cJSON_GetObjectItem(c, "action")->valuestring, cJSON_GetObjectItem(c, "args"));
        is_str(keys[k], want, "sibling %d takes candidate %d", k + 1, k + 1);
        free(want);
        policy_action_clear(&a);
        run_node(t, id);
    }
    ok(strcmp(keys[0], keys[1]) && strcmp(keys[1], keys[2]) && strcmp(keys[0], keys[2]), "siblings differ");
    for (int k = 0; k < 3; k++) free(keys[k]);
    cJSON_Delete(cands);

    /* evaluation: a node with evidence scores above one without */
    struct policy_eval e1 = {0}, e2 = {0};
    struct policy_usage u = {0};
    char err[256];
    ok(pol.evaluate(op, t, first, &e1, &u, err, sizeof err) == 0, "evaluate");
    int empty = mcts_add_child(t, first);
    struct mcts_node *en = mcts_node_mut(t, empty);
    en->action = xstrdup("FindClass");
    en->args = cJSON_Parse("{\"class_name\":\"NoSuchThing\"}");
    en->status = MCTS_DONE;
    ok(pol.evaluate(op, t, empty, &e2, &u, err, sizeof err) == 0, "evaluate an empty result");
    is_int((int)e2.value, 5, "nothing found: 5");
    ok(e1.value > 40, "relevant evidence scores high (%.0f)", e1.value);
    ok(e1.feedback && strstr(e1.feedback, "covers"), "feedback: %s", e1.feedback ? e1.feedback : "");
    ok(e2.feedback && strstr(e2.feedback, "nothing found"), "feedback names the failure");
    double rv = -1;
    ok(pol.rollout(op, t, first, &rv, &u, err, sizeof err) == 0 && rv > 10 && rv <= 90, "rollout value %.0f", rv);
    is_int(u.input_tokens + u.output_tokens, 0, "no tokens spent");
    policy_eval_clear(&e1);
    policy_eval_clear(&e2);
    mcts_free(t);
}

static char *run_search(const char *question, struct search_config *sc, int *ncites, char ***paths, int **ends)
{
    struct policy_executor ex = {NULL, execute};
    struct policy_curator cu = {NULL, NULL};
    offline_policy_set_iterations(op, sc->iterations);
    struct search *s = search_new(sc, &pol, &ex, &cu, question);
    while (search_step(s)) {
    }
    struct search_answer *a = search_answer(s);
    char *md = xstrdup(a->markdown);
    *ncites = (int)a->cites.n;
    *paths = xcalloc(a->cites.n + 1, sizeof **paths);
    *ends = xcalloc(a->cites.n + 1, sizeof **ends);
    for (size_t i = 0; i < a->cites.n; i++) {
        (*paths)[i] = xstrdup(a->cites.v[i].path);
        (*ends)[i] = a->cites.v[i].end_line;
    }
    is_int(a->dropped, 0, "no citation had to be dropped");
    is_int(a->fallback_cite, 0, "the policy's own citations were kept");
    search_answer_free(a);
    search_free(s);
    return md;
}

static int file_lines(const char *rel)
{
    char *p = xasprintf("%s/%s", root, rel);
    size_t len = 0;
    char *text = read_file(p, 1 << 20, &len);
    free(p);
    if (!text) return -1;
    int n = 0;
    for (size_t i = 0; i < len; i++) n += text[i] == '\n';
    free(text);
    return n;
}

static void test_search(void)
{
    struct search_config sc;
    search_config_defaults(&sc);
    const char *q = "What happens to the session when a user logs out?";
    int n1, n2;
    char **p1, **p2;
    int *e1, *e2;
    char *a1 = run_search(q, &sc, &n1, &p1, &e1);
    ok(n1 >= 1, "at least one citation (%d)", n1);
    int exist = 1, flush = 0;
    for (int i = 0; i < n1; i++) {
        int lines = file_lines(p1[i]);
        if (lines < e1[i]) exist = 0;
        if (!strcmp(p1[i], "tinyweb/sessions/base.py") || !strcmp(p1[i], "tinyweb/auth.py")) flush = 1;
    }
    ok(exist, "every cited span lies within its file");
    ok(flush, "the answer cites the session or auth module");
    ok(strstr(a1, "logout") || strstr(a1, "flush"), "the answer names logout or flush");
    char *a2 = run_search(q, &sc, &n2, &p2, &e2);
    is_str(a2, a1, "the same search gives the same answer");
    for (int i = 0; i < n1; i++) free(p1[i]);
    for (int i = 0; i < n2; i++) free(p2[i]);
    free(p1);
    free(p2);
    free(e1);
    free(e2);
    free(a1);
    free(a2);

    sc.no_mcts = 1;
    sc.no_perception = 1;
    sc.no_evaluation = 1;
    a1 = run_search("Where is the URL pattern compiled into a regular expression?", &sc, &n1, &p1, &e1);
    ok(n1 >= 1 && !strcmp(p1[0], "tinyweb/routing.py"), "ablated search still cites routing.py first (%s)",
       n1 ? p1[0] : "none");
    for (int i = 0; i < n1; i++) free(p1[i]);
    free(p1);
    free(e1);
    free(a1);
}

/* The answer is tree-wide: the trajectory's spans first, then the strongest
 * span seen off the trajectory; the policy says so, so that the search
 * verifies its citations against the whole tree. */
static void test_answer_tree(void)
{
    const char *q = "How does App.dispatch_request find the view function?";
    struct mcts_tree *t = mcts_new(q, 3, -1, 1);
    int a = mcts_add_child(t, 0), b = mcts_add_child(t, 0);
    struct mcts_node *na = mcts_node_mut(t, a), *nb = mcts_node_mut(t, b);
    na->action = xstrdup("FindFunction");
    na->args = cJSON_Parse("{\"function_name\": \"dispatch_request\"}");
    nb->action = xstrdup("FindFunction");
    nb->args = cJSON_Parse("{\"function_name\": \"dispatch\", \"class_name\": \"Router\"}");
    run_node(t, a);
    run_node(t, b);
    nb->has_value = 1;
    nb->value = 80;
    ok(na->obs.n > 0 && nb->obs.n > 0, "both nodes found their definitions");
    ok(pol.answer_from_tree, "the offline policy answers from the whole tree");
    int path[2] = {0, a};
    char err[256] = "";
    struct policy_answer tree = {0};
    struct policy_usage u = {0};
    ok(pol.answer(op, t, path, 2, &tree, &u, err, sizeof err) == 0, "tree answer %s", err);
    int tree_router = 0;
    for (size_t i = 0; i < tree.cites.n; i++) tree_router |= !strcmp(tree.cites.v[i].path, "tinyweb/routing.py");
    ok(tree_router, "the answer also cites routing.py, seen by the sibling");
    is_str(tree.cites.n ? tree.cites.v[0].path : "", "tinyweb/app.py", "the trajectory's definition is cited first");
    ok(tree.markdown && strstr(tree.markdown, "tinyweb/routing.py"), "the answer names what it cites");
    policy_answer_clear(&tree);
    /* a pruned sibling's spans are not evidence any more */
    nb->status = MCTS_PRUNED;
    ok(pol.answer(op, t, path, 2, &tree, &u, err, sizeof err) == 0, "answer after pruning %s", err);
    /* (the flat ranker's windows may still cite routing.py: as read for
     * the answer, not as the sibling's) */
    int sibling = 0;
    for (size_t i = 0; i < tree.cites.n; i++)
        sibling |= !strcmp(tree.cites.v[i].path, "tinyweb/routing.py") &&
                   !evidence_covers(&tree.read, tree.cites.v[i].path, tree.cites.v[i].start_line,
                                    tree.cites.v[i].end_line);
    ok(!sibling, "nothing of the pruned sibling is cited as the tree's");
    policy_answer_clear(&tree);
    mcts_free(t);
}

/* The coverage a line states, from "covers" to the end of its missing list. */
static char *stated(const char *text, const char *prefix)
{
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char *line = xstrndup(l, len);
        char *c = !strncmp(line, prefix, strlen(prefix)) ? strstr(line, "covers ") : NULL;
        if (c) {
            char *aside = strstr(c, " (+");   /* the feedback's gain is its own */
            if (aside) memmove(aside, strchr(aside, ')') + 1, strlen(strchr(aside, ')') + 1) + 1);
            /* up to the first part that is not the missing list */
            for (char *semi = strstr(c, "; "); semi; semi = strstr(semi + 2, "; "))
                if (strncmp(semi + 2, "missing:", 8)) {
                    *semi = 0;
                    break;
                }
            char *r = xstrdup(c);
            free(line);
            return r;
        }
        free(line);
        l = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* Coverage is one computation: over every node of whole searches, what the
 * feedback states is coverage_describe of the node's path, what each
 * child's report states is the same, and 100% never stands beside a
 * missing term. */
static void test_coverage_one(void)
{
    const char *qs[] = {"What happens to the session when a user logs out?", "How are URL rules registered?",
                        "Where is the URL pattern compiled into a regular expression?", "How are sessions stored?"};
    int nodes = 0, bad_fb = 0, bad_child = 0, bad_full = 0;
    struct policy_executor ex = {NULL, execute};
    struct policy_curator cu = {NULL, NULL};
    for (size_t k = 0; k < ARRAY_LEN(qs); k++) {
        struct search_config sc;
        search_config_defaults(&sc);
        sc.iterations = 25;
        sc.finish_min_value = 99;
        offline_policy_set_iterations(op, sc.iterations);
        struct search *s = search_new(&sc, &pol, &ex, &cu, qs[k]);
        while (search_step(s)) {
        }
        const struct mcts_tree *t = search_tree(s);
        struct qparse q;
        char err[256];
        ok(qparse_question_names(qs[k], action_index_defines, &actx, &q, err, sizeof err) == 0, "parse %s", qs[k]);
        qparse_weigh(&q, db);
        for (int id = 1; id < t->n; id++) {
            const struct mcts_node *n = mcts_node(t, id);
            struct coverage c;
            coverage_of_path(&q, t, id, &c);
            struct buf want = BUF_INIT;
            coverage_describe(&q, &c, NULL, COVERAGE_NAMED, &want);
            if (coverage_complete(&c) != (c.share >= 1) || (strstr(buf_str(&want), "100%") && strstr(buf_str(&want), "missing")))
                bad_full++;
            char *fb = stated(n->feedback, "");
            if (fb && strcmp(fb, buf_str(&want))) {
                if (!bad_fb++) diag("node %d: feedback '%s', the path '%s'", id, fb, buf_str(&want));
            }
            for (int j = 0; j < n->nchildren; j++) {
                char *rep = stated(mcts_node(t, n->children[j])->report, "coverage:");
                if (!rep || strcmp(rep, buf_str(&want))) {
                    if (!bad_child++) diag("node %d: child %d's report '%s', the path '%s'", id, n->children[j], rep, buf_str(&want));
                }
                free(rep);
            }
            nodes += fb != NULL;
            free(fb);
            buf_free(&want);
            coverage_free(&c);
        }
        qparse_free(&q);
        search_free(s);
    }
    ok(nodes > 40, "%d nodes state a coverage", nodes);
    is_int(bad_fb, 0, "each states the coverage of its path");
    is_int(bad_child, 0, "and its children's reports state the same");
    is_int(bad_full, 0, "100%% means nothing is missing");
}

/* 1 when a span some executed node of t read verifies c, as search_answer
 * verifies a citation against the tree. */
static int tree_saw(const struct mcts_tree *t, const struct evidence_span *c)
{
    for (int id = 1; id < t->n; id++) {
        const struct mcts_node *m = mcts_node(t, id);
        if (m->status != MCTS_DONE && m->status != MCTS_FINISHED) continue;
        for (size_t k = 0; k < m->obs.n; k++) {
            const struct evidence_span *sp = &m->obs.v[k];
            if (strcmp(sp->path, c->path)) continue;
            if (sp->elided ? sp->start_line == c->start_line && sp->end_line == c->end_line
                           : sp->start_line <= c->start_line && c->end_line <= sp->end_line)
                return 1;
        }
    }
    return 0;
}

/* The answer fuses the tree's citations with the flat ranker's windows and
 * chunks (DRQA_FUSE_K, read when the policy is made; "off": the tree's
 * alone). Every citation is a span the tree read or one of the windows or
 * chunks handed back as read; the answer names, by number, exactly those
 * only they hold; the leading citations are distinct files. */
static void test_answer_fusion(void)
{
    /* one step that read only app.py: the windows know where the rest is */
    const char *q = "Where is the URL pattern compiled into a regular expression?";
    struct mcts_tree *t = mcts_new(q, 3, -1, 1);
    int a = mcts_add_child(t, 0);
    struct mcts_node *na = mcts_node_mut(t, a);
    na->action = xstrdup("FindClass");
    na->args = cJSON_Parse("{\"class_name\": \"App\"}");
    run_node(t, a);
    int path[2] = {0, a};
    char err[256] = "";
    struct policy_usage u = {0};
    struct policy_answer fused = {0};
    ok(pol.answer(op, t, path, 2, &fused, &u, err, sizeof err) == 0, "fused answer %s", err);
    ok(fused.read.n > 0, "the windows are handed back as read (%zu)", fused.read.n);
    /* the third ranking: function and class chunks, labelled by their
     * names where a window's label is its lines */
    size_t defs = 0;
    for (size_t i = 0; i < fused.read.n; i++)
        defs += fused.read.v[i].label && strncmp(fused.read.v[i].label, "lines ", 6);
    ok(defs > 0, "the top function and class chunks are read and handed back too (%zu)", defs);
    int verified = 1, windows_only = 0, named = 1, routing = 0;
    for (size_t i = 0; i < fused.cites.n; i++) {
        const struct evidence_span *c = &fused.cites.v[i];
        int by_tree = tree_saw(t, c);
        int by_read = evidence_covers(&fused.read, c->path, c->start_line, c->end_line);
        verified &= by_tree || by_read;
        routing |= !strcmp(c->path, "tinyweb/routing.py");
        char ref[32];
        snprintf(ref, sizeof ref, "[%zu]", i + 1);
        const char *note = fused.markdown ? strstr(fused.markdown, "BM25 windows") : NULL;
        const char *line = note;
        while (line && line > fused.markdown && line[-1] != '\n') line--;
        int listed = line && strstr(line, ref) && strstr(line, ref) < note;
        if (!by_tree) windows_only++;
        named &= listed == !by_tree;
    }
    ok(verified, "every citation is a span the tree or the windows read");
    ok(routing, "the windows bring routing.py, which no step read");
    ok(windows_only > 0 && named, "the answer names exactly the %d citations only the windows hold", windows_only);
    /* where they come from, without a claim a pruned step would contradict
     * (a step that read the same span and was pruned did read it) */
    ok(fused.markdown && strstr(fused.markdown, "not taken from the search tree's steps") &&
           !strstr(fused.markdown, "no step of the search read"),
       "the note says the windows' citations are not the tree's steps', not that no step read them");
    /* as many distinct files among the first five as there are (up to five) */
    size_t files = 0, lead_files = 0;
    for (size_t i = 0; i < fused.cites.n; i++) {
        int again = 0;
        for (size_t j = 0; j < i; j++) again |= !strcmp(fused.cites.v[i].path, fused.cites.v[j].path);
        files += !again;
        lead_files += !again && i < 5;
    }
    ok(lead_files == (files < 5 ? files : 5), "the leading citations name distinct files (%zu of %zu)", lead_files,
       files);
    policy_answer_clear(&fused);

    /* off: the tree's answer alone, nothing read besides */
    setenv("DRQA_FUSE_K", "off", 1);
    struct offline_config oc = {.db = db, .actx = &actx};
    struct offline_policy *alone = offline_policy_new(&oc);
    struct policy pa;
    offline_policy_bind(alone, &pa);
    struct policy_answer tree = {0};
    ok(pa.answer(alone, t, path, 2, &tree, &u, err, sizeof err) == 0, "the tree's answer alone %s", err);
    int all_tree = 1;
    for (size_t i = 0; i < tree.cites.n; i++) all_tree &= tree_saw(t, &tree.cites.v[i]);
    ok(tree.read.n == 0 && all_tree && !strstr(tree.markdown, "BM25 windows"),
       "DRQA_FUSE_K=off: only what the tree read is cited, and nothing else is read");
    policy_answer_clear(&tree);
    offline_policy_free(alone);
    unsetenv("DRQA_FUSE_K");
    mcts_free(t);
}

/* A span off the path that several steps found outranks one a single step
 * found with a higher value, all else equal (answer_pool sums the steps'
 * shares, as tree_files sums a file's votes). Two spans of one file with the
 * same text: only what the steps gave them tells them apart. */
static void test_answer_consensus(void)
{
    const char *q = "How are the session cookies signed?";
    const char *text = "    def sign(self, value):\n        return hmac_sign(self.secret, value)\n";
    struct mcts_tree *t = mcts_new(q, 3, -1, 1);
    int a = mcts_add_child(t, 0), b = mcts_add_child(t, 0), c = mcts_add_child(t, 0);
    set_node(t, a, "FindClass", "{\"class_name\": \"App\"}", 90, "tinyweb/app.py", 22, 30, "class App(Scaffold):\n",
             "App");
    set_node(t, b, "SemanticSearch", "{\"query\": \"session cookies\"}", 80, "tinyweb/signing.py", 10, 11, text,
             "once");
    set_node(t, c, "FindFunction", "{\"function_name\": \"sign\"}", 50, "tinyweb/signing.py", 20, 21, text, "twice");
    int d = mcts_add_child(t, a);   /* off the path: the path ends at a */
    ok(d > 0, "a child of the path's node");
    set_node(t, d, "FindFunction", "{\"function_name\": \"sign\", \"file_pattern\": \"tinyweb/*\"}", 50,
             "tinyweb/signing.py", 20, 21, text, "twice");
    setenv("DRQA_FUSE_K", "off", 1);
    struct offline_config oc = {.db = db, .actx = &actx};
    struct offline_policy *alone = offline_policy_new(&oc);
    struct policy pa;
    offline_policy_bind(alone, &pa);
    int path[2] = {0, a};
    char err[256] = "";
    struct policy_usage u = {0};
    struct policy_answer ans = {0};
    ok(pa.answer(alone, t, path, 2, &ans, &u, err, sizeof err) == 0, "the tree's answer %s", err);
    long once = -1, twice = -1;
    for (size_t i = 0; i < ans.cites.n; i++) {
        const struct evidence_span *e = &ans.cites.v[i];
        if (strcmp(e->path, "tinyweb/signing.py")) continue;
        if (e->start_line == 10 && once < 0) once = (long)i;
        if (e->start_line == 20 && twice < 0) twice = (long)i;
    }
    ok(once >= 0 && twice >= 0, "both spans are cited (%ld, %ld)", once, twice);
    ok(twice >= 0 && twice < once, "the span two steps found (value 50 each) comes before the one a step of value 80 "
                                   "found (%ld before %ld)", twice, once);
    policy_answer_clear(&ans);
    offline_policy_free(alone);
    unsetenv("DRQA_FUSE_K");
    mcts_free(t);
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "offline") != NULL, "temp dir");
    snprintf(root, sizeof root, "%s/tests/fixtures/pyrepo", DRQA_SRCDIR);
    char *ipath = xasprintf("%s/index.sqlite", dir);
    char err[512] = "";
    struct index_options io = {.threads = 1};
    is_int(index_update(root, ipath, &io, NULL, err, sizeof err), 0, "index the fixture %s", err);
    is_int(store_open(ipath, 1, &db, NULL, err, sizeof err), 0, "open the index %s", err);
    is_int(semantic_action_register(NULL, err, sizeof err), 0, "SemanticSearch registered");
    action_ctx_init(&actx, db, root);
    struct offline_config oc = {.db = db, .actx = &actx};
    op = offline_policy_new(&oc);
    offline_policy_bind(op, &pol);
    is_str(pol.name, "offline", "policy name");

    test_first_actions();
    test_report_kind();
    test_dotted_object();
    test_reference_read_whole();
    test_outline_then_head();
    test_follow_up();
    test_siblings();
    test_search();
    test_answer_tree();
    test_coverage_one();
    test_answer_fusion();
    test_answer_consensus();

    offline_policy_free(op);
    offline_policy_free(NULL);
    action_ctx_release(&actx);
    sqlite3_close(db);
    unlink(ipath);
    char *wal = xasprintf("%s-wal", ipath), *shm = xasprintf("%s-shm", ipath);
    unlink(wal);
    unlink(shm);
    free(wal);
    free(shm);
    rmdir(dir);
    free(ipath);
    return done_testing();
}
