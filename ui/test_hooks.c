/*
 * test_hooks: the front end's test hooks (test_hooks.h). Built twice: into
 * libuihooks.a without DRQA_TEST_HOOKS for drqa-tui (nothing read, nothing
 * changed), and with it into tests/drqa-tui-hooks, whose own object is linked
 * ahead of the library (mk/ui.am).
 */
#include "test_hooks.h"

#include <stddef.h>

#ifdef DRQA_TEST_HOOKS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int test_hook_start_paused(void)
{
    const char *sp = getenv("DRQA_TUI_START_PAUSED");
    return sp && *sp && strcmp(sp, "0") != 0;
}

const char *test_hook_elapsed(void)
{
    const char *fe = getenv("DRQA_TUI_ELAPSED");
    return fe && *fe ? fe : NULL;
}

/* A bounded wait is no use here: the test creates the file once it has read
 * the phase off the screen, and quitting cancels the update. */
void test_hook_phase_hold(const char *phase, const atomic_int *cancel)
{
    const char *dir = getenv("DRQA_TEST_PHASE_HOLD");
    if (!dir || !*dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, phase);
    while (access(path, F_OK) != 0 && !(cancel && atomic_load(cancel))) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void test_hook_wait_hold(void)
{
    const char *dir = getenv("DRQA_TEST_WAIT_HOLD");
    if (!dir || !*dir) return;
    char hold[4096], held[4096];
    snprintf(hold, sizeof hold, "%s/hold", dir);
    snprintf(held, sizeof held, "%s/held", dir);
    if (access(hold, F_OK) != 0) return;
    FILE *f = fopen(held, "w");
    if (f) fclose(f);
    while (access(hold, F_OK) == 0) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
#else
int test_hook_start_paused(void) { return 0; }
const char *test_hook_elapsed(void) { return NULL; }
void test_hook_phase_hold(const char *phase, const atomic_int *cancel) { (void)phase; (void)cancel; }
void test_hook_wait_hold(void) {}
#endif
