/* Unit tests for util: buffers with caps, file reading, hashing. */
#include "tap.h"
#include "harness.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Under AddressSanitizer an allocation too large to serve is reported and
 * the program killed by the sanitizer itself, before util's out-of-memory
 * path can run; here malloc must return NULL as libc's does, so that the
 * test sees what the program does with it. ASan reads this at start-up; in
 * other builds it is an unused function. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* 1 when f() in a child dies by abort() after util's out-of-memory message */
static int child_aborts(void (*f)(void))
{
    int fd[2];
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        f();
        _exit(0);
    }
    close(fd[1]);
    /* everything the child wrote, not one read: a sanitizer may write its
     * own warning before util's message */
    char msg[2048] = "";
    size_t len = 0;
    ssize_t n;
    while (len < sizeof msg - 1 && (n = read(fd[0], msg + len, sizeof msg - 1 - len)) > 0) len += (size_t)n;
    msg[len] = 0;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(msg, "out of memory") != NULL;
}

static void cap_overflow(void) { (void)xgrow_cap(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1, 8); }
static void array_overflow(void) { (void)xreallocarray(NULL, SIZE_MAX / 4, 8); }
/* cJSON's allocator asked for more than can exist: plain malloc returns NULL */
static void json_huge(void) { (void)cJSON_malloc(SIZE_MAX / 2); }

