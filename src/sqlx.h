/*
 * sqlx: the sqlite idioms several modules share, so each is written once.
 */
#ifndef DRQA_SQLX_H
#define DRQA_SQLX_H

#include <sqlite3.h>

/* Column i of the current row as a malloc'd string (caller frees); NULL for
 * SQL NULL. */
char *sqlx_col_dup(sqlite3_stmt *st, int i);
/* The same, NULL also for the empty string (a column where '' means "none"). */
char *sqlx_col_dup_nonempty(sqlite3_stmt *st, int i);

/* PRAGMA data_version of db: it changes when another connection commits to
 * the database (with sqlite3_total_changes for this connection's own
 * writes, the stamp a cache of index rows is checked against); -1 when it
 * cannot be read. */
long long sqlx_data_version(sqlite3 *db);

/* A connection that may write the database db reads: db itself, or for a
 * read-only handle a second read-write connection to the same file (with a
 * busy timeout), for the caches derived from the index that are worth
 * keeping for the next process. NULL when the file cannot be written. Close
 * it with sqlx_writer_close(db, w). */
sqlite3 *sqlx_writer_open(sqlite3 *db);
void sqlx_writer_close(sqlite3 *db, sqlite3 *w);

/* Closes an index connection (NULL is fine). sqlite removes the -wal and
 * -shm files when the last connection to a WAL database closes, but only a
 * connection that may write can do so: when db is read-only and a -wal file
 * is there, a read-write connection to the same file is opened and closed
 * after it, so that a clean exit leaves no side files. Another connection
 * still open (in this process or another) keeps them: sqlite deletes them
 * only when it closes the last connection, so no reader is disturbed. */
void sqlx_close(sqlite3 *db);

/* How long a writer from sqlx_writer_open waits for another connection's
 * write lock, in ms (5000 until set). Set to 0 while another process is
 * known to be updating the index (index_stats.busy): the derived tables
 * (vectors, line postings) are then kept in memory at once instead of each
 * waiting out the timeout. */
void sqlx_writer_wait(int ms);

#endif
