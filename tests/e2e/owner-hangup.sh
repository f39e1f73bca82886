#!/bin/sh
# root's create without --run-as (the broker asks the monitor
# who owns the first writable root, asynchronously) whose client hangs up
# right after sending, while the monitor is busy and another user churns
# connections so that descriptor numbers are reused at once.
# Sets up: the test bed; users ctest-a1 (owns the root folder), ctest-a2
# (churns connections), ctest-a3 (keeps the monitor busy); corrald in the
# test host, its socket open to every user.
# Does: counts the broker's descriptors; ctest-a3 starts waves of wide
# creates; ctest-a2 opens and closes connections as fast as it can (lists,
# and creates of its own over its own folder, each hung up at once) and
# holds 60 idle ones; root sends HANGS creates named rh1..rhN over
# ctest-a1's folder, closing each connection right after the request, and
# one create through the CLI that waits for its answer.
# Expects: each rh sandbox that exists is root's and runs as ctest-a1 (log
# line and corral-init's uid), none runs as ctest-a2 or is ctest-a2's; the
# waiting create is made; ctest-a2 is still answered; once everything is
# deleted the broker holds as many descriptors as before.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
. "$top_srcdir/tests/e2e/lib/busy.sh"
tb_need_root

HANGS=${ATK_HANGS:-24}
U1=1161 U2=1162 U3=1163

busy_start "1 2" 80 40
echo "# broker: $(ps -o pid=,user=,args= -p "$daemon_pid")"

# Warm up what the broker opens once (the ledger, the registry...).
corral_cli sandbox create --name warmup --profile strict --root "$TB_DIR/users/a1" >/dev/null
corral_cli exec warmup -- true
corral_cli sandbox delete warmup >/dev/null
corral_as "$U2" sandbox create --name a2warm --profile strict --root "$TB_DIR/users/a2" >/dev/null
corral_as "$U2" sandbox delete a2warm >/dev/null
sleep 1
fds_before=$(atk_fds "$daemon_pid")
ls -l "/proc/$daemon_pid/fd" >"$TB_DIR/fds-before" 2>&1

atk_burst "$U3" "$TB_DIR/users/a3" 6 5 "$TB_DIR/burst.out"
sleep 0.3

# ctest-a2: churn for CHURN_S seconds.
(cd "$top_srcdir/clients/python" && tb_exec_host setpriv --reuid="$U2" --regid="$U2" \
	--clear-groups env PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 timeout 60 \
	/usr/bin/python3 - "$CORRAL_SOCK" "$TB_DIR/users/a2" >"$TB_DIR/churn.out" 2>&1 <<'PY'
import socket, sys, time
from corral import _wire
sock, folder = sys.argv[1], sys.argv[2]
idle = []
for _ in range(60):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    idle.append(s)
lst = _wire.frame(_wire.encode("Request", {"sandbox_list": {"selector": {}}}))
n = errors = 0
end = time.time() + 12
while time.time() < end and n < 20000:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        if n % 10 == 0:
            req = {"sandbox_create": {"roots": [{"path": folder, "writable": True}],
                   "profile": "strict", "name": "c%d" % n}}
            s.sendall(_wire.frame(_wire.encode("Request", req)))
        else:
            s.sendall(lst)
        s.close()
    except OSError:
        errors += 1
    n += 1
for s in idle:
    s.close()
print("churned", n, "errors", errors)
PY
) &
churn=$!

# root: HANGS creates hung up at once, one every 0.2 s.
(cd "$top_srcdir/clients/python" && tb_exec_host env PYTHONPATH=. \
	PYTHONDONTWRITEBYTECODE=1 timeout 60 /usr/bin/python3 - "$CORRAL_SOCK" \
	"$TB_DIR/users/a1" "$HANGS" >"$TB_DIR/hang.out" 2>&1 <<'PY'
import socket, sys, time
from corral import _wire
sock, folder, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(1, n + 1):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    req = {"sandbox_create": {"roots": [{"path": folder, "writable": True}],
           "profile": "strict", "name": "rh%d" % i}}
    s.sendall(_wire.frame(_wire.encode("Request", req)))
    s.close()
    time.sleep(0.2)
print("sent", n)
PY
) &
hang=$!
sleep 1
corral_cli sandbox create --name rwait --profile strict --root "$TB_DIR/users/a1" \
	>"$TB_DIR/rwait.out" 2>&1
