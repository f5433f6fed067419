/*
 * parse_common: helpers shared by the language extractors (parse_<lang>.c).
 * Each extractor keeps its own tree-sitter symbol table, walk frames and
 * language rules; what they all need in the same form lives here: the text
 * being parsed and the result being filled (struct pc_ctx, embedded in every
 * extractor's context), node lines and text, whitespace/comment normalisation
 * for C-like languages, '/ ** ... * /' doc comment cleaning, the growable
 * symbol/import/call arrays of a parse_result, the cursor walk that drives
 * an extractor's visit function without recursion, and the extract driver
 * around it (parse, walk with a frame per level, free).
 */
#ifndef DRQA_PARSE_COMMON_H
#define DRQA_PARSE_COMMON_H

#include "parse.h"
#include "util.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The source text and the result an extractor fills, and the state of the
 * walk pc_extract drives: the frame stack (one language-defined frame per
 * level, the deepest last) and a cursor extractors reuse for small sub-walks. */
struct pc_ctx {
    const char *src;
    uint32_t len;
    struct parse_result *out;
    size_t cap_syms, cap_imports, cap_calls;
    void *frames;
    size_t nframes, cap_frames;
    TSTreeCursor aux;
};

/* A language's node type and field ids, looked up by name once per process.
 * The extractor names them once, as two lists:
 *   #define GO_SYMBOLS(S, N) S(function_declaration) S(type_spec) ...
 *   #define GO_FIELDS(F) F(name) F(body) ...
 * S(type): member 'type' for the node type of that name; N(member, "type"):
 * for a type whose name is a C keyword ('class'); F(field): member f_field.
 * PC_IDS(tree_sitter_go, GO_SYMBOLS, GO_FIELDS) declares the grammar and
 * defines the table 'id' and id_init, to run with pthread_once(&id_once,
 * id_init). An extractor of several grammars declares its table type as
 * struct X PC_IDS_STRUCT(...) and fills one table per grammar with
 * PC_IDS_FILL(...) in a function of (struct X *ids, const TSLanguage *l). */
TSSymbol pc_symbol(const TSLanguage *l, const char *name);
TSFieldId pc_field(const TSLanguage *l, const char *name);
#define PC_SYM_MEMBER(s) TSSymbol s;
#define PC_SYM_MEMBER_AS(v, s) TSSymbol v;
#define PC_FIELD_MEMBER(f) TSFieldId f_##f;
#define PC_SYM_FILL(s) ids->s = pc_symbol(l, #s);
#define PC_SYM_FILL_AS(v, s) ids->v = pc_symbol(l, s);
#define PC_FIELD_FILL(f) ids->f_##f = pc_field(l, #f);
#define PC_IDS_STRUCT(SYMBOLS, FIELDS) { SYMBOLS(PC_SYM_MEMBER, PC_SYM_MEMBER_AS) FIELDS(PC_FIELD_MEMBER) }
#define PC_IDS_FILL(SYMBOLS, FIELDS) SYMBOLS(PC_SYM_FILL, PC_SYM_FILL_AS) FIELDS(PC_FIELD_FILL)
#define PC_IDS(language, SYMBOLS, FIELDS)                                   \
    const TSLanguage *language(void);                                       \
    static struct language##_ids PC_IDS_STRUCT(SYMBOLS, FIELDS) id;         \
    static pthread_once_t id_once = PTHREAD_ONCE_INIT;                      \
    static void id_init(void)                                               \
    {                                                                       \
        struct language##_ids *ids = &id;                                   \
        const TSLanguage *l = language();                                   \
        PC_IDS_FILL(SYMBOLS, FIELDS)                                        \
    }

/* 1-based line of a point. */
int pc_line_of(TSPoint p);
/* Last line a node covers: a node ending at column 0 ends on the line before. */
int pc_end_line_of(TSNode n);
/* A node's byte range, clamped to the text. */
void pc_node_range(const struct pc_ctx *c, TSNode n, uint32_t *a, uint32_t *b);
/* A node's text as a new string. */
char *pc_node_dup(const struct pc_ctx *c, TSNode n);
int pc_is_space(char ch);
/* d (malloc'd) without its leading and trailing blank lines, in place; NULL
 * (d freed) when nothing is left. */
char *pc_trim_blank_lines(char *d);
/* Normalised code text: the one space that stands for whitespace or a
 * comment dropped before ch, unless it would follow an opening bracket (or
 * the start, out->data[base]) or precede a closing one. */
void pc_space_between(struct buf *out, size_t base, char ch);

/* Quote characters of pc_norm_c: '"' and '\'' always; these add '`'. */
enum { PC_QUOTE_BACKTICK = 1,  /* '`' quotes with backslash escapes (JavaScript templates) */
       PC_QUOTE_RAW_BACKTICK = 2 /* '`' quotes without escapes (Go raw strings) */ };

/* Appends src[a..b) to out as one line: whitespace runs become one space (none
 * just inside brackets), '//' and '/ * * /' comments are dropped, string
 * literals are kept with line breaks turned into spaces. Stops at max bytes
 * (0 = no limit), never inside a UTF-8 sequence. */
