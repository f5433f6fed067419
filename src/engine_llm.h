/*
 * engine_llm: the parts of the engine (engine.h) that a model configuration
 * adds beside the LLM policy itself.
 *
 * The LLM policy's fallback. Under --policy llm an unusable reply falls back
 * to the offline policy, which reads the index (term weights, definitions,
 * answer building). With --parallel K the policy is declared thread-safe, so
 * such a fallback (or a rollout) runs while another thread executes an
 * action; sqlite connections are opened without a mutex, one thread at a
 * time. So the fallback gets a read-only connection and an action context of
 * its own (struct engine_fallback), never the executor's; the LLM policy
 * already runs its fallback calls one at a time.
 *
 * Remote embeddings. When an embeddings server and model are configured
 * (embed_base and embed_model: --embed-base/--embed-model, DRQA_EMBED_*, the
 * config file; llm_config.h) and SemanticSearch is on, SemanticSearch ranks with
 * the remote vectors: engine_embed_setup registers the action with them
 * (semantic_action_register) and has every chunk embedded up front, the
 * semantic module caching the vectors by chunk hash and model in the index,
 * so a later run sends only the chunks that changed. What happens when the
 * server cannot be used:
 *   - at start-up (embedding the chunks fails, or, when every chunk was
 *     cached, a one-text check request fails): a warning on stderr names the
 *     server and the error, and the whole run uses the local vectors
 *     (semantic_local.h) fused with BM25, as without a configured model. One
 *     vector space per run: remote and local vectors are never mixed;
 *   - later in the run (a query's own embedding fails): the SemanticSearch
 *     action fails with the error, which the search records on its node and
 *     goes on; rag-function warns and ranks that question by BM25 alone
 *     (engine_embed_search).
 * The registration is process-wide and made once, by the first
 * engine_embed_setup; a later call only prepares another index's vectors in
 * the same way.
 *
 * The chat backends. One backend for the configured model, and one per
 * model that model.ROLE / --role-model names (a cheaper model for the filter
 * and evaluation, say) on the same provider, base and key; roles naming the
 * same model share its backend, so what a backend learns about its model
 * (llm.h) holds for all of them. --budget-usd with a model that has no
 * price cannot be enforced for that model's calls: a warning names it.
 */
#ifndef DRQA_ENGINE_LLM_H
#define DRQA_ENGINE_LLM_H

#include "llm_config.h"
#include "evidence.h"
#include "policy.h"
#include "semantic.h"

#include <sqlite3.h>
#include <stddef.h>

struct engine_fallback;

/* The repository outline for a question (outline_build, within budget
 * bytes) from the index at ctx, a const char * path, on a read-only
 * connection of its own, so any thread may call it: the LLM policy's
 * llm_policy_config.outline. NULL when the index cannot be read. */
char *engine_outline(void *ctx, const char *question, size_t budget);

/* Opens the fallback: the index at index_path read-only, an action context
 * on repo_abs and an offline policy over both (no_semantic as the run's).
 * The strings are copied. Returns 0, or -1 with a message. */
int engine_fallback_open(const char *index_path, const char *repo_abs, int no_semantic, struct engine_fallback **out,
                         char *err, size_t errlen);
void engine_fallback_close(struct engine_fallback *f);   /* accepts NULL */
/* The offline policy on the fallback's own connection (ctx: f). */
void engine_fallback_bind(struct engine_fallback *f, struct policy *out);
void engine_fallback_set_iterations(struct engine_fallback *f, int iterations);

/* Registers SemanticSearch (once per process) with remote embeddings when c
 * configures them and the server works, else with the local vectors, and
 * prepares db's vectors (on a cache of its own, freed before it returns);
 * no_semantic: registers without vectors and prepares none. Warnings go to stderr (and the log). Returns 0, or -1 with a message
 * (the registry refused, the index cannot be read). */
int engine_embed_setup(const struct drqa_config *c, sqlite3 *db, int no_semantic, char *err, size_t errlen);

/* The remote embeddings SemanticSearch uses in this process, or NULL for the
 * local vectors. */
const struct semantic_remote *engine_embed_remote(void);

/* semantic_search on actx's cache with this process's vectors (q->remote is
 * set here); when the remote query embedding fails, warns on stderr and ranks
 * by BM25 alone. */
struct action_ctx;
int engine_embed_search(struct action_ctx *actx, struct semantic_query *q, struct evidence *out, char *err,
                        size_t errlen);

struct llm_backend;

/* The chat backends of a run: main for c->model, role[r] for a role whose
 * model differs (NULL: the role uses main). Owned; engine_backends_close. */
struct engine_backends {
    struct llm_backend *main;
    struct llm_backend *role[CONFIG_NROLES];
};

/* Makes the backends of c (c->model must be set). Warns on stderr when
 * budget_usd > 0 and a model has no price. Returns 0, or -1 with a message. */
int engine_backends_open(const struct drqa_config *c, double budget_usd, struct engine_backends *out, char *err,
                         size_t errlen);
void engine_backends_close(struct engine_backends *bs);   /* accepts NULL and a zeroed struct */

/* The total cost in a struct llm_usage (ctx), for search_config.spent_usd. */
double engine_spent_usd(void *usage);

/* Embedding requests made by this process so far (tests and the log). */
long engine_embed_calls(void);

#endif
