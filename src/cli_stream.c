/*
 * cli_stream: the answer printed to a terminal as it is written, and C-c
 * as the stop key while it is. See cli_stream.h.
 */
#include "cli_stream.h"
#include "util.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The signal handler's view: set once the answer's first piece came (C-c
 * then stops the answer), and C-c seen since. */
static atomic_int answer_begun, stop_asked;
static struct sigaction old_int;

static void on_int(int sig)
{
    if (atomic_load(&answer_begun)) {
        atomic_store(&stop_asked, 1);
        return;
    }
    /* before the answer C-c does what it did: the disposition it had (the
     * signal is blocked in here, so it arrives once this returns) */
    sigaction(SIGINT, &old_int, NULL);
    raise(sig);
}

struct ask_tty {
    FILE *out;
    struct buf shown;   /* the answer's text since it was last written again */
    size_t printed;     /* bytes of shown on the terminal */
    int any;            /* anything was printed */
};

static void put_safe(struct ask_tty *t, const char *s, size_t n)
{
    char *raw = xstrndup(s, n), *safe = text_term_safe(raw);
    fputs(safe, t->out);
    fflush(t->out);
    free(safe);
    free(raw);
}

/* Prints what of shown is ready: not a character whose bytes have not all
 * come, nor trailing blanks (the checked answer drops them at its end, and
 * what follows them may still be printed as it is). */
static void print_ready(struct ask_tty *t)
{
    const unsigned char *s = (const unsigned char *)t->shown.data;
    size_t end = t->shown.len;
    for (size_t back = 1; back <= 3 && back <= end; back++) {
        unsigned char c = s[end - back];
        if ((c & 0xC0) == 0x80) continue;   /* a continuation byte: look further back */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (need > back) end -= back;
        break;
    }
    while (end > t->printed && strchr(" \t\r\n", s[end - 1])) end--;
    if (end <= t->printed) return;
    put_safe(t, t->shown.data + t->printed, end - t->printed);
    t->printed = end;
    t->any = 1;
}

static int on_piece(void *ud, int kind, const char *text, size_t len)
{
    struct ask_tty *t = ud;
    atomic_store(&answer_begun, 1);
    if (atomic_load(&stop_asked)) return 1;
    if (kind == 2) {   /* written again: the terminal keeps the old text, so say so */
        if (t->printed) {
            fputs("\n\n--- the answer is being written again ---\n\n", t->out);
            fflush(t->out);
        }
        buf_reset(&t->shown);
        t->printed = 0;
    } else if (kind == 0 && len) {
        buf_add(&t->shown, text, len);
        print_ready(t);
    }
    return atomic_load(&stop_asked);
}

struct ask_tty *ask_tty_begin(FILE *out)
{
    struct ask_tty *t = xcalloc(1, sizeof *t);
    t->out = out;
    atomic_store(&answer_begun, 0);
    atomic_store(&stop_asked, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    return t;
}

void ask_tty_hooks(struct ask_tty *t, struct engine_ask_hooks *h)
{
    h->answer_sink = on_piece;
    h->answer_ctx = t;
}

/* Why the checked answer is not the printed text going on. */
static const char *differs_why(const struct engine_result *r)
{
    if (r->stopped) return "the answer was stopped; what had arrived, as checked";
    if (r->answered_by && !strcmp(r->answered_by, "offline"))
        return "the model's answer failed; the answer given instead";
    if (r->unwrapped)
        return "the model wrote its answer inside JSON, with words around it; the answer it holds, as checked";
    return "the checked answer differs from the text above (citations no evidence verifies are removed, notes "
           "added); the answer as checked";
}

int ask_tty_end(struct ask_tty *t, const struct engine_result *r)
{
    if (!t) return 0;
    sigaction(SIGINT, &old_int, NULL);
    int any = t->any;
    if (!any) {
    } else if (!r) {
        fputs("\n\n--- the question is asked again: the text above is dropped ---\n\n", t->out);
    } else if (!r->answer) {
        fputs("\n\n--- the text above is not an answer: the question failed (the reason follows) ---\n", t->out);
    } else {
        char *md = engine_result_markdown(r);
        if (strncmp(md, buf_str(&t->shown), t->printed) != 0) {
            fprintf(t->out, "\n\n--- %s: ---\n\n", differs_why(r));
            put_safe(t, md, strlen(md));
        } else {
            put_safe(t, md + t->printed, strlen(md + t->printed));
        }
        free(md);
    }
    fflush(t->out);
    buf_free(&t->shown);
    free(t);
    return any;
}
