/*
 * cli_mcp: the MCP server's stdio transport (--mcp REPO) and --recheck.
 *
 * --mcp: JSON-RPC messages, one per line, on stdin; stdout carries only
 * protocol messages, one per line, each written whole under a lock; what
 * else is said goes to stderr (and to the client as notifications/message).
 * The main thread reads lines: a request (or a batch holding one) goes to a pool of threads (so a
 * long ask does not hold up a find_class; the core bounds the tool calls
 * that run at once), anything else (notifications, cancellations, a line
 * that is not JSON) is handled at once, in order. At the end of stdin the
 * requests read so far are answered, then the server exits; SIGTERM, SIGINT
 * or SIGHUP cancel what runs and exit at once. Either way every thread is
 * joined and nothing is left behind.
 *
 * --recheck FILE REPO: the saved answers in FILE (a --batch output file, one
 * answer per line; an --ask --json answer or an ask result; a transcript)
 * against the repository's index brought up to date: a verdict per citation
 * (recheck.h), as text or, with --json, one JSON object per answer.
 */
#include "cli.h"
#include "cli_settings.h"
#include "action.h"
#include "index.h"
#include "mcp.h"
#include "recheck.h"
#include "sqlx.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MCP_MAX_LINE (64u << 20)    /* one message; a longer line is refused and skipped */
#define MCP_EXTRA_THREADS 4         /* beyond the tool-call slots: ping, tools/list, waiting calls */

struct out {
    pthread_mutex_t lock;
    int broken;                     /* stdout is gone (the client went away) */
};

static void out_send(void *ctx, const char *json)
{
    struct out *o = ctx;
    size_t n = strlen(json);
    char *line = xmalloc(n + 1);
    memcpy(line, json, n);
    line[n] = '\n';
    pthread_mutex_lock(&o->lock);
    if (!o->broken && write_all(1, line, n + 1) != 0) o->broken = 1;
    pthread_mutex_unlock(&o->lock);
    free(line);
}

struct job {
    char *msg;
    size_t len;
    struct job *next;
};

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct job *head, **tail;
    int busy;                       /* jobs being handled */
    int quit;                       /* no more jobs will come */
    struct mcp_session *ss;
    struct out *out;
};

static void *worker_main(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->head && !p->quit) pthread_cond_wait(&p->cond, &p->lock);
        struct job *j = p->head;
        if (!j) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        p->head = j->next;
        if (!p->head) p->tail = &p->head;
        p->busy++;
        pthread_mutex_unlock(&p->lock);
        mcp_handle(p->ss, j->msg, j->len, out_send, p->out);
        free(j->msg);
        free(j);
        pthread_mutex_lock(&p->lock);
        p->busy--;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
    }
}

static void pool_push(struct pool *p, const char *msg, size_t len)
{
    struct job *j = xcalloc(1, sizeof *j);
    j->msg = xstrndup(msg, len);
    j->len = len;
    pthread_mutex_lock(&p->lock);
    *p->tail = j;
    p->tail = &j->next;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static int pool_idle(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    int idle = !p->head && !p->busy;
    pthread_mutex_unlock(&p->lock);
    return idle;
}

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) { /* the pipe is full: a signal is already pending */ }
    errno = saved;
}

/* One line from stdin (without its newline). */
static void dispatch(struct pool *p, char *line, size_t len)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i == len) return;   /* a blank line is no message */
    if (mcp_is_request(line + i, len - i)) pool_push(p, line + i, len - i);
    else mcp_handle(p->ss, line + i, len - i, out_send, p->out);
}

