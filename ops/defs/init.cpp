// Initialisers of model fields (`w: [D Hd] = normal(std=0.02)`): each gives
// Kind::Init; the checker allows them only in a field's `= ...`. zeros()
// and ones() are in make (they also make tensors).

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

Type init_rule(RuleCtx& ctx) {
  // Every parameter of an initialiser is a host number.
  bool ok = true;
  for (size_t i = 0; i < 3; ++i) {
    if (!ctx.has(i)) continue;
    const Type& t = ctx.type(i);
    if (t.is_error()) return Type::error();
    if (t.kind != K::Int && t.kind != K::Float) {
      ctx.error(Code::E0303,
                ctx.span(i),
                std::string(ctx.op_name()) + " needs host numbers, but " +
                    ctx.text(i) + " is " + t.str(),
                describe(ctx, i));
      ok = false;
    } else if (auto v = ctx.const_float(i);
               v && i == 0 && *v < 0 &&
               (ctx.op_name() == std::string("normal") ||
                ctx.op_name() == std::string("truncated_normal"))) {
      ctx.error(Code::E0303,
                ctx.span(i),
                "std= must not be negative, but is " + ctx.text(i),
                describe(ctx, i));
      ok = false;
    }
  }
  return ok ? Type::of(K::Init) : Type::error();
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          const char* summary) {
  OpDef d{name, std::move(params), init_rule, summary};
  d.differentiable = false;
  d.initialiser = true;
  d.device = host();
  return d;
}

}  // namespace

std::vector<OpDef> ops_init() {
  constexpr ParamKind V = ParamKind::Value;
  return {
      def("normal",
          {{"std", V, false}, {"mean", V, false}},
          "initialiser: normal(std=, mean=0)")
          .with_torch("torch.nn.init.normal_(p, mean, std)"),
      def("uniform",
          {{"lo", V, false}, {"hi", V, false}},
          "initialiser: uniform in [lo, hi)")
          .with_torch("torch.nn.init.uniform_(p, lo, hi)"),
      def("constant", {{"v"}}, "initialiser: every value v")
          .with_torch("torch.nn.init.constant_(p, v)"),
      def("xavier", {}, "initialiser: torch's xavier_uniform_")
          .with_torch("torch.nn.init.xavier_uniform_(p)"),
      def("kaiming", {}, "initialiser: torch's kaiming_normal_ (fan_in, relu)")
          .with_torch("torch.nn.init.kaiming_normal_(p, mode=\"fan_in\", "
                      "nonlinearity=\"relu\") (fan_in: w's first axis here, "
                      "its second in torch)"),
      def("truncated_normal",
          {{"std", V, false}},
          "initialiser: normal(std=) cut at +-2 std (trunc_normal_)")
          .with_torch("torch.nn.init.trunc_normal_(p, std=s, a=-2*s, b=2*s)"),
  };
}

}  // namespace ss::ops
