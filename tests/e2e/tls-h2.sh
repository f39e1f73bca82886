#!/bin/sh
# HTTP/2 where the proxy terminates TLS (corral-policy(5), "TERMINATED
# ENDPOINTS"), against the test bed's nginx, which speaks h2.
# Sets up: the bed; corrald with egress.upstream_ca_file naming the bed's
# CA; a sandbox h2 with --secret gh, whose policy terminates
# api.github.com:443 with method and path rules and registry.npmjs.org:443
# with none, and passes github.com:443 through; nghttpd (nghttp2-server)
# on registry.npmjs.org:8446, answering each request at its HEADERS
# (--early-response), terminated too.
# Does: curl --http2 through CONNECT, several requests multiplexed on one
# connection with a refused one among them, nghttp (nghttp2's client)
# through the fence with streams at once, the secret's placeholder in a
# header toward its host and toward another, a host that echoes it back,
# a client that offers only HTTP/1.1; request bodies that end late.
# Expects: h2 on both sides (nginx logs HTTP/2.0); refused streams answered
# with the proxy's 403 while the others pass; the secret swapped in on h2
# as on HTTP/1.1, misuse refused, an echo never delivered; one request
# record per stream; HTTP/1.1 clients unchanged.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
command -v nghttp >/dev/null && command -v nghttpd >/dev/null ||
	{ echo "1..0 # SKIP nghttp or nghttpd is not installed (nghttp2-client, nghttp2-server: tests/install-deps test)"; exit 0; }
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

GH_REAL=gho_H2RealTokenNeverInside0123456789abcd
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
mkdir -p "$ws" && chown -R 1000:1000 "$ws" && chmod 0755 "$TB_DIR"

# An upstream that answers before a request's body ended.
mkdir -p "$TB_DIR/h2docs" && echo "early file" >"$TB_DIR/h2docs/file" &&
	tb_spawn_inet nghttpd nghttpd --early-response --address="$(tb_addr registry.npmjs.org)" \
		-d "$TB_DIR/h2docs" 8446 "$TB_DIR/pki/server.key" "$TB_DIR/pki/server.pem" &&
	tb_wait_listen inet 8446 || { echo "Bail out! no nghttpd"; exit 1; }

corral_file "$TB_DIR/h2.yaml" <<'YAML'
version: 1
network_policies:
  api:
    endpoints:
      - host: api.github.com
        port: 443
        tls: terminate
        rules:
          - {methods: [GET], paths: [/echo, /zen, /echo-auth, /]}
      - {host: registry.npmjs.org, port: 443, tls: terminate}
      - {host: registry.npmjs.org, port: 8446, tls: terminate}
    binaries: [{path: "/**"}]
  code:
    endpoints:
      - {host: github.com, port: 443}
    binaries: [{path: "/**"}]
YAML
GH_SECRET=$GH_REAL corral sandbox create --root "$ws" --name h2 --secret gh=env:GH_SECRET \
	--policy "$TB_DIR/h2.yaml" >/dev/null ||
	{ echo "Bail out! cannot create the sandbox"; exit 1; }
inside() { corral exec h2 -- "$@"; }
http_log=$(tb_http_log)
auth_log=$(tb_auth_log)
ledger=$TB_DIR/log/egress.jsonl

