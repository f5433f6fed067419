/*
 * store_text: the SQL functions that read the index's compressed file
 * texts, and the texts they keep per connection (see store_text.h).
 */
#include "store_text.h"
#include "store.h"
#include "util.h"
#include "ztext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void note_damage(sqlite3_context *cx, const char *m);

/* The message of a damaged stored text: what is wrong and what to do. The
 * first one is kept for drqa_damage. */
static void damaged_what(sqlite3_context *cx, const char *what, const char *why)
{
    char *m = sqlite3_mprintf("the index holds a damaged %s (%s); run drqa-tui --index-only --check on the "
                              "repository to rebuild the index", what, why);
    if (m) {
        sqlite3_result_error(cx, m, -1);
        note_damage(cx, m);
    } else {
        sqlite3_result_error_nomem(cx);
    }
    sqlite3_free(m);
}

static void damaged(sqlite3_context *cx, const char *why)
{
    damaged_what(cx, "file text", why);
}

/* Whether tlen can be the length of a text stored in zl bytes; else why not. */
static int length_sound(sqlite3_value *n, size_t zl, char *why, size_t whylen)
{
    sqlite3_int64 tl = sqlite3_value_int64(n);
    if (sqlite3_value_type(n) != SQLITE_INTEGER) {
        snprintf(why, whylen, "its length is no integer");
        return 0;
    }
    if (tl < 0 || (sqlite3_uint64)tl > ZTEXT_MAX || !ztext_len_plausible(zl, (size_t)tl)) {
        snprintf(why, whylen, "a stream of %zu bytes cannot hold %lld bytes of text", zl, (long long)tl);
        return 0;
    }
    return 1;
}

/* The text of the stream z with length n (files.ztext, files.tlen): a
 * malloc'd copy with a NUL after it, *len its length. NULL for SQL NULL (no
 * file row: nothing reported), or NULL with the error reported on cx. */
static char *unpack_value(sqlite3_context *cx, sqlite3_value *z, sqlite3_value *n, size_t *len)
{
    *len = 0;
    if (sqlite3_value_type(z) == SQLITE_NULL) return NULL;
    const void *zb = sqlite3_value_blob(z);
    size_t zl = (size_t)sqlite3_value_bytes(z);
    char why[200];
    if (!length_sound(n, zl, why, sizeof why)) {
        damaged(cx, why);
        return NULL;
    }
    if (!zb && zl) {   /* out of memory reading the blob */
        sqlite3_result_error_nomem(cx);
        return NULL;
    }
    size_t tl = (size_t)sqlite3_value_int64(n);
    char *b = malloc(tl + 1);   /* not xmalloc: the length is the file's word until the text is read */
    if (!b) {
        sqlite3_result_error_nomem(cx);
        return NULL;
    }
    if (ztext_unpack(zb ? zb : "", zl, b, tl, why, sizeof why)) {
        free(b);
        damaged(cx, why);
        return NULL;
    }
    *len = tl;
    return b;
}

/* ---- the kept texts ---- */

struct kept {
    long long fid;
    char hash[24];
    char *text;                  /* NULL: a free slot */
    size_t len;
    unsigned long long used;     /* when last read: the least recent goes first */
};

struct keep {
    struct kept k[STORE_TEXT_KEEP];
    size_t bytes;
    unsigned long long clock;
    char *damage;                /* the first damage met on the connection, for drqa_damage */
};

static void note_damage(sqlite3_context *cx, const char *m)
{
    struct keep *c = sqlite3_user_data(cx);
    if (c && !c->damage) c->damage = xstrdup(m);
}

/* drqa_damage(): the first damage the functions met on this connection, or NULL */
static void damage_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    struct keep *c = sqlite3_user_data(cx);
    if (c && c->damage) sqlite3_result_text(cx, c->damage, -1, SQLITE_TRANSIENT);
}

