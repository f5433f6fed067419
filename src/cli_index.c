/*
 * cli_index: the --index-only mode. Brings the repository's index up to date
 * and reports what the update did and what the index now holds: file
 * counts, symbols by kind, edges resolved and unresolved by kind, every
 * skipped file with its reason, the index path and the time taken. --json
 * prints the same as one object for scripts and tests.
 */
#include "cli.h"
#include "cli_settings.h"
#include "index.h"
#include "index_scan.h"
#include "sqlx.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct skip_row { char *path, *reason; };

static size_t load_skipped(sqlite3 *db, struct skip_row **out)
{
    sqlite3_stmt *st;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT path, reason FROM skipped ORDER BY path", -1, &st, NULL) != SQLITE_OK) return 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ARRAY_GROW(*out, n, cap, 16);
        (*out)[n].path = xstrdup((const char *)sqlite3_column_text(st, 0));
        (*out)[n].reason = xstrdup((const char *)sqlite3_column_text(st, 1));
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

/* Numbers of one JSON object, in the order given. */
struct count {
    const char *name;
    double n;
};

static void add_counts(cJSON *o, const struct count *c, size_t n)
{
    for (size_t i = 0; i < n; i++) cJSON_AddNumberToObject(o, c[i].name, c[i].n);
}

static void print_json(const struct index_stats *s, const char *repo, const char *ipath,
                       const struct skip_row *sk, size_t nsk)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "repo", repo);
    cJSON_AddStringToObject(o, "index", ipath);
    const struct count files[] = {
        {"indexed", (double)s->files}, {"unchanged", (double)s->unchanged}, {"updated", (double)s->updated},
        {"added", (double)s->added}, {"deleted", (double)s->deleted}, {"parsed", (double)s->parsed},
        {"skipped", (double)nsk},
    };
    add_counts(cJSON_AddObjectToObject(o, "files"), files, ARRAY_LEN(files));
    const struct count symbols[] = {
        {"classes", (double)s->classes}, {"functions", (double)s->functions}, {"methods", (double)s->methods},
        {"variables", (double)s->variables},
    }, refs[] = {{"imports", (double)s->imports}, {"calls", (double)s->calls}};
    add_counts(cJSON_AddObjectToObject(o, "symbols"), symbols, ARRAY_LEN(symbols));
    add_counts(o, refs, ARRAY_LEN(refs));
    cJSON *e = cJSON_AddObjectToObject(o, "edges");
    for (int i = 0; i < INDEX_EDGE_KINDS; i++) {
        cJSON *k = cJSON_AddObjectToObject(e, index_edge_kind_names[i]);
        cJSON_AddNumberToObject(k, "resolved", (double)s->edges_resolved[i]);
        cJSON_AddNumberToObject(k, "unresolved", (double)s->edges_unresolved[i]);
    }
    cJSON_AddStringToObject(o, "listing", s->used_git ? "git" : "walk");
    if (s->commit[0]) {
        cJSON_AddStringToObject(o, "commit", s->commit);
        cJSON_AddBoolToObject(o, "dirty", s->dirty);
    } else {
        cJSON_AddNullToObject(o, "commit");
        cJSON_AddNullToObject(o, "dirty");
    }
    cJSON *ig = cJSON_AddArrayToObject(o, "ignored");   /* the rules that left paths out, with counts */
    for (const char *l = s->ignored; *l;) {
        const char *tab = strchr(l, '\t'), *nl = strchr(l, '\n');
        if (!tab || !nl) break;
        cJSON *r = cJSON_CreateObject();
        char *rule = xstrndup(tab + 1, (size_t)(nl - tab - 1));
        cJSON_AddStringToObject(r, "rule", rule);
        cJSON_AddNumberToObject(r, "paths", atof(l));
        free(rule);
        cJSON_AddItemToArray(ig, r);
        l = nl + 1;
    }
    cJSON *sa = cJSON_AddArrayToObject(o, "skipped");
    for (size_t i = 0; i < nsk; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "path", sk[i].path);
        cJSON_AddStringToObject(r, "reason", sk[i].reason);
        cJSON_AddItemToArray(sa, r);
    }
    const struct count pe[] = {{"files", (double)s->parse_error_files}, {"nodes", (double)s->parse_errors}},
                       de[] = {{"files", (double)s->decode_error_files}, {"bytes", (double)s->decode_errors}},
                       dd[] = {{"listed", (double)s->dirs_listed}, {"cached", (double)s->dirs_cached}};
    add_counts(cJSON_AddObjectToObject(o, "parse_errors"), pe, ARRAY_LEN(pe));
    add_counts(cJSON_AddObjectToObject(o, "decode_errors"), de, ARRAY_LEN(de));
    /* a directory walk's listings: read, or kept */
    add_counts(cJSON_AddObjectToObject(o, "dirs"), dd, ARRAY_LEN(dd));
    cJSON_AddBoolToObject(o, "rebuilt", s->rebuilt);
    /* cached remote embeddings a rebuild took over from the index it replaced */
    cJSON_AddNumberToObject(o, "embeddings_kept", (double)s->embeddings_kept);
    cJSON *op = cJSON_AddObjectToObject(o, "options");   /* what decided which files and content are indexed */
    cJSON_AddNumberToObject(op, "max_file_size", (double)s->max_file_size);
    cJSON_AddBoolToObject(op, "max_file_size_recorded", s->max_file_size_recorded);
    cJSON_AddBoolToObject(op, "no_ignore", s->no_ignore);
    if (s->checked || s->repaired) {
        cJSON *c = cJSON_AddObjectToObject(o, "check");
        cJSON_AddStringToObject(c, "result", s->repaired ? "damaged" : "ok");
        if (s->repaired) {
            cJSON_AddStringToObject(c, "damage", s->damage);
            cJSON_AddStringToObject(c, "kept_as", s->aside);
        }
    }
    if (s->verified || s->differed) {
        cJSON *v = cJSON_AddObjectToObject(o, "verify");
        cJSON_AddNumberToObject(v, "hashed", (double)s->verified);
        cJSON_AddNumberToObject(v, "differed", (double)s->differed);
    }
    cJSON_AddNumberToObject(o, "ms", (double)s->ms);
    char *txt = cJSON_Print(o);
    puts(txt);
    free(txt);
    cJSON_Delete(o);
}

