/*
 * index: the update of a repository's index (see index.h). The calling thread
 * scans, compares the listing with the files table, and hands the changed
 * files to parser threads through a shared counter (index_pool.c); each
 * thread reads, decodes, parses, chunks and compresses a file and puts the
 * result in a small bounded queue, which the calling thread drains into
 * sqlite with prepared statements (index_write.c). Keeping one writer avoids
 * sqlite lock contention, and keeping tokenisation and compression on the
 * parser threads keeps that writer fast. This file runs an update step by
 * step; what the index records of itself is in index_meta.c.
 */
#include "index_int.h"
#include "index_chunk.h"
#include "parse.h"
#include "sigclean.h"
#include "sqlx.h"
#include "index_scan.h"
#include "store.h"
#include "store_rows.h"
#include "store_text.h"
#include "writeback.h"
#include "util.h"
#include "ztext.h"
#include <config.h>  /* autoconf: PACKAGE_VERSION */

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 1, with the message, once the caller asked the update to stop. */
static int cancelled(const struct index_options *opt, char *err, size_t errlen)
{
    if (!opt->cancel || !atomic_load(opt->cancel)) return 0;
    snprintf(err, errlen, "the index update was cancelled; the previous index is kept as it was");
    return 1;
}

/* update_once: another connection holds the index's write lock (positive,
 * unlike INDEX_EFAIL and INDEX_EUSAGE). */
#define UPDATE_BUSY 1

/* ---- one update, step by step ------------------------------------------------------
 * update_once runs the steps in order: open (the index in place, or a fresh
 * side file), scan, merge the listing with the files table, then either keep
 * an index that nothing changed, or write: begin, parse and write the changed
 * files, finish (skipped files, resolve, indexes, meta, commit) and, for a
 * fresh build, install the side file at the index path. */

static int update_fail(struct update *U, const char *what, const char *path)
{
    snprintf(U->err, U->errlen, "%s '%s': %s", what, path, sqlite3_errmsg(U->db));
    return -1;
}

/* The repository's real path, which must be a directory, and the index's directory. */
static int open_root(struct update *U, const char *repo_root)
{
    U->root = realpath(repo_root, NULL);
    if (!U->root) {
        snprintf(U->err, U->errlen, "cannot read the repository '%s': %s", repo_root, strerror(errno));
        return -1;
    }
    struct stat rst;
    if (stat(U->root, &rst) != 0 || !S_ISDIR(rst.st_mode)) {
        snprintf(U->err, U->errlen, "the repository '%s' is not a directory; give the repository's top directory",
                 repo_root);
        return -1;
    }
    return store_mkdir_for(U->index_path, U->err, U->errlen);
}

/* Opens the index in place. An index that holds no files, or that store_open
 * recreated for another schema, is built afresh instead (U->fresh). */
static int open_existing(struct update *U)
{
    *U->index_fault = 1;
    if (store_open(U->index_path, 0, &U->db, &U->S->rebuilt, U->err, U->errlen)) return -1;
    int has = has_rows(U->db, "files");
    if (has < 0) return update_fail(U, "cannot read the index", U->index_path);
    if (U->S->rebuilt || !has) {
        U->fresh = 1;
        sqlite3_close(U->db);
        U->db = NULL;
    }
    *U->index_fault = 0;
    return 0;
}

/* A first index (or one rebuilt for another schema) is written into a side
 * file without a journal and renamed into place when complete: there is no
 * previous index for a journal to protect, and skipping the WAL halves what
 * is written. One builder at a time: the side file is locked while it is
 * written. A second process waits, then finds the index in place and updates
 * it normally (returns 1: look again). A side file left by a killed run is
 * simply reused. Returns 0 with the side file open, 1, or -1. */
