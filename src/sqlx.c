/*
 * sqlx: shared sqlite idioms (sqlx.h).
 */
#include "sqlx.h"
#include "util.h"

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
