/*
 * outline: the repository's layout for a question (see outline.h). Two
 * queries read the files and their classes, functions and methods; each file
 * gets a short line (top-level names) and a full block (signatures, lines,
 * docstrings, methods); the files are ranked by qparse_match of their path
 * and names against the question, and laid out greedily: a file's block
 * while the short lines of every file after it still fit, else its short
 * line, and a last line counts the files left out.
 */
#include "outline.h"
#include "qparse.h"
#include "sqlx.h"
#include "store_rows.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHORT_LINE_CAP 400   /* one file's top-level names */
#define FULL_CAP 3000        /* one file's full block */
#define SIG_CAP 80           /* a signature in it */
#define DOC_CAP 100          /* a docstring's first sentence in it */
#define MORE_LINE 64         /* kept for "... and N more files" */
#define ABSENT_CAP 8         /* the question's missing words listed */

struct ofile {
    long long id;
    char *path;
    long nlines;
    char *shortl, *fulll;    /* the two lines, each ending in '\n' */
    double score;
};

static int by_id(const void *a, const void *b)
{
    long long x = (*(const struct ofile *const *)a)->id, y = (*(const struct ofile *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* the question's order: related files first (higher score), then by path */
static int by_rank(const void *a, const void *b)
{
    const struct ofile *x = *(const struct ofile *const *)a, *y = *(const struct ofile *const *)b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* s appended to b unless that would pass cap (counting the room for
 * " ...", a closing bracket and the newline); returns 0 when it no longer
 * fits, having added the ellipsis once. */
static int add_capped(struct buf *b, const char *s, size_t cap, int *cut)
{
    if (*cut) return 0;
    if (b->len + strlen(s) + 6 > cap) {
        buf_adds(b, " ...");
        *cut = 1;
        return 0;
    }
    buf_adds(b, s);
    return 1;
}

/* One symbol of a file, in start order. */
struct sym {
    int kind;
    long long id, parent;
    char *name, *sig, *doc;
    long start, end;
};

static void sym_free(struct sym *s)
{
    free(s->name);
    free(s->sig);
    free(s->doc);
}

/* The signature without its keyword ("def run(self)" -> "run(self)"), cut
 * to cap bytes; the name when there is none. */
static void sig_text(struct buf *b, const struct sym *s, size_t cap)
{
    static const char *const kw[] = {"async def ", "def ", "class ", "function ", "func "};
    const char *t = s->sig && *s->sig ? s->sig : s->name;
    for (size_t i = 0; i < ARRAY_LEN(kw); i++)
        if (!strncmp(t, kw[i], strlen(kw[i]))) {
            t += strlen(kw[i]);
            break;
        }
    size_t n = strcspn(t, "\n");
    const char *ret = strstr(t, ") -> ");   /* the parameters say enough; the return annotation is left out */
    if (ret && (size_t)(ret - t) < n) n = (size_t)(ret - t) + 1;
    if (n > cap) buf_printf(b, "%.*s...", (int)(cap - 3), t);
    else buf_add(b, t, n);
}

/* The docstring's first sentence on one line, cut to cap bytes. */
static void doc_text(struct buf *b, const char *doc, size_t cap)
{
    size_t k = 0, start = b->len;
    int space = 0;
    for (const char *d = doc + strspn(doc, " \t\r\n"); *d && k < cap; d++) {
        if (*d == ' ' || *d == '\t' || *d == '\r' || *d == '\n') {
            if (d[0] == '\n' && d[1 + strspn(d + 1, " \t\r")] == '\n') break;   /* a blank line ends it */
            space = 1;
            continue;
        }
        if (space && k) buf_addc(b, ' '), k++;
        space = 0;
        buf_addc(b, *d), k++;
        if (*d == '.' && (!d[1] || d[1] == ' ' || d[1] == '\n')) break;
    }
    if (k >= cap) {
        b->len = start + cap - 3;
        buf_adds(b, "...");
    }
}

/* A file's two forms: the short line (its top-level classes and functions
 * by name) and the full block (each with its signature, lines and the first
 * sentence of its docstring, a class's methods under it). */
static void file_lines(struct ofile *f, const struct sym *s, size_t n)
{
    struct buf sb = BUF_INIT, fb = BUF_INIT, t = BUF_INIT;
    buf_printf(&sb, "%s (%ld lines)", f->path, f->nlines);
    buf_printf(&fb, "%s (%ld lines)%s\n", f->path, f->nlines, n ? ":" : "");
    int scut = 0, fcut = 0, first = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i].parent) continue;   /* top level only; methods are added under their class */
        if (s[i].kind != STORE_SYM_CLASS && s[i].kind != STORE_SYM_FUNCTION) continue;
        buf_reset(&t);
        buf_printf(&t, "%s%s%s%s", first ? ": " : ", ", s[i].kind == STORE_SYM_CLASS ? "class " : "", s[i].name,
                   s[i].kind == STORE_SYM_FUNCTION ? "()" : "");
        first = 0;
        add_capped(&sb, buf_str(&t), SHORT_LINE_CAP, &scut);
        if (fcut) continue;
        buf_reset(&t);
        buf_adds(&t, s[i].kind == STORE_SYM_CLASS ? "  class " : "  ");
        sig_text(&t, &s[i], SIG_CAP);
        buf_printf(&t, " %ld-%ld", s[i].start, s[i].end);
        if (s[i].doc && *s[i].doc) {
            buf_adds(&t, ": ");
            doc_text(&t, s[i].doc, DOC_CAP);
        }
        buf_addc(&t, '\n');
        if (!add_capped(&fb, buf_str(&t), FULL_CAP, &fcut) || s[i].kind != STORE_SYM_CLASS) continue;
        int m = 0;
        const char *prev = NULL;
        for (size_t k = i + 1; k < n && !fcut; k++) {
            if (s[k].parent != s[i].id || s[k].kind != STORE_SYM_METHOD) continue;
            if (prev && !strcmp(prev, s[k].name)) continue;   /* a property's setter after its getter */
            prev = s[k].name;
            buf_reset(&t);
            buf_adds(&t, m++ ? "; " : "    ");
            sig_text(&t, &s[k], SIG_CAP);
            buf_printf(&t, " %ld-%ld", s[k].start, s[k].end);
            add_capped(&fb, buf_str(&t), FULL_CAP, &fcut);
        }
        if (m) buf_addc(&fb, '\n');
    }
    if (fb.len && fb.data[fb.len - 1] != '\n') buf_addc(&fb, '\n');
    buf_addc(&sb, '\n');
    f->shortl = buf_take(&sb);
    f->fulll = buf_take(&fb);
    buf_free(&t);
}

/* "Directories (files): flask (20), flask/json (4), ..." within cap bytes. */
static void layout_line(struct buf *out, struct ofile *files, size_t n, size_t cap)
{
    char **dirs = xreallocarray(NULL, n ? n : 1, sizeof *dirs);
    for (size_t i = 0; i < n; i++) {
        const char *slash = strrchr(files[i].path, '/');
        dirs[i] = slash ? xstrndup(files[i].path, (size_t)(slash - files[i].path)) : xstrdup(".");
    }
    qsort(dirs, n, sizeof *dirs, by_str);
    struct buf b = BUF_INIT;
    buf_adds(&b, "Directories (files):");
    int cut = 0;
    char tmp[600];
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(dirs[j], dirs[i])) j++;
        snprintf(tmp, sizeof tmp, "%s %.500s (%zu)", i ? "," : "", dirs[i], j - i);
        add_capped(&b, tmp, cap, &cut);
        i = j;
    }
    buf_addc(&b, '\n');
    buf_adds(out, buf_str(&b));
    buf_free(&b);
    for (size_t i = 0; i < n; i++) free(dirs[i]);
    free(dirs);
}

