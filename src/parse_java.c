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
#include <config.h> /* autoconf: DRQA_GRAMMAR_<lang> */
#if DRQA_GRAMMAR_java /* else the grammar is left out (src/languages.def) */
#include "parse.h"
#include "parse_common.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Callee objects and other free expressions are cut here. */
#define JAVA_EXPR_CAP 200

/* The node types and fields the extractor looks for (parse_common.h, PC_IDS). */
#define JAVA_SYMBOLS(S, N) \
    S(class_declaration) S(interface_declaration) S(enum_declaration) S(record_declaration) \
    S(annotation_type_declaration) S(method_declaration) S(constructor_declaration) \
    S(compact_constructor_declaration) S(field_declaration) S(constant_declaration) S(variable_declarator) \
    S(import_declaration) S(scoped_identifier) S(identifier) S(asterisk) S(method_invocation) \
    S(object_creation_expression) S(class_body) S(enum_constant) S(modifiers) S(annotation) \
    S(marker_annotation) S(block_comment) S(line_comment) S(superclass) S(super_interfaces) \
    S(extends_interfaces) S(type_list)
#define JAVA_FIELDS(F) \
    F(name) F(body) F(object) F(type) F(declarator) F(scope)
PC_IDS(tree_sitter_java, JAVA_SYMBOLS, JAVA_FIELDS)

/* One level of the walk. */
struct frame {
    PC_FRAME_HEAD; /* node, sym, scope, def: set by pc_extract */
    int anon;      /* inside an anonymous class body: no definitions */
    TSNode prev;   /* the previous named child visited under this node (Javadoc lookup) */
};

struct ctx {
    struct pc_ctx pc;     /* the text and the result */
    struct buf tmp;       /* scratch, reused */
};

/* The frame stack pc_extract keeps, one per level of the walk. */
static struct frame *frames(const struct ctx *c) { return c->pc.frames; }

/* ---- text helpers ---- */

/* pc_norm_c with Java's quotes: '' and "". */
static void norm_text(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out)
{
    pc_norm_c(src, a, b, max, out, 0);
}

