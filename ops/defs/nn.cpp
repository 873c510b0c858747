// Neural-network ops: cross_entropy mse dropout batch_norm layer_norm
// rms_norm embedding conv2d max_pool2d avg_pool2d stop_grad linear.

#include <cstring>

#include "ops/core/shape_algebra.h"
#include "ops/registry/op_def.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool require_float(RuleCtx& ctx, size_t i) {
  const Type& t = ctx.type(i);
  if (!require_tensor(ctx, i)) return false;
  if (types::is_float(t.dtype)) return true;
  ctx.error(Code::E0304, ctx.span(i),
            std::string(ctx.op_name()) + " needs a float tensor, but " +
                ctx.text(i) + " is " + t.str(),
            describe(ctx, i));
  return false;
}

/// A model argument of stdlib model [name] (or any model when null).
bool require_model(RuleCtx& ctx, size_t i, const char* name) {
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  if (t.kind == K::Model && t.model &&
      (!name || t.model->name == name))
    return true;
  ctx.error(Code::E0303, ctx.span(i),
            std::string(ctx.op_name()) + " needs a " +
                (name ? name : "model") + ", but " + ctx.text(i) + " is " +
                t.str(),
            describe(ctx, i));
  return false;
}

/// The type of field [f] of model argument [i]; nullopt (reported) when it
/// has none.
std::optional<Type> field_of(RuleCtx& ctx, size_t i, const char* f) {
  const Type& m = ctx.type(i);
  const types::FieldInfo* fi = m.model->field(f);
  if (!fi) {
    ctx.error(Code::E0303, ctx.span(i),
              std::string(ctx.op_name()) + " needs a model with a field " +
                  f + ", but " + m.str() + " has none",
              describe(ctx, i));
    return std::nullopt;
  }
  return types::model_field_type(m, *fi);
}

Type cross_entropy_rule(RuleCtx& ctx) {
  const Type& lg = ctx.type(0);
  const Type& lb = ctx.type(1);
  if (any_error({&lg, &lb})) return Type::error();
  if (!require_float(ctx, 0) || !require_tensor(ctx, 1)) return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  if (lg.rank() == 0) {
    ctx.error(Code::E0303, ctx.span(0),
              "cross_entropy needs logits with a class axis, but " +
                  ctx.text(0) + " is " + lg.str(),
              label);
    return Type::error();
  }
  Type r = Type::scalar(DType::F32);
  r.varying = union_varying({&lg, &lb});
  if (types::is_float(lb.dtype) && lb.shape == lg.shape) return r;  // probs
  if (!types::is_int(lb.dtype)) {
    ctx.error(Code::E0304, ctx.span(1),
              "cross_entropy needs int class labels, but " + ctx.text(1) +
                  " is " + lb.str(),
              label);
    return Type::error();
  }
  Axes want(lg.shape.begin(), lg.shape.end() - 1);
  if (lb.shape != want) {
    ctx.error(Code::E0303, ctx.call_span(),
              "cross_entropy needs labels shaped like the logits without "
              "their class axis " +
                  lg.shape.back().str_sized() + ", " +
                  types::shape_str(want) + ", but " + ctx.text(1) + " is " +
                  types::shape_str(lb.shape),
              label);
    return Type::error();
  }
  return r;
}

