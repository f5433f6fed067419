/*
 * parse_js: the JavaScript, TypeScript and TSX extractors. The three grammars
 * share node names, so one walk serves them all (symbol ids are looked up per
 * grammar). One tree-sitter parse, then one walk with a TSTreeCursor and a heap
 * stack of frames (never recursion), collecting into a parse_result:
 *   - classes (bases = extends + implements, type arguments dropped), methods
 *     (getters, setters, static, class-field arrow functions), fields;
 *   - functions: declarations, and function/arrow/class values bound to a name:
 *     'const f = () => {}', 'exports.f = function () {}', 'A.prototype.m = ...'
 *     ('A.m', a method of A when A is defined in the file), and the function
 *     members of 'module.exports = {...}';
 *   - TypeScript interfaces, type aliases and enums as PARSE_CLASS with their
 *     keyword in the signature ('interface Foo<T> extends Bar', 'type Id',
 *     'const enum Color'); interface members; overload signatures;
 *   - module-level variables outside any function;
 *   - the JSDoc comment right before a declaration as docstring, decorators;
 *   - imports with the module as written ('./a', '../b', 'c'): 'import x from'
 *     (name 'default', alias x), named imports, 'import * as ns' (name '*'),
 *     'export ... from', require('m') and import('m'), TS 'import x = require()';
 *   - calls: callee as written ('this.stack.push'), 'Foo' for 'new Foo()'.
 * Anonymous functions define nothing; their calls belong to the enclosing
 * symbol. Namespaces are transparent.
 */
#include <config.h> /* autoconf */
#if DRQA_GRAMMAR_javascript || DRQA_GRAMMAR_typescript || DRQA_GRAMMAR_tsx /* else the grammar is left out (src/languages.def) */
#include "parse.h"
#include "parse_common.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JS_EXPR_CAP 200

/* The node types and fields the extractor looks for (parse_common.h, PC_IDS). */
#define JS_SYMBOLS(S, N) \
    S(class_declaration) N(class_, "class") S(abstract_class_declaration) S(function_declaration) \
    S(generator_function_declaration) S(function_expression) N(function_, "function") S(generator_function) \
    S(arrow_function) S(method_definition) S(field_definition) S(public_field_definition) \
    S(lexical_declaration) S(variable_declaration) S(variable_declarator) S(assignment_expression) \
    S(expression_statement) S(member_expression) S(identifier) S(object) S(pair) S(export_statement) \
    S(import_statement) S(import_clause) S(named_imports) S(import_specifier) S(namespace_import) \
    S(namespace_export) S(export_clause) S(export_specifier) S(string) S(string_fragment) S(call_expression) \
    S(new_expression) S(comment) S(decorator) S(class_heritage) S(extends_clause) S(implements_clause) \
    S(class_body) S(interface_declaration) S(extends_type_clause) S(type_alias_declaration) \
    S(enum_declaration) S(method_signature) S(abstract_method_signature) S(property_signature) \
    S(function_signature) S(import_require_clause) S(object_pattern) S(shorthand_property_identifier_pattern) \
    S(pair_pattern) S(arguments) S(object_type) S(interface_body) S(parenthesized_expression) \
    S(template_string) S(jsx_opening_element) S(jsx_self_closing_element)
#define JS_FIELDS(F) \
    F(name) F(body) F(value) F(left) F(right) F(function) F(constructor) F(source) F(alias) F(declaration) \
    F(decorator) F(key) F(object) F(property) F(arguments)

/* Node symbols and field ids of one grammar. */
struct js_ids PC_IDS_STRUCT(JS_SYMBOLS, JS_FIELDS);

static void ids_fill(struct js_ids *ids, const TSLanguage *l)
{
    PC_IDS_FILL(JS_SYMBOLS, JS_FIELDS)
}

/* One level of the walk. */
struct frame {
    PC_FRAME_HEAD; /* node, sym, scope, def: set by pc_extract */
    int in_fn;     /* inside a function body (named or not): no module variables */
    TSNode before; /* previous named sibling (JSDoc lookup) */
    TSNode prev;   /* the last named child visited under this node */
};

struct ctx {
    const struct js_ids *id;
    struct pc_ctx pc;     /* the text and the result */
    struct buf tmp;
    /* TypeScript puts a member's decorators before it in the class body:
     * their text, the line of the first, and the class body they sit in */
    struct buf decs;
    int decs_line;
    TSNode decs_owner;
};

/* The frame stack pc_extract keeps, one per level of the walk. */
static struct frame *frames(const struct ctx *c) { return c->pc.frames; }

/* ---- text helpers ---- */

/* pc_norm_c with JavaScript's quotes: '', "" and template ``. */
static void norm_text(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out)
{
    pc_norm_c(src, a, b, max, out, PC_QUOTE_BACKTICK);
}

static int node_is(const struct ctx *c, TSNode n, const char *s)
{
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    return strlen(s) == b - a && memcmp(c->pc.src + a, s, b - a) == 0;
}

