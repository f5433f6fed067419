/*
 * action_table: the built-in actions, one row each: the name the model and
 * the transcripts use, what it does, its arguments (with what the schema and
 * the prompts say of each), its handler, when to use it, and the short name
 * a narrow tree row shows. The planning prompt's list ({{actions}}), the MCP
 * server's tools, argument validation and the tree pane all read these rows
 * (action.h).
 */
#include "action.h"
#include "util.h"

static const struct action_arg find_class_args[] = {
    {"class_name", ACTION_ARG_STRING, 1,
     "name of the class: 'Flask', or dotted with its module or outer class ('flask.app.Flask', 'Outer.Inner')", NULL},
    {"file_pattern", ACTION_ARG_STRING, 0,
     "glob restricting the files searched: 'src/**/*.py', 'app.py', a directory 'pkg/sessions/'", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg find_function_args[] = {
    {"function_name", ACTION_ARG_STRING, 1, "name of the function or method: 'run', or dotted 'Flask.run'", NULL},
    {"class_name", ACTION_ARG_STRING, 0, "class the method belongs to", NULL},
    {"file_pattern", ACTION_ARG_STRING, 0, "glob restricting the files searched", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg find_snippet_args[] = {
    {"code_snippet", ACTION_ARG_STRING, 1,
     "exact code to find; may span lines; whitespace and indentation differences are ignored", NULL},
    {"file_pattern", ACTION_ARG_STRING, 0, "glob restricting the files searched", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg semantic_args[] = {
    {"query", ACTION_ARG_STRING, 1, "what to look for, in natural language", NULL},
    {"category", ACTION_ARG_STRING, 0, "'implementation' (non-test code), 'test' (test code) or 'any' (default)", NULL},
    {"file_pattern", ACTION_ARG_STRING, 0, "glob restricting the files searched", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg view_code_args[] = {
    {"code_span_list", ACTION_ARG_STRING_LIST, 1,
     "spans to read, each 'path', 'path:120-180', 'path:120', 'path:Class.method' or a symbol 'Class.method'", NULL},
    {"file_pattern", ACTION_ARG_STRING, 0, "glob used to pick among several definitions of a bare symbol", NULL},
    {"snap_to_definition", ACTION_ARG_BOOL, 0, "widen line ranges to the enclosing function or class", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg outline_args[] = {
    {"path", ACTION_ARG_STRING, ACTION_ARG_EMPTY_OK, "a file or a package directory ('' for the whole repository)", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg list_files_args[] = {
    {"pattern", ACTION_ARG_STRING, 0, "glob of the files to list (default: all)", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg find_refs_args[] = {
    {"symbol", ACTION_ARG_STRING, 1, "class, function or method: 'Session', 'App.dispatch_request', 'pkg.mod.func'", NULL},
    {"file_pattern", ACTION_ARG_STRING, 0, "glob restricting where references are looked for", NULL},
    {NULL, 0, 0, NULL, NULL}};
static const struct action_arg finish_args[] = {
    {"answer", ACTION_ARG_STRING, 1, "the final answer, citing evidence as path:start-end", NULL},
    {"finish_reason", ACTION_ARG_STRING, 1, "why the exploration can stop now", NULL},
    {NULL, 0, 0, NULL, NULL}};

const struct action_def action_builtin[] = {
    {"FindClass", "Find class definitions by name (exact, case-insensitive, dotted, then fuzzy).",
     find_class_args, action_find_class,
     "Use it when you know a class's name or part of it. Returns each definition: whole when short, else its "
     "signature, docstring and methods with their line spans.", "Class"},
    {"FindFunction", "Find function or method definitions by name, optionally within a class.",
     find_function_args, action_find_function,
     "Use it when you know a function's or method's name. Returns each whole definition with numbered lines "
     "(a very long one elided in the middle).", "Func"},
    {"FindCodeSnippet", "Find exact occurrences of a piece of code, across line breaks and indentation.",
     find_snippet_args, action_find_snippet,
     "Use it to find where a given line or block appears: a call, a constant, an error message. Returns each "
     "occurrence with the lines around it.", "Snippet"},
    {"SemanticSearch", "Search code and documentation by meaning.", semantic_args, NULL, NULL, "Semantic"},
    {"ViewCode", "Read files, line ranges or definitions with line numbers.", view_code_args, action_view_code,
     "Use it to read code once located: a file, a line range or a symbol. Returns the lines with numbers.", "View"},
    {"Outline", "List the definitions of a file or package with their line spans.", outline_args, action_outline,
     "Use it to see what a file or package defines before reading it. Returns its classes and functions with "
     "line spans.", "Outline"},
    {"ListFiles", "List indexed files with their sizes and line counts.", list_files_args, action_list_files,
     "Use it to see the repository's layout or find files by name. Returns paths with sizes and line counts.", "Files"},
    {"FindReferences", "Find callers, importers and subclasses of a symbol.", find_refs_args,
     action_find_references,
     "Use it to see who uses a symbol: callers, importers, subclasses. Returns each place with its line.", "Refs"},
    {"Finish", "Give the final answer and stop exploring.", finish_args, NULL, NULL, "Finish"},
};
const size_t action_nbuiltin = ARRAY_LEN(action_builtin);

/* The defaults of optional arguments worth naming, as the handlers apply them
 * (semantic_parse_category: no category is 'any'; ViewCode snaps only when
 * asked): an action that names one is the action that leaves it out. */
const struct action_arg_default action_arg_defaults[] = {
    {"SemanticSearch", "category", "any"},
    {"ViewCode", "snap_to_definition", "false"},
    {NULL, NULL, NULL},
};
