// Elementwise kernels: unary, binary, scale_in_place, where, cast, and the
// half widenings (to_f32, from_f32) every other kernel file uses. The CUDA
// twin of ops/cpu/cpu_elementwise.cpp: the same dtypes taken and given, the
// same scalar ops (Note [Kernels from the table on the device]), halves
// computed in f32 and rounded once (ops/core/half_bits.h's rounding, the
// CPU's own).
//
// Broadcast operands are read through their broadcast strides over the
// coalesced output (Note [Broadcast without materialising] in
// ops/cpu/cpu_common.h; ops/cuda/cuda_index.h's make_walk), never copied
// out; operands of the output's size take a flat loop without the walk's
// divisions.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/core/elementwise_scalar.h"
#include "ops/core/half_bits.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

// The names ops/core/elementwise.def's SS_CPU and SS_CPU_INT columns call.
// The integer ones that can fail are BinaryScalar's members below.
using scalar::float_floordiv;
using scalar::float_mod;
using scalar::stable_sigmoid;
using scalar::wrapping_add;
using scalar::wrapping_mul;
using scalar::wrapping_neg;
using scalar::wrapping_sub;

// Integers to a negative power (other than of 1 or -1): the CPU throws
// invalid_argument; a kernel writes 0 and raises this bit (Note [Errors of
// the scalar ops] in ops/core/elementwise_scalar.h), kNegativeIntegerPower.

std::string op_does_not_take(int op, DType d) {
  return "op " + std::to_string(op) + " does not take " + types::dtype_name(d);
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  return backend::broadcast_shapes(a, b, kBackend, op);
}

// Async device-to-device copy on stream() (Floor of ints, the identity).
Tensor copy_of(const Tensor& x) {
  Tensor out = empty(x.shape(), x.dtype());
  if (x.nbytes())
    SS_CUDA_CHECK(cudaMemcpyAsync(
        out.raw(), x.raw(), x.nbytes(), cudaMemcpyDeviceToDevice, stream()));
  return out;
}

// Note [Kernels from the table on the device]
// As on the CPU (Note [Kernels from the table] in cpu_elementwise.cpp),
// each row of ops/core/elementwise.def is one case, its SS_CPU column for
// floats and SS_CPU_INT for ints, here expanded in __device__ functions
// (std::exp and the like are device functions under nvcc; the helpers are
// ops/core/elementwise_scalar.h's, SS_HD). The op is a switch inside the
// kernel, uniform over the launch, rather than a template parameter: one
// kernel per dtype and output kind instead of one per (op, dtype) keeps
// the compile short, and a memory-bound loop does not feel the branch. A
// dtype the kind does not take never reaches a kernel: the host's
// *_gives below fails first, from the same rows.
#define SS_CPU(e) e
#define SS_CPU_INT(e) e

// --------------------------------------------------------------- unary

// What a unary op gives for a dtype (halves are widened before).
enum class Gives { Same, Bool, Copy, Nothing };

Gives unary_gives(UnaryOp op, DType d) {
  const bool f = d == DType::F32 || d == DType::F64, b = d == DType::Bool;
  switch (op) {
#define SS_UNARY_FLOAT(Enum, ...) \
  case UnaryOp::Enum:             \
    return f ? Gives::Same : Gives::Nothing;
#define SS_UNARY_SIGNED(Enum, ...) \
  case UnaryOp::Enum:              \
    return b ? Gives::Nothing : Gives::Same;
#define SS_UNARY_PREDICATE(Enum, ...) \
  case UnaryOp::Enum:                 \
    return Gives::Bool;
#define SS_UNARY_LOGICAL(Enum, ...) \
  case UnaryOp::Enum:               \
    return b ? Gives::Bool : Gives::Nothing;
#define SS_UNARY_ROUNDING(Enum, ...) \
  case UnaryOp::Enum:                \
    return f ? Gives::Same : b ? Gives::Nothing : Gives::Copy;
#include "ops/core/elementwise.def"
  }
  return Gives::Nothing;
}

