#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the collx core's KUnit suites (collx_reduce, collx_sched, collx_uapi)
# under UML with kunit.py, from Debian's linux-source-6.1 package.
#
# The source tree is extracted once into .build/kunit/ and reused; kmod/core
# is linked in as lib/collx.  Prints flat TAP on stdout, one line per test
# case ("ok N - suite.case"), and exits non-zero if any case failed or the
# run did not complete.  kunit.py's own output goes to .build/kunit/kunit.log.
#
# Environment: COLLX_KUNIT_SRC (source tarball, default
# /usr/src/linux-source-6.1.tar.xz), COLLX_KUNIT_JOBS (default 2),
# COLLX_KUNIT_TIMEOUT (seconds for the UML run, default kunit.py's 300;
# make check runs this beside the lab, niced, and gives it more).
#
# The ledger (tests/kunit/passed, the debug kernel's pattern): a pass on a
# committed kmod/core adds the line "<key> <cases> <when>", the key naming
# kmod/core's tree, this script and the kernel source.  With --if-changed
# (make check, CI) nothing is built when the ledger has the key: the UML
# kernel's cold build is 10-30 min of CPU that CI would otherwise spend
# on code it already passed.  make check-kunit always runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARBALL=${COLLX_KUNIT_SRC:-/usr/src/linux-source-6.1.tar.xz}
JOBS=${COLLX_KUNIT_JOBS:-2}
CACHE=$ROOT/.build/kunit
NAME=$(basename "$TARBALL" .tar.xz)
TREE=$CACHE/$NAME
BUILD=$CACHE/build-$NAME
LOG=$CACHE/kunit.log

log() { printf 'kunit: %s\n' "$*" >&2; }

LEDGER=$ROOT/tests/kunit/passed
# What a pass vouches for; "dirty" when kmod/core or this script has
# uncommitted changes (never recorded).
ledger_key() {
	git -C "$ROOT" diff --quiet HEAD -- kmod/core tests/kunit/run.sh 2>/dev/null || {
		echo dirty
		return
	}
	echo "$(git -C "$ROOT" rev-parse --short=12 HEAD:kmod/core)-$(git -C "$ROOT" rev-parse --short=12 HEAD:tests/kunit/run.sh)-$NAME"
}
KEY=$(ledger_key)
if [ "${1:-}" = --if-changed ] && [ "$KEY" != dirty ] && grep -q "^$KEY " "$LEDGER" 2>/dev/null; then
	echo "ok 1 - kunit: kmod/core is the tree KUnit passed on ($(grep "^$KEY " "$LEDGER" | tail -n1 | cut -d' ' -f2-), tests/kunit/passed) # SKIP not built again; make check-kunit runs it"
	echo "1..1"
	exit 0
fi

[ -r "$TARBALL" ] || {
	log "$TARBALL missing (apt-get install ${NAME})"
	exit 2
}
mkdir -p "$CACHE"

# 1. Extract once; the stamp says the tree is complete.
if [ ! -e "$CACHE/.extracted-$NAME" ]; then
	log "extracting $TARBALL (about a minute)"
	rm -rf "$TREE"
	tar -C "$CACHE" -xf "$TARBALL"
	touch "$CACHE/.extracted-$NAME"
fi

# 2. Link kmod/core in as lib/collx and hook it up, idempotently.
ln -sfn "$ROOT/kmod/core" "$TREE/lib/collx"
grep -qx 'source "lib/collx/Kconfig"' "$TREE/lib/Kconfig" ||
	echo 'source "lib/collx/Kconfig"' >>"$TREE/lib/Kconfig"
grep -qx 'obj-y += collx/' "$TREE/lib/Makefile" ||
	echo 'obj-y += collx/' >>"$TREE/lib/Makefile"

