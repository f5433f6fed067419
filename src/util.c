/*
 * util: allocation that aborts on OOM, growable buffers, file reading, hashing,
 * clocks (the log file is log.c). See util.h for ownership rules.
 */
#include "util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t n)
{
    fprintf(stderr, "drqa-tui: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p) oom(nmemb * size);
    return p;
}

/* Below this, xcalloc_large is xcalloc. */
#define LARGE_ALLOC ((size_t)1 << 20)

void *xcalloc_large(size_t n)
{
#ifdef MAP_POPULATE
    if (n >= LARGE_ALLOC) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) oom(n);
        return p;
    }
#endif
    return xcalloc(n ? n : 1, 1);
}

void xfree_large(void *p, size_t n)
{
    if (!p) return;
#ifdef MAP_POPULATE
    if (n >= LARGE_ALLOC) {
        munmap(p, n);
        return;
    }
#endif
    free(p);
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

/* cJSON allocates through xmalloc too, so a JSON tree or text is never a
 * NULL to check for either. A constructor, because a static library has no
 * init call that every program, test and bench would have to remember: any
 * program that uses the library uses xmalloc, which links this file. cJSON
 * itself then grows print buffers by malloc and copy (it uses realloc only
 * with the default hooks). */
static void *json_alloc(size_t n)
{
    return xmalloc(n);
}

__attribute__((constructor)) static void json_hooks(void)
{
    cJSON_Hooks h = {json_alloc, free};
    cJSON_InitHooks(&h);
}

void *xreallocarray(void *p, size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size) oom(SIZE_MAX);
    return xrealloc(p, nmemb * size);
}

size_t xgrow_cap(size_t cap, size_t n, size_t first)
{
    if (n < cap) return cap;
    size_t c = cap ? cap : (first ? first : 1);
    while (c <= n) {
        if (c > SIZE_MAX / 2) oom(SIZE_MAX);
        c *= 2;
    }
    return c;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
    struct buf b = BUF_INIT;
    buf_vprintf(&b, fmt, ap);
    return buf_take(&b);
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}

static int buf_reserve(struct buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (b->max && b->len + extra > b->max) return -1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
    return 0;
}

int buf_add(struct buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n)) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

int buf_adds(struct buf *b, const char *s) { return buf_add(b, s, strlen(s)); }
int buf_addc(struct buf *b, char c) { return buf_add(b, &c, 1); }

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return -1;
    if (buf_reserve(b, (size_t)n)) return -1;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = buf_vprintf(b, fmt, ap);
    va_end(ap);
    return r;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = 0;
}

char *buf_take(struct buf *b)
{
    char *p = b->data ? b->data : xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void buf_fit(struct buf *b)
{
    if (!b->data || b->cap <= b->len + 1) return;
    b->data = xrealloc(b->data, b->len + 1);
    b->cap = b->len + 1;
}

void buf_free(struct buf *b)
{
    if (!b) return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *buf_str(const struct buf *b) { return b->data ? b->data : ""; }

int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

char *read_fd(int fd, size_t max, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return NULL;
    if (max && S_ISREG(st.st_mode) && (size_t)st.st_size > max) { errno = EFBIG; return NULL; }
    size_t cap = (S_ISREG(st.st_mode) ? (size_t)st.st_size : 4096) + 1, n = 0;
    char *p = xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (max && n > max) { free(p); errno = EFBIG; return NULL; }
            cap *= 2;
            p = xrealloc(p, cap);
        }
        ssize_t r = read(fd, p + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno; free(p); errno = e; return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    if (max && n > max) { free(p); errno = EFBIG; return NULL; }
    p[n] = 0;
    if (len) *len = n;
    return p;
}

char *read_file_ex(const char *path, size_t max, size_t *len, int any_type, struct stat *st_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0) { int e = errno; close(fd); errno = e; return NULL; }
    if (S_ISDIR(st.st_mode) || (!any_type && !S_ISREG(st.st_mode))) { close(fd); errno = EISDIR; return NULL; }
    char *p = read_fd(fd, max, len);
    int e = errno;
    close(fd);
    errno = e;
    if (p && st_out) *st_out = st;
    return p;
}

char *read_file(const char *path, size_t max, size_t *len) { return read_file_ex(path, max, len, 0, NULL); }

uint64_t hash64(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ULL; }
    return h;
}

void hash64_hex(uint64_t h, char out[17])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) { out[i] = hex[h & 15]; h >>= 4; }
    out[16] = 0;
}

int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t now_ms(void) { return now_us() / 1000; }

void cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

