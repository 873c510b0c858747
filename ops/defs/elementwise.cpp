// Elementwise builtins: unary math, the operators (the checker maps `a + b`
// to "add", `-a` to "neg", `not a` to "logical_not", ...), comparisons,
// logic, where, clip, masked_fill. Shapes broadcast numpy-style
// (shape_algebra.h); dtypes follow torch.result_type.

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool is(const char* a, const char* b) {
  return std::strcmp(a, b) == 0;
}

// The dtype rules of ops/core/elementwise.def's unary kinds (and of the float
// composites: gelu, silu, softplus).
enum class UnaryResult { Float, KeepsInt, Bool };

Type unary_rule(RuleCtx& ctx, UnaryResult result) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  const char* op = ctx.op_name();
  // Gradients, or a model's params, field by field (Note [Arithmetic over
  // params] in interp/check/exprs.cpp): values shaped as its params.
  if ((x.kind == K::Grads || x.kind == K::Model) &&
      result != UnaryResult::Bool && !ctx.has(1)) {
    Type g = x;
    g.kind = K::Grads;
    return g;
  }
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
    if (result == UnaryResult::Bool) return Type::of(K::Bool);
    if (result == UnaryResult::KeepsInt)
      return x.kind == K::Bool ? Type::of(K::Int) : x;
    return Type::of(K::Float);
  }
  Type r = x;
  if (result == UnaryResult::Bool)
    r.dtype = DType::Bool;
  else if (result == UnaryResult::KeepsInt)
    r.dtype = x.dtype == DType::Bool ? DType::I64 : x.dtype;
  else
    r.dtype = float_result(x.dtype);
  return r;
}

Type float_rule(RuleCtx& ctx) {
  return unary_rule(ctx, UnaryResult::Float);
}
Type signed_rule(RuleCtx& ctx) {
  return unary_rule(ctx, UnaryResult::KeepsInt);
}
Type predicate_rule(RuleCtx& ctx) {
  return unary_rule(ctx, UnaryResult::Bool);
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
  return binary_impl(ctx, Arith::Plain, true, false);
}

Type logical_not_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0, true)) return Type::error();
  if (!x.is_tensor()) return Type::of(K::Bool);
  Type r = x;
  r.dtype = DType::Bool;
  return r;
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

// The composites of a half x are computed in f32 and rounded once, as
// torch's kernels (Note [Half-precision gradients] in
// ops/api_elementwise.cpp).

// x * sigmoid(x).
Tensor silu(const Tensor& x0) {
  Tensor x = fwd::compute_float(x0);
  return fwd::cast_back(mul(x, sigmoid(x)), x0);
}

// log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): never overflows.
Tensor softplus(const Tensor& x0) {
  Tensor x = fwd::compute_float(x0);
  return fwd::cast_back(add(log1p(exp(neg(abs(x)))), relu(x)), x0);
}

// Exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi)
// (x + 0.044715 x^3))), as torch's approximate="tanh".
std::vector<Tensor> gelu_fwd(ForwardCtx& ctx) {
  const Tensor x0 = ctx.tensor(0);
  Tensor x = fwd::compute_float(x0);
  std::string mode = ctx.has(1) ? ctx.str(1) : "none";
  auto c = [&](double v) { return scalar_like(v, x); };
  if ((mode == "tanh" || mode == "none") && has_fused_kernel(x))
    return {fwd::cast_back(gelu(x, mode == "tanh"), x0)};  // [Fused kernels]
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
  return {fwd::cast_back(mul(mul(c(0.5), x), add(c(1.0), inner)), x0)};
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

// A builtin's words: its summary and its torch equivalent (OpDef::summary,
// OpDef::torch). Null for ops/core/elementwise.def's SS_API_ONLY rows.
struct Doc {
  const char* summary;
  const char* torch;
};

// Adds a builtin of one operand (x) or two (a, b) to [v]; an SS_API_ONLY
// row adds nothing.
// The operators that spell entries of this family (language.md,
// Operators; `@` is matmul's, in matmul.cpp): the checker and the
// evaluator reach an operator's shape rule and forward through them.
struct Spelling {
  const char* op;
  const char* infix;
  const char* prefix;
};
constexpr Spelling kSpellings[] = {{"add", "+", nullptr},
                                   {"sub", "-", nullptr},
                                   {"mul", "*", nullptr},
                                   {"div", "/", nullptr},
                                   {"floordiv", "//", nullptr},
                                   {"mod", "%", nullptr},
                                   {"pow", "**", nullptr},
                                   {"eq", "==", nullptr},
                                   {"ne", "!=", nullptr},
                                   {"lt", "<", nullptr},
                                   {"le", "<=", nullptr},
                                   {"gt", ">", nullptr},
                                   {"ge", ">=", nullptr},
                                   {"logical_and", "and", nullptr},
                                   {"logical_or", "or", nullptr},
                                   {"neg", nullptr, "-"},
                                   {"logical_not", nullptr, "not"}};

void spell_operators(std::vector<OpDef>& v) {
  for (const Spelling& sp : kSpellings) {
    auto it = std::find_if(
        v.begin(), v.end(), [&](const OpDef& d) { return is(d.name, sp.op); });
    if (it == v.end())
      throw std::logic_error(std::string("operator of no entry: ") + sp.op);
    it->infix = sp.infix;
    it->prefix = sp.prefix;
  }
}

void add_op(std::vector<OpDef>& v,
            const char* name,
            int arity,
            ShapeRule rule,
            Forward f,
            Doc doc,
            bool diff) {
  if (!doc.summary) return;
  std::vector<ParamSpec> params = {{"x"}};
  if (arity == 2) params = {{"a"}, {"b"}};
  OpDef d{name, params, rule, doc.summary};
  d.torch = doc.torch;
  d.differentiable = diff;
  d.forward = f;
  d.device.heads = DeviceRule::Heads::PerHead;  // elementwise: per head
  d.maps_over_params = rule == float_rule || rule == signed_rule;
  v.push_back(d);
}

}  // namespace

