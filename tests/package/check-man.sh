#!/usr/bin/env bash
# The man pages against the programs they describe:
#
#   tests/package/check-man.sh MANROOT EXAMPLE DIR...
#
# MANROOT holds the pages (NAME.N or NAME.N.gz, in any folder below it: $(BUILD)/man, or an installed
# share/man); each binary is found in one of the DIRs. Each page of tracer(1), tracer-collector(8),
# tracer-processor(8), tracer-ingest(8) and tracer-web(8) must name exactly the options its binary's --help
# names, and tracer.conf(5) exactly the keys of EXAMPLE (docs/tracer.conf.example). Exit 1 naming what differs.
set -u
[ $# -ge 3 ] || { echo "usage: $0 MANROOT EXAMPLE DIR..." >&2; exit 2; }
root=$1 example=$2
shift 2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

page_text() { # the page's source with roff's escapes of '-' and fonts undone
	local f
	f=$(find "$root" \( -name "$1" -o -name "$1.gz" \) -type f | head -n 1)
	[ -n "$f" ] || return 1
	zcat -f "$f" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g'
}

options() { grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }

for page in tracer.1 tracer-collector.8 tracer-processor.8 tracer-ingest.8 tracer-web.8; do
	name=${page%.*} bin=
	for d in "$@"; do [ -x "$d/$name" ] && bin=$d/$name && break; done
	[ -n "$bin" ] || { echo "check-man: no $name in $*" >&2; fail=1; continue; }
	page_text "$page" >"$tmp/page" || { echo "check-man: no page $page under $root" >&2; fail=1; continue; }
	"$bin" --help >"$tmp/help" || { echo "check-man: $bin --help exited $?" >&2; fail=1; continue; }
	options <"$tmp/page" >"$tmp/page.opts"
	options <"$tmp/help" >"$tmp/help.opts"
	if ! [ -s "$tmp/help.opts" ] || ! cmp -s "$tmp/page.opts" "$tmp/help.opts"; then
		echo "check-man: $page's options are not $bin --help's (< page, > --help):" >&2
		diff "$tmp/page.opts" "$tmp/help.opts" >&2
		fail=1
	fi
done

if page_text tracer.conf.5 >"$tmp/page"; then
	# a key is the term of a .TP paragraph: "key = default"
	awk 'tp && match($0, /^[a-z_][a-z0-9_]* = /) { print substr($0, 1, RLENGTH - 3) } { tp = ($0 == ".TP") }' \
		"$tmp/page" | sort -u >"$tmp/page.keys"
	sed -n 's/^#\([a-z_][a-z0-9_]*\) = .*/\1/p' "$example" | sort -u >"$tmp/example.keys"
	if ! [ -s "$tmp/example.keys" ] || ! cmp -s "$tmp/page.keys" "$tmp/example.keys"; then
		echo "check-man: tracer.conf.5's keys are not $example's (< page, > example):" >&2
		diff "$tmp/page.keys" "$tmp/example.keys" >&2
		fail=1
	fi
else
	echo "check-man: no page tracer.conf.5 under $root" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "check-man: 6 pages under $root name exactly their programs' options and tracer.conf's keys"
exit "$fail"
