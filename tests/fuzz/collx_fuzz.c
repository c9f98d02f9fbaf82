// SPDX-License-Identifier: GPL-2.0
/*
 * collx_fuzz: a seeded fuzzer of /dev/collx.  Random ioctl numbers, sizes,
 * field values at their edges and pointers of every kind, on 1-rank
 * communicators (every collective a local copy, checked byte for byte),
 * from several threads on shared fds, with race scenarios, a fork after
 * register and child processes on an inherited fd.  Every result must be
 * one the uapi documents for the call (and the one its input implies,
 * where it implies one); anything else is a finding, printed with the
 * call.  At the end: calls per ioctl, results per errno, findings, and
 * the module's counters back where they were.
 *
 *   collx_fuzz [-s SEED] [-n CALLS] [-t THREADS] [-T SECONDS] [-P PROCS]
 *              [-x KIND,...] [-a NODE_ADDR] [-p N] [-v]
 *
 * Exit status: 0 no finding, 1 findings, 2 cannot run, 3 a hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "fuzz.h"
#include "node.h"

struct fz_opts fz_opt = {
	.calls = 100000,
	.threads = 1,
	.seconds = 60,
	.nfds = 3,
	.procs = 1,
	.shared_fd = -1,
	.print = 60,
};

const char *const fz_kind_names[K_NR_KINDS] = {
	[K_VERSION] = "version", [K_CREATE] = "create",
	[K_DESTROY] = "destroy", [K_REG] = "reg", [K_DEREG] = "dereg",
	[K_SUBMIT] = "submit", [K_GROUP] = "group", [K_WAIT] = "wait",
	[K_READ] = "read", [K_POLL] = "poll", [K_BADNR] = "badnr",
	[K_RACE] = "race", [K_FORK] = "fork", [K_PROCS] = "procs",
};

/* How often each kind of call comes, per 10000. */
static const unsigned int kind_weight[K_NR_KINDS] = {
	[K_VERSION] = 300, [K_CREATE] = 450, [K_DESTROY] = 300,
	[K_REG] = 700, [K_DEREG] = 500, [K_SUBMIT] = 3000, [K_GROUP] = 700,
	[K_WAIT] = 1200, [K_READ] = 900, [K_POLL] = 400, [K_BADNR] = 600,
	[K_RACE] = 10, [K_FORK] = 3,
};

uint32_t fz_abi_minor;
uint64_t fz_features;
static double t_start;
static volatile bool stopping, finished;
static struct fz_thread *threads[FZ_MAX_THREADS];
static double kind_secs[K_NR_KINDS];	/* wall time per kind, thread 0 */
static uint64_t kind_runs[K_NR_KINDS];

double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t fz_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

bool fz_time_up(void)
{
	return stopping || fz_now() - t_start >= fz_opt.seconds;
}

void fz_request_stop(void)
{
	stopping = true;
}

static void usage(void)
{
	unsigned int k;

	fprintf(stderr,
		"usage: collx_fuzz [-s SEED] [-n CALLS] [-t THREADS] [-T SECONDS] [-P PROCS]\n"
		"                  [-x KIND,...] [-a NODE_ADDR] [-p N] [-v]\n"
		"  -s SEED     random seed (default: from getrandom, printed)\n"
		"  -n CALLS    system calls in all (default 100000)\n"
		"  -t THREADS  threads on the shared fds (default 1: reproducible)\n"
		"  -T SECONDS  bound on the run (default 60)\n"
		"  -P PROCS    child processes on an inherited fd (default 1)\n"
		"  -x KINDS    leave out kinds of calls:");
	for (k = 0; k < K_NR_KINDS; k++)
		fprintf(stderr, " %s", fz_kind_names[k]);
	fprintf(stderr,
		"\n  -a ADDR     this node's IPv4 address, for 1-rank comms\n"
		"              (default: $COLLX_NODE_ADDR, else the first interface's)\n"
		"  -p N        print the first N findings in full (default 60)\n"
		"  -v          print every call on stderr\n");
	exit(2);
}

static unsigned int parse_kinds(const char *s)
{
	char buf[256], *tok, *save;
	unsigned int mask = 0, k;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < K_NR_KINDS; k++)
			if (!strcmp(tok, fz_kind_names[k]))
				break;
		if (k == K_NR_KINDS) {
			fprintf(stderr, "collx_fuzz: unknown kind '%s'\n", tok);
			usage();
		}
		mask |= 1U << k;
	}
	return mask;
}

