/*
 * tok: splitting source text and questions into comparable terms. See tok.h.
 * Only ASCII letters take part in case splitting; bytes >= 0x80 are kept as
 * word characters so that non-English identifiers stay searchable.
 */
#include "tok.h"

#include <ctype.h>
#include <string.h>

#define TERM_MAX 48

static int is_word(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

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

static void emit(const char *s, size_t n, int flags, tok_cb cb, void *ctx)
{
    char w[TERM_MAX + 1];
    if (n < 2 || n > TERM_MAX) return;
    for (size_t i = 0; i < n; i++) w[i] = (char)tolower((unsigned char)s[i]);
    w[n] = 0;
    if ((flags & TOK_STOPWORDS) && tok_is_stopword(w, n)) return;
    tok_stem(w, &n);
    cb(w, n, ctx);
}

/* Splits one word into parts; emits parts and, when split, the joined form. */
static void word(const char *s, size_t n, int flags, tok_cb cb, void *ctx)
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
            if (islower(prev) && isupper(c)) break;                       /* getResponse */
            if (isupper(prev) && isupper(c) && i + 1 < n && islower((unsigned char)s[i + 1]))
                break;                                                     /* HTTPResponse */
            i++;
        }
        size_t len = i - start;
        emit(s + start, len, flags, cb, ctx);
        nparts++;
        if (jl + len <= TERM_MAX) { memcpy(joined + jl, s + start, len); jl += len; }
        else jl = TERM_MAX + 1;
    }
    if (nparts > 1 && !(flags & TOK_NO_JOINED) && jl <= TERM_MAX)
        emit(joined, jl, flags & ~TOK_STOPWORDS, cb, ctx);
}

void tok_each(const char *text, size_t n, int flags, tok_cb cb, void *ctx)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && !is_word((unsigned char)text[i])) i++;
        size_t start = i;
        while (i < n && is_word((unsigned char)text[i])) i++;
        if (i > start) word(text + start, i - start, flags, cb, ctx);
    }
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
    struct terms_ctx c = {out};
    tok_each(text, n, flags, add_term, &c);
}
