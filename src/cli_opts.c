/*
 * cli_opts: parsing the command line into struct drqa_opts. The table below
 * is the single list of options; opts_usage prints it and the man page test
 * compares the man page against it. The modes turn the result into the
 * library's settings in cli_settings.c.
 */
#include "cli_opts.h"
#include "llm_config.h" /* the providers */
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    O_INDEX_ONLY = 256, O_INDEX, O_MAX_FILE_SIZE, O_CHECK, O_VERIFY, O_NO_IGNORE, O_EXPLAIN, O_THREADS, O_JSON, O_QUIET, O_NO_PROGRESS,
    O_ACTION, O_ASK, O_BATCH, O_OUT, O_JOBS, O_MODE, O_NO_MCTS, O_NO_PERCEPTION,
    O_NO_EVALUATION, O_NO_SEMANTIC, O_ITERATIONS, O_MAX_EXPAND, O_SEED, O_BUDGET_TOKENS, O_BUDGET_USD,
    O_PARALLEL, O_EXPLORATION, O_FINISH_THRESHOLD, O_POLICY, O_PROVIDER, O_API_BASE, O_MODEL, O_ROLE_MODEL,
    O_EMBED_BASE, O_EMBED_MODEL, O_JSON_MODE, O_CONFIG, O_SHOW_PROFILE, O_TRANSCRIPT_DIR, O_REPLAY, O_JUDGE,
    O_REFERENCE,
    O_JUDGE_MODEL, O_REPORT, O_LOG, O_HELP, O_VERSION,
    O_MCP, O_RECHECK,
    O_MCP_HTTP,
    O_NO_STREAM,
};

struct optdoc {
    struct option opt;
    const char *arg;
    const char *help;
};

