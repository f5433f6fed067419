/*
 * store: opening the per-repository sqlite index, its schema and version check.
 * Writing rows is the indexer's job (index.c) and reading them the actions';
 * this file only owns the shape of the database. WAL mode lets readers (the
 * search worker, the UI) see the last committed index while an update runs,
 * and an interrupted update leaves that committed state intact.
 */
#include "store.h"
#include "store_rows.h"
#include "store_text.h"
#include "tok.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A chunk's text, of chunk_spans c and its file's row f (NULL when there
 * is none): its head and span, or its made-up text unpacked against its span
 * and checked against its hash (store_text.h) */
#define CHUNK_SPAN_SQL \
    "coalesce(drqa_cached_span(f.id, f.hash, c.off, c.len), drqa_load_span(f.id, f.hash, f.ztext, f.tlen, c.off, c.len))"
#define CHUNK_HEAD_SQL \
    "CASE typeof(c.head) WHEN 'integer' THEN coalesce(drqa_cached_span(f.id, f.hash, c.head >> 16, c.head & 65535), " \
    "drqa_load_span(f.id, f.hash, f.ztext, f.tlen, c.head >> 16, c.head & 65535)) || char(10) " \
    "ELSE coalesce(c.head, '') END"
#define CHUNK_TEXT_SQL \
    "CASE WHEN c.text IS NULL THEN " CHUNK_HEAD_SQL " || " CHUNK_SPAN_SQL "\n" \
    "      ELSE drqa_outline(c.text, " CHUNK_SPAN_SQL ", c.hash) END"

