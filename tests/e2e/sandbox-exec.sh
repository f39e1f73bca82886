#!/bin/sh
# Running code that is on no file (memfd plus execveat: refused), and
# where a workload may run code it wrote (a read-write path
# gets every Landlock right, EXECUTE included).
# Sets up: the test bed; corrald in the test host; a sandbox over a
# workspace owned by uid 1000 holding a Python probe.
# Does: inside the sandbox, copies /bin/true into a memfd (every flag
# spelling) and runs it through /proc/self/fd/N and /dev/fd/N, runs an open
# /bin/true through execveat(AT_EMPTY_PATH), and runs copies of /bin/true
# written into /tmp, HOME, the workspace and /dev/shm.
# Expects: no memfd ever runs (refused at memfd_create or at exec), execveat
# with AT_EMPTY_PATH is refused (EPERM), and a copy on a read-write path
# runs (documented: the sandbox's own files are its to run).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/app"
mkdir -p "$ws"
# The probe: `probe CASE` runs /bin/true one way and exits with true's 0 when
# it ran; otherwise it prints "refused at STEP: ERRNO-NAME" and exits 3.
cat >"$ws/probe.py" <<'PY'
import ctypes, errno, os, shutil, sys
MFD_CLOEXEC, MFD_NOEXEC_SEAL, MFD_EXEC = 0x1, 0x8, 0x10
NR_EXECVEAT, AT_EMPTY_PATH = 322, 0x1000      # x86_64
TRUE = os.path.realpath("/bin/true")

def refused(step, e):
    print("refused at %s: %s" % (step, errno.errorcode.get(e, str(e))))
    sys.exit(3)

def memfd(flags):
    try:
        fd = os.memfd_create("payload", flags)
    except OSError as e:
        refused("memfd_create", e.errno)
    with open(TRUE, "rb") as f:
        data = f.read()
    while data:
        data = data[os.write(fd, data):]
    return fd

def run(path):
    try:
        os.execv(path, ["true"])
    except OSError as e:
        refused("exec", e.errno)

