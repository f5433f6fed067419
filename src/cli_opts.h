/*
 * cli_opts: the command line. One table of long options, parsed into struct
 * drqa_opts; the usage text is generated from the same table so it never
 * drifts from what is accepted. Strings point into argv (not owned).
 */
#ifndef DRQA_CLI_OPTS_H
#define DRQA_CLI_OPTS_H

#include <stdio.h>

enum drqa_run {
    RUN_TUI,         /* default: the curses front end */
    RUN_INDEX_ONLY,  /* --index-only */
    RUN_ACTION,      /* --action NAME ARGS */
    RUN_ASK,         /* --ask QUESTION */
    RUN_BATCH,       /* --batch FILE --out FILE */
    RUN_JUDGE,       /* --judge FILE --reference FILE --out FILE */
    RUN_REPORT,      /* --report FILE... */
    RUN_REPLAY,      /* --replay FILE */
    RUN_SHOW_PROFILE,/* --show-profile */
    RUN_MCP,         /* --mcp: the MCP server on stdio */
    RUN_RECHECK,     /* --recheck FILE */
    RUN_MCP_HTTP,    /* --mcp-http [ADDR:]PORT */
    RUN_HELP,
    RUN_VERSION,
};

#define OPTS_MAX_LIST 16

struct drqa_opts {
    enum drqa_run run;
    const char *repo;            /* positional 1 */
    const char *question;        /* positional 2, or --ask */
    /* index */
    const char *index_path;      /* --index */
    long long max_file_size;     /* --max-file-size, bytes (default 1 MiB) */
    int max_file_size_given;     /* --max-file-size was given (else the index's recorded value is kept) */
    int check;                   /* --check: --index-only checks the index's integrity */
    int verify;                  /* --verify: --index-only hashes every file */
    int no_ignore;               /* --no-ignore: index everything but version-control metadata */
    const char *explain;         /* --explain PATH: --index-only says why PATH is or is not indexed */
    int threads;                 /* --threads, parse threads (0 = one per core) */
    int json;                    /* --json */
    int quiet;                   /* --quiet */
    int no_progress;             /* --no-progress */
    /* actions */
    const char *action_name, *action_args;
    /* search */
    const char *mode;            /* --mode mcts|direct|rag-function|rag-window */
    int no_mcts, no_perception, no_evaluation, no_semantic;
    int iterations;              /* --iterations (default 15) */
    int max_expand;              /* --max-expand (default 3) */
    unsigned long long seed;     /* --seed (default 1) */
    long long budget_tokens;     /* --budget-tokens (0 = none) */
    double budget_usd;           /* --budget-usd (0 = none) */
    int parallel;                /* --parallel K (default 1) */
    double exploration;          /* --exploration c (UCT constant) */
    double finish_min_value;     /* --finish-threshold V; < 0: the search's default */
    /* batch */
    const char *batch_in, *out;
    int jobs;                    /* --jobs N questions at once (default 1) */
    /* models */
    const char *policy;          /* --policy offline|llm (NULL: auto) */
    const char *provider;        /* --provider openai|anthropic */
    const char *api_base, *model, *embed_base, *embed_model;
    int json_mode;               /* --json-mode: ask for response_format json */
    int no_stream;               /* --no-stream: whole replies, no event streams */
    const char *config_path;     /* --config FILE */
    const char *role_models[OPTS_MAX_LIST]; int nrole_models;   /* --role-model ROLE=NAME */
    /* transcripts and evaluation */
    const char *transcript_dir;  /* --transcript-dir */
    const char *replay;
    const char *judge_in, *reference;
    const char *judge_models[OPTS_MAX_LIST]; int njudge_models;
    const char *report_files[OPTS_MAX_LIST]; int nreport_files;
    const char *log_file;        /* --log FILE */
    /* MCP and saved answers */
    const char *recheck;         /* --recheck FILE: saved answers to check */
    const char *mcp_http;        /* --mcp-http [ADDR:]PORT */
};

void opts_defaults(struct drqa_opts *o);
/* Returns 0, or -1 with a message in err saying what is wrong and what to do. */
int opts_parse(int argc, char **argv, struct drqa_opts *o, char *err, size_t errlen);
void opts_usage(FILE *fp);

#endif
