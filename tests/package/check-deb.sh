#!/usr/bin/env bash
# tests/package/check-deb.sh BUILD - checks the Debian package `make deb` built into BUILD/deb.
#
# Without root: its contents (every file at its path with its mode and owner, nothing
# else, no build or test leftovers), its control fields and Depends, the conffile, the
# units' paths, the binaries (PIE, full RELRO, stripped, debug info in the -dbgsym
# package), the maintainer scripts.
# As root: installs it with dpkg -i and checks the users, the directories, that nothing
# is enabled or running, that the binaries run; reinstalls (a changed conffile stays);
# removes (config and state stay); purges (nothing of the package is left). It refuses
# to touch a host where tracer, its files or its directories are already present, and
# puts back what it changed (the package, and the users if it created them). While the
# package is installed the users tracer and tracer-ingest exist, and a tracer-ingest
# started as root elsewhere runs as tracer-ingest: do not run this next to other tests.
#
# Each check prints "ok", "FAIL" or "skip" and what it proves; exit status 1 if any
# failed. TRACER_E2E_REQUIRE=1 (CI) turns a skip into a failure.
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD   (the build directory: make deb wrote BUILD/deb/tracer_VERSION_ARCH.deb)" >&2
	exit 2
fi
BUILD=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VERSION=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
ARCH=$(dpkg --print-architecture)
DEB=$BUILD/deb/tracer_${VERSION}_${ARCH}.deb
DBGSYM=
for f in "$BUILD/deb/tracer-dbgsym_${VERSION}_${ARCH}.deb" "$BUILD/deb/tracer-dbgsym_${VERSION}_${ARCH}.ddeb"; do
	[ -f "$f" ] && DBGSYM=$f
done
UNITS="tracer-collector.service tracer-processor.service tracer-ingest.service tracer-web.service
	tracer-export-otlp.service"
SBIN="tracer-collector tracer-processor tracer-ingest tracer-web"

