#!/bin/sh
# test_table_rows.sh: extension points kept as one row each (HACKING.md,
# "Recipes") stay so.
#   Providers are told apart in one place, their rows in src/llm_provider.c:
#   no other source of src/ or ui/ compares a provider's name (its name or
#   aliases as written in the table, or the API family names "openai" and
#   "anthropic") or its enum value.
#   The roles are listed once, in src/llm_roles.def: no source or header
#   lists their names or enum values one after another (comments aside).
# (The languages' extensions are checked by tests/test_langext.)
set -u
: "${top_srcdir:?}"
. "$top_srcdir/tests/tap.sh"

table="$top_srcdir/src/llm_provider.c"
# the quoted names and aliases of the rows: {LLM_PROVIDER_X, "name", "aliases", ...
names=$(sed -n 's/^ *{LLM_PROVIDER_[A-Z0-9_]*, "\([^"]*\)", \(NULL\|"\([^"]*\)"\).*/\1 \3/p' "$table" | tr ' ' '\n' |
        sed '/^$/d' | sort -u)
rows=$(grep -c '^ *{LLM_PROVIDER_' "$table")
ok "$([ "$(printf '%s\n' "$names" | grep -c .)" -ge "$rows" ]; echo $?)" "a name read from each of the $rows rows"
ok "$(printf '%s\n' "$names" | grep -qx anthropic; echo $?)" "anthropic is among them"
alt=$(printf '%s\n' $names openai anthropic | sort -u | sed 's/[.-]/\\&/g' | paste -sd'|' -)

sources=$(ls "$top_srcdir"/src/*.c "$top_srcdir"/ui/*.c | grep -v '/src/llm_provider\.c$')
# a string comparison with a provider's name on either side
hits=$(grep -nE "str(n?case)?cmp\([^;]*\"($alt)\"" $sources)
is "$hits" "" "no source but llm_provider.c compares a string with a provider's name"
# a comparison or a switch on the provider's enum value
hits=$(grep -nE "[!=]= *LLM_PROVIDER_|LLM_PROVIDER_[A-Z0-9_]+ *[!=]=|case +LLM_PROVIDER_" $sources)
is "$hits" "" "no source but llm_provider.c compares the provider's enum value"

roles="$top_srcdir/src/llm_roles.def"
first=$(sed -n 's/^LLM_ROLE(\([A-Z_]*\), "\([a-z_]*\)".*/\1 \2/p' "$roles" | sed -n 1p)
second=$(sed -n 's/^LLM_ROLE(\([A-Z_]*\), "\([a-z_]*\)".*/\1 \2/p' "$roles" | sed -n 2p)
ok "$([ -n "$second" ]; echo $?)" "the roles were read from llm_roles.def ($first, $second)"
hits=$(grep -nE "\"${first#* }\", *\"${second#* }\"|LLM_ROLE_${first% *}, *LLM_ROLE_${second% *}" \
       "$top_srcdir"/src/*.[ch] "$top_srcdir"/ui/*.[ch] | grep -vE '^[^:]*:[0-9]+: *(/\*|\*)')
is "$hits" "" "no source lists the roles' names or enum values but llm_roles.def"

echo "1..$n"
exit $fail
