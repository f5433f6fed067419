/*
 * ts_arena: tree-sitter's memory for one file at a time. A parser thread
 * begins an arena, makes its parser, parses and walks the file, deletes the
 * parser and ends the arena: everything tree-sitter allocated on that
 * thread in between is gone at once, so the syntax tree is never freed node
 * by node. On sympy (1,471 Python files, 11.8 million nodes) freeing the
 * trees took 0.5 s of CPU and glibc's malloc inside the parse 0.15 s more.
 *
 * Tree-sitter allocates through the functions ts_arena_install gives it
 * (ts_set_allocator). On a thread with no arena begun, and for a pointer
 * outside the arena, they are glibc's malloc, calloc, realloc and free, so
 * a parser or tree made without an arena, before or after the install,
 * works as before. An arena reserves address space once (not memory) and
 * hands out blocks from it; when that runs out, blocks come from glibc and
 * ts_arena_reclaims says the tree must be deleted as usual.
 */
#ifndef DRQA_TS_ARENA_H
#define DRQA_TS_ARENA_H

#include <stddef.h>

struct ts_arena;

/* Routes tree-sitter's allocations through the arena functions. Once per
 * process, before threads that use tree-sitter start (the pool calls it on
 * the main thread); later calls do nothing. */
void ts_arena_install(void);

/* An arena reserving `reserve` bytes of address space (0: the default,
 * TS_ARENA_RESERVE); NULL when it cannot be reserved (the caller then
 * frees trees as usual). */
#define TS_ARENA_RESERVE ((size_t)1 << 30)
struct ts_arena *ts_arena_new(size_t reserve);
void ts_arena_free(struct ts_arena *a);

/* Tree-sitter's allocations on this thread come from a until ts_arena_end,
 * which drops them all (tree, cursors and parser must not be used after).
 * The pages of a large file's tree are given back past the first
 * TS_ARENA_KEEP bytes; those stay for the next file, whose tree would
 * otherwise fault them in again, zeroed. On sympy, whose 36 files of 128 KiB
 * or more have trees of 10 to 67 MB, keeping 32 MiB rather than 8 took a
 * cold index from 9.58 to 9.21 s of user and from 0.43 to 0.32 s of system
 * CPU (medians of 5) at the same peak RSS, 139 MB: the parser threads end,
 * and their arenas with them, before the build's peak, when it resolves
 * names. At 48 MiB that peak was 150 MB, at 64 MiB 163 MB. */
#define TS_ARENA_KEEP ((size_t)32 << 20)
void ts_arena_begin(struct ts_arena *a);
void ts_arena_end(struct ts_arena *a);

/* 1 when the arena begun on this thread holds all that tree-sitter
 * allocated since: a tree made now need not be deleted. 0 without an
 * arena, or once the arena ran out of room. */
int ts_arena_reclaims(void);

/* How many bytes of the arena's reservation its busiest file used. */
size_t ts_arena_peak(const struct ts_arena *a);

#endif
