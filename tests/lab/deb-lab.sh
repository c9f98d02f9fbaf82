#!/bin/bash
# The package test (lab case 95-deb) without compiling in the emulator:
# the four .debs of make deb installed on the host into a throwaway root
# (an overlay of the host's /, its upper folder under .build/deb-root),
# where DKMS builds collx natively for both lab kernels; then a 2-node lab
# boots on that root (lab.sh -r) and 95-deb checks, on node0, what an
# admin gets: the module DKMS built is the one modprobe loads, with
# modprobe.d's parameters, udev, the installed tools as a member of group
# collx, collx-doctor, collx-netmon, the man pages, pkg-config, and
# dpkg -r/-P leaving nothing behind.
#
#   tests/lab/deb-lab.sh 6.1|6.12|root
#
# "root" makes (or finds) the root and stops there: no lab, so no lab
# lock needed (e.g. in a build stage, before the labs).
#
# Prints TAP ("ok - package: ..." / "not ok - package: ...", each
# followed by "# (N s)") and exits non-zero when anything failed.  The
# .debs are rebuilt (scripts/deb/build.sh) when older than the sources;
# the root, with DKMS's builds for both kernels, is cached under
# .build/deb-root keyed on the .debs' and the host's packages' checksums,
# so the second kernel's call reuses the first one's.  Every mount is made
# in a private mount namespace and undone on exit; the host's dpkg
# database, /lib/modules and /var/lib/dkms are compared before and after.
# Runs one lab: the caller serialises labs (flock /tmp/collx-lab.lock).
# COLLX_LAB_SLOWDOWN passes on to the nodes.
set -uo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
SELF=$SRC/tests/lab/deb-lab.sh
K=${1:-}
case $K in
6.1 | 6.12 | root) ;;
*) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "not ok - package: $K: deb-lab.sh runs as root (mounts, chroot, the lab)"; exit 1; }
LOGS=$SRC/.build/deb-lab
mkdir -p "$LOGS"

# What the host must keep as it was.
host_state() {
	dpkg -l | md5sum
	md5sum /var/lib/dpkg/status
	find /lib/modules/ -path '*/updates*' 2>/dev/null | sort
	ls -A /var/lib/dkms 2>/dev/null
	getent group collx
}

# ---- outside: the host's state around a private mount namespace --------
if [ -z "${COLLX_DEB_LAB_INNER:-}" ]; then
	before=$(host_state)
	COLLX_DEB_LAB_INNER=1 unshare --mount --propagation private "$SELF" "$K"
	rc=$?
	after=$(host_state)
	# (no mount of the run can be left: the namespace died with it)
	if [ "$before" = "$after" ] && ! grep -q "$SRC/.build/deb-root" /proc/self/mountinfo; then
		echo "ok - package: $K: the host's dpkg database, /lib/modules, /var/lib/dkms unchanged, no mount left"
	else
		diff <(echo "$before") <(echo "$after") | sed 's/^/# /'
		grep "$SRC/.build/deb-root" /proc/self/mountinfo | sed 's/^/# mount left: /'
		echo "not ok - package: $K: the host changed"
		rc=1
	fi
	exit "$rc"
fi

# ---- inside the private mount namespace --------------------------------
cd "$SRC" || exit 1
# One run at a time uses or remakes the cached root (a "root" call would
# otherwise delete a root that a lab is running on).
exec 9>"$SRC/.build/deb-root.lock"
flock 9
FAILED=0
T_STEP=$(date +%s)
tap() {	# ok|fail WHAT: one TAP line and the time since the last one
	if [ "$1" = ok ]; then
		echo "ok - package: $K: $2"
	else
		echo "not ok - package: $K: $2"
		FAILED=1
	fi
	echo "# ($(($(date +%s) - T_STEP)) s)"
	T_STEP=$(date +%s)
}
bail() {	# WHAT LOG: a failure that ends the run, with its log's tail
	[ -z "${2:-}" ] || tail -n 25 "$2" | sed 's/^/# /'
	tap fail "$1${2:+ (log: ${2#"$SRC"/})}"
	exit 1
}

