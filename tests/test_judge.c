/* Tests for the judge: the rubric reply parser (valid, fenced in prose, out of
 * range, missing key, non-integer, rationale cut), asking again with the
 * validation error and then giving up as missing (never zero), transport
 * failures, temperature 0, the judge prompt template (shipped, overridden,
 * refused), and resolving judges from --judge-model specs and the judges file
 * (endpoints, keys only where they belong, errors) against the loopback fake. */
#include "tap.h"
#include "harness.h"
#include "fake_llm.h"
#include "judge.h"
#include "util.h"

#include <sys/stat.h>

#define KEY "sk-judge-Q4SECRETkey77"
#define OTHER_KEY "sk-other-Z9SECRETkey11"

static char dir[128];

static void parse_cases(void)
{
    struct judge_scores s;
    char err[512];
    ok(judge_parse_reply("{\"correctness\": 12, \"completeness\": 11, \"relevance\": 18, \"clarity\": 16, "
                         "\"reasoning\": 14, \"rationale\": \"misses the registry\"}", &s, err, sizeof err) == 0,
       "valid reply");
    ok(s.v[0] == 12 && s.v[1] == 11 && s.v[2] == 18 && s.v[3] == 16 && s.v[4] == 14, "scores in dimension order");
    is_str(s.rationale, "misses the registry", "rationale kept");
    ok(judge_parse_reply("Here you go:\n```json\n{\"correctness\": 20, \"completeness\": 1, \"relevance\": \"7\", "
                         "\"clarity\": 3, \"reasoning\": 9}\n```\nThanks", &s, err, sizeof err) == 0,
       "fenced in prose, a quoted whole number");
    ok(s.v[0] == 20 && s.v[1] == 1 && s.v[2] == 7 && s.rationale[0] == 0, "bounds 1 and 20 accepted, no rationale");
    ok(judge_parse_reply("{\"correctness\": 0, \"completeness\": 21, \"relevance\": 5, \"clarity\": 5, "
                         "\"reasoning\": 5}", &s, err, sizeof err) == -1, "out of range refused");
    is_str(err, "field \"correctness\" must be a whole number from 1 to 20, got 0 (a number); field \"completeness\" "
                "must be a whole number from 1 to 20, got 21 (a number)", "out-of-range message names both fields");
    ok(judge_parse_reply("{\"correctness\": 10, \"completeness\": 10, \"relevance\": 10, \"clarity\": 10}", &s, err,
                         sizeof err) == -1, "missing key refused");
    is_str(err, "missing required field \"reasoning\"", "missing key message");
    ok(judge_parse_reply("{\"correctness\": 10.5, \"completeness\": \"high\", \"relevance\": 10, \"clarity\": 10, "
                         "\"reasoning\": 10}", &s, err, sizeof err) == -1, "non-integers refused");
    ok(strstr(err, "\"correctness\" must be a whole number from 1 to 20, got 10.5") &&
           strstr(err, "\"completeness\" must be a whole number from 1 to 20, got \"high\""),
       "non-integer message: %s", err);
    ok(judge_parse_reply("I would give it 15/20 overall.", &s, err, sizeof err) == -1, "prose without JSON refused");
    ok(strncmp(err, "no JSON object in the reply", 27) == 0, "no-object message: %s", err);
    ok(judge_parse_reply(NULL, &s, err, sizeof err) == -1, "NULL reply refused");

    struct buf b = BUF_INIT;
    buf_adds(&b, "{\"correctness\": 1, \"completeness\": 1, \"relevance\": 1, \"clarity\": 1, \"reasoning\": 1, "
                 "\"rationale\": \"");
    for (int i = 0; i < 399; i++) buf_addc(&b, 'x');
    buf_adds(&b, "\xc3\xa9\xc3\xa9\"}");   /* a two-byte character straddles the cut */
    ok(judge_parse_reply(buf_str(&b), &s, err, sizeof err) == 0, "long rationale accepted");
    is_int(strlen(s.rationale), 399, "rationale cut before a split UTF-8 character");
    buf_free(&b);
}

