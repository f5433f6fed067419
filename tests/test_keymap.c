/* Tests of the keymap table (ui/keymap.c): every key name is well formed
 * and bound once, lookup finds each, the help screen lists every key, and
 * the man page's KEYS section is exactly the one generated from the table.
 * `test_keymap --man` prints that section (to regenerate the man page). */
#include "tap.h"
#include "keymap.h"

#include <stdlib.h>
#include <string.h>

struct keys {
    char names[128][32];
    int cmd[128];
    int n;
    int cur;
};

static void collect(void *ctx, const char *key)
{
    struct keys *k = ctx;
    if (k->n < 128) {
        snprintf(k->names[k->n], sizeof k->names[0], "%s", key);
        k->cmd[k->n++] = k->cur;
    }
}

static int well_formed(const char *k)
{
    static const char *const named[] = {"Up", "Down", "Left", "Right", "PgUp", "PgDn", "Home",
                                        "End", "Enter", "Tab", "BTab", "Esc", "Space",
                                        "Backspace"};
    if (strlen(k) == 1) return k[0] > ' ' && k[0] < 127;
    for (size_t i = 0; i < ARRAY_LEN(named); i++)
        if (!strcmp(k, named[i])) return 1;
    if (k[0] == 'F' && atoi(k + 1) >= 1 && atoi(k + 1) <= 12) return 1;
    return strlen(k) == 3 && k[0] == 'C' && k[1] == '-' && k[2] >= 'a' && k[2] <= 'z';
}

/* The body of the man page's KEYS section, or NULL. */
static char *man_keys(const char *path)
{
    char *text = read_file(path, 1 << 20, NULL);
    if (!text) return NULL;
    char *s = strstr(text, "\n.SH KEYS\n");
    char *body = NULL;
    if (s) {
        s += strlen("\n.SH KEYS\n");
        char *e = strstr(s, "\n.SH ");
        body = e ? xstrndup(s, (size_t)(e - s) + 1) : xstrdup(s);
    }
    free(text);
    return body;
}

int main(int argc, char **argv)
{
    struct buf man = BUF_INIT;
    keymap_man(&man);
    if (argc > 1 && !strcmp(argv[1], "--man")) {
        fputs(buf_str(&man), stdout);
        return 0;
    }
    struct keys k = {.n = 0};
    for (int i = 0; i < UI_CMD_COUNT; i++) {
        k.cur = i;
        keymap_each_key(&ui_keymap[i], collect, &k);
        ok(ui_keymap[i].cmd == i, "row %s is at its enum position", ui_keymap[i].name);
    }
    ok(k.n > UI_CMD_COUNT, "%d keys for %d commands", k.n, UI_CMD_COUNT);
    int bad = 0, dup = 0, miss = 0;
    for (int i = 0; i < k.n; i++) {
        if (!well_formed(k.names[i])) { bad++; diag("malformed key name '%s'", k.names[i]); }
        for (int j = 0; j < i; j++)
            if (!strcmp(k.names[i], k.names[j])) { dup++; diag("key '%s' bound twice", k.names[i]); }
        if ((int)keymap_lookup(k.names[i]) != k.cmd[i]) { miss++; diag("lookup of '%s' fails", k.names[i]); }
    }
    is_int(bad, 0, "every key name is a character, a named key, F1-F12 or C-x");
    is_int(dup, 0, "no key is bound to two commands");
    is_int(miss, 0, "lookup finds every key's command");
    is_int(keymap_lookup("Z"), UI_CMD_NONE, "an unbound key finds nothing");
    is_int(keymap_lookup(""), UI_CMD_NONE, "an empty name finds nothing");

    struct buf help = BUF_INIT;
    keymap_help(&help);
    int missing_help = 0;
    for (int i = 0; i < UI_CMD_COUNT; i++) {
        /* the row of the help screen: "  keys   help" */
        if (!strstr(buf_str(&help), ui_keymap[i].help)) {
            missing_help++;
            diag("help text of %s missing", ui_keymap[i].name);
        }
    }
    for (int i = 0; i < k.n; i++) {
        const char *h = buf_str(&help);
        const char *line = strstr(h, ui_keymap[k.cmd[i]].help);
        /* the key must be on the same line, before its help text */
        const char *start = line;
        while (start && start > h && start[-1] != '\n') start--;
        char *row = line ? xstrndup(start, (size_t)(line - start)) : xstrdup("");
        char want[40];
        snprintf(want, sizeof want, " %s", k.names[i]);
        if (!strstr(row, want)) {
            missing_help++;
            diag("key '%s' not on its help line", k.names[i]);
        }
        free(row);
    }
    is_int(missing_help, 0, "the help screen lists every command and every key");

    const char *srcdir = getenv("top_srcdir");
    char *path = xasprintf("%s/man/drqa-tui.1", srcdir ? srcdir : DRQA_SRCDIR);
    char *section = man_keys(path);
    ok(section != NULL, "man page %s has a KEYS section", path);
    int same = section && !strcmp(section, buf_str(&man));
    ok(same, "the man page's KEYS section is the one generated from the keymap table");
    if (!same) {
        diag("regenerate it with: tests/test_keymap --man; generated:");
        printf("%s", buf_str(&man));
    }
    int missing_man = 0;
    for (int i = 0; section && i < k.n; i++) {
        struct buf want = BUF_INIT;
        buf_adds(&want, "\\fB");
        for (const char *p = k.names[i]; *p; p++) {
            if (*p == '-') buf_adds(&want, "\\-");
            else buf_addc(&want, *p);
        }
        buf_adds(&want, "\\fR");
        if (!strstr(section, buf_str(&want))) {
            missing_man++;
            diag("key '%s' missing from the man page", k.names[i]);
        }
        buf_free(&want);
    }
    is_int(section ? missing_man : -1, 0, "the man page names every key");
    free(section);
    free(path);
    buf_free(&help);
    buf_free(&man);
    return done_testing();
}
