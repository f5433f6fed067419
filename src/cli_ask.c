/*
 * cli_ask: the headless modes.
 *
 *   --ask QUESTION REPO    answers one question: Markdown with citations on
 *                          stdout, or with --json the same object as a batch
 *                          line; exit status 0, or non-zero with the reason
 *                          on stderr. On a terminal (not --json) the answer
 *                          is printed as it is written, and C-c then stops
 *                          it (cli_stream.h, exit status EXIT_STOPPED).
 *   --batch IN --out OUT REPO
 *                          answers every line of a JSONL file ({"id",
 *                          "question"}; other fields are ignored; id defaults
 *                          to the line number; "-" is standard input) into
 *                          OUT, one JSON object per line (engine_result_json).
 *                          Ids must be distinct and OUT must not be the input
 *                          file (same device and inode): both are refused
 *                          before any work. Resumable: ids already in OUT are
 *                          skipped, and a last line cut short is dropped.
 *                          --jobs N answers N questions at once, each worker
 *                          thread with its own connection; each line is one
 *                          write(), as each answer completes. The exit status
 *                          is 1 while a question has no answer in OUT.
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
#include "cli_settings.h"
#include "cli_stream.h"
#include "llm_config.h"
#include "engine.h"
#include "llm.h"
#include "store.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH_MAX_INPUT (256u << 20)
#define BATCH_MAX_JOBS 64

#define STEM_MAX 64   /* bytes of a transcript's name before its extension */

/* DIR/NAME with NAME reduced to safe characters; a name that had to be
 * changed or cut (longer than STEM_MAX) ends in a hash of the whole, so
 * two ids never share a file and any id gives a name the file system takes.
 * The directory is created. */
