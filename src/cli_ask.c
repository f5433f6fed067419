/*
 * cli_ask: the headless modes.
 *
 *   --ask QUESTION REPO    answers one question: Markdown with citations on
 *                          stdout, or with --json the same object as a batch
 *                          line; exit status 0, or non-zero with the reason
 *                          on stderr.
 *   --batch IN --out OUT REPO
 *                          answers every line of a JSONL file ({"id",
 *                          "question"}; other fields are ignored; id defaults
 *                          to the line number) into OUT, one JSON object per
 *                          line (engine_result_json). Resumable: ids already
 *                          in OUT are skipped. --jobs N answers N questions at
 *                          once, each worker thread with its own connection;
 *                          lines are written whole, as each answer completes.
 *                          A question that fails, or an input line that is not
 *                          a JSON object with a question, gets its line with
 *                          `error` set and the batch goes on.
 * Both print the policy line on stderr unless --quiet, and write a transcript
 * per question into --transcript-dir when it is given (mcts mode). --ask with
 * a model prints the question's per-role ledger (calls, tokens, cached and
 * reasoning tokens, cost) in one line on stderr at the end, unless --quiet,
 * and says so when the search stopped at the cost budget (--budget-usd).
 *
 *   --show-profile         prints the model profile (llm_profile.h) the
 *                          configuration resolves for the model and for each
 *                          per-role model, as config-file lines.
 */
#include "cli.h"
#include "config.h"
#include "engine.h"
#include "llm.h"
#include "store.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BATCH_MAX_INPUT (256u << 20)
#define BATCH_MAX_JOBS 64

