/*
 * metrics: the grounding metrics, computed without any model. They say
 * whether an answer looked where the reference says the answer lives, and
 * are the one definition that --judge, --report and bench/quality.sh share.
 *
 * file-hit@k (k = 1, 5): 1 when one of the first k distinct cited files
 * (citations in answer order, a path cited twice counted once) matches a
 * gold file, else 0. Gold files are the reference's gold_files when it has a
 * non-empty list, else the file paths mentioned in the reference answer text
 * (tokens ending in a source or documentation extension, see
 * metrics_paths_in_text). Two paths match when their last min(2, a, b)
 * components are equal, a and b being their component counts after "./" and
 * leading "/" are dropped: "src/flask/app.py" matches "flask/app.py" and
 * "app.py", not "other/app.py". A one-component gold path is thus compared
 * with the cited file's base name. Cited paths are relative to the
 * repository, so the repository directory's own name is counted as their
 * first component (an answers line's "repo_name", report.h): "__init__.py"
 * cited in flask/ is "flask/__init__.py" and does not match
 * "src/flask/json/__init__.py". With no gold file the metric is undefined
 * (-1) and the question is left out of the mean.
 *
 * file-hit@5 over citations (hit5c): the same match over the first five
 * citations as they come, a file cited twice counted twice, so an answer
 * citing one wrong file five times scores 0 where the distinct count would
 * look further.
 *
 * identifier recall: the share of gold identifiers found in the answer text
 * plus the text of its cited evidence. Gold identifiers are the reference's
 * gold_identifiers when it has a non-empty list, else the backticked spans of
 * the reference answer that are names: `x`, `a.b_c`, `f()` and `f(x, y)`
 * (call parentheses dropped), but not paths, file names or code with spaces.
 * Matching is case-sensitive on word boundaries (a word is [A-Za-z0-9_]); a
 * dotted name a.b.c is found when the whole name or its last component c is
 * found as a word. Duplicates count once. With no gold identifier the metric
 * is undefined (-1).
 */
#ifndef DRQA_METRICS_H
#define DRQA_METRICS_H

#include <stddef.h>

/* How the offline answer opens the sentence naming the question's words and
 * names the repository says nowhere (answer.c writes it): a name said
 * missing there is not found, so identifier recall skips that sentence, up
 * to its end (". "). */
#define METRICS_ABSENT_LEAD "No indexed file of the repository says "

/* A list of owned strings. */
struct strv {
    char **v;
    size_t n, cap;
};
#define STRV_INIT {NULL, 0, 0}
void strv_add(struct strv *s, const char *str);           /* copies str */
void strv_add_unique(struct strv *s, const char *str);    /* copies str unless present */
int strv_has(const struct strv *s, const char *str);
void strv_free(struct strv *s);                           /* NULL ok */

/* 1 when paths a and b name the same file by the rule above, else 0. */
int metrics_path_match(const char *a, const char *b);

/* Appends to out (unique) the file paths mentioned in text. */
void metrics_paths_in_text(const char *text, struct strv *out);

/* Appends to out (unique) the names in backticks in text, normalised
 * (call parentheses dropped). */
void metrics_identifiers_in_text(const char *text, struct strv *out);

/* 1 when ident is found in text by the rule above, else 0. */
int metrics_identifier_found(const char *ident, const char *text);

/* What a reference says the answer should touch. */
struct metrics_gold {
    struct strv files, idents;
    int files_from_text, idents_from_text;   /* taken from the answer text, no list given */
};

/* Fills g from a reference's lists (either may be NULL or empty) and its
 * answer text (may be NULL). metrics_gold_free releases it. */
void metrics_gold_init(struct metrics_gold *g, const char *const *files, size_t nfiles,
                       const char *const *idents, size_t nidents, const char *reference_text);
void metrics_gold_free(struct metrics_gold *g);   /* NULL ok */

struct metrics_result {
    int hit1, hit5;                /* 1, 0, or -1 when there is no gold file */
    int hit5c;                     /* file-hit@5 over the first five citations */
    int idents_found, idents_total;
    double ident_recall;           /* found / total, or -1 when total is 0 */
};

/* Computes the metrics of one answer. cited: the cited paths in answer order
 * (repeats allowed); answer, evidence: texts searched for identifiers (either
 * may be NULL). */
void metrics_compute(const struct metrics_gold *g, const char *const *cited, size_t ncited, const char *answer,
                     const char *evidence, struct metrics_result *r);

/* file-hit@k on its own (k >= 1): 1, 0, or -1 without gold files; distinct:
 * over the first k distinct files (file-hit@k), else the first k citations. */
int metrics_file_hit(const struct metrics_gold *g, const char *const *cited, size_t ncited, size_t k);
int metrics_file_hit_cites(const struct metrics_gold *g, const char *const *cited, size_t ncited, size_t k);

#endif
