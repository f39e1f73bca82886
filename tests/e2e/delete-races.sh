#!/bin/sh
# a name deleted and made again at once, while the monitor is
# busy (the delete answers only once the monitor tore the sandbox down,
# but the name is free in the broker at once).
# Sets up: the test bed; users ctest-a0..a3 (uids 1160-1163) with folders;
# corrald in the test host, its socket open to every user.
# Does: ctest-a3 keeps the monitor busy with waves of wide creates; at the
# same time ctest-a0 and ctest-a1 each, ROUNDS times, delete their sandbox
# and (without waiting for the delete's answer) make one of the same name
# again, write a mark into its HOME and read it back; ctest-a2 makes and
# deletes sandboxes of other names meanwhile; then a name deleted by
# ctest-a0 is taken by ctest-a1 at once; then two connections of ctest-a2
# delete --all at once.
# Expects: every new sandbox works (exec), keeps its HOME mark and its
# cgroup after the old teardown ran; a name another user took is theirs;
# the two delete --all split the sandboxes between them; corrald serves on.
# ATK_WARM=N runs it all with a warm pool of N strict sandboxes (the
# creates claim them; a claimed sandbox's cgroup keeps its warm name).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
. "$top_srcdir/tests/e2e/lib/busy.sh"
tb_need_root

ROUNDS=${ATK_ROUNDS:-12}
U0=1160 U1=1161 U2=1162 U3=1163

busy_start "0 1 2" 60 30 "${ATK_WARM:+warm_pool:
  strict: $ATK_WARM}"

mk() { # mk UID NAME: create NAME as UID (retried while the name is still taken)
	_t=0
	while [ "$_t" -lt 50 ]; do
		_o=$(corral_as "$1" sandbox create --name "$2" --profile strict \
			--root "$TB_DIR/users/a$(($1 - 1160))" 2>&1) && return 0
		case $_o in *"already exists"*) sleep 0.02; _t=$((_t + 1)) ;; *) echo "$_o"; return 1 ;; esac
	done
	echo "still taken: $_o"
	return 1
}

# check_sb UID NAME MARK: NAME runs, its HOME holds MARK, its cgroup and
# host HOME exist; prints "ok" or what is wrong.
check_sb() {
	_got=$(corral_as "$1" exec "$2" -- sh -c "cat \$HOME/mark 2>&1" 2>&1)
	[ "$_got" = "$3" ] || { echo "$2: mark '$_got' (wanted $3)"; return; }
	[ -d "$TB_DIR/state/sandboxes/$2" ] || { echo "$2: host home gone"; return; }
	[ -n "$(atk_cgroup "$2")" ] || [ -n "${ATK_WARM:-}" ] || { echo "$2: cgroup gone"; return; }
	_cg=$(corral_as "$1" exec "$2" -- cat /proc/self/cgroup 2>&1 | sed -n 's/^0:://p')
	[ -n "$_cg" ] && [ -d "/sys/fs/cgroup/unified$_cg" ] || { echo "$2: cgroup '$_cg' gone"; return; }
	echo ok
}

for u in 0 1; do
	mk "$((1160 + u))" "r$u" >/dev/null
	corral_as "$((1160 + u))" exec "r$u" -- sh -c 'echo m0 >$HOME/mark'
done

atk_burst "$U3" "$TB_DIR/users/a3" 10 5 "$TB_DIR/burst.out"
sleep 0.3

# reuse UID NAME: ROUNDS times, delete NAME and make it again at once.
reuse() {
	_u=$1 _n=$2 _r=1
	while [ "$_r" -le "$ROUNDS" ]; do
		_a=$(atk_ms)
		corral_as "$_u" sandbox delete "$_n" >"$TB_DIR/del-$_n-$_r.out" 2>&1 &
		_d=$!
		sleep 0.05
		if ! mk "$_u" "$_n" >"$TB_DIR/mk-$_n-$_r.out" 2>&1; then
			echo "round $_r: create failed: $(cat "$TB_DIR/mk-$_n-$_r.out")"
			wait "$_d"
			_r=$((_r + 1))
			continue
		fi
		wait "$_d"
		_rc=$?
		[ "$_rc" -eq 0 ] || echo "round $_r: delete exit $_rc: $(cat "$TB_DIR/del-$_n-$_r.out")"
		corral_as "$_u" exec "$_n" -- sh -c "echo m$_r >\$HOME/mark" >/dev/null 2>&1
		echo "round $_r: $(check_sb "$_u" "$_n" "m$_r") ($(($(atk_ms) - _a)) ms)"
		_r=$((_r + 1))
	done
}
reuse "$U0" r0 >"$TB_DIR/reuse0.out" 2>&1 &
j0=$!
reuse "$U1" r1 >"$TB_DIR/reuse1.out" 2>&1 &
j1=$!
(
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		corral_as "$U2" sandbox create --name "n$i" --profile strict \
			--root "$TB_DIR/users/a2" >/dev/null 2>&1
		corral_as "$U2" sandbox delete "n$((i - 1))" >/dev/null 2>&1 &
		i=$((i + 1))
	done
	wait
) &
j2=$!
wait "$j0" "$j1" "$j2"
atk_wait_idle
sed 's/^/# a0 /' "$TB_DIR/reuse0.out"
sed 's/^/# a1 /' "$TB_DIR/reuse1.out"
grep -c '^made' "$TB_DIR/burst.out" | sed 's/^/# burst creates made: /'
check_eq "every round of ctest-a0 keeps a whole sandbox" "$ROUNDS" \
	"$(grep -c ': ok (' "$TB_DIR/reuse0.out")"
