#!/bin/sh
# The Python client (clients/python) against a real corrald: its own tests
# (pytest), one TAP line each.
# Sets up: the test bed; corrald in the test host; a workspace of uid 1000
# holding the bed's CA.
# Does: python3 -m pytest clients/python/tests, in the test host, with the
# socket, the CLI and the workspace in its environment.
# Expects: every test passes (the wire's tests need no daemon; the
# client's drive strict sandboxes through the shell, exec, files, denials,
# a resumed run and errors).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
/usr/bin/python3 -c 'import pytest' 2>/dev/null ||
	{ echo "1..0 # SKIP python3-pytest is not installed (tests/install-deps test)"; exit 0; }
corral_install_traps
tb_up >/dev/null || { echo "Bail out! no test bed"; exit 1; }

corral_up </dev/null
ws=$CORRAL_WS

# pytest's -rA summary: one "PASSED|FAILED|ERROR|SKIPPED name" line each.
out=$(cd "$top_srcdir/clients/python" && tb_exec_host env PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 \
	CORRAL_SOCKET="$CORRAL_SOCK" CORRAL_CLI="$top_builddir/corral" \
	CORRAL_TEST_WS="$ws" CORRAL_TEST_CA="$ws/ca.pem" \
	/usr/bin/python3 -m pytest -p no:cacheprovider -rA -q tests 2>&1)
echo "$out" | sed 's/^/# /'
results=$(echo "$out" | sed -n 's/^\(PASSED\|FAILED\|ERROR\|SKIPPED\) \(.*\)$/\1 \2/p')
[ -n "$results" ]
tap_result $? "pytest ran and listed its tests"
# A file, not a pipe: the loop must count in this shell.
printf '%s\n' "$results" >"$TB_DIR/pytest.results"
while read -r verdict name; do
	[ "$verdict" = PASSED ]
	tap_result $? "$name"
done <"$TB_DIR/pytest.results"
tap_done
