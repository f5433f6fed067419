/*
 * curate: the rule-based evidence-curation stage of the execution agent
 * (paper 3.3.3). The raw spans an action returned are turned into a compact,
 * citation-ready bundle for one question:
 *   - overlapping or adjacent verbatim spans of one file are merged, a
 *     skeleton covered by a verbatim span of the same lines is dropped;
 *   - spans are ranked by relevance to the question: shared code-aware terms
 *     (tok.h) weighted by their rarity among the spans, plus a large weight for
 *     identifiers of the question ('parse_args_spec', 'App.run', `x`) found
 *     literally in the span; spans sharing nothing with the question are
 *     discarded when others do;
 *   - boilerplate is collapsed into one-line elision markers (action.h):
 *     import blocks, long literal tables (dict/list/tuple/set displays) and
 *     long string constants, unless they contain an identifier of the question;
 *   - spans are kept best first within a token budget (bytes / 4); a span that
 *     does not fit is cut down to a focused quote around its most relevant
 *     lines, with its exact line range.
 * The result is deterministic: ties are broken by path and line.
 */
#ifndef DRQA_CURATE_H
#define DRQA_CURATE_H

#include "evidence.h"

#define CURATE_COLLAPSE_MIN 12    /* literal/string blocks longer than this many lines are collapsed */
#define CURATE_IMPORTS_MIN 3      /* import blocks of at least this many lines are collapsed */

/* Appends the curated spans of raw to out (score = relevance, best first).
 * budget_tokens 0 means no budget. Returns the number of spans appended. */
size_t curate(const char *question, const struct evidence *raw, long long budget_tokens, struct evidence *out);

/* The identifiers of a question that must match literally: words with '_',
 * '.', inner capitals or digits, words followed by '()' and anything in
 * backquotes. Appends them to ids (each malloc'd); returns the count. */
size_t curate_identifiers(const char *question, char ***ids);

/* Relevance of one span's text to the question's terms (as curate ranks). */
double curate_relevance(const char *question, const struct evidence_span *span);

#endif
