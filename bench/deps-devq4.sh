#!/bin/sh
# deps-devq4: the Debian packages whose sources bench/devq/devq4.jsonl asks
# about: sympy, matplotlib, scikit-learn and pytest (large trees with tests,
# generated code and compiled extensions beside their Python). For the
# benches only; the main build never needs them. As root: apt-get.
set -eu
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    python3-sympy python3-matplotlib python3-sklearn python3-pytest >/dev/null
