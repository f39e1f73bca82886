#!/bin/sh
# Persistent shells that a framework can trust (PROTOCOL.md section 5,
# ARCHITECTURE.md "Sessions: shells and files"), end to end, each attack a
# run tries and sees fail.
# Sets up: the test bed; corrald in the test host; a workspace owned by
# uid 1000; one sandbox over it; a bash builtin of the run's own, built on
# the host.
# Does: forges results the old way and new ways (its own dump, a child's,
# native code), redefines what a wrapper would call, kills and stops the
# zygote, spies on a later run from an earlier run's daemon (memory,
# environment, descriptors, pipe, pidfd_getfd, ptrace), reads the
# supervisor, prints after its run ended, exports past the cap, is
# interrupted, stops the supervisor from outside mid-run, and plants a
# BASH_ENV file for the next zygote.
# Expects: exit codes from the kernel, cwd and environment only from a
# normal exit of the run's own shell, output that is the run's own and
# ends with it, late output kept apart under the run that started the job,
# no chatter, every cross-run read refused, signals between runs allowed,
# the shell alive after each, and the state kept across a new supervisor.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/app"
mkdir -p "$ws"
# Native code a run loads into its own shell: it sends a forged dump on
# the state socket (fd 61), as if its shell were exiting from /forged.
cat >"$TB_DIR/evil.c" <<'C'
#include <string.h>
#include <sys/socket.h>
struct word_list;
struct builtin { char *name; int (*function)(struct word_list *); int flags;
	char *const *long_doc; const char *short_doc; char *handle; };
static int evil(struct word_list *l)
{
	static const char d[] = "D/forged\0KEEP=forged";
	(void)l;
	return send(61, d, sizeof(d), 0) == (long)sizeof(d) ? 0 : 3;
}
static char name[] = "evil";
struct builtin evil_struct = { name, evil, 1, 0, "evil", 0 };
C
gcc -shared -fPIC -o "$ws/evil.so" "$TB_DIR/evil.c" 2>/dev/null
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
# jq_check NAME JSON PYTHON-EXPRESSION: the run's JSON result o holds the expression.
jq_check() {
	check "$1" python3 -c "import json, sys; o = json.loads(sys.argv[1]); assert $3, o" "$2"
}

corral sandbox create --root "$ws" --name s1 >/dev/null
check_eq "the sandbox is created" 0 "$?"
corral run s1 -- 'cd /tmp && export KEEP=real' >/dev/null

