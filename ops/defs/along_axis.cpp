// Ops along one axis (over=): softmax log_softmax cumsum sort topk gather
// scatter. None has a lowering across the batch axis (E1801 there).

#include <cstring>

#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using diag::Code;

Type keep_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0)) return Type::error();
  if (!over_one(ctx, 1, x.shape)) return Type::error();
  Type r = x;
  if (std::strcmp(ctx.op_name(), "cumsum") == 0)
    r.dtype = sum_result(x.dtype);
  else
    r.dtype = float_result(x.dtype);
  return r;
}

Type sort_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0)) return Type::error();
  if (!over_one(ctx, 1, x.shape)) return Type::error();
  Type idx = x;
  idx.dtype = DType::I64;
  return Type::tuple({x, idx});
}

Type topk_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  if (any_error({&x, &k})) return Type::error();
  if (!require_tensor(ctx, 0)) return Type::error();
  if (k.kind != Type::Kind::Int) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "topk's k is a host int, but " + ctx.text(1) + " is " + k.str(),
              describe(ctx, 1));
    return Type::error();
  }
  auto pos = over_one(ctx, 2, x.shape);
  if (!pos) return Type::error();
  Axis ax;
  auto n = ctx.const_int(1);
  if (!n) {
    ax = ctx.fresh("k");
  } else {
    auto have = x.shape[*pos].static_size();
    if (*n < 0 || (have && *n > *have)) {
      ctx.error(Code::E0303,
                ctx.span(1),
                "topk takes k = " + std::to_string(*n) + " of " +
                    x.shape[*pos].str_sized(),
                describe(ctx, 0));
      return Type::error();
    }
    ax = Axis::lit(*n);
  }
  Type vals = x;
  vals.shape[*pos] = ax;
  Type idx = vals;
  idx.dtype = DType::I64;
  return Type::tuple({vals, idx});
}

bool require_int_index(RuleCtx& ctx, size_t i) {
  const Type& t = ctx.type(i);
  if (!require_tensor(ctx, i)) return false;
  if (!types::is_int(t.dtype)) {
    ctx.error(Code::E0304,
              ctx.span(i),
              std::string(ctx.op_name()) + " needs int indices, but " +
                  ctx.text(i) + " is " + t.str(),
              describe(ctx, i));
    return false;
  }
  return true;
}

bool same_rank(RuleCtx& ctx, size_t i, size_t j) {
  if (ctx.type(i).rank() == ctx.type(j).rank()) return true;
  ctx.error(Code::E0303,
            ctx.span(j),
            std::string(ctx.op_name()) + " needs " + ctx.text(j) +
                " to have as many axes as " + ctx.text(i),
            describe(ctx, i) + ", " + describe(ctx, j));
  return false;
}

Type gather_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& idx = ctx.type(1);
  if (any_error({&x, &idx})) return Type::error();
  if (!require_tensor(ctx, 0) || !require_int_index(ctx, 1))
    return Type::error();
  if (!over_one(ctx, 2, x.shape)) return Type::error();
  if (!same_rank(ctx, 0, 1)) return Type::error();
  Type r = idx;
  r.dtype = x.dtype;
  r.varying = union_varying({&x, &idx});
  return r;
}

Type scatter_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& idx = ctx.type(1);
  const Type& v = ctx.type(2);
  if (any_error({&x, &idx, &v})) return Type::error();
  if (!require_tensor(ctx, 0) || !require_int_index(ctx, 1) ||
      !require_tensor(ctx, 2, true))
    return Type::error();
  if (!over_one(ctx, 3, x.shape)) return Type::error();
  if (!same_rank(ctx, 0, 1)) return Type::error();
  if (v.is_tensor() && v.rank() > 0 && v.shape != idx.shape) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "scatter needs values shaped like the indices " +
                  types::shape_str(idx.shape) + ", but " + ctx.text(2) +
                  " is " + v.str(),
              describe(ctx, 1) + ", " + describe(ctx, 2));
    return Type::error();
  }
  Type r = x;
  r.varying = union_varying({&x, &idx, &v});
  return r;
}

// ---------------------------------------------------------------- forwards

// exp(x - m) / sum(exp(x - m)), m the row's max (without gradient: the
// result does not depend on it).
// A half x is computed in f32 and rounded once, as torch's kernel (Note
// [Half-precision gradients] in ops/api_elementwise.cpp).
std::vector<Tensor> softmax_fwd(ForwardCtx& ctx) {
  const Tensor x0 = ctx.tensor(0);
  Tensor x = fwd::compute_float(x0);
  int a = fwd::over_one(ctx, 1, x);
  if (a + 1 == static_cast<int>(x.rank()) && has_fused_kernel(x))
    return {fwd::cast_back(softmax_last(x, false), x0)};  // [Fused kernels]
  Tensor e = exp(sub(x, fwd::stable_shift(x, {a})));
  return {fwd::cast_back(div(e, sum(e, {a}, true)), x0)};
}

