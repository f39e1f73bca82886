#!/bin/sh
# Endpoints whose TLS the proxy terminates (corral-policy(5), "tls:
# terminate" and "rules"), against the test bed.
# Sets up: the bed; corrald with egress.upstream_ca_file naming the bed's CA;
# a sandbox tt whose policy terminates api.github.com:443 with method and
# path rules, passes github.com:443 through, and terminates
# example.com:8443, where a server with a certificate of no trusted CA
# answers (openssl s_server).
# Does: real curl inside, through CONNECT and through the fence, several
# requests on one connection, a refused path and method, plain HTTP to the
# terminated endpoint, the pass-through host, the rogue upstream.
# Expects: allowed requests reach nginx (which names what it got) over a
# leaf of the sandbox's own CA that curl trusts with no option (the bundle
# and its variables); refused ones get a 403 whose JSON names the reason
# and never reach nginx, the connection's other requests still pass; one
# request record each in the ledger and the refusals in denials; the
# pass-through host still shows the bed's own certificate; the rogue
# upstream is a 502 naming its certificate.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

ca=$(tb_ca_file)
port=$(tb_free_port)
corral_config "$TB_DIR/corrald.yaml" "upstream_ca_file: $ca" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
CORRAL_SOCK="$TB_DIR/corrald.sock"
corral() { corral_cli "$@"; }
ws=$TB_DIR/ws
mkdir -p "$ws" && cp "$ca" "$ws/ca.pem" && chown -R 1000:1000 "$ws" && chmod 0755 "$TB_DIR"

# The rogue upstream: example.com's address, port 8443, a self-signed leaf.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=example.com -addext subjectAltName=DNS:example.com \
	-keyout "$TB_DIR/rogue.key" -out "$TB_DIR/rogue.pem" >/dev/null 2>&1 &&
	chmod 0644 "$TB_DIR/rogue.key" &&
	tb_spawn_inet rogue openssl s_server -quiet -www -accept "$(tb_addr example.com):8443" \
		-cert "$TB_DIR/rogue.pem" -key "$TB_DIR/rogue.key" &&
	tb_wait_listen inet 8443 || { echo "Bail out! no rogue upstream"; exit 1; }

corral_file "$TB_DIR/tt.yaml" <<'YAML'
version: 1
network_policies:
  api:
    endpoints:
      - host: api.github.com
        port: 443
        tls: terminate
        rules:
          - {methods: [GET], paths: [/echo, /zen]}
          - {methods: [GET, POST], paths: ["/repos/acme/**"]}
    binaries: [{path: "/**"}]
  code:
    endpoints:
      - {host: github.com, port: 443}
    binaries: [{path: "/**"}]
  rogue:
    endpoints:
      - {host: example.com, port: 8443, tls: terminate}
    binaries: [{path: "/**"}]
YAML
corral sandbox create --root "$ws" --name tt >/dev/null &&
	corral policy set tt "$TB_DIR/tt.yaml" >/dev/null ||
	{ echo "Bail out! cannot create the sandbox"; exit 1; }
ledger=$TB_DIR/log/egress.jsonl
http_log=$(tb_http_log)
inside() { corral exec tt -- "$@"; }

# --- The trust bundle inside.
hosts=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
check_eq "the system's bundle inside is the host's and the sandbox's CA" "$((hosts + 1))" \
	"$(inside grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)"
check_eq "and so is the bundle the variables name" "$((hosts + 1))" \
	"$(inside sh -c 'grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE"')"
out=$(inside env)
for var in SSL_CERT_FILE REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS GIT_SSL_CAINFO CURL_CA_BUNDLE \
    PIP_CERT CARGO_HTTP_CAINFO AWS_CA_BUNDLE; do
	check_contains "$var names it" "$out" "$var=/run/corral/ca-bundle.pem"
done
inside sh -c 'echo x >> /etc/ssl/certs/ca-certificates.crt' >/dev/null 2>&1
check "the bundle cannot be changed from inside" [ "$?" -ne 0 ]

