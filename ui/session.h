/*
 * session: the search behind the front end. session_start builds the worker
 * (worker.h) for the command line's repository and question and starts it;
 * in the worker thread the open hook brings the index up to date, posting
 * its progress as indexing state events, and builds the policy, executor and
 * curator. session_stop cancels and joins it. Questions typed later reach
 * the worker as commands; the worker reports everything as events.
 */
#ifndef DRQA_UI_SESSION_H
#define DRQA_UI_SESSION_H

#include <stddef.h>

struct ui;

int session_start(struct ui *ui, char *err, size_t errlen);
void session_stop(struct ui *ui);   /* accepts a session that never started */

#endif