/* The key of a text from the id and hash arguments; 0 when it has none. */
static int key_of(sqlite3_value *id, sqlite3_value *hash, long long *fid, const char **h)
{
    *fid = sqlite3_value_int64(id);
    *h = (const char *)sqlite3_value_text(hash);
    return sqlite3_value_type(id) == SQLITE_INTEGER && *h && strlen(*h) < sizeof ((struct kept *)0)->hash;
}

static struct kept *keep_find(struct keep *c, long long fid, const char *h)
{
    for (size_t i = 0; i < STORE_TEXT_KEEP; i++) {
        struct kept *e = &c->k[i];
        if (e->text && e->fid == fid && strcmp(e->hash, h) == 0) {
            e->used = ++c->clock;
            return e;
        }
    }
    return NULL;
}

static void keep_drop(struct keep *c, struct kept *e)
{
    c->bytes -= e->len + 1;
    free(e->text);
    e->text = NULL;
}

/* Keeps text (taken over) as the file's: another text of the same file
 * goes, then the least recently read ones while the texts would pass the
 * byte budget (the new one stays even when it alone passes it). */
static struct kept *keep_put(struct keep *c, long long fid, const char *h, char *text, size_t len)
{
    for (size_t i = 0; i < STORE_TEXT_KEEP; i++)
        if (c->k[i].text && c->k[i].fid == fid) keep_drop(c, &c->k[i]);
    for (;;) {
        struct kept *lru = NULL, *free_slot = NULL;
        for (size_t i = 0; i < STORE_TEXT_KEEP; i++) {
            struct kept *e = &c->k[i];
            if (!e->text) free_slot = free_slot ? free_slot : e;
            else if (!lru || e->used < lru->used) lru = e;
        }
        if (free_slot && (!lru || c->bytes + len + 1 <= STORE_TEXT_KEEP_BYTES)) {
            free_slot->fid = fid;
            snprintf(free_slot->hash, sizeof free_slot->hash, "%s", h);
            free_slot->text = text;
            free_slot->len = len;
            free_slot->used = ++c->clock;
            c->bytes += len + 1;
            return free_slot;
        }
        keep_drop(c, lru);
    }
}

static void keep_free(void *p)
{
    struct keep *c = p;
    for (size_t i = 0; i < STORE_TEXT_KEEP; i++) free(c->k[i].text);
    free(c->damage);
    free(c);
}

/* The file's text, kept or read now and kept: NULL for no file row or
 * with an error reported on cx. Without a key, the text is read and not
 * kept: *owned receives it for the caller to free. */
static const char *text_of(sqlite3_context *cx, sqlite3_value **key, sqlite3_value *z, sqlite3_value *n,
                           size_t *len, char **owned)
{
    struct keep *c = sqlite3_user_data(cx);
    long long fid;
    const char *h;
    int keyed = key_of(key[0], key[1], &fid, &h);
    *owned = NULL;
    struct kept *e = keyed ? keep_find(c, fid, h) : NULL;
    if (e) {
        *len = e->len;
        return e->text;
    }
    char *t = unpack_value(cx, z, n, len);
    if (!t) return NULL;
    if (!keyed) return *owned = t;
    return keep_put(c, fid, h, t, *len)->text;
}

/* ---- the functions ---- */

/* drqa_text(ztext, tlen) */
static void text_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    size_t n;
    char *t = unpack_value(cx, argv[0], argv[1], &n);
    if (t) sqlite3_result_text64(cx, t, n, free, SQLITE_UTF8);
}

/* drqa_file_text(id, hash, ztext, tlen) */
static void file_text_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    size_t n;
    char *owned;
    const char *t = text_of(cx, argv, argv[2], argv[3], &n, &owned);
    if (owned) sqlite3_result_text64(cx, owned, n, free, SQLITE_UTF8);
    else if (t) sqlite3_result_text64(cx, t, n, SQLITE_TRANSIENT, SQLITE_UTF8);
}

