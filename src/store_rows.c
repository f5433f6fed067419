/*
 * store_rows: the compact forms of a few columns (store_rows.h).
 */
#include "store_rows.h"

#include <string.h>

static const char *const chunk_kinds[] = {"function", "class", "module", "text"};   /* STORE_CHUNK_KIND_SQL */

int store_chunk_kind(const char *kind)
{
    for (int i = 0; i < (int)(sizeof chunk_kinds / sizeof *chunk_kinds); i++)
        if (kind && strcmp(kind, chunk_kinds[i]) == 0) return i;
    return -1;
}

const char *store_chunk_kind_of(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_INTEGER) {
        sqlite3_int64 k = sqlite3_column_int64(st, i);
        if (k >= 0 && k < (sqlite3_int64)(sizeof chunk_kinds / sizeof *chunk_kinds)) return chunk_kinds[k];
    }
    return (const char *)sqlite3_column_text(st, i);
}

const char *store_hash_of(sqlite3_stmt *st, int i, char buf[17])
{
    if (sqlite3_column_type(st, i) == SQLITE_BLOB && sqlite3_column_bytes(st, i) == 8) {
        const unsigned char *b = sqlite3_column_blob(st, i);
        static const char hex[] = "0123456789abcdef";
        for (int k = 0; k < 8; k++) {
            buf[2 * k] = hex[b[k] >> 4];
            buf[2 * k + 1] = hex[b[k] & 15];
        }
        buf[16] = 0;
        return buf;
    }
    return (const char *)sqlite3_column_text(st, i);
}

const char *store_prefix_form(const char *full, const char *last, size_t *len, struct buf *scratch)
{
    *len = 0;
    if (!full) return NULL;
    size_t n = strlen(full), m = last ? strlen(last) : 0;
    if (last && strcmp(full, last) == 0) return NULL;
    if (last && n > m && full[0] != 1 && full[n - m - 1] == '.' && memcmp(full + n - m, last, m) == 0) {
        *len = n - m;   /* with the dot */
        return full;
    }
    if ((n && full[n - 1] == '.') || full[0] == 1) {
        buf_reset(scratch);
        buf_add(scratch, "\1", 1);
        buf_add(scratch, full, n);
        *len = scratch->len;
        return scratch->data;
    }
    *len = n;
    return full;
}

const char *store_sig_form(const char *sig, const char *name, size_t *len, struct buf *scratch)
{
    *len = 0;
    if (!sig) return NULL;
    size_t n = strlen(sig), m = name ? strlen(name) : 0;
    struct { unsigned char code; const char *kw; } kws[] = {
#define STORE_SIG_ENTRY_(c, k) {c, k},
        STORE_SIG_KEYWORDS(STORE_SIG_ENTRY_)
#undef STORE_SIG_ENTRY_
    };
    for (size_t i = 0; name && i < sizeof kws / sizeof *kws; i++) {
        size_t k = strlen(kws[i].kw);
        if (n >= k + m && memcmp(sig, kws[i].kw, k) == 0 && memcmp(sig + k, name, m) == 0) {
            buf_reset(scratch);
            buf_add(scratch, &kws[i].code, 1);
            buf_add(scratch, sig + k + m, n - k - m);
            *len = scratch->len;
            return scratch->data;
        }
    }
    if (n && (unsigned char)sig[0] <= STORE_SIG_VERBATIM) {
        unsigned char v = STORE_SIG_VERBATIM;
        buf_reset(scratch);
        buf_add(scratch, &v, 1);
        buf_add(scratch, sig, n);
        *len = scratch->len;
        return scratch->data;
    }
    *len = n;
    return sig;
}

int store_hash_bytes(const char *hex, unsigned char out[8])
{
    if (!hex || strlen(hex) != 16) return 0;
    for (int i = 0; i < 16; i++) {
        char c = hex[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return 0;
        if (i % 2 == 0) out[i / 2] = (unsigned char)(v << 4);
        else out[i / 2] |= (unsigned char)v;
    }
    return 1;
}
