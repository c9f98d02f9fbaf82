// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A collx communicator as a torch process group uses it: rendezvous
// through the c10d store, registrations, the works in flight, the thread
// that completes futures, and error text.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <collx.h>

#include "regcache.hpp"

namespace collx_torch {

class WorkCollx;

// Memory paths of the collectives that completed (their records' mem bits).
struct PathStats {
  uint64_t ops = 0;
  uint64_t zero_copy = 0;  // NIC gathered from, or peer wrote into, registered memory
  uint64_t bounced = 0;    // pinned for the one collective
  uint64_t staged = 0;     // copied through the connections' staging slots
};

class Comm : public std::enable_shared_from_this<Comm> {
 public:
  // Joins the communicator of the @size ranks that call this with the same
  // @store: rank 0 makes the collx unique id and sets it in the store, the
  // others get it from there.  @timeout becomes the comm's timeout (on
  // connecting and on every collective's progress) and bounds the
  // rendezvous.  Throws std::runtime_error naming what failed.
  static std::shared_ptr<Comm> create(const c10::intrusive_ptr<c10d::Store>& store,
                                      int rank, int size,
                                      std::chrono::milliseconds timeout);
  ~Comm();

  // nullptr once destroyed.
  struct collx_comm* get() const { return comm_.load(); }
  int rank() const { return rank_; }
  int size() const { return size_; }
  unsigned int timeoutMs() const { return timeout_ms_; }
  std::string device() const;
  unsigned int globalId() const;
  RegCache& cache() { return *cache_; }

  // Text for a collective that failed at submission (@err from libcollx).
  std::string submitError(const std::string& what, int err);
  // Text for a collective whose record says it failed; the first such
  // text is kept for later submissions refused because of it.
  std::string opError(const std::string& what, const struct collx_completion& c);

  // Works submitted and not yet known complete, in submission order.
  void track(const c10::intrusive_ptr<WorkCollx>& w);
  // Test up to @max of them (from the oldest, stopping at the first still
  // running unless @all) and finish those that ended; returns how many.
  size_t reap(size_t max, bool all);
  // Futures need someone to mark them completed (c10's Future has no
  // hook for it): start the completion thread, once.  It does not move
  // data (the kernel does); it sleeps in poll() on the comm's fd until
  // the kernel has a completion record, then finishes the works that
  // ended.
  void watchFutures();

  void countPaths(const struct collx_completion& c);
  PathStats paths();

  // Tells the completion thread to end and destroys the communicator:
  // works in flight end with ECANCELED.  Idempotent.
  void destroy();

 private:
  Comm(struct collx_comm* comm, int rank, int size, unsigned int timeout_ms);
  void watchLoop();
  void stopWatcher();

  std::atomic<struct collx_comm*> comm_;
  const int rank_, size_;
  const unsigned int timeout_ms_;
  std::unique_ptr<RegCache> cache_;

  std::mutex pend_mu_;
  std::deque<c10::intrusive_ptr<WorkCollx>> pending_;

  std::mutex watch_mu_;
  std::thread watcher_;
  int wake_fd_ = -1;  // eventfd: tells the completion thread to stop
  std::atomic<bool> stop_{false};

  std::mutex err_mu_;
  std::string first_error_;

  std::mutex stats_mu_;
  PathStats paths_;
};

} // namespace collx_torch
