// Elementwise builtins: unary math, the operators (the checker maps `a + b`
// to "add", `-a` to "neg", `not a` to "logical_not", ...), comparisons,
// logic, where, clip, masked_fill. Shapes broadcast numpy-style
// (shape_algebra.h); dtypes follow torch.result_type.

#include <cstring>
#include <string>

#include "ops/core/shape_algebra.h"
#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool is(const char* a, const char* b) {
  return std::strcmp(a, b) == 0;
}

// Unary ops that keep an int dtype (and a host Int); the rest are float.
bool keeps_int(const char* op) {
  return is(op, "abs") || is(op, "sign") || is(op, "neg") || is(op, "relu");
}

Type unary_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  const char* op = ctx.op_name();
  bool predicate = is(op, "isnan") || is(op, "isfinite");
  if (x.kind == K::Grads && is(op, "neg")) return x;
  if (!x.is_numeric()) {
    require_tensor(ctx, 0, true);
    return Type::error();
  }
  if (is(op, "gelu") && ctx.has(1)) {
    auto s = ctx.const_str(1);
    if (s && *s != "none" && *s != "tanh") {
      ctx.error(
          Code::E0303,
          ctx.span(1),
          "gelu's approximate= is \"none\" or \"tanh\", not \"" + *s + "\"",
          ctx.text(1));
      return Type::error();
    }
  }
  if (!x.is_tensor()) {
    if (predicate) return Type::of(K::Bool);
    if (keeps_int(op)) return x.kind == K::Bool ? Type::of(K::Int) : x;
    return Type::of(K::Float);
  }
  Type r = x;
  if (predicate)
    r.dtype = DType::Bool;
  else if (keeps_int(op))
    r.dtype = x.dtype == DType::Bool ? DType::I64 : x.dtype;
  else
    r.dtype = float_result(x.dtype);
  return r;
}

std::string pair_label(RuleCtx& ctx) {
  return describe(ctx, 0) + ", " + describe(ctx, 1);
}

// Grads arithmetic: g1 + g2, g1 - g2, g * 0.5, 0.5 * g, g / n.
Type grads_arith(RuleCtx& ctx, const Type& a, const Type& b) {
  const char* op = ctx.op_name();
  bool additive = is(op, "add") || is(op, "sub");
  auto scalar = [](const Type& t) {
    return t.is_host_number() || (t.is_tensor() && t.rank() == 0);
  };
  if (additive && a.kind == K::Grads && b.kind == K::Grads) {
    if (a.model == b.model) return a;
  } else if (is(op, "mul") && a.kind == K::Grads && scalar(b)) {
    return a;
  } else if (is(op, "mul") && b.kind == K::Grads && scalar(a)) {
    return b;
  } else if (is(op, "div") && a.kind == K::Grads && scalar(b)) {
    return a;
  }
  ctx.error(Code::E0303,
            ctx.call_span(),
            std::string(op) + " cannot combine " + a.str() + " with " + b.str(),
            pair_label(ctx));
  return Type::error();
}

Type binary_impl(RuleCtx& ctx, Arith arith, bool to_bool, bool bool_is_int) {
  const Type& a = ctx.type(0);
  const Type& b = ctx.type(1);
  if (any_error({&a, &b})) return Type::error();
  const char* op = ctx.op_name();
  if (a.kind == K::Grads || b.kind == K::Grads) return grads_arith(ctx, a, b);
  if (a.kind == K::Str && b.kind == K::Str) {
    if (is(op, "add")) return a;
    if (is(op, "eq") || is(op, "ne")) return Type::of(K::Bool);
  }
  if (!a.is_numeric() || !b.is_numeric()) {
    size_t bad = a.is_numeric() ? 1 : 0;
    ctx.error(Code::E0303,
              ctx.span(bad),
              std::string(op) + " needs numbers or tensors, but " +
                  ctx.text(bad) + " is " + ctx.type(bad).str(),
              pair_label(ctx));
    return Type::error();
  }
  auto r =
      broadcast(ctx, a, b, ctx.span(0), ctx.span(1), pair_label(ctx), arith);
  if (!r) return Type::error();
  if (to_bool) {
    if (!r->is_tensor()) return Type::of(K::Bool);
    r->dtype = DType::Bool;
    return *r;
  }
  if (bool_is_int) {
    if (r->kind == K::Bool) return Type::of(K::Int);
    if (r->is_tensor() && r->dtype == DType::Bool) r->dtype = DType::I64;
  }
  return *r;
}

