/*
 * fuzz_parse: every file in a repository is parsed, whatever it holds. The
 * first input byte picks one of the languages compiled in (parse_languages),
 * the rest is the file's bytes; they go through the indexer's own path:
 * lenient UTF-8 decoding, the language's extractor, the module name of a
 * path and the chunker. Checked: the extractor's promises to the indexer
 * (lines inside the file, start <= end, parents and callers pointing at a
 * symbol of the file, names present).
 */
#include "index_chunk.h"
#include "parse.h"
#include "index_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static TSParser *parsers[16];

static void check(const struct parse_result *pr, int nlines)
{
    for (size_t i = 0; i < pr->nsyms; i++) {
        const struct parse_symbol *s = &pr->syms[i];
        if (!s->name || !s->qualname) abort();
        if (s->start_line < 1 || s->end_line < s->start_line || s->end_line > nlines) abort();
        if (s->parent < -1 || s->parent >= (int)pr->nsyms || s->parent == (int)i) abort();
    }
    for (size_t i = 0; i < pr->ncalls; i++) {
        const struct parse_call *c = &pr->calls[i];
        if (!c->callee || c->caller < -1 || c->caller >= (int)pr->nsyms) abort();
        if (c->line < 1 || c->line > nlines) abort();
    }
    for (size_t i = 0; i < pr->nimports; i++) {
        const struct parse_import *im = &pr->imports[i];
        if (!im->module || im->line < 1 || im->line > nlines || im->level < 0) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t nlang = 0;
    while (parse_languages[nlang]) nlang++;
    if (size < 1 || nlang == 0) return 0;
    size_t li = data[0] % nlang;
    const struct lang *lang = parse_languages[li];
    if (li >= sizeof parsers / sizeof *parsers) return 0;
    if (!parsers[li]) {
        parsers[li] = ts_parser_new();
        if (!ts_parser_set_language(parsers[li], lang->language())) abort();
    }
    size_t len = 0;
    int bad = 0;
    char *text = scan_decode_utf8((const char *)data + 1, size - 1, &len, &bad);
    int nlines = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') nlines++;
    struct parse_result pr;
    memset(&pr, 0, sizeof pr);
    if (lang->extract(parsers[li], text, len, &pr) == 0) check(&pr, nlines);
    else {
        parse_result_free(&pr);
        memset(&pr, 0, sizeof pr);
    }
    char path[64] = "pkg/sub/mod";
    strcat(path, lang->extensions[0]);
    char *module = lang->module_name ? lang->module_name(path) : NULL;
    struct chunk_list cl;
    memset(&cl, 0, sizeof cl);
    chunk_file(text, len, &pr, path, module, &cl);
    chunk_list_free(&cl);
    free(module);
    parse_result_free(&pr);
    free(text);
    return 0;
}
