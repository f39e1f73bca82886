#!/bin/sh
# corral logs and corral report against a fake corrald.
# Sets up: tests/cli/fake-corrald.py on a socket of its own, which logs each
# request it decodes and plays logs streams chosen by the sandbox's name.
# Does: bad options (no daemon needed), then logs in text and JSON, a
# refusal, a stream cut short, a followed stream, a stream larger than a
# frame, and report.
# Expects: exit 2 for usage and 1 for refusals with a one-line reason; text
# lines with a sandbox column, "-" for host mode and nothing literal null,
# control bytes (C0, DEL, C1) shown as \xHH; --json the ledger's own lines
# with DEL and C1 controls as \u escapes; the request's
# fields (since, until, denied, follow) as corral(1) says.
. "$top_srcdir/tests/lib/tap.sh"
corral="$top_builddir/corral"
fake="$top_srcdir/tests/cli/fake-corrald.py"
tmp=$(mktemp -d /tmp/corral-logs-cli.XXXXXX)
fake_pid=
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
sock="$tmp/corrald.sock"
log="$tmp/requests.jsonl"

usage_is() {
	name=$1; shift
	"$corral" --socket "$tmp/none.sock" "$@" >/dev/null 2>"$tmp/err"; rc=$?
	check_eq "$name exits 2" 2 "$rc"
	check_contains "$name prints the usage" "$(cat "$tmp/err")" "usage: corral"
}

refused() {
	name=$1; needle=$2; shift 2
	"$corral" --socket "$tmp/none.sock" "$@" >/dev/null 2>"$tmp/err"; rc=$?
	check_eq "$name exits 1" 1 "$rc"
	check_contains "$name says why" "$(cat "$tmp/err")" "$needle"
	check_eq "$name says it in one line" 1 "$(wc -l <"$tmp/err" | tr -d ' ')"
}

usage_is "logs with two names" logs a b
usage_is "logs with an unknown option" logs --frob
usage_is "report without a name or --all" report
usage_is "report with a name and --all" report web --all
refused "logs --since garbage" "--since yesterday-ish: not an RFC 3339 time" logs --since yesterday-ish
refused "logs --until garbage" "--until 5x: not an RFC 3339 time" logs --until 5x
refused "an empty window" "--since must be before --until" logs --since 1h --until 2h
refused "a bad name" "may hold only lower-case letters" logs 'Bad_Name'
refused "two different sandboxes" "two sandboxes named" logs web --sandbox db
refused "report --since garbage" "not an RFC 3339 time" report --all --since soon

python3 "$fake" "$sock" "$log" >"$tmp/fake.out" 2>&1 &
fake_pid=$!
i=0
while [ ! -S "$sock" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
c() { "$corral" --socket "$sock" "$@"; }
last_request() { tail -n 1 "$log"; }

out=$(c logs 2>"$tmp/err"); rc=$?
check_eq "logs exits 0" 0 "$rc"
check_eq "logs prints a line per record, over two frames" 6 "$(printf '%s\n' "$out" | wc -l | tr -d ' ')"
check_contains "a line has time, sandbox, event, decision, endpoint, mode, binary, reason" "$out" \
	"2026-11-29T17:58:31.123456Z  web  connect  allow  example.com:443  connect  /usr/bin/curl  -"
check_contains "a close has its bytes" "$out" "close    -      example.com:443  connect  /usr/bin/curl  -  up=517 down=1048576"
check_contains "host mode's sandbox is -" "$out" "2026-11-29T17:58:31.123456Z  -  connect  allow  pypi.org:443"
check_contains "a dns record has no port" "$out" "dns      deny   secret.evil.com  connect  -  dns_name_not_allowed"
check_contains "an IPv6 host is bracketed" "$out" "[::1]:80"
check_lacks "no literal null" "$out" "null"
check_contains "control bytes are shown as \\xHH" "$out" '/tmp/x\x1b]0;pwned\x07'
case $out in *"$(printf '\033')"*) esc=1 ;; *) esc=0 ;; esac
check_eq "no raw escape reaches the terminal" 0 "$esc"
check_contains "the request asks for every sandbox" "$(last_request)" '"sandbox": ""'

out=$(c logs --json 2>&1); rc=$?
check_eq "logs --json exits 0" 0 "$rc"
check_contains "--json prints the ledger's own lines" "$out" '{"ts":"2026-11-29T17:58:31.123456Z","event":"close","id":7,"sandbox":"web"'
check_contains "--json keeps the ledger's escapes" "$out" '"binary":"/tmp/x\u001b]0;pwned\u0007"'
check_contains "--json keeps null as null" "$out" '"sandbox":null'

