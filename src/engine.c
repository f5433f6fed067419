/*
 * engine: one question, headless, in any mode (see engine.h). Owns the
 * per-thread pieces (connection, action context, policy) and the glue
 * callbacks the search engine calls: executor and curator.
 */
#include "engine.h"
#include "linepost.h"
#include "action.h"
#include "answer.h"
#include "llm_config.h"
#include "curate.h"
#include "engine_llm.h"
#include "flatrank.h"
#include "index.h"
#include "mcts.h"
#include "llm.h"
#include "modes_llm.h"
#include "policy_llm.h"
#include "policy_offline.h"
#include "qparse.h"
#include "recheck.h"
#include "search.h"
#include "semantic.h"
#include "store.h"
#include "store_text.h"
#include "transcript.h"
#include "sqlx.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine_shared {
    struct engine_settings set;
    enum engine_mode mode;
    struct drqa_config cfg;
    char *repo_abs, *index_path;
    char policy_line[256];
    struct llm_backend *backend;   /* --policy llm: one client shared by every engine (backends.main) */
    struct engine_backends backends;   /* with the per-role ones */
    struct llm_usage run_usage;    /* every question's model calls, for --budget-usd */
    const atomic_int *cancel;      /* the hooks' cancel flag, or NULL */
    struct llm_usage *usage;       /* &run_usage, or the hooks' */
    /* the connection the setup read the index through, for the first engine:
     * the stamps it keeps of the files (linepost.h) hold while nothing
     * changes, where a new connection would read every file's row again */
    _Atomic(sqlite3 *) spare;
};

struct engine {
    const struct engine_shared *sh;
    sqlite3 *db;
    struct action_ctx actx;
    struct offline_policy *offline;
    struct llm_policy *llm;        /* --policy llm; its fallback is the offline policy */
    struct engine_fallback *fallback; /* that offline policy, on a connection of its own */
    struct modes_llm *modes;       /* --policy llm: direct and the RAG modes on the model */
};

int engine_parse_mode(const char *s, enum engine_mode *out)
{
    if (!s || !*s || !strcmp(s, "mcts")) *out = ENGINE_MCTS;
    else if (!strcmp(s, "direct")) *out = ENGINE_DIRECT;
    else if (!strcmp(s, "rag-function")) *out = ENGINE_RAG_FUNCTION;
    else if (!strcmp(s, "rag-window")) *out = ENGINE_RAG_WINDOW;
    else return -1;
    return 0;
}

const char *engine_mode_name(enum engine_mode m)
{
    switch (m) {
    case ENGINE_MCTS: return "mcts";
    case ENGINE_DIRECT: return "direct";
    case ENGINE_RAG_FUNCTION: return "rag-function";
    case ENGINE_RAG_WINDOW: return "rag-window";
    }
    return "mcts";
}

int engine_shared_open(const struct engine_settings *set, struct engine_shared **out, int *usage, char *err,
                       size_t errlen)
{
    return engine_shared_open_hooked(set, NULL, out, usage, err, errlen);
}

/* The line postings the offline policy ranks windows from (linepost.h),
 * built on a thread of their own, through a connection of their own, while
 * the vectors are fitted: both only read the index until each writes its own
 * tables in a short transaction of its own. */
struct linepost_job {
    const char *path;
    pthread_t thread;
    int started;
    char err[256];
};

static void *linepost_thread(void *arg)
{
    struct linepost_job *j = arg;
    sqlite3 *db = NULL;
    if (store_open(j->path, 1, &db, NULL, j->err, sizeof j->err) == 0 && linepost_build(db, j->err, sizeof j->err) >= 0)
        j->err[0] = 0;
    sqlx_close(db);
    return NULL;
}

/* No thread when db already holds postings of its files (a later question):
 * the stamp that tells is the one db's readers would compute anyway. */
static void linepost_start(struct linepost_job *j, const char *path, sqlite3 *db)
{
    memset(j, 0, sizeof *j);
    if (linepost_current(db)) return;
    j->path = path;
    j->started = pthread_create(&j->thread, NULL, linepost_thread, j) == 0;
    if (!j->started) linepost_thread(j);
}

static void linepost_join(struct linepost_job *j)
{
    if (j->started) pthread_join(j->thread, NULL);
    j->started = 0;
    if (j->err[0]) log_msg("%s", j->err);
}

/* The index update's options with the hooks' callbacks. */
static struct index_options hooked_index_options(const struct engine_settings *set, const struct engine_hooks *hooks)
{
    struct index_options io = set->index.opt;
    io.progress = hooks->progress;
    io.progress_ctx = hooks->progress_ctx;
    io.phase = hooks->phase;
    io.cancel = hooks->cancel;
    io.notice = NULL;
    return io;
}

