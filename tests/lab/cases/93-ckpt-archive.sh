# Checkpoints, phase 2 and the restore ladder: N (2..4) ranks save tag 1
# and tag 2 (2 of its 16 chunks changed); collx-ckptd archives tag 1 in
# full on every rank and tag 2 incrementally (only the 2 changed chunks
# written: its output, its data file's size and its metrics say so) on all
# ranks but the last, whose tag 2 its holder (rank 0) archives from the
# replica it holds (--replicas).  The last rank's area is then removed (a
# replaced node): it restores tag 2 from its holder's replica, the others
# locally.  Then every area is removed: every rank restores tags 2 and 1
# from the archive, every byte checked (the last rank's tag 2 through the
# manifest rank 0 wrote).  Bad input gets its error: a save of more than
# the area takes (EINVAL on rank 0, EREMOTEIO naming it on the others,
# and nobody left waiting), an unknown tag (ENOENT), a shard of another
# size (EINVAL, naming both sizes), and a
# bit flipped in rank 0's archived tag 1 data, which its incremental tag 2
# references (EBADMSG on rank 0 naming the chunk, EREMOTEIO on the others).
# Coordination (issue 38 item 3): archives are keyed by (epoch, tag),
# ckpt-<epoch>-<tag>/, and get a COMMITTED marker from exactly one daemon
# once every rank's manifest is there.  Then tag 3 (epoch 2) is drained
# slowly (--hold-ms) while tags 4 and 5 are saved: the drain is pinned, so
# tag 5's save waits for it instead of aborting it.  A --keep 2 pass
# archives tag 5; its one marker writer removes (1, 2) and keeps (1, 1),
# whose chunks the kept ones take.  Restore from the archive obeys the
# marker: without it, ENOENT on every rank; with it, every byte back.
# --status names each checkpoint's state; a fresh start (areas gone,
# nothing restored) saves in an epoch above every archived one.
# lab-timeout: 200
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
lab_need_ranks "$CKPT_N"
collx_nodes "$CKPT_N"
R=$COLLX_RANK
LAST=$((CKPT_N - 1))
B=4194304		# 16 chunks of 256 KiB
P1=11
P2=11/12@1,5		# tag 2: chunks 1 and 5 changed
ckpt_cleanup
rm -f "$COLLX_CKPT_METRICS_DIR"/*
[ "$R" = 0 ] && rm -rf "$COLLX_CKPT_DIR"/ckpt-* "$COLLX_CKPT_DIR"/out-*
lab_barrier ckpt93-start 60 || lab_fail "ranks never started"
ckpt_run 29930 --bytes $B save:1:$P1 save:2:$P2

# phase 2, tag 1: everything
out=$(ckpt_archive --tag 1)
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "archived tag 1 rank $R: 16 chunks, 16 written ($B bytes), 0 reused" ||
	lab_fail "tag 1 was not archived in full"
lab_barrier ckpt93-full 60 || lab_fail "ranks never finished archiving tag 1"
d2=$COLLX_CKPT_DIR/ckpt-00000000000000000001-00000000000000000002	# epoch 1
if [ "$R" != "$LAST" ]; then
	# tag 2: only the changed chunks
	rep=
	[ "$R" = 0 ] && rep=--replicas
	out=$(ckpt_archive --tag 2 --incremental $rep --grace-s 0)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "archived tag 2 rank $R: 16 chunks, 2 written (524288 bytes), 14 reused" ||
		lab_fail "the incremental archive of tag 2 did not write exactly the 2 changed chunks"
	sz=$(stat -c %s "$d2/rank-$R.data")
	[ "$sz" = 524288 ] || lab_fail "tag 2's data file holds $sz bytes, not the 2 chunks' 524288"
	m=$(ckpt_metric "collx_ckpt_ckptd_r$R.prom" "collx_ckpt_last_bytes{phase=\"archive\",rank=\"$R\"}")
	[ "$m" = 524288 ] || lab_fail "collx-ckptd's metrics say $m bytes archived, not 524288"
	if [ "$R" = 0 ]; then
		printf '%s\n' "$out" |
			grep -q "archived tag 2 rank $LAST (replica): 16 chunks, 2 written (524288 bytes), 14 reused" ||
			lab_fail "rank 0 did not archive rank $LAST's tag 2 from its replica"
		[ -f "$d2/rank-$LAST.manifest" ] || lab_fail "no manifest of rank $LAST's tag 2"
	fi
	# nothing new: a second pass writes nothing
	out=$(ckpt_archive --incremental)
	printf '%s\n' "$out" | grep -q archived && lab_fail "a second pass archived again: $out"
fi
lab_barrier ckpt93-archived 60 || lab_fail "ranks never finished archiving tag 2"
# Only now: the last rank skips tag 2 (rank 0 archives it from the replica)
# and once looked while rank 0 was still writing its manifests.
ls -a "$d2" | grep -q '\.tmp' && lab_fail "a temporary manifest was left in $d2"
[ -f "$d2/COMMITTED" ] || lab_fail "no COMMITTED marker in $d2 after every rank's manifest"

# a replaced node: the last rank's area is gone, its holder has the replica
src=local
if [ "$R" = "$LAST" ]; then
	rm -f "$(ckpt_area)"
	src=peer
fi
lab_barrier ckpt93-replaced 60 || lab_fail "ranks never reached the replaced node's restore"
ckpt_run 29931 --bytes $B load:2:$src:$P2

# every area gone: the archive
ckpt_cleanup
lab_barrier ckpt93-wiped 60 || lab_fail "ranks never reached the archive restore"
bad=EREMOTEIO
flip=
big=saveerr:3:33:EREMOTEIO
if [ "$R" = 0 ]; then
	bad=EBADMSG
	flip=flip:1:100		# chunk 0, which tag 2 takes from tag 1's file
	big=saveerr:3:33:EINVAL:$((B + 1))	# more than the area takes
fi
out=$(ckpt_run 29932 --bytes $B $big load:2:archive:$P2 load:1:archive:$P1 loadfail:99:ENOENT \
	loadsize:2:4096:EINVAL $flip barrier loadfail:2:$bad loadfail:1:$bad $flip)
printf '%s\n' "$out"
if [ "$R" = 0 ]; then
	printf '%s\n' "$out" |
		grep -q "save tag 3 failed as expected: EINVAL .*hold $((B + 1)) bytes; the area takes shards of at most $B" ||
		lab_fail "the oversized save's error does not name the sizes"
else
	printf '%s\n' "$out" | grep -q "save tag 3 failed as expected: EREMOTEIO .*rank 0 refused it" ||
		lab_fail "the other ranks were not told that rank 0's save was refused"
fi
printf '%s\n' "$out" | grep -q "load tag 99 failed as expected: ENOENT .*no copy in the area, none held by rank" ||
	lab_fail "the unknown tag's error does not say where it looked"
printf '%s\n' "$out" | grep -q "saved as 3 region(s) of $B bytes in all; this load passes 1 region(s) of 4096 bytes" ||
	lab_fail "the wrong size's error does not name both sizes"
if [ "$R" = 0 ]; then
	printf '%s\n' "$out" | grep -q "load tag 2 failed as expected: EBADMSG .*chunk 0 .*hash mismatch" ||
		lab_fail "the corrupted chunk was not named"
else
	printf '%s\n' "$out" | grep -q "load tag 2 failed as expected: EREMOTEIO .*rank 0 failed" ||
		lab_fail "the other ranks were not told that rank 0 could not restore"
fi
# (rank 0's second flip put the bit back)

# coordination: the areas restored epoch 1, so the next process saves in
# epoch 2, and the one after in epoch 3
log=$COLLX_CKPT_DIR/out-$R
lab_barrier ckpt93-coord 60 || lab_fail "ranks never reached the coordination part"
ckpt_run 29933 --bytes $B save:3:$P1
(ckpt_archive --incremental --hold-ms 6000) >"$log.drain" 2>&1 &
dpid=$!
# the pin (pin_seq, bytes 120..127 of the area's header) is up: saves now
i=0
while [ "$(od -An -tu8 -j120 -N8 "$(ckpt_area)" | tr -d ' ')" = 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ $i -lt 100 ] || lab_fail "collx-ckptd never pinned tag 3's slot"
# tag 5 needs tag 3's slot and waits for the drain; the other ranks wait
# for it in the exchange: a comm timeout well above the drain's skew
out=$(COLLX_TIMEOUT_MS=40000 COLLX_CKPT_PIN_WAIT_MS=20000 \
	ckpt_run 29934 --bytes $B save:4:$P2 save:5:$P1)
printf '%s\n' "$out"
wait $dpid || { cat "$log.drain"; lab_fail "the drain of tag 3 failed while tags 4 and 5 were saved"; }
cat "$log.drain"
p5=$(printf '%s\n' "$out" | sed -n 's/^rank [0-9]*: save tag 5.*, pause \([0-9.]*\) s.*/\1/p')
[ "$(echo "${p5:-0} > 0.2" | bc)" = 1 ] ||
	lab_fail "tag 5's save did not wait for the pinned drain (pause ${p5:-?} s)"
