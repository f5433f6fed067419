/*
 * ztext: file texts as gzip streams (see ztext.h).
 *
 * The level, measured on django's 5.75 MB of indexed text (each file a
 * stream of its own, one thread, zlib 1.2.13): level 1 packs it into
 * 1.84 MB in 55 ms, level 4 1.65 MB in 70 ms, level 5 1.61 MB in 87 ms,
 * level 6 1.59 MB in 112 ms and level 9 1.58 MB in 277 ms. Inflating is
 * about as fast at any level (300-400 MB/s). The indexer's parser threads
 * pay for it, and they are what a first answer waits for: at level 1 the
 * index holds 14-20% more text bytes (django 1.84 MB against 1.61 at level
 * 5, sympy 7.3 against 6.1 MB: its index 103 against 102 MB) and the
 * threads spend 0.07 s less CPU on django (six alternating first answers:
 * 1.185 s against 1.23 s), 0.35 s less on sympy.
 */
#include "ztext.h"
#include "util.h"

#include <limits.h>
#include <stdint.h>
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
    z_stream r;          /* raw deflate, for ztext_ref_pack */
    int r_ready;
    z_stream d;          /* raw deflate primed with d_dict, for ztext_dict_pack */
    const char *d_dict;  /* NULL: d not set up */
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
    if (p->r_ready) deflateEnd(&p->r);
    if (p->d_dict) deflateEnd(&p->d);
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

/* What is wrong with a stream that inflate left with rc, left bytes of it
 * unread and got bytes of the want it should hold. */
static void stream_error(int rc, size_t left, size_t got, size_t want, const char *msg, char *err, size_t errlen)
{
    if (rc == Z_STREAM_END && left)
        snprintf(err, errlen, "%zu bytes follow the end of the stream", left);
    else if (rc == Z_STREAM_END)
        snprintf(err, errlen, "the stream holds %zu bytes of text, not %zu", got, want);
    else if (rc == Z_BUF_ERROR && !left)
        snprintf(err, errlen, "the stream is cut short after %zu bytes of text", got);
    else if (rc == Z_BUF_ERROR)
        snprintf(err, errlen, "the stream holds more than %zu bytes of text", want);
    else if (rc == Z_NEED_DICT)
        snprintf(err, errlen, "the stream asks for a preset dictionary");
    else
        snprintf(err, errlen, "%s", msg ? msg : zError(rc));
}

/* Ends the inflate stream s, left with rc by an inflate that had room for
 * want bytes: 0 when it gave exactly those and the stream ended where its
 * input did, else -1 with err saying what is wrong. */
static int inflate_end(z_stream *s, int rc, size_t want, char *err, size_t errlen)
{
    size_t got = want - s->avail_out, left = s->avail_in;
    int whole = rc == Z_STREAM_END && !left && got == want;
    if (!whole) stream_error(rc, left, got, want, s->msg, err, errlen);
    inflateEnd(s);
    return whole ? 0 : -1;
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
    if (inflate_end(&s, inflate(&s, Z_FINISH), len, err, errlen)) {
        out[0] = 0;
        return -1;
    }
    out[len] = 0;
    return 0;
}

/* ---- texts packed against a reference ---- */

/* The reference's part that is the dictionary: its last ZTEXT_REF_WINDOW bytes. */
static void ref_window(const char **ref, size_t *reflen)
{
    if (*reflen > ZTEXT_REF_WINDOW) {
        *ref += *reflen - ZTEXT_REF_WINDOW;
        *reflen = ZTEXT_REF_WINDOW;
    }
}

/* The packed form of text[0..len) on s (set up, its dictionary set): its
 * length in 4 bytes, little-endian, then the raw deflate stream. */
static unsigned char *deflate_with_len(z_stream *s, const char *text, size_t len, size_t *zlen)
{
    if (len > UINT32_MAX) {
        fprintf(stderr, "drqa-tui: a text of %zu bytes is too large to store\n", len);
        abort();
    }
    size_t cap = 4 + deflateBound(s, (uLong)len);
    unsigned char *z = xmalloc(cap);
    for (int i = 0; i < 4; i++) z[i] = (unsigned char)(len >> (8 * i));
    s->next_in = (Bytef *)(len ? text : "");
    s->avail_in = (uInt)len;
    s->next_out = z + 4;
    s->avail_out = (uInt)(cap - 4);
    int rc = deflate(s, Z_FINISH);
    if (rc != Z_STREAM_END) zfail(rc, s->msg);
    *zlen = cap - s->avail_out;
    return xrealloc(z, *zlen);
}

