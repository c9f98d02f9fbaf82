// SPDX-License-Identifier: GPL-2.0
/*
 * The environment libcollx reads: launchers (COLLX_*, torchrun, Open MPI,
 * PMI, Slurm with its host lists), COLLX_IB_HCA and COLLX_SOCKET_IFNAME
 * in NCCL's list syntax, the port a communicator chooses from a device
 * table, COLLX_IB_TC / COLLX_ALGO / timeouts, and the debug settings.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collx_int.h"
#include "unit_lib.h"

static int test_env_collx(void)
{
	struct collx_env_cfg c;
	char err[256];

	setenv("COLLX_RANK", "2", 1);
	setenv("COLLX_NRANKS", "4", 1);
	setenv("COLLX_MASTER_ADDR", "10.77.0.10", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.rank == 2 && c.nranks == 4, "rank %d n %d", c.rank, c.nranks);
	CHECK(!strcmp(c.host, "10.77.0.10") && c.port == COLLX_DEFAULT_PORT,
	      "%s:%u", c.host, c.port);
	setenv("COLLX_MASTER_PORT", "4000", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 4000, "%u", c.port);
	setenv("COLLX_MASTER_ADDR", "node0:4100", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 4100 &&
	      !strcmp(c.host, "node0"), "%s:%u", c.host, c.port);
	setenv("COLLX_COMM_ID", "192.168.1.1:5000", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 5000 &&
	      !strcmp(c.host, "192.168.1.1") && !strcmp(c.source, "COLLX_COMM_ID"),
	      "%s:%u", c.host, c.port);
	setenv("COLLX_COMM_ID", "192.168.1.1", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "COLLX_COMM_ID"),
	      "%s", err);
	return 0;
}

static int test_env_torchrun(void)
{
	struct collx_env_cfg c;
	char err[256];

	setenv("RANK", "1", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("MASTER_ADDR", "trainer-0", 1);
	setenv("MASTER_PORT", "29500", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.rank == 1 && c.nranks == 8 && !strcmp(c.host, "trainer-0"), "%d %d %s",
	      c.rank, c.nranks, c.host);
	CHECK(c.port == 29501, "torchrun's store holds MASTER_PORT; got %u", c.port);
	CHECK(strstr(c.launcher, "torchrun"), "%s", c.launcher);
	setenv("COLLX_MASTER_PORT", "7000", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 7000, "%u", c.port);
	/* COLLX_ variables win over torchrun's */
	setenv("COLLX_RANK", "3", 1);
	setenv("COLLX_NRANKS", "4", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.rank == 3 && c.nranks == 4,
	      "%d %d", c.rank, c.nranks);
	return 0;
}

static int test_env_mpi_pmi(void)
{
	struct collx_env_cfg c;
	char err[256];

	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
	setenv("PMI_RANK", "1", 1);
	setenv("PMI_SIZE", "2", 1);
	setenv("COLLX_MASTER_ADDR", "head", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.rank == 5 && c.nranks == 6 &&
	      strstr(c.launcher, "Open MPI"), "%d %d %s %s", c.rank, c.nranks, c.launcher, err);
	unsetenv("OMPI_COMM_WORLD_RANK");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.rank == 1 && c.nranks == 2 &&
	      strstr(c.launcher, "PMI"), "%d %d %s", c.rank, c.nranks, c.launcher);
	setenv("PMI_RANK", "2", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "PMI_RANK=2 is not a rank below PMI_SIZE=2"), "%s", err);
	unsetenv("PMI_SIZE");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "PMI_RANK is set but PMI_SIZE is not"), "%s", err);
	return 0;
}

