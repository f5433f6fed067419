/*
 * parse_python: the Python extractor. One tree-sitter parse, then one walk over
 * the tree with a TSTreeCursor and a heap stack of frames (never recursion, so
 * pathological nesting cannot overflow the C stack), collecting classes,
 * functions, methods, module/class variables, imports and call sites into a
 * parse_result. Text is sliced from the source by byte offsets; the only
 * allocations are the strings handed over in the result and a few scratch
 * buffers reused for the whole file.
 */
#include "parse.h"
#include "parse_common.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Callees and other free expressions are cut here: a callee can be a whole
 * lambda or a chain of calls spanning pages. */
#define PY_EXPR_CAP 200

/* The node types and fields the extractor looks for (parse_common.h, PC_IDS). */
#define PY_SYMBOLS(S, N) \
    S(function_definition) S(class_definition) S(decorated_definition) S(decorator) S(import_statement) \
    S(import_from_statement) S(future_import_statement) S(aliased_import) S(relative_import) S(import_prefix) \
    S(wildcard_import) S(dotted_name) S(assignment) S(expression_statement) S(call) S(string) \
    S(concatenated_string) S(identifier) S(pattern_list) S(tuple_pattern) S(list_pattern) \
    S(list_splat_pattern) S(keyword_argument) S(dictionary_splat) S(comment) S(interpolation) S(block)
#define PY_FIELDS(F) \
    F(name) F(body) F(superclasses) F(function) F(left) F(right) F(module_name) F(alias)
PC_IDS(tree_sitter_python, PY_SYMBOLS, PY_FIELDS)

/* One level of the walk: the node, and the symbol whose body it is in. */
struct frame {
    PC_FRAME_HEAD; /* node, sym, scope, def: set by pc_extract */
    int in_err;  /* inside an ERROR node */
};

/* An outermost ERROR node and what the walk found inside it; definitions it
 * swallowed are recovered from the text afterwards (recover_error). */
struct errspan {
    TSNode node;
    int scope;
    size_t sym0, sym1, call0, call1;
};

struct ctx {
    struct pc_ctx pc;     /* the text and the result */
    struct buf tmp, tmp2; /* scratch, reused */
    uint32_t *col;        /* column of each symbol's keyword, parallel to out->syms */
    struct errspan *errs;
    size_t nerrs, cap_errs;
};

/* The frame stack pc_extract keeps, one per level of the walk. */
static struct frame *frames(const struct ctx *c) { return c->pc.frames; }

/* ---- text helpers ---- */

/* Appends src[a..b) to out as one line: whitespace runs (and backslash line
 * continuations) become one space, none just inside brackets, comments are
 * dropped, string literals are kept except that line breaks become spaces.
 * Stops once out holds max bytes (0 = no limit). */
static void norm_text(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out)
{
    size_t base = out->len;
    int pending = 0; /* a space is owed before the next visible character */
    uint32_t i = a;
    while (i < b && (!max || out->len - base < max)) {
        char ch = src[i];
        if (pc_is_space(ch) || (ch == '\\' && i + 1 < b && (src[i + 1] == '\n' || src[i + 1] == '\r'))) {
            pending = 1;
            i++;
            continue;
        }
        if (ch == '#') {
            while (i < b && src[i] != '\n') i++;
            pending = 1;
            continue;
        }
        if (pending) {
            pc_space_between(out, base, ch);
            pending = 0;
        }
        if (ch == '\'' || ch == '"') {
            int triple = i + 2 < b && src[i + 1] == ch && src[i + 2] == ch;
            uint32_t q = triple ? 3 : 1, j = i + q;
            for (; j < b; j++) {
                if (src[j] == '\\') { j++; continue; }
                if (src[j] == ch && (!triple || (j + 2 < b && src[j + 1] == ch && src[j + 2] == ch))) {
                    j += q;
                    break;
                }
                if (!triple && src[j] == '\n') break;
            }
            if (j > b) j = b;
            /* the literal up to the cap, line breaks as spaces, in runs */
            uint32_t lim = j;
            if (max && lim - i > max - (out->len - base)) lim = i + (uint32_t)(max - (out->len - base));
            for (uint32_t k = i; k < lim;) {
                uint32_t r = k;
                while (r < lim && src[r] != '\n' && src[r] != '\r') r++;
                buf_add(out, src + k, r - k);
                if (r < lim) buf_addc(out, ' ');
                k = r + 1;
            }
            i = j;
            continue;
        }
        /* a run of plain characters, up to the next one that needs a look */
        uint32_t r = i + 1;
        while (r < b && !pc_is_space(src[r]) && src[r] != '\\' && src[r] != '#' && src[r] != '\'' && src[r] != '"')
            r++;
        if (max && r - i > max - (out->len - base)) r = i + (uint32_t)(max - (out->len - base));
        buf_add(out, src + i, r - i);
        i = r;
    }
    if (max && out->len - base > max) out->len = base + max;
    /* never leave half a UTF-8 sequence at a cut */
    if (max && out->len - base == max && i < b) {
        while (out->len > base && ((unsigned char)out->data[out->len - 1] & 0xC0) == 0x80) out->len--;
        if (out->len > base && ((unsigned char)out->data[out->len - 1] & 0xC0) == 0xC0) out->len--;
    }
    if (out->data) out->data[out->len] = 0;
}

