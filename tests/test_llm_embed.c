/* Tests for embed_remote against the loopback fake: batching, input order
 * restored from shuffled "index" fields, exact normalised vectors (the fake's
 * hashing is recomputed here), usage accounting, malformed replies, faults,
 * cancellation, and configuration from struct drqa_config. */
#include "tap.h"
#include "fake_llm.h"
#include "llm_config.h"
#include "semantic_remote.h"
#include "util.h"

#include <math.h>

#define KEY "sk-emb-Qx4SECRETkey77"
#define DIM 8

static const char *script =
    "{\"embed_dim\": 8, \"rules\": ["
    " {\"endpoint\": \"embeddings\", \"match\": \"case:nousage\", \"usage\": null},"
    " {\"endpoint\": \"embeddings\", \"match\": \"case:badindex\", \"fault\": \"bad_index\"},"
    " {\"endpoint\": \"embeddings\", \"match\": \"case:empty\", \"fault\": \"empty_choices\"},"
    " {\"endpoint\": \"embeddings\", \"match\": \"case:500\", \"status\": 500, \"error\": \"embedder down\"},"
    " {\"endpoint\": \"embeddings\", \"match\": \"case:truncate\", \"fault\": \"truncate\"},"
    " {\"endpoint\": \"embeddings\", \"match\": \"case:malformed\", \"fault\": \"malformed\"},"
    " {\"endpoint\": \"embeddings\", \"match\": \"case:noembed\", \"status\": 501, \"error_body\": {\"error\": {\"code\": 501,"
    " \"message\": \"This server does not support embeddings. Start it with `--embeddings`\", \"type\": \"not_supported_error\"}}}"
    "], \"default\": {}}";

/* What the fake computes for text, normalised. */
static void expected(const char *text, float out[DIM])
{
    double v[DIM] = {0}, norm = 0;
    char *copy = xstrdup(text), *save = NULL;
    for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        uint64_t h = hash64(w, strlen(w));
        v[h % DIM] += (h >> 32) & 1 ? -2.0 : 2.0;
    }
    free(copy);
    for (int i = 0; i < DIM; i++) norm += v[i] * v[i];
    norm = sqrt(norm);
    for (int i = 0; i < DIM; i++) out[i] = norm > 0 ? (float)(v[i] / norm) : 0.0f;
}

static int rows_match(const float *got, const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float want[DIM];
        expected(texts[i], want);
        for (int k = 0; k < DIM; k++)
            if (fabsf(got[i * DIM + k] - want[k]) > 1e-6f) {
                diag("row %zu dim %d: got %g want %g", i, k, got[i * DIM + k], want[k]);
                return 0;
            }
    }
    return 1;
}

/* Python-like text of about n bytes, different for each seed. */
static char *code_text(int seed, size_t n)
{
    struct buf b = BUF_INIT;
    for (int i = 0; b.len < n; i++)
        buf_printf(&b, "    def handler_%d_%d(self, request, *args):\n        return self.dispatch(request, args[%d])\n", seed,
                   i, i % 7);
    return buf_take(&b);
}

/* A server whose model takes at most 200 tokens an input, refusing longer
 * ones as each server family words it: the texts are cut and sent again,
 * each row is the vector of its text's beginning, and the bound is kept for
 * the next call, which is cut at once. */