# --- h2 both ways, through CONNECT.
out=$(inside curl -sS --http2 --max-time 5 -w '%{http_version}' https://api.github.com/echo 2>&1)
check_eq "curl --http2 through CONNECT speaks h2 to the proxy" \
	"GET /echo host=api.github.com scheme=https
2" "$out"
check_contains "and the proxy speaks h2 to nginx" "$(cat "$http_log")" '"GET /echo HTTP/2.0" 200'

# --- Streams multiplexed on one connection, one refused among them.
before=$(grep -c '"GET /other' "$http_log")
out=$(inside curl -sS --http2 --max-time 5 --parallel \
	-w '%{http_code} %{num_connects} %{http_version}\n' -o /dev/null -o /dev/null -o /dev/null \
	https://api.github.com/zen https://api.github.com/other https://api.github.com/echo 2>/dev/null)
check_eq "three streams: two allowed, the one no rule names refused" "200 200 403" \
	"$(echo "$out" | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "on one connection" 1 "$(echo "$out" | awk '{ n += $2 } END { print n }')"
check_eq "all of them over HTTP/2" "2 2 2" "$(echo "$out" | awk '{ print $3 }' | tr '\n' ' ' |
	sed 's/ $//')"
check_eq "the refused stream never reached nginx" "$before" "$(grep -c '"GET /other' "$http_log")"
out=$(inside curl -sS --http2 --max-time 5 https://api.github.com/other 2>&1)
check_contains "its 403 is the proxy's JSON, naming why" "$out" '"reason":"path_not_allowed"'
code=$(inside curl -sS --http2 --max-time 5 -o /dev/null -w '%{http_code}' -X POST \
	-d x=1 https://api.github.com/echo 2>/dev/null)
check_eq "a method its rule does not name is refused on h2 too" 403 "$code"

# --- nghttp, nghttp2's own client: through the fence, streams at once.
out=$(inside nghttp -nas https://api.github.com/zen https://api.github.com/echo \
	https://api.github.com/ 2>&1)
check_contains "nghttp's streams pass through the fence (the transparent listener)" "$out" \
	"/echo"
check "with three responses of 200" [ "$(echo "$out" | grep -c ' 200 ')" -ge 3 ]
check_lacks "over the sandbox's CA, which nghttp trusts with no option" "$out" "verif"

# --- A secret over h2.
out=$(inside sh -c 'curl -sS --http2 --max-time 5 -H "Authorization: token $GH_TOKEN" https://api.github.com/echo' 2>&1)
check_eq "the placeholder in Authorization passes on h2" \
	"GET /echo host=api.github.com scheme=https" "$out"
check_contains "and nginx saw the real token, over HTTP/2" "$(cat "$auth_log")" \
	"api.github.com \"GET /echo HTTP/2.0\" 200 auth=[token $GH_REAL]"
out=$(inside sh -c 'curl -sS --http2 --max-time 5 -H "Authorization: token $GH_TOKEN" https://registry.npmjs.org/echo' 2>&1)
check_contains "toward another terminated host it is refused on its stream" "$out" \
	'"reason":"secret_misuse"'
out=$(inside sh -c 'curl -sS --http2 --max-time 5 -w "%{http_version}" --data-binary "token=$GH_TOKEN" https://registry.npmjs.org/echo' 2>&1)
check_contains "in a request body it is refused on its stream, before the body goes" "$out" \
	'"reason":"secret_misuse"'
check_contains "over HTTP/2" "$out" '}2'
check "the ledger names the stream's request and the secret" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert any(r["event"] == "request" and r["reason"] == "secret_misuse" and
           r["method"] == "POST" and r["host"] == "registry.npmjs.org" and
           r["secrets"] == "gh" for r in recs), recs' "$ledger"
# A stream's pseudo-headers go on as sent but :path, rewritten: a scheme
# other than https (a placeholder's hiding place) is refused.
out=$(inside nghttp -H ':scheme: http' https://registry.npmjs.org/echo 2>&1)
check_contains "a :scheme other than https is refused on its stream" "$out" \
	'"reason":"request_target_invalid"'
# A body that comes late: nginx answers before it ended, and its answer
# waits for that end (a placeholder may yet come); then it goes whole.
out=$(inside sh -c '(sleep 0.5; echo late) | curl -sS --http2 --max-time 5 -w " %{http_version}" --data-binary @- https://registry.npmjs.org/echo' 2>&1)
check_eq "an answer before a late body's end goes once the body ended, over h2" \
	"POST /echo host=registry.npmjs.org scheme=https
 2" "$out"
out=$(inside sh -c '(sleep 0.5; echo late) | curl -sS --http2 --max-time 5 -w " %{http_version}" --data-binary @- https://registry.npmjs.org:8446/file' 2>&1)
check_eq "an upstream that answers at the request's HEADERS is heard once its body ended" \
	"early file
 2" "$out"
out=$(inside sh -c '(sleep 0.5; echo "t=$GH_TOKEN") | curl -sS --http2 --max-time 5 --data-binary @- https://registry.npmjs.org:8446/file' 2>&1)
check_contains "but not when the body's end holds a placeholder: the stream is refused" \
	"$out" '"reason":"secret_misuse"'
check_lacks "and the upstream's early answer never reaches the sandbox" "$out" "early file"
out=$(inside sh -c '(sleep 0.5; echo late) | curl -sS --http1.1 --max-time 5 -w " %{http_version}" -T - https://registry.npmjs.org/echo' 2>&1)
check_eq "and over HTTP/1.1 (a chunked upload)" \
	"PUT /echo host=registry.npmjs.org scheme=https
 1.1" "$out"
out=$(inside sh -c 'curl -sS --http2 --max-time 5 -H "Authorization: token $GH_TOKEN" https://api.github.com/echo-auth' 2>&1)
check_lacks "a host echoing the value over h2 sends the sandbox none of it" "$out" "$GH_REAL"
check "the connection ended for it" corral_ledger_wait event=close reason=secret_echoed
check "each stream has its request record" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if "\"request\"" in l]
paths = [r["path"] for r in recs if r["event"] == "request"]
assert paths.count("/other") >= 2 and "/zen" in paths and "/echo" in paths, paths
assert any(r["secrets"] == "gh" for r in recs), recs' "$ledger"

# --- A client that offers HTTP/1.1 alone is unchanged.
out=$(inside curl -sS --http1.1 --max-time 5 -w '%{http_version}' https://api.github.com/echo 2>&1)
check_eq "an HTTP/1.1 client gets HTTP/1.1" "GET /echo host=api.github.com scheme=https
1.1" "$out"
check_contains "and so does nginx" "$(cat "$http_log")" '"GET /echo HTTP/1.1" 200'

corral sandbox delete h2 >/dev/null
tap_done
