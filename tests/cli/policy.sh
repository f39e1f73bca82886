#!/bin/sh
# corral policy render and policy check, without a daemon.
# Sets up: a temporary folder tree owned by uid 1000 (when run as root).
# Does: renders policies for it and checks files, good and bad.
# Expects: the exit codes of corral(1), rendered text that loads
# back, errors as FILE:LINE:COL.
. "$top_srcdir/tests/lib/tap.sh"
corral="$top_builddir/corral"
profiles="$top_srcdir/conf/profiles"
tmp=$(mktemp -d /tmp/corral-policy-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/app" "$tmp/ref"
if [ "$(id -u)" -eq 0 ]; then chown 1000:1000 "$tmp/app"; ids=; else ids="--uid $(id -u) --gid $(id -g)"; fi
export CORRAL_PROFILES_DIR="$profiles"

# shellcheck disable=SC2086
"$corral" policy render --root "$tmp/app" --root "$tmp/ref:ro" $ids >"$tmp/p.yaml" 2>"$tmp/err"; rc=$?
check_eq "render for an owned folder exits 0" 0 "$rc"
out=$(cat "$tmp/p.yaml")
check_contains "the writable root is read-write" "$out" "read_write:
  - /tmp
  - $tmp/app"
check_contains "the :ro root is read-only" "$out" "  - $tmp/ref
  read_write:"
check_contains "landlock is a hard requirement" "$out" "compatibility: hard_requirement"
check_contains "strict lets github.com through" "$out" "{host: github.com, port: 443}"
check_lacks "strict has no web search" "$out" "api.tavily.com"
[ -z "$ids" ] && check_contains "run_as is the folder's owner" "$out" 'run_as_user: "1000"'

out=$("$corral" policy check "$tmp/p.yaml"); rc=$?
check_eq "the rendered policy passes policy check" 0 "$rc"
check_contains "policy check says the file is valid" "$out" "$tmp/p.yaml: valid policy"

out=$("$corral" policy check - <"$tmp/p.yaml"); rc=$?
check_eq "policy check reads standard input for -" 0 "$rc"

# shellcheck disable=SC2086
out=$("$corral" policy render --root "$tmp/app" --profile standard $ids); rc=$?
check_contains "standard adds web search" "$out" "api.tavily.com"

# shellcheck disable=SC2086
out=$("$corral" policy render --root "$tmp/app" --grant gh $ids); rc=$?
check_contains "a gh grant adds the credentials entry" "$out" "credentials:"
check_contains "a gh grant adds api.github.com:443" "$out" "{host: api.github.com, port: 443}"

# shellcheck disable=SC2086
"$corral" policy render --root "$tmp/app" --grant vault $ids >/dev/null 2>"$tmp/err"; rc=$?
check_eq "an unknown grant exits 1" 1 "$rc"
check_contains "an unknown grant lists the known ones" "$(cat "$tmp/err")" "unknown grant 'vault' (known: ssh, gh, aws, kube)"

"$corral" policy render --root "$tmp/app" --profile wide-open --uid 1000 --gid 1000 >/dev/null 2>"$tmp/err"; rc=$?
check_eq "an unknown profile exits 1" 1 "$rc"
check_contains "an unknown profile lists the known ones" "$(cat "$tmp/err")" "unknown profile 'wide-open' (known: standard, strict)"

"$corral" --profiles-dir "$tmp/none" policy render --uid 1000 --gid 1000 >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a missing profiles folder exits 1" 1 "$rc"
check_contains "--profiles-dir wins over the environment" "$(cat "$tmp/err")" "$tmp/none"

# Roots that do not exist yet: the caller's own ids, said in a comment.
as_user() { if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; else "$@"; fi; }
[ "$(id -u)" -eq 0 ] && chmod 0755 "$tmp" && uid=1000 && gid=1000 || { uid=$(id -u); gid=$(id -g); }
as_user "$corral" policy render --root /home/sam/code/app --root /home/sam/reference:ro \
	>"$tmp/new.yaml" 2>"$tmp/err"; rc=$?
check_eq "render for roots that do not exist exits 0" 0 "$rc"
check_contains "run_as is then the caller's" "$(cat "$tmp/new.yaml")" "run_as_user: \"$uid\"
  run_as_group: \"$gid\""
check_eq "and a comment line says so first" \
	"# run_as is the caller's uid $uid and gid $gid: the owner of /home/sam/code/app cannot be read (No such file or directory)" \
	"$(head -1 "$tmp/new.yaml")"
out=$("$corral" policy check "$tmp/new.yaml"); rc=$?
check_eq "the policy with its comment passes policy check" 0 "$rc"
as_user "$corral" policy render --root "/nope/a
network_policies: {}" >"$tmp/nl.yaml" 2>"$tmp/err"; rc=$?
check_eq "a path with a newline stays inside its comment" \
	"# run_as is the caller's uid $uid and gid $gid: the owner of /nope/a?network_policies: {} cannot be read (No such file or directory)" \
	"$(head -1 "$tmp/nl.yaml")"

if [ "$(id -u)" -eq 0 ]; then
	"$corral" policy render --root /home/sam/code/app >/dev/null 2>"$tmp/err"; rc=$?
	check_eq "root rendering for a root that does not exist is refused" 1 "$rc"
	check_contains "and told to name the user" "$(cat "$tmp/err")" "pass --uid and --gid"
	"$corral" policy render --root "$tmp/ref" >/dev/null 2>"$tmp/err"; rc=$?
	check_eq "a root-owned folder without --uid is refused" 1 "$rc"
	check_contains "the refusal says never a system account" "$(cat "$tmp/err")" "belongs to uid 0"
fi

"$corral" policy render --uid 1000 >/dev/null 2>&1; rc=$?
check_eq "--uid without --gid is a usage error" 2 "$rc"
"$corral" policy render --uid 1x --gid 1 >/dev/null 2>&1; rc=$?
check_eq "a non-numeric uid exits 1" 1 "$rc"
"$corral" policy render --uid 0 --gid 0 --root "$tmp/app" >/dev/null 2>"$tmp/err"; rc=$?
check_eq "uid 0 is refused" 1 "$rc"

cat >"$tmp/bad.yaml" <<'YAML'
version: 1
network_policies:
  web:
    endpoints:
      - {host: "*.com", port: 0}
    binaries: [{path: /usr/bin/curl}]
    extra: true
YAML
"$corral" policy check "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"; rc=$?
err=$(cat "$tmp/err")
check_eq "a bad policy exits 1" 1 "$rc"
check_contains "a wide wildcard is named at its line and column" "$err" "$tmp/bad.yaml:5:16: host '*.com'"
check_contains "a bad port is named at its line and column" "$err" "$tmp/bad.yaml:5:31: port 0"
check_contains "an unknown key is named at its line and column" "$err" "$tmp/bad.yaml:7:5: unknown key 'extra'"
check_eq "every error is reported at once" 3 "$(grep -c "^$tmp/bad.yaml:" "$tmp/err")"

"$corral" policy check "$tmp/missing.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a missing file exits 1" 1 "$rc"
check_contains "a missing file is named" "$(cat "$tmp/err")" "$tmp/missing.yaml"

"$corral" policy check >/dev/null 2>&1; rc=$?
check_eq "policy check without a file is a usage error" 2 "$rc"
tap_done