/* Normalised node text as a new string; the fast path copies plain text. */
static char *node_norm(struct ctx *c, TSNode n, size_t max)
{
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    int plain = !max || b - a <= max;
    for (uint32_t i = a; plain && i < b; i++)
        if (pc_is_space(c->pc.src[i]) || c->pc.src[i] == '#' || c->pc.src[i] == '\\') plain = 0;
    if (plain) return xstrndup(c->pc.src + a, b - a);
    buf_reset(&c->tmp);
    norm_text(c->pc.src, a, b, max, &c->tmp);
    return xstrdup(buf_str(&c->tmp));
}

/* Dotted names may be written with spaces or continuations ('a . b'). */
static char *dotted_dup(const struct ctx *c, TSNode n)
{
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    char *s = xmalloc(b - a + 1), *p = s;
    for (uint32_t i = a; i < b; i++)
        if (!pc_is_space(c->pc.src[i]) && c->pc.src[i] != '\\') *p++ = c->pc.src[i];
    *p = 0;
    return s;
}

/* ---- docstrings ---- */

/* Appends the value of one string literal to out, with quotes and prefix
 * removed and the common escapes decoded (others stay as written, as Python
 * keeps unknown escapes). Returns -1 for bytes and f-strings, which are not
 * docstrings. */
static int string_value(const struct ctx *c, TSNode n, struct buf *out)
{
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);
    const char *s = c->pc.src;
    int raw = 0;
    while (a < b && s[a] != '\'' && s[a] != '"') {
        char p = s[a];
        if (p == 'b' || p == 'B' || p == 'f' || p == 'F' || p == 't' || p == 'T') return -1;
        if (p == 'r' || p == 'R') raw = 1;
        else if (p != 'u' && p != 'U') return -1;
        a++;
    }
    if (a >= b) return -1;
    char q = s[a];
    uint32_t ql = (a + 2 < b && s[a + 1] == q && s[a + 2] == q) ? 3 : 1;
    if (ql == 3 && b - a < 6) ql = 1; /* '""' is an empty string, not a triple quote */
    a += ql;
    if (b >= a + ql) {
        int closed = 1;
        for (uint32_t k = 0; k < ql; k++)
            if (s[b - 1 - k] != q) closed = 0;
        if (closed) b -= ql;
    }
    for (uint32_t i = a; i < b; i++) {
        if (s[i] == '\\' && !raw && i + 1 < b) {
            char e = s[i + 1];
            i++;
            switch (e) {
            case '\n': break;
            case '\r': if (i + 1 < b && s[i + 1] == '\n') i++; break;
            case 'n': buf_addc(out, '\n'); break;
            case 't': buf_addc(out, '\t'); break;
            case '\\': case '\'': case '"': buf_addc(out, e); break;
            default: buf_addc(out, '\\'); buf_addc(out, e); break;
            }
            continue;
        }
        if (s[i] == '\r') {
            if (i + 1 < b && s[i + 1] == '\n') continue;
            buf_addc(out, '\n');
            continue;
        }
        /* a run of plain characters */
        uint32_t r = i + 1;
        while (r < b && s[r] != '\\' && s[r] != '\r') r++;
        buf_add(out, s + i, r - i);
        i = r - 1;
    }
    return 0;
}

/* Like inspect.cleandoc: tabs expanded, first line's leading blanks and the
 * other lines' common indentation removed, blank lines trimmed at both ends. */
static char *cleandoc(const char *d, size_t n, struct buf *out)
{
    /* expand tabs to 8 columns first, so that indentation is comparable */
    buf_reset(out);
    size_t col = 0;
    for (size_t i = 0; i < n;) {
        if (d[i] == '\t') {
            do buf_addc(out, ' '); while (++col % 8);
            i++;
            continue;
        }
        /* up to the next tab in one piece; col counts from the last line break */
        const char *t = memchr(d + i, '\t', n - i);
        size_t e = t ? (size_t)(t - d) : n;
        buf_add(out, d + i, e - i);
        const char *nl = memrchr(d + i, '\n', e - i);
        col = nl ? e - (size_t)(nl - d) - 1 : col + (e - i);
        i = e;
    }
    const char *t = buf_str(out);
    size_t len = out->len, margin = SIZE_MAX;
    const char *nl = memchr(t, '\n', len);
    for (const char *p = nl ? nl + 1 : t + len; p < t + len;) {
        const char *e = memchr(p, '\n', (size_t)(t + len - p));
        if (!e) e = t + len;
        size_t ind = 0;
        while (p + ind < e && p[ind] == ' ') ind++;
        if (p + ind < e && ind < margin) margin = ind;
        p = e + 1;
    }
    struct buf r = BUF_INIT;
    int first = 1;
    for (const char *p = t; p <= t + len;) {
        const char *e = memchr(p, '\n', (size_t)(t + len - p));
        if (!e) e = t + len;
        const char *q = p;
        if (first) {
            while (q < e && pc_is_space(*q)) q++;
        } else {
            size_t cut = margin == SIZE_MAX ? 0 : margin;
            q = (size_t)(e - p) < cut ? e : p + cut;
        }
        if (!first) buf_addc(&r, '\n');
        buf_add(&r, q, (size_t)(e - q));
        first = 0;
        p = e + 1;
    }
    /* drop blank lines at both ends */
    char *s = buf_take(&r);
    size_t lo = 0, hi = strlen(s);
    for (;;) {
        size_t k = hi;
        while (k > lo && s[k - 1] != '\n') k--;
        size_t i = k;
        while (i < hi && pc_is_space(s[i])) i++;
        if (i < hi || k == lo) {
            if (i == hi) hi = k; /* the only line left is blank */
            break;
        }
        hi = k - 1;
    }
    for (;;) {
        size_t i = lo;
        while (i < hi && s[i] != '\n' && pc_is_space(s[i])) i++;
        if (i < hi && s[i] == '\n') lo = i + 1;
        else break;
    }
    memmove(s, s + lo, hi - lo);
    s[hi - lo] = 0;
    return s;
}

