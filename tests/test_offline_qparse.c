/*
 * test_offline_qparse: question analysis for the offline policy: question
 * types, literal identifiers and their kinds, quoted code, file names,
 * content words, and the weighted term match (including two stems of one
 * word).
 */
#include "qparse.h"
#include "tap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void parse(const char *q, struct qparse *out)
{
    char err[256];
    ok(qparse_question(q, out, err, sizeof err) == 0, "parses: %s", q);
}

static int has_word(const struct qparse *q, const char *w)
{
    for (size_t i = 0; i < q->nwords; i++)
        if (!strcmp(q->words[i], w)) return 1;
    return 0;
}

static void test_types(void)
{
    static const struct { const char *q; enum qtype t; } cases[] = {
        {"Where is the session saved?", QTYPE_WHERE},
        {"What does the router keep per rule?", QTYPE_WHAT},
        {"How does dispatch find the view?", QTYPE_HOW},
        {"Why is the key cycled on login?", QTYPE_WHY},
        {"Which file defines the session interface?", QTYPE_WHERE},
        {"What is the purpose of the registry?", QTYPE_WHY},
        {"In which module are converters declared?", QTYPE_WHERE},
        {"Explain the login flow.", QTYPE_OTHER},
        {"Given a rule, how is the regex built?", QTYPE_HOW},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct qparse q;
        parse(cases[i].q, &q);
        is_str(qparse_type_name(q.type), qparse_type_name(cases[i].t), "type of '%s'", cases[i].q);
        qparse_free(&q);
    }
}

static void test_identifiers(void)
{
    struct qparse q;
    parse("How does `login_required` wrap views, why does SessionBase.cycle_key call create(), and what is "
          "DEFAULT_MAX_AGE in DatabaseSession, e.g. for getResponse?",
          &q);
    is_int(q.nids, 6, "six identifiers");
    if (q.nids == 6) {
        is_str(q.ids[0].name, "login_required", "backticked name");
        is_int(q.ids[0].kind, QID_FUNCTION, "snake_case is a function");
        is_int(q.ids[0].explicit_, 1, "backticks make it explicit");
        is_str(q.ids[1].name, "SessionBase.cycle_key", "dotted name kept whole");
        is_str(q.ids[1].owner, "SessionBase", "owner class of a method");
        is_str(q.ids[1].base, "cycle_key", "last component");
        is_int(q.ids[1].kind, QID_FUNCTION, "Class.method is a function");
        is_str(q.ids[2].name, "create", "name() is an identifier");
        is_int(q.ids[2].explicit_, 1, "name() is explicit");
        is_str(q.ids[3].name, "DEFAULT_MAX_AGE", "constant");
        is_int(q.ids[3].kind, QID_CONSTANT, "ALL_CAPS is a constant");
        is_str(q.ids[4].name, "DatabaseSession", "CamelCase");
        is_int(q.ids[4].kind, QID_CLASS, "CamelCase is a class");
        is_str(q.ids[5].name, "getResponse", "lowerCamel");
    }
    ok(!has_word(&q, "e.g") && !has_word(&q, "e"), "e.g. is neither a word nor code");
    qparse_free(&q);

    parse("Where is getResponse defined?", &q);
    is_int(q.nids, 1, "lowerCamel is an identifier");
    if (q.nids) is_int(q.ids[0].kind, QID_FUNCTION, "lowerCamel is a function");
    qparse_free(&q);

    parse("How does the Router match a path?", &q);
    is_int(q.nids, 0, "a capitalised English word is not taken for code");
    ok(has_word(&q, "router"), "it stays a content word");
    qparse_free(&q);
}

static void test_quotes_files(void)
{
    struct qparse q;
    parse("Where is \"self.router.match(\" called, and what does 'x = 1' mean in app.py and tinyweb/auth.py? "
          "Don't guess.",
          &q);
    is_int(q.nquotes, 2, "two quoted pieces of code");
    if (q.nquotes == 2) {
        is_str(q.quotes[0], "self.router.match(", "double-quoted code");
        is_str(q.quotes[1], "x = 1", "single-quoted code");
    }
    is_int(q.nfiles, 2, "two files");
    if (q.nfiles == 2) {
        is_str(q.files[0], "app.py", "file name");
        is_str(q.files[1], "tinyweb/auth.py", "file path");
    }
    ok(has_word(&q, "guess"), "an apostrophe does not open a quote");
    qparse_free(&q);

    parse("Why is the \"structured container\" used?", &q);
    is_int(q.nquotes, 0, "quoted English is not code");
    ok(has_word(&q, "structured") && has_word(&q, "container"), "its words are content words");
    qparse_free(&q);
}

