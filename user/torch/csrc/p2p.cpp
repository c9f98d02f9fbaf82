// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// ProcessGroupCollx: what is made of sends and recvs (uneven alltoall,
// list alltoall, gather, scatter) and send/recv themselves.  A call's
// sends and recvs go in one collx group, which the kernel starts together,
// so they never wait for each other whatever their order; this rank's own
// part is copied here and now.
#include "call.hpp"
#include "process_group.hpp"
#include "types.hpp"

namespace collx_torch {

namespace {

void checkPeer(int peer, int size, const char* what) {
  TORCH_CHECK(peer >= 0 && peer < size, "collx ", what, ": rank ", peer,
              " is not a rank of 0..", size - 1);
}

void checkTag(int tag, const char* what) {
  TORCH_CHECK(tag == 0, "collx ", what, ": tag ", tag,
              " is not supported: collx matches the k-th send to a peer with "
              "that peer's k-th recv from this rank, in order (use tag=0)");
}

void sendPart(Call& call, const at::Tensor& b, int peer) {
  size_t count;
  const auto d = moveType(b.scalar_type(), b.numel(), &count);
  call.submit(COLLX_COLL_SEND, d, COLLX_OP_SUM, peer, count, b.data_ptr(), nullptr);
}

void recvPart(Call& call, const at::Tensor& b, int peer) {
  size_t count;
  const auto d = moveType(b.scalar_type(), b.numel(), &count);
  call.submit(COLLX_COLL_RECV, d, COLLX_OP_SUM, peer, count, nullptr, b.data_ptr());
}

void copyOwn(const at::Tensor& dst, const at::Tensor& src, const char* what) {
  TORCH_CHECK(dst.numel() == src.numel(), "collx ", what, ": this rank's own part is ",
              src.numel(), " elements to send and ", dst.numel(), " to receive");
  at::NoGradGuard no_grad;
  dst.copy_(src.view(dst.sizes()));
}

// Rows of dim 0 per peer: @splits, or an equal share when empty.
std::vector<int64_t> rowsPerPeer(const std::vector<int64_t>& splits,
                                 const at::Tensor& t, int size, const char* what) {
  const int64_t rows = t.dim() ? t.size(0) : 1;
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "collx ", what, ": dim 0 (", rows,
                ") does not divide equally across ", size, " ranks");
    return std::vector<int64_t>(size, rows / size);
  }
  TORCH_CHECK(splits.size() == static_cast<size_t>(size), "collx ", what, ": ",
              splits.size(), " split sizes for ", size, " ranks");
  int64_t sum = 0;
  for (auto s : splits) {
    TORCH_CHECK(s >= 0, "collx ", what, ": negative split size ", s);
    sum += s;
  }
  TORCH_CHECK(sum == rows, "collx ", what, ": split sizes add up to ", sum,
              ", dim 0 is ", rows);
  return splits;
}

} // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
    std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions& /* opts */) {
  checkCpu(input, "alltoall_base");
  checkCpu(output, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "collx alltoall_base: output and input dtypes differ");
  Call call(*this, c10d::OpType::ALLTOALL_BASE, "collx:all_to_all",
            describe("alltoall_base", input), {input});
  auto out = call.output(output, false);
  auto in = call.input(input);
  if (overlap(in, out)) {
    // collx's alltoall wants them apart; torch allows in place.
    at::NoGradGuard no_grad;
    in = input.clone(at::MemoryFormat::Contiguous);
    call.work().keep(in);
  }
  if (outputSplits.empty() && inputSplits.empty()) {
    // Equal parts on every rank (torch's own rule when no splits are
    // given): the kernel's alltoall.
    rowsPerPeer({}, input, size_, "alltoall_base");
    TORCH_CHECK(output.numel() == input.numel(), "collx alltoall_base: output has ",
                output.numel(), " elements, input ", input.numel());
    size_t count;
    const auto d = moveType(input.scalar_type(), input.numel() / size_, &count);
    call.submit(COLLX_COLL_ALLTOALL, d, COLLX_OP_SUM, 0, count, in.data_ptr(),
                out.data_ptr());
    return call.finish({output});
  }
  // Uneven: every rank takes this path when it was given splits, so the
  // ranks always agree on it.
  const auto in_rows = rowsPerPeer(inputSplits, input, size_, "alltoall_base");
  const auto out_rows = rowsPerPeer(outputSplits, output, size_, "alltoall_base");
  const int64_t in_row = input.dim() && input.size(0) ? input.numel() / input.size(0) : 0;
  const int64_t out_row = output.dim() && output.size(0) ? output.numel() / output.size(0) : 0;
  auto in_flat = in.view({-1});
  auto out_flat = out.view({-1});
  call.group();
  int64_t in_off = 0, out_off = 0;
  for (int p = 0; p < size_; p++) {
    auto send = in_flat.narrow(0, in_off * in_row, in_rows[p] * in_row);
    auto recv = out_flat.narrow(0, out_off * out_row, out_rows[p] * out_row);
    in_off += in_rows[p];
    out_off += out_rows[p];
    if (p == rank_) {
      copyOwn(recv, send, "alltoall_base");
      continue;
    }
    // Nothing to move is no op at all, on both sides (their splits agree).
    if (send.numel())
      sendPart(call, send, p);
    if (recv.numel())
      recvPart(call, recv, p);
  }
  return call.finish({output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::alltoall(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllToAllOptions& /* opts */) {
  TORCH_CHECK(outputs.size() == static_cast<size_t>(size_) &&
                  inputs.size() == static_cast<size_t>(size_),
              "collx alltoall: wants ", size_, " input and ", size_, " output tensors");
  for (int p = 0; p < size_; p++) {
    checkCpu(inputs[p], "alltoall");
    checkCpu(outputs[p], "alltoall");
    TORCH_CHECK(inputs[p].scalar_type() == outputs[p].scalar_type(),
                "collx alltoall: output and input dtypes differ");
  }
  Call call(*this, c10d::OpType::ALLTOALL, "collx:all_to_all",
            describe("alltoall", inputs[rank_]), inputs);
  // Each pair of tensors may have its own size: sends and recvs.
  call.group();
  for (int p = 0; p < size_; p++) {
    auto recv = call.output(outputs[p], false);
    auto send = call.input(inputs[p]);
    if (p == rank_) {
      copyOwn(recv, send, "alltoall");
      continue;
    }
    if (send.numel())
      sendPart(call, send, p);
    if (recv.numel())
      recvPart(call, recv, p);
  }
  return call.finish(outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  checkSingle(inputs, "gather");
  checkPeer(static_cast<int>(opts.rootRank), size_, "gather");
  const int root = static_cast<int>(opts.rootRank);
  auto& in = inputs[0];
  Call call(*this, c10d::OpType::GATHER, "collx:gather", describe("gather", in), inputs);
  if (rank_ != root) {
    TORCH_CHECK(outputs.empty() || outputs[0].empty(),
                "collx gather: only the root passes a gather list");
    sendPart(call, call.input(in), root);
    return call.finish({});
  }
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_),
              "collx gather: the root wants one list of ", size_, " output tensors");
  checkLike(outputs[0], in, "gather");
  call.group();
  for (int p = 0; p < size_; p++) {
    auto recv = call.output(outputs[0][p], false);
    if (p == root)
      copyOwn(recv, call.input(in), "gather");
    else
      recvPart(call, recv, p);
  }
  return call.finish(outputs[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  checkSingle(outputs, "scatter");
  checkPeer(static_cast<int>(opts.rootRank), size_, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  auto& out = outputs[0];
  Call call(*this, c10d::OpType::SCATTER, "collx:scatter", describe("scatter", out),
            rank_ == root && !inputs.empty() ? inputs[0] : std::vector<at::Tensor>{});
  if (rank_ != root) {
    TORCH_CHECK(inputs.empty() || inputs[0].empty(),
                "collx scatter: only the root passes a scatter list");
    recvPart(call, call.output(out, false), root);
    return call.finish(outputs);
  }
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
              "collx scatter: the root wants one list of ", size_, " input tensors");
  checkLike(inputs[0], out, "scatter");
  call.group();
  for (int p = 0; p < size_; p++) {
    auto send = call.input(inputs[0][p]);
    if (p == root)
      copyOwn(call.output(out, false), send, "scatter");
    else
      sendPart(call, send, p);
  }
  return call.finish(outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::send(std::vector<at::Tensor>& tensors,
                                                       int dstRank, int tag) {
  checkSingle(tensors, "send");
  checkTag(tag, "send");
  checkPeer(dstRank, size_, "send");
  TORCH_CHECK(dstRank != rank_, "collx send: to itself (rank ", rank_, ")");
  Call call(*this, c10d::OpType::SEND, "collx:send",
            describe("send", tensors[0]) + " to rank " + std::to_string(dstRank), tensors);
  sendPart(call, call.input(tensors[0]), dstRank);
  return call.finish({});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::recv(std::vector<at::Tensor>& tensors,
                                                       int srcRank, int tag) {
  checkSingle(tensors, "recv");
  checkTag(tag, "recv");
  checkPeer(srcRank, size_, "recv");
  TORCH_CHECK(srcRank != rank_, "collx recv: from itself (rank ", rank_, ")");
  Call call(*this, c10d::OpType::RECV, "collx:recv",
            describe("recv", tensors[0]) + " from rank " + std::to_string(srcRank), {});
  recvPart(call, call.output(tensors[0], false), srcRank);
  call.work().setSourceRank(srcRank);
  return call.finish(tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::recvAnysource(
    std::vector<at::Tensor>& /* tensors */, int /* tag */) {
  TORCH_CHECK(false,
              "collx recv: receiving from any source (recv without src) is not "
              "supported: collx matches every recv with one named peer; pass src=");
}

} // namespace collx_torch
