/*
 * langext: the file extensions of src/languages.def's rows, looked up by
 * extension (langext.h). Built from the table alone, apart from parse.c, so
 * that a caller needs no grammar.
 */
#include "langext.h"
#include "util.h"

#include <string.h>

#define LANGEXT_UNPAREN(...) __VA_ARGS__
#define DRQA_LANGUAGE(name, package, version, folder, exts, extractor, need) \
    {#name, (const char *const[]){LANGEXT_UNPAREN exts, NULL}},
static const struct {
    const char *language;
    const char *const *extensions;   /* each with its dot, NULL-terminated */
} rows[] = {
#include "languages.def"
};
#undef DRQA_LANGUAGE

const char *langext_language(const char *ext, size_t len)
{
    for (size_t i = 0; ext && i < ARRAY_LEN(rows); i++)
        for (const char *const *e = rows[i].extensions; *e; e++)
            if (strlen(*e) == len && memcmp(*e, ext, len) == 0) return rows[i].language;
    return NULL;
}
