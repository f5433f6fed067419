/*
 * test_index_unit: the pieces of the index family that need no repository:
 * lenient UTF-8 decoding, binary detection, and how chunk_file cuts a file
 * (method chunks with their class header, class outlines without bodies,
 * module code in windows, one chunk for definitions sharing their lines),
 * and the order the parser threads take the files in (pool_order). The
 * whole indexer is tested on fixture copies by test_index.sh.
 */
#include "tap.h"
#include "index_chunk.h"
#include "index_int.h"
#include "index_scan.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void decode(const char *in, size_t n, const char *want, int want_bad, const char *what)
{
    int bad = -1;
    size_t len = 0;
    char *d = scan_decode_utf8(in, n, &len, &bad);
    is_str(d, want, "%s: text", what);
    is_int(bad, want_bad, "%s: replacements", what);
    is_int(len, strlen(want), "%s: length", what);
    free(d);
}

static struct parse_symbol sym(enum parse_kind k, const char *name, const char *qual, int parent, int a, int b,
                               int body, const char *sig)
{
    struct parse_symbol s;
    memset(&s, 0, sizeof s);
    s.kind = k;
    s.name = (char *)name;
    s.qualname = (char *)qual;
    s.parent = parent;
    s.start_line = a;
    s.end_line = b;
    s.body_line = body;
    s.signature = (char *)sig;
    return s;
}

/* pool_order over files of these sizes (KiB), in path order: the places in
 * the order it gives, as "2 0 1 ...". */
static char *order_of(const int *kib, size_t n, int threads, size_t ahead_kib)
{
    struct scan_file *f = calloc(n, sizeof *f);
    struct job *j = calloc(n, sizeof *j);
    for (size_t i = 0; i < n; i++) {
        f[i].size = (long long)kib[i] * 1024;
        j[i].sf = &f[i];
    }
    pool_order(j, n, threads, ahead_kib * 1024);
    struct buf b = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (j[i].sf != &f[j[i].place]) buf_printf(&b, "[place %zu is not its file's] ", j[i].place);
        buf_printf(&b, "%s%zu", i ? " " : "", j[i].place);
    }
    free(f);
    free(j);
    char *s = xstrdup(buf_str(&b));
    buf_free(&b);
    return s;
}

static void order(const int *kib, size_t n, int threads, size_t ahead_kib, const char *want, const char *what)
{
    char *got = order_of(kib, n, threads, ahead_kib);
    is_str(got, want, "%s", what);
    free(got);
}

