// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Chunk hashes and shards over regions. */
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"
#include "tap.h"

int main(void)
{
	enum { N = 300000 };
	unsigned long long seed = 7;
	uint8_t *flat = malloc(N), *back = malloc(N);
	struct collx_ckpt_region r[5];
	size_t cut[5] = { 1, 4095, 100000, 0, N - 1 - 4095 - 100000 };
	struct ckpt_iov v = { r, 5 };
	struct iovec iov[8];
	size_t off = 0;
	int i, bad = 0, n;

	/* XXH3-64 of no bytes, as xxHash's own sanity test has it */
	ok(ckpt_hash("", 0) == 0x2D06800538D394C2ULL, "XXH3-64 of the empty input");
	ok(ckpt_hash("a", 1) != ckpt_hash("b", 1), "one byte changes the hash");
	for (i = 0; i < N; i++)
		flat[i] = (uint8_t)tap_rand(&seed);
	for (i = 0; i < 5; i++) {
		r[i].buf = malloc(cut[i] ? cut[i] : 1);
		r[i].bytes = cut[i];
		memcpy(r[i].buf, flat + off, cut[i]);
		off += cut[i];
	}
	ok(ckpt_regions_bytes(v) == N, "regions add up (%llu)", (unsigned long long)ckpt_regions_bytes(v));
	/* every window across region edges hashes as the flat bytes do */
	for (off = 0; off + 70000 <= N; off += 4093)
		if (ckpt_hash_regions(v, off, 70000) != ckpt_hash(flat + off, 70000))
			bad++;
	ok(!bad, "hash over regions == hash of the flat bytes, %d windows differ", bad);
	ok(ckpt_hash_regions(v, 0, N) == ckpt_hash(flat, N), "whole shard over 5 regions (one empty)");
	ckpt_copy_from_regions(v, 0, back, N);
	ok(!memcmp(back, flat, N), "copy out of the regions");
	memset(back, 0, N);
	for (i = 0; i < 5; i++)
		memset(r[i].buf, 0, cut[i]);
	ckpt_copy_to_regions(v, 0, flat, N);
	ckpt_copy_from_regions(v, 0, back, N);
	ok(!memcmp(back, flat, N), "copy into the regions and back");
	n = ckpt_regions_iov(v, 4000, 200000, iov, 8);
	ok(n == 3 && iov[0].iov_len == 96 && iov[1].iov_len == 100000 &&
	   iov[2].iov_len == 200000 - 96 - 100000, "iovecs of a range over 3 regions (%d)", n);
	n = ckpt_regions_iov(v, 0, 1, iov, 8);
	ok(n == 1 && iov[0].iov_base == r[0].buf, "a 1-byte range");
	for (i = 0; i < 5; i++)
		free(r[i].buf);
	free(flat);
	free(back);
	return done();
}
