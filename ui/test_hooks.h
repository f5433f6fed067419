/*
 * test_hooks.h: the front end's test hooks, so that the tmux tests get
 * screens that do not depend on timing. drqa-tui is linked with them built
 * without DRQA_TEST_HOOKS (ui/test_hooks.c): then they read no environment
 * and change nothing, so the installed program has no such hook. The test
 * build of the program, tests/drqa-tui-hooks (mk/ui.am), has them built
 * with it:
 *   DRQA_TUI_START_PAUSED   set and not 0: the search starts paused
 *   DRQA_TUI_ELAPSED        the status line shows this text, not the clock
 *   DRQA_TEST_PHASE_HOLD    a directory: each phase of the index update
 *                           waits until a file named after it exists there
 *   DRQA_TEST_WAIT_HOLD     a directory: while a file 'hold' is in it, the
 *                           front end's loop, about to wait for keys and
 *                           events, creates 'held' there and waits until
 *                           'hold' is gone
 */
#ifndef DRQA_UI_TEST_HOOKS_H
#define DRQA_UI_TEST_HOOKS_H

#include <stdatomic.h>

/* 1 when the search is to start paused */
int test_hook_start_paused(void);
/* the text shown instead of the elapsed time, or NULL */
const char *test_hook_elapsed(void);
/* Waits until the phase may go on (or *cancel is set; cancel may be NULL). */
void test_hook_phase_hold(const char *phase, const atomic_int *cancel);
/* Before the front end's loop waits: holds it while asked to (a signal that
 * comes meanwhile must still wake the wait that follows). */
void test_hook_wait_hold(void);

#endif
