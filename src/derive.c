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

/* A chunk of a file written before its turn, as derive_chunk had it. */
struct early_chunk {
    long long cid;
    char *hash, *name, *doc, *body;
};

/* A place written before its turn: its file (skipped: none) and chunks. */
struct early {
    size_t place;
    int skipped;
    long long file_id;
    struct linepost_file lines;
    struct early_chunk *chunks;
    size_t nchunks, capchunks;
};

struct derive {
    struct vec_local_build *vb;     /* the chunks, until the fit takes them */
    struct linepost_builder *lp;
    size_t next;                    /* the place whose file is taken next */
    int in_turn;                    /* the file being written is at next: its chunks go in now */
    struct early *cur;              /* else the early place they wait with */
    struct early *early;            /* by place, ascending */
    size_t nearly, capearly;
    int disordered;                 /* a place came twice: nothing is built */
    struct vec_local_fit fit;
    pthread_t thread;
    int started;                    /* the fit runs on thread */
    int fitted;                     /* fit holds the model */
    atomic_int joining;             /* the writer has nothing left but to wait for the fit */
    pthread_mutex_t gate_mu;        /* the fit's gate (fit_gate): */
    pthread_cond_t gate_cv;
    int gate_open;                  /* its quantised vectors may take their memory */
};

struct derive *derive_new(void)
{
    struct derive *d = xcalloc(1, sizeof *d);
    d->vb = vec_local_build_new();
    d->lp = linepost_builder_new();
    pthread_mutex_init(&d->gate_mu, NULL);
    pthread_cond_init(&d->gate_cv, NULL);
    return d;
}

/* The fit may go on to its quantised vectors. */
static void open_gate(struct derive *d)
{
    pthread_mutex_lock(&d->gate_mu);
    d->gate_open = 1;
    pthread_cond_broadcast(&d->gate_cv);
    pthread_mutex_unlock(&d->gate_mu);
}

static void join(struct derive *d)
{
    if (!d->started) return;
    pthread_join(d->thread, NULL);
    d->started = 0;
}

static void early_free(struct early *e)
{
    linepost_file_free(&e->lines);
    for (size_t i = 0; i < e->nchunks; i++) {
        struct early_chunk *c = &e->chunks[i];
        free(c->hash);
        free(c->name);
        free(c->doc);
        free(c->body);
    }
    free(e->chunks);
}

void derive_free(struct derive *d)
{
    if (!d) return;
    open_gate(d);
    join(d);
    for (size_t i = 0; i < d->nearly; i++) early_free(&d->early[i]);
    free(d->early);
    vec_local_build_free(d->vb);
    linepost_builder_free(d->lp);
    vec_local_fit_free(&d->fit);
    pthread_mutex_destroy(&d->gate_mu);
    pthread_cond_destroy(&d->gate_cv);
    free(d);
}

void derive_lines(const char *text, size_t len, struct linepost_file *out) { linepost_file_make(text, len, out); }

/* ---- places in path order ----
 * The files come in the order they were parsed in (src/index_pool.c,
 * pool_order); the line postings and the fit take them in path order, as a
 * question builds them from the index (same bytes). A file that comes before
 * its turn waits here, with copies of its chunks' terms, until the places
 * before it are in. */

static void take_file(struct derive *d, long long file_id, struct linepost_file *lines)
{
    if (d->lp) linepost_builder_add(d->lp, file_id, lines);
}

static void take_chunk(struct derive *d, long long cid, const char *hash, const char *name, const char *doc,
                       const char *body)
{
    if (d->vb) vec_local_build_chunk(d->vb, cid, hash, name, doc, body);
}

/* The place at next is in: so is every early one whose turn comes now. */
static void advance(struct derive *d)
{
    d->next++;
    size_t k = 0;
    for (; k < d->nearly && d->early[k].place == d->next; k++) {
        struct early *e = &d->early[k];
        if (!e->skipped) {
            take_file(d, e->file_id, &e->lines);
            for (size_t i = 0; i < e->nchunks; i++) {
                struct early_chunk *c = &e->chunks[i];
                take_chunk(d, c->cid, c->hash, c->name, c->doc, c->body);
            }
        }
        early_free(e);
        d->next++;
    }
    if (k) {
        memmove(d->early, d->early + k, (d->nearly - k) * sizeof *d->early);
        d->nearly -= k;
    }
}

/* The file written last is complete: its place is in, if it was its turn. */
static void close_current(struct derive *d)
{
    if (d->in_turn) advance(d);
    d->in_turn = 0;
    d->cur = NULL;
}

