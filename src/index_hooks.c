/*
 * index_hooks: the test hooks of the index update. Compiled into libdrqa as
 * no-ops, and again with -DDRQA_TEST_HOOKS into the test build of the program
 * (tests/drqa-tui-hooks, mk/index.am), whose object is linked ahead of the
 * library's; drqa-tui itself reads none of these variables.
 */
#include "index_int.h"
#include "ts_arena.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What each hook does:
 *   DRQA_TEST_SWAP="symlink:REL:TARGET" (or "hardlink:...") replaces the
 *     listed file REL with a link to TARGET just before it is opened, the
 *     window an attacker racing the indexer would use.
 *   DRQA_TEST_KILL_AFTER=N kills the process (SIGKILL) once N parsed files
 *     are written, in the middle of the update's transaction.
 *   DRQA_TEST_EDGE_BUDGET=BYTES replaces the memory a fresh build's kept
 *     edges may take (INDEX_PENDING_BUDGET), so that a small tree takes the
 *     path of a large one.
 *   DRQA_TEST_EARLY_FIT=BYTES replaces INDEX_EARLY_FIT_BUDGET, the size of
 *     a vector fit that runs whole beside resolving (0: every fit's
 *     quantised vectors after it).
 *   DRQA_TEST_DERIVE_PLACE=N hands the file at place N (N >= 1) in path
 *     order to a fresh build's derived data as place N - 1: one place comes
 *     twice and one never, as a writer that lost track of the order would
 *     hand them (derive.c then stores none of what it built).
 *   DRQA_TEST_TS_ARENA=BYTES replaces the address space each parser
 *     thread's tree-sitter arena reserves (TS_ARENA_RESERVE, ts_arena.h):
 *     a small one runs out in a large file, whose tree then comes partly
 *     from glibc and is freed node by node; 0 means no arena at all.
 *   DRQA_TEST_HOLD=FILE creates FILE once the first parsed file is written
 *     and waits (at most 120 s) until FILE is removed: an update that holds
 *     the write lock, or a fresh build whose side file exists, for as long
 *     as a test needs to act on it. */
#ifdef DRQA_TEST_HOOKS
void test_swap(int rootfd, const char *spec, const char *rel)
{
    if (!spec) return;
    int hard = str_starts(spec, "hardlink:");
    if (!hard && !str_starts(spec, "symlink:")) return;
    const char *p = strchr(spec, ':') + 1, *colon = strchr(p, ':');
    if (!colon || strlen(rel) != (size_t)(colon - p) || strncmp(p, rel, (size_t)(colon - p)) != 0) return;
    if (unlinkat(rootfd, rel, 0) != 0 ||
        (hard ? linkat(AT_FDCWD, colon + 1, rootfd, rel, 0) : symlinkat(colon + 1, rootfd, rel)) != 0)
        log_msg("DRQA_TEST_SWAP %s: %s", rel, strerror(errno));
}

const char *test_swap_spec(void) { return getenv("DRQA_TEST_SWAP"); }

long test_kill_after(void)
{
    const char *v = getenv("DRQA_TEST_KILL_AFTER");
    return v && *v ? atol(v) : -1;
}

void test_kill_check(long written, long kill_after)
{
    if (written == kill_after) raise(SIGKILL);
    const char *hold = getenv("DRQA_TEST_HOLD");
    if (written != 1 || !hold || !*hold) return;
    int fd = open(hold, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    for (int i = 0; i < 12000 && access(hold, F_OK) == 0; i++) usleep(10000);
}

size_t pending_budget(void)
{
    const char *v = getenv("DRQA_TEST_EDGE_BUDGET");
    return v && *v ? (size_t)atol(v) : INDEX_PENDING_BUDGET;
}

size_t early_fit_budget(void)
{
    const char *v = getenv("DRQA_TEST_EARLY_FIT");
    return v && *v ? (size_t)atol(v) : INDEX_EARLY_FIT_BUDGET;
}

size_t held_budget(void)
{
    const char *v = getenv("DRQA_TEST_HELD_BUDGET");
    return v && *v ? (size_t)atol(v) : INDEX_HELD_BUDGET;
}

size_t ts_arena_reserve(void)
{
    const char *v = getenv("DRQA_TEST_TS_ARENA");
    return v && *v ? (size_t)atol(v) : TS_ARENA_RESERVE;
}

size_t derive_place(size_t place)
{
    const char *v = getenv("DRQA_TEST_DERIVE_PLACE");
    return v && *v && atol(v) > 0 && place == (size_t)atol(v) ? place - 1 : place;
}
#else
void test_swap(int rootfd, const char *spec, const char *rel) { (void)rootfd; (void)spec; (void)rel; }
const char *test_swap_spec(void) { return NULL; }
long test_kill_after(void) { return -1; }
void test_kill_check(long written, long kill_after) { (void)written; (void)kill_after; }
size_t pending_budget(void) { return INDEX_PENDING_BUDGET; }
size_t held_budget(void) { return INDEX_HELD_BUDGET; }
size_t early_fit_budget(void) { return INDEX_EARLY_FIT_BUDGET; }
size_t derive_place(size_t place) { return place; }
size_t ts_arena_reserve(void) { return TS_ARENA_RESERVE; }
#endif