unsigned char *ztext_ref_pack(struct ztext_packer *p, const char *ref, size_t reflen, const char *text, size_t len,
                              size_t *zlen)
{
    z_stream own = {0}, *s = p ? &p->r : &own;
    int rc;
    if (!p || !p->r_ready) {
        /* zlib's default level: these texts are small, and level 6 packs them
         * a quarter smaller than level 1 (django's class outlines: 58 against 81 KB) */
        rc = deflateInit2(s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
        if (rc != Z_OK) zfail(rc, s->msg);
        if (p) p->r_ready = 1;
    } else if ((rc = deflateReset(s)) != Z_OK) {
        zfail(rc, s->msg);
    }
    ref_window(&ref, &reflen);
    if (reflen && (rc = deflateSetDictionary(s, (const Bytef *)ref, (uInt)reflen)) != Z_OK) zfail(rc, s->msg);
    unsigned char *z = deflate_with_len(s, text, len, zlen);
    if (!p) deflateEnd(s);
    return z;
}

int ztext_ref_unpack(const void *z, size_t zlen, const char *ref, size_t reflen, char **out, size_t *len, char *err,
                     size_t errlen)
{
    *out = NULL;
    *len = 0;
    const unsigned char *b = z;
    if (zlen < 4 || zlen - 4 > UINT_MAX) {
        snprintf(err, errlen, "a packed text of %zu bytes", zlen);
        return -1;
    }
    size_t n = (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24;
    if (n > UINT_MAX - 1 || !ztext_len_plausible(zlen - 4, n)) {
        snprintf(err, errlen, "a stream of %zu bytes cannot hold %zu bytes of text", zlen - 4, n);
        return -1;
    }
    char *t = malloc(n + 1);   /* not xmalloc: the length is the blob's word until the text is read */
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    z_stream s = {0};
    if (inflateInit2(&s, -15) != Z_OK) {
        snprintf(err, errlen, "zlib cannot start: %s", s.msg ? s.msg : "out of memory");
        free(t);
        return -1;
    }
    ref_window(&ref, &reflen);
    int rc = reflen ? inflateSetDictionary(&s, (const Bytef *)ref, (uInt)reflen) : Z_OK;
    if (rc == Z_OK) {
        s.next_in = (Bytef *)(b + 4);
        s.avail_in = (uInt)(zlen - 4);
        s.next_out = (Bytef *)t;
        s.avail_out = (uInt)n;
        rc = inflate(&s, Z_FINISH);
    }
    if (inflate_end(&s, rc, n, err, errlen)) {
        free(t);
        return -1;
    }
    t[n] = 0;
    *out = t;
    *len = n;
    return 0;
}

/* A small stream for short texts: its window holds the dictionary and the
 * text's own earlier bytes (a docstring rarely repeats itself further back),
 * and its tables are a few KB, so that priming a copy of it is cheap. */
#define ZTEXT_DICT_WBITS 12
#define ZTEXT_DICT_MEMLEVEL 4

unsigned char *ztext_dict_pack(struct ztext_packer *p, const char *dict, size_t dictlen, const char *text, size_t len,
                               size_t *zlen)
{
    z_stream primed = {0}, *pr = p ? &p->d : &primed;
    const char *key = dict;
    int rc;
    if (!p || p->d_dict != dict) {
        if (p && p->d_dict) deflateEnd(&p->d);
        *pr = (z_stream){0};
        rc = deflateInit2(pr, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -ZTEXT_DICT_WBITS, ZTEXT_DICT_MEMLEVEL,
                          Z_DEFAULT_STRATEGY);
        if (rc != Z_OK) zfail(rc, pr->msg);
        size_t win = (size_t)1 << ZTEXT_DICT_WBITS;
        if (dictlen > win) {   /* only its last window's bytes can be referred to */
            dict += dictlen - win;
            dictlen = win;
        }
        if (dictlen && (rc = deflateSetDictionary(pr, (const Bytef *)dict, (uInt)dictlen)) != Z_OK) zfail(rc, pr->msg);
        if (p) p->d_dict = key;
    }
    /* a copy of the primed stream: the dictionary is hashed once, not once a text */
    z_stream s;
    if ((rc = deflateCopy(&s, pr)) != Z_OK) zfail(rc, pr->msg);
    unsigned char *z = deflate_with_len(&s, text, len, zlen);
    deflateEnd(&s);
    if (!p) deflateEnd(pr);
    return z;
}
