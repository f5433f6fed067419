/*
 * policy_llm_check: the checks of the roles' replies (llm_check_*), the
 * citations of an answer and whether it fits its question type.
 */
#include "policy_llm_int.h"
#include "action.h"
#include "curate.h"
#include "jsonx.h"
#include "mcts.h"
#include "prompt.h"
#include "qparse.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- checks of the replies ----
 *
 * Each check reads one reply object the way a model meant it when that is
 * clear, and says so: every coercion appends a short note to `notes` (the
 * node shows them), and everything unclear is refused with the message a
 * re-ask sends. What is coerced: "arguments"/"parameters" for "args", args as
 * a JSON string, a nested {"action": {"name", "args"}} and a bare
 * {"name", "arguments"}; action names in another case or spelling
 * ("find_function", "Find Function"); argument names spelt with hyphens,
 * spaces or camelCase when exactly one argument of the action matches; a
 * string for a list argument (and a one-string list for a string, "true" for
 * a boolean); values on 0-1, "85%" and "85/100" (jsonx_score); "score" for
 * "value"; a string for a report list; filter spans written "path:10-24",
 * start_line "10-24" or "lines". What is refused with a message saying so:
 * values copied from the prompts' examples. */

/* Whole values the prompts' examples show instead of a real value. */
static const char *const placeholders[] = {"ActionName", "Action Name", "action_name", "...", "\xe2\x80\xa6",
                                           "path/to/file.py", "path/to/file", "dir/file.py", "pkg/module.py",
                                           "one sentence", "optional, one line"};

static int is_placeholder(const char *s)
{
    if (!s) return 0;
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    for (size_t i = 0; i < ARRAY_LEN(placeholders); i++)
        if (strlen(placeholders[i]) == n && strncasecmp(s, placeholders[i], n) == 0) return 1;
    return 0;
}

/* A problem when the string v (or any string in the array v) is a placeholder. */
static void refuse_placeholder(struct jsonx_check *c, const char *field, const cJSON *v)
{
    const cJSON *e = v;
    if (cJSON_IsArray(v))
        cJSON_ArrayForEach(e, v) if (cJSON_IsString(e) && is_placeholder(e->valuestring)) break;
    if (!cJSON_IsString(e) || !is_placeholder(e->valuestring)) return;
    char *shown = one_line(e->valuestring, 40);
    jsonx_check_fail(c, "field \"%s%s%s\" holds \"%s\", the placeholder of the prompt's example; write the real value",
                     c->prefix, c->prefix[0] ? "." : "", field, shown);
    free(shown);
}

/* a and b equal ignoring case, '_', '-' and spaces: "class-name", "className", "Class Name" all read class_name. */
static int loose_eq(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-' || *a == ' ') a++;
        while (*b == '_' || *b == '-' || *b == ' ') b++;
        if (!*a || !*b) return !*a && !*b;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
        a++;
        b++;
    }
}

static int string_too_long(const cJSON *v, const char *where, char *err, size_t errlen)
{
    if (cJSON_IsString(v) && strlen(v->valuestring) > MAX_ARG_BYTES) {
        snprintf(err, errlen, "field \"%s\" is too long (%zu bytes; at most %d)", where, strlen(v->valuestring),
                 MAX_ARG_BYTES);
        return 1;
    }
    return 0;
}

/* The action named name (exact, else loosely spelt; noted), or NULL. */
static const struct action_def *find_action(const char *name, struct policy_usage *notes)
{
    const struct action_def *def = action_find(name);
    for (const char *const *nm = action_names(); *nm && !def; nm++)
        if (loose_eq(*nm, name)) def = action_find(*nm);
    if (def && strcmp(def->name, name) != 0) {
        char *shown = one_line(name, 60);
        policy_usage_note(notes, "read action \"%s\" as %s", shown, def->name);
        free(shown);
    }
    return def;
}

/* Brings a's argument names and simple types into def's schema where the
 * reading is clear (noted); refuses copied placeholders. */
