// SPDX-License-Identifier: GPL-2.0
/*
 * collx-netmon: what the fabric did to the collectives.
 *
 *  - tc ingress/egress on the RDMA netdev (a tcx link on 6.6+, a clsact
 *    filter before): 802.1Qbb PFC and 802.3x PAUSE frames, RoCE v2
 *    (UDP 4791) with ECN CE, CNPs and NAKs per QP;
 *  - skb:kfree_skb: drops per netdev, reason and call site, RoCE v2 only
 *    unless drops_all is set;
 *  - collx:* tracepoints (raw: the module has no BTF, and its arguments
 *    are plain integers): op latency per comm and collective, and every
 *    event on the ring buffer so user space can line congestion up with
 *    the ops in flight.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "netmon.h"
#include "core_fixes.bpf.h"

#define TC_ACT_UNSPEC	(-1)
#define ETH_HLEN	14
#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define ETH_P_8021Q	0x8100
#define ETH_P_8021AD	0x88A8
#define IPPROTO_UDP_	17
#define DEFAULT_MBPS	100000

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile bool drops_all = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct pfc_key);
	__type(value, struct pfc_val);
} pfc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct roce_key);
	__type(value, struct roce_val);
} roce SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct drop_key);
	__type(value, struct drop_val);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct speed_val);
} speed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct lat_key);
	__type(value, struct lat_val);
} op_lat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct op_key);
	__type(value, struct op_val);
} ops SEC(".maps");

/* stats[0]: ring-buffer events lost; stats[1]: kfree_skb has rx_sk (6.12
 * shape) as seen by the first drop.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&stats, &idx);

	if (p)
		__sync_fetch_and_add(p, v);
}

static __always_inline struct netmon_event *ev_new(__u32 type)
{
	struct netmon_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_add(0, 1);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts = bpf_ktime_get_ns();
	e->type = type;
	return e;
}

static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* ------------------------------------------------------------------ */
/* Pause frames */

static __always_inline __u64 quanta_ns(__u32 ifindex, __u32 quanta)
{
	struct speed_val *s = bpf_map_lookup_elem(&speed, &ifindex);
	__u64 mbps = s && s->mbps ? s->mbps : DEFAULT_MBPS;

	/* one quantum = 512 bit times */
	return (__u64)quanta * 512 * 1000 / mbps;
}

