#!/bin/sh
# The installable service (README.md, "Installing"), end to end.
# Sets up: the release sources of the build under test (make distdir); a
# build of them with the packaging line of README.md in a folder of its
# own; the Debian package, built from them with dpkg-buildpackage; the
# test bed.
# Does: make install DESTDIR=, then make uninstall; dpkg -i the package;
# starts the installed unit's ExecStart line in the bed's test host, with
# a notification socket of the test's as systemd's; corral status, a
# sandbox made, used and deleted; a logrotate run and SIGUSR1; SIGHUP;
# SIGTERM; dpkg --purge.
# Skips, saying what is missing: systemd-analyze verify without systemd's
# tools, logrotate -d without logrotate, the package without dpkg-dev,
# debhelper and fakeroot, and its installation where systemd runs (its
# postinst would start corrald on the machine).
# Expects: every path of the contract where README.md says; a unit whose
# ExecStart is the installed corrald, that systemd-analyze verify takes
# without a warning, and a logrotate file that logrotate -d takes and that
# signals that unit's main process only; a default corrald.yaml that is
# comments only, names every key and checks; a package that makes the
# user corral and enables the unit; READY=1 before the socket is used,
# RELOADING=1 and STOPPING=1; the started process is the broker (user
# corral), reopens the ledger on SIGUSR1 and exits 0 on SIGTERM; nothing of
# the package left after the purge, its user included.
# Whatever happens it purges the package it installed, stops the processes
# it started (by pid) and removes its folders.
#
# The test runs in a mount namespace of its own with a private copy of
# /etc: the package's account, its conffiles and the bed's /etc/netns are
# made and removed there. Other tests' corrald run meanwhile as the
# machine's user corral, which a purge would take from them (or deluser
# would refuse, as they use it).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
tb_need_root
if [ -z "${INST_PRIVATE_ETC:-}" ]; then
	exec env INST_PRIVATE_ETC=1 unshare --mount --propagation private sh "$0" "$@"
fi

INST_MARK=/run/corral-e2e-install    # the pid of the run whose package is installed
INST_UNIT=/lib/systemd/system/corrald.service
INST_NAME=install-test               # the sandbox
INST_READY_WAIT_S=40                 # corrald waits up to 30 s for an old monitor
INST_STOP_WAIT_S=30                  # the unit's TimeoutStopSec

work=
broker=
monitor=

# inst_alive PID: running and not a zombie (testbed.sh's rule).
inst_alive() { [ -n "$1" ] && _tb_alive "$1"; }

# inst_installed: 0 if dpkg knows the package corral in any state.
inst_installed() {
	dpkg-query -W -f='${db:Status-Status}' corral 2>/dev/null | grep -qv '^not-installed$'
}

# inst_purge OWNER: purges the package when the run OWNER (a pid)
# installed it, as INST_MARK says; 0 when it went (or was not that run's).
inst_purge() {
	[ "$(sed -n 1p "$INST_MARK" 2>/dev/null)" = "$1" ] || return 0
	_inst_log=/dev/null _inst_rc=0
	[ -d "$work" ] && _inst_log=$work/purge.log
	if inst_installed; then
		dpkg --purge corral >"$_inst_log" 2>&1 || _inst_rc=1
	fi
	[ "$_inst_rc" -eq 0 ] && rm -f "$INST_MARK"
	return "$_inst_rc"
}

# inst_reap_stale: what a killed earlier run of this test left behind: its
# package (its mark names a pid that is gone) and its folders. A package
# this test did not install is never touched: the test bails out.
inst_reap_stale() {
	if [ -f "$INST_MARK" ]; then
		_inst_owner=$(sed -n 1p "$INST_MARK")
		if inst_alive "$_inst_owner"; then
			echo "Bail out! another run of this test (pid $_inst_owner) holds the package"
			exit 1
		fi
		inst_purge "$_inst_owner" ||
			{ echo "Bail out! cannot purge an earlier run's package"; exit 1; }
	elif inst_installed; then
		echo "Bail out! the package corral is installed on this machine, not by this test:" \
			"it would be replaced and purged"
		exit 1
	fi
	for _inst_d in /tmp/corral-install[0-9]*.*; do
		[ -d "$_inst_d" ] || continue
		_inst_owner=${_inst_d#/tmp/corral-install}; _inst_owner=${_inst_owner%%.*}
		case $_inst_owner in '' | *[!0-9]*) continue ;; esac
		inst_alive "$_inst_owner" || rm -rf "$_inst_d"
	done
}