int engine_shared_open_hooked(const struct engine_settings *set, const struct engine_hooks *hooks,
                              struct engine_shared **out, int *usage, char *err, size_t errlen)
{
    *out = NULL;
    *usage = 1;
    struct engine_shared *sh = xcalloc(1, sizeof *sh);
    sh->set = *set;
    const struct engine_settings *o = &sh->set;
    struct engine_hooks none = {0};
    if (!hooks) hooks = &none;
    sh->cancel = hooks->cancel;
    sh->usage = hooks->usage ? hooks->usage : &sh->run_usage;
    struct index_options io = hooked_index_options(o, hooks);
    io.busy_read = 1;
    llm_usage_init(&sh->run_usage);
    if (engine_parse_mode(o->mode, &sh->mode)) {
        snprintf(err, errlen, "unknown --mode '%s'; use mcts, direct, rag-function or rag-window", o->mode);
        goto fail;
    }
    if (config_load(&sh->cfg, &o->config, err, errlen)) goto fail;
    if (sh->cfg.policy == POLICY_LLM) {
        if (engine_backends_open(&sh->cfg, o->search.budget_usd, &sh->backends, err, errlen)) goto fail;
        sh->backend = sh->backends.main;
    } else if (o->search.budget_usd > 0 && !o->quiet) {
        fprintf(stderr, "drqa-tui: warning: --budget-usd has nothing to limit: the offline policy calls no model\n");
    }
    config_describe(&sh->cfg, sh->policy_line, sizeof sh->policy_line);
    sqlite3 *db = NULL;
    int irc = index_ensure_ex(&o->index, &io, NULL, &db, &sh->repo_abs, &sh->index_path, err, errlen);
    if (irc) {
        /* a missing repository, or an index path that holds no index, is
         * the caller's fault; an unreadable index is not */
        *usage = irc == INDEX_EUSAGE;
        goto fail;
    }
    *usage = 0;
    /* the line postings (built once here rather than by the first question
     * of every thread; an index that cannot be written is scanned instead:
     * the same windows), alongside the vectors */
    struct linepost_job lp;
    linepost_start(&lp, sh->index_path, db);
    /* register SemanticSearch and fit, load or fetch its vectors (remote
     * embeddings when configured, engine_llm.h) once, before threads share
     * the index */
    if (hooks->phase) hooks->phase(hooks->progress_ctx, "vectors");
    int erc = engine_embed_setup(&sh->cfg, db, o->no_semantic, err, errlen);
    linepost_join(&lp);
    if (erc) {
        sqlx_close(db);
        db = NULL;
        /* Reading failed. A damaged index (opening and the update need not
         * read every page) is kept aside and rebuilt once, then read again. */
        if (store_quick_check(sh->index_path, NULL, 0)) goto fail;
        io.check = 1;
        free(sh->repo_abs);
        free(sh->index_path);
        sh->repo_abs = sh->index_path = NULL;
        if (index_ensure_ex(&o->index, &io, NULL, &db, &sh->repo_abs, &sh->index_path, err, errlen)) goto fail;
        if (engine_embed_setup(&sh->cfg, db, o->no_semantic, err, errlen)) {
            sqlx_close(db);
            goto fail;
        }
        char e2[256];
        if (linepost_build(db, e2, sizeof e2) < 0) log_msg("%s", e2);
    }
    atomic_store(&sh->spare, db);
    *out = sh;
    return 0;
fail:
    engine_shared_free(sh);
    return -1;
}

int engine_shared_refresh(struct engine_shared *sh, const struct engine_hooks *hooks, int *changed, int *rebuilt,
                          char *err, size_t errlen)
{
    *changed = *rebuilt = 0;
    struct engine_hooks none = {0};
    if (!hooks) hooks = &none;
    const struct engine_settings *o = &sh->set;
    /* the options of the first update; a check or a full hash is the first
     * update's business, not every later one's */
    struct index_options io = hooked_index_options(o, hooks);
    io.check = io.verify = io.busy_read = 0;
    struct index_stats st;
    memset(&st, 0, sizeof st);
    if (index_ensure_ex(&o->index, &io, &st, NULL, NULL, NULL, err, errlen)) return -1;
    if (!st.changed) return 0;
    *changed = 1;
    *rebuilt = st.rebuilt || st.repaired;
    sqlite3 *db = NULL;
    if (store_open(sh->index_path, 1, &db, NULL, err, errlen)) return -1;
    struct linepost_job lp;
    linepost_start(&lp, sh->index_path, db);
    if (hooks->phase) hooks->phase(hooks->progress_ctx, "vectors");
    int erc = engine_embed_setup(&sh->cfg, db, o->no_semantic, err, errlen);
    linepost_join(&lp);
    sqlx_close(db);
    return erc ? -1 : 0;
}

