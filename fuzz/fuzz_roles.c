/*
 * fuzz_roles: what each LLM role does with an untrusted model reply. The
 * input is split at its first byte: that byte picks the role (planning,
 * evaluation, perception, evidence filter, answer citations, question-type
 * check) and the rest is the reply text, which goes through the same path as
 * a real reply: jsonx offers each object of it in turn to the role's checker,
 * which takes the first one it accepts, as converse() does. A checker must
 * either accept with well-formed results (an action name, a value in 0-100,
 * filter spans inside the raw result) and notes that fit their buffer, or
 * refuse with a message; it must never crash, leak or accept garbage.
 */
#include "evidence.h"
#include "jsonx.h"
#include "policy.h"
#include "policy_llm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void raw_result(struct evidence *raw)
{
    evidence_add(raw, "pkg/app.py", 10, 40, "class App:\n    def run(self):\n        pass\n", "class App", 1);
    evidence_add(raw, "pkg/util.py", 1, 12, "def helper():\n    return 1\n", "def helper()", 0.5);
}

/* One reply object through the role's checker: 0 when accepted. */
static int check_object(void *ctx, const struct jsonx_candidate *cand)
{
    int role = *(int *)ctx;
    const cJSON *obj = cand->obj;
    struct policy_usage notes;
    memset(&notes, 0, sizeof notes);
    char err[512] = "";
    int rc = 0;
    if (role == 0) {
        struct policy_action a = {0};
        rc = llm_check_plan(obj, (int)(cand->len & 1), &a, &notes, err, sizeof err);
        if (rc == 0 && (!a.name || !*a.name)) abort();
        policy_action_clear(&a);
    } else if (role == 1) {
        double v = -1;
        char *fb = NULL;
        rc = llm_check_eval(obj, &v, &fb, &notes, err, sizeof err);
        if (rc == 0 && (isnan(v) || v < 0 || v > 100)) abort();
        free(fb);
    } else if (role == 2) {
        char *report = NULL;
        rc = llm_check_perception(obj, &report, &notes, err, sizeof err);
        if (rc == 0 && !report) abort();
        free(report);
    } else {
        struct evidence raw = EVIDENCE_INIT, out = EVIDENCE_INIT;
        raw_result(&raw);
        int dropped = 0;
        rc = llm_check_filter(obj, &raw, NULL, &out, &dropped, &notes, err, sizeof err);
        for (size_t i = 0; rc == 0 && i < out.n; i++)
            if (!evidence_covers(&raw, out.v[i].path, out.v[i].start_line, out.v[i].end_line)) abort();
        evidence_free(&raw);
        evidence_free(&out);
    }
    if (rc != 0 && !err[0]) abort();
    if (strlen(notes.notes) >= sizeof notes.notes) abort();
    return rc;
}

static void check_role(int role, const char *text, size_t len)
{
    char err[512] = "";
    if (role == 4) {           /* answer citations */
        struct evidence c = EVIDENCE_INIT;
        size_t n = llm_parse_citations(text, &c);
        if (n != c.n) abort();
        for (size_t i = 0; i < c.n; i++)
            if (!c.v[i].path || c.v[i].start_line < 1 || c.v[i].end_line < c.v[i].start_line) abort();
        struct evidence seen = EVIDENCE_INIT;
        raw_result(&seen);
        int removed = 0;
        char *s = llm_strip_citations(text, &seen, &removed);
        if (!s || removed < 0) abort();
        free(s);
        evidence_free(&seen);
        evidence_free(&c);
        return;
    }
    if (role == 5) {           /* question type check */
        static const char *const types[] = {"what", "where", "how", "why", "other"};
        char why[256];
        for (size_t i = 0; i < sizeof types / sizeof *types; i++)
            (void)llm_answer_misses_type(types[i], text, (int)(len % 3), why, sizeof why);
        return;
    }
    int rr = jsonx_each_object(text, len, check_object, &role, err, sizeof err);
    if (rr < 0 && !err[0]) abort();   /* a refusal always says why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int role = data[0] % 6;
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    check_role(role, text, size - 1);
    free(text);
    return 0;
}