static __always_inline void pause_account(struct __sk_buff *skb, __u8 dir, __u8 kind,
					  __u8 prio, __u32 quanta, __u64 now)
{
	struct pfc_key k = { .ifindex = skb->ifindex, .dir = dir, .kind = kind, .prio = prio };
	struct pfc_val zero = {}, *v;
	struct netmon_event *e;
	__u64 d = quanta_ns(skb->ifindex, quanta);

	v = lookup_or_init(&pfc, &k, &zero);
	if (!v)
		return;
	if (quanta)
		__sync_fetch_and_add(&v->frames, 1);
	else
		__sync_fetch_and_add(&v->resumes, 1);
	__sync_fetch_and_add(&v->quanta, quanta);
	/*
	 * A pause frame (re)loads the priority's pause timer, a resume (0)
	 * clears it: paused_ns counts each stretch once, up to paused_until.
	 */
	if (v->paused_until > now)
		v->paused_ns -= v->paused_until - now;
	v->paused_ns += d;
	v->paused_until = now + d;
	v->last_ns = now;

	e = ev_new(kind == NETMON_PFC ? EV_PFC : EV_PAUSE);
	if (!e)
		return;
	e->ts = now;
	e->ifindex = skb->ifindex;
	e->dir = dir;
	e->a = prio;
	e->b = quanta;
	e->c = d;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void handle_mac_control(struct __sk_buff *skb, __u8 dir, __u32 off)
{
	struct {
		__be16 opcode;
		__be16 cev;		/* PFC: class-enable vector; PAUSE: quanta */
		__be16 quanta[NETMON_NPRIO];
	} f;
	__u64 now = bpf_ktime_get_ns();
	__u16 cev;
	int p;

	if (bpf_skb_load_bytes(skb, off, &f, 4))
		return;
	if (f.opcode == bpf_htons(MAC_CTRL_PAUSE)) {
		pause_account(skb, dir, NETMON_PAUSE, 0, bpf_ntohs(f.cev), now);
		return;
	}
	if (f.opcode != bpf_htons(MAC_CTRL_PFC) ||
	    bpf_skb_load_bytes(skb, off, &f, sizeof(f)))
		return;
	cev = bpf_ntohs(f.cev);
	for (p = 0; p < NETMON_NPRIO; p++) {
		if (cev & (1 << p))
			pause_account(skb, dir, NETMON_PFC, p, bpf_ntohs(f.quanta[p]), now);
	}
}

/* ------------------------------------------------------------------ */
/* RoCE v2 */

struct bth {
	__u8 opcode;
	__u8 flags;
	__be16 pkey;
	__be32 dqpn;		/* 8 reserved bits, 24-bit destination QP */
	__be32 psn;
};

static __always_inline void handle_roce(struct __sk_buff *skb, __u8 dir, __u32 off,
					__u8 family, __u8 ecn, const __u8 *peer)
{
	struct roce_key k = { .ifindex = skb->ifindex, .dir = dir, .family = family };
	struct roce_val zero = {}, *v;
	struct netmon_event *e;
	struct bth bth;
	__u8 syndrome = 0;
	__u32 type = 0;
	bool nak = false, rnr = false;

	if (bpf_skb_load_bytes(skb, off, &bth, sizeof(bth)))
		return;
	k.qpn = bpf_ntohl(bth.dqpn) & 0xffffff;
	__builtin_memcpy(k.peer, peer, 16);
	if (bth.opcode == BTH_OP_RC_ACK &&
	    !bpf_skb_load_bytes(skb, off + sizeof(bth), &syndrome, 1)) {
		/* AETH syndrome bits 6:5: 00 ACK, 01 RNR NAK, 11 NAK */
		rnr = ((syndrome >> 5) & 3) == 1;
		nak = ((syndrome >> 5) & 3) == 3;
	}
	v = lookup_or_init(&roce, &k, &zero);
	if (!v)
		return;
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, skb->len);
	if (ecn == 3)
		__sync_fetch_and_add(&v->ce, 1);
	else if (ecn)
		__sync_fetch_and_add(&v->ect, 1);
	if (bth.opcode == BTH_OP_CNP)
		__sync_fetch_and_add(&v->cnp, 1);
	if (nak)
		__sync_fetch_and_add(&v->nak, 1);
	if (rnr)
		__sync_fetch_and_add(&v->rnr_nak, 1);
	v->last_ns = bpf_ktime_get_ns();

	if (bth.opcode == BTH_OP_CNP)
		type = EV_CNP;
	else if (nak || rnr)
		type = EV_NAK;
	else if (ecn == 3)
		type = EV_CE;
	if (!type)
		return;
	e = ev_new(type);
	if (!e)
		return;
	e->ifindex = skb->ifindex;
	e->dir = dir;
	e->family = family;
	e->a = k.qpn;
	e->b = type == EV_NAK ? syndrome : bth.opcode;
	e->c = ecn;
	__builtin_memcpy(e->addr, peer, 16);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void handle_ipv4(struct __sk_buff *skb, __u8 dir, __u32 off)
{
	struct iphdr ip;
	struct udphdr udp;
	__u8 peer[16] = {};
	__u32 ihl;

	if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)))
		return;
	if (ip.protocol != IPPROTO_UDP_ || (ip.frag_off & bpf_htons(0x1fff)))
		return;
	ihl = (ip.ihl & 0xf) * 4;
	if (ihl < sizeof(ip))
		return;
	off += ihl;
	if (bpf_skb_load_bytes(skb, off, &udp, sizeof(udp)) ||
	    udp.dest != bpf_htons(ROCE_V2_PORT))
		return;
	__builtin_memcpy(peer, dir == NETMON_RX ? &ip.saddr : &ip.daddr, 4);
	handle_roce(skb, dir, off + sizeof(udp), 4, ip.tos & 3, peer);
}

static __always_inline void handle_ipv6(struct __sk_buff *skb, __u8 dir, __u32 off)
{
	struct ipv6hdr ip6;
	struct udphdr udp;
	__u8 tclass;

	if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)))
		return;
	if (ip6.nexthdr != IPPROTO_UDP_)
		return;
	off += sizeof(ip6);
	if (bpf_skb_load_bytes(skb, off, &udp, sizeof(udp)) ||
	    udp.dest != bpf_htons(ROCE_V2_PORT))
		return;
	tclass = (ip6.priority << 4) | (ip6.flow_lbl[0] >> 4);
	handle_roce(skb, dir, off + sizeof(udp), 6, tclass & 3,
		    dir == NETMON_RX ? (const __u8 *)&ip6.saddr : (const __u8 *)&ip6.daddr);
}

