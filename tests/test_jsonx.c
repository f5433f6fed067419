/* Tests for jsonx: finding the JSON object in model replies (plain, fenced,
 * prose-wrapped, nested, braces in strings, malformed, adversarial), skipping
 * thinking blocks and broken candidates, the repairs, offering candidates in
 * turn to a check, the score and list readers, and the field checks whose
 * messages go back to the model. */
#include "tap.h"
#include "jsonx.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The object found in text as a string, or "ERR: message". Caller frees. */
static char *found(const char *text)
{
    size_t s, n;
    char err[512];
    if (jsonx_find_object(text, strlen(text), &s, &n, err, sizeof err)) return xasprintf("ERR: %s", err);
    return xstrndup(text + s, n);
}

/* The first object of text, printed compactly after its repairs
 * ("OBJ | repairs"), or "ERR: message". Caller frees. */
struct seen {
    char *got;
    const char *want_key;   /* take only objects with this key; NULL: any */
    int offered;
};

static int take(void *ctx, const struct jsonx_candidate *c)
{
    struct seen *sn = ctx;
    sn->offered++;
    if (sn->want_key && !cJSON_GetObjectItem(c->obj, sn->want_key)) return 1;
    char *js = cJSON_PrintUnformatted(c->obj);
    sn->got = xasprintf("%s | %s", js, c->repairs);
    free(js);
    return 0;
}

static char *parsed(const char *text, const char *want_key, int *offered)
{
    struct seen sn = {NULL, want_key, 0};
    char err[512];
    int rc = jsonx_each_object(text, strlen(text), take, &sn, err, sizeof err);
    if (offered) *offered = sn.offered;
    if (rc == 0) return sn.got;
    if (rc == 1) return xasprintf("NONE TAKEN");
    return xasprintf("ERR: %s", err);
}

