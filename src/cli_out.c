/*
 * cli_out: the JSONL files the headless modes append to (--batch answers,
 * --judge scores), one whole line per write, so that a run stopped part way
 * resumes from what the file holds (see cli.h); and standard output, whose
 * every write is checked through its close.
 */
#include "cli.h"
#include "util.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* A line an interrupted run of ours cut short starts as every line we write
 * does (engine_result_json and the scores lines put the id first). */
static int ours_cut_short(const char *s, size_t n)
{
    static const char head[] = "{\"id\":";
    return n >= sizeof head - 1 && memcmp(s, head, sizeof head - 1) == 0;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

/* Every whole line of t (len bytes) must be a line of ours (line_ok); the
 * last one, when not ended, may also be the start of one. 0, or -1 with err
 * naming the file, the line and what to do; the file is not touched. */
static int check_lines(const char *path, const char *t, size_t len, const struct cli_jsonl_kind *kind, char *err,
                       size_t errlen)
{
    int lineno = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(t + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - t) : len;
        lineno++;
        const char *s = t + at;
        size_t n = end - at;
        at = end + 1;
        if (blank(s, n)) continue;
        const char *why = NULL;
        if (memchr(s, 0, n)) {
            why = "holds a NUL byte";
        } else {
            cJSON *j = cJSON_ParseWithLength(s, n);
            if (!cJSON_IsObject(j)) why = "is not a JSON object";
            else if (!kind->line_ok(j)) why = kind->not_ours;
            cJSON_Delete(j);
            if (why && !nl && ours_cut_short(s, n)) why = NULL;   /* repaired by the caller */
        }
        if (why) {
            snprintf(err, errlen, "%s:%d: not %s (the line %s), so '%s' is not a %s file left by drqa-tui (or was "
                     "changed since); nothing was written to it: give another --out, or remove or repair that line",
                     path, lineno, kind->line, why, path, kind->name);
            return -1;
        }
    }
    return 0;
}

int cli_open_jsonl_out(const char *path, size_t max, const struct cli_jsonl_kind *kind, char **text, int *regular,
                       char *err, size_t errlen)
{
    *text = NULL;
    *regular = 0;
    /* Write-only: a pipe or FIFO (--out /dev/stdout into a pipe) is never
     * opened for reading, which would wait for a writer that is this process. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the output file '%s': %s; give a writable path", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read the output file '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) return fd;   /* a pipe, a FIFO, a terminal, a device: nothing to resume */
    *regular = 1;
    /* One run at a time: two runs appending the same answers to one file
     * would each answer every question the file lacks. The lock goes with
     * the descriptor, so a killed run never leaves it held. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) {
            snprintf(err, errlen, "another drqa-tui is writing '%s'; wait for it to finish (it resumes from the "
                     "lines there), or give another --out", path);
            return CLI_OUT_BUSY;
        }
        snprintf(err, errlen, "cannot lock the output file '%s': %s", path, strerror(e));
        return -1;
    }
    /* read through a descriptor of its own: the one written is write-only */
    int rfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat rst;
    if (rfd < 0 || fstat(rfd, &rst) != 0 || rst.st_dev != st.st_dev || rst.st_ino != st.st_ino) {
        snprintf(err, errlen, "cannot read the output file '%s' to resume: %s", path,
                 rfd < 0 ? strerror(errno) : "it was replaced while being opened");
        if (rfd >= 0) close(rfd);
        close(fd);
        return -1;
    }
    size_t len = 0;
    char *t = read_fd(rfd, max, &len);
    int e = errno;
    close(rfd);
    if (!t) {
        snprintf(err, errlen, "cannot read the output file '%s' to resume: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    if (check_lines(path, t, len, kind, err, errlen)) {
        free(t);
        close(fd);
        return CLI_OUT_FOREIGN;
    }
    if (len && t[len - 1] != '\n') {
        char *nl = strrchr(t, '\n');
        size_t keep = nl ? (size_t)(nl - t) + 1 : 0;
        cJSON *j = cJSON_Parse(t + keep);
        int whole = cJSON_IsObject(j) && kind->line_ok(j);
        cJSON_Delete(j);
        if (whole ? write_all(fd, "\n", 1) : ftruncate(fd, (off_t)keep)) {
            snprintf(err, errlen, "cannot repair the last line of '%s': %s", path, strerror(errno));
            free(t);
            close(fd);
            return -1;
        }
        if (whole) {
            t = xrealloc(t, len + 2);
            memcpy(t + len, "\n", 2);
        } else {
            fprintf(stderr, "drqa-tui: %s: dropped a partial last line (%zu bytes, left by an interrupted run); its "
                    "%s again\n", path, len - keep, kind->again);
            t[keep] = 0;
        }
    }
    *text = t;
    return fd;
}

int cli_stdout_close(int rc)
{
    /* A write that failed while stdio emptied its buffer leaves only the
     * error flag; the buffered rest is written by fflush. Either way the
     * output is incomplete, and a success status would hide it. */
    int failed = ferror(stdout), e = 0;
    errno = 0;
    if (fflush(stdout) != 0) {
        failed = 1;
        e = errno;
    }
    if (fclose(stdout) != 0 && !e) {
        failed = 1;
        e = errno;
    }
    if (!failed) return rc;
    fprintf(stderr, "drqa-tui: cannot write to standard output: %s; what was printed is incomplete\n",
            e ? strerror(e) : "a write failed (a full disk, or a closed pipe?)");
    return rc == EXIT_OK ? EXIT_FAIL : rc;
}
