/*
 * cli_out: the JSONL files the headless modes append to (--batch answers,
 * --judge scores), one whole line per write, so that a run stopped part way
 * resumes from what the file holds (see cli.h).
 */
#include "cli.h"
#include "util.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_open_jsonl_out(const char *path, size_t max, const char *again, char **text, char *err, size_t errlen)
{
    *text = NULL;
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the output file '%s': %s; give a writable path", path, strerror(errno));
        return -1;
    }
    size_t len = 0;
    char *t = read_fd(fd, max, &len);
    if (!t) {
        snprintf(err, errlen, "cannot read the output file '%s' to resume: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (len && t[len - 1] != '\n') {
        char *nl = strrchr(t, '\n');
        size_t keep = nl ? (size_t)(nl - t) + 1 : 0;
        cJSON *j = cJSON_Parse(t + keep);
        int whole = cJSON_IsObject(j) && cJSON_GetObjectItemCaseSensitive(j, "id");
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
                    "%s again\n", path, len - keep, again);
            t[keep] = 0;
        }
    }
    *text = t;
    return fd;
}
