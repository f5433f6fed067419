/*
 * mcp_http: the MCP server's Streamable HTTP transport (MCP "Transports",
 * 2025-11-25; 2025-06-18 and 2025-03-26 clients are served too), on
 * libmicrohttpd. One endpoint, /mcp:
 *   POST    one JSON-RPC message. A request is answered with
 *           application/json, or with a text/event-stream (SSE) that carries
 *           the request's progress and log notifications and then its
 *           response, when the client accepts it and the call may take long
 *           (tools/call). A notification or a client's response: 202, no body.
 *   GET     an SSE stream for the session's messages that belong to no
 *           request (log notifications from background indexing).
 *   DELETE  ends the session.
 * Sessions: initialize's response carries a new Mcp-Session-Id (random,
 * 192 bits, hex); later requests must send it (400 without, 404 for one
 * that is unknown or ended). An MCP-Protocol-Version header the core does
 * not speak is a 400.
 *
 * Guards, checked before anything else: an Origin header that is not a
 * loopback origin (http[s]://localhost, 127.0.0.1 or [::1], any port) nor
 * one of the configured origins is a 403, so that a web page cannot drive
 * the server through DNS rebinding; when bound to a loopback address the
 * Host header must name a loopback host too (403 otherwise). With a token
 * configured, every request must carry `Authorization: Bearer TOKEN` (401
 * with WWW-Authenticate otherwise); the token is never logged or echoed.
 *
 * Threads: libmicrohttpd runs one thread per connection (bounded by
 * max_connections); a request answered with SSE runs mcp_handle on a thread
 * of its own while the connection's thread streams what it sends. At most
 * max_requests requests run at once; one more is answered 503.
 */
#ifndef DRQA_MCP_HTTP_H
#define DRQA_MCP_HTTP_H

#include <stddef.h>

struct mcp_server;

struct mcp_http_config {
    const char *listen;           /* "[ADDR:]PORT"; ADDR defaults to 127.0.0.1; PORT 0 picks a free one */
    const char *token;            /* bearer token, or NULL for none */
    const char *allowed_origins;  /* more origins to accept, separated by spaces or commas, or NULL */
    int max_requests;             /* requests handled at once (0: 16) */
    int max_connections;          /* open connections (0: 64) */
    int max_sessions;             /* live sessions (0: 256); the least recently used idle one goes first */
    int quiet;                    /* only errors on stderr */
};

/* Splits "[ADDR:]PORT" ("8080", "0.0.0.0:8080", "[::1]:8080",
 * "localhost:8080") into host (default 127.0.0.1) and port. Returns 0, or -1
 * with err saying what is wrong. */
int mcp_http_parse_listen(const char *spec, char *host, size_t hostlen, int *port, char *err, size_t errlen);

/* 1 when the Origin header value origin may call the server: a loopback
 * origin, or one listed in allowed (see mcp_http_config). */
int mcp_http_origin_ok(const char *origin, const char *allowed);

/* Serves s until SIGTERM, SIGINT or SIGHUP, which the caller has blocked
 * in every thread (before mcp_server_new starts any). Prints the URL it
 * listens on to stderr ("listening on http://HOST:PORT/mcp") once it
 * accepts connections. On a signal: stops taking requests, calls
 * mcp_server_shutdown, waits for the requests in flight, ends the streams
 * and frees the sessions; the caller frees s. Returns 0, or -1 with err
 * when the server could not start. */
int mcp_http_serve(struct mcp_server *s, const struct mcp_http_config *c, char *err, size_t errlen);

#endif