/* The docstring of a def/class body block, or NULL. */
static char *docstring_of(struct ctx *c, TSNode body)
{
    TSTreeCursor *cur = &c->pc.aux;
    ts_tree_cursor_reset(cur, body);
    if (!ts_tree_cursor_goto_first_child(cur)) return NULL;
    TSNode st;
    do {
        st = ts_tree_cursor_current_node(cur);
    } while (ts_node_symbol(st) == id.comment && ts_tree_cursor_goto_next_sibling(cur));
    if (ts_node_symbol(st) != id.expression_statement || ts_node_named_child_count(st) != 1) return NULL;
    TSNode sn = ts_node_named_child(st, 0);
    buf_reset(&c->tmp2);
    if (ts_node_symbol(sn) == id.string) {
        if (string_value(c, sn, &c->tmp2)) return NULL;
    } else if (ts_node_symbol(sn) == id.concatenated_string) {
        ts_tree_cursor_reset(cur, sn);
        if (!ts_tree_cursor_goto_first_child(cur)) return NULL;
        do {
            TSNode part = ts_tree_cursor_current_node(cur);
            if (ts_node_symbol(part) == id.string && string_value(c, part, &c->tmp2)) return NULL;
        } while (ts_tree_cursor_goto_next_sibling(cur));
    } else {
        return NULL;
    }
    return cleandoc(buf_str(&c->tmp2), c->tmp2.len, &c->tmp);
}

/* ---- result arrays ---- */

/* pc_new_sym, with the keyword column array kept parallel. */
static struct parse_symbol *new_sym(struct ctx *c)
{
    size_t cap = c->pc.cap_syms;
    struct parse_symbol *s = pc_new_sym(&c->pc);
    if (c->pc.cap_syms != cap) c->col = xrealloc(c->col, c->pc.cap_syms * sizeof *c->col);
    c->col[c->pc.out->nsyms - 1] = 0;
    return s;
}

/* ---- definitions ---- */

