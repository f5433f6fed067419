/*
 * index_pool: the parser threads of an update. Each takes the next changed
 * file (big files to one thread, the others within an in-flight budget),
 * opens it beneath the repository as the scan saw it, reads, decodes, parses,
 * chunks and compresses it, and queues the result for the writer (index.c).
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
#include "ts_arena.h"
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

void result_free(struct result *r)
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
 * trees took its peak RSS to 174-189 MB. At 256 KiB, the trees of the files
 * just below it (up to about 20 MB each) stayed in the other threads' arenas
 * while the owner parsed sympy's largest (sine.py, 67 MB): a peak of 153-157
 * MB against 141-142 MB at 128 KiB, for the same time. (Those figures are
 * from before the trees moved into each thread's tree-sitter arena, which
 * gives a tree's pages back past TS_ARENA_KEEP when its file is done; one
 * big tree at a time, plus a guest's within the budget, still bounds what
 * the trees take at once.) */
#define INDEX_BIG_SIZE (128 * 1024)
/* Source bytes of the small files being parsed at one time (see pick_job):
 * a syntax tree takes tens of times its source. */
#define INDEX_INFLIGHT_BUDGET (768u * 1024)

/* What a result holds, roughly as malloc counts it: what it waits with until
 * the writer takes it. */
#define HELD_STR(s) ((s) ? strlen(s) + 1 + 16 : 0)
static size_t result_held(const struct result *r)
{
    size_t n = sizeof *r + r->zlen + r->lines.data.cap + HELD_STR(r->module);
    for (size_t i = 0; i < r->chunks.n; i++) {
        const struct chunk *c = &r->chunks.v[i];
        n += sizeof *c + c->packed_len + HELD_STR(c->text) + HELD_STR(c->fts_name) + HELD_STR(c->fts_doc) +
             HELD_STR(c->fts_body) + HELD_STR(c->fts_path);
    }
    for (size_t i = 0; i < r->pr.nsyms; i++) {
        const struct parse_symbol *y = &r->pr.syms[i];
        n += sizeof *y + HELD_STR(y->name) + HELD_STR(y->qualname) + HELD_STR(y->signature) +
             HELD_STR(y->decorators) + HELD_STR(y->docstring) + HELD_STR(y->bases) +
             (r->docz && r->docz[i] ? r->docz_len[i] + 16 : 0);
    }
    for (size_t i = 0; i < r->pr.nimports; i++) {
        const struct parse_import *m = &r->pr.imports[i];
        n += sizeof *m + HELD_STR(m->module) + HELD_STR(m->name) + HELD_STR(m->alias);
    }
    for (size_t i = 0; i < r->pr.ncalls; i++) n += sizeof r->pr.calls[i] + HELD_STR(r->pr.calls[i].callee);
    return n;
}

static int count_lines(const char *s, size_t n)
{
    int l = 0;
    for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++) l++;
    if (n && s[n - 1] != '\n') l++;
    return l;
}

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
        parse_merge_calls(&r->pr);   /* one edge per caller and callee */
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
        chunk_keep_written(c);
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
        if ((P->inflight == 0 || P->inflight + sz <= INDEX_INFLIGHT_BUDGET) && P->held <= P->held_budget)
            return i;
        if (i == P->next && P->nparsing == 0) return i;
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
    /* tree-sitter's memory a file at a time (ts_arena.h): a parser per
     * file, made in the arena and gone with it; without an arena, one
     * parser for all and each tree freed as usual */
    size_t reserve = ts_arena_reserve();
    struct ts_arena *arena = reserve ? ts_arena_new(reserve) : NULL;
    TSParser *parser = arena ? NULL : ts_parser_new();
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
        if (!big) P->inflight += sz;   /* a big file is parsed alone in its arena */
        if (guest) P->guest_busy = 1;
        else if (big) {
            /* the others may take a big file beside this one (pick_job) */
            P->owner_big = sz;
            pthread_cond_broadcast(&P->budget);
        }
        pthread_mutex_unlock(&P->mu);
        struct result *r = xcalloc(1, sizeof *r);
        r->job = i;
        if (arena) {
            ts_arena_begin(arena);
            parser = ts_parser_new();
            cur = NULL;
        }
        process(P, parser, zp, &cur, &P->jobs[i], r);
        if (arena) {
            ts_parser_delete(parser);   /* the grammar's scanner state is glibc's */
            parser = NULL;
            ts_arena_end(arena);
        }
        if (guest) malloc_trim(0);
        pthread_mutex_lock(&P->mu);
        /* the tree is gone: the result waits for the writer with what it
         * holds, so that files finished behind a slow big one do not stall
         * this thread while it holds little */
        if (!big) P->inflight -= sz;
        r->held = result_held(r);
        P->held += r->held;
        if (P->held > P->held_max) P->held_max = P->held;
        if (guest) P->guest_busy = 0;
        else if (big) P->owner_big = 0;
        P->nparsing--;
        pthread_cond_broadcast(&P->budget);
        if (P->stop) {
            pthread_mutex_unlock(&P->mu);
            result_free(r);
            break;
        }
        P->q[P->qtail++] = r;
        pthread_cond_signal(&P->not_empty);
        pthread_mutex_unlock(&P->mu);
    }
    if (parser) ts_parser_delete(parser);
    ts_arena_free(arena);
    ztext_packer_free(zp);
    return NULL;
}

