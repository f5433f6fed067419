/*
 * index: the update of a repository's index (see index.h). The calling thread
 * scans, compares the listing with the files table, and hands the changed
 * files to parser threads through a shared counter; each thread reads,
 * decodes, parses, chunks and compresses a file and puts the result in a
 * small bounded queue, which the calling thread drains into sqlite with
 * prepared statements. Keeping one writer avoids sqlite lock contention, and
 * keeping tokenisation and compression on the parser threads keeps that
 * writer fast.
 */
#include "index.h"
#include "derive.h"
#include "index_chunk.h"
#include "opts.h"
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

const char *const index_edge_kind_names[INDEX_EDGE_KINDS] = {"calls", "inherits", "imports", "contains"};

/* ---- work: one changed file ------------------------------------------------ */

enum res_kind { RES_SKIP, RES_SAME, RES_PARSED };

struct job {
    const struct scan_file *sf;
    long long old_id;            /* files.id, 0 when new */
    char old_hash[17];
    int stat_same;               /* --verify: hashed although its stat had not moved */
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
};

static void result_free(struct result *r)
{
    if (!r) return;
    free(r->reason);
    free(r->text);
    free(r->ztext);
    free(r->module);
    for (size_t i = 0; r->docz && i < r->pr.nsyms; i++) free(r->docz[i]);
    free(r->docz);
    free(r->docz_len);
    linepost_file_free(&r->lines);
    parse_result_free(&r->pr);
    chunk_list_free(&r->chunks);
    free(r);
}

/* Files at least this large are big: a big file's syntax tree swells the
 * malloc arena of the thread that parses it, and the arena keeps those pages
 * once the tree is freed. The first thread to take a big file takes every
 * other one too, in order, and keeps its arena swollen for the next; the other
 * threads pass over the big files and parse the small ones meanwhile. So only
 * one arena keeps a big tree's pages, and nothing is trimmed until the parsing
 * ends, except after a big file parsed beside the owner's when no small file
 * was left (pick_job). Trimming after each big file instead (malloc_trim,
 * which hands every free page of every arena back to the kernel, to be faulted
 * in again by the next parses) cost sympy's cold index about 90,000 page
 * faults and 0.8 s of system time; letting every thread's arena keep its big
 * trees took its peak RSS to 174-189 MB. */
#define INDEX_BIG_SIZE (256 * 1024)
/* Source bytes of the small files being parsed, and of the results waiting
 * to be written at their held share, at one time (see pick_job). */
#define INDEX_INFLIGHT_BUDGET (768u * 1024)
/* A parsed file waiting for the writer holds its compressed text, rows and
 * chunks, a fraction of what its syntax tree held: it stays in the budget at
 * this share of its size. */
static size_t held_share(size_t size) { return size / 8; }

/* 1, with the message, once the caller asked the update to stop. */
static int cancelled(const struct index_options *opt, char *err, size_t errlen)
{
    if (!opt->cancel || !atomic_load(opt->cancel)) return 0;
    snprintf(err, errlen, "the index update was cancelled; the previous index is kept as it was");
    return 1;
}

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
    /* bounded queue of finished results */
    struct result **q;
    size_t qcap, qhead, qlen;
    int stop;                    /* the writer gave up: workers finish quickly */
    int derive;                  /* tokenise each file's lines (derive.h) */
    size_t inflight;             /* INDEX_INFLIGHT_BUDGET's bytes */
    /* the thread that parses the big files (INDEX_BIG_SIZE), once one has */
    int has_big_owner;
    pthread_t big_owner;
    size_t owner_big;            /* the size of the big file it parses now, 0: none */
    int guest_busy;              /* another thread parses a big file beside it */
    pthread_mutex_t mu;
    pthread_cond_t not_full, not_empty, budget;
};

static int count_lines(const char *s, size_t n)
{
    int l = 0;
    for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++) l++;
    if (n && s[n - 1] != '\n') l++;
    return l;
}

/* update_once: another connection holds the index's write lock (positive,
 * unlike INDEX_EFAIL and INDEX_EUSAGE). */
#define UPDATE_BUSY 1

/* Memory the kept edges may take; past it they are inserted and resolved in place. */
#define INDEX_PENDING_BUDGET ((size_t)48 << 20)

/* ---- test hooks ------------------------------------------------------------------
 * Compiled only into the test build of the program (tests/drqa-tui-hooks,
 * built with -DDRQA_TEST_HOOKS, see mk/index.am); drqa-tui itself reads no
 * such variable.
 *   DRQA_TEST_SWAP="symlink:REL:TARGET" (or "hardlink:...") replaces the
 *     listed file REL with a link to TARGET just before it is opened, the
 *     window an attacker racing the indexer would use.
 *   DRQA_TEST_KILL_AFTER=N kills the process (SIGKILL) once N parsed files
 *     are written, in the middle of the update's transaction.
 *   DRQA_TEST_EDGE_BUDGET=BYTES replaces the memory a fresh build's kept
 *     edges may take (INDEX_PENDING_BUDGET), so that a small tree takes the
 *     path of a large one.
 *   DRQA_TEST_HOLD=FILE creates FILE once the first parsed file is written
 *     and waits (at most 120 s) until FILE is removed: an update that holds
 *     the write lock, or a fresh build whose side file exists, for as long
 *     as a test needs to act on it. */
#ifdef DRQA_TEST_HOOKS
static void test_swap(int rootfd, const char *spec, const char *rel)
{
    if (!spec) return;
    int hard = str_starts(spec, "hardlink:");
    if (!hard && !str_starts(spec, "symlink:")) return;
    const char *p = strchr(spec, ':') + 1, *colon = strchr(p, ':');
    if (!colon || strlen(rel) != (size_t)(colon - p) || strncmp(p, rel, (size_t)(colon - p)) != 0) return;
    if (unlinkat(rootfd, rel, 0) != 0 ||
        (hard ? linkat(AT_FDCWD, colon + 1, rootfd, rel, 0) : symlinkat(colon + 1, rootfd, rel)) != 0)
        log_msg("DRQA_TEST_SWAP %s: %s", rel, strerror(errno));
}

static const char *test_swap_spec(void) { return getenv("DRQA_TEST_SWAP"); }

static long test_kill_after(void)
{
    const char *v = getenv("DRQA_TEST_KILL_AFTER");
    return v && *v ? atol(v) : -1;
}