/* bytes [off, off + len) of text[0..n), as substr(CAST(text AS BLOB), off + 1, len) gives them */
static void result_span(sqlite3_context *cx, const char *text, size_t n, sqlite3_int64 off, sqlite3_int64 len)
{
    if (off < 0 || (size_t)off >= n || len <= 0) {
        sqlite3_result_text(cx, "", 0, SQLITE_STATIC);
        return;
    }
    size_t k = (size_t)len < n - (size_t)off ? (size_t)len : n - (size_t)off;
    sqlite3_result_text(cx, text + off, (int)k, SQLITE_TRANSIENT);
}

/* drqa_cached_span(id, hash, off, len): NULL when the file's text is not kept */
static void cached_span_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    struct keep *c = sqlite3_user_data(cx);
    long long fid;
    const char *h;
    struct kept *e = key_of(argv[0], argv[1], &fid, &h) ? keep_find(c, fid, h) : NULL;
    if (e) result_span(cx, e->text, e->len, sqlite3_value_int64(argv[2]), sqlite3_value_int64(argv[3]));
}

/* drqa_load_span(id, hash, ztext, tlen, off, len): NULL when there is no file row (ztext NULL) */
static void load_span_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    size_t n;
    char *owned;
    const char *t = text_of(cx, argv, argv[2], argv[3], &n, &owned);
    if (t) result_span(cx, t, n, sqlite3_value_int64(argv[4]), sqlite3_value_int64(argv[5]));
    free(owned);
}

/* drqa_outline(packed, ref, hash): a chunk text packed against ref (its
 * file's bytes, ztext.h's ztext_ref_pack), checked against the chunk's hash;
 * NULL when ref is (no file row) */
static void outline_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    const void *z = sqlite3_value_blob(argv[0]);
    size_t zl = (size_t)sqlite3_value_bytes(argv[0]);
    const char *ref = (const char *)sqlite3_value_text(argv[1]);
    size_t rl = (size_t)sqlite3_value_bytes(argv[1]);
    const char *hash = (const char *)sqlite3_value_text(argv[2]);
    if ((!z && zl) || (!ref && rl)) {
        sqlite3_result_error_nomem(cx);
        return;
    }
    char why[200], *t;
    size_t n;
    if (ztext_ref_unpack(z ? z : "", zl, ref ? ref : "", rl, &t, &n, why, sizeof why)) {
        damaged_what(cx, "chunk text", why);
        return;
    }
    char h[17];
    hash64_hex(hash64(t, n), h);
    if (!hash || strcmp(h, hash) != 0) {
        free(t);
        damaged_what(cx, "chunk text", "it does not read back as it was stored");
        return;
    }
    sqlite3_result_text64(cx, t, n, free, SQLITE_UTF8);
}

/* The preset dictionary docstrings are packed against (store_doc_pack):
 * words and phrasing common in docstrings of any project, so that a short
 * docstring packs too (django's 529 KB of docstrings: 378 KB packed alone,
 * 323 KB against this). Changing it changes what stored docstrings read
 * back as: it goes with STORE_SCHEMA_VERSION. */
static const char DOC_DICT[] =
    "    Parameters\n"
    "    ----------\n"
    "    Returns\n"
    "    -------\n"
    "    Raises\n"
    "    ------\n"
    "    Examples\n"
    "    --------\n"
    "    See Also\n"
    "    --------\n"
    "    Notes\n"
    "    -----\n"
    "    Args:\n"
    "    Returns:\n"
    "    Raises:\n"
    "    Yields:\n"
    "    Example::\n"
    "\n"
    "    >>> \n"
    "    :param :type :returns: :rtype: :raises \n"
    "     : str, optional\n"
    "     : int, optional\n"
    "     : bool, optional, default False\n"
    "     : bool, default True\n"
    "     : array_like\n"
    "     : list of str\n"
    "     : dict\n"
    "     (default: None)\n"
    "    If ``None``, the default is used. If True, the\n"
    "    Return a new instance of the given object.\n"
    "    Return the value of the attribute, or None if it is not set.\n"
    "    Return True if the object is an instance of the class, False otherwise.\n"
    "    Returns a list of the names of all the\n"
    "    This method is called when the\n"
    "    This function is used to\n"
    "    This is a helper for\n"
    "    Raise an exception if the\n"
    "    Set the value for the given key.\n"
    "    Get the value for the given key.\n"
    "    Create and return a new\n"
    "    Initialize the\n"
    "    Check whether the file exists and\n"
    "    The name of the module, or the path to the file.\n"
    "    A dictionary mapping names to values.\n"
    "    The number of items in the list.\n"
    "    Whether or not to\n"
    "    whether the\n"
    "    should be\n"
    "    can be used to\n"
    "    that is\n"
    "    which is\n"
    "    will be\n"
    "    when the\n"
    "    for the\n"
    "    from the\n"
    "    with the\n"
    "    of the\n"
    "    in the\n"
    "    to the\n"
    "    and the\n"
    "    is not\n"
    "    is a\n"
    "    an object\n"
    "    a string\n"
    "    a function\n"
    "    the current\n"
    "    the following\n"
    "    the specified\n"
    "    the corresponding\n"
    "    the argument\n"
    "    the result\n"
    "    the request\n"
    "    the response\n"
    "    the data\n"
    "    the default\n"
    "    the user\n"
    "    the given\n"
    "    the same\n";

