// Frames, calls of user fns, and statements.
#include "interp/eval/interpreter.h"

#include <algorithm>
#include <ostream>
#include <stdexcept>

#include "interp/eval/autocast.h"
#include "interp/eval/device_hooks.h"
#include "interp/eval/remat.h"
#include "interp/eval/runtime_table.h"
#include "interp/parse/ast_walk.h"
#include "ops/api.h"
#include "ops/core/op_error.h"

namespace ss::eval {

using EK = ast::Expr::Kind;
using SK = ast::Stmt::Kind;
using VK = Value::Kind;

namespace {

// The checker's placement (language.md: computed on any device list).
bool on_workers(const check::FnInfo& fn) {
  return fn.placement == check::FnInfo::Placement::Workers;
}

}  // namespace

bool enters_workers(Interpreter& in, const check::FnInfo& fn) {
  const Frame* caller = in.current_frame();
  return on_workers(fn) && (!caller || !on_workers(*caller->fn));
}

Value* Frame::find(const std::string& name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto v = it->find(name);
    if (v != it->end()) return &v->second;
  }
  return nullptr;
}

void Frame::declare(const std::string& name, Value v) {
  scopes.back()[name] = std::move(v);
}

Interpreter::Interpreter(const check::Program& prog,
                         const diag::SourceMap& sm,
                         std::ostream& out)
    : prog_(prog), sm_(sm), out_(out) {
  // Note [The runtime table]: a build that forgot builtins::install()
  // fails here, before any program runs, not at a builtin's first call.
  if (!runtime_sealed())
    throw std::logic_error(
        "the runtime builtins are not installed: call "
        "ss::builtins::install() at start-up (Note [The runtime table])");
}

Interpreter::~Interpreter() = default;

void Interpreter::fail(const std::string& kind,
                       diag::Span span,
                       const std::string& message,
                       std::vector<std::string> notes) {
  // A worker call still running came first: its error, if it has one,
  // is the program's.
  settle();
  RuntimeError e(kind, message, span);
  e.stack() = stack_;
  e.notes() = std::move(notes);
  throw e;
}

void Interpreter::settle() {
  if (hooks_) hooks_->settle();
}

Value Interpreter::run_main(const std::vector<std::string>& args,
                            const std::string& entry) {
  const check::FnInfo* fn = prog_.fn(entry);
  if (!fn) {
    RuntimeError e("ValueError", "the program has no fn `" + entry + "`", {});
    throw e;
  }
  std::vector<Value> vals;
  if (!fn->params.empty()) {
    std::vector<Value> strs;
    for (const std::string& a : args) strs.push_back(Value::string(a));
    vals.push_back(Value::list(std::move(strs)));
  }
  // The entry has no call site: its stack line names it alone.
  return call(*fn, std::move(vals), diag::Span{UINT32_MAX, 0, 0});
}

int64_t split_blocks(const types::Axis& a,
                     const std::vector<check::MeshAxis>& mesh) {
  return check::mesh_ways(mesh, a.split.axes);
}

