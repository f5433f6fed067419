/*
 * policy_llm_render: the tree, the actions and the evidence as the text of the
 * role prompts, each within its cap; the reply schemas; the role templates
 * split into a static system part and a per-call request.
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

/* ---- small text helpers ---- */

/* s with newlines and tabs turned into spaces, cut to cap bytes with "...". */
char *one_line(const char *s, size_t cap)
{
    struct buf b = BUF_INIT;
    int space = 0;
    for (const char *p = s ? s : ""; *p; p++) {
        char c = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
        if (c == ' ' && (space || b.len == 0)) continue;
        space = c == ' ';
        buf_addc(&b, c);
    }
    while (b.len && b.data[b.len - 1] == ' ') b.data[--b.len] = 0;
    if (b.len > cap && cap > 3) {
        size_t k = cap - 3;
        while (k > 0 && ((unsigned char)b.data[k] & 0xC0) == 0x80) k--;
        b.len = k;
        b.data[k] = 0;
        buf_adds(&b, "...");
    }
    return buf_take(&b);
}

char *args_text(const cJSON *args, size_t cap)
{
    char *s = args ? cJSON_PrintUnformatted(args) : NULL;
    char *r = one_line(s ? s : "{}", cap);
    free(s);
    return r;
}

void add_note(struct llm_policy *p, const char *note)
{
    pthread_mutex_lock(&p->lock);
    p->notes = xreallocarray(p->notes, p->nnotes + 1, sizeof *p->notes);
    p->notes[p->nnotes++] = xstrdup(note);
    pthread_mutex_unlock(&p->lock);
    log_msg("llm policy: %s", note);
}

void forget_question(struct llm_policy *p)
{
    free(p->question);
    p->question = NULL;
    if (p->have_q) qparse_free(&p->q);
    p->have_q = 0;
    free(p->outline);
    p->outline = NULL;
    for (size_t i = 0; i < p->nnotes; i++) free(p->notes[i]);
    free(p->notes);
    p->notes = NULL;
    p->nnotes = 0;
    llm_usage_destroy(&p->usage);
    llm_usage_init(&p->usage);
    p->q_last_error[0] = 0;
    p->q_last_retry[0] = 0;
    p->q_answer_fallback = 0;
    p->q_answer_cut = 0;
}

/*
 * The byte budget of a question's repository outline. The outline sits in
 * every role's stable head, so a role's cached prefix is its tools, its
 * system prompt, the question and the outline. Where a role's model has a
 * minimum cacheable length (llm_profile.cache_min: Anthropic's 1024 to 4096
 * tokens), the outline is made long enough for that prefix to reach it, for
 * the role whose other parts are shortest, with a tenth more for the
 * tokenizer (tokens estimated as bytes / 4); elsewhere there is none: a
 * model with no minimum would only pay for more input (measured on the
 * emulator's clean profile, a 400-token outline added 39% input tokens per
 * question). Why the longer prompt pays: a cache read costs
 * a tenth of the input price, so from a role's second call on a 4,096-token
 * cached prefix costs what 410 uncached tokens do, less than the ~1,000
 * uncached tokens of the stable part without an outline, and the model gets
 * the repository's layout to plan with. The first call writes the cache at
 * 1.25 times the input price, once per role and question, so over a question
 * it pays for a role called about ten times or more (5,120 + 410 (k - 1) <
 * 1,000 k from k = 8 for a 1,000-token stable part; later with a shorter
 * one); with fewer calls the outline is bought for what it tells the model.
 */