static void coerce_args(const struct action_def *def, cJSON *a, struct jsonx_check *c, struct policy_usage *notes)
{
    cJSON *it = a->child;
    while (it) {
        cJSON *next = it->next;
        const struct action_arg *arg = def->args, *match = NULL;
        while (arg->name && strcmp(arg->name, it->string) != 0) arg++;
        if (!arg->name) {
            int nmatch = 0;
            for (arg = def->args; arg->name; arg++)
                if (loose_eq(arg->name, it->string)) {
                    match = arg;
                    nmatch++;
                }
            if (nmatch == 1 && !cJSON_GetObjectItemCaseSensitive(a, match->name)) {
                char *shown = one_line(it->string, 40);
                policy_usage_note(notes, "read \"%s\" as %s", shown, match->name);
                free(shown);
                cJSON_DetachItemViaPointer(a, it);
                cJSON_AddItemToObject(a, match->name, it);
            } else if (strcmp(it->string, "argument") == 0) {
                jsonx_check_fail(c, "field \"args\" holds \"argument\", the placeholder of the prompt's example; give "
                                    "the arguments of the action you chose");
            }
        }
        it = next;
    }
    for (const struct action_arg *arg = def->args; arg->name; arg++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(a, arg->name);
        if (!v) continue;
        cJSON *repl = NULL;
        const char *how = NULL;
        if (arg->type == ACTION_ARG_STRING_LIST && cJSON_IsString(v)) {
            repl = jsonx_split_list(v->valuestring);
            how = "a string as a list";
        } else if (arg->type == ACTION_ARG_STRING && cJSON_IsArray(v) && cJSON_GetArraySize(v) == 1 &&
                   cJSON_IsString(v->child)) {
            repl = cJSON_CreateString(v->child->valuestring);
            how = "a one-item list as a string";
        } else if (arg->type == ACTION_ARG_BOOL && cJSON_IsString(v) &&
                   (!strcasecmp(v->valuestring, "true") || !strcasecmp(v->valuestring, "false"))) {
            repl = cJSON_CreateBool(!strcasecmp(v->valuestring, "true"));
            how = "a string as a boolean";
        }
        if (repl) {
            policy_usage_note(notes, "read %s given as %s", arg->name, how);
            cJSON_ReplaceItemInObjectCaseSensitive(a, arg->name, repl);
            v = repl;
        }
        char where[64];
        snprintf(where, sizeof where, "args.%s", arg->name);
        refuse_placeholder(c, where, v);
    }
}