/* DIR/NAME with NAME reduced to safe characters; the directory is created. */
static char *transcript_stem(const char *dir, const char *name, char *err, size_t errlen)
{
    if (!dir) return NULL;
    char *safe = xstrdup(name);
    for (char *p = safe; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') *p = '_';
    if (safe[0] == '.') safe[0] = '_';
    char *stem = xasprintf("%s/%s", dir, safe);
    free(safe);
    if (store_mkdir_for(stem, err, errlen)) {
        free(stem);
        return NULL;
    }
    return stem;
}

static void print_policy(const struct drqa_opts *o, const struct engine_shared *sh)
{
    if (!o->quiet) fprintf(stderr, "drqa-tui: %s\n", engine_policy_line(sh));
}

int cli_ask(const struct drqa_opts *o)
{
    char err[1024];
    if (!o->question || !*o->question) {
        fprintf(stderr, "drqa-tui: --ask needs a question: drqa-tui --ask \"How does X work?\" REPO\n");
        return EXIT_USAGE;
    }
    struct engine_shared *sh;
    int usage = 0;
    if (engine_shared_open(o, &sh, &usage, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return usage ? EXIT_USAGE : EXIT_FAIL;
    }
    print_policy(o, sh);
    struct engine *e;
    if (engine_open(sh, &e, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        engine_shared_free(sh);
        return EXIT_FAIL;
    }
    char *stem = NULL;
    if (o->transcript_dir) {
        char name[40];
        char hex[17];
        hash64_hex(hash64(o->question, strlen(o->question)), hex);
        snprintf(name, sizeof name, "ask-%s", hex);
        stem = transcript_stem(o->transcript_dir, name, err, sizeof err);
        if (!stem) {
            fprintf(stderr, "drqa-tui: %s\n", err);
            engine_close(e);
            engine_shared_free(sh);
            return EXIT_USAGE;
        }
    }
    struct engine_result r;
    int rc = engine_ask(e, o->question, stem, &r);
    if (o->json) {
        cJSON *id = cJSON_CreateNumber(1);
        cJSON *j = engine_result_json(&r, id);
        char *s = cJSON_PrintUnformatted(j);
        char *safe = json_term_safe(s);   /* quotes of files: no raw C1 or DEL */
        printf("%s\n", safe);
        free(safe);
        free(s);
        cJSON_Delete(j);
        cJSON_Delete(id);
    } else if (r.answer) {
        char *md = engine_result_markdown(&r);
        char *safe = text_term_safe(md);   /* quotes of files: no raw control characters */
        fputs(safe, stdout);
        free(safe);
        free(md);
    }
    if (rc) {
        char *safe = text_term_safe(r.error ? r.error : "the question could not be answered");
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
    }
    if (!o->quiet && r.stop_reason && !strcmp(r.stop_reason, "budget-usd"))
        fprintf(stderr, "drqa-tui: the search stopped at the cost budget of $%g (--budget-usd); the answer uses the "
                        "evidence found by then\n", o->budget_usd);
    char *line = !o->quiet && r.usage ? llm_usage_line(r.usage) : NULL;
    if (line) fprintf(stderr, "drqa-tui: %s\n", line);
    free(line);
    engine_result_free(&r);
    free(stem);
    engine_close(e);
    engine_shared_free(sh);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "drqa-tui: cannot write the answer to stdout: %s\n", strerror(errno));
        return EXIT_FAIL;
    }
    return rc ? EXIT_FAIL : EXIT_OK;
}

int cli_show_profile(const struct drqa_opts *o)
{
    struct drqa_config c;
    char err[1024];
    if (config_load(&c, o, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        config_free(&c);
        return EXIT_USAGE;
    }
    if (!c.model) {
        fprintf(stderr, "drqa-tui: no chat model is configured, so there is no profile to show; set --model, "
                        "DRQA_MODEL or 'model =' in the config file\n");
        config_free(&c);
        return EXIT_USAGE;
    }
    struct llm_profile p;
    config_profile(&c, c.model, &p);
    printf("# the profile of %s (override with profile.GLOB.FIELD = VALUE in the config file)\n", c.model);
    llm_profile_print(stdout, c.model, &p);
    for (int r = 0; r < CONFIG_NROLES; r++) {
        if (!c.role_model[r]) continue;
        config_profile(&c, c.role_model[r], &p);
        printf("\n# role %s\n", config_role_names[r]);
        llm_profile_print(stdout, c.role_model[r], &p);
    }
    config_free(&c);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

/* ---------------------------------------------------------------- batch */

struct item {
    int line;
    cJSON *id;         /* as given, or the line number */
    char *question;    /* NULL when the line is unusable */
    char *error;       /* why the line is unusable */
};

/* "s:<string>" or "n:<number>", so that 1 and "1" stay different ids. */
static char *id_key(const cJSON *id)
{
    if (cJSON_IsString(id)) return xasprintf("s:%s", id->valuestring);
    if (cJSON_IsNumber(id)) return xasprintf("n:%.17g", id->valuedouble);
    return NULL;
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ids of the lines already in the output file, sorted. */
static size_t done_ids(const char *path, char ***out)
{
    *out = NULL;
    size_t len = 0;
    char *text = read_file(path, BATCH_MAX_INPUT, &len);
    if (!text) return 0;
    size_t n = 0, cap = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        cJSON *j = cJSON_Parse(line);
        char *k = j ? id_key(cJSON_GetObjectItemCaseSensitive(j, "id")) : NULL;
        if (k) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                *out = xrealloc(*out, cap * sizeof **out);
            }
            (*out)[n++] = k;
        }
        cJSON_Delete(j);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (n) qsort(*out, n, sizeof **out, cmp_strp);
    return n;
}

static size_t read_items(const char *text, struct item **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    int lineno = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        char *s = xstrndup(line, len);
        line = nl ? nl + 1 : NULL;
        const char *p = s;
        while (isspace((unsigned char)*p)) p++;
        if (!*p) {
            free(s);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *out = xrealloc(*out, cap * sizeof **out);
        }
        struct item *it = &(*out)[n++];
        memset(it, 0, sizeof *it);
        it->line = lineno;
        cJSON *j = cJSON_Parse(s);
        const cJSON *id = j ? cJSON_GetObjectItemCaseSensitive(j, "id") : NULL;
        const cJSON *q = j ? cJSON_GetObjectItemCaseSensitive(j, "question") : NULL;
        it->id = (cJSON_IsString(id) || cJSON_IsNumber(id)) ? cJSON_Duplicate(id, 1) : cJSON_CreateNumber(lineno);
        if (!cJSON_IsObject(j))
            it->error = xasprintf("line %d is not a JSON object (%.*s%s); write one {\"id\": ..., \"question\": ...} "
                                  "per line", lineno, utf8_cut(p, 60), p, strlen(p) > 60 ? "..." : "");
        else if (!cJSON_IsString(q) || !*q->valuestring)
            it->error = xasprintf("line %d has no \"question\" string; add \"question\": \"...\"", lineno);
        else
            it->question = xstrdup(q->valuestring);
        cJSON_Delete(j);
        free(s);
    }
    return n;
}

struct batch {
    const struct drqa_opts *o;
    struct engine_shared *sh;
    struct item *items;
    size_t nitems;
    size_t *todo;
    size_t ntodo, next;
    FILE *out;
    pthread_mutex_t mu;
    size_t answered, failed;
    int write_error;
};

static void write_line(struct batch *b, const struct engine_result *r, const cJSON *id, int failed)
{
    cJSON *j = engine_result_json(r, id);
    char *s = cJSON_PrintUnformatted(j);
    pthread_mutex_lock(&b->mu);
    if (fprintf(b->out, "%s\n", s) < 0 || fflush(b->out) != 0) b->write_error = errno ? errno : EIO;
    if (failed) b->failed++;
    else b->answered++;
    pthread_mutex_unlock(&b->mu);
    free(s);
    cJSON_Delete(j);
}

struct job {
    struct batch *b;
    struct engine *e;
};

static void *job_main(void *arg)
{
    struct job *jb = arg;
    struct batch *b = jb->b;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        size_t k = b->next < b->ntodo ? b->todo[b->next++] : (size_t)-1;
        int stop = b->write_error;
        pthread_mutex_unlock(&b->mu);
        if (k == (size_t)-1 || stop) break;
        struct item *it = &b->items[k];
        struct engine_result r;
        int rc;
        if (it->error) {
            memset(&r, 0, sizeof r);
            r.mode = engine_mode_name(engine_mode_of(b->sh));
            r.policy = engine_policy_name(b->sh);
            r.error = xstrdup(it->error);
            rc = -1;
        } else {
            char err[512] = "";
            char *key = NULL;
            if (cJSON_IsString(it->id)) key = xstrdup(it->id->valuestring);
            else key = xasprintf("%.17g", it->id->valuedouble);
            char *stem = transcript_stem(b->o->transcript_dir, key, err, sizeof err);
            free(key);
            rc = engine_ask(jb->e, it->question, stem, &r);
            if (b->o->transcript_dir && !stem && !r.error) {
                r.error = xasprintf("cannot write the transcript: %s", err);
                rc = -1;
            }
            free(stem);
        }
        write_line(b, &r, it->id, rc != 0);
        engine_result_free(&r);
    }
    return NULL;
}