namespace {

// Binds the size variables of [t] (a param type) to [v]'s runtime sizes.
// Returns a message when a variable meets two sizes (data-dependent sizes
// are checked at the call: language.md, Shape rules). With `split H` on a
// rank, axis [heads] of a tensor holds one of [blocks] blocks of heads
// (a ParamShare: DeviceHooks::bind_call).
std::string bind_sizes(const types::Type& t,
                       const Value& v,
                       std::map<uint32_t, int64_t>& sizes,
                       const std::vector<check::MeshAxis>& mesh,
                       int heads = -1,
                       int64_t blocks = 1) {
  auto bind = [&](const types::Axis& a, int64_t n) -> std::string {
    // A block of an axis split over mesh axes (an spmd fn's parameter,
    // `A/x`): A is the whole axis, |x| blocks of this one.
    n *= split_blocks(a, mesh);
    if (a.kind == types::Axis::Kind::Var) {
      auto [it, fresh] = sizes.emplace(a.var, n);
      if (!fresh && it->second != n)
        return "size variable `" + a.name + "` is " +
               std::to_string(it->second) + " and " + std::to_string(n) +
               " in one call";
    } else if (auto s = a.whole_size(); s && *s != n) {
      return "axis " + a.str() + " should be " + std::to_string(*s) +
             ", the value has " + std::to_string(n);
    }
    return "";
  };
  if (t.kind == types::Type::Kind::Tensor && v.kind == VK::Tensor &&
      t.shape.size() == v.t.rank()) {
    for (size_t i = 0; i < t.shape.size(); ++i) {
      const int64_t n = v.t.shape()[i] * (int(i) == heads ? blocks : 1);
      std::string e = bind(t.shape[i], n);
      if (!e.empty()) return e;
    }
  } else if (t.kind == types::Type::Kind::Batch && v.kind == VK::Record) {
    auto* r = v.as<RecordValue>();
    if (r->lazy && !t.shape.empty()) return bind(t.shape[0], r->lazy->size());
    if (!r->fields.empty() && !t.shape.empty())
      return bind(t.shape[0], r->fields.begin()->second.shape()[0]);
  } else if (t.kind == types::Type::Kind::Tuple && v.kind == VK::Tuple) {
    for (size_t i = 0; i < t.elems.size() && i < v.items->size(); ++i) {
      std::string e = bind_sizes(t.elems[i], (*v.items)[i], sizes, mesh);
      if (!e.empty()) return e;
    }
  }
  return "";
}

}  // namespace

Value Interpreter::call(const check::FnInfo& fn,
                        std::vector<Value> args,
                        diag::Span site,
                        const std::vector<types::Type>* arg_types) {
  if (fn.decl->is_extern) return call_extern(fn, std::move(args), site);
  // Note [Spmd calls]: an spmd fn called from ordinary code runs once per
  // instance, each on its block of every split argument (spmd.md), and the
  // instances' results are joined (interp/eval/spmd/spmd_call.cpp). Called
  // inside an instance it is inlined: its body runs here, on the blocks it
  // is given.
  if (fn.decl->is_spmd && !mesh_) return call_spmd(fn, std::move(args), site);
  // On several devices the call may run elsewhere, or on this rank's share
  // of the batch (Note [Device hooks]).
  if (hooks_)
    if (std::optional<Value> r = hooks_->call(*this, fn, args, site)) return *r;
  Frame f;
  f.fn = &fn;
  f.scopes.emplace_back();
  // How each parameter holds its value here (a device mode's share).
  std::vector<ParamShare> shares;
  if (hooks_) hooks_->bind_call(*this, fn, f, site, arg_types, false, shares);
  if (++depth_ > 2000) {
    --depth_;
    fail(
        "ValueError", site, "recursion too deep (more than 2000 nested calls)");
  }
  for (size_t i = 0; i < fn.params.size(); ++i) {
    Value v;
    if (i < args.size() && args[i].kind != VK::Unit) {
      v = std::move(args[i]);
    } else if (fn.params[i].decl && fn.params[i].decl->default_value) {
      v = eval(*fn.params[i].decl->default_value, f);
    }
    // Note [Autocast]: an autocast instance takes its declared dtypes.
    if (fn.autocast) v = as_declared(std::move(v), fn.params[i].type);
    const ParamShare share = i < shares.size() ? shares[i] : ParamShare{};
    std::string bad = bind_sizes(
        fn.params[i].type, v, f.sizes, prog_.mesh(), share.axis, share.parts);
    if (!bad.empty()) {
      --depth_;
      fail("ShapeError",
           site,
           "argument `" + fn.params[i].name + "` of `" + fn.name +
               "` does not fit " + fn.params[i].type.str() + ": " + bad);
    }
    f.declare(fn.params[i].name, std::move(v));
  }
  // A Train mode entering device work from the controller starts a new
  // entry: its dropout draws are keyed by that count (language.md).
  if (enters_workers(*this, fn))
    for (const check::ParamInfo& p : fn.params)
      if (Value* v = f.find(p.name); v && v->kind == VK::Mode) {
        auto* m = v->as<ModeState>();
        ++m->calls;
        m->draws = 0;
      }
  frames_.push_back(&f);
  stack_.push_back({fn.name, site});
  struct Pop {
    Interpreter* in;
    ~Pop() {
      in->frames_.pop_back();
      in->stack_.pop_back();
      --in->depth_;
    }
  } pop{this};
  Value ret;
  if (fn.decl->expr_body)
    ret = eval(*fn.decl->expr_body, f);
  else
    exec_block(fn.decl->body, f, ret);
  return fn.autocast ? as_declared(std::move(ret), fn.result) : ret;
}

