/*
 * tok: splitting source text and questions into comparable terms. See tok.h.
 * Only ASCII letters take part in case splitting; bytes >= 0x80 are kept as
 * word characters so that non-English identifiers stay searchable.
 */
#include "tok.h"

#include <string.h>

#define TERM_MAX 48

/* ASCII only, whatever the locale: the terms an index holds must not depend
 * on it. <ctype.h> answers for bytes >= 0x80 by the locale's charset; in an
 * ISO-8859-1 one it lowercased the lead byte of a UTF-8 sequence and split
 * words at it ("größe" became "gr" and a broken "öße"). */
static int is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static int is_word(unsigned char c)
{
    return is_lower(c | 32) || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

static const char *const stopwords[] = {
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "between", "both", "but", "by", "can", "could", "did", "do",
    "does", "doing", "during", "each", "for", "from", "had", "has", "have", "having", "how",
    "if", "in", "into", "is", "it", "its", "itself", "just", "may", "might", "more", "most",
    "must", "no", "not", "of", "on", "once", "only", "or", "other", "our", "out", "over",
    "own", "same", "should", "so", "some", "such", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "until", "up", "upon", "us", "use", "used", "using", "very", "via", "was", "we", "were",
    "what", "when", "where", "whether", "which", "while", "who", "whom", "why", "will",
    "with", "within", "without", "would", "you", "your",
};

int tok_is_stopword(const char *w, size_t len)
{
    size_t lo = 0, hi = ARRAY_LEN(stopwords);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(stopwords[mid], w, len);
        if (c == 0 && stopwords[mid][len] != 0) c = 1;
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return 0;
}

void tok_stem(char *w, size_t *len)
{
    size_t n = *len;
    if (n > 4 && memcmp(w + n - 3, "ies", 3) == 0) { w[n - 3] = 'y'; n -= 2; }
    else if (n > 4 && memcmp(w + n - 4, "sses", 4) == 0) n -= 2;
    else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's' && w[n - 2] != 'u' && w[n - 2] != 'i') n -= 1;
    else if (n > 5 && memcmp(w + n - 3, "ing", 3) == 0) n -= 3;
    else if (n > 4 && memcmp(w + n - 2, "ed", 2) == 0) n -= 2;
    w[n] = 0;
    *len = n;
}

/* Where terms go: a callback, or (tok_terms) straight into a buffer through a
 * staging area, so that a term costs no function call of its own. */
struct sink {
    tok_cb cb;
    void *ctx;
    struct buf *out;   /* set: append to out, space-separated */
    int any;           /* out already holds something: the next term needs a space */
    size_t n;          /* bytes staged in s */
    char s[4096];
};

static void flush(struct sink *k)
{
    if (k->n) buf_add(k->out, k->s, k->n);
    k->n = 0;
}

static void emit(const char *s, size_t n, int flags, struct sink *k)
{
    char local[TERM_MAX + 1], *w = local;
    if (n < 2 || n > TERM_MAX) return;
    if (k->out) {
        if (k->n + TERM_MAX + 2 > sizeof k->s) flush(k);
        w = k->s + k->n + (k->any ? 1 : 0);   /* the term goes in place, after its space */
    }
    for (size_t i = 0; i < n; i++) w[i] = (char)(is_upper((unsigned char)s[i]) ? s[i] | 32 : s[i]);
    w[n] = 0;
    if ((flags & TOK_STOPWORDS) && tok_is_stopword(w, n)) return;
    tok_stem(w, &n);
    if (!k->out) {
        k->cb(w, n, k->ctx);
        return;
    }
    if (k->any) k->s[k->n++] = ' ';
    k->n += n;
    k->any = 1;
}

/* Splits one word into parts; emits parts and, when split, the joined form. */
static void word(const char *s, size_t n, int flags, struct sink *k)
{
    size_t nparts = 0;
    char joined[TERM_MAX + 1];
    size_t jl = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && s[i] == '_') i++;
        if (i >= n) break;
        size_t start = i;
        i++;
        while (i < n && s[i] != '_') {
            unsigned char prev = (unsigned char)s[i - 1], c = (unsigned char)s[i];
            if (is_lower(prev) && is_upper(c)) break;                     /* getResponse */
            if (is_upper(prev) && is_upper(c) && i + 1 < n && is_lower((unsigned char)s[i + 1]))
                break;                                                     /* HTTPResponse */
            i++;
        }
        size_t len = i - start;
        if (len == n) {
            emit(s, n, flags, k);   /* one part: the whole word, nothing to join */
            return;
        }
        emit(s + start, len, flags, k);
        nparts++;
        if (jl + len <= TERM_MAX) { memcpy(joined + jl, s + start, len); jl += len; }
        else jl = TERM_MAX + 1;
    }
    if (nparts > 1 && !(flags & TOK_NO_JOINED) && jl <= TERM_MAX)
        emit(joined, jl, flags & ~TOK_STOPWORDS, k);
}

static void each(const char *text, size_t n, int flags, struct sink *k)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && !is_word((unsigned char)text[i])) i++;
        size_t start = i;
        while (i < n && is_word((unsigned char)text[i])) i++;
        if (i > start) word(text + start, i - start, flags, k);
    }
}

void tok_each(const char *text, size_t n, int flags, tok_cb cb, void *ctx)
{
    struct sink k;
    k.cb = cb;
    k.ctx = ctx;
    k.out = NULL;
    each(text, n, flags, &k);
}

struct terms_ctx { struct buf *out; };

static void add_term(const char *t, size_t n, void *ctx)
{
    struct buf *out = ((struct terms_ctx *)ctx)->out;
    if (out->len) buf_addc(out, ' ');
    buf_add(out, t, n);
}

void tok_terms(const char *text, size_t n, int flags, struct buf *out)
{
    if (out->max) {
        /* a capped buffer takes terms one by one, up to its cap */
        struct terms_ctx c = {out};
        tok_each(text, n, flags, add_term, &c);
        return;
    }
    struct sink k;
    k.cb = NULL;
    k.ctx = NULL;
    k.out = out;
    k.any = out->len > 0;
    k.n = 0;
    each(text, n, flags, &k);
    flush(&k);
}