c logs web --denied --since 2026-11-29T17:00:00Z --until 2026-11-29T18:00:00Z >/dev/null 2>&1
req=$(last_request)
check_contains "the name is sent" "$req" '"sandbox": "web"'
check_contains "--denied is sent" "$req" '"denied_only": true'
check_contains "--since is sent in microseconds" "$req" '"since_us": 1795971600000000'
check_contains "--until is sent in microseconds" "$req" '"until_us": 1795975200000000'
c logs --sandbox host >/dev/null 2>&1
check_contains "--sandbox names the sandbox" "$(last_request)" '"sandbox": "host"'

c logs missing >/dev/null 2>"$tmp/err"; rc=$?
check_eq "a refusal exits 1" 1 "$rc"
check_eq "a refusal says the daemon's reason" "corral: no sandbox named 'missing'" "$(cat "$tmp/err")"

out=$(c logs cut 2>"$tmp/err"); rc=$?
check_eq "a stream cut before its end exits 1" 1 "$rc"
check_contains "a cut stream says so" "$(cat "$tmp/err")" "connection to corrald lost"
check_eq "what came before the cut is printed" 2 "$(printf '%s\n' "$out" | wc -l | tr -d ' ')"

: >"$tmp/follow.out"
"$corral" --socket "$sock" logs follow --follow >"$tmp/follow.out" 2>&1 &
follow_pid=$!
i=0
while [ "$(wc -l <"$tmp/follow.out")" -lt 2 ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check_eq "--follow prints records as they come" 2 "$(wc -l <"$tmp/follow.out" | tr -d ' ')"
kill -0 "$follow_pid" 2>/dev/null; alive=$?
check_eq "--follow keeps the stream open" 0 "$alive"
kill "$follow_pid" 2>/dev/null
wait "$follow_pid" 2>/dev/null
check_contains "--follow is sent" "$(last_request)" '"follow": true'

# C1 controls arrive as UTF-8 (C2 9B is CSI) inside the ledger's strings.
out=$(c logs c1 2>&1); rc=$?
check_eq "logs of a record with C1 controls exits 0" 0 "$rc"
check_contains "C1 controls and DEL are shown as \\xHH" "$out" \
	'\xc2\x9b31mred.evil.com:443  connect  /tmp/\x7f\xc2\x85x  host_not_allowed'
case $out in *"$(printf '\302\233')"*|*"$(printf '\302\205')"*|*"$(printf '\177')"*) c1=1 ;; *) c1=0 ;; esac
check_eq "no raw C1 control or DEL reaches the terminal" 0 "$c1"
out=$(c logs c1 --json 2>&1)
check_contains "--json writes C1 controls and DEL as \\u escapes" "$out" \
	'"host":"\u009b31mred.evil.com"'
check_contains "--json escapes DEL and C1 in the binary too" "$out" '"binary":"/tmp/\u007f\u0085x"'
case $out in *"$(printf '\302\233')"*|*"$(printf '\302\205')"*|*"$(printf '\177')"*) c1=1 ;; *) c1=0 ;; esac
check_eq "--json lets no raw C1 control or DEL through" 0 "$c1"
out=$(c report c1 2>&1)
check_contains "report shows C1 controls as \\xHH" "$out" '\xc2\x9b31mred.evil.com'
out=$(c report c1 --json 2>&1)
check_contains "report --json writes C1 controls as \\u escapes" "$out" '\u009b31mred.evil.com'
case $out in *"$(printf '\302\233')"*|*"$(printf '\177')"*) c1=1 ;; *) c1=0 ;; esac
check_eq "report --json lets no raw C1 control or DEL through" 0 "$c1"

out=$(c logs big --json 2>"$tmp/err"); rc=$?
check_eq "a stream larger than a frame exits 0" 0 "$rc"
check_eq "every record of every frame is printed" 6000 "$(printf '%s\n' "$out" | wc -l | tr -d ' ')"

out=$(c report web 2>"$tmp/err"); rc=$?
check_eq "report exits 0" 0 "$rc"
check_contains "report names the sandbox" "$out" "sandbox web: 5 records"
check_contains "report sums a host's bytes" "$out" "1            517        1048576  example.com:443"
check_contains "report counts refusals" "$out" "refusals: 3"
check_contains "report shows host mode" "$out" "host mode: 1 record"
check_lacks "report prints no null" "$out" "null"
out=$(c report --all --json 2>&1); rc=$?
check_eq "report --json exits 0" 0 "$rc"
check_contains "report --json is one object" "$out" '{"since":null,"until":null,"records":6,'
check_contains "report --all asks for every sandbox" "$(last_request)" '"sandbox": ""'
c report missing >/dev/null 2>"$tmp/err"; rc=$?
check_eq "report of a refused name exits 1" 1 "$rc"
check_eq "report says the daemon's reason" "corral: no sandbox named 'missing'" "$(cat "$tmp/err")"

tap_done