static int test_env_slurm(void)
{
	struct collx_env_cfg c;
	char err[256];

	setenv("SLURM_PROCID", "3", 1);
	setenv("SLURM_NTASKS", "16", 1);
	setenv("SLURM_NODELIST", "other[1-9]", 1);
	setenv("SLURM_STEP_NODELIST", "gpu-a[007-010,012],gpu-b1", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.rank == 3 && c.nranks == 16 && strstr(c.launcher, "Slurm"), "%d %d %s", c.rank,
	      c.nranks, c.launcher);
	CHECK(!strcmp(c.host, "gpu-a007") && c.port == COLLX_DEFAULT_PORT &&
	      !strcmp(c.source, "SLURM_STEP_NODELIST"), "%s:%u from %s", c.host, c.port, c.source);
	unsetenv("SLURM_STEP_NODELIST");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "other1") &&
	      !strcmp(c.source, "SLURM_NODELIST"), "%s from %s", c.host, c.source);
	/* an explicit address wins over the node list */
	setenv("COLLX_MASTER_ADDR", "10.0.0.1", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "10.0.0.1"), "%s",
	      c.host);
	unsetenv("COLLX_MASTER_ADDR");
	setenv("SLURM_NODELIST", "bad[1-", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "Slurm host list"),
	      "%s", err);
	return 0;
}

/* Every launcher's variables at once: COLLX_*, torchrun, Open MPI, PMI, Slurm. */
static int test_env_precedence(void)
{
	static const char *const order[][3] = {
		{ "COLLX_RANK", "COLLX_NRANKS", "COLLX_RANK" },
		{ "RANK", "WORLD_SIZE", "torchrun" },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI" },
		{ "PMI_RANK", "PMI_SIZE", "PMI" },
		{ "SLURM_PROCID", "SLURM_NTASKS", "Slurm" },
	};
	struct collx_env_cfg c;
	char err[256], v[8];
	size_t i;

	for (i = 0; i < 5; i++) {
		snprintf(v, sizeof(v), "%zu", i);
		setenv(order[i][0], v, 1);
		snprintf(v, sizeof(v), "%zu", 10 + i);
		setenv(order[i][1], v, 1);
	}
	setenv("SLURM_STEP_NODELIST", "node[01-04,07],gpu5", 1);
	setenv("MASTER_ADDR", "trainer-0", 1);
	setenv("COLLX_MASTER_ADDR", "head", 1);
	for (i = 0; i < 5; i++) {
		CHECK(collx_env_parse(&c, err, sizeof(err)) == 0, "%s", err);
		CHECK(c.rank == (int)i && c.nranks == 10 + (int)i && strstr(c.launcher, order[i][2]),
		      "with %s set: rank %d of %d from %s", order[i][0], c.rank, c.nranks, c.launcher);
		CHECK(!strcmp(c.host, "head"), "COLLX_MASTER_ADDR lost to %s", c.source);
		unsetenv(order[i][0]);
	}
	/* the address: COLLX_MASTER_ADDR, then MASTER_ADDR, then Slurm's list */
	setenv("SLURM_PROCID", "4", 1);
	unsetenv("COLLX_MASTER_ADDR");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "trainer-0") &&
	      !strcmp(c.source, "MASTER_ADDR"), "%s from %s: %s", c.host, c.source, err);
	unsetenv("MASTER_ADDR");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "node01") &&
	      !strcmp(c.source, "SLURM_STEP_NODELIST"), "%s from %s: %s", c.host, c.source, err);
	return 0;
}