# --- Forged results (the review's attacks and the new wire's).
out=$(corral run --json s1 -- "printf '%s\0%d\0%s\0' x 0 /forged >&10 2>/dev/null;
	printf 'D/forged\0KEEP=forged\0' >&61; echo fake >/dev/tty 2>/dev/null; exit 7")
jq_check "a run that forges a status and a dump reports the kernel's exit 7" "$out" \
	"o['exit_code'] == 7 and o['cwd'] == '/tmp' and o['state_saved']"
check_eq "and the next run has the real state, not the forged one" "real /tmp" \
	"$(corral run s1 -- 'echo $KEEP $PWD')"
out=$(corral run --json s1 -- 'PWD=/etc/forged; exit 7')
jq_check "a run that sets PWD reports the folder its shell is really in" "$out" \
	"o['exit_code'] == 7 and o['cwd'] == '/tmp'"
check_eq "and the next run starts there" "/tmp" "$(corral run s1 -- '/bin/pwd')"
out=$(corral run --json s1 -- "( printf 'D/forged\0KEEP=child\0' >&61 ); \
	sleep 0 & printf 'D/forged\0KEEP=job\0' >&61 & wait; cd /; echo done")
jq_check "a subshell's and a job's forged dumps are dropped (only the run's shell counts)" \
	"$out" "o['cwd'] == '/' and o['output'] == 'done\n'"
check_eq "so the state is the shell's own" "real /" "$(corral run s1 -- 'echo $KEEP $PWD')"
corral run s1 -- 'cd /tmp' >/dev/null
out=$(corral run --json s1 -- 'enable -f "'"$ws"'/evil.so" evil && evil; echo evil=$?; exit 1')
jq_check "native code the run loads sends a forged dump: the exit code is the kernel's 1" \
	"$out" "o['exit_code'] == 1 and 'evil=0' in o['output']"
check_eq "and the genuine dump at exit supersedes the forged one" "real" \
	"$(corral run s1 -- 'echo $KEEP')"
out=$(corral run --json s1 -- "printf 'D/forged\0KEEP=forged\0' >&61; kill -9 \$\$")
jq_check "a forged dump followed by SIGKILL counts for nothing (signal 9, state kept)" "$out" \
	"o['signal'] == 9 and o['exit_code'] == 137 and not o['state_saved'] and not o['respawned']"
check_eq "the state is the one from before" "real /tmp" "$(corral run s1 -- 'echo $KEEP $PWD')"
out=$(corral run --json s1 -- "cd /; exec sh -c 'exit 3'")
jq_check "exec reports the kernel's 3, and its cd is not kept" "$out" \
	"o['exit_code'] == 3 and not o['state_saved'] and o['cwd'] == '/tmp'"
corral run s1 -- 'corral() { :; }; eval() { :; }; exit() { :; }; builtin() { :; };
	command() { :; }; enable -n exit; trap "exit 0" EXIT; trap "return 0" DEBUG; set -e; false' \
	>/dev/null 2>&1
check_eq "redefinitions and traps of one run do not reach the next: false reports 1" 1 \
	"$(corral run s1 -- false >/dev/null; echo $?)"
out=$(corral run --json s1 -- 'cd /tmp; export AT_EXIT=1; exit 7')
jq_check "exit 7 reports 7, saves the state from before the exit, and the shell stays" "$out" \
	"o['exit_code'] == 7 and o['state_saved'] and o['cwd'] == '/tmp' and not o['respawned']"
check_eq "the next run has it" "1 /tmp" "$(corral run s1 -- 'echo $AT_EXIT $PWD')"
# Forged status bytes on every descriptor the run holds (and, by path,
# every one /proc lets it reopen), in the old wire's shape, the new
# wire's and the old marker's, then exit 5.
out=$(corral run --json s1 -- 'for f in /proc/$$/fd/*; do n=${f##*/};
	printf "x\0000\0/forged\0" >&$n 2>/dev/null; printf "D/forged\0KEEP=fd$n\0" >&$n 2>/dev/null;
	printf "\037corral-1\037" >&$n 2>/dev/null; printf "D/forged\0" >"$f" 2>/dev/null; done;
	echo tried; exit 5')
jq_check "forged bytes on every descriptor of the run (and every one it can reopen): the kernel's exit 5" \
	"$out" "o['exit_code'] == 5 and o['cwd'] == '/tmp' and o['output'].endswith('tried\n')"
check_eq "and the state is the run's own" "real /tmp" "$(corral run s1 -- 'echo $KEEP $PWD')"
# A file sourced from the repository does what the run's text could:
# forges, redefines what a wrapper calls, traps EXIT into a false 0.
cat >"$ws/.envrc" <<'SH'
printf 'x\0000\0/forged\0' >&10 2>/dev/null
printf 'D/forged\0KEEP=sourced\0' >&61 2>/dev/null
false() { return 0; }; exit() { builtin exit 0; }; enable -n false 2>/dev/null
trap 'builtin exit 0' EXIT
export FROM_ENVRC=yes
SH
chown 1000:1000 "$ws/.envrc"
out=$(corral run --json s1 -- ". $ws/.envrc; cd /; false")
jq_check "a sourced file's EXIT trap makes its own run exit 0, the status the kernel saw" "$out" \
	"o['exit_code'] == 0 and o['cwd'] == '/' and o['state_saved']"
check_eq "but not a later run: false reports 1, the sourced export is kept, the forged dump is not" \
	"1 yes real /" "$(corral run s1 -- 'false; echo $? $FROM_ENVRC $KEEP $PWD')"
corral run s1 -- 'cd /tmp' >/dev/null

# A child of the run floods the state socket so that the shell's genuine
# dump cannot be sent at its exit, leaving the forged one its text sent
# before (the supervisor reads the socket while the run goes on).
corral run s1 -- 'cd /tmp && export KEEP=real' >/dev/null
out=$(corral run --json s1 -- "printf 'D/forged\0KEEP=flooded\0' >&61;
	( while printf %01000d 0 >&61; do :; done ) 2>/dev/null & sleep 0.5; cd /; exit 4")
jq_check "a child flooding the state socket: exit 4, cwd /, the run's own state saved" "$out" \
	"o['exit_code'] == 4 and o['cwd'] == '/' and o['state_saved']"
check_eq "and the next run has the genuine state, not the forged one" "real /" \
	"$(corral run s1 -- 'echo $KEEP $PWD')"
out=$(corral run --json s1 -- 'cd /tmp; export FLOOD=1; ( while printf %01000d 0 >&61; do :; done ) 2>/dev/null & sleep 0.5; exit 0')
jq_check "a flood alone loses nothing: a normal exit's state is saved" "$out" \
	"o['exit_code'] == 0 and o['cwd'] == '/tmp' and o['state_saved']"
# A dump of tens of thousands of empty fields (within its bytes' bound)
# would make the supervisor's report past its message's bound.
out=$(corral run --json s1 -- 'a=(); for i in $(seq 4000); do a+=(""); done;
	for i in $(seq 15); do printf "%s\0" d "${a[@]}" >&61; done; printf "D\0" >&61; exec true')
jq_check "a dump of 60,000 empty fields then exec: exit 0 from the kernel, no state, the shell alive" \
	"$out" "o['exit_code'] == 0 and not o['state_saved'] and not o['respawned']"
check_eq "and the next run is served by the same shell" "ok /tmp" \
	"$(corral run s1 -- 'echo ok $PWD')"

# The shell's end skips exit()'s own work (corral-shell.so): its output,
# buffered or not, and its EXIT trap still come out, and its status is the
# one it ended with.
out=$(corral run --json s1 -- 'trap "printf trap-out" EXIT; printf no-newline; printf " %s" x >&2; exit 3')
jq_check "output without a newline, on both streams, and the EXIT trap's, all come out; exit 3 is 3" \
	"$out" "o['output'] == 'no-newline xtrap-out' and o['exit_code'] == 3"

# --- What a run is: its own shell and session, no terminal, no descriptor of ours.
out=$(corral run s1 -- 'echo "$$ $BASHPID"; cat /proc/$PPID/comm; tty; [ -t 1 ] && echo tty1;
	ls /proc/self/fd | tr "\n" " "')
set -- $out
check_eq "\$\$ is the run's own shell (\$BASHPID)" "$1" "$2"
check_eq "its parent is corral-shell" "corral-shell" "$3"
check_contains "it has no terminal" "$out" "not a tty"
check_lacks "its output is not a terminal" "$out" "tty1"
check_lacks "its commands hold neither the input nor the state socket" "$out" " 60 "
check_lacks "nor the state socket" "$out" " 61 "
other=$(corral run s1 -- 'echo $$')
[ "$other" != "$1" ]; tap_result $? "each run has a \$\$ of its own"
out=$(corral run s1 -- 'sleep 5 & echo x')
check_eq "'sleep 5 & echo x' gives exactly x (no job chatter)" "x" "$out"
out=$(corral run --json s1 -- 'sleep 1 & echo x; wait; sleep 0.1 & jobs >/dev/null; echo y')
jq_check "'sleep 1 & echo x; wait', and more jobs after it: only x and y" "$out" \
	"o['output'] == 'x\ny\n' and o['exit_code'] == 0"

# --- Late output stays with the run that started the job.
corral run --id late-1 s1 -- '( sleep 1; echo LATE-FROM-1 ) & echo first' >/dev/null
out=$(corral run --id late-2 s1 -- 'sleep 2; echo second')
check_eq "a job's line after its run ended never lands in the next run" "second" "$out"
check_eq "it is the first run's late output" "LATE-FROM-1" "$(corral runs s1 --late late-1)"
check "and runs counts it" python3 -c "
import json, sys
runs = {r['request_id']: r for r in json.loads(sys.argv[1])}
assert runs['late-1']['late_bytes'] == len('LATE-FROM-1\n') and runs['late-2']['late_bytes'] == 0, runs
" "$(corral runs s1 --json)"
out=$(corral runs s1 --late no-such 2>&1)
check_contains "late output of an unknown run is refused" "$out" "holds no run 'no-such'"

# --- An earlier run's daemon against a later run, its shell and the supervisor.
cat >"$ws/spy.sh" <<'SH'
exec >/tmp/spy.log 2>&1
while [ ! -s /tmp/target.pid ]; do sleep 0.05; done
t=$(cat /tmp/target.pid); s=$(cat /tmp/s.pid)
# Opening mem or environ is where the kernel checks (a read of mem at
# offset 0 fails even when allowed: nothing is mapped there).
( exec 5</proc/self/mem ) 2>/dev/null && echo "control: own mem opens"
for f in /proc/$t/mem /proc/$t/environ /proc/$s/mem /proc/$s/environ; do
	( exec 5<"$f" ) 2>/dev/null && echo "READ $f" || echo "denied $f"
done
readlink /proc/$t/fd/1 >/dev/null 2>&1 && echo "READ /proc/$t/fd/1" || echo "denied fd-link"
echo INJECTED >/proc/$t/fd/1 2>/dev/null && echo "WROTE fd1" || echo "denied fd1"
python3 - "$t" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
t = int(sys.argv[1])
pidfd = libc.syscall(434, t, 0)
fd = libc.syscall(438, pidfd, 1, 0) if pidfd >= 0 else -1
print("GOT fd" if fd >= 0 else "denied pidfd_getfd")
print("TRACED" if libc.ptrace(16, t, 0, 0) == 0 else "denied ptrace")
PY
kill -0 "$s" 2>/dev/null && echo "SIGNALLED supervisor" || echo "denied signal to the supervisor"
kill -0 "$t" 2>/dev/null && echo "signal to the later run: allowed" || echo "signal to the later run: refused"
echo spy-done
SH
chown 1000:1000 "$ws/spy.sh"
corral run s1 -- 'rm -f /tmp/target.pid /tmp/spy.log; echo $PPID > /tmp/s.pid; setsid bash '"$ws"'/spy.sh & echo started' >/dev/null
out=$(corral run s1 -- 'sh -c '\''echo $$ > /tmp/target.pid; sleep 2; echo target-done'\''')
check_eq "the earlier run's daemon wrote nothing into the later run's output" "target-done" "$out"
sleep 1
spy=$(corral run s1 -- 'cat /tmp/spy.log')
check_contains "the daemon ran to its end" "$spy" "spy-done"
check_contains "and its check can tell (it opens its own memory)" "$spy" "control: own mem opens"
check_lacks "it read no memory, environment or descriptor of the later run or the supervisor" \
	"$spy" "READ"
check_contains "reading the later run's memory is refused" "$spy" "denied /proc/"
check_lacks "it reopened no descriptor of the later run" "$spy" "WROTE"
check_contains "pidfd_getfd is refused" "$spy" "denied pidfd_getfd"
check_contains "ptrace is refused" "$spy" "denied ptrace"
check_contains "the supervisor cannot even be signalled" "$spy" "denied signal to the supervisor"
check_contains "signals between runs stay allowed (kill of an earlier run's server)" "$spy" \
	"signal to the later run: allowed"
out=$(corral run s1 -- 'z=$(ps -o pid=,sid=,args= --ppid $PPID | awk '\''$1 != $2 && /corral loop/ { print $1 }'\'' | head -1);
	for f in /proc/$PPID/mem /proc/$PPID/environ /proc/$z/mem; do ( exec 5<$f ) 2>/dev/null && echo READ || echo denied; done;
	ls /proc/$PPID/fd >/dev/null 2>&1 && echo READ || echo denied;
	kill -STOP $PPID 2>/dev/null && echo STOPPED || echo eperm;
	sh -c "( exec 5</proc/$$/mem ) 2>/dev/null && echo READ || echo denied; ( exec 5</proc/$$/environ ) 2>/dev/null && echo READ || echo denied; ls /proc/$$/fd >/dev/null 2>&1 && echo READ || echo denied; ( exec 5</proc/self/mem ) 2>/dev/null && echo control"')
check_eq "a run reads nothing of the supervisor, the zygote or its own shell, and cannot stop the supervisor" \
	"denied
denied
denied
denied
eperm
denied
denied
denied
control" "$out"

# --- The zygote killed or stopped by a run: the shell goes on.
zpid=$(corral run s1 -- 'z=$(ps -o pid=,sid=,args= --ppid $PPID | awk '\''$1 != $2 && /corral loop/ { print $1 }'\''); kill -9 $z && echo $z' 2>/dev/null)
check "a run finds the zygote and kills it (pid $zpid)" test -n "$zpid"
out=$(corral run --json s1 -- 'echo after-kill')
jq_check "after the zygote was killed, the next run works" "$out" \
	"o['output'] == 'after-kill\n' and o['exit_code'] == 0 and not o['respawned']"
check_eq "and the one after" "again" "$(corral run s1 -- 'echo again')"
zpid=$(corral run s1 -- 'z=$(ps -o pid=,sid=,args= --ppid $PPID | awk '\''$1 != $2 && /corral loop/ { print $1 }'\''); kill -STOP $z && echo $z' 2>/dev/null)
check "a run finds the new zygote and stops it (pid $zpid)" test -n "$zpid"
corral run s1 -- 'echo one' >/dev/null
out=$(corral run --timeout 20 s1 -- 'echo two')
check_eq "after the zygote was stopped, runs still complete (a new zygote)" "two" "$out"

# --- What persists, precisely.
corral run s1 -- "cd /tmp; cd /; export -n KEEP; X=unexported; f() { echo f; }; alias a=echo;
	set -o pipefail; shopt -s globstar; umask 077; trap 'echo trap' EXIT;
	export WEIRD=\$'a\\nb\\x01\"\$\`\\\\ \\xc3\\xa9'" >/dev/null
out=$(corral run s1 -- 'cd - >/dev/null; pwd; echo "X=${X-unset} KEEP=${KEEP-unset}";
	type f >/dev/null 2>&1 && echo func; alias a >/dev/null 2>&1 && echo alias;
	shopt -qo pipefail && echo pipefail; shopt -q globstar && echo globstar; umask;
	trap -p EXIT; printf %s "$WEIRD" | od -An -tx1 | tr -d " \n"')
check_eq "cd - works across runs; unexported variables, functions, aliases, options, traps and umask do not persist; export -n is kept; a value with newline, control byte, quotes and UTF-8 comes back exactly" "/tmp
X=unset KEEP=unset
0022
610a62012224605c20c3a9" "$out"
out=$(corral run --json s1 -- 'cd /; export BIG=$(head -c 200000 /dev/zero | tr "\0" x)')
jq_check "a run exporting more than the state's limit is not saved" "$out" \
	"o['exit_code'] == 0 and not o['state_saved']"
check_eq "the state from before is kept, and the next run runs" "unset /tmp" \
	"$(corral run s1 -- 'echo ${BIG:-unset} $PWD')"

# --- Output: whole, in order, the run's own.
corral run --json s1 -- 'head -c 1048576 /dev/zero | tr "\0" a; echo; echo err >&2; echo out' \
	>"$TB_DIR/big.json"
check "1 MiB of output arrives whole, stderr and stdout in order" python3 -c "
import json, sys
o = json.load(open(sys.argv[1]))
assert len(o['output']) == 1048576 + 1 + 4 + 4 and o['output'].endswith('\nerr\nout\n'), len(o['output'])
" "$TB_DIR/big.json"

# --- Interrupts and timeouts.
corral run --id int-1 s1 -- 'sleep 30; echo not-reached' >"$TB_DIR/int1.out" 2>&1 &
client=$!
sleep 1
corral interrupt s1 int-1
wait "$client"
check_eq "an interrupted sleep ends with SIGINT (130)" 130 "$?"
out=$(corral run --json --id int-1 s1 -- 'sleep 30; echo not-reached')
jq_check "its result says signal 2, not respawned, ended by the interrupt" "$out" \
	"o['signal'] == 2 and not o['respawned'] and 'not-reached' not in o['output'] and o['ended_by'] == 'interrupt'"
out=$(corral run --json --timeout 1 s1 -- "trap '' INT; sleep 30")
rc=$?
jq_check "a run that ignores SIGINT is killed after the grace (signal 9), the shell survives" \
	"$out" "o['signal'] == 9 and o['timed_out'] and not o['respawned']"
check_eq "and corral run exits 124, a timeout's status" 124 "$rc"
out=$(corral run --json --timeout 1 s1 -- 'trap "echo exit-trap" EXIT; cd /; sleep 30')
jq_check "an interrupted run runs its EXIT trap but keeps the state from before (its cd is not saved)" \
	"$out" "o['signal'] == 2 and not o['state_saved'] and o['cwd'] == '/tmp' and o['output'] == 'exit-trap\\n'"
check_eq "the shell survives interrupts" "alive /tmp" "$(corral run s1 -- 'echo alive $PWD')"

# --- A supervisor that stops answering (stopped from outside) is replaced;
# the broker keeps the state, so the next one starts where it was.
corral run s1 -- 'cd /tmp && export KEEP=kept' >/dev/null
sup=$(ps -eo pid=,comm= | awk '$2 == "corral-shell" { print $1 }')
corral run --json --id stuck --timeout 1 s1 -- 'sleep 30' >"$TB_DIR/stuck.json" &
client=$!
sleep 0.5
for p in $sup; do
	tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -q "^HOME=$TB_DIR/" &&
		kill -STOP "$p"
done
wait "$client"
jq_check "a run whose supervisor stopped answering is given up after the escalation: respawned" \
	"$(cat "$TB_DIR/stuck.json")" "o['respawned'] and o['timed_out'] and o['signal'] == 9"
out=$(corral run s1 -- 'echo $KEEP $PWD')
check_eq "the next run gets a new supervisor with the same cwd and environment" "kept /tmp" "$out"

corral sandbox delete s1 >/dev/null

# --- The zygote is started with nothing a run could plant: BASH_ENV (and
# LD_PRELOAD, GCONV_PATH, ...) of the sandbox's environment reach the
# runs' commands, never the zygote or the supervisor.
corral sandbox create --root "$ws" --name s2 --env "BASH_ENV=$ws/bashenv" >/dev/null
out=$(corral run s2 -- 'echo "$BASH_ENV"; printf "%s\n" "false() { return 0; }" > "$BASH_ENV";
	z=$(ps -o pid=,sid=,args= --ppid $PPID | awk '\''$1 != $2 && /corral loop/ { print $1 }'\'');
	kill -9 $z && echo "killed $z"')
check_eq "a run sees the sandbox's BASH_ENV" "$ws/bashenv" "$(echo "$out" | head -1)"
check "and kills the zygote, so that the next one starts after the file" \
	sh -c 'echo "$1" | grep -Eq "^killed [0-9]+$"' _ "$out"

corral run s2 -- true >/dev/null
corral run s2 -- false >/dev/null
check_eq "a zygote started after a run wrote BASH_ENV's file does not read it: false reports 1" 1 "$?"
check_eq "while the runs' own bash commands do" 0 \
	"$(corral run s2 -- 'bash -c false; echo $?')"
corral sandbox delete s2 >/dev/null
tap_done
