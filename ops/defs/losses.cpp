// Losses, with torch.nn.functional's names, options and defaults:
// cross_entropy nll_loss binary_cross_entropy
// binary_cross_entropy_with_logits mse smooth_l1 huber kl_div, and one_hot.
//
// Note [A loss's reduction]
// Every loss is written once as its terms (LossTerms): each element's loss
// (weighted, 0 where its label is ignored) and the denominator of its mean
// (the count of elements, of labels not ignored, or the sum of their
// classes' weights, as torch's weighted mean divides by). reduction= then
// picks: "none" the elements' losses (typed [b *s]: per example on several
// devices, split as the batch is), "sum" their sum, "mean" the sum over the
// denominator ("batchmean" for kl_div: over the batch's size). On several
// devices each rank sends its share's sum and denominator in one
// all-reduce (lowering::loss), so the mean of a batch whose ignored labels
// fall unevenly on the ranks is one device's, not a mean of means.

#include <cmath>
#include <limits>

#include "ops/backend/device_errors.h"
#include "ops/defs/batch_lowering.h"
#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

enum class Reduction { Mean, Sum, None, BatchMean };

constexpr size_t kNoParam = SIZE_MAX;

/// A loss's dtype: f64 for f64 inputs (as torch's losses keep f64), else
/// f32 (low-precision floats are computed in f32, see compute_float). An
/// f32 result for f64 inputs would silently round an f64 program's loss.
DType loss_dtype(DType input) {
  return input == DType::F64 ? DType::F64 : DType::F32;
}

// ---------------------------------------------------------------- rules

/// reduction= (param [i]): a string literal, "mean" when absent.
std::optional<Reduction> reduction_rule(RuleCtx& ctx,
                                        size_t i,
                                        bool batchmean) {
  if (!ctx.has(i)) return Reduction::Mean;
  const std::string allowed =
      batchmean ? "\"mean\", \"batchmean\", \"sum\" or \"none\""
                : "\"mean\", \"sum\" or \"none\"";
  auto s = ctx.const_str(i);
  if (s && *s == "mean") return Reduction::Mean;
  if (s && *s == "sum") return Reduction::Sum;
  if (s && *s == "none") return Reduction::None;
  if (s && batchmean && *s == "batchmean") return Reduction::BatchMean;
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + "'s reduction= is " + allowed +
                (s ? ", not \"" + *s + "\""
                   : ", written as a string literal (the result's type "
                     "depends on it)"),
            describe(ctx, i));
  return std::nullopt;
}

/// The loss's type: [per] (each element's, reduction="none") or a 0-d
/// loss, of the loss dtype of [dt], varying as its operands.
Type loss_type(RuleCtx& ctx,
               Reduction r,
               const Axes& per,
               DType dt,
               std::initializer_list<size_t> operands) {
  Type t = Type::tensor(r == Reduction::None ? per : Axes{}, loss_dtype(dt));
  for (size_t i : operands)
    if (ctx.has(i)) {
      const Type& o = ctx.type(i);
      t.varying = union_varying({&t, &o});
    }
  return t;
}

/// Param [i], when given, a host number (ignore_index=, beta=).
bool optional_number(RuleCtx& ctx, size_t i) {
  return !ctx.has(i) || require_number(ctx, i, false);
}

/// A number param [i] known at check time must lie in [lo, hi].
bool in_range(RuleCtx& ctx, size_t i, double lo, double hi, const char* what) {
  if (!ctx.has(i)) return true;
  auto v = ctx.const_float(i);
  if (!v || (*v >= lo && *v <= hi)) return true;
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + "'s " + what + ", not " + ctx.text(i),
            describe(ctx, i));
  return false;
}

/// weight= of a class loss: a float [C], C the logits' class axis.
bool class_weight_rule(RuleCtx& ctx, size_t i, const Axis& classes) {
  if (!ctx.has(i)) return true;
  if (!require_float(ctx, i)) return false;
  const Type& w = ctx.type(i);
  if (w.rank() == 1 && w.shape[0] == classes) return true;
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) +
                "'s weight= is one weight per class, [" + classes.str() +
                "], but " + ctx.text(i) + " is " + w.str(),
            describe(ctx, i));
  return false;
}

struct ClassParams {
  size_t weight, ignore, smoothing, reduction;
};