static char *node_norm(struct ctx *c, TSNode n, size_t max)
{
    buf_reset(&c->tmp);
    pc_node_norm(&c->pc, n, max, PC_QUOTE_BACKTICK, &c->tmp);
    return xstrdup(buf_str(&c->tmp));
}

/* A type or class expression without type arguments: 'Store<T>' -> 'Store'. */
static void type_name(struct ctx *c, TSNode n, struct buf *out)
{
    buf_reset(&c->tmp);
    pc_node_norm(&c->pc, n, JS_EXPR_CAP, PC_QUOTE_BACKTICK, &c->tmp);
    pc_strip_nested(buf_str(&c->tmp), "<>", "", out);
}

/* The string value of a string literal node (quotes removed, escapes kept). */
static char *string_value(const struct ctx *c, TSNode n)
{
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    if (b - a >= 2 && (c->pc.src[a] == '\'' || c->pc.src[a] == '"') && c->pc.src[b - 1] == c->pc.src[a]) {
        a++;
        b--;
    }
    return xstrndup(c->pc.src + a, b - a);
}

/* ---- result arrays ---- */

static void add_import(struct ctx *c, int line, char *module, char *name, char *alias)
{
    pc_add_import(&c->pc, line, module, name, alias, 0);
}

/* ---- node classes ---- */

static int is_function_value(const struct ctx *c, TSSymbol s)
{
    const struct js_ids *id = c->id;
    return s == id->arrow_function || s == id->function_expression || s == id->function_ ||
           s == id->generator_function;
}

static int is_class_value(const struct ctx *c, TSSymbol s) { return s == c->id->class_; }

/* Function-like nodes: their bodies are not module level. */
static int is_function_node(const struct ctx *c, TSSymbol s)
{
    const struct js_ids *id = c->id;
    return is_function_value(c, s) || s == id->function_declaration || s == id->generator_function_declaration ||
           s == id->method_definition;
}

/* ---- shared pieces of a definition ---- */

/* The JSDoc comment right before the frame at index k (only blank lines between). */
static char *jsdoc_before(const struct ctx *c, size_t k)
{
    TSNode prev = frames(c)[k].before;
    if (ts_node_is_null(prev) || ts_node_symbol(prev) != c->id->comment) return NULL;
    if ((int)ts_node_end_point(prev).row + 2 < pc_line_of(ts_node_start_point(frames(c)[k].node))) return NULL;
    uint32_t a, b;
    pc_node_range(&c->pc, prev, &a, &b);
    return pc_block_doc_clean(c->pc.src + a, b - a);
}

/* Appends the decorator expressions (without '@') that are children of n. */
static void decorators_of(struct ctx *c, TSNode n, struct buf *decs)
{
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode d = ts_node_named_child(n, k);
        if (ts_node_symbol(d) != c->id->decorator) continue;
        uint32_t a, b;
        pc_node_range(&c->pc, d, &a, &b);
        while (a < b && (c->pc.src[a] == '@' || pc_is_space(c->pc.src[a]))) a++;
        if (decs->len) buf_addc(decs, '\n');
        norm_text(c->pc.src, a, b, 0, decs);
    }
}

/* Header text of n from after its decorators up to stop (exclusive), one line,
 * without a trailing ';', ',', '=' or '{'. */
static char *header_text(struct ctx *c, TSNode n, uint32_t stop)
{
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode d = ts_node_named_child(n, k);
        if (ts_node_symbol(d) == c->id->decorator && ts_node_end_byte(d) > a) a = ts_node_end_byte(d);
        else if (ts_node_symbol(d) != c->id->comment) break;
    }
    if (stop > b) stop = b;
    if (stop < a) stop = a;
    struct buf s = BUF_INIT;
    norm_text(c->pc.src, a, stop, 0, &s);
    while (s.len && (s.data[s.len - 1] == ';' || s.data[s.len - 1] == ',' || s.data[s.len - 1] == '=' ||
                     s.data[s.len - 1] == ' '))
        s.len--;
    if (s.data) s.data[s.len] = 0;
    char *r = buf_take(&s);
    buf_free(&s);
    return r;
}

/* Bases of a class or interface: extends and implements types, without type arguments. */
static char *bases_of(struct ctx *c, TSNode n)
{
    const struct js_ids *id = c->id;
    struct buf bases = BUF_INIT;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode h = ts_node_named_child(n, k);
        TSSymbol hs = ts_node_symbol(h);
        if (hs == id->extends_type_clause) {
            /* interface Foo extends A, B<T> */
            for (uint32_t j = 0, nj = ts_node_named_child_count(h); j < nj; j++) {
                TSNode t = ts_node_named_child(h, j);
                if (ts_node_symbol(t) == id->comment) continue;
                if (bases.len) buf_adds(&bases, ", ");
                type_name(c, t, &bases);
            }
            continue;
        }
        if (hs != id->class_heritage) continue;
        for (uint32_t j = 0, nj = ts_node_named_child_count(h); j < nj; j++) {
            TSNode cl = ts_node_named_child(h, j);
            TSSymbol cs = ts_node_symbol(cl);
            if (cs == id->comment) continue;
            if (cs == id->extends_clause) {
                /* TS: 'extends A<T>' is a value and its type arguments */
                TSNode v = ts_node_child_by_field_id(cl, id->f_value);
                if (ts_node_is_null(v)) continue;
                if (bases.len) buf_adds(&bases, ", ");
                type_name(c, v, &bases);
            } else if (cs == id->implements_clause) {
                for (uint32_t i = 0, ni = ts_node_named_child_count(cl); i < ni; i++) {
                    TSNode t = ts_node_named_child(cl, i);
                    if (ts_node_symbol(t) == id->comment) continue;
                    if (bases.len) buf_adds(&bases, ", ");
                    type_name(c, t, &bases);
                }
            } else {
                /* JS: class_heritage holds the expression itself */
                if (bases.len) buf_adds(&bases, ", ");
                type_name(c, cl, &bases);
            }
        }
    }
    char *r = bases.len ? buf_take(&bases) : NULL;
    buf_free(&bases);
    return r;
}

