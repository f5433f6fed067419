/* Tests of the front end's safe text rendering (ui/text.c): control
 * characters, escape sequences, C1 controls, invalid UTF-8 and reordering
 * code points come out visible and inert; printable UTF-8 (wide too) passes
 * unchanged; tabs expand to stops; widths, fitting and wrapping never split
 * a character. */
#include "tap.h"
#include "text.h"
#include "util.h"

#include <locale.h>
#include <stdlib.h>

static void safe_is(const char *in, size_t len, int flags, const char *want, const char *what)
{
    struct buf b = BUF_INIT;
    text_safe(&b, in, len, 0, flags);
    is_str(buf_str(&b), want, "%s", what);
    buf_free(&b);
}

/* No byte below 0x20 (but space), no DEL, no C1 in UTF-8 form, valid UTF-8. */
static int inert(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) return 0;
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) return 0;
    }
    return 1;
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        printf("1..0 # SKIP no C.UTF-8 locale\n");
        return 0;
    }
    safe_is("plain text", 10, 0, "plain text", "printable ASCII is unchanged");
    safe_is("\x1b[2J\x1b]0;pwned\x07", 14, 0, "^[[2J^[]0;pwned^G", "ESC and BEL are shown as ^[ and ^G");
    safe_is("a\rb\0c", 5, 0, "a^Mb^@c", "CR and NUL are visible");
    safe_is("x\x7fy", 3, 0, "x^?y", "DEL is ^?");
    safe_is("\xc2\x9b" "31m", 5, 0, "\\x9b31m", "a C1 CSI in UTF-8 form is \\x9b");
    safe_is("\x9b" "31m", 4, 0, "\\x9b31m", "a raw 8-bit CSI byte is \\x9b");
    safe_is("\xff\xfe", 2, 0, "\\xff\\xfe", "invalid bytes are \\xNN");
    safe_is("\xc0\xaf", 2, 0, "\\xc0\\xaf", "an overlong '/' is invalid");
    safe_is("\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80", "a UTF-16 surrogate is invalid");
    safe_is("\xe2\x82", 2, 0, "\\xe2\\x82", "a truncated sequence is invalid");
    safe_is("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", 12, 0, "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
            "printable UTF-8 (accents, CJK) passes");
    safe_is("caf\xc3\xa9", 5, TEXT_ASCII, "caf<U+00E9>", "TEXT_ASCII escapes non-ASCII");
    safe_is("a\xe2\x80\xae" "b", 5, 0, "a<U+202E>b", "a bidi override is escaped");
    safe_is("\xe2\x81\xa6x", 4, 0, "<U+2066>x", "a bidi isolate is escaped");
    safe_is("p\xe2\x80\xa8q", 5, 0, "p<U+2028>q", "the line separator is escaped");
    safe_is("\tx", 2, 0, "        x", "a tab goes to column 8");
    safe_is("ab\tx", 4, 0, "ab      x", "a tab after text goes to the next stop");
    safe_is("a\nb", 3, 0, "a^Jb", "a stray newline is ^J");
    struct buf b = BUF_INIT;
    int col = text_safe(&b, "\t", 1, 3, 0);
    is_int(col, 8, "a tab starting at column 3 ends at 8");
    is_int((int)b.len, 5, "with 5 spaces");
    buf_free(&b);

    /* Every byte value alone, and all pairs of a control-ish lead: output inert. */
    int all_inert = 1;
    for (int c = 0; c < 256; c++) {
        char in[2] = {(char)c, 0};
        struct buf o = BUF_INIT;
        text_safe(&o, in, 1, 0, 0);
        if (!inert(buf_str(&o))) all_inert = 0;
        buf_free(&o);
    }
    ok(all_inert, "no single byte comes out as a raw control");
    char *d = text_safe_dup("\x1b" "c\x1bP\x9c\xc2\x85", 0);
    ok(inert(d), "a terminal reset, DCS and NEL come out inert: %s", d);
    free(d);

    const char *wide = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e";   /* 3 CJK, 6 columns */
    is_int(text_width(wide, 9), 6, "CJK characters are two columns wide");
    int w;
    size_t n = text_fit(wide, 9, 5, &w);
    is_int((int)n, 6, "fitting 5 columns takes two characters (6 bytes)");
    is_int(w, 4, "which use 4 columns");
    n = text_fit("e\xcc\x81x", 4, 1, &w);
    is_int((int)n, 3, "a combining accent stays with its letter");
    size_t next;
    const char *s = "the quick brown fox";
    n = text_wrap(s, 19, 10, &next);
    is_int((int)n, 9, "wrapping breaks after a word ('the quick')");
    is_int((int)next, 10, "the next row starts at 'brown'");
    n = text_wrap("abcdefghijkl", 12, 5, &next);
    is_int((int)n, 5, "a long word breaks hard at the width");
    is_int((int)next, 5, "and continues right after");
    n = text_wrap(wide, 9, 1, &next);
    is_int((int)n, 3, "a character wider than the row is still taken");
    ok(text_contains("FindClass Flask", "flask"), "contains ignores ASCII case");
    ok(!text_contains("FindClass", "flask"), "contains misses what is not there");

    const char *span = "django/db/models/base.py:743-790";
    is_str(span + text_fit_tail(span, strlen(span), 15), "base.py:743-790", "the tail of a span that fits in 15 columns");
    is_int((int)text_fit_tail(span, strlen(span), 99), 0, "a span that fits whole is not cut");
    char *m = text_shorten_paths("exported /home/u/share/tr/drqa-1.json and .md", 35, "~");
    is_str(m, "exported ~/tr/drqa-1.json and .md", "a message's path loses leading directories until it fits");
    free(m);
    m = text_shorten_paths("exported /a/b/drqa-1.json and .md", 10, "~");
    is_str(m, "exported ~/drqa-1.json and .md", "but never its file name");
    free(m);
    m = text_shorten_paths("no path here at all", 5, "~");
    is_str(m, "no path here at all", "text without a path is left as it is");
    free(m);
    return done_testing();
}
