/* Tests for the evaluation files and tables: the report of two hand-made
 * scores files compared as exact text (every number worked out by hand: means
 * over judged answers only, the unjudged counted apart, per-judge means,
 * question types and subtypes, tokens with thousands separators, grounding);
 * one system name from two files kept apart; references in both formats
 * matched by id and by question text; grounding metrics of answers files; and
 * the FILE:LINE error messages for missing and malformed files. */
#include "tap.h"
#include "harness.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char data[512], tmp[256];

static const char *dpath(const char *name)
{
    static char p[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", data, name);
    return p[k];
}

static const char *write_tmp(const char *name, const char *text)
{
    static char p[4][200];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmp, name);
    FILE *fp = fopen(p[k], "w");
    fputs(text, fp);
    fclose(fp);
    return p[k];
}

static const char *expected_two =
    "## Overall\n"
    "\n"
    "Judges: J1, J2. Each dimension 1-20, Overall their sum (100); a question's score is the mean over the judges that answered; Unjudged: answers no judge scored, left out of the means.\n"
    "\n"
    "| System | Questions | Correctness | Completeness | Relevance | Clarity | Reasoning | Overall | Unjudged |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
    "| mcts/llm | 3 | 15.00 (n=2) | 15.00 (n=2) | 15.00 (n=2) | 15.00 (n=2) | 15.00 (n=2) | 75.00 (n=2) | 1 |\n"
    "| rag-function/llm | 2 | 10.25 (n=2) | 11.00 (n=2) | 12.00 (n=2) | 13.00 (n=2) | 14.25 (n=2) | 60.50 (n=2) | 0 |\n"
    "\n"
    "## Per judge (Overall)\n"
    "\n"
    "| System | J1 | J2 |\n"
    "|---|---|---|\n"
    "| mcts/llm | 70.00 (n=2) | 60.00 (n=1) |\n"
    "| rag-function/llm | 58.00 (n=2) | 63.00 (n=2) |\n"
    "\n"
    "## By question type (Overall)\n"
    "\n"
    "| Type | Subtype | mcts/llm | rag-function/llm |\n"
    "|---|---|---|---|\n"
    "| what | (all) | 75.00 (n=2) | 50.00 (n=1) |\n"
    "| what | concept-defi | 50.00 (n=1) | 50.00 (n=1) |\n"
    "| what | iden-loca | 100.00 (n=1) | - (n=0) |\n"
    "| why | (all) | - (n=0) | 71.00 (n=1) |\n"
    "| why | purpose | - (n=0) | 71.00 (n=1) |\n"
    "\n"
    "## Tokens per question (input/output, mean)\n"
    "\n"
    "| System | Tokens |\n"
    "|---|---|\n"
    "| mcts/llm | 2,000/200 (n=3) |\n"
    "| rag-function/llm | 78,681/6,247 (n=2) |\n"
    "\n"
    "## Grounding (no model)\n"
    "\n"
    "file-hit@k: a gold file among the first k distinct cited files; file-hit@5 (citations): among the first five citations, repeats counted; identifier recall: share of the reference's identifiers found in the answer and its evidence.\n"
    "\n"
    "| System | file-hit@1 | file-hit@5 | file-hit@5 (citations) | Identifier recall |\n"
    "|---|---|---|---|---|\n"
    "| mcts/llm | 0.50 (n=2) | 1.00 (n=2) | - (n=0) | 0.75 (n=2) |\n"
    "| rag-function/llm | 0.50 (n=2) | 0.50 (n=2) | - (n=0) | 0.50 (n=2) |\n";

