#!/bin/sh
# Bypass records: what the fence rejects outright reaches the ledger
# (corral-ledger(5), "bypass"), rate-limited per sandbox.
# Sets up: the test bed; corrald in the test host with its metrics on a
# loopback port; sandboxes ba and bb (strict) on a workspace of uid 1000.
# Does: from inside ba, a UDP datagram to the fake internet, UDP to the
# gateway on a port it does not serve, UDP to another sandbox's address,
# then a burst of 300 datagrams; then one datagram from bb.
# Expects: a bypass record for each (ip, port, reason, bytes, no pid), in
# ba's denials too; the burst recorded no more than its rate limit allows;
# bb's datagram recorded all the same; a datagram from bb's address sent
# inside ba is ba's; another host user sees none of ba's; nothing reached
# the UDP sink; the metrics count the records.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

BURST=300               # datagrams sent at once
LIMIT_BURST=20          # the fence's per-sandbox burst (fence.c)
mport=$(tb_free_port)
corral_up <<YAML
metrics:
  listen: 127.0.0.1:$mport
YAML
corral() { corral_cli "$@"; }
ws=$CORRAL_WS
corral sandbox create --root "$ws" --name ba >/dev/null &&
	corral sandbox create --root "$ws" --name bb >/dev/null ||
	{ echo "Bail out! cannot create the sandboxes"; exit 1; }
field_of() {
	corral sandbox get "$1" --json |
		python3 -c "import json,sys; print(json.load(sys.stdin)['network']['$2'])"
}
gwa=$(field_of ba gateway)
# A sandbox's address is its gateway's /30 neighbour (.1 the gateway, .2 it).
addrb=$(field_of bb gateway | awk -F. '{ printf "%s.%s.%s.%d", $1, $2, $3, $4 + 1 }')

# send SANDBOX HOST PORT [COUNT]: COUNT datagrams (1) from inside.
send() {
	corral exec "$1" -- python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[3])):
    try: s.sendto(b"corral-bypass", (sys.argv[1], int(sys.argv[2])))
    except OSError: pass' "$2" "$3" "${4:-1}" >/dev/null 2>&1
}
# records KEY=VALUE...: how many of the ledger's records match every pair.
records() { corral_ledger_count "$@"; }
# wait_records N KEY=VALUE...: waits (5 s at most) for N such records.
wait_records() {
	_want=$1
	shift
	for _i in $(seq 50); do
		[ "$(records "$@")" -ge "$_want" ] && return 0
		sleep 0.1
	done
	return 1
}

send ba 198.18.1.1 9
wait_records 1 event=bypass sandbox=ba ip=198.18.1.1 port=9 reason=udp_not_allowed
tap_result $? "a UDP datagram to the fake internet is a bypass record (ip, port, reason)"
out=$(python3 - "$TB_DIR/log/egress.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["event"] == "bypass" and r["port"] == 9:
        print(r["bytes_up"], r["pid"], r["binary"], r["decision"], r["mode"], r["host"])
        break
PY
)
check_eq "... with the packet's IP length (28 + 13), and no pid, binary, decision, mode or host" \
	"41 None None None None None" "$out"
out=$(corral logs --sandbox ba)
check_contains "... and corral logs shows its address, port and reason" "$out" \
	"198.18.1.1:9  -  -  udp_not_allowed"
out=$(corral denials ba --since 1m --json)
check_contains "... and it is in ba's denials" "$out" '"reason":"udp_not_allowed"'

send ba "$gwa" 5353
wait_records 1 event=bypass sandbox=ba ip="$gwa" port=5353 reason=udp_not_allowed
tap_result $? "UDP to the gateway on a port it does not serve is a bypass record"
send ba "$addrb" 5000
wait_records 1 event=bypass sandbox=ba ip="$addrb" port=5000 reason=udp_not_allowed
tap_result $? "UDP to another sandbox's address is a bypass record of the sender"
check_eq "... and none is written for the other sandbox" 0 "$(records event=bypass sandbox=bb)"
# Attack: blame the neighbour. A socket bound to bb's address (IP_FREEBIND
# needs no privilege) sends from inside ba: the record is still ba's, as
# the interface it came in on says.
forged=$(corral exec ba -- python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 15, 1)      # IP_FREEBIND
try:
    s.bind((sys.argv[1], 0)); s.sendto(b"forged", ("198.18.1.1", 6)); print("sent")
except OSError as e: print("refused", e.errno)' "$addrb" 2>&1)
sleep 0.5
# Either the kernel refuses the foreign source, or the packet is ba's.
case $forged in
refused*) ok=0 ;;
sent) [ "$(records event=bypass sandbox=ba port=6)" -ge 1 ]; ok=$? ;;
*) ok=1 ;;
esac
tap_result $ok "a datagram from bb's address sent inside ba is refused or recorded as ba's ($forged)"
check_eq "a datagram sent from bb's address is never bb's record" 0 "$(records event=bypass sandbox=bb)"
# From the host, another user in the socket's group sees none of it.
chmod 0666 "$CORRAL_SOCK"
out=$(tb_exec_host setpriv --reuid=65534 --regid=65534 --clear-groups "$top_builddir/corral" \
	--socket "$CORRAL_SOCK" denials ba --json 2>&1)
check_eq "another user is not told ba exists (not found: 3), so not its refused packets" 3 "$?"
check_lacks "... and reads no address of them" "$out" "198.18.1.1"
check_contains "while ba's owner does" "$(corral denials ba --json)" '"host":"198.18.1.1"'
chmod 0660 "$CORRAL_SOCK"

send ba 198.18.1.1 7 "$BURST"
wait_records 10 event=bypass sandbox=ba port=7
tap_result $? "a burst of $BURST datagrams gives records"
sleep 1
n=$(records event=bypass sandbox=ba port=7)
[ "$n" -le $((LIMIT_BURST + 15)) ] && [ "$n" -lt "$BURST" ]
tap_result $? "... no more than the rate limit lets through ($n of $BURST)"
send bb 198.18.1.1 8
wait_records 1 event=bypass sandbox=bb port=8
tap_result $? "another sandbox's datagram right after the burst is recorded all the same"
check_eq "nothing reached the bed's UDP sink" 0 "$(wc -c <"$(tb_udp_log)")"

total=$(records event=bypass)
out=$(tb_exec_host curl -sS "http://127.0.0.1:$mport/metrics")
got=$(echo "$out" | awk '/^corral_bypass_packets_total/ { s += $2 } END { print s + 0 }')
check_eq "the metrics count every bypass record" "$total" "$got"
check_contains "... by reason" "$out" "corral_bypass_packets_total{reason=\"udp_not_allowed\"} $total"
check_contains "... and none was lost on the way (the burst was cut by the kernel's limit, not dropped)" \
	"$out" "corral_bypass_lost_total 0"

corral sandbox delete ba >/dev/null
corral sandbox delete bb >/dev/null
tap_done
