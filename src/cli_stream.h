/*
 * cli_stream: --ask on a terminal prints the answer as the model writes it.
 *
 * The answer's pieces (engine_ask_hooks.answer_sink) go to the terminal as
 * they arrive, made safe as every answer is (text_term_safe; a character
 * split between two pieces waits for its end, and trailing blanks for what
 * follows them). A terminal cannot take text back, so whatever changes after
 * it was printed is said, never hidden: when the answer is written again
 * (the call is sent again) a line says so before the new text; at the end,
 * when the checked answer (engine_result_markdown) goes on from what was
 * printed, only the rest is printed (the citation list, notes), and when it
 * differs (citations no evidence verifies removed, the offline policy's
 * answer after the model's failed, a stopped answer cut back) a line says
 * why and the whole checked answer follows.
 *
 * C-c while the answer is being written stops it (the connection is closed,
 * the part that arrived is kept and marked as stopped, and --ask exits with
 * EXIT_STOPPED); before the answer began C-c ends the process as it did.
 *
 * Into a pipe or with --json none of this is used: the answer is printed
 * once at the end, as it always was.
 */
#ifndef DRQA_CLI_STREAM_H
#define DRQA_CLI_STREAM_H

#include "engine.h"

#include <stdio.h>

/* --ask: C-c stopped the answer while it was written; what had arrived is
 * printed, marked as stopped (128 + SIGINT, as a shell reports C-c). */
enum { EXIT_STOPPED = 130 };

struct ask_tty;

/* Begins printing to out (a terminal) and takes SIGINT for the answer. */
struct ask_tty *ask_tty_begin(FILE *out);
/* The hooks that bring the answer here. */
void ask_tty_hooks(struct ask_tty *t, struct engine_ask_hooks *h);
/* Gives SIGINT back and ends what was printed with r's answer as checked
 * (r NULL: the question is asked again, the text printed is dropped).
 * Returns 1 when the answer was printed here (the caller prints nothing of
 * it), 0 when nothing was streamed (the caller prints the answer as
 * always). Frees t; NULL gives 0. */
int ask_tty_end(struct ask_tty *t, const struct engine_result *r);

#endif