static void parse(int argc, char **argv)
{
	const char *addr = NULL;
	bool have_seed = false;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:t:T:P:x:a:F:p:cvh")) != -1) {
		switch (opt) {
		case 's':
			fz_opt.seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 'n':
			fz_opt.calls = strtoull(optarg, NULL, 0);
			break;
		case 't':
			fz_opt.threads = (unsigned int)atoi(optarg);
			break;
		case 'T':
			fz_opt.seconds = (unsigned int)atoi(optarg);
			break;
		case 'P':
			fz_opt.procs = (unsigned int)atoi(optarg);
			break;
		case 'x':
			fz_opt.exclude |= parse_kinds(optarg);
			break;
		case 'a':
			addr = optarg;
			break;
		case 'F':
			fz_opt.shared_fd = atoi(optarg);
			break;
		case 'c':
			fz_opt.child = true;
			break;
		case 'v':
			fz_opt.verbose = true;
			break;
		case 'p':
			fz_opt.print = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind < argc || !fz_opt.threads ||
	    fz_opt.threads > FZ_MAX_THREADS || !fz_opt.seconds)
		usage();
	if (!have_seed && getrandom(&fz_opt.seed, sizeof(fz_opt.seed), 0) !=
			  sizeof(fz_opt.seed))
		fz_opt.seed = (uint64_t)fz_now_ns() ^ (uint64_t)getpid() << 32;
	fz_opt.node_addr = fz_node_addr(addr);
	if (!fz_opt.node_addr) {
		fprintf(stderr, "collx_fuzz: no IPv4 address for 1-rank comms (-a)\n");
		exit(2);
	}
	if (fz_opt.child || (fz_opt.exclude & (1U << K_PROCS)))
		fz_opt.procs = 0;
}

static bool excluded(enum fz_kind k)
{
	return fz_opt.exclude & (1U << k);
}

static void step(struct fz_thread *t)
{
	static unsigned int w[K_NR_KINDS];
	struct fz_rng *r = &t->rng;
	int fdi = (int)fz_below(r, fz_opt.nfds), err;
	enum fz_kind kind;
	unsigned int k;
	double t0;

	if (!w[K_SUBMIT])
		for (k = 0; k < K_NR_KINDS; k++)
			w[k] = excluded(k) ? 0 : kind_weight[k];
	if (!fz_fds[fdi].live_comms && !excluded(K_CREATE) && fz_pm(r, 500)) {
		fz_create_1rank(t, fdi, UINT32_MAX, &err);
		return;
	}
	if (fz_fds[fdi].live_ops > 3000 && !excluded(K_READ)) {
		fz_gen_read(t, fdi);
		return;
	}
	kind = (enum fz_kind)fz_weighted(r, w, K_NR_KINDS);
	t0 = fz_now();
	switch (kind) {
	case K_VERSION:
		fz_gen_version(t, fdi);
		break;
	case K_CREATE:
		fz_gen_create(t, fdi);
		break;
	case K_DESTROY:
		fz_gen_destroy(t, fdi);
		break;
	case K_REG:
		fz_gen_reg(t, fdi);
		break;
	case K_DEREG:
		fz_gen_dereg(t, fdi);
		break;
	case K_SUBMIT:
		fz_gen_submit(t, fdi);
		break;
	case K_GROUP:
		fz_gen_group(t, fdi);
		break;
	case K_WAIT:
		fz_gen_wait(t, fdi);
		break;
	case K_READ:
		fz_gen_read(t, fdi);
		break;
	case K_POLL:
		fz_gen_poll(t);
		break;
	case K_BADNR:
		fz_gen_badnr(t, fdi);
		break;
	case K_RACE:
		fz_race(t);
		break;
	case K_FORK:
		fz_fork_after_register(t);
		break;
	default:
		break;
	}
	if (!t->idx) {
		kind_secs[kind] += fz_now() - t0;
		kind_runs[kind]++;
	}
}