static void test_kill_check(long written, long kill_after)
{
    if (written == kill_after) raise(SIGKILL);
    const char *hold = getenv("DRQA_TEST_HOLD");
    if (written != 1 || !hold || !*hold) return;
    int fd = open(hold, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    for (int i = 0; i < 12000 && access(hold, F_OK) == 0; i++) usleep(10000);
}

static size_t pending_budget(void)
{
    const char *v = getenv("DRQA_TEST_EDGE_BUDGET");
    return v && *v ? (size_t)atol(v) : INDEX_PENDING_BUDGET;
}
#else
static void test_swap(int rootfd, const char *spec, const char *rel) { (void)rootfd; (void)spec; (void)rel; }
static const char *test_swap_spec(void) { return NULL; }
static long test_kill_after(void) { return -1; }
static void test_kill_check(long written, long kill_after) { (void)written; (void)kill_after; }
static size_t pending_budget(void) { return INDEX_PENDING_BUDGET; }
#endif

/* Opens the listed file sf beneath the repository's fd. A path the scan did
 * not reach through a symlink is walked one component at a time with
 * O_NOFOLLOW, so that a component turned into a link since the scan is not
 * followed out of the repository. Either way the file opened must be the one
 * the scan checked (device and inode): a file swapped since is not read.
 * Returns the fd, or -1 with *reason set (malloc'd). */
static int open_scanned(int rootfd, const struct scan_file *sf, struct stat *st, char **reason)
{
    int fd = -1;
    if (sf->via_link) {
        fd = openat(rootfd, sf->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    } else {
        int dir = rootfd;
        for (const char *p = sf->path;;) {
            const char *slash = strchr(p, '/');
            if (!slash) {
                fd = openat(dir, p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
                break;
            }
            char *comp = xstrndup(p, (size_t)(slash - p));
            int next = openat(dir, comp, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
            int e = errno;
            free(comp);
            if (dir != rootfd) close(dir);
            dir = next;
            errno = e;
            if (dir < 0) break;
            p = slash + 1;
        }
        int e = errno;
        if (dir >= 0 && dir != rootfd) close(dir);
        errno = e;
    }
    if (fd < 0) {
        *reason = errno == ELOOP ? xstrdup("changed into a symbolic link after the scan; not read")
                                 : xasprintf("unreadable (%s)", strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        *reason = xstrdup("not a regular file");
        return -1;
    }
    if ((long long)st->st_dev != sf->dev || (long long)st->st_ino != sf->ino) {
        close(fd);
        *reason = xstrdup("replaced by another file after the scan; not read");
        return -1;
    }
    return fd;
}

/* Reads the opened file whole (closing fd), up to the size limit max (0: none).
 * Returns the bytes (malloc'd, *n of them), or NULL with r a RES_SKIP and its reason. */
static char *read_opened(int fd, long long max, struct result *r, size_t *n_out)
{
    size_t cap = (size_t)r->size + 1, n = 0;
    char *raw = xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {   /* the file grew since its stat */
            cap = xgrow_cap(cap, n + 1, 4096);
            raw = xrealloc(raw, cap);
        }
        ssize_t got = read(fd, raw + n, cap - n - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            r->kind = RES_SKIP;
            r->reason = xasprintf("unreadable (%s)", strerror(errno));
            free(raw);
            close(fd);
            return NULL;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (max > 0 && (long long)n > max) break;
    }
    close(fd);
    r->size = (long long)n;
    if (max > 0 && (long long)n > max) {
        r->kind = RES_SKIP;
        r->reason = xasprintf("too large (%lld bytes > %lld)", (long long)n, max);
        free(raw);
        return NULL;
    }
    if (scan_is_binary(raw, n)) {
        r->kind = RES_SKIP;
        r->reason = xstrdup("binary (NUL byte in the first 8 KiB)");
        free(raw);
        return NULL;
    }
    *n_out = n;
    return raw;
}

/* Packs each docstring (store_doc_pack) where that makes it shorter, on the
 * parser thread: the writer only stores it. */
static void pack_docstrings(struct ztext_packer *zp, struct result *r)
{
    for (size_t i = 0; i < r->pr.nsyms; i++) {
        const char *d = r->pr.syms[i].docstring;
        size_t n = d ? strlen(d) : 0, zl;
        if (n < 24) continue;   /* never shorter packed: the CRC and the length alone take 8 bytes */
        unsigned char *z = store_doc_pack(zp, d, n, &zl);
        if (!z) continue;
        if (!r->docz) {
            r->docz = xcalloc(r->pr.nsyms, sizeof *r->docz);
            r->docz_len = xcalloc(r->pr.nsyms, sizeof *r->docz_len);
        }
        r->docz[i] = z;
        r->docz_len[i] = zl;
    }
}

static void process(struct pool *P, TSParser *parser, struct ztext_packer *zp, const struct lang **cur_lang, struct job *j,
                    struct result *r)
{
    struct stat st;
    test_swap(P->rootfd, P->test_swap, j->sf->path);
    int fd = open_scanned(P->rootfd, j->sf, &st, &r->reason);
    if (fd < 0) {
        r->kind = RES_SKIP;
        return;
    }
    r->size = (long long)st.st_size;
    r->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    r->ctime_ns = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    r->ino = (long long)st.st_ino;
    if (P->max > 0 && r->size > P->max) {
        close(fd);
        r->kind = RES_SKIP;
        r->reason = xasprintf("too large (%lld bytes > %lld)", r->size, P->max);
        return;
    }
    size_t n = 0;
    char *raw = read_opened(fd, P->max, r, &n);
    if (!raw) return;
    hash64_hex(hash64(raw, n), r->hash);
    if (j->old_id && strcmp(r->hash, j->old_hash) == 0) {
        r->kind = RES_SAME;
        free(raw);
        return;
    }
    r->kind = RES_PARSED;
    r->text = scan_decode_utf8(raw, n, &r->textlen, &r->decode_errors);
    free(raw);
    r->nlines = count_lines(r->text, r->textlen);
    const struct lang *lang = j->sf->lang;
    if (parse_is_text(lang)) {
        /* no grammar: text chunks, unless the file is minified or generated */
        char *why = parse_text_generated(r->text, r->textlen);
        if (why) {
            r->kind = RES_SKIP;
            r->reason = why;
            free(r->text);
            r->text = NULL;
            return;
        }
        chunk_text(r->text, r->textlen, lang->name, j->sf->path, &r->chunks);
    } else {
        r->module = lang->module_name ? lang->module_name(j->sf->path) : NULL;
        if (*cur_lang != lang) {
            ts_parser_set_language(parser, lang->language());
            *cur_lang = lang;
        }
        if (lang->extract(parser, r->text, r->textlen, &r->pr) != 0) {
            parse_result_free(&r->pr);
            r->pr.parse_errors = 1;   /* no tree at all: the text is kept, searchable as module code */
        }
        chunk_file(r->text, r->textlen, &r->pr, j->sf->path, r->module, &r->chunks);
    }
    /* compressed here, on this parser thread, so that the one writer only
     * stores it; the chunks hold their own copies of what they need, and a
     * made-up chunk text (a class outline) is packed against the file's
     * lines it is made of (ztext_ref_pack) */
    for (size_t i = 0; i < r->chunks.n; i++) {
        struct chunk *c = &r->chunks.v[i];
        if (!c->span)
            c->packed = ztext_ref_pack(zp, r->text + c->off, c->len, c->text, strlen(c->text), &c->packed_len);
    }
    pack_docstrings(zp, r);
    if (P->derive) derive_lines(r->text, r->textlen, &r->lines);
    r->ztext = ztext_pack_with(zp, r->text, r->textlen, &r->zlen);
    free(r->text);
    r->text = NULL;
}

static int is_big(const struct pool *P, size_t i) { return (size_t)P->jobs[i].sf->size >= INDEX_BIG_SIZE; }

#define NO_JOB ((size_t)-1)

/* Under P->mu: the job this thread takes now, or NO_JOB to wait. Jobs go in
 * order, except that a big file (INDEX_BIG_SIZE) is left to the thread that
 * parses them, and the others go past it. A small file waits until it fits in
 * the in-flight budget, so that the trees and the results waiting for the
 * writer stay bounded; the first job not taken goes as soon as nothing is
 * being parsed, since the results waiting behind it cannot be written before
 * it is. A big file is counted at its held share only: one at a time is
 * parsed, in the arena kept for them. When no small file is left to take, a
 * thread may take the first big one as a guest (*guest), beside the big file
 * the owner parses if the two fit in the budget, and gives the pages back
 * after it: a tree of only big files is not left to one thread. */
static size_t pick_job(struct pool *P, pthread_t me, int *guest)
{
    *guest = 0;
    while (P->next < P->njobs && P->taken[P->next]) P->next++;
    size_t first_big = NO_JOB;
    for (size_t i = P->next; i < P->njobs; i++) {
        if (P->taken[i]) continue;
        if (is_big(P, i)) {
            if (!P->has_big_owner) {
                P->has_big_owner = 1;
                P->big_owner = me;
            }
            if (pthread_equal(P->big_owner, me)) return i;
            if (first_big == NO_JOB) first_big = i;
            continue;
        }
        size_t sz = (size_t)P->jobs[i].sf->size;
        if (P->inflight == 0 || P->inflight + sz <= INDEX_INFLIGHT_BUDGET || (i == P->next && P->nparsing == 0))
            return i;
        return NO_JOB;
    }
    if (first_big != NO_JOB && P->owner_big && !P->guest_busy &&
        P->owner_big + (size_t)P->jobs[first_big].sf->size <= INDEX_INFLIGHT_BUDGET) {
        *guest = 1;
        return first_big;
    }
    return NO_JOB;
}

static void *worker(void *arg)
{
    struct pool *P = arg;
    pthread_t me = pthread_self();
    TSParser *parser = ts_parser_new();
    struct ztext_packer *zp = ztext_packer_new();
    const struct lang *cur = NULL;
    for (;;) {
        pthread_mutex_lock(&P->mu);
        size_t i = NO_JOB;
        int guest = 0;
        while (!P->stop && P->ntaken < P->njobs && (i = pick_job(P, me, &guest)) == NO_JOB)
            pthread_cond_wait(&P->budget, &P->mu);
        if (P->stop || i == NO_JOB) {
            pthread_mutex_unlock(&P->mu);
            break;
        }
        P->taken[i] = 1;
        P->ntaken++;
        P->nparsing++;
        size_t sz = (size_t)P->jobs[i].sf->size;
        int big = is_big(P, i);
        P->inflight += big ? held_share(sz) : sz;
        if (guest) P->guest_busy = 1;
        else if (big) {
            /* the others may take a big file beside this one (pick_job) */
            P->owner_big = sz;
            pthread_cond_broadcast(&P->budget);
        }
        pthread_mutex_unlock(&P->mu);
        struct result *r = xcalloc(1, sizeof *r);
        r->job = i;
        process(P, parser, zp, &cur, &P->jobs[i], r);
        if (guest) malloc_trim(0);
        pthread_mutex_lock(&P->mu);
        /* the tree is gone: the result waits for the writer at its held share,
         * so that files finished behind a slow big one do not stall this thread */
        if (!big) P->inflight -= sz - held_share(sz);
        if (guest) P->guest_busy = 0;
        else if (big) P->owner_big = 0;
        P->nparsing--;
        pthread_cond_broadcast(&P->budget);
        while (P->qlen == P->qcap && !P->stop) pthread_cond_wait(&P->not_full, &P->mu);
        if (P->stop) {
            pthread_mutex_unlock(&P->mu);
            result_free(r);
            break;
        }
        P->q[(P->qhead + P->qlen) % P->qcap] = r;
        P->qlen++;
        pthread_cond_signal(&P->not_empty);
        pthread_mutex_unlock(&P->mu);
    }
    ts_parser_delete(parser);
    ztext_packer_free(zp);
    return NULL;
}

static struct result *pool_pop(struct pool *P)
{
    pthread_mutex_lock(&P->mu);
    while (P->qlen == 0) pthread_cond_wait(&P->not_empty, &P->mu);
    struct result *r = P->q[P->qhead];
    P->qhead = (P->qhead + 1) % P->qcap;
    P->qlen--;
    pthread_cond_signal(&P->not_full);
    pthread_mutex_unlock(&P->mu);
    return r;
}

/* ---- the writer --------------------------------------------------------------- */

enum {
    S_DEL_FTS, S_DEL_CHUNKS, S_DEL_SYMS, S_DEL_IMPORTS, S_DEL_EDGES, S_DEL_EDGE_RUN, S_DEL_FILE,
    S_INS_FILE, S_UPD_FILE, S_TOUCH_FILE, S_INS_SYM, S_INS_IMPORT, S_INS_EDGE, S_EDGE_RUN, S_INS_CHUNK, S_INS_FTS,
    S_INS_SKIP, S_COUNT
};

static const char *const SQL[S_COUNT] = {
    [S_DEL_FTS] = "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunk_spans WHERE file_id = ?1)",
    [S_DEL_CHUNKS] = "DELETE FROM chunk_spans WHERE file_id = ?1",
    [S_DEL_SYMS] = "DELETE FROM symbols WHERE file_id = ?1",
    [S_DEL_IMPORTS] = "DELETE FROM imports WHERE file_id = ?1",
    /* the file's run of edge ids; src_file too, so that a wrong run could
     * only leave rows behind, never take another file's */
    [S_DEL_EDGES] = "DELETE FROM edges WHERE id BETWEEN (SELECT lo FROM edge_runs WHERE file_id = ?1) AND "
                    "(SELECT hi FROM edge_runs WHERE file_id = ?1) AND src_file = ?1",
    [S_DEL_EDGE_RUN] = "DELETE FROM edge_runs WHERE file_id = ?1",
    [S_DEL_FILE] = "DELETE FROM files WHERE id = ?1",
    [S_INS_FILE] = "INSERT INTO files(path, lang, size, mtime_ns, hash, nlines, module, parse_errors, "
                   "decode_errors, ztext, tlen, ctime_ns, ino) "
                   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?14, ?12, ?13)",
    [S_UPD_FILE] = "UPDATE files SET path = ?1, lang = ?2, size = ?3, mtime_ns = ?4, hash = ?5, nlines = ?6, "
                   "module = ?7, parse_errors = ?8, decode_errors = ?9, ztext = ?10, tlen = ?14, ctime_ns = ?12, "
                   "ino = ?13 WHERE id = ?11",
    [S_TOUCH_FILE] = "UPDATE files SET size = ?1, mtime_ns = ?2, ctime_ns = ?4, ino = ?5 WHERE id = ?3",
    [S_INS_SYM] = "INSERT INTO symbols(file_id, parent_id, kind_s, name, qualname_s, start_line, end_line, body_line, "
                  "signature_s, decorators, docstring, bases, is_async) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [S_INS_IMPORT] = "INSERT INTO imports(file_id, line, module, name, alias, level) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [S_INS_EDGE] = INDEX_EDGE_INSERT_SQL,
    [S_EDGE_RUN] = INDEX_EDGE_RUN_SQL,
    [S_INS_CHUNK] = "INSERT INTO chunk_spans(file_id, symbol_id, kind_s, start_line, end_line, text, hash_s, head, off, len, "
                    "name) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [S_INS_FTS] = "INSERT INTO chunks_fts(rowid, name, doc, body, path) VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_INS_SKIP] = "INSERT OR REPLACE INTO skipped(path, reason, size) VALUES(?1, ?2, ?3)",
};

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

static int step(struct writer *w, int s, char *err, size_t errlen)
{
    int rc = sqlite3_step(w->st[s]);
    sqlite3_reset(w->st[s]);
    sqlite3_clear_bindings(w->st[s]);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(w->db));
        return -1;
    }
    return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, i);
}

