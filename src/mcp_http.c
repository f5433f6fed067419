/*
 * mcp_http: the Streamable HTTP transport of the MCP server (see mcp_http.h
 * for what it serves and which guards it applies). This file knows HTTP and
 * sessions; what a message means is the core's (mcp.h).
 *
 * Ownership: a session (struct hsession) is held by the session table and by
 * each request running on it; the last holder frees it (and its core
 * session). A stream (struct hstream, the bytes one response is made of) is
 * held by the libmicrohttpd response that reads it and by the thread or
 * session that writes it; the last one frees it.
 */
#include <config.h>  /* autoconf */
#include "mcp_http.h"
#include "mcp.h"
#include "util.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#define MCP_PATH "/mcp"
#define BODY_MAX (4u << 20)         /* one JSON-RPC message */
#define SESSION_ID_BYTES 24
#define KEEPALIVE_MS 15000          /* an SSE comment this often keeps proxies and dead peers honest */

struct http_server;

/* The bytes of one streamed response, written by one side, read by MHD. */
struct hstream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct buf out;                 /* bytes not yet handed to MHD start at off */
    size_t off;
    int done;                       /* nothing more will be written */
    int refs;
    const struct http_server *srv;  /* for the stop flag */
};

struct hsession {
    char id[2 * SESSION_ID_BYTES + 1];
    struct mcp_session *ms;
    struct http_server *srv;
    int refs;                       /* the table's, and one per request in flight (under srv->mu) */
    int busy;                       /* requests in flight */
    int64_t last_used;              /* now_ms of the last request */
    struct hstream *get;            /* the GET stream, or NULL (under srv->mu) */
    struct hsession *next;
};

struct http_server {
    struct mcp_server *core;
    const struct mcp_http_config *cfg;
    int loopback;                   /* bound to a loopback address: Host is checked */
    pthread_mutex_t mu;
    pthread_cond_t idle;            /* signalled when inflight drops */
    struct hsession *sessions;
    int nsessions;
    int inflight;                   /* requests being handled */
    int threads;                    /* SSE request threads alive */
    atomic_int stopping;            /* read by the streams without the lock */
};

/* One HTTP request as MHD delivers it, in pieces. */
struct hreq {
    struct buf body;
    int too_large;
};

static const char *hdr(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* ---- small parsers ---- */

int mcp_http_parse_listen(const char *spec, char *host, size_t hostlen, int *port, char *err, size_t errlen)
{
    const char *p = spec, *colon;
    char h[256] = "127.0.0.1";
    if (!spec || !*spec) {
        snprintf(err, errlen, "--mcp-http takes [ADDR:]PORT, e.g. 8080 or 127.0.0.1:8080");
        return -1;
    }
    if (*spec == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof h) {
            snprintf(err, errlen, "--mcp-http '%s': write an IPv6 address as [ADDR]:PORT, e.g. [::1]:8080", spec);
            return -1;
        }
        memcpy(h, spec + 1, (size_t)(close - spec - 1));
        h[close - spec - 1] = 0;
        p = close + 2;
    } else if ((colon = strrchr(spec, ':'))) {
        if (colon == spec || (size_t)(colon - spec) >= sizeof h || memchr(spec, ':', (size_t)(colon - spec))) {
            snprintf(err, errlen, "--mcp-http '%s': expected [ADDR:]PORT, e.g. 0.0.0.0:8080 (an IPv6 address in brackets)", spec);
            return -1;
        }
        memcpy(h, spec, (size_t)(colon - spec));
        h[colon - spec] = 0;
        p = colon + 1;
    }
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || end == p || *end || v < 0 || v > 65535) {
        snprintf(err, errlen, "--mcp-http '%s': the port must be a number from 0 to 65535 (0 picks a free one)", spec);
        return -1;
    }
    if (strlen(h) >= hostlen) {
        snprintf(err, errlen, "--mcp-http '%s': the address is too long", spec);
        return -1;
    }
    strcpy(host, h);
    *port = (int)v;
    return 0;
}

