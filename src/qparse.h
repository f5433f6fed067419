/*
 * qparse: what a developer's question asks for, read without a model. The
 * offline policy plans from it and the extractive answer is organised by it:
 *
 *   type         what / where / how / why / other, from the interrogative
 *                ("which file ..." is a where, "what is the purpose ..." a why);
 *   identifiers  literal code names: `backticked`, CamelCase, snake_case,
 *                lowerCamel, dotted (Class.method, pkg.mod.func) and name();
 *                each with the kind of definition it most likely names;
 *   quotes       quoted code ("..." or '...' or a backticked expression) to
 *                look up with FindCodeSnippet;
 *   files        file names mentioned (app.py, pkg/sessions/db.py);
 *   words        the content words as written (lowercase), without English
 *                function words and question framing ("explain", "purpose");
 *   terms        the code-aware terms of those words (tok.h), deduplicated,
 *                each with a weight: 1 until qparse_weigh() sets the inverse
 *                document frequency over the index's chunks.
 *
 * qparse_match() scores a text by the weighted share of the question's terms
 * it contains (two stems of one word count as the same term); policy, evaluation and answer all measure relevance with it.
 *
 * Ownership: struct qparse owns every string and array in it.
 */
#ifndef DRQA_QPARSE_H
#define DRQA_QPARSE_H

#include <sqlite3.h>
#include <stddef.h>

#include "util.h"

enum qtype { QTYPE_WHAT, QTYPE_WHERE, QTYPE_HOW, QTYPE_WHY, QTYPE_OTHER };

enum qident_kind {
    QID_CLASS,      /* CamelCase, or dotted ending in a capitalised part */
    QID_FUNCTION,   /* snake_case, lowerCamel, name(), Class.method */
    QID_CONSTANT,   /* ALL_CAPS_NAME */
};

struct qident {
    char *name;      /* as written, without backticks or '()' ('Flask.run' stays dotted) */
    char *owner;     /* for Class.method: "Class"; else NULL */
    char *base;      /* last dotted component ('run'); equals name when not dotted */
    enum qident_kind kind;
    int explicit_;   /* backticked or written name(): certainly code */
};

struct qparse {
    enum qtype type;
    struct qident *ids;
    size_t nids;
    char **quotes;
    size_t nquotes;
    char **files;
    size_t nfiles;
    char **words;
    size_t nwords;
    char **terms;
    double *weights;
    size_t nterms;
    double total_weight;
    unsigned char *absent;   /* per term, set by qparse_weigh: no chunk holds it nor another stem
                              * of its word (NULL until weighed) */
    char **joins;      /* two adjacent plain words written as one ("times out": "timeout", "timesout";
                        * "k-means": "kmean"), made terms by qparse_weigh when the index holds them */
    char **join_firsts; /* the first word of each join, lowercase ("times") */
    size_t njoins;
    char **joined;     /* the first words of the joins the index holds: what the question says of
                        * them is said by the join ("set" of "set up" in a tree that writes setup) */
    size_t njoined;
    int about_tests;   /* the question speaks of tests ("the test function that ...", test_x) */
    size_t callers_of; /* the question asks what calls ids[callers_of - 1] ("What calls get_response?",
                        * "Where is save called from?", "callers of run"); 0 when it does not */
    size_t subclasses_of;  /* the same for the subclasses of a class ("Which classes inherit from
                            * BaseHandler?", "the subclasses of Field") */
};

/* Reads question. Returns 0, or -1 with a message when it holds no word at
 * all. out is always initialised (qparse_free it). */
int qparse_question(const char *question, struct qparse *out, char *err, size_t errlen);
void qparse_free(struct qparse *q);   /* accepts NULL */
/* Which names a qparse_name_fn is asked about. */
enum { QPARSE_NAMES_CLASSES = 1, QPARSE_NAMES_FUNCTIONS = 2, QPARSE_NAMES_ALL = 3, QPARSE_NAMES_PROJECT = 4 };
/* 1 when the index defines name[0..n) (as written): a class, a function or
 * method, or (QPARSE_NAMES_ALL) a symbol of any kind, variables too; with
 * QPARSE_NAMES_PROJECT, when name is the repository's own name, in any case
 * (the directory indexed, or one of its top-level packages when the directory
 * is not a package itself). */
