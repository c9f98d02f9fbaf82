// SPDX-License-Identifier: GPL-2.0
/*
 * The live table: totals since start beside per-interval rates (the delta
 * to the previous report over its length; "-" in the first report).  On a
 * terminal each report replaces the previous one.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "main.h"

/* A per-second rate of @cur - @old, "-" without a previous report. */
static const char *rate(char *buf, size_t len, double dt, int have, uint64_t cur, uint64_t old)
{
	if (!have || dt <= 0)
		return "-";
	snprintf(buf, len, "%.1f", cur >= old ? (cur - old) / dt : 0.0);
	return buf;
}

static void pause_rows(FILE *f, const struct snapshot *s, const struct snapshot *p, double dt)
{
	char n[IF_NAMESIZE], r1[24], r2[24];
	int i;

	fprintf(f, "\nPAUSE FRAMES                                                   [source: bpf tc]\n");
	fprintf(f, "%-8s %-3s %-5s %4s %9s %9s %9s %14s %12s %8s\n", "DEV", "DIR", "KIND", "PRIO",
		"FRAMES", "FRAMES/s", "RESUMES", "QUANTA", "PAUSED(ms)", "PAUSED%");
	for (i = 0; i < s->npfc; i++) {
		const struct pfc_row *r = &s->pfc[i];
		const struct pfc_val *o = p ? snapshot_pfc(p, &r->k) : NULL;
		uint64_t now = pfc_paused_now(&r->v, s->mono);
		uint64_t was = o ? pfc_paused_now(o, p->mono) : 0;

		if (p && dt > 0)
			snprintf(r2, sizeof(r2), "%.1f", now >= was ? (now - was) / (dt * 1e7) : 0.0);
		fprintf(f, "%-8s %-3s %-5s %4u %9llu %9s %9llu %14llu %12.3f %8s\n",
			ifname(r->k.ifindex, n), dir_name(r->k.dir), kind_name(r->k.kind), r->k.prio,
			(unsigned long long)r->v.frames,
			rate(r1, sizeof(r1), dt, p != NULL, r->v.frames, o ? o->frames : 0),
			(unsigned long long)r->v.resumes, (unsigned long long)r->v.quanta,
			now / 1e6, p && dt > 0 ? r2 : "-");
	}
	if (!s->npfc)
		fprintf(f, "  (none)\n");
}

static void roce_rows(FILE *f, const struct snapshot *s, const struct snapshot *p, double dt)
{
	char n[IF_NAMESIZE], a[INET6_ADDRSTRLEN], r1[24], r2[24], r3[24];
	int i;

	fprintf(f, "\nROCE V2 (UDP 4791) PER QP                                      [source: bpf tc]\n");
	fprintf(f, "%-8s %-3s %-15s %-8s %9s %12s %9s %8s %7s %7s %7s %7s %5s %5s\n",
		"DEV", "DIR", "PEER", "QPN", "PACKETS", "BYTES", "PKTS/s", "MB/s", "ECT", "CE",
		"CE/s", "CNP", "NAK", "RNR");
	for (i = 0; i < s->nroce; i++) {
		const struct roce_row *r = &s->roce[i];
		const struct roce_val *o = p ? snapshot_roce(p, &r->k) : NULL;
		const char *mb = rate(r2, sizeof(r2), dt * 1e6, p != NULL, r->v.bytes,
				      o ? o->bytes : 0);

		fprintf(f, "%-8s %-3s %-15s 0x%06x %9llu %12llu %9s %8s %7llu %7llu %7s %7llu %5llu %5llu\n",
			ifname(r->k.ifindex, n), dir_name(r->k.dir),
			addr_str(r->k.family, r->k.peer, a, sizeof(a)), r->k.qpn,
			(unsigned long long)r->v.packets, (unsigned long long)r->v.bytes,
			rate(r1, sizeof(r1), dt, p != NULL, r->v.packets, o ? o->packets : 0), mb,
			(unsigned long long)r->v.ect, (unsigned long long)r->v.ce,
			rate(r3, sizeof(r3), dt, p != NULL, r->v.ce, o ? o->ce : 0),
			(unsigned long long)r->v.cnp, (unsigned long long)r->v.nak,
			(unsigned long long)r->v.rnr_nak);
	}
	if (!s->nroce)
		fprintf(f, "  (none)\n");
}

