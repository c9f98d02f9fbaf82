# allreduce on 2 nodes: every dtype x op, counts 1, primes, odd, in place
# and out of place (collx-bench checks both), registered (zero copy: sent
# from and, in all-gather, written straight into the output) and bounced
# (staged copies only).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 2
collx_port 29610
collx_zc_mark
collx_bench_ok -d all -o all -C 1,2,7,13,1021,4099 -n 0 -w 0 -c 1 -R 1
collx_zc_expect grew grew
collx_zc_mark
collx_bench_ok -d all -o all -C 1,13,4099 -n 0 -w 0 -c 1 -R 0
collx_zc_expect same same
collx_no_leak
