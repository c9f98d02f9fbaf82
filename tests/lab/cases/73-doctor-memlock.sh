# collx-doctor on RLIMIT_MEMLOCK, as an unprivileged user (root has
# CAP_IPC_LOCK, which lifts the limit): 64 KiB fails, 128 MiB warns,
# unlimited is ok; the exit status follows.
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
DOCTOR=$COLLX_SRC/user/doctor/collx-doctor
OUT=$COLLX_NODE_DIR/doctor
mkdir -p "$OUT"
[ "$COLLX_RANK" = 0 ] || lab_skip "one node is enough"
as_nobody() {	# LIMIT_KIB|unlimited
	sh -c 'ulimit -l "$1" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$2" --json' sh "$1" "$DOCTOR"
}
for t in 64:fail:1 131072:warn:0 unlimited:ok:0; do
	lim=${t%%:*} want=${t#*:}
	rc=0
	as_nobody "$lim" >"$OUT/memlock-$lim.json" || rc=$?
	got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(*[x["status"] + ": " + x["message"] for x in d["verdicts"] if x["check"] == "memlock"])' \
		"$OUT/memlock-$lim.json")
	echo "ulimit -l $lim: $got (exit $rc)"
	case $got in "${want%:*}: "*) ;; *) lab_fail "ulimit -l $lim: want ${want%:*}" ;; esac
	[ "$rc" = "${want#*:}" ] || [ "${want%:*}" != fail ] || lab_fail "exit $rc with a failed check"
done
python3 -c 'import json, sys
print(*[x["advice"] for x in json.load(open(sys.argv[1]))["verdicts"] if x["check"] == "memlock"])' \
	"$OUT/memlock-64.json"