static char *transcript_stem(const char *dir, const char *name, char *err, size_t errlen)
{
    if (!dir) return NULL;
    char *safe = xstrdup(name);
    int changed = 0;
    for (char *p = safe; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') { *p = '_'; changed = 1; }
    if (safe[0] == '.') { safe[0] = '_'; changed = 1; }
    if (changed || strlen(safe) > STEM_MAX) {
        char hex[17];
        hash64_hex(hash64(name, strlen(name)), hex);
        safe[strlen(safe) > STEM_MAX - 17 ? STEM_MAX - 17 : strlen(safe)] = 0;
        char *h = xasprintf("%s-%s", safe, hex);
        free(safe);
        safe = h;
    }
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

/* Said once on stderr (--quiet or not): steps the offline policy decided
 * for the model, how many model calls failed and the last reason (why: the
 * last fallback's; failure: the last failed call's, said alone when the
 * offline policy replaced none: calls asked again, a stream resent). */
static void print_fallbacks(const char *what, int steps, long failed, long calls, int answer_offline,
                            const char *why, const char *failure)
{
    if (!steps && !answer_offline && !failed) return;
    char *fail = text_term_safe(failure && *failure ? failure : "no reason recorded");
    if (!steps && !answer_offline) {
        fprintf(stderr, "drqa-tui: warning: %s%ld of %ld model calls failed, none replaced by the offline policy; "
                        "the last failure: %s\n", what, failed, calls, fail);
        free(fail);
        return;
    }
    char *safe = text_term_safe(why && *why ? why : failure && *failure ? failure : "no reason recorded");
    fprintf(stderr, "drqa-tui: warning: %s%d step%s decided by the offline policy instead of the model%s (%ld of %ld "
                    "model calls failed); the last: %s", what, steps, steps == 1 ? "" : "s",
            answer_offline ? ", the answer too" : "", failed, calls, safe);
    /* a failed call's reason, when the fallback's was another one */
    if (failed && failure && *failure && why && *why && !strstr(why, failure))
        fprintf(stderr, "; the last call failure: %s", fail);
    fputc('\n', stderr);
    free(safe);
    free(fail);
}

/* Said once on stderr: model calls whose request the transport sent again
 * after a failed attempt (a 429 or 5xx, a stream that stalled past the idle
 * limit or was cut short), and why the last one was, which nothing else
 * shows when the attempt after it succeeded. */
static void print_retries(const char *what, long retried, const char *why)
{
    if (retried <= 0) return;
    char *safe = text_term_safe(why && *why ? why : "no reason recorded");
    fprintf(stderr, "drqa-tui: note: %s%ld model call%s sent again after a failed attempt; the last: %s\n", what,
            retried, retried == 1 ? " was" : "s were", safe);
    free(safe);
}

/* The answer on stdout: with --json its line, else its Markdown unless it
 * was printed as it was written (streamed). */
static void print_answer(const struct drqa_opts *o, const struct engine_result *r, int streamed)
{
    if (o->json) {
        cJSON *id = cJSON_CreateNumber(1);
        cJSON *j = engine_result_json(r, id);
        char *s = cJSON_PrintUnformatted(j);
        char *safe = json_term_safe(s);   /* quotes of files: no raw C1 or DEL */
        printf("%s\n", safe);
        free(safe);
        free(s);
        cJSON_Delete(j);
        cJSON_Delete(id);
    } else if (r->answer && !streamed) {
        char *md = engine_result_markdown(r);
        char *safe = text_term_safe(md);   /* quotes of files: no raw control characters */
        fputs(safe, stdout);
        free(safe);
        free(md);
    }
}

/* The path without extension of --ask's transcript in dir:
 * drqa-YYYYmmdd-HHMMSS-HASH, as the front end names its own; a name taken
 * already (the same question in the same second) gets -2, -3, ... so asking
 * again never replaces a transcript. NULL with err when dir is unusable. */
static char *ask_stem(const char *dir, const char *question, char *err, size_t errlen)
{
    char name[64], stamp[32] = "unknown-time", hex[17];
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    hash64_hex(hash64(question, strlen(question)), hex);
    hex[8] = 0;
    char *stem = NULL;
    for (int k = 1; k < 1000; k++) {
        if (k == 1) snprintf(name, sizeof name, "drqa-%s-%s", stamp, hex);
        else snprintf(name, sizeof name, "drqa-%s-%s-%d", stamp, hex, k);
        free(stem);
        stem = transcript_stem(dir, name, err, errlen);
        if (!stem) break;
        char *jp = xasprintf("%s.json", stem), *mp = xasprintf("%s.md", stem);
        int taken = access(jp, F_OK) == 0 || access(mp, F_OK) == 0;
        free(jp);
        free(mp);
        if (!taken) break;
    }
    return stem;
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
    /* an index found damaged while answering is checked and rebuilt, and the
     * question asked again, once */
    struct engine_settings set;
    cli_engine_settings(&set, o);
    int again = 0;
ask:
    if (engine_shared_open(&set, &sh, &usage, err, sizeof err)) {
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
    if (o->transcript_dir && !(stem = ask_stem(o->transcript_dir, o->question, err, sizeof err))) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        engine_close(e);
        engine_shared_free(sh);
        return EXIT_USAGE;
    }
    struct engine_result r;
    /* on a terminal the answer is printed as it is written (cli_stream.h) */
    struct ask_tty *tty = !o->json && isatty(STDOUT_FILENO) ? ask_tty_begin(stdout) : NULL;
    struct engine_ask_hooks hooks = {0};
    if (tty) ask_tty_hooks(tty, &hooks);
    int rc = engine_ask_hooked(e, o->question, stem, tty ? &hooks : NULL, &r);
    int streamed = ask_tty_end(tty, r.damage && !again ? NULL : &r);
    if (r.damage && !again) {
        char *m = engine_damage_message(r.damage, 0), *safe = text_term_safe(m);
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
        free(m);
        engine_result_free(&r);
        free(stem);
        engine_close(e);
        engine_shared_free(sh);
        set.index.opt.check = 1;
        again = 1;
        goto ask;
    }
    print_answer(o, &r, streamed);
    if (rc) {
        char *safe = text_term_safe(r.error ? r.error : "the question could not be answered");
        fprintf(stderr, "drqa-tui: %s\n", safe);
        free(safe);
    }
    int llm = r.policy && !strcmp(r.policy, "llm");
    /* direct mode gives the model no code to cite: never flagged by the status */
    int uncited = !rc && llm && r.answer && r.verified_citations == 0 && strcmp(r.mode, "direct");
    if (!r.no_model && llm)
        print_fallbacks("", r.fallback_steps, r.failed_calls, r.model_calls,
                        r.answered_by && !strcmp(r.answered_by, "offline"), r.fallback_reason, r.last_failure);
    if (llm) print_retries("", r.retried_calls, r.last_retry);
    if (r.stopped)
        fprintf(stderr, "drqa-tui: the answer was stopped (C-c) while it was being written; the part that had "
                        "arrived is printed, marked as stopped (exit status %d)\n", EXIT_STOPPED);
    else if (uncited)
        fprintf(stderr, "drqa-tui: warning: the answer cites no code span the search verified (exit status 4)\n");
    int status = r.no_model ? EXIT_NO_MODEL : rc ? EXIT_FAIL : r.stopped ? EXIT_STOPPED : uncited ? EXIT_UNCITED
                                                                                                : EXIT_OK;
    if (r.damage) {   /* found again after the check: said, not hidden */
        char *m = engine_damage_message(r.damage, 1), *safe = text_term_safe(m);
        fprintf(stderr, "drqa-tui: warning: %s\n", safe);
        free(safe);
        free(m);
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
    return status;
}

int cli_show_profile(const struct drqa_opts *o)
{
    struct drqa_config c;
    char err[1024];
    if (cli_config_load(&c, o, err, sizeof err)) {
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
    int given_id;      /* the line has an "id" */
    cJSON *id;         /* as given (a number as its JSON text, raw), or the line number */
    char *question;    /* NULL when the line is unusable */
    char *error;       /* why the line is unusable */
};

/* "s:<string>" or "n:<number>", so that 1 and "1" stay different ids. A
 * number is its JSON text (a raw item): 1e400 or 12345678901234567890 have
 * no double of their own, and an id is a name, not a quantity. */
static char *id_key(const cJSON *id)
{
    if (cJSON_IsString(id)) return xasprintf("s:%s", id->valuestring);
    if (cJSON_IsRaw(id)) return xasprintf("n:%s", id->valuestring);
    if (cJSON_IsNumber(id)) return xasprintf("n:%.17g", id->valuedouble);
    return NULL;
}

/* The end of the JSON value starting at p (valid JSON: cJSON parsed it),
 * without recursion: nesting may be deep. */
static const char *skip_value(const char *p, const char *end)
{
    size_t depth = 0;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            for (p++; p < end && *p != '"'; p++)
                if (*p == '\\') p++;
            p++;
        } else if (c == '{' || c == '[') {
            depth++;
            p++;
        } else if (c == '}' || c == ']') {
            if (!depth) return p;
            depth--;
            p++;
        } else if (c == ',' && !depth) {
            return p;
        } else {
            p++;
        }
        if (!depth && (c == '"' || c == '}' || c == ']')) return p;
    }
    return p;
}

static int json_number_text(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9') while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    else return 0;
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    return i == n;
}

/* The id of line (n bytes, j its parse): a number as a raw item holding its
 * text as written (a copy, caller deletes), else a copy of the item; NULL
 * when the line has no string or number "id". */
static cJSON *line_id(const char *line, size_t n, const cJSON *j)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    if (cJSON_IsString(id)) return cJSON_Duplicate(id, 1);
    if (!cJSON_IsNumber(id)) return NULL;
    /* the first top-level "id" member, as cJSON takes the first */
    const char *p = line, *end = line + n;
    while (p < end && *p != '{') p++;
    for (p++; p < end;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')) p++;
        if (p >= end || *p != '"') break;
        const char *k = p;
        p = skip_value(p, end);
        int is_id = p - k == 4 && memcmp(k, "\"id\"", 4) == 0;
        while (p < end && *p != ':') p++;
        p++;
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
        const char *v = p;
        p = skip_value(p, end);
        if (!is_id) continue;
        size_t vn = (size_t)(p - v);
        while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t' || v[vn - 1] == '\n' || v[vn - 1] == '\r')) vn--;
        if (!json_number_text(v, vn)) break;
        char *text = xstrndup(v, vn);
        cJSON *raw = cJSON_CreateRaw(text);
        free(text);
        return raw;
    }
    return cJSON_Duplicate(id, 1);   /* not found as written (an escaped key): the number */
}

static int answer_line_ok(const cJSON *j)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    return (cJSON_IsString(id) || cJSON_IsNumber(id)) && cJSON_GetObjectItemCaseSensitive(j, "answer") &&
           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "mode"));
}

