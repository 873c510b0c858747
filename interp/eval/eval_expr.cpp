// Expressions: names, literals, operators, fields, indexing.
#include <cmath>
#include <limits>
#include <optional>

#include "interp/check/operators.h"
#include "interp/eval/autocast.h"
#include "interp/eval/format.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/step_recording.h"
#include "interp/eval/tensor_values.h"
#include "ops/api.h"
#include "ops/registry/run_on_tensors.h"

namespace ss::eval {

using EK = ast::Expr::Kind;
using VK = Value::Kind;
using TK = types::Type::Kind;
using B = ast::BinaryOp;

Value Interpreter::eval(const ast::Expr& e, Frame& f) {
  switch (e.kind) {
    case EK::Name:
      return eval_name(e, f);
    case EK::Int:
      return Value::integer(e.int_value);
    case EK::Float:
      return Value::floating(e.float_value);
    case EK::String:
      return Value::string(e.name);
    case EK::Bool:
      return Value::boolean(e.bool_value);
    case EK::FString:
      return eval_fstring(*this, e, f);
    case EK::List:
    case EK::Tuple: {
      std::vector<Value> items;
      items.reserve(e.elems.size());
      for (const auto& x : e.elems) items.push_back(eval(*x, f));
      return e.kind == EK::List ? Value::list(std::move(items))
                                : Value::tuple(std::move(items));
    }
    case EK::Comprehension: {
      Value it = eval(*e.iter, f);
      std::vector<Value> out;
      for (Value& v : iterate(*this, it, e.iter->span)) {
        f.scopes.emplace_back();
        if (e.targets.size() == 1) {
          f.declare(e.targets[0], std::move(v));
        } else {
          std::vector<ast::NameTarget> ts;
          for (const auto& n : e.targets) ts.push_back({e.span, n});
          bind(ts, std::move(v), f, e.span);
        }
        if (!e.cond || condition(*this, *e.cond, f))
          out.push_back(eval(*e.elem, f));
        f.scopes.pop_back();
      }
      return Value::list(std::move(out));
    }
    case EK::Unary:
      return eval_unary(e, f);
    case EK::Binary:
      return eval_binary(e, f);
    case EK::Call:
      return eval_call(e, f);
    case EK::Field:
      return eval_field(e, f);
    case EK::Index:
      return eval_index(e, f);
    case EK::TypeLit: {
      const types::Type& t = prog_.type_of(&e);
      if (t.kind == TK::TypeValue && !t.elems.empty())
        return Value::type_value(t.elems[0]);
      return Value::unit();
    }
    case EK::AxisRef:
      break;
  }
  fail("ValueError", e.span, "this expression has no value");
}

Value Interpreter::eval_name(const ast::Expr& e, Frame& f) {
  const check::ExprInfo* info = prog_.info(&e);
  using RK = check::Resolution::Kind;
  RK kind = info ? info->resolution.kind : RK::Local;
  switch (kind) {
    case RK::Local:
    case RK::None:
      if (Value* v = f.find(e.name)) return *v;
      break;
    case RK::Dim:
      return Value::integer(prog_.dims().at(e.name));
    case RK::Fn:
    case RK::Builtin:
      return Value::fn(e.name);
    case RK::Model:
    case RK::Record:
      if (info->type.kind == TK::TypeValue && !info->type.elems.empty())
        return Value::type_value(info->type.elems[0]);
      break;
    case RK::Constant: {
      auto m = std::make_shared<ModeState>();
      m->train = false;
      return Value::object(VK::Mode, m);
    }
  }
  if (info && info->type.kind == TK::TypeValue && !info->type.elems.empty())
    return Value::type_value(info->type.elems[0]);
  fail("ValueError", e.span, "`" + e.name + "` has no value here");
}

Value Interpreter::eval_unary(const ast::Expr& e, Frame& f) {
  Value a = eval(*e.lhs, f);
  const ops::OpDef* op = check::operator_def(e.unary_op);  // null for `+`
  switch (e.unary_op) {
    case ast::UnaryOp::Plus:
      return a;
    case ast::UnaryOp::Neg:
      if (a.kind == VK::Int) {
        if (a.i == std::numeric_limits<int64_t>::min())
          fail("ValueError",
               e.span,
               "integer overflow: -(" + std::to_string(a.i) +
                   ") does not fit in 64 bits");
        return Value::integer(-a.i);
      }
      if (a.kind == VK::Float) return Value::floating(-a.f);
      if (a.kind == VK::Bool) return Value::integer(a.b ? -1 : 0);
      if (a.kind == VK::Tensor)
        return Value::tensor(ops::run_on_tensors(*op, {a.t}));
      if (a.kind == VK::Grads)
        return grads_map(a, [&](const ops::Tensor& t) {
          return ops::run_on_tensors(*op, {t});
        });
      break;
    case ast::UnaryOp::Not:
      if (a.kind == VK::Tensor)
        return Value::tensor(ops::run_on_tensors(*op, {a.t}));
      return Value::boolean(!a.truthy());
  }
  fail("ValueError", e.span, "bad operand");
}

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Comparisons and logic on two host numbers of one kind (ints compared as
// ints, floats as floats); nullopt for the arithmetic operators.
template <class T>
std::optional<Value> compare(B op, T x, T y) {
  switch (op) {
    case B::Eq:
      return Value::boolean(x == y);
    case B::Ne:
      return Value::boolean(x != y);
    case B::Lt:
      return Value::boolean(x < y);
    case B::Le:
      return Value::boolean(x <= y);
    case B::Gt:
      return Value::boolean(x > y);
    case B::Ge:
      return Value::boolean(x >= y);
    case B::And:
      return Value::boolean(x != 0 && y != 0);
    case B::Or:
      return Value::boolean(x != 0 || y != 0);
    default:
      return std::nullopt;
  }
}

// Note [Host ints are exact]: host ints are 64-bit integers, computed as
// integers (never through a double, which rounds past 2^53): an operation
// whose result does not fit is a ValueError at the line, as is a division
// by zero, rather than a wrapped value or a SIGFPE (INT64_MIN // -1).
// `/` and a negative power give floats, as in Python.
Value int_binary(Interpreter& in, B op, int64_t x, int64_t y, diag::Span at) {
  int64_t r = 0;
  auto overflow = [&](const char* what) {
    in.fail("ValueError",
            at,
            std::string("integer overflow: ") + std::to_string(x) + " " + what +
                " " + std::to_string(y) + " does not fit in 64 bits");
  };
  switch (op) {
    case B::Add:
      if (__builtin_add_overflow(x, y, &r)) overflow("+");
      return Value::integer(r);
    case B::Sub:
      if (__builtin_sub_overflow(x, y, &r)) overflow("-");
      return Value::integer(r);
    case B::Mul:
      if (__builtin_mul_overflow(x, y, &r)) overflow("*");
      return Value::integer(r);
    case B::Div:
      if (y == 0) in.fail("ValueError", at, "division by zero");
      return Value::floating(double(x) / double(y));
    case B::FloorDiv:
      if (y == 0) in.fail("ValueError", at, "division by zero");
      if (y == -1 && x == std::numeric_limits<int64_t>::min()) overflow("//");
      return Value::integer(floor_div(x, y));
    case B::Mod: {
      if (y == 0) in.fail("ValueError", at, "modulo by zero");
      if (y == -1) return Value::integer(0);  // INT64_MIN % -1 traps in C++
      r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value::integer(r);
    }
    case B::Pow: {
      if (y < 0) return Value::floating(std::pow(double(x), double(y)));
      int64_t base = x, acc = 1;
      for (int64_t e = y; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(acc, base, &acc)) overflow("**");
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) overflow("**");
      }
      return Value::integer(acc);
    }
    default:
      if (std::optional<Value> v = compare(op, x, y)) return *v;
      break;
  }
  in.fail("ValueError", at, "unsupported operation on numbers");
}

}  // namespace

