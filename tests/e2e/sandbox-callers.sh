#!/bin/sh
# Non-root callers of corrald (ARCHITECTURE.md, "A sandbox's life"): what
# another local user may do through the control socket, end to end.
# Sets up: the test bed; two local users made for the test, ctest-a and
# ctest-b (uids 1101 and 1102, removed at the end unless they were there
# before), each with a private (0700) folder; corrald in the test host, its
# control socket opened to every local user for this test.
# Does: as ctest-a, creates sandboxes over ctest-b's folder (directly,
# through a symlink, and with a directory swapped for a symlink while
# creating), with --run-as, --home and policies naming ctest-b; looks at,
# execs into, updates and deletes ctest-b's sandbox; from inside a sandbox
# that can see the control socket, talks to corrald.
# Expects: every one of those refused or harmless; ctest-a's sandbox runs
# as ctest-a; a process inside a sandbox gets nothing from the socket.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root

UID_A=1101
UID_B=1102
SWAP_ROUNDS=20          # creates raced against a directory/symlink swapper

swapper=
# callers_down: stops the swapper, if it runs.
callers_down() {
	[ -n "$swapper" ] && kill "$swapper" 2>/dev/null
	return 0
}
corral_install_traps callers_down
corral_user_make ctest-a "$UID_A"
corral_user_make ctest-b "$UID_B"
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
users="$TB_DIR/users"
fa="$users/a"
fb="$users/b"
mkdir -p "$fa" "$fb"
echo "b's secret" >"$fb/secret.txt"
chown -R ctest-a:ctest-a "$fa"
chown -R ctest-b:ctest-b "$fb"
chmod 0700 "$fa" "$fb"
chmod 0755 "$TB_DIR" "$users"
# The corral CLI, where a sandbox on the bed's folder can run it.
mkdir -p "$TB_DIR/bin" && cp "$top_builddir/corral" "$TB_DIR/bin/corral"
chmod -R a+rX "$TB_DIR/bin"

# Opened to every local user for this test, so that ctest-a and ctest-b
# can reach it.
corral_start_shared "$port"
sock=$CORRAL_SOCK
corral() { corral_cli "$@"; }
as_a() { corral_as "$UID_A" "$@"; }
as_b() { corral_as "$UID_B" "$@"; }
# listed USER_UID NAME: NAME is in USER's `sandbox list --json`.
listed() {
	corral_as "$1" sandbox list --json | python3 -c "
import json, sys
sys.exit(0 if any(s['name'] == sys.argv[1] for s in json.load(sys.stdin)) else 1)" "$2"
}

# --- Creating over someone else's folder.
out=$(as_a sandbox create --root "$fb" --name over-b 2>&1)
rc=$?
check_eq "ctest-a cannot create a sandbox over ctest-b's 0700 folder (by the monitor: 4)" 4 "$rc"
check_contains "and is told why" "$out" "refused"
ln -s ../b "$fa/link" && chown -h ctest-a:ctest-a "$fa/link"
out=$(as_a sandbox create --root "$fa/link" --name via-link 2>&1)
rc=$?
check_eq "nor through a symlink of its own pointing there (4)" 4 "$rc"
! listed 0 over-b && ! listed 0 via-link
tap_result $? "no such sandbox exists (root's list)"

# A directory of ctest-a's swapped for a symlink to ctest-b's folder while
# ctest-a creates: whichever the daemon meets, it opens it with ctest-a's
# rights, so no sandbox may ever show b's secret.
mkdir -p "$fa/swap.d" && ln -s ../b "$fa/swap.l" && chown -h ctest-a:ctest-a "$fa/swap.d" "$fa/swap.l"
tb_exec_host setpriv --reuid="$UID_A" --regid="$UID_A" --clear-groups sh -c "
	cd '$fa' && while :; do mv -T swap.d swap 2>/dev/null; mv -T swap swap.d 2>/dev/null
		mv -T swap.l swap 2>/dev/null; mv -T swap swap.l 2>/dev/null; done" &
