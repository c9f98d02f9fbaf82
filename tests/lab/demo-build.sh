#!/bin/bash
# collx demo: build everything the demo's nodes run, from this tree.
#   tests/lab/demo-build.sh [-k 6.1|6.12] [-D]
# The module for the lab kernel, libcollx and the tools, the BPF programs
# and collx-netmon (the timeline picture), Gloo's allreduce for the
# comparison (when libgloo-dev is installed) and, unless -D, the torch
# backend (when python3-torch is).  What is missing for lack of a package
# is said, not an error; a build that fails is.  tests/demo/check-build.sh
# runs this in a clean clone and checks that every program the node
# scripts (demo-node.sh, demo-ddp.sh) look for is then there.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=6.12
DDP=1
while getopts "k:Dh" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	D) DDP=0 ;;
	*) sed -n '2,10p' "$0"; exit 2 ;;
	esac
done
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
cd "$SRC"
quiet() { "$@" >/dev/null; }
quiet make --no-print-directory -s module KVER="$KREL"
quiet make --no-print-directory -s -C user
# collx-netmon and its BPF object: without them demo-node.sh skips the
# netmon run and no timeline is drawn.
quiet make --no-print-directory -s bpf
rm -f .build/bench/gloo_allreduce
if [ -e /usr/include/gloo/allreduce_ring.h ]; then
	quiet make --no-print-directory -s -C tests/bench gloo
else
	echo "demo: no libgloo-dev (scripts/install-deps.sh --bench): no Gloo comparison" >&2
fi
if [ "$DDP" = 1 ]; then
	if [ -f /usr/lib/python3/dist-packages/torch/__init__.py ]; then
		quiet make --no-print-directory -s -C user/torch
	else
		echo "demo: no python3-torch (scripts/install-deps.sh): no DDP training" >&2
	fi
fi
echo "demo: built collx.ko for $KREL, libcollx and tools, collx-netmon$([ -x .build/bench/gloo_allreduce ] && echo ", Gloo's allreduce")$([ "$DDP" = 1 ] && ls user/torch/python/collx/_c10d*.so >/dev/null 2>&1 && echo ", the torch backend")"
