/* Tests of the front end's model of the answer as it is written, driven by
 * hand-made events: EVQ_ANSWER_DELTA pieces build its text (reasoning
 * counted, not shown), the first one asks for the layout (the Answer pane
 * appears), a reset drops the text and is counted, the rate is not guessed
 * before pieces have come over a fifth of a second, EVQ_ANSWER replaces the
 * text with the checked answer and carries its stopped mark, and a new
 * question forgets what was being written. */
#include "tap.h"
#include "model.h"
#include "util.h"

#include <string.h>

static int piece(struct ui_model *m, int kind, const char *text)
{
    struct evq_event e;
    evq_event_init(&e, EVQ_ANSWER_DELTA);
    e.a = kind;
    e.text = text ? xstrdup(text) : NULL;
    e.b = text ? (long long)strlen(text) : 0;
    int d = ui_model_apply(m, &e, NULL);
    evq_event_clear(&e);
    return d;
}

static void answer(struct ui_model *m, const char *md, int stopped)
{
    struct evq_event e;
    evq_event_init(&e, EVQ_ANSWER);
    e.text = xstrdup(md);
    e.text2 = xstrdup("pkg/a.py:1-3\n");
    e.b = stopped;
    ui_model_apply(m, &e, NULL);
    evq_event_clear(&e);
}

int main(void)
{
    struct ui_model m;
    ui_model_init(&m, "q", 3, 1.0, 1, 10);
    ok(!m.writing.active, "nothing is being written at first");
    int d = piece(&m, EVQ_DELTA_REASONING, "let me see");
    ok(m.writing.active && m.writing.reasoning_only && m.writing.text.len == 0,
       "reasoning first: the answer is being written, no text yet");
    ok((d & UI_DIRTY_LAYOUT) && (d & UI_DIRTY_ANSWER) && (d & UI_DIRTY_STATUS),
       "the first piece asks for the layout (the pane appears), the pane and the status line");
    d = piece(&m, EVQ_DELTA_TEXT, "It is in ");
    ok(!(d & UI_DIRTY_LAYOUT) && (d & UI_DIRTY_ANSWER), "later pieces redraw the pane only");
    piece(&m, EVQ_DELTA_TEXT, "`pkg/a.py:1-3`");
    is_str(buf_str(&m.writing.text), "It is in `pkg/a.py:1-3`", "the text pieces joined");
    ok(!m.writing.reasoning_only, "text has come");
    is_int(m.writing.bytes, 9 + 14, "the bytes after the first piece counted for the rate");
    double r = -1;
    m.writing.t_last = m.writing.t_first + 100;
    ok(!ui_model_writing_rate(&m, &r), "no rate before a fifth of a second of pieces");
    m.writing.t_last = m.writing.t_first + 2000;
    m.writing.bytes = 400;
    ok(ui_model_writing_rate(&m, &r) && r > 49.9 && r < 50.1, "the rate: 400 bytes in 2 s is ~50 tokens a second");
    piece(&m, EVQ_DELTA_RESET, NULL);
    ok(m.writing.text.len == 0 && m.writing.rewrites == 1, "a reset drops the text, counted");
    piece(&m, EVQ_DELTA_TEXT, "Again");
    is_str(buf_str(&m.writing.text), "Again", "the text written again");

    answer(&m, "Again, checked.", 1);
    ok(!m.writing.active && m.writing.text.len == 0, "the answer replaces the text as written");
    ok(m.answer && !strcmp(m.answer->markdown, "Again, checked.") && m.answer->cites.n == 1,
       "the checked answer with its citation");
    ok(m.answer && m.answer->stopped, "its stopped mark kept");

    piece(&m, EVQ_DELTA_TEXT, "Next");
    struct evq_event e;
    evq_event_init(&e, EVQ_QUESTION);
    e.text = xstrdup("another");
    ui_model_apply(&m, &e, NULL);
    evq_event_clear(&e);
    ok(!m.writing.active && m.writing.text.len == 0, "a new question forgets what was being written");
    ui_model_free(&m);
    return done_testing();
}
