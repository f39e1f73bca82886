#!/bin/sh
# SIGTERM to corrald while deletes wait for the monitor and
# root's creates wait for the owner of their folder (and for the monitor).
# Sets up: the test bed; users ctest-a0 (sandboxes with background jobs),
# ctest-a1 (owns the folder of root's creates), ctest-a3 (keeps the
# monitor busy); corrald in the test host, its socket open to every user.
# Does: ctest-a3 starts waves of wide creates; ctest-a0 deletes three of
# its six sandboxes, each on a connection of its own (one hung up at
# once); root asks for three creates without --run-as (one hung up at
# once); while they wait, SIGTERM to the broker.
# Expects: corrald exits 0 within STOP_S; its log has no sanitizer report
# and no crash; no client hears "deleted" for a sandbox after the daemon
# began stopping... (a delete either says deleted, having been torn down,
# or fails); nothing of any sandbox is left: no process of the users, no
# home, no cgroup, no crs interface; a new start reaps nothing.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
. "$top_srcdir/tests/e2e/lib/busy.sh"
tb_need_root

STOP_S=40
U0=1160 U1=1161 U3=1163

busy_start "0 1" 60 30

i=1
while [ "$i" -le 6 ]; do
	corral_as "$U0" sandbox create --name "s$i" --profile strict --root "$TB_DIR/users/a0" \
		>/dev/null
	corral_as "$U0" run "s$i" --id bg -- 'sleep 600 >/dev/null 2>&1 &' >/dev/null
	i=$((i + 1))
done
corral_cli sandbox create --name r0 --profile strict --root "$TB_DIR/users/a1" >/dev/null
cg=$(atk_cgroup s1)
echo "# s1's cgroup: $cg"
check "ctest-a0's jobs run" pgrep -u "$U0" -x sleep

hangup() { # hangup UID NAME REQUEST-JSON: sends it and closes at once
	(cd "$top_srcdir/clients/python" && tb_exec_host setpriv --reuid="$1" --regid="$1" \
		--clear-groups env PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c '
import json, socket, sys
from corral import _wire
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(_wire.frame(_wire.encode("Request", json.loads(sys.argv[2]))))
s.close()' "$CORRAL_SOCK" "$2")
}

atk_burst "$U3" "$TB_DIR/users/a3" 6 6 "$TB_DIR/burst.out"
sleep 0.5
for i in 1 2; do
	corral_as "$U0" sandbox delete "s$i" >"$TB_DIR/del$i.out" 2>&1 &
	echo $! >"$TB_DIR/del$i.pid"
done
hangup "$U0" '{"sandbox_delete": {"names": ["s3"]}}'
for i in 1 2; do
	corral_cli sandbox create --name "rc$i" --profile strict --root "$TB_DIR/users/a1" \
		>"$TB_DIR/rc$i.out" 2>&1 &
	echo $! >"$TB_DIR/rc$i.pid"
done
hangup 0 "{\"sandbox_create\": {\"roots\": [{\"path\": \"$TB_DIR/users/a1\", \"writable\": true}], \"profile\": \"strict\", \"name\": \"rc3\"}}"
sleep 0.2
kill -TERM "$daemon_pid"
t0=$(atk_ms)
wait "$daemon_pid"
rc=$?
echo "# corrald exited $rc after $(($(atk_ms) - t0)) ms"
check_eq "corrald exits 0 on SIGTERM" 0 "$rc"
check "within $STOP_S s" [ $(($(atk_ms) - t0)) -le $((STOP_S * 1000)) ]
for f in del1 del2 rc1 rc2; do
	wait "$(cat "$TB_DIR/$f.pid")"
	echo "# $f: exit $? $(tr '\n' ' ' <"$TB_DIR/$f.out")"
done
atk_wait_idle
log=$(tb_log corrald)
grep -i 'sanitizer\|runtime error\|leak\|assert\|fatal\|signal' "$log" | head -30 | sed 's/^/# log: /'
check "the log has no sanitizer report" sh -c \
	"! grep -q 'AddressSanitizer\|LeakSanitizer\|runtime error\|UndefinedBehavior' '$log'"
check_lacks "nor a fatal error" "$(cat "$log")" "fatal"
sleep 1
check_eq "no process of ctest-a0, ctest-a1 or ctest-a3 is left" "" \
	"$(pgrep -a -u "$U0,$U1,$U3" | grep -v 'python3\|setpriv')"
check_eq "no home is left" "" "$(ls "$TB_DIR/state/sandboxes" 2>/dev/null)"
if [ -n "$cg" ]; then
	check "s1's cgroup is gone" test ! -e "$cg"
	check_eq "nothing is left in its instance's cgroup" "" \
		"$(find "$(dirname "$cg")" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)"
fi
check_eq "no crs interface is left" "" "$(tb_exec_host ip -o link show | grep -o 'crs[0-9]*[hs]')"

rm -f "$CORRAL_SOCK"
corral_start corrald2 "$TB_DIR/corrald.yaml" "$port"
chmod 0666 "$CORRAL_SOCK"
check_lacks "the next start reaps nothing" "$(cat "$(tb_log corrald2)")" "reaped"
out=$(corral_cli reap 2>&1)
echo "$out" | sed 's/^/# reap: /'
check_eq "corral reap finds nothing" 0 \
	"$(echo "$out" | grep -c 'sandbox\|cgroup\|home\|netns\|interface' )"
tb_stop corrald2
log2=$(tb_log corrald2)
check "the second run's log has no sanitizer report" sh -c \
	"! grep -q 'AddressSanitizer\|LeakSanitizer\|runtime error\|UndefinedBehavior' '$log2'"
tap_done