// cross_entropy and nll_loss: scores [*s C] with int labels [*s] (or, for
// cross_entropy, float probabilities [*s C]).
Type class_loss_rule(RuleCtx& ctx, ClassParams p, bool probabilities_ok) {
  const Type& lg = ctx.type(0);
  const Type& lb = ctx.type(1);
  if (any_error({&lg, &lb})) return Type::error();
  if (!require_float(ctx, 0) || !require_tensor(ctx, 1)) return Type::error();
  const std::string op = ctx.op_name();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  if (lg.rank() == 0) {
    ctx.error(Code::E0303,
              ctx.span(0),
              op + " needs scores with a class axis, but " + ctx.text(0) +
                  " is " + lg.str(),
              label);
    return Type::error();
  }
  auto r = reduction_rule(ctx, p.reduction, false);
  if (!r || !class_weight_rule(ctx, p.weight, lg.shape.back()) ||
      !optional_number(ctx, p.ignore) ||
      (p.smoothing != kNoParam &&
       (!optional_number(ctx, p.smoothing) ||
        !in_range(ctx,
                  p.smoothing,
                  0,
                  1,
                  "label_smoothing= is a fraction in [0, 1]"))))
    return Type::error();
  Axes per(lg.shape.begin(), lg.shape.end() - 1);
  const auto operands = {size_t(0), size_t(1), p.weight};
  if (probabilities_ok && types::is_float(lb.dtype) && lb.shape == lg.shape) {
    if (ctx.has(p.ignore)) {
      ctx.error(Code::E0303,
                ctx.span(p.ignore),
                op + "'s ignore_index= names a class label to skip; with "
                     "probabilities as labels there is none",
                describe(ctx, 1));
      return Type::error();
    }
    return loss_type(ctx, *r, per, lg.dtype, operands);
  }
  if (!types::is_int(lb.dtype)) {
    ctx.error(
        Code::E0304,
        ctx.span(1),
        op + " needs int class labels, but " + ctx.text(1) + " is " + lb.str(),
        label);
    return Type::error();
  }
  if (lb.shape != per) {
    // Note [Two sizes of one name]: "[n], but arange(z) is [n]" said
    // nothing of two sizes made by two calls.
    const types::PrintedApart shown(per, lb.shape);
    diag::Diagnostic& d = ctx.error(
        Code::E0303,
        ctx.call_span(),
        op + " needs labels shaped like the scores without their class axis " +
            lg.shape.back().str_sized() + ", " + shown.a + ", but " +
            ctx.text(1) + " is " + shown.b,
        label);
    for (const auto& [text, at] : shown.notes()) d.note(text, at);
    return Type::error();
  }
  return loss_type(ctx, *r, per, lg.dtype, operands);
}

Type cross_entropy_rule(RuleCtx& ctx) {
  return class_loss_rule(ctx, {2, 3, 4, 5}, true);
}

Type nll_loss_rule(RuleCtx& ctx) {
  return class_loss_rule(ctx, {2, 3, kNoParam, 4}, false);
}

/// Two float operands of one shape (binary_cross_entropy's input and
/// target, as torch requires), or broadcast ([broadcasts]: mse, huber);
/// an optional weight= [weight] that broadcasts to it.
std::optional<Axes> pair_rule(RuleCtx& ctx, bool broadcasts, size_t weight) {
  const Type& a = ctx.type(0);
  const Type& b = ctx.type(1);
  if (any_error({&a, &b})) return std::nullopt;
  if (!require_tensor(ctx, 0, broadcasts) ||
      !require_tensor(ctx, 1, broadcasts))
    return std::nullopt;
  const std::string both = describe(ctx, 0) + ", " + describe(ctx, 1);
  Axes shape;
  if (broadcasts) {
    auto t = broadcast(ctx, a, b, ctx.span(0), ctx.span(1), both);
    if (!t) return std::nullopt;
    shape = t->shape;
  } else {
    if (!require_float(ctx, 0) || !require_float(ctx, 1)) return std::nullopt;
    if (a.shape != b.shape) {
      ctx.error(Code::E0303,
                ctx.call_span(),
                std::string(ctx.op_name()) +
                    " needs a target shaped like its input, " +
                    types::shape_str(a.shape) + ", but " + ctx.text(1) +
                    " is " + types::shape_str(b.shape),
                both);
      return std::nullopt;
    }
    shape = a.shape;
  }
  if (weight != kNoParam && ctx.has(weight)) {
    if (!require_float(ctx, weight)) return std::nullopt;
    const Type& w = ctx.type(weight);
    auto t = broadcast(ctx,
                       Type::tensor(shape),
                       w,
                       ctx.span(0),
                       ctx.span(weight),
                       describe(ctx, weight));
    if (!t) return std::nullopt;
    if (t->shape != shape) {
      ctx.error(Code::E0303,
                ctx.span(weight),
                std::string(ctx.op_name()) + "'s weight= must broadcast to " +
                    types::shape_str(shape) + ", but " + ctx.text(weight) +
                    " is " + w.str(),
                describe(ctx, weight));
      return std::nullopt;
    }
  }
  return shape;
}