static void too_long_inputs(void)
{
    static const char *const styles[] = {"llamacpp", "llamacpp-old", "vllm", "openai", "tei"};
    for (size_t s = 0; s < ARRAY_LEN(styles); s++) {
        char spec[256];
        snprintf(spec, sizeof spec, "{\"embed_dim\": 8, \"embed_max_tokens\": 200, \"embed_limit_style\": \"%s\", "
                 "\"default\": {}}", styles[s]);
        struct fake f;
        if (fake_start(&f, spec)) {
            ok(0, "%s: the fake server starts", styles[s]);
            continue;
        }
        char base[96];
        snprintf(base, sizeof base, "%s/v1", f.base);
        atomic_size_t fit = 0;
        struct embed_config e = {.base = base, .model = "small-embed", .batch = 4, .price_in = -1, .fit_bytes = &fit};
        http_opts_defaults(&e.http);
        e.http.max_attempts = 3;
        e.http.backoff_base_ms = 5;
        e.http.backoff_max_ms = 10;
        char *long1 = code_text(1, 3000), *long2 = code_text(2, 1200);
        /* three-byte characters: most cuts fall inside one, which must not be split */
        struct buf ub = BUF_INIT;
        while (ub.len < 2500) buf_adds(&ub, "\xe2\x82\xac");
        char *utf = buf_take(&ub);
        const char *texts[] = {"short text", long1, long2, utf, "def f(): pass"};
        float *v = NULL;
        int dim = 0;
        char err[512] = "";
        int rc = embed_remote(&e, texts, ARRAY_LEN(texts), &v, &dim, err, sizeof err);
        is_int(rc, 0, "%s: texts over the model's limit are embedded after cutting: %s", styles[s], err);
        size_t bound = atomic_load(&fit);
        ok(bound >= EMBED_MIN_BYTES && bound < 1200, "%s: a bound was learnt (%zu bytes)", styles[s], bound);
        int rows_ok = v != NULL, utf_ok = 1;
        for (size_t i = 0; v && i < ARRAY_LEN(texts); i++) {
            size_t len = strlen(texts[i]), k = len < bound ? len : bound;
            while (k < len && k > 0 && ((unsigned char)texts[i][k] & 0xC0) == 0x80) k--;
            char *prefix = xstrndup(texts[i], k);
            const char *one[] = {prefix};
            rows_ok &= rows_match(v + i * DIM, one, 1);
            if (i == 3) utf_ok = k > 0 && ((unsigned char)texts[i][k] & 0xC0) != 0x80;
            free(prefix);
        }
        ok(rows_ok, "%s: each row is the vector of its text's first bytes, the short ones whole", styles[s]);
        ok(utf_ok, "%s: no cut splits a UTF-8 sequence", styles[s]);
        free(v);
        /* every input the server took fitted; the refusals were the first tries */
        cJSON *all = fake_requests(&f), *r;
        int sent = 0, over = 0, broken = 0;
        cJSON_ArrayForEach(r, all) {
            cJSON *b = fake_body(r), *in;
            sent++;
            cJSON_ArrayForEach(in, cJSON_GetObjectItem(b, "input")) {
                over |= strlen(in->valuestring) > 1200;
                broken |= strstr(in->valuestring, "\xef\xbf\xbd") != NULL;   /* U+FFFD: the fake read a bad sequence */
            }
            cJSON_Delete(b);
        }
        cJSON_Delete(all);
        ok(sent >= 3 && over, "%s: the whole texts were tried first (%d requests)", styles[s], sent);
        ok(!broken, "%s: every text sent is valid UTF-8", styles[s]);
        /* the next call is cut at once: one request per batch, no refusal */
        const char *again[] = {long1};
        rc = embed_remote(&e, again, 1, &v, &dim, err, sizeof err);
        ok(rc == 0 && v, "%s: a later call succeeds", styles[s]);
        free(v);
        all = fake_requests(&f);
        is_int(cJSON_GetArraySize(all), sent + 1, "%s: a later call is cut at once, one request", styles[s]);
        cJSON_Delete(all);
        free(long1);
        free(long2);
        free(utf);
        fake_stop(&f);
    }

    /* a limit so small that no useful part fits: a clear error, not a loop */
    struct fake f;
    if (fake_start(&f, "{\"embed_dim\": 8, \"embed_max_tokens\": 10, \"embed_limit_style\": \"vllm\", \"default\": {}}")) {
        ok(0, "tiny limit: the fake server starts");
        return;
    }
    char base[96];
    snprintf(base, sizeof base, "%s/v1", f.base);
    struct embed_config e = {.base = base, .model = "tiny-embed", .batch = 4, .price_in = -1};
    http_opts_defaults(&e.http);
    e.http.backoff_base_ms = 5;
    char *t = code_text(3, 4000);
    const char *texts[] = {t};
    float *v = (float *)1;
    int dim = 0;
    char err[512] = "";
    int rc = embed_remote(&e, texts, 1, &v, &dim, err, sizeof err);
    ok(rc == LLM_ERR_STATUS && v == NULL, "tiny limit: fails");
    ok(strstr(err, "maximum context length is 10 tokens") && strstr(err, "not cut below"), "tiny limit: says why: %s", err);
    ok(fake_count(&f, "def handler") <= 6, "tiny limit: a few requests, no endless halving (%d)", fake_count(&f, "def handler"));
    free(t);
    fake_stop(&f);
}

