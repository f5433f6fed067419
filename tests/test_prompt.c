/* Tests for the prompt templates: the directories searched and their order
 * (the user's override wins over the installed copy, which wins over the
 * source tree), errors naming the file (missing, unknown placeholder, NUL
 * bytes), rendering with named values, and the byte caps with their explicit
 * truncation markers. */
#include "tap.h"
#include "harness.h"
#include "prompt.h"
#include "util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char T[256];

static void put(const char *path, const char *text, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        diag("cannot write %s", path);
        return;
    }
    fwrite(text, 1, n == (size_t)-1 ? strlen(text) : n, fp);
    fclose(fp);
}

static void mkdirs(const char *path)
{
    char *cmd = xasprintf("mkdir -p '%s'", path);
    if (system(cmd) != 0) diag("mkdir %s failed", path);
    free(cmd);
}

static void test_default_dirs(void)
{
    char *xdg = xasprintf("%s/xdg", T), *home = xasprintf("%s/home", T);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    setenv("HOME", home, 1);
    char *d[PROMPT_MAX_DIRS];
    size_t n = prompt_default_dirs(d, PROMPT_MAX_DIRS);
    is_int(n, 3, "three directories are searched");
    char *want = xasprintf("%s/drqa-tui/prompts", xdg);
    is_str(d[0], want, "first the user's override under XDG_CONFIG_HOME");
    is_str(d[1], DRQA_PKGDATADIR "/prompts", "then the installed data directory");
    is_str(d[2], DRQA_SRCDIR "/prompts", "then the source tree");
    for (size_t i = 0; i < n; i++) free(d[i]);
    free(want);

    unsetenv("XDG_CONFIG_HOME");
    n = prompt_default_dirs(d, PROMPT_MAX_DIRS);
    want = xasprintf("%s/.config/drqa-tui/prompts", home);
    is_str(d[0], want, "without XDG_CONFIG_HOME the override is under ~/.config");
    for (size_t i = 0; i < n; i++) free(d[i]);
    free(want);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    free(xdg);
    free(home);
}

static void test_order(void)
{
    char *a = xasprintf("%s/a", T), *b = xasprintf("%s/b", T), *pa = xasprintf("%s/x.txt", a),
         *pb = xasprintf("%s/x.txt", b);
    mkdirs(a);
    mkdirs(b);
    put(pb, "from b {{question}}\n", (size_t)-1);
    const char *dirs[] = {a, b};
    char err[512] = "";
    struct prompt *p = prompt_load("x", dirs, 2, NULL, err, sizeof err);
    ok(p != NULL, "found in the second directory");
    is_str(p ? p->path : NULL, pb, "path is the second directory's file");
    prompt_free(p);

    put(pa, "from a\n", (size_t)-1);
    p = prompt_load("x", dirs, 2, NULL, err, sizeof err);
    is_str(p ? p->text : NULL, "from a\n", "the first directory wins when both have it");
    prompt_free(p);

    p = prompt_load("missing", dirs, 2, NULL, err, sizeof err);
    ok(p == NULL, "a missing template is an error");
    char *want = xasprintf("the missing prompt (missing.txt) was not found; looked for %s/missing.txt, %s/missing.txt",
                           a, b);
    is_str(err, want, "the error names every file tried");
    free(want);

    /* The default order, through XDG_CONFIG_HOME. */
    char *xdg = xasprintf("%s/xdg", T), *od = xasprintf("%s/drqa-tui/prompts", xdg),
         *op = xasprintf("%s/planning.txt", od);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    mkdirs(od);
    put(op, "override {{question}}\n", (size_t)-1);
    p = prompt_load("planning", NULL, 0, NULL, err, sizeof err);
    is_str(p ? p->path : NULL, op, "the user's override wins over the shipped template");
    is_str(p ? p->text : NULL, "override {{question}}\n", "and its text is used");
    prompt_free(p);
    unlink(op);
    p = prompt_load("planning", NULL, 0, NULL, err, sizeof err);
    const char *installed = DRQA_PKGDATADIR "/prompts/planning.txt";
    const char *expect = access(installed, R_OK) == 0 ? installed : DRQA_SRCDIR "/prompts/planning.txt";
    is_str(p ? p->path : NULL, expect, "without an override the installed or source copy is read");
    prompt_free(p);
    free(xdg);
    free(od);
    free(op);
    free(a);
    free(b);
    free(pa);
    free(pb);
}