static size_t outline_budget(const struct llm_policy *p, const char *question)
{
    long want = 0;
    size_t ceiling = LLM_POLICY_OUTLINE_MAX;
    for (int r = 0; r < LLM_ROLE_N; r++) {
        const struct llm_backend *b = backend_of(p, (enum llm_role)r);
        const struct llm_profile *pf = llm_backend_profile(b);
        /* never more than an eighth of a role's context window, which the
         * path, the observations and the reply need; none once a refusal
         * showed the window smaller than the profile says (role_call) */
        if (llm_backend_room(b)) return 0;
        if (pf && pf->context > 0 && (size_t)pf->context * 4 / 8 < ceiling) ceiling = (size_t)pf->context * 4 / 8;
        if (!pf || pf->cache_min <= 0 || !p->head_outline[r]) continue;
        size_t fixed = (p->system[r] ? strlen(p->system[r]) : 0) + strlen(question);
        if (p->schema[r] && pf->schema == LLM_SCHEMA_TOOL) {
            char *js = cJSON_PrintUnformatted(p->schema[r]);
            fixed += js ? strlen(js) : 0;
            free(js);
        }
        long need = pf->cache_min + pf->cache_min / 10 - llm_estimate_tokens(fixed);
        if (need > want) want = need;
    }
    size_t bytes = want > 0 ? (size_t)want * 4 : 0;
    return bytes > ceiling ? ceiling : bytes;
}

/* The question's analysis and outline are made once and then only read. */
void ensure_question(struct llm_policy *p, const char *question)
{
    if (!question) question = "";
    pthread_mutex_lock(&p->lock);
    if (!p->question || strcmp(p->question, question) != 0) {
        forget_question(p);
        p->question = xstrdup(question);
        char err[256];
        if (qparse_question(question, &p->q, err, sizeof err) == 0) p->have_q = 1;
        else qparse_free(&p->q);
        size_t budget = p->cfg.outline ? outline_budget(p, question) : 0;
        if (budget) p->outline = p->cfg.outline(p->cfg.outline_ctx, question, budget);
    }
    pthread_mutex_unlock(&p->lock);
}

static const char *outline_text(const struct llm_policy *p)
{
    return p->outline ? p->outline : "";   /* none: the template's blank lines only */
}

/* The outline as a render with caps c shows it: none in a request shortened
 * for a context window, where it would take room the path needs. */
const char *outline_in(const struct llm_policy *p, const struct llm_policy_caps *c)
{
    return c->no_outline ? "" : outline_text(p);
}

const char *qtype_name(const struct llm_policy *p)
{
    return p->have_q && p->q.type != QTYPE_OTHER ? qparse_type_name(p->q.type) : "other";
}

/* ---- the action schema as text ---- */

/* One line per action and per argument; an argument described for an earlier
 * action (file_pattern) is not described again, to keep every planning
 * prompt short. */
char *render_actions(int no_semantic)
{
    cJSON *schema = action_schema_json(), *a;
    struct buf b = BUF_INIT;
    const char *described[32];
    size_t ndescribed = 0;
    cJSON_ArrayForEach(a, schema) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(a, "name"));
        const char *desc = cJSON_GetStringValue(cJSON_GetObjectItem(a, "description"));
        if (!name || (no_semantic && streq(name, "SemanticSearch"))) continue;
        buf_printf(&b, "- %s: %s\n", name, desc ? desc : "");
        const cJSON *arg;
        cJSON_ArrayForEach(arg, cJSON_GetObjectItem(a, "arguments")) {
            const char *an = cJSON_GetStringValue(cJSON_GetObjectItem(arg, "name"));
            const char *at = cJSON_GetStringValue(cJSON_GetObjectItem(arg, "type"));
            const char *ad = cJSON_GetStringValue(cJSON_GetObjectItem(arg, "description"));
            int req = cJSON_IsTrue(cJSON_GetObjectItem(arg, "required"));
            int again = 0;
            for (size_t k = 0; an && k < ndescribed && !again; k++) again = streq(described[k], an);
            if (an && !again && ndescribed < ARRAY_LEN(described)) described[ndescribed++] = an;
            buf_printf(&b, "    %s%s (%s)%s%s\n", an ? an : "?", req ? "*" : "", at ? at : "?",
                       again || !ad || !*ad ? "" : ": ", again || !ad ? "" : ad);
        }
    }
    cJSON_Delete(schema);
    return buf_take(&b);
}

/* ---- rendering the tree ---- */

void chomp(struct buf *b)
{
    while (b->len && b->data[b->len - 1] == '\n') b->data[--b->len] = 0;
}

