/*
 * answer_setting: the setting the cited code reads that the question asks
 * of (see answer_setting.h).
 */
#include "answer_setting.h"
#include "util.h"

#include <ctype.h>
#include <string.h>

static int conf_receiver(const char *start, const char *end)
{
    /* the identifier ending at end */
    const char *b = end;
    while (b > start && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
    if (b == end) return 0;
    char id[64];
    size_t n = (size_t)(end - b) < sizeof id - 1 ? (size_t)(end - b) : sizeof id - 1;
    for (size_t i = 0; i < n; i++) id[i] = (char)tolower((unsigned char)b[i]);
    id[n] = 0;
    return strstr(id, "conf") || strstr(id, "setting") || strstr(id, "option");
}

static void setting_in_line(const struct qparse *q, const char *l, size_t len, size_t cite, int line,
                            struct answer_setting *best)
{
    const char *e = l + len;
    for (const char *p = l; p < e; p++) {
        const char *k = NULL;
        size_t kn = 0;
        if ((*p == '[' || *p == '(' || (!strncmp(p, ".get(", 5) && p + 5 < e)) && p > l && conf_receiver(l, p)) {
            const char *o = *p == '.' ? p + 5 : p + 1;
            if (o < e && (*o == '"' || *o == '\'')) {
                const char *c = memchr(o + 1, *o, (size_t)(e - o - 1));
                if (c) {
                    k = o + 1;
                    kn = (size_t)(c - k);
                }
            }
        } else if (*p == '.' && p > l && conf_receiver(l, p) && p + 1 < e &&
                   (isalpha((unsigned char)p[1]) || p[1] == '_') && strncmp(p, ".get(", 5)) {
            k = p + 1;
            while (k + kn < e && (isalnum((unsigned char)k[kn]) || k[kn] == '_')) kn++;
        }
        if (!k || kn < 3 || kn >= sizeof best->key) continue;
        int ok = 1;
        for (size_t i = 0; i < kn && ok; i++)
            ok = isalnum((unsigned char)k[i]) || k[i] == '_' || k[i] == '.' || k[i] == '-';
        if (!ok) continue;
        double sc = qparse_match(q, k, kn, NULL);
        if (sc > best->score) {
            memcpy(best->key, k, kn);
            best->key[kn] = 0;
            best->cite = cite;
            best->line = line;
            best->score = sc;
        }
    }
}

#define FIND_SETTING_MIN 0.2   /* the share of the question a setting's key must match */

/* 1 when the question asks about configuration ("Which setting turns on
 * debug mode?", "the option that disables ..."): then a setting the cited
 * code reads is said to control what it asks. */
static int asks_setting(const struct qparse *q)
{
    static const char *const words[] = {"setting", "config", "option", "flag", "enabl", "disabl", "toggl"};
    for (size_t i = 0; i < q->nwords; i++)
        for (size_t k = 0; k < ARRAY_LEN(words); k++)
            if (!strncmp(q->words[i], words[k], strlen(words[k]))) return 1;
    return 0;
}

int answer_setting_find(const struct qparse *q, const char *const *texts, const int *starts, size_t n,
                        struct answer_setting *out)
{
    memset(out, 0, sizeof *out);
    if (!asks_setting(q)) return 0;
    for (size_t i = 0; i < n; i++) {
        if (!texts[i]) continue;
        const char *p = texts[i];
        int line = starts[i];
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            const char *hash = memchr(p, '#', len);   /* not in a comment */
            setting_in_line(q, p, hash ? (size_t)(hash - p) : len, i, line, out);
            if (!nl) break;
            p = nl + 1;
            line++;
        }
    }
    return out->score >= FIND_SETTING_MIN;
}
