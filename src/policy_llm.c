/*
 * policy_llm: the four agents and the evidence filter played by a chat model
 * (see policy_llm.h for the roles, the structured-output loop, the fallback
 * and the token caps). This file renders the tree into the role prompts,
 * talks to the backend, checks every reply and turns it into the engine's
 * policy results.
 */
#include "policy_llm.h"
#include "action.h"
#include "answer_stream.h"
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

#define MAX_ARG_BYTES 2000       /* a longer string argument in a plan is refused */
#define MAX_RATIONALE 400
#define MAX_FEEDBACK 300
#define MAX_REPORT_ITEM 200
#define MAX_REPORT_ITEMS 5
#define MAX_SUMMARY 600
#define MAX_ANSWER 16000
#define MAX_FILTER_SPANS 12
#define MAX_LEADS 8
#define SPANS_PER_STEP 4
#define NOTES_PREFIX_CAP 600     /* notes and listings of a raw result kept with the curated text */

static const char *const role_names[LLM_ROLE_N] = {"perception", "planning", "filter", "evaluation", "answer"};

const char *llm_role_name(enum llm_role r)
{
    return (unsigned)r < LLM_ROLE_N ? role_names[r] : "other";
}

/* The placeholders each role's template may use. */
static const char *const vars_perception[] = {"question", "qtype", "trajectory", "recent", "siblings", "leads",
                                              "outline", NULL};
static const char *const vars_planning[] = {"question", "identifiers", "report", "trajectory", "siblings",
                                            "feedback", "actions", "qtype", "outline", NULL};
static const char *const vars_filter[] = {"question", "action", "raw", "outline", NULL};
static const char *const vars_evaluation[] = {"question", "trajectory", "action", "observation", "qtype", "outline",
                                              NULL};
static const char *const vars_answer[] = {"question", "qtype", "type_hint", "trajectory", "evidence", "evidence_note",
                                          "outline", NULL};
static const char *const *const role_vars[LLM_ROLE_N] = {vars_perception, vars_planning, vars_filter,
                                                          vars_evaluation, vars_answer};

struct llm_policy {
    struct llm_policy_config cfg;
    struct policy fallback;         /* copy; name NULL when none */
    int has_fallback;
    struct prompt *prompts[LLM_ROLE_N];
    char *system[LLM_ROLE_N];       /* each role's static text, rendered once (NULL: none) */
    struct prompt *request[LLM_ROLE_N];   /* each role's per-call template */
    char *stable_tail[LLM_ROLE_N];  /* where a request's stable head ends (stable_head_tail) */
    int head_outline[LLM_ROLE_N];   /* the outline is part of that head */
    char *actions_text;             /* the action schema as the planner sees it */
    cJSON *schema[LLM_ROLE_N];      /* each JSON role's reply schema, for structured output */

    char *question;                 /* the question the state below belongs to */
    struct qparse q;
    int have_q;
    char *outline;                  /* its repository outline (cfg.outline; NULL: none) */
    struct llm_usage usage;         /* this question */
    char **notes;
    size_t nnotes;

    long calls;                     /* all questions */
    long answered_calls;            /* calls that got a reply (all questions) */
    /* the run's failures while no call has been answered: how many in a row
     * were the same (kind and message), and the last one */
    int same_fails;
    enum llm_fail last_kind;
    char last_fail[512];
    /* this question: its last failed call's message, and whether the answer
     * was the fallback's */
    char q_last_error[512];
    int q_answer_fallback;
    long long model_ms;
    struct answer_stream stream;    /* the answer role's reader (policy.set_answer_sink) */

    /* Parallel expansion calls the roles from several threads at once (for
     * one question): lock guards the state above, fallback_lock serialises
     * the fallback policy, which need not be thread-safe. */
    pthread_mutex_t lock, fallback_lock;
};

void llm_policy_config_init(struct llm_policy_config *c)
{
    memset(c, 0, sizeof *c);
    c->explore_temperature = LLM_POLICY_EXPLORE_TEMPERATURE;
    c->answer_temperature = LLM_POLICY_ANSWER_TEMPERATURE;
    c->max_attempts = LLM_POLICY_ATTEMPTS;
}

static void caps_defaults(struct llm_policy_caps *c)
{
    if (!c->trajectory) c->trajectory = 1200;
    if (!c->steps) c->steps = 1000;
    if (!c->siblings) c->siblings = 400;
    if (!c->leads) c->leads = 400;
    if (!c->report) c->report = 700;
    if (!c->recent) c->recent = 1600;
    if (!c->observation) c->observation = 1500;
    if (!c->raw) c->raw = 3600;
    if (!c->evidence) c->evidence = 20000;
    if (!c->span) c->span = 2400;
    if (!c->reply_echo) c->reply_echo = 1200;
}

/* ---- small text helpers ---- */

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* s with newlines and tabs turned into spaces, cut to cap bytes with "...". */
static char *one_line(const char *s, size_t cap)
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

static char *args_text(const cJSON *args, size_t cap)
{
    char *s = args ? cJSON_PrintUnformatted(args) : NULL;
    char *r = one_line(s ? s : "{}", cap);
    free(s);
    return r;
}

static void add_note(struct llm_policy *p, const char *note)
{
    pthread_mutex_lock(&p->lock);
    p->notes = xreallocarray(p->notes, p->nnotes + 1, sizeof *p->notes);
    p->notes[p->nnotes++] = xstrdup(note);
    pthread_mutex_unlock(&p->lock);
    log_msg("llm policy: %s", note);
}

static void forget_question(struct llm_policy *p)
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
    p->q_answer_fallback = 0;
}

static struct llm_backend *backend_of(const struct llm_policy *p, enum llm_role role);

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
static void ensure_question(struct llm_policy *p, const char *question)
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
static const char *outline_in(const struct llm_policy *p, const struct llm_policy_caps *c)
{
    return c->no_outline ? "" : outline_text(p);
}

static const char *qtype_name(const struct llm_policy *p)
{
    return p->have_q && p->q.type != QTYPE_OTHER ? qparse_type_name(p->q.type) : "other";
}

/* ---- the action schema as text ---- */

/* One line per action and per argument; an argument described for an earlier
 * action (file_pattern) is not described again, to keep every planning
 * prompt short. */
static char *render_actions(int no_semantic)
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

static void chomp(struct buf *b)
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
static char *trajectory_text(const struct mcts_tree *t, int upto, int spans, size_t cap)
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

static char *siblings_text(const struct mcts_tree *t, int id, size_t cap)
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
static char *leads_text(const struct mcts_tree *t, int id, size_t cap)
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

static char *identifiers_text(const struct llm_policy *p)
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
static void numbered_span(struct buf *b, const struct evidence_span *sp, size_t cap)
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

/* ---- talking to the model ---- */

/* Checks one reply object: 0 to use it, or -1 with the problem in err. A
 * coercion is noted in notes (a scratch record: kept only when the object is
 * used). */
typedef int (*reply_check)(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen);

/* The objects of one reply offered to a role's check in turn (jsonx_each_object). */
struct pick {
    reply_check check;
    void *cctx;
    int refused;
    char *problem;                  /* the first refused object's problem */
    size_t problen;
    struct policy_usage notes;      /* the used object's repairs and coercions */
};

static int pick_object(void *ctx, const struct jsonx_candidate *cand)
{
    struct pick *pk = ctx;
    struct policy_usage notes;
    char why[1024] = "";
    memset(&notes, 0, sizeof notes);
    if (cand->repairs[0]) policy_usage_note(&notes, "repaired the JSON: %s", cand->repairs);
    if (pk->check(pk->cctx, cand->obj, &notes, why, sizeof why) == 0) {
        pk->notes = notes;
        return 0;
    }
    if (pk->refused++ == 0)
        snprintf(pk->problem, pk->problen, "%s", why[0] ? why : "the reply does not have the fields asked for");
    return 1;
}

/* A check of a reply that is text, not JSON (the answer role's Markdown). */
typedef int (*text_check)(void *ctx, const char *text, char *err, size_t errlen);

