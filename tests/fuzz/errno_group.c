// SPDX-License-Identifier: GPL-2.0
/*
 * SUBMIT_GROUP: a valid group, the largest one, counts and entry sizes
 * at and out of their range, entries on two comms, entries that cannot be read or
 * written back, and all or nothing: a group with a bad entry queues
 * nothing (no record arrives) and names the entry in error_index.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "etest.h"

#define ES	sizeof(struct collx_submit)
#define NONE	0xfffffffeU

static uint8_t entries[(COLLX_MAX_GROUP + 1) * (ES + 8)];

/* @n entries of @es bytes: fp32 allreduces (or barriers) on @comm. */
static void fill(uint32_t n, uint32_t es, uint32_t comm, bool barriers)
{
	struct collx_submit s;
	uint32_t i;

	memset(entries, 0, (size_t)n * es);
	for (i = 0; i < n; i++) {
		if (barriers) {
			memset(&s, 0, sizeof(s));
			s.comm_id = comm;
			s.coll = COLLX_COLL_BARRIER;
		} else {
			et_allreduce(&s, comm, 64, et.buf + i * 512,
				     et.buf + 65536 + i * 512);
		}
		s.size = es;
		memcpy(entries + (size_t)i * es, &s, sizeof(s) < es ? sizeof(s) : es);
	}
}

static int group(int fd, uint32_t n, uint32_t es, void *at, uint32_t *ei)
{
	struct collx_submit_group g = { .size = sizeof(g) };
	int err;

	g.count = n;
	g.entry_size = es;
	g.entries = (uint64_t)(uintptr_t)at;
	g.error_index = NONE;
	err = et_ioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g);
	if (ei)
		*ei = g.error_index;
	return err;
}

static struct collx_submit *entry(uint32_t i, uint32_t es)
{
	return (struct collx_submit *)(entries + (size_t)i * es);
}

/* A failed group: its errno, its error_index, and no record at all. */
static void failed(int fd, int err, uint32_t ei, int want, uint32_t want_ei,
		   const char *name)
{
	char why[96] = "", idx[32] = "";
	bool quiet = !et_readable(fd, 500);

	if (err != want)
		snprintf(why, sizeof(why), "got %s", et_err(err));
	else if (want_ei != NONE && ei != want_ei)
		snprintf(why, sizeof(why), "error_index %u", ei);
	else if (!quiet)
		snprintf(why, sizeof(why), "a record arrived: something was queued");
	if (want_ei != NONE)
		snprintf(idx, sizeof(idx), ", error_index %u", want_ei);
	et_ok(!why[0], why, "SUBMIT_GROUP: %s -> %s%s", name, et_err(want), idx);
	et_drain(fd, 50);
}

