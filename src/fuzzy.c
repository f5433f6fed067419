/*
 * fuzzy: edit distance and subsequence scoring over identifier and path
 * candidates (see fuzzy.h). Candidate lists come from the index (tens of
 * thousands of names for a large repository), so the distance is banded and
 * candidates whose length alone rules them out are skipped before any work.
 */
#include "fuzzy.h"
#include "util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define FUZZY_MAXLEN 128

static int lc(int c) { return tolower((unsigned char)c); }

int fuzzy_distance(const char *a, const char *b, int max)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > FUZZY_MAXLEN || m > FUZZY_MAXLEN) return max + 1;
    if ((int)(n > m ? n - m : m - n) > max) return max + 1;
    int rows[3][FUZZY_MAXLEN + 1];
    int *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (int)i;
        int best = cur[0];
        for (size_t j = 1; j <= m; j++) {
            int cost = lc(a[i - 1]) != lc(b[j - 1]);
            int v = prev[j - 1] + cost;
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && lc(a[i - 1]) == lc(b[j - 2]) && lc(a[i - 2]) == lc(b[j - 1]) &&
                pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
            if (v < best) best = v;
        }
        if (best > max) return max + 1;
        int *t = pp; pp = prev; prev = cur; cur = t;
    }
    return prev[m] > max ? max + 1 : prev[m];
}

static int word_start(const char *s, size_t i)
{
    if (i == 0) return 1;
    char p = s[i - 1], c = s[i];
    if (p == '_' || p == '.' || p == '/' || p == '-') return 1;
    return islower((unsigned char)p) && isupper((unsigned char)c);
}

double fuzzy_subseq(const char *q, const char *c)
{
    size_t qn = strlen(q), cn = strlen(c);
    if (!qn || qn > cn) return 0;
    double pts = 0;
    size_t j = 0;
    int prev_hit = -2;
    for (size_t i = 0; i < qn; i++) {
        while (j < cn && lc(c[j]) != lc(q[i])) j++;
        if (j == cn) return 0;
        double p = 1;
        if ((int)j == prev_hit + 1) p = 2;            /* contiguous run */
        else if (word_start(c, j)) p = 2;             /* jump to a word start */
        pts += p;
        prev_hit = (int)j;
        j++;
    }
    /* 2 points per query char at best; longer candidates weigh a little less. */
    double s = pts / (2.0 * (double)qn);
    return s * (0.5 + 0.5 * (double)qn / (double)cn);
}

double fuzzy_score(const char *q, const char *c)
{
    size_t qn = strlen(q), cn = strlen(c);
    if (!qn || !cn) return 0;
    int max = (int)(qn / 3);
    if (max < 1) max = 1;
    int d = fuzzy_distance(q, c, max);
    if (d == 0) return 1.0;
    double best = 0;
    if (d <= max) {
        size_t L = qn > cn ? qn : cn;
        best = 0.9 * (1.0 - (double)d / (double)L);
        if (best < 0.5) best = 0.5;
    }
    if (qn >= 3 && strcasestr(c, q)) {
        double s = 0.45 + 0.35 * (double)qn / (double)cn;
        if (s > best) best = s;
    }
    if (qn >= 3) {
        double s = 0.6 * fuzzy_subseq(q, c);
        if (s > 0.25 && s > best) best = s;
    }
    return best;
}

static int hit_cmp(const struct fuzzy_hit *a, const struct fuzzy_hit *b, const char *const *c)
{
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    size_t la = strlen(c[a->index]), lb = strlen(c[b->index]);
    if (la != lb) return la < lb ? -1 : 1;
    int r = strcmp(c[a->index], c[b->index]);
    if (r) return r;
    return a->index < b->index ? -1 : a->index > b->index;
}

size_t fuzzy_best(const char *q, const char *const *cands, size_t n, size_t k, struct fuzzy_hit *out)
{
    size_t have = 0;
    if (!k) return 0;
    for (size_t i = 0; i < n; i++) {
        struct fuzzy_hit h = {i, fuzzy_score(q, cands[i])};
        if (h.score <= 0) continue;
        if (have == k && hit_cmp(&h, &out[k - 1], cands) >= 0) continue;
        size_t pos = have < k ? have++ : k - 1;
        while (pos > 0 && hit_cmp(&h, &out[pos - 1], cands) < 0) {
            out[pos] = out[pos - 1];
            pos--;
        }
        out[pos] = h;
    }
    return have;
}
