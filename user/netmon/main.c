// SPDX-License-Identifier: GPL-2.0
/*
 * collx-netmon: PFC pauses, ECN/CNP and queue drops on the RDMA netdev,
 * lined up with the collx collectives they slowed.  See collx-netmon(8).
 *
 * This file: options, setup and the main loop, which consumes the ring
 * buffer and, on its timers, reports (table, JSON) and publishes the
 * Prometheus exposition (HTTP thread, textfile).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "netmon.skel.h"
#include "main.h"

#define LOCK_PATH "/run/collx-netmon/lock"

struct nm_opts opt = { .interval = 1.0, .top = 20, .lock_path = LOCK_PATH };
struct attrib attr;
uint64_t t0_mono;

static volatile sig_atomic_t stop;

static void sig_handler(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f, int code)
{
	fprintf(f,
"Usage: collx-netmon [OPTIONS]\n"
"Watch PFC pauses, ECN/CNP and drops on the RDMA netdev and line them up\n"
"with collx collectives.  Needs a kernel with BTF and CAP_BPF, CAP_PERFMON and\n"
"CAP_NET_ADMIN (CAP_SYSLOG to name drop sites): run it as root.  One instance\n"
"per node (" LOCK_PATH ").\n"
"\n"
"  -I, --interface DEV     netdev to watch (repeatable; default: every netdev\n"
"                          an RDMA device runs over)\n"
"  -i, --interval SEC      report every SEC seconds (default 1; 0: only at exit)\n"
"  -d, --duration SEC      stop after SEC seconds (default 0: until SIGINT/SIGTERM)\n"
"  -j, --json[=FILE]       a JSON object per report, one a line, to FILE (default\n"
"                          stdout)\n"
"  -t, --table[=FILE]      the live table, to FILE (default stdout); the default\n"
"                          output when no --json, --prometheus or --textfile\n"
"  -p, --prometheus ADDR:PORT  serve /metrics there (127.0.0.1:9477, [::1]:9477,\n"
"                          :9477 for every address); refreshed every second\n"
"  -x, --textfile FILE     the exposition for node_exporter's textfile collector,\n"
"                          rewritten atomically every second\n"
"  -a, --all-drops         count every drop, not only RoCE v2 (UDP 4791) ones\n"
"  -s, --speed MBPS        link speed for pause time (default: the netdev's,\n"
"                          100000 when it reports none)\n"
"  -H, --hw-all            every ethtool statistic, not only congestion ones\n"
"  -e, --events FILE       every raw event as JSON lines (timelines, tests)\n"
"  -r, --ready-file FILE   create FILE once the probes are attached\n"
"  -n, --top N             congested ops in the table (default 20)\n"
"  -L, --lock FILE         the instance lock (default " LOCK_PATH ")\n"
"  -k, --keep-pins         leave the maps pinned in " NETMON_PIN_DIR " at exit\n"
"  -P, --no-pin            do not pin the maps\n"
"  -T, --no-tc             no tc programs (drops and collectives only)\n"
"  -v, --verbose           libbpf debug output\n"
"  -V, --version           print the version\n"
"  -h, --help              this text\n");
	exit(code);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !opt.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int read_ll(const char *path, long long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%lld", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Every netdev an RDMA device runs over. */
static void default_devs(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	char ib[64];

	for (i = ifs; i && i->if_index && opt.ndevs < MAX_DEVS; i++) {
		hw_rdma_dev_of(i->if_name, ib, sizeof(ib), NULL);
		if (ib[0])
			snprintf(opt.devs[opt.ndevs++].name, IF_NAMESIZE, "%s", i->if_name);
	}
	if (ifs)
		if_freenameindex(ifs);
}

static int setup_devs(void)
{
	int i;

	if (!opt.ndevs && !opt.no_tc)
		default_devs();
	if (!opt.ndevs && !opt.no_tc) {
		fprintf(stderr, "collx-netmon: no RDMA netdev found; name one with -I DEV "
			"(or --no-tc)\n");
		return -1;
	}
	for (i = 0; i < opt.ndevs; i++) {
		struct nm_dev *d = &opt.devs[i];
		char p[128];
		long long sp = -1;

		d->ifindex = if_nametoindex(d->name);
		if (!d->ifindex) {
			fprintf(stderr, "collx-netmon: no netdev %s\n", d->name);
			return -1;
		}
		snprintf(p, sizeof(p), "/sys/class/net/%s/speed", d->name);
		if (opt.speed_override) {
			d->mbps = opt.speed_override;
		} else if (!read_ll(p, &sp) && sp > 0) {
			d->mbps = sp;
		} else {
			d->mbps = 100000;
			d->speed_assumed = 1;
		}
	}
	return 0;
}

