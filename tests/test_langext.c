/* Every file extension of src/languages.def counts as a file name wherever
 * the code tells files from other words: a question's file terms (qparse),
 * an answer's cited paths (metrics) and, for the JavaScript and TypeScript
 * rows, the *.test.EXT / *.spec.EXT test files (fpattern). The extensions
 * are read from the table here, so a list of their own in any of the three
 * that misses a row's extension fails. */
#include "tap.h"
#include "fpattern.h"
#include "langext.h"
#include "metrics.h"
#include "qparse.h"

#include <stdio.h>
#include <string.h>

#define UNPAREN(...) __VA_ARGS__
#define DRQA_LANGUAGE(name, package, version, folder, exts, extractor, need) \
    {#name, (const char *const[]){UNPAREN exts, NULL}},
static const struct {
    const char *language;
    const char *const *extensions;
} rows[] = {
#include "languages.def"
};
#undef DRQA_LANGUAGE

static int has(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0) return 1;
    return 0;
}

static void one(const char *language, const char *ext)
{
    char file[64], text[160];
    snprintf(file, sizeof file, "helper%s", ext);
    is_str(langext_language(ext, strlen(ext)), language, "%s is %s's", ext, language);

    struct qparse q;
    snprintf(text, sizeof text, "Where is %s loaded?", file);
    qparse_question(text, &q, NULL, 0);
    ok(has(q.files, q.nfiles, file), "qparse: '%s' names a file", text);
    qparse_free(&q);

    struct strv v = STRV_INIT;
    snprintf(text, sizeof text, "It is read in %s and nowhere else.", file);
    metrics_paths_in_text(text, &v);
    ok(has(v.v, v.n, file), "metrics: '%s' cites a file", text);
    strv_free(&v);

    int js = !strcmp(language, "javascript") || !strcmp(language, "typescript") || !strcmp(language, "tsx");
    if (js) {
        snprintf(file, sizeof file, "src/helper.test%s", ext);
        ok(fpattern_is_test(file), "fpattern: %s is a test file", file);
        snprintf(file, sizeof file, "src/helper.spec%s", ext);
        ok(fpattern_is_test(file), "fpattern: %s is a test file", file);
    }
    snprintf(file, sizeof file, "src/helper%s", ext);
    ok(!fpattern_is_test(file), "fpattern: %s is not a test file", file);
}

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        for (const char *const *e = rows[i].extensions; *e; e++) one(rows[i].language, *e);
    ok(!langext_language(".txt", 4), ".txt is no language's");
    ok(!langext_language(".p", 2), "a prefix of .py is no language's");
    return done_testing();
}
