#!/bin/bash
# collx test driver: `make check` and its stages.
#
#   tests/check.sh all|build|lint|package-root|package|demo|arm64|arm64-lab|unit|kunit|lab|debug|debug-ci [KERNEL...]
#
# all: build; then unit, lint (with the .debs), package-root, demo (make
# demo's build in a fresh clone), kunit (unless its ledger has kmod/core)
# and arm64 at nice 19 beside the labs (they only need the host's CPU, and
# TCG nodes leave some idle); then the package labs and the aarch64 lab,
# which must not share the cores with another lab.
# Prints TAP (one numbered line per test, details as '#' comments) and ends
# with "N passed, N failed, N skipped".  Exits non-zero when anything failed.
# Lab kernels default to "6.1 6.12" (COLLX_LAB_KERNELS overrides); the lab
# runs every case, or those matching the globs in COLLX_LAB_CASES.
set -uo pipefail
# tap() runs in this shell at the end of a pipeline, so its counts survive.
shopt -s lastpipe

SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC" || exit 1
STAGE=${1:-all}
shift || true
KERNELS=${*:-${COLLX_LAB_KERNELS:-6.1 6.12}}
LOGS=$SRC/.build/check
mkdir -p "$LOGS"

n=0 passed=0 failed=0 skipped=0

# Number and count TAP lines read on stdin; pass comments through.
tap() {
	local line
	while IFS= read -r line; do
		case $line in
		"not ok"*)
			n=$((n + 1)) failed=$((failed + 1))
			echo "not ok $n ${line#not ok }" ;;
		"ok"*"# SKIP"*)
			n=$((n + 1)) skipped=$((skipped + 1))
			echo "ok $n ${line#ok }" ;;
		"ok"*)
			n=$((n + 1)) passed=$((passed + 1))
			echo "ok $n ${line#ok }" ;;
		"#"*) echo "$line" ;;
		*) ;;
		esac
	done
}

# Strip a TAP line's own number: "ok 12 - x" -> "ok - x".
unnumber() {
	sed -E 's/^(not ok|ok)[[:space:]]+[0-9]+/\1/'
}

# Run a command; one TAP line with its name, then a comment with its time;
# its output kept in a log and its tail shown on failure.
step() {
	local name=$1 log s0
	shift
	log=$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9.\n-' _).log
	s0=$(date +%s)
	if "$@" >"$log" 2>&1; then
		echo "ok - $name"
	else
		tail -n 25 "$log" | sed 's/^/# /'
		echo "not ok - $name (log: ${log#"$SRC"/})"
	fi
	echo "# ($(($(date +%s) - s0)) s)"
}

