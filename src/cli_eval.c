/*
 * cli_eval: the evaluation modes.
 *
 *   --judge ANSWERS --reference REF --out SCORES [--judge-model SPEC ...]
 *       scores every answer of a --batch answers file with each judge
 *       (judge.h) and computes its grounding metrics (metrics.h); writes one
 *       line per answer, in input order, as each completes. --jobs N judges N
 *       answers at once. With no judge configured only the metrics are
 *       written, and stderr says so. SCORES is appended to, a line in one
 *       write: a run stopped part way resumes after the lines it wrote
 *       (open_scores), and a file holding other scores is left untouched.
 *   --report FILE... [--reference REF] [--json] [--out FILE]
 *       the Markdown tables (report.h) of scores files, or of answers files
 *       whose metrics are computed against REF; --json gives the numbers as
 *       one JSON object.
 *
 * Inputs are checked whole before any model is called: a missing, unreadable
 * or malformed file, or an answer with no reference, stops with FILE:LINE and
 * status 2.
 *
 * A scores line: {"id", "question", "system", "mode", "policy", ["model"],
 * ["category_type", "category"], "judges": [{"judge", "model", "scores":
 * {five dimensions} | null, "total" | null, "rationale", "attempts",
 * "error", "tokens"}], "scores": {mean per dimension over the judges that
 * answered} | null, "total" | null, "judged": K, "tokens" (the answer's) |
 * null, "usage": {"total": {"cached_input_tokens", "cost_usd"}} (the answer's
 * model ledger, when it had one), "judge_tokens", "metrics": {"file_hit@1", "file_hit@5",
 * "identifier_recall", "identifiers_found", "identifiers_total",
 * "gold_files_from", "gold_identifiers_from"}, "answer_error"}.
 */
#include "cli.h"
#include "cli_settings.h"
#include "judge.h"
#include "metrics.h"
#include "report.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EVAL_MAX_JOBS 64

struct judge_run {
    const struct drqa_opts *o;
    struct eval_answers *answers;
    const struct eval_ref **refs;   /* per answer */
    struct judge_set *judges;
    struct prompt *prompt;
    struct llm_usage usage;
    int out;                        /* the scores file, opened O_APPEND (-1: none) */
    pthread_mutex_t lock;
    size_t next;                    /* next answer to take */
    size_t written;                 /* answers written so far (in order) */
    cJSON **done;                   /* finished lines waiting for their turn */
    int write_failed;
    long scored, unscored, judge_scores, judge_missing;
};

static void add_int_or_null(cJSON *o, const char *name, int v)
{
    if (v >= 0) cJSON_AddNumberToObject(o, name, v);
    else cJSON_AddNullToObject(o, name);
}

static cJSON *scores_json(const int *v)
{
    cJSON *s = cJSON_CreateObject();
    for (int d = 0; d < EVAL_NDIM; d++) cJSON_AddNumberToObject(s, eval_dims[d], v[d]);
    return s;
}

/* What names the answer in its scores line: id, question, system, mode,
 * policy, model, category. */
static void add_answer_head(cJSON *o, const struct eval_answer *a, const struct eval_ref *ref)
{
    cJSON_AddStringToObject(o, "id", a->id);
    cJSON_AddStringToObject(o, "question", a->question ? a->question : ref->question);
    char *system = eval_system_name(a->mode, a->policy, a->model);
    cJSON_AddStringToObject(o, "system", system);
    free(system);
    if (a->mode) cJSON_AddStringToObject(o, "mode", a->mode);
    else cJSON_AddNullToObject(o, "mode");
    if (a->policy) cJSON_AddStringToObject(o, "policy", a->policy);
    else cJSON_AddNullToObject(o, "policy");
    if (a->model) cJSON_AddStringToObject(o, "model", a->model);
    if (ref->category_type) cJSON_AddStringToObject(o, "category_type", ref->category_type);
    if (ref->category) cJSON_AddStringToObject(o, "category", ref->category);
}

