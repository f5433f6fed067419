/* Tests of transcripts: save -> load -> save is byte-identical, files are
 * owner-only, credentials are never written, Markdown export, load errors. */
#include "tap.h"
#include "harness.h"
#include "toy_policy.h"
#include "transcript.h"
#include "cli_settings.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    size_t len;
    return read_file(path, 0, &len);
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "transcript") != NULL, "temp dir");
    char *p1 = xasprintf("%s/one.json", dir), *p2 = xasprintf("%s/two.json", dir),
         *pm = xasprintf("%s/one.md", dir), *pbad = xasprintf("%s/bad.json", dir);

    struct toy t;
    toy_init(&t);
    t.finish_at = 5;
    t.fail_plan_at = 2;
    t.tokens_per_call = 10;
    struct search_config c;
    search_config_defaults(&c);
    c.clock_ms = toy_clock;
    struct policy p = toy_policy(&t);
    struct policy_executor e = toy_executor(&t);
    struct policy_curator cu = toy_curator(&t);
    struct search *s = search_new(&c, &p, &e, &cu, "Where is \"routing\" done?\n(two lines)");
    while (search_step(s)) {}
    struct search_answer *a = search_answer(s);

    cJSON *extra = cJSON_Parse("{\"temperature\":0.7,\"api_key\":\"SECRET1\",\"OPENAI_API_KEY\":\"SECRET2\","
                               "\"access_token\":\"SECRET3\",\"max_tokens\":100,\"header\":\"Bearer SECRET4\","
                               "\"nested\":{\"password\":\"SECRET5\",\"keep\":\"yes\"},\"note\":\"sk-SECRET6\"}");
    struct transcript_config tc = {0};
    tc.repo = "/src/flask";
    tc.mode = "mcts";
    tc.policy = "toy";
    tc.model = "m";
    tc.api_base = "https://user:SECRET7@api.example/v1?key=SECRET8";
    tc.iterations = 15;
    tc.max_expand = 3;
    tc.seed = 18446744073709551615ULL;
    tc.exploration = 50;
    tc.created = "2025-01-01T00:00:00Z";
    tc.extra = extra;
    cJSON *cfg = transcript_config_json(&tc);

    char err[512];
    is_int(transcript_save(p1, search_tree(s), cfg, a, err, sizeof err), 0, "save a transcript");
    struct stat st;
    ok(stat(p1, &st) == 0 && (st.st_mode & 0777) == 0600, "the file is owner-only (0600)");
    char *one = slurp(p1);
    int leaked = 0;
    for (int i = 1; i <= 8; i++) {
        char needle[16];
        snprintf(needle, sizeof needle, "SECRET%d", i);
        if (strstr(one, needle)) {
            diag("leaked %s", needle);
            leaked++;
        }
    }
    is_int(leaked, 0, "no credential-looking field or value is written");
    ok(!strstr(one, "api_key") && !strstr(one, "access_token"), "not even the key names");
    ok(strstr(one, "\"temperature\"") && strstr(one, "\"max_tokens\"") && strstr(one, "\"keep\""),
       "ordinary settings are kept (max_tokens is not a token)");
    ok(strstr(one, "\"https://api.example/v1\"") != NULL, "URLs lose user:password@ and the query");
    ok(strstr(one, "\"18446744073709551615\"") != NULL, "a 64-bit seed is written exactly");
    ok(strstr(one, "\"status\":\t\"error\"") && strstr(one, "plan: toy plan failure at 2"),
       "the failed node is there with its error");
    ok(strstr(one, "\"perceive_ms\":\t5") != NULL, "timings are written");

    struct mcts_tree *tree = NULL;
    cJSON *cfg2 = NULL;
    struct search_answer *a2 = NULL;
    is_int(transcript_load(p1, &tree, &cfg2, &a2, err, sizeof err), 0, "load it back");
    if (!tree) {
        diag("%s", err);
        return done_testing();
    }
    const struct mcts_tree *orig = search_tree(s);
    is_int(tree->n, orig->n, "same number of nodes");
    is_str(tree->question, orig->question, "same question");
    int same = 1;
    for (int i = 0; i < tree->n; i++) {
        const struct mcts_node *x = mcts_node(tree, i), *y = mcts_node(orig, i);
        same &= x->visits == y->visits && x->value_sum == y->value_sum && x->status == y->status &&
                x->parent == y->parent && x->nchildren == y->nchildren && x->nuct == y->nuct &&
                x->obs.n == y->obs.n;
    }
    ok(same, "every node's visits, values, status, links, UCT marks and evidence survive");
    ok(a2 && a2->from_finished && a2->finish_node == 5 && a2->cites.n == a->cites.n, "the answer survives");
    is_int(transcript_save(p2, tree, cfg2, a2, err, sizeof err), 0, "save the loaded transcript");
    char *two = slurp(p2);
    ok(one && two && strcmp(one, two) == 0, "save -> load -> save is byte-identical");

    /* the loaded tree is a working tree: selection runs on it */
    ok(mcts_select(tree, tree->iterations + 1, NULL) >= 0, "selection works on a loaded tree");

    is_int(transcript_save_markdown(pm, search_tree(s), a, err, sizeof err), 0, "save Markdown");
    ok(stat(pm, &st) == 0 && (st.st_mode & 0777) == 0600, "the Markdown file is owner-only too");
    char *md = slurp(pm);
    ok(md && str_starts(md, "# Where is \"routing\" done?"), "Markdown opens with the question");
    ok(md && strstr(md, "toy answer over") && strstr(md, "### Citations") && strstr(md, "- `pkg/"),
       "with the answer and its citations");
    ok(md && strstr(md, "## Trajectory (best finished)") && strstr(md, "`Finish {\"answer\":\"toy finish answer\"}`"),
       "and the winning trajectory ending in Finish");
    ok(md && strstr(md, "stopped by finish"), "and the search summary");
    /* the whole tree, not only the trajectory: every node has its line */
    const struct mcts_tree *st_tree = search_tree(s);
    const char *tree_md = md ? strstr(md, "## Tree") : NULL;
    int listed = tree_md != NULL;
    for (int i = 1; listed && i < st_tree->n; i++) {
        char line[32], star[32];
        snprintf(line, sizeof line, "- %d ", i);
        snprintf(star, sizeof star, "- *%d ", i);
        listed = strstr(tree_md, line) || strstr(tree_md, star);
    }
    ok(listed && strstr(tree_md, "- *5 `Finish"), "and the whole tree, each of the %d nodes with its line, the "
       "trajectory marked", st_tree->n - 1);

    /* Markdown of raw text: ESC, OSC, C1 as UTF-8 and as a lone byte (a
     * Latin-1 file, an 8-bit terminal's CSI) are made visible, well-formed
     * UTF-8 (dashes, accents) is kept; no question and no stop reason yet
     * are said as such, not written as "# " and "stopped by (null)" */
    struct mcts_tree *raw = mcts_new("", 3, -1, 1);
    int kid = mcts_add_child(raw, 0);
    struct mcts_node *kn = mcts_node_mut(raw, kid);
    kn->status = MCTS_DONE;
    kn->visits = 1;
    kn->value_sum = 50;
    kn->has_value = 1;
    kn->value = 50;
    kn->action = xstrdup("ViewCode");
    kn->report = xstrdup("a \033[31mred\033[0m word, a title \033]0;pwned\007, C1 \302\233 and \233 raw");
    kn->obs_text = xstrdup("latin1 caf\351 \x9b""2J \xe2\x80\x94 caf\303\251\n");
    mcts_node_mut(raw, 0)->visits = 1;
    char *rmd = transcript_markdown(raw, NULL);
    int ctl = 0;   /* ESC, BEL, C1 as UTF-8 (C2 80..9F), bytes that are not UTF-8 */
    for (const unsigned char *q = (const unsigned char *)rmd; *q;) {
        size_t len = *q < 0x80 ? 1 : *q >= 0xc2 && *q <= 0xdf ? 2 : *q >= 0xe0 && *q <= 0xef ? 3
                   : *q >= 0xf0 && *q <= 0xf4 ? 4 : 0;
        for (size_t i = 1; i < len; i++)
            if ((q[i] & 0xc0) != 0x80) len = 0;
        if (!len || *q == 0x1b || *q == 0x07 || (*q == 0xc2 && q[1] <= 0x9f)) {
            ctl++;
            len = 1;
        }
        q += len;
    }
    is_int(ctl, 0, "the Markdown holds no ESC, BEL or C1 byte outside UTF-8");
    ok(strstr(rmd, "\\x1b[31mred") && strstr(rmd, "\\x1b]0;pwned\\x07") && strstr(rmd, "C1 \\u009b and \\x9b raw"),
       "ESC, OSC and C1 (UTF-8 and a lone byte) are shown as escapes");
    ok(strstr(rmd, "caf\\xe9 \\x9b2J \xe2\x80\x94 caf\303\251") != NULL, "a Latin-1 byte is shown, UTF-8 text is kept");
    ok(str_starts(rmd, "# (no question asked)\n"), "no question is said, not written as an empty title");
    ok(strstr(rmd, "not stopped when this was written") && !strstr(rmd, "stopped by"),
       "a search that has not stopped says so");
    free(rmd);
    mcts_free(raw);

    /* load errors */
    FILE *f = fopen(pbad, "w");
    fputs("{\"format\": \"something-else\", \"version\": 1}", f);
    fclose(f);
    struct mcts_tree *bad = NULL;
    is_int(transcript_load(pbad, &bad, NULL, NULL, err, sizeof err), -1, "another format is refused");
    ok(bad == NULL && strstr(err, "not a drqa-tui transcript"), "with a message: %s", err);
    f = fopen(pbad, "w");
    fputs("{\"format\": \"drqa", f);
    fclose(f);
    is_int(transcript_load(pbad, &bad, NULL, NULL, err, sizeof err), -1, "broken JSON is refused");
    ok(strstr(err, "not valid JSON") != NULL, "with a message: %s", err);
    char *edited = xstrdup(one);
    char *pp = strstr(edited, "\"parent\":\t0");   /* node 1's parent */
    if (pp) pp[10] = '3';
    is_int(transcript_parse(edited, "edited", &bad, NULL, NULL, err, sizeof err), -1, "an inconsistent tree is refused");
    ok(strstr(err, "inconsistent") != NULL, "with a message: %s", err);
    is_int(transcript_load("/nonexistent/x.json", &bad, NULL, NULL, err, sizeof err), -1, "a missing file is refused");
    ok(strstr(err, "/nonexistent/x.json") != NULL, "naming it: %s", err);
    is_int(transcript_save("/nonexistent/dir/x.json", orig, NULL, NULL, err, sizeof err), -1, "an unwritable path fails");
    ok(strstr(err, "cannot write transcript") != NULL, "with a message: %s", err);

    struct drqa_opts o;
    opts_defaults(&o);
    o.model = "qwen";
    o.no_perception = 1;
    struct transcript_config oc;
    cli_transcript_config(&oc, &o);
    cJSON *oj = transcript_config_json(&oc);
    char *ojs = cJSON_PrintUnformatted(oj);
    ok(ojs && strstr(ojs, "\"model\":\"qwen\"") && strstr(ojs, "\"iterations\":15") &&
       strstr(ojs, "\"exploration\":50") && strstr(ojs, "\"no_perception\":true") &&
       strstr(ojs, "\"seed\":\"1\""), "a configuration from the command line: %s", ojs);
    free(ojs);
    cJSON_Delete(oj);
    struct search_config sc;
    cli_search_config(&sc, &o);
    ok(sc.iterations == 15 && sc.max_expand == 3 && sc.exploration < 0 && sc.no_perception &&
       sc.seed == 1 && sc.max_replans == 2, "and a search configuration");

    ok(transcript_secret_name("OPENAI_API_KEY") && transcript_secret_name("auth") &&
       transcript_secret_name("x-session-token") && !transcript_secret_name("budget_tokens") &&
       !transcript_secret_name("model"), "secret-looking names");

    free(edited);
    free(one), free(two), free(md);
    mcts_free(tree);
    cJSON_Delete(cfg2);
    search_answer_free(a2);
    cJSON_Delete(cfg);
    cJSON_Delete(extra);
    search_answer_free(a);
    search_free(s);
    unlink(p1), unlink(p2), unlink(pm), unlink(pbad);
    rmdir(dir);
    free(p1), free(p2), free(pm), free(pbad);
    return done_testing();
}
