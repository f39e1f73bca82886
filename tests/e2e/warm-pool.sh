#!/bin/sh
# The warm pool (corrald.yaml(5), warm_pool): sandboxes built ahead that a
# create claims.
# Sets up: the test bed; corrald in the test host with warm_pool strict: 1
# and a folder owned by uid 1000.
# Does: waits for the pool; creates wa (claims the warm sandbox) with
# limits of its own; reloads with the pool at 0 and creates cb, cold, with
# the same request; compares the two from inside and from the host; claims
# as a caller other than root, once with a folder it may not read; kills a
# warm sandbox's corral-init before a claim; reaps; stops and restarts
# after a kill -9.
# Expects: a claimed sandbox is indistinguishable from a cold one (the
# same mounts, layers, limits, policy, network behaviour, registry row,
# ledger record and `sandbox get`, its own name and address aside); the
# pool refills after a claim and follows a reload; a refused claim leaves
# nothing behind; a dead warm sandbox makes the create cold, not failed;
# the pool is built one warm sandbox at a time;
# reaping keeps a claimed sandbox's cgroup; warm sandboxes are no one's to
# reach by name; the pool gives another user no slot a cold create would
# not (the last is root's); nothing is left after a stop, and a start after a crash
# reaps what the pool left. In a claimed sandbox a hostile workload gets
# no more than in a cold one: a copied binary passes no binary-scoped
# entry, a run's forged state is not reported, a root below /etc keeps the
# host's masks.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/ws"
mkdir -p "$ws" "$TB_DIR/folders/private"
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R 1000:1000 "$TB_DIR/folders/ws"
chmod 0700 "$TB_DIR/folders/private"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
write_config() {
	corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
warm_pool:
  strict: $1
YAML
}
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
as_user() {
	tb_exec_host setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$top_builddir/corral" --socket "$sock" "$@"
}
counter() {
	corral status --json 2>/dev/null | python3 -c "
import json, sys
print(json.load(sys.stdin)['counters'].get(sys.argv[1], -1))" "$1"
}
# wait_ready N: until the pool holds N ready warm sandboxes (10 s at most).
wait_ready() {
	for _ in $(seq 1 100); do
		[ "$(counter warm_ready)" = "$1" ] && [ "$(counter warm_building)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
log() { cat "$(tb_log corrald)"; }
created_warm() { log | grep -c "sandbox $1 created .*from the warm pool"; }
fetch() {
	corral exec "$1" -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
		-w '%{http_code}' "https://$2" 2>/dev/null
}

# --- the configuration ----------------------------------------------------
corral_config "$TB_DIR/bad.yaml" <<YAML
warm_pool:
  nosuch: 1
YAML
out=$("$top_builddir/corrald" --check-config "$TB_DIR/bad.yaml" 2>&1)
rc=$?
[ "$rc" -ne 0 ]; tap_result $? "--check-config refuses a warm_pool naming no profile"
check_contains "and names it, with the profiles there are" "$out" "unknown profile 'nosuch'"
corral_config "$TB_DIR/bad.yaml" <<YAML
max_sandboxes: 4
warm_pool:
  strict: 3
  standard: 2
YAML
out=$("$top_builddir/corrald" --check-config "$TB_DIR/bad.yaml" 2>&1)
check_contains "a pool larger than max_sandboxes is refused, at its line" "$out" \
	"bad.yaml:11:3: warm_pool: 5 warm sandboxes in all, more than max_sandboxes (4)"
corral_config "$TB_DIR/bad.yaml" <<YAML
warm_pool:
  strict: two
YAML
out=$("$top_builddir/corrald" --check-config "$TB_DIR/bad.yaml" 2>&1)
check_contains "a count that is not a number is refused" "$out" "warm_pool.strict"

write_config 1
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
chmod 0666 "$sock"
inst=corral-$(sed -n 's/.*sandboxes: instance \(i[0-9a-f]*\).*/\1/p' "$(tb_log corrald)" | head -1)
v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)

wait_ready 1; tap_result $? "the pool fills: one warm sandbox ready"
out=$(corral status)
check_contains "status shows the pool" "$out" "Warm pool: 1 of 1 ready, 0 building"
out=$(corral metrics)
check_contains "and the metrics" "$out" 'corral_warm_sandboxes{state="ready"} 1'
check_contains "(none building)" "$out" 'corral_warm_sandboxes{state="building"} 0'
warm_cg=$(ls -d "$v2/$inst"/warm_* 2>/dev/null | head -1)
[ -n "$warm_cg" ] && grep -q . "$warm_cg/cgroup.procs"
tap_result $? "its corral-init waits in a cgroup of its own ($warm_cg)"
slot=${warm_cg##*/warm_}
tb_exec_host ip link show "crs${slot}h" >/dev/null 2>&1
tap_result $? "and its veth is up on the host (crs${slot}h)"

out=$(corral exec "warm_$slot" -- true 2>&1)
[ $? -ne 0 ]; tap_result $? "a warm sandbox cannot be reached by its name: $out"
out=$(corral sandbox create --root "$ws" --name "warm_$slot" 2>&1)
[ $? -ne 0 ]; tap_result $? "nor can a sandbox take such a name: $out"
out=$(corral sandbox list)
check_lacks "and sandbox list does not show it" "$out" "warm_"

# The host replaces a file the sandboxes mask (as useradd rewrites
# /etc/gshadow: a new file renamed over the old) while the warm sandbox
# waits: the mount on the old one goes with it. The backup copy, the same
# bytes, is the file replaced here.
replaced=/etc/gshadow-
if [ -f "$replaced" ]; then
	cp -p "$replaced" "$replaced.ctest" && mv "$replaced.ctest" "$replaced"
	rm -f "$replaced.ctest"
fi

# --- a claim, then the same create cold -----------------------------------
request="--root $ws --pids 77 --memory 300M --cpus 0.5 --env KIND=same"
# shellcheck disable=SC2086 # the request is words
corral sandbox create $request --name wa >/dev/null 2>&1
check_eq "wa is created" 0 $?
check_eq "from the warm pool" 1 "$(created_warm wa)"
wait_ready 1; tap_result $? "the pool refills after the claim"
write_config 0
corral reload >/dev/null 2>&1
check_eq "a reload with the pool at 0 takes" 0 $?
wait_ready 0; tap_result $? "and discards the warm sandbox"
[ ! -e "$v2/$inst/warm_$((slot + 1))" ] && [ "$(ls -d "$v2/$inst"/warm_* | wc -l)" = 1 ]
tap_result $? "only wa's cgroup keeps a warm name (a v2 cgroup is never renamed)"
# shellcheck disable=SC2086
corral sandbox create $request --name cb >/dev/null 2>&1
check_eq "cb is created with the same request" 0 $?
check_eq "cold" 0 "$(created_warm cb)"

norm() { sed -e "s/\b$1\b/NAME/g" -e 's/10\.231\.[0-9]*\.[0-9]*/ADDR/g'; }
inside() {
	# The mounts as a set: their order in the table, and the peer groups
	# of the optional fields, are no property of the sandbox.
	corral exec "$1" -- sh -c 'cut -d" " -f4- /proc/self/mountinfo |
		sed -E "s/ (shared|master|propagate_from):[0-9]+//g" | sort; hostname;
		grep -E "^(Seccomp|NoNewPrivs|Cap(Inh|Prm|Eff|Bnd|Amb))" /proc/self/status;
		cat /proc/self/cgroup; id; echo "$HOME $KIND"; ulimit -a;
		touch /usr/x 2>&1; touch /etc/x 2>&1; touch "$PWD/w-$(hostname)" && echo rw;
		ls /proc/1/root 2>&1; cat /etc/resolv.conf' 2>&1 | norm "$1"
}
inside wa >"$TB_DIR/wa.in"
inside cb >"$TB_DIR/cb.in"
same=$(diff "$TB_DIR/wa.in" "$TB_DIR/cb.in")
check_eq "inside, wa and cb are the same: mounts, hostname, seccomp, capabilities, cgroups, \
Landlock, user, environment" "" "$same"
check_contains "(the comparison saw the mounts)" "$(cat "$TB_DIR/wa.in")" "/usr /usr ro"
get() { corral sandbox get "$1" --json | python3 -c "
import json, sys
o = json.load(sys.stdin)
for k in ('created_at',): o.pop(k)
print(json.dumps(o, sort_keys=True))" | norm "$1"; }
check_eq "sandbox get shows the same sandbox" "$(get cb)" "$(get wa)"
pol() { corral policy get "$1" | norm "$1"; }
check_eq "the same policy" "$(pol cb)" "$(pol wa)"
row() {
	sqlite3 "$TB_DIR/state/registry.db" "select provider, machine_id, session_id, agent,
		roots, profile, enforcement, state, server_pid, labels, owner_uid
		from sandboxes where name = '$1'"
}
check_eq "the same registry row" "$(row cb)" "$(row wa)"
[ -n "$(row wa)" ]; tap_result $? "(the row is there)"
# lim LEAF: the limits in LEAF's cgroups, v1 or v2, wherever the hierarchy
# put the instance.
lim() {
	for f in pids.max memory.limit_in_bytes memory.max cpu.cfs_quota_us cpu.max; do
		find /sys/fs/cgroup -maxdepth 6 -path "*/$inst/$1/$f" 2>/dev/null |
			sort | xargs -r cat
	done
}
check_eq "the same limits, put on the claimed cgroup at the claim" "$(lim cb)" \
	"$(lim "warm_$slot")"
check_contains "(77 pids)" "$(lim "warm_$slot")" 77
check_contains "(300M of memory)" "$(lim "warm_$slot")" 314572800
check_eq "under strict, example.com is refused in wa" 000 "$(fetch wa example.com/)"
check_eq "and in cb" 000 "$(fetch cb example.com/)"
check_eq "api.github.com answers 200 in wa" 200 "$(fetch wa api.github.com/zen)"
check_eq "and in cb" 200 "$(fetch cb api.github.com/zen)"
rec() {
	python3 - "$TB_DIR/log/egress.jsonl" "$1" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    # wa, older, also followed the reload that emptied the pool.
    if r.get("sandbox") != sys.argv[2] or r.get("reason") == "policy_updated":
        continue
    for k in ("ts", "sandbox", "id", "pid", "duration_ms", "bytes_up", "bytes_down", "ip"):
        r.pop(k, None)
    if r.get("run"):
        r["run"] = r["run"].split(":")[0]     # exec ids count over the daemon
    out.append(json.dumps(r, sort_keys=True))
print("\n".join(out))
PY
}
check_eq "the same ledger records: created, refused, allowed" "$(rec cb)" "$(rec wa)"
check_contains "(the records were read)" "$(rec wa)" '"reason": "created"'

# --- a hostile workload in the claimed sandbox -------------------------------
# A copied binary passes no binary-scoped entry (strict's npm registry is
# node's): the trusted executables are read from the claimed corral-init's
# mounts, made before anyone claimed it.
mkdir -p "$ws/bin"
cp /usr/bin/curl "$ws/bin/node"
chown -R 1000:1000 "$ws/bin"
out=$(corral exec wa -- "$ws/bin/node" -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://registry.npmjs.org/ 2>&1)
check_contains "in wa, curl copied as bin/node is refused the npm registry" "$out" 403
check_contains "as a writable binary" "$(rec wa)" '"reason": "binary_writable"'
# A run's report is the kernel's, whatever the run writes where the
# shell's state goes (corral(1), run).
corral run wa -- 'cd /tmp && export KEEP=real' >/dev/null
out=$(corral run --json wa -- "printf 'D/forged\0KEEP=forged\0' >&61 2>/dev/null; exit 7")
check "a run in wa that forges its state reports its real exit 7 and folder" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['exit_code'] == 7 and o['cwd'] == '/tmp', o" "$out"
check_eq "and the next run has the real state" "real /tmp" "$(corral run wa -- 'echo $KEEP $PWD')"
# Reaching the host through a root: a root below /etc keeps the host's
# masks in a claimed sandbox too.
write_config 1
corral reload >/dev/null 2>&1
wait_ready 1
if [ -d /etc/ssl/private ]; then
	corral sandbox create --root "$ws" --root /etc/ssl:ro --name we >/dev/null 2>&1
	check_eq "we, with a root at /etc/ssl, claims the warm sandbox" 1 "$(created_warm we)"
	check_eq "and /etc/ssl/private inside it is the empty mask" "root 555 0" \
		"$(corral exec we -- sh -c 'echo $(stat -c "%U %a" /etc/ssl/private) \
		$(ls -A /etc/ssl/private | wc -l)' 2>&1)"
	# The root hides the system bundle corral-init read before it came:
	# the bundle with the sandbox CA goes over the one the root shows.
	check_eq "and the system bundle under that root is the sandbox's, with its CA" same \
		"$(corral exec we -- sh -c 'cmp -s /etc/ssl/certs/ca-certificates.crt \
		/run/corral/ca-bundle.pem && echo same || echo differs' 2>&1)"
	corral sandbox delete we >/dev/null 2>&1
else
	tap_skip "a root at /etc/ssl keeps its mask in a claimed sandbox" "no /etc/ssl/private here"
fi

# --- claims by another user, and the ones that fail -----------------------
# leaked: warm cgroups that are neither a live sandbox's nor the pool's.
leaked() {
	inits=" $(sqlite3 "$TB_DIR/state/registry.db" 'select init_pid from sandboxes' |
		tr '\n' ' ')"
	n=0
	for d in "$v2/$inst"/warm_*; do
		[ -d "$d" ] || continue
		p=$(head -1 "$d/cgroup.procs")
		case $inits in *" $p "*) ;; *) n=$((n + 1)) ;; esac
	done
	echo $((n - $(counter warm_ready) - $(counter warm_building)))
}
write_config 1
corral reload >/dev/null 2>&1
wait_ready 1; tap_result $? "a reload back to 1 fills the pool again"
out=$(cd "$top_srcdir/clients/python" && tb_exec_host setpriv --reuid=1000 --regid=1000 \
	--clear-groups env PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c "
import sys
from corral._client import _Call
for i in range(3):
    c = _Call(sys.argv[1], 'sandbox_create', {'roots': [{'path': sys.argv[2], 'writable': True}],
        'grants': ['gh'], 'home': 'relative/home', 'name': 'rel%d' % i})
    r = c.next()
    c.close()
    print(r.get('error', r) if r else None)" "$sock" "$ws" 2>&1)
check_contains "a create whose --home is not absolute is refused before the monitor" "$out" \
	"--home must be an absolute path"
wait_ready 1; tap_result $? "the pool holds its warm sandbox"
check_eq "and no warm sandbox leaked" 0 "$(leaked)"
out=$(as_user sandbox create --root "$TB_DIR/folders/private" --name up 2>&1)
[ $? -ne 0 ]; tap_result $? "uid 1000 claiming with a folder it may not read is refused"
check_contains "with the caller's own refusal" "$out" "private refused: you may not read"
wait_ready 1; tap_result $? "the pool refills after the refused claim"
check_eq "and the refused claim's warm sandbox went" 0 "$(leaked)"
check_eq "which left no sandbox" "" "$(corral sandbox list | grep -w up)"
[ ! -e "$TB_DIR/state/sandboxes/up" ]; tap_result $? "and no home"
as_user sandbox create --root "$ws" --name uw >/dev/null 2>&1
check_eq "uid 1000 claims with its own folder" 0 $?
check_eq "from the warm pool" 1 "$(created_warm uw)"
check_eq "and runs as uid 1000 in it" 1000 "$(as_user exec uw -- id -u 2>/dev/null)"
check_eq "its sandbox is its own: another's name is refused to it" "" \
	"$(as_user exec wa -- true 2>/dev/null; echo)"

wait_ready 1
# The warm cgroup whose corral-init is no sandbox's (claimed ones keep
# their warm names).
inits=" $(sqlite3 "$TB_DIR/state/registry.db" 'select init_pid from sandboxes' | tr '\n' ' ')"
warm_cg=
for d in "$v2/$inst"/warm_*; do
	p=$(head -1 "$d/cgroup.procs")
	case $inits in *" $p "*) ;; *) warm_cg=$d ;; esac
