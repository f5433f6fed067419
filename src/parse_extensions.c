/*
 * parse_extensions: the file extensions of every language of
 * src/languages.def, compiled in or not, as parse_extensions_<name> arrays
 * (NULL-terminated). Each extractor names its own in its struct lang
 * (PARSE_LANG_OF); they live apart from parse.c, which lists the extractors,
 * so that the extractors and that list do not use each other.
 */
#include "parse.h"

#include <stddef.h>

#define DRQA_LANGUAGE(name, package, version, folder, exts, extractor, need) \
    const char *const parse_extensions_##name[] = {PARSE_UNPAREN exts, NULL};
#define PARSE_UNPAREN(...) __VA_ARGS__
#include "languages.def"
#undef DRQA_LANGUAGE
