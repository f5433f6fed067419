#!/bin/sh
# probe: a server answering 200 with a body that is not JSON and holds
# the key from byte 22 (across the 40-byte excerpt): no 8-byte or longer prefix of the key on
# stdout, stderr, in --log, --json or transcripts.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_key_garbage
hostile_key_probe garbage