Type arith_rule(RuleCtx& ctx) {
  return binary_impl(ctx, Arith::Plain, false, true);
}
Type div_rule(RuleCtx& ctx) {
  return binary_impl(ctx, Arith::TrueDiv, false, true);
}
Type compare_rule(RuleCtx& ctx) {
  return binary_impl(ctx, Arith::Plain, true, false);
}
Type minmax_rule(RuleCtx& ctx) {
  return binary_impl(ctx, Arith::Plain, false, false);
}

Type logical_rule(RuleCtx& ctx) {
  if (is(ctx.op_name(), "logical_not")) {
    const Type& x = ctx.type(0);
    if (x.is_error()) return Type::error();
    if (!require_tensor(ctx, 0, true)) return Type::error();
    if (!x.is_tensor()) return Type::of(K::Bool);
    Type r = x;
    r.dtype = DType::Bool;
    return r;
  }
  return binary_impl(ctx, Arith::Plain, true, false);
}

Type where_rule(RuleCtx& ctx) {
  const Type& c = ctx.type(0);
  const Type& a = ctx.type(1);
  const Type& b = ctx.type(2);
  if (any_error({&c, &a, &b})) return Type::error();
  for (size_t i = 0; i < 3; ++i)
    if (!require_tensor(ctx, i, true)) return Type::error();
  if (category(c) != 0) {
    ctx.error(
        Code::E0304,
        ctx.span(0),
        "where needs a bool condition, but " + ctx.text(0) + " is " + c.str(),
        describe(ctx, 0));
    return Type::error();
  }
  std::string label =
      describe(ctx, 0) + ", " + describe(ctx, 1) + ", " + describe(ctx, 2);
  auto ab = broadcast(ctx, a, b, ctx.span(1), ctx.span(2), label);
  if (!ab) return Type::error();
  Type cond = as_tensor(c);
  auto all =
      broadcast(ctx, cond, as_tensor(*ab), ctx.span(0), ctx.span(2), label);
  if (!all) return Type::error();
  if (!c.is_tensor() && !ab->is_tensor()) return *ab;  // all host values
  Type r = as_tensor(*ab);
  r.shape = all->shape;
  r.varying = union_varying({&c, &a, &b});
  return r;
}

Type clip_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& lo = ctx.type(1);
  const Type& hi = ctx.type(2);
  if (any_error({&x, &lo, &hi})) return Type::error();
  for (size_t i = 0; i < 3; ++i)
    if (!require_tensor(ctx, i, true)) return Type::error();
  auto r = broadcast(ctx,
                     x,
                     lo,
                     ctx.span(0),
                     ctx.span(1),
                     describe(ctx, 0) + ", " + describe(ctx, 1));
  if (!r) return Type::error();
  auto r2 = broadcast(ctx,
                      *r,
                      hi,
                      ctx.span(0),
                      ctx.span(2),
                      describe(ctx, 0) + ", " + describe(ctx, 2));
  if (!r2) return Type::error();
  return *r2;
}

Type masked_fill_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& mask = ctx.type(1);
  const Type& v = ctx.type(2);
  if (any_error({&x, &mask, &v})) return Type::error();
  if (!require_tensor(ctx, 0) || !require_tensor(ctx, 1, true) ||
      !require_number(ctx, 2))
    return Type::error();
  if (category(mask) != 0) {
    ctx.error(Code::E0304,
              ctx.span(1),
              "masked_fill needs a bool mask, but " + ctx.text(1) + " is " +
                  mask.str(),
              describe(ctx, 1));
    return Type::error();
  }
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  auto r = broadcast(ctx, x, mask, ctx.span(0), ctx.span(1), label);
  if (!r) return Type::error();
  if (r->shape != x.shape) {
    ctx.error(Code::E0301,
              ctx.span(1),
              "masked_fill's mask " + mask.str() +
                  " must broadcast to x's shape " + types::shape_str(x.shape) +
                  ", not extend it to " + types::shape_str(r->shape),
              label);
    return Type::error();
  }
  Type out = x;
  out.varying = union_varying({&x, &mask, &v});
  return out;
}

// ---------------------------------------------------------------- forwards
// Primitives map to one API call; gelu, silu and softplus are composites.