static int open_fresh(struct update *U, int retried)
{
    U->S->rebuilt = 1;
    U->tmp_path = xasprintf("%s.tmp", U->index_path);
    U->tmp_fd = lock_side_file(U->tmp_path, U->opt);
    if (U->tmp_fd >= 0) U->tmp_slot = sigclean_add(U->tmp_path);
    if (U->tmp_fd < 0) {
        snprintf(U->err, U->errlen, "cannot create the index '%s': %s (pass --index PATH to put the index elsewhere)",
                 U->tmp_path, errno == EINVAL ? "it is not a regular file" : strerror(errno));
        free(U->tmp_path);
        U->tmp_path = NULL;
        return -1;
    }
    struct stat ist;
    int now_version = -1;
    if (!retried && stat(U->index_path, &ist) == 0 && ist.st_size > 0 &&
        (!U->force_fresh || (store_classify(U->index_path, &now_version, NULL, 0) == STORE_OURS &&
                             now_version == STORE_SCHEMA_VERSION))) {
        /* built by the process this one waited for */
        sigclean_remove(U->tmp_slot);
        U->tmp_slot = -1;
        unlink(U->tmp_path);
        close(U->tmp_fd);
        U->tmp_fd = -1;
        free(U->tmp_path);
        U->tmp_path = NULL;
        U->force_fresh = 0;
        return 1;
    }
    /* emptied only when not empty: on ext4, truncating a file to nothing
     * (even an empty one) makes its last close write all its pages and wait
     * (auto_da_alloc), and sqlite3_close in install_fresh then waited 70-80
     * ms for sympy's 100 MB index */
    struct stat tst;
    if (fstat(U->tmp_fd, &tst) != 0 || (tst.st_size > 0 && ftruncate(U->tmp_fd, 0) != 0)) {
        snprintf(U->err, U->errlen, "cannot reset the index '%s': %s", U->tmp_path, strerror(errno));
        return -1;
    }
    remove_db_side_files(U->tmp_path);
    if (store_open(U->tmp_path, 0, &U->db, NULL, U->err, U->errlen)) return -1;
    if (store_exec(U->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", U->err, U->errlen)) return -1;
    /* synchronous=OFF: the one fsync is install_fresh's, and by then most
     * pages are on their way to the disk */
    U->wb = writeback_start(U->tmp_fd);
    /* Secondary indexes are cheaper built once, sorted, than grown row by
     * row; nothing before the end of the update reads through them. FTS5
     * gets a larger in-memory term table so it writes fewer segments to merge. */
    if (drop_indexes(U->db, &U->index_ddl, U->err, U->errlen) ||
        store_exec(U->db, "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('hashsize', 8388608)", U->err, U->errlen))
        return -1;
    return 0;
}

/* Makes a rename into path's directory durable; a failure costs only that
 * (the rename itself has happened), so it is logged. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? (slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path))) : xstrdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) log_msg("cannot sync the directory '%s': %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    free(dir);
}

/* The index to write: in place, or a fresh side file; then what it recorded. */
static int open_index(struct update *U)
{
    for (int retried = 0;; retried = 1) {   /* look once more, then build regardless */
        struct stat ist;
        U->fresh = U->force_fresh || stat(U->index_path, &ist) != 0 || ist.st_size == 0;
        if (!U->fresh && open_existing(U)) return -1;
        if (U->fresh) {
            int r = open_fresh(U, retried);
            if (r < 0) return -1;
            if (r > 0) continue;
        }
        break;
    }
    /* A larger page cache keeps the b-trees being changed in memory. A fresh
     * build fills them in order and, with no journal, spills a page by writing
     * it once: there 4 MB did as well as 16 MB (sympy: the same time, 7-12 MB
     * less peak RSS). An update takes its larger cache only once it writes
     * (begin_write): the check that finds nothing changed reads each page
     * once, and pages it would keep only cost fresh memory (a tree of 100,000
     * files: its compare takes 21 ms, 51 ms with the larger cache). */
    if (U->fresh) sqlite3_exec(U->db, "PRAGMA cache_size=-4096", NULL, NULL, NULL);
    U->max = effective_max(U->fresh ? NULL : U->db, U->opt, U->S, &U->opts_changed);
    if (!U->fresh) U->dirs_reset = load_dirs(U->db, &U->dirs);
    return 0;
}

/* The rules that left paths out, as index_stats.ignored lists them. */
static void record_ignored(struct index_stats *S, const struct scan_result *sr)
{
    size_t o = 0;
    for (size_t i = 0; i < sr->nrules; i++) {
        int k = snprintf(S->ignored + o, sizeof S->ignored - o, "%ld\t%s\n", sr->rules[i].paths, sr->rules[i].rule);
        if (k < 0 || (size_t)k >= sizeof S->ignored - o) {
            S->ignored[o] = 0;
            S->ignored_more = (long)(sr->nrules - i);
            break;
        }
        o += (size_t)k;
    }
}

/* Lists the repository's files, and its provenance. */
static int scan_tree(struct update *U)
{
    struct index_stats *S = U->S;
    /* opened before the scan: the files read are those beneath the directory scanned */
    U->rootfd = open(U->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (U->rootfd < 0) {
        snprintf(U->err, U->errlen, "cannot read the repository directory '%s': %s", U->root, strerror(errno));
        return -1;
    }
    struct scan_options so = {.max_file_size = U->max, .no_ignore = U->opt->no_ignore};
    if (scan_repo(U->root, &so, &U->dirs, &U->sr, U->err, U->errlen)) return -1;
    S->dirs_listed = U->dirs.listed;
    S->used_git = U->sr.used_git;
    scan_git_provenance(U->root, S->commit, &S->dirty);
    U->prov_moved = 1;
    if (!U->fresh) {
        char pc[41];
        int pd, had = index_provenance(U->db, pc, &pd);
        U->prov_moved = had != (S->commit[0] != 0) || strcmp(pc, S->commit) != 0 || pd != S->dirty;
    }
    record_ignored(S, &U->sr);
    S->dirs_cached = U->dirs.cached;
    U->dirs_changes = scan_dirs_changes(&U->dirs) + (size_t)U->dirs_reset;
    U->t_scan = now_ms();
    return 0;
}

/* Merges the sorted listing with the files table, read in path order a row
 * at a time: the files to read again become jobs, the rest count as
 * unchanged; the rows of files no longer listed go to U->gone. Nothing of
 * the table is held: on a tree of 100,000 files holding it was megabytes of
 * fresh memory on every check. */
static int merge_listing(struct update *U)
{
    struct index_stats *S = U->S;
    sqlite3_stmt *st = files_open(U->db);
    struct old_file o;
    int have = st ? files_next(st, &o) : -1;
    const struct scan_result *sr = &U->sr;
    size_t capjobs = 0, capgone = 0;   /* grown as needed: most checks find few files or none */
    for (size_t i = 0; have >= 0 && i < sr->nfiles; i++) {
        const struct scan_file *f = &sr->files[i];
        struct job j = {0};
        int c = 1;
        while (have > 0 && (c = strcmp(o.path, f->path)) < 0) {
            ARRAY_GROW(U->gone, U->ngone, capgone, 64);
            U->gone[U->ngone++] = o.id;
            have = files_next(st, &o);
        }
        if (have > 0 && c == 0) {
            /* as git's index does: an edit that restores the size and mtime
             * still moves the ctime, and a file saved by rename its inode */
            int same = o.size == f->size && o.mtime_ns == f->mtime_ns && o.ctime_ns == f->ctime_ns && o.ino == f->ino;
            j.stat_same = same;
            j.old_id = o.id;
            memcpy(j.old_hash, o.hash, sizeof o.hash);
            have = files_next(st, &o);
            if (same && !U->opt->verify) {
                S->unchanged++;
                continue;
            }
            S->verified += U->opt->verify;
        }
        if (have < 0) break;
        j.sf = f;
        ARRAY_GROW(U->jobs, U->njobs, capjobs, 256);
        U->jobs[U->njobs++] = j;
    }
    while (have > 0) {
        ARRAY_GROW(U->gone, U->ngone, capgone, 64);
        U->gone[U->ngone++] = o.id;
        have = files_next(st, &o);
    }
    sqlite3_finalize(st);
    if (have < 0) {
        /* a damaged page ends the read early: a partial table is not the index's files */
        *U->index_fault = 1;
        return update_fail(U, "cannot read the index", U->index_path);
    }
    return 0;
}

/* Nothing to read, delete or record again: the committed index and its
 * summary stand. Returns 1 when so (the update is done), else 0. */
static int keep_if_unchanged(struct update *U)
{
    struct index_stats *S = U->S;
    if (U->njobs || U->ngone || S->rebuilt || U->opts_changed || !skipped_same(U->db, &U->sr)) return 0;
    char *v = store_meta_get(U->db, "summary");
    int ok = summary_parse(v, S) == 0;
    free(v);
    if (!ok) return 0;
    /* Only directory listings to keep (a directory read again, say for a
     * non-source file added to it): a small transaction. Should it fail, the
     * listings are read again next time. */
    char e2[512];
    if (U->opt->busy_read) sqlite3_busy_timeout(U->db, 1000);   /* as begin_write: not an update's wait */
    if ((U->dirs_changes || U->prov_moved) &&
        (store_exec(U->db, "BEGIN IMMEDIATE", e2, sizeof e2) ||
         (U->dirs_changes && write_dirs(U->db, &U->dirs, U->dirs_reset, e2, sizeof e2)) ||
         (U->prov_moved && write_provenance(U->db, S)) || store_exec(U->db, "COMMIT", e2, sizeof e2))) {
        sqlite3_exec(U->db, "ROLLBACK", NULL, NULL, NULL);
        log_msg("index %s: cannot keep directory listings: %s", U->root, e2);
    }
    log_msg("index %s: nothing changed; open+scan %lld ms, compare %lld ms; dirs listed %ld, from cache %ld, "
            "%zu dirs rows written", U->root, (long long)(U->t_scan - U->t0), (long long)(now_ms() - U->t_scan),
            U->dirs.listed, U->dirs.cached, U->dirs_changes);
    return 1;
}

/* Opens the update's transaction, prepares the writer's statements, writes
 * the directory listings and deletes the rows of files no longer listed. */
static int begin_write(struct update *U)
{
    *U->index_fault = !U->fresh;   /* from here on, a failure may come from a damaged index */
    /* A reader that may keep the index as it is waits only long enough for
     * a short write (a few directory listings) to end, not for an update. */
    if (U->opt->busy_read) sqlite3_busy_timeout(U->db, 1000);
    int brc = store_exec(U->db, "BEGIN IMMEDIATE", U->err, U->errlen);
    if (U->opt->busy_read) sqlite3_busy_timeout(U->db, 5000);
    if (brc && (sqlite3_extended_errcode(U->db) & 0xff) == SQLITE_BUSY) {
        *U->index_fault = 0;
        return UPDATE_BUSY;
    }
    if (brc) {
        char e2[512];
        snprintf(e2, sizeof e2, "cannot update the index '%s': %s", U->index_path, U->err);
        snprintf(U->err, U->errlen, "%s", e2);
        return -1;
    }
    U->in_txn = 1;
    if (!U->fresh) sqlite3_exec(U->db, "PRAGMA cache_size=-16384", NULL, NULL, NULL);
    U->w.db = U->db;
    if (U->fresh) U->w.pending = &U->pending;
    if (U->fresh) U->w.derive = derive_new();
    U->w.pending_budget = pending_budget();
    for (int s = 0; s < S_COUNT; s++)
        if (sqlite3_prepare_v3(U->db, index_write_sql[s], -1, SQLITE_PREPARE_PERSISTENT, &U->w.st[s], NULL) != SQLITE_OK)
            return update_fail(U, "cannot prepare index statements in", U->index_path);
    if (U->dirs_changes && write_dirs(U->db, &U->dirs, U->dirs_reset, U->err, U->errlen)) return -1;
    for (long k = 0; k < U->ngone; k++) {
        if (delete_file_rows(&U->w, U->gone[k], 1, U->err, U->errlen)) return -1;
        U->S->deleted++;
    }
    return 0;
}

/* Writes one finished job: its rows, the new stat of a file found the same,
 * or the deletion of a file now skipped. */
static int write_result(struct update *U, const struct job *j, struct result *r)
{
    struct index_stats *S = U->S;
    struct writer *w = &U->w;
    if (r->kind == RES_SKIP) {
        if (w->derive) derive_skip(w->derive, derive_place(j->place));
        scan_add_skip(&U->sr, j->sf->path, r->reason, r->size ? r->size : -1);
        if (!j->old_id) return 0;
        S->deleted++;
        return delete_file_rows(w, j->old_id, 1, U->err, U->errlen);
    }
    if (r->kind == RES_SAME) {
        sqlite3_bind_int64(w->st[S_TOUCH_FILE], 1, r->size);
        sqlite3_bind_int64(w->st[S_TOUCH_FILE], 2, r->mtime_ns);
        sqlite3_bind_int64(w->st[S_TOUCH_FILE], 3, j->old_id);
        sqlite3_bind_int64(w->st[S_TOUCH_FILE], 4, r->ctime_ns);
        sqlite3_bind_int64(w->st[S_TOUCH_FILE], 5, r->ino);
        S->unchanged++;
        U->touched++;
        return step(w, S_TOUCH_FILE, U->err, U->errlen);
    }
    int wr = write_parsed(w, j, r, U->err, U->errlen);
    S->differed += j->stat_same;
    if (j->old_id) S->updated++;
    else S->added++;
    S->parsed++;
    test_kill_check(++U->written, U->kill_after);
    return wr;
}

/* Parses the jobs on the pool and writes their results here, in job (path)
 * order, whatever order the threads finish in, so that row ids, and every tie
 * broken by them, are the same from one build to the next. Results that
 * finish early wait in `held`; they stay counted in the in-flight budget,
 * which bounds how many can wait. */
/* Source bytes written between two trims of the heap while parsing: the
 * parser threads free each file's tree once it is extracted, and what they
 * freed stays in their arenas, counted in the peak RSS, until it is given
 * back. Measured on sympy's first answer (with the fit after resolving):
 * 188 MB without, 158-162 MB at a trim per 4 MB, 157 MB per 12 MB; each
 * trim costs page faults when the pages are used again (system time 1.3 s
 * without, 1.9-2.4 s with). */
#define INDEX_TRIM_BYTES (12u << 20)

static int parse_and_write(struct update *U)
{
    if (!U->njobs) return 0;
    size_t since_trim = 0;
    struct pool P = {0};
    pthread_t *threads = NULL;
    struct result **held = NULL;   /* finished out of order, by job */
    int rc = -1;
    if (pool_start(&P, &threads, U)) goto out;
    held = xcalloc(U->njobs, sizeof *held);
    for (size_t done = 0; done < U->njobs; done++) {
        if (cancelled(U->opt, U->err, U->errlen)) {
            pool_stop(&P);
            goto out;
        }
        int64_t tw = now_us();
        while (!held[done]) {
            struct result *q = pool_pop(&P);
            held[q->job] = q;
        }
        U->waited_us += now_us() - tw;
        struct result *r = held[done];
        held[done] = NULL;
        const struct job *j = &U->jobs[r->job];
        int wr = write_result(U, j, r);
        size_t waited_with = r->held;
        result_free(r);
        if ((since_trim += (size_t)j->sf->size) >= INDEX_TRIM_BYTES) {
            malloc_trim(0);
            since_trim = 0;
        }
        pthread_mutex_lock(&P.mu);
        P.held -= waited_with;
        pthread_cond_broadcast(&P.budget);
        if (wr) P.stop = 1;   /* the threads waiting for the budget wake above */
        pthread_mutex_unlock(&P.mu);
        if (wr) goto out;
        if (U->opt->progress) U->opt->progress(U->opt->progress_ctx, done + 1, U->njobs);
    }
    rc = 0;
out:
    pool_end(&P, threads, U->nthreads);
    U->held_max = P.held_max;
    if (held)
        for (size_t k = 0; k < U->njobs; k++) result_free(held[k]);
    free(held);
    /* the parser threads' arenas outlive them: their pages go back before
     * resolving fills the writer's */
    if (P.has_big_owner) malloc_trim(0);
    return rc;
}

/* Files read again only to be skipped again (binary, unreadable) change
 * nothing: the committed index and its summary are kept, with the directory
 * listings written and a new provenance. Returns 1 when so (the update is
 * done), 0 to go on, -1 on failure. */
static int keep_if_only_skips(struct update *U)
{
    struct index_stats *S = U->S;
    if (S->parsed || S->deleted || U->touched || S->rebuilt || U->opts_changed || !skipped_same(U->db, &U->sr))
        return 0;
    char *v = store_meta_get(U->db, "summary");
    int ok = summary_parse(v, S) == 0;
    free(v);
    if (!ok) return 0;
    if (U->prov_moved && write_provenance(U->db, S)) return update_fail(U, "cannot update the index", U->index_path);
    if (store_exec(U->db, U->dirs_changes || U->prov_moved ? "COMMIT" : "ROLLBACK", U->err, U->errlen)) return -1;
    U->in_txn = 0;
    return 1;
}

/* The skipped table, rewritten whole: it is small. */
static int write_skipped(struct update *U)
{
    if (store_exec(U->db, "DELETE FROM skipped", U->err, U->errlen)) return -1;
    for (size_t i = 0; i < U->sr.nskips; i++) {
        sqlite3_stmt *st = U->w.st[S_INS_SKIP];
        sqlite3_bind_text(st, 1, U->sr.skips[i].path, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, U->sr.skips[i].reason, -1, SQLITE_STATIC);
        if (U->sr.skips[i].size >= 0) sqlite3_bind_int64(st, 3, U->sr.skips[i].size);
        if (step(&U->w, S_INS_SKIP, U->err, U->errlen)) return -1;
    }
    return 0;
}

/* Remote embeddings cost a call per chunk text (money, or an hour of a local
 * server on a large tree), and the index is their only copy: a fresh build
 * replacing an index of ours takes over the cached vectors of the chunk texts
 * it still has. Best effort: what cannot be read of the old file (damaged,
 * another layout) is left behind with a log line, and the build goes on. The
 * old file is opened read-only and never written. */
static void carry_embeddings(struct update *U)
{
    sqlite3 *old = NULL;
    sqlite3_stmt *rd = NULL, *ins = NULL;
    long kept = 0;
    int rc = SQLITE_DONE;
    /* a reader of a file with a WAL makes its -shm: gone again after, unless it was there */
    char *shm = xasprintf("%s-shm", U->carry_from);
    struct stat st;
    int had_shm = lstat(shm, &st) == 0;
    if (sqlite3_open_v2(U->carry_from, &old, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        rc = sqlite3_errcode(old);
        goto out;
    }
    sqlite3_busy_timeout(old, 2000);
    /* 'local:' rows are an earlier layout's local chunk vectors, made again from the index */
    if (sqlite3_prepare_v2(old, "SELECT hash, model, dim, vec FROM embeddings WHERE model NOT GLOB 'local:*'", -1,
                           &rd, NULL) != SQLITE_OK) {
        rc = sqlite3_errcode(old);
        goto out;
    }
    char e2[256];
    if (store_exec(U->db, "CREATE TEMP TABLE carry_hashes(hash TEXT PRIMARY KEY) WITHOUT ROWID; "
                          "INSERT OR IGNORE INTO carry_hashes SELECT hash FROM chunk_spans", e2, sizeof e2) ||
        sqlite3_prepare_v2(U->db, "INSERT OR IGNORE INTO embeddings(hash, model, dim, vec) SELECT ?1, ?2, ?3, ?4 "
                                  "WHERE EXISTS (SELECT 1 FROM temp.carry_hashes WHERE hash = ?1)", -1, &ins,
                           NULL) != SQLITE_OK) {
        log_msg("index: cannot take over cached embeddings: %s", sqlite3_errmsg(U->db));
        goto out;
    }
    while ((rc = sqlite3_step(rd)) == SQLITE_ROW) {
        long long dim = sqlite3_column_int64(rd, 2);
        /* a vector is dim float32s: a row of any other shape is not taken */
        if (sqlite3_column_type(rd, 0) != SQLITE_TEXT || sqlite3_column_type(rd, 1) != SQLITE_TEXT ||
            sqlite3_column_type(rd, 3) != SQLITE_BLOB || dim <= 0 || dim > 65536 ||
            sqlite3_column_bytes(rd, 3) != dim * 4)
            continue;
        sqlite3_bind_value(ins, 1, sqlite3_column_value(rd, 0));
        sqlite3_bind_value(ins, 2, sqlite3_column_value(rd, 1));
        sqlite3_bind_int64(ins, 3, dim);
        sqlite3_bind_value(ins, 4, sqlite3_column_value(rd, 3));
        int stepped = sqlite3_step(ins);
        sqlite3_reset(ins);
        if (stepped != SQLITE_DONE) {
            log_msg("index: cannot store a cached embedding: %s", sqlite3_errmsg(U->db));
            break;
        }
        kept += sqlite3_changes(U->db);
    }
out:
    if (rc != SQLITE_DONE && old)
        log_msg("index: the cached embeddings of '%s' could not all be read (%s): %ld taken over", U->carry_from,
                sqlite3_errmsg(old), kept);
    else if (kept)
        log_msg("index: %ld cached embeddings taken over from '%s'", kept, U->carry_from);
    sqlite3_finalize(ins);
    sqlite3_finalize(rd);
    sqlite3_close(old);
    if (!had_shm) unlink(shm);
    free(shm);
    sqlite3_exec(U->db, "DROP TABLE IF EXISTS temp.carry_hashes", NULL, NULL, NULL);
    U->S->embeddings_kept = kept;
}

/* After the files: the skipped table, resolution across the repository, the
 * secondary indexes of a fresh build, meta and the summary, then COMMIT. */
static int finish_write(struct update *U)
{
    struct index_stats *S = U->S;
    if (write_skipped(U) || cancelled(U->opt, U->err, U->errlen)) return -1;
    derive_start(U->w.derive, U->db, early_fit_budget());
    U->t_write = now_ms();
    int resolved = 0;
    if (S->parsed || S->deleted || S->rebuilt) {
        if (U->opt->phase) U->opt->phase(U->opt->progress_ctx, "resolve");
        if (index_resolve(U->db, U->root, U->w.pending, S, U->err, U->errlen)) return -1;
        /* inserted: freed now, not with the update, so that the fit's
         * arrays do not come on top of them */
        U->w.pending = NULL;
        pending_free(&U->pending);
        resolved = 1;
    }
    if (U->w.pending && flush_pending(&U->w, U->err, U->errlen)) return -1;
    if (index_edge_run_end(&U->w.run, U->w.st[S_EDGE_RUN])) {
        snprintf(U->err, U->errlen, "cannot write the index: %s", sqlite3_errmsg(U->db));
        return -1;
    }
    U->t_resolve = now_ms();
    /* resolving's tables are freed: their pages go back before the fit's
     * quantised vectors are filled */
    if (U->w.derive) {
        malloc_trim(0);
        derive_fit(U->w.derive);
    }
    if (U->fresh && U->carry_from) carry_embeddings(U);
    if (U->opt->phase) U->opt->phase(U->opt->progress_ctx, "write");
    /* The secondary indexes of a fresh build come last: resolving sets the
     * destination of most edges, and an UPDATE per edge would otherwise move
     * an entry of edges_dst each time. Resolving reads rows by id only. */
    if (U->index_ddl.len && store_exec(U->db, U->index_ddl.data, U->err, U->errlen)) return -1;
    U->t_ddl = now_ms();
    set_meta(U->db, U->root);
    write_provenance(U->db, S);
    char maxs[32];
    snprintf(maxs, sizeof maxs, "%lld", U->max);
    store_meta_set(U->db, "max_file_size", maxs);
    store_meta_set(U->db, "no_ignore", S->no_ignore ? "1" : "0");
    summary_compute(U->db, S, resolved);
    char *sum = summary_format(S);
    store_meta_set(U->db, "summary", sum);
    free(sum);
    derive_store(U->w.derive, U->db);
    U->t_summary = now_ms();
    if (store_exec(U->db, "COMMIT", U->err, U->errlen)) return -1;
    U->in_txn = 0;
    return 0;
}

/* A fresh build, committed into the side file, takes the index path. */
static int install_fresh(struct update *U)
{
    /* readers expect WAL; the mode is recorded in the file */
    if (store_exec(U->db, "PRAGMA journal_mode=WAL", U->err, U->errlen)) return -1;
    /* with statements still prepared, sqlite3_close would leave the connection open */
    for (int s = 0; s < S_COUNT; s++) {
        sqlite3_finalize(U->w.st[s]);
        U->w.st[s] = NULL;
    }
    sqlite3_close(U->db);
    U->db = NULL;
    char *wal = xasprintf("%s-wal", U->index_path), *shm = xasprintf("%s-shm", U->index_path);
    unlink(wal);
    unlink(shm);
    free(wal);
    free(shm);
    /* what is at the path now must still be ours (or nothing): a rename
     * would replace a device, a FIFO or another program's file */
    char e2[1024];
    if (store_classify(U->index_path, NULL, e2, sizeof e2) == STORE_FOREIGN) {
        snprintf(U->err, U->errlen, "%s", e2);
        return INDEX_EUSAGE;
    }
    /* The build ran with synchronous=OFF: its pages may still be only in
     * the page cache. They reach the disk before the rename does, so that a
     * power loss or system crash after the rename finds the new index whole,
     * never a half-written file where the previous index was. */
    writeback_stop(U->wb);
    U->wb = NULL;
    if (fsync(U->tmp_fd) != 0) {
        snprintf(U->err, U->errlen, "cannot write the new index '%s' to disk: %s (is the disk full or failing?)",
                 U->tmp_path, strerror(errno));
        return -1;
    }
    /* forgotten before the rename: once renamed, the path may be another
     * builder's side file, never to be removed by this process's signal */
    sigclean_remove(U->tmp_slot);
    U->tmp_slot = -1;
    if (rename(U->tmp_path, U->index_path) != 0) {
        snprintf(U->err, U->errlen, "cannot move the new index '%s' into place at '%s': %s", U->tmp_path,
                 U->index_path, strerror(errno));
        return -1;
    }
    sync_parent_dir(U->index_path);
    free(U->tmp_path);
    U->tmp_path = NULL;
    return 0;
}

static void log_update(const struct update *U)
{
    struct rusage ru;
    long long writer_cpu_ms = getrusage(RUSAGE_THREAD, &ru) == 0
        ? (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000
        : -1;
    log_msg("index %s: %d parser threads, writer waited %lld ms, writer thread CPU %lld ms (scan, write, resolve), "
            "results waiting for it held at most %zu KB",
            U->root, U->nthreads, (long long)(U->waited_us / 1000), writer_cpu_ms, U->held_max >> 10);
    log_msg("index %s: scan %lld ms (dirs listed %ld, from cache %ld), parse+write %lld ms, resolve %lld ms, "
            "create indexes %lld ms, summary %lld ms, commit %lld ms", U->root, (long long)(U->t_scan - U->t0),
            U->dirs.listed, U->dirs.cached, (long long)(U->t_write - U->t_scan), (long long)(U->t_resolve - U->t_write),
            (long long)(U->t_ddl - U->t_resolve), (long long)(U->t_summary - U->t_ddl),
            (long long)(now_ms() - U->t_summary));
}

/* The steps of one update; returns 0, -1, INDEX_EUSAGE or UPDATE_BUSY. */
static int update_run(struct update *U, const char *repo_root)
{
    int r;
    const struct index_options *opt = U->opt;
    if (opt->phase) opt->phase(opt->progress_ctx, "scan");
    if (open_root(U, repo_root) || open_index(U) || scan_tree(U) || merge_listing(U)) return -1;
    if (keep_if_unchanged(U)) return 0;
    if ((r = begin_write(U)) != 0) return r == UPDATE_BUSY ? UPDATE_BUSY : -1;
    /* phase: parse (progress: done of njobs, per file) */
    if (opt->phase) opt->phase(opt->progress_ctx, "parse");
    if (parse_and_write(U)) return -1;
    if (U->sr.nskips) qsort(U->sr.skips, U->sr.nskips, sizeof *U->sr.skips, cmp_skip);   /* qsort(NULL, 0) is undefined */
    if ((r = keep_if_only_skips(U)) != 0) return r < 0 ? -1 : 0;
    /* phase: resolve, indexes, commit */
    if (finish_write(U)) return -1;
    if (U->fresh && (r = install_fresh(U)) != 0) return r;
    log_update(U);
    U->S->changed = 1;
    return 0;
}

/* Frees what the update holds; an uncommitted transaction is rolled back and
 * a side file not renamed into place is removed. */
static void update_free(struct update *U)
{
    for (int s = 0; s < S_COUNT; s++) sqlite3_finalize(U->w.st[s]);
    free(U->w.symids);
    buf_free(&U->w.scratch);
    derive_free(U->w.derive);
    pending_free(&U->pending);
    if (U->in_txn) sqlite3_exec(U->db, "ROLLBACK", NULL, NULL, NULL);
    if (U->db) sqlite3_close(U->db);
    writeback_stop(U->wb);   /* before the side file's descriptor closes */
    buf_free(&U->index_ddl);
    sigclean_remove(U->tmp_slot);
    if (U->tmp_path) {
        /* removed while still locked: a process waiting for the lock sees
         * the path gone and opens it anew (lock_side_file) */
        if (U->tmp_fd >= 0 && unlink(U->tmp_path) != 0) log_msg("cannot remove '%s': %s", U->tmp_path, strerror(errno));
        remove_db_side_files(U->tmp_path);
        free(U->tmp_path);
    }
    if (U->tmp_fd >= 0) close(U->tmp_fd);
    if (U->rootfd >= 0) close(U->rootfd);
    free(U->gone);
    free(U->jobs);
    scan_result_free(&U->sr);
    scan_dirs_free(&U->dirs);
    free(U->root);
}

/* One update (see index_update). force_fresh: the index at index_path is ours
 * but of another schema; it is replaced by a fresh build, never altered.
 * carry_from: the index of ours a fresh build replaces, read for its cached
 * embeddings (carry_embeddings), or NULL.
 * *index_fault is set when the failure happened while reading or writing the
 * existing index (the caller then checks its integrity). */
/* sqlite's own words ("database or disk is full") name no file: a failure
 * writing the index says which index, and a full disk what to do. */
static void name_the_index(char *err, size_t errlen, const char *index_path)
{
    if (!err || !errlen || !*err || strstr(err, index_path)) return;
    static const char *const bare[] = {"cannot write the index: ", "cannot read the index: "};
    const char *rest = NULL, *verb = "write";
    for (size_t i = 0; i < ARRAY_LEN(bare) && !rest; i++)
        if (str_starts(err, bare[i])) {
            rest = err + strlen(bare[i]);
            verb = i ? "read" : "write";
        }
    if (!rest && (strstr(err, "database or disk is full") || strstr(err, "disk I/O error"))) rest = err;
    if (!rest) return;
    int full = strstr(rest, "database or disk is full") != NULL;
    char *m = xasprintf("cannot %s the index '%s': %s%s", verb, index_path, rest,
                        full ? "; free space on the file system that holds it, or give --index a path on another" : "");
    snprintf(err, errlen, "%s", m);
    free(m);
}

static int update_once(const char *repo_root, const char *index_path, const struct index_options *opt,
                       struct index_stats *S, int force_fresh, const char *carry_from, int *index_fault, char *err,
                       size_t errlen)
{
    struct update U = {.index_path = index_path, .opt = opt, .S = S, .err = err, .errlen = errlen,
                       .index_fault = index_fault, .force_fresh = force_fresh, .carry_from = carry_from,
                       .t0 = now_ms(), .tmp_fd = -1, .tmp_slot = -1,
                       .index_ddl = BUF_INIT, .rootfd = -1, .opts_changed = 1, .dirs_reset = 1,
                       .kill_after = test_kill_after()};
    *index_fault = 0;
    int rc = update_run(&U, repo_root);
    if (rc) name_the_index(err, errlen, index_path);
    update_free(&U);
    S->ms = now_ms() - U.t0;
    if (opt->progress && rc == 0) opt->progress(opt->progress_ctx, U.njobs, U.njobs);
    return rc;
}

/* Moves the damaged index at path (and its WAL) aside, to
 * path.corrupt-YYYYmmdd-HHMMSS, recorded in S. Returns 0, or -1 with err set. */
static int set_aside(const char *path, struct index_stats *S, char *err, size_t errlen)
{
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    struct stat st;
    snprintf(S->aside, sizeof S->aside, "%s.corrupt-%s", path, when);
    for (int k = 2; lstat(S->aside, &st) == 0 && k < 1000; k++)   /* never over an earlier one */
        snprintf(S->aside, sizeof S->aside, "%s.corrupt-%s-%d", path, when, k);
    if (rename(path, S->aside) != 0) {
        snprintf(err, errlen, "the index '%s' is damaged (%s) and cannot be moved aside: %s; remove it and run again",
                 path, S->damage, strerror(errno));
        return -1;
    }
    char *wal = xasprintf("%s-wal", path), *wal2 = xasprintf("%s-wal", S->aside), *shm = xasprintf("%s-shm", path);
    if (rename(wal, wal2) != 0 && errno != ENOENT) unlink(wal);   /* never replayed into the new index */
    unlink(shm);
    free(wal);
    free(wal2);
    free(shm);
    S->repaired = 1;
    return 0;
}

int index_update(const char *repo_root, const char *index_path, const struct index_options *opt,
                 struct index_stats *stats_out, char *err, size_t errlen)
{
    struct index_stats stats_local, *S = stats_out ? stats_out : &stats_local;
    memset(S, 0, sizeof *S);
    struct index_options defaults = {0};
    if (!opt) {
        defaults.max_file_size = 1 << 20;
        opt = &defaults;
    }
    int version = -1;
    enum store_kind kind = store_classify(index_path, &version, err, errlen);
    if (kind == STORE_FOREIGN) return INDEX_EUSAGE;
    int damaged = kind == STORE_DAMAGED, fault = 0, rc;
    if (damaged && store_quick_check(index_path, S->damage, sizeof S->damage) == 1)
        snprintf(S->damage, sizeof S->damage, "its header is ours but sqlite cannot read it");
    if (kind == STORE_OURS && opt->check) {
        S->checked = 1;
        damaged = !store_quick_check(index_path, S->damage, sizeof S->damage);
    }
    if (kind == STORE_OURS && version != STORE_SCHEMA_VERSION) S->old_schema = version > 0 ? version : 0;
    if (!damaged) {
        int other = kind == STORE_OURS && version != STORE_SCHEMA_VERSION;
        struct index_stats before = *S;
        int64_t t_wait = now_ms();
        for (int tries = 0;; tries++) {
            rc = update_once(repo_root, index_path, opt, S, other, other ? index_path : NULL, &fault, err, errlen);
            if (rc != UPDATE_BUSY) break;
            /* another connection holds the write lock: a reader keeps the
             * index as it is (WAL: the last committed state), an update
             * waits for it and starts again from the scan, since the
             * other update changes what this one compared against */
            if (opt->busy_read) {
                *S = before;
                S->busy = 1;
                return 0;
            }
            if (cancelled(opt, err, errlen)) return INDEX_EFAIL;
            if (opt->notice) {
                char *m = tries == 0
                    ? xasprintf("another process (another drqa-tui?) is updating the index '%s'; waiting for it to "
                                "finish", index_path)
                    : xasprintf("still waiting for the update of the index '%s' by another process (%lld s)",
                                index_path, (long long)((now_ms() - t_wait) / 1000));
                opt->notice(m);
                free(m);
            }
            *S = before;
        }
        /* a failure reading or writing the index: is the file damaged? */
        if (rc != -1 || !fault || store_quick_check(index_path, S->damage, sizeof S->damage)) return rc;
    }
    struct index_stats keep = *S;
    if (set_aside(index_path, S, err, errlen)) return INDEX_EFAIL;
    keep.repaired = 1;
    memcpy(keep.aside, S->aside, sizeof keep.aside);
    memset(S, 0, sizeof *S);
    rc = update_once(repo_root, index_path, opt, S, 1, keep.aside, &fault, err, errlen);
    S->checked = keep.checked;
    S->repaired = 1;
    memcpy(S->damage, keep.damage, sizeof S->damage);
    memcpy(S->aside, keep.aside, sizeof S->aside);
    return rc;
}

/* ---- index_ensure -------------------------------------------------------------- */

/* What a rebuild kept of the index it replaced, for its message ("" for nothing). */
static const char *kept_note(const struct index_stats *s)
{
    static _Thread_local char note[96];
    if (s->embeddings_kept <= 0) return "";
    snprintf(note, sizeof note, "; its %ld cached embeddings of chunk texts still present were kept",
             s->embeddings_kept);
    return note;
}

static void tty_progress(void *ctx, size_t done, size_t total)
{
    int64_t *last = ctx;
    int64_t now = now_ms();
    if (done < total && now - *last < 100) return;
    *last = now;
    int width = 30, fill = total ? (int)(done * (size_t)width / total) : width;
    fprintf(stderr, "\rindexing [%.*s%*s] %zu/%zu", fill, "##############################", width - fill, "",
            done, total);
    if (done >= total) fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

static void stderr_notice(const char *msg)
{
    char *safe = text_term_safe(msg);   /* the index path may hold anything */
    fprintf(stderr, "drqa-tui: %s\n", safe);
    free(safe);
}

int index_ensure_ex(const struct index_request *rq, const struct index_options *opt_in, struct index_stats *stats,
                    sqlite3 **db, char **repo_abs, char **index_path_out, char *err, size_t errlen)
{
    if (db) *db = NULL;
    if (repo_abs) *repo_abs = NULL;
    if (index_path_out) *index_path_out = NULL;
    if (!rq->repo || !*rq->repo) {
        snprintf(err, errlen, "no repository given; pass the repository directory as the first argument");
        return INDEX_EUSAGE;
    }
    struct stat st;
    if (stat(rq->repo, &st) != 0) {
        snprintf(err, errlen, "the repository '%s' does not exist (%s); give an existing directory", rq->repo,
                 strerror(errno));
        return INDEX_EUSAGE;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the repository '%s' is not a directory; give the repository's top directory", rq->repo);
        return INDEX_EUSAGE;
    }
    char *root = realpath(rq->repo, NULL);
    if (!root) {
        snprintf(err, errlen, "cannot resolve the repository path '%s': %s", rq->repo, strerror(errno));
        return -1;
    }
    char *ipath = rq->index_path ? xstrdup(rq->index_path) : store_default_path(root);
    struct index_options opt = opt_in ? *opt_in : rq->opt;
    if (!opt.notice && !(opt_in && opt_in->progress) && !rq->quiet) opt.notice = stderr_notice;
    struct index_stats local;
    if (!stats) stats = &local;
    int64_t last = 0;
    if (!opt.progress && !rq->no_progress && !rq->quiet && isatty(2)) {
        opt.progress = tty_progress;
        opt.progress_ctx = &last;
    }
    int rc = index_update(root, ipath, &opt, stats, err, errlen);
    if (rc == 0 && stats->old_schema) {
        char *msg = xasprintf("the index '%s' was written in another format (schema %d); it was rebuilt in the "
                              "current one (schema %d)%s", ipath, stats->old_schema, STORE_SCHEMA_VERSION,
                              kept_note(stats));
        log_msg("%s", msg);
        if (!(opt_in && opt_in->progress) && !rq->quiet) fprintf(stderr, "drqa-tui: %s\n", msg);
        free(msg);
    }
    if (stats->repaired) {
        char *msg = xasprintf("the index '%s' was damaged (%s); it is kept as '%s' and the index was %s%s", ipath,
                              stats->damage, stats->aside, rc == 0 ? "rebuilt" : "not rebuilt",
                              rc == 0 ? kept_note(stats) : "");
        log_msg("%s", msg);
        /* a caller with its own progress display (the front end) owns the terminal */
        if (!(opt_in && opt_in->progress)) fprintf(stderr, "drqa-tui: %s\n", msg);
        free(msg);
    }
    if (rc == 0 && stats->busy) {
        char *msg = xasprintf("another process (another drqa-tui?) is updating the index '%s'; this run reads the "
                              "index as it was before that update, so changes to the repository since are not seen "
                              "(run again when it is done, or drqa-tui --index-only to wait for it)", ipath);
        log_msg("%s", msg);
        if (!(opt_in && opt_in->progress)) stderr_notice(msg);
        free(msg);
        sqlx_writer_wait(0);
    }
    if (rc == 0 && db) {
        rc = store_open(ipath, 1, db, NULL, err, errlen);
    }
    if (rc == 0 && repo_abs) *repo_abs = root;
    else free(root);
    if (rc == 0 && index_path_out) *index_path_out = ipath;
    else free(ipath);
    return rc;
}

int index_ensure(const struct index_request *rq, sqlite3 **db, char **repo_abs, char *err, size_t errlen)
{
    return index_ensure_ex(rq, NULL, NULL, db, repo_abs, NULL, err, errlen);
}
