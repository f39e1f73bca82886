#!/bin/sh
# Real sandboxes (ARCHITECTURE.md, "A sandbox's life"),
# end to end.
# Sets up: the test bed; corrald in the test host with sandboxes on; a
# workspace owned by uid 1000 holding hello.txt and the bed's CA.
# Does: creates sandboxes with the corral CLI, runs commands in them,
# deletes them, kills corrald and starts it again.
# Expects: the folders at their own paths (read-only where asked), nothing
# else of the host's home, never uid 0, the strict profile's network, and
# nothing left behind by delete or by a killed daemon.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/app"
ro="$TB_DIR/folders/reference"
mkdir -p "$ws" "$ro"
echo "hello from the workspace" >"$ws/hello.txt"
echo "read me only" >"$ro/ref.txt"
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }

out=$(corral status)
check_contains "status says the host's firewall lets the fence work" "$out" "Firewall: ok"
tb_exec_host nft add table inet fwprobe &&
	tb_exec_host nft add chain inet fwprobe input '{ type filter hook input priority 0; policy drop; }'
out=$(corral status)
tb_exec_host nft delete table inet fwprobe
check_contains "and names a drop-policy input chain that would stop it" "$out" \
	"Firewall: at risk: table inet fwprobe, chain input: policy drop"
check_contains "its verdict kept between changes, a change is seen at once" \
	"$(corral status)" "Firewall: ok"

out=$(corral sandbox create --root "$ws" --root "$ro:ro" --name t1 --session s1 --agent a1 --json)
rc=$?
check_eq "create on a folder owned by a regular user exits 0" 0 "$rc"
check "create --json gives enforcement full, Linux, the roots and mounts" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['name'] == 't1' and o['enforcement'] == 'full', o
assert o['runner']['os'] == 'Linux', o['runner']
assert {'path': '$ws', 'writable': True} in o['roots'], o['roots']
assert {'path': '$ro', 'writable': False} in o['roots'], o['roots']
m = {x['target']: x for x in o['mounts']}
assert m['$ws']['source'] == '$ws' and not m['$ws']['read_only'], m
assert m['$ro']['read_only'] and m['/usr']['read_only'], m
assert o['session_id'] == 's1' and o['agent'] == 'a1' and o['profile'] == 'strict', o
" "$out"

out=$(corral exec t1 -- cat hello.txt)
check_eq "exec runs in the workspace: cat hello.txt prints it" "hello from the workspace" "$out"
out=$(printf 'streamed in' | corral exec t1 -- cat)
check_eq "exec streams stdin to the command" "streamed in" "$out"
n=$(corral exec t1 -- head -c 70000 /dev/zero | wc -c)
check_eq "a 70,000-byte output passes whole" 70000 "$n"
corral exec t1 -- sh -c 'echo to-stderr >&2' 2>"$TB_DIR/stderr" >"$TB_DIR/stdout"
check_eq "stderr stays apart from stdout" "to-stderr|" "$(cat "$TB_DIR/stderr")|$(cat "$TB_DIR/stdout")"
corral exec t1 -- sh -c 'exit 3'; rc=$?
check_eq "exec exits with the command's code" 3 "$rc"
corral exec t1 -- sh -c 'kill -9 $$'; rc=$?
check_eq "a command killed by signal 9 exits 137" 137 "$rc"
out=$(corral exec nosuch -- true 2>&1); rc=$?
check_eq "exec in an unknown sandbox exits 125 (corral's own failure)" 125 "$rc"
check_contains "and names it" "$out" "no sandbox named 'nosuch'"
out=$(corral exec t1 -- id -u)
check_eq "the sandbox runs as the folder's owner, never 0" 1000 "$out"
corral exec t1 -- sh -c "echo made inside > $ws/inside.txt"
check_eq "a file written inside appears outside" "made inside" "$(cat "$ws/inside.txt" 2>&1)"
check_eq "owned by the folder's owner" 1000 "$(stat -c %u "$ws/inside.txt" 2>&1)"
corral exec t1 -- sh -c "echo x > $ro/new.txt" >/dev/null 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ ! -e "$ro/new.txt" ]
tap_result $? "a read-only folder refuses a write (exit $rc, no file)"
mkdir -p "$ws/vendor" && chown 1000:1000 "$ws/vendor"
out=$(corral sandbox create --root "$ws" --root "$ws/vendor:ro" --name nest 2>&1); rc=$?
check_eq "a read-only root inside a writable one is refused" 1 "$rc"
check_contains "saying that only its mount protects it" "$out" \
	"only its read-only mount protects it; pass --allow-nested-readonly"
corral sandbox create --root "$ws" --root "$ws/vendor:ro" --name nest \
	--allow-nested-readonly >/dev/null 2>&1
