// `split H` as an implementation of the op-site hook (heads_sites.h): each
// kind of op site becomes a check::HeadsSite, the types of its tensor
// operands and result as written, which run_heads (heads.cpp) plans.
#include "interp/devices/lower/heads_sites.h"

#include <stdexcept>

#include "interp/devices/lower/heads.h"
#include "interp/devices/lower/lowering.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_lib.h"
#include "ops/registry/registry.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;

using eval::OpSite;
using eval::Value;
using Heads = ops::DeviceRule::Heads;

// Note [Size variables carry the split]
// A value's layout under `split H` follows from its type (Note [Split
// heads]), but a fn checked once for every call names its axes by size
// variables: `fn attend(q: [b h n d])` given q: [b H n Dh], split along H,
// would see in its body a type with no H and take the worker's heads for
// the whole value (a sum over h covering 1/N of them, with no error). So
// a call records, per size variable bound to an axis of an argument's type
// that has H (`h` -> H, `m` -> (H Dh), `g` -> (3 H Dh)), that axis
// (Frame::split_vars), and the plan of every op in the body reads its
// types with them put in: the body runs as if typed with H, and a value
// with H after another axis of a group stays whole, as it does there. The
// axis is pinned to dims and literals (the caller's other size variables
// by their sizes), so it means the same in the callee's frame; its size is
// read through it (Interpreter::axis_size), so the variable counts the
// local heads while an op runs on them. The binding and the types with it
// put in are check::bind_heads_vars and put_heads_vars (heads_plan.h),
// which `ss explain` walks a fn's body with too, as the first call it
// finds binds them (explain.cpp).
types::Type HeadsSplit::in_frame(eval::Interpreter& in,
                                 const types::Type& t,
                                 bool pin) const {
  const eval::Frame* f = in.current_frame();
  if (!f) return t;
  return check::put_heads_vars(t, f->split_vars, pin ? &f->sizes : nullptr);
}

void HeadsSplit::bind_call(eval::Interpreter& in,
                           const check::FnInfo& fn,
                           eval::Frame& callee,
                           diag::Span site,
                           const std::vector<types::Type>* arg_types,
                           bool remat,
                           std::vector<eval::ParamShare>& shares) {
  const std::string& dim = in.program().devices().split_dim;
  const int64_t parts = int64_t(in.program().devices().count());
  shares.assign(fn.params.size(), eval::ParamShare{});
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const types::Type& param = fn.params[i].type;
    if (arg_types && i < arg_types->size()) {
      // The caller's frame is still the running one: its types pinned.
      const types::Type arg = in_frame(in, (*arg_types)[i], /*pin=*/true);
      const size_t before = callee.split_vars.size();
      check::bind_heads_vars(param, arg, dim, callee.split_vars);
      // The backward pass runs a remat fn again from its values alone
      // (remat.cpp): with no types there to carry the split, it would
      // take the heads for the whole value, so the call is refused
      // rather than run wrong.
      if (remat && callee.split_vars.size() != before)
        in.fail("ValueError",
                site,
                "argument `" + fn.params[i].name + "` of remat(" + fn.name +
                    ") is split along " + dim + ", and `" + fn.name +
                    "` types it " + param.str() + " with a size variable for " +
                    dim + ": remat cannot carry the split",
                {"help: name the heads axis of `" + fn.params[i].name +
                 "` by the dim " + dim + ", or call `" + fn.name +
                 "` without remat"});
    }
    const types::Type held =
        check::put_heads_vars(param, callee.split_vars, nullptr);
    shares[i] = {check::heads_axis(held, dim), parts};
  }
}

std::optional<Value> HeadsSplit::planned(eval::Interpreter& in,
                                         check::HeadsSite site,
                                         std::vector<ops::Tensor*> operands,
                                         const std::function<Value()>& run,
                                         diag::Span at) {
  // Note [Size variables carry the split]: in a fn typed by them.
  if (const eval::Frame* f = in.current_frame(); f && !f->split_vars.empty()) {
    for (types::Type& t : site.operands) t = in_frame(in, t, false);
    site.result = in_frame(in, site.result, false);
  }
  return run_heads(
      in, site, operands, run, at, d_, d_.deterministic ? &pieces_ : nullptr);
}

