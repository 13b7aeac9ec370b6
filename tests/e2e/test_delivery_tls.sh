#!/usr/bin/env bash
# Upload over HTTPS, verified: a throwaway CA signs a certificate for
# 127.0.0.1 and a client certificate; a TLS front (hang_proxy.py with
# Python's ssl) passes requests to tracer-ingest.
#  (a) tracer run with ca_file = the CA: the run reaches the lake;
#  (b) without ca_file (the system's CAs; verification is on by default):
#      nothing reaches the lake, the error names the certificate, the spool
#      keeps the records;
#  (c) the front demands a client certificate: refused without one,
#      delivered with client_cert/client_key.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
dlv_init
pki=$D/pki
dlv_pki "$pki"
dlv_ingest_start

# tls_front [--client-ca FILE]: an HTTPS front for the ingest; sets TLS_URL.
tls_front() {
	local i
	[ -n "${TLS_PID:-}" ] && kill "$TLS_PID" 2>/dev/null
	rm -f "$D/tls.port"
	python3 "$DLV_DIR/hang_proxy.py" --upstream "127.0.0.1:$DLV_PORT" --flag "$D/no-such-flag" \
		--port-file "$D/tls.port" --log "$D/tls.log" --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" "$@" \
		2>>"$D/tls.err" &
	TLS_PID=$!
	DLV_PIDS+=("$TLS_PID")
	for ((i = 0; i < 50; i++)); do
		[ -s "$D/tls.port" ] && break
		sleep 0.1
	done
	[ -s "$D/tls.port" ] || e2e_fail "the TLS front did not start: $(tail -3 "$D/tls.err")"
	TLS_URL=https://127.0.0.1:$(cat "$D/tls.port")/v1/batches
}
tls_front

# (a) verified with the CA
tracer_run tls --set "state_dir=$D/state" --set "upload_url=$TLS_URL" --set "signing_key=$D/signing.key" \
	--set "ca_file=$pki/ca.pem" -- sh -c 'echo over https'
expect_rc "the command's status" 0 tls
"$TRACER" report --db "$D/lake.db" >"$TMP/runs.txt" 2>&1
grep -q "echo over https" "$TMP/runs.txt" || e2e_fail "the run did not reach the lake over HTTPS: $(cat "$TMP/runs.txt")"
grep -q "forwarded 200" "$D/tls.log" || e2e_fail "no request went through the TLS front"
stored=$(dlv_lake_sql 'SELECT count(*) FROM records')

# (b) the system's CAs do not know this one: refused, kept in the spool
rm -rf "$D/state2" && mkdir "$D/state2" && chown nobody "$D/state2"
dlv_load_start
dlv_collector_start
"$B/tracer-processor" --set "state_dir=$D/state2" --set "runtime_dir=$D/run" --set processor_user=nobody \
	--set "upload_url=$TLS_URL" --set "signing_key=$D/signing.key" --set batch_interval=100ms \
	--set retry_max=1s 2>>"$D/processor.err" &
DLV_PROCESSOR=$!
DLV_PIDS+=("$DLV_PROCESSOR")
D0=$D
dlv_load_go 0
status2() { D=$D0/state2/.. python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["upload"][sys.argv[2]])' "$D0/state2/status.json" "$1" 2>/dev/null || echo -1; }
for ((i = 0; i < 100; i++)); do
	[ "$(status2 net_errors)" -gt 1 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(status2 net_errors)" -gt 1 ] || e2e_fail "no TLS failure counted without ca_file: $(tail -3 "$D/processor.err")"
status2 last_error | grep -qi "certificate" || e2e_fail "the error does not name the certificate: $(status2 last_error)"
[ "$(status2 batches_acked)" = 0 ] || e2e_fail "a batch was accepted without verifying the server"
[ "$(dlv_lake_sql 'SELECT count(*) FROM records')" = "$stored" ] || e2e_fail "records reached the lake unverified"
kill -TERM "$DLV_PROCESSOR"
wait "$DLV_PROCESSOR"

# (c) the front demands a client certificate
tls_front --client-ca "$pki/ca.pem"
"$B/tracer-processor" --set "state_dir=$D/state2" --set "runtime_dir=$D/run" --set processor_user=nobody \
	--set "upload_url=$TLS_URL" --set "signing_key=$D/signing.key" --set batch_interval=100ms \
	--set retry_max=1s --set "ca_file=$pki/ca.pem" 2>>"$D/processor.err" &
DLV_PROCESSOR=$!
DLV_PIDS+=("$DLV_PROCESSOR")
before=$(status2 net_errors)
for ((i = 0; i < 100; i++)); do
	[ "$(status2 net_errors)" -gt 0 ] 2>/dev/null && [ "$(status2 net_errors)" != "$before" ] && break
	sleep 0.1
done
grep -q "tls-refused" "$D/tls.log" || e2e_fail "the front did not refuse a client without a certificate"
[ "$(status2 batches_acked)" = 0 ] || e2e_fail "a client without a certificate was served"
kill -TERM "$DLV_PROCESSOR"
wait "$DLV_PROCESSOR"
"$B/tracer-processor" --set "state_dir=$D/state2" --set "runtime_dir=$D/run" --set processor_user=nobody \
	--set "upload_url=$TLS_URL" --set "signing_key=$D/signing.key" --set batch_interval=100ms \
	--set retry_max=1s --set "ca_file=$pki/ca.pem" --set "client_cert=$pki/client.pem" \
	--set "client_key=$pki/client.key" 2>>"$D/processor.err" &
DLV_PROCESSOR=$!
DLV_PIDS+=("$DLV_PROCESSOR")
for ((i = 0; i < 100; i++)); do
	[ "$(status2 batches_acked)" -gt 0 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(status2 batches_acked)" -gt 0 ] || e2e_fail "nothing delivered with a client certificate: $(status2 last_error)"
dlv_load_stop