static void drop_rows(FILE *f, const struct snapshot *s, const struct snapshot *p, double dt)
{
	char n[IF_NAMESIZE], r1[24];
	int i;

	fprintf(f, "\nDROPS (%s)%*s[source: bpf skb:kfree_skb]\n",
		opt.all_drops ? "all traffic" : "RoCE v2 flows", opt.all_drops ? 36 : 34, "");
	fprintf(f, "%-8s %-24s %-28s %-6s %4s %9s %9s %12s\n", "DEV", "REASON", "WHERE", "CLASS",
		"ROCE", "PACKETS", "PKTS/s", "BYTES");
	for (i = 0; i < s->ndrop; i++) {
		const struct drop_row *r = &s->drop[i];
		const struct drop_val *o = p ? snapshot_drop(p, &r->k) : NULL;

		fprintf(f, "%-8s %-24s %-28s %-6s %4s %9llu %9s %12llu\n", ifname(r->k.ifindex, n),
			reason_name(r->k.reason), ksym_name(r->k.location),
			drop_class(r->k.reason, r->k.location), r->k.roce ? "yes" : "no",
			(unsigned long long)r->v.packets,
			rate(r1, sizeof(r1), dt, p != NULL, r->v.packets, o ? o->packets : 0),
			(unsigned long long)r->v.bytes);
	}
	if (!s->ndrop)
		fprintf(f, "  (none)\n");
}

static const struct hw_counter *hw_find(const struct snapshot *p, const struct hw_counter *c)
{
	int i;

	for (i = 0; p && i < p->hw.n; i++) {
		const struct hw_counter *o = &p->hw.c[i];

		if (o->source == c->source && o->prio == c->prio && o->port == c->port &&
		    !strcmp(o->name, c->name) && !strcmp(o->netdev, c->netdev) &&
		    !strcmp(o->rdma_dev, c->rdma_dev))
			return o;
	}
	return NULL;
}

static void hw_rows(FILE *f, const struct snapshot *s, const struct snapshot *p, double dt)
{
	char name[HW_NAME_LEN + 8], r1[24];
	int i;

	fprintf(f, "\nHARDWARE COUNTERS\n%-10s %-18s %-32s %14s %10s\n", "DEV", "SOURCE", "NAME",
		"VALUE", "/s");
	for (i = 0; i < s->hw.n; i++) {
		const struct hw_counter *c = &s->hw.c[i];
		const struct hw_counter *o = hw_find(p, c);

		if (!c->value && !opt.hw_all)
			continue;
		fprintf(f, "%-10s %-18s %-32s %14llu %10s\n", hw_label(c), hw_source_name(c->source),
			hw_display_name(c, name, sizeof(name)), (unsigned long long)c->value,
			c->source == HW_DCB_PFC && c->prio >= 0 && !strcmp(c->name, "pfc_enabled") ?
			"" : rate(r1, sizeof(r1), dt, o != NULL, c->value, o ? o->value : 0));
	}
	for (i = 0; i < s->hw.nnotes; i++)
		fprintf(f, "%-10s %-18s %s\n", s->hw.notes[i].dev,
			hw_source_name(s->hw.notes[i].source), s->hw.notes[i].text);
}

static void latency_rows(FILE *f, const struct snapshot *s, const struct snapshot *p, double dt)
{
	char r1[24];
	int i;

	fprintf(f, "\nCOLLECTIVES: LATENCY PER COMM AND OP                 [source: bpf collx tracepoints]\n");
	fprintf(f, "%-6s %-14s %7s %7s %5s %10s %10s %10s %10s\n", "COMM", "COLL", "OPS", "OPS/s",
		"ERR", "AVG(us)", "P50(us)", "P99(us)", "MAX(us)");
	for (i = 0; i < s->nlat; i++) {
		const struct lat_row *r = &s->lat[i];
		const struct lat_val *o = p ? snapshot_lat(p, &r->k) : NULL;

		fprintf(f, "%-6u %-14s %7llu %7s %5llu %10.1f %10.1f %10.1f %10.1f\n",
			r->k.comm_id, coll_name(r->k.coll), (unsigned long long)r->v.ops,
			rate(r1, sizeof(r1), dt, p != NULL, r->v.ops, o ? o->ops : 0),
			(unsigned long long)r->v.errors,
			r->v.ops ? r->v.sum_ns / 1e3 / r->v.ops : 0.0,
			hist_quantile(&r->v, 0.5) / 1e3, hist_quantile(&r->v, 0.99) / 1e3,
			r->v.max_ns / 1e3);
	}
	if (!s->nlat)
		fprintf(f, "  (no collx ops seen)\n");
}