Value Interpreter::binary(B op, const Value& a, const Value& b, diag::Span at) {
  // Host values.
  if (a.kind == VK::Str || b.kind == VK::Str) {
    if (op == B::Add) return Value::string(a.s + b.s);
    if (op == B::Eq) return Value::boolean(a.s == b.s);
    if (op == B::Ne) return Value::boolean(a.s != b.s);
    fail("ValueError", at, "unsupported string operation");
  }
  if (a.kind == VK::Grads || b.kind == VK::Grads || a.kind == VK::Model ||
      b.kind == VK::Model)
    return grads_binary(check::operator_def(op), a, b, at);
  if (a.is_number() && b.is_number()) {
    if (a.kind != VK::Float && b.kind != VK::Float)
      return int_binary(*this,
                        op,
                        a.kind == VK::Int ? a.i : int64_t(a.b),
                        b.kind == VK::Int ? b.i : int64_t(b.b),
                        at);
    double x = a.number(), y = b.number();
    switch (op) {
      case B::Add:
        return Value::floating(x + y);
      case B::Sub:
        return Value::floating(x - y);
      case B::Mul:
        return Value::floating(x * y);
      case B::Div:
        if (y == 0) fail("ValueError", at, "division by zero");
        return Value::floating(x / y);
      case B::FloorDiv:
        if (y == 0) fail("ValueError", at, "division by zero");
        return Value::floating(std::floor(x / y));
      case B::Mod:
        if (y == 0) fail("ValueError", at, "modulo by zero");
        return Value::floating(x - std::floor(x / y) * y);
      case B::Pow:
        return Value::floating(std::pow(x, y));
      default:
        if (std::optional<Value> v = compare(op, x, y)) return *v;
        break;
    }
    fail("ValueError", at, "unsupported operation on numbers");
  }
  if (a.kind != VK::Tensor && b.kind != VK::Tensor)
    fail("ValueError", at, "unsupported operands");
  ops::Tensor x = as_tensor(a, b), y = as_tensor(b, a);
  try {
    // The operator's table entry runs it (check/operators.h).
    return Value::tensor(ops::run_on_tensors(check::operator_def(op), {x, y}));
  } catch (const ops::OpError& err) {
    fail(err.kind() == ops::OpError::Kind::Shape ? "ShapeError" : "ValueError",
         at,
         err.what());
  }
}

