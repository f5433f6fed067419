/*
 * answer_stream: the answer role's pieces forwarded to its reader, and what
 * a stopped answer keeps. See answer_stream.h.
 */
#include "answer_stream.h"
#include "policy_llm.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void form_reset(struct answer_stream *s)
{
    s->form = 0;
    buf_reset(&s->head);
    s->nesc = 0;
}

void answer_stream_set(struct answer_stream *s, policy_answer_sink fn, void *ud)
{
    s->fn = fn;
    s->ud = ud;
    buf_reset(&s->text);
    s->handed = 0;
    s->stopped = 0;
    form_reset(s);
}

void answer_stream_free(struct answer_stream *s)
{
    if (s) {
        buf_free(&s->text);
        buf_free(&s->head);
    }
}

/* Hands text to the reader as answer text. */
static int hand(struct answer_stream *s, const char *text, size_t len)
{
    if (!len) return 0;
    buf_add(&s->text, text, len);
    s->handed = 1;
    if (s->fn(s->ud, LLM_DELTA_TEXT, text, len) != 0) s->stopped = 1;
    return s->stopped;
}

/* After a ```json fence that opens the reply (small open models write the
 * object in one): where the object would start; p itself when there is no
 * fence; NULL after a fence of anything else (plain text). *more: the head
 * may still grow into a fence. */
static const char *past_fence(const char *p, int *more)
{
    static const char *const fences[] = {"```json\n", "```JSON\n", "```\n", "```json\r\n", "```\r\n"};
    if (*p != '`') return p;
    size_t have = strlen(p);
    for (size_t k = 0; k < sizeof fences / sizeof *fences; k++) {
        size_t n = strlen(fences[k]);
        if (strncmp(p, fences[k], have < n ? have : n)) continue;
        if (have < n) {
            *more = 1;
            return p;
        }
        return p + n;
    }
    return NULL;
}

/* Form 0: the head so far decides the form. An opening {"answer": " is the
 * JSON form (2, the string's text follows), also inside a ```json fence;
 * anything else that cannot grow into it is plain text (1, the head handed
 * as it is). */
static void decide_form(struct answer_stream *s)
{
    const char *h = buf_str(&s->head), *p = h + strspn(h, " \t\r\n");
    if (!*p) return;
    int more = 0;
    p = past_fence(p, &more);
    if (more) return;
    if (!p) {
        s->form = 1;
        return;
    }
    static const char *const want[] = {"{", "\"answer\"", ":", "\""};
    for (size_t k = 0; k < 4; k++) {
        p += strspn(p, " \t\r\n");
        size_t n = strlen(want[k]), have = strlen(p);
        if (have < n) {
            if (strncmp(p, want[k], have)) s->form = 1;   /* cannot grow into it */
            return;
        }
        if (strncmp(p, want[k], n)) {
            s->form = 1;
            return;
        }
        p += n;
    }
    s->form = 2;
    char *rest = xstrdup(p);   /* the string's first bytes, if any (p points into head) */
    buf_reset(&s->head);
    buf_adds(&s->head, rest);
    free(rest);
}

/* Form 2: decodes JSON string text, an escape cut across pieces kept for the
 * next; the closing quote ends it (form 3). Returns the reader's stop. */
static int decode(struct answer_stream *s, const char *text, size_t len)
{
    struct buf out = BUF_INIT;
    for (size_t i = 0; i < len && s->form == 2; i++) {
        char c = text[i];
        if (s->nesc || c == '\\') {
            s->esc[s->nesc++] = c;
            if (s->nesc < 2) continue;
            char e = s->esc[1];
            if (e == 'u') {
                if (s->nesc < 6) continue;
                unsigned v = (unsigned)strtoul(s->esc + 2, NULL, 16);
                /* a surrogate half or NUL is written as U+FFFD: the check's parse decides the rest */
                if (!v || (v >= 0xD800 && v <= 0xDFFF)) v = 0xFFFD;
                char u[4];
                int n = v < 0x80 ? (u[0] = (char)v, 1)
                      : v < 0x800 ? (u[0] = (char)(0xC0 | v >> 6), u[1] = (char)(0x80 | (v & 0x3F)), 2)
                                  : (u[0] = (char)(0xE0 | v >> 12), u[1] = (char)(0x80 | ((v >> 6) & 0x3F)),
                                     u[2] = (char)(0x80 | (v & 0x3F)), 3);
                buf_add(&out, u, (size_t)n);
            } else {
                const char *from = "nrtbf\"\\/", *to = "\n\r\t\b\f\"\\/", *m = strchr(from, e);
                buf_addc(&out, m ? to[m - from] : e);
            }
            s->nesc = 0;
        } else if (c == '"') {
            s->form = 3;
        } else {
            buf_addc(&out, c);
        }
    }
    int stop = hand(s, out.data ? out.data : "", out.len);
    buf_free(&out);
    return stop;
}

