/*
 * jsonx: structured output from model replies. Models wrap the JSON they were
 * asked for in prose, ```json fences, apologies or a thinking block, and slip
 * on its syntax; jsonx_each_object offers every complete JSON object in a
 * reply, in order, to the caller's check, which takes the first one of the
 * shape it needs (braces inside strings and nested objects handled, work
 * bounded on adversarial input). The check helpers then read fields with
 * their types and ranges and collect one message per problem, naming the
 * field, in words meant to be sent back to the model when the caller asks
 * again ("missing required field \"action\"; field \"value\" must be a whole
 * number from 0 to 100, got \"high\" (a string)").
 *
 * Thinking: a reply that starts with <think>...</think> (or <thinking>...
 * </thinking>) is searched after the block only, so an object the model
 * wrote while thinking is never taken as its answer; after an opening tag
 * never closed, the search starts after the tag; a closing tag with no
 * opening one (the chat template opened the block) ends the thinking too,
 * unless no JSON object follows it (then the tag was inside a string and the
 * whole reply is searched).
 *
 * Candidates: an object inside another one is part of it and never offered
 * by itself; after a candidate that is not valid JSON even once repaired, the
 * search goes on after its closing brace (what is inside a broken object is
 * not a reply). An object never closed ends the search: the rest of the text
 * is inside it (a reply cut off at the token limit).
 *
 * Repairs, tried only when cJSON refuses a candidate, each one unambiguous
 * because what it rewrites can never appear outside a string in JSON:
 *   - a trailing comma before '}' or ']' is removed: {"a": 1,} [1, 2,]
 *   - a string in single quotes or typographic quotes (U+2018/2019/201C/201D)
 *     becomes a JSON string; it ends at a closing quote followed by ':', ',',
 *     '}' or ']', so an apostrophe inside ('the router's') stays text
 *   - comments (// to the end of the line, and slash-star blocks) are removed
 *   - the Python literals True, False, None become true, false, null
 * (A raw line break or tab inside a string needs no repair: cJSON reads it.)
 * Unquoted keys and bare-word values are not repaired: which words were meant
 * as strings is a guess.
 */
#ifndef DRQA_JSONX_H
#define DRQA_JSONX_H

#include "util.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* One object found in a reply: its parse (borrowed for the call), its byte
 * span in the text, and the repairs made to parse it ("" when none;
 * otherwise e.g. "removed trailing commas, read single-quoted strings as
 * JSON strings"). */
struct jsonx_candidate {
    const cJSON *obj;
    size_t start, len;
    const char *repairs;
};

/* Returns 0 to take the candidate (the search stops), anything else to go on. */
typedef int (*jsonx_object_fn)(void *ctx, const struct jsonx_candidate *c);

/* Offers the objects of text[0, n) to fn in order, at most 64. Returns 0
 * when fn took one; 1 when objects were offered and none was taken (the
 * caller knows why); -1 when the text holds no usable object, with err saying
 * what was wrong (nothing found, never closed, not valid JSON near byte K,
 * nested too deeply). text NULL is an empty reply. */
int jsonx_each_object(const char *text, size_t n, jsonx_object_fn fn, void *ctx, char *err, size_t errlen);

/* The first object: its byte offset and length (the text there may need the
 * repairs above to parse), or -1 with err. */
int jsonx_find_object(const char *text, size_t n, size_t *start, size_t *len, char *err, size_t errlen);

/* The first object, parsed (caller cJSON_Deletes), or NULL with err. */
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

/*
 * A score from 0 to 100 as models write it. 1 with *out, 0 when absent
 * (optional), -1 on a problem. When the value was not a plain number from 0
 * to 100, how says how it was read ("value 0.8 read as 80"), else how is "".
 *   - a number (or numeric string) x with 0 < x < 1 is a fraction: x * 100
 *   - any other number from 0 to 100 is taken as it is; 0 and 1 (also written
 *     1.0: JSON does not tell them apart) are 0 and 1 of 100, because a whole
 *     number is what was asked for; a model meaning "all" as 1 must say
 *     "1/1", "100%" or 100
 *   - "X%" with X from 0 to 100 is X
 *   - "X/Y" with Y > 0 and 0 <= X <= Y is X / Y * 100 ("85/100" 85, "4/5" 80,
 *     "0.8/1" 80, "1/1" 100)
 * Anything else, or outside 0-100, is a problem.
 */
int jsonx_score(struct jsonx_check *c, const cJSON *obj, const char *field, int required, double *out, char *how,
                size_t howlen);

/* A list written as one string, as an array of strings (caller deletes):
 * split at line breaks when there are any, else at ';' when there are any,
 * else at ','; items trimmed, a leading "- " or "* " bullet dropped, empty
 * items and items "none", "n/a" or "-" left out (so "none" is the empty list). */
cJSON *jsonx_split_list(const char *s);

#endif
