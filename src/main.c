/*
 * main: parses options and hands over to the mode's function (cli.h).
 */
#include <config.h>  /* autoconf */
#include "cli.h"
#include "opts.h"
#include "util.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    struct drqa_opts o;
    char err[1024];
    setlocale(LC_ALL, "");
    opts_defaults(&o);
    if (opts_parse(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return EXIT_USAGE;
    }
    if (o.log_file && log_open(o.log_file)) {
        fprintf(stderr, "drqa-tui: cannot write the log file '%s'\n", o.log_file);
        return EXIT_USAGE;
    }
    switch (o.run) {
    case RUN_HELP: opts_usage(stdout); return EXIT_OK;
    case RUN_VERSION: printf("drqa-tui %s\n", PACKAGE_VERSION); return EXIT_OK;
    case RUN_INDEX_ONLY: return cli_index_only(&o);
    case RUN_ACTION: return cli_action(&o);
    case RUN_ASK: return cli_ask(&o);
    case RUN_BATCH: return cli_batch(&o);
    case RUN_JUDGE: return cli_judge(&o);
    case RUN_REPORT: return cli_report(&o);
    case RUN_SHOW_PROFILE: return cli_show_profile(&o);
    case RUN_MCP: return cli_mcp(&o);
    case RUN_RECHECK: return cli_recheck(&o);
    case RUN_MCP_HTTP: return cli_mcp_http(&o);
    case RUN_REPLAY:
    case RUN_TUI: return ui_run(&o);
    }
    return EXIT_FAIL;
}