failed=0
ok()   { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
skip() {
	if [ "${TRACER_E2E_REQUIRE:-0}" = 1 ]; then fail "$* (TRACER_E2E_REQUIRE=1: may not skip)"
	else echo "skip - $*"; fi
}
# check NAME COMMAND...: ok when COMMAND succeeds; its output is shown when it fails.
check() {
	local name=$1 out; shift
	if out=$("$@" 2>&1); then ok "$name"; else fail "$name"; [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/       /'; fi
}

not() { ! "$@"; }
is_pie() { readelf -h "$1" | grep -q 'Type:.*DYN' && readelf -l "$1" | grep -q INTERP; }
is_full_relro() { readelf -l "$1" | grep -q GNU_RELRO && readelf -d "$1" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW'; }
is_stripped() { ! readelf -S --wide "$1" | grep -Eq '\.symtab|\.debug_'; }

if [ ! -f "$DEB" ]; then
	echo "FAIL - the package exists: no $DEB (run make deb)"
	exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/check-deb.XXXXXX")
# What the root part changed, put back by restore_host on any exit.
INSTALLED_BY_US=0
CREATED_USERS=""
restore_host() {
	if [ "$INSTALLED_BY_US" = 1 ] && dpkg-query -W -f='${db:Status-Status}' tracer 2>/dev/null | grep -qv '^not-installed$'; then
		echo "       (restoring the host: dpkg --purge tracer)"
		if ! dpkg --purge tracer >/dev/null 2>&1 && ! dpkg --purge --force-remove-reinstreq tracer >/dev/null 2>&1; then
			echo "FAIL - restoring the host: dpkg --purge tracer failed; this test installed it, remove it by hand" \
				"(dpkg -i a good tracer .deb, then dpkg --purge tracer)"
			rm -rf "$WORK"
			exit 1
		fi
	fi
	# None of the package's files nor tracer's directories existed before (root_part
	# refuses otherwise), nor did the directories in dirs.new: a broken maintainer script
	# must not leave them behind either.
	if [ "$INSTALLED_BY_US" = 1 ]; then
		local f d
		while read -r _ _ f; do
			[ ! -e "$f" ] && [ ! -L "$f" ] || { echo "       (restoring the host: rm -f $f)"; rm -f "$f"; }
		done < "$WORK/files.expected"
		for d in /etc/tracer /var/lib/tracer /var/lib/tracer-ingest /run/tracer /usr/share/doc/tracer; do
			[ ! -e "$d" ] || { echo "       (restoring the host: rm -rf $d)"; rm -rf "$d"; }
		done
		while read -r d; do   # innermost first; only if empty
			[ ! -d "$d" ] || rmdir --ignore-fail-on-non-empty "$d"
		done < <(sort -r "$WORK/dirs.new")
	fi
	for u in $CREATED_USERS; do
		if getent passwd "$u" >/dev/null; then userdel "$u" || echo "       could not remove user $u" >&2; fi
		if getent group "$u" >/dev/null; then groupdel "$u" || echo "       could not remove group $u" >&2; fi
	done
	rm -rf "$WORK"
}
trap restore_host EXIT
trap "exit 130" INT TERM

echo "# $DEB"

# ---- control --------------------------------------------------------------
field() { dpkg-deb -f "$DEB" "$1"; }
check "control: Package tracer, Version $VERSION (debian/changelog), Architecture $ARCH" \
	test "$(field Package) $(field Version) $(field Architecture)" = "tracer $VERSION $ARCH"

# Depends, one package name per alternative, versions dropped.
depends=$(field Depends | tr ',' '\n' | sed 's/([^)]*)//g; s/^ *//; s/ *$//')
has_dep() { printf '%s\n' "$depends" | tr '|' '\n' | sed 's/^ *//; s/ *$//' | grep -qx "$1"; }
missing=
for p in libc6 libbpf1 liburing2 libsodium23 libcurl4 libseccomp2 libmicrohttpd12 libgnutls30 libsqlite3-0 libpq5 zlib1g; do
	has_dep "$p" || missing="$missing $p"
done
check "Depends: the runtime libraries (libbpf1 liburing2 libsodium23 libcurl4 libseccomp2 libmicrohttpd12 libgnutls30 libsqlite3-0 libpq5 zlib1g libc6)${missing:+; missing:$missing}" \
	test -z "$missing"
check "Depends: a systemd-sysusers provider (postinst runs systemd-sysusers)" \
	grep -qx "systemd | systemd-standalone-sysusers | systemd-sysusers" <<< "$depends"

# ---- contents: every file at its path, with its mode and owner, and nothing else ----
dpkg-deb -c "$DEB" > "$WORK/contents.raw"
# "MODE OWNER PATH" for files and links (path without the leading "."), dirs apart.
awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print $1, $2, p }' "$WORK/contents.raw" | sort > "$WORK/files.actual"
awk '$1 ~ /^d/ { p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); if (p != "") print $1, $2, p }' "$WORK/contents.raw" \
	| sort > "$WORK/dirs.actual"
{
	echo "-rwxr-xr-x root/root /usr/bin/tracer"
	for b in $SBIN; do echo "-rwxr-xr-x root/root /usr/sbin/$b"; done
	for u in $UNITS; do echo "-rw-r--r-- root/root /lib/systemd/system/$u"; done
	echo "-rw-r--r-- root/root /usr/lib/sysusers.d/tracer.conf"
	echo "-rw-r--r-- root/root /usr/lib/tmpfiles.d/tracer.conf"
	echo "-rw-r--r-- root/root /etc/tracer/tracer.conf"
	for d in "$ROOT/README.md" "$ROOT"/docs/*.md; do echo "-rw-r--r-- root/root /usr/share/doc/tracer/${d##*/}"; done
	echo "-rw-r--r-- root/root /usr/share/doc/tracer/copyright"
	echo "-rw-r--r-- root/root /usr/share/doc/tracer/changelog.gz"
	echo "-rw-r--r-- root/root /usr/share/tracer/prices.csv"
	echo "-rw-r--r-- root/root /usr/share/man/man1/tracer.1.gz"
	echo "-rw-r--r-- root/root /usr/share/man/man5/tracer.conf.5.gz"
	for b in $SBIN; do echo "-rw-r--r-- root/root /usr/share/man/man8/$b.8.gz"; done
	if [ -f "$ROOT/selinux/tracer.te" ]; then
		echo "-rw-r--r-- root/root /usr/share/selinux/packages/tracer.pp"
		echo "-rw-r--r-- root/root /usr/share/selinux/devel/include/contrib/tracer.if"
	fi
} | sort > "$WORK/files.expected"
# Directories: exactly the parents of those files, 0755 root.
awk '{ p = $3; while (sub(/\/[^\/]*$/, "", p) && p != "") print "drwxr-xr-x root/root " p }' "$WORK/files.expected" \
	| sort -u > "$WORK/dirs.expected"
check "contents: each file at its path with its mode and owner, no other file (- missing, + unexpected)" \
	diff -U0 --label expected --label package "$WORK/files.expected" "$WORK/files.actual"
check "contents: directories are the files' parents, 0755 root:root (- missing, + unexpected)" \
	diff -U0 --label expected --label package "$WORK/dirs.expected" "$WORK/dirs.actual"
no_build_leftovers() { ! grep -E '\.(o|a|c|h)$|/tests?/|/build[^/]*/|/test_|/fuzz_|\.git' "$WORK/files.actual"; }
check "contents: nothing from the build or the tests (objects, archives, sources, tests/, build/, fuzzers)" \
	no_build_leftovers
check "conffiles: /etc/tracer/tracer.conf only" \
	test "$(dpkg-deb -I "$DEB" conffiles 2>&1)" = /etc/tracer/tracer.conf

# ---- what the files say ----------------------------------------------------
dpkg-deb -x "$DEB" "$WORK/root"
check "config: /etc/tracer/tracer.conf is docs/tracer.conf.example" \
	cmp "$ROOT/docs/tracer.conf.example" "$WORK/root/etc/tracer/tracer.conf"
check "sysusers.d file is systemd/tracer.sysusers" \
	cmp "$ROOT/systemd/tracer.sysusers" "$WORK/root/usr/lib/sysusers.d/tracer.conf"
check "tmpfiles.d file is systemd/tracer.tmpfiles" \
	cmp "$ROOT/systemd/tracer.tmpfiles" "$WORK/root/usr/lib/tmpfiles.d/tracer.conf"
check "man pages: each names exactly its binary's --help options, tracer.conf(5) the example's keys" \
	"$ROOT/tests/package/check-man.sh" "$WORK/root/usr/share/man" "$ROOT/docs/tracer.conf.example" \
	"$WORK/root/usr/bin" "$WORK/root/usr/sbin"
# lintian: no error; its warnings (docs/install.md says why each one is left) are listed.
if command -v lintian >/dev/null; then
	lintian --fail-on error --tag-display-limit 0 "$DEB" > "$WORK/lintian" 2>&1
	rc=$?
	check "lintian: no error (exit $rc)" test "$rc" = 0
	sed 's/^/       lintian: /' "$WORK/lintian"
else
	skip "lintian: not installed (apt-get install lintian; make deps)"
fi
for u in $UNITS; do
	f=$WORK/root/lib/systemd/system/$u
	b=${u%.service}
	case $b in # the daemons read the config; the exporter is tracer's export otlp, configured from its env file
	tracer-export-otlp) want="ExecStart=/usr/bin/tracer export otlp --db \${TRACER_LAKE} --follow --state"
		want="$want /var/lib/tracer-export-otlp/otlp.state \$TRACER_EXPORT_ARGS" ;;
	*) want="ExecStart=/usr/sbin/$b --config /etc/tracer/tracer.conf" ;;
	esac
	check "unit $u: $want" grep -qxF "$want" "$f"
	check "unit $u: no @PLACEHOLDER@ left" not grep -n '@[A-Za-z_]*@' "$f"
	docs_missing=
	for d in $(sed -n 's/^Documentation=//p' "$f"); do
		case $d in file:*) [ -f "$WORK/root${d#file:}" ] || docs_missing="$docs_missing $d";; esac
	done
	check "unit $u: its Documentation= files are in the package${docs_missing:+; not:$docs_missing}" test -z "$docs_missing"