int main(void)
{
    struct buf b = BUF_INIT;
    is_str(buf_str(&b), "", "an empty buffer reads as the empty string");
    buf_adds(&b, "abc");
    buf_printf(&b, "-%d-", 42);
    is_str(b.data, "abc-42-", "add and printf append");
    for (int i = 0; i < 1000; i++) buf_addc(&b, 'x');
    is_int(b.len, 1007, "growth keeps every byte");
    char *s = buf_take(&b);
    is_int(strlen(s), 1007, "take hands over the whole string");
    is_int(b.len, 0, "take leaves the buffer empty");
    free(s);

    struct buf c = BUF_INIT;
    c.max = 5;
    is_int(buf_adds(&c, "12345"), 0, "an append up to the cap succeeds");
    is_int(buf_adds(&c, "6"), -1, "an append past the cap fails");
    is_str(c.data, "12345", "a failed append leaves the buffer unchanged");
    buf_free(&c);

    char path[256];
    int fd = temp_file(path, sizeof path, "util");
    ok(fd >= 0, "temp file");
    ok(write(fd, "hello\nworld\n", 12) == 12, "write temp file");
    close(fd);
    size_t len = 0;
    char *t = read_file(path, 0, &len);
    ok(t && len == 12 && strcmp(t, "hello\nworld\n") == 0, "read_file returns the content");
    free(t);
    errno = 0;
    t = read_file(path, 4, &len);
    ok(!t && errno == EFBIG, "read_file refuses a file over the cap with EFBIG");
    unlink(path);
    t = read_file(path, 0, &len);
    ok(!t && errno == ENOENT, "read_file reports a missing file with ENOENT");

    ok(hash64("a", 1) != hash64("b", 1), "hash64 separates different bytes");
    char hex[17];
    hash64_hex(0x0123456789abcdefULL, hex);
    is_str(hex, "0123456789abcdef", "hash64_hex prints 16 hex digits");

    char *x = xasprintf("%s:%d", "f.py", 10);
    is_str(x, "f.py:10", "xasprintf formats");
    free(x);
    ok(str_starts("flask/app.py", "flask/") && !str_starts("fl", "flask"), "str_starts");
    ok(str_ends("app.py", ".py") && !str_ends("py", ".py"), "str_ends");

    /* "ab" + U+3002 (3 bytes) + "c" */
    const char *u = "ab\xe3\x80\x82" "c";
    is_int(utf8_cut(u, 2), 2, "utf8_cut: a cut before a character keeps what precedes it");
    is_int(utf8_cut(u, 3), 2, "utf8_cut: a cut one byte into a character leaves the character out");
    is_int(utf8_cut(u, 4), 2, "utf8_cut: a cut two bytes into a character leaves the character out");
    is_int(utf8_cut(u, 5), 5, "utf8_cut: a cut after a character keeps it");
    is_int(utf8_cut(u, 60), 6, "utf8_cut: a short string is kept whole");
    is_int(utf8_cut("", 5), 0, "utf8_cut: the empty string");

    /* a span's text starting at line 10: lines 10, 11, 12 */
    const char *span = "ten\neleven\ntwelve";
    char *l = text_lines(span, 10, 11, 11);
    is_str(l, "eleven", "text_lines: one inner line, without its newline");
    free(l);
    l = text_lines(span, 10, 10, 11);
    is_str(l, "ten\neleven", "text_lines: two lines keep the newline between them");
    free(l);
    l = text_lines(span, 10, 12, 40);
    is_str(l, "twelve", "text_lines: an end past the text stops at the text's end");
    free(l);
    ok(text_lines(span, 10, 13, 13) == NULL, "text_lines: a start past the text is NULL");
    ok(text_lines(NULL, 1, 1, 1) == NULL, "text_lines: no text is NULL");
    l = text_lines("a\n", 1, 2, 2);
    is_str(l, "", "text_lines: the empty line after a final newline is \"\"");
    free(l);

    /* growable arrays */
    is_int(xgrow_cap(0, 0, 16), 16, "xgrow_cap: an empty array starts at first");
    is_int(xgrow_cap(16, 15, 16), 16, "xgrow_cap: room left keeps the capacity");
    is_int(xgrow_cap(16, 16, 16), 32, "xgrow_cap: a full array doubles");
    is_int(xgrow_cap(4, 100, 16), 128, "xgrow_cap: doubles until element n fits");
    is_int(child_aborts(cap_overflow), 1, "xgrow_cap: a capacity that would overflow aborts");
    is_int(child_aborts(array_overflow), 1, "xreallocarray: a size that would overflow aborts");
    {
        int *v = NULL, cap = 0;   /* an int capacity, as some structs have */
        size_t n = 0, grew = 0;
        for (int i = 0; i < 1000; i++) {
            int before = cap;
            ARRAY_GROW(v, n, cap, 8);
            grew += cap != before;
            v[n++] = i;
        }
        int okv = 1;
        for (int i = 0; i < 1000; i++) okv &= v[i] == i;
        ok(okv && cap == 1024 && grew == 8, "ARRAY_GROW: 1000 appends keep every element, capacity 8 doubled to 1024 "
           "in 8 steps (cap %d, %zu steps)", cap, grew);
        free(v);
    }

    {
        const char *key = "sk-proj-ABCDEFGH12345678";
        char *r = str_redact_secret("a sk-proj-ABCDEFGH12345678 b", key);
        is_str(r, "a [redacted] b", "str_redact_secret: a whole key");
        free(r);
        r = str_redact_secret("echo: sk-proj-ABCD... end", key);
        is_str(r, "echo: [redacted]... end", "str_redact_secret: a key cut short in an echo");
        free(r);
        r = str_redact_secret("cut at sk-proj-ABC", key);
        is_str(r, "cut at [redacted]", "str_redact_secret: a key cut at the end of the text");
        free(r);
        r = str_redact_secret("sk-proj- is how keys start; sk-proj-Other99 is another", key);
        is_str(r, "[redacted] is how keys start; sk-proj-Other99 is another",
               "str_redact_secret: an 8-byte prefix is redacted, another key sharing it is not");
        free(r);
        r = str_redact_secret("sk-proj", key);
        is_str(r, "sk-proj", "str_redact_secret: fewer than 8 bytes of the key are kept");
        free(r);
        secret_add("tok-REGISTERED-0123");
        r = secret_scrub("x tok-REGISTERED-0123 y tok-REGISTER");
        is_str(r, "x [redacted] y [redacted]", "secret_scrub: a registered secret, whole and cut short");
        free(r);
        /* the same text handed out a byte at a time */
        struct secret_stream ss = {BUF_INIT, 0};
        const char *txt = "x tok-REGISTERED-0123 y tok-REGISTER";
        struct buf got = BUF_INIT;
        int leaked = 0;
        for (size_t i = 0; txt[i]; i++) {
            char *p = secret_stream_next(&ss, txt + i, 1, 0);
            leaked |= strstr(p, "REG") != NULL;
            buf_adds(&got, p);
            free(p);
        }
        char *p = secret_stream_next(&ss, NULL, 0, 1);
        buf_adds(&got, p);
        free(p);
        ok(!leaked, "secret_stream: no piece handed out holds a part of the secret");
        is_str(buf_str(&got), "x [redacted] y [redacted]", "secret_stream: the pieces join to secret_scrub's text");
        buf_free(&got);
        secret_stream_clear(&ss);
        char small[12];
        is_str(str_copy_cut(small, sizeof small, "abcdefghij\xc3\xa9z"), "abcdefghij",
               "str_copy_cut: never splits a UTF-8 sequence");
    }

    {
        char *safe = text_term_safe("a\xe2\x80\xae b\xe2\x81\xa6" "c\xd8\x9c \xe2\x80\x94 \x1b");
        is_str(safe, "a<U+202E> b<U+2066>c<U+061C> \xe2\x80\x94 \\x1b",
               "text_term_safe: bidirectional controls shown as <U+202E>, as the front end shows them");
        free(safe);
        safe = json_term_safe("\"\xe2\x80\xae\xe2\x80\x8f\"");
        is_str(safe, "\"\\u202e\\u200f\"", "json_term_safe: bidirectional controls as JSON escapes");
        free(safe);
        is_int(text_cp_reorders(0x202e) && text_cp_reorders(0x2069) && !text_cp_reorders(0x2014), 1,
               "text_cp_reorders: the overrides and isolates, not a dash");
    }

    is_int(child_aborts(json_huge), 1, "cJSON allocates through xmalloc: out of memory aborts with a message");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "k", "v");
    char *js = cJSON_PrintUnformatted(o);
    is_str(js, "{\"k\":\"v\"}", "cJSON still builds and prints through the hooks");
    free(js);
    cJSON_Delete(o);
    ok(text_has_word("x = LIMIT + 1", "LIMIT") && text_has_word("LIMIT", "LIMIT") &&
           !text_has_word("LIMIT_2 = 3", "LIMIT") && !text_has_word("MAX_LIMIT", "LIMIT") &&
           text_has_word("MAX_LIMIT LIMIT", "LIMIT") && !text_has_word("a", ""),
       "text_has_word: a whole word only, at any place, never inside a longer name");
    return done_testing();
}
