/*
 * report: the evaluation files and the tables made from them.
 *
 * Readers. Every file is JSONL (one object a line; blank lines skipped); a
 * line that is not an object, or a field of the wrong type, is an error
 * naming FILE:LINE and the field.
 *   - references (eval_refs): SWE-QA's own format {"question", "answer"}, or
 *     the dev benchmark's {"id", "question", "reference_answer",
 *     "category_type", "category", "gold_files", "gold_identifiers"}; both
 *     may be mixed. An answer finds its reference by id when both have one,
 *     else by question text (whitespace runs compared as one space).
 *   - answers (eval_answers): the lines --batch writes {"id", "question",
 *     "answer", "citations", "evidence", "mode", "policy", "tokens", "error",
 *     optional "model" and "repo_name"}. repo_name, the repository
 *     directory's own name, is put in front of every cited path (which is
 *     relative to the repository) before the paths are matched (metrics.h).
 *   - scores: the lines --judge writes (judge.h), or answers lines, whose
 *     grounding metrics are then computed against a reference.
 *
 * Tables (struct report). Rows are grouped by system: mode/policy, plus
 * /model when the line names one; when one system name comes from two
 * different files, each file's rows are kept apart as "NAME [FILE]" (FILE
 * the base name). Every cell is a mean over the questions that have the
 * value, with their number: "12.30 (n=96)"; "- (n=0)" when none. Answers
 * that no judge scored are left out of the score means and counted in the
 * Unjudged column; an undefined grounding metric (no gold file, no gold
 * identifier) is left out of its mean.
 */
#ifndef DRQA_REPORT_H
#define DRQA_REPORT_H

#include "metrics.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stddef.h>

#define EVAL_NDIM 5
extern const char *const eval_dims[EVAL_NDIM];   /* "correctness", ... "reasoning" */
extern const char *const eval_dim_titles[EVAL_NDIM];   /* "Correctness", ... */

/* Calls fn for each object line of path; stops at the first non-zero return
 * (fn fills err then). Returns 0, or -1 with err (FILE:LINE for bad lines). */
int eval_jsonl_each(const char *path, int (*fn)(void *ctx, const cJSON *obj, int line, char *err, size_t errlen),
                    void *ctx, char *err, size_t errlen);

/* A JSON id (string or whole number) as an owned string, or NULL. */
char *eval_id_string(const cJSON *id);

struct eval_ref {
    int line;
    char *id;                        /* NULL in SWE-QA's format */
    char *question, *answer;
    char *category_type, *category;  /* NULL when absent */
    struct metrics_gold gold;
};

struct eval_refs {
    char *path;
    struct eval_ref *v;
    size_t n, cap;
};

int eval_refs_load(struct eval_refs *r, const char *path, char *err, size_t errlen);
void eval_refs_free(struct eval_refs *r);   /* NULL ok */
/* The reference for an answer (id and question may be NULL), or NULL. */
const struct eval_ref *eval_refs_find(const struct eval_refs *r, const char *id, const char *question);

struct eval_answer {
    int line;
    char *id, *question, *answer;    /* id: the file's, else the line number */
    int id_from_line;                /* the file gave no id: never matched against a reference */
    char *mode, *policy, *model;     /* model NULL when absent */
    char *error;                     /* the answer's own error, or NULL */
    struct strv cited;               /* citation paths in order */
    char *evidence;                  /* evidence texts joined by newlines */
    int has_tokens;
    double tokens_in, tokens_out;
    int has_usage;                   /* a model ledger ("usage", llm_usage_json) came with it */
    double tokens_cached, cost_usd;  /* its total cached input tokens; cost (< 0: unpriced) */
};

struct eval_answers {
    char *path;
    struct eval_answer *v;
    size_t n, cap;
};

int eval_answers_load(struct eval_answers *a, const char *path, char *err, size_t errlen);
void eval_answers_free(struct eval_answers *a);   /* NULL ok */
/* Reads one answers line into x (zeroed first). 0, or -1 with err naming
 * path:line and the field. */
int eval_answer_parse(struct eval_answer *x, const cJSON *o, const char *path, int line, char *err, size_t errlen);
void eval_answer_clear(struct eval_answer *x);    /* NULL ok */

/* "mode/policy" or "mode/policy/model" (caller frees). */
char *eval_system_name(const char *mode, const char *policy, const char *model);

/* ---- tables ---- */

struct report_judge_score {
    char *judge;
    int ok;
    double total;
};

struct report_row {
    char *file;                      /* base name of the input file */
    char *system;
    char *category_type, *category;
    int njudges;                     /* judges asked (0: metrics only) */
    int judged;                      /* at least one judge answered */
    double dims[EVAL_NDIM], total;
    struct report_judge_score *pj;
    size_t npj;
    int has_tokens;
    double tokens_in, tokens_out;
    int has_usage;
    double tokens_cached, cost_usd;  /* cost < 0: unpriced */
    int hit1, hit5, hit5c;           /* -1: undefined (hit5c: over the first five citations) */
    double ident_recall;             /* < 0: undefined */
};

struct report {
    struct report_row *rows;
    size_t n, cap;
    struct strv judges;              /* judge names in order of appearance */
};

void report_init(struct report *r);
void report_free(struct report *r);   /* NULL ok */

/* Adds the lines of a scores or answers file. refs (may be NULL) gives
 * answers lines their grounding metrics and categories, and scores lines
 * their categories when they carry none. 0, or -1 with err (FILE:LINE). */
int report_add_file(struct report *r, const char *path, const struct eval_refs *refs, char *err, size_t errlen);

/* The Markdown tables, appended to out. */
void report_markdown(const struct report *r, struct buf *out);
/* The same numbers as one JSON object (caller deletes). */
cJSON *report_json(const struct report *r);

#endif