unsigned char *store_doc_pack(struct ztext_packer *zp, const char *text, size_t len, size_t *zlen)
{
    size_t pl;
    unsigned char *p = ztext_dict_pack(zp, DOC_DICT, sizeof DOC_DICT - 1, text, len, &pl);
    if (pl + 4 >= len) {
        free(p);
        return NULL;
    }
    unsigned char *z = xmalloc(pl + 4);
    uLong crc = crc32_z(0L, (const Bytef *)text, len);
    for (int i = 0; i < 4; i++) z[i] = (unsigned char)(crc >> (8 * i));
    memcpy(z + 4, p, pl);
    free(p);
    *zlen = pl + 4;
    return z;
}

/* drqa_doc(docstring): symbols.docstring as written, a BLOB being packed
 * (store_doc_pack) */
static void doc_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
        sqlite3_result_value(cx, argv[0]);
        return;
    }
    const unsigned char *z = sqlite3_value_blob(argv[0]);
    size_t zl = (size_t)sqlite3_value_bytes(argv[0]);
    char why[200], *t;
    size_t n;
    if (zl < 4 || !z) {
        damaged_what(cx, "docstring", "it is cut short");
        return;
    }
    if (ztext_ref_unpack(z + 4, zl - 4, DOC_DICT, sizeof DOC_DICT - 1, &t, &n, why, sizeof why)) {
        damaged_what(cx, "docstring", why);
        return;
    }
    uLong crc = crc32_z(0L, (const Bytef *)t, n);
    if ((uLong)(z[0] | z[1] << 8 | z[2] << 16 | (uLong)z[3] << 24) != crc) {
        free(t);
        damaged_what(cx, "docstring", "it does not read back as it was stored");
        return;
    }
    sqlite3_result_text64(cx, t, n, free, SQLITE_UTF8);
}

int store_text_register(sqlite3 *db)
{
    /* one keep for the functions, owned by drqa_file_text, registered last:
     * sqlite frees it when that function goes (with the connection, or when
     * registered again, after the others are), or at once when its
     * registration fails */
    struct keep *c = xcalloc(1, sizeof *c);
    static const struct {
        const char *name;
        int nargs, flags;
        void (*fn)(sqlite3_context *, int, sqlite3_value **);
    } fns[] = {
        {"drqa_text", 2, SQLITE_DETERMINISTIC, text_fn},
        {"drqa_outline", 3, SQLITE_DETERMINISTIC, outline_fn},
        {"drqa_doc", 1, SQLITE_DETERMINISTIC, doc_fn},
        {"drqa_load_span", 6, 0, load_span_fn},
        {"drqa_cached_span", 4, 0, cached_span_fn},
        {"drqa_damage", 0, 0, damage_fn},
    };
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        int rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs, SQLITE_UTF8 | SQLITE_INNOCUOUS | fns[i].flags,
                                            c, fns[i].fn, NULL, NULL, NULL);
        if (rc != SQLITE_OK) return rc;   /* c is left to the functions that have it */
    }
    return sqlite3_create_function_v2(db, "drqa_file_text", 4, SQLITE_UTF8 | SQLITE_INNOCUOUS, c, file_text_fn, NULL,
                                      NULL, keep_free);
}

