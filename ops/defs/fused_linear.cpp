// fused_linear: act(scale * (x @ w) + b) + residual as one product with its
// epilogue (Note [Products with epilogues] in ops/cpu/cpu_epilogue.cpp).
// The checker also runs it in place of the layers written out (Note
// [Layers run as one product] in interp/check/fusion_layers.cpp): the
// builtins those are made of are named here, in this entry's
// `fuses_layer`, so that nothing under interp/ matches an op by name.

#include "ops/api.h"
#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using diag::Code;

constexpr size_t kX = 0, kW = 1, kB = 2, kAct = 3, kResidual = 4, kScale = 5;

/// The activation an act= string names; nullopt for another string.
std::optional<Activation> activation(const std::string& s) {
  if (s == "none") return Activation::None;
  if (s == "relu") return Activation::Relu;
  if (s == "gelu") return Activation::Gelu;
  if (s == "gelu_tanh") return Activation::GeluTanh;
  return std::nullopt;
}

// x [*s K] @ w [K N] (+ b [N]) (+ residual [*s N]) -> [*s N], one float
// dtype: the layer's values as written, with nothing broadcast but b.
Type fused_linear_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(kX);
  const Type& w = ctx.type(kW);
  for (size_t i : {kX, kW, kB, kResidual})
    if (ctx.has(i) && ctx.type(i).kind == Type::Kind::Error)
      return Type::error();
  for (size_t i : {kX, kW, kB, kResidual})
    if (ctx.has(i) && !require_float(ctx, i)) return Type::error();
  const std::string label = describe(ctx, kX) + ", " + describe(ctx, kW);
  if (x.rank() < 1 || w.rank() != 2) {
    ctx.error(Code::E0303,
              ctx.call_span(),
              "fused_linear needs x [.. K] and w [K N], but x is " + x.str() +
                  " and w is " + w.str(),
              label);
    return Type::error();
  }
  if (x.shape.back() != w.shape[0]) {
    ctx.error(Code::E0302,
              ctx.call_span(),
              "fused_linear contracts x's " + x.shape.back().str_sized() +
                  " with w's " + w.shape[0].str_sized(),
              label);
    return Type::error();
  }
  Type out = x;
  out.shape.back() = w.shape[1];
  std::vector<const Type*> all = {&x, &w};
  for (size_t i : {kB, kResidual}) {
    if (!ctx.has(i)) continue;
    const Type& t = ctx.type(i);
    const Axes want = i == kB ? Axes{w.shape[1]} : out.shape;
    if (t.shape != want) {
      ctx.error(Code::E0301,
                ctx.span(i),
                std::string("fused_linear's ") + (i == kB ? "b" : "residual") +
                    " must be " + types::shape_str(want) + ", but " +
                    ctx.text(i) + " is " + t.str(),
                label);
      return Type::error();
    }
    all.push_back(&t);
  }
  for (const Type* t : all)
    if (t->dtype != x.dtype) {
      ctx.error(Code::E0304,
                ctx.call_span(),
                "fused_linear needs its tensors in one dtype",
                label);
      return Type::error();
    }
  if (ctx.has(kAct)) {
    auto s = ctx.const_str(kAct);
    if (!s || !activation(*s)) {
      ctx.error(Code::E0303,
                ctx.span(kAct),
                "fused_linear's act= is \"none\", \"relu\", \"gelu\" or "
                "\"gelu_tanh\", written as a string",
                label);
      return Type::error();
    }
  }
  if (ctx.has(kScale) && !require_number(ctx, kScale)) return Type::error();
  const Type none;
  out.varying =
      union_varying({&x,
                     &w,
                     ctx.has(kB) ? &ctx.type(kB) : &none,
                     ctx.has(kResidual) ? &ctx.type(kResidual) : &none});
  return out;
}

std::vector<Tensor> fused_linear_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(kX), w = ctx.tensor(kW);
  Tensor b = ctx.has(kB) ? ctx.tensor(kB) : Tensor();
  Tensor r = ctx.has(kResidual) ? ctx.tensor(kResidual) : Tensor();
  const Activation act =
      ctx.has(kAct) ? activation(ctx.str(kAct)).value_or(Activation::None)
                    : Activation::None;
  const double scale = ctx.has(kScale) ? ctx.number(kScale) : 1.0;
  // Halves computed in f32 and rounded once, as linear's are.
  auto wide = [](const Tensor& t) {
    return t.defined() ? fwd::compute_float(t) : t;
  };
  Tensor y = linear_epilogue(wide(x), wide(w), wide(b), act, wide(r), scale);
  return {fwd::cast_back(y, x)};
}

}  // namespace

std::vector<OpDef> ops_fused_linear() {
  OpDef d{"fused_linear",
          {{"x"},
           {"w"},
           {"b", ParamKind::Value, false},
           {"act", ParamKind::Value, false},
           {"residual", ParamKind::Value, false},
           {"scale", ParamKind::Value, false}},
          fused_linear_rule,
          "act(scale * (x @ w) + b) + residual for x [*s K], w [K N], b [N], "
          "residual [*s N]: [*s N] as one product with its epilogue; act= "
          "\"none\" (default), \"relu\", \"gelu\" or \"gelu_tanh\""};
  d.forward = fused_linear_fwd;
  d.fuses_layer = LayerChain{"matmul", "add", "linear", "relu", "gelu"};
  return {std::move(d).with_torch(
      "torch.relu(torch.addmm(b, x, w, alpha=scale)) + residual (gelu "
      "alike; torch._addmm_activation fuses relu and gelu the same way)")};
}

}  // namespace ss::ops
