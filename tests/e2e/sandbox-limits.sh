#!/bin/sh
# Limits by default, and the sandbox's view of the host (corral(1),
# "LIMITS"; corrald.yaml(5), "limits"; ARCHITECTURE.md, "A sandbox's life").
# Sets up: the test bed; corrald in the test host; a workspace owned by
# uid 1000 that holds a .ssh folder with a key.
# Does: creates sandboxes with the defaults and with small limits, fills
# /tmp, /dev/shm and HOME, starts processes past --pids, reads what the
# host's /proc and /etc would tell, and asks for more than the maximum.
# Expects: every sandbox has limits (pids, memory, cpus, tmpfs, home) with
# their source; a full file system says ENOSPC (no OOM kill, the sandbox
# answers), and what it holds is counted in the sandbox's memory; processes
# stop at the pids limit; /proc/self/cgroup shows no host path; /proc's
# host facts and the root's .ssh read empty and cannot be written or
# unmounted; a request over the maximum is refused naming it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

MIB=1048576
port=$(tb_free_port)
ws="$TB_DIR/folders/app"
mkdir -p "$ws/.ssh"
echo "-----BEGIN OPENSSH PRIVATE KEY----- not really" >"$ws/.ssh/id_ed25519"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
in_sb() { corral exec "$1" -- sh -c "$2"; }