/* One judge's verdict (r) as its entry of "judges". */
static cJSON *verdict_json(const struct judge *jd, const struct judge_outcome *r)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "judge", jd->name);
    cJSON_AddStringToObject(x, "model", jd->model);
    if (r->ok) {
        int total = 0;
        for (int d = 0; d < EVAL_NDIM; d++) total += r->s.v[d];
        cJSON_AddItemToObject(x, "scores", scores_json(r->s.v));
        cJSON_AddNumberToObject(x, "total", total);
        if (r->s.rationale[0]) cJSON_AddStringToObject(x, "rationale", r->s.rationale);
        else cJSON_AddNullToObject(x, "rationale");
        cJSON_AddNullToObject(x, "error");
    } else {
        cJSON_AddNullToObject(x, "scores");
        cJSON_AddNullToObject(x, "total");
        cJSON_AddNullToObject(x, "rationale");
        cJSON_AddStringToObject(x, "error", r->error);
    }
    cJSON_AddNumberToObject(x, "attempts", r->attempts);
    cJSON *tk = cJSON_AddObjectToObject(x, "tokens");
    cJSON_AddNumberToObject(tk, "input", (double)r->input_tokens);
    cJSON_AddNumberToObject(tk, "output", (double)r->output_tokens);
    return x;
}

/* The answer's own tokens and its model ledger's total, as --report reads them. */
static void add_answer_usage(cJSON *o, const struct eval_answer *a)
{
    if (a->has_tokens) {
        cJSON *tk = cJSON_AddObjectToObject(o, "tokens");
        cJSON_AddNumberToObject(tk, "input", a->tokens_in);
        cJSON_AddNumberToObject(tk, "output", a->tokens_out);
    } else {
        cJSON_AddNullToObject(o, "tokens");
    }
    if (a->has_usage) {   /* the answer's model ledger, its total: what --report reads */
        cJSON *t = cJSON_AddObjectToObject(cJSON_AddObjectToObject(o, "usage"), "total");
        cJSON_AddNumberToObject(t, "cached_input_tokens", a->tokens_cached);
        if (a->cost_usd >= 0) cJSON_AddNumberToObject(t, "cost_usd", a->cost_usd);
        else cJSON_AddNullToObject(t, "cost_usd");
    }
}

/* The grounding metrics of the answer against its reference (metrics.h). */
static void add_metrics(cJSON *o, const struct eval_answer *a, const struct eval_ref *ref)
{
    struct metrics_result m;
    metrics_compute(&ref->gold, (const char *const *)a->cited.v, a->cited.n, a->answer, a->evidence, &m);
    cJSON *mj = cJSON_AddObjectToObject(o, "metrics");
    add_int_or_null(mj, "file_hit@1", m.hit1);
    add_int_or_null(mj, "file_hit@5", m.hit5);
    add_int_or_null(mj, "file_hit@5_citations", m.hit5c);
    if (m.ident_recall >= 0) cJSON_AddNumberToObject(mj, "identifier_recall", m.ident_recall);
    else cJSON_AddNullToObject(mj, "identifier_recall");
    cJSON_AddNumberToObject(mj, "identifiers_found", m.idents_found);
    cJSON_AddNumberToObject(mj, "identifiers_total", m.idents_total);
    cJSON_AddStringToObject(mj, "gold_files_from", ref->gold.files_from_text ? "reference_text" : "gold_files");
    cJSON_AddStringToObject(mj, "gold_identifiers_from",
                            ref->gold.idents_from_text ? "reference_text" : "gold_identifiers");
}