/* Slurm's node list names rank 0's host only when the ranks are srun's tasks. */
static int test_env_slurm_tasks(void)
{
	struct collx_env_cfg c;
	char err[256];

	/* srun --mpi=pmi2: PMI's rank is srun's task */
	setenv("PMI_RANK", "2", 1);
	setenv("PMI_SIZE", "4", 1);
	setenv("SLURM_PROCID", "2", 1);
	setenv("SLURM_NTASKS", "4", 1);
	setenv("SLURM_STEP_NODELIST", "node[01-04,07],gpu5", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "node01") &&
	      strstr(c.launcher, "PMI"), "%s (%s): %s", c.host, c.launcher, err);
	/* mpirun in an allocation: a daemon's step, its own node list */
	unsetenv("PMI_RANK");
	unsetenv("PMI_SIZE");
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
	setenv("SLURM_PROCID", "0", 1);
	setenv("SLURM_NTASKS", "3", 1);
	setenv("SLURM_STEP_NODELIST", "node[02-04]", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "rank 1 of 4 from Open MPI") &&
	      strstr(err, "SLURM_PROCID=0 of SLURM_NTASKS=3") &&
	      strstr(err, "SLURM_STEP_NODELIST") && strstr(err, "set COLLX_MASTER_ADDR"),
	      "took %s from %s: '%s'", c.host, c.source, err);
	/* the batch script's own environment: no task variables at all */
	unsetenv("SLURM_PROCID");
	unsetenv("SLURM_NTASKS");
	unsetenv("SLURM_STEP_NODELIST");
	setenv("SLURM_NODELIST", "node[01-04]", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "SLURM_PROCID=(unset)") && strstr(err, "SLURM_NODELIST"), "'%s'", err);
	setenv("COLLX_MASTER_ADDR", "node01", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "node01"), "%s", err);
	unsetenv("COLLX_MASTER_ADDR");
	/* SLURM_JOB_NODELIST, the current name of SLURM_NODELIST */
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("SLURM_NODELIST");
	setenv("SLURM_PROCID", "1", 1);
	setenv("SLURM_NTASKS", "3", 1);
	setenv("SLURM_JOB_NODELIST", "gpu5,node[01-02]", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && !strcmp(c.host, "gpu5") &&
	      !strcmp(c.source, "SLURM_JOB_NODELIST"), "%s from %s: %s", c.host, c.source, err);
	return 0;
}

/* A rank 0 that does not resolve: the variable as it is set, and the host. */
static int test_env_unresolved(void)
{
	struct collx_comm *comm = NULL;

	setenv("COLLX_RANK", "1", 1);
	setenv("COLLX_NRANKS", "2", 1);
	setenv("COLLX_MASTER_ADDR", "[::1]:4100", 1);	/* IPv6: never IPv4, no DNS asked */
	CHECK(collx_comm_init_all(&comm) == -EHOSTUNREACH && !comm, "init");
	CHECK(strstr(collx_comm_last_error(NULL),
		     "init: COLLX_MASTER_ADDR=[::1]:4100: rank 0's host ::1 does not resolve"),
	      "'%s'", collx_comm_last_error(NULL));
	return 0;
}

static int test_env_errors(void)
{
	struct collx_env_cfg c;
	char err[256];

	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "no rank"), "%s",
	      err);
	setenv("COLLX_RANK", "4", 1);
	setenv("COLLX_NRANKS", "4", 1);
	setenv("COLLX_MASTER_ADDR", "x", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "not a rank below"),
	      "%s", err);
	setenv("COLLX_RANK", "1x", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "1x accepted");
	setenv("COLLX_RANK", " 1", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "' 1' accepted");
	setenv("COLLX_RANK", "010", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "010 read as octal 8 < 4?");
	setenv("COLLX_RANK", "0", 1);
	setenv("COLLX_NRANKS", "0", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "0 ranks accepted");
	setenv("COLLX_NRANKS", "2", 1);
	unsetenv("COLLX_MASTER_ADDR");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "rendezvous"),
	      "%s", err);
	setenv("COLLX_MASTER_ADDR", "h:99999", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "port 99999 accepted");
	return 0;
}

static int test_hostlist(void)
{
	static const struct {
		const char *list;
		long n;
		const char *want;
	} cases[] = {
		{ "node1", 0, "node1" },
		{ "node[01-04,07]", 0, "node01" },
		{ "node[01-04,07]", 3, "node04" },
		{ "node[01-04,07]", 4, "node07" },
		{ "node[01-04,07],gpu5", 5, "gpu5" },
		{ "a[1-2]b[3-4]", 1, "a1b4" },
		{ "a[1-2]b[3-4]", 2, "a2b3" },
		{ "x[8-10]y,login", 2, "x10y" },
		{ "x[8-10]y,login", 3, "login" },
		{ "rack[1-2]-n[001-003]", 5, "rack2-n003" },
	};
	char out[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = collx_hostlist_nth(cases[i].list, cases[i].n, out, sizeof(out));

		CHECK(rc == 0 && !strcmp(out, cases[i].want), "%s #%ld: %d '%s', want '%s'",
		      cases[i].list, cases[i].n, rc, out, cases[i].want);
	}
	CHECK(collx_hostlist_count("node[01-04,07],a[1-2]b[3-4],x") == 10, "count %ld",
	      collx_hostlist_count("node[01-04,07],a[1-2]b[3-4],x"));
	CHECK(collx_hostlist_nth("node[1-2]", 2, out, sizeof(out)) == -ENOENT, "past the end");
	CHECK(collx_hostlist_nth("node[2-1]", 0, out, sizeof(out)) == -EINVAL, "2-1");
	CHECK(collx_hostlist_nth("node[1-x]", 0, out, sizeof(out)) == -EINVAL, "1-x");
	CHECK(collx_hostlist_nth("node]", 0, out, sizeof(out)) == -EINVAL, "]");
	CHECK(collx_hostlist_nth("node[99999999999999999999]", 0, out, sizeof(out)) == -EINVAL,
	      "an index past LONG_MAX gave '%s'", out);
	CHECK(collx_hostlist_nth("a,,b", 0, out, sizeof(out)) == -EINVAL, "empty item");
	CHECK(collx_hostlist_nth("", 0, out, sizeof(out)) == -EINVAL, "empty");
	CHECK(collx_hostlist_nth("verylongname[1-2]", 0, out, 8) == -ENAMETOOLONG, "long");
	return 0;
}