/* A type as written without its type arguments: 'java.util.List<T>' -> 'java.util.List'. */
static void type_name(struct ctx *c, TSNode n, struct buf *out)
{
    size_t start = out->len;
    buf_reset(&c->tmp);
    pc_node_norm(&c->pc, n, JAVA_EXPR_CAP, 0, &c->tmp);
    pc_strip_nested(buf_str(&c->tmp), "<>", "", out);
    if (out->len == start) buf_adds(out, "");
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
    TSNode prev = c->pc.nframes >= 2 ? f[-1].prev : (TSNode){0};
    if (!ts_node_is_null(prev) && ts_node_symbol(prev) == id.block_comment &&
        (int)ts_node_end_point(prev).row + 2 >= pc_line_of(ts_node_start_point(f->node))) {
        uint32_t a, b;
        pc_node_range(&c->pc, prev, &a, &b);
        s->docstring = pc_block_doc_clean(c->pc.src + a, b - a);
    }
    if (ts_node_is_null(mods)) return;
    struct buf decs = BUF_INIT;
    for (uint32_t k = 0, nk = ts_node_named_child_count(mods); k < nk; k++) {
        TSNode an = ts_node_named_child(mods, k);
        TSSymbol sy = ts_node_symbol(an);
        if (sy != id.annotation && sy != id.marker_annotation) continue;
        uint32_t a, b;
        pc_node_range(&c->pc, an, &a, &b);
        while (a < b && (c->pc.src[a] == '@' || pc_is_space(c->pc.src[a]))) a++;
        if (decs.len) buf_addc(&decs, '\n');
        norm_text(c->pc.src, a, b, 0, &decs);
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
    pc_node_range(&c->pc, n, &a, &b);
    uint32_t end = ts_node_is_null(body) ? b : ts_node_start_byte(body);
    if (end > c->pc.len) end = c->pc.len;
    struct buf sig = BUF_INIT;
    if (!ts_node_is_null(mods)) {
        for (uint32_t k = 0, nk = ts_node_child_count(mods); k < nk; k++) {
            TSNode m = ts_node_child(mods, k);
            TSSymbol sy = ts_node_symbol(m);
            if (sy == id.annotation || sy == id.marker_annotation || sy == id.block_comment ||
                sy == id.line_comment)
                continue;
            uint32_t ma, mb;
            pc_node_range(&c->pc, m, &ma, &mb);
            if (sig.len) buf_addc(&sig, ' ');
            norm_text(c->pc.src, ma, mb, 0, &sig);
        }
        a = ts_node_end_byte(mods);
    }
    if (a < end) {
        if (sig.len) buf_addc(&sig, ' ');
        size_t before = sig.len;
        norm_text(c->pc.src, a, end, 0, &sig);
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
    TSNode name = pc_name_of(n, id.f_name);
    if (ts_node_is_null(name)) return;
    TSNode body = ts_node_child_by_field_id(n, id.f_body);
    TSNode mods = modifiers_of(n);
    struct parse_symbol *s = pc_add_symbol(&c->pc, PARSE_CLASS, f->scope, pc_node_dup(&c->pc, name), NULL, n, n, name);
    /* the keyword ('class', 'interface', ...) is the last unnamed child before the name */
    for (uint32_t k = 0, nk = ts_node_child_count(n); k < nk; k++) {
        TSNode ch = ts_node_child(n, k);
        if (ts_node_start_byte(ch) >= ts_node_start_byte(name)) break;
        if (!ts_node_is_named(ch)) s->body_line = pc_line_of(ts_node_start_point(ch));
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
    f->def = (int)(c->pc.out->nsyms - 1);
}

static void add_method(struct ctx *c, struct frame *f)
{
    TSNode n = f->node;
    TSNode name = pc_name_of(n, id.f_name);
    if (ts_node_is_null(name)) return;
    TSNode body = ts_node_child_by_field_id(n, id.f_body);
    TSNode mods = modifiers_of(n);
    int parent = f->scope;
    enum parse_kind kind =
        parent >= 0 && c->pc.out->syms[parent].kind == PARSE_CLASS ? PARSE_METHOD : PARSE_FUNCTION;
    struct parse_symbol *s = pc_add_symbol(&c->pc, kind, parent, pc_node_dup(&c->pc, name), NULL, n, n, name);
    s->signature = signature_of(c, n, mods, body);
    add_doc_and_annotations(c, f, s, mods);
    f->def = (int)(c->pc.out->nsyms - 1);
}

/* Fields and interface constants directly in a class body: one variable per declarator. */
static void add_fields(struct ctx *c, struct frame *f)
{
    int scope = f->scope;
    if (scope < 0 || c->pc.out->syms[scope].kind != PARSE_CLASS) return;
    TSNode n = f->node;
    TSNode mods = modifiers_of(n);
    size_t first = c->pc.out->nsyms;
    for (uint32_t k = 0, nk = ts_node_named_child_count(n); k < nk; k++) {
        TSNode d = ts_node_named_child(n, k);
        if (ts_node_symbol(d) != id.variable_declarator) continue;
        TSNode name = pc_name_of(d, id.f_name);
        if (ts_node_is_null(name)) continue;
        struct parse_symbol *s =
            pc_add_symbol(&c->pc, PARSE_VARIABLE, scope, pc_node_dup(&c->pc, name), NULL, n, n, name);
        if (c->pc.out->nsyms - 1 == first) add_doc_and_annotations(c, f, s, mods);
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
    int line = pc_line_of(ts_node_start_point(n));
    uint32_t a, b;
    pc_node_range(&c->pc, path, &a, &b);
    buf_reset(&c->tmp);
    for (uint32_t i = a; i < b; i++)
        if (!pc_is_space(c->pc.src[i])) buf_addc(&c->tmp, c->pc.src[i]);
    const char *full = buf_str(&c->tmp);
    if (star) {
        pc_add_import(&c->pc, line, xstrdup(full), xstrdup("*"), NULL, 0);
        return;
    }
    const char *dot = strrchr(full, '.');
    if (!dot) pc_add_import(&c->pc, line, xstrdup(""), xstrdup(full), NULL, 0);
    else pc_add_import(&c->pc, line, xstrndup(full, (size_t)(dot - full)), xstrdup(dot + 1), NULL, 0);
}

static void add_invocation(struct ctx *c, struct frame *f)
{
    TSNode name = pc_name_of(f->node, id.f_name);
    if (ts_node_is_null(name)) return;
    TSNode obj = ts_node_child_by_field_id(f->node, id.f_object);
    struct buf callee = BUF_INIT;
    if (!ts_node_is_null(obj)) {
        uint32_t a, b;
        pc_node_range(&c->pc, obj, &a, &b);
        norm_text(c->pc.src, a, b, JAVA_EXPR_CAP, &callee);
        buf_addc(&callee, '.');
    }
    uint32_t a, b;
    pc_node_range(&c->pc, name, &a, &b);
    buf_add(&callee, c->pc.src + a, b - a);
    pc_add_call(&c->pc, pc_line_of(ts_node_start_point(name)), f->scope, buf_take(&callee));
    buf_free(&callee);
}

static void add_creation(struct ctx *c, struct frame *f)
{
    TSNode type = ts_node_child_by_field_id(f->node, id.f_type);
    if (ts_node_is_null(type) || ts_node_start_byte(type) >= ts_node_end_byte(type)) return;
    struct buf callee = BUF_INIT;
    type_name(c, type, &callee);
    if (callee.len)
        pc_add_call(&c->pc, pc_line_of(ts_node_start_point(type)), f->scope, buf_take(&callee));
    buf_free(&callee);
}

/* ---- the walk ---- */

static void visit(void *arg, TSTreeCursor *cur, int count_errors)
{
    struct ctx *c = arg;
    struct frame *f = &frames(c)[c->pc.nframes - 1];
    f->anon = 0;
    f->prev = (TSNode){0};
    TSSymbol s = f->sym;
    if (c->pc.nframes >= 2) {
        struct frame *p = f - 1;
        f->scope = p->def >= 0 ? p->def : p->scope;
        f->anon = p->anon;
        /* a class body with no declaration of its own: 'new Foo() {...}', 'A {...}' in an enum */
        if (s == id.class_body && (p->sym == id.object_creation_expression || p->sym == id.enum_constant))
            f->anon = 1;
    }
    if (count_errors && (s == (TSSymbol)-1 || ts_node_is_missing(f->node))) c->pc.out->parse_errors++;
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
    if (c->pc.nframes >= 2 && ts_node_is_named(f->node)) f[-1].prev = f->node;
}

static const struct pc_walk walk = {sizeof(struct frame), visit, NULL, NULL};

static int java_extract(TSParser *parser, const char *text, size_t len, struct parse_result *out)
{
    pthread_once(&id_once, id_init);
    struct ctx c = {0};
    int rc = pc_extract(&walk, tree_sitter_java(), parser, text, len, out, &c.pc, &c);
    buf_free(&c.tmp);
    return rc;
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
    return pc_dotted_name(p, NULL);
}

const struct lang parse_java = {
    PARSE_LANG_OF(java),
    .language = tree_sitter_java,
    .extract = java_extract,
    .module_name = java_module_name,
};

#endif
