// Autodiff: value_and_grad grad clip_norm copy remat autocast.
//
// aux= is keyword-only, so it is read from the extra keywords (the ops are
// variadic: value_and_grad(loss, m, batch) passes batch to loss). Its value
// is not visible to a rule (RuleCtx has no const_bool for extra keywords):
// with aux= given, a function returning a 2-tuple is taken as aux=true.

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool is_0d_float(const Type& t) {
  return t.kind == K::Float ||
         (t.is_tensor() && t.rank() == 0 && types::is_float(t.dtype));
}

/// The gradient type of [m]: Grads of a model, a tensor of a tensor.
std::optional<Type> grads_of(RuleCtx& ctx, size_t i) {
  const Type& m = ctx.type(i);
  if (m.kind == K::Model) {
    Type g = Type::of(K::Grads);
    g.model = m.model;
    g.model_args = m.model_args;
    g.model_dtype = m.model_dtype;
    g.stack = m.stack;
    return g;
  }
  if (m.is_tensor()) {
    if (!types::is_float(m.dtype)) {
      ctx.error(Code::E0304,
                ctx.span(i),
                std::string(ctx.op_name()) +
                    " differentiates with respect to floats, but " +
                    ctx.text(i) + " is " + m.str(),
                describe(ctx, i));
      return std::nullopt;
    }
    return m;
  }
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) +
                " differentiates with respect to a model or a tensor, but " +
                ctx.text(i) + " is " + m.str(),
            describe(ctx, i));
  return std::nullopt;
}

/// Checks f(m, extras...) and returns (loss, aux or nullopt, grads), or
/// nullopt when an error was reported (or an argument was already wrong).
struct Diff {
  Type loss;
  std::optional<Type> aux;
  Type grads;
};

/// scaler=opt (Note [Loss scaling] in interp/builtins/grad_scaler.cpp):
/// an optimizer, of [m] when m is a model.
bool scaler_fits(RuleCtx& ctx, const Type& m) {
  const Type& o = ctx.type(3);
  if (o.is_error()) return false;
  if (!require_kind(ctx, 3, K::Optim, "an optimizer that grad_scaler made"))
    return false;
  if (m.kind == K::Model &&
      (o.model != m.model || o.model_args != m.model_args ||
       o.model_dtype != m.model_dtype || o.stack != m.stack)) {
    ctx.error(Code::E0303,
              ctx.span(3),
              std::string(ctx.op_name()) + " of " + m.str() +
                  " with the grad scaler of an optimizer of " + o.str(),
              describe(ctx, 3));
    return false;
  }
  return true;
}

std::optional<Diff> differentiate(RuleCtx& ctx) {
  const Type& f = ctx.type(0);
  const Type& m = ctx.type(1);
  if (any_error({&f, &m})) return std::nullopt;
  bool aux_given = false;
  if (ctx.has(2)) {
    const Type& t = ctx.type(2);
    if (t.is_error()) return std::nullopt;
    auto v = ctx.const_bool(2);
    if (t.kind != K::Bool || !v) {
      ctx.error(Code::E0303,
                ctx.span(2),
                std::string(ctx.op_name()) + "'s aux= is true or false, not " +
                    ctx.text(2),
                "write aux=true or aux=false");
      return std::nullopt;
    }
    aux_given = *v;
  }
  if (ctx.has(3) && !scaler_fits(ctx, m)) return std::nullopt;
  if (!require_kind(ctx, 0, K::Fn, "a function")) return std::nullopt;
  auto g = grads_of(ctx, 1);
  if (!g) return std::nullopt;
  std::vector<Type> args = {m};
  for (size_t k = 0; k < ctx.extra_count(); ++k) {
    if (ctx.extra_type(k).is_error()) return std::nullopt;
    args.push_back(ctx.extra_type(k));
  }
  Type r = ctx.call_fn(f, args, ctx.call_span());
  if (r.is_error()) return std::nullopt;
  std::string fname = f.fn_name.empty() ? ctx.text(0) : f.fn_name;
  Diff d{r, std::nullopt, *g};
  if (aux_given) {
    if (r.kind != K::Tuple || r.elems.size() != 2) {
      ctx.error(Code::E0309,
                ctx.span(0),
                std::string(ctx.op_name()) +
                    " with aux=true needs a function "
                    "returning (loss, aux), but " +
                    fname + " returns " + r.str(),
                ctx.text(0) + ": " + r.str());
      return std::nullopt;
    }
    d.loss = r.elems[0];
    d.aux = r.elems[1];
    if (d.loss.is_error()) return std::nullopt;
  }
  if (!is_0d_float(d.loss)) {
    ctx.error(Code::E0309,
              ctx.span(0),
              std::string(ctx.op_name()) +
                  " needs a function returning a 0-d float" +
                  (aux_given ? " (and its aux, with aux=true)" : "") +
                  ", but " + fname + " returns " + r.str(),
              ctx.text(0) + ": " + r.str());
    return std::nullopt;
  }
  ctx.record_loss_varying(d.loss.varying);
  return d;
}

Type value_and_grad_rule(RuleCtx& ctx) {
  auto d = differentiate(ctx);
  if (!d) return Type::error();
  if (d->aux) return Type::tuple({d->loss, *d->aux, d->grads});
  return Type::tuple({d->loss, d->grads});
}

