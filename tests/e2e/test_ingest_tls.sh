#!/usr/bin/env bash
# TLS on the ingest itself: tracer-ingest --tls-cert/--tls-key, then with
# --client-ca, against the real processor's upload (ca_file, then
# client_cert/client_key) under load, and against curl. A throwaway CA
# signs the ingest's certificate (for 127.0.0.1) and a client certificate;
# a second CA signs a rogue one. The ingest's key is root's alone (0600):
# started as root, it reads it before it drops to nobody.
#  (a) HTTPS with ca_file: records reach the lake;
#  (b) --client-ca, the processor without a client certificate: refused in
#      the handshake (the ingest logs why; a TLS 1.2 client fails in the
#      handshake with the alert; TLS 1.3 gets no HTTP answer); the spool
#      keeps the records, nothing reaches the lake; a certificate of
#      another CA is refused the same way;
#  (c) with client_cert/client_key: delivered, everything once;
#  (d) plain HTTP to the TLS port: closed without an answer, and the
#      ingest goes on serving;
# all under the ingest's seccomp filter: it stops cleanly at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/delivery.sh"
e2e_init "$1"
e2e_require_bpf
command -v curl >/dev/null || e2e_fail "curl is needed"
dlv_init
pki=$D/pki
dlv_pki "$pki" --rogue

# https PATH [CURL OPTIONS]: a GET of the ingest over TLS; prints the HTTP code (000: none), curl's error
# on stderr; curl's exit status.
https() {
	local path=$1
	shift
	curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$pki/ca.pem" "$@" \
		"https://127.0.0.1:$DLV_PORT$path"
}

# processor_start [--set KEY=VALUE]...: the processor on $D/state, uploading to the ingest over HTTPS.
processor_start() {
	dlv_processor_start --set "upload_url=$TLS_URL" --set "ca_file=$pki/ca.pem" --set retry_max=1s "$@"
}

processor_stop() {
	kill -TERM "$DLV_PROCESSOR"
	wait "$DLV_PROCESSOR"
}

lake_records() {
	dlv_lake_sql 'SELECT count(*) FROM records'
}

# ingest_stop: SIGTERM, and an exit of its own with status 0 (not SIGSYS: a syscall its filter does not allow).
ingest_stop() {
	local rc
	kill -TERM "$DLV_INGEST"
	wait "$DLV_INGEST"
	rc=$?
	[ "$rc" = 0 ] || e2e_fail "tracer-ingest exited $rc at SIGTERM (159: SIGSYS): $(tail -3 "$D/ingest.err")"
}

# (a) HTTPS, no client certificate asked for
dlv_ingest_start --tls-cert "$pki/server.pem" --tls-key "$pki/server.key"
TLS_URL=https://127.0.0.1:$DLV_PORT/v1/batches
grep -q "<6>TLS: certificate $pki/server.pem; no client certificate asked for" "$D/ingest.err" ||
	e2e_fail "the ingest does not say it serves TLS: $(tail -3 "$D/ingest.err")"
[ "$(https /v1/health)" = 200 ] || e2e_fail "GET /v1/health over HTTPS did not answer 200"
dlv_load_start
dlv_collector_start
processor_start
dlv_load_go 0
dlv_wait_status upload.batches_acked -gt 0 20 "delivered over HTTPS with ca_file"
[ "$(lake_records)" -gt 0 ] || e2e_fail "batches acknowledged over HTTPS, but no record in the lake"
processor_stop

# (b) --client-ca: the processor without a client certificate is refused in the handshake
ingest_stop
dlv_ingest_start --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" --client-ca "$pki/ca.pem"
grep -q "clients need a certificate signed by $pki/ca.pem" "$D/ingest.err" ||
	e2e_fail "the ingest does not say it asks for client certificates: $(tail -3 "$D/ingest.err")"
