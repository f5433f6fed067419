#!/bin/sh
# probe: a server answering 401 with an HTML page that echoes the Authorization
# header near byte 180 (across the 200-byte excerpt): no 8-byte or longer prefix of the key on
# stdout, stderr, in --log, --json or transcripts.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_key_html401
hostile_key_probe html401