void engine_shared_free(struct engine_shared *sh)
{
    if (!sh) return;
    sqlx_close(atomic_exchange(&sh->spare, NULL));
    engine_backends_close(&sh->backends);
    llm_usage_destroy(&sh->run_usage);
    config_free(&sh->cfg);
    free(sh->repo_abs);
    free(sh->index_path);
    free(sh);
}

const char *engine_policy_line(const struct engine_shared *sh) { return sh->policy_line; }
const char *engine_repo_abs(const struct engine_shared *sh) { return sh->repo_abs; }
const char *engine_index_path(const struct engine_shared *sh) { return sh->index_path; }
const char *engine_policy_name(const struct engine_shared *sh) { return sh->cfg.policy == POLICY_LLM ? "llm" : "offline"; }
enum engine_mode engine_mode_of(const struct engine_shared *sh) { return sh->mode; }
const char *engine_model_name(const struct engine_shared *sh)
{
    return sh->cfg.policy == POLICY_LLM ? sh->cfg.model : NULL;
}

int engine_open(const struct engine_shared *sh, struct engine **out, char *err, size_t errlen)
{
    return engine_open_cancel(sh, NULL, out, err, errlen);
}

int engine_open_cancel(const struct engine_shared *sh, const atomic_int *cancel, struct engine **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    if (!cancel) cancel = sh->cancel;
    struct engine *e = xcalloc(1, sizeof *e);
    e->sh = sh;
    e->db = atomic_exchange(&((struct engine_shared *)sh)->spare, NULL);
    if (!e->db && store_open(sh->index_path, 1, &e->db, NULL, err, errlen)) {
        free(e);
        return -1;
    }
    sqlite3_busy_timeout(e->db, 5000);
    action_ctx_init(&e->actx, e->db, sh->repo_abs);
    struct offline_config oc = {.db = e->db, .actx = &e->actx, .no_semantic = sh->set.no_semantic};
    e->offline = offline_policy_new(&oc);
    if (sh->backend) {
        /* not e->offline: under --parallel a fallback runs beside an execute */
        if (engine_fallback_open(sh->index_path, sh->repo_abs, sh->set.no_semantic, &e->fallback, err, errlen) ||
            (sh->mode != ENGINE_MCTS && !(e->modes = modes_llm_new(sh->backend, err, errlen)))) {
            engine_close(e);
            return -1;
        }
        struct policy fallback;
        engine_fallback_bind(e->fallback, &fallback);
        struct llm_policy_config lc;
        llm_policy_config_init(&lc);
        lc.backend = sh->backend;
        for (int k = 0; k < LLM_ROLE_N; k++) lc.role_backend[k] = sh->backends.role[k];
        lc.run_usage = sh->usage;   /* locked inside */
        lc.fallback = &fallback;
        lc.no_semantic = sh->set.no_semantic;
        lc.cancel = (atomic_int *)cancel;   /* only read by the requests */
        lc.outline = engine_outline;
        lc.outline_ctx = sh->index_path;
        if (!(e->llm = llm_policy_new(&lc, err, errlen))) {
            engine_close(e);
            return -1;
        }
    }
    *out = e;
    return 0;
}

struct action_ctx *engine_action_ctx(struct engine *e) { return &e->actx; }

void engine_close(struct engine *e)
{
    if (!e) return;
    llm_policy_free(e->llm);
    engine_fallback_close(e->fallback);
    modes_llm_free(e->modes);
    offline_policy_free(e->offline);
    action_ctx_release(&e->actx);
    sqlx_close(e->db);
    free(e);
}

/* ------------------------------------------------- executor and curator */

int engine_execute_action(struct action_ctx *actx, int no_semantic, const char *name, const cJSON *args,
                          struct evidence *raw, char **text, char *err, size_t errlen)
{
    if (no_semantic && name && !strcmp(name, "SemanticSearch")) {
        snprintf(err, errlen, "SemanticSearch is switched off (--no-semantic); use FindClass, FindFunction, "
                              "FindCodeSnippet or FindReferences");
        return -1;
    }
    struct action_result r;
    int rc = action_run(actx, name, args, &r, err, errlen);
    if (rc != ACTION_OK) {
        action_result_free(&r);
        return -1;
    }
    evidence_copy(raw, &r.ev);
    /* notes and listings here; the curator renders the spans it keeps */
    struct evidence spans = r.ev;
    r.ev = (struct evidence)EVIDENCE_INIT;
    *text = action_result_render(&r, 0);
    r.ev = spans;
    action_result_free(&r);
    return 0;
}