/* A class or function at frame f (the top of the stack). */
static void add_def(struct ctx *c, struct frame *f, int is_class)
{
    TSNode n = f->node;
    TSNode name = ts_node_child_by_field_id(n, id.f_name);
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return;
    TSNode body = ts_node_child_by_field_id(n, id.f_body);
    uint32_t a, b;
    pc_node_range(&c->pc, n, &a, &b);

    /* the header ends at the last ':' before the body */
    uint32_t hdr_end = ts_node_is_null(body) ? b : ts_node_start_byte(body);
    TSTreeCursor *cur = &c->pc.aux;
    ts_tree_cursor_reset(cur, n);
    if (ts_tree_cursor_goto_first_child(cur)) {
        uint32_t body_start = ts_node_is_null(body) ? UINT32_MAX : ts_node_start_byte(body);
        do {
            TSNode ch = ts_tree_cursor_current_node(cur);
            if (ts_node_start_byte(ch) >= body_start) break;
            if (!ts_node_is_named(ch) && ts_node_end_byte(ch) == ts_node_start_byte(ch) + 1 &&
                ts_node_start_byte(ch) < c->pc.len && c->pc.src[ts_node_start_byte(ch)] == ':')
                hdr_end = ts_node_start_byte(ch);
        } while (ts_tree_cursor_goto_next_sibling(cur));
    }
    if (hdr_end > c->pc.len) hdr_end = c->pc.len;
    if (hdr_end < a) hdr_end = a;

    int parent = f->scope;
    struct parse_symbol *s = new_sym(c);
    int self = (int)(c->pc.out->nsyms - 1);
    s->kind = is_class ? PARSE_CLASS
              : (parent >= 0 && c->pc.out->syms[parent].kind == PARSE_CLASS) ? PARSE_METHOD
                                                                           : PARSE_FUNCTION;
    s->name = pc_node_dup(&c->pc, name);
    s->qualname = pc_qualify(&c->pc, parent, s->name);
    s->parent = parent;
    s->body_line = pc_line_of(ts_node_start_point(n));
    c->col[self] = ts_node_start_point(n).column;
    s->start_line = s->body_line;
    s->end_line = pc_end_line_of(n);
    s->is_async = !is_class && b - a > 5 && memcmp(c->pc.src + a, "async", 5) == 0 && pc_is_space(c->pc.src[a + 5]);

    buf_reset(&c->tmp);
    norm_text(c->pc.src, a, hdr_end, 0, &c->tmp);
    s->signature = xstrdup(buf_str(&c->tmp));

    /* decorators sit on the decorated_definition around us */
    if (c->pc.nframes >= 2 && f[-1].sym == id.decorated_definition) {
        TSNode d = f[-1].node;
        s->start_line = pc_line_of(ts_node_start_point(d));
        struct buf decs = BUF_INIT;
        ts_tree_cursor_reset(cur, d);
        if (ts_tree_cursor_goto_first_child(cur)) {
            do {
                TSNode ch = ts_tree_cursor_current_node(cur);
                if (ts_node_symbol(ch) != id.decorator) continue;
                for (uint32_t k = 0, nk = ts_node_named_child_count(ch); k < nk; k++) {
                    TSNode e = ts_node_named_child(ch, k);
                    if (ts_node_symbol(e) == id.comment) continue;
                    uint32_t ea, eb;
                    pc_node_range(&c->pc, e, &ea, &eb);
                    if (decs.len) buf_addc(&decs, '\n');
                    norm_text(c->pc.src, ea, eb, 0, &decs);
                    break;
                }
            } while (ts_tree_cursor_goto_next_sibling(cur));
        }
        s->decorators = decs.len ? buf_take(&decs) : NULL;
        buf_free(&decs);
    }

    if (is_class) {
        TSNode sup = ts_node_child_by_field_id(n, id.f_superclasses);
        struct buf bases = BUF_INIT;
        if (!ts_node_is_null(sup)) {
            ts_tree_cursor_reset(cur, sup);
            if (ts_tree_cursor_goto_first_child(cur)) {
                do {
                    TSNode ch = ts_tree_cursor_current_node(cur);
                    TSSymbol sy = ts_node_symbol(ch);
                    if (!ts_node_is_named(ch) || sy == id.keyword_argument || sy == id.dictionary_splat ||
                        sy == id.comment)
                        continue;
                    uint32_t ea, eb;
                    pc_node_range(&c->pc, ch, &ea, &eb);
                    if (ea == eb) continue;
                    if (bases.len) buf_adds(&bases, ", ");
                    norm_text(c->pc.src, ea, eb, 0, &bases);
                } while (ts_tree_cursor_goto_next_sibling(cur));
            }
        }
        s->bases = bases.len ? buf_take(&bases) : NULL;
        buf_free(&bases);
    }

    /* s may move when docstring_of... it does not add symbols, but keep the index */
    if (!ts_node_is_null(body)) c->pc.out->syms[self].docstring = docstring_of(c, body);
    f->def = self;
}

/* ---- variables ---- */

static void add_var(struct ctx *c, int scope, TSNode stmt, TSNode ident)
{
    if (ts_node_start_byte(ident) >= ts_node_end_byte(ident)) return;
    char *name = pc_node_dup(&c->pc, ident);
    char *qual = pc_qualify(&c->pc, scope, name);
    struct parse_symbol *s = new_sym(c);
    s->kind = PARSE_VARIABLE;
    s->name = name;
    s->qualname = qual;
    s->parent = scope;
    s->start_line = s->body_line = pc_line_of(ts_node_start_point(stmt));
    s->end_line = pc_end_line_of(stmt);
}

/* An assignment at the top of the stack: one symbol per plain name it binds,
 * when it sits at module level or directly in a class body. */
static void add_assignment(struct ctx *c, struct frame *f)
{
    if (f->scope >= 0 && c->pc.out->syms[f->scope].kind != PARSE_CLASS) return;
    /* the statement: up through chained assignments ('a = b = 1') */
    size_t k = c->pc.nframes - 1;
    while (k > 0 && frames(c)[k - 1].sym == id.assignment) k--;
    if (k == 0 || frames(c)[k - 1].sym != id.expression_statement) return;
    TSNode stmt = frames(c)[k - 1].node;
    TSNode left = ts_node_child_by_field_id(f->node, id.f_left);
    if (ts_node_is_null(left)) return;
    TSSymbol ls = ts_node_symbol(left);
    if (ls == id.identifier) {
        add_var(c, f->scope, stmt, left);
        return;
    }
    if (ls != id.pattern_list && ls != id.tuple_pattern && ls != id.list_pattern && ls != id.list_splat_pattern)
        return;
    /* unpacking targets: walk only through the pattern nodes, iteratively */
    TSTreeCursor *cur = &c->pc.aux;
    ts_tree_cursor_reset(cur, left);
    unsigned depth = 0;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(cur);
        TSSymbol sy = ts_node_symbol(n);
        int into = depth == 0 || sy == id.pattern_list || sy == id.tuple_pattern || sy == id.list_pattern ||
                   sy == id.list_splat_pattern;
        if (depth > 0 && sy == id.identifier) add_var(c, f->scope, stmt, n);
        if (into && ts_tree_cursor_goto_first_child(cur)) {
            depth++;
            continue;
        }
        while (!ts_tree_cursor_goto_next_sibling(cur)) {
            if (depth == 0 || !ts_tree_cursor_goto_parent(cur)) return;
            if (--depth == 0) return;
        }
    }
}

