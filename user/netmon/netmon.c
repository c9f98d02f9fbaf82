// SPDX-License-Identifier: GPL-2.0
/*
 * collx-netmon: PFC pauses, ECN/CNP and queue drops on the RDMA netdev,
 * lined up with the collx collectives they slowed.  See
 * Documentation/collx-netmon.8.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>
#include "netmon.skel.h"
#include "attrib.h"
#include "hw.h"

#define MAX_DEVS 8

static struct {
	char devs[MAX_DEVS][IF_NAMESIZE];
	int ifindex[MAX_DEVS];
	uint64_t mbps[MAX_DEVS];
	int speed_assumed[MAX_DEVS];
	int ndevs;
	double interval;
	double duration;
	uint64_t speed_override;
	int all_drops, hw_all, keep_pins, no_pin, no_tc, verbose;
	const char *json_path, *table_path, *prom_arg, *events_path, *ready_file;
	int json, table;
} opt = { .interval = 1.0 };

static volatile sig_atomic_t stop;
static struct attrib attr;
static FILE *events_f;
static uint64_t t0_mono;
static time_t t0_wall;

static void sig_handler(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void usage(FILE *f, int code)
{
	fprintf(f,
"Usage: collx-netmon [OPTIONS]\n"
"Watch PFC pauses, ECN/CNP and drops on the RDMA netdev and line them up\n"
"with collx collectives.  Needs CAP_BPF and CAP_NET_ADMIN and a kernel with BTF.\n"
"\n"
"  -I, --interface DEV    netdev to watch (repeatable; default: every netdev\n"
"                         an RDMA device runs over)\n"
"  -i, --interval SEC     report every SEC seconds (default 1; 0: only at exit)\n"
"  -d, --duration SEC     stop after SEC seconds (default 0: until SIGINT/SIGTERM)\n"
"  -j, --json[=FILE]      JSON lines to FILE (default stdout) instead of the table\n"
"  -t, --table[=FILE]     the terminal table (default when no --json), to FILE\n"
"  -p, --prometheus DEST  text exposition: a FILE rewritten every interval\n"
"                         (node_exporter textfile collector) or :PORT to serve\n"
"  -a, --all-drops        count every drop, not only RoCE v2 (UDP 4791) ones\n"
"  -s, --speed MBPS       link speed for pause time (default: the netdev's,\n"
"                         100000 when it reports none)\n"
"  -H, --hw-all           every ethtool statistic, not only congestion ones\n"
"  -e, --events FILE      every raw event as JSON lines (debugging, tests)\n"
"  -r, --ready-file FILE  create FILE once the probes are attached\n"
"  -k, --keep-pins        leave the maps pinned in " NETMON_PIN_DIR " at exit\n"
"  -P, --no-pin           do not pin the maps\n"
"  -T, --no-tc            no tc programs (drops and collectives only)\n"
"  -v, --verbose          libbpf debug output\n"
"  -h, --help             this text\n");
	exit(code);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !opt.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* ------------------------------------------------------------------ */
/* names */

static const char *coll_name(uint32_t coll)
{
	/* the order of the collx uapi's collective enum */
	static const char *const n[] = {
		"allreduce", "broadcast", "reduce", "allgather",
		"reduce_scatter", "alltoall", "barrier",
	};
	static char buf[16];

	if (coll == ~0U)
		return "unknown";
	if (coll < sizeof(n) / sizeof(n[0]))
		return n[coll];
	snprintf(buf, sizeof(buf), "coll%u", coll);
	return buf;
}

static struct btf *vmlinux_btf;

static const char *reason_name(uint32_t reason)
{
	static char buf[64];
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	if (vmlinux_btf) {
		id = btf__find_by_name_kind(vmlinux_btf, "skb_drop_reason", BTF_KIND_ENUM);
		if (id > 0) {
			t = btf__type_by_id(vmlinux_btf, id);
			e = btf_enum(t);
			for (i = 0; i < btf_vlen(t); i++, e++) {
				if ((uint32_t)e->val == reason) {
					const char *s = btf__name_by_offset(vmlinux_btf, e->name_off);

					if (!strncmp(s, "SKB_DROP_REASON_", 16))
						s += 16;
					return s;
				}
			}
		}
	}
	snprintf(buf, sizeof(buf), "reason%u", reason);
	return buf;
}

/* Symbols for drop locations, from /proc/kallsyms, read on first use. */
static struct ksym { uint64_t addr; char *name; } *ksyms;
static size_t nksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *ksym_name(uint64_t addr)
{
	static int loaded;
	size_t lo = 0, hi;

	if (!loaded) {
		FILE *f = fopen("/proc/kallsyms", "r");
		char line[512], name[256], type;
		unsigned long long a;
		size_t cap = 0;

		loaded = 1;
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
				continue;
			if (type != 't' && type != 'T')
				continue;
			if (nksyms == cap) {
				void *p;

				cap = cap ? cap * 2 : 65536;
				p = realloc(ksyms, cap * sizeof(*ksyms));
				if (!p)
					break;
				ksyms = p;
			}
			ksyms[nksyms].addr = a;
			ksyms[nksyms++].name = strdup(name);
		}
		if (f)
			fclose(f);
		qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
	}
	if (!nksyms || addr < ksyms[0].addr)
		return "?";
	hi = nksyms;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return ksyms[lo].name;
}

/*
 * What a kfree_skb was: "qdisc" (a qdisc or tc action dropped it: reason
 * QDISC_DROP/TC_* on 6.12; on 6.1, where reasons are NOT_SPECIFIED, the
 * freeing site in the transmit path or the qdisc's own function), "rxe"
 * (rxe frees every packet it has consumed with kfree_skb: not a drop), or
 * "stack" (any other drop).
 */
static const char *drop_class(uint32_t reason, uint64_t location)
{
	static const char *const qdisc_sites[] = {
		"__dev_queue_xmit", "__dev_xmit_skb", "kfree_skb_list*", "*qdisc*",
		"sch_*", "tcf_*", "tc_*", "netem_*", "*_enqueue", "*_dequeue",
	};
	const char *r = reason_name(reason), *w = ksym_name(location);
	size_t i;

	if (!strncmp(r, "QDISC", 5) || !strncmp(r, "TC_", 3))
		return "qdisc";
	if (!strcmp(r, "NOT_SPECIFIED")) {
		if (!strncmp(w, "rxe_", 4))
			return "rxe";
		for (i = 0; i < sizeof(qdisc_sites) / sizeof(qdisc_sites[0]); i++)
			if (!fnmatch(qdisc_sites[i], w, 0))
				return "qdisc";
	}
	return "stack";
}

