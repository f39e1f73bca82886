#!/bin/sh
# Reloads (corrald(8), SIGNALS; corral(1), reload): corrald.yaml and the
# profiles read again, all of it or nothing.
# Sets up: the test bed; a copy of the shipped profiles that the test
# edits; corrald in the test host on them; a sandbox s1 on the strict
# profile, which does not allow example.com.
# Does: breaks the profile and reloads (SIGHUP, then corral reload);
# makes a sandbox meanwhile; fixes the profile with example.com added and
# reloads; edits a share in corrald.yaml and breaks the file.
# Expects: a broken edit changes nothing (s1 is still refused, a create
# still works on the last good profile), its errors name FILE:LINE:COL in
# the log, in corral reload's answer and in status; a good edit reaches
# the running s1 (a connection allowed by the new entry, after a
# policy_updated record naming the profile's new version) and the next
# create; a sandbox whose policy was set by hand is left as it is; a key
# that needs a restart is named; reload is root's.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/ws"
profiles="$TB_DIR/profiles"
mkdir -p "$ws" "$profiles"
cp "$top_srcdir"/conf/profiles/*.yaml "$profiles/"
chmod 0644 "$profiles"/*.yaml
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R 1000:1000 "$TB_DIR/folders"
# The broker reads corrald.yaml and the profiles again as its own user.
chmod 0755 "$TB_DIR" "$TB_DIR/folders" "$profiles"
write_config() {
	CORRAL_PROFILES_DIR_TEST=$profiles corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
shares:
  connections: $1
YAML
}
write_config 32
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
chmod 0666 "$sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
hup() { kill -HUP "$(tb_pid corrald)"; sleep 0.5; }
fetch() {
	corral exec "$1" -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
		-w '%{http_code}' "https://$2/" 2>/dev/null
}
ledger_sync() { sleep 0.2; }

corral sandbox create --root "$ws" --name s1 >/dev/null 2>&1
check_eq "s1 is made on the strict profile" 0 $?
corral sandbox create --root "$ws" --name hand >/dev/null 2>&1
check_eq "and a second sandbox, whose policy is then set by hand" 0 $?
corral policy get hand >"$TB_DIR/hand.yaml" 2>/dev/null
corral policy set hand "$TB_DIR/hand.yaml" >/dev/null 2>&1
check_eq "its policy set by hand" 0 $?
code=$(fetch s1 example.com)
ledger_sync
check "strict refuses example.com" corral_ledger_has \
	event=connect sandbox=s1 host=example.com decision=deny reason=host_not_allowed

# --- A broken edit: nothing changes.
cp "$profiles/strict.yaml" "$TB_DIR/strict.good"
printf 'version: 1\nnetwork_policies:\n  web:\n    endpoints: [{host: example.com, port: 443}]\n    binaries: [{path: /usr/bin/curl}]\n    bogus: 1\n' \
	>"$profiles/strict.yaml"
hup
log=$(cat "$(tb_log corrald)")
check_contains "a broken profile is logged with its position" "$log" "strict.yaml:6:5"
check_contains "and the reload said nothing changed" "$log" "reload: nothing changed"
check_eq "s1 keeps its policy" 1 "$([ "$(fetch s1 example.com)" = 200 ]; echo $?)"
out=$(corral status)
check_contains "status shows the failed reload" "$out" "Reload: failed at"
check_contains "and its first error" "$out" "strict.yaml:6:5"
json=$(corral status --json)
check_contains "status --json shows it too" "$json" '"ok":false'
corral sandbox create --root "$ws" --name s2 >/dev/null 2>&1
check_eq "a create still works, on the last good profile" 0 $?
check_eq "which does not allow example.com either" 1 "$([ "$(fetch s2 example.com)" = 200 ]; echo $?)"
err=$(corral reload 2>&1)
check_eq "corral reload of the broken profile exits 1" 1 $?
check_contains "naming FILE:LINE:COL" "$err" "strict.yaml:6:5"
check_contains "and that nothing changed" "$err" "nothing changed"

# --- A good edit reaches the running sandbox and the next create.
cp "$TB_DIR/strict.good" "$profiles/strict.yaml"
cat >>"$profiles/strict.yaml" <<'EOF'
  reload-test:
    name: reload-test
    endpoints:
      - {host: example.com, port: 443}
    binaries:
      - {path: /usr/bin/curl}
EOF
out=$(corral reload 2>&1)
check_eq "corral reload of the fixed profile exits 0" 0 $?
check_contains "it names the profiles' new version" "$out" "profiles version 2"
check_contains "and the sandboxes that follow it (s1, s2; not the one set by hand)" "$out" \
	"2 sandboxes follow it"
check_eq "s1 reaches example.com now" 200 "$(fetch s1 example.com)"
ledger_sync
check "the ledger says s1's policy changed, and to which version" corral_ledger_has \
	event=lifecycle sandbox=s1 reason=policy_updated "policy=strict#2"
check "the connection was allowed by the new entry" corral_ledger_has \
	event=connect sandbox=s1 host=example.com decision=allow policy=reload-test
fetch hand example.com >/dev/null
ledger_sync
check "the sandbox whose policy was set by hand is left as it was" corral_ledger_has \
	event=connect sandbox=hand host=example.com decision=deny reason=host_not_allowed
corral sandbox create --root "$ws" --name s3 >/dev/null 2>&1
check_eq "a new create takes the new version" 200 "$(fetch s3 example.com)"
check_contains "status shows the reload that took" "$(corral status)" "Reload: ok at"

# --- corrald.yaml: a share changes, a restart-only key is named, a broken
# file changes nothing.
write_config 33
echo "machine_id: elsewhere" >>"$TB_DIR/corrald.yaml"
echo "max_sandboxes: 7" >>"$TB_DIR/corrald.yaml"
out=$(corral reload 2>&1)
check_eq "a reload with a new share exits 0" 0 $?
check_contains "a key that needs a restart is named" "$out" "machine_id changed"
check_contains "max_sandboxes too: the descriptor budget was set for it" "$out" \
	"max_sandboxes changed"
echo "shares: {connections: 0}" >>"$TB_DIR/corrald.yaml"
err=$(corral reload 2>&1)
check_eq "a broken corrald.yaml changes nothing" 1 $?
check_contains "and names its position" "$err" "corrald.yaml:"
check_eq "s1 still reaches example.com" 200 "$(fetch s1 example.com)"

# --- Reload is root's.
err=$(tb_exec_host setpriv --reuid=1000 --regid=1000 --clear-groups \
	"$top_builddir/corral" --socket "$sock" reload 2>&1)
check_eq "reload as another user is refused (4)" 4 $?
check_contains "saying it is root's" "$err" "root"

corral sandbox delete --all >/dev/null 2>&1
tap_done
