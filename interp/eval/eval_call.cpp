// Calls: user fns, builtins with a forward (tensor ops, through
// ForwardCtx), and runtime builtins (interp/builtins).
#include <cctype>
#include <filesystem>

#include "interp/eval/autocast.h"
#include "interp/eval/device_hooks.h"
#include "interp/eval/eval_pattern.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/remat.h"
#include "interp/eval/runtime_lib.h"
#include "interp/eval/runtime_table.h"
#include "interp/eval/tensor_values.h"
#include "ops/api.h"
#include "ops/core/philox.h"
#include "ops/registry/registry.h"

namespace ss::eval {

using EK = ast::Expr::Kind;
using VK = Value::Kind;
using TK = types::Type::Kind;

namespace {

// The evaluator's side of ForwardCtx: one builtin call's arguments.
class EvalForwardCtx final : public ops::ForwardCtx {
 public:
  EvalForwardCtx(BuiltinCall& c)
      : c_(c), host_math_(c.result_type().kind == TK::Float) {
    // The partner of a host number is the first tensor argument that is not
    // a bool, as torch's weak scalars take the promoted dtype of the
    // operands they mix with: where(c, k, 0) with an i32 k is i32, not the
    // i64 an int takes beside the bool condition c. All bool: the first.
    for (const Value& v : c.args)
      if (v.kind == VK::Tensor && (partner_.kind != VK::Tensor ||
                                   (partner_.t.dtype() == types::DType::Bool &&
                                    v.t.dtype() != types::DType::Bool)))
        partner_ = v;
  }