static void bind_id(sqlite3_stmt *st, int i, long long id)
{
    if (id > 0) sqlite3_bind_int64(st, i, id);
    else sqlite3_bind_null(st, i);
}

static int delete_file_rows(struct writer *w, long long id, int and_file, char *err, size_t errlen)
{
    for (int s = S_DEL_FTS; s <= S_DEL_FILE; s++) {
        if (s == S_DEL_FILE && !and_file) break;
        sqlite3_bind_int64(w->st[s], 1, id);
        if (step(w, s, err, errlen)) return -1;
    }
    return 0;
}

static int kind_number(enum parse_kind k)
{
    switch (k) {
    case PARSE_CLASS: return STORE_SYM_CLASS;
    case PARSE_FUNCTION: return STORE_SYM_FUNCTION;
    case PARSE_METHOD: return STORE_SYM_METHOD;
    case PARSE_VARIABLE: return STORE_SYM_VARIABLE;
    }
    return STORE_SYM_VARIABLE;
}

/* v[0..n) as a text, or NULL */
static void bind_text_n(sqlite3_stmt *st, int i, const char *v, size_t n)
{
    if (v) sqlite3_bind_text64(st, i, v, n, SQLITE_TRANSIENT, SQLITE_UTF8);
    else sqlite3_bind_null(st, i);
}

