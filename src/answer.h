/*
 * answer: the extractive answer used by the offline policy and by the RAG
 * modes. From a pool of evidence spans (everything the trajectory or the
 * retriever saw) it picks the spans that best match the question, names them
 * as locations (path:start-end) with their signatures and docstrings, states
 * the relations seen between them (which calls which, which inherits from
 * which), quotes the decisive lines, and arranges all of it by question type:
 *
 *   where  the locations first, most relevant first;
 *   what   the definitions and what their documentation says;
 *   how    the decisive span, then the steps ordered along the calls seen
 *          between the spans;
 *   why    the documentation and comments that state intent, then the code.
 *
 * The answer opens with one or two sentences stating what the cited code
 * shows: the definition that does what the question asks (the best cited
 * definition), what calls it and what it calls among the citations, and the
 * setting that controls it when a cited span reads a configuration key the
 * question's words name; each claim carries [n], the position of its span
 * in the citation list, as the numbered spans of the body do. An outline
 * whose lines were also read verbatim is cited as those lines (as the
 * search verifies it), so that the search keeps every citation in order.
 *
 * It never writes anything it did not read: every sentence is a name, a
 * docstring, a comment or a code line from a span, and every citation is a
 * span of the pool or a definition lying inside one (answer_verify checks
 * that independently).
 *
 * Ranking: a span scores by the idf-weighted share of the question's terms in
 * its text, its name and its path (qparse_match), a bonus when it defines a
 * name the question writes literally, its order of discovery (the span's
 * `score` field carries that prior, 0-1, set by the caller) and a penalty for
 * sheer length. Spans longer than ANSWER_REFINE_LINES compete with the
 * definitions inside them (each at most ANSWER_REFINE_MAX_DEF lines) when the
 * index is at hand: a class seen whole still lets its one long method that
 * does the work be cited. The one definition of a name the question writes
 * explicitly (in backticks, called, or called a class in words: "the
 * Blueprint class") goes before every other span, the view that holds all
 * of it (a class's outline) before its head; two views of one definition
 * are one citation.
 */
#ifndef DRQA_ANSWER_H
#define DRQA_ANSWER_H

#include "evidence.h"
#include "qparse.h"

#include <sqlite3.h>
#include <stddef.h>

#define ANSWER_MAX_CITES 8
#define ANSWER_PER_FILE 2           /* spans per file ... */
#define ANSWER_PER_TOP_FILE 4       /* ... and from the file of the best span */
#define ANSWER_DISTINCT_FILES 4     /* the first citations come from this many distinct files */
#define ANSWER_DISTINCT_RATIO 0.4   /* ... each scoring at least this share of the best */
#define ANSWER_REFINE_LINES 60      /* longer spans are split ...          */
#define ANSWER_REFINE_MAX_DEF 150   /* ... into their definitions this long */
#define ANSWER_FILE_EVIDENCE_WEIGHT 0.3   /* answer_opts.files, as the window prior */
#define ANSWER_CENTRAL_WEIGHT 0.15        /* answer_opts.central: a tie-breaker */
#define ANSWER_ABSENT_WORDS 4       /* the missing words the head names (then "and N more") */

struct answer_opts {
    size_t max_cites;        /* 0: ANSWER_MAX_CITES */
    const char *note;        /* a closing line (e.g. which mode produced it); may be NULL */
    /* Files the question's words concentrate in (qparse_windows), best first;
     * a span in one of them ranks higher in proportion to the window's score.
     * May be NULL. */
    const struct qwindow *prior;
    size_t nprior;
    /* Files by the evidence gathered for them across a search (each file's
     * path and a score, best first, e.g. summed over the searches that
     * returned it): a span in one of them ranks higher in proportion. May be
     * NULL. */
    const struct qwindow *files;
    size_t nfiles;
    /* Files by how central they are to the repository (e.g. how many other
     * files import them), best first: between files holding the same code
     * (a class each dialect defines again), the one the others build on
     * ranks higher. May be NULL. */
    const struct qwindow *central;
    size_t ncentral;
    size_t distinct_files;   /* 0: ANSWER_DISTINCT_FILES */
    double distinct_ratio;   /* 0: ANSWER_DISTINCT_RATIO */
    /* The pool is already ranked, best first, each span's score its prior
     * (0-1, decreasing), e.g. a fusion of rankings (fuse.h): the answer
     * keeps that order (no other score, no span cut into its definitions);
     * selection still takes distinct files first, a file whose definition
     * repeats the qualified name of a file already taken after the other
     * files, and drops overlaps. */
    int ranked;
    /* The citations after the distinct-file picks come from the files those
     * picks cite first (the rest of a long definition, the helpers beside
     * it), and only then from other files: for a selection whose distinct
     * picks are the whole of its breadth (answer_fuse's five files). */
    int deep_rest;
};

/* Builds the Markdown answer into *markdown (caller frees) and appends the
 * citations, most important first, to cites (path, lines, text, label).
 * db (may be NULL) gives qualified names, docstrings and the definitions
 * inside long spans. When pool is empty the answer says that nothing was
 * found and cites nothing. markdown NULL: only the citations are wanted
 * (nothing is written). Returns 0, or -1 with a message. */
int answer_build(const struct qparse *q, const struct evidence *pool, sqlite3 *db, const struct answer_opts *opts,
                 char **markdown, struct evidence *cites, char *err, size_t errlen);

/* Removes from cites every span that no span of seen covers; returns the
 * number removed. */
size_t answer_verify(const struct evidence *seen, struct evidence *cites);

/* Relevance of one span to the question as used for ranking (without the
 * discovery prior): 0 and up, about 0-2. */
double answer_span_relevance(const struct qparse *q, const struct evidence_span *sp);

#endif
