/*
 * termcheck: whether the terminal can run a full-screen front end at all:
 * TERM must be set and name a terminal (terminfo) that addresses the
 * cursor. A dumb terminal would draw every pane on one line.
 */
#include "ui.h"

#include <stdio.h>
#include <term.h>
#include <unistd.h>

int ui_terminal_usable(char *err, size_t errlen)
{
    const char *term = getenv("TERM");
    if (!term || !*term) {
        snprintf(err, errlen, "TERM is not set, so the terminal's kind is unknown; set it (e.g. "
                              "TERM=xterm-256color) or use --ask QUESTION for a headless answer");
        return -1;
    }
    int terr = 0;
    if (setupterm((char *)term, STDOUT_FILENO, &terr) != OK) {
        snprintf(err, errlen, "the terminal type '%s' (TERM) is not in the terminfo database; set TERM to "
                              "one that is (e.g. xterm-256color) or use --ask QUESTION", term);
        return -1;
    }
    const char *cup = tigetstr("cup");
    int ok = cup && cup != (char *)-1;
    del_curterm(cur_term);
    cur_term = NULL;
    if (!ok) {
        snprintf(err, errlen, "the terminal '%s' (TERM) cannot move the cursor, so the screen cannot be "
                              "drawn; use a full-screen terminal (xterm, tmux, screen) or --ask QUESTION", term);
        return -1;
    }
    return 0;
}