// The unary ops that give the operand's dtype.
template <class T>
__device__ T unary_same(UnaryOp op, T x) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  switch (op) {
#define SS_UNARY_FLOAT(Enum, name, doc, cpu, ref, vjp) \
  case UnaryOp::Enum:                                  \
    if constexpr (kFloat) return cpu;                  \
    break;
#define SS_UNARY_SIGNED(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  case UnaryOp::Enum:                                            \
    if constexpr (kFloat)                                        \
      return cpu;                                                \
    else if constexpr (!kBool)                                   \
      return cpu_int;                                            \
    break;
#define SS_UNARY_ROUNDING(Enum, name, doc, cpu) \
  case UnaryOp::Enum:                           \
    if constexpr (kFloat) return cpu;           \
    break;
#include "ops/core/elementwise.def"
  }
  return x;  // not reached (unary_gives)
}

// The unary ops that give bool.
template <class T>
__device__ bool unary_bool(UnaryOp op, T x) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  switch (op) {
#define SS_UNARY_PREDICATE(Enum, name, doc, cpu, cpu_int, ref) \
  case UnaryOp::Enum:                                          \
    if constexpr (kFloat)                                      \
      return cpu;                                              \
    else                                                       \
      return cpu_int;
#define SS_UNARY_LOGICAL(Enum, name, doc, cpu, ref) \
  case UnaryOp::Enum:                               \
    if constexpr (kBool) return cpu;                \
    break;
#include "ops/core/elementwise.def"
  }
  return false;  // not reached (unary_gives)
}

template <class T>
Tensor unary_typed(UnaryOp op, const Tensor& x, Gives gives) {
  const int64_t n = x.numel();
  const T* px = ptr<T>(x);
  if (gives == Gives::Bool) {
    Tensor out = empty(x.shape(), DType::Bool);
    bool* po = ptr<bool>(out);
    for_each(n, "unary", [=] __device__(int64_t i) {
      po[i] = unary_bool<T>(op, px[i]);
    });
    return out;
  }
  Tensor out = empty(x.shape(), x.dtype());
  T* po = ptr<T>(out);
  for_each(n, "unary", [=] __device__(int64_t i) {
    po[i] = unary_same<T>(op, px[i]);
  });
  return out;
}

// -------------------------------------------------------------- binary

Gives binary_gives(BinaryOp op, DType d) {
  const bool f = d == DType::F32 || d == DType::F64, b = d == DType::Bool;
  switch (op) {
#define SS_BINARY_ARITH(Enum, ...) \
  case BinaryOp::Enum:             \
    return b ? Gives::Nothing : Gives::Same;
#define SS_BINARY_TRUEDIV(Enum, ...) \
  case BinaryOp::Enum:               \
    return f ? Gives::Same : Gives::Nothing;
#define SS_BINARY_EXTREMUM(Enum, ...) \
  case BinaryOp::Enum:                \
    return Gives::Same;
#define SS_BINARY_COMPARE(Enum, ...) \
  case BinaryOp::Enum:               \
    return Gives::Bool;
#define SS_BINARY_LOGICAL(Enum, ...) \
  case BinaryOp::Enum:               \
    return Gives::Bool;
#include "ops/core/elementwise.def"
  }
  return Gives::Nothing;
}

// The binary scalar ops of one dtype. The integer ones that can fail are
// members, so the table's int_floordiv(a, b) finds them first: a zero
// divisor (or a negative power) gives 0 and raises its bit of the device's
// error word, which the host turns into the CPU's error later (Note
// [Errors of the scalar ops]).
template <class T>
struct BinaryScalar {
  BinaryOp op;
  unsigned* err;