static const char *script =
    "{\"rules\": ["
    " {\"match\": \"case:good\", \"content\": \"{\\\"correctness\\\": 13, \\\"completeness\\\": 12, "
    "\\\"relevance\\\": 17, \\\"clarity\\\": 16, \\\"reasoning\\\": 14, \\\"rationale\\\": \\\"ok\\\"}\"},"
    " {\"match\": \"case:fixes\", \"times\": 1, \"content\": \"{\\\"correctness\\\": 25, \\\"completeness\\\": 8}\"},"
    " {\"match\": \"case:fixes\", \"content\": \"{\\\"correctness\\\": 9, "
    "\\\"completeness\\\": 8, \\\"relevance\\\": 15, \\\"clarity\\\": 15, \\\"reasoning\\\": 10}\"},"
    " {\"match\": \"case:never\", \"content\": \"Overall a solid 15 out of 20.\"},"
    " {\"match\": \"case:down\", \"status\": 500, \"error\": \"judge backend down\"}"
    "], \"default\": {\"content\": \"{}\"}}";

static struct llm_backend *backend(const char *base)
{
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/test.conf", dir);
    FILE *fp = fopen(path, "w");
    fprintf(fp, "retries = 0\ntimeout_total_ms = 10000\ntemperature = 0.7\n");
    fclose(fp);
    char ebase[160];
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s/v1", base);
    const char *env[] = {ebase, "DRQA_MODEL=judge-model", "DRQA_API_KEY=" KEY, NULL};
    struct config_overrides o = {0};
    o.config_path = path;
    struct drqa_config c;
    if (config_load_env(&c, &o, env, err, sizeof err)) {
        diag("config: %s", err);
        config_free(&c);
        return NULL;
    }
    c.temperature = 0.0;
    struct llm_backend *b = llm_backend_new(&c, err, sizeof err);
    config_free(&c);
    return b;
}

static void ask_cases(struct fake *f)
{
    struct llm_backend *b = backend(f->base);
    ok(b != NULL, "backend on the fake");
    if (!b) return;
    struct llm_usage u;
    llm_usage_init(&u);
    struct judge_outcome r;

    judge_ask(b, "case:good question", &u, &r);
    ok(r.ok && r.attempts == 1 && r.s.v[0] == 13 && r.s.v[4] == 14, "valid reply at once");
    cJSON *req = fake_last(f, "case:good");
    cJSON *body = req ? fake_body(req) : NULL;
    cJSON *t = cJSON_GetObjectItem(body, "temperature");
    ok(cJSON_IsNumber(t) && t->valuedouble == 0.0, "temperature 0 sent");
    cJSON_Delete(body);
    cJSON_Delete(req);

    judge_ask(b, "case:fixes question", &u, &r);
    ok(r.ok && r.attempts == 2, "invalid reply asked again once, then valid");
    ok(r.s.v[0] == 9 && r.s.v[1] == 8, "scores from the second reply");
    req = fake_last(f, "Your reply could not be used");
    body = req ? fake_body(req) : NULL;
    cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    is_int(cJSON_GetArraySize(msgs), 3, "re-ask carries prompt, bad reply and the correction");
    cJSON *last = cJSON_GetArrayItem(msgs, 2);
    const char *txt = cJSON_GetStringValue(cJSON_GetObjectItem(last, "content"));
    ok(txt && strstr(txt, "field \"correctness\" must be a whole number from 1 to 20, got 25") &&
           strstr(txt, "missing required field \"relevance\""),
       "the validation error is sent back");
    is_str(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "role")), "assistant",
           "the bad reply is the assistant turn");
    cJSON_Delete(body);
    cJSON_Delete(req);

    int before = fake_count(f, "case:never");
    judge_ask(b, "case:never question", &u, &r);
    ok(!r.ok, "never valid: missing");
    is_int(r.attempts, 3, "asked three times (two re-asks)");
    is_int(fake_count(f, "case:never") - before, 3, "three requests reached the server");
    ok(r.s.v[0] == 0 && strstr(r.error, "no valid reply in 3 attempts; the last: no JSON object") != NULL,
       "missing with the reason: %s", r.error);
    ok(r.input_tokens > 0 && r.output_tokens > 0, "tokens of all attempts counted");

    judge_ask(b, "case:down question", &u, &r);
    ok(!r.ok && r.attempts == 1, "server error: missing, not asked again");
    ok(strstr(r.error, "the judge call failed") && strstr(r.error, "judge backend down"), "server error kept: %s",
       r.error);
    ok(!strstr(r.error, KEY), "no key in the error");

    struct llm_usage_entry e;
    ok(llm_usage_get(&u, "judge", &e) == 0 && e.calls == 7, "seven calls under tag judge");
    llm_usage_destroy(&u);
    llm_backend_free(b);
}

