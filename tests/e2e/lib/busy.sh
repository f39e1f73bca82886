# Helpers for the tests that keep the monitor busy while deletes and
# root's creates wait for it (delete-races.sh, owner-hangup.sh,
# shutdown-inflight.sh).
# Sourced after testbed.sh and corral.sh, with tb_up done.

ATK_WIDE_ROOTS=${ATK_WIDE_ROOTS:-16}
ATK_WIDE_CHILDREN=${ATK_WIDE_CHILDREN:-4096}

# atk_wide_make DIR OWNER: DIR/1..ATK_WIDE_ROOTS, each with
# ATK_WIDE_CHILDREN folders (a create over them keeps the monitor busy).
atk_wide_make() {
	for _i in $(seq 1 "$ATK_WIDE_ROOTS"); do
		mkdir -p "$1/$_i"
		(cd "$1/$_i" && seq 1 "$ATK_WIDE_CHILDREN" | xargs mkdir -p)
	done
	chown -R "$2:$2" "$1"
}

# atk_burst UID DIR WAVES PER_WAVE OUT: in the background, as UID, WAVES
# waves of PER_WAVE creates over DIR's wide roots (one connection each,
# at once), each wave deleted once built; a line per create into OUT.
# ATK_BURST_PID is the job.
atk_burst() {
	(cd "$top_srcdir/clients/python" && tb_exec_host setpriv --reuid="$1" \
		--regid="$1" --clear-groups env PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 \
		timeout 120 /usr/bin/python3 - "$CORRAL_SOCK" "$2" "$ATK_WIDE_ROOTS" "$3" "$4" \
		>"$5" 2>&1 <<'PY'
import sys, threading
import corral
sock, wide, nwide, waves, per = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
client = corral.connect(sock)
roots = [("%s/%d" % (wide, i), False) for i in range(1, nwide + 1)]
for w in range(waves):
    made, said = [], []
    def create(name):
        try:
            made.append(client.create(roots, profile="strict", name=name))
            said.append("made %s" % name)
        except Exception as e:
            said.append("refused %s: %s" % (name, e))
    ts = [threading.Thread(target=create, args=("bw%d-%d" % (w, i),)) for i in range(per)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    for s in said:
        print(s, flush=True)
    for sb in made:
        try:
            sb.delete()
        except Exception as e:
            print("delete %s: %s" % (sb.name, e), flush=True)
print("burst done", flush=True)
PY
	) &
	ATK_BURST_PID=$!
}

# atk_cgroup NAME: the sandbox's cgroup v2 folder on the host, if any.
atk_cgroup() {
	find /sys/fs/cgroup/unified -maxdepth 4 -type d -name "$1" 2>/dev/null | head -n 1
}

# atk_ms: milliseconds since the epoch.
atk_ms() { echo $(($(date +%s%N) / 1000000)); }

# atk_fds PID: how many descriptors PID holds.
atk_fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# atk_wait_idle: waits (at most 60 s) until root's list answers and no
# create or delete of the burst is in flight (the burst's job has ended).
atk_wait_idle() {
	_n=0
	while [ -n "${ATK_BURST_PID:-}" ] && kill -0 "$ATK_BURST_PID" 2>/dev/null &&
	    [ "$_n" -lt 600 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	[ -n "${ATK_BURST_PID:-}" ] && wait "$ATK_BURST_PID" 2>/dev/null
	ATK_BURST_PID=
}

# busy_start USERS MAX PER_USER [YAML]: the users ctest-aN (uid 1160+N)
# for each N of USERS, each with a folder TB_DIR/users/aN, and ctest-a3
# with the wide folders under TB_DIR/users/a3; the test bed; corrald in
# its host with at most MAX sandboxes (PER_USER a user) and YAML added to
# its config, its socket (CORRAL_SOCK) open to every user; daemon_pid.
busy_start() {
	corral_install_traps
	for _u in $1 3; do
		corral_user_make "ctest-a$_u" "$((1160 + _u))"
	done
	tb_up || { echo "Bail out! no test bed"; exit 1; }
	port=$(tb_free_port)
	for _u in $1; do
		mkdir -p "$TB_DIR/users/a$_u"
		chown "$((1160 + _u)):$((1160 + _u))" "$TB_DIR/users/a$_u"
	done
	atk_wide_make "$TB_DIR/users/a3" 1163
	chmod 0755 "$TB_DIR" "$TB_DIR/users"
	corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
max_sandboxes: $2
max_sandboxes_per_user: $3
${4:-}
YAML
	corral_start corrald "$TB_DIR/corrald.yaml" "$port"
	CORRAL_SOCK="$TB_DIR/corrald.sock"
	chmod 0666 "$CORRAL_SOCK"
	daemon_pid=$(tb_pid corrald)
}
