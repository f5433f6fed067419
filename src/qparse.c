/*
 * qparse: question analysis for the offline policy and the extractive answer
 * (see qparse.h). Pure text processing plus one optional pass over the
 * index's full-text table for term weights; no model, no guessing beyond the
 * shapes of code names and a short list of English question-framing words.
 */
#include "qparse.h"
#include "langext.h"
#include "linepost.h"
#include "tok.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Words that frame a question about code rather than name what it is about.
 * They are dropped from the content words (tok.h already drops English
 * function words). Sorted for bsearch. */
static const char *const framing[] = {
    "actually", "approach", "code", "codebase", "component", "components", "define", "defined",
    "describe", "design", "designed", "determine", "determines", "difference", "different",
    "ensure", "ensures", "exactly", "explain", "file", "files", "find", "framework", "function",
    "functions", "happen", "happens", "implement", "implementation", "implemented", "implementing",
    "implements", "involved", "kind", "library", "locate", "located", "logic", "make", "makes",
    "mean", "means", "mechanism", "method", "methods", "module", "modules", "one", "overall",
    "particular", "project", "provide", "provided", "provides", "purpose", "rationale", "reason",
    "relationship", "repo", "repository", "responsible", "role", "specific", "specifically",
    "system", "various", "way", "ways", "work", "works",
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_framing(const char *w)
{
    return bsearch(&w, framing, sizeof framing / sizeof framing[0], sizeof framing[0], cmp_str) != NULL;
}

static int is_ident_start(unsigned char c) { return isalpha(c) || c == '_'; }
static int is_ident_char(unsigned char c) { return isalnum(c) || c == '_'; }

int qparse_code_shaped(const char *w, size_t n)
{
    int lower = 0, inner_upper = 0, under = 0, digit_after = 0, letters = 0, uppers = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        if (c == '_' && i > 0 && i + 1 < n) under = 1;
        if (islower(c)) lower = 1;
        if (isupper(c) && i > 0 && lower) inner_upper = 1;
        if (isupper(c)) uppers++;
        if (isalpha(c)) letters++;
        if (isdigit(c) && letters) digit_after = 1;
    }
    if (!letters) return 0;
    return under || inner_upper || digit_after || (uppers >= 2 && lower);   /* HTTPResponse */
}

/* File extensions besides the languages' (langext.h). */
static const char *const file_exts[] = {".c", ".h", ".cfg", ".toml", ".ini", ".json", ".yaml", ".yml", ".md",
                                        ".rst", ".txt", NULL};

static int looks_like_file(const char *s, size_t n)
{
    const char *dot = memrchr(s, '.', n);
    if (dot && dot > s && is_ident_char((unsigned char)dot[-1]) && langext_language(dot, n - (size_t)(dot - s)))
        return 1;
    for (int i = 0; file_exts[i]; i++) {
        size_t el = strlen(file_exts[i]);
        if (n > el && memcmp(s + n - el, file_exts[i], el) == 0 && is_ident_char((unsigned char)s[n - el - 1]))
            return 1;
    }
    return 0;
}

/* A dotted or plain identifier: [A-Za-z_]\w*(\.[A-Za-z_]\w*)* */
static int is_dotted_ident(const char *s, size_t n)
{
    size_t i = 0;
    if (!n) return 0;
    while (i < n) {
        if (!is_ident_start((unsigned char)s[i])) return 0;
        while (i < n && is_ident_char((unsigned char)s[i])) i++;
        if (i == n) return 1;
        if (s[i] != '.') return 0;
        i++;
        if (i == n) return 0;
    }
    return 1;
}

static void push_str(char ***v, size_t *n, const char *s, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*v)[i]) == len && memcmp((*v)[i], s, len) == 0) return;
    *v = xreallocarray(*v, *n + 1, sizeof **v);
    (*v)[(*n)++] = xstrndup(s, len);
}

static void add_ident(struct qparse *q, const char *s, size_t n, int explicit_, int called)
{
    while (n && s[n - 1] == '.') n--;
    if (!n) return;
    for (size_t i = 0; i < q->nids; i++)
        if (strlen(q->ids[i].name) == n && memcmp(q->ids[i].name, s, n) == 0) {
            if (explicit_) q->ids[i].explicit_ = 1;
            return;
        }
    struct qident id = {0};
    id.name = xstrndup(s, n);
    id.explicit_ = explicit_ || called;
    const char *dot = strrchr(id.name, '.');
    id.base = xstrdup(dot ? dot + 1 : id.name);
    int all_caps = 1, has_alpha = 0;
    for (const char *p = id.base; *p; p++) {
        if (islower((unsigned char)*p)) all_caps = 0;
        if (isalpha((unsigned char)*p)) has_alpha = 1;
    }
    if (has_alpha && all_caps && strlen(id.base) > 1) id.kind = QID_CONSTANT;
    else if (isupper((unsigned char)id.base[0]) && !called) id.kind = QID_CLASS;
    else id.kind = QID_FUNCTION;
    if (dot && id.kind == QID_FUNCTION) {
        /* Class.method: the part before the last dot is a class when capitalised */
        const char *prev = dot;
        while (prev > id.name && prev[-1] != '.') prev--;
        if (isupper((unsigned char)*prev)) id.owner = xstrndup(prev, (size_t)(dot - prev));
    }
    q->ids = xreallocarray(q->ids, q->nids + 1, sizeof *q->ids);
    q->ids[q->nids++] = id;
}

/* Text between quotes: code to look up, an identifier, a file, or plain words. */
static void quoted(struct qparse *q, const char *s, size_t n, int backtick, struct buf *plain)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (!n) return;
    size_t m = n;
    if (m > 2 && s[m - 2] == '(' && s[m - 1] == ')') m -= 2;
    if (looks_like_file(s, n) && !memchr(s, ' ', n)) {
        push_str(&q->files, &q->nfiles, s, n);
        return;
    }
    if (is_dotted_ident(s, m)) {
        int shaped = qparse_code_shaped(s, m) || memchr(s, '.', m) || m < n;
        if (backtick || shaped) {
            add_ident(q, s, m, 1, m < n);
            return;
        }
    }
    int codey = backtick;
    for (size_t i = 0; i < n && !codey; i++)
        if (strchr("_.()=[]:<>{}/%*+", s[i])) codey = 1;
    if (codey && n <= 200) {
        push_str(&q->quotes, &q->nquotes, s, n);
        return;
    }
    buf_addc(plain, ' ');
    buf_add(plain, s, n);
    buf_addc(plain, ' ');
}

/* The first interrogative decides the type; a few phrasings refine it. */
static enum qtype classify(const char *question)
{
    char *low = str_lower(question);
    enum qtype t = QTYPE_OTHER;
    const char *p = low;
    int words = 0;
    while (*p && words < 40) {
        while (*p && !isalpha((unsigned char)*p)) p++;
        const char *w = p;
        while (isalpha((unsigned char)*p)) p++;
        size_t n = (size_t)(p - w);
        if (!n) break;
        words++;
        const char *rest = p;
#define IS(s) (n == strlen(s) && memcmp(w, s, n) == 0)
        if (IS("where")) t = QTYPE_WHERE;
        else if (IS("why")) t = QTYPE_WHY;
        else if (IS("how")) t = QTYPE_HOW;
        else if (IS("what") || IS("which") || IS("who")) {
            t = QTYPE_WHAT;
            /* "which file/module ...", "what is the purpose of ..." */
            char next[3][24] = {"", "", ""};
            const char *r = rest;
            for (int k = 0; k < 3; k++) {
                while (*r && !isalpha((unsigned char)*r)) r++;
                const char *b = r;
                while (isalpha((unsigned char)*r)) r++;
                snprintf(next[k], sizeof next[k], "%.*s", (int)(r - b), b);
            }
            for (int k = 0; k < 3; k++) {
                const char *x = next[k];
                if (!strcmp(x, "file") || !strcmp(x, "files") || !strcmp(x, "module") ||
                    !strcmp(x, "directory") || !strcmp(x, "package") || !strcmp(x, "path") ||
                    !strcmp(x, "line") || !strcmp(x, "location"))
                    t = QTYPE_WHERE;
                if (!strcmp(x, "purpose") || !strcmp(x, "reason") || !strcmp(x, "rationale") ||
                    !strcmp(x, "motivation"))
                    t = QTYPE_WHY;
            }
        } else {
            continue;
        }
#undef IS
        break;
    }
    free(low);
    return t;
}