int llm_check_plan(const cJSON *obj, int no_semantic, struct policy_action *out, struct policy_usage *notes,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct jsonx_check c;
    jsonx_check_init(&c);
    /* {"action": {"name": ..., "args": ...}} and {"name": ..., "arguments": ...} */
    const cJSON *shape = obj, *act = cJSON_GetObjectItemCaseSensitive(obj, "action");
    const char *name_field = "action";
    if (cJSON_IsObject(act)) {
        shape = act;
        name_field = cJSON_GetObjectItemCaseSensitive(act, "name") ? "name" : "action";
        jsonx_check_prefix(&c, "action");
        policy_usage_note(notes, "read the nested \"action\" object as the action and its arguments");
    } else if (!act && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(obj, "name"))) {
        name_field = "name";
        policy_usage_note(notes, "read \"name\" as \"action\"");
    }
    const char *name = jsonx_string(&c, shape, name_field, 1);
    jsonx_check_prefix(&c, "%s", "");
    static const char *const args_fields[] = {"args", "arguments", "parameters"};
    const cJSON *args = NULL;
    for (size_t i = 0; i < ARRAY_LEN(args_fields) && !args; i++) {
        args = cJSON_GetObjectItemCaseSensitive(shape, args_fields[i]);
        if (args && i) policy_usage_note(notes, "read \"%s\" as \"args\"", args_fields[i]);
    }
    const char *rationale = jsonx_string(&c, obj, "rationale", 0);
    if (!rationale && shape != obj) rationale = jsonx_string(&c, shape, "rationale", 0);
    refuse_placeholder(&c, "rationale", cJSON_GetObjectItemCaseSensitive(obj, "rationale"));
    if (shape != obj) refuse_placeholder(&c, "rationale", cJSON_GetObjectItemCaseSensitive(shape, "rationale"));
    const struct action_def *def = NULL;
    if (name && is_placeholder(name)) {
        refuse_placeholder(&c, "action", cJSON_GetObjectItemCaseSensitive(shape, name_field));
    } else if (name) {
        def = find_action(name, notes);
        if (!def || (no_semantic && streq(def->name, "SemanticSearch"))) {
            struct buf names = BUF_INIT;
            for (const char *const *nm = action_names(); *nm; nm++)
                if (!(no_semantic && streq(*nm, "SemanticSearch"))) buf_printf(&names, "%s%s", names.len ? ", " : "", *nm);
            char *shown = one_line(name, 60);
            jsonx_check_fail(&c, "field \"action\" must be one of %s; got \"%s\"%s", buf_str(&names), shown,
                             def ? " (not available in this run)" : "");
            free(shown);
            buf_free(&names);
            def = NULL;
        }
    }
    cJSON *parsed = NULL;
    if (args && cJSON_IsString(args)) {   /* arguments sent as a JSON string */
        parsed = cJSON_Parse(args->valuestring);
        if (cJSON_IsObject(parsed)) {
            args = parsed;
            policy_usage_note(notes, "read \"args\" given as a JSON string");
        }
    }
    if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args)) jsonx_check_fail(&c, "field \"args\" must be a JSON object");
    int rc = -1;
    if (c.nerr == 0 && def) {
        cJSON *a = args && cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
        coerce_args(def, a, &c, notes);
        char aerr[512];
        const cJSON *it;
        int bad = c.nerr > 0;
        cJSON_ArrayForEach(it, a) {
            char where[128];
            snprintf(where, sizeof where, "args.%s", it->string);
            if (!bad && string_too_long(it, where, aerr, sizeof aerr)) bad = 1;
            const cJSON *e;
            if (!bad && cJSON_IsArray(it))
                cJSON_ArrayForEach(e, it) if (!bad && string_too_long(e, where, aerr, sizeof aerr)) bad = 1;
            if (bad) break;
        }
        if (!bad && action_validate(def, a, aerr, sizeof aerr) != 0) bad = 1;
        if (bad) {
            if (c.nerr == 0) jsonx_check_fail(&c, "%s", aerr);
            cJSON_Delete(a);
        } else {
            out->name = xstrdup(def->name);
            out->args = a;
            out->rationale = rationale ? one_line(rationale, MAX_RATIONALE) : NULL;
            rc = 0;
        }
    }
    if (rc != 0) snprintf(err, errlen, "%s", jsonx_check_message(&c));
    cJSON_Delete(parsed);
    jsonx_check_free(&c);
    return rc;
}

int llm_check_eval(const cJSON *obj, double *value, char **feedback, struct policy_usage *notes, char *err,
                   size_t errlen)
{
    struct jsonx_check c;
    jsonx_check_init(&c);
    double v = 0;
    const char *field = "value";
    if (!cJSON_GetObjectItemCaseSensitive(obj, "value") && cJSON_GetObjectItemCaseSensitive(obj, "score")) {
        field = "score";
        policy_usage_note(notes, "read \"score\" as \"value\"");
    }
    char how[128];
    int got = jsonx_score(&c, obj, field, 1, &v, how, sizeof how);
    if (how[0]) policy_usage_note(notes, "%s", how);
    const char *fb = jsonx_string(&c, obj, "feedback", 0);
    const char *fb_field = "feedback";
    if (!fb && !cJSON_GetObjectItemCaseSensitive(obj, "feedback")) {
        fb = jsonx_string(&c, obj, "suggestion", 0);
        fb_field = "suggestion";
    }
    refuse_placeholder(&c, fb_field, cJSON_GetObjectItemCaseSensitive(obj, fb_field));
    int rc = -1;
    if (c.nerr == 0 && got == 1 && isfinite(v)) {
        *value = v;
        *feedback = fb ? one_line(fb, MAX_FEEDBACK) : NULL;
        rc = 0;
    } else {
        snprintf(err, errlen, "%s", c.nerr ? jsonx_check_message(&c) : "field \"value\" must be a number from 0 to 100");
    }
    jsonx_check_free(&c);
    return rc;
}

