# Registered memory counts against RLIMIT_MEMLOCK for a process without
# CAP_IPC_LOCK (user nobody, 1 MiB limit), as ib_umem does.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
lab_run prlimit --memlock=1048576:1048576 setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$COLLX_SRC/tests/progs/memlock" 1048576
collx_no_leak