static void prompt_cases(void)
{
    char err[600];
    char xdg[200];
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    struct prompt *p = judge_prompt_load(err, sizeof err);
    ok(p != NULL, "shipped judge prompt loads (%s)", p ? p->path : err);
    if (p) {
        ok(strstr(p->text, "16-19") && strstr(p->text, "1-3") && strstr(p->text, "\"reasoning\""),
           "prompt holds the bands and the reply format");
        char *s = judge_prompt_render(p, "Q-TEXT {{answer}}", "R-TEXT", "A-TEXT", err, sizeof err);
        ok(s && strstr(s, "Q-TEXT {{answer}}") && strstr(s, "R-TEXT") && strstr(s, "A-TEXT"),
           "rendered; placeholders inside values are left alone");
        free(s);
    }
    prompt_free(p);

    char pdir[260], path[300];
    snprintf(pdir, sizeof pdir, "%s/drqa-tui", xdg);
    mkdir(xdg, 0700);
    mkdir(pdir, 0700);
    snprintf(pdir, sizeof pdir, "%s/drqa-tui/prompts", xdg);
    mkdir(pdir, 0700);
    snprintf(path, sizeof path, "%s/judge.txt", pdir);
    FILE *fp = fopen(path, "w");
    fputs("Q {{question}}\nR {{reference}}\nA {{answer}}\nmine\n", fp);
    fclose(fp);
    p = judge_prompt_load(err, sizeof err);
    ok(p && strcmp(p->path, path) == 0 && strstr(p->text, "mine"), "user override wins");
    prompt_free(p);
    fp = fopen(path, "w");
    fputs("Q {{question}}\nR {{reference}}\n", fp);
    fclose(fp);
    p = judge_prompt_load(err, sizeof err);
    char want[700];
    snprintf(want, sizeof want, "%s: the judge prompt has no {{answer}}; it needs {{question}}, {{reference}} and "
             "{{answer}}", path);
    ok(!p, "override without {{answer}} refused");
    is_str(err, want, "missing placeholder message");
    fp = fopen(path, "w");
    fputs("Q {{question}}\nR {{reference}}\nA {{answer}} {{score}}\n", fp);
    fclose(fp);
    p = judge_prompt_load(err, sizeof err);
    ok(!p && strstr(err, ":3:") && strstr(err, "{{score}}"), "unknown placeholder refused with file:line: %s", err);
    unlink(path);
    unsetenv("XDG_CONFIG_HOME");
}

static struct drqa_config cfg_for(const char *base, const char *provider)
{
    struct drqa_config c;
    char err[512];
    char eb[200], ep[64];
    snprintf(eb, sizeof eb, "DRQA_API_BASE=%s", base);
    snprintf(ep, sizeof ep, "DRQA_PROVIDER=%s", provider);
    const char *env[] = {eb, ep, "DRQA_API_KEY=" KEY, "DRQA_MODEL=answer-model", "HOME=/nonexistent", NULL};
    if (config_load_env(&c, NULL, env, err, sizeof err)) diag("config: %s", err);
    return c;
}

static const char *write_judges(const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/judges", dir);
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
    return path;
}

