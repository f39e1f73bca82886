#!/bin/sh
# The process boundaries hold by includes (tests/layout/check-includes):
# the real tree passes, and in a made-up tree each kind of forbidden
# include is named, while the allowed ones pass.
. "$top_srcdir/tests/lib/tap.sh"
check=$top_srcdir/tests/layout/check-includes
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT

out=$("$check" "$top_srcdir" 2>&1)
check_eq "the tree keeps its boundaries" "" "$out"

# put FILE LINE...: writes a source file of the made-up tree.
put() {
	f=$fake/$1; shift
	mkdir -p "$(dirname "$f")"
	printf '%s\n' "$@" >"$f"
}

# forbidden NAME FILE HEADER: FILE including HEADER is named, and fails.
forbidden() {
	rm -rf "${fake:?}"/*
	put "$2" "#include \"config.h\"" "#include \"common/log.h\"" "#include \"$3\""
	if out=$("$check" "$fake" 2>&1); then
		tap_result 1 "$1" "check-includes passed a tree where $2 includes $3"
	else
		check_contains "$1" "$out" "$2:3: includes $3"
	fi
}

forbidden "the monitor may not include the broker's headers" \
	broker/monitor/privop.c broker/sandbox.h
forbidden "the monitor may not include the CLI's headers" \
	broker/monitor/spawn.c broker/cli/client.h
forbidden "the monitor may not include the proxy's headers" \
	broker/monitor/privop.c egress-proxy/identify.h
forbidden "corral-init may not include the broker's headers" \
	broker/init/corral-init.c broker/exec.h
forbidden "corral-init may not include the monitor's headers" \
	broker/init/mounts.c broker/monitor/monitor-wire.h
forbidden "corral-init may not include policy/" \
	broker/init/fsop.c policy/guard.h
forbidden "the broker may not include the monitor's closed list" \
	broker/sandbox.c broker/monitor/privop.h
forbidden "the broker may not include the monitor's modules" \
	broker/daemon.c broker/monitor/cgroup.h
forbidden "the broker may not include corral-init's headers" \
	broker/api-fs.c broker/init/fsop.h
forbidden "the broker may not include the CLI's headers" \
	broker/api.c broker/cli/cli.h
forbidden "the CLI may not include the broker's headers" \
	broker/cli/cli-sandbox.c broker/sandbox.h
forbidden "the CLI may not include the proxy's headers" \
	broker/cli/cli-run.c egress-proxy/proxy.h
forbidden "policy/ may not include the broker's headers" \
	policy/render.c broker/conf.h
forbidden "policy/ may not include the proxy's headers" \
	policy/match.c egress-proxy/addr.h
forbidden "common/ may not include policy/" \
	common/json.c policy/policy.h
forbidden "common/ may not include the broker's headers" \
	common/initproto.h broker/exec.h
forbidden "the proxy may not include the broker's headers" \
	egress-proxy/session.c broker/sandbox.h
forbidden "a header is checked as its .c is" \
	broker/monitor/spawn.h broker/daemon.h

rm -rf "${fake:?}"/*
put broker/sandbox.c '#include "broker/monitor/monitor-wire.h"' '#include "broker/monitor/monitor.h"' \
	'#include "egress-proxy/proxy.h"' '#include "policy/load.h"' '#include "broker/exec.h"'
put broker/monitor/privop.c '#include "broker/monitor/spawn.h"' '#include "policy/name.h"'
put broker/init/corral-init.c '#include "common/initproto.h"' '#include "broker/init/drop.h"'
put broker/cli/cli.c '#include "policy/render.h"' '#include "common/wire.h"' '#include "broker/conf.h"'
put egress-proxy/proxy.c '#include "policy/index.h"' '#include "egress-proxy/relay.h"'
put tests/unit/test_x.c '#include "broker/monitor/privop.h"' '#include "broker/sandbox.h"'
out=$("$check" "$fake" 2>&1)
check_eq "what each process may include passes (tests may include anything)" "" "$out"

# ARCHITECTURE.md's table of what runs as root lists the monitor's folder,
# file for file ("`x.c`, `.h`" names both).
listed=$(sed -n '/^## What runs as root/,/^## /p' "$top_srcdir/ARCHITECTURE.md" |
	sed -n 's/^| \(`[^|]*\) |.*/\1/p' | tr -d '`' | tr ',' '\n' |
	awk '{ gsub(/ /, ""); if ($0 ~ /^\./) print base $0; else { print; base = $0; sub(/\.[^.]*$/, "", base) } }' |
	LC_ALL=C sort)
present=$(cd "$top_srcdir/broker/monitor" && ls -- *.c *.h | LC_ALL=C sort)
check_eq "ARCHITECTURE.md lists every file of broker/monitor/ and no other" "$present" "$listed"

tap_done