/* ---- imports ---- */

static void add_import_stmt(struct ctx *c, TSNode n, TSSymbol kind)
{
    char *module = NULL;
    int level = 0;
    if (kind == id.future_import_statement) module = xstrdup("__future__");
    TSTreeCursor *cur = &c->pc.aux;
    ts_tree_cursor_reset(cur, n);
    if (!ts_tree_cursor_goto_first_child(cur)) return;
    do {
        TSNode ch = ts_tree_cursor_current_node(cur);
        TSSymbol sy = ts_node_symbol(ch);
        TSFieldId fid = ts_tree_cursor_current_field_id(cur);
        int line = pc_line_of(ts_node_start_point(ch));
        if (kind == id.import_from_statement && fid == id.f_module_name) {
            if (sy == id.relative_import) {
                free(module);
                module = xstrdup("");
                for (uint32_t k = 0, nk = ts_node_child_count(ch); k < nk && k < 2; k++) {
                    TSNode part = ts_node_child(ch, k);
                    if (ts_node_symbol(part) == id.import_prefix) {
                        uint32_t a, b;
                        pc_node_range(&c->pc, part, &a, &b);
                        for (uint32_t i = a; i < b; i++) level += c->pc.src[i] == '.';
                    } else if (ts_node_symbol(part) == id.dotted_name) {
                        free(module);
                        module = dotted_dup(c, part);
                    }
                }
            } else {
                free(module);
                module = dotted_dup(c, ch);
            }
            continue;
        }
        if (sy != id.dotted_name && sy != id.aliased_import && sy != id.wildcard_import) continue;
        if (sy == id.wildcard_import) {
            pc_add_import(&c->pc, line, xstrdup(module ? module : ""), xstrdup("*"), NULL, level);
            continue;
        }
        char *nm, *alias = NULL;
        if (sy == id.aliased_import) {
            TSNode nn = ts_node_child_by_field_id(ch, id.f_name), al = ts_node_child_by_field_id(ch, id.f_alias);
            if (ts_node_is_null(nn)) continue;
            nm = dotted_dup(c, nn);
            if (!ts_node_is_null(al)) alias = pc_node_dup(&c->pc, al);
        } else {
            nm = dotted_dup(c, ch);
        }
        if (kind == id.import_statement)
            pc_add_import(&c->pc, line, nm, NULL, alias, 0);
        else
            pc_add_import(&c->pc, line, xstrdup(module ? module : ""), nm, alias, level);
    } while (ts_tree_cursor_goto_next_sibling(cur));
    free(module);
}

/* ---- calls ---- */

static void add_call(struct ctx *c, struct frame *f)
{
    TSNode fn = ts_node_child_by_field_id(f->node, id.f_function);
    if (ts_node_is_null(fn) || ts_node_start_byte(fn) >= ts_node_end_byte(fn)) return;
    /* the line where the called name ends: the '(' line of a chained call */
    TSPoint e = ts_node_end_point(fn);
    pc_add_call(&c->pc, (int)e.row + 1, f->scope, node_norm(c, fn, PY_EXPR_CAP));
}

/* ---- error recovery ---- */

static int ident_start(unsigned char ch) { return ch == '_' || (unsigned)((ch | 32) - 'a') < 26 || ch >= 0x80; }
static int ident_char(unsigned char ch) { return ident_start(ch) || (unsigned)(ch - '0') < 10; }

/* Matches 'def NAME', 'async def NAME' or 'class NAME' at src[q]; sets the
 * keyword length, the name range and whether it is async. */
static int match_def(const struct ctx *c, uint32_t q, uint32_t *kwlen, uint32_t *na, uint32_t *nb,
                     int *is_class, int *is_async)
{
    const char *s = c->pc.src;
    uint32_t end = c->pc.len, p = q;
    *is_async = 0;
    if (end - p > 6 && memcmp(s + p, "async", 5) == 0 && (s[p + 5] == ' ' || s[p + 5] == '\t')) {
        uint32_t r = p + 5;
        while (r < end && (s[r] == ' ' || s[r] == '\t')) r++;
        if (end - r > 3 && memcmp(s + r, "def", 3) == 0) {
            *is_async = 1;
            p = r;
        }
    }
    if (end - p > 4 && memcmp(s + p, "def", 3) == 0 && (s[p + 3] == ' ' || s[p + 3] == '\t')) {
        *is_class = 0;
        p += 3;
    } else if (!*is_async && end - p > 6 && memcmp(s + p, "class", 5) == 0 && (s[p + 5] == ' ' || s[p + 5] == '\t')) {
        *is_class = 1;
        p += 5;
    } else {
        return 0;
    }
    *kwlen = *is_async ? 5 : (*is_class ? 5 : 3);
    while (p < end && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p >= end || !ident_start((unsigned char)s[p])) return 0;
    *na = p;
    while (p < end && ident_char((unsigned char)s[p])) p++;
    *nb = p;
    return 1;
}

