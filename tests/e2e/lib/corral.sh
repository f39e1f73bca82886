# Helpers for the end-to-end tests that run corrald in the test bed
# (tests/e2e/lib/testbed.sh, sourced first, and tb_up done).

# corral_config FILE [EGRESS-LINE]...: writes a corrald.yaml to FILE whose
# folders and socket are in the bed's folder, whose DNS upstream is the
# bed's server and whose egress.allow_cidrs is the bed's network. Each
# EGRESS-LINE ("idle_timeout_s: 5") joins the egress section; the rest of
# the file (host_proxy, ...) comes from standard input.
corral_config() {
	file=$1
	shift
	corral_user
	{
		echo "socket: $TB_DIR/corrald.sock"
		echo "state_dir: $TB_DIR/state"
		echo "log_dir: $TB_DIR/log"
		echo "profiles_dir: ${CORRAL_PROFILES_DIR_TEST:-$top_srcdir/conf/profiles}"
		echo "dns:"
		echo "  upstream: [\"$TB_DNS_ADDR\"]"
		echo "egress:"
		echo "  allow_cidrs: [\"$TB_NET\"]"
		for line in "$@"; do echo "  $line"; done
		cat
	} >"$file"
	chmod 0644 "$file"
}

# corral_user: the account corrald's broker runs as (tests/install-deps
# makes it too; a test run on a machine set up by hand still finds it).
corral_user() {
	id corral >/dev/null 2>&1 || useradd --system --user-group --no-create-home \
		--shell /usr/sbin/nologin corral
}

# corral_file FILE: standard input into FILE, readable by corrald's checks
# (policy and config files writable by others are refused).
corral_file() {
	cat >"$1"
	chmod 0644 "$1"
}

