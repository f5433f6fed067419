/*
 * writeback: has the kernel write a file's dirty pages to disk while the
 * file is still being written, so that the fsync that makes it durable at
 * the end waits for little. A fresh index is built without syncing
 * (synchronous=OFF) and synced once before it is renamed into place; on
 * sympy's 100 MB index that one fsync took 70-80 ms at the end of the build,
 * on this machine's disk, all of it after the last row was written.
 *
 * A thread asks for writeback (sync_file_range, SYNC_FILE_RANGE_WRITE: start
 * it, wait for nothing) of the whole file every WRITEBACK_PERIOD_MS, on the
 * thread's time, not the writer's. Where the call is not supported it stops
 * after the first try; the final fsync then does all of it, as before.
 */
#ifndef DRQA_WRITEBACK_H
#define DRQA_WRITEBACK_H

#define WRITEBACK_PERIOD_MS 100

struct writeback;

/* Starts writing fd's dirty pages back every WRITEBACK_PERIOD_MS; NULL when
 * no thread could be started (nothing else changes). */
struct writeback *writeback_start(int fd);

/* Stops the thread (at once, not after its period) and frees w; returns how
 * many times the writeback was started, -1 when the call failed (not
 * supported, or fd not a file). w may be NULL (returns 0). */
int writeback_stop(struct writeback *w);

#endif
