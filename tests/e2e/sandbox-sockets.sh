#!/bin/sh
# Host Unix sockets (corral-policy(5), "UNIX SOCKETS"): attacks from inside
# a real sandbox on pathname sockets of the host it can see, and the
# sockets it may reach: its own, and the ones its policy lists.
# Sets up: the test bed; corrald in the test host, its control socket open
# to every local user; a workspace owned by uid 1000 (writable root) and a
# read-only root; host listeners (root's, mode 0666) in both, under
# /opt/corral-test-<pid> (a system folder the sandbox sees) and in a host
# folder it does not see, which the policy of sandbox sa lists with an ssh
# agent of uid 1000's; a C probe compiled into the workspace.
# Does: connect() by path, through a symlink, relatively, to a hard link;
# datagrams by sendto, sendmsg, sendmmsg and connect+send; races that swap
# the descriptor and the address, or flip the path between an own socket
# and a host one; a listener of its own in seccomp; then the legitimate
# paths: sockets bound in the workspace, /tmp and HOME and reached from
# another exec, an abstract one, Python's multiprocessing, ssh-agent and
# ssh-add inside, git credential-cache, the listed socket and agent, TCP
# and binary identification; the ledger and the denials; a non-root
# caller's policy; corral-init killed under a connecting loop.
# Expects: every attack fails (EACCES from the supervisor, EPERM from the
# kernel guard) and no host listener counts a connection or a datagram;
# every legitimate path works; refusals and listed connects are in the
# ledger and the denials.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

RACE_S=3                # each race's length, in seconds
USER_UID=1000           # the workspace's owner: run_as, and a non-root caller
optdir=/opt/corral-test-$$
sockets_down() { rm -rf "$optdir"; }
corral_install_traps sockets_down
tb_up || { echo "Bail out! no test bed"; exit 1; }

ws="$TB_DIR/folders/app"
roroot="$TB_DIR/folders/ro"
hostrun="$TB_DIR/hostrun"       # a host folder no sandbox sees
events="$TB_DIR/sock-events"    # what the host listeners received, a line each
mkdir -p "$ws" "$roroot" "$hostrun" "$optdir"
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R "$USER_UID:$USER_UID" "$TB_DIR/folders" "$hostrun"
chmod 0755 "$TB_DIR" "$TB_DIR/folders" "$optdir"
: >"$events"
chmod 0666 "$events"

# The host's listeners: each accept or datagram is a line in $events.
cat >"$TB_DIR/host-listeners.py" <<'PY'
import os, select, socket, sys
events = open(sys.argv[1], "a", buffering=1)
socks = {}
for spec in sys.argv[2:]:
    name, kind, path, owner = spec.split(",")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM)
    s.bind(path)
    if kind != "dgram":
        s.listen(4096)
    os.chmod(path, 0o666)
    os.chown(path, int(owner), int(owner))
    socks[s.fileno()] = (s, name, kind)
open(sys.argv[1] + ".ready", "w").close()
while True:
    for fd in select.select(list(socks), [], [])[0]:
        s, name, kind = socks[fd]
        if kind == "dgram":
            s.recv(4096)
        else:
            s.accept()[0].close()
        events.write(name + "\n")
PY
tb_spawn_host listeners python3 "$TB_DIR/host-listeners.py" "$events" \
	"ws,stream,$ws/host.sock,$USER_UID" "ro,stream,$roroot/host.sock,0" \
	"opt,stream,$optdir/root.sock,0" "wsdg,dgram,$ws/hostdg.sock,0" \
	"listed,stream,$hostrun/listed.sock,$USER_UID" "unlisted,stream,$hostrun/unlisted.sock,0"
for _ in $(seq 50); do [ -e "$events.ready" ] && break; sleep 0.1; done
[ -e "$events.ready" ] || { echo "Bail out! the host listeners did not start"; exit 1; }
# host_count NAME: the connections and datagrams host listener NAME received.
host_count() { grep -cx "$1" "$events"; }

# A host ssh agent of uid 1000's, holding one key.
tb_spawn_host agent setpriv --reuid="$USER_UID" --regid="$USER_UID" --clear-groups \
	ssh-agent -D -a "$hostrun/agent.sock"