static void print_text(const struct index_stats *s, const char *repo, const char *ipath,
                       const struct skip_row *sk, size_t nsk)
{
    printf("repository   %s\n", repo);
    printf("files        %ld indexed: %ld unchanged, %ld updated, %ld added, %ld deleted\n", s->files,
           s->unchanged, s->updated, s->added, s->deleted);
    printf("symbols      %ld classes, %ld functions, %ld methods, %ld variables\n", s->classes, s->functions,
           s->methods, s->variables);
    printf("imports      %ld\n", s->imports);
    printf("calls        %ld\n", s->calls);
    for (int i = 0; i < INDEX_EDGE_KINDS; i++)
        printf("edges        %-9s %ld resolved, %ld unresolved\n", index_edge_kind_names[i], s->edges_resolved[i],
               s->edges_unresolved[i]);
    printf("listing      %s\n", s->used_git ? "git ls-files --cached --others --exclude-standard, then .drqaignore"
                                               : "a walk of the directory tree");
    if (s->commit[0]) printf("commit       %s%s\n", s->commit, s->dirty ? " (dirty: the files differ from it)" : "");
    for (const char *l = s->ignored; *l;) {
        const char *tab = strchr(l, '\t'), *nl = strchr(l, '\n');
        if (!tab || !nl) break;
        char *rule = xstrndup(tab + 1, (size_t)(nl - tab - 1));
        char *safe = text_term_safe(rule);
        printf("ignored      %ld %s: %s\n", atol(l), atol(l) == 1 ? "path" : "paths", safe);
        free(safe);
        free(rule);
        l = nl + 1;
    }
    if (s->ignored_more) printf("ignored      ... and %ld more rules\n", s->ignored_more);
    printf("skipped      %zu\n", nsk);
    for (size_t i = 0; i < nsk; i++) {
        char *safe = text_term_safe(sk[i].path);   /* a file name may hold escapes */
        printf("  %s: %s\n", safe, sk[i].reason);
        free(safe);
    }
    printf("parse errors %ld in %ld files\n", s->parse_errors, s->parse_error_files);
    printf("decode errors %ld bytes in %ld files\n", s->decode_errors, s->decode_error_files);
    if (s->max_file_size_recorded)
        printf("options      --max-file-size %lld (recorded in the index; give --max-file-size to change it)\n",
               s->max_file_size);
    if (s->no_ignore)
        printf("options      --no-ignore (only version-control metadata was left out; recorded in the index)\n");
    if (s->repaired) {
        char *safe = text_term_safe(s->aside);
        printf("check        damaged (%s): kept as %s, rebuilt\n", s->damage, safe);
        free(safe);
    } else if (s->checked) {
        printf("check        ok (sqlite quick_check, every file text, chunk text and docstring read whole)\n");
    }
    if (s->verified || s->differed)
        printf("verify       %ld files hashed: %ld differed from the index with their size and times unchanged, "
               "re-indexed\n", s->verified, s->differed);
    if (s->embeddings_kept)
        printf("embeddings   %ld cached vectors of chunk texts taken over from the index replaced\n",
               s->embeddings_kept);
    printf("index        %s%s\n", ipath, s->rebuilt ? " (rebuilt)" : "");
    printf("time         %lld ms\n", s->ms);
}

