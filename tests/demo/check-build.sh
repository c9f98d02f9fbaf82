#!/bin/bash
# make demo's build step from a fresh clone: clone this tree's HEAD into a
# scratch folder, run tests/lab/demo-build.sh there, and check that every
# program and file the demo's node scripts look for exists in the clone
# (the module lab.sh loads, collx-info and collx-bench, collx-netmon for
# the timeline, Gloo's allreduce, the torch backend).  The paths are read
# out of the node scripts and the files they source, not listed here, so a
# new program a node script starts to use is checked too.  Prints TAP.
#   tests/demo/check-build.sh [KERNEL]        (default 6.12)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=${1:-6.12}
WORK=$SRC/.build/demo-clone
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
n=0 bad=0
ok() { n=$((n + 1)); echo "ok $n - demo build: $*"; }
nok() { n=$((n + 1)) bad=$((bad + 1)); echo "not ok $n - demo build: $*"; }

if ! git clone -q "$SRC" "$WORK/collx" 2>"$WORK/clone.log"; then
	sed 's/^/# /' "$WORK/clone.log"
	nok "git clone of $SRC"
	echo "1..$n"
	exit 1
fi
C=$WORK/collx
s0=$(date +%s)
if (cd "$C" && tests/lab/demo-build.sh -k "$KERNEL") >"$WORK/build.log" 2>&1; then
	ok "tests/lab/demo-build.sh -k $KERNEL in a fresh clone ($(($(date +%s) - s0)) s)"
else
	tail -n 20 "$WORK/build.log" | sed 's/^/# /'
	nok "tests/lab/demo-build.sh -k $KERNEL in a fresh clone"
fi
sed 's/^/# /' "$WORK/build.log" | grep '^# demo:'

# The node scripts and what they source, as paths under $COLLX_SRC.
scripts="tests/lab/demo-node.sh tests/lab/demo-ddp.sh"
for s in $scripts; do
	scripts="$scripts $(grep -oE '^[[:space:]]*\. "\$COLLX_SRC/[^"]+"' "$C/$s" |
		sed 's/.*\$COLLX_SRC\///; s/"$//')"
done
scripts=$(printf '%s\n' $scripts | sort -u)
# $COLLX_SRC/x and $TORCH_DIR/x (user/torch/x), quoted or not
needed=$(for s in $scripts; do
	grep -oE '\$(COLLX_SRC|TORCH_DIR)"?/[A-Za-z0-9_./*-]+' "$C/$s" | tr -d '"' |
		sed 's/^\$COLLX_SRC\///; s/^\$TORCH_DIR\//user\/torch\//'
done | sort -u)
krel=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
# lab.sh's default module (demo.sh gives no -m)
needed="$needed build/$krel/kmod/collx.ko"
count=0
for p in $needed; do
	# (a glob such as python/collx/_c10d*.so must match a file)
	# shellcheck disable=SC2086
	set -- "$C"/$p
	if [ -e "$1" ]; then
		count=$((count + 1))
	else
		nok "$p, which $(grep -lF "${p#user/torch/}" $(printf "$C/%s " $scripts) 2>/dev/null |
			sed "s|$C/||" | head -n1) uses, is missing after the build"
	fi
done
[ "$count" -ge 6 ] || nok "only $count paths found in the node scripts: the extraction is broken"
[ "$bad" != 0 ] || ok "all $count files the node scripts use exist ($(echo $needed | wc -w) checked)"
echo "1..$n"
[ "$bad" = 0 ]
