#!/bin/sh
# Secrets that never enter the sandbox (corral(1), "--secret"), against the
# test bed.
# Sets up: the bed; corrald with egress.upstream_ca_file naming the bed's
# CA and a secret of its corrald.yaml (npm, from an environment variable,
# for registry.npmjs.org:443 in NPM_TOKEN); a home holding gh's hosts.yml
# with a token; nginx asking Basic credentials whose password is that
# token for a git repository under /private/; a strict sandbox with
# --secret gh and --secret npm.
# Does: real curl and git inside, with the placeholders the sandbox holds;
# sends a placeholder where it may not go (another terminated host, plain
# HTTP, a CONNECT head); asks a host to echo the value back; searches the
# sandbox's environment, files and processes, and corrald's state, logs,
# registry and ledger, for the real values; tries the ways the CLI must
# refuse a secret.
# Expects: the bed's servers see the real values (a header, a Basic
# credential that git sends); inside, only placeholders of the same shape;
# every misuse refused with secret_misuse, in the ledger and in denials,
# and never sent on; an echo never reaches the sandbox; no real value in
# any file, variable or process inside, nor in anything corrald writes;
# sandbox get lists each secret's name and hosts, never a value.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

GH_REAL=gho_R3alT0kenNeverInside0123456789abcd
NPM_REAL=npm_AlsoReal0nlyInTheBroker9876543210xy
SYM_REAL='sym+Real/Value=With+Symbols/0123456789'
ca=$(tb_ca_file)
port=$(tb_free_port)
corral_config "$TB_DIR/corrald.yaml" "upstream_ca_file: $ca" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
secrets:
  - name: npm
    from: env:CORRAL_TEST_NPM
    hosts: [registry.npmjs.org:443]
    env: [NPM_TOKEN]
    query: [token]
  - name: sym
    from: env:CORRAL_TEST_SYM
    hosts: [registry.npmjs.org:443]
    env: [SYM_TOKEN]
    query: [key]
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
CORRAL_SOCK="$TB_DIR/corrald.sock"
corral() { corral_cli "$@"; }
ws=$TB_DIR/ws
home=$TB_DIR/home
mkdir -p "$ws" "$home/.config/gh"
cat >"$home/.config/gh/hosts.yml" <<YAML
github.com:
    user: octo
    oauth_token: $GH_REAL
    git_protocol: https
YAML
chown -R 1000:1000 "$ws" && chmod 0755 "$TB_DIR"

# A repository that only the real token opens, over git's HTTP protocol.
git init -q --bare "$TB_DIR/www/private/acme/app.git" &&
	git -C "$TB_DIR" -c init.defaultBranch=main init -q src &&
	echo "the private readme" >"$TB_DIR/src/README" &&
	git -C "$TB_DIR/src" add README &&
	git -C "$TB_DIR/src" -c user.name=t -c user.email=t@example.com commit -q -m one &&
	git -C "$TB_DIR/src" push -q "$TB_DIR/www/private/acme/app.git" HEAD:main &&
	git -C "$TB_DIR/www/private/acme/app.git" symbolic-ref HEAD refs/heads/main &&
	git -C "$TB_DIR/www/private/acme/app.git" update-server-info &&
	chmod -R a+rX "$TB_DIR/www" &&
	printf 'x-access-token:{PLAIN}%s\n' "$GH_REAL" >"$TB_DIR/nginx/htpasswd" &&
	chmod 0644 "$TB_DIR/nginx/htpasswd" || { echo "Bail out! no repository"; exit 1; }

# --- The CLI refuses what cannot be a secret, before anything is made.
out=$(CORRAL_TEST_NPM=$NPM_REAL corral sandbox create --root "$ws" --secret nope 2>&1)
check_contains "an unknown secret is refused, naming the known ones" "$out" \
	"unknown secret 'nope' (known: gh, npm, sym)"
out=$(corral sandbox create --root "$ws" --secret npm 2>&1)
check_contains "a source that is not there is refused" "$out" \
	"--secret npm: the variable CORRAL_TEST_NPM is not set"
out=$(CORRAL_TEST_NPM='two words, no token' corral sandbox create --root "$ws" --secret npm 2>&1)
check_contains "a value that is not one word of printable ASCII is refused" "$out" \
	"not printable ASCII"