/* Last line of the block opened at 'line' with keyword column col: the last
 * non-blank, non-comment line before one indented no deeper than col. */
static int block_end(const struct ctx *c, uint32_t from, int line, uint32_t col)
{
    const char *s = c->pc.src;
    int last = line, ln = line;
    const char *nl = memchr(s + from, '\n', c->pc.len - from);
    uint32_t p = nl ? (uint32_t)(nl - s) + 1 : c->pc.len;
    while (p < c->pc.len) {
        ln++;
        uint32_t q = p, ind = 0;
        while (q < c->pc.len && (s[q] == ' ' || s[q] == '\t' || s[q] == '\f')) q++, ind++;
        if (q < c->pc.len && s[q] != '\n' && s[q] != '\r' && s[q] != '#') {
            if (ind <= col) break;
            last = ln;
        }
        nl = memchr(s + q, '\n', c->pc.len - q);
        p = nl ? (uint32_t)(nl - s) + 1 : c->pc.len;
    }
    return last;
}

/* The leaves under a node in byte order, for checking that a position starts
 * a token (not string or comment text) in one pass. */
struct leafit {
    TSTreeCursor *cur;
    unsigned depth;
    int done;
    uint32_t start, end;
};

static void leaf_descend(struct leafit *it)
{
    while (ts_tree_cursor_goto_first_child(it->cur)) it->depth++;
    TSNode n = ts_tree_cursor_current_node(it->cur);
    it->start = ts_node_start_byte(n);
    it->end = ts_node_end_byte(n);
}

static void leaf_next(struct leafit *it)
{
    for (;;) {
        if (ts_tree_cursor_goto_next_sibling(it->cur)) {
            leaf_descend(it);
            return;
        }
        if (it->depth == 0 || !ts_tree_cursor_goto_parent(it->cur)) {
            it->done = 1;
            return;
        }
        it->depth--;
    }
}

/* Whether a leaf starts at q; positions must be asked in increasing order. */
static int leaf_at(struct leafit *it, uint32_t q)
{
    while (!it->done && it->start < q) leaf_next(it);
    return !it->done && it->start == q;
}

/* Whether symbol a (-1: the module) encloses symbol b. */
static int is_above(const struct ctx *c, int a, int b)
{
    for (int up = c->pc.out->syms[b].parent; up >= 0; up = c->pc.out->syms[up].parent)
        if (up == a) return 1;
    return a < 0;
}

/* Tree-sitter often folds the rest of a block, definitions included, into an
 * ERROR node after a syntax error. Lines inside ERROR nodes that start with a
 * def/class keyword (a real token, not string text) become symbols again,
 * nested by indentation among the definitions the walk did find; the calls
 * found in an ERROR move to the innermost recovered definition around them.
 * Runs only for files with errors: one pass over the lines and the leaves. */
/* The definition an ERROR node hides at byte q of line (indentation col):
 * its keyword matched (its name at na-nb), recovered as a symbol under
 * parent, its enclosing definitions stretched over it. Returns its index. */
static int recover_def(struct ctx *c, uint32_t q, int line, uint32_t col, int parent, uint32_t na, uint32_t nb,
                       int is_class, int is_async)
{
    const char *s = c->pc.src;
    char *name = xstrndup(s + na, nb - na);
    char *qual = pc_qualify(&c->pc, parent, name);
    struct parse_symbol *sym = new_sym(c);
    int self = (int)c->pc.out->nsyms - 1;
    c->col[self] = col;
    sym->kind = is_class ? PARSE_CLASS
                : (parent >= 0 && c->pc.out->syms[parent].kind == PARSE_CLASS) ? PARSE_METHOD
                                                                            : PARSE_FUNCTION;
    sym->name = name;
    sym->qualname = qual;
    sym->parent = parent;
    sym->start_line = sym->body_line = line;
    sym->end_line = block_end(c, q, line, col);
    sym->is_async = is_async;
    /* enclosing definitions cut short by the error reach at least this far */
    for (int up = parent; up >= 0 && c->pc.out->syms[up].end_line < sym->end_line; up = c->pc.out->syms[up].parent)
        c->pc.out->syms[up].end_line = sym->end_line;
    /* the header up to its ':' (or the line end when it is broken) */
    uint32_t h = nb;
    int depth = 0;
    while (h < c->pc.len && s[h] != '\n' && !(depth == 0 && s[h] == ':')) {
        if (s[h] == '(' || s[h] == '[') depth++;
        else if ((s[h] == ')' || s[h] == ']') && depth > 0) depth--;
        h++;
    }
    buf_reset(&c->tmp);
    norm_text(s, q, h, PY_EXPR_CAP, &c->tmp);
    sym->signature = xstrdup(buf_str(&c->tmp));
    return self;
}

/* After definitions moved under another parent: their kinds and qualified
 * names again. */