static const struct cli_jsonl_kind answers_kind = {
    .name = "--batch answers", .line = "an answers line", .again = "question is answered",
    .not_ours = "has no \"id\", \"answer\" and \"mode\"", .line_ok = answer_line_ok,
};

/* A set of id keys, each with a value (open addressing): the duplicate
 * check and the resume lookup stay linear in the number of lines. */
struct idset {
    char **key;
    int *val;
    size_t cap, n;
};

static size_t idset_slot(const struct idset *s, const char *key)
{
    size_t i = (size_t)hash64(key, strlen(key)) & (s->cap - 1);
    while (s->key[i] && strcmp(s->key[i], key)) i = (i + 1) & (s->cap - 1);
    return i;
}

/* The value of key, or NULL. */
static int *idset_get(const struct idset *s, const char *key)
{
    if (!s->cap) return NULL;
    size_t i = idset_slot(s, key);
    return s->key[i] ? &s->val[i] : NULL;
}

/* Adds key (taken over) with val; when key is there already, frees it and
 * returns its value, else NULL. */
static int *idset_add(struct idset *s, char *key, int val)
{
    int *had = idset_get(s, key);
    if (had) {
        free(key);
        return had;
    }
    if (2 * (s->n + 1) > s->cap) {
        struct idset g = {0};
        g.cap = s->cap ? 2 * s->cap : 64;
        g.key = xcalloc(g.cap, sizeof *g.key);
        g.val = xcalloc(g.cap, sizeof *g.val);
        for (size_t i = 0; i < s->cap; i++)
            if (s->key[i]) {
                size_t k = idset_slot(&g, s->key[i]);
                g.key[k] = s->key[i];
                g.val[k] = s->val[i];
            }
        g.n = s->n;
        free(s->key);
        free(s->val);
        *s = g;
    }
    size_t i = idset_slot(s, key);
    s->key[i] = key;
    s->val[i] = val;
    s->n++;
    return NULL;
}

