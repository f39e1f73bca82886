#!/bin/sh
# corral logs and corral report over a real ledger rotated as
# corral-ledger(5) ROTATION says.
# Sets up: the test bed; corrald in the test host, its host-mode proxy on
# 127.0.0.1 allowing github.com; sandbox lg (strict) on a workspace of uid
# 1000; the control socket opened to every user.
# Does: from lg, two fetches of https://github.com/big (1 MiB) and one
# refusal (evil.com), one fetch in host mode; rotates the ledger (rename,
# SIGUSR1 to the broker by its pid, gzip of the old file); one more fetch
# and refusal; then logs (text, JSON, host, --denied, --since/--until
# windows), report, the views of a user other than root and its share of
# streams, --follow (across a second rotation) of fetches made after it
# started, --follow --until, a rotated file with lines that are not
# records, and lg deleted and made again by uid 1000.
# Expects: logs gives every record of both files, oldest first, byte for
# byte as the files hold them (--json), with a sandbox column and no null
# (text); the windows are exact; report counts 3 connections to
# github.com:443 with the bytes of their close records and 2 refusals as
# host_not_allowed; uid 1000 sees none of root's records and gets four
# streams, not five; --follow prints records made after it started, before
# and after a rotation, and ends by itself past --until; junk lines are
# left out and corrald goes on serving; uid 1000's new lg shows only the
# records made since it was created.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

WAIT_TENTHS=100                 # for a ledger record, in 0.1 s
OTHER_UID=1000

port=$(tb_free_port)
ws="$TB_DIR/folders/ws"
mkdir -p "$ws"
cp "$(tb_ca_file)" "$ws/ca.pem"
chown -R "$OTHER_UID:$OTHER_UID" "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_file "$TB_DIR/host-policy.yaml" <<YAML
version: 1
network_policies:
  code:
    name: code
    endpoints:
      - {host: github.com, port: 443}
    binaries: [{path: "/**"}]
YAML
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
  policy: $TB_DIR/host-policy.yaml
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
CORRAL_SOCK="$TB_DIR/corrald.sock"
chmod 0666 "$CORRAL_SOCK"
logdir="$TB_DIR/log"
ledger="$logdir/egress.jsonl"
ca="$ws/ca.pem"
corral() { corral_cli "$@"; }

