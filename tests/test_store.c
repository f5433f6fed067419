/* Unit tests for store: schema creation, version check and rebuild, defaults. */
#include "tap.h"
#include "sqlx.h"
#include "store.h"
#include "util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

int main(void)
{
    char dir[] = "/tmp/drqa-test-store-XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    char *path = xasprintf("%s/sub/dir/index.sqlite", dir);
    char err[512];
    sqlite3 *db;
    int rebuilt;

    ok(store_open(path, 1, &db, &rebuilt, err, sizeof err) == -1, "read-only open of a missing index fails");
    ok(strstr(err, path) != NULL, "the error names the path: %s", err);
    is_int(store_mkdir_for(path, err, sizeof err), 0, "the index directory is created");
    struct stat st;
    ok(stat(path, &st) != 0, "no file before open");
    char *d = xasprintf("%s/sub/dir", dir);
    ok(stat(d, &st) == 0 && (st.st_mode & 0777) == 0700, "index directory is owner-only");
    free(d);

    is_int(store_open(path, 0, &db, &rebuilt, err, sizeof err), 0, "create a new index");
    is_int(rebuilt, 1, "a new index reports a fresh schema");
    is_int(count(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION, "user_version is the schema version");
    is_int(store_exec(db, "INSERT INTO chunks_fts(rowid, name, doc, body, path) VALUES(1, 'get response getresponse', '', '', '')", err, sizeof err), 0, "fts5 table accepts rows");
    is_int(count(db, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'getresponse'"), 1, "fts5 finds the joined term");
    is_int(store_meta_set(db, "repo_root", "/x"), 0, "meta set");
    char *v = store_meta_get(db, "repo_root");
    is_str(v, "/x", "meta get");
    free(v);

    /* sqlx: column copies and the other-connection stamp */
    sqlite3_stmt *q;
    sqlite3_prepare_v2(db, "SELECT 'x', NULL, ''", -1, &q, NULL);
    sqlite3_step(q);
    char *c0 = sqlx_col_dup(q, 0), *c1 = sqlx_col_dup(q, 1), *c2 = sqlx_col_dup(q, 2);
    char *n2 = sqlx_col_dup_nonempty(q, 2), *n0 = sqlx_col_dup_nonempty(q, 0);
    ok(c0 && !strcmp(c0, "x") && !c1 && c2 && !*c2, "sqlx_col_dup copies text, NULL for SQL NULL, keeps ''");
    ok(!n2 && n0 && !strcmp(n0, "x"), "sqlx_col_dup_nonempty gives NULL for ''");
    free(c0); free(c2); free(n0);
    sqlite3_finalize(q);
    sqlite3 *other;
    long long dv = sqlx_data_version(db);
    ok(dv >= 0, "data_version is read");
    store_meta_set(db, "k", "1");
    is_int(sqlx_data_version(db), dv, "this connection's own commit leaves data_version as it was");
    ok(sqlite3_open(path, &other) == SQLITE_OK, "a second connection");
    sqlite3_exec(other, "INSERT INTO meta(key, value) VALUES('k2', '2')", NULL, NULL, NULL);
    sqlite3_close(other);
    ok(sqlx_data_version(db) != dv, "another connection's commit changes data_version");
    store_exec(db, "DELETE FROM meta WHERE key IN ('k', 'k2')", err, sizeof err);
    sqlite3_close(db);

    is_int(store_open(path, 0, &db, &rebuilt, err, sizeof err), 0, "reopen");
    is_int(rebuilt, 0, "same version: kept as is");
    is_int(count(db, "SELECT count(*) FROM meta"), 1, "data survives a reopen");
    store_exec(db, "PRAGMA user_version = 999", err, sizeof err);
    sqlite3_close(db);

    ok(store_open(path, 1, &db, &rebuilt, err, sizeof err) == -1, "read-only open of another version fails");
    ok(strstr(err, "--index-only") != NULL, "and says how to rebuild: %s", err);
    is_int(store_open(path, 0, &db, &rebuilt, err, sizeof err), 0, "writable open of another version");
    is_int(rebuilt, 1, "another version is rebuilt, not misread");
    is_int(count(db, "SELECT count(*) FROM meta"), 0, "the rebuilt index is empty");
    is_int(count(db, "SELECT count(*) FROM chunks_fts"), 0, "the rebuilt fts table is empty");
    sqlite3_close(db);

    char *junk = xasprintf("%s/junk.sqlite", dir);
    FILE *fp = fopen(junk, "w");
    fputs("this is not a database at all, just text that is long enough to fill a header......", fp);
    fclose(fp);
    ok(store_open(junk, 0, &db, &rebuilt, err, sizeof err) == -1, "a non-database file is refused");
    ok(strstr(err, junk) != NULL, "naming it: %s", err);

    setenv("XDG_CACHE_HOME", "/var/cache/x", 1);
    char *p1 = store_default_path("/srv/repos/flask"), *p2 = store_default_path("/home/me/flask");
    ok(str_starts(p1, "/var/cache/x/drqa-tui/flask-") && str_ends(p1, ".sqlite"), "default path under XDG_CACHE_HOME: %s", p1);
    ok(strcmp(p1, p2) != 0, "two repositories with one name get two indexes");
    free(p1); free(p2);

    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    free(cmd); free(junk); free(path);
    return done_testing();
}
