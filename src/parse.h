/*
 * parse: the contract between a language extractor (parse_<lang>.c) and the
 * indexer. An extractor turns one file's text into symbols, imports and call
 * sites; it never touches the database and keeps no global state, so files can
 * be parsed on several threads at once (each thread owns its TSParser).
 * Everything in a parse_result is owned by it; parse_result_free releases it.
 */
#ifndef DRQA_PARSE_H
#define DRQA_PARSE_H

#include <stddef.h>
#include <tree_sitter/api.h>

enum parse_kind { PARSE_CLASS, PARSE_FUNCTION, PARSE_METHOD, PARSE_VARIABLE };

struct parse_symbol {
    enum parse_kind kind;
    char *name;          /* 'run' */
    char *qualname;      /* 'Flask.run'; nested: 'outer.inner'; 'Outer.Inner.method' */
    int parent;          /* index into syms of the enclosing class/function, -1 at module level */
    int start_line;      /* 1-based, first decorator line when decorated */
    int end_line;        /* inclusive */
    int body_line;       /* line of the 'def'/'class' keyword */
    char *signature;     /* 'def run(self, host=None) -> None' / 'class Flask(App)'; NULL for variables */
    char *decorators;    /* newline-separated decorator expressions without '@', or NULL */
    char *docstring;     /* cleaned docstring text, or NULL */
    char *bases;         /* classes: base expressions as written, ", "-separated, or NULL */
    int is_async;
};

struct parse_import {
    int line;
    char *module;        /* dotted, without leading dots; "" for 'from . import x' */
    char *name;          /* 'from m import name' -> name; '*' for star; NULL for 'import m' */
    char *alias;         /* 'as' name or NULL */
    int level;           /* number of leading dots (relative import) */
};

struct parse_call {
    int line;
    int caller;          /* index into syms of the innermost enclosing function/class, -1 at module level */
    char *callee;        /* callee expression as written, e.g. 'self.dispatch_request', 'os.path.join' */
    int n;               /* call sites this one stands for: 1 as extracted, more once merged */
};

struct parse_result {
    struct parse_symbol *syms;   size_t nsyms;
    struct parse_import *imports; size_t nimports;
    struct parse_call *calls;    size_t ncalls;
    int parse_errors;            /* ERROR and MISSING nodes in the tree */
};

struct lang {
    const char *name;                    /* "python" */
    const char *const *extensions;       /* {".py", ".pyi", NULL} */
    const TSLanguage *(*language)(void);
    /* Extracts from text[0..len) (valid UTF-8) with a parser the caller owns.
     * Returns 0, or -1 when tree-sitter produced no tree at all. */
    int (*extract)(TSParser *parser, const char *text, size_t len, struct parse_result *out);
    /* Dotted module name for a repository-relative path ('pkg/sub/mod.py' ->
     * 'pkg.sub.mod', 'pkg/__init__.py' -> 'pkg'); malloc'd, or NULL. */
    char *(*module_name)(const char *relpath);
    /* Optional, for languages whose imports name files by path ('./b' in JS,
     * 'example.com/m/pkg' in Go) rather than by dotted module: the module name
     * (as module_name gives it) that the import 'module' written in the file at
     * relpath names; exists(ctx, name) tells whether a module name is in the
     * repository. Malloc'd, or NULL when it names nothing in the repository.
     * NULL hook: imports are dotted names with a level, resolved like Python's. */
    char *(*import_module)(const char *relpath, const char *module,
                           int (*exists)(void *ctx, const char *name), void *ctx);
    /* Text kinds (parse_text.c): language is NULL, extract gives no symbols
     * and the file is cut into text chunks (chunk_text). names: whole file
     * names of the kind, besides the extensions. skip: files of this kind
     * are listed as skipped with this reason (lock files). */
    const char *const *names;
    const char *skip;
    /* Cross-file resolution (index_resolve.c): the language whose definitions
     * a call may fall back on, when not this one (TypeScript: "javascript");
     * package_dirs: a module is a directory whose files share their
     * top-level names (Go). */
    const char *family;
    int package_dirs;
};

/* Per language of src/languages.def, compiled in or not: its extensions
 * (parse_extensions_<name>, NULL-terminated) and its extractor. An extractor
 * takes its name and extensions from the table: PARSE_LANG_OF(go) in the
 * initializer of parse_go. */
#define DRQA_LANGUAGE(name, package, version, folder, exts, extractor, need) \
    extern const char *const parse_extensions_##name[]; \
    extern const struct lang extractor;
#include "languages.def"
#undef DRQA_LANGUAGE
#define PARSE_LANG_OF(lang_) .name = #lang_, .extensions = parse_extensions_##lang_

/* The languages compiled in, NULL-terminated. */
extern const struct lang *const parse_languages[];
/* The text kinds (Markdown, reStructuredText, TOML, YAML, INI/CFG, plain
 * text, lock files), NULL-terminated. */
extern const struct lang *const parse_text_kinds[];
/* The language or text kind for a path by its name or extension, or NULL
 * when the file is neither source nor text the index reads. */
const struct lang *parse_lang_for_path(const char *path);
/* 1 for a text kind (no grammar). */
int parse_is_text(const struct lang *l);
/* Why a text file is not indexed when it looks generated or minified (a line
 * longer than PARSE_TEXT_MAX_LINE bytes): a malloc'd reason, else NULL. */
#define PARSE_TEXT_MAX_LINE 2000
char *parse_text_generated(const char *text, size_t len);
/* Checks every grammar's ABI against the linked libtree-sitter. Returns 0, or -1
 * with a message naming the grammar, its ABI and what to do. */
int parse_check_grammars(char *err, size_t errlen);
void parse_result_free(struct parse_result *r);

/* Merges the calls of r that have the same caller and callee into the first
 * of them (its line), which counts them in n; the order is kept. A function
 * that calls the same thing many times (generated rule tables and tests do,
 * thousands of times) is one edge in the index, not one per site. */
void parse_merge_calls(struct parse_result *r);

#endif
