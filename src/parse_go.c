/*
 * parse_go: the Go extractor. One tree-sitter parse, then one walk over the
 * tree with a TSTreeCursor and a heap stack of frames (never recursion),
 * collecting into a parse_result:
 *   - package-level functions (PARSE_FUNCTION, 'func Map[T any](xs []T) []T');
 *   - methods (PARSE_METHOD, qualname 'Type.Method' for value and pointer
 *     receivers alike, a child of the type when it is declared in the file);
 *   - type declarations as PARSE_CLASS: 'type Store struct', 'type Counter
 *     interface', 'type ID int64', 'type Alias = Store'; embedded struct fields
 *     and embedded interfaces are the bases ('sync.Mutex, Base'); interface
 *     methods as PARSE_METHOD of the interface;
 *   - package-level var and const names as PARSE_VARIABLE;
 *   - the '//' comment lines right above a declaration as its docstring;
 *   - imports: module = the import path, alias = the name written before it
 *     ('sq', '_', '.'), name NULL;
 *   - calls: the callee as written ('fmt.Errorf', 's.Lock'), and composite
 *     literals of named types ('&Store{...}' calls 'Store'), like 'new' in Java.
 * Function literals define nothing; their calls belong to the enclosing function.
 * A module is a package directory: 'inventory/store.go' -> 'inventory'.
 */
#include <config.h> /* autoconf: DRQA_GRAMMAR_<lang> */
#if DRQA_GRAMMAR_go /* else the grammar is left out (src/languages.def) */
#include "parse.h"
#include "parse_common.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GO_EXPR_CAP 200

/* The node types and fields the extractor looks for (parse_common.h, PC_IDS). */
#define GO_SYMBOLS(S, N) \
    S(function_declaration) S(method_declaration) S(type_declaration) S(type_spec) S(type_alias) \
    S(struct_type) S(interface_type) S(field_declaration) S(field_declaration_list) S(type_elem) \
    S(method_elem) S(var_declaration) S(var_spec) S(const_declaration) S(const_spec) S(import_spec) \
    S(call_expression) S(composite_literal) S(comment) S(func_literal) S(type_identifier) S(qualified_type) \
    S(generic_type) S(pointer_type) S(identifier) S(source_file) S(parameter_declaration) S(type_arguments)
#define GO_FIELDS(F) \
    F(name) F(body) F(type) F(receiver) F(path) F(function) F(result)
PC_IDS(tree_sitter_go, GO_SYMBOLS, GO_FIELDS)

/* One level of the walk. */
struct frame {
    PC_FRAME_HEAD; /* node, sym, scope, def: set by pc_extract */
    TSNode before;    /* previous named sibling */
    TSNode doc_first; /* first comment of the run of adjacent comment lines ending at 'before' */
    TSNode prev, run; /* the same two, for this node's children as they are visited */
};

struct ctx {
    struct pc_ctx pc;     /* the text and the result */
    struct buf tmp;
};

/* The frame stack pc_extract keeps, one per level of the walk. */
static struct frame *frames(const struct ctx *c) { return c->pc.frames; }

/* ---- text helpers ---- */

/* pc_norm_c with Go's quotes: '', "" and raw ``. */
static void norm_text(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out)
{
    pc_norm_c(src, a, b, max, out, PC_QUOTE_RAW_BACKTICK);
}

static char *range_norm(struct ctx *c, uint32_t a, uint32_t b, size_t max)
{
    struct buf s = BUF_INIT;
    norm_text(c->pc.src, a, b, max, &s);
    char *r = buf_take(&s);
    buf_free(&s);
    return r;
}

/* A type without pointer stars and type arguments: '*List[T]' -> 'List'. */
static void type_name(struct ctx *c, TSNode n, struct buf *out)
{
    buf_reset(&c->tmp);
    pc_node_norm(&c->pc, n, GO_EXPR_CAP, PC_QUOTE_RAW_BACKTICK, &c->tmp);
    pc_strip_nested(buf_str(&c->tmp), "[]", "*", out);
}