static void step_status(struct buf *b, const struct mcts_node *n)
{
    if (n->status == MCTS_ERROR) buf_printf(b, " -> failed: %s", n->error ? n->error : "error");
    else if (n->duplicate) buf_printf(b, " -> not run: repeats node %d", n->dup_of);
    else if (n->status == MCTS_PRUNED) buf_adds(b, " -> pruned by the user");
    else if (n->has_value) buf_printf(b, " -> value %.0f", n->value);
}

static void step_line(struct buf *b, const struct mcts_node *n, int k, int spans, size_t argcap)
{
    char *args = args_text(n->args, argcap);
    buf_printf(b, "[%d] %s %s", k, n->action ? n->action : "(not planned)", args);
    free(args);
    step_status(b, n);
    buf_addc(b, '\n');
    if (!spans || !n->action || streq(n->action, "Finish") || n->duplicate || n->status == MCTS_ERROR) return;
    if (n->obs.n == 0) {
        buf_adds(b, "    (nothing found)\n");
        return;
    }
    for (size_t i = 0; i < n->obs.n && i < SPANS_PER_STEP; i++) {
        const struct evidence_span *sp = &n->obs.v[i];
        char *label = one_line(sp->label, 90);
        buf_printf(b, "    %s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, *label ? "  " : "", label);
        free(label);
    }
    if (n->obs.n > SPANS_PER_STEP) buf_printf(b, "    (+%zu more spans)\n", n->obs.n - SPANS_PER_STEP);
}

/* The steps from the root to upto (inclusive; the root itself is not a
 * step), latest kept when the text passes cap. */
char *trajectory_text(const struct mcts_tree *t, int upto, int spans, size_t cap)
{
    int *ids = NULL;
    size_t n = upto >= 0 ? mcts_path(t, upto, &ids) : 0;
    struct buf b = BUF_INIT;
    for (size_t i = 1; i < n; i++) step_line(&b, mcts_node(t, ids[i]), (int)i, spans, 160);
    free(ids);
    chomp(&b);
    if (!b.len) buf_adds(&b, "(none yet: this is the first step)");
    char *r = prompt_cap(buf_str(&b), cap, 1);
    buf_free(&b);
    return r;
}

char *siblings_text(const struct mcts_tree *t, int id, size_t cap)
{
    const struct mcts_node *n = mcts_node(t, id);
    const struct mcts_node *par = n ? mcts_node(t, n->parent) : NULL;
    struct buf b = BUF_INIT;
    for (int k = 0; par && k < par->nchildren; k++) {
        const struct mcts_node *s = mcts_node(t, par->children[k]);
        if (!s || s->id == id || !s->action) continue;
        char *args = args_text(s->args, 160);
        buf_printf(&b, "- %s %s", s->action, args);
        free(args);
        step_status(&b, s);
        for (size_t i = 0; i < s->obs.n && i < 2; i++)
            buf_printf(&b, "%s%s:%d-%d", i ? ", " : "; found ", s->obs.v[i].path, s->obs.v[i].start_line,
                       s->obs.v[i].end_line);
        buf_addc(&b, '\n');
    }
    chomp(&b);
    if (!b.len) buf_adds(&b, "(none)");
    char *r = prompt_cap(buf_str(&b), cap, 0);
    buf_free(&b);
    return r;
}

static int path_listed(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0) return 1;
    return 0;
}

/* Files and symbols in the observations of the path to the parent of id and
 * of id's siblings whose file no ViewCode on them has shown. */
