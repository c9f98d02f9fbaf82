# The Debian packages, as an admin uses them: the four .debs of make deb
# (.build/deb) installed with dpkg and DKMS's build of collx, modprobe
# loads that build with /etc/modprobe.d/collx.conf's parameters, udevd
# (started here: the lab runs none) gives /dev/collx to group collx 0660,
# the installed tools run a 2-rank collective with node1 (which runs the
# tree's own build), a program built with pkg-config joins one too, the
# man pages open, collx-netmon and collx-doctor from the package work, and
# dpkg -r/-P leaves nothing behind (node0's root is an overlay: nothing
# reaches the host's dpkg database).
# COLLX_LAB_DEB (lab.sh -e) says where the packages come from:
#  root: already installed in the nodes' root, with DKMS's builds for both
#        lab kernels: tests/lab/deb-lab.sh installs them on the host into
#        an overlay of / (DKMS native: 12 s a kernel on 2 idle cores) and
#        boots the lab on it (lab.sh -r); any kernel; 133-149 s.  Each
#        check's verdict goes to /lab/deb/checks, which deb-lab.sh prints
#        as TAP.
#  node (or 1): dpkg -i here, DKMS compiling in the node: 736-934 s under
#        TCG with 2 vCPUs (lab.sh -c 2), more with one or other guests;
#        6.12 only.  By hand.
#  unset: skip (make check's labs boot on the host's own root).
# lab-timeout: 2400
. "$COLLX_SRC/tests/lab/lib.sh"
MODE=${COLLX_LAB_DEB:-0}
case $MODE in
root) ;;
1 | node)
	MODE=node
	case $(uname -r) in
	6.12.*) ;;
	*) lab_skip "COLLX_LAB_DEB=node runs on the 6.12 kernel only (its DKMS build costs ~12 min under TCG)" ;;
	esac ;;
*) lab_skip "the package case runs from tests/lab/deb-lab.sh (COLLX_LAB_DEB=root), or with COLLX_LAB_DEB=node (DKMS under TCG: ~12 min)" ;;
esac
[ "$COLLX_NRANKS" -ge 2 ] || lab_skip "needs node1 for the collectives"
[ "$COLLX_RANK" -le 1 ] || lab_skip "node0 has the packages, node1 is its peer"
D=$COLLX_LAB_DIR/deb
export COLLX_NRANKS=2
if [ "$COLLX_RANK" = 1 ]; then
	# node1: the other rank of node0's collectives, with the tree's build.
	# A failure here still goes to the next barrier (node0's checks go
	# on) and fails the case at the end.
	n=0
	until [ -f "$D/ready" ]; do
		[ ! -f "$D/failed" ] || lab_skip "node0 failed before the collectives"
		n=$((n + 1))
		[ "$n" -lt 3600 ] || lab_fail "node0 never got the packages installed"
		sleep 0.5
	done
	why=
	lab_barrier deb-bench 300 || lab_fail barrier
	lab_timeout 120 "$COLLX_SRC/user/tools/collx-bench" -b 8 -e 64K -f 4 -n 2 -w 1 >/dev/null ||
		why="collx-bench beside node0's all_reduce_perf"
	lab_barrier deb-prog 300 || lab_fail barrier
	if [ -x "$D/t" ]; then
		LD_LIBRARY_PATH=$COLLX_SRC/user/lib lab_timeout 120 "$D/t" ||
			why="${why:+$why; }the pkg-config program"
	fi
	lab_barrier deb-done 300 || lab_fail barrier
	[ -z "$why" ] || lab_fail "$why failed on node1"
	exit 0
fi
DEBS=${COLLX_DEB_DIR:-$COLLX_SRC/.build/deb}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$COLLX_SRC/dkms.conf")
KREL=$(uname -r)
W=/tmp/collx-deb
rm -rf "$W" "$D"
mkdir -p "$W" "$D"
CHECKS=$D/checks
: >"$CHECKS"
UDEVD=
case_cleanup() {
	[ -f "$D/ready" ] || : >"$D/failed"
	[ -z "$UDEVD" ] || udevadm control --exit 2>/dev/null
}
trap case_cleanup EXIT
elapsed() { echo "$(($(date +%s) - T0)) s"; }
T0=$(date +%s)