swapper=$!
leaks=0
made=0
i=0
while [ "$i" -lt "$SWAP_ROUNDS" ]; do
	if as_a sandbox create --root "$fa/swap" --name "swap$i" >/dev/null 2>&1; then
		made=$((made + 1))
		out=$(as_a exec "swap$i" -- sh -c "cat '$fa/swap/secret.txt'; cat secret.txt" 2>/dev/null)
		case $out in *"b's secret"*) leaks=$((leaks + 1)) ;; esac
		as_a sandbox delete "swap$i" >/dev/null 2>&1
	fi
	i=$((i + 1))
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
swapper=
check_eq "a symlink swapped in while creating never shows b's folder ($made of $SWAP_ROUNDS created)" 0 "$leaks"

# --- ctest-a's own sandbox.
out=$(as_a sandbox create --root "$fa" --name sa 2>&1)
check_eq "ctest-a creates a sandbox on its own folder" 0 "$?"
check_eq "it runs as ctest-a" "$UID_A" "$(as_a exec sa -- id -u 2>&1)"
as_a exec sa -- sh -c "echo from-a > '$fa/made.txt'" >/dev/null 2>&1
check_eq "a file it writes is ctest-a's" "$UID_A" "$(stat -c %u "$fa/made.txt" 2>&1)"
out=$(as_a sandbox create --root "$fa" --run-as ctest-b --name runas-b 2>&1)
check_eq "ctest-a cannot --run-as ctest-b" 1 "$?"
out=$(as_a sandbox create --root "$fa" --run-as root --name runas-root 2>&1)
check_eq "nor --run-as root" 1 "$?"

# --- policy set on a running sandbox: what was fixed at create stays, and
# `policy get` never shows what is not enforced.
corral_file "$fa/set-uid.yaml" <<YAML
version: 1
process:
  run_as_user: "$UID_B"
network_policies:
  web: {endpoints: [{host: example.com, port: 443}], binaries: [{path: "/**"}]}
YAML
corral_file "$fa/set-weak.yaml" <<YAML
version: 1
filesystem_policy:
  read_write: [$fa]
  landlock: {compatibility: best_effort}
network_policies: {}
YAML
corral_file "$fa/set-net.yaml" <<YAML
version: 1
network_policies:
  web: {endpoints: [{host: example.com, port: 443}], binaries: [{path: "/**"}]}
YAML
before=$(as_a policy get sa 2>&1)
out=$(as_a policy set sa "$fa/set-uid.yaml" 2>&1)
check_eq "policy set naming ctest-b's uid in process is refused" 1 "$?"
check_contains "and says those sections are fixed" "$out" "were fixed when the sandbox was made"
out=$(as_a policy set sa "$fa/set-weak.yaml" 2>&1)
check_eq "policy set with a weaker Landlock mode is refused" 1 "$?"
out=$(corral policy set sa "$fa/set-weak.yaml" 2>&1)
check_eq "for root too" 1 "$?"
check_eq "and the policy in force is unchanged" "$before" "$(as_a policy get sa 2>&1)"
out=$(as_a policy set sa "$fa/set-net.yaml" 2>&1)
check_eq "a network-only policy set is taken" 0 "$?"
after=$(as_a policy get sa 2>&1)
check_contains "it is in force" "$after" "example.com"
check_contains "with the file system fixed at create kept" "$after" "$fa"
check_contains "and the user fixed at create" "$after" "run_as_user: \"$UID_A\""
printf '%s\n' "$after" | as_a policy set sa - >/dev/null 2>&1
check_eq "what policy get shows can be set again as it is" 0 "$?"

corral_file "$fa/p-uid.yaml" <<YAML
version: 1
process:
  run_as_user: "$UID_B"
  run_as_group: "$UID_B"
network_policies: {}
YAML
out=$(as_a sandbox create --root "$fa" --policy "$fa/p-uid.yaml" --name pol-uid 2>&1)
check_eq "a policy of ctest-a's that sets process (ctest-b's uid) is refused" 1 "$?"
corral_file "$fa/p-root.yaml" <<'YAML'
version: 1
process:
  run_as_user: "0"
