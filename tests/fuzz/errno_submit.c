// SPDX-License-Identifier: GPL-2.0
/*
 * SUBMIT on a 1-rank comm: one defect at a time (unknown values,
 * algorithms that cannot run the collective, roots out of range, buffers
 * missing, overlapping or not mapped as needed, overflowing counts), and
 * every collective done right, which one rank must end as a local copy.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "etest.h"

#define BIG_COUNT	16

enum buf { B_OK, B_NULL, B_RO, B_UNMAPPED, B_CROSS, B_OVERLAP, B_SAME };

static const struct {
	const char *name;
	uint32_t coll, dtype, redop, root, flags;
	uint64_t count;
	enum buf send, recv;
	int want, alt;
} cases[] = {
	{ "count*esize overflow (2^62 fp32)", COLLX_COLL_ALLREDUCE, COLLX_FP32,
	  0, 0, 0, 1ULL << 62, B_OK, B_OK, EINVAL, -1 },
	{ "count*esize above COLLX_MAX_BYTES", COLLX_COLL_ALLREDUCE, COLLX_FP32,
	  0, 0, 0, COLLX_MAX_BYTES / 4 + 1, B_OK, B_OK, EINVAL, -1 },
	{ "unknown coll (COLLX_COLL_COUNT)", COLLX_COLL_COUNT, COLLX_FP32, 0,
	  0, 0, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "unknown dtype (COLLX_DTYPE_COUNT)", COLLX_COLL_ALLREDUCE,
	  COLLX_DTYPE_COUNT, 0, 0, 0, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "unknown redop (COLLX_OP_COUNT)", COLLX_COLL_ALLREDUCE, COLLX_FP32,
	  COLLX_OP_COUNT, 0, 0, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "broadcast with an unknown redop (it must be valid)",
	  COLLX_COLL_BROADCAST, COLLX_FP32, COLLX_OP_COUNT, 0, 0, BIG_COUNT,
	  B_OK, B_OK, EOPNOTSUPP, EINVAL },
	{ "unknown algo (COLLX_ALGO_COUNT)", COLLX_COLL_ALLREDUCE, COLLX_FP32,
	  0, 0, COLLX_ALGO_COUNT, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "flags bit 4, beyond COLLX_SUBMIT_ALGO_MASK", COLLX_COLL_ALLREDUCE,
	  COLLX_FP32, 0, 0, 1U << 4, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "tree for allgather", COLLX_COLL_ALLGATHER, COLLX_FP32, 0, 0,
	  COLLX_ALGO_TREE, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "pairwise for allreduce", COLLX_COLL_ALLREDUCE, COLLX_FP32, 0, 0,
	  COLLX_ALGO_PAIRWISE, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "tree for barrier", COLLX_COLL_BARRIER, COLLX_FP32, 0, 0,
	  COLLX_ALGO_TREE, 0, B_NULL, B_NULL, EOPNOTSUPP, -1 },
	{ "p2p for allreduce (one rank copies, but p2p cannot run it)",
	  COLLX_COLL_ALLREDUCE, COLLX_FP32, 0, 0, COLLX_ALGO_P2P, BIG_COUNT,
	  B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "recursive doubling for alltoall", COLLX_COLL_ALLTOALL, COLLX_FP32,
	  0, 0, COLLX_ALGO_RD, BIG_COUNT, B_OK, B_OK, EOPNOTSUPP, -1 },
	{ "tree for send", COLLX_COLL_SEND, COLLX_FP32, 0, 0, COLLX_ALGO_TREE,
	  BIG_COUNT, B_OK, B_NULL, EOPNOTSUPP, -1 },
	{ "broadcast, root 1 of 1 rank", COLLX_COLL_BROADCAST, COLLX_FP32, 0,
	  1, 0, BIG_COUNT, B_OK, B_OK, EINVAL, -1 },
	{ "reduce, root 1 of 1 rank", COLLX_COLL_REDUCE, COLLX_FP32, 0, 1, 0,
	  BIG_COUNT, B_OK, B_OK, EINVAL, -1 },
	{ "send to peer 1 of 1 rank", COLLX_COLL_SEND, COLLX_FP32, 0, 1, 0,
	  BIG_COUNT, B_OK, B_NULL, EINVAL, -1 },
	{ "recv from peer 1 of 1 rank", COLLX_COLL_RECV, COLLX_FP32, 0, 1, 0,
	  BIG_COUNT, B_NULL, B_OK, EINVAL, -1 },
	{ "allreduce with root 1 (must be 0)", COLLX_COLL_ALLREDUCE, COLLX_FP32,
	  0, 1, 0, BIG_COUNT, B_OK, B_OK, EINVAL, -1 },
	{ "allreduce without a sendbuf", COLLX_COLL_ALLREDUCE, COLLX_FP32, 0,
	  0, 0, BIG_COUNT, B_NULL, B_OK, EINVAL, -1 },
	{ "allreduce without a recvbuf", COLLX_COLL_ALLREDUCE, COLLX_FP32, 0,
	  0, 0, BIG_COUNT, B_OK, B_NULL, EINVAL, -1 },
	{ "broadcast at its root without a sendbuf", COLLX_COLL_BROADCAST,
	  COLLX_FP32, 0, 0, 0, BIG_COUNT, B_NULL, B_OK, EINVAL, -1 },
	{ "reduce at its root without a recvbuf", COLLX_COLL_REDUCE,
	  COLLX_FP32, 0, 0, 0, BIG_COUNT, B_OK, B_NULL, EINVAL, -1 },
	{ "send without a sendbuf", COLLX_COLL_SEND, COLLX_FP32, 0, 0, 0,
	  BIG_COUNT, B_NULL, B_NULL, EINVAL, -1 },
	{ "recv without a recvbuf", COLLX_COLL_RECV, COLLX_FP32, 0, 0, 0,
	  BIG_COUNT, B_NULL, B_NULL, EINVAL, -1 },
	{ "alltoall, recvbuf one element into sendbuf", COLLX_COLL_ALLTOALL,
	  COLLX_FP32, 0, 0, 0, BIG_COUNT, B_OK, B_OVERLAP, EINVAL, -1 },
	{ "alltoall in place (recvbuf = sendbuf)", COLLX_COLL_ALLTOALL,
	  COLLX_FP32, 0, 0, 0, BIG_COUNT, B_OK, B_SAME, EINVAL, -1 },
	{ "barrier with count 1", COLLX_COLL_BARRIER, COLLX_FP32, 0, 0, 0, 1,
	  B_NULL, B_NULL, EINVAL, -1 },
	{ "barrier with a sendbuf", COLLX_COLL_BARRIER, COLLX_FP32, 0, 0, 0, 0,
	  B_OK, B_NULL, EINVAL, -1 },
	{ "barrier with a recvbuf", COLLX_COLL_BARRIER, COLLX_FP32, 0, 0, 0, 0,
	  B_NULL, B_OK, EINVAL, -1 },
	{ "allreduce from unmapped memory", COLLX_COLL_ALLREDUCE, COLLX_FP32, 0,
	  0, 0, BIG_COUNT, B_UNMAPPED, B_OK, EFAULT, -1 },
	{ "allreduce into read-only memory", COLLX_COLL_ALLREDUCE, COLLX_FP32,
	  0, 0, 0, BIG_COUNT, B_OK, B_RO, EFAULT, -1 },
	{ "allreduce into memory running into an unmapped page",
	  COLLX_COLL_ALLREDUCE, COLLX_FP32, 0, 0, 0, ET_PAGE / 4, B_OK, B_CROSS,
	  EFAULT, -1 },
	{ "allreduce from read-only memory (only read)", COLLX_COLL_ALLREDUCE,
	  COLLX_FP32, 0, 0, 0, BIG_COUNT, B_RO, B_OK, 0, -1 },
};

static uint64_t where(enum buf b, uint8_t *own, uint8_t *send)
{
	switch (b) {
	case B_NULL:
		return 0;
	case B_RO:
		return (uint64_t)(uintptr_t)et.ro;
	case B_UNMAPPED:
		return (uint64_t)(uintptr_t)et.none;
	case B_CROSS:
		return (uint64_t)(uintptr_t)(et.end + ET_PAGE / 2);
	case B_OVERLAP:
		return (uint64_t)(uintptr_t)(send + 4);
	case B_SAME:
		return (uint64_t)(uintptr_t)send;
	default:
		return (uint64_t)(uintptr_t)own;
	}
}

/* Every collective on one rank: status 0, bytes, output = input. */
static void local_copy(int fd, uint32_t comm, uint32_t coll, uint32_t dtype,
		       bool in_place)
{
	uint64_t count = coll == COLLX_COLL_BARRIER ? 0 : 1000, in, out;
	uint8_t *send = et.buf + 1024 * 1024, *recv = et.buf + 2 * 1024 * 1024;
	size_t es = fz_dtype_size(dtype), i;
	struct collx_completion c = { 0 };
	struct collx_submit s = { .size = sizeof(s) };
	bool ok;
	int err;

	fz_coll_bytes(coll, count, es, 1, &in, &out);
	for (i = 0; i < in; i++)
		send[i] = (uint8_t)(i * 7 + 3);
	memset(recv, 0xee, out + 64);
	if (in_place)
		recv = send;
	s.comm_id = comm;
	s.coll = coll;
	s.dtype = dtype;
	s.count = count;
	if (coll != COLLX_COLL_BARRIER && coll != COLLX_COLL_RECV)
		s.sendbuf = (uint64_t)(uintptr_t)send;
	if (coll != COLLX_COLL_BARRIER && coll != COLLX_COLL_SEND)
		s.recvbuf = (uint64_t)(uintptr_t)recv;
	err = et_submit(fd, &s);
	if (!err)
		err = et_wait(fd, s.op_id, 5000, &c);
	ok = !err && !c.status && c.bytes == out && c.op_id == s.op_id;
	for (i = 0; ok && i < out; i++)
		ok = recv[i] == (uint8_t)(i * 7 + 3);
	if (ok && !in_place)
		ok = recv[out] == 0xee;
	et_ok(ok, err ? et_err(err) : c.status ? et_err(-c.status) :
	      "wrong bytes or data",
	      "SUBMIT: 1-rank %s (%s, %llu elements%s) ends as a local copy -> ok",
	      fz_coll_name(coll), fz_dtype_name(dtype),
	      (unsigned long long)count, in_place ? ", in place" : "");
}

