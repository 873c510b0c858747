// Making tensors: tensor zeros ones full arange zeros_like ones_like causal.
// zeros()/ones() without a type are the initialisers of model fields.

#include <cstring>
#include <stdexcept>

#include "ops/defs/forward_util.h"
#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

/// An optional dtype= argument (a TypeArg naming a dtype).
std::optional<DType> dtype_arg(RuleCtx& ctx, size_t i, bool& bad) {
  bad = false;
  if (!ctx.has(i)) return std::nullopt;
  Type t = ctx.type_arg(i);
  if (t.is_error()) {
    bad = true;
    return std::nullopt;
  }
  if (!t.is_tensor() || t.rank() != 0) {
    ctx.error(
        Code::E0303,
        ctx.span(i),
        "dtype= is one of f32 f64 bf16 f16 i32 i64 bool, not " + ctx.text(i),
        ctx.text(i));
    bad = true;
    return std::nullopt;
  }
  return t.dtype;
}

// tensor([[1, 2], [3, 4]]): a nested list of host numbers. A literal's
// lengths are known ([2 2]); a list computed at run time gets fresh sizes.
Type tensor_rule(RuleCtx& ctx) {
  const Type& l = ctx.type(0);
  if (l.is_error()) return Type::error();
  Axes shape;
  const Type* t = &l;
  auto lengths = ctx.list_shape(0);
  size_t level = 0;
  while (t->kind == K::List && !t->elems.empty()) {
    if (lengths && level < lengths->size() && (*lengths)[level] > 0)
      shape.push_back(Axis::lit((*lengths)[level]));
    else
      shape.push_back(ctx.fresh("n"));
    ++level;
    t = &t->elems[0];
  }
  if (t->is_error()) return Type::error();
  DType d;
  if (t->kind == K::Int)
    d = DType::I64;
  else if (t->kind == K::Float)
    d = DType::F32;
  else if (t->kind == K::Bool)
    d = DType::Bool;
  else if (t->is_tensor() && t->rank() == 0)
    d = t->dtype;
  else {
    ctx.error(Code::E0303,
              ctx.span(0),
              "tensor needs a (nested) list of numbers, but " + ctx.text(0) +
                  " is " + l.str(),
              describe(ctx, 0));
    return Type::error();
  }
  bool bad;
  auto dt = dtype_arg(ctx, 1, bad);
  if (bad) return Type::error();
  return Type::tensor(std::move(shape), dt ? *dt : d);
}

/// Param [i] as a tensor type argument (`[b D] f64`, `[2, 8, F]`).
std::optional<Type> tensor_type_arg(RuleCtx& ctx, size_t i) {
  Type t = ctx.type_arg(i);
  if (t.is_error()) return std::nullopt;
  if (!t.is_tensor()) {
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) +
                  " needs a tensor type or a list of sizes, but " +
                  ctx.text(i) + " is " + t.str(),
              ctx.text(i));
    return std::nullopt;
  }
  return t;
}

Type zeros_ones_rule(RuleCtx& ctx) {
  if (!ctx.has(0)) return Type::of(K::Init);  // `= zeros()` in a model
  auto t = tensor_type_arg(ctx, 0);
  if (!t) return Type::error();
  return *t;
}

Type full_rule(RuleCtx& ctx) {
  auto t = tensor_type_arg(ctx, 0);
  if (ctx.type(1).is_error()) return Type::error();
  if (!require_number(ctx, 1)) return Type::error();
  if (!t) return Type::error();
  t->varying = union_varying({&ctx.type(1)});
  return *t;
}

Type arange_rule(RuleCtx& ctx) {
  const Type& n = ctx.type(0);
  if (n.is_error()) return Type::error();
  if (n.kind != K::Int) {
    ctx.error(
        Code::E0303,
        ctx.span(0),
        "arange needs a count, an int, but " + ctx.text(0) + " is " + n.str(),
        describe(ctx, 0));
    return Type::error();
  }
  auto a = size_arg(ctx, 0);
  return Type::tensor({a ? *a : ctx.fresh("n")}, DType::I64);
}

Type like_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  if (x.kind == K::Grads || x.is_tensor()) return x;
  if (x.is_host_number()) return Type::scalar(tensor_dtype(x));
  require_tensor(ctx, 0);
  return Type::error();
}

// zeros_like(m) of a model is a zero Grads[M], to start an accumulation
// before the first batch (library.md); of anything else, like_rule.
Type zeros_like_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.kind != K::Model) return like_rule(ctx);
  Type g = Type::of(K::Grads);
  g.model = x.model;
  g.model_args = x.model_args;
  g.model_dtype = x.model_dtype;
  g.stack = x.stack;
  return g;
}

Type causal_rule(RuleCtx& ctx) {
  auto n = ctx.axis(0);
  auto m = ctx.axis(1);
  if (!n || !m) return Type::error();
  return Type::tensor({*n, *m}, DType::Bool);
}

// ---------------------------------------------------------------- forwards

bool is(const char* a, const char* b) {
  return std::strcmp(a, b) == 0;
}

/// The dtype the checker gave the result, or [dflt] when unknown (a call
/// made as a value).
DType result_dtype(ForwardCtx& ctx, DType dflt) {
  const Type& r = ctx.result_type();
  return r.is_tensor() ? r.dtype : dflt;
}