static void test_check(void)
{
    char *d = xasprintf("%s/c", T), *f = xasprintf("%s/bad.txt", d);
    mkdirs(d);
    const char *dirs[] = {d};
    const char *allowed[] = {"question", "report", NULL};
    put(f, "Q: {{question}}\n{{ not a placeholder }} {{Upper}} {{}}\nR: {{nope}}\n", (size_t)-1);
    char err[512] = "";
    struct prompt *p = prompt_load("bad", dirs, 1, allowed, err, sizeof err);
    ok(p == NULL, "a template with an unknown placeholder is refused at load");
    char *want = xasprintf("%s:3: unknown placeholder {{nope}}; the bad prompt may use {{question}}, {{report}}", f);
    is_str(err, want, "the error gives file:line, the name and the allowed ones");
    free(want);

    put(f, "Q: {{question}}\n{{ not a placeholder }} {{Upper}}\n", (size_t)-1);
    p = prompt_load("bad", dirs, 1, allowed, err, sizeof err);
    ok(p != NULL, "other uses of {{ are literal text");
    struct prompt_var v[] = {{"question", "why?", 0}};
    char *r = p ? prompt_render(p, v, 1, err, sizeof err) : NULL;
    is_str(r, "Q: why?\n{{ not a placeholder }} {{Upper}}\n", "literal braces are kept as written");
    free(r);
    prompt_free(p);

    put(f, "a\0b", 3);
    p = prompt_load("bad", dirs, 1, NULL, err, sizeof err);
    ok(p == NULL && strstr(err, "NUL byte") && strstr(err, f), "a NUL byte is refused, naming the file");
    prompt_free(p);
    free(d);
    free(f);
}

static void test_render(void)
{
    struct prompt p = {(char *)"role", (char *)"/x/role.txt", (char *)"Q={{question}};\nR={{report}}|{{report}}\nE={{empty}}."};
    struct prompt_var v[] = {{"question", "what?", 0}, {"report", "r1", 0}, {"empty", NULL, 0}};
    char err[256] = "";
    char *r = prompt_render(&p, v, 3, err, sizeof err);
    is_str(r, "Q=what?;\nR=r1|r1\nE=.", "placeholders filled, repeated ones too, NULL as empty");
    free(r);
    r = prompt_render(&p, v, 2, err, sizeof err);
    ok(r == NULL, "a placeholder without a value is an error");
    is_str(err, "/x/role.txt:3: placeholder {{empty}} has no value in the role prompt", "naming file and line");

    /* Caps: 10 lines of 11 bytes. */
    struct buf b = BUF_INIT;
    for (int i = 0; i < 10; i++) buf_adds(&b, "0123456789\n");
    char *head = prompt_cap(buf_str(&b), 100, 0);
    is_str(head, "0123456789\n0123456789\n0123456789\n0123456789\n[... 66 bytes truncated ...]",
           "head kept up to a line boundary, with the count of bytes cut");
    ok(strlen(head) <= 100, "within the cap");
    char *tail = prompt_cap(buf_str(&b), 100, 1);
    is_str(tail, "[... 66 bytes truncated ...]\n0123456789\n0123456789\n0123456789\n0123456789\n",
           "tail kept from a line boundary, marker first");
    char *whole = prompt_cap(buf_str(&b), 110, 0);
    is_str(whole, buf_str(&b), "a value that fits is unchanged");
    struct prompt q = {(char *)"role", (char *)"/x/role.txt", (char *)"<{{v}}>"};
    struct prompt_var cv[] = {{"v", buf_str(&b), 100}};
    r = prompt_render(&q, cv, 1, err, sizeof err);
    char *want = xasprintf("<%s>", head);
    is_str(r, want, "render applies the var's cap");
    free(want);
    free(r);
    free(head);
    free(tail);
    free(whole);

    /* No line break at all, and multi-byte text: never cut inside a character. */
    buf_reset(&b);
    for (int i = 0; i < 200; i++) buf_adds(&b, "\xc3\xa9");   /* é */
    char *u = prompt_cap(buf_str(&b), 120, 0);
    const char *m = strstr(u, "[... ");
    ok(m && (m - u) % 2 == 1 && (size_t)(m - u - 1) <= 72, "cut between characters, then a newline and the marker");
    ok(m && strcmp(m, "[... 328 bytes truncated ...]") == 0, "marker counts the bytes removed");
    free(u);
    buf_free(&b);
}

static void test_shipped(void)
{
    const char *dirs[] = {DRQA_SRCDIR "/prompts"};
    const char *names[] = {"perception", "planning", "filter", "evaluation", "answer"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        char err[512] = "";
        struct prompt *p = prompt_load(names[i], dirs, 1, NULL, err, sizeof err);
        ok(p && strstr(p->text, "{{question}}") && strstr(p->text, "JSON"),
           "shipped %s prompt loads, asks about the question and for JSON", names[i]);
        prompt_free(p);
    }
}

int main(void)
{
    if (!temp_dir(T, sizeof T, "prompt")) return 1;
    test_default_dirs();
    test_order();
    test_check();
    test_render();
    test_shipped();
    char *cmd = xasprintf("rm -rf '%s'", T);
    if (system(cmd) != 0) diag("cleanup failed");
    free(cmd);
    return done_testing();
}