/* One answer: metrics and every judge. Returns its scores line. */
static cJSON *judge_one(struct judge_run *run, size_t i)
{
    const struct eval_answer *a = &run->answers->v[i];
    const struct eval_ref *ref = run->refs[i];
    cJSON *o = cJSON_CreateObject();
    add_answer_head(o, a, ref);

    int empty = !a->answer || !*a->answer;
    char perr[300] = "";
    char *prompt = NULL;
    if (!empty && run->judges->n)
        prompt = judge_prompt_render(run->prompt, a->question ? a->question : ref->question, ref->answer, a->answer,
                                     perr, sizeof perr);
    double sum[EVAL_NDIM] = {0};
    int nok = 0;
    long jin = 0, jout = 0, nmissing = 0;
    cJSON *judges = cJSON_AddArrayToObject(o, "judges");
    for (size_t j = 0; j < run->judges->n; j++) {
        const struct judge *jd = &run->judges->v[j];
        struct judge_outcome r;
        memset(&r, 0, sizeof r);
        if (empty && a->error)
            snprintf(r.error, sizeof r.error, "the answer is empty (its error: %s); not sent to the judge", a->error);
        else if (empty)
            snprintf(r.error, sizeof r.error, "the answer is empty; not sent to the judge");
        else if (!prompt)
            snprintf(r.error, sizeof r.error, "%s", perr);
        else
            judge_ask(jd->backend, prompt, &run->usage, &r);
        if (r.ok) {
            for (int d = 0; d < EVAL_NDIM; d++) sum[d] += r.s.v[d];
            nok++;
        } else {
            nmissing++;
        }
        jin += r.input_tokens;
        jout += r.output_tokens;
        cJSON_AddItemToArray(judges, verdict_json(jd, &r));
    }
    free(prompt);
    if (nok) {
        cJSON *s = cJSON_AddObjectToObject(o, "scores");
        double total = 0;
        for (int d = 0; d < EVAL_NDIM; d++) {
            cJSON_AddNumberToObject(s, eval_dims[d], sum[d] / nok);
            total += sum[d] / nok;
        }
        cJSON_AddNumberToObject(o, "total", total);
    } else {
        cJSON_AddNullToObject(o, "scores");
        cJSON_AddNullToObject(o, "total");
    }
    cJSON_AddNumberToObject(o, "judged", nok);
    add_answer_usage(o, a);
    cJSON *jt = cJSON_AddObjectToObject(o, "judge_tokens");
    cJSON_AddNumberToObject(jt, "input", (double)jin);
    cJSON_AddNumberToObject(jt, "output", (double)jout);
    add_metrics(o, a, ref);
    if (a->error) cJSON_AddStringToObject(o, "answer_error", a->error);
    else cJSON_AddNullToObject(o, "answer_error");

    pthread_mutex_lock(&run->lock);
    if (run->judges->n) {
        if (nok) run->scored++;
        else run->unscored++;
    }
    run->judge_scores += nok;
    run->judge_missing += nmissing;
    pthread_mutex_unlock(&run->lock);
    return o;
}

/* Stores line i and writes every finished line that is next in order. */
static void emit(struct judge_run *run, size_t i, cJSON *line)
{
    pthread_mutex_lock(&run->lock);
    run->done[i] = line;
    while (run->written < run->answers->n && run->done[run->written]) {
        cJSON *l = run->done[run->written];
        char *s = cJSON_PrintUnformatted(l);
        /* the whole line in one write(): a kill leaves it whole or absent */
        char *text = s ? xasprintf("%s\n", s) : NULL;
        if (!text || write_all(run->out, text, strlen(text)) != 0) run->write_failed = 1;
        free(text);
        free(s);
        cJSON_Delete(l);
        run->done[run->written] = NULL;
        run->written++;
    }
    pthread_mutex_unlock(&run->lock);
}

static void *judge_worker(void *arg)
{
    struct judge_run *run = arg;
    for (;;) {
        pthread_mutex_lock(&run->lock);
        size_t i = run->next < run->answers->n ? run->next++ : (size_t)-1;
        pthread_mutex_unlock(&run->lock);
        if (i == (size_t)-1) return NULL;
        emit(run, i, judge_one(run, i));
    }
}

/* Whether line (a scores line) is answer a's, by the judges of this run. */
static int same_scores(const cJSON *line, const struct eval_answer *a, const struct judge_set *judges)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(line, "id"));
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(line, "judges");
    if (!id || strcmp(id, a->id) || !cJSON_IsArray(js) || (size_t)cJSON_GetArraySize(js) != judges->n) return 0;
    size_t j = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, js) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "judge"));
        const char *model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "model"));
        if (!name || !model || strcmp(name, judges->v[j].name) || strcmp(model, judges->v[j].model)) return 0;
        j++;
    }
    return 1;
}

static int scores_line_ok(const cJSON *j)
{
    return cJSON_GetObjectItemCaseSensitive(j, "id") && cJSON_GetObjectItemCaseSensitive(j, "judges");
}

