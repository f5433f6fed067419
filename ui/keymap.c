/*
 * keymap: the table of keys expanded from UI_KEYMAP (keymap.h), its lookup
 * and the two documents generated from it, the help screen and the man
 * page's KEYS section.
 */
#include "keymap.h"

#include <string.h>

const struct ui_keydef ui_keymap[UI_CMD_COUNT] = {
#define UI_KEYMAP_ROW(id, group, keys, help) {UI_CMD_##id, #id, group, keys, help},
    UI_KEYMAP(UI_KEYMAP_ROW)
#undef UI_KEYMAP_ROW
};

void keymap_each_key(const struct ui_keydef *d, void (*fn)(void *ctx, const char *key), void *ctx)
{
    const char *p = d->keys;
    while (*p) {
        while (*p == ' ') p++;
        size_t n = strcspn(p, " ");
        if (n) {
            char key[32];
            if (n >= sizeof key) n = sizeof key - 1;
            memcpy(key, p, n);
            key[n] = 0;
            fn(ctx, key);
        }
        p += n;
    }
}

struct find { const char *key; int found; };

static void match_key(void *ctx, const char *key)
{
    struct find *f = ctx;
    if (strcmp(f->key, key) == 0) f->found = 1;
}

enum ui_cmd keymap_lookup(const char *key)
{
    if (!key || !*key) return UI_CMD_NONE;
    for (int i = 0; i < UI_CMD_COUNT; i++) {
        struct find f = {key, 0};
        keymap_each_key(&ui_keymap[i], match_key, &f);
        if (f.found) return ui_keymap[i].cmd;
    }
    return UI_CMD_NONE;
}

struct keylist { struct buf *out; int n; int roff; };

static void list_key(void *ctx, const char *key)
{
    struct keylist *k = ctx;
    if (k->n++) buf_adds(k->out, ", ");
    if (!k->roff) {
        buf_adds(k->out, key);
        return;
    }
    buf_adds(k->out, "\\fB");
    for (const char *p = key; *p; p++) {
        if (*p == '-') buf_adds(k->out, "\\-");
        else if (*p == '\\') buf_adds(k->out, "\\e");
        else buf_addc(k->out, *p);
    }
    buf_adds(k->out, "\\fR");
}

void keymap_help(struct buf *out)
{
    const char *group = NULL;
    for (int i = 0; i < UI_CMD_COUNT; i++) {
        const struct ui_keydef *d = &ui_keymap[i];
        if (!group || strcmp(group, d->group) != 0) {
            if (group) buf_addc(out, '\n');
            buf_printf(out, "%s\n", d->group);
            group = d->group;
        }
        struct buf keys = BUF_INIT;
        struct keylist k = {&keys, 0, 0};
        keymap_each_key(d, list_key, &k);
        buf_printf(out, "  %-14s %s\n", buf_str(&keys), d->help);
        buf_free(&keys);
    }
}

void keymap_man(struct buf *out)
{
    const char *group = NULL;
    for (int i = 0; i < UI_CMD_COUNT; i++) {
        const struct ui_keydef *d = &ui_keymap[i];
        if (!group || strcmp(group, d->group) != 0) {
            buf_printf(out, ".SS %s\n", d->group);
            group = d->group;
        }
        buf_adds(out, ".TP\n");
        struct keylist k = {out, 0, 1};
        keymap_each_key(d, list_key, &k);
        buf_addc(out, '\n');
        /* Help texts are plain words: only a backslash would need escaping. */
        for (const char *p = d->help; *p; p++) {
            if (*p == '\\') buf_adds(out, "\\e");
            else buf_addc(out, *p);
        }
        buf_adds(out, ".\n");
    }
}
