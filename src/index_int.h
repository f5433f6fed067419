/*
 * index_int: what the files of the index update share (index.c, index_pool.c,
 * index_write.c, index_meta.c, index_edges.c, index_resolve.c) and nothing
 * else includes: a changed file's job and result, the parser pool, the
 * writer, one update's state, and the edges a fresh build keeps in memory.
 * The public face is index.h.
 */
#ifndef DRQA_INDEX_INT_H
#define DRQA_INDEX_INT_H

#include "index.h"
#include "derive.h"
#include "index_chunk.h"
#include "index_scan.h"
#include "parse.h"
#include "store_rows.h"
#include "util.h"
#include "ztext.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>

/* Internal to the index family: the edges of a fresh build, kept in memory
 * by the writer (index.c) in the order their rows would have been inserted,
 * so that index_resolve inserts them once with their destinations instead of
 * updating each row it resolves. Strings are offsets into strs, each
 * distinct string kept once (sympy's 700,000 edges name 11,000 targets). */
struct index_edge {
    uint32_t file, src;                    /* row ids, src 0 = NULL */
    uint32_t target, target_name;          /* offsets into strs; INDEX_EDGE_NONE = NULL */
    int line;
    int n;                                 /* call sites (edges.n) */
    unsigned char kind;                    /* INDEX_EDGE_* */
};
#define INDEX_EDGE_NONE UINT32_MAX
struct index_edges {
    struct index_edge *v;
    size_t n, cap;
    char *strs;
    size_t len, strcap;
    uint32_t *set;               /* open addressing: offsets of the strings kept, INDEX_EDGE_NONE = empty */
    size_t nset, setcap;
};

/* Internal to the index family: the run of edge ids of the file being
 * written, noted row by row and written to edge_runs (INDEX_EDGE_RUN_SQL,
 * which widens a run already there) when the next file's rows start and
 * at the end. */
struct index_edge_run {
    long long file, lo, hi;      /* file 0: none open */
};
/* An edge row, bound as kind, src_file, src_id, line, target
 * (index_edge_bind_target), target_name, dst_id, dst_file. */
#define INDEX_EDGE_INSERT_SQL                                                                                  \
    "INSERT INTO edges(kind, src_file, src_id, line, target_s, target_name, dst_id, dst_file, n) "                \
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
#define INDEX_EDGE_RUN_SQL                                                                                     \
    "INSERT INTO edge_runs(file_id, lo, hi) VALUES(?1, ?2, ?3) ON CONFLICT(file_id) DO UPDATE SET "              \
    "lo = min(lo, excluded.lo), hi = max(hi, excluded.hi)"
/* Notes edge row id of file, writing the open run with upd when file is
 * another one; index_edge_run_end writes the open run. 0, or -1 when upd
 * failed (sqlite3_errmsg says why). */
int index_edge_run_note(struct index_edge_run *r, sqlite3_stmt *upd, long long file, long long id);
int index_edge_run_end(struct index_edge_run *r, sqlite3_stmt *upd);

/* Binds what edges.target_s stores for a target (store_rows.h's
 * store_prefix_form: mostly NULL, a call being its own last component)
 * as parameter i of st; scratch is the caller's. */
static inline void index_edge_bind_target(sqlite3_stmt *st, int i, const char *target, const char *target_name,
                                          struct buf *scratch)
{
    size_t n;
    const char *v = store_prefix_form(target, target_name, &n, scratch);
    if (v) sqlite3_bind_text64(st, i, v, n, SQLITE_TRANSIENT, SQLITE_UTF8);
    else sqlite3_bind_null(st, i);
}

/* The string kept at off in P, or NULL for INDEX_EDGE_NONE. */
static inline const char *index_edge_str(const struct index_edges *P, uint32_t off)
{
    return off == INDEX_EDGE_NONE ? NULL : P->strs + off;
}

/* Internal to the index family (index_resolve.c): recomputes imports.resolved_file_id
 * and dst_id/dst_file of the calls and inherits edges for the whole
 * repository, inside the caller's transaction. root_abs names the
 * repository (for imports written relative to the package it sits in).
 * pending (may be NULL): edges not yet in the edges table (a fresh build);
 * they are resolved here and inserted, in their order, as the rows they
 * would have been.
 * counts (may be NULL) receives files, symbols by kind, imports, calls and
 * edges by kind, as index_stats reports them. */
int index_resolve(sqlite3 *db, const char *root_abs, const struct index_edges *pending, struct index_stats *counts,
                  char *err, size_t errlen);

