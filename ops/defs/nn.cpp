// Neural-network ops: dropout batch_norm layer_norm rms_norm embedding
// stop_grad linear (losses: losses.cpp; convolution and pooling: conv.cpp).

#include <cmath>
#include <cstring>
#include <numeric>

#include "ops/backend/device_errors.h"
#include "ops/defs/batch_lowering.h"
#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

/// A model argument of stdlib model [name] (or any model when null).
bool require_model(RuleCtx& ctx, size_t i, const char* name) {
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  if (t.kind == K::Model && t.model && (!name || t.model->name == name))
    return true;
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs a " + (name ? name : "model") +
                ", but " + ctx.text(i) + " is " + t.str(),
            describe(ctx, i));
  return false;
}

/// The type of field [f] of model argument [i]; nullopt (reported) when it
/// has none.
std::optional<Type> field_of(RuleCtx& ctx, size_t i, const char* f) {
  const Type& m = ctx.type(i);
  const types::FieldInfo* fi = m.model->field(f);
  if (!fi) {
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) + " needs a model with a field " + f +
                  ", but " + m.str() + " has none",
              describe(ctx, i));
    return std::nullopt;
  }
  return types::model_field_type(m, *fi);
}

bool require_mode(RuleCtx& ctx, size_t i) {
  return require_kind(ctx, i, K::Mode, "a Mode (Train(seed=) or Eval)");
}

Type dropout_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (any_error({&x, &ctx.type(1), &ctx.type(2)})) return Type::error();
  if (!require_float(ctx, 0) || !require_number(ctx, 1, false) ||
      !require_mode(ctx, 2))
    return Type::error();
  if (auto p = ctx.const_float(1); p && !(*p >= 0 && *p < 1)) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "dropout's p is a probability in [0, 1), not " + ctx.text(1),
              describe(ctx, 1));
    return Type::error();
  }
  return x;
}

Type batch_norm_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& bn = ctx.type(1);
  if (any_error({&x, &bn, &ctx.type(2)})) return Type::error();
  if (!require_float(ctx, 0) || !require_model(ctx, 1, "BatchNorm") ||
      !require_mode(ctx, 2))
    return Type::error();
  if (x.rank() < 2) {
    ctx.error(
        Code::E0303,
        ctx.span(0),
        "batch_norm needs [b C ...], but " + ctx.text(0) + " is " + x.str(),
        describe(ctx, 0));
    return Type::error();
  }
  if (auto g = field_of(ctx, 1, "g"); g && g->rank() >= 1) {
    if (g->shape.back() != x.shape[1]) {
      ctx.error(Code::E0303,
                ctx.call_span(),
                "batch_norm normalises channels " + x.shape[1].str_sized() +
                    " with " + bn.str() + " of " + g->shape.back().str_sized(),
                describe(ctx, 0) + ", " + describe(ctx, 1));
      return Type::error();
    }
  }
  Type r = x;
  r.varying = union_varying({&x});
  return r;
}

Type norm_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_float(ctx, 0)) return Type::error();
  auto pos = ctx.over(1, x.shape);
  if (!pos) return Type::error();
  if (ctx.has(2) && !ctx.type(2).is_error() && !require_number(ctx, 2, false))
    return Type::error();
  bool ln = std::strcmp(ctx.op_name(), "layer_norm") == 0;
  if (ln && ctx.has(3)) {
    const Type& aff = ctx.type(3);
    if (aff.is_error()) return Type::error();
    if (!require_model(ctx, 3, "LayerNorm")) return Type::error();
    auto g = field_of(ctx, 3, "g");
    if (!g) return Type::error();
    Axes normed;
    for (size_t p : *pos) normed.push_back(x.shape[p]);
    if (g->shape != normed) {
      ctx.error(Code::E0303,
                ctx.span(3),
                "layer_norm over " + types::shape_str(normed) +
                    " with affine=" + ctx.text(3) + " whose g is " + g->str(),
                describe(ctx, 0) + ", " + describe(ctx, 3));
      return Type::error();
    }
  }
  return x;
}

