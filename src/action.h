/*
 * action: the actions an agent runs against the repository index (paper 3.2):
 * FindClass, FindFunction, FindCodeSnippet, ViewCode, Outline, ListFiles,
 * FindReferences, Finish (schema only: the search handles it) and, registered
 * from its own module, SemanticSearch.
 *
 * One registry table gives, for every action, its name, a description, an
 * argument schema (used both to validate calls and to render prompts) and a
 * handler. action_run() validates the JSON arguments against the schema
 * (unknown action, unknown field, wrong type, missing required field: a clear
 * error naming the field and the expected type) and dispatches. A handler fills
 * an action_result: evidence spans (exact text with path and lines), structured
 * items for JSON, notes ("did you mean ...") and, for listing actions, a
 * preformatted listing. action_result_render() produces the text a model sees.
 *
 * Adding an action from another file (this is how SemanticSearch plugs in):
 *
 *     static const struct action_arg ss_args[] = {
 *         {"query", ACTION_ARG_STRING, 1, "what to look for, in words"},
 *         {"file_pattern", ACTION_ARG_STRING, 0, "glob restricting the files"},
 *         {NULL, 0, 0, NULL}};
 *     static int ss_run(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
 *     const struct action_def action_semantic_search = {"SemanticSearch", "...", ss_args, ss_run};
 *     ... once at start-up, before any thread runs actions:
 *     action_register(&action_semantic_search, err, sizeof err);
 *
 * A registered action replaces a built-in schema of the same name (the
 * built-in table lists SemanticSearch as schema-only so prompts describe it even
 * before it is registered; action_run refuses it until then). The handler
 * toolkit below (files, symbols, definitions, notes) is shared with such
 * modules.
 *
 * Threads: a struct action_ctx belongs to one thread (its sqlite connection and
 * its cache are not shared). The registry is read-only after start-up.
 */
#ifndef DRQA_ACTION_H
#define DRQA_ACTION_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stddef.h>

#include "evidence.h"
#include "util.h"

enum action_status {
    ACTION_OK = 0,
    ACTION_EINVAL = -1,   /* the request is wrong: action, arguments, a refused path */
    ACTION_EFAIL = -2,    /* the index could not be read */
};

enum action_arg_type {
    ACTION_ARG_STRING,
    ACTION_ARG_STRING_LIST,   /* JSON array of strings */
    ACTION_ARG_INT,
    ACTION_ARG_BOOL,
};

/* required: 0 optional; 1 must be given, and a string must not be empty;
 * ACTION_ARG_EMPTY_OK must be given, and "" is a value (Outline's path ''
 * is the whole repository). */
#define ACTION_ARG_EMPTY_OK 2
struct action_arg {
    const char *name;
    enum action_arg_type type;
    int required;
    const char *description;
    const char *const *choices;   /* a string's only values (NULL-terminated), or NULL: any */
};

struct action_ctx;
struct action_result;

/* A handler: args is already validated against the schema. Returns an
 * action_status; on error err names what was wrong and what to do. */
typedef int (*action_fn)(struct action_ctx *ctx, const cJSON *args, struct action_result *out,
                         char *err, size_t errlen);

struct action_def {
    const char *name;
    const char *description;
    const struct action_arg *args;   /* terminated by an entry with name NULL */
    action_fn run;                   /* NULL: schema only (Finish) */
    /* For a model choosing among tools (the MCP server's descriptions): when
     * to use the action and what it returns. May be NULL. */
    const char *when;
    /* The short name a narrow tree row shows ("Class" for FindClass). May be NULL. */
    const char *short_name;
};

/* The built-in actions (action_table.c), Finish last. */
extern const struct action_def action_builtin[];
extern const size_t action_nbuiltin;
struct action_arg_default {
    const char *action, *arg, *value;
};
extern const struct action_arg_default action_arg_defaults[];   /* ends with a NULL action */

#define ACTION_DEFAULT_BUDGET 6000   /* tokens (bytes / 4) of rendered text per call */
#define ACTION_DEFAULT_MAX_RESULTS 20

struct action_cache;   /* private to action.c: distinct names, paths, normalised text */

struct action_ctx {
    sqlite3 *db;               /* not owned */
    const char *repo_root;     /* absolute path of the repository; not owned */
    long long token_budget;    /* per call; 0 = ACTION_DEFAULT_BUDGET */
    int max_results;           /* 0 = ACTION_DEFAULT_MAX_RESULTS */
    struct action_cache *cache;   /* owned, built lazily, rebuilt when the index changes */
    struct semantic_cache *semantic; /* owned: SemanticSearch's state on db (semantic.h), made on first use */
    char *failed;              /* owned: why the index could not be read while an action ran (action_read_failed) */
};

void action_ctx_init(struct action_ctx *ctx, sqlite3 *db, const char *repo_root);
void action_ctx_release(struct action_ctx *ctx);   /* frees the caches; accepts NULL */

