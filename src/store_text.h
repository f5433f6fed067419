/*
 * store_text: reading the file texts the index keeps compressed
 * (files.ztext, files.tlen; the stored form is ztext.h's). Every reader goes
 * through the SQL functions registered here on each connection (store.c
 * registers them with the schema's other functions):
 *
 *   drqa_text(ztext, tlen)                 a file's text; for a scan of every file
 *   drqa_file_text(id, hash, ztext, tlen)  the same, kept for the next read of
 *                                          that file on this connection
 *   drqa_load_span(id, hash, ztext, tlen, off, len)
 *   drqa_cached_span(id, hash, off, len)   bytes [off, off + len) of a file's
 *                                          text (the view chunks): the
 *                                          second gives them from a kept text,
 *                                          NULL when it is not kept, without
 *                                          reading the file's row
 *   drqa_outline(packed, ref, hash)        a made-up chunk text (a class
 *                                          outline) packed against ref, its
 *                                          span (ztext.h), checked against
 *                                          the chunk's hash
 *
 * Texts are kept per connection by file id and content hash, the last few
 * read (STORE_TEXT_KEEP files, STORE_TEXT_KEEP_BYTES at most but always the
 * last one): a question reads the same few files many times, and the chunks
 * of a file are read one after another. A stream that does not read back
 * whole is an SQL error saying the index holds a damaged file text and what
 * to do; no text is given for it.
 */
#ifndef DRQA_STORE_TEXT_H
#define DRQA_STORE_TEXT_H

#include <sqlite3.h>
#include <stddef.h>

#define STORE_TEXT_KEEP 8
#define STORE_TEXT_KEEP_BYTES ((size_t)8 << 20)

/* Registers the functions above on db. SQLITE_OK or sqlite's error code. */
int store_text_register(sqlite3 *db);

/* 1 when every file text and packed chunk text of db (an index of the
 * current schema) reads back whole, else 0 with the first damaged one, or
 * sqlite's complaint, in detail. */
int store_text_check_all(sqlite3 *db, char *detail, size_t detaillen);

#endif
