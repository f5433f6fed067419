/*
 * parse_java: the Java extractor. One tree-sitter parse, then one walk over the
 * tree with a TSTreeCursor and a heap stack of frames (never recursion, so deep
 * nesting cannot overflow the C stack), collecting into a parse_result:
 *   - classes, interfaces, enums, records and @interfaces as PARSE_CLASS, the
 *     declaration keyword kept in the signature ('public interface Foo<T> extends
 *     Bar'), bases = extends + implements types without type arguments (so that
 *     'Iterable<T>' links to 'Iterable');
 *   - methods and constructors as PARSE_METHOD ('Outer.Inner.method'); fields and
 *     interface constants as PARSE_VARIABLE;
 *   - the Javadoc comment right before a declaration as its docstring, and its
 *     annotations (without '@') as decorators;
 *   - imports: module = package (or class, for static imports), name = the class
 *     (or member) or '*';
 *   - calls: 'obj.method' for method invocations, 'Foo' for 'new Foo<>(...)'.
 * Anonymous class bodies define no symbols; their calls belong to the enclosing
 * method. Local classes nest under their method ('Outer.run.Local').
 */
#include "parse.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const TSLanguage *tree_sitter_java(void);

/* Callee objects and other free expressions are cut here. */
#define JAVA_EXPR_CAP 200

static struct {
    TSSymbol class_declaration, interface_declaration, enum_declaration, record_declaration,
        annotation_type_declaration, method_declaration, constructor_declaration,
        compact_constructor_declaration, field_declaration, constant_declaration, variable_declarator,
        import_declaration, scoped_identifier, identifier, asterisk, method_invocation,
        object_creation_expression, class_body, enum_constant, modifiers, annotation, marker_annotation,
        block_comment, line_comment, superclass, super_interfaces, extends_interfaces, type_list;
    TSFieldId f_name, f_body, f_object, f_type, f_declarator, f_scope;
} id;
static pthread_once_t id_once = PTHREAD_ONCE_INIT;

static void id_init(void)
{
    const TSLanguage *l = tree_sitter_java();
#define SYM(s) id.s = ts_language_symbol_for_name(l, #s, (uint32_t)strlen(#s), true)
#define FLD(f) id.f_##f = ts_language_field_id_for_name(l, #f, (uint32_t)strlen(#f))
    SYM(class_declaration); SYM(interface_declaration); SYM(enum_declaration);
    SYM(record_declaration); SYM(annotation_type_declaration); SYM(method_declaration);
    SYM(constructor_declaration); SYM(compact_constructor_declaration); SYM(field_declaration);
    SYM(constant_declaration); SYM(variable_declarator); SYM(import_declaration);
    SYM(scoped_identifier); SYM(identifier); SYM(asterisk); SYM(method_invocation);
    SYM(object_creation_expression); SYM(class_body); SYM(enum_constant); SYM(modifiers);
    SYM(annotation); SYM(marker_annotation); SYM(block_comment); SYM(line_comment);
    SYM(superclass); SYM(super_interfaces); SYM(extends_interfaces); SYM(type_list);
    FLD(name); FLD(body); FLD(object); FLD(type); FLD(declarator); FLD(scope);
#undef SYM
#undef FLD
}

/* One level of the walk. */
struct frame {
    TSNode node;
    TSSymbol sym;
    int scope;     /* innermost enclosing class/method symbol, -1 at file level */
    int def;       /* symbol this node defines (scope of its children), or -1 */
    int anon;      /* inside an anonymous class body: no definitions */
    TSNode prev;   /* the previous named child visited under this node (Javadoc lookup) */
};

struct ctx {
    const char *src;
    uint32_t len;
    struct parse_result *out;
    size_t cap_syms, cap_imports, cap_calls;
    struct frame *fr;
    size_t nfr, cap_fr;
    TSTreeCursor aux;     /* reused for every small sub-walk */
    struct buf tmp;       /* scratch, reused */
};

/* ---- text helpers ---- */

static int line_of(TSPoint p) { return (int)p.row + 1; }

static int end_line_of(TSNode n)
{
    TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
    if (e.column == 0 && e.row > s.row) return (int)e.row;
    return (int)e.row + 1;
}

