/*
 * semantic_action: the SemanticSearch action of the action registry (action.h),
 * a thin layer over semantic_search(): it reads the arguments, runs the
 * hybrid ranking on the action context's connection (with the context's
 * cache, semantic_cache_of) and returns the chunks
 * as evidence spans plus one JSON item per chunk. Registered once at start-up
 * by semantic_action_register(), which also fixes the remote embedding
 * configuration (or none) for the life of the process.
 */
#include "action.h"
#include "semantic.h"

#include <stdio.h>
#include <string.h>

static const struct semantic_remote *ss_remote;   /* not owned; NULL = local vectors */

static const char *const ss_categories[] = {"implementation", "test", "any", NULL};
static const struct action_arg ss_args[] = {
    {"query", ACTION_ARG_STRING, 1, "what to look for, in natural language: a behaviour, a concept, a purpose", NULL},
    {"category", ACTION_ARG_STRING, 0, "'implementation' (non-test code), 'test' (test code) or 'any' (default)",
     ss_categories},
    {"file_pattern", ACTION_ARG_STRING, 0, "glob restricting the files searched", NULL},
    {NULL, 0, 0, NULL, NULL}};

struct semantic_cache *semantic_cache_of(struct action_ctx *ctx)
{
    if (!ctx->semantic) ctx->semantic = semantic_cache_new(ctx->db);
    return ctx->semantic;
}

static int ss_run(struct action_ctx *ctx, const cJSON *args, struct action_result *out, char *err, size_t errlen)
{
    struct semantic_query q = {0};
    q.text = action_arg_str(args, "query");
    q.file_pattern = action_arg_str(args, "file_pattern");
    const char *cat = action_arg_str(args, "category");
    if (semantic_parse_category(cat, &q.category)) {
        snprintf(err, errlen, "SemanticSearch: category '%s' is not one of 'implementation', 'test', 'any'", cat);
        return ACTION_EINVAL;
    }
    q.mode = SEMANTIC_HYBRID;
    q.top_k = ctx->max_results > 0 && ctx->max_results < SEMANTIC_DEFAULT_TOP_K ? ctx->max_results
                                                                               : SEMANTIC_DEFAULT_TOP_K;
    q.remote = ss_remote;
    if (!q.text || !*q.text) {
        snprintf(err, errlen, "SemanticSearch: 'query' is empty; say in words what the code does or is about");
        return ACTION_EINVAL;
    }
    size_t before = out->ev.n;
    if (semantic_search(semantic_cache_of(ctx), &q, &out->ev, err, errlen) < 0) return ACTION_EFAIL;
    for (size_t i = before; i < out->ev.n; i++) {
        const struct evidence_span *s = &out->ev.v[i];
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "path", s->path);
        cJSON_AddNumberToObject(it, "start_line", s->start_line);
        cJSON_AddNumberToObject(it, "end_line", s->end_line);
        if (s->label) cJSON_AddStringToObject(it, "label", s->label);
        cJSON_AddNumberToObject(it, "score", s->score);
        cJSON_AddItemToArray(out->items, it);
    }
    if (out->ev.n == before)
        action_result_note(out, "no code matched '%s'%s%s; try other words, a broader file_pattern, or FindCodeSnippet "
                           "for exact text", q.text, q.file_pattern ? " in " : "", q.file_pattern ? q.file_pattern : "");
    return ACTION_OK;
}

static const struct action_def action_semantic_search = {
    "SemanticSearch",
    "Search code by meaning: functions, classes and module code ranked by a mix of keyword and vector similarity.",
    ss_args, ss_run,
    "Use it when you can describe the behaviour but know no name. Returns the best-matching functions, classes "
    "and passages with their line spans.",
    "Semantic"};

int semantic_action_register(const struct semantic_remote *remote, char *err, size_t errlen)
{
    ss_remote = remote;
    return action_register(&action_semantic_search, err, errlen);
}