static void report_list(struct jsonx_check *c, const cJSON *obj, const char *field, const char *title,
                        struct buf *out, struct policy_usage *notes)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
    cJSON *split = NULL;
    if (cJSON_IsString(v)) {
        split = jsonx_split_list(v->valuestring);
        policy_usage_note(notes, "read \"%s\" given as a string as a list of %d", field, cJSON_GetArraySize(split));
    }
    const cJSON *arr = split ? split : jsonx_array(c, obj, field, 0);
    if (!arr) return;
    struct buf line = BUF_INIT;
    int i = 0, kept = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (!cJSON_IsString(e)) {
            jsonx_check_fail(c, "element %d of field \"%s\" must be a string", i, field);
            break;
        }
        if (kept < MAX_REPORT_ITEMS && *e->valuestring) {
            char *item = one_line(e->valuestring, MAX_REPORT_ITEM);
            buf_printf(&line, "%s%s", kept ? "; " : "", item);
            free(item);
            kept++;
        }
        i++;
    }
    refuse_placeholder(c, field, arr);
    if (kept) buf_printf(out, "%s: %s\n", title, buf_str(&line));
    buf_free(&line);
    cJSON_Delete(split);
}

int llm_check_perception(const cJSON *obj, char **report, struct policy_usage *notes, char *err, size_t errlen)
{
    struct jsonx_check c;
    jsonx_check_init(&c);
    struct buf b = BUF_INIT;
    const char *summary = jsonx_string(&c, obj, "summary", 1);
    refuse_placeholder(&c, "summary", cJSON_GetObjectItemCaseSensitive(obj, "summary"));
    if (summary) {
        char *s = one_line(summary, MAX_SUMMARY);
        buf_printf(&b, "Summary: %s\n", s);
        free(s);
    }
    report_list(&c, obj, "redundant", "Redundant", &b, notes);
    report_list(&c, obj, "unexplored", "Unexplored", &b, notes);
    report_list(&c, obj, "gaps", "Gaps", &b, notes);
    report_list(&c, obj, "candidates", "Candidates", &b, notes);
    int rc = -1;
    if (c.nerr == 0) {
        if (b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = 0;
        *report = buf_take(&b);
        rc = 0;
    } else {
        snprintf(err, errlen, "%s", jsonx_check_message(&c));
    }
    buf_free(&b);
    jsonx_check_free(&c);
    return rc;
}

/* The covering span of [path, start, end] in ev: a verbatim one preferred. */
static const struct evidence_span *cover(const struct evidence *ev, const char *path, int start, int end,
                                         const struct evidence_span *best)
{
    for (size_t i = 0; ev && i < ev->n; i++) {
        const struct evidence_span *sp = &ev->v[i];
        if (strcmp(sp->path, path) != 0 || sp->start_line > start || end > sp->end_line) continue;
        if (!best || (best->elided && !sp->elided)) best = sp;
    }
    return best;
}

/* Appends "path:a-b, path:c-d" for the spans of ev until cap more bytes. */
void list_ranges(struct buf *b, const struct evidence *ev, size_t cap)
{
    size_t start = b->len;
    for (size_t i = 0; ev && i < ev->n && b->len - start < cap; i++)
        buf_printf(b, "%s%s:%d-%d", i ? ", " : "", ev->v[i].path, ev->v[i].start_line, ev->v[i].end_line);
}

int has_exact(const struct evidence *ev, const char *path, int a, int z)
{
    for (size_t i = 0; i < ev->n; i++)
        if (ev->v[i].start_line == a && ev->v[i].end_line == z && strcmp(ev->v[i].path, path) == 0) return 1;
    return 0;
}

/* "10-24", "10 - 24", "L10-L24", "10–24" (en dash) or "10": 1 with the lines, else 0. */
static int parse_lines(const char *s, long *a, long *z)
{
    char *end;
    while (isspace((unsigned char)*s) || *s == 'L') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    *a = strtol(s, &end, 10);
    *z = *a;
    while (isspace((unsigned char)*end)) end++;
    if (*end == '-' || strncmp(end, "\xe2\x80\x93", 3) == 0) {
        end += *end == '-' ? 1 : 3;
        while (isspace((unsigned char)*end) || *end == 'L') end++;
        if (!isdigit((unsigned char)*end)) return 0;
        *z = strtol(end, &end, 10);
    }
    while (isspace((unsigned char)*end)) end++;
    return !*end && *a >= 1 && *z <= 10000000;
}

/* The lines of one filter span, read as the model wrote them: start_line and
 * end_line; start_line "10-24"; "lines" as "10-24", [10, 24] or 10. 1 with
 * the lines (*how names a coercion, else NULL), 0 with a problem recorded. */
static int span_lines_of(struct jsonx_check *c, const cJSON *e, long *a, long *z, const char **how)
{
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(e, "start_line");
    const cJSON *el = cJSON_GetObjectItemCaseSensitive(e, "end_line");
    const cJSON *ln = cJSON_GetObjectItemCaseSensitive(e, "lines");
    *how = NULL;
    if (cJSON_IsString(sl) && !el && strpbrk(sl->valuestring, "-\xe2") && parse_lines(sl->valuestring, a, z)) {
        *how = "start_line \"A-B\" as lines A to B";
        return 1;
    }
    if (!sl && !el && ln) {
        *how = "\"lines\" as start_line and end_line";
        if (cJSON_IsString(ln) && parse_lines(ln->valuestring, a, z)) return 1;
        if (cJSON_IsNumber(ln) && ln->valuedouble >= 1 && ln->valuedouble <= 10000000 &&
            ln->valuedouble == floor(ln->valuedouble)) {
            *a = *z = (long)ln->valuedouble;
            return 1;
        }
        if (cJSON_IsArray(ln) && cJSON_GetArraySize(ln) == 2) {
            struct jsonx_check sub;
            jsonx_check_init(&sub);
            cJSON *pair = cJSON_CreateObject();
            cJSON_AddItemReferenceToObject(pair, "a", cJSON_GetArrayItem(ln, 0));
            cJSON_AddItemReferenceToObject(pair, "z", cJSON_GetArrayItem(ln, 1));
            int okp = jsonx_int(&sub, pair, "a", 1, 10000000, 1, a) == 1 && jsonx_int(&sub, pair, "z", 1, 10000000, 1, z) == 1;
            cJSON_Delete(pair);
            jsonx_check_free(&sub);
            if (okp) return 1;
        }
        *how = NULL;
        jsonx_check_fail(c, "field \"%s.lines\" must be \"START-END\" or [START, END]; better give start_line and end_line",
                         c->prefix);
        return 0;
    }
    int ga = jsonx_int(c, e, "start_line", 1, 10000000, 1, a);
    int gz = jsonx_int(c, e, "end_line", 1, 10000000, 1, z);
    return ga == 1 && gz == 1;
}

int llm_check_filter(const cJSON *obj, const struct evidence *raw, const struct evidence *shown,
                     struct evidence *out, int *dropped, struct policy_usage *notes, char *err, size_t errlen)
{
    struct jsonx_check c;
    jsonx_check_init(&c);
    *dropped = 0;
    const cJSON *spans = cJSON_GetObjectItemCaseSensitive(obj, "spans");
    cJSON *split = NULL;
    if (cJSON_IsString(spans)) {
        split = jsonx_split_list(spans->valuestring);
        policy_usage_note(notes, "read \"spans\" given as a string as a list");
        spans = split;
    } else {
        spans = jsonx_array(&c, obj, "spans", 1);
    }
    struct evidence kept = EVIDENCE_INIT;
    int listed = 0, as_text = 0, nhow = 0;
    const char *how_seen = NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, spans) {
        jsonx_check_prefix(&c, "spans[%d]", listed);
        listed++;
        long a = 0, z = 0;
        const char *path = NULL;
        struct evidence cite = EVIDENCE_INIT;
        if (cJSON_IsString(e) && llm_parse_citations(e->valuestring, &cite) == 1) {   /* "path:10-24" */
            path = cite.v[0].path;
            a = cite.v[0].start_line;
            z = cite.v[0].end_line;
            as_text++;
        } else if (!cJSON_IsObject(e)) {
            jsonx_check_fail(&c, "element %d of field \"spans\" must be an object {path, start_line, end_line}",
                             listed - 1);
            evidence_free(&cite);
            continue;
        } else {
            const char *how;
            path = jsonx_string(&c, e, "path", 1);
            refuse_placeholder(&c, "path", cJSON_GetObjectItemCaseSensitive(e, "path"));
            int got = span_lines_of(&c, e, &a, &z, &how);
            if (how) {
                how_seen = how;
                nhow++;
            }
            if (!path || !got || is_placeholder(path)) continue;
        }
        const struct evidence_span *sp = NULL;
        if (z < a) {
            jsonx_check_fail(&c, "end_line %ld is before start_line %ld", z, a);
        } else {
            sp = cover(raw, path, (int)a, (int)z, NULL);
            sp = cover(shown, path, (int)a, (int)z, sp);
            if (!sp) (*dropped)++;
        }
        if (sp && kept.n < MAX_FILTER_SPANS && !evidence_covers(&kept, path, (int)a, (int)z)) {
            if (sp->elided) {
                evidence_add(&kept, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, sp->score)->elided = 1;
            } else {
                char *text = evidence_span_lines(sp, (int)a, (int)z);
                char *label = evidence_label_within(sp, (int)a, (int)z);
                evidence_add(&kept, sp->path, (int)a, (int)z, text, label, sp->score);
                free(label);
                free(text);
            }
        }
        evidence_free(&cite);
    }
    jsonx_check_prefix(&c, "%s", "");
    if (as_text) policy_usage_note(notes, "read %d span%s written \"path:start-end\"", as_text, as_text == 1 ? "" : "s");
    if (nhow) policy_usage_note(notes, "read %s (%d span%s)", how_seen, nhow, nhow == 1 ? "" : "s");
    int rc = -1;
    if (c.nerr) {
        snprintf(err, errlen, "%s", jsonx_check_message(&c));
    } else if (listed > 0 && kept.n == 0) {
        struct buf ranges = BUF_INIT;
        list_ranges(&ranges, shown && shown->n ? shown : raw, 700);
        snprintf(err, errlen, "none of the %d spans lies inside the result; use only these ranges (or sub-ranges): %s",
                 listed, ranges.len ? buf_str(&ranges) : "(none)");
        buf_free(&ranges);
    } else {
        evidence_copy(out, &kept);
        rc = 0;
    }
    cJSON_Delete(split);
    evidence_free(&kept);
    jsonx_check_free(&c);
    return rc;
}