using UnaryFn = Tensor (*)(const Tensor&);
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

template <UnaryFn F>
std::vector<Tensor> unary_fwd(ForwardCtx& ctx) {
  return {F(ctx.tensor(0))};
}

template <BinaryFn F>
std::vector<Tensor> binary_fwd(ForwardCtx& ctx) {
  return {F(ctx.tensor(0), ctx.tensor(1))};
}

// x * sigmoid(x).
Tensor silu(const Tensor& x0) {
  Tensor x = fwd::to_float(x0);
  return mul(x, sigmoid(x));
}

// log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): never overflows.
Tensor softplus(const Tensor& x0) {
  Tensor x = fwd::to_float(x0);
  return add(log1p(exp(neg(abs(x)))), relu(x));
}

// Exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi)
// (x + 0.044715 x^3))), as torch's approximate="tanh".
std::vector<Tensor> gelu_fwd(ForwardCtx& ctx) {
  Tensor x = fwd::to_float(ctx.tensor(0));
  std::string mode = ctx.has(1) ? ctx.str(1) : "none";
  auto c = [&](double v) { return scalar_like(v, x); };
  Tensor inner;
  if (mode == "tanh") {
    Tensor x3 = mul(mul(x, x), x);
    inner = tanh(mul(c(0.7978845608028654), add(x, mul(c(0.044715), x3))));
  } else if (mode == "none") {
    inner = erf(mul(x, c(0.7071067811865476)));
  } else {
    fwd::value_error("approximate= is \"none\" or \"tanh\", not \"" + mode +
                     "\"");
  }
  return {mul(mul(c(0.5), x), add(c(1.0), inner))};
}

std::vector<Tensor> where_fwd(ForwardCtx& ctx) {
  return {where(ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))};
}

// min(max(x, lo), hi), with torch's dtype promotion of the three.
//
// Note [clip's gradient at a bound]
// As torch.clamp: x's gradient passes where lo <= x <= hi, bounds included,
// lo's where x < lo, hi's where the result would exceed hi (so hi wins when
// lo > hi, as clamp's min(max(x, lo), hi)). Written as maximum and minimum,
// a value exactly at a bound (pixels clipped to [0, 1], say) got half its
// gradient, maximum's share of a tie (found by tests/torch/op_table.py's
// "clip at its bounds" row).
std::vector<Tensor> clip_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0), lo = ctx.tensor(1), hi = ctx.tensor(2);
  Tensor above_lo = where(lt(x, lo), lo, x);
  return {where(gt(above_lo, hi), hi, above_lo)};
}

// where(mask, v, x) with v a scalar of x's dtype (v may be -inf).
std::vector<Tensor> masked_fill_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  Tensor mask = ctx.tensor(1);
  if (mask.dtype() != DType::Bool)
    fwd::value_error("the mask must be bool, not " +
                     std::string(types::dtype_name(mask.dtype())));
  return {where(mask, scalar_like(ctx.number(2), x), x)};
}

OpDef unary(const char* name,
            Forward f,
            const char* summary,
            bool diff = true) {
  OpDef d{name, {{"x"}}, unary_rule, summary};
  d.differentiable = diff;
  d.forward = f;
  return d;
}

OpDef binary(const char* name,
             ShapeRule rule,
             Forward f,
             const char* summary,
             bool diff = true) {
  OpDef d{name, {{"a"}, {"b"}}, rule, summary};
  d.differentiable = diff;
  d.forward = f;
  return d;
}

}  // namespace