char *leads_text(const struct mcts_tree *t, int id, size_t cap)
{
    const struct mcts_node *n = mcts_node(t, id);
    int *ids = NULL;
    size_t np = n && n->parent >= 0 ? mcts_path(t, n->parent, &ids) : 0;
    const struct mcts_node *par = n ? mcts_node(t, n->parent) : NULL;
    const struct mcts_node **nodes = xcalloc(np + (par ? (size_t)par->nchildren : 0) + 1, sizeof *nodes);
    size_t nn = 0;
    for (size_t i = 1; i < np; i++) nodes[nn++] = mcts_node(t, ids[i]);
    for (int k = 0; par && k < par->nchildren; k++)
        if (par->children[k] != id) nodes[nn++] = mcts_node(t, par->children[k]);
    char **opened = NULL;
    size_t nopened = 0;
    for (size_t i = 0; i < nn; i++) {
        if (!streq(nodes[i]->action, "ViewCode")) continue;
        for (size_t k = 0; k < nodes[i]->obs.n; k++)
            if (!path_listed(opened, nopened, nodes[i]->obs.v[k].path)) {
                opened = xreallocarray(opened, nopened + 1, sizeof *opened);
                opened[nopened++] = nodes[i]->obs.v[k].path;
            }
    }
    struct buf b = BUF_INIT;
    int listed = 0;
    char **seen = NULL;
    size_t nseen = 0;
    for (size_t i = 0; i < nn && listed < MAX_LEADS; i++) {
        for (size_t k = 0; k < nodes[i]->obs.n && listed < MAX_LEADS; k++) {
            const struct evidence_span *sp = &nodes[i]->obs.v[k];
            if (path_listed(opened, nopened, sp->path)) continue;
            char *key = xasprintf("%s:%d", sp->path, sp->start_line);
            if (path_listed(seen, nseen, key)) {
                free(key);
                continue;
            }
            seen = xreallocarray(seen, nseen + 1, sizeof *seen);
            seen[nseen++] = key;
            char *label = one_line(sp->label, 90);
            buf_printf(&b, "- %s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, *label ? "  " : "", label);
            free(label);
            listed++;
        }
    }
    for (size_t i = 0; i < nseen; i++) free(seen[i]);
    free(seen);
    free(opened);
    free(nodes);
    free(ids);
    chomp(&b);
    if (!b.len) buf_adds(&b, "(none)");
    char *r = prompt_cap(buf_str(&b), cap, 0);
    buf_free(&b);
    return r;
}

char *identifiers_text(const struct llm_policy *p)
{
    struct buf b = BUF_INIT;
    if (p->have_q) {
        for (size_t i = 0; i < p->q.nids; i++) buf_printf(&b, "%s%s", b.len ? ", " : "", p->q.ids[i].name);
        for (size_t i = 0; i < p->q.nquotes; i++) buf_printf(&b, "%s\"%s\"", b.len ? ", " : "", p->q.quotes[i]);
        for (size_t i = 0; i < p->q.nfiles; i++) buf_printf(&b, "%s%s", b.len ? ", " : "", p->q.files[i]);
    }
    if (!b.len) buf_adds(&b, "none");
    char *r = one_line(buf_str(&b), 400);
    buf_free(&b);
    return r;
}

/* A span under its header with numbered lines (elided text as it is), the
 * text cut to cap bytes. */
void numbered_span(struct buf *b, const struct evidence_span *sp, size_t cap)
{
    char *label = one_line(sp->label, 120);
    buf_printf(b, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, *label ? "  " : "", label);
    free(label);
    struct buf body = BUF_INIT;
    if (sp->elided) {
        buf_adds(&body, sp->text ? sp->text : "");
    } else {
        const char *s = sp->text ? sp->text : "";
        int line = sp->start_line;
        while (*s) {
            const char *nl = strchr(s, '\n');
            size_t len = nl ? (size_t)(nl - s) : strlen(s);
            buf_printf(&body, "%5d  %.*s\n", line++, (int)len, s);
            s += len + (nl ? 1 : 0);
        }
    }
    char *capped = prompt_cap(buf_str(&body), cap, 0);
    buf_adds(b, capped);
    if (b->len && b->data[b->len - 1] != '\n') buf_addc(b, '\n');
    free(capped);
    buf_free(&body);
}

/* ---- reply schemas (structured output where the server has it) ---- */

static cJSON *schema_object(cJSON **props)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "object");
    *props = cJSON_AddObjectToObject(o, "properties");
    return o;
}

static void schema_prop(cJSON *props, const char *name, const char *type)
{
    cJSON_AddStringToObject(cJSON_AddObjectToObject(props, name), "type", type);
}