int main(void)
{
    /* a big file (128 KiB or more) goes ahead of the small files parsed
     * beside it: the next one once those add up to (threads - 1) times its
     * size; small files keep their order */
    static const int spaced[] = {10, 10, 200, 50, 50, 50, 50, 10, 10, 150, 10};
    order(spaced, 11, 2, 8192, "2 0 1 3 4 5 6 9 7 8 10", "2 threads: each big file ahead of as many bytes of small ones");
    order(spaced, 11, 3, 8192, "2 0 1 3 4 5 6 7 8 9 10", "3 threads: twice its size (the second waits for its own place)");
    order(spaced, 11, 1, 8192, "0 1 2 3 4 5 6 7 8 9 10", "one thread: path order");
    /* never after its own place: the small files behind it would wait for it */
    static const int late[] = {1024, 1, 200, 1, 130, 140};
    order(late, 6, 2, 8192, "0 1 2 3 4 5", "a big file is not put after its place in path order");
    static const int bigs[] = {300, 200, 129};
    order(bigs, 3, 2, 8192, "0 1 2", "only big files: path order");
    static const int smalls[] = {5, 127, 1};
    order(smalls, 3, 2, 8192, "0 1 2", "only small files: path order");
    /* the big files ahead of their place hold at most the budget: the
     * second waits until the first has reached its place */
    static const int tail[] = {100, 100, 100, 100, 100, 100, 200, 300};
    order(tail, 8, 2, 8192, "6 0 1 7 2 3 4 5", "big files late in path order go ahead, spaced");
    order(tail, 8, 2, 400, "6 0 1 2 3 4 5 7", "beyond the budget a big file keeps its place");

    decode("ab\xff" "c\xc3\xa9", 6, "ab\xef\xbf\xbd" "c\xc3\xa9", 1, "a stray byte");
    decode("plain", 5, "plain", 0, "valid ASCII");
    decode("x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd", 2, "a truncated sequence: each byte");
    decode("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3, "an encoded surrogate");
    decode("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 2, "an overlong encoding");
    decode("a\0b", 3, "a\xef\xbf\xbd" "b", 1, "a NUL byte");

    char big[9000];
    memset(big, 'a', sizeof big);
    ok(!scan_is_binary(big, sizeof big), "text without NUL is not binary");
    big[8191] = 0;
    ok(scan_is_binary(big, sizeof big), "a NUL in the first 8 KiB is binary");
    big[8191] = 'a';
    big[8192] = 0;
    ok(!scan_is_binary(big, sizeof big), "a NUL after 8 KiB is not looked at");

    const char *src =
        "import os\n"                         /* 1 */
        "\n"                                  /* 2 */
        "class Store(Base):\n"                /* 3 */
        "    \"\"\"Keeps things.\"\"\"\n"     /* 4 */
        "    limit = 3\n"                     /* 5 */
        "\n"                                  /* 6 */
        "    @property\n"                     /* 7 */
        "    def size(self):\n"               /* 8 */
        "        return len(self.items)\n"    /* 9 */
        "\n"                                  /* 10 */
        "    def add(self, x):\n"             /* 11 */
        "        self.items.append(x)\n"      /* 12 */
        "\n"                                  /* 13 */
        "VALUE = os.sep\n";                   /* 14 */
    struct parse_symbol syms[4];
    syms[0] = sym(PARSE_CLASS, "Store", "Store", -1, 3, 12, 3, "class Store(Base)");
    syms[0].docstring = (char *)"Keeps things.";
    syms[1] = sym(PARSE_VARIABLE, "limit", "Store.limit", 0, 5, 5, 5, NULL);
    syms[2] = sym(PARSE_METHOD, "size", "Store.size", 0, 7, 9, 8, "def size(self)");
    syms[3] = sym(PARSE_METHOD, "add", "Store.add", 0, 11, 12, 11, "def add(self, x)");
    struct parse_result pr = {.syms = syms, .nsyms = 4};
    struct chunk_list cl = {0};
    chunk_file(src, strlen(src), &pr, "pkg/store.py", "pkg.store", &cl);
    is_int(cl.n, 5, "one class, two method and two module chunks");
    if (cl.n == 5) {
        is_str(cl.v[0].kind, "class", "the class chunk comes first");
        is_str(cl.v[0].text,
               "class Store(Base):\n    \"\"\"Keeps things.\"\"\"\n    limit = 3\n\n    @property\n"
               "    def size(self): ...\n\n    def add(self, x): ...",
               "the class outline keeps header, docstring, attributes and signatures");
        is_str(cl.v[1].text, "class Store(Base):\n    @property\n    def size(self):\n        return len(self.items)",
               "a method chunk opens with its class header");
        is_int(cl.v[1].start_line * 100 + cl.v[1].end_line, 709, "the method chunk spans its decorator and body");
        is_str(cl.v[3].kind, "module", "module code outside definitions");
        is_str(cl.v[3].text, "import os", "the window before the class, blank lines trimmed");
        is_str(cl.v[4].text, "VALUE = os.sep", "the window after it");
        is_str(cl.v[1].fts_name, "store size pkg store", "FTS name terms: qualified name and module");
        is_str(cl.v[0].fts_doc, "keep thing", "FTS doc terms: the docstring");
        is_str(cl.v[3].fts_path, "pkg store py", "FTS path terms");
        char hex[17];
        hash64_hex(hash64(cl.v[2].text, strlen(cl.v[2].text)), hex);
        is_str(cl.v[2].hash, hex, "the chunk hash is hash64 of its text");
    }
    chunk_list_free(&cl);

    /* 100 lines of module code: windows of 40 */
    struct buf b = BUF_INIT;
    for (int i = 1; i <= 100; i++) buf_printf(&b, "x%d = %d\n", i, i);
    struct parse_result empty = {0};
    chunk_file(b.data, b.len, &empty, "m.py", "m", &cl);
    is_int(cl.n, 3, "100 lines make three windows");
    if (cl.n == 3)
        is_int(cl.v[0].end_line * 10000 + cl.v[1].start_line * 100 + cl.v[2].end_line, 400000 + 4100 + 100,
               "windows 1-40, 41-80, 81-100");
    chunk_list_free(&cl);
    buf_free(&b);

    /* minified code: three functions on one line make one chunk, not three copies */
    const char *min = "/* v1 */\nfunction a(){return 1}function bb(){return a()}var c=function(){};\n";
    struct parse_symbol ms[3];
    ms[0] = sym(PARSE_FUNCTION, "a", "a", -1, 2, 2, 2, "function a()");
    ms[1] = sym(PARSE_FUNCTION, "bb", "bb", -1, 2, 2, 2, "function bb()");
    ms[2] = sym(PARSE_FUNCTION, "getValue", "getValue", -1, 2, 2, 2, "function()");
    struct parse_result mpr = {.syms = ms, .nsyms = 3};
    chunk_file(min, strlen(min), &mpr, "m.min.js", "m.min", &cl);
    is_int(cl.n, 2, "definitions sharing their lines share one chunk (plus the comment's window)");
    if (cl.n == 2) {
        is_int(cl.v[0].sym, 0, "the chunk belongs to the line's first definition");
        is_str(cl.v[0].text, "function a(){return 1}function bb(){return a()}var c=function(){};",
               "its text is the line once");
        is_str(cl.v[0].fts_name, "min bb min get value getvalue min",
               "its name terms hold every definition on the line (one-letter terms are dropped)");
        is_str(cl.v[1].text, "/* v1 */", "the line before is module code");
    }
    chunk_list_free(&cl);
    return done_testing();
}