static void test_words_terms(void)
{
    struct qparse q;
    parse("Explain how the implementation of the session expiry works in this codebase", &q);
    is_int(q.nwords, 2, "framing and function words dropped");
    if (q.nwords == 2) {
        is_str(q.words[0], "session", "first content word");
        is_str(q.words[1], "expiry", "second content word");
    }
    char *ph = qparse_phrase(&q, 0);
    is_str(ph, "session expiry", "phrase");
    free(ph);
    is_int(q.nterms, 2, "two terms");
    /* weights 1 without an index: plain shares */
    const char *code = "def get_expiry_age(self):\n    return self.get_setting('max_age')\n";
    unsigned char hit[2] = {0, 0};
    double m = qparse_match(&q, code, strlen(code), hit);
    ok(m > 0.49 && m < 0.51, "half the terms found (%.2f)", m);
    is_int(hit[0] + 2 * hit[1], 2, "expiry found, session not");
    qparse_free(&q);

    parse("Where is the pattern compiled?", &q);
    const char *c2 = "def compile_pattern(pattern):";
    m = qparse_match(&q, c2, strlen(c2), NULL);
    ok(m > 0.99, "'compiled' and 'compile' are one word (%.2f)", m);
    ok(qparse_term_index(&q, "compile", 7) >= 0, "term index by stem");
    ok(qparse_term_index(&q, "comp", 4) < 0, "a short prefix is not a stem");
    qparse_free(&q);

    /* a verb of five letters ending in e: "cached" is cach, "cache" cache;
     * a stem of three letters is too short for it ("notes" is not "not") */
    parse("How are parsed templates cached?", &q);
    const char *c3 = "def parse(template):\n    return cache.get(template)\n";
    m = qparse_match(&q, c3, strlen(c3), NULL);
    ok(m > 0.99, "'cached' and 'cache', 'parsed' and 'parse' are one word each (%.2f)", m);
    qparse_free(&q);
    parse("Where are notes kept?", &q);
    const char *c4 = "if x is not None:\n    return kept\n";
    m = qparse_match(&q, c4, strlen(c4), NULL);
    ok(m > 0.49 && m < 0.51, "'notes' is not 'not' (%.2f)", m);
    qparse_free(&q);
}

/* A fake index of the repository "flask": classes Blueprint, Config,
 * session, Which (classes named like words) and Flask (the project's name),
 * the functions jsonify, test and s, the variables g and data. */
static int fake_defined(void *ctx, const char *name, size_t n, int which)
{
    (void)ctx;
    if (which == QPARSE_NAMES_PROJECT) return n == 5 && !strncasecmp(name, "flask", 5);
    static const struct { const char *name; int which; } defs[] = {
        {"Blueprint", QPARSE_NAMES_CLASSES}, {"Config", QPARSE_NAMES_CLASSES},   {"session", QPARSE_NAMES_CLASSES},
        {"jsonify", QPARSE_NAMES_FUNCTIONS}, {"test", QPARSE_NAMES_FUNCTIONS},  {"s", QPARSE_NAMES_FUNCTIONS},
        {"g", 0},                            {"Which", QPARSE_NAMES_CLASSES},         {"data", 0},
        {"Flask", QPARSE_NAMES_CLASSES},
    };
    for (size_t i = 0; i < ARRAY_LEN(defs); i++)
        if (strlen(defs[i].name) == n && !memcmp(defs[i].name, name, n))
            return which == QPARSE_NAMES_ALL || which == defs[i].which;
    return 0;
}

static int has_term(const struct qparse *q, const char *t)
{
    for (size_t i = 0; i < q->nterms; i++)
        if (!strcmp(q->terms[i], t)) return 1;
    return 0;
}

/* "the Blueprint class", "class Config": a capitalised word the question
 * calls a class is that identifier when the index defines a class of that
 * name; "class" then only says what it is. A lowercase word before "class"
 * is a description, and words next to "function" or "method" name nothing,
 * whatever the index defines ("the test function", "a method's result").
 * The subject of "What does jsonify do?" is a name the index defines. */