static FILE *open_out(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "collx-netmon: %s: %s\n", path, strerror(errno));
	return f;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interface", required_argument, NULL, 'I' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", optional_argument, NULL, 'j' },
		{ "table", optional_argument, NULL, 't' },
		{ "prometheus", required_argument, NULL, 'p' },
		{ "textfile", required_argument, NULL, 'x' },
		{ "all-drops", no_argument, NULL, 'a' },
		{ "speed", required_argument, NULL, 's' },
		{ "hw-all", no_argument, NULL, 'H' },
		{ "events", required_argument, NULL, 'e' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'n' },
		{ "lock", required_argument, NULL, 'L' },
		{ "keep-pins", no_argument, NULL, 'k' },
		{ "no-pin", no_argument, NULL, 'P' },
		{ "no-tc", no_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned long long u;
	char *end;
	double *dp;
	int c;

	while ((c = getopt_long(argc, argv, "I:i:d:j::t::p:x:as:He:r:n:L:kPTvVh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'I':
			if (opt.ndevs == MAX_DEVS || strlen(optarg) >= IF_NAMESIZE) {
				fprintf(stderr, "collx-netmon: at most %d -I, each a netdev name\n",
					MAX_DEVS);
				return -1;
			}
			snprintf(opt.devs[opt.ndevs++].name, IF_NAMESIZE, "%s", optarg);
			break;
		case 'i':
		case 'd':
			dp = c == 'i' ? &opt.interval : &opt.duration;
			errno = 0;
			*dp = strtod(optarg, &end);
			if (errno || end == optarg || *end || *dp < 0) {
				fprintf(stderr, "collx-netmon: bad -%c %s\n", c, optarg);
				return -1;
			}
			break;
		case 'j': opt.json = 1; opt.json_path = optarg; break;
		case 't': opt.table = 1; opt.table_path = optarg; break;
		case 'p': opt.listen = optarg; break;
		case 'x': opt.textfile = optarg; break;
		case 'a': opt.all_drops = 1; break;
		case 's':
		case 'n':
			errno = 0;
			u = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || !u || (c == 'n' && u > 100000)) {
				fprintf(stderr, "collx-netmon: bad -%c %s\n", c, optarg);
				return -1;
			}
			if (c == 's')
				opt.speed_override = u;
			else
				opt.top = u;
			break;
		case 'H': opt.hw_all = 1; break;
		case 'e': opt.events_path = optarg; break;
		case 'r': opt.ready_file = optarg; break;
		case 'L': opt.lock_path = optarg; break;
		case 'k': opt.keep_pins = 1; break;
		case 'P': opt.no_pin = 1; break;
		case 'T': opt.no_tc = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'V':
			printf("collx-netmon %s (libbpf %s)\n", COLLX_VERSION, libbpf_version_string());
			exit(0);
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
	if (!opt.json && !opt.listen && !opt.textfile)
		opt.table = 1;
	if (opt.listen && http_check(opt.listen))
		return -1;
	return 0;
}

/*
 * Without the collx module its tracepoints do not exist: skip them.  Raw
 * tracepoints are found by name in the kernel, so tracefs is not needed.
 */
static void select_programs(struct netmon_bpf *skel)
{
	struct bpf_program *collx[] = {
		skel->progs.netmon_op_submit, skel->progs.netmon_op_start,
		skel->progs.netmon_op_done, skel->progs.netmon_chunk_post,
		skel->progs.netmon_chunk_done, skel->progs.netmon_comm_error,
	};
	size_t i;

	if (access("/sys/module/collx", F_OK)) {
		for (i = 0; i < sizeof(collx) / sizeof(collx[0]); i++)
			bpf_program__set_autoload(collx[i], false);
		fprintf(stderr, "collx-netmon: no collx tracepoints (module not loaded): "
			"no op latency or attribution\n");
	}
	if (opt.no_tc) {
		bpf_program__set_autoload(skel->progs.netmon_tc_ingress, false);
		bpf_program__set_autoload(skel->progs.netmon_tc_egress, false);
	}
}

struct outputs {
	FILE *json, *table;
};

static void report(struct netmon_bpf *skel, struct outputs *o, struct snapshot *cur,
		   struct snapshot *prev, int final)
{
	snapshot_take(skel, cur);
	if (o->table)
		table_print(o->table, cur, prev, final);
	if (o->json)
		json_print(o->json, cur, final);
	snapshot_rotate(prev, cur);
}

static void publish(struct netmon_bpf *skel, struct snapshot *s)
{
	snapshot_take(skel, s);
	if (opt.listen)
		http_publish(s, &attr);
	if (opt.textfile)
		prom_write_textfile(opt.textfile, s, &attr);
}

static void run(struct netmon_bpf *skel, struct ring_buffer *rb, struct outputs *o)
{
	struct snapshot cur = {}, prev = {}, pub = {};
	int publishing = opt.listen || opt.textfile;
	uint64_t next, next_pub, end = 0;

	if (opt.duration > 0)
		end = t0_mono + opt.duration * 1e9;
	next = opt.interval > 0 ? t0_mono + opt.interval * 1e9 : 0;
	next_pub = t0_mono;
	while (!stop) {
		uint64_t now = now_ns(), wake = now + 200000000ULL;

		if (next && next < wake)
			wake = next;
		if (publishing && next_pub < wake)
			wake = next_pub;
		if (end && end < wake)
			wake = end;
		/* the only wait: ring-buffer events wake it at once */
		events_budget(EVENTS_PER_POLL);
		ring_buffer__poll(rb, wake > now ? (wake - now) / 1000000 + 1 : 0);
		now = now_ns();
		if (end && now >= end)
			break;
		if (publishing && now >= next_pub) {
			publish(skel, &pub);
			next_pub = now + PUBLISH_NS;
		}
		if (next && now >= next) {
			report(skel, o, &cur, &prev, 0);
			next += opt.interval * 1e9;
			if (next < now)
				next = now + opt.interval * 1e9;
		}
	}
	events_budget(0);
	ring_buffer__consume(rb);
	report(skel, o, &cur, &prev, 1);
	if (publishing)
		publish(skel, &pub);
	snapshot_free(&cur);
	snapshot_free(&prev);
	snapshot_free(&pub);
}

int main(int argc, char **argv)
{
	struct netmon_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct outputs out = {};
	int i, err, ret = 1;

	if (parse_args(argc, argv))
		return 2;
	libbpf_set_print(libbpf_print);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "collx-netmon: this kernel has no BTF (/sys/kernel/btf/vmlinux: %s); "
			"the CO-RE probes need CONFIG_DEBUG_INFO_BTF=y\n", strerror(errno));
		return 1;
	}
	if (nm_check_caps() || setup_devs())
		return 1;
	if (nm_lock(opt.lock_path))
		return 1;
	names_init();
	attrib_init(&attr);
	skel = netmon_bpf__open();
	if (!skel) {
		fprintf(stderr, "collx-netmon: opening the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->drops_all = opt.all_drops;
	select_programs(skel);
	if (!opt.no_pin && nm_pin_maps(skel))
		goto out;
	err = netmon_bpf__load(skel);
	if (err) {
		nm_explain(err, "loading the BPF programs");
		goto out;
	}
	for (i = 0; i < opt.ndevs; i++) {
		struct speed_val sv = { .mbps = opt.devs[i].mbps };
		__u32 idx = opt.devs[i].ifindex;

		bpf_map_update_elem(bpf_map__fd(skel->maps.speed), &idx, &sv, BPF_ANY);
	}
	err = netmon_bpf__attach(skel);
	if (err) {
		nm_explain(err, "attaching the tracepoints");
		goto out;
	}
	if (!opt.no_tc && (err = nm_attach_tc(skel))) {
		nm_explain(err, "attaching tc");
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), events_on_sample, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "collx-netmon: ring buffer: %s\n", strerror(errno));
		goto out;
	}
	if (opt.events_path && events_open(opt.events_path))
		goto out;
	if ((opt.json && !(out.json = open_out(opt.json_path))) ||
	    (opt.table && !(out.table = open_out(opt.table_path))))
		goto out;
	if (opt.listen && http_start(opt.listen))
		goto out;
	ksyms_load();
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	t0_mono = now_ns();
	if (opt.ready_file) {
		FILE *f = fopen(opt.ready_file, "w");

		if (f)
			fclose(f);
	}
	run(skel, rb, &out);
	ret = 0;
out:
	http_stop();
	nm_detach_tc();
	ring_buffer__free(rb);
	if (skel && !opt.no_pin && !opt.keep_pins)
		nm_unpin_maps(skel);
	netmon_bpf__destroy(skel);
	events_close();
	if (out.json && out.json != stdout)
		fclose(out.json);
	if (out.table && out.table != stdout)
		fclose(out.table);
	return ret;
}