out=$(corral sandbox create --root "$ws" --home "$home" --secret gh --grant gh 2>&1)
check_contains "--secret gh with --grant gh is refused (the grant copies the token in)" "$out" \
	"give one of them"
out=$(corral sandbox create --root "$ws" --secret gh=file:/nonexistent/token 2>&1)
check_contains "an unreadable file source is refused, naming it" "$out" \
	"cannot read /nonexistent/token"
check_eq "none of them made a sandbox" "" "$(corral sandbox list | tail -n +2)"

# --- A strict sandbox with gh's token and the configuration's npm token.
CORRAL_TEST_NPM=$NPM_REAL CORRAL_TEST_SYM=$SYM_REAL corral sandbox create --root "$ws" \
	--home "$home" --name sec --secret gh --secret npm --secret sym >/dev/null ||
	{ echo "Bail out! cannot create the sandbox"; exit 1; }
inside() { corral exec sec -- "$@"; }
ledger=$TB_DIR/log/egress.jsonl
auth_log=$(tb_auth_log)

json=$(corral sandbox get sec --json)
check "sandbox get --json lists gh with its hosts" python3 -c '
import json, sys
s = {x["name"]: x for x in json.loads(sys.argv[1])["secrets"]}
assert s["gh"]["hosts"] == ["api.github.com:443", "github.com:443"], s
assert s["gh"]["env"] == ["GH_TOKEN"], s
assert s["npm"]["hosts"] == ["registry.npmjs.org:443"], s
assert s["npm"]["env"] == ["NPM_TOKEN"], s' "$json"
check_lacks "and never a value" "$json" "$GH_REAL"
check_lacks "of either" "$json" "$NPM_REAL"

ph=$(inside printenv GH_TOKEN)
check "GH_TOKEN inside is a placeholder of the token's shape" sh -c \
	'case "$1" in gho_*) [ "$1" != "$2" ] && [ ${#1} -eq ${#2} ] ;; *) false ;; esac' _ "$ph" "$GH_REAL"
check_contains "gh's hosts.yml inside holds it" \
	"$(inside sh -c 'cat "$HOME/.config/gh/hosts.yml"')" "oauth_token: $ph"
check_eq "GH_CONFIG_DIR names that copy" "$(inside sh -c 'echo "$HOME/.config/gh"')" \
	"$(inside printenv GH_CONFIG_DIR)"
check_contains ".netrc holds it for HTTPS git" "$(inside sh -c 'cat "$HOME/.netrc"')" \
	"machine github.com login x-access-token password $ph"
nph=$(inside printenv NPM_TOKEN)
check "NPM_TOKEN inside is a placeholder" sh -c \
	'case "$1" in npm_*) [ "$1" != "$2" ] ;; *) false ;; esac' _ "$nph" "$NPM_REAL"

# --- The real value goes where it may, and only there.
out=$(inside sh -c 'curl -sS --max-time 5 -H "Authorization: token $GH_TOKEN" https://api.github.com/echo' 2>&1)
check_eq "curl with \$GH_TOKEN reaches api.github.com" \
	"GET /echo host=api.github.com scheme=https" "$out"
check_contains "which saw the real token" "$(cat "$auth_log")" \
	" 200 auth=[token $GH_REAL]"
out=$(inside sh -c 'cd /tmp && git clone -q https://github.com/private/acme/app.git && cat app/README' 2>&1)
check_eq "git clone over HTTPS opens the repository only the real token opens" \
	"the private readme" "$out"
check_contains "nginx got the token as git's Basic password" "$(cat "$auth_log")" \
	"auth=[Basic $(printf 'x-access-token:%s' "$GH_REAL" | base64 -w0)]"
out=$(inside sh -c 'curl -sS --max-time 5 -H "Authorization: Bearer $NPM_TOKEN" https://registry.npmjs.org/echo' 2>&1)
check_eq "the configuration's secret reaches its host" \
	"GET /echo host=registry.npmjs.org scheme=https" "$out"
check_contains "with its real value" "$(cat "$auth_log")" "auth=[Bearer $NPM_REAL]"
http_log=$(tb_http_log)
inside sh -c 'curl -sS --max-time 5 --http1.1 -o /dev/null "https://registry.npmjs.org/q1?a=1&token=$NPM_TOKEN"' >/dev/null 2>&1
check_contains "a query parameter the secret names takes its value" "$(cat "$http_log")" \
	"\"GET /q1?a=1&token=$NPM_REAL HTTP/1.1\""
