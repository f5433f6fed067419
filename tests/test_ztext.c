/* Unit tests for ztext: texts come back byte for byte, and a damaged stream
 * (bits flipped, bytes cut, added or replaced, the length beside it wrong)
 * is an error with a message, never another text. */
#include "tap.h"
#include "util.h"
#include "ztext.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* packs and unpacks text[0..len); 1 when it comes back whole */
static int round_trip(const char *text, size_t len)
{
    size_t zl;
    unsigned char *z = ztext_pack(text, len, &zl);
    char *out = xmalloc(len + 1);
    char err[256] = "";
    int r = ztext_unpack(z, zl, out, len, err, sizeof err) == 0 && memcmp(out, text, len) == 0 && out[len] == 0;
    if (!r) printf("#   %s\n", err);
    free(out);
    free(z);
    return r;
}

/* 1 when unpacking z[0..zl) as len bytes fails with a message and leaves out empty */
static int refused(const unsigned char *z, size_t zl, size_t len, char *err, size_t errlen)
{
    char *out = xmalloc(len + 1);
    memset(out, 'x', len + 1);
    *err = 0;
    int r = ztext_unpack(z, zl, out, len, err, errlen) == -1 && *err && out[0] == 0;
    free(out);
    return r;
}

static unsigned long long rnd_state = 88172645463325252ULL;
static unsigned long long rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