/* No more requests: the workers answer what was queued, then return. */
static void pool_quit(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

/* The line being read from stdin, and whether it is one over MCP_MAX_LINE
 * that is being skipped. */
struct line_reader {
    struct buf line;
    int skipping;
};

/* A chunk read from stdin: every line it completes is dispatched; a line
 * over MCP_MAX_LINE is answered with a parse error and skipped. */
static void feed(struct pool *p, struct line_reader *r, const char *chunk, size_t got)
{
    const char *c = chunk, *end = chunk + got;
    while (c < end) {
        const char *nl = memchr(c, '\n', (size_t)(end - c));
        size_t take = nl ? (size_t)(nl - c) : (size_t)(end - c);
        if (!r->skipping) {
            if (r->line.len + take > MCP_MAX_LINE) {
                char m[160];
                snprintf(m, sizeof m, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":"
                         "\"Parse error: a message longer than %u bytes\"}}", MCP_MAX_LINE);
                out_send(p->out, m);
                buf_reset(&r->line);
                r->skipping = 1;
            } else {
                buf_add(&r->line, c, take);
            }
        }
        if (nl) {
            if (!r->skipping) dispatch(p, r->line.data ? r->line.data : (char *)"", r->line.len);
            buf_reset(&r->line);
            r->skipping = 0;
            c = nl + 1;
        } else {
            c = end;
        }
    }
}

/* Reads stdin until what it asked has been answered after its end, a
 * signal came or the client went away. Returns 1 when a signal stopped it. */
static int serve_stdin(struct pool *p)
{
    int signalled = 0, eof = 0;
    struct line_reader r = {BUF_INIT, 0};
    char chunk[65536];
    while (!signalled && !(eof && pool_idle(p))) {
        struct pollfd fds[2] = {{sig_pipe[0], POLLIN, 0}, {0, POLLIN, 0}};
        int n = poll(fds, eof ? 1 : 2, eof ? 100 : 500);
        if (n < 0 && errno != EINTR) break;
        if (fds[0].revents & POLLIN) {
            signalled = 1;
            break;
        }
        pthread_mutex_lock(&p->out->lock);
        int broken = p->out->broken;
        pthread_mutex_unlock(&p->out->lock);
        if (broken) break;
        if (eof || n <= 0 || !(fds[1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t got = read(0, chunk, sizeof chunk);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) {
            if (got < 0) fprintf(stderr, "drqa-tui: cannot read stdin: %s\n", strerror(errno));
            if (r.line.len && !r.skipping) dispatch(p, r.line.data, r.line.len);   /* a last line without newline */
            buf_reset(&r.line);
            eof = 1;
            pool_quit(p);   /* answer what was read, then stop */
            continue;
        }
        feed(p, &r, chunk, (size_t)got);
    }
    buf_free(&r.line);
    return signalled;
}

/* SIGTERM, SIGINT and SIGHUP write to sig_pipe, which the main thread polls. */
static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int cli_mcp(const struct drqa_opts *o)
{
    char err[2048];
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGHUP);
    signal(SIGPIPE, SIG_IGN);   /* a client that went away: a failed write, not a dead server */
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "drqa-tui: cannot create a pipe: %s\n", strerror(errno));
        return EXIT_FAIL;
    }
    /* every thread made from here on keeps these signals blocked: they
     * reach the main thread, which stops the others */
    pthread_sigmask(SIG_BLOCK, &block, &old);
    struct engine_settings set;
    cli_engine_settings(&set, o);
    struct mcp_server_config cfg = {.engine = &set};
    struct mcp_server *s = mcp_server_new(&cfg, err, sizeof err);
    if (!s) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        char *safe = text_term_safe(err);
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
        return EXIT_USAGE;
    }
    struct out out = {.broken = 0};
    pthread_mutex_init(&out.lock, NULL);
    struct mcp_session *ss = mcp_session_new(s);
    mcp_session_set_default_send(ss, out_send, &out);
    struct pool p = {.ss = ss, .out = &out};
    p.tail = &p.head;
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.cond, NULL);
    int nthreads = MCP_MAX_CALLS + MCP_EXTRA_THREADS, started = 0;
    pthread_t *threads = xcalloc((size_t)nthreads, sizeof *threads);
    for (; started < nthreads; started++)
        if (pthread_create(&threads[started], NULL, worker_main, &p) != 0) break;
    catch_signals();
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    int signalled = serve_stdin(&p);
    /* a signal (or a client gone) cancels what runs; the end of stdin has
     * waited for the answers */
    mcp_server_shutdown(s);
    pool_quit(&p);
    for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
    free(threads);
    mcp_session_free(ss);
    mcp_server_free(s);
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.cond);
    pthread_mutex_destroy(&out.lock);
    close(sig_pipe[0]);
    close(sig_pipe[1]);
    sig_pipe[0] = sig_pipe[1] = -1;
    if (signalled && !o->quiet) fprintf(stderr, "drqa-tui: stopped by a signal\n");
    return EXIT_OK;
}