ssh-keygen -q -t ed25519 -N "" -C corral-test-key -f "$hostrun/key" >/dev/null
chown "$USER_UID:$USER_UID" "$hostrun/key" "$hostrun/key.pub"
for _ in $(seq 50); do [ -S "$hostrun/agent.sock" ] && break; sleep 0.1; done
tb_exec_host setpriv --reuid="$USER_UID" --regid="$USER_UID" --clear-groups \
	env SSH_AUTH_SOCK="$hostrun/agent.sock" ssh-add -q "$hostrun/key" 2>/dev/null ||
	{ echo "Bail out! the host's ssh agent took no key"; exit 1; }

# probe.py ATTACK [ARGS]: one attempt; prints "allowed" or "refused:ERRNO",
# or what it read.
cat >"$ws/probe.py" <<'PY'
import ctypes, errno, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)

def unix(kind=socket.SOCK_STREAM):
    return socket.socket(socket.AF_UNIX, kind)

def connect(path, kind="stream"):
    unix(socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM).connect(path)

def connect_rel(folder, name):
    os.chdir(folder)
    unix().connect(name)

def sendto(path):
    unix(socket.SOCK_DGRAM).sendto(b"leak", path)

def sendmsg(path):
    unix(socket.SOCK_DGRAM).sendmsg([b"leak"], [], 0, path)

class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

class Msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint), ("iov", ctypes.c_void_p),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p),
                ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]

class Mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", Msghdr), ("len", ctypes.c_uint)]

def sendmmsg(path):
    s = unix(socket.SOCK_DGRAM)
    addr = struct.pack("H", socket.AF_UNIX) + path.encode() + b"\0"
    abuf = ctypes.create_string_buffer(addr, len(addr))
    data = ctypes.create_string_buffer(b"leak")
    iov = Iovec(ctypes.addressof(data), 4)
    m = Mmsghdr(Msghdr(ctypes.addressof(abuf), len(addr), ctypes.addressof(iov), 1, None, 0, 0), 0)
    if libc.sendmmsg(s.fileno(), ctypes.byref(m), 1, 0) == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

def connect_send(path):
    s = unix(socket.SOCK_DGRAM)
    s.connect(path)
    s.send(b"leak")

def serve(path, ready):
    s = unix()
    if os.path.exists(path):
        os.unlink(path)
    s.bind(path)
    s.listen(4)
    open(ready, "w").close()
    c, _ = s.accept()
    c.sendall(b"pong")

def client(path):
    s = unix()
    s.connect(path)
    print("read:" + s.recv(16).decode())

def abstract():
    s, c = unix(), unix()
    s.bind("\0corral-own")
    s.listen(1)
    c.connect("\0corral-own")

# seccomp from inside: a filter of its own that returns USER_NOTIF for
# connect(); with NEW_LISTENER it is refused (one listener per chain),
# without one it only breaks the caller's own connect().
def own_filter(flags):
    nr_connect, notif = 42, 0x7fc00000
    insns = struct.pack("HBBI", 0x20, 0, 0, 0)                     # ld [nr]
    insns += struct.pack("HBBI", 0x15, 0, 1, nr_connect)           # jeq connect
    insns += struct.pack("HBBI", 0x06, 0, 0, notif)                # ret USER_NOTIF
    insns += struct.pack("HBBI", 0x06, 0, 0, 0x7fff0000)           # ret ALLOW
    buf = ctypes.create_string_buffer(insns, len(insns))
    prog = struct.pack("HxxxxxxQ", 4, ctypes.addressof(buf))
    pbuf = ctypes.create_string_buffer(prog, len(prog))
    if libc.syscall(317, 1, flags, pbuf) == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

def own_listener():
    own_filter(1 << 3)

def own_filter_then_connect(path):
    own_filter(0)
    connect(path)

ATTACKS = {
    "connect": connect, "connect-rel": connect_rel, "sendto": sendto, "sendmsg": sendmsg,
    "sendmmsg": sendmmsg, "connect-send": connect_send, "serve": serve, "client": client,
    "own-listener": own_listener, "abstract": abstract,
    "own-filter-connect": own_filter_then_connect,
}
try:
    ATTACKS[sys.argv[1]](*sys.argv[2:])
    print("allowed")
