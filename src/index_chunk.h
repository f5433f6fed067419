/*
 * index_chunk: cuts a parsed file into retrieval units for full-text search and
 * embeddings. A function or method is one chunk (a method carries its class
 * header line as context); a class is one chunk holding its header,
 * docstring, class-level statements and member signatures but no bodies;
 * module-level code outside top-level definitions comes in windows of about
 * forty lines. Each chunk also carries its code-aware FTS terms (tok_terms),
 * computed here so that the parser threads, not the single writer, pay for it.
 */
#ifndef DRQA_CHUNK_H
#define DRQA_CHUNK_H

#include <stddef.h>
#include "parse.h"

#define CHUNK_WINDOW_LINES 40

struct chunk {
    int sym;               /* index into the parse_result's syms, -1 for a module window */
    const char *kind;      /* "function" | "class" | "module" (static strings) */
    int start_line, end_line;
    char *text;            /* context header + code */
    /* span: text is its first headlen bytes (a method's class header line and
     * a line break, or nothing) followed by the file's decoded bytes
     * [off, off + len); else text is made up (a class outline) of lines of
     * the bytes [off, off + len) (the class's), which it is stored packed
     * against (packed: ztext.h's ztext_ref_pack, by the indexer) */
    int span;
    size_t headlen, off, len;
    /* head_line: the head is the file's bytes [head_off, head_off + headlen - 1)
     * and a line break (a class's header line as written) */
    int head_line;
    size_t head_off;
    unsigned char *packed;
    size_t packed_len;
    char hash[17];         /* hash64 hex of text */
    char *fts_name, *fts_doc, *fts_body, *fts_path;  /* tok_terms of each FTS column */
    /* fts_name is the terms of the chunk's symbol's qualified name and the
     * file's module (a module window: of the module), which the index
     * derives again (store.c, chunks_fts_src): it need not be stored */
    int name_derived;
};

/* Owns the chunks and their strings. */
struct chunk_list {
    struct chunk *v;
    size_t n, cap;
};

/* Appends the chunks of one file: text[0..len) as decoded, pr its parse
 * result, path its repository-relative path, module its dotted name or NULL. */
void chunk_file(const char *text, size_t len, const struct parse_result *pr, const char *path,
                const char *module, struct chunk_list *out);
/* Appends the text chunks (kind "text") of a text file of kind (the text
 * kind's name, parse_text_kinds): one per section (a Markdown or
 * reStructuredText heading, a TOML or INI [section], a top-level YAML key)
 * of at most CHUNK_WINDOW_LINES lines, named by its heading. */
void chunk_text(const char *text, size_t len, const char *kind, const char *path, struct chunk_list *out);
void chunk_list_free(struct chunk_list *l);
/* Once c is hashed, tokenised and, when made up, packed: drops the parts of
 * its text the index's writer does not read (a span's text past its head; a
 * packed chunk's whole text, left NULL). A parsed file waits for the writer
 * holding its chunks, and their texts are the largest part of it. */
void chunk_keep_written(struct chunk *c);

#endif
