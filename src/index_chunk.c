/*
 * index_chunk: the retrieval units of a file (see index_chunk.h). Chunks follow the
 * symbols the extractor found, so a search hit is always a whole function, a
 * class outline or a stretch of module code, never half of one. Functions
 * nested in another function stay inside their parent's chunk: a separate
 * chunk would repeat the same lines and make one match count twice.
 */
#include "index_chunk.h"
#include "tok.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct lines {
    const char *text;
    size_t len;
    size_t *start;        /* start[i] = offset of line i+1; start[n] = len */
    int n;
};

static void lines_init(struct lines *L, const char *text, size_t len)
{
    L->text = text;
    L->len = len;
    /* count first, so that the array is allocated once */
    size_t nl = 0;
    for (const char *p = text, *end = text + len; (p = memchr(p, '\n', (size_t)(end - p))); p++) nl++;
    L->start = xmalloc((nl + 2) * sizeof *L->start);
    L->n = 0;
    L->start[0] = 0;
    for (const char *p = text, *end = text + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        L->start[++L->n] = (size_t)(p - text) + 1;
    /* a last line without a newline still counts */
    if (L->start[L->n] < len) L->start[++L->n] = len;
}

/* The bytes [*s, *e) of lines a..b (1-based, inclusive, clamped) without the
 * last line's line break, so that blank lines inside the range are kept. */
static void span_of(const struct lines *L, int a, int b, size_t *s, size_t *e)
{
    if (a < 1) a = 1;
    if (b > L->n) b = L->n;
    if (a > b) {
        *s = *e = 0;
        return;
    }
    *s = L->start[a - 1];
    *e = L->start[b];
    if (*e > *s && L->text[*e - 1] == '\n') (*e)--;
    if (*e > *s && L->text[*e - 1] == '\r') (*e)--;
}

/* Appends lines a..b as span_of delimits them. */
static void add_lines(const struct lines *L, int a, int b, struct buf *out)
{
    size_t s, e;
    span_of(L, a, b, &s, &e);
    buf_add(out, L->text + s, e - s);
}

/* The chunk's text is its head (may be empty) followed by lines a..b of the
 * file: recorded as that span, so that the index need not store it twice. */
static void set_span(struct chunk *c, const struct lines *L, int a, int b, size_t headlen)
{
    size_t s, e;
    span_of(L, a, b, &s, &e);
    c->span = 1;
    c->off = s;
    c->len = e - s;
    c->headlen = headlen;
}

static void add_indent(const struct lines *L, int line, struct buf *out)
{
    if (line < 1 || line > L->n) return;
    for (size_t i = L->start[line - 1]; i < L->start[line] && (L->text[i] == ' ' || L->text[i] == '\t'); i++)
        buf_addc(out, L->text[i]);
}

static int blank_line(const struct lines *L, int line)
{
    for (size_t i = L->start[line - 1]; i < L->start[line]; i++)
        if (L->text[i] != ' ' && L->text[i] != '\t' && L->text[i] != '\n' && L->text[i] != '\r') return 0;
    return 1;
}

static struct chunk *new_chunk(struct chunk_list *l)
{
    ARRAY_GROW(l->v, l->n, l->cap, 16);
    struct chunk *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    return c;
}

static char *terms(const char *s)
{
    struct buf b = BUF_INIT;
    if (s) tok_terms(s, strlen(s), 0, &b);
    return buf_take(&b);
}

/* name_derived: name is what the index derives for the chunk (struct chunk) */
static void finish(struct chunk *c, struct buf *text, const char *name, int name_derived, const char *doc,
                   const char *path_terms)
{
    c->name_derived = name_derived;
    c->text = buf_take(text);
    size_t len = strlen(c->text);
    hash64_hex(hash64(c->text, len), c->hash);
    c->fts_name = terms(name);
    c->fts_doc = terms(doc);
    struct buf b = BUF_INIT;
    tok_terms(c->text, len, 0, &b);
    c->fts_body = buf_take(&b);
    c->fts_path = xstrdup(path_terms);
}

/* 'qualname module', or the qualified name alone outside a module. */
static char *name_of(const struct parse_symbol *s, const char *module)
{
    size_t q = strlen(s->qualname), m = module && *module ? strlen(module) : 0;
    char *r = xmalloc(q + (m ? m + 1 : 0) + 1);
    memcpy(r, s->qualname, q);
    if (m) {
        r[q] = ' ';
        memcpy(r + q + 1, module, m);
        q += m + 1;
    }
    r[q] = 0;
    return r;
}

/* finish for the chunk of symbol si (s), of kind "class" or "function": its
 * lines and its derived name. */
static void finish_symbol(struct chunk *c, struct buf *text, const struct parse_symbol *s, int si, const char *kind,
                          const char *module, const char *path_terms)
{
    c->sym = si;
    c->kind = kind;
    c->start_line = s->start_line;
    c->end_line = s->end_line;
    char *name = name_of(s, module);
    finish(c, text, name, 1, s->docstring, path_terms);
    free(name);
}

/* Minified code puts many definitions on one line, and a chunk is made of
 * whole lines: each would repeat the same (possibly huge) text. A definition
 * whose lines are exactly the previous chunk's adds its name to that chunk
 * instead. first: the file's first chunk in out. Returns 1 when merged. */
static int merge_same_lines(struct chunk_list *out, size_t first, const struct parse_symbol *s, const char *module)
{
    if (out->n <= first) return 0;
    struct chunk *c = &out->v[out->n - 1];
    if (c->start_line != s->start_line || c->end_line != s->end_line) return 0;
    char *name = name_of(s, module);
    char *more = terms(name);
    free(name);
    if (*more) {
        char *joined = *c->fts_name ? xasprintf("%s %s", c->fts_name, more) : xstrdup(more);
        free(c->fts_name);
        c->fts_name = joined;
        c->name_derived = 0;
    }
    free(more);
    return 1;
}

/* 'class X(Base):' as written on the class's keyword line, or rebuilt from
 * the signature when the header spans several lines. */
static void class_header(const struct lines *L, const struct parse_symbol *cls, struct buf *out)
{
    struct buf line = BUF_INIT;
    add_lines(L, cls->body_line, cls->body_line, &line);
    const char *t = buf_str(&line);
    size_t n = line.len;
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
    if (n && t[n - 1] == ':') {
        buf_add(out, t, n);
    } else {
        add_indent(L, cls->body_line, out);
        buf_printf(out, "%s:", cls->signature ? cls->signature : cls->name);
    }
    buf_free(&line);
}

static void chunk_class(const struct lines *L, const struct parse_result *pr, int ci, const char *module,
                        const char *path_terms, struct chunk_list *out)
{
    const struct parse_symbol *cls = &pr->syms[ci];
    struct buf text = BUF_INIT;
    int line = cls->start_line;
    /* members whose bodies are left out, in source order (syms are in order) */
    for (size_t j = (size_t)ci + 1; j < pr->nsyms; j++) {
        const struct parse_symbol *m = &pr->syms[j];
        if (m->parent != ci || m->kind == PARSE_VARIABLE) continue;
        if (m->start_line < line) continue;
        if (m->start_line > line) {
            if (text.len) buf_addc(&text, '\n');
            add_lines(L, line, m->start_line - 1, &text);
        }
        if (text.len) buf_addc(&text, '\n');
        if (m->body_line > m->start_line) {         /* decorators */
            add_lines(L, m->start_line, m->body_line - 1, &text);
            buf_addc(&text, '\n');
        }
        add_indent(L, m->body_line, &text);
        buf_adds(&text, m->signature ? m->signature : m->name);
        buf_add(&text, ": ...", 5);
        line = m->end_line + 1;
    }
    if (line <= cls->end_line) {
        if (text.len) buf_addc(&text, '\n');
        add_lines(L, line, cls->end_line, &text);
    }
    struct chunk *c = new_chunk(out);
    size_t s, e;
    span_of(L, cls->start_line, cls->end_line, &s, &e);
    c->off = s;   /* the outline's reference: the class's lines */
    c->len = e - s;
    finish_symbol(c, &text, cls, ci, "class", module, path_terms);
}

static void chunk_function(const struct lines *L, const struct parse_result *pr, int fi, const char *module,
                           const char *path_terms, struct chunk_list *out)
{
    const struct parse_symbol *f = &pr->syms[fi];
    struct buf text = BUF_INIT;
    size_t hs = 0, he = 0;
    if (f->parent >= 0 && pr->syms[f->parent].kind == PARSE_CLASS) {
        class_header(L, &pr->syms[f->parent], &text);
        buf_addc(&text, '\n');
        span_of(L, pr->syms[f->parent].body_line, pr->syms[f->parent].body_line, &hs, &he);
    }
    size_t headlen = text.len;
    add_lines(L, f->start_line, f->end_line, &text);
    struct chunk *c = new_chunk(out);
    set_span(c, L, f->start_line, f->end_line, headlen);
    /* the header as written on its line: the index keeps where it is */
    if (headlen && headlen - 1 <= he - hs && headlen - 1 < 65536 && memcmp(text.data, L->text + hs, headlen - 1) == 0) {
        c->head_line = 1;
        c->head_off = hs;
    }
    finish_symbol(c, &text, f, fi, "function", module, path_terms);
}

static void chunk_window(const struct lines *L, int a, int b, const char *module, const char *path_terms,
                         struct chunk_list *out)
{
    while (a <= b && blank_line(L, a)) a++;
    while (b >= a && blank_line(L, b)) b--;
    if (a > b) return;
    struct buf text = BUF_INIT;
    add_lines(L, a, b, &text);
    struct chunk *c = new_chunk(out);
    set_span(c, L, a, b, 0);
    c->sym = -1;
    c->kind = "module";
    c->start_line = a;
    c->end_line = b;
    finish(c, &text, module, 1, NULL, path_terms);
}

void chunk_file(const char *text, size_t len, const struct parse_result *pr, const char *path,
                const char *module, struct chunk_list *out)
{
    struct lines L;
    lines_init(&L, text, len);
    char *path_terms = terms(path);
    size_t first = out->n;
    /* lines owned by top-level definitions; the rest is module code */
    char *covered = xcalloc((size_t)L.n + 2, 1);
    for (size_t i = 0; i < pr->nsyms; i++) {
        const struct parse_symbol *s = &pr->syms[i];
        if (s->kind == PARSE_VARIABLE) continue;
        int in_class = s->parent >= 0 && pr->syms[s->parent].kind == PARSE_CLASS;
        if ((s->kind == PARSE_CLASS || s->parent < 0 || in_class) && merge_same_lines(out, first, s, module)) {
            /* text already in the previous chunk */
        } else if (s->kind == PARSE_CLASS) chunk_class(&L, pr, (int)i, module, path_terms, out);
        else if (s->parent < 0 || in_class) chunk_function(&L, pr, (int)i, module, path_terms, out);
        if (s->parent < 0)
            for (int l = s->start_line; l <= s->end_line && l <= L.n; l++)
                if (l >= 1) covered[l] = 1;
    }
    for (int l = 1; l <= L.n;) {
        if (covered[l]) {
            l++;
            continue;
        }
        int a = l;
        while (l <= L.n && !covered[l] && l - a < CHUNK_WINDOW_LINES) l++;
        chunk_window(&L, a, l - 1, module, path_terms, out);
    }
    free(covered);
    free(path_terms);
    free(L.start);
}

void chunk_keep_written(struct chunk *c)
{
    if (!c->text) return;
    if (c->span && c->headlen && !c->head_line) {
        if (strlen(c->text) > c->headlen) {
            char *head = xstrndup(c->text, c->headlen);
            free(c->text);
            c->text = head;
        }
        return;
    }
    free(c->text);
    c->text = NULL;
}

void chunk_list_free(struct chunk_list *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].text);
        free(l->v[i].fts_name);
        free(l->v[i].fts_doc);
        free(l->v[i].fts_body);
        free(l->v[i].fts_path);
        free(l->v[i].packed);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- text files ---------------------------------------------------------------- */