/* Why a model call failed, as the role decides what to do next:
 *   transient   the network or the server (timeouts, refused connections,
 *               429, 5xx, a garbled reply): the role takes the fallback
 *               policy's decision, and nothing is learnt of the evidence;
 *   context     the request is longer than the model's context window: the
 *               role shrinks it once and asks again;
 *   persistent  every later call would fail the same way (a bad key, an
 *               unknown model, a refused parameter): the search stops;
 *   cancelled   the user stopped the search. */
enum call_fail { CALL_FAIL_TRANSIENT, CALL_FAIL_CONTEXT, CALL_FAIL_PERSISTENT, CALL_FAIL_CANCELLED };

/* The role's view of the transport's failure kind (llm.h). A backend that
 * sets no kind (one filled in by other code) is classified by its return
 * code and status. */
static enum call_fail classify_call(int crc, const struct llm_reply *r)
{
    switch (r->fail) {
    case LLM_FAIL_NONE: break;
    case LLM_FAIL_CANCELLED: return CALL_FAIL_CANCELLED;
    case LLM_FAIL_CONTEXT_LENGTH: return CALL_FAIL_CONTEXT;
    case LLM_FAIL_TRANSIENT:
    case LLM_FAIL_BAD_REPLY:
    case LLM_FAIL_PROVIDER:
    case LLM_FAIL_REFUSAL: return CALL_FAIL_TRANSIENT;
    default: return llm_fail_persistent(r->fail) ? CALL_FAIL_PERSISTENT : CALL_FAIL_TRANSIENT;
    }
    switch (crc) {
    case LLM_ERR_CANCELLED: return CALL_FAIL_CANCELLED;
    case LLM_ERR_STATUS:
        return r->http_status == 408 || r->http_status == 429 || r->http_status >= 500 ? CALL_FAIL_TRANSIENT
                                                                                        : CALL_FAIL_PERSISTENT;
    case LLM_ERR_REQUEST: return CALL_FAIL_PERSISTENT;
    default: return CALL_FAIL_TRANSIENT;
    }
}

static void account(struct llm_policy *p, enum llm_role role, const struct llm_reply *r, struct policy_usage *u)
{
    llm_usage_add(&p->usage, llm_role_name(role), r);
    if (p->cfg.run_usage) llm_usage_add(p->cfg.run_usage, llm_role_name(role), r);
    if (u) {
        u->input_tokens += r->input_tokens > 0 ? r->input_tokens : 0;
        u->output_tokens += r->output_tokens > 0 ? r->output_tokens : 0;
    }
}

/* The model a role talks to: its own (model.ROLE) or the main one. */
static struct llm_backend *backend_of(const struct llm_policy *p, enum llm_role role)
{
    return p->cfg.role_backend[role] ? p->cfg.role_backend[role] : p->cfg.backend;
}

static size_t stable_prefix(const struct llm_policy *p, enum llm_role role, const char *prompt);

/*
 * One role call with structured output. The role's static text goes out as
 * the system prompt and the prompt as one user message (after
 * prior_reply/prior_feedback as an earlier exchange when given); each reply
 * is parsed (jsonx) and checked, or given whole to tcheck when the role
 * answers in text; an unusable one is sent back with the problem, up to
 * `attempts` replies. Returns 0 when a reply passed check (its text in
 * *reply_text when not NULL, caller frees), 1 when none did (the last
 * problem in problem), -1 when a call failed (err, and why in *why).
 */
