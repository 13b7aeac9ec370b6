#!/usr/bin/env bash
# Storage and syscall I/O are the kernel's: a child that writes and fsyncs
# 64 MiB to a disk-backed file has write_bytes within 5% of 64 MiB and
# wchar >= 64 MiB; one that reads it back has rchar >= its size; and all
# four counters equal the kernel's final /proc/PID/io of that process.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
e2e_require_bpf

mib=64
# write_bytes counts storage writes: tmpfs and ramfs have none. Find a disk.
dir=
for d in "$TMP" "$B"; do
	case $(stat -f -c %T "$d") in
	tmpfs | ramfs) ;;
	*) dir=$d; break ;;
	esac
done
storage=
if [ -z "$dir" ]; then
	echo "note: write_bytes not checked: $TMP and $B are both on tmpfs (set TMPDIR to a disk-backed directory)"
	dir=$TMP
	storage=--no-storage
elif [ "$dir" = "$B" ]; then
	dir=$(mktemp -d "$B/e2e-io.XXXXXX") || e2e_fail "cannot create a directory in $B"
	e2e_on_exit "rm -rf '$dir'"
fi
file=$dir/data
echo "file: $file ($(stat -f -c %T "$dir"))"

tracer_run write --json "$TMP/write.json" -- "$W" measure write "$mib" "$file"
expect_rc "measure exits 0" 0 write
check_report io-write "$TMP/write.json" "$TMP/write.out" --mib "$mib" $storage

tracer_run read --json "$TMP/read.json" -- "$W" measure read "$file"
expect_rc "measure exits 0" 0 read
check_report io-read "$TMP/read.json" "$TMP/read.out" --size $((mib << 20))