def execveat(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    argv = (ctypes.c_char_p * 2)(b"true", None)
    envp = (ctypes.c_char_p * 1)(None)
    libc.syscall(ctypes.c_long(NR_EXECVEAT), ctypes.c_int(fd), ctypes.c_char_p(b""),
                 argv, envp, ctypes.c_int(AT_EMPTY_PATH))
    refused("exec", ctypes.get_errno())

def copy_to(folder):
    path = os.path.join(folder, "true-copy-%d" % os.getpid())
    shutil.copyfile(TRUE, path)
    os.chmod(path, 0o755)
    run(path)

case = sys.argv[1]
if case == "memfd-proc":
    run("/proc/self/fd/%d" % memfd(0))
elif case == "memfd-devfd":
    run("/dev/fd/%d" % memfd(0))
elif case == "memfd-cloexec":
    run("/proc/self/fd/%d" % memfd(MFD_CLOEXEC))
elif case == "memfd-exec-flag":
    run("/proc/self/fd/%d" % memfd(MFD_EXEC))
elif case == "memfd-noexec-seal":
    run("/proc/self/fd/%d" % memfd(MFD_NOEXEC_SEAL))
elif case == "memfd-noexec-seal-chmod":
    fd = memfd(MFD_NOEXEC_SEAL)
    try:
        os.fchmod(fd, 0o755)
    except OSError as e:
        refused("fchmod", e.errno)
    run("/proc/self/fd/%d" % fd)
elif case == "memfd-execveat":
    execveat(memfd(0))
elif case == "file-execveat":
    execveat(os.open(TRUE, os.O_RDONLY))
elif case == "tmpfile":
    # A file with no name (O_TMPFILE) on a writable mount; the writer is
    # closed first, else exec fails with ETXTBSY.
    w = os.open(sys.argv[2], os.O_TMPFILE | os.O_RDWR, 0o700)
    with open(TRUE, "rb") as f:
        os.write(w, f.read())
    r = os.open("/proc/self/fd/%d" % w, os.O_RDONLY)
    os.close(w)
    run("/proc/self/fd/%d" % r)
elif case == "copy":
    copy_to(sys.argv[2])
else:
    sys.exit(2)
PY
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
corral() { tb_exec_host "$top_builddir/corral" --socket "$TB_DIR/corrald.sock" "$@"; }
corral sandbox create --root "$ws" --name x1 >/dev/null
check_eq "a sandbox is created" 0 "$?"
probe() { corral exec x1 -- python3 "$ws/probe.py" "$@" 2>&1; }

# refused CASE NAME: the probe did not run /bin/true (exit 3, and it says
# where it was stopped).
refused() {
	out=$(probe "$1"); rc=$?
	check_eq "$2 (exit 3: refused)" 3 "$rc"
	check_contains "  and the probe says where: $out" "$out" "refused at"
}

# (a) A memfd run through its /proc link: Landlock cannot stop it (a memfd
# lives on an internal mount, which Landlock lets through), so seccomp
# refuses what would make it executable.
refused memfd-proc "a memfd holding /bin/true does not run through /proc/self/fd/N"
refused memfd-devfd "nor through /dev/fd/N"
refused memfd-cloexec "nor when made with MFD_CLOEXEC"
out=$(probe memfd-exec-flag); rc=$?
check_eq "a memfd asked for with MFD_EXEC is refused at memfd_create" \
	"3 refused at memfd_create: EACCES" "$rc $out"
out=$(probe memfd-noexec-seal); rc=$?
check_eq "a memfd made with MFD_NOEXEC_SEAL is allowed, and refuses exec (EACCES)" \
	"3 refused at exec: EACCES" "$rc $out"
out=$(probe memfd-noexec-seal-chmod); rc=$?
check_eq "its exec seal cannot be undone by fchmod +x (EPERM)" \
	"3 refused at fchmod: EPERM" "$rc $out"
# (b) execveat(fd, "", AT_EMPTY_PATH): refused whatever the descriptor.
out=$(probe file-execveat); rc=$?
check_eq "execveat(AT_EMPTY_PATH) of an open /bin/true is refused (EPERM)" \
	"3 refused at exec: EPERM" "$rc $out"
refused memfd-execveat "execveat(AT_EMPTY_PATH) of a memfd is refused"

# (c) and (d): a read-write path gets every Landlock right, EXECUTE among
# them, and /tmp, HOME and /dev/shm are mounted without noexec: what the
# workload writes there is its own to run. Documented here so that a change
# of that rule is a decision, not an accident.
for d in /tmp "$ws" /dev/shm; do
	out=$(probe copy "$d"); rc=$?
	check_eq "a copy of /bin/true written into $d runs (read-write: every right)" 0 "$rc"
done
out=$(corral exec x1 -- sh -c "python3 $ws/probe.py copy \"\$HOME\"" 2>&1); rc=$?
check_eq "a copy written into HOME runs too" 0 "$rc"
out=$(probe tmpfile /tmp); rc=$?
check_eq "so does a nameless file (O_TMPFILE) in /tmp: a file, on a read-write path" 0 "$rc"
out=$(probe copy /etc); rc=$?
[ "$rc" -ne 0 ]; tap_result $? "a read-only folder (/etc) takes no copy to run (exit $rc)"

out=$(corral exec x1 -- no-such-program-here 2>&1); rc=$?
check_eq "a program that does not exist exits 127, as in a shell" 127 "$rc"
check_eq "... saying so on its stderr" "corral: no-such-program-here: No such file or directory" "$out"
out=$(corral exec x1 -- "$ws/probe.py" 2>&1); rc=$?
check_eq "a file that cannot be run (not executable) exits 126" 126 "$rc"
check_contains "... saying why" "$out" "Permission denied"
corral exec x1 --timeout 1 -- sleep 10 >/dev/null 2>&1
check_eq "an exec past its timeout is ended, and says so as timeout(1) does: 124" 124 "$?"
sleep 0.2
check "and the ledger says why (exec_timeout)" corral_ledger_has \
	event=lifecycle sandbox=x1 reason=exec_timeout

# A command that never reads its stdin holds its client back, not the
# broker's memory: 256 MiB sent at it leave the broker's RSS within 64 MiB.
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$(tb_pid corrald)/status"; }
before=$(rss_kib)
tb_exec_host sh -c "head -c 268435456 /dev/zero | \"$top_builddir/corral\" \
	--socket \"$TB_DIR/corrald.sock\" exec x1 -- sleep 8" >/dev/null 2>&1 &
flood=$!
sleep 4
after=$(rss_kib)
check "stdin nobody reads is not buffered by the broker (RSS $before kB, then $after kB)" \
	sh -c '[ -n "$1" ] && [ -n "$2" ] && [ $(($2 - $1)) -lt 65536 ]' _ "$before" "$after"
wait "$flood"
check_eq "and the stream still ends with its command" ok "$(corral exec x1 -- echo ok)"

corral sandbox delete x1 >/dev/null
tap_done
