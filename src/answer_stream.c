/*
 * answer_stream: the answer role's pieces forwarded to its reader, and what
 * a stopped answer keeps. See answer_stream.h.
 */
#include "answer_stream.h"
#include "policy_llm.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void answer_stream_set(struct answer_stream *s, policy_answer_sink fn, void *ud)
{
    s->fn = fn;
    s->ud = ud;
    buf_reset(&s->text);
    s->handed = 0;
    s->stopped = 0;
}

void answer_stream_free(struct answer_stream *s)
{
    if (s) buf_free(&s->text);
}

static int on_piece(void *ud, enum llm_delta_kind kind, const char *text, size_t len)
{
    struct answer_stream *s = ud;
    if (s->stopped) return 1;
    if (kind == LLM_DELTA_RESET) {
        buf_reset(&s->text);
        if (!s->handed) return 0;   /* nothing the reader must drop */
        s->handed = 0;
    } else {
        if (kind == LLM_DELTA_TEXT && len) buf_add(&s->text, text, len);
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
