/*
 * llm_stream_messages: the Anthropic messages API's event stream rebuilt into
 * the message a request without "stream" gets (llm_stream.h). message_start
 * carries the message with its input usage; each content block comes as
 * content_block_start, deltas (text_delta, thinking_delta, signature_delta,
 * input_json_delta: the tool input's JSON in pieces) and content_block_stop;
 * message_delta carries the stop_reason and the output usage (cumulative);
 * message_stop ends the stream; ping is nothing; an error event (such as
 * overloaded_error) ends it with the error. Text goes to the reader as
 * text, thinking as reasoning; with a schema the first tool_use block's
 * input is the reply (llm_anthropic.c), so its JSON is handed as the text,
 * anything handed before it voided.
 */
#include "llm_stream.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The block an event names by its index, or -1 when out of range. */
static int block_index(const struct llm_stream *s, const cJSON *j)
{
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(j, "index");
    if (!cJSON_IsNumber(i) || i->valueint < 0 || i->valueint >= LLM_STREAM_MAX_BLOCKS) return -1;
    return i->valueint;
}

static int block_start(struct llm_stream *s, const cJSON *j)
{
    int i = block_index(s, j);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "content_block");
    if (i < 0 || !cJSON_IsObject(b)) return 0;
    cJSON_Delete(s->blocks[i].block);
    s->blocks[i].block = cJSON_Duplicate(b, 1);
    if (i >= s->nblocks) s->nblocks = i + 1;
    const char *type = str_of(b, "type");
    if (!strcmp(type, "tool_use") && s->req->schema && !s->tool_text) {
        s->tool_text = i + 1;
        if (s->text.len) {   /* the tool input, not the text before it, is the reply */
            llm_stream_reset_text(s);
            for (int k = 0; k < i; k++)   /* the thinking handed stays */
                if (s->blocks[k].block && !strcmp(str_of(s->blocks[k].block, "type"), "thinking") &&
                    llm_stream_emit(s, LLM_DELTA_REASONING, s->blocks[k].text.data ? s->blocks[k].text.data : "",
                                    s->blocks[k].text.len))
                    return 1;
        }
    }
    const char *t = !strcmp(type, "text") ? str_of(b, "text") : !strcmp(type, "thinking") ? str_of(b, "thinking") : "";
    buf_adds(&s->blocks[i].text, t);
    if (!strcmp(type, "thinking")) return llm_stream_emit(s, LLM_DELTA_REASONING, t, strlen(t));
    return s->tool_text ? 0 : llm_stream_emit(s, LLM_DELTA_TEXT, t, strlen(t));
}

static int block_delta(struct llm_stream *s, const cJSON *j)
{
    int i = block_index(s, j);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "delta");
    if (i < 0 || !cJSON_IsObject(d)) return 0;
    if (i >= s->nblocks) s->nblocks = i + 1;
    const char *type = str_of(d, "type");
    if (!strcmp(type, "text_delta")) {
        const char *t = str_of(d, "text");
        buf_adds(&s->blocks[i].text, t);
        return s->tool_text ? 0 : llm_stream_emit(s, LLM_DELTA_TEXT, t, strlen(t));
    }
    if (!strcmp(type, "thinking_delta")) {
        const char *t = str_of(d, "thinking");
        buf_adds(&s->blocks[i].text, t);
        return llm_stream_emit(s, LLM_DELTA_REASONING, t, strlen(t));
    }
    if (!strcmp(type, "signature_delta")) {
        buf_adds(&s->blocks[i].signature, str_of(d, "signature"));
        return 0;
    }
    if (!strcmp(type, "input_json_delta")) {
        const char *t = str_of(d, "partial_json");
        buf_adds(&s->blocks[i].text, t);
        return s->tool_text == i + 1 ? llm_stream_emit(s, LLM_DELTA_TEXT, t, strlen(t)) : 0;
    }
    return 0;   /* citations_delta and the like: not read */
}

/* message_delta's usage: each count replaces message_start's (they are cumulative). */
static void merge_usage(struct llm_stream *s, const cJSON *u)
{
    if (!cJSON_IsObject(u)) return;
    if (!s->usage) s->usage = cJSON_CreateObject();
    const cJSON *f;
    cJSON_ArrayForEach(f, u) {
        if (cJSON_IsNull(f)) continue;
        cJSON_DeleteItemFromObjectCaseSensitive(s->usage, f->string);
        cJSON_AddItemToObject(s->usage, f->string, cJSON_Duplicate(f, 1));
    }
}