static const char *ifname(uint32_t ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

static const char *addr_str(uint8_t family, const uint8_t *a, char *buf, size_t len)
{
	if (family == 6)
		inet_ntop(AF_INET6, a, buf, len);
	else
		inet_ntop(AF_INET, a, buf, len);
	return buf;
}

static const char *dir_name(int dir)
{
	return dir == NETMON_RX ? "rx" : "tx";
}

/* ------------------------------------------------------------------ */
/* snapshot of the maps */

struct pfc_row { struct pfc_key k; struct pfc_val v; };
struct roce_row { struct roce_key k; struct roce_val v; };
struct drop_row { struct drop_key k; struct drop_val v; };
struct lat_row { struct lat_key k; struct lat_val v; };

struct snapshot {
	uint64_t mono;
	struct pfc_row *pfc; int npfc;
	struct roce_row *roce; int nroce;
	struct drop_row *drop; int ndrop;
	struct lat_row *lat; int nlat;
	struct hw_set hw;
	uint64_t lost;
	uint64_t kfree_shape;
};

static int dump_map(int fd, size_t ksz, size_t voff, size_t rowsz, void **out)
{
	char key[64], next[64];
	char *rows = NULL;
	int n = 0, cap = 0, err;
	void *prev = NULL;

	while (!(err = bpf_map_get_next_key(fd, prev, next))) {
		if (n == cap) {
			void *p;

			cap = cap ? cap * 2 : 64;
			p = realloc(rows, cap * rowsz);
			if (!p)
				break;
			rows = p;
		}
		memcpy(rows + n * rowsz, next, ksz);
		if (!bpf_map_lookup_elem(fd, next, rows + n * rowsz + voff))
			n++;
		memcpy(key, next, ksz);
		prev = key;
	}
	*out = rows;
	return n;
}

static int pfc_cmp(const void *a, const void *b)
{
	const struct pfc_key *x = a, *y = b;

	if (x->ifindex != y->ifindex) return x->ifindex < y->ifindex ? -1 : 1;
	if (x->dir != y->dir) return x->dir - y->dir;
	if (x->kind != y->kind) return x->kind - y->kind;
	return x->prio - y->prio;
}

static int roce_cmp(const void *a, const void *b)
{
	const struct roce_key *x = a, *y = b;

	if (x->ifindex != y->ifindex) return x->ifindex < y->ifindex ? -1 : 1;
	if (x->dir != y->dir) return x->dir - y->dir;
	if (memcmp(x->peer, y->peer, 16)) return memcmp(x->peer, y->peer, 16);
	return x->qpn < y->qpn ? -1 : x->qpn > y->qpn;
}

static int drop_cmp(const void *a, const void *b)
{
	const struct drop_key *x = a, *y = b;

	if (x->ifindex != y->ifindex) return x->ifindex < y->ifindex ? -1 : 1;
	if (x->reason != y->reason) return x->reason < y->reason ? -1 : 1;
	return x->location < y->location ? -1 : x->location > y->location;
}

static int lat_cmp(const void *a, const void *b)
{
	const struct lat_key *x = a, *y = b;

	if (x->comm_id != y->comm_id) return x->comm_id < y->comm_id ? -1 : 1;
	return x->coll < y->coll ? -1 : x->coll > y->coll;
}

static void snapshot_take(struct netmon_bpf *skel, struct snapshot *s)
{
	__u32 idx;
	int i;

	free(s->pfc); free(s->roce); free(s->drop); free(s->lat);
	s->mono = now_ns();
	s->npfc = dump_map(bpf_map__fd(skel->maps.pfc), sizeof(struct pfc_key),
			   offsetof(struct pfc_row, v), sizeof(struct pfc_row), (void **)&s->pfc);
	s->nroce = dump_map(bpf_map__fd(skel->maps.roce), sizeof(struct roce_key),
			   offsetof(struct roce_row, v), sizeof(struct roce_row), (void **)&s->roce);
	s->ndrop = dump_map(bpf_map__fd(skel->maps.drops), sizeof(struct drop_key),
			   offsetof(struct drop_row, v), sizeof(struct drop_row), (void **)&s->drop);
	s->nlat = dump_map(bpf_map__fd(skel->maps.op_lat), sizeof(struct lat_key),
			   offsetof(struct lat_row, v), sizeof(struct lat_row), (void **)&s->lat);
	qsort(s->pfc, s->npfc, sizeof(*s->pfc), pfc_cmp);
	qsort(s->roce, s->nroce, sizeof(*s->roce), roce_cmp);
	qsort(s->drop, s->ndrop, sizeof(*s->drop), drop_cmp);
	qsort(s->lat, s->nlat, sizeof(*s->lat), lat_cmp);
	idx = 0;
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, &s->lost);
	idx = 1;
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, &s->kfree_shape);
	hw_reset(&s->hw);
	for (i = 0; i < opt.ndevs; i++)
		hw_collect(&s->hw, opt.devs[i], opt.hw_all);
}

/* Paused time so far: the running pause is cut at the snapshot's time. */
static uint64_t pfc_paused_now(const struct pfc_val *v, uint64_t now)
{
	if (v->paused_until > now)
		return v->paused_ns - (v->paused_until - now);
	return v->paused_ns;
}

static uint64_t hist_quantile(const struct lat_val *v, double q)
{
	uint64_t want = (uint64_t)(q * v->ops + 0.999999), seen = 0;
	int b;

	for (b = 0; b < NETMON_HIST_BUCKETS; b++) {
		seen += v->hist[b];
		if (seen >= want && v->hist[b])
			return 1ULL << (b + 1);	/* bucket's upper bound */
	}
	return v->max_ns;
}

/* ------------------------------------------------------------------ */
/* table */

