/*
 * parse_common: the helpers every language extractor shares (see
 * parse_common.h): node lines and text, C-like text normalisation, doc comment
 * cleaning, the parse_result arrays and the cursor walk. No state of its own,
 * so extractors stay safe to run on several threads at once.
 */
#include "parse_common.h"
#include "ts_arena.h"

#include <stdlib.h>
#include <string.h>

TSSymbol pc_symbol(const TSLanguage *l, const char *name)
{
    return ts_language_symbol_for_name(l, name, (uint32_t)strlen(name), true);
}

TSFieldId pc_field(const TSLanguage *l, const char *name)
{
    return ts_language_field_id_for_name(l, name, (uint32_t)strlen(name));
}

int pc_line_of(TSPoint p) { return (int)p.row + 1; }

int pc_end_line_of(TSNode n)
{
    TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
    if (e.column == 0 && e.row > s.row) return (int)e.row;
    return (int)e.row + 1;
}

void pc_node_range(const struct pc_ctx *c, TSNode n, uint32_t *a, uint32_t *b)
{
    *a = ts_node_start_byte(n);
    *b = ts_node_end_byte(n);
    if (*b > c->len) *b = c->len;
    if (*a > *b) *a = *b;
}

char *pc_node_dup(const struct pc_ctx *c, TSNode n)
{
    uint32_t a, b;
    pc_node_range(c, n, &a, &b);
    return xstrndup(c->src + a, b - a);
}

int pc_is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }

void pc_norm_c(const char *src, uint32_t a, uint32_t b, size_t max, struct buf *out, int quotes)
{
    size_t base = out->len;
    int pending = 0;
    int backtick = quotes & (PC_QUOTE_BACKTICK | PC_QUOTE_RAW_BACKTICK);
    uint32_t i = a;
    while (i < b && (!max || out->len - base < max)) {
        char ch = src[i];
        if (pc_is_space(ch)) {
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
            pc_space_between(out, base, ch);
            pending = 0;
        }
        if (ch == '\'' || ch == '"' || (backtick && ch == '`')) {
            int raw = ch == '`' && (quotes & PC_QUOTE_RAW_BACKTICK);
            uint32_t j = i + 1;
            for (; j < b; j++) {
                if (src[j] == '\\' && !raw) { j++; continue; }
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
    /* never leave half a UTF-8 sequence at a cut */
    if (max && out->len - base == max && i < b) {
        while (out->len > base && ((unsigned char)out->data[out->len - 1] & 0xC0) == 0x80) out->len--;
        if (out->len > base && ((unsigned char)out->data[out->len - 1] & 0xC0) == 0xC0) out->len--;
    }
    if (out->data) out->data[out->len] = 0;
}

void pc_node_norm(const struct pc_ctx *c, TSNode n, size_t max, int quotes, struct buf *out)
{
    uint32_t a, b;
    pc_node_range(c, n, &a, &b);
    pc_norm_c(c->src, a, b, max, out, quotes);
}

void pc_strip_nested(const char *s, const char *brackets, const char *drop, struct buf *out)
{
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == brackets[0]) depth++;
        else if (*p == brackets[1]) depth -= depth > 0;
        else if (!depth && *p != ' ' && !strchr(drop, *p)) buf_addc(out, *p);
    }
}

char *pc_dotted_name(const char *path, const char *package_file)
{
    struct buf b = BUF_INIT;
    const char *p = path;
    buf_adds(&b, "");
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!e) {
            const char *dot = memrchr(p, '.', n);
            if (dot && dot > p) n = (size_t)(dot - p);
            if (package_file && n == strlen(package_file) && memcmp(p, package_file, n) == 0) break;
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

char *pc_block_doc_clean(const char *s, size_t n)
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
        while (q < t && pc_is_space(*q)) q++;
        if (q < t && *q == '*') {
            q++;
            if (q < t && *q == ' ') q++;
        }
        while (t > q && pc_is_space(t[-1])) t--;
        if (!first) buf_addc(&r, '\n');
        buf_add(&r, q, (size_t)(t - q));
        first = 0;
        p = e + 1;
    }
    return pc_trim_blank_lines(buf_take(&r));
}

void pc_space_between(struct buf *out, size_t base, char ch)
{
    char prev = out->len > base ? out->data[out->len - 1] : '(';
    if (prev != '(' && prev != '[' && prev != '{' && ch != ')' && ch != ']' && ch != '}') buf_addc(out, ' ');
}

char *pc_trim_blank_lines(char *d)
{
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

void *pc_grow(void *p, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap) return p;
    *cap = xgrow_cap(*cap, n, first);
    return xreallocarray(p, *cap, size);
}

struct parse_symbol *pc_new_sym(struct pc_ctx *c)
{
    struct parse_result *r = c->out;
    r->syms = pc_grow(r->syms, &c->cap_syms, r->nsyms, sizeof *r->syms, 32);
    struct parse_symbol *s = &r->syms[r->nsyms++];
    memset(s, 0, sizeof *s);
    return s;
}

void pc_add_import(struct pc_ctx *c, int line, char *module, char *name, char *alias, int level)
{
    struct parse_result *r = c->out;
    r->imports = pc_grow(r->imports, &c->cap_imports, r->nimports, sizeof *r->imports, 16);
    r->imports[r->nimports++] = (struct parse_import){line, module, name, alias, level};
}