int main(void)
{
    /* a source text: the shape of what is stored (lines, indentation, repeats) */
    struct buf src = BUF_INIT;
    for (int i = 0; i < 400; i++)
        buf_printf(&src, "    def method_%d(self, value=%d):\n        return self.items[%d] + value  # \xc3\xa9\n", i,
                   i * 7, i % 13);
    const char *text = buf_str(&src);
    size_t len = src.len;

    ok(round_trip(text, len), "a source text comes back byte for byte");
    ok(round_trip("", 0), "an empty text");
    ok(round_trip("x", 1), "one byte");
    ok(round_trip("a\0b\0\n", 5), "a text holding NUL bytes keeps them");
    char *noise = xmalloc(70000);
    for (size_t i = 0; i < 70000; i++) noise[i] = (char)(rnd() & 0xff);
    ok(round_trip(noise, 70000), "bytes that do not compress");
    free(noise);

    /* a kept stream packs text after text as a stream of its own would */
    struct ztext_packer *zp = ztext_packer_new();
    int alike = 0;
    for (int i = 0; i < 30; i++) {
        size_t n = i % 3 == 0 ? len : (size_t)(i * 977) % len, za, zb;
        unsigned char *a = ztext_pack_with(zp, text + (len - n), n, &za), *b = ztext_pack(text + (len - n), n, &zb);
        char *out = xmalloc(n + 1);
        char e[256];
        alike += za == zb && memcmp(a, b, za) == 0 && ztext_unpack(a, za, out, n, e, sizeof e) == 0 &&
                memcmp(out, text + (len - n), n) == 0;
        free(out);
        free(a);
        free(b);
    }
    ztext_packer_free(zp);
    is_int(alike, 30, "a kept stream gives the same bytes as a stream of its own, text after text");

    size_t zl;
    unsigned char *z = ztext_pack(text, len, &zl);
    ok(zl < len / 3, "a source text is stored in less than a third of its bytes (%zu of %zu)", zl, len);
    /* any gzip reader reads the stream: nothing is added to it */
    unsigned char *plain = xmalloc(len + 16);
    z_stream zs = {0};
    int zr = inflateInit2(&zs, 15 + 16);
    zs.next_in = z;
    zs.avail_in = (uInt)zl;
    zs.next_out = plain;
    zs.avail_out = (uInt)len + 16;
    if (zr == Z_OK) zr = inflate(&zs, Z_FINISH);
    ok(zr == Z_STREAM_END && zs.total_out == len && zs.avail_in == 0 && memcmp(plain, text, len) == 0,
       "the stream is plain gzip");
    ok(z[0] == 0x1f && z[1] == 0x8b, "with gzip's magic bytes");
    inflateEnd(&zs);
    free(plain);

    char err[256];
    ok(refused(z, zl, len - 1, err, sizeof err) && strstr(err, "more than"), "a length one short: %s", err);
    ok(refused(z, zl, len + 1, err, sizeof err), "a length one long: %s", err);
    ok(refused(z, zl - 1, len, err, sizeof err) && strstr(err, "cut short"), "the last byte cut: %s", err);
    ok(refused(z, zl / 2, len, err, sizeof err), "half the stream: %s", err);
    ok(refused(z, 0, 0, err, sizeof err), "no stream at all: %s", err);
    ok(refused(z, 0, len, err, sizeof err), "no stream for a text: %s", err);
    unsigned char *longer = xmalloc(zl + 3);
    memcpy(longer, z, zl);
    memcpy(longer + zl, "abc", 3);
    ok(refused(longer, zl + 3, len, err, sizeof err) && strstr(err, "follow"), "bytes after the stream: %s", err);
    free(longer);
    ok(refused((const unsigned char *)text, len < 200 ? len : 200, 100, err, sizeof err), "text that is no stream: %s",
       err);
    char small[8];
    ok(ztext_unpack(z, zl, small, (size_t)1 << 40, err, sizeof err) == -1 && strstr(err, "cannot hold") && !small[0],
       "a length no stream of its size can hold is refused before the text is written: %s", err);
    ok(ztext_len_plausible(10, 10320) && !ztext_len_plausible(10, 11352), "deflate's densest ratio bounds the length");

    /* the checksum: a flipped bit of the stream is refused, unless it is
     * one that no gzip reader looks at (the header's flags, time and
     * system bytes, the bits that pad the last byte of the deflate data) or
     * one that leaves the text as it was (a copy from an equal place) */
    unsigned char *d = xmalloc(zl);
    int flips = 0, caught = 0, same = 0;
    for (size_t i = 0; i < zl; i++)
        for (int b = 0; b < 8; b++) {
            memcpy(d, z, zl);
            d[i] ^= (unsigned char)(1u << b);
            flips++;
            char *out = xmalloc(len + 1);
            char e2[256] = "";
            if (ztext_unpack(d, zl, out, len, e2, sizeof e2) == 0) same += memcmp(out, text, len) == 0;
            else caught += *e2 && out[0] == 0;
            free(out);
        }
    is_int(caught + same, flips, "a flipped bit of the stream is refused, or the text comes back as it was");
    ok(same <= 8 * 7 + 8, "%d flipped bits of %d leave the text as it was", same, flips);
    /* random damage: bytes overwritten, runs zeroed, cut anywhere */
    int tries = 0, bad = 0;
    for (int t = 0; t < 3000; t++) {
        memcpy(d, z, zl);
        size_t n = zl;
        switch (t % 3) {
        case 0: {
            int k = 1 + (int)(rnd() % 4);
            for (int j = 0; j < k; j++) d[rnd() % zl] = (unsigned char)rnd();
            break;
        }
        case 1: {
            size_t a = rnd() % zl, m = 1 + rnd() % 16;
            for (size_t j = a; j < a + m && j < zl; j++) d[j] = 0;
            break;
        }
        default:
            n = rnd() % zl;
        }
        if (n == zl && memcmp(d, z, zl) == 0) continue;   /* the damage left it as it was */
        tries++;
        char *out = xmalloc(len + 1);
        char e2[256] = "";
        int r = ztext_unpack(d, n, out, len, e2, sizeof e2);
        /* a damaged stream that still inflates would have to give the same text */
        if (r == 0 ? memcmp(out, text, len) != 0 : (!*e2 || out[0] != 0)) bad++;
        free(out);
    }
    is_int(bad, 0, "random damage never gives another text or an error without a message");
    ok(tries > 2900, "random damage tried %d times", tries);
    free(d);
    free(z);

    /* a text packed against the lines it is made of: an outline of the
     * source above, its 'def' lines with '...' for each body */
    struct buf ol = BUF_INIT;
    for (const char *p = text; (p = strstr(p, "    def ")); p++) {
        const char *e = strchr(p, '\n');
        buf_add(&ol, p, (size_t)(e - p));
        buf_adds(&ol, " ...\n");
    }
    size_t rl, plain_len;
    unsigned char *rz = ztext_ref_pack(NULL, text, len, ol.data, ol.len, &rl);
    unsigned char *pz = ztext_pack(ol.data, ol.len, &plain_len);
    ok(rl * 3 < plain_len * 2, "an outline packed against its source takes less than 2/3 of its own packing "
       "(%zu of %zu bytes)", rl, plain_len);
    char *back;
    size_t bl;
    ok(ztext_ref_unpack(rz, rl, text, len, &back, &bl, err, sizeof err) == 0 && bl == ol.len &&
           memcmp(back, ol.data, bl) == 0 && back[bl] == 0,
       "and comes back byte for byte against the same source");
    free(back);
    struct ztext_packer *pk = ztext_packer_new();
    int ref_alike = 1;
    for (int i = 0; i < 3; i++) {   /* the packer's stream, set up once, gives the same bytes each time */
        size_t kl;
        unsigned char *kz = ztext_ref_pack(pk, text, len, ol.data, ol.len, &kl);
        ref_alike &= kl == rl && memcmp(kz, rz, rl) == 0;
        free(kz);
        kz = ztext_pack_with(pk, text, len, &kl);   /* its gzip stream between */
        free(kz);
    }
    ok(ref_alike, "a packer packs against a source as a fresh stream does, between its file texts");
    ztext_packer_free(pk);
    /* a source longer than the window: its last ZTEXT_REF_WINDOW bytes are the dictionary */
    struct buf big = BUF_INIT;
    for (int i = 0; i < 3000; i++) buf_printf(&big, "line %d of a long class\n", i);
    const char *tail = big.data + big.len - 40;
    unsigned char *tz = ztext_ref_pack(NULL, big.data, big.len, tail, 40, &rl);
    ok(ztext_ref_unpack(tz, rl, big.data, big.len, &back, &bl, err, sizeof err) == 0 && bl == 40 &&
           memcmp(back, tail, 40) == 0,
       "a source past the window: the text comes back");
    free(back);
    ok(ztext_ref_unpack(tz, rl, big.data + 1000, big.len - 1000, &back, &bl, err, sizeof err) == 0 && bl == 40,
       "only the source's last %d bytes are read", ZTEXT_REF_WINDOW);
    free(back);
    free(tz);
    unsigned char *ez = ztext_ref_pack(NULL, "", 0, "", 0, &rl);
    ok(ztext_ref_unpack(ez, rl, "", 0, &back, &bl, err, sizeof err) == 0 && bl == 0 && back[0] == 0,
       "an empty text against an empty source");
    free(back);
    free(ez);
    /* damage: refused with a message, nothing given */
    size_t rzl;
    free(rz);
    rz = ztext_ref_pack(NULL, text, len, ol.data, ol.len, &rzl);
    back = (char *)1;
    ok(ztext_ref_unpack(rz, rzl - 1, text, len, &back, &bl, err, sizeof err) == -1 && *err && !back,
       "a packed text cut short: %s", err);
    ok(ztext_ref_unpack(rz, 3, text, len, &back, &bl, err, sizeof err) == -1 && *err && !back,
       "no length: %s", err);
    rz[0] ^= 1;
    ok(ztext_ref_unpack(rz, rzl, text, len, &back, &bl, err, sizeof err) == -1 && *err && !back,
       "its length wrong: %s", err);
    rz[0] ^= 1;
    rz[3] = 0x7f;
    ok(ztext_ref_unpack(rz, rzl, text, len, &back, &bl, err, sizeof err) == -1 && strstr(err, "cannot hold") && !back,
       "a length no stream of its size can hold: %s", err);
    free(rz);
    /* many short texts against one dictionary: a primed stream, copied */
    static const char dict_a[] = "Return the value of the attribute. Parameters ---------- name : str";
    static const char dict_b[] = "completely different words: zebra quartz xylophone";
    const char *docs[] = {"Return the value of the attribute named name.", "", "Parameters ---------- name : str\n",
                          "zebra quartz xylophone zebra quartz"};
    struct ztext_packer *dp = ztext_packer_new();
    int dict_right = 0, shorter = 0;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
            const char *dict = i == 3 ? dict_b : dict_a;   /* the last one changes the dictionary */
            size_t dl = i == 3 ? sizeof dict_b - 1 : sizeof dict_a - 1, zl2, nl = strlen(docs[i]);
            unsigned char *dz = ztext_dict_pack(dp, dict, dl, docs[i], nl, &zl2);
            unsigned char *nz = ztext_dict_pack(NULL, dict, dl, docs[i], nl, &rl);
            dict_right += zl2 == rl && memcmp(dz, nz, rl) == 0 &&
                          ztext_ref_unpack(dz, zl2, dict, dl, &back, &bl, err, sizeof err) == 0 && bl == nl &&
                          memcmp(back, docs[i], nl) == 0;
            free(back);
            if (i == 0 && round == 0) shorter = zl2 < nl;
            free(dz);
            free(nz);
        }
    }
    is_int(dict_right, 8, "texts packed against a dictionary read back with it, the same with a kept stream or not, "
                          "when the dictionary changes and back");
    ok(shorter, "a short text that repeats its dictionary packs shorter than it is");
    ztext_packer_free(dp);
    free(pz);
    buf_free(&big);
    buf_free(&ol);
    buf_free(&src);
    return done_testing();
}