resolve_krel() {
	(cd /boot && ls -1 vmlinuz-"$1".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
}

# What the labs need, built once here (the nodes read this tree over 9p);
# the lint stage checks the same sources beside the labs.
stage_build() {
	local k krel
	for k in $KERNELS; do
		krel=$(resolve_krel "$k")
		if [ -z "$krel" ]; then
			echo "not ok - build: no $k kernel installed"
			continue
		fi
		step "build: collx.ko for $krel (W=1, -Werror)" \
			make --no-print-directory -j"$(nproc)" module KVER="$krel"
		step "build: collx_test_exporter.ko for $krel (W=1, -Werror)" \
			make --no-print-directory -C tests/dmabuf module KVER="$krel"
	done
	# Everything the lab's nodes run, built once here (they read this
	# tree over 9p).
	step "build: libcollx and tools" make --no-print-directory -C user
	step "build: lab test programs" make --no-print-directory -C tests/progs
	if [ -f bpf/Makefile ]; then
		step "build: BPF programs and collx-netmon" make --no-print-directory bpf
	fi
	step "build: dma-buf test programs" make --no-print-directory -C tests/dmabuf programs collx
	step "build: ioctl fuzzer and errno contract" make --no-print-directory -C tests/fuzz
	step "build: fault-injection programs" make --no-print-directory -C tests/fault
	step "build: collx-doctor" make --no-print-directory -C user/doctor
	if [ -f user/ckpt/Makefile ]; then
		step "build: libcollx_ckpt and collx-ckptd" make --no-print-directory -C user/ckpt
	fi
	if [ -f user/torch/Makefile ]; then
		step "build: the torch.distributed backend" make --no-print-directory -j"$(nproc)" -C user/torch
	fi
	# 95-deb installs them in a node when asked to (COLLX_LAB_DEB=node,
	# by hand: DKMS in TCG); make check's package stage boots its own.
	[ "${COLLX_LAB_DEB:-0}" != node ] ||
		step "build: Debian packages (make deb)" scripts/deb/build.sh
	local dv mv
	dv=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
	mv=$(sed -n 's/^#define COLLX_MODULE_VERSION[[:space:]]*"\(.*\)"/\1/p' kmod/collx_loc.h)
	if [ -n "$dv" ] && [ "$dv" = "$mv" ]; then
		echo "ok - build: dkms.conf version $dv matches the module"
	else
		echo "not ok - build: dkms.conf version '$dv' != module version '$mv'"
	fi
}

# checkpatch --strict and sparse over the module and the dma-buf test
# exporter for every lab kernel (checkpatch once: the sources are the same),
# in a build tree of their own (.build/lint), so that nothing the running
# labs load is rebuilt under them; then the man pages and the Debian
# packages, which the labs do not need.
stage_lint() {
	local k krel first=1 lb=$SRC/.build/lint
	for k in $KERNELS; do
		krel=$(resolve_krel "$k")
		[ -n "$krel" ] || continue
		step "lint: collx.ko for $krel in .build/lint (W=1, -Werror)" \
			make --no-print-directory -j"$(nproc)" module KVER="$krel" COLLX_BUILD="$lb"
		if [ "$first" = 1 ]; then
			tests/lint.sh "/lib/modules/$krel/build" "$lb/$krel" 2>&1
			first=0
		else
			LINT_SPARSE_ONLY=1 tests/lint.sh "/lib/modules/$krel/build" "$lb/$krel" 2>&1
		fi
		step "lint: collx_test_exporter.ko for $krel (checkpatch, sparse)" \
			make --no-print-directory -C tests/dmabuf lint KVER="$krel" COLLX_BUILD="$lb"
	done
	step "build: man pages" make --no-print-directory -C Documentation/man
	[ "${COLLX_LAB_DEB:-0}" = node ] ||
		step "build: Debian packages (make deb)" scripts/deb/build.sh
}

# The package stage's root (tests/lab/deb-lab.sh root): the .debs
# installed into an overlay of the host's /, DKMS's builds for both lab
# kernels, made here beside the labs so that the package labs only boot.
stage_package_root() {
	tests/lab/deb-lab.sh root 2>&1 | tee "$LOGS/package-root.log" | grep -E '^(ok|not ok|#)'
	[ "${PIPESTATUS[0]}" = 0 ] || echo "not ok - package: root (log: .build/check/package-root.log)"
}

# The packages as an admin uses them, on each lab kernel: a 2-node boot of
# that root, where 95-deb checks what dpkg, DKMS and udev made
# (tests/lab/deb-lab.sh).
stage_package() {
	local k
	for k in $KERNELS; do
		tests/lab/deb-lab.sh "$k" 2>&1 | tee "$LOGS/package-$k.log" | grep -E '^(ok|not ok|#)'
		[ "${PIPESTATUS[0]}" = 0 ] || echo "not ok - package: $k (log: .build/check/package-$k.log)"
	done
}

# Host tests: the shared core (tests/unit), libcollx (tests/unit/lib),
# the schedules simulated at scale with the cost model (tests/sim),
# collx-netmon's attribution logic (bpf check), the doctor, checkpoints,
# the man pages, the plot scripts and the ioctl fuzzer's model
# (tests/fuzz), each printing TAP.
stage_unit() {
	local dir name
	for dir in tests/unit tests/unit/lib tests/sim bpf user/doctor user/ckpt Documentation/man \
		tests/plots tests/fuzz; do
		name=$(echo "$dir" | tr / _)
		if [ ! -f "$dir/Makefile" ]; then
			echo "not ok - unit: $dir/Makefile missing"
			continue
		fi
		make --no-print-directory -s -C "$dir" check 2>&1 | tee "$LOGS/unit-$name.log" |
			grep -E '^(ok|not ok|#)' | unnumber
		[ "${PIPESTATUS[0]}" = 0 ] ||
			echo "not ok - unit: make -C $dir check failed (log: .build/check/unit-$name.log)"
	done
}

# make demo's build in a fresh clone of HEAD (tests/demo): every program
# the demo's nodes run is built by it.
stage_demo() {
	make --no-print-directory -s -C tests/demo check 2>&1 | tee "$LOGS/demo.log" |
		grep -E '^(ok|not ok|#)' | unnumber
	[ "${PIPESTATUS[0]}" = 0 ] || echo "not ok - demo build: see .build/check/demo.log"
}

stage_kunit() {
	if [ ! -x tests/kunit/run.sh ]; then
		echo "not ok - kunit: tests/kunit/run.sh missing"
		return
	fi
	# The ledger (tests/kunit/passed) spares CI the UML build when
	# kmod/core is unchanged; COLLX_KUNIT_FORCE=1 (make check-kunit) runs.
	local when=--if-changed
	[ "${COLLX_KUNIT_FORCE:-0}" != 1 ] || when=
	# shellcheck disable=SC2086 # zero or one word
	tests/kunit/run.sh $when 2>&1 | tee "$LOGS/kunit.log" | grep -E '^(ok|not ok)' | unnumber
	[ "${PIPESTATUS[0]}" = 0 ] || echo "not ok - kunit: tests/kunit/run.sh failed (log: .build/check/kunit.log)"
}

# The picture of case 64's run (every node's ops and the pauses it got),
# drawn here from the nodes' netmon event logs, not in a TCG node.
lab_timeline() {
	local k=$1 out=$2 ev pic res nodes=0
	ev=$(ls "$out"/node*/netmon/coll.events 2>/dev/null) || return 0
	for n in "$out"/node*/; do nodes=$((nodes + 1)); done
	pic=$out/plots/netmon-timeline.svg
	mkdir -p "$out/plots"
	# shellcheck disable=SC2086
	if res=$(/usr/bin/python3 tests/plots/timeline.py --align op -o "$pic" $ev 2>&1) &&
		[[ $res == *": $nodes nodes, "* ]]; then
		echo "ok - lab $k: netmon timeline of 64-netmon-collective: $res"
	else
		echo "$res" | sed 's/^/# /'
		echo "not ok - lab $k: netmon timeline of 64-netmon-collective from $nodes nodes"
	fi
}

# One boot of a cluster of kernel $1 ($2: its release, "$3": what make
# needs besides KVER) runs the lab cases matching the globs after it (all
# when none); a case passes when it passed on every node that did not
# skip it.
lab_cases() {
	local k=$1 krel=$2 kdir=$3 out rc case node line verdict why plan slow
	shift 3
	# (Built by the build stage already when it ran: then no-ops.)
	# shellcheck disable=SC2086 # $kdir: zero or one word
	if ! make --no-print-directory module KVER="$krel" $kdir >"$LOGS/lab-$k-build.log" 2>&1 ||
		! make --no-print-directory -C tests/dmabuf module KVER="$krel" $kdir >>"$LOGS/lab-$k-build.log" 2>&1 ||
		! make --no-print-directory -C user >>"$LOGS/lab-$k-build.log" 2>&1 ||
		! make --no-print-directory -C tests/progs >>"$LOGS/lab-$k-build.log" 2>&1 ||
		! make --no-print-directory -C tests/dmabuf programs collx >>"$LOGS/lab-$k-build.log" 2>&1 ||
		! make --no-print-directory -C tests/fuzz >>"$LOGS/lab-$k-build.log" 2>&1 ||
		! make --no-print-directory -C tests/fault >>"$LOGS/lab-$k-build.log" 2>&1 ||
		{ [ -f bpf/Makefile ] && ! make --no-print-directory bpf >>"$LOGS/lab-$k-build.log" 2>&1; }; then
		echo "not ok - lab $k: build failed (log: .build/check/lab-$k-build.log)"
		return
	fi
	out=$SRC/.build/lab/check-$k
	# A slower host's bounds (tests/lab/lib.sh: lab_slowdown).
	slow=()
	[ -z "${COLLX_LAB_SLOWDOWN:-}" ] || slow=(-e "COLLX_LAB_SLOWDOWN=$COLLX_LAB_SLOWDOWN")
	tests/lab/lab.sh -k "$k" -n "${COLLX_LAB_NODES:-4}" -t "${COLLX_LAB_BUDGET:-2700}" -q -o "$out" \
		-e "COLLX_LAB_SHARE=${LAB_SHARE:-0/1}" "${slow[@]}" \
		-- tests/lab/run-cases.sh "$@" >"$LOGS/lab-$k.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok - lab $k: ${COLLX_LAB_NODES:-4} nodes booted $krel, rxe0 up, no kernel errors"
	else
		grep '^lab:' "$LOGS/lab-$k.log" | sed 's/^/# /'
		echo "not ok - lab $k: nodes failed (log: .build/check/lab-$k.log, ${out#"$SRC"/})"
	fi
	plan=
	[ "$#" = 0 ] || plan=$(cat "$out"/node0/cases.plan 2>/dev/null)
	[ -n "$plan" ] || plan=$(ls "$SRC"/tests/lab/cases/*.sh | xargs -n1 basename | sed 's/\.sh$//')
	for case in $plan; do
		verdict=skip why=
		for node in "$out"/node*; do
			line=$(grep -E "^(ok|not ok) [0-9]+ - $case( |$)" "$node/cases.tap" 2>/dev/null)
			case $line in
			"not ok"*) verdict=fail why="$why $(basename "$node"):${line#*# }" ;;
			*"# SKIP lab-once"*) [ "$verdict" != skip ] || verdict=once ;;
			*"# SKIP"*) ;;
			ok*) [ "$verdict" = fail ] || verdict=pass ;;
			*) verdict=fail why="$why $(basename "$node"):not run" ;;
			esac
		done
		case $verdict in
		pass) echo "ok - lab $k: $case" ;;
		skip) echo "ok - lab $k: $case # SKIP on every node" ;;
		once) echo "ok - lab $k: $case # SKIP lab-once: in another kernel's lab" ;;
		fail)
			echo "# see ${out#"$SRC"/}/node*/cases/$case.log"
			echo "not ok - lab $k: $case:$why" ;;
		esac
	done
	[ "$#" != 0 ] || lab_timeline "$k" "$out"
}

# Each kernel's lab runs its share of the lab-once cases (run-cases.sh).
stage_lab() {
	local k krel i=0 nk LAB_SHARE
	nk=$(echo "$KERNELS" | wc -w)
	for k in $KERNELS; do
		LAB_SHARE=$i/$nk
		i=$((i + 1))
		krel=$(resolve_krel "$k")
		if [ -z "$krel" ]; then
			echo "not ok - lab $k: kernel not installed"
			continue
		fi
		# shellcheck disable=SC2086 # globs, for run-cases.sh to expand
		lab_cases "$k" "$krel" "" ${COLLX_LAB_CASES:-}
	done
}

# The lab's debug kernel (tests/lab/debug-kernel: KASAN, lockdep,
# kmemleak, debugobjects, SLUB debugging, panic_on_warn), built once and
# cached, then one 4-node boot of it runs the cases that exercise the
# module's lifetimes and hostile input and pass there: collectives (2 and
# 4 ranks, async, raw ioctls, 1-rank, grouped p2p), abort, destroy in
# flight, device removal, a stuck rank, close during a wait, the forged
# wire, the fault matrix's kill, loss and delay, rmmod and VM kill (32,
# 36, 37, 39), and every dma-buf case (24, 5x: move, revoke and close
# under CONFIG_DMABUF_DEBUG; COLLX_DEBUG_CASES overrides the list).
# Everything runs 3-10 times slower there (lab_slowdown triples the cases'
# bounds; COLLX_LAB_SLOWDOWN=6 on a slow host): the whole suite would take
# over an hour.  35 (a link cut) and 40 (the fuzzer) joined it on
# 2026-12-07, once they passed there with the cm fixes.
DEBUG_CASES='0[1-5]-* 10-* 12-* 16-* 17-* 20-* 21-* 23-* 24-* 3[1-9]-* 40-* 42-* 5?-*'
stage_debug() {
	local dk=${COLLX_DEBUG_KERNEL:-$SRC/.build/debug-kernel} krel res
	step "debug: kernel built (tests/lab/debug-kernel/build.sh)" \
		tests/lab/debug-kernel/build.sh
	grep -h '^debug-kernel: ' "$LOGS"/debug__kernel_built*.log 2>/dev/null | sed 's/^/# /'
	[ -f "$dk/release" ] || return 0
	krel=$(cat "$dk/release")
	# Modules built against an earlier build of it fail its BTF check.
	if ! cmp -s "$dk/key" "$SRC/build/$krel/kernel-key"; then
		rm -rf "$SRC/build/$krel"
		mkdir -p "$SRC/build/$krel"
		cp "$dk/key" "$SRC/build/$krel/kernel-key"
	fi
	# shellcheck disable=SC2086 # the globs are run-cases.sh's to expand
	res=$(COLLX_LAB_BUDGET=${COLLX_LAB_BUDGET:-3600} \
		lab_cases debug "$krel" "KDIR=$dk/build" ${COLLX_DEBUG_CASES:-$DEBUG_CASES})
	printf '%s\n' "$res"
	debug_record "$res"
}

# The ledger of cases that passed on the debug kernel, one line each:
# "<kmod/ tree> <case> <when>", for a committed kmod/ only; lines of other
# trees go.  A case that failed loses its line.
debug_record() {
	local tree now tmp
	git -C "$SRC" diff --quiet HEAD -- kmod || return 0
	tree=$(git -C "$SRC" rev-parse HEAD:kmod)
	now=$(date -u +%Y-%m-%dT%H:%MZ)
	tmp=$DEBUG_RECORD.tmp
	printf '%s\n' "$1" | grep -v '# SKIP' |
		sed -n 's/^\(not \)\{0,1\}ok - lab debug: \([0-9][^: ]*\).*/ \2 /p' >"$tmp.ran"
	# This tree's lines, less those of the cases that ran, then the passes.
	grep "^$tree " "$DEBUG_RECORD" 2>/dev/null | grep -v -F -f "$tmp.ran" >"$tmp"
	printf '%s\n' "$1" | grep -v '# SKIP' |
		sed -n "s/^ok - lab debug: \([0-9][^: ]*\)\$/$tree \1 $now/p" >>"$tmp"
	sort -k2 "$tmp" >"$DEBUG_RECORD"
	rm -f "$tmp" "$tmp.ran"
	echo "# ${DEBUG_RECORD#"$SRC"/}: $(wc -l <"$DEBUG_RECORD") cases passed on kmod/ $(git -C "$SRC" rev-parse --short HEAD:kmod)"
}

# The cases of make check-debug's list that the ledger lacks for kmod/.
debug_unverified() {
	local tree g c
	tree=$(git -C "$SRC" rev-parse HEAD:kmod 2>/dev/null)
	git -C "$SRC" diff --quiet HEAD -- kmod || tree=dirty
	for g in $DEBUG_CASES; do
		for c in "$SRC"/tests/lab/cases/$g.sh; do
			[ -f "$c" ] || continue
			c=$(basename "$c" .sh)
			grep -q "^$tree $c " "$DEBUG_RECORD" 2>/dev/null || echo "$c"
		done
	done
}

# CI's debug stage: nothing when the ledger has every case of make
# check-debug's list passed on this kmod/ tree; else the kernel, and on it
# the missing cases when they are few, the fault matrix's core otherwise.
DEBUG_RECORD=$SRC/tests/lab/debug-kernel/passed
DEBUG_CI_CASES='10-* 20-* 31-* 34-* 38-* 42-*'
stage_debug_ci() {
	local missing
	missing=$(debug_unverified | tr '\n' ' ')
	if [ -z "$missing" ]; then
		echo "# every case of make check-debug passed on kmod/ $(git -C "$SRC" rev-parse --short HEAD:kmod) (${DEBUG_RECORD#"$SRC"/})"
		echo "ok - debug: kmod/ is the tree make check-debug passed on # SKIP not run again"
		return
	fi
	echo "# not passed on the debug kernel with this kmod/: $missing"
	[ "$(echo "$missing" | wc -w)" -le 7 ] || missing=$DEBUG_CI_CASES
	# shellcheck disable=SC2086 # globs
	COLLX_DEBUG_CASES="$missing" COLLX_LAB_BUDGET=${COLLX_LAB_BUDGET:-1800} stage_debug
}

# arm64: the module cross-built for each of Debian's arm64 kernels and the
# unit tests under qemu-user (arm64), then a 2-node aarch64 lab on the
# newest kernel (arm64-lab, about 2 min; make check-arm64 boots one per
# kernel; COLLX_ARM64_LAB=0 skips it).
stage_arm64() {
	COLLX_ARM64_LAB=0 COLLX_LAB_LOCK= tests/arm64/check.sh 2>"$LOGS/arm64.log"
	[ "$?" = 0 ] || echo "# arm64: see .build/check/arm64.log"
}

stage_arm64_lab() {
	local newest left
	[ "${COLLX_ARM64_LAB:-1}" != 0 ] || return 0
	# .ci/run's limit (COLLX_CI_DEADLINE, in epoch seconds): a lab that
	# could not end before it is not begun, and says so.
	if [ -n "${COLLX_CI_DEADLINE:-}" ]; then
		left=$((COLLX_CI_DEADLINE - $(date +%s)))
		if [ "$left" -lt 600 ]; then
			echo "ok - arm64 lab # SKIP $left s left before CI's limit; it takes 3-5 min"
			return 0
		fi
	fi
	newest=$(. scripts/arm64/env.sh && arm64_kvers | tail -n1)
	# The builds are stage_arm64's (no-ops here): only the lab's lines.
	COLLX_ARM64_UNIT=0 COLLX_ARM64_LAB=1 \
		COLLX_ARM64_LAB_KERNELS=${COLLX_ARM64_LAB_KERNELS:-$newest} COLLX_LAB_LOCK= \
		tests/arm64/check.sh 2>"$LOGS/arm64-lab.log" | grep -E '^not ok|^ok - arm64 lab '
	[ "${PIPESTATUS[0]}" = 0 ] || echo "# arm64 lab: see .build/check/arm64-lab.log"
}

run_stage() {
	case $1 in
	build) stage_build ;;
	lint) stage_lint ;;
	arm64) stage_arm64 ;;
	arm64-lab) stage_arm64_lab ;;
	unit) stage_unit ;;
	demo) stage_demo ;;
	package-root) stage_package_root ;;
	package) stage_package ;;
	kunit) stage_kunit ;;
	lab) stage_lab ;;
	debug) stage_debug ;;
	debug-ci) stage_debug_ci ;;
	*) echo "check.sh: unknown stage $1" >&2; exit 2 ;;
	esac
}

