#!/bin/bash
# collx lint: checkpatch.pl --strict (options in .checkpatch.conf) over the
# kernel sources, and sparse over a full module build.
#
#   tests/lint.sh KDIR MODDIR
# Prints one TAP line per tool; exits non-zero when either finds anything.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
KDIR=$1
MODDIR=$2
TOOLS=$SRC/.build/tools
status=0

# checkpatch.pl is not in the headers packages: take it (and the data it
# reads) from the newest linux-source tarball.
checkpatch() {
	local tarball dir
	if [ ! -x "$TOOLS/scripts/checkpatch.pl" ]; then
		tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
		[ -n "$tarball" ] || { echo "no /usr/src/linux-source-*.tar.xz" >&2; return 1; }
		dir=$(basename "$tarball" .tar.xz)
		mkdir -p "$TOOLS"
		tar -xf "$tarball" -C "$TOOLS" --strip-components=1 \
			"$dir/scripts/checkpatch.pl" "$dir/scripts/spelling.txt" \
			"$dir/scripts/const_structs.checkpatch" || return 1
	fi
	echo "$TOOLS/scripts/checkpatch.pl"
}

# Trace headers are laid out as the TRACE_EVENT() macros want, which
# checkpatch's parenthesis rules do not know; they get those two rules off.
files=$(cd "$SRC" && ls kmod/*.[ch] kmod/core/*.[ch] include/uapi/linux/*.h 2>/dev/null |
	grep -v '^kmod/trace\.h$')
trace_files=$(cd "$SRC" && ls kmod/trace.h 2>/dev/null)
if [ -n "${LINT_SPARSE_ONLY:-}" ]; then
	:
elif cp=$(checkpatch); then
	# checkpatch reads .checkpatch.conf from the current directory.
	if out=$(cd "$SRC" && "$cp" --no-tree --strict --terse -f $files 2>&1 &&
		{ [ -z "$trace_files" ] || "$cp" --no-tree --strict --terse \
			--ignore OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT -f $trace_files 2>&1; }); then
		echo "ok - checkpatch --strict: $(echo "$files $trace_files" | wc -w) files clean"
	else
		echo "$out" | grep -v '^total:' | sed 's/^/# /'
		echo "not ok - checkpatch --strict"
		status=1
	fi
else
	echo "not ok - checkpatch: cannot find checkpatch.pl"
	status=1
fi

if ! command -v sparse >/dev/null; then
	echo "not ok - sparse: not installed"
	exit 1
fi
# C=2 checks every file, rebuilt or not.
# The same flags as `make module`: kbuild then has no reason to recompile,
# and the next `make module` is a no-op.
out=$(make -j"$(nproc)" -C "$KDIR" M="$MODDIR" W=1 KCFLAGS=-Werror C=2 CHECK="sparse -Wno-unknown-attribute" modules 2>&1)
rc=$?
warn=$(echo "$out" | grep -E '(warning|error):' | grep -v 'Skipping BTF')
if [ "$rc" = 0 ] && [ -z "$warn" ]; then
	echo "ok - sparse: clean against $(basename "$(dirname "$KDIR")")"
else
	echo "$warn" | sed 's/^/# /'
	echo "not ok - sparse against $KDIR"
	status=1
fi
exit $status
