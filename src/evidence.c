/*
 * evidence: the span list shared by actions, curation, the search tree,
 * answers and transcripts. See evidence.h.
 */
#include "evidence.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct evidence_span *evidence_add(struct evidence *ev, const char *path, int start_line, int end_line,
                                   const char *text, const char *label, double score)
{
    ARRAY_GROW(ev->v, ev->n, ev->cap, 8);
    struct evidence_span *s = &ev->v[ev->n++];
    s->path = xstrdup(path);
    s->start_line = start_line;
    s->end_line = end_line;
    s->text = text ? xstrdup(text) : NULL;
    s->label = label ? xstrdup(label) : NULL;
    s->score = score;
    s->elided = 0;
    return s;
}

char *evidence_span_lines(const struct evidence_span *sp, int start, int end)
{
    if (!sp->text) return NULL;
    if (sp->elided) return xstrdup(sp->text);
    char *t = text_lines(sp->text, sp->start_line, start, end);
    return t ? t : xstrdup("");
}

char *evidence_label_within(const struct evidence_span *sp, int start, int end)
{
    if (!sp->label) return NULL;
    if (sp->start_line == start && sp->end_line == end) return xstrdup(sp->label);
    /* a range is the label's end: "lines A-B", "module lines A-B" */
    const char *l = sp->label, *r = NULL;
    for (const char *p = l; (p = strstr(p, "lines ")); p++)
        if (p == l || p[-1] == ' ') r = p;
    int a, b, used = 0;
    if (!r || sscanf(r, "lines %d-%d%n", &a, &b, &used) != 2 || r[used]) return xstrdup(sp->label);
    return xasprintf("%.*slines %d-%d", (int)(r - l), l, start, end);
}

void evidence_free(struct evidence *ev)
{
    if (!ev) return;
    for (size_t i = 0; i < ev->n; i++) {
        free(ev->v[i].path);
        free(ev->v[i].text);
        free(ev->v[i].label);
    }
    free(ev->v);
    ev->v = NULL;
    ev->n = ev->cap = 0;
}

void evidence_copy(struct evidence *dst, const struct evidence *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const struct evidence_span *s = &src->v[i];
        evidence_add(dst, s->path, s->start_line, s->end_line, s->text, s->label, s->score)->elided = s->elided;
    }
}

int evidence_covers(const struct evidence *ev, const char *path, int start_line, int end_line)
{
    for (size_t i = 0; i < ev->n; i++) {
        const struct evidence_span *s = &ev->v[i];
        if (strcmp(s->path, path) == 0 && s->start_line <= start_line && end_line <= s->end_line)
            return 1;
    }
    return 0;
}

cJSON *evidence_to_json(const struct evidence *ev)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < ev->n; i++) {
        const struct evidence_span *s = &ev->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", s->path);
        cJSON_AddNumberToObject(o, "start_line", s->start_line);
        cJSON_AddNumberToObject(o, "end_line", s->end_line);
        cJSON_AddStringToObject(o, "text", s->text ? s->text : "");
        if (s->label) cJSON_AddStringToObject(o, "label", s->label);
        cJSON_AddNumberToObject(o, "score", s->score);
        if (s->elided) cJSON_AddBoolToObject(o, "elided", 1);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

int evidence_from_json(const cJSON *arr, struct evidence *ev, char *err, size_t errlen)
{
    if (!cJSON_IsArray(arr)) {
        snprintf(err, errlen, "evidence must be a JSON array");
        return -1;
    }
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
        const cJSON *sl = cJSON_GetObjectItemCaseSensitive(o, "start_line");
        const cJSON *el = cJSON_GetObjectItemCaseSensitive(o, "end_line");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text");
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(o, "label");
        const cJSON *score = cJSON_GetObjectItemCaseSensitive(o, "score");
        if (!cJSON_IsString(path) || !cJSON_IsNumber(sl) || !cJSON_IsNumber(el) ||
            sl->valueint < 1 || el->valueint < sl->valueint) {
            snprintf(err, errlen, "evidence element %d needs a string path and 1 <= start_line <= end_line", i);
            return -1;
        }
        struct evidence_span *s = evidence_add(ev, path->valuestring, sl->valueint, el->valueint,
                                               cJSON_IsString(text) ? text->valuestring : NULL,
                                               cJSON_IsString(label) ? label->valuestring : NULL,
                                               cJSON_IsNumber(score) ? score->valuedouble : 0);
        s->elided = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "elided"));
        i++;
    }
    return 0;
}
