/*
 * util: small pieces every module uses. Allocation that aborts on out-of-memory
 * (so callers never carry OOM paths; cJSON allocates through it too, set up
 * before main by util.c), a growable byte buffer with an optional
 * size cap, file reading, hashing, time; and through log.h the log file.
 */
#ifndef DRQA_UTIL_H
#define DRQA_UTIL_H

#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Zeroed memory of n bytes for a large array that is filled whole soon
 * after; free it with xfree_large(p, n), n the same. Large blocks are mapped
 * with their pages already present: faulting in 100 MB a page at a time
 * costs far more than copying into it (hundreds of milliseconds in a
 * virtual machine), and one mapping call that brings them in costs little. */
void *xcalloc_large(size_t n);
void xfree_large(void *p, size_t n);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* realloc(p, nmemb * size) that aborts on out-of-memory and on a product
 * that overflows. */
void *xreallocarray(void *p, size_t nmemb, size_t size);

/* Growable arrays. The capacity an array needs to hold element n (0-based)
 * when it holds cap now: cap itself when n < cap, else cap doubled (first
 * when cap is 0) as often as it takes. Aborts when that overflows. */
size_t xgrow_cap(size_t cap, size_t n, size_t first);
/* Makes room for element n of the array v whose capacity, in elements, is
 * cap: when n has reached cap, cap grows by xgrow_cap and v is reallocated
 * (xreallocarray). v and cap are lvalues; cap may be of any integer type.
 *   ARRAY_GROW(r->v, r->n, r->cap, 16);
 *   r->v[r->n++] = x;
 * Arrays that share one count and capacity grow with xgrow_cap and one
 * xreallocarray each. Short lists that keep no capacity (notes, lists
 * deduplicated by a scan, which is quadratic anyway) grow one element at a
 * time by xreallocarray(v, n + 1, sizeof *v); an array resized to a known
 * count, by xreallocarray(v, count, sizeof *v). */
#define ARRAY_GROW(v, n, cap, first)                                                   \
    do {                                                                               \
        if ((size_t)(n) >= (size_t)(cap)) {                                            \
            size_t grow_cap_ = xgrow_cap((size_t)(cap), (size_t)(n), (first));         \
            (v) = xreallocarray((v), grow_cap_, sizeof *(v));                          \
            (cap) = grow_cap_;                                                         \
        }                                                                              \
    } while (0)

/* A growable buffer; data is always NUL-terminated once anything was added.
 * max == 0 means no cap; with a cap, an append that would pass it fails with -1
 * and leaves the buffer unchanged. The buffer owns data; buf_take hands it over. */
struct buf {
    char *data;
    size_t len, cap, max;
};
#define BUF_INIT {NULL, 0, 0, 0}
int buf_add(struct buf *b, const void *p, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap);
void buf_reset(struct buf *b);           /* len = 0, keeps memory */
char *buf_take(struct buf *b);           /* caller frees; never NULL; b is reset to empty */
void buf_free(struct buf *b);
void buf_fit(struct buf *b);             /* gives back the room past len (and its NUL) */
const char *buf_str(const struct buf *b); /* "" when empty */

/* Reads a whole file. Returns a malloc'd NUL-terminated copy (caller frees) and
 * its length, or NULL with errno set. Files over max bytes fail with EFBIG. */
char *read_file(const char *path, size_t max, size_t *len);
/* read_file that also reads a pipe or character device when any_type is set
 * (a directory still fails with EISDIR), and fills *st (when not NULL) with
 * the fstat of the file it opened and read. */
struct stat;
char *read_file_ex(const char *path, size_t max, size_t *len, int any_type, struct stat *st);
/* Writes all n bytes of p to fd (again after EINTR or a short write);
 * 0, or -1 with errno. */
int write_all(int fd, const void *p, size_t n);
/* Everything readable from fd up to its end (a pipe too), as read_file. */
char *read_fd(int fd, size_t max, size_t *len);

/* 64-bit FNV-1a scheme (xor, then multiply by the FNV prime) from the offset
 * basis 1469598103934665603, which is not the published one: the value is kept
 * because index hashes and the tests depend on it. Not cryptographic. */
uint64_t hash64(const void *p, size_t n);
void hash64_hex(uint64_t h, char out[17]);

int64_t now_ms(void);      /* monotonic milliseconds */
int64_t now_us(void);      /* monotonic microseconds */

/* A condition variable whose timed waits count on the monotonic clock, and
 * the deadline ms milliseconds from now on that clock, for
 * pthread_cond_timedwait. */
void cond_init_monotonic(pthread_cond_t *c);
struct timespec monotonic_after_ms(long ms);

/* Processors online, 1 to 64. */
int ncores(void);
/* Runs fn(ctx, part, nparts) for part 0 .. nparts-1 at once, part 0 on the
 * calling thread, and returns when all have; a part whose thread cannot be
 * started runs on the caller. Each part decides from (part, nparts) what it
 * does, so that what a part computes does not depend on nparts' timing. */
void run_parts(int nparts, void (*fn)(void *ctx, int part, int nparts), void *ctx);

