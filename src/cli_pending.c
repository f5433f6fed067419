/*
 * cli_pending: modes that this version does not have yet. Each says so plainly
 * and exits with status 2; a mode moves out of this file when it is built.
 */
#include "cli.h"

#include <stdio.h>

static int __attribute__((unused)) pending(const char *what)
{
    fprintf(stderr, "drqa-tui: %s is not available in this version yet\n", what);
    return EXIT_USAGE;
}