# One stage: its TAP through tap(), and its time.
timed_stage() {
	echo "# stage $1"
	local s0
	s0=$(date +%s)
	run_stage "$1" | tap
	echo "# stage $1 took $(($(date +%s) - s0)) s"
}

# The stages that only need the host's CPU, unit, lint, package-root, demo, kunit and arm64 (builds
# and qemu-user; none times anything), run beside the unit stage and the
# labs at the lowest priority: TCG nodes leave a quarter of the host idle
# (waiting on timeouts, barriers, the network), and these fill it.  Their
# TAP is printed when the labs are done.
beside_lab() {
	local s s0
	for s in unit lint package-root demo kunit arm64; do
		echo "# stage $s (beside the lab, nice 19)"
		s0=$(date +%s)
		run_stage "$s"
		echo "# stage $s took $(($(date +%s) - s0)) s"
	done
}

# (make check's own: the stages beside the lab, as raw TAP for its tap().)
if [ "$STAGE" = beside-lab ]; then
	beside_lab
	exit 0
fi

start=$(date +%s)
if [ "$STAGE" = all ]; then
	timed_stage build
	bg=$LOGS/beside-lab.tap
	COLLX_KUNIT_TIMEOUT=${COLLX_KUNIT_TIMEOUT:-1800} \
		nice -n 19 ionice -c 3 "$SRC/tests/check.sh" beside-lab >"$bg" 2>&1 &
	bgpid=$!
	timed_stage lab
	l0=$(date +%s)
	wait "$bgpid" || true
	echo "# waited $(($(date +%s) - l0)) s for the stages beside the lab"
	tap <"$bg"
	grep -q '^# stage arm64 took' "$bg" ||
		echo "not ok - the stages beside the lab did not finish (log: ${bg#"$SRC"/})" | tap
	timed_stage package
	timed_stage arm64-lab
	timed_stage debug-ci
else
	for s in $STAGE; do
		timed_stage "$s"
	done
fi
echo "1..$n"
echo "# total $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