/* Memory the kept edges may take; past it they are inserted and resolved in place. */
#define INDEX_PENDING_BUDGET ((size_t)48 << 20)
/* Bytes the parsed files waiting for the writer may hold (result_held): it
 * writes in the jobs' order, so while a big file is parsed the files after it
 * wait. They hold their rows, calls, chunk terms and line postings, about
 * four times their source (ten in call-heavy test files); counted at a fixed
 * share of the source instead, those waiting behind sympy's rule files held
 * 26 MB at its peak. pool_order also lets big files go ahead of their place
 * in path order by at most as many bytes of source: they wait in derive.c
 * until their turn. */
#define INDEX_HELD_BUDGET ((size_t)8 << 20)
/* Memory a fresh build's vector fit may take to run whole beside resolving
 * (derive_start); a larger one makes its float rows beside resolving and its
 * quantised vectors after it. Django's fit takes about 32 MB (its first
 * answer 150 ms sooner, its peak RSS 63 -> 70 MB); sympy's, about 79 MB,
 * would take its peak from 157 to 195 MB (its float rows alone: 135 -> 142
 * MB, the first answer 0.17 s sooner). */
#define INDEX_EARLY_FIT_BUDGET ((size_t)48 << 20)

/* ---- work: one changed file ------------------------------------------------ */

enum res_kind { RES_SKIP, RES_SAME, RES_PARSED };

struct job {
    const struct scan_file *sf;
    long long old_id;            /* files.id, 0 when new */
    char old_hash[17];
    int stat_same;               /* --verify: hashed although its stat had not moved */
    size_t place;                /* its place in path order among the jobs (pool_order) */
};

struct result {
    size_t job;
    enum res_kind kind;
    char *reason;                /* RES_SKIP */
    long long size, mtime_ns, ctime_ns, ino;
    char hash[17];
    char *text;                  /* decoded; freed once compressed into ztext */
    size_t textlen;
    unsigned char *ztext;        /* the text as stored (ztext.h) */
    size_t zlen;
    int nlines, decode_errors;
    char *module;
    struct parse_result pr;
    struct chunk_list chunks;
    /* per symbol of pr: its docstring packed (store_text.h's store_doc_pack),
     * NULL where it is stored as text (none, or packing does not pay) */
    unsigned char **docz;
    size_t *docz_len;
    struct linepost_file lines;  /* a fresh build's (derive.h) */
    size_t held;                 /* what it holds while it waits (index_pool.c) */
};

struct pool {
    int rootfd;                  /* the repository, files are opened beneath it */
    const char *test_swap;       /* DRQA_TEST_SWAP (see the test hooks) */
    long long max;
    struct job *jobs;
    size_t njobs;
    size_t next;                 /* the first job not taken yet (under mu) */
    unsigned char *taken;        /* per job: taken by a thread (under mu) */
    size_t ntaken;
    int nparsing;                /* jobs being parsed (under mu) */
    /* the finished results, in the order they finished: q[qhead..qtail) are
     * not taken yet (q has a slot for every job) */
    struct result **q;
    size_t qhead, qtail;
    int stop;                    /* the writer gave up: workers finish quickly */
    int derive;                  /* tokenise each file's lines (derive.h) */
    size_t inflight;             /* INDEX_INFLIGHT_BUDGET's bytes */
    size_t held;                 /* bytes of the results not yet written (result_held) */
    size_t held_budget, held_max; /* INDEX_HELD_BUDGET (or its test hook); the most held */
    /* the thread that parses the big files (INDEX_BIG_SIZE), once one has */
    int has_big_owner;
    pthread_t big_owner;
    size_t owner_big;            /* the size of the big file it parses now, 0: none */
    int guest_busy;              /* another thread parses a big file beside it */
    pthread_mutex_t mu;
    pthread_cond_t not_empty, budget;
};
enum {
    S_DEL_FTS, S_DEL_CHUNKS, S_DEL_SYMS, S_DEL_IMPORTS, S_DEL_EDGES, S_DEL_EDGE_RUN, S_DEL_FILE,
    S_INS_FILE, S_UPD_FILE, S_TOUCH_FILE, S_INS_SYM, S_INS_IMPORT, S_INS_EDGE, S_EDGE_RUN, S_INS_CHUNK, S_INS_FTS,
    S_INS_SKIP, S_COUNT
};

/* The writer's statements, by S_* (index_write.c). */
extern const char *const index_write_sql[S_COUNT];

struct writer {
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT];
    long long *symids;           /* scratch: parse index -> symbols.id */
    size_t nsymids;
    /* A fresh build keeps its edges here for index_resolve, which inserts
     * them resolved (an UPDATE per resolved edge cost more than the insert);
     * NULL: edges are inserted as they come, resolved later in place. */
    struct index_edges *pending;
    size_t pending_budget;       /* INDEX_PENDING_BUDGET */
    struct index_edge_run run;   /* the edge ids of the file being written */
    struct buf scratch;          /* a stored form being bound (store_rows.h) */
    struct derive *derive;       /* a fresh build's derived data (derive.h), else NULL */
};

