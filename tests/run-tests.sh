#!/usr/bin/env bash
# Run each test executable; a test reports pass (exit 0), fail, or skip (exit 77,
# with its reason on stderr). Prints one line per executable and fails if any failed.
set -u
failed=0
for t in "$@"; do
	name=${t##*/}
	log=$(mktemp)
	start=$(date +%s%N)
	"$t" >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	case $rc in
	0) echo "PASS $t (${ms} ms)" ;;
	77) echo "SKIP $t: $(tail -n 1 "$log")" ;;
	*) echo "FAIL $t (exit $rc)"; sed 's/^/    /' "$log"; failed=1 ;;
	esac
	rm -f "$log"
done
exit $failed
