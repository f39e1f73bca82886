#!/bin/sh
# WebSocket through an endpoint whose TLS the proxy terminates
# (corral-policy(5), "tls: terminate"; corral(1), "--secret").
# Sets up: the bed; a WebSocket server over TLS (python3-websockets,
# tests/e2e/lib/wsecho.py) on example.com:8445 and www.example.com:8445
# (one address); corrald with the bed's CA for upstreams and a secret ws of
# corrald.yaml for example.com:8445; a sandbox whose policy terminates both
# names, with a path rule on example.com.
# Does: a WebSocket client inside (tests/e2e/lib/wsclient.py, through the
# fence) opens a socket with the placeholder in Authorization, echoes a text
# and 200 KiB of bytes; a path no rule names; a host that sends the
# credential back; an upgrade other than WebSocket's.
# Expects: the upgrade is judged and recorded as a request, then the bytes
# are relayed both ways unchanged; the server got the real token and,
# toward the secret's host, no compression offered (an echoed value is
# searched in plain frames), toward the other host the client's offer as
# it was; the refused path is a 403 to the handshake; the echoed credential
# never reaches the sandbox (secret_echoed); another upgrade is refused
# (upgrade_not_allowed).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
/usr/bin/python3 -c 'import websockets' 2>/dev/null ||
	{ echo "1..0 # SKIP python3-websockets is not installed (tests/install-deps test)"; exit 0; }
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

WS_REAL=wsk_WebSocketRealTokenNeverInside0123456789
ca=$(tb_ca_file)
port=$(tb_free_port)
corral_config "$TB_DIR/corrald.yaml" "upstream_ca_file: $ca" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
secrets:
  - name: ws
    from: env:CORRAL_TEST_WS
    hosts: [example.com:8445]
    env: [WS_TOKEN]
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
CORRAL_SOCK="$TB_DIR/corrald.sock"
corral() { corral_cli "$@"; }
ws=$TB_DIR/ws
mkdir -p "$ws" && cp "$top_srcdir/tests/e2e/lib/wsclient.py" "$ws/" &&
	chown -R 1000:1000 "$ws" && chmod 0755 "$TB_DIR"

ws_log=$TB_DIR/wsecho.log
: >"$ws_log"
tb_spawn_inet wsecho /usr/bin/python3 "$top_srcdir/tests/e2e/lib/wsecho.py" \
	"$(tb_addr example.com)" 8445 "$TB_DIR/pki/server.pem" "$TB_DIR/pki/server.key" "$ws_log" &&
	tb_wait_listen inet 8445 || { echo "Bail out! no WebSocket server"; exit 1; }

corral_file "$TB_DIR/wst.yaml" <<'YAML'
version: 1
network_policies:
  sockets:
    endpoints:
      - host: example.com
        port: 8445
        tls: terminate
        rules:
          - {methods: [GET], paths: [/echo, /tell-auth]}
      - {host: www.example.com, port: 8445, tls: terminate}
    binaries: [{path: "/**"}]
YAML
CORRAL_TEST_WS=$WS_REAL corral sandbox create --root "$ws" --name wst --secret ws \
	--policy "$TB_DIR/wst.yaml" >/dev/null ||
	{ echo "Bail out! cannot create the sandbox"; exit 1; }
inside() { corral exec wst -- "$@"; }
client() { inside /usr/bin/python3 "$ws/wsclient.py" "$@" 2>&1; }
ledger=$TB_DIR/log/egress.jsonl

# --- A socket through the terminated endpoint, with the secret.
out=$(client echo wss://example.com:8445/echo)
check_contains "a text goes there and back" "$out" "hello"
check_contains "and 200 KiB of bytes, unchanged" "$out" "bulk ok"
check_contains "the server got the real token in the upgrade request" "$(cat "$ws_log")" \
	"/echo auth=[Bearer $WS_REAL] ext=[]"
check_lacks "toward the secret's host no compression was offered" "$(grep '^/echo' "$ws_log")" \
	"deflate"
check "the upgrade is recorded as a request, naming the secret" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert any(r["event"] == "request" and r["host"] == "example.com" and r["path"] == "/echo" and
           r["secrets"] == "ws" and r["decision"] == "allow" for r in recs), recs' "$ledger"

# --- What the search holds back does not depend on the value: a text
# that begins it comes back as any other does (held, it would tell the
# sandbox, a byte at a time, which texts begin the value).
prefix=$(printf '%s' "$WS_REAL" | cut -c1-12)
check_eq "a text that begins the real value comes back" "$prefix" \
	"$(client say wss://example.com:8445/echo "$prefix")"
check_eq "as one that does not" "wsk_Xyzzy012" \
	"$(client say wss://example.com:8445/echo wsk_Xyzzy012)"

# --- Another terminated host, no secret: the client's offer as it was.
: >"$ws_log"
out=$(inside env -u WS_TOKEN /usr/bin/python3 "$ws/wsclient.py" echo \
	wss://www.example.com:8445/other 2>&1)
check_contains "a host no secret goes to echoes too" "$out" "bulk ok"
check_contains "with the compression both ends agreed" "$out" "permessage-deflate"

# --- Refusals.
out=$(client status wss://example.com:8445/admin)
check_eq "a path no rule names refuses the upgrade" "status 403" "$out"
check "recorded with its reason" corral_ledger_wait event=request path=/admin \
	reason=path_not_allowed
out=$(client tell wss://example.com:8445/tell-auth)
check_lacks "a server sending the credential back sends the sandbox none of it" "$out" \
	"$WS_REAL"
check "the connection ended for it" corral_ledger_wait event=close host=example.com \
	reason=secret_echoed
out=$(inside curl -sS --max-time 5 -H 'Connection: Upgrade' -H 'Upgrade: h2c' \
	https://example.com:8445/echo 2>&1)
check_contains "an upgrade other than WebSocket's is refused" "$out" \
	'"reason":"upgrade_not_allowed"'

corral sandbox delete wst >/dev/null
tap_done
