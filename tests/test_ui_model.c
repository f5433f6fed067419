/* Tests of the front end's model (ui/model.c) driven by hand-made worker
 * events: the mirrored tree, node updates and texts, the best path, folded
 * rows, labels and status words, search by text, the answer's citations, a
 * new question resetting everything, the export reading back as a
 * transcript, and the search's clock. */
#include "tap.h"
#include "harness.h"
#include "model.h"
#include "util.h"
#include "transcript.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ev_node(struct ui_model *m, enum evq_kind k, int id, int parent, int status, int visits,
                    double q, double value, int flags, const char *label, const char *text2)
{
    struct evq_event e;
    evq_event_init(&e, k);
    e.node = id;
    e.parent = parent;
    e.iteration = id;
    e.status = status;
    e.visits = visits;
    e.q = q;
    e.value = value;
    e.uct = value + 10;
    e.flags = flags;
    e.text = (char *)label;
    e.text2 = (char *)text2;
    ui_model_apply(m, &e, NULL);
}

static int ev_text(struct ui_model *m, enum evq_kind k, int id, const char *text, const char *text2)
{
    struct evq_event e;
    evq_event_init(&e, k);
    e.node = id;
    e.text = (char *)text;
    e.text2 = (char *)text2;
    e.a = 1;
    return ui_model_apply(m, &e, NULL);
}

static char *rows_str(struct ui_model *m)
{
    int *rows;
    size_t n = ui_model_rows(m, &rows);
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < n; i++) buf_printf(&b, "%s%d", i ? " " : "", rows[i]);
    free(rows);
    return buf_take(&b);
}

static void clock_at(struct ui_clock *c, enum evq_kind k, enum evq_state st, int64_t now)
{
    struct evq_event e;
    evq_event_init(&e, k);
    e.state = st;
    ui_clock_event(c, &e, st, now);
}

/* The clock counts the time searched: not before the question, not while
 * paused, not while done, and a finished search resumed (a prune of its
 * Finish) goes on from where it stopped. */
static void test_clock(void)
{
    struct ui_clock c = {0};
    ok(ui_clock_elapsed(&c, 500) < 0, "no time before a question");
    clock_at(&c, EVQ_QUESTION, EVQ_STATE_SEARCHING, 1000);
    clock_at(&c, EVQ_STATE, EVQ_STATE_SEARCHING, 1000);
    is_int((int)ui_clock_elapsed(&c, 1400), 400, "it runs while searching");
    clock_at(&c, EVQ_STATE, EVQ_STATE_PAUSED, 1500);
    is_int((int)ui_clock_elapsed(&c, 9000), 500, "a pause stops it");
    clock_at(&c, EVQ_STATE, EVQ_STATE_SEARCHING, 2500);
    clock_at(&c, EVQ_STATE, EVQ_STATE_DONE, 3000);
    is_int((int)ui_clock_elapsed(&c, 40000), 1000, "done stops it, the pause not counted");
    clock_at(&c, EVQ_STATE, EVQ_STATE_SEARCHING, 40000);
    clock_at(&c, EVQ_STATE, EVQ_STATE_DONE, 40001);
    is_int((int)ui_clock_elapsed(&c, 41000), 1001,
           "a finished search resumed counts its new iteration, not the time it stood done");
    clock_at(&c, EVQ_STATE, EVQ_STATE_PAUSED, 50000);
    clock_at(&c, EVQ_STATE, EVQ_STATE_SEARCHING, 50100);
    is_int((int)ui_clock_elapsed(&c, 50200), 1101, "resumed after done and a pause, it runs again");
    clock_at(&c, EVQ_QUESTION, EVQ_STATE_PAUSED, 60000);
    is_int((int)ui_clock_elapsed(&c, 61000), 0, "a new question starts it again, stopped when it starts paused");
}

