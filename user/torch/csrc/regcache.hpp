// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Registrations of tensor storages with a collx communicator, cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>

#include <ATen/ATen.h>

#include <collx.h>

namespace collx_torch {

struct RegStats {
  uint64_t hits = 0;       // a buffer found inside a live registration
  uint64_t misses = 0;     // ... registered for the first time
  uint64_t evicted = 0;    // dropped to stay within the bounds (LRU)
  uint64_t stale = 0;      // dropped because their storage was freed
  uint64_t refused = 0;    // registrations the kernel refused
  uint64_t skipped = 0;    // buffers outside the size bounds: bounced
  size_t entries = 0;
  size_t bytes = 0;
};

// A storage is registered whole, once, on first use, so every later
// collective on any tensor in it runs in place (DDP's buckets reuse the
// same storage every step).  Each entry holds a weak reference to its
// StorageImpl: the storage's memory is freed exactly when that reference
// expires, so an entry is known stale without hooking the DataPtr's
// deleter.  Stale entries are dropped before every collective is
// submitted, under the same lock: the kernel looks registrations up by
// address, and a stale one (still pinning the freed pages, so never a
// use-after-free) must not capture a new tensor allocated at that
// address: its results belong in the new tensor's pages.
class RegCache {
 public:
  // Bounds: @max_entries registrations, @max_bytes pinned in all; buffers
  // under @min_bytes are bounced (one pin per collective costs less than
  // churning the cache).
  RegCache(struct collx_comm* comm, size_t max_entries, size_t max_bytes,
           size_t min_bytes);
  ~RegCache();

  // An entry in use by a collective in flight (nullptr: bounced).
  struct Entry;

  // Drop stale entries, then return the (possibly new) registration that
  // covers @t's storage, with its use count raised; nullptr when @t is
  // bounced.  @t must be a CPU tensor.
  Entry* acquire(const at::Tensor& t);
  // The collective that acquired @e has ended.
  void release(Entry* e);
  // Drop stale entries (what acquire() does first).
  void sweep();
  // Forget every entry without deregistering: the comm is being destroyed
  // (which drops its registrations itself).
  void forget();

  RegStats stats();

 private:
  bool isStale(const Entry& e) const;
  void drop(std::list<Entry>::iterator it);
  void sweepLocked();
  bool makeRoom(size_t bytes);

  std::mutex mu_;
  struct collx_comm* comm_;
  std::list<Entry> lru_;  // most recently used first
  size_t max_entries_, max_bytes_, min_bytes_;
  RegStats st_;
};

struct RegCache::Entry {
  uintptr_t start = 0;
  size_t nbytes = 0;
  void* handle = nullptr;  // nullptr: the kernel refused it
  c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  int inuse = 0;           // collectives in flight on it
  explicit Entry(c10::weak_intrusive_ptr<c10::StorageImpl> s)
      : storage(std::move(s)) {}
};

} // namespace collx_torch