network_policies: {}
YAML
out=$(as_a sandbox create --root "$fa" --policy "$fa/p-root.yaml" --name pol-root 2>&1)
check_eq "a policy that sets run_as_user 0 is refused" 1 "$?"
corral_file "$fa/p-path.yaml" <<YAML
version: 1
filesystem_policy:
  read_write: [$fb]
network_policies: {}
YAML
# ctest-b's folder lies under /tmp, which the system baseline names (inside
# it is the sandbox's private /tmp): such a policy passes the caller rules,
# and what matters is that it grants nothing: only roots are mounted.
out=$(as_a sandbox create --root "$fa" --policy "$fa/p-path.yaml" --name pol-path 2>&1)
out=$(as_a exec pol-path -- cat "$fb/secret.txt" 2>&1)
check_lacks "... and its sandbox does not show that folder" "$out" "b's secret"
out=$(as_a sandbox create --root "$fa" --home "$fb" --name home-b 2>&1)
check_eq "--home naming ctest-b's folder is refused" 1 "$?"
out=$(as_a exec home-b -- sh -c 'cat "$HOME/secret.txt"; echo x > "$HOME/a-was-here"' 2>&1)
check_lacks "... and shows nothing of it" "$out" "b's secret"
[ ! -e "$fb/a-was-here" ]; tap_result $? "... nor lets ctest-a write there"

# --- ctest-b's sandbox, seen from ctest-a.
as_b sandbox create --root "$fb" --name sb >/dev/null 2>&1
listed "$UID_B" sb; tap_result $? "ctest-b's sandbox sb is in ctest-b's list"
! listed "$UID_A" sb; tap_result $? "it is not in ctest-a's list"
listed "$UID_A" sa && ! listed "$UID_B" sa
tap_result $? "and ctest-a's sandbox is in ctest-a's list only"
as_a sandbox get sb >/dev/null 2>&1
check_eq "ctest-a cannot get sb (not found: 3)" 3 "$?"
out=$(as_a exec sb -- cat "$fb/secret.txt" 2>&1)
rc=$?
[ "$rc" -ne 0 ]; tap_result $? "ctest-a cannot exec into sb (exit $rc)" "$out"
check_lacks "and reads nothing of b through it" "$out" "b's secret"
as_a policy get sb >/dev/null 2>&1
check_eq "ctest-a cannot read sb's policy (3)" 3 "$?"
as_a denials sb >/dev/null 2>&1
check_eq "nor its denials (3)" 3 "$?"
as_a policy update sb --add-endpoint evil.com:443 >/dev/null 2>&1
check_eq "nor update its policy (3)" 3 "$?"
check_lacks "sb's policy does not name evil.com" "$(as_b policy get sb 2>&1)" "evil.com"
as_a sandbox delete sb >/dev/null 2>&1
check_eq "ctest-a's delete of sb leaves it answering ctest-b" "b's secret" \
	"$(as_b exec sb -- cat "$fb/secret.txt" 2>&1)"

# --- Roots that would show the host: refused whatever the mode, with the rule.
# refused_root NAME ROOT EXPECTED [CREATE-ARG...]: root's create over ROOT
# fails and names EXPECTED.
refused_root() {
	_name=$1 _root=$2 _want=$3
	shift 3
	out=$(corral sandbox create --root "$_root" --run-as ctest-a "$@" --name rr 2>&1)
	rc=$?
	[ "$rc" -eq 4 ] && ! listed 0 rr
	tap_result $? "$_name is refused (by the monitor: 4, got $rc)" "$out"
	check_contains "and the refusal names the rule" "$out" "$_want"
	corral sandbox delete rr >/dev/null 2>&1
}
refused_root "/ as a root" "/:ro" "is a system or shared folder"
refused_root "/var as a read-only root" "/var:ro" "is a system or shared folder"
refused_root "/home as a read-only root" "/home:ro" "is a system or shared folder"
refused_root "/etc as a read-only root" "/etc:ro" "is a system or shared folder"
refused_root "a folder inside /run" "/run/user/$UID_A:ro" "lies in a folder of the host's kernel"
refused_root "a folder inside /proc" "/proc/1:ro" "lies in a folder of the host's kernel"
refused_root "a folder holding corrald's state" "$TB_DIR:ro" "reaches corrald's own folder"
refused_root "a folder inside corrald's state" "$TB_DIR/state:ro" "reaches corrald's own folder"
usermod -d "$fb" ctest-b
refused_root "another user's home, for root's sandbox run as ctest-a" "$fb:ro" \
	"reaches another user's home"