except OSError as e:
    print("refused:" + (errno.errorcode.get(e.errno, str(e.errno)) if e.errno else str(e)))
PY

# race.c: the races of the supervisor's design (a descriptor and address
# swapped after the check; a path flipped between an own socket and a
# host one), each for a few seconds; prints its counts.
cat >"$TB_DIR/race.c" <<'C'
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#define RACE_FD 50
static volatile int stop;
static const char *host_path, *own_path;
static union { struct sockaddr_in in; struct sockaddr_un un; } addr;
static struct sockaddr_un flip;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static void hold(double us) { for (double t = now(); (now() - t) * 1e6 < us;) ; }
static void *swapper(void *a) {
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(0x7f000001) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", host_path);
	while (!stop) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		dup2(s, RACE_FD); close(s);
		memcpy(&addr, &in, sizeof(in));
		hold(20);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		memcpy(&addr, &un, sizeof(un));
		dup2(s, RACE_FD); close(s);
		hold(20);
	}
	return a;
}
static void *flipper(void *a) {
	while (!stop) {
		snprintf(flip.sun_path, sizeof(flip.sun_path), "%s", own_path);
		hold(10);
		snprintf(flip.sun_path, sizeof(flip.sun_path), "%s", host_path);
		hold(10);
	}
	return a;
}
static void *acceptor(void *a) { int s = *(int *)a; for (;;) { int c = accept(s, 0, 0); if (c >= 0) close(c); } }
int main(int argc, char **argv) {
	double end = now() + atof(argv[2]);
	long ok = 0, no = 0;
	pthread_t t;
	host_path = argv[3];
	if (strcmp(argv[1], "swap") == 0) {
		pthread_create(&t, 0, swapper, 0);
		while (now() < end) {
			if (connect(RACE_FD, (void *)&addr, sizeof(struct sockaddr_un)) == 0) ok++; else no++;
		}
	} else {
		static int ls;
		struct sockaddr_un own = { .sun_family = AF_UNIX };
		own_path = argv[4];
		snprintf(own.sun_path, sizeof(own.sun_path), "%s", own_path);
		unlink(own_path);
		ls = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(ls, (void *)&own, sizeof(own)) || listen(ls, 4096)) { perror("own"); return 1; }
		pthread_create(&t, 0, acceptor, &ls);
		flip.sun_family = AF_UNIX;
		pthread_create(&t, 0, flipper, 0);
		while (now() < end) {
			int s = socket(AF_UNIX, SOCK_STREAM, 0);
			if (connect(s, (void *)&flip, sizeof(flip)) == 0) ok++; else no++;
			close(s);
		}
	}
	stop = 1;
	printf("connected=%ld refused=%ld\n", ok, no);
	return 0;
}
C
gcc -O2 -pthread -o "$ws/race" "$TB_DIR/race.c" ||
	{ echo "Bail out! cannot compile the race probe"; exit 1; }
chown -R "$USER_UID:$USER_UID" "$ws"

port=$(tb_free_port)
corral_start_shared "$port"
corral() { corral_cli "$@"; }

# sa's policy: the default profile's, plus the listed host socket and agent.
policy="$TB_DIR/sa.yaml"
tb_exec_host "$top_builddir/corral" --profiles-dir "$top_srcdir/conf/profiles" policy render \
	--root "$ws" --root "$roroot:ro" --uid "$USER_UID" --gid "$USER_UID" |
	awk -v l="$hostrun/listed.sock" -v a="$hostrun/agent.sock" '
	{ print }
	$0 == "filesystem_policy:" {
		print "  unix_sockets:"
		print "  - path: " l
		print "    env: TEST_LISTED_SOCK"
		print "  - {path: " a ", name: ssh-agent, env: SSH_AUTH_SOCK}"
	}' | corral_file "$policy"
check "corral policy check accepts sa's policy with unix_sockets" \
	tb_exec_host "$top_builddir/corral" policy check "$policy"