Type grad_rule(RuleCtx& ctx) {
  auto d = differentiate(ctx);
  if (!d) return Type::error();
  if (d->aux) return Type::tuple({*d->aux, d->grads});
  return d->grads;
}

Type clip_norm_rule(RuleCtx& ctx) {
  const Type& g = ctx.type(0);
  if (any_error({&g, &ctx.type(1)})) return Type::error();
  if (g.kind != K::Grads && !g.is_tensor()) {
    require_kind(ctx, 0, K::Grads, "gradients (Grads[M])");
    return Type::error();
  }
  if (!require_number(ctx, 1)) return Type::error();
  return g;
}

Type copy_rule(RuleCtx& ctx) {
  const Type& m = ctx.type(0);
  if (m.is_error()) return Type::error();
  if (m.kind == K::Model || m.kind == K::Grads || m.is_tensor()) return m;
  require_kind(ctx, 0, K::Model, "a model");
  return Type::error();
}

Type remat_rule(RuleCtx& ctx) {
  const Type& f = ctx.type(0);
  if (f.is_error()) return Type::error();
  if (!require_kind(ctx, 0, K::Fn, "a function")) return Type::error();
  Type r = f;
  r.remat = true;
  return r;
}

// autocast(f, bf16): f's autocast instance (Note [Autocast] in
// interp/eval/autocast.cpp), which the checker makes and checks.
Type autocast_rule(RuleCtx& ctx) {
  const Type& f = ctx.type(0);
  if (f.is_error()) return Type::error();
  if (!require_kind(ctx, 0, K::Fn, "a function")) return Type::error();
  Type d = ctx.type_arg(1);
  if (d.is_error()) return Type::error();
  if (!d.is_tensor() || !d.shape.empty() ||
      (d.dtype != DType::BF16 && d.dtype != DType::F16)) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "autocast runs products in bf16 or f16, not " + ctx.text(1),
              "not bf16 or f16")
        .help("torch.autocast on CPU: `autocast(loss, bf16)`");
    return Type::error();
  }
  std::optional<std::string> inst =
      ctx.autocast_instance(f.fn_name, d.dtype, ctx.span(0));
  if (!inst) return Type::error();
  Type r = f;
  r.fn_name = *inst;
  return r;
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = false;
  return d;
}

}  // namespace

std::vector<OpDef> ops_autodiff() {
  // aux= comes after the variadic arguments, so only by keyword.
  const ParamSpec aux{"aux", ParamKind::Value, false, false, true};
  // scaler=opt: its grad scaler scales the loss and unscales the gradients,
  // and opt records an inf (Note [Loss scaling] in interp/builtins/
  // grad_scaler.cpp).
  const ParamSpec scaler{"scaler", ParamKind::Value, false, true, true};
  OpDef vg = def("value_and_grad",
                 {{"f"}, {"m"}, aux, scaler},
                 value_and_grad_rule,
                 "(f(m, args...), gradients w.r.t. m); aux=true: (loss, aux, "
                 "grads); scaler=opt: the loss scaled by opt's grad scaler "
                 "for the backward pass, the gradients unscaled")
                 .with_torch(
                     "l = f(m, ...); l.backward() (the grads in p.grad); "
                     "torch.func.grad_and_value in torch 2");
  vg.variadic = true;
  // On several devices: device work, and it differentiates f on the workers
  // and all-reduces the gradients (explain counts them from the model).
  vg.device.device_work = true;
  vg.device.fn_arg = FnArg::Differentiates;
  vg.device.meets_instances = true;
  // scaler=: whether a device's pieces of the gradients hold an inf.
  vg.device.sums_grad_pieces = true;
  OpDef g = def("grad",
                {{"f"}, {"m"}, aux, scaler},
                grad_rule,
                "the gradients of f(m, args...) w.r.t. m; aux=true: (aux, "
                "grads)")
                .with_torch("torch.autograd.grad(f(m, ...), m.parameters())");
  g.variadic = true;
  g.device = vg.device;
  OpDef clip =
      def("clip_norm",
          {{"g"}, {"max"}},
          clip_norm_rule,
          "gradients scaled by max / (norm + 1e-6) when that is below 1, so "
          "their global L2 norm is at most max")
          .with_torch("torch.nn.utils.clip_grad_norm_(m.parameters(), max)");
  clip.device.sums_grad_pieces = true;
  return {
      vg,
      g,
      clip,
      def("copy",
          {{"m"}},
          copy_rule,
          "an independent model with the same values")
          .with_torch("copy.deepcopy(m)"),
      def("remat",
          {{"f"}},
          remat_rule,
          "f, recomputing its intermediates in the backward pass")
          .with_torch("torch.utils.checkpoint.checkpoint(f, ...)"),
      def("autocast",
          {{"f"}, {"dtype", ParamKind::TypeArg}},
          autocast_rule,
          "f run as torch.autocast runs it: products and convolutions in "
          "dtype (bf16 or f16), losses in f32, the rest in their inputs' "
          "dtype; f's arguments and result keep their declared dtypes")
          .with_torch(
              "with torch.autocast(\"cpu\", dtype=torch.bfloat16): f(...)"),
  };
}

}  // namespace ss::ops