done

# ---- binaries --------------------------------------------------------------
dbg_list=
[ -z "$DBGSYM" ] || dbg_list=$(dpkg-deb -c "$DBGSYM" | awk '{ print $6 }')
for bin in usr/bin/tracer $(for b in $SBIN; do echo "usr/sbin/$b"; done); do
	f=$WORK/root/$bin
	check "/$bin: PIE (ELF type DYN with an interpreter)" is_pie "$f"
	check "/$bin: full RELRO (GNU_RELRO and BIND_NOW)" is_full_relro "$f"
	check "/$bin: stripped (no .symtab, no .debug_* section)" is_stripped "$f"
	id=$(readelf -n "$f" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	if [ -z "$id" ]; then
		fail "/$bin: has a build id (its debug info is found by it)"
	elif [ -z "$DBGSYM" ]; then
		fail "/$bin: debug info in tracer-dbgsym: no tracer-dbgsym_${VERSION}_${ARCH}.(d)deb in $BUILD/deb"
	else
		check "/$bin: debug info in ${DBGSYM##*/} (/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug)" \
			grep -qxF "./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" <<< "$dbg_list"
	fi
done
# Every library a binary needs comes from a package named in Depends.
needed_missing=
for bin in usr/bin/tracer $(for b in $SBIN; do echo "usr/sbin/$b"; done); do
	for so in $(readelf -d "$WORK/root/$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
		pkg=
		[ -z "$path" ] || pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1)
		[ -z "$pkg" ] && pkg=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1)
		if [ -z "$pkg" ]; then needed_missing="$needed_missing $bin:$so(no package on this host)"
		elif ! has_dep "$pkg"; then needed_missing="$needed_missing $bin:$so($pkg)"; fi
	done