# ledger_truth [sandbox=NAME|host] [since=TS] [until=TS] [deny]: the
# records of the ledger's files (rotated by modification time, then the
# live one), as the files hold them, read here without corrald.
ledger_truth() {
	python3 - "$logdir" "$@" <<'PY'
import gzip, json, os, sys
d, want = sys.argv[1], dict(a.partition("=")[::2] for a in sys.argv[2:])
for k in ("since", "until"):        # the ledger's form: microseconds always
    if k in want and "." not in want[k]:
        want[k] = want[k][:-1] + ".000000Z"
names = [n for n in os.listdir(d) if n.startswith(("egress.jsonl.", "egress.jsonl-"))]
names.sort(key=lambda n: os.stat(os.path.join(d, n)).st_mtime_ns)
for name in names + ["egress.jsonl"]:
    path = os.path.join(d, name)
    if not os.path.exists(path):
        continue
    with (gzip.open if name.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            rec = json.loads(line)
            sb = want.get("sandbox")
            if sb is not None and rec["sandbox"] != (None if sb == "host" else sb):
                continue
            if "since" in want and rec["ts"] < want["since"]:
                continue
            if "until" in want and rec["ts"] >= want["until"]:
                continue
            if "deny" in want and rec["decision"] != "deny":
                continue
            sys.stdout.write(line)
PY
}

# count_of EVENT [SANDBOX]: records of that event (of lg by default).
count_of() {
	ledger_truth "sandbox=${2:-lg}" | grep -c "\"event\":\"$1\""
}

# wait_count N EVENT: until lg has N records of EVENT (closes come once
# the tunnel ends, after curl has exited).
wait_count() {
	_i=0
	while [ "$(count_of "$2")" -lt "$1" ] && [ "$_i" -lt "$WAIT_TENTHS" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ "$(count_of "$2")" -ge "$1" ]
}

# fetch URL: curl in lg; its status and size.
fetch() {
	corral exec lg -- /usr/bin/curl -sS --max-time 10 --cacert "$ca" -o /dev/null \
		-w '%{http_code} %{size_download}' "$1" 2>/dev/null
}

# refused URL: curl in lg through the proxy; the proxy's answer to its CONNECT.
refused() {
	corral exec lg -- /usr/bin/curl -sS --max-time 10 --cacert "$ca" -o /dev/null \
		-w '%{http_connect}' "$1" 2>/dev/null
}

# rotate NEW-NAME: the live ledger renamed, SIGUSR1 to the broker, and
# the new file waited for (the writer makes it when it reopens).
rotate() {
	mv "$ledger" "$logdir/$1"
	kill -USR1 "$broker"
	_i=0
	while [ ! -e "$ledger" ] && [ "$_i" -lt "$WAIT_TENTHS" ]; do sleep 0.1; _i=$((_i + 1)); done
	[ -e "$ledger" ]
}

corral sandbox create --root "$ws" --profile strict --name lg >/dev/null 2>&1
check_eq "a strict sandbox lg starts" 0 "$?"

# --- Before the rotation: two fetches, a refusal, host mode.
check_eq "lg fetches github.com/big" "200 $TB_BIG_BYTES" "$(fetch https://github.com/big)"
check_eq "lg fetches it again" "200 $TB_BIG_BYTES" "$(fetch https://github.com/big)"
check_eq "lg is refused evil.com" "403" "$(refused https://evil.com/)"
out=$(tb_exec_host curl -sS --max-time 5 --cacert "$(tb_ca_file)" \
	--proxy "http://127.0.0.1:$port" https://github.com/zen 2>&1)
check_eq "host mode fetches github.com/zen" "$TB_ZEN" "$out"
wait_count 2 close
check_eq "both closes are in the ledger" 2 "$(count_of close)"

# --- The rotation, by the broker's pid (tb_pid corrald: the process the
# bed started is the broker; the monitor is its child).
broker=$(tb_pid corrald)
buid=$(awk '/^Uid:/ { print $2 }' "/proc/$broker/status" 2>/dev/null)
check_eq "the process signalled is the broker (user corral)" "$(id -u corral)" "$buid"
rotate egress.jsonl.1
check_eq "after SIGUSR1 the broker writes a new ledger" 0 "$?"
gzip "$logdir/egress.jsonl.1"
[ -s "$logdir/egress.jsonl.1.gz" ]; tap_result $? "the old file is compressed"

# --- After it: one fetch and one refusal more.
check_eq "lg fetches github.com/big after the rotation" "200 $TB_BIG_BYTES" \
	"$(fetch https://github.com/big)"
check_eq "lg is refused evil.com again" "403" "$(refused https://evil.com/)"
wait_count 3 close
gz_records=$(gzip -dc "$logdir/egress.jsonl.1.gz" | wc -l | tr -d ' ')
live_records=$(wc -l <"$ledger" | tr -d ' ')
[ "$gz_records" -gt 0 ] && [ "$live_records" -gt 0 ]
tap_result $? "records are in both files ($gz_records compressed, $live_records live)"

# --- logs, JSON: every record of both files, as they hold them.
corral logs --json >"$TB_DIR/all.json" 2>&1
check_eq "logs --json exits 0" 0 "$?"
ledger_truth >"$TB_DIR/all.truth"
cmp -s "$TB_DIR/all.json" "$TB_DIR/all.truth"
tap_result $? "logs --json is the records of the compressed and the live file, in order" \
	"$(diff "$TB_DIR/all.truth" "$TB_DIR/all.json" | head -5)"

# --- logs, text: a sandbox column, bytes of closes, no null.
out=$(corral logs lg 2>&1)
check_eq "logs lg exits 0" 0 "$?"
check_eq "logs lg has a line per record of lg" "$(ledger_truth sandbox=lg | wc -l | tr -d ' ')" \
	"$(printf '%s\n' "$out" | wc -l | tr -d ' ')"
bad=$(printf '%s\n' "$out" | awk '$2 != "lg"' | head -1)
check_eq "every line's second column is the sandbox" "" "$bad"
check_eq "the three closes, from both files, show their bytes" 3 \
	"$(printf '%s\n' "$out" | grep -c '  close  .*  up=[0-9]* down=[0-9]*$')"
# (the binary is "-" or curl: whether a refusal is attributed is the proxy's business)
check_eq "a refusal shows host, mode, binary and reason" 2 "$(printf '%s\n' "$out" |
	grep -cE '  lg  connect  deny   evil\.com:443  connect  (-|/usr/bin/curl)  host_not_allowed$')"
check_lacks "no literal null" "$out" "null"

# --- logs host: host mode's records, sandbox "-".
out=$(corral logs host 2>&1)
check_eq "logs host exits 0" 0 "$?"
check_eq "logs host has host mode's records" "$(ledger_truth sandbox=host | wc -l | tr -d ' ')" \
	"$(printf '%s\n' "$out" | grep -c .)"
check_contains "host mode's fetch is there, with - for the sandbox" "$out" \
	"  -  connect  allow  github.com:443"
check_lacks "logs host shows no sandbox's record" "$out" "  lg  "
check_lacks "logs host prints no null" "$out" "null"

# --- --denied, and windows bounded by records' own times.
corral logs lg --denied --json >"$TB_DIR/denied.json" 2>&1
ledger_truth sandbox=lg deny >"$TB_DIR/denied.truth"
cmp -s "$TB_DIR/denied.json" "$TB_DIR/denied.truth"
tap_result $? "logs --denied gives the refusals only" "$(cat "$TB_DIR/denied.json")"
check_eq "there are two" 2 "$(wc -l <"$TB_DIR/denied.json" | tr -d ' ')"
ts() { ledger_truth sandbox=lg | sed -n "$1s/^{\"ts\":\"\([^\"]*\)\".*/\1/p"; }
since=$(ts 2)
until=$(ts "$(($(ledger_truth sandbox=lg | wc -l) - 1))")
corral logs lg --since "$since" --until "$until" --json >"$TB_DIR/window.json" 2>&1
ledger_truth sandbox=lg "since=$since" "until=$until" >"$TB_DIR/window.truth"
cmp -s "$TB_DIR/window.json" "$TB_DIR/window.truth"
tap_result $? "--since T2 --until T(n-1) is exactly the records from T2 to before T(n-1)" \
	"$(diff "$TB_DIR/window.truth" "$TB_DIR/window.json" | head -5)"
check_contains "--since keeps the record at T2" "$(head -1 "$TB_DIR/window.json")" "\"ts\":\"$since\""
check_lacks "--until leaves out the record at T(n-1)" "$(cat "$TB_DIR/window.json")" "\"ts\":\"$until\""
rot=$(gzip -dc "$logdir/egress.jsonl.1.gz" | tail -1 | sed 's/^{"ts":"\([^"]*\)".*/\1/')
corral logs --until "$rot" --json >"$TB_DIR/old.json" 2>&1
check_eq "--until the compressed file's last record gives the rest of that file" \
	"$((gz_records - 1))" "$(wc -l <"$TB_DIR/old.json" | tr -d ' ')"

# --- report: the known workload.
corral report lg --json >"$TB_DIR/report.json" 2>&1
check_eq "report lg --json exits 0" 0 "$?"
ledger_truth sandbox=lg >"$TB_DIR/lg.truth"
python3 - "$TB_DIR/report.json" "$TB_DIR/lg.truth" "$TB_BIG_BYTES" >"$TB_DIR/report.check" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
truth = [json.loads(l) for l in open(sys.argv[2])]
big = int(sys.argv[3])
closes = [r for r in truth if r["event"] == "close"]
up, down = sum(r["bytes_up"] for r in closes), sum(r["bytes_down"] for r in closes)
curl = sum(1 for r in truth if r["event"] == "connect" and r["binary"] == "/usr/bin/curl")
(box,) = report["sandboxes"]
(host,) = box["hosts"]
checks = [
    ("one sandbox, lg", box["sandbox"], "lg"),
    ("the one host reached is github.com:443", (host["host"], host["port"]), ("github.com", 443)),
    ("3 connections", host["connections"], 3),
    ("3 closes, each matched to its connect", (host["closes"], box["closes_unmatched"]), (3, 0)),
    ("bytes up are the closes' sum", host["bytes_up"], up),
    ("bytes down are the closes' sum", host["bytes_down"], down),
    ("bytes down hold the three bodies", host["bytes_down"] >= 3 * big, True),
    ("2 refusals", box["refusals"], 2),
    ("by reason: host_not_allowed twice", box["refusals_by_reason"],
     [{"reason": "host_not_allowed", "count": 2}]),
    ("by host: evil.com:443 twice", box["refusals_by_host"],
     [{"host": "evil.com", "port": 443, "count": 2}]),
    ("binaries: curl, as the ledger names it", box["binaries"],
     [{"binary": "/usr/bin/curl", "count": curl}] if curl else []),
    ("nothing capped", box["capped"], []),
]
for name, got, want in checks:
    print("%s\t%s" % ("ok" if got == want else "FAIL", name if got == want else
                      "%s: expected %r, got %r" % (name, want, got)))
PY
while IFS="$(printf '\t')" read -r verdict what; do
	[ "$verdict" = ok ]; tap_result $? "report: $what"
done <"$TB_DIR/report.check"
check_eq "report made its checks" 12 "$(wc -l <"$TB_DIR/report.check" | tr -d ' ')"
out=$(corral report --all 2>&1)
check_contains "report --all has lg" "$out" "sandbox lg: "
check_contains "report --all has host mode" "$out" "host mode: "
check_contains "report's text lists github.com's connections and bytes" "$out" \
	"  github.com:443"
check_lacks "report's text prints no null" "$out" "null"
after=$(ledger_truth sandbox=lg | tail -n "$live_records" | head -1 | sed 's/^{"ts":"\([^"]*\)".*/\1/')
out=$(corral report lg --since "$after" --json 2>&1)
check_contains "report --since counts the fetch after the rotation only" "$out" \
	'"connections":1,'

# --- A user other than root sees none of root's records.
out=$(corral_as "$OTHER_UID" logs lg 2>&1); rc=$?
check_eq "uid $OTHER_UID: logs lg is refused" 1 "$rc"
check_eq "uid $OTHER_UID: as if there were no lg" "corral: no sandbox named 'lg'" "$out"
out=$(corral_as "$OTHER_UID" logs host 2>&1); rc=$?
check_eq "uid $OTHER_UID: logs host is refused" 1 "$rc"
check_contains "uid $OTHER_UID: host mode's records are root's" "$out" "root only"
out=$(corral_as "$OTHER_UID" logs 2>&1); rc=$?
check_eq "uid $OTHER_UID: logs of all it may see exits 0" 0 "$rc"
check_eq "uid $OTHER_UID: and shows nothing" "" "$out"

# A user's share of logs streams: four followed at once, a fifth refused.
# A probe served while fewer than four are held briefly makes a fourth (and
# a follower arriving then is refused and exits): a follower that is gone
# is started again.
follow_share() {
	tb_spawn_host "share$1" setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups \
		"$top_builddir/corral" --socket "$CORRAL_SOCK" logs --follow
}
for n in 1 2 3 4; do follow_share "$n"; done
_i=0
while :; do             # until the four are served
	out=$(corral_as "$OTHER_UID" logs 2>&1)
	case $out in *"logs streams"*) break ;; esac
	[ "$_i" -ge "$WAIT_TENTHS" ] && break
	sleep 0.1
	for n in 1 2 3 4; do
		_p=$(tb_pid "share$n")   # gone, or a zombie not yet waited for
		[ -e "/proc/$_p" ] && [ "$(awk '{ print $3 }' "/proc/$_p/stat")" != Z ] ||
			follow_share "$n"
	done
	_i=$((_i + 1))
