# TAP helpers for the shell tests: source it, call plan-free checks, end
# with tap_done. Each check prints "ok N - name" or "not ok N - name" with
# what was expected and what came, as TAP diagnostics.
tap_n=0
tap_failed=0
# make distcheck hands out paths like .../_build/sub/..: spell them plainly,
# since corral refuses configured paths with '..' segments.
[ -n "${top_srcdir:-}" ] && top_srcdir=$(cd "$top_srcdir" && pwd)
[ -n "${top_builddir:-}" ] && top_builddir=$(cd "$top_builddir" && pwd)

tap_result() {  # tap_result STATUS NAME [DIAGNOSTIC]
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/# /'
		tap_failed=$((tap_failed + 1))
	fi
}

# check NAME COMMAND...: passes when COMMAND exits 0.
check() {
	name=$1; shift
	if out=$("$@" 2>&1); then tap_result 0 "$name"; else tap_result 1 "$name" "$out"; fi
}

# check_eq NAME EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then tap_result 0 "$1"
	else tap_result 1 "$1" "expected: $2
got:      $3"; fi
}

# check_contains NAME HAYSTACK NEEDLE
check_contains() {
	case "$2" in
	*"$3"*) tap_result 0 "$1" ;;
	*) tap_result 1 "$1" "expected to find: $3
in: $2" ;;
	esac
}

# check_lacks NAME HAYSTACK NEEDLE
check_lacks() {
	case "$2" in
	*"$3"*) tap_result 1 "$1" "did not expect: $3
in: $2" ;;
	*) tap_result 0 "$1" ;;
	esac
}

# tap_skip NAME WHY: a check that cannot be made here, counted as skipped.
tap_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}
