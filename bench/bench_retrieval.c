/*
 * bench_retrieval: file-level retrieval quality and latency of SemanticSearch.
 * For every question of a SWE-QA style JSONL file whose "repo" names one of
 * the repositories given on the command line, runs the question through each
 * ranking (bm25, dense, hybrid) and through an anchor measured in the same
 * run (plain FTS5 bm25 with equal column weights over function and class
 * chunks only, the "function chunking" retriever) and counts the questions
 * whose top k results include a gold file. Gold paths come from the upstream
 * source tree while the indexed copy may sit under another prefix, so a
 * result matches a gold file when their last two path components agree (the
 * result path is prefixed with the repository's name; a one-component gold
 * path is compared by base name).
 *
 * Usage: bench_retrieval [-k K] [--latency NAME=DIR] QUESTIONS.jsonl NAME=DIR...
 * Indexes go to a temporary directory removed at the end. --latency repeats
 * every question over another repository (e.g. a large one) for timings only.
 */
#include "index.h"
#include "semantic.h"
#include "store.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NMODES 4   /* anchor, bm25, dense, hybrid */
static const char *const mode_names[NMODES] = {"anchor", "bm25", "dense", "hybrid"};

struct question { char *repo, *text; char **gold; int ngold; };

static int last_components_match(const char *gold, const char *path)
{
    /* compare from the end, component by component, at most two */
    const char *g = gold + strlen(gold), *p = path + strlen(path);
    for (int comp = 0; comp < 2; comp++) {
        const char *gs = g, *ps = p;
        while (gs > gold && gs[-1] != '/') gs--;
        while (ps > path && ps[-1] != '/') ps--;
        if (g - gs != p - ps || memcmp(gs, ps, (size_t)(g - gs)) != 0) return 0;
        if (gs == gold || ps == path) return 1;   /* one side has no more components */
        g = gs - 1;
        p = ps - 1;
    }
    return 1;
}

/* The anchor: function/class chunks ranked by plain bm25. Appends paths. */
static int anchor(sqlite3 *db, const char *text, int k, char ***paths, int *n)
{
    *n = 0;
    char *m = semantic_fts_query(text);
    if (!m) return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
            "SELECT f.path FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            "JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ?1 AND c.kind IN ('function','class') "
            "ORDER BY bm25(chunks_fts) LIMIT ?2", -1, &st, NULL) != SQLITE_OK) {
        free(m);
        return -1;
    }
    sqlite3_bind_text(st, 1, m, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, k);
    *paths = xcalloc((size_t)k, sizeof **paths);
    while (sqlite3_step(st) == SQLITE_ROW) (*paths)[(*n)++] = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    free(m);
    return 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static double pct(long long *v, int n, double p)
{
    if (!n) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i] / 1000.0;
}