static const char *last_component(const char *s)
{
    const char *p = strrchr(s, '.');
    return p ? p + 1 : s;
}

/* An edge as written, unresolved: index_resolve sets its destination. */
static int insert_edge(struct writer *w, int kind, long long file, long long src, int line, const char *target,
                       const char *target_name, char *err, size_t errlen)
{
    sqlite3_stmt *st = w->st[S_INS_EDGE];
    sqlite3_bind_int(st, 1, kind);
    sqlite3_bind_int64(st, 2, file);
    bind_id(st, 3, src);
    sqlite3_bind_int(st, 4, line);
    index_edge_bind_target(st, 5, target, target_name, &w->scratch);
    bind_text(st, 6, target_name);
    if (step(w, S_INS_EDGE, err, errlen)) return -1;
    if (index_edge_run_note(&w->run, w->st[S_EDGE_RUN], file, sqlite3_last_insert_rowid(w->db))) {
        snprintf(err, errlen, "cannot write the index: %s", sqlite3_errmsg(w->db));
        return -1;
    }
    return 0;
}

int index_edge_run_note(struct index_edge_run *r, sqlite3_stmt *upd, long long file, long long id)
{
    if (r->file == file && id == r->hi + 1) {
        r->hi = id;
        return 0;
    }
    if (index_edge_run_end(r, upd)) return -1;
    r->file = file;
    r->lo = r->hi = id;
    return 0;
}

int index_edge_run_end(struct index_edge_run *r, sqlite3_stmt *upd)
{
    if (!r->file) return 0;
    sqlite3_bind_int64(upd, 1, r->file);
    sqlite3_bind_int64(upd, 2, r->lo);
    sqlite3_bind_int64(upd, 3, r->hi);
    int rc = sqlite3_step(upd);
    sqlite3_reset(upd);
    r->file = 0;
    return rc == SQLITE_DONE ? 0 : -1;
}

static void pending_free(struct index_edges *P)
{
    free(P->v);
    free(P->strs);
    free(P->set);
    memset(P, 0, sizeof *P);
}

/* Inserts the kept edges, in their order, and keeps no more (the budget is spent). */
static int flush_pending(struct writer *w, char *err, size_t errlen)
{
    struct index_edges *P = w->pending;
    w->pending = NULL;
    for (size_t i = 0; i < P->n; i++) {
        const struct index_edge *e = &P->v[i];
        if (insert_edge(w, e->kind, e->file, e->src, e->line, index_edge_str(P, e->target),
                        index_edge_str(P, e->target_name), err, errlen))
            return -1;
    }
    pending_free(P);
    return 0;
}

/* The slot of set for the string s of n bytes: its offset, or an empty slot. */
static uint32_t *pending_slot(const struct index_edges *P, const char *s, size_t n)
{
    size_t j = (size_t)hash64(s, n) & (P->setcap - 1);
    while (P->set[j] != INDEX_EDGE_NONE &&
           !(strncmp(P->strs + P->set[j], s, n) == 0 && P->strs[P->set[j] + n] == 0))
        j = (j + 1) & (P->setcap - 1);
    return &P->set[j];
}

/* s kept in P's strings: its offset, the same for every equal string; a
 * suffix of the string of offset prev (a target's last component) shares
 * its bytes. */