struct term_acc { struct qparse *q; };

static void add_term(const char *t, size_t n, void *ctx)
{
    struct qparse *q = ((struct term_acc *)ctx)->q;
    for (size_t i = 0; i < q->nterms; i++)
        if (strlen(q->terms[i]) == n && memcmp(q->terms[i], t, n) == 0) return;
    q->terms = xreallocarray(q->terms, q->nterms + 1, sizeof *q->terms);
    q->weights = xreallocarray(q->weights, q->nterms + 1, sizeof *q->weights);
    q->terms[q->nterms] = xstrndup(t, n);
    q->weights[q->nterms] = 1.0;
    q->nterms++;
}

int qparse_question(const char *question, struct qparse *q, char *err, size_t errlen)
{
    return qparse_question_names(question, NULL, NULL, q, err, errlen);
}

/* A name of the index found among the words: an identifier of the question
 * and a term of its own (tok drops one-letter words and English ones). */
static void add_name(struct qparse *q, const char *w, size_t n, int called)
{
    add_ident(q, w, n, 0, called);
    char *lw = xstrndup(w, n);
    for (char *p = lw; *p; p++) *p = (char)tolower((unsigned char)*p);
    struct term_acc acc = {q};
    add_term(lw, n, &acc);
    free(lw);
}

struct span {
    size_t at, len;
    int called;
};

/* The adverb particles of English phrasal verbs ("time out", "set up",
 * "log in", "shut down", "fall back"): with its verb, one word in code. */
static int is_particle(const char *w)
{
    static const char *const particles[] = {"away", "back", "down", "in", "off", "on", "out", "over", "up"};
    for (size_t i = 0; i < ARRAY_LEN(particles); i++)
        if (!strcmp(w, particles[i])) return 1;
    return 0;
}

/* A join's length at most: tok's longest term */
#define JOIN_MAX 48

/* The plain word lw (w's bytes at b, lowercased, wl of them) after the one
 * at *prev: when a single space parts them, both are letters only and lw is
 * a particle ("out", "up", "in": is_particle) after a word that is not an
 * English function word, the two written as one go to q->joins ("times
 * out": "timesout", and "timeout" of the first word's stem), for
 * qparse_weigh to keep those the index holds. A developer writes a verb and
 * its particle where the code names the thing as one word ("times out",
 * "set up", "log in", "clean up", "look up"), and the particle alone is no
 * term. Two words parted by a hyphen are a compound the code writes as
 * one word too ("k-means": kmeans, "in-place": inplace, "x-axis": xaxis),
 * whatever the first word (one letter, or "in"), joined whole and stemmed
 * as the index's tokenizer stems a token. Measured worse and left out: two
 * content words ("file name": each is a term already) and any function
 * word after a word ("redirects to" met every redirect_to). *prev becomes
 * this word. */
/* Keeps join j (malloc'd, taken) of a question word first[0..n), once. */
static void push_join(struct qparse *q, char *j, const char *first, size_t n)
{
    for (size_t k = 0; k < q->njoins; k++)
        if (!strcmp(q->joins[k], j)) {
            free(j);
            return;
        }
    q->joins = xreallocarray(q->joins, q->njoins + 1, sizeof *q->joins);
    q->join_firsts = xreallocarray(q->join_firsts, q->njoins + 1, sizeof *q->join_firsts);
    q->join_firsts[q->njoins] = xstrndup(first, n);
    q->joins[q->njoins++] = j;
}

static void add_joins(struct qparse *q, struct span *prev, const char *s, size_t b, const char *lw, size_t wl)
{
    int letters = 1;
    for (size_t k = 0; k < wl && letters; k++) letters = lw[k] >= 'a' && lw[k] <= 'z';
    int adjacent = prev->len && letters && wl >= 2 && prev->at + prev->len + 1 == b && prev->len + wl <= JOIN_MAX &&
                   q->njoins + 2 <= 32;
    int hyphen = adjacent && s[b - 1] == '-';
    int particle = adjacent && s[b - 1] == ' ' && prev->len >= 2 && is_particle(lw);
    char first[JOIN_MAX + 1];
    size_t n = prev->len;
    for (size_t k = 0; k < n && (particle || hyphen); k++) first[k] = (char)tolower((unsigned char)s[prev->at + k]);
    first[n] = 0;
    if (hyphen) {   /* a compound is one word, stemmed whole */
        char *j = xasprintf("%s%s", first, lw);
        size_t jl = strlen(j);
        tok_stem(j, &jl);
        j[jl] = 0;
        push_join(q, j, first, n);
    } else if (particle && !tok_is_stopword(first, n)) {   /* as written, and of the verb's stem */
        push_join(q, xasprintf("%s%s", first, lw), first, n);
        char stem[JOIN_MAX + 1];
        size_t sn = n;
        memcpy(stem, first, n + 1);
        tok_stem(stem, &sn);
        push_join(q, xasprintf("%.*s%s", (int)sn, stem, lw), first, n);
    }
    *prev = letters && wl <= JOIN_MAX / 2 ? (struct span){b, wl, 0} : (struct span){0, 0, 0};
}

/* 1 when w[0..n) is an English word that frames a sentence ("Which class
 * ...", "The class ..."), whatever its case. */
static int english(const char *w, size_t n)
{
    char *lw = xstrndup(w, n);
    for (char *p = lw; *p; p++) *p = (char)tolower((unsigned char)*p);
    int e = tok_is_stopword(lw, n) || is_framing(lw);
    free(lw);
    return e;
}

/* 1 when w[0..n) is "class" or "classes", the word that says the
 * capitalised word next to it is a class's name ("the Blueprint class"). */
static int class_word(const char *w, size_t n)
{
    return (n == 5 && strncasecmp(w, "class", 5) == 0) || (n == 7 && strncasecmp(w, "classes", 7) == 0);
}

/* The plain words of s[0..n) that the question calls a class, by a
 * capitalised name next to "class" ("the Blueprint class", "class Config")
 * that the index defines as a class (names), and those class words (said).
 * A name is taken before the class word, else after it. Only a class's:
 * "the wrapper function", "the test method" and "a method's result" name
 * no function, though a repository may well define test() or s(), and a
 * lowercase word before "class" ("the session class") is a description. */
struct named_words {
    struct span name[8], said[8];
    size_t n;
};

/* The first max words of s[0..n) into w, each marked (called) when it is not
 * plain: part of a dotted or path-like word, which the caller reads whole,
 * or called (name()). Returns how many. */
static size_t split_words(const char *s, size_t n, struct span *w, size_t max)
{
    size_t nw = 0;
    for (size_t i = 0; i < n && nw < max;) {
        if (!is_ident_char((unsigned char)s[i])) { i++; continue; }
        size_t b = i;
        while (i < n && is_ident_char((unsigned char)s[i])) i++;
        int plain = (b == 0 || (s[b - 1] != '.' && s[b - 1] != '/')) && (i == n || !strchr("./(", s[i]));
        w[nw++] = (struct span){b, i - b, !plain};
    }
    return nw;
}

