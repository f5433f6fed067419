/*
 * policy: freeing the results a policy hands to the engine. The interface
 * itself is the vtable in policy.h.
 */
#include "policy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void policy_usage_note(struct policy_usage *u, const char *fmt, ...)
{
    if (!u) return;
    size_t len = strlen(u->notes);
    if (len + 3 >= sizeof u->notes) return;
    if (len) {
        memcpy(u->notes + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->notes + len, sizeof u->notes - len, fmt, ap);
    va_end(ap);
}

void policy_action_clear(struct policy_action *a)
{
    if (!a) return;
    free(a->name);
    cJSON_Delete(a->args);
    free(a->rationale);
    memset(a, 0, sizeof *a);
}

void policy_eval_clear(struct policy_eval *e)
{
    if (!e) return;
    free(e->feedback);
    memset(e, 0, sizeof *e);
}

void policy_answer_clear(struct policy_answer *a)
{
    if (!a) return;
    free(a->markdown);
    evidence_free(&a->cites);
    evidence_free(&a->read);
    memset(a, 0, sizeof *a);
}