/* s (n bytes) names a loopback host: localhost, 127.0.0.1 or [::1]. */
static int loopback_name(const char *s, size_t n)
{
    static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strlen(names[i]) == n && strncasecmp(s, names[i], n) == 0) return 1;
    return 0;
}

/* "host[:port]" (a Host header, or an origin after its scheme): the host's length. */
static size_t host_len(const char *s)
{
    if (*s == '[') {
        const char *close = strchr(s, ']');
        return close ? (size_t)(close - s + 1) : strlen(s);
    }
    return strcspn(s, ":/");
}

/* The rest after a host: nothing, or ":digits". */
static int port_rest_ok(const char *s)
{
    if (!*s) return 1;
    if (*s != ':' || !s[1]) return 0;
    for (s++; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

static int host_ok(const char *host)
{
    size_t n = host_len(host);
    return loopback_name(host, n) && port_rest_ok(host + n);
}

int mcp_http_origin_ok(const char *origin, const char *allowed)
{
    size_t olen = strlen(origin);
    while (olen && origin[olen - 1] == '/') olen--;
    if (allowed) {
        const char *p = allowed;
        while (*p) {
            p += strspn(p, " ,\t");
            size_t n = strcspn(p, " ,\t");
            size_t m = n;
            while (m && p[m - 1] == '/') m--;
            if (m && m == olen && strncasecmp(p, origin, m) == 0) return 1;
            p += n;
        }
    }
    const char *rest;
    if (!strncasecmp(origin, "http://", 7)) rest = origin + 7;
    else if (!strncasecmp(origin, "https://", 8)) rest = origin + 8;
    else return 0;   /* "null" (a sandboxed page or a file) included */
    size_t n = host_len(rest);
    char tail[16];
    size_t tl = (size_t)(origin + olen - (rest + n));
    if (origin + olen < rest + n || tl >= sizeof tail) return 0;
    memcpy(tail, rest + n, tl);
    tail[tl] = 0;
    return loopback_name(rest, n) && port_rest_ok(tail);
}

/* Accept lists the media type (or a wildcard covering it). No Accept
 * header accepts everything. */
static int accepts(const char *accept, const char *type)
{
    if (!accept) return 1;
    if (strstr(accept, "*/*") || strcasestr(accept, type)) return 1;
    char major[32];
    size_t n = strcspn(type, "/");
    snprintf(major, sizeof major, "%.*s/*", (int)n, type);
    return strcasestr(accept, major) != NULL;
}

static int token_ok(const char *auth, const char *token)
{
    if (!auth || strncasecmp(auth, "Bearer ", 7)) return 0;
    const char *given = auth + 7;
    while (*given == ' ') given++;
    size_t gl = strlen(given), tl = strlen(token);
    /* the same work whatever the first differing byte */
    unsigned char diff = (unsigned char)(gl != tl);
    for (size_t i = 0; i < tl; i++) diff |= (unsigned char)(token[i] ^ (i < gl ? given[i] : 0));
    return diff == 0;
}

/* ---- responses ---- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body,
                             const char *h1, const char *v1)
{
    size_t n = body ? strlen(body) : 0;
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    if (ctype && n) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (h1) MHD_add_response_header(r, h1, v1);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* An HTTP error with a JSON-RPC error body, as the spec allows; no id, since
 * MCP never allows a null one (the SDK refuses such a message). */
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, int code, const char *msg,
                                   const char *h1, const char *v1)
{
    cJSON *o = cJSON_CreateObject(), *e = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "jsonrpc", "2.0");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddItemToObject(o, "error", e);
    char *body = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    enum MHD_Result r = reply(c, status, "application/json", body, h1, v1);
    free(body);
    return r;
}

/* ---- streams ---- */

static struct hstream *stream_new(const struct http_server *srv, int refs)
{
    struct hstream *st = xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    st->refs = refs;
    st->srv = srv;
    return st;
}