# inst_stop_daemon: TERM to the broker this test started, then KILL to it
# and its monitor when they outlive INST_STOP_WAIT_S.
inst_stop_daemon() {
	inst_alive "$broker" && kill -TERM "$broker" 2>/dev/null
	_inst_i=0
	while [ "$_inst_i" -lt $((INST_STOP_WAIT_S * 10)) ]; do
		inst_alive "$broker" || inst_alive "$monitor" || break
		sleep 0.1
		_inst_i=$((_inst_i + 1))
	done
	for _inst_p in $broker $monitor; do
		inst_alive "$_inst_p" && kill -KILL "$_inst_p" 2>/dev/null
	done
	return 0
}

inst_down() {
	cd / || :
	inst_stop_daemon
	inst_purge "$$"
	tb_down
	mountpoint -q /etc && umount /etc
	case $work in /tmp/corral-install[0-9]*.*) rm -rf "$work" ;; esac
}

# shellcheck disable=SC2154 # _inst_rc_exit is set by the trap itself
trap '_inst_rc_exit=$?; inst_down; exit $_inst_rc_exit' EXIT
trap 'inst_down; trap - EXIT; exit 130' INT
trap 'inst_down; trap - EXIT; exit 143' TERM

# inst_missing TOOL...: the TOOLs not on PATH, each after a space.
inst_missing() {
	_inst_m=
	for _inst_t in "$@"; do
		command -v "$_inst_t" >/dev/null 2>&1 || _inst_m="$_inst_m $_inst_t"
	done
	echo "$_inst_m"
}

# inst_skip WHAT REASON: one TAP check skipped, saying why.
inst_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

# make install and the checks of what it puts cannot go without these;
# each other part says skip, with what is missing, when its tools are not
# there (tests/install-deps test installs them all).
missing=$(inst_missing make python3 unshare nsenter)
[ -z "$missing" ] || { echo "Bail out! missing tools:$missing (tests/install-deps test)"; exit 1; }

work=$(mktemp -d "/tmp/corral-install$$.XXXXXX") || { echo "Bail out! no folder"; exit 1; }
cp -a /etc "$work/etc" && mount --bind "$work/etc" /etc ||
	{ echo "Bail out! cannot give the test a copy of /etc"; exit 1; }
inst_reap_stale
njobs=$(nproc 2>/dev/null || echo 2)

# inst_quiet LOG CMD...: CMD with LOG as its output, outside the make that
# runs this test (its jobserver, its variables); says the end of LOG when
# CMD fails.
inst_quiet() {
	_inst_log=$1; shift
	if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u srcdir \
	    -u top_srcdir -u top_builddir -u DESTDIR "$@" >"$_inst_log" 2>&1; then
		return 0
	fi
	tail -25 "$_inst_log" | sed 's/^/# /'
	return 1
}

# inst_step NAME CMD...: CMD (through inst_quiet, its log named after the
# step) is one check; the test cannot go on without it, so a failure bails
# out.
inst_step() {
	_inst_name=$1; shift
	inst_quiet "$work/$(echo "$_inst_name" | tr -c 'a-zA-Z0-9\n' '-' | cut -c1-40).log" "$@"
	_inst_rc=$?
	check_eq "$_inst_name" 0 "$_inst_rc"
	[ "$_inst_rc" -eq 0 ] || { echo "Bail out! $_inst_name failed"; exit 1; }
}

# ---- make install DESTDIR=, with the packaging line ----

# The sources come from the build under test, not from $top_srcdir, which
# may be configured in place (a second build of it would be refused).
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
src=$work/pkg/corral-$version
build=$work/build
dest=$work/dest
mkdir -p "$work/pkg" "$build"
inst_step "make distdir from the build under test" make -C "$top_builddir" distdir \
	distdir="$src"
chmod -R u+w "$src"
cd "$build" || exit 1
inst_step "configure with the packaging line" "$src/configure" --prefix=/usr \
	--sysconfdir=/etc --localstatedir=/var
inst_step "make" make -j"$njobs"
inst_step "make install DESTDIR=" make install DESTDIR="$dest"

for f in /usr/bin/corral /usr/sbin/corrald /usr/libexec/corral/corral-init; do
	check "$f is installed, executable" test -x "$dest$f" -a -f "$dest$f"
