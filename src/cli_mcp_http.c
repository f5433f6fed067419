/*
 * cli_mcp_http: the --mcp-http mode. Reads the config file for the bearer
 * token, the extra allowed origins and the limits (llm_config.h: mcp_token,
 * mcp_allowed_origins, mcp_max_requests, mcp_max_sessions), starts the MCP core on the repository and serves it
 * over Streamable HTTP (mcp_http.h) until SIGTERM, SIGINT or SIGHUP.
 */
#include <config.h>  /* autoconf */
#include "cli.h"
#include "cli_settings.h"
#include "llm_config.h"
#include "mcp.h"
#include "mcp_http.h"
#include "util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int cli_mcp_http(const struct drqa_opts *o)
{
    char err[1024], host[256];
    int port, rc = EXIT_FAIL;
    if (mcp_http_parse_listen(o->mcp_http, host, sizeof host, &port, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return EXIT_USAGE;
    }
    struct drqa_config cfg;
    if (cli_config_load(&cfg, o, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        config_free(&cfg);
        return EXIT_USAGE;
    }
    /* the signals that stop the server are taken by sigwait in
     * mcp_http_serve: blocked here, before any thread starts, so that every
     * thread inherits the mask and none dies of them */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);   /* a client gone mid-stream is a failed write, not a dead server */

    struct mcp_server_config sc = {0};
    struct engine_settings es;
    cli_engine_settings(&es, o);
    sc.engine = &es;
    sc.quiet = o->quiet;
    struct mcp_server *s = mcp_server_new(&sc, err, sizeof err);
    if (!s) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        config_free(&cfg);
        return EXIT_FAIL;
    }
    struct mcp_http_config hc = {0};
    hc.listen = o->mcp_http;
    hc.token = cfg.mcp_token;
    hc.allowed_origins = cfg.mcp_allowed_origins;
    hc.max_requests = cfg.mcp_max_requests;
    hc.max_sessions = cfg.mcp_max_sessions;
    hc.quiet = o->quiet;
    if (mcp_http_serve(s, &hc, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        mcp_server_shutdown(s);
    } else {
        rc = EXIT_OK;
    }
    mcp_server_free(s);
    config_free(&cfg);
    return rc;
}