/* The outcome of one action. Owns everything in it. */
struct action_result {
    char *action;              /* the action's name */
    struct evidence ev;        /* spans shown to the model, best first */
    cJSON *items;              /* array of objects, one per match (action-specific fields) */
    char **notes;              /* messages for the model: suggestions, fallbacks, truncation */
    size_t nnotes;
    struct buf listing;        /* preformatted lines (Outline, ListFiles, FindReferences) */
    int truncated;             /* something was cut to fit the budget (a note says what) */
};

void action_result_init(struct action_result *r);
void action_result_free(struct action_result *r);     /* accepts NULL */
/* Adds a note; one longer than ACTION_NOTE_MAX bytes is cut there and says so. */
#define ACTION_NOTE_MAX 1024
void action_result_note(struct action_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* {"action", "items": [...], "evidence": [...] (evidence_to_json),
 *  "notes": [...], "listing": "..." (when any), "truncated": bool}. Caller frees. */
cJSON *action_result_to_json(const struct action_result *r);

/* The text a model sees: notes, the listing, then each span under a
 * 'path:start-end  label' header with numbered lines; elision markers are kept
 * unnumbered. Stops at token_budget (bytes / 4; 0 = no limit) with an explicit
 * '[truncated ...]' line saying which lines to ask for. Caller frees. */
char *action_result_render(const struct action_result *r, long long token_budget);

/* Validates args and runs the named action. out is initialised here (the
 * caller frees it with action_result_free, also after an error). */
int action_run(struct action_ctx *ctx, const char *name, const cJSON *args, struct action_result *out,
               char *err, size_t errlen);

/* Same, with the arguments as JSON text (a malformed document is an error). */
/* The arguments of an action from JSON text: one value and nothing after it
 * but white space. NULL with err naming the byte where it goes wrong
 * (1-based) otherwise. */
cJSON *action_args_parse(const char *name, const char *json, char *err, size_t errlen);
int action_run_json(struct action_ctx *ctx, const char *name, const char *args_json, struct action_result *out,
                    char *err, size_t errlen);

/* Checks args (an object) against def's schema. */
int action_validate(const struct action_def *def, const cJSON *args, char *err, size_t errlen);

/* The value an optional argument of an action takes when it is left out, as
 * text ("any", "false"), or NULL when it has none worth naming: an action
 * that names it does what one that leaves it out does (mcts_action_key drops
 * it, so the two are one action). Names are matched ignoring case. */
const char *action_arg_default(const char *action, const char *arg);
/* 1 when the index of ctx (a struct action_ctx *) defines a symbol named
 * name[0..n) exactly: of any kind, variables too (QPARSE_NAMES_ALL), or a
 * class or a function (QPARSE_NAMES_CLASSES, _FUNCTIONS): qparse_name_fn,
 * qparse_question_names' question to the index. */
int action_index_defines(void *ctx, const char *name, size_t n, int which);
/* The definition by exact name, or NULL. */
const struct action_def *action_find(const char *name);
/* Adds or replaces an action. -1 + err when the table is full or def is malformed. */
int action_register(const struct action_def *def, char *err, size_t errlen);
/* Names of all actions in prompt order, NULL-terminated (static storage,
 * valid until the next action_register). */
const char *const *action_names(void);
/* [{"name","description","arguments":[{"name","type","required","description"}]}]; caller frees. */
cJSON *action_schema_json(void);
/* One action's schema in the same form; NULL when unknown. */
cJSON *action_def_json(const struct action_def *def);

/* ---- Toolkit for handlers (also for actions registered from other files) ---- */

/* Records why the index could not be read (the first reason in an action):
 * a file's text that cannot be read, met by a helper that has no error of its
 * own to return. action_run then fails the action with it (ACTION_EFAIL),
 * so that a reader skipping what it could not load never passes for a
 * whole result. */
void action_read_failed(struct action_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The string argument, or NULL when absent or JSON null. */
const char *action_arg_str(const cJSON *args, const char *name);

/* One file of the index with a line table. Owned by the struct. */
struct action_file {
    long long id;
    char *path;
    char *text;
    size_t len;
    int nlines;
    size_t *line_off;          /* nlines + 1 offsets; line k starts at line_off[k - 1] */
};
/* Loads by path (id < 0) or by id. Returns 1 found, 0 not in the index, -1
 * error (recorded with action_read_failed: the text could not be read). */
int action_file_load(struct action_ctx *ctx, const char *path, long long id, struct action_file *f);
void action_file_free(struct action_file *f);      /* accepts NULL */
/* Lines start..end (clamped) joined by '\n', without a trailing newline; caller frees. */
char *action_file_lines(const struct action_file *f, int start, int end);
/* Pointer to line k and its length without the newline. */
const char *action_file_line(const struct action_file *f, int k, size_t *len);

/* A symbol row joined with its file. Owned strings. */
struct action_symbol {
    long long id, file_id, parent_id;  /* parent_id 0 when at module level */
    char *kind, *name, *qualname, *signature, *docstring, *bases, *path, *module;
    int start_line, end_line, body_line;
    int importers;   /* files importing it by name (action_lookup_symbols ranks by it), else 0 */
};
void action_symbol_free(struct action_symbol *s);
/* Column list and FROM clause for a query filling action_symbol_from_row. */
#define ACTION_SYMBOL_COLUMNS \
    "s.id, s.file_id, s.parent_id, s.kind, s.name, s.qualname, s.start_line, s.end_line, " \
    "s.body_line, s.signature, drqa_doc(s.docstring), s.bases, f.path, f.module " \
    "FROM symbols s JOIN files f ON f.id = s.file_id"
void action_symbol_from_row(sqlite3_stmt *st, struct action_symbol *s);
/* The innermost symbol of kinds (a SQL list like "'function','method'") that
 * encloses line in file_id. Returns 1 found, 0 none. */
int action_symbol_at(struct action_ctx *ctx, long long file_id, int line, const char *kinds, struct action_symbol *s);

/* Appends the definition as evidence: functions whole up to ACTION_DEF_MAX_LINES
 * (longer ones cut with an elision marker); classes whole when short, otherwise
 * as a skeleton (action_skeleton). Returns the span or NULL when the file is
 * missing from the index. */
#define ACTION_DEF_MAX_LINES 200
#define ACTION_CLASS_WHOLE_LINES 40
struct evidence_span *action_add_definition(struct action_ctx *ctx, struct action_result *out,
                                            const struct action_symbol *s, double score);

/* Lines start..end of f with every symbol body inside it elided except
 * signatures, docstrings, class-level assignments and short bodies. Each elided
 * run becomes one marker line (action_marker). Returns malloc'd text; *elided
 * is set when anything was left out. */
char *action_skeleton(struct action_ctx *ctx, const struct action_file *f, int start, int end, int *elided);

/* Elision markers: '<indent>... (lines A-B elided[: why]; ViewCode path:A-B to read them)'.
 * action_marker_parse returns 1 and the range for such a line. */
void action_marker(struct buf *b, int indent, const char *path, int a, int b_line, const char *why);
int action_marker_parse(const char *line, size_t len, int *a, int *b);

/* Distinct symbol names of the index (classes or functions/methods), cached
 * per connection and rebuilt when the index changes. */
enum { ACTION_NAMES_CLASSES = 1, ACTION_NAMES_FUNCTIONS = 2, ACTION_NAMES_ALL = 3 };
const char *const *action_cache_names(struct action_ctx *ctx, int which, size_t *n);
/* Stores the names as action_cache_names keeps them in the index, stamped
 * with what w holds, inside w's write transaction (an index being built,
 * derive.h); -1 with a message. */
int action_names_store_on(sqlite3 *w, char *err, size_t errlen);
/* All indexed paths, sorted. */
const char *const *action_cache_paths(struct action_ctx *ctx, size_t *n);
/* Normalised text of every file for FindCodeSnippet's full scan (see act_snippet.c). */
struct action_normtext {
    long long file_id;
    const char *path;        /* points into the path cache */
    char *norm;              /* whitespace-normalised text */
    size_t nlen;
    int *line_at;            /* line_at[k] = first normalised offset of line k+1 */
    int nlines;
};
/* None (n 0) when a file's text cannot be read: that is recorded with
 * action_read_failed, at every call. */
const struct action_normtext *action_cache_normtext(struct action_ctx *ctx, size_t *n);
/* The cached normalised text of one file (building the cache when needed), or NULL. */
const struct action_normtext *action_cache_normtext_of(struct action_ctx *ctx, long long file_id);
/* 1 when the normalised text cache is already built for this connection. */
int action_cache_has_normtext(struct action_ctx *ctx);

/* Whitespace normalisation used by FindCodeSnippet: whitespace runs are
 * dropped, except that one space remains between two word characters.
 * Writes into out (len bytes at most the input length); when line_at is not
 * NULL records the first output offset of every input line (nlines entries). */
size_t action_normalize_ws(const char *in, size_t len, char *out, int *line_at, int nlines);

/* Resolves a caller-given path with pathsafe against ctx->repo_root. */
int action_resolve_path(struct action_ctx *ctx, const char *given, char **rel, char *err, size_t errlen);
/* Up to k nearest indexed paths to given (fuzzy on path and basename), as a
 * ", "-separated list appended to b. Returns the number listed. */
size_t action_suggest_paths(struct action_ctx *ctx, const char *given, size_t k, struct buf *b);

/* Built-in handlers (one file per family). */
int action_find_class(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
int action_find_function(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
int action_find_snippet(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
int action_view_code(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
int action_outline(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
int action_list_files(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);
int action_find_references(struct action_ctx *, const cJSON *, struct action_result *, char *, size_t);

/* Symbol resolution shared by FindReferences and ViewCode: definitions of a
 * possibly dotted name ('run', 'Flask.run', 'flask.app.Flask'), exact then
 * case-insensitive then dotted, restricted to kinds (SQL list or NULL for all)
 * and file_pattern (may be NULL). Returns the count (array in *out, caller frees
 * each with action_symbol_free and the array with free), -1 on a database error. */
int action_lookup_symbols(struct action_ctx *ctx, const char *name, const char *kinds, const char *file_pattern,
                          struct action_symbol **out, const char **how);

#endif