static const struct optdoc table[] = {
    {{"index-only", no_argument, 0, O_INDEX_ONLY}, NULL, "index the repository, print statistics and exit"},
    {{"index", required_argument, 0, O_INDEX}, "PATH", "index file (default: $XDG_CACHE_HOME/drqa-tui/NAME-HASH.sqlite)"},
    {{"max-file-size", required_argument, 0, O_MAX_FILE_SIZE}, "BYTES", "skip files larger than this (default 1048576; kept in the index for later runs)"},
    {{"check", no_argument, 0, O_CHECK}, NULL, "with --index-only: check the index's integrity, rebuild it when damaged"},
    {{"verify", no_argument, 0, O_VERIFY}, NULL, "with --index-only: hash every file and re-index those that differ"},
    {{"no-ignore", no_argument, 0, O_NO_IGNORE}, NULL, "index everything but .git/.hg/.svn: no ignore files, no git listing"},
    {{"explain", required_argument, 0, O_EXPLAIN}, "PATH", "with --index-only: say why PATH is or is not indexed (the rule, file and line)"},
    {{"threads", required_argument, 0, O_THREADS}, "N", "parser threads (default: one per core)"},
    {{"json", no_argument, 0, O_JSON}, NULL, "print machine-readable JSON instead of text"},
    {{"quiet", no_argument, 0, O_QUIET}, NULL, "print only results and errors"},
    {{"no-progress", no_argument, 0, O_NO_PROGRESS}, NULL, "no progress bar on stderr"},
    {{"action", required_argument, 0, O_ACTION}, "NAME JSON", "run one action (FindClass, ViewCode, ...) with JSON arguments and print JSON"},
    {{"ask", required_argument, 0, O_ASK}, "QUESTION", "answer one question headless, Markdown on stdout"},
    {{"batch", required_argument, 0, O_BATCH}, "FILE", "answer every question of a JSONL file (needs --out)"},
    {{"out", required_argument, 0, O_OUT}, "FILE", "output file for --batch, --judge and --report"},
    {{"jobs", required_argument, 0, O_JOBS}, "N", "questions answered at once in --batch (default 1)"},
    {{"mode", required_argument, 0, O_MODE}, "MODE", "mcts (default), direct, rag-function or rag-window"},
    {{"no-mcts", no_argument, 0, O_NO_MCTS}, NULL, "ablation: one greedy trajectory instead of a tree"},
    {{"no-perception", no_argument, 0, O_NO_PERCEPTION}, NULL, "ablation: no perception report"},
    {{"no-evaluation", no_argument, 0, O_NO_EVALUATION}, NULL, "ablation: values from a rollout, not the evaluator"},
    {{"no-semantic", no_argument, 0, O_NO_SEMANTIC}, NULL, "ablation: no SemanticSearch action"},
    {{"iterations", required_argument, 0, O_ITERATIONS}, "N", "search iterations (default 15)"},
    {{"max-expand", required_argument, 0, O_MAX_EXPAND}, "K", "children per node (default 3)"},
    {{"seed", required_argument, 0, O_SEED}, "S", "random seed (default 1)"},
    {{"budget-tokens", required_argument, 0, O_BUDGET_TOKENS}, "T", "stop and answer once T tokens are spent"},
    {{"budget-usd", required_argument, 0, O_BUDGET_USD}, "X", "stop and answer once the model calls cost X US dollars"},
    {{"parallel", required_argument, 0, O_PARALLEL}, "K", "expansions in flight at once (default 1)"},
    {{"exploration", required_argument, 0, O_EXPLORATION}, "C", "UCT exploration constant on the 0-100 value scale (default 50)"},
    {{"finish-threshold", required_argument, 0, O_FINISH_THRESHOLD}, "V",
     "a Finish valued below V (0-100, default 50) does not end the search"},
    {{"policy", required_argument, 0, O_POLICY}, "P", "offline or llm (default: llm when a model is configured)"},
    {{"provider", required_argument, 0, O_PROVIDER}, "P", NULL /* llm_provider_choices */},
    {{"api-base", required_argument, 0, O_API_BASE}, "URL", "chat API base URL (e.g. http://127.0.0.1:11434/v1)"},
    {{"model", required_argument, 0, O_MODEL}, "NAME", "chat model name"},
    {{"role-model", required_argument, 0, O_ROLE_MODEL}, "ROLE=NAME", "the model one role uses (repeatable)"},
    {{"embed-base", required_argument, 0, O_EMBED_BASE}, "URL", "embeddings API base URL"},
    {{"embed-model", required_argument, 0, O_EMBED_MODEL}, "NAME", "embeddings model name"},
    {{"json-mode", no_argument, 0, O_JSON_MODE}, NULL, "ask the chat API for JSON replies (response_format)"},
    {{"no-stream", no_argument, 0, O_NO_STREAM}, NULL, "ask for whole replies, not event streams (a server that cannot stream)"},
    {{"config", required_argument, 0, O_CONFIG}, "FILE", "config file (default: $XDG_CONFIG_HOME/drqa-tui/config)"},
    {{"show-profile", no_argument, 0, O_SHOW_PROFILE}, NULL, "print the resolved model profile(s) and exit"},
    {{"transcript-dir", required_argument, 0, O_TRANSCRIPT_DIR}, "DIR", "where transcripts are written"},
    {{"replay", required_argument, 0, O_REPLAY}, "FILE", "browse a saved transcript"},
    {{"judge", required_argument, 0, O_JUDGE}, "FILE", "score an answers JSONL file with LLM judges"},
    {{"reference", required_argument, 0, O_REFERENCE}, "FILE", "reference answers for --judge"},
    {{"judge-model", required_argument, 0, O_JUDGE_MODEL}, "NAME", "a judge model (repeatable)"},
    {{"report", required_argument, 0, O_REPORT}, "FILE", "Markdown tables from score files (repeatable)"},
    {{"log", required_argument, 0, O_LOG}, "FILE", "write a debug log"},
    {{"help", no_argument, 0, O_HELP}, NULL, "show this help"},
    {{"version", no_argument, 0, O_VERSION}, NULL, "show the version"},
    {{"mcp", no_argument, 0, O_MCP}, NULL, "serve the repository's tools to coding agents: an MCP server on stdin/stdout"},
    {{"recheck", required_argument, 0, O_RECHECK}, "FILE", "say whether saved answers' citations still hold (unchanged, moved, changed, gone)"},
    {{"mcp-http", required_argument, 0, O_MCP_HTTP}, "[ADDR:]PORT",
     "serve the tools to MCP clients over Streamable HTTP (default address 127.0.0.1)"},
};