static int converse(struct llm_policy *p, enum llm_role role, const char *prompt, double temperature,
                    int attempts, const char *prior_reply, const char *prior_feedback, reply_check check,
                    text_check tcheck, void *cctx, char **reply_text, struct policy_usage *u, char *problem,
                    size_t problen, char *err, size_t errlen, enum call_fail *why)
{
    *why = CALL_FAIL_TRANSIENT;
    char *echo = prior_reply ? prompt_cap(prior_reply, p->cfg.caps.reply_echo, 0) : NULL;
    char *again = prior_feedback ? xstrdup(prior_feedback) : NULL;
    int rc = 1;
    snprintf(problem, problen, "no reply");
    for (int attempt = 0; attempt < attempts; attempt++) {
        struct llm_message m[3] = {{"user", prompt}};
        size_t nm = 1;
        if (echo && again) {
            m[nm++] = (struct llm_message){"assistant", *echo ? echo : "(empty reply)"};
            m[nm++] = (struct llm_message){"user", again};
        }
        struct llm_request req;
        llm_request_init(&req);
        req.system = p->system[role];
        req.messages = m;
        req.nmessages = nm;
        req.temperature = temperature;
        req.max_tokens = p->cfg.max_tokens;
        req.json_mode = tcheck == NULL;
        if (!tcheck && p->schema[role]) {
            req.schema_name = llm_role_name(role);
            req.schema = p->schema[role];
        }
        req.tag = llm_role_name(role);
        req.cancel = p->cfg.cancel;
        req.cache_prefix = stable_prefix(p, role, prompt);
        if (role == LLM_ROLE_ANSWER) answer_stream_attach(&p->stream, &req);
        struct llm_reply rep;
        memset(&rep, 0, sizeof rep);
        int64_t t0 = now_ms();
        int crc = llm_chat(backend_of(p, role), &req, &rep, NULL);
        pthread_mutex_lock(&p->lock);
        p->model_ms += now_ms() - t0;
        p->calls++;
        pthread_mutex_unlock(&p->lock);
        account(p, role, &rep, u);
        if (crc == LLM_OK && rep.text) {
            pthread_mutex_lock(&p->lock);
            p->answered_calls++;
            p->same_fails = 0;
            pthread_mutex_unlock(&p->lock);
        }
        if (crc != LLM_OK || !rep.text) {
            snprintf(err, errlen, "the model call failed: %s", rep.error[0] ? rep.error : "no reply text");
            *why = classify_call(crc, &rep);
            /* A connection failing before any call of this run succeeded
             * (refused, reset, a reply cut short: LLM_ERR_CONNECT) is not a
             * hiccup: a wrong address, a server that is not running, or a
             * proxy that drops its replies. */
            pthread_mutex_lock(&p->lock);
            if (crc == LLM_ERR_CONNECT && p->answered_calls == 0) *why = CALL_FAIL_PERSISTENT;
            snprintf(p->q_last_error, sizeof p->q_last_error, "%s", rep.error[0] ? rep.error : "no reply text");
            /* The same failure on every call of the run, none answered (a
             * server that always refuses, always errs, always streams) will
             * not pass by asking again: after LLM_POLICY_SAME_FAILURES of
             * them it is persistent, and the search stops. */
            if (p->answered_calls == 0 && *why == CALL_FAIL_TRANSIENT) {
                if (p->same_fails && rep.fail == p->last_kind && !strcmp(p->last_fail, p->q_last_error))
                    p->same_fails++;
                else
                    p->same_fails = 1;
                p->last_kind = rep.fail;
                snprintf(p->last_fail, sizeof p->last_fail, "%s", p->q_last_error);
                if (p->same_fails >= LLM_POLICY_SAME_FAILURES) {
                    *why = CALL_FAIL_PERSISTENT;
                    size_t n = strlen(err);
                    snprintf(err + n, errlen > n ? errlen - n : 0,
                             " (the same failure on all %d calls of this run so far, none answered: taken as "
                             "persistent)", p->same_fails);
                }
            }
            pthread_mutex_unlock(&p->lock);
            llm_reply_free(&rep);
            rc = -1;
            break;
        }
        if (tcheck) {
            problem[0] = 0;
            if (tcheck(cctx, rep.text, problem, problen) == 0) {
                if (reply_text) *reply_text = rep.text;
                else free(rep.text);
                rep.text = NULL;
                llm_reply_free(&rep);   /* the reasoning, if any */
                rc = 0;
                break;
            }
            if (!problem[0]) snprintf(problem, problen, "the reply is not an answer");
            free(echo);
            echo = prompt_cap(rep.text, p->cfg.caps.reply_echo, 0);
            free(again);
            again = xasprintf("Your reply could not be used: %s\nReply again with the Markdown answer only.", problem);
            llm_reply_free(&rep);
            continue;
        }
        /* The first object of the reply that passes the role's check is the
         * reply; the re-ask names the first one's problem. */
        char perr[512];
        struct pick pk = {check, cctx, 0, problem, problen, {0}};
        int prc = jsonx_each_object(rep.text, strlen(rep.text), pick_object, &pk, perr, sizeof perr);
        if (prc == 0) {
            if (pk.notes.notes[0]) {
                policy_usage_note(u, "%s: %s", llm_role_name(role), pk.notes.notes);
                log_msg("llm policy: %s: %s", llm_role_name(role), pk.notes.notes);
            }
            if (reply_text) *reply_text = rep.text;
            else free(rep.text);
            rep.text = NULL;
            llm_reply_free(&rep);   /* the reasoning, if any */
            rc = 0;
            break;
        }
        if (prc < 0)
            snprintf(problem, problen, "no usable JSON object in the reply: %s%s", perr,
                     rep.truncated ? " (the reply was cut at the token limit; answer more briefly)" : "");
        else if (pk.refused > 1 && strlen(problem) + 80 < problen)
            snprintf(problem + strlen(problem), problen - strlen(problem),
                     " (and none of the %d other JSON objects in the reply was usable)", pk.refused - 1);
        free(echo);
        echo = prompt_cap(rep.text, p->cfg.caps.reply_echo, 0);
        free(again);
        again = xasprintf("Your reply could not be used: %s\nReply again with only the JSON object asked for "
                          "above, with every field of the right type.",
                          problem);
        llm_reply_free(&rep);
    }
    free(echo);
    free(again);
    return rc;
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
static void build_schemas(struct llm_policy *p)
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
static char *render_role(struct llm_policy *p, enum llm_role role, const struct prompt_var *vars, size_t n,
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
static size_t stable_prefix(const struct llm_policy *p, enum llm_role role, const char *prompt)
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
static int split_template(struct llm_policy *p, enum llm_role r, char *err, size_t errlen)
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
static void list_ranges(struct buf *b, const struct evidence *ev, size_t cap)
{
    size_t start = b->len;
    for (size_t i = 0; ev && i < ev->n && b->len - start < cap; i++)
        buf_printf(b, "%s%s:%d-%d", i ? ", " : "", ev->v[i].path, ev->v[i].start_line, ev->v[i].end_line);
}

static int has_exact(const struct evidence *ev, const char *path, int a, int z)
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
                evidence_add(&kept, sp->path, (int)a, (int)z, text, sp->label, sp->score);
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

typedef void (*cite_fn)(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z);

/* Calls fn for every `path:start-end` (or path:line, path:Lstart-Lend) in
 * text with the byte range of the citation. */
static void scan_citations(const char *text, cite_fn fn, void *ctx)
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

/* ---- the roles ---- */

/* The caps of a render once the model said the request is over its context
 * window: a quarter of each (an eighth of the trajectory, whose oldest steps
 * go first), so one shorter request has a real chance to fit. */
static struct llm_policy_caps caps_for(const struct llm_policy *p, int shrink)
{
    struct llm_policy_caps c = p->cfg.caps;
    if (shrink) {
        c.trajectory /= 8;
        c.steps /= 8;
        c.siblings /= 4;
        c.leads /= 4;
        c.report /= 4;
        c.recent /= 4;
        c.observation /= 4;
        c.raw /= 4;
        c.evidence /= 4;
        c.span /= 4;
        c.no_outline = 1;
    }
    return c;
}

/* The note of a step the fallback decided, in the node's notes and the
 * question's notes: "planning: the model call failed (...); used the offline
 * plan" or "planning reply unusable after 3 attempts: ...". */
static void fallback_used(struct llm_policy *p, enum llm_role role, int call_failed, const char *problem,
                          const char *source, const char *what, struct policy_usage *u, char *note, size_t notelen)
{
    if (!source) source = p->has_fallback ? p->fallback.name : "fallback";
    if (call_failed)
        snprintf(note, notelen, "%s: the model call failed (%s); used the %s %s", llm_role_name(role), problem, source,
                 what);
    else
        snprintf(note, notelen, "%s reply unusable after %d attempts: %s; used the %s %s", llm_role_name(role),
                 p->cfg.max_attempts, problem, source, what);
    add_note(p, note);
    if (u) {
        u->fallback = 1;
        policy_usage_note(u, "%s", note);
    }
}

/* After converse returned -1 for a role: 1 when the role should take its
 * fallback decision (a transient failure, or a request still over the
 * context window after shrinking), with the reason in problem; 0 when the
 * role fails, with err and u->fail_kind set for the engine (persistent:
 * the search stops; transient without a fallback: not backed up). */
static int failed_call(struct llm_policy *p, enum llm_role role, enum call_fail why, const char *cerr,
                       int can_fall_back, struct policy_usage *u, char *problem, size_t problen, char *err,
                       size_t errlen)
{
    snprintf(err, errlen, "%s: %s", llm_role_name(role), cerr);
    if (why == CALL_FAIL_CANCELLED) return 0;
    if (why == CALL_FAIL_PERSISTENT) {
        u->fail_kind = POLICY_FAIL_PERSISTENT;
        return 0;
    }
    if (!can_fall_back || !p->has_fallback) {
        u->fail_kind = why == CALL_FAIL_TRANSIENT ? POLICY_FAIL_TRANSIENT : POLICY_FAIL_NONE;
        return 0;
    }
    snprintf(problem, problen, "%s", cerr);
    return 1;
}

/* One role's request rendered with the given caps (caller frees), or NULL
 * with err. ctx is the role's own state. */
typedef char *(*role_render)(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                             size_t errlen);

/* A role call: what converse needs, and what it says back. */
struct role_call {
    enum llm_role role;
    double temperature;
    reply_check check;        /* JSON roles */
    text_check tcheck;        /* the answer */
    void *cctx;
    char **reply_text;        /* optional: the reply that passed */
    char *prompt;             /* the last request sent (owned; role_call_done frees it) */
    char problem[1024], cerr[768];
    enum call_fail why;
};

/* Renders and sends a role's request (converse). When the model says the
 * request is over its context window, it is rendered once more with the caps
 * cut (caps_for) and sent again, noted on the node. A request over a window
 * the backend knows already (llm_backend_room) is rendered short at once,
 * and one surely over it even so is not sent (it would be refused, or cut
 * by the server and answered from its tail): the call fails as over the
 * window and the role's fallback decides. Returns converse's code, or -2
 * when rendering failed (err). */
static int ask_role(struct llm_policy *p, struct role_call *rc, role_render render, const void *rctx,
                    struct policy_usage *u, char *err, size_t errlen)
{
    int r = -1;
    rc->why = CALL_FAIL_TRANSIENT;
    const struct llm_backend *b = backend_of(p, rc->role);
    for (int shrink = 0; shrink < 2; shrink++) {
        struct llm_policy_caps c = caps_for(p, shrink);
        size_t room = llm_backend_room(b);
        /* a window learnt from a refusal is smaller than the profile said:
         * the path needs the room, so the outline is left out */
        if (room) c.no_outline = 1;
        free(rc->prompt);
        rc->prompt = render(p, rctx, &c, err, errlen);
        if (!rc->prompt) return -2;
        /* over a window learnt already: the shorter request at once, and
         * none when even that is over it */
        size_t len = strlen(rc->prompt) + (p->system[rc->role] ? strlen(p->system[rc->role]) : 0);
        if (room && len > room && !shrink) {
            policy_usage_note(u, "%s: the request was over the model's context window; sent a shorter one",
                              llm_role_name(rc->role));
            continue;
        }
        /* room counts 4 bytes a token, which English prose can pass: only a
         * request an eighth over it (4.5 bytes a token) is surely over */
        if (room && len > room + room / 8) {
            snprintf(rc->cerr, sizeof rc->cerr, "even shortened, the request (%zu bytes) is over the model's "
                     "context window (about %zu bytes); not sent", len, room);
            rc->why = CALL_FAIL_CONTEXT;
            r = -1;
            break;
        }
        r = converse(p, rc->role, rc->prompt, rc->temperature, p->cfg.max_attempts, NULL, NULL, rc->check, rc->tcheck,
                     rc->cctx, rc->reply_text, u, rc->problem, sizeof rc->problem, rc->cerr, sizeof rc->cerr, &rc->why);
        if (r >= 0 || rc->why != CALL_FAIL_CONTEXT || shrink) break;
        policy_usage_note(u, "%s: the request was over the model's context window; sent a shorter one",
                          llm_role_name(rc->role));
    }
    return r;
}

static void role_call_done(struct role_call *rc)
{
    free(rc->prompt);
    rc->prompt = NULL;
}

/* The curated text of the last one or two steps on the path to id that
 * read something, newest first, each within half of cap: what perception
 * reports on. */
static char *recent_text(const struct mcts_tree *t, int id, size_t cap)
{
    struct buf b = BUF_INIT;
    int shown = 0;
    for (int k = id; k > 0 && shown < 2; k = t->nodes[k].parent) {
        const struct mcts_node *n = &t->nodes[k];
        if (n->status != MCTS_DONE || n->duplicate || !n->obs_text || !*n->obs_text) continue;
        char *args = args_text(n->args, 160);
        char *body = prompt_cap(n->obs_text, cap / 2, 0);
        buf_printf(&b, "%s%s %s:\n%s", b.len ? "\n" : "", n->action ? n->action : "?", args, body);
        chomp(&b);
        buf_addc(&b, '\n');
        free(args);
        free(body);
        shown++;
    }
    chomp(&b);
    if (!b.len) buf_adds(&b, "(no code read yet)");
    return buf_take(&b);
}

struct perceive_ctx { char *report; };

static int check_perception_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct perceive_ctx *pc = ctx;
    free(pc->report);
    pc->report = NULL;
    return llm_check_perception(obj, &pc->report, notes, err, errlen);
}

/* A node of a tree, for the renders of the roles that look at one. */
struct node_at {
    const struct mcts_tree *t;
    int id;
};

static char *render_perception(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                               size_t errlen)
{
    const struct node_at *at = ctx;
    const struct mcts_tree *t = at->t;
    const struct mcts_node *n = mcts_node(t, at->id);
    char *traj = trajectory_text(t, n->parent, 1, c->trajectory);
    char *recent = recent_text(t, n->parent, c->recent);
    char *sib = siblings_text(t, at->id, c->siblings);
    char *leads = leads_text(t, at->id, c->leads);
    struct prompt_var v[] = {{"question", t->question, 2000}, {"qtype", qtype_name(p), 0}, {"trajectory", traj, 0},
                             {"recent", recent, 0},           {"siblings", sib, 0},         {"leads", leads, 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_PERCEPTION, v, ARRAY_LEN(v), err, errlen);
    free(traj);
    free(recent);
    free(sib);
    free(leads);
    return prompt;
}

static int lp_perceive(void *ctx, const struct mcts_tree *t, int id, char **report, struct policy_usage *u,
                       char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    const struct mcts_node *n = mcts_node(t, id);
    if (!n) {
        snprintf(err, errlen, "perception: no node %d", id);
        return -1;
    }
    struct perceive_ctx pc = {NULL};
    struct node_at at = {t, id};
    struct role_call call = {.role = LLM_ROLE_PERCEPTION, .temperature = p->cfg.explore_temperature,
                             .check = check_perception_cb, .cctx = &pc};
    int rc = ask_role(p, &call, render_perception, &at, u, err, errlen);
    role_call_done(&call);
    if (rc == -2) return -1;
    char *problem = call.problem;
    const size_t problem_size = sizeof call.problem;
    if (rc == 0) {
        *report = pc.report;
        return 0;
    }
    free(pc.report);
    if (rc < 0 && !failed_call(p, LLM_ROLE_PERCEPTION, call.why, call.cerr, 1, u, problem, problem_size, err, errlen))
        return -1;
    char note[1400];
    fallback_used(p, LLM_ROLE_PERCEPTION, rc < 0, problem, NULL, "report", u, note, sizeof note);
    char *fb = NULL;
    if (!p->has_fallback || !p->fallback.perceive) {
        *report = xasprintf("[%s]", note);
        return 0;
    }
    char ferr[512] = "";
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.perceive(p->fallback.ctx, t, id, &fb, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        free(fb);
        snprintf(err, errlen, "perception: %s; the %s report failed too: %s", problem, p->fallback.name, ferr);
        return -1;
    }
    *report = xasprintf("[%s]\n%s", note, fb ? fb : "");
    free(fb);
    return 0;
}

struct plan_ctx {
    int no_semantic;
    struct policy_action a;
};

static int check_plan_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct plan_ctx *pc = ctx;
    policy_action_clear(&pc->a);
    return llm_check_plan(obj, pc->no_semantic, &pc->a, notes, err, errlen);
}

struct plan_at {
    const struct mcts_tree *t;
    int id;
    const char *report;
};

static char *render_planning(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                             size_t errlen)
{
    const struct plan_at *at = ctx;
    const struct mcts_tree *t = at->t;
    const struct mcts_node *n = mcts_node(t, at->id);
    const struct mcts_node *par = mcts_node(t, n->parent);
    char *steps = trajectory_text(t, n->parent, 1, c->trajectory);
    char *sib = siblings_text(t, at->id, c->siblings);
    char *ids = identifiers_text(p);
    char *feedback = one_line(par && par->feedback ? par->feedback : "(none)", MAX_FEEDBACK);
    /* The engine's refusal of a repeated action ends the report: keep the end. */
    char *rep = prompt_cap(at->report && *at->report ? at->report : "(no report)", c->report, 1);
    struct prompt_var v[] = {{"question", t->question, 2000}, {"identifiers", ids, 0}, {"report", rep, 0},
                             {"trajectory", steps, 0},        {"siblings", sib, 0},    {"feedback", feedback, 0},
                             {"actions", p->actions_text, 0}, {"qtype", qtype_name(p), 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_PLANNING, v, ARRAY_LEN(v), err, errlen);
    free(steps);
    free(sib);
    free(ids);
    free(feedback);
    free(rep);
    return prompt;
}

static int lp_plan(void *ctx, const struct mcts_tree *t, int id, const char *report, struct policy_action *out,
                   struct policy_usage *u, char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    const struct mcts_node *n = mcts_node(t, id);
    if (!n) {
        snprintf(err, errlen, "planning: no node %d", id);
        return -1;
    }
    struct plan_ctx pc = {p->cfg.no_semantic, {0}};
    struct plan_at at = {t, id, report};
    struct role_call call = {.role = LLM_ROLE_PLANNING, .temperature = p->cfg.explore_temperature,
                             .check = check_plan_cb, .cctx = &pc};
    int rc = ask_role(p, &call, render_planning, &at, u, err, errlen);
    role_call_done(&call);
    if (rc == -2) return -1;
    char *problem = call.problem;
    const size_t problem_size = sizeof call.problem;
    if (rc == 0) {
        *out = pc.a;
        return 0;
    }
    policy_action_clear(&pc.a);
    if (rc < 0 && !failed_call(p, LLM_ROLE_PLANNING, call.why, call.cerr, 1, u, problem, problem_size, err, errlen))
        return -1;
    char note[1400];
    fallback_used(p, LLM_ROLE_PLANNING, rc < 0, problem, NULL, "plan", u, note, sizeof note);
    if (!p->has_fallback || !p->fallback.plan) {
        snprintf(err, errlen, "%s", note);
        return -1;
    }
    char ferr[512] = "";
    struct policy_action fa = {0};
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.plan(p->fallback.ctx, t, id, report ? report : "", &fa, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        policy_action_clear(&fa);
        snprintf(err, errlen, "planning: %s; the %s plan failed too: %s", problem, p->fallback.name, ferr);
        return -1;
    }
    char *r = xasprintf("[%s]%s%s", note, fa.rationale ? " " : "", fa.rationale ? fa.rationale : "");
    free(fa.rationale);
    fa.rationale = r;
    *out = fa;
    return 0;
}

/* The engine refused the model's Finish on this node as often as it asks
 * again (nothing read on its path): the fallback plans the node, noted. */
static int lp_plan_fallback(void *ctx, const struct mcts_tree *t, int id, const char *report,
                            struct policy_action *out, struct policy_usage *u, char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    struct policy_action fa = {0};
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.plan(p->fallback.ctx, t, id, report ? report : "", &fa, u, err, errlen);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        policy_action_clear(&fa);
        return -1;
    }
    char note[300];
    snprintf(note, sizeof note, "planning: the model planned Finish with no code read on its path, refused; used "
             "the %s plan", p->fallback.name);
    add_note(p, note);
    u->fallback = 1;
    policy_usage_note(u, "%s", note);
    char *r = xasprintf("[%s]%s%s", note, fa.rationale ? " " : "", fa.rationale ? fa.rationale : "");
    free(fa.rationale);
    fa.rationale = r;
    *out = fa;
    return 0;
}

struct eval_ctx {
    double value;
    char *feedback;
};

static int check_eval_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct eval_ctx *ec = ctx;
    free(ec->feedback);
    ec->feedback = NULL;
    return llm_check_eval(obj, &ec->value, &ec->feedback, notes, err, errlen);
}