Value Interpreter::eval_binary(const ast::Expr& e, Frame& f) {
  // A layer whose root is `+` (Note [Layers run as one product]).
  if (prog_.fused_layer(&e)) return eval_call(e, f);
  if (e.binary_op == B::And || e.binary_op == B::Or) {
    Value a = eval(*e.lhs, f);
    if (a.kind != VK::Tensor) {
      // Host `and`/`or` short-circuit, as in Python.
      bool t = a.truthy();
      if (e.binary_op == B::And && !t) return Value::boolean(false);
      if (e.binary_op == B::Or && t) return Value::boolean(true);
      Value b = eval(*e.rhs, f);
      if (b.kind != VK::Tensor) return Value::boolean(b.truthy());
      return binary(e.binary_op, a, b, e.span);
    }
    return binary(e.binary_op, a, eval(*e.rhs, f), e.span);
  }
  Value a = eval(*e.lhs, f);
  Value b = eval(*e.rhs, f);
  // Note [Autocast]: `a @ b` inside an autocast fn runs in its dtype.
  if (const check::ExprInfo* in = prog_.info(&e); in && in->autocast)
    for (Value* v : {&a, &b})
      if (v->kind == VK::Tensor) v->t = autocast_operand(v->t, in->autocast);
  if (hooks_ && (a.kind == VK::Tensor || b.kind == VK::Tensor)) {
    // An op site (Note [Op sites]) of the tensor sides.
    OpSite s(OpSite::Kind::Operator, *this, e.span, [&] {
      return binary(e.binary_op, a, b, e.span);
    });
    s.expr = &e;
    s.op = &check::operator_def(e.binary_op);
    const std::pair<Value*, const ast::Expr*> sides[] = {{&a, e.lhs.get()},
                                                         {&b, e.rhs.get()}};
    for (auto [v, x] : sides)
      if (v->kind == VK::Tensor) {
        s.operands.push_back(&v->t);
        s.operand_exprs.push_back(x);
      }
    return hooks_->run_op(s);
  }
  return binary(e.binary_op, a, b, e.span);
}

ops::Tensor Interpreter::read_param(const ModelRef& m,
                                    const std::string& path,
                                    diag::Span at) {
  if (!hooks_) return m.get(path);
  OpSite s(OpSite::Kind::ParamRead, *this, at, [&] {
    return Value::tensor(m.get(path));
  });
  s.model = &m;
  s.path = path;
  return hooks_->run_op(s).t;
}

