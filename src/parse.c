/*
 * parse: the table of language extractors compiled in, the choice of extractor
 * by file extension, the grammar ABI check run before any indexing, and the
 * destructor of a parse_result. Each language lives in its own parse_<lang>.c
 * behind a struct lang; the languages are the lines of src/languages.def
 * (their extensions: parse_extensions.c).
 */
#include <config.h> /* autoconf: DRQA_GRAMMAR_<lang> */
#include "parse.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* &extractor, when configure defined DRQA_GRAMMAR_<name> to 1. */
#define PARSE_PASTE(a, b) a##b
#define PARSE_CAT(a, b) PARSE_PASTE(a, b)
#define PARSE_IF_1(x) x,
#define PARSE_IF_0(x)
#define DRQA_LANGUAGE(name, package, version, folder, exts, extractor, need) \
    PARSE_CAT(PARSE_IF_, DRQA_GRAMMAR_##name)(&extractor)
const struct lang *const parse_languages[] = {
#include "languages.def"
    NULL,
};
#undef DRQA_LANGUAGE

const struct lang *parse_lang_for_path(const char *path)
{
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    for (size_t i = 0; parse_text_kinds[i]; i++)
        for (const char *const *n = parse_text_kinds[i]->names; n && *n; n++)
            if (strcmp(base, *n) == 0) return parse_text_kinds[i];
    const char *dot = strrchr(base, '.');
    /* '.py' alone is a hidden file, not a module without a name. */
    if (!dot || dot == base) return NULL;
    for (size_t i = 0; parse_languages[i]; i++)
        for (const char *const *e = parse_languages[i]->extensions; *e; e++)
            if (strcmp(dot, *e) == 0) return parse_languages[i];
    for (size_t i = 0; parse_text_kinds[i]; i++)
        for (const char *const *e = parse_text_kinds[i]->extensions; *e; e++)
            if (strcmp(dot, *e) == 0) return parse_text_kinds[i];
    return NULL;
}

int parse_is_text(const struct lang *l)
{
    return l && !l->language;
}

/* The grammar release each language is pinned to: the newest with an ABI that
 * Debian's libtree-sitter 0.20 loads (scripts/fetch-grammars.sh fetches it). */
static const char *grammar_pin(const char *lang)
{
#define DRQA_LANGUAGE(name, package, version, folder, exts, extractor, need) \
    if (strcmp(lang, #name) == 0) return package " " version;
#include "languages.def"
#undef DRQA_LANGUAGE
    return "the pinned grammar";
}

int parse_check_grammars(char *err, size_t errlen)
{
    for (size_t i = 0; parse_languages[i]; i++) {
        const struct lang *l = parse_languages[i];
        uint32_t abi = ts_language_version(l->language());
        if (abi < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION || abi > TREE_SITTER_LANGUAGE_VERSION) {
            if (err && errlen)
                snprintf(err, errlen,
                         "grammar tree-sitter-%s has language ABI %u, but the linked libtree-sitter "
                         "accepts ABI %d to %d; use %s (scripts/fetch-grammars.sh) and rebuild",
                         l->name, (unsigned)abi, TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
                         TREE_SITTER_LANGUAGE_VERSION, grammar_pin(l->name));
            return -1;
        }
    }
    return 0;
}

void parse_result_free(struct parse_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nsyms; i++) {
        struct parse_symbol *s = &r->syms[i];
        free(s->name);
        free(s->qualname);
        free(s->signature);
        free(s->decorators);
        free(s->docstring);
        free(s->bases);
    }
    for (size_t i = 0; i < r->nimports; i++) {
        free(r->imports[i].module);
        free(r->imports[i].name);
        free(r->imports[i].alias);
    }
    for (size_t i = 0; i < r->ncalls; i++) free(r->calls[i].callee);
    free(r->syms);
    free(r->imports);
    free(r->calls);
    memset(r, 0, sizeof *r);
}

static uint64_t call_hash(const struct parse_call *c)
{
    return hash64(c->callee, strlen(c->callee)) ^ ((uint64_t)(unsigned)c->caller * 0x9e3779b97f4a7c15ull);
}

void parse_merge_calls(struct parse_result *r)
{
    if (r->ncalls < 2) return;
    size_t cap = 16;
    while (cap < r->ncalls * 2) cap <<= 1;
    size_t *slot = xcalloc(cap, sizeof *slot);   /* kept index + 1; 0 = empty */
    size_t keep = 0;
    for (size_t i = 0; i < r->ncalls; i++) {
        struct parse_call *c = &r->calls[i];
        size_t k = (size_t)call_hash(c) & (cap - 1);
        for (; slot[k]; k = (k + 1) & (cap - 1)) {
            struct parse_call *o = &r->calls[slot[k] - 1];
            if (o->caller == c->caller && !strcmp(o->callee, c->callee)) break;
        }
        if (slot[k]) {
            r->calls[slot[k] - 1].n += c->n;
            free(c->callee);
            continue;
        }
        r->calls[keep] = *c;
        slot[k] = ++keep;
    }
    r->ncalls = keep;
    free(slot);
}
