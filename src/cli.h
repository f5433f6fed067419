/*
 * cli: the program's modes, one function each, called by main() after option
 * parsing. Each returns the process exit status: 0 success, 1 the work failed
 * (message on stderr), 2 bad usage or input (message on stderr); --ask and
 * --batch under --policy llm also 3 and 4 (below).
 */
#ifndef DRQA_CLI_H
#define DRQA_CLI_H

#include "cli_opts.h"

#include <cjson/cJSON.h>
#include <stddef.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2,
       EXIT_NO_MODEL = 3,   /* --policy llm: no model call of the run succeeded; stderr names the last reason */
       EXIT_UNCITED = 4,    /* --policy llm: an answer cites no verified code span */
       EXIT_BUSY = 5 };     /* another drqa-tui holds what this run needs: the --out file (--batch, --judge) */

int cli_index_only(const struct drqa_opts *o);   /* cli_index.c */
int cli_action(const struct drqa_opts *o);       /* cli_action.c */
int cli_ask(const struct drqa_opts *o);          /* headless search */
int cli_batch(const struct drqa_opts *o);
int cli_show_profile(const struct drqa_opts *o);  /* --show-profile */
int cli_judge(const struct drqa_opts *o);
int cli_report(const struct drqa_opts *o);
int ui_run(const struct drqa_opts *o);           /* ui/: the curses front end, also --replay */
int cli_mcp(const struct drqa_opts *o);          /* cli_mcp.c: --mcp, the MCP server on stdio */
int cli_recheck(const struct drqa_opts *o);      /* cli_mcp.c: --recheck FILE */
int cli_mcp_http(const struct drqa_opts *o);     /* cli_mcp_http.c: --mcp-http */

/* cli_out.c: what an output file of a kind holds: every line is a JSON
 * object that line_ok accepts (else the line "<not_ours>"). */
struct cli_jsonl_kind {
    const char *name;       /* "--batch answers" */
    const char *line;       /* "an answers line" */
    const char *again;      /* "question is answered": said of a line dropped */
    const char *not_ours;   /* "has no \"id\" and \"answer\"" */
    int (*line_ok)(const cJSON *line);
};

/* cli_out.c: opens a JSONL output file (--batch answers, --judge scores) for
 * appending, creating it. A regular file is locked for the run (flock: a
 * second run gets CLI_OUT_BUSY) and read: *text (malloc'd, at most max bytes)
 * is what it holds and *regular is 1. Any line that is not one of kind's
 * refuses the file, untouched (-1, err names the line). A last line without
 * its newline is a line an interrupted run cut short, unless it is a whole
 * line of kind: a partial one is cut off and stderr says so ("its <again>
 * again"), a whole one gets its newline. Anything else (a pipe, a FIFO, a
 * device) is opened write-only and never read: *text stays NULL, *regular 0.
 * Returns the descriptor, or with err -1 (cannot open or read), CLI_OUT_BUSY
 * or CLI_OUT_FOREIGN (a line not of kind). */
enum { CLI_OUT_BUSY = -2, CLI_OUT_FOREIGN = -3 };
int cli_open_jsonl_out(const char *path, size_t max, const struct cli_jsonl_kind *kind, char **text, int *regular,
                       char *err, size_t errlen);

/* cli_out.c: flushes and closes stdout, checking every write through the
 * close; a failure is said on stderr (naming standard output) and turns a
 * status of 0 into 1. Returns the status to exit with. */
int cli_stdout_close(int rc);

#endif
