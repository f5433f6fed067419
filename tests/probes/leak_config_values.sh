#!/bin/sh
# probe: a key written on the wrong line of a 0600 config file (retries =
# sk-..., and so for max_tokens, temperature, json_mode, provider, api_base,
# price and profile fields) is refused naming the file, line and setting,
# never echoing the value.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_config_values
KEY=sk-proj-CONFIGq7Zt4LmKp2VwX9rBn3YdE6f
mkdir -p "$XDG_CONFIG_HOME/drqa-tui"
for k in retries max_tokens temperature json_mode provider api_base embed_base timeout_total_ms \
         price.gpt-4.1.input profile.gpt-4*.max_output; do
    printf 'model = m\n%s = %s\n' "$k" "$KEY" >"$XDG_CONFIG_HOME/drqa-tui/config"
    chmod 600 "$XDG_CONFIG_HOME/drqa-tui/config"
    "$DRQA" --no-progress --ask "where is App" "$R" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 2 ] || probe_done 1 "$k = KEY: exit $rc, not 2"
    grep -q 'config:2:' "$T/err" || probe_done 1 "$k = KEY: the line is not named"
    ! grep -qF "$(printf %.8s "$KEY")" "$T/out" "$T/err" || probe_done 1 "$k = KEY: the value was echoed"
done
probe_done 0
