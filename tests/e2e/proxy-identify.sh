#!/bin/sh
# Per-binary decisions (corral-policy(5), "BINARIES"), in host mode.
# Sets up: the test bed; a cgroup v2 folder the host proxy watches
# (host_proxy.cgroup); a policy whose github.com entry lets only git
# through, and whose example.com entry lets any binary through.
# Does: git clone and curl from processes placed in the cgroup, and curl
# from outside it.
# Expects: git passes and curl is refused for the same host, each named in
# the ledger with its executable; a process outside the watched cgroup
# cannot be identified, so binary-scoped entries refuse it; an entry for
# any binary needs no identification.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cgroot=/sys/fs/cgroup
elif [ -f /sys/fs/cgroup/unified/cgroup.controllers ]; then cgroot=/sys/fs/cgroup/unified
else echo "1..0 # SKIP no cgroup v2 hierarchy"; exit 0; fi
cg="$cgroot/corral-e2e-identify-$$"
corrald_pid=
cleanup() {
	[ -n "$corrald_pid" ] && kill "$corrald_pid" 2>/dev/null
	[ -d "$cg" ] && { echo 1 >"$cg/cgroup.kill" 2>/dev/null; sleep 0.2; rmdir "$cg"; }
	tb_down
}
trap cleanup EXIT
trap 'exit 1' INT TERM
tb_up || { echo "Bail out! no test bed"; exit 1; }
mkdir "$cg"

port=$(tb_free_port)
ledger="$TB_DIR/log/egress.jsonl"
cp "$(tb_ca_file)" "$TB_DIR/ca.pem" && chmod 0644 "$TB_DIR/ca.pem"
ca="$TB_DIR/ca.pem"
corral_file "$TB_DIR/policy.yaml" <<YAML
version: 1
network_policies:
  code:
    endpoints: [{host: github.com, port: 443}]
    binaries: [{path: /usr/bin/git}, {path: "/usr/lib/git-core/**"}]
  web:
    endpoints: [{host: example.com, port: 443}]
    binaries: [{path: "/**"}]
YAML
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
  policy: $TB_DIR/policy.yaml
  cgroup: $cg
YAML
# `ip netns exec` mounts a fresh /sys, which hides the cgroup hierarchies:
# corrald and the clients join the test host's network with nsenter.
in_host() {
	nsenter --net="/run/netns/$TB_HOST" env -u http_proxy -u https_proxy -u HTTPS_PROXY \
		-u HTTP_PROXY -u ALL_PROXY -u all_proxy -u SSL_CERT_FILE -u CURL_CA_BUNDLE \
		-u GIT_SSL_CAINFO "$@"
}
setsid nsenter --net="/run/netns/$TB_HOST" "$top_builddir/corrald" --foreground \
	--config "$TB_DIR/corrald.yaml" >"$TB_DIR/corrald.log" 2>&1 &
corrald_pid=$!
tb_wait_listen host "$port" || { echo "Bail out! corrald did not listen: $(cat "$TB_DIR/corrald.log")"; exit 1; }
sleep 0.5; kill -0 "$corrald_pid" || { echo "Bail out! corrald died: $(cat "$TB_DIR/corrald.log")"; exit 1; }
proxy="http://127.0.0.1:$port"

# in_cgroup CMD...: runs CMD in the test host, inside the watched cgroup.
in_cgroup() {
	in_host sh -c 'echo $$ >"$0/cgroup.procs" && shift && exec "$@"' "$cg" _ "$@"
}

in_cgroup git -c http.proxy="$proxy" -c http.sslCAInfo="$ca" \
	clone -q https://github.com/tb/repo.git "$TB_DIR/clone" >"$TB_DIR/git.out" 2>&1
rc=$?
check_eq "git, listed for github.com, clones through the proxy" 0 "$rc"
check_contains "the clone has the repository's files" "$(cat "$TB_DIR/clone/README" 2>&1)" \
	"corral test bed repository"

out=$(in_cgroup curl -sS --max-time 5 --cacert "$ca" --proxy "$proxy" https://github.com/zen 2>&1)
check_contains "curl, not listed for github.com, is refused" "$out" "403"
check_contains "the 403 body names the refused binary" \
	"$(printf 'CONNECT github.com:443 HTTP/1.1\r\nHost: github.com\r\n\r\n' | in_cgroup socat -t 2 - "TCP:127.0.0.1:$port")" \
	'"binary":"/usr/bin/socat","reason":"binary_not_allowed"'

out=$(in_cgroup curl -sS --max-time 5 --cacert "$ca" --proxy "$proxy" -o /dev/null \
	-w '%{http_code}' https://example.com/)
check_eq "any binary reaches an entry listed for any binary" 200 "$out"

out=$(in_host curl -sS --max-time 5 --cacert "$ca" --proxy "$proxy" -o /dev/null \
	-w '%{http_code}' https://example.com/)
check_eq "an entry for any binary needs no identification (outside the cgroup)" 200 "$out"
out=$(printf 'CONNECT github.com:443 HTTP/1.1\r\nHost: github.com\r\n\r\n' |
	in_host socat -t 2 - "TCP:127.0.0.1:$port")
check_contains "outside the watched cgroup, a binary-scoped entry refuses" "$out" \
	'"reason":"binary_not_identified"'

sleep 0.5
corral_ledger_has event=connect host=github.com decision=allow binary=/usr/lib/git-core/git-remote-http
check_eq "the ledger names git's helper for the allowed connection" 0 $?
corral_ledger_has event=connect host=github.com decision=deny binary=/usr/bin/curl reason=binary_not_allowed
check_eq "the ledger names curl for the refused one" 0 $?
check "the ledger's pid is the process that connected" python3 -c "
import json
recs = [r for r in map(json.loads, open('$ledger')) if r['binary'] == '/usr/bin/curl']
assert recs and all(isinstance(r['pid'], int) and r['pid'] > 1 for r in recs), recs"
out=$(in_host "$top_builddir/corral" --socket "$TB_DIR/corrald.sock" denials host --json)
check_contains "denials name the binary" "$out" '"binary":"/usr/bin/curl"'

# A binary's path is the agent's to choose: the denials show it escaped.
odd="$TB_DIR/odd-$(printf 'x\033]0;t\007')"
cp /usr/bin/curl "$odd"
in_cgroup "$odd" -sS --max-time 5 --cacert "$ca" --proxy "$proxy" https://github.com/zen >/dev/null 2>&1
out=$(in_host "$top_builddir/corral" --socket "$TB_DIR/corrald.sock" denials host)
check_contains "denials print a binary's control bytes escaped" "$out" \
	"$TB_DIR/odd-x\\x1b]0;t\\x07  binary_not_allowed"
check_eq "and no escape byte reaches the terminal" 0 "$(printf '%s' "$out" | tr -cd '\033\007' | wc -c)"
tap_done