# 3. Build and run under UML.  The suites need none of the block layer,
# io_uring, AIO, input devices or kallsyms (two more links of vmlinux):
# left out, the kernel has a sixth fewer objects to build.
log "kunit.py run (log: $LOG)"
start=$(date +%s)
set +e
(cd "$TREE" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$ROOT/kmod/core/.kunitconfig" \
	--kconfig_add CONFIG_EXPERT=y --kconfig_add '# CONFIG_BLOCK is not set' \
	--kconfig_add '# CONFIG_IO_URING is not set' --kconfig_add '# CONFIG_AIO is not set' \
	--kconfig_add '# CONFIG_INPUT is not set' --kconfig_add '# CONFIG_KALLSYMS is not set' \
	--build_dir="$BUILD" --jobs="$JOBS" --timeout="${COLLX_KUNIT_TIMEOUT:-300}" \
	--raw_output=all) >"$LOG" 2>&1
rc=$?
log "kunit.py exited $rc after $(($(date +%s) - start)) s"

# 4. Flatten KTAP: one line per case, and per parameter of a parameterised
# case, named suite.case[.param].  A "# Subtest: X" line sits at the
# indentation of X's children; X's own result is one level (4 spaces) out.
ktap_flatten() {
	awk '
	{
		line = $0
		sub(/^\[[ 0-9.:]+\] /, "", line)	# a console timestamp
		ind = match(line, /[^ ]/) - 1
		d = int(ind / 4)
		body = substr(line, ind + 1)
		if (body ~ /^# Subtest: /) {
			name = body; sub(/^# Subtest: /, "", name)
			at[d] = name
			next
		}
		if (d == 0 && body ~ /^1\.\.[0-9]+$/ && plan == "") {
			plan = substr(body, 4) + 0	# suites the kernel runs
			next
		}
		if (body !~ /^(not )?ok [0-9]+ /)
			next
		if (d == 0)
			suites++
		pass = body !~ /^not ok/
		skip = body ~ /# SKIP/
		desc = body
		sub(/^(not )?ok [0-9]+ (- )?/, "", desc)
		sub(/ *#.*$/, "", desc)
		if (d == 0 || at[1] !~ /^collx_/)
			next		# a suite result, or not ours
		if (d == 1) {
			if ((at[1] "." desc) in params)
				next	# counted per parameter
			full = at[1] "." desc
		} else if (d == 2) {
			params[at[1] "." at[2]] = 1
			full = at[1] "." at[2] "." desc
		} else {
			next
		}
		n++
		printf "%sok %d - %s%s\n", pass ? "" : "not ", n, full,
			skip ? " # SKIP" : ""
		if (!pass)
			failed++
	}
	END {
		if (plan == "" || suites < plan) {
			# the kernel died or hung before reporting every suite
			n++
			printf "not ok %d - kunit.run_complete (%d of %s suites)\n",
				n, suites, plan == "" ? "?" : plan
			failed++
		}
		printf "1..%d\n", n
		if (n == 0) {
			print "# no collx test results found" > "/dev/stderr"
			exit 1
		}
		exit failed ? 1 : 0
	}' "$1"
}

set +e
ktap_flatten "$LOG" | tee "$CACHE/kunit.tap"
tap_rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ] || [ "$tap_rc" -ne 0 ]; then
	log "FAILED (kunit.py $rc, tests $tap_rc); last lines of $LOG:"
	tail -n 40 "$LOG" | sed 's/^/kunit: | /' >&2
	exit 1
fi
if [ "$KEY" != dirty ]; then
	{
		grep -v "^$KEY " "$LEDGER" 2>/dev/null
		echo "$KEY $(grep -c '^ok ' "$CACHE/kunit.tap")-cases $(date -u +%Y-%m-%dT%H:%MZ)"
	} >"$LEDGER.tmp" && mv "$LEDGER.tmp" "$LEDGER"
	log "passed: recorded in ${LEDGER#"$ROOT"/} for kmod/core $(git -C "$ROOT" rev-parse --short HEAD:kmod/core)"
fi
exit 0
