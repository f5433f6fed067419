/*
 * index_meta: what an index records of itself and of the files it had: the
 * files table as an update compares with it, the kept directory listings,
 * the summary, the provenance and meta rows, the side file's lock and the
 * file size limit in force.
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

/* ---- the existing index ---------------------------------------------------------- */

sqlite3_stmt *files_open(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, path, size, mtime_ns, hash, ctime_ns, ino FROM files ORDER BY path", -1, &st,
                           NULL) != SQLITE_OK)
        return NULL;
    return st;
}

int files_next(sqlite3_stmt *st, struct old_file *f)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? 0 : -1;
    f->id = sqlite3_column_int64(st, 0);
    f->path = (const char *)sqlite3_column_text(st, 1);
    if (!f->path) f->path = "";
    f->size = sqlite3_column_int64(st, 2);
    f->mtime_ns = sqlite3_column_int64(st, 3);
    const char *hash = (const char *)sqlite3_column_text(st, 4);
    size_t hlen = hash ? (size_t)sqlite3_column_bytes(st, 4) : 0;
    if (hlen >= sizeof f->hash) hlen = sizeof f->hash - 1;
    if (hlen) memcpy(f->hash, hash, hlen);
    f->hash[hlen] = 0;
    f->ctime_ns = sqlite3_column_int64(st, 5);
    f->ino = sqlite3_column_int64(st, 6);
    return 1;
}

int cmp_skip(const void *a, const void *b)
{
    return strcmp(((const struct scan_skip *)a)->path, ((const struct scan_skip *)b)->path);
}

/* 1 when the skipped table already holds exactly these rows (sorted by path). */
int skipped_same(sqlite3 *db, const struct scan_result *sr)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT path, reason FROM skipped ORDER BY path", -1, &st, NULL)) return 0;
    size_t i = 0;
    int same = 1;
    while (same && sqlite3_step(st) == SQLITE_ROW) {
        if (i >= sr->nskips || strcmp((const char *)sqlite3_column_text(st, 0), sr->skips[i].path) ||
            strcmp((const char *)sqlite3_column_text(st, 1), sr->skips[i].reason))
            same = 0;
        i++;
    }
    sqlite3_finalize(st);
    return same && i == sr->nskips;
}

/* ---- kept directory listings (index_scan.h) ------------------------------------------ */

/* Loads the dirs table into d. Returns 1 when the table is to be replaced
 * whole: it was written under another listing stamp (or never). */
int load_dirs(sqlite3 *db, struct scan_dirs *d)
{
    char *stamp = store_meta_get(db, "dirs_stamp"), *want = scan_dirs_stamp();
    int same = stamp && strcmp(stamp, want) == 0;
    free(stamp);
    free(want);
    if (!same) return 1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT path, dev, ino, mtime_ns, ctime_ns, entries FROM dirs ORDER BY path", -1,
                           &st, NULL) != SQLITE_OK)
        return 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const void *path = sqlite3_column_blob(st, 0);
        size_t plen = (size_t)sqlite3_column_bytes(st, 0);
        const void *ent = sqlite3_column_blob(st, 5);
        size_t elen = (size_t)sqlite3_column_bytes(st, 5);
        if (plen && memchr(path, 0, plen)) continue;   /* not a path: never matched, deleted on write */
        scan_dirs_add_old(d, path ? path : "", plen, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                          sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), ent, elen);
    }
    sqlite3_finalize(st);
    return 0;
}

static int write_dirs_step(sqlite3 *db, sqlite3_stmt *st, char *err, size_t errlen)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

/* Brings the dirs table in line with the walk, inside the caller's transaction:
 * listings read afresh are written, those of directories not reached are
 * deleted (reset: every row is). */
int write_dirs(sqlite3 *db, const struct scan_dirs *d, int reset, char *err, size_t errlen)
{
    sqlite3_stmt *del = NULL, *ins = NULL;
    int rc = -1;
    if (reset) {
        if (store_exec(db, "DELETE FROM dirs", err, errlen)) return -1;
        char *stamp = scan_dirs_stamp();
        int r = store_meta_set(db, "dirs_stamp", stamp);
        free(stamp);
        if (r) {
            snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(db));
            return -1;
        }
    }
    if (sqlite3_prepare_v2(db, "DELETE FROM dirs WHERE path = ?1", -1, &del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO dirs(path, dev, ino, mtime_ns, ctime_ns, entries) "
                               "VALUES(?1, ?2, ?3, ?4, ?5, ?6)", -1, &ins, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(db));
        goto out;
    }
    for (size_t i = 0; !reset && i < d->nold; i++) {
        if (d->old[i].state != SCAN_DIR_UNSEEN) continue;
        sqlite3_bind_blob(del, 1, d->old[i].path, (int)strlen(d->old[i].path), SQLITE_STATIC);
        if (write_dirs_step(db, del, err, errlen)) goto out;
    }
    for (size_t i = 0; i < d->nfresh; i++) {
        const struct scan_dir *f = &d->fresh[i];
        sqlite3_bind_blob(ins, 1, f->path, (int)strlen(f->path), SQLITE_STATIC);
        sqlite3_bind_int64(ins, 2, f->dev);
        sqlite3_bind_int64(ins, 3, f->ino);
        sqlite3_bind_int64(ins, 4, f->mtime_ns);
        sqlite3_bind_int64(ins, 5, f->ctime_ns);
        sqlite3_bind_blob(ins, 6, f->entries, (int)f->len, SQLITE_STATIC);
        if (write_dirs_step(db, ins, err, errlen)) goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    return rc;
}