inside sh -c 'curl -sS --max-time 5 --http2 -o /dev/null "https://registry.npmjs.org/q2?token=$NPM_TOKEN"' >/dev/null 2>&1
check_contains "over HTTP/2 too" "$(cat "$http_log")" "\"GET /q2?token=$NPM_REAL HTTP/2.0\""
out=$(inside sh -c 'curl -sS --max-time 5 "https://registry.npmjs.org/q3?t=$NPM_TOKEN"' 2>&1)
check_contains "another parameter is misuse" "$out" '"reason":"secret_misuse"'
# A value with symbols goes into a query percent-encoded; an upstream that
# echoes its request line sends that form back, which is searched too.
sym_enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' \
	"$SYM_REAL")
ph_enc=$(inside python3 -c 'import os, urllib.parse
print(urllib.parse.quote(os.environ["SYM_TOKEN"], safe=""))')
inside curl -sS --max-time 5 --http1.1 -o /dev/null "https://registry.npmjs.org/q4?key=$ph_enc" \
	>/dev/null 2>&1
check_contains "a value with symbols goes into the query percent-encoded" "$(cat "$http_log")" \
	"\"GET /q4?key=$sym_enc HTTP/1.1\""
out=$(inside curl -sS --max-time 5 "https://registry.npmjs.org/echo?key=$ph_enc" 2>&1)
check_lacks "an upstream echoing that request line sends the sandbox none of it" "$out" "$sym_enc"
check "the connection ended for it" corral_ledger_wait event=close host=registry.npmjs.org \
	reason=secret_echoed
check "the ledger keeps the placeholder's request line, never the value" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
paths = [r["path"] for r in recs if r["event"] == "request" and r["secrets"] == "npm"]
assert any(p.startswith("/q1?a=1&token=") for p in paths), paths
assert not any(sys.argv[2] in p for p in paths), paths' "$ledger" "$NPM_REAL"
check "the ledger records the use of each, by name" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
used = {(r["host"], r["path"], r["secrets"]) for r in recs if r["event"] == "request"}
assert ("api.github.com", "/echo", "gh") in used, used
assert ("registry.npmjs.org", "/echo", "npm") in used, used' "$ledger"

# --- Misuse.
before=$(grep -c "" "$auth_log")
code=$(inside sh -c 'curl -sS --max-time 5 -o /dev/null -w "%{http_code}" -H "Authorization: token $GH_TOKEN" https://registry.npmjs.org/echo' 2>/dev/null)
check_eq "gh's placeholder sent to another terminated host is refused" 403 "$code"
out=$(inside sh -c 'curl -sS --max-time 5 -H "Authorization: token $GH_TOKEN" https://registry.npmjs.org/echo' 2>&1)
check_contains "with a reason naming the misuse" "$out" '"reason":"secret_misuse"'
out=$(inside sh -c 'curl -sS --max-time 5 -H "X-Token: $GH_TOKEN" https://api.github.com/echo' 2>&1)
check_contains "in a header it may not go in, toward its own host, too" "$out" \
	'"reason":"secret_misuse"'
out=$(inside sh -c 'curl -sS --max-time 5 "https://api.github.com/echo?t=$GH_TOKEN"' 2>&1)
check_contains "and in the query" "$out" '"reason":"secret_misuse"'
code=$(inside sh -c 'curl -sS --max-time 5 -o /dev/null -w "%{http_code}" -H "Authorization: token $GH_TOKEN" http://example.com/' 2>/dev/null)
check_eq "in a plain HTTP request the proxy reads, refused" 403 "$code"
code=$(inside sh -c 'curl -sS --max-time 5 -o /dev/null -w "%{http_code}" --proxy-header "Proxy-Authorization: Bearer $GH_TOKEN" https://pypi.org/' 2>/dev/null)
check "in a CONNECT head toward a pass-through host, refused" [ "$code" != 200 ]
check_eq "none of them reached a server" "$before" "$(grep -c "" "$auth_log")"
out=$(inside sh -c 'curl -sS --max-time 5 --data-binary "token=$GH_TOKEN" https://registry.npmjs.org/echo' 2>&1)
check_contains "in a request body toward another host, refused before the body goes" "$out" \
	'"reason":"secret_misuse"'
out=$(inside sh -c 'curl -sS --max-time 5 -H "Authorization: token $GH_TOKEN" --data-binary "note=$GH_TOKEN" https://api.github.com/echo' 2>&1)
check_contains "and toward its own host: a body is never rewritten" "$out" \
	'"reason":"secret_misuse"'
check "the ledger names the request and the secret" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mis = [(r["host"], r["method"], r["path"], r["secrets"]) for r in recs
       if r["event"] == "request" and r["reason"] == "secret_misuse"]
assert ("registry.npmjs.org", "POST", "/echo", "gh") in mis, mis
assert ("api.github.com", "POST", "/echo", "gh") in mis, mis' "$ledger"
inside sh -c 'getent hosts "$GH_TOKEN.github.com"' >/dev/null 2>&1
check "a placeholder in a DNS name is refused too, as secret_misuse" corral_ledger_wait \
	event=dns reason=secret_misuse
check "the ledger records each as secret_misuse" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mis = [r for r in recs if r["reason"] == "secret_misuse"]
assert len(mis) >= 5, mis
assert any(r["event"] == "request" and r["secrets"] == "gh" for r in mis), mis
assert any(r["event"] == "connect" and r["host"] == "example.com" for r in mis), mis' "$ledger"
check_contains "and denials lists the misuse" "$(corral denials sec)" "secret_misuse"

# --- An echo of the value never reaches the sandbox.
out=$(inside sh -c 'curl -sS --max-time 5 -H "Authorization: token $GH_TOKEN" https://api.github.com/echo-auth' 2>&1)
check_lacks "a host that echoes the value back sends the sandbox none of it" "$out" \
	"$GH_REAL"
check "the ledger says why the connection ended" corral_ledger_wait event=close \
	reason=secret_echoed host=api.github.com

# The sandbox paces the upstream through HTTP/2's windows: it takes all
# but a few bytes of the proxy's window toward api.github.com, asks for the
# echo (only its first bytes can come), waits past the hold, then opens
# its windows. What was held must not go on by the clock; the rest, once
# it comes, ends the connection. SPARE 30: the first 19 characters of the
# value could come; 48 and every padding stream ended upstream: all but
# the last (the upstream's window then comes back only from them).
cp "$top_srcdir/tests/e2e/lib/h2window.py" "$ws/h2window.py"
chown 1000:1000 "$ws/h2window.py"
echoed_before=$(grep -c '"reason":"secret_echoed"' "$ledger")
for spare in 30 48; do
	ranged=
	[ "$spare" = 48 ] && ranged=--ranged
	out=$(inside sh -c "python3 $ws/h2window.py api.github.com $spare /echo-auth \
		authorization \"token \$GH_TOKEN\" $ranged" 2>&1)
	echo "$out" | sed 's/^/# /'
	check_contains "h2, $spare bytes of the upstream's window left: the client ran" \
		"$out" "pieces:"
	check_lacks "and not one of the value's characters past its prefix reached it" \
		"$out" "R3alT0k"
done
# The window given back timed to the hold's end (microseconds around it):
# the hold counts only from when the upstream has had the window.
leaked=
for offset in -200 -50 0 100; do
	out=$(inside sh -c "python3 $ws/h2window.py api.github.com 48 /echo-auth \
		authorization \"token \$GH_TOKEN\" --trigger $offset" 2>&1)
	echo "$out" | sed "s/^/# $offset us: /"
	case $out in
	*pieces:*R3alT0k*) leaked="$leaked $offset" ;;
	*pieces:*) ;;
	*) leaked="$leaked $offset(did not run)" ;;
	esac
