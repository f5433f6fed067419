/*
 * pathsafe: confinement of caller-given paths to the repository. Paths come
 * from a language model or a user, so '..', absolute paths and symlinks must
 * never lead outside the repository root. Resolution is lexical first
 * ('a/./b/../c' -> 'a/c'), then, for whatever part exists on disk, by
 * realpath(): a symlink whose target leaves the root is refused even when the
 * lexical path looks inside.
 */
#ifndef DRQA_PATHSAFE_H
#define DRQA_PATHSAFE_H

#include <stddef.h>

/* Resolves given (relative to root_abs, or absolute) to a repository-relative,
 * '/'-separated path without '.', '..' or repeated slashes ("" for the root
 * itself). root_abs must be an absolute path. Returns 0 and a malloc'd *rel
 * (caller frees), or -1 with a message naming the path and the reason. */
int pathsafe_resolve(const char *root_abs, const char *given, char **rel, char *err, size_t errlen);

/* Lexical normalisation only: collapses '.', '..' and '//' of a relative path.
 * Returns a malloc'd string, or NULL when '..' climbs above the start. */
char *pathsafe_normalize(const char *rel);

#endif
