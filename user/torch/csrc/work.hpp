// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A torch Work of collx collectives: the kernel runs them; wait() blocks
// in collx_wait(), is_completed() asks collx_test().
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <collx.h>

#include "comm.hpp"
#include "regcache.hpp"

namespace collx_torch {

class WorkCollx : public c10d::Work {
 public:
  // @what names the call in errors: "allreduce (float32 SUM, 1024 elements)".
  WorkCollx(std::shared_ptr<Comm> comm, c10d::OpType type, const char* title,
            std::string what,
            const c10::optional<std::vector<at::Tensor>>& inputs);
  ~WorkCollx() override;

  // ---- built by the process group before the work is returned ----
  void addOp(struct collx_op* op) { ops_.push_back(op); }
  // Keep @t alive until the collectives end (inputs, staging buffers).
  void keep(const at::Tensor& t) { keep_.push_back(t); }
  // Once they ended well, copy @src (a contiguous staging buffer) into @dst.
  void copyBack(const at::Tensor& dst, const at::Tensor& src) {
    copies_.emplace_back(dst, src);
  }
  void pin(RegCache::Entry* e) {
    if (e)
      pins_.push_back(e);
  }
  void setOutputs(std::vector<at::Tensor> outputs) { outputs_ = std::move(outputs); }
  void setSourceRank(int r) { source_rank_ = r; }
  // Inside an unfinished coalescing block: nothing submitted yet.
  void setQueued(bool q) { queued_ = q; }
  const std::string& what() const { return what_; }
  size_t nops() const { return ops_.size(); }

  // ---- c10d::Work ----
  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;
  int sourceRank() const override;
  void synchronize() override {}

  // Without blocking: take the records of the ops that ended and, once
  // all did, finish the work.  False while running, or when another
  // thread is taking them (it finishes the work).
  bool poll();

 private:
  // With op_mu_ held: take records, blocking until @deadline (forever
  // when @forever, not at all when neither).  True once all are in.
  bool collect(bool block, bool forever,
               std::chrono::steady_clock::time_point deadline);
  // With op_mu_ held, all records in: copies back, releases the pins and
  // returns the outcome.
  std::exception_ptr finishWork();
  // Without locks (future callbacks run here): completed_, waiters, future.
  void publish(std::exception_ptr eptr);
  void markFuture(const c10::intrusive_ptr<c10::ivalue::Future>& f,
                  std::exception_ptr eptr);

  std::shared_ptr<Comm> comm_;
  const std::string what_;
  // One thread takes the records at a time: a waiter holds it while it
  // blocks, pollers only try it.
  std::timed_mutex op_mu_;
  std::vector<struct collx_op*> ops_;  // nullptr once its record is in
  std::vector<struct collx_completion> recs_;
  int first_failed_ = -1;  // index of the first op that failed
  int first_status_ = 0;
  std::vector<at::Tensor> keep_;
  std::vector<std::pair<at::Tensor, at::Tensor>> copies_;
  std::vector<RegCache::Entry*> pins_;
  std::vector<at::Tensor> outputs_;
  int source_rank_ = -1;
  bool queued_ = false;
  bool finished_ = false;  // under op_mu_: finishWork() ran
  // Under Work::mutex_.
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  bool future_marked_ = false;
};

} // namespace collx_torch
