/*
 * url: the model servers' base URLs. url_join puts an API path into a base's
 * path, before any query string or fragment, so that a base such as
 * "https://host/v1?api-version=2" gives ".../v1/chat/completions?api-version=2";
 * every client (chat, embeddings, judges) builds its request URL with it.
 * url_redact hides the credentials a URL may carry, the userinfo
 * ("user:KEY@host") and the values of key-like query parameters (api-key,
 * api_key, key, token, access_token, sig, ...), and url_redact_text does the
 * same for every http(s) URL inside a text, for whatever is shown or logged:
 * stderr, the --log file, transcripts, error messages.
 */
#ifndef DRQA_URL_H
#define DRQA_URL_H

#include <stddef.h>

/* base (trailing '/' of its path dropped) + path (starting with '/') +
 * base's "?query#fragment". Caller frees. */
char *url_join(const char *base, const char *path);

/* 1 when the path part of url (before '?' or '#', trailing '/' ignored)
 * ends with suffix. */
int url_path_ends(const char *url, const char *suffix);

/* A copy of url with the userinfo and every key-like query value replaced
 * by "[redacted]". Caller frees. */
char *url_redact(const char *url);

/* A copy of text with every http:// or https:// URL in it redacted as by
 * url_redact. Caller frees. */
char *url_redact_text(const char *text);

/* A copy of text with every credential value url carries (its userinfo, the
 * password part of it, the values of its key-like query parameters; those of
 * 4 bytes or more) replaced by "[redacted]" wherever it occurs, as a server
 * echoing its request back would show it, and every URL in text redacted as
 * by url_redact_text. Caller frees. */
char *url_redact_echo(const char *text, const char *url);

/* url_redact_text in place in a buffer of size bytes (cut to fit). */
void url_redact_buf(char *s, size_t size);

#endif