static void two_systems(void)
{
    struct report r;
    char err[512] = "";
    report_init(&r);
    ok(report_add_file(&r, dpath("scores-a.jsonl"), NULL, err, sizeof err) == 0, "scores-a read (%s)", err);
    ok(report_add_file(&r, dpath("scores-b.jsonl"), NULL, err, sizeof err) == 0, "scores-b read (%s)", err);
    is_int(r.n, 5, "five rows (a blank line skipped)");
    struct buf b = BUF_INIT;
    report_markdown(&r, &b);
    is_str(buf_str(&b), expected_two, "tables of two systems, exact text");
    buf_free(&b);

    cJSON *j = report_json(&r);
    cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "systems"), 0);
    is_str(cJSON_GetStringValue(cJSON_GetObjectItem(s0, "system")), "mcts/llm", "json: first system");
    cJSON *ov = cJSON_GetObjectItem(s0, "overall");
    ok(cJSON_GetNumberValue(cJSON_GetObjectItem(ov, "mean")) == 75.0, "json: overall mean 75");
    is_int(cJSON_GetNumberValue(cJSON_GetObjectItem(ov, "n")), 2, "json: overall n 2");
    is_int(cJSON_GetNumberValue(cJSON_GetObjectItem(s0, "unjudged")), 1, "json: one unjudged");
    cJSON *pj = cJSON_GetObjectItem(cJSON_GetObjectItem(s0, "per_judge"), "J2");
    ok(cJSON_GetNumberValue(cJSON_GetObjectItem(pj, "mean")) == 60.0, "json: J2 mean over the one answer it scored");
    cJSON *h5 = cJSON_GetObjectItem(s0, "file_hit@5");
    ok(cJSON_GetNumberValue(cJSON_GetObjectItem(h5, "mean")) == 1.0, "json: file-hit@5");
    cJSON_Delete(j);
    report_free(&r);
    report_free(NULL);
}

static void same_system_two_files(void)
{
    char *a = read_file(dpath("scores-a.jsonl"), 1 << 20, NULL);
    const char *copy = write_tmp("run2.jsonl", a);
    free(a);
    struct report r;
    char err[512] = "";
    report_init(&r);
    ok(report_add_file(&r, dpath("scores-a.jsonl"), NULL, err, sizeof err) == 0 &&
           report_add_file(&r, copy, NULL, err, sizeof err) == 0, "same system from two files read");
    struct buf b = BUF_INIT;
    report_markdown(&r, &b);
    ok(strstr(buf_str(&b), "| mcts/llm [scores-a.jsonl] | 3 | 15.00 (n=2) |") != NULL, "first file's row named by file");
    ok(strstr(buf_str(&b), "| mcts/llm [run2.jsonl] | 3 | 15.00 (n=2) |") != NULL, "second file's row named by file");
    ok(strstr(buf_str(&b), "| mcts/llm |") == NULL, "no merged row");
    buf_free(&b);
    report_free(&r);
}

static void references(void)
{
    struct eval_refs dev, swe;
    char err[512] = "";
    ok(eval_refs_load(&dev, dpath("ref-dev.jsonl"), err, sizeof err) == 0, "dev-format reference read (%s)", err);
    ok(eval_refs_load(&swe, dpath("ref-sweqa.jsonl"), err, sizeof err) == 0, "SWE-QA-format reference read (%s)", err);
    is_int(dev.n, 3, "three dev references");
    is_int(swe.n, 3, "three SWE-QA references");
    const struct eval_ref *x = eval_refs_find(&dev, "q2", NULL);
    ok(x && x->line == 2, "found by id");
    ok(x && strcmp(x->category_type, "where") == 0 && strcmp(x->category, "iden-loca") == 0, "categories kept");
    ok(x && strncmp(x->answer, "In `Blueprint.register`", 23) == 0, "reference_answer read");
    is_int(x ? x->gold.files.n : 0, 1, "gold_files used");
    x = eval_refs_find(&swe, "q2", "  Where is the blueprint\n registration flag set?");
    ok(x && x->line == 2 && !x->id, "SWE-QA: found by question text, whitespace runs as one space");
    ok(x && x->gold.files_from_text && x->gold.idents_from_text, "SWE-QA: gold from the answer text");
    ok(!eval_refs_find(&swe, NULL, "Where is the blueprint flag set?"), "another question: no reference");
    x = eval_refs_find(&dev, "nope", "Why does the app context use a stack?");
    ok(x && x->line == 3, "unknown id: falls back to the question");
    x = eval_refs_find(&dev, "q3", NULL);
    ok(x && x->gold.files_from_text && x->gold.files.n == 2, "empty gold_files: paths from the answer text");
    eval_refs_free(&dev);
    eval_refs_free(&swe);
    eval_refs_free(NULL);
}