static int test_nlist(void)
{
	struct collx_nlist l;

	CHECK(collx_nlist_parse(NULL, true, &l) == 0 && collx_nlist_match(&l, "anything", 3),
	      "empty matches all");
	CHECK(collx_nlist_parse("mlx5", true, &l) == 0, "prefix");
	CHECK(collx_nlist_match(&l, "mlx5_0", 1) && collx_nlist_match(&l, "mlx5_12", 2) &&
	      !collx_nlist_match(&l, "rxe0", 1), "prefix match");
	CHECK(collx_nlist_parse("=mlx5_0,mlx5_1", true, &l) == 0 && l.exact && l.n == 2, "exact");
	CHECK(collx_nlist_match(&l, "mlx5_1", 1) && !collx_nlist_match(&l, "mlx5_10", 1),
	      "exact match");
	CHECK(collx_nlist_parse("^mlx5_1", true, &l) == 0 && l.exclude, "exclude");
	CHECK(!collx_nlist_match(&l, "mlx5_1", 1) && !collx_nlist_match(&l, "mlx5_10", 1) &&
	      collx_nlist_match(&l, "mlx5_0", 1), "exclude by prefix");
	CHECK(collx_nlist_parse("^=mlx5_1", true, &l) == 0 && l.exclude && l.exact, "^=");
	CHECK(!collx_nlist_match(&l, "mlx5_1", 1) && collx_nlist_match(&l, "mlx5_10", 1),
	      "exclude exact");
	CHECK(collx_nlist_parse("mlx5_0:1,mlx5_1:2", true, &l) == 0 && l.e[0].port == 1 &&
	      l.e[1].port == 2, "ports");
	CHECK(collx_nlist_match(&l, "mlx5_0", 1) && !collx_nlist_match(&l, "mlx5_0", 2) &&
	      collx_nlist_match(&l, "mlx5_1", 2), "port match");
	CHECK(collx_nlist_parse("^mlx5_0:2", true, &l) == 0 && collx_nlist_match(&l, "mlx5_0", 1) &&
	      !collx_nlist_match(&l, "mlx5_0", 2), "exclude one port");
	CHECK(collx_nlist_parse("rxe0:x", true, &l) == -EINVAL, "port x");
	CHECK(collx_nlist_parse("rxe0:0", true, &l) == -EINVAL, "port 0");
	CHECK(collx_nlist_parse("eth0:1", false, &l) == -EINVAL, "no ports for interfaces");
	CHECK(collx_nlist_parse("a,,b", true, &l) == -EINVAL, "empty entry");
	CHECK(collx_nlist_parse("^", true, &l) == -EINVAL, "bare ^");
	return 0;
}

