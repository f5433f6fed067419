/* Unit tests for fpattern: the file_pattern globs of the actions. */
#include "tap.h"
#include "fpattern.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void m(const char *pat, const char *path, int want)
{
    ok(fpattern_match(pat, path) == want, "'%s' %s '%s'", pat, want ? "matches" : "does not match", path);
}

int main(void)
{
    /* whole paths and single-component wildcards */
    m("tinyweb/app.py", "tinyweb/app.py", 1);
    m("tinyweb/*.py", "tinyweb/app.py", 1);
    m("tinyweb/*.py", "tinyweb/core/base.py", 0);
    m("tinyweb/?pp.py", "tinyweb/app.py", 1);
    m("tinyweb/?.py", "tinyweb/app.py", 0);
    m("tinyweb?app.py", "tinyweb/app.py", 0);
    m("*", "a/b.py", 1);                       /* tail 'b.py' */
    /* a bare name matches the basename anywhere */
    m("app.py", "tinyweb/app.py", 1);
    m("app.py", "app.py", 1);
    m("app.py", "tinyweb/myapp.py", 0);
    m("*.py", "deep/er/x.py", 1);
    m("*.py", "deep/er/x.pyc", 0);
    m("*.py", "README.md", 0);
    /* a tail after a '/' boundary */
    m("sessions/db.py", "tinyweb/sessions/db.py", 1);
    m("sessions/*.py", "tinyweb/sessions/db.py", 1);
    m("essions/db.py", "tinyweb/sessions/db.py", 0);
    /* ** across directories */
    m("**/*.py", "a.py", 1);
    m("**/*.py", "a/b/c.py", 1);
    m("tinyweb/**/*.py", "tinyweb/app.py", 1);
    m("tinyweb/**/*.py", "tinyweb/core/x/base.py", 1);
    m("tinyweb/**/base.py", "tinyweb/sessions/base.py", 1);
    m("tinyweb/**", "tinyweb/a/b/c.txt", 1);
    m("tinyweb/**", "other/a.py", 0);
    m("core/**/*.py", "x/core/a/b.py", 1);
    /* leading '/' and './' ignored */
    m("/tinyweb/app.py", "tinyweb/app.py", 1);
    m("./tinyweb/app.py", "tinyweb/app.py", 1);
    m("/app.py", "tinyweb/app.py", 1);
    /* a directory matches the files below it */
    m("tinyweb/sessions", "tinyweb/sessions/db.py", 1);
    m("tinyweb/sessions/", "tinyweb/sessions/db.py", 1);
    m("tinyweb/sessions/", "tinyweb/sessions.py", 0);
    m("sessions", "tinyweb/sessions/db.py", 1);
    m("tinyweb/sess", "tinyweb/sessions/db.py", 0);
    /* character classes */
    m("[abc]pp.py", "tinyweb/app.py", 1);
    m("[!a]pp.py", "tinyweb/app.py", 0);
    m("[^a]pp.py", "tinyweb/bpp.py", 1);
    m("test_[0-9].py", "t/test_7.py", 1);
    m("test_[0-9].py", "t/test_x.py", 0);
    m("a[/]b", "a/b", 0);
    m("\\*.py", "*.py", 1);
    m("\\*.py", "x.py", 0);
    /* braces */
    m("*.{py,pyi}", "a/b.pyi", 1);
    m("*.{py,pyi}", "a/b.md", 0);
    m("{core,sessions}/base.py", "tinyweb/core/base.py", 1);
    m("{core,sessions}/base.py", "tinyweb/other/base.py", 0);
    /* case-sensitive, empty pattern matches all */
    m("App.py", "tinyweb/app.py", 0);
    m("", "anything/at/all", 1);
    ok(fpattern_match(NULL, "x"), "NULL matches all");

    /* many stars against a long near-miss (found by fuzz/fuzz_fpattern): the
     * matcher prunes instead of backtracking exponentially; the alarm turns a
     * hang into a failure */
    alarm(60);
    char longpath[400];
    memset(longpath, 'a', sizeof longpath - 2);
    longpath[sizeof longpath - 2] = 'c';
    longpath[sizeof longpath - 1] = 0;
    longpath[100] = '/';
    m("*a*a*a*a*a*a*a*a*a*a*a*a*b", longpath, 0);
    m("**/*a*a*a*a*a*a*a*a*a*a*a*a*b", longpath, 0);
    longpath[sizeof longpath - 2] = 'b';
    m("*a*a*a*a*a*a*a*a*a*a*a*a*b", longpath, 1);
    alarm(0);

    char err[256];
    ok(fpattern_valid("src/**/*.py", err, sizeof err), "a normal pattern is valid");
    ok(!fpattern_valid("src/[ab.py", err, sizeof err), "an unclosed class is refused");
    ok(strstr(err, "unclosed '['") != NULL, "and named: %s", err);
    ok(!fpattern_valid("*.{py,pyi", err, sizeof err), "an unclosed brace is refused");
    ok(strstr(err, "'{'") != NULL, "and named: %s", err);

    /* a path used as a pattern is escaped, so it matches itself literally */
    static const char *const odd[] = {"pkg/flux[cap.py", "a/*star?.py", "b/{x,y}].py", "c/back\\slash.py"};
    for (size_t i = 0; i < ARRAY_LEN(odd); i++) {
        char *pat = fpattern_escape(odd[i]);
        ok(fpattern_valid(pat, err, sizeof err), "escaped '%s' ('%s') is a valid pattern", odd[i], pat);
        ok(fpattern_match(pat, odd[i]), "and matches the path itself");
        free(pat);
    }
    char *pat = fpattern_escape("a/*star?.py");
    ok(!fpattern_match(pat, "a/Xstar?.py") && !fpattern_match(pat, "a/*starX.py"), "and nothing else: %s", pat);
    free(pat);
    /* the one test-code rule */
    static const char *const tests[] = {"tests/test_auth.py", "pkg/test_x.py", "a/b_test.py", "conftest.py",
                                        "a/tests/helpers.py", "app/tests.py", "test/x.py", "net/http/server_test.go",
                                        "src/main/java/FooTest.java", "FooTests.java", "lib/a.test.js",
                                        "ui/b.spec.tsx", "c.test.mjs", "src/__tests__/d.js"};
    static const char *const impl[] = {"web/testing.py", "web/auth.py", "contest.py", "latest/x.py",
                                       "attest/y.py", "testing/z.go", "Test.java", "Tests.java", "pytest.ini",
                                       "lib/test.js", "a.test.py.txt", "x.spec.rb", "protest.go", "cmd/test_x.go"};
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
        ok(fpattern_is_test(tests[i]) == 1, "test code: %s", tests[i]);
    for (size_t i = 0; i < sizeof impl / sizeof *impl; i++)
        ok(fpattern_is_test(impl[i]) == 0, "not test code: %s", impl[i]);
    return done_testing();
}