struct result *pool_pop(struct pool *P)
{
    pthread_mutex_lock(&P->mu);
    while (P->qhead == P->qtail) pthread_cond_wait(&P->not_empty, &P->mu);
    struct result *r = P->q[P->qhead++];
    pthread_mutex_unlock(&P->mu);
    return r;
}

/* The writer writes the results in the jobs' order, and the threads take
 * them in that order (pick_job). In path order a big file holds back every
 * small one parsed behind it while its owner parses it: their results wait
 * for it, the held budget fills and the other threads stop (sympy: about
 * 1.5 s at 1.2 of 2 cores). So a big file goes ahead, to be parsed beside
 * the small files that follow it: each is put as soon as the small files
 * since the previous big one add up to (threads - 1) times that one's size
 * (parse time goes with bytes: the others are busy as long as the owner),
 * and never after its own place in path order. A big file that goes ahead
 * waits in a fresh build's derived data until the files before it are
 * written (derive.c): the big files ahead of their place at one time hold at
 * most ahead_budget bytes of source, else the next one keeps its place.
 * Small files keep their path order, as do big ones among themselves; with
 * one thread the order is path order. Every job's place in path order is
 * kept (job.place). */
void pool_order(struct job *jobs, size_t n, int threads, size_t ahead_budget)
{
    size_t nbig = 0;
    for (size_t i = 0; i < n; i++) {
        jobs[i].place = i;
        nbig += (size_t)jobs[i].sf->size >= INDEX_BIG_SIZE;
    }
    if (threads < 2 || nbig == 0 || nbig == n) return;
    struct job *small = xmalloc((n - nbig) * sizeof *small), *big = xmalloc(nbig * sizeof *big);
    size_t ns = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        if ((size_t)jobs[i].sf->size >= INDEX_BIG_SIZE) big[nb++] = jobs[i];
        else small[ns++] = jobs[i];
    }
    /* ahead: the bytes of the big files put before a small file of a lower
     * place (big[wait .. bi), in place order) */
    size_t si = 0, bi = 0, debt = 0, wait = 0, ahead = 0;
    for (size_t k = 0; k < n; k++) {
        int due = bi < nb && (si == ns || small[si].place > big[bi].place);
        size_t bsz = bi < nb ? (size_t)big[bi].sf->size : 0;
        if (due || (bi < nb && debt == 0 && ahead + bsz <= ahead_budget)) {
            debt = (size_t)(threads - 1) * bsz;
            ahead += bsz;
            jobs[k] = big[bi++];
        } else {
            size_t sz = (size_t)small[si].sf->size;
            debt = debt > sz ? debt - sz : 0;
            jobs[k] = small[si++];
        }
        /* a big file whose place the small files have reached waits no more */
        for (; wait < bi && (si == ns || small[si].place > big[wait].place); wait++)
            ahead -= (size_t)big[wait].sf->size;
    }
    free(small);
    free(big);
}

/* Starts the parser threads on U's jobs. Returns 0, or -1 when none started. */
int pool_start(struct pool *P, pthread_t **threads, struct update *U)
{
    int n = U->opt->threads > 0 ? U->opt->threads : ncores();
    if ((size_t)n > U->njobs) n = (int)U->njobs;
    pool_order(U->jobs, U->njobs, n, held_budget());
    P->rootfd = U->rootfd;
    P->test_swap = test_swap_spec();
    P->max = U->max;
    P->derive = U->w.derive != NULL;
    P->held_budget = held_budget();
    P->jobs = U->jobs;
    P->njobs = U->njobs;
    /* a slot for every job's result, each filled once: what the finished
     * results hold is bounded by the held budget (pick_job), not by their
     * count. With a ring of a slot per thread, a thread that finished a file
     * while the writer wrote a large result stopped until the writer took
     * the next one: django's threads waited 0.2 s in all for a slot, sympy's
     * 0.9 s, and django's parse and write took 1.03-1.07 s against 0.90 s */
    P->q = xcalloc(P->njobs, sizeof *P->q);
    P->taken = xcalloc(P->njobs, 1);
    pthread_mutex_init(&P->mu, NULL);
    pthread_cond_init(&P->not_empty, NULL);
    pthread_cond_init(&P->budget, NULL);
    ts_arena_install();   /* before the threads that use tree-sitter */
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
void pool_stop(struct pool *P)
{
    pthread_mutex_lock(&P->mu);
    P->stop = 1;
    pthread_cond_broadcast(&P->budget);
    pthread_mutex_unlock(&P->mu);
}

/* Joins the threads started and frees what the pool holds. */
void pool_end(struct pool *P, pthread_t *threads, int nthreads)
{
    if (threads) {
        for (int t = 0; t < nthreads; t++) pthread_join(threads[t], NULL);
        while (P->qhead < P->qtail) result_free(P->q[P->qhead++]);
        pthread_mutex_destroy(&P->mu);
        pthread_cond_destroy(&P->not_empty);
        pthread_cond_destroy(&P->budget);
        free(threads);
    }
    free(P->q);
    free(P->taken);
}
