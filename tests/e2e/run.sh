#!/usr/bin/env bash
# End-to-end tests: the real tracer binaries on the real kernel.
#
#   tests/e2e/run.sh BUILD_DIR [NAME...]
#
# Runs every tests/e2e/test_*.sh (or only those named: `exit_codes` or
# `test_exit_codes`), each with BUILD_DIR as $1, and prints one line per
# test: "PASS name (N ms)", "FAIL name" and its output indented, or
# "SKIP name: reason". Exits 1 if any test failed.
#
# Whether tracer run can work here (root, BPF) is decided once, by a probe,
# and passed down in TRACER_E2E_SKIP. TRACER_E2E_REQUIRE=1 turns every skip,
# that one or any other, into a failure (for CI, where nothing a test needs
# may be missing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
e2e_paths "${1:-}"
shift

missing=$(e2e_missing_binaries)
if [ -n "$missing" ]; then
	echo "FAIL e2e: not built:$missing (run 'make all')"
	exit 1
fi

TRACER_E2E_SKIP=$(e2e_probe)
TRACER_E2E_PROBED=1
export TRACER_E2E_SKIP TRACER_E2E_PROBED

tests=()
if [ $# -eq 0 ]; then
	tests=("$here"/test_*.sh)
else
	for n in "$@"; do
		n=${n%.sh}
		n=${n#test_}
		[ -f "$here/test_$n.sh" ] || { echo "FAIL e2e: no test $here/test_$n.sh"; exit 1; }
		tests+=("$here/test_$n.sh")
	done
fi

failed=0 passed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$(date +%s%N)
	bash "$t" "$B" >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	case $rc in
	0) echo "PASS $name (${ms} ms)"; passed=$((passed + 1)) ;;
	77)
		if [ "${TRACER_E2E_REQUIRE:-}" = 1 ]; then
			echo "FAIL $name: skipped, and TRACER_E2E_REQUIRE=1 allows no skip: $(tail -n 1 "$log")"
			failed=$((failed + 1))
		else
			echo "SKIP $name: $(tail -n 1 "$log")"
			skipped=$((skipped + 1))
		fi
		;;
	*)
		echo "FAIL $name (exit $rc, ${ms} ms)"
		sed 's/^/    /' "$log"
		failed=$((failed + 1))
		;;
	esac
done
echo "e2e: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
