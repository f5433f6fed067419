/*
 * bench_parallel: the wall time of one search run sequentially and with K
 * expansions in flight, when every policy role call (perceive, plan,
 * evaluate) costs a fixed latency, as LLM calls do. Not a test: bench/
 * parallel.sh runs it and prints what it prints.
 *
 *   bench_parallel [-k K] [-n ITERATIONS] [-r REPEATS]
 *
 * The policy is the scripted toy policy of the tests (tests/toy_policy.h),
 * declared thread-safe; the executor and curator are declared not
 * thread-safe, so they run one at a time as a single sqlite connection would
 * have to. Latencies come from the environment of this driver only:
 * DRQA_BENCH_ROLE_MS (default 40) per policy role call and
 * DRQA_BENCH_EXEC_MS (default 2) per executor call. Each configuration runs
 * REPEATS times (default 3) and the median wall time is reported.
 */
#include "../tests/toy_policy.h"
#include "search.h"
#include "util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int role_ms, exec_ms;
static atomic_int in_flight, max_in_flight;   /* policy calls, latency included */

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A policy call's latency, counted in flight while it lasts. */
static void role_latency(void)
{
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    for (int m = atomic_load(&max_in_flight); now > m && !atomic_compare_exchange_weak(&max_in_flight, &m, now);) {
    }
    pause_ms(role_ms);
    atomic_fetch_sub(&in_flight, 1);
}

static int slow_perceive(void *ctx, const struct mcts_tree *t, int id, char **report, struct policy_usage *u,
                         char *err, size_t errlen)
{
    role_latency();
    return toy_perceive(ctx, t, id, report, u, err, errlen);
}

static int slow_plan(void *ctx, const struct mcts_tree *t, int id, const char *report, struct policy_action *out,
                     struct policy_usage *u, char *err, size_t errlen)
{
    role_latency();
    return toy_plan(ctx, t, id, report, out, u, err, errlen);
}

static int slow_eval(void *ctx, const struct mcts_tree *t, int id, struct policy_eval *out, struct policy_usage *u,
                     char *err, size_t errlen)
{
    role_latency();
    return toy_eval(ctx, t, id, out, u, err, errlen);
}

static int slow_exec(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text, char *err,
                     size_t errlen)
{
    pause_ms(exec_ms);
    return toy_exec(ctx, name, args, raw, text, err, errlen);
}

struct result {
    long long wall_ms;
    int iterations, calls, max_in_flight, steps;
};

static struct result run_once(int k, int iterations)
{
    struct toy t;
    toy_init(&t);
    struct policy p = toy_policy(&t);
    p.perceive = slow_perceive;
    p.plan = slow_plan;
    p.evaluate = slow_eval;
    struct policy_executor ex = toy_executor(&t);
    ex.execute = slow_exec;
    struct policy_curator cu = toy_curator(&t);
    struct search_config c;
    search_config_defaults(&c);
    c.iterations = iterations;
    c.parallel = k;
    c.policy_thread_safe = 1;

    struct result r = {0};
    atomic_store(&max_in_flight, 0);
    int64_t t0 = now_us();
    struct search *s = search_new(&c, &p, &ex, &cu, "how does routing work?");
    while (search_step(s) > 0) r.steps++;
    r.wall_ms = (now_us() - t0 + 500) / 1000;
    r.iterations = search_tree(s)->iterations;
    r.calls = t.calls_perceive + t.calls_plan + t.calls_eval;
    r.max_in_flight = atomic_load(&max_in_flight);
    search_free(s);
    return r;
}

static int cmp_wall(const void *a, const void *b)
{
    const struct result *x = a, *y = b;
    return (x->wall_ms > y->wall_ms) - (x->wall_ms < y->wall_ms);
}

static struct result median(int k, int iterations, int repeats)
{
    struct result *v = xcalloc((size_t)repeats, sizeof *v);
    for (int i = 0; i < repeats; i++) v[i] = run_once(k, iterations);
    qsort(v, (size_t)repeats, sizeof *v, cmp_wall);
    struct result m = v[repeats / 2];
    free(v);
    return m;
}

static int env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

int main(int argc, char **argv)
{
    int k = 3, iterations = 15, repeats = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc) k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) repeats = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_parallel [-k K] [-n ITERATIONS] [-r REPEATS]\n");
            return 2;
        }
    }
    if (k < 2 || iterations < 1 || repeats < 1) {
        fprintf(stderr, "bench_parallel: K must be at least 2, iterations and repeats at least 1\n");
        return 2;
    }
    role_ms = env_int("DRQA_BENCH_ROLE_MS", 40);
    exec_ms = env_int("DRQA_BENCH_EXEC_MS", 2);

    struct result seq = median(1, iterations, repeats);
    struct result par = median(k, iterations, repeats);
    printf("parallel expansion: %d iterations; each policy call %d ms, each executor call %d ms "
           "(executor and curator serialised); median of %d runs\n",
           iterations, role_ms, exec_ms, repeats);
    printf("  sequential     %6lld ms  %2d iterations in %2d steps, %3d policy calls, at most %d in flight\n",
           seq.wall_ms, seq.iterations, seq.steps, seq.calls, seq.max_in_flight);
    printf("  --parallel %-3d %6lld ms  %2d iterations in %2d steps, %3d policy calls, at most %d in flight\n", k,
           par.wall_ms, par.iterations, par.steps, par.calls, par.max_in_flight);
    double ratio = par.wall_ms > 0 ? (double)seq.wall_ms / (double)par.wall_ms : 0;
    printf("  speed-up       %.2fx", ratio);
    if (k == 3) printf("  [goal >= 2x: %s]", ratio >= 2 ? "met" : "NOT met");
    printf("\n");
    return 0;
}
