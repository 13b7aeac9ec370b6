#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# selinux/check-module.sh BUILD_DIR: static checks of the compiled module
# BUILD_DIR/tracer.pp (make selinux-check). SELinux is not enabled on the
# build machines, so nothing here loads the module: it reads back what
# was compiled and proves what docs/selinux.md promises of it.
#
# The compiled package is unpacked (semodule_unpackage) and turned back
# into CIL (policycoreutils' pp converter), one rule per line, optional
# and boolean blocks included: a rule that only holds when a boolean is
# on counts as granted. Rules of the base policy on attributes our domains
# join (domain, daemon) are not in the module and are not checked here.
#
# Each check prints "ok" or "FAIL" with what it looked for; any FAIL makes
# the script exit 1.
set -u

dir=${1:?usage: check-module.sh BUILD_DIR (holding tracer.pp)}
pp=$dir/tracer.pp
pp2cil=${PP2CIL:-/usr/libexec/selinux/hll/pp}
fails=0

ok() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; fails=$((fails + 1)); }
# none OK_TEXT FAIL_TEXT RULES: ok when RULES is empty, else fail and list them.
none() {
	if [ -z "$3" ]; then ok "$1"; return; fi
	fail "$2:"
	while IFS= read -r line; do echo "          $line"; done <<<"$3"
}

[ -f "$pp" ] || { echo "check-module: no $pp: run make $pp first" >&2; exit 1; }
[ -x "$pp2cil" ] || { echo "check-module: $pp2cil missing: apt-get install policycoreutils" >&2; exit 1; }
command -v semodule_unpackage >/dev/null ||
	{ echo "check-module: semodule_unpackage missing: apt-get install semodule-utils" >&2; exit 1; }

cil=$dir/tracer.cil
semodule_unpackage "$pp" "$dir/tracer.unpacked.mod" "$dir/tracer.unpacked.fc" || { echo "check-module: cannot unpack $pp" >&2; exit 1; }
"$pp2cil" "$pp" "$cil" || { echo "check-module: cannot convert $pp to CIL" >&2; exit 1; }
fc=$dir/tracer.unpacked.fc

# Every granting rule, flattened to "SOURCE TARGET CLASS PERM PERM ...".
rules=$dir/tracer.rules
sed -n 's/^[[:space:]]*(allow \([^ ]*\) \([^ ]*\) (\([^ ]*\) (\([^)]*\))))$/\1 \2 \3 \4/p' "$cil" >"$rules"
[ -s "$rules" ] || { echo "check-module: no allow rule found in $cil: has the CIL format changed?" >&2; exit 1; }

# The names a rule may use for a domain: the domain and the attributes the
# module puts it in.
names_of() {
	local t=$1
	echo "$t"
	sed -n "s/^[[:space:]]*(typeattributeset \([^ ]*\) (\(.*\)))$/\1 \2/p" "$cil" |
		awk -v t="$t" '{ for (i = 2; i <= NF; i++) if ($i == t) print $1 }'
}

# Rules whose source is DOMAIN (or an attribute of it).
rules_from() {
	local names
	names=$(names_of "$1" | paste -sd'|')
	awk -v re="^($names)\$" '$1 ~ re' "$rules"
}

# no_exec DOMAIN: it executes no file but its own entry point and enters no
# other domain.
no_exec() {
	local d=$1 bad
	bad=$(rules_from "$d" | awk -v own="${d%_t}_exec_t" '{ for (i = 4; i <= NF; i++)
		if (($3 == "file" && $2 != own && $i ~ /^(execute|execute_no_trans)$/) ||
		    ($3 == "process" && $i ~ /^(transition|dyntransition)$/)) { print; break } }')
	none "$d: executes nothing but its own entry point, enters no other domain" \
		"$d may execute programs" "$bad"
}