# Each check's verdict is a TAP line in $CHECKS: ck NAME starts a check
# (and ends the one before), bad records a failure and goes on, lab_fail
# records one and ends the case.  After node1 has joined (ready), checks
# only use bad, so that both nodes reach every barrier.
CK='' CK_WHY='' NBAD=0
ck_end() {
	[ -n "$CK" ] || return 0
	if [ -z "$CK_WHY" ]; then
		echo "ok - $CK" >>"$CHECKS"
	else
		echo "not ok - $CK: $CK_WHY" >>"$CHECKS"
		NBAD=$((NBAD + 1))
	fi
	CK=
}
ck() {
	ck_end
	CK=$1 CK_WHY=
	echo "== $1 (at $(elapsed))"
}
bad() {
	echo "FAIL: $*" >&2
	CK_WHY=${CK_WHY:+$CK_WHY; }$*
}
lab_fail() {
	bad "$*"
	ck_end
	exit 1
}

# The lab's /dev is a bare devtmpfs: make the links systemd-udevd makes on
# every real system (dkms's scripts read <(...) through /dev/fd).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0:stdin 1:stdout 2:stderr; do [ -e /dev/"${i#*:}" ] || ln -s /proc/self/fd/"${i%%:*}" /dev/"${i#*:}"; done
# man-db's trigger would index the host's every page under TCG (minutes);
# man finds pages without its index.  The node's /var is its own (the
# root of deb-lab.sh has no auto-update already).
rm -f /var/lib/man-db/auto-update
# The lab's insmod'ed module goes: the package's own build replaces it.
rmmod collx 2>/dev/null
if [ "$MODE" = node ]; then
	set -- "$DEBS"/collx-dkms_"$ver"_all.deb "$DEBS"/libcollx1_"$ver"_*.deb \
		"$DEBS"/libcollx-dev_"$ver"_*.deb "$DEBS"/collx-tools_"$ver"_*.deb
	ck "dpkg -i of the four packages (DKMS builds collx $ver for $KREL in the node)"
	for d; do [ -f "$d" ] || lab_fail "no $d: run make deb (scripts/deb/build.sh) first"; done
	DEBIAN_FRONTEND=noninteractive dpkg -i "$@" >"$W/dpkg-i.log" 2>&1 || {
		cat "$W/dpkg-i.log"
		tail -n 30 /var/lib/dkms/collx/"$ver"/build/make.log 2>/dev/null
		lab_fail "dpkg -i"
	}
	grep -E 'Building|Installing|DKMS' "$W/dpkg-i.log" | head -n 8
	echo "installed (DKMS build included) in $(elapsed)"
fi
ck "installed: the four packages, group collx, DKMS's collx $ver for $KREL in updates/dkms"
for p in collx-dkms libcollx1 libcollx-dev collx-tools; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || lab_fail "$p not installed"
	dpkg -L "$p" >>"$W/files"
done
dkms status -m collx -v "$ver" -k "$KREL" | grep -q installed ||
	lab_fail "dkms status: $(dkms status -m collx)"
ko=$(ls /lib/modules/"$KREL"/updates/dkms/collx.ko* 2>/dev/null)
[ -n "$ko" ] || lab_fail "no collx.ko in /lib/modules/$KREL/updates/dkms"
echo "$ko"
getent group collx >/dev/null || lab_fail "no group collx"

ck "modprobe collx loads DKMS's build of version $ver"
/lib/systemd/systemd-udevd --daemon || lab_fail "systemd-udevd"
UDEVD=1
udevadm settle -t 30
lab_run modprobe collx
udevadm settle -t 30
[ "$(modinfo -n collx)" = "$ko" ] || lab_fail "modprobe resolves collx to $(modinfo -n collx), not $ko"
[ "$(cat /sys/module/collx/version)" = "$ver" ] || lab_fail "loaded version is not $ver"
ck "parameters from /etc/modprobe.d/collx.conf"
kvs=$(sed -n 's/^options collx //p' /etc/modprobe.d/collx.conf)
[ -n "$kvs" ] || bad "no 'options collx' line in /etc/modprobe.d/collx.conf"
for kv in $kvs; do
	v=$(cat /sys/module/collx/parameters/"${kv%%=*}")
	echo "${kv%%=*}=$v"
	[ "$v" = "${kv#*=}" ] || bad "parameter ${kv%%=*} is '$v', not ${kv#*=} (modprobe.d)"