/* The comment run [first..last] as a docstring: '//' and one space removed
 * from each line; a block comment loses its delimiters. */
static char *doc_text(const struct ctx *c, TSNode first, TSNode last)
{
    uint32_t a = ts_node_start_byte(first), b = ts_node_end_byte(last);
    if (b > c->pc.len) b = c->pc.len;
    if (a > b) a = b;
    struct buf r = BUF_INIT;
    const char *s = c->pc.src;
    int nl = 0;
    for (uint32_t i = a; i < b;) {
        uint32_t e = i;
        while (e < b && s[e] != '\n') e++;
        uint32_t q = i, t = e;
        while (q < t && pc_is_space(s[q])) q++;
        if (t - q >= 2 && s[q] == '/' && s[q + 1] == '/') {
            q += 2;
            if (q < t && s[q] == ' ') q++;
        } else if (t - q >= 2 && s[q] == '/' && s[q + 1] == '*') {
            q += 2;
        }
        while (t > q && pc_is_space(s[t - 1])) t--;
        if (t - q >= 2 && s[t - 2] == '*' && s[t - 1] == '/') t -= 2;
        while (t > q && pc_is_space(s[t - 1])) t--;
        if (nl) buf_addc(&r, '\n');
        buf_add(&r, s + q, t - q);
        nl = 1;
        i = e + 1;
    }
    return pc_trim_blank_lines(buf_take(&r));
}

/* The docstring of the node at frame k: the comment lines ending on the line
 * right above it. */
static char *doc_before(const struct ctx *c, size_t k)
{
    const struct frame *f = &frames(c)[k];
    if (ts_node_is_null(f->before) || ts_node_symbol(f->before) != id.comment) return NULL;
    if (ts_node_end_point(f->before).row + 1 != ts_node_start_point(f->node).row) return NULL;
    return doc_text(c, ts_node_is_null(f->doc_first) ? f->before : f->doc_first, f->before);
}

/* ---- result arrays ---- */

/* A symbol for the node at frame k (start line and doc from frame outer). */
static struct parse_symbol *add_sym(struct ctx *c, size_t k, size_t outer, enum parse_kind kind, int parent,
                                    TSNode name)
{
    TSNode n = frames(c)[k].node;
    struct parse_symbol *s =
        pc_add_symbol(&c->pc, kind, parent, pc_node_dup(&c->pc, name), NULL, frames(c)[outer].node, n, n);
    s->docstring = doc_before(c, outer);
    frames(c)[k].def = (int)(c->pc.out->nsyms - 1);
    return s;
}

