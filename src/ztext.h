/*
 * ztext: the stored form of a file's decoded text: the text's bytes as one
 * gzip stream (RFC 1952: deflate data followed by the text's CRC-32 and
 * length), kept beside the text's length in bytes. A stream is read back
 * only whole: it must end where the blob ends, its CRC-32 and length must
 * match what it inflates to, and that must be exactly the length kept beside
 * it, so that a damaged blob is an error and not another text. (gzip rather
 * than zlib's own format: zlib's Adler-32 lets some damage through that a
 * CRC-32 catches: one bit flipped in the deflate data of a repetitive text,
 * in tests/test_ztext.c, inflated to another text with the same Adler-32.)
 *
 * The stream is what any gzip reader inflates (Python's gzip.decompress or
 * zlib.decompress(z, 31)); nothing is added to it. The index keeps it in
 * files.ztext and the length in files.tlen (store.h). Compressing is the
 * indexer's parser threads' work (index.c), inflating that of the SQL
 * functions every reader of the index goes through (store_text.h).
 */
#ifndef DRQA_ZTEXT_H
#define DRQA_ZTEXT_H

#include <stddef.h>

/* The zlib level the indexer compresses file texts at: levels 1 to 9
 * measured on django in ztext.c. */
#define ZTEXT_LEVEL 1

/* The largest text ztext_pack takes (an sqlite value holds at most 2^31 - 1 bytes). */
#define ZTEXT_MAX ((size_t)0x7fffffff)

/* text[0..len) (len <= ZTEXT_MAX) compressed at ZTEXT_LEVEL: a malloc'd
 * stream of *zlen bytes (caller frees). Aborts on out-of-memory, as xmalloc does. */
unsigned char *ztext_pack(const char *text, size_t len, size_t *zlen);

/* The same with a deflate stream kept from one text to the next, for a
 * thread that packs many: the stream's 270 KB are set up once, not once a
 * text (and not faulted in again after the indexer hands free memory back).
 * A packer belongs to one thread at a time. */
struct ztext_packer;
struct ztext_packer *ztext_packer_new(void);
void ztext_packer_free(struct ztext_packer *p);   /* accepts NULL */
unsigned char *ztext_pack_with(struct ztext_packer *p, const char *text, size_t len, size_t *zlen);

/* Inflates the stream z[0..zlen) into out[0..len) and puts a NUL at
 * out[len] (out holds len + 1 bytes). Returns 0, or -1 with err saying what
 * is wrong when the stream is damaged: not gzip, cut short, followed by
 * other bytes, its CRC-32 or length wrong, or giving another length than len. */
int ztext_unpack(const void *z, size_t zlen, char *out, size_t len, char *err, size_t errlen);

/* A text made mostly of another's lines (a class outline of the class's
 * source lines: index_chunk.h) is kept packed against that reference text:
 * its length (4 bytes, little-endian) and then a raw deflate stream (RFC
 * 1951) whose preset dictionary is the reference's last ZTEXT_REF_WINDOW
 * bytes, so that a line it repeats costs a few bytes. It reads back only
 * with the same reference; a reader checks what it gets (the chunk's hash
 * does, store_text.c). ztext_ref_pack uses p's second stream (set up on its
 * first use); p may be NULL for a stream of the call's own. */
#define ZTEXT_REF_WINDOW 32768
unsigned char *ztext_ref_pack(struct ztext_packer *p, const char *ref, size_t reflen, const char *text, size_t len,
                              size_t *zlen);
/* The same form for many short texts packed against one dictionary (kept
 * by address: the same dict must not change while p lives): a small stream
 * primed with dict once and copied for each text. It reads back with
 * ztext_ref_unpack and the dictionary as ref. */
unsigned char *ztext_dict_pack(struct ztext_packer *p, const char *dict, size_t dictlen, const char *text, size_t len,
                               size_t *zlen);
/* The text of z[0..zlen) packed against ref: a malloc'd copy with a NUL
 * after it in *out and its length in *len, and 0; or -1 with err saying what
 * is wrong (nothing allocated). */
int ztext_ref_unpack(const void *z, size_t zlen, const char *ref, size_t reflen, char **out, size_t *len, char *err,
                     size_t errlen);

/* Whether len bytes can be the text of a stream of zlen bytes: deflate
 * expands no byte of its stream into more than 258 (1032 per input byte at
 * most, counting the stream's own bits); a length past that is damage, and
 * nothing is allocated for it. */
int ztext_len_plausible(size_t zlen, size_t len);

#endif
