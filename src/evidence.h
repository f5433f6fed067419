/*
 * evidence: spans of repository text that an action returned and that answers
 * may cite. A span is a repository-relative path, an inclusive 1-based line
 * range and the exact text of those lines as the index holds it (possibly
 * elided, then `elided` is set). The list owns every string in it.
 */
#ifndef DRQA_EVIDENCE_H
#define DRQA_EVIDENCE_H

#include <cjson/cJSON.h>
#include <stddef.h>

struct evidence_span {
    char *path;          /* repository-relative, '/'-separated */
    int start_line;      /* 1-based, inclusive */
    int end_line;
    char *text;          /* the lines, '\n'-separated, without line numbers */
    char *label;         /* what it is: 'class Flask(App)', 'def run(self, ...)', or NULL */
    double score;        /* relevance, higher is better; 0 when unranked */
    int elided;          /* text is a skeleton or shortened, not the verbatim lines */
};

struct evidence {
    struct evidence_span *v;
    size_t n, cap;
};

#define EVIDENCE_INIT {NULL, 0, 0}

/* Appends a span (strings are copied; label and text may be NULL). Returns it. */
struct evidence_span *evidence_add(struct evidence *ev, const char *path, int start_line, int end_line,
                                   const char *text, const char *label, double score);
void evidence_free(struct evidence *ev);             /* accepts NULL */
void evidence_copy(struct evidence *dst, const struct evidence *src);  /* appends copies */
/* Lines [start, end] of sp's text, which begins at sp->start_line, cut at
 * line ends (text_lines, util.h); "" when the text ends before start. An
 * elided span's text is not those lines: it is copied whole. NULL when the
 * span has no text. Caller frees. */
char *evidence_span_lines(const struct evidence_span *sp, int start, int end);
/* The label of lines [start, end] read within sp: sp's own when sp is those
 * lines or its label names what holds them (a definition, "in class X");
 * a label that is a line range ("lines 1-171", "module lines 40-90") is
 * said again of [start, end], never passed on for other lines. NULL when sp
 * has none. Caller frees. */
char *evidence_label_within(const struct evidence_span *sp, int start, int end);
/* True when [start,end] of path lies within a span of ev. */
int evidence_covers(const struct evidence *ev, const char *path, int start_line, int end_line);

/* [{"path","start_line","end_line","text","label","score","elided"}] */
cJSON *evidence_to_json(const struct evidence *ev);
/* Reads the array form back; -1 with a message naming the bad element. */
int evidence_from_json(const cJSON *arr, struct evidence *ev, char *err, size_t errlen);

#endif