/* A type declared at package level in this file, or -1. */
static int find_type(const struct ctx *c, const char *name)
{
    for (size_t i = 0; i < c->pc.out->nsyms; i++)
        if (c->pc.out->syms[i].kind == PARSE_CLASS && c->pc.out->syms[i].parent < 0 &&
            strcmp(c->pc.out->syms[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- definitions ---- */

static void add_func(struct ctx *c, size_t k)
{
    struct frame *f = &frames(c)[k];
    TSNode n = f->node;
    TSNode name = pc_name_of(n, id.f_name);
    if (ts_node_is_null(name)) return;
    TSNode body = ts_node_child_by_field_id(n, id.f_body);
    int parent = -1;
    char *qual = NULL;
    if (f->sym == id.method_declaration) {
        /* the receiver's type: 'func (s *Store[T]) M()' is a method of Store */
        TSNode recv = ts_node_child_by_field_id(n, id.f_receiver);
        TSNode pd = ts_node_is_null(recv) ? recv : ts_node_named_child(recv, 0);
        TSNode t = ts_node_is_null(pd) ? pd : ts_node_child_by_field_id(pd, id.f_type);
        if (!ts_node_is_null(t)) {
            struct buf tn = BUF_INIT;
            type_name(c, t, &tn);
            if (tn.len) {
                parent = find_type(c, tn.data);
                if (parent < 0) {
                    char *nm = pc_node_dup(&c->pc, name);
                    qual = xasprintf("%s.%s", tn.data, nm);
                    free(nm);
                }
            }
            buf_free(&tn);
        }
    }
    struct parse_symbol *s = add_sym(c, k, k, f->sym == id.method_declaration ? PARSE_METHOD : PARSE_FUNCTION,
                                     parent, name);
    if (qual) {
        free(s->qualname);
        s->qualname = qual;
    }
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    s->signature = range_norm(c, a, ts_node_is_null(body) ? b : ts_node_start_byte(body), 0);
}

/* Bases of a struct or interface type: embedded fields and interfaces. */
static char *embedded_of(struct ctx *c, TSNode type)
{
    struct buf bases = BUF_INIT;
    TSSymbol ts = ts_node_symbol(type);
    TSNode list = type;
    if (ts == id.struct_type) {
        list = (TSNode){0};
        for (uint32_t k = 0, nk = ts_node_named_child_count(type); k < nk; k++)
            if (ts_node_symbol(ts_node_named_child(type, k)) == id.field_declaration_list)
                list = ts_node_named_child(type, k);
        if (ts_node_is_null(list)) return NULL;
    }
    for (uint32_t k = 0, nk = ts_node_named_child_count(list); k < nk; k++) {
        TSNode fd = ts_node_named_child(list, k);
        TSNode t = (TSNode){0};
        if (ts_node_symbol(fd) == id.field_declaration && ts_node_is_null(ts_node_child_by_field_id(fd, id.f_name)))
            t = ts_node_child_by_field_id(fd, id.f_type);
        else if (ts_node_symbol(fd) == id.type_elem && ts_node_named_child_count(fd) == 1)
            t = ts_node_named_child(fd, 0);
        if (ts_node_is_null(t)) continue;
        TSSymbol s = ts_node_symbol(t);
        if (s != id.type_identifier && s != id.qualified_type && s != id.generic_type && s != id.pointer_type)
            continue; /* constraints such as '~int | ~string' embed nothing */
        if (bases.len) buf_adds(&bases, ", ");
        type_name(c, t, &bases);
    }
    char *r = bases.len ? buf_take(&bases) : NULL;
    buf_free(&bases);
    return r;
}

static void add_type(struct ctx *c, size_t k)
{
    struct frame *f = &frames(c)[k];
    TSNode n = f->node;
    TSNode name = pc_name_of(n, id.f_name);
    if (ts_node_is_null(name)) return;
    TSNode type = ts_node_child_by_field_id(n, id.f_type);
    /* 'type X struct{}' alone: the declaration is the outer node; in 'type ( ... )' each spec is */
    size_t outer = k;
    if (k >= 1 && frames(c)[k - 1].sym == id.type_declaration && ts_node_named_child_count(frames(c)[k - 1].node) == 1)
        outer = k - 1;
    struct parse_symbol *s = add_sym(c, k, outer, PARSE_CLASS, -1, name);
    s->body_line = pc_line_of(ts_node_start_point(n));
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    struct buf sig = BUF_INIT;
    buf_adds(&sig, "type ");
    if (!ts_node_is_null(type) && (ts_node_symbol(type) == id.struct_type || ts_node_symbol(type) == id.interface_type)) {
        /* the header: name, type parameters, keyword */
        norm_text(c->pc.src, a, ts_node_start_byte(type), 0, &sig);
        buf_adds(&sig, ts_node_symbol(type) == id.struct_type ? " struct" : " interface");
        s->bases = embedded_of(c, type);
    } else {
        norm_text(c->pc.src, a, b, GO_EXPR_CAP, &sig);
    }
    s->signature = buf_take(&sig);
    buf_free(&sig);
}

/* A method listed in an interface type. */
static void add_method_elem(struct ctx *c, size_t k)
{
    int scope = frames(c)[k].scope;
    if (scope < 0 || c->pc.out->syms[scope].kind != PARSE_CLASS) return;
    TSNode name = pc_name_of(frames(c)[k].node, id.f_name);
    if (ts_node_is_null(name)) return;
    struct parse_symbol *s = add_sym(c, k, k, PARSE_METHOD, scope, name);
    uint32_t a, b;
    pc_node_range(&c->pc, frames(c)[k].node, &a, &b);
    s->signature = range_norm(c, a, b, 0);
}

/* Package-level var and const names. */
static void add_vars(struct ctx *c, size_t k)
{
    if (k < 2 || frames(c)[k - 1].scope >= 0) return;
    TSSymbol ds = frames(c)[k - 1].sym;
    if ((ds != id.var_declaration && ds != id.const_declaration) || frames(c)[k - 2].sym != id.source_file) return;
    size_t outer = ts_node_named_child_count(frames(c)[k - 1].node) == 1 ? k - 1 : k;
    TSNode n = frames(c)[k].node;
    for (uint32_t i = 0, ni = ts_node_named_child_count(n); i < ni; i++) {
        TSNode nm = ts_node_named_child(n, i);
        if (ts_node_symbol(nm) != id.identifier) continue;
        uint32_t a, b;
        pc_node_range(&c->pc, nm, &a, &b);
        if (a >= b || (b - a == 1 && c->pc.src[a] == '_')) continue;
        struct parse_symbol *s = add_sym(c, k, outer, PARSE_VARIABLE, -1, nm);
        s->body_line = pc_line_of(ts_node_start_point(nm));
        frames(c)[k].def = -1;
    }
}

/* ---- imports and calls ---- */

static void add_import_spec(struct ctx *c, TSNode n)
{
    TSNode path = ts_node_child_by_field_id(n, id.f_path);
    if (ts_node_is_null(path)) return;
    TSNode name = ts_node_child_by_field_id(n, id.f_name);
    uint32_t a, b;
    pc_node_range(&c->pc, path, &a, &b);
    if (b - a >= 2) {
        a++;
        b--;
    }
    pc_add_import(&c->pc, pc_line_of(ts_node_start_point(n)), xstrndup(c->pc.src + a, b - a), NULL,
                  ts_node_is_null(name) ? NULL : pc_node_dup(&c->pc, name), 0);
}

static void add_call_expr(struct ctx *c, size_t k)
{
    TSNode fn = ts_node_child_by_field_id(frames(c)[k].node, id.f_function);
    if (ts_node_is_null(fn) || ts_node_start_byte(fn) >= ts_node_end_byte(fn)) return;
    TSSymbol s = ts_node_symbol(fn);
    if (s == id.func_literal) return; /* 'func() { ... }()' names nothing */
    uint32_t a, b;
    pc_node_range(&c->pc, fn, &a, &b);
    pc_add_call(&c->pc, (int)ts_node_end_point(fn).row + 1, frames(c)[k].scope, range_norm(c, a, b, GO_EXPR_CAP));
}

static void add_composite(struct ctx *c, size_t k)
{
    TSNode t = ts_node_child_by_field_id(frames(c)[k].node, id.f_type);
    if (ts_node_is_null(t)) return;
    TSSymbol s = ts_node_symbol(t);
    if (s != id.type_identifier && s != id.qualified_type && s != id.generic_type) return;
    struct buf tn = BUF_INIT;
    type_name(c, t, &tn);
    if (tn.len) pc_add_call(&c->pc, pc_line_of(ts_node_start_point(t)), frames(c)[k].scope, buf_take(&tn));
    buf_free(&tn);
}

/* ---- the walk ---- */

static void visit(void *arg, TSTreeCursor *cur, int count_errors)
{
    struct ctx *c = arg;
    size_t k = c->pc.nframes - 1;
    struct frame *f = &frames(c)[k];
    f->before = f->doc_first = f->prev = f->run = (TSNode){0};
    TSSymbol s = f->sym;
    if (k >= 1) {
        struct frame *p = f - 1;
        f->scope = p->def >= 0 ? p->def : p->scope;
        if (ts_node_is_named(f->node)) {
            f->before = p->prev;
            f->doc_first = p->run;
            /* a comment continues the run when it starts on the line after the previous one */
            if (s == id.comment) {
                if (ts_node_is_null(p->prev) || ts_node_symbol(p->prev) != id.comment ||
                    ts_node_end_point(p->prev).row + 1 != ts_node_start_point(f->node).row)
                    p->run = f->node;
            } else {
                p->run = (TSNode){0};
            }
            p->prev = f->node;
        }
    }
    if (count_errors && (s == (TSSymbol)-1 || ts_node_is_missing(f->node))) c->pc.out->parse_errors++;
    if (s == id.call_expression) add_call_expr(c, k);
    else if (s == id.composite_literal) add_composite(c, k);
    else if (s == id.import_spec) add_import_spec(c, f->node);
    else if (f->scope < 0 && (s == id.function_declaration || s == id.method_declaration)) add_func(c, k);
    else if (f->scope < 0 && (s == id.type_spec || s == id.type_alias) && k >= 1 &&
             frames(c)[k - 1].sym == id.type_declaration)
        add_type(c, k);
    else if (s == id.method_elem) add_method_elem(c, k);
    else if (s == id.var_spec || s == id.const_spec) add_vars(c, k);
}

static const struct pc_walk walk = {sizeof(struct frame), visit, NULL, NULL};

static int go_extract(TSParser *parser, const char *text, size_t len, struct parse_result *out)
{
    pthread_once(&id_once, id_init);
    struct ctx c = {0};
    int rc = pc_extract(&walk, tree_sitter_go(), parser, text, len, out, &c.pc, &c);
    buf_free(&c.tmp);
    return rc;
}

/* ---- modules ---- */

/* A Go package is its directory: 'inventory/store.go' -> 'inventory'; files at
 * the root make the module ''. */
static char *go_module_name(const char *relpath)
{
    if (!relpath) return NULL;
    const char *slash = strrchr(relpath, '/');
    return xstrndup(relpath, slash ? (size_t)(slash - relpath) : 0);
}

/* An import path names a package directory of the repository when a trailing
 * part of it sits under a directory above the importing file: the repository's
 * own module prefix ('example.com/shop/') is not known here, and go.mod may be
 * in a subdirectory. 'example.com/shop/inventory' written in
 * 'go/cmd/shopd/main.go' names 'go/inventory'. The longest trailing part wins,
 * then the directory nearest the root. */
static char *go_import_module(const char *relpath, const char *module, int (*exists)(void *, const char *),
                              void *ctx)
{
    if (!relpath || !module || !*module) return NULL;
    const char *slash = strrchr(relpath, '/');
    size_t dirlen = slash ? (size_t)(slash - relpath) : 0;
    for (const char *tail = module; tail; tail = strchr(tail, '/') ? strchr(tail, '/') + 1 : NULL) {
        if (!*tail) break;
        /* ancestors of the importing file's directory, the root ('') first */
        for (size_t d = 0; d <= dirlen; d++) {
            if (d != 0 && d != dirlen && relpath[d] != '/') continue;
            if (d == dirlen && d != 0 && relpath[d] != '/') continue;
            char *cand = d ? xasprintf("%.*s/%s", (int)d, relpath, tail) : xstrdup(tail);
            if (exists(ctx, cand)) return cand;
            free(cand);
        }
    }
    return NULL;
}

const struct lang parse_go = {
    PARSE_LANG_OF(go),
    .language = tree_sitter_go,
    .extract = go_extract,
    .module_name = go_module_name,
    .import_module = go_import_module,
    .package_dirs = 1,
};

#endif