static void trajectory_spans(const struct mcts_tree *t, const int *ids, size_t nids, struct evidence *out);

/* What the evaluator sees of a step: its curated observation, or for a
 * Finish the code read on its path (the spans, numbered, within cap). */
static char *observation_text(const struct llm_policy *p, const struct mcts_tree *t, const struct mcts_node *n,
                              size_t cap)
{
    if (streq(n->action, "Finish")) {
        int *ids = NULL;
        size_t nids = mcts_path(t, n->parent, &ids);
        struct evidence seen = EVIDENCE_INIT;
        trajectory_spans(t, ids, nids, &seen);
        free(ids);
        struct buf b = BUF_INIT;
        buf_adds(&b, "(Finish is not run against the repository. The code read on its path:)\n");
        for (size_t i = 0; i < seen.n && b.len < cap; i++) numbered_span(&b, &seen.v[i], p->cfg.caps.span);
        if (!seen.n) buf_adds(&b, "(none)\n");
        evidence_free(&seen);
        char *r = prompt_cap(buf_str(&b), cap, 0);
        buf_free(&b);
        return r;
    }
    if (n->obs.n == 0 && (!n->obs_text || !*n->obs_text)) return xstrdup("(nothing found)");
    return prompt_cap(n->obs_text && *n->obs_text ? n->obs_text : "(spans without text)", cap, 0);
}