rwait_rc=$?
t0=$(atk_ms)
corral_as "$U2" sandbox list >/dev/null 2>&1
list_rc=$?
list_ms=$(($(atk_ms) - t0))
wait "$hang" "$churn"
atk_wait_idle
sleep 2
echo "# $(cat "$TB_DIR/hang.out") / $(cat "$TB_DIR/churn.out")"
echo "# burst: $(grep -c '^made' "$TB_DIR/burst.out") made, $(grep -c '^refused' "$TB_DIR/burst.out") refused"
check_eq "root's waiting create is made" 0 "$rwait_rc"
check_eq "ctest-a2's list is answered meanwhile" 0 "$list_rc"
echo "# it took $list_ms ms"

log=$(tb_log corrald)
made=$(grep -o 'sandbox rh[0-9]* created for uid [0-9]*, running as [0-9]*' "$log")
echo "$made" | sed 's/^/# /'
echo "# $(echo "$made" | grep -c rh) of $HANGS hung-up creates were made"
check_eq "every hung-up create that was made is root's and runs as ctest-a1" "" \
	"$(echo "$made" | grep rh | grep -v "for uid 0, running as $U1\$")"
check_eq "ctest-a2 holds only its own c* sandboxes" "" "$(corral_as "$U2" sandbox list --json |
	python3 -c 'import json, sys; print(" ".join(s["name"] for s in json.load(sys.stdin) if not s["name"].startswith("c")))')"
check_eq "every sandbox made for ctest-a2 runs as ctest-a2" "" \
	"$(grep -o 'created for uid '"$U2"', running as [0-9]*' "$log" | grep -v "as $U2\$")"
check_lacks "the log names no rh sandbox for ctest-a2" "$(grep ' rh' "$log")" "uid $U2"
refused=$(grep -i 'rh[0-9]*.*refused\|only root' "$log" | head -5)
echo "$refused" | sed 's/^/# log: /'
check_eq "corral-init of each rh runs as ctest-a1" "" "$(
	for n in $(echo "$made" | grep -o 'rh[0-9]*'); do
		u=$(corral_cli exec "$n" -- id -u 2>&1)
		[ "$u" = "$U1" ] || echo "$n:$u"
	done)"
check "corrald still runs" kill -0 "$daemon_pid"

corral_cli sandbox delete --all >/dev/null 2>&1
corral_as "$U2" sandbox delete --all >/dev/null 2>&1
sleep 2
fds_after=$(atk_fds "$daemon_pid")
ls -l "/proc/$daemon_pid/fd" >"$TB_DIR/fds-after" 2>&1
echo "# broker descriptors: $fds_before before, $fds_after after"
[ "$fds_after" -le "$fds_before" ] ||
	diff "$TB_DIR/fds-before" "$TB_DIR/fds-after" | sed 's/^/# /' | head -40
check_eq "the broker holds no more descriptors than before" "$fds_before" "$fds_after"
check "the log tells of no teardown" sh -c \
	"! grep -q 'tearing everything down\|corrald stopped' '$log'"
kill -TERM "$daemon_pid"
wait "$daemon_pid"
check_eq "corrald exits 0 on SIGTERM" 0 "$?"
grep -i 'sanitizer\|runtime error\|leak' "$log" | head -20 | sed 's/^/# log: /'
check "the log has no sanitizer report" sh -c \
	"! grep -q 'AddressSanitizer\|LeakSanitizer\|runtime error' '$log'"
tap_done