static __always_inline int handle_skb(struct __sk_buff *skb, __u8 dir)
{
	__be16 proto;
	__u32 off = 12;

	if (bpf_skb_load_bytes(skb, off, &proto, 2))
		return TC_ACT_UNSPEC;
	off += 2;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		if (bpf_skb_load_bytes(skb, off + 2, &proto, 2))
			return TC_ACT_UNSPEC;
		off += 4;
	}
	if (proto == bpf_htons(ETH_P_MAC_CONTROL))
		handle_mac_control(skb, dir, off);
	else if (proto == bpf_htons(ETH_P_IP))
		handle_ipv4(skb, dir, off);
	else if (proto == bpf_htons(ETH_P_IPV6))
		handle_ipv6(skb, dir, off);
	return TC_ACT_UNSPEC;
}

SEC("tc")
int netmon_tc_ingress(struct __sk_buff *skb)
{
	return handle_skb(skb, NETMON_RX);
}

SEC("tc")
int netmon_tc_egress(struct __sk_buff *skb)
{
	return handle_skb(skb, NETMON_TX);
}

/* ------------------------------------------------------------------ */
/* Drops */

/* Is this skb a RoCE v2 packet?  From its network header, so it works on
 * either path (rx after eth_type_trans, tx after ip_output).
 */
static __always_inline bool skb_is_roce(struct sk_buff *skb, __u8 *peer)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__be16 proto = BPF_CORE_READ(skb, protocol);
	struct udphdr udp;

	if (!head || nh == (__u16)~0U)
		return false;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + nh) ||
		    ip.protocol != IPPROTO_UDP_ || (ip.frag_off & bpf_htons(0x1fff)))
			return false;
		if (bpf_probe_read_kernel(&udp, sizeof(udp), head + nh + (ip.ihl & 0xf) * 4))
			return false;
		if (udp.dest != bpf_htons(ROCE_V2_PORT))
			return false;
		__builtin_memcpy(peer, &ip.daddr, 4);
		return true;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + nh) ||
		    ip6.nexthdr != IPPROTO_UDP_)
			return false;
		if (bpf_probe_read_kernel(&udp, sizeof(udp), head + nh + sizeof(ip6)))
			return false;
		if (udp.dest != bpf_htons(ROCE_V2_PORT))
			return false;
		__builtin_memcpy(peer, &ip6.daddr, 16);
		return true;
	}
	return false;
}

/*
 * Raw tracepoints: attached by name with BPF_RAW_TRACEPOINT_OPEN, which
 * needs CAP_BPF and CAP_PERFMON only (a classic tracepoint goes through
 * perf_event_open, which Debian's perf_event_paranoid=3 reserves for
 * CAP_SYS_ADMIN) and no tracefs.  kfree_skb's arguments are (skb,
 * location, reason) on 6.1 and 6.12; 6.12 appends rx_sk.
 */
SEC("raw_tp/kfree_skb")
int netmon_kfree_skb(struct bpf_raw_tracepoint_args *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)ctx->args[0];
	struct drop_key k = {};
	struct drop_val zero = {}, *v;
	struct netmon_event *e;
	__u8 peer[16] = {};
	bool roce;
	__u32 idx = 1;
	__u64 *shape;

	k.reason = (__u32)ctx->args[2];
	if (drop_reason_is_consumed(k.reason))
		return 0;
	roce = skb_is_roce(skb, peer);
	if (!roce && !drops_all)
		return 0;
	shape = bpf_map_lookup_elem(&stats, &idx);
	if (shape && !*shape)
		*shape = kfree_skb_has_rx_sk() ? 612 : 601;
	k.ifindex = BPF_CORE_READ(skb, dev, ifindex);
	if (!k.ifindex)
		k.ifindex = BPF_CORE_READ(skb, skb_iif);
	k.location = ctx->args[1];
	k.roce = roce;
	v = lookup_or_init(&drops, &k, &zero);
	if (v) {
		__sync_fetch_and_add(&v->packets, 1);
		__sync_fetch_and_add(&v->bytes, BPF_CORE_READ(skb, len));
	}
	e = ev_new(EV_DROP);
	if (!e)
		return 0;
	e->ifindex = k.ifindex;
	e->a = k.reason;
	e->b = roce;
	e->c = k.location;
	__builtin_memcpy(e->addr, peer, 16);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * collx tracepoints (kmod/trace.h), raw: the programs read the TP_PROTO
 * arguments, in their order, each widened to a u64 (a u32 zero-extended).
 */
#define ARG32(i)	((__u32)ctx->args[i])
#define ARGS32(i)	((__s32)ctx->args[i])

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r < NETMON_HIST_BUCKETS ? r : NETMON_HIST_BUCKETS - 1;
}

