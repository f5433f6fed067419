/*
 * recheck: span hashes and the verdicts of a saved answer's citations (see
 * recheck.h). Everything is read from the index, which the caller has
 * brought up to date: the same text the answer was drawn from.
 */
#include "recheck.h"
#include "action.h"
#include "index.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void recheck_hash_text(const char *text, size_t len, char out[RECHECK_HASH_LEN])
{
    char hex[17];
    hash64_hex(hash64(text, len), hex);
    snprintf(out, RECHECK_HASH_LEN, "fnv1a64:%s", hex);
}

/* Byte range of lines a..b of f, without the last line's newline. */
static void line_range(const struct action_file *f, int a, int b, size_t *off, size_t *len)
{
    size_t s = f->line_off[a - 1], e = f->line_off[b];
    if (e > s && f->text[e - 1] == '\n') e--;
    *off = s;
    *len = e - s;
}

int recheck_span_hash(struct action_ctx *ctx, const char *path, int start, int end, char out[RECHECK_HASH_LEN])
{
    struct action_file f;
    int rc = action_file_load(ctx, path, -1, &f);
    if (rc == 1 && (start < 1 || end < start || end > f.nlines)) rc = 0;
    if (rc == 1) {
        size_t off, len;
        line_range(&f, start, end, &off, &len);
        recheck_hash_text(f.text + off, len, out);
    }
    action_file_free(&f);
    return rc;
}

const char *recheck_verdict_name(enum recheck_verdict v)
{
    switch (v) {
    case RECHECK_UNCHANGED: return "unchanged";
    case RECHECK_MOVED: return "moved";
    case RECHECK_CHANGED: return "changed";
    case RECHECK_GONE: return "gone";
    case RECHECK_UNKNOWN: break;
    }
    return "unknown";
}

/* The verdict of one citation whose text hashes to want (nlines lines). */
static int judge(struct action_ctx *ctx, struct recheck_item *it, const char *want, char *err, size_t errlen)
{
    struct action_file f;
    int rc = action_file_load(ctx, it->path, -1, &f);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read '%s' from the index: %s", it->path, ctx->failed ? ctx->failed : "?");
        action_file_free(&f);
        return -1;
    }
    if (rc == 0) {
        it->verdict = RECHECK_GONE;
        action_file_free(&f);
        return 0;
    }
    int n = it->end_line - it->start_line + 1;
    char h[RECHECK_HASH_LEN];
    size_t off, len;
    if (it->start_line >= 1 && n >= 1 && it->end_line <= f.nlines) {
        line_range(&f, it->start_line, it->end_line, &off, &len);
        recheck_hash_text(f.text + off, len, h);
        if (!strcmp(h, want)) {
            it->verdict = RECHECK_UNCHANGED;
            action_file_free(&f);
            return 0;
        }
    }
    /* the same lines elsewhere: the place nearest the old one */
    int best = 0;
    for (int s = 1; n >= 1 && s + n - 1 <= f.nlines; s++) {
        if (best && s > it->start_line && s - it->start_line >= abs(best - it->start_line)) break;
        line_range(&f, s, s + n - 1, &off, &len);
        recheck_hash_text(f.text + off, len, h);
        if (!strcmp(h, want) && (!best || abs(s - it->start_line) < abs(best - it->start_line))) best = s;
    }
    if (best) {
        it->verdict = RECHECK_MOVED;
        it->new_start = best;
        it->new_end = best + n - 1;
    } else {
        it->verdict = RECHECK_CHANGED;
    }
    action_file_free(&f);
    return 0;
}

static const cJSON *field(const cJSON *o, const char *name) { return cJSON_GetObjectItemCaseSensitive(o, name); }