static void requalify(struct ctx *c, size_t nreal)
{
    /* parents precede children, so one pass in order renames every level */
    for (size_t i = 0; i < nreal; i++) {
        struct parse_symbol *rs = &c->pc.out->syms[i];
        if (rs->parent < 0) continue;
        if (rs->kind == PARSE_FUNCTION || rs->kind == PARSE_METHOD)
            rs->kind = c->pc.out->syms[rs->parent].kind == PARSE_CLASS ? PARSE_METHOD : PARSE_FUNCTION;
        char *q = pc_qualify(&c->pc, rs->parent, rs->name);
        free(rs->qualname);
        rs->qualname = q;
    }
}

/* Calls found inside ERROR nodes, once definitions were recovered from them
 * (those past nreal): 'def f(x)' misread as a call of f is dropped (the
 * array is compacted; nothing refers to call indexes), the rest move to the
 * innermost recovered definition around them. */
static void recover_calls(struct ctx *c, size_t nreal)
{
    size_t keep = 0, ei = 0;
    for (size_t k = 0; k < c->pc.out->ncalls; k++) {
        struct parse_call *call = &c->pc.out->calls[k];
        while (ei < c->nerrs && c->errs[ei].call1 <= k) ei++;
        if (ei < c->nerrs && c->errs[ei].call0 <= k) {
            int best = -1, span = 0, bogus = 0;
            for (size_t i = nreal; i < c->pc.out->nsyms && !bogus; i++)
                bogus = c->pc.out->syms[i].body_line == call->line && !strcmp(c->pc.out->syms[i].name, call->callee);
            if (bogus) {
                free(call->callee);
                continue;
            }
            for (size_t i = nreal; i < c->pc.out->nsyms; i++) {
                const struct parse_symbol *o = &c->pc.out->syms[i];
                if (o->body_line > call->line || o->end_line < call->line) continue;
                if (call->caller >= 0 && o->body_line < c->pc.out->syms[call->caller].body_line) continue;
                if (best < 0 || o->end_line - o->body_line <= span) {
                    best = (int)i;
                    span = o->end_line - o->body_line;
                }
            }
            if (best >= 0) call->caller = best;
        }
        c->pc.out->calls[keep++] = *call;
    }
    c->pc.out->ncalls = keep;
}

static void recover_errors(struct ctx *c, TSNode root)
{
    const char *s = c->pc.src;
    size_t nreal = c->pc.out->nsyms, real = 0, ei = 0;
    int *stack = NULL; /* open blocks by indentation */
    size_t nstack = 0, capstack = 0;
    struct leafit it = {&c->pc.aux, 0, 0, 0, 0};
    ts_tree_cursor_reset(it.cur, root);
    leaf_descend(&it);
    int line = 1;
    int moved = 0;
    for (uint32_t p = 0; p < c->pc.len; line++) {
        uint32_t q = p;
        while (q < c->pc.len && (s[q] == ' ' || s[q] == '\t' || s[q] == '\f')) q++;
        const char *nl = memchr(s + q, '\n', c->pc.len - q);
        uint32_t next = nl ? (uint32_t)(nl - s) + 1 : c->pc.len, col = q - p;
        p = next;
        /* a line whose first token starts a statement closes deeper blocks;
         * lines inside strings or brackets do not start with a token */
        int tok = q < c->pc.len && s[q] != '\n' && s[q] != '\r' && s[q] != '#' && leaf_at(&it, q);
        if (tok)
            while (nstack && c->col[stack[nstack - 1]] >= col) nstack--;
        int found = 0;
        for (; real < nreal && c->pc.out->syms[real].body_line <= line; real++) {
            struct parse_symbol *rs = &c->pc.out->syms[real];
            if (rs->body_line != line) continue;
            if (rs->kind != PARSE_VARIABLE)
                while (nstack && c->col[stack[nstack - 1]] >= c->col[real]) nstack--;
            /* the tree may hang a definition too high, typically at module
             * level after a broken class header: indentation says where */
            int top = nstack ? stack[nstack - 1] : -1;
            if (top >= 0 && rs->parent != top && (rs->kind != PARSE_VARIABLE || c->pc.out->syms[top].kind == PARSE_CLASS) &&
                is_above(c, rs->parent, top)) {
                rs->parent = top;
                moved = 1;
            }
            if (rs->kind == PARSE_VARIABLE) continue;
            ARRAY_GROW(stack, nstack, capstack, 16);
            stack[nstack++] = (int)real;
            found = 1;
        }
        while (ei < c->nerrs && ts_node_end_byte(c->errs[ei].node) <= q) ei++;
        if (ei == c->nerrs || ts_node_start_byte(c->errs[ei].node) > q) continue;
        uint32_t kwlen, na, nb;
        int is_class, is_async;
        if (!tok || found || !match_def(c, q, &kwlen, &na, &nb, &is_class, &is_async) || it.end != q + kwlen)
            continue;
        int self = recover_def(c, q, line, col, nstack ? stack[nstack - 1] : -1, na, nb, is_class, is_async);
        ARRAY_GROW(stack, nstack, capstack, 16);
        stack[nstack++] = self;
    }
    free(stack);
    if (moved) requalify(c, nreal);
    if (c->pc.out->nsyms == nreal) return;
    recover_calls(c, nreal);
}