static int ex_execute(void *ctx, const char *name, const cJSON *args, struct evidence *raw, char **text, char *err,
                      size_t errlen)
{
    struct engine *e = ctx;
    return engine_execute_action(&e->actx, e->sh->set.no_semantic, name, args, raw, text, err, errlen);
}

int engine_curate_rules(void *ctx, const char *question, const char *action, const struct evidence *raw,
                     const char *raw_text, struct evidence *curated, char **text, struct policy_usage *usage,
                     char *err, size_t errlen)
{
    (void)ctx;
    (void)action;
    (void)usage;
    (void)err;
    (void)errlen;
    curate(question, raw, ENGINE_CURATE_BUDGET, curated);
    struct buf b = BUF_INIT;
    if (raw_text && *raw_text) {
        buf_adds(&b, raw_text);
        if (!str_ends(raw_text, "\n")) buf_addc(&b, '\n');
    }
    for (size_t i = 0; i < curated->n; i++) {
        const struct evidence_span *sp = &curated->v[i];
        buf_printf(&b, "%s:%d-%d%s%s\n", sp->path, sp->start_line, sp->end_line, sp->label ? "  " : "",
                   sp->label ? sp->label : "");
        if (sp->text && *sp->text) {
            buf_adds(&b, sp->text);
            if (!str_ends(sp->text, "\n")) buf_addc(&b, '\n');
        }
    }
    *text = buf_take(&b);
    return 0;
}

/* ------------------------------------------------------------- results */

void engine_result_free(struct engine_result *r)
{
    if (!r) return;
    free(r->question);
    free(r->answer);
    /* the hashes first: there are cites.n of them, and evidence_free resets n */
    for (size_t i = 0; r->cite_hashes && i < r->cites.n; i++) free(r->cite_hashes[i]);
    free(r->cite_hashes);
    evidence_free(&r->cites);
    evidence_free(&r->evidence);
    free(r->stop_reason);
    free(r->error);
    free(r->damage);
    free(r->offline_answer);
    free(r->fallback_reason);
    free(r->last_failure);
    free(r->last_retry);
    cJSON_Delete(r->usage);
    memset(r, 0, sizeof *r);
}

static void add_unique_span(struct evidence *dst, const struct evidence_span *sp)
{
    for (size_t i = 0; i < dst->n; i++)
        if (!strcmp(dst->v[i].path, sp->path) && dst->v[i].start_line == sp->start_line &&
            dst->v[i].end_line == sp->end_line)
            return;
    evidence_add(dst, sp->path, sp->start_line, sp->end_line, sp->text, sp->label, sp->score)->elided = sp->elided;
}

/* ---------------------------------------------------------------- modes */

/* Appends "Model calls: <ledger line>" to the Markdown transcript at path. */
static int append_ledger(const char *path, const cJSON *usage, const struct engine_result *r, char *err,
                         size_t errlen)
{
    char *line = usage ? llm_usage_line(usage) : NULL;
    if (!line) return 0;
    FILE *fp = fopen(path, "a");
    int bad = !fp || fprintf(fp, "\nModel calls: %s.\n", line + strlen("tokens ")) < 0;
    /* who decided, with the counts --json gives */
    if (!bad && fprintf(fp, "\nDecided by: the answer by the %s policy%s; %d step%s by the offline policy instead of "
                            "the model; %ld of %ld model calls failed; %d verified citation%s.\n",
                        r->answered_by && !strcmp(r->answered_by, "model") ? "model's (llm)" : "offline",
                        r->no_model ? " (no model call succeeded)" : "", r->fallback_steps,
                        r->fallback_steps == 1 ? "" : "s", r->failed_calls, r->model_calls, r->verified_citations,
                        r->verified_citations == 1 ? "" : "s") < 0)
        bad = 1;
    if (fp && fclose(fp) != 0) bad = 1;
    if (bad) snprintf(err, errlen, "cannot append the model ledger to '%s'", path);
    free(line);
    return bad ? -1 : 0;
}

int engine_check_question(struct engine *e, const char *question, char *err, size_t errlen)
{
    struct qparse q;
    int rc = qparse_question_names(question ? question : "", action_index_defines, &e->actx, &q, err, errlen);
    qparse_free(&q);
    return rc ? -1 : 0;
}

char *engine_damage(struct engine *e) { return store_text_damage(e->db); }

char *engine_damage_message(const char *damage, int rechecked)
{
    /* what is done comes first: the front end's message line may cut the rest */
    return rechecked ? xasprintf("the index is still damaged after its check, so the answer lacks what could not "
                                 "be read: %s", damage)
                     : xasprintf("the index was found damaged while answering; checking it and asking again: %s",
                                 damage);
}