check_eq "with --allow-nested-readonly it is created" 0 "$?"
corral exec nest -- sh -c "echo x > $ws/vendor/w" >/dev/null 2>&1
[ ! -e "$ws/vendor/w" ]; tap_result $? "and its read-only mount refuses a write"
corral sandbox delete nest >/dev/null 2>&1

out=$(corral exec t1 -- ls /root /home/sam 2>&1)
check_contains "the host's homes are not there" "$out" "No such file or directory"
out=$(corral exec t1 -- cat /root/.ssh/authorized_keys 2>&1)
rc=$?
[ "$rc" -ne 0 ]; tap_result $? "cat ~root/.ssh/authorized_keys fails"
out=$(corral exec t1 -- sh -c 'echo ok > "$HOME/note" && cat "$HOME/note"')
check_eq "HOME inside is writable" ok "$out"

code=$(corral exec t1 -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://example.com/ 2>/dev/null)
check_eq "under strict, example.com is refused (http code 000)" 000 "$code"
code=$(corral exec t1 -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://api.github.com/zen 2>/dev/null)
check_eq "under strict, api.github.com answers 200" 200 "$code"
out=$(corral exec t1 -- getent hosts t1 2>&1)
check_eq "the sandbox's own name resolves inside, as on a Debian host" "127.0.1.1       t1" "$out"
out=$(corral denials t1 --since 1m --json)
check_contains "denials list the sandbox's refusal" "$out" '"host":"example.com","port":443'
check_lacks "but not the sandbox's own name: no false alarm" "$out" '"host":"t1"'
corral_ledger_has event=dns sandbox=t1 host=t1
check_eq "nor does the ledger" 1 $?
out=$(corral logs t1 --denied --json)
check_contains "logs --denied gives the sandbox's refused connection" "$out" '"host":"example.com"'
check_lacks "and no allowed one" "$out" '"decision":"allow"'
out=$(corral logs t1 --since 1h)
check_contains "logs prints a line per record for people" "$out" "api.github.com:443"
out=$(corral policy get t1)
check_contains "policy get shows the sandbox's rendered policy" "$out" "$ws"
out=$(corral policy get t1 --json)
check "policy get --json is one object: the sandbox and its policy's YAML" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['sandbox'] == 't1' and sys.argv[2] in o['policy'], o" "$out" "$ws"
out=$(corral policy update t1 --add-endpoint example.com:443 --json)
check_contains "policy update --json gives the policy now in force" "$out" '"sandbox":"t1"'
check_contains "... with the new endpoint" "$out" 'example.com'
code=$(corral exec t1 -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://example.com/ 2>/dev/null)
check_eq "a policy update reaches the running sandbox at once" 200 "$code"

mkdir -p "$TB_DIR/rootowned"
out=$(corral sandbox create --root "$TB_DIR/rootowned" --name t0 2>&1)
rc=$?
check_eq "a root-owned folder without --run-as is refused" 1 "$rc"
check_contains "and the refusal says why" "$out" "never runs as root"

out=$(corral sandbox create --root "$ws" --name t2 --json)
corral exec t2 -- sh -c "echo from t2 > $ws/shared.txt"
out=$(corral exec t1 -- cat shared.txt)
check_eq "two sandboxes sharing a folder see each other's files" "from t2" "$out"

gw=$(corral sandbox get t2 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['network']['gateway'])")
veths_before=$(tb_exec_host ip -o addr show | grep -c "inet $gw/30")
corral sandbox delete t2 >/dev/null
out=$(corral sandbox list --json)
check_lacks "delete: the sandbox is gone from the list" "$out" '"name":"t2"'
sleep 0.5
check_eq "delete: its veth (gateway $gw) is gone" "1 0" \
	"$veths_before $(tb_exec_host ip -o addr show | grep -c "inet $gw/30")"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cgv2=/sys/fs/cgroup; else cgv2=/sys/fs/cgroup/unified; fi
inst=corral-$(sed -n 's/.*sandboxes: instance \(i[0-9a-f]*\).*/\1/p' "$(tb_log corrald)" | head -1)
# The checks below look inside the instance's cgroup: it must be found.
[ -d "$cgv2/$inst" ]; tap_result $? "corrald's cgroup root ($inst) is found"
check_lacks "delete: its cgroup is gone" "$(ls "$cgv2/$inst" 2>&1)" "t2"
[ ! -e "$TB_DIR/state/sandboxes/t2" ]; tap_result $? "delete: its home is gone"

# A second daemon with its own state folder never touches the first's.
corral_config "$TB_DIR/second.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$(tb_free_port)
YAML
sed -i -e "s|$TB_DIR/corrald.sock|$TB_DIR/second.sock|" -e "s|$TB_DIR/state|$TB_DIR/state2|" \
	-e "s|$TB_DIR/log|$TB_DIR/log2|" -e "s|10.231.0.0/16|10.232.0.0/16|" "$TB_DIR/second.yaml"
printf 'network:\n  pool: 10.232.0.0/16\n' >>"$TB_DIR/second.yaml"
second_port=$(sed -n 's/.*listen: 127.0.0.1:\([0-9]*\)/\1/p' "$TB_DIR/second.yaml")
corral_start second "$TB_DIR/second.yaml" "$second_port"
tb_exec_host "$top_builddir/corral" --socket "$TB_DIR/second.sock" reap >/dev/null
out=$(corral exec t1 -- cat hello.txt)
check_eq "a second daemon (another state folder) leaves the first's sandbox running" \
	"hello from the workspace" "$out"
tb_stop second

# The same state folder: one daemon at a time (the monitor holds its lock,
# and the lock file names the running daemon).
sed -e "s|$TB_DIR/corrald.sock|$TB_DIR/third.sock|" \
	-e "s|listen: 127.0.0.1:.*|listen: 127.0.0.1:$(tb_free_port)|" \
	"$TB_DIR/corrald.yaml" >"$TB_DIR/third.yaml"
out=$(tb_exec_host env CORRAL_INIT="$top_builddir/corral-init" timeout 3 \
	nsenter --mount="/proc/$$/ns/mnt" "$top_builddir/corrald" --foreground \
	--config "$TB_DIR/third.yaml" 2>&1)
check_contains "a daemon on a state folder in use is refused at once, told who holds it" \
	"$out" "another corrald (pid $(tb_pid corrald)) uses the state folder"
[ ! -e "$TB_DIR/third.sock" ]; tap_result $? "and serves nothing meanwhile"
out=$(corral exec t1 -- cat hello.txt)
check_eq "while the first daemon goes on" "hello from the workspace" "$out"

# The cap.
corral sandbox delete --all >/dev/null
tb_stop corrald
CORRAL_SANDBOX_MAX=2; export CORRAL_SANDBOX_MAX
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
corral sandbox create --root "$ws" --name c1 >/dev/null
corral sandbox create --root "$ws" --name c2 >/dev/null
out=$(corral sandbox create --root "$ws" --name c3 2>&1)
check_contains "the third sandbox over the cap is refused with the exact message" "$out" \
	"2 sandboxes are already running on this machine (the limit is 2; set CORRAL_SANDBOX_MAX to change it)"

# A killed daemon: its sandboxes die with it, and the next start reaps.
kill -KILL "$(tb_pid corrald)"
sleep 1
unset CORRAL_SANDBOX_MAX
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
out=$(corral sandbox list --json)
check_eq "after a SIGKILL and a restart no sandbox is listed" "[]" "$out"
check_eq "the registry is empty" 0 "$(sqlite3 "$TB_DIR/state/registry.db" 'select count(*) from sandboxes' 2>&1)"
[ -n "$inst" ] && check_eq "no cgroup of the old sandboxes is left" "" \
	"$(ls "$cgv2/$inst" 2>/dev/null | grep -E '^c[12]$')"
check_lacks "no veth of them is left" "$(tb_exec_host ip -o link)" "crs"
check_eq "no home of them is left" "" "$(ls "$TB_DIR/state/sandboxes" 2>/dev/null)"

# Creates at once: the monitor builds them one by one while the broker
# goes on; each gets its own name and address.
par_pids=
for n in 1 2 3 4 5; do
	corral sandbox create --root "$ws" --name "par$n" --json >"$TB_DIR/par$n.json" 2>&1 &
	par_pids="$par_pids $!"
done
for p in $par_pids; do wait "$p"; done
ok=0
for n in 1 2 3 4 5; do
	grep -q "\"name\":\"par$n\"" "$TB_DIR/par$n.json" && ok=$((ok + 1))
done
check_eq "five creates at once all succeed" 5 "$ok"
check_eq "each with its own gateway" 5 "$(cat "$TB_DIR"/par?.json |
	python3 -c 'import json, sys; print(len({json.loads(l)["network"]["gateway"] for l in sys.stdin}))' 2>&1)"
out=$(corral exec par3 -- cat hello.txt)
check_eq "and each answers an exec" "hello from the workspace" "$out"
corral sandbox delete --all >/dev/null

# SIGTERM: every sandbox torn down, the fence removed, exit 0.
corral sandbox create --root "$ws" --name last >/dev/null
kill -TERM "$(tb_pid corrald)"
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$(tb_pid corrald)" 2>/dev/null || break; sleep 0.3; done
sleep 0.5
check_lacks "after SIGTERM no sandbox veth is left" "$(tb_exec_host ip -o link)" "crs"
check_lacks "after SIGTERM corrald's nftables table is gone" "$(tb_exec_host nft list tables)" "corral_"
[ "$inst" != corral- ] && [ ! -d "$cgv2/$inst" ]
tap_result $? "after SIGTERM corrald's cgroup root ($inst) is gone"
check_eq "after SIGTERM the registry is empty" 0 \
	"$(sqlite3 "$TB_DIR/state/registry.db" 'select count(*) from sandboxes' 2>&1)"
tap_done
