/*
 * actions_driver: the in-process half of bench/actions.sh. Opens an index,
 * draws call arguments from it (class and function names, definition spans,
 * single lines of code as snippets) with a fixed seed, runs each action N
 * times in this one process and prints p50/p95 latency per action. For
 * FindCodeSnippet it also runs `rg -F` on the repository for the same
 * snippets, in the same run, and prints the ratio of the medians: the anchor
 * that makes the number meaningful on any machine.
 *
 * usage: actions_driver INDEX REPO [N] [RG]
 */
#include "action.h"
#include "store.h"
#include "util.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* CPU time of this thread: unlike wall time it does not count the time the
 * scheduler gave to other processes, so it stays meaningful on a busy machine. */
static long long cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct strs {
    char **v;
    size_t n;
};

static void strs_add(struct strs *s, char *x)
{
    s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = x;
}

static struct strs column(sqlite3 *db, const char *sql)
{
    struct strs s = {NULL, 0};
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "actions_driver: %s: %s\n", sql, sqlite3_errmsg(db));
        exit(1);
    }
    while (sqlite3_step(st) == SQLITE_ROW) strs_add(&s, xstrdup((const char *)sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    return s;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static long long pct(long long *v, size_t n, int p)
{
    qsort(v, n, sizeof *v, cmp_ll);
    size_t i = (n * (size_t)p + 99) / 100;
    if (i) i--;
    return v[i < n ? i : n - 1];
}

/* Runs name with each args JSON; fills per-call wall and CPU microseconds. */
static void run_all(struct action_ctx *ctx, const char *name, struct strs *args, long long *us, long long *cpu,
                    size_t *found)
{
    *found = 0;
    for (size_t i = 0; i < args->n; i++) {
        struct action_result r;
        char err[1024];
        long long t0 = now_us(), c0 = cpu_us();
        int rc = action_run_json(ctx, name, args->v[i], &r, err, sizeof err);
        char *txt = rc == ACTION_OK ? action_result_render(&r, ACTION_DEFAULT_BUDGET) : NULL;
        us[i] = now_us() - t0;
        cpu[i] = cpu_us() - c0;
        if (getenv("BENCH_SLOW_US") && us[i] > atoll(getenv("BENCH_SLOW_US")))
            fprintf(stderr, "# slow: %s %s %.3f ms\n", name, args->v[i], us[i] / 1000.0);
        if (rc == ACTION_OK && r.ev.n) (*found)++;
        else if (rc != ACTION_OK) fprintf(stderr, "# %s %s: %s\n", name, args->v[i], err);
        free(txt);
        action_result_free(&r);
    }
}

static void report(const char *name, long long *us, long long *cpu, size_t n, size_t found)
{
    long long first = us[0];
    long long p50 = pct(us, n, 50), p95 = pct(us, n, 95), c50 = pct(cpu, n, 50), c95 = pct(cpu, n, 95);
    printf("%-16s %4zu calls (%4zu with results)  wall p50 %7.3f p95 %7.3f ms  cpu p50 %7.3f p95 %7.3f ms  "
           "first %7.3f ms\n", name, n, found, p50 / 1000.0, p95 / 1000.0, c50 / 1000.0, c95 / 1000.0, first / 1000.0);
}

static char *json_str(const char *field, const char *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, field, value);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: actions_driver INDEX REPO [N] [RG]\n");
        return 2;
    }
    size_t n = argc > 3 ? (size_t)atol(argv[3]) : 200;
    const char *rg = argc > 4 ? argv[4] : NULL;
    char err[1024];
    sqlite3 *db;
    if (store_open(argv[1], 1, &db, NULL, err, sizeof err)) {
        fprintf(stderr, "actions_driver: %s\n", err);
        return 1;
    }
    struct strs classes = column(db, "SELECT DISTINCT name FROM symbols WHERE kind = 'class' ORDER BY name");
    struct strs funcs = column(db, "SELECT DISTINCT name FROM symbols WHERE kind IN ('function','method') ORDER BY name");
    struct strs spans = column(db, "SELECT f.path || ':' || s.start_line || '-' || min(s.end_line, s.start_line + 60) "
                                   "FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.kind IN ('function','method') "
                                   "ORDER BY s.id");
    struct strs members = column(db, "SELECT f.path || ':' || s.qualname FROM symbols s JOIN files f ON f.id = s.file_id "
                                     "WHERE s.kind = 'method' ORDER BY s.id");
    /* snippet candidates: lines of 25-70 bytes with an identifier call in them */
    struct strs lines = {NULL, 0};
    {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "SELECT drqa_text(ztext, tlen) FROM files WHERE lang = 'python' ORDER BY path", -1, &st,
                           NULL);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            while (*t) {
                const char *e = strchr(t, '\n');
                size_t len = e ? (size_t)(e - t) : strlen(t);
                const char *a = t;
                while (a < t + len && (*a == ' ' || *a == '\t')) a++;
                size_t l = len - (size_t)(a - t);
                if (l >= 25 && l <= 70 && memchr(a, '(', l) && !memchr(a, '\'', l) && !memchr(a, '"', l) &&
                    !memchr(a, '\\', l) && a[0] != '#' && a[0] != '-')
                    strs_add(&lines, xstrndup(a, l));
                if (!e) break;
                t = e + 1;
            }
        }
        sqlite3_finalize(st);
    }
    printf("index: %zu class names, %zu function names, %zu snippet candidate lines\n", classes.n, funcs.n, lines.n);
    if (!classes.n || !funcs.n || !lines.n || !spans.n || !members.n) {
        fprintf(stderr, "actions_driver: the index has too few symbols to draw calls from\n");
        return 1;
    }

    struct strs a_cls = {0}, a_fun = {0}, a_view = {0}, a_snip = {0}, snips = {0};
    for (size_t i = 0; i < n; i++) {
        strs_add(&a_cls, json_str("class_name", classes.v[next_rand() % classes.n]));
        strs_add(&a_fun, json_str("function_name", funcs.v[next_rand() % funcs.n]));
        const char *sp = (i % 2 ? members : spans).v[next_rand() % (i % 2 ? members.n : spans.n)];
        cJSON *o = cJSON_CreateObject();
        cJSON *l = cJSON_AddArrayToObject(o, "code_span_list");
        cJSON_AddItemToArray(l, cJSON_CreateString(sp));
        strs_add(&a_view, cJSON_PrintUnformatted(o));
        cJSON_Delete(o);
        char *line = lines.v[next_rand() % lines.n];
        strs_add(&snips, line);
        strs_add(&a_snip, json_str("code_snippet", line));
    }

    struct action_ctx ctx;
    action_ctx_init(&ctx, db, argv[2]);
    long long *us = xmalloc(n * sizeof *us), *cpu = xmalloc(n * sizeof *cpu);
    size_t found;
    run_all(&ctx, "FindClass", &a_cls, us, cpu, &found);
    report("FindClass", us, cpu, n, found);
    run_all(&ctx, "FindFunction", &a_fun, us, cpu, &found);
    report("FindFunction", us, cpu, n, found);
    run_all(&ctx, "ViewCode", &a_view, us, cpu, &found);
    report("ViewCode", us, cpu, n, found);
    run_all(&ctx, "FindCodeSnippet", &a_snip, us, cpu, &found);
    long long snip_p50 = pct(us, n, 50), snip_p95 = pct(us, n, 95);
    long long snip_c50 = pct(cpu, n, 50), snip_c95 = pct(cpu, n, 95);
    report("FindCodeSnippet", us, cpu, n, found);

    /* the same snippets with ripgrep over the same tree, one process per call
     * as a tool-driven agent runs it: over every file, and over Python files only */
    for (int variant = 0; rg && variant < 2; variant++) {
        long long *rus = xmalloc(n * sizeof *rus), *rcpu = xmalloc(n * sizeof *rcpu);
        for (size_t i = 0; i < n; i++) {
            const char *all[] = {rg, "-F", "-n", "-q", "--", snips.v[i], argv[2], NULL};
            const char *py[] = {rg, "-F", "-n", "-q", "-t", "py", "--", snips.v[i], argv[2], NULL};
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
            long long t0 = now_us();
            pid_t pid;
            if (posix_spawnp(&pid, rg, &fa, NULL, (char *const *)(variant ? py : all), environ) != 0) {
                fprintf(stderr, "actions_driver: cannot run %s\n", rg);
                return 1;
            }
            int status;
            struct rusage ru;
            wait4(pid, &status, 0, &ru);
            rus[i] = now_us() - t0;
            /* the child's user + system time, all its threads */
            rcpu[i] = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
                      ru.ru_stime.tv_usec;
            posix_spawn_file_actions_destroy(&fa);
        }
        const char *label = variant ? "rg -F -t py" : "rg -F";
        long long rg50 = pct(rus, n, 50), rg95 = pct(rus, n, 95), rc50 = pct(rcpu, n, 50), rc95 = pct(rcpu, n, 95);
        printf("%-16s %4zu calls                     wall p50 %7.3f p95 %7.3f ms  cpu p50 %7.3f p95 %7.3f ms\n",
               label, n, rg50 / 1000.0, rg95 / 1000.0, rc50 / 1000.0, rc95 / 1000.0);
        printf("FindCodeSnippet vs %s, wall time: %.1fx faster at p50, %.1fx at p95\n", label,
               (double)rg50 / (double)snip_p50, (double)rg95 / (double)snip_p95);
        printf("FindCodeSnippet vs %s, cpu time:  %.1fx less at p50, %.1fx at p95\n", label,
               (double)rc50 / (double)snip_c50, (double)rc95 / (double)snip_c95);
        free(rus);
        free(rcpu);
    }
    action_ctx_release(&ctx);
    sqlite3_close(db);
    free(us);
    free(cpu);
    return 0;
}