/* --explain PATH: what the scan would do with one path, without indexing. */
static int explain(const struct drqa_opts *o)
{
    char err[1024];
    struct stat st;
    char *root = o->repo ? realpath(o->repo, NULL) : NULL;
    if (!root || stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "drqa-tui: the repository '%s' is not a readable directory; give the repository's top directory\n",
                o->repo ? o->repo : "");
        free(root);
        return EXIT_USAGE;
    }
    struct scan_options so = {.max_file_size = o->max_file_size, .no_ignore = o->no_ignore};
    struct buf out = BUF_INIT;
    int rc = scan_explain(root, &so, o->explain, &out, err, sizeof err);
    free(root);
    if (rc) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        buf_free(&out);
        return EXIT_USAGE;
    }
    char *safe = text_term_safe(buf_str(&out));
    fputs(safe, stdout);
    free(safe);
    buf_free(&out);
    return EXIT_OK;
}

int cli_index_only(const struct drqa_opts *o)
{
    if (o->explain) return explain(o);
    char err[1024];
    struct index_stats stats;
    sqlite3 *db = NULL;
    char *repo = NULL, *ipath = NULL;
    struct index_request rq;
    cli_index_request(&rq, o);
    int rc = index_ensure_ex(&rq, NULL, &stats, &db, &repo, &ipath, err, sizeof err);
    if (rc) {
        fprintf(stderr, "drqa-tui: %s\n", err);
        /* a missing or wrong repository argument, or an index path holding
         * something else, is bad input; the rest a failure */
        return rc == INDEX_EUSAGE ? EXIT_USAGE : EXIT_FAIL;
    }
    struct skip_row *sk;
    size_t nsk = load_skipped(db, &sk);
    if (o->json) print_json(&stats, repo, ipath, sk, nsk);
    else if (!o->quiet) print_text(&stats, repo, ipath, sk, nsk);
    for (size_t i = 0; i < nsk; i++) {
        free(sk[i].path);
        free(sk[i].reason);
    }
    free(sk);
    sqlx_close(db);
    free(repo);
    free(ipath);
    return EXIT_OK;
}