done
ck "udev (60-collx.rules): /dev/collx is group collx 0660"
st=$(stat -c '%G %a' /dev/collx)
echo "/dev/collx: $st"
[ "$st" = "collx 660" ] || lab_fail "/dev/collx is '$st', not 'collx 660' (udev rule)"

ck "/usr/bin/all_reduce_perf runs an allreduce with node1 as a member of group collx"
GID=$(getent group collx | cut -d: -f3)
as_user() {	# GID|"" CMD...: uid nobody, no capabilities, that group or none
	if [ -n "$1" ]; then g=--groups=$1; else g=--clear-groups; fi
	shift
	setpriv --reuid=65534 --regid=65534 "$g" --inh-caps=-all --bounding-set=-all "$@"
}
[ "$(command -v all_reduce_perf)" = /usr/bin/all_reduce_perf ] || lab_fail "no /usr/bin/all_reduce_perf"
: >"$D/ready"
lab_barrier deb-bench 300 || lab_fail barrier
if as_user "$GID" timeout -k 5 $((120 * $(lab_slowdown))) all_reduce_perf -b 8 -e 64K -f 4 -n 2 -w 1 \
	>"$W/bench.txt" 2>&1; then
	cat "$W/bench.txt"
	grep -q 'Out of bounds values : 0 OK' "$W/bench.txt" || bad "all_reduce_perf: wrong elements"
else
	cat "$W/bench.txt"
	bad "all_reduce_perf as a member of group collx"
fi
ck "collx-info fails outside group collx"
if out=$(as_user "" collx-info 2>&1); then
	bad "collx-info worked outside group collx: $out"
else
	echo "outside group collx: $out"
fi
collx-info | head -n 5

ck "collx-doctor from the package: module and device ok"
collx-doctor --json >"$W/doctor.json" || true
python3 - "$W/doctor.json" "$ko" <<'PY' || bad "collx-doctor on the packaged node"
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["check"]: x for x in d["verdicts"]}
for c in ("module", "device"):
    print(c, v[c]["status"], v[c]["message"])
ok = (v["module"]["status"] == "ok" and sys.argv[2] in v["module"]["message"] and
      "/usr/lib/x86_64-linux-gnu/libcollx.so.1" in v["module"]["message"] and
      v["device"]["status"] == "ok" and "0660 group collx" in v["device"]["message"])
sys.exit(0 if ok else 1)
PY
ck "collx-netmon from the package: metrics (promtool), build_info, its systemd unit"
if collx-netmon -I eth0 -d 1 -i 0 --textfile "$W/netmon.prom" --json="$W/netmon.json"; then
	promtool check metrics <"$W/netmon.prom" || bad "promtool on the packaged collx-netmon"
	grep -q '^collx_netmon_build_info{version="'"$ver"'"' "$W/netmon.prom" || bad "build_info"
else
	bad "collx-netmon from the package"
fi
systemd-analyze verify /lib/systemd/system/collx-netmon.service >"$W/verify.log" 2>&1 ||
	{ cat "$W/verify.log"; bad "systemd-analyze verify collx-netmon.service"; }

ck "man pages of the packages"
for p in collx-bench collx-info collx-doctor collx-netmon "4 collx" "3 libcollx" \
	"3 collx_broadcast" "1 all_reduce_perf"; do
	# shellcheck disable=SC2086
	MANWIDTH=80 man -P cat $p >"$W/man.txt" 2>&1 || { cat "$W/man.txt"; bad "man $p"; }
done
MANWIDTH=80 man -P cat collx-bench | sed -n '1,6p'
# wide enough that man does not hyphenate the phrase across lines
MANWIDTH=200 man -P cat collx-bench | grep -q 'nccl-tests over collx' ||
	bad "man collx-bench: not its page"

ck "a program built with pkg-config --cflags --libs collx links the packaged libcollx"
cat >"$W/t.c" <<'EOF'
/* the ABI the library saw at open, then an allreduce of both ranks */
#include <collx.h>
#include <stdio.h>

