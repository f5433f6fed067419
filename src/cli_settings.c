/*
 * cli_settings: struct drqa_opts into the library's settings (see
 * cli_settings.h). Every option a library module heeds passes through here.
 */
#include "cli_settings.h"

#include <string.h>

void cli_index_request(struct index_request *rq, const struct drqa_opts *o)
{
    memset(rq, 0, sizeof *rq);
    rq->repo = o->repo;
    rq->index_path = o->index_path;
    rq->opt.threads = o->threads;
    rq->opt.max_file_size = o->max_file_size;
    rq->opt.max_file_size_given = o->max_file_size_given;
    rq->opt.check = o->check;
    rq->opt.verify = o->verify;
    rq->opt.no_ignore = o->no_ignore;
    /* only --index-only is there to update: the other modes answer from the
     * index as it was while another process updates it */
    rq->opt.busy_read = o->run != RUN_INDEX_ONLY;
    rq->quiet = o->quiet;
    rq->no_progress = o->no_progress;
}

void cli_config_overrides(struct config_overrides *c, const struct drqa_opts *o)
{
    *c = (struct config_overrides){
        .config_path = o->config_path, .policy = o->policy, .provider = o->provider, .api_base = o->api_base,
        .model = o->model, .embed_base = o->embed_base, .embed_model = o->embed_model, .json_mode = o->json_mode,
        .no_stream = o->no_stream, .role_models = o->role_models, .nrole_models = o->nrole_models,
    };
}

void cli_search_config(struct search_config *c, const struct drqa_opts *o)
{
    search_config_defaults(c);
    if (o->iterations > 0) c->iterations = o->iterations;
    if (o->max_expand > 0) c->max_expand = o->max_expand;
    c->exploration = o->exploration;   /* < 0: the documented default */
    c->seed = o->seed;
    c->budget_tokens = o->budget_tokens;
    c->budget_usd = o->budget_usd;
    if (o->parallel > 1) c->parallel = o->parallel;
    c->no_mcts = o->no_mcts;
    c->no_perception = o->no_perception;
    c->no_evaluation = o->no_evaluation;
    if (o->finish_min_value >= 0) c->finish_min_value = o->finish_min_value;
}

void cli_transcript_config(struct transcript_config *c, const struct drqa_opts *o)
{
    memset(c, 0, sizeof *c);
    c->repo = o->repo;
    c->index_path = o->index_path;
    c->mode = o->mode;
    c->policy = o->policy;
    c->provider = o->provider;
    c->model = o->model;
    c->api_base = o->api_base;
    c->embed_base = o->embed_base;
    c->embed_model = o->embed_model;
    c->iterations = o->iterations;
    c->max_expand = o->max_expand;
    c->parallel = o->parallel;
    c->seed = o->seed;
    c->budget_tokens = o->budget_tokens;
    c->exploration = o->exploration >= 0 ? o->exploration : MCTS_DEFAULT_C;
    c->no_mcts = o->no_mcts;
    c->no_perception = o->no_perception;
    c->no_evaluation = o->no_evaluation;
    c->no_semantic = o->no_semantic;
}

void cli_engine_settings(struct engine_settings *s, const struct drqa_opts *o)
{
    memset(s, 0, sizeof *s);
    cli_index_request(&s->index, o);
    cli_config_overrides(&s->config, o);
    cli_search_config(&s->search, o);
    s->mode = o->mode;
    s->no_semantic = o->no_semantic;
    s->quiet = o->quiet;
}

int cli_index_ensure(const struct drqa_opts *o, sqlite3 **db, char **repo_abs, char *err, size_t errlen)
{
    struct index_request rq;
    cli_index_request(&rq, o);
    return index_ensure(&rq, db, repo_abs, err, errlen);
}

int cli_config_load(struct drqa_config *c, const struct drqa_opts *o, char *err, size_t errlen)
{
    struct config_overrides co;
    cli_config_overrides(&co, o);
    return config_load(c, &co, err, errlen);
}