done
for f in /etc/corral/corrald.yaml /etc/corral/profiles/strict.yaml \
    /etc/corral/profiles/standard.yaml /etc/logrotate.d/corral "$INST_UNIT" \
    /usr/share/man/man1/corral.1 /usr/share/man/man8/corrald.8 \
    /usr/share/man/man5/corrald.yaml.5 /usr/share/man/man5/corral-policy.5 \
    /usr/share/man/man5/corral-ledger.5; do
	check "$f is installed" test -f "$dest$f"
done

unit=$dest$INST_UNIT
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
check_eq "the unit's ExecStart is the installed corrald" /usr/sbin/corrald "$exec_start"
check_eq "the unit is Type=notify" "Type=notify" "$(grep '^Type=' "$unit")"
# shellcheck disable=SC2016 # $MAINPID is systemd's
check_eq "it reloads by SIGHUP to its main process only" 'ExecReload=/bin/kill -HUP $MAINPID' \
	"$(grep '^ExecReload=' "$unit")"

# The unit as systemd reads it: systemd-analyze verify says nothing of a
# good unit (it exits 0 even for an unknown key or a bad value, and says
# so). A copy names the staged corrald, as verify wants its ExecStart to
# exist; the installed unit itself is verified after dpkg -i.
if [ -z "$(inst_missing systemd-analyze)" ]; then
	mkdir -p "$work/verify"
	sed "s|^ExecStart=|ExecStart=$dest|" "$unit" >"$work/verify/corrald.service"
	out=$(systemd-analyze verify --man=no "$work/verify/corrald.service" 2>&1)
	check_eq "systemd-analyze verify takes the unit, without a warning" "0 " "$? $out"
else
	inst_skip "systemd-analyze verify takes the unit" "no systemd-analyze (package systemd)"
fi

rotate=$dest/etc/logrotate.d/corral
check_contains "logrotate rotates the ledger at log_dir's default" "$(cat "$rotate")" \
	"/var/log/corral/egress.jsonl {"
# Its lines as the shell reads them: continued lines joined.
joined=$(sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*//; ta' "$rotate")
check_contains "and signals the unit's main process only, with SIGUSR1" "$joined" \
	"systemctl kill --kill-whom=main --signal=SIGUSR1 corrald.service"
check_lacks "it names no pkill" "$(cat "$rotate")" pkill
check_lacks "nor killall" "$(cat "$rotate")" killall
check "nor copytruncate, which loses records" sh -c "! grep -Eq '^[[:space:]]*copytruncate' '$rotate'"
if [ -z "$(inst_missing logrotate)" ]; then
	# logrotate -d parses and plans without rotating; it exits 0 after
	# some errors, which it prints as "error:".
	inst_quiet "$work/logrotate-d.log" logrotate -d -s "$work/logrotate.state" "$rotate"
	rc=$?
	check_eq "logrotate takes the file (logrotate -d)" 0 "$rc"
	check_eq "and finds no error in it" "" "$(grep -i 'error' "$work/logrotate-d.log")"
	check_contains "it plans the rotation of the ledger" "$(cat "$work/logrotate-d.log")" \
		"considering log /var/log/corral/egress.jsonl"
else
	inst_skip "logrotate takes the file (logrotate -d)" "no logrotate (package logrotate)"
fi

yaml=$dest/etc/corral/corrald.yaml
check_eq "corrald.yaml is comments and blank lines only" "" \
	"$(grep -v '^[[:space:]]*#' "$yaml" | grep -v '^[[:space:]]*$')"
for line in "#socket: /run/corral/corrald.sock" "#state_dir: /var/lib/corral" \
    "#log_dir: /var/log/corral" "#profiles_dir: /etc/corral/profiles"; do
	check_contains "corrald.yaml shows the default $line" "$(cat "$yaml")" "$line"
done

# inst_keys SECTION: the keys corrald accepts in SECTION (its own refusal of
# an unknown key lists them).
inst_keys() {
	case $1 in
	top) _inst_y="zzz_unknown: 1" ;;
	limits.max) _inst_y="limits: {max: {zzz_unknown: 1}}" ;;
	credentials) _inst_y="credentials: [{name: x, env: [A=b], zzz_unknown: 1}]" ;;
	*) _inst_y="$1: {zzz_unknown: 1}" ;;
	esac
	printf '%s\n' "$_inst_y" >"$work/keys.yaml"
	chmod 0644 "$work/keys.yaml"
	"$build/corrald" --check-config "$work/keys.yaml" 2>&1 |
		sed -n 's/.*unknown key .zzz_unknown. .*(expected \(.*\))$/\1/p' | tr -d ,
}
absent=
for section in top limits limits.max shares network dns egress credentials metrics host_proxy; do
	keys=$(inst_keys "$section")
	[ -n "$keys" ] || absent="$absent $section:(corrald listed no keys)"
	for key in $keys; do
		grep -Eq "^[[:space:]]*#[[:space:]]*(- )?$key:" "$yaml" || absent="$absent $section.$key"
	done
