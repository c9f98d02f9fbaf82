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
# lab-timeout: 150
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
rm -f "$COLLX_CKPT_DIR"/ckpt-*/rank-"$R".* "$COLLX_CKPT_METRICS_DIR"/*
ckpt_run 29930 --bytes $B save:1:$P1 save:2:$P2

# phase 2, tag 1: everything
out=$(ckpt_archive --tag 1)
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "archived tag 1 rank $R: 16 chunks, 16 written ($B bytes), 0 reused" ||
	lab_fail "tag 1 was not archived in full"
lab_barrier ckpt93-full 60 || lab_fail "ranks never finished archiving tag 1"
d2=$COLLX_CKPT_DIR/ckpt-00000000000000000002
if [ "$R" != "$LAST" ]; then
	# tag 2: only the changed chunks
	rep=
	[ "$R" = 0 ] && rep=--replicas
	out=$(ckpt_archive --tag 2 --incremental $rep)
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
	loadsize:2:4096:EINVAL $flip barrier loadfail:2:$bad loadfail:1:$bad)
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
ckpt_cleanup
collx_no_leak 30
