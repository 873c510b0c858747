// Checkpoints: save load load_into (one safetensors file).

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

Type save_rule(RuleCtx& ctx) {
  const Type& p = ctx.type(0);
  const Type& m = ctx.type(1);
  if (any_error({&p, &m})) return Type::error();
  if (!require_kind(ctx, 0, K::Str, "a path, a str") ||
      !require_kind(ctx, 1, K::Model, "a model"))
    return Type::error();
  if (ctx.has(2)) {
    const Type& o = ctx.type(2);
    if (o.is_error()) return Type::error();
    if (!require_kind(ctx, 2, K::Optim, "an optimizer")) return Type::error();
    if (o.model != m.model) {
      ctx.error(Code::E0303,
                ctx.span(2),
                "save of " + m.str() + " with an optimizer of " + o.str(),
                describe(ctx, 1) + ", " + describe(ctx, 2));
      return Type::error();
    }
  }
  return Type::of(K::Unit);
}

Type load_rule(RuleCtx& ctx) {
  if (ctx.type(0).is_error()) return Type::error();
  if (!require_kind(ctx, 0, K::Str, "a path, a str")) return Type::error();
  Type m = ctx.type_arg(1);
  if (m.is_error()) return Type::error();
  if (m.kind != K::Model) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "load needs a model type, but " + ctx.text(1) + " is " + m.str(),
              ctx.text(1));
    return Type::error();
  }
  if (!ctx.has(2)) return m;
  const Type& f = ctx.type(2);
  if (f.is_error()) return Type::error();
  Type o = Type::of(K::Optim);
  o.model = m.model;
  o.model_args = m.model_args;
  o.model_dtype = m.model_dtype;
  o.stack = m.stack;
  const types::OptimNames* optim =
      f.kind == K::Fn ? types::optim_named(f.fn_name, /*type=*/false) : nullptr;
  if (!optim) {
    std::string names;
    for (const types::OptimNames& n : types::optim_names())
      names += (names.empty() ? "" : ", ") + std::string(n.fn);
    ctx.error(Code::E0303,
              ctx.span(2),
              "load's third argument names an optimizer (" + names + "), not " +
                  ctx.text(2),
              ctx.text(2));
    return Type::error();
  }
  o.optim_kind = optim->kind;
  return Type::tuple({m, o});
}

Type load_into_rule(RuleCtx& ctx) {
  if (any_error({&ctx.type(0), &ctx.type(1)})) return Type::error();
  if (!require_kind(ctx, 0, K::Model, "a model") ||
      !require_kind(ctx, 1, K::Str, "a path, a str"))
    return Type::error();
  return Type::of(K::Unit);
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary,
          HostEffect effect) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = false;
  d.device = host(effect);
  return d;
}

}  // namespace

std::vector<OpDef> ops_checkpoint() {
  constexpr ParamKind V = ParamKind::Value;
  return {
      def("save",
          {{"path"}, {"m"}, {"opt", V, false}},
          save_rule,
          "writes m (and opt) to one safetensors file, atomically",
          HostEffect::SavesCheckpoint)
          .with_torch("safetensors.torch.save_file(m.state_dict(), path) (opt "
                      "state in the same file)"),
      def("load",
          {{"path"}, {"model", ParamKind::TypeArg}, {"optim", V, false}},
          load_rule,
          "a model (and its optimizer: load(p, Mlp, adamw)) from a file",
          HostEffect::LoadsCheckpoint)
          .with_torch("m.load_state_dict(safetensors.torch.load_file(path))"),
      def("load_into",
          {{"m", V, true, true}, {"path"}},
          load_into_rule,
          "reads a checkpoint's params into m",
          HostEffect::LoadsCheckpoint)
          .with_torch("m.load_state_dict(safetensors.torch.load_file(path))"),
  };
}

}  // namespace ss::ops