int recheck_answer(struct action_ctx *ctx, const cJSON *saved, struct recheck_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    const cJSON *cites = field(saved, "citations");
    const cJSON *answer = field(saved, "answer");
    if (!cJSON_IsArray(cites) && cJSON_IsObject(answer)) cites = field(answer, "citations");   /* a transcript */
    if (!cJSON_IsArray(cites)) {
        snprintf(err, errlen, "the saved answer has no \"citations\" list; give a --batch line, an --ask --json "
                              "answer, an ask result or a transcript");
        return -1;
    }
    const cJSON *id = field(saved, "id"), *q = field(saved, "question");
    if (id && !cJSON_IsNull(id)) rep->id = cJSON_PrintUnformatted(id);
    if (cJSON_IsString(q)) rep->question = xstrdup(q->valuestring);
    const cJSON *commit = field(saved, "commit");
    if (!cJSON_IsString(commit)) commit = field(field(saved, "config"), "commit");   /* a transcript's */
    if (cJSON_IsString(commit)) snprintf(rep->saved_commit, sizeof rep->saved_commit, "%s", commit->valuestring);
    index_provenance(ctx->db, rep->commit, &rep->dirty);
    /* a --batch line keeps each cited span's text in "evidence", in order */
    const cJSON *evidence = field(saved, "evidence");
    int n = cJSON_GetArraySize(cites);
    rep->v = xcalloc((size_t)n + 1, sizeof *rep->v);
    for (int i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cites, i);
        const cJSON *p = field(c, "path"), *a = field(c, "start_line"), *b = field(c, "end_line");
        if (!cJSON_IsString(p) || !cJSON_IsNumber(a) || !cJSON_IsNumber(b)) {
            snprintf(err, errlen, "citation %d of the saved answer needs \"path\", \"start_line\" and \"end_line\"",
                     i + 1);
            recheck_report_free(rep);
            return -1;
        }
        struct recheck_item *it = &rep->v[rep->n++];
        it->path = xstrdup(p->valuestring);
        it->start_line = a->valueint;
        it->end_line = b->valueint;
        char want[RECHECK_HASH_LEN] = "";
        const cJSON *h = field(c, "text_hash");
        const cJSON *text = field(c, "text");
        const cJSON *ev = cJSON_GetArrayItem(evidence, i);
        if (!cJSON_IsString(text) && cJSON_IsObject(ev) && cJSON_IsString(field(ev, "path")) &&
            !strcmp(field(ev, "path")->valuestring, it->path))
            text = field(ev, "text");
        if (cJSON_IsString(h)) snprintf(want, sizeof want, "%s", h->valuestring);
        else if (cJSON_IsString(text) && !cJSON_IsTrue(field(c, "elided")))
            recheck_hash_text(text->valuestring, strlen(text->valuestring), want);
        if (!want[0]) {
            it->verdict = RECHECK_UNKNOWN;
            continue;
        }
        if (judge(ctx, it, want, err, errlen)) {
            recheck_report_free(rep);
            return -1;
        }
        if (it->verdict == RECHECK_CHANGED || it->verdict == RECHECK_GONE) rep->stale = 1;
    }
    return 0;
}

cJSON *recheck_report_json(const struct recheck_report *rep)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *id = rep->id ? cJSON_Parse(rep->id) : NULL;
    cJSON_AddItemToObject(o, "id", id ? id : cJSON_CreateNull());
    if (rep->question) cJSON_AddStringToObject(o, "question", rep->question);
    else cJSON_AddNullToObject(o, "question");
    if (rep->saved_commit[0]) cJSON_AddStringToObject(o, "saved_commit", rep->saved_commit);
    else cJSON_AddNullToObject(o, "saved_commit");
    if (rep->commit[0]) cJSON_AddStringToObject(o, "commit", rep->commit);
    else cJSON_AddNullToObject(o, "commit");
    cJSON_AddBoolToObject(o, "stale", rep->stale);
    cJSON *arr = cJSON_AddArrayToObject(o, "citations");
    for (size_t i = 0; i < rep->n; i++) {
        const struct recheck_item *it = &rep->v[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "path", it->path);
        cJSON_AddNumberToObject(x, "start_line", it->start_line);
        cJSON_AddNumberToObject(x, "end_line", it->end_line);
        cJSON_AddStringToObject(x, "verdict", recheck_verdict_name(it->verdict));
        if (it->verdict == RECHECK_MOVED) {
            cJSON_AddNumberToObject(x, "new_start_line", it->new_start);
            cJSON_AddNumberToObject(x, "new_end_line", it->new_end);
        }
        cJSON_AddItemToArray(arr, x);
    }
    return o;
}

char *recheck_report_text(const struct recheck_report *rep)
{
    struct buf b = BUF_INIT;
    if (rep->question) buf_printf(&b, "question: %s\n", rep->question);
    if (rep->saved_commit[0] || rep->commit[0])
        buf_printf(&b, "commit: saved %.12s, now %.12s%s\n", rep->saved_commit[0] ? rep->saved_commit : "(none)",
                   rep->commit[0] ? rep->commit : "(none)", rep->dirty ? " (with changes)" : "");
    for (size_t i = 0; i < rep->n; i++) {
        const struct recheck_item *it = &rep->v[i];
        buf_printf(&b, "%s:%d-%d  %s", it->path, it->start_line, it->end_line, recheck_verdict_name(it->verdict));
        if (it->verdict == RECHECK_MOVED) buf_printf(&b, " to %d-%d", it->new_start, it->new_end);
        buf_addc(&b, '\n');
    }
    buf_adds(&b, rep->stale ? "stale: a citation changed or is gone; ask again\n"
                            : "the citations hold\n");
    return buf_take(&b);
}

void recheck_report_free(struct recheck_report *rep)
{
    if (!rep) return;
    for (size_t i = 0; i < rep->n; i++) free(rep->v[i].path);
    free(rep->v);
    free(rep->id);
    free(rep->question);
    memset(rep, 0, sizeof *rep);
}
