/*
 * engine_llm: the LLM policy's fallback on a connection of its own, and the
 * remote embeddings of SemanticSearch with their fallback to local vectors
 * (see engine_llm.h for why and for the rules).
 */
#include "engine_llm.h"
#include "action.h"
#include "semantic_remote.h"
#include "llm.h"
#include "outline.h"
#include "policy_llm.h"
#include "policy_offline.h"
#include "store.h"
#include "url.h"
#include "sqlx.h"
#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- fallback */

struct engine_fallback {
    sqlite3 *db;
    struct action_ctx actx;
    struct offline_policy *offline;
    char *repo_abs;   /* the action context keeps a pointer to it */
};

int engine_fallback_open(const char *index_path, const char *repo_abs, int no_semantic, struct engine_fallback **out,
                         char *err, size_t errlen)
{
    *out = NULL;
    struct engine_fallback *f = xcalloc(1, sizeof *f);
    if (store_open(index_path, 1, &f->db, NULL, err, errlen)) {
        free(f);
        return -1;
    }
    sqlite3_busy_timeout(f->db, 5000);
    f->repo_abs = xstrdup(repo_abs);
    action_ctx_init(&f->actx, f->db, f->repo_abs);
    struct offline_config oc = {.db = f->db, .actx = &f->actx, .no_semantic = no_semantic};
    f->offline = offline_policy_new(&oc);
    *out = f;
    return 0;
}

void engine_fallback_close(struct engine_fallback *f)
{
    if (!f) return;
    offline_policy_free(f->offline);
    action_ctx_release(&f->actx);
    sqlx_close(f->db);
    free(f->repo_abs);
    free(f);
}

void engine_fallback_bind(struct engine_fallback *f, struct policy *out)
{
    offline_policy_bind(f->offline, out);
}

void engine_fallback_set_iterations(struct engine_fallback *f, int iterations)
{
    offline_policy_set_iterations(f->offline, iterations);
}

/* ---------------------------------------------------------------- backends */

_Static_assert(CONFIG_NROLES == LLM_ROLE_N, "config_role_names lists the roles of enum llm_role");

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void warn_unpriced(const struct llm_backend *b, const char *model, double budget_usd)
{
    const struct llm_profile *p = llm_backend_profile(b);
    if (budget_usd > 0 && p && (p->price_input < 0 || p->price_output < 0))
        warn("--budget-usd %g cannot be enforced for model '%s': it has no price; its calls count as $0. Set "
             "price.%s.input and price.%s.output (USD per million tokens) in the config file",
             budget_usd, model, model, model);
}

int engine_backends_open(const struct drqa_config *c, double budget_usd, struct engine_backends *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!(out->main = llm_backend_new(c, err, errlen))) return -1;
    warn_unpriced(out->main, c->model, budget_usd);
    for (int r = 0; r < CONFIG_NROLES; r++) {
        const char *m = c->role_model[r];
        if (!m || !strcmp(m, c->model)) continue;
        for (int k = 0; k < r && !out->role[r]; k++)
            if (c->role_model[k] && !strcmp(c->role_model[k], m)) out->role[r] = out->role[k];
        if (out->role[r]) continue;
        char e2[512];
        if (!(out->role[r] = llm_backend_new_model(c, m, e2, sizeof e2))) {
            snprintf(err, errlen, "the %s model '%s': %s", config_role_names[r], m, e2);
            engine_backends_close(out);
            return -1;
        }
        warn_unpriced(out->role[r], m, budget_usd);
        log_msg("llm: the %s role uses %s", config_role_names[r], out->role[r]->name(out->role[r]));
    }
    return 0;
}

void engine_backends_close(struct engine_backends *bs)
{
    if (!bs) return;
    for (int r = 0; r < CONFIG_NROLES; r++) {
        if (!bs->role[r]) continue;
        for (int k = r + 1; k < CONFIG_NROLES; k++)
            if (bs->role[k] == bs->role[r]) bs->role[k] = NULL;
        llm_backend_free(bs->role[r]);
        bs->role[r] = NULL;
    }
    llm_backend_free(bs->main);
    bs->main = NULL;
}

double engine_spent_usd(void *usage)
{
    struct llm_usage_entry e;
    llm_usage_get(usage, NULL, &e);
    return e.cost_usd;
}

/* ---------------------------------------------------------- remote vectors */

static pthread_mutex_t embed_lock = PTHREAD_MUTEX_INITIALIZER;
static int embed_registered;              /* semantic_action_register was called */
static int embed_remote_on;               /* ... with embed_sem below */
static struct embed_config embed_cfg;     /* its strings are the copies below */
static char *embed_base, *embed_model, *embed_key;
static struct semantic_remote embed_sem;
static atomic_size_t embed_fit;           /* the input bound the server took (embed_config.fit_bytes) */
static atomic_long embed_ncalls;

static int counted_embed(const struct embed_config *cfg, const char *const *texts, size_t n, float **vecs, int *dim,
                         char *err, size_t errlen)
{
    atomic_fetch_add(&embed_ncalls, 1);
    return embed_remote(cfg, texts, n, vecs, dim, err, errlen);
}