void engine_search_parts(struct engine *e, struct search_config *sc, struct policy *pol,
                         struct policy_executor *ex, struct policy_curator *cu)
{
    *sc = e->sh->set.search;
    sc->spent_usd = engine_spent_usd;
    sc->spent_ctx = e->sh->usage;
    offline_policy_set_iterations(e->offline, sc->iterations);
    if (e->fallback) engine_fallback_set_iterations(e->fallback, sc->iterations);
    offline_policy_bind(e->offline, pol);
    *ex = (struct policy_executor){e, ex_execute};
    *cu = (struct policy_curator){e, engine_curate_rules};
    if (e->llm) {   /* thread-safe for one question, so --parallel overlaps its model calls */
        llm_policy_bind(e->llm, pol);
        llm_policy_curator(e->llm, cu);
        sc->policy_thread_safe = sc->curator_thread_safe = 1;
    }
}

/* Who decided the question (struct engine_result): the llm policy's
 * outcome. A question whose every model call failed has no answer of the
 * model's: the error names the last reason, and the fallback's answer is
 * kept apart as the offline policy's. So is the answer of a search that
 * failed (every step failed, or it stopped before any step was done). */
static void decided_by(struct engine *e, const struct search_answer *a, struct engine_result *r)
{
    r->answered_by = "offline";
    if (!e->llm) return;
    struct llm_policy_outcome out;
    llm_policy_outcome(e->llm, &out);
    r->model_calls = out.calls;
    r->failed_calls = out.failed_calls;
    if (!out.answer_fallback) r->answered_by = "model";
    if (out.failed_calls > 0 && out.last_error[0]) r->last_failure = xstrdup(out.last_error);
    r->retried_calls = out.retried_calls;
    if (out.retried_calls > 0 && out.last_retry[0]) r->last_retry = xstrdup(out.last_retry);
    const char *const *notes;
    size_t nn = llm_policy_notes(e->llm, &notes);
    for (size_t i = nn; i-- > 0;)
        if (strstr(notes[i], "; used the ")) {
            r->fallback_reason = xstrdup(notes[i]);
            break;
        }
    if (out.calls > 0 && out.failed_calls == out.calls) {
        r->no_model = 1;
        r->answered_by = "offline";
        free(r->error);
        r->error = xasprintf("no model call succeeded (%ld of %ld failed); the last: %s", out.failed_calls,
                             out.calls, out.last_error[0] ? out.last_error : "no reason recorded");
    }
    if ((r->no_model || a->failure) && r->answer) {
        r->offline_answer = r->answer;
        r->answer = NULL;
        r->answered_by = "offline";
    }
}
/* The search's events turned into the caller's progress: once per valued
 * node, with the iterations done and the best value seen. */
struct ask_watch {
    const struct engine_ask_hooks *h;
    int max_iterations;
    int last_iterations;
    double best;
};

static void ask_on_event(void *ctx, const struct search *s, enum search_event ev, int node_id)
{
    struct ask_watch *w = ctx;
    if (ev != SEARCH_EV_NODE_UPDATED || node_id <= 0) return;
    const struct mcts_tree *t = search_tree(s);
    const struct mcts_node *n = mcts_node(t, node_id);
    int better = n && n->has_value && n->value > w->best;
    if (better) w->best = n->value;
    if (!better && t->iterations == w->last_iterations) return;
    w->last_iterations = t->iterations;
    w->h->progress(w->h->ctx, t->iterations, w->max_iterations, w->best < 0 ? 0 : w->best);
}

