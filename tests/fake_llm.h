/*
 * fake_llm.h: starts and stops tests/fake_llm.py (the scripted loopback model
 * server) from a C test and reads the requests it recorded. The script text is
 * written to a fresh temp directory with the log and port files; fake_start
 * waits (bounded) for the port; fake_stop kills that one child by pid.
 * Include once per test program, after tap.h.
 */
#ifndef DRQA_FAKE_LLM_H
#define DRQA_FAKE_LLM_H

#include "harness.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fake {
    pid_t pid;
    int port;
    char dir[256];
    char log[128];
    char base[64];        /* http://127.0.0.1:PORT */
};

static int __attribute__((unused)) fake_start(struct fake *f, const char *script)
{
    memset(f, 0, sizeof *f);
    /* Loopback only: a proxy from the environment must not see test traffic. */
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    if (!temp_dir(f->dir, sizeof f->dir, "fake")) return -1;
    char spath[128], ppath[128];
    snprintf(spath, sizeof spath, "%s/script.json", f->dir);
    snprintf(ppath, sizeof ppath, "%s/port", f->dir);
    snprintf(f->log, sizeof f->log, "%s/requests.jsonl", f->dir);
    FILE *fp = fopen(spath, "w");
    if (!fp) return -1;
    fputs(script, fp);
    fclose(fp);
    const char *py = getenv("PYTHON3");
    if (!py || !*py) py = "python3";
    const char *top = getenv("top_srcdir");
    char server[512];
    snprintf(server, sizeof server, "%s/tests/fake_llm.py", top && *top ? top : DRQA_SRCDIR);
    f->pid = fork();
    if (f->pid < 0) return -1;
    if (f->pid == 0) {
        if (!freopen("/dev/null", "w", stdout)) _exit(127);
        execlp(py, py, server, "--script", spath, "--log", f->log, "--port-file", ppath, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 400; i++) {   /* up to 20 s for python to start */
        FILE *pf = fopen(ppath, "r");
        if (pf) {
            int ok = fscanf(pf, "%d", &f->port) == 1;
            fclose(pf);
            if (ok && f->port > 0) {
                snprintf(f->base, sizeof f->base, "http://127.0.0.1:%d", f->port);
                return 0;
            }
        }
        int st;
        if (waitpid(f->pid, &st, WNOHANG) == f->pid) { f->pid = 0; return -1; }
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void __attribute__((unused)) fake_stop(struct fake *f)
{
    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        waitpid(f->pid, NULL, 0);
        f->pid = 0;
    }
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (f->dir[0] && system(cmd) != 0) fprintf(stderr, "# could not remove %s\n", f->dir);
}

/* The recorded requests as a cJSON array (caller deletes). */
static __attribute__((unused)) cJSON *fake_requests(const struct fake *f)
{
    cJSON *arr = cJSON_CreateArray();
    FILE *fp = fopen(f->log, "r");
    if (!fp) return arr;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        cJSON *j = cJSON_Parse(line);
        if (j) cJSON_AddItemToArray(arr, j);
    }
    free(line);
    fclose(fp);
    return arr;
}

/* How many recorded requests have needle in their prompt. */
static int __attribute__((unused)) fake_count(const struct fake *f, const char *needle)
{
    cJSON *arr = fake_requests(f), *r;
    int n = 0;
    cJSON_ArrayForEach(r, arr) {
        const cJSON *p = cJSON_GetObjectItem(r, "prompt");
        if (cJSON_IsString(p) && strstr(p->valuestring, needle)) n++;
    }
    cJSON_Delete(arr);
    return n;
}

/* The last recorded request whose prompt holds needle (caller deletes), or NULL. */
static __attribute__((unused)) cJSON *fake_last(const struct fake *f, const char *needle)
{
    cJSON *arr = fake_requests(f), *r, *found = NULL;
    cJSON_ArrayForEach(r, arr) {
        const cJSON *p = cJSON_GetObjectItem(r, "prompt");
        if (cJSON_IsString(p) && strstr(p->valuestring, needle)) found = r;
    }
    if (found) found = cJSON_Duplicate(found, 1);
    cJSON_Delete(arr);
    return found;
}

/* A header of a recorded request (lowercase name), or NULL. */
static __attribute__((unused)) const char *fake_header(const cJSON *req, const char *name)
{
    const cJSON *h = cJSON_GetObjectItem(cJSON_GetObjectItem(req, "headers"), name);
    return cJSON_IsString(h) ? h->valuestring : NULL;
}

/* The recorded request body parsed (caller deletes), or NULL. */
static __attribute__((unused)) cJSON *fake_body(const cJSON *req)
{
    const cJSON *b = cJSON_GetObjectItem(req, "body");
    return cJSON_IsString(b) ? cJSON_Parse(b->valuestring) : NULL;
}

/* A port on 127.0.0.1 that nothing listens on: bound, then closed. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
static int __attribute__((unused)) fake_closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || getsockname(s, (struct sockaddr *)&a, &len)) {
        if (s >= 0) close(s);
        return -1;
    }
    close(s);
    return ntohs(a.sin_port);
}

#endif