/* Where thread 0's time went: what sizes a run. */
static void report_kinds(void)
{
	char line[512];
	size_t used;
	unsigned int k;

	used = snprintf(line, sizeof(line), "thread 0, ms per kind (runs):");
	for (k = 0; k < K_NR_KINDS; k++)
		if (kind_runs[k] && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 " %s %.0f (%llu)", fz_kind_names[k],
					 kind_secs[k] * 1000,
					 (unsigned long long)kind_runs[k]);
	printf("%s\n", line);
}

static void *worker(void *arg)
{
	struct fz_thread *t = arg;

	fz_thread_attach(t);
	while (t->calls < t->budget && !fz_time_up())
		step(t);
	fz_thread_detach(t);
	return NULL;
}

/* A call that never returns is a finding too: report it and leave. */
static void *watchdog(void *arg)
{
	double limit = fz_opt.seconds + 20.0 * fz_slowdown();
	unsigned int i;

	(void)arg;
	while (!finished) {
		usleep(200000);
		if (fz_now() - t_start < limit)
			continue;
		for (i = 0; i < fz_opt.threads; i++)
			if (threads[i]->cur_since)
				fz_finding(threads[i], F_HANG, "still in \"%s\" after %.0f s",
					   threads[i]->cur,
					   fz_now() - threads[i]->cur_since);
		fz_finding(NULL, F_HANG, "the run did not end %.0f s after -T", limit -
			   fz_opt.seconds);
		fz_report(fz_now() - t_start, "the watchdog");
		fflush(stdout);
		_exit(3);
	}
	return NULL;
}

static int open_collx(bool blocking, bool cloexec)
{
	return open("/dev/collx", O_RDWR | (blocking ? 0 : O_NONBLOCK) |
		    (cloexec ? O_CLOEXEC : 0));
}

static int setup_fds(void)
{
	unsigned int i;
	bool shared;
	int fd;

	for (i = 0; i < fz_opt.nfds; i++) {
		shared = i == fz_opt.nfds - 1 &&
			 (fz_opt.procs || fz_opt.shared_fd >= 0);
		fd = shared && fz_opt.shared_fd >= 0 ? fz_opt.shared_fd :
		     open_collx(i == 0, !shared);
		if (fd < 0)
			return errno;
		if (fz_fd_add(fd, shared, false,
			      !(fcntl(fd, F_GETFL) & O_NONBLOCK)) != (int)i)
			return EMFILE;
	}
	return 0;
}

/* End of run: every record read, every comm destroyed, every fd closed. */
static void finish(struct fz_thread *t)
{
	unsigned int i;
	int fdi;

	for (fdi = 0; fdi < (int)fz_opt.nfds; fdi++)
		fz_drain(t, fdi, 200);
	fz_procs_finish();
	for (i = 0; i < FZ_MAX_COMMS; i++)
		if (fz_comms[i].used && !fz_comms[i].dying &&
		    fz_comms[i].fdi < (int)fz_opt.nfds)
			fz_destroy(t, fz_comms[i].fdi, (int)i);
	for (fdi = 0; fdi < (int)fz_opt.nfds; fdi++)
		fz_drain(t, fdi, 300);
	fz_records_final(t);
	/* Half the registrations explicitly, the rest by close(). */
	for (i = 0; i < FZ_MAX_MRS; i += 2)
		if (fz_mrs[i].used)
			fz_dereg(t, fz_mrs[i].fdi, (int)i);
	for (fdi = 0; fdi < FZ_MAX_FDS; fdi++) {
		if (!fz_fds[fdi].used)
			continue;
		close(fz_fds[fdi].fd);
		fz_fd_forget(fdi);
	}
}

static void counters_back(const struct fz_counters *before)
{
	struct fz_counters now = { 0 };
	unsigned int bound = 10 * fz_slowdown();
	double end = fz_now() + bound;
	int err;

	do {
		err = fz_counters_read(&now);
		if (!err && now.comms == before->comms && now.mrs == before->mrs &&
		    now.pinned_pages == before->pinned_pages &&
		    now.ops_in_flight == before->ops_in_flight) {
			printf("counters: comms %lld mrs %lld pinned_pages %lld ops_in_flight %lld: back to their values before the run\n",
			       now.comms, now.mrs, now.pinned_pages,
			       now.ops_in_flight);
			return;
		}
		usleep(50000);
	} while (fz_now() < end);
	fz_finding(NULL, F_COUNTERS, "%u s after every fd closed: comms %lld->%lld mrs %lld->%lld pinned_pages %lld->%lld ops_in_flight %lld->%lld",
		   bound, before->comms, now.comms, before->mrs, now.mrs,
		   before->pinned_pages, now.pinned_pages,
		   before->ops_in_flight, now.ops_in_flight);
}