int main(void)
{
	struct collx_comm *comm;
	struct collx_dev *dev;
	int x[4] = { 1, 2, 3, 4 }, err, n;

	err = collx_dev_open(&dev);
	if (err)
		return printf("collx_dev_open: %s\n", collx_strerror(err)), 1;
	printf("module ABI %u.%u\n", collx_dev_version(dev)->abi_major,
	       collx_dev_version(dev)->abi_minor);
	collx_dev_close(dev);
	err = collx_comm_init_all(&comm);
	if (err)
		return printf("init: %s\n", collx_comm_last_error(NULL)), 1;
	n = collx_comm_size(comm);
	err = collx_allreduce(comm, x, x, 4, COLLX_INT32, COLLX_OP_SUM);
	printf("rank %d of %d: allreduce: %s, x[3] = %d\n", collx_comm_rank(comm), n,
	       collx_strerror(err), x[3]);
	collx_comm_destroy(comm);
	return err || x[3] != 4 * n;
}
EOF
echo "pkg-config: $(pkg-config --cflags --libs collx)"
# shellcheck disable=SC2046
if cc -Wall -Werror -o "$W/t" "$W/t.c" $(pkg-config --cflags --libs collx); then
	# merged /usr: ld.so's cache may name it under /lib; compare the files
	lib=$(ldd "$W/t" | sed -n 's/.*libcollx\.so\.1 => \([^ ]*\).*/\1/p')
	echo "libcollx.so.1 => $lib"
	[ -n "$lib" ] && [ "$(readlink -f "$lib")" = "$(readlink -f /usr/lib/x86_64-linux-gnu/libcollx.so.1)" ] ||
		bad "not linked to the packaged libcollx (ldd: ${lib:-none})"
	cp "$W/t" "$D/t"
else
	bad "cc with pkg-config"
fi
ck "the pkg-config program runs an allreduce with node1"
lab_barrier deb-prog 300 || lab_fail barrier
if [ -x "$W/t" ]; then
	lab_timeout 120 "$W/t" || bad "the pkg-config program failed"
else
	bad "not built"
fi
lab_barrier deb-done 300 || lab_fail barrier

ck "dpkg -r: DKMS removes collx from every kernel"
rmmod collx || bad "rmmod collx"
DEBIAN_FRONTEND=noninteractive dpkg -r collx-tools libcollx-dev libcollx1 collx-dkms \
	>"$W/dpkg-r.log" 2>&1 || { cat "$W/dpkg-r.log"; lab_fail "dpkg -r"; }
left=$(ls /lib/modules/*/updates/dkms/collx.ko* 2>/dev/null)
[ -z "$left" ] || bad "left in updates/dkms: $left"
modinfo collx >/dev/null 2>&1 && bad "modinfo still finds a collx module"
[ ! -e /var/lib/dkms/collx ] || bad "dkms still knows collx: $(dkms status -m collx)"
ck "dpkg -P: no packaged file, conffile or database entry left"
DEBIAN_FRONTEND=noninteractive dpkg -P collx-tools libcollx-dev libcollx1 collx-dkms \
	>>"$W/dpkg-r.log" 2>&1 || { cat "$W/dpkg-r.log"; lab_fail "dpkg -P"; }
left=
while read -r f; do
	[ -d "$f" ] || { [ ! -e "$f" ] && [ ! -L "$f" ]; } || left="$left $f"
done <"$W/files"
[ -z "$left" ] || bad "left after dpkg -P:$left"
[ ! -e /etc/modprobe.d/collx.conf ] || bad "modprobe.d conffile left after purge"
for p in collx-dkms libcollx1 libcollx-dev collx-tools; do
	case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) in
	'' | *not-installed) ;;
	*) bad "$p still in dpkg's database after purge" ;;
	esac
done
echo "$(wc -l <"$W/files") packaged paths, none left"
ck_end
echo "case took $(elapsed)"
# The lab's own module again, for any case that follows.
insmod "$COLLX_MODULE" 2>/dev/null || true
[ "$NBAD" = 0 ] || lab_fail "$NBAD check(s) failed (see $CHECKS)"
