// SPDX-License-Identifier: GPL-2.0
/*
 * Several processes on one fd: children (this program again, started
 * with -c) that fuzz their own fds and an fd they inherit from the parent,
 * which the parent keeps using.  Their findings are theirs to print; the
 * parent counts a child that reports any, or does not exit in time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "fuzz.h"

#define MAX_PROCS	8

static pid_t pids[MAX_PROCS];
static unsigned int nprocs;

int fz_procs_start(int shared_fd)
{
	char seed[24], calls[24], secs[16], fd[16], addr[INET_ADDRSTRLEN],
	     excl[256];
	unsigned int i, k;
	size_t used = 0;
	uint64_t x;
	pid_t pid;

	if (fcntl(shared_fd, F_SETFD, 0))
		return errno;
	excl[0] = 0;
	for (k = 0; k < K_NR_KINDS; k++)
		if ((fz_opt.exclude & (1U << k)) || k == K_PROCS || k == K_FORK)
			used += snprintf(excl + used, sizeof(excl) - used, "%s%s",
					 used ? "," : "", fz_kind_names[k]);
	inet_ntop(AF_INET, &fz_opt.node_addr, addr, sizeof(addr));
	snprintf(calls, sizeof(calls), "%llu",
		 (unsigned long long)(fz_opt.calls / 10 + 1));
	snprintf(secs, sizeof(secs), "%u", fz_opt.seconds);
	snprintf(fd, sizeof(fd), "%d", shared_fd);
	for (i = 0; i < fz_opt.procs && i < MAX_PROCS; i++) {
		x = fz_opt.seed ^ (0x5851f42d4c957f2dULL * (i + 1));
		snprintf(seed, sizeof(seed), "%llu",
			 (unsigned long long)fz_splitmix(&x));
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return errno;
		if (!pid) {
			execl("/proc/self/exe", "collx_fuzz", "-c", "-s", seed,
			      "-n", calls, "-t", "1", "-T", secs, "-F", fd,
			      "-a", addr, "-x", excl, (char *)NULL);
			perror("collx_fuzz: exec");
			_exit(2);
		}
		pids[nprocs++] = pid;
	}
	return 0;
}

void fz_procs_finish(void)
{
	unsigned int bound = 10 * fz_slowdown();
	double end = fz_now() + bound;
	unsigned int i;
	pid_t got;
	int st;

	for (i = 0; i < nprocs; i++) {
		while ((got = waitpid(pids[i], &st, WNOHANG)) == 0 &&
		       fz_now() < end)
			usleep(10000);
		if (got == 0) {
			fz_finding(NULL, F_HANG, "child %d still running %u s after the run ended",
				   pids[i], bound);
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &st, 0);
		} else if (got < 0) {
			fz_finding(NULL, F_CHILD, "child %d: waitpid: %s", pids[i],
				   strerror(errno));
		} else if (WIFSIGNALED(st)) {
			fz_finding(NULL, F_CHILD, "child %d killed by signal %d",
				   pids[i], WTERMSIG(st));
		} else if (WEXITSTATUS(st)) {
			fz_finding(NULL, F_CHILD, "child %d exited %d (its findings are above)",
				   pids[i], WEXITSTATUS(st));
		}
	}
	nprocs = 0;
}