static const struct cli_jsonl_kind scores_kind = {
    .name = "--judge scores", .line = "a scores line", .again = "answer is judged", .not_ours = "has no \"id\" and \"judges\"",
    .line_ok = scores_line_ok,
};

/* Opens the scores file for appending (cli_open_jsonl_out: a last line cut
 * short by a kill is cut off). What it holds already must be the scores of
 * the first answers, in order, by the same judges (what a run stopped part
 * way leaves): those answers are not judged again (*kept). Anything else (other
 * answers, other judges, not scores) is an error and the file is left as
 * it was. Returns the descriptor, or -1 with err (*usage: 1 bad input, 2
 * another run writes the file). The
 * kept lines' counts are added to run's. */
static int open_scores(const char *path, const struct eval_answers *answers, const struct judge_set *judges,
                       struct judge_run *run, size_t *kept, int *usage, char *err, size_t errlen)
{
    *kept = 0;
    *usage = 0;
    char *text;
    int regular;
    int fd = cli_open_jsonl_out(path, (size_t)1 << 31, &scores_kind, &text, &regular, err, errlen);
    if (fd < 0) {
        *usage = fd == CLI_OUT_BUSY ? 2 : fd == CLI_OUT_FOREIGN;
        return -1;
    }
    size_t whole = text ? strlen(text) : 0, n = 0;
    int lineno = 0, bad = 0;
    for (size_t at = 0; at < whole && !bad;) {
        char *nl = memchr(text + at, '\n', whole - at);
        size_t end = (size_t)(nl - text);
        lineno++;
        cJSON *j = cJSON_ParseWithLength(text + at, end - at);
        if (n >= answers->n || !cJSON_IsObject(j) || !same_scores(j, &answers->v[n], judges)) {
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "id"));
            if (n >= answers->n)
                snprintf(err, errlen, "'%s' has more lines than '%s' has answers", path, answers->path);
            else
                snprintf(err, errlen, "%s:%d: %s, where this run scores answer '%s'%s", path, lineno,
                         !cJSON_IsObject(j) ? "not a scores line"
                         : !id ? "a line with no id"
                         : strcmp(id, answers->v[n].id) ? "the scores of another answer"
                                                        : "scores by other judges",
                         answers->v[n].id, judges->n ? "" : " with no judge");
            bad = 1;
        }
        if (!bad && judges->n) {
            const cJSON *jd = cJSON_GetObjectItemCaseSensitive(j, "judged");
            int judged = cJSON_IsNumber(jd) ? jd->valueint : 0;
            if (judged > 0) run->scored++;
            else run->unscored++;
            run->judge_scores += judged > 0 ? judged : 0;
            run->judge_missing += (long)judges->n - (judged > 0 ? judged : 0);
        }
        cJSON_Delete(j);
        if (!bad) n++;
        at = end + 1;
    }
    free(text);
    if (bad) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, "; the file is left as it is: give another --out, or remove it to "
                 "score again");
        *usage = 1;
        close(fd);
        return -1;
    }
    *kept = n;
    return fd;
}

/* Whether a and b name the same file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The answers and their references, each answer matched to its reference
 * (run->refs). 0, or -1 said. */