void pc_norm_c(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out, int quotes);

/* Appends n's text to out, normalised as pc_norm_c does. */
void pc_node_norm(const struct pc_ctx *c, TSNode n, size_t max, int quotes, struct buf *out);
/* Appends s to out without what stands between brackets[0] and brackets[1]
 * (nested: type arguments), spaces and the characters of drop: a type's bare
 * name, 'Map<K, V>' -> 'Map'. */
void pc_strip_nested(const char *s, const char *brackets, const char *drop, struct buf *out);
/* The dotted module name of a repository-relative path: its directories and
 * the file name without extension joined by '.', '.' parts left out; a file
 * named package_file (without extension; NULL: none) stands for its
 * directory. 'pkg/sub/mod.py' -> 'pkg.sub.mod'. Malloc'd. */
char *pc_dotted_name(const char *path, const char *package_file);

/* The text of a '/ ** ... * /' comment s[0..n) without its delimiters, leading
 * '*'s and blank first/last lines; NULL when it is not one or is empty. */
char *pc_block_doc_clean(const char *s, size_t n);

/* Grows the array p of *cap elements of size bytes so that it holds more than
 * n: doubles, or starts at first. Returns the (possibly moved) array. */
void *pc_grow(void *p, size_t *cap, size_t n, size_t size, size_t first);

/* A new zeroed symbol at the end of c->out->syms. */
struct parse_symbol *pc_new_sym(struct pc_ctx *c);
void pc_add_import(struct pc_ctx *c, int line, char *module, char *name, char *alias, int level);
void pc_add_call(struct pc_ctx *c, int line, int scope, char *callee);
/* A new symbol of kind named name (taken), qualified under parent (or
 * qualname, taken, when not NULL), from the line where first starts to the
 * line where last ends, its keyword line where body_at starts. */
struct parse_symbol *pc_add_symbol(struct pc_ctx *c, enum parse_kind kind, int parent, char *name, char *qualname,
                                   TSNode first, TSNode last, TSNode body_at);
/* n's child of field f when it is there and not empty (a name), else a null node. */
TSNode pc_name_of(TSNode n, TSFieldId f);
/* 'parent.qualname' + '.' + name, or name at the top level (parent < 0). */
char *pc_qualify(const struct pc_ctx *c, int parent, const char *name);

/* Walks every node under the cursor's node (that node included) in document
 * order without recursion. step(ctx, cur, move) is called with move = 1 on
 * arriving at a node one level deeper (and at the start), 0 on moving to the
 * next sibling, -1 on going back up to the parent (cur then on the parent). */
void pc_walk(TSTreeCursor *cur, void *ctx, void (*step)(void *ctx, TSTreeCursor *cur, int move));
/* pc_walk whose step also says, on arriving at a node (move >= 0), whether to
 * go down into that node's children (nonzero) or on to its next sibling (0):
 * an extractor skips leaves without asking the cursor for a first child, and
 * subtrees that cannot hold anything it looks for. The return value of a
 * move = -1 step is ignored. */
void pc_walk_pruned(TSTreeCursor *cur, void *ctx, int (*step)(void *ctx, TSTreeCursor *cur, int move));

/* The members a language's walk frame starts with, struct frame {
 * PC_FRAME_HEAD; ... }: the node, its symbol, the innermost enclosing symbol
 * (index into the result's symbols, -1 at the top level) and the symbol the
 * node defines, the scope of its children (-1: none). pc_extract sets them,
 * scope and def to -1, before each visit. */
#define PC_FRAME_HEAD struct { TSNode node; TSSymbol sym; int scope; int def; }
struct pc_frame {
    PC_FRAME_HEAD;
};

/* A language's extract driver, shared (pc_extract): what differs is the
 * frame and the visit. */
struct pc_walk {
    size_t frame_size;   /* sizeof the language's struct frame */
    /* Called on arriving at each node, the cursor on it and the top frame its
     * own: pushed, not cleared, on going one level deeper; the previous
     * sibling's on moving to the next. count_errors: the tree has errors, so
     * ERROR and MISSING nodes are to be counted. */
    void (*visit)(void *ctx, TSTreeCursor *cur, int count_errors);
    /* Optional: whether to go down into the node just visited (else every
     * node is walked, see pc_walk_pruned). */
    int (*descend)(void *ctx);
    /* Optional: called after the walk, the tree still alive. */
    void (*after)(void *ctx, TSNode root);
};

/* Parses text[0..len) as lang with parser (set to lang when it is not) and
 * walks the tree with w: out cleared and filled through pc (the extractor's
 * context ctx embeds it), pc's frames and aux cursor freed after. Returns 0,
 * or -1 when there is no tree. */
int pc_extract(const struct pc_walk *w, const TSLanguage *lang, TSParser *parser, const char *text, size_t len,
               struct parse_result *out, struct pc_ctx *pc, void *ctx);

#endif