  __device__ T int_floordiv(T a, T b) const {
    if (b == 0) {
      atomicOr(err, kIntegerDivisionByZero);
      return T(0);
    }
    return scalar::int_floordiv_nonzero(a, b);
  }
  __device__ T int_mod(T a, T b) const {
    if (b == 0) {
      atomicOr(err, kIntegerDivisionByZero);
      return T(0);
    }
    return scalar::int_mod_nonzero(a, b);
  }
  __device__ T int_pow(T a, T b) const {
    if (!scalar::int_pow_defined(a, b)) {
      atomicOr(err, kNegativeIntegerPower);
      return T(0);
    }
    return scalar::int_pow_defined_wrapping(a, b);
  }

  // The ops that give T.
  __device__ T same(T a, T b) const {
    constexpr bool kFloat = std::is_floating_point_v<T>;
    constexpr bool kBool = std::is_same_v<T, bool>;
    switch (op) {
#define SS_BINARY_ARITH(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  case BinaryOp::Enum:                                           \
    if constexpr (kFloat)                                        \
      return cpu;                                                \
    else if constexpr (!kBool)                                   \
      return cpu_int;                                            \
    break;
#define SS_BINARY_TRUEDIV(Enum, name, doc, cpu, ref, vjp) \
  case BinaryOp::Enum:                                    \
    if constexpr (kFloat) return cpu;                     \
    break;
#define SS_BINARY_EXTREMUM(Enum, name, doc, cpu, ref, vjp) \
  case BinaryOp::Enum:                                     \
    return cpu;
#include "ops/core/elementwise.def"
      default:
        break;
    }
    return a;  // not reached (binary_gives)
  }

  // The ops that give bool.
  __device__ bool to_bool(T a, T b) const {
    switch (op) {
#define SS_BINARY_COMPARE(Enum, name, doc, cpu, ref) \
  case BinaryOp::Enum:                               \
    return cpu;
#define SS_BINARY_LOGICAL(Enum, name, doc, cpu, ref) \
  case BinaryOp::Enum:                               \
    return cpu;
#include "ops/core/elementwise.def"
      default:
        break;
    }
    return false;  // not reached (binary_gives)
  }

  template <bool kBool>
  __device__ std::conditional_t<kBool, bool, T> apply(T a, T b) const {
    if constexpr (kBool)
      return to_bool(a, b);
    else
      return same(a, b);
  }
};

// out = op(a, b) for O = T (kBool false) or bool; out is contiguous.
template <class T, bool kBool>
void binary_run(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  using O = std::conditional_t<kBool, bool, T>;
  const int64_t n = out.numel();
  if (n == 0) return;
  const BinaryScalar<T> s{op, device_error_word()};
  const T* pa = ptr<T>(a);
  const T* pb = ptr<T>(b);
  O* po = ptr<O>(out);
  if (a.numel() == n && b.numel() == n) {  // same layout (up to leading 1s)
    for_each(n, "binary", [=] __device__(int64_t i) {
      po[i] = s.template apply<kBool>(pa[i], pb[i]);
    });
    return;
  }
  const StridedWalk<2> w =
      make_walk<2>(out.shape(),
                   {broadcast_strides(a.shape(), out.shape()),
                    broadcast_strides(b.shape(), out.shape())},
                   "binary");
  for_each(n, "binary", [=] __device__(int64_t i) {
    int64_t off[2];
    w.offsets(i, off);
    po[i] = s.template apply<kBool>(pa[off[0]], pb[off[1]]);
  });
}

template <class T>
Tensor binary_typed(BinaryOp op,
                    const Tensor& a,
                    const Tensor& b,
                    const Shape& os,
                    Gives gives) {
  if (gives == Gives::Bool) {
    Tensor out = empty(os, DType::Bool);
    binary_run<T, true>(op, a, b, out);
    return out;
  }
  Tensor out = empty(os, a.dtype());
  binary_run<T, false>(op, a, b, out);
  return out;
}

#undef SS_CPU
#undef SS_CPU_INT

// ---------------------------------------------------------------- cast

