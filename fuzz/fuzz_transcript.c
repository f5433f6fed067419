/*
 * fuzz_transcript: --replay and --report read transcript files that may be
 * edited, truncated or hostile. Arbitrary bytes go to transcript_parse; what
 * loads is written back out as JSON and Markdown, and the JSON must load
 * again and give the same text (the save -> load -> save promise of
 * transcript.h, here for whatever the loader accepts).
 */
#include "transcript.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char err[512];
    err[0] = 0;
    struct mcts_tree *tree = NULL;
    cJSON *config = NULL;
    struct search_answer *answer = NULL;
    if (transcript_parse(text, "fuzz", &tree, &config, &answer, err, sizeof err) != 0) {
        if (tree || config || answer || !err[0]) abort();   /* nothing returned, and a reason */
        free(text);
        return 0;
    }
    char *one = transcript_json(tree, config, answer);
    char *md = transcript_markdown(tree, answer);
    struct mcts_tree *tree2 = NULL;
    cJSON *config2 = NULL;
    struct search_answer *answer2 = NULL;
    if (transcript_parse(one, "fuzz-again", &tree2, &config2, &answer2, err, sizeof err) != 0) abort();
    char *two = transcript_json(tree2, config2, answer2);
    if (strcmp(one, two) != 0) abort();
    free(two);
    free(md);
    free(one);
    mcts_free(tree2);
    cJSON_Delete(config2);
    search_answer_free(answer2);
    mcts_free(tree);
    cJSON_Delete(config);
    search_answer_free(answer);
    free(text);
    return 0;
}