done
[ -n "$warm_cg" ]; tap_result $? "the warm sandbox is found, to kill its corral-init"
for p in $(cat "$warm_cg/cgroup.procs"); do kill -KILL "$p"; done
sleep 0.2
corral sandbox create --root "$ws" --name dead >/dev/null 2>&1
check_eq "a create whose warm sandbox died still succeeds" 0 $?
check_contains "cold, and the log says why" "$(log)" "its corral-init is gone; building the sandbox cold"
check_eq "dead runs" ok "$(corral exec dead -- echo ok 2>/dev/null)"

corral reap >/dev/null 2>&1
check_eq "after a reap, wa still runs" ok "$(corral exec wa -- echo ok 2>/dev/null)"
[ -d "$v2/$inst/warm_$slot" ]; tap_result $? "and its cgroup is still there"

# --- stop, crash, start ---------------------------------------------------
wait_ready 1
corral sandbox delete --all >/dev/null 2>&1
tb_stop corrald
[ ! -e "$v2/$inst" ]; tap_result $? "a stop leaves no cgroup of the instance"
check_eq "and no veth" "" "$(ip -o link show | grep -o 'crs[0-9]*h' | head -1)"
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
chmod 0666 "$sock"
wait_ready 1; tap_result $? "a new start fills the pool"
broker=$(tb_pid corrald)
monitor=$(pgrep -P "$broker" -x corrald-monitor)
[ -n "$monitor" ]; tap_result $? "the monitor is found, to be killed"
kill -KILL "$monitor" "$broker" 2>/dev/null
sleep 0.5
[ -n "$(ls -d "$v2/$inst"/warm_* 2>/dev/null)" ]
tap_result $? "a kill -9 leaves the warm sandbox's cgroup behind"
: >"$(tb_log corrald)"
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
chmod 0666 "$sock"
wait_ready 1; tap_result $? "the next start reaps it and fills the pool"
check_lacks "with no failed build" "$(log)" "could not be built"
check_eq "one warm cgroup, not two" 1 "$(ls -d "$v2/$inst"/warm_* | wc -l)"