stored=$(lake_records)
acked=$(dlv_status spool.acked_seq) # the spool's ledger: kept across processor restarts
processor_start
dlv_wait_status upload.net_errors -gt 1 20 "uploads without a client certificate fail"
dlv_status_fresh
echo "without a client certificate: net_errors $(dlv_status upload.net_errors), last_error '$(dlv_status upload.last_error)'"
[ "$(dlv_status upload.batches_acked)" = 0 ] && [ "$(dlv_status spool.acked_seq)" = "$acked" ] ||
	e2e_fail "a batch was accepted without a client certificate"
[ "$(dlv_status upload.http_4xx)" = 0 ] || e2e_fail "the refusal came as an HTTP status: a request was read"
[ "$(lake_records)" = "$stored" ] || e2e_fail "records reached the lake without a client certificate"
grep -q "refused the TLS client 127.0.0.1: no client certificate" "$D/ingest.err" ||
	e2e_fail "the ingest did not log the refusal: $(tail -3 "$D/ingest.err")"
https /v1/health --tls-max 1.2 >/dev/null 2>"$TMP/curl12.err"
rc=$?
[ "$rc" = 35 ] && grep -qi "alert handshake failure" "$TMP/curl12.err" ||
	e2e_fail "TLS 1.2 without a certificate: expected curl's handshake error 35 with the alert, got $rc: $(cat "$TMP/curl12.err")"
code=$(https /v1/health 2>"$TMP/curl13.err")
[ "$code" = 000 ] || e2e_fail "TLS 1.3 without a certificate: HTTP $code, expected no answer"
https /v1/health --tls-max 1.2 --cert "$pki/rogue.pem" --key "$pki/rogue.key" >/dev/null 2>"$TMP/rogue.err"
rc=$?
[ "$rc" = 35 ] && grep -qi "alert bad certificate" "$TMP/rogue.err" ||
	e2e_fail "a certificate of another CA: expected curl's handshake error 35 with the alert, got $rc: $(cat "$TMP/rogue.err")"
code=$(https /v1/health --cert "$pki/rogue.pem" --key "$pki/rogue.key" 2>"$TMP/rogue13.err")
[ "$code" = 000 ] || e2e_fail "TLS 1.3 with a certificate of another CA: HTTP $code, expected no answer"
grep -q "refused the TLS client 127.0.0.1: its certificate does not verify against --client-ca: .*issuer is unknown" \
	"$D/ingest.err" || e2e_fail "the ingest did not log why it refused the other CA's certificate: $(tail -3 "$D/ingest.err")"
[ "$(https /v1/health --cert "$pki/client.pem" --key "$pki/client.key")" = 200 ] ||
	e2e_fail "GET /v1/health with the CA's client certificate did not answer 200"
dlv_wait_status upload.pending_records -gt 0 10 "the refused records wait in the spool"
processor_stop

# (c) with client_cert/client_key: everything spooled so far, and the rest of the load, delivered once
processor_start --set "client_cert=$pki/client.pem" --set "client_key=$pki/client.key"
dlv_wait_status spool.acked_seq -gt "$acked" 20 "delivered with a client certificate"

# (d) plain HTTP to the TLS port: no answer, the connection closed; the ingest goes on serving
code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$DLV_PORT/v1/health" 2>"$TMP/plain.err")
[ "$code" = 000 ] || e2e_fail "plain HTTP to the TLS port: HTTP $code, expected no answer"
grep -q "Empty reply from server\|Connection reset" "$TMP/plain.err" ||
	e2e_fail "plain HTTP to the TLS port: expected the connection closed, got: $(cat "$TMP/plain.err")"
[ "$(https /v1/health --cert "$pki/client.pem" --key "$pki/client.key")" = 200 ] ||
	e2e_fail "the ingest stopped serving after a plain HTTP client"

dlv_load_stop
dlv_wait_delivered 30
dlv_check_lake
processor_stop
ingest_stop
grep -q "TLS clients refused [1-9]" "$D/ingest.err" || e2e_fail "the totals do not count the refused TLS clients: $(tail -1 "$D/ingest.err")"
