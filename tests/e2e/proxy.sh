#!/bin/sh
# The egress proxy in host mode, against the test bed (tests/e2e/README.md):
# the decisions of corral-policy(5), the ledger of corral-ledger(5).
# Sets up: the bed; corrald in the test host namespace with a host-mode proxy
# on 127.0.0.1 whose policy allows github.com, api.github.com and a few
# rebinding names, with its ledger and socket in the bed's folder.
# Does: real curl, openssl s_client and socat through the proxy; policy
# updates through the control socket; a reload from a broken file.
# Expects: allowed hosts reach the bed's servers, refused ones get 403 with a
# reason and never a connection, every decision has its ledger record.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

corral="$top_builddir/corral"
port=$(tb_free_port)
sock="$TB_DIR/corrald.sock"
ledger="$TB_DIR/log/egress.jsonl"
ca=$(tb_ca_file)
probe="$top_srcdir/tests/e2e/lib/tcpprobe.py"

corral_file "$TB_DIR/host-policy.yaml" <<YAML
version: 1
network_policies:
  code:
    name: code
    endpoints:
      - {host: github.com, ports: [7, 80, 443, 2222, 7001]}
      - {host: api.github.com, port: 443}
    binaries: [{path: "/**"}]
  rebinding:
    name: rebinding
    endpoints:
      - {host: loopback.evil.test, port: 443}
      - {host: metadata.evil.test, port: 443}
      - {host: private.evil.test, port: 443}
      - {host: hostaddr.evil.test, port: 443}
      - {host: rebind.github.com, port: 443}
    binaries: [{path: "/**"}]
YAML
corral_config "$TB_DIR/corrald.yaml" "handshake_timeout_ms: 5000" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
  policy: $TB_DIR/host-policy.yaml
YAML

corral_start corrald "$TB_DIR/corrald.yaml" "$port"
proxy="http://127.0.0.1:$port"

# curl through the proxy from the test host; prints the body, or nothing.
via_proxy() {
	tb_exec_host curl -sS --max-time 5 --cacert "$ca" --proxy "$proxy" "$@" 2>/dev/null
}
# A raw CONNECT: prints the proxy's whole answer.
raw_connect() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" |
		tb_exec_host socat -t 2 - "TCP:127.0.0.1:$port" 2>/dev/null
}
ledger_sync() { sleep 0.3; }