  const char* op_name() const override { return c_.op.name; }
  bool has(size_t i) const override { return c_.has(i); }
  ops::Device device() const override { return placement_of(c_.in).device; }
  // Note [Autocast]: the dtype this call runs in, inside an autocast fn.
  std::optional<types::DType> autocast() const {
    return c_.info ? c_.info->autocast : std::nullopt;
  }
  ops::Tensor tensor(size_t i) override {
    const Value& v = need(i);
    if (v.kind == VK::Tensor) return autocast_operand(v.t, autocast());
    // Note [Host math in f64]: math on host numbers whose result is a host
    // float (`sqrt(Dh)`, `exp(0.5)`) runs on f64 0-d tensors: a host float
    // is a double, and an f32 tensor here would round `x / sqrt(Dh)` of an
    // f64 program to 7 digits, silently.
    if (host_math_ && (v.kind == VK::Int || v.kind == VK::Float))
      return ops::Tensor::scalar(v.number(), types::DType::F64);
    if (v.is_number()) return as_tensor(v, partner_);
    c_.fail("ValueError",
            std::string(op_name()) + ": `" + pname(i) + "` must be a tensor");
  }
  double number(size_t i) override {
    const Value& v = need(i);
    if (v.is_number() || (v.kind == VK::Tensor && v.t.numel() == 1))
      return v.number();
    c_.fail("ValueError",
            std::string(op_name()) + ": `" + pname(i) + "` must be a number");
  }
  int64_t integer(size_t i) override {
    if (auto n = need(i).integer()) return *n;
    c_.fail("ValueError",
            std::string(op_name()) + ": `" + pname(i) +
                "` must be an integer within int64's range");
  }
  bool flag(size_t i, bool dflt) override { return c_.flag(i, dflt); }
  std::string str(size_t i) override { return need(i).s; }
  std::vector<ops::Tensor> tensors(size_t i) override {
    const Value& v = need(i);
    std::vector<ops::Tensor> out;
    if (v.kind == VK::List || v.kind == VK::Tuple)
      for (const Value& x : *v.items)
        out.push_back(autocast_operand(nested(x), autocast()));
    return out;
  }
  std::optional<std::vector<int>> axes(size_t i) override {
    if (!c_.has(i) || !c_.info) return std::nullopt;
    auto it = c_.info->axes.find(static_cast<int>(i));
    if (it == c_.info->axes.end()) return std::nullopt;
    return it->second;
  }
  int64_t size(size_t i) override {
    const ast::Expr* e = i < c_.exprs.size() ? c_.exprs[i] : nullptr;
    if (e && e->kind == EK::Name && !c_.frame.find(e->name))
      if (std::optional<int64_t> d = c_.in.dim_size(e->name)) return *d;
    return integer(i);
  }
  int64_t axis_size(size_t i) override {
    if (!c_.info) c_.fail("ValueError", "an axis argument has no size here");
    auto it = c_.info->axis_args.find(static_cast<int>(i));
    if (it == c_.info->axis_args.end())
      c_.fail("ValueError",
              std::string(op_name()) + ": axis `" + pname(i) +
                  "` was not resolved");
    return c_.in.axis_size(it->second, c_.frame, c_.span);
  }
  ops::Shape shape_arg(size_t i) override {
    const ast::Expr* e = i < c_.exprs.size() ? c_.exprs[i] : nullptr;
    if (e && e->kind == EK::List) {
      // Note [Size lists]: an entry is a dim, a size variable the call's
      // types bound (`reshape(x, [o, i])` of `x: [i o]`: it has no value,
      // but the checked type's axis has its size; the checker records that
      // type on the argument), or any int expression.
      const types::Type& typed = c_.arg_type(i);  // type_arg would evaluate
      const types::Type* checked =
          typed.kind == TK::TypeValue && !typed.elems.empty() ? &typed.elems[0]
                                                              : nullptr;
      ops::Shape s;
      for (size_t k = 0; k < e->elems.size(); ++k) {
        const ast::Expr& x = *e->elems[k];
        if (x.kind == EK::Name && !c_.frame.find(x.name)) {
          if (std::optional<int64_t> d = c_.in.dim_size(x.name)) {
            s.push_back(*d);
            continue;
          }
          if (checked && checked->is_tensor() && k < checked->shape.size() &&
              checked->shape[k].kind == types::Axis::Kind::Var) {
            s.push_back(c_.in.axis_size(checked->shape[k], c_.frame, c_.span));
            continue;
          }
        }
        s.push_back(static_cast<int64_t>(c_.in.eval(x, c_.frame).number()));
      }
      return s;
    }
    return runtime_shape(c_.in, type_arg(i), c_.frame, c_.span);
  }
  types::DType dtype_arg(size_t i) override {
    const types::Type& t = type_arg(i);
    return t.kind == TK::Tensor ? t.dtype : types::DType::F32;
  }
  const types::Type& result_type() const override { return c_.result_type(); }
  const types::Type& arg_type(size_t i) const override {
    return c_.arg_type(i);
  }
  bool training(size_t i) override {
    const Value& v = need(i);
    return v.kind == VK::Mode && v.as<ModeState>()->train;
  }
  ops::RandomStream random(size_t i) override {
    const Value& v = need(i);
    if (v.kind == VK::Mode) {
      // dropout: (seed, entry count, ordinal of the draw in the entry).
      auto* m = v.as<ModeState>();
      uint64_t ordinal = m->draws++;
      // Each element draws by its index in the whole value: a rank's share
      // of the batch starts at its first row (language.md, Randomness).
      uint64_t offset = 0;
      std::optional<int64_t> row_start = placement_of(c_.in).batch_share_start;
      if (row_start && c_.info && c_.info->split && c_.has(0)) {
        ops::Tensor x = tensor(0);
        if (x.rank() > 0 && x.shape()[0] > 0)
          offset = static_cast<uint64_t>(*row_start) *
                   static_cast<uint64_t>(x.numel() / x.shape()[0]);
      }
      return {ops::philox::key_for(m->seed, "dropout"),
              (m->calls << 32) | (ordinal & 0xffffffffu),
              offset};
    }
    // rand/randn: (seed, call site), the site the checker named (Note [A
    // draw's site] in interp/check/calls.cpp). Called as a value (no call
    // expression), the site is the file's name and the call's position.
    uint64_t seed = static_cast<uint64_t>(v.number());
    if (c_.info && !c_.info->draw_site.empty())
      return {ops::philox::key_for(seed, c_.info->draw_site.c_str()), 0, 0};
    const diag::Span at = c_.in.sources().origin(c_.span);
    std::string site = std::filesystem::path(c_.in.sources().file(at.file).path)
                           .filename()
                           .string() +
                       ":" + c_.in.sources().position(at);
    return {ops::philox::key_for(seed, site.c_str()), 0, 0};
  }
  ops::Tensor model_field(size_t i, const std::string& path) override {
    return autocast_operand(
        c_.in.read_param(*need(i).as<ModelRef>(), path, c_.span), autocast());
  }
  void set_model_field(size_t i,
                       const std::string& path,
                       const ops::Tensor& t) override {
    need(i).as<ModelRef>()->set(path, ops::stop_grad(t));
  }
  ops::Tensor part(size_t k,
                   std::vector<ops::Tensor> operands,
                   const std::function<ops::Tensor(std::vector<ops::Tensor>&)>&
                       run) override {
    // Note [An op in parts under split H]: each part is an op site.
    OpSite s(OpSite::Kind::Part, c_.in, c_.span, [&] {
      return Value::tensor(run(operands));
    });
    s.op = &c_.op;
    s.call = &c_;
    s.part = k;
    for (ops::Tensor& t : operands) s.operands.push_back(&t);
    return c_.in.run_op(s).t;
  }
  bool heads_split() const override {
    return !c_.in.program().devices().split_dim.empty();
  }
  ops::MeshComm* mesh() override { return c_.in.mesh(); }
  std::vector<std::string> mesh_axes(size_t i) override {
    if (!c_.info) return {};
    auto it = c_.info->mesh_args.find(static_cast<int>(i));
    return it == c_.info->mesh_args.end() ? std::vector<std::string>{}
                                          : it->second;
  }