DType pair_dtype(RuleCtx& ctx) {
  auto dt = [&](size_t i) {
    const Type& t = ctx.type(i);
    return t.is_tensor() ? t.dtype : DType::F32;
  };
  return types::promote(loss_dtype(dt(0)), loss_dtype(dt(1)));
}

Type bce_rule(RuleCtx& ctx) {
  auto shape = pair_rule(ctx, false, 2);
  auto r = shape ? reduction_rule(ctx, 3, false) : std::nullopt;
  if (!r) return Type::error();
  return loss_type(ctx, *r, *shape, pair_dtype(ctx), {0, 1, 2});
}

Type bce_logits_rule(RuleCtx& ctx) {
  auto shape = pair_rule(ctx, false, 2);
  auto r = shape ? reduction_rule(ctx, 4, false) : std::nullopt;
  if (!r) return Type::error();
  if (ctx.has(3)) {
    // pos_weight=: one weight per class, the last axis (torch's
    // broadcast against the target).
    if (!require_float(ctx, 3)) return Type::error();
    const Type& pw = ctx.type(3);
    if (shape->empty() || pw.rank() != 1 || pw.shape[0] != shape->back()) {
      ctx.error(Code::E0303,
                ctx.span(3),
                "binary_cross_entropy_with_logits's pos_weight= is one "
                "weight per class, the last axis of " +
                    types::shape_str(*shape) + ", but " + ctx.text(3) + " is " +
                    pw.str(),
                describe(ctx, 3));
      return Type::error();
    }
  }
  return loss_type(ctx, *r, *shape, pair_dtype(ctx), {0, 1, 2, 3});
}

// mse, smooth_l1, huber: a and b broadcast, then reduction= (param [red]);
// mse, smooth_l1, huber: reduction= at param [red]; with [threshold],
// smooth_l1's beta= or huber's delta= at param 2, >= 0.
template <size_t red, bool threshold>
Type regression_rule(RuleCtx& ctx) {
  auto shape = pair_rule(ctx, true, kNoParam);
  auto r = shape ? reduction_rule(ctx, red, false) : std::nullopt;
  if (!r) return Type::error();
  if (threshold && (!optional_number(ctx, 2) ||
                    !in_range(ctx,
                              2,
                              0,
                              std::numeric_limits<double>::infinity(),
                              "threshold is >= 0")))
    return Type::error();
  return loss_type(ctx, *r, *shape, pair_dtype(ctx), {0, 1});
}

Type kl_div_rule(RuleCtx& ctx) {
  auto shape = pair_rule(ctx, true, kNoParam);
  auto r = shape ? reduction_rule(ctx, 2, true) : std::nullopt;
  if (!r) return Type::error();
  // log_target= is read as a flag when it runs: anything but a bool was
  // an InternalError there (issue 32's runtime fuzzer: log_target=i32).
  if (ctx.has(3) && !require_kind(ctx, 3, K::Bool, "true or false"))
    return Type::error();
  if (*r == Reduction::BatchMean && shape->empty()) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "kl_div's reduction=\"batchmean\" divides by the batch's size, "
              "the first axis, but the input is 0-d",
              describe(ctx, 0));
    return Type::error();
  }
  return loss_type(ctx, *r, *shape, pair_dtype(ctx), {0, 1});
}

Type one_hot_rule(RuleCtx& ctx) {
  const Type& lb = ctx.type(0);
  if (lb.is_error() || !require_tensor(ctx, 0)) return Type::error();
  if (!types::is_int(lb.dtype)) {
    ctx.error(Code::E0304,
              ctx.span(0),
              "one_hot needs int class labels, but " + ctx.text(0) + " is " +
                  lb.str(),
              describe(ctx, 0));
    return Type::error();
  }
  auto c = size_arg(ctx, 1);
  Type r = lb;
  r.dtype = DType::I64;
  r.shape.push_back(c ? *c : ctx.fresh("C"));
  return r;
}