static void node_range(const struct ctx *c, TSNode n, uint32_t *a, uint32_t *b)
{
    *a = ts_node_start_byte(n);
    *b = ts_node_end_byte(n);
    if (*b > c->len) *b = c->len;
    if (*a > *b) *a = *b;
}

static char *node_dup(const struct ctx *c, TSNode n)
{
    uint32_t a, b;
    node_range(c, n, &a, &b);
    return xstrndup(c->src + a, b - a);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }

/* Appends src[a..b) to out as one line: whitespace runs become one space (none
 * just inside brackets), comments are dropped, string literals are kept with
 * line breaks turned into spaces. Stops at max bytes (0 = no limit), never
 * inside a UTF-8 sequence. */
static void norm_text(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out)
{
    size_t base = out->len;
    int pending = 0;
    uint32_t i = a;
    while (i < b && (!max || out->len - base < max)) {
        char ch = src[i];
        if (is_space(ch)) {
            pending = 1;
            i++;
            continue;
        }
        if (ch == '/' && i + 1 < b && src[i + 1] == '/') {
            while (i < b && src[i] != '\n') i++;
            pending = 1;
            continue;
        }
        if (ch == '/' && i + 1 < b && src[i + 1] == '*') {
            i += 2;
            while (i < b && !(src[i] == '*' && i + 1 < b && src[i + 1] == '/')) i++;
            i = i + 2 < b ? i + 2 : b;
            pending = 1;
            continue;
        }
        if (pending) {
            char prev = out->len > base ? out->data[out->len - 1] : '(';
            if (prev != '(' && prev != '[' && prev != '{' && ch != ')' && ch != ']' && ch != '}')
                buf_addc(out, ' ');
            pending = 0;
        }
        if (ch == '\'' || ch == '"') {
            uint32_t j = i + 1;
            for (; j < b; j++) {
                if (src[j] == '\\') { j++; continue; }
                if (src[j] == ch) { j++; break; }
            }
            if (j > b) j = b;
            for (uint32_t k = i; k < j && (!max || out->len - base < max); k++)
                buf_addc(out, src[k] == '\n' || src[k] == '\r' ? ' ' : src[k]);
            i = j;
            continue;
        }
        buf_addc(out, ch);
        i++;
    }
    if (max && out->len - base > max) out->len = base + max;
    if (max && out->len - base == max && i < b) {
        while (out->len > base && ((unsigned char)out->data[out->len - 1] & 0xC0) == 0x80) out->len--;
        if (out->len > base && ((unsigned char)out->data[out->len - 1] & 0xC0) == 0xC0) out->len--;
    }
    if (out->data) out->data[out->len] = 0;
}

/* A type as written without its type arguments: 'java.util.List<T>' -> 'java.util.List'. */
static void type_name(struct ctx *c, TSNode n, struct buf *out)
{
    uint32_t a, b;
    node_range(c, n, &a, &b);
    size_t start = out->len;
    buf_reset(&c->tmp);
    norm_text(c->src, a, b, JAVA_EXPR_CAP, &c->tmp);
    int depth = 0;
    for (const char *p = buf_str(&c->tmp); *p; p++) {
        if (*p == '<') depth++;
        else if (*p == '>') depth -= depth > 0;
        else if (!depth && *p != ' ') buf_addc(out, *p);
    }
    if (out->len == start) buf_adds(out, "");
}

/* The text of a Javadoc comment without its delimiters and leading '*'s. */
static char *javadoc_clean(const char *s, size_t n)
{
    if (n < 5 || memcmp(s, "/**", 3) != 0 || memcmp(s + n - 2, "*/", 2) != 0) return NULL;
    s += 3;
    n -= 5;
    struct buf r = BUF_INIT;
    int first = 1;
    const char *end = s + n;
    for (const char *p = s; p <= end;) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        const char *q = p, *t = e;
        while (q < t && is_space(*q)) q++;
        if (q < t && *q == '*') {
            q++;
            if (q < t && *q == ' ') q++;
        }
        while (t > q && is_space(t[-1])) t--;
        if (!first) buf_addc(&r, '\n');
        buf_add(&r, q, (size_t)(t - q));
        first = 0;
        p = e + 1;
    }
    char *d = buf_take(&r);
    /* trim blank lines at both ends */
    size_t lo = 0, hi = strlen(d);
    while (lo < hi && d[lo] == '\n') lo++;
    while (hi > lo && d[hi - 1] == '\n') hi--;
    memmove(d, d + lo, hi - lo);
    d[hi - lo] = 0;
    if (!*d) {
        free(d);
        return NULL;
    }
    return d;
}

