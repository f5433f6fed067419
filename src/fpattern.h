/*
 * fpattern: the file_pattern argument of the actions. A glob over
 * repository-relative '/'-separated paths:
 *   *      any run of characters except '/'
 *   ?      one character except '/'
 *   **     as a whole path component: any number of directories (also none);
 *          at the end of the pattern: everything below
 *   [abc] [a-z] [!x] [^x]   character classes;  \c  a literal c
 *   {a,b}  alternatives (not nested)
 * A pattern matches a path when it matches the whole path or a tail of it that
 * starts after a '/': so a bare name ('app.py', '*.py') matches that basename
 * anywhere and 'sessions/db.py' matches 'pkg/sessions/db.py'. A leading '/' or
 * './' is ignored, and a pattern naming a directory ('pkg/sessions',
 * 'pkg/sessions/') matches every file below it. Matching is case-sensitive.
 */
#ifndef DRQA_FPATTERN_H
#define DRQA_FPATTERN_H

/* 1 when path matches pattern, 0 otherwise. A NULL or empty pattern matches all. */
int fpattern_match(const char *pattern, const char *path);

/* A pattern that matches path literally: every character the syntax above
 * gives a meaning (* ? [ ] { } \) is escaped with '\'. A file name such as
 * "a[1.py" is not a valid pattern as it stands. Caller frees. */
char *fpattern_escape(const char *path);

/* 1 when the whole of path matches pattern (no tails, no braces, no
 * directory rule): the glob above on its own, as ignore files use it. */
int fpattern_glob(const char *pattern, const char *path);

/* 1 when path (repository-relative) is test code, by the conventions of the
 * languages the index parses: a file test_*.py, *_test.py, tests.py,
 * conftest.py, *_test.go, *Test.java, *Tests.java, or *.test.EXT / *.spec.EXT
 * for a JavaScript or TypeScript EXT (js jsx mjs cjs ts tsx), or any file
 * under a directory named test, tests or __tests__. The one rule for "test
 * code": definition ranking, SemanticSearch's category and the offline
 * policy all ask it. */
int fpattern_is_test(const char *path);

/* 1 when pattern is well formed; 0 with a message (unclosed '[' or '{'). */
int fpattern_valid(const char *pattern, char *err, unsigned long errlen);

#endif