char *store_text_damage(sqlite3 *db)
{
    sqlite3_stmt *st;
    char *m = NULL;
    if (sqlite3_prepare_v2(db, "SELECT drqa_damage()", -1, &st, NULL) != SQLITE_OK) return NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT)
        m = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return m;
}

/* ---- readers in C ---- */

/* 1 when the count sql reads (a packed value through its function: the
 * view chunks, drqa_doc, which db may not have yet) is read whole, else 0
 * with sqlite's complaint (the damage the function names) in detail. */
static int packed_sound(sqlite3 *db, const char *sql, char *detail, size_t detaillen)
{
    sqlite3_stmt *st = NULL;
    int sound = store_text_register(db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW;
    if (!sound && detail && detaillen) snprintf(detail, detaillen, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return sound;
}

int store_text_check_all(sqlite3 *db, char *detail, size_t detaillen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT path, ztext, tlen FROM files", -1, &st, NULL) != SQLITE_OK) {
        if (detail && detaillen) snprintf(detail, detaillen, "%s", sqlite3_errmsg(db));
        return 0;
    }
    char *buf = NULL;
    size_t cap = 0;
    int rc, sound = 1;
    while (sound && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const void *z = sqlite3_column_blob(st, 1);
        size_t zl = (size_t)sqlite3_column_bytes(st, 1);
        char why[200];
        if (!length_sound(sqlite3_column_value(st, 2), zl, why, sizeof why)) {
            sound = 0;
        } else {
            size_t tl = (size_t)sqlite3_column_int64(st, 2);
            if (cap < tl + 1) {
                free(buf);
                cap = tl + 1;
                buf = malloc(cap);
            }
            if (!buf) {
                snprintf(why, sizeof why, "no memory for its %zu bytes", tl);
                cap = 0;
                sound = 0;
            } else {
                sound = ztext_unpack(z ? z : "", zl, buf, tl, why, sizeof why) == 0;
            }
        }
        if (!sound && detail && detaillen)
            snprintf(detail, detaillen, "the stored text of '%s' is damaged: %s", (const char *)sqlite3_column_text(st, 0),
                     why);
    }
    if (sound && rc != SQLITE_DONE) {
        if (detail && detaillen) snprintf(detail, detaillen, "%s", sqlite3_errmsg(db));
        sound = 0;
    }
    free(buf);
    sqlite3_finalize(st);
    /* every packed chunk text unpacks and matches its hash, every packed docstring unpacks */
    return sound &&
           packed_sound(db, "SELECT count(length(text)) FROM chunks WHERE id IN "
                            "(SELECT id FROM chunk_spans WHERE text IS NOT NULL)", detail, detaillen) &&
           packed_sound(db, "SELECT count(length(drqa_doc(docstring))) FROM symbols WHERE typeof(docstring) = 'blob'",
                        detail, detaillen);
}

char *store_file_text(sqlite3 *db, const char *path, long long *file_id, size_t *len, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (err && errlen) *err = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, drqa_file_text(id, hash, ztext, tlen) FROM files WHERE path = ?", -1, &st,
                           NULL) != SQLITE_OK) {
        if (err && errlen) snprintf(err, errlen, "cannot read the index: %s", sqlite3_errmsg(db));
        return NULL;
    }
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (file_id) *file_id = sqlite3_column_int64(st, 0);
        const char *t = (const char *)sqlite3_column_text(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1);
        v = xmalloc(n + 1);
        if (n) memcpy(v, t, n);
        v[n] = 0;
        if (len) *len = n;
    } else if (rc != SQLITE_DONE && err && errlen) {
        snprintf(err, errlen, "cannot read the index: %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    return v;
}