int str_starts(const char *s, const char *prefix);
int str_ends(const char *s, const char *suffix);
/* The whole number written right after the first occurrence of key in s
 * ("... is 512 tokens" with key "is "), or -1 when there is none. */
long str_number_after(const char *s, const char *key);
/* The length of the longest prefix of s that is at most max bytes and does
 * not end inside a UTF-8 sequence: printf("%.*s", utf8_cut(s, 60), s) shows
 * at most 60 bytes of s without splitting a character. */
int utf8_cut(const char *s, int max);
/* Lines [start, end] of text, whose first line is line number first (the
 * text of an evidence span and its start_line): the bytes from the start of
 * line start to the end of line end or of the text, without the last '\n'.
 * NULL when text is NULL or ends before line start begins; "" when start is
 * the empty line after a final '\n'. Caller frees. */
char *text_lines(const char *text, int first, int start, int end);
/* Lowercase ASCII copy (caller frees). */
char *str_lower(const char *s);
/* 1 when the name name[0, n) of a setting or URL query parameter looks like
 * it holds a credential: lowercased and without '-', '_' and '.', it is or
 * ends with key, token, secret, sig, signature, password, passwd, pwd, auth,
 * authorization, credential(s), or it is code or pass (api_key, embed_key,
 * api-key, access_token, X-Goog-Api-Key, sig, ...). Its value is never shown. */
int str_secret_name(const char *name, size_t n);
/* A copy of s with every occurrence of the n bytes v replaced by
 * "[redacted]" (n > 0). Caller frees. */
char *str_redact(const char *s, const char *v, size_t n);
/* A copy of s with the credential secret redacted: every whole occurrence,
 * and every run of its first SECRET_PARTIAL_MIN or more bytes that is not
 * followed by another key character (letter, digit, '-', '_'), as a key cut
 * short shows ("sk-proj-AbCd..." in an echo, at the end of a cut excerpt), is
 * replaced by "[redacted]". A secret NULL or shorter than 4 bytes is not
 * searched for. Redact the whole text first, then cut it. Caller frees. */
#define SECRET_PARTIAL_MIN 8
char *str_redact_secret(const char *s, const char *secret);
/* The secrets of this process (API keys): secret_add keeps a copy of one
 * (NULL or shorter than 4 bytes: ignored; at most 16 are kept), and
 * secret_scrub returns a copy of s with every kept secret redacted as by
 * str_redact_secret. The log file, transcripts and model replies pass
 * through it, so a key reaches none of them whatever path it took. Thread-safe.
 * Caller frees. */
void secret_add(const char *secret);
char *secret_scrub(const char *s);
/* A text that goes out in pieces as it arrives (a streamed reply), redacted
 * as secret_scrub redacts the whole: a kept secret split across pieces never
 * goes out, because the tail that could begin one is held back until later
 * pieces show whether it does. */
struct secret_stream {
    struct buf acc;            /* every byte so far */
    size_t out;                /* bytes of acc already handed out */
};
/* Appends piece (len bytes) and returns what may go out now, redacted
 * (malloc'd, "" when nothing may yet); final: all that is left. */
char *secret_stream_next(struct secret_stream *s, const char *piece, size_t len, int final);
void secret_stream_clear(struct secret_stream *s);   /* empties it for another text */
/* Copies s into dst (size bytes, size > 0), cut to fit without splitting a
 * UTF-8 sequence. Returns dst. */
char *str_copy_cut(char *dst, size_t size, const char *s);

/* The log file (log_open, log_msg) is log.h's. */

/* Text bound for a terminal (stdout, stderr) that may carry file contents or
 * names: a copy where every control character but '\n' and '\t' -- C0, DEL
 * and the C1 range U+0080-U+009F (which some terminals obey in UTF-8) -- is
 * shown as a visible escape, "\x1b" or "\u009b", and so is every byte that
 * is not part of well-formed UTF-8 ("\x9b": a lone C1 byte, which an 8-bit
 * terminal obeys), and every bidirectional control ("<U+202E>",
 * text_cp_reorders), so text from a repository never drives the terminal.
 * Caller frees. */
char *text_term_safe(const char *s);
/* The same for JSON text: cJSON escapes C0 only; DEL and C1 become \u007f and
 * \u0080..\u009f escapes, which leave the JSON value unchanged. Caller frees. */
char *json_term_safe(const char *json);
/* 1 for the code points that reorder or break what a terminal shows around
 * them and are escaped wherever text is shown (text_term_safe, the front
 * end's text_safe): the bidirectional marks, embeddings, overrides and
 * isolates (U+200E-U+200F, U+202A-U+202E, U+2066-U+2069, U+061C), the line
 * and paragraph separators U+2028-U+2029 and U+FEFF. text_term_safe shows
 * them as "<U+202E>", json_term_safe as "\u202e". */
int text_cp_reorders(unsigned cp);

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* 1 when text holds word whole: not inside a longer identifier (letters,
 * digits, '_' and non-ASCII bytes on neither side). 0 for an empty word. */
int text_has_word(const char *text, const char *word);

#endif