grep -q "archived tag 3 rank $R: .*epoch 2" "$log.drain" ||
	lab_fail "tag 3 (epoch 2) was not archived whole while saves ran"
ckpt_archive --incremental --keep 2 >"$log"
cat "$log"
grep -q "archived tag 5 rank $R: .*epoch 3" "$log" || lab_fail "tag 5 (epoch 3) was not archived"
lab_barrier ckpt93-kept 60 || lab_fail "ranks never archived tag 5"
e() { printf '%s/ckpt-%020d-%020d' "$COLLX_CKPT_DIR" "$1" "$2"; }
if [ "$R" = 0 ]; then
	n=$(cat "$COLLX_CKPT_DIR"/out-? | grep -c "epoch 3 tag 5: .*wrote its COMMITTED marker")
	[ "$n" = 1 ] || lab_fail "$n daemons wrote tag 5's COMMITTED marker, not 1"
	[ -f "$(e 2 3)/COMMITTED" ] && [ -f "$(e 3 5)/COMMITTED" ] ||
		lab_fail "the newest 2 archives are not both complete"
	[ -e "$(e 1 2)" ] && lab_fail "--keep 2 left (1, 2)"
	[ -f "$(e 1 1)/rank-0.data" ] || lab_fail "--keep 2 removed (1, 1), whose chunks the kept ones take"
	[ -e "$(e 1 1)/COMMITTED" ] && lab_fail "(1, 1) is kept for its data only, yet still marked restorable"
	ls "$COLLX_CKPT_DIR"/ckpt-*/ | grep -q tmp && lab_fail "temporary files left in the archive"