/* The question's words no indexed file holds in any form, as a line of the
 * outline (nothing when there is none): a model told so says the repository
 * lacks them rather than guessing where they are. q is weighed. */
static void absent_line(const struct qparse *q, struct buf *out)
{
    struct buf words = BUF_INIT;
    size_t na = qparse_absent_words(q, ABSENT_CAP, &words);
    if (na)
        buf_printf(out, "Words and names of the question that no indexed file contains (a word in any form, a name as written): %s%s.\n", buf_str(&words),
                   na > ABSENT_CAP ? " and more" : "");
    buf_free(&words);
}

char *outline_build(sqlite3 *db, const char *question, size_t budget)
{
    if (!db || budget < OUTLINE_MIN_BYTES) return NULL;
    struct ofile *files = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = NULL;
    char *result = NULL;
    struct sym *syms = NULL;
    size_t ns = 0, scap = 0;
    struct ofile **byid = NULL, **rank = NULL;
    struct qparse q;
    char err[256];
    int have_q = qparse_question(question ? question : "", &q, err, sizeof err) == 0;
    if (!have_q) qparse_free(&q);

    if (sqlite3_prepare_v2(db, "SELECT id, path, nlines FROM files ORDER BY path", -1, &st, NULL) != SQLITE_OK)
        goto out;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ARRAY_GROW(files, n, cap, 64);
        const char *p = (const char *)sqlite3_column_text(st, 1);
        files[n] = (struct ofile){sqlite3_column_int64(st, 0), xstrdup(p ? p : ""), (long)sqlite3_column_int64(st, 2),
                                  NULL, NULL, 0};
        n++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (!n) goto out;

    byid = xreallocarray(NULL, n, sizeof *byid);
    for (size_t i = 0; i < n; i++) byid[i] = &files[i];
    qsort(byid, n, sizeof *byid, by_id);
    if (sqlite3_prepare_v2(db,
                           "SELECT file_id, id, parent_id, kind_s, name, signature, start_line, end_line, "
                           "drqa_doc(docstring) FROM symbols WHERE kind_s IN (0, 1, 2) "
                           "ORDER BY file_id, start_line, id",
                           -1, &st, NULL) != SQLITE_OK)
        goto out;
    long long cur = -1;
    int more = 1;
    while (more) {
        more = sqlite3_step(st) == SQLITE_ROW;
        long long fid = more ? sqlite3_column_int64(st, 0) : -2;
        if (fid != cur && cur >= 0) {   /* a file's symbols are complete */
            struct ofile key = {.id = cur}, *kp = &key;
            struct ofile **hit = bsearch(&kp, byid, n, sizeof *byid, by_id);
            if (hit && !(*hit)->shortl) file_lines(*hit, syms, ns);
            for (size_t i = 0; i < ns; i++) sym_free(&syms[i]);
            ns = 0;
        }
        cur = fid;
        if (!more) break;
        ARRAY_GROW(syms, ns, scap, 64);
        const char *name = (const char *)sqlite3_column_text(st, 4);
        syms[ns++] = (struct sym){sqlite3_column_int(st, 3),
                                  sqlite3_column_int64(st, 1),
                                  sqlite3_column_type(st, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 2),
                                  xstrdup(name ? name : "?"),
                                  sqlx_col_dup(st, 5),
                                  sqlx_col_dup(st, 8),
                                  (long)sqlite3_column_int64(st, 6),
                                  (long)sqlite3_column_int64(st, 7)};
    }
    sqlite3_finalize(st);
    st = NULL;
    for (size_t i = 0; i < n; i++)
        if (!files[i].shortl) file_lines(&files[i], NULL, 0);

    struct buf absent = BUF_INIT;
    if (have_q) {
        qparse_weigh(&q, db);
        for (size_t i = 0; i < n; i++) files[i].score = qparse_match(&q, files[i].fulll, strlen(files[i].fulll), NULL);
        absent_line(&q, &absent);
    }
    rank = xreallocarray(NULL, n, sizeof *rank);
    for (size_t i = 0; i < n; i++) rank[i] = &files[i];
    qsort(rank, n, sizeof *rank, by_rank);

    struct buf b = BUF_INIT;
    buf_printf(&b, "Repository outline: %zu files, those most related to the question first. Where room allows, a "
                   "file's top-level classes and functions with their signatures, lines and first docstring sentence, "
                   "a class's methods indented under it; else one line: class Name, function().\n", n);
    layout_line(&b, files, n, budget / 6);
    /* the missing words' line comes last, when the room left allows it */
    if (absent.len + MORE_LINE + b.len > budget) buf_free(&absent);
    size_t room = budget - MORE_LINE - absent.len, rest = 0;
    for (size_t i = 0; i < n; i++) rest += strlen(files[i].shortl);
    size_t shown = 0;
    for (; shown < n; shown++) {
        const struct ofile *f = rank[shown];
        size_t sl = strlen(f->shortl), fl = strlen(f->fulll);
        rest -= sl;
        if (b.len + fl + rest <= room) buf_adds(&b, f->fulll);
        else if (b.len + sl <= room) buf_adds(&b, f->shortl);
        else break;
    }
    if (shown < n) buf_printf(&b, "... and %zu more files\n", n - shown);
    buf_add(&b, absent.data ? absent.data : "", absent.len);
    buf_free(&absent);
    if (b.len > budget) {   /* only a heading over a tiny budget: no outline */
        buf_free(&b);
        goto out;
    }
    result = buf_take(&b);
out:
    if (st) sqlite3_finalize(st);
    for (size_t i = 0; i < ns; i++) sym_free(&syms[i]);
    free(syms);
    for (size_t i = 0; i < n; i++) {
        free(files[i].path);
        free(files[i].shortl);
        free(files[i].fulll);
    }
    free(files);
    free(byid);
    free(rank);
    if (have_q) qparse_free(&q);
    return result;
}