static void print_table(FILE *f, const struct snapshot *s, int final)
{
	char n[IF_NAMESIZE], a[INET6_ADDRSTRLEN];
	struct utsname u;
	char host[64] = "";
	int i, j, shown;
	uint64_t k;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	if (f == stdout && isatty(STDOUT_FILENO) && !final)
		fputs("\033[H\033[2J", f);
	fprintf(f, "collx-netmon on %s, kernel %s, %.1f s%s\n", host, u.release,
		(s->mono - t0_mono) / 1e9, final ? " (final)" : "");
	for (i = 0; i < opt.ndevs; i++)
		fprintf(f, "  %s: ifindex %d, %llu Mb/s%s\n", opt.devs[i], opt.ifindex[i],
			(unsigned long long)opt.mbps[i],
			opt.speed_assumed[i] ? " (assumed: the netdev reports no speed)" : "");

	fprintf(f, "\nPAUSE FRAMES                                        [source: bpf tc clsact]\n");
	fprintf(f, "%-8s %-3s %-5s %4s %9s %9s %14s %12s\n",
		"DEV", "DIR", "KIND", "PRIO", "FRAMES", "RESUMES", "QUANTA", "PAUSED(ms)");
	for (i = 0; i < s->npfc; i++) {
		const struct pfc_row *r = &s->pfc[i];

		fprintf(f, "%-8s %-3s %-5s %4u %9llu %9llu %14llu %12.3f\n",
			ifname(r->k.ifindex, n), dir_name(r->k.dir),
			r->k.kind == NETMON_PFC ? "pfc" : "pause", r->k.prio,
			(unsigned long long)r->v.frames, (unsigned long long)r->v.resumes,
			(unsigned long long)r->v.quanta, pfc_paused_now(&r->v, s->mono) / 1e6);
	}
	if (!s->npfc)
		fprintf(f, "  (none)\n");

	fprintf(f, "\nROCE V2 (UDP 4791) PER QP                           [source: bpf tc clsact]\n");
	fprintf(f, "%-8s %-3s %-15s %-8s %9s %12s %7s %7s %7s %5s %5s\n",
		"DEV", "DIR", "PEER", "QPN", "PACKETS", "BYTES", "ECT", "CE", "CNP", "NAK", "RNR");
	for (i = 0; i < s->nroce; i++) {
		const struct roce_row *r = &s->roce[i];

		fprintf(f, "%-8s %-3s %-15s 0x%06x %9llu %12llu %7llu %7llu %7llu %5llu %5llu\n",
			ifname(r->k.ifindex, n), dir_name(r->k.dir),
			addr_str(r->k.family, r->k.peer, a, sizeof(a)), r->k.qpn,
			(unsigned long long)r->v.packets, (unsigned long long)r->v.bytes,
			(unsigned long long)r->v.ect, (unsigned long long)r->v.ce,
			(unsigned long long)r->v.cnp, (unsigned long long)r->v.nak,
			(unsigned long long)r->v.rnr_nak);
	}
	if (!s->nroce)
		fprintf(f, "  (none)\n");

	fprintf(f, "\nDROPS (%s)%*s[source: bpf skb:kfree_skb]\n",
		opt.all_drops ? "all traffic" : "RoCE v2 flows", opt.all_drops ? 30 : 28, "");
	fprintf(f, "%-8s %-24s %-28s %-6s %4s %9s %12s\n", "DEV", "REASON", "WHERE", "CLASS",
		"ROCE", "PACKETS", "BYTES");
	for (i = 0; i < s->ndrop; i++) {
		const struct drop_row *r = &s->drop[i];

		fprintf(f, "%-8s %-24s %-28s %-6s %4s %9llu %12llu\n", ifname(r->k.ifindex, n),
			reason_name(r->k.reason), ksym_name(r->k.location),
			drop_class(r->k.reason, r->k.location),
			r->k.roce ? "yes" : "no", (unsigned long long)r->v.packets,
			(unsigned long long)r->v.bytes);
	}
	if (!s->ndrop)
		fprintf(f, "  (none)\n");

	fprintf(f, "\nHARDWARE COUNTERS\n%-10s %-18s %-32s %14s\n", "DEV", "SOURCE", "NAME", "VALUE");
	for (i = 0; i < s->hw.n; i++) {
		const struct hw_counter *c = &s->hw.c[i];

		if (!c->value && !opt.hw_all)
			continue;
		fprintf(f, "%-10s %-18s %-32s %14llu\n", c->dev, c->source, c->name,
			(unsigned long long)c->value);
	}
	for (i = 0; i < s->hw.nnotes; i++)
		fprintf(f, "%-10s %-18s %s\n", s->hw.notes[i].dev, s->hw.notes[i].source,
			s->hw.notes[i].text);

	fprintf(f, "\nCOLLECTIVES: LATENCY PER COMM AND OP                [source: bpf collx tracepoints]\n");
	fprintf(f, "%-6s %-14s %7s %5s %10s %10s %10s %10s\n",
		"COMM", "COLL", "OPS", "ERR", "AVG(us)", "P50(us)", "P99(us)", "MAX(us)");
	for (i = 0; i < s->nlat; i++) {
		const struct lat_row *r = &s->lat[i];

		fprintf(f, "%-6u %-14s %7llu %5llu %10.1f %10.1f %10.1f %10.1f\n",
			r->k.comm_id, coll_name(r->k.coll), (unsigned long long)r->v.ops,
			(unsigned long long)r->v.errors,
			r->v.ops ? r->v.sum_ns / 1e3 / r->v.ops : 0.0,
			hist_quantile(&r->v, 0.5) / 1e3, hist_quantile(&r->v, 0.99) / 1e3,
			r->v.max_ns / 1e3);
	}
	if (!s->nlat)
		fprintf(f, "  (no collx ops seen)\n");

	fprintf(f, "\nCONGESTION BY COMM AND OP (finished ops)\n");
	fprintf(f, "%-6s %-14s %7s %7s %7s %11s %6s %6s %5s %6s\n", "COMM", "COLL", "OPS",
		"HIT", "PAUSES", "PAUSED(ms)", "CNP", "CE", "NAK", "DROPS");
	for (i = 0; i < attr.nsum; i++) {
		const struct attrib_summary *m = &attr.sum[i];

		fprintf(f, "%-6u %-14s %7llu %7llu %7llu %11.3f %6llu %6llu %5llu %6llu\n",
			m->comm_id, coll_name(m->coll), (unsigned long long)m->ops,
			(unsigned long long)m->ops_hit, (unsigned long long)m->pauses,
			m->paused_ns / 1e6, (unsigned long long)m->cnp, (unsigned long long)m->ce,
			(unsigned long long)m->nak, (unsigned long long)m->drops);
	}
	fprintf(f, "\nCONGESTED OPS (in flight, then the most recent finished)\n");
	fprintf(f, "%-6s %-8s %-14s %10s %10s %-5s %7s %11s %5s %5s %5s %5s\n", "COMM", "OP",
		"COLL", "START(ms)", "DUR(ms)", "PEER", "PAUSES", "PAUSED(ms)", "CNP", "CE", "NAK", "DROP");
	shown = 0;
	for (k = 0; shown < 20; k++) {
		const struct attrib_op *o;

		if ((int)k < attr.ninflight)
			o = &attr.inflight[k];
		else if (!(o = attrib_recent(&attr, k - attr.ninflight)))
			break;
		if (!o->pauses && !o->paused_ns && !o->cnp && !o->ce && !o->nak && !o->drops)
			continue;
		for (j = 0; j < o->npeers; j++) {
			const struct attrib_peer *p = &o->peers[j];
			char peer[12];

			if (p->peer == ATTRIB_NO_PEER)
				snprintf(peer, sizeof(peer), "-");
			else
				snprintf(peer, sizeof(peer), "%u", p->peer);
			char dur[24];
			uint64_t b = o->start_ns ? o->start_ns : o->submit_ns;

			if (o->done)
				snprintf(dur, sizeof(dur), "%.3f", (o->end_ns - b) / 1e6);
			else
				snprintf(dur, sizeof(dur), "running");
			fprintf(f, "%-6u %-8llu %-14s %10.3f %10s %-5s %7llu %11.3f %5llu %5llu %5llu %5llu\n",
				o->comm_id, (unsigned long long)o->op_id, coll_name(o->coll),
				b > t0_mono ? (b - t0_mono) / 1e6 : 0.0, dur, peer, (unsigned long long)p->pauses,
				p->paused_ns / 1e6, (unsigned long long)p->cnp,
				(unsigned long long)p->ce, (unsigned long long)p->nak,
				(unsigned long long)p->drops);
		}
		shown++;
	}
	if (!shown)
		fprintf(f, "  (none)\n");
	fprintf(f, "\nevents: %llu congestion events, %llu with no op in flight, %llu lost\n",
		(unsigned long long)attr.events, (unsigned long long)attr.unattributed,
		(unsigned long long)s->lost);
	fflush(f);
}

