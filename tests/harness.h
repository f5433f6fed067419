/*
 * harness.h: small helpers the C unit tests share (the TAP lines themselves
 * are tests/tap.h). Header-only: include it after tap.h.
 *   count(db, sql)  the first column of the first row of a query (a count),
 *                   or -1 when the query fails or returns no row
 *   file_count(path, needle)  how many times needle stands in the file (a
 *                   log the program wrote), 0 when it cannot be read
 *   remove_tree(dir)  removes a test's temporary directory and all it holds
 *   temp_dir(buf, size, name)  makes a fresh directory drqa-test-NAME-XXXXXX
 *                   under $TMPDIR (/tmp when unset) into buf; buf or NULL.
 *                   `make check` points TMPDIR at a directory of its own and
 *                   fails when a test leaves anything there (Makefile.am)
 *   temp_file(buf, size, name)  the same for a file (mkstemp): its fd or -1
 */
#ifndef DRQA_HARNESS_H
#define DRQA_HARNESS_H

#include "util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long __attribute__((unused)) count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static int __attribute__((unused)) file_count(const char *path, const char *needle)
{
    size_t len;
    char *t = read_file(path, 0, &len);
    int n = 0;
    for (const char *p = t; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    free(t);
    return n;
}

static void __attribute__((unused)) remove_tree(const char *dir)
{
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("# could not remove %s\n", dir);
    free(cmd);
}

static int __attribute__((unused)) temp_name(char *buf, size_t size, const char *name)
{
    const char *t = getenv("TMPDIR");
    int n = snprintf(buf, size, "%s/drqa-test-%s-XXXXXX", t && *t ? t : "/tmp", name);
    return n > 0 && (size_t)n < size;
}

static char *__attribute__((unused)) temp_dir(char *buf, size_t size, const char *name)
{
    return temp_name(buf, size, name) ? mkdtemp(buf) : NULL;
}

static int __attribute__((unused)) temp_file(char *buf, size_t size, const char *name)
{
    return temp_name(buf, size, name) ? mkstemp(buf) : -1;
}

#endif
