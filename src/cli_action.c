/*
 * cli_action: the --action NAME JSON REPO mode. Runs one action against the
 * repository's index (brought up to date first) and prints the result as
 * JSON on stdout: items, evidence, notes, listing, and "rendered", the text a
 * model would see. This is how users and scripts compare our actions with
 * other tools' and how end-to-end tests drive the action engine. A wrong
 * action name or argument is reported on stderr with exit status 2, before
 * any indexing; an index that cannot be built or read exits with 1.
 */
#include "action.h"
#include "cli.h"
#include "cli_settings.h"
#include "index.h"
#include "semantic.h"
#include "sqlx.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

/* Errors may quote a path or name from the request or the repository. */
static void print_error(const char *err)
{
    char *safe = text_term_safe(err);
    fprintf(stderr, "drqa-tui: %s\n", safe);
    free(safe);
}

int cli_action(const struct drqa_opts *o)
{
    char err[2048];
    if (!o->no_semantic && semantic_action_register(NULL, err, sizeof err)) {
        print_error(err);
        return EXIT_FAIL;
    }
    const struct action_def *def = action_find(o->action_name);
    cJSON *args = action_args_parse(o->action_name, o->action_args, err, sizeof err);
    struct action_result r;
    int rc;
    if (!def || !args || !def->run || action_validate(def, args, err, sizeof err) != ACTION_OK) {
        /* action_run words every one of these: unknown name, bad JSON,
         * schema-only action, invalid arguments; no index is needed */
        rc = action_run_json(NULL, o->action_name, o->action_args, &r, err, sizeof err);
        action_result_free(&r);
        cJSON_Delete(args);
        print_error(err);
        return rc == ACTION_EFAIL ? EXIT_FAIL : EXIT_USAGE;
    }
    sqlite3 *db = NULL;
    char *repo = NULL;
    int irc = cli_index_ensure(o, &db, &repo, err, sizeof err);
    if (irc) {
        cJSON_Delete(args);
        print_error(err);
        return irc == INDEX_EUSAGE ? EXIT_USAGE : EXIT_FAIL;
    }
    struct action_ctx ctx;
    action_ctx_init(&ctx, db, repo);
    rc = action_run(&ctx, o->action_name, args, &r, err, sizeof err);
    int status = EXIT_OK;
    if (rc == ACTION_OK) {
        cJSON *j = action_result_to_json(&r);
        char *text = action_result_render(&r, ctx.token_budget > 0 ? ctx.token_budget : ACTION_DEFAULT_BUDGET);
        cJSON_AddStringToObject(j, "rendered", text);
        char *s = cJSON_Print(j);
        char *safe = json_term_safe(s);   /* file text: no raw C1 or DEL on the terminal */
        printf("%s\n", safe);
        free(safe);
        free(s);
        free(text);
        cJSON_Delete(j);
    } else {
        print_error(err);
        status = rc == ACTION_EFAIL ? EXIT_FAIL : EXIT_USAGE;
    }
    action_result_free(&r);
    action_ctx_release(&ctx);
    cJSON_Delete(args);
    sqlx_close(db);
    free(repo);
    return status;
}