Type embedding_rule(RuleCtx& ctx) {
  const Type& table = ctx.type(0);
  const Type& ids = ctx.type(1);
  if (any_error({&table, &ids})) return Type::error();
  if (!require_tensor(ctx, 0) || !require_tensor(ctx, 1)) return Type::error();
  if (table.rank() != 2) {
    ctx.error(Code::E0303,
              ctx.span(0),
              "embedding needs a table [V D], but " + ctx.text(0) + " is " +
                  table.str(),
              describe(ctx, 0));
    return Type::error();
  }
  if (!types::is_int(ids.dtype)) {
    ctx.error(
        Code::E0304,
        ctx.span(1),
        "embedding needs int ids, but " + ctx.text(1) + " is " + ids.str(),
        describe(ctx, 1));
    return Type::error();
  }
  Type r = Type::tensor(ids.shape, table.dtype);
  r.shape.push_back(table.shape[1]);
  r.varying = union_varying({&table, &ids});
  return r;
}

Type stop_grad_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (!require_tensor(ctx, 0, true)) return Type::error();
  return x;
}

Type linear_rule(RuleCtx& ctx) {
  const Type& l = ctx.type(0);
  const Type& x = ctx.type(1);
  if (any_error({&l, &x})) return Type::error();
  if (!require_model(ctx, 0, nullptr) || !require_tensor(ctx, 1))
    return Type::error();
  auto w = field_of(ctx, 0, "w");
  if (!w) return Type::error();
  std::string label = describe(ctx, 1) + ", " + ctx.text(0) + ".w: " + w->str();
  if (w->rank() != 2 || x.rank() == 0) {
    ctx.error(Code::E0303,
              ctx.call_span(),
              "linear needs x: [*s I] and a model with w: [I O]",
              label);
    return Type::error();
  }
  if (x.shape.back() != w->shape[0]) {
    ctx.error(Code::E0302,
              ctx.call_span(),
              "linear contracts " + x.shape.back().str_sized() + " with " +
                  w->shape[0].str_sized(),
              label);
    return Type::error();
  }
  Type r = x;
  r.shape.back() = w->shape[1];
  r.dtype = types::promote(x.dtype, w->dtype);
  r.varying = union_varying({&x, &*w});
  return r;
}

// ---------------------------------------------------------------- forwards
// Every nn op is a composite of the differentiable API.

// Train: keep each value where its uniform draw u >= p, scaled by
// 1 / (1 - p) (torch's inverted dropout); Eval: x. A Train call always
// takes its draw ordinal (even with p = 0), so later layers' masks do not
// depend on this p.
std::vector<Tensor> dropout_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(0);
  double p = ctx.number(1);
  if (!(p >= 0 && p <= 1))
    fwd::value_error("p is a probability in [0, 1], not " + std::to_string(p));
  if (!ctx.training(2)) return {x};
  RandomStream s = ctx.random(2);
  if (p == 0) return {x};
  if (p == 1) return {mul(x, scalar_like(0, x))};
  Tensor u = random_uniform(
      x.shape(), DType::F32, s.key, s.stream, s.offset, x.device());
  Tensor keep = cast(ge(u, Tensor::scalar(p, DType::F32)), x.dtype());
  return {mul(mul(x, keep), scalar_like(1.0 / (1.0 - p), x))};
}

constexpr double kBatchNormEps = 1e-5;
constexpr double kBatchNormMomentum = 0.1;

