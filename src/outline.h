/*
 * outline: a question's view of the repository's layout, from the index, for
 * a model to plan with: the directories with their file counts, then the
 * files, those most related to the question's terms first (qparse_match over
 * the path and the names, weighted by the terms' idf), the rest in path
 * order. A file is one line with its top-level classes and functions or,
 * where the budget leaves room (most related files first), a block with
 * their signatures, line ranges and first docstring sentence and a class's
 * methods under it. The text is deterministic (the same index and question
 * give the same bytes) and never longer than the budget, so a prompt cache
 * can keep it as part of a question's stable prefix.
 */
#ifndef DRQA_OUTLINE_H
#define DRQA_OUTLINE_H

#include <sqlite3.h>
#include <stddef.h>

#define OUTLINE_MIN_BYTES 400   /* a smaller budget gives no outline */

/* The outline of the index db for question, at most budget bytes (the
 * heading included); NULL when the budget is under OUTLINE_MIN_BYTES or the
 * index lists no file. Caller frees. */
char *outline_build(sqlite3 *db, const char *question, size_t budget);

#endif