/* ---------------------------------------------------------------- recheck */

/* The answers of text: one JSON object (an answer, an ask result, a
 * transcript), or one object per line. Returns an array (caller deletes),
 * or NULL with err. */
static cJSON *saved_answers(const char *path, const char *text, char *err, size_t errlen)
{
    cJSON *whole = cJSON_ParseWithOpts(text, NULL, 1);   /* one document and nothing after it */
    cJSON *arr = cJSON_CreateArray();
    if (cJSON_IsObject(whole)) {
        /* an ask tool result as a client saved it: the structured part */
        cJSON *sc = cJSON_DetachItemFromObjectCaseSensitive(whole, "structuredContent");
        if (cJSON_IsObject(sc)) {
            cJSON_Delete(whole);
            whole = sc;
        } else {
            cJSON_Delete(sc);
        }
        cJSON_AddItemToArray(arr, whole);
        return arr;
    }
    cJSON_Delete(whole);
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        size_t i = 0;
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r')) i++;
        if (i < n) {
            cJSON *j = cJSON_ParseWithLength(p, n);
            if (!cJSON_IsObject(j)) {
                snprintf(err, errlen, "'%s' line %d is not a JSON object; give a --batch output file, an --ask "
                         "--json answer, an ask result or a transcript", path, lineno);
                cJSON_Delete(j);
                cJSON_Delete(arr);
                return NULL;
            }
            cJSON_AddItemToArray(arr, j);
        }
        p = nl ? nl + 1 : p + n;
    }
    if (!cJSON_GetArraySize(arr)) {
        snprintf(err, errlen, "'%s' holds no saved answer", path);
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

int cli_recheck(const struct drqa_opts *o)
{
    char err[2048];
    size_t len;
    char *text = read_file(o->recheck, 256u << 20, &len);
    if (!text) {
        fprintf(stderr, "drqa-tui: cannot read the saved answers '%s': %s\n", o->recheck, strerror(errno));
        return EXIT_USAGE;
    }
    cJSON *answers = saved_answers(o->recheck, text, err, sizeof err);
    free(text);
    if (!answers) {
        char *safe = text_term_safe(err);
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
        return EXIT_USAGE;
    }
    sqlite3 *db = NULL;
    char *repo = NULL;
    int irc = cli_index_ensure(o, &db, &repo, err, sizeof err);
    if (irc) {
        cJSON_Delete(answers);
        char *safe = text_term_safe(err);
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
        return irc == INDEX_EUSAGE ? EXIT_USAGE : EXIT_FAIL;
    }
    struct action_ctx ctx;
    action_ctx_init(&ctx, db, repo);
    int status = EXIT_OK, k = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, answers) {
        k++;
        struct recheck_report rep;
        if (recheck_answer(&ctx, a, &rep, err, sizeof err)) {
            char *safe = text_term_safe(err);
            fprintf(stderr, "drqa-tui: '%s' answer %d: %s\n", o->recheck, k, safe);
            free(safe);
            status = EXIT_USAGE;
            continue;
        }
        char *s;
        if (o->json) {
            cJSON *j = recheck_report_json(&rep);
            char *js = cJSON_PrintUnformatted(j);
            s = xasprintf("%s\n", js);
            free(js);
            cJSON_Delete(j);
        } else {
            char *body = recheck_report_text(&rep);
            s = rep.id ? xasprintf("answer %s\n%s\n", rep.id, body) : xasprintf("%s\n", body);
            free(body);
        }
        char *safe = o->json ? json_term_safe(s) : text_term_safe(s);
        fputs(safe, stdout);
        free(safe);
        free(s);
        recheck_report_free(&rep);
    }
    action_ctx_release(&ctx);
    sqlx_close(db);
    free(repo);
    cJSON_Delete(answers);
    if (fflush(stdout) != 0) return EXIT_FAIL;
    return status;
}
