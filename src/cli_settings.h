/*
 * cli_settings: the command line (struct drqa_opts, cli_opts.h) turned into
 * the settings each library module takes, in one place, so that the library
 * never reads the command line itself. Strings are borrowed from o (argv).
 */
#ifndef DRQA_CLI_SETTINGS_H
#define DRQA_CLI_SETTINGS_H

#include "cli_opts.h"
#include "engine.h"
#include "index.h"
#include "llm_config.h"
#include "search.h"
#include "transcript.h"

/* The repository, --index, the update's options (--threads,
 * --max-file-size, --check, --verify, --no-ignore), --quiet and
 * --no-progress. Only --index-only waits for another process's update; the
 * other modes read the index as it was meanwhile. */
void cli_index_request(struct index_request *rq, const struct drqa_opts *o);
/* --config, --policy, --provider, --api-base, --model, --embed-base,
 * --embed-model, --json-mode, --no-stream and --role-model. */
void cli_config_overrides(struct config_overrides *c, const struct drqa_opts *o);
/* Defaults, then --iterations, --max-expand, --exploration, --seed,
 * --budget-tokens, --budget-usd, --parallel, --finish-threshold and the
 * ablation switches. The thread-safety flags stay 0: the caller knows its
 * callbacks. */
void cli_search_config(struct search_config *c, const struct drqa_opts *o);
/* The run's settings as a transcript records them; created and extra are
 * left NULL. The exploration recorded is the one the search uses. */
void cli_transcript_config(struct transcript_config *c, const struct drqa_opts *o);
/* All of the above the engine takes, with --mode and --no-semantic. */
void cli_engine_settings(struct engine_settings *s, const struct drqa_opts *o);
/* index_ensure with the request of o. */
int cli_index_ensure(const struct drqa_opts *o, sqlite3 **db, char **repo_abs, char *err, size_t errlen);
/* config_load with the overrides of o. */
int cli_config_load(struct drqa_config *c, const struct drqa_opts *o, char *err, size_t errlen);

#endif