static void stream_unref(struct hstream *st)
{
    if (!st) return;
    pthread_mutex_lock(&st->mu);
    int last = --st->refs == 0;
    pthread_mutex_unlock(&st->mu);
    if (!last) return;
    buf_free(&st->out);
    pthread_cond_destroy(&st->cv);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

static void stream_end(struct hstream *st)
{
    pthread_mutex_lock(&st->mu);
    st->done = 1;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

/* One message as an SSE event. A message is one line (the core prints
 * JSON unformatted); a newline in it would still be split into data lines. */
static void stream_send_sse(void *ctx, const char *json)
{
    struct hstream *st = ctx;
    pthread_mutex_lock(&st->mu);
    if (!st->done) {
        buf_adds(&st->out, "event: message\n");
        for (const char *p = json;;) {
            size_t n = strcspn(p, "\r\n");
            buf_adds(&st->out, "data: ");
            buf_add(&st->out, p, n);
            buf_addc(&st->out, '\n');
            p += n;
            if (!*p) break;
            p += (*p == '\r' && p[1] == '\n') ? 2 : 1;
        }
        buf_addc(&st->out, '\n');
        pthread_cond_broadcast(&st->cv);
    }
    pthread_mutex_unlock(&st->mu);
}

/* MHD's reader: waits for bytes, or the end, or the server stopping. */
static ssize_t stream_read(void *cls, uint64_t pos, char *dst, size_t max)
{
    struct hstream *st = cls;
    (void)pos;
    ssize_t n = 0;
    int64_t waited = 0;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        size_t avail = st->out.len - st->off;
        if (avail) {
            n = (ssize_t)(avail < max ? avail : max);
            memcpy(dst, st->out.data + st->off, (size_t)n);
            st->off += (size_t)n;
            if (st->off == st->out.len) { buf_reset(&st->out); st->off = 0; }
            break;
        }
        if (st->done || st->srv->stopping) { n = MHD_CONTENT_READER_END_OF_STREAM; break; }
        if (waited >= KEEPALIVE_MS) {
            static const char ka[] = ": keepalive\n\n";
            if (max < sizeof ka - 1) { n = 0; break; }
            memcpy(dst, ka, sizeof ka - 1);
            n = (ssize_t)(sizeof ka - 1);
            break;
        }
        /* a short wait, so that a stop is seen without a wake-up of its own */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&st->cv, &st->mu, &ts);
        waited += 1000;
    }
    pthread_mutex_unlock(&st->mu);
    return n;
}

static void stream_release(void *cls)
{
    struct hstream *st = cls;
    stream_end(st);   /* the peer is gone: writes are dropped from now on */
    stream_unref(st);
}

static struct MHD_Response *stream_response(struct hstream *st)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, st, stream_release);
    if (!r) return NULL;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return r;
}

/* ---- sessions ---- */

static void session_default_send(void *ctx, const char *json)
{
    struct hsession *hs = ctx;
    struct http_server *srv = hs->srv;
    pthread_mutex_lock(&srv->mu);
    struct hstream *st = hs->get;
    if (st) { pthread_mutex_lock(&st->mu); st->refs++; pthread_mutex_unlock(&st->mu); }
    pthread_mutex_unlock(&srv->mu);
    if (!st) return;   /* no GET stream open: such messages have nowhere to go */
    stream_send_sse(st, json);
    stream_unref(st);
}

static struct hsession *session_new(struct http_server *srv, char *err, size_t errlen)
{
    unsigned char rnd[SESSION_ID_BYTES];
    size_t got = 0;
    while (got < sizeof rnd) {
        ssize_t k = getrandom(rnd + got, sizeof rnd - got, 0);
        if (k < 0) {
            if (errno == EINTR) continue;
            snprintf(err, errlen, "no random bytes for a session id: %s", strerror(errno));
            return NULL;
        }
        got += (size_t)k;
    }
    struct hsession *hs = xcalloc(1, sizeof *hs);
    for (size_t i = 0; i < sizeof rnd; i++) snprintf(hs->id + 2 * i, 3, "%02x", rnd[i]);
    hs->srv = srv;
    hs->ms = mcp_session_new(srv->core);
    hs->refs = 1;
    hs->last_used = now_ms();
    mcp_session_set_default_send(hs->ms, session_default_send, hs);
    return hs;
}

/* Called with srv->mu held; frees when the last holder lets go. */
static int session_unref_locked(struct hsession *hs)
{
    return --hs->refs == 0;
}