/* A new early place (NULL when it came already: the build is then disordered). */
static struct early *early_at(struct derive *d, size_t place)
{
    size_t lo = 0, hi = d->nearly;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->early[mid].place < place) lo = mid + 1;
        else hi = mid;
    }
    if (place < d->next || (lo < d->nearly && d->early[lo].place == place)) {
        d->disordered = 1;
        return NULL;
    }
    ARRAY_GROW(d->early, d->nearly, d->capearly, 16);
    memmove(&d->early[lo + 1], &d->early[lo], (d->nearly - lo) * sizeof *d->early);
    memset(&d->early[lo], 0, sizeof d->early[lo]);
    d->early[lo].place = place;
    d->nearly++;
    return &d->early[lo];
}

void derive_file(struct derive *d, size_t place, long long file_id, struct linepost_file *lines)
{
    close_current(d);
    if (place == d->next) {
        take_file(d, file_id, lines);
        d->in_turn = 1;
        return;
    }
    struct early *e = early_at(d, place);
    if (!e) return;
    e->file_id = file_id;
    if (lines) {
        e->lines = *lines;   /* its bytes wait here */
        lines->data = (struct buf)BUF_INIT;
    }
    d->cur = e;
}

void derive_skip(struct derive *d, size_t place)
{
    close_current(d);
    if (place == d->next) advance(d);
    else {
        struct early *e = early_at(d, place);
        if (e) e->skipped = 1;
    }
}

void derive_chunk(struct derive *d, long long cid, const struct chunk *c)
{
    if (d->in_turn) {
        take_chunk(d, cid, c->hash, c->fts_name, c->fts_doc, c->fts_body);
        return;
    }
    if (!d->cur) return;
    struct early *e = d->cur;
    ARRAY_GROW(e->chunks, e->nchunks, e->capchunks, 8);
    e->chunks[e->nchunks++] = (struct early_chunk){cid, xstrdup(c->hash), c->fts_name ? xstrdup(c->fts_name) : NULL,
                                                   c->fts_doc ? xstrdup(c->fts_doc) : NULL,
                                                   c->fts_body ? xstrdup(c->fts_body) : NULL};
}

/* The parts of the fit's next stage: while the writer works, one fewer than
 * the cores; once it only waits for the fit, one for each core. */
static int fit_parts_now(void *ctx)
{
    struct derive *d = ctx;
    return ncores() - 1 + atomic_load(&d->joining);
}

/* The fit's gate: its float rows are made beside resolving, its quantised
 * vectors once resolving has given its memory back (derive_fit). */
static void fit_gate(void *ctx)
{
    struct derive *d = ctx;
    pthread_mutex_lock(&d->gate_mu);
    while (!d->gate_open) pthread_cond_wait(&d->gate_cv, &d->gate_mu);
    pthread_mutex_unlock(&d->gate_mu);
}

static void *fit_thread(void *arg)
{
    struct derive *d = arg;
    vec_local_build_fit_by(d->vb, &d->fit, &(struct vec_local_parts){fit_parts_now, fit_gate, d});
    d->vb = NULL;
    d->fitted = 1;
    return NULL;
}

static void stored(sqlite3 *db, const char *what, int (*store)(void *ctx, sqlite3 *db, char *err, size_t errlen),
                   void *ctx);
static int store_lines(void *ctx, sqlite3 *db, char *err, size_t errlen);

/* Starts the fit on a thread of its own (a no-op once started); with no
 * thread, it runs here, whole. */
static void start_fit(struct derive *d)
{
    if (d->started || !d->vb) return;
    d->started = pthread_create(&d->thread, NULL, fit_thread, d) == 0;
    if (!d->started) {
        open_gate(d);
        fit_thread(d);
    }
}

void derive_start(struct derive *d, sqlite3 *db, size_t fit_budget)
{
    if (!d) return;
    close_current(d);
    if (d->nearly || d->disordered) {
        /* a place never came, or came twice: what was built is not the
         * index's files' */
        log_msg("index: the files did not all come to the derived data in their places; the first question makes it");
        vec_local_build_free(d->vb);
        d->vb = NULL;
        linepost_builder_free(d->lp);
        d->lp = NULL;
    }
    /* The fit starts now, beside storing the line postings and resolving:
     * its float rows (its first stages) while the writer works, and, when
     * it is small, its quantised vectors too; a large one's wait until the
     * edges are resolved (derive_fit), when resolving's tables are freed:
     * the two are the largest things a build of a large tree holds, and one
     * after the other they do not add up. */
    size_t bytes = d->vb ? vec_local_build_bytes(d->vb) : 0;
    if (d->vb) {
        log_msg("index: the vector fit takes %zu MB: it runs beside resolving%s", bytes >> 20,
                bytes <= fit_budget ? "" : ", its quantised vectors after it");
        if (bytes <= fit_budget) open_gate(d);
        start_fit(d);
    }
    if (!d->lp) return;
    /* the files are all written: the line postings, which only they make,
     * are stored now, and their memory is free before resolving takes its */
    stored(db, "line postings", store_lines, d);
}

void derive_fit(struct derive *d)
{
    if (!d) return;
    open_gate(d);
    start_fit(d);
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
