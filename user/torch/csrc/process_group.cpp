// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// ProcessGroupCollx: making it, coalescing, and where its works go.
#include "process_group.hpp"

#include "call.hpp"

namespace collx_torch {

ProcessGroupCollx::ProcessGroupCollx(const c10::intrusive_ptr<c10d::Store>& store,
                                     int rank, int size,
                                     std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size),
      comm_(Comm::create(store, rank, size, timeout)) {
  init();
}

ProcessGroupCollx::~ProcessGroupCollx() {
  comm_->destroy();
}

void ProcessGroupCollx::startCoalescing() {
  std::lock_guard<std::mutex> g(coalesce_mu_);
  TORCH_CHECK(!coalescing_, "collx: a coalescing block is already open");
  // libcollx's groups are per thread: this thread's ops are held back
  // until endCoalescing() submits them as one group.
  TORCH_CHECK(collx_group_start() == 0, "collx: collx_group_start failed");
  coalescing_ = true;
  coalescing_thread_ = std::this_thread::get_id();
}

void ProcessGroupCollx::endCoalescing(
    std::vector<c10::intrusive_ptr<c10d::Work>>& /* reqs: the same works */) {
  std::vector<c10::intrusive_ptr<WorkCollx>> works;
  {
    std::lock_guard<std::mutex> g(coalesce_mu_);
    TORCH_CHECK(coalescing_, "collx: endCoalescing() without startCoalescing()");
    TORCH_CHECK(coalescing_thread_ == std::this_thread::get_id(),
                "collx: endCoalescing() on another thread than startCoalescing()");
    coalescing_ = false;
    works.swap(coalesced_);
  }
  int err = collx_group_end();
  std::string what;
  for (auto& w : works) {
    w->setQueued(false);
    comm_->track(w);
    if (!what.empty())
      what += ", ";
    what += w->what();
  }
  TORCH_CHECK(err == 0, comm_->submitError("group of " + std::to_string(works.size()) +
                                           " (" + what + ")", err));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollx::launch(Call& call) {
  c10::intrusive_ptr<WorkCollx> w = call.work_;
  {
    std::lock_guard<std::mutex> g(coalesce_mu_);
    if (coalescing_ && coalescing_thread_ == std::this_thread::get_id()) {
      w->setQueued(true);
      coalesced_.push_back(w);
      return w;
    }
  }
  comm_->track(w);
  return w;
}

} // namespace collx_torch
