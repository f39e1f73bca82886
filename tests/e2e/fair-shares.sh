#!/bin/sh
# Fair shares (corrald.yaml(5), "shares" and "max_sandboxes_per_user"): no
# user of the control socket starves the others, and root is always served.
# Sets up: the test bed; two local users made for the test, ctest-fa and
# ctest-fb (uids 1121 and 1122), each with a folder; corrald in the test
# host with small shares (4 sandboxes in all, 2 a user, 8 connections,
# 8 MiB of half-sent requests, 3 streams and 3 tunnels a user), its
# control socket opened to every local user.
# Does: ctest-fa holds idle connections, half-sent large frames, sandboxes,
# exec streams and tunnels past its shares, while ctest-fb and root ask too.
# Expects: ctest-fa is refused past each share with a message naming it;
# ctest-fb and root are served throughout; the last sandbox slot is root's.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

UID_A=1121
UID_B=1122
holders=
# shares_down: ends the connection holders, if they run.
shares_down() {
	for _p in $holders; do kill "$_p" 2>/dev/null; done
	return 0
}
corral_install_traps shares_down
corral_user_make ctest-fa "$UID_A"
corral_user_make ctest-fb "$UID_B"
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
fa="$TB_DIR/users/a"
fb="$TB_DIR/users/b"
mkdir -p "$fa" "$fb"
chown ctest-fa:ctest-fa "$fa"
chown ctest-fb:ctest-fb "$fb"
chmod 0755 "$TB_DIR" "$TB_DIR/users"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
max_sandboxes: 4
max_sandboxes_per_user: 2
shares:
  connections: 8
  streams: 3
  buffered_bytes: 8M
  tunnels: 3
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
CORRAL_SOCK="$TB_DIR/corrald.sock"
chmod 0666 "$CORRAL_SOCK"
as_a() { corral_as "$UID_A" "$@"; }
as_b() { corral_as "$UID_B" "$@"; }

# hold UID COUNT HALF_MIB: as UID, opens COUNT connections and holds them;
# with HALF_MIB, each sends a frame header for 4 MiB and HALF_MIB MiB of
# it, then waits. Prints how many the daemon refused at once (an answer
# before any request was whole), then holds until killed.
hold() {
	# A simple command, so that $! is python itself (ip netns exec and
	# setpriv exec it), and the test ends it by that pid.
	ip netns exec "$TB_HOST" setpriv --reuid="$1" --regid="$1" --clear-groups /usr/bin/python3 -c '
import socket, struct, sys, time
path, count, half = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks, refused = [], 0
for i in range(count):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    try:
        if half:
            s.sendall(struct.pack(">BI", 0, 4 << 20) + b"x" * (half << 20))
        socks.append(s)
    except OSError:
        refused += 1            # closed while it sent: refused
    time.sleep(0.05)
for s in socks:
    s.settimeout(0.3)
    try:
        if s.recv(4096):
            refused += 1
    except socket.timeout:
        pass
print(refused, flush=True)
time.sleep(60)
' "$CORRAL_SOCK" "$2" "$3" &
	holders="$holders $!"
}