Type mse_rule(RuleCtx& ctx) {
  const Type& a = ctx.type(0);
  const Type& b = ctx.type(1);
  if (any_error({&a, &b})) return Type::error();
  if (!require_tensor(ctx, 0, true) || !require_tensor(ctx, 1, true))
    return Type::error();
  auto r = broadcast(ctx, a, b, ctx.span(0), ctx.span(1),
                     describe(ctx, 0) + ", " + describe(ctx, 1));
  if (!r) return Type::error();
  Type out = Type::scalar(DType::F32);
  out.varying = union_varying({&a, &b});
  return out;
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
    ctx.error(Code::E0303, ctx.span(1),
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
    ctx.error(Code::E0303, ctx.span(0),
              "batch_norm needs [b C ...], but " + ctx.text(0) + " is " +
                  x.str(),
              describe(ctx, 0));
    return Type::error();
  }
  if (auto g = field_of(ctx, 1, "g"); g && g->rank() >= 1) {
    if (g->shape.back() != x.shape[1]) {
      ctx.error(Code::E0303, ctx.call_span(),
                "batch_norm normalises channels " + x.shape[1].str_sized() +
                    " with " + bn.str() + " of " +
                    g->shape.back().str_sized(),
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
  if (ctx.has(2) && !ctx.type(2).is_error() &&
      !require_number(ctx, 2, false))
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
      ctx.error(Code::E0303, ctx.span(3),
                "layer_norm over " + types::shape_str(normed) +
                    " with affine=" + ctx.text(3) + " whose g is " +
                    g->str(),
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
    ctx.error(Code::E0303, ctx.span(0),
              "embedding needs a table [V D], but " + ctx.text(0) + " is " +
                  table.str(),
              describe(ctx, 0));
    return Type::error();
  }
  if (!types::is_int(ids.dtype)) {
    ctx.error(Code::E0304, ctx.span(1),
              "embedding needs int ids, but " + ctx.text(1) + " is " +
                  ids.str(),
              describe(ctx, 1));
    return Type::error();
  }
  Type r = Type::tensor(ids.shape, table.dtype);
  r.shape.push_back(table.shape[1]);
  r.varying = union_varying({&table, &ids});
  return r;
}

/// (h + 2p - k) / s + 1 when everything is static, else a fresh size.
Axis conv_out(RuleCtx& ctx, const Axis& h, std::optional<int64_t> k,
              int64_t s, int64_t p, const char* name) {
  auto hs = h.static_size();
  if (hs && k && s > 0 && *hs + 2 * p >= *k)
    return Axis::lit((*hs + 2 * p - *k) / s + 1);
  return ctx.fresh(name);
}

Type conv2d_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  const Type& k = ctx.type(1);
  if (any_error({&x, &k})) return Type::error();
  if (!require_float(ctx, 0) || !require_float(ctx, 1)) return Type::error();
  std::string label = describe(ctx, 0) + ", " + describe(ctx, 1);
  if (x.rank() != 4 || k.rank() != 4) {
    ctx.error(Code::E0303, ctx.call_span(),
              "conv2d needs x: [b C h w] and k: [O C kh kw]", label);
    return Type::error();
  }
  if (x.shape[1] != k.shape[1]) {
    ctx.error(Code::E0302, ctx.call_span(),
              "conv2d contracts channels " + x.shape[1].str_sized() +
                  " with " + k.shape[1].str_sized(),
              label);
    return Type::error();
  }
  // Unknown stride/padding (not constant): -1, giving fresh sizes.
  int64_t stride = 1, pad = 0;
  for (size_t i : {size_t(2), size_t(3)}) {
    if (!ctx.has(i)) continue;
    if (ctx.type(i).is_error()) return Type::error();
    auto v = ctx.const_int(i);
    (i == 2 ? stride : pad) = v ? *v : -1;
  }
  bool known = stride > 0 && pad >= 0;
  Axis h2 = known ? conv_out(ctx, x.shape[2], k.shape[2].static_size(),
                             stride, pad, "h2")
                  : ctx.fresh("h2");
  Axis w2 = known ? conv_out(ctx, x.shape[3], k.shape[3].static_size(),
                             stride, pad, "w2")
                  : ctx.fresh("w2");
  Type r = Type::tensor({x.shape[0], k.shape[0], h2, w2},
                        types::promote(x.dtype, k.dtype));
  r.varying = union_varying({&x, &k});
  return r;
}

Type pool_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (any_error({&x, &ctx.type(1)})) return Type::error();
  if (!require_float(ctx, 0)) return Type::error();
  if (x.rank() < 2) {
    ctx.error(Code::E0303, ctx.span(0),
              std::string(ctx.op_name()) + " needs [.. h w], but " +
                  ctx.text(0) + " is " + x.str(),
              describe(ctx, 0));
    return Type::error();
  }
  if (ctx.type(1).kind != K::Int) {
    ctx.error(Code::E0303, ctx.span(1),
              std::string(ctx.op_name()) + "'s window is an int, but " +
                  ctx.text(1) + " is " + ctx.type(1).str(),
              describe(ctx, 1));
    return Type::error();
  }
  auto k = ctx.const_int(1);
  Type r = x;
  size_t n = x.rank();
  for (size_t i = n - 2; i < n; ++i)
    r.shape[i] = k && *k > 0 ? conv_out(ctx, x.shape[i], k, *k, 0,
                                        i == n - 2 ? "h2" : "w2")
                             : ctx.fresh(i == n - 2 ? "h2" : "w2");
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
  std::string label = describe(ctx, 1) + ", " + ctx.text(0) + ".w: " +
                      w->str();
  if (w->rank() != 2 || x.rank() == 0) {
    ctx.error(Code::E0303, ctx.call_span(),
              "linear needs x: [*s I] and a model with w: [I O]", label);
    return Type::error();
  }
  if (x.shape.back() != w->shape[0]) {
    ctx.error(Code::E0302, ctx.call_span(),
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

OpDef def(const char* name, std::vector<ParamSpec> params, ShapeRule rule,
          const char* summary, BatchRule batch = BatchRule::PerExample) {
  OpDef d{name, std::move(params), rule, summary};
  d.batch = batch;
  return d;
}

}  // namespace

std::vector<OpDef> ops_nn() {
  constexpr ParamSpec over{"over", ParamKind::Axes, true};
  constexpr ParamSpec eps{"eps", ParamKind::Value, false};
  return {
      def("cross_entropy", {{"logits"}, {"label"}}, cross_entropy_rule,
          "mean cross-entropy of logits [b *s C] with labels [b *s] i64",
          BatchRule::AllReduce),
      def("mse", {{"a"}, {"b"}}, mse_rule, "mean squared error, an f32",
          BatchRule::AllReduce),
      def("dropout", {{"x"}, {"p"}, {"mode"}}, dropout_rule,
          "zeroes values with probability p in Train mode, scales the rest"),
      def("batch_norm",
          {{"x"}, {"bn", ParamKind::Value, true, true}, {"mode"}},
          batch_norm_rule,
          "batch normalisation of [b C ...] with a BatchNorm[C]",
          BatchRule::AllReduce),
      def("layer_norm",
          {{"x"}, over, eps, {"affine", ParamKind::Value, false}}, norm_rule,
          "normalises over over=; affine= applies a LayerNorm's g and b",
          BatchRule::NoLowering),
      def("rms_norm", {{"x"}, over, eps}, norm_rule,
          "x / sqrt(mean(x**2) + eps) over over=", BatchRule::NoLowering),
      def("embedding", {{"table"}, {"ids"}}, embedding_rule,
          "rows of table [V D] at ids [*s]: [*s D]"),
      def("conv2d",
          {{"x"}, {"k"}, {"stride", ParamKind::Value, false},
           {"padding", ParamKind::Value, false}},
          conv2d_rule, "2-d convolution: [b C h w] with [O C kh kw]"),
      def("max_pool2d", {{"x"}, {"k"}}, pool_rule,
          "max over k x k windows of the last two axes, stride k"),
      def("avg_pool2d", {{"x"}, {"k"}}, pool_rule,
          "mean over k x k windows of the last two axes, stride k"),
      def("stop_grad", {{"x"}}, stop_grad_rule,
          "x's value, with no gradient flowing back"),
      def("linear", {{"l"}, {"x"}}, linear_rule,
          "x @ l.w + l.b for a Linear[I O]: [*s I] -> [*s O]"),
  };
}

}  // namespace ss::ops
