// SPDX-License-Identifier: GPL-2.0
/* Names for what the maps hold as numbers. */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "main.h"

static struct btf *vmlinux_btf;
/* enum skb_drop_reason, looked up once: a search of all of BTF per drop
 * would not keep up with rxe's frees
 */
static const struct btf_type *drop_reasons;

void names_init(void)
{
	int id;

	vmlinux_btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux_btf)) {
		vmlinux_btf = NULL;
		return;
	}
	id = btf__find_by_name_kind(vmlinux_btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id > 0)
		drop_reasons = btf__type_by_id(vmlinux_btf, id);
}

const char *coll_name(uint32_t coll)
{
	/* enum collx_coll of the uapi */
	static const char *const n[] = {
		"allreduce", "broadcast", "reduce", "allgather",
		"reduce_scatter", "alltoall", "barrier", "send", "recv",
	};
	static char buf[16];

	if (coll == ~0U)
		return "unknown";
	if (coll < sizeof(n) / sizeof(n[0]))
		return n[coll];
	snprintf(buf, sizeof(buf), "coll%u", coll);
	return buf;
}

/* enum skb_drop_reason of the running kernel, from its BTF. */
const char *reason_name(uint32_t reason)
{
	static char buf[64];
	const struct btf_enum *e;
	int i;

	if (drop_reasons) {
		e = btf_enum(drop_reasons);
		for (i = 0; i < btf_vlen(drop_reasons); i++, e++) {
			if ((uint32_t)e->val == reason) {
				const char *s = btf__name_by_offset(vmlinux_btf, e->name_off);

				if (!strncmp(s, "SKB_DROP_REASON_", 16))
					s += 16;
				return s;
			}
		}
	}
	snprintf(buf, sizeof(buf), "reason%u", reason);
	return buf;
}

/*
 * What a kfree_skb was: "qdisc" (a qdisc or tc action dropped it: reason
 * QDISC_DROP/TC_* on 6.12; on 6.1, where reasons are NOT_SPECIFIED, the
 * freeing site in the transmit path or the qdisc's own function), "rxe"
 * (rxe frees every packet it has consumed with kfree_skb: not a drop), or
 * "stack" (any other drop).  Call sites need /proc/kallsyms addresses,
 * which only CAP_SYSLOG reveals.
 */
static const char *classify(uint32_t reason, uint64_t location)
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

/* Every drop event asks: the few (reason, site) pairs are cached. */
const char *drop_class(uint32_t reason, uint64_t location)
{
	static struct { uint64_t location; uint32_t reason; const char *cls; } cache[64];
	unsigned int h = (unsigned int)((location >> 4) ^ reason) % 64;

	if (cache[h].cls && cache[h].location == location && cache[h].reason == reason)
		return cache[h].cls;
	cache[h].location = location;
	cache[h].reason = reason;
	cache[h].cls = classify(reason, location);
	return cache[h].cls;
}

const char *ifname(uint32_t ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

const char *addr_str(uint8_t family, const uint8_t *a, char *buf, size_t len)
{
	inet_ntop(family == 6 ? AF_INET6 : AF_INET, a, buf, len);
	return buf;
}

const char *dir_name(int dir)
{
	return dir == NETMON_RX ? "rx" : "tx";
}

const char *kind_name(int kind)
{
	return kind == NETMON_PFC ? "pfc" : "pause";
}

const char *ev_name(uint32_t t)
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
