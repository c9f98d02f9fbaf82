// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The works of a comm in flight, and the thread that completes futures.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

#include "comm.hpp"
#include "work.hpp"

namespace collx_torch {

void Comm::track(const c10::intrusive_ptr<WorkCollx>& w) {
  std::lock_guard<std::mutex> g(pend_mu_);
  pending_.push_back(w);
}

size_t Comm::reap(size_t max, bool all) {
  std::vector<c10::intrusive_ptr<WorkCollx>> batch;
  {
    std::lock_guard<std::mutex> g(pend_mu_);
    for (size_t i = 0; i < pending_.size() && batch.size() < max; i++)
      batch.push_back(pending_[i]);
  }
  // Without the lock: finishing a work runs its future's callbacks, which
  // may submit (and track) more.
  std::vector<WorkCollx*> done;
  for (auto& w : batch) {
    if (w->poll())
      done.push_back(w.get());
    else if (!all)
      break;  // the kernel runs a comm's collectives in order
  }
  if (done.empty())
    return 0;
  std::lock_guard<std::mutex> g(pend_mu_);
  for (auto* d : done) {
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (it->get() == d) {
        pending_.erase(it);
        break;
      }
    }
  }
  return done.size();
}

void Comm::watchFutures() {
  std::lock_guard<std::mutex> g(watch_mu_);
  if (watcher_.joinable() || !comm_.load())
    return;
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (wake_fd_ < 0)
    throw std::runtime_error(std::string("collx: eventfd: ") + strerror(errno));
  stop_ = false;
  // The thread holds the comm: it may outlive the process group when a
  // future's callback (run on it) drops the last reference.
  auto self = shared_from_this();
  watcher_ = std::thread([self] { self->watchLoop(); });
}

void Comm::watchLoop() {
  const int fd = collx_comm_fd(comm_.load());
  if (fd < 0)
    return;
  while (!stop_) {
    struct pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int n = ::poll(p, 2, -1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || (p[0].revents & (POLLERR | POLLNVAL)) || p[1].revents)
      break;
    if ((p[0].revents & POLLIN) && reap(SIZE_MAX, true) == 0) {
      // The record is another thread's: it is in collx_wait() for it, or
      // about to be.  Let it take it.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void Comm::stopWatcher() {
  std::lock_guard<std::mutex> g(watch_mu_);
  if (!watcher_.joinable())
    return;
  stop_ = true;
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) != sizeof(one)) {
    // An eventfd write fails only when the counter would overflow: the
    // thread has been woken already.
  }
  // Not joined: the thread may be running a future's Python callback,
  // which needs the GIL that whoever destroys the process group may hold.
  // It holds the comm (and the eventfd, which ~Comm closes) and leaves at
  // its loop's next check; its reaping is safe on a destroyed comm.
  watcher_.detach();
}

} // namespace collx_torch
