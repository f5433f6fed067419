/* Unit tests for fuzzy: edit distance, subsequence scores and ranking. */
#include "tap.h"
#include "fuzzy.h"

int main(void)
{
    is_int(fuzzy_distance("kitten", "sitting", 5), 3, "kitten/sitting = 3");
    is_int(fuzzy_distance("Flask", "flask", 3), 0, "case is ignored");
    is_int(fuzzy_distance("ab", "ba", 3), 1, "a transposition costs 1");
    is_int(fuzzy_distance("abcdef", "a", 2), 3, "past max: max + 1");
    is_int(fuzzy_distance("", "abc", 5), 3, "empty string");

    ok(fuzzy_subseq("rqctx", "RequestContext") > 0, "subsequence found");
    ok(fuzzy_subseq("xyz", "RequestContext") == 0, "not a subsequence");
    ok(fuzzy_subseq("ReqCon", "RequestContext") > fuzzy_subseq("ReqCon", "RequestsConnectionPool"),
       "a tighter candidate scores higher");

    ok(fuzzy_score("Flask", "Flask") == 1.0, "equal: 1");
    ok(fuzzy_score("flask", "Flask") == 1.0, "case-insensitive equal: 1");
    ok(fuzzy_score("Flsk", "Flask") > fuzzy_score("Flsk", "FlaskClient"), "one edit beats a longer name");
    ok(fuzzy_score("Context", "RequestContext") > 0, "substring counts");
    ok(fuzzy_score("zzz", "Flask") == 0, "unrelated: 0");

    const char *c[] = {"RequestContext", "AppContext", "Request", "request_context", "Response", "Flask"};
    struct fuzzy_hit h[3] = {{0, 0}, {0, 0}, {0, 0}};
    size_t n = fuzzy_best("RequestContex", c, 6, 3, h);
    is_int(n, 2, "two hits: the rest are too far");
    is_str(c[h[0].index], "RequestContext", "best: one deletion away");
    is_str(c[h[1].index], "request_context", "second: one more edit");
    n = fuzzy_best("Respons", c, 6, 3, h);
    ok(n >= 1, "hits for Respons");
    is_str(c[h[0].index], "Response", "Response first");
    n = fuzzy_best("qqqqq", c, 6, 3, h);
    is_int(n, 0, "nothing similar: no hits");
    return done_testing();
}