static void idset_free(struct idset *s)
{
    for (size_t i = 0; i < s->cap; i++) free(s->key[i]);
    free(s->key);
    free(s->val);
    memset(s, 0, sizeof *s);
}

/* The key of an output line's id (its JSON text for a number), or NULL. */
static char *line_key(const char *line, size_t n, const cJSON *j)
{
    cJSON *id = j ? line_id(line, n, j) : NULL;
    char *k = id ? id_key(id) : NULL;
    cJSON_Delete(id);
    return k;
}

/* The ids of the lines in an output text, each with 1 when its line
 * carries an error (a question that failed), else 0. An id on two lines
 * (two runs that wrote the same file at once, before the lock) is refused:
 * -1 with err naming both lines; nothing is answered. */
static int done_ids(const char *path, const char *text, struct idset *done, char *err, size_t errlen)
{
    struct idset at = {0};
    int lineno = 0, rc = 0;
    for (const char *line = text; line && *line && !rc;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        cJSON *j = cJSON_ParseWithLength(line, n);
        char *k = line_key(line, n, j);
        if (k) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
            int failed = cJSON_IsString(e) && *e->valuestring;
            const int *first = idset_add(&at, xstrdup(k), lineno);
            if (first) {
                snprintf(err, errlen, "%s:%d: the id of this answer is also the id of line %d; an answers file holds "
                         "one line per id (two runs wrote it at once?): remove one of the two lines, then run again",
                         path, lineno, *first);
                rc = -1;
            }
            idset_add(done, k, failed);
        }
        cJSON_Delete(j);
        line = nl ? nl + 1 : NULL;
    }
    idset_free(&at);
    return rc;
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
        ARRAY_GROW(*out, n, cap, 64);
        struct item *it = &(*out)[n++];
        memset(it, 0, sizeof *it);
        it->line = lineno;
        cJSON *j = cJSON_Parse(s);
        const cJSON *q = j ? cJSON_GetObjectItemCaseSensitive(j, "question") : NULL;
        it->id = cJSON_IsObject(j) ? line_id(s, len, j) : NULL;
        it->given_id = it->id != NULL;
        if (!it->id) {
            char num[16];
            snprintf(num, sizeof num, "%d", lineno);
            it->id = cJSON_CreateRaw(num);
        }
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

