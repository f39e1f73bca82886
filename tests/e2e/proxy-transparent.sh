#!/bin/sh
# The transparent entry (ARCHITECTURE.md, "A connection's life"), in host mode.
# Sets up: the test bed; corrald with a transparent listener on loopback;
# an nftables rule in the test host that redirects the TCP connections of
# uid 65534 to ports 80, 443 and 2222 to it (an operator's host-mode setup).
# Does: curl as uid 65534 with no proxy settings, to allowed and unlisted
# names, by address, and with a forged address for an allowed name.
# Expects: the name comes from the ClientHello's SNI or the Host header;
# unlisted names never connect; no name, no connection; the proxy dials the
# address it resolved, never the one the client chose; every decision has
# its ledger record.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
tport=$(tb_free_port)
ledger="$TB_DIR/log/egress.jsonl"
cp "$(tb_ca_file)" "$TB_DIR/ca.pem" && chmod 0644 "$TB_DIR/ca.pem"
ca="$TB_DIR/ca.pem"
corral_file "$TB_DIR/policy.yaml" <<YAML
version: 1
network_policies:
  code:
    endpoints: [{host: github.com, ports: [80, 443]}]
    binaries: [{path: "/**"}]
YAML
corral_config "$TB_DIR/corrald.yaml" "handshake_timeout_ms: 3000" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
  transparent: 127.0.0.1:$tport
  policy: $TB_DIR/policy.yaml
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$tport"
tb_exec_host nft -f - <<NFT || { echo "Bail out! cannot add the redirect rule"; exit 1; }
table ip corral_test_redirect {
	chain out {
		type nat hook output priority -100; policy accept;
		meta skuid 65534 tcp dport { 80, 443, 2222 } redirect to :$tport
	}
}
NFT

# curl as uid 65534, no proxy: prints the body, or nothing.
agent_curl() {
	tb_exec_host setpriv --reuid=65534 --regid=65534 --clear-groups \
		curl -sS --max-time 5 --cacert "$ca" --noproxy '*' "$@" 2>/dev/null
}

out=$(agent_curl https://github.com/zen)
check_eq "TLS to an allowed name passes, named by its SNI" "$TB_ZEN" "$out"
out=$(agent_curl http://github.com/zen)
check_eq "plain HTTP to an allowed name passes, named by its Host" "$TB_ZEN" "$out"
out=$(agent_curl -w ' %{num_connects}' http://github.com/zen http://github.com/zen)
check_eq "and a second request after it is answered too, on a connection of its own" \
	"$TB_ZEN 1$TB_ZEN 1" "$(echo "$out" | tr -d '\n')"
code=$(agent_curl -o /dev/null -w '%{http_code}' https://example.com/)
check_eq "TLS to an unlisted name never connects" 000 "$code"
code=$(agent_curl -o /dev/null -w '%{http_code}' http://example.com/)
check_eq "plain HTTP to an unlisted name gets 403" 403 "$code"
code=$(agent_curl -k -o /dev/null -w '%{http_code}' "https://$(tb_addr example.com)/")
check_eq "a connection with no name (an address, no SNI) never connects" 000 "$code"

# The client forges github.com's address as evil.com's: the proxy dials
# the address it resolved for github.com itself.
mark=$(wc -l <"$(tb_http_log)")
out=$(agent_curl --resolve "github.com:443:$(tb_addr evil.com)" https://github.com/zen)
check_eq "a forged address for an allowed name still reaches the allowed host" "$TB_ZEN" "$out"
sleep 0.3
last=$(tail -n +"$((mark + 1))" "$(tb_http_log)")
check_contains "the request arrived at the address corral resolved" "$last" "$(tb_addr github.com):443"
check_lacks "and never at the address the client chose" "$last" "$(tb_addr evil.com):443"

out=$(printf 'GET /zen HTTP/1.1\r\nHost: github.com\r\n\r\nGET /echo HTTP/1.1\r\nHost: evil.com\r\n\r\n' |
	tb_exec_host setpriv --reuid=65534 --regid=65534 --clear-groups \
	socat -t 3 - "TCP:$(tb_addr github.com):80")
check_contains "a transparent HTTP request is answered" "$out" "$TB_ZEN"
check_lacks "a second request on the connection goes nowhere" "$out" "evil.com"

sleep 0.5
corral_ledger_has event=connect host=github.com mode=sni decision=allow port=443
check_eq "the SNI connection is recorded in sni mode" 0 $?
corral_ledger_has event=connect host=github.com mode=http decision=allow port=80
check_eq "the Host connection is recorded in http mode" 0 $?
corral_ledger_has event=connect host=example.com mode=sni decision=deny reason=host_not_allowed
check_eq "the refused TLS connection is recorded" 0 $?
corral_ledger_has event=connect mode=tcp decision=deny reason=no_name_for_address
check_eq "the nameless connection is recorded with its reason" 0 $?
corral_ledger_has event=connect host=github.com mode=sni ip="$(tb_addr github.com)"
check_eq "the ledger names the address corral dialled" 0 $?
tap_done