/* ------------------------------------------------------------------ */
/* JSON lines */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void print_json(FILE *f, const struct snapshot *s, int final)
{
	char n[IF_NAMESIZE], a[INET6_ADDRSTRLEN];
	int i, j;
	uint64_t k;

	fprintf(f, "{\"time\":%lld,\"uptime_s\":%.3f,\"final\":%s,\"devs\":[",
		(long long)time(NULL), (s->mono - t0_mono) / 1e9, final ? "true" : "false");
	for (i = 0; i < opt.ndevs; i++)
		fprintf(f, "%s{\"dev\":\"%s\",\"ifindex\":%d,\"speed_mbps\":%llu,\"speed_assumed\":%s}",
			i ? "," : "", opt.devs[i], opt.ifindex[i], (unsigned long long)opt.mbps[i],
			opt.speed_assumed[i] ? "true" : "false");
	fprintf(f, "],\"pause\":[");
	for (i = 0; i < s->npfc; i++) {
		const struct pfc_row *r = &s->pfc[i];

		fprintf(f, "%s{\"dev\":\"%s\",\"dir\":\"%s\",\"kind\":\"%s\",\"prio\":%u,"
			"\"frames\":%llu,\"resumes\":%llu,\"quanta\":%llu,\"paused_ns\":%llu,"
			"\"source\":\"bpf tc clsact\"}", i ? "," : "", ifname(r->k.ifindex, n),
			dir_name(r->k.dir), r->k.kind == NETMON_PFC ? "pfc" : "pause", r->k.prio,
			(unsigned long long)r->v.frames, (unsigned long long)r->v.resumes,
			(unsigned long long)r->v.quanta,
			(unsigned long long)pfc_paused_now(&r->v, s->mono));
	}
	fprintf(f, "],\"roce\":[");
	for (i = 0; i < s->nroce; i++) {
		const struct roce_row *r = &s->roce[i];

		fprintf(f, "%s{\"dev\":\"%s\",\"dir\":\"%s\",\"peer\":\"%s\",\"qpn\":%u,"
			"\"packets\":%llu,\"bytes\":%llu,\"ect\":%llu,\"ce\":%llu,\"cnp\":%llu,"
			"\"nak\":%llu,\"rnr_nak\":%llu,\"source\":\"bpf tc clsact\"}",
			i ? "," : "", ifname(r->k.ifindex, n), dir_name(r->k.dir),
			addr_str(r->k.family, r->k.peer, a, sizeof(a)), r->k.qpn,
			(unsigned long long)r->v.packets, (unsigned long long)r->v.bytes,
			(unsigned long long)r->v.ect, (unsigned long long)r->v.ce,
			(unsigned long long)r->v.cnp, (unsigned long long)r->v.nak,
			(unsigned long long)r->v.rnr_nak);
	}
	fprintf(f, "],\"drops\":[");
	for (i = 0; i < s->ndrop; i++) {
		const struct drop_row *r = &s->drop[i];

		fprintf(f, "%s{\"dev\":\"%s\",\"reason\":%u,\"reason_name\":\"%s\",\"where\":\"%s\","
			"\"class\":\"%s\",\"roce\":%s,\"packets\":%llu,\"bytes\":%llu,"
			"\"source\":\"bpf skb:kfree_skb\"}",
			i ? "," : "", ifname(r->k.ifindex, n), r->k.reason, reason_name(r->k.reason),
			ksym_name(r->k.location), drop_class(r->k.reason, r->k.location),
			r->k.roce ? "true" : "false",
			(unsigned long long)r->v.packets, (unsigned long long)r->v.bytes);
	}
	fprintf(f, "],\"hw\":[");
	for (i = 0; i < s->hw.n; i++) {
		fprintf(f, "%s{\"dev\":", i ? "," : "");
		json_str(f, s->hw.c[i].dev);
		fprintf(f, ",\"source\":\"%s\",\"name\":", s->hw.c[i].source);
		json_str(f, s->hw.c[i].name);
		fprintf(f, ",\"value\":%llu}", (unsigned long long)s->hw.c[i].value);
	}
	fprintf(f, "],\"hw_notes\":[");
	for (i = 0; i < s->hw.nnotes; i++) {
		fprintf(f, "%s{\"dev\":", i ? "," : "");
		json_str(f, s->hw.notes[i].dev);
		fprintf(f, ",\"source\":\"%s\",\"note\":", s->hw.notes[i].source);
		json_str(f, s->hw.notes[i].text);
		fputc('}', f);
	}
	fprintf(f, "],\"latency\":[");
	for (i = 0; i < s->nlat; i++) {
		const struct lat_row *r = &s->lat[i];

		fprintf(f, "%s{\"comm\":%u,\"coll\":\"%s\",\"ops\":%llu,\"errors\":%llu,"
			"\"sum_ns\":%llu,\"max_ns\":%llu,\"log2_ns_hist\":[", i ? "," : "",
			r->k.comm_id, coll_name(r->k.coll), (unsigned long long)r->v.ops,
			(unsigned long long)r->v.errors, (unsigned long long)r->v.sum_ns,
			(unsigned long long)r->v.max_ns);
		for (j = 0; j < NETMON_HIST_BUCKETS; j++)
			fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)r->v.hist[j]);
		fprintf(f, "],\"source\":\"bpf collx tracepoints\"}");
	}
	fprintf(f, "],\"congestion_by_op\":[");
	for (i = 0; i < attr.nsum; i++) {
		const struct attrib_summary *m = &attr.sum[i];

		fprintf(f, "%s{\"comm\":%u,\"coll\":\"%s\",\"ops\":%llu,\"ops_hit\":%llu,"
			"\"pauses\":%llu,\"paused_ns\":%llu,\"cnp\":%llu,\"ce\":%llu,\"nak\":%llu,"
			"\"drops\":%llu}", i ? "," : "", m->comm_id, coll_name(m->coll),
			(unsigned long long)m->ops, (unsigned long long)m->ops_hit,
			(unsigned long long)m->pauses, (unsigned long long)m->paused_ns,
			(unsigned long long)m->cnp, (unsigned long long)m->ce,
			(unsigned long long)m->nak, (unsigned long long)m->drops);
	}
	fprintf(f, "],\"ops\":[");
	for (k = 0, j = 0;; k++) {
		const struct attrib_op *o;
		int p;

		if ((int)k < attr.ninflight)
			o = &attr.inflight[k];
		else if (!(o = attrib_recent(&attr, k - attr.ninflight)))
			break;
		fprintf(f, "%s{\"comm\":%u,\"op\":%llu,\"coll\":\"%s\",\"done\":%s,"
			"\"start_ns\":%llu,\"end_ns\":%llu,\"bytes\":%llu,\"status\":%d,"
			"\"pauses\":%llu,\"paused_ns\":%llu,\"cnp\":%llu,\"ce\":%llu,"
			"\"nak\":%llu,\"drops\":%llu,\"peers\":[", j++ ? "," : "",
			o->comm_id, (unsigned long long)o->op_id, coll_name(o->coll),
			o->done ? "true" : "false",
			(unsigned long long)(o->start_ns ? o->start_ns : o->submit_ns),
			(unsigned long long)o->end_ns, (unsigned long long)o->bytes, o->status,
			(unsigned long long)o->pauses,
			(unsigned long long)attrib_paused_now(o, s->mono),
			(unsigned long long)o->cnp, (unsigned long long)o->ce,
			(unsigned long long)o->nak, (unsigned long long)o->drops);
		for (p = 0; p < o->npeers; p++) {
			const struct attrib_peer *pp = &o->peers[p];

			fprintf(f, "%s{\"peer\":%d,\"pauses\":%llu,\"paused_ns\":%llu,\"cnp\":%llu,"
				"\"ce\":%llu,\"nak\":%llu,\"drops\":%llu}", p ? "," : "",
				pp->peer == ATTRIB_NO_PEER ? -1 : (int)pp->peer,
				(unsigned long long)pp->pauses, (unsigned long long)pp->paused_ns,
				(unsigned long long)pp->cnp, (unsigned long long)pp->ce,
				(unsigned long long)pp->nak, (unsigned long long)pp->drops);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"events\":%llu,\"unattributed\":%llu,\"lost\":%llu,"
		"\"kfree_skb_shape\":\"%s\"}\n",
		(unsigned long long)attr.events, (unsigned long long)attr.unattributed,
		(unsigned long long)s->lost,
		s->kfree_shape == 612 ? "6.12 (rx_sk)" : s->kfree_shape == 601 ? "6.1" : "unseen");
	fflush(f);
}