# --- Control connections.
out_file="$TB_DIR/hold-conns"
hold "$UID_A" 12 0 >"$out_file"
tb_wait_file() { _i=0; while [ ! -s "$1" ] && [ "$_i" -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done; }
tb_wait_file "$out_file"
check_eq "ctest-fa's connections past its share of 8 are refused at once" 4 "$(cat "$out_file")"
out=$(as_a sandbox list 2>&1)
check_contains "and ctest-fa is told which share it hit" "$out" "shares.connections"
check_eq "ctest-fb is served meanwhile" 0 "$(as_b sandbox list >/dev/null 2>&1; echo $?)"
check_eq "and so is root" 0 "$(corral_cli status >/dev/null 2>&1; echo $?)"
shares_down
holders=
sleep 0.5

# --- Half-sent requests.
out_file="$TB_DIR/hold-bytes"
hold "$UID_A" 6 2 >"$out_file"
tb_wait_file "$out_file"
refused=$(cat "$out_file")
[ "$refused" -ge 2 ] 2>/dev/null
tap_result $? "ctest-fa's half-sent frames past 8 MiB are refused ($refused of 6)"
check_eq "ctest-fb is served meanwhile" 0 "$(as_b sandbox list >/dev/null 2>&1; echo $?)"
shares_down
holders=
sleep 0.5

# --- Sandboxes: two a user, the last slot root's.
for n in 1 2; do
	as_a sandbox create --root "$fa" --name "a$n" >/dev/null 2>&1
	check_eq "ctest-fa's sandbox $n of its 2 is created" 0 $?
done
out=$(as_a sandbox create --root "$fa" --name a3 2>&1)
check_eq "its third is refused (a limit: 5)" 5 $?
check_contains "naming the share" "$out" "max_sandboxes_per_user"
as_b sandbox create --root "$fb" --name b1 >/dev/null 2>&1
check_eq "ctest-fb still gets one" 0 $?
out=$(as_b sandbox create --root "$fb" --name b2 2>&1)
check_eq "but not the last slot (5)" 5 $?
check_contains "which is kept for root" "$out" "the last slot is kept for root"
corral_cli sandbox create --root "$fb" --run-as ctest-fb --name r1 >/dev/null 2>&1
check_eq "root gets the last slot" 0 $?

# --- Exec and run streams: three a user. Each held stream is a corral
# exec whose pid the test ends (a simple command: ip netns exec and setpriv
# exec it).
for n in 1 2 3; do
	ip netns exec "$TB_HOST" setpriv --reuid="$UID_A" --regid="$UID_A" --clear-groups \
	    "$top_builddir/corral" --socket "$CORRAL_SOCK" exec a1 -- sleep 60 >/dev/null 2>&1 &
	holders="$holders $!"
done
_i=0
while [ "$(corral_cli exec a1 -- sh -c 'pgrep -c -x sleep' 2>/dev/null)" != 3 ] &&
    [ "$_i" -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
out=$(as_a exec a2 -- true 2>&1)
check_eq "ctest-fa's fourth stream is refused (125: corral's, not the command's)" 125 $?
check_contains "naming the share" "$out" "shares.streams"
check_eq "ctest-fb's exec runs meanwhile" ok "$(as_b exec b1 -- echo ok 2>&1)"
check_eq "and root's" ok "$(corral_cli exec r1 -- echo ok 2>&1)"
out=$(as_a run a2 -- 'echo hi' 2>&1)
check_contains "a run counts as a stream too" "$out" "shares.streams"
shares_down
holders=
_i=0
while ! as_a exec a2 -- true >/dev/null 2>&1 && [ "$_i" -lt 50 ]; do
	sleep 0.1; _i=$((_i + 1))
done
check_eq "streams that ended give their share back" ok "$(as_a exec a2 -- echo ok 2>&1)"

# --- Tunnels: three a user over all its sandboxes.
# tunnels SANDBOX COUNT: opens COUNT CONNECT tunnels inside and holds them
# briefly; prints the status code of each.
tunnels() {
	corral_as "$UID_A" exec "$1" -- python3 -c '
import os, socket, sys, time
gw = os.environ["HTTPS_PROXY"].split("//")[1].rstrip("/")
host, port = gw.rsplit(":", 1)
socks, codes = [], []
for i in range(int(sys.argv[1])):
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(b"CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n")
    codes.append(s.recv(64).split(b" ")[1].decode())
    socks.append(s)
print(" ".join(codes))
' "$2"
}
out=$(tunnels a1 5)
check_eq "ctest-fa's tunnels past its share of 3 get 503" "200 200 200 503 503" "$out"
out=$(corral_as "$UID_B" exec b1 -- sh -c 'curl -sS -o /dev/null -w "%{http_code}" \
	--max-time 5 -k https://github.com/' 2>&1)
check_eq "ctest-fb's sandbox still connects" 200 "$out"
check "the refusal is recorded with the share's name" corral_ledger_has \
	sandbox=a1 decision=deny reason=user_tunnel_share

corral_cli sandbox delete --all >/dev/null 2>&1
tap_done
