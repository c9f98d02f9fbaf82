// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of kmod/core (reductions, schedules, uapi checks), built
 * from the same sources as the module, under ASan and UBSan.
 * Output: flat TAP; exit status 1 if any test failed.
 * COLLX_SEED=<n> reruns with another random seed.
 */
#include <stdlib.h>
#include "unit.h"

unsigned int unit_ntests, unit_nfail;
uint64_t unit_rng_state = 0x9e3779b97f4a7c15ULL;

int main(void)
{
	const char *seed = getenv("COLLX_SEED");

	if (seed && *seed)
		unit_rng_state = strtoull(seed, NULL, 0) | 1;
	unit_diag("seed 0x%llx", (unsigned long long)unit_rng_state);
	test_reduce();
	test_sched();
	test_coll();
	test_uapi();
	printf("1..%u\n", unit_ntests);
	if (unit_nfail)
		unit_diag("%u of %u failed", unit_nfail, unit_ntests);
	return unit_nfail ? 1 : 0;
}
