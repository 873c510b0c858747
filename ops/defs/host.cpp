// Host builtins (run in the controller): range float int str typeof
// collective_timeout. Host min/max of two numbers are max/min's two-value
// form (reductions.cpp).

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

Type range_rule(RuleCtx& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.has(i)) continue;
    if (ctx.type(i).is_error()) return Type::error();
    if (!require_kind(ctx, i, K::Int, "int bounds")) return Type::error();
  }
  return Type::list(Type::of(K::Int));
}

/// float(x), int(x): a host number, a 0-d tensor (read to the host) or a
/// str (parsed).
Type convert_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  bool ok = x.is_host_number() || x.kind == K::Str ||
            (x.is_tensor() && x.rank() == 0);
  if (!ok) {
    ctx.error(Code::E0303,
              ctx.span(0),
              std::string(ctx.op_name()) +
                  " needs a number, a str or a 0-d tensor, but " + ctx.text(0) +
                  " is " + x.str(),
              describe(ctx, 0));
    return Type::error();
  }
  return Type::of(ctx.op_name() == std::string("int") ? K::Int : K::Float);
}

Type str_rule(RuleCtx& ctx) {
  if (ctx.type(0).is_error()) return Type::error();
  return Type::of(K::Str);
}

Type timeout_rule(RuleCtx& ctx) {
  if (ctx.type(0).is_error()) return Type::error();
  if (!require_number(ctx, 0, false)) return Type::error();
  if (auto v = ctx.const_float(0); v && *v <= 0) {
    ctx.error(Code::E0303,
              ctx.span(0),
              "collective_timeout needs a positive number of seconds, not " +
                  ctx.text(0),
              describe(ctx, 0));
    return Type::error();
  }
  return Type::of(K::Unit);
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary,
          HostEffect effect = HostEffect::None) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = false;
  d.device = host(effect);
  return d;
}

}  // namespace

std::vector<OpDef> ops_host() {
  return {
      def("range",
          {{"a"}, {"b", ParamKind::Value, false}},
          range_rule,
          "range(n): 0..n-1; range(a, b): a..b-1, a list of ints")
          .with_torch("range(n)"),
      // Of a tensor, these read it as a host number.
      def("float",
          {{"x"}},
          convert_rule,
          "x as a host float",
          HostEffect::ReadsHostNumber)
          .with_torch("x.item(), float(x)"),
      def("int",
          {{"x"}},
          convert_rule,
          "x as a host int (truncated)",
          HostEffect::ReadsHostNumber)
          .with_torch("int(x)"),
      def("str",
          {{"x"}},
          str_rule,
          "x as a str, as print writes it",
          HostEffect::ReadsHostNumber)
          .with_torch("str(x)"),
      [] {
        // It reads only v's type: split data is fine (no E1901).
        OpDef t =
            def("typeof", {{"v"}}, str_rule, "v's type, as a str: [b D]{x}")
                .with_torch("none: x.shape and x.dtype");
        t.device.takes_split = true;
        return t;
      }(),
      def("collective_timeout",
          {{"seconds"}},
          timeout_rule,
          "how long a collective waits before a WorkerError",
          HostEffect::SetsTimeout)
          .with_torch("torch.distributed.init_process_group(..., "
                      "timeout=timedelta(seconds=s))"),
  };
}

}  // namespace ss::ops