/* A Finish the engine refused is not shown as done: its Q 0 is no value. */
static void test_refused(void)
{
    struct ui_model m;
    ui_model_init(&m, "", 3, -1, 1, 15);
    ev_text(&m, EVQ_QUESTION, 0, "How are sessions signed?", NULL);
    ev_node(&m, EVQ_NODE_ADDED, 1, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 1, 0, MCTS_DONE, 1, 0, 0, EVQ_FLAG_HAS_VALUE | EVQ_FLAG_REFUSED, "Finish",
            "Not executed: a Finish with no code read on its path was refused.");
    is_str(ui_model_status_word(&m.t->nodes[1]), "refused", "status word refused for a refused Finish");
    ev_node(&m, EVQ_NODE_ADDED, 2, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 2, 0, MCTS_FINISHED, 1, 80, 80, EVQ_FLAG_HAS_VALUE, "Finish", "finishing");
    is_str(ui_model_status_word(&m.t->nodes[2]), "finished", "a Finish that ran is finished");
    ui_model_free(&m);
}

int main(void)
{
    test_clock();
    test_refused();
    struct ui_model m;
    ui_model_init(&m, "", 3, -1, 1, 15);
    ev_text(&m, EVQ_QUESTION, 0, "How does routing work?", NULL);
    is_str(m.t->question, "How does routing work?", "the question starts the tree");
    is_int(m.t->n, 1, "just the root");
    const int V = EVQ_FLAG_HAS_VALUE;
    ev_node(&m, EVQ_NODE_ADDED, 1, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 1, 0, MCTS_DONE, 1, 40, 40, V,
            "FindClass {\"class_name\":\"Flask\"}", "found the class");
    ev_node(&m, EVQ_NODE_UPDATED, 0, -1, MCTS_DONE, 1, 40, 0, 0, "(question)", NULL);
    ev_node(&m, EVQ_NODE_ADDED, 2, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 2, 0, MCTS_DONE, 1, 70, 70, V,
            "FindFunction {\"function_name\":\"add_url_rule\"}", "closer");
    ev_node(&m, EVQ_NODE_ADDED, 3, 2, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 3, 2, MCTS_ERROR, 1, 0, 0, 0, "ViewCode {\"file_path\":\"x.py\"}",
            "no such file");
    ev_node(&m, EVQ_NODE_ADDED, 4, 1, MCTS_RUNNING, 0, 0, 0, EVQ_FLAG_DUPLICATE, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 4, 1, MCTS_DONE, 1, 0, 0, EVQ_FLAG_DUPLICATE | V,
            "FindClass {\"class_name\":\"flask\"}", NULL);
    ev_text(&m, EVQ_REPORT, 2, "The class is known; look for its rule method.", NULL);
    ev_text(&m, EVQ_EVIDENCE, 2, "FindFunction found 1 match\napp.py:10-12  def add_url_rule(self)\n"
            "def add_url_rule(self):\n    x = 1\n    return x\nsrc/routing/map.py:1-40\nclass Map:\n", NULL);
    is_int(m.t->n, 5, "five nodes mirrored");
    is_int(m.newest, 4, "the newest node is 4");
    is_int(m.t->nodes[2].nchildren, 1, "node 2 has one child");
    is_int(m.t->nodes[3].parent, 2, "node 3 is under node 2");
    is_int(m.t->nodes[3].depth, 2, "at depth 2");
    is_str(m.t->nodes[3].error, "no such file", "an error node keeps the error text");
    ok(m.t->nodes[3].feedback == NULL, "and no feedback");
    is_str(m.t->nodes[2].feedback, "closer", "feedback is kept");
    is_str(m.t->nodes[2].report, "The class is known; look for its rule method.", "report kept");
    ok(m.t->nodes[2].obs_text && strstr(m.t->nodes[2].obs_text, "app.py:10-12"), "evidence kept");
    ok(m.t->nodes[4].duplicate, "the duplicate flag is kept");
    const struct evidence *ob = &m.t->nodes[2].obs;
    is_int((int)ob->n, 2, "two spans recovered from the rendered evidence");
    if (ob->n == 2) {
        is_str(ob->v[0].path, "app.py", "first span's path");
        is_int(ob->v[0].start_line * 1000 + ob->v[0].end_line, 10012, "its lines 10-12");
        is_str(ob->v[0].label, "def add_url_rule(self)", "its label");
        is_str(ob->v[0].text, "def add_url_rule(self):\n    x = 1\n    return x", "its three lines");
        is_str(ob->v[1].text, "class Map:", "the second span stops at the end of the text");
        ok(ob->v[1].label == NULL, "and has no label");
    }
    size_t pl;
    int sa, sb;
    ok(!ui_span_header("Note: see x.py:1-2", 18, &pl, &sa, &sb), "a note is not a header");
    ok(!ui_span_header("x.py:5-2", 8, &pl, &sa, &sb), "a reversed range is not a header");
    ok(ui_span_header("a/b c.py:3-4", 12, &pl, &sa, &sb) == 0, "a path with a space is not a header");

    char *l = ui_model_label(&m, 2);
    is_str(l, "FindFunction add_url_rule", "a label is the action and its key argument");
    free(l);
    l = ui_model_label(&m, 0);
    is_str(l, "question", "the root's label");
    free(l);
    is_str(ui_model_status_word(&m.t->nodes[4]), "duplicate", "status word duplicate");
    is_str(ui_model_status_word(&m.t->nodes[3]), "error", "status word error");
    is_str(ui_model_status_word(&m.t->nodes[2]), "done", "status word done");

    size_t nb;
    int fin;
    const int *b = ui_model_best(&m, &nb, &fin);
    is_int((int)nb, 2, "the best path has two nodes");
    is_int(nb == 2 ? b[1] : -1, 2, "through the higher-Q child 2 (node 3 is an error)");
    is_int(fin, 0, "no node finished yet");
    ok(ui_model_on_best(&m, 2) && !ui_model_on_best(&m, 1), "node 2 is on the best path, 1 is not");

    char *r = rows_str(&m);
    is_str(r, "0 1 4 2 3", "rows depth first in creation order");
    free(r);
    ui_model_set_folded(&m, 1, 1);
    r = rows_str(&m);
    is_str(r, "0 1 2 3", "folding node 1 hides node 4");
    free(r);
    ui_model_set_folded(&m, 1, 1);
    int *all;
    size_t na = ui_model_order(&m, &all);
    struct buf ob2 = BUF_INIT;
    for (size_t i = 0; i < na; i++) buf_printf(&ob2, "%s%d", i ? " " : "", all[i]);
    is_str(buf_str(&ob2), "0 1 4 2 3", "the order of all nodes includes a folded subtree");
    buf_free(&ob2);
    free(all);
    ui_model_reveal(&m, 4);
    r = rows_str(&m);
    is_str(r, "0 1 4 2 3", "revealing node 4 unfolds its parent");
    free(r);

    /* a node's key argument; ViewCode's is the span it reads */
    char *arg = ui_model_arg(&m, 2);
    is_str(arg, "add_url_rule", "the key argument of FindFunction");
    free(arg);
    ok(ui_model_arg(&m, 0) == NULL, "the root has no argument");

    ok(ui_model_match(&m, 2, "RULE METHOD"), "search finds text in a report, any case");
    ok(ui_model_match(&m, 1, "flask"), "search finds an argument");
    ok(!ui_model_match(&m, 1, "add_url_rule"), "search misses what a node lacks");

    /* a Finish node, then the answer */
    ev_node(&m, EVQ_NODE_ADDED, 5, 2, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 5, 2, MCTS_FINISHED, 1, 80, 80, V,
            "Finish {\"answer\":\"routes are rules\"}", "enough");
    b = ui_model_best(&m, &nb, &fin);
    is_int(fin, 1, "a finished node now ends the best path");
    is_int(nb ? b[nb - 1] : -1, 5, "at node 5");
    int d = ev_text(&m, EVQ_ANSWER, 5, "Routes are added by add_url_rule.",
                    "app.py:10-12\nsrc/routing/map.py:1-40\n");
    ok(d & UI_DIRTY_LAYOUT, "the answer changes the layout");
    ok(m.answer != NULL, "the answer is kept");
    is_int(m.answer ? (int)m.answer->cites.n : -1, 2, "two citations parsed");
    if (m.answer && m.answer->cites.n == 2) {
        is_str(m.answer->cites.v[1].path, "src/routing/map.py", "citation path");
        is_int(m.answer->cites.v[1].end_line, 40, "citation end line");
    }
    struct evq_event e;
    evq_event_init(&e, EVQ_TOKENS);
    e.a = 1200;
    e.b = 300;
    ui_model_apply(&m, &e, NULL);
    evq_event_init(&e, EVQ_STATE);
    e.state = EVQ_STATE_DONE;
    e.text = (char *)"finish";
    ui_model_apply(&m, &e, NULL);
    is_int(m.state, EVQ_STATE_DONE, "state done");
    is_int((int)m.tokens_in, 1200, "tokens in");

    char tmpl[256];
    char *dir = temp_dir(tmpl, sizeof tmpl, "ui-model");
    char *sub = xasprintf("%s/a/b", dir);
    char *jp, *mp, err[512];
    int rc = ui_model_export(&m, sub, "20260101-000000", &jp, &mp, err, sizeof err);
    ok(rc == 0, "export writes into a new nested directory (%s)", rc ? err : "");
    if (rc == 0) {
        ok(str_ends(jp, ".json") && str_ends(mp, ".md"), "a .json and a .md");
        struct mcts_tree *t;
        struct search_answer *a;
        rc = transcript_load(jp, &t, NULL, &a, err, sizeof err);
        ok(rc == 0, "the exported JSON loads as a transcript (%s)", rc ? err : "");
        if (rc == 0) {
            is_int(t->n, 6, "with six nodes");
            is_str(t->nodes[3].error, "no such file", "and node 3's error");
            is_int(a ? (int)a->cites.n : -1, 2, "and the two citations");
            is_int((int)t->tokens_in, 1200, "and the token totals");
            mcts_free(t);
            search_answer_free(a);
        }
        char *md = read_file(mp, 1 << 20, NULL);
        ok(md && strstr(md, "Routes are added by add_url_rule.") && strstr(md, "`src/routing/map.py:1-40`"),
           "the Markdown holds the answer and citations");
        free(md);
        unlink(jp);
        unlink(mp);
        free(jp);
        free(mp);
    }
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    free(cmd);
    free(sub);

    ev_text(&m, EVQ_QUESTION, 0, "Second question", NULL);
    is_int(m.t->n, 1, "a new question resets the tree");
    ok(m.answer == NULL, "and drops the answer");
    ok(!ui_model_folded(&m, 1), "and the folds");
    is_int(m.newest, -1, "and the newest node");
    /* an event about a node that does not exist is ignored */
    ev_node(&m, EVQ_NODE_UPDATED, 9, 0, MCTS_DONE, 1, 1, 1, 0, "X {}", NULL);
    ev_node(&m, EVQ_NODE_ADDED, 7, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    is_int(m.t->n, 1, "events for unknown or out-of-order ids are ignored");
    /* (in the new tree) */
    /* ViewCode: the span as asked for, else as the observation resolved it */
    ev_node(&m, EVQ_NODE_ADDED, 1, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 1, 0, MCTS_DONE, 1, 50, 50, V,
            "ViewCode {\"code_span_list\":[\"src/app.py:3-9\",\"b.py\"]}", NULL);
    arg = ui_model_arg(&m, 1);
    is_str(arg, "src/app.py:3-9 +1", "ViewCode shows its first span and how many more");
    free(arg);
    ev_node(&m, EVQ_NODE_ADDED, 2, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 2, 0, MCTS_DONE, 1, 50, 50, V,
            "ViewCode {\"code_span_list\":[\"app.py:App.route\"]}", NULL);
    /* siblings searching the same words in different files are told apart */
    ev_node(&m, EVQ_NODE_ADDED, 3, 0, MCTS_RUNNING, 0, 0, 0, 0, "", NULL);
    ev_node(&m, EVQ_NODE_UPDATED, 3, 0, MCTS_DONE, 1, 50, 50, V,
            "SemanticSearch {\"query\":\"sessions signed\",\"file_pattern\":\"sessions.py\"}", NULL);
    char *lab3 = ui_model_label(&m, 3);
    is_str(lab3, "SemanticSearch sessions signed in sessions.py", "a search limited to files says which");
    free(lab3);

    arg = ui_model_arg(&m, 2);
    is_str(arg, "app.py:App.route", "a symbol before the observation: as written");
    free(arg);
    ev_text(&m, EVQ_EVIDENCE, 2, "other.py:1-2\nx\ny\napp.py:10-12  def route(self)\na\nb\nc\n", NULL);
    arg = ui_model_arg(&m, 2);
    is_str(arg, "app.py:10-12", "after it: the span it resolved to, of the same file");
    free(arg);
    char *lab = ui_model_label(&m, 2);
    is_str(lab, "ViewCode app.py:10-12", "the label is the action and its span");
    free(lab);
    ui_model_free(&m);
    return done_testing();
}