static void schema_strings(cJSON *props, const char *name)
{
    cJSON *a = cJSON_AddObjectToObject(props, name);
    cJSON_AddStringToObject(a, "type", "array");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(a, "items"), "type", "string");
}

static void schema_required(cJSON *o, const char *const *names)
{
    cJSON *r = cJSON_AddArrayToObject(o, "required");
    for (; *names; names++) cJSON_AddItemToArray(r, cJSON_CreateString(*names));
}

/* The schema of each JSON role's reply, its properties in the order the
 * prompt asks for them (constrained decoders follow that order, so the
 * rationale is written before the decision). The checks (llm_check_*)
 * stay the authority: a server that ignores the schema is still checked. */
void build_schemas(struct llm_policy *p)
{
    cJSON *props, *o;
    o = schema_object(&props);
    schema_prop(props, "summary", "string");
    schema_strings(props, "redundant");
    schema_strings(props, "unexplored");
    schema_strings(props, "gaps");
    schema_strings(props, "candidates");
    schema_required(o, (const char *const[]){"summary", "redundant", "unexplored", "gaps", "candidates", NULL});
    p->schema[LLM_ROLE_PERCEPTION] = o;

    o = schema_object(&props);
    schema_prop(props, "rationale", "string");
    cJSON *act = cJSON_AddObjectToObject(props, "action");
    cJSON_AddStringToObject(act, "type", "string");
    cJSON *names = cJSON_AddArrayToObject(act, "enum");
    for (const char *const *nm = action_names(); *nm; nm++)
        if (!(p->cfg.no_semantic && streq(*nm, "SemanticSearch"))) cJSON_AddItemToArray(names, cJSON_CreateString(*nm));
    schema_prop(props, "args", "object");
    schema_required(o, (const char *const[]){"rationale", "action", "args", NULL});
    p->schema[LLM_ROLE_PLANNING] = o;

    o = schema_object(&props);
    schema_prop(props, "rationale", "string");
    cJSON *spans = cJSON_AddObjectToObject(props, "spans");
    cJSON_AddStringToObject(spans, "type", "array");
    cJSON *sprops, *item = schema_object(&sprops);
    schema_prop(sprops, "path", "string");
    schema_prop(sprops, "start_line", "integer");
    schema_prop(sprops, "end_line", "integer");
    schema_required(item, (const char *const[]){"path", "start_line", "end_line", NULL});
    cJSON_AddItemToObject(spans, "items", item);
    schema_required(o, (const char *const[]){"rationale", "spans", NULL});
    p->schema[LLM_ROLE_FILTER] = o;

    o = schema_object(&props);
    schema_prop(props, "rationale", "string");
    cJSON *v = cJSON_AddObjectToObject(props, "value");
    cJSON_AddStringToObject(v, "type", "integer");
    cJSON_AddNumberToObject(v, "minimum", 0);
    cJSON_AddNumberToObject(v, "maximum", 100);
    schema_prop(props, "feedback", "string");
    schema_required(o, (const char *const[]){"rationale", "value", "feedback", NULL});
    p->schema[LLM_ROLE_EVALUATION] = o;
}

/* The per-call part of a role's prompt. */
char *render_role(struct llm_policy *p, enum llm_role role, const struct prompt_var *vars, size_t n,
                  char *err, size_t errlen)
{
    char *r = prompt_render(p->request[role], vars, n, err, errlen);
    if (r && p->system[role]) {   /* the request part starts after the static part's lines */
        size_t skip = strspn(r, "\n");
        memmove(r, r + skip, strlen(r + skip) + 1);
    }
    return r;
}

/* The head of a request template that is the same on every call for one
 * question (the lines before the first one holding a placeholder other than
 * these), so that it can go first to a prompt cache with the system prompt
 * (llm_request.cache_prefix): with the tools and the system prompt it makes
 * a prefix that can reach Anthropic's minimum cacheable length. What is kept
 * is the literal text between the head's last placeholder and its end
 * ("\n\nSituational report:\n"): its first occurrence in a rendered request
 * ends the head there or earlier (an earlier one, in the question, still
 * ends inside the stable part). NULL when the head ends in no literal. */
