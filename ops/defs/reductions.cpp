// Reductions: sum mean max min prod std var logsumexp norm argmax argmin
// any all, and reduce(x, over=, with=). Without over= they reduce every
// axis to a 0-d value; keepdim=true keeps each as size 1 (Note [keepdim]). sum
// and mean (and reduce with sum) all-reduce across the batch axis; the others
// are E1801 there.

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>

#include "ops/defs/batch_lowering.h"
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

/// The result dtype of reduction [op] on [d].
DType reduce_dtype(const char* op, DType d) {
  if (is(op, "sum") || is(op, "prod")) return sum_result(d);
  if (is(op, "max") || is(op, "min")) return d;
  if (is(op, "argmax") || is(op, "argmin")) return DType::I64;
  if (is(op, "any") || is(op, "all")) return DType::Bool;
  return float_result(d);  // mean std var logsumexp norm
}

/// norm(g)'s dtype: f64 when the model trains an f64 param (the norm is
/// accumulated in f64, and torch's clip_grad_norm_ returns f64 norms of f64
/// grads), else f32.
DType grads_norm_dtype(const Type& g) {
  if (!g.model) return DType::F32;
  Type m = g;
  m.kind = K::Model;
  for (const types::FieldInfo& f : g.model->fields) {
    if (f.buffer) continue;
    Type t = types::model_field_type(m, f);
    if (t.kind == K::Model) t.kind = K::Grads;
    if (t.kind == K::Grads ? grads_norm_dtype(t) == DType::F64
                           : t.is_tensor() && t.dtype == DType::F64)
      return DType::F64;
  }
  return DType::F32;
}

// Note [keepdim]: torch's keepdim=True keeps each reduced axis as size 1,
// so that a normalisation's statistics broadcast against their input
// (`x - mean(x, over=D, keepdim=true)` of [b D] is [b D] - [b 1]). The
// type says it: the reduced axes become literal 1s in place; the forward
// reshapes the reduction's result to that shape, so every reduction's
// gradient and its lowering across the batch axis are the plain ones
// (mean's share reshapes what its all-reduce finishes). keepdim= is part
// of the type, so it is a literal true or false.

/// Whether param [i] asks for keepdim (Note [keepdim]); nullopt after an
/// error (not a literal bool).
std::optional<bool> keepdim(RuleCtx& ctx, size_t i) {
  if (!ctx.has(i)) return false;
  if (ctx.type(i).is_error()) return std::nullopt;
  auto b = ctx.const_bool(i);
  if (!b)
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) +
                  "'s keepdim= is part of the result's type: write true or "
                  "false, not " +
                  ctx.text(i),
              describe(ctx, i));
  return b;
}

/// Reduces param 0 with [op] over param [over_i] (all axes when absent),
/// keeping the axes as 1s where param [keep_i] says so.
Type reduce_impl(RuleCtx& ctx, const char* op, size_t over_i, size_t keep_i) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (is(op, "norm") && x.kind == K::Grads) {
    if (ctx.has(over_i)) {
      ctx.error(Code::E0303,
                ctx.span(over_i),
                "norm of gradients is the global L2 norm and takes no over=",
                describe(ctx, 0));
      return Type::error();
    }
    if (ctx.has(keep_i)) {
      ctx.error(Code::E0303,
                ctx.span(keep_i),
                "norm of gradients is one number and takes no keepdim=",
                describe(ctx, 0));
      return Type::error();
    }
    return Type::scalar(grads_norm_dtype(x));
  }
  if (!require_tensor(ctx, 0)) return Type::error();
  const std::optional<bool> keep = keepdim(ctx, keep_i);
  if (!keep) return Type::error();
  Type r = x;
  r.dtype = reduce_dtype(op, x.dtype);
  std::vector<size_t> pos(x.shape.size());
  std::iota(pos.begin(), pos.end(), size_t{0});
  if (ctx.has(over_i)) {
    auto over = ctx.over(over_i, x.shape);
    if (!over) return Type::error();
    pos = *over;
  }
  if (!*keep) {
    r.shape = remove_axes(x.shape, pos);
    return r;
  }
  for (size_t p : pos) r.shape[p] = types::Axis::lit(1);
  return r;
}

