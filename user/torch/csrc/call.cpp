// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// One c10d call being turned into collx collectives.
#include "call.hpp"

#include <stdexcept>

#include "process_group.hpp"

namespace collx_torch {

void checkCpu(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.defined(), "collx ", what, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "collx ", what, ": ", t.device(),
              " tensors are not supported (collx takes CPU tensors; dma-buf "
              "memory goes through libcollx directly)");
  TORCH_CHECK(t.layout() == at::kStrided, "collx ", what,
              ": only dense (strided) tensors, not ", t.layout());
}

void checkSingle(const std::vector<at::Tensor>& ts, const char* what) {
  TORCH_CHECK(ts.size() == 1, "collx ", what, ": takes one tensor per process, got ",
              ts.size(), " (lists of one tensor per device are for GPUs)");
  checkCpu(ts[0], what);
}

void checkLike(const std::vector<at::Tensor>& ts, const at::Tensor& t,
               const char* what) {
  for (const auto& x : ts) {
    checkCpu(x, what);
    TORCH_CHECK(x.scalar_type() == t.scalar_type(), "collx ", what,
                ": tensors of different dtypes (", x.scalar_type(), " and ",
                t.scalar_type(), ")");
    TORCH_CHECK(x.numel() == t.numel(), "collx ", what,
                ": tensors of different sizes (", x.numel(), " and ", t.numel(),
                " elements)");
  }
}

bool overlap(const at::Tensor& a, const at::Tensor& b) {
  if (!a.numel() || !b.numel())
    return false;
  auto a0 = reinterpret_cast<uintptr_t>(a.data_ptr());
  auto b0 = reinterpret_cast<uintptr_t>(b.data_ptr());
  return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

Call::Call(ProcessGroupCollx& pg, c10d::OpType type, const char* title,
           std::string what, const std::vector<at::Tensor>& inputs)
    : pg_(pg),
      work_(c10::make_intrusive<WorkCollx>(pg.comm(), type, title, std::move(what),
                                           c10::optional<std::vector<at::Tensor>>(inputs))) {
  TORCH_CHECK(pg.comm()->get(), "collx ", work_->what(),
              ": the process group was destroyed");
  // Finish works that ended meanwhile: their tensors and staging go.
  pg.comm()->reap(4, false);
}

Call::~Call() {
  if (launched_)
    return;
  // Thrown half way: end the group, and keep what was submitted tracked
  // so that its records are taken.
  if (grouped_)
    endGroup();
  if (work_->nops())
    pg_.launch(*this);
}

void Call::registerBuffer(const at::Tensor& t) {
  work_->pin(pg_.comm()->cache().acquire(t));
}

at::Tensor Call::input(const at::Tensor& t) {
  work_->keep(t);
  if (t.is_contiguous()) {
    registerBuffer(t);
    return t;
  }
  at::NoGradGuard no_grad;
  auto c = t.contiguous();
  work_->keep(c);
  return c;
}

at::Tensor Call::output(const at::Tensor& t, bool load) {
  work_->keep(t);
  if (t.is_contiguous()) {
    registerBuffer(t);
    return t;
  }
  at::NoGradGuard no_grad;
  auto c = load ? t.contiguous() : at::empty(t.sizes(), t.options().memory_format(
                                                 at::MemoryFormat::Contiguous));
  work_->keep(c);
  work_->copyBack(t, c);
  return c;
}

at::Tensor Call::flat(const std::vector<at::Tensor>& ts, bool load, bool store) {
  TORCH_CHECK(!ts.empty(), "collx ", work_->what(), ": empty tensor list");
  const auto& t0 = ts[0];
  const int64_t n = t0.numel();
  bool direct = true;
  for (size_t i = 0; i < ts.size() && direct; i++) {
    work_->keep(ts[i]);
    direct = ts[i].is_contiguous() && ts[i].storage().is_alias_of(t0.storage()) &&
        ts[i].storage_offset() == t0.storage_offset() + static_cast<int64_t>(i) * n;
  }
  at::NoGradGuard no_grad;
  if (direct) {
    // e.g. torch.empty(k * n).chunk(k): one buffer already, zero copy.
    auto f = t0.as_strided({n * static_cast<int64_t>(ts.size())}, {1});
    work_->keep(f);
    registerBuffer(f);
    return f;
  }
  auto f = at::empty({n * static_cast<int64_t>(ts.size())},
                     t0.options().memory_format(at::MemoryFormat::Contiguous));
  work_->keep(f);
  for (size_t i = 0; i < ts.size(); i++) {
    auto part = f.narrow(0, static_cast<int64_t>(i) * n, n).view(ts[i].sizes());
    if (load)
      part.copy_(ts[i]);
    if (store)
      work_->copyBack(ts[i], part);
  }
  return f;
}

void Call::group() {
  if (grouped_)
    return;
  TORCH_CHECK(collx_group_start() == 0, "collx ", work_->what(),
              ": collx_group_start failed");
  grouped_ = true;
}

int Call::endGroup() {
  grouped_ = false;
  return collx_group_end();
}

void Call::submit(enum collx_coll coll, enum collx_dtype dtype,
                  enum collx_redop redop, int root, size_t count,
                  const void* sendbuf, void* recvbuf) {
  struct collx_args a = {};
  a.coll = coll;
  a.dtype = dtype;
  a.redop = redop;
  a.root = root;
  a.count = count;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  a.algo = COLLX_ALGO_AUTO;
  struct collx_op* op = nullptr;
  // Every buffer of this op exists by now: drop the registrations of
  // storages freed before, so that the kernel cannot match one of them
  // with a buffer that took their address (regcache.hpp).
  pg_.comm()->cache().sweep();
  int err = collx_submit(pg_.comm()->get(), &a, &op);
  if (err)
    throw std::runtime_error(pg_.comm()->submitError(work_->what(), err));
  work_->addOp(op);
}

c10::intrusive_ptr<c10d::Work> Call::finish(std::vector<at::Tensor> outputs) {
  work_->setOutputs(std::move(outputs));
  if (grouped_) {
    int err = endGroup();
    if (err) {
      // Nothing of the group was queued (all or nothing): its ops end with
      // the error; keep them tracked so their handles are freed.
      std::string msg = pg_.comm()->submitError(work_->what(), err);
      launched_ = true;
      pg_.launch(*this);
      throw std::runtime_error(msg);
    }
  }
  launched_ = true;
  return pg_.launch(*this);
}

} // namespace collx_torch