// x - logsumexp(x): stable for large and -inf logits.
std::vector<Tensor> log_softmax_fwd(ForwardCtx& ctx) {
  const Tensor x0 = ctx.tensor(0);
  Tensor x = fwd::compute_float(x0);
  int a = fwd::over_one(ctx, 1, x);
  if (a + 1 == static_cast<int>(x.rank()) && has_fused_kernel(x))
    return {fwd::cast_back(softmax_last(x, true), x0)};  // [Fused kernels]
  return {fwd::cast_back(sub(x, fwd::logsumexp(x, {a}, true)), x0)};
}

std::vector<Tensor> cumsum_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  return {cumsum(x, fwd::over_one(ctx, 1, x))};
}

std::vector<Tensor> sort_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  auto [values, indices] = sort(x, fwd::over_one(ctx, 1, x));
  return {values, indices};
}

// The k largest, in descending order (torch.topk): a descending sort cut
// to its first k.
std::vector<Tensor> topk_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  int a = fwd::over_one(ctx, 2, x);
  int64_t k = ctx.size(1);
  int64_t n = x.shape()[a];
  if (k < 0 || k > n)
    fwd::value_error("k = " + std::to_string(k) + " is not in [0, " +
                     std::to_string(n) + "]");
  auto [values, indices] = sort(x, a, true);
  return {slice(values, a, 0, k), slice(indices, a, 0, k)};
}

std::vector<Tensor> gather_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  return {gather(x, ctx.tensor(1), fwd::over_one(ctx, 2, x))};
}

// torch.scatter: x with v written at idx along over=. A write, built from
// scatter_add as x + scatter_add(0, idx, v - x[idx]) so that x's gradient
// is zero where written and v's is the cotangent gathered at idx. Repeated
// indices (unspecified in torch) add their differences here.
std::vector<Tensor> scatter_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  Tensor idx = ctx.tensor(1);
  Tensor v = ctx.tensor(2);
  int a = fwd::over_one(ctx, 3, x);
  if (v.shape() != idx.shape()) v = broadcast_to(v, idx.shape());
  if (v.dtype() != x.dtype()) v = cast(v, x.dtype());
  // Written positions take the value written there; a position written
  // several times (torch leaves it unspecified) takes the sum of its
  // values. Built from scatter_add so it is differentiable in x and v.
  Tensor hit =
      gt(scatter_add(zeros_like(x), idx, ones_like(v), a), scalar_like(0, x));
  Tensor kept = where(hit, zeros_like(x), x);
  Tensor y = scatter_add(kept, idx, v, a);
  return {y.dtype() == x.dtype() ? y : cast(y, x.dtype())};  // bools add as i64
}

constexpr ParamSpec kOver{"over", ParamKind::Axes, true};

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          Forward forward,
          const char* summary,
          bool diff = true) {
  OpDef d{name, std::move(params), rule, summary};
  d.device = refused();  // along the batch axis: E1801
  d.differentiable = diff;
  d.forward = forward;
  return d;
}

// E1801's help for an op that has a lowered equivalent.
OpDef with_help(OpDef d, const char* help) {
  d.device.refused_help = help;
  return d;
}

}  // namespace

std::vector<OpDef> ops_along_axis() {
  return {
      with_heads(
          with_help(def("softmax",
                        {{"x"}, kOver},
                        keep_rule,
                        softmax_fwd,
                        "exp(x) / sum(exp(x)) along over=")
                        .with_torch("torch.softmax(x, dim)"),
                    "exp and sum are lowered, so the same softmax runs on any "
                    "device count written as exp({x}) / sum(exp({x}), "
                    "over={b}) (without softmax's max shift: for logits of "
                    "modest size)"),
          DeviceRule::Heads::PerHead),
      with_heads(
          with_help(
              def("log_softmax",
                  {{"x"}, kOver},
                  keep_rule,
                  log_softmax_fwd,
                  "log(softmax(x)) along over=, stably")
                  .with_torch("torch.log_softmax(x, dim)"),
              "exp, log and sum are lowered, so the same log_softmax runs "
              "on any device count written as {x} - log(sum(exp({x}), "
              "over={b})) (without the max shift: for logits of modest "
              "size)"),
          DeviceRule::Heads::PerHead),
      def("cumsum",
          {{"x"}, kOver},
          keep_rule,
          cumsum_fwd,
          "running (inclusive) sum along over=")
          .with_torch("torch.cumsum(x, dim)"),
      def("sort",
          {{"x"}, kOver},
          sort_rule,
          sort_fwd,
          "(values, indices) sorted ascending along over=")
          .with_torch("torch.sort(x, dim)"),
      def("topk",
          {{"x"}, {"k"}, kOver},
          topk_rule,
          topk_fwd,
          "(values, indices) of the k largest along over=, a new axis of k")
          .with_torch("torch.topk(x, k, dim)"),
      def("gather",
          {{"x"}, {"idx"}, kOver},
          gather_rule,
          gather_fwd,
          "x's values at idx along over= (torch.gather); idx's shape")
          .with_torch("torch.gather(x, dim, idx)"),
      def("scatter",
          {{"x"}, {"idx"}, {"v"}, kOver},
          scatter_rule,
          scatter_fwd,
          "x with v written at idx along over= (torch.scatter)")
          .with_torch("x.scatter(dim, idx, v) (a position written twice: the "
                      "sum here, unspecified in torch)"),
  };
}

}  // namespace ss::ops
