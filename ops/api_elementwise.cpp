// The differentiable API, part 2: elementwise ops, where, cast, stop_grad.
//
// Dtypes: binary ops promote with types::promote (torch.result_type's
// categories); arithmetic on two bools computes in i64; true division and
// the float functions (exp, log, ...) of ints or bools compute in f32;
// comparisons give bool. Operands are cast with the differentiable cast, so
// a gradient reaching a promoted operand flows back to its own dtype.

#include <cmath>
#include <numbers>
#include <string>

#include "ops/api.h"
#include "ops/api_detail.h"

namespace ss::ops {

using namespace detail;

namespace {

Tensor sc(double v, const Tensor& like) {
  return scalar_like(v, like);
}

// A float mask (1 where [m] is true) in [like]'s dtype.
Tensor mask_as(const Tensor& m, const Tensor& like) {
  return cast(m, like.dtype());
}

// ------------------------------------------------------------------ unary

// The cotangent of x from the output's cotangent [g], the input [x] and the
// output [y] (both without autodiff state).
using UnaryVjp = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y);

// Note [Half-precision gradients]: a half (bf16, f16) op is computed in
// f32 and rounded once (ops/cpu/cpu_common.h), and so is its gradient: a
// unary op's VJP is a formula of several ops (gelu's is g * (Phi(x) + x
// phi(x))), which in bf16 would round after each of them. torch's
// backward kernels compute the formula in f32 and round the result once,
// and autocast's gradients (Note [Autocast] in interp/eval/autocast.cpp)
// are one unit of bf16 apart from torch's, not several, only so.
Tensor unary_impl(const char* name, UnaryOp op, const Tensor& x, UnaryVjp vjp) {
  Tensor y = backend_of(x).unary(op, x);
  if (!vjp || !types::is_float(x.dtype())) return y;
  Tensor xd = x.detach();
  return record(name, y, {x}, [xd, y, vjp](const Tensor& g) {
    const DType d = xd.dtype();
    if (d == DType::BF16 || d == DType::F16)
      return std::vector<Tensor>{cast(
          vjp(cast(g, DType::F32), cast(xd, DType::F32), cast(y, DType::F32)),
          d)};
    return std::vector<Tensor>{vjp(g, xd, y)};
  });
}

// The float kind: ints and bools are computed in f32.
Tensor float_unary(const char* name,
                   UnaryOp op,
                   const Tensor& x0,
                   UnaryVjp vjp) {
  check_defined(name, x0);
  Tensor x = types::is_float(x0.dtype()) ? x0 : cast(x0, DType::F32);
  return unary_impl(name, op, x, vjp);
}

// The signed kind: also on ints; bools are computed in i64.
Tensor signed_unary(const char* name,
                    UnaryOp op,
                    const Tensor& x0,
                    UnaryVjp vjp) {
  check_defined(name, x0);
  Tensor x = x0.dtype() == DType::Bool ? cast(x0, DType::I64) : x0;
  return unary_impl(name, op, x, vjp);
}

// ------------------------------------------------------------------ binary

// Cotangents of a and b at the output's (broadcast) shape; binary_impl sums
// them down to the operands' shapes. [na]/[nb]: whether each is needed.
using BinaryVjp = std::pair<Tensor, Tensor> (*)(const Tensor& g,
                                                const Tensor& a,
                                                const Tensor& b,
                                                const Tensor& y,
                                                bool na,
                                                bool nb);

// How each kind of ops/core/elementwise.def promotes its operands.
enum class Promo { Arith, TrueDiv, Extremum, Compare, Logical };

DType binary_dtype(Promo p, DType a, DType b) {
  switch (p) {
    case Promo::Logical:
      return DType::Bool;
    case Promo::Extremum:  // two bools stay bools, as torch.maximum's
    case Promo::Compare:
      return types::promote(a, b);
    case Promo::TrueDiv: {
      DType d = types::promote(a, b);
      return types::is_float(d) ? d : DType::F32;
    }
    case Promo::Arith: {
      DType d = types::promote(a, b);
      return d == DType::Bool ? DType::I64 : d;
    }
  }
  return DType::F32;
}

// Note [Errors of the scalar ops] (ops/core/elementwise_scalar.h): a GPU
// kernel cannot throw, so on a GPU an integer divisor of 0 is looked for
// here, before the kernel runs, and raised as the CPU's kernel raises it,
// at the op's `.ss` line: one bool read back (a wait for the device),
// which integer division, rare in a step, can afford. (The kernel's own
// device error word stays the backstop.)
void check_divisor_on_device(BinaryOp op, const Tensor& b) {
  // In a recording the kernel's own flag is the check (Note [Checks a
  // recording defers] in api.cpp).
  if (b.device().kind == Device::Kind::Cpu || types::is_float(b.dtype()) ||
      (op != BinaryOp::FloorDiv && op != BinaryOp::Mod) || checks_deferred(b))
    return;
  Backend& be = backend_of(b);
  Tensor zero = Tensor::zeros({}, b.dtype()).to(b.device());
  std::vector<int> all(b.rank());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  Tensor hit =
      be.reduce(ReduceOp::Any, be.binary(BinaryOp::Eq, b, zero), all, false);
  if (RecordableRead read; hit.item() == 0) return;
  const bool div = op == BinaryOp::FloorDiv;
  throw OpError(OpError::Kind::Value,
                div ? "integer division by zero" : "integer modulo by zero",
                div ? "floordiv" : "mod");
}

Tensor binary_impl(const char* name,
                   BinaryOp op,
                   Promo promo,
                   const Tensor& a_in,
                   const Tensor& b_in,
                   BinaryVjp vjp) {
  Tensor a0 = a_in, b0 = b_in;
  place_cpu_scalars({&a0, &b0});
  check_same_device(name, {a0, b0});
  broadcast_shapes(name, a0.shape(), b0.shape());
  DType dt = binary_dtype(promo, a0.dtype(), b0.dtype());
  Tensor a = a0.dtype() == dt ? a0 : cast(a0, dt);
  Tensor b = b0.dtype() == dt ? b0 : cast(b0, dt);
  check_divisor_on_device(op, b);
  Tensor y = backend_of(a).binary(op, a, b);
  if (!vjp || !types::is_float(dt)) return y;
  bool na = needs_grad(a), nb = needs_grad(b);
  Tensor ad = a.detach(), bd = b.detach();
  return record(name, y, {a, b}, [=](const Tensor& g) {
    auto [ga, gb] = vjp(g, ad, bd, y, na, nb);
    std::vector<Tensor> out(2);
    if (na && ga.defined()) out[0] = sum_to(ga, ad.shape());
    if (nb && gb.defined()) out[1] = sum_to(gb, bd.shape());
    return out;
  });
}

// Unary kinds without a gradient (ops/core/elementwise.def).
// Predicates: the backend's kernel gives each dtype's answer.
Tensor predicate_unary(const char* name, UnaryOp op, const Tensor& x) {
  check_defined(name, x);
  return backend_of(x).unary(op, x);
}

Tensor logical_unary(const char* name, UnaryOp op, const Tensor& x) {
  check_defined(name, x);
  Tensor b = x.dtype() == DType::Bool ? x : cast(x, DType::Bool);
  return backend_of(b).unary(op, b);
}

// Ints and bools are already whole: returned as they are.
Tensor rounding_unary(const char* name, UnaryOp op, const Tensor& x) {
  check_defined(name, x);
  if (!types::is_float(x.dtype())) return x.detach();
  return backend_of(x).unary(op, x);
}

// maximum's and minimum's share of g for a, at the output's shape: all of
// it where [wins] (a is the larger, or the smaller), half where [tie]; b
// gets the rest (g minus this), so the two add up to g.
Tensor tie_share(const Tensor& g, const Tensor& wins, const Tensor& tie) {
  Tensor w = add(mask_as(wins, g), mul(mask_as(tie, g), sc(0.5, g)));
  return mul(g, w);
}

// pow's cotangents (ops/core/elementwise.def's Pow row says why the wheres).
Tensor pow_vjp_base(const Tensor& g, const Tensor& a, const Tensor& b) {
  Tensor d = mul(b, pow(a, sub(b, sc(1, b))));
  return mul(g, where(eq(b, sc(0, b)), sc(0, d), d));
}
Tensor pow_vjp_exponent(const Tensor& g, const Tensor& a, const Tensor& y) {
  Tensor zero = eq(a, sc(0, a));
  Tensor la = log(where(zero, sc(1, a), a));
  return mul(g, where(zero, sc(0, y), mul(y, la)));
}

}  // namespace