/* A new symbol named by the frame at index k (the node) whose outer statement
 * (for start line, JSDoc and decorators) is the frame at index outer. */
static struct parse_symbol *add_sym(struct ctx *c, size_t k, size_t outer, enum parse_kind kind, int parent,
                                    char *name, char *qualname, TSNode name_node)
{
    TSNode n = frames(c)[k].node;
    struct parse_symbol *s = pc_add_symbol(&c->pc, kind, parent, name, qualname, frames(c)[outer].node, n,
                                           ts_node_is_null(name_node) ? n : name_node);
    s->docstring = jsdoc_before(c, outer);
    struct buf decs = BUF_INIT;
    if (outer >= 1 && !ts_node_is_null(c->decs_owner) && ts_node_eq(c->decs_owner, frames(c)[outer - 1].node)) {
        buf_adds(&decs, buf_str(&c->decs));
        s->start_line = c->decs_line;
        c->decs_owner = (TSNode){0};
    }
    for (size_t i = outer; i <= k; i++)
        if (frames(c)[i].sym == c->id->export_statement || i == k) decorators_of(c, frames(c)[i].node, &decs);
    s->decorators = decs.len ? buf_take(&decs) : NULL;
    buf_free(&decs);
    frames(c)[k].def = (int)(c->pc.out->nsyms - 1);
    return s;
}

/* The index of the outermost frame that still belongs to the statement of frame
 * k: up through 'export' and 'declare'. */
static size_t outer_of(const struct ctx *c, size_t k)
{
    while (k > 0 && frames(c)[k - 1].sym == c->id->export_statement) k--;
    return k;
}

/* Kind of a function defined under scope. */
static enum parse_kind fn_kind(const struct ctx *c, int scope, int in_class_body)
{
    if (in_class_body && scope >= 0 && c->pc.out->syms[scope].kind == PARSE_CLASS) return PARSE_METHOD;
    return PARSE_FUNCTION;
}

/* The start of the body of a function or class value, or its end. */
static uint32_t body_start(const struct ctx *c, TSNode n)
{
    TSNode body = ts_node_child_by_field_id(n, c->id->f_body);
    if (ts_node_is_null(body)) return ts_node_end_byte(n);
    /* an arrow function's expression body: the signature ends at '=>' */
    return ts_node_start_byte(body);
}

/* ---- definitions ---- */

/* class, function, interface, type alias and enum declarations */
static void add_declaration(struct ctx *c, size_t k)
{
    const struct js_ids *id = c->id;
    struct frame *f = &frames(c)[k];
    TSNode n = f->node;
    TSNode name = pc_name_of(n, id->f_name);
    if (ts_node_is_null(name)) return;
    TSSymbol s = f->sym;
    int is_class = s == id->class_declaration || s == id->abstract_class_declaration ||
                   s == id->interface_declaration || s == id->type_alias_declaration ||
                   s == id->enum_declaration || s == id->class_;
    size_t outer = outer_of(c, k);
    struct parse_symbol *y = add_sym(c, k, outer, is_class ? PARSE_CLASS : PARSE_FUNCTION, f->scope,
                                     pc_node_dup(&c->pc, name), NULL, name);
    uint32_t stop;
    if (s == id->type_alias_declaration) {
        TSNode v = ts_node_child_by_field_id(n, id->f_value);
        stop = ts_node_is_null(v) ? ts_node_end_byte(n) : ts_node_start_byte(v);
    } else {
        stop = body_start(c, n);
    }
    y->signature = header_text(c, n, stop);
    /* 'const enum' keeps its 'const' */
    if (s == id->enum_declaration) {
        uint32_t a = ts_node_start_byte(n);
        if (a >= 6 && memcmp(c->pc.src + a - 6, "const ", 6) == 0) {
            char *sig = xasprintf("const %s", y->signature);
            free(y->signature);
            y->signature = sig;
        }
    }
    if (is_class) y->bases = bases_of(c, n);
    uint32_t a = ts_node_start_byte(n);
    y->is_async = !is_class && ts_node_end_byte(n) - a > 6 && memcmp(c->pc.src + a, "async", 5) == 0 &&
                  pc_is_space(c->pc.src[a + 5]);
}