# corral_start NAME CONFIG PORT [udp]: starts corrald in the test host and
# waits until PORT listens; bails out of the test when it does not.
# `ip netns exec` gives its commands a fresh /sys without the cgroup
# hierarchies, so corrald goes back to the machine's mount namespace,
# keeping the test host's network (the test's own mount namespace is it).
# A sandbox sees corral-init's folder (corral-shell's too) at its own path,
# but never one below /tmp, which it has its own of: a build folder there is
# bound at /mnt in a mount namespace of corrald's (gone with it).
corral_start() {
	case $top_builddir in
	/tmp/* | /run/*)
		tb_spawn_host "$1" env CORRAL_INIT=/mnt/corral-init \
			nsenter --mount="/proc/$$/ns/mnt" unshare --mount --propagation private \
			sh -c 'mount --bind "$0" /mnt && exec /mnt/corrald --foreground --config "$1"' \
			"$top_builddir" "$2" ;;
	*)
		tb_spawn_host "$1" env CORRAL_INIT="$top_builddir/corral-init" \
			nsenter --mount="/proc/$$/ns/mnt" "$top_builddir/corrald" --foreground \
			--config "$2" ;;
	esac
	tb_wait_listen host "$3" "${4:-tcp}" && return 0
	echo "Bail out! corrald did not listen: $(cat "$(tb_log "$1")")"
	exit 1
}

# corral_start_shared PORT: corrald in the test host, its host proxy on
# PORT, its control socket (CORRAL_SOCK) opened to every local user: what
# keeps the users apart must then be corrald's peer-credential checks, not
# the file mode (corrald makes it 0660, root's group).
corral_start_shared() {
	corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$1
YAML
	corral_start corrald "$TB_DIR/corrald.yaml" "$1"
	CORRAL_SOCK="$TB_DIR/corrald.sock"
	chmod 0666 "$CORRAL_SOCK"
}

# corral_up: corrald in the test host, its host proxy on a free port
# (CORRAL_PORT), with the YAML on standard input (none: </dev/null) added to
# the bed's configuration; CORRAL_SOCK is its socket. CORRAL_WS, a folder of
# uid 1000 holding the bed's CA as ca.pem, is the sandboxes' workspace.
corral_up() {
	CORRAL_PORT=$(tb_free_port)
	{
		printf 'host_proxy:\n  listen: 127.0.0.1:%s\n' "$CORRAL_PORT"
		cat
	} | corral_config "$TB_DIR/corrald.yaml"
	corral_start corrald "$TB_DIR/corrald.yaml" "$CORRAL_PORT"
	CORRAL_SOCK="$TB_DIR/corrald.sock"
	CORRAL_WS="$TB_DIR/ws"
	mkdir -p "$CORRAL_WS"
	cp "$(tb_ca_file)" "$CORRAL_WS/ca.pem"
	chown -R 1000:1000 "$CORRAL_WS"
	chmod 0755 "$TB_DIR"
}

# corral_cli ARG...: the corral CLI in the test host, as root, on CORRAL_SOCK.
corral_cli() {
	tb_exec_host "$top_builddir/corral" --socket "$CORRAL_SOCK" "$@"
}

# corral_as UID ARG...: the corral CLI in the test host as UID (its group
# too, no other), on CORRAL_SOCK.
corral_as() {
	_corral_uid=$1
	shift
	tb_exec_host setpriv --reuid="$_corral_uid" --regid="$_corral_uid" --clear-groups \
		"$top_builddir/corral" --socket "$CORRAL_SOCK" "$@"
}

# corral_user_make NAME UID: a local user NAME whose uid and group are UID,
# for a test of several callers. One the test made is removed by
# corral_users_down; one that was there is kept. Bails out when UID is
# another user's.
CORRAL_MADE_USERS=
corral_user_make() {
	_corral_have=$(getent passwd "$2" | cut -d: -f1)
	if [ -n "$_corral_have" ]; then
		[ "$_corral_have" = "$1" ] && return 0
		echo "Bail out! uid $2 belongs to another user"
		exit 1
	fi
	groupadd -g "$2" "$1" || { echo "Bail out! cannot make the group $1"; exit 1; }
	CORRAL_MADE_USERS="$CORRAL_MADE_USERS $1"
	useradd -M -N -u "$2" -g "$2" -d /nonexistent -s /usr/sbin/nologin "$1" ||
		{ echo "Bail out! cannot make the user $1"; exit 1; }
}

# corral_users_down: removes the users (and groups) corral_user_make made.
corral_users_down() {
	for _corral_u in $CORRAL_MADE_USERS; do
		userdel "$_corral_u" 2>/dev/null
		groupdel "$_corral_u" 2>/dev/null
	done
	CORRAL_MADE_USERS=
}

# corral_install_traps [DOWN]: on exit or signal, runs DOWN (a command of
# the test's, if any), takes the bed down and removes the users the test
# made (tb_install_traps for tests that make users).
corral_install_traps() {
	_corral_down=${1:-:}
	# shellcheck disable=SC2154 # _corral_rc is set by the trap itself
	trap '_corral_rc=$?; corral_down; exit $_corral_rc' EXIT
	trap 'corral_down; trap - EXIT; exit 130' INT
	trap 'corral_down; trap - EXIT; exit 143' TERM
}

corral_down() {
	$_corral_down
	tb_down
	corral_users_down
}

# corral_ledger_count KEY=VALUE...: how many of the bed's ledger records
# have every KEY with VALUE (as text).
corral_ledger_count() {
	python3 - "$TB_DIR/log/egress.jsonl" "$@" <<'PY'
import json, sys
path, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
print(sum(1 for line in open(path)
          if all(str(json.loads(line).get(k)) == v for k, v in want.items())))
PY
}

# corral_ledger_has KEY=VALUE...: true when a record of the bed's ledger
# has every KEY with VALUE (as text).
corral_ledger_has() {
	python3 - "$TB_DIR/log/egress.jsonl" "$@" <<'PY'
import json, sys
path, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
for line in open(path):
    rec = json.loads(line)
    if all(str(rec.get(k)) == v for k, v in want.items()):
        sys.exit(0)
sys.exit(1)
PY
}

# corral_ledger_wait KEY=VALUE...: true once a record of the bed's ledger
# has every KEY with VALUE, within 5 s (the ledger is written off the
# proxy's path, a moment after the event).
corral_ledger_wait() {
	for _corral_i in $(seq 50); do
		corral_ledger_has "$@" && return 0
		sleep 0.1
	done
	return 1
}