# --- one build at a time: a create waits behind one at most -----------------
write_config 3
corral reload >/dev/null 2>&1 &
reloading=$!
most=0
for _ in $(seq 1 60); do
	n=$(corral status --json 2>/dev/null | sed -n 's/.*"warm_building": *\([0-9]*\).*/\1/p')
	[ "${n:-0}" -gt "$most" ] && most=$n
done
wait "$reloading"
wait_ready 3; tap_result $? "a reload to 3 fills the pool"
check_eq "building one warm sandbox at a time (at most 1 seen building)" ok \
	"$([ "$most" -le 1 ] && echo ok || echo "$most at once")"

# --- the pool gives way to sandboxes at max_sandboxes ------------------------
tb_stop corrald
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
max_sandboxes: 2
warm_pool:
  strict: 1
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
chmod 0666 "$sock"
wait_ready 1
corral sandbox create --root "$ws" --name g1 >/dev/null 2>&1
check_eq "at max_sandboxes 2, g1 claims the warm sandbox" 1 "$(created_warm g1)"
wait_ready 1; tap_result $? "and the pool refills: one sandbox and one warm fill the two"
corral sandbox create --root "$ws" --name g2 --profile standard >/dev/null 2>&1
check_eq "a cold create of another profile still succeeds" 0 $?
wait_ready 0; tap_result $? "and the warm sandbox gives way to it"
corral sandbox delete g2 >/dev/null 2>&1
wait_ready 1; tap_result $? "a delete makes room: the pool refills"
# A neighbour cannot take through the pool what a cold create may not: the
# last slot is root's, warm sandbox or not.
out=$(as_user sandbox create --root "$ws" --name u2 2>&1)
check_eq "uid 1000 claiming the last slot from the pool is refused (a limit: 5)" 5 $?
check_contains "naming the slot kept for root" "$out" "the last slot is kept for root"
check_eq "and the warm sandbox stays warm" 1 "$(counter warm_ready)"
corral sandbox create --root "$ws" --name g3 >/dev/null 2>&1
check_eq "root claims it" 1 "$(created_warm g3)"
tap_done