/* ---- citations and question types ---- */

/* '%' too: a percent-encoded path (%2e%2e/etc/passwd) is one citation,
 * removed whole, not a fragment of one left behind. */
static int path_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' || c == '-' || c == '%';
}

/* Calls fn for every `path:start-end` (or path:line, path:Lstart-Lend) in
 * text with the byte range of the citation. */
void scan_citations(const char *text, cite_fn fn, void *ctx)
{
    size_t n = strlen(text);
    for (size_t i = 1; i + 1 < n; i++) {
        if (text[i] != ':') continue;
        size_t d = i + 1;
        if (text[d] == 'L') d++;
        if (!isdigit((unsigned char)text[d])) continue;
        size_t j = i;
        while (j > 0 && path_char(text[j - 1])) j--;
        size_t plen = i - j;
        if (!plen || text[j] == '-') continue;
        /* paths outside the repository (/abs, ../up) are citations too, which
         * no evidence verifies; ./x is x */
        if (text[j] == '.' && (plen < 2 || (text[j + 1] != '/' && text[j + 1] != '.'))) continue;
        size_t skip = plen > 2 && text[j] == '.' && text[j + 1] == '/' ? 2 : 0;
        const char *path = text + j + skip;
        plen -= skip;
        int shaped = 0, digits_only = 1;
        for (size_t k = 0; k < plen; k++) {
            if (path[k] == '.' || path[k] == '/') shaped = 1;
            else if (!isdigit((unsigned char)path[k])) digits_only = 0;
        }
        if (!shaped || digits_only) continue;
        if (j >= 2 && text[j - 1] == '/' && text[j - 2] == '/') continue;   /* a URL */
        if (memmem(path, plen, "//", 2)) continue;
        long a = 0;
        size_t k = d;
        while (k < n && isdigit((unsigned char)text[k]) && a < 100000000) a = a * 10 + (text[k++] - '0');
        long z = a;
        size_t dash = 0;
        if (k < n && text[k] == '-') dash = 1;
        else if (k + 2 < n && (unsigned char)text[k] == 0xE2 && (unsigned char)text[k + 1] == 0x80 &&
                 ((unsigned char)text[k + 2] == 0x93 || (unsigned char)text[k + 2] == 0x94))
            dash = 3;
        if (dash) {
            size_t m = k + dash;
            if (m < n && text[m] == 'L') m++;
            if (m < n && isdigit((unsigned char)text[m])) {
                z = 0;
                while (m < n && isdigit((unsigned char)text[m]) && z < 100000000) z = z * 10 + (text[m++] - '0');
                k = m;
            }
        }
        if (a < 1 || z < a) continue;
        fn(ctx, j, k, path, plen, (int)a, (int)z);
        i = k - 1;
    }
}