# only_perms DOMAIN TARGET CLASSES PERMS WHAT: in the classes CLASSES (an ERE
# alternation), DOMAIN has no permission on TARGET outside PERMS (the same);
# else it fails, saying DOMAIN WHAT.
only_perms() {
	local bad
	bad=$(rules_from "$1" | awk -v t="$2" -v c="^($3)\$" -v p="^($4)\$" \
		'$2 == t && $3 ~ c { for (i = 4; i <= NF; i++) if ($i !~ p) { print; break } }')
	none "$1: on $2 ($3) nothing but $4" "$1 $5" "$bad"
}

# has_perms DOMAIN WHY, then lines of "TARGET CLASS PERM" on stdin: each one
# is granted, or DOMAIN cannot do its job (WHY).
has_perms() {
	local d=$1 why=$2 rs target class perm
	rs=$(rules_from "$d")
	while read -r target class perm; do
		if echo "$rs" | awk -v t="$target" -v c="$class" -v p="$perm" \
			'$2 == t && $3 == c { for (i = 4; i <= NF; i++) if ($i == p) f = 1 } END { exit !f }'; then
			ok "$d has $class $perm on $target"
		else
			fail "$d lacks $class $perm on $target ($why)"
		fi
	done
}

echo "selinux: checking $pp"

# ---- what the module declares ----------------------------------------
for t in tracer_collector_t tracer_processor_t tracer_ingest_t tracer_web_t \
	 tracer_collector_exec_t tracer_processor_exec_t tracer_ingest_exec_t tracer_web_exec_t \
	 tracer_conf_t tracer_key_t tracer_web_token_t tracer_runtime_t tracer_collector_tmpfs_t \
	 tracer_var_lib_t tracer_ingest_var_lib_t tracer_lake_shm_t tracer_port_t tracer_web_port_t; do
	if grep -qx "(type $t)" "$cil"; then ok "declares $t"; else fail "type $t is not declared"; fi
done
for d in collector processor ingest web; do
	if grep -Eq "^\(typeattributeset domain \(.*\btracer_${d}_t\b" "$cil" &&
	   grep -q "^tracer_${d}_t tracer_${d}_exec_t file entrypoint$" "$rules"; then
		ok "tracer_${d}_t is a domain entered through tracer_${d}_exec_t"
	else
		fail "tracer_${d}_t is not a domain with entry point tracer_${d}_exec_t"
	fi
	if grep -q "^init_t tracer_${d}_t process transition$" "$rules"; then
		ok "systemd (init_t) starts tracer-$d in tracer_${d}_t"
	else
		fail "no transition from init_t to tracer_${d}_t"
	fi
done

# ---- the collector: no network, no exec --------------------------------
col=$(rules_from tracer_collector_t)
bad=$(echo "$col" | awk '$3 ~ /_socket$/ && $3 != "unix_stream_socket" && $3 != "unix_dgram_socket"')
none "tracer_collector_t: no socket class but unix_stream_socket and unix_dgram_socket" \
	"tracer_collector_t may use network sockets" "$bad"
bad=$(echo "$col" | awk '{ for (i = 4; i <= NF; i++) if ($i ~ /^(name_connect|name_bind|node_bind|sendto|recvfrom|send_msg|recv_msg)$/ && $3 != "unix_dgram_socket") print; }')
none "tracer_collector_t: no name_connect, name_bind, node_bind or packet permission" \
	"tracer_collector_t has network permissions" "$bad"
no_exec tracer_collector_t
has_perms tracer_collector_t "it cannot load or hand over" <<'EOF'
self bpf prog_load
self perf_event tracepoint
self capability2 bpf
tracer_collector_tmpfs_t file map
EOF
if grep -q "^(typetransition tracer_collector_t tmpfs_t file tracer_collector_tmpfs_t)$" "$cil"; then
	ok "the collector's memfds are labelled tracer_collector_tmpfs_t"
else
	fail "no type transition for the collector's memfds"
fi