std::vector<OpDef> ops_elementwise() {
  std::vector<OpDef> v;
  // Note [Builtins from the table]: one OpDef per SS_BUILTIN row of
  // ops/core/elementwise.def; the kind picks the shape rule, and the vjp column
  // whether it is differentiable (SS_ZERO_GRAD is: its gradient is 0).
  // Parenthesised: a top-level comma would split the macro argument.
#define SS_BUILTIN(summary, torch) (Doc{summary, torch})
#define SS_API_ONLY (Doc{nullptr, nullptr})
#define SS_GRAD(dx) true
#define SS_GRAD2(da, db) true
#define SS_ZERO_GRAD true
#define SS_NO_GRAD false
#define SS_UNARY_FLOAT(Enum, name, doc, cpu, ref, vjp) \
  add_op(v, #name, 1, float_rule, unary_fwd<ops::name>, doc, vjp);
#define SS_UNARY_SIGNED(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  add_op(v, #name, 1, signed_rule, unary_fwd<ops::name>, doc, vjp);
#define SS_UNARY_PREDICATE(Enum, name, doc, cpu, cpu_int, ref) \
  add_op(v, #name, 1, predicate_rule, unary_fwd<ops::name>, doc, false);
#define SS_UNARY_LOGICAL(Enum, name, doc, cpu, ref) \
  add_op(v, #name, 1, logical_not_rule, unary_fwd<ops::name>, doc, false);
#define SS_BINARY_ARITH(Enum, name, doc, cpu, cpu_int, ref, vjp) \
  add_op(v, #name, 2, arith_rule, binary_fwd<ops::name>, doc, vjp);
#define SS_BINARY_TRUEDIV(Enum, name, doc, cpu, ref, vjp) \
  add_op(v, #name, 2, div_rule, binary_fwd<ops::name>, doc, vjp);
#define SS_BINARY_EXTREMUM(Enum, name, doc, cpu, ref, vjp) \
  add_op(v, #name, 2, minmax_rule, binary_fwd<ops::name>, doc, vjp);
#define SS_BINARY_COMPARE(Enum, name, doc, cpu, ref) \
  add_op(v, #name, 2, compare_rule, binary_fwd<ops::name>, doc, false);
#define SS_BINARY_LOGICAL(Enum, name, doc, cpu, ref) \
  add_op(v, #name, 2, logical_rule, binary_fwd<ops::name>, doc, false);
#include "ops/core/elementwise.def"
#undef SS_BUILTIN
#undef SS_API_ONLY
#undef SS_GRAD
#undef SS_GRAD2
#undef SS_ZERO_GRAD
#undef SS_NO_GRAD
  // The composites, written with the API (their gradients come from its
  // VJPs), and the ops of three operands.
  add_op(v,
         "silu",
         1,
         float_rule,
         unary_fwd<silu>,
         {"x * sigmoid(x), elementwise", "torch.nn.functional.silu(x)"},
         true);
  add_op(v,
         "softplus",
         1,
         float_rule,
         unary_fwd<softplus>,
         {"log(1 + exp(x)), elementwise, without overflow",
          "torch.nn.functional.softplus(x)"},
         true);
  OpDef gelu{"gelu",
             {{"x"}, {"approximate", ParamKind::Value, false}},
             float_rule,
             "GELU, the exact erf form; approximate=\"tanh\" for the tanh one"};
  gelu.forward = gelu_fwd;
  gelu.torch = "torch.nn.functional.gelu(x) (approximate=\"tanh\" alike)";
  gelu.device.heads = DeviceRule::Heads::PerHead;
  gelu.maps_over_params = true;
  v.push_back(gelu);
  OpDef where_op{"where",
                 {{"c"}, {"a"}, {"b"}},
                 where_rule,
                 "a where c is true, else b; all three broadcast"};
  where_op.forward = where_fwd;
  where_op.torch = "torch.where(c, a, b)";
  where_op.device.heads = DeviceRule::Heads::PerHead;
  v.push_back(where_op);
  OpDef clip{"clip",
             {{"x"}, {"lo"}, {"hi"}},
             clip_rule,
             "x limited to [lo, hi], elementwise"};
  clip.forward = clip_fwd;
  clip.torch = "torch.clamp(x, lo, hi)";
  clip.device.heads = DeviceRule::Heads::PerHead;
  v.push_back(clip);
  OpDef masked_fill{"masked_fill",
                    {{"x"}, {"mask"}, {"v"}},
                    masked_fill_rule,
                    "x with v where mask (broadcast to x) is true"};
  masked_fill.forward = masked_fill_fwd;
  masked_fill.torch = "x.masked_fill(mask, v)";
  masked_fill.device.heads = DeviceRule::Heads::PerHead;
  v.push_back(masked_fill);
  spell_operators(v);
  return v;
}

}  // namespace ss::ops