static void test_named_words(void)
{
    static const char *const named[][2] = {
        {"Where is the Blueprint class defined?", "Blueprint"},
        {"Where is class Config defined?", "Config"},
        {"What do the Blueprint and Config classes share?", NULL},
    };
    char err[256];
    for (size_t i = 0; i < 2; i++) {
        struct qparse q;
        ok(qparse_question_names(named[i][0], fake_defined, NULL, &q, err, sizeof err) == 0, "parses: %s", named[i][0]);
        int found = q.nids == 1 && !strcmp(q.ids[0].name, named[i][1]);
        ok(found, "%s: the identifier %s (%zu identifiers)", named[i][0], named[i][1], q.nids);
        if (found) {
            is_int(q.ids[0].kind, QID_CLASS, "a class");
            is_int(q.ids[0].explicit_, 1, "named as explicitly as in backticks");
        }
        ok(!has_term(&q, "class") && !has_word(&q, "class"), "'class' is not a word to look for");
        qparse_free(&q);
    }
    struct qparse q;
    ok(qparse_question_names(named[2][0], fake_defined, NULL, &q, err, sizeof err) == 0, "parses: %s", named[2][0]);
    ok(q.nids == 1 && !strcmp(q.ids[0].name, "Config"), "the capitalised name next to 'classes' is one");
    qparse_free(&q);
    static const char *const plain[] = {
        "Where is the session class?",
        "What does the jsonify function return?",
        "Why is the test function a smoke test?",
        "Which decorator caches a method's result on the instance?",
        "Which class caches a method's result?",
    };
    for (size_t i = 0; i < ARRAY_LEN(plain); i++) {
        ok(qparse_question_names(plain[i], fake_defined, NULL, &q, err, sizeof err) == 0, "parses: %s", plain[i]);
        is_int(q.nids, 0, "%s: no identifier", plain[i]);
        qparse_free(&q);
    }
    /* the subject right after a question word and an auxiliary, when the
     * index defines it: a name, whatever its case */
    static const char *const subject[][2] = {
        {"What does jsonify do?", "jsonify"},
        {"How does jsonify handle a list?", "jsonify"},
        {"Where is jsonify defined?", "jsonify"},
        {"what is session for?", "session"},
    };
    for (size_t i = 0; i < ARRAY_LEN(subject); i++) {
        ok(qparse_question_names(subject[i][0], fake_defined, NULL, &q, err, sizeof err) == 0, "parses: %s",
           subject[i][0]);
        ok(q.nids == 1 && !strcmp(q.ids[0].name, subject[i][1]) && q.ids[0].explicit_,
           "%s: %s, as explicitly as in backticks (%zu identifiers)", subject[i][0], subject[i][1], q.nids);
        qparse_free(&q);
    }
    static const char *const no_subject[] = {
        "What does the jsonify helper do?",   /* 'the': a description follows */
        "What does render do?",               /* not a name of the index */
        "Why, in short, does jsonify exist?", /* no opening question word and auxiliary */
        "What does data do?",                 /* a variable's name: a word */
        "How does Flask dispatch a request?", /* the repository's name: the project */
    };
    for (size_t i = 0; i < ARRAY_LEN(no_subject); i++) {
        ok(qparse_question_names(no_subject[i], fake_defined, NULL, &q, err, sizeof err) == 0, "parses: %s",
           no_subject[i]);
        is_int(q.nids, 0, "%s: no identifier", no_subject[i]);
        qparse_free(&q);
    }
    /* the project's name opening a question is no word to look for (every
     * file is the project's), unless nothing else is left */
    ok(qparse_question_names("How does flask handle errors?", fake_defined, NULL, &q, err, sizeof err) == 0,
       "parses: How does flask handle errors?");
    ok(!has_word(&q, "flask") && has_word(&q, "handle") && has_word(&q, "errors"),
       "the project's name opening the question is no word; the others are");
    qparse_free(&q);
    ok(qparse_question_names("How does flask work?", fake_defined, NULL, &q, err, sizeof err) == 0,
       "parses: How does flask work?");
    ok(has_word(&q, "flask"), "the project's name is a word when nothing else is left");
    qparse_free(&q);
    ok(qparse_question_names("How does the app handle flask errors?", fake_defined, NULL, &q, err, sizeof err) == 0,
       "parses: the project's name later in the question");
    ok(has_word(&q, "flask"), "the project's name elsewhere in the question stays a word");
    qparse_free(&q);
    /* the project's name said to be a class is the class */
    ok(qparse_question_names("What does the Flask class do?", fake_defined, NULL, &q, err, sizeof err) == 0,
       "parses: the Flask class");
    ok(q.nids == 1 && !strcmp(q.ids[0].name, "Flask") && q.ids[0].explicit_,
       "the project's name called a class is that class");
    qparse_free(&q);
    ok(qparse_question_names("What does jsonify do?", NULL, NULL, &q, err, sizeof err) == 0,
       "parses without an index");
    ok(q.nids == 0 && has_word(&q, "jsonify"), "without an index: a plain word");
    qparse_free(&q);
    ok(qparse_question_names("Where is the Blueprint class defined?", NULL, NULL, &q, err, sizeof err) == 0,
       "parses without an index");
    ok(q.nids == 0 && has_word(&q, "blueprint") && has_word(&q, "class"), "without an index: plain words");
    qparse_free(&q);
}