// ---------------------------------------------------------------- forwards

struct LossTerms {
  Tensor per;    // each element's loss, weighted; 0 where ignored
  Tensor denom;  // the mean's denominator, 0-d, in per's dtype
};
using TermsFn = LossTerms (*)(ForwardCtx& ctx);

Reduction reduction_of(ForwardCtx& ctx, size_t i) {
  if (!ctx.has(i)) return Reduction::Mean;
  const std::string s = ctx.str(i);
  if (s == "sum") return Reduction::Sum;
  if (s == "none") return Reduction::None;
  if (s == "batchmean") return Reduction::BatchMean;
  if (s == "mean") return Reduction::Mean;
  fwd::value_error("reduction= is \"mean\", \"sum\" or \"none\", not \"" + s +
                   "\"");
}

Tensor count_of(const Tensor& like, int64_t n) {
  return scalar_like(double(n), like);
}

/// An optional float param [i] in [like]'s dtype, without gradient (torch
/// has no derivative for a loss's weights).
std::optional<Tensor> weight_of(ForwardCtx& ctx, size_t i, const Tensor& like) {
  if (!ctx.has(i)) return std::nullopt;
  return stop_grad(cast(ctx.tensor(i), like.dtype()));
}

/// Int labels [*s] against scores [*s C]: in range [0, C) unless ignored.
void check_labels(const Tensor& label, const Tensor& keep, int64_t classes) {
  Tensor bad =
      logical_and(keep,
                  logical_or(lt(label, scalar_like(0, label)),
                             ge(label, scalar_like(double(classes), label))));
  check_none(bad, backend::kLabelOutOfRange, [&] {
    // The error path reads the labels on the host to name the bad one.
    std::vector<double> ls = label.to_doubles(), ks = keep.to_doubles();
    for (size_t i = 0; i < ls.size(); ++i)
      if (ks[i] != 0 && (ls[i] < 0 || ls[i] >= double(classes)))
        fwd::value_error("label " + std::to_string(int64_t(ls[i])) +
                         " is out of range for " + std::to_string(classes) +
                         " classes");
  });
}

/// -logp[label] weighted by the label's class (and, with [smoothing] ε,
/// (1 - ε) of it plus ε/C of the weighted sum over every class), 0 where
/// the label is [ignore]; the denominator is the weight (or count) of the
/// labels kept. As torch's nll_loss and cross_entropy compute it.
LossTerms class_terms(const Tensor& logp,
                      const Tensor& label,
                      const std::optional<Tensor>& w,
                      int64_t ignore,
                      double smoothing) {
  const int c = static_cast<int>(logp.rank()) - 1;
  const int64_t classes = logp.shape()[c];
  Tensor keep = ne(label, scalar_like(double(ignore), label));
  check_labels(label, keep, classes);
  Tensor safe = where(keep, label, zeros_like(label));
  Tensor per = neg(squeeze(gather(logp, unsqueeze(safe, c), c), c));
  Tensor wy;
  if (w) {
    wy = take(*w, safe, 0);
    per = mul(per, wy);
  }
  if (smoothing > 0) {
    Tensor all = neg(sum(w ? mul(logp, *w) : logp, {c}));
    per = add(mul(per, scalar_like(1 - smoothing, per)),
              mul(all, scalar_like(smoothing / double(classes), all)));
  }
  Tensor zero = zeros_like(per);
  per = where(keep, per, zero);
  Tensor denom = w ? sum(where(keep, wy, zero)) : sum(cast(keep, per.dtype()));
  return {per, stop_grad(denom)};
}

/// log_softmax over the last axis (the fused kernel's one pass where it
/// has one: Note [Fused kernels]).
Tensor log_softmax_last(const Tensor& z) {
  if (has_fused_kernel(z)) return softmax_last(z, true);
  const int c = static_cast<int>(z.rank()) - 1;
  return sub(z, unsqueeze(fwd::logsumexp(z, {c}), c));
}