/* An id as the input wrote it, for messages (cut at 60 bytes). */
static char *id_shown(const cJSON *id)
{
    if (cJSON_IsNumber(id)) return xasprintf("%.17g", id->valuedouble);
    const char *v = id->valuestring;
    if (cJSON_IsRaw(id)) return xasprintf("%.*s%s", utf8_cut(v, 60), v, strlen(v) > 60 ? "..." : "");
    return xasprintf("\"%.*s%s\"", utf8_cut(v, 60), v, strlen(v) > 60 ? "..." : "");
}

/* 0 when every line's id is its own; else -1 with the first clash in err
 * (both line numbers). A line without an id takes its line number, so it
 * clashes with a line whose id is that number. */
static int check_unique(const char *in, const struct item *items, size_t n, char *err, size_t errlen)
{
    struct idset seen = {0};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        int *first = idset_add(&seen, id_key(items[i].id), (int)i);
        if (!first) continue;
        const struct item *a = &items[*first], *b = &items[i];
        char *shown = id_shown(b->id);
        snprintf(err, errlen, "%s:%d: id %s is also the id of line %d%s; give every question its own id (nothing "
                 "was answered)", in, b->line, shown, a->line,
                 !a->given_id || !b->given_id ? " (a line without \"id\" takes its line number)" : "");
        free(shown);
        rc = -1;
    }
    idset_free(&seen);
    return rc;
}

struct batch {
    const struct drqa_opts *o;
    struct engine_shared *sh;
    struct item *items;
    size_t nitems;
    size_t *todo;
    size_t ntodo, next;
    int out;            /* the output file, opened O_APPEND */
    pthread_mutex_t mu;
    size_t answered, failed;
    int write_error;
    /* who decided, over the run (struct engine_result) */
    long model_calls, failed_calls;
    long fallback_steps, answer_fallbacks, uncited;
    char last_reason[512];
    char last_failure[512];
    long retried_calls;
    char last_retry[512];
};

