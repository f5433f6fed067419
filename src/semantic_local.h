/*
 * semantic_local: dense vectors for chunks and questions computed from the indexed
 * repository itself, with no model download and no network. The method is
 * random indexing over the repository's own vocabulary:
 *
 *   1. every term t (the code-aware terms of tok.h, as stored in chunks_fts:
 *      qualified-name, docstring and code terms) gets a fixed sparse random
 *      index vector r_t derived from a hash of the term, so it is the same on
 *      every machine and in every run;
 *   2. a chunk's signature is the idf-weighted sum of its terms' r_t;
 *   3. a term's context vector is the weighted sum of the signatures of the
 *      chunks it occurs in, mean-centred: terms used in the same functions,
 *      docstrings and classes ("logout", "session", "flush") end up close;
 *   4. a term's vector mixes its own r_t (exact match) with its context vector
 *      (related terms); a chunk's vector, and a question's, is the L2-normalised
 *      tf-idf weighted sum of its terms' vectors.
 *
 * So a question can reach a chunk through words that co-occur with the
 * chunk's identifiers elsewhere in the repository even when it shares no
 * literal term with it. The model is global to the corpus: any change to the
 * chunks refits it (see semantic.c, which decides when). Term vectors and
 * document frequencies live in vec_terms and the fit's corpus stamp in
 * vec_models, under the model name VEC_LOCAL_MODEL (store.c holds the DDL);
 * semantic.c stores the chunk vectors whole, in the same transaction.
 */
#ifndef DRQA_VEC_LOCAL_H
#define DRQA_VEC_LOCAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define VEC_LOCAL_DIM 256
/* Changing the method, its constants or how it is stored must change this
 * name: stored vectors of another method are then never mixed with new ones,
 * and a program of another layout fits its own instead of reading none. */
#define VEC_LOCAL_MODEL "local:ri256-v2"

/* A fitted model held in memory. Owns every array and string in it. */
struct vec_local_fit {
    size_t n;              /* chunks (of a file), ascending chunk id */
    int64_t *ids;          /* chunks.id */
    char **hashes;         /* chunks.hash */
    unsigned char *qvecs;  /* n * VEC_LOCAL_QBYTES: the chunk vectors as stored (vec_local_quantise) */
    size_t nterms;
    char **terms;
    int *df;               /* chunks containing the term */
    unsigned char *qtvecs; /* nterms * VEC_LOCAL_QBYTES: the term vectors as stored (vec_local_quantise) */
    long long ndocs;       /* chunks counted for idf */
    void *map;             /* term -> index (private) */
};

/* Fits the model over every chunk of db (chunks joined with chunks_fts).
 * Returns 0, or -1 with a message in err. */
int vec_local_fit(sqlite3 *db, struct vec_local_fit *out, char *err, size_t errlen);
/* The same with its arithmetic in nparts parts run at once (0: one per core,
 * up to 8, for a corpus large enough to gain): the same bytes for any nparts. */
int vec_local_fit_parts(sqlite3 *db, struct vec_local_fit *out, int nparts, char *err, size_t errlen);
void vec_local_fit_free(struct vec_local_fit *f);   /* accepts NULL */

/* The same fit from chunks handed in one at a time, as they are written
 * (derive.h): vec_local_build_chunk takes a chunk's id, hash and FTS terms
 * (name, doc, body: tok_terms output, as chunks_fts holds them), in the
 * order vec_local_fit reads them (their files' paths, then their ids);
 * vec_local_build_fit computes the model of the chunks handed in and frees
 * the builder. The same chunks give the same bytes as vec_local_fit. */
struct vec_local_build;
struct vec_local_build *vec_local_build_new(void);
void vec_local_build_chunk(struct vec_local_build *b, int64_t id, const char *hash, const char *name,
                           const char *doc, const char *body);
int vec_local_build_fit(struct vec_local_build *b, struct vec_local_fit *out, int nparts);
void vec_local_build_free(struct vec_local_build *b);   /* one not fitted; accepts NULL */
/* The same fit with each stage of its arithmetic in as many parts as
 * count(ctx) says just before it (1 to 8): a fit beside other work takes a
 * core more once that work is done. The same bytes for any counts. gate
 * (NULL: none) is called once the float rows are made, before the stages
 * that write the quantised vectors (most of the fit's memory besides the
 * rows): it returns when they may take it. */
struct vec_local_parts { int (*count)(void *ctx); void (*gate)(void *ctx); void *ctx; };
int vec_local_build_fit_by(struct vec_local_build *b, struct vec_local_fit *out, const struct vec_local_parts *parts);
/* The bytes vec_local_build_fit would allocate for the chunks handed in so
 * far, beyond what b holds (its float and quantised vectors, mostly): what
 * running it beside other work adds to the peak memory. */
size_t vec_local_build_bytes(const struct vec_local_build *b);
/* A fit's float rows of at least this many bytes (default 2 MiB) have a
 * mapping of their own, aligned for transparent huge pages; smaller ones are
 * malloc'd. The bytes fitted are the same either way (tests set it to 0 and
 * to SIZE_MAX to compare). */
extern size_t vec_local_huge_min;
/* Terms a stored block of term vectors holds (default 128; vec_local_save_on). */
extern size_t vec_local_term_block;

/* Replaces the stored model (vec_terms and the vec_models row, and the rows
 * of any earlier local model, embeddings included) with f, stamped with
 * stamp, inside the caller's write transaction on db. -1 with a message when
 * the database cannot be written. The chunk vectors are the caller's to
 * store (semantic.c keeps them whole, quantised). */
int vec_local_save_on(sqlite3 *db, const struct vec_local_fit *f, const char *stamp, char *err, size_t errlen);

/* A stored vector: a float scale, then VEC_LOCAL_DIM signed bytes. */
#define VEC_LOCAL_QBYTES (4 + VEC_LOCAL_DIM)
void vec_local_quantise(const float *v, unsigned char out[VEC_LOCAL_QBYTES]);
/* Reads a stored vector into v, L2-normalised; -1 when len is not VEC_LOCAL_QBYTES. */
int vec_local_dequantise(const void *blob, int len, float *v);

/* 1 when the stored model was fitted on the corpus identified by stamp (then
 * *ndocs is its chunk count), 0 when absent or stale. */
int vec_local_stored(sqlite3 *db, const char *stamp, long long *ndocs);

/* Embeds a question into out[VEC_LOCAL_DIM] (L2-normalised) using the term
 * vectors of fit when given, else those stored in db. Returns the number of
 * question terms the model knows; 0 leaves out all zeros. */
int vec_local_embed_query(sqlite3 *db, const struct vec_local_fit *fit, long long ndocs,
                          const char *text, float *out);

#endif