// batch_norm(x: [b C ...], bn, mode), as torch.nn.BatchNorm1d/2d: Train
// normalises with the batch's mean and biased variance over every axis but
// C and moves the running stats by momentum 0.1 towards the batch mean and
// the *unbiased* batch variance; Eval normalises with the running stats.
// Then g * x_hat + b.
std::vector<Tensor> batch_norm_fwd(ForwardCtx& ctx) {
  Tensor x0 = ctx.tensor(0);
  Tensor x = fwd::compute_float(x0);
  size_t rank = x.rank();
  if (rank < 2)
    fwd::shape_error("needs [b C ...], not " + shape_string(x.shape()));
  std::vector<int> axes;
  for (size_t a = 0; a < rank; ++a)
    if (a != 1) axes.push_back(static_cast<int>(a));
  int64_t channels = x.shape()[1];
  Shape per_c = {channels};
  Tensor xhat;
  if (ctx.training(2)) {
    int64_t n = fwd::count_over(x, axes);
    if (n <= 1)
      fwd::value_error(
          "needs more than one value per channel in Train mode, "
          "got " +
          std::to_string(n));
    Tensor mu = mean(x, axes, true);
    Tensor var = fwd::variance(x, axes, false, true);
    xhat = mul(sub(x, mu), rsqrt(add(var, scalar_like(kBatchNormEps, var))));
    Tensor rm = ctx.model_field(1, "running_mean");
    Tensor rv = ctx.model_field(1, "running_var");
    Tensor bm = cast(reshape(stop_grad(mu), per_c), rm.dtype());
    Tensor bv = cast(reshape(mul(stop_grad(var),
                                 scalar_like(double(n) / double(n - 1), var)),
                             per_c),
                     rv.dtype());
    auto step = [](const Tensor& run, const Tensor& batch) {
      return add(mul(run, scalar_like(1 - kBatchNormMomentum, run)),
                 mul(batch, scalar_like(kBatchNormMomentum, batch)));
    };
    ctx.set_model_field(1, "running_mean", stop_grad(step(rm, bm)));
    ctx.set_model_field(1, "running_var", stop_grad(step(rv, bv)));
  } else {
    Tensor rm = fwd::along(ctx.model_field(1, "running_mean"), {1}, rank);
    Tensor rv = fwd::along(ctx.model_field(1, "running_var"), {1}, rank);
    xhat = mul(sub(x, rm), rsqrt(add(rv, scalar_like(kBatchNormEps, rv))));
  }
  Tensor g = fwd::along(ctx.model_field(1, "g"), {1}, rank);
  Tensor b = fwd::along(ctx.model_field(1, "b"), {1}, rank);
  Tensor y = add(mul(xhat, g), b);
  return {y.dtype() == x0.dtype() ? y : cast(y, x0.dtype())};
}

/// Whether a norm over [pos] of [x] runs as one fused kernel: over the
/// last axis alone, in f32 or f64 (Note [Fused kernels]).
bool fused_last_axis(const std::vector<int>& pos, const Tensor& x) {
  return pos.size() == 1 && pos[0] + 1 == static_cast<int>(x.rank()) &&
         has_fused_kernel(x);
}

/// over= of layer_norm / rms_norm (every axis when not given).
std::vector<int> norm_axes(ForwardCtx& ctx, const Tensor& x) {
  std::vector<int> pos = fwd::over_axes(ctx, 1, x);
  if (pos.empty()) {
    pos.resize(x.rank());
    std::iota(pos.begin(), pos.end(), 0);
  }
  return pos;
}

// (x - mean) / sqrt(var + eps) over over= (biased variance, as
// torch.nn.LayerNorm); affine= a LayerNorm: then * g + b.
std::vector<Tensor> layer_norm_fwd(ForwardCtx& ctx) {
  Tensor x0 = ctx.tensor(0);
  Tensor x = fwd::compute_float(x0);
  std::vector<int> pos = norm_axes(ctx, x);
  double eps = ctx.has(2) ? ctx.number(2) : 1e-5;
  Tensor y;
  bool last = fused_last_axis(pos, x);
  if (last && ctx.has(3)) {
    // The affine part in the kernel too, where g and b are x's last axis
    // in x's dtype (a LayerNorm of halves on a widened x is not).
    Tensor g = ctx.model_field(3, "g"), b = ctx.model_field(3, "b");
    auto fits = [&](const Tensor& p) {
      return p.dtype() == x.dtype() && p.shape() == Shape{x.shape().back()};
    };
    if (fits(g) && fits(b))
      return {fwd::cast_back(layer_norm_last(x, eps, g, b), x0)};
  }
  if (last) {
    y = layer_norm_last(x, eps);  // Note [Fused kernels]
  } else {
    Tensor mu = mean(x, pos, true);
    Tensor var = fwd::variance(x, pos, false, true);
    y = mul(sub(x, mu), rsqrt(add(var, scalar_like(eps, var))));
  }
  if (ctx.has(3)) {
    Tensor g = fwd::along(ctx.model_field(3, "g"), pos, x.rank());
    Tensor b = fwd::along(ctx.model_field(3, "b"), pos, x.rank());
    y = add(mul(y, g), b);
  }
  return {fwd::cast_back(y, x0)};
}