/* method_definition, method and property signatures, class fields */
static void add_member(struct ctx *c, size_t k)
{
    const struct js_ids *id = c->id;
    struct frame *f = &frames(c)[k];
    TSNode n = f->node;
    TSNode name = ts_node_child_by_field_id(n, id->f_name);
    if (ts_node_is_null(name)) name = ts_node_child_by_field_id(n, id->f_property); /* JS field_definition */
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return;
    TSSymbol s = f->sym;
    int scope = f->scope;
    int field = s == id->field_definition || s == id->public_field_definition || s == id->property_signature;
    TSNode value = field ? ts_node_child_by_field_id(n, id->f_value) : (TSNode){0};
    int fn_field = field && !ts_node_is_null(value) && is_function_value(c, ts_node_symbol(value));
    enum parse_kind kind = field && !fn_field ? PARSE_VARIABLE : fn_kind(c, scope, 1);
    struct parse_symbol *y = add_sym(c, k, k, kind, scope, node_norm(c, name, JS_EXPR_CAP), NULL, name);
    if (kind == PARSE_VARIABLE) return;
    uint32_t stop = fn_field ? body_start(c, value) : body_start(c, n);
    y->signature = header_text(c, n, stop);
    /* 'async' is the first keyword of the header after modifiers */
    for (uint32_t i = 0, ni = ts_node_child_count(n); i < ni; i++) {
        TSNode ch = ts_node_child(n, i);
        if (ts_node_start_byte(ch) >= ts_node_start_byte(name)) break;
        if (!ts_node_is_named(ch) && node_is(c, ch, "async")) y->is_async = 1;
    }
    if (fn_field) {
        TSNode ch = ts_node_child(value, 0);
        if (!ts_node_is_null(ch) && node_is(c, ch, "async")) y->is_async = 1;
    }
}

/* 'const f = () => {}', 'let A = class {}', module-level 'var x = 1' */
static void add_declarator(struct ctx *c, size_t k)
{
    const struct js_ids *id = c->id;
    struct frame *f = &frames(c)[k];
    TSNode n = f->node;
    TSNode name = ts_node_child_by_field_id(n, id->f_name);
    TSNode value = ts_node_child_by_field_id(n, id->f_value);
    if (ts_node_is_null(name) || ts_node_symbol(name) != id->identifier) return;
    TSSymbol vs = ts_node_is_null(value) ? 0 : ts_node_symbol(value);
    int fn = vs && is_function_value(c, vs), cls = vs && is_class_value(c, vs);
    if (!fn && !cls) {
        if (f->scope >= 0 || f->in_fn) return;
        /* require() bindings are imports, not variables */
        if (vs == id->call_expression) {
            TSNode callee = ts_node_child_by_field_id(value, id->f_function);
            if (!ts_node_is_null(callee) && node_is(c, callee, "require")) return;
        }
    }
    if (k == 0) return;
    size_t outer = outer_of(c, k - 1); /* the declaration statement, or its export */
    struct parse_symbol *y = add_sym(c, k, outer, fn ? PARSE_FUNCTION : cls ? PARSE_CLASS : PARSE_VARIABLE,
                                     f->scope, pc_node_dup(&c->pc, name), NULL, name);
    if (!fn && !cls) return;
    /* 'const f = async (a) =>': the keyword, then the declarator up to the body */
    TSNode decl = frames(c)[k - 1].node;
    struct buf sig = BUF_INIT;
    TSNode kw = ts_node_child(decl, 0);
    if (!ts_node_is_null(kw) && !ts_node_is_named(kw)) {
        uint32_t a, b;
        pc_node_range(&c->pc, kw, &a, &b);
        buf_add(&sig, c->pc.src + a, b - a);
        buf_addc(&sig, ' ');
    }
    char *h = header_text(c, n, body_start(c, value));
    buf_adds(&sig, h);
    free(h);
    y->signature = buf_take(&sig);
    buf_free(&sig);
    if (cls) y->bases = bases_of(c, value);
    TSNode first = ts_node_child(value, 0);
    if (fn && !ts_node_is_null(first) && node_is(c, first, "async")) y->is_async = 1;
}

/* A top-level symbol named name defined earlier in the file, or -1. */
static int find_top(const struct ctx *c, const char *name)
{
    for (size_t i = c->pc.out->nsyms; i-- > 0;)
        if (c->pc.out->syms[i].parent < 0 && strcmp(c->pc.out->syms[i].name, name) == 0 &&
            c->pc.out->syms[i].kind != PARSE_VARIABLE)
            return (int)i;
    return -1;
}

/* 'exports.f = ...', 'module.exports.f = ...', 'A.prototype.m = ...', 'A.m = ...'
 * in a statement of its own. */
