/*
 * index_edges: what the writer (index_write.c) and the resolver
 * (index_resolve.c) share of the edges: the kinds' names and the runs of a
 * file's edge ids (edge_runs).
 */
#include "index_int.h"
#include "index_chunk.h"
#include "parse.h"
#include "sigclean.h"
#include "sqlx.h"
#include "index_scan.h"
#include "store.h"
#include "store_rows.h"
#include "store_text.h"
#include "util.h"
#include "ztext.h"
#include <config.h>  /* autoconf: PACKAGE_VERSION */

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const index_edge_kind_names[INDEX_EDGE_KINDS] = {"calls", "inherits", "imports", "contains"};

int index_edge_run_note(struct index_edge_run *r, sqlite3_stmt *upd, long long file, long long id)
{
    if (r->file == file && id == r->hi + 1) {
        r->hi = id;
        return 0;
    }
    if (index_edge_run_end(r, upd)) return -1;
    r->file = file;
    r->lo = r->hi = id;
    return 0;
}

int index_edge_run_end(struct index_edge_run *r, sqlite3_stmt *upd)
{
    if (!r->file) return 0;
    sqlite3_bind_int64(upd, 1, r->file);
    sqlite3_bind_int64(upd, 2, r->lo);
    sqlite3_bind_int64(upd, 3, r->hi);
    int rc = sqlite3_step(upd);
    sqlite3_reset(upd);
    r->file = 0;
    return rc == SQLITE_DONE ? 0 : -1;
}