 private:
  // A number, a tensor, or a (nested) list of them, as one tensor.
  ops::Tensor nested(const Value& x) {
    if (x.kind == VK::List || x.kind == VK::Tuple) {
      std::vector<ops::Tensor> rows;
      for (const Value& y : *x.items) rows.push_back(nested(y));
      if (rows.empty())
        c_.fail("ValueError", std::string(op_name()) + ": an empty list");
      return ops::stack(rows, 0);
    }
    if (x.kind == VK::Tensor) return x.t;
    if (x.is_number()) return as_tensor(x, partner_);
    c_.fail("ValueError",
            std::string(op_name()) + ": expected numbers or tensors");
  }
  const Value& need(size_t i) {
    if (!c_.has(i))
      c_.fail("ValueError",
              std::string(op_name()) + ": missing `" + pname(i) + "`");
    return c_.args[i];
  }
  std::string pname(size_t i) const {
    return i < c_.op.params.size() ? c_.op.params[i].name : "?";
  }
  const types::Type& type_arg(size_t i) {
    static const types::Type kError;
    const types::Type& t = c_.arg_type(i);
    if (t.kind == TK::TypeValue && !t.elems.empty()) return t.elems[0];
    const Value& v = need(i);
    if (v.kind == VK::Type) return *v.type;
    return kError;
  }