namespace {

// Note [Dtype variables] (interp/check/generics.cpp): a generic fn passed
// as a value (`value_and_grad(loss, m, x)`) runs the instance that its
// arguments' dtypes bind, as a direct call's checked resolution does.
std::vector<types::DType> dtypes_bound(const check::FnInfo& f,
                                       const std::vector<Value>& args) {
  std::vector<types::DType> bound;
  for (const std::string& v : f.dtype_vars) {
    types::DType d = types::DType::F32;
    for (size_t k = 0; k < args.size() && k < f.param_dtype_var.size(); ++k) {
      if (f.param_dtype_var[k] != v) continue;
      const Value& a = args[k];
      if (a.kind == Value::Kind::Tensor) d = a.t.dtype();
      if (a.kind == Value::Kind::Model || a.kind == Value::Kind::Grads)
        d = a.as<ModelRef>()->type.model_dtype;
      break;
    }
    bound.push_back(d);
  }
  return bound;
}

}  // namespace

Value Interpreter::call_value(const Value& fn,
                              std::vector<Value> args,
                              diag::Span site,
                              const std::vector<types::Type>* arg_types) {
  if (const check::FnInfo* f = prog_.fn(fn.s)) {
    std::vector<types::DType> bound = dtypes_bound(*f, args);
    f = check::instance_for(prog_, *f, bound);
    if (!f)
      fail("ValueError",
           site,
           "`" + fn.s + "` has no instance for dtypes " +
               check::instance_key(bound) +
               ": its dtype variables stand for float dtypes");
    if (!fn.b) return call(*f, std::move(args), site, arg_types);
    return call_remat(*this, *f, std::move(args), site, arg_types);
  }
  return call_builtin_values(fn.s, std::move(args), site);
}

Interpreter::Flow Interpreter::exec_block(const ast::Block& b,
                                          Frame& f,
                                          Value& ret) {
  f.scopes.emplace_back();
  Flow flow = Flow::Normal;
  for (const ast::StmtPtr& s : b) {
    try {
      flow = exec(*s, f, ret);
    } catch (const ops::OpError& e) {
      // An op's error that no builtin call caught (a tensor too large to
      // allocate while a model is made, say): at the statement's line.
      fail(e.kind() == ops::OpError::Kind::Shape ? "ShapeError" : "ValueError",
           s->span,
           e.what());
    }
    if (flow != Flow::Normal) break;
  }
  if (hooks_ && frames_.size() == 1 && &f == frames_.front() &&
      &b == &f.fn->decl->body)
    hooks_->entry_done(f);
  f.scopes.pop_back();
  return flow;
}

std::vector<Value> iterate(Interpreter& in, const Value& it, diag::Span at) {
  switch (it.kind) {
    case VK::List:
    case VK::Tuple:
      return *it.items;
    case VK::Model: {
      // `for blk in m.blocks`: one handle per stacked sub-model.
      std::vector<Value> out;
      for (auto& r : it.as<ModelRef>()->stack_items())
        out.push_back(Value::object(VK::Model, std::move(r)));
      return out;
    }
    case VK::Tensor: {
      std::vector<Value> out;
      if (it.t.rank() == 0) break;
      for (int64_t i = 0; i < it.t.shape()[0]; ++i)
        out.push_back(Value::tensor(ops::take_one(it.t, i, 0)));
      return out;
    }
    default:
      break;
  }
  in.fail("ValueError", at, "cannot loop over this value");
}

