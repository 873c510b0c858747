// scaled_dot_product_attention: softmax(q k^T * scale) v in one kernel
// (Note [Fused attention] in ops/cpu/cpu_attention.cpp), as torch 2's
// torch.nn.functional.scaled_dot_product_attention. The checker also runs
// it in place of the attention written out (Note [The attention written
// out] in interp/check/fusion.cpp): the builtins that pattern is made of are
// named here, in this entry's `fuses`, so that nothing under interp/
// matches an op by name.

#include <cmath>

#include "ops/api.h"
#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using diag::Code;

// q [*s n d], k [*s t d], v [*s t e] -> [*s n e]: the leading axes alike
// (one matrix per example and head), k with q's features, v with k's rows.
Type attention_rule(RuleCtx& ctx) {
  const Type& q = ctx.type(0);
  const Type& k = ctx.type(1);
  const Type& v = ctx.type(2);
  if (any_error({&q, &k, &v})) return Type::error();
  for (size_t i = 0; i < 3; ++i)
    if (!require_float(ctx, i)) return Type::error();
  const std::string label =
      describe(ctx, 0) + ", " + describe(ctx, 1) + ", " + describe(ctx, 2);
  for (size_t i = 0; i < 3; ++i)
    if (ctx.type(i).rank() < 2) {
      ctx.error(Code::E0303,
                ctx.span(i),
                "scaled_dot_product_attention needs [.. n d] operands of at "
                "least 2 axes, but " +
                    ctx.text(i) + " is " + ctx.type(i).str(),
                label);
      return Type::error();
    }
  if (k.dtype != q.dtype || v.dtype != q.dtype) {
    ctx.error(Code::E0304,
              ctx.call_span(),
              "scaled_dot_product_attention needs q, k and v of one dtype",
              label);
    return Type::error();
  }
  const size_t r = q.rank();
  auto lead = [](const Type& t) {
    return Axes(t.shape.begin(), t.shape.end() - 2);
  };
  if (k.rank() != r || v.rank() != r || lead(k) != lead(q) ||
      lead(v) != lead(q)) {
    ctx.error(Code::E0303,
              ctx.call_span(),
              "scaled_dot_product_attention needs q, k and v with the same "
              "leading axes " +
                  types::shape_str(lead(q)),
              label);
    return Type::error();
  }
  if (k.shape[r - 1] != q.shape[r - 1]) {
    ctx.error(Code::E0302,
              ctx.call_span(),
              "scaled_dot_product_attention contracts q's " +
                  q.shape[r - 1].str_sized() + " with k's " +
                  k.shape[r - 1].str_sized(),
              label);
    return Type::error();
  }
  if (v.shape[r - 2] != k.shape[r - 2]) {
    ctx.error(Code::E0302,
              ctx.call_span(),
              "scaled_dot_product_attention weighs v's rows " +
                  v.shape[r - 2].str_sized() + " by k's " +
                  k.shape[r - 2].str_sized(),
              label);
    return Type::error();
  }
  if (ctx.has(3) && !require_kind(ctx, 3, Type::Kind::Bool, "a bool"))
    return Type::error();
  if (ctx.has(4) && !require_number(ctx, 4)) return Type::error();
  Type out = q;
  out.shape.back() = v.shape.back();
  out.varying = union_varying({&q, &k, &v});
  return out;
}

std::vector<Tensor> attention_fwd(ForwardCtx& ctx) {
  Tensor q = ctx.tensor(0), k = ctx.tensor(1), v = ctx.tensor(2);
  const bool causal = ctx.flag(3, false);
  const double scale =
      ctx.has(4) ? ctx.number(4)
                 : 1.0 / std::sqrt(double(q.rank() ? q.shape().back() : 1));
  // One part (Note [An op in parts under split H]): per head, unless a
  // heads axis is among the matrices' own axes (attention_heads_parts).
  Tensor o = ctx.part(0, {q, k, v}, [&](std::vector<Tensor>& t) {
    // Halves are computed in f32 and rounded once, as softmax's are.
    Tensor o32 = attention(fwd::compute_float(t[0]),
                           fwd::compute_float(t[1]),
                           fwd::compute_float(t[2]),
                           scale,
                           causal);
    return fwd::cast_back(o32, t[0]);
  });
  return {o};
}

// Under `split H` the op is per head when the heads are a leading axis
// (each device's matrices are whole); a heads axis among n, t, d or e
// would mix heads in one softmax, so those four are the part's over=, and
// a split there is gathered (Note [Split heads]).
std::vector<HeadsPart> attention_heads_parts(const std::vector<Type>& args,
                                             const Type& result) {
  if (args.size() < 3) return {};
  HeadsPart p{DeviceRule::Heads::PerHead, {args[0], args[1], args[2]}, result};
  const int r = static_cast<int>(args[0].rank());
  if (r >= 2) p.over = {r - 2, r - 1};
  return {p};
}

}  // namespace

std::vector<OpDef> ops_attention() {
  OpDef d{"scaled_dot_product_attention",
          {{"q"},
           {"k"},
           {"v"},
           {"causal", ParamKind::Value, false},
           {"scale", ParamKind::Value, false}},
          attention_rule,
          "softmax(q k^T * scale, over t) v for q [*s n d], k [*s t d], v "
          "[*s t e]: [*s n e] in one kernel; causal=true lets row i see keys "
          "j <= i (causal(n, t)); scale defaults to 1 / sqrt(d)"};
  d.forward = attention_fwd;
  d.device.heads_parts = attention_heads_parts;
  d.fuses = AttentionChain{"einsum", "masked_fill", "causal", "softmax"};
  d.autocast = Autocast::Lower;  // torch.autocast's list has it (2.0)
  return {std::move(d).with_torch(
      "torch.nn.functional.scaled_dot_product_attention(q, k, v, "
      "is_causal=causal, scale=scale) (torch 2.0; scale= from 2.1)")};
}

}  // namespace ss::ops
