/*
 * tap.h: a tiny TAP producer for the C unit tests (automake's tap-driver reads it).
 * ok(cond, fmt, ...) prints one test line; done_testing() prints the plan and
 * returns the exit status. Include once per test program.
 */
#ifndef DRQA_TAP_H
#define DRQA_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static int __attribute__((format(printf, 2, 3), unused)) ok(int cond, const char *fmt, ...)
{
    va_list ap;
    tap_n++;
    if (!cond) tap_failed++;
    printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

#define is_int(got, want, ...) \
    (ok((long long)(got) == (long long)(want), __VA_ARGS__) ? 1 : \
     (printf("#   got %lld, want %lld\n", (long long)(got), (long long)(want)), 0))
#define is_str(got, want, ...) \
    (ok((got) && (want) && strcmp((got), (want)) == 0, __VA_ARGS__) ? 1 : \
     (printf("#   got '%s'\n#  want '%s'\n", (got) ? (got) : "(null)", (want) ? (want) : "(null)"), 0))

static void __attribute__((unused)) diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static int __attribute__((unused)) done_testing(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#endif