done
check "Depends: names the package of every library the binaries need (readelf NEEDED)${needed_missing:+; not:$needed_missing}" \
	test -z "$needed_missing"

# ---- maintainer scripts (what they do is checked by the install below) -----
for s in postinst prerm postrm; do dpkg-deb -I "$DEB" "$s" > "$WORK/$s" 2>/dev/null || : > "$WORK/$s"; done
check "postinst: creates the users (systemd-sysusers tracer.conf)" \
	grep -Eq '^[[:space:]]*systemd-sysusers .*tracer\.conf' "$WORK/postinst"
check "postinst: creates the directories (systemd-tmpfiles --create tracer.conf)" \
	grep -Eq '^[[:space:]]*systemd-tmpfiles .*--create tracer\.conf' "$WORK/postinst"
# dh_installsystemd's enabling snippet says "was-enabled defaults to true"; its start
# snippets run deb-systemd-invoke start or $_dh_action (start on first install).
check "postinst: neither enables on first install nor starts a unit" \
	not grep -En 'was-enabled defaults to true|deb-systemd-invoke +(start|restart|\$_dh_action)|systemctl .*(enable|start) ' \
	"$WORK/postinst"
check "prerm: stops the units on removal" \
	grep -q 'deb-systemd-invoke stop tracer-export-otlp.service tracer-web.service tracer-processor.service tracer-ingest.service tracer-collector.service' \
	<<< "$(sed 's/\\$//' "$WORK/prerm" | tr '\n\t' '  ' | tr -s ' ')"
check "postrm: purge removes /var/lib/tracer /var/lib/tracer-ingest /var/lib/tracer-export-otlp /run/tracer /etc/tracer" \
	grep -Eq '^[[:space:]]*rm -rf /var/lib/tracer /var/lib/tracer-ingest /var/lib/tracer-export-otlp /run/tracer /etc/tracer$' "$WORK/postrm"