static void collect_cite(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z)
{
    (void)start;
    (void)end;
    char *p = xstrndup(path, plen);
    struct evidence *out = ctx;
    if (!has_exact(out, p, a, z)) evidence_add(out, p, a, z, NULL, NULL, 0);
    free(p);
}

size_t llm_parse_citations(const char *text, struct evidence *out)
{
    size_t before = out->n;
    if (text) scan_citations(text, collect_cite, out);
    return out->n - before;
}

struct cite_strip {
    const struct evidence *seen;
    const char *text;
    struct buf out;
    size_t pos;
    int removed;
};

static void strip_cite(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z)
{
    struct cite_strip *cs = ctx;
    char *p = xstrndup(path, plen);
    int ok = evidence_covers(cs->seen, p, a, z);
    free(p);
    if (ok || start < cs->pos) return;
    if (start > 0 && cs->text[start - 1] == '`' && cs->text[end] == '`') {
        start--;
        end++;
    }
    if (start < cs->pos) return;
    buf_add(&cs->out, cs->text + cs->pos, start - cs->pos);
    cs->pos = end;
    cs->removed++;
}

static char *remove_invalid(const char *text, const struct evidence *seen, int *removed)
{
    struct cite_strip cs = {seen, text, BUF_INIT, 0, 0};
    scan_citations(text, strip_cite, &cs);
    buf_adds(&cs.out, text + cs.pos);
    *removed = cs.removed;
    return buf_take(&cs.out);
}