int main(void)
{
    struct fake f;
    if (fake_start(&f, script)) {
        ok(0, "the fake server starts");
        return done_testing();
    }
    char base[96];
    snprintf(base, sizeof base, "%s/v1", f.base);
    struct llm_usage u;
    llm_usage_init(&u);
    struct embed_config e;
    memset(&e, 0, sizeof e);
    e.base = base;
    e.model = "fake-embed";
    e.key = KEY;
    e.batch = 2;
    e.usage = &u;
    e.price_in = -1;
    http_opts_defaults(&e.http);
    e.http.max_attempts = 2;
    e.http.backoff_base_ms = 5;
    e.http.backoff_max_ms = 10;

    const char *texts[] = {"class Flask routes requests", "def url_for endpoint", "session cookie signing",
                           "", "Flask Flask app"};
    float *v = NULL;
    int dim = 0;
    char err[512] = "";
    int rc = embed_remote(&e, texts, 5, &v, &dim, err, sizeof err);
    is_int(rc, 0, "five texts embed: %s", err);
    is_int(dim, DIM, "dimension from the reply");
    ok(v && rows_match(v, texts, 5), "every row is the normalised vector of its own text, in input order");
    double n0 = 0;
    for (int k = 0; v && k < DIM; k++) n0 += (double)v[k] * v[k];
    ok(fabs(n0 - 1.0) < 1e-6, "rows are unit length (%g)", n0);
    int zero = 1;
    for (int k = 0; v && k < DIM; k++) zero &= v[3 * DIM + k] == 0.0f;
    ok(zero, "an empty text stays a zero vector, not NaN");
    free(v);

    cJSON *all = fake_requests(&f), *r;
    int nreq = 0, sizes[8] = {0}, authok = 0;
    cJSON_ArrayForEach(r, all) {
        if (!str_ends(cJSON_GetObjectItem(r, "path")->valuestring, "/v1/embeddings")) continue;
        cJSON *b = fake_body(r);
        if (nreq < 8) sizes[nreq] = cJSON_GetArraySize(cJSON_GetObjectItem(b, "input"));
        if (nreq == 0) is_str(cJSON_GetObjectItem(b, "model")->valuestring, "fake-embed", "the model is sent");
        const char *a = fake_header(r, "authorization");
        authok += a && strcmp(a, "Bearer " KEY) == 0;
        cJSON_Delete(b);
        nreq++;
    }
    cJSON_Delete(all);
    is_int(nreq, 3, "batch size 2 gives three requests for five texts");
    ok(sizes[0] == 2 && sizes[1] == 2 && sizes[2] == 1, "batches of 2, 2 and 1 (%d %d %d)", sizes[0], sizes[1], sizes[2]);
    is_int(authok, 3, "each carries the Bearer key");

    struct llm_usage_entry ue;
    is_int(llm_usage_get(&u, "embed", &ue), 0, "usage under 'embed'");
    is_int(ue.calls, 3, "three calls");
    is_int(ue.input_tokens, 13, "tokens from usage: the fake counts 13 words");
    is_int(ue.estimated_calls, 0, "not estimated");

    const char *nu[] = {"case:nousage abcdefgh"};
    rc = embed_remote(&e, nu, 1, &v, &dim, err, sizeof err);
    is_int(rc, 0, "a reply without usage");
    free(v);
    llm_usage_get(&u, "embed", &ue);
    is_int(ue.input_tokens, 13 + 6, "estimated as 21 bytes / 4 rounded up = 6 tokens");
    is_int(ue.estimated_calls, 1, "flagged estimated");

    static const struct { const char *text; int rc; const char *msg; int requests; } bad[] = {
        {"case:badindex", LLM_ERR_REPLY, "a bad or repeated index", 1},
        {"case:empty", LLM_ERR_REPLY, "holds 0 vectors for 1 inputs", 1},
        {"case:500", LLM_ERR_STATUS, "HTTP 500", 2},
        {"case:truncate", LLM_ERR_CONNECT, "cut short", 2},
        {"case:malformed", LLM_ERR_REPLY, "is not a JSON object", 1},
        /* llama.cpp without --embeddings: 501, not retried, the fix named */
        {"case:noembed", LLM_ERR_STATUS, "started with --embeddings; with Ollama, set --embed-model", 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        const char *t[] = {bad[i].text};
        v = (float *)1;
        rc = embed_remote(&e, t, 1, &v, &dim, err, sizeof err);
        is_int(rc, bad[i].rc, "%s fails", bad[i].text);
        ok(strstr(err, bad[i].msg) != NULL, "%s: %s", bad[i].text, err);
        ok(v == NULL && dim == 0, "%s: no vectors returned", bad[i].text);
        is_int(fake_count(&f, bad[i].text), bad[i].requests, "%s: %d request(s)", bad[i].text, bad[i].requests);
        ok(!strstr(err, KEY), "%s: no key in the error", bad[i].text);
    }
    const char *t2[] = {"fine text", "case:500 in the second batch", "x"};
    rc = embed_remote(&e, t2, 3, &v, &dim, err, sizeof err);
    ok(rc == LLM_ERR_STATUS && v == NULL, "a failing later batch fails the whole call and frees the rows");

    atomic_int flag = 1;
    e.http.cancel = &flag;
    rc = embed_remote(&e, texts, 2, &v, &dim, err, sizeof err);
    is_int(rc, LLM_ERR_CANCELLED, "a set cancel flag stops it");
    e.http.cancel = NULL;

    rc = embed_remote(&e, texts, 0, &v, &dim, err, sizeof err);
    ok(rc == 0 && v == NULL && dim == 0, "no texts: nothing to do");

    char refused[96];
    snprintf(refused, sizeof refused, "http://127.0.0.1:%d/v1", fake_closed_port());
    e.base = refused;
    rc = embed_remote(&e, texts, 1, &v, &dim, err, sizeof err);
    ok(rc == LLM_ERR_CONNECT && strstr(err, "cannot connect"), "a closed port: %s", err);

    /* from the resolved config */
    struct drqa_config c;
    char ebase[128];
    snprintf(ebase, sizeof ebase, "DRQA_API_BASE=%s", base);
    const char *env[] = {ebase, "DRQA_API_KEY=" KEY, "DRQA_EMBED_MODEL=fake-embed", NULL};
    struct config_overrides o = {0};
    config_load_env(&c, &o, env, err, sizeof err);
    struct embed_config e2;
    is_int(embed_config_from(&e2, &c, err, sizeof err), 0, "embed config from the resolved config");
    const char *want_base = base;
    is_str(e2.base, want_base, "the chat server serves embeddings by default");
    is_str(e2.key, KEY, "with the chat key");
    is_int(e2.batch, 64, "default batch");
    rc = embed_remote(&e2, texts, 1, &v, &dim, err, sizeof err);
    ok(rc == 0 && rows_match(v, texts, 1), "and it works");
    free(v);
    config_free(&c);
    const char *env2[] = {NULL};
    config_load_env(&c, &o, env2, err, sizeof err);
    ok(embed_config_from(&e2, &c, err, sizeof err) == -1 && strstr(err, "--embed-model"), "no embed model: %s", err);
    config_free(&c);

    llm_usage_destroy(&u);
    fake_stop(&f);
    too_long_inputs();
    return done_testing();
}
