// Elementwise kernels: unary, binary, where, cast.
//
// The common layouts (same shape, a scalar operand, a row [m] broadcast over
// [.. m], a column [n 1] over [n m]) are plain loops over contiguous
// buffers that the compiler vectorises; anything else goes through
// xtensor's broadcasting over adapted buffers, evaluated with noalias
// straight into the output.

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_scalar.h"

namespace ss::ops::cpu {

void fail(const char* op, const std::string& msg) {
  throw std::invalid_argument(std::string("[cpu ") + op + "] " + msg);
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(op,
           "shapes " + shape_string(a) + " and " + shape_string(b) +
               " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0), own = strides_of(in);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[lead + i] = in[i] == 1 ? 0 : own[i];
  return s;
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

std::vector<size_t> xshape(const Shape& s) {
  return {s.begin(), s.end()};
}

template <class T>
auto adapt(const Tensor& t) {
  return xt::adapt(t.data<T>(),
                   static_cast<size_t>(t.numel()),
                   xt::no_ownership(),
                   xshape(t.shape()));
}
template <class T>
auto adapt_out(Tensor& t) {
  return xt::adapt(t.data<T>(),
                   static_cast<size_t>(t.numel()),
                   xt::no_ownership(),
                   xshape(t.shape()));
}

/// Whether [small] (leading 1s dropped) is a suffix of [big]: then
/// broadcasting repeats it as a contiguous row.
bool is_row_of(const Shape& small, const Shape& big) {
  size_t s = 0;
  while (s < small.size() && small[s] == 1) ++s;
  size_t len = small.size() - s;
  if (len > big.size()) return false;
  for (size_t i = 0; i < len; ++i)
    if (small[s + i] != big[big.size() - len + i]) return false;
  return true;
}

/// Whether [small], right-aligned in [big], matches big's leading axes and
/// is 1 on the rest: then each of its elements repeats over a contiguous
/// run ([n 1] against [n m], as in x - max(x, keepdims)).
bool is_col_of(const Shape& small, const Shape& big) {
  size_t lead = big.size() - std::min(big.size(), small.size());
  if (small.size() > big.size()) return false;
  size_t d = 0;
  for (; d < big.size(); ++d) {  // leading part: equal (missing axes = 1)
    int64_t sd = d < lead ? 1 : small[d - lead];
    if (sd != big[d]) break;
  }
  for (; d < big.size(); ++d)
    if ((d < lead ? 1 : small[d - lead]) != 1) return false;
  return true;
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

template <class T, class O, class F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  O* po = out.data<O>();
  const Shape& os = out.shape();
  int64_t n = out.numel();
  if (n == 0) return;
  int64_t na = a.numel(), nb = b.numel();
  if (na == n && nb == n) {  // same layout (shapes equal up to leading 1s)
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
  } else if (na == n && nb == 1) {
    T s = pb[0];
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], s);
  } else if (nb == n && na == 1) {
    T s = pa[0];
    for (int64_t i = 0; i < n; ++i) po[i] = f(s, pb[i]);
  } else if (na == n && is_row_of(b.shape(), os)) {  // [.. m] with [m]
    for (int64_t r = 0; r < n; r += nb)
      for (int64_t j = 0; j < nb; ++j) po[r + j] = f(pa[r + j], pb[j]);
  } else if (nb == n && is_row_of(a.shape(), os)) {
    for (int64_t r = 0; r < n; r += na)
      for (int64_t j = 0; j < na; ++j) po[r + j] = f(pa[j], pb[r + j]);
  } else if (na == n && is_col_of(b.shape(), os)) {  // [n m] with [n 1]
    int64_t m = n / nb;
    for (int64_t r = 0; r < nb; ++r) {
      T s = pb[r];
      for (int64_t j = 0; j < m; ++j) po[r * m + j] = f(pa[r * m + j], s);
    }
  } else if (nb == n && is_col_of(a.shape(), os)) {
    int64_t m = n / na;
    for (int64_t r = 0; r < na; ++r) {
      T s = pa[r];
      for (int64_t j = 0; j < m; ++j) po[r * m + j] = f(s, pb[r * m + j]);
    }
  } else {  // general broadcasting
    auto xo = adapt_out<O>(out);
    xt::noalias(xo) = xt::make_lambda_xfunction(
        [f](T x, T y) -> O { return f(x, y); }, adapt<T>(a), adapt<T>(b));
  }
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

template <class I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <class S, class D>
void convert(const S* s, D* d, int64_t n) {
  if constexpr (std::is_same_v<D, bool>) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i] != S(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    for (int64_t i = 0; i < n; ++i) d[i] = saturate<D>(s[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
  }
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

Tensor unary(UnaryOp op, const Tensor& x) {
  if (is_half(x.dtype())) {
    Tensor r = unary(op, to_f32(x));
    return r.dtype() == DType::Bool ? r : from_f32(r, x.dtype());
  }
  return visit(x.dtype(), "unary", [&](auto t) {
    return unary_typed<decltype(t)>(op, x);
  });
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    fail("binary",
         std::string("dtypes differ: ") + types::dtype_name(a.dtype()) +
             " and " + types::dtype_name(b.dtype()));
  if (is_half(a.dtype())) {
    Tensor r = binary(op, to_f32(a), to_f32(b));
    return r.dtype() == DType::Bool ? r : from_f32(r, a.dtype());
  }
  Shape os = broadcast_shapes(a.shape(), b.shape(), "binary");
  return visit(a.dtype(), "binary", [&](auto t) {
    return binary_typed<decltype(t)>(op, a, b, os);
  });
}

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
      for (int64_t i = 0; i < n; ++i) po[i] = c[i] ? pa[i] : pb[i];
    } else if (cond.numel() == n && a.numel() == 1 && b.numel() == 1) {
      T x = pa[0], y = pb[0];
      for (int64_t i = 0; i < n; ++i) po[i] = c[i] ? x : y;
    } else {
      auto xo = adapt_out<T>(out);
      xt::noalias(xo) = xt::where(adapt<bool>(cond), adapt<T>(a), adapt<T>(b));
    }
  });
  return out;
}

}  // namespace ss::ops::cpu
