/*
 * bench_windows: the offline policy's window ranking (qparse_windows) read
 * from the index's line postings, against the anchor measured in the same
 * run: the same ranking computed by tokenising every file
 * (qparse_windows_scan), which is what every question did before the
 * postings. Prints the median milliseconds of each per question, their
 * ratio, the one-time cost of building the postings, and how many
 * questions got identical windows (it must be all of them).
 *
 *   bench/bench_windows INDEX QUESTIONS.jsonl [LINES [OVERLAP]]
 *
 * INDEX is an index already built (drqa-tui --index-only); its postings are
 * dropped first, so that their build is measured too.
 */
#include "linepost.h"
#include "qparse.h"
#include "store.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double median(int64_t *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_windows INDEX QUESTIONS.jsonl [LINES [OVERLAP]]\n");
        return 2;
    }
    int lines = argc > 3 ? atoi(argv[3]) : 200, overlap = argc > 4 ? atoi(argv[4]) : lines / 10;
    char err[512];
    sqlite3 *db;
    if (store_open(argv[1], 0, &db, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_windows: %s\n", err);
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        fprintf(stderr, "bench_windows: cannot read '%s'\n", argv[2]);
        return 2;
    }
    sqlite3_exec(db, "DROP TABLE IF EXISTS lp_terms; DROP TABLE IF EXISTS lp_meta", NULL, NULL, NULL);
    int64_t t0 = now_us();
    int built = linepost_build(db, err, sizeof err);
    int64_t build_us = now_us() - t0;
    if (built != 1) {
        fprintf(stderr, "bench_windows: the postings could not be built: %s\n", built < 0 ? err : "index not writable");
        return 2;
    }
    char line[8192];
    int64_t scan[4096], post[4096];
    size_t n = 0, same = 0;
    while (n < 4096 && fgets(line, sizeof line, f)) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *qs = j ? cJSON_GetObjectItemCaseSensitive(j, "question") : NULL;
        struct qparse q;
        if (!cJSON_IsString(qs) || qparse_question(qs->valuestring, &q, err, sizeof err)) {
            cJSON_Delete(j);
            continue;
        }
        qparse_weigh(&q, db);
        struct qwindow *a = NULL, *b = NULL;
        int64_t s0 = now_us();
        int nb = qparse_windows_scan(&q, db, lines, overlap, 20, &b, err, sizeof err);
        int64_t s1 = now_us();
        int na = qparse_windows(&q, db, lines, overlap, 20, &a, err, sizeof err);
        int64_t s2 = now_us();
        scan[n] = s1 - s0;
        post[n] = s2 - s1;
        int eq = na == nb;
        for (int k = 0; eq && k < na; k++)
            eq = !strcmp(a[k].path, b[k].path) && a[k].start_line == b[k].start_line && a[k].score == b[k].score;
        same += eq;
        n++;
        qparse_windows_free(a, na > 0 ? (size_t)na : 0);
        qparse_windows_free(b, nb > 0 ? (size_t)nb : 0);
        qparse_free(&q);
        cJSON_Delete(j);
    }
    fclose(f);
    double ms = median(scan, n) / 1000.0, mp = median(post, n) / 1000.0;
    printf("windows of %d lines (%d overlapping), %zu questions: scan (anchor) median %.1f ms, postings median %.2f ms, "
           "ratio %.3f (%.0fx faster); postings built once in %.0f ms; identical windows %zu/%zu\n",
           lines, overlap, n, ms, mp, ms > 0 ? mp / ms : 0, mp > 0 ? ms / mp : 0, build_us / 1000.0, same, n);
    sqlite3_close(db);
    return same == n ? 0 : 1;
}