static void session_free(struct hsession *hs)
{
    if (!hs) return;
    mcp_session_free(hs->ms);
    stream_unref(hs->get);
    free(hs);
}

static void session_unref(struct http_server *srv, struct hsession *hs)
{
    pthread_mutex_lock(&srv->mu);
    int last = session_unref_locked(hs);
    pthread_mutex_unlock(&srv->mu);
    if (last) session_free(hs);
}

/* Takes hs out of the table (srv->mu held): later requests naming it get
 * 404. Its GET stream ends. Returns 1 when the caller must free it. */
static int session_end_locked(struct http_server *srv, struct hsession *hs)
{
    for (struct hsession **pp = &srv->sessions; *pp; pp = &(*pp)->next)
        if (*pp == hs) { *pp = hs->next; srv->nsessions--; break; }
    if (hs->get) stream_end(hs->get);
    return session_unref_locked(hs);
}

/* The session named id, held for a request, or NULL. */
static struct hsession *session_get(struct http_server *srv, const char *id)
{
    pthread_mutex_lock(&srv->mu);
    struct hsession *hs = srv->sessions;
    while (hs && strcmp(hs->id, id)) hs = hs->next;
    if (hs) { hs->refs++; hs->last_used = now_ms(); }
    pthread_mutex_unlock(&srv->mu);
    return hs;
}

/* Puts hs in the table; when it is full, the least recently used session
 * with no request in flight is ended first. Returns -1 when all are busy. */
static int session_add(struct http_server *srv, struct hsession *hs)
{
    int max = srv->cfg->max_sessions > 0 ? srv->cfg->max_sessions : 256;
    struct hsession *victim = NULL;
    int free_victim = 0;
    pthread_mutex_lock(&srv->mu);
    if (srv->nsessions >= max) {
        for (struct hsession *x = srv->sessions; x; x = x->next)
            if (!x->busy && (!victim || x->last_used < victim->last_used)) victim = x;
        if (!victim) { pthread_mutex_unlock(&srv->mu); return -1; }
        free_victim = session_end_locked(srv, victim);
    }
    hs->next = srv->sessions;
    srv->sessions = hs;
    srv->nsessions++;
    pthread_mutex_unlock(&srv->mu);
    if (free_victim) session_free(victim);
    return 0;
}

/* ---- requests ---- */

/* A slot for one request; 0 when the server is at its limit or stopping. */
static int request_begin(struct http_server *srv, struct hsession *hs)
{
    int max = srv->cfg->max_requests > 0 ? srv->cfg->max_requests : 16;
    pthread_mutex_lock(&srv->mu);
    int ok = !srv->stopping && srv->inflight < max;
    if (ok) {
        srv->inflight++;
        if (hs) hs->busy++;
    }
    pthread_mutex_unlock(&srv->mu);
    return ok;
}

static void request_end(struct http_server *srv, struct hsession *hs)
{
    pthread_mutex_lock(&srv->mu);
    srv->inflight--;
    if (hs) hs->busy--;
    pthread_cond_broadcast(&srv->idle);
    pthread_mutex_unlock(&srv->mu);
}

/* What the core sends while a request is answered with JSON: the response
 * is kept; notifications go to the session's GET stream when one is open
 * (a JSON response has room for one message only). */
struct json_sink {
    struct hsession *hs;
    char *response;
};

static int is_notification(const char *json)
{
    cJSON *m = cJSON_Parse(json);
    int r = m && cJSON_GetObjectItemCaseSensitive(m, "method") && !cJSON_GetObjectItemCaseSensitive(m, "id");
    cJSON_Delete(m);
    return r;
}

static void json_sink_send(void *ctx, const char *json)
{
    struct json_sink *js = ctx;
    if (is_notification(json)) {
        if (js->hs) session_default_send(js->hs, json);
        return;
    }
    free(js->response);
    js->response = xstrdup(json);
}

struct sse_job {
    struct http_server *srv;
    struct hsession *hs;
    struct hstream *st;
    char *msg;
    size_t len;
};