static double sys_num(cJSON *j, int s, const char *field)
{
    cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "systems"), s);
    return cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(x, field), "mean"));
}

static void answers_metrics(void)
{
    struct eval_refs dev;
    struct report r;
    char err[512] = "";
    eval_refs_load(&dev, dpath("ref-dev.jsonl"), err, sizeof err);
    report_init(&r);
    ok(report_add_file(&r, dpath("answers-mcts.jsonl"), &dev, err, sizeof err) == 0 &&
           report_add_file(&r, dpath("answers-rag.jsonl"), &dev, err, sizeof err) == 0,
       "answers files read with a reference (%s)", err);
    cJSON *j = report_json(&r);
    /* mcts: hits 1,0,0 @1 and 1,1,0 @5; recall 4/4, 1/2, 0/2. */
    ok(sys_num(j, 0, "file_hit@1") * 3 > 0.999 && sys_num(j, 0, "file_hit@1") * 3 < 1.001, "mcts hit@1 1/3");
    ok(sys_num(j, 0, "file_hit@5") * 3 > 1.999 && sys_num(j, 0, "file_hit@5") * 3 < 2.001, "mcts hit@5 2/3");
    ok(sys_num(j, 0, "identifier_recall") == 0.5, "mcts recall (1 + 0.5 + 0) / 3");
    /* rag: the first answer has no id and is found by its question. */
    ok(sys_num(j, 1, "file_hit@1") * 3 > 1.999 && sys_num(j, 1, "file_hit@1") * 3 < 2.001, "rag hit@1 2/3");
    ok(sys_num(j, 1, "file_hit@5") * 3 > 1.999 && sys_num(j, 1, "file_hit@5") * 3 < 2.001,
       "rag hit@5 2/3 (the 6th distinct file does not count)");
    double rr = sys_num(j, 1, "identifier_recall");
    ok(rr > 0.5833 && rr < 0.5834, "rag recall (0.25 + 1 + 0.5) / 3");
    ok(sys_num(j, 1, "tokens_input") == 6000 && sys_num(j, 1, "tokens_output") == 200, "rag tokens mean");
    cJSON_Delete(j);
    report_free(&r);

    /* repo_name goes in front of cited paths: a root __init__.py of flask/ is
     * flask/__init__.py, not any __init__.py. */
    report_init(&r);
    const char *rn = write_tmp("repo.jsonl",
        "{\"id\": \"x\", \"question\": \"q\", \"answer\": \"a\", \"citations\": [{\"path\": \"__init__.py\"}]}\n"
        "{\"id\": \"x\", \"question\": \"q\", \"answer\": \"a\", \"repo_name\": \"flask\", "
        "\"citations\": [{\"path\": \"__init__.py\"}]}\n"
        "{\"id\": \"x\", \"question\": \"q\", \"answer\": \"a\", \"repo_name\": \"flask\", "
        "\"citations\": [{\"path\": \"json/__init__.py\"}]}\n");
    const char *rr_ref = write_tmp("repo-ref.jsonl", "{\"id\": \"x\", \"question\": \"q\", \"reference_answer\": \"r\", "
                                                      "\"gold_files\": [\"src/flask/json/__init__.py\"]}\n");
    struct eval_refs rref;
    ok(eval_refs_load(&rref, rr_ref, err, sizeof err) == 0 && report_add_file(&r, rn, &rref, err, sizeof err) == 0,
       "repo_name lines read (%s)", err);
    ok(r.n == 3 && r.rows[0].hit1 == 1 && r.rows[1].hit1 == 0 && r.rows[2].hit1 == 1,
       "without repo_name a bare name matches; with it the root file does not, json/__init__.py does");
    eval_refs_free(&rref);
    report_free(&r);

    /* An answer whose question has no reference is an error naming FILE:LINE. */
    report_init(&r);
    const char *p = write_tmp("stray.jsonl", "{\"id\": \"q1\", \"question\": \"x\", \"answer\": \"a\"}\n"
                                             "{\"id\": \"zz\", \"question\": \"Unknown?\", \"answer\": \"a\"}\n");
    ok(report_add_file(&r, p, &dev, err, sizeof err) == -1 && strstr(err, "stray.jsonl:2: no reference for id 'zz'"),
       "answer without reference: %s", err);
    report_free(&r);
    eval_refs_free(&dev);
}