resolve_krel() {
	(cd /boot && ls -1 vmlinuz-"$1".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
}
if [ "$K" != root ]; then
	KREL=$(resolve_krel "$K")
	[ -n "$KREL" ] || bail "no $K kernel in /boot"
fi
# DKMS builds for both lab kernels, whichever this run boots.
KRELS=
for k in 6.1 6.12; do
	r=$(resolve_krel "$k")
	[ -n "$r" ] && [ -d "/usr/src/linux-headers-$r" ] || bail "no $k kernel with headers (scripts/install-deps.sh)"
	KRELS="$KRELS $r"
done

# ---- the .debs: built, or reused when newer than every source ---------
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DEBDIR=$SRC/.build/deb
debs() {
	ls "$DEBDIR"/collx-dkms_"$ver"_all.deb "$DEBDIR"/libcollx1_"$ver"_*.deb \
		"$DEBDIR"/libcollx-dev_"$ver"_*.deb "$DEBDIR"/collx-tools_"$ver"_*.deb 2>/dev/null
}
# the newest source mtime: what scripts/deb/build.sh packages
newest_src=$(git ls-files -z --cached --others --exclude-standard -- \
	debian dkms.conf Kbuild kmod include user bpf Documentation scripts tests/plots |
	xargs -0 stat -c %Y 2>/dev/null | sort -n | tail -n1)
oldest_deb=$(debs | xargs -r stat -c %Y | sort -n | head -n1)
if [ "$(debs | wc -l)" = 4 ] && [ "${oldest_deb:-0}" -ge "${newest_src:-0}" ]; then
	tap ok ".debs of make deb reused (newer than the sources)"
else
	scripts/deb/build.sh >"$LOGS/deb-build.log" 2>&1 || bail "make deb (scripts/deb/build.sh)" "$LOGS/deb-build.log"
	[ "$(debs | wc -l)" = 4 ] || bail "make deb left no four .debs in $DEBDIR" "$LOGS/deb-build.log"
	tap ok ".debs built (scripts/deb/build.sh)"
fi
mapfile -t DEBS < <(debs)

# ---- the root: an overlay of /, the packages installed, DKMS for both --
# Keyed on the .debs and on the host's packages (the root's dpkg database
# is a copy of the host's, taken when the root was made).
ROOTS=$SRC/.build/deb-root
key=$( { sha256sum "${DEBS[@]}" | cut -d' ' -f1; dpkg-query -W | sha256sum; echo "$KRELS"; } |
	sha256sum | cut -c1-16)
R=$ROOTS/$key
M=$R/merged
MOUNTS=()
umount_all() {	# last mounted first
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null
	done
	MOUNTS=()
}
cleanup() {
	[ -z "${POLICY:-}" ] || rm -f "$POLICY"
	umount_all
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mnt() {	# mount ARGS... TARGET
	mount "$@" || return 1
	MOUNTS+=("${!#}")
}
in_root() {
	chroot "$M" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C DEBIAN_FRONTEND=noninteractive "$@"
}

make_root() {
	local krel log=$R/install.log t0 t1 mk
	# (never through a mount: an overlay of / is under there when in use)
	! grep -qF " $ROOTS/" /proc/self/mountinfo || bail "something is mounted under $ROOTS"
	rm -rf --one-file-system "$ROOTS"
	mkdir -p "$R/upper" "$R/work" "$M"
	mnt -t overlay collx-deb-root -o "lowerdir=/,upperdir=$R/upper,workdir=$R/work" "$M" ||
		bail "mount the overlay of / (upper $R/upper)"
	# What dpkg and DKMS read; /sys read-only (the postinst's udevadm
	# trigger has no business on the host); /run a tmpfs of its own, so
	# that no maintainer script finds the host's services.
	mnt --bind /proc "$M/proc" && mnt --bind /dev "$M/dev" &&
		mnt --bind -o ro /sys "$M/sys" && mnt -t tmpfs -o mode=0755 collx-deb-run "$M/run" ||
		bail "bind /proc, /dev, /sys into the root"
	mountpoint -q "$M" && [ -d "$M/usr/sbin" ] || bail "the root at $M is not mounted"
	# no service starts (Debian's own switch), and no man-db index of the
	# host's every page (man reads pages without it)
	if [ ! -e "$M/usr/sbin/policy-rc.d" ]; then
		POLICY=$M/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$POLICY" && chmod 755 "$POLICY"
	fi
	rm -f "$M/var/lib/man-db/auto-update"
	t0=$(date +%s)
	# The running kernel (the host's) has no headers: the postinst builds
	# for every kernel in /lib/modules, as in any chroot.
	in_root dpkg -i "${DEBS[@]}" >"$log" 2>&1 || bail "dpkg -i in the root" "$log"
	for krel in $KRELS; do
		if ! in_root dkms status -m collx -v "$ver" -k "$krel" 2>/dev/null | grep -q installed; then
			in_root dkms install "collx/$ver" -k "$krel" >>"$log" 2>&1 ||
				bail "dkms install collx/$ver -k $krel in the root" "$log"
		fi
	done
	t1=$(date +%s)
	grep -E '^(Building|Installing|Setting up|It is likely)' "$log" | sed 's/^/# /'
	for krel in $KRELS; do
		ls "$M/lib/modules/$krel/updates/dkms/"collx.ko* >/dev/null 2>&1 ||
			bail "no collx.ko in the root's /lib/modules/$krel/updates/dkms" "$log"
		# DKMS's make.log: its second line is when the build started
		mk=$M/var/lib/dkms/collx/$ver/$krel/x86_64/log/make.log
		[ -f "$mk" ] && echo "# DKMS built collx for $krel in $(($(stat -c %Y "$mk") - $(date -d "$(sed -n 2p "$mk")" +%s 2>/dev/null || stat -c %Y "$mk"))) s"
	done
	[ -z "${POLICY:-}" ] || rm -f "$POLICY"
	POLICY=
	umount_all
	echo "$((t1 - t0))" >"$R/seconds"
	: >"$R/ready"
}
if [ -f "$R/ready" ]; then
	tap ok "root with the packages installed and DKMS's builds for$KRELS reused (${R#"$SRC"/}, made in $(cat "$R/seconds") s)"
else
	make_root
	tap ok "root made: dpkg -i of the four .debs into an overlay of /, DKMS built collx for$KRELS"
fi

[ "$K" != root ] || exit "$FAILED"

# The lab's root: the same overlay again (the nodes read it through 9p,
# read-only; a read-only overlay of the upper folder over / would be
# refused: the upper folder lies inside /, and two lower layers may not
# overlap).
mkdir -p "$M"
mnt -t overlay collx-deb-root -o "lowerdir=/,upperdir=$R/upper,workdir=$R/work" "$M" ||
	bail "mount the root for the lab"

# ---- the lab: 2 nodes on that root, 95-deb -----------------------------
OUT=$SRC/.build/lab/deb-$K
# node1 runs the tree's own module and tools
for t in "make module KVER=$KREL" "make -C user"; do
	# shellcheck disable=SC2086 # a command line
	$t >>"$LOGS/lab-$K-build.log" 2>&1 || bail "$t (the lab's own build)" "$LOGS/lab-$K-build.log"
done
slow=()
[ -z "${COLLX_LAB_SLOWDOWN:-}" ] || slow=(-e "COLLX_LAB_SLOWDOWN=$COLLX_LAB_SLOWDOWN")
t0=$(date +%s)
tests/lab/lab.sh -r "$M" -k "$K" -n 2 -S -q -t 900 -o "$OUT" -e COLLX_LAB_DEB=root "${slow[@]}" \
	-- tests/lab/run-cases.sh 95-deb >"$LOGS/lab-$K.log" 2>&1
lrc=$?
umount_all
boot=$(sed -n 's/.*boot to job \([0-9?.]*\) s.*/\1/p' "$LOGS/lab-$K.log")
case_line=$(grep -E '^(ok|not ok) [0-9]+ - 95-deb' "$OUT/node0/cases.tap" 2>/dev/null)
case_s=$(echo "$case_line" | grep -oE '[0-9]+s\)?$' | tr -dc 0-9)
if [ "$lrc" = 0 ]; then
	tap ok "2-node lab booted $KREL on the root (boot to job ${boot:-?} s)"
else
	grep '^lab:' "$LOGS/lab-$K.log" | sed 's/^/# /'
	tap fail "2-node lab on the root (log: ${LOGS#"$SRC"/}/lab-$K.log, ${OUT#"$SRC"/})"
fi
# Each check of 95-deb on node0, as it recorded them.
if [ -s "$OUT/deb/checks" ]; then
	sed -E "s/^(not ok|ok) - /\1 - package: $K: /" "$OUT/deb/checks"
	grep -q '^not ok' "$OUT/deb/checks" && FAILED=1
fi
for n in 0 1; do
	l=$(grep -E '^(ok|not ok) [0-9]+ - 95-deb' "$OUT/node$n/cases.tap" 2>/dev/null)
	case $l in
	"ok "*"# SKIP"*) tap fail "95-deb on node$n skipped: ${l#*# SKIP }" ;;
	"ok "*) [ "$n" = 0 ] || tap ok "95-deb on node1 (the peer, the tree's own build)" ;;
	*) grep -h '^FAIL' "$OUT/node$n/cases/95-deb.log" 2>/dev/null | head -n 5 | sed 's/^/# /'
	   tap fail "95-deb on node$n: ${l:-not run} (log: ${OUT#"$SRC"/}/node$n/cases/95-deb.log)" ;;
	esac
done
echo "# package $K: root $( [ -f "$R/seconds" ] && cat "$R/seconds") s (dpkg -i + DKMS for both kernels, once per set of .debs), boot to job ${boot:-?} s, case ${case_s:-?} s, lab $(($(date +%s) - t0)) s"
exit "$FAILED"