static uint32_t pending_str_add(struct index_edges *P, const char *s, uint32_t prev)
{
    if (!s) return INDEX_EDGE_NONE;
    size_t n = strlen(s);
    if (prev != INDEX_EDGE_NONE) {
        size_t pn = strlen(P->strs + prev);
        if (n <= pn && memcmp(P->strs + prev + pn - n, s, n) == 0) return (uint32_t)(prev + pn - n);
    }
    if ((P->nset + 1) * 2 > P->setcap) {
        uint32_t *old = P->set;
        size_t oldcap = P->setcap;
        P->setcap = oldcap ? oldcap * 2 : 256;
        P->set = xreallocarray(NULL, P->setcap, sizeof *P->set);
        memset(P->set, 0xff, P->setcap * sizeof *P->set);
        for (size_t i = 0; i < oldcap; i++)
            if (old[i] != INDEX_EDGE_NONE) {
                const char *k = P->strs + old[i];
                *pending_slot(P, k, strlen(k)) = old[i];
            }
        free(old);
    }
    uint32_t *slot = pending_slot(P, s, n);
    if (*slot != INDEX_EDGE_NONE) return *slot;
    if (P->len + n + 1 > P->strcap) {
        P->strcap = xgrow_cap(P->strcap, P->len + n + 1, 1 << 16);
        P->strs = xrealloc(P->strs, P->strcap);
    }
    memcpy(P->strs + P->len, s, n + 1);
    P->len += n + 1;
    *slot = (uint32_t)(P->len - n - 1);
    P->nset++;
    return *slot;
}

static int add_edge(struct writer *w, int kind, long long file, long long src, int line, const char *target,
                    const char *target_name, char *err, size_t errlen)
{
    struct index_edges *P = w->pending;
    size_t more = (target ? strlen(target) : 0) + (target_name ? strlen(target_name) : 0) + 2;
    if (P && ((P->n + 1) * sizeof *P->v + P->len + P->setcap * sizeof *P->set + more > w->pending_budget ||
              file > UINT32_MAX || src > UINT32_MAX) &&
        flush_pending(w, err, errlen))
        return -1;
    if (!w->pending) return insert_edge(w, kind, file, src, line, target, target_name, err, errlen);
    P = w->pending;
    ARRAY_GROW(P->v, P->n, P->cap, 4096);
    struct index_edge *e = &P->v[P->n++];
    e->kind = (unsigned char)kind;
    e->line = line;
    e->file = (uint32_t)file;
    e->src = (uint32_t)(src > 0 ? src : 0);
    e->target = pending_str_add(P, target, INDEX_EDGE_NONE);
    e->target_name = pending_str_add(P, target_name, e->target);
    return 0;
}

/* The file's row: inserted, or updated in place (keeping its id) when the
 * file was indexed before, after its old rows are deleted. *fid receives its id. */
static int write_file_row(struct writer *w, const struct job *j, const struct result *r, long long *fid,
                          char *err, size_t errlen)
{
    long long id = j->old_id;
    if (id && delete_file_rows(w, id, 0, err, errlen)) return -1;
    int s = id ? S_UPD_FILE : S_INS_FILE;
    sqlite3_stmt *st = w->st[s];
    sqlite3_bind_text(st, 1, j->sf->path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, j->sf->lang->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->size);
    sqlite3_bind_int64(st, 4, r->mtime_ns);
    sqlite3_bind_text(st, 5, r->hash, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, r->nlines);
    bind_text(st, 7, r->module);
    sqlite3_bind_int(st, 8, r->pr.parse_errors);
    sqlite3_bind_int(st, 9, r->decode_errors);
    sqlite3_bind_blob64(st, 10, r->ztext, r->zlen, SQLITE_STATIC);
    if (id) sqlite3_bind_int64(st, 11, id);
    sqlite3_bind_int64(st, 12, r->ctime_ns);
    sqlite3_bind_int64(st, 13, r->ino);
    sqlite3_bind_int64(st, 14, (sqlite3_int64)r->textlen);
    if (step(w, s, err, errlen)) return -1;
    *fid = id ? id : sqlite3_last_insert_rowid(w->db);
    return 0;
}

/* The symbols, in parse order (a parent before its members: parent_id is
 * what contains what); w->symids maps parse index -> row id. */
static int write_symbols(struct writer *w, long long fid, const struct result *r, char *err, size_t errlen)
{
    const struct parse_result *pr = &r->pr;
    if (pr->nsyms > w->nsymids) {
        w->nsymids = pr->nsyms;
        w->symids = xrealloc(w->symids, w->nsymids * sizeof *w->symids);
    }
    for (size_t i = 0; i < pr->nsyms; i++) {
        const struct parse_symbol *y = &pr->syms[i];
        sqlite3_stmt *st = w->st[S_INS_SYM];
        sqlite3_bind_int64(st, 1, fid);
        bind_id(st, 2, y->parent >= 0 && (size_t)y->parent < i ? w->symids[y->parent] : 0);
        sqlite3_bind_int(st, 3, kind_number(y->kind));
        bind_text(st, 4, y->name);
        size_t n;
        const char *v = store_prefix_form(y->qualname, y->name, &n, &w->scratch);
        bind_text_n(st, 5, v, n);
        sqlite3_bind_int(st, 6, y->start_line);
        sqlite3_bind_int(st, 7, y->end_line);
        sqlite3_bind_int(st, 8, y->body_line);
        v = store_sig_form(y->signature, y->name, &n, &w->scratch);
        bind_text_n(st, 9, v, n);
        bind_text(st, 10, y->decorators);
        if (r->docz && r->docz[i]) sqlite3_bind_blob64(st, 11, r->docz[i], r->docz_len[i], SQLITE_STATIC);
        else bind_text(st, 11, y->docstring);
        bind_text(st, 12, y->bases);
        sqlite3_bind_int(st, 13, y->is_async);
        if (step(w, S_INS_SYM, err, errlen)) return -1;
        w->symids[i] = sqlite3_last_insert_rowid(w->db);
    }
    return 0;
}

/* One unresolved 'inherits' edge per base expression of each class. */
static int write_inherits(struct writer *w, long long fid, const struct parse_result *pr, char *err, size_t errlen)
{
    for (size_t i = 0; i < pr->nsyms; i++) {
        const struct parse_symbol *y = &pr->syms[i];
        if (y->kind != PARSE_CLASS || !y->bases) continue;
        char *bases = xstrdup(y->bases);
        char *save = NULL;
        int rc = 0;
        for (char *b = strtok_r(bases, ",", &save); b && !rc; b = strtok_r(NULL, ",", &save)) {
            while (*b == ' ') b++;
            size_t n = strlen(b);
            while (n && b[n - 1] == ' ') b[--n] = 0;
            if (!n) continue;
            /* 'Generic[T]' names Generic */
            char *target = xstrdup(b);
            char *br = strpbrk(target, "[(");
            if (br) *br = 0;
            rc = add_edge(w, INDEX_EDGE_INHERITS, fid, w->symids[i], y->body_line, b, last_component(target), err,
                          errlen);
            free(target);
        }
        free(bases);
        if (rc) return -1;
    }
    return 0;
}