static void find_named_words(const char *s, size_t n, qparse_name_fn defined, void *dctx, struct named_words *out)
{
    struct span w[64];
    size_t nw = split_words(s, n, w, ARRAY_LEN(w));
    out->n = 0;
    for (size_t k = 0; k < nw && out->n < ARRAY_LEN(out->name); k++) {
        if (w[k].called || !class_word(s + w[k].at, w[k].len)) continue;
        for (int side = -1; side <= 1; side += 2) {
            if ((side < 0 && k == 0) || (side > 0 && k + 1 == nw)) continue;
            const struct span *c = &w[k + (size_t)(ptrdiff_t)side];
            if (c->called || !isupper((unsigned char)s[c->at]) || class_word(s + c->at, c->len) ||
                english(s + c->at, c->len) || !defined(dctx, s + c->at, c->len, QPARSE_NAMES_CLASSES))
                continue;
            out->name[out->n] = (struct span){c->at, c->len, 0};
            out->said[out->n++] = w[k];
            break;
        }
    }
}

/* 1 when s[0..n) opens with a question word, an auxiliary and a plain word,
 * blanks alone between them ("Why, then, does ...", with a comma or a quote
 * taken out, is no plain opening): w holds the three. */
static int opening(const char *s, size_t n, struct span w[3])
{
    static const char *const wh[] = {"what", "how", "where", "which", "why", "when"};
    static const char *const aux[] = {"does", "do", "did", "is", "are", "was", "were"};
    if (split_words(s, n, w, 3) < 3 || w[2].called) return 0;
    for (size_t i = 0; i < w[2].at; i++)
        if (!is_ident_char((unsigned char)s[i]) && s[i] != ' ' && s[i] != '\t') return 0;
    int ok0 = 0, ok1 = 0;
    for (size_t k = 0; k < ARRAY_LEN(wh); k++)
        ok0 |= w[0].len == strlen(wh[k]) && !strncasecmp(s + w[0].at, wh[k], w[0].len);
    for (size_t k = 0; k < ARRAY_LEN(aux); k++)
        ok1 |= w[1].len == strlen(aux[k]) && !strncasecmp(s + w[1].at, aux[k], w[1].len);
    return ok0 && ok1;
}

/* The word w[2] after an opening question word and auxiliary (opening), when
 * it is the repository's own name ("How does requests handle redirects?"):
 * it names the whole project, whatever else it means. Returns 1, else 0. */
static int is_project(const char *s, const struct span w[3], qparse_name_fn defined, void *dctx)
{
    return defined(dctx, s + w[2].at, w[2].len, QPARSE_NAMES_PROJECT);
}

/* The subject of a question that opens with a question word and an
 * auxiliary ("What does simplify do?", "Where is solve defined?", "How does
 * integrate handle limits?"): the plain word w[2] right after them
 * (opening), when the index defines a function or class of that name (any
 * case). A user who asks about a name that way means it: the word is read
 * as a name written in backticks. The repository's own name there names the
 * project ("How does Flask dispatch a request?"), not its class of that
 * name: the caller does not ask then (is_project). Returns 1 with *out set,
 * else 0. */
static int find_subject(const char *s, const struct span w[3], qparse_name_fn defined, void *dctx, struct span *out)
{
    /* a variable's name is too often an English word ('data', 'name') */
    if (english(s + w[2].at, w[2].len) ||
        (!defined(dctx, s + w[2].at, w[2].len, QPARSE_NAMES_FUNCTIONS) &&
         !defined(dctx, s + w[2].at, w[2].len, QPARSE_NAMES_CLASSES)))
        return 0;
    *out = w[2];
    return 1;
}

/* The object of a question that opens by asking for callers or subclasses
 * ("What calls simplify?", "the callers of save", "Where is run called?",
 * "Which classes inherit from Field?", "What extends Widget?"): the plain
 * word after the verb or preposition (past an article), when the index
 * defines a function or class of that name. Read as a name in backticks, as
 * find_subject's. Returns 1 with *out set, else 0. */
static int find_relation_object(const char *s, size_t n, qparse_name_fn defined, void *dctx, struct span *out)
{
    static const char *const after[] = {"calls", "call", "of", "from", "extends", "extend", "subclass",
                                        "subclasses"};
    struct span w[8];
    size_t nw = split_words(s, n, w, ARRAY_LEN(w));
#define WORD_IS(k, lit) (w[k].len == strlen(lit) && !strncasecmp(s + w[k].at, lit, w[k].len))
    if (nw < 2) return 0;
    size_t at = nw;
    if (WORD_IS(0, "where") && (WORD_IS(1, "is") || WORD_IS(1, "are"))) {
        at = 2;
    } else {
        for (size_t k = 1; k + 1 < nw && k <= 4 && at == nw; k++)
            for (size_t v = 0; v < ARRAY_LEN(after); v++)
                if (WORD_IS(k, after[v])) {
                    at = k + 1;
                    break;
                }
    }
    while (at < nw && (WORD_IS(at, "of") || WORD_IS(at, "from") || WORD_IS(at, "the") || WORD_IS(at, "a") ||
                       WORD_IS(at, "an")))
        at++;
#undef WORD_IS
    if (at >= nw || w[at].called || english(s + w[at].at, w[at].len) ||
        (!defined(dctx, s + w[at].at, w[at].len, QPARSE_NAMES_FUNCTIONS) &&
         !defined(dctx, s + w[at].at, w[at].len, QPARSE_NAMES_CLASSES)))
        return 0;
    *out = w[at];
    return 1;
}

static int span_is(const struct span *v, size_t n, size_t at, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].at == at && v[i].len == len) return (int)i + 1;
    return 0;
}

/* The quoted parts of question (backticks, double quotes, curly double
 * quotes, single quotes around code) to q (quoted); the rest of it to plain. */
static void unquote(struct qparse *q, const char *question, struct buf *plain)
{
    size_t len = strlen(question);
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)question[i];
        const char *close = NULL;
        size_t open_len = 1, close_len = 1;
        if (c == '`') close = "`";
        else if (c == '"') close = "\"";
        else if (c == 0xe2 && i + 2 < len && (unsigned char)question[i + 1] == 0x80 &&
                 (unsigned char)question[i + 2] == 0x9c) {
            close = "\xe2\x80\x9d";
            open_len = 3;
            close_len = 3;
        } else if (c == '\'' && (i == 0 || !is_ident_char((unsigned char)question[i - 1]))) {
            close = "'";
        }
        if (close) {
            const char *start = question + i + open_len;
            const char *end = strstr(start, close);
            /* a single quote closes only before a non-word character */
            while (end && *close == '\'' && is_ident_char((unsigned char)end[1])) end = strstr(end + 1, close);
            if (end && end > start) {
                quoted(q, start, (size_t)(end - start), c == '`', plain);
                i = (size_t)(end - question) + close_len;
                continue;
            }
        }
        buf_addc(plain, (char)c);
        i++;
    }
}

/* The first words of a question, lowercased, for the relation tests below
 * (a word of 16 bytes or more is kept empty: it is none of theirs). */
struct opening {
    char w[6][16];
    size_t n;
    int wh;   /* the first is what, who or which */
};

/* Returns how many words o holds. */
static size_t opening_words(const char *question, struct opening *o)
{
    o->n = 0;
    for (const char *p = question; *p && o->n < ARRAY_LEN(o->w);) {
        while (*p && !isalnum((unsigned char)*p) && *p != '_') p++;
        const char *b = p;
        while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
        size_t n = (size_t)(p - b);
        if (!n) break;
        size_t k = n < sizeof o->w[0] ? n : 0;
        for (size_t i = 0; i < k; i++) o->w[o->n][i] = (char)tolower((unsigned char)b[i]);
        o->w[o->n++][k] = 0;
    }
    o->wh = o->n && (!strcmp(o->w[0], "what") || !strcmp(o->w[0], "who") || !strcmp(o->w[0], "which"));
    return o->n;
}

/* 1 when the question asks, in its opening words, for the callers of
 * something: "What calls X?", "Who calls X?", "Which functions call X?",
 * "What are the callers of X?", "Where is X called (from)?". A longer
 * question that only mentions a call further on ("Where does A invoke B,
 * and when is it called?") asks something else. */