out=$(via_proxy https://github.com/zen)
check_eq "an allowed host through CONNECT returns its body" "$TB_ZEN" "$out"
code=$(via_proxy -o /dev/null -w '%{http_code}' https://api.github.com/zen)
check_eq "another allowed host returns 200" 200 "$code"

out=$(raw_connect example.com:443)
check_contains "an unlisted host gets 403" "$out" "HTTP/1.1 403 Forbidden"
check_contains "the 403 body says why" "$out" '"reason":"host_not_allowed"'
check_contains "the 403 body names the port as a number" "$out" '"port":443'
check_contains "the 403 says what would allow it" "$out" "--add-endpoint example.com:443"
code=$(via_proxy -o /dev/null -w '%{http_code}' https://example.com/)
check_eq "curl to an unlisted host fails" 000 "$code"

out=$(raw_connect github.com:8443)
check_contains "a listed host on another port is refused" "$out" "HTTP/1.1 403"

for pair in loopback.evil.test:loopback metadata.evil.test:metadata \
    private.evil.test:internal hostaddr.evil.test:host_address rebind.github.com:loopback; do
	name=${pair%%:*}; reason=${pair#*:}
	out=$(raw_connect "$name:443")
	check_contains "an allowed name resolving to $reason is refused" "$out" "\"reason\":\"$reason\""
done

for spelling in 127.1:443 2130706433:443 0x7f.0.0.1:443 0177.0.0.1:443 127.0.0.1:443 \
    '[::ffff:127.0.0.1]:443' 'github.com@evil.com:443' 'github.com%2f:443'; do
	out=$(raw_connect "$spelling")
	case "$out" in
	"HTTP/1.1 400"*|"HTTP/1.1 403"*) tap_result 0 "CONNECT $spelling is refused" ;;
	*) tap_result 1 "CONNECT $spelling is refused" "$out" ;;
	esac
done

out=$(raw_connect GitHub.COM.:443 | head -1)
check_contains "upper case and a trailing dot are the same host" "$out" "200 Connection established"

out=$(via_proxy http://github.com/zen)
check_eq "plain HTTP in absolute form is forwarded" "$TB_ZEN" "$out"
out=$(via_proxy -o /dev/null -w '%{http_code}' http://example.com/)
check_eq "plain HTTP to an unlisted host gets 403" 403 "$out"
out=$(printf 'GET http://github.com/zen HTTP/1.1\r\nHost: github.com\r\n\r\nGET http://github.com/echo HTTP/1.1\r\nHost: evil.com\r\n\r\n' |
	tb_exec_host socat -t 3 - "TCP:127.0.0.1:$port")
check_contains "a forwarded request is answered" "$out" "$TB_ZEN"
check_lacks "a second request pipelined on the connection goes nowhere" "$out" "evil.com"
out=$(via_proxy -w ' %{num_connects}' http://github.com/zen http://github.com/zen)
check_eq "two plain requests in a row both answered: the upstream closes after one, the client opens another" \
	"$TB_ZEN 1$TB_ZEN 1" "$(echo "$out" | tr -d '\n')"

out=$(tb_exec_host openssl s_client -proxy "127.0.0.1:$port" -connect github.com:443 \
	-servername evil.com -CAfile "$ca" </dev/null 2>&1 | head -40)
check_contains "a ClientHello naming another host gets no certificate" "$out" "no peer certificate available"
out=$(tb_exec_host openssl s_client -proxy "127.0.0.1:$port" -connect github.com:443 \
	-servername github.com -CAfile "$ca" </dev/null 2>&1 | head -40)
check_contains "the same ClientHello naming the CONNECT host gets the server's certificate" \
	"$out" "subject="
ledger_sync
corral_ledger_has event=connect host=github.com decision=deny reason=sni_mismatch
check_eq "the SNI mismatch is in the ledger" 0 $?

out=$(printf 'hi\n' | tb_exec_host socat -t 2 - "PROXY:127.0.0.1:github.com:2222,proxyport=$port" 2>&1)
check_contains "a server-speaks-first service works through CONNECT" "$out" "SSH-2.0-corral_testbed"
check_contains "and the client's bytes reach it" "$out" "hi"

# Half-closes pass through: the client's end of file reaches the echo
# service (port 7), whose whole answer comes back before the tunnel ends.
out=$(tb_exec_host python3 "$probe" echo-whole "127.0.0.1:$port" 1048576 --connect github.com:7 2>&1)
check_eq "1 MiB sent then half-closed comes back whole from the echo service, then the end" \
	"HTTP/1.1 200 Connection established 1048576 True" "$out"
# bytes_down: the echo and the proxy's 39-byte "200 Connection established".
corral_ledger_wait event=close host=github.com port=7 bytes_up=1048576 bytes_down=1048615
rc=$?
[ "$rc" = 0 ] || grep '"port":7,' "$ledger" | sed 's/^/# /'
check_eq "its close record counts the bytes both ways" 0 "$rc"

# The relay writes what it reads at once. With Nagle's algorithm on the
# client's socket, a small piece waits while the one before is not acked,
# and a client that has just sent delays its ACK (40 ms): an upstream that
# answers each request in two small writes 2 ms apart (port 7001 here, as
# a TLS server's handshake flight may come) would take 40 ms a round.
tb_spawn_inet twice python3 "$probe" twice-server 0.0.0.0 7001
tb_wait_listen inet 7001
out=$(tb_exec_host python3 "$probe" rounds "127.0.0.1:$port" --connect github.com:7001 2>&1)
check_eq "a request answered in two small writes waits for no delayed ACK (median of 15 rounds under 20 ms)" \
	ok "$([ "$out" -lt 20 ] 2>/dev/null && echo ok || echo "$out")"
tb_stop twice

big=$(via_proxy -o /dev/null -w '%{size_download}' https://github.com/big)
check_eq "a 1 MiB body passes whole" "$TB_BIG_BYTES" "$big"

# Denials, straight from memory.
since=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
raw_connect pypi.org:443 >/dev/null
out=$(tb_exec_host "$corral" --socket "$sock" denials host --since "$since" --json)
check_contains "denials lists what was just refused" "$out" '"host":"pypi.org","port":443'
check_lacks "denials leaves out what came before --since" "$out" '"host":"example.com"'

# Policy changes through the control socket are in force on return.
out=$(tb_exec_host "$corral" --socket "$sock" policy update host --add-endpoint example.com:443)
check_contains "policy update answers" "$out" "in force now"
code=$(via_proxy -o /dev/null -w '%{http_code}' https://example.com/)
check_eq "an added host works right after the command returns" 200 "$code"

printf 'version: 1\nnetwork_policies:\n  x:\n    endpoints: [{host: "*.com", port: 443}]\n    binaries: []\n    bogus: 1\n' >"$TB_DIR/broken.yaml"
tb_exec_host "$corral" --socket "$sock" policy set host "$TB_DIR/broken.yaml" >/dev/null 2>"$TB_DIR/err"
rc=$?
check_eq "a broken policy is refused" 1 "$rc"
check_contains "the refusal names line and column" "$(cat "$TB_DIR/err")" "<policy set>:4:24: host '*.com'"
code=$(via_proxy -o /dev/null -w '%{http_code}' https://example.com/)
check_eq "a refused policy changes nothing" 200 "$code"

cp "$TB_DIR/broken.yaml" "$TB_DIR/host-policy.yaml"
kill -HUP "$(tb_pid corrald)"; sleep 0.3
code=$(via_proxy -o /dev/null -w '%{http_code}' https://github.com/zen)
check_eq "a SIGHUP reload from a broken file changes nothing" 200 "$code"
check_contains "the broken reload is logged with its position" "$(cat "$(tb_log corrald)")" "host-policy.yaml:4:24"

# A tunnel open across a change that revokes it.
tb_exec_host sh -c "sleep 3 | socat -t 5 - PROXY:127.0.0.1:github.com:2222,proxyport=$port" \
	>"$TB_DIR/long.out" 2>&1 &
long=$!
sleep 0.5
tb_exec_host "$corral" --socket "$sock" policy update host --remove-endpoint github.com:2222 \
	--close-revoked >/dev/null
wait "$long"
ledger_sync
corral_ledger_has event=close host=github.com port=2222 reason=revoked_by_policy_change
check_eq "--close-revoked closes a tunnel the new policy refuses" 0 $?

# Slowloris: 200 connections holding their headers open.
tb_exec_host python3 - "$port" >"$TB_DIR/slow.out" 2>&1 <<'PY' &
import socket, sys, time
conns = []
for _ in range(200):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.send(b"CONNECT github.com:443 HTTP/1.1\r\nHost: git")
    conns.append(s)
print("open", len(conns), flush=True)
time.sleep(4)
PY
slow=$!
sleep 1
start=$(date +%s%N)
out=$(via_proxy https://github.com/zen)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check_eq "a normal client passes while 200 slow ones hold headers" "$TB_ZEN" "$out"
[ "$ms" -lt 1000 ]; tap_result $? "and is not delayed (took ${ms} ms)"
wait "$slow"

ledger_sync
check "every ledger line is a JSON object with corral-ledger(5)'s fields" python3 -c "
import json, sys
keys = ['ts','event','id','sandbox','session_id','agent','run','pid','binary','mode','host',
        'port','ip','decision','policy','reason','bytes_up','bytes_down','duration_ms']
for line in open('$ledger'):
    rec = json.loads(line)
    assert list(rec) == keys, list(rec)
"
corral_ledger_has event=connect host=github.com decision=allow mode=connect policy=code
check_eq "an allowed CONNECT has its connect record" 0 $?
check "an allowed connection's close record has its bytes" python3 -c "
import json
ok = any(r['event'] == 'close' and r['host'] == 'github.com' and r['bytes_down'] > 1000000
         for r in map(json.loads, open('$ledger')))
assert ok"
corral_ledger_has event=connect host=example.com decision=deny reason=host_not_allowed
check_eq "a refusal has its deny record" 0 $?
corral_ledger_has event=connect host=github.com mode=forward decision=allow
check_eq "plain HTTP through the proxy is recorded in forward mode" 0 $?

mark=$(tb_dns_log_lines)
raw_connect secret-data.evil.com:443 >/dev/null
tb_dns_queried secret-data.evil.com "$mark"; rc=$?
check_eq "a refused name is never sent to the DNS server" 1 "$rc"

out=$(tb_exec_host "$corral" --socket "$sock" status)
check_contains "status is Connected with a daemon" "$out" "Status: Connected"

kill -TERM "$(tb_pid corrald)"
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$(tb_pid corrald)" 2>/dev/null || break; sleep 0.2; done
kill -0 "$(tb_pid corrald)" 2>/dev/null; rc=$?
check_eq "SIGTERM stops corrald" 1 "$rc"
[ ! -e "$sock" ]; tap_result $? "and removes its socket"
# Under the sanitizers' build, a leak or undefined behaviour shows in the log.
check_lacks "corrald's log has no sanitizer report" "$(cat "$(tb_log corrald)")" "Sanitizer"
check_lacks "corrald's log has no undefined behaviour" "$(cat "$(tb_log corrald)")" "runtime error"
tap_done