done
check_contains "uid $OTHER_UID: a fifth stream is refused, naming the share" "$out" \
	"you already hold 4 logs streams, the most a user may"
out=$(corral logs lg --json 2>&1 | wc -l | tr -d ' ')
check_eq "root is served meanwhile" "$(ledger_truth sandbox=lg | wc -l | tr -d ' ')" "$out"
for n in 1 2 3 4; do tb_stop "share$n"; done

# --- --follow: records made after it started, across a second rotation.
tb_spawn_host follow timeout 60 "$top_builddir/corral" --socket "$CORRAL_SOCK" logs lg --follow
follow_log=$(tb_log follow)
have=$(ledger_truth sandbox=lg | wc -l | tr -d ' ')
_i=0
while [ "$(wc -l <"$follow_log")" -lt "$have" ] && [ "$_i" -lt "$WAIT_TENTHS" ]; do
	sleep 0.1
	_i=$((_i + 1))
done
check_eq "--follow first prints what the ledger holds" "$have" "$(wc -l <"$follow_log" | tr -d ' ')"
check_eq "a fetch made while following" "200" "$(fetch https://api.github.com/zen | cut -c1-3)"
# follow_shows TEXT: until the follower printed a line with TEXT.
follow_shows() {
	_i=0
	while ! grep -q "$1" "$follow_log" && [ "$_i" -lt "$WAIT_TENTHS" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	grep -q "$1" "$follow_log"
}
follow_shows "  lg  close    -      api.github.com:443"
tap_result $? "--follow prints the records made after it started" "$(tail -3 "$follow_log")"
rotate egress.jsonl-second
check_eq "a second rotation while following" 0 "$?"
check_eq "a fetch after it" "200" "$(fetch https://codeload.github.com/ | cut -c1-3)"
follow_shows "  lg  close    -      codeload.github.com:443"
tap_result $? "--follow goes on into the new file" "$(tail -3 "$follow_log")"
kill -0 "$(tb_pid follow)" 2>/dev/null
tap_result $? "the follower is still running: the stream stays open"
tb_stop follow
check_eq "--follow printed each record once" \
	"$(ledger_truth sandbox=lg | wc -l | tr -d ' ')" "$(wc -l <"$follow_log" | tr -d ' ')"
check_lacks "--follow printed no null" "$(cat "$follow_log")" "null"

# --follow --until: the stream ends on its own once that time has passed.
soon=$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%SZ)
out=$(timeout 15 "$top_builddir/corral" --socket "$CORRAL_SOCK" logs lg --follow --until "$soon" \
	--json 2>&1); rc=$?