static long long q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return 0;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The count sql (one row, one column) gives for ?1 = name and ?2 = k; -1
 * when it cannot be read. */
static long count_of(sqlite3 *db, const char *sql, const char *name, int k)
{
    sqlite3_stmt *st;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, k);
    long n = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}

long index_count_refs(sqlite3 *db, const char *name, int kind)
{
    return count_of(db,
                    "SELECT (SELECT total(coalesce(n, 1)) FROM edges WHERE kind = ?2 AND dst_id IN "
                    "(SELECT id FROM symbols WHERE name = ?1 COLLATE NOCASE AND name = ?1)) + "
                    "(SELECT total(coalesce(n, 1)) FROM edges WHERE kind = ?2 AND dst_id IS NULL AND target_name = ?1)",
                    name, kind);
}

long index_count_defs(sqlite3 *db, const char *name, int classes)
{
    return count_of(db,
                    "SELECT count(*) FROM symbols WHERE name = ?1 COLLATE NOCASE AND name = ?1 AND "
                    "(CASE WHEN ?2 THEN kind = 'class' ELSE kind IN ('function', 'method') END)",
                    name, classes);
}

/* 1 when the table holds a row, 0 when empty, -1 when it cannot be read. */
int has_rows(sqlite3 *db, const char *table)
{
    sqlite3_stmt *st;
    char *sql = xasprintf("SELECT 1 FROM \"%s\" LIMIT 1", table);
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK) return -1;
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Whole-index counts, kept in meta 'summary' so that an update that finds
 * nothing to do reports them without counting every row again. */
void summary_compute(sqlite3 *db, struct index_stats *s, int counted)
{
    s->skipped = q_int(db, "SELECT count(*) FROM skipped");
    s->parse_errors = q_int(db, "SELECT total(parse_errors) FROM files");
    s->parse_error_files = q_int(db, "SELECT count(*) FROM files WHERE parse_errors > 0");
    s->decode_errors = q_int(db, "SELECT total(decode_errors) FROM files");
    s->decode_error_files = q_int(db, "SELECT count(*) FROM files WHERE decode_errors > 0");
    if (counted) return;   /* index_resolve counted the rest */
    s->files = q_int(db, "SELECT count(*) FROM files");
    s->classes = q_int(db, "SELECT count(*) FROM symbols WHERE kind = 'class'");
    s->functions = q_int(db, "SELECT count(*) FROM symbols WHERE kind = 'function'");
    s->methods = q_int(db, "SELECT count(*) FROM symbols WHERE kind = 'method'");
    s->variables = q_int(db, "SELECT count(*) FROM symbols WHERE kind = 'variable'");
    s->imports = q_int(db, "SELECT count(*) FROM imports");
    s->calls = q_int(db, "SELECT total(coalesce(n, 1)) FROM edges WHERE kind = 0");   /* INDEX_EDGE_CALLS: sites */
    sqlite3_stmt *st;
    memset(s->edges_resolved, 0, sizeof s->edges_resolved);
    memset(s->edges_unresolved, 0, sizeof s->edges_unresolved);
    /* call sites, as edges.n counts them */
    if (sqlite3_prepare_v2(db, "SELECT kind, total(iif(dst_id IS NULL, 0, coalesce(n, 1))), total(coalesce(n, 1)) "
                               "FROM edges GROUP BY kind", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int k = sqlite3_column_int(st, 0);
            if (k == INDEX_EDGE_CALLS || k == INDEX_EDGE_INHERITS) {
                s->edges_resolved[k] = sqlite3_column_int64(st, 1);
                s->edges_unresolved[k] = sqlite3_column_int64(st, 2) - s->edges_resolved[k];
            }
        }
        sqlite3_finalize(st);
    }
    /* an import is resolved when it names a repository file */
    s->edges_resolved[INDEX_EDGE_IMPORTS] = q_int(db, "SELECT count(resolved_file_id) FROM imports");
    s->edges_unresolved[INDEX_EDGE_IMPORTS] = s->imports - s->edges_resolved[INDEX_EDGE_IMPORTS];
    /* containment is symbols.parent_id, not an edge row */
    s->edges_resolved[INDEX_EDGE_CONTAINS] = q_int(db, "SELECT count(*) FROM symbols WHERE parent_id IS NOT NULL");
}

char *summary_format(const struct index_stats *s)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", s->files, s->skipped, s->classes,
               s->functions, s->methods, s->variables, s->imports, s->calls, s->parse_errors,
               s->parse_error_files, s->decode_errors, s->decode_error_files);
    for (int i = 0; i < INDEX_EDGE_KINDS; i++) buf_printf(&b, " %ld %ld", s->edges_resolved[i], s->edges_unresolved[i]);
    return buf_take(&b);
}