/* ------------------------------------------------------------------ */
/* Prometheus text exposition */

static void print_prom(FILE *f, const struct snapshot *s)
{
	char n[IF_NAMESIZE], a[INET6_ADDRSTRLEN];
	int i, j;

#define HELP(name, type, text) fprintf(f, "# HELP " name " " text "\n# TYPE " name " " type "\n")
	HELP("collx_netmon_pause_frames_total", "counter", "Pause frames with quanta > 0 (source bpf tc clsact).");
	for (i = 0; i < s->npfc; i++)
		fprintf(f, "collx_netmon_pause_frames_total{dev=\"%s\",dir=\"%s\",kind=\"%s\",prio=\"%u\",source=\"bpf\"} %llu\n",
			ifname(s->pfc[i].k.ifindex, n), dir_name(s->pfc[i].k.dir),
			s->pfc[i].k.kind == NETMON_PFC ? "pfc" : "pause", s->pfc[i].k.prio,
			(unsigned long long)s->pfc[i].v.frames);
	HELP("collx_netmon_pause_resume_frames_total", "counter", "Pause frames with quanta 0 (XON).");
	for (i = 0; i < s->npfc; i++)
		fprintf(f, "collx_netmon_pause_resume_frames_total{dev=\"%s\",dir=\"%s\",kind=\"%s\",prio=\"%u\",source=\"bpf\"} %llu\n",
			ifname(s->pfc[i].k.ifindex, n), dir_name(s->pfc[i].k.dir),
			s->pfc[i].k.kind == NETMON_PFC ? "pfc" : "pause", s->pfc[i].k.prio,
			(unsigned long long)s->pfc[i].v.resumes);
	HELP("collx_netmon_pause_quanta_total", "counter", "Sum of pause quanta (512 bit times each).");
	for (i = 0; i < s->npfc; i++)
		fprintf(f, "collx_netmon_pause_quanta_total{dev=\"%s\",dir=\"%s\",kind=\"%s\",prio=\"%u\",source=\"bpf\"} %llu\n",
			ifname(s->pfc[i].k.ifindex, n), dir_name(s->pfc[i].k.dir),
			s->pfc[i].k.kind == NETMON_PFC ? "pfc" : "pause", s->pfc[i].k.prio,
			(unsigned long long)s->pfc[i].v.quanta);
	HELP("collx_netmon_paused_seconds_total", "counter", "Time the priority was paused (merged pause timer).");
	for (i = 0; i < s->npfc; i++)
		fprintf(f, "collx_netmon_paused_seconds_total{dev=\"%s\",dir=\"%s\",kind=\"%s\",prio=\"%u\",source=\"bpf\"} %.9f\n",
			ifname(s->pfc[i].k.ifindex, n), dir_name(s->pfc[i].k.dir),
			s->pfc[i].k.kind == NETMON_PFC ? "pfc" : "pause", s->pfc[i].k.prio,
			pfc_paused_now(&s->pfc[i].v, s->mono) / 1e9);
	{
		/* struct roce_val order */
		static const char *const names[] = { "packets", "bytes", "ce", "ect", "cnp", "nak", "rnr_nak" };

		for (j = 0; j < 7; j++) {
			fprintf(f, "# HELP collx_netmon_roce_%s_total RoCE v2 %s per QP (source bpf tc clsact).\n"
				"# TYPE collx_netmon_roce_%s_total counter\n", names[j], names[j], names[j]);
			for (i = 0; i < s->nroce; i++) {
				const struct roce_row *r = &s->roce[i];
				const __u64 *v = &r->v.packets;

				fprintf(f, "collx_netmon_roce_%s_total{dev=\"%s\",dir=\"%s\",peer=\"%s\",qpn=\"%u\",source=\"bpf\"} %llu\n",
					names[j], ifname(r->k.ifindex, n), dir_name(r->k.dir),
					addr_str(r->k.family, r->k.peer, a, sizeof(a)), r->k.qpn,
					(unsigned long long)v[j]);
			}
		}
	}
	HELP("collx_netmon_drops_total", "counter", "Packets freed by skb:kfree_skb, per reason and call site.");
	for (i = 0; i < s->ndrop; i++)
		fprintf(f, "collx_netmon_drops_total{dev=\"%s\",reason=\"%s\",where=\"%s\",class=\"%s\",roce=\"%s\",source=\"bpf\"} %llu\n",
			ifname(s->drop[i].k.ifindex, n), reason_name(s->drop[i].k.reason),
			ksym_name(s->drop[i].k.location),
			drop_class(s->drop[i].k.reason, s->drop[i].k.location), s->drop[i].k.roce ? "yes" : "no",
			(unsigned long long)s->drop[i].v.packets);
	HELP("collx_netmon_hw_counter", "gauge", "Counters kept by the NIC/driver, labelled with their source.");
	for (i = 0; i < s->hw.n; i++)
		fprintf(f, "collx_netmon_hw_counter{dev=\"%s\",source=\"%s\",name=\"%s\"} %llu\n",
			s->hw.c[i].dev, s->hw.c[i].source, s->hw.c[i].name,
			(unsigned long long)s->hw.c[i].value);
	HELP("collx_op_latency_seconds", "histogram", "collx op latency per comm and collective (log2 buckets).");
	for (i = 0; i < s->nlat; i++) {
		const struct lat_row *r = &s->lat[i];
		uint64_t cum = 0;

		for (j = 0; j < NETMON_HIST_BUCKETS; j++) {
			cum += r->v.hist[j];
			if (!r->v.hist[j] && cum != r->v.ops && cum == 0)
				continue;
			fprintf(f, "collx_op_latency_seconds_bucket{comm=\"%u\",coll=\"%s\",le=\"%.9f\"} %llu\n",
				r->k.comm_id, coll_name(r->k.coll), (double)(1ULL << (j + 1)) / 1e9,
				(unsigned long long)cum);
			if (cum == r->v.ops)
				break;
		}
		fprintf(f, "collx_op_latency_seconds_bucket{comm=\"%u\",coll=\"%s\",le=\"+Inf\"} %llu\n",
			r->k.comm_id, coll_name(r->k.coll), (unsigned long long)r->v.ops);
		fprintf(f, "collx_op_latency_seconds_sum{comm=\"%u\",coll=\"%s\"} %.9f\n",
			r->k.comm_id, coll_name(r->k.coll), r->v.sum_ns / 1e9);
		fprintf(f, "collx_op_latency_seconds_count{comm=\"%u\",coll=\"%s\"} %llu\n",
			r->k.comm_id, coll_name(r->k.coll), (unsigned long long)r->v.ops);
	}
	HELP("collx_op_pauses_total", "counter", "Pause frames received while ops of this comm/collective were in flight.");
	for (i = 0; i < attr.nsum; i++)
		fprintf(f, "collx_op_pauses_total{comm=\"%u\",coll=\"%s\"} %llu\n", attr.sum[i].comm_id,
			coll_name(attr.sum[i].coll), (unsigned long long)attr.sum[i].pauses);
	HELP("collx_op_paused_seconds_total", "counter", "Time finished ops spent paused by PFC/PAUSE.");
	for (i = 0; i < attr.nsum; i++)
		fprintf(f, "collx_op_paused_seconds_total{comm=\"%u\",coll=\"%s\"} %.9f\n", attr.sum[i].comm_id,
			coll_name(attr.sum[i].coll), attr.sum[i].paused_ns / 1e9);
	HELP("collx_op_congested_total", "counter", "Finished ops hit by any congestion event.");
	for (i = 0; i < attr.nsum; i++)
		fprintf(f, "collx_op_congested_total{comm=\"%u\",coll=\"%s\"} %llu\n", attr.sum[i].comm_id,
			coll_name(attr.sum[i].coll), (unsigned long long)attr.sum[i].ops_hit);
	HELP("collx_netmon_events_lost_total", "counter", "Ring-buffer events lost.");
	fprintf(f, "collx_netmon_events_lost_total %llu\n", (unsigned long long)s->lost);
#undef HELP
}

