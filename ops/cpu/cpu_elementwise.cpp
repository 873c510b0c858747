// Elementwise kernels: unary, binary, where, cast.
//
// Broadcast operands are read by strides, never copied out (Note
// [Broadcast without materialising] in cpu_common.h): every inner loop is
// a plain loop over runs and repeated values that the compiler vectorises.

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_scalar.h"
#include "ops/cpu/cpu_vmath.h"
#include "ops/cpu/cpu_vrows.h"

namespace ss::ops::cpu {

void fail(const char* op, const std::string& msg) {
  backend::fail(kBackend, op, msg);
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  return backend::broadcast_shapes(a, b, kBackend, op);
}

namespace {

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::I64;
  else
    return DType::Bool;
}

// ---------------------------------------------------------------- unary

template <class T, class O, class F>
Tensor map1(const Tensor& x, DType out_dtype, F f) {
  Tensor out = Tensor::empty(x.shape(), out_dtype);
  const T* p = x.data<T>();
  O* o = out.data<O>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = static_cast<O>(f(p[i]));
  return out;
}

// Note [Kernels from the table]
// Each row of ops/core/elementwise.def becomes one case: its SS_CPU column as a
// lambda of the operand's type T for floats (SS_CPU_INT for ints where the
// kind keeps them), instantiated only for the dtypes the kind takes, so
// map1 and binary_loop inline the scalar op into plain loops. A dtype the
// kind does not take falls out of the switch to fail().
#define SS_CPU(e) e
#define SS_CPU_INT(e) e

template <class T>
Tensor unary_typed(UnaryOp op, const Tensor& in) {
  constexpr DType D = dtype_of<T>();
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  auto same = [&](auto f) { return map1<T, T>(in, D, f); };
  auto pred = [&](auto f) { return map1<T, bool>(in, DType::Bool, f); };
  switch (op) {
#define SS_UNARY_FLOAT(Enum, name, doc, cpu, ref, vjp)               \
  case UnaryOp::Enum:                                                \
    if constexpr (kFloat) return same([](T x) -> T { return cpu; }); \
    break;
#define SS_UNARY_SIGNED(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  case UnaryOp::Enum:                                            \
    if constexpr (kFloat)                                        \
      return same([](T x) -> T { return cpu; });                 \
    else if constexpr (!kBool)                                   \
      return same([](T x) -> T { return cpu_int; });             \
    break;
#define SS_UNARY_PREDICATE(Enum, name, doc, cpu, cpu_int, ref) \
  case UnaryOp::Enum:                                          \
    if constexpr (kFloat)                                      \
      return pred([](T x) -> bool { return cpu; });            \
    else                                                       \
      return pred([](T) -> bool { return cpu_int; });
#define SS_UNARY_LOGICAL(Enum, name, doc, cpu, ref)                    \
  case UnaryOp::Enum:                                                  \
    if constexpr (kBool) return pred([](T x) -> bool { return cpu; }); \
    break;
#define SS_UNARY_ROUNDING(Enum, name, doc, cpu)  \
  case UnaryOp::Enum:                            \
    if constexpr (kFloat)                        \
      return same([](T x) -> T { return cpu; }); \
    else if constexpr (!kBool)                   \
      return in.clone();                         \
    break;
#include "ops/core/elementwise.def"
  }
  fail("unary",
       std::string("op ") + std::to_string(static_cast<int>(op)) +
           " does not take " + types::dtype_name(D));
}

// ---------------------------------------------------------------- binary

// The row kernel of a binary op: [n] outputs from operands read with
// strides [sa] and [sb], each 0 (one value repeated) or 1 (a run); the
// three common pairs are separate loops so each vectorises.
template <class T, class O, class F>
inline void binary_row(
    const T* a, int64_t sa, const T* b, int64_t sb, O* o, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    T y = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], y);
  } else if (sa == 0 && sb == 1) {
    T x = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = f(x, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i * sa], b[i * sb]);
  }
}

// Note [Broadcast without materialising] (cpu_common.h): the operands are
// walked by strides over the coalesced output.
template <class T, class O, class F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  O* po = out.data<O>();
  int64_t n = out.numel();
  if (n == 0) return;
  if (a.numel() == n && b.numel() == n) {  // same layout (up to leading 1s)
    binary_row(pa, 1, pb, 1, po, n, f);
    return;
  }
  auto [shape, st] = broadcast_walk<2>(out.shape(), {&a.shape(), &b.shape()});
  for_rows<3>(shape, st, [&](auto off, int64_t len, auto in) {
    binary_row(pa + off[1], in[1], pb + off[2], in[2], po + off[0], len, f);
  });
}