char *llm_strip_citations(const char *text, const struct evidence *seen, int *removed)
{
    return remove_invalid(text ? text : "", seen, removed);
}

static int contains_any(const char *lower, const char *const *cues)
{
    for (size_t i = 0; cues[i]; i++)
        if (strstr(lower, cues[i])) return 1;
    return 0;
}

int llm_answer_misses_type(const char *qtype, const char *answer, int ncites, char *why, size_t whylen)
{
    static const char *const why_cues[] = {"because", "so that", "in order", "to avoid", "to prevent", "to ensure",
                                           "to allow", "to keep", "to make", "to let", "purpose", "reason", "intend",
                                           "since", "allows", "ensures", "avoids", "prevents", "lets ", "rationale",
                                           "design", "needed", "needs to", "so the", "so it", "otherwise", "thus",
                                           "therefore", "why", NULL};
    static const char *const how_cues[] = {"by ", "call", "then", "first", "step", "->", "\xe2\x86\x92", "use",
                                           "via", "through", "when", "loop", "return", "invoke", "pass", "\n1.",
                                           "\n- ", "\n* ", "iterat", "check", "match", "creat", "build", NULL};
    static const char *const refusals[] = {"i don't know", "i do not know", "cannot answer", "can't answer",
                                           "unable to answer", "no information", NULL};
    char *lower = str_lower(answer ? answer : "");
    int words = 0, inword = 0;
    for (const char *s = lower; *s; s++) {
        int w = !isspace((unsigned char)*s);
        if (w && !inword) words++;
        inword = w;
    }
    int miss = 1;
    if (words < 4) snprintf(why, whylen, "the answer is too short to address the question");
    else if (ncites == 0 && contains_any(lower, refusals))
        snprintf(why, whylen, "the answer declines to answer although evidence was gathered; answer from it");
    else if (streq(qtype, "where") && ncites == 0)
        snprintf(why, whylen, "a where-question asks for a location: name the file and line range");
    else if (streq(qtype, "why") && !contains_any(lower, why_cues))
        snprintf(why, whylen, "a why-question asks for a reason or purpose: say why, not only what the code does");
    else if (streq(qtype, "how") && !contains_any(lower, how_cues))
        snprintf(why, whylen, "a how-question asks for the mechanism: describe the steps the code takes");
    else miss = 0;
    free(lower);
    return miss;
}