LossTerms cross_entropy_terms(ForwardCtx& ctx) {
  Tensor z = fwd::compute_float(ctx.tensor(0));
  Tensor label = ctx.tensor(1);
  if (z.rank() == 0) fwd::shape_error("the logits need a class axis");
  const int c = static_cast<int>(z.rank()) - 1;
  const double eps = ctx.has(4) ? ctx.number(4) : 0.0;
  std::optional<Tensor> w = weight_of(ctx, 2, z);
  Tensor logp = log_softmax_last(z);
  if (types::is_float(label.dtype())) {
    // Probabilities as labels: -sum(p' · w · logp) per position, with
    // p' = (1 - ε) p + ε/C; the mean is over positions (torch's).
    if (label.shape() != z.shape())
      fwd::shape_error(
          "float labels (probabilities) must have the logits' shape " +
          shape_string(z.shape()) + ", not " + shape_string(label.shape()));
    Tensor p = cast(label, z.dtype());
    if (eps > 0)
      p = add(mul(p, scalar_like(1 - eps, p)),
              scalar_like(eps / double(z.shape()[c]), p));
    Tensor per = neg(sum(mul(p, w ? mul(logp, *w) : logp), {c}));
    return {per, count_of(per, per.numel())};
  }
  Shape want(z.shape().begin(), z.shape().end() - 1);
  if (label.shape() != want)
    fwd::shape_error("labels must be shaped " + shape_string(want) +
                     " (the logits without their class axis), not " +
                     shape_string(label.shape()));
  return class_terms(logp, label, w, ctx.has(3) ? ctx.integer(3) : -100, eps);
}

LossTerms nll_loss_terms(ForwardCtx& ctx) {
  Tensor logp = fwd::compute_float(ctx.tensor(0));
  Tensor label = ctx.tensor(1);
  if (logp.rank() == 0) fwd::shape_error("the input needs a class axis");
  Shape want(logp.shape().begin(), logp.shape().end() - 1);
  if (label.shape() != want)
    fwd::shape_error("labels must be shaped " + shape_string(want) + ", not " +
                     shape_string(label.shape()));
  return class_terms(logp,
                     label,
                     weight_of(ctx, 2, logp),
                     ctx.has(3) ? ctx.integer(3) : -100,
                     0.0);
}

/// [per] times weight= (param [i]) when given, and the element count.
LossTerms weighted(ForwardCtx& ctx, size_t i, Tensor per) {
  if (auto w = weight_of(ctx, i, per)) per = mul(per, *w);
  return {per, count_of(per, per.numel())};
}

// -(y log p + (1 - y) log(1 - p)), each log clamped at -100 (torch's, so
// that p = 0 or 1 gives a finite loss).
LossTerms bce_terms(ForwardCtx& ctx) {
  Tensor p = fwd::compute_float(ctx.tensor(0));
  Tensor y = cast(ctx.tensor(1), p.dtype());
  Tensor bad = logical_or(lt(p, scalar_like(0, p)), gt(p, scalar_like(1, p)));
  check_none(bad, backend::kProbabilityOutOfRange, [] {
    fwd::value_error("the input is a probability, between 0 and 1");
  });
  Tensor floor = scalar_like(-100, p);
  Tensor one = scalar_like(1, p);
  Tensor lp = maximum(log(p), floor);
  Tensor lq = maximum(log(sub(one, p)), floor);
  Tensor per = neg(add(mul(y, lp), mul(sub(one, y), lq)));
  return weighted(ctx, 2, per);
}

// (1 - y) x + (1 + (pw - 1) y) · log(1 + e^-x), with log(1 + e^-x) as
// log1p(e^-|x|) + max(-x, 0), finite for any x (torch's form).
LossTerms bce_logits_terms(ForwardCtx& ctx) {
  Tensor x = fwd::compute_float(ctx.tensor(0));
  Tensor y = cast(ctx.tensor(1), x.dtype());
  Tensor one = scalar_like(1, x);
  Tensor softplus_neg =
      add(log1p(exp(neg(abs(x)))), maximum(neg(x), zeros_like(x)));
  Tensor lw = one;
  if (auto pw = weight_of(ctx, 3, x))
    lw = add(one, mul(sub(*pw, scalar_like(1, *pw)), y));
  Tensor per = add(mul(sub(one, y), x), mul(lw, softplus_neg));
  return weighted(ctx, 2, per);
}

Tensor difference(ForwardCtx& ctx) {
  return sub(fwd::compute_float(ctx.tensor(0)),
             fwd::compute_float(ctx.tensor(1)));
}

LossTerms mse_terms(ForwardCtx& ctx) {
  Tensor d = difference(ctx);
  Tensor per = mul(d, d);
  return {per, count_of(per, per.numel())};
}