Type reduction_rule(RuleCtx& ctx) {
  return reduce_impl(ctx, ctx.op_name(), 1, 2);
}

// max(x, over=) / min(x, over=) reduce; max(a, b) of two values is the
// elementwise (or host) maximum.
Type max_min_rule(RuleCtx& ctx) {
  if (!ctx.has(1)) return reduce_impl(ctx, ctx.op_name(), 2, 3);
  const Type& a = ctx.type(0);
  const Type& b = ctx.type(1);
  if (any_error({&a, &b})) return Type::error();
  for (size_t i : {size_t{2}, size_t{3}})
    if (ctx.has(i)) {
      ctx.error(Code::E0305,
                ctx.span(i),
                std::string(ctx.op_name()) + " of two values takes no " +
                    (i == 2 ? "over=" : "keepdim=") + "; use " + ctx.op_name() +
                    "(x, over=...) to reduce",
                ctx.text(i));
      return Type::error();
    }
  for (size_t i = 0; i < 2; ++i)
    if (!require_tensor(ctx, i, true)) return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  auto r = broadcast(ctx, a, b, ctx.span(0), ctx.span(1), label);
  if (!r) return Type::error();
  return *r;
}

Type reduce_with_rule(RuleCtx& ctx) {
  const Type& f = ctx.type(2);
  const char* op = "sum";
  if (ctx.has(2)) {
    if (f.is_error()) return Type::error();
    static const char* kOk[] = {"sum", "max", "min", "prod", "mean"};
    op = nullptr;
    if (f.kind == K::Fn)
      for (const char* k : kOk)
        if (f.fn_name == k) op = k;
    if (!op) {
      ctx.error(Code::E0303,
                ctx.span(2),
                "reduce's with= is one of sum, max, min, prod, mean, not " +
                    ctx.text(2),
                "with=" + ctx.text(2));
      return Type::error();
    }
  }
  return reduce_impl(ctx, op, 1, 3);
}

// ---------------------------------------------------------------- forwards

// argmax/argmin over [axes] (every axis when empty): one axis directly;
// several are moved to the end (in the operand's axis order, whatever
// order over= wrote them in) and merged, so the result is the row-major
// flat index within them, as torch's argmax without dim.
Tensor arg_extreme(bool is_max, const Tensor& x, const std::vector<int>& axes) {
  if (x.rank() == 0) return Tensor::zeros({}, DType::I64, x.device());
  if (axes.size() == 1) return is_max ? argmax(x, axes[0]) : argmin(x, axes[0]);
  std::vector<int> perm;
  std::vector<bool> over(x.rank(), axes.empty());
  for (int a : axes) over[a] = true;
  Shape keep;
  for (size_t a = 0; a < x.rank(); ++a)
    if (!over[a]) {
      perm.push_back(static_cast<int>(a));
      keep.push_back(x.shape()[a]);
    }
  if (axes.empty()) {
    for (size_t a = 0; a < x.rank(); ++a) perm.push_back(static_cast<int>(a));
  } else {
    std::vector<int> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    perm.insert(perm.end(), sorted.begin(), sorted.end());
  }
  Shape merged = keep;
  merged.push_back(fwd::count_over(x, axes));
  Tensor y = reshape(permute(x, perm), merged);
  int last = static_cast<int>(merged.size()) - 1;
  return is_max ? argmax(y, last) : argmin(y, last);
}

/// Reduction [op] of [x] over [axes] (every axis when empty).
Tensor reduce_by(const std::string& op,
                 const Tensor& x,
                 const std::vector<int>& axes) {
  if (op == "sum") return sum(x, axes);
  if (op == "mean") return mean(x, axes);
  if (op == "max") return max(x, axes);
  if (op == "min") return min(x, axes);
  if (op == "prod") return prod(x, axes);
  if (op == "any") return any(x, axes);
  if (op == "all") return all(x, axes);
  if (op == "var") return fwd::variance(x, axes, true);
  if (op == "std") return sqrt(fwd::variance(x, axes, true));
  if (op == "logsumexp") return fwd::logsumexp(x, axes);
  if (op == "norm") {
    // Note [Gradient of a zero norm]
    // sqrt's derivative at 0 is infinite, and times the 2x = 0 of the sum of
    // squares it made a zero vector's gradient NaN (a zero-initialised row
    // poisoned training). As torch's vector_norm, the gradient there is 0:
    // sqrt sees 1 where the sum is 0, and where() routes no gradient to it.
    // (Found by tests/torch/op_table.py's "norm of a zero vector" row.)
    Tensor f = fwd::to_float(x);
    Tensor s = sum(mul(f, f), axes);
    Tensor zero = eq(s, scalar_like(0, s));
    Tensor root = sqrt(where(zero, scalar_like(1, s), s));
    return where(zero, scalar_like(0, s), root);
  }
  if (op == "argmax") return arg_extreme(true, x, axes);
  if (op == "argmin") return arg_extreme(false, x, axes);
  fwd::value_error("no reduction named `" + op + "`");
}

