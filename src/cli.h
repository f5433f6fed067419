/*
 * cli: the program's modes, one function each, called by main() after option
 * parsing. Each returns the process exit status: 0 success, 1 the work failed
 * (message on stderr), 2 bad usage or input (message on stderr); --ask and
 * --batch under --policy llm also 3 and 4 (below).
 */
#ifndef DRQA_CLI_H
#define DRQA_CLI_H

#include "opts.h"

#include <stddef.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2,
       EXIT_NO_MODEL = 3,   /* --policy llm: no model call of the run succeeded; stderr names the last reason */
       EXIT_UNCITED = 4 };  /* --policy llm: an answer cites no verified code span */

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

/* cli_out.c: opens a JSONL output file (--batch answers, --judge scores) for
 * appending, creating it, with what it holds in *text (malloc'd, at most max
 * bytes read). A last line without its newline is a line an interrupted run
 * cut short, unless it is a whole JSON object with an "id": a partial one is
 * cut off and stderr says so ("its <again> again"), a whole one gets its
 * newline. Returns the descriptor, or -1 with err. */
int cli_open_jsonl_out(const char *path, size_t max, const char *again, char **text, char *err, size_t errlen);

#endif
