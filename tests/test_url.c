/* Unit tests for url: the API path goes into the base's path, before its
 * query string; userinfo and key-like query values are redacted in a URL and
 * in any text holding URLs; the credential-name rule shared with config. */
#include "tap.h"
#include "url.h"
#include "util.h"

#include <stdlib.h>

static void join_is(const char *base, const char *path, const char *want)
{
    char *u = url_join(base, path);
    is_str(u, want, "join '%s' + '%s'", base, path);
    free(u);
}

static void redact_is(const char *url, const char *want)
{
    char *u = url_redact(url);
    is_str(u, want, "redact '%s'", url);
    free(u);
}

int main(void)
{
    join_is("http://h:8/v1", "/chat/completions", "http://h:8/v1/chat/completions");
    join_is("http://h:8/v1/", "/chat/completions", "http://h:8/v1/chat/completions");
    join_is("https://h/v1?api-version=2024-01", "/chat/completions", "https://h/v1/chat/completions?api-version=2024-01");
    join_is("https://h/v1/?api-key=K&x=1#frag", "/embeddings", "https://h/v1/embeddings?api-key=K&x=1#frag");
    join_is("http://h", "/v1/messages", "http://h/v1/messages");
    join_is("http://h/?k=v", "/v1/messages", "http://h/v1/messages?k=v");

    ok(url_path_ends("http://h/v1", "/v1"), "a base ending in /v1");
    ok(url_path_ends("http://h/v1/?key=x", "/v1"), "a base ending in /v1/ before its query");
    ok(!url_path_ends("http://h/api?v=/v1", "/v1"), "a query ending in /v1 is not the path");

    redact_is("http://user:SECRET@host:8/v1", "http://[redacted]@host:8/v1");
    redact_is("http://SECRET@host/v1?x=1", "http://[redacted]@host/v1?x=1");
    redact_is("https://h/v1?api-key=SECRET&model=m", "https://h/v1?api-key=[redacted]&model=m");
    redact_is("https://h/v1?api_key=S1&key=S2&token=S3&access_token=S4&sig=S5&keep=yes#f",
              "https://h/v1?api_key=[redacted]&key=[redacted]&token=[redacted]&access_token=[redacted]"
              "&sig=[redacted]&keep=yes#f");
    redact_is("https://h/path@not-userinfo", "https://h/path@not-userinfo");
    redact_is("http://h/v1", "http://h/v1");

    char *t = url_redact_text("POST http://u:SECRET@127.0.0.1:9/v1?token=T0K&a=b/chat failed; see "
                              "'https://h/x?sig=ABC' and HTTPS://k:P@H/");
    is_str(t, "POST http://[redacted]@127.0.0.1:9/v1?token=[redacted]&a=b/chat failed; see "
              "'https://h/x?sig=[redacted]' and HTTPS://[redacted]@H/", "every URL in a text is redacted");
    free(t);
    char buf[64] = "at http://a:SECRETSECRET@h/v1 now";
    url_redact_buf(buf, sizeof buf);
    is_str(buf, "at http://[redacted]@h/v1 now", "in place in a buffer");

    ok(str_secret_name("api_key", 7) && str_secret_name("embed_key", 9) && str_secret_name("X-Goog-Api-Key", 14) &&
       str_secret_name("access_token", 12) && str_secret_name("sig", 3) && str_secret_name("client_secret", 13) &&
       str_secret_name("password", 8),
       "credential names are recognised");
    ok(!str_secret_name("api_base", 8) && !str_secret_name("model", 5) && !str_secret_name("timeout_total_ms", 16) &&
       !str_secret_name("api-version", 11),
       "ordinary setting names are not");
    return done_testing();
}
