/* Tests for jsonx: finding the JSON object in model replies (plain, fenced,
 * prose-wrapped, nested, braces in strings, malformed, adversarial) and the
 * field checks whose messages go back to the model. */
#include "tap.h"
#include "jsonx.h"
#include "util.h"

#include <stdlib.h>

/* The object found in text as a string, or "ERR: message". Caller frees. */
static char *found(const char *text)
{
    size_t s, n;
    char err[512];
    if (jsonx_find_object(text, strlen(text), &s, &n, err, sizeof err)) return xasprintf("ERR: %s", err);
    return xstrndup(text + s, n);
}

static void expect(const char *text, const char *want, const char *what)
{
    char *got = found(text);
    is_str(got, want, "%s", what);
    free(got);
}

static void expect_err(const char *text, const char *want_sub, const char *what)
{
    char *got = found(text);
    ok(str_starts(got, "ERR: ") && strstr(got, want_sub), "%s: %.300s", what, got);
    free(got);
}

int main(void)
{
    expect("{\"a\":1}", "{\"a\":1}", "a bare object");
    expect("{}", "{}", "the empty object");
    expect("  \n{ \"a\" : [1, 2, {\"b\": null}] }\n", "{ \"a\" : [1, 2, {\"b\": null}] }", "white space around, nested inside");
    expect("Here is the plan:\n```json\n{\"action\": \"FindClass\", \"args\": {\"name\": \"Flask\"}}\n```\nDone.",
           "{\"action\": \"FindClass\", \"args\": {\"name\": \"Flask\"}}", "a ```json fence inside prose");
    expect("```\n{\"x\": true}\n```", "{\"x\": true}", "a bare ``` fence");
    expect("Use {curly} braces, e.g. { x }. Answer: {\"x\": \"}\"}", "{\"x\": \"}\"}",
           "prose braces are skipped; a brace inside a string does not close");
    expect("{\"code\": \"def f(): return {1: 2}\", \"n\": 2} trailing words {\"later\": 1}",
           "{\"code\": \"def f(): return {1: 2}\", \"n\": 2}", "the first object wins; braces in strings");
    expect("{\"s\": \"a \\\"quoted\\\" } brace\", \"n\": 1}", "{\"s\": \"a \\\"quoted\\\" } brace\", \"n\": 1}",
           "escaped quotes inside strings");
    expect("{\"a\": 1,} but then {\"b\": 2}", "{\"b\": 2}", "an invalid first candidate is skipped for a valid one");
    expect("[{\"in\": \"array\"}]", "{\"in\": \"array\"}", "an object inside a top-level array");
    expect("{\"u\": \"\\u00e9t\\u00e9 \xc3\xa9\"}", "{\"u\": \"\\u00e9t\\u00e9 \xc3\xa9\"}", "unicode escapes and UTF-8");

    expect_err("I cannot help with that.", "the reply holds no JSON object", "no braces at all");
    expect_err("", "the reply holds no JSON object", "empty text");
    expect_err("{'action': 'FindClass'}", "the JSON object starting at byte 0 is not valid JSON near byte 2", "a Python dict");
    expect_err("{\"a\": 1,}", "the JSON object starting at byte 0 is not valid JSON near byte", "a trailing comma");
    expect_err("Sure: {\"a\": \"b", "the JSON object starting at byte 6 is never closed", "an unterminated string");
    expect_err("{\"a\": {\"b\": 1}", "the JSON object starting at byte 0 is never closed", "a cut-off object is not mistaken for its inner object");
    expect_err("{\"a\": 1 // comment\n}", "not valid JSON", "comments are not JSON");

    char err[512];
    ok(jsonx_parse_object(NULL, err, sizeof err) == NULL && strstr(err, "empty"), "NULL text: %s", err);
    cJSON *j = jsonx_parse_object("ok ```json\n{\"value\": 85}\n```", err, sizeof err);
    ok(cJSON_IsObject(j) && cJSON_GetObjectItem(j, "value")->valueint == 85, "jsonx_parse_object parses the object");
    cJSON_Delete(j);

    /* adversarial */
    struct buf b = BUF_INIT;
    for (int i = 0; i < 5000; i++) buf_adds(&b, "{\"a\":");
    buf_adds(&b, "1");
    for (int i = 0; i < 5000; i++) buf_adds(&b, "}");
    expect_err(b.data, "nested more than 1000 levels deep", "5000 levels of nesting");
    buf_reset(&b);
    for (int i = 0; i < 900; i++) buf_adds(&b, "{\"a\":");
    buf_adds(&b, "1");
    for (int i = 0; i < 900; i++) buf_adds(&b, "}");
    char *got = found(b.data);
    is_int(strlen(got), b.len, "900 levels of nesting are still fine");
    free(got);
    buf_reset(&b);
    buf_adds(&b, "prefix {\"s\": \"");
    for (int i = 0; i < (2 << 20); i++) buf_addc(&b, 'x');
    buf_adds(&b, "\"} suffix");
    got = found(b.data);
    is_int(strlen(got), b.len - 14, "a 2 MiB string value");
    free(got);
    buf_reset(&b);
    for (int i = 0; i < 200000; i++) buf_adds(&b, "{\"");
    expect_err(b.data, "nested more than 1000 levels deep", "200000 unclosed starts give up with an error");
    buf_reset(&b);
    for (int i = 0; i < 100000; i++) buf_adds(&b, "{{{{ x }}}} ");
    buf_adds(&b, "{\"late\": 1}");
    expect(b.data, "{\"late\": 1}", "many prose braces before the object");
    buf_reset(&b);
    buf_adds(&b, "{\"a\": \"");
    for (int i = 0; i < 100000; i++) buf_adds(&b, "\\\\");
    expect_err(b.data, "never closed", "an unterminated string of escapes");
    buf_free(&b);
    const char bin[] = "{\"a\":\x01\x02}";
    expect_err(bin, "not valid JSON", "control bytes");

    /* field checks */
    struct jsonx_check c;
    jsonx_check_init(&c);
    j = cJSON_Parse("{\"action\":\"FindClass\",\"value\":\"85\",\"score\":101,\"flag\":\"yes\",\"items\":{},"
                    "\"name\":\"\",\"ratio\":0.5,\"n\":3.5,\"ok\":true,\"args\":{\"k\":1},\"list\":[1],\"nul\":null}");
    is_str(jsonx_string(&c, j, "action", 1), "FindClass", "a required string");
    long v = -1;
    is_int(jsonx_int(&c, j, "value", 0, 100, 1, &v), 1, "a quoted number is accepted");
    is_int(v, 85, "value 85");
    double d = -1;
    is_int(jsonx_number(&c, j, "ratio", 0, 1, 1, &d), 1, "a number in range");
    ok(d == 0.5, "ratio 0.5");
    int bv = 0;
    is_int(jsonx_bool(&c, j, "ok", 1, &bv), 1, "a boolean");
    is_int(bv, 1, "true");
    ok(jsonx_object(&c, j, "args", 1) != NULL, "an object field");
    ok(jsonx_array(&c, j, "list", 1) != NULL, "an array field");
    is_int(jsonx_int(&c, j, "missing_opt", 0, 1, 0, &v), 0, "an optional absent field is no problem");
    ok(jsonx_string(&c, j, "nul", 0) == NULL, "null counts as absent");
    static const char *const acts[] = {"FindClass", "FindFunction", "Finish"};
    is_int(jsonx_enum(&c, j, "action", acts, 3, 1), 0, "an enum value");
    is_str(jsonx_check_message(&c), "", "no problems so far");
    is_int(c.nerr, 0, "no errors counted");

    is_int(jsonx_int(&c, j, "score", 0, 100, 1, &v), -1, "out of range");
    is_int(jsonx_int(&c, j, "n", 0, 100, 1, &v), -1, "not whole");
    is_int(jsonx_bool(&c, j, "flag", 1, &bv), -1, "not a boolean");
    ok(jsonx_array(&c, j, "items", 1) == NULL, "not an array");
    ok(jsonx_string(&c, j, "name", 1) == NULL, "an empty required string");
    ok(jsonx_string(&c, j, "answer", 1) == NULL, "a missing required string");
    jsonx_check_prefix(&c, "actions[%d]", 1);
    static const char *const two[] = {"A", "B"};
    is_int(jsonx_enum(&c, j, "action", two, 2, 1), -1, "not one of the allowed values");
    is_str(jsonx_check_message(&c),
           "field \"score\" must be a whole number from 0 to 100, got 101 (a number); "
           "field \"n\" must be a whole number from 0 to 100, got 3.5 (a number); "
           "field \"flag\" must be true or false, got \"yes\" (a string); "
           "field \"items\" must be an array, got an object; "
           "field \"name\" must not be empty; "
           "missing required field \"answer\"; "
           "field \"actions[1].action\" must be one of A, B; got \"FindClass\" (a string)",
           "every problem is named, in order");
    is_int(c.nerr, 7, "seven problems");
    jsonx_check_free(&c);
    jsonx_check_init(&c);
    ok(jsonx_string(&c, NULL, "x", 1) == NULL, "a NULL object: every field missing");
    is_str(jsonx_check_message(&c), "missing required field \"x\"", "and said so");
    jsonx_check_free(&c);
    jsonx_check_free(NULL);
    cJSON_Delete(j);
    return done_testing();
}