static const char STORE_SCHEMA[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE files(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  path TEXT NOT NULL UNIQUE,\n"      /* relative, '/'-separated */
    "  lang TEXT NOT NULL,\n"             /* 'python', ... */
    "  size INTEGER NOT NULL,\n"
    "  mtime_ns INTEGER NOT NULL,\n"
    /* with ino: an edit that restores size and mtime still moves these (as in git's index) */
    "  ctime_ns INTEGER NOT NULL DEFAULT 0,\n"
    "  ino INTEGER NOT NULL DEFAULT 0,\n"
    "  hash TEXT NOT NULL,\n"             /* hash64 hex of the raw bytes */
    "  nlines INTEGER NOT NULL,\n"
    "  module TEXT,\n"                    /* dotted module name ('pkg.sub.mod') */
    "  parse_errors INTEGER NOT NULL DEFAULT 0,\n" /* ERROR/MISSING nodes */
    "  decode_errors INTEGER NOT NULL DEFAULT 0,\n" /* invalid UTF-8 sequences replaced */
    /* the decoded content, compressed (ztext.h); read through store_text.h's functions */
    "  ztext BLOB NOT NULL,\n"
    "  tlen INTEGER NOT NULL\n"           /* the decoded content's length in bytes */
    ");\n"
    "CREATE INDEX files_module ON files(module);\n"
    /* covers the indexer's (path, size, mtime, ctime, inode) comparison, so
     * that an update finding nothing to do never reads the rows holding the texts */
    "CREATE INDEX files_stat ON files(path, size, mtime_ns, ctime_ns, ino, hash);\n"
    "CREATE TABLE skipped(path TEXT PRIMARY KEY, reason TEXT NOT NULL, size INTEGER);\n"
    /* Directory listings kept by the walk (index_scan.h, struct scan_dir), so that an
     * update does not read directories that have not changed. path is a BLOB:
     * a directory name need not be UTF-8. mtime_ns -1: read again next time. */
    "CREATE TABLE dirs(\n"
    "  path BLOB PRIMARY KEY,\n"          /* relative, '' for the root */
    "  dev INTEGER NOT NULL,\n"
    "  ino INTEGER NOT NULL,\n"
    "  mtime_ns INTEGER NOT NULL,\n"
    "  ctime_ns INTEGER NOT NULL,\n"
    "  entries BLOB NOT NULL\n"           /* what the walk uses of the listing */
    ") WITHOUT ROWID;\n"
    "CREATE TABLE symbols(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  file_id INTEGER NOT NULL,\n"
    "  parent_id INTEGER,\n"              /* enclosing class/function, NULL at module level */
    /* kind, qualname and signature are given by the stored forms (the
     * columns ending in _s: store_rows.h) */
    "  kind_s INTEGER NOT NULL,\n"
    "  kind TEXT GENERATED ALWAYS AS (" STORE_SYM_KIND_SQL ") VIRTUAL,\n" /* class | function | method | variable */
    "  name TEXT NOT NULL,\n"             /* 'run' */
    "  qualname_s TEXT,\n"
    "  qualname TEXT GENERATED ALWAYS AS (" STORE_PREFIX_SQL("qualname_s", "name", "name") ") VIRTUAL,\n"
                                          /* 'Flask.run', 'outer.inner' */
    "  start_line INTEGER NOT NULL,\n"    /* includes decorators */
    "  end_line INTEGER NOT NULL,\n"
    "  body_line INTEGER,\n"              /* line of the 'def'/'class' keyword */
    "  signature_s TEXT,\n"
    "  signature TEXT GENERATED ALWAYS AS (" STORE_SIG_SQL ") VIRTUAL,\n"
                                          /* 'def run(self, host=None)' / 'class Flask(App)' */
    "  decorators TEXT,\n"                /* newline-separated, without '@' */
    "  docstring,\n"                      /* TEXT, or a BLOB packed: read it through drqa_doc() */
    "  bases TEXT,\n"                     /* classes: base expressions, comma-separated */
    "  is_async INTEGER NOT NULL DEFAULT 0\n"
    ");\n"
    /* by name (the lookups) and by file; a qualified name is only ever
     * matched within one file (act_view.c), which symbols_file finds */
    "CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE);\n"
    "CREATE INDEX symbols_file ON symbols(file_id, start_line);\n"
    "CREATE TABLE imports(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  file_id INTEGER NOT NULL,\n"
    "  line INTEGER NOT NULL,\n"
    "  module TEXT NOT NULL,\n"           /* as written, without leading dots; '' for 'from . import x' */
    "  name TEXT,\n"                      /* 'from m import name'; NULL for 'import m'; '*' */
    "  alias TEXT,\n"
    "  level INTEGER NOT NULL DEFAULT 0,\n" /* leading dots of a relative import */
    "  resolved_file_id INTEGER\n"        /* repo file it names, NULL when external */
    ");\n"
    "CREATE INDEX imports_file ON imports(file_id);\n"
    "CREATE INDEX imports_resolved ON imports(resolved_file_id);\n"
    "CREATE TABLE edges(\n"
    "  id INTEGER PRIMARY KEY,\n"
    /* Only calls and inherits: what contains a symbol is its parent_id, what
     * a file imports is in imports (the summary counts both as edges). An
     * integer kind and no target where it is its own last component keep
     * the rows small: they are a caller and callee each, at its first call
     * site, with how many sites (parse_merge_calls). */
    "  kind INTEGER NOT NULL,\n"          /* INDEX_EDGE_CALLS 0 | INDEX_EDGE_INHERITS 1 */
    "  src_file INTEGER NOT NULL,\n"
    "  src_id INTEGER,\n"                 /* source symbol; NULL = module level */
    "  line INTEGER,\n"
    "  target_s TEXT,\n"                  /* store_rows.h */
    "  target_name TEXT NOT NULL,\n"      /* last dotted component of the target */
    /* as written (callee, base expression); NULL where it is target_name */
    "  target TEXT GENERATED ALWAYS AS (" STORE_PREFIX_SQL("target_s", "target_name", "NULL") ") VIRTUAL,\n"
    "  dst_id INTEGER,\n"                 /* resolved symbol, NULL when unresolved */
    "  dst_file INTEGER,\n"               /* resolved file */
    "  n INTEGER\n"                       /* call sites of the caller's callee it stands for; NULL = 1 */
    ");\n"
    /* Edges are most of the index's rows (a call site each), so they carry
     * only the indexes a reader uses: a resolved edge is found by its
     * destination, an unresolved one by the name it ends in (FindReferences).
     * A file's edges are inserted together, so their ids are a run, kept in
     * edge_runs: an update deletes them by id range (and src_file), with no
     * index on src_file. */
    "CREATE INDEX edges_dst ON edges(dst_id, kind) WHERE dst_id IS NOT NULL;\n"

    "CREATE INDEX edges_target ON edges(target_name, kind) WHERE dst_id IS NULL;\n"
    "CREATE TABLE edge_runs(\n"
    "  file_id INTEGER PRIMARY KEY,\n"     /* the source file */
    "  lo INTEGER NOT NULL,\n"             /* the ids of its first and last edge rows */
    "  hi INTEGER NOT NULL\n"
    ");\n"
    /* A chunk's text is mostly a span of its file's text: it is kept as that
     * span (off, len: bytes of the file's text, after head: a method's class
     * header line). A text that is made up (a class outline) is kept in text,
     * packed against the span it is made of (ztext.h's ztext_ref_pack: its
     * lines cost a few bytes each). Read chunks through the view below, which
     * puts the text together (CHUNK_TEXT_SQL); write chunk_spans. */
    "CREATE TABLE chunk_spans(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  file_id INTEGER NOT NULL,\n"
    "  symbol_id INTEGER,\n"              /* function/class chunk; NULL for module windows */
    "  kind_s NOT NULL,\n"                /* store_rows.h */
    "  kind TEXT GENERATED ALWAYS AS (" STORE_CHUNK_KIND_SQL ") VIRTUAL,\n" /* function | class | module | text */
    "  start_line INTEGER NOT NULL,\n"
    "  end_line INTEGER NOT NULL,\n"
    /* text before the span, NULL for none; an integer for a line of the
     * file's text and a line break: its offset times 65536 plus its length */
    "  head,\n"
    "  off INTEGER,\n"                    /* the span: byte offset in the file's text ... */
    "  len INTEGER,\n"                    /* ... and its length in bytes */
    "  text BLOB,\n"                      /* a made-up text, packed; NULL for a span */
    "  hash_s NOT NULL,\n"                /* store_rows.h */
    "  hash TEXT GENERATED ALWAYS AS (" STORE_HASH_SQL ") VIRTUAL,\n" /* of the text: the embedding cache key */
    /* the FTS name terms (chunks_fts.name) where chunks_fts_src cannot derive
     * them from the symbol and the file (index_chunk.h, name_derived) */
    "  name TEXT\n"
    ");\n"
    "CREATE INDEX chunk_spans_file ON chunk_spans(file_id);\n"
    /* the files join is left out by sqlite when no text is asked for; a
     * file's text is read once for a run of its chunks (drqa_load_span
     * keeps it, drqa_cached_span gives spans of a kept text without reading
     * the file's row: store_text.h) */
    "CREATE VIEW chunks(id, file_id, symbol_id, kind, start_line, end_line, text, hash) AS\n"
    "  SELECT c.id, c.file_id, c.symbol_id, c.kind, c.start_line, c.end_line,\n"
    "    " CHUNK_TEXT_SQL ",\n"
    "    c.hash\n"
    "  FROM chunk_spans c LEFT JOIN files f ON f.id = c.file_id;\n"
    /* Pre-tokenised with tok_terms(): name = qualified name terms, doc = docstring
     * terms, body = code terms, path = path terms. rowid = chunks.id (chunk_spans.id).
     * The table keeps only its index: what it was given is read back through
     * chunks_fts_src, which computes the same terms from the chunk, its symbol
     * and its file (drqa_terms, registered on every connection by store.c).
     * The indexer inserts the terms it computed, and deletes a chunk's row
     * before the chunk, its symbol or its file change, so that the terms read
     * back are those that were inserted. */
    "CREATE VIEW chunks_fts_src(id, name, doc, body, path) AS\n"
    /* name: stored, or the terms of 'qualname module' (a module window: of
     * the module) as index_chunk.c's name_of puts them together */
    "  SELECT c.id, coalesce(c.name, drqa_terms(CASE WHEN c.symbol_id IS NULL THEN f.module\n"
    "      ELSE s.qualname || coalesce(' ' || nullif(f.module, ''), '') END)), drqa_terms(drqa_doc(s.docstring)),\n"
    /* the text of chunks, as the view chunks puts it together */
    "    drqa_terms(" CHUNK_TEXT_SQL "),\n"
    "    drqa_terms(f.path)\n"
    "  FROM chunk_spans c JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol_id;\n"
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(name, doc, body, path, content = 'chunks_fts_src',\n"
    "  content_rowid = 'id', tokenize = 'unicode61');\n"
    "CREATE TABLE embeddings(\n"
    "  hash TEXT NOT NULL,\n"
    "  model TEXT NOT NULL,\n"            /* the remote model id (the local model's chunk vectors are in
                                          * vec_matrix, semantic.c; 'local:' rows are an earlier layout's) */
    "  dim INTEGER NOT NULL,\n"
    "  vec BLOB NOT NULL,\n"              /* dim float32, L2-normalised */
    "  PRIMARY KEY(hash, model)\n"
    ");\n"
    /* Local vectors (semantic_local.c): per-model term vectors and document
     * frequencies fitted on the chunks, and the stamp of the chunk set they were
     * fitted on (a changed index no longer matches it and is refitted). The
     * chunk vectors, quantised, are stored whole with them in vec_matrix,
     * which semantic.c creates; the term vectors, in blocks, in
     * vec_term_blocks, which semantic_local.c creates (vec_terms holds those
     * of a model of an earlier layout, a row a term, until the next fit). */
    "CREATE TABLE vec_terms(\n"
    "  model TEXT NOT NULL,\n"
    "  term TEXT NOT NULL,\n"
    "  df INTEGER NOT NULL,\n"           /* chunks containing the term */
    "  vec BLOB NOT NULL,\n"             /* float32 scale + dim int8 */
    "  PRIMARY KEY(model, term)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE vec_models(\n"
    "  model TEXT PRIMARY KEY,\n"
    "  stamp TEXT NOT NULL,\n"           /* hash of the (chunk id, hash) list fitted on */
    "  ndocs INTEGER NOT NULL,\n"
    "  dim INTEGER NOT NULL\n"
    ");\n";

/* drqa_terms(text): the code-aware terms of text (tok_terms), '' for NULL.
 * The chunker measures its strings with strlen, so the text ends at a NUL here too. */
static void terms_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    struct buf b = BUF_INIT;
    if (t) tok_terms(t, strnlen(t, (size_t)sqlite3_value_bytes(argv[0])), 0, &b);
    if (b.data) sqlite3_result_text(cx, b.data, (int)b.len, free);
    else sqlite3_result_text(cx, "", 0, SQLITE_STATIC);
}

static int register_functions(sqlite3 *db, char **msg, const sqlite3_api_routines *api)
{
    (void)msg;
    (void)api;
    int rc = sqlite3_create_function(db, "drqa_terms", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                     terms_fn, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    return store_text_register(db);   /* the readers of file texts, which the view chunks calls */
}

static void auto_register(void)
{
    /* No memory statistics (nothing reads them): each of sqlite's
     * allocations then takes no global mutex. Only before sqlite is first
     * initialized; refused (and harmless) after. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_auto_extension((void (*)(void))register_functions);
}

void store_functions_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, auto_register);
}

static void seterr(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    if (err && errlen) snprintf(err, errlen, fmt, a, b);
}

int store_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        seterr(err, errlen, "%s%s", msg ? msg : sqlite3_errmsg(db), "");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}


/* Drops every table and view, virtual tables first (their shadow tables go with
 * them), so that the file holds an empty schema again. */
static int drop_all(sqlite3 *db, char *err, size_t errlen)
{
    for (;;) {
        sqlite3_stmt *st;
        char *stmt = NULL;
        if (sqlite3_prepare_v2(db,
                "SELECT type, name FROM sqlite_master WHERE type IN ('table','view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC LIMIT 1",
                -1, &st, NULL) != SQLITE_OK)
            return store_exec(db, "SELECT no_such_column", err, errlen);
        if (sqlite3_step(st) == SQLITE_ROW)
            stmt = xasprintf("DROP %s \"%s\"",
                             strcmp((const char *)sqlite3_column_text(st, 0), "view") ? "TABLE" : "VIEW",
                             (const char *)sqlite3_column_text(st, 1));
        sqlite3_finalize(st);
        if (!stmt) return 0;
        int r = store_exec(db, stmt, err, errlen);
        free(stmt);
        if (r) return r;
    }
}

static int pragma_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

static int table_count(sqlite3 *db) { return pragma_int(db, "SELECT count(*) FROM sqlite_master"); }

/* 1 when db is one of the project's indexes: it carries the marker, or it is
 * an index written before the marker (meta, files and chunks tables, and meta
 * naming the version that wrote it). 0 otherwise, -1 when unreadable. */
static int is_ours(sqlite3 *db)
{
    int app = pragma_int(db, "PRAGMA application_id");
    if (app < 0) return -1;
    if ((unsigned)app == STORE_APPLICATION_ID) return 1;
    if (app != 0) return 0;
    int tables = pragma_int(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') "
                                "AND name IN ('meta', 'files', 'chunks')");
    if (tables < 0) return -1;
    if (tables != 3) return 0;
    return pragma_int(db, "SELECT count(*) FROM meta WHERE key = 'drqa_version'") > 0;
}

static const char *file_type_name(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISLNK(m)) return "a symbolic link";
    return "not a regular file";
}

/* "file:PATH?immutable=1" with PATH percent-encoded (a name may hold '?',
 * '#' or '%'), for sqlite3_open_v2 with SQLITE_OPEN_URI. Caller frees. */
static char *store_immutable_uri(const char *path)
{
    struct buf b = BUF_INIT;
    buf_adds(&b, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("/._-~", *p)) buf_addc(&b, (char)*p);
        else buf_printf(&b, "%%%02X", *p);
    }
    buf_adds(&b, "?immutable=1");
    return buf_take(&b);
}

#define STORE_REFUSE_HINT "it is left untouched; pass --index with the path of a drqa-tui index or of a new file"

enum store_kind store_classify(const char *path, int *version, char *err, size_t errlen)
{
    if (version) *version = -1;
    store_functions_init();
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return STORE_ABSENT;   /* the directory is the caller's to make */
        if (err && errlen) snprintf(err, errlen, "cannot inspect the index '%s': %s", path, strerror(errno));
        return STORE_FOREIGN;
    }
    if (!S_ISREG(st.st_mode)) {
        /* a rename over it would replace the node itself (a device, a FIFO, a link) */
        if (err && errlen) snprintf(err, errlen, "the index path '%s' is %s, not an index file; " STORE_REFUSE_HINT,
                                    path, file_type_name(st.st_mode));
        return STORE_FOREIGN;
    }
    if (st.st_size == 0) return STORE_ABSENT;
    unsigned char h[100];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof h);
    int rerr = errno;
    if (fd >= 0) close(fd);
    if (n < 0) {
        if (err && errlen) snprintf(err, errlen, "cannot read the index '%s': %s", path, strerror(rerr));
        return STORE_FOREIGN;
    }
    if (n < (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0) {
        if (err && errlen) snprintf(err, errlen, "'%s' is not an sqlite database, so not a drqa-tui index; " STORE_REFUSE_HINT,
                                    path);
        return STORE_FOREIGN;
    }
    unsigned app = (unsigned)h[68] << 24 | (unsigned)h[69] << 16 | (unsigned)h[70] << 8 | h[71];
    if (app != 0 && app != STORE_APPLICATION_ID) {   /* the header names another program: not opened at all */
        if (err && errlen)
            snprintf(err, errlen, "'%s' is an sqlite database of another application, not a drqa-tui index; " STORE_REFUSE_HINT,
                     path);
        return STORE_FOREIGN;
    }
    sqlite3 *db = NULL;
    int ours = -1;
    /* Opening a WAL-mode file, even read-only, creates -wal and -shm beside
     * it, which a refusal would leave behind. Without a -wal file the main
     * file holds every committed page, so it is read as immutable: no lock,
     * no file created. With one, the -wal holds pages to read, and it and
     * its -shm are already there. */
    char *wal = xasprintf("%s-wal", path);
    int has_wal = access(wal, F_OK) == 0;
    free(wal);
    char *uri = has_wal ? NULL : store_immutable_uri(path);
    if (sqlite3_open_v2(uri ? uri : path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0),
                        NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 5000);
        ours = is_ours(db);
        if (ours == 1 && version) *version = pragma_int(db, "PRAGMA user_version");
    }
    char why[256];
    snprintf(why, sizeof why, "%s", db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    free(uri);
    if (ours == 1) return STORE_OURS;
    if (app == STORE_APPLICATION_ID) return STORE_DAMAGED;
    if (err && errlen) {
        if (ours == 0)
            snprintf(err, errlen, "'%s' is an sqlite database of another application, not a drqa-tui index; " STORE_REFUSE_HINT,
                     path);
        else
            snprintf(err, errlen, "cannot tell whether '%s' is a drqa-tui index (%s); " STORE_REFUSE_HINT, path, why);
    }
    return STORE_FOREIGN;
}

int store_quick_check(const char *path, char *detail, size_t detaillen)
{
    sqlite3 *db = NULL;
    int sound = 0;
    if (detail && detaillen) *detail = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 5000);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) == SQLITE_OK) {
            int rc = sqlite3_step(st);
            const char *msg = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
            sound = msg && strcmp(msg, "ok") == 0;
            if (!sound && detail && detaillen) snprintf(detail, detaillen, "%s", msg ? msg : sqlite3_errmsg(db));
            sqlite3_finalize(st);
            /* an index of another schema has no texts to read here: it is rebuilt anyway */
            if (sound && pragma_int(db, "PRAGMA user_version") == STORE_SCHEMA_VERSION)
                sound = store_text_check_all(db, detail, detaillen);
        } else if (detail && detaillen) {
            snprintf(detail, detaillen, "%s", sqlite3_errmsg(db));
        }
    } else if (detail && detaillen) {
        snprintf(detail, detaillen, "%s", db ? sqlite3_errmsg(db) : "out of memory");
    }
    sqlite3_close(db);
    for (char *p = detail; p && *p; p++)   /* one line on stderr */
        if (*p == '\n') *p = ' ';
    return sound;
}

