/* Tests for the repository outline (outline.h) over the indexed fixture
 * tests/fixtures/pyrepo, and the cache minimums it is sized for
 * (llm_profile.cache_min):
 *   - the same index and question give the same bytes;
 *   - the text never passes its budget, for any budget, and says how many
 *     files it left out; under OUTLINE_MIN_BYTES there is none;
 *   - the files most related to the question come first, with their
 *     top-level classes and functions, with signatures, lines, docstrings
 *     and methods where room allows;
 *   - the question's words no indexed file holds are named, within the budget;
 *   - Anthropic's documented minimum per model, 0 for other providers. */
#include "tap.h"
#include "harness.h"
#include "index.h"
#include "llm_config.h"
#include "llm_profile.h"
#include "outline.h"
#include "store.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static sqlite3 *db;

/* the first file's entry: its line after the heading and the directories,
 * with the indented lines under it */
static char *first_file(const char *text)
{
    const char *l = text;
    for (int k = 0; k < 2 && l; k++) l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
    if (!l) return xstrdup("");
    const char *e = strchr(l, '\n');
    while (e && e[1] == ' ') e = strchr(e + 1, '\n');
    return xstrndup(l, e ? (size_t)(e - l) : strlen(l));
}

static void test_deterministic_and_ranked(void)
{
    const char *q = "How does the Router match a URL rule to a view?";
    char *a = outline_build(db, q, 4000), *b = outline_build(db, q, 4000);
    ok(a && b && !strcmp(a, b), "the same question gives the same outline");
    ok(a && strstr(a, "Repository outline: 15 files"), "the heading counts the index's files");
    ok(a && strstr(a, "Directories (files):") && strstr(a, "tinyweb/core (3)"), "the directories with their counts");
    char *f = first_file(a ? a : "");
    ok(!strncmp(f, "tinyweb/routing.py (", 20), "the file most related to the question comes first");
    ok(strstr(f, "class Router") != NULL && strstr(f, "class Rule") != NULL, "with its top-level classes");
    ok(strstr(f, "\n  class Router") && strstr(f, "; match(self, path"), "and, with room, a class's methods indented "
       "under it with their signatures");
    ok(strstr(f, "class Rule") && strstr(f, " 23-"), "and the lines each spans");
    free(f);
    ok(a && strstr(a, "tinyweb/utils.py") && strstr(a, "make_password("), "a function is written with its parameters");
    char *s = outline_build(db, q, 1200);
    ok(s && strstr(s, "make_password()"), "with less room, a file is one line: function()");
    free(s);
    char *c = outline_build(db, "Where is the session saved to the database?", 4000);
    f = first_file(c ? c : "");
    ok(!strncmp(f, "tinyweb/sessions/", 17), "another question, another first file");
    free(f);
    free(a);
    free(b);
    free(c);
}

static void test_bounded(void)
{
    const char *q = "How does the Router match a URL rule to a view?";
    int over = 0, missing = 0;
    for (size_t budget = OUTLINE_MIN_BYTES; budget <= 6000; budget += 37) {
        char *t = outline_build(db, q, budget);
        over += t && strlen(t) > budget;
        missing += !t;
        free(t);
    }
    ok(!over, "no outline passes its budget (%d did)", over);
    ok(!missing, "every budget from OUTLINE_MIN_BYTES on gives an outline (%d did not)", missing);
    ok(outline_build(db, q, OUTLINE_MIN_BYTES - 1) == NULL, "under OUTLINE_MIN_BYTES: none");
    char *t = outline_build(db, q, 700);
    ok(t && strstr(t, " more files\n"), "a small budget says how many files it left out");
    char *f = first_file(t ? t : "");
    ok(!strncmp(f, "tinyweb/routing.py (", 20), "and keeps the most related file");
    free(f);
    free(t);
    char *big = outline_build(db, q, 100000);
    ok(big && !strstr(big, "more files"), "a large budget lists every file");
    ok(big && strlen(big) < 100000, "and stops at what the index holds (%zu bytes)", big ? strlen(big) : 0);
    free(big);
}

