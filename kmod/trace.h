/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx tracepoints: collx:op_submit, op_start, op_done, chunk_post,
 * chunk_done, comm_error.
 *
 * Objects are named by stable ids (comm_id is module-wide, op_id is unique
 * within its comm's fd), never by pointers, so tools such as collx-netmon
 * can join events.  Every field layout is ABI for those tools: add fields
 * at the end only.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM collx

#if !defined(COLLX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define COLLX_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(op_submit,
	TP_PROTO(u32 comm_id, u64 op_id, u32 coll, u32 dtype, u32 redop,
		 u64 count, u32 rank, u32 nranks),
	TP_ARGS(comm_id, op_id, coll, dtype, redop, count, rank, nranks),
	TP_STRUCT__entry(
		__field(u64, op_id)
		__field(u64, count)
		__field(u32, comm_id)
		__field(u32, coll)
		__field(u32, dtype)
		__field(u32, redop)
		__field(u32, rank)
		__field(u32, nranks)
	),
	TP_fast_assign(
		__entry->op_id = op_id;
		__entry->count = count;
		__entry->comm_id = comm_id;
		__entry->coll = coll;
		__entry->dtype = dtype;
		__entry->redop = redop;
		__entry->rank = rank;
		__entry->nranks = nranks;
	),
	TP_printk("comm=%u op=%llu coll=%u dtype=%u redop=%u count=%llu rank=%u/%u",
		  __entry->comm_id, __entry->op_id, __entry->coll,
		  __entry->dtype, __entry->redop, __entry->count,
		  __entry->rank, __entry->nranks)
);

TRACE_EVENT(op_start,
	TP_PROTO(u32 comm_id, u64 op_id, u64 bytes),
	TP_ARGS(comm_id, op_id, bytes),
	TP_STRUCT__entry(
		__field(u64, op_id)
		__field(u64, bytes)
		__field(u32, comm_id)
	),
	TP_fast_assign(
		__entry->op_id = op_id;
		__entry->bytes = bytes;
		__entry->comm_id = comm_id;
	),
	TP_printk("comm=%u op=%llu bytes=%llu",
		  __entry->comm_id, __entry->op_id, __entry->bytes)
);

TRACE_EVENT(op_done,
	TP_PROTO(u32 comm_id, u64 op_id, s32 status, u32 failed_rank,
		 u32 phase, u32 step, u64 bytes, u64 duration_ns),
	TP_ARGS(comm_id, op_id, status, failed_rank, phase, step, bytes,
		duration_ns),
	TP_STRUCT__entry(
		__field(u64, op_id)
		__field(u64, bytes)
		__field(u64, duration_ns)
		__field(u32, comm_id)
		__field(s32, status)
		__field(u32, failed_rank)
		__field(u32, phase)
		__field(u32, step)
	),
	TP_fast_assign(
		__entry->op_id = op_id;
		__entry->bytes = bytes;
		__entry->duration_ns = duration_ns;
		__entry->comm_id = comm_id;
		__entry->status = status;
		__entry->failed_rank = failed_rank;
		__entry->phase = phase;
		__entry->step = step;
	),
	TP_printk("comm=%u op=%llu status=%d failed_rank=%d phase=%u step=%u bytes=%llu ns=%llu",
		  __entry->comm_id, __entry->op_id, __entry->status,
		  (int)__entry->failed_rank, __entry->phase, __entry->step,
		  __entry->bytes, __entry->duration_ns)
);

DECLARE_EVENT_CLASS(chunk_class,
	TP_PROTO(u32 comm_id, u64 op_id, u32 peer, u32 phase, u32 step,
		 u32 slice, u32 bytes),
	TP_ARGS(comm_id, op_id, peer, phase, step, slice, bytes),
	TP_STRUCT__entry(
		__field(u64, op_id)
		__field(u32, comm_id)
		__field(u32, peer)
		__field(u32, phase)
		__field(u32, step)
		__field(u32, slice)
		__field(u32, bytes)
	),
	TP_fast_assign(
		__entry->op_id = op_id;
		__entry->comm_id = comm_id;
		__entry->peer = peer;
		__entry->phase = phase;
		__entry->step = step;
		__entry->slice = slice;
		__entry->bytes = bytes;
	),
	TP_printk("comm=%u op=%llu peer=%u phase=%u step=%u slice=%u bytes=%u",
		  __entry->comm_id, __entry->op_id, __entry->peer,
		  __entry->phase, __entry->step, __entry->slice,
		  __entry->bytes)
);

/* A chunk handed to the QP towards @peer. */
DEFINE_EVENT(chunk_class, chunk_post,
	TP_PROTO(u32 comm_id, u64 op_id, u32 peer, u32 phase, u32 step,
		 u32 slice, u32 bytes),
	TP_ARGS(comm_id, op_id, peer, phase, step, slice, bytes));

/* A chunk from @peer arrived and was reduced or copied. */
DEFINE_EVENT(chunk_class, chunk_done,
	TP_PROTO(u32 comm_id, u64 op_id, u32 peer, u32 phase, u32 step,
		 u32 slice, u32 bytes),
	TP_ARGS(comm_id, op_id, peer, phase, step, slice, bytes));

TRACE_EVENT(comm_error,
	TP_PROTO(u32 comm_id, u64 op_id, u32 peer, u32 phase, s32 err),
	TP_ARGS(comm_id, op_id, peer, phase, err),
	TP_STRUCT__entry(
		__field(u64, op_id)
		__field(u32, comm_id)
		__field(u32, peer)
		__field(u32, phase)
		__field(s32, err)
	),
	TP_fast_assign(
		__entry->op_id = op_id;
		__entry->comm_id = comm_id;
		__entry->peer = peer;
		__entry->phase = phase;
		__entry->err = err;
	),
	TP_printk("comm=%u op=%llu peer=%d phase=%u err=%d",
		  __entry->comm_id, __entry->op_id, (int)__entry->peer,
		  __entry->phase, __entry->err)
);

#endif /* COLLX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