int cli_batch(const struct drqa_opts *o)
{
    char err[1024];
    if (!o->batch_in || !o->out) {
        fprintf(stderr, "drqa-tui: --batch needs an input and an output: drqa-tui --batch questions.jsonl --out "
                        "answers.jsonl REPO\n");
        return EXIT_USAGE;
    }
    size_t len = 0;
    char *text = read_file(o->batch_in, BATCH_MAX_INPUT, &len);
    if (!text) {
        fprintf(stderr, "drqa-tui: cannot read the questions file '%s': %s; give a readable JSONL file\n",
                o->batch_in, strerror(errno));
        return EXIT_USAGE;
    }
    struct batch b = {0};
    b.o = o;
    b.nitems = read_items(text, &b.items);
    free(text);

    char **done = NULL;
    size_t ndone = done_ids(o->out, &done), skipped = 0;
    b.todo = xcalloc(b.nitems ? b.nitems : 1, sizeof *b.todo);
    for (size_t i = 0; i < b.nitems; i++) {
        char *k = id_key(b.items[i].id);
        int seen = k && ndone && bsearch(&k, done, ndone, sizeof *done, cmp_strp);
        /* the same id twice in the input: only the first is answered */
        for (size_t j = 0; j < b.ntodo && !seen; j++) {
            char *kj = id_key(b.items[b.todo[j]].id);
            seen = kj && k && !strcmp(k, kj);
            free(kj);
        }
        free(k);
        if (seen) skipped++;
        else b.todo[b.ntodo++] = i;
    }
    for (size_t i = 0; i < ndone; i++) free(done[i]);
    free(done);

    int usage = 0, rc = EXIT_OK;
    int jobs = o->jobs > 0 ? o->jobs : 1;
    if (jobs > BATCH_MAX_JOBS) jobs = BATCH_MAX_JOBS;
    struct job *jv = xcalloc((size_t)jobs, sizeof *jv);
    pthread_t *tid = xcalloc((size_t)jobs, sizeof *tid);
    int started = 0, opened = 0;
    if (engine_shared_open(o, &b.sh, &usage, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        rc = usage ? EXIT_USAGE : EXIT_FAIL;
        goto out;
    }
    print_policy(o, b.sh);
    b.out = fopen(o->out, "a");
    if (!b.out) {
        fprintf(stderr, "drqa-tui: cannot write the output file '%s': %s; give a writable path\n", o->out,
                strerror(errno));
        rc = EXIT_USAGE;
        goto out;
    }
    /* a line cut short by an earlier interruption must not swallow the next */
    {
        struct stat st;
        FILE *chk = fopen(o->out, "r");
        if (chk && stat(o->out, &st) == 0 && st.st_size > 0 && fseek(chk, -1, SEEK_END) == 0 && fgetc(chk) != '\n')
            fputc('\n', b.out);
        if (chk) fclose(chk);
    }
    pthread_mutex_init(&b.mu, NULL);
    for (int i = 0; i < jobs; i++) {
        jv[i].b = &b;
        if (engine_open(b.sh, &jv[i].e, err, sizeof err)) {
            fprintf(stderr, "drqa-tui: %s\n", err);
            rc = EXIT_FAIL;
            goto join;
        }
        opened++;
    }
    for (int i = 0; i < jobs; i++) {
        if (pthread_create(&tid[i], NULL, job_main, &jv[i]) != 0) {
            fprintf(stderr, "drqa-tui: cannot start worker thread %d of %d\n", i + 1, jobs);
            rc = EXIT_FAIL;
            break;
        }
        started++;
    }
join:
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    for (int i = 0; i < opened; i++) engine_close(jv[i].e);
    pthread_mutex_destroy(&b.mu);
    if (b.write_error) {
        fprintf(stderr, "drqa-tui: writing '%s' failed: %s\n", o->out, strerror(b.write_error));
        rc = EXIT_FAIL;
    }
    if (!o->quiet)
        fprintf(stderr, "drqa-tui: batch: %zu answered, %zu failed, %zu skipped (already in %s)\n", b.answered,
                b.failed, skipped, o->out);
    if (rc == EXIT_OK && b.failed) rc = EXIT_FAIL;
out:
    if (b.out && fclose(b.out) != 0 && rc == EXIT_OK) {
        fprintf(stderr, "drqa-tui: closing '%s' failed: %s\n", o->out, strerror(errno));
        rc = EXIT_FAIL;
    }
    for (size_t i = 0; i < b.nitems; i++) {
        cJSON_Delete(b.items[i].id);
        free(b.items[i].question);
        free(b.items[i].error);
    }
    free(b.items);
    free(b.todo);
    free(jv);
    free(tid);
    engine_shared_free(b.sh);
    return rc;
}