static void add_assignment(struct ctx *c, size_t k)
{
    const struct js_ids *id = c->id;
    struct frame *f = &frames(c)[k];
    if (k == 0 || frames(c)[k - 1].sym != id->expression_statement) return;
    TSNode left = ts_node_child_by_field_id(f->node, id->f_left);
    TSNode right = ts_node_child_by_field_id(f->node, id->f_right);
    if (ts_node_is_null(left) || ts_node_is_null(right) || ts_node_symbol(left) != id->member_expression) return;
    TSSymbol rs = ts_node_symbol(right);
    int fn = is_function_value(c, rs), cls = is_class_value(c, rs);
    TSNode prop = ts_node_child_by_field_id(left, id->f_property);
    TSNode obj = ts_node_child_by_field_id(left, id->f_object);
    if (ts_node_is_null(prop) || ts_node_is_null(obj)) return;
    char *oname = node_norm(c, obj, JS_EXPR_CAP);
    char *pname = pc_node_dup(&c->pc, prop);
    size_t outer = k - 1;
    if (strcmp(oname, "module") == 0 && strcmp(pname, "exports") == 0) {
        /* module.exports = function name() {} / class Name {} */
        TSNode nm = (fn || cls) ? ts_node_child_by_field_id(right, id->f_name) : (TSNode){0};
        if (!ts_node_is_null(nm)) {
            struct parse_symbol *y = add_sym(c, k, outer, fn ? PARSE_FUNCTION : PARSE_CLASS, -1, pc_node_dup(&c->pc, nm),
                                             NULL, nm);
            y->signature = header_text(c, right, body_start(c, right));
            if (cls) y->bases = bases_of(c, right);
        }
        free(oname);
        free(pname);
        return;
    }
    int exported = strcmp(oname, "exports") == 0 || strcmp(oname, "module.exports") == 0;
    int parent = -1;
    char *qual = NULL;
    if (!exported) {
        if (!fn && !cls) goto out;
        /* 'A.prototype.m' and 'A.m' name a member of A */
        size_t ol = strlen(oname);
        if (ol > 10 && strcmp(oname + ol - 10, ".prototype") == 0) oname[ol - 10] = 0;
        for (const char *p = oname; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                  *p == '_' || *p == '$' || *p == '.'))
                goto out;
        if (strcmp(oname, "this") == 0 || strncmp(oname, "this.", 5) == 0) goto out;
        parent = strchr(oname, '.') ? -1 : find_top(c, oname);
        if (parent < 0) qual = xasprintf("%s.%s", oname, pname);
    } else if (!fn && !cls && (f->scope >= 0 || f->in_fn)) {
        goto out;
    }
    struct parse_symbol *y = add_sym(c, k, outer,
                                     fn ? (parent >= 0 ? PARSE_METHOD : PARSE_FUNCTION)
                                        : cls ? PARSE_CLASS : PARSE_VARIABLE,
                                     parent, pname, qual, prop);
    pname = NULL;
    if (fn || cls) {
        char *h = header_text(c, f->node, body_start(c, right));
        y->signature = h;
        if (cls) y->bases = bases_of(c, right);
        TSNode first = ts_node_child(right, 0);
        if (fn && !ts_node_is_null(first) && node_is(c, first, "async")) y->is_async = 1;
    }
out:
    free(oname);
    free(pname);
}

/* A member of 'module.exports = { ... }': functions become symbols. */
static void add_export_member(struct ctx *c, size_t k)
{
    const struct js_ids *id = c->id;
    if (k < 3 || frames(c)[k - 1].sym != id->object || frames(c)[k - 2].sym != id->assignment_expression ||
        frames(c)[k - 3].sym != id->expression_statement || frames(c)[k].scope >= 0)
        return;
    TSNode left = ts_node_child_by_field_id(frames(c)[k - 2].node, id->f_left);
    if (ts_node_is_null(left) || !node_is(c, left, "module.exports")) return;
    struct frame *f = &frames(c)[k];
    TSNode n = f->node;
    if (f->sym == id->method_definition) {
        TSNode name = ts_node_child_by_field_id(n, id->f_name);
        if (ts_node_is_null(name)) return;
        struct parse_symbol *y = add_sym(c, k, k, PARSE_FUNCTION, -1, pc_node_dup(&c->pc, name), NULL, name);
        y->signature = header_text(c, n, body_start(c, n));
        return;
    }
    TSNode key = ts_node_child_by_field_id(n, id->f_key);
    TSNode value = ts_node_child_by_field_id(n, id->f_value);
    if (ts_node_is_null(key) || ts_node_is_null(value) || !is_function_value(c, ts_node_symbol(value))) return;
    struct parse_symbol *y = add_sym(c, k, k, PARSE_FUNCTION, -1, node_norm(c, key, JS_EXPR_CAP), NULL, key);
    y->signature = header_text(c, n, body_start(c, value));
}

/* ---- imports ---- */

/* 'import * as ns' / 'export * as ns': every name of src, under ns when given. */
static void add_namespace(struct ctx *c, int line, TSNode src, TSNode n)
{
    TSNode al = ts_node_named_child(n, 0);
    add_import(c, line, string_value(c, src), xstrdup("*"), ts_node_is_null(al) ? NULL : pc_node_dup(&c->pc, al));
}

/* '{ a, b as c }' of an import or export from src: one import per specifier
 * (a child of list of symbol spec). Returns whether there was one. */