static void write_line(struct batch *b, const struct engine_result *r, const cJSON *id, int failed)
{
    cJSON *j = engine_result_json(r, id);
    char *s = cJSON_PrintUnformatted(j);
    size_t n = strlen(s);
    s = xrealloc(s, n + 2);
    memcpy(s + n, "\n", 2);
    pthread_mutex_lock(&b->mu);
    /* the whole line in one write(): a kill leaves it whole or absent (a
     * line cut short by a full disk is dropped on resume) */
    if (write_all(b->out, s, n + 1) != 0) b->write_error = errno ? errno : EIO;
    else if (failed) b->failed++;   /* a line not written is not answered */
    else b->answered++;
    b->model_calls += r->model_calls;
    b->failed_calls += r->failed_calls;
    b->fallback_steps += r->fallback_steps;
    if (r->policy && !strcmp(r->policy, "llm")) {
        b->answer_fallbacks += r->answered_by && !strcmp(r->answered_by, "offline");
        b->uncited += !failed && r->answer && r->verified_citations == 0 && strcmp(r->mode, "direct");
    }
    if (r->no_model && r->error) snprintf(b->last_reason, sizeof b->last_reason, "%s", r->error);
    else if (r->fallback_reason) snprintf(b->last_reason, sizeof b->last_reason, "%s", r->fallback_reason);
    if (r->last_failure) snprintf(b->last_failure, sizeof b->last_failure, "%s", r->last_failure);
    b->retried_calls += r->retried_calls;
    if (r->last_retry) snprintf(b->last_retry, sizeof b->last_retry, "%s", r->last_retry);
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
            if (cJSON_IsString(it->id) || cJSON_IsRaw(it->id)) key = xstrdup(it->id->valuestring);
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

/* An earlier run's line for an id of this input must answer that id's
 * question, by the same mode, policy and model, in a repository of the same name:
 * else resuming would keep it as the answer to a question it does not
 * answer. 0, or -1 with err naming the line and what differs. */
static int check_resumed(const char *path, const char *text, const struct item *items, size_t n, const char *mode,
                         const char *policy, const char *model, const char *repo_name, char *err, size_t errlen)
{
    struct idset at = {0};
    for (size_t i = 0; i < n; i++) idset_add(&at, id_key(items[i].id), (int)i);
    int rc = 0, lineno = 0;
    for (const char *line = text; line && *line && !rc;) {
        const char *nl = strchr(line, '\n');
        lineno++;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        cJSON *j = cJSON_ParseWithLength(line, len);
        char *k = line_key(line, len, j);
        const int *i = k ? idset_get(&at, k) : NULL;
        if (i) {
            const struct item *it = &items[*i];
            const char *q = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "question"));
            const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "mode"));
            const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "policy"));
            const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "repo_name"));
            const char *md = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "model"));
            char *shown = id_shown(it->id);
            if (it->question && q && strcmp(q, it->question)) {
                snprintf(err, errlen, "%s:%d: the answer kept for id %s is to another question (\"%.80s\"; the input "
                         "now asks \"%.80s\")", path, lineno, shown, q, it->question);
                rc = -1;
            } else if ((m && strcmp(m, mode)) || (p && strcmp(p, policy)) || (md && model && strcmp(md, model))) {
                snprintf(err, errlen, "%s:%d: the answer kept for id %s was written by %s/%s%s%s; this run is %s/%s%s%s",
                         path, lineno, shown, m ? m : mode, p ? p : policy, md ? "/" : "", md ? md : "", mode, policy,
                         model ? "/" : "", model ? model : "");
                rc = -1;
            } else if (r && repo_name && strcmp(r, repo_name)) {
                snprintf(err, errlen, "%s:%d: the answer kept for id %s is about repository '%s'; this run asks '%s'",
                         path, lineno, shown, r, repo_name);
                rc = -1;
            }
            free(shown);
        }
        free(k);
        cJSON_Delete(j);
        line = nl ? nl + 1 : NULL;
    }
    if (rc) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, "; nothing was answered: give another --out, or remove the lines of the "
                 "earlier run to answer those questions again");
    }
    idset_free(&at);
    return rc;
}

/* The questions: a file, or standard input for "-" (a pipe such as
 * /dev/stdin is read as a file); *st is what was read. */
static char *read_questions(const char *in, struct stat *st, size_t *len)
{
    if (strcmp(in, "-") == 0) {
        if (fstat(0, st) != 0) return NULL;
        return read_fd(0, BATCH_MAX_INPUT, len);
    }
    return read_file_ex(in, BATCH_MAX_INPUT, len, 1, st);
}

/* The questions of --batch into b->items, once the input is known not to be
 * --out; *in is its name for messages. EXIT_OK, or EXIT_USAGE said. */
static int batch_read(const struct drqa_opts *o, struct batch *b, const char **in)
{
    *in = strcmp(o->batch_in, "-") == 0 ? "standard input" : o->batch_in;
    size_t len = 0;
    struct stat ist, ost;
    char *text = read_questions(o->batch_in, &ist, &len);
    if (!text) {
        fprintf(stderr, "drqa-tui: cannot read the questions file '%s': %s; give a readable JSONL file or - for "
                "standard input\n", *in, strerror(errno));
        return EXIT_USAGE;
    }
    /* answers are appended to OUT: the questions file itself would be read
     * back as answered (also through another name or a hard link) */
    if (stat(o->out, &ost) == 0 && ost.st_dev == ist.st_dev && ost.st_ino == ist.st_ino) {
        fprintf(stderr, "drqa-tui: --out '%s' is the questions file %s%s%s; answers are appended to OUT, so give "
                "another path\n", o->out, *in == o->batch_in ? "'" : "", *in, *in == o->batch_in ? "'" : "");
        free(text);
        return EXIT_USAGE;
    }
    b->nitems = read_items(text, &b->items);
    free(text);
    return EXIT_OK;
}