// tensor(values, dtype=): ctx.tensors gives one tensor per item (a number
// as a 0-d tensor, ints i64 and floats f32); the items are stacked, so an
// item that is itself a tensor (a row) gives the next axis.
std::vector<Tensor> tensor_fwd(ForwardCtx& ctx) {
  DType d = ctx.has(1) ? ctx.dtype_arg(1) : result_dtype(ctx, DType::F32);
  // tensor(2.0) is 0-d, as torch.tensor(2.0): a number, not a list.
  const Type& given = ctx.arg_type(0);
  if (given.kind == K::Int)  // exactly, not through a double
    return {Tensor::integer_scalar(ctx.integer(0), d).to(ctx.device())};
  if (given.kind == K::Float || given.kind == K::Bool)
    return {Tensor::scalar(ctx.number(0), d).to(ctx.device())};
  if (given.is_tensor() && given.rank() == 0) return {cast(ctx.tensor(0), d)};
  std::vector<Tensor> items;
  try {
    items = ctx.tensors(0);
  } catch (const std::logic_error&) {
    // The evaluator's ForwardCtx converts the top-level items only; a
    // nested list item reaches it as "not a number".
    fwd::value_error("needs the evaluator to convert nested list rows");
  }
  if (items.empty()) return {Tensor::zeros({0}, d, ctx.device())};
  for (const Tensor& t : items)
    if (t.shape() != items[0].shape())
      fwd::shape_error("a nested list's rows differ in length: " +
                       shape_string(items[0].shape()) + " and " +
                       shape_string(t.shape()));
  // Items are host scalars (numbers) or tensors already placed.
  for (Tensor& t : items)
    if (!needs_grad(t) && t.device().kind == Device::Kind::Cpu)
      t = t.to(ctx.device());
  Tensor t = stack(items, 0);
  return {t.dtype() == d ? t : cast(t, d)};
}

// zeros(T) / ones(T). zeros() without T is an initialiser: never here.
std::vector<Tensor> zeros_ones_fwd(ForwardCtx& ctx) {
  if (!ctx.has(0))
    fwd::value_error(std::string(ctx.op_name()) +
                     "() without a type only initialises a model field");
  double v = is(ctx.op_name(), "ones") ? 1.0 : 0.0;
  return {Tensor::full(ctx.shape_arg(0), v, ctx.dtype_arg(0), ctx.device())};
}

// full(T, v): v (a number or a 0-d tensor) broadcast to T.
std::vector<Tensor> full_fwd(ForwardCtx& ctx) {
  Shape s = ctx.shape_arg(0);
  DType d = ctx.dtype_arg(0);
  Tensor v = ctx.tensor(1);
  if (!needs_grad(v)) v = v.to(ctx.device());  // a number, made here
  if (v.rank() != 0)
    fwd::shape_error("the value must be one number, not " +
                     shape_string(v.shape()));
  return {broadcast_to(v.dtype() == d ? v : cast(v, d), s)};
}

std::vector<Tensor> arange_fwd(ForwardCtx& ctx) {
  return {arange(ctx.size(0), ctx.device())};
}

std::vector<Tensor> zeros_like_fwd(ForwardCtx& ctx) {
  return {zeros_like(ctx.tensor(0))};
}

std::vector<Tensor> ones_like_fwd(ForwardCtx& ctx) {
  return {ones_like(ctx.tensor(0))};
}

// causal(n, m): [n m] bool, true where column <= row (torch.tril).
std::vector<Tensor> causal_fwd(ForwardCtx& ctx) {
  int64_t n = ctx.axis_size(0);
  int64_t m = ctx.axis_size(1);
  Tensor rows = reshape(arange(n, ctx.device()), {n, 1});
  Tensor cols = reshape(arange(m, ctx.device()), {1, m});
  return {le(cols, rows)};
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          Forward forward,
          const char* summary) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = false;
  d.forward = forward;
  return d;
}

}  // namespace

std::vector<OpDef> ops_make() {
  std::vector<OpDef> v = {
      def("tensor",
          {{"values"}, {"dtype", ParamKind::TypeArg, false}},
          tensor_rule,
          tensor_fwd,
          "a tensor from a nested list literal (ints give i64, floats f32)")
          .with_torch("torch.tensor([1, 2, 3])"),
      def("zeros",
          {{"type", ParamKind::TypeArg, false}},
          zeros_ones_rule,
          zeros_ones_fwd,
          "zeros of a type; zeros() alone initialises a model field")
          .with_torch("torch.zeros(sizes); as a field init, nn.init.zeros_"),
      def("ones",
          {{"type", ParamKind::TypeArg, false}},
          zeros_ones_rule,
          zeros_ones_fwd,
          "ones of a type; ones() alone initialises a model field")
          .with_torch("torch.ones(sizes); as a field init, nn.init.ones_"),
      def("full",
          {{"type", ParamKind::TypeArg}, {"v"}},
          full_rule,
          full_fwd,
          "a tensor of a type with every value v")
          .with_torch("torch.full(sizes, v)"),
      def("arange",
          {{"n"}},
          arange_rule,
          arange_fwd,
          "0, 1, ..., n-1 as [n] i64")
          .with_torch("torch.arange(n)"),
      def("zeros_like",
          {{"x"}},
          zeros_like_rule,
          zeros_like_fwd,
          "zeros of x's type (tensors and Grads; of a model, its Grads)")
          .with_torch("torch.zeros_like(x); of a model, [torch.zeros_like(p) "
                      "for p in m.parameters()]"),
      def("ones_like",
          {{"x"}},
          like_rule,
          ones_like_fwd,
          "ones of x's type (tensors and Grads)")
          .with_torch("torch.ones_like(x)"),
      def("causal",
          {{"n", ParamKind::Axis}, {"m", ParamKind::Axis}},
          causal_rule,
          causal_fwd,
          "[n m] bool, true where column <= row (torch.tril)")
          .with_torch("torch.ones(n, m, dtype=torch.bool).tril()"),
  };
  // causal with the batch axis is E1801.
  v.back().device = refused(Across::AxisArgs,
                            "causal masks positions within each example: "
                            "give it the sequence axes");
  return v;
}

}  // namespace ss::ops