check_eq "--follow --until a moment from now ends by itself" 0 "$rc"
check_eq "and gives the records before it" "$(ledger_truth sandbox=lg "until=$soon" | wc -l | tr -d ' ')" \
	"$(printf '%s\n' "$out" | grep -c .)"

# --- A rotated file that is not all the ledger's: an overlong line, a raw
# control byte, a line that is not JSON, and one record.
junk="$logdir/egress.jsonl-junk"
records=$(ledger_truth | wc -l | tr -d ' ')
first=$(ledger_truth sandbox=lg | grep '"event":"connect"' | sed -n 1p)
{
	head -c 20000 /dev/zero | tr '\0' x
	echo
	printf '{"ts":"2000-01-01T00:00:00.000001Z","event":"connect","sandbox":"lg","host":"a\033[2Jb"}\n'
	echo "not json"
	printf '%s\n' "$first" | sed -e 's/"ts":"[^"]*"/"ts":"2000-01-01T00:00:00.000002Z"/' \
		-e 's/"host":"[^"]*"/"host":"junk.example"/'
} >"$junk"
chown corral:corral "$junk"
touch -d 2000-01-01 "$junk"
out=$(corral logs --json 2>&1); rc=$?
check_eq "logs over a file with junk exits 0" 0 "$rc"
check_eq "its one record comes first" '"host":"junk.example"' \
	"$(printf '%s\n' "$out" | head -1 | grep -o '"host":"junk.example"')"