/* A device table as collx_ibdev_scan() would give it. */
static struct collx_gid_entry g_rxe0[] = {
	{ 0, IBV_GID_TYPE_ROCE_V1, { 0xfe, 0x80, [15] = 1 }, "eth0" },
	{ 1, IBV_GID_TYPE_ROCE_V2, { 0xfe, 0x80, [15] = 1 }, "eth0" },
	{ 2, IBV_GID_TYPE_ROCE_V1, { [10] = 0xff, 0xff, 10, 77, 0, 10 }, "eth0" },
	{ 3, IBV_GID_TYPE_ROCE_V2, { [10] = 0xff, 0xff, 10, 77, 0, 10 }, "eth0" },
};
static struct collx_gid_entry g_mlx[] = {
	{ 0, IBV_GID_TYPE_ROCE_V2, { [10] = 0xff, 0xff, 192, 168, 1, 5 }, "ens1" },
};

static int test_ibdev_choose(void)
{
	struct collx_port_info ports[] = {
		{ .dev = "mlx5_0", .port = 1, .state = IBV_PORT_DOWN, .active_mtu = 4096,
		  .ngids = 1, .gids = g_mlx },
		{ .dev = "mlx5_1", .port = 1, .state = IBV_PORT_ACTIVE, .active_mtu = 1024,
		  .ngids = 1, .gids = g_mlx },
		{ .dev = "rxe0", .port = 1, .state = IBV_PORT_ACTIVE, .active_mtu = 4096,
		  .ngids = 4, .gids = g_rxe0, .netdev = "eth0" },
		{ .dev = "ib0dev", .port = 1, .state = IBV_PORT_ACTIVE, .active_mtu = 2048,
		  .netdev = "ib0", .netdev_ipv4 = true },
	};
	struct collx_ibdev_info info;
	struct collx_nlist l;
	char err[256], ip[INET_ADDRSTRLEN];

	collx_nlist_parse(NULL, true, &l);
	CHECK(collx_ibdev_choose(ports, 4, &l, -1, &info, err, sizeof(err)) == 0, "%s", err);
	CHECK(!strcmp(info.name, "mlx5_1") && info.ncandidates == 3, "%s, %d candidates",
	      info.name, info.ncandidates);
	collx_nlist_parse("rxe", true, &l);
	CHECK(collx_ibdev_choose(ports, 4, &l, -1, &info, err, sizeof(err)) == 0, "%s", err);
	inet_ntop(AF_INET, &info.addr, ip, sizeof(ip));
	CHECK(!strcmp(info.name, "rxe0") && info.gid_index == 3 && !strcmp(ip, "10.77.0.10") &&
	      !strcmp(info.how, "RoCE v2 GID") && info.mtu == 4096, "%s gid %d %s %s", info.name,
	      info.gid_index, ip, info.how);
	CHECK(collx_ibdev_choose(ports, 4, &l, 2, &info, err, sizeof(err)) == 0 &&
	      info.gid_index == 2 && info.gid_type == IBV_GID_TYPE_ROCE_V1, "gid 2: %d", info.gid_index);
	CHECK(collx_ibdev_choose(ports, 4, &l, 1, &info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, "GID 1 of rxe0:1 is fe80::1 (RoCE v2), not an IPv4 address"), "%s", err);
	CHECK(collx_ibdev_choose(ports, 4, &l, 9, &info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, "rxe0:1 has no GID 9"), "%s", err);
	collx_nlist_parse("^mlx5,rxe", true, &l);
	CHECK(collx_ibdev_choose(ports, 4, &l, -1, &info, err, sizeof(err)) == 0 &&
	      !strcmp(info.name, "ib0dev") && !strcmp(info.how, "netdev"), "%s", info.name);
	collx_nlist_parse("=mlx5_0", true, &l);
	CHECK(collx_ibdev_choose(ports, 4, &l, -1, &info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, "no ACTIVE port"), "%s", err);
	collx_nlist_parse("bnxt", true, &l);
	CHECK(collx_ibdev_choose(ports, 4, &l, -1, &info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, "matches none of the 4"), "%s", err);
	CHECK(collx_ibdev_choose(ports, 0, &l, -1, &info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, "no RDMA devices"), "%s", err);
	/* COLLX_RDMA_ADDR skips the devices; a bad COLLX_IB_HCA is refused */
	setenv("COLLX_RDMA_ADDR", "10.1.2.3", 1);
	CHECK(collx_ibdev_select(&info, err, sizeof(err)) == 0 && info.addr.s_addr == inet_addr("10.1.2.3"),
	      "%s", err);
	unsetenv("COLLX_RDMA_ADDR");
	setenv("COLLX_IB_HCA", "rxe0:port", 1);
	CHECK(collx_ibdev_select(&info, err, sizeof(err)) == -EINVAL && strstr(err, "NCCL_IB_HCA"),
	      "%s", err);
	setenv("COLLX_IB_HCA", "=nosuchdev0", 1);
	setenv("COLLX_IB_GID_INDEX", "x", 1);
	CHECK(collx_ibdev_select(&info, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "COLLX_IB_GID_INDEX=x is not a GID index"), "%s", err);
	/* whatever this host has, the failure names the variables that shaped it */
	setenv("COLLX_IB_GID_INDEX", "65535", 1);
	CHECK(collx_ibdev_select(&info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, " (COLLX_IB_HCA==nosuchdev0, COLLX_IB_GID_INDEX=65535)"), "%s", err);
	unsetenv("COLLX_IB_HCA");
	CHECK(collx_ibdev_select(&info, err, sizeof(err)) == -ENODEV &&
	      strstr(err, " (COLLX_IB_GID_INDEX=65535)"), "%s", err);
	return 0;
}

