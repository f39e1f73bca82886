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
		echo "profiles_dir: $top_srcdir/conf/profiles"
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
corral_start() {
	tb_spawn_host "$1" env CORRAL_INIT="$top_builddir/corral-init" \
		nsenter --mount="/proc/$$/ns/mnt" "$top_builddir/corrald" --foreground --config "$2"
	tb_wait_listen host "$3" "${4:-tcp}" && return 0
	echo "Bail out! corrald did not listen: $(cat "$(tb_log "$1")")"
	exit 1
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