// x / sqrt(mean(x^2) + eps) over over=. The table gives no eps default;
// 1e-6 here (torch.nn.RMSNorm's default, None, means the dtype's machine
// epsilon, ~1.2e-7 in f32; 1e-6 is the common choice of LLaMA-style
// models).
std::vector<Tensor> rms_norm_fwd(ForwardCtx& ctx) {
  Tensor x0 = ctx.tensor(0);
  Tensor x = fwd::compute_float(x0);
  std::vector<int> pos = norm_axes(ctx, x);
  double eps = ctx.has(2) ? ctx.number(2) : 1e-6;
  if (fused_last_axis(pos, x))
    return {fwd::cast_back(rms_norm_last(x, eps), x0)};  // Note [Fused kernels]
  Tensor ms = mean(mul(x, x), pos, true);
  Tensor y = mul(x, rsqrt(add(ms, scalar_like(eps, ms))));
  return {fwd::cast_back(y, x0)};
}

// table's rows at ids (range-checked by take). A negative id is out of
// range, as torch's F.embedding says ("index out of range in self"): take
// alone would count it from the end.
std::vector<Tensor> embedding_fwd(ForwardCtx& ctx) {
  Tensor table = ctx.tensor(0), ids = ctx.tensor(1);
  check_none(lt(ids, scalar_like(0, ids)), backend::kIndexOutOfRange, [&] {
    const double low = min(ids).item();
    fwd::value_error("id " + std::to_string(static_cast<int64_t>(low)) +
                     " is out of range for a table of " +
                     std::to_string(table.rank() ? table.shape()[0] : 0) +
                     " rows");
  });
  return {take(table, ids, 0)};
}

std::vector<Tensor> stop_grad_fwd(ForwardCtx& ctx) {
  return {stop_grad(ctx.tensor(0))};
}

// x @ l.w + l.b.
// Note [A half linear rounds once]: torch's linear is one addmm, which in
// bf16 or f16 sums x @ w + b in f32 and rounds once; as a product and an
// add it would round twice (a third of the elements one unit apart in
// bf16). So a half linear computes in f32 and rounds its result, and its
// gradients (through the casts' VJPs) are f32 products rounded once, as
// torch's addmm backward's.
std::vector<Tensor> linear_fwd(ForwardCtx& ctx) {
  Tensor x = ctx.tensor(1);
  Tensor w = ctx.model_field(0, "w"), b = ctx.model_field(0, "b");
  const DType d =
      types::promote(types::promote(x.dtype(), w.dtype()), b.dtype());
  const bool half = d == DType::BF16 || d == DType::F16;
  auto wide = [half](const Tensor& t) {
    return half ? cast(t, DType::F32) : t;
  };
  // One product with the bias in its epilogue (Note [Products with
  // epilogues] in ops/cpu/cpu_epilogue.cpp), except under `split H`, where
  // the product and the bias are parts of their own.
  const DType c = half ? DType::F32 : d;
  if (!ctx.heads_split() && (c == DType::F32 || c == DType::F64)) {
    auto to = [c](const Tensor& t) { return t.dtype() == c ? t : cast(t, c); };
    Tensor y =
        linear_epilogue(to(x), to(w), to(b), Activation::None, Tensor(), 1.0);
    return {half ? cast(y, d) : y};
  }
  Tensor xw = ctx.part(
      0, {x, w}, [&](auto& t) { return matmul(wide(t[0]), wide(t[1])); });
  Tensor y =
      ctx.part(1, {xw, b}, [&](auto& t) { return add(t[0], wide(t[1])); });
  return {half ? cast(y, d) : y};
}