/* ------------------------------------------------------------------ */
/* events */

static const char *ev_name(uint32_t t)
{
	static const char *const n[] = {
		[EV_OP_SUBMIT] = "op_submit", [EV_OP_START] = "op_start",
		[EV_OP_DONE] = "op_done", [EV_CHUNK_POST] = "chunk_post",
		[EV_CHUNK_DONE] = "chunk_done", [EV_COMM_ERROR] = "comm_error",
		[EV_PFC] = "pfc", [EV_PAUSE] = "pause", [EV_CE] = "ce",
		[EV_CNP] = "cnp", [EV_NAK] = "nak", [EV_DROP] = "drop",
	};

	return t < sizeof(n) / sizeof(n[0]) && n[t] ? n[t] : "?";
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct netmon_event *e = data;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	attrib_event(&attr, e);
	if (events_f) {
		char n[IF_NAMESIZE], a[INET6_ADDRSTRLEN];

		fprintf(events_f, "{\"ts\":%llu,\"type\":\"%s\"", (unsigned long long)e->ts, ev_name(e->type));
		if (e->type >= EV_PFC) {
			fprintf(events_f, ",\"dev\":\"%s\",\"dir\":\"%s\"", ifname(e->ifindex, n),
				dir_name(e->dir));
			if (e->type != EV_PFC && e->type != EV_PAUSE)
				fprintf(events_f, ",\"addr\":\"%s\"",
					addr_str(e->family ? e->family : 4, e->addr, a, sizeof(a)));
		} else {
			fprintf(events_f, ",\"comm\":%u,\"op\":%llu,\"coll\":%d,\"peer\":%d,\"phase\":%u,\"status\":%d",
				e->comm_id, (unsigned long long)e->op_id, (int)e->coll, (int)e->peer,
				e->phase, e->status);
		}
		fprintf(events_f, ",\"a\":%llu,\"b\":%llu,\"c\":%llu}\n", (unsigned long long)e->a,
			(unsigned long long)e->b, (unsigned long long)e->c);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* setup */

static int read_u64_file(const char *path, long long *v)
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
	static const char *const base = "/sys/class/net";
	char ib[64];
	struct if_nameindex *ifs = if_nameindex(), *i;

	(void)base;
	for (i = ifs; i && i->if_index && opt.ndevs < MAX_DEVS; i++) {
		hw_rdma_dev_of(i->if_name, ib, sizeof(ib));
		if (ib[0])
			snprintf(opt.devs[opt.ndevs++], IF_NAMESIZE, "%s", i->if_name);
	}
	if (ifs)
		if_freenameindex(ifs);
}

static const char *collx_events_dir(void)
{
	static const char *const d[] = {
		"/sys/kernel/tracing/events/collx",
		"/sys/kernel/debug/tracing/events/collx",
	};
	size_t i;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (!access(d[i], F_OK))
			return d[i];
	return NULL;
}

static int pin_maps(struct netmon_bpf *skel)
{
	struct statfs st;
	struct bpf_map *m;
	char path[256];

	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC) {
		fprintf(stderr, "collx-netmon: /sys/fs/bpf is not a bpf filesystem; maps not pinned "
			"(mount -t bpf bpf /sys/fs/bpf)\n");
		return 0;
	}
	if (mkdir(NETMON_PIN_DIR, 0700) && errno != EEXIST) {
		fprintf(stderr, "collx-netmon: mkdir %s: %s\n", NETMON_PIN_DIR, strerror(errno));
		return -1;
	}
	bpf_object__for_each_map(m, skel->obj) {
		const char *name = bpf_map__name(m);

		if (bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF || strchr(name, '.'))
			continue;
		snprintf(path, sizeof(path), "%s/%s", NETMON_PIN_DIR, name);
		unlink(path);	/* a stale pin from an earlier run: start afresh */
		if (bpf_map__set_pin_path(m, path))
			return -1;
	}
	return 0;
}