std::vector<OpDef> ops_elementwise() {
  std::vector<OpDef> v = {
      unary("abs", unary_fwd<ops::abs>, "absolute value, elementwise"),
      unary("sign",
            unary_fwd<ops::sign>,
            "-1, 0 or 1 by the sign, elementwise (zero gradient)"),
      unary("exp", unary_fwd<ops::exp>, "e to the x, elementwise"),
      unary("log", unary_fwd<ops::log>, "natural logarithm, elementwise"),
      unary("log1p",
            unary_fwd<ops::log1p>,
            "log(1 + x), elementwise, accurate near 0"),
      unary("sqrt", unary_fwd<ops::sqrt>, "square root, elementwise"),
      unary("rsqrt", unary_fwd<ops::rsqrt>, "1 / sqrt(x), elementwise"),
      unary("sin", unary_fwd<ops::sin>, "sine, elementwise"),
      unary("cos", unary_fwd<ops::cos>, "cosine, elementwise"),
      unary("tanh", unary_fwd<ops::tanh>, "hyperbolic tangent, elementwise"),
      unary(
          "sigmoid", unary_fwd<ops::sigmoid>, "1 / (1 + exp(-x)), elementwise"),
      unary("relu", unary_fwd<ops::relu>, "max(x, 0), elementwise"),
      unary("silu", unary_fwd<silu>, "x * sigmoid(x), elementwise"),
      unary("softplus", unary_fwd<softplus>, "log(1 + exp(x)), elementwise"),
      unary("neg", unary_fwd<ops::neg>, "-x (unary minus), elementwise"),
      unary("isnan", unary_fwd<ops::isnan>, "true where x is NaN", false),
      unary("isfinite",
            unary_fwd<ops::isfinite>,
            "true where x is neither infinite nor NaN",
            false),
      binary("add", arith_rule, binary_fwd<ops::add>, "a + b, broadcasting"),
      binary("sub", arith_rule, binary_fwd<ops::sub>, "a - b, broadcasting"),
      binary("mul", arith_rule, binary_fwd<ops::mul>, "a * b, broadcasting"),
      binary("div",
             div_rule,
             binary_fwd<ops::div>,
             "a / b, broadcasting; ints give floats"),
      binary("floordiv",
             arith_rule,
             binary_fwd<ops::floordiv>,
             "a // b, floored division",
             false),
      binary(
          "mod", arith_rule, binary_fwd<ops::mod>, "a % b, floored remainder"),
      binary("pow", arith_rule, binary_fwd<ops::pow>, "a ** b, broadcasting"),
      binary("maximum",
             minmax_rule,
             binary_fwd<ops::maximum>,
             "the larger of a and b, elementwise"),
      binary("minimum",
             minmax_rule,
             binary_fwd<ops::minimum>,
             "the smaller of a and b, elementwise"),
      binary("eq",
             compare_rule,
             binary_fwd<ops::eq>,
             "a == b, elementwise, as bool",
             false),
      binary("ne",
             compare_rule,
             binary_fwd<ops::ne>,
             "a != b, elementwise, as bool",
             false),
      binary("lt",
             compare_rule,
             binary_fwd<ops::lt>,
             "a < b, elementwise, as bool",
             false),
      binary("le",
             compare_rule,
             binary_fwd<ops::le>,
             "a <= b, elementwise, as bool",
             false),
      binary("gt",
             compare_rule,
             binary_fwd<ops::gt>,
             "a > b, elementwise, as bool",
             false),
      binary("ge",
             compare_rule,
             binary_fwd<ops::ge>,
             "a >= b, elementwise, as bool",
             false),
      binary("logical_and",
             logical_rule,
             binary_fwd<ops::logical_and>,
             "a and b, elementwise",
             false),
      binary("logical_or",
             logical_rule,
             binary_fwd<ops::logical_or>,
             "a or b, elementwise",
             false),
  };
  OpDef gelu{"gelu",
             {{"x"}, {"approximate", ParamKind::Value, false}},
             unary_rule,
             "GELU, the exact erf form; approximate=\"tanh\" for the tanh one"};
  gelu.forward = gelu_fwd;
  v.push_back(gelu);
  OpDef lnot{"logical_not", {{"x"}}, logical_rule, "not x, elementwise"};
  lnot.differentiable = false;
  lnot.forward = unary_fwd<ops::logical_not>;
  v.push_back(lnot);
  OpDef where_op{"where",
                 {{"c"}, {"a"}, {"b"}},
                 where_rule,
                 "a where c is true, else b; all three broadcast"};
  where_op.forward = where_fwd;
  v.push_back(where_op);
  OpDef clip{"clip",
             {{"x"}, {"lo"}, {"hi"}},
             clip_rule,
             "x limited to [lo, hi], elementwise"};
  clip.forward = clip_fwd;
  v.push_back(clip);
  OpDef masked_fill{"masked_fill",
                    {{"x"}, {"mask"}, {"v"}},
                    masked_fill_rule,
                    "x with v where mask (broadcast to x) is true"};
  masked_fill.forward = masked_fill_fwd;
  v.push_back(masked_fill);
  return v;
}

}  // namespace ss::ops