int store_open(const char *path, int readonly, sqlite3 **out, int *rebuilt, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    *out = NULL;
    if (rebuilt) *rebuilt = 0;
    int flags = readonly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    flags |= SQLITE_OPEN_NOMUTEX;
    store_functions_init();
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        seterr(err, errlen, "cannot open index '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 5000);
    sqlite3_extended_result_codes(db, 1);
    int v = pragma_int(db, "PRAGMA user_version");
    if (v < 0) {
        seterr(err, errlen, "'%s' is not a readable sqlite database: %s", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    int ours = v == 0 && table_count(db) == 0 ? 1 : is_ours(db);
    if (ours != 1) {
        seterr(err, errlen, ours < 0 ? "cannot read the index '%s': %s" :
               "'%s' is an sqlite database of another application, not a drqa-tui index%s; it is left untouched",
               path, ours < 0 ? sqlite3_errmsg(db) : "");
        sqlite3_close(db);
        return -1;
    }
    if (readonly) {
        if (v != STORE_SCHEMA_VERSION) {
            seterr(err, errlen, "index '%s' has schema version %s; run drqa-tui --index-only on the repository to rebuild it",
                   path, v == 0 ? "0 (empty)" : "of another drqa-tui version");
            sqlite3_close(db);
            return -1;
        }
        *out = db;
        return 0;
    }
    char e2[512];
    /* 4 KiB pages for a new file (an existing one keeps its own). Larger
     * pages made no measurable difference to the cold build (django, 5 runs
     * each of 4, 8, 16 and 32 KiB: medians within 10 ms of 900), but every
     * table and index of the schema takes at least one page and the last
     * page of each is part empty: 32 KiB pages made django's index 0.8 MB
     * (5%) larger. */
    if (store_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                       "PRAGMA foreign_keys=OFF;", e2, sizeof e2)) {
        seterr(err, errlen, "cannot use index '%s': %s", path, e2);
        sqlite3_close(db);
        return -1;
    }
    if (v != STORE_SCHEMA_VERSION) {
        char ver[96];
        snprintf(ver, sizeof ver, "PRAGMA user_version=%d; PRAGMA application_id=%d;", STORE_SCHEMA_VERSION,
                 (int)STORE_APPLICATION_ID);
        int fresh = table_count(db) == 0;
        if (store_exec(db, "BEGIN IMMEDIATE", e2, sizeof e2) ||
            (!fresh && drop_all(db, e2, sizeof e2)) ||
            store_exec(db, STORE_SCHEMA, e2, sizeof e2) ||
            store_exec(db, ver, e2, sizeof e2) ||
            store_exec(db, "COMMIT", e2, sizeof e2)) {
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            seterr(err, errlen, "cannot create the schema in index '%s': %s", path, e2);
            sqlite3_close(db);
            return -1;
        }
        if (rebuilt) *rebuilt = 1;
    }
    *out = db;
    return 0;
}

char *store_default_path(const char *repo_abs)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *dir;
    if (xdg && *xdg == '/') dir = xasprintf("%s/drqa-tui", xdg);
    else dir = xasprintf("%s/.cache/drqa-tui", home && *home ? home : "/tmp");
    char *copy = xstrdup(repo_abs);
    const char *base = basename(copy);
    char hex[17];
    hash64_hex(hash64(repo_abs, strlen(repo_abs)), hex);
    char *p = xasprintf("%s/%s-%.12s.sqlite", dir, *base && strcmp(base, "/") ? base : "root", hex);
    free(copy);
    free(dir);
    return p;
}

static int mkdir_p(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int r = mkdir(path, 0700);
        *p = '/';
        if (r && errno != EEXIST) return -1;
    }
    if (mkdir(path, 0700) && errno != EEXIST) return -1;
    return 0;
}

int store_mkdir_for(const char *path, char *err, size_t errlen)
{
    char *copy = xstrdup(path);
    char *dir = dirname(copy);
    int r = 0;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        char *d = xstrdup(dir);
        if (mkdir_p(d)) {
            seterr(err, errlen, "cannot create the index directory '%s': %s (pass --index PATH to put the index elsewhere)",
                   dir, strerror(errno));
            r = -1;
        }
        free(d);
    }
    if (!r && access(dir, W_OK) != 0) {
        seterr(err, errlen, "the index directory '%s' is not writable: %s (pass --index PATH to put the index elsewhere)",
               dir, strerror(errno));
        r = -1;
    }
    free(copy);
    return r;
}

int store_meta_set(sqlite3 *db, const char *key, const char *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    int r = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return r;
}

char *store_meta_get(sqlite3 *db, const char *key)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        v = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}