struct timespec monotonic_after_ms(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

struct part_arg { void (*fn)(void *, int, int); void *ctx; int part, nparts; };

static void *part_main(void *arg)
{
    struct part_arg *a = arg;
    a->fn(a->ctx, a->part, a->nparts);
    return NULL;
}

void run_parts(int nparts, void (*fn)(void *ctx, int part, int nparts), void *ctx)
{
    if (nparts < 1) nparts = 1;
    pthread_t *th = xcalloc((size_t)nparts, sizeof *th);
    struct part_arg *a = xcalloc((size_t)nparts, sizeof *a);
    int *started = xcalloc((size_t)nparts, sizeof *started);
    for (int p = 1; p < nparts; p++) {
        a[p] = (struct part_arg){fn, ctx, p, nparts};
        started[p] = pthread_create(&th[p], NULL, part_main, &a[p]) == 0;
    }
    fn(ctx, 0, nparts);
    for (int p = 1; p < nparts; p++) {
        if (started[p]) pthread_join(th[p], NULL);
        else fn(ctx, p, nparts);
    }
    free(th);
    free(a);
    free(started);
}

int str_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int str_ends(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

long str_number_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p) return -1;
    p += strlen(key);
    if (*p < '0' || *p > '9') return -1;
    long v = 0;
    for (; *p >= '0' && *p <= '9' && v < 100000000; p++) v = v * 10 + (*p - '0');
    return v;
}

int utf8_cut(const char *s, int max)
{
    int n = 0;
    while (n < max && s[n]) n++;
    if (!s[n] || n == 0) return n;
    /* s[n] is the first byte left out: back up while it continues a sequence */
    int k = n;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return k;
}

char *text_lines(const char *text, int first, int start, int end)
{
    if (!text) return NULL;
    const char *p = text;
    for (int line = first; line < start && p; line++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) return NULL;
    const char *q = p;
    for (int line = start; line <= end && *q; line++) {
        const char *nl = strchr(q, '\n');
        q = nl ? (line < end ? nl + 1 : nl) : q + strlen(q);
    }
    return xstrndup(p, (size_t)(q - p));
}

char *str_lower(const char *s)
{
    char *p = xstrdup(s);
    for (char *q = p; *q; q++) *q = (char)tolower((unsigned char)*q);
    return p;
}

char *str_redact(const char *s, const char *v, size_t n)
{
    struct buf b = BUF_INIT;
    const char *p = s, *q;
    while ((q = memmem(p, strlen(p), v, n))) {
        buf_add(&b, p, (size_t)(q - p));
        buf_adds(&b, "[redacted]");
        p = q + n;
    }
    buf_adds(&b, p);
    return buf_take(&b);
}

static int key_char(unsigned char c) { return isalnum(c) || c == '-' || c == '_'; }

char *str_redact_secret(const char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    if (!s) s = "";
    if (n < 4) return xstrdup(s);
    struct buf b = BUF_INIT;
    const char *run = s, *p = s;
    while ((p = strchr(p, secret[0]))) {
        size_t m = 0;
        while (m < n && p[m] == secret[m]) m++;
        if (m == n || (m >= SECRET_PARTIAL_MIN && !key_char((unsigned char)p[m]))) {
            buf_add(&b, run, (size_t)(p - run));
            buf_adds(&b, "[redacted]");
            p += m;
            run = p;
        } else {
            p++;
        }
    }
    buf_adds(&b, run);
    return b.data ? buf_take(&b) : xstrdup("");
}

static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;
static char *secrets[16];   /* owned copies, kept for the life of the process */
static size_t nsecrets;

void secret_add(const char *secret)
{
    if (!secret || strlen(secret) < 4) return;
    pthread_mutex_lock(&secret_lock);
    int known = 0;
    for (size_t i = 0; i < nsecrets && !known; i++) known = !strcmp(secrets[i], secret);
    if (!known && nsecrets < ARRAY_LEN(secrets)) secrets[nsecrets++] = xstrdup(secret);
    pthread_mutex_unlock(&secret_lock);
}

char *secret_scrub(const char *s)
{
    char *r = xstrdup(s ? s : "");
    pthread_mutex_lock(&secret_lock);
    for (size_t i = 0; i < nsecrets; i++) {
        char *t = str_redact_secret(r, secrets[i]);
        free(r);
        r = t;
    }
    pthread_mutex_unlock(&secret_lock);
    return r;
}

/* Where text [0, len) may be cut without a kept secret straddling the cut:
 * the first position from which the rest of the text is the start of a
 * secret, or an occurrence crossing it, moves the cut back to its start. */