// linear's parts under `split H` (Note [An op in parts under split H]):
// x @ l.w, a product (Sums), then + l.b, per head.
std::vector<HeadsPart> linear_heads_parts(const std::vector<Type>& args,
                                          const Type& result) {
  if (args.size() < 2 || !args[0].model) return {};
  auto field = [&](const char* name) {
    const types::FieldInfo* f = args[0].model->field(name);
    return f ? types::model_field_type(args[0], *f) : Type::error();
  };
  const Type w = field("w"), b = field("b");
  Type xw = result;
  xw.dtype = types::promote(args[1].dtype, w.dtype);
  using H = DeviceRule::Heads;
  return {{H::Sums, {args[1], w}, xw}, {H::PerHead, {xw, b}, result}};
}

const Lowering kBatchNorm = [] {
  Lowering l;
  l.share = lowering::batch_norm_train;
  l.size = {PayloadSize::Of::ArgAxis, 0, 1, 2, 1, PayloadSize::DType::F64};
  l.sends = "2·C + 1 values in f64";
  l.explain_one = "'s sums of x and x² per channel and count";
  l.eval_mode_param = 2;
  return l;
}();

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          Forward forward,
          const char* summary,
          DeviceRule device = per_example()) {
  OpDef d{name, std::move(params), rule, summary};
  d.device = device;
  d.forward = forward;
  return d;
}

}  // namespace

std::vector<OpDef> ops_nn() {
  constexpr ParamSpec over{"over", ParamKind::Axes, true};
  constexpr ParamSpec eps{"eps", ParamKind::Value, false};
  return {
      def("dropout",
          {{"x"}, {"p"}, {"mode"}},
          dropout_rule,
          dropout_fwd,
          "in Train mode zeroes each value with probability p and scales the "
          "rest by 1 / (1 - p); in Eval, x")
          .with_torch("torch.nn.functional.dropout(x, p, training=...) (other "
                      "masks: draws keyed by seed and place)"),
      def("batch_norm",
          {{"x"}, {"bn", ParamKind::Value, true, true}, {"mode"}},
          batch_norm_rule,
          batch_norm_fwd,
          "batch normalisation of [b C ...] with a BatchNorm[C] (momentum 0.1, "
          "eps 1e-5)",
          lowered(kBatchNorm, Across::Operands))
          .with_torch("torch.nn.BatchNorm1d(C) / BatchNorm2d(C) (momentum 0.1, "
                      "eps 1e-5)"),
      with_heads(def("layer_norm",
                     {{"x"}, over, eps, {"affine", ParamKind::Value, false}},
                     norm_rule,
                     layer_norm_fwd,
                     "(x - mean) / sqrt(var + eps) over over= (biased var, eps "
                     "1e-5); affine= applies a LayerNorm's g and b",
                     refused()),
                 DeviceRule::Heads::PerHead)
          .with_torch(
              "torch.nn.functional.layer_norm(x, (D,), ln.g, ln.b, eps=1e-5)"),
      def("rms_norm",
          {{"x"}, over, eps},
          norm_rule,
          rms_norm_fwd,
          "x / sqrt(mean(x ** 2) + eps) over over= (eps 1e-6 by default)",
          refused())
          .with_torch("x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) "
                      "(torch.nn.RMSNorm in torch 2.4, whose eps defaults to "
                      "the dtype's epsilon)"),
      def("embedding",
          {{"table"}, {"ids"}},
          embedding_rule,
          embedding_fwd,
          "rows of table [V D] at ids [*s]: [*s D]")
          .with_torch("torch.nn.functional.embedding(ids, table)"),
      def("stop_grad",
          {{"x"}},
          stop_grad_rule,
          stop_grad_fwd,
          "x's value, with no gradient flowing back")
          .with_torch("x.detach()"),
      with_heads_parts(def("linear",
                           {{"l"}, {"x"}},
                           linear_rule,
                           linear_fwd,
                           "x @ l.w + l.b for a Linear[I O]: [*s I] -> [*s O]"),
                       linear_heads_parts)
          .with_torch("torch.nn.functional.linear(x, l.w.T, l.b): w is [I O] "
                      "here, [O I] in torch.nn.Linear")
          .with_autocast(Autocast::Lower),
  };
}

}  // namespace ss::ops
