/*
 * prompt: the role prompts of the LLM policy as plain-text templates with
 * named placeholders ({{question}}, {{trajectory}}, ...), loaded at run time
 * so users can change them without rebuilding. A template NAME.txt is looked
 * for in this order, the first readable file wins:
 *
 *   1. $XDG_CONFIG_HOME/drqa-tui/prompts/NAME.txt (else ~/.config/...): the
 *      user's override;
 *   2. $(pkgdatadir)/prompts/NAME.txt (DRQA_PKGDATADIR): the installed copy;
 *   3. $(top_srcdir)/prompts/NAME.txt (DRQA_SRCDIR): uninstalled runs.
 *
 * A placeholder is "{{" + a lowercase identifier + "}}"; any other "{{" is
 * literal text. Each role declares the placeholders it fills; a template that
 * uses another one is refused when it is loaded, with file:line, so a typo in
 * an override is found at start-up and not half-way through a search.
 *
 * Rendering caps every value at its own byte limit; a longer value is cut at
 * a line boundary where possible and ends with an explicit marker
 * "[... N bytes truncated ...]" so the model knows something is missing and
 * the prompt size stays bounded whatever the repository returns.
 *
 * Ownership: a struct prompt owns its path and text.
 */
#ifndef DRQA_PROMPT_H
#define DRQA_PROMPT_H

#include <stddef.h>

#define PROMPT_MAX_BYTES (256 * 1024)   /* a template larger than this is refused */
#define PROMPT_MAX_DIRS 4

struct prompt {
    char *name;       /* "planning" */
    char *path;       /* the file it was read from */
    char *text;
};

/* The directories searched by default, in order (strings owned by the
 * caller's array; free each). Returns how many were filled (at most max). */
size_t prompt_default_dirs(char **dirs, size_t max);

/* Loads NAME.txt from the first of dirs[0..ndirs) holding it (dirs NULL:
 * the default order above). allowed (NULL-terminated, may be NULL for no
 * check) lists the placeholders the template may use. Returns the template,
 * or NULL with err naming the file (or every directory tried) and the
 * problem. */
struct prompt *prompt_load(const char *name, const char *const *dirs, size_t ndirs,
                           const char *const *allowed, char *err, size_t errlen);
void prompt_free(struct prompt *p);   /* accepts NULL */

/* Checks that every placeholder of p is in allowed (NULL-terminated).
 * 0, or -1 with "FILE:LINE: unknown placeholder {{x}} ...". */
int prompt_check(const struct prompt *p, const char *const *allowed, char *err, size_t errlen);

struct prompt_var {
    const char *name;
    const char *value;   /* NULL renders as "" */
    size_t cap;          /* bytes; 0 = no cap */
};

/* Renders p with vars. A placeholder without a var is an error naming the
 * file and line. Returns the text (caller frees) or NULL with err. */
char *prompt_render(const struct prompt *p, const struct prompt_var *vars, size_t nvars, char *err,
                    size_t errlen);

/* A copy of s cut to at most cap bytes (marker included) with the marker
 * described above; s itself when it fits (copied). cap 0: no cap. Caller
 * frees. keep_tail: keep the end of s instead of its start (the marker then
 * comes first). */
char *prompt_cap(const char *s, size_t cap, int keep_tail);

#endif
