#!/bin/sh
# A burst of large creates (corrald(8), "Privilege separation"): the
# broker's link to the monitor fills while the monitor builds, and no
# request of it is lost or cut in two.
# Sets up: the test bed; two local users made for the test, ctest-fl (the
# burst) and ctest-fv (a neighbour), each with folders; corrald in the test
# host, its control socket opened to every local user.
# Does: ctest-fv makes a sandbox; ctest-fl asks for a create over 16
# folders of 4,096 folders each (the monitor is busy with it for a while),
# then at once for 16 creates over 32 folders whose paths are 3.5 KB long
# (about 120 KB a request: two fill the link's buffer, ten more what the
# broker keeps); root asks for one in the middle of them.
# ctest-fv deletes a sandbox of its own in the middle of the burst (and
# again, at once), root reaps, and ctest-fv lists its sandboxes while the
# delete and the reap wait their turn at the monitor. Then 20 statuses
# while the monitor is stopped.
# Expects: every create is answered: made, or refused because the monitor
# is busy; root's is made; the list answers before the delete and the
# reap; both deletes answer once the sandbox's home is gone; the statuses
# are answered with one question to the monitor; corrald still runs and serves: ctest-fv's
# sandbox answers; a sandbox over 32 folders sees each of them; the log has
# no teardown.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

UID_L=1151
UID_V=1152
LONG_ROOTS=32                   # the most roots a sandbox may have
LONG_PARTS=14                   # folders of 250 bytes in each long path
WIDE_ROOTS=16
WIDE_CHILDREN=4096
LONG_CREATES=16

corral_install_traps
corral_user_make ctest-fl "$UID_L"
corral_user_make ctest-fv "$UID_V"
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
fl="$TB_DIR/users/fl"
fv="$TB_DIR/users/fv"
mkdir -p "$fl/wide" "$fl/long" "$fv"
part=$(printf '%0250d' 0)
for i in $(seq 1 "$LONG_ROOTS"); do
	p="$fl/long/$i"
	for _ in $(seq 1 "$LONG_PARTS"); do p="$p/$part"; done
	mkdir -p "$p"
	echo "$p" >>"$TB_DIR/long-roots"
done
for i in $(seq 1 "$WIDE_ROOTS"); do
	mkdir -p "$fl/wide/$i"
	(cd "$fl/wide/$i" && seq 1 "$WIDE_CHILDREN" | xargs mkdir)
done
chown -R ctest-fl:ctest-fl "$fl"
chown ctest-fv:ctest-fv "$fv"
chmod 0755 "$TB_DIR" "$TB_DIR/users"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
max_sandboxes: 40
max_sandboxes_per_user: 30
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
CORRAL_SOCK="$TB_DIR/corrald.sock"
chmod 0666 "$CORRAL_SOCK"
daemon_pid=$(tb_pid corrald)

out=$(corral_as "$UID_V" sandbox create --name v1 --profile strict --root "$fv" 2>&1 &&
	corral_as "$UID_V" sandbox create --name v2 --profile strict --root "$fv" 2>&1)
check_eq "the neighbour's sandboxes are made" 0 $?
chmod 0777 "$TB_DIR/users"