static void *sse_job_run(void *arg)
{
    struct sse_job *j = arg;
    mcp_handle(j->hs->ms, j->msg, j->len, stream_send_sse, j->st);
    /* the slot is free before the client sees the stream end, so that its
     * next request finds it free */
    request_end(j->srv, j->hs);
    stream_end(j->st);
    stream_unref(j->st);
    session_unref(j->srv, j->hs);
    pthread_mutex_lock(&j->srv->mu);
    j->srv->threads--;
    pthread_cond_broadcast(&j->srv->idle);
    pthread_mutex_unlock(&j->srv->mu);
    free(j->msg);
    free(j);
    return NULL;
}

/* The message's method when it is a request, notification: the classification
 * the transport needs before the core sees it. */
struct msg_kind {
    int parsed, is_array, is_request;
    char method[64];
};

static void classify(const char *body, size_t len, struct msg_kind *k)
{
    memset(k, 0, sizeof *k);
    cJSON *m = cJSON_ParseWithLength(body, len);
    if (!m) return;
    k->parsed = 1;
    k->is_array = cJSON_IsArray(m);
    const cJSON *meth = cJSON_GetObjectItemCaseSensitive(m, "method");
    if (cJSON_IsString(meth)) snprintf(k->method, sizeof k->method, "%s", meth->valuestring);
    cJSON_Delete(m);
    k->is_request = mcp_is_request(body, len);
}

static enum MHD_Result post_initialize(struct http_server *srv, struct MHD_Connection *c, const char *body, size_t len)
{
    char err[256];
    struct hsession *hs = session_new(srv, err, sizeof err);
    if (!hs) return reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, -32603, err, NULL, NULL);
    if (!request_begin(srv, NULL)) {
        session_free(hs);
        return reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "the server is busy or stopping; try again",
                           MHD_HTTP_HEADER_RETRY_AFTER, "1");
    }
    struct json_sink js = {NULL, NULL};
    mcp_handle(hs->ms, body, len, json_sink_send, &js);
    request_end(srv, NULL);
    enum MHD_Result r;
    cJSON *resp = js.response ? cJSON_Parse(js.response) : NULL;
    if (resp && cJSON_GetObjectItemCaseSensitive(resp, "result")) {
        if (session_add(srv, hs)) {
            session_free(hs);
            r = reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                            "every session is busy; try again when a request has finished",
                            MHD_HTTP_HEADER_RETRY_AFTER, "1");
        } else {
            if (!srv->cfg->quiet) log_msg("mcp-http: session %.8s... started", hs->id);
            r = reply(c, MHD_HTTP_OK, "application/json", js.response, "Mcp-Session-Id", hs->id);
        }
    } else {
        session_free(hs);
        r = js.response ? reply(c, MHD_HTTP_OK, "application/json", js.response, NULL, NULL)
                        : reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "the server is stopping", NULL, NULL);
    }
    cJSON_Delete(resp);
    free(js.response);
    return r;
}

/* The session a request names: NULL after a 400 or 404 was queued (*r). */
static struct hsession *need_session(struct http_server *srv, struct MHD_Connection *c, enum MHD_Result *r)
{
    const char *id = hdr(c, "Mcp-Session-Id");
    if (!id || !*id) {
        *r = reply_error(c, MHD_HTTP_BAD_REQUEST, -32000,
                         "no Mcp-Session-Id header: send initialize first, then its session id with every request",
                         NULL, NULL);
        return NULL;
    }
    struct hsession *hs = session_get(srv, id);
    if (!hs) *r = reply_error(c, MHD_HTTP_NOT_FOUND, -32001, "this session is unknown or has ended; initialize a new one",
                              NULL, NULL);
    return hs;
}