void Interpreter::bind(const std::vector<ast::NameTarget>& targets,
                       Value v,
                       Frame& f,
                       diag::Span at) {
  if (targets.size() == 1) {
    f.declare(targets[0].name, std::move(v));
    return;
  }
  if ((v.kind != VK::Tuple && v.kind != VK::List) ||
      v.items->size() != targets.size())
    fail("ValueError",
         at,
         "cannot unpack this value into " + std::to_string(targets.size()) +
             " names");
  for (size_t i = 0; i < targets.size(); ++i)
    f.declare(targets[i].name, (*v.items)[i]);
}

void Interpreter::assign(const ast::Expr& target, Value v, Frame& f) {
  if (target.kind == EK::Name) {
    Value* slot = f.find(target.name);
    if (!slot)
      fail("ValueError", target.span, "`" + target.name + "` is not declared");
    *slot = std::move(v);
    return;
  }
  if (target.kind == EK::Field) {
    Value base = eval(*target.lhs, f);
    if (base.kind != VK::Model)
      fail("ValueError", target.span, "only a model's fields can be assigned");
    auto* m = base.as<ModelRef>();
    if (v.kind != VK::Tensor)
      fail("ValueError", target.span, "a model field takes a tensor");
    // The field's whole shape, also where this rank holds a piece of it.
    const ops::Shape want = m->shape_of(target.name);
    if (want != v.t.shape())
      fail("ShapeError",
           target.span,
           "field `" + target.name + "` is " + ops::shape_string(want) +
               ", the new value " + ops::shape_string(v.t.shape()));
    ops::Tensor value = ops::stop_grad(v.t);
    OpSite s(OpSite::Kind::ParamWrite, *this, target.span, [&] {
      m->set(target.name, value);
      return Value::unit();
    });
    s.model = m;
    s.path = target.name;
    s.operands.push_back(&value);
    run_op(s);
    return;
  }
  fail("ValueError", target.span, "cannot assign to this expression");
}

Value Interpreter::exec_in(const ast::Block& stmts, Frame& f) {
  frames_.push_back(&f);
  struct Pop {
    Interpreter* in;
    ~Pop() { in->frames_.pop_back(); }
  } pop{this};
  Value last;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const ast::Stmt& s = *stmts[i];
    if (i + 1 == stmts.size() && s.kind == ast::Stmt::Kind::Expr) {
      last = eval(*s.value, f);
      break;
    }
    Value ret;
    if (exec(s, f, ret) == Flow::Return) return ret;
  }
  return last;
}