/* One unresolved 'calls' edge per call site. */
static int write_calls(struct writer *w, long long fid, const struct parse_result *pr, char *err, size_t errlen)
{
    for (size_t i = 0; i < pr->ncalls; i++) {
        const struct parse_call *c = &pr->calls[i];
        long long src = c->caller >= 0 && (size_t)c->caller < pr->nsyms ? w->symids[c->caller] : 0;
        if (add_edge(w, INDEX_EDGE_CALLS, fid, src, c->line, c->callee, last_component(c->callee), err, errlen))
            return -1;
    }
    return 0;
}

static int write_imports(struct writer *w, long long fid, const struct parse_result *pr, char *err, size_t errlen)
{
    for (size_t i = 0; i < pr->nimports; i++) {
        const struct parse_import *im = &pr->imports[i];
        sqlite3_stmt *st = w->st[S_INS_IMPORT];
        sqlite3_bind_int64(st, 1, fid);
        sqlite3_bind_int(st, 2, im->line);
        sqlite3_bind_text(st, 3, im->module ? im->module : "", -1, SQLITE_STATIC);
        bind_text(st, 4, im->name);
        bind_text(st, 5, im->alias);
        sqlite3_bind_int(st, 6, im->level);
        if (step(w, S_INS_IMPORT, err, errlen)) return -1;
    }
    return 0;
}

/* Each chunk and its full-text row (rowid = chunks.id). */
static int write_chunks(struct writer *w, long long fid, const struct chunk_list *chunks, char *err, size_t errlen)
{
    for (size_t i = 0; i < chunks->n; i++) {
        const struct chunk *c = &chunks->v[i];
        sqlite3_stmt *st = w->st[S_INS_CHUNK];
        sqlite3_bind_int64(st, 1, fid);
        bind_id(st, 2, c->sym >= 0 ? w->symids[c->sym] : 0);
        int k = store_chunk_kind(c->kind);
        if (k >= 0) sqlite3_bind_int(st, 3, k);
        else sqlite3_bind_text(st, 3, c->kind, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, c->start_line);
        sqlite3_bind_int(st, 5, c->end_line);
        if (c->span) {   /* the text is the file's: only where it lies is written */
            if (c->head_line) sqlite3_bind_int64(st, 8, (long long)(c->head_off << 16 | (c->headlen - 1)));
            else if (c->headlen) sqlite3_bind_text(st, 8, c->text, (int)c->headlen, SQLITE_STATIC);
            sqlite3_bind_int64(st, 9, (long long)c->off);
            sqlite3_bind_int64(st, 10, (long long)c->len);
        } else {   /* made up of the lines [off, off + len): packed against them */
            sqlite3_bind_blob64(st, 6, c->packed, c->packed_len, SQLITE_STATIC);
            sqlite3_bind_int64(st, 9, (long long)c->off);
            sqlite3_bind_int64(st, 10, (long long)c->len);
        }
        unsigned char h[8];
        if (store_hash_bytes(c->hash, h)) sqlite3_bind_blob(st, 7, h, 8, SQLITE_TRANSIENT);
        else sqlite3_bind_text(st, 7, c->hash, -1, SQLITE_STATIC);
        if (!c->name_derived) sqlite3_bind_text(st, 11, c->fts_name, -1, SQLITE_STATIC);
        if (step(w, S_INS_CHUNK, err, errlen)) return -1;
        long long cid = sqlite3_last_insert_rowid(w->db);
        if (w->derive) derive_chunk(w->derive, cid, c);
        st = w->st[S_INS_FTS];
        sqlite3_bind_int64(st, 1, cid);
        sqlite3_bind_text(st, 2, c->fts_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, c->fts_doc, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, c->fts_body, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, c->fts_path, -1, SQLITE_STATIC);
        if (step(w, S_INS_FTS, err, errlen)) return -1;
    }
    return 0;
}

/* Writes a parsed file's rows. Calls and inherits edges go in unresolved;
 * index_resolve fills their destinations once every file is in. */
static int write_parsed(struct writer *w, const struct job *j, const struct result *r, char *err, size_t errlen)
{
    long long fid;
    if (write_file_row(w, j, r, &fid, err, errlen) || write_symbols(w, fid, r, err, errlen) ||
        write_inherits(w, fid, &r->pr, err, errlen) || write_calls(w, fid, &r->pr, err, errlen) ||
        write_imports(w, fid, &r->pr, err, errlen) || write_chunks(w, fid, &r->chunks, err, errlen))
        return -1;
    if (w->derive) derive_file(w->derive, fid, &r->lines);
    return 0;
}

/* ---- the existing index ---------------------------------------------------------- */

struct old_file {
    long long id, size, mtime_ns, ctime_ns, ino;
    char *path;
    char hash[17];
    int seen;
};

static int load_files(sqlite3 *db, struct old_file **out, size_t *n)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, path, size, mtime_ns, hash, ctime_ns, ino FROM files ORDER BY path", -1, &st, NULL))
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ARRAY_GROW(*out, *n, cap, 256);
        struct old_file *f = &(*out)[(*n)++];
        f->id = sqlite3_column_int64(st, 0);
        f->path = xstrdup((const char *)sqlite3_column_text(st, 1));
        f->size = sqlite3_column_int64(st, 2);
        f->mtime_ns = sqlite3_column_int64(st, 3);
        snprintf(f->hash, sizeof f->hash, "%s", (const char *)sqlite3_column_text(st, 4));
        f->ctime_ns = sqlite3_column_int64(st, 5);
        f->ino = sqlite3_column_int64(st, 6);
        f->seen = 0;
    }
    /* a damaged page ends the loop early: the caller must not take a partial
     * list for the index's files */
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int cmp_skip(const void *a, const void *b)
{
    return strcmp(((const struct scan_skip *)a)->path, ((const struct scan_skip *)b)->path);
}

/* 1 when the skipped table already holds exactly these rows (sorted by path). */
static int skipped_same(sqlite3 *db, const struct scan_result *sr)
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
static int load_dirs(sqlite3 *db, struct scan_dirs *d)
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
static int write_dirs(sqlite3 *db, const struct scan_dirs *d, int reset, char *err, size_t errlen)
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