// |d| < t: 0.5 d² (/ t for smooth_l1); else |d| - 0.5 t (· t for huber).
template <bool huber>
LossTerms threshold_terms(ForwardCtx& ctx) {
  Tensor a = abs(difference(ctx));
  const double t = ctx.has(2) ? ctx.number(2) : 1.0;
  Tensor per;
  if (t <= 0 && !huber) {
    per = a;  // smooth_l1 with beta=0 is l1 (no 0/0 in the other branch)
  } else {
    Tensor sq = mul(mul(a, a), scalar_like(huber ? 0.5 : 0.5 / t, a));
    Tensor lin = sub(a, scalar_like(0.5 * t, a));
    if (huber) lin = mul(lin, scalar_like(t, lin));
    per = where(lt(a, scalar_like(t, a)), sq, lin);
  }
  return {per, count_of(per, per.numel())};
}

// target · (log target - input), 0 where target is 0 (torch's xlogy:
// NaN where the target is negative or NaN, as torch's); with
// log_target=true, e^target · (target - input). batchmean divides by the
// first axis's size.
LossTerms kl_div_terms(ForwardCtx& ctx) {
  Tensor x = fwd::compute_float(ctx.tensor(0));
  Tensor t = fwd::compute_float(ctx.tensor(1));
  Tensor per;
  if (ctx.flag(3, false)) {
    per = mul(exp(t), sub(t, x));
  } else {
    Tensor zero = eq(t, zeros_like(t));
    Tensor safe = where(zero, ones_like(t), t);  // log(1) = 0 where t = 0
    per = sub(mul(t, log(safe)), mul(t, x));
  }
  int64_t n = per.numel();
  if (reduction_of(ctx, 2) == Reduction::BatchMean)
    n = per.rank() ? per.shape()[0] : 1;
  return {per, count_of(per, n)};
}

template <TermsFn terms, size_t red>
std::vector<Tensor> loss_fwd(ForwardCtx& ctx) {
  const Reduction r = reduction_of(ctx, red);
  LossTerms t = terms(ctx);
  Tensor out = r == Reduction::None  ? t.per
               : r == Reduction::Sum ? sum(t.per)
                                     : div(sum(t.per), t.denom);
  return {fwd::as_result_dtype(ctx, out)};
}

// Across the batch axis (Note [A loss's reduction]): each share's sum and
// denominator.
template <TermsFn terms, size_t red>
Share loss_share(ForwardCtx& ctx) {
  const Reduction r = reduction_of(ctx, red);
  LossTerms t = terms(ctx);
  return lowering::loss(
      sum(t.per), t.denom, r != Reduction::Sum, ctx.result_type().dtype);
}

template <TermsFn terms, size_t red>
const Lowering kLoss = [] {
  Lowering l;
  l.share = loss_share<terms, red>;
  l.size = {PayloadSize::Of::One, 0, 0, 0, 2};
  // The count is the mean's denominator: the elements, the labels kept, or
  // their classes' weights (spec/library.md's words for cross_entropy).
  l.sends = "2 values: a sum and a count";
  l.explain_one = "'s sum and count";
  l.per_example_param = static_cast<int>(red);
  l.per_example_with = "none";
  return l;
}();

std::vector<Tensor> one_hot_fwd(ForwardCtx& ctx) {
  Tensor label = ctx.tensor(0);
  const int64_t c = ctx.size(1);
  Tensor keep = ones_like(label);
  check_labels(label, cast(keep, types::DType::Bool), c);
  Tensor hot = eq(unsqueeze(label, static_cast<int>(label.rank())),
                  cast(arange(c, label.device()), label.dtype()));
  return {cast(hot, types::DType::I64)};
}

OpDef loss(const char* name,
           std::vector<ParamSpec> params,
           ShapeRule rule,
           Forward forward,
           const Lowering& lowering,
           const char* summary,
           const char* torch) {
  OpDef d{name, std::move(params), rule, summary};
  d.forward = forward;
  d.device = lowered(lowering, Across::Operands);
  d.autocast = Autocast::F32;  // every loss, as torch.autocast on CPU
  return std::move(d).with_torch(torch);
}

constexpr ParamSpec opt(const char* name) {
  return {name, ParamKind::Value, false, false, true};
}

}  // namespace