Interpreter::Flow Interpreter::exec(const ast::Stmt& s, Frame& f, Value& ret) {
  if (poll_) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_poll_) {
      next_poll_ = now + std::chrono::milliseconds(50);
      poll_();
    }
  }
  if (interrupt_ && *interrupt_) {
    *interrupt_ = 0;
    fail("KeyboardInterrupt", s.span, "interrupted");
  }
  switch (s.kind) {
    case SK::Let:
      // A fused attention's scores or probabilities: nothing reads them
      // (Note [The attention written out] in interp/check/fusion.cpp).
      if (prog_.deferred(&s)) return Flow::Normal;
      bind(s.targets, eval(*s.value, f), f, s.span);
      return Flow::Normal;
    case SK::Assign: {
      Value v = eval(*s.value, f);
      if (s.target->kind != ast::Expr::Kind::Tuple) {
        assign(*s.target, std::move(v), f);
        return Flow::Normal;
      }
      // `h, c = cell(x, h, c)`: the checker proved a tuple of as many.
      const auto places = ast::assigned_places(s);
      if ((v.kind != VK::Tuple && v.kind != VK::List) ||
          v.items->size() != places.size())
        fail("ValueError",
             s.span,
             "this assigns " + std::to_string(places.size()) +
                 " values, but the value is not a tuple of as many");
      for (size_t i = 0; i < places.size(); ++i)
        if (!(places[i]->kind == ast::Expr::Kind::Name &&
              places[i]->name == "_"))
          assign(*places[i], (*v.items)[i], f);
      return Flow::Normal;
    }
    case SK::AugAssign: {
      Value cur = eval(*s.target, f);
      Value rhs = eval(*s.value, f);
      assign(*s.target, binary(s.aug_op, cur, rhs, s.span), f);
      return Flow::Normal;
    }
    case SK::If:
      for (const ast::IfBranch& br : s.branches) {
        if (!br.cond || condition(*this, *br.cond, f))
          return exec_block(br.body, f, ret);
      }
      return Flow::Normal;
    case SK::For: {
      // Note [A loop walks a range]
      // `for i in range(10000000): ... break` made the whole list of ten
      // million values before its first step (24 s and 3.4 GB, issue 32
      // item 4). A builtin whose runtime has a Walked overload gives a
      // `for` header an IterableObject instead, which counts as the loop
      // asks; anywhere else (`let r = range(n)`, a comprehension, len) it
      // is the list it always was.
      if (s.iter->kind == EK::Call)
        if (const check::ExprInfo* i = prog_.info(s.iter.get());
            i && i->resolution.kind == check::Resolution::Kind::Builtin &&
            i->resolution.op && runtime_of(*i->resolution.op, Overload::Walked))
          walked_call_ = s.iter.get();
      Value it = eval(*s.iter, f);
      walked_call_ = nullptr;
      auto body = [&](Value v) {
        f.scopes.emplace_back();
        bind(s.targets, std::move(v), f, s.span);
        Flow flow = exec_block(s.body, f, ret);
        f.scopes.pop_back();
        return flow;
      };
      if (auto* lazy = dynamic_cast<IterableObject*>(it.obj.get())) {
        // The loop's header (`for x in it`): where a streamed dataset's
        // bad item, found as its batch loads, is raised.
        auto cur = lazy->cursor(
            *this,
            diag::Span{s.span.file,
                       s.span.begin,
                       s.iter->span.end > s.span.begin ? s.iter->span.end
                                                       : s.span.begin});
        Value v;
        while (cur->next(v)) {
          Flow flow = body(std::move(v));
          if (flow == Flow::Break || flow == Flow::Return) {
            // Before the cursor goes: a progress bar's summary reads the
            // last logs written (async_dispatch.cpp).
            settle();
            return flow == Flow::Break ? Flow::Normal : flow;
          }
        }
        return Flow::Normal;
      }
      for (Value& v : iterate(*this, it, s.iter->span)) {
        Flow flow = body(std::move(v));
        if (flow == Flow::Break) break;
        if (flow == Flow::Return) return flow;
      }
      return Flow::Normal;
    }
    case SK::While:
      while (condition(*this, *s.cond, f)) {
        Flow flow = exec_block(s.body, f, ret);
        if (flow == Flow::Break) break;
        if (flow == Flow::Return) return flow;
      }
      return Flow::Normal;
    case SK::Break:
      return Flow::Break;
    case SK::Continue:
      return Flow::Continue;
    case SK::Return:
      ret = s.value ? eval(*s.value, f) : Value::unit();
      return Flow::Return;
    case SK::Expr:
      if (!hooks_ || !hooks_->dispatch_later(*this, *s.value, f))
        eval(*s.value, f);
      return Flow::Normal;
  }
  return Flow::Normal;
}

bool condition(Interpreter& in, const ast::Expr& e, Frame& f) {
  Value v = in.eval(e, f);
  if (v.kind == VK::Tensor && v.t.numel() != 1)
    in.fail("ValueError", e.span, "a condition must be a single value");
  return v.truthy();
}

}  // namespace ss::eval