refused_root "a folder holding another user's home" "$users:ro" "reaches another user's home"
usermod -d /nonexistent ctest-b
mkdir -p "$fa/own" && chown ctest-a:ctest-a "$fa/own"
out=$(as_a sandbox create --root "$fa/own" --name own-tmp 2>&1)
check_eq "a user's own folder under /tmp stays allowed" 0 "$?"
as_a sandbox delete own-tmp >/dev/null 2>&1

# --- Texts that others will read (list, get, the registry): no control
# bytes, whoever sends them, and the daemon goes on serving.
# refused_text NAME EXPECTED CREATE-ARG...: ctest-a's create fails, says why.
refused_text() {
	_name=$1 _want=$2
	shift 2
	out=$(as_a sandbox create --root "$fa" --name rt "$@" 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] && ! listed "$UID_A" rt
	tap_result $? "$_name is refused" "$out"
	check_contains "and the refusal says why" "$out" "$_want"
	as_a sandbox delete rt >/dev/null 2>&1
}
esc=$(printf '\033]0;x\007')
refused_text "a label value with an escape" "label 1 holds a control character" --label "t=a${esc}"
refused_text "a label value with a newline" "label 1 holds a control character" \
	--label "t=a
Name: forged"
refused_text "a label key with a comma" "a label's key must be a word" --label "a,b=1"
refused_text "a session id with a newline" "--session holds a control character" --session "s
x"
refused_text "an agent of 257 bytes" "--agent is too long" --agent "$(head -c 257 /dev/zero | tr '\0' a)"
out=$(as_a sandbox create --root "$fa" --name rt --label "team=red-é" 2>&1)
check_eq "a UTF-8 label is still allowed" 0 "$?"
as_a sandbox delete rt >/dev/null 2>&1

# --- The control socket from inside a sandbox.
inside_a=$(as_a exec sa -- sh -c "test -e '$sock' && echo visible || echo absent" 2>&1)
check_eq "the control socket is not visible in ctest-a's sandbox" absent "$inside_a"
# A sandbox (root's, run as ctest-a) on a folder that holds a hard link to
# the control socket and a corral CLI, read-only (a root may not reach
# corrald's own folders, so the bed's whole folder is refused): the peer
# check alone must refuse a caller from inside.
seen="$TB_DIR/sees"
mkdir -p "$seen" && ln "$sock" "$seen/corrald.sock" && cp "$TB_DIR/bin/corral" "$seen/corral"
chmod -R a+rX "$seen"
corral sandbox create --root "$seen:ro" --run-as ctest-a --name sees-sock >/dev/null 2>&1
in_sock() { corral exec sees-sock -- "$seen/corral" --socket "$seen/corrald.sock" "$@"; }
check_eq "the socket is visible in that sandbox (so the next checks mean something)" visible \
	"$(corral exec sees-sock -- sh -c "test -S '$seen/corrald.sock' && echo visible" 2>&1)"
out=$(in_sock sandbox list --json 2>&1)
rc=$?
[ "$rc" -ne 0 ]; tap_result $? "corral sandbox list from inside a sandbox is refused (exit $rc)" "$out"
check_lacks "and lists nothing" "$out" '"name"'
out=$(in_sock sandbox create --root "$fa" --name escaped 2>&1)
rc=$?
[ "$rc" -ne 0 ] && ! listed 0 escaped
tap_result $? "corral sandbox create from inside a sandbox is refused (exit $rc)" "$out"
out=$(in_sock exec sa -- id -u 2>&1)
rc=$?
[ "$rc" -ne 0 ]; tap_result $? "corral exec into another sandbox from inside is refused (exit $rc)" "$out"

tap_done