static void expect_parsed(const char *text, const char *want_key, const char *want, const char *what)
{
    char *got = parsed(text, want_key, NULL);
    is_str(got, want, "%s", what);
    free(got);
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
    struct jsonx_check c0;
    cJSON *j;
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
    expect("{\"a\": 1 \"b\": 2} but then {\"c\": 3}", "{\"c\": 3}", "an invalid first candidate is skipped for a valid one");
    expect("{\"a\": {\"b\": 1} oops} {\"c\": 2}", "{\"c\": 2}",
           "the search goes on after a broken candidate, not inside it");
    expect_err("{\"a\": {\"b\": 1} oops}", "not valid JSON near byte 15",
               "an object nested inside a broken one is not returned");
    expect_err("{\"x\": {}, oops}", "not valid JSON", "an empty object inside a broken one is not returned");
    expect("{\"x\": [{}], \"y\": oops} and {}", "{}", "the empty object after a broken one is found");
    expect("[{\"in\": \"array\"}]", "{\"in\": \"array\"}", "an object inside a top-level array");
    expect("{\"u\": \"\\u00e9t\\u00e9 \xc3\xa9\"}", "{\"u\": \"\\u00e9t\\u00e9 \xc3\xa9\"}", "unicode escapes and UTF-8");

    expect_err("I cannot help with that.", "the reply holds no JSON object", "no braces at all");
    expect_err("", "the reply holds no JSON object", "empty text");
    expect_err("{\"action\": FindClass}", "the JSON object starting at byte 0 is not valid JSON near byte 11",
               "a bare word value is not repaired");
    expect_err("{action: FindClass}", "the reply holds no JSON object", "unquoted keys are not repaired");
    expect_err("Sure: {\"a\": \"b", "the JSON object starting at byte 6 is never closed", "an unterminated string");
    expect_err("{\"a\": {\"b\": 1}", "the JSON object starting at byte 0 is never closed", "a cut-off object is not mistaken for its inner object");

    /* repairs */
    expect_parsed("{\"a\": 1,}", NULL, "{\"a\":1} | removed trailing commas", "a trailing comma in an object");
    expect_parsed("{\"a\": [1, 2,\n ],\n}", NULL, "{\"a\":[1,2]} | removed trailing commas", "trailing commas in an array and an object");
    expect_parsed("{\"s\": \"x,}\", \"t\": [\"y,]\",],}", NULL, "{\"s\":\"x,}\",\"t\":[\"y,]\"]} | removed trailing commas",
                  "commas inside strings are text");
    expect_parsed("{'action': 'FindClass', 'rationale': 'the router's match', 'q': 'say \"hi\"'}", NULL,
                  "{\"action\":\"FindClass\",\"rationale\":\"the router's match\",\"q\":\"say \\\"hi\\\"\"} | "
                  "read single-quoted strings as JSON strings",
                  "a Python dict, an apostrophe and double quotes inside");
    expect_parsed("{\xe2\x80\x9c" "action\xe2\x80\x9d: \xe2\x80\x9c" "FindClass\xe2\x80\x9d}", NULL,
                  "{\"action\":\"FindClass\"} | read typographic quotes as JSON quotes", "typographic quotes");
    expect_parsed("{\"a\": 1 // the count\n, \"b\": /* two */ 2}", NULL, "{\"a\":1,\"b\":2} | removed comments", "comments");
    expect_parsed("{\"u\": \"http://x/*y*/\", \"v\": 1,}", NULL, "{\"u\":\"http://x/*y*/\",\"v\":1} | removed trailing commas",
                  "comment markers inside strings are text");
    expect_parsed("{'done': True, 'x': None, 'y': False, \"Trueish\": 1,}", NULL,
                  "{\"done\":true,\"x\":null,\"y\":false,\"Trueish\":1} | removed trailing commas, read single-quoted "
                  "strings as JSON strings, read True/False/None as true/false/null",
                  "Python literals; several repairs named");
    expect_parsed("{'answer': 'line one\nline\ttwo', 'n': 1}", NULL,
                  "{\"answer\":\"line one\\nline\\ttwo\",\"n\":1} | read single-quoted strings as JSON strings",
                  "a raw line break inside a repaired string");
    expect_parsed("{\"a\": 1}", NULL, "{\"a\":1} | ", "valid JSON needs no repair");

    /* thinking */
    expect_parsed("<think>I could answer {\"action\": \"Finish\"} at once, but no.</think>\n{\"action\": \"FindClass\"}", NULL,
                  "{\"action\":\"FindClass\"} | ", "an object inside a thinking block is not the reply");
    expect_parsed("  <thinking>{\"value\": 10}</thinking>```json\n{\"value\": 70}\n```", NULL, "{\"value\":70} | ",
                  "a <thinking> block too");
    expect_parsed("<think>let me see {\"x\": oops} then", NULL, "ERR: the JSON object starting at byte 18 is not valid JSON near byte 24 ('oops} then'); use double-quoted keys and strings",
                  "an unclosed thinking block: its tag is skipped");
    expect_parsed("<think>let me see {\"x\": oops} then {\"value\": 5}", NULL, "{\"value\":5} | ",
                  "an unclosed thinking block: the first valid object after the tag");
    expect_parsed("<think>{\"value\": 10}</think>", NULL,
                  "ERR: the reply holds no JSON object after its thinking block; answer with a single JSON object",
                  "nothing after the thinking block: said so, the decoy not taken");
    expect_parsed("the question names {\"action\": \"Finish\"}\n</think>\n\n{\"action\": \"ViewCode\"}", NULL,
                  "{\"action\":\"ViewCode\"} | ", "a closing tag without an opening one ends the thinking");
    expect_parsed("{\"answer\": \"the reader strips </think> from replies\"}", NULL,
                  "{\"answer\":\"the reader strips </think> from replies\"} | ", "a closing tag inside a string is text");

    /* candidates offered in turn */
    int offered = 0;
    char *g = parsed("{\"value\": 8} and then {\"action\": \"FindClass\"}", "action", &offered);
    is_str(g, "{\"action\":\"FindClass\"} | ", "the first object the check takes");
    is_int(offered, 2, "both objects offered");
    free(g);
    g = parsed("{\"outer\": {\"action\": \"X\"}} {\"action\": \"Y\"}", "action", &offered);
    is_str(g, "{\"action\":\"Y\"} | ", "an object nested in a refused one is not offered");
    is_int(offered, 2, "two top-level objects offered");
    free(g);
    g = parsed("{\"a\": 1} {\"b\": 2}", "action", &offered);
    is_str(g, "NONE TAKEN", "objects offered and none taken: 1");
    free(g);

    char err[512];
    ok(jsonx_parse_object(NULL, err, sizeof err) == NULL && strstr(err, "empty"), "NULL text: %s", err);
    j = jsonx_parse_object("ok ```json\n{\"value\": 85}\n```", err, sizeof err);
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
    for (int i = 0; i < 100000; i++) buf_adds(&b, "{\"a\":1} ");
    g = parsed(b.data, "action", &offered);
    ok(!strcmp(g, "NONE TAKEN") && offered == 64, "100000 refused objects: at most 64 offered (%d)", offered);
    free(g);
    buf_reset(&b);
    for (int i = 0; i < 100000; i++) buf_adds(&b, "{\"a\": x} ");
    buf_adds(&b, "{\"late\": 1}");
    expect_err(b.data, "not valid JSON near byte 6", "100000 broken candidates: the search gives up after 64");
    buf_reset(&b);
    buf_adds(&b, "{'a': '");
    for (int i = 0; i < 100000; i++) buf_adds(&b, "' ,/*");
    buf_adds(&b, "}");
    g = parsed(b.data, NULL, &offered);
    ok(str_starts(g, "ERR: ") || offered == 1, "100000 quotes, commas and comment starts in one candidate: one pass");
    free(g);
    buf_reset(&b);
    buf_adds(&b, "{\"a\": [");
    for (int i = 0; i < 100000; i++) buf_adds(&b, ",\n");
    buf_adds(&b, "]}");
    expect_err(b.data, "not valid JSON", "100000 commas: only a trailing one is removed");
    buf_reset(&b);
    for (int i = 0; i < 50000; i++) buf_adds(&b, "<think>");
    buf_adds(&b, "{\"a\": 1}");
    g = parsed(b.data, NULL, NULL);
    is_str(g, "{\"a\":1} | ", "50000 opening tags");
    free(g);
    buf_free(&b);

    /* scores */
    struct {
        const char *json;
        double want;
        const char *how;
    } sc[] = {
        {"{\"v\": 85}", 85, ""},           {"{\"v\": 0}", 0, ""},
        {"{\"v\": 1}", 1, ""},             {"{\"v\": 1.0}", 1, ""},
        {"{\"v\": 100}", 100, ""},         {"{\"v\": 1.5}", 1.5, ""},
        {"{\"v\": 0.8}", 80, "v 0.8 read as 80"},
        {"{\"v\": 0.999}", 99.9, "v 0.999 read as 99.9"},
        {"{\"v\": 0.05}", 5, "v 0.05 read as 5"},
        {"{\"v\": \"0.7\"}", 70, "v 0.7 read as 70"},
        {"{\"v\": \"85\"}", 85, ""},
        {"{\"v\": \"85/100\"}", 85, "v \"85/100\" read as 85"},
        {"{\"v\": \"85%\"}", 85, "v \"85%\" read as 85"},
        {"{\"v\": \" 40 % \"}", 40, "v \" 40 % \" read as 40"},
        {"{\"v\": \"4/5\"}", 80, "v \"4/5\" read as 80"},
        {"{\"v\": \"1/1\"}", 100, "v \"1/1\" read as 100"},
        {"{\"v\": \"0/1\"}", 0, "v \"0/1\" read as 0"},
        {"{\"v\": \"0.8/1\"}", 80, "v \"0.8/1\" read as 80"},
    };
    for (size_t i = 0; i < ARRAY_LEN(sc); i++) {
        jsonx_check_init(&c0);
        j = cJSON_Parse(sc[i].json);
        double x = -1;
        char how[128];
        int rc = jsonx_score(&c0, j, "v", 1, &x, how, sizeof how);
        ok(rc == 1 && fabs(x - sc[i].want) < 1e-9 && !strcmp(how, sc[i].how), "score %s: %g (%s)", sc[i].json, x, how);
        cJSON_Delete(j);
        jsonx_check_free(&c0);
    }
    const char *badsc[] = {"{\"v\": 101}", "{\"v\": -0.5}", "{\"v\": \"101%\"}", "{\"v\": \"3/2\"}", "{\"v\": \"5/0\"}",
                           "{\"v\": \"high\"}", "{\"v\": \"85/\"}", "{\"v\": \"8/10 points\"}", "{\"v\": true}"};
    for (size_t i = 0; i < ARRAY_LEN(badsc); i++) {
        jsonx_check_init(&c0);
        j = cJSON_Parse(badsc[i]);
        double x = -1;
        char how[128] = "x";
        int rc = jsonx_score(&c0, j, "v", 1, &x, how, sizeof how);
        ok(rc == -1 && x == -1 && !how[0] && strstr(jsonx_check_message(&c0), "field \"v\" must be a number from 0 to 100, got "),
           "score refused: %s", badsc[i]);
        cJSON_Delete(j);
        jsonx_check_free(&c0);
    }
    jsonx_check_init(&c0);
    double x0 = -1;
    char how0[64];
    ok(jsonx_score(&c0, NULL, "v", 0, &x0, how0, sizeof how0) == 0 && c0.nerr == 0, "an optional absent score");
    jsonx_check_free(&c0);

    /* lists written as a string */
    struct {
        const char *in, *want;
    } ls[] = {
        {"a, b", "[\"a\",\"b\"]"},
        {"app.py:1-9", "[\"app.py:1-9\"]"},
        {"- first, with a comma\n- second\n\n", "[\"first, with a comma\",\"second\"]"},
        {"x; y, z", "[\"x\",\"y, z\"]"},
        {"none", "[]"},
        {"  ", "[]"},
        {"N/A", "[]"},
        {"a,,b,", "[\"a\",\"b\"]"},
    };
    for (size_t i = 0; i < ARRAY_LEN(ls); i++) {
        cJSON *arr = jsonx_split_list(ls[i].in);
        char *js = cJSON_PrintUnformatted(arr);
        is_str(js, ls[i].want, "list from a string (%zu)", i);
        free(js);
        cJSON_Delete(arr);
    }

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