long engine_embed_calls(void)
{
    return atomic_load(&embed_ncalls);
}

static void warn(const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    url_redact_buf(msg, sizeof msg);
    fprintf(stderr, "drqa-tui: warning: %s\n", msg);
    log_msg("%s", msg);
}

/* Copies the embeddings settings of c into the process-wide remote; 0, or
 * -1 when c configures none. */
static int remote_from(const struct drqa_config *c)
{
    char e[256];
    struct embed_config tmp;
    if (!c->embed_base || !c->embed_model || embed_config_from(&tmp, c, e, sizeof e)) return -1;
    embed_base = xstrdup(tmp.base);
    embed_model = xstrdup(tmp.model);
    embed_key = tmp.key ? xstrdup(tmp.key) : NULL;
    embed_cfg = tmp;
    embed_cfg.base = embed_base;
    embed_cfg.model = embed_model;
    embed_cfg.key = embed_key;
    atomic_store(&embed_fit, 0);
    embed_cfg.fit_bytes = &embed_fit;
    embed_sem.fn = counted_embed;
    embed_sem.cfg = &embed_cfg;
    embed_sem.model = embed_model;
    return 0;
}

/* Embeds db's chunks through the remote (cached ones are not sent); when
 * none had to be sent, one short text checks that the server answers, since
 * every query needs it. */
static int remote_prepare(struct semantic_cache *sc, char *err, size_t errlen)
{
    long before = engine_embed_calls();
    if (semantic_prepare(sc, &embed_sem, err, errlen)) return -1;
    if (engine_embed_calls() != before) return 0;
    const char *probe = "embeddings check";
    float *v = NULL;
    int dim = 0;
    char e2[512] = "";
    if (counted_embed(&embed_cfg, &probe, 1, &v, &dim, e2, sizeof e2) != 0) {
        snprintf(err, errlen, "%s", e2[0] ? e2 : "no vectors returned");
        free(v);
        return -1;
    }
    free(v);
    return 0;
}

int engine_embed_setup(const struct drqa_config *c, sqlite3 *db, int no_semantic, char *err, size_t errlen)
{
    int rc = 0;
    struct semantic_cache *sc = semantic_cache_new(db);
    pthread_mutex_lock(&embed_lock);
    if (!embed_registered) {
        const struct semantic_remote *use = NULL;
        if (!no_semantic && remote_from(c) == 0) {
            char e2[768] = "";
            if (remote_prepare(sc, e2, sizeof e2) == 0) use = &embed_sem;
            else
                warn("remote embeddings (model '%s' at %s) unusable: %s; SemanticSearch uses the local vectors "
                     "and BM25 for this run", embed_model, embed_base, e2);
        }
        char e3[256];
        if (semantic_action_register(use, e3, sizeof e3)) {
            snprintf(err, errlen, "cannot register SemanticSearch: %s", e3);
            rc = -1;
            goto out;
        }
        embed_registered = 1;
        embed_remote_on = use != NULL;
        if (!no_semantic && !use && semantic_prepare(sc, NULL, err, errlen)) rc = -1;
    } else if (!no_semantic) {
        /* another index in the same process: the registration stands */
        if (embed_remote_on && remote_prepare(sc, err, errlen)) {
            char e2[768];
            snprintf(e2, sizeof e2, "%s", err);
            snprintf(err, errlen, "remote embeddings (model '%s' at %s) unusable for this index: %s", embed_model,
                     embed_base, e2);
            url_redact_buf(err, errlen);
            rc = -1;
        } else if (!embed_remote_on && semantic_prepare(sc, NULL, err, errlen)) {
            rc = -1;
        }
    }
out:
    pthread_mutex_unlock(&embed_lock);
    semantic_cache_free(sc);
    return rc;
}

const struct semantic_remote *engine_embed_remote(void)
{
    pthread_mutex_lock(&embed_lock);
    const struct semantic_remote *r = embed_remote_on ? &embed_sem : NULL;
    pthread_mutex_unlock(&embed_lock);
    return r;
}

int engine_embed_search(struct action_ctx *actx, struct semantic_query *q, struct evidence *out, char *err,
                        size_t errlen)
{
    struct semantic_cache *sc = semantic_cache_of(actx);
    q->remote = q->mode == SEMANTIC_BM25 ? NULL : engine_embed_remote();
    int n = semantic_search(sc, q, out, err, errlen);
    if (n >= 0 || !q->remote) return n;
    warn("SemanticSearch: %s; this question is ranked by BM25 alone", err);
    q->remote = NULL;
    q->mode = SEMANTIC_BM25;
    return semantic_search(sc, q, out, err, errlen);
}

char *engine_outline(void *ctx, const char *question, size_t budget)
{
    sqlite3 *db = NULL;
    char err[256];
    if (store_open(ctx, 1, &db, NULL, err, sizeof err)) {
        log_msg("engine: no repository outline: %s", err);
        return NULL;
    }
    sqlite3_busy_timeout(db, 5000);
    char *r = outline_build(db, question, budget);
    sqlx_close(db);
    return r;
}
