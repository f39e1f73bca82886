#!/bin/sh
# Port forwarding (corral(1), "forward"): a service on a sandbox's
# loopback, reached from the host by the sandbox's owner, and by no one
# else.
# Sets up: the test bed; local users ctest-fo (the owner, uid 1141) and
# ctest-fx (another user, uid 1142), removed at the end unless they were
# there; corrald in the test host, its control socket opened to every
# local user; a strict sandbox fw of ctest-fo's, running python's
# http.server on 127.0.0.1:8000 and on [::1]:8002, an echo service on 8003
# and a two-write answerer on 8004 inside.
# Does: as the owner, corral forward to port 8000 (host port chosen by the
# kernel), to a Unix socket, to 8002 (::1 only) and to a port where nothing
# listens; fetches through them as the owner and as the other user; tries
# the other user's own forward into fw; lists; deletes fw under a forward.
# Expects: the owner's fetches return the page inside, the other user's
# get nothing (refused by the forward, recorded as not_owner; the Unix
# socket is mode 0600); the other user cannot open a forward into fw (3);
# inbound records with bytes; --list shows the owner's forward with its
# counts and nothing to the other user; a deleted sandbox ends the forward
# with 6; a forward stopped leaves no listener and no socket file.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

UID_O=1141
UID_X=1142
WAIT_TENTHS=100

corral_install_traps
corral_user_make ctest-fo "$UID_O"
corral_user_make ctest-fx "$UID_X"
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }
ws="$TB_DIR/fo"
mkdir -p "$ws" "$TB_DIR/fo-sock"
echo "hello from inside fw" >"$ws/index.html"
chown -R ctest-fo:ctest-fo "$ws" "$TB_DIR/fo-sock"
chmod 0700 "$ws"
chmod 0755 "$TB_DIR" "$TB_DIR/fo-sock"
port=$(tb_free_port)
corral_start_shared "$port"
as_o() { corral_as "$UID_O" "$@"; }
as_x() { corral_as "$UID_X" "$@"; }
# host_as UID CMD...: CMD in the test host as UID.
host_as() {
	_u=$1
	shift
	tb_exec_host setpriv --reuid="$_u" --regid="$_u" --clear-groups "$@"
}
ledger="$TB_DIR/log/egress.jsonl"
# records KEY=VALUE...: the ledger's records matching every pair.
records() { corral_ledger_count "$@"; }
# wait_for TEST...: waits (10 s at most) until TEST succeeds.
wait_for() {
	_i=0
	until "$@"; do
		[ "$_i" -ge "$WAIT_TENTHS" ] && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}
# forward NAME ARGS...: corral forward ARGS as the owner, in the background
# (tb_stop NAME ends it); its "forwarding ADDR ..." line in its log.
forward() {
	_n=$1
	shift
	tb_spawn_host "$_n" setpriv --reuid="$UID_O" --regid="$UID_O" --clear-groups \
		"$top_builddir/corral" --socket "$CORRAL_SOCK" forward "$@"
}
forwarding() { grep -q '^forwarding ' "$(tb_log "$1")" 2>/dev/null; }
listen_of() { sed -n 's/^forwarding \([^ ]*\) to .*/\1/p' "$(tb_log "$1")"; }

as_o sandbox create --root "$ws" --name fw >/dev/null ||
	{ echo "Bail out! cannot create fw"; exit 1; }
# An echo service that writes back as it reads: a relay that stops one
# direction while the other waits would deadlock on it.
cat >"$ws/echo.py" <<'PY'
import socket, threading
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 8003))
srv.listen(4)
def serve(c):
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
# A service that answers each byte in two small writes 2 ms apart, as a
# TLS server's handshake flight may come.
cp "$top_srcdir/tests/e2e/lib/tcpprobe.py" "$ws/tcpprobe.py"
chown ctest-fo:ctest-fo "$ws/echo.py" "$ws/tcpprobe.py"
as_o run fw -- "setsid -f python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 </dev/null
	setsid -f python3 -m http.server 8002 --bind ::1 >/dev/null 2>&1 </dev/null
	setsid -f python3 $ws/echo.py >/dev/null 2>&1 </dev/null
	setsid -f python3 $ws/tcpprobe.py twice-server 127.0.0.1 8004 >/dev/null 2>&1 </dev/null" >/dev/null
serving() {
	as_o exec fw -- python3 -c '
import socket, sys
for a, p in (("127.0.0.1", 8000), ("::1", 8002), ("127.0.0.1", 8003), ("127.0.0.1", 8004)):
    socket.create_connection((a, p), timeout=1).close()' 2>/dev/null
}
wait_for serving || { echo "Bail out! no http.server in fw"; exit 1; }

# --- TCP on the host's loopback, port chosen by the kernel.
forward f1 fw 0:8000
wait_for forwarding f1
tap_result $? "corral forward says where it listens"
addr=$(listen_of f1)
case $addr in 127.0.0.1:[0-9]*) tap_result 0 "on 127.0.0.1, a port the kernel chose ($addr)" ;;
	*) tap_result 1 "on 127.0.0.1, a port the kernel chose" "$(cat "$(tb_log f1)")" ;; esac
