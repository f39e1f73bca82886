#!/bin/sh
# The sandbox's own page: http://corral.internal/ from inside, served by
# its gateway (corral(1), "FROM INSIDE").
# Sets up: the test bed; corrald in the test host; sandboxes pa and pb
# (strict) on a workspace of uid 1000 holding the bed's CA.
# Does: from inside pa, a refused curl to example.com, then the page
# through the proxy (http_proxy) and straight (the DNS stub and the
# fence); a POST; dig of the name; the page from pb.
# Expects: the page is JSON with pa's refusal and a suggestion that names
# curl and the command that applies it; the name resolves to pa's gateway;
# a POST is refused (405); pb sees nothing of pa's; no request reached the
# fake internet and the ledger has no connection to the name. Then python3
# fetches from pypi.org and files.pythonhosted.org (as pip would), and
# `corral policy suggest` proposes both for python3, and --apply makes the
# retry pass.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

corral_up </dev/null
corral() { corral_cli "$@"; }
ws=$CORRAL_WS
corral sandbox create --root "$ws" --name pa >/dev/null &&
	corral sandbox create --root "$ws" --name pb >/dev/null ||
	{ echo "Bail out! cannot create the sandboxes"; exit 1; }
gwa=$(corral sandbox get pa --json |
	python3 -c "import json,sys; print(json.load(sys.stdin)['network']['gateway'])")
lines=$(wc -l <"$(tb_http_log)")

code=$(corral exec pa -- curl -sS --max-time 5 --cacert "$ws/ca.pem" -o /dev/null \
	-w '%{http_code}' https://example.com/ 2>/dev/null)
check_eq "under strict, example.com is refused" 000 "$code"

# page_check NAME JSON: the page names pa's refusal and the suggestion.
page_check() {
	check "$1" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['sandbox'] == 'pa', o
d = [x for x in o['denials'] if x['host'] == 'example.com' and x['port'] == 443]
assert d and d[0]['reason'] == 'host_not_allowed' and d[0]['binary'] == '/usr/bin/curl', o
s = [x for x in o['suggestions'] if x['add_endpoint'] == 'example.com:443']
assert s and s[0]['binary'] == '/usr/bin/curl' and s[0]['denials'] >= 1, o
assert s[0]['command'] == 'corral policy update pa --add-endpoint example.com:443 --binary /usr/bin/curl', s
assert s[0]['risk'] == 'this host and port, for this program only', s
" "$2"
}
out=$(corral exec pa -- curl -sS --max-time 5 http://corral.internal/ 2>&1)
page_check "through the proxy, the page lists the refusal and what would allow it" "$out"
out=$(corral exec pa -- curl -sS --max-time 5 --noproxy '*' http://corral.internal/denials 2>&1)
page_check "straight (the DNS stub and the fence), the same" "$out"
out=$(corral exec pa -- dig +short corral.internal 2>&1)
check_eq "corral.internal resolves to the sandbox's own gateway" "$gwa" "$out"
code=$(corral exec pa -- curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
	-X POST --data x http://corral.internal/ 2>/dev/null)
check_eq "the page is read-only: a POST is refused (405)" 405 "$code"
out=$(corral exec pb -- curl -sS --max-time 5 http://corral.internal/ 2>&1)
check "another sandbox's page is its own: nothing of pa's" python3 -c "
import json, sys
o = json.loads(sys.argv[1])
assert o['sandbox'] == 'pb' and o['denials'] == [] and o['suggestions'] == [], o" "$out"

new=$(tail -n +"$((lines + 1))" "$(tb_http_log)")
check_lacks "no request reached the fake internet" "$new" "corral.internal"
corral_ledger_has event=connect host=corral.internal
check_eq "and the ledger has no connection to the name" 1 $?
corral_ledger_has event=dns host=corral.internal
check_eq "nor a DNS refusal of it" 1 $?

# --- policy suggest, as after a refused pip install (strict lets python3
# reach the package index: pb's policy is made not to).
corral policy update pb --remove-endpoint pypi.org:443 \
	--remove-endpoint files.pythonhosted.org:443 >/dev/null
fetch='import sys, urllib.request
for u in sys.argv[1:]:
    try: print(urllib.request.urlopen(u, timeout=5).status)
    except Exception as e: print(type(e).__name__)'
corral exec pb -- env SSL_CERT_FILE="$ws/ca.pem" python3 -c "$fetch" \
	https://pypi.org/simple/ https://files.pythonhosted.org/ >"$TB_DIR/fetch1" 2>&1
check_lacks "python3's fetches are refused under strict" "$(cat "$TB_DIR/fetch1")" "200"
py=$(corral exec pb -- readlink -f /usr/bin/python3)
out=$(corral policy suggest pb --json)
check "suggest proposes pypi.org and files.pythonhosted.org for python3, two exact entries" \
	python3 -c "
import json, sys
s = {(x['add_endpoint'], x['binary'], x['wildcard']) for x in json.loads(sys.argv[1])}
want = {('pypi.org:443', sys.argv[2], False), ('files.pythonhosted.org:443', sys.argv[2], False)}
assert want <= s, (s, want)" "$out" "$py"
out=$(corral policy suggest pb)
check_contains "in text, with the command that applies it" "$out" \
	"corral policy update pb --add-endpoint pypi.org:443 --binary $py"
out=$(corral policy suggest pb --apply --json)
check_contains "--apply says each was applied" "$out" '"applied":true'
corral exec pb -- env SSL_CERT_FILE="$ws/ca.pem" python3 -c "$fetch" \
	https://pypi.org/simple/ https://files.pythonhosted.org/ >"$TB_DIR/fetch2" 2>&1
check_lacks "after --apply, python3's retry reaches both (no refusal)" "$(cat "$TB_DIR/fetch2")" \
	"URLError"
check_contains "... and curl of the same host is still refused: the binary was kept" \
	"$(corral exec pb -- curl -sS --max-time 5 --cacert "$ws/ca.pem" https://pypi.org/ 2>&1)" "403"
out=$(corral policy suggest no-such-sandbox 2>&1)
check_eq "suggest for an unknown sandbox exits 3 (not found)" 3 "$?"

corral sandbox delete pa >/dev/null
corral sandbox delete pb >/dev/null
tap_done