/* ---- the walk ---- */

/* Fills the top frame from the cursor position and handles its node. */
static void visit(void *arg, TSTreeCursor *cur, int count_errors)
{
    struct ctx *c = arg;
    struct frame *f = &frames(c)[c->pc.nframes - 1];
    f->in_err = 0;
    if (c->pc.nframes >= 2) {
        struct frame *p = f - 1;
        f->scope = p->scope;
        f->in_err = p->in_err;
        /* a body broken by a syntax error comes as an ERROR child instead */
        if (p->def >= 0 && (f->sym == (TSSymbol)-1 || ts_tree_cursor_current_field_id(cur) == id.f_body))
            f->scope = p->def;
    }
    TSSymbol s = f->sym;
    if (count_errors && (s == (TSSymbol)-1 || ts_node_is_missing(f->node))) c->pc.out->parse_errors++;
    if (s == (TSSymbol)-1 && !f->in_err) {
        c->errs = pc_grow(c->errs, &c->cap_errs, c->nerrs, sizeof *c->errs, 8);
        c->errs[c->nerrs++] = (struct errspan){f->node, f->scope, c->pc.out->nsyms, 0, c->pc.out->ncalls, 0};
        f->in_err = 1;
    }
    if (s == id.call) add_call(c, f);
    else if (s == id.function_definition) add_def(c, f, 0);
    else if (s == id.class_definition) add_def(c, f, 1);
    else if (s == id.assignment) add_assignment(c, f);
    else if (s == id.import_statement || s == id.import_from_statement || s == id.future_import_statement)
        add_import_stmt(c, f->node, s);
    if (f->in_err) {
        c->errs[c->nerrs - 1].sym1 = c->pc.out->nsyms;
        c->errs[c->nerrs - 1].call1 = c->pc.out->ncalls;
    }
}

/* Subtrees no longer than this are looked at as text before the walk goes in. */
#define PY_SKIM_MAX 64

/* Whether the walk goes into the children of the node of frame f. Leaves have
 * none. A subtree without ERROR or MISSING nodes (which the walk has to count)
 * is skipped when it cannot hold a call, definition, assignment or import:
 * dotted names and import statements (read whole by add_import_stmt), string
 * literals other than f-strings (only those hold interpolations), and short
 * stretches of text with no '(' (every call has one, in its argument list),
 * no '=' or ':' (every assignment has one of them, every definition a ':')
 * and no 'import'. */
static int descend(const struct ctx *c, const struct frame *f)
{
    if (ts_node_child_count(f->node) == 0) return 0;
    if (ts_node_has_error(f->node)) return 1;
    TSSymbol s = f->sym;
    if (s == id.dotted_name || s == id.import_statement || s == id.import_from_statement ||
        s == id.future_import_statement)
        return 0;
    uint32_t a = ts_node_start_byte(f->node), b = ts_node_end_byte(f->node);
    if (b > c->pc.len) return 1;
    if (s == id.string) {
        /* the prefix before the opening quote: f or F makes an f-string */
        for (uint32_t i = a; i < b; i++) {
            char ch = c->pc.src[i];
            if (ch == 'f' || ch == 'F') return 1;
            if (ch == '\'' || ch == '"') return 0;
            if (!((ch | 32) >= 'a' && (ch | 32) <= 'z')) return 1;
        }
        return 1;
    }
    if (b - a > PY_SKIM_MAX) return 1;
    for (const char *p = c->pc.src + a, *e = c->pc.src + b; p < e; p++) {
        char ch = *p;
        if (ch == '(' || ch == '=' || ch == ':') return 1;
        if (ch == 'i' && e - p >= 6 && memcmp(p, "import", 6) == 0) return 1;
    }
    return 0;
}

/* pc_extract's descend: the pruned walk. */
static int walk_descend(void *p)
{
    const struct ctx *c = p;
    return descend(c, &frames(c)[c->pc.nframes - 1]);
}

/* pc_extract's after: definitions the ERROR nodes hid. */
static void walk_after(void *p, TSNode root)
{
    struct ctx *c = p;
    if (c->nerrs) recover_errors(c, root);
}

static const struct pc_walk walk = {sizeof(struct frame), visit, walk_descend, walk_after};

static int py_extract(TSParser *parser, const char *text, size_t len, struct parse_result *out)
{
    pthread_once(&id_once, id_init);
    struct ctx c = {0};
    int rc = pc_extract(&walk, tree_sitter_python(), parser, text, len, out, &c.pc, &c);
    free(c.col);
    free(c.errs);
    buf_free(&c.tmp);
    buf_free(&c.tmp2);
    return rc;
}

/* ---- module names ---- */

static char *py_module_name(const char *relpath)
{
    if (!relpath) return NULL;
    return pc_dotted_name(relpath, "__init__");
}

const struct lang parse_python = {
    PARSE_LANG_OF(python),
    .language = tree_sitter_python,
    .extract = py_extract,
    .module_name = py_module_name,
};
