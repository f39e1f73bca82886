#!/bin/sh
# Binary rules against copies, in real sandboxes (corral-policy(5),
# "BINARIES"): an entry scoped to binaries matches only an executable the
# sandbox could not have written.
# Sets up: the test bed; corrald in the test host; a workspace owned by
# uid 1000 and a read-only root, both on the bed's disk (the disk of
# /usr's neighbours), holding copies of curl and sh named as strict's
# interpreters; sandbox sb (strict) on both.
# Does: runs curl as the system's /usr/bin/curl, and as copies named node
# and python3 in the workspace, in /tmp, in HOME and in the read-only root;
# python3 from a virtual environment (a link to the system's) and from one
# made with --copies; curl started by a copy of sh named python3, and by
# the system's python3.
# Expects: the system's binaries and the venv's link reach what strict
# lists for them; every copy is refused with 403 and binary_writable, in
# the answer, the ledger and the denials, and nothing of it reaches the
# fake internet.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

port=$(tb_free_port)
ws="$TB_DIR/folders/ws"
ro="$TB_DIR/folders/ref"
mkdir -p "$ws/bin" "$ro/bin"
cp "$(tb_ca_file)" "$ws/ca.pem"
cp /usr/bin/curl "$ws/bin/node"
cp /usr/bin/curl "$ro/bin/node"
cp /bin/sh "$ws/bin/python3"
chown -R 1000:1000 "$TB_DIR/folders"
chmod 0755 "$TB_DIR" "$TB_DIR/folders"
corral_config "$TB_DIR/corrald.yaml" <<YAML
host_proxy:
  listen: 127.0.0.1:$port
YAML
corral_start corrald "$TB_DIR/corrald.yaml" "$port"
sock="$TB_DIR/corrald.sock"
corral() { tb_exec_host "$top_builddir/corral" --socket "$sock" "$@"; }
ca="$ws/ca.pem"

out=$(corral sandbox create --root "$ws" --root "$ro:ro" --name sb 2>&1)
check_eq "a strict sandbox on the workspace and a read-only root starts" 0 "$?"

# refused_copy LABEL HOST BINARY...: BINARY reaching https://HOST/ is
# refused as a writable binary.
refused_copy() {
	_label=$1 _host=$2
	shift 2
	out=$(corral exec sb -- "$@" -sS --max-time 5 --cacert "$ca" -o /dev/null \
		-w '%{http_code}' "https://$_host/" 2>&1)
	check_contains "$_label is refused" "$out" "403"
}

