/*
 * semantic_remote: text embeddings from an OpenAI-compatible server (OpenAI,
 * vLLM, Ollama /v1, llama.cpp server, ...). POST {base}/embeddings with an
 * "input" array, in batches; the vectors come back in input order (the reply
 * is sorted by its "index" fields), L2-normalised, so a dot product is the
 * cosine similarity. Tokens are accounted under the tag "embed".
 */
#ifndef DRQA_EMBED_REMOTE_H
#define DRQA_EMBED_REMOTE_H

#include "llm_config.h"
#include "http.h"
#include "llm.h"

#include <stddef.h>

struct embed_config {
    const char *base;          /* e.g. http://127.0.0.1:11434/v1 (not owned) */
    const char *model;         /* not owned */
    const char *key;           /* NULL: no Authorization header (not owned) */
    size_t batch;              /* texts per request; 0 means 64 */
    struct http_opts http;     /* timeouts, retries, reply cap, optional cancel flag */
    struct llm_usage *usage;   /* optional: tokens are added under "embed" */
    double price_in;           /* USD per million input tokens; < 0 unknown */
};

/* Fills e from a resolved config (strings point into c, which must outlive e).
 * Returns 0, or -1 with err when no embeddings server or model is configured. */
int embed_config_from(struct embed_config *e, const struct drqa_config *c, char *err, size_t errlen);

/*
 * Embeds texts[0, n). On success returns 0, *vecs is n * *dim floats (row i
 * is texts[i], unit length or all zero; caller frees) and *dim the dimension.
 * On failure returns an llm_rc (< 0), *vecs is NULL and err says what went
 * wrong (the server's message, a malformed reply, cancellation, ...).
 */
int embed_remote(const struct embed_config *e, const char *const *texts, size_t n, float **vecs, int *dim,
                 char *err, size_t errlen);

#endif