static char *stable_head_tail(const char *text, int *has_outline)
{
    static const char *const stable[] = {"question", "qtype", "identifiers", "type_hint", "actions", "outline"};
    *has_outline = 0;
    const char *prev_end = text + strspn(text, "\n");   /* render_role drops the leading newlines */
    for (const char *o = strstr(text, "{{"); o; o = strstr(o + 2, "{{")) {
        const char *c = strstr(o + 2, "}}");
        if (!c) break;
        int keep = 0;
        for (size_t i = 0; i < ARRAY_LEN(stable) && !keep; i++)
            keep = strlen(stable[i]) == (size_t)(c - o - 2) && !strncmp(o + 2, stable[i], (size_t)(c - o - 2));
        if (keep) {
            prev_end = c + 2;
            *has_outline |= (size_t)(c - o - 2) == 7 && !strncmp(o + 2, "outline", 7);
            continue;
        }
        const char *line = o;
        while (line > text && line[-1] != '\n') line--;
        return line > prev_end ? xstrndup(prev_end, (size_t)(line - prev_end)) : NULL;
    }
    return NULL;
}

/* The bytes of a role's rendered request that every call for the question
 * repeats (stable_head_tail), or 0. The tail is looked for after the outline
 * when the head holds it: the outline's own lines may hold the tail's text. */
size_t stable_prefix(const struct llm_policy *p, enum llm_role role, const char *prompt)
{
    const char *tail = p->stable_tail[role], *from = prompt;
    if (tail && p->head_outline[role]) {
        const char *o = strstr(prompt, outline_text(p));
        if (o) from = o + strlen(outline_text(p));
    }
    const char *at = tail ? strstr(from, tail) : NULL;
    return at ? (size_t)(at - prompt) + strlen(tail) : 0;
}

#define PROMPT_SPLIT_LINE "----- request -----"

/* Splits role r's template at its "----- request -----" line. The text before
 * it is the role's static system prompt, rendered once here with only the
 * placeholders that are the same on every call ({{actions}}), so it is
 * byte-identical across calls and a server's prefix cache (vLLM, llama.cpp,
 * OpenAI; Anthropic's cache_control) can keep it. The text after it is
 * rendered on every call; it keeps its line numbers (the lines before are
 * blanked) so errors still point into the file. A template without the line
 * (an older override) is all request and has no system prompt. */
int split_template(struct llm_policy *p, enum llm_role r, char *err, size_t errlen)
{
    const struct prompt *t = p->prompts[r];
    const char *at = NULL;
    for (const char *s2 = strstr(t->text, PROMPT_SPLIT_LINE); s2; s2 = strstr(s2 + 1, PROMPT_SPLIT_LINE))
        if ((s2 == t->text || s2[-1] == '\n') && (s2[strlen(PROMPT_SPLIT_LINE)] == '\n' || !s2[strlen(PROMPT_SPLIT_LINE)])) {
            at = s2;
            break;
        }
    p->request[r] = xcalloc(1, sizeof *p->request[r]);
    p->request[r]->name = xstrdup(t->name);
    p->request[r]->path = xstrdup(t->path);
    if (!at) {
        p->request[r]->text = xstrdup(t->text);
        return 0;
    }
    struct prompt head = {t->name, t->path, xstrndup(t->text, (size_t)(at - t->text))};
    struct prompt_var v[] = {{"actions", p->actions_text, 0}};
    p->system[r] = prompt_render(&head, v, ARRAY_LEN(v), err, errlen);
    free(head.text);
    if (!p->system[r]) return -1;
    size_t len = strlen(p->system[r]);
    while (len && p->system[r][len - 1] == '\n') p->system[r][--len] = 0;
    struct buf b = BUF_INIT;
    for (const char *c = t->text; c < at; c++)
        if (*c == '\n') buf_addc(&b, '\n');
    const char *rest = at + strlen(PROMPT_SPLIT_LINE);
    buf_adds(&b, *rest ? rest + 1 : rest);
    p->request[r]->text = buf_take(&b);
    p->stable_tail[r] = stable_head_tail(p->request[r]->text, &p->head_outline[r]);
    return 0;
}
