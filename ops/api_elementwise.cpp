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

Tensor unary_impl(const char* name, UnaryOp op, const Tensor& x, UnaryVjp vjp) {
  Tensor y = backend_of(x).unary(op, x);
  if (!vjp || !types::is_float(x.dtype())) return y;
  Tensor xd = x.detach();
  return record(name, y, {x}, [xd, y, vjp](const Tensor& g) {
    return std::vector<Tensor>{vjp(g, xd, y)};
  });
}

// Float functions: ints and bools are computed in f32.
Tensor float_unary(const char* name,
                   UnaryOp op,
                   const Tensor& x0,
                   UnaryVjp vjp) {
  check_defined(name, x0);
  Tensor x = types::is_float(x0.dtype()) ? x0 : cast(x0, DType::F32);
  return unary_impl(name, op, x, vjp);
}

// Neg, Abs, Sign, Relu: also on ints; bools are computed in i64.
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

enum class Promo { Arith, TrueDiv, Compare, Logical };

DType binary_dtype(Promo p, DType a, DType b) {
  switch (p) {
    case Promo::Logical:
      return DType::Bool;
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

Tensor binary_impl(const char* name,
                   BinaryOp op,
                   Promo promo,
                   const Tensor& a0,
                   const Tensor& b0,
                   BinaryVjp vjp) {
  check_same_device(name, {a0, b0});
  broadcast_shapes(name, a0.shape(), b0.shape());
  DType dt = binary_dtype(promo, a0.dtype(), b0.dtype());
  Tensor a = a0.dtype() == dt ? a0 : cast(a0, dt);
  Tensor b = b0.dtype() == dt ? b0 : cast(b0, dt);
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

// Where [w] (at the output's shape) says how much of g goes to a; the rest
// goes to b. Used by maximum and minimum.
std::pair<Tensor, Tensor> split_by(const Tensor& g, const Tensor& w) {
  Tensor ga = mul(g, w);
  return {ga, sub(g, ga)};
}

}  // namespace

// ---------------------------------------------------------------- unary

Tensor neg(const Tensor& x) {
  return signed_unary(
      "neg",
      UnaryOp::Neg,
      x,
      [](const Tensor& g, const Tensor&, const Tensor&) { return neg(g); });
}

Tensor abs(const Tensor& x) {
  // d|x| = sign(x): 0 at 0, as torch.
  return signed_unary("abs",
                      UnaryOp::Abs,
                      x,
                      [](const Tensor& g, const Tensor& x, const Tensor&) {
                        return mul(g, sign(x));
                      });
}

Tensor sign(const Tensor& x) {
  // Its derivative is zero wherever it exists: nothing is recorded.
  return signed_unary("sign", UnaryOp::Sign, x, nullptr);
}

Tensor exp(const Tensor& x) {
  return float_unary("exp",
                     UnaryOp::Exp,
                     x,
                     [](const Tensor& g, const Tensor&, const Tensor& y) {
                       return mul(g, y);
                     });
}

Tensor log(const Tensor& x) {
  return float_unary("log",
                     UnaryOp::Log,
                     x,
                     [](const Tensor& g, const Tensor& x, const Tensor&) {
                       return div(g, x);
                     });
}

Tensor log1p(const Tensor& x) {
  return float_unary("log1p",
                     UnaryOp::Log1p,
                     x,
                     [](const Tensor& g, const Tensor& x, const Tensor&) {
                       return div(g, add(x, sc(1, x)));
                     });
}

Tensor sqrt(const Tensor& x) {
  return float_unary("sqrt",
                     UnaryOp::Sqrt,
                     x,
                     [](const Tensor& g, const Tensor&, const Tensor& y) {
                       return div(g, mul(y, sc(2, y)));
                     });
}

Tensor rsqrt(const Tensor& x) {
  // d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3.
  return float_unary("rsqrt",
                     UnaryOp::Rsqrt,
                     x,
                     [](const Tensor& g, const Tensor&, const Tensor& y) {
                       return mul(g, mul(sc(-0.5, y), mul(y, mul(y, y))));
                     });
}

Tensor sin(const Tensor& x) {
  return float_unary("sin",
                     UnaryOp::Sin,
                     x,
                     [](const Tensor& g, const Tensor& x, const Tensor&) {
                       return mul(g, cos(x));
                     });
}

Tensor cos(const Tensor& x) {
  return float_unary("cos",
                     UnaryOp::Cos,
                     x,
                     [](const Tensor& g, const Tensor& x, const Tensor&) {
                       return neg(mul(g, sin(x)));
                     });
}

Tensor tanh(const Tensor& x) {
  return float_unary("tanh",
                     UnaryOp::Tanh,
                     x,
                     [](const Tensor& g, const Tensor&, const Tensor& y) {
                       return mul(g, sub(sc(1, y), mul(y, y)));
                     });
}

Tensor sigmoid(const Tensor& x) {
  return float_unary("sigmoid",
                     UnaryOp::Sigmoid,
                     x,
                     [](const Tensor& g, const Tensor&, const Tensor& y) {
                       return mul(g, mul(y, sub(sc(1, y), y)));
                     });
}

Tensor relu(const Tensor& x) {
  // 0 at 0, as torch.
  return signed_unary("relu",
                      UnaryOp::Relu,
                      x,
                      [](const Tensor& g, const Tensor& x, const Tensor&) {
                        return mul(g, mask_as(gt(x, sc(0, x)), g));
                      });
}

Tensor erf(const Tensor& x) {
  // d erf(x) = 2/sqrt(pi) exp(-x^2).
  return float_unary("erf",
                     UnaryOp::Erf,
                     x,
                     [](const Tensor& g, const Tensor& x, const Tensor&) {
                       Tensor e = exp(neg(mul(x, x)));
                       return mul(
                           g, mul(e, sc(2.0 / std::sqrt(std::numbers::pi), e)));
                     });
}

Tensor floor(const Tensor& x) {
  check_defined("floor", x);
  if (!types::is_float(x.dtype())) return x.detach();
  return backend_of(x).unary(UnaryOp::Floor, x);
}

Tensor isnan(const Tensor& x) {
  check_defined("isnan", x);
  if (!types::is_float(x.dtype()))
    return Tensor::zeros(x.shape(), DType::Bool, x.device());
  return backend_of(x).unary(UnaryOp::IsNan, x);
}

Tensor isfinite(const Tensor& x) {
  check_defined("isfinite", x);
  if (!types::is_float(x.dtype()))
    return Tensor::full(x.shape(), 1.0, DType::Bool, x.device());
  return backend_of(x).unary(UnaryOp::IsFinite, x);
}

Tensor logical_not(const Tensor& x) {
  check_defined("logical_not", x);
  Tensor b = x.dtype() == DType::Bool ? x : cast(x, DType::Bool);
  return backend_of(b).unary(UnaryOp::Not, b);
}

// ---------------------------------------------------------------- binary

Tensor add(const Tensor& a, const Tensor& b) {
  return binary_impl("add",
                     BinaryOp::Add,
                     Promo::Arith,
                     a,
                     b,
                     [](const Tensor& g,
                        const Tensor&,
                        const Tensor&,
                        const Tensor&,
                        bool,
                        bool) {
                       return std::pair{g, g};
                     });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary_impl("sub",
                     BinaryOp::Sub,
                     Promo::Arith,
                     a,
                     b,
                     [](const Tensor& g,
                        const Tensor&,
                        const Tensor&,
                        const Tensor&,
                        bool,
                        bool nb) {
                       return std::pair{g, nb ? neg(g) : Tensor()};
                     });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary_impl(
      "mul",
      BinaryOp::Mul,
      Promo::Arith,
      a,
      b,
      [](const Tensor& g,
         const Tensor& a,
         const Tensor& b,
         const Tensor&,
         bool na,
         bool nb) {
        return std::pair{na ? mul(g, b) : Tensor(), nb ? mul(g, a) : Tensor()};
      });
}

Tensor div(const Tensor& a, const Tensor& b) {
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = -y/b.
  return binary_impl("div",
                     BinaryOp::Div,
                     Promo::TrueDiv,
                     a,
                     b,
                     [](const Tensor& g,
                        const Tensor&,
                        const Tensor& b,
                        const Tensor& y,
                        bool na,
                        bool nb) {
                       return std::pair{na ? div(g, b) : Tensor(),
                                        nb ? neg(mul(g, div(y, b))) : Tensor()};
                     });
}

Tensor floordiv(const Tensor& a, const Tensor& b) {
  return binary_impl(
      "floordiv", BinaryOp::FloorDiv, Promo::Arith, a, b, nullptr);
}

Tensor mod(const Tensor& a, const Tensor& b) {
  // a - floor(a / b) * b, as torch.remainder: d/da = 1, d/db = -floor(a/b).
  return binary_impl("mod",
                     BinaryOp::Mod,
                     Promo::Arith,
                     a,
                     b,
                     [](const Tensor& g,
                        const Tensor& a,
                        const Tensor& b,
                        const Tensor&,
                        bool na,
                        bool nb) {
                       Tensor ga, gb;
                       if (na) ga = g;
                       if (nb) gb = mul(g, neg(floor(div(a, b))));
                       return std::make_pair(ga, gb);
                     });
}

Tensor pow(const Tensor& a, const Tensor& b) {
  // As torch: d/da = b a^(b-1), taken as 0 where b == 0 (so 0^0 has no
  // NaN); d/db = a^b log(a), taken as 0 where a == 0 (and NaN for a < 0).
  return binary_impl("pow",
                     BinaryOp::Pow,
                     Promo::Arith,
                     a,
                     b,
                     [](const Tensor& g,
                        const Tensor& a,
                        const Tensor& b,
                        const Tensor& y,
                        bool na,
                        bool nb) {
                       Tensor ga, gb;
                       if (na) {
                         Tensor d = mul(b, pow(a, sub(b, sc(1, b))));
                         ga = mul(g, where(eq(b, sc(0, b)), sc(0, d), d));
                       }
                       if (nb) {
                         Tensor zero = eq(a, sc(0, a));
                         Tensor la = log(where(zero, sc(1, a), a));
                         gb = mul(g, where(zero, sc(0, y), mul(y, la)));
                       }
                       return std::pair{ga, gb};
                     });
}

namespace {
// maximum and minimum: the gradient goes to the operand [wins] picks
// (gt: the larger); ties split it half and half (as torch.maximum does), so
// the sum of both stays g.
// (A template parameter: a vjp is a plain function pointer, no captures.)
template <Tensor (*wins)(const Tensor&, const Tensor&)>
Tensor extremum(const char* name,
                BinaryOp op,
                const Tensor& a,
                const Tensor& b) {
  return binary_impl(name,
                     op,
                     Promo::Arith,
                     a,
                     b,
                     [](const Tensor& g,
                        const Tensor& a,
                        const Tensor& b,
                        const Tensor&,
                        bool,
                        bool) {
                       Tensor w = add(mask_as(wins(a, b), g),
                                      mul(mask_as(eq(a, b), g), sc(0.5, g)));
                       return split_by(g, w);
                     });
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  return extremum<gt>("maximum", BinaryOp::Maximum, a, b);
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return extremum<lt>("minimum", BinaryOp::Minimum, a, b);
}

Tensor eq(const Tensor& a, const Tensor& b) {
  return binary_impl("eq", BinaryOp::Eq, Promo::Compare, a, b, nullptr);
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return binary_impl("ne", BinaryOp::Ne, Promo::Compare, a, b, nullptr);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return binary_impl("lt", BinaryOp::Lt, Promo::Compare, a, b, nullptr);
}
Tensor le(const Tensor& a, const Tensor& b) {
  return binary_impl("le", BinaryOp::Le, Promo::Compare, a, b, nullptr);
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return binary_impl("gt", BinaryOp::Gt, Promo::Compare, a, b, nullptr);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return binary_impl("ge", BinaryOp::Ge, Promo::Compare, a, b, nullptr);
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return binary_impl(
      "logical_and", BinaryOp::And, Promo::Logical, a, b, nullptr);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return binary_impl("logical_or", BinaryOp::Or, Promo::Logical, a, b, nullptr);
}

// ---------------------------------------------------------------- others

Tensor where(const Tensor& cond0, const Tensor& a0, const Tensor& b0) {
  const char* name = "where";
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
