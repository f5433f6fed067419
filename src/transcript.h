/*
 * transcript: a search written down. The JSON form holds the question, the
 * configuration, every node of the tree (id, parent, action and arguments,
 * perception report, curated observation and its rendering, value, feedback,
 * visits, value sum and Q, the UCT score at each selection, status, error,
 * tokens and timings), the search totals and the answer. It loads back into
 * a tree for --replay, and save -> load -> save gives the same bytes.
 * The Markdown form is for people: the answer, its citations and the winning
 * trajectory step by step.
 *
 * Credentials never reach a transcript: the configuration has no field for
 * one, and every configuration object written (including free-form `extra`
 * settings and configurations read back from files) is filtered: members
 * whose names look like credentials (key, secret, password, token but not
 * ...tokens, auth, cookie, credential) or whose values look like one
 * ("sk-...", "Bearer ...") are dropped, and URLs lose user:password@ and
 * their query string.
 *
 * Files are written owner-only (0600) through a temporary file and rename, so
 * a reader never sees half a transcript.
 */
#ifndef DRQA_TRANSCRIPT_H
#define DRQA_TRANSCRIPT_H

#include "mcts.h"
#include "search.h"

#include <cjson/cJSON.h>
#include <stddef.h>

#define TRANSCRIPT_FORMAT "drqa-transcript"
#define TRANSCRIPT_VERSION 1

/* Filled by the caller; strings are borrowed and may be NULL. */
struct transcript_config {
    const char *repo, *index_path, *mode, *policy, *provider, *model, *api_base;
    const char *embed_base, *embed_model;
    int iterations, max_expand, parallel;
    unsigned long long seed;
    long long budget_tokens;
    double exploration;
    int no_mcts, no_perception, no_evaluation, no_semantic;
    const char *created;       /* a timestamp the caller chose, or NULL */
    const char *commit;        /* HEAD's commit the index describes, or NULL/"" outside git */
    int dirty;                 /* ... and the indexed files differed from it */
    const cJSON *extra;        /* further settings to record; filtered; may be NULL */
};

struct drqa_config;
/* Replaces what the command line may leave unsaid with what the run uses:
 * the policy, and with a model its provider, model, api_base, and the
 * embedder (strings borrowed from cfg). */
void transcript_config_resolve(struct transcript_config *c, const struct drqa_config *cfg);
/* Sets config's "created" to the current UTC time (ISO 8601) when it is
 * missing or null. */
void transcript_stamp_created(cJSON *config);

/* The filtered JSON form of a configuration (caller deletes). */
cJSON *transcript_config_json(const struct transcript_config *c);
/* 1 when a member name looks like it holds a credential. */
int transcript_secret_name(const char *name);

/* The JSON text (caller frees). config and answer may be NULL. */
char *transcript_json(const struct mcts_tree *t, const cJSON *config, const struct search_answer *a);
int transcript_save(const char *path, const struct mcts_tree *t, const cJSON *config,
                    const struct search_answer *a, char *err, size_t errlen);

/* Markdown of the answer and the trajectory it came from (caller frees);
 * control characters but newline and tab are written as visible escapes
 * (text_term_safe). */
char *transcript_markdown(const struct mcts_tree *t, const struct search_answer *a);
int transcript_save_markdown(const char *path, const struct mcts_tree *t,
                             const struct search_answer *a, char *err, size_t errlen);

/* Reads a transcript back. On success *tree, *config (may be a NULL pointer
 * argument: then not returned) and *answer (NULL when the transcript has none)
 * belong to the caller. On failure -1 with a message naming the file and the
 * problem, and nothing is returned. */
int transcript_parse(const char *text, const char *name, struct mcts_tree **tree, cJSON **config,
                     struct search_answer **answer, char *err, size_t errlen);
int transcript_load(const char *path, struct mcts_tree **tree, cJSON **config,
                    struct search_answer **answer, char *err, size_t errlen);

#endif
