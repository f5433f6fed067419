/*
 * text: the safe rendering and measuring of terminal text described in
 * text.h. UTF-8 is decoded here by hand (strict: no overlong forms, no
 * surrogates, nothing past U+10FFFF) so that what counts as valid does not
 * depend on the C library's locale tables; printability and width do.
 */
#include "text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

/* Decodes one UTF-8 sequence at s (n bytes available). Returns its length
 * and the code point, or 0 when the bytes are not a valid sequence. */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) { *cp = c; return 1; }
    if (c >= 0xc2 && c <= 0xdf) { len = 2; min = 0x80; c &= 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; min = 0x800; c &= 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; min = 0x10000; c &= 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return len;
}

int text_safe(struct buf *out, const char *s, size_t len, int col, int flags)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned c = p[i];
        if (c == '\t') {
            int to = (col / TEXT_TABSTOP + 1) * TEXT_TABSTOP;
            while (col < to) { buf_addc(out, ' '); col++; }
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            buf_addc(out, '^');
            buf_addc(out, c == 0x7f ? '?' : (char)(c + 0x40));
            col += 2;
            i++;
            continue;
        }
        if (c < 0x80) {
            buf_addc(out, (char)c);
            col++;
            i++;
            continue;
        }
        unsigned cp;
        size_t n = utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            buf_printf(out, "\\x%02x", c);
            col += 4;
            i++;
            continue;
        }
        if (cp >= 0x80 && cp <= 0x9f) {
            buf_printf(out, "\\x%02x", cp);
            col += 4;
            i += n;
            continue;
        }
        int w = -1;   /* the same code points are escaped as in text_term_safe (util.h) */
        if (!(flags & TEXT_ASCII) && !text_cp_reorders(cp) && iswprint((wint_t)cp)) w = wcwidth((wchar_t)cp);
        if (w < 0) {
            int k = buf_printf(out, "<U+%04X>", cp);
            (void)k;
            col += cp > 0xffff ? 9 : 8;
        } else {
            buf_add(out, p + i, n);
            col += w;
        }
        i += n;
    }
    if (!out->data) buf_adds(out, "");
    return col;
}

char *text_safe_dup(const char *s, int flags)
{
    struct buf b = BUF_INIT;
    text_safe(&b, s ? s : "", s ? strlen(s) : 0, 0, flags);
    return buf_take(&b);
}

/* Width of the character at s (safe text), its length in *n. */
static int char_width(const char *s, size_t len, size_t *n)
{
    unsigned cp;
    size_t k = utf8_decode((const unsigned char *)s, len, &cp);
    if (k == 0) { *n = 1; return 1; }
    *n = k;
    if (cp < 0x80) return 1;
    int w = wcwidth((wchar_t)cp);
    return w < 0 ? 1 : w;
}

int text_width(const char *s, size_t len)
{
    int w = 0;
    size_t i = 0, n;
    while (i < len) {
        w += char_width(s + i, len - i, &n);
        i += n;
    }
    return w;
}

size_t text_fit(const char *s, size_t len, int cols, int *width)
{
    int w = 0;
    size_t i = 0, n;
    while (i < len) {
        int cw = char_width(s + i, len - i, &n);
        if (w + cw > cols) break;
        w += cw;
        i += n;
    }
    /* Combining marks (width 0) after the last character stay with it. */
    while (i < len && s[i] & 0x80) {
        int cw = char_width(s + i, len - i, &n);
        if (cw != 0) break;
        i += n;
    }
    if (width) *width = w;
    return i;
}

size_t text_wrap(const char *s, size_t len, int cols, size_t *next)
{
    if (cols < 1) cols = 1;
    int w;
    size_t fit = text_fit(s, len, cols, &w);
    if (fit >= len) {
        *next = len;
        return len;
    }
    if (fit == 0) {   /* a character wider than the row: take it anyway */
        size_t n;
        char_width(s, len, &n);
        *next = n;
        return n;
    }
    size_t brk = fit;
    if (s[fit] != ' ') {
        size_t k = fit;
        while (k > 0 && s[k - 1] != ' ') k--;
        if (k > 0) brk = k;
    }
    size_t row = brk;
    while (row > 0 && s[row - 1] == ' ') row--;
    if (row == 0) row = brk;
    size_t nx = brk;
    while (nx < len && s[nx] == ' ') nx++;
    *next = nx;
    return row;
}

size_t text_fit_tail(const char *s, size_t len, int cols)
{
    size_t off = 0, n;
    while (off < len && text_width(s + off, len - off) > cols) {
        char_width(s + off, len - off, &n);
        off += n;
    }
    /* combining marks belong to the character before them */
    while (off < len && (s[off] & 0x80) && char_width(s + off, len - off, &n) == 0) off += n;
    return off;
}

/* The [*a, *b) bytes of the longest word of s holding a '/' after its first
 * component (a lead mark already in place counts as one); 0 when none. */
static int longest_path(const char *s, const char *mark, size_t *a, size_t *b)
{
    size_t best = 0, ml = strlen(mark);
    for (size_t i = 0; s[i];) {
        while (s[i] == ' ') i++;
        size_t j = i;
        while (s[j] && s[j] != ' ') j++;
        size_t from = i + (strncmp(s + i, mark, ml) == 0 ? ml : 0) + 1;
        const char *sl = from < j ? memchr(s + from, '/', j - from) : NULL;
        if (sl && j - i > best) {
            best = j - i;
            *a = i;
            *b = j;
        }
        i = j;
    }
    return best > 0;
}

char *text_shorten_paths(const char *s, int cols, const char *mark)
{
    char *cur = xstrdup(s);
    size_t a, b, ml = strlen(mark);
    while (text_width(cur, strlen(cur)) > cols && longest_path(cur, mark, &a, &b)) {
        /* drop the word's first component (or the one after its mark) */
        size_t from = a + (strncmp(cur + a, mark, ml) == 0 ? ml : 0) + 1;
        const char *sl = memchr(cur + from, '/', b - from);
        char *next = xasprintf("%.*s%s%s", (int)a, cur, mark, sl);
        free(cur);
        cur = next;
    }
    return cur;
}

int text_contains(const char *hay, const char *needle)
{
    if (!hay || !needle) return 0;
    size_t n = strlen(needle);
    if (n == 0) return 1;
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}
