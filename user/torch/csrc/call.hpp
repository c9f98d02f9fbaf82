// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// One c10d call being turned into collx collectives: the buffers collx
// gets (the tensors themselves, or contiguous staging copies), their
// registrations, the submissions and the work that reports them.
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include <collx.h>

#include "work.hpp"

namespace collx_torch {

class ProcessGroupCollx;

class Call {
 public:
  Call(ProcessGroupCollx& pg, c10d::OpType type, const char* title,
       std::string what, const std::vector<at::Tensor>& inputs);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  // What collx reads: @t when contiguous (registered), else a copy.
  at::Tensor input(const at::Tensor& t);
  // What collx writes, @t receiving it at the end: @t when contiguous
  // (registered), else staging that starts as a copy of @t when @load.
  at::Tensor output(const at::Tensor& t, bool load);
  // One flat buffer for a list of equal tensors: their own memory when
  // they lie back to back in one storage, else staging, copied in from
  // them when @load and back out to them when @store.
  at::Tensor flat(const std::vector<at::Tensor>& ts, bool load, bool store);

  // The submissions after this one start together (one collx group).
  void group();
  void submit(enum collx_coll coll, enum collx_dtype dtype,
              enum collx_redop redop, int root, size_t count,
              const void* sendbuf, void* recvbuf);

  WorkCollx& work() { return *work_; }
  // Ends the group, hands the work to the process group and returns it.
  c10::intrusive_ptr<c10d::Work> finish(std::vector<at::Tensor> outputs);

 private:
  friend class ProcessGroupCollx;
  void registerBuffer(const at::Tensor& t);
  int endGroup();

  ProcessGroupCollx& pg_;
  c10::intrusive_ptr<WorkCollx> work_;
  bool grouped_ = false;
  bool launched_ = false;
};

// Throws unless @t is a dense CPU tensor.
void checkCpu(const at::Tensor& t, const char* what);
// Throws unless @ts holds exactly one tensor (one device per process).
void checkSingle(const std::vector<at::Tensor>& ts, const char* what);
// The byte ranges of two contiguous buffers overlap.
bool overlap(const at::Tensor& a, const at::Tensor& b);
// Throws unless every tensor of @ts has @t's dtype and number of elements.
void checkLike(const std::vector<at::Tensor>& ts, const at::Tensor& t,
               const char* what);

} // namespace collx_torch
