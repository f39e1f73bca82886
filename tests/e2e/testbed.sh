#!/bin/sh
# The end-to-end test bed checks itself before anything is tested in it.
# Sets up: the bed of tests/e2e/lib/testbed.sh (a fake internet namespace
# with dnsmasq, nginx and socat services; a test host namespace routed only
# to it), twice, and a fake leftover of a crashed run.
# Does: DNS, HTTPS, HTTP, git, banner, echo and UDP from the test host;
# a connection to an address outside the bed; tb_down; tb_reap_stale.
# Expects: the names' addresses and bodies of README.md, "Network is
# unreachable" at once outside 198.18.0.0/15, and nothing left behind.
# shellcheck source=tests/lib/tap.sh disable=SC2154
. "$top_srcdir/tests/lib/tap.sh"
# shellcheck source=tests/e2e/lib/testbed.sh
. "$top_srcdir/tests/e2e/lib/testbed.sh"
tb_need_root
tb_install_traps

UNREACHABLE_MAX_MS=1000     # "at once": a refusal, not a timeout
CLIENT_MAX_S=5              # every client call is bounded by this

# pids_alive PID...: prints the ones still running.
pids_alive() {
	for p in "$@"; do _tb_alive "$p" && printf '%s ' "$p"; done
}

# bed_pids: every process the bed started or that runs in its namespaces.
bed_pids() {
	cat "$TB_DIR"/pids/*.pid 2>/dev/null
	ip netns pids "$TB_INET" 2>/dev/null
	ip netns pids "$TB_HOST" 2>/dev/null
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# --- first cycle -------------------------------------------------------
err=$(mktemp /tmp/ctb-test-err.XXXXXX)
tb_up 2>"$err"; rc=$?
check_eq "tb_up builds the bed" 0 "$rc"
[ "$rc" -eq 0 ] || { sed 's/^/# /' "$err"; rm -f "$err"; echo "Bail out! no bed"; exit 1; }
rm -f "$err"
netns=$(ip netns list)
check_contains "the fake internet namespace exists" "$netns" "$TB_INET"
check_contains "the test host namespace exists" "$netns" "$TB_HOST"
check_lacks "the bed's veth is not in the machine's namespace" \
	"$(ip -o link show)" "$TB_HOST_IF"

# DNS, straight to the server and through the host's resolv.conf.
dig_host() { tb_exec_host dig @"$TB_DNS_ADDR" +time=2 +tries=1 "$@"; }
check_eq "dig github.com gives its address" "198.18.1.1" "$(dig_host github.com +short)"
check_eq "dig over TCP works" "198.18.1.2" "$(dig_host +tcp api.github.com +short)"
check_eq "a rebinding name answers the metadata address" "169.254.169.254" \
	"$(dig_host metadata.evil.test +short)"
check_eq "an allowed-looking name answers loopback" "127.0.0.1" \
	"$(dig_host rebind.github.com +short)"
check_eq "hostaddr.evil.test answers the test host's own address" "$TB_HOST_ADDR" \
	"$(dig_host hostaddr.evil.test +short)"
check_eq "the NAT64 name answers AAAA" "64:ff9b::7f00:1" \
	"$(dig_host AAAA nat64.evil.test +short)"
check_eq "the TXT name answers its text" '"corral test bed"' \
	"$(dig_host TXT txt.example.com +short)"
check_contains "an unknown name is NXDOMAIN" "$(dig_host secret.evil.com)" "status: NXDOMAIN"
check_eq "tb_addr reads names.conf" "198.18.1.5" "$(tb_addr registry.npmjs.org)"
check_eq "the host namespace resolves through the bed" "198.18.1.3 example.com" \
	"$(tb_exec_host getent ahostsv4 example.com | awk '$2 == "STREAM" { print $1, $3 }')"

# HTTPS and HTTP, by name through the bed's DNS.
curl_host() { tb_exec_host curl -sS --max-time "$CLIENT_MAX_S" "$@"; }
out=$(curl_host --cacert "$(tb_ca_file)" -w '%{http_code}' https://github.com/zen)
check_eq "curl https://github.com/zen with the test CA gives 200 and the body" \
	"$TB_ZEN
200" "$out"
out=$(curl_host --cacert "$(tb_ca_file)" https://api.github.com/)
check_eq "every server name has a certificate" "hello from api.github.com" "$out"
curl_host https://github.com/zen >/dev/null 2>&1; rc=$?
check_eq "without the test CA the certificate is refused (curl exit 60)" 60 "$rc"
check_eq "plain HTTP answers on port 80" "hello from example.com" \
	"$(curl_host http://example.com/)"
check_eq "the refused-by-policy server is a real one" "hello from evil.com" \
	"$(curl_host --cacert "$(tb_ca_file)" https://evil.com/)"
check_eq "/big is $TB_BIG_BYTES bytes" "$TB_BIG_BYTES" \
	"$(curl_host --cacert "$(tb_ca_file)" -o /dev/null -w '%{size_download}' https://pypi.org/big)"
check_contains "nginx logs each request" "$(cat "$(tb_http_log)")" \
	'198.18.1.1:443 https github.com "GET /zen HTTP/2.0" 200'
tb_exec_host git -c http.sslCAInfo="$(tb_ca_file)" -c http.lowSpeedTime="$CLIENT_MAX_S" \
	clone -q https://github.com/tb/repo.git "$TB_DIR/clone" >/dev/null 2>&1
check_eq "git clone over HTTPS works" "corral test bed repository" \
	"$(cat "$TB_DIR/clone/README" 2>/dev/null)"

# The other services.
out=$(tb_exec_host socat -T "$CLIENT_MAX_S" TCP:198.18.1.1:2222 - </dev/null | tr -d '\r')
check_eq "the banner service speaks first" "$TB_BANNER" "$out"
check_eq "the echo service echoes" "ping" \
	"$(echo ping | tb_exec_host socat -T "$CLIENT_MAX_S" - TCP:198.18.1.3:7)"
echo datagram | tb_exec_host socat -u - UDP-SENDTO:198.18.1.4:9
i=0
while [ "$i" -lt 20 ] && ! grep -q datagram "$(tb_udp_log)" 2>/dev/null; do
	sleep 0.1; i=$((i + 1))
done
check_eq "the UDP sink records a datagram" "datagram" "$(cat "$(tb_udp_log)" 2>/dev/null)"

check "the query log shows github.com" tb_dns_queried github.com
check "the query log is case-insensitive" tb_dns_queried GitHub.COM
mark=$(tb_dns_log_lines)
dig_host never-asked-before.test >/dev/null
check "a later query is found after the mark" tb_dns_queried never-asked-before.test "$mark"
if tb_dns_queried github.com "$mark"; then rc=0; else rc=1; fi
check_eq "an earlier query is not found after the mark" 1 "$rc"
if tb_dns_queried nobody-asked.test; then rc=0; else rc=1; fi
check_eq "a name nobody asked is not in the query log" 1 "$rc"

# Sealed: one route, inside the bed; everything else unreachable at once.
check_eq "the host namespace has one IPv4 route, to 198.18.0.0/15" \
	"198.18.0.0/15 dev $TB_HOST_IF" "$(tb_exec_host ip -4 route show | awk '{ print $1, $2, $3 }')"
check_eq "the host namespace has no default route" "" \
	"$(tb_exec_host ip route show default; tb_exec_host ip -6 route show default)"
check_eq "the host namespace has no IPv6 route" "" "$(tb_exec_host ip -6 route show)"
check_eq "the fake internet has no route out either" "" \
	"$(tb_exec_inet ip route show default; tb_exec_inet ip -6 route show default)"
start=$(now_ms)
out=$(curl_host -v --max-time 2 http://192.0.2.1/ 2>&1); rc=$?
elapsed=$(( $(now_ms) - start ))
check_eq "curl to an address outside the bed fails to connect (exit 7)" 7 "$rc"
check_contains "it fails with network unreachable" "$out" "Network is unreachable"
check "it fails at once (${elapsed} ms)" [ "$elapsed" -lt "$UNREACHABLE_MAX_MS" ]
check_contains "IPv6 outside the bed is unreachable too" \
	"$(curl_host -v --max-time 2 'http://[2001:db8::1]/' 2>&1)" "Network is unreachable"

# Spawning in the host namespace.
port=$(tb_free_port)
check "tb_free_port gives a port" [ -n "$port" ]
tb_spawn_host listener socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr EXEC:cat
pid=$(tb_pid listener)
check_eq "tb_spawn_host records the pid" "$TB_LAST_PID" "$pid"
check "the spawned process listens in the host namespace" tb_wait_listen host "$port"
check_eq "the spawned process runs in the host namespace" "$TB_HOST" "$(ip netns identify "$pid")"
check_eq "the spawned process leads its own process group" "$pid" \
	"$(ps -o pgid= -p "$pid" | tr -d ' ')"
tb_spawn_host sleeper sleep 60
sleeper=$(tb_pid sleeper)
tb_stop sleeper
check_eq "tb_stop ends one process" "" "$(pids_alive "$sleeper")"

# Down: nothing left.
pids=$(bed_pids | sort -u)
dir=$TB_DIR inet=$TB_INET host=$TB_HOST
tb_down
# shellcheck disable=SC2086 # one argument per pid
check_eq "tb_down leaves no process of the bed" "" "$(pids_alive $pids)"
netns=$(ip netns list)
check_lacks "tb_down removes the fake internet namespace" "$netns" "$inet"
check_lacks "tb_down removes the test host namespace" "$netns" "$host"
check "tb_down removes the temporary folder" [ ! -e "$dir" ]
check "tb_down removes the host's resolv.conf" [ ! -e "/etc/netns/$host" ]
check "tb_down again does nothing and succeeds" tb_down

# --- second cycle ------------------------------------------------------
tb_up 2>/dev/null; rc=$?
check_eq "a second tb_up works" 0 "$rc"
out=$(curl_host --cacert "$(tb_ca_file)" https://gitlab.com/zen)
check_eq "the second bed serves HTTPS" "$TB_ZEN" "$out"
pids=$(bed_pids | sort -u)
inet=$TB_INET
tb_down
# shellcheck disable=SC2086 # one argument per pid
check_eq "the second tb_down leaves no process" "" "$(pids_alive $pids)"
check_lacks "the second tb_down leaves no namespace" "$(ip netns list)" "$inet"

# --- leftovers of a crashed run ------------------------------------------
sh -c 'exit 0' & dead=$!
wait "$dead"
stale=ctb$dead-inet
ip netns add "$stale"
ip netns exec "$stale" setsid sleep 60 >/dev/null 2>&1 </dev/null & stale_pid=$!
stale_dir=$(mktemp -d "/tmp/ctb$dead.XXXXXX")
mkdir -p "/etc/netns/$stale"
i=0
while [ "$i" -lt 20 ] && [ "$(ip netns identify "$stale_pid" 2>/dev/null)" != "$stale" ]; do
	sleep 0.1; i=$((i + 1))
done
tb_reap_stale
check_lacks "tb_reap_stale removes a dead run's namespace" "$(ip netns list)" "$stale"
check_eq "tb_reap_stale kills what ran in it" "" "$(pids_alive "$stale_pid")"
check "tb_reap_stale removes a dead run's folder" [ ! -e "$stale_dir" ]
check "tb_reap_stale removes a dead run's /etc/netns entry" [ ! -e "/etc/netns/$stale" ]
# Our own leftovers if a check above failed.
_tb_alive "$stale_pid" && kill -KILL "$stale_pid"
ip netns del "$stale" 2>/dev/null
rm -rf "$stale_dir" "/etc/netns/$stale"

tap_done