static enum MHD_Result handle_post(struct http_server *srv, struct MHD_Connection *c, struct hreq *rq)
{
    const char *ctype = hdr(c, MHD_HTTP_HEADER_CONTENT_TYPE), *accept = hdr(c, MHD_HTTP_HEADER_ACCEPT);
    if (!ctype || !strcasestr(ctype, "application/json"))
        return reply_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32700,
                           "POST a JSON-RPC message with Content-Type: application/json", NULL, NULL);
    int want_json = accepts(accept, "application/json"), want_sse = accepts(accept, "text/event-stream");
    if (!want_json && !want_sse)
        return reply_error(c, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                           "the Accept header must list application/json and text/event-stream", NULL, NULL);
    if (rq->too_large)
        return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, -32600, "the message is over 4 MiB", NULL, NULL);
    const char *body = rq->body.data ? rq->body.data : "";
    size_t len = rq->body.len;
    struct msg_kind k;
    classify(body, len, &k);
    if (!k.parsed)
        return reply_error(c, MHD_HTTP_BAD_REQUEST, -32700, "parse error: the body is not JSON", NULL, NULL);
    if (k.is_request && !strcmp(k.method, "initialize")) return post_initialize(srv, c, body, len);

    enum MHD_Result r;
    struct hsession *hs = need_session(srv, c, &r);
    if (!hs) return r;
    /* a batch, taken at 2025-03-26 only: its responses as one JSON array
     * (mcp_handle), on the JSON path below */
    if (k.is_array && !mcp_session_takes_batches(hs->ms)) {
        session_unref(srv, hs);
        return reply_error(c, MHD_HTTP_BAD_REQUEST, -32600,
                           "JSON-RPC batches are taken only at protocol version 2025-03-26 (later versions removed "
                           "them); send one message per POST", NULL, NULL);
    }
    if (!k.is_request && !k.is_array) {
        /* a notification or a response: applied at once, nothing to answer */
        struct json_sink js = {hs, NULL};
        int rc = mcp_handle(hs->ms, body, len, json_sink_send, &js);
        session_unref(srv, hs);
        if (rc && js.response) r = reply(c, MHD_HTTP_BAD_REQUEST, "application/json", js.response, NULL, NULL);
        else r = reply(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
        free(js.response);
        return r;
    }
    if (!request_begin(srv, hs)) {
        session_unref(srv, hs);
        return reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                           srv->stopping ? "the server is stopping" : "too many requests at once; try again",
                           MHD_HTTP_HEADER_RETRY_AFTER, "1");
    }
    /* SSE for a call that may run long and send progress on the way; JSON
     * for the quick ones, and whenever the client takes only JSON */
    int sse = !k.is_array && want_sse && (!want_json || !strcmp(k.method, "tools/call"));
    if (!sse) {
        struct json_sink js = {hs, NULL};
        mcp_handle(hs->ms, body, len, json_sink_send, &js);
        request_end(srv, hs);
        session_unref(srv, hs);
        r = js.response ? reply(c, MHD_HTTP_OK, "application/json", js.response, NULL, NULL)
                        /* cancelled, the server stops, a batch of notifications: no response is due */
                        : reply(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
        free(js.response);
        return r;
    }
    struct sse_job *j = xcalloc(1, sizeof *j);
    j->srv = srv;
    j->hs = hs;
    j->st = stream_new(srv, 2);   /* the job's and the response's */
    j->msg = xstrndup(body, len);
    j->len = len;
    struct MHD_Response *resp = stream_response(j->st);
    pthread_attr_t at;
    pthread_t t;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&srv->mu);
    srv->threads++;
    pthread_mutex_unlock(&srv->mu);
    if (!resp || pthread_create(&t, &at, sse_job_run, j)) {
        pthread_attr_destroy(&at);
        pthread_mutex_lock(&srv->mu);
        srv->threads--;
        pthread_mutex_unlock(&srv->mu);
        if (resp) MHD_destroy_response(resp);   /* releases the response's hold */
        else stream_unref(j->st);
        stream_unref(j->st);
        request_end(srv, hs);
        session_unref(srv, hs);
        free(j->msg);
        free(j);
        return reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, -32603, "cannot start a thread for the request", NULL, NULL);
    }
    pthread_attr_destroy(&at);
    r = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result handle_get(struct http_server *srv, struct MHD_Connection *c)
{
    if (!accepts(hdr(c, MHD_HTTP_HEADER_ACCEPT), "text/event-stream"))
        return reply_error(c, MHD_HTTP_NOT_ACCEPTABLE, -32000, "GET opens an event stream: Accept: text/event-stream",
                           NULL, NULL);
    enum MHD_Result r;
    struct hsession *hs = need_session(srv, c, &r);
    if (!hs) return r;
    struct hstream *st = stream_new(srv, 2), *old;   /* the session's and the response's */
    struct MHD_Response *resp = stream_response(st);
    if (!resp) {
        stream_unref(st);
        stream_unref(st);
        session_unref(srv, hs);
        return MHD_NO;
    }
    /* one GET stream per session: a new one replaces the old, which ends */
    pthread_mutex_lock(&srv->mu);
    old = hs->get;
    hs->get = st;
    pthread_mutex_unlock(&srv->mu);
    if (old) { stream_end(old); stream_unref(old); }
    r = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    session_unref(srv, hs);
    return r;
}

