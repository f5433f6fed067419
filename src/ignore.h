/*
 * ignore: the rules of gitignore-style files (.gitignore, .ignore,
 * .drqaignore) with git's semantics, for the directory walk and for
 * --explain. One file is parsed into rules once; a path is decided against
 * the files that apply to it, given from the lowest precedence to the highest
 * (the root's before a subdirectory's, and at one level .gitignore, then
 * .ignore, then .drqaignore). The highest file holding a matching rule
 * decides, by its last matching rule; a '!' rule re-includes.
 *
 * Syntax (gitignore(5)): '#' comments and blank lines; trailing spaces
 * dropped unless escaped; '\' escapes the next character ('\#', '\!', '\ ');
 * '!' negates; a trailing '/' matches directories only; a pattern with a '/'
 * at its start or middle is anchored to the file's directory, one without
 * matches a name at any depth below it; '*', '?', '[...]' and '**' as in
 * fpattern_glob.
 */
#ifndef DRQA_IGNORE_H
#define DRQA_IGNORE_H

#include <stddef.h>

struct ignore_rule {
    char *pat;            /* the glob, without '!', the leading and the trailing '/' */
    char *text;           /* the line as written (trailing spaces dropped) */
    int line;             /* 1-based */
    int negate, dironly, anchored;
};

struct ignore_file {
    char *path;           /* the file, relative to the root: 'sub/.gitignore' */
    char *base;           /* its directory, relative to the root: 'sub', '' for the root */
    size_t baselen;
    struct ignore_rule *rules;
    size_t nrules;
};

/* Parses text[0..len) of the file name in directory dir (relative to the
 * root, "" for the root). Returns a malloc'd file (ignore_file_free). */
struct ignore_file *ignore_file_parse(const char *dir, const char *name, const char *text, size_t len);
void ignore_file_free(struct ignore_file *f);

/* Decides rel (relative to the root, '/'-separated; is_dir when it is a
 * directory) against files[0..n), lowest precedence first. Returns the rule
 * that decides (its negate says re-included), with *from its file, or NULL
 * when no rule matches. */
const struct ignore_rule *ignore_decide(struct ignore_file *const *files, size_t n, const char *rel, int is_dir,
                                        const struct ignore_file **from);

/* 'sub/.gitignore:3: build/' for a rule of f (malloc'd). */
char *ignore_rule_describe(const struct ignore_file *f, const struct ignore_rule *r);

#endif