void pc_add_call(struct pc_ctx *c, int line, int scope, char *callee)
{
    struct parse_result *r = c->out;
    r->calls = pc_grow(r->calls, &c->cap_calls, r->ncalls, sizeof *r->calls, 64);
    r->calls[r->ncalls++] = (struct parse_call){line, scope, callee, 1};
}

struct parse_symbol *pc_add_symbol(struct pc_ctx *c, enum parse_kind kind, int parent, char *name, char *qualname,
                                   TSNode first, TSNode last, TSNode body_at)
{
    struct parse_symbol *s = pc_new_sym(c);
    s->kind = kind;
    s->name = name;
    s->qualname = qualname ? qualname : pc_qualify(c, parent, name);
    s->parent = parent;
    s->start_line = pc_line_of(ts_node_start_point(first));
    s->end_line = pc_end_line_of(last);
    s->body_line = pc_line_of(ts_node_start_point(body_at));
    return s;
}

TSNode pc_name_of(TSNode n, TSFieldId f)
{
    TSNode name = ts_node_child_by_field_id(n, f);
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return (TSNode){0};
    return name;
}

char *pc_qualify(const struct pc_ctx *c, int parent, const char *name)
{
    if (parent < 0) return xstrdup(name);
    const char *q = c->out->syms[parent].qualname;
    size_t nq = strlen(q), nn = strlen(name);
    char *r = xmalloc(nq + nn + 2);
    memcpy(r, q, nq);
    r[nq] = '.';
    memcpy(r + nq + 1, name, nn + 1);
    return r;
}

void pc_walk(TSTreeCursor *cur, void *ctx, void (*step)(void *ctx, TSTreeCursor *cur, int move))
{
    step(ctx, cur, 1);
    for (;;) {
        if (ts_tree_cursor_goto_first_child(cur)) {
            step(ctx, cur, 1);
            continue;
        }
        for (;;) {
            if (ts_tree_cursor_goto_next_sibling(cur)) {
                step(ctx, cur, 0);
                break;
            }
            if (!ts_tree_cursor_goto_parent(cur)) return;
            step(ctx, cur, -1);
        }
    }
}

void pc_walk_pruned(TSTreeCursor *cur, void *ctx, int (*step)(void *ctx, TSTreeCursor *cur, int move))
{
    int down = step(ctx, cur, 1);
    for (;;) {
        if (down && ts_tree_cursor_goto_first_child(cur)) {
            down = step(ctx, cur, 1);
            continue;
        }
        for (;;) {
            if (ts_tree_cursor_goto_next_sibling(cur)) {
                down = step(ctx, cur, 0);
                break;
            }
            if (!ts_tree_cursor_goto_parent(cur)) return;
            step(ctx, cur, -1);
        }
    }
}

/* pc_extract's walk state: what the step functions need. */
struct drive {
    const struct pc_walk *w;
    struct pc_ctx *pc;
    void *ctx;
    int count_errors;
};

static void drive_visit(struct drive *d, int move, TSTreeCursor *cur)
{
    struct pc_ctx *pc = d->pc;
    if (move > 0) {
        pc->frames = pc_grow(pc->frames, &pc->cap_frames, pc->nframes, d->w->frame_size, 64);
        pc->nframes++;
    }
    struct pc_frame *f = (struct pc_frame *)((char *)pc->frames + (pc->nframes - 1) * d->w->frame_size);
    f->node = ts_tree_cursor_current_node(cur);
    f->sym = ts_node_symbol(f->node);
    f->scope = f->def = -1;
    d->w->visit(d->ctx, cur, d->count_errors);
}

static void drive_step(void *p, TSTreeCursor *cur, int move)
{
    struct drive *d = p;
    if (move < 0) d->pc->nframes--;
    else drive_visit(d, move, cur);
}

static int drive_step_pruned(void *p, TSTreeCursor *cur, int move)
{
    struct drive *d = p;
    if (move < 0) {
        d->pc->nframes--;
        return 0;
    }
    drive_visit(d, move, cur);
    return d->w->descend(d->ctx);
}

int pc_extract(const struct pc_walk *w, const TSLanguage *lang, TSParser *parser, const char *text, size_t len,
               struct parse_result *out, struct pc_ctx *pc, void *ctx)
{
    memset(out, 0, sizeof *out);
    if (len > UINT32_MAX) return -1;
    if (ts_parser_language(parser) != lang && !ts_parser_set_language(parser, lang)) return -1;
    TSTree *tree = ts_parser_parse_string(parser, NULL, text ? text : "", (uint32_t)len);
    if (!tree) return -1;
    TSNode root = ts_tree_root_node(tree);

    pc->src = text ? text : "";
    pc->len = (uint32_t)len;
    pc->out = out;
    pc->aux = ts_tree_cursor_new(root);
    struct drive d = {w, pc, ctx, ts_node_has_error(root)};
    TSTreeCursor cur = ts_tree_cursor_new(root);
    if (w->descend) pc_walk_pruned(&cur, &d, drive_step_pruned);
    else pc_walk(&cur, &d, drive_step);
    if (w->after) w->after(ctx, root);
    ts_tree_cursor_delete(&cur);
    ts_tree_cursor_delete(&pc->aux);
    free(pc->frames);
    pc->frames = NULL;
    pc->nframes = pc->cap_frames = 0;
    if (!ts_arena_reclaims()) ts_tree_delete(tree);   /* else it goes with the arena */
    return 0;
}
