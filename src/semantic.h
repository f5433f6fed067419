/*
 * semantic: the SemanticSearch action's engine. Finds the chunks of the index
 * (functions, class outlines, module windows) that best answer a natural-
 * language query, by three rankings the caller can choose between:
 *
 *   bm25    FTS5 bm25() over chunks_fts with the question's code-aware terms
 *           (tok.h, stopwords dropped) OR-ed together, columns weighted
 *           name > doc > path > body;
 *   dense   cosine between the query's and the chunks' vectors: the remote
 *           embedding model when one is given (struct semantic_remote), else
 *           the local vectors fitted on the repository (semantic_local.h);
 *   hybrid  reciprocal-rank fusion of the two lists (k = 60): each chunk scores
 *           the sum of 1/(60 + rank) over the lists it appears in. Ranks rather
 *           than raw scores are fused because bm25 and cosine live on unrelated
 *           scales that shift from question to question.
 *
 * Every mode then applies light structural priors: module windows weigh less
 * than definitions (a definition is a complete, named unit), and with category
 * 'any' test code weighs a little less than the code under test. Category
 * 'implementation' excludes test files and 'test' keeps only them; tests are
 * recognised by path (fpattern_is_test).
 *
 * Vectors are computed on first use and cached twice: in the database (the
 * embeddings table, by chunk hash and model; remote vectors are never
 * requested twice for the same chunk text) and in memory per connection, so
 * a query costs one bm25 lookup plus one pass of dot products. Any change to
 * the chunks is noticed on the next query (PRAGMA data_version and the
 * connection's change counter, then a stamp over the chunk list) and the
 * local model is refitted.
 *
 * A connection must be used by one thread at a time (as sqlite requires of
 * NOMUTEX connections); different connections may search concurrently.
 */
#ifndef DRQA_SEMANTIC_H
#define DRQA_SEMANTIC_H

#include <sqlite3.h>
#include <stddef.h>

#include "evidence.h"

struct embed_config;   /* semantic_remote.h */

/* A remote embedding service: fn embeds n texts into *vecs (n * *dim floats,
 * malloc'd, the caller frees), the signature of embed_remote() in
 * semantic_remote.h; cfg is passed through to it; model names the vectors in the
 * embeddings cache (the remote model id), so a change of model never mixes
 * vectors. Chunks are sent in batches of SEMANTIC_EMBED_BATCH on first use
 * and their vectors stored by (chunk hash, model): unchanged chunks are never
 * embedded twice, also across processes. */
typedef int (*semantic_embed_fn)(const struct embed_config *cfg, const char *const *texts, size_t n,
                                 float **vecs, int *dim, char *err, size_t errlen);
struct semantic_remote {
    semantic_embed_fn fn;
    const struct embed_config *cfg;
    const char *model;
};
#define SEMANTIC_EMBED_BATCH 32
#define SEMANTIC_EMBED_TEXT_MAX 8000   /* bytes of a chunk sent for embedding */

enum semantic_category { SEMANTIC_ANY, SEMANTIC_IMPLEMENTATION, SEMANTIC_TEST };
enum semantic_mode { SEMANTIC_HYBRID, SEMANTIC_BM25, SEMANTIC_DENSE };

/* What SemanticSearch keeps in memory for one connection: the chunk list,
 * the file list and the dense matrices, checked against the index on every
 * query (a change made through db or another connection is noticed). Its
 * owner makes it for a connection and frees it before closing that
 * connection; an action context owns one (semantic_cache_of). One thread at
 * a time uses a cache, as one uses its connection. */
struct semantic_cache;
struct semantic_cache *semantic_cache_new(sqlite3 *db);
void semantic_cache_free(struct semantic_cache *c);   /* accepts NULL */

/* Tells c that text (copied; NULL: none) will be asked later, as a search
 * asks its question again at the end: the first pass over the stored local
 * vectors for another text scores it too, so asking it reads them no second
 * time. The results are those of asking it without the hint. */
void semantic_cache_expect(struct semantic_cache *c, const char *text);

#define SEMANTIC_DEFAULT_TOP_K 5
#define SEMANTIC_MAX_TOP_K 100

struct semantic_query {
    const char *text;                 /* the question or phrase; required */
    enum semantic_category category;
    const char *file_pattern;         /* glob (fpattern.h) or NULL/"" for all files */
    int top_k;                        /* <= 0: SEMANTIC_DEFAULT_TOP_K; capped at SEMANTIC_MAX_TOP_K */
    enum semantic_mode mode;
    const struct semantic_remote *remote; /* remote embeddings, or NULL for local vectors */
};

/* Appends up to top_k spans to out, best first: path, chunk lines, the lines'
 * text from the index, label = qualified name or 'module lines a-b', score =
 * the mode's score after priors. Returns the number appended (0 when nothing
 * matches), or -1 with a message in err (no index, bad pattern, remote
 * embedding failure). */
int semantic_search(struct semantic_cache *c, const struct semantic_query *q, struct evidence *out,
                    char *err, size_t errlen);

/* Fits (or fetches) the vectors now instead of on the first query, e.g. at
 * the end of indexing. Local vectors already stored for the current chunks
 * are left in the index: each connection's first query reads them. remote as
 * in semantic_query. -1 with a message on failure. */
int semantic_prepare(struct semantic_cache *c, const struct semantic_remote *remote, char *err, size_t errlen);

/* Stores f (semantic_local.h), fitted on the chunks w now holds, as the local
 * model and its matrix, inside w's write transaction (an index being built,
 * derive.h); frees f's chunk vectors. -1 with a message when f's chunks are
 * not w's or the rows cannot be written. */
struct vec_local_fit;
int semantic_store_fit_on(sqlite3 *w, struct vec_local_fit *f, char *err, size_t errlen);

/* The SemanticSearch state of an action context (made on first use, on the
 * context's connection; action_ctx_release frees it): what the action and the
 * engine's rag-function retrieval query through. */
struct action_ctx;
struct semantic_cache *semantic_cache_of(struct action_ctx *ctx);

/* Registers the SemanticSearch action (semantic_action.c) with the action
 * registry, using remote for every call (NULL: local vectors). Call once at
 * start-up, before any thread runs actions; remote must outlive the process's
 * use of actions. -1 with a message when the registry refuses it. */
int semantic_action_register(const struct semantic_remote *remote, char *err, size_t errlen);

/* "any" | "implementation" | "test" (also "impl", "tests"); NULL or "" is any.
 * -1 on anything else. */
int semantic_parse_category(const char *s, enum semantic_category *out);

/* The FTS5 MATCH expression for text: its terms (tok_terms with stopwords
 * dropped, duplicates removed) each as a quoted string, joined with OR, so that
 * no user input can be read as FTS5 syntax. NULL when text has no terms.
 * Caller frees. */
char *semantic_fts_query(const char *text);

#endif
