#!/bin/sh
# corral --version, help, usage errors, and status while no daemon answers.
# Sets up: a temporary folder with a stale socket and a socket that accepts
# but does not speak corral's protocol. Expects the exit codes and lines of
# corral(1).
. "$top_srcdir/tests/lib/tap.sh"
corral="$top_builddir/corral"
tmp=$(mktemp -d /tmp/corral-cli.XXXXXX)
listener_pid=
cleanup() {
	[ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

out=$("$corral" --version); rc=$?
check_eq "--version exits 0" 0 "$rc"
check_eq "--version prints corral and the version" "corral 0.1.0" "$out"

out=$("$corral" help); rc=$?
check_eq "help exits 0" 0 "$rc"
check_contains "help lists policy render" "$out" "policy render"
check_contains "help lists status" "$out" "status"

"$corral" frobnicate >/dev/null 2>"$tmp/err"; rc=$?
check_eq "an unknown verb is a usage error (exit 2)" 2 "$rc"
check_contains "an unknown verb is named" "$(cat "$tmp/err")" "unknown verb 'frobnicate'"

"$corral" policy >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a group without its verb is a usage error" 2 "$rc"
check_contains "a group without its verb lists its verbs" "$(cat "$tmp/err")" "corral policy check"

"$corral" >/dev/null 2>&1; rc=$?
check_eq "no verb is a usage error" 2 "$rc"

out=$("$corral" --socket "$tmp/none.sock" status); rc=$?
check_eq "status without a daemon exits 1" 1 "$rc"
check_contains "status without a daemon says Disconnected" "$out" "Status: Disconnected"
check_contains "status names a missing socket" "$out" "Reason: no socket at $tmp/none.sock"

out=$(CORRAL_SOCKET="$tmp/env.sock" "$corral" status); rc=$?
check_contains "CORRAL_SOCKET names the socket" "$out" "no socket at $tmp/env.sock"

# --config and CORRAL_CONFIG: the socket and the profiles folder of the
# daemon's file, where no flag or variable names them.
mkdir -p "$tmp/profiles"
printf 'socket: %s\nprofiles_dir: %s\n' "$tmp/conf.sock" "$tmp/profiles" >"$tmp/corrald.yaml"
out=$("$corral" --config "$tmp/corrald.yaml" status); rc=$?
check_contains "--config gives the socket" "$out" "no socket at $tmp/conf.sock"
out=$(CORRAL_CONFIG="$tmp/corrald.yaml" "$corral" status)
check_contains "so does CORRAL_CONFIG" "$out" "no socket at $tmp/conf.sock"
out=$(CORRAL_CONFIG="$tmp/corrald.yaml" "$corral" --socket "$tmp/flag.sock" status)
check_contains "--socket wins over the file" "$out" "no socket at $tmp/flag.sock"
out=$(CORRAL_CONFIG="$tmp/corrald.yaml" CORRAL_SOCKET="$tmp/env.sock" "$corral" status)
check_contains "and so does CORRAL_SOCKET" "$out" "no socket at $tmp/env.sock"
"$corral" --config "$tmp/corrald.yaml" policy render --root /tmp --uid 1000 --gid 1000 \
	>/dev/null 2>"$tmp/err"; rc=$?
check_contains "--config gives the profiles folder" "$(cat "$tmp/err")" "$tmp/profiles"
printf 'socket: relative.sock\n' >"$tmp/bad.yaml"
"$corral" --config "$tmp/bad.yaml" status >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a broken --config file exits 1" 1 "$rc"
check_contains "and its error names the file, line and column" "$(cat "$tmp/err")" "$tmp/bad.yaml:1:"
"$corral" --config "$tmp/missing.yaml" status >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a missing --config file exits 1" 1 "$rc"
check_contains "and is named" "$(cat "$tmp/err")" "$tmp/missing.yaml"

# A stale socket: bound, then its listener gone.
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$tmp/stale.sock"
out=$("$corral" --socket "$tmp/stale.sock" status); rc=$?
check_eq "status on a stale socket exits 1" 1 "$rc"
check_contains "status on a stale socket says refused" "$out" "connection refused at $tmp/stale.sock"

# Something that accepts but is not corrald.
python3 -c "
import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
print('ready', flush=True)
end=time.time()+20
while time.time()<end:
    s.settimeout(1)
    try: c,_=s.accept(); c.close()
    except OSError: pass
" "$tmp/other.sock" >"$tmp/listener.out" &
listener_pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do grep -q ready "$tmp/listener.out" 2>/dev/null && break; sleep 0.2; done
out=$("$corral" --socket "$tmp/other.sock" status); rc=$?
check_eq "status against a stranger exits 1" 1 "$rc"
check_contains "status against a stranger says it did not answer" "$out" "did not answer as corrald"

# Permission denied: a socket in a folder the caller cannot search.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	mkdir -m 0700 "$tmp/private"
	python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$tmp/private/d.sock"
	chmod 0755 "$tmp"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$corral" --socket "$tmp/private/d.sock" status); rc=$?
	check_eq "status without permission exits 1" 1 "$rc"
	check_contains "status names a permission problem" "$out" "permission denied on $tmp/private/d.sock"
fi

long=$(printf '/tmp/%0120d.sock' 0)
out=$("$corral" --socket "$long" status); rc=$?
check_contains "an over-long socket path is named" "$out" "socket path too long"

"$corral" status extra >/dev/null 2>&1; rc=$?
check_eq "status with an argument is a usage error" 2 "$rc"
tap_done
