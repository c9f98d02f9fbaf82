/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx-netmon: map keys, values and ring-buffer events shared by
 * netmon.bpf.c and user/netmon.  Every map is pinned under /sys/fs/bpf/collx/
 * and carries BTF, so `bpftool map dump pinned /sys/fs/bpf/collx/<map>`
 * prints these structs by field name.
 */
#ifndef COLLX_NETMON_H
#define COLLX_NETMON_H

#define NETMON_PIN_DIR		"/sys/fs/bpf/collx"

#define ROCE_V2_PORT		4791
#define ETH_P_MAC_CONTROL	0x8808
#define MAC_CTRL_PAUSE		0x0001	/* 802.3x */
#define MAC_CTRL_PFC		0x0101	/* 802.1Qbb */
#define BTH_OP_CNP		0x81
#define BTH_OP_RC_ACK		0x11
#define NETMON_NPRIO		8
#define NETMON_HIST_BUCKETS	40	/* log2(ns): 1 ns .. ~18 min */

enum netmon_dir {
	NETMON_RX = 0,		/* tc ingress */
	NETMON_TX = 1,		/* tc egress */
};

enum netmon_pause_kind {
	NETMON_PFC = 0,		/* 802.1Qbb, per priority */
	NETMON_PAUSE = 1,	/* 802.3x, link-wide (prio 0) */
};

/* pfc map: one entry per netdev, direction, kind and priority. */
struct pfc_key {
	__u32 ifindex;
	__u8 dir;
	__u8 kind;
	__u8 prio;
	__u8 pad;
};

struct pfc_val {
	__u64 frames;		/* pause frames with quanta > 0 */
	__u64 resumes;		/* frames with quanta == 0 (XON) */
	__u64 quanta;		/* sum of the quanta of the pause frames */
	__u64 paused_ns;	/* merged time this priority was paused */
	__u64 paused_until;	/* CLOCK_MONOTONIC end of the current pause */
	__u64 last_ns;
};

/* roce map: RoCE v2 (UDP 4791) per netdev, direction, peer and QP. */
struct roce_key {
	__u32 ifindex;
	__u8 dir;
	__u8 family;		/* 4 or 6 */
	__u16 pad;
	__u32 qpn;		/* BTH destination QP */
	__u8 peer[16];		/* remote address: src on rx, dst on tx */
};

struct roce_val {
	__u64 packets;
	__u64 bytes;
	__u64 ce;		/* IP ECN == 0b11 */
	__u64 ect;		/* IP ECN == ECT(0) or ECT(1) */
	__u64 cnp;		/* BTH opcode 0x81 */
	__u64 nak;		/* RC ACK with AETH NAK syndrome */
	__u64 rnr_nak;		/* RC ACK with AETH RNR NAK syndrome */
	__u64 last_ns;
};

/* drops map: skb:kfree_skb per netdev, reason and call site. */
struct drop_key {
	__u32 ifindex;
	__u32 reason;		/* enum skb_drop_reason of the running kernel */
	__u64 location;		/* kernel address that freed the skb */
	__u8 roce;		/* 1: a RoCE v2 packet */
	__u8 pad[7];
};

struct drop_val {
	__u64 packets;
	__u64 bytes;
};

/* speed map (written by user space): ifindex -> link speed in Mb/s, so the
 * BPF side turns pause quanta (512 bit times each) into nanoseconds.
 */
struct speed_val {
	__u64 mbps;
};

/* op_lat map: collx op latency, per comm and collective type. */
struct lat_key {
	__u32 comm_id;
	__u32 coll;
};

struct lat_val {
	__u64 ops;
	__u64 errors;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 hist[NETMON_HIST_BUCKETS];	/* bucket b: [2^b, 2^(b+1)) ns */
};

/* ops map: ops in flight (op_submit .. op_done). */
struct op_key {
	__u32 comm_id;
	__u32 pad;
	__u64 op_id;
};

struct op_val {
	__u64 submit_ns;
	__u64 start_ns;
	__u64 bytes;
	__u32 coll;
	__u32 rank;
	__u32 nranks;
	__u32 pad;
};

/* Ring-buffer events: what the attribution in user space consumes. */
enum netmon_ev_type {
	EV_OP_SUBMIT = 1,
	EV_OP_START,
	EV_OP_DONE,
	EV_CHUNK_POST,
	EV_CHUNK_DONE,
	EV_COMM_ERROR,
	EV_PFC,			/* a = prio, b = quanta, c = pause ns */
	EV_PAUSE,		/* 802.3x: b = quanta, c = pause ns */
	EV_CE,			/* a = qpn, b = BTH opcode */
	EV_CNP,			/* a = qpn */
	EV_NAK,			/* a = qpn, b = AETH syndrome */
	EV_DROP,		/* a = reason, b = 1 if RoCE, c = location */
};

struct netmon_event {
	__u64 ts;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 type;
	__u32 ifindex;		/* packet events */
	__u8 dir;
	__u8 family;
	__u16 pad;
	__u32 comm_id;		/* collx events */
	__u64 op_id;
	__u64 a, b, c;		/* per type, see enum netmon_ev_type */
	__u32 peer;		/* collx chunk events: peer rank */
	__u32 phase;
	__s32 status;
	__u32 coll;
	__u8 addr[16];		/* packet events: remote address */
};

#endif /* COLLX_NETMON_H */
