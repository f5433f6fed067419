/*
 * jsonx: structured output from model replies. Models wrap the JSON they were
 * asked for in prose, ```json fences or apologies; jsonx_find_object finds the
 * first complete JSON object anyway (braces inside strings and nested objects
 * handled, work bounded on adversarial input). The check helpers then read
 * fields with their types and ranges and collect one message per problem,
 * naming the field, in words meant to be sent back to the model when the
 * caller asks again ("missing required field \"action\"; field \"value\" must
 * be a whole number from 0 to 100, got \"high\" (a string)").
 */
#ifndef DRQA_JSONX_H
#define DRQA_JSONX_H

#include "util.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* Locates the first complete, valid JSON object in text[0, n). Returns 0 with
 * its byte offset and length, or -1 with err saying what was wrong (nothing
 * found, never closed, not valid JSON near byte K, nested too deeply). */
int jsonx_find_object(const char *text, size_t n, size_t *start, size_t *len, char *err, size_t errlen);

/* jsonx_find_object plus parsing: the object (caller cJSON_Deletes) or NULL with err. */
cJSON *jsonx_parse_object(const char *text, char *err, size_t errlen);

/* Collects validation problems. prefix (set with jsonx_check_prefix) is put
 * before field names, e.g. "actions[1]" gives "actions[1].name". */
struct jsonx_check {
    struct buf msg;        /* problems joined by "; " */
    int nerr;
    char prefix[128];
};

void jsonx_check_init(struct jsonx_check *c);
void jsonx_check_free(struct jsonx_check *c);
void jsonx_check_prefix(struct jsonx_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jsonx_check_fail(struct jsonx_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *jsonx_check_message(const struct jsonx_check *c);   /* "" when no problems */

/*
 * Field readers. Each looks up field in obj (which may be NULL, then every
 * field is missing). A missing field is a problem only when required. A field
 * of the wrong type or out of range is always a problem. Numbers given as
 * numeric strings ("85") are accepted, because models often quote them.
 */
/* The string, or NULL. A required string must not be empty. */
const char *jsonx_string(struct jsonx_check *c, const cJSON *obj, const char *field, int required);
/* 1 when *out was set, 0 when absent (optional), -1 on a problem. */
int jsonx_int(struct jsonx_check *c, const cJSON *obj, const char *field, long lo, long hi, int required, long *out);
int jsonx_number(struct jsonx_check *c, const cJSON *obj, const char *field, double lo, double hi, int required,
                 double *out);
int jsonx_bool(struct jsonx_check *c, const cJSON *obj, const char *field, int required, int *out);
/* The array or object item, or NULL. */
const cJSON *jsonx_array(struct jsonx_check *c, const cJSON *obj, const char *field, int required);
const cJSON *jsonx_object(struct jsonx_check *c, const cJSON *obj, const char *field, int required);
/* The index of the string value in allowed[0, n), or -1 (absent or a problem). */
int jsonx_enum(struct jsonx_check *c, const cJSON *obj, const char *field, const char *const *allowed, size_t n,
               int required);

#endif