void opts_defaults(struct drqa_opts *o)
{
    memset(o, 0, sizeof *o);
    o->run = RUN_TUI;
    o->max_file_size = 1 << 20;
    o->mode = "mcts";
    o->iterations = 15;
    o->max_expand = 3;
    o->seed = 1;
    o->parallel = 1;
    o->jobs = 1;
    o->exploration = -1;  /* the search picks its documented default */
    o->finish_min_value = -1;
}

void opts_usage(FILE *fp)
{
    fprintf(fp,
            "usage: drqa-tui [options] REPO [QUESTION]\n"
            "       drqa-tui --index-only [--json] [--check] [--verify] [--no-ignore] [--explain PATH] REPO\n"
            "       drqa-tui --ask QUESTION [--json] REPO\n"
            "       drqa-tui --batch FILE --out FILE [--jobs N] REPO\n"
            "       drqa-tui --action NAME JSON REPO\n"
            "       drqa-tui --mcp REPO\n"
            "       drqa-tui --recheck FILE [--json] REPO\n"
            "       drqa-tui --mcp-http [ADDR:]PORT REPO\n\n"
            "Answers questions about a code repository with a Monte-Carlo tree search\n"
            "over an index of its classes, functions, calls and text.\n\noptions:\n");
    for (size_t i = 0; i < ARRAY_LEN(table); i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", table[i].opt.name, table[i].arg ? " " : "",
                 table[i].arg ? table[i].arg : "");
        char names[200];
        fprintf(fp, "  %-28s %s\n", left,
                table[i].help ? table[i].help : llm_provider_choices(names, sizeof names, 1));
    }
}