/* a question asking what calls a name, in its opening words, names it
 * (callers_of); one that only mentions a call further on does not */
static void test_callers(void)
{
    static const struct {
        const char *q, *callee;   /* callee NULL: not a callers question */
    } cases[] = {
        {"What calls get_response?", "get_response"},
        {"Who calls full_dispatch_request?", "full_dispatch_request"},
        {"Which functions call `make_response`?", "make_response"},
        {"What are the callers of url_for()?", "url_for"},
        {"Where is make_response called from?", "make_response"},
        {"What calls Flask.run?", "run"},
        {"What does get_response do?", NULL},
        {"How is the response of get_response() built?", NULL},
        {"Where does DaskIndexingAdapter conditionally invoke dask.array.map_blocks, and what determines when "
         "this function is called?", NULL},
        {"Where, during form validation, are the per-field `clean_<name>()` hooks called relative to clean()?", NULL},
        {"What calls the database?", NULL},   /* no name written as code */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct qparse q;
        char err[256];
        ok(qparse_question(cases[i].q, &q, err, sizeof err) == 0, "parses: %s", cases[i].q);
        const char *got = q.callers_of && q.callers_of <= q.nids ? q.ids[q.callers_of - 1].base : NULL;
        if (cases[i].callee) is_str(got, cases[i].callee, "asks what calls %s", cases[i].callee);
        else ok(!got, "asks for no callers (got %s)", got ? got : "none");
        ok(!q.subclasses_of, "and for no subclasses");
        qparse_free(&q);
    }
    /* with the index's names: a plain word after the relation is the name
     * asked about when the index defines it (fake_defined); subclasses too */
    static const struct {
        const char *q, *name;
        int subclasses;   /* 1: asks for the subclasses of name, 0: its callers */
    } named[] = {
        {"What calls jsonify?", "jsonify", 0},
        {"Where is jsonify called from?", "jsonify", 0},
        {"What are the callers of the jsonify helper?", "jsonify", 0},
        {"Which classes inherit from Blueprint?", "Blueprint", 1},
        {"What are the subclasses of Config?", "Config", 1},
        {"What extends Blueprint?", "Blueprint", 1},
        {"Which classes subclass `Config`?", "Config", 1},
    };
    for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
        struct qparse q;
        char err[256];
        ok(qparse_question_names(named[i].q, fake_defined, NULL, &q, err, sizeof err) == 0, "parses: %s", named[i].q);
        size_t at = named[i].subclasses ? q.subclasses_of : q.callers_of;
        is_str(at && at <= q.nids ? q.ids[at - 1].base : NULL, named[i].name, "asks for the %s of %s",
               named[i].subclasses ? "subclasses" : "callers", named[i].name);
        ok(!(named[i].subclasses ? q.callers_of : q.subclasses_of), "and nothing else");
        qparse_free(&q);
    }
    struct qparse q;
    char err[256];
    ok(qparse_question_names("What calls the database?", fake_defined, NULL, &q, err, sizeof err) == 0 &&
           !q.callers_of && !q.subclasses_of,
       "a word the index does not define is asked about as a word");
    qparse_free(&q);
    ok(qparse_question_names("Which blueprint inherits the config of the app?", fake_defined, NULL, &q, err,
                             sizeof err) == 0 && !q.subclasses_of,
       "'inherits the config' names no class to inherit from");
    qparse_free(&q);
}

static void test_errors(void)
{
    struct qparse q;
    char err[256] = "";
    ok(qparse_question("?? the of !", &q, err, sizeof err) == -1, "no words: an error");
    ok(strstr(err, "no words") != NULL, "message says why: %s", err);
    qparse_free(&q);
    qparse_free(NULL);
    ok(qparse_code_shaped("get_response", 12) && qparse_code_shaped("HTTPResponse", 12) &&
           !qparse_code_shaped("Router", 6) && qparse_code_shaped("utf8", 4),
       "code shapes");
}

int main(void)
{
    test_types();
    test_identifiers();
    test_quotes_files();
    test_words_terms();
    test_callers();
    test_named_words();
    test_errors();
    return done_testing();
}
