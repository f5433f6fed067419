/*
 * derive: the derived data of a fresh index, built as it is written (see
 * derive.h).
 */
#include "derive.h"
#include "action.h"
#include "semantic.h"
#include "semantic_local.h"
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct derive {
    struct vec_local_build *vb;     /* the chunks, until the fit takes them */
    struct linepost_builder *lp;
    struct vec_local_fit fit;
    pthread_t thread;
    int started;                    /* the fit runs on thread */
    int fitted;                     /* fit holds the model */
    atomic_int joining;             /* the writer has nothing left but to wait for the fit */
};

struct derive *derive_new(void)
{
    struct derive *d = xcalloc(1, sizeof *d);
    d->vb = vec_local_build_new();
    d->lp = linepost_builder_new();
    return d;
}

static void join(struct derive *d)
{
    if (!d->started) return;
    pthread_join(d->thread, NULL);
    d->started = 0;
}

void derive_free(struct derive *d)
{
    if (!d) return;
    join(d);
    vec_local_build_free(d->vb);
    linepost_builder_free(d->lp);
    vec_local_fit_free(&d->fit);
    free(d);
}

void derive_lines(const char *text, size_t len, struct linepost_file *out) { linepost_file_make(text, len, out); }

void derive_file(struct derive *d, long long file_id, const struct linepost_file *lines)
{
    linepost_builder_add(d->lp, file_id, lines);
}

void derive_chunk(struct derive *d, long long cid, const struct chunk *c)
{
    if (d->vb) vec_local_build_chunk(d->vb, cid, c->hash, c->fts_name, c->fts_doc, c->fts_body);
}

/* The parts of the fit's next stage: while the writer works, one fewer than
 * the cores; once it only waits for the fit, one for each core. */
static int fit_parts_now(void *ctx)
{
    struct derive *d = ctx;
    return ncores() - 1 + atomic_load(&d->joining);
}

static void *fit_thread(void *arg)
{
    struct derive *d = arg;
    vec_local_build_fit_by(d->vb, &d->fit, &(struct vec_local_parts){fit_parts_now, d});
    d->vb = NULL;
    d->fitted = 1;
    return NULL;
}

static void stored(sqlite3 *db, const char *what, int (*store)(void *ctx, sqlite3 *db, char *err, size_t errlen),
                   void *ctx);
static int store_lines(void *ctx, sqlite3 *db, char *err, size_t errlen);

void derive_start(struct derive *d, sqlite3 *db, size_t fit_budget)
{
    if (!d) return;
    /* a fit this small starts now: resolving, creating the indexes and
     * storing the line postings take about as long on the writer, and the
     * two add up to little memory */
    size_t bytes = d->vb ? vec_local_build_bytes(d->vb) : 0;
    if (d->vb) {
        log_msg("index: the vector fit takes %zu MB: it runs %s resolving", bytes >> 20,
                bytes <= fit_budget ? "beside" : "after");
        if (bytes <= fit_budget) derive_fit(d);
    }
    if (!d->lp) return;
    /* the files are all written: the line postings, which only they make,
     * are stored now, and their memory is free before resolving takes its */
    stored(db, "line postings", store_lines, d);
}

void derive_fit(struct derive *d)
{
    if (!d || d->started || !d->vb) return;
    d->started = pthread_create(&d->thread, NULL, fit_thread, d) == 0;
    if (!d->started) fit_thread(d);
}

/* Runs store in a savepoint of db's transaction: a part that fails leaves
 * none of its rows. */
static void stored(sqlite3 *db, const char *what, int (*store)(void *ctx, sqlite3 *db, char *err, size_t errlen),
                   void *ctx)
{
    char err[512] = "";
    if (sqlite3_exec(db, "SAVEPOINT derive", NULL, NULL, NULL) != SQLITE_OK) {
        log_msg("index: the %s were not stored while indexing: %s; the first question makes them", what,
                sqlite3_errmsg(db));
        return;
    }
    if (store(ctx, db, err, sizeof err)) {
        log_msg("index: the %s were not stored while indexing: %s; the first question makes them", what, err);
        sqlite3_exec(db, "ROLLBACK TO derive", NULL, NULL, NULL);
    }
    sqlite3_exec(db, "RELEASE derive", NULL, NULL, NULL);
}

static int store_vectors(void *ctx, sqlite3 *db, char *err, size_t errlen)
{
    struct derive *d = ctx;
    return semantic_store_fit_on(db, &d->fit, err, errlen);
}

static int store_lines(void *ctx, sqlite3 *db, char *err, size_t errlen)
{
    struct derive *d = ctx;
    int rc = linepost_builder_store_on(d->lp, db, err, errlen);
    linepost_builder_free(d->lp);
    d->lp = NULL;
    return rc;
}

static int store_names(void *ctx, sqlite3 *db, char *err, size_t errlen)
{
    (void)ctx;
    return action_names_store_on(db, err, errlen);
}

void derive_store(struct derive *d, sqlite3 *db)
{
    if (!d) return;
    if (d->lp) stored(db, "line postings", store_lines, d);
    stored(db, "symbol names", store_names, d);
    derive_fit(d);   /* a build that resolved nothing has not started it */
    atomic_store(&d->joining, 1);
    join(d);
    if (d->fitted) stored(db, "local vectors", store_vectors, d);
    vec_local_fit_free(&d->fit);
    d->fitted = 0;
}