static void run_mcts(struct engine *e, const char *question, const char *stem, const struct engine_ask_hooks *h,
                     struct engine_result *r)
{
    const struct engine_settings *o = &e->sh->set;
    struct search_config sc;
    struct policy pol;
    struct policy_executor ex;
    struct policy_curator cu;
    engine_search_parts(e, &sc, &pol, &ex, &cu);
    struct ask_watch watch = {h, sc.iterations, -1, -1};
    if (h && h->progress) {
        sc.on_event = ask_on_event;
        sc.event_ctx = &watch;
    }
    if (pol.set_answer_sink) pol.set_answer_sink(pol.ctx, h ? h->answer_sink : NULL, h ? h->answer_ctx : NULL);
    struct search *s = search_new(&sc, &pol, &ex, &cu, question);
    int cancelled = 0;
    while (!(cancelled = h && h->cancel && atomic_load(h->cancel)) && search_step(s)) {
    }
    if (cancelled) {
        r->error = xstrdup("the question was cancelled");
        search_free(s);
        return;
    }
    struct search_answer *a = search_answer(s);
    if (pol.set_answer_sink) pol.set_answer_sink(pol.ctx, NULL, NULL);   /* the hooks end with this question */
    const struct mcts_tree *t = search_tree(s);
    r->answer = xstrdup(a->markdown ? a->markdown : "");
    r->stopped = a->stopped;
    r->unwrapped = a->unwrapped;
    evidence_copy(&r->cites, &a->cites);
    for (size_t i = 0; i < a->npath; i++) {
        const struct mcts_node *n = mcts_node(t, a->path[i]);
        for (size_t k = 0; k < n->obs.n; k++) add_unique_span(&r->evidence, &n->obs.v[k]);
    }
    for (size_t i = 0; i < a->cites.n; i++) add_unique_span(&r->evidence, &a->cites.v[i]);
    r->iterations = t->iterations;
    r->tokens_in = t->tokens_in;
    r->tokens_out = t->tokens_out;
    r->stop_reason = xstrdup(search_stop_name(search_stop_reason(s)));
    for (int id = 1; id < t->n; id++) {
        r->fallback_steps += t->nodes[id].fallback != 0;
        r->failed_steps += t->nodes[id].status == MCTS_ERROR;
    }
    if (e->llm) r->usage = llm_policy_usage_json(e->llm);
    r->verified_citations = a->fallback_cite ? 0 : (int)a->cites.n;
    decided_by(e, a, r);
    if (search_stop_reason(s) == SEARCH_STOP_BUDGET_USD)
        log_msg("engine: the cost budget of $%g is spent ($%.4f); answered from the evidence found so far",
                sc.budget_usd, engine_spent_usd(sc.spent_ctx));
    if (a->error) log_msg("engine: %s", a->error);
    if (a->failure && !r->error) r->error = xstrdup(a->failure);
    if (stem) {
        struct transcript_config tc = {0};
        tc.repo = e->sh->repo_abs;
        tc.index_path = e->sh->index_path;
        tc.mode = "mcts";
        transcript_config_resolve(&tc, &e->sh->cfg);
        tc.iterations = sc.iterations;
        tc.max_expand = sc.max_expand;
        tc.parallel = sc.parallel > 1 ? sc.parallel : 1;
        tc.seed = sc.seed;
        tc.budget_tokens = sc.budget_tokens;
        tc.exploration = sc.exploration;
        tc.no_mcts = sc.no_mcts;
        tc.no_perception = sc.no_perception;
        tc.no_evaluation = sc.no_evaluation;
        tc.no_semantic = o->no_semantic;
        tc.commit = r->commit;
        tc.dirty = r->dirty;
        cJSON *cj = transcript_config_json(&tc);
        transcript_stamp_created(cj);
        /* the question's model ledger travels with the run's settings */
        if (r->usage) cJSON_AddItemToObject(cj, "usage", cJSON_Duplicate(r->usage, 1));
        /* who decided, with the counts of --json and the ledger */
        cJSON *dj = cJSON_AddObjectToObject(cj, "decided");
        cJSON_AddStringToObject(dj, "answered_by", r->answered_by ? r->answered_by : "offline");
        cJSON_AddNumberToObject(dj, "fallback_steps", r->fallback_steps);
        cJSON_AddNumberToObject(dj, "failed_steps", r->failed_steps);
        cJSON_AddNumberToObject(dj, "model_calls", (double)r->model_calls);
        cJSON_AddNumberToObject(dj, "failed_calls", (double)r->failed_calls);
        cJSON_AddNumberToObject(dj, "verified_citations", r->verified_citations);
        cJSON_AddBoolToObject(dj, "no_model", r->no_model);
        if (r->error) cJSON_AddStringToObject(dj, "error", r->error);
        char err[512];
        char *jp = xasprintf("%s.json", stem), *mp = xasprintf("%s.md", stem);
        if (transcript_save(jp, t, cj, a, err, sizeof err) || transcript_save_markdown(mp, t, a, err, sizeof err) ||
            append_ledger(mp, r->usage, r, err, sizeof err)) {
            char *why = xasprintf("%s%scannot write the transcript: %s", r->error ? r->error : "",
                                  r->error ? "; also " : "", err);
            free(r->error);
            r->error = why;
        }
        free(jp);
        free(mp);
        cJSON_Delete(cj);
    }
    search_answer_free(a);
    search_free(s);
}

static int rag_function(struct engine *e, const char *question, struct evidence *pool, char *err, size_t errlen)
{
    struct evidence found = EVIDENCE_INIT;
    struct semantic_query q = {0};
    q.text = question;
    q.category = SEMANTIC_ANY;
    q.top_k = 3 * ENGINE_RAG_TOP;
    q.mode = e->sh->set.no_semantic ? SEMANTIC_BM25 : SEMANTIC_HYBRID;
    if (engine_embed_search(&e->actx, &q, &found, err, errlen) < 0) {
        evidence_free(&found);
        return -1;
    }
    flatrank_definitions(&found, ENGINE_RAG_TOP, pool);
    evidence_free(&found);
    return 0;
}