static int add_specifiers(struct ctx *c, int line, TSNode src, TSNode list, TSSymbol spec)
{
    int any = 0;
    for (uint32_t i = 0, ni = ts_node_named_child_count(list); i < ni; i++) {
        TSNode sp = ts_node_named_child(list, i);
        if (ts_node_symbol(sp) != spec) continue;
        TSNode nm = ts_node_child_by_field_id(sp, c->id->f_name);
        TSNode al = ts_node_child_by_field_id(sp, c->id->f_alias);
        if (ts_node_is_null(nm)) continue;
        add_import(c, line, string_value(c, src), pc_node_dup(&c->pc, nm),
                   ts_node_is_null(al) ? NULL : pc_node_dup(&c->pc, al));
        any = 1;
    }
    return any;
}

static void add_import_stmt(struct ctx *c, TSNode n)
{
    const struct js_ids *id = c->id;
    TSNode src = ts_node_child_by_field_id(n, id->f_source);
    int line = pc_line_of(ts_node_start_point(n));
    int any = 0;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode cl = ts_node_named_child(n, k);
        TSSymbol cs = ts_node_symbol(cl);
        if (cs == id->import_require_clause) {
            /* TS: import fs = require('fs') */
            TSNode s = ts_node_child_by_field_id(cl, id->f_source);
            TSNode al = ts_node_named_child(cl, 0);
            if (ts_node_is_null(s)) continue;
            add_import(c, line, string_value(c, s), NULL,
                       !ts_node_is_null(al) && ts_node_symbol(al) == id->identifier ? pc_node_dup(&c->pc, al) : NULL);
            any = 1;
            continue;
        }
        if (cs != id->import_clause || ts_node_is_null(src)) continue;
        for (uint32_t j = 0, nj = ts_node_named_child_count(cl); j < nj; j++) {
            TSNode part = ts_node_named_child(cl, j);
            TSSymbol ps = ts_node_symbol(part);
            if (ps == id->identifier) {
                add_import(c, line, string_value(c, src), xstrdup("default"), pc_node_dup(&c->pc, part));
                any = 1;
            } else if (ps == id->namespace_import) {
                add_namespace(c, line, src, part);
                any = 1;
            } else if (ps == id->named_imports) {
                any |= add_specifiers(c, line, src, part, id->import_specifier);
            }
        }
    }
    if (!any && !ts_node_is_null(src)) add_import(c, line, string_value(c, src), NULL, NULL);
}

/* 'export { a as b } from', 'export * from', 'export * as ns from' */
static void add_export_from(struct ctx *c, TSNode n)
{
    const struct js_ids *id = c->id;
    TSNode src = ts_node_child_by_field_id(n, id->f_source);
    if (ts_node_is_null(src)) return;
    int line = pc_line_of(ts_node_start_point(n));
    int any = 0;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode cl = ts_node_named_child(n, k);
        TSSymbol cs = ts_node_symbol(cl);
        if (cs == id->namespace_export) {
            add_namespace(c, line, src, cl);
            any = 1;
        } else if (cs == id->export_clause) {
            any |= add_specifiers(c, line, src, cl, id->export_specifier);
        }
    }
    if (!any) add_import(c, line, string_value(c, src), xstrdup("*"), NULL);
}

/* require('m') / import('m') with one string argument: an import, not a call.
 * A 'const x = require()' or 'const {a, b: c} = require()' names the bindings. */
static int add_require(struct ctx *c, size_t k, TSNode fn)
{
    const struct js_ids *id = c->id;
    TSNode n = frames(c)[k].node;
    int is_import = node_is(c, fn, "import");
    if (!is_import && !(ts_node_symbol(fn) == id->identifier && node_is(c, fn, "require"))) return 0;
    TSNode args = ts_node_child_by_field_id(n, id->f_arguments);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) != 1) return 0;
    TSNode s = ts_node_named_child(args, 0);
    if (ts_node_symbol(s) != id->string) return 0;
    int line = pc_line_of(ts_node_start_point(n));
    TSNode bind = (TSNode){0};
    if (!is_import && k > 0 && frames(c)[k - 1].sym == id->variable_declarator) {
        TSNode v = ts_node_child_by_field_id(frames(c)[k - 1].node, id->f_value);
        if (!ts_node_is_null(v) && ts_node_eq(v, n)) bind = ts_node_child_by_field_id(frames(c)[k - 1].node, id->f_name);
    }
    if (!ts_node_is_null(bind) && ts_node_symbol(bind) == id->identifier) {
        add_import(c, line, string_value(c, s), NULL, pc_node_dup(&c->pc, bind));
    } else if (!ts_node_is_null(bind) && ts_node_symbol(bind) == id->object_pattern) {
        int any = 0;
        for (uint32_t i = 0, ni = ts_node_named_child_count(bind); i < ni; i++) {
            TSNode p = ts_node_named_child(bind, i);
            TSSymbol ps = ts_node_symbol(p);
            if (ps == id->shorthand_property_identifier_pattern) {
                add_import(c, line, string_value(c, s), pc_node_dup(&c->pc, p), NULL);
                any = 1;
            } else if (ps == id->pair_pattern) {
                TSNode key = ts_node_child_by_field_id(p, id->f_key);
                TSNode val = ts_node_child_by_field_id(p, id->f_value);
                if (ts_node_is_null(key)) continue;
                add_import(c, line, string_value(c, s), pc_node_dup(&c->pc, key),
                           !ts_node_is_null(val) && ts_node_symbol(val) == id->identifier ? pc_node_dup(&c->pc, val) : NULL);
                any = 1;
            }
        }
        if (!any) add_import(c, line, string_value(c, s), NULL, NULL);
    } else {
        add_import(c, line, string_value(c, s), NULL, NULL);
    }
    return 1;
}