  BuiltinCall& c_;
  bool host_math_;  // the result is a host float: Note [Host math in f64]
  Value partner_;
};

Value wrap(std::vector<ops::Tensor> ts) {
  if (ts.size() == 1) return Value::tensor(std::move(ts[0]));
  std::vector<Value> items;
  for (auto& t : ts) items.push_back(Value::tensor(std::move(t)));
  return Value::tuple(std::move(items));
}

}  // namespace

std::unique_ptr<ops::ForwardCtx> forward_ctx(BuiltinCall& c) {
  return std::make_unique<EvalForwardCtx>(c);
}

// Runs a builtin on arguments already gathered by param, as an op site
// (Note [Op sites]): on several devices a reduction across the batch axis
// is lowered to an all-reduce, a host effect happens once, ...
Value call_builtin_prepared(BuiltinCall& c) {
  if (!c.in.device_hooks()) return call_builtin_forward(c);
  OpSite s(OpSite::Kind::Builtin, c.in, c.span, [&] {
    return call_builtin_forward(c);
  });
  s.op = &c.op;
  s.call = &c;
  return c.in.run_op(s);
}

Value Interpreter::run_op(OpSite& s) {
  return hooks_ ? hooks_->run_op(s) : s.run();
}

namespace {

// Note [Builtin errors name the builtin]: the API's errors start with the
// API function that raised them ("take_one: index 7 is out of range"),
// which may be an internal name or a part of a composite. The user called
// the builtin: its name replaces the API's.
// An op's fault inside a builtin is reported under the builtin's name (the
// name the user wrote): `linear: ...`, not the `matmul: ...` it called.
[[noreturn]] void fail_with(BuiltinCall& c, const ops::OpError& e) {
  c.fail(e.kind() == ops::OpError::Kind::Shape ? "ShapeError" : "ValueError",
         std::string(c.op.name) + ": " + e.detail());
}

}  // namespace

Value call_builtin_forward(BuiltinCall& c) {
  if (c.walked)
    if (RuntimeFn fn = runtime_of(c.op, Overload::Walked)) return fn(c);
  // Builtins overload on their first argument (Note [The runtime table]):
  // gradients are models of tensors (`norm(g)`, `zeros_like(g)`),
  // `zeros_like(m)` of a model is a zero Grads (library.md), and take,
  // split, len of a Dataset are the dataset's (language.md).
  if (c.has(0)) {
    Overload on = Overload::Plain;
    switch (c.args[0].kind) {
      case VK::Grads:
        on = Overload::OnGrads;
        break;
      case VK::Model:
        on = Overload::OnModel;
        break;
      case VK::Dataset:
      case VK::Batches:
        on = Overload::OnDataset;
        break;
      default:
        break;
    }
    if (on != Overload::Plain)
      if (RuntimeFn fn = runtime_of(c.op, on)) return fn(c);
  }
  // sqrt(v), abs(g), ...: each param's tensor (Note [Arithmetic over
  // params] in interp/check/exprs.cpp).
  if (c.op.maps_over_params && c.op.forward && c.has(0) &&
      (c.args[0].kind == VK::Grads || c.args[0].kind == VK::Model))
    return grads_map(params_as_grads(c.args[0]), [&](const ops::Tensor& t) {
      BuiltinCall one = c;
      one.args[0] = Value::tensor(t);
      EvalForwardCtx ctx(one);
      return c.op.forward(ctx).at(0);
    });
  if (c.op.forward) {
    EvalForwardCtx ctx(c);
    try {
      Value v = wrap(c.op.forward(ctx));
      // Math on host numbers gives host numbers (`1/sqrt(D)`).
      const types::Type& rt = c.result_type();
      if (v.kind == VK::Tensor && v.t.numel() == 1) {
        if (rt.kind == TK::Float) return Value::floating(v.t.item());
        if (rt.kind == TK::Int)
          return Value::integer(static_cast<int64_t>(v.t.item()));
        if (rt.kind == TK::Bool) return Value::boolean(v.t.item() != 0);
      }
      return v;
    } catch (const ops::OpError& e) {
      fail_with(c, e);
    }
  }
  if (RuntimeFn fn = runtime_of(c.op)) {
    try {
      return fn(c);
    } catch (const ops::OpError& e) {
      fail_with(c, e);
    }
  }
  c.fail("ValueError",
         std::string("`") + c.op.name + "` cannot run in this build yet");
}

Value Interpreter::call_builtin(const ops::OpDef& op,
                                const ast::Expr& call,
                                const ast::Expr* receiver,
                                Frame& f) {
  settle();  // a builtin may observe what running worker calls produce
  if (call.pattern) return call_pattern(*this, op, call, receiver, f);
  const check::ExprInfo* info = prog_.info(&call);
  BuiltinCall c{*this, f, op, call.span, &call, info, {}, {}, {}, {}, {}};
  c.walked = &call == walked_call_;
  walked_call_ = nullptr;
  size_t np = op.params.size();
  c.args.resize(np);
  c.given.assign(np, false);
  c.exprs.assign(np, nullptr);
  std::vector<const ast::Expr*> given;
  std::vector<std::string> keywords;
  if (receiver) {
    given.push_back(receiver);
    keywords.push_back("");
  }
  for (const ast::Arg& a : call.args) {
    given.push_back(a.value.get());
    keywords.push_back(a.keyword);
  }
  for (size_t g = 0; g < given.size(); ++g) {
    int k = info && g < info->arg_params.size() ? info->arg_params[g] : -1;
    const ast::Expr* ex = given[g];
    if (k < 0) {
      Value v = eval(*ex, f);
      if (keywords[g].empty()) {
        c.extras.push_back(std::move(v));
        c.extra_exprs.push_back(ex);
      } else {
        c.keywords.push_back({keywords[g], std::move(v)});
      }
      continue;
    }
    c.given[k] = true;
    c.exprs[k] = ex;
    switch (op.params[k].kind) {
      case ops::ParamKind::Value:
        c.args[k] = eval(*ex, f);
        break;
      case ops::ParamKind::TypeArg:
        if (ex->kind == EK::List || ex->kind == EK::TypeLit ||
            ex->kind == EK::Name)
          c.args[k] = Value::unit();  // read through the checker's type
        else
          c.args[k] = eval(*ex, f);
        if (ex->kind == EK::Name) {
          const types::Type& t = prog_.type_of(ex);
          if (t.kind == TK::TypeValue && !t.elems.empty())
            c.args[k] = Value::type_value(t.elems[0]);
        }
        break;
      case ops::ParamKind::Axis:
      case ops::ParamKind::Axes:
        break;  // resolved by the checker (ExprInfo::axes)
    }
  }
  return call_builtin_prepared(c);
}

Value Interpreter::call_builtin_values(const std::string& name,
                                       std::vector<Value> args,
                                       diag::Span site) {
  settle();
  const ops::OpDef* op = ops::find_op(name);
  if (!op) fail("ValueError", site, "no builtin `" + name + "`");
  Frame* f = current_frame();
  Frame empty;
  empty.scopes.emplace_back();
  BuiltinCall c{
      *this, f ? *f : empty, *op, site, nullptr, nullptr, {}, {}, {}, {}, {}};
  size_t np = op->params.size();
  c.args.resize(np);
  c.given.assign(np, false);
  c.exprs.assign(np, nullptr);
  size_t k = 0;
  for (Value& v : args) {
    while (k < np && op->params[k].keyword_only) ++k;
    if (k < np) {
      c.given[k] = true;
      c.args[k++] = std::move(v);
    } else {
      c.extras.push_back(std::move(v));
    }
  }
  return call_builtin_prepared(c);
}

namespace {

// A fused op run in place of what the checker found written out (its
// params sized, none given yet), and a scale as written (`/ c` or `* c`).
BuiltinCall fused_call(Interpreter& in,
                       Frame& f,
                       const ops::OpDef& op,
                       const ast::Expr& root,
                       const check::ExprInfo& info) {
  in.settle();
  BuiltinCall c{in, f, op, root.span, &root, &info, {}, {}, {}, {}, {}};
  c.args.resize(op.params.size());
  c.given.assign(op.params.size(), false);
  c.exprs.assign(op.params.size(), nullptr);
  return c;
}
double written_scale(Interpreter& in,
                     const ast::Expr* scale,
                     bool divides,
                     Frame& f) {
  if (!scale) return 1;
  const double written = in.eval(*scale, f).number();
  return divides ? 1.0 / written : written;
}

// The product with v of attention written out, as the fused op (Note [The
// attention written out] in interp/check/fusion.cpp).
Value call_fused(Interpreter& in,
                 const check::FusedAttention& fa,
                 const ast::Expr& call,
                 Frame& f) {
  BuiltinCall c = fused_call(in, f, *fa.op, call, fa.info);
  // The fused op's params: q, k, v, causal, scale (ops/defs/attention.cpp).
  c.given.assign(c.given.size(), true);
  const ast::Expr* qkv[] = {fa.q, fa.k, fa.v};
  for (size_t i = 0; i < 3; ++i) {
    c.args[i] = in.eval(*qkv[i], f);
    c.exprs[i] = qkv[i];
  }
  c.args[3] = Value::boolean(fa.causal);
  c.args[4] = Value::floating(written_scale(in, fa.scale, fa.divides, f));
  return call_builtin_prepared(c);
}

// A layer written out, as one fused_linear call (Note [Layers run as one
// product] in interp/check/fusion_layers.cpp): its operands evaluated in
// the order written.
Value call_fused_layer(Interpreter& in,
                       const check::FusedLayer& fl,
                       const ast::Expr& root,
                       Frame& f) {
  BuiltinCall c = fused_call(in, f, *fl.op, root, fl.info);
  // fused_linear's params: x, w, b, act, residual, scale
  // (ops/defs/fused_linear.cpp).
  enum : size_t { kX, kW, kB, kAct, kResidual, kScale };
  auto put = [&](size_t k, Value v, const ast::Expr* ex) {
    c.args[k] = std::move(v);
    c.given[k] = true;
    c.exprs[k] = ex;
  };
  auto operand = [&](size_t k, const ast::Expr* ex) {
    put(k, in.eval(*ex, f), ex);
  };
  if (fl.residual && fl.residual_first) operand(kResidual, fl.residual);
  if (fl.linear) {
    Value l = in.eval(*fl.linear, f);
    operand(kX, fl.x);
    const ModelRef& m = *l.as<ModelRef>();
    put(kW, Value::tensor(in.read_param(m, "w", root.span)), nullptr);
    put(kB, Value::tensor(in.read_param(m, "b", root.span)), nullptr);
  } else {
    operand(kX, fl.x);
    operand(kW, fl.w);
    if (fl.scale)
      put(kScale,
          Value::floating(written_scale(in, fl.scale, fl.divides, f)),
          nullptr);
    if (fl.bias) operand(kB, fl.bias);
  }
  if (fl.residual && !fl.residual_first) operand(kResidual, fl.residual);
  if (fl.act != "none") put(kAct, Value::string(fl.act), nullptr);
  return call_builtin_prepared(c);
}

}  // namespace

Value Interpreter::eval_call(const ast::Expr& e, Frame& f) {
  if (const check::FusedAttention* fa = prog_.fused(&e))
    return call_fused(*this, *fa, e, f);
  if (const check::FusedLayer* fl = prog_.fused_layer(&e))
    return call_fused_layer(*this, *fl, e, f);
  const check::ExprInfo* info = prog_.info(&e);
  if (!info) fail("ValueError", e.span, "this call was not checked");
  const ast::Expr* receiver = nullptr;
  if (e.callee && e.callee->kind == EK::Field) receiver = e.callee->lhs.get();
  const check::Resolution& r = info->resolution;
  if (r.kind == check::Resolution::Kind::Fn && r.fn) {
    std::vector<Value> slots(r.fn->params.size());
    // The arguments' checked types, for the device hooks (bind_call).
    std::vector<types::Type> types(hooks_ ? slots.size() : 0);
    std::vector<const ast::Expr*> given;
    if (receiver) given.push_back(receiver);
    for (const ast::Arg& a : e.args) given.push_back(a.value.get());
    for (size_t g = 0; g < given.size(); ++g) {
      int k = g < info->arg_params.size() ? info->arg_params[g] : -1;
      if (k < 0) continue;
      const check::ParamInfo& p = r.fn->params[k];
      if (p.type.kind == TK::AxisArg) {
        slots[k] = Value::type_value(prog_.type_of(given[g]));
        slots[k].kind = VK::Axis;
      } else {
        slots[k] = eval(*given[g], f);
        if (hooks_) types[k] = prog_.type_of(given[g]);
      }
    }
    // A call through remat(f), directly or a local bound to it.
    bool remat = false;
    if (e.callee && e.callee->kind == EK::Name) {
      if (const Value* v = f.find(e.callee->name); v && v->kind == VK::Fn)
        remat = v->b;
    } else if (e.callee && e.callee->kind == EK::Call) {
      Value v = eval(*e.callee, f);
      remat = v.kind == VK::Fn && v.b;
    }
    const std::vector<types::Type>* arg_types = hooks_ ? &types : nullptr;
    if (remat)
      return call_remat(*this, *r.fn, std::move(slots), e.span, arg_types);
    return call(*r.fn, std::move(slots), e.span, arg_types);
  }
  if (r.kind == check::Resolution::Kind::Builtin && r.op)
    return call_builtin(*r.op, e, receiver, f);
  fail("ValueError", e.span, "cannot call this");
}

}  // namespace ss::eval