static void unpin_maps(struct netmon_bpf *skel)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, skel->obj)
		if (bpf_map__pin_path(m))
			bpf_map__unpin(m, NULL);
	rmdir(NETMON_PIN_DIR);
}

static struct bpf_tc_hook hooks[MAX_DEVS][2];
static struct bpf_tc_opts tcopts[MAX_DEVS][2];
static int attached[MAX_DEVS][2];

static int attach_tc(struct netmon_bpf *skel, int d)
{
	int dir, err;

	for (dir = 0; dir < 2; dir++) {
		struct bpf_tc_hook *h = &hooks[d][dir];
		struct bpf_tc_opts *o = &tcopts[d][dir];

		memset(h, 0, sizeof(*h));
		h->sz = sizeof(*h);
		h->ifindex = opt.ifindex[d];
		h->attach_point = dir == NETMON_RX ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		err = bpf_tc_hook_create(h);
		if (err && err != -EEXIST) {
			fprintf(stderr, "collx-netmon: clsact on %s: %s\n", opt.devs[d], strerror(-err));
			return err;
		}
		memset(o, 0, sizeof(*o));
		o->sz = sizeof(*o);
		o->handle = 0xc011;
		o->priority = 1;	/* first, so filters after it see what it saw */
		o->prog_fd = bpf_program__fd(dir == NETMON_RX ? skel->progs.netmon_tc_ingress :
					     skel->progs.netmon_tc_egress);
		o->flags = BPF_TC_F_REPLACE;
		err = bpf_tc_attach(h, o);
		if (err) {
			fprintf(stderr, "collx-netmon: tc %s on %s: %s\n",
				dir == NETMON_RX ? "ingress" : "egress", opt.devs[d], strerror(-err));
			return err;
		}
		attached[d][dir] = 1;
	}
	return 0;
}

static void detach_tc(void)
{
	int d, dir;

	/* Only our filters: the clsact qdisc may hold other filters. */
	for (d = 0; d < opt.ndevs; d++)
		for (dir = 0; dir < 2; dir++)
			if (attached[d][dir]) {
				tcopts[d][dir].prog_fd = 0;
				tcopts[d][dir].prog_id = 0;
				tcopts[d][dir].flags = 0;
				bpf_tc_detach(&hooks[d][dir], &tcopts[d][dir]);
			}
}

static int explain(int err, const char *what)
{
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr, "collx-netmon: %s: %s: needs CAP_BPF and CAP_NET_ADMIN (run as root)\n",
			what, strerror(-err));
	else
		fprintf(stderr, "collx-netmon: %s: %s\n", what, strerror(-err));
	return 1;
}

/* A tiny HTTP server for --prometheus :PORT. */
static int prom_listen(int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int one = 1, fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void prom_serve(int lfd, const struct snapshot *s)
{
	char req[2048], *body = NULL;
	size_t blen = 0;
	FILE *m;
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (c < 0)
		return;
	if (poll(&p, 1, 1000) > 0 && read(c, req, sizeof(req)) < 0) {
		close(c);
		return;
	}
	m = open_memstream(&body, &blen);
	if (m) {
		print_prom(m, s);
		fclose(m);
		dprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
			"Content-Length: %zu\r\n\r\n", blen);
		if (write(c, body, blen) < 0)
			fprintf(stderr, "collx-netmon: prometheus client: %s\n", strerror(errno));
		free(body);
	}
	close(c);
}

static void prom_write_file(const char *path, const struct snapshot *s)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, getpid());
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "collx-netmon: %s: %s\n", tmp, strerror(errno));
		return;
	}
	print_prom(f, s);
	if (fclose(f) || rename(tmp, path))
		fprintf(stderr, "collx-netmon: %s: %s\n", path, strerror(errno));
}