/* The heading the line starts for a text kind (malloc'd, without its
 * markup), or NULL when it starts no section. next: the following line, for
 * reStructuredText's underlines. */
static char *text_heading(const char *kind, const char *s, size_t n, const char *next, size_t nn)
{
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n')) n--;
    while (nn && (next[nn - 1] == '\r' || next[nn - 1] == '\n')) nn--;
    if (!n) return NULL;
    if (!strcmp(kind, "markdown")) {
        size_t h = 0;
        while (h < n && s[h] == '#') h++;
        if (h == 0 || h > 6 || (h < n && s[h] != ' ')) return NULL;
        while (h < n && s[h] == ' ') h++;
        return xstrndup(s + h, n - h);
    }
    if (!strcmp(kind, "rst")) {
        if (s[0] == ' ' || nn < n || nn < 2 || !strchr("=-~^\"'`#*+", next[0])) return NULL;
        for (size_t i = 0; i < nn; i++)
            if (next[i] != next[0]) return NULL;
        return xstrndup(s, n);
    }
    if (!strcmp(kind, "toml") || !strcmp(kind, "ini")) {
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= n || s[i] != '[') return NULL;
        const char *close = memchr(s + i, ']', n - i);
        if (!close) return NULL;
        while (i < n && s[i] == '[') i++;
        return xstrndup(s + i, (size_t)(close - s) - i);
    }
    if (!strcmp(kind, "yaml")) {
        /* a top-level key */
        if (s[0] == ' ' || s[0] == '\t' || s[0] == '#' || s[0] == '-') return NULL;
        const char *colon = memchr(s, ':', n);
        return colon ? xstrndup(s, (size_t)(colon - s)) : NULL;
    }
    return NULL;
}