Value Interpreter::eval_field(const ast::Expr& e, Frame& f) {
  Value base = eval(*e.lhs, f);
  switch (base.kind) {
    case VK::Record: {
      auto* r = base.as<RecordValue>();
      load_unloaded_batch(*this, *r);
      auto it = r->fields.find(e.name);
      if (it != r->fields.end()) return Value::tensor(it->second);
      break;
    }
    case VK::Model:
    case VK::Grads: {
      auto* m = base.as<ModelRef>();
      const types::FieldInfo* fi = m->type.model->field(e.name);
      if (!fi) break;
      if (fi->type.kind == TK::Model) {
        auto sub = std::make_shared<ModelRef>(*m);
        sub->prefix = m->prefix + e.name + ".";
        sub->type = types::model_field_type(m->type, *fi);
        if (base.kind == VK::Grads) sub->type.kind = TK::Grads;
        // Indices select within the parent's stack; a sub-model field of a
        // selected block keeps them.
        return Value::object(base.kind, sub);
      }
      return Value::tensor(read_param(*m, e.name, e.span));
    }
    case VK::Optim: {
      auto* o = base.as<OptimState>();
      sync(*o);
      // A replay would not read it again (Note [Recorded steps] in
      // interp/devices/recorded_calls.cpp).
      if (StepRecording* r = StepRecording::current())
        r->refuse("it reads opt." + e.name + ", which changes between steps");
      if (e.name == "step") return Value::integer(o->step);
      if (e.name == "lr") return Value::floating(o->lr);
      // scaler.get_scale(): 1 without a scaler (Note [Loss scaling]).
      if (e.name == "loss_scale")
        return Value::floating(o->loss_scale.enabled ? o->loss_scale.scale
                                                     : 1.0);
      break;
    }
    case VK::Logs: {
      if (const Value* v = base.as<LogsValue>()->find(e.name)) return *v;
      break;
    }
    default:
      break;
  }
  fail("ValueError", e.span, "no field `" + e.name + "` here");
}

Value Interpreter::eval_index(const ast::Expr& e, Frame& f) {
  Value base = eval(*e.lhs, f);
  auto index_of = [&](const ast::IndexItem& it) -> Value {
    return eval(*it.index, f);
  };
  switch (base.kind) {
    case VK::List:
    case VK::Tuple: {
      const ast::IndexItem& it = e.indices[0];
      int64_t n = static_cast<int64_t>(base.items->size());
      if (it.is_slice) {
        int64_t lo = it.lo ? int64_t(eval(*it.lo, f).number()) : 0;
        int64_t hi = it.hi ? int64_t(eval(*it.hi, f).number()) : n;
        if (lo < 0) lo += n;
        if (hi < 0) hi += n;
        lo = std::clamp<int64_t>(lo, 0, n);
        hi = std::clamp<int64_t>(hi, lo, n);
        return Value::list(
            {base.items->begin() + lo, base.items->begin() + hi});
      }
      int64_t i = int64_t(index_of(it).number());
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        fail("ValueError",
             it.span,
             "index " + std::to_string(i) + " is out of range for " +
                 std::to_string(n) + " items");
      return (*base.items)[i];
    }
    case VK::Model: {
      auto r = std::make_shared<ModelRef>(*base.as<ModelRef>());
      const int64_t n = r->stack_size();
      int64_t i = int64_t(index_of(e.indices[0]).number());
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        fail("ValueError",
             e.indices[0].span,
             "block " + std::to_string(i) + " is out of range: the stack has " +
                 std::to_string(n));
      r->index.push_back(i);
      if (!r->type.stack.empty()) r->type.stack.erase(r->type.stack.begin());
      return Value::object(VK::Model, r);
    }
    case VK::Tensor: {
      ops::Tensor t = base.t;
      int axis = 0;
      try {
        for (const ast::IndexItem& it : e.indices) {
          if (it.is_slice) {
            int64_t n = t.shape()[axis];
            int64_t lo = it.lo ? int64_t(eval(*it.lo, f).number()) : 0;
            int64_t hi = it.hi ? int64_t(eval(*it.hi, f).number()) : n;
            if (lo < 0) lo += n;
            if (hi < 0) hi += n;
            lo = std::clamp<int64_t>(lo, 0, n);
            hi = std::clamp<int64_t>(hi, lo, n);
            t = ops::slice(t, axis, lo, hi);
            ++axis;
            continue;
          }
          Value iv = index_of(it);
          if (iv.kind == VK::Tensor && iv.t.rank() > 0) {
            t = ops::take(t, iv.t, axis);
            axis += static_cast<int>(iv.t.rank());
          } else {
            t = ops::take_one(t, int64_t(iv.number()), axis);
          }
        }
      } catch (const ops::OpError& err) {
        fail(err.kind() == ops::OpError::Kind::Shape ? "ShapeError"
                                                     : "ValueError",
             e.span,
             err.what());
      }
      return Value::tensor(t);
    }
    default:
      break;
  }
  fail("ValueError", e.span, "cannot index this value");
}

}  // namespace ss::eval
