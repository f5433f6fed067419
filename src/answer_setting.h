/*
 * answer_setting: the setting an answer's cited code reads that the
 * question asks of ("Which setting turns on debug mode?": `debug`, read at
 * app.py:30): a string key of a configuration mapping or getter
 * (config["KEY"], settings.get("KEY"), get_setting("KEY")) or an attribute
 * of a configuration object (self.config.key, conf.key, settings.KEY) whose
 * words are the question's. Only a question that asks of configuration (a
 * setting, config, option, flag, enabling, disabling, toggling) is told that
 * a setting controls what it asks: "How are sessions signed?" was told
 * SESSION_COOKIE_NAME does.
 */
#ifndef DRQA_ANSWER_SETTING_H
#define DRQA_ANSWER_SETTING_H

#include "qparse.h"

#include <stddef.h>

/* The first citations looked at. */
#define ANSWER_SETTING_SPANS 5

struct answer_setting {
    char key[96];
    size_t cite;   /* index of the span that reads it */
    int line;      /* the line that reads it */
    double score;  /* the share of the question its key matches */
};

/* Looks through texts[0..n) (NULL: a span not to look in; each starts at
 * line starts[i]) outside comments for the setting whose key matches the
 * question best. Returns 1 with *out set when the question asks of
 * configuration and a key matches enough of it, else 0. */
int answer_setting_find(const struct qparse *q, const char *const *texts, const int *starts, size_t n,
                        struct answer_setting *out);

#endif