static int open_index(const char *dir, const char *tmp, const char *name, sqlite3 **db, struct semantic_cache **sc)
{
    char err[1024];
    char *path = xasprintf("%s/%s.sqlite", tmp, name);
    struct index_stats stats;
    int64_t t0 = now_ms();
    if (index_update(dir, path, NULL, &stats, err, sizeof err)) {
        fprintf(stderr, "bench_retrieval: %s\n", err);
        free(path);
        return -1;
    }
    int64_t t1 = now_ms();
    if (store_open(path, 0, db, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_retrieval: %s\n", err);
        free(path);
        return -1;
    }
    free(path);
    *sc = semantic_cache_new(*db);
    if (semantic_prepare(*sc, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_retrieval: %s\n", err);
        return -1;
    }
    int64_t t2 = now_ms();
    sqlite3_stmt *st;
    long nchunks = 0;
    if (sqlite3_prepare_v2(*db, "SELECT count(*) FROM chunks", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        nchunks = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    printf("# %s: %ld files, %ld chunks; index %lld ms, local vectors %lld ms\n", name, stats.files, nchunks,
           (long long)(t1 - t0), (long long)(t2 - t1));
    return 0;
}

/* Runs one question in one mode; fills paths (caller frees). Returns elapsed us. */
static long long run(sqlite3 *db, struct semantic_cache *sc, int mode, const char *text, int k, char ***paths, int *n)
{
    int64_t t0 = now_us();
    if (mode == 0) {
        if (anchor(db, text, k, paths, n)) { fprintf(stderr, "bench_retrieval: anchor query failed\n"); exit(1); }
        return now_us() - t0;
    }
    struct semantic_query q = {text, SEMANTIC_ANY, NULL, k, mode == 1 ? SEMANTIC_BM25 : mode == 2 ? SEMANTIC_DENSE
                                                                                                  : SEMANTIC_HYBRID, NULL};
    struct evidence ev = EVIDENCE_INIT;
    char err[512];
    if (semantic_search(sc, &q, &ev, err, sizeof err) < 0) {
        fprintf(stderr, "bench_retrieval: %s\n", err);
        exit(1);
    }
    long long us = now_us() - t0;
    *paths = xcalloc(ev.n + 1, sizeof **paths);
    *n = (int)ev.n;
    for (size_t i = 0; i < ev.n; i++) (*paths)[i] = xstrdup(ev.v[i].path);
    evidence_free(&ev);
    return us;
}

int main(int argc, char **argv)
{
    int k = 5;
    const char *latency = NULL;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-k") && a + 1 < argc) k = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--latency") && a + 1 < argc) latency = argv[++a];
        else break;
    }
    if (argc - a < 2 || k <= 0) {
        fprintf(stderr, "usage: bench_retrieval [-k K] [--latency NAME=DIR] QUESTIONS.jsonl NAME=DIR...\n");
        return 2;
    }
    size_t len;
    char *data = read_file(argv[a], 64 << 20, &len);
    if (!data) { perror(argv[a]); return 1; }
    struct question *qs = NULL;
    int nq = 0, capq = 0;
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        if (!o) continue;
        const cJSON *repo = cJSON_GetObjectItem(o, "repo"), *text = cJSON_GetObjectItem(o, "question"),
                    *gold = cJSON_GetObjectItem(o, "gold_files");
        if (cJSON_IsString(repo) && cJSON_IsString(text) && cJSON_IsArray(gold)) {
            if (nq == capq) { capq = capq ? capq * 2 : 128; qs = xrealloc(qs, (size_t)capq * sizeof *qs); }
            struct question *q = &qs[nq++];
            q->repo = xstrdup(repo->valuestring);
            q->text = xstrdup(text->valuestring);
            q->ngold = 0;
            q->gold = xcalloc((size_t)cJSON_GetArraySize(gold) + 1, sizeof *q->gold);
            const cJSON *g;
            cJSON_ArrayForEach(g, gold) if (cJSON_IsString(g)) q->gold[q->ngold++] = xstrdup(g->valuestring);
        }
        cJSON_Delete(o);
    }
    free(data);

    char tmp[] = "/tmp/drqa-bench-retrieval-XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 1; }
    int hits[NMODES] = {0}, total = 0;
    long long *lat[NMODES];
    int nlat = 0;
    for (int m = 0; m < NMODES; m++) lat[m] = xcalloc((size_t)nq * 2 + 1, sizeof **lat);
    for (int r = a + 1; r < argc; r++) {
        char *name = xstrdup(argv[r]);
        char *eq = strchr(name, '=');
        if (!eq) { fprintf(stderr, "bench_retrieval: '%s' is not NAME=DIR\n", argv[r]); return 2; }
        *eq = 0;
        const char *dir = eq + 1;
        sqlite3 *db;
        struct semantic_cache *sc;
        if (open_index(dir, tmp, name, &db, &sc)) return 1;
        int here = 0;
        int rh[NMODES] = {0};
        for (int i = 0; i < nq; i++) {
            if (strcmp(qs[i].repo, name)) continue;
            here++;
            for (int m = 0; m < NMODES; m++) {
                char **paths = NULL;
                int n = 0;
                lat[m][nlat] = run(db, sc, m, qs[i].text, k, &paths, &n);
                int hit = 0;
                for (int p = 0; p < n; p++) {
                    char *full = xasprintf("%s/%s", name, paths[p]);
                    for (int g = 0; g < qs[i].ngold && !hit; g++) hit = last_components_match(qs[i].gold[g], full);
                    free(full);
                    free(paths[p]);
                }
                free(paths);
                rh[m] += hit;
            }
            nlat++;
        }
        printf("# %s: %d questions; hits anchor %d, bm25 %d, dense %d, hybrid %d\n", name, here, rh[0], rh[1], rh[2], rh[3]);
        for (int m = 0; m < NMODES; m++) hits[m] += rh[m];
        total += here;
        semantic_cache_free(sc);
        sqlite3_close(db);
        free(name);
    }
    printf("\nQuestions whose top-%d results include a gold file (%d questions)\n", k, total);
    printf("%-8s %6s %8s %10s %9s %9s\n", "mode", "hits", "share", "vs anchor", "p50 ms", "p95 ms");
    double p95a = 0;
    for (int m = 0; m < NMODES; m++) {
        long long *v = xcalloc((size_t)nlat + 1, sizeof *v);
        memcpy(v, lat[m], (size_t)nlat * sizeof *v);
        double p50 = pct(v, nlat, 0.5), p95 = pct(v, nlat, 0.95);
        if (m == 0) p95a = p95;
        printf("%-8s %6d %7.1f%% %10.2f %9.2f %9.2f\n", mode_names[m], hits[m], total ? 100.0 * hits[m] / total : 0,
               hits[0] ? (double)hits[m] / hits[0] : 0, p50, p95);
        free(v);
    }
    (void)p95a;

    if (latency) {
        char *name = xstrdup(latency);
        char *eq = strchr(name, '=');
        if (!eq) { fprintf(stderr, "bench_retrieval: '%s' is not NAME=DIR\n", latency); return 2; }
        *eq = 0;
        sqlite3 *db;
        struct semantic_cache *sc;
        if (open_index(eq + 1, tmp, name, &db, &sc)) return 1;
        printf("\nLatency over %s, all %d questions (ratio: p95 / anchor p95 in this run)\n", name, nq);
        printf("%-8s %9s %9s %9s\n", "mode", "p50 ms", "p95 ms", "ratio");
        double anchor95 = 0;
        for (int m = 0; m < NMODES; m++) {
            long long *v = xcalloc((size_t)nq + 1, sizeof *v);
            for (int i = 0; i < nq; i++) {
                char **paths = NULL;
                int n = 0;
                v[i] = run(db, sc, m, qs[i].text, k, &paths, &n);
                for (int p = 0; p < n; p++) free(paths[p]);
                free(paths);
            }
            double p50 = pct(v, nq, 0.5), p95 = pct(v, nq, 0.95);
            if (m == 0) anchor95 = p95;
            printf("%-8s %9.2f %9.2f %9.2f\n", mode_names[m], p50, p95, anchor95 > 0 ? p95 / anchor95 : 0);
            free(v);
        }
        semantic_cache_free(sc);
        sqlite3_close(db);
        free(name);
    }

    char *cmd = xasprintf("rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "bench_retrieval: could not remove %s\n", tmp);
    free(cmd);
    for (int m = 0; m < NMODES; m++) free(lat[m]);
    for (int i = 0; i < nq; i++) {
        for (int g = 0; g < qs[i].ngold; g++) free(qs[i].gold[g]);
        free(qs[i].gold);
        free(qs[i].repo);
        free(qs[i].text);
    }
    free(qs);
    return 0;
}
