/*
 * mcp: the Model Context Protocol server core, independent of the transport.
 * A transport (stdio: cli_mcp.c; Streamable HTTP) reads JSON-RPC messages
 * and hands each one to mcp_handle with a function that sends a reply; the
 * core answers initialize, ping, tools/list, tools/call and logging/setLevel.
 *
 * Tools: one per action of the registry (action.h) that can run, named in
 * snake_case (FindClass -> find_class), its inputSchema made from the
 * action's argument table, a description for a model, an outputSchema, and
 * read-only annotations; plus `ask` (the search --ask runs, built by
 * engine.c, with progress and cancellation) and `recheck` (which citations
 * of a saved answer still hold, recheck.h). A new action becomes a tool with
 * no edit here. Results are bounded: the text a model sees is cut at the
 * action's token budget with a line saying how to read the rest, and the
 * structured spans and items are capped with a "more" count.
 *
 * Freshness: the index is built on a thread of its own when the server
 * starts; a tool call made before it is ready waits (sending progress when
 * the call carries a progressToken). Before each call the index is brought up
 * to date when files changed (engine_shared_refresh: one update at a time;
 * a reader never sees a half-written index).
 *
 * Threads: mcp_handle may be called from several threads at once, also on
 * one session; tool calls beyond MCP_MAX_CALLS wait for a free slot (each
 * slot owns an engine: a connection and a policy). send may be called from
 * the thread running mcp_handle or, for messages that belong to no request,
 * from the indexing thread (the session's default sink): the transport
 * makes each send whole (one message at a time on its stream).
 */
#ifndef DRQA_MCP_H
#define DRQA_MCP_H

#include <stddef.h>

struct engine_settings;

#define MCP_PROTOCOL_LATEST "2025-11-25"
#define MCP_MAX_CALLS 4          /* tool calls running at once, by default */

struct mcp_server_config {
    /* The repository, index, policy and search settings, as --ask runs
     * with them. Copied; the strings it points to must outlive the server. */
    const struct engine_settings *engine;
    int max_calls;               /* 0: MCP_MAX_CALLS */
    int quiet;                   /* nothing on stderr but errors */
};

struct mcp_server;   /* one per process: the repository, its index and freshness, the engine */
struct mcp_session;  /* one per client: negotiated protocol version, log level, in-flight requests */

/* One complete JSON-RPC message (no newline). */
typedef void (*mcp_send_fn)(void *ctx, const char *json);

/* Checks the configuration (the repository exists, the mode is known),
 * starts indexing in the background and returns. NULL with err on failure. */
struct mcp_server *mcp_server_new(const struct mcp_server_config *cfg, char *err, size_t errlen);
/* Stops what runs: the indexing, and every request in flight, which then
 * returns without a response. mcp_handle calls made after it answer at once
 * with an error. The transport calls it on EOF or a signal, waits for its
 * mcp_handle calls to return, then frees sessions and the server. */
void mcp_server_shutdown(struct mcp_server *s);
/* Joins the indexing thread (after mcp_server_shutdown when not done) and
 * frees everything. Sessions must be freed first. Accepts NULL. */
void mcp_server_free(struct mcp_server *s);

struct mcp_session *mcp_session_new(struct mcp_server *s);
void mcp_session_free(struct mcp_session *ss);   /* no mcp_handle may run on it; accepts NULL */
/* The session is ended by its client (HTTP DELETE): every request in flight
 * on it, and any that starts later, is cancelled as notifications/cancelled
 * cancels one (no response; a model request aborted). Accepts NULL. */
void mcp_session_cancel_all(struct mcp_session *ss);
/* Optional sink for messages that belong to no request (log notifications
 * from background indexing). */
void mcp_session_set_default_send(struct mcp_session *ss, mcp_send_fn send, void *ctx);

/* Handles one incoming JSON-RPC message text. For a request: blocks until
 * its response has been sent through send(ctx, ...), sending any progress /
 * log notifications for it first; returns 1. A request cancelled by
 * notifications/cancelled (or by mcp_server_shutdown) while it runs sends no
 * response, as the protocol says, and returns 2. For a notification or a
 * client response: applies it (notifications/cancelled cancels the named
 * in-flight request of this session) and returns 0 without sending. A parse
 * error or an invalid request sends the JSON-RPC error response and returns 1
 * (without an id when it is unknown: the MCP schema has the id optional and
 * never null, and the official SDK refuses "id": null). Safe to call from several threads at once on one
 * session. */
int mcp_handle(struct mcp_session *ss, const char *msg, size_t len, mcp_send_fn send, void *ctx);

/* 1 when msg (a whole message) is a request: an object with a method and an
 * id. A transport uses it to run requests on threads of their own and apply
 * notifications in order, at once. */
int mcp_is_request(const char *msg, size_t len);
/* 1 when the session's protocol version takes JSON-RPC batches (2025-03-26;
 * later versions removed them): mcp_handle answers a batch with one array. */
int mcp_session_takes_batches(struct mcp_session *ss);

/* The protocol version answered to a client asking for requested (NULL:
 * none given): the same when supported, else MCP_PROTOCOL_LATEST. */
const char *mcp_negotiate_version(const char *requested);

#endif