code=$(corral exec sb -- /usr/bin/curl -sS --max-time 5 --cacert "$ca" -o /dev/null \
	-w '%{http_code}' https://github.com/zen 2>/dev/null)
check_eq "the system's curl reaches github.com, as strict lists it" 200 "$code"

refused_copy "curl copied to the workspace as bin/node, for the npm registry" \
	registry.npmjs.org "$ws/bin/node"
refused_copy "the same copy in /tmp" registry.npmjs.org \
	sh -c 'mkdir -p /tmp/bin && cp "$0" /tmp/bin/node && exec /tmp/bin/node "$@"' "$ws/bin/node"
refused_copy "the same copy in HOME" registry.npmjs.org \
	sh -c 'mkdir -p "$HOME/bin" && cp "$0" "$HOME/bin/node" && exec "$HOME/bin/node" "$@"' \
	"$ws/bin/node"
refused_copy "a copy in a read-only root (the user's folder all the same)" registry.npmjs.org \
	"$ro/bin/node"

# Virtual environments: the usual kind links to the system's interpreter.
py_get='import sys, urllib.request, ssl
ctx = ssl.create_default_context(cafile=sys.argv[2])
try:
    print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
except Exception as e:
    print("error", e)'
corral exec sb -- /usr/bin/python3 -m venv --without-pip "$ws/venv" >/dev/null 2>&1
corral exec sb -- /usr/bin/python3 -m venv --without-pip --copies "$ws/venv-copies" \
	>/dev/null 2>&1
out=$(corral exec sb -- "$ws/venv/bin/python3" -c "$py_get" https://pypi.org/ "$ca" 2>&1)
check_eq "a venv's python3 (a link to /usr/bin/python3) reaches pypi.org" 200 "$out"
out=$(corral exec sb -- "$ws/venv-copies/bin/python3" -c "$py_get" https://pypi.org/ "$ca" 2>&1)
check_contains "a venv made with --copies is refused" "$out" "403"

# Ancestors: a copy of sh named python3 does not lend python's entries to
# the system's curl it starts; the system's python3 does.
out=$(corral exec sb -- "$ws/bin/python3" -c \
	'/usr/bin/curl -sS --max-time 5 --cacert "$0" -o /dev/null -w "%{http_code}" https://pypi.org/
	exit $?' \
	"$ca" 2>&1)
check_contains "curl under a writable python3 is refused for pypi.org" "$out" "403"
out=$(corral exec sb -- /usr/bin/python3 -c 'import subprocess, sys
subprocess.run(["/usr/bin/curl", "-sS", "--max-time", "5", "--cacert", sys.argv[1], "-o",
    "/dev/null", "-w", "%{http_code}", "https://pypi.org/"])' "$ca" 2>&1)
check_eq "curl under the system's python3 reaches pypi.org" 200 "$out"

sleep 0.5
corral_ledger_has event=connect sandbox=sb host=registry.npmjs.org decision=deny \
	reason=binary_writable binary="$ws/bin/node"
check_eq "the ledger records the copy and binary_writable" 0 $?
corral_ledger_has event=connect sandbox=sb host=pypi.org decision=deny reason=binary_writable \
	binary=/usr/bin/curl
check_eq "and curl refused for its writable ancestor" 0 $?
corral_ledger_has event=connect sandbox=sb host=pypi.org decision=deny reason=binary_writable \
	binary="$ws/venv-copies/bin/python3"
check_eq "and the venv's copied python3" 0 $?
corral_ledger_has event=connect sandbox=sb host=pypi.org decision=allow binary=/usr/bin/python3.11
check_eq "and the venv's linked python3 allowed, as the system's interpreter" 0 $?
out=$(corral denials sb --json)
check_contains "denials give the reason" "$out" '"reason":"binary_writable"'

# Who and where, on every refusal: a refusal by host name names the binary
# and its pid; one of an address names the address.
corral exec sb -- /usr/bin/curl -sS --max-time 5 --cacert "$ca" https://example.com/ >/dev/null 2>&1
corral exec sb -- /usr/bin/curl -sS --max-time 5 --cacert "$ca" https://198.18.1.3/ >/dev/null 2>&1
corral exec sb -- /usr/bin/curl -sS --max-time 5 --noproxy '*' --cacert "$ca" \
	https://198.18.1.4/ >/dev/null 2>&1
sleep 0.5
check "a host refusal names curl and a pid" python3 -c "
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r['event'] == 'connect'
        and r['host'] == 'example.com' and r['reason'] == 'host_not_allowed']
assert recs and all(r['binary'] == '/usr/bin/curl' and isinstance(r['pid'], int) and r['pid'] > 1
                    for r in recs), recs" "$TB_DIR/log/egress.jsonl"
corral_ledger_has event=connect host=198.18.1.3 reason=ip_literal_not_allowed ip=198.18.1.3 \
	binary=/usr/bin/curl
check_eq "an address asked through the proxy is the refusal's ip" 0 $?
check "a transparent refusal names the address the sandbox dialled" python3 -c "
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r['event'] == 'connect'
        and r['ip'] == '198.18.1.4' and r['decision'] == 'deny']
assert recs and recs[-1]['binary'] == '/usr/bin/curl', recs" "$TB_DIR/log/egress.jsonl"
n=$(grep -c ' registry.npmjs.org ' "$(tb_http_log)")
check_eq "no refused copy reached the npm registry" 0 "$n"

# The ledger's run: a shell run's connections carry its request id, an
# exec's carry exec:PID; a refusal too.
corral run sb --id fetch-1 -- "curl -sS --max-time 5 --cacert $ca -o /dev/null https://github.com/zen; \
	curl -sS --max-time 5 --cacert $ca -o /dev/null https://example.com/" >/dev/null 2>&1
corral exec sb -- /usr/bin/curl -sS --max-time 5 --cacert "$ca" -o /dev/null \
	https://github.com/zen >/dev/null 2>&1
sleep 0.5
check "a run's allowed connection carries its run" corral_ledger_has \
	event=connect sandbox=sb host=github.com decision=allow run=fetch-1
check "and so does its refusal" corral_ledger_has \
	event=connect sandbox=sb host=example.com decision=deny run=fetch-1
check "an exec's connection names the exec" python3 -c "
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r['event'] == 'connect'
        and r['host'] == 'github.com' and (r['run'] or '').startswith('exec:')]
assert recs and recs[-1]['run'][len('exec:'):].isdigit(), recs" \
	"$TB_DIR/log/egress.jsonl"
tap_done