static int asks_callers(const char *question)
{
    struct opening o;
    size_t nw = opening_words(question, &o);
    char (*w)[16] = o.w;
    int wh = o.wh;
    for (size_t i = 1; i < nw; i++) {
        if (!strcmp(w[i], "callers") || !strcmp(w[i], "caller")) return wh || !strcmp(w[0], "list");
        if (wh && i <= 3 && (!strcmp(w[i], "calls") || !strcmp(w[i], "call"))) return 1;
        if (!strcmp(w[0], "where") && nw > 1 && (!strcmp(w[1], "is") || !strcmp(w[1], "are")) && i <= 4 &&
            !strcmp(w[i], "called"))
            return 1;
    }
    return 0;
}

/* 1 when the question asks, in its opening words, for the subclasses of
 * something: "Which classes inherit from X?", "What extends X?", "What are
 * the subclasses of X?", "Which classes subclass X?". */
static int asks_subclasses(const char *question)
{
    struct opening o;
    size_t nw = opening_words(question, &o);
    char (*w)[16] = o.w;
    int wh = o.wh || (nw && !strcmp(w[0], "list"));
    static const char *const verbs[] = {"inherit", "inherits", "subclass", "subclasses", "extend", "extends",
                                        "derive", "derives"};
    for (size_t i = 1; wh && i < nw && i <= 3; i++)
        for (size_t v = 0; v < ARRAY_LEN(verbs); v++)
            if (!strcmp(w[i], verbs[v])) return 1;
    return 0;
}

/* 1 + the index of the first identifier of kind prefer, else 1 (the first). */
static size_t pick_id(const struct qparse *q, enum qident_kind prefer)
{
    for (size_t k = 0; k < q->nids; k++)
        if (q->ids[k].kind == prefer) return k + 1;
    return 1;
}

/* The end of qparse_question_names: the terms of the content words and code
 * names (words, freed here), then of quoted code; what the question asks
 * of callers, subclasses and tests. Returns 0, or -1 with a message when
 * there is nothing to look for. */
static int finish_terms(struct qparse *q, const char *question, struct buf *words, char *err, size_t errlen)
{
    struct term_acc acc = {q};
    tok_each(buf_str(words), words->len, TOK_STOPWORDS, add_term, &acc);
    for (size_t k = 0; k < q->nquotes; k++) tok_each(q->quotes[k], strlen(q->quotes[k]), TOK_STOPWORDS, add_term, &acc);
    buf_free(words);
    q->total_weight = (double)q->nterms;
    /* whose callers: the first name written as code (a function before a
     * class: "What calls Flask.run?" asks about run) */
    if (q->nids && asks_callers(question)) q->callers_of = pick_id(q, QID_FUNCTION);
    else if (q->nids && asks_subclasses(question)) q->subclasses_of = pick_id(q, QID_CLASS);
    for (size_t i = 0; i < q->nterms && !q->about_tests; i++)
        q->about_tests = !strcmp(q->terms[i], "test") || !strcmp(q->terms[i], "unittest") ||
                         !strcmp(q->terms[i], "pytest");
    if (q->nterms == 0 && q->nids == 0 && q->nquotes == 0) {
        snprintf(err, errlen, "the question '%.*s' has no words to look for; ask about something in the code",
                 utf8_cut(question, 80), question);
        return -1;
    }
    return 0;
}