template <class S, class D>
void convert_run(const Tensor& x, Tensor& out) {
  const S* s = ptr<S>(x);
  D* d = ptr<D>(out);
  for_each(x.numel(), "cast", [=] __device__(int64_t i) {
    d[i] = scalar::convert_value<S, D>(s[i]);
  });
}

// Halves widened exactly to f32, and f32 rounded to halves.
void widen_run(const Tensor& x, Tensor& out) {
  const uint16_t* s = ptr<uint16_t>(x);
  float* d = ptr<float>(out);
  if (x.dtype() == DType::BF16)
    for_each(x.numel(), "cast", [=] __device__(int64_t i) {
      d[i] = halves::bf16_to_float(s[i]);
    });
  else
    for_each(x.numel(), "cast", [=] __device__(int64_t i) {
      d[i] = halves::f16_to_float(s[i]);
    });
}

void narrow_run(const Tensor& x, Tensor& out) {
  const float* s = ptr<float>(x);
  uint16_t* d = ptr<uint16_t>(out);
  if (out.dtype() == DType::BF16)
    for_each(x.numel(), "cast", [=] __device__(int64_t i) {
      d[i] = halves::float_to_bf16(s[i]);
    });
  else
    for_each(x.numel(), "cast", [=] __device__(int64_t i) {
      d[i] = halves::float_to_f16(s[i]);
    });
}

// ---------------------------------------------------------------- where

template <class B>
void where_run(const Tensor& cond,
               const Tensor& a,
               const Tensor& b,
               Tensor& out) {
  const int64_t n = out.numel();
  const bool* c = ptr<bool>(cond);
  const B* pa = ptr<B>(a);
  const B* pb = ptr<B>(b);
  B* po = ptr<B>(out);
  if (cond.numel() == n && a.numel() == n && b.numel() == n) {
    for_each(n, "where", [=] __device__(int64_t i) {
      po[i] = c[i] ? pa[i] : pb[i];
    });
    return;
  }
  const Shape& os = out.shape();
  const StridedWalk<3> w = make_walk<3>(os,
                                        {broadcast_strides(cond.shape(), os),
                                         broadcast_strides(a.shape(), os),
                                         broadcast_strides(b.shape(), os)},
                                        "where");
  for_each(n, "where", [=] __device__(int64_t i) {
    int64_t off[3];
    w.offsets(i, off);
    po[i] = c[off[0]] ? pa[off[1]] : pb[off[2]];
  });
}

// ------------------------------------------------------- scale_in_place

// binary's Mul, from its row of the table (Mul cannot fail: no error word).
template <class T>
void scale_run(Tensor& x, T s) {
  T* p = ptr<T>(x);
  const BinaryScalar<T> mul{BinaryOp::Mul, nullptr};
  for_each(x.numel(), "scale_in_place", [=] __device__(int64_t i) {
    p[i] = mul.same(p[i], s);
  });
}

void scale_half_run(Tensor& x, float s) {
  uint16_t* p = ptr<uint16_t>(x);
  const BinaryScalar<float> mul{BinaryOp::Mul, nullptr};
  if (x.dtype() == DType::BF16)
    for_each(x.numel(), "scale_in_place", [=] __device__(int64_t i) {
      p[i] = halves::float_to_bf16(mul.same(halves::bf16_to_float(p[i]), s));
    });
  else
    for_each(x.numel(), "scale_in_place", [=] __device__(int64_t i) {
      p[i] = halves::float_to_f16(mul.same(halves::f16_to_float(p[i]), s));
    });
}

// The 0-d [s] of [d] that the CPU's binary(Mul, x, Tensor::full({}, s, d))
// multiplies by, converted on the host by Tensor::set itself.
Tensor host_scalar(double s, DType d) {
  return Tensor::full({}, s, d);
}

}  // namespace

// ------------------------------------------------------------ entry points