/* ---- calls ---- */

static void add_call_expr(struct ctx *c, size_t k)
{
    const struct js_ids *id = c->id;
    struct frame *f = &frames(c)[k];
    TSNode fn = ts_node_child_by_field_id(f->node, id->f_function);
    if (ts_node_is_null(fn) || ts_node_start_byte(fn) >= ts_node_end_byte(fn)) return;
    if (add_require(c, k, fn)) return;
    TSSymbol s = ts_node_symbol(fn);
    /* an immediately invoked function names nothing */
    if (is_function_value(c, s) || s == id->parenthesized_expression) return;
    TSPoint e = ts_node_end_point(fn);
    pc_add_call(&c->pc, (int)e.row + 1, f->scope, node_norm(c, fn, JS_EXPR_CAP));
}

static void add_new_expr(struct ctx *c, size_t k)
{
    struct frame *f = &frames(c)[k];
    TSNode fn = ts_node_child_by_field_id(f->node, c->id->f_constructor);
    if (ts_node_is_null(fn) || ts_node_start_byte(fn) >= ts_node_end_byte(fn)) return;
    if (is_function_value(c, ts_node_symbol(fn)) || is_class_value(c, ts_node_symbol(fn))) return;
    struct buf callee = BUF_INIT;
    type_name(c, fn, &callee);
    if (callee.len) pc_add_call(&c->pc, pc_line_of(ts_node_start_point(fn)), f->scope, buf_take(&callee));
    buf_free(&callee);
}

/* '<CartView .../>': a component (capitalised name) is called */
static void add_jsx(struct ctx *c, size_t k)
{
    struct frame *f = &frames(c)[k];
    TSNode name = pc_name_of(f->node, c->id->f_name);
    if (ts_node_is_null(name)) return;
    char first = c->pc.src[ts_node_start_byte(name)];
    if (first < 'A' || first > 'Z') return;
    pc_add_call(&c->pc, pc_line_of(ts_node_start_point(name)), f->scope, node_norm(c, name, JS_EXPR_CAP));
}

/* ---- the walk ---- */

static void visit(void *arg, TSTreeCursor *cur, int count_errors)
{
    struct ctx *c = arg;
    const struct js_ids *id = c->id;
    size_t k = c->pc.nframes - 1;
    struct frame *f = &frames(c)[k];
    f->in_fn = 0;
    f->before = (TSNode){0};
    f->prev = (TSNode){0};
    TSSymbol s = f->sym;
    TSSymbol ps = 0;
    if (k >= 1) {
        struct frame *p = f - 1;
        f->scope = p->def >= 0 ? p->def : p->scope;
        f->in_fn = p->in_fn || is_function_node(c, p->sym);
        f->before = p->prev;
        ps = p->sym;
        if (ts_node_is_named(f->node) && s != id->decorator) p->prev = f->node;
        if (p->sym == id->class_body && ts_node_is_named(f->node) && s != id->comment) {
            if (s == id->decorator) {
                if (ts_node_is_null(c->decs_owner) || !ts_node_eq(c->decs_owner, p->node)) {
                    buf_reset(&c->decs);
                    c->decs_owner = p->node;
                    c->decs_line = pc_line_of(ts_node_start_point(f->node));
                }
                uint32_t a, b;
                pc_node_range(&c->pc, f->node, &a, &b);
                while (a < b && (c->pc.src[a] == '@' || pc_is_space(c->pc.src[a]))) a++;
                if (c->decs.len) buf_addc(&c->decs, '\n');
                norm_text(c->pc.src, a, b, 0, &c->decs);
            } else if (s != id->method_definition && s != id->public_field_definition &&
                       s != id->abstract_method_signature && s != id->field_definition) {
                c->decs_owner = (TSNode){0};
            }
        }
    }
    if (count_errors && (s == (TSSymbol)-1 || ts_node_is_missing(f->node))) c->pc.out->parse_errors++;

    if (s == id->call_expression) add_call_expr(c, k);
    else if (s == id->new_expression) add_new_expr(c, k);
    else if (s == id->jsx_opening_element || s == id->jsx_self_closing_element) add_jsx(c, k);
    else if (s == id->import_statement) add_import_stmt(c, f->node);
    else if (s == id->export_statement) add_export_from(c, f->node);
    else if (s == id->class_declaration || s == id->abstract_class_declaration || s == id->function_declaration ||
             s == id->generator_function_declaration || s == id->function_signature ||
             s == id->interface_declaration || s == id->type_alias_declaration || s == id->enum_declaration)
        add_declaration(c, k);
    else if (s == id->class_ && !ts_node_is_null(ts_node_child_by_field_id(f->node, id->f_name)) &&
             ps != id->variable_declarator && ps != id->assignment_expression)
        add_declaration(c, k);
    else if ((s == id->method_definition || s == id->field_definition || s == id->public_field_definition) &&
             ps == id->class_body)
        add_member(c, k);
    else if ((s == id->method_signature || s == id->abstract_method_signature || s == id->property_signature) &&
             (ps == id->class_body || ps == id->interface_body))
        add_member(c, k);
    else if ((s == id->method_definition || s == id->pair) && ps == id->object)
        add_export_member(c, k);
    else if (s == id->variable_declarator) add_declarator(c, k);
    else if (s == id->assignment_expression) add_assignment(c, k);
}

