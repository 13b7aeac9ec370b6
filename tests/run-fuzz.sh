#!/usr/bin/env bash
# Run libFuzzer targets: tests/run-fuzz.sh SECONDS BIN...
#
# For each target BIN (named by its file name, e.g. fuzz_ring_consumer):
#   1. replay every regression input in tests/fuzz/crashes/<name>/ once
#      (inputs that once crashed it: they must pass now);
#   2. fuzz for SECONDS from the seed corpus tests/fuzz/corpus/<name>/, copied
#      to a temporary working corpus under the build directory so the tree is
#      never modified.
# Prints one line per target, "fuzz <name>: ok (N execs, ...)", or FAIL with
# the crashing input and the sanitizer report; exits non-zero if any failed.
# Crash artifacts and full logs go to <build>/fuzz-artifacts/, where <build>
# is the directory above the binaries' (build/fuzz/BIN -> build/).
# To turn a crash into a regression test, copy it into tests/fuzz/crashes/<name>/
# under a name saying what it breaks (not crash-*: .gitignore drops those).
set -euo pipefail

if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
	echo "usage: $0 SECONDS FUZZER_BINARY..." >&2
	exit 2
fi
seconds=$1
shift

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "$(dirname "$1")/.." && pwd)
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
work=$(mktemp -d "$build/fuzz-work.XXXXXX")
trap 'rm -rf "$work"' EXIT
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# Largest input worth generating, per target.
max_len_for() {
	case $1 in
	fuzz_ring_consumer) echo 70000 ;; # prefix + a 16 KiB data region, four times over
	fuzz_ring_producer) echo 16384 ;; # ~2000 operations of a few bytes each
	fuzz_proc_records) echo 16384 ;;  # several records, up to a full 4.7 KiB exec
	fuzz_ingest_http) echo 12288 ;;   # past the harness's 4 KiB body and 8 KiB header limits
	fuzz_upload_retry_after) echo 72 ;; # the clock and a 63-byte header value
	*) echo 4096 ;;
	esac
}

# Print a failure: what failed, the input to reproduce it, the heart of the
# sanitizer report (the broken invariant or bad access and where), the full log.
report_failure() { # name what log
	echo "fuzz $1: FAIL ($2)"
	grep -E 'invariant failed|ERROR:|runtime error|READ of|WRITE of|^ +#[0-4] |SUMMARY:' "$3" |
		head -n 24 | sed 's/^/    /' || true
	echo "    full log: $3"
}

failed=0
for bin in "$@"; do
	name=${bin##*/}
	log=$artifacts/$name.log
	if [ ! -x "$bin" ]; then
		echo "fuzz $name: FAIL (no executable $bin)"
		failed=1
		continue
	fi

	# 1. Regression inputs: each runs once and must not crash.
	regressed=0
	crashes=$root/tests/fuzz/crashes/$name
	if [ -d "$crashes" ]; then
		for input in "$crashes"/*; do
			[ -f "$input" ] || continue
			if ! "$bin" "$input" >"$log" 2>&1; then
				report_failure "$name" "regression input $input" "$log"
				regressed=1
				break
			fi
		done
	fi
	if [ $regressed -ne 0 ]; then
		failed=1
		continue
	fi

	# 2. Fuzz from a scratch copy of the seeds.
	corpus=$work/$name
	mkdir -p "$corpus"
	if [ -d "$root/tests/fuzz/corpus/$name" ]; then
		cp -R "$root/tests/fuzz/corpus/$name/." "$corpus/"
	fi
	rc=0
	"$bin" -max_total_time="$seconds" -max_len="$(max_len_for "$name")" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
		"$corpus" >"$log" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		report_failure "$name" "exit $rc, input: ${crash:-none written}" "$log"
		failed=1
		continue
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1, ft \2, corpus \3/p' "$log" |
		tail -n 1)
	echo "fuzz $name: ok (${execs:-?} execs, ${rate:-?} exec/s${cov:+, $cov})"
done
exit $failed