done
check_eq "corrald.yaml shows every key corrald accepts" "" "$absent"

# Checked as corrald would read it from its place, the profiles beside it.
{ cat "$yaml"; echo "profiles_dir: $dest/etc/corral/profiles"; } >"$work/check.yaml"
chmod 0644 "$work/check.yaml"
out=$("$dest/usr/sbin/corrald" --check-config "$work/check.yaml" 2>&1)
check_eq "corrald --check-config takes it and the installed profiles" 0 $?
inst_quiet "$work/uninstall.log" make uninstall DESTDIR="$dest"
check_eq "make uninstall DESTDIR=" 0 $?
check_eq "and removes every file make install put" "" "$(find "$dest" -type f)"

# ---- the Debian package ----

missing=$(inst_missing dpkg-buildpackage dh fakeroot dpkg-deb)
if [ -n "$missing" ]; then
	inst_skip "dpkg-buildpackage -us -uc -b, and the package installed" \
		"missing tools:$missing (packages dpkg-dev debhelper fakeroot)"
	tap_done
	exit
fi
cd "$src" || exit 1
inst_step "dpkg-buildpackage -us -uc -b" env DEB_BUILD_OPTIONS="nocheck parallel=$njobs" \
	dpkg-buildpackage -us -uc -b
cd "$work" || exit 1
deb=$(find "$work/pkg" -maxdepth 1 -name "corral_${version}_*.deb" | head -1)
check "it makes corral_${version}_ARCH.deb" test -f "$deb"
check_eq "the package's version is configure.ac's" "$version" \
	"$(dpkg-deb -f "$deb" Version 2>&1)"

# debian/control's Build-Depends are install-deps' build list, build-essential
# aside (Debian implies it), and debhelper.
want=$(sed -n '/^BUILD_PKGS="/,/"$/p' "$top_srcdir/tests/install-deps" |
	sed 's/BUILD_PKGS=//; s/"//g' | tr ' \t' '\n\n' | grep -v '^$' |
	grep -vx build-essential | sort | tr '\n' ' ')
have=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$top_srcdir/debian/control" |
	sed 's/^Build-Depends://; /^[A-Z]/d' | tr ',' '\n' | sed 's/(.*//; s/[[:space:]]//g' |
	grep -v '^$' | grep -vx debhelper-compat | sort | tr '\n' ' ')
check_eq "Build-Depends are what tests/install-deps installs for a build" "$want" "$have"

contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\.||')
for f in /usr/bin/corral /usr/sbin/corrald /usr/libexec/corral/corral-init \
    /etc/corral/corrald.yaml /etc/corral/profiles/strict.yaml /etc/logrotate.d/corral \
    "$INST_UNIT" /usr/share/man/man1/corral.1.gz /usr/share/man/man8/corrald.8.gz \
    /usr/share/man/man5/corrald.yaml.5.gz; do
	check_contains "the package holds $f" "$contents" "$f"
done
conffiles=$(dpkg-deb -I "$deb" conffiles 2>&1)
check_contains "corrald.yaml is a conffile" "$conffiles" /etc/corral/corrald.yaml

# ---- installed on this machine ----

# The package's postinst starts corrald where systemd runs: here that
# would be a corrald of the machine, its fence in the machine's network.
if [ -d /run/systemd/system ]; then
	inst_skip "dpkg -i, the installed unit's command line, dpkg --purge" \
		"systemd runs here: dpkg -i would start corrald on this machine"
	tap_done
	exit
fi
missing=$(inst_missing adduser dpkg logrotate)
if [ -n "$missing" ]; then
	inst_skip "dpkg -i, the installed unit's command line, dpkg --purge" \
		"missing tools:$missing (packages adduser logrotate)"
	tap_done
	exit
