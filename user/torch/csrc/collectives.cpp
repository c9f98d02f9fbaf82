// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// ProcessGroupCollx: the collectives collx runs as one op each (and
// allreduce_coalesced, a group of them).
#include "call.hpp"
#include "process_group.hpp"
#include "types.hpp"

namespace collx_torch {

namespace {

void checkRoot(int64_t root, int size, const char* what) {
  TORCH_CHECK(root >= 0 && root < size, "collx ", what, ": root ", root,
              " is not a rank of 0..", size - 1);
}

// The send buffer of an allgather (@in into @out, part @rank) or the
// receive buffer of a reduce-scatter: collx takes it in place when it is
// exactly part @rank of the big buffer, and refuses any other overlap;
// torch allows that, so give collx a copy then.
at::Tensor unalias(Call& call, const at::Tensor& part, const at::Tensor& whole,
                   int rank, bool is_output) {
  if (!overlap(part, whole))
    return part;
  auto at_rank = static_cast<char*>(whole.data_ptr()) + rank * part.nbytes();
  if (part.data_ptr() == at_rank)
    return part;
  at::NoGradGuard no_grad;
  auto c = at::empty_like(part, at::MemoryFormat::Contiguous);
  call.work().keep(c);
  if (is_output)
    call.work().copyBack(part, c);
  else
    c.copy_(part);
  return c;
}

} // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::allreduce(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  checkSingle(tensors, "allreduce");
  auto& t = tensors[0];
  const auto rt = reduceType(t, opts.reduceOp, "allreduce");
  Call call(*this, c10d::OpType::ALLREDUCE, "collx:all_reduce",
            describe("allreduce", t, &opts.reduceOp), tensors);
  auto b = call.output(t, true);
  call.submit(COLLX_COLL_ALLREDUCE, rt.dtype, rt.redop, 0, b.numel() * rt.per_elem,
              b.data_ptr(), b.data_ptr());
  return call.finish(tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "collx allreduce_coalesced: no tensors");
  std::vector<ReduceType> rts;
  for (const auto& t : tensors) {
    checkCpu(t, "allreduce_coalesced");
    rts.push_back(reduceType(t, opts.reduceOp, "allreduce_coalesced"));
  }
  Call call(*this, c10d::OpType::ALLREDUCE_COALESCED, "collx:all_reduce_coalesced",
            "allreduce_coalesced (" + std::to_string(tensors.size()) + " tensors, " +
                reduceName(opts.reduceOp) + ")",
            tensors);
  // One allreduce per tensor, started together: no flattening copy.
  call.group();
  for (size_t i = 0; i < tensors.size(); i++) {
    auto b = call.output(tensors[i], true);
    call.submit(COLLX_COLL_ALLREDUCE, rts[i].dtype, rts[i].redop, 0,
                b.numel() * rts[i].per_elem, b.data_ptr(), b.data_ptr());
  }
  return call.finish(tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  checkSingle(tensors, "broadcast");
  TORCH_CHECK(opts.rootTensor == 0, "collx broadcast: rootTensor must be 0");
  checkRoot(opts.rootRank, size_, "broadcast");
  auto& t = tensors[0];
  const int root = static_cast<int>(opts.rootRank);
  Call call(*this, c10d::OpType::BROADCAST, "collx:broadcast", describe("broadcast", t),
            tensors);
  auto b = rank_ == root ? call.input(t) : call.output(t, false);
  size_t count;
  const auto d = moveType(t.scalar_type(), t.numel(), &count);
  call.submit(COLLX_COLL_BROADCAST, d, COLLX_OP_SUM, root, count,
              rank_ == root ? b.data_ptr() : nullptr, b.data_ptr());
  return call.finish(tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::reduce(
    std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  checkSingle(tensors, "reduce");
  TORCH_CHECK(opts.rootTensor == 0, "collx reduce: rootTensor must be 0");
  checkRoot(opts.rootRank, size_, "reduce");
  auto& t = tensors[0];
  const int root = static_cast<int>(opts.rootRank);
  const auto rt = reduceType(t, opts.reduceOp, "reduce");
  Call call(*this, c10d::OpType::REDUCE, "collx:reduce",
            describe("reduce", t, &opts.reduceOp), tensors);
  // Only the root's tensor changes.
  auto b = rank_ == root ? call.output(t, true) : call.input(t);
  call.submit(COLLX_COLL_REDUCE, rt.dtype, rt.redop, root, b.numel() * rt.per_elem,
              b.data_ptr(), rank_ == root ? b.data_ptr() : nullptr);
  return call.finish(tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /* opts */) {
  checkSingle(inputs, "allgather");
  auto& in = inputs[0];
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_),
              "collx allgather: wants one list of ", size_, " output tensors");
  checkLike(outputs[0], in, "allgather");
  Call call(*this, c10d::OpType::ALLGATHER, "collx:all_gather", describe("allgather", in),
            inputs);
  auto out = call.flat(outputs[0], false, true);
  auto send = unalias(call, call.input(in), out, rank_, false);
  size_t count;
  const auto d = moveType(in.scalar_type(), in.numel(), &count);
  call.submit(COLLX_COLL_ALLGATHER, d, COLLX_OP_SUM, 0, count, send.data_ptr(),
              out.data_ptr());
  return call.finish(outputs[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& /* opts */) {
  checkCpu(input, "_allgather_base");
  checkCpu(output, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "collx _allgather_base: output and input dtypes differ");
  TORCH_CHECK(output.numel() == input.numel() * size_, "collx _allgather_base: output has ",
              output.numel(), " elements, not ", size_, " x ", input.numel());
  Call call(*this, c10d::OpType::_ALLGATHER_BASE, "collx:_all_gather_base",
            describe("_allgather_base", input), {input});
  auto out = call.output(output, false);
  auto send = unalias(call, call.input(input), out, rank_, false);
  size_t count;
  const auto d = moveType(input.scalar_type(), input.numel(), &count);
  call.submit(COLLX_COLL_ALLGATHER, d, COLLX_OP_SUM, 0, count, send.data_ptr(),
              out.data_ptr());
  return call.finish({output});
}

// One allgather per input, all started together (one collx group), each
// gathering input j into the j-th tensor of every rank's output list: no
// flattening copy of the inputs, where gloo packs them into one buffer.
// Empty inputs move nothing and are left out.
c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /* opts */) {
  TORCH_CHECK(!inputs.empty(), "collx allgather_coalesced: no input tensors");
  TORCH_CHECK(outputLists.size() == static_cast<size_t>(size_),
              "collx allgather_coalesced: wants ", size_,
              " output lists (one per rank), got ", outputLists.size());
  std::vector<at::Tensor> all;
  for (size_t r = 0; r < outputLists.size(); r++) {
    TORCH_CHECK(outputLists[r].size() == inputs.size(), "collx allgather_coalesced: output list ",
                r, " holds ", outputLists[r].size(), " tensors, not ", inputs.size(),
                " (one per input)");
    all.insert(all.end(), outputLists[r].begin(), outputLists[r].end());
  }
  std::vector<std::vector<at::Tensor>> columns(inputs.size());
  for (size_t j = 0; j < inputs.size(); j++) {
    checkCpu(inputs[j], "allgather_coalesced");
    for (const auto& list : outputLists)
      columns[j].push_back(list[j]);
    checkLike(columns[j], inputs[j], "allgather_coalesced");
  }
  Call call(*this, c10d::OpType::ALLGATHER_COALESCED, "collx:all_gather_coalesced",
            "allgather_coalesced (" + std::to_string(inputs.size()) + " tensors)", inputs);
  call.group();
  for (size_t j = 0; j < inputs.size(); j++) {
    if (inputs[j].numel() == 0)
      continue;
    auto out = call.flat(columns[j], false, true);
    auto send = unalias(call, call.input(inputs[j]), out, rank_, false);
    size_t count;
    const auto d = moveType(inputs[j].scalar_type(), inputs[j].numel(), &count);
    call.submit(COLLX_COLL_ALLGATHER, d, COLLX_OP_SUM, 0, count, send.data_ptr(),
                out.data_ptr());
  }
  return call.finish(all);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  checkSingle(outputs, "reduce_scatter");
  auto& out = outputs[0];
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
              "collx reduce_scatter: wants one list of ", size_, " input tensors");
  checkLike(inputs[0], out, "reduce_scatter");
  const auto rt = reduceType(out, opts.reduceOp, "reduce_scatter");
  Call call(*this, c10d::OpType::REDUCE_SCATTER, "collx:reduce_scatter",
            describe("reduce_scatter", out, &opts.reduceOp), inputs[0]);
  auto in = call.flat(inputs[0], true, false);
  auto recv = unalias(call, call.output(out, false), in, rank_, true);
  call.submit(COLLX_COLL_REDUCE_SCATTER, rt.dtype, rt.redop, 0, out.numel() * rt.per_elem,
              in.data_ptr(), recv.data_ptr());
  return call.finish(outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  checkCpu(input, "_reduce_scatter_base");
  checkCpu(output, "_reduce_scatter_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "collx _reduce_scatter_base: output and input dtypes differ");
  TORCH_CHECK(input.numel() == output.numel() * size_, "collx _reduce_scatter_base: input has ",
              input.numel(), " elements, not ", size_, " x ", output.numel());
  const auto rt = reduceType(output, opts.reduceOp, "_reduce_scatter_base");
  Call call(*this, c10d::OpType::_REDUCE_SCATTER_BASE, "collx:_reduce_scatter_base",
            describe("_reduce_scatter_base", output, &opts.reduceOp), {input});
  auto in = call.input(input);
  auto recv = unalias(call, call.output(output, false), in, rank_, true);
  call.submit(COLLX_COLL_REDUCE_SCATTER, rt.dtype, rt.redop, 0,
              output.numel() * rt.per_elem, in.data_ptr(), recv.data_ptr());
  return call.finish({output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::barrier(
    const c10d::BarrierOptions& /* opts */) {
  Call call(*this, c10d::OpType::BARRIER, "collx:barrier", "barrier", {});
  call.submit(COLLX_COLL_BARRIER, COLLX_INT8, COLLX_OP_SUM, 0, 0, nullptr, nullptr);
  return call.finish({});
}

} // namespace collx_torch
