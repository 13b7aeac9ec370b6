#!/usr/bin/env bash
# Run each cmocka test executable and say what became of every test in it.
#
#   tests/run-tests.sh BIN...
#
# An executable passes (exit 0), fails, or skips as a whole (exit 77, with
# a "SKIP <reason>" line on stderr: test_skip_all of tests/skip.h). One line
# per executable, its tests counted from cmocka's summary, then each
# skipped test with the reason its TEST_SKIP printed ("SKIP <test>: <why>"),
# and for a failure the whole output:
#
#   PASS build/tests/test_shm_ring_seals: 10 passed, 1 skipped, 0 failed (9 ms)
#       SKIP unprivileged_consumer_reads_but_cannot_write_the_ring: needs root to run the consumer as uid 65534
#
# A skip without a reason is a failure. With TRACER_E2E_REQUIRE=1 (CI: root,
# BPF, cgroup v1 and v2) every skip is a failure: no test has a reason to
# skip there. The last line adds everything up. Exits 1 if anything failed.
set -u
unset CMOCKA_MESSAGE_OUTPUT # the summary read below is cmocka's standard one
require=${TRACER_E2E_REQUIRE:-0}

# From cmocka's output (1.1): "counts PASSED SKIPPED FAILED" when it has a
# summary, then "skip TEST<tab>REASON" for each test of its list of skipped
# tests, REASON empty when the test printed none.
summary() {
	awk '
	/^SKIP [A-Za-z_][A-Za-z0-9_]*: / {
		name = substr($2, 1, length($2) - 1)
		if (!(name in why))
			why[name] = substr($0, length($2) + 7)
	}
	/^\[==========\] [0-9]+ test\(s\) run\.$/ { seen = 1 }
	/^\[  PASSED  \] [0-9]+ test\(s\)\.$/ { passed += $4 }
	/^\[  FAILED  \] [0-9]+ test\(s\), listed below:$/ { failed += $4 }
	listing > 0 && /^\[  SKIPPED \] / { names[++n] = substr($0, 14); listing--; next }
	{ listing = 0 }
	/^\[  SKIPPED \] [0-9]+ test\(s\), listed below:$/ { skipped += $4; listing = $4 }
	END {
		if (seen)
			print "counts", passed + 0, skipped + 0, failed + 0
		for (i = 1; i <= n; i++)
			print "skip", names[i] "\t" ((names[i] in why) ? why[names[i]] : "")
	}' "$1"
}

failed=0
t_pass=0 t_skip=0 t_fail=0 # tests
x_pass=0 x_skip=0 x_fail=0 # executables
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
	start=$(date +%s%N)
	"$t" >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))

	if [ "$rc" = 77 ]; then
		why=$(sed -n 's/^SKIP //p' "$log" | tail -n 1)
		[ -n "$why" ] || why=$(tail -n 1 "$log")
		if [ -z "$why" ]; then
			echo "FAIL $t: skipped without a reason (exit 77; use test_skip_all of tests/skip.h)"
			x_fail=$((x_fail + 1)) failed=1
		elif [ "$require" = 1 ]; then
			echo "FAIL $t: skipped, and TRACER_E2E_REQUIRE=1 allows no skip: $why"
			x_fail=$((x_fail + 1)) failed=1
		else
			echo "SKIP $t: $why"
			x_skip=$((x_skip + 1))
		fi
		continue
	fi

	parsed=$(summary "$log")
	counts=$(sed -n 's/^counts //p' <<<"$parsed")
	skips=$(sed -n 's/^skip //p' <<<"$parsed")
	p=0 s=0 f=0
	[ -z "$counts" ] || read -r p s f <<<"$counts"
	t_pass=$((t_pass + p)) t_skip=$((t_skip + s)) t_fail=$((t_fail + f))
	unexplained=$(grep -c $'\t$' <<<"$skips")

	outcome="$p passed, $s skipped, $f failed"
	[ -n "$counts" ] || outcome="no cmocka summary in its output"
	verdict=PASS note='' show_log=0
	if [ "$rc" != 0 ]; then
		verdict=FAIL note=", exit $rc" show_log=1
	elif [ -z "$counts" ]; then
		verdict=FAIL show_log=1
	elif [ "$unexplained" != 0 ]; then
		verdict=FAIL note=": a skip without a reason (use TEST_SKIP of tests/skip.h)"
	elif [ "$s" != 0 ] && [ "$require" = 1 ]; then
		verdict=FAIL note=": TRACER_E2E_REQUIRE=1 allows no skip"
	fi
	echo "$verdict $t: $outcome (${ms} ms)$note"
	if [ -n "$skips" ]; then
		while IFS=$'\t' read -r name reason; do
			echo "    SKIP $name: ${reason:-(no reason given)}"
		done <<<"$skips"
	fi
	[ "$show_log" = 0 ] || sed 's/^/    /' "$log"
	if [ "$verdict" = PASS ]; then
		x_pass=$((x_pass + 1))
	else
		x_fail=$((x_fail + 1)) failed=1
	fi
done
[ "$require" = 1 ] && strict=" (TRACER_E2E_REQUIRE=1: no skip allowed)" || strict=''
echo "tests: $t_pass passed, $t_skip skipped, $t_fail failed;" \
	"executables: $x_pass passed, $x_skip skipped, $x_fail failed$strict"
exit $failed
