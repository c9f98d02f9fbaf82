# allreduce larger than the kernel's staging area (a few hundred KiB per
# peer): several MiB, counts not divisible by the rank count, registered
# and bounced, in place and out of place, on 4 nodes and on 3.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_port 29613
BENCH_TIMEOUT=280
# 4 MiB + 12 B of fp32, registered: sent zero copy and placed through
# three overlapping windows (rxe registers at most 512 pages at once);
# 1 MiB + 4 B registered: one window.  3 MiB + 3 B of int8, bounced.
collx_zc_mark
collx_bench_ok -d float -o sum -C 1048579 -n 0 -w 0 -c 1 -R 1
collx_zc_expect grew grew
# All-gather starts long after the DESTs went out: nearly all of it lands
# directly, whatever the pages' layout (huge pages make one window lie
# inside one scatterlist entry).
collx_zc_placed_share 45
collx_zc_mark
collx_bench_ok -d int32 -o prod -C 262145 -n 0 -w 0 -c 1 -R 1
collx_zc_expect grew grew
collx_bench_ok -d int8 -o max -C 3145731 -n 0 -w 0 -c 1 -R 0
lab_barrier large-3 120 || lab_fail "barrier"
collx_port 29623
[ "$COLLX_RANK" -lt 3 ] || { collx_no_leak; lab_skip "3-node part: node$COLLX_RANK sits out"; }
export COLLX_NRANKS=3
# 2 MiB + 14 B of bf16 avg: 1048583 elements, 3 ranks
collx_bench_ok -d bfloat16 -o avg -C 1048583 -n 0 -w 0 -c 1 -R 1
collx_no_leak