int engine_ask(struct engine *e, const char *question, const char *stem, struct engine_result *r)
{
    return engine_ask_hooked(e, question, stem, NULL, r);
}

int engine_ask_hooked(struct engine *e, const char *question, const char *stem, const struct engine_ask_hooks *h,
                      struct engine_result *r)
{
    memset(r, 0, sizeof *r);
    int64_t t0 = now_ms();
    r->question = xstrdup(question ? question : "");
    r->mode = engine_mode_name(e->sh->mode);
    r->policy = engine_policy_name(e->sh);
    r->model = engine_model_name(e->sh);
    const char *slash = strrchr(e->sh->repo_abs, '/');
    r->repo_name = slash && slash[1] ? slash + 1 : e->sh->repo_abs;
    index_provenance(e->db, r->commit, &r->dirty);
    char err[1024] = "";
    struct qparse q;
    if (qparse_question_names(r->question, action_index_defines, &e->actx, &q, err, sizeof err)) {
        r->error = xstrdup(err);
        qparse_free(&q);
        r->wall_ms = now_ms() - t0;
        return -1;
    }
    qparse_weigh(&q, e->db);
    switch (e->sh->mode) {
    case ENGINE_MCTS:
        run_mcts(e, r->question, stem, h, r);
        break;
    case ENGINE_DIRECT:
        if (e->modes) {
            modes_llm_answer(e->modes, ENGINE_DIRECT, r);
            break;
        }
        r->answer = xstrdup("No answer: direct mode gives the policy no repository context, and the offline policy "
                            "has no model and no knowledge of its own to answer from. Use --mode mcts, rag-function "
                            "or rag-window, or configure a model (--model) for direct prompting.\n");
        break;
    case ENGINE_RAG_FUNCTION:
    case ENGINE_RAG_WINDOW: {
        int rc = e->sh->mode == ENGINE_RAG_FUNCTION
                     ? rag_function(e, r->question, &r->evidence, err, sizeof err)
                     : flatrank_windows(&q, e->db, FLATRANK_LINES, FLATRANK_OVERLAP, FLATRANK_TOP,
                                        &r->evidence, err, sizeof err) < 0;
        if (rc) {
            r->error = xstrdup(err);
            break;
        }
        if (e->modes) {
            modes_llm_answer(e->modes, e->sh->mode, r);
            break;
        }
        struct answer_opts ao = {0};
        ao.note = e->sh->mode == ENGINE_RAG_FUNCTION ? "Retrieved: the top function and class chunks by SemanticSearch."
                                                     : "Retrieved: the top 500-line windows by BM25.";
        if (answer_build(&q, &r->evidence, e->db, &ao, &r->answer, &r->cites, err, sizeof err)) {
            r->error = xstrdup(err);
            break;
        }
        size_t dropped = answer_verify(&r->evidence, &r->cites);
        if (dropped) log_msg("engine: %zu citations not covered by the retrieved evidence were dropped", dropped);
        break;
    }
    }
    qparse_free(&q);
    if (e->sh->mode != ENGINE_MCTS && r->answer) {
        r->answered_by = e->modes ? "model" : "offline";
        r->verified_citations = (int)r->cites.n;
    }
    if (r->cites.n) {   /* what a later --recheck compares the cited lines with */
        r->cite_hashes = xcalloc(r->cites.n, sizeof *r->cite_hashes);
        for (size_t i = 0; i < r->cites.n; i++) {
            char hash[RECHECK_HASH_LEN];
            const struct evidence_span *c = &r->cites.v[i];
            if (recheck_span_hash(&e->actx, c->path, c->start_line, c->end_line, hash) == 1)
                r->cite_hashes[i] = xstrdup(hash);
        }
    }
    r->damage = engine_damage(e);
    r->wall_ms = now_ms() - t0;
    return r->error ? -1 : 0;
}

/* ---------------------------------------------------------------- output */

/* A cited span's place: path, start_line, end_line. */
static cJSON *span_lines_json(const struct evidence_span *sp)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "path", sp->path);
    cJSON_AddNumberToObject(x, "start_line", sp->start_line);
    cJSON_AddNumberToObject(x, "end_line", sp->end_line);
    return x;
}