fi
# restore from the archive obeys the marker
ckpt_cleanup
[ "$R" = 0 ] && mv "$(e 3 5)/COMMITTED" "$COLLX_CKPT_DIR/held-COMMITTED"
lab_barrier ckpt93-unmarked 60 || lab_fail "ranks never reached the unmarked restore"
out=$(ckpt_run 29935 --bytes $B loadfail:5:ENOENT)
printf '%s\n' "$out" | grep -q "load tag 5 failed as expected: ENOENT .*without their COMMITTED marker" ||
	lab_fail "an archive without its COMMITTED marker was not refused with the reason"
lab_barrier ckpt93-unmarked-done 60 || lab_fail "ranks never finished the unmarked restore"
[ "$R" = 0 ] && mv "$COLLX_CKPT_DIR/held-COMMITTED" "$(e 3 5)/COMMITTED"
lab_barrier ckpt93-marked 60 || lab_fail "ranks never reached the marked restore"
ckpt_run 29936 --bytes $B load:5:archive:$P1
if [ "$R" = 0 ]; then
	out=$(lab_run "$CKPTD" --area "$(ckpt_area)" --dir "$COLLX_CKPT_DIR" --status)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "^epoch 3 tag 5: archived" &&
		printf '%s\n' "$out" | grep -q "^epoch 1 tag 1: data only" ||
		lab_fail "--status does not say tag 5 is archived and (1, 1) kept for its data"
fi
# a job started afresh (areas gone, nothing restored) takes an epoch
# above the archive's: its folders never mix with epoch 3's
ckpt_cleanup
lab_barrier ckpt93-afresh 60 || lab_fail "ranks never reached the fresh start"
out=$(ckpt_run 29937 --bytes $B save:6:$P1)
printf '%s\n' "$out" | grep -q "save tag 6: .*epoch 4," ||
	lab_fail "a fresh start did not take an epoch above the archive's 3"
ckpt_cleanup
collx_no_leak 30