# ---- install, remove, purge (root) -------------------------------------------
dpkg_status() { dpkg-query -W -f='${db:Status-Status}' tracer 2>/dev/null; }
# user_ok NAME HOME: a system user with its own group, that home and no login shell.
user_ok() {
	local n uid gid home shell
	IFS=: read -r n _ uid gid _ home shell < <(getent passwd "$1") || return 1
	echo "getent: $n uid $uid gid $gid home $home shell $shell"
	[ "$uid" -lt 1000 ] && [ "$(getent group "$gid" | cut -d: -f1)" = "$1" ] && [ "$home" = "$2" ] &&
		case $shell in */nologin|*/false) true;; *) false;; esac
}
# find_none ARGS...: find prints nothing.
find_none() { local l; l=$(find "$@" 2>/dev/null); [ -z "$l" ] || { echo "$l"; false; }; }
usage_ok() { "$1" --help 2>&1 | grep -q "^usage: ${1##*/}"; }
runs_ok() { "$1" --help >/dev/null 2>&1; }
# dpkg_lists_all: every file of the package is in dpkg -L tracer.
dpkg_lists_all() {
	local missing
	missing=$(awk '{ print $3 }' "$WORK/files.expected" | sort | comm -23 - <(dpkg -L tracer | sort))
	[ -z "$missing" ] || { echo "not listed: $missing"; false; }
}
# removed_ok: dpkg keeps only the config; no file of the package but the conffile is left.
removed_ok() {
	local f left=
	[ "$(dpkg_status)" = config-files ] || { echo "dpkg status: $(dpkg_status)"; return 1; }
	while read -r _ _ f; do
		[ "$f" = /etc/tracer/tracer.conf ] || [ ! -e "$f" ] || left="$left $f"
	done < "$WORK/files.expected"
	[ -z "$left" ] || { echo "left:$left"; false; }
}
purged_ok() { local s; s=$(dpkg_status); [ -z "$s" ] || [ "$s" = not-installed ]; }