# ---- the processor, the ingest and the web: nothing of the collector's -----
for d in processor ingest web; do
	bad=$(rules_from "tracer_${d}_t" | awk '$3 ~ /^(capability|capability2|cap_userns|cap2_userns|bpf|perf_event|lockdown)$/')
	none "tracer_${d}_t: no capability, capability2, bpf, perf_event or lockdown permission" \
		"tracer_${d}_t has privileged permissions" "$bad"
	bad=$(rules_from "tracer_${d}_t" | awk '$2 ~ /^tracer_collector_(t|exec_t)$/ && $3 != "fd" && $3 != "unix_stream_socket"')
	none "tracer_${d}_t: nothing on the collector but fd use and connecting to its socket" \
		"tracer_${d}_t reaches into the collector" "$bad"
done
bad=$(rules_from tracer_processor_t | awk '{ for (i = 4; i <= NF; i++) if ($i == "name_connect" && $2 !~ /^(tracer_port_t|http_port_t|dns_port_t)$/) print; }')
none "tracer_processor_t: connects only to tracer_port_t, http_port_t (and DNS)" \
	"tracer_processor_t connects to other ports" "$bad"
bad=$(rules_from tracer_processor_t | awk '{ for (i = 4; i <= NF; i++) if ($i ~ /^(name_bind|node_bind|listen|accept)$/ && $3 !~ /^unix_/) print; }')
none "tracer_processor_t: listens on no network port" \
	"tracer_processor_t may serve on the network" "$bad"
bad=$(rules_from tracer_ingest_t | awk '{ for (i = 4; i <= NF; i++) if (($i == "name_bind" && $2 != "tracer_port_t") || $i == "name_connect") print; }')
none "tracer_ingest_t: binds tracer_port_t only, connects nowhere" \
	"tracer_ingest_t has other ports" "$bad"
if grep -q '^(typetransition tracer_ingest_t tracer_ingest_var_lib_t file "lake.db-shm" tracer_lake_shm_t)$' "$cil"; then
	ok "the ingest creates lake.db-shm as tracer_lake_shm_t"
else
	fail "no named type transition for the ingest's lake.db-shm"
fi

