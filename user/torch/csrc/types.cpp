// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// torch dtypes and reduce ops as collx knows them.
#include "types.hpp"

namespace collx_torch {

namespace {

// collx's own element type for @t; false when it has none.
bool nativeType(at::ScalarType t, enum collx_dtype* d) {
  switch (t) {
    case at::kChar: *d = COLLX_INT8; return true;
    case at::kByte: *d = COLLX_UINT8; return true;
    case at::kInt: *d = COLLX_INT32; return true;
    case at::kLong: *d = COLLX_INT64; return true;
    case at::kHalf: *d = COLLX_FP16; return true;
    case at::kBFloat16: *d = COLLX_BF16; return true;
    case at::kFloat: *d = COLLX_FP32; return true;
    case at::kDouble: *d = COLLX_FP64; return true;
    default: return false;
  }
}

const char* opName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

} // namespace

ReduceType reduceType(const at::Tensor& t, const c10d::ReduceOp& op,
                      const char* what) {
  ReduceType r{COLLX_FP32, COLLX_OP_SUM, 1};
  const auto o = static_cast<c10d::ReduceOp::RedOpType>(op);

  switch (o) {
    case c10d::ReduceOp::SUM: r.redop = COLLX_OP_SUM; break;
    case c10d::ReduceOp::AVG: r.redop = COLLX_OP_AVG; break;
    case c10d::ReduceOp::PRODUCT: r.redop = COLLX_OP_PROD; break;
    case c10d::ReduceOp::MIN: r.redop = COLLX_OP_MIN; break;
    case c10d::ReduceOp::MAX: r.redop = COLLX_OP_MAX; break;
    default:
      TORCH_CHECK(false, "collx ", what, ": ReduceOp.", opName(o),
                  " is not supported (collx reduces with SUM, PRODUCT, MIN, "
                  "MAX and AVG)");
  }
  const auto st = t.scalar_type();
  if (nativeType(st, &r.dtype))
    return r;
  if (st == at::kComplexFloat || st == at::kComplexDouble) {
    TORCH_CHECK(o == c10d::ReduceOp::SUM || o == c10d::ReduceOp::AVG,
                "collx ", what, ": ReduceOp.", opName(o),
                " is undefined on complex tensors (SUM and AVG are)");
    r.dtype = st == at::kComplexFloat ? COLLX_FP32 : COLLX_FP64;
    r.per_elem = 2;
    return r;
  }
  if (st == at::kBool) {
    // A bool is 0 or 1 in one byte: MAX is "any", MIN is "all".
    TORCH_CHECK(o != c10d::ReduceOp::AVG, "collx ", what,
                ": ReduceOp.AVG is undefined on bool tensors");
    r.dtype = COLLX_UINT8;
    r.redop = o == c10d::ReduceOp::SUM || o == c10d::ReduceOp::MAX
        ? COLLX_OP_MAX : COLLX_OP_MIN;
    return r;
  }
  TORCH_CHECK(false, "collx ", what, ": cannot reduce ", st,
              " tensors: collx reduces int8, uint8, int32, int64, float16, "
              "bfloat16, float32 and float64 (complex with SUM/AVG, bool as "
              "any/all); convert the tensor first");
}

enum collx_dtype moveType(at::ScalarType t, int64_t numel, size_t* count) {
  enum collx_dtype d;

  if (nativeType(t, &d)) {
    *count = static_cast<size_t>(numel);
    return d;
  }
  *count = static_cast<size_t>(numel) * c10::elementSize(t);
  return COLLX_UINT8;
}

std::string reduceName(const c10d::ReduceOp& op) {
  return opName(static_cast<c10d::ReduceOp::RedOpType>(op));
}

std::string dtypeName(at::ScalarType t) {
  switch (t) {
    case at::kChar: return "int8";
    case at::kByte: return "uint8";
    case at::kShort: return "int16";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kBool: return "bool";
    case at::kComplexFloat: return "complex64";
    case at::kComplexDouble: return "complex128";
    default: return c10::toString(t);
  }
}

std::string describe(const char* call, const at::Tensor& t,
                     const c10d::ReduceOp* op) {
  std::string s = std::string(call) + " (" + dtypeName(t.scalar_type());
  if (op)
    s += " " + reduceName(*op);
  return s + ", " + std::to_string(t.numel()) + " elements)";
}

} // namespace collx_torch