static const struct pc_walk walk = {sizeof(struct frame), visit, NULL, NULL};

static int js_extract_with(const TSLanguage *lang, const struct js_ids *id, TSParser *parser, const char *text,
                           size_t len, struct parse_result *out)
{
    struct ctx c = {.id = id};
    int rc = pc_extract(&walk, lang, parser, text, len, out, &c.pc, &c);
    buf_free(&c.tmp);
    buf_free(&c.decs);
    return rc;
}

/* ---- module names ---- */

/* The path without its extension; an index file names its directory:
 * 'src/a/b.ts' -> 'src/a/b', 'lib/index.js' -> 'lib', 'a.d.ts' -> 'a'. */
static char *js_module_name(const char *relpath)
{
    if (!relpath) return NULL;
    const char *slash = strrchr(relpath, '/');
    const char *base = slash ? slash + 1 : relpath;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot > base) n = (size_t)(dot - base);
    if (n > 2 && memcmp(base + n - 2, ".d", 2) == 0) n -= 2; /* declaration files: 'a.d.ts' */
    if (n == 5 && memcmp(base, "index", 5) == 0) return xstrndup(relpath, slash ? (size_t)(slash - relpath) : 0);
    return xstrndup(relpath, (size_t)(base - relpath) + n);
}

/* './b' and '../c/d.js' written in the file at relpath: the module of the file
 * (or directory with an index file) they name. Bare names ('react') are
 * packages, not repository files. */
static char *js_import_module(const char *relpath, const char *module, int (*exists)(void *, const char *),
                              void *ctx)
{
    if (!relpath || !module || module[0] != '.') return NULL;
    /* the directory of the importing file, then each segment of module */
    struct buf b = BUF_INIT;
    const char *slash = strrchr(relpath, '/');
    if (slash) buf_add(&b, relpath, (size_t)(slash - relpath));
    else buf_adds(&b, "");
    for (const char *p = module; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (!b.len) {
                buf_free(&b);
                return NULL; /* above the repository root */
            }
            char *last = memrchr(b.data, '/', b.len);
            b.len = last ? (size_t)(last - b.data) : 0;
            b.data[b.len] = 0;
        } else if (n && !(n == 1 && p[0] == '.')) {
            if (b.len) buf_addc(&b, '/');
            buf_add(&b, p, n);
        }
        if (!e) break;
        p = e + 1;
    }
    char *path = buf_take(&b);
    buf_free(&b);
    if (exists(ctx, path)) return path;           /* './b' names b.ts, or b/index.js */
    char *mod = js_module_name(path);              /* './b.js' names b.js (or b.ts) */
    free(path);
    if (mod && exists(ctx, mod)) return mod;
    free(mod);
    return NULL;
}

/* ---- the languages ---- */

/* One dialect of the family: its grammar's symbol ids, looked up once per
 * process, and its struct lang (family_: the language whose definitions its
 * calls may fall back on, or NULL). */
#define JS_DIALECT(lang_, family_)                                                                          \
    const TSLanguage *tree_sitter_##lang_(void);                                                            \
    static struct js_ids lang_##_id;                                                                        \
    static pthread_once_t lang_##_once = PTHREAD_ONCE_INIT;                                                 \
    static void lang_##_init(void) { ids_fill(&lang_##_id, tree_sitter_##lang_()); }                        \
    static int lang_##_extract(TSParser *parser, const char *text, size_t len, struct parse_result *out)     \
    {                                                                                                       \
        pthread_once(&lang_##_once, lang_##_init);                                                          \
        return js_extract_with(tree_sitter_##lang_(), &lang_##_id, parser, text, len, out);                 \
    }                                                                                                       \
    const struct lang parse_##lang_ = {                                                                     \
        PARSE_LANG_OF(lang_),                                                                               \
        .language = tree_sitter_##lang_,                                                                    \
        .extract = lang_##_extract,                                                                         \
        .module_name = js_module_name,                                                                      \
        .import_module = js_import_module,                                                                  \
        .family = family_,                                                                                  \
    };

#if DRQA_GRAMMAR_javascript
JS_DIALECT(javascript, NULL)
#endif
#if DRQA_GRAMMAR_typescript
JS_DIALECT(typescript, "javascript")
#endif
#if DRQA_GRAMMAR_tsx
JS_DIALECT(tsx, "javascript")
#endif

#endif
