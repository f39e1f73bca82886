#!/bin/sh
# The monitor's death (corrald(8), "Privilege separation"): when the root
# monitor is killed, the broker vouches for nothing any more.
# Sets up: the test bed; corrald in the test host; a workspace owned by
# uid 1000; a sandbox with a long-running background job.
# Does: stops the monitor (SIGSTOP) and asks for a second sandbox's
# delete; SIGKILL to the monitor; then asks the daemon; then starts corrald
# again on the same state folder.
# Expects: every process of the sandbox gone within seconds; the broker
# exits with status 3; a client is told the daemon is not there (never
# "ready" or "deleted": nor the delete in flight, whose teardown the
# monitor never confirmed), and the client of a run in flight that the run
# ended with it; the next start reaps the sandbox's cgroups and
# home, and lists no sandbox.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

WAIT_TENTHS=100                 # ten seconds, in tenths

port=$(tb_free_port)
ws="$TB_DIR/folders/app"
mkdir -p "$ws"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }

# wait_until COMMAND...: true once COMMAND succeeds, within WAIT_TENTHS.
wait_until() {
	_i=0
	while [ "$_i" -lt "$WAIT_TENTHS" ]; do
		"$@" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

corral sandbox create --root "$ws" --name md1 >/dev/null &&
	corral sandbox create --root "$ws" --name md2 >/dev/null
check_eq "two sandboxes are created" 0 $?
corral run md1 --id bg -- 'sleep 300 >/dev/null 2>&1 &' >/dev/null
broker=$(tb_pid corrald)
monitor=$(pgrep -P "$broker" -x corrald-monitor)
check "the monitor is the broker's child" test -n "$monitor"
sleepers() { pgrep -u 1000 -x sleep >/dev/null; }
check "the background job runs as the sandbox's user" sleepers
cg=$(find /sys/fs/cgroup/unified -maxdepth 3 -type d -name 'md1' 2>/dev/null | head -1)
check "the sandbox has a cgroup" test -n "$cg"
home="$TB_DIR/state/sandboxes/md1/home"
check "the sandbox has a home" test -d "$home"

# A run in flight as the daemon goes: its client must not say it goes on.
corral run md1 --id inflight -- 'sleep 30' >/dev/null 2>"$TB_DIR/run.err" &
runner=$!
sleep 1
# A delete the monitor never answers: it is stopped, then killed.
kill -STOP "$monitor"
corral sandbox delete md2 >"$TB_DIR/delete.out" 2>&1 &
deleter=$!
sleep 0.5
kill -KILL "$monitor"
no_sleepers() { ! sleepers; }
wait_until no_sleepers
tap_result $? "every process of the sandbox ends within seconds"
broker_gone() { ! kill -0 "$broker" 2>/dev/null; }
wait_until broker_gone
tap_result $? "the broker exits"
log=$(cat "$(tb_log corrald)")
check_contains "it says why" "$log" "the monitor is gone: ending every sandbox"
wait "$broker"
check_eq "with status 3" 3 "$?"
wait "$runner"
check_eq "the client of the run in flight exits 125 (corral failed, not the run)" 125 "$?"
check_contains "saying the run ended with the daemon" "$(cat "$TB_DIR/run.err")" \
	"corrald no longer answers"
check_lacks "never that it goes on" "$(cat "$TB_DIR/run.err")" "goes on"
wait "$deleter"
rc=$?
sed 's/^/# delete: /' "$TB_DIR/delete.out"
check "the delete in flight fails" test "$rc" -ne 0
check_lacks "and never says deleted" "$(cat "$TB_DIR/delete.out")" "deleted md2"

out=$(corral sandbox list 2>&1)
rc=$?
check_eq "a client is refused: unavailable, 6" 6 "$rc"
check_lacks "and never hears ready" "$out" "ready"
out=$(corral status 2>&1)
check_contains "status says Disconnected" "$out" "Status: Disconnected"

# The next start reaps what the killed monitor could not remove.
rm -f "$sock"
corral_start corrald2 "$TB_DIR/corrald.yaml" "$port"
out=$(corral sandbox list --json)
check_eq "the restarted daemon lists no sandbox" "[]" "$out"
log=$(cat "$(tb_log corrald2)")
check_contains "it reaped the leftovers" "$log" "reaped"
check "the home is gone" test ! -e "$home"
check "the cgroup is gone" test ! -e "$cg"

# A second corrald on the same state folder is told at once who holds it.
start=$(date +%s)
out=$(tb_exec_host timeout 20 "$top_builddir/corrald" --foreground --config "$TB_DIR/corrald.yaml" 2>&1)
rc=$?
check_eq "a second corrald on the same state folder exits 1" 1 "$rc"
check_contains "and names the running one's pid" "$out" \
	"another corrald (pid $(tb_pid corrald2)) uses the state folder $TB_DIR/state"
[ $(($(date +%s) - start)) -le 3 ]; tap_result $? "at once, not after a wait"
check "the running one still answers" corral status

tap_done
