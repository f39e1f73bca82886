#!/bin/sh
# corral sandbox create|list|get|delete, reap and exec, against a fake corrald.
# Sets up: tests/cli/fake-corrald.py on a socket of its own, which logs each
# request it decodes as JSON and plays scripted exec streams.
# Does: bad options and names (no daemon needed), then every verb.
# Expects: exit 2 for usage, 1 for refusals with a one-line reason, the
# request fields corral(1) names, the JSON shape of `sandbox get
# --json`, and exec's stdin, stdout, stderr and exit status carried through.
. "$top_srcdir/tests/lib/tap.sh"
corral="$top_builddir/corral"
fake="$top_srcdir/tests/cli/fake-corrald.py"
tmp=$(mktemp -d /tmp/corral-sandbox-cli.XXXXXX)
fake_pid=
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
sock="$tmp/corrald.sock"
log="$tmp/requests.jsonl"

# usage_is NAME ARGS...: corral ARGS exits 2 and prints a usage line.
usage_is() {
	name=$1; shift
	"$corral" --socket "$tmp/none.sock" "$@" >/dev/null 2>"$tmp/err"; rc=$?
	check_eq "$name exits 2" 2 "$rc"
	check_contains "$name prints the usage" "$(cat "$tmp/err")" "usage: corral"
}

# refused NAME NEEDLE ARGS...: corral ARGS exits 1 with NEEDLE on stderr
# (exec: 125, corral's own failure; STATUS=N: another status).
refused() {
	name=$1; needle=$2; shift 2
	want=${STATUS:-1}
	[ "$1" = exec ] && want=125
	"$corral" --socket "$tmp/none.sock" "$@" >/dev/null 2>"$tmp/err"; rc=$?
	check_eq "$name exits $want" "$want" "$rc"
	check_contains "$name says why" "$(cat "$tmp/err")" "$needle"
}

usage_is "create without --root" sandbox create
usage_is "create with an unknown option" sandbox create --root /tmp --frob
usage_is "create with a stray argument" sandbox create --root /tmp extra
usage_is "create with --profile and --policy" sandbox create --root /tmp --profile strict --policy /dev/null
usage_is "get without a name" sandbox get
usage_is "get with two names" sandbox get a b
usage_is "delete without names or --all" sandbox delete
usage_is "delete with names and --all" sandbox delete a --all
usage_is "list with an argument" sandbox list extra
usage_is "reap with an argument" reap now
usage_is "exec without --" exec box ls
usage_is "exec without a command" exec box --
usage_is "exec without a name" exec --tty -- ls
usage_is "exec with an unknown option" exec box --frob -- ls

refused "a name with capitals" "sandbox name 'Box' may hold only lower-case letters" sandbox get Box
refused "a name starting with -" "must start with a lower-case letter or a digit" sandbox delete -- -x
refused "a 64-character name" "is longer than 63 characters" \
	sandbox create --root /tmp --name "$(printf 'a%.0s' $(seq 64))"
refused "exec on a bad name" "sandbox name 'a_b'" exec a_b -- ls
refused "a label without =" "--label team: expected KEY=VALUE" sandbox create --root /tmp --label team
refused "an env with an empty key" "--env =1: expected KEY=VALUE" sandbox create --root /tmp --env =1
refused "a label given twice" "the key 'a' is given twice" sandbox create --root /tmp --label a=1 --label a=2
refused "a selector without =" "--selector a=1,b: expected KEY=VALUE" sandbox list --selector a=1,b
refused "a memory size with a bad suffix" "--memory 2X" sandbox create --root /tmp --memory 2X
refused "a memory size of 0" "--memory 0" sandbox create --root /tmp --memory 0
refused "cpus with four decimals" "--cpus 0.1234" sandbox create --root /tmp --cpus 0.1234
refused "cpus of 0" "--cpus 0" sandbox create --root /tmp --cpus 0
refused "pids that are not a number" "--pids many" sandbox create --root /tmp --pids many
refused "a timeout that is not seconds" "--timeout 5m" exec box --timeout 5m -- ls
refused "a policy file that is missing" "$tmp/none.yaml" sandbox create --root /tmp --policy "$tmp/none.yaml"
STATUS=6 refused "create without a daemon (unavailable)" "no socket at $tmp/none.sock" \
	sandbox create --root /tmp
refused "exec without a daemon" "no socket at $tmp/none.sock" exec box -- ls

python3 "$fake" "$sock" "$log" >"$tmp/fake.out" 2>"$tmp/fake.err" &
fake_pid=$!
for _ in $(seq 50); do grep -q ready "$tmp/fake.out" 2>/dev/null && break; sleep 0.1; done
export CORRAL_SOCKET="$sock"

# field FILTER: the value a python expression over the last logged request gives.
field() {
	tail -n 1 "$log" | python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"
}