/* --out opened for appending into b->out, with the text it held (*kept) and
 * the ids answered in it (done). EXIT_OK, or EXIT_USAGE / EXIT_BUSY said. */
static int batch_open_out(const struct drqa_opts *o, struct batch *b, char **kept, struct idset *done)
{
    char err[1024];
    int regular;
    b->out = cli_open_jsonl_out(o->out, BATCH_MAX_INPUT, &answers_kind, kept, &regular, err, sizeof err);
    if (b->out < 0) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return b->out == CLI_OUT_BUSY ? EXIT_BUSY : EXIT_USAGE;
    }
    if (done_ids(o->out, *kept, done, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        return EXIT_USAGE;
    }
    if (!regular && !o->quiet)
        fprintf(stderr, "drqa-tui: --out '%s' is not a regular file (a pipe, FIFO or device): it is written, never "
                "read back, so a run stopped part way cannot resume from it\n", o->out);
    return EXIT_OK;
}

/* The items whose ids --out does not hold go to b->todo; *skipped counts
 * the others, *failed_before those of them answered with an error. */
static void batch_pick(struct batch *b, const struct idset *done, size_t *skipped, size_t *failed_before)
{
    for (size_t i = 0; i < b->nitems; i++) {
        char *k = id_key(b->items[i].id);
        const int *had = idset_get(done, k);
        free(k);
        if (!had) {
            b->todo[b->ntodo++] = i;
            continue;
        }
        (*skipped)++;
        if (*had) (*failed_before)++;
    }
}

/* An engine and a thread per job, answering b->todo until it is done.
 * EXIT_OK, or EXIT_FAIL said when an engine or a thread could not start (the
 * jobs started still run to the end). */
