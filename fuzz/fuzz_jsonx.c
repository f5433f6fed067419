/*
 * fuzz_jsonx: model replies are untrusted text. This target feeds arbitrary
 * bytes to jsonx_find_object / jsonx_parse_object / jsonx_each_object (prose,
 * fences, thinking tags, unbalanced braces, strings that never close, the
 * slips the repairs rewrite) and, when an object comes back, runs every field
 * reader over it the way the roles' reply checkers do, so that wrong types,
 * huge numbers and odd keys only ever produce a message. It also checks what
 * the header promises: every span offered lies inside the input, starts with
 * '{', comes after the previous one, and at most 64 are offered.
 */
#include "jsonx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"FindClass", "FindFunction", "ViewCode", "Finish"};

static void read_fields(const cJSON *obj)
{
    struct jsonx_check c;
    jsonx_check_init(&c);
    long l;
    double d;
    int b;
    jsonx_string(&c, obj, "action", 1);
    jsonx_string(&c, obj, "feedback", 0);
    jsonx_int(&c, obj, "value", 0, 100, 1, &l);
    jsonx_number(&c, obj, "score", -1.0, 1.0, 0, &d);
    jsonx_bool(&c, obj, "done", 0, &b);
    jsonx_enum(&c, obj, "name", kinds, sizeof kinds / sizeof *kinds, 0);
    jsonx_object(&c, obj, "arguments", 0);
    const cJSON *arr = jsonx_array(&c, obj, "actions", 0);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        jsonx_check_prefix(&c, "actions[%d]", i++);
        jsonx_enum(&c, it, "name", kinds, sizeof kinds / sizeof *kinds, 1);
        jsonx_object(&c, it, "arguments", 1);
        jsonx_string(&c, it, "reason", 0);
        if (i > 64) break;
    }
    jsonx_check_prefix(&c, "%s", "");
    char how[64];
    if (jsonx_score(&c, obj, "value", 0, &d, how, sizeof how) == 1 && !(d >= 0 && d <= 100)) abort();
    const cJSON *list = cJSON_GetObjectItem(obj, "candidates");
    if (cJSON_IsString(list)) {
        cJSON *arr = jsonx_split_list(list->valuestring);
        if (!cJSON_IsArray(arr)) abort();
        cJSON_Delete(arr);
    }
    const char *m = jsonx_check_message(&c);
    if (!m || (c.nerr > 0 && !*m)) abort();   /* a problem always has words */
    jsonx_check_free(&c);
}

struct order {
    const char *text;
    size_t size, next;
    int offered;
};

/* Refuses every object, so that all candidates are offered. */
static int refuse(void *ctx, const struct jsonx_candidate *c)
{
    struct order *o = ctx;
    if (!cJSON_IsObject(c->obj) || !c->repairs || c->len < 2 || c->start < o->next || c->start > o->size ||
        c->len > o->size - c->start || o->text[c->start] != '{' || o->text[c->start + c->len - 1] != '}')
        abort();
    o->next = c->start + c->len;
    if (++o->offered > 64) abort();
    read_fields(c->obj);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    size_t start = 0, len = 0;
    const char *text = (const char *)data;
    if (jsonx_find_object(text, size, &start, &len, err, sizeof err) == 0) {
        if (len < 2 || start > size || len > size - start || text[start] != '{') abort();
    } else if (!err[0]) {
        abort();   /* a failure always says why */
    }
    struct order o = {text, size, 0, 0};
    int rc = jsonx_each_object(text, size, refuse, &o, err, sizeof err);
    if (rc == 0 || (rc == 1) != (o.offered > 0) || (rc < 0 && !err[0])) abort();
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    cJSON *obj = jsonx_parse_object(s, err, sizeof err);
    if (obj) {
        read_fields(obj);
        cJSON_Delete(obj);
    }
    read_fields(NULL);
    free(s);
    return 0;
}