out=$(corral sandbox create --root "$ws" --root "$roroot:ro" --name sa --policy "$policy" 2>&1)
tap_result $? "sandbox sa is created with its listed sockets" "$out"
info=$(corral sandbox get sa --json)
check "sa is enforced in full: no layer missing, the unix-socket guard included" python3 -c "
import json, sys
i = json.loads(sys.argv[1])
assert i['enforcement'] == 'full' and not i.get('missing_layers'), i
" "$info"
inside() { corral exec sa -- "$@"; }
probe() { corral exec sa -- python3 "$ws/probe.py" "$@" 2>&1; }

# --- 1. Host listeners the sandbox sees: refused by path.
check_eq "connect() to root's socket in the writable root is EACCES" "refused:EACCES" \
	"$(probe connect "$ws/host.sock")"
check_eq "connect() to root's socket in the read-only root is EACCES" "refused:EACCES" \
	"$(probe connect "$roroot/host.sock")"
check_eq "connect() to root's socket under $optdir (a system folder) is EACCES" "refused:EACCES" \
	"$(probe connect "$optdir/root.sock")"
check_eq "a seqpacket connect() there too" "refused:EACCES" \
	"$(corral exec sa -- python3 -c "
import socket
try: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect('$optdir/root.sock'); print('allowed')
except OSError as e: print('refused:' + __import__('errno').errorcode[e.errno])")"

# --- 2. Other names for them.
inside ln -sf "$ws/host.sock" "$ws/link.sock"
check_eq "through a symlink in the workspace: EACCES" "refused:EACCES" \
	"$(probe connect "$ws/link.sock")"
check_eq "by a relative path from the workspace: EACCES" "refused:EACCES" \
	"$(probe connect-rel "$ws" host.sock)"
inside ln "$ws/host.sock" "$ws/hard.sock" 2>/dev/null
[ -S "$ws/hard.sock" ]; tap_result $? "a hard link of the uid-1000 host socket is made inside"
check_eq "connect() to the hard link: EACCES" "refused:EACCES" \
	"$(probe connect "$ws/hard.sock")"
inside ln -sf "$hostrun/unlisted.sock" "$ws/inv.sock"
check_eq "a symlink to the invisible host folder leads nowhere (ENOENT)" "refused:ENOENT" \
	"$(probe connect "$ws/inv.sock")"

# --- 3. Datagrams to a host socket.
check_eq "sendto() a host datagram socket: EPERM (the kernel guard)" "refused:EPERM" \
	"$(probe sendto "$ws/hostdg.sock")"
check_eq "sendmsg() with its address: EPERM" "refused:EPERM" "$(probe sendmsg "$ws/hostdg.sock")"
check_eq "sendmmsg() with its address: EPERM" "refused:EPERM" "$(probe sendmmsg "$ws/hostdg.sock")"
check_eq "connect() then send(): EACCES" "refused:EACCES" "$(probe connect-send "$ws/hostdg.sock")"

# --- 4. Races against the check.
out=$(inside "$ws/race" swap "$RACE_S" "$optdir/root.sock" 2>&1)
check_contains "the descriptor and address swap ran ($out)" "$out" "connected="
out=$(inside "$ws/race" flip "$RACE_S" "$ws/host.sock" /tmp/own.sock 2>&1)
own=$(echo "$out" | sed -n 's/connected=\([0-9]*\).*/\1/p')
[ "${own:-0}" -gt 0 ]; tap_result $? "the path flip connected its own socket ($out)" "$out"

# --- 5. seccomp from inside.
check_eq "a listener of the workload's own: EBUSY (one per filter chain)" "refused:EBUSY" \
	"$(probe own-listener)"
check_eq "its own USER_NOTIF filter without a listener only breaks itself (ENOSYS)" \
	"refused:ENOSYS" "$(probe own-filter-connect "$optdir/root.sock")"

sleep 0.5
for n in ws ro opt wsdg unlisted; do
	check_eq "the host listener '$n' received nothing" 0 "$(host_count "$n")"
done