static int test_socket_ifname(void)
{
	struct in_addr a;
	char err[256];

	CHECK(collx_sock_bind_addr(&a, err, sizeof(err)) == 0 && a.s_addr == htonl(INADDR_ANY),
	      "unset: any");
	setenv("COLLX_SOCKET_IFNAME", "=lo", 1);
	CHECK(collx_sock_bind_addr(&a, err, sizeof(err)) == 0 &&
	      a.s_addr == htonl(INADDR_LOOPBACK), "%s", err);
	setenv("COLLX_SOCKET_IFNAME", "^lo,dummy", 1);
	CHECK(collx_sock_bind_addr(&a, err, sizeof(err)) == 0 ? a.s_addr != htonl(INADDR_LOOPBACK) : 1,
	      "excluded lo");
	setenv("COLLX_SOCKET_IFNAME", "=nosuchif0", 1);
	CHECK(collx_sock_bind_addr(&a, err, sizeof(err)) == -ENODEV &&
	      strstr(err, "COLLX_SOCKET_IFNAME==nosuchif0 matches no interface"), "%s", err);
	setenv("COLLX_SOCKET_IFNAME", "eth0:1", 1);
	CHECK(collx_sock_bind_addr(&a, err, sizeof(err)) == -EINVAL, "ports refused");
	return 0;
}

static int test_env_comm(void)
{
	struct collx_env_comm e;
	char err[256];

	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == 0 && e.bs_timeout_ms == 60000 &&
	      !e.timeout_ms && !e.tos && e.algo == COLLX_ALGO_AUTO, "defaults");
	setenv("COLLX_IB_TC", "106", 1);
	setenv("COLLX_ALGO", "Tree", 1);
	setenv("COLLX_TIMEOUT_MS", "3600000", 1);
	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == 0 && e.tos == 106 &&
	      e.algo == COLLX_ALGO_TREE && e.timeout_ms == 3600000, "%s", err);
	setenv("COLLX_TIMEOUT_MS", "3600001", 1);
	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == -EINVAL && strstr(err, "COLLX_TIMEOUT_MS"),
	      "over COLLX_MAX_TIMEOUT_MS: %s", err);
	unsetenv("COLLX_TIMEOUT_MS");
	setenv("COLLX_IB_TC", "256", 1);
	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == -EINVAL && strstr(err, "COLLX_IB_TC"),
	      "%s", err);
	setenv("COLLX_IB_TC", "0x68", 1);
	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == 0 && e.tos == 0x68, "hex %d", e.tos);
	setenv("COLLX_ALGO", "butterfly", 1);
	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == -EINVAL && strstr(err, "COLLX_ALGO"),
	      "%s", err);
	setenv("COLLX_ALGO", "p2p", 1);
	CHECK(collx_env_comm_read(&e, err, sizeof(err)) == -EINVAL, "p2p is not a collective's");
	return 0;
}