int qparse_question_names(const char *question, qparse_name_fn defined, void *dctx, struct qparse *q, char *err,
                          size_t errlen)
{
    memset(q, 0, sizeof *q);
    struct span english_at[16];
    size_t nenglish = 0;
    if (!question) question = "";
    q->type = classify(question);
    struct buf plain = BUF_INIT;   /* the question with quoted parts taken out */

    unquote(q, question, &plain);

    /* Words and code names in what is left. */
    const char *s = buf_str(&plain);
    size_t n = plain.len;
    struct buf words = BUF_INIT;
    struct named_words nw = {0};
    struct span subject = {0, 0, 0}, prev = {0, 0, 0};   /* prev: the plain word before (add_joins) */
    struct span project = {0, 0, 0};   /* the repository's name opening the question: no word of it */
    if (defined) {
        struct span w3[3];
        int opens = opening(s, n, w3);
        if (opens && is_project(s, w3, defined, dctx)) project = w3[2];
        find_named_words(s, n, defined, dctx, &nw);
        int named = opens && !project.len && find_subject(s, w3, defined, dctx, &subject);
        if (!named && (asks_callers(question) || asks_subclasses(question)))
            find_relation_object(s, n, defined, dctx, &subject);
    }
    for (size_t i = 0; i < n;) {
        if (!is_ident_char((unsigned char)s[i]) && (unsigned char)s[i] < 0x80) { i++; continue; }
        size_t b = i;
        while (i < n && (is_ident_char((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80 ||
                         (s[i] == '.' && i + 1 < n && is_ident_start((unsigned char)s[i + 1])) ||
                         (s[i] == '/' && i + 1 < n && is_ident_char((unsigned char)s[i + 1]))))
            i++;
        size_t wl = i - b;
        const char *w = s + b;
        int called = i + 1 < n && s[i] == '(' && s[i + 1] == ')';
        /* the end of a possessive or a contraction ("a method's result",
         * "doesn't", "they're"): no word, even where the index defines s() */
        if (b >= 2 && s[b - 1] == '\'' && isalpha((unsigned char)s[b - 2]) && wl <= 2 && !called &&
            islower((unsigned char)w[0]) && (wl == 1 || islower((unsigned char)w[1])))
            continue;
        if (looks_like_file(w, wl) || memchr(w, '/', wl)) {
            push_str(&q->files, &q->nfiles, w, wl);
            buf_addc(&words, ' ');
            buf_add(&words, w, wl);
            continue;
        }
        const char *dot = memchr(w, '.', wl);
        if (dot && is_dotted_ident(w, wl)) {
            /* "e.g" and "i.e" are not code */
            int longest = 0, cur = 0;
            for (size_t k = 0; k < wl; k++) {
                if (w[k] == '.') cur = 0;
                else if (++cur > longest) longest = cur;
            }
            if (longest > 1) add_ident(q, w, wl, 0, called);
            buf_addc(&words, ' ');
            buf_add(&words, w, wl);
            continue;
        }
        if (span_is(nw.said, nw.n, b, wl)) continue;   /* "class" in "the Blueprint class" */
        if (project.len && project.at == b && project.len == wl) continue;
        if (span_is(nw.name, nw.n, b, wl)) {
            add_ident(q, w, wl, 1, 0);
            for (size_t k = 0; k < q->nids; k++)
                if (strlen(q->ids[k].name) == wl && memcmp(q->ids[k].name, w, wl) == 0) q->ids[k].kind = QID_CLASS;
            buf_addc(&words, ' ');
            buf_add(&words, w, wl);
            continue;
        }
        if (subject.len && subject.at == b && subject.len == wl) {
            add_ident(q, w, wl, 1, 0);
            buf_addc(&words, ' ');
            buf_add(&words, w, wl);
            continue;
        }
        if (called || qparse_code_shaped(w, wl)) {
            add_ident(q, w, wl, 0, called);
            buf_addc(&words, ' ');
            buf_add(&words, w, wl);
            continue;
        }
        char *lw = xstrndup(w, wl);
        for (char *p = lw; *p; p++) *p = (char)tolower((unsigned char)*p);
        add_joins(q, &prev, s, b, lw, wl);
        if (wl > 1 && !tok_is_stopword(lw, wl) && !is_framing(lw)) {
            push_str(&q->words, &q->nwords, lw, wl);
            buf_addc(&words, ' ');
            buf_add(&words, w, wl);
        } else if (defined && !is_framing(lw)) {
            /* a word dropped as too short or as an English word may be a
             * name the index defines ('g', 'S'); an English word ('a', 'I',
             * 'where') only counts as one when nothing else is left */
            int english = tok_is_stopword(lw, wl) || (wl == 1 && strchr("aAI", *w));
            if (!english && defined(dctx, w, wl, QPARSE_NAMES_ALL)) add_name(q, w, wl, called);
            else if (english && nenglish < ARRAY_LEN(english_at)) english_at[nenglish++] = (struct span){b, wl, called};
        }
        free(lw);
    }
    if (!q->nwords && !q->nids && !q->nquotes && !q->nfiles)
        for (size_t k = 0; k < nenglish; k++)
            if (defined(dctx, s + english_at[k].at, english_at[k].len, QPARSE_NAMES_ALL))
                add_name(q, s + english_at[k].at, english_at[k].len, english_at[k].called);
    /* the project's name, when nothing else is left to look for */
    if (project.len && !q->nwords && !q->nids && !q->nquotes && !q->nfiles) {
        push_str(&q->words, &q->nwords, s + project.at, project.len);
        buf_addc(&words, ' ');
        buf_add(&words, s + project.at, project.len);
    }
    buf_free(&plain);
    return finish_terms(q, question, &words, err, errlen);
}

static void free_joins(struct qparse *q)
{
    for (size_t i = 0; i < q->njoins; i++) {
        free(q->joins[i]);
        free(q->join_firsts[i]);
    }
    free(q->joins);
    free(q->join_firsts);
    q->joins = q->join_firsts = NULL;
    q->njoins = 0;
}

void qparse_free(struct qparse *q)
{
    if (!q) return;
    for (size_t i = 0; i < q->nids; i++) {
        free(q->ids[i].name);
        free(q->ids[i].owner);
        free(q->ids[i].base);
    }
    free(q->ids);
    for (size_t i = 0; i < q->nquotes; i++) free(q->quotes[i]);
    free(q->quotes);
    for (size_t i = 0; i < q->nfiles; i++) free(q->files[i]);
    free(q->files);
    for (size_t i = 0; i < q->nwords; i++) free(q->words[i]);
    free(q->words);
    free_joins(q);
    for (size_t i = 0; i < q->njoined; i++) free(q->joined[i]);
    free(q->joined);
    for (size_t i = 0; i < q->nterms; i++) free(q->terms[i]);
    free(q->terms);
    free(q->weights);
    free(q->absent);
    memset(q, 0, sizeof *q);
}

static int same_word(const char *a, size_t na, const char *b, size_t nb);

/* 1 when the vocabulary voc (fts5vocab, term = ?1) or its range query
 * (range: term >= ?1 AND term < ?2) holds a term that is another stem of
 * t's word (same_word): "connections" is not absent from code that says
 * "connection". */
static int stem_in_vocab(sqlite3_stmt *range, const char *t)
{
    if (!range) return 0;
    size_t n = strlen(t), k = n < 5 ? n : 5;
    char lo[8], hi[8];
    memcpy(lo, t, k);
    lo[k] = 0;
    memcpy(hi, t, k);
    hi[k] = 0;
    hi[k - 1]++;   /* terms are lowercase letters and digits: no overflow */
    sqlite3_bind_text(range, 1, lo, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(range, 2, hi, -1, SQLITE_TRANSIENT);
    int found = 0;
    while (!found && sqlite3_step(range) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(range, 0);
        found = v && same_word(t, n, v, strlen(v));
    }
    sqlite3_reset(range);
    return found;
}

/* The joins (add_joins) the index's vocabulary holds become terms and
 * words of the question, each once and not again when a word already is
 * it; the others are dropped. */
static void add_held_joins(struct qparse *q, sqlite3_stmt *voc)
{
    for (size_t i = 0; voc && i < q->njoins; i++) {
        const char *j = q->joins[i];
        int known = 0;
        for (size_t k = 0; k < q->nterms && !known; k++) known = !strcmp(q->terms[k], j);
        if (known) continue;
        sqlite3_bind_text(voc, 1, j, -1, SQLITE_STATIC);
        int held = sqlite3_step(voc) == SQLITE_ROW && sqlite3_column_int64(voc, 0) > 0;
        sqlite3_reset(voc);
        if (!held) continue;
        struct term_acc acc = {q};
        add_term(j, strlen(j), &acc);
        push_str(&q->words, &q->nwords, j, strlen(j));
        push_str(&q->joined, &q->njoined, q->join_firsts[i], strlen(q->join_firsts[i]));
    }
    free_joins(q);
}

void qparse_weigh(struct qparse *q, sqlite3 *db)
{
    if (!db || !q->nterms) return;
    sqlite3_stmt *st = NULL;
    double ndocs = 0;
    /* chunk_spans has the chunks view's rows (the view joins each to its
     * file) and counts from an index, without that join */
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM chunk_spans", -1, &st, NULL) != SQLITE_OK) return;
    if (sqlite3_step(st) == SQLITE_ROW) ndocs = (double)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (ndocs <= 0) return;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", -1, &st, NULL) !=
        SQLITE_OK)
        return;
    /* The rows holding a term of letters and digits only are counted by the
     * full-text index's vocabulary (one lookup) rather than by matching and
     * counting them: such a term is one token of the table's tokenizer, so
     * both give the same number. Other terms are matched. */
    sqlite3_stmt *voc = NULL;
    if (sqlite3_exec(db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.drqa_qparse_vocab "
                         "USING fts5vocab(main, 'chunks_fts', 'row')", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT doc FROM temp.drqa_qparse_vocab WHERE term = ?1", -1, &voc, NULL) != SQLITE_OK)
        voc = NULL;
    sqlite3_stmt *range = NULL;
    if (voc && sqlite3_prepare_v2(db, "SELECT term FROM temp.drqa_qparse_vocab WHERE term >= ?1 AND term < ?2",
                                  -1, &range, NULL) != SQLITE_OK)
        range = NULL;
    add_held_joins(q, voc);
    free(q->absent);
    q->absent = xcalloc(q->nterms, 1);
    q->total_weight = 0;
    for (size_t i = 0; i < q->nterms; i++) {
        double df = 0;
        int plain = voc != NULL;
        for (const char *c = q->terms[i]; *c && plain; c++) plain = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
        if (plain) {
            sqlite3_bind_text(voc, 1, q->terms[i], -1, SQLITE_STATIC);
            if (sqlite3_step(voc) == SQLITE_ROW) df = (double)sqlite3_column_int64(voc, 0);
            sqlite3_reset(voc);
        } else {
            char *m = xasprintf("\"%s\"", q->terms[i]);   /* terms hold no quotes: tok emits word bytes only */
            sqlite3_bind_text(st, 1, m, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(st) == SQLITE_ROW) df = (double)sqlite3_column_int64(st, 0);
            sqlite3_reset(st);
            free(m);
        }
        /* a term no chunk contains cannot be matched: it weighs little, so that
         * words the code never uses do not swamp the share of those it does */
        q->weights[i] = df > 0 ? log(1.0 + ndocs / (1.0 + df)) : 0.5;
        q->total_weight += q->weights[i];
        /* absent: said only of a term the vocabulary answers for */
        q->absent[i] = df == 0 && plain && *q->terms[i] && !stem_in_vocab(range, q->terms[i]);
    }
    sqlite3_finalize(range);
    sqlite3_finalize(voc);
    sqlite3_finalize(st);
}

struct match_ctx {
    const struct qparse *q;
    unsigned char *seen;
};

/* Two stems of one word: equal, or sharing a prefix of at least five bytes
 * with at most three more on either side ("compil" and "compile", "expire"
 * and "expiry", "connect" and "connection"): tok's light stemming leaves
 * such pairs apart. */
static int same_word(const char *a, size_t na, const char *b, size_t nb)
{
    if (na == nb && memcmp(a, b, na) == 0) return 1;
    size_t k = 0;
    while (k < na && k < nb && a[k] == b[k]) k++;
    /* or one is the other and an e: tok takes -ed and -ing off a verb but
     * keeps its final e ("cached": cach, "cache": cache; "parsed", "parse") */
    if (k >= 4 && ((na == k && nb == k + 1 && b[k] == 'e') || (nb == k && na == k + 1 && a[k] == 'e'))) return 1;
    return k >= 5 && na - k <= 3 && nb - k <= 3;
}

struct absent_acc {
    const struct qparse *q;
    int terms, absent;   /* the word's terms, and how many of them are absent */
    int emitted;         /* the terms tok made of the word */
    int last_absent;     /* its last term is a question term, and absent */
};

static void absent_term(const char *t, size_t n, void *ctx)
{
    struct absent_acc *a = ctx;
    a->emitted++;
    a->last_absent = 0;
    for (size_t i = 0; i < a->q->nterms; i++)
        if (strlen(a->q->terms[i]) == n && memcmp(a->q->terms[i], t, n) == 0) {
            a->terms++;
            a->absent += a->q->absent[i];
            a->last_absent = a->q->absent[i];
            return;
        }
}

static void count_term(const char *t, size_t n, void *ctx)
{
    (void)t;
    (void)n;
    (*(int *)ctx)++;
}

/* 1 when the question's word w is nowhere in the index: every term of it is
 * absent, or it is a compound identifier (`FooBarBaz`, `frobnicate_widget`)
 * and its joined form, the identifier itself as the index writes it, is
 * absent: its parts (`foo`, `widget`) said somewhere do not make the name
 * said. */
static int wide(const char *w)
{
    for (const char *c = w; *c; c++)
        if ((unsigned char)*c >= 0x80) return 1;
    return 0;
}

static void any_term(const char *t, size_t n, void *ctx)
{
    (void)t, (void)n;
    ++*(int *)ctx;
}

int qparse_unmatchable(const char *w)
{
    int terms = 0;
    tok_each(w, strlen(w), TOK_STOPWORDS, any_term, &terms);
    return !terms && wide(w);
}

static int word_absent(const struct qparse *q, const char *w)
{
    struct absent_acc a = {q, 0, 0, 0, 0};
    tok_each(w, strlen(w), TOK_STOPWORDS, absent_term, &a);
    /* no term at all: a stop word, or a word no index term can match (qparse_unmatchable) */
    if (!a.emitted) return wide(w);
    if (!a.terms) return 0;
    if (a.absent == a.terms) return 1;
    int parts = 0;
    tok_each(w, strlen(w), TOK_STOPWORDS | TOK_NO_JOINED, count_term, &parts);
    return parts > 1 && a.emitted > parts && a.last_absent;
}

size_t qparse_absent_words(const struct qparse *q, size_t max, struct buf *out)
{
    if (!q->absent) return 0;
    size_t k = 0;
    for (size_t w = 0; w < q->nwords; w++) {
        if (!word_absent(q, q->words[w])) continue;
        int again = 0;   /* a word written twice is said once; one the index writes joined, not at all */
        for (size_t v = 0; v < w && !again; v++) again = !strcmp(q->words[v], q->words[w]);
        for (size_t v = 0; v < q->njoined && !again; v++) again = !strcmp(q->joined[v], q->words[w]);
        if (again) continue;
        if (k < max) buf_printf(out, "%s`%s`", k ? ", " : "", q->words[w]);
        k++;
    }
    /* the names the question writes as code (`FooBarBaz`, frobnicate_widget()) */
    for (size_t i = 0; i < q->nids; i++) {
        if (!word_absent(q, q->ids[i].name)) continue;
        int again = 0;
        for (size_t v = 0; v < i && !again; v++) again = !strcmp(q->ids[v].name, q->ids[i].name);
        if (again) continue;
        if (k < max) buf_printf(out, "%s`%s`", k ? ", " : "", q->ids[i].name);
        k++;
    }
    return k;
}

int qparse_term_index(const struct qparse *q, const char *t, size_t n)
{
    for (size_t i = 0; i < q->nterms; i++)
        if (strlen(q->terms[i]) == n && memcmp(q->terms[i], t, n) == 0) return (int)i;
    for (size_t i = 0; i < q->nterms; i++)
        if (same_word(q->terms[i], strlen(q->terms[i]), t, n)) return (int)i;
    return -1;
}

static void match_term(const char *t, size_t n, void *ctx)
{
    struct match_ctx *m = ctx;
    for (size_t i = 0; i < m->q->nterms; i++)
        if (!m->seen[i] && same_word(m->q->terms[i], strlen(m->q->terms[i]), t, n)) m->seen[i] = 1;
}

/* 1 when text holds c (either case) as a word of its own: a one-letter
 * name, which tok never makes a term of. */
static int has_letter_word(const char *text, size_t n, char c)
{
    for (size_t i = 0; i < n; i++) {
        if (tolower((unsigned char)text[i]) != c) continue;
        if (i > 0 && is_ident_char((unsigned char)text[i - 1])) continue;
        if (i + 1 < n && is_ident_char((unsigned char)text[i + 1])) continue;
        return 1;
    }
    return 0;
}

double qparse_match(const struct qparse *q, const char *text, size_t n, unsigned char *hit)
{
    if (!q->nterms || !text || q->total_weight <= 0) return 0;
    unsigned char stackseen[64];
    unsigned char *seen = q->nterms <= sizeof stackseen ? stackseen : xmalloc(q->nterms);
    memset(seen, 0, q->nterms);
    struct match_ctx m = {q, seen};
    tok_each(text, n, 0, match_term, &m);
    for (size_t i = 0; i < q->nterms; i++)
        if (!seen[i] && q->terms[i][0] && !q->terms[i][1]) seen[i] = has_letter_word(text, n, q->terms[i][0]);
    double w = 0;
    for (size_t i = 0; i < q->nterms; i++)
        if (seen[i]) {
            w += q->weights[i];
            if (hit) hit[i] = 1;
        }
    if (seen != stackseen) free(seen);
    return w / q->total_weight;
}

char *qparse_phrase(const struct qparse *q, size_t maxwords)
{
    struct buf b = BUF_INIT;
    size_t k = 0;
    for (size_t i = 0; i < q->nids && (!maxwords || k < maxwords); i++, k++) {
        if (b.len) buf_addc(&b, ' ');
        buf_adds(&b, q->ids[i].name);
    }
    for (size_t i = 0; i < q->nwords && (!maxwords || k < maxwords); i++, k++) {
        if (b.len) buf_addc(&b, ' ');
        buf_adds(&b, q->words[i]);
    }
    return buf_take(&b);
}

struct win {
    long long file_id;
    long file_ord;   /* the file's place in path order: the tie-break */
    int start, end;
    float *tf;
    double len, score;
};

/* qparse_term_index for the many tokens of a whole repository: two terms
 * that match share their first byte (equal, or a common prefix of five), so
 * each token is compared only with the question's terms that start with its
 * first byte, in the same order (exact matches first). */
struct term_lookup {
    int head[256];          /* first term starting with a byte, -1 */
    int *next;              /* the next one, -1 */
    size_t *len;
};

static void lookup_init(struct term_lookup *l, const struct qparse *q)
{
    for (int i = 0; i < 256; i++) l->head[i] = -1;
    size_t nt = q->nterms ? q->nterms : 1;
    l->next = xmalloc(nt * sizeof *l->next);
    l->len = xmalloc(nt * sizeof *l->len);
    for (size_t i = q->nterms; i-- > 0;) {
        unsigned char b = (unsigned char)q->terms[i][0];
        l->len[i] = strlen(q->terms[i]);
        l->next[i] = l->head[b];
        l->head[b] = (int)i;
    }
}

static void lookup_free(struct term_lookup *l)
{
    free(l->next);
    free(l->len);
}

static int same_word(const char *a, size_t na, const char *b, size_t nb);

static int lookup_index(const struct qparse *q, const struct term_lookup *l, const char *t, size_t n)
{
    if (!n) return -1;
    int first = l->head[(unsigned char)t[0]];
    for (int i = first; i >= 0; i = l->next[i])
        if (l->len[i] == n && memcmp(q->terms[i], t, n) == 0) return i;
    for (int i = first; i >= 0; i = l->next[i])
        if (same_word(q->terms[i], l->len[i], t, n)) return i;
    return -1;
}

struct tf_ctx {
    const struct qparse *q;
    const struct term_lookup *l;
    float *tf;
    double len;
};

static void tf_term(const char *t, size_t n, void *ctx)
{
    struct tf_ctx *c = ctx;
    c->len += 1;
    int i = lookup_index(c->q, c->l, t, n);
    if (i >= 0) c->tf[i] += 1;
}

static int cmp_win(const void *a, const void *b)
{
    const struct win *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->file_ord != y->file_ord) return x->file_ord < y->file_ord ? -1 : 1;
    return x->start - y->start;
}

/* The k best windows of w[0..nw) with a score above zero into *out (the
 * windows are sorted in place); the count, or -1 with a message. */
static int pick(sqlite3 *db, struct win *w, size_t nw, size_t k, struct qwindow **out, char *err, size_t errlen)
{
    if (nw) qsort(w, nw, sizeof *w, cmp_win);
    size_t n = 0;
    struct qwindow *res = xcalloc(k ? k : 1, sizeof *res);
    sqlite3_stmt *ps = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db, "SELECT path FROM files WHERE id = ?", -1, &ps, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the files of the index: %s", sqlite3_errmsg(db));
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < nw && n < k && w[i].score > 0; i++) {
        sqlite3_bind_int64(ps, 1, w[i].file_id);
        if (sqlite3_step(ps) == SQLITE_ROW) {
            res[n].path = xstrdup((const char *)sqlite3_column_text(ps, 0));
            res[n].start_line = w[i].start;
            res[n].end_line = w[i].end;
            res[n].score = w[i].score;
            n++;
        }
        sqlite3_reset(ps);
    }
    sqlite3_finalize(ps);
    if (rc) {
        qparse_windows_free(res, n);
        return -1;
    }
    *out = res;
    return (int)n;
}


int qparse_windows_scan(const struct qparse *q, sqlite3 *db, int lines, int overlap, size_t k, struct qwindow **out,
                        char *err, size_t errlen)
{
    *out = NULL;
    if (lines < 1) lines = 1;
    if (overlap < 0 || overlap >= lines) overlap = 0;
    sqlite3_stmt *st;
    /* files are read in path order (a fresh index's id order, whatever updates
     * the index has had: ties and sums go the same way); paths are fetched
     * for the winners only */
    if (sqlite3_prepare_v2(db, "SELECT id, drqa_text(ztext, tlen) FROM files ORDER BY path", -1, &st, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "cannot read the files of the index: %s", sqlite3_errmsg(db));
        return -1;
    }
    size_t nt = q->nterms ? q->nterms : 1;
    struct term_lookup lk;
    lookup_init(&lk, q);
    struct win *w = NULL;
    size_t nw = 0, cap = 0;
    size_t *off = NULL, offcap = 0;
    long nfile = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long ford = nfile++;
        const char *text = (const char *)sqlite3_column_text(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        if (!text || !len) continue;
        size_t nl = 0;
        for (size_t i = 0; i < len; i++) {
            if (i == 0 || text[i - 1] == '\n') {
                ARRAY_GROW(off, nl + 1, offcap, 1024);  /* room for off[nl] and the end offset */
                off[nl++] = i;
            }
        }
        off[nl] = len;
        int nlines = (int)nl;
        for (int a = 1;; a += lines - overlap) {
            int b = a + lines - 1 < nlines ? a + lines - 1 : nlines;
            ARRAY_GROW(w, nw, cap, 256);
            struct win *x = &w[nw++];
            x->file_id = sqlite3_column_int64(st, 0);
            x->file_ord = ford;
            x->start = a;
            x->end = b;
            x->tf = xcalloc(nt, sizeof *x->tf);
            struct tf_ctx c = {q, &lk, x->tf, 0};
            tok_each(text + off[a - 1], off[b] - off[a - 1], 0, tf_term, &c);
            x->len = c.len;
            x->score = 0;
            if (b >= nlines) break;
        }
    }
    free(off);
    lookup_free(&lk);
    if (rc != SQLITE_DONE) {   /* a text that cannot be read: no ranking of part of the files */
        snprintf(err, errlen, "cannot read the files of the index: %s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        for (size_t i = 0; i < nw; i++) free(w[i].tf);
        free(w);
        return -1;
    }
    sqlite3_finalize(st);
    double avg = 0;
    for (size_t i = 0; i < nw; i++) avg += w[i].len;
    avg = nw && avg > 0 ? avg / (double)nw : 1;
    for (size_t t = 0; t < q->nterms; t++) {
        double df = 0;
        for (size_t i = 0; i < nw; i++)
            if (w[i].tf[t] > 0) df++;
        if (df == 0) continue;
        double idf = log(1.0 + ((double)nw - df + 0.5) / (df + 0.5));
        for (size_t i = 0; i < nw; i++) {
            double f = w[i].tf[t];
            if (f > 0) w[i].score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * w[i].len / avg));
        }
    }
    int n = pick(db, w, nw, k, out, err, errlen);
    for (size_t i = 0; i < nw; i++) free(w[i].tf);
    free(w);
    return n;
}

/* ---- the same ranking from the index's line postings (linepost.h) ---- */

struct cand_list {
    char **t;
    size_t n, cap;
    const char *term;   /* the question's term being looked up */
    size_t len;
};

static void cand_push(struct cand_list *c, const char *t, size_t n)
{
    ARRAY_GROW(c->t, c->n, c->cap, 32);
    c->t[c->n++] = xstrndup(t, n);
}

/* A stored term sharing the prefix: kept when it matches the question's term. */
static int cand_add(const char *t, size_t n, void *ctx)
{
    struct cand_list *c = ctx;
    if (same_word(c->term, c->len, t, n)) cand_push(c, t, n);
    return 0;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

struct post_ctx {
    float *tf;
    size_t nt;
    size_t owner;
    const size_t *wbase;
    const uint32_t *nwin;
    uint32_t lines, step;
};

/* A line's terms count in every window holding the line. */
static void on_post(uint32_t ord, uint32_t line, uint32_t count, void *ctx)
{
    struct post_ctx *c = ctx;
    uint32_t lo = line > c->lines ? (line - c->lines + c->step - 1) / c->step : 0;
    uint32_t hi = (line - 1) / c->step;
    if (hi >= c->nwin[ord]) hi = c->nwin[ord] - 1;
    for (uint32_t j = lo; j <= hi; j++) c->tf[(c->wbase[ord] + j) * c->nt + c->owner] += (float)count;
}

/* The windows of windows_posted and their scores. */
struct scored {
    const struct linepost *lp;
    const uint32_t *nwin;
    const size_t *wbase;
    const double *score;
    uint32_t lines, step;
};

/* Keeps w[0..n) a heap whose root is the window cmp_win puts last. */
static void heap_up(struct win *w, size_t i)
{
    while (i > 0 && cmp_win(&w[(i - 1) / 2], &w[i]) < 0) {
        struct win t = w[i];
        w[i] = w[(i - 1) / 2];
        w[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void heap_down(struct win *w, size_t n, size_t i)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && cmp_win(&w[l], &w[m]) > 0) m = l;
        if (r < n && cmp_win(&w[r], &w[m]) > 0) m = r;
        if (m == i) return;
        struct win t = w[i];
        w[i] = w[m];
        w[m] = t;
        i = m;
    }
}

/* The windows with a score above zero, or only the limit first of them in
 * cmp_win's order (SIZE_MAX: all): pick takes a few of hundreds of
 * thousands, which need not all be held and sorted. *nsel: how many are
 * returned (in no order), *npos: how many had a score above zero. */
static struct win *scored_windows(const struct scored *ws, size_t limit, size_t *nsel, size_t *npos)
{
    const struct linepost *lp = ws->lp;
    struct win *w = NULL;
    size_t n = 0, cap = 0;
    *npos = 0;
    for (size_t f = 0; f < lp->nfiles; f++)
        for (uint32_t j = 0; j < ws->nwin[f]; j++) {
            size_t i = ws->wbase[f] + j;
            if (!(ws->score[i] > 0)) continue;
            (*npos)++;
            uint32_t a = 1 + j * ws->step, b = a + ws->lines - 1;
            struct win x = {.file_id = lp->file_id[f], .file_ord = (long)f, .start = (int)a,
                            .end = (int)(b < lp->nlines[f] ? b : lp->nlines[f]), .score = ws->score[i]};
            if (n < limit) {
                ARRAY_GROW(w, n, cap, 256);
                w[n++] = x;
                if (limit != SIZE_MAX) heap_up(w, n - 1);
            } else if (n && cmp_win(&x, &w[0]) < 0) {
                w[0] = x;
                heap_down(w, n, 0);
            }
        }
    *nsel = n;
    return w;
}

/* qparse_windows_scan's ranking, term for term and sum for sum, from the
 * postings: the windows of every file, their lengths from the lines' term
 * counts, and the term frequencies from the postings of the stored terms
 * that match a question's term (lookup_index, as tf_term applies it).
 * Returns the count, or -1 with a message, or -2 when the postings are
 * malformed (the caller scans instead). */
static int windows_posted(const struct qparse *q, sqlite3 *db, struct linepost *lp, int lines, int overlap,
                          size_t k, struct qwindow **out, char *err, size_t errlen)
{
    uint32_t L = (uint32_t)lines, step = (uint32_t)(lines - overlap);
    size_t nt = q->nterms ? q->nterms : 1;
    uint32_t *nwin = xmalloc((lp->nfiles ? lp->nfiles : 1) * sizeof *nwin);
    size_t *wbase = xmalloc((lp->nfiles ? lp->nfiles : 1) * sizeof *wbase);
    size_t nw = 0;
    for (size_t f = 0; f < lp->nfiles; f++) {
        uint32_t n = lp->nlines[f];
        nwin[f] = n == 0 ? 0 : n <= L ? 1 : 1 + (n - L + step - 1) / step;
        wbase[f] = nw;
        nw += nwin[f];
    }
    double *len = xmalloc((nw ? nw : 1) * sizeof *len);
    double avg = 0;
    uint32_t *lnbuf = NULL;
    size_t lncap = 0;
    for (size_t f = 0; f < lp->nfiles; f++) {
        if (!nwin[f]) continue;
        const uint32_t *ln = linepost_lens(lp, f, &lnbuf, &lncap);
        for (uint32_t j = 0; j < nwin[f]; j++) {
            uint32_t a = 1 + j * step, b = a + L - 1 < lp->nlines[f] ? a + L - 1 : lp->nlines[f];
            uint64_t s = 0;
            for (uint32_t x = a; x <= b; x++) s += ln[x - 1];
            len[wbase[f] + j] = (double)s;
            avg += (double)s;
        }
    }
    free(lnbuf);
    avg = nw && avg > 0 ? avg / (double)nw : 1;
    float *tf = xcalloc((nw ? nw : 1) * nt, sizeof *tf);
    struct term_lookup lk;
    lookup_init(&lk, q);
    struct cand_list cands = {0};
    for (size_t i = 0; i < q->nterms; i++) {
        size_t n = strlen(q->terms[i]);
        /* a stored term matches this one when equal or (same_word) sharing
         * its first max(5, n - 3) bytes */
        cands.term = q->terms[i];
        cands.len = n;
        if (n < 5) cand_push(&cands, q->terms[i], n);
        else linepost_terms(lp, q->terms[i], n - 3 > 5 ? n - 3 : 5, cand_add, &cands);
    }
    /* each stored term once: it counts for one question term only */
    if (cands.n) qsort(cands.t, cands.n, sizeof *cands.t, cmp_cstr);
    size_t nu = 0;
    for (size_t c = 0; c < cands.n; c++) {
        if (nu && !strcmp(cands.t[nu - 1], cands.t[c])) {
            free(cands.t[c]);
            continue;
        }
        cands.t[nu++] = cands.t[c];
    }
    cands.n = nu;
    int bad = 0;
    for (size_t c = 0; c < cands.n && !bad; c++) {
        int owner = lookup_index(q, &lk, cands.t[c], strlen(cands.t[c]));
        if (owner < 0) continue;
        struct post_ctx pc = {tf, nt, (size_t)owner, wbase, nwin, L, step};
        bad = linepost_each(lp, cands.t[c], strlen(cands.t[c]), on_post, &pc) != 0;
    }
    for (size_t c = 0; c < cands.n; c++) free(cands.t[c]);
    free(cands.t);
    lookup_free(&lk);
    int rc = -2;
    if (!bad) {
        double *score = xcalloc(nw ? nw : 1, sizeof *score);
        for (size_t t = 0; t < q->nterms; t++) {
            double df = 0;
            for (size_t i = 0; i < nw; i++)
                if (tf[i * nt + t] > 0) df++;
            if (df == 0) continue;
            double idf = log(1.0 + ((double)nw - df + 0.5) / (df + 0.5));
            for (size_t i = 0; i < nw; i++) {
                double f = tf[i * nt + t];
                if (f > 0) score[i] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len[i] / avg));
            }
        }
        const struct scored ws = {lp, nwin, wbase, score, L, step};
        size_t nsel, npos;
        struct win *w = scored_windows(&ws, k, &nsel, &npos);
        rc = pick(db, w, nsel, k, out, err, errlen);
        free(w);
        if (rc >= 0 && (size_t)rc < k && (size_t)rc < npos && nsel < npos) {
            /* a window's file has no row: picked from all of them, the next
             * best take its place */
            qparse_windows_free(*out, (size_t)rc);
            *out = NULL;
            w = scored_windows(&ws, SIZE_MAX, &nsel, &npos);
            rc = pick(db, w, nsel, k, out, err, errlen);
            free(w);
        }
        free(score);
    }
    free(tf);
    free(len);
    free(wbase);
    free(nwin);
    return rc;
}