int summary_parse(const char *v, struct index_stats *s)
{
    if (!v) return -1;
    int used = 0;
    if (sscanf(v, "%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld%n", &s->files, &s->skipped, &s->classes,
               &s->functions, &s->methods, &s->variables, &s->imports, &s->calls, &s->parse_errors,
               &s->parse_error_files, &s->decode_errors, &s->decode_error_files, &used) != 12)
        return -1;
    v += used;
    for (int i = 0; i < INDEX_EDGE_KINDS; i++) {
        if (sscanf(v, " %ld %ld%n", &s->edges_resolved[i], &s->edges_unresolved[i], &used) != 2) return -1;
        v += used;
    }
    return 0;
}

/* Drops the schema's secondary indexes, appending their CREATE statements to ddl. */
int drop_indexes(sqlite3 *db, struct buf *ddl, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    struct buf drops = BUF_INIT;
    if (sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
                               "AND tbl_name IN ('files', 'symbols', 'imports', 'edges', 'chunk_spans')",
                           -1, &st, NULL) != SQLITE_OK)
        return store_exec(db, "SELECT no_such_table_for_indexes", err, errlen);
    while (sqlite3_step(st) == SQLITE_ROW) {
        buf_printf(&drops, "DROP INDEX \"%s\";", (const char *)sqlite3_column_text(st, 0));
        buf_printf(ddl, "%s;\n", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    int rc = drops.len ? store_exec(db, drops.data, err, errlen) : 0;
    buf_free(&drops);
    return rc;
}

void remove_db_side_files(const char *path)
{
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
        char *p = xasprintf("%s%s", path, suffixes[i]);
        unlink(p);
        free(p);
    }
}

/* HEAD's commit and the dirty flag (index_provenance reads them). */
int write_provenance(sqlite3 *db, const struct index_stats *S)
{
    return store_meta_set(db, "commit", S->commit) ||
           store_meta_set(db, "dirty", S->commit[0] ? (S->dirty ? "1" : "0") : "");
}

int index_provenance(sqlite3 *db, char commit[41], int *dirty)
{
    char *c = store_meta_get(db, "commit"), *d = store_meta_get(db, "dirty");
    snprintf(commit, 41, "%s", c ? c : "");
    *dirty = d && strcmp(d, "1") == 0;
    free(c);
    free(d);
    return commit[0] != 0;
}

void set_meta(sqlite3 *db, const char *root)
{
    char when[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    store_meta_set(db, "repo_root", root);
    store_meta_set(db, "indexed_at", when);
    store_meta_set(db, "drqa_version", PACKAGE_VERSION);
    struct buf g = BUF_INIT;
    for (size_t i = 0; parse_languages[i]; i++) {
        if (g.len) buf_adds(&g, ", ");
        buf_printf(&g, "%s (language ABI %u)", parse_languages[i]->name,
                   (unsigned)ts_language_version(parse_languages[i]->language()));
    }
    buf_printf(&g, "; libtree-sitter ABI %d", TREE_SITTER_LANGUAGE_VERSION);
    store_meta_set(db, "grammars", buf_str(&g));
    buf_free(&g);
}

/* Takes the lock on the side file tmp_path, the one now at that path: a
 * builder that gave up removes its side file, and a process that waited on
 * the removed file opens the path again. A lock held by another builder is
 * waited for, said once through opt->notice. Returns the fd, or -1 (errno set). */
int lock_side_file(const char *tmp_path, const struct index_options *opt)
{
    int said = 0;
    for (;;) {
        int fd = open(tmp_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (fd < 0) return -1;
        struct stat a, b;
        if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode)) {
            close(fd);
            errno = EINVAL;   /* not a regular file: never written to */
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (!said && opt->notice) {
                char *m = xasprintf("another drqa-tui is building the index '%s'; waiting for it to finish, then "
                                    "this run uses it", tmp_path);
                opt->notice(m);
                free(m);
            }
            said = 1;
            while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {}
        }
        if (stat(tmp_path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return fd;
        close(fd);
    }
}

/* The limit on file size this update uses: the one asked for, else the one the
 * index recorded when it was last given, else the default asked for. */
long long effective_max(sqlite3 *db, const struct index_options *opt, struct index_stats *S, int *changed)
{
    char *rec = db ? store_meta_get(db, "max_file_size") : NULL;
    long long v = opt->max_file_size;
    if (rec && !opt->max_file_size_given) {
        v = atoll(rec);
        S->max_file_size_recorded = 1;
    }
    *changed = !rec || atoll(rec) != v;
    free(rec);
    S->max_file_size = v;
    /* how the listing was made is recorded too: a change re-lists and rewrites */
    char *ni = db ? store_meta_get(db, "no_ignore") : NULL;
    S->no_ignore = opt->no_ignore != 0;
    if (!ni || atoi(ni) != S->no_ignore) *changed = 1;
    free(ni);
    return v;
}