std::optional<Value> HeadsSplit::run_op(OpSite& s) {
  switch (s.kind) {
    case OpSite::Kind::Builtin:
      return builtin(s);
    case OpSite::Kind::Operator:
      // The operator's entry says (elementwise per head; `@` per head, or
      // a partial sum over them), as a pattern's does.
    case OpSite::Kind::Pattern:
      return operands_of_expr(s, s.op->device.heads);
    case OpSite::Kind::Part:
      return part(s);
    case OpSite::Kind::ParamRead:
      return whole_params_ ? gather_param(s) : read_param(s);
    case OpSite::Kind::ParamWrite:
      // This rank's heads of a param split by heads are what its store
      // holds and what the program computed from them: written as they
      // are (shard params' pieces: RankContext::write_param).
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Value> HeadsSplit::operands_of_expr(OpSite& s, Heads rule) {
  const check::Program& prog = s.in.program();
  check::HeadsSite site;
  site.rule = rule;
  site.result = prog.type_of(s.expr);
  for (const ast::Expr* x : s.operand_exprs)
    site.operands.push_back(prog.type_of(x));
  return planned(s.in, std::move(site), s.operands, s.run, s.at);
}

std::optional<Value> HeadsSplit::builtin(OpSite& s) {
  eval::BuiltinCall& c = *s.call;
  // Run in parts: each part is planned as it comes (part).
  if (c.op.device.heads_parts) return std::nullopt;
  check::HeadsSite site;
  site.rule = c.op.device.heads;
  site.result = c.result_type();
  std::vector<ops::Tensor*> operands;
  bool over_given = false;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (i < c.op.params.size() &&
        (c.op.params[i].kind == ops::ParamKind::Axes ||
         c.op.params[i].kind == ops::ParamKind::Axis) &&
        c.has(i))
      over_given = true;
    if (!c.has(i) || c.args[i].kind != Value::Kind::Tensor) continue;
    operands.push_back(&c.args[i].t);
    site.operands.push_back(c.arg_type(i));
  }
  if (c.info)
    for (const auto& [param, axes] : c.info->axes)
      site.over.insert(site.over.end(), axes.begin(), axes.end());
  site.reduces_all =
      !over_given && c.op.device.across == ops::Across::Reduction;
  // A tensor op given a model (linear(m.l1, x)) reads its params itself:
  // it runs whole, on them gathered (gather_param), and on its other split
  // operands gathered.
  bool reads_model = false;
  for (size_t i = 0; i < c.args.size(); ++i)
    reads_model |= c.has(i) && c.args[i].kind == Value::Kind::Model;
  if (!c.op.forward) reads_model = false;
  if (reads_model) site.rule = Heads::Gathers;
  struct WholeParams {
    bool& flag;
    bool was;
    ~WholeParams() { flag = was; }
  } whole{whole_params_, whole_params_};
  whole_params_ = whole_params_ || reads_model;
  return planned(s.in, std::move(site), operands, s.run, s.at);
}

std::optional<Value> HeadsSplit::part(OpSite& s) {
  eval::BuiltinCall& c = *s.call;
  if (!c.op.device.heads_parts) return std::nullopt;
  std::vector<types::Type> arg_types;
  for (size_t i = 0; i < c.op.params.size(); ++i)
    arg_types.push_back(c.arg_type(i));
  std::vector<ops::HeadsPart> parts =
      c.op.device.heads_parts(arg_types, c.result_type());
  if (s.part >= parts.size() ||
      parts[s.part].operands.size() != s.operands.size())
    throw std::logic_error(std::string(c.op.name) + ": part " +
                           std::to_string(s.part) +
                           " is not in its heads_parts");
  check::HeadsSite site;
  site.rule = parts[s.part].rule;
  site.operands = std::move(parts[s.part].operands);
  site.result = std::move(parts[s.part].result);
  site.over = std::move(parts[s.part].over);
  return planned(s.in, std::move(site), s.operands, s.run, s.at);
}

std::optional<Value> HeadsSplit::gather_param(OpSite& s) {
  const eval::ModelRef& m = *s.model;
  const std::string full = m.prefix + s.path;
  auto h = m.store->heads.find(full);
  if (h == m.store->heads.end()) return std::nullopt;
  // The param as an operand split along its axis, gathered (its VJP
  // takes this rank's block), and nothing cut from the result.
  ops::Tensor t = m.get(s.path);
  types::Type split;
  split.kind = types::Type::Kind::Tensor;
  split.shape.assign(t.rank(), types::Axis::lit(1));
  split.shape[h->second - m.index.size()] =
      types::Axis::dim(s.in.program().devices().split_dim, -1);
  check::HeadsSite site;
  site.operands = {split};
  site.result.kind = types::Type::Kind::Unit;
  return planned(
      s.in, std::move(site), {&t}, [&] { return Value::tensor(t); }, s.at);
}

std::optional<Value> HeadsSplit::read_param(OpSite& s) {
  const eval::ModelRef& m = *s.model;
  if (m.store->heads.count(m.prefix + s.path)) return std::nullopt;  // ours
  types::Type t = m.type;
  const std::string& path = s.path;
  for (size_t start = 0; t.model && start <= path.size();) {
    size_t dot = std::min(path.find('.', start), path.size());
    const types::FieldInfo* fi =
        t.model->field(path.substr(start, dot - start));
    if (!fi) return std::nullopt;
    t = types::model_field_type(t, *fi);
    start = dot + 1;
  }
  if (t.kind != types::Type::Kind::Tensor) return std::nullopt;
  check::HeadsSite site;
  site.result = t;
  return planned(s.in, std::move(site), {}, s.run, s.at);
}

}  // namespace ss::devices::lower