template <class T>
Tensor binary_typed(BinaryOp op,
                    const Tensor& ta,
                    const Tensor& tb,
                    const Shape& os) {
  constexpr DType D = dtype_of<T>();
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  auto arith = [&](auto f) {
    Tensor out = Tensor::empty(os, D);
    binary_loop<T, T>(ta, tb, out, f);
    return out;
  };
  auto cmp = [&](auto f) {
    Tensor out = Tensor::empty(os, DType::Bool);
    binary_loop<T, bool>(ta, tb, out, f);
    return out;
  };
  switch (op) {
#define SS_BINARY_ARITH(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  case BinaryOp::Enum:                                           \
    if constexpr (kFloat)                                        \
      return arith([](T a, T b) -> T { return cpu; });           \
    else if constexpr (!kBool)                                   \
      return arith([](T a, T b) -> T { return cpu_int; });       \
    break;
#define SS_BINARY_TRUEDIV(Enum, name, doc, cpu, ref, vjp)                  \
  case BinaryOp::Enum:                                                     \
    if constexpr (kFloat) return arith([](T a, T b) -> T { return cpu; }); \
    break;
#define SS_BINARY_EXTREMUM(Enum, name, doc, cpu, ref, vjp) \
  case BinaryOp::Enum:                                     \
    return arith([](T a, T b) -> T { return cpu; });
#define SS_BINARY_COMPARE(Enum, name, doc, cpu, ref) \
  case BinaryOp::Enum:                               \
    return cmp([](T a, T b) -> bool { return cpu; });
#define SS_BINARY_LOGICAL(Enum, name, doc, cpu, ref) \
  case BinaryOp::Enum:                               \
    return cmp([](T a, T b) -> bool { return cpu; });
#include "ops/core/elementwise.def"
  }
  fail("binary",
       std::string("op ") + std::to_string(static_cast<int>(op)) +
           " does not take " + types::dtype_name(D));
}

#undef SS_CPU
#undef SS_CPU_INT

// ---------------------------------------------------------------- cast

// The element's conversion is shared with the CUDA kernels
// (ops/core/elementwise_scalar.h).
template <class S, class D>
void convert(const S* s, D* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = scalar::convert_value<S, D>(s[i]);
}

}  // namespace