cJSON *engine_result_json(const struct engine_result *r, const cJSON *id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
    if (r->question) cJSON_AddStringToObject(o, "question", r->question);
    else cJSON_AddNullToObject(o, "question");
    if (r->answer) cJSON_AddStringToObject(o, "answer", r->answer);
    else cJSON_AddNullToObject(o, "answer");
    cJSON *c = cJSON_AddArrayToObject(o, "citations");
    for (size_t i = 0; i < r->cites.n; i++) {
        cJSON *x = span_lines_json(&r->cites.v[i]);
        if (r->cite_hashes && r->cite_hashes[i]) cJSON_AddStringToObject(x, "text_hash", r->cite_hashes[i]);
        cJSON_AddItemToArray(c, x);
    }
    /* the evidence the answer cites, with its text: what identifier recall
     * reads besides the answer (metrics.h) */
    cJSON *ev = cJSON_AddArrayToObject(o, "evidence");
    for (size_t i = 0; i < r->cites.n; i++) {
        cJSON *x = span_lines_json(&r->cites.v[i]);
        cJSON_AddStringToObject(x, "text", r->cites.v[i].text ? r->cites.v[i].text : "");
        cJSON_AddItemToArray(ev, x);
    }
    cJSON_AddStringToObject(o, "mode", r->mode ? r->mode : "mcts");
    cJSON_AddStringToObject(o, "policy", r->policy ? r->policy : "offline");
    if (r->model) cJSON_AddStringToObject(o, "model", r->model);
    if (r->repo_name) cJSON_AddStringToObject(o, "repo_name", r->repo_name);
    else cJSON_AddNullToObject(o, "repo_name");
    cJSON_AddNumberToObject(o, "iterations", r->iterations);
    cJSON *tk = cJSON_AddObjectToObject(o, "tokens");
    cJSON_AddNumberToObject(tk, "input", (double)r->tokens_in);
    cJSON_AddNumberToObject(tk, "output", (double)r->tokens_out);
    if (r->usage) cJSON_AddItemToObject(o, "usage", cJSON_Duplicate(r->usage, 1));
    cJSON_AddNumberToObject(o, "wall_ms", (double)r->wall_ms);
    if (r->stop_reason) cJSON_AddStringToObject(o, "stop_reason", r->stop_reason);
    else cJSON_AddNullToObject(o, "stop_reason");
    if (r->damage) cJSON_AddStringToObject(o, "index_damage", r->damage);
    cJSON_AddNumberToObject(o, "fallback_steps", r->fallback_steps);
    cJSON_AddNumberToObject(o, "failed_steps", r->failed_steps);
    if (r->commit[0]) {
        cJSON_AddStringToObject(o, "commit", r->commit);
        cJSON_AddBoolToObject(o, "dirty", r->dirty);
    } else {
        cJSON_AddNullToObject(o, "commit");
        cJSON_AddNullToObject(o, "dirty");
    }
    if (r->error) cJSON_AddStringToObject(o, "error", r->error);
    else cJSON_AddNullToObject(o, "error");
    if (r->answered_by) cJSON_AddStringToObject(o, "answered_by", r->answered_by);
    else cJSON_AddNullToObject(o, "answered_by");
    cJSON_AddNumberToObject(o, "model_calls", (double)r->model_calls);
    cJSON_AddNumberToObject(o, "failed_calls", (double)r->failed_calls);
    cJSON_AddNumberToObject(o, "verified_citations", r->verified_citations);
    cJSON_AddBoolToObject(o, "uncited", r->answer && r->verified_citations == 0);
    if (r->offline_answer) cJSON_AddStringToObject(o, "offline_answer", r->offline_answer);
    if (r->stopped) cJSON_AddTrueToObject(o, "stopped");   /* only then: lines stay as they were */
    /* likewise only when there is something to say: what stderr says of failed and retried calls */
    if (r->last_failure) cJSON_AddStringToObject(o, "last_failure", r->last_failure);
    if (r->retried_calls > 0) {
        cJSON_AddNumberToObject(o, "retried_calls", (double)r->retried_calls);
        if (r->last_retry) cJSON_AddStringToObject(o, "last_retry", r->last_retry);
    }
    return o;
}

char *engine_result_markdown(const struct engine_result *r)
{
    struct buf b = BUF_INIT;
    /* an answer the offline policy wrote for the model is never passed off as the model's */
    if (r->answer && r->policy && !strcmp(r->policy, "llm") && r->answered_by && !strcmp(r->answered_by, "offline"))
        buf_adds(&b, "## The offline policy's answer (the model's answer call failed)\n\n");
    buf_adds(&b, r->answer ? r->answer : "");
    if (!str_ends(buf_str(&b), "\n")) buf_addc(&b, '\n');
    if (r->cites.n) {
        buf_adds(&b, "\n**Citations:**\n\n");
        for (size_t i = 0; i < r->cites.n; i++) {
            const struct evidence_span *c = &r->cites.v[i];
            buf_printf(&b, "- `%s:%d-%d`%s%s%s\n", c->path, c->start_line, c->end_line, c->label ? " `" : "",
                       c->label ? c->label : "", c->label ? "`" : "");
        }
    }
    return buf_take(&b);
}
