#!/usr/bin/env bash
# Secrets in command lines never leave the processor: not in the JSON
# report, not in the summary, not in its logs; ordinary arguments stay
# readable. The secrets are arguments of real processes (true ignores them).
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

tracer_run redact --json "$TMP/redact.json" -- sh -c '
true --password=Pw1SECRETvalue --threads 8 input.fq
true --token Tk2SECRETvalue -o out.bam
env AWS_SECRET_ACCESS_KEY=Ak3SECRETvalue true sort -k1,1 ref.fa
true https://alice:Url4SECRETvalue@example.org/data.tar
true -H "Authorization: Bearer Br5SECRETvalueabc" AKIAABCDEFGHIJKLMNOP
exit 0'
expect_rc "the commands succeed" 0 redact
python3 "$E2E_DIR/check_context.py" redact "$TMP/redact.json" --also "$TMP/redact.err" "$TMP/redact.out" \
	--secret Pw1SECRETvalue Tk2SECRETvalue Ak3SECRETvalue Url4SECRETvalue Br5SECRETvalueabc AKIAABCDEFGHIJKLMNOP \
	--keep=input.fq --keep=--threads --keep=out.bam --keep=ref.fa --keep=example.org --keep=--token ||
	e2e_fail "report check 'redact' failed (TRACER_E2E_KEEP=1 keeps $TMP)"