done
check_eq "h2, the window given back as the hold ends: no character past the prefix" \
	"" "$leaked"
echoed_after=$(grep -c '"reason":"secret_echoed"' "$ledger")
check_eq "the rest, once it came, ended each connection (secret_echoed)" \
	$((echoed_before + 6)) "$echoed_after"

# h1_unread KIND: over HTTP/1.1 to api.github.com, through the proxy, a
# sandbox that reads nothing: KIND big asks for /big 20 times at once and
# waits 3 s; KIND refused sends up to 20 MB of requests the proxy answers
# itself (a 403 host_mismatch each), for at most 10 s.
h1_unread() {
	inside python3 -c '
import os, socket, ssl, sys, time
proxy = os.environ["HTTPS_PROXY"].split("//", 1)[1].rstrip("/")
host, port = proxy.rsplit(":", 1)
raw = socket.create_connection((host, int(port)), timeout=10)
raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
raw.sendall(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    head += raw.recv(1)
ctx = ssl.create_default_context()
ctx.set_alpn_protocols(["http/1.1"])
tls = ctx.wrap_socket(raw, server_hostname="api.github.com")
if sys.argv[1] == "big":
    tls.sendall(b"GET /big HTTP/1.1\r\nHost: api.github.com\r\n\r\n" * 20)
    time.sleep(3)
    sys.exit(0)
tls.settimeout(3)
one = b"GET /" + b"a" * 200 + b" HTTP/1.1\r\nHost: evil.example\r\n\r\n"
sent, deadline = 0, time.time() + 10
try:
    while sent < 20000000 and time.time() < deadline:
        tls.sendall(one * 400)
        sent += len(one) * 400
except OSError:
    pass
' "$1" >/dev/null 2>&1
}

# A sandbox that asks for 20 MiB and reads none of it: the proxy stops
# reading the upstream (its buffers are bounded), as the hold's rule for
# HTTP/1.1 assumes. It read all 20 MiB before.
h1_unread big
check "the proxy read a few MiB of the 20 the sandbox did not read" python3 -c '
import json, sys
ends = [r for r in map(json.loads, open(sys.argv[1])) if r["event"] == "close" and
        r["host"] == "api.github.com" and r["reason"] == "sandbox_closed"]
assert ends, "no close record"
assert ends[-1]["bytes_down"] < 8 * 1048576, ends[-1]["bytes_down"]' "$ledger"

# And 20 MB of pipelined requests the proxy answers itself, none of the
# answers read: it stops reading the sandbox once its answers wait (it
# answered every one, 700 bytes for 250, before).
mismatched_before=$(grep -c '"reason":"host_mismatch"' "$ledger")
h1_unread refused
mismatched=$(( $(grep -c '"reason":"host_mismatch"' "$ledger") - mismatched_before ))
echo "# answered: $mismatched"
check "the proxy answered a few thousand of them, not all" test "$mismatched" -lt 20000

# --- Nowhere inside, nowhere corrald writes.
out=$(inside sh -c 'cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n"; grep -rs "" "$HOME" /tmp /run 2>/dev/null' 2>&1)
check_contains "the search inside reads the placeholders" "$out" "$ph"
check_lacks "but no process's environment and no file inside holds the real token" \
	"$out" "$GH_REAL"
check_lacks "nor the npm value" "$out" "$NPM_REAL"
check_eq "a run of the persistent shell sees the placeholder, as every command does" "$ph" \
	"$(corral run sec -- 'echo $GH_TOKEN')"
found=$(grep -rl -e "$GH_REAL" -e "$NPM_REAL" "$TB_DIR/state" "$TB_DIR/log" 2>/dev/null |
	grep -v "/log/nginx" | head -3)
check_eq "nothing corrald wrote (state, registry, ledger, logs) holds a real value" "" "$found"

# The broker: this bed's corrald (it runs as the user corral; its monitor
# is its child). Not by name: beds of other tests run beside this one.
broker=$(tb_pid corrald)
check_eq "the broker holds each value once, in the sandbox's locked memory" "1 1" \
	"$(python3 "$top_srcdir/tests/e2e/lib/memscan.py" "$broker" "$GH_REAL" "$NPM_REAL" | tr '\n' ' ' |
	sed 's/ $//')"
if grep -q libasan "/proc/$broker/maps"; then
	tap_skip "and that memory is locked" "an ASan build: ASan makes mlock do nothing"
else
	check "and that memory is locked" sh -c 'awk "/^VmLck:/ { exit !(\$2 > 0) }" "/proc/$1/status"' _ \
		"$broker"
fi
corral sandbox delete sec >/dev/null
check_eq "the sandbox's copies go with it" "" \
	"$(grep -rl "$GH_REAL" "$TB_DIR/state" 2>/dev/null)"
check_eq "and no copy of either value is left in the broker's memory" "0 0" \
	"$(python3 "$top_srcdir/tests/e2e/lib/memscan.py" "$broker" "$GH_REAL" "$NPM_REAL" | tr '\n' ' ' |
	sed 's/ $//')"
tap_done