static int on_piece(void *ud, enum llm_delta_kind kind, const char *text, size_t len)
{
    struct answer_stream *s = ud;
    if (s->stopped) return 1;
    if (kind == LLM_DELTA_RESET) {
        buf_reset(&s->text);
        form_reset(s);
        if (!s->handed) return 0;   /* nothing the reader must drop */
        s->handed = 0;
    } else if (kind == LLM_DELTA_TEXT && len) {
        if (s->form == 0) {
            buf_add(&s->head, text, len);
            decide_form(s);
            if (s->form == 0) return 0;   /* not known yet: held */
            char *h = buf_take(&s->head);
            int stop = s->form == 1 ? hand(s, h, strlen(h)) : decode(s, h, strlen(h));
            free(h);
            return stop;
        }
        if (s->form == 1) return hand(s, text, len);
        if (s->form == 2) return decode(s, text, len);
        return 0;   /* past the string: the object's end */
    } else {
        s->handed = 1;
    }
    if (s->fn(s->ud, (int)kind, text, len) != 0) s->stopped = 1;
    return s->stopped;
}

void answer_stream_attach(struct answer_stream *s, struct llm_request *req)
{
    if (!s->fn) return;
    req->on_delta = on_piece;
    req->delta_ud = s;
    /* a call after one the reader saw writes the answer again */
    on_piece(s, LLM_DELTA_RESET, NULL, 0);
}

int answer_stream_stopped(const struct answer_stream *s)
{
    return s->stopped;
}

/* The length of text without the word being written when it stopped, if
 * that word may be a citation cut short (it has a ':'): `a.c:12` of
 * `a.c:120-140` would be verified as a span nobody cited. */
static size_t complete_part(const char *text, size_t len)
{
    if (!len || strchr(" \t\r\n", text[len - 1])) return len;
    size_t w = len;
    while (w > 0 && !strchr(" \t\r\n", text[w - 1])) w--;
    return memchr(text + w, ':', len - w) ? w : len;
}

void answer_stream_keep(const struct answer_stream *s, const struct evidence *seen, struct policy_answer *out,
                        struct policy_usage *u)
{
    const char *text = buf_str(&s->text);
    char *part = xstrndup(text, complete_part(text, s->text.len));
    int removed = 0;
    char *md = llm_strip_citations(part, seen, &removed);
    size_t n = strlen(md);
    while (n && strchr(" \t\r\n", md[n - 1])) md[--n] = 0;
    struct buf b = BUF_INIT;
    if (n)
        buf_printf(&b, "%s\n\n_Stopped while it was being written: this answer is incomplete._\n", md);
    else
        buf_adds(&b, "_The answer was stopped before any of it was written._\n");
    if (removed)
        buf_printf(&b, "\n_%d citation%s that matched no evidence on the trajectory %s removed._\n", removed,
                   removed == 1 ? "" : "s", removed == 1 ? "was" : "were");
    struct evidence cites = EVIDENCE_INIT;
    llm_parse_citations(md, &cites);
    for (size_t i = 0; i < cites.n; i++) {
        const struct evidence_span *c = &cites.v[i];
        if (evidence_covers(seen, c->path, c->start_line, c->end_line))
            evidence_add(&out->cites, c->path, c->start_line, c->end_line, NULL, NULL, 0);
    }
    policy_usage_note(u, "answer: stopped by its reader after %zu bytes; kept what had arrived (%zu citation%s "
                      "verified)", s->text.len, out->cites.n, out->cites.n == 1 ? "" : "s");
    out->markdown = buf_take(&b);
    out->stopped = 1;
    evidence_free(&cites);
    free(md);
    free(part);
}
