#!/bin/sh
# Persistent shells (PROTOCOL.md section 5), end
# to end.
# Sets up: the test bed; corrald in the test host; a workspace owned by
# uid 1000 holding hello.txt; one sandbox over it.
# Does: runs commands in its `main` shell with `corral run`, cuts a client
# in the middle of a run and asks again with the same id, lets runs time
# out, kills a run's shell from inside, interrupts a run, reuses an id, and
# tries another user's run. (tests/e2e/shells-integrity.sh tries the
# attacks on what a run reports.)
# Expects: cwd and environment kept across runs; stdin at end of file; an
# exit code and cwd that output cannot fake; one execution per id; the
# result of a run whose client went away; timed_out results after which
# the next run works in the same shell; `runs` listing; refusals that say
# why.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/app"
mkdir -p "$ws"
echo "hello from the workspace" >"$ws/hello.txt"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
# shell_pid: the pid (the sandbox's view) of the main shell's supervisor,
# corral-shell: every run's shell is its child.
shell_pid() { corral run s1 -- 'echo $PPID'; }

corral sandbox create --root "$ws" --name s1 >/dev/null
check_eq "the sandbox is created" 0 "$?"

# --- One persistent shell: cwd and environment survive between runs.
out=$(corral run s1 -- 'cat hello.txt && cd /tmp && export KEEP=yes')
rc=$?
check_eq "a first run exits 0" 0 "$rc"
check_eq "and prints hello.txt" "hello from the workspace" "$out"
out=$(corral run s1 -- 'echo $KEEP $PWD')
check_eq "the next run sees the variable and the folder" "yes /tmp" "$out"
corral run s1 -- 'exit_code_test() { return 7; }; exit_code_test'; rc=$?
check_eq "a run exits with its command's status" 7 "$rc"
out=$(corral run s1 -- 'echo out; echo err >&2')
check_eq "stderr is merged into the output, in order" "out
err" "$out"

# --- Stdin and faked status lines.
out=$(corral run --timeout 5 s1 -- 'cat; echo "cat-ended:$?"')
check_eq "a command that reads stdin gets end of file at once" "cat-ended:0" "$out"
out=$(corral run --json s1 -- 'printf "\0370123456789abcdef\037"; printf "0123456789abcdef\0000\000/fake\000"; echo "status 0 cwd /fake"; cd /; false')
rc=$?
check_eq "output imitating the status cannot fake the exit code" 1 "$rc"
check "nor the cwd" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['exit_code'] == 1 and o['cwd'] == '/', o
assert 'status 0 cwd /fake' in o['output'], o
" "$out"
corral run s1 -- 'cd /tmp' >/dev/null

# --- A cut stream: the client goes, the run goes on, the same id gets the result once.
pid_before=$(shell_pid)
corral run --id cut-1 s1 -- 'echo started >> /tmp/cut-count; sleep 3; echo finished-while-away' \
	>"$TB_DIR/cut.out" 2>&1 &
client=$!
sleep 1
kill -9 "$client" 2>/dev/null
wait "$client" 2>/dev/null
out=$(corral run --id cut-1 s1 -- 'echo started >> /tmp/cut-count; sleep 3; echo finished-while-away')
rc=$?
check_eq "the same id asked again exits 0" 0 "$rc"
check_eq "and returns what the run printed while nobody listened" "finished-while-away" "$out"
check_eq "the command ran once" 1 "$(corral run s1 -- 'wc -l < /tmp/cut-count')"
check_eq "the shell was not restarted" "$pid_before" "$(shell_pid)"
check_eq "\$KEEP and \$PWD survive" "yes /tmp" "$(corral run s1 -- 'echo $KEEP $PWD')"
out=$(corral run --id cut-1 s1 -- 'echo another command' 2>&1)
rc=$?
check_eq "an id reused for another command is refused (125)" 125 "$rc"
check_contains "and says why" "$out" "was used for another command"