static void errors(void)
{
    struct report r;
    struct eval_refs refs;
    char err[512] = "", want[600];
    report_init(&r);
    const char *missing = write_tmp("gone.jsonl", "");
    unlink(missing);
    ok(report_add_file(&r, missing, NULL, err, sizeof err) == -1, "missing file refused");
    snprintf(want, sizeof want, "cannot read '%s': No such file or directory; check the path", missing);
    is_str(err, want, "missing file message");

    const char *p = write_tmp("bad.jsonl", "{\"judges\": [], \"mode\": \"m\", \"policy\": \"p\"}\n\n{\"judges\": [\n");
    ok(report_add_file(&r, p, NULL, err, sizeof err) == -1, "malformed line refused");
    snprintf(want, sizeof want, "%s:3: not a JSON object ({\"judges\": [); each line must be one object", p);
    is_str(err, want, "malformed line named by file:line");

    p = write_tmp("range.jsonl", "{\"judges\": [{\"judge\": \"J\", \"total\": 50}], \"scores\": {\"correctness\": 10, "
                                 "\"completeness\": 10, \"relevance\": 10, \"clarity\": 25, \"reasoning\": 10}}\n");
    ok(report_add_file(&r, p, NULL, err, sizeof err) == -1, "out-of-range score refused");
    snprintf(want, sizeof want, "%s:1: scores.clarity must be a number from 1 to 20", p);
    is_str(err, want, "out-of-range score message");

    p = write_tmp("other.jsonl", "{\"question\": \"q\"}\n");
    ok(report_add_file(&r, p, NULL, err, sizeof err) == -1, "a line of neither kind refused");
    snprintf(want, sizeof want, "%s:1: neither a scores line (from --judge, with \"judges\") nor an answers line "
             "(from --batch, with \"answer\")", p);
    is_str(err, want, "neither-kind message");

    p = write_tmp("cites.jsonl", "{\"answer\": \"a\", \"question\": \"q\", \"citations\": [{\"path\": 3}]}\n");
    ok(report_add_file(&r, p, NULL, err, sizeof err) == -1, "bad citation refused");
    snprintf(want, sizeof want, "%s:1: citations[0] must be an object with a string \"path\"", p);
    is_str(err, want, "bad citation message");
    is_int(r.n, 0, "no rows kept from refused files");
    report_free(&r);

    p = write_tmp("ref.jsonl", "{\"question\": \"q1\", \"answer\": \"a\"}\n{\"question\": \"q2\"}\n");
    ok(eval_refs_load(&refs, p, err, sizeof err) == -1, "reference without answer refused");
    snprintf(want, sizeof want, "%s:2: no \"reference_answer\" (dev benchmark format) or \"answer\" (SWE-QA format)", p);
    is_str(err, want, "reference without answer message");
    eval_refs_free(&refs);
    p = write_tmp("ref2.jsonl", "{\"question\": \"q1\", \"answer\": \"a\", \"gold_files\": \"x.py\"}\n");
    ok(eval_refs_load(&refs, p, err, sizeof err) == -1, "gold_files not a list refused");
    snprintf(want, sizeof want, "%s:1: field \"gold_files\" must be an array of strings", p);
    is_str(err, want, "gold_files type message");
    eval_refs_free(&refs);
    p = write_tmp("empty.jsonl", "\n\n");
    ok(eval_refs_load(&refs, p, err, sizeof err) == -1 && strstr(err, "no reference lines"), "empty reference refused");
    eval_refs_free(&refs);
}

int main(void)
{
    const char *top = getenv("top_srcdir");
    snprintf(data, sizeof data, "%s/tests/data/eval", top && *top ? top : DRQA_SRCDIR);
    if (!temp_dir(tmp, sizeof tmp, "report")) return 1;
    two_systems();
    same_system_two_files();
    references();
    answers_metrics();
    errors();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    return done_testing();
}
