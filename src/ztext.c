/*
 * ztext: file texts as gzip streams (see ztext.h).
 *
 * The level, measured on the sources the index holds (each file a stream
 * of its own, one thread): django's 5.7 MB come to 1.84 MB at level 1 and
 * 1.59 MB at level 6, sympy's 29.7 MB to 7.3 MB and 6.0 MB; level 6
 * deflates at about half level 1's speed (django 47 against 83 MB/s, sympy
 * 54 against 106 MB/s), and inflating is about as fast at either level
 * (300-400 MB/s). Level 1 keeps most of the saving for the least time in
 * the indexer's parser threads.
 */
#include "ztext.h"
#include "util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

/* gzip (RFC 1952) rather than zlib's own wrapper: see ztext.h */
#define ZTEXT_WBITS (15 + 16)

static void zfail(int rc, const char *msg)
{
    fprintf(stderr, "drqa-tui: zlib cannot compress (%s)\n", msg ? msg : zError(rc));
    abort();
}

struct ztext_packer {
    z_stream s;
};

struct ztext_packer *ztext_packer_new(void)
{
    struct ztext_packer *p = xcalloc(1, sizeof *p);
    int rc = deflateInit2(&p->s, ZTEXT_LEVEL, Z_DEFLATED, ZTEXT_WBITS, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) zfail(rc, p->s.msg);   /* only out of memory */
    return p;
}

void ztext_packer_free(struct ztext_packer *p)
{
    if (!p) return;
    deflateEnd(&p->s);
    free(p);
}

unsigned char *ztext_pack_with(struct ztext_packer *p, const char *text, size_t len, size_t *zlen)
{
    if (len > ZTEXT_MAX) {
        fprintf(stderr, "drqa-tui: a text of %zu bytes is too large to store\n", len);
        abort();
    }
    z_stream *s = &p->s;
    int rc = deflateReset(s);
    if (rc != Z_OK) zfail(rc, s->msg);
    size_t cap = deflateBound(s, (uLong)len);
    unsigned char *z = xmalloc(cap);
    s->next_in = (Bytef *)(len ? text : "");
    s->avail_in = (uInt)len;
    s->next_out = z;
    s->avail_out = (uInt)cap;
    rc = deflate(s, Z_FINISH);   /* the bound is room for the whole stream */
    if (rc != Z_STREAM_END) zfail(rc, s->msg);
    *zlen = cap - s->avail_out;
    return xrealloc(z, *zlen);
}

unsigned char *ztext_pack(const char *text, size_t len, size_t *zlen)
{
    struct ztext_packer *p = ztext_packer_new();
    unsigned char *z = ztext_pack_with(p, text, len, zlen);
    ztext_packer_free(p);
    return z;
}

int ztext_len_plausible(size_t zlen, size_t len)
{
    return len / 1032 <= zlen;
}

int ztext_unpack(const void *z, size_t zlen, char *out, size_t len, char *err, size_t errlen)
{
    out[0] = 0;
    if (zlen > UINT_MAX || len > UINT_MAX || !ztext_len_plausible(zlen, len)) {
        snprintf(err, errlen, "a stream of %zu bytes cannot hold %zu bytes of text", zlen, len);
        return -1;
    }
    z_stream s = {0};
    s.next_in = (Bytef *)z;
    s.avail_in = (uInt)zlen;
    s.next_out = (Bytef *)out;
    s.avail_out = (uInt)len;
    if (inflateInit2(&s, ZTEXT_WBITS) != Z_OK) {
        snprintf(err, errlen, "zlib cannot start: %s", s.msg ? s.msg : "out of memory");
        return -1;
    }
    /* one call: out has room for the whole text, so no window is kept */
    int rc = inflate(&s, Z_FINISH);
    size_t got = len - s.avail_out, left = s.avail_in;
    const char *msg = s.msg;
    if (rc == Z_STREAM_END && !left && got == len) {
        inflateEnd(&s);
        out[len] = 0;
        return 0;
    }
    if (rc == Z_STREAM_END && left)
        snprintf(err, errlen, "%zu bytes follow the end of the stream", left);
    else if (rc == Z_STREAM_END)
        snprintf(err, errlen, "the stream holds %zu bytes of text, not %zu", got, len);
    else if (rc == Z_BUF_ERROR && !left)
        snprintf(err, errlen, "the stream is cut short after %zu bytes of text", got);
    else if (rc == Z_BUF_ERROR)
        snprintf(err, errlen, "the stream holds more than %zu bytes of text", len);
    else if (rc == Z_NEED_DICT)
        snprintf(err, errlen, "the stream asks for a preset dictionary");
    else
        snprintf(err, errlen, "%s", msg ? msg : zError(rc));
    inflateEnd(&s);
    out[0] = 0;
    return -1;
}
