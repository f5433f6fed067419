/*
 * tap.h: a tiny TAP producer for the C unit tests (automake's tap-driver reads it).
 * ok(cond, fmt, ...) prints one test line (a failed one followed by the file
 * and line of the check); done_testing() prints the plan and returns the exit
 * status. Include once per test program.
 */
#ifndef DRQA_TAP_H
#define DRQA_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) tap_ok(__FILE__, __LINE__, (cond), __VA_ARGS__)
static int __attribute__((format(printf, 4, 5), unused)) tap_ok(const char *file, int line, int cond,
                                                                 const char *fmt, ...)
{
    va_list ap;
    tap_n++;
    if (!cond) tap_failed++;
    printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!cond) printf("#   at %s:%d\n", file, line);
    fflush(stdout);
    return cond;
}

static int __attribute__((unused)) tap_is_int(const char *file, int line, long long got, long long want,
                                              const char *name)
{
    int r = tap_ok(file, line, got == want, "%s", name);
    if (!r) printf("#   got %lld, want %lld\n", got, want);
    return r;
}

static int __attribute__((unused)) tap_is_str(const char *file, int line, const char *got, const char *want,
                                              const char *name)
{
    int r = tap_ok(file, line, got && want && strcmp(got, want) == 0, "%s", name);
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
#define is_int(got, want, ...) \
    tap_is_int(__FILE__, __LINE__, (long long)(got), (long long)(want), TAP_NAME(__VA_ARGS__))
#define is_str(got, want, ...) tap_is_str(__FILE__, __LINE__, (got), (want), TAP_NAME(__VA_ARGS__))

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
