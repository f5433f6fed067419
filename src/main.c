/*
 * main: parses options and hands over to the mode's function (cli.h).
 */
#include <config.h>  /* autoconf */
#include "cli.h"
#include "cli_opts.h"
#include "util.h"

#include <locale.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    struct drqa_opts o;
    char err[1024];
    /* No fastbins: a parse makes and frees millions of small syntax tree
     * nodes, and glibc's fastbins hold them only to merge them all again
     * (malloc_consolidate) whenever a large block is asked for or freed,
     * which a parse does all the time. Without them the freed nodes go
     * straight back to the bins, and tcache still serves the hot sizes. On
     * sympy's first answer (fresh index + one question, 8 alternating pairs
     * on a loaded two-core machine) it was faster in 7 pairs of 8, median
     * 8.35 against 8.97 s, with the same peak RSS; tree-sitter alone
     * (bench/tsparse.c, two threads) 6.1-8.2 against 6.7-10.0 s of CPU. */
    mallopt(M_MXFAST, 0);
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
    int rc = EXIT_FAIL;
    switch (o.run) {
    case RUN_HELP: opts_usage(stdout); rc = EXIT_OK; break;
    case RUN_VERSION: printf("drqa-tui %s\n", PACKAGE_VERSION); rc = EXIT_OK; break;
    case RUN_INDEX_ONLY: rc = cli_index_only(&o); break;
    case RUN_ACTION: rc = cli_action(&o); break;
    case RUN_ASK: rc = cli_ask(&o); break;
    case RUN_BATCH: rc = cli_batch(&o); break;
    case RUN_JUDGE: rc = cli_judge(&o); break;
    case RUN_REPORT: rc = cli_report(&o); break;
    case RUN_SHOW_PROFILE: rc = cli_show_profile(&o); break;
    case RUN_MCP: rc = cli_mcp(&o); break;
    case RUN_RECHECK: rc = cli_recheck(&o); break;
    case RUN_MCP_HTTP: rc = cli_mcp_http(&o); break;
    case RUN_REPLAY:
    case RUN_TUI: rc = ui_run(&o); break;
    }
    /* what a mode printed is only written once stdout is closed */
    return cli_stdout_close(rc);
}