void et_submit_cases(void)
{
	struct collx_submit s;
	uint8_t *own_send = et.buf, *own_recv = et.buf + 65536;
	uint32_t comm;
	unsigned int i;
	int fd = et_open(), err;

	err = et_comm(fd, 0, &comm);
	if (err) {
		et_ok(false, et_err(err), "SUBMIT: a 1-rank comm to submit on");
		close(fd);
		return;
	}
	for (i = 0; i < FZ_ARRAY_SIZE(cases); i++) {
		memset(&s, 0, sizeof(s));
		s.size = sizeof(s);
		s.comm_id = comm;
		s.coll = cases[i].coll;
		s.dtype = cases[i].dtype;
		s.redop = cases[i].redop;
		s.root = cases[i].root;
		s.flags = cases[i].flags;
		s.count = cases[i].count;
		s.sendbuf = where(cases[i].send, own_send, own_send);
		s.recvbuf = where(cases[i].recv, own_recv, own_send);
		err = et_submit(fd, &s);
		et_expect(err, cases[i].want, cases[i].alt, "SUBMIT: %s -> %s",
			  cases[i].name, et_err(cases[i].want));
		if (!err)
			et_wait(fd, s.op_id, 5000, NULL);
	}
	et_allreduce(&s, 0x7fffffff, BIG_COUNT, own_send, own_recv);
	et_expect(et_submit(fd, &s), ENOENT, -1,
		  "SUBMIT: a comm_id never handed out -> ENOENT");

	for (i = 0; i < COLLX_COLL_SEND; i++)
		local_copy(fd, comm, i, COLLX_FP32, false);
	local_copy(fd, comm, COLLX_COLL_ALLREDUCE, COLLX_BF16, true);
	local_copy(fd, comm, COLLX_COLL_ALLGATHER, COLLX_INT8, true);
	local_copy(fd, comm, COLLX_COLL_REDUCE_SCATTER, COLLX_FP64, true);
	if (et.features & COLLX_FEATURE_FP8)
		local_copy(fd, comm, COLLX_COLL_ALLREDUCE, COLLX_FP8_E5M2, false);
	else
		et_skip("no COLLX_FEATURE_FP8",
			"SUBMIT: 1-rank allreduce of fp8e5m2 ends as a local copy");
	memset(&s, 0, sizeof(s));
	et_allreduce(&s, comm, 0, own_send, own_recv);
	err = et_submit(fd, &s);
	if (!err) {
		struct collx_completion c = { .status = 1 };

		err = et_wait(fd, s.op_id, 5000, &c);
		if (!err)
			err = -c.status;
		if (!err && c.bytes)
			err = ERANGE;
	}
	et_expect(err, 0, -1, "SUBMIT: allreduce of 0 elements (it moves nothing) -> ok");
	et_destroy(fd, comm);
	close(fd);
}
