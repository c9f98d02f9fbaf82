// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// torch dtypes and reduce ops as collx knows them.
#pragma once

#include <cstddef>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <collx.h>

namespace collx_torch {

// What collx reduces a tensor as: its element type, its reduction and how
// many collx elements one torch element is (2 for a complex one).
struct ReduceType {
  enum collx_dtype dtype;
  enum collx_redop redop;
  size_t per_elem;
};

// Reductions: int8, uint8, int32, int64, float16, bfloat16, float32 and
// float64 as themselves; complex64/128 as float pairs for SUM and AVG;
// bool as uint8 with SUM/MAX meaning "any" and PRODUCT/MIN "all", as
// NCCL's backend does.  Anything else throws a c10::Error saying why.
ReduceType reduceType(const at::Tensor& t, const c10d::ReduceOp& op,
                      const char* what);

// Data movement: the tensor's own collx type when collx has one, else its
// bytes as uint8 (bool, int16, complex: nothing is computed on them).
// @count receives the number of collx elements of @numel torch elements.
enum collx_dtype moveType(at::ScalarType t, int64_t numel, size_t* count);

// "SUM": for error messages.
std::string reduceName(const c10d::ReduceOp& op);

// "float32", as torch.float32 prints.
std::string dtypeName(at::ScalarType t);

// "allreduce (float32 SUM, 1024 elements)": the call in error messages.
std::string describe(const char* call, const at::Tensor& t,
                     const c10d::ReduceOp* op = nullptr);

} // namespace collx_torch