Tensor cast(const Tensor& x, DType to) {
  const DType from = x.dtype();
  if (from == to) return x.detach();
  if (is_half(from)) {  // widen exactly, then cast the f32
    Tensor f = empty(x.shape(), DType::F32);
    widen_run(x, f);
    return to == DType::F32 ? f : cast(f, to);
  }
  if (is_half(to)) {  // round from f32 (f64 goes through f32, as torch)
    Tensor f = from == DType::F32 ? x : cast(x, DType::F32);
    Tensor out = empty(x.shape(), to);
    narrow_run(f, out);
    return out;
  }
  Tensor out = empty(x.shape(), to);
  visit(from, "cast", [&](auto s) {
    visit(to, "cast", [&](auto d) {
      convert_run<decltype(s), decltype(d)>(x, out);
    });
  });
  return out;
}

Tensor to_f32(const Tensor& x) {
  return is_half(x.dtype()) ? cast(x, DType::F32) : x;
}

Tensor from_f32(const Tensor& x, DType to) {
  return cast(x, to);
}

Tensor unary(UnaryOp op, const Tensor& x) {
  if (is_half(x.dtype())) {
    Tensor r = unary(op, to_f32(x));
    return r.dtype() == DType::Bool ? r : from_f32(r, x.dtype());
  }
  const Gives gives = unary_gives(op, x.dtype());
  if (gives == Gives::Nothing)
    fail("unary", op_does_not_take(static_cast<int>(op), x.dtype()));
  if (gives == Gives::Copy) return copy_of(x);
  return visit(x.dtype(), "unary", [&](auto t) {
    return unary_typed<decltype(t)>(op, x, gives);
  });
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  backend::check_binary_dtypes(a, b, kBackend);
  if (is_half(a.dtype())) {
    Tensor r = binary(op, to_f32(a), to_f32(b));
    return r.dtype() == DType::Bool ? r : from_f32(r, a.dtype());
  }
  const Gives gives = binary_gives(op, a.dtype());
  if (gives == Gives::Nothing)
    fail("binary", op_does_not_take(static_cast<int>(op), a.dtype()));
  const Shape os = broadcast_shapes(a.shape(), b.shape(), "binary");
  return visit(a.dtype(), "binary", [&](auto t) {
    return binary_typed<decltype(t)>(op, a, b, os, gives);
  });
}

void scale_in_place(Tensor& x, double s) {
  // The bits of binary(Mul, x, a 0-d s of x's dtype), as the CPU's: f32
  // and f64 one rounded product; halves the f32 product of the widened
  // values, rounded once; ints a wrapping product by s as Tensor::set
  // converts it. Bools: Mul does not take them.
  switch (x.dtype()) {
    case DType::F32:
      return scale_run<float>(x, static_cast<float>(s));
    case DType::F64:
      return scale_run<double>(x, s);
    case DType::BF16:
      return scale_half_run(
          x,
          halves::bf16_to_float(*host_scalar(s, x.dtype()).data<uint16_t>()));
    case DType::F16:
      return scale_half_run(
          x, halves::f16_to_float(*host_scalar(s, x.dtype()).data<uint16_t>()));
    case DType::I32:
      return scale_run<int32_t>(x, *host_scalar(s, x.dtype()).data<int32_t>());
    case DType::I64:
      return scale_run<int64_t>(x, *host_scalar(s, x.dtype()).data<int64_t>());
    default:
      fail("scale_in_place",
           op_does_not_take(static_cast<int>(BinaryOp::Mul), x.dtype()));
  }
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (cond.dtype() != DType::Bool) fail("where", "the condition must be bool");
  if (a.dtype() != b.dtype()) fail("where", "a and b must share a dtype");
  const Shape os = broadcast_shapes(
      broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = empty(os, a.dtype());
  if (out.numel() == 0) return out;
  // Only bytes move, so every dtype (halves too) goes by its element size.
  visit_bytes(a.dtype(),
              [&](auto tag) { where_run<decltype(tag)>(cond, a, b, out); });
  return out;
}

}  // namespace ss::ops::cuda
