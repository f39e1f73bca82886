#!/bin/sh
# corrald --check-config [FILE]: what a start would load, judged, with
# nothing started.
# Sets up: a temporary folder with configuration files and a profiles
# folder holding the shipped profiles, then broken ones.
# Expects: exit 0 and one verdict line for a good set; exit 1 and every
# error as FILE:LINE:COL for a broken file or profile; nothing listens.
. "$top_srcdir/tests/lib/tap.sh"
corrald="$top_builddir/corrald"
tmp=$(mktemp -d /tmp/corral-checkconf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/profiles"
cp "$top_srcdir/conf/profiles/strict.yaml" "$top_srcdir/conf/profiles/standard.yaml" "$tmp/profiles/"
cat >"$tmp/good.yaml" <<YAML
socket: $tmp/never.sock
profiles_dir: $tmp/profiles
max_sandboxes: 10
YAML

out=$("$corrald" --check-config "$tmp/good.yaml" 2>"$tmp/err"); rc=$?
check_eq "a good configuration exits 0" 0 "$rc"
check_eq "and says so in one line" \
	"$tmp/good.yaml: configuration ok, 2 profiles in $tmp/profiles" "$out"
check_eq "with nothing on stderr" "" "$(cat "$tmp/err")"
[ ! -e "$tmp/never.sock" ]; tap_result $? "and nothing was started (no socket)"
out=$("$corrald" --config "$tmp/good.yaml" --check-config 2>&1); rc=$?
check_eq "--config FILE --check-config checks FILE" 0 "$rc"

printf 'max_sandboxes: 10\nmax_sandboxs: 3\nnetwork: {pool: 10.0.0.0/30}\nprofiles_dir: %s\n' \
	"$tmp/profiles" >"$tmp/bad.yaml"
"$corrald" --check-config "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "a broken configuration exits 1" 1 "$rc"
check_contains "its unknown key is named with FILE:LINE:COL" "$(cat "$tmp/err")" "$tmp/bad.yaml:2:1:"
check_contains "and every other error too" "$(cat "$tmp/err")" "$tmp/bad.yaml:3:"
check_eq "no verdict is printed" "" "$(cat "$tmp/out")"

printf 'version: 1\nnetwork_policies:\n  x:\n    endpoints: [{host: "*.com", port: 443}]\n    binaries: [{path: /usr/bin/git}]\n' \
	>"$tmp/profiles/wide.yaml"
"$corrald" --check-config "$tmp/good.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "a broken profile in the folder exits 1" 1 "$rc"
check_contains "and names the profile's file, line and column" "$(cat "$tmp/err")" \
	"$tmp/profiles/wide.yaml:4:"
rm "$tmp/profiles/wide.yaml"

printf 'profiles_dir: %s\nhost_proxy:\n  listen: 127.0.0.1:3128\n  profile: nosuch\n' \
	"$tmp/profiles" >"$tmp/host.yaml"
"$corrald" --check-config "$tmp/host.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "host mode naming a missing profile exits 1" 1 "$rc"
check_contains "and says which" "$(cat "$tmp/err")" "unknown profile 'nosuch'"

printf 'profiles_dir: %s\nledger_group: nosuch-corral-group\n' "$tmp/profiles" >"$tmp/group.yaml"
"$corrald" --check-config "$tmp/group.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "a ledger_group that is no group here exits 1" 1 "$rc"
check_contains "and names it" "$(cat "$tmp/err")" "ledger_group: 'nosuch-corral-group' is not a group"
printf 'profiles_dir: %s\nledger_group: root\n' "$tmp/profiles" >"$tmp/group.yaml"
check_eq "one that is passes" 0 "$("$corrald" --check-config "$tmp/group.yaml" >/dev/null 2>&1; echo $?)"

"$corrald" --check-config "$tmp/missing.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "a missing file named exits 1" 1 "$rc"
check_contains "and is named" "$(cat "$tmp/err")" "$tmp/missing.yaml"
"$corrald" --check-config a b >/dev/null 2>&1; rc=$?
check_eq "two files are a usage error" 2 "$rc"
tap_done