/* ---- result arrays ---- */

static struct parse_symbol *new_sym(struct ctx *c)
{
    struct parse_result *r = c->out;
    if (r->nsyms == c->cap_syms) {
        c->cap_syms = c->cap_syms ? c->cap_syms * 2 : 32;
        r->syms = xrealloc(r->syms, c->cap_syms * sizeof *r->syms);
    }
    struct parse_symbol *s = &r->syms[r->nsyms++];
    memset(s, 0, sizeof *s);
    return s;
}

static void add_import(struct ctx *c, int line, char *module, char *name)
{
    struct parse_result *r = c->out;
    if (r->nimports == c->cap_imports) {
        c->cap_imports = c->cap_imports ? c->cap_imports * 2 : 16;
        r->imports = xrealloc(r->imports, c->cap_imports * sizeof *r->imports);
    }
    r->imports[r->nimports++] = (struct parse_import){line, module, name, NULL, 0};
}

static void add_call(struct ctx *c, int line, int scope, char *callee)
{
    struct parse_result *r = c->out;
    if (r->ncalls == c->cap_calls) {
        c->cap_calls = c->cap_calls ? c->cap_calls * 2 : 64;
        r->calls = xrealloc(r->calls, c->cap_calls * sizeof *r->calls);
    }
    r->calls[r->ncalls++] = (struct parse_call){line, scope, callee};
}

static char *qualify(const struct ctx *c, int parent, const char *name)
{
    if (parent < 0) return xstrdup(name);
    return xasprintf("%s.%s", c->out->syms[parent].qualname, name);
}

/* ---- definitions ---- */

static int is_type_decl(TSSymbol s)
{
    return s == id.class_declaration || s == id.interface_declaration || s == id.enum_declaration ||
           s == id.record_declaration || s == id.annotation_type_declaration;
}

/* Docstring and decorators shared by every declaration: the Javadoc comment
 * that is the previous named sibling (only blank space between them), and the
 * annotations in the modifiers. */
static void add_doc_and_annotations(struct ctx *c, struct frame *f, struct parse_symbol *s, TSNode mods)
{
    TSNode prev = c->nfr >= 2 ? f[-1].prev : (TSNode){0};
    if (!ts_node_is_null(prev) && ts_node_symbol(prev) == id.block_comment &&
        (int)ts_node_end_point(prev).row + 2 >= line_of(ts_node_start_point(f->node))) {
        uint32_t a, b;
        node_range(c, prev, &a, &b);
        s->docstring = javadoc_clean(c->src + a, b - a);
    }
    if (ts_node_is_null(mods)) return;
    struct buf decs = BUF_INIT;
    for (uint32_t k = 0, nk = ts_node_named_child_count(mods); k < nk; k++) {
        TSNode an = ts_node_named_child(mods, k);
        TSSymbol sy = ts_node_symbol(an);
        if (sy != id.annotation && sy != id.marker_annotation) continue;
        uint32_t a, b;
        node_range(c, an, &a, &b);
        while (a < b && (c->src[a] == '@' || is_space(c->src[a]))) a++;
        if (decs.len) buf_addc(&decs, '\n');
        norm_text(c->src, a, b, 0, &decs);
    }
    s->decorators = decs.len ? buf_take(&decs) : NULL;
    buf_free(&decs);
}

/* The modifiers child of a declaration, or a null node. */
static TSNode modifiers_of(TSNode n)
{
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode ch = ts_node_named_child(n, k);
        if (ts_node_symbol(ch) == id.modifiers) return ch;
        if (ts_node_symbol(ch) != id.block_comment && ts_node_symbol(ch) != id.line_comment) break;
    }
    return (TSNode){0};
}