static enum MHD_Result handle_delete(struct http_server *srv, struct MHD_Connection *c)
{
    enum MHD_Result r;
    struct hsession *hs = need_session(srv, c, &r);
    if (!hs) return r;
    /* what the session still runs is the ended session's: cancelled, as a
     * client that deletes its session on exit expects (an ask's model
     * requests would otherwise go on, its stream open) */
    mcp_session_cancel_all(hs->ms);
    pthread_mutex_lock(&srv->mu);
    int last = session_end_locked(srv, hs);   /* the table's hold */
    last = session_unref_locked(hs) || last;  /* ours */
    pthread_mutex_unlock(&srv->mu);
    if (!srv->cfg->quiet) log_msg("mcp-http: session %.8s... ended by the client", hs->id);
    if (last) session_free(hs);
    return reply(c, MHD_HTTP_OK, NULL, NULL, NULL, NULL);
}

/* The MCP-Protocol-Version header, when given, must be one the core speaks. */
static int version_ok(const char *v)
{
    if (!v) return 1;   /* the spec: assume 2025-03-26 */
    const char *n = mcp_negotiate_version(v);
    return n && !strcmp(n, v);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    struct http_server *srv = cls;
    struct hreq *rq = *con_cls;
    (void)version;
    if (!rq) {
        rq = xcalloc(1, sizeof *rq);
        rq->body.max = BODY_MAX;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->too_large && buf_add(&rq->body, upload, *upload_size)) { rq->too_large = 1; buf_free(&rq->body); }
        *upload_size = 0;
        return MHD_YES;
    }
    /* the whole request is in: the guards first, in the order that says the most */
    if (strcmp(url, MCP_PATH))
        return reply_error(c, MHD_HTTP_NOT_FOUND, -32000, "not found: the MCP endpoint is " MCP_PATH, NULL, NULL);
    const char *host = hdr(c, MHD_HTTP_HEADER_HOST), *origin = hdr(c, MHD_HTTP_HEADER_ORIGIN);
    if (srv->loopback && (!host || !host_ok(host)))
        return reply_error(c, MHD_HTTP_FORBIDDEN, -32000,
                           "forbidden: the Host header must name localhost, 127.0.0.1 or [::1] on a loopback server",
                           NULL, NULL);
    if (origin && !mcp_http_origin_ok(origin, srv->cfg->allowed_origins))
        return reply_error(c, MHD_HTTP_FORBIDDEN, -32000,
                           "forbidden: this Origin may not call the server (add it to mcp_allowed_origins in the config file)",
                           NULL, NULL);
    if (srv->cfg->token && !token_ok(hdr(c, MHD_HTTP_HEADER_AUTHORIZATION), srv->cfg->token)) {
        int given = hdr(c, MHD_HTTP_HEADER_AUTHORIZATION) != NULL;
        return reply_error(c, MHD_HTTP_UNAUTHORIZED, -32000,
                           given ? "unauthorized: the bearer token is not the one configured (mcp_token)"
                                 : "unauthorized: send Authorization: Bearer TOKEN (mcp_token in the server's config file)",
                           MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                           given ? "Bearer realm=\"drqa-tui\", error=\"invalid_token\"" : "Bearer realm=\"drqa-tui\"");
    }
    if (!strcmp(method, "POST") || !strcmp(method, "GET") || !strcmp(method, "DELETE")) {
        if (!version_ok(hdr(c, "MCP-Protocol-Version")))
            return reply_error(c, MHD_HTTP_BAD_REQUEST, -32000,
                               "unsupported MCP-Protocol-Version; this server speaks 2025-11-25, 2025-06-18 and 2025-03-26",
                               NULL, NULL);
    }
    if (!strcmp(method, "POST")) return handle_post(srv, c, rq);
    if (!strcmp(method, "GET")) return handle_get(srv, c);
    if (!strcmp(method, "DELETE")) return handle_delete(srv, c);
    return reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "the MCP endpoint takes POST, GET and DELETE",
                       MHD_HTTP_HEADER_ALLOW, "GET, POST, DELETE");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct hreq *rq = *con_cls;
    (void)cls; (void)c; (void)toe;
    if (!rq) return;
    buf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    const struct http_server *srv = cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n') line[--n] = 0;
    log_msg("mcp-http: %s", line);
    if (!srv->cfg->quiet) fprintf(stderr, "drqa-tui: http: %s\n", line);
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