# Root's create, when the burst is half sent.
(
	i=0
	while [ ! -e "$TB_DIR/users/root-turn" ] && [ "$i" -lt 300 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	corral_cli sandbox create --name r0 --profile strict --root "$fv" \
		>"$TB_DIR/root-create.out" 2>&1
	echo "exit $?" >>"$TB_DIR/root-create.out"
) &
root_create=$!

# The neighbour's delete, the same again, root's reap, then the
# neighbour's list, when the burst is half sent: each notes when it was
# answered (and a delete whether the home was gone).
stamp() { date +%s%N; }
delete_v2() {
	corral_as "$UID_V" sandbox delete v2 >/dev/null 2>&1
	echo "$? $(stamp)" >"$TB_DIR/$1"
	[ -e "$TB_DIR/state/sandboxes/v2" ] && echo "home left" >>"$TB_DIR/$1"
}
(
	i=0
	while [ ! -e "$TB_DIR/users/root-turn" ] && [ "$i" -lt 300 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	stamp >"$TB_DIR/delete.start"
	delete_v2 delete.out &
	sleep 0.02
	delete_v2 delete2.out &
	(
		corral_cli reap >/dev/null 2>&1
		echo "$? $(stamp)" >"$TB_DIR/reap.out"
	) &
	sleep 0.02
	corral_as "$UID_V" sandbox list >"$TB_DIR/list.json" 2>&1
	echo "$? $(stamp)" >"$TB_DIR/list.out"
	wait
) &
neighbour=$!

# The burst, through the Python client, each create on a connection of
# its own: prints one line per create, "made NAME" or "refused: why".
burst=$(cd "$top_srcdir/clients/python" && tb_exec_host setpriv --reuid="$UID_L" \
	--regid="$UID_L" --clear-groups env PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 - "$CORRAL_SOCK" "$fl/wide" "$WIDE_ROOTS" "$TB_DIR/long-roots" \
	"$LONG_CREATES" "$TB_DIR/users/root-turn" <<'PY' 2>&1
import sys, threading, time
import corral
sock, wide, nwide, long_file, nlong = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    sys.argv[4], int(sys.argv[5])
longs = open(long_file).read().split()
client = corral.connect(sock)
said = {}
def create(name, roots):
    try:
        said[name] = "made %s" % client.create(roots, profile="standard", name=name).name
    except Exception as e:
        said[name] = "refused: %s" % e
threads = [threading.Thread(target=create, args=(
    "wide", [("%s/%d" % (wide, i), False) for i in range(1, nwide + 1)]))]
threads[0].start()
time.sleep(0.1)
for i in range(nlong):
    threads.append(threading.Thread(target=create, args=(
        "long%d" % i, [(p, False) for p in longs])))
    threads[-1].start()
    if i == nlong // 2:
        open(sys.argv[6], "w").close()  # root's turn
for t in threads:
    t.join(60)
for name in sorted(said):
    print(name, said[name])
print("answered", len(said))
PY
)
echo "$burst" | sed 's/^/# /'
wait "$root_create" "$neighbour"
check_eq "every create of the burst is answered" "answered $((LONG_CREATES + 1))" \
	"$(echo "$burst" | grep '^answered')"
check_eq "each is made, or refused because the monitor is busy" "" \
	"$(echo "$burst" | grep -v '^answered\|^[a-z0-9]* made \|the monitor is busy')"
check_eq "root's create in the middle of the burst is made" "exit 0" \
	"$(tail -n 1 "$TB_DIR/root-create.out")"
read -r list_rc list_at <"$TB_DIR/list.out"
read -r delete_rc delete_at <"$TB_DIR/delete.out"
echo "# the delete took $(( (delete_at - $(cat "$TB_DIR/delete.start")) / 1000000 )) ms"
echo "# the list answered $(( (delete_at - list_at) / 1000000 )) ms before the delete"
check_eq "the neighbour's delete and list are answered" "0 0" "$delete_rc $list_rc"
check "the list is answered while the delete waits for the monitor" \
	[ "$list_at" -lt "$delete_at" ]
check_lacks "the list no longer shows the sandbox being deleted" \
	"$(cat "$TB_DIR/list.json")" '"v2"'
check_eq "the delete answers once the sandbox's home is gone" 1 \
	"$(wc -l <"$TB_DIR/delete.out")"
check_eq "so does the same delete asked again meanwhile" 1 \
	"$(wc -l <"$TB_DIR/delete2.out")"
read -r reap_rc reap_at <"$TB_DIR/reap.out"
echo "# the list answered $(( (reap_at - list_at) / 1000000 )) ms before the reap"
check_eq "root's reap in the middle of the burst is answered" 0 "$reap_rc"
check "the list is answered while root's reap waits for the monitor" \
	[ "$list_at" -lt "$reap_at" ]
check "corrald still runs" kill -0 "$daemon_pid"
check_eq "the neighbour's sandbox answers" ok \
	"$(corral_as "$UID_V" exec v1 -- echo ok 2>&1)"
check_eq "root makes a sandbox after the burst" ok \
	"$(corral_cli sandbox create --name r1 --profile strict --root "$fv" >/dev/null 2>&1 &&
		corral_cli exec r1 -- echo ok 2>&1)"
check "the log tells of no teardown" sh -c \
	"! grep -q 'tearing everything down\|corrald stopped' '$(tb_log corrald)'"

# A sandbox over the most roots sees each of them.
made=$(echo "$burst" | sed -n 's/^long[0-9]* made \(.*\)$/\1/p' | head -n 1)
if [ -n "$made" ]; then
	seen=$(corral_as "$UID_L" exec "$made" -- sh -c \
		'n=0; while read -r p; do [ -d "$p" ] && n=$((n + 1)); done; echo $n' \
		<"$TB_DIR/long-roots" 2>&1)
else
	seen="no sandbox over $LONG_ROOTS roots was made"
fi
check_eq "a sandbox over $LONG_ROOTS roots sees each" "$LONG_ROOTS" "$seen"

# Statuses while the monitor cannot answer: one question of the firewall
# serves them all, not one each (a user asking and hanging up in a loop
# would queue them behind the monitor's backlog).
answers() {
	corral_cli metrics 2>/dev/null |
		sed -n 's/^corral_monitor_request_seconds_count \([0-9]*\).*/\1/p'
}
monitor=$(pgrep -P "$daemon_pid" -x corrald-monitor)
before=$(answers)
kill -STOP "$monitor"
status_pids=
for i in $(seq 1 20); do
	corral_as "$UID_V" status >/dev/null 2>&1 &
	status_pids="$status_pids $!"
done
sleep 0.5
kill -CONT "$monitor"
failed=0
for p in $status_pids; do wait "$p" || failed=$((failed + 1)); done
check_eq "20 statuses asked while the monitor was stopped are answered" 0 "$failed"
check_eq "with one question to the monitor" 1 $(( $(answers) - before ))

corral_cli sandbox delete --all >/dev/null 2>&1
tap_done
