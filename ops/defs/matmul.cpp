// matmul (`a @ b`) and einsum (typed by the checker from its patterns).

#include "ops/api.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using diag::Code;

Type matmul_rule(RuleCtx& ctx) {
  const Type& a = ctx.type(0);
  const Type& b = ctx.type(1);
  if (any_error({&a, &b})) return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  for (size_t i = 0; i < 2; ++i) {
    const Type& t = ctx.type(i);
    if (!t.is_numeric()) {
      require_tensor(ctx, i);
      return Type::error();
    }
    if (!t.is_tensor() || t.rank() == 0) {
      ctx.error(Code::E0302,
                ctx.span(i),
                "matmul needs operands of at least 1 axis, but " + ctx.text(i) +
                    " is " + t.str(),
                label);
      return Type::error();
    }
  }
  const Axes& sa = a.shape;
  const Axes& sb = b.shape;
  // The contracted axes: a's last; b's first when 1-d, else second to last.
  const Axis& ka = sa.back();
  const Axis& kb = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  if (ka != kb) {
    ctx.error(Code::E0302,
              ctx.call_span(),
              "matmul contracts " + ka.str_sized() + " with " + kb.str_sized(),
              label);
    return Type::error();
  }
  Axes out;
  if (sa.size() <= 2 && sb.size() <= 2) {
    // [.. n K] @ [K] / [K M]
    if (sa.size() == 2) out.push_back(sa[0]);
    if (sb.size() == 2) out.push_back(sb[1]);
  } else {
    // numpy: leading (batch) axes broadcast; 1-d operands get no batch.
    Axes ba, bb;
    if (sa.size() > 2) ba.assign(sa.begin(), sa.end() - 2);
    if (sb.size() > 2) bb.assign(sb.begin(), sb.end() - 2);
    const Axis* x = nullptr;
    const Axis* y = nullptr;
    auto batch = broadcast_shapes(ba, bb, &x, &y);
    if (!batch) {
      ctx.error(Code::E0302,
                ctx.call_span(),
                "matmul's batch axes " + types::shape_str(ba) + " and " +
                    types::shape_str(bb) + " do not align: " + x->str_sized() +
                    " vs " + y->str_sized(),
                label);
      return Type::error();
    }
    out = *batch;
    if (sa.size() >= 2) out.push_back(sa[sa.size() - 2]);
    if (sb.size() >= 2) out.push_back(sb.back());
  }
  Type r = Type::tensor(std::move(out), types::promote(a.dtype, b.dtype));
  r.varying = union_varying({&a, &b});
  return r;
}

// The rule's dtype, promote(a, b), as torch's (i32 @ i32 is i32): the
// API sums ints in i64, cast back; bools' product is their any (numpy's).
std::vector<Tensor> matmul_fwd(ForwardCtx& ctx) {
  Tensor a = ctx.tensor(0), b = ctx.tensor(1);
  Tensor y = ops::matmul(a, b);
  const types::DType d = types::promote(a.dtype(), b.dtype());
  return {y.dtype() == d ? y : cast(y, d)};
}

}  // namespace

std::vector<OpDef> ops_matmul() {
  OpDef matmul{"matmul",
               {{"a"}, {"b"}},
               matmul_rule,
               "a @ b: contracts a's last axis with b's first (numpy matmul)"};
  matmul.forward = matmul_fwd;
  matmul.infix = "@";
  matmul.torch = "a @ b, torch.matmul(a, b)";
  matmul.autocast = Autocast::Lower;
  OpDef einsum{"einsum",
               {{"x"}},
               nullptr,
               "einsum(t1, ..., tk, p1, ..., pk -> out): contraction by "
               "patterns"};
  einsum.variadic = true;
  einsum.intrinsic = Intrinsic::Einsum;
  einsum.torch = "torch.einsum(\"bhnd,bhtd->bhnt\", q, k)";
  einsum.autocast = Autocast::Lower;
  // Per head, or each device's partial sum over its heads all-reduced.
  matmul.device.heads = DeviceRule::Heads::Sums;
  einsum.device.heads = DeviceRule::Heads::Sums;
  return {matmul, einsum};
}

}  // namespace ss::ops
