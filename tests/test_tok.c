/* Unit tests for tok: code-aware terms that make identifier spellings meet. */
#include "tap.h"
#include "tok.h"

#include <stdlib.h>

static char *terms(const char *s, int flags)
{
    struct buf b = BUF_INIT;
    tok_terms(s, strlen(s), flags, &b);
    return buf_take(&b);
}

static int has_term(const char *list, const char *t)
{
    size_t n = strlen(t);
    for (const char *p = list; (p = strstr(p, t)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

int main(void)
{
    char *a = terms("getResponse", 0), *b = terms("get_response", 0), *c = terms("get response", 0);
    is_str(a, "get response getresponse", "camelCase splits and keeps the joined form");
    is_str(b, "get response getresponse", "snake_case gives the same terms as camelCase");
    ok(has_term(c, "get") && has_term(c, "response"), "plain words meet the identifier's parts");
    free(a); free(b); free(c);

    a = terms("HTTPResponse parse_URL2 x", 0);
    ok(has_term(a, "http") && has_term(a, "response") && has_term(a, "httpresponse"),
       "an acronym before a word splits off: %s", a);
    ok(has_term(a, "url2") && has_term(a, "parse") && !has_term(a, "x"),
       "digits stay with their word; one-letter words are dropped: %s", a);
    free(a);

    a = terms("How does the session get removed on logout?", TOK_STOPWORDS);
    is_str(a, "session get remov logout", "question words are dropped and suffixes stripped");
    free(a);

    a = terms("sessions classes handling", 0);
    is_str(a, "session class handl", "plurals and -ing are stripped");
    free(a);

    ok(tok_is_stopword("the", 3) && tok_is_stopword("how", 3) && !tok_is_stopword("flask", 5),
       "stopword lookup");
    ok(tok_is_stopword("does", 4) && tok_is_stopword("your", 4) && tok_is_stopword("a", 1),
       "stopword lookup at both ends of the sorted list");

    a = terms("__init__ _private", 0);
    ok(has_term(a, "init") && has_term(a, "private"), "dunder and leading underscores: %s", a);
    free(a);
    return done_testing();
}
