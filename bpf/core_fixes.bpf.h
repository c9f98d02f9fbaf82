/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel differences the probes cope with (as bcc libbpf-tools do), so one
 * object loads on 6.1 and 6.12.
 *
 * skb:kfree_skb: the raw tracepoint's arguments are (skb, location,
 * reason) on 6.1 and 6.12, where rx_sk comes fourth; its event record
 * gained rx_sk too.  Which shape runs is told by CO-RE, from the running
 * kernel's BTF of the record.
 */
#ifndef COLLX_CORE_FIXES_BPF_H
#define COLLX_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/* 6.12 shape: only the field this file needs. */
struct trace_event_raw_kfree_skb___rx_sk {
	void *rx_sk;
} __attribute__((preserve_access_index));

static __always_inline bool kfree_skb_has_rx_sk(void)
{
	return bpf_core_field_exists(struct trace_event_raw_kfree_skb___rx_sk, rx_sk);
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
