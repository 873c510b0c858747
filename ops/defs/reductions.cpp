// Reductions: sum mean max min prod std var logsumexp norm argmax argmin
// any all, and reduce(x, over=, with=). Without over= they reduce every
// axis to a 0-d value. sum and mean (and reduce with sum) all-reduce across
// the batch axis; the others are E1801 there.

#include <cstring>

#include "ops/core/shape_algebra.h"
#include "ops/registry/op_def.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool is(const char* a, const char* b) { return std::strcmp(a, b) == 0; }

/// The result dtype of reduction [op] on [d].
DType reduce_dtype(const char* op, DType d) {
  if (is(op, "sum") || is(op, "prod")) return sum_result(d);
  if (is(op, "max") || is(op, "min")) return d;
  if (is(op, "argmax") || is(op, "argmin")) return DType::I64;
  if (is(op, "any") || is(op, "all")) return DType::Bool;
  return float_result(d);  // mean std var logsumexp norm
}

/// Reduces param 0 with [op] over param [over_i] (all axes when absent).
Type reduce_impl(RuleCtx& ctx, const char* op, size_t over_i) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (is(op, "norm") && x.kind == K::Grads) {
    if (ctx.has(over_i)) {
      ctx.error(Code::E0303, ctx.span(over_i),
                "norm of gradients is the global L2 norm and takes no over=",
                describe(ctx, 0));
      return Type::error();
    }
    return Type::scalar(DType::F32);
  }
  if (!require_tensor(ctx, 0)) return Type::error();
  Type r = x;
  r.dtype = reduce_dtype(op, x.dtype);
  if (!ctx.has(over_i)) {
    r.shape.clear();
    return r;
  }
  auto pos = ctx.over(over_i, x.shape);
  if (!pos) return Type::error();
  r.shape = remove_axes(x.shape, *pos);
  return r;
}

Type reduction_rule(RuleCtx& ctx) {
  return reduce_impl(ctx, ctx.op_name(), 1);
}

// max(x, over=) / min(x, over=) reduce; max(a, b) of two values is the
// elementwise (or host) maximum.
Type max_min_rule(RuleCtx& ctx) {
  if (!ctx.has(1)) return reduce_impl(ctx, ctx.op_name(), 2);
  const Type& a = ctx.type(0);
  const Type& b = ctx.type(1);
  if (any_error({&a, &b})) return Type::error();
  if (ctx.has(2)) {
    ctx.error(Code::E0305, ctx.span(2),
              std::string(ctx.op_name()) +
                  " of two values takes no over=; use " + ctx.op_name() +
                  "(x, over=...) to reduce",
              ctx.text(2));
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
      ctx.error(Code::E0303, ctx.span(2),
                "reduce's with= is one of sum, max, min, prod, mean, not " +
                    ctx.text(2),
                "with=" + ctx.text(2));
      return Type::error();
    }
  }
  return reduce_impl(ctx, op, 1);
}

OpDef reduction(const char* name, const char* summary, BatchRule batch,
                bool diff = true) {
  OpDef d{name,
          {{"x"}, {"over", ParamKind::Axes, false}},
          reduction_rule,
          summary};
  d.batch = batch;
  d.differentiable = diff;
  return d;
}

OpDef max_min(const char* name, const char* summary) {
  OpDef d{name,
          {{"x"}, {"y", ParamKind::Value, false},
           {"over", ParamKind::Axes, false}},
          max_min_rule,
          summary};
  d.batch = BatchRule::NoLowering;
  return d;
}

}  // namespace

std::vector<OpDef> ops_reductions() {
  constexpr BatchRule AR = BatchRule::AllReduce;
  constexpr BatchRule NL = BatchRule::NoLowering;
  std::vector<OpDef> v = {
      reduction("sum", "sum over the axes of over= (all when omitted)", AR),
      reduction("mean", "mean over the axes of over= (all when omitted)", AR),
      max_min("max", "largest value over over= (or of two values)"),
      max_min("min", "smallest value over over= (or of two values)"),
      reduction("prod", "product over the axes of over=", NL),
      reduction("std", "unbiased standard deviation over over=", NL),
      reduction("var", "unbiased variance over over=", NL),
      reduction("logsumexp", "log(sum(exp(x))) over over=, stably", NL),
      reduction("norm", "L2 norm over over=; norm(g) of Grads: global", NL),
      reduction("argmax", "index (i64) of the largest value over over=", NL,
                false),
      reduction("argmin", "index (i64) of the smallest value over over=", NL,
                false),
      reduction("any", "whether any value over over= is true", NL, false),
      reduction("all", "whether every value over over= is true", NL, false),
  };
  OpDef red{"reduce",
            {{"x"}, {"over", ParamKind::Axes, false},
             {"with", ParamKind::Value, false}},
            reduce_with_rule,
            "reduce(x, over=, with=sum): reduction by a named function"};
  red.batch = AR;  // all-reduce only with sum; the lowering reads with=
  v.push_back(red);
  return v;
}

}  // namespace ss::ops