/* 1 when the table holds a row, 0 when empty, -1 when it cannot be read. */
static int has_rows(sqlite3 *db, const char *table)
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
static void summary_compute(sqlite3 *db, struct index_stats *s, int counted)
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
    s->calls = q_int(db, "SELECT count(*) FROM edges WHERE kind = 0");   /* INDEX_EDGE_CALLS */
    sqlite3_stmt *st;
    memset(s->edges_resolved, 0, sizeof s->edges_resolved);
    memset(s->edges_unresolved, 0, sizeof s->edges_unresolved);
    if (sqlite3_prepare_v2(db, "SELECT kind, count(dst_id), count(*) FROM edges GROUP BY kind", -1, &st, NULL) ==
        SQLITE_OK) {
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

static char *summary_format(const struct index_stats *s)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", s->files, s->skipped, s->classes,
               s->functions, s->methods, s->variables, s->imports, s->calls, s->parse_errors,
               s->parse_error_files, s->decode_errors, s->decode_error_files);
    for (int i = 0; i < INDEX_EDGE_KINDS; i++) buf_printf(&b, " %ld %ld", s->edges_resolved[i], s->edges_unresolved[i]);
    return buf_take(&b);
}

static int summary_parse(const char *v, struct index_stats *s)
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
static int drop_indexes(sqlite3 *db, struct buf *ddl, char *err, size_t errlen)
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

static void remove_db_side_files(const char *path)
{
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
        char *p = xasprintf("%s%s", path, suffixes[i]);
        unlink(p);
        free(p);
    }
}

/* HEAD's commit and the dirty flag (index_provenance reads them). */
static int write_provenance(sqlite3 *db, const struct index_stats *S)
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

static void set_meta(sqlite3 *db, const char *root)
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
static int lock_side_file(const char *tmp_path, const struct index_options *opt)
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
static long long effective_max(sqlite3 *db, const struct index_options *opt, struct index_stats *S, int *changed)
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