static int parse_ll(const char *name, const char *s, long long lo, long long hi, long long *out,
                    char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        snprintf(err, errlen, "--%s takes a whole number from %lld to %lld, not '%s'", name, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The question and the repository given the other way round (the question
 * is not a directory, the text taken for the question is one): said, with
 * the order that works, rather than "the repository does not exist". */
static int swapped_args(const struct drqa_opts *o, char *err, size_t errlen)
{
    if (!o->repo || !o->question || is_dir(o->repo) || !is_dir(o->question)) return 0;
    if (o->run == RUN_ASK)
        snprintf(err, errlen, "--ask takes the question; the repository comes last: drqa-tui --ask \"%s\" %s "
                 "('%s' is a directory, '%s' is not)", o->repo, o->question, o->question, o->repo);
    else
        snprintf(err, errlen, "the repository comes first, then the question: drqa-tui %s \"%s\" "
                 "('%s' is a directory, '%s' is not)", o->question, o->repo, o->question, o->repo);
    return 1;
}

static int set_run(struct drqa_opts *o, enum drqa_run r, const char *name, char *err, size_t errlen)
{
    if (o->run != RUN_TUI && o->run != r) {
        snprintf(err, errlen, "--%s cannot be combined with another mode option (--index-only, --ask, --batch, --action, --judge, --report, --replay, --show-profile, --mcp, --mcp-http, --recheck)", name);
        return -1;
    }
    o->run = r;
    return 0;
}

/* A search or policy option (c, called name): 0 when taken, -1 with err when
 * its value is refused, 1 when c is another kind of option. */
static int search_option(struct drqa_opts *o, int c, const char *name, char *err, size_t errlen)
{
    long long v;
    switch (c) {
    case O_MODE:
        if (strcmp(optarg, "mcts") && strcmp(optarg, "direct") && strcmp(optarg, "rag-function") &&
            strcmp(optarg, "rag-window")) {
            snprintf(err, errlen, "--mode must be mcts, direct, rag-function or rag-window, not '%s'", optarg);
            return -1;
        }
        o->mode = optarg;
        break;
    case O_NO_MCTS: o->no_mcts = 1; break;
    case O_NO_PERCEPTION: o->no_perception = 1; break;
    case O_NO_EVALUATION: o->no_evaluation = 1; break;
    case O_NO_SEMANTIC: o->no_semantic = 1; break;
    case O_ITERATIONS: if (parse_ll(name, optarg, 1, 10000, &v, err, errlen)) return -1; o->iterations = (int)v; break;
    case O_MAX_EXPAND: if (parse_ll(name, optarg, 1, 20, &v, err, errlen)) return -1; o->max_expand = (int)v; break;
    case O_SEED: if (parse_ll(name, optarg, 0, LLONG_MAX, &v, err, errlen)) return -1; o->seed = (unsigned long long)v; break;
    case O_BUDGET_TOKENS: if (parse_ll(name, optarg, 0, LLONG_MAX, &o->budget_tokens, err, errlen)) return -1; break;
    case O_PARALLEL: if (parse_ll(name, optarg, 1, 16, &v, err, errlen)) return -1; o->parallel = (int)v; break;
    case O_EXPLORATION: {
        char *end;
        o->exploration = strtod(optarg, &end);
        if (end == optarg || *end || !isfinite(o->exploration) || o->exploration < 0) {   /* nan, inf */
            snprintf(err, errlen, "--exploration takes a finite number >= 0, not '%s'", optarg);
            return -1;
        }
        break;
    }
    case O_FINISH_THRESHOLD: {
        char *end;
        o->finish_min_value = strtod(optarg, &end);
        if (end == optarg || *end || !(o->finish_min_value >= 0 && o->finish_min_value <= 100)) {
            snprintf(err, errlen, "--finish-threshold takes a value from 0 to 100, not '%s'", optarg);
            return -1;
        }
        break;
    }
    case O_POLICY:
        if (strcmp(optarg, "offline") && strcmp(optarg, "llm")) {
            snprintf(err, errlen, "--policy must be offline or llm, not '%s'", optarg);
            return -1;
        }
        o->policy = optarg;
        break;
    case O_PROVIDER:
        if (!llm_provider_find(optarg)) {
            char names[200];
            snprintf(err, errlen, "--provider must be %s, not '%s'", llm_provider_choices(names, sizeof names, 0),
                     optarg);
            return -1;
        }
        o->provider = optarg;
        break;
    default: return 1;
    }
    return 0;
}

/* After the options: the options that go only with --index-only, and the
 * positional arguments (REPO [QUESTION], or --report's score files) and what
 * each run needs of them. 0, or -1 with err. */
static int opts_positional(int argc, char **argv, struct drqa_opts *o, char *err, size_t errlen)
{
    if (o->explain && o->run != RUN_INDEX_ONLY) {
        snprintf(err, errlen, "--explain works with --index-only: drqa-tui --index-only --explain PATH REPO");
        return -1;
    }
    if ((o->check || o->verify) && o->run != RUN_INDEX_ONLY) {
        snprintf(err, errlen, "--%s works with --index-only: drqa-tui --index-only --%s REPO", o->check ? "check" : "verify",
                 o->check ? "check" : "verify");
        return -1;
    }
    /* Remaining: REPO [QUESTION]; --report takes extra score files too. */
    int npos = argc - optind;
    if (o->run == RUN_REPORT) {
        for (int i = optind; i < argc; i++) {
            if (o->nreport_files == OPTS_MAX_LIST) { snprintf(err, errlen, "at most %d --report files", OPTS_MAX_LIST); return -1; }
            o->report_files[o->nreport_files++] = argv[i];
        }
        return 0;
    }
    if (o->run == RUN_SHOW_PROFILE) return 0;
    if (o->run == RUN_JUDGE || o->run == RUN_REPLAY) {
        if (npos > 0) o->repo = argv[optind];
    } else {
        if (npos < 1) {
            snprintf(err, errlen, "no repository given: drqa-tui [options] REPO [QUESTION] (see drqa-tui --help)");
            return -1;
        }
        o->repo = argv[optind];
        if (npos >= 2) {
            if (o->run != RUN_TUI) {
                snprintf(err, errlen, "unexpected argument '%s' after the repository", argv[optind + 1]);
                return -1;
            }
            o->question = argv[optind + 1];
        }
        if (npos > 2) {
            snprintf(err, errlen, "unexpected argument '%s'; quote the question: drqa-tui REPO \"question\"", argv[optind + 2]);
            return -1;
        }
    }
    if ((o->run == RUN_ASK || o->run == RUN_TUI) && swapped_args(o, err, errlen)) return -1;
    if (o->run == RUN_BATCH && !o->out) {
        snprintf(err, errlen, "--batch needs --out FILE for the answers");
        return -1;
    }
    if (o->run == RUN_JUDGE && (!o->reference || !o->out)) {
        snprintf(err, errlen, "--judge needs --reference FILE and --out FILE");
        return -1;
    }
    return 0;
}

int opts_parse(int argc, char **argv, struct drqa_opts *o, char *err, size_t errlen)
{
    struct option longopts[ARRAY_LEN(table) + 1];
    for (size_t i = 0; i < ARRAY_LEN(table); i++) longopts[i] = table[i].opt;
    memset(&longopts[ARRAY_LEN(table)], 0, sizeof longopts[0]);
    opterr = 0;
    optind = 1;
    int c, idx;
    long long v;
    for (;;) {
        c = getopt_long(argc, argv, "+hV", longopts, &idx);
        if (c == -1) {
            /* --report takes files and options in any order: a score file
             * between options is taken here and parsing goes on ("--" ends
             * the options as usual) */
            if (o->run != RUN_REPORT || optind >= argc || !strcmp(argv[optind - 1], "--")) break;
            if (o->nreport_files == OPTS_MAX_LIST) { snprintf(err, errlen, "at most %d --report files", OPTS_MAX_LIST); return -1; }
            o->report_files[o->nreport_files++] = argv[optind++];
            continue;
        }
        const char *name = c >= 256 && (size_t)(c - 256) < ARRAY_LEN(table) ? table[c - 256].opt.name : "";
        int taken = search_option(o, c, name, err, errlen);
        if (taken < 0) return -1;
        if (taken == 0) continue;
        switch (c) {
        case O_INDEX_ONLY: if (set_run(o, RUN_INDEX_ONLY, name, err, errlen)) return -1; break;
        case O_INDEX: o->index_path = optarg; break;
        case O_MAX_FILE_SIZE:
            if (parse_ll(name, optarg, 1, LLONG_MAX, &o->max_file_size, err, errlen)) return -1;
            o->max_file_size_given = 1;
            break;
        case O_CHECK: o->check = 1; break;
        case O_VERIFY: o->verify = 1; break;
        case O_NO_IGNORE: o->no_ignore = 1; break;
        case O_EXPLAIN: o->explain = optarg; break;
        case O_THREADS: if (parse_ll(name, optarg, 0, 256, &v, err, errlen)) return -1; o->threads = (int)v; break;
        case O_JSON: o->json = 1; break;
        case O_QUIET: o->quiet = 1; break;
        case O_NO_PROGRESS: o->no_progress = 1; break;
        case O_ACTION:
            if (set_run(o, RUN_ACTION, name, err, errlen)) return -1;
            o->action_name = optarg;
            if (optind >= argc) {
                snprintf(err, errlen, "--action takes a name and JSON arguments, e.g. --action FindClass '{\"class_name\":\"Flask\"}' REPO");
                return -1;
            }
            o->action_args = argv[optind++];
            break;
        case O_ASK: if (set_run(o, RUN_ASK, name, err, errlen)) return -1; o->question = optarg; break;
        case O_BATCH: if (set_run(o, RUN_BATCH, name, err, errlen)) return -1; o->batch_in = optarg; break;
        case O_OUT: o->out = optarg; break;
        case O_JOBS: if (parse_ll(name, optarg, 1, 64, &v, err, errlen)) return -1; o->jobs = (int)v; break;
        case O_API_BASE: o->api_base = optarg; break;
        case O_MODEL: o->model = optarg; break;
        case O_EMBED_BASE: o->embed_base = optarg; break;
        case O_EMBED_MODEL: o->embed_model = optarg; break;
        case O_JSON_MODE: o->json_mode = 1; break;
        case O_NO_STREAM: o->no_stream = 1; break;
        case O_CONFIG: o->config_path = optarg; break;
        case O_TRANSCRIPT_DIR: o->transcript_dir = optarg; break;
        case O_REPLAY: if (set_run(o, RUN_REPLAY, name, err, errlen)) return -1; o->replay = optarg; break;
        case O_JUDGE: if (set_run(o, RUN_JUDGE, name, err, errlen)) return -1; o->judge_in = optarg; break;
        case O_REFERENCE: o->reference = optarg; break;
        case O_JUDGE_MODEL:
            if (o->njudge_models == OPTS_MAX_LIST) { snprintf(err, errlen, "at most %d --judge-model options", OPTS_MAX_LIST); return -1; }
            o->judge_models[o->njudge_models++] = optarg;
            break;
        case O_REPORT:
            if (set_run(o, RUN_REPORT, name, err, errlen)) return -1;
            if (o->nreport_files == OPTS_MAX_LIST) { snprintf(err, errlen, "at most %d --report files", OPTS_MAX_LIST); return -1; }
            o->report_files[o->nreport_files++] = optarg;
            break;
        case O_LOG: o->log_file = optarg; break;
        case O_BUDGET_USD: {
            char *end;
            o->budget_usd = strtod(optarg, &end);
            if (end == optarg || *end || !(o->budget_usd > 0) || o->budget_usd > 1e6) {
                snprintf(err, errlen, "--budget-usd takes an amount of US dollars above 0 (e.g. 0.50), not '%s'", optarg);
                return -1;
            }
            break;
        }
        case O_ROLE_MODEL:
            if (o->nrole_models == OPTS_MAX_LIST) { snprintf(err, errlen, "at most %d --role-model options", OPTS_MAX_LIST); return -1; }
            o->role_models[o->nrole_models++] = optarg;
            break;
        case O_SHOW_PROFILE: if (set_run(o, RUN_SHOW_PROFILE, name, err, errlen)) return -1; break;
        case O_MCP: if (set_run(o, RUN_MCP, name, err, errlen)) return -1; break;
        case O_RECHECK: if (set_run(o, RUN_RECHECK, name, err, errlen)) return -1; o->recheck = optarg; break;
        case O_MCP_HTTP: if (set_run(o, RUN_MCP_HTTP, name, err, errlen)) return -1; o->mcp_http = optarg; break;
        case 'h': case O_HELP: o->run = RUN_HELP; return 0;
        case 'V': case O_VERSION: o->run = RUN_VERSION; return 0;
        case ':':
        case '?':
        default:
            if (optopt >= 256 && (size_t)(optopt - 256) < ARRAY_LEN(table))
                snprintf(err, errlen, "--%s needs an argument (%s); see drqa-tui --help",
                         table[optopt - 256].opt.name, table[optopt - 256].arg);
            else
                snprintf(err, errlen, "unknown option '%s'; see drqa-tui --help", argv[optind - 1]);
            return -1;
        }
    }
    return opts_positional(argc, argv, o, err, errlen);
}
