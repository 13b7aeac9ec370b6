#!/usr/bin/env bash
# Every binary answers --version with the build's version and commit, and --help with its usage, each on
# standard output alone with exit 0; an unknown option is a usage error: exit 2, the usage on stderr only.
# The version and commit are the ones the Makefile compiled in (BUILD/gen/build_id, from debian/changelog
# and git describe).
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
[ -r "$B/gen/build_id" ] || e2e_fail "no $B/gen/build_id: build with make all"
read -r version commit <"$B/gen/build_id"
[ -n "$version" ] && [ -n "$commit" ] || e2e_fail "$B/gen/build_id holds no version and commit"
for name in tracer tracer-collector tracer-processor tracer-ingest tracer-web; do
	bin=$B/$name
	[ -x "$bin" ] || e2e_fail "not built: $bin"
	"$bin" --version >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" = 0 ] || e2e_fail "$name --version exited $rc: $(cat "$TMP/err")"
	[ ! -s "$TMP/err" ] || e2e_fail "$name --version wrote to stderr: $(cat "$TMP/err")"
	[ "$(sed -n 1p "$TMP/out")" = "$name $version" ] ||
		e2e_fail "$name --version's first line is not '$name $version': $(cat "$TMP/out")"
	[ "$(sed -n 2p "$TMP/out")" = "commit $commit" ] ||
		e2e_fail "$name --version does not say 'commit $commit': $(cat "$TMP/out")"
	"$bin" --help >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" = 0 ] || e2e_fail "$name --help exited $rc: $(cat "$TMP/err")"
	[ ! -s "$TMP/err" ] || e2e_fail "$name --help wrote to stderr: $(cat "$TMP/err")"
	grep -q "^usage: $name " "$TMP/out" || e2e_fail "$name --help printed no usage on stdout: $(cat "$TMP/out")"
	grep -q -- "--version" "$TMP/out" || e2e_fail "$name --help does not name --version"
	"$bin" --no-such-option >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" = 2 ] || e2e_fail "$name --no-such-option exited $rc, not 2"
	[ ! -s "$TMP/out" ] || e2e_fail "$name --no-such-option wrote to stdout: $(cat "$TMP/out")"
	grep -q "usage: $name " "$TMP/err" || e2e_fail "$name --no-such-option printed no usage on stderr"
done
exit 0
