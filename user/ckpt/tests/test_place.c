// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Placement: replicas on other nodes, holders and sources inverse. */
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"
#include "tap.h"

int main(void)
{
	char err[CKPT_ERRLEN];
	uint32_t n, s, k, r, j, j2;
	int cases = 0, bad = 0;
	long stride;

	for (n = 1; n <= 24; n++)
		for (s = 1; s <= n; s++) {
			if (n % s)
				continue;
			for (k = 0; k < n / s && k <= COLLX_CKPT_MAX_K; k++) {
				if (ckpt_place_check(n, s, k, err, sizeof(err))) {
					bad++;
					continue;
				}
				cases++;
				for (r = 0; r < n; r++)
					for (j = 1; j <= k; j++) {
						uint32_t h = ckpt_holder(n, s, r, j);

						/* another node, and r is its j-th source */
						if (h / s == r / s || ckpt_source(n, s, h, j) != r)
							bad++;
						for (j2 = 1; j2 < j; j2++)
							if (ckpt_holder(n, s, r, j2) / s == h / s)
								bad++;
					}
			}
		}
	ok(!bad && cases > 100, "%d geometries: holders on distinct other nodes, sources inverse (%d bad)",
	   cases, bad);
	ok(ckpt_place_check(4, 1, 1, err, sizeof(err)) == 0, "4 ranks, 1 per node, k 1");
	ok(ckpt_place_check(4, 1, 4, err, sizeof(err)) == -EINVAL, "k 4 of 4 nodes: %s", err);
	ok(ckpt_place_check(8, 4, 2, err, sizeof(err)) == -EINVAL, "2 nodes cannot hold 2 more: %s", err);
	ok(ckpt_place_check(6, 4, 1, err, sizeof(err)) == -EINVAL, "6 ranks in nodes of 4: %s", err);
	ok(ckpt_place_check(64, 1, 9, err, sizeof(err)) == -EINVAL, "k over the maximum: %s", err);
	ok(ckpt_holder(8, 4, 1, 1) == 5 && ckpt_source(8, 4, 5, 1) == 1,
	   "stride 4: rank 1's replica on rank 5 (the next node)");

	unsetenv("LOCAL_WORLD_SIZE");
	unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	unsetenv("MPI_LOCALNRANKS");
	unsetenv("SLURM_NTASKS_PER_NODE");
	unsetenv("COLLX_CKPT_STRIDE");
	ok(ckpt_env_stride(&stride, err, sizeof(err)) == 0 && stride == 1, "no launcher: stride 1");
	setenv("LOCAL_WORLD_SIZE", "8", 1);
	ok(ckpt_env_stride(&stride, err, sizeof(err)) == 0 && stride == 8, "torchrun's LOCAL_WORLD_SIZE");
	setenv("COLLX_CKPT_STRIDE", "2", 1);
	ok(ckpt_env_stride(&stride, err, sizeof(err)) == 0 && stride == 2, "COLLX_CKPT_STRIDE first");
	setenv("COLLX_CKPT_STRIDE", "2x", 1);
	ok(ckpt_env_stride(&stride, err, sizeof(err)) == -EINVAL, "malformed: %s", err);
	setenv("COLLX_CKPT_STRIDE", "0", 1);
	ok(ckpt_env_stride(&stride, err, sizeof(err)) == -EINVAL, "zero: %s", err);
	return done();
}