int main(int argc, char **argv)
{
	struct collx_version v = { .size = sizeof(v) };
	struct fz_counters before = { 0 };
	pthread_t th[FZ_MAX_THREADS], wd;
	const char *stop = "the call count";
	char addr[INET_ADDRSTRLEN];
	int fd, err, have_counters;
	uint64_t seed;
	unsigned int i;
	double secs;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	inet_ntop(AF_INET, &fz_opt.node_addr, addr, sizeof(addr));
	printf("collx_fuzz%s: seed %llu, %llu calls, %u thread(s), at most %u s, %u child process(es), node %s\n",
	       fz_opt.child ? " (child)" : "", (unsigned long long)fz_opt.seed,
	       (unsigned long long)fz_opt.calls, fz_opt.threads,
	       fz_opt.seconds, fz_opt.procs, addr);
	printf("reproduce: collx_fuzz -s %llu -n %llu -t 1 -P 0 -x race,fork -a %s (single-threaded: the same calls)\n",
	       (unsigned long long)fz_opt.seed,
	       (unsigned long long)fz_opt.calls, addr);
	err = fz_mem_init(32UL << 20);
	fd = open_collx(false, true);
	if (err || fd < 0) {
		fprintf(stderr, "collx_fuzz: setup: %s\n",
			strerror(err ? err : errno));
		return 2;
	}
	if (ioctl(fd, COLLX_IOC_VERSION, &v)) {
		fprintf(stderr, "collx_fuzz: COLLX_IOC_VERSION: %s\n",
			strerror(errno));
		return 2;
	}
	close(fd);
	fz_abi_minor = v.abi_minor;
	fz_features = v.features;
	printf("module %.32s, ABI %u.%u, features %#llx, %u RDMA device(s)\n",
	       v.module_version, v.abi_major, v.abi_minor,
	       (unsigned long long)v.features, v.nr_devices);
	have_counters = fz_opt.child ? EPERM : fz_counters_read(&before);
	if (have_counters)
		printf("counters: %s, not compared%s\n", strerror(have_counters),
		       fz_opt.child ? " (the parent compares them)" : "");
	err = setup_fds();
	if (!err && fz_opt.procs)
		err = fz_procs_start(fz_fds[fz_opt.nfds - 1].fd);
	if (err) {
		fprintf(stderr, "collx_fuzz: setup: %s\n", strerror(err));
		return 2;
	}

	t_start = fz_now();
	seed = fz_opt.seed;
	for (i = 0; i < fz_opt.threads; i++) {
		threads[i] = calloc(1, sizeof(*threads[i]));
		if (!threads[i])
			return 2;
		fz_thread_init(threads[i], i, i ? fz_splitmix(&seed) : fz_opt.seed);
		threads[i]->helper = calloc(1, sizeof(*threads[i]));
		if (!threads[i]->helper)
			return 2;
		fz_thread_init(threads[i]->helper, 100 + i, fz_splitmix(&seed));
		threads[i]->budget = fz_opt.calls / fz_opt.threads +
				     (i ? 0 : fz_opt.calls % fz_opt.threads);
	}
	pthread_create(&wd, NULL, watchdog, NULL);
	for (i = 0; i < fz_opt.threads; i++)
		pthread_create(&th[i], NULL, worker, threads[i]);
	for (i = 0; i < fz_opt.threads; i++)
		pthread_join(th[i], NULL);
	secs = fz_now() - t_start;
	if (stopping)
		stop = "a hang";
	else if (fz_total_calls() < fz_opt.calls)
		stop = "the time bound (-T)";

	fz_thread_attach(threads[0]);
	finish(threads[0]);
	if (!have_counters)
		counters_back(&before);
	finished = true;
	pthread_join(wd, NULL);
	fz_report(secs, stop);
	report_kinds();
	return fz_total_findings() ? (stopping ? 3 : 1) : 0;
}
