// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of the exposition (no BPF): renders synthetic snapshots and
 * checks that the histogram keeps the same buckets whatever the data,
 * that buckets are cumulative, that label values are escaped, and that
 * every family's samples are contiguous.  Prints the exposition of the
 * first render on stdout, for `promtool check metrics` (make check).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "main.h"

struct nm_opts opt;
struct attrib attr;
uint64_t t0_mono;
static int failures;

const char *nm_attach_mode(void)
{
	return "tcx";
}

#define EXPECT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "not ok - " __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

static char *render(const struct snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		exit(1);
	prom_render(m, s, &attr);
	fclose(m);
	return buf;
}

/* The le="..." values of collx_netmon_op_latency_seconds_bucket, in order. */
static void buckets(const char *text, char *out, size_t len, int *monotonic, long long *inf,
		    long long *count)
{
	const char *p = text;
	long long last = -1, v;

	out[0] = 0;
	*monotonic = 1;
	*inf = *count = -1;
	while ((p = strstr(p, "collx_netmon_op_latency_seconds_"))) {
		const char *le = strstr(p, "le=\""), *eol = strchr(p, '\n');

		if (!strncmp(p, "collx_netmon_op_latency_seconds_count", 37))
			sscanf(strchr(p, ' '), "%lld", count);
		if (!strncmp(p, "collx_netmon_op_latency_seconds_bucket", 38) && le && le < eol) {
			sscanf(strchr(p, '}') + 1, "%lld", &v);
			if (!strncmp(le + 4, "+Inf", 4))
				*inf = v;
			if (v < last)
				*monotonic = 0;
			last = v;
			strncat(out, le + 4, strchr(le + 4, '"') - le - 4 < 32 ?
				(size_t)(strchr(le + 4, '"') - le - 4) : 32);
			strncat(out, " ", len - strlen(out) - 1);
		}
		p = eol ? eol : p + 1;
	}
}

/* No family's name appears again after another family began. */
static int contiguous(const char *text)
{
	char seen[256][96], name[96];
	int n = 0, i;
	const char *p;

	for (p = text; *p; p = strchr(p, '\n') + 1) {
		if (*p != '#') {
			size_t k = strcspn(p, "{ ");

			snprintf(name, sizeof(name), "%.*s", (int)k, p);
			/* a histogram's series belong to one family */
			if (strstr(name, "_bucket") || strstr(name, "_sum") || strstr(name, "_count"))
				*strrchr(name, '_') = 0;
			if (!n || strcmp(seen[n - 1], name)) {
				for (i = 0; i < n; i++)
					if (!strcmp(seen[i], name))
						return 0;
				if (n < 256)
					snprintf(seen[n++], sizeof(seen[0]), "%s", name);
			}
		}
		if (!strchr(p, '\n'))
			break;
	}
	return 1;
}

int main(void)
{
	struct pfc_row pfc[2] = {
		{ { .ifindex = 1, .dir = NETMON_RX, .kind = NETMON_PFC, .prio = 3 },
		  { .frames = 100, .quanta = 6553500, .paused_ns = 671088640 } },
		{ { .ifindex = 1, .dir = NETMON_TX, .kind = NETMON_PFC, .prio = 3 },
		  { .frames = 2, .resumes = 1 } },
	};
	struct roce_row roce[2] = {
		{ { .ifindex = 1, .dir = NETMON_RX, .family = 4, .qpn = 0x11 },
		  { .packets = 10, .bytes = 1000, .ce = 3 } },
		{ { .ifindex = 1, .dir = NETMON_RX, .family = 4, .qpn = 0x12 },
		  { .packets = 5, .bytes = 500, .cnp = 2 } },
	};
	struct lat_row lat[2] = {
		{ { .comm_id = 1, .coll = 0 }, { .ops = 3, .sum_ns = 3000000 } },
		{ { .comm_id = 2, .coll = 0 }, { .ops = 1, .sum_ns = 5000 } },
	};
	struct hw_counter hw[3] = {
		{ .netdev = "eth0", .source = HW_ETHTOOL, .name = "rx_prio3_pause", .prio = -1, .value = 7 },
		{ .netdev = "eth1", .source = HW_ETHTOOL, .name = "rx_prio3_pause", .prio = -1, .value = 8 },
		{ .netdev = "eth0", .source = HW_RDMA, .name = "np_cnp_sent", .rdma_dev = "mlx5_0",
		  .port = 1, .prio = -1, .value = 9 },
	};
	struct snapshot s = { .mono = 1, .pfc = pfc, .npfc = 2, .roce = roce, .nroce = 2,
			      .lat = lat, .nlat = 2, .hw = { .c = hw, .n = 3 } };
	char b1[2048], b2[2048];
	long long inf, count;
	int mono;
	char *t1, *t2;

	opt.ndevs = 1;
	snprintf(opt.devs[0].name, IF_NAMESIZE, "we\"ir\\d");
	opt.devs[0].ifindex = 1;
	lat[0].v.hist[20] = 3;		/* ~1 ms */
	lat[1].v.hist[12] = 1;		/* ~5 us */
	t1 = render(&s);
	buckets(t1, b1, sizeof(b1), &mono, &inf, &count);
	EXPECT(mono, "histogram buckets are cumulative");
	EXPECT(inf == 4 && count == 4, "+Inf bucket %lld and count %lld are the ops, 4", inf, count);
	lat[0].v.hist[20] = 0;
	lat[0].v.hist[30] = 3;		/* ~1 s: a bucket the first render had empty */
	t2 = render(&s);
	buckets(t2, b2, sizeof(b2), &mono, &inf, &count);
	EXPECT(!strcmp(b1, b2), "the same buckets in every scrape:\n%s\n%s", b1, b2);
	EXPECT(strstr(b1, "1.024e-06 ") && strstr(b1, "34.359738368 +Inf"),
	       "buckets run from 2^10 ns to 2^35 ns: %s", b1);
	EXPECT(strstr(t1, "device=\"we\\\"ir\\\\d\""), "label values are escaped");
	EXPECT(strstr(t1, "collx_netmon_roce_packets_total{device=\"we\\\"ir\\\\d\",direction=\"rx\"} 15"),
	       "RoCE rows summed per device and direction");
	EXPECT(!strstr(t1, "qpn=") && !strstr(t1, "peer=") && !strstr(t1, "comm="),
	       "no unbounded labels");
	EXPECT(strstr(t1, "collx_netmon_ethtool_rx_prio3_pause_total{device=\"eth1\"} 8"),
	       "one metric per driver statistic");
	EXPECT(contiguous(t1), "every family's samples are contiguous");
	EXPECT(strstr(t1, "collx_netmon_build_info{version=\""), "build_info");
	fputs(t1, stdout);
	free(t1);
	free(t2);
	fprintf(stderr, "%s - exposition: fixed buckets, escaping, bounded labels\n",
		failures ? "not ok" : "ok");
	return failures ? 1 : 0;
}