void et_group_cases(void)
{
	uint32_t comm, comm2, ei, i;
	unsigned int got;
	int fd = et_open(), err;
	bool ok;

	if (et_comm(fd, 0, &comm) || et_comm(fd, 0, &comm2)) {
		et_ok(false, "no 1-rank comm", "SUBMIT_GROUP: two 1-rank comms to submit on");
		close(fd);
		return;
	}

	fill(3, ES, comm, false);
	err = group(fd, 3, ES, entries, &ei);
	ok = !err && ei == 3 && entry(0, ES)->op_id != entry(1, ES)->op_id &&
	     entry(1, ES)->op_id != entry(2, ES)->op_id &&
	     entry(0, ES)->op_id != entry(2, ES)->op_id;
	got = ok ? et_drain(fd, 1000) : 0;
	et_ok(ok && got == 3, err ? et_err(err) : "error_index, op_ids or records wrong",
	      "SUBMIT_GROUP: 3 allreduces -> ok, error_index 3, 3 op_ids, 3 records (%u)",
	      got);

	fill(1, ES, comm, false);
	err = group(fd, 0, ES, entries, &ei);
	failed(fd, err, ei, EINVAL, NONE, "count 0");

	fill(COLLX_MAX_GROUP + 1, ES, comm, true);
	err = group(fd, COLLX_MAX_GROUP + 1, ES, entries, &ei);
	failed(fd, err, ei, EINVAL, NONE, "count COLLX_MAX_GROUP + 1");

	err = group(fd, COLLX_MAX_GROUP, ES, entries, &ei);
	got = err ? 0 : et_drain(fd, 1000);
	et_ok(!err && got == COLLX_MAX_GROUP, err ? et_err(err) : "records missing",
	      "SUBMIT_GROUP: COLLX_MAX_GROUP barriers -> ok, %u records", got);

	fill(2, ES - 1, comm, false);
	err = group(fd, 2, ES - 1, entries, &ei);
	failed(fd, err, ei, EINVAL, NONE, "entry_size one short of struct collx_submit");

	fill(3, ES, comm, false);
	entry(1, ES)->size = ES - 8;
	err = group(fd, 3, ES, entries, &ei);
	failed(fd, err, ei, EINVAL, 1, "entry 1's own size differs from entry_size");

	fill(3, ES + 8, comm, false);
	err = group(fd, 3, ES + 8, entries, &ei);
	got = err ? 0 : et_drain(fd, 1000);
	et_ok(!err && got == 3, et_err(err),
	      "SUBMIT_GROUP: entry_size longer, zero tails -> ok, 3 records");

	fill(2, COLLX_MAX_ENTRY_SIZE, comm, false);
	err = group(fd, 2, COLLX_MAX_ENTRY_SIZE, entries, &ei);
	got = err ? 0 : et_drain(fd, 1000);
	et_ok(!err && got == 2, et_err(err),
	      "SUBMIT_GROUP: entry_size COLLX_MAX_ENTRY_SIZE, zero tails -> ok, 2 records");

	fill(2, COLLX_MAX_ENTRY_SIZE + 1, comm, false);
	err = group(fd, 2, COLLX_MAX_ENTRY_SIZE + 1, entries, &ei);
	failed(fd, err, ei, EINVAL, NONE, "entry_size COLLX_MAX_ENTRY_SIZE + 1");

	fill(3, ES + 8, comm, false);
	entries[(ES + 8) + ES + 7] = 1;
	err = group(fd, 3, ES + 8, entries, &ei);
	failed(fd, err, ei, E2BIG, 1, "entry_size longer, a non-zero byte in entry 1's tail");

	fill(3, ES, comm, false);
	entry(1, ES)->comm_id = comm2;
	err = group(fd, 3, ES, entries, &ei);
	failed(fd, err, ei, EINVAL, 1, "entries on two comms");

	fill(4, ES, comm, false);
	entry(2, ES)->dtype = COLLX_DTYPE_COUNT;
	err = group(fd, 4, ES, entries, &ei);
	failed(fd, err, ei, EOPNOTSUPP, 2,
	       "4 entries, the 3rd with an unknown dtype: nothing queued");

	fill(4, ES, comm, false);
	entry(2, ES)->root = 1;
	err = group(fd, 4, ES, entries, &ei);
	failed(fd, err, ei, EINVAL, 2,
	       "4 entries, the 3rd with root >= nranks: nothing queued");

	err = group(fd, 2, ES, NULL, &ei);
	failed(fd, err, ei, EFAULT, NONE, "entries NULL");

	fill(2, ES, comm, false);
	mprotect(et.ro, 4 * ET_PAGE, PROT_READ | PROT_WRITE);
	memcpy(et.ro + ET_PAGE, entries, 2 * ES);
	mprotect(et.ro, 4 * ET_PAGE, PROT_READ);
	err = group(fd, 2, ES, et.ro + ET_PAGE, &ei);
	failed(fd, err, ei, EFAULT, NONE,
	       "entries in read-only memory (op_ids cannot be written): nothing queued");

	for (i = 0; i < 2; i++)
		et_destroy(fd, i ? comm2 : comm);
	close(fd);
}
