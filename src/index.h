/*
 * index: keeps a repository's sqlite index (store.h) in step with its files.
 * An update stats every file, re-reads only those whose size or mtime moved,
 * re-parses only those whose content hash changed, drops the rows of deleted
 * files, and then re-resolves imports, inheritance and calls across the whole
 * repository. Parsing runs on a pool of threads (each with its own TSParser)
 * feeding the calling thread, the only one that writes. The whole update is
 * one transaction, so an interrupted update leaves the previous index intact.
 *
 * Every mode that reads the index calls index_ensure first.
 */
#ifndef DRQA_INDEX_H
#define DRQA_INDEX_H

#include "store_rows.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct index_options {
    int threads;                 /* parser threads; 0 = one per core */
    long long max_file_size;     /* bytes; larger files are skipped; 0 = no limit */
    /* max_file_size was asked for: it replaces the value the index recorded.
     * Unset, the recorded value (the last one asked for) is kept. */
    int max_file_size_given;
    int check;                   /* check the index first (store_quick_check); rebuild it when damaged */
    int verify;                  /* hash every file, not only those whose stat moved */
    int no_ignore;               /* list everything but version-control metadata (scan_options) */
    /* Called on the calling thread after each changed file is written
     * (done of total) and once more at the end; may be NULL. */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *progress_ctx;
    /* Called on the calling thread (with progress_ctx) as the update enters
     * a phase: "scan", "parse" (then progress), "resolve", "write" (the
     * secondary indexes, summary and commit); may be NULL. */
    void (*phase)(void *ctx, const char *name);
    /* May be NULL. Checked between files and before resolving: once it is
     * nonzero the update stops, rolls back and fails with a message; the
     * previous index is left as it was. */
    const atomic_int *cancel;
    /* Another connection holding the index's write lock (another process
     * updating it): nonzero keeps the index as it is and reads it as it was
     * committed (stats->busy set); zero waits for that update to end and
     * updates after it. */
    int busy_read;
    /* Called on the calling thread with a line for the user (waiting for
     * another process's update or build); may be NULL. */
    void (*notice)(const char *msg);
};

/* The kinds the summary counts; edges.kind stores the first two (0 and 1),
 * imports and contains are read from imports and symbols.parent_id. */
enum { INDEX_EDGE_CALLS, INDEX_EDGE_INHERITS, INDEX_EDGE_IMPORTS, INDEX_EDGE_CONTAINS, INDEX_EDGE_KINDS };
extern const char *const index_edge_kind_names[INDEX_EDGE_KINDS];   /* "calls", ... */

/* How many calls of name (kind INDEX_EDGE_CALLS) or class statements
 * inheriting from it (INDEX_EDGE_INHERITS) db records: resolved to a symbol
 * of that name, or unresolved and ending in it, as FindReferences lists
 * them. -1 when it cannot be read. */
long index_count_refs(sqlite3 *db, const char *name, int kind);
/* How many definitions of name db holds: classes (classes 1) or functions
 * and methods; -1 when it cannot be read. */
long index_count_defs(sqlite3 *db, const char *name, int classes);