/* op_submit(comm_id, op_id, coll, dtype, redop, count, rank, nranks) */
SEC("raw_tp/op_submit")
int netmon_op_submit(struct bpf_raw_tracepoint_args *ctx)
{
	struct op_key k = { .comm_id = ARG32(0), .op_id = ctx->args[1] };
	struct op_val v = {
		.submit_ns = bpf_ktime_get_ns(), .coll = ARG32(2),
		.rank = ARG32(6), .nranks = ARG32(7),
	};
	struct netmon_event *e;

	bpf_map_update_elem(&ops, &k, &v, BPF_ANY);
	e = ev_new(EV_OP_SUBMIT);
	if (!e)
		return 0;
	e->comm_id = k.comm_id;
	e->op_id = k.op_id;
	e->coll = v.coll;
	e->a = ctx->args[5];
	e->b = v.rank;
	e->c = v.nranks;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* op_start(comm_id, op_id, bytes) */
SEC("raw_tp/op_start")
int netmon_op_start(struct bpf_raw_tracepoint_args *ctx)
{
	struct op_key k = { .comm_id = ARG32(0), .op_id = ctx->args[1] };
	struct netmon_event *e;
	struct op_val *v;
	__u64 now = bpf_ktime_get_ns();

	v = bpf_map_lookup_elem(&ops, &k);
	if (v) {
		v->start_ns = now;
		v->bytes = ctx->args[2];
	}
	e = ev_new(EV_OP_START);
	if (!e)
		return 0;
	e->ts = now;
	e->comm_id = k.comm_id;
	e->op_id = k.op_id;
	e->coll = v ? v->coll : ~0U;
	e->a = ctx->args[2];
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* op_done(comm_id, op_id, status, failed_rank, phase, step, bytes, duration_ns) */
SEC("raw_tp/op_done")
int netmon_op_done(struct bpf_raw_tracepoint_args *ctx)
{
	struct op_key k = { .comm_id = ARG32(0), .op_id = ctx->args[1] };
	struct lat_key lk = { .comm_id = k.comm_id, .coll = ~0U };
	struct lat_val zero = {}, *l;
	struct netmon_event *e;
	struct op_val *v;
	__s32 status = ARGS32(2);
	__u64 d = ctx->args[7];
	__u32 b = log2_bucket(d);

	v = bpf_map_lookup_elem(&ops, &k);
	if (v)
		lk.coll = v->coll;
	l = lookup_or_init(&op_lat, &lk, &zero);
	if (l) {
		__sync_fetch_and_add(&l->ops, 1);
		if (status)
			__sync_fetch_and_add(&l->errors, 1);
		__sync_fetch_and_add(&l->sum_ns, d);
		if (d > l->max_ns)
			l->max_ns = d;
		/* keep the bound check the verifier needs */
		asm volatile("" : "+r"(b));
		if (b < NETMON_HIST_BUCKETS)
			__sync_fetch_and_add(&l->hist[b], 1);
	}
	e = ev_new(EV_OP_DONE);
	if (e) {
		e->comm_id = k.comm_id;
		e->op_id = k.op_id;
		e->coll = lk.coll;
		e->status = status;
		e->peer = ARG32(3);
		e->phase = ARG32(4);
		e->a = ctx->args[6];
		e->b = d;
		e->c = ARG32(5);
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&ops, &k);
	return 0;
}

/* chunk_post/chunk_done(comm_id, op_id, peer, phase, step, slice, bytes) */
static __always_inline int chunk_event(struct bpf_raw_tracepoint_args *ctx, __u32 type)
{
	struct netmon_event *e = ev_new(type);

	if (!e)
		return 0;
	e->comm_id = ARG32(0);
	e->op_id = ctx->args[1];
	e->peer = ARG32(2);
	e->phase = ARG32(3);
	e->a = ARG32(4);
	e->b = ARG32(5);
	e->c = ARG32(6);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/chunk_post")
int netmon_chunk_post(struct bpf_raw_tracepoint_args *ctx)
{
	return chunk_event(ctx, EV_CHUNK_POST);
}

SEC("raw_tp/chunk_done")
int netmon_chunk_done(struct bpf_raw_tracepoint_args *ctx)
{
	return chunk_event(ctx, EV_CHUNK_DONE);
}

/* comm_error(comm_id, op_id, peer, phase, err) */
SEC("raw_tp/comm_error")
int netmon_comm_error(struct bpf_raw_tracepoint_args *ctx)
{
	struct netmon_event *e = ev_new(EV_COMM_ERROR);

	if (!e)
		return 0;
	e->comm_id = ARG32(0);
	e->op_id = ctx->args[1];
	e->peer = ARG32(2);
	e->phase = ARG32(3);
	e->status = ARGS32(4);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
