/*
 * fake_backend.h: an LLM backend for a C test, configured as a user would
 * configure one: a config file with the given text plus environment entries
 * (DRQA_API_BASE pointing at the fake server, DRQA_MODEL, ...). Include after
 * tap.h, llm_config.h and llm.h.
 */
#ifndef DRQA_FAKE_BACKEND_H
#define DRQA_FAKE_BACKEND_H

#include <stdio.h>

/* Writes conf to config_path, loads it with env (NULL-terminated) and
 * returns the backend, or NULL with a diagnostic on a configuration error. */
static __attribute__((unused)) struct llm_backend *fake_backend(const char *config_path, const char *conf,
                                                                const char *const *env)
{
    FILE *fp = fopen(config_path, "w");
    if (!fp) {
        diag("cannot write %s", config_path);
        return NULL;
    }
    fputs(conf, fp);
    fclose(fp);
    struct config_overrides o = {0};
    o.config_path = config_path;
    struct drqa_config c;
    char err[512];
    if (config_load_env(&c, &o, env, err, sizeof err)) {
        diag("config: %s", err);
        return NULL;
    }
    struct llm_backend *b = llm_backend_new(&c, err, sizeof err);
    config_free(&c);
    return b;
}

#endif
