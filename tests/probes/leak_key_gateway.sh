#!/bin/sh
# probe: a server answering 200 {"error"} whose message puts the
# key across the 512-byte error message: no 8-byte or longer prefix of the key on
# stdout, stderr, in --log, --json or transcripts.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_key_gateway
hostile_key_probe gateway
