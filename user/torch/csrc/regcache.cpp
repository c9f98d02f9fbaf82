// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Registrations of tensor storages with a collx communicator, cached.
#include "regcache.hpp"

#include <cerrno>

namespace collx_torch {

RegCache::RegCache(struct collx_comm* comm, size_t max_entries,
                   size_t max_bytes, size_t min_bytes)
    : comm_(comm), max_entries_(max_entries), max_bytes_(max_bytes),
      min_bytes_(min_bytes) {}

RegCache::~RegCache() {
  std::lock_guard<std::mutex> g(mu_);
  while (!lru_.empty())
    drop(lru_.begin());
}

bool RegCache::isStale(const Entry& e) const {
  auto s = e.storage.lock();
  // Freed, or its memory replaced (storage.resize_(), set_data_ptr()).
  return !s || reinterpret_cast<uintptr_t>(s->data()) != e.start ||
      s->nbytes() != e.nbytes;
}

void RegCache::drop(std::list<Entry>::iterator it) {
  if (it->handle && comm_) {
    // Only in use by nothing in flight (inuse == 0), so the one refusal
    // left is EBUSY after a failed collective: the comm is then in its
    // error state, takes no collective that the kernel could match with
    // the leftover, and frees it when destroyed.
    collx_mem_deregister(comm_, it->handle);
  }
  if (it->handle)
    st_.bytes -= it->nbytes;
  lru_.erase(it);
}

void RegCache::sweepLocked() {
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    // An entry in use belongs to a collective that holds its tensor, so it
    // cannot have been freed; only a replaced storage can get here.
    if (it->inuse == 0 && isStale(*it)) {
      st_.stale++;
      drop(it);
    }
    it = next;
  }
}

void RegCache::sweep() {
  std::lock_guard<std::mutex> g(mu_);
  sweepLocked();
}

bool RegCache::makeRoom(size_t bytes) {
  // Least recently used first: from the back.
  auto it = lru_.end();
  while ((lru_.size() >= max_entries_ || st_.bytes + bytes > max_bytes_) &&
         it != lru_.begin()) {
    --it;
    if (it->inuse)
      continue;
    auto victim = it;
    ++it;
    st_.evicted++;
    drop(victim);
  }
  return lru_.size() < max_entries_ && st_.bytes + bytes <= max_bytes_;
}

RegCache::Entry* RegCache::acquire(const at::Tensor& t) {
  std::lock_guard<std::mutex> g(mu_);
  sweepLocked();
  if (!comm_ || t.numel() == 0)
    return nullptr;
  const c10::Storage& storage = t.storage();
  const auto start = reinterpret_cast<uintptr_t>(storage.data());
  const size_t nbytes = storage.nbytes();
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (it->start != start || it->nbytes != nbytes)
      continue;
    // Not stale (swept above): the very storage, or one sharing its memory.
    lru_.splice(lru_.begin(), lru_, it);
    if (!it->handle)
      return nullptr;  // refused before: bounce without asking again
    st_.hits++;
    it->inuse++;
    return &*it;
  }
  if (!start || nbytes < min_bytes_ || nbytes > max_bytes_) {
    st_.skipped++;
    return nullptr;
  }
  if (!makeRoom(nbytes)) {
    st_.skipped++;
    return nullptr;
  }
  lru_.emplace_front(storage.getWeakStorageImpl());
  Entry& e = lru_.front();
  e.start = start;
  e.nbytes = nbytes;
  int err = collx_mem_register(comm_, reinterpret_cast<void*>(start), nbytes,
                               &e.handle);
  if (err) {
    // ENOMEM (RLIMIT_MEMLOCK), EFAULT (a file mapping): the kernel bounces
    // this storage instead; remember, so as not to ask on every use.
    e.handle = nullptr;
    st_.refused++;
    return nullptr;
  }
  st_.misses++;
  st_.bytes += nbytes;
  e.inuse = 1;
  return &e;
}

void RegCache::release(Entry* e) {
  if (!e)
    return;
  std::lock_guard<std::mutex> g(mu_);
  e->inuse--;
}

void RegCache::forget() {
  std::lock_guard<std::mutex> g(mu_);
  // Entries stay (works still in flight point at them) but are never
  // deregistered nor handed out again.
  comm_ = nullptr;
}

RegStats RegCache::stats() {
  std::lock_guard<std::mutex> g(mu_);
  RegStats s = st_;
  s.entries = lru_.size();
  return s;
}

} // namespace collx_torch
