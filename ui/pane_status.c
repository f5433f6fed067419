/*
 * pane_status: the status line: repository, policy and model, iteration i/N,
 * tokens in/out, the cost of the model calls when a model has a price,
 * the steps the offline policy decided for the model and the failed model
 * calls (when there are any), elapsed time and the search state (indexing with its
 * progress, searching, paused, answering, done with the stop reason, error).
 * While the model writes the answer, the state says how fast: tokens a
 * second estimated from the bytes (4 a token), marked "est.", and that Esc
 * stops it.
 * The elapsed time can be fixed by a test hook (test_hooks.h) for repeatable
 * screens.
 */
#include "ui.h"
#include "llm.h"

#include <stdio.h>
#include <string.h>

static void fmt_tokens(char *out, size_t n, long long v)
{
    if (v >= 10000000) snprintf(out, n, "%lldM", v / 1000000);
    else if (v >= 10000) snprintf(out, n, "%lldk", v / 1000);
    else snprintf(out, n, "%lld", v);
}

/* "answering: writing ~42 tok/s est., Esc stops" while the answer comes. */
static void writing_state(const struct ui_model *m, char *out, size_t n)
{
    const struct ui_writing *w = &m->writing;
    const char *doing = w->stop_asked ? "stopping" : w->reasoning_only ? "reasoning" : "writing";
    double r;
    char rate[48] = "";
    if (ui_model_writing_rate(m, &r)) snprintf(rate, sizeof rate, " ~%.0f tok/s est.", r);
    snprintf(out, n, "answering: %s%s%s", doing, rate, w->stop_asked ? "" : ", Esc stops");
}

void status_elapsed(struct ui *ui, char *out, size_t n)
{
    if (ui->fixed_elapsed) {
        snprintf(out, n, "%s", ui->fixed_elapsed);
        return;
    }
    int64_t ms = ui_clock_elapsed(&ui->clock, now_ms());
    if (ms < 0) {
        snprintf(out, n, "--:--");
        return;
    }
    long long s = (long long)(ms / 1000);
    if (s >= 3600) snprintf(out, n, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else snprintf(out, n, "%02lld:%02lld", s / 60, s % 60);
}

static void draw(struct ui *ui, struct pane *p)
{
    const struct ui_model *m = &ui->m;
    char state[160];
    const char *sn = evq_state_name(m->state);
    /* the index update's phases, then SemanticSearch's vectors */
    static const char *const phases[][2] = {{"scan", "scan files"}, {"parse", "parse"},
                                            {"resolve", "resolve names"}, {"write", "write indexes"},
                                            {"vectors", "vectors"}};
    int ph = -1;
    for (int i = 0; m->state == EVQ_STATE_INDEXING && m->state_text && i < (int)ARRAY_LEN(phases); i++)
        if (!strcmp(m->state_text, phases[i][0])) ph = i;
    if (ui->replay) snprintf(state, sizeof state, "replay");
    else if (ph >= 0 && m->progress_total > 0)
        snprintf(state, sizeof state, "indexing %d/%d: %s %lld/%lld (%lld%%)", ph + 1, (int)ARRAY_LEN(phases),
                 phases[ph][1], m->progress_done, m->progress_total, m->progress_done * 100 / m->progress_total);
    else if (ph >= 0)
        snprintf(state, sizeof state, "indexing %d/%d: %s", ph + 1, (int)ARRAY_LEN(phases), phases[ph][1]);
    else if (m->state == EVQ_STATE_INDEXING && m->progress_total > 0)
        snprintf(state, sizeof state, "indexing %lld/%lld (%lld%%)", m->progress_done,
                 m->progress_total, m->progress_done * 100 / m->progress_total);
    else if (m->state == EVQ_STATE_ANSWERING && m->writing.active) writing_state(m, state, sizeof state);
    else if ((m->state == EVQ_STATE_DONE || m->state == EVQ_STATE_ERROR) && m->state_text)
        snprintf(state, sizeof state, "%s: %s", sn, m->state_text);
    else snprintf(state, sizeof state, "%s", sn);
    char tin[32], tout[40], el[32];
    fmt_tokens(tin, sizeof tin, m->tokens_in);
    fmt_tokens(tout, sizeof tout, m->tokens_out);
    struct llm_usage_entry e;
    if (ui->usage && llm_usage_get(ui->usage, NULL, &e) == 0 && e.calls - e.failures > e.unpriced_calls) {
        size_t k = strlen(tout);
        snprintf(tout + k, sizeof tout - k, " $%.*f", e.cost_usd < 0.1 ? 4 : 2, e.cost_usd);
    }
    /* who decided: the steps the offline policy decided for the model and
     * the model calls that failed, as --json counts them (fallback_steps,
     * failed_calls of the ledger); shown once there is any */
    char fb[80] = "";
    int nfb = 0, nsteps = m->t->n > 1 ? m->t->n - 1 : 0;
    for (int id = 1; id < m->t->n; id++) nfb += m->t->nodes[id].fallback != 0;
    long calls = 0, failed = 0, again = 0;
    if (ui->usage && llm_usage_get(ui->usage, NULL, &e) == 0) {
        calls = e.calls;
        failed = e.failures;
        again = e.retried_calls;   /* a stall or a 5xx a retry got past: said, as --ask says it */
    }
    if (nfb || failed || again) {
        snprintf(fb, sizeof fb, " | offline %d/%d steps, %ld/%ld calls failed", nfb, nsteps, failed, calls);
        if (again) {
            size_t k = strlen(fb);
            snprintf(fb + k, sizeof fb - k, ", %ld sent again", again);
        }
    }
    status_elapsed(ui, el, sizeof el);
    snprintf(ui->shown_elapsed, sizeof ui->shown_elapsed, "%s", el);
    char *line = xasprintf(" %s%s | %s | iter %d/%d | tok %s/%s%s | %s | %s%s", ui->repo_name, ui->provenance,
                           ui->policy_line, m->iteration, m->iterations_total, tin, tout, fb, el, state,
                           ui->follow ? "" : " | cursor held");
    attr_t a = ui_attr(ui, m->state == EVQ_STATE_ERROR ? R_ERROR : R_STATUS);
    mvwhline(p->win, 0, 0, ' ' | a, p->w);
    /* The state matters most: when the line is too long, the policy text gives way, and the
     * offline counts go after the state. */
    struct buf b = BUF_INIT;
    text_safe(&b, line, strlen(line), 0, ui->text_flags);
    if (text_width(buf_str(&b), b.len) > p->w) {
        free(line);
        line = xasprintf(" %s | iter %d/%d | tok %s/%s | %s | %s%s", ui->repo_name, m->iteration,
                         m->iterations_total, tin, tout, el, state, fb);
        buf_reset(&b);
        text_safe(&b, line, strlen(line), 0, ui->text_flags);
    }
    draw_safe(p->win, 0, 0, p->w, buf_str(&b), b.len, a);
    buf_free(&b);
    free(line);
}

const struct pane_ops pane_status_ops = {"status", draw, NULL, NULL};