# --- 6. The sandbox's own sockets, reached from another exec.
for where in "$ws/own.sock" /tmp/own.sock "/tmp/../tmp/own2.sock"; do
	rm -f "$ws/own.ready"
	corral exec sa -- python3 "$ws/probe.py" serve "$where" "$ws/own.ready" >/dev/null 2>&1 &
	server=$!
	for _ in $(seq 50); do [ -e "$ws/own.ready" ] && break; sleep 0.1; done
	out=$(probe client "$where")
	check_contains "a socket bound at $where answers another exec" "$out" "read:pong"
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
done
# Across execs, Landlock's scope keeps abstract names apart, as before.
check_eq "an abstract socket connects within an exec" "allowed" "$(probe abstract)"
home=$(corral sandbox get sa --json | python3 -c "import json,sys; print(json.load(sys.stdin)['home'])")
rm -f "$ws/own.ready"
corral exec sa -- python3 "$ws/probe.py" serve "$home/own.sock" "$ws/own.ready" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do [ -e "$ws/own.ready" ] && break; sleep 0.1; done
check_contains "a socket bound in HOME answers another exec" "$(probe client "$home/own.sock")" \
	"read:pong"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
out=$(corral exec sa -- python3 -c '
import multiprocessing as mp
with mp.Manager() as m:
    d = m.dict(); d["k"] = 42; print("manager:%d" % d["k"])' 2>&1)
check_eq "Python multiprocessing's Manager (a Unix socket in /tmp) works" "manager:42" "$out"
out=$(corral exec sa -- sh -c 'eval "$(ssh-agent -s -a /tmp/agent.sock)" >/dev/null &&
	ssh-keygen -q -t ed25519 -N "" -f /tmp/k >/dev/null && ssh-add -q /tmp/k 2>/dev/null &&
	ssh-add -l; kill "$SSH_AGENT_PID"' 2>&1)
check_contains "ssh-agent and ssh-add inside work" "$out" "ED25519"
out=$(corral exec sa -- sh -c 'cd "$HOME" &&
	printf "protocol=https\nhost=example.com\nusername=u\npassword=secret\n\n" |
	git credential-cache --timeout=30 store &&
	printf "protocol=https\nhost=example.com\n\n" | git credential-cache get;
	git credential-cache exit' 2>&1)
check_contains "git credential-cache keeps a password in its daemon" "$out" "password=secret"

# --- 7. The listed sockets.
out=$(inside sh -c 'echo "$TEST_LISTED_SOCK $SSH_AUTH_SOCK"')
check_eq "the policy's variables name the sockets inside" \
	"/run/corral/sockets/listed.sock /run/corral/sockets/ssh-agent" "$out"
check_eq "the listed host socket connects inside" "allowed" \
	"$(probe connect /run/corral/sockets/listed.sock)"
sleep 0.2
check_eq "and its host listener counted it" 1 "$(host_count listed)"
out=$(inside ssh-add -l 2>&1)
check_contains "ssh-add -l inside lists the host agent's key" "$out" "corral-test-key"
check_eq "the listed socket cannot be replaced (read-only /run/corral/sockets)" \
	"refused:EACCES" "$(probe serve /run/corral/sockets/x.sock "$ws/x.ready")"
check_eq "/run/corral/sockets holds the listed sockets only" "listed.sock ssh-agent" \
	"$(inside ls /run/corral/sockets | tr '\n' ' ' | sed 's/ $//')"
inside test ! -e "$hostrun"
tap_result $? "the unlisted host folder is not visible inside"

# --- The ledger and the denials.
corral_ledger_has event=unix decision=deny host="$ws/host.sock" reason=unix_socket_not_allowed
tap_result $? "the ledger has a unix deny record for the workspace's host socket"
corral_ledger_has event=unix decision=deny host="$ws/host.sock" sandbox=sa binary=/usr/bin/python3.11
tap_result $? "... naming the sandbox and the binary"
corral_ledger_has event=unix decision=allow host=/run/corral/sockets/listed.sock \
	policy="$hostrun/listed.sock"
tap_result $? "the ledger has a unix allow record for the listed socket, naming the host path"
python3 - "$TB_DIR/log/egress.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if '"unix"' in l]
# Null for a process gone before the broker looked (corral-ledger(5)):
# a probe may exit as soon as its connect returns.
assert recs and all(r["pid"] is None or (isinstance(r["pid"], int) and r["pid"] > 1)
                    for r in recs), recs
assert any(r["pid"] is not None for r in recs), recs
PY
tap_result $? "unix records have the host pid of the process (null once it is gone)"
out=$(corral denials sa --since 5m --json)
check_contains "sa's denials list the refused host socket" "$out" "\"host\":\"$ws/host.sock\""
check_contains "... with its reason" "$out" "unix_socket_not_allowed"

# --- 8. TCP and identification through CONTINUE.
code=$(inside curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null -w '%{http_code}' \
	https://api.github.com/zen 2>/dev/null)
check_eq "TCP through the proxy still works (200)" 200 "$code"
corral policy update sa --add-endpoint example.com:443 --binary /usr/bin/curl >/dev/null 2>&1 ||
	corral policy update sa --add-endpoint example.com:443 >/dev/null
code=$(inside curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null -w '%{http_code}' \
	https://example.com/ 2>/dev/null)
check_eq "curl reaches example.com, identified as itself" 200 "$code"
corral_ledger_has event=connect host=example.com decision=allow binary=/usr/bin/curl
tap_result $? "the ledger names curl as the binary (the connect ran in curl's task)"

# --- A non-root caller lists only sockets it may reach.
chmod 0600 "$optdir/root.sock"
printf 'version: 1\nfilesystem_policy:\n  unix_sockets:\n  - path: %s\n' "$optdir/root.sock" |
	corral_file "$TB_DIR/user.yaml"
out=$(corral_as "$USER_UID" sandbox create --root "$ws" --name su --policy "$TB_DIR/user.yaml" 2>&1)
check_contains "a non-root caller's policy naming root's 0600 socket is refused" "$out" \
	"you may not connect to it"
printf 'version: 1\nfilesystem_policy:\n  unix_sockets:\n  - path: /proc/1/root/run/x.sock\n' |
	corral_file "$TB_DIR/user2.yaml"
out=$(corral_as "$USER_UID" sandbox create --root "$ws" --name su --policy "$TB_DIR/user2.yaml" 2>&1)
check_contains "... and one naming a socket through /proc" "$out" "is within /proc"
printf 'version: 1\nfilesystem_policy:\n  unix_sockets:\n  - path: relative.sock\n' |
	corral_file "$TB_DIR/bad.yaml"
out=$(tb_exec_host "$top_builddir/corral" policy check "$TB_DIR/bad.yaml" 2>&1)
check_contains "corral policy check points at a bad socket path" "$out" \
	"bad.yaml:4:11: unix socket path 'relative.sock' is not absolute"

# --- The filter's audit for Linux 6.18, seen from inside.
out=$(corral exec sa -- python3 -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *a):
    r = libc.syscall(nr, *a)
    return "ok" if r != -1 else errno.errorcode[ctypes.get_errno()]
buf = ctypes.create_string_buffer(16)
print(call(154, 0, buf, 16), call(457, None, None, 0, 0), call(458, None, None, 0, 0),
      call(312, 1, 1, 0, 0, 0), call(470), call(462, None, 0, 0))' 2>&1)
check_eq "modify_ldt EPERM, statmount and listmount ENOSYS, kcmp EPERM, 470 ENOSYS, mseal works" \
	"EPERM ENOSYS ENOSYS EPERM ENOSYS ok" "$out"
out=$(inside findmnt -n -o TARGET /tmp 2>&1)
check_eq "findmnt still works (libmount falls back to mountinfo)" /tmp "$out"

# --- 9. corral-init killed under a connecting loop: nothing opens.
corral exec sa -- sh -c 'while :; do python3 '"$ws"'/probe.py connect '"$optdir"'/root.sock; done' \
	>/dev/null 2>&1 &
looper=$!
sleep 1
mpid=$(pgrep -P "$(tb_pid corrald)" -x corrald-monitor | head -1)
ipid=$(pgrep -P "${mpid:-0}" -x corral-init | head -1)
[ -n "$ipid" ] && kill -9 "$ipid"
wait "$looper"
sleep 0.3
check_eq "after corral-init's death root's socket still received nothing" 0 "$(host_count opt)"
check_eq "and no other host listener did" "0 0 0" \
	"$(host_count ws) $(host_count ro) $(host_count wsdg)"

tap_done