# ---- the web: serves and reads; writes only the readers' lock table --------
web=$(rules_from tracer_web_t)
# corenet_all_recvfrom_netlabel() names every IP socket class as the peer's
# recvfrom: that is no socket of the web's own, and is left out.
bad=$(echo "$web" | awk '$3 ~ /_socket$/ && $3 !~ /^(tcp_socket|unix_stream_socket|unix_dgram_socket)$/ &&
	!($2 == "netlabel_peer_t" && NF == 4 && $4 == "recvfrom")')
none "tracer_web_t: no socket class but tcp_socket, unix_stream_socket and unix_dgram_socket" \
	"tracer_web_t may use other sockets" "$bad"
bad=$(echo "$web" | awk '{ for (i = 4; i <= NF; i++)
	if ($i == "name_connect" || ($i == "connect" && $3 !~ /^unix_/) ||
	    ($i == "name_bind" && $2 != "tracer_web_port_t")) { print; break } }')
none "tracer_web_t: binds tracer_web_port_t only, connects nowhere (no name_connect, no TCP connect)" \
	"tracer_web_t has other ports or may connect out" "$bad"
no_exec tracer_web_t
only_perms tracer_web_t tracer_ingest_var_lib_t 'file|dir|lnk_file' 'getattr|open|read|search|ioctl|lock|map' \
	"may change the lake"
only_perms tracer_web_t tracer_lake_shm_t 'file|dir|lnk_file' 'getattr|open|read|write|lock|map' \
	"may create, truncate by setattr, remove or rename the lake's -shm file"
bad=$(echo "$web" | awk '$2 ~ /^tracer_(key|var_lib|runtime|collector_tmpfs)_t$/')
none "tracer_web_t: nothing on the signing key, the processor's state, /run/tracer or the ring" \
	"tracer_web_t reaches other daemons' files" "$bad"
has_perms tracer_web_t "it cannot serve the lake" <<'EOF'
tracer_web_port_t tcp_socket name_bind
self tcp_socket listen
self tcp_socket accept
tracer_ingest_var_lib_t file read
tracer_ingest_var_lib_t file lock
tracer_lake_shm_t file write
tracer_lake_shm_t file map
tracer_web_token_t file read
EOF
if grep -q "^(dontaudit tracer_web_t tracer_ingest_var_lib_t (file (write)))$" "$cil"; then
	ok "tracer_web_t: SQLite's read-write try on the -wal file is refused without an audit record"
else
	fail "tracer_web_t: no dontaudit for SQLite's read-write open of the -wal file"
fi

# ---- the lake: only the ingest changes it ------------------------------------
bad=$(awk '$1 ~ /^tracer_/ && $1 != "tracer_ingest_t" && $2 == "tracer_ingest_var_lib_t" {
	for (i = 4; i <= NF; i++) if ($i !~ /^(getattr|open|read|search|ioctl|lock|map)$/) { print; break } }' "$rules")
none "tracer_ingest_var_lib_t: no tracer domain but the ingest may change the lake" \
	"another tracer domain may change the lake" "$bad"

# ---- the signing key: the processor's alone among tracer's domains --------
bad=$(awk '$1 ~ /^tracer_/ && $1 != "tracer_processor_t" && $2 == "tracer_key_t"' "$rules")
none "tracer_key_t: no tracer domain but the processor has any access" \
	"another tracer domain reaches the signing key" "$bad"
bad=$(awk '$1 == "tracer_processor_t" && $2 == "tracer_key_t" { for (i = 4; i <= NF; i++) if ($i ~ /^(write|append|create|setattr|unlink|rename|link)$/) print; }' "$rules")
none "tracer_key_t: the processor may read it, not change it" \
	"the processor may change the signing key" "$bad"

# ---- the web's token: the web's alone, read only ---------------------------
bad=$(awk '$1 ~ /^tracer_/ && $1 != "tracer_web_t" && $2 == "tracer_web_token_t"' "$rules")
none "tracer_web_token_t: no tracer domain but the web has any access" \
	"another tracer domain reaches the web's token" "$bad"
only_perms tracer_web_t tracer_web_token_t 'file|dir|lnk_file' 'getattr|open|read|ioctl|lock' \
	"may change its token"

# ---- file contexts ---------------------------------------------------------
while read -r path type; do
	# Through the environment: awk -v would read the backslashes as escapes.
	if P=$path T=":$type:" awk '$1 == ENVIRON["P"] && index($NF, ENVIRON["T"]) { f = 1 } END { exit !f }' "$fc"; then
		ok "$path -> $type"
	else fail "no file context $path -> $type"; fi
done <<'EOF'
/usr/sbin/tracer-collector tracer_collector_exec_t
/usr/local/sbin/tracer-collector tracer_collector_exec_t
/usr/sbin/tracer-processor tracer_processor_exec_t
/usr/sbin/tracer-ingest tracer_ingest_exec_t
/usr/sbin/tracer-web tracer_web_exec_t
/usr/local/sbin/tracer-web tracer_web_exec_t
/etc/tracer(/.*)? tracer_conf_t
/etc/tracer/signing\.key.* tracer_key_t
/etc/tracer/web\.token tracer_web_token_t
/var/lib/tracer(/.*)? tracer_var_lib_t
/var/lib/tracer-ingest(/.*)? tracer_ingest_var_lib_t
/var/lib/tracer-ingest/[^/]+-shm tracer_lake_shm_t
/run/tracer(/.*)? tracer_runtime_t
EOF
if grep -q "^/usr/bin/tracer[[:space:]]" "$fc"; then fail "/usr/bin/tracer is labelled: the CLI must keep its caller's domain"
else ok "/usr/bin/tracer keeps the default label (the CLI runs in its caller's domain)"; fi

if [ "$fails" -ne 0 ]; then
	echo "selinux: $fails check(s) failed (rules in $rules, CIL in $cil)"
	exit 1
fi
echo "selinux: all checks passed"