static FILE *open_out(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "collx-netmon: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interface", required_argument, NULL, 'I' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", optional_argument, NULL, 'j' },
		{ "table", optional_argument, NULL, 't' },
		{ "prometheus", required_argument, NULL, 'p' },
		{ "all-drops", no_argument, NULL, 'a' },
		{ "speed", required_argument, NULL, 's' },
		{ "hw-all", no_argument, NULL, 'H' },
		{ "events", required_argument, NULL, 'e' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "keep-pins", no_argument, NULL, 'k' },
		{ "no-pin", no_argument, NULL, 'P' },
		{ "no-tc", no_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct netmon_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct snapshot snap = {};
	FILE *json_f = NULL, *table_f = NULL;
	const char *evdir;
	uint64_t next, end = 0;
	int c, i, err, prom_fd = -1, ret = 1;
	char *endp;

	while ((c = getopt_long(argc, argv, "I:i:d:j::t::p:as:He:r:kPTvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			if (opt.ndevs == MAX_DEVS || strlen(optarg) >= IF_NAMESIZE) {
				fprintf(stderr, "collx-netmon: too many or too long -I\n");
				return 2;
			}
			snprintf(opt.devs[opt.ndevs++], IF_NAMESIZE, "%s", optarg);
			break;
		case 'i':
		case 'd':
			errno = 0;
			if (c == 'i')
				opt.interval = strtod(optarg, &endp);
			else
				opt.duration = strtod(optarg, &endp);
			if (errno || *endp || (c == 'i' ? opt.interval : opt.duration) < 0) {
				fprintf(stderr, "collx-netmon: bad -%c %s\n", c, optarg);
				return 2;
			}
			break;
		case 'j': opt.json = 1; opt.json_path = optarg; break;
		case 't': opt.table = 1; opt.table_path = optarg; break;
		case 'p': opt.prom_arg = optarg; break;
		case 'a': opt.all_drops = 1; break;
		case 's':
			opt.speed_override = strtoull(optarg, &endp, 10);
			if (*endp || !opt.speed_override) {
				fprintf(stderr, "collx-netmon: bad --speed %s\n", optarg);
				return 2;
			}
			break;
		case 'H': opt.hw_all = 1; break;
		case 'e': opt.events_path = optarg; break;
		case 'r': opt.ready_file = optarg; break;
		case 'k': opt.keep_pins = 1; break;
		case 'P': opt.no_pin = 1; break;
		case 'T': opt.no_tc = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
	if (!opt.json)
		opt.table = 1;

	libbpf_set_print(libbpf_print);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "collx-netmon: this kernel has no BTF (/sys/kernel/btf/vmlinux: %s); "
			"the CO-RE probes need CONFIG_DEBUG_INFO_BTF=y\n", strerror(errno));
		return 1;
	}
	if (!opt.ndevs && !opt.no_tc)
		default_devs();
	if (!opt.ndevs && !opt.no_tc) {
		fprintf(stderr, "collx-netmon: no RDMA netdev found; name one with -I DEV "
			"(or --no-tc)\n");
		return 1;
	}
	for (i = 0; i < opt.ndevs; i++) {
		char p[128];
		long long sp = -1;

		opt.ifindex[i] = if_nametoindex(opt.devs[i]);
		if (!opt.ifindex[i]) {
			fprintf(stderr, "collx-netmon: no netdev %s\n", opt.devs[i]);
			return 1;
		}
		snprintf(p, sizeof(p), "/sys/class/net/%s/speed", opt.devs[i]);
		if (opt.speed_override) {
			opt.mbps[i] = opt.speed_override;
		} else if (!read_u64_file(p, &sp) && sp > 0) {
			opt.mbps[i] = sp;
		} else {
			opt.mbps[i] = 100000;
			opt.speed_assumed[i] = 1;
		}
	}

	vmlinux_btf = btf__load_vmlinux_btf();
	skel = netmon_bpf__open();
	if (!skel) {
		fprintf(stderr, "collx-netmon: opening the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->drops_all = opt.all_drops;
	evdir = collx_events_dir();
	if (!evdir) {
		bpf_program__set_autoload(skel->progs.netmon_op_submit, false);
		bpf_program__set_autoload(skel->progs.netmon_op_start, false);
		bpf_program__set_autoload(skel->progs.netmon_op_done, false);
		bpf_program__set_autoload(skel->progs.netmon_chunk_post, false);
		bpf_program__set_autoload(skel->progs.netmon_chunk_done, false);
		bpf_program__set_autoload(skel->progs.netmon_comm_error, false);
		fprintf(stderr, "collx-netmon: no collx tracepoints (module not loaded): "
			"no op latency or attribution\n");
	}
	if (opt.no_tc) {
		bpf_program__set_autoload(skel->progs.netmon_tc_ingress, false);
		bpf_program__set_autoload(skel->progs.netmon_tc_egress, false);
	}
	if (!opt.no_pin && pin_maps(skel))
		goto out;
	err = netmon_bpf__load(skel);
	if (err) {
		explain(err, "loading the BPF programs");
		goto out;
	}
	for (i = 0; i < opt.ndevs; i++) {
		struct speed_val sv = { .mbps = opt.mbps[i] };
		__u32 idx = opt.ifindex[i];

		bpf_map_update_elem(bpf_map__fd(skel->maps.speed), &idx, &sv, BPF_ANY);
	}
	err = netmon_bpf__attach(skel);
	if (err) {
		explain(err, "attaching the tracepoints");
		goto out;
	}
	for (i = 0; !opt.no_tc && i < opt.ndevs; i++)
		if ((err = attach_tc(skel, i))) {
			explain(err, "attaching tc");
			goto out;
		}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "collx-netmon: ring buffer: %s\n", strerror(errno));
		goto out;
	}
	if (opt.events_path)
		events_f = open_out(opt.events_path);
	if (opt.json)
		json_f = open_out(opt.json_path);
	if (opt.table)
		table_f = open_out(opt.table_path);
	if (opt.prom_arg && opt.prom_arg[0] == ':') {
		prom_fd = prom_listen(atoi(opt.prom_arg + 1));
		if (prom_fd < 0) {
			fprintf(stderr, "collx-netmon: listen on %s: %s\n", opt.prom_arg, strerror(errno));
			goto out;
		}
	}
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	t0_mono = now_ns();
	t0_wall = time(NULL);
	(void)t0_wall;
	if (opt.ready_file) {
		FILE *f = fopen(opt.ready_file, "w");

		if (f)
			fclose(f);
	}
	if (opt.duration > 0)
		end = t0_mono + opt.duration * 1e9;
	next = opt.interval > 0 ? t0_mono + opt.interval * 1e9 : 0;
	while (!stop) {
		struct pollfd p[2] = {
			{ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN },
			{ .fd = prom_fd, .events = POLLIN },
		};
		uint64_t now = now_ns(), wake = now + 200000000ULL;

		if (next && next < wake)
			wake = next;
		if (end && end < wake)
			wake = end;
		poll(p, prom_fd >= 0 ? 2 : 1, wake > now ? (wake - now) / 1000000 + 1 : 0);
		ring_buffer__consume(rb);
		now = now_ns();
		if (prom_fd >= 0 && (p[1].revents & POLLIN)) {
			snapshot_take(skel, &snap);
			prom_serve(prom_fd, &snap);
		}
		if (end && now >= end)
			break;
		if (next && now >= next) {
			snapshot_take(skel, &snap);
			if (table_f)
				print_table(table_f, &snap, 0);
			if (json_f)
				print_json(json_f, &snap, 0);
			if (opt.prom_arg && opt.prom_arg[0] != ':')
				prom_write_file(opt.prom_arg, &snap);
			next += opt.interval * 1e9;
			if (next < now)
				next = now + opt.interval * 1e9;
		}
	}
	ring_buffer__consume(rb);
	snapshot_take(skel, &snap);
	if (table_f)
		print_table(table_f, &snap, 1);
	if (json_f)
		print_json(json_f, &snap, 1);
	if (opt.prom_arg && opt.prom_arg[0] != ':')
		prom_write_file(opt.prom_arg, &snap);
	ret = 0;
out:
	detach_tc();
	ring_buffer__free(rb);
	if (skel && !opt.no_pin && !opt.keep_pins)
		unpin_maps(skel);
	netmon_bpf__destroy(skel);
	if (events_f && events_f != stdout)
		fclose(events_f);
	if (json_f && json_f != stdout)
		fclose(json_f);
	if (table_f && table_f != stdout)
		fclose(table_f);
	if (prom_fd >= 0)
		close(prom_fd);
	return ret;
}
