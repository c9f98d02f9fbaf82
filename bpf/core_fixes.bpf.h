/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel differences the probes cope with (as bcc libbpf-tools do), so one
 * object loads on 6.1 and 6.12.
 *
 * skb:kfree_skb: 6.1 records (skbaddr, location, protocol, reason); 6.12
 * inserts rx_sk before protocol.  The event struct comes from vmlinux.h with
 * preserve_access_index, so every field read below is relocated to the
 * running kernel's offset; rx_sk is only read where it exists.
 */
#ifndef COLLX_CORE_FIXES_BPF_H
#define COLLX_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/* 6.12 shape: only the field this file needs. */
struct trace_event_raw_kfree_skb___rx_sk {
	void *rx_sk;
} __attribute__((preserve_access_index));

static __always_inline bool kfree_skb_has_rx_sk(void *ctx)
{
	struct trace_event_raw_kfree_skb___rx_sk *t = ctx;

	return bpf_core_field_exists(t->rx_sk);
}

/* SKB_CONSUMED is not a drop; older kernels have no such value (and never
 * pass it to this tracepoint).
 */
static __always_inline bool drop_reason_is_consumed(__u32 reason)
{
	if (bpf_core_enum_value_exists(enum skb_drop_reason, SKB_CONSUMED))
		return reason == bpf_core_enum_value(enum skb_drop_reason, SKB_CONSUMED);
	return false;
}

#endif /* COLLX_CORE_FIXES_BPF_H */
