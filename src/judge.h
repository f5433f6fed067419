/*
 * judge: LLM-as-judge with the SWE-QA rubric, as in the paper's section 4.4.
 * A judge model reads the question, the reference answer and a candidate
 * answer (prompts/judge.txt, placeholders {{question}}, {{reference}},
 * {{answer}}) and replies with one JSON object scoring five dimensions,
 * correctness, completeness, relevance, clarity and reasoning, each a whole
 * number from 1 to 20, plus an optional short rationale. Several judges may
 * score the same answer; their scores are averaged by the caller over the
 * judges that answered.
 *
 * A reply that is not such an object is sent back with the validation error
 * (at most JUDGE_MAX_REASKS times); after that the judge's score for that
 * answer is missing, never zero. A transport failure (after the HTTP layer's
 * own retries) is missing at once. Judges run at temperature 0.
 *
 * Judges are named on the command line (--judge-model SPEC, repeatable):
 *   NAME        the model NAME at the configured endpoint (api_base, key and
 *               provider from llm_config.h's resolution);
 *   NAME@URL    the model NAME at base URL URL (http:// or https://).
 * and may be described in the judges file, $XDG_CONFIG_HOME/drqa-tui/judges
 * (else ~/.config/drqa-tui/judges; a missing file is fine), one
 * `judge.NAME.FIELD = value` a line (# comments, blank lines; a value may be
 * quoted), FIELD one of:
 *   model     the model id sent to the server (default NAME);
 *   base      the base URL;
 *   key       the API key for that base;
 *   provider  openai (any OpenAI-compatible server) or anthropic.
 * With no --judge-model, every judge of the file is used, in file order.
 * A base defaults to the configured api_base, or to the vendor's own when the
 * judge's provider differs from the configured one. A key is only sent where
 * it belongs: the judge's own key, else the configured key when the judge's
 * base is the configured api_base, else OPENAI_API_KEY / ANTHROPIC_API_KEY
 * when the base is that vendor's public endpoint; otherwise none.
 */
#ifndef DRQA_JUDGE_H
#define DRQA_JUDGE_H

#include "llm.h"
#include "prompt.h"
#include "report.h"

#include <stddef.h>

#define JUDGE_MAX_REASKS 2
#define JUDGE_RATIONALE_MAX 400     /* bytes kept of a rationale */

struct judge_scores {
    int v[EVAL_NDIM];               /* in eval_dims order, 1..20 */
    char rationale[JUDGE_RATIONALE_MAX + 1];
};

/* Reads a judge reply (prose and ```json fences around the object are
 * tolerated). 0, or -1 with err in words meant for the model ("field
 * \"clarity\" must be a whole number from 1 to 20, got 25"). */
int judge_parse_reply(const char *text, struct judge_scores *s, char *err, size_t errlen);

struct judge {
    char *name;                     /* the label in score files */
    char *model, *base;             /* what is asked, where (never the key) */
    enum llm_provider provider;
    struct llm_backend *backend;
};

struct judge_set {
    struct judge *v;
    size_t n;
    char *file;                     /* the judges file read, or NULL */
};

/* Builds the judges from specs (may be empty) and the judges file (path, or
 * NULL for the default location) over the base configuration cfg. env: the
 * environment as for config_load_env (NULL: the process's). 0 (js->n may be
 * 0: no judge configured), or -1 with err naming the spec or FILE:LINE. */
int judge_set_resolve(struct judge_set *js, const struct drqa_config *cfg, const char *const *specs, size_t nspecs,
                      const char *path, const char *const *env, char *err, size_t errlen);
void judge_set_free(struct judge_set *js);   /* NULL ok */

/* The judge prompt template (prompt.h's search order), checked for the three
 * placeholders. NULL with err. */
struct prompt *judge_prompt_load(char *err, size_t errlen);
/* The rendered prompt (caller frees), or NULL with err. */
char *judge_prompt_render(const struct prompt *p, const char *question, const char *reference, const char *answer,
                          char *err, size_t errlen);

struct judge_outcome {
    int ok;                         /* s holds valid scores */
    struct judge_scores s;
    int attempts;                   /* model calls made */
    long input_tokens, output_tokens;
    char error[600];                /* why there is no score */
};

/* Asks one judge about one rendered prompt, re-asking on invalid replies.
 * usage (may be NULL) accounts the calls under tag "judge". */
void judge_ask(struct llm_backend *b, const char *prompt, struct llm_usage *usage, struct judge_outcome *out);

#endif
