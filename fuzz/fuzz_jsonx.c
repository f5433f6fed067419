/*
 * fuzz_jsonx: model replies are untrusted text. This target feeds arbitrary
 * bytes to jsonx_find_object / jsonx_parse_object (prose, fences, unbalanced
 * braces, strings that never close) and, when an object comes back, runs every
 * field reader over it the way the roles' reply checkers do, so that wrong
 * types, huge numbers and odd keys only ever produce a message. It also checks
 * what the header promises: the span found lies inside the input and starts
 * with '{'.
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
    const char *m = jsonx_check_message(&c);
    if (!m || (c.nerr > 0 && !*m)) abort();   /* a problem always has words */
    jsonx_check_free(&c);
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