check_eq "and nothing else of it" "$((records + 1))" "$(printf '%s\n' "$out" | grep -c .)"
case $out in *"$(printf '\033')"*) esc=1 ;; *) esc=0 ;; esac
check_eq "no raw control byte is passed on" 0 "$esc"
corral status >/dev/null 2>&1
check_eq "corrald still serves" 0 "$?"
rm -f "$junk"

# --- A name used again: root's lg deleted, uid OTHER_UID makes its own lg.
# Its logs and report start at its creation; lg's old records are root's.
corral sandbox delete lg >/dev/null 2>&1
old_records=$(ledger_truth sandbox=lg | wc -l | tr -d ' ')
corral_as "$OTHER_UID" sandbox create --root "$ws" --profile strict --name lg >/dev/null 2>&1
check_eq "uid $OTHER_UID: makes a sandbox lg of its own" 0 "$?"
_i=0
while [ "$(ledger_truth sandbox=lg | wc -l | tr -d ' ')" -le "$old_records" ] &&
    [ "$_i" -lt "$WAIT_TENTHS" ]; do
	sleep 0.1
	_i=$((_i + 1))
done
out=$(corral_as "$OTHER_UID" logs lg --json 2>&1); rc=$?
check_eq "uid $OTHER_UID: logs of its lg exits 0" 0 "$rc"
check_eq "uid $OTHER_UID: only the records of its lg, from its creation" \
	"$(ledger_truth sandbox=lg | tail -n +"$((old_records + 1))")" "$out"
check_lacks "uid $OTHER_UID: none of the old lg's fetches" "$out" "github.com"
out=$(corral_as "$OTHER_UID" report lg --json 2>&1)
check_contains "uid $OTHER_UID: its report counts no connection of the old lg" "$out" \
	'"connections":0,'
out=$(corral logs lg --json 2>&1)
check_eq "root still reads every lg record, old and new" \
	"$(ledger_truth sandbox=lg | wc -l | tr -d ' ')" "$(printf '%s\n' "$out" | grep -c .)"
corral_as "$OTHER_UID" sandbox delete lg >/dev/null 2>&1
tap_done