# --- A run by its id alone, and its output as JSON lines as it comes.
out=$(corral runs get s1 cut-1)
check_eq "runs get gives a run's output by its id, without the command" \
	"finished-while-away" "$out"
check_eq "... and runs nothing again" 1 "$(corral run s1 -- 'wc -l < /tmp/cut-count')"
out=$(corral runs get s1 cut-1 --json)
check "runs get --json is the run's object" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['request_id'] == 'cut-1' and o['output'] == 'finished-while-away\\n', o" "$out"
out=$(corral run --json --follow --id flw-1 s1 -- 'echo one; sleep 0.3; echo two; exit 4')
rc=$?
check "run --json --follow: JSON lines of output with their offsets, then the result" python3 -c "
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines()]
chunks, last = lines[:-1], lines[-1]
assert ''.join(c['output'] for c in chunks) == 'one\\ntwo\\n', lines
assert [c['offset'] for c in chunks][0] == 0 and len(chunks) >= 2, lines
assert last['result']['exit_code'] == 4 and last['result']['request_id'] == 'flw-1', last" "$out"
check_eq "... exiting with the run's status" 4 "$rc"
out=$(corral runs attach s1 flw-1 --json | tail -n 1)
check_contains "runs attach --json ends with the result line" "$out" '"exit_code":4'
corral runs get s1 no-such-run >/dev/null 2>&1
check_eq "runs get of an id the daemon does not hold exits 125 (not found, corral's)" 125 "$?"

# --- A pipeline's writer dies of SIGPIPE when its reader leaves, as in bash -c.
out=$(corral run s1 -- 'yes | head -1; echo "yes ended with ${PIPESTATUS[0]}"' 2>&1)
check_eq "yes | head -1: yes dies of SIGPIPE, quietly" "y
yes ended with 141" "$out"