static int test_parse_misc(void)
{
	char host[64];
	uint16_t port;
	long v;

	CHECK(collx_parse_hostport("[fe80::1]:80", host, sizeof(host), &port) == 0 &&
	      !strcmp(host, "fe80::1") && port == 80, "%s %u", host, port);
	CHECK(collx_parse_hostport("fe80::1", host, sizeof(host), &port) == -EINVAL, "bare v6");
	CHECK(collx_parse_hostport(":80", host, sizeof(host), &port) == -EINVAL, "no host");
	CHECK(collx_parse_hostport("h:", host, sizeof(host), &port) == -EINVAL, "no port");
	CHECK(collx_parse_long("17", 1, 100, &v) == 0 && v == 17, "17");
	CHECK(collx_parse_long("-1", -1, 100, &v) == 0 && v == -1, "-1");
	CHECK(collx_parse_long("0x1f", 0, 100, &v) == 0 && v == 31, "hex");
	CHECK(collx_parse_long("0x", 0, 100, &v) == -EINVAL, "0x");
	CHECK(collx_parse_long("+5", 0, 100, &v) == -EINVAL, "+5");
	CHECK(collx_parse_long("5 ", 0, 100, &v) == -EINVAL, "trailing blank");
	CHECK(collx_parse_long("101", 0, 100, &v) == -EINVAL, "range");
	setenv("COLLX_T", "17", 1);
	CHECK(collx_env_long("COLLX_T", 5, 1, 100, &v) == 0 && v == 17, "%ld", v);
	CHECK(collx_env_long("COLLX_UNSET_T", 5, 1, 100, &v) == 0 && v == 5, "%ld", v);
	unsetenv("COLLX_T");
	return 0;
}

static int test_debug_settings(void)
{
	char out[256], want[256], host[64], bad[64];
	unsigned int m;

	CHECK(collx_log_parse_level("warn") == COLLX_LOG_WARN, "warn");
	CHECK(collx_log_parse_level("INFO") == COLLX_LOG_INFO, "info");
	CHECK(collx_log_parse_level("TRACE") == COLLX_LOG_TRACE, "trace");
	CHECK(collx_log_parse_level("VERSION") == COLLX_LOG_VERSION, "version");
	CHECK(collx_log_parse_level(NULL) == COLLX_LOG_NONE, "unset");
	CHECK(collx_log_parse_level("LOUD") == -1, "bad");
	CHECK(collx_log_parse_subsys("INIT,coll", &m, bad, sizeof(bad)) == 0 &&
	      m == (COLLX_SUB_INIT | COLLX_SUB_COLL), "%x", m);
	CHECK(collx_log_parse_subsys("^ENV,NET", &m, bad, sizeof(bad)) == 0 &&
	      m == (COLLX_SUB_ALL & ~(COLLX_SUB_ENV | COLLX_SUB_NET)), "%x", m);
	CHECK(collx_log_parse_subsys(NULL, &m, bad, sizeof(bad)) == 0 && m == COLLX_SUB_ALL,
	      "default ALL");
	/* an unknown name is skipped, the others still count */
	CHECK(collx_log_parse_subsys("INIT,NOPE,BOOTSTRAP", &m, bad, sizeof(bad)) == -EINVAL &&
	      m == (COLLX_SUB_INIT | COLLX_SUB_BOOTSTRAP) && !strcmp(bad, "NOPE"),
	      "%x '%s'", m, bad);
	CHECK(collx_log_parse_subsys("^COLL,NOPE", &m, bad, sizeof(bad)) == -EINVAL &&
	      m == (COLLX_SUB_ALL & ~COLLX_SUB_COLL), "%x", m);
	CHECK(collx_log_parse_subsys("NOPE", &m, bad, sizeof(bad)) == -EINVAL &&
	      m == COLLX_SUB_ALL, "nothing known: ALL, %x", m);
	/* NCCL's names for what collx does not have select nothing, quietly */
	CHECK(collx_log_parse_subsys("INIT,GRAPH,TUNING,ENV", &m, bad, sizeof(bad)) == 0 &&
	      m == (COLLX_SUB_INIT | COLLX_SUB_ENV), "%x", m);
	CHECK(collx_log_parse_subsys("^GRAPH", &m, bad, sizeof(bad)) == 0 && m == COLLX_SUB_ALL,
	      "%x", m);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	snprintf(want, sizeof(want), "/tmp/collx.%s.%d.log%%", host, (int)getpid());
	CHECK(collx_log_expand_path("/tmp/collx.%h.%p.log%%", out, sizeof(out)) == 0 &&
	      !strcmp(out, want), "%s vs %s", out, want);
	CHECK(collx_log_expand_path("%h%h%h%h%h%h%h%h", out, 8) == -ENAMETOOLONG, "overflow");
	return 0;
}

