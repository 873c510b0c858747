#pragma once
// Dtype dispatch shared by the backends: from a runtime DType to a C++
// element type, so that every backend accepts and refuses the same dtypes
// with the same words. Plain host C++ (g++ and nvcc both compile it).

#include <cstdint>
#include <string>

#include "ops/backend/backend_error.h"
#include "ops/core/tensor.h"

namespace ss::ops::backend {

inline bool is_half(DType d) {
  return d == DType::BF16 || d == DType::F16;
}

/// Calls f(T{}) with T the C++ type of [d] (f32, f64, i32, i64, bool);
/// half types are not dispatched here (callers widen them first). Any
/// other dtype: fail(backend, op, "unsupported dtype ...").
template <class F>
decltype(auto) visit(DType d, const char* backend, const char* op, F&& f) {
  switch (d) {
    case DType::F32:
      return f(float{});
    case DType::F64:
      return f(double{});
    case DType::I32:
      return f(int32_t{});
    case DType::I64:
      return f(int64_t{});
    case DType::Bool:
      return f(bool{});
    default:
      break;
  }
  fail(backend, op, std::string("unsupported dtype ") + types::dtype_name(d));
}

/// Calls f(U{}) with U an unsigned integer of [d]'s element size (for ops
/// that only move bytes).
template <class F>
decltype(auto) visit_bytes(DType d, F&& f) {
  switch (types::dtype_size(d)) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

/// Calls f(T{}) for f32 / f64; any other dtype fails with [refusal]
/// followed by the dtype's name (ops word their refusal differently).
template <class F>
decltype(auto) visit_float_or(
    DType d, const char* backend, const char* op, const char* refusal, F&& f) {
  if (d == DType::F32) return f(float{});
  if (d == DType::F64) return f(double{});
  fail(backend, op, std::string(refusal) + types::dtype_name(d));
}

/// visit_float_or for the row kernels (softmax, norms, gelu, attention).
template <class F>
decltype(auto) visit_float(DType d,
                           const char* backend,
                           const char* op,
                           F&& f) {
  return visit_float_or(d, backend, op, "needs f32 or f64, not ", f);
}

}  // namespace ss::ops::backend
