// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A torch Work of collx collectives: the kernel runs them; wait() blocks
// in collx_wait(), is_completed() asks collx_test().
#include "work.hpp"

#include <poll.h>

#include <stdexcept>
#include <thread>

#include <ATen/core/jit_type.h>

namespace collx_torch {

WorkCollx::WorkCollx(std::shared_ptr<Comm> comm, c10d::OpType type,
                     const char* title, std::string what,
                     const c10::optional<std::vector<at::Tensor>>& inputs)
    : c10d::Work(comm->rank(), type, title, inputs),
      comm_(std::move(comm)),
      what_(std::move(what)) {}

WorkCollx::~WorkCollx() {
  // Only a work whose comm was destroyed gets here with ops left (the comm
  // tracks every other one until it ended): they end with ECANCELED, and
  // their handles must still be freed.
  for (auto*& op : ops_) {
    if (op)
      collx_wait(op, nullptr);
    op = nullptr;
  }
  for (auto* e : pins_)
    comm_->cache().release(e);
}

bool WorkCollx::collect(bool block, bool forever,
                        std::chrono::steady_clock::time_point deadline) {
  recs_.resize(ops_.size());
  for (;;) {
    bool all = true, progress = false;
    for (size_t i = 0; i < ops_.size(); i++) {
      if (!ops_[i])
        continue;
      struct collx_completion c = {};
      int done = 0, rc;
      if (block && forever) {
        rc = collx_wait(ops_[i], &c);
        done = 1;
      } else {
        rc = collx_test(ops_[i], &done, &c);
      }
      if (!done) {
        all = false;
        continue;
      }
      ops_[i] = nullptr;
      recs_[i] = c;
      progress = true;
      if (rc && first_failed_ < 0) {
        first_failed_ = static_cast<int>(i);
        first_status_ = rc;
        recs_[i].status = rc;
      }
      if (!rc)
        comm_->countPaths(c);
    }
    if (all)
      return true;
    if (!block)
      return false;
    // A bounded wait: libcollx has no timed collx_wait(), so sleep in
    // poll() on the comm's fd until some record is queued.
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    struct pollfd p = {collx_comm_fd(comm_->get()), POLLIN, 0};
    int n = p.fd >= 0 ? ::poll(&p, 1, static_cast<int>(left.count()) + 1) : 0;
    // Readable for another work's record that its own waiter takes, or no
    // fd (the comm was destroyed: the records say ECANCELED): yield.
    if ((n > 0 || p.fd < 0) && !progress)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::exception_ptr WorkCollx::finishWork() {
  std::exception_ptr eptr;

  if (first_failed_ >= 0) {
    eptr = std::make_exception_ptr(
        std::runtime_error(comm_->opError(what_, recs_[first_failed_])));
  } else {
    try {
      at::NoGradGuard no_grad;
      for (auto& c : copies_)
        c.first.copy_(c.second);
    } catch (...) {
      eptr = std::current_exception();
    }
  }
  for (auto* e : pins_)
    comm_->cache().release(e);
  pins_.clear();
  copies_.clear();
  keep_.clear();
  finished_ = true;
  return eptr;
}

void WorkCollx::markFuture(const c10::intrusive_ptr<c10::ivalue::Future>& f,
                           std::exception_ptr eptr) {
  if (eptr)
    f->setError(eptr);
  else
    f->markCompleted(c10::IValue(outputs_));
}

void WorkCollx::publish(std::exception_ptr eptr) {
  c10::intrusive_ptr<c10::ivalue::Future> f;
  {
    std::lock_guard<std::mutex> g(mutex_);
    completed_ = true;
    exception_ = eptr;
    if (recordFunctionEndCallback_) {
      recordFunctionEndCallback_();
      recordFunctionEndCallback_ = nullptr;
    }
    if (future_ && !future_marked_) {
      future_marked_ = true;
      f = future_;
    }
  }
  cv_.notify_all();
  if (f)
    markFuture(f, eptr);
}

bool WorkCollx::poll() {
  std::unique_lock<std::timed_mutex> l(op_mu_, std::try_to_lock);
  if (!l.owns_lock())
    return false;
  if (finished_)
    return true;
  if (queued_ || !collect(false, false, {}))
    return false;
  auto eptr = finishWork();
  l.unlock();
  publish(eptr);
  return true;
}

bool WorkCollx::isCompleted() {
  {
    std::lock_guard<std::mutex> g(mutex_);
    if (completed_)
      return true;
  }
  poll();
  std::lock_guard<std::mutex> g(mutex_);
  return completed_;
}

bool WorkCollx::wait(std::chrono::milliseconds timeout) {
  TORCH_CHECK(!queued_, "collx ", what_,
              ": wait() inside a coalescing block (batch_isend_irecv): its "
              "collectives are submitted when the block ends");
  const bool forever = timeout == kNoTimeout;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::timed_mutex> l(op_mu_, std::defer_lock);
  if (forever)
    l.lock();
  else if (!l.try_lock_until(deadline))
    TORCH_CHECK(false, "collx ", what_, ": not complete after ",
                timeout.count(), " ms of wait()");
  if (!finished_) {
    if (!collect(true, forever, deadline))
      TORCH_CHECK(false, "collx ", what_, ": not complete after ",
                  timeout.count(), " ms of wait()");
    auto eptr = finishWork();
    l.unlock();
    publish(eptr);
  } else {
    l.unlock();
  }
  std::unique_lock<std::mutex> g(mutex_);
  // finished_ is set before completed_ is published: wait for the thread
  // that finished the work to publish it.
  cv_.wait(g, [&] { return completed_; });
  if (exception_)
    std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> WorkCollx::getFuture() {
  c10::intrusive_ptr<c10::ivalue::Future> f;
  bool mark = false;
  std::exception_ptr eptr;
  {
    std::lock_guard<std::mutex> g(mutex_);
    if (!future_)
      future_ = c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()));
    f = future_;
    if (completed_ && !future_marked_) {
      future_marked_ = true;
      mark = true;
      eptr = exception_;
    }
  }
  if (mark)
    markFuture(f, eptr);
  else
    comm_->watchFutures();
  return f;
}

std::vector<at::Tensor> WorkCollx::result() {
  return outputs_;
}

int WorkCollx::sourceRank() const {
  TORCH_CHECK(source_rank_ >= 0, "collx ", what_,
              ": sourceRank() is only defined for a recv");
  return source_rank_;
}

} // namespace collx_torch
