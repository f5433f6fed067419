/*
 * semantic_remote: text embeddings from an OpenAI-compatible server (OpenAI,
 * vLLM, Ollama /v1, llama.cpp server, ...). POST {base}/embeddings with an
 * "input" array, in batches; the vectors come back in input order (the reply
 * is sorted by its "index" fields), L2-normalised, so a dot product is the
 * cosine similarity. Tokens are accounted under the tag "embed".
 */
#ifndef DRQA_EMBED_REMOTE_H
#define DRQA_EMBED_REMOTE_H

#define EMBED_BYTES_PER_TOKEN 2   /* bytes a token when cutting to a named limit: code runs 2-4 */
#define EMBED_MIN_BYTES 128       /* texts are never cut shorter than this */

#include "llm_config.h"
#include "http.h"
#include "llm.h"

#include <stdatomic.h>
#include <stddef.h>

struct embed_config {
    const char *base;          /* e.g. http://127.0.0.1:11434/v1 (not owned) */
    const char *model;         /* not owned */
    const char *key;           /* NULL: no Authorization header (not owned) */
    size_t batch;              /* texts per request; 0 means 64 */
    struct http_opts http;     /* timeouts, retries, reply cap, optional cancel flag */
    struct llm_usage *usage;   /* optional: tokens are added under "embed" */
    double price_in;           /* USD per million input tokens; < 0 unknown */
    /* Optional: the longest text in bytes the server took, learnt when it
     * refused an input as longer than the model accepts (0: not learnt). Kept
     * here so that the later calls of the run send texts cut to it at once. */
    atomic_size_t *fit_bytes;
};

/* Fills e from a resolved config (strings point into c, which must outlive e).
 * Returns 0, or -1 with err when no embeddings server or model is configured. */
int embed_config_from(struct embed_config *e, const struct drqa_config *c, char *err, size_t errlen);

/*
 * Embeds texts[0, n). On success returns 0, *vecs is n * *dim floats (row i
 * is texts[i], unit length or all zero; caller frees) and *dim the dimension.
 * On failure returns an llm_rc (< 0), *vecs is NULL and err says what went
 * wrong (the server's message, a malformed reply, cancellation, ...).
 *
 * Embedding models take a bounded input (512 tokens is common for small
 * ones; llama.cpp's server refuses an input over its physical batch). When
 * the server refuses a batch because an input is too long
 * (http_input_too_long), its texts are cut (at a UTF-8 boundary) to a bound
 * derived from the limit the message names (EMBED_BYTES_PER_TOKEN bytes a
 * token), else to half the longest, and the batch is sent again, down to
 * EMBED_MIN_BYTES; the bound is kept in *fit_bytes for later calls. A text's
 * vector is then that of its beginning.
 */
int embed_remote(const struct embed_config *e, const char *const *texts, size_t n, float **vecs, int *dim,
                 char *err, size_t errlen);

#endif