ram=$(awk '/^MemTotal:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
ncpu=$(nproc)

# --- Defaults: every sandbox has every limit, and says where it came from.
dflt_json=$(corral sandbox create --root "$ws" --name dflt --json)
check_eq "a sandbox with no limits asked is created" 0 $?
check "its limits are the machine's defaults, with their source" python3 -c "
import json, sys
o = json.loads(sys.argv[1]); ram = int(sys.argv[2]); ncpu = int(sys.argv[3])
l = {x['name']: x for x in o['limits']}
assert sorted(l) == ['cpus', 'home', 'memory', 'pids', 'tmpfs'], l
assert all(x['source'] == 'default' for x in l.values()), l
assert l['pids']['value'] == 1024, l
mem = l['memory']['value']
assert abs(mem - ram // 2) < 2 << 20, (mem, ram)
assert l['cpus']['value'] == max(1, ncpu - 1) * 1000, l
for fs in ('tmpfs', 'home'):
    assert l[fs]['value'] == min(ram // 4, mem // 4) >> 20 << 20, (fs, l[fs], ram)
    assert l[fs]['controller'] == 'tmpfs', l[fs]
assert l['pids']['controller'] in ('v1', 'v2'), l
" "$dflt_json" "$ram" "$ncpu"
size_of() { in_sb dflt "df -B1 --output=size $1 | tail -1 | tr -d ' '"; }
tmpfs=$(printf '%s' "$dflt_json" | python3 -c "
import json, sys
print([x['value'] for x in json.load(sys.stdin)['limits'] if x['name'] == 'tmpfs'][0])")
check_eq "/tmp inside is that size" "$tmpfs" "$(size_of /tmp)"
check_eq "and so is /dev/shm" "$(size_of /tmp)" "$(size_of /dev/shm)"
home=$(in_sb dflt 'echo $HOME')
check_eq "HOME is a bounded file system of its own" "$(size_of /tmp)" "$(size_of "$home")"

# --- Asked limits, and the maximum.
small_json=$(corral sandbox create --root "$ws" --name small --pids 64 --memory 256M --json)
check_eq "a sandbox with small limits is created" 0 $?
check "asked limits say request, and the file systems follow the memory" python3 -c "
import json, sys
l = {x['name']: x for x in json.loads(sys.argv[1])['limits']}
assert l['pids'] == {'name': 'pids', 'value': 64, 'source': 'request', 'controller': l['pids']['controller']}, l
assert l['memory']['value'] == 256 << 20 and l['memory']['source'] == 'request', l
assert l['tmpfs']['value'] == 64 << 20 and l['tmpfs']['source'] == 'request', l
assert l['home']['value'] == 64 << 20, l
" "$small_json"
out=$(corral sandbox create --root "$ws" --name huge --memory "$((ram * 2))" 2>&1)
rc=$?
check_eq "more memory than the maximum is refused" 1 "$rc"
check_contains "naming the maximum and its key" "$out" "corrald.yaml limits.max.memory"

# --- Filling the file systems: ENOSPC, and the sandbox goes on.
fill() {  # fill SANDBOX PATH MIB: dd's own words
	in_sb "$1" "dd if=/dev/zero of=$2/fill bs=1M count=$3 2>&1; echo rc=\$?"
}
out=$(fill small /tmp 100)
check_contains "filling /tmp past its size says ENOSPC" "$out" "No space left on device"
check_lacks "and is no OOM kill" "$out" "Killed"
out=$(fill small /dev/shm 100)
check_contains "filling /dev/shm too" "$out" "No space left on device"
out=$(fill small '$HOME' 100)
check_contains "filling HOME too" "$out" "No space left on device"
check_eq "the sandbox still answers" "alive" "$(in_sb small 'echo alive')"
memcg=$(find /sys/fs/cgroup/memory /sys/fs/cgroup/unified -type d -name small 2>/dev/null |
	while read -r d; do [ -e "$d/memory.usage_in_bytes" ] || [ -e "$d/memory.current" ] &&
	echo "$d"; done | head -1)
if [ -n "$memcg" ]; then
	usage() { cat "$memcg/memory.usage_in_bytes" 2>/dev/null || cat "$memcg/memory.current"; }
	used=$(usage)
	[ "$used" -ge $((150 * MIB)) ]
	tap_result $? "what the file systems hold is the sandbox's memory ($used bytes)"
	in_sb small 'rm -f /tmp/fill /dev/shm/fill "$HOME/fill"'
	after=$(usage)
	[ "$after" -lt $((used - 100 * MIB)) ]
	tap_result $? "and is given back when removed ($after bytes)"
else
	tap_result 1 "the sandbox's memory cgroup is found"
fi

# --- Processes stop at the pids limit.
# One process forks sleepers until refused, then ends them: no fork is
# needed to clean up.
out=$(corral exec small -- python3 -c '
import errno, os, signal
kids = []
why = "none"
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        why = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.kill(k, signal.SIGKILL)
    os.waitpid(k, 0)
print(len(kids), why)')
count=${out%% *}
[ "$count" -lt 64 ] 2>/dev/null && [ "$count" -gt 32 ]
tap_result $? "forks stop below --pids 64 (started $count)" "$out"
check_contains "with EAGAIN" "$out" "EAGAIN"
check_eq "the sandbox answers after" "alive" "$(in_sb small 'echo alive')"

# --- A process killed at the memory limit: the ledger says why.
out=$(corral exec small -- python3 -c 'x = bytearray(1 << 30); print("survived")' 2>&1)
rc=$?
check_eq "a process past --memory 256M is killed (exit 137)" 137 "$rc"
check_lacks "and does not get its gigabyte" "$out" "survived"
check_contains "the exec says the memory limit ended it" "$out" \
	"ended by the sandbox's memory limit (out-of-memory kill)"
out=$(corral exec small -- sh -c 'exit 137' 2>&1)
check_lacks "an exec that exits 137 of itself is not blamed on the limit" "$out" "ended by"
out=$(corral run --json small -- "python3 -c 'x = bytearray(1 << 30)'")
check "a shell run killed at the memory limit says so: ended_by memory_limit" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['exit_code'] == 137 and o['ended_by'] == 'memory_limit', o" "$out"
out=$(corral run --json small -- 'exit 137')
check "a run that exits 137 of itself is not blamed on the limit" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['exit_code'] == 137 and o['ended_by'] is None, o" "$out"
sleep 2          # the counts are read once a second
ledger_has() { corral_ledger_has "$@"; }
ledger_has event=lifecycle sandbox=small reason=memory_limit
check_eq "a lifecycle record names the memory limit" 0 $?
ledger_has event=lifecycle sandbox=small reason=pids_limit
check_eq "and another the pids limit the forks above hit" 0 $?
ledger_has event=lifecycle sandbox=small reason=created
check_eq "its creation is recorded too" 0 $?
ledger_has event=lifecycle sandbox=dflt reason=memory_limit
check_eq "and no other sandbox is blamed" 1 $?

# --- The host's view: cgroups, /proc, the root's credentials.
out=$(in_sb dflt 'cat /proc/self/cgroup')
check_lacks "/proc/self/cgroup names no host cgroup" "$out" "corral"
check_lacks "nor a path above the sandbox's" "$out" ".."
for f in /proc/cmdline /proc/kallsyms /proc/modules /proc/keys; do
	[ -e "$f" ] || continue
	check_eq "$f reads empty inside" 0 "$(in_sb dflt "wc -c < $f")"
done
check "the host's /proc/cmdline is not empty (so the check above means something)" \
	test -s /proc/cmdline
check_eq "the root's .ssh is empty inside" "" "$(in_sb dflt "ls -A '$ws/.ssh'")"
check_contains "and cannot be written" "$(in_sb dflt "touch '$ws/.ssh/x' 2>&1")" \
	"Read-only file system"
check_lacks "nor unmounted" "$(in_sb dflt "umount '$ws/.ssh' 2>&1; ls -A '$ws/.ssh'")" \
	"id_ed25519"
check_eq "the key is untouched on the host" 1 "$(grep -c 'not really' "$ws/.ssh/id_ed25519")"
check_eq "/proc's memory and CPU facts still read (free, nproc)" ok \
	"$(in_sb dflt 'free >/dev/null && nproc >/dev/null && echo ok')"

corral sandbox delete --all >/dev/null
corral_ledger_has event=lifecycle sandbox=small reason=deleted
check_eq "and its deletion" 0 $?
tap_done