static char *render_evaluation(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                               size_t errlen)
{
    const struct node_at *at = ctx;
    const struct mcts_tree *t = at->t;
    const struct mcts_node *n = mcts_node(t, at->id);
    char *traj = trajectory_text(t, n->parent, 1, c->steps);
    char *args = args_text(n->args, 600);
    char *action = xasprintf("%s %s", n->action, args);
    free(args);
    char *obs = observation_text(p, t, n, streq(n->action, "Finish") ? c->evidence / 2 : c->observation);
    struct prompt_var v[] = {{"question", t->question, 2000}, {"trajectory", traj, 0}, {"action", action, 0},
                             {"observation", obs, 0},         {"qtype", qtype_name(p), 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_EVALUATION, v, ARRAY_LEN(v), err, errlen);
    free(traj);
    free(action);
    free(obs);
    return prompt;
}

static int lp_evaluate(void *ctx, const struct mcts_tree *t, int id, struct policy_eval *out, struct policy_usage *u,
                       char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    const struct mcts_node *n = mcts_node(t, id);
    if (!n || !n->action) {
        snprintf(err, errlen, "evaluation: node %d has no action", id);
        return -1;
    }
    struct eval_ctx ec = {0, NULL};
    struct node_at at = {t, id};
    struct role_call call = {.role = LLM_ROLE_EVALUATION, .temperature = p->cfg.explore_temperature,
                             .check = check_eval_cb, .cctx = &ec};
    int rc = ask_role(p, &call, render_evaluation, &at, u, err, errlen);
    role_call_done(&call);
    if (rc == -2) return -1;
    char *problem = call.problem;
    const size_t problem_size = sizeof call.problem;
    if (rc == 0) {
        out->value = ec.value;
        out->feedback = ec.feedback;
        return 0;
    }
    free(ec.feedback);
    if (rc < 0 && !failed_call(p, LLM_ROLE_EVALUATION, call.why, call.cerr, 1, u, problem, problem_size, err, errlen))
        return -1;
    char note[1400];
    fallback_used(p, LLM_ROLE_EVALUATION, rc < 0, problem, NULL, "evaluation", u, note, sizeof note);
    if (!p->has_fallback || !p->fallback.evaluate) {
        snprintf(err, errlen, "%s", note);
        return -1;
    }
    char ferr[512] = "";
    struct policy_eval fe = {0, NULL};
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.evaluate(p->fallback.ctx, t, id, &fe, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        policy_eval_clear(&fe);
        snprintf(err, errlen, "evaluation: %s; the %s evaluation failed too: %s", problem, p->fallback.name, ferr);
        return -1;
    }
    char *fb = xasprintf("[%s]%s%s", note, fe.feedback ? " " : "", fe.feedback ? fe.feedback : "");
    free(fe.feedback);
    out->value = fe.value;
    out->feedback = fb;
    return 0;
}

static int lp_rollout(void *ctx, const struct mcts_tree *t, int id, double *value, struct policy_usage *u, char *err,
                      size_t errlen)
{
    struct llm_policy *p = ctx;
    pthread_mutex_lock(&p->fallback_lock);
    int rc = p->fallback.rollout(p->fallback.ctx, t, id, value, u, err, errlen);
    pthread_mutex_unlock(&p->fallback_lock);
    return rc;
}

/* ---- answer synthesis ---- */

struct answer_ctx {
    char *answer;
};

/* The answer role replies in Markdown (its thinking, if any, was taken out
 * by the transport, llm.h). A reply that is one JSON object with an
 * "answer" string (what models trained on JSON tasks sometimes send anyway)
 * gives that string; a fence around the whole reply is taken off. */
static int check_answer_text(void *ctx, const char *text, char *err, size_t errlen)
{
    struct answer_ctx *ac = ctx;
    const char *t = text + strspn(text, " \t\r\n");
    char *md = NULL;
    if (*t == '{') {
        cJSON *o = cJSON_Parse(t);
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "answer");
        if (cJSON_IsString(a)) md = xstrdup(a->valuestring);
        cJSON_Delete(o);
    }
    if (!md && (str_starts(t, "```markdown\n") || str_starts(t, "```md\n") || str_starts(t, "```\n"))) {
        const char *body = strchr(t, '\n') + 1;
        const char *end = body + strlen(body);
        while (end > body && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r')) end--;
        if (end - body >= 3 && strncmp(end - 3, "```", 3) == 0) md = xstrndup(body, (size_t)(end - 3 - body));
    }
    if (!md) md = xstrdup(t);
    size_t len = strlen(md);
    while (len && (md[len - 1] == '\n' || md[len - 1] == ' ' || md[len - 1] == '\r')) md[--len] = 0;
    if (!len) {
        free(md);
        snprintf(err, errlen, "the reply is empty");
        return -1;
    }
    free(ac->answer);
    ac->answer = prompt_cap(md, MAX_ANSWER, 0);
    free(md);
    return 0;
}

/* Every distinct span on the trajectory, root first. */
static void trajectory_spans(const struct mcts_tree *t, const int *ids, size_t nids, struct evidence *out)
{
    for (size_t i = 0; i < nids; i++) {
        const struct mcts_node *n = mcts_node(t, ids[i]);
        for (size_t k = 0; n && k < n->obs.n; k++) {
            const struct evidence_span *sp = &n->obs.v[k];
            if (evidence_covers(out, sp->path, sp->start_line, sp->end_line)) continue;
            evidence_add(out, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, sp->score)->elided =
                sp->elided;
        }
    }
}

struct cite_check {
    const struct evidence *seen;
    struct evidence valid, invalid;
};

static void classify_cite(void *ctx, size_t start, size_t end, const char *path, size_t plen, int a, int z)
{
    (void)start;
    (void)end;
    struct cite_check *cc = ctx;
    char *p = xstrndup(path, plen);
    struct evidence *to = evidence_covers(cc->seen, p, a, z) ? &cc->valid : &cc->invalid;
    if (!has_exact(to, p, a, z)) evidence_add(to, p, a, z, NULL, NULL, 0);
    free(p);
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

static const char *type_hint(const char *qtype)
{
    if (streq(qtype, "where")) return "A where-question: give the location first (file and lines), then what is there.";
    if (streq(qtype, "why")) return "A why-question: state the reason or purpose, backed by the code and its comments.";
    if (streq(qtype, "how")) return "A how-question: describe the mechanism step by step, following the calls.";
    if (streq(qtype, "what")) return "A what-question: say what it is or does, from its definition and documentation.";
    return "";
}

/* The problems of an answer for a re-ask ("" when none). */
static void answer_problems(struct llm_policy *p, const char *answer, const struct evidence *seen, struct buf *msg,
                            int *ninvalid, int *nvalid)
{
    struct cite_check cc = {seen, EVIDENCE_INIT, EVIDENCE_INIT};
    scan_citations(answer, classify_cite, &cc);
    *ninvalid = (int)cc.invalid.n;
    *nvalid = (int)cc.valid.n;
    if (cc.invalid.n) {
        buf_adds(msg, "These citations match no evidence you were shown: ");
        list_ranges(msg, &cc.invalid, 400);
        buf_adds(msg, ". ");
    }
    if (seen->n && cc.valid.n == 0) buf_adds(msg, "The answer must cite at least one span of the evidence. ");
    char why[256];
    if (llm_answer_misses_type(qtype_name(p), answer, (int)cc.valid.n, why, sizeof why))
        buf_printf(msg, "It does not address the question: %s. ", why);
    if (msg->len && seen->n) {
        struct buf ranges = BUF_INIT;
        list_ranges(&ranges, seen, 1200);
        buf_printf(msg, "The spans you may cite (or sub-ranges of them): %s.", buf_str(&ranges));
        buf_free(&ranges);
    }
    evidence_free(&cc.valid);
    evidence_free(&cc.invalid);
}

/* Every distinct span of the trajectory with a rank: its relevance to the
 * question (curate.h) plus the value the evaluator gave the step that found
 * it, so decisive evidence found late is not lost behind early noise. */
struct ranked_span {
    const struct evidence_span *sp;
    double rank;
    size_t order;
};

static int by_rank(const void *a, const void *b)
{
    const struct ranked_span *x = a, *y = b;
    if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The evidence text for the answer: whole spans, best ranked first, until
 * cap; the spans left out are listed by header, so the model knows they
 * exist, and *left says how many. */
static char *ranked_evidence(const struct llm_policy *p, const struct mcts_tree *t, const int *ids, size_t nids,
                             const struct evidence *seen, size_t cap, size_t span_cap, size_t *left)
{
    struct ranked_span *r = xcalloc(seen->n + 1, sizeof *r);
    for (size_t i = 0; i < seen->n; i++) {
        const struct evidence_span *sp = &seen->v[i];
        double value = 0;
        for (size_t k = 0; k < nids; k++) {
            const struct mcts_node *n = mcts_node(t, ids[k]);
            if (n && n->has_value && evidence_covers(&n->obs, sp->path, sp->start_line, sp->end_line) &&
                n->value > value)
                value = n->value;
        }
        r[i] = (struct ranked_span){sp, curate_relevance(p->question ? p->question : "", sp) + value / 25.0, i};
    }
    qsort(r, seen->n, sizeof *r, by_rank);
    struct buf b = BUF_INIT, rest = BUF_INIT;
    *left = 0;
    for (size_t i = 0; i < seen->n; i++) {
        struct buf one = BUF_INIT;
        numbered_span(&one, r[i].sp, span_cap);
        if (b.len + one.len <= cap || b.len == 0) {
            buf_add(&b, one.data ? one.data : "", one.len);
        } else {
            buf_printf(&rest, "- %s:%d-%d\n", r[i].sp->path, r[i].sp->start_line, r[i].sp->end_line);
            (*left)++;
        }
        buf_free(&one);
    }
    if (!b.len) buf_adds(&b, "(no evidence was gathered)");
    if (rest.len) {
        buf_printf(&b, "\nAlso read, not shown for lack of room (cite them only by what the steps say):\n%s",
                   buf_str(&rest));
    }
    buf_free(&rest);
    free(r);
    return buf_take(&b);
}

struct answer_at {
    const struct mcts_tree *t;
    const int *ids;
    size_t nids;
    const struct evidence *seen;
};

static char *render_answer(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                           size_t errlen)
{
    const struct answer_at *at = ctx;
    size_t left = 0;
    char *evtext = ranked_evidence(p, at->t, at->ids, at->nids, at->seen, c->evidence, c->span, &left);
    char *traj = trajectory_text(at->t, at->nids ? at->ids[at->nids - 1] : 0, 1, c->steps);
    char note[96] = " (best ranked first)";
    if (left) snprintf(note, sizeof note, " (best ranked first; %zu more listed by header at the end)", left);
    const char *qt = qtype_name(p);
    struct prompt_var v[] = {{"question", at->t->question, 2000}, {"qtype", qt, 0}, {"type_hint", type_hint(qt), 0},
                             {"trajectory", traj, 0}, {"evidence", evtext, 0}, {"evidence_note", note, 0},
                             {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_ANSWER, v, ARRAY_LEN(v), err, errlen);
    free(traj);
    free(evtext);
    return prompt;
}

static int lp_answer(void *ctx, const struct mcts_tree *t, const int *ids, size_t nids, struct policy_answer *out,
                     struct policy_usage *u, char *err, size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, t->question);
    struct evidence seen = EVIDENCE_INIT;
    trajectory_spans(t, ids, nids, &seen);
    struct answer_ctx ac = {NULL};
    char *first_reply = NULL;
    struct answer_at at = {t, ids, nids, &seen};
    struct role_call call = {.role = LLM_ROLE_ANSWER, .temperature = p->cfg.answer_temperature,
                             .tcheck = check_answer_text, .cctx = &ac, .reply_text = &first_reply};
    int rc = ask_role(p, &call, render_answer, &at, u, err, errlen);
    if (rc == -1 && call.why == CALL_FAIL_TRANSIENT) {
        /* The answer is the one call whose fallback costs the most: after the
         * client's own retries failed, it is asked once more. */
        policy_usage_note(u, "answer: the model call failed (%s); asked once more", call.cerr);
        rc = ask_role(p, &call, render_answer, &at, u, err, errlen);
    }
    if (rc == -2 || (rc == -1 && answer_stream_stopped(&p->stream))) {
        /* rendering failed, or the reader stopped the answer: what it got is kept */
        if (rc == -1) answer_stream_keep(&p->stream, &seen, out, u);
        role_call_done(&call);
        evidence_free(&seen);
        return rc == -1 ? 0 : -1;
    }
    const char *prompt = call.prompt;
    char *problem = call.problem;
    const size_t problem_size = sizeof call.problem;
    if (rc == 0) {
        struct buf msg = BUF_INIT;
        int ninvalid = 0, nvalid = 0;
        answer_problems(p, ac.answer, &seen, &msg, &ninvalid, &nvalid);
        if (msg.len) {   /* one re-ask for the content */
            struct answer_ctx ac2 = {NULL};
            char *feedback = xasprintf("%s\nReply again with the Markdown answer only.", buf_str(&msg));
            char p2[1024], e2[768];
            enum call_fail why2;
            int rc2 = converse(p, LLM_ROLE_ANSWER, prompt, p->cfg.answer_temperature, 1, first_reply, feedback, NULL,
                               check_answer_text, &ac2, NULL, u, p2, sizeof p2, e2, sizeof e2, &why2);
            free(feedback);
            if (rc2 == 0) {
                struct buf msg2 = BUF_INIT;
                int ni2 = 0, nv2 = 0;
                answer_problems(p, ac2.answer, &seen, &msg2, &ni2, &nv2);
                /* Keep the second answer unless it lost every valid citation the first had. */
                if (nv2 > 0 || nvalid == 0) {
                    free(ac.answer);
                    ac.answer = ac2.answer;
                    ac2.answer = NULL;
                }
                buf_free(&msg2);
            } else {
                char note[1200];
                snprintf(note, sizeof note, "answer re-ask %s: %s; kept the first answer",
                         rc2 < 0 ? "failed" : "unusable", rc2 < 0 ? e2 : p2);
                add_note(p, note);
            }
            free(ac2.answer);
        }
        buf_free(&msg);
        int removed = 0;
        char *md = remove_invalid(ac.answer, &seen, &removed);
        if (removed) {
            char *m2 = xasprintf("%s\n\n_%d citation%s that matched no evidence on the trajectory %s removed._\n", md,
                                 removed, removed == 1 ? "" : "s", removed == 1 ? "was" : "were");
            free(md);
            md = m2;
            char note[200];
            snprintf(note, sizeof note, "answer: removed %d citation%s outside the evidence", removed,
                     removed == 1 ? "" : "s");
            add_note(p, note);
        }
        struct cite_check cc = {&seen, EVIDENCE_INIT, EVIDENCE_INIT};
        scan_citations(md, classify_cite, &cc);
        out->markdown = md;
        evidence_copy(&out->cites, &cc.valid);
        evidence_free(&cc.valid);
        evidence_free(&cc.invalid);
    }
    free(first_reply);
    free(ac.answer);
    role_call_done(&call);
    evidence_free(&seen);
    if (rc == 0) return 0;
    /* Whatever the failure, the fallback's answer from the evidence read is
     * better than none (a persistent failure still stops the search). */
    if (rc < 0 && call.why == CALL_FAIL_PERSISTENT && p->has_fallback) call.why = CALL_FAIL_TRANSIENT;
    if (rc < 0 && !failed_call(p, LLM_ROLE_ANSWER, call.why, call.cerr, 1, u, problem, problem_size, err, errlen))
        return -1;
    char note[1400];
    fallback_used(p, LLM_ROLE_ANSWER, rc < 0, problem, NULL, "answer", u, note, sizeof note);
    pthread_mutex_lock(&p->lock);
    p->q_answer_fallback = 1;
    pthread_mutex_unlock(&p->lock);
    if (!p->has_fallback || !p->fallback.answer) {
        snprintf(err, errlen, "%s", note);
        return -1;
    }
    char ferr[512] = "";
    pthread_mutex_lock(&p->fallback_lock);
    int frc = p->fallback.answer(p->fallback.ctx, t, ids, nids, out, u, ferr, sizeof ferr);
    pthread_mutex_unlock(&p->fallback_lock);
    if (frc != 0) {
        snprintf(err, errlen, "answer: %s; the %s answer failed too: %s", problem, p->fallback.name, ferr);
        return -1;
    }
    return 0;
}

/* ---- the evidence filter (curator) ---- */

/* The part of a rendered raw result before its first span (notes, listings). */
static char *raw_preamble(const char *raw_text, const struct evidence *raw)
{
    if (!raw_text || !*raw_text) return xstrdup("");
    if (raw->n == 0) return prompt_cap(raw_text, NOTES_PREFIX_CAP * 4, 0);
    char *hdr = xasprintf("%s:%d-%d", raw->v[0].path, raw->v[0].start_line, raw->v[0].end_line);
    const char *at = NULL;
    for (const char *s = strstr(raw_text, hdr); s; s = strstr(s + 1, hdr))
        if (s == raw_text || s[-1] == '\n') {
            at = s;
            break;
        }
    free(hdr);
    /* An executor may render only notes and listings, leaving the spans to the curator. */
    size_t n = at ? (size_t)(at - raw_text) : strlen(raw_text);
    char *pre = xstrndup(raw_text, n);
    char *r = prompt_cap(pre, NOTES_PREFIX_CAP, 0);
    free(pre);
    return r;
}

static char *curated_text(const char *note, const char *preamble, const struct evidence *ev)
{
    struct buf b = BUF_INIT;
    if (note) buf_printf(&b, "[%s]\n", note);
    if (preamble && *preamble) {
        buf_adds(&b, preamble);
        if (b.data[b.len - 1] != '\n') buf_addc(&b, '\n');
    }
    for (size_t i = 0; i < ev->n; i++) {
        const struct evidence_span *sp = &ev->v[i];
        buf_printf(&b, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, sp->label ? "  " : "",
                   sp->label ? sp->label : "");
        if (sp->text && *sp->text) {
            buf_adds(&b, sp->text);
            if (!str_ends(sp->text, "\n")) buf_addc(&b, '\n');
        }
    }
    return buf_take(&b);
}

struct filter_ctx {
    const struct evidence *raw, *shown;
    struct evidence kept;
    int dropped;
};

static int check_filter_cb(void *ctx, const cJSON *obj, struct policy_usage *notes, char *err, size_t errlen)
{
    struct filter_ctx *fc = ctx;
    evidence_free(&fc->kept);
    return llm_check_filter(obj, fc->raw, fc->shown, &fc->kept, &fc->dropped, notes, err, errlen);
}

/* Every candidate for the filter: the rule-ranked ones first (cand, the
 * curation's choice with its focused text), then every other span of the
 * raw result, each as its header and first lines, numbered, so the model
 * chooses among all of them; within cap, those that do not fit are listed
 * by header alone. */
static char *candidates_text(const struct evidence *cand, const struct evidence *raw, size_t cap)
{
    struct buf b = BUF_INIT, rest = BUF_INIT;
    size_t n = cand->n;
    for (size_t i = 0; i < raw->n; i++)
        if (!evidence_covers(cand, raw->v[i].path, raw->v[i].start_line, raw->v[i].end_line)) n++;
    size_t per = n ? cap / n : cap;
    if (per < 240) per = 240;
    for (size_t i = 0; i < cand->n + raw->n; i++) {
        const struct evidence_span *sp = i < cand->n ? &cand->v[i] : &raw->v[i - cand->n];
        if (i >= cand->n && evidence_covers(cand, sp->path, sp->start_line, sp->end_line)) continue;
        struct buf one = BUF_INIT;
        numbered_span(&one, sp, per);
        if (b.len + one.len <= cap || b.len == 0) {
            buf_add(&b, one.data ? one.data : "", one.len);
        } else {
            char *label = one_line(sp->label, 90);
            buf_printf(&rest, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, *label ? "  " : "", label);
            free(label);
        }
        buf_free(&one);
    }
    if (rest.len) buf_printf(&b, "Also in the result (lines not shown):\n%s", buf_str(&rest));
    buf_free(&rest);
    return buf_take(&b);
}

struct filter_at {
    const char *question, *action;
    const struct evidence *cand, *raw;
};

static char *render_filter(struct llm_policy *p, const void *ctx, const struct llm_policy_caps *c, char *err,
                           size_t errlen)
{
    const struct filter_at *at = ctx;
    char *shown = candidates_text(at->cand, at->raw, c->raw);
    struct prompt_var v[] = {{"question", at->question, 2000}, {"action", at->action ? at->action : "?", 800},
                             {"raw", shown, 0}, {"outline", outline_in(p, c), 0}};
    char *prompt = render_role(p, LLM_ROLE_FILTER, v, ARRAY_LEN(v), err, errlen);
    free(shown);
    return prompt;
}

static int lp_curate(void *ctx, const char *question, const char *action, const struct evidence *raw,
                     const char *raw_text, struct evidence *curated, char **text, struct policy_usage *u, char *err,
                     size_t errlen)
{
    struct llm_policy *p = ctx;
    ensure_question(p, question);
    struct evidence cand = EVIDENCE_INIT;
    curate(question ? question : "", raw, p->cfg.curate_budget, &cand);
    char *pre = raw_preamble(raw_text, raw);
    char *shown = candidates_text(&cand, raw, p->cfg.caps.raw);
    long min = p->cfg.filter_min_bytes;
    struct filter_ctx fc = {raw, &cand, EVIDENCE_INIT, 0};
    struct role_call call = {.role = LLM_ROLE_FILTER, .temperature = p->cfg.explore_temperature,
                             .check = check_filter_cb, .cctx = &fc};
    if (cand.n == 0 || (min >= 0 && strlen(shown) <= (size_t)min)) {   /* nothing to choose from */
        evidence_copy(curated, &cand);
        *text = curated_text(NULL, pre, &cand);
        goto done;
    }
    struct filter_at at = {question, action, &cand, raw};
    int rc = ask_role(p, &call, render_filter, &at, u, err, errlen);
    char *problem = call.problem;
    if (rc == -2 || (rc == -1 && !failed_call(p, LLM_ROLE_FILTER, call.why, call.cerr, 1, u, problem,
                                              sizeof call.problem, err, errlen))) {
        role_call_done(&call);
        evidence_free(&fc.kept);
        free(pre);
        free(shown);
        evidence_free(&cand);
        return -1;
    }
    if (rc == 0 && fc.kept.n == 0) {
        /* An empty choice keeps the best rule-ranked span: erasing the
         * observation would lose what the action found. */
        evidence_add(curated, cand.v[0].path, cand.v[0].start_line, cand.v[0].end_line, cand.v[0].text,
                     cand.v[0].label, cand.v[0].score)->elided = cand.v[0].elided;
        const char *note = "filter: chose no span; kept the best-ranked candidate, not confirmed as relevant";
        policy_usage_note(u, "%s", note);
        *text = curated_text(note, pre, curated);
    } else if (rc == 0) {
        for (size_t i = 0; i < fc.kept.n; i++) fc.kept.v[i].score = curate_relevance(question, &fc.kept.v[i]);
        evidence_copy(curated, &fc.kept);
        if (fc.dropped) {
            policy_usage_note(u, "filter: dropped %d span%s outside the result", fc.dropped, fc.dropped == 1 ? "" : "s");
            log_msg("llm policy: filter dropped %d span%s outside the result", fc.dropped, fc.dropped == 1 ? "" : "s");
        }
        *text = curated_text(NULL, pre, &fc.kept);
    } else {
        char note[1400];
        fallback_used(p, LLM_ROLE_FILTER, rc < 0, problem, "rule-based", "curation", u, note, sizeof note);
        evidence_copy(curated, &cand);
        *text = curated_text(note, pre, &cand);
    }
    evidence_free(&fc.kept);
done:
    role_call_done(&call);
    free(pre);
    free(shown);
    evidence_free(&cand);
    return 0;
}

/* ---- construction ---- */

struct llm_policy *llm_policy_new(const struct llm_policy_config *cfg, char *err, size_t errlen)
{
    if (!cfg || !cfg->backend) {
        snprintf(err, errlen, "the LLM policy needs a chat backend; configure a model (--model, --api-base)");
        return NULL;
    }
    struct llm_policy *p = xcalloc(1, sizeof *p);
    p->cfg = *cfg;
    if (p->cfg.explore_temperature < 0) p->cfg.explore_temperature = LLM_POLICY_EXPLORE_TEMPERATURE;
    if (p->cfg.answer_temperature < 0) p->cfg.answer_temperature = LLM_POLICY_ANSWER_TEMPERATURE;
    if (p->cfg.max_attempts <= 0) p->cfg.max_attempts = LLM_POLICY_ATTEMPTS;
    if (p->cfg.curate_budget <= 0) p->cfg.curate_budget = 1500;
    if (p->cfg.filter_min_bytes == 0) p->cfg.filter_min_bytes = 1200;
    p->cfg.prompt_dirs = NULL;   /* only used here */
    caps_defaults(&p->cfg.caps);
    if (cfg->fallback) {
        p->fallback = *cfg->fallback;
        p->has_fallback = 1;
        if (!p->fallback.name) p->fallback.name = "fallback";
    }
    llm_usage_init(&p->usage);
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->fallback_lock, NULL);
    p->actions_text = render_actions(cfg->no_semantic);
    build_schemas(p);
    for (int r = 0; r < LLM_ROLE_N; r++) {
        p->prompts[r] = prompt_load(role_names[r], cfg->prompt_dirs, cfg->nprompt_dirs, role_vars[r], err, errlen);
        if (!p->prompts[r] || split_template(p, (enum llm_role)r, err, errlen) != 0) {
            llm_policy_free(p);
            return NULL;
        }
    }
    return p;
}

void llm_policy_free(struct llm_policy *p)
{
    if (!p) return;
    forget_question(p);
    llm_usage_destroy(&p->usage);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->fallback_lock);
    for (int r = 0; r < LLM_ROLE_N; r++) {
        prompt_free(p->prompts[r]);
        prompt_free(p->request[r]);
        free(p->system[r]);
        free(p->stable_tail[r]);
        cJSON_Delete(p->schema[r]);
    }
    free(p->actions_text);
    answer_stream_free(&p->stream);
    free(p);
}

static void lp_set_answer_sink(void *ctx, policy_answer_sink fn, void *ud)
{
    answer_stream_set(&((struct llm_policy *)ctx)->stream, fn, ud);
}

void llm_policy_bind(struct llm_policy *p, struct policy *out)
{
    memset(out, 0, sizeof *out);
    out->name = "llm";
    out->ctx = p;
    out->perceive = lp_perceive;
    out->plan = lp_plan;
    out->evaluate = lp_evaluate;
    out->rollout = p->has_fallback && p->fallback.rollout ? lp_rollout : NULL;
    out->plan_fallback = p->has_fallback && p->fallback.plan ? lp_plan_fallback : NULL;
    out->answer = lp_answer;
    out->set_answer_sink = lp_set_answer_sink;
}

void llm_policy_curator(struct llm_policy *p, struct policy_curator *out)
{
    out->ctx = p;
    out->curate = lp_curate;
}

int llm_policy_tokens(struct llm_policy *p, const char *role, long *input, long *output)
{
    struct llm_usage_entry e;
    if (llm_usage_get(&p->usage, role, &e) != 0 || e.calls == 0) {
        if (input) *input = 0;
        if (output) *output = 0;
        return -1;
    }
    if (input) *input = e.input_tokens;
    if (output) *output = e.output_tokens;
    return 0;
}

cJSON *llm_policy_usage_json(struct llm_policy *p)
{
    return llm_usage_json(&p->usage);
}

size_t llm_policy_notes(const struct llm_policy *p, const char *const **notes)
{
    if (notes) *notes = (const char *const *)p->notes;
    return p->nnotes;
}

void llm_policy_outcome(struct llm_policy *p, struct llm_policy_outcome *out)
{
    memset(out, 0, sizeof *out);
    struct llm_usage_entry tot;
    llm_usage_get(&p->usage, NULL, &tot);
    out->calls = tot.calls;
    out->failed_calls = tot.failures;
    pthread_mutex_lock(&p->lock);
    out->answer_fallback = p->q_answer_fallback;
    snprintf(out->last_error, sizeof out->last_error, "%s", p->q_last_error);
    pthread_mutex_unlock(&p->lock);
}

void llm_policy_stats(struct llm_policy *p, long *calls, long long *model_ms)
{
    pthread_mutex_lock(&p->lock);
    if (calls) *calls = p->calls;
    if (model_ms) *model_ms = p->model_ms;
    pthread_mutex_unlock(&p->lock);
}