/* The signature: keyword modifiers, then the header text up to the body. */
static char *signature_of(struct ctx *c, TSNode n, TSNode mods, TSNode body)
{
    uint32_t a, b;
    node_range(c, n, &a, &b);
    uint32_t end = ts_node_is_null(body) ? b : ts_node_start_byte(body);
    if (end > c->len) end = c->len;
    struct buf sig = BUF_INIT;
    if (!ts_node_is_null(mods)) {
        for (uint32_t k = 0, nk = ts_node_child_count(mods); k < nk; k++) {
            TSNode m = ts_node_child(mods, k);
            TSSymbol sy = ts_node_symbol(m);
            if (sy == id.annotation || sy == id.marker_annotation || sy == id.block_comment ||
                sy == id.line_comment)
                continue;
            uint32_t ma, mb;
            node_range(c, m, &ma, &mb);
            if (sig.len) buf_addc(&sig, ' ');
            norm_text(c->src, ma, mb, 0, &sig);
        }
        a = ts_node_end_byte(mods);
    }
    if (a < end) {
        if (sig.len) buf_addc(&sig, ' ');
        size_t before = sig.len;
        norm_text(c->src, a, end, 0, &sig);
        /* an abstract method ends with ';' */
        while (sig.len > before && (sig.data[sig.len - 1] == ';' || sig.data[sig.len - 1] == ' ')) sig.len--;
        if (sig.len == before && before) sig.len--;
        sig.data[sig.len] = 0;
    }
    char *s = buf_take(&sig);
    buf_free(&sig);
    return s;
}

static void add_type_decl(struct ctx *c, struct frame *f)
{
    TSNode n = f->node;
    TSNode name = ts_node_child_by_field_id(n, id.f_name);
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return;
    TSNode body = ts_node_child_by_field_id(n, id.f_body);
    TSNode mods = modifiers_of(n);
    int parent = f->scope;
    struct parse_symbol *s = new_sym(c);
    s->kind = PARSE_CLASS;
    s->name = node_dup(c, name);
    s->qualname = qualify(c, parent, s->name);
    s->parent = parent;
    s->start_line = line_of(ts_node_start_point(n));
    s->end_line = end_line_of(n);
    s->body_line = line_of(ts_node_start_point(name));
    /* the keyword ('class', 'interface', ...) is the last unnamed child before the name */
    for (uint32_t k = 0, nk = ts_node_child_count(n); k < nk; k++) {
        TSNode ch = ts_node_child(n, k);
        if (ts_node_start_byte(ch) >= ts_node_start_byte(name)) break;
        if (!ts_node_is_named(ch)) s->body_line = line_of(ts_node_start_point(ch));
    }
    s->signature = signature_of(c, n, mods, body);

    struct buf bases = BUF_INIT;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode ch = ts_node_named_child(n, k);
        TSSymbol sy = ts_node_symbol(ch);
        if (sy != id.superclass && sy != id.super_interfaces && sy != id.extends_interfaces) continue;
        for (uint32_t j = 0, nj = ts_node_named_child_count(ch); j < nj; j++) {
            TSNode t = ts_node_named_child(ch, j);
            if (ts_node_symbol(t) == id.type_list) {
                for (uint32_t i = 0, ni = ts_node_named_child_count(t); i < ni; i++) {
                    TSNode tt = ts_node_named_child(t, i);
                    if (ts_node_symbol(tt) == id.block_comment || ts_node_symbol(tt) == id.line_comment) continue;
                    if (bases.len) buf_adds(&bases, ", ");
                    type_name(c, tt, &bases);
                }
            } else if (ts_node_symbol(t) != id.block_comment && ts_node_symbol(t) != id.line_comment) {
                if (bases.len) buf_adds(&bases, ", ");
                type_name(c, t, &bases);
            }
        }
    }
    s->bases = bases.len ? buf_take(&bases) : NULL;
    buf_free(&bases);
    add_doc_and_annotations(c, f, s, mods);
    f->def = (int)(c->out->nsyms - 1);
}

static void add_method(struct ctx *c, struct frame *f)
{
    TSNode n = f->node;
    TSNode name = ts_node_child_by_field_id(n, id.f_name);
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return;
    TSNode body = ts_node_child_by_field_id(n, id.f_body);
    TSNode mods = modifiers_of(n);
    int parent = f->scope;
    struct parse_symbol *s = new_sym(c);
    s->kind = parent >= 0 && c->out->syms[parent].kind == PARSE_CLASS ? PARSE_METHOD : PARSE_FUNCTION;
    s->name = node_dup(c, name);
    s->qualname = qualify(c, parent, s->name);
    s->parent = parent;
    s->start_line = line_of(ts_node_start_point(n));
    s->end_line = end_line_of(n);
    s->body_line = line_of(ts_node_start_point(name));
    s->signature = signature_of(c, n, mods, body);
    add_doc_and_annotations(c, f, s, mods);
    f->def = (int)(c->out->nsyms - 1);
}

