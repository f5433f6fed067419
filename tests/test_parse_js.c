/*
 * test_parse_js: the JavaScript extractor on tests/fixtures/mixed/web (a
 * CommonJS router, an ES module app) plus inline cases: functions, arrow
 * functions and function expressions bound to names, prototype and exports
 * assignments, module.exports members, classes with fields, getters, static
 * and async generator methods, JSDoc, ES imports/exports, require() and
 * import(), calls, new and JSX components, and module names. Every symbol,
 * import and call is compared exactly, one line per item.
 * DRQA_DUMP=1 prints what the extractor produced.
 */
#include "parse.h"
#include "tap.h"
#include "util.h"
#define PARSE_FIXTURES "mixed/web"
#include "parse_harness.h"

#include <stdlib.h>
#include <string.h>

extern const struct lang parse_javascript;

static void test_router(void)
{
    static const char *const syms[] = {
        "function Router 10-13@10 ^- | function Router(options) | - | A router dispatching requests to layers.~"
        "@param {Object} options | -",
        "method Router.use 16-19@16 ^Router | Router.prototype.use = function use(fn) | - | Adds a middleware layer. | -",
        "method Router.create 21-21@21 ^Router | Router.create = (opts) => | - | - | -",
        "function async handle 23-25@23 ^- | const handle = async (req, res) => | - | - | -",
        "variable counter 27-27@27 ^- | - | - | - | -",
        "variable limit 27-27@27 ^- | - | - | - | -",
        "function walk 29-32@29 ^- | function* walk(stack) | - | - | -",
        "function walk.visit 30-30@30 ^walk | function visit(layer) | - | - | -",
        "function createRouter 34-36@34 ^- | exports.createRouter = function (opts) | - | - | -",
        "function parse 42-42@42 ^- | parse(url) | - | Splits a URL path. | -",
        "function format 43-43@43 ^- | format: function (parts) | - | - | -",
        NULL,
    };
    static const char *const imports[] = {
        "2 path | - | path | 0",
        "3 ./layer | Layer | - | 0",
        "3 ./layer | Route | RouteImpl | 0",
        "4 ./polyfill | - | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "17 this.stack.push <- Router.use",
        "17 Layer <- Router.use",
        "21 Router <- Router.create",
        "24 dispatch <- handle",
        "31 visit <- walk",
        "35 Router.create <- createRouter",
        "42 path.parse <- parse",
        "43 parts.join <- format",
        NULL,
    };
    check_fixture(&parse_javascript, "lib/router.js", syms, imports, calls, 0);
}

static void test_app(void)
{
    static const char *const syms[] = {
        "class App 11-27@11 ^- | class App extends EventEmitter | - | The application: routes requests and renders "
        "views. | EventEmitter",
        "variable App.#secret 12-12@12 ^App | - | - | - | -",
        "variable App.instances 13-13@13 ^App | - | - | - | -",
        "method App.onClick 14-14@14 ^App | onClick = (e) => | - | - | -",
        "method App.constructor 17-20@17 ^App | constructor(name) | - | Builds an app named name. | -",
        "method App.title 22-22@22 ^App | get title() | - | - | -",
        "method App.create 24-24@24 ^App | static create(name) | - | - | -",
        "method async App.items 26-26@26 ^App | async *items() | - | - | -",
        "function start 29-33@29 ^- | function start(port = 3000) | - | - | -",
        "function stop 35-35@35 ^- | const stop = () => | - | - | -",
        NULL,
    };
    static const char *const imports[] = {
        "1 express | default | express | 0",
        "2 ../lib/router.js | Router | R | 0",
        "2 ../lib/router.js | handle | - | 0",
        "3 ./util | * | util | 0",
        "4 ./styles.css | - | - | 0",
        "5 ./cart | default | Cart | 0",
        "6 ./helpers | * | - | 0",
        "32 ./lazy.js | - | - | 0",
        NULL,
    };
    static const char *const calls[] = {
        "14 this.emit <- App.onClick",
        "18 super <- App.constructor",
        "22 this.name.toUpperCase <- App.title",
        "24 App <- App.create",
        "26 util.list <- App.items",
        "30 App.create <- start",
        "31 app.listen <- start",
        "31 console.log <- start",
        "35 process.exit <- stop",
        NULL,
    };
    check_fixture(&parse_javascript, "src/app.js", syms, imports, calls, 0);
}

/* Decorators, class expressions, module.exports = named function, nested
 * arrow functions inside callbacks, IIFEs, JSX components, a JSDoc separated
 * by a blank line (not a docstring), and variables inside functions (not symbols). */
static void test_inline(void)
{
    static const char src[] =
        "@sealed\n"
        "class A extends mixin(B, C) {\n"
        "  @bound static async run() { return <Panel x={1}><div/></Panel>; }\n"
        "}\n"
        "/** Not a docstring: a blank line follows. */\n"
        "\n"
        "const K = class extends A {};\n"
        "describe('x', () => {\n"
        "  const helper = function () { let local = 1; };\n"
        "  var inner = 2;\n"
        "});\n"
        "(function () { go(); })();\n"
        "module.exports = function factory() { return new A(); };\n"
        "exports.answer = 42;\n";
    static const char *const syms[] = {
        "class A 1-4@2 ^- | class A extends mixin(B, C) | sealed | - | mixin(B,C)",
        "method async A.run 3-3@3 ^A | static async run() | bound | - | -",
        "class K 7-7@7 ^- | const K = class extends A | - | - | A",
        "function helper 9-9@9 ^- | const helper = function () | - | - | -",
        "function factory 13-13@13 ^- | function factory() | - | - | -",
        "variable answer 14-14@14 ^- | - | - | - | -",
        NULL,
    };
    static const char *const none[] = {NULL};
    static const char *const calls[] = {
        "2 mixin <- A",
        "3 Panel <- A.run",
        "8 describe <- -",
        "12 go <- -",
        "13 A <- factory",
        NULL,
    };
    check(&parse_javascript, src, sizeof src - 1, syms, none, calls, 0);
}

static void test_module_name(void)
{
    static const char *const cases[][2] = {
        {"web/lib/router.js", "web/lib/router"},
        {"web/lib/index.js", "web/lib"},
        {"index.mjs", ""},
        {"a/jquery.min.js", "a/jquery.min"},
        {"src/types.d.ts", "src/types"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *m = parse_javascript.module_name(cases[i][0]);
        is_str(m, cases[i][1], "module_name(%s)", cases[i][0]);
        free(m);
    }
    static const char *const exts[] = {"a.js", "a.mjs", "a.cjs", "a.jsx"};
    for (size_t i = 0; i < ARRAY_LEN(exts); i++)
        ok(parse_lang_for_path(exts[i]) == &parse_javascript, "parse_lang_for_path picks javascript for %s", exts[i]);
}

int main(void)
{
    test_router();
    test_app();
    test_inline();
    test_module_name();
    return done_testing();
}