mkdir "$tmp/app" "$tmp/ref"
printf 'version: 1\n' >"$tmp/p.yaml"
(cd "$tmp" && "$corral" sandbox create --root app --root ref:ro --cwd app --policy p.yaml \
	--label team=red --label tier=1 --env A=x=y --memory 512M --cpus 1.5 --pids 256 \
	--grant gh --grant ssh --session s-1 --agent a-7 --run-as dev --name web-1 \
	>"$tmp/out" 2>"$tmp/err"); rc=$?
check_eq "create exits 0" 0 "$rc"
check_eq "create says what it made" "created web-1 (enforcement partial)
missing layers: landlock abi 6" "$(cat "$tmp/out")"
check_eq "roots are sent as absolute paths" "$tmp/app True $tmp/ref False" \
	"$(field "' '.join('%s %s' % (x['path'], x['writable']) for x in r['roots'])")"
check_eq "--cwd is sent as an absolute path" "$tmp/app" "$(field "r['cwd']")"
check_eq "--policy sends the content, not the path" "version: 1" "$(field "r['policy'].strip()")"
check_eq "labels are sent as a map" "{'team': 'red', 'tier': '1'}" "$(field "r['labels']")"
check_eq "an env value keeps its =" "{'A': 'x=y'}" "$(field "r['env']")"
check_eq "--memory 512M is bytes" 536870912 "$(field "r['memory_bytes']")"
check_eq "--cpus 1.5 is 1500 thousandths" 1500 "$(field "r['milli_cpus']")"
check_eq "--pids is sent" 256 "$(field "r['pids']")"
check_eq "grants, session, agent, run_as, name are sent" "['gh', 'ssh'] s-1 a-7 dev web-1" \
	"$(field "'%s %s %s %s %s' % (r['grants'], r['session_id'], r['agent'], r['run_as'], r['name'])")"

"$corral" sandbox create --root /tmp --memory 1048576 --cpus 2 >/dev/null; rc=$?
check_eq "plain numbers for --memory and --cpus" "1048576 2000" \
	"$(field "'%s %s' % (r['memory_bytes'], r['milli_cpus'])")"
"$corral" sandbox create --root /tmp --memory 2G --cpus .25 >/dev/null
check_eq "--memory 2G and --cpus .25" "2147483648 250" \
	"$(field "'%s %s' % (r['memory_bytes'], r['milli_cpus'])")"

"$corral" sandbox create --root /tmp --name web-2 --json >"$tmp/create.json"; rc=$?
"$corral" sandbox get web-2 --json >"$tmp/get.json"
check_eq "create --json prints the same object as get --json" "$(cat "$tmp/get.json")" \
	"$(cat "$tmp/create.json")"
check_eq "create --json is one line: one document" 1 "$(wc -l <"$tmp/create.json")"
shape=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(list(d))
print(d["roots"][1], d["mounts"][0], d["labels"])
print(d["runner"], d["network"])
print(d["credentials"], d["limits"], d["created_at"], d["missing_layers"])
' "$tmp/get.json")
check_eq "get --json has the fields of corral(1)" "['name', 'state', 'enforcement', 'missing_layers', 'profile', 'roots', 'mounts', 'labels', 'session_id', 'agent', 'machine_id', 'runner', 'network', 'credentials', 'secrets', 'created_at', 'run_as', 'cwd', 'home', 'limits']
{'path': '/srv/ref', 'writable': False} {'type': 'bind', 'source': '/usr', 'target': '/usr', 'read_only': True} {'team': 'red'}
{'os': 'linux', 'kernel': '6.1.0', 'landlock_abi': 3} {'gateway': '10.231.0.1', 'proxy': 'http://10.231.0.1:3128', 'dns': '10.231.0.1'}
[{'name': 'gh', 'hosts': ['api.github.com:443', 'github.com:443'], 'copied': [], 'skipped': []}] [{'name': 'pids', 'value': 512, 'source': 'request', 'controller': 'v1'}, {'name': 'memory', 'value': 3221225472, 'source': 'default', 'controller': 'v1'}, {'name': 'tmpfs', 'value': 805306368, 'source': 'default', 'controller': 'tmpfs'}] 2025-11-29T17:58:31.123456Z ['landlock abi 6']" "$shape"

out=$("$corral" sandbox get web-2); rc=$?
check_eq "get exits 0" 0 "$rc"
check_contains "get names partial enforcement and what is missing" "$out" \
	"Enforcement: partial (missing: landlock abi 6)"
check_contains "get shows a read-only root" "$out" "Root:        /srv/ref (read-only)"
check_contains "get says where a limit comes from" "$out" "Limit:       pids 512 (request, enforced by v1)"
check_contains "and gives sizes in units" "$out" "Limit:       memory 3G (default, enforced by v1)"
check_contains "to the tenth" "$out" "Limit:       tmpfs 768M (default, enforced by tmpfs)"

# What a daemon (or whoever made the sandbox) wrote is shown, never obeyed:
# a label's escape and newline come out as \xHH on one line.
out=$("$corral" sandbox get hostile)
check_contains "a label's control bytes are printed escaped" "$out" \
	'Labels:      team=red\x1b]0;pwned\x07\x0aState:       forged'