Tensor cast(const Tensor& x, DType to) {
  DType from = x.dtype();
  if (from == to) return x.detach();
  int64_t n = x.numel();
  if (is_half(from)) {  // widen exactly, then cast the f32
    Tensor f = Tensor::empty(x.shape(), DType::F32);
    const uint16_t* s = x.data<uint16_t>();
    float* d = f.data<float>();
    if (from == DType::BF16)
      for (int64_t i = 0; i < n; ++i) d[i] = bf16_to_float(s[i]);
    else
      for (int64_t i = 0; i < n; ++i) d[i] = f16_to_float(s[i]);
    return to == DType::F32 ? f : cast(f, to);
  }
  if (is_half(to)) {  // round from f32 (f64 goes through f32, as torch)
    Tensor f = from == DType::F32 ? x : cast(x, DType::F32);
    Tensor out = Tensor::empty(x.shape(), to);
    const float* s = f.data<float>();
    uint16_t* d = out.data<uint16_t>();
    if (to == DType::BF16)
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_bf16(s[i]);
    else
      for (int64_t i = 0; i < n; ++i) d[i] = float_to_f16(s[i]);
    return out;
  }
  Tensor out = Tensor::empty(x.shape(), to);
  visit(from, "cast", [&](auto s) {
    using S = decltype(s);
    visit(to, "cast", [&](auto d) {
      using D = decltype(d);
      convert(x.data<S>(), out.data<D>(), n);
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

namespace {

// The f32 functions with a vector kernel (Note [Vector transcendentals]).
std::optional<vmath::Fn> vector_fn(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
      return vmath::Fn::Exp;
    case UnaryOp::Log:
      return vmath::Fn::Log;
    case UnaryOp::Log1p:
      return vmath::Fn::Log1p;
    case UnaryOp::Expm1:
      return vmath::Fn::Expm1;
    case UnaryOp::Tanh:
      return vmath::Fn::Tanh;
    case UnaryOp::Erf:
      return vmath::Fn::Erf;
    case UnaryOp::Sigmoid:
      return vmath::Fn::Sigmoid;
    default:
      return std::nullopt;
  }
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  if (auto fn = vector_fn(op);
      fn && x.dtype() == DType::F32 && has_avx2_fma()) {
    Tensor out = Tensor::empty(x.shape(), DType::F32);
    vmath::apply_f32(*fn, x.data<float>(), out.data<float>(), x.numel());
    return out;
  }
  if (is_half(x.dtype())) {
    Tensor r = unary(op, to_f32(x));
    return r.dtype() == DType::Bool ? r : from_f32(r, x.dtype());
  }
  return visit(x.dtype(), "unary", [&](auto t) {
    return unary_typed<decltype(t)>(op, x);
  });
}

void scale_in_place(Tensor& x, double s) {
  // f32 and f64: one rounded product of two values of the dtype, as
  // binary's Mul by a 0-d s. The others (halves, ints) as binary computes
  // them, written back.
  const int64_t n = x.numel();
  if (x.dtype() == DType::F32) {
    const float f = static_cast<float>(s);
    float* p = x.data<float>();
    for (int64_t k = 0; k < n; ++k) p[k] *= f;
  } else if (x.dtype() == DType::F64) {
    double* p = x.data<double>();
    for (int64_t k = 0; k < n; ++k) p[k] *= s;
  } else {
    Tensor r = binary(BinaryOp::Mul, x, Tensor::full({}, s, x.dtype()));
    std::memcpy(x.raw(), r.raw(), size_t(n) * types::dtype_size(x.dtype()));
  }
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  backend::check_binary_dtypes(a, b, kBackend);
  if (is_half(a.dtype())) {
    Tensor r = binary(op, to_f32(a), to_f32(b));
    return r.dtype() == DType::Bool ? r : from_f32(r, a.dtype());
  }
  Shape os = broadcast_shapes(a.shape(), b.shape(), "binary");
  return visit(a.dtype(), "binary", [&](auto t) {
    return binary_typed<decltype(t)>(op, a, b, os);
  });
}

namespace {

// The row kernel of where: strides 0 or 1 (Note [Broadcast without
// materialising]); masked_fill's (mask run, x run, fill value) and the
// all-runs case get their own loops, so they vectorise as blends.
template <class T>
inline void where_row(const bool* c,
                      int64_t sc,
                      const T* a,
                      int64_t sa,
                      const T* b,
                      int64_t sb,
                      T* o,
                      int64_t n) {
  // f32 and i32 rows with a run of conditions: eight at a time (Note
  // [Vector row kernels]).
  if constexpr (std::is_same_v<T, uint32_t>)
    if (sc == 1 && sa <= 1 && sb <= 1 && has_avx2_fma())
      return vrows::select32(c, a, sa, b, sb, o, n);
  if (sc == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
  } else if (sc == 1 && sa == 1 && sb == 0) {
    T y = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : y;
  } else if (sc == 1 && sa == 0 && sb == 1) {
    T x = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x : b[i];
  } else if (sc == 1 && sa == 0 && sb == 0) {
    T x = *a, y = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x : y;
  } else if (sc == 0) {  // one condition for the whole row
    const T* src = *c ? a : b;
    int64_t s = *c ? sa : sb;
    for (int64_t i = 0; i < n; ++i) o[i] = src[i * s];
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? a[i * sa] : b[i * sb];
  }
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (cond.dtype() != DType::Bool) fail("where", "the condition must be bool");
  if (a.dtype() != b.dtype()) fail("where", "a and b must share a dtype");
  Shape os = broadcast_shapes(
      broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = Tensor::empty(os, a.dtype());
  int64_t n = out.numel();
  if (n == 0) return out;
  // Only bytes move, so every dtype (halves too) goes by its element size.
  visit_bytes(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* c = cond.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    if (cond.numel() == n && a.numel() == n && b.numel() == n) {
      where_row(c, 1, pa, 1, pb, 1, po, n);
      return;
    }
    auto [shape, st] =
        broadcast_walk<3>(out.shape(), {&cond.shape(), &a.shape(), &b.shape()});
    for_rows<4>(shape, st, [&](auto off, int64_t len, auto in) {
      where_row(c + off[1],
                in[1],
                pa + off[2],
                in[2],
                pb + off[3],
                in[3],
                po + off[0],
                len);
    });
  });
  return out;
}

}  // namespace ss::ops::cpu