fi

# The package makes its user: none in this copy of /etc to begin with.
if getent passwd corral >/dev/null; then
	userdel -f corral >/dev/null 2>&1 || { echo "Bail out! cannot take corral from the copy"; exit 1; }
fi
getent group corral >/dev/null && groupdel corral
echo "$$" >"$INST_MARK"
inst_step "dpkg -i" dpkg -i "$deb"
uid=$(id -u corral 2>/dev/null)
check "postinst made the user corral" id corral
check "a system user (uid below 1000)" test "${uid:-1000}" -lt 1000
check_eq "its group corral, no home, no login" "$(getent group corral | cut -d: -f3)::/nonexistent:/usr/sbin/nologin" \
	"$(getent passwd corral | cut -d: -f4-7 | sed 's/^\([0-9]*\):[^:]*:/\1::/')"
inst_step "dpkg -i again (the user is there)" dpkg -i "$deb"
check_eq "the user stays as it was" "$uid" "$(id -u corral 2>&1)"
check "the unit is installed" test -f "$INST_UNIT"
check_eq "and enabled (multi-user.target wants it)" "$INST_UNIT" \
	"$(readlink /etc/systemd/system/multi-user.target.wants/corrald.service 2>&1)"
# Without systemd, postinst starts nothing (deb-systemd-invoke); this test
# starts the unit's command line itself, below.
started=$(for e in /proc/[0-9]*/exe; do
	[ "$(readlink "$e" 2>/dev/null)" = /usr/sbin/corrald ] && echo "${e%/exe}"
done)
check_eq "no systemd here: no /usr/sbin/corrald was started" "" "$started"
if [ -z "$(inst_missing systemd-analyze)" ]; then
	out=$(systemd-analyze verify --man=no "$INST_UNIT" 2>&1)
	check_eq "systemd-analyze verify takes the installed unit, without a warning" "0 " "$? $out"
fi
out=$(/usr/sbin/corrald --check-config 2>&1)
check_eq "corrald --check-config takes the installed default configuration" 0 $?
exec_start=$(sed -n 's/^ExecStart=//p' "$INST_UNIT")

tb_up || { echo "Bail out! no test bed"; exit 1; }
ws=$TB_DIR/folders/app
mkdir -p "$ws" "$TB_DIR/notify"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders" "$TB_DIR/notify"

# systemd's side of sd_notify: a datagram socket the broker (user corral)
# may write to, each message one line of the log, newlines as '|'.
notify=$TB_DIR/notify/notify.sock
notes=$TB_DIR/notify/messages
tb_spawn_host notify python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", "|") + "\n")
        out.flush()
' "$notify" "$notes"
i=0
while [ ! -S "$notify" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

# inst_wait_note PATTERN: waits until a message matches PATTERN (grep -E).
inst_wait_note() {
	_inst_i=0
	while [ "$_inst_i" -lt $((INST_READY_WAIT_S * 10)) ]; do
		grep -Eq "$1" "$notes" 2>/dev/null && return 0
		inst_alive "$broker" || return 1
		sleep 0.1
		_inst_i=$((_inst_i + 1))
	done
	return 1
}

# The unit's command line as systemd would run it, in the test host's
# network; `ip netns exec` gives a /sys without cgroups, so it goes back to
# this test's mount namespace (tests/e2e/lib/corral.sh, corral_start).
# shellcheck disable=SC2086 # ExecStart is a command line
tb_spawn_host corrald env NOTIFY_SOCKET="$notify" nsenter --mount="/proc/$$/ns/mnt" $exec_start
broker=$TB_LAST_PID
inst_wait_note '^READY=1'
ready=$?
if [ "$ready" -ne 0 ]; then
	echo "# corrald said no READY=1; messages: $(cat "$notes" 2>/dev/null)"
	echo "# in the foreground it says:"
	# shellcheck disable=SC2086
	timeout 5 ip netns exec "$TB_HOST" nsenter --mount="/proc/$$/ns/mnt" $exec_start \
		--foreground 2>&1 | tail -10 | sed 's/^/#   /'
fi
check_eq "corrald says READY=1 (sd_notify)" 0 "$ready"
check_contains "and that sandboxes can be made" "$(cat "$notes")" "sandboxes: available"
monitor=$(for s in /proc/[0-9]*/stat; do
	[ "$(sed 's/^.*) //' "$s" 2>/dev/null | cut -d' ' -f2)" = "$broker" ] &&
		echo "${s#/proc/}" | cut -d/ -f1
done | head -1)
check_eq "the started process (the unit's main pid) is the broker, user corral" \
	"$uid $uid $uid $uid" "$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$broker/status")"
