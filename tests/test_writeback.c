/*
 * test_writeback: the thread that has a file's dirty pages written back
 * while the file is written (src/writeback.h). It starts writeback of a
 * file being written, stops when told, and stops by itself, harmlessly, on
 * a descriptor that is no file. How much it saves is bench/index.sh's
 * business (the first answer on sympy), not a test's.
 */
#include "tap.h"
#include "harness.h"
#include "util.h"
#include "writeback.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs writeback on fd while writing to it (when write_fd >= 0), for a few
 * periods; tries again (up to 20 times) while the thread got no turn, as
 * on a loaded machine. Returns what writeback_stop returned. */
static int run_once(int fd, int write_fd)
{
    static char block[1 << 16];
    memset(block, 'x', sizeof block);
    int passes = 0;
    for (int attempt = 0; attempt < 20 && passes == 0; attempt++) {
        struct writeback *w = writeback_start(fd);
        if (!w) return 0;
        for (int i = 0; i < 30; i++) {
            if (write_fd >= 0 && write(write_fd, block, sizeof block) != (ssize_t)sizeof block) break;
            usleep(10000);
        }
        passes = writeback_stop(w);
    }
    return passes;
}

int main(void)
{
    char path[256];
    int fd = temp_file(path, sizeof path, "writeback");
    ok(fd >= 0, "a scratch file");
    if (fd < 0) return done_testing();
    unlink(path);
    int passes = run_once(fd, fd);
    ok(passes > 0, "writeback is started again and again while the file is written (%d times)", passes);
    ok(lseek(fd, 0, SEEK_END) > 0 && fsync(fd) == 0, "the file is still written and synced as usual");
    close(fd);

    int p[2];
    ok(pipe(p) == 0, "a pipe");
    is_int(run_once(p[0], -1), -1, "on a pipe the call fails and the thread stops by itself");
    close(p[0]);
    close(p[1]);

    is_int(writeback_stop(NULL), 0, "stopping none does nothing");
    return done_testing();
}
