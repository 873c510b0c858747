// Random tensors: rand(T, seed=) uniform in [0, 1), randn(T, seed=)
// standard normal, drawn from (seed, call site, element index).

#include <cstring>

#include "ops/api.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using diag::Code;

Type rand_rule(RuleCtx& ctx) {
  Type t = ctx.type_arg(0);
  if (t.is_error()) return Type::error();
  if (!t.is_tensor()) {
    ctx.error(Code::E0303,
              ctx.span(0),
              std::string(ctx.op_name()) +
                  " needs a tensor type or a list of sizes, but " +
                  ctx.text(0) + " is " + t.str(),
              ctx.text(0));
    return Type::error();
  }
  if (!types::is_float(t.dtype)) {
    ctx.error(Code::E0304,
              ctx.span(0),
              std::string(ctx.op_name()) + " draws floats, not " +
                  types::dtype_name(t.dtype),
              ctx.text(0));
    return Type::error();
  }
  if (ctx.has(1)) {
    const Type& s = ctx.type(1);
    if (s.is_error()) return Type::error();
    if (s.kind != Type::Kind::Int) {
      ctx.error(Code::E0303,
                ctx.span(1),
                "seed= is an int, but " + ctx.text(1) + " is " + s.str(),
                describe(ctx, 1));
      return Type::error();
    }
  }
  return t;
}

// Draws element i from Philox counter (offset + i, stream) under the key
// of (seed, call site) that ctx.random gives.
std::vector<Tensor> rand_fwd(ForwardCtx& ctx) {
  Shape shape = ctx.shape_arg(0);
  DType dtype = ctx.dtype_arg(0);
  RandomStream s = ctx.random(1);
  if (std::strcmp(ctx.op_name(), "randn") == 0)
    return {
        random_normal(shape, dtype, s.key, s.stream, s.offset, ctx.device())};
  return {
      random_uniform(shape, dtype, s.key, s.stream, s.offset, ctx.device())};
}

OpDef def(const char* name, const char* summary) {
  OpDef d{name,
          {{"type", ParamKind::TypeArg}, {"seed", ParamKind::Value, false}},
          rand_rule,
          summary};
  d.differentiable = false;
  d.draws_at_site = true;
  d.forward = rand_fwd;
  return d;
}

}  // namespace

std::vector<OpDef> ops_random() {
  return {
      def("rand", "uniform values in [0, 1) of a type, keyed by seed=")
          .with_torch("torch.rand(sizes) (other values: Philox keyed by seed "
                      "and call site)"),
      def("randn", "standard normal values of a type, keyed by seed=")
          .with_torch("torch.randn(sizes) (other values: Philox keyed by seed "
                      "and call site)"),
  };
}

}  // namespace ss::ops
