/*
 * modes_llm: the paper's non-agentic baselines (section 4.2) answered by a
 * chat model, for --mode direct|rag-function|rag-window under --policy llm.
 * The engine retrieves; this module prompts, checks and accounts:
 *
 *   direct        the question alone (prompts/direct.txt) at temperature 0,
 *                 without any repository text: the model's own knowledge.
 *                 The answer cites nothing. A `path:start-end` the model
 *                 writes anyway cannot come from reading the code, so it is
 *                 removed, and a closing line says the answer had no
 *                 repository context and how many such references went.
 *   rag-function  the engine's retrieved spans (the top-10 function/class
 *   rag-window    chunks by SemanticSearch, or the top-10 windows of 500
 *                 lines by BM25) under their `path:start-end` headers with
 *                 numbered lines (prompts/rag.txt), temperature 0. The
 *                 answer's citations are checked against the spans shown: a
 *                 reply citing outside them, citing nothing, or clearly not
 *                 addressing the question's type is re-asked once with the
 *                 list of valid spans, as the LLM policy's answer role is
 *                 (policy_llm.h); the second reply is kept unless it lost
 *                 every valid citation the first had; citations still
 *                 invalid are removed from the text, counted in a closing
 *                 line, and never returned.
 *
 * Prompt size. Each span's text is capped (MODES_LLM_SPAN_BYTES, windows
 * MODES_LLM_WINDOW_BYTES) and the whole context at MODES_LLM_CONTEXT_BYTES.
 * A verbatim span over its cap is cut at a line boundary and its header then
 * ends at the last line shown, so the model is only allowed to cite lines it
 * saw; an elided span (a class outline) is shown whole or cut with a marker.
 *
 * Tokens: every call's input and output tokens (the server's usage, or the
 * client's bytes/4 estimate) are added to the result, re-asks included.
 * Failures: a model call that fails (after the client's retries) or an empty
 * reply gives the result an error naming the mode and the cause, and no
 * answer. The API key is the backend's business: nothing here sees it.
 *
 * Threads: a struct modes_llm is read-only after modes_llm_new, so several
 * threads may answer through one; the backend may be shared (llm.h).
 */
#ifndef DRQA_MODES_LLM_H
#define DRQA_MODES_LLM_H

#include "engine.h"
#include "llm.h"

#include <stddef.h>

#define MODES_LLM_SPAN_BYTES 4000        /* one function or class chunk */
#define MODES_LLM_WINDOW_BYTES 6000      /* one 500-line window: its first lines */
#define MODES_LLM_CONTEXT_BYTES 48000    /* all spans together */
#define MODES_LLM_ANSWER_MAX 16000       /* a longer reply is cut with a marker */

struct modes_llm;

/* Loads prompts/direct.txt and prompts/rag.txt (prompt.h: user override,
 * installed copy, source tree). backend is borrowed and must outlive the
 * result. NULL with err naming the file or the missing backend. */
struct modes_llm *modes_llm_new(struct llm_backend *backend, char *err, size_t errlen);
void modes_llm_free(struct modes_llm *m);   /* accepts NULL */

/* Answers r->question in mode (ENGINE_DIRECT, ENGINE_RAG_FUNCTION or
 * ENGINE_RAG_WINDOW) with r->evidence as the retrieved spans (ignored for
 * direct): sets r->answer, appends the verified citations with their text to
 * r->cites and adds the tokens to r->tokens_in/out. Returns 0, or -1 with
 * r->error set, which starts with r->mode (the engine's name for the mode,
 * set by the caller: this module sits below the engine and calls nothing of
 * it). */
int modes_llm_answer(struct modes_llm *m, enum engine_mode mode, struct engine_result *r);

#endif