static size_t secret_cut(const char *s, size_t len)
{
    size_t m = len;
    pthread_mutex_lock(&secret_lock);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < nsecrets; i++) {
            size_t L = strlen(secrets[i]);
            for (size_t q = m > L ? m - L + 1 : 0; q < m; q++) {
                size_t n = len - q < L ? len - q : L;
                if (memcmp(s + q, secrets[i], n) == 0) {
                    m = q;
                    changed = 1;
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&secret_lock);
    while (m > 0 && m < len && ((unsigned char)s[m] & 0xC0) == 0x80) m--;   /* a whole character */
    return m;
}

char *secret_stream_next(struct secret_stream *s, const char *piece, size_t len, int final)
{
    if (len) buf_add(&s->acc, piece, len);
    size_t cut = final ? s->acc.len : secret_cut(buf_str(&s->acc), s->acc.len);
    if (cut <= s->out) return xstrdup("");
    char *part = xstrndup(buf_str(&s->acc) + s->out, cut - s->out);
    s->out = cut;
    char *r = secret_scrub(part);
    free(part);
    return r;
}

void secret_stream_clear(struct secret_stream *s)
{
    buf_free(&s->acc);
    s->out = 0;
}

char *str_copy_cut(char *dst, size_t size, const char *s)
{
    if (!s) s = "";
    int max = size - 1 > INT_MAX ? INT_MAX : (int)(size - 1);
    int n = utf8_cut(s, max);
    memcpy(dst, s, (size_t)n);
    dst[n] = 0;
    return dst;
}

int str_secret_name(const char *name, size_t n)
{
    static const char *const tails[] = {"key", "token", "secret", "sig", "signature", "password", "passwd", "pwd",
                                        "auth", "authorization", "credential", "credentials"};
    static const char *const whole[] = {"code", "pass"};
    char norm[64];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '-' || c == '_' || c == '.') continue;
        if (k + 1 >= sizeof norm) return 1;   /* a very long name: assume the worst */
        norm[k++] = (char)tolower(c);
    }
    norm[k] = 0;
    for (size_t i = 0; i < ARRAY_LEN(whole); i++)
        if (!strcmp(norm, whole[i])) return 1;
    for (size_t i = 0; i < ARRAY_LEN(tails); i++)
        if (str_ends(norm, tails[i])) return 1;
    return 0;
}

/* The length of the well-formed UTF-8 sequence at p (1-4), or 0 when the
 * byte at p does not start one (a stray continuation byte, an overlong or
 * surrogate form, a sequence cut short). */
static size_t utf8_seq_len(const unsigned char *p)
{
    if (p[0] < 0x80) return 1;
    size_t n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    unsigned lo = 0x80, hi = 0xbf;   /* the second byte's range */
    if (p[0] == 0xe0) lo = 0xa0;
    else if (p[0] == 0xed) hi = 0x9f;
    else if (p[0] == 0xf0) lo = 0x90;
    else if (p[0] == 0xf4) hi = 0x8f;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    return n;
}

int text_cp_reorders(unsigned cp)
{
    return (cp >= 0x200e && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0x061c ||
           cp == 0xfeff;
}

/* The code point of the well-formed sequence of n bytes at p. */
static unsigned utf8_cp(const unsigned char *p, size_t n)
{
    if (n == 1) return p[0];
    unsigned cp = p[0] & (0xff >> (n + 1));
    for (size_t i = 1; i < n; i++) cp = (cp << 6) | (p[i] & 0x3f);
    return cp;
}

/* Shared by text_term_safe and json_term_safe: json selects the escapes. */
static char *term_safe(const char *s, int json)
{
    struct buf b = BUF_INIT;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t seq = utf8_seq_len(p);
        if (seq > 1 && text_cp_reorders(utf8_cp(p, seq))) {
            /* bidirectional controls reorder what the terminal shows around
             * them (a name that reads as another): shown as the front end
             * shows them, or as a JSON escape that keeps the value */
            buf_printf(&b, json ? "\\u%04x" : "<U+%04X>", utf8_cp(p, seq));
            p += seq - 1;
            continue;
        }
        size_t n = json ? 1 : seq;
        if (!n) {
            /* not UTF-8: a lone 0x80-0x9f byte is C1 (CSI, OSC...) to an
             * 8-bit terminal, so every such byte is shown as its value */
            buf_printf(&b, "\\x%02x", p[0]);
        } else if (n > 1 && !(p[0] == 0xc2 && p[1] <= 0x9f)) {
            buf_add(&b, p, n);
            p += n - 1;
        } else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            buf_printf(&b, "\\u%04x", p[1]);
            p++;
        } else if (p[0] == 0x7f) {
            buf_adds(&b, json ? "\\u007f" : "\\x7f");
        } else if (!json && p[0] < 0x20 && p[0] != '\n' && p[0] != '\t') {
            buf_printf(&b, "\\x%02x", p[0]);
        } else {
            buf_add(&b, p, 1);
        }
    }
    if (!b.data) return xstrdup("");
    return b.data;
}

char *text_term_safe(const char *s) { return term_safe(s ? s : "", 0); }
char *json_term_safe(const char *json) { return term_safe(json ? json : "", 1); }

int text_has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    if (!n) return 0;
    for (const char *p = text; (p = strstr(p, word)); p++) {
        unsigned char b = p > text ? (unsigned char)p[-1] : ' ', a = (unsigned char)p[n];
        if (!(isalnum(b) || b == '_' || b >= 0x80) && !(isalnum(a) || a == '_' || a >= 0x80)) return 1;
    }
    return 0;
}