# --- Allowed requests, through CONNECT and through the fence.
out=$(inside curl -sS --max-time 5 https://api.github.com/echo 2>&1)
check_eq "an allowed GET reaches the upstream through CONNECT, with no option to curl" \
	"GET /echo host=api.github.com scheme=https" "$out"
out=$(inside curl -sS -v --max-time 5 -o /dev/null https://api.github.com/zen 2>&1)
check_contains "the sandbox sees a leaf of its own CA" "$out" "CN=corral sandbox tt"
out=$(inside curl -sS --max-time 5 --noproxy '*' https://api.github.com/echo 2>&1)
check_eq "and through the fence (the transparent listener) too" \
	"GET /echo host=api.github.com scheme=https" "$out"

# --- Refusals, on one connection with allowed requests around them.
before=$(grep -c ' "GET /other' "$http_log")
out=$(inside curl -sS --max-time 5 -w '\n%{http_code} %{num_connects}\n' \
	https://api.github.com/zen https://api.github.com/other https://api.github.com/echo 2>&1)
check_contains "the first request of the connection passes" "$out" "$TB_ZEN"
check_contains "a path no rule names gets 403" "$out" "403 0"
check_contains "whose JSON says why" "$out" '"reason":"path_not_allowed"'
check_contains "and names the method and path" "$out" '"path":"/other"'
check_contains "the next request on the same connection passes" "$out" \
	"GET /echo host=api.github.com scheme=https"
check_eq "the refused request never reached the upstream" "$before" \
	"$(grep -c ' "GET /other' "$http_log")"
code=$(inside curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X DELETE \
	https://api.github.com/repos/acme/app 2>/dev/null)
check_eq "a method its paths' rule does not name gets 403" 403 "$code"
code=$(inside curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
	https://api.github.com/repos/acme/%2e%2e/other 2>/dev/null)
check_eq "a path that decodes to another is refused" 403 "$code"
code=$(inside curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
	https://api.github.com/repos/acme/app 2>/dev/null)
check_eq "a path under an allowed one passes (nginx: no such file)" 404 "$code"
code=$(inside curl -sS --max-time 5 -o /dev/null -w '%{http_code}' --path-as-is \
	'https://api.github.com/repos/acme/..;/admin' 2>/dev/null)
check_eq "a path parameter some servers read as '..' is refused" 403 "$code"

sleep 0.5
check_eq "one request record per request of that connection" 3 "$(python3 - "$ledger" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
other = [r for r in recs if r["event"] == "request" and r["path"] == "/other"][-1]
print(sum(1 for r in recs if r["event"] == "request" and r["id"] == other["id"]))
PY
)"
check "the refused one: deny, its reason, method, path and the proxy's 403" corral_ledger_has \
	event=request decision=deny reason=path_not_allowed method=GET path=/other status=403 \
	sandbox=tt host=api.github.com
check "an allowed one: allow, no status of the proxy's" corral_ledger_has \
	event=request decision=allow method=GET path=/echo status=None policy=api
check "each connection has one close record at most" python3 -c "
import collections, json, sys
n = collections.Counter(json.loads(l)['id'] for l in open(sys.argv[1]) if '\"close\"' in l)
assert all(v == 1 for v in n.values()), n.most_common(3)
" "$ledger"
check "connect records are as before (no request fields)" python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
c = [r for r in recs if r['event'] == 'connect']
assert c and all('method' not in r for r in c), c[:1]
" "$ledger"
out=$(corral denials tt 2>&1)
check_contains "corral denials lists the refused path's reason" "$out" path_not_allowed
check_contains "and the refused method's" "$out" method_not_allowed

# --- A policy change closes a terminated connection: its requests were
# judged by the rules it opened under. The client, python's http.client
# straight (through the fence), waits for the change between two requests.
cat >"$ws/keep.py" <<'PY'
import http.client, os, ssl, sys, time
ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
c = http.client.HTTPSConnection("api.github.com", context=ctx, timeout=5)
c.request("GET", "/zen")
r = c.getresponse()
r.read()
print(r.status, flush=True)
open(sys.argv[1], "w").close()
for _ in range(100):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.05)
try:
    c.request("GET", "/zen")
    print(c.getresponse().status)
except (OSError, http.client.HTTPException):
    print("closed")
PY
chown 1000:1000 "$ws/keep.py"
inside /usr/bin/python3 "$ws/keep.py" "$ws/keep.first" "$ws/keep.changed" >"$TB_DIR/keep.out" 2>&1 &
keeper=$!
for _ in $(seq 100); do [ -e "$ws/keep.first" ] && break; sleep 0.05; done
corral policy set tt "$TB_DIR/tt.yaml" >/dev/null
touch "$ws/keep.changed"
wait "$keeper"
check_eq "a kept-alive terminated connection is closed by a policy change" "200
closed" "$(cat "$TB_DIR/keep.out")"
sleep 0.3
check "and its close record says why" corral_ledger_has event=close reason=policy_changed \
	sandbox=tt host=api.github.com

# --- What is not TLS to a terminated endpoint is refused.
out=$(inside curl -sS --max-time 5 http://api.github.com:443/echo 2>&1)
check_contains "plain HTTP to a terminated endpoint is refused" "$out" '"reason":"tls_required"'

# --- Pass-through stays pass-through.
out=$(inside curl -sS -v --max-time 5 --cacert "$ws/ca.pem" -o /dev/null https://github.com/zen 2>&1)
check_contains "a pass-through host shows its own certificate" "$out" "issuer: CN=corral test bed CA"
code=$(inside curl -sS --max-time 5 -o /dev/null -w '%{http_code}' https://github.com/zen 2>/dev/null)
check_eq "which the sandbox's bundle alone does not trust (nothing was swapped)" 000 "$code"

# --- An upstream whose certificate no trusted CA signed.
out=$(inside curl -sS --max-time 10 -w '\n%{http_code}' https://example.com:8443/ 2>&1)
check_contains "is a 502" "$out" "502"
check_contains "that names its certificate" "$out" '"reason":"upstream_certificate"'
sleep 0.3
check "and is recorded" corral_ledger_has event=request decision=deny \
	reason=upstream_certificate host=example.com status=502

# --- A policy that does not parse changes nothing.
corral_file "$TB_DIR/bad.yaml" <<'YAML'
version: 1
network_policies:
  api:
    endpoints:
      - {host: api.github.com, port: 443, rules: [{paths: [/x]}]}
    binaries: [{path: "/**"}]
YAML
out=$(corral policy set tt "$TB_DIR/bad.yaml" 2>&1)
check_contains "rules without tls: terminate are refused, with a reason" "$out" \
	"'rules' needs 'tls: terminate'"
code=$(inside curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
	https://api.github.com/other 2>/dev/null)
check_eq "and the rules in force stay" 403 "$code"

corral sandbox delete tt >/dev/null
tap_done
