#!/bin/sh
# The proxy's limits (corrald.yaml(5)) against exhaustion.
# Sets up: the test bed; corrald in host mode allowing github.com with at
# most 20 tunnels for the tenant, and a descriptor limit of 96.
# Does: holds 20 idle tunnels open and asks for a 21st; then opens more
# connections than corrald has descriptors, and lets them go.
# Expects: the 21st is refused at once with 503 and a reason; with the
# descriptors exhausted corrald pauses accepting instead of spinning, and
# serves a normal client as soon as descriptors are free again.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ca=$(tb_ca_file)
corral_file "$TB_DIR/policy.yaml" <<YAML
version: 1
network_policies:
  code:
    endpoints: [{host: github.com, ports: [443, 2222]}]
    binaries: [{path: "/**"}]
YAML
corral_config "$TB_DIR/corrald.yaml" "max_tunnels_per_sandbox: 20" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
  policy: $TB_DIR/policy.yaml
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"

# hold N tunnels open for S seconds through the proxy, then report what the
# (N+1)th connection got back
tb_exec_host python3 - "$port" >"$TB_DIR/tunnels.out" 2>&1 <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held = []
for i in range(20):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"CONNECT github.com:2222 HTTP/1.1\r\nHost: github.com\r\n\r\n")
    answer = s.recv(200)
    if not answer.startswith(b"HTTP/1.1 200"):
        print("tunnel", i, "refused:", answer[:40])
    held.append(s)
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"CONNECT github.com:2222 HTTP/1.1\r\nHost: github.com\r\n\r\n")
start = time.time()
print("extra:", s.recv(400).decode(errors="replace").replace("\r\n", " | "))
print("extra_ms:", int((time.time() - start) * 1000))
for h in held:
    h.close()
PY
out=$(cat "$TB_DIR/tunnels.out")
check_lacks "20 tunnels fit the tenant's limit" "$out" "refused:"
check_contains "the 21st tunnel is refused with 503" "$out" "extra: HTTP/1.1 503"
check_contains "the refusal names the limit" "$out" "too_many_tunnels"
sleep 0.3
code=$(tb_exec_host curl -sS --max-time 5 --cacert "$ca" --proxy "http://127.0.0.1:$port" \
	-o /dev/null -w '%{http_code}' https://github.com/zen)
check_eq "once they close, a new tunnel works" 200 "$code"

# Exhaust the descriptors of a second corrald whose tunnel limit is above
# its descriptor limit: 150 connections that never send a byte.
port=$(tb_free_port)
sed -e "s|max_tunnels_per_sandbox: 20|max_tunnels_per_sandbox: 500|" \
    -e "s|corrald.sock|corrald2.sock|" -e "s|/log$|/log2|" -e "s|/state$|/state2|" \
    -e "s|listen: 127.0.0.1:.*|listen: 127.0.0.1:$port|" "$TB_DIR/corrald.yaml" >"$TB_DIR/corrald2.yaml"
chmod 0644 "$TB_DIR/corrald2.yaml"
tb_spawn_host corrald2 sh -c "ulimit -n 96 && exec '$top_builddir/corrald' --foreground --config '$TB_DIR/corrald2.yaml'"
tb_wait_listen host "$port" || { echo "Bail out! corrald2 did not listen: $(cat "$(tb_log corrald2)")"; exit 1; }
pid=$(tb_pid corrald2)
[ "$(cat "/proc/$pid/comm")" = corrald ] || { echo "Bail out! pid $pid is not corrald"; exit 1; }
cpu_before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
tb_exec_host python3 - "$port" >"$TB_DIR/flood.out" 2>&1 <<'PY' &
import socket, sys, time
conns = []
for _ in range(150):
    try:
        conns.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2))
    except OSError as e:
        print("connect:", e)
        break
print("open", len(conns), flush=True)
time.sleep(2)
PY
flood=$!
sleep 1.5
cpu_after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
[ $((cpu_after - cpu_before)) -lt 50 ]
tap_result $? "with descriptors exhausted corrald does not spin (used $((cpu_after - cpu_before)) ticks)"
check_contains "corrald says it paused accepting" "$(cat "$(tb_log corrald2)")" "out of descriptors"
wait "$flood"
sleep 0.5
code=$(tb_exec_host curl -sS --max-time 5 --cacert "$ca" --proxy "http://127.0.0.1:$port" \
	-o /dev/null -w '%{http_code}' https://github.com/zen)
check_eq "when they are gone, a normal client is served" 200 "$code"
kill -0 "$pid"; tap_result $? "corrald is still running"
tap_done
