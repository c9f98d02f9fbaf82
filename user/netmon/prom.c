// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text exposition (format 0.0.4), after the exposition and
 * naming conventions: one prefix (collx_netmon_), base units (seconds,
 * bytes), _total on counters, one metric per counter (a driver's statistic
 * becomes collx_netmon_ethtool_<name>_total, never a label), node_exporter's
 * "device" label, label sets bounded by the hardware (device, direction,
 * priority, collective, drop reason: no peer addresses, QPs or comm ids,
 * which grow with every job; the JSON output keeps those), escaped label
 * values and HELP text, a histogram with the same fixed buckets in every
 * scrape, and collx_netmon_build_info.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "main.h"

#define P "collx_netmon_"
/* Histogram buckets: 2^10 ns (~1 us) .. 2^35 ns (~34 s), then +Inf. */
#define HIST_LO		10
#define HIST_HI		35

struct labels {
	char s[768];
	size_t n;
};

static void lb_add(struct labels *l, const char *k, const char *v)
{
	size_t room;

	if (l->n + strlen(k) + 4 >= sizeof(l->s))
		return;
	l->n += snprintf(l->s + l->n, sizeof(l->s) - l->n, "%s%s=\"", l->n ? "," : "", k);
	for (; *v && l->n + 4 < sizeof(l->s); v++) {
		room = sizeof(l->s) - l->n;
		if (*v == '\\' || *v == '"')
			l->n += snprintf(l->s + l->n, room, "\\%c", *v);
		else if (*v == '\n')
			l->n += snprintf(l->s + l->n, room, "\\n");
		else
			l->s[l->n++] = *v;
	}
	l->s[l->n++] = '"';
	l->s[l->n] = 0;
}