int mcp_http_serve(struct mcp_server *s, const struct mcp_http_config *cfg, char *err, size_t errlen)
{
    char host[256];
    int port;
    if (mcp_http_parse_listen(cfg->listen, host, sizeof host, &port, err, errlen)) return -1;
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    char portstr[8];
    snprintf(portstr, sizeof portstr, "%d", port);
    int gai = getaddrinfo(host, portstr, &hints, &ai);
    if (gai) {
        snprintf(err, errlen, "--mcp-http: cannot resolve the address '%s': %s", host, gai_strerror(gai));
        return -1;
    }
    struct http_server srv = {0};
    srv.core = s;
    srv.cfg = cfg;
    srv.loopback = is_loopback(ai->ai_addr);
    pthread_mutex_init(&srv.mu, NULL);
    pthread_cond_init(&srv.idle, NULL);
    int conns = cfg->max_connections > 0 ? cfg->max_connections : 64;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, &srv,
                                            MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, &srv,
                                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)conns,
                                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)conns,
                                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) {
        snprintf(err, errlen, "--mcp-http: cannot listen on %s port %d (%s); is the port in use? pick another with "
                 "--mcp-http ADDR:PORT", host, port, strerror(errno ? errno : EADDRINUSE));
        pthread_cond_destroy(&srv.idle);
        pthread_mutex_destroy(&srv.mu);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    int bound = info ? info->port : port;
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr, "drqa-tui: listening on http://%s%s%s:%d%s\n", v6 ? "[" : "", host, v6 ? "]" : "", bound, MCP_PATH);
    log_msg("mcp-http: listening on %s port %d%s", host, bound, cfg->token ? ", bearer token required" : "");

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int sig = 0;
    while (sigwait(&set, &sig)) {}
    if (!cfg->quiet)
        fprintf(stderr, "drqa-tui: %s: stopping\n", sig == SIGINT ? "interrupted" : sig == SIGHUP ? "hung up" : "terminated");
    log_msg("mcp-http: signal %d, stopping", sig);

    /* no new work; the core cancels what runs; the streams see the flag */
    pthread_mutex_lock(&srv.mu);
    srv.stopping = 1;
    pthread_mutex_unlock(&srv.mu);
    mcp_server_shutdown(s);
    pthread_mutex_lock(&srv.mu);
    while (srv.inflight || srv.threads) pthread_cond_wait(&srv.idle, &srv.mu);
    for (struct hsession *hs = srv.sessions; hs; hs = hs->next)
        if (hs->get) stream_end(hs->get);
    pthread_mutex_unlock(&srv.mu);
    MHD_stop_daemon(d);   /* joins the connection threads, which release their streams */
    while (srv.sessions) {
        struct hsession *hs = srv.sessions;
        srv.sessions = hs->next;
        if (session_unref_locked(hs)) session_free(hs);
    }
    pthread_cond_destroy(&srv.idle);
    pthread_mutex_destroy(&srv.mu);
    return 0;
}