static int llm_stream_messages_event(struct llm_stream *s, const char *event, const cJSON *j)
{
    const char *type = *str_of(j, "type") ? str_of(j, "type") : event;
    if (!strcmp(type, "message_start")) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
        cJSON_Delete(s->doc);
        s->doc = cJSON_IsObject(m) ? cJSON_Duplicate(m, 1) : cJSON_CreateObject();
        merge_usage(s, cJSON_GetObjectItemCaseSensitive(m, "usage"));
    } else if (!strcmp(type, "content_block_start")) {
        return block_start(s, j);
    } else if (!strcmp(type, "content_block_delta")) {
        return block_delta(s, j);
    } else if (!strcmp(type, "message_delta")) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "delta");
        if (*str_of(d, "stop_reason")) snprintf(s->finish, sizeof s->finish, "%s", str_of(d, "stop_reason"));
        merge_usage(s, cJSON_GetObjectItemCaseSensitive(j, "usage"));
        if (!s->doc) s->doc = cJSON_CreateObject();
        const cJSON *f;
        cJSON_ArrayForEach(f, d) {   /* stop_reason, stop_sequence, stop_details */
            cJSON_DeleteItemFromObjectCaseSensitive(s->doc, f->string);
            cJSON_AddItemToObject(s->doc, f->string, cJSON_Duplicate(f, 1));
        }
    } else if (!strcmp(type, "message_stop")) {
        s->done = 1;
    } else if (!strcmp(type, "error") || cJSON_GetObjectItemCaseSensitive(j, "error")) {
        cJSON_Delete(s->error);
        s->error = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(j, "error"), 1);
        if (!s->error) s->error = cJSON_CreateString("an error event without an error object");
        s->done = 1;
    }
    return 0;   /* ping, content_block_stop */
}

/* A block as the whole message holds it: its text, thinking or tool input put together. */
static cJSON *finished_block(struct llm_stream *s, int i)
{
    cJSON *b = s->blocks[i].block ? cJSON_Duplicate(s->blocks[i].block, 1) : NULL;
    if (!b) return NULL;
    const char *type = str_of(b, "type");
    const char *t = buf_str(&s->blocks[i].text);
    const char *field = !strcmp(type, "text") ? "text" : !strcmp(type, "thinking") ? "thinking" : NULL;
    if (field) {
        cJSON_DeleteItemFromObjectCaseSensitive(b, field);
        cJSON_AddStringToObject(b, field, t);
        if (s->blocks[i].signature.len) {
            cJSON_DeleteItemFromObjectCaseSensitive(b, "signature");
            cJSON_AddStringToObject(b, "signature", buf_str(&s->blocks[i].signature));
        }
    } else if (!strcmp(type, "tool_use") || !strcmp(type, "server_tool_use")) {
        cJSON *in = *t ? cJSON_Parse(t) : NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(b, "input");
        cJSON_AddItemToObject(b, "input", cJSON_IsObject(in) ? in : cJSON_CreateObject());
        if (in && !cJSON_IsObject(in)) cJSON_Delete(in);
    }
    return b;
}

static cJSON *llm_stream_messages_doc(struct llm_stream *s)
{
    cJSON *doc;
    if (s->error) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "type", "error");
        cJSON_AddItemToObject(doc, "error", cJSON_Duplicate(s->error, 1));
        return doc;
    }
    if (!s->done && !s->finish[0]) return NULL;
    doc = s->doc ? cJSON_Duplicate(s->doc, 1) : cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "content");
    cJSON *content = cJSON_AddArrayToObject(doc, "content");
    for (int i = 0; i < s->nblocks; i++) {
        cJSON *b = finished_block(s, i);
        if (b) cJSON_AddItemToArray(content, b);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "usage");
    if (s->usage) cJSON_AddItemToObject(doc, "usage", cJSON_Duplicate(s->usage, 1));
    return doc;
}

const struct llm_stream_api llm_stream_messages_api = {LLM_WIRE_MESSAGES, llm_stream_messages_event,
                                                      llm_stream_messages_doc};