static void congestion_rows(FILE *f)
{
	int i, j, shown;
	uint64_t k;

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
	fprintf(f, "\nCONGESTED OPS (in flight, then the most recent finished; at most %d)\n", opt.top);
	fprintf(f, "%-6s %-8s %-14s %10s %10s %-5s %7s %11s %5s %5s %5s %5s\n", "COMM", "OP",
		"COLL", "START(ms)", "DUR(ms)", "PEER", "PAUSES", "PAUSED(ms)", "CNP", "CE", "NAK", "DROP");
	shown = 0;
	for (k = 0; shown < opt.top; k++) {
		const struct attrib_op *o;
		uint64_t b;
		char dur[24];

		if ((int)k < attr.ninflight)
			o = &attr.inflight[k];
		else if (!(o = attrib_recent(&attr, k - attr.ninflight)))
			break;
		if (!o->pauses && !o->paused_ns && !o->cnp && !o->ce && !o->nak && !o->drops)
			continue;
		b = o->start_ns ? o->start_ns : o->submit_ns;
		if (o->done)
			snprintf(dur, sizeof(dur), "%.3f", (o->end_ns - b) / 1e6);
		else
			snprintf(dur, sizeof(dur), "running");
		for (j = 0; j < o->npeers; j++) {
			const struct attrib_peer *pp = &o->peers[j];
			char peer[12];

			if (pp->peer == ATTRIB_NO_PEER)
				snprintf(peer, sizeof(peer), "-");
			else
				snprintf(peer, sizeof(peer), "%u", pp->peer);
			fprintf(f, "%-6u %-8llu %-14s %10.3f %10s %-5s %7llu %11.3f %5llu %5llu %5llu %5llu\n",
				o->comm_id, (unsigned long long)o->op_id, coll_name(o->coll),
				b > t0_mono ? (b - t0_mono) / 1e6 : 0.0, dur, peer,
				(unsigned long long)pp->pauses, pp->paused_ns / 1e6,
				(unsigned long long)pp->cnp, (unsigned long long)pp->ce,
				(unsigned long long)pp->nak, (unsigned long long)pp->drops);
		}
		shown++;
	}
	if (!shown)
		fprintf(f, "  (none)\n");
}

void table_print(FILE *f, const struct snapshot *s, const struct snapshot *prev, int final)
{
	const struct snapshot *p = prev && prev->mono ? prev : NULL;
	double dt = p ? (s->mono - p->mono) / 1e9 : 0;
	char host[64] = "";
	struct utsname u;
	int i;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	if (f == stdout && isatty(STDOUT_FILENO) && !final)
		fputs("\033[H\033[2J", f);
	fprintf(f, "collx-netmon on %s, kernel %s, tc via %s, %.1f s%s", host, u.release,
		nm_attach_mode(), (s->mono - t0_mono) / 1e9, final ? " (final)" : "");
	if (p)
		fprintf(f, ", rates over the last %.1f s", dt);
	fputc('\n', f);
	for (i = 0; i < opt.ndevs; i++)
		fprintf(f, "  %s: ifindex %d, %llu Mb/s%s\n", opt.devs[i].name, opt.devs[i].ifindex,
			(unsigned long long)opt.devs[i].mbps,
			opt.devs[i].speed_assumed ? " (assumed: the netdev reports no speed)" : "");
	pause_rows(f, s, p, dt);
	roce_rows(f, s, p, dt);
	drop_rows(f, s, p, dt);
	hw_rows(f, s, p, dt);
	latency_rows(f, s, p, dt);
	congestion_rows(f);
	fprintf(f, "\nevents: %llu congestion events, %llu with no op in flight, %llu lost\n",
		(unsigned long long)attr.events, (unsigned long long)attr.unattributed,
		(unsigned long long)s->lost);
	fflush(f);
}