/* Log lines: the subsystem filter, and ENV lines for the variables read. */
static int test_debug_lines(void)
{
	char path[] = "/tmp/collx-unit-log-XXXXXX", buf[4096];
	struct collx_env_comm e;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	close(fd);
	setenv("COLLX_DEBUG", "INFO", 1);
	setenv("COLLX_DEBUG_SUBSYS", "ENV,NET,GRAFH", 1);	/* a typo drops only itself */
	setenv("COLLX_DEBUG_FILE", path, 1);
	setenv("COLLX_IB_TC", "96", 1);
	collx_log_reinit();
	collx_env_comm_read(&e, buf, sizeof(buf));
	collx_env_comm_read(&e, buf, sizeof(buf));
	INFO(COLLX_SUB_NET, 3, "net line");
	INFO(COLLX_SUB_COLL, 3, "coll line");
	WARN(3, "warn line");
	unsetenv("COLLX_DEBUG_FILE");
	collx_log_reinit();
	CHECK(unit_slurp(path, buf, sizeof(buf)) > 0, "no log");
	unlink(path);
	CHECK(strstr(buf, " [-1] COLLX INFO COLLX_IB_TC set by environment to 96\n"), "%s", buf);
	CHECK(strstr(strstr(buf, "COLLX_IB_TC") + 1, "COLLX_IB_TC") == NULL, "ENV logged twice:\n%s", buf);
	CHECK(strstr(buf, " [3] COLLX INFO net line\n"), "%s", buf);
	CHECK(!strstr(buf, "coll line"), "COLL not filtered:\n%s", buf);
	CHECK(strstr(buf, " [3] COLLX WARN warn line\n"), "WARN ignores the filter:\n%s", buf);
	return 0;
}

const struct unit_test env_tests[] = {
	{ "env: COLLX_RANK/COLLX_NRANKS/COLLX_MASTER_ADDR/COLLX_COMM_ID", test_env_collx },
	{ "env: torchrun RANK/WORLD_SIZE/MASTER_ADDR, port MASTER_PORT+1", test_env_torchrun },
	{ "env: Open MPI and PMI ranks", test_env_mpi_pmi },
	{ "env: Slurm ranks, rendezvous on the first host of the node list", test_env_slurm },
	{ "env: every launcher at once: COLLX_*, torchrun, Open MPI, PMI, Slurm", test_env_precedence },
	{ "env: Slurm's node list only for srun's tasks; SLURM_JOB_NODELIST", test_env_slurm_tasks },
	{ "env: errors name the variable; strict numbers", test_env_errors },
	{ "env: an unresolvable rank 0 names the variable as set", test_env_unresolved },
	{ "env: Slurm host lists expand", test_hostlist },
	{ "env: COLLX_IB_HCA syntax (prefix, =, ^, :port)", test_nlist },
	{ "env: the port a communicator uses (HCA list, GID index, fallbacks)", test_ibdev_choose },
	{ "env: COLLX_SOCKET_IFNAME picks the bootstrap address", test_socket_ifname },
	{ "env: COLLX_IB_TC, COLLX_ALGO, COLLX_TIMEOUT_MS bounds", test_env_comm },
	{ "env: host:port and integers", test_parse_misc },
	{ "debug: levels, subsystems (NCCL's names, unknown ones skipped), COLLX_DEBUG_FILE %h/%p",
	  test_debug_settings },
	{ "debug: subsystem filter (a bad name drops only itself), ENV lines once, WARN always",
	  test_debug_lines },
	{ NULL, NULL },
};