static int judge_inputs(const struct drqa_opts *o, struct eval_refs *refs, struct eval_answers *answers,
                        struct judge_run *run)
{
    char err[1024];
    if (eval_refs_load(refs, o->reference, err, sizeof err) ||
        eval_answers_load(answers, o->judge_in, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return -1;
    }
    run->refs = xcalloc(answers->n, sizeof *run->refs);
    for (size_t i = 0; i < answers->n; i++) {
        const struct eval_answer *a = &answers->v[i];
        run->refs[i] = eval_refs_find(refs, a->id_from_line ? NULL : a->id, a->question);
        if (!run->refs[i]) {
            fprintf(stderr, "drqa-tui: %s:%d: no reference for id '%s' in %s (matched by id, then by question "
                    "text); check that both files are for the same questions\n",
                    answers->path, a->line, a->id, refs->path);
            return -1;
        }
    }
    return 0;
}

/* The judges of --judge-model or the judges file, on the configuration cfg,
 * and their prompt (run->prompt), said on stderr. 0, or -1 said. */
static int judge_setup(const struct drqa_opts *o, const struct drqa_config *cfg, struct judge_set *judges,
                       struct judge_run *run)
{
    char err[1024];
    if (judge_set_resolve(judges, cfg, o->judge_models, (size_t)o->njudge_models, NULL, NULL, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return -1;
    }
    if (!judges->n) {
        fprintf(stderr, "drqa-tui: no judge model was configured (give --judge-model NAME, or judge.NAME.model in "
                "%s); writing the grounding metrics only\n",
                judges->file ? judges->file : "$XDG_CONFIG_HOME/drqa-tui/judges");
        return 0;
    }
    if (!(run->prompt = judge_prompt_load(err, sizeof err))) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return -1;
    }
    if (!o->quiet) {
        fprintf(stderr, "drqa-tui: %zu judge%s:", judges->n, judges->n == 1 ? "" : "s");
        for (size_t j = 0; j < judges->n; j++)
            fprintf(stderr, "%s %s (%s at %s)", j ? "," : "", judges->v[j].name, judges->v[j].model,
                    judges->v[j].backend->name(judges->v[j].backend));
        fprintf(stderr, "; prompt %s\n", run->prompt->path);
    }
    return 0;
}

/* Judges the answers from run->next on, on up to --jobs threads. */
static void judge_all(const struct drqa_opts *o, struct judge_run *run, size_t kept)
{
    int jobs = o->jobs < 1 ? 1 : o->jobs > EVAL_MAX_JOBS ? EVAL_MAX_JOBS : o->jobs;
    if ((size_t)jobs > run->answers->n - kept) jobs = (int)(run->answers->n - kept);
    if (jobs <= 1 || !run->judges->n) {
        judge_worker(run);
        return;
    }
    pthread_t th[EVAL_MAX_JOBS];
    int started = 0;
    for (int k = 0; k < jobs; k++)
        if (pthread_create(&th[k], NULL, judge_worker, run) == 0) started++;
        else break;
    if (!started) judge_worker(run);
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
}

/* The run's counts on stderr, and its exit status: EXIT_FAIL when there
 * were judges and none gave a score. */
static int judge_summary(const struct drqa_opts *o, struct judge_run *run)
{
    size_t n = run->answers->n, nj = run->judges->n;
    struct llm_usage_entry tot;
    memset(&tot, 0, sizeof tot);
    llm_usage_get(&run->usage, NULL, &tot);
    if (!o->quiet || (nj && run->unscored)) {
        if (nj)
            fprintf(stderr, "drqa-tui: %zu answers: %ld scored, %ld with no judge score; %ld judge scores, %ld "
                    "missing; %ld judge calls, %ld input and %ld output tokens; wrote %s\n",
                    n, run->scored, run->unscored, run->judge_scores, run->judge_missing, tot.calls,
                    tot.input_tokens, tot.output_tokens, o->out);
        else if (!o->quiet)
            fprintf(stderr, "drqa-tui: %zu answers: grounding metrics written to %s\n", n, o->out);
    }
    int status = nj && !run->judge_scores ? EXIT_FAIL : EXIT_OK;
    if (status == EXIT_FAIL)
        fprintf(stderr, "drqa-tui: no judge gave a usable score; see the \"error\" fields in %s\n", o->out);
    return status;
}

int cli_judge(const struct drqa_opts *o)
{
    char err[1024];
    struct eval_refs refs;
    struct eval_answers answers;
    struct drqa_config cfg;
    struct judge_set judges;
    struct judge_run run;
    int status = EXIT_USAGE, cfg_loaded = 0;
    memset(&judges, 0, sizeof judges);
    memset(&answers, 0, sizeof answers);
    memset(&run, 0, sizeof run);
    run.out = -1;
    llm_usage_init(&run.usage);
    pthread_mutex_init(&run.lock, NULL);

    if (judge_inputs(o, &refs, &answers, &run)) goto out;
    if (cli_config_load(&cfg, o, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        config_free(&cfg);
        goto out;
    }
    cfg_loaded = 1;
    if (judge_setup(o, &cfg, &judges, &run)) goto out;

    if (same_file(o->out, o->judge_in) || same_file(o->out, o->reference)) {
        fprintf(stderr, "drqa-tui: --out '%s' is the %s file; give another path for the scores\n", o->out,
                same_file(o->out, o->judge_in) ? "answers" : "reference");
        goto out;
    }
    size_t kept;
    int usage;
    run.out = open_scores(o->out, &answers, &judges, &run, &kept, &usage, err, sizeof err);
    if (run.out < 0) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        status = usage == 2 ? EXIT_BUSY : usage ? EXIT_USAGE : EXIT_FAIL;
        goto out;
    }
    if (kept && !o->quiet)
        fprintf(stderr, "drqa-tui: %s holds the scores of the first %zu of %zu answers (an earlier run); judging "
                "the rest\n", o->out, kept, answers.n);
    run.o = o;
    run.answers = &answers;
    run.judges = &judges;
    run.done = xcalloc(answers.n ? answers.n : 1, sizeof *run.done);
    run.next = run.written = kept;
    judge_all(o, &run, kept);
    if (close(run.out) != 0) run.write_failed = 1;
    run.out = -1;
    if (run.write_failed) {
        fprintf(stderr, "drqa-tui: writing '%s' failed: %s; the file is incomplete\n", o->out, strerror(errno));
        status = EXIT_FAIL;
        goto out;
    }
    status = judge_summary(o, &run);
out:
    if (run.out >= 0) close(run.out);
    free(run.done);
    free(run.refs);
    prompt_free(run.prompt);
    judge_set_free(&judges);
    if (cfg_loaded) config_free(&cfg);
    eval_answers_free(&answers);
    eval_refs_free(&refs);
    llm_usage_destroy(&run.usage);
    pthread_mutex_destroy(&run.lock);
    return status;
}

int cli_report(const struct drqa_opts *o)
{
    char err[1024];
    struct eval_refs refs;
    struct report rep;
    int have_refs = 0, status = EXIT_USAGE;
    report_init(&rep);
    memset(&refs, 0, sizeof refs);
    if (!o->nreport_files) {
        fprintf(stderr, "drqa-tui: --report needs at least one scores or answers file\n");
        return EXIT_USAGE;
    }
    if (o->reference) {
        if (eval_refs_load(&refs, o->reference, err, sizeof err)) {
            fprintf(stderr, "drqa-tui: %s\n", err);
            goto out;
        }
        have_refs = 1;
    }
    for (int i = 0; i < o->nreport_files && o->out; i++)
        if (same_file(o->out, o->report_files[i]) || same_file(o->out, o->reference)) {
            fprintf(stderr, "drqa-tui: --out '%s' is the %s file '%s'; give another path for the report\n", o->out,
                    same_file(o->out, o->reference) ? "reference" : "input", same_file(o->out, o->reference)
                    ? o->reference : o->report_files[i]);
            goto out;
        }
    for (int i = 0; i < o->nreport_files; i++) {
        if (report_add_file(&rep, o->report_files[i], have_refs ? &refs : NULL, err, sizeof err)) {
            fprintf(stderr, "drqa-tui: %s\n", err);
            goto out;
        }
    }
    struct buf b = BUF_INIT;
    if (o->json) {
        cJSON *j = report_json(&rep);
        char *s = cJSON_Print(j);
        buf_adds(&b, s);
        buf_addc(&b, '\n');
        free(s);
        cJSON_Delete(j);
    } else {
        report_markdown(&rep, &b);
    }
    FILE *fp = o->out ? fopen(o->out, "w") : stdout;
    if (!fp) {
        fprintf(stderr, "drqa-tui: cannot write '%s': %s; check the directory and its permissions\n", o->out,
                strerror(errno));
        buf_free(&b);
        status = EXIT_FAIL;
        goto out;
    }
    int bad = fwrite(b.data ? b.data : "", 1, b.len, fp) != b.len;
    bad |= fp == stdout ? fflush(fp) != 0 : fclose(fp) != 0;
    buf_free(&b);
    if (bad) {
        fprintf(stderr, "drqa-tui: writing the report to %s failed\n", o->out ? o->out : "stdout");
        status = EXIT_FAIL;
        goto out;
    }
    status = EXIT_OK;
out:
    report_free(&rep);
    eval_refs_free(&refs);
    return status;
}
