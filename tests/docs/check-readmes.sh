#!/usr/bin/env bash
# Every source file is named by its folder's README.md, so the READMEs stay a
# map of the tree (issue 29):
#
#   tests/docs/check-readmes.sh [REPO_DIR]
#
# Which files count: every file git tracks or would track (untracked files not
# ignored by .gitignore count too, so a new file fails before it is committed;
# every file under REPO_DIR but build/, when it is not a git checkout), except
#   - the top-level files (Makefile, README.md: the top README is the map of
#     the folders, not of files) and dot-paths (.gitignore, .ci/);
#   - documentation and pictures: *.md, *.png, *.svg, *.jpg, and all of docs/
#     (the documentation itself, with tracer.conf.example);
#   - the fuzzers' inputs, data in a folder per target: tests/fuzz/corpus/**,
#     tests/fuzz/crashes/** (tests/fuzz/README.md describes them);
#   - vendored third-party files: tests/e2e/data/otlp/opentelemetry/** and
#     tests/e2e/data/otlp/LICENSE (that folder's README names their origin).
# So code (.c .h .bpf.c .sh .py .js .css .html), build and packaging inputs
# (.in .mk .te .fc .if .proto, debian/*, systemd/*), workflows the tests run
# (Snakefile*, .smk, .cwl) and data the tree ships (data/prices.csv) all count,
# and a file of a new kind counts until it is excluded here.
#
# Which README: the README.md of the file's folder or, if that folder has none,
# of the nearest parent folder below the top that has one (so
# tests/e2e/data/README.md describes tests/e2e/data/tune/, debian/README.md
# describes debian/source/). A top-level folder with no README.md fails.
#
# Named: the README mentions the file's base name as a word of its own (plain,
# in backquotes, or after a '/' as in `html/embed.py`): `run.sh` is not named
# by `test_run.sh`. A module is one .c and its .h in the same folder, so
# naming x.c names x.h too; a header with no .c of its own (ring.h, the
# records in include/) is named itself.
#
# Prints "FOLDER/README.md does not name FILE" for each one missing and exits
# 1; prints one summary line and exits 0 when every file is named.
set -euo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
cd "$top"

if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files --cached --others --exclude-standard; }
else
	list() { find . -type f ! -path './build/*' | sed 's|^\./||'; }
fi

counts() {
	case "$1" in
	*/*) ;;                                  # in a folder
	*) return 1 ;;                           # top-level files
	esac
	case "$1" in
	.* | */.*) return 1 ;;
	*.md | *.png | *.svg | *.jpg) return 1 ;;
	docs/*) return 1 ;;
	tests/fuzz/corpus/* | tests/fuzz/crashes/*) return 1 ;;
	tests/e2e/data/otlp/opentelemetry/* | tests/e2e/data/otlp/LICENSE) return 1 ;;
	esac
	return 0
}

# The README.md that describes folder $1: its own, else its nearest parent's.
readme_for() {
	local d=$1
	while [ "$d" != . ]; do
		[ -f "$d/README.md" ] && { echo "$d/README.md"; return 0; }
		d=$(dirname "$d")
	done
	return 1
}

# The base name as a regular expression, matched as a word of its own.
names() {
	local re
	re=$(printf '%s' "$2" | sed 's/[.*^$+?(){}|\\[]/\\&/g')
	grep -qE "(^|[^A-Za-z0-9_.-])${re}(\$|[^A-Za-z0-9_-]|\.(\$|[^A-Za-z0-9_]))" "$1"
}

missing=0 files=0
declare -A readmes=()
while IFS= read -r f; do
	counts "$f" || continue
	[ -f "$f" ] || continue                  # deleted in the work tree, not yet in git
	files=$((files + 1))
	dir=$(dirname "$f")
	if ! r=$(readme_for "$dir"); then
		echo "${f%%/*}/README.md does not exist (it would name $f)"
		missing=$((missing + 1))
		continue
	fi
	readmes[$r]=1
	b=$(basename "$f")
	if ! names "$r" "$b" && ! { [ "${b%.h}" != "$b" ] && [ -f "${f%.h}.c" ] && names "$r" "${b%.h}.c"; }; then
		echo "$r does not name ${f#"$(dirname "$r")"/}"
		missing=$((missing + 1))
	fi
done < <(list)

if [ "$missing" -gt 0 ]; then
	echo "readme-check: $missing of $files files are not named by their folder's README.md (tests/docs/check-readmes.sh says which count)" >&2
	exit 1
fi
echo "readme-check: each of $files source files is named by its folder's README.md (${#readmes[@]} READMEs)"