/* Fields and interface constants directly in a class body: one variable per declarator. */
static void add_fields(struct ctx *c, struct frame *f)
{
    int scope = f->scope;
    if (scope < 0 || c->out->syms[scope].kind != PARSE_CLASS) return;
    TSNode n = f->node;
    TSNode mods = modifiers_of(n);
    size_t first = c->out->nsyms;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode d = ts_node_named_child(n, k);
        if (ts_node_symbol(d) != id.variable_declarator) continue;
        TSNode name = ts_node_child_by_field_id(d, id.f_name);
        if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) continue;
        struct parse_symbol *s = new_sym(c);
        s->kind = PARSE_VARIABLE;
        s->name = node_dup(c, name);
        s->qualname = qualify(c, scope, s->name);
        s->parent = scope;
        s->start_line = line_of(ts_node_start_point(n));
        s->body_line = line_of(ts_node_start_point(name));
        s->end_line = end_line_of(n);
        if (c->out->nsyms - 1 == first) add_doc_and_annotations(c, f, s, mods);
    }
}

/* ---- imports and calls ---- */

static void add_import_decl(struct ctx *c, TSNode n)
{
    TSNode path = (TSNode){0};
    int star = 0;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode ch = ts_node_named_child(n, k);
        TSSymbol sy = ts_node_symbol(ch);
        if (sy == id.scoped_identifier || sy == id.identifier) path = ch;
        else if (sy == id.asterisk) star = 1;
    }
    if (ts_node_is_null(path)) return;
    int line = line_of(ts_node_start_point(n));
    uint32_t a, b;
    node_range(c, path, &a, &b);
    buf_reset(&c->tmp);
    for (uint32_t i = a; i < b; i++)
        if (!is_space(c->src[i])) buf_addc(&c->tmp, c->src[i]);
    const char *full = buf_str(&c->tmp);
    if (star) {
        add_import(c, line, xstrdup(full), xstrdup("*"));
        return;
    }
    const char *dot = strrchr(full, '.');
    if (!dot) add_import(c, line, xstrdup(""), xstrdup(full));
    else add_import(c, line, xstrndup(full, (size_t)(dot - full)), xstrdup(dot + 1));
}

static void add_invocation(struct ctx *c, struct frame *f)
{
    TSNode name = ts_node_child_by_field_id(f->node, id.f_name);
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return;
    TSNode obj = ts_node_child_by_field_id(f->node, id.f_object);
    struct buf callee = BUF_INIT;
    if (!ts_node_is_null(obj)) {
        uint32_t a, b;
        node_range(c, obj, &a, &b);
        norm_text(c->src, a, b, JAVA_EXPR_CAP, &callee);
        buf_addc(&callee, '.');
    }
    uint32_t a, b;
    node_range(c, name, &a, &b);
    buf_add(&callee, c->src + a, b - a);
    add_call(c, line_of(ts_node_start_point(name)), f->scope, buf_take(&callee));
    buf_free(&callee);
}

static void add_creation(struct ctx *c, struct frame *f)
{
    TSNode type = ts_node_child_by_field_id(f->node, id.f_type);
    if (ts_node_is_null(type) || ts_node_start_byte(type) >= ts_node_end_byte(type)) return;
    struct buf callee = BUF_INIT;
    type_name(c, type, &callee);
    if (callee.len)
        add_call(c, line_of(ts_node_start_point(type)), f->scope, buf_take(&callee));
    buf_free(&callee);
}

/* ---- the walk ---- */

static struct frame *push(struct ctx *c)
{
    if (c->nfr == c->cap_fr) {
        c->cap_fr = c->cap_fr ? c->cap_fr * 2 : 64;
        c->fr = xrealloc(c->fr, c->cap_fr * sizeof *c->fr);
    }
    return &c->fr[c->nfr++];
}