int qparse_windows(const struct qparse *q, sqlite3 *db, int lines, int overlap, size_t k, struct qwindow **out,
                   char *err, size_t errlen)
{
    *out = NULL;
    if (lines < 1) lines = 1;
    if (overlap < 0 || overlap >= lines) overlap = 0;
    struct linepost lp;
    int have = linepost_open(db, &lp);
    if (!have) {
        /* first use on this index (or it changed): build them for the next
         * question too; an index that cannot be written is scanned */
        char e2[256];
        if (linepost_build(db, e2, sizeof e2) == 1) have = linepost_open(db, &lp);
    }
    if (have) {
        int n = windows_posted(q, db, &lp, lines, overlap, k, out, err, errlen);
        linepost_close(&lp);
        if (n != -2) return n;
        log_msg("qparse: the index's line postings are malformed; scanning the files instead");
    }
    return qparse_windows_scan(q, db, lines, overlap, k, out, err, errlen);
}

void qparse_windows_free(struct qwindow *w, size_t n)
{
    if (!w) return;
    for (size_t i = 0; i < n; i++) free(w[i].path);
    free(w);
}

const char *qparse_type_name(enum qtype t)
{
    switch (t) {
    case QTYPE_WHAT: return "what";
    case QTYPE_WHERE: return "where";
    case QTYPE_HOW: return "how";
    case QTYPE_WHY: return "why";
    case QTYPE_OTHER: break;
    }
    return "other";
}
