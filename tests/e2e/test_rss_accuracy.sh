#!/usr/bin/env bash
# Peak memory is the kernel's: a child that touches 200 MiB has
# peak_rss_bytes within 5% of wait4()'s ru_maxrss.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

tracer_run rss --json "$TMP/rss.json" -- "$W" measure touch 200
expect_rc "measure exits 0" 0 rss
check_report rss "$TMP/rss.json" "$TMP/rss.out" --min-mib 200