static int batch_run(struct batch *b, int jobs)
{
    char err[1024];
    int rc = EXIT_OK, started = 0, opened = 0;
    struct job *jv = xcalloc((size_t)jobs, sizeof *jv);
    pthread_t *tid = xcalloc((size_t)jobs, sizeof *tid);
    pthread_mutex_init(&b->mu, NULL);
    for (int i = 0; i < jobs; i++) {
        jv[i].b = b;
        if (engine_open(b->sh, &jv[i].e, err, sizeof err)) {
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
    pthread_mutex_destroy(&b->mu);
    free(jv);
    free(tid);
    return rc;
}

/* What the run did, on stderr, and the exit status it makes of rc (the
 * run's so far): a question left without an answer, no model call that
 * succeeded, an answer citing nothing verified. */
static int batch_report(const struct drqa_opts *o, const struct batch *b, size_t skipped, size_t failed_before,
                        int rc)
{
    if (b->write_error) {
        fprintf(stderr, "drqa-tui: writing '%s' failed: %s\n", o->out, strerror(b->write_error));
        rc = EXIT_FAIL;
    }
    size_t unanswered = b->ntodo - b->answered - b->failed;
    if (!o->quiet || unanswered || failed_before) {
        fprintf(stderr, "drqa-tui: batch: %zu answered, %zu failed, %zu skipped (already in %s", b->answered,
                b->failed, skipped, o->out);
        if (failed_before)
            fprintf(stderr, "; %zu of them with an error: remove those lines from it to ask again", failed_before);
        fprintf(stderr, ")");
        if (unanswered) fprintf(stderr, ", %zu not answered", unanswered);
        fprintf(stderr, "\n");
    }
    if (rc == EXIT_OK && (b->failed || failed_before || unanswered)) rc = EXIT_FAIL;
    if (b->model_calls > 0 && b->failed_calls == b->model_calls) {
        char *safe = text_term_safe(b->last_reason[0] ? b->last_reason : "no reason recorded");
        fprintf(stderr, "drqa-tui: batch: no model call succeeded (%ld of %ld failed); %s\n", b->failed_calls,
                b->model_calls, safe);
        free(safe);
        if (rc == EXIT_OK || rc == EXIT_FAIL) rc = EXIT_NO_MODEL;
    } else if (b->model_calls > 0) {
        char what[64];
        snprintf(what, sizeof what, "batch: %zu question%s: ", b->answered + b->failed,
                 b->answered + b->failed == 1 ? "" : "s");
        print_fallbacks(what, (int)b->fallback_steps, b->failed_calls, b->model_calls, 0, b->last_reason,
                        b->last_failure);
        print_retries(what, b->retried_calls, b->last_retry);
        if (b->answer_fallbacks)
            fprintf(stderr, "drqa-tui: warning: batch: %ld answer%s written by the offline policy instead of the "
                            "model (answered_by in the lines)\n", b->answer_fallbacks,
                    b->answer_fallbacks == 1 ? "" : "s");
    }
    if (b->uncited) {
        fprintf(stderr, "drqa-tui: warning: batch: %ld answer%s cite%s no code span the search verified (uncited in "
                        "the lines)\n", b->uncited, b->uncited == 1 ? "" : "s", b->uncited == 1 ? "s" : "");
        if (rc == EXIT_OK) rc = EXIT_UNCITED;
    }
    return rc;
}

int cli_batch(const struct drqa_opts *o)
{
    char err[1024];
    if (!o->batch_in || !o->out) {
        fprintf(stderr, "drqa-tui: --batch needs an input and an output: drqa-tui --batch questions.jsonl --out "
                        "answers.jsonl REPO\n");
        return EXIT_USAGE;
    }
    struct batch b = {0};
    b.o = o;
    b.out = -1;
    const char *in;
    int rc = batch_read(o, &b, &in);
    if (rc != EXIT_OK) return rc;

    struct idset done = {0};
    char *kept = NULL;   /* what --out held */
    size_t skipped = 0, failed_before = 0;
    int usage = 0;
    int jobs = o->jobs > 0 ? o->jobs : 1;
    if (jobs > BATCH_MAX_JOBS) jobs = BATCH_MAX_JOBS;
    b.todo = xcalloc(b.nitems ? b.nitems : 1, sizeof *b.todo);
    if (check_unique(in, b.items, b.nitems, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }
    if ((rc = batch_open_out(o, &b, &kept, &done)) != EXIT_OK) goto out;
    batch_pick(&b, &done, &skipped, &failed_before);
    struct engine_settings set;
    cli_engine_settings(&set, o);
    if (engine_shared_open(&set, &b.sh, &usage, err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        rc = usage ? EXIT_USAGE : EXIT_FAIL;
        goto out;
    }
    const char *root = engine_repo_abs(b.sh), *slash = strrchr(root, '/');
    if (kept && check_resumed(o->out, kept, b.items, b.nitems, engine_mode_name(engine_mode_of(b.sh)),
                              engine_policy_name(b.sh), engine_model_name(b.sh), slash && slash[1] ? slash + 1 : root,
                              err, sizeof err)) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }
    print_policy(o, b.sh);
    rc = batch_report(o, &b, skipped, failed_before, batch_run(&b, jobs));
out:
    if (b.out >= 0 && close(b.out) != 0 && rc == EXIT_OK) {
        fprintf(stderr, "drqa-tui: closing '%s' failed: %s\n", o->out, strerror(errno));
        rc = EXIT_FAIL;
    }
    idset_free(&done);
    free(kept);
    for (size_t i = 0; i < b.nitems; i++) {
        cJSON_Delete(b.items[i].id);
        free(b.items[i].question);
        free(b.items[i].error);
    }
    free(b.items);
    free(b.todo);
    engine_shared_free(b.sh);
    return rc;
}
