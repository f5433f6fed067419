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

static int __attribute__((unused)) tap_is_int(long long got, long long want, const char *name)
{
    int r = ok(got == want, "%s", name);
    if (!r) printf("#   got %lld, want %lld\n", got, want);
    return r;
}

static int __attribute__((unused)) tap_is_str(const char *got, const char *want, const char *name)
{
    int r = ok(got && want && strcmp(got, want) == 0, "%s", name);
    if (!r) printf("#   got '%s'\n#  want '%s'\n", got ? got : "(null)", want ? want : "(null)");
    return r;
}

/* is_int(got, want, fmt, ...) and is_str(got, want, fmt, ...): the name may be a format. */
#define TAP_NAME(...) tap_name(__VA_ARGS__)
static __attribute__((format(printf, 1, 2), unused)) const char *tap_name(const char *fmt, ...)
{
    static char name[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return name;
}
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), TAP_NAME(__VA_ARGS__))
#define is_str(got, want, ...) tap_is_str((got), (want), TAP_NAME(__VA_ARGS__))

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