static void visit(struct ctx *c, TSTreeCursor *cur, int count_errors)
{
    struct frame *f = &c->fr[c->nfr - 1];
    f->node = ts_tree_cursor_current_node(cur);
    f->sym = ts_node_symbol(f->node);
    f->def = -1;
    f->scope = -1;
    f->anon = 0;
    f->prev = (TSNode){0};
    TSSymbol s = f->sym;
    if (c->nfr >= 2) {
        struct frame *p = f - 1;
        f->scope = p->def >= 0 ? p->def : p->scope;
        f->anon = p->anon;
        /* a class body with no declaration of its own: 'new Foo() {...}', 'A {...}' in an enum */
        if (s == id.class_body && (p->sym == id.object_creation_expression || p->sym == id.enum_constant))
            f->anon = 1;
    }
    if (count_errors && (s == (TSSymbol)-1 || ts_node_is_missing(f->node))) c->out->parse_errors++;
    if (s == id.method_invocation) add_invocation(c, f);
    else if (s == id.object_creation_expression) add_creation(c, f);
    else if (s == id.import_declaration) add_import_decl(c, f->node);
    else if (!f->anon) {
        if (is_type_decl(s)) add_type_decl(c, f);
        else if (s == id.method_declaration || s == id.constructor_declaration ||
                 s == id.compact_constructor_declaration)
            add_method(c, f);
        else if (s == id.field_declaration || s == id.constant_declaration)
            add_fields(c, f);
    }
    if (c->nfr >= 2 && ts_node_is_named(f->node)) f[-1].prev = f->node;
}

static int java_extract(TSParser *parser, const char *text, size_t len, struct parse_result *out)
{
    memset(out, 0, sizeof *out);
    pthread_once(&id_once, id_init);
    if (len > UINT32_MAX) return -1;
    if (ts_parser_language(parser) != tree_sitter_java() && !ts_parser_set_language(parser, tree_sitter_java()))
        return -1;
    TSTree *tree = ts_parser_parse_string(parser, NULL, text ? text : "", (uint32_t)len);
    if (!tree) return -1;
    TSNode root = ts_tree_root_node(tree);

    struct ctx c = {.src = text ? text : "", .len = (uint32_t)len, .out = out};
    c.aux = ts_tree_cursor_new(root);
    int count_errors = ts_node_has_error(root);
    TSTreeCursor cur = ts_tree_cursor_new(root);
    push(&c);
    visit(&c, &cur, count_errors);
    for (;;) {
        if (ts_tree_cursor_goto_first_child(&cur)) {
            push(&c);
            visit(&c, &cur, count_errors);
            continue;
        }
        for (;;) {
            if (ts_tree_cursor_goto_next_sibling(&cur)) {
                visit(&c, &cur, count_errors);
                break;
            }
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
            c.nfr--;
        }
    }
done:
    ts_tree_cursor_delete(&cur);
    ts_tree_cursor_delete(&c.aux);
    free(c.fr);
    buf_free(&c.tmp);
    ts_tree_delete(tree);
    return 0;
}

/* ---- module names ---- */

/* The dotted class name for a path, below the source root when one can be told
 * from the path: 'src/main/java/org/x/Foo.java' -> 'org.x.Foo' (after the last
 * 'java' directory, else after a leading 'src'), so that 'import org.x.Foo'
 * finds the file. */
static char *java_module_name(const char *relpath)
{
    if (!relpath) return NULL;
    const char *p = relpath, *root = NULL;
    for (const char *q = relpath; *q;) {
        const char *e = strchr(q, '/');
        if (!e) break;
        if (e - q == 4 && memcmp(q, "java", 4) == 0) root = e + 1;
        q = e + 1;
    }
    if (root) p = root;
    else if (strncmp(relpath, "src/", 4) == 0) p = relpath + 4;
    struct buf b = BUF_INIT;
    buf_adds(&b, "");
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!e) {
            const char *dot = memrchr(p, '.', n);
            if (dot && dot > p) n = (size_t)(dot - p);
        }
        if (n && !(n == 1 && p[0] == '.')) {
            if (b.len) buf_addc(&b, '.');
            buf_add(&b, p, n);
        }
        if (!e) break;
        p = e + 1;
    }
    return buf_take(&b);
}

static const char *const java_extensions[] = {".java", NULL};

const struct lang parse_java = {
    .name = "java",
    .extensions = java_extensions,
    .language = tree_sitter_java,
    .extract = java_extract,
    .module_name = java_module_name,
};