/// [x]'s shape with [axes] (every axis when empty) as 1s: a keepdim
/// reduction's (Note [keepdim]).
Shape kept_shape(const Tensor& x, const std::vector<int>& axes) {
  Shape s = x.shape();
  for (size_t a = 0; a < s.size(); ++a)
    if (axes.empty() || std::find(axes.begin(), axes.end(), a) != axes.end())
      s[a] = 1;
  return s;
}

/// reduce_by, kept as 1s where param [keep_i] says so.
Tensor reduce_kept(ForwardCtx& ctx,
                   const std::string& op,
                   const Tensor& x,
                   size_t over_i,
                   size_t keep_i) {
  const std::vector<int> axes = fwd::over_axes(ctx, over_i, x);
  Tensor y = reduce_by(op, x, axes);
  return ctx.flag(keep_i, false) ? reshape(y, kept_shape(x, axes)) : y;
}

std::vector<Tensor> reduction_fwd(ForwardCtx& ctx) {
  return {reduce_kept(ctx, ctx.op_name(), ctx.tensor(0), 1, 2)};
}

// max(x, over=) reduces; max(a, b) is the elementwise maximum.
std::vector<Tensor> max_min_fwd(ForwardCtx& ctx) {
  bool is_max = is(ctx.op_name(), "max");
  if (ctx.has(1)) {
    Tensor a = ctx.tensor(0), b = ctx.tensor(1);
    return {is_max ? maximum(a, b) : minimum(a, b)};
  }
  return {reduce_kept(ctx, ctx.op_name(), ctx.tensor(0), 2, 3)};
}

// reduce(x, over=, with=f): f's name picks the reduction (sum by default).
std::vector<Tensor> reduce_with_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  std::string op = ctx.has(2) ? ctx.str(2) : "sum";
  static const char* kOk[] = {"sum", "max", "min", "prod", "mean"};
  bool ok = false;
  for (const char* k : kOk) ok = ok || op == k;
  if (!ok)
    fwd::value_error("with= is one of sum, max, min, prod, mean, not `" + op +
                     "`");
  return {reduce_kept(ctx, op, x, 1, 3)};
}

// Across the batch axis (Note [An op's rule on several devices]): sum sends
// its partial sums, mean its sums and count; reduce lowers only with=sum.
Share sum_share(ForwardCtx& ctx) {
  return lowering::partial_sum(ctx, reduction_fwd);
}
Share reduce_sum_share(ForwardCtx& ctx) {
  return lowering::partial_sum(ctx, reduce_with_fwd);
}

Lowering sum_lowering(ShareFn share) {
  Lowering l;
  l.share = share;
  l.size = {PayloadSize::Of::ResultNumel};
  l.sends = "its result's values";
  l.explain_one = "'s partial sum";
  l.explain_many = "'s partial sums";
  return l;
}

const Lowering kSum = sum_lowering(sum_share);
const Lowering kReduceSum = [] {
  Lowering l = sum_lowering(reduce_sum_share);
  l.only_param = 2;  // with=
  l.only_with = "sum";
  return l;
}();
// mean's share with keepdim: the finished mean reshaped (Note [keepdim]).
Share mean_share(ForwardCtx& ctx) {
  Share s = lowering::mean(ctx);
  if (!ctx.flag(2, false)) return s;
  Tensor x = ctx.tensor(0);
  Shape kept = kept_shape(x, fwd::over_axes(ctx, 1, x));
  s.finish = [finish = s.finish, kept](const Tensor& all) {
    std::vector<Tensor> out = finish(all);
    out.at(0) = reshape(out.at(0), kept);
    return out;
  };
  return s;
}

