#!/usr/bin/env bash
# Files and network per process: cp reads its source (mode r) and writes its
# destination (w), a file opened read-write shows rw, every path absolute;
# a 32 MiB TCP transfer over loopback shows net_tx_bytes on the sender and
# net_rx_bytes on the receiver within 5%.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

head -c $((1 << 20)) /dev/urandom >"$TMP/in.dat" || e2e_fail "setup: cannot write $TMP/in.dat"
tracer_run files --json "$TMP/files.json" -- sh -c "cp '$TMP/in.dat' '$TMP/out.dat' &&
	python3 -c 'f = open(\"$TMP/rw.dat\", \"w+\"); f.write(\"x\"); f.seek(0); f.read()'"
expect_rc "cp and python succeed" 0 files
python3 "$E2E_DIR/check_context.py" files "$TMP/files.json" --src "$TMP/in.dat" --dst "$TMP/out.dat" \
	--rw "$TMP/rw.dat" || e2e_fail "report check 'files' failed (TRACER_E2E_KEEP=1 keeps $TMP)"

tracer_run net --json "$TMP/net.json" -- python3 "$E2E_DIR/net_pair.py" 32
expect_rc "the transfer completes" 0 net
python3 "$E2E_DIR/check_context.py" net "$TMP/net.json" "$TMP/net.out" --mib 32 ||
	e2e_fail "report check 'net' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