# --- A run is scheduled as any command (SCHED_OTHER, 0), though the zygote
# that clones it is SCHED_BATCH (3).
check_eq "a run's shell and its command are SCHED_OTHER" "0 0" \
	"$(corral run s1 -- 'awk "{ printf \"%s \", \$41 }" /proc/$$/stat; awk "{ print \$41 }" /proc/self/stat')"

# --- Timeouts, interrupts, a shell killed from inside.
out=$(corral run --json --timeout 1 --id slow-1 s1 -- 'sleep 30')
check "a run past its timeout is interrupted (timed_out, SIGINT)" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['timed_out'] and o['exit_code'] == 130 and o['signal'] == 2, o
assert o['ended_by'] == 'timeout', o
assert not o['respawned'], o
" "$out"
check "the ledger says why: a run_timeout record naming the run" corral_ledger_has \
	event=lifecycle sandbox=s1 reason=run_timeout run=slow-1
check_eq "the next run works and keeps \$PWD" "/tmp" "$(corral run s1 -- 'pwd')"
out=$(corral run --json --timeout 1 s1 -- 'while :; do :; done')
check "a busy loop in the shell itself is interrupted without a respawn" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['timed_out'] and not o['respawned'], o
" "$out"
check_eq "and the shell kept \$KEEP" "yes" "$(corral run s1 -- 'echo $KEEP')"
corral run s1 -- 'cd /tmp' >/dev/null
out=$(corral run --json --timeout 1 s1 -- '(trap "" INT QUIT; sleep 30)')
check "a job that ignores SIGINT gets SIGKILL, and the shell survives" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['timed_out'] and not o['respawned'] and o['exit_code'] == 137, o
" "$out"
check_eq "and keeps its \$PWD" /tmp "$(corral run s1 -- pwd)"
pid_before=$(shell_pid)
out=$(corral run --json s1 -- 'cd /; kill -9 $$')
check "a run that kills its own shell reports signal 9, and is not saved" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert not o['respawned'] and o['exit_code'] == 137 and o['signal'] == 9, o
assert not o['state_saved'] and o['cwd'] == '/tmp', o
" "$out"
out=$(corral run s1 -- 'echo again; pwd')
check_eq "the next run works in the same shell, from the folder before" "again
/tmp" "$out"
check_eq "whose supervisor is the same" "$pid_before" "$(shell_pid)"

# --- Output over the keep limit: streamed whole, marked truncated for a later resume.
corral run --json s1 -- 'head -c 1200000 /dev/zero | tr "\\0" x' >"$TB_DIR/big.json"
check "a run over the 1 MiB keep limit streams it all and says truncated" python3 -c "
import json, sys
o = json.load(open(sys.argv[1]))
assert o['truncated'] and len(o['output']) == 1200000 and o['exit_code'] == 0, (o['truncated'], len(o['output']))
assert set(o['output']) == {'x'}, 'other bytes in the output'
" "$TB_DIR/big.json"

# --- Runs in one shell take turns; another shell runs beside them.
corral run --id turn-1 s1 -- 'sleep 1; echo first >> /tmp/turns' >/dev/null &
client=$!
sleep 0.3
corral run --shell side s1 -- 'echo beside >> /tmp/turns'
corral run s1 -- 'echo second >> /tmp/turns'
wait "$client"
check_eq "a second run in the same shell waits for the first; another shell does not" "beside
first
second" "$(corral run s1 -- 'cat /tmp/turns')"

# --- An interactive shell through the exec stream's terminal.
out=$(printf 'echo shell-says-$((40+2))\nexit\n' | tb_exec_host script -qec \
	"$top_builddir/corral --socket $sock shell s1" /dev/null 2>&1)
check_contains "corral shell runs an interactive bash on a terminal" "$out" "shell-says-42"

# --- runs, interrupt, acknowledgement.
corral run --id long-1 s1 -- 'sleep 100' >/dev/null 2>&1 &
client=$!
sleep 1
out=$(corral runs s1 --json)
check "runs lists the run in flight and the kept ones" python3 -c "
import json, sys
runs = {r['request_id']: r for r in json.loads(sys.argv[1])}
assert runs['long-1']['state'] == 'running' and runs['long-1']['result'] is None, runs
assert runs['cut-1']['result']['exit_code'] == 0, runs
" "$out"
check_contains "runs prints a table" "$(corral runs s1)" "long-1"
corral interrupt s1 long-1
check_eq "interrupt exits 0" 0 "$?"
wait "$client"
rc=$?
check_eq "the interrupted run's client exits 130" 130 "$rc"
check "the ledger says so: a run_interrupted record naming it" corral_ledger_has \
	event=lifecycle sandbox=s1 reason=run_interrupted run=long-1
out=$(corral interrupt s1 no-such-run 2>&1)
check_contains "interrupting an unknown id is refused" "$out" "holds no run 'no-such-run'"

# --- Another user.
chmod 0666 "$sock"
out=$(tb_exec_host setpriv --reuid=1234 --regid=1234 --clear-groups \
	"$top_builddir/corral" --socket "$sock" run s1 -- 'id' 2>&1)
rc=$?
check_eq "another user cannot run in the sandbox (125)" 125 "$rc"
check_contains "it is not even told the sandbox exists" "$out" "no sandbox named 's1'"
out=$(tb_exec_host setpriv --reuid=1234 --regid=1234 --clear-groups \
	"$top_builddir/corral" --socket "$sock" runs s1 2>&1)
check_contains "nor list its runs" "$out" "no sandbox named 's1'"

# --- A deleted sandbox takes its shells along; a new one of the same name starts fresh.
corral sandbox delete s1 >/dev/null
corral sandbox create --root "$ws" --name s1 >/dev/null
out=$(corral runs s1 --json)
check_eq "a new sandbox of the same name has no runs" "[]" "$out"
check_eq "and its shell starts in the workspace" "$ws" "$(corral run s1 -- pwd)"
corral sandbox delete s1 >/dev/null
tap_done