/* ---- one update, step by step ------------------------------------------------------
 * update_once runs the steps in order: open (the index in place, or a fresh
 * side file), scan, merge the listing with the files table, then either keep
 * an index that nothing changed, or write: begin, parse and write the changed
 * files, finish (skipped files, resolve, indexes, meta, commit) and, for a
 * fresh build, install the side file at the index path. */

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
    struct old_file *old;         /* the files table, by path */
    size_t nold;
    long ngone;                   /* of those, files no longer listed */
    struct job *jobs;             /* listed files to read again, by path */
    size_t njobs;
    struct writer w;
    struct index_edges pending;   /* a fresh build's edges, until index_resolve inserts them */
    int in_txn;
    long written, touched;        /* parsed files written; files read again and found the same */
    long kill_after;              /* test hook (DRQA_TEST_KILL_AFTER), -1 when unset */
    int nthreads;
    int64_t waited_us;            /* writer idle: tells whether parsing or writing bounds the update */
};

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
    if (ftruncate(U->tmp_fd, 0) != 0) {
        snprintf(U->err, U->errlen, "cannot reset the index '%s': %s", U->tmp_path, strerror(errno));
        return -1;
    }
    remove_db_side_files(U->tmp_path);
    if (store_open(U->tmp_path, 0, &U->db, NULL, U->err, U->errlen)) return -1;
    if (store_exec(U->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", U->err, U->errlen)) return -1;
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
     * less peak RSS). */
    sqlite3_exec(U->db, U->fresh ? "PRAGMA cache_size=-4096" : "PRAGMA cache_size=-16384", NULL, NULL, NULL);
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

/* Merges the sorted listing with the sorted files table: the files to read
 * again become jobs, the rest count as unchanged; files no longer listed are
 * left unseen in U->old. */
static int merge_listing(struct update *U)
{
    struct index_stats *S = U->S;
    if (load_files(U->db, &U->old, &U->nold)) {
        *U->index_fault = 1;
        return update_fail(U, "cannot read the index", U->index_path);
    }
    const struct scan_result *sr = &U->sr;
    struct old_file *old = U->old;
    U->jobs = xcalloc(sr->nfiles ? sr->nfiles : 1, sizeof *U->jobs);
    for (size_t i = 0, k = 0; i < sr->nfiles; i++) {
        const struct scan_file *f = &sr->files[i];
        struct job *j = &U->jobs[U->njobs];
        int c = 1;
        while (k < U->nold && (c = strcmp(old[k].path, f->path)) < 0) k++;
        if (k < U->nold && c == 0) {
            old[k].seen = 1;
            /* as git's index does: an edit that restores the size and mtime
             * still moves the ctime, and a file saved by rename its inode */
            int same = old[k].size == f->size && old[k].mtime_ns == f->mtime_ns && old[k].ctime_ns == f->ctime_ns &&
                       old[k].ino == f->ino;
            if (same && !U->opt->verify) {
                S->unchanged++;
                continue;
            }
            j->stat_same = same;
            S->verified += U->opt->verify;
            j->old_id = old[k].id;
            memcpy(j->old_hash, old[k].hash, sizeof old[k].hash);
        }
        j->sf = f;
        U->njobs++;
    }
    for (size_t k = 0; k < U->nold; k++) U->ngone += !old[k].seen;
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
    U->w.db = U->db;
    if (U->fresh) U->w.pending = &U->pending;
    if (U->fresh) U->w.derive = derive_new();
    U->w.pending_budget = pending_budget();
    for (int s = 0; s < S_COUNT; s++)
        if (sqlite3_prepare_v3(U->db, SQL[s], -1, SQLITE_PREPARE_PERSISTENT, &U->w.st[s], NULL) != SQLITE_OK)
            return update_fail(U, "cannot prepare index statements in", U->index_path);
    if (U->dirs_changes && write_dirs(U->db, &U->dirs, U->dirs_reset, U->err, U->errlen)) return -1;
    for (size_t k = 0; k < U->nold; k++) {
        if (U->old[k].seen) continue;
        if (delete_file_rows(&U->w, U->old[k].id, 1, U->err, U->errlen)) return -1;
        U->S->deleted++;
    }
    return 0;
}

/* Writes one finished job: its rows, the new stat of a file found the same,
 * or the deletion of a file now skipped. */
static int write_result(struct update *U, const struct job *j, const struct result *r)
{
    struct index_stats *S = U->S;
    struct writer *w = &U->w;
    if (r->kind == RES_SKIP) {
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

/* Starts the parser threads on U's jobs. Returns 0, or -1 when none started. */
static int pool_start(struct pool *P, pthread_t **threads, struct update *U)
{
    int n = U->opt->threads > 0 ? U->opt->threads : ncores();
    if ((size_t)n > U->njobs) n = (int)U->njobs;
    P->rootfd = U->rootfd;
    P->test_swap = test_swap_spec();
    P->max = U->max;
    P->derive = U->w.derive != NULL;
    P->jobs = U->jobs;
    P->njobs = U->njobs;
    P->qcap = (size_t)n;
    P->q = xcalloc(P->qcap, sizeof *P->q);
    P->taken = xcalloc(P->njobs, 1);
    pthread_mutex_init(&P->mu, NULL);
    pthread_cond_init(&P->not_full, NULL);
    pthread_cond_init(&P->not_empty, NULL);
    pthread_cond_init(&P->budget, NULL);
    *threads = xcalloc((size_t)n, sizeof **threads);
    for (int t = 0; t < n; t++)
        if (pthread_create(&(*threads)[t], NULL, worker, P) != 0) {
            n = t;
            break;
        }
    U->nthreads = n;
    if (n == 0) {
        snprintf(U->err, U->errlen, "cannot start parser threads: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Tells the parser threads to finish quickly (the writer gave up). */
static void pool_stop(struct pool *P)
{
    pthread_mutex_lock(&P->mu);
    P->stop = 1;
    pthread_cond_broadcast(&P->not_full);
    pthread_cond_broadcast(&P->budget);
    pthread_mutex_unlock(&P->mu);
}

/* Joins the threads started and frees what the pool holds. */
static void pool_end(struct pool *P, pthread_t *threads, int nthreads)
{
    if (threads) {
        for (int t = 0; t < nthreads; t++) pthread_join(threads[t], NULL);
        while (P->qlen) {
            result_free(P->q[P->qhead]);
            P->qhead = (P->qhead + 1) % P->qcap;
            P->qlen--;
        }
        pthread_mutex_destroy(&P->mu);
        pthread_cond_destroy(&P->not_full);
        pthread_cond_destroy(&P->not_empty);
        pthread_cond_destroy(&P->budget);
        free(threads);
    }
    free(P->q);
    free(P->taken);
}

/* Parses the jobs on the pool and writes their results here, in job (path)
 * order, whatever order the threads finish in, so that row ids, and every tie
 * broken by them, are the same from one build to the next. Results that
 * finish early wait in `held`; they stay counted in the in-flight budget,
 * which bounds how many can wait. */
static int parse_and_write(struct update *U)
{
    if (!U->njobs) return 0;
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
        result_free(r);
        pthread_mutex_lock(&P.mu);
        P.inflight -= held_share((size_t)j->sf->size);
        pthread_cond_broadcast(&P.budget);
        if (wr) {
            P.stop = 1;
            pthread_cond_broadcast(&P.not_full);
        }
        pthread_mutex_unlock(&P.mu);
        if (wr) goto out;
        if (U->opt->progress) U->opt->progress(U->opt->progress_ctx, done + 1, U->njobs);
    }
    rc = 0;
out:
    pool_end(&P, threads, U->nthreads);
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
    derive_start(U->w.derive, U->db);
    U->t_write = now_ms();
    int resolved = 0;
    if (S->parsed || S->deleted || S->rebuilt) {
        if (U->opt->phase) U->opt->phase(U->opt->progress_ctx, "resolve");
        if (index_resolve(U->db, U->root, U->w.pending, S, U->err, U->errlen)) return -1;
        U->w.pending = NULL;   /* inserted */
        resolved = 1;
    }
    if (U->w.pending && flush_pending(&U->w, U->err, U->errlen)) return -1;
    if (index_edge_run_end(&U->w.run, U->w.st[S_EDGE_RUN])) {
        snprintf(U->err, U->errlen, "cannot write the index: %s", sqlite3_errmsg(U->db));
        return -1;
    }
    U->t_resolve = now_ms();
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
    log_msg("index %s: %d parser threads, writer waited %lld ms, writer thread CPU %lld ms (scan, write, resolve)",
            U->root, U->nthreads, (long long)(U->waited_us / 1000), writer_cpu_ms);
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
    for (size_t k = 0; k < U->nold; k++) free(U->old[k].path);
    free(U->old);
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

int index_ensure_ex(const struct drqa_opts *o, const struct index_options *opt_in, struct index_stats *stats,
                    sqlite3 **db, char **repo_abs, char **index_path_out, char *err, size_t errlen)
{
    if (db) *db = NULL;
    if (repo_abs) *repo_abs = NULL;
    if (index_path_out) *index_path_out = NULL;
    if (!o->repo || !*o->repo) {
        snprintf(err, errlen, "no repository given; pass the repository directory as the first argument");
        return INDEX_EUSAGE;
    }
    struct stat st;
    if (stat(o->repo, &st) != 0) {
        snprintf(err, errlen, "the repository '%s' does not exist (%s); give an existing directory", o->repo,
                 strerror(errno));
        return INDEX_EUSAGE;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the repository '%s' is not a directory; give the repository's top directory", o->repo);
        return INDEX_EUSAGE;
    }
    char *root = realpath(o->repo, NULL);
    if (!root) {
        snprintf(err, errlen, "cannot resolve the repository path '%s': %s", o->repo, strerror(errno));
        return -1;
    }
    char *ipath = o->index_path ? xstrdup(o->index_path) : store_default_path(root);
    struct index_options opt = {.threads = o->threads, .max_file_size = o->max_file_size,
                                .max_file_size_given = o->max_file_size_given, .check = o->check,
                                .verify = o->verify, .no_ignore = o->no_ignore};
    /* only --index-only is there to update: the other modes answer from the
     * index as it was while another process updates it */
    opt.busy_read = o->run != RUN_INDEX_ONLY;
    if (opt_in) opt = *opt_in;
    if (!opt.notice && !(opt_in && opt_in->progress) && !o->quiet) opt.notice = stderr_notice;
    struct index_stats local;
    if (!stats) stats = &local;
    int64_t last = 0;
    if (!opt.progress && !o->no_progress && !o->quiet && isatty(2)) {
        opt.progress = tty_progress;
        opt.progress_ctx = &last;
    }
    int rc = index_update(root, ipath, &opt, stats, err, errlen);
    if (rc == 0 && stats->old_schema) {
        char *msg = xasprintf("the index '%s' was written in another format (schema %d); it was rebuilt in the "
                              "current one (schema %d)%s", ipath, stats->old_schema, STORE_SCHEMA_VERSION,
                              kept_note(stats));
        log_msg("%s", msg);
        if (!(opt_in && opt_in->progress) && !o->quiet) fprintf(stderr, "drqa-tui: %s\n", msg);
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

int index_ensure(const struct drqa_opts *o, sqlite3 **db, char **repo_abs, char *err, size_t errlen)
{
    return index_ensure_ex(o, NULL, NULL, db, repo_abs, NULL, err, errlen);
}