// ---------------------------------------------------------------- the table

// Note [API functions from the table]
// One function per row of ops/core/elementwise.def: its kind picks the dtype
// handling (float_unary, binary_impl's Promo, ...) and its vjp column
// becomes a captureless lambda (the VJP types are function pointers);
// SS_ZERO_GRAD and SS_NO_GRAD record nothing. A binary VJP's cotangent is
// computed only for an operand that needs one.
#define SS_GRAD(dx)                    \
  [](const Tensor& g,                  \
     [[maybe_unused]] const Tensor& x, \
     [[maybe_unused]] const Tensor& y) { return Tensor(dx); }
#define SS_GRAD2(da, db)                               \
  [](const Tensor& g,                                  \
     [[maybe_unused]] const Tensor& a,                 \
     [[maybe_unused]] const Tensor& b,                 \
     [[maybe_unused]] const Tensor& y,                 \
     bool na,                                          \
     bool nb) {                                        \
    return std::make_pair(na ? Tensor(da) : Tensor(),  \
                          nb ? Tensor(db) : Tensor()); \
  }
#define SS_ZERO_GRAD nullptr
#define SS_NO_GRAD nullptr

#define SS_UNARY_FLOAT(Enum, name, doc, cpu, ref, vjp) \
  Tensor name(const Tensor& x) {                       \
    return float_unary(#name, UnaryOp::Enum, x, vjp);  \
  }
#define SS_UNARY_SIGNED(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  Tensor name(const Tensor& x) {                                 \
    return signed_unary(#name, UnaryOp::Enum, x, vjp);           \
  }
#define SS_UNARY_PREDICATE(Enum, name, doc, cpu, cpu_int, ref) \
  Tensor name(const Tensor& x) {                               \
    return predicate_unary(#name, UnaryOp::Enum, x);           \
  }
#define SS_UNARY_LOGICAL(Enum, name, doc, cpu, ref) \
  Tensor name(const Tensor& x) {                    \
    return logical_unary(#name, UnaryOp::Enum, x);  \
  }
#define SS_UNARY_ROUNDING(Enum, name, doc, cpu)     \
  Tensor name(const Tensor& x) {                    \
    return rounding_unary(#name, UnaryOp::Enum, x); \
  }
#define SS_BINARY_ARITH(Enum, name, doc, cpu, cpu_int, ref, vjp)        \
  Tensor name(const Tensor& a, const Tensor& b) {                       \
    return binary_impl(#name, BinaryOp::Enum, Promo::Arith, a, b, vjp); \
  }
#define SS_BINARY_TRUEDIV(Enum, name, doc, cpu, ref, vjp)                 \
  Tensor name(const Tensor& a, const Tensor& b) {                         \
    return binary_impl(#name, BinaryOp::Enum, Promo::TrueDiv, a, b, vjp); \
  }
#define SS_BINARY_EXTREMUM(Enum, name, doc, cpu, ref, vjp)                 \
  Tensor name(const Tensor& a, const Tensor& b) {                          \
    return binary_impl(#name, BinaryOp::Enum, Promo::Extremum, a, b, vjp); \
  }
#define SS_BINARY_COMPARE(Enum, name, doc, cpu, ref)                          \
  Tensor name(const Tensor& a, const Tensor& b) {                             \
    return binary_impl(#name, BinaryOp::Enum, Promo::Compare, a, b, nullptr); \
  }
#define SS_BINARY_LOGICAL(Enum, name, doc, cpu, ref)                          \
  Tensor name(const Tensor& a, const Tensor& b) {                             \
    return binary_impl(#name, BinaryOp::Enum, Promo::Logical, a, b, nullptr); \
  }
#include "ops/core/elementwise.def"
#undef SS_GRAD
#undef SS_GRAD2
#undef SS_ZERO_GRAD
#undef SS_NO_GRAD

// ---------------------------------------------------------------- others

Tensor where(const Tensor& cond_in, const Tensor& a_in, const Tensor& b_in) {
  const char* name = "where";
  Tensor cond0 = cond_in, a0 = a_in, b0 = b_in;
  place_cpu_scalars({&cond0, &a0, &b0});
  check_same_device(name, {cond0, a0, b0});
  broadcast_shapes(
      name, cond0.shape(), broadcast_shapes(name, a0.shape(), b0.shape()));
  Tensor cond =
      cond0.dtype() == DType::Bool ? cond0.detach() : cast(cond0, DType::Bool);
  DType dt = types::promote(a0.dtype(), b0.dtype());
  Tensor a = a0.dtype() == dt ? a0 : cast(a0, dt);
  Tensor b = b0.dtype() == dt ? b0 : cast(b0, dt);
  Tensor y = backend_of(a).where(cond, a, b);
  if (!types::is_float(dt)) return y;
  Tensor ad = a.detach(), bd = b.detach();
  bool na = needs_grad(a), nb = needs_grad(b);
  // The condition is not differentiated.
  return record(name, y, {a, b}, [=](const Tensor& g) {
    Tensor zero = sc(0, g);
    std::vector<Tensor> out(2);
    if (na) out[0] = sum_to(where(cond, g, zero), ad.shape());
    if (nb) out[1] = sum_to(where(cond, zero, g), bd.shape());
    return out;
  });
}

Tensor cast(const Tensor& x, DType dtype) {
  check_defined("cast", x);
  if (x.dtype() == dtype) return x;
  Tensor y = backend_of(x).cast(x, dtype);
  if (!types::is_float(x.dtype()) || !types::is_float(dtype)) return y;
  DType from = x.dtype();
  return record("cast", y, {x}, [from](const Tensor& g) {
    return std::vector<Tensor>{cast(g, from)};
  });
}

Tensor stop_grad(const Tensor& x) {
  check_defined("stop_grad", x);
  return x.detach();
}

}  // namespace ss::ops