struct index_stats {
    /* this update */
    long unchanged;              /* same size and mtime, or same content hash */
    long updated;                /* content changed, re-parsed */
    long added;                  /* new files, parsed */
    long deleted;                /* gone (or now skipped): their rows removed */
    long parsed;                 /* updated + added */
    int rebuilt;                 /* the index was (re)created from scratch */
    int old_schema;              /* > 0: the index replaced was of this older schema version */
    int changed;                 /* 1 when anything was written */
    long long ms;                /* wall time of the update */
    long long max_file_size;     /* the limit this update used (0 = none) */
    int max_file_size_recorded;  /* ... taken from the index, not from the options */
    int no_ignore;               /* this update listed with --no-ignore (recorded in the index, meta 'no_ignore') */
    int checked;                 /* quick_check ran on the existing index */
    int repaired;                /* the index was damaged: kept aside and rebuilt */
    char damage[256];            /* what sqlite said about it */
    char aside[4096];            /* where the damaged file now is */
    /* a rebuild that replaced an index of ours (another schema, or damaged)
     * took over this many cached remote embeddings of chunk texts it still has */
    long embeddings_kept;
    long verified, differed;     /* --verify: files hashed, and those whose content had changed */
    long dirs_listed, dirs_cached;   /* directories read, and taken from their kept listing (walk only) */
    int used_git;                /* git listed the files (else a walk) */
    char commit[41];             /* HEAD's commit when in a git work tree, else "" */
    int dirty;                   /* ... and the files differed from it */
    /* the rules that left paths out of the listing: lines 'count<TAB>rule', by rule */
    char ignored[8192];
    long ignored_more;           /* rules that did not fit in ignored */
    /* the whole index after the update */
    long files, skipped;
    long classes, functions, methods, variables, imports, calls;
    long parse_errors, parse_error_files;     /* ERROR/MISSING nodes, and files having any */
    long decode_errors, decode_error_files;   /* bytes replaced with U+FFFD */
    long edges_resolved[INDEX_EDGE_KINDS], edges_unresolved[INDEX_EDGE_KINDS];
    /* another process held the write lock and opt->busy_read was set: the
     * index was kept as it was committed, not brought up to date */
    int busy;
};

enum { INDEX_EFAIL = -1, INDEX_EUSAGE = -2 };

/* Brings the index at index_path up to date with the repository at repo_root
 * (creating the index, its directory (0700) and file (0600) when missing; an
 * index of another schema version is rebuilt). Only a file that is one of
 * the project's indexes (store_classify) is ever replaced: anything else at
 * index_path is refused with INDEX_EUSAGE. An index sqlite cannot read (found
 * when opening or reading it fails, or by opt->check) is renamed to
 * index_path.corrupt-YYYYmmdd-HHMMSS and rebuilt; stats says so. A failure
 * leaves no side file behind. opt and stats may be NULL. Returns 0, or
 * INDEX_EFAIL / INDEX_EUSAGE with a message in err naming the path and what to do. */
int index_update(const char *repo_root, const char *index_path, const struct index_options *opt,
                 struct index_stats *stats, char *err, size_t errlen);

/* What a mode that reads the index asks of index_ensure: the repository as
 * given, where its index is, how to update it and what to say on stderr.
 * Strings are borrowed. */
struct index_request {
    const char *repo;            /* the repository directory */
    const char *index_path;      /* NULL: store_default_path */
    /* the update's options (threads, size limit, check, verify, no_ignore,
     * busy_read); their callbacks are normally left NULL */
    struct index_options opt;
    int quiet;                   /* nothing on stderr but a repaired index */
    int no_progress;             /* no progress line, even on a terminal */
};

/* What every mode does before reading: checks rq->repo (missing, or not a
 * directory: an error naming the path), picks the index path (rq->index_path,
 * else store_default_path), brings the index up to date (progress on stderr
 * only when rq->no_progress and rq->quiet are unset and stderr is a terminal)
 * and opens it for reading. A repaired index is reported on stderr. On
 * success *db is the open connection (caller closes it with sqlite3_close)
 * and *repo_abs the repository's absolute path (caller frees); either pointer
 * may be NULL when not wanted. Returns 0, or INDEX_EUSAGE (no or a wrong
 * repository, an index path that is not an index) or INDEX_EFAIL with err
 * set. */
int index_ensure(const struct index_request *rq, sqlite3 **db, char **repo_abs, char *err, size_t errlen);

/* Like index_ensure, with statistics and options of the caller's own in
 * place of rq->opt (opt may be NULL: rq->opt); a caller whose opt has a
 * progress callback owns the terminal, and only a repaired index is said on
 * stderr. The body of --index-only. stats may be NULL; *index_path_out (may
 * be NULL) receives the index path used (caller frees). */
int index_ensure_ex(const struct index_request *rq, const struct index_options *opt, struct index_stats *stats,
                    sqlite3 **db, char **repo_abs, char **index_path_out, char *err, size_t errlen);

/* The provenance the index recorded at its last update: HEAD's commit
 * (40 hex digits into commit, "" outside git) and *dirty (the tree differed
 * from it). Returns 1 when a commit is recorded, else 0. */
int index_provenance(sqlite3 *db, char commit[41], int *dirty);

#endif