out=$(host_as "$UID_O" curl -sS --max-time 10 "http://$addr/index.html" 2>&1)
check_eq "the owner fetches the page served inside fw" "hello from inside fw" "$out"
out=$(host_as "$UID_X" curl -sS --max-time 10 "http://$addr/index.html" 2>&1); rc=$?
[ "$rc" -ne 0 ] && case $out in *"hello from inside"*) false ;; esac
tap_result $? "another user gets nothing through it (curl $rc)" "$out"
out=$(tb_exec_host curl -sS --max-time 10 "http://$addr/index.html" 2>&1); rc=$?
[ "$rc" -ne 0 ] && case $out in *"hello from inside"*) false ;; esac
tap_result $? "nor does root, who is not the forward's user (curl $rc)" "$out"
check_contains "the forward says whom it refused" "$(cat "$(tb_log f1)")" \
	"refused a connection of uid $UID_X"
# From inside the sandbox: the host's end of the forward is not there (its
# loopback is the sandbox's own), nor through the gateway.
hport=${addr##*:}
gw=$(as_o sandbox get fw --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["network"]["gateway"])')
out=$(as_o exec fw -- sh -c "curl -sS --max-time 5 http://127.0.0.1:$hport/index.html;
	curl -sS --max-time 5 --noproxy '*' http://$gw:$hport/index.html" 2>&1)
check_lacks "a sandbox process reaches the forward's host end neither on its loopback nor through the gateway" \
	"$out" "hello from inside"

# A flood of another user's connections: at most 10 a second are said and
# recorded, the rest counted.
before=$(records event=inbound sandbox=fw decision=deny reason=not_owner)
host_as "$UID_X" /usr/bin/python3 - "$addr" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
for _ in range(200):
    try:
        s = socket.create_connection((host, int(port)), timeout=2)
        s.close()
    except OSError:
        pass
PY
sleep 2.5
after=$(records event=inbound sandbox=fw decision=deny reason=not_owner)
n=$((after - before))
[ "$n" -ge 1 ] && [ "$n" -le 40 ]
tap_result $? "200 refused connections leave a bounded number of records ($n)"
check_contains "and the rest are counted" "$(cat "$(tb_log f1)")" "neither said nor recorded"
wait_for test "$(records event=inbound sandbox=fw decision=deny reason=not_owner port=8000)" -ge 2
tap_result $? "each refusal is an inbound deny record (not_owner)"
wait_for test "$(records event=inbound sandbox=fw decision=allow port=8000 ip=127.0.0.1)" -ge 1
tap_result $? "the owner's connection is an inbound allow record (port, ip)"
out=$(python3 - "$ledger" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
opened = [r for r in recs if r["event"] == "inbound" and r["decision"] == "allow"]
ends = [r for r in recs if r["event"] == "inbound" and r["decision"] is None
        and r["id"] == opened[0]["id"]]
e = ends[0] if ends else {}
print(len(ends), e.get("bytes_up", 0) > 100, e.get("bytes_down", 0) > 20,
      e.get("duration_ms") is not None, opened[0]["pid"] is not None, opened[0]["host"])
PY
)
check_eq "and its end has the bytes both ways, a duration, the forward's pid and host side" \
	"1 True True True True $addr" "$out"

# --- The list: the owner's own, nothing for another user.
out=$(as_o forward --list --json | python3 -c '
import json, sys
f = [x for x in json.load(sys.stdin) if x["sandbox"] == "fw"][0]
print(f["port"], f["listen"], f["uid"], f["connections"] >= 1, f["refused"] >= 2)')
check_eq "forward --list shows it with its counts" "8000 $addr $UID_O True True" "$out"
out=$(as_x forward --list 2>&1)
check_eq "another user's list is empty" "no forwards open" "$out"
out=$(as_x forward --list --json 2>&1)
check_eq "(--json: [])" "[]" "$out"

# --- Another user cannot forward into fw at all.
out=$(as_x forward fw 0:8000 2>&1); rc=$?
check_eq "another user's forward into fw is refused as not found (3)" 3 "$rc"
check_contains "saying so" "$out" "no sandbox fw"

# The wire itself, past the CLI: a ForwardConnect for fw sent by hand.
# wire_connect UID REFUSED_UID: the first answer's text, as UID.
wire_connect() {
	host_as "$1" /usr/bin/python3 - "$CORRAL_SOCK" "$2" <<'PY'
import socket, struct, sys
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out
def field(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data
inner = field(1, b"fw") + varint(2 << 3) + varint(8000) + field(3, b"127.0.0.1:1")
if int(sys.argv[2]):
    inner += varint(4 << 3) + varint(int(sys.argv[2]))
req = field(28, inner)
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"\0" + struct.pack(">I", len(req)) + req)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data[5:].decode("utf-8", "replace"))
PY
}
out=$(wire_connect "$UID_X" 0)
check_contains "another user's ForwardConnect sent by hand is refused" "$out" "no sandbox fw"
check_lacks "and reaches nothing inside" "$out" "hello from inside"
before=$(records event=inbound sandbox=fw decision=deny)
out=$(wire_connect "$UID_X" 1)
check_contains "nor may it write refusals into fw's ledger" "$out" "no sandbox fw"
check_eq "(no record made)" "$before" "$(records event=inbound sandbox=fw decision=deny)"

# --- ::1 inside, nothing listening, bad arguments.
forward f2 fw 0:8002
wait_for forwarding f2
out=$(host_as "$UID_O" curl -sS --max-time 10 "http://$(listen_of f2)/index.html" 2>&1)
check_eq "a server on ::1 inside only is reached (127.0.0.1 refused, then ::1)" \
	"hello from inside fw" "$out"
forward f3 fw 0:8009
wait_for forwarding f3
out=$(host_as "$UID_O" curl -sS --max-time 10 "http://$(listen_of f3)/" 2>&1); rc=$?
check_eq "a port where nothing listens inside: the connection is closed (curl 52/56)" \
	true "$([ "$rc" -eq 52 ] || [ "$rc" -eq 56 ] && echo true || echo "$rc")"
wait_for test "$(records event=inbound sandbox=fw decision=deny reason=nothing_listening port=8009)" -ge 1
tap_result $? "recorded as nothing_listening"
check_contains "and the forward says why" "$(cat "$(tb_log f3)")" "port 8009"
out=$(as_o forward fw 0.0.0.0:0:8000 2>&1); rc=$?
check_eq "a listen address off the loopback is a usage error (2)" 2 "$rc"
check_contains "naming the loopback" "$out" "loopback"
out=$(as_o forward fw 0:99999 2>&1); rc=$?
check_eq "a sandbox port out of range too (2)" 2 "$rc"
tb_stop f2
tb_stop f3

# --- Both ways at once: 8 MiB sent while the echo comes back.
forward f6 fw 0:8003
wait_for forwarding f6
out=$(host_as "$UID_O" /usr/bin/python3 - echo-whole "$(listen_of f6)" 8388608 <"$ws/tcpprobe.py" 2>&1)
check_eq "8 MiB sent and echoed at once come back whole (no direction waits for the other)" \
	"8388608 True" "$out"

# --- Small writes go on at once: with Nagle's algorithm on the forward's
# host socket, the second write of each answer would wait for the
# client's delayed ACK (40 ms a round).
forward f7 fw 0:8004
wait_for forwarding f7
out=$(host_as "$UID_O" /usr/bin/python3 - rounds "$(listen_of f7)" <"$ws/tcpprobe.py" 2>&1)
check_eq "an answer in two small writes waits for no delayed ACK (median of 15 rounds under 20 ms)" \
	ok "$([ "$out" -lt 20 ] 2>/dev/null && echo ok || echo "$out")"
tb_stop f7

# --- A forward that rests longer than a request may (30 s) stays.
sleep 32
out=$(host_as "$UID_O" curl -sS --max-time 10 "http://$addr/index.html" 2>&1)
check_eq "a forward idle for 32 s still serves" "hello from inside fw" "$out"
kill -0 "$(tb_pid f1)" 2>/dev/null
tap_result $? "and its command still runs"
tb_stop f6

# --- A Unix socket of the owner's.
sock="$TB_DIR/fo-sock/app.sock"
forward f4 fw "$sock:8000"
wait_for forwarding f4
check_eq "the Unix socket is the owner's, mode 0600" "$UID_O 600" "$(stat -c '%u %a' "$sock")"
out=$(host_as "$UID_O" curl -sS --max-time 10 --unix-socket "$sock" http://fw/index.html 2>&1)
check_eq "the owner fetches through it" "hello from inside fw" "$out"
out=$(host_as "$UID_X" curl -sS --max-time 10 --unix-socket "$sock" http://fw/index.html 2>&1)
check_contains "another user cannot even connect (the socket's mode)" "$out" "(7)"
tb_stop f4
wait_for test ! -e "$sock"
tap_result $? "a stopped forward removes its socket"

# --- Ending: the command stopped, the sandbox deleted.
tb_stop f1
out=$(host_as "$UID_O" curl -sS --max-time 5 "http://$addr/" 2>&1); rc=$?
check_eq "a stopped forward leaves nothing listening (curl 7)" 7 "$rc"
out=$(as_o forward --list)
check_eq "and is gone from the list" "no forwards open" "$out"
forward f5 fw 0:8000
wait_for forwarding f5
as_o sandbox delete fw >/dev/null
f5_ended() {
	_p=$(tb_pid f5)
	! [ -e "/proc/$_p" ] || [ "$(awk '{ print $3 }' "/proc/$_p/stat")" = Z ]
}
wait_for f5_ended
tap_result $? "deleting the sandbox ends its forward"
wait "$(tb_pid f5)" 2>/dev/null; rc=$?
check_eq "which exits 6 (unavailable)" 6 "$rc"
check_contains "saying why" "$(cat "$(tb_log f5)")" "the sandbox was deleted"

tap_done