std::vector<OpDef> ops_losses() {
  const ParamSpec reduction = opt("reduction"), weight = opt("weight"),
                  ignore = opt("ignore_index");
  OpDef hot{"one_hot",
            {{"label"}, {"classes"}},
            one_hot_rule,
            "[*s] int labels as [*s C] i64 rows of zeros with a 1 at the "
            "label"};
  hot.forward = one_hot_fwd;
  hot.differentiable = false;
  return {
      loss("cross_entropy",
           {{"logits"},
            {"label"},
            weight,
            ignore,
            opt("label_smoothing"),
            reduction},
           cross_entropy_rule,
           loss_fwd<cross_entropy_terms, 5>,
           kLoss<cross_entropy_terms, 5>,
           "cross-entropy of logits [*s C] with int labels [*s] (or "
           "probabilities [*s C]); weight= [C], ignore_index= (-100), "
           "label_smoothing=, reduction= (\"mean\", \"sum\", \"none\")",
           "torch.nn.functional.cross_entropy(logits, label, weight, "
           "ignore_index=, reduction=, label_smoothing=) for [b C]; for "
           "[b n C]: logits.transpose(1, 2)"),
      loss("nll_loss",
           {{"logp"}, {"label"}, weight, ignore, reduction},
           nll_loss_rule,
           loss_fwd<nll_loss_terms, 4>,
           kLoss<nll_loss_terms, 4>,
           "-logp[label] for log-probabilities [*s C] and int labels [*s]; "
           "weight= [C], ignore_index= (-100), reduction=",
           "torch.nn.functional.nll_loss(logp, label, weight, ignore_index=, "
           "reduction=) for [b C]; for [b n C]: logp.transpose(1, 2)"),
      loss("binary_cross_entropy",
           {{"p"}, {"target"}, weight, reduction},
           bce_rule,
           loss_fwd<bce_terms, 3>,
           kLoss<bce_terms, 3>,
           "-(y log p + (1 - y) log(1 - p)) for probabilities p, each log "
           "clamped at -100; weight= broadcasts to p, reduction=",
           "torch.nn.functional.binary_cross_entropy(p, target, weight, "
           "reduction=)"),
      loss("binary_cross_entropy_with_logits",
           {{"x"}, {"target"}, weight, opt("pos_weight"), reduction},
           bce_logits_rule,
           loss_fwd<bce_logits_terms, 4>,
           kLoss<bce_logits_terms, 4>,
           "binary_cross_entropy of sigmoid(x), computed stably from x; "
           "pos_weight= [C] weighs the positives of the last axis",
           "torch.nn.functional.binary_cross_entropy_with_logits(x, target, "
           "weight, reduction=, pos_weight=)"),
      loss("mse",
           {{"a"}, {"b"}, reduction},
           regression_rule<2, false>,
           loss_fwd<mse_terms, 2>,
           kLoss<mse_terms, 2>,
           "(a - b) ** 2, a and b broadcast; its mean by default, reduction=",
           "torch.nn.functional.mse_loss(a, b, reduction=)"),
      loss("smooth_l1",
           {{"a"}, {"b"}, opt("beta"), reduction},
           regression_rule<3, true>,
           loss_fwd<threshold_terms<false>, 3>,
           kLoss<threshold_terms<false>, 3>,
           "0.5 d ** 2 / beta where |d| < beta, else |d| - 0.5 beta, for "
           "d = a - b (beta 1.0)",
           "torch.nn.functional.smooth_l1_loss(a, b, reduction=, beta=)"),
      loss("huber",
           {{"a"}, {"b"}, opt("delta"), reduction},
           regression_rule<3, true>,
           loss_fwd<threshold_terms<true>, 3>,
           kLoss<threshold_terms<true>, 3>,
           "0.5 d ** 2 where |d| < delta, else delta (|d| - 0.5 delta), for "
           "d = a - b (delta 1.0)",
           "torch.nn.functional.huber_loss(a, b, reduction=, delta=)"),
      loss("kl_div",
           {{"input"}, {"target"}, reduction, opt("log_target")},
           kl_div_rule,
           loss_fwd<kl_div_terms, 2>,
           kLoss<kl_div_terms, 2>,
           "target (log target - input) for log-probabilities input; "
           "reduction= \"mean\" (every value), \"batchmean\", \"sum\", "
           "\"none\"; log_target=",
           "torch.nn.functional.kl_div(input, target, reduction=, "
           "log_target=)"),
      std::move(hot).with_torch(
          "torch.nn.functional.one_hot(label, C) (int64)"),
  };
}

}  // namespace ss::ops