static void lb_addu(struct labels *l, const char *k, unsigned long long v)
{
	char b[24];

	snprintf(b, sizeof(b), "%llu", v);
	lb_add(l, k, b);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	const char *c;

	fprintf(f, "# HELP %s ", name);
	for (c = help; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", f);
		else if (*c == '\n')
			fputs("\\n", f);
		else
			fputc(*c, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void sample_u(FILE *f, const char *name, const struct labels *l, unsigned long long v)
{
	fprintf(f, "%s{%s} %llu\n", name, l->s, v);
}

static void sample_d(FILE *f, const char *name, const struct labels *l, double v)
{
	fprintf(f, "%s{%s} %.9g\n", name, l->s, v);
}

static void build_info(FILE *f)
{
	struct labels l = {};

	family(f, P "build_info", "gauge",
	       "collx-netmon's version, the libbpf it runs with and how its tc programs are attached.");
	lb_add(&l, "version", COLLX_VERSION);
	lb_add(&l, "libbpf", libbpf_version_string());
	lb_add(&l, "attach", nm_attach_mode());
	sample_u(f, P "build_info", &l, 1);
}

static void pause_metrics(FILE *f, const struct snapshot *s)
{
	static const struct { const char *name, *type, *help; } m[] = {
		{ P "pause_frames_total", "counter",
		  "PFC (802.1Qbb) or PAUSE (802.3x) frames with quanta > 0 seen by tc." },
		{ P "pause_resume_frames_total", "counter",
		  "Pause frames with quanta 0 (resume, XON) seen by tc." },
		{ P "pause_quanta_total", "counter",
		  "Sum of the pause quanta of pause frames (512 bit times each)." },
		{ P "paused_seconds_total", "counter",
		  "Time the priority was paused by received or sent frames (merged pause timer)." },
	};
	char n[IF_NAMESIZE];
	size_t j;
	int i;

	for (j = 0; j < sizeof(m) / sizeof(m[0]); j++) {
		family(f, m[j].name, m[j].type, m[j].help);
		for (i = 0; i < s->npfc; i++) {
			const struct pfc_row *r = &s->pfc[i];
			struct labels l = {};

			lb_add(&l, "device", ifname(r->k.ifindex, n));
			lb_add(&l, "direction", dir_name(r->k.dir));
			lb_add(&l, "kind", kind_name(r->k.kind));
			lb_addu(&l, "priority", r->k.prio);
			if (j == 0)
				sample_u(f, m[j].name, &l, r->v.frames);
			else if (j == 1)
				sample_u(f, m[j].name, &l, r->v.resumes);
			else if (j == 2)
				sample_u(f, m[j].name, &l, r->v.quanta);
			else
				sample_d(f, m[j].name, &l, pfc_paused_now(&r->v, s->mono) / 1e9);
		}
	}
}

/* RoCE v2 per watched netdev and direction: the map's rows (per peer and
 * QP) summed, zeros included so rate() has a start.
 */
static void roce_metrics(FILE *f, const struct snapshot *s)
{
	static const struct { const char *name, *help; } m[] = {
		{ P "roce_packets_total", "RoCE v2 packets (UDP 4791) seen by tc." },
		{ P "roce_bytes_total", "Bytes of RoCE v2 packets seen by tc." },
		{ P "roce_ecn_ce_packets_total", "RoCE v2 packets marked ECN CE (congestion experienced)." },
		{ P "roce_ecn_ect_packets_total", "RoCE v2 packets marked ECT(0) or ECT(1), not CE." },
		{ P "roce_cnp_packets_total", "RoCE v2 congestion notification packets (BTH opcode 0x81)." },
		{ P "roce_nak_packets_total", "RC acknowledgements with a NAK syndrome." },
		{ P "roce_rnr_nak_packets_total", "RC acknowledgements with an RNR NAK syndrome." },
	};
	size_t j;
	int d, dir, i;

	for (j = 0; j < sizeof(m) / sizeof(m[0]); j++) {
		family(f, m[j].name, "counter", m[j].help);
		for (d = 0; d < opt.ndevs; d++)
			for (dir = 0; dir < 2; dir++) {
				struct labels l = {};
				uint64_t v = 0;

				for (i = 0; i < s->nroce; i++) {
					const struct roce_row *r = &s->roce[i];
					/* struct roce_val's order is m[]'s */
					const __u64 *c = &r->v.packets;

					if ((int)r->k.ifindex == opt.devs[d].ifindex && r->k.dir == dir)
						v += c[j];
				}
				lb_add(&l, "device", opt.devs[d].name);
				lb_add(&l, "direction", dir_name(dir));
				sample_u(f, m[j].name, &l, v);
			}
	}
}

struct drop_sum {
	uint32_t ifindex, reason;
	const char *cls;
	int roce;
	uint64_t packets, bytes;
};

static int drop_sum_cmp(const void *a, const void *b)
{
	const struct drop_sum *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	if (strcmp(x->cls, y->cls))
		return strcmp(x->cls, y->cls);
	return x->roce - y->roce;
}

/* Per netdev, reason and class: call sites stay in the JSON and table. */
static void drop_metrics(FILE *f, const struct snapshot *s)
{
	struct drop_sum *d = calloc(s->ndrop ? s->ndrop : 1, sizeof(*d));
	char n[IF_NAMESIZE];
	int i, j, nd = 0, pass;

	if (!d)
		return;
	for (i = 0; i < s->ndrop; i++) {
		const struct drop_row *r = &s->drop[i];
		struct drop_sum k = { .ifindex = r->k.ifindex, .reason = r->k.reason,
				      .cls = drop_class(r->k.reason, r->k.location),
				      .roce = r->k.roce };

		for (j = 0; j < nd; j++)
			if (!drop_sum_cmp(&d[j], &k))
				break;
		if (j == nd)
			d[nd++] = k;
		d[j].packets += r->v.packets;
		d[j].bytes += r->v.bytes;
	}
	qsort(d, nd, sizeof(*d), drop_sum_cmp);
	for (pass = 0; pass < 2; pass++) {
		const char *name = pass ? P "dropped_bytes_total" : P "dropped_packets_total";

		family(f, name, "counter", pass ?
		       "Bytes of packets freed as drops (skb:kfree_skb), by reason and class." :
		       "Packets freed as drops (skb:kfree_skb), by reason and class (qdisc, stack, "
		       "rxe: rxe's own frees of consumed packets).");
		for (i = 0; i < nd; i++) {
			struct labels l = {};

			lb_add(&l, "device", ifname(d[i].ifindex, n));
			lb_add(&l, "reason", reason_name(d[i].reason));
			lb_add(&l, "class", d[i].cls);
			lb_add(&l, "roce", d[i].roce ? "true" : "false");
			sample_u(f, name, &l, pass ? d[i].bytes : d[i].packets);
		}
	}
	free(d);
}

static void metric_name(char *buf, size_t len, const char *prefix, const char *stat)
{
	size_t n = snprintf(buf, len, "%s", prefix), i;

	for (i = 0; stat[i] && n + 7 < len; i++) {
		char c = stat[i];

		buf[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') ? c : '_';
	}
	snprintf(buf + n, len - n, "_total");
}

static int hw_cmp(const void *a, const void *b)
{
	const struct hw_counter *x = *(const struct hw_counter * const *)a;
	const struct hw_counter *y = *(const struct hw_counter * const *)b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if ((c = strcmp(x->netdev, y->netdev)))
		return c;
	if ((c = strcmp(x->rdma_dev, y->rdma_dev)))
		return c;
	if (x->port != y->port)
		return x->port - y->port;
	return x->prio - y->prio;
}

/*
 * One metric per driver statistic and RDMA counter, grouped so every
 * family's samples are contiguous; DCB's PFC state per priority.
 */
static void hw_metrics(FILE *f, const struct snapshot *s)
{
	static const char *const srcs[] = { "ethtool", "dcb", "rdma" };
	const struct hw_counter **c = calloc(s->hw.n ? s->hw.n : 1, sizeof(*c));
	char name[160], last[160] = "";
	int i, n = 0, src, d, k;

	if (!c)
		return;
	for (src = HW_ETHTOOL; src <= HW_RDMA; src++) {
		n = 0;
		for (i = 0; i < s->hw.n; i++)
			if ((int)s->hw.c[i].source == src)
				c[n++] = &s->hw.c[i];
		qsort(c, n, sizeof(*c), hw_cmp);
		last[0] = 0;
		for (i = 0; i < n; i++) {
			struct labels l = {};

			if (src == HW_DCB_PFC)
				snprintf(name, sizeof(name), P "dcb_%s%s", c[i]->name,
					 strcmp(c[i]->name, "pfc_enabled") ? "_total" : "");
			else
				metric_name(name, sizeof(name),
					    src == HW_ETHTOOL ? P "ethtool_" : P "rdma_", c[i]->name);
			if (strcmp(name, last)) {
				char help[256];

				if (src == HW_DCB_PFC && !strcmp(c[i]->name, "pfc_enabled"))
					family(f, name, "gauge", "1 when PFC is enabled on the priority "
					       "(dcbnl ieee_pfc pfc_en).");
				else {
					snprintf(help, sizeof(help), "%s counter %s of the device.",
						 hw_source_name(c[i]->source), c[i]->name);
					family(f, name, "counter", help);
				}
				snprintf(last, sizeof(last), "%s", name);
			}
			lb_add(&l, "device", c[i]->netdev);
			if (src == HW_RDMA) {
				lb_add(&l, "rdma_device", c[i]->rdma_dev);
				lb_addu(&l, "port", c[i]->port);
			}
			if (c[i]->prio >= 0)
				lb_addu(&l, "priority", c[i]->prio);
			sample_u(f, name, &l, c[i]->value);
		}
	}
	free(c);

	family(f, P "hw_source_up", "gauge",
	       "1 when the device offers the counter source (ethtool, dcb, rdma), 0 when it lacks it.");
	for (d = 0; d < opt.ndevs; d++)
		for (src = HW_ETHTOOL; src <= HW_RDMA; src++) {
			struct labels l = {};
			int up = 1;

			for (k = 0; k < s->hw.nnotes; k++) {
				const struct hw_note *no = &s->hw.notes[k];

				/* "no ... statistics" notes: the source works, it is just quiet */
				if ((int)no->source == src && !no->quiet &&
				    !strcmp(no->dev, opt.devs[d].name))
					up = 0;
			}
			lb_add(&l, "device", opt.devs[d].name);
			lb_add(&l, "source", srcs[src]);
			sample_u(f, P "hw_source_up", &l, up);
		}
}

struct coll_sum {
	uint32_t coll;
	uint64_t ops, errors, sum_ns, hist[NETMON_HIST_BUCKETS];
};

/* Op latency per collective (all comms together), fixed buckets. */
static void latency_metrics(FILE *f, const struct snapshot *s)
{
	struct coll_sum c[COLLX_NCOLL + 1] = {};
	int i, j, b, nc = 0;

	for (i = 0; i < s->nlat; i++) {
		const struct lat_val *v = &s->lat[i].v;

		for (j = 0; j < nc; j++)
			if (c[j].coll == s->lat[i].k.coll)
				break;
		if (j == nc) {
			if (nc == COLLX_NCOLL + 1)
				continue;
			c[nc++].coll = s->lat[i].k.coll;
		}
		c[j].ops += v->ops;
		c[j].errors += v->errors;
		c[j].sum_ns += v->sum_ns;
		for (b = 0; b < NETMON_HIST_BUCKETS; b++)
			c[j].hist[b] += v->hist[b];
	}
	family(f, P "op_latency_seconds", "histogram",
	       "collx op latency (collx:op_done duration) per collective, all comms together.");
	for (j = 0; j < nc; j++) {
		uint64_t cum = 0;
		struct labels l = {};
		char le[32];

		lb_add(&l, "collective", coll_name(c[j].coll));
		/* bucket b holds [2^b, 2^(b+1)) ns: le=2^k ns is buckets 0..k-1 */
		for (b = 0; b < HIST_LO - 1; b++)
			cum += c[j].hist[b];
		for (b = HIST_LO; b <= HIST_HI; b++) {
			struct labels lb = l;

			cum += c[j].hist[b - 1];
			snprintf(le, sizeof(le), "%.12g", (double)(1ULL << b) / 1e9);
			lb_add(&lb, "le", le);
			sample_u(f, P "op_latency_seconds_bucket", &lb, cum);
		}
		{
			struct labels lb = l;

			lb_add(&lb, "le", "+Inf");
			sample_u(f, P "op_latency_seconds_bucket", &lb, c[j].ops);
		}
		sample_d(f, P "op_latency_seconds_sum", &l, c[j].sum_ns / 1e9);
		sample_u(f, P "op_latency_seconds_count", &l, c[j].ops);
	}
	family(f, P "op_errors_total", "counter", "collx ops that ended with an error, per collective.");
	for (j = 0; j < nc; j++) {
		struct labels l = {};

		lb_add(&l, "collective", coll_name(c[j].coll));
		sample_u(f, P "op_errors_total", &l, c[j].errors);
	}
}

/* What congestion did to finished ops, per collective. */
static void attrib_metrics(FILE *f, const struct attrib *a)
{
	static const struct { const char *name, *help; } m[] = {
		{ P "op_congested_total", "Finished collx ops hit by any congestion event." },
		{ P "op_pause_frames_total", "Pause frames received while collx ops were in flight." },
		{ P "op_paused_seconds_total", "Time finished collx ops spent paused by PFC/PAUSE." },
		{ P "op_cnp_packets_total", "CNPs seen while collx ops were in flight." },
		{ P "op_ecn_ce_packets_total", "ECN CE marked packets seen while collx ops were in flight." },
		{ P "op_nak_packets_total", "NAKs seen while collx ops were in flight." },
		{ P "op_dropped_packets_total", "Drops seen while collx ops were in flight." },
	};
	struct attrib_summary c[COLLX_NCOLL + 1] = {};
	size_t k;
	int i, j, nc = 0;

	for (i = 0; i < a->nsum; i++) {
		const struct attrib_summary *s = &a->sum[i];

		for (j = 0; j < nc; j++)
			if (c[j].coll == s->coll)
				break;
		if (j == nc) {
			if (nc == COLLX_NCOLL + 1)
				continue;
			c[nc++].coll = s->coll;
		}
		c[j].ops_hit += s->ops_hit;
		c[j].pauses += s->pauses;
		c[j].paused_ns += s->paused_ns;
		c[j].cnp += s->cnp;
		c[j].ce += s->ce;
		c[j].nak += s->nak;
		c[j].drops += s->drops;
	}
	for (k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		family(f, m[k].name, "counter", m[k].help);
		for (j = 0; j < nc; j++) {
			struct labels l = {};
			const uint64_t v[] = { c[j].ops_hit, c[j].pauses, 0, c[j].cnp, c[j].ce,
					       c[j].nak, c[j].drops };

			lb_add(&l, "collective", coll_name(c[j].coll));
			if (k == 2)
				sample_d(f, m[k].name, &l, c[j].paused_ns / 1e9);
			else
				sample_u(f, m[k].name, &l, v[k]);
		}
	}
	family(f, P "congestion_events_total", "counter",
	       "Congestion events (received pauses, CE, CNP, NAK, drops) seen by the attribution.");
	fprintf(f, P "congestion_events_total %llu\n", (unsigned long long)a->events);
	family(f, P "congestion_events_unattributed_total", "counter",
	       "Congestion events that met no collx op in flight.");
	fprintf(f, P "congestion_events_unattributed_total %llu\n",
		(unsigned long long)a->unattributed);
}

void prom_render(FILE *f, const struct snapshot *s, const struct attrib *a)
{
	build_info(f);
	pause_metrics(f, s);
	roce_metrics(f, s);
	drop_metrics(f, s);
	hw_metrics(f, s);
	latency_metrics(f, s);
	attrib_metrics(f, a);
	family(f, P "events_lost_total", "counter",
	       "Ring-buffer events lost (the attribution and --events miss them).");
	fprintf(f, P "events_lost_total %llu\n", (unsigned long long)s->lost);
}

/* For node_exporter's textfile collector: written whole, then renamed. */
int prom_write_textfile(const char *path, const struct snapshot *s, const struct attrib *a)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, getpid());
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "collx-netmon: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	prom_render(f, s, a);
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "collx-netmon: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