check_eq "its child is the monitor, root" 0 \
	"$(awk '/^Uid:/ { print $2 }' "/proc/${monitor:-0}/status" 2>&1)"

corral() { tb_exec_host /usr/bin/corral "$@"; }
out=$(corral status 2>&1)
check_eq "corral status on the default socket, right after READY=1" 0 $?
check_contains "says connected to this version" "$out" "Status: Connected
Version: $version"
out=$(corral sandbox create --root "$ws" --name "$INST_NAME" 2>&1)
rc=$?
check_eq "a sandbox under the installed strict profile" 0 "$rc"
[ "$rc" -eq 0 ] || echo "$out" | sed 's/^/# /'
out=$(corral exec "$INST_NAME" -- true 2>&1)
check_eq "exec true in it" 0 $?
out=$(corral exec "$INST_NAME" -- id -u 2>&1)
check_eq "as the folder's owner" 1000 "$out"
# A connection its policy refuses, for the ledger at its default path.
corral exec "$INST_NAME" -- curl -s -o /dev/null --max-time 5 "http://$(tb_addr evil.com)/" \
	>/dev/null 2>&1
ledger=/var/log/corral/egress.jsonl
i=0
while ! grep -q '"decision":"deny"' "$ledger" 2>/dev/null && [ "$i" -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "the refusal is in the ledger, $ledger" grep -q '"decision":"deny"' "$ledger"
out=$(corral sandbox delete "$INST_NAME" 2>&1)
check_eq "delete it" 0 $?

# Rotation as logrotate does it, then the signal systemctl kill
# --kill-whom=main would send (there is no systemd here to send it).
inst_quiet "$work/logrotate.log" logrotate -f -s "$work/logrotate.state" /etc/logrotate.d/corral
check_eq "logrotate rotates the installed ledger" 0 $?
check "the ledger was renamed" test -f "$ledger.1" -a ! -e "$ledger"
kill -USR1 "$broker"
i=0
while [ ! -e "$ledger" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "SIGUSR1 to the main pid: the broker makes a new ledger" test -f "$ledger"
check_eq "its own, mode 0600" "corral 600" "$(stat -c '%U %a' "$ledger" 2>&1)"
check "the monitor took no harm from it" inst_alive "$monitor"

kill -HUP "$broker"
inst_wait_note '^READY=1$'
check_eq "SIGHUP: RELOADING=1, then READY=1" "RELOADING=1 READY=1" \
	"$(grep -Eo '^(RELOADING|READY)=1' "$notes" | tail -2 | tr '\n' ' ' | sed 's/ $//')"

kill -TERM "$broker"
i=0
while inst_alive "$broker" && [ "$i" -lt $((INST_STOP_WAIT_S * 10)) ]; do
	sleep 0.1; i=$((i + 1))
done
inst_alive "$broker" && kill -KILL "$broker"
wait "$broker"
rc=$?
check_eq "SIGTERM: corrald exits 0" 0 "$rc"
check_contains "after STOPPING=1" "$(cat "$notes")" "STOPPING=1"
i=0
while inst_alive "$monitor" && [ "$i" -lt $((INST_STOP_WAIT_S * 10)) ]; do
	sleep 0.1; i=$((i + 1))
done
check "the monitor is gone too" sh -c '[ -n "$1" ] && [ ! -d "/proc/$1" ]' _ "$monitor"
check "and the control socket" test ! -e /run/corral/corrald.sock
broker='' monitor=''
tb_down

# ---- purged ----

inst_purge "$$"
check_eq "dpkg --purge" 0 $?
check_eq "the user corral went with it" "" "$(getent passwd corral; getent group corral)"
left=
for f in $contents /usr/libexec/corral /usr/share/doc/corral /etc/corral /var/lib/corral \
    /var/log/corral /run/corral; do
	case $f in */) continue ;; esac
	[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done
check_eq "nothing of the package is left" "" "$left"
check "dpkg forgot it" sh -c '! dpkg-query -W corral >/dev/null 2>&1'
tap_done