const Lowering kMean = [] {
  Lowering l;
  l.share = mean_share;
  l.size = {PayloadSize::Of::ResultNumel,
            0,
            0,
            1,
            1,
            PayloadSize::DType::ComputeFloat};
  l.sends = "its result's values and a count";
  l.explain_one = "'s sum and count";
  l.explain_many = "'s sums and count";
  return l;
}();

OpDef reduction(const char* name,
                const char* summary,
                DeviceRule device,
                bool diff = true) {
  OpDef d{name,
          {{"x"},
           {"over", ParamKind::Axes, false},
           {"keepdim", ParamKind::Value, false}},
          reduction_rule,
          summary};
  d.device = device;
  d.differentiable = diff;
  d.forward = reduction_fwd;
  return d;
}

OpDef max_min(const char* name, const char* summary) {
  OpDef d{name,
          {{"x"},
           {"y", ParamKind::Value, false},
           {"over", ParamKind::Axes, false},
           {"keepdim", ParamKind::Value, false}},
          max_min_rule,
          summary};
  // max(x, y) is elementwise: per example.
  d.device = refused(Across::Reduction);
  d.device.elementwise_with = "y";
  d.forward = max_min_fwd;
  return d;
}

}  // namespace

std::vector<OpDef> ops_reductions() {
  const DeviceRule NL = refused(Across::Reduction);
  DeviceRule norm_rule = NL;
  norm_rule.sums_grad_pieces = true;  // norm(g) of Grads
  std::vector<OpDef> v = {
      with_heads(reduction("sum",
                           "sum over the axes of over= (all when omitted)",
                           lowered(kSum, Across::Reduction)),
                 DeviceRule::Heads::Sums)
          .with_torch("x.sum(dim) (x.sum() over all)"),
      with_heads(reduction("mean",
                           "mean over the axes of over= (all when omitted)",
                           lowered(kMean, Across::Reduction)),
                 DeviceRule::Heads::PerHead)
          .with_torch("x.mean(dim) (x.mean() over all)"),
      max_min("max", "largest value over over= (or of two values)")
          .with_torch("x.amax(dim); torch.maximum(a, b) of two"),
      max_min("min", "smallest value over over= (or of two values)")
          .with_torch("x.amin(dim); torch.minimum(a, b) of two"),
      reduction("prod", "product over the axes of over=", NL)
          .with_torch("x.prod(dim)")
          .with_autocast(Autocast::F32),
      reduction("std", "unbiased standard deviation over over=", NL)
          .with_torch("x.std(dim) (unbiased, as torch's default)"),
      reduction("var", "unbiased variance over over=", NL)
          .with_torch("x.var(dim) (unbiased, as torch's default)"),
      reduction("logsumexp", "log(sum(exp(x))) over over=, stably", NL)
          .with_torch("torch.logsumexp(x, dim)"),
      reduction(
          "norm", "L2 norm over over=; norm(g) of Grads: global", norm_rule)
          .with_torch("torch.linalg.vector_norm(x, dim=dim); of Grads, the "
                      "total norm clip_grad_norm_ returns"),
      reduction(
          "argmax", "index (i64) of the largest value over over=", NL, false)
          .with_torch("x.argmax(dim)"),
      reduction(
          "argmin", "index (i64) of the smallest value over over=", NL, false)
          .with_torch("x.argmin(dim)"),
      reduction("any", "whether any value over over= is true", NL, false)
          .with_torch("x.any(dim)"),
      reduction("all", "whether every value over over= is true", NL, false)
          .with_torch("x.all(dim)"),
  };
  OpDef red{"reduce",
            {{"x"},
             {"over", ParamKind::Axes, false},
             {"with", ParamKind::Value, false},
             {"keepdim", ParamKind::Value, false}},
            reduce_with_rule,
            "reduce(x, over=, with=sum): reduction by a named function"};
  red.device = lowered(kReduceSum, Across::Reduction);
  red.forward = reduce_with_fwd;
  red.torch =
      "x.sum(dim), x.amax(dim), x.amin(dim), x.prod(dim) as with= names";
  v.push_back(red);
  return v;
}

}  // namespace ss::ops