check_eq "every round of ctest-a1 keeps a whole sandbox" "$ROUNDS" \
	"$(grep -c ': ok (' "$TB_DIR/reuse1.out")"
sleep 1
check_eq "r0 is whole once every teardown ran" ok "$(check_sb "$U0" r0 "m$ROUNDS")"
check_eq "r1 is whole once every teardown ran" ok "$(check_sb "$U1" r1 "m$ROUNDS")"

# Another user takes the name at once.
fails=0
i=1
while [ "$i" -le 6 ]; do
	mk "$U0" "x$i" >/dev/null || fails=$((fails + 1))
	corral_as "$U0" exec "x$i" -- sh -c 'echo old >$HOME/mark' >/dev/null 2>&1
	corral_as "$U0" sandbox delete "x$i" >/dev/null 2>&1 &
	dx=$!
	sleep 0.03
	mk "$U1" "x$i" >/dev/null || fails=$((fails + 1))
	corral_as "$U1" exec "x$i" -- sh -c 'echo new >$HOME/mark' >/dev/null 2>&1
	wait "$dx"
	r=$(check_sb "$U1" "x$i" new)
	[ "$r" = ok ] || { echo "# x$i: $r"; fails=$((fails + 1)); }
	out=$(corral_as "$U0" exec "x$i" -- true 2>&1) && {
		echo "# ctest-a0 reaches ctest-a1's x$i"; fails=$((fails + 1)); }
	i=$((i + 1))
done
check_eq "a name another user takes at once is whole and theirs" 0 "$fails"

# Two delete --all at once.
i=1
while [ "$i" -le 8 ]; do
	corral_as "$U2" sandbox create --name "d$i" --profile strict --root "$TB_DIR/users/a2" \
		>/dev/null 2>&1
	i=$((i + 1))
done
before=$(corral_as "$U2" sandbox list --json | python3 -c \
	'import json, sys; print("\n".join(sorted("\"%s\"" % s["name"] for s in json.load(sys.stdin))))')
corral_as "$U2" sandbox delete --all --json >"$TB_DIR/all1.json" 2>&1 &
p1=$!
corral_as "$U2" sandbox delete --all --json >"$TB_DIR/all2.json" 2>&1 &
p2=$!
wait "$p1"
rc1=$?
wait "$p2"
rc2=$?
echo "# all1: $(cat "$TB_DIR/all1.json")"
echo "# all2: $(cat "$TB_DIR/all2.json")"
check_eq "both delete --all answer" "0 0" "$rc1 $rc2"
got=$(cat "$TB_DIR/all1.json" "$TB_DIR/all2.json" | grep -o '"[a-z0-9-]*"' | grep -v deleted | sort)
want=$before
check_eq "between them they name each sandbox once" "$want" "$got"
check_eq "ctest-a2 has none left" "[]" "$(corral_as "$U2" sandbox list --json 2>&1)"
left=""
for n in $want; do
	n=$(echo "$n" | tr -d '"')
	[ -e "$TB_DIR/state/sandboxes/$n" ] && left="$left $n"
	[ -n "$(atk_cgroup "$n")" ] && left="$left cg:$n"
done
check_eq "nothing of them is left on the host" "" "$left"
echo "# creates served from the warm pool: $(grep -c 'from the warm pool' "$(tb_log corrald)")"
check "corrald still runs" kill -0 "$daemon_pid"
check "the log tells of no teardown" sh -c \
	"! grep -q 'tearing everything down\|corrald stopped' '$(tb_log corrald)'"
corral_cli sandbox delete --all >/dev/null 2>&1
tap_done