static void test_cache_minimums(void)
{
    static const struct {
        const char *provider, *model;
        int want;
    } cases[] = {
        {"anthropic", "claude-opus-4-5-20251101", 4096}, {"anthropic", "claude-opus-4-7", 4096},
        {"anthropic", "claude-haiku-4-5", 4096},         {"anthropic", "claude-opus-5-5", 4096},
        {"anthropic", "claude-sonnet-5", 4096},          {"anthropic", "claude-sonnet-4-6", 2048},
        {"anthropic", "claude-3-5-haiku-20241022", 2048}, {"anthropic", "claude-sonnet-4-5", 1024},
        {"anthropic", "claude-sonnet-4-20250514", 1024}, {"anthropic", "claude-opus-4-1-20250805", 1024},
        {"anthropic", "anthropic/claude-sonnet-4.5", 1024}, {"anthropic", "claude-3-7-sonnet-latest", 1024},
        {"openai", "gpt-5", 0},                          {"openai", "claude-opus-4-5", 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct llm_profile p;
        llm_profile_lookup(llm_provider_find(cases[i].provider)->family, cases[i].model, &p);
        ok(p.cache_min == cases[i].want, "cache_min of %s %s is %d (got %d)", cases[i].provider, cases[i].model,
           cases[i].want, p.cache_min);
    }
    struct llm_profile p;
    llm_profile_lookup(LLM_FAMILY_ANTHROPIC, "claude-opus-4-5", &p);
    char err[256];
    ok(llm_profile_set(&p, "cache_min", "2048", err, sizeof err) == 0 && p.cache_min == 2048,
       "profile.GLOB.cache_min sets it");
    ok(llm_profile_set(&p, "cache_min", "many", err, sizeof err) == -1 && strstr(err, "cache_min"),
       "a bad cache_min is refused, naming the field");
}

/* the question's words no indexed file holds: named on the outline's last
 * line, within the budget; another form of a word the code has is not */
static void test_absent_words(void)
{
    const char *q = "How does the Router upgrade a websocket before routing the views?";
    char *t = outline_build(db, q, 4000);
    const char *line = t ? strstr(t, "Words and names of the question that no indexed file contains") : NULL;
    ok(line && strstr(line, "`websocket`") && !strchr(line, '\n')[1], "the missing word is named, on the last line");
    ok(line && !strstr(line, "`router`") && !strstr(line, "`views`") && !strstr(line, "`routing`"),
       "words the code has (views as view, routing as route) are not");
    free(t);
    t = outline_build(db, "How does the Router match a URL rule to a view?", 4000);
    ok(t && !strstr(t, "no indexed file contains"), "a question whose words are all there has no such line");
    free(t);
    int over = 0, with = 0;
    for (size_t budget = OUTLINE_MIN_BYTES; budget <= 3000; budget += 41) {
        t = outline_build(db, q, budget);
        over += t && strlen(t) > budget;
        with += t && strstr(t, "`websocket`") != NULL;
        free(t);
    }
    ok(!over, "with the line, no outline passes its budget (%d did)", over);
    ok(with > 0, "and the line is there when room allows (%d budgets)", with);
}

int main(void)
{
    char dir[256];
    ok(temp_dir(dir, sizeof dir, "outline") != NULL, "temp dir");
    char root[1024];
    snprintf(root, sizeof root, "%s/tests/fixtures/pyrepo", DRQA_SRCDIR);
    char *ipath = xasprintf("%s/index.sqlite", dir);
    char err[512] = "";
    struct index_options io = {.threads = 1};
    ok(index_update(root, ipath, &io, NULL, err, sizeof err) == 0, "index the fixture %s", err);
    ok(store_open(ipath, 1, &db, NULL, err, sizeof err) == 0, "open the index %s", err);

    test_deterministic_and_ranked();
    test_bounded();
    test_absent_words();
    test_cache_minimums();

    sqlite3_close(db);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    free(cmd);
    free(ipath);
    return done_testing();
}