void chunk_text(const char *text, size_t len, const char *kind, const char *path, struct chunk_list *out)
{
    struct lines L;
    lines_init(&L, text, len);
    char *path_terms = terms(path);
    int fence = 0;
    char *heading = NULL;
    int a = 1;
    for (int l = 1; l <= L.n + 1; l++) {
        char *h = NULL;
        if (l <= L.n) {
            const char *s = text + L.start[l - 1];
            size_t n = L.start[l] - L.start[l - 1];
            if (!strcmp(kind, "markdown") && n >= 3 && !strncmp(s, "```", 3)) fence = !fence;
            const char *next = l < L.n ? text + L.start[l] : "";
            size_t nn = l < L.n ? L.start[l + 1] - L.start[l] : 0;
            if (!fence) h = text_heading(kind, s, n, next, nn);
        }
        /* a section ends before the next heading, at the end, or when it is a window long */
        if (l > a && (h || l > L.n || l - a >= CHUNK_WINDOW_LINES)) {
            int b = l - 1;
            while (a <= b && blank_line(&L, a)) a++;
            while (b >= a && blank_line(&L, b)) b--;
            if (a <= b) {
                struct buf t = BUF_INIT;
                add_lines(&L, a, b, &t);
                struct chunk *c = new_chunk(out);
                set_span(c, &L, a, b, 0);
                c->sym = -1;
                c->kind = "text";
                c->start_line = a;
                c->end_line = b;
                finish(c, &t, heading, 0, NULL, path_terms);
            }
            a = l;
        }
        if (h) {
            free(heading);
            heading = h;
        }
    }
    free(heading);
    free(path_terms);
    free(L.start);
}
