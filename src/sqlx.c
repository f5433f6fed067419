/*
 * sqlx: shared sqlite idioms (sqlx.h).
 */
#include "sqlx.h"
#include "util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

char *sqlx_col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? xstrdup((const char *)t) : NULL;
}

char *sqlx_col_dup_nonempty(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t && *t ? xstrdup((const char *)t) : NULL;
}

long long sqlx_data_version(sqlite3 *db)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

static atomic_int writer_wait_ms = 5000;

void sqlx_writer_wait(int ms) { atomic_store(&writer_wait_ms, ms); }

sqlite3 *sqlx_writer_open(sqlite3 *db)
{
    if (!sqlite3_db_readonly(db, "main")) return db;
    const char *fn = sqlite3_db_filename(db, "main");
    sqlite3 *w = NULL;
    if (!fn || !*fn || sqlite3_open_v2(fn, &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        sqlite3_close(w);
        return NULL;
    }
    sqlite3_busy_timeout(w, atomic_load(&writer_wait_ms));
    return w;
}

void sqlx_writer_close(sqlite3 *db, sqlite3 *w)
{
    if (!w || w == db) return;
    /* The reader db keeps the file open, so closing w is not closing its last
     * connection, and nothing would copy what w wrote (the derived data of a
     * large tree: 300 MB) from the WAL into the database: the next process
     * would pay for it. Copy it now, without waiting: a reader still inside
     * a transaction leaves the rest to the automatic checkpoints. */
    sqlite3_busy_timeout(w, 0);
    sqlite3_wal_checkpoint_v2(w, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_close(w);
}

void sqlx_close(sqlite3 *db)
{
    if (!db) return;
    const char *fn = sqlite3_db_filename(db, "main");
    char *path = NULL;
    if (sqlite3_db_readonly(db, "main") == 1 && fn && *fn) {
        char *wal = xasprintf("%s-wal", fn);
        if (access(wal, F_OK) == 0) path = xstrdup(fn);
        free(wal);
    }
    sqlite3_close(db);
    if (!path) return;
    /* no CREATE: a file gone meanwhile is not made again */
    sqlite3 *w = NULL;
    if (sqlite3_open_v2(path, &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
        /* a read opens the WAL; closing the last connection then checkpoints
         * it and removes both files (another connection makes this a no-op) */
        sqlite3_exec(w, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    }
    sqlite3_close(w);
    free(path);
}