check_eq "and forge no line of their own" 1 "$(printf '%s\n' "$out" | grep -c '^State:')"
check_eq "no escape byte reaches the terminal" 0 "$(printf '%s' "$out" | tr -cd '\033\007' | wc -c)"

"$corral" sandbox get missing >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "get of an unknown sandbox exits 3 (not_found)" 3 "$rc"
check_eq "the daemon's reason is printed as one line" \
	"corral: no sandbox named 'missing' (see \`corral sandbox list\`)" "$(cat "$tmp/err")"
"$corral" sandbox get missing --json >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "with --json too, not_found exits 3" 3 "$rc"
check_eq "... and the error is one JSON object on stderr, with the wire's code" \
	"not_found|no sandbox named 'missing' (see \`corral sandbox list\`)|" \
	"$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; print(e["code"], e["message"], "", sep="|")' "$tmp/err")"
check_eq "... and nothing on stdout" "" "$(cat "$tmp/out")"
"$corral" sandbox create --json >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a usage error under --json exits 2 with a JSON error of code usage" "2 usage" \
	"$rc $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$tmp/err")"

out=$("$corral" sandbox list --selector team=red,tier=1); rc=$?
check_eq "list exits 0" 0 "$rc"
check_eq "list sends the selector as a map" "{'team': 'red', 'tier': '1'}" "$(field "r['selector']")"
check_contains "list prints a table header" "$out" "NAME   STATE     ENFORCEMENT  PROFILE     CREATED"
check_contains "list prints a row per sandbox" "$out" "beta   ready     partial      strict      2025-11-29T17:58:31Z"
n=$("$corral" sandbox list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[1]["name"])')
check_eq "list --json is an array of sandbox objects" "2 beta" "$n"

out=$("$corral" sandbox delete web-1 ghost); rc=$?
check_eq "delete exits 0" 0 "$rc"
check_eq "delete names only what was deleted" "deleted web-1" "$out"
out=$("$corral" sandbox delete web-1 ghost --json); rc=$?
check_eq "delete --json names what went, as one object" '0 {"deleted":["web-1"]}' "$rc $out"
out=$("$corral" sandbox delete ghost); rc=$?
check_eq "delete of nothing is idempotent (exit 0)" "0 " "$rc $out"
out=$("$corral" sandbox delete --all)
check_eq "delete --all sends all" True "$(field "r['all']")"
check_eq "delete --all names each deleted sandbox" "deleted alpha
deleted beta" "$out"

out=$("$corral" reap); rc=$?
check_eq "reap names what it removed" "0 reaped sandbox old-box
removed veth crs3h" "$rc $out"
out=$("$corral" reap --json)
check_eq "reap --json is one object" '{"sandboxes":["old-box"],"objects":["veth crs3h"]}' "$out"

printf 'hello\n' | "$corral" exec echo --workdir /w --env K=V --timeout 30 -- cat -n >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eq "exec exits with the command's status" 3 "$rc"
check_eq "exec sends argv, workdir, env, timeout" "['cat', '-n'] /w {'K': 'V'} 30 False" \
	"$(field "'%s %s %s %s %s' % (r['command'], r['workdir'], r['environment'], r['timeout_seconds'], r['tty'])")"
check_eq "stdin reaches the command and stdout comes back, 70,000 bytes in pieces too" \
	"70006 hello" "$(wc -c <"$tmp/out") $(head -n 1 "$tmp/out")"
check_eq "the 70,000 bytes are whole" 70000 "$(tail -n +2 "$tmp/out" | tr -cd x | wc -c)"
check_eq "stderr comes back on stderr" "err" "$(cat "$tmp/err")"

"$corral" exec echo -- cat </dev/null >"$tmp/out" 2>&1; rc=$?
check_eq "an empty stdin closes the command's stdin" 3 "$rc"

"$corral" exec gone -- true >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?
check_eq "a dropped connection exits 125 (corral failed, not the command)" 125 "$rc"
check_eq "a dropped connection is named" "corral: connection to corrald lost" "$(cat "$tmp/err")"

"$corral" exec missing -- true >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?
check_eq "an error event exits 125" 125 "$rc"
check_eq "an error event prints the daemon's message" "corral: no sandbox named 'missing'" "$(cat "$tmp/err")"

# --tty on a pseudo-terminal of 120x40: the size is sent first, and the
# terminal is back in canonical mode afterwards.
out=$(python3 -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    import fcntl, struct, termios
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    os.execvp("sh", ["sh", "-c", "\"$0\" exec --tty tty -- bash; echo rc=$?; stty -a", sys.argv[1]])
data = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
print(data.decode(errors="replace"))
' "$corral" 2>&1)
check_contains "--tty sends the window size first" "$out" "resize 120x40"
check_contains "--tty exits with the command's status" "$out" "rc=0"
check_contains "--tty leaves the terminal canonical again" "$out" " icanon "
check_contains "--tty leaves echo on again" "$out" " echo "
check_eq "--tty sets tty in the start" True "$(field "r['tty']")"

tap_done
