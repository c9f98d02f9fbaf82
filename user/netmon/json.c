// SPDX-License-Identifier: GPL-2.0
/*
 * --json: one object per report, one line each; the last has
 * "final": true.  Every row names its source, as the table does.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <time.h>
#include <json-c/json.h>
#include "main.h"

#define SRC_TC		"bpf tc"
#define SRC_DROP	"bpf skb:kfree_skb"
#define SRC_COLLX	"bpf collx tracepoints"

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static json_object *devs_json(void)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < opt.ndevs; i++) {
		json_object *o = json_object_new_object();

		add_str(o, "dev", opt.devs[i].name);
		json_object_object_add(o, "ifindex", json_object_new_int(opt.devs[i].ifindex));
		add_u64(o, "speed_mbps", opt.devs[i].mbps);
		json_object_object_add(o, "speed_assumed",
				       json_object_new_boolean(opt.devs[i].speed_assumed));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *pause_json(const struct snapshot *s)
{
	json_object *a = json_object_new_array();
	char n[IF_NAMESIZE];
	int i;

	for (i = 0; i < s->npfc; i++) {
		const struct pfc_row *r = &s->pfc[i];
		json_object *o = json_object_new_object();

		add_str(o, "dev", ifname(r->k.ifindex, n));
		add_str(o, "dir", dir_name(r->k.dir));
		add_str(o, "kind", kind_name(r->k.kind));
		json_object_object_add(o, "prio", json_object_new_int(r->k.prio));
		add_u64(o, "frames", r->v.frames);
		add_u64(o, "resumes", r->v.resumes);
		add_u64(o, "quanta", r->v.quanta);
		add_u64(o, "paused_ns", pfc_paused_now(&r->v, s->mono));
		add_str(o, "source", SRC_TC);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *roce_json(const struct snapshot *s)
{
	json_object *a = json_object_new_array();
	char n[IF_NAMESIZE], ad[INET6_ADDRSTRLEN];
	int i;

	for (i = 0; i < s->nroce; i++) {
		const struct roce_row *r = &s->roce[i];
		json_object *o = json_object_new_object();

		add_str(o, "dev", ifname(r->k.ifindex, n));
		add_str(o, "dir", dir_name(r->k.dir));
		add_str(o, "peer", addr_str(r->k.family, r->k.peer, ad, sizeof(ad)));
		add_u64(o, "qpn", r->k.qpn);
		add_u64(o, "packets", r->v.packets);
		add_u64(o, "bytes", r->v.bytes);
		add_u64(o, "ect", r->v.ect);
		add_u64(o, "ce", r->v.ce);
		add_u64(o, "cnp", r->v.cnp);
		add_u64(o, "nak", r->v.nak);
		add_u64(o, "rnr_nak", r->v.rnr_nak);
		add_str(o, "source", SRC_TC);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *drops_json(const struct snapshot *s)
{
	json_object *a = json_object_new_array();
	char n[IF_NAMESIZE];
	int i;

	for (i = 0; i < s->ndrop; i++) {
		const struct drop_row *r = &s->drop[i];
		json_object *o = json_object_new_object();

		add_str(o, "dev", ifname(r->k.ifindex, n));
		add_u64(o, "reason", r->k.reason);
		add_str(o, "reason_name", reason_name(r->k.reason));
		add_str(o, "where", ksym_name(r->k.location));
		add_str(o, "class", drop_class(r->k.reason, r->k.location));
		json_object_object_add(o, "roce", json_object_new_boolean(r->k.roce));
		add_u64(o, "packets", r->v.packets);
		add_u64(o, "bytes", r->v.bytes);
		add_str(o, "source", SRC_DROP);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *hw_json(const struct snapshot *s, json_object **notes)
{
	json_object *a = json_object_new_array();
	char name[HW_NAME_LEN + 8];
	int i;

	for (i = 0; i < s->hw.n; i++) {
		const struct hw_counter *c = &s->hw.c[i];
		json_object *o = json_object_new_object();

		add_str(o, "dev", hw_label(c));
		add_str(o, "source", hw_source_name(c->source));
		add_str(o, "name", hw_display_name(c, name, sizeof(name)));
		add_u64(o, "value", c->value);
		json_object_array_add(a, o);
	}
	*notes = json_object_new_array();
	for (i = 0; i < s->hw.nnotes; i++) {
		json_object *o = json_object_new_object();

		add_str(o, "dev", s->hw.notes[i].dev);
		add_str(o, "source", hw_source_name(s->hw.notes[i].source));
		add_str(o, "note", s->hw.notes[i].text);
		json_object_array_add(*notes, o);
	}
	return a;
}

static json_object *latency_json(const struct snapshot *s)
{
	json_object *a = json_object_new_array();
	int i, j;

	for (i = 0; i < s->nlat; i++) {
		const struct lat_row *r = &s->lat[i];
		json_object *o = json_object_new_object(), *h = json_object_new_array();

		add_u64(o, "comm", r->k.comm_id);
		add_str(o, "coll", coll_name(r->k.coll));
		add_u64(o, "ops", r->v.ops);
		add_u64(o, "errors", r->v.errors);
		add_u64(o, "sum_ns", r->v.sum_ns);
		add_u64(o, "max_ns", r->v.max_ns);
		for (j = 0; j < NETMON_HIST_BUCKETS; j++)
			json_object_array_add(h, json_object_new_uint64(r->v.hist[j]));
		json_object_object_add(o, "log2_ns_hist", h);
		add_str(o, "source", SRC_COLLX);
		json_object_array_add(a, o);
	}
	return a;
}

static void add_counts(json_object *o, uint64_t pauses, uint64_t paused_ns, uint64_t cnp,
		       uint64_t ce, uint64_t nak, uint64_t drops)
{
	add_u64(o, "pauses", pauses);
	add_u64(o, "paused_ns", paused_ns);
	add_u64(o, "cnp", cnp);
	add_u64(o, "ce", ce);
	add_u64(o, "nak", nak);
	add_u64(o, "drops", drops);
}

static json_object *summary_json(void)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < attr.nsum; i++) {
		const struct attrib_summary *m = &attr.sum[i];
		json_object *o = json_object_new_object();

		add_u64(o, "comm", m->comm_id);
		add_str(o, "coll", coll_name(m->coll));
		add_u64(o, "ops", m->ops);
		add_u64(o, "ops_hit", m->ops_hit);
		add_counts(o, m->pauses, m->paused_ns, m->cnp, m->ce, m->nak, m->drops);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *op_json(const struct attrib_op *op, uint64_t now)
{
	json_object *o = json_object_new_object(), *peers = json_object_new_array();
	int p;

	add_u64(o, "comm", op->comm_id);
	add_u64(o, "op", op->op_id);
	add_str(o, "coll", coll_name(op->coll));
	json_object_object_add(o, "done", json_object_new_boolean(op->done));
	add_u64(o, "start_ns", op->start_ns ? op->start_ns : op->submit_ns);
	add_u64(o, "end_ns", op->end_ns);
	add_u64(o, "bytes", op->bytes);
	json_object_object_add(o, "status", json_object_new_int(op->status));
	add_counts(o, op->pauses, attrib_paused_now(op, now), op->cnp, op->ce, op->nak,
		   op->drops);
	for (p = 0; p < op->npeers; p++) {
		const struct attrib_peer *pp = &op->peers[p];
		json_object *q = json_object_new_object();

		json_object_object_add(q, "peer", json_object_new_int(
			pp->peer == ATTRIB_NO_PEER ? -1 : (int)pp->peer));
		add_counts(q, pp->pauses, pp->paused_ns, pp->cnp, pp->ce, pp->nak, pp->drops);
		json_object_array_add(peers, q);
	}
	json_object_object_add(o, "peers", peers);
	return o;
}

static json_object *ops_json(uint64_t now)
{
	json_object *a = json_object_new_array();
	const struct attrib_op *o;
	uint64_t k;

	for (k = 0;; k++) {
		if ((int)k < attr.ninflight)
			o = &attr.inflight[k];
		else if (!(o = attrib_recent(&attr, k - attr.ninflight)))
			break;
		json_object_array_add(a, op_json(o, now));
	}
	return a;
}

void json_print(FILE *f, const struct snapshot *s, int final)
{
	json_object *o = json_object_new_object(), *hw, *notes;

	json_object_object_add(o, "time", json_object_new_int64(time(NULL)));
	json_object_object_add(o, "uptime_s", json_object_new_double((s->mono - t0_mono) / 1e9));
	json_object_object_add(o, "final", json_object_new_boolean(final));
	add_str(o, "attach", nm_attach_mode());
	json_object_object_add(o, "devs", devs_json());
	json_object_object_add(o, "pause", pause_json(s));
	json_object_object_add(o, "roce", roce_json(s));
	json_object_object_add(o, "drops", drops_json(s));
	hw = hw_json(s, &notes);
	json_object_object_add(o, "hw", hw);
	json_object_object_add(o, "hw_notes", notes);
	json_object_object_add(o, "latency", latency_json(s));
	json_object_object_add(o, "congestion_by_op", summary_json());
	json_object_object_add(o, "ops", ops_json(s->mono));
	add_u64(o, "events", attr.events);
	add_u64(o, "unattributed", attr.unattributed);
	add_u64(o, "lost", s->lost);
	add_str(o, "kfree_skb_shape", s->kfree_shape == 612 ? "6.12 (rx_sk)" :
		s->kfree_shape == 601 ? "6.1" : "unseen");
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f);
	fputc('\n', f);
	fflush(f);
	json_object_put(o);
}