static void resolve_cases(struct fake *f)
{
    char err[600], base[128], other[200];
    snprintf(base, sizeof base, "%s/v1", f->base);
    snprintf(other, sizeof other, "gpt-judge@http://127.0.0.1:%d/v1/", f->port);
    const char *envp[] = {"OPENAI_API_KEY=" OTHER_KEY, NULL};
    struct drqa_config c = cfg_for(base, "openai");
    /* the config sets a temperature (the judges' models are in no profile
     * row, so none would go out otherwise); a judge sends 0 */
    c.temperature = 0.7;
    c.temperature_set = 1;
    struct judge_set js;

    const char *none = write_judges("# no judges\n");
    ok(judge_set_resolve(&js, &c, NULL, 0, none, envp, err, sizeof err) == 0 && js.n == 0, "no judge configured");
    judge_set_free(&js);

    /* NAME at the configured endpoint gets the configured key; NAME@URL at
     * another URL (here the same server under another spelling) gets none. */
    char other_url[160];
    snprintf(other_url, sizeof other_url, "http://localhost:%d/v1", f->port);
    char spec2[200];
    snprintf(spec2, sizeof spec2, "second@%s", other_url);
    const char *specs[] = {"first", spec2};
    ok(judge_set_resolve(&js, &c, specs, 2, none, envp, err, sizeof err) == 0 && js.n == 2, "two judges (%s)", err);
    if (js.n == 2) {
        is_str(js.v[0].name, "first", "first judge's name");
        is_str(js.v[0].base, base, "first judge at the configured base");
        is_str(js.v[1].base, other_url, "second judge at its URL");
        is_str(js.v[1].model, "second", "model is the name");
        struct judge_outcome r;
        judge_ask(js.v[0].backend, "case:good keycheck-first", NULL, &r);
        judge_ask(js.v[1].backend, "case:good keycheck-second", NULL, &r);
        cJSON *q1 = fake_last(f, "keycheck-first"), *q2 = fake_last(f, "keycheck-second");
        const char *a1 = q1 ? fake_header(q1, "authorization") : NULL;
        ok(a1 && strcmp(a1, "Bearer " KEY) == 0, "configured key sent to the configured base");
        ok(q2 && !fake_header(q2, "authorization"), "no key sent to another base");
        cJSON *b1 = q1 ? fake_body(q1) : NULL, *b2 = q2 ? fake_body(q2) : NULL;
        is_str(cJSON_GetStringValue(cJSON_GetObjectItem(b1, "model")), "first", "first judge's model sent");
        is_str(cJSON_GetStringValue(cJSON_GetObjectItem(b2, "model")), "second", "second judge's model sent");
        cJSON *t = cJSON_GetObjectItem(b1, "temperature");
        ok(cJSON_IsNumber(t) && t->valuedouble == 0, "temperature 0 although the config says otherwise");
        cJSON_Delete(b1);
        cJSON_Delete(b2);
        cJSON_Delete(q1);
        cJSON_Delete(q2);
    }
    judge_set_free(&js);

    /* The judges file: model alias, own key, provider; used when no spec. */
    char text[800];
    snprintf(text, sizeof text,
             "# judges\njudge.gpt-5.4.base = \"%s\"\njudge.gpt-5.4.key = " OTHER_KEY "\n"
             "judge.claude.provider = anthropic\njudge.claude.model = claude-sonnet-4-6\n"
             "judge.claude.base = %s\n",
             other_url, f->base);
    const char *jf = write_judges(text);
    ok(judge_set_resolve(&js, &c, NULL, 0, jf, envp, err, sizeof err) == 0 && js.n == 2, "judges from the file (%s)",
       err);
    if (js.n == 2) {
        is_str(js.v[0].name, "gpt-5.4", "dotted judge name read up to the last dot");
        is_str(js.v[1].model, "claude-sonnet-4-6", "model alias");
        ok(js.v[1].provider == LLM_PROVIDER_ANTHROPIC, "provider from the file");
        struct judge_outcome r;
        judge_ask(js.v[0].backend, "case:good keycheck-file", NULL, &r);
        judge_ask(js.v[1].backend, "case:good keycheck-anthropic", NULL, &r);
        ok(r.ok, "anthropic judge answered through the messages API");
        cJSON *q = fake_last(f, "keycheck-file");
        const char *a = q ? fake_header(q, "authorization") : NULL;
        ok(a && strcmp(a, "Bearer " OTHER_KEY) == 0, "the judge's own key sent");
        cJSON_Delete(q);
        q = fake_last(f, "keycheck-anthropic");
        ok(q && !fake_header(q, "x-api-key"), "no key for the anthropic judge at a base without one");
        ok(q && strstr(cJSON_GetStringValue(cJSON_GetObjectItem(q, "path")), "/messages"), "messages endpoint");
        cJSON_Delete(q);
    }
    judge_set_free(&js);

    /* A spec naming a file judge takes its settings; @URL overrides the base. */
    const char *spec3[] = {"claude"};
    ok(judge_set_resolve(&js, &c, spec3, 1, jf, envp, err, sizeof err) == 0 && js.n == 1 &&
           js.v[0].provider == LLM_PROVIDER_ANTHROPIC && strcmp(js.v[0].model, "claude-sonnet-4-6") == 0,
       "spec picks one file judge");
    judge_set_free(&js);

    /* Vendor key only for the vendor's public endpoint. */
    const char *spec4[] = {"gpt-4o@https://api.openai.com/v1"};
    ok(judge_set_resolve(&js, &c, spec4, 1, none, envp, err, sizeof err) == 0 && js.n == 1, "vendor endpoint judge");
    judge_set_free(&js);

    /* Errors. */
    const char *dup[] = {"a", "a@http://127.0.0.1:1/v1"};
    ok(judge_set_resolve(&js, &c, dup, 2, none, envp, err, sizeof err) == -1, "duplicate judge refused");
    is_str(err, "judge 'a' is named twice; give each judge once", "duplicate message");
    const char *bad[] = {"@http://127.0.0.1:1/v1"};
    ok(judge_set_resolve(&js, &c, bad, 1, none, envp, err, sizeof err) == -1, "empty name refused");
    is_str(err, "--judge-model '@http://127.0.0.1:1/v1' has no model name; write NAME or NAME@URL", "empty name message");
    const char *ftp[] = {"m@ftp://host/v1"};
    ok(judge_set_resolve(&js, &c, ftp, 1, none, envp, err, sizeof err) == -1 && strstr(err, "must start with http"),
       "non-http URL refused: %s", err);
    jf = write_judges("judge.x.model = m\njudge.x.colour = red\n");
    ok(judge_set_resolve(&js, &c, NULL, 0, jf, envp, err, sizeof err) == -1, "unknown field refused");
    char want[600];
    snprintf(want, sizeof want, "%s:2: unknown judge field 'colour'; use model, base, key or provider", jf);
    is_str(err, want, "unknown field message with file:line");
    jf = write_judges("judge.x.provider = gemini\n");
    ok(judge_set_resolve(&js, &c, NULL, 0, jf, envp, err, sizeof err) == -1 && strstr(err, ":1: unknown provider"),
       "unknown provider refused: %s", err);
    jf = write_judges("model = x\n");
    ok(judge_set_resolve(&js, &c, NULL, 0, jf, envp, err, sizeof err) == -1 && strstr(err, ":1: 'model' is not a judge key"),
       "non-judge key refused: %s", err);
    char gone[200];
    snprintf(gone, sizeof gone, "%s/no-such-judges", dir);
    ok(judge_set_resolve(&js, &c, NULL, 0, gone, envp, err, sizeof err) == -1 && strstr(err, "cannot read the judges file"),
       "an explicit judges file must exist");
    judge_set_free(NULL);
    config_free(&c);
}

int main(void)
{
    parse_cases();
    if (!temp_dir(dir, sizeof dir, "judge")) return 1;
    prompt_cases();
    struct fake f;
    if (fake_start(&f, script) != 0) {
        ok(0, "fake server started");
        return done_testing();
    }
    ask_cases(&f);
    resolve_cases(&f);
    fake_stop(&f);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    return done_testing();
}