/* A row of the files table, as an update compares it with the listing. */
struct old_file {
    long long id, size, mtime_ns, ctime_ns, ino;
    const char *path;             /* sqlite's, until the next row is read */
    char hash[17];
};

struct update {
    /* given */
    const char *index_path;
    const struct index_options *opt;
    struct index_stats *S;
    char *err;
    size_t errlen;
    int *index_fault;             /* see update_once */
    int force_fresh;
    /* an index of ours this fresh build replaces (another schema, or damaged
     * and set aside), whose cached embeddings it takes over; NULL: none */
    const char *carry_from;
    /* state */
    int64_t t0, t_scan, t_write, t_resolve, t_ddl, t_summary;
    char *root;                   /* the repository's real path */
    sqlite3 *db;
    int fresh;                    /* built into the side file, renamed into place when complete */
    char *tmp_path;               /* side file of a fresh index, removed unless renamed into place */
    int tmp_fd;                   /* holds the side file's lock */
    struct writeback *wb;         /* the side file's pages written back while it is built */
    int tmp_slot;                 /* tmp_path's sigclean slot: removed on SIGTERM, SIGINT, SIGHUP */
    struct buf index_ddl;         /* CREATE INDEX statements dropped for a fresh build */
    int rootfd;                   /* the repository, opened before the scan */
    long long max;                /* the file size limit this update uses */
    int opts_changed;             /* the recorded indexing options are to be written */
    struct scan_result sr;
    struct scan_dirs dirs;
    int dirs_reset;               /* the dirs table is rewritten whole */
    size_t dirs_changes;
    int prov_moved;               /* the recorded provenance is not this one */
    long long *gone;              /* files.id of the files no longer listed, by path */
    long ngone;
    struct job *jobs;             /* listed files to read again, by path */
    size_t njobs;
    struct writer w;
    struct index_edges pending;   /* a fresh build's edges, until index_resolve inserts them */
    int in_txn;
    long written, touched;        /* parsed files written; files read again and found the same */
    long kill_after;              /* test hook (DRQA_TEST_KILL_AFTER), -1 when unset */
    int nthreads;
    int64_t waited_us;            /* writer idle: tells whether parsing or writing bounds the update */
    size_t held_max;              /* the most the parsed results waiting for the writer held */
};

/* index_pool.c */
void result_free(struct result *r);
struct result *pool_pop(struct pool *P);
int pool_start(struct pool *P, pthread_t **threads, struct update *U);
void pool_stop(struct pool *P);
void pool_end(struct pool *P, pthread_t *threads, int nthreads);

/* index_hooks.c: the test hooks (no-ops outside tests/drqa-tui-hooks) */
void test_swap(int rootfd, const char *spec, const char *rel);
const char *test_swap_spec(void);
long test_kill_after(void);
void test_kill_check(long written, long kill_after);
size_t pending_budget(void);
size_t early_fit_budget(void);
size_t held_budget(void);
size_t derive_place(size_t place);
/* the address space each parser thread's tree-sitter arena reserves; 0: no arena */
size_t ts_arena_reserve(void);

/* index_write.c */
int step(struct writer *w, int s, char *err, size_t errlen);
int delete_file_rows(struct writer *w, long long id, int and_file, char *err, size_t errlen);
void pending_free(struct index_edges *P);
int flush_pending(struct writer *w, char *err, size_t errlen);
void pool_order(struct job *jobs, size_t n, int threads, size_t ahead_budget);
int write_parsed(struct writer *w, const struct job *j, struct result *r, char *err, size_t errlen);

/* index_meta.c */
/* The files table in path order: files_next fills *f with the next row and
 * returns 1, or returns 0 after the last, -1 when the table cannot be read
 * (files_open returns NULL then); the caller finalizes the statement. */
sqlite3_stmt *files_open(sqlite3 *db);
int files_next(sqlite3_stmt *st, struct old_file *f);
int cmp_skip(const void *a, const void *b);
int skipped_same(sqlite3 *db, const struct scan_result *sr);
int load_dirs(sqlite3 *db, struct scan_dirs *d);
int write_dirs(sqlite3 *db, const struct scan_dirs *d, int reset, char *err, size_t errlen);
int has_rows(sqlite3 *db, const char *table);
void summary_compute(sqlite3 *db, struct index_stats *s, int counted);
char *summary_format(const struct index_stats *s);
int summary_parse(const char *v, struct index_stats *s);
int drop_indexes(sqlite3 *db, struct buf *ddl, char *err, size_t errlen);
void remove_db_side_files(const char *path);
int write_provenance(sqlite3 *db, const struct index_stats *S);
void set_meta(sqlite3 *db, const char *root);
int lock_side_file(const char *tmp_path, const struct index_options *opt);
long long effective_max(sqlite3 *db, const struct index_options *opt, struct index_stats *S, int *changed);

#endif
