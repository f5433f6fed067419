/*
 * bench/tsparse.c: tree-sitter parsing alone, the floor under drqa-tui's cold
 * index. Reads every file named in LIST (one path a line) into memory first,
 * then parses each with ts_parser_parse_string and deletes the tree: no
 * extraction, no chunks, no sqlite. A line of LIST is 'LANGUAGE PATH', the
 * language as drqa-tui's index records it (files.lang): python, or
 * javascript when built with -DTSPARSE_JS. Done once on 1 thread and once on
 * THREADS threads (one TSParser each, files handed out in list order), and
 * for each prints
 *
 *   threads=N files=F bytes=B errors=E cpu_ms=C wall_ms=W
 *
 * where cpu_ms is the process's user+sys time spent in that pass (reading the
 * files is not counted) and errors the files whose tree has an error node.
 * Built by bench/index.sh against the build directory's libgrammars.a:
 *
 *   cc -O2 -o tsparse bench/tsparse.c BUILD/libgrammars.a -ltree-sitter -pthread
 *   cc -O2 -DTSPARSE_JS -o tsparse bench/tsparse.c BUILD/libgrammars.a -ltree-sitter -pthread
 *
 * usage: tsparse LIST [THREADS]   (THREADS default 2; 1 runs a single pass)
 *
 * malloc is set up as drqa-tui's main sets it (no fastbins: src/main.c), so
 * that the floor is tree-sitter's at its fastest here, not slower than the
 * index's own parsing.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);
/* -DTSPARSE_JS when the libgrammars.a linked has JavaScript */
#ifdef TSPARSE_JS
const TSLanguage *tree_sitter_javascript(void);
static const TSLanguage *(*const js_grammar)(void) = tree_sitter_javascript;
#else
static const TSLanguage *(*const js_grammar)(void) = NULL;
#endif

struct file {
    char *text;
    size_t len;
    int js;   /* parsed with the JavaScript grammar, else the Python one */
};

static struct file *files;
static size_t nfiles;
static atomic_size_t next;
static atomic_size_t nerrors;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    for (;;) {
        if (n == cap && !(p = realloc(p, cap *= 2))) abort();
        size_t r = fread(p + n, 1, cap - n, f);
        if (!r) break;
        n += r;
    }
    fclose(f);
    *len = n;
    return p;
}

static void *parse_some(void *arg)
{
    (void)arg;
    TSParser *parser = ts_parser_new();
    int cur = -1;
    for (;;) {
        size_t i = atomic_fetch_add(&next, 1);
        if (i >= nfiles) break;
        if (files[i].js != cur) {
            cur = files[i].js;
            if (!ts_parser_set_language(parser, cur ? js_grammar() : tree_sitter_python())) {
                fprintf(stderr, "tsparse: the grammar's ABI does not match libtree-sitter\n");
                exit(2);
            }
        }
        TSTree *t = ts_parser_parse_string(parser, NULL, files[i].text, (uint32_t)files[i].len);
        if (!t) continue;
        if (ts_node_has_error(ts_tree_root_node(t))) atomic_fetch_add(&nerrors, 1);
        ts_tree_delete(t);
    }
    ts_parser_delete(parser);
    return NULL;
}

static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void pass(int threads)
{
    pthread_t tid[64];
    size_t bytes = 0;
    for (size_t i = 0; i < nfiles; i++) bytes += files[i].len;
    atomic_store(&next, 0);
    atomic_store(&nerrors, 0);
    double c0 = cpu_ms(), w0 = wall_ms();
    if (threads == 1) {
        parse_some(NULL);
    } else {
        for (int t = 0; t < threads; t++)
            if (pthread_create(&tid[t], NULL, parse_some, NULL)) {
                perror("tsparse: pthread_create");
                exit(2);
            }
        for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    }
    double c1 = cpu_ms(), w1 = wall_ms();
    printf("threads=%d files=%zu bytes=%zu errors=%zu cpu_ms=%.0f wall_ms=%.0f\n", threads, nfiles, bytes,
           (size_t)atomic_load(&nerrors), c1 - c0, w1 - w0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    mallopt(M_MXFAST, 0);
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: tsparse LIST [THREADS]\n");
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    FILE *list = fopen(argv[1], "r");
    if (!list) {
        perror(argv[1]);
        return 2;
    }
    size_t cap = 0;
    char line[4096];
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\n")] = 0;
        if (!*line) continue;
        if (nfiles == cap && !(files = realloc(files, (cap = cap ? 2 * cap : 1024) * sizeof *files))) abort();
        char *path = strchr(line, ' ');
        if (!path) {
            fprintf(stderr, "tsparse: '%s' is not 'LANGUAGE PATH'\n", line);
            return 2;
        }
        *path++ = 0;
        files[nfiles].js = strcmp(line, "javascript") == 0;
        if ((files[nfiles].js && !js_grammar) || (!files[nfiles].js && strcmp(line, "python") != 0)) {
            fprintf(stderr, "tsparse: %s: no %s grammar in this build of tsparse\n", path, line);
            return 2;
        }
        files[nfiles].text = slurp(path, &files[nfiles].len);
        if (!files[nfiles].text) {
            perror(path);
            return 2;
        }
        nfiles++;
    }
    fclose(list);
    pass(1);
    if (threads > 1) pass(threads);
    for (size_t i = 0; i < nfiles; i++) free(files[i].text);
    free(files);
    return 0;
}