typedef int (*qparse_name_fn)(void *ctx, const char *name, size_t n, int which);
/* The same, consulting the index's names before a word is dropped: a word
 * too short to be a term ('g', 'S') that the index defines is an identifier
 * of the question with a term of its own; an English function word the
 * index defines ('a', 'where') is one only when the question has nothing
 * else to look for ("What is a?"). A capitalised word the question calls a
 * class ("the Blueprint class", "class Blueprint") is an explicit identifier
 * when the index defines a class of that name, and "class" there is not a
 * word to look for: it says what the name is. So is the subject of a question
 * that opens with a question word and an auxiliary ("What does simplify
 * do?") when the index defines a function or class by it, unless it is the
 * repository's own name: "How does Flask dispatch a request?" asks about the
 * project, whatever its class of that name does, and the name there is no
 * word to look for unless nothing else is left. Two words that a developer
 * writes apart and the code as one ("times out", "set up": a word and a
 * phrasal particle; "k-means", "in-place": a hyphenated compound) are kept
 * in joins for qparse_weigh. defined NULL:
 * qparse_question. */
int qparse_question_names(const char *question, qparse_name_fn defined, void *ctx, struct qparse *out, char *err,
                          size_t errlen);

/* Sets each term's weight to its idf over the index's chunks,
 * log(1 + N / (1 + df)); terms the index does not know keep a low weight.
 * Leaves the weights at 1 when db is NULL or cannot be read. */
void qparse_weigh(struct qparse *q, sqlite3 *db);

/* The content words of the question (q->words), then the names it writes as
 * code (q->ids), that the weighed index holds
 * nowhere: every term of the word is absent (qparse_weigh), or the word is
 * a compound identifier whose joined form is, so no code, comment, document
 * or path of the repository says it. The first max are
 * appended to out as "`w1`, `w2`"; returns how many there are (0 before
 * qparse_weigh). */
size_t qparse_absent_words(const struct qparse *q, size_t max, struct buf *out);

/* 1 when word w makes no term although it is no stop word: a run of
 * non-ASCII letters longer than a term (a sentence of Japanese written
 * without spaces), which no index term can match. */
int qparse_unmatchable(const char *w);

/* The weighted share (0-1) of the question's terms found in text[0..n).
 * When hit is not NULL, hit[i] is set to 1 for every term i found (it is
 * not cleared first, so calls accumulate). */
double qparse_match(const struct qparse *q, const char *text, size_t n, unsigned char *hit);

/* The index of the question's term that t (a tok term, n bytes) stands
 * for, or -1. Terms match when equal or when they are two stems of one word
 * (a common prefix of five bytes or more, at most three bytes more on either
 * side), the same rule qparse_match uses. */
int qparse_term_index(const struct qparse *q, const char *t, size_t n);

/* The question's content words joined by spaces, at most maxwords (0: all);
 * "" when none. Caller frees. */
char *qparse_phrase(const struct qparse *q, size_t maxwords);

/* A window of lines of one indexed file and its BM25 score for a question. */
struct qwindow {
    char *path;
    int start_line, end_line;
    double score;
};

/* Cuts every file of the index into windows of `lines` lines overlapping by
 * `overlap`, scores them by BM25 (k1 1.2, b 0.75) over the question's terms
 * (matched as qparse_match does) and returns the k best with a score above
 * zero, best first (ties: path, then line), in *out (qparse_windows_free).
 * Returns the count, or -1 with a message when the index cannot be read. */
int qparse_windows(const struct qparse *q, sqlite3 *db, int lines, int overlap, size_t k, struct qwindow **out,
                   char *err, size_t errlen);
void qparse_windows_free(struct qwindow *w, size_t n);   /* accepts NULL */

/* The same ranking, computed by tokenising every file of the index again.
 * qparse_windows reads the index's line postings instead (linepost.h:
 * built and stored on first use, rebuilt when the files change) and falls
 * back to this when they cannot be stored; tests and benches compare the
 * two. */
int qparse_windows_scan(const struct qparse *q, sqlite3 *db, int lines, int overlap, size_t k,
                        struct qwindow **out, char *err, size_t errlen);

const char *qparse_type_name(enum qtype t);

/* 1 when word (n bytes) has the shape of a code identifier rather than an
 * English word: contains '_', an inner capital, or a digit after letters. */
int qparse_code_shaped(const char *word, size_t n);

#endif
