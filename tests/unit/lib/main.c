// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of libcollx (user/lib) and the bench helpers
 * (user/common), built from their sources under ASan and UBSan.  Prints
 * TAP; exits non-zero if any test failed.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collx_int.h"
#include "unit_lib.h"

void unit_clearenv(void)
{
	static const char *const vars[] = {
		"COLLX_RANK", "COLLX_NRANKS", "COLLX_COMM_ID", "COLLX_MASTER_ADDR",
		"COLLX_MASTER_PORT", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
		"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
		"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
		"SLURM_NODELIST",
		"COLLX_BOOTSTRAP_TIMEOUT", "COLLX_TIMEOUT_MS", "COLLX_DEVICE",
		"COLLX_IB_HCA", "COLLX_RDMA_ADDR", "COLLX_IB_GID_INDEX", "COLLX_IB_TC",
		"COLLX_ALGO", "COLLX_SOCKET_IFNAME", "COLLX_DEBUG", "COLLX_DEBUG_SUBSYS",
		"COLLX_DEBUG_FILE", "COLLX_JOB_TOKEN", "COLLX_JOB_TOKEN_FILE",
		"COLLX_SEPARATE_RDMA_NET",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

int64_t unit_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint16_t unit_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		abort();
	close(fd);
	return ntohs(sa.sin_port);
}

long unit_slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return (long)n;
}

int main(int argc, char **argv)
{
	const struct unit_test *const tables[] = { env_tests, bootstrap_tests, fake_tests,
						   bench_tests };
	int ntests = 0, nfailed = 0;
	size_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		const struct unit_test *u;

		for (u = tables[t]; u->name; u++) {
			int rc;

			/* "make check T=word" runs the tests whose names have it */
			if (argc > 1 && !strstr(u->name, argv[1]))
				continue;
			unit_clearenv();
			collx_log_reinit();
			rc = u->fn();
			ntests++;
			nfailed += rc != 0;
			printf("%sok %d - %s\n", rc ? "not " : "", ntests, u->name);
		}
	}
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
