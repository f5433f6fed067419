/*
 * recheck: whether a saved answer's citations still hold. An answer (a
 * --batch line, --ask --json, the ask tool's result, a transcript) carries
 * the commit its index described and, for each citation, text_hash: a hash
 * of the cited lines' exact text as the index held it. Against the index as
 * it is now, each citation is
 *   unchanged  the same text at the same lines;
 *   moved      the same text at other lines of the same file (the nearest
 *              such place is given);
 *   changed    the file is there, the text is not;
 *   gone       the file is no longer in the index;
 *   unknown    the saved answer has no hash for it (and no verbatim text to
 *              hash: an outline cannot be compared line by line).
 * A citation without text_hash but with its verbatim text (a --batch line's
 * evidence, a transcript's citations) is hashed from that text.
 */
#ifndef DRQA_RECHECK_H
#define DRQA_RECHECK_H

#include <cjson/cJSON.h>
#include <stddef.h>

struct action_ctx;

#define RECHECK_HASH_LEN 25   /* "fnv1a64:" + 16 hex digits + NUL */

/* The hash of text[0, len): "fnv1a64:<16 hex digits>". */
void recheck_hash_text(const char *text, size_t len, char out[RECHECK_HASH_LEN]);
/* The hash of lines start..end of path in the index (joined by '\n', no
 * final newline). 1 done, 0 the file or the lines are not in the index, -1
 * the index could not be read. */
int recheck_span_hash(struct action_ctx *ctx, const char *path, int start, int end, char out[RECHECK_HASH_LEN]);

enum recheck_verdict { RECHECK_UNCHANGED, RECHECK_MOVED, RECHECK_CHANGED, RECHECK_GONE, RECHECK_UNKNOWN };
const char *recheck_verdict_name(enum recheck_verdict v);

struct recheck_item {
    char *path;
    int start_line, end_line;
    enum recheck_verdict verdict;
    int new_start, new_end;          /* moved: where the text is now */
};

struct recheck_report {
    char *id;                        /* the saved answer's id as JSON text, or NULL */
    char *question;                  /* or NULL */
    char saved_commit[41];           /* "" when not recorded */
    char commit[41];                 /* the index's now ("" outside git) */
    int dirty;
    struct recheck_item *v;
    size_t n;
    int stale;                       /* a citation changed or is gone */
};

/* Checks every citation of saved (one answer object; its "citations", or a
 * transcript's "answer"."citations") against ctx's index. Returns 0, or -1
 * with err when saved holds no citations list or the index cannot be read. */
int recheck_answer(struct action_ctx *ctx, const cJSON *saved, struct recheck_report *rep, char *err, size_t errlen);
/* {"id","question","saved_commit","commit","dirty","stale","citations":[{"path",
 * "start_line","end_line","verdict",["new_start_line","new_end_line"]}]}. */
cJSON *recheck_report_json(const struct recheck_report *rep);
/* One line per citation: 'path:12-20  moved to 14-22'; caller frees. */
char *recheck_report_text(const struct recheck_report *rep);
void recheck_report_free(struct recheck_report *rep);   /* accepts NULL */

#endif
