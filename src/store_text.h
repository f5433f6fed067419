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
 *   drqa_doc(docstring)                    symbols.docstring: its text, a BLOB
 *                                          being packed (store_doc_pack) and
 *                                          checked against its CRC-32
 *   drqa_damage()                          the message of the first damaged
 *                                          text any of these met on this
 *                                          connection, NULL for none
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

/* drqa_damage() of db: a malloc'd message, or NULL when its functions met
 * no damage (or db has none of them). A reader that meets damage while it
 * goes on without what it could not read (an action that fails, a search
 * that tries another) asks this once it is done. */
char *store_text_damage(sqlite3 *db);

/* A docstring as symbols.docstring keeps it packed, for drqa_doc: the
 * CRC-32 of text[0..len) (4 bytes, little-endian), then the text packed
 * against a dictionary of words common in docstrings (ztext_dict_pack, with
 * zp's stream): malloc'd, *zlen bytes; NULL when that is not shorter than
 * the text (it is then kept as it is). */
struct ztext_packer;
unsigned char *store_doc_pack(struct ztext_packer *zp, const char *text, size_t len, size_t *zlen);

/* 1 when every file text, packed chunk text and packed docstring of db (an index of the
 * current schema) reads back whole, else 0 with the first damaged one, or
 * sqlite's complaint, in detail. */
int store_text_check_all(sqlite3 *db, char *detail, size_t detaillen);

#endif