root_part() {
	local status u f d left present= before_users=
	status=$(dpkg_status)
	if [ -n "$status" ] && [ "$status" != not-installed ]; then
		skip "install and purge: tracer is on this host already (dpkg status '$status'); purging it would destroy its config and state"
		return
	fi
	for d in /etc/tracer /var/lib/tracer /var/lib/tracer-ingest /run/tracer; do
		[ ! -e "$d" ] || present="$present $d"
	done
	while read -r _ _ f; do
		[ ! -e "$f" ] || present="$present $f"
	done < "$WORK/files.expected"
	for u in $UNITS; do
		for d in /etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system /usr/lib/systemd/system; do
			[ ! -e "$d/$u" ] || present="$present $d/$u"
		done
	done
	[ ! -e /usr/share/doc/tracer ] || present="$present /usr/share/doc/tracer"
	if [ -n "$present" ]; then
		skip "install and purge: already on this host (make install?), purge would remove or they would shadow the package's:$present"
		return
	fi
	for u in tracer tracer-ingest; do
		if getent passwd "$u" >/dev/null || getent group "$u" >/dev/null; then
			before_users="$before_users $u"
		else
			CREATED_USERS="$CREATED_USERS $u"
		fi
	done

	# The package's directories this host lacks: restore_host removes them if left.
	while read -r _ _ d; do [ -e "$d" ] || echo "$d"; done < "$WORK/dirs.expected" > "$WORK/dirs.new"
	INSTALLED_BY_US=1
	check "dpkg -i installs it" dpkg -i "$DEB"
	check "dpkg: tracer is installed" test "$(dpkg_status)" = installed

	[ -z "$before_users" ] ||
		skip "postinst creates the users: they existed before this test ($before_users); only their form is checked"
	check "user tracer: system user, group tracer, home /var/lib/tracer, no login shell" user_ok tracer /var/lib/tracer
	check "user tracer-ingest: system user, group tracer-ingest, home /var/lib/tracer-ingest, no login shell" \
		user_ok tracer-ingest /var/lib/tracer-ingest
	check "directory /etc/tracer: 0755 root:root; tracer.conf 0644 root:root" \
		test "$(stat -c '%a %U:%G' /etc/tracer /etc/tracer/tracer.conf 2>&1 | tr '\n' ' ')" = "755 root:root 644 root:root "
	check "directory /var/lib/tracer: 0700 tracer:tracer" \
		test "$(stat -c '%a %U:%G' /var/lib/tracer 2>&1)" = "700 tracer:tracer"
	check "directory /var/lib/tracer-ingest: 0700 tracer-ingest:tracer-ingest" \
		test "$(stat -c '%a %U:%G' /var/lib/tracer-ingest 2>&1)" = "700 tracer-ingest:tracer-ingest"

	for u in $UNITS; do
		check "unit $u: installed, not enabled (systemctl --root=/ is-enabled: disabled)" \
			test "$(systemctl --root=/ is-enabled "$u" 2>&1)" = disabled
	done
	check "no symlink to a tracer unit under /etc/systemd/system" find_none /etc/systemd/system -lname '*tracer-*'
	if [ -d /run/systemd/system ]; then
		for u in $UNITS; do
			check "unit $u: not started (systemctl is-active: inactive)" test "$(systemctl is-active "$u" 2>&1)" = inactive
		done
	else
		echo "       (systemd is not PID 1 here: no unit can be active; the process check below stands)"
	fi
	check "no tracer daemon running from /usr/sbin" not pgrep -a -f '^/usr/sbin/tracer-(collector|processor|ingest)( |$)'

	check "/usr/sbin/tracer-collector --help runs and prints its usage" usage_ok /usr/sbin/tracer-collector
	for f in /usr/sbin/tracer-processor /usr/sbin/tracer-ingest /usr/bin/tracer; do
		check "$f --help runs (exit 0)" runs_ok "$f"
	done
	check "dpkg -L tracer lists every file of the package" dpkg_lists_all

	# A changed conffile survives a reinstall; postinst runs a second time without harm.
	echo "# changed by check-deb.sh" >> /etc/tracer/tracer.conf
	check "dpkg -i again (reinstall: postinst a second time) succeeds" dpkg -i "$DEB"
	check "reinstall keeps the changed /etc/tracer/tracer.conf" grep -qx "# changed by check-deb.sh" /etc/tracer/tracer.conf

	check "dpkg -r tracer removes it" dpkg -r tracer
	check "after remove: dpkg status config-files, no file of the package left but the config" removed_ok
	check "after remove: the config and the state directories stay" \
		test -f /etc/tracer/tracer.conf -a -d /var/lib/tracer -a -d /var/lib/tracer-ingest

	# What an admin and the daemons leave behind: a key, a spool segment, a lake, the socket.
	echo key > /etc/tracer/signing.key
	mkdir -p /var/lib/tracer/spool /run/tracer
	echo seg > /var/lib/tracer/spool/seg-1
	echo db > /var/lib/tracer-ingest/lake.db
	: > /run/tracer/collector.sock
	check "dpkg --purge tracer succeeds" dpkg --purge tracer
	check "after purge: dpkg knows no tracer" purged_ok
	left=
	while read -r _ _ f; do
		[ ! -e "$f" ] && [ ! -L "$f" ] || left="$left $f"
	done < "$WORK/files.expected"
	while read -r _ _ d; do
		case $d in */tracer|*/tracer/*) [ ! -e "$d" ] || left="$left $d/";; esac
	done < "$WORK/dirs.expected"
	check "after purge: no file or directory of the package left (dpkg-deb -c)${left:+; left:$left}" test -z "$left"
	left=
	for d in /etc/tracer /var/lib/tracer /var/lib/tracer-ingest /run/tracer; do
		[ ! -e "$d" ] || left="$left $d"
	done
	check "after purge: /etc/tracer (keys too), /var/lib/tracer, /var/lib/tracer-ingest, /run/tracer are gone${left:+; left:$left}" \
		test -z "$left"
	check "after purge: no systemd state of the units (links, deb-systemd-helper)" \
		find_none /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
			/var/lib/systemd/deb-systemd-helper-masked -name 'tracer-*'
	check "after purge: the users stay (Debian policy: their uids may still own files)" \
		getent passwd tracer tracer-ingest
}

if [ "$(id -u)" != 0 ]; then
	skip "install, remove, purge: needs root (sudo $0 $BUILD)"
elif ! command -v systemd-sysusers >/dev/null; then
	skip "install, remove, purge: no systemd-sysusers on this host (the package depends on it)"
else
	root_part
fi

if [ "$failed" -ne 0 ]; then
	echo "check-deb: $failed check(s) failed"
	exit 1
fi
echo "check-deb: all passed"
