#!/bin/sh
# deps-dev2: the Debian packages whose sources the second SWE-QA dev set
# (../shared/benchmarks/sweqa-dev2.jsonl) asks about: sphinx, pylint, xarray,
# astropy, sqlfluff. For the benches only (astropy pulls numpy); the main
# build never needs them. As root: apt-get.
set -eu
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    python3-sphinx pylint python3-xarray python3-astropy sqlfluff >/dev/null
