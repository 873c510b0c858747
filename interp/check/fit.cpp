// Does an argument fit a parameter type? Binds size variables per call.
#include "interp/check/checker_impl.h"

namespace ss::check {

using diag::Code;

namespace {

bool is_star(const Axis& a) {
  return a.kind == Axis::Kind::Var && !a.name.empty() && a.name[0] == '*';
}

// Why an axis did not fit.
struct Mismatch {
  enum class Kind { None, Axis, Rank, Conflict };
  Kind kind = Kind::None;
  Axis param, arg, earlier;
};

Axis bare(Axis a) {
  a.split.clear();
  a.label.clear();
  return a;
}

// Fits one axis, binding param variables to split-free axes. An argument
// axis split over mesh axes must be split as the parameter says (spmd fns
// calling spmd fns); a whole one fits any split (ordinary code passes whole
// values, which the call splits).
Mismatch fit_axis(const Axis& p, const Axis& a, Binding& b) {
  // Inlined, a parameter axis `A/x` needs an argument split over x: a
  // whole one is not a block (spmd.md).
  if (b.inlined && !p.split.empty() && a.split != p.split)
    return {Mismatch::Kind::Axis, p, a, {}};
  if (b.blocks && p.split.empty() && !a.split.empty()) {
    // A block: only a size variable takes it, as the block it is.
    if (p.kind != Axis::Kind::Var) return {Mismatch::Kind::Axis, p, a, {}};
    Axis blk = a;
    blk.label.clear();
    auto it = b.vars.find(p.var);
    if (it == b.vars.end()) {
      b.vars[p.var] = blk;
      return {};
    }
    if (it->second == blk) return {};
    return {Mismatch::Kind::Conflict, p, a, it->second};
  }
  if (!a.split.empty() && a.split != p.split)
    return {Mismatch::Kind::Axis, p, a, {}};
  if (p.kind == Axis::Kind::Var) {
    auto it = b.vars.find(p.var);
    if (it == b.vars.end()) {
      b.vars[p.var] = bare(a);
      return {};
    }
    if (bare(it->second) == bare(a)) return {};
    return {Mismatch::Kind::Conflict, p, a, it->second};
  }
  if (p.kind == Axis::Kind::Group && a.kind == Axis::Kind::Group &&
      p.items.size() == a.items.size()) {
    for (size_t i = 0; i < p.items.size(); ++i) {
      Mismatch m = fit_axis(p.items[i], a.items[i], b);
      if (m.kind != Mismatch::Kind::None) return m;
    }
    return {};
  }
  if (bare(p) == bare(a)) return {};
  return {Mismatch::Kind::Axis, p, a, {}};
}

Mismatch fit_shape(const std::vector<Axis>& p,
                   const std::vector<Axis>& a,
                   Binding& b) {
  size_t star = p.size();
  for (size_t i = 0; i < p.size(); ++i)
    if (is_star(p[i])) star = i;
  if (star == p.size()) {
    if (p.size() != a.size()) return {Mismatch::Kind::Rank, {}, {}, {}};
    for (size_t i = 0; i < p.size(); ++i) {
      Mismatch m = fit_axis(p[i], a[i], b);
      if (m.kind != Mismatch::Kind::None) return m;
    }
    return {};
  }
  size_t fixed = p.size() - 1;
  if (a.size() < fixed) return {Mismatch::Kind::Rank, {}, {}, {}};
  size_t tail = p.size() - star - 1;
  for (size_t i = 0; i < star; ++i) {
    Mismatch m = fit_axis(p[i], a[i], b);
    if (m.kind != Mismatch::Kind::None) return m;
  }
  for (size_t i = 0; i < tail; ++i) {
    Mismatch m = fit_axis(p[star + 1 + i], a[a.size() - tail + i], b);
    if (m.kind != Mismatch::Kind::None) return m;
  }
  std::vector<Axis> middle(a.begin() + star, a.end() - tail);
  auto it = b.stars.find(p[star].name);
  if (it == b.stars.end()) {
    b.stars[p[star].name] = middle;
  } else if (it->second != middle) {
    return {Mismatch::Kind::Rank, {}, {}, {}};
  }
  return {};
}

std::string describe(const Axis& a) {
  return a.str_sized();
}

}  // namespace

bool Checker::same_type(const Type& a, const Type& b) {
  if (a.is_error() || b.is_error()) return true;
  if (a.kind != b.kind) {
    // Host numbers are interchangeable when rebinding.
    return a.is_host_number() && b.is_host_number();
  }
  switch (a.kind) {
    case TK::Tensor:
      return a.shape == b.shape && a.dtype == b.dtype;
    case TK::Batch:
      return a.record == b.record && a.shape == b.shape;
    case TK::Record:
    case TK::Dataset:
    case TK::Batches:
      return a.record == b.record;
    case TK::Model:
      return a.model == b.model && a.model_args == b.model_args &&
             a.model_dtype == b.model_dtype && a.stack == b.stack &&
             a.model_split == b.model_split && a.field_splits == b.field_splits;
    case TK::Optim:
      return a.model == b.model && a.model_dtype == b.model_dtype &&
             a.optim_kind == b.optim_kind;
    case TK::Grads:
      return a.model == b.model && a.model_dtype == b.model_dtype;
    case TK::Tuple:
      if (a.elems.size() != b.elems.size()) return false;
      for (size_t i = 0; i < a.elems.size(); ++i)
        if (!same_type(a.elems[i], b.elems[i])) return false;
      return true;
    case TK::List:
      return a.elems.empty() || b.elems.empty() ||
             same_type(a.elems[0], b.elems[0]);
    default:
      return true;
  }
}

bool Checker::fit(const Type& param,
                  const Type& arg,
                  Binding& b,
                  diag::Span at,
                  const std::string& what) {
  if (param.is_error() || arg.is_error()) return true;
  auto kind_error = [&]() {
    error(Code::E0303,
          at,
          what + " must be " + param.str() + ", found " + arg.str(),
          "this is " + arg.str());
    return false;
  };
  switch (param.kind) {
    case TK::Tensor: {
      if (arg.is_host_number()) {
        if (param.shape.empty()) return true;
        return kind_error();
      }
      if (arg.kind != TK::Tensor) return kind_error();
      Mismatch m = fit_shape(param.shape, arg.shape, b);
      switch (m.kind) {
        case Mismatch::Kind::None:
          break;
        case Mismatch::Kind::Rank:
          error(Code::E0303,
                at,
                what + " must be " + param.str() + ", found " + arg.str(),
                "has " + std::to_string(arg.shape.size()) + " axes, " +
                    std::to_string(param.shape.size()) + " expected");
          return false;
        case Mismatch::Kind::Axis: {
          auto& d = error(
              Code::E0303,
              at,
              what + " must be " + param.str() + ", found " + arg.str(),
              describe(m.arg) + " where " + describe(m.param) + " is expected");
          auto ps = m.param.static_size(), as = m.arg.static_size();
          if (ps && as && *ps == *as && m.param.kind != m.arg.kind)
            d.note(
                "a dim and a literal of the same size are different "
                "axes: write the dim's name");
          return false;
        }
        case Mismatch::Kind::Conflict: {
          // A fn's own size variable is itself inside its body (a return,
          // an annotated let): a different axis there is a value that
          // does not fit its type, not a call that binds `b` twice.
          if (m.earlier.kind == Axis::Kind::Var &&
              m.earlier.var == m.param.var) {
            error(Code::E0303,
                  at,
                  what + " must be " + param.str() + ", found " + arg.str(),
                  describe(m.arg) + " where " + describe(m.param) +
                      " is expected");
            return false;
          }
          // Note [Two sizes of one name]: "`b` is n and n" said nothing.
          const types::PrintedApart shown({m.earlier}, {m.arg});
          auto& d =
              error(Code::E0307,
                    at,
                    "size variable `" + m.param.name + "` is " +
                        shown.axis_a(m.earlier) + " and " +
                        shown.axis_b(m.arg) + " in one call",
                    "here `" + m.param.name + "` is " + shown.axis_b(m.arg));
          auto w = b.where.find(m.param.var);
          if (w != b.where.end())
            d.note("`" + m.param.name + "` was bound to " +
                       shown.axis_a(m.earlier) + " here",
                   w->second);
          for (const auto& [text, where] : shown.notes()) d.note(text, where);
          // Note [State carried across batches]: a value made before the
          // loop (an RNN's hidden state) does not have a batch's size: each
          // batch is its own (the last may be smaller), and on several
          // devices each device holds a share of it. TBPTT carries the state
          // across the time chunks of one batch instead, inside the fn.
          if (b.batch_vars.count(m.param.var))
            d.note("`" + m.param.name +
                   "` is the batch's own size: each batch of batches(n) has "
                   "its own (the last may be smaller), and on several devices "
                   "each device holds a share of it, so a value carried from "
                   "one batch to the next (an RNN's hidden state) cannot have "
                   "it")
                .help(
                    "carry the state within one batch: pass the fn whole "
                    "sequences (`[b] R` with a `[N]` field) and loop over "
                    "their time chunks inside it, as TBPTT does, making the "
                    "state there: `zeros([b H])`");
          return false;
        }
      }
      // Remember where each variable was first bound, for E0307's note.
      for (const auto& [id, ax] : b.vars) b.where.emplace(id, at);
      if (param.dtype != arg.dtype) {
        error(Code::E0304,
              at,
              what + " must be " + types::dtype_name(param.dtype) + ", found " +
                  types::dtype_name(arg.dtype),
              std::string("this is ") + types::dtype_name(arg.dtype))
            .help(std::string("convert it: to(x, ") +
                      types::dtype_name(param.dtype) + ")",
                  {std::string("Convert to ") + types::dtype_name(param.dtype),
                   at,
                   "to(" + text(at) + ", " + types::dtype_name(param.dtype) +
                       ")"});
        return false;
      }
      return true;
    }
    case TK::Batch: {
      if (arg.kind != TK::Batch || arg.record != param.record)
        return kind_error();
      Mismatch m = fit_axis(param.shape[0], arg.shape[0], b);
      if (m.kind == Mismatch::Kind::Conflict) {
        const types::PrintedApart shown({m.earlier}, {m.arg});
        auto& d =
            error(Code::E0307,
                  at,
                  "size variable `" + m.param.name + "` is " +
                      shown.axis_a(m.earlier) + " and " + shown.axis_b(m.arg) +
                      " in one call",
                  "here `" + m.param.name + "` is " + shown.axis_b(m.arg));
        for (const auto& [text, where] : shown.notes()) d.note(text, where);
        return false;
      }
      if (m.kind != Mismatch::Kind::None) return kind_error();
      for (const auto& [id, ax] : b.vars) b.where.emplace(id, at);
      if (param.shape[0].kind == Axis::Kind::Var)
        b.batch_vars.insert(param.shape[0].var);
      return true;
    }
    case TK::Int:
      if (arg.kind == TK::Int || arg.kind == TK::Bool) return true;
      return kind_error();
    case TK::Float:
      if (arg.kind == TK::Int || arg.kind == TK::Float) return true;
      return kind_error();
    case TK::Record:
    case TK::Dataset:
    case TK::Batches:
      if (arg.kind != param.kind || arg.record != param.record)
        return kind_error();
      return true;
    case TK::Model: {
      if (arg.kind != TK::Model || arg.model != param.model ||
          arg.model_dtype != param.model_dtype)
        return kind_error();
      if (arg.model_args.size() != param.model_args.size() ||
          arg.stack.size() != param.stack.size())
        return kind_error();
      // On blocks (inlined spmd fns, ordinary fns inside one) a model's
      // spec is part of its type: its fields are the blocks it says.
      if (b.blocks && (arg.model_split != param.model_split ||
                       arg.field_splits != param.field_splits))
        return kind_error();
      for (size_t i = 0; i < param.model_args.size(); ++i)
        if (fit_axis(param.model_args[i], arg.model_args[i], b).kind !=
            Mismatch::Kind::None)
          return kind_error();
      for (size_t i = 0; i < param.stack.size(); ++i)
        if (fit_axis(param.stack[i], arg.stack[i], b).kind !=
            Mismatch::Kind::None)
          return kind_error();
      return true;
    }
    case TK::Optim:
      if (arg.kind != TK::Optim || arg.model != param.model ||
          arg.model_dtype != param.model_dtype ||
          arg.optim_kind != param.optim_kind)
        return kind_error();
      return true;
    case TK::Grads:
      if (arg.kind != TK::Grads || arg.model != param.model ||
          arg.model_dtype != param.model_dtype)
        return kind_error();
      return true;
    case TK::Tuple:
      if (arg.kind != TK::Tuple || arg.elems.size() != param.elems.size())
        return kind_error();
      for (size_t i = 0; i < param.elems.size(); ++i)
        if (!fit(param.elems[i],
                 arg.elems[i],
                 b,
                 at,
                 what + " (item " + std::to_string(i) + ")"))
          return false;
      return true;
    case TK::List:
      if (arg.kind != TK::List) return kind_error();
      if (param.elems.empty() || arg.elems.empty()) return true;
      return fit(param.elems[0], arg.elems[0], b, at, what + "'s items");
    case TK::AxisArg:
      if (arg.kind != TK::AxisArg) return kind_error();
      if (fit_axis(param.shape[0], arg.shape[0], b).kind !=
          Mismatch::Kind::None)
        return kind_error();
      return true;
    default:
      if (arg.kind != param.kind) return kind_error();
      return true;
  }
}

Axis Checker::substitute(const Axis& a, Binding& b) {
  if (a.kind == Axis::Kind::Var) {
    auto it = b.vars.find(a.var);
    Axis r;
    if (it != b.vars.end()) {
      r = it->second;
    } else {
      r = fresh_var(a.name);
      b.vars[a.var] = r;
    }
    if (!a.split.empty()) r.split = a.split;
    return r;
  }
  if (a.kind == Axis::Kind::Group) {
    std::vector<Axis> items;
    for (const Axis& i : a.items) items.push_back(substitute(i, b));
    Axis g = Axis::group(std::move(items));
    g.split = a.split;
    return g;
  }
  return a;
}

std::vector<Axis> Checker::substitute(const std::vector<Axis>& shape,
                                      Binding& b) {
  std::vector<Axis> out;
  for (const Axis& a : shape) {
    if (is_star(a)) {
      auto it = b.stars.find(a.name);
      if (it != b.stars.end())
        out.insert(out.end(), it->second.begin(), it->second.end());
      continue;
    }
    out.push_back(substitute(a, b));
  }
  return out;
}

Type Checker::substitute(const Type& t, Binding& b) {
  Type r = t;
  r.shape = substitute(t.shape, b);
  for (Axis& a : r.model_args) a = substitute(a, b);
  for (Axis& a : r.stack) a = substitute(a, b);
  for (Type& e : r.elems) e = substitute(e, b);
  for (auto& f : r.fields) f.second = substitute(f.second, b);
  return r;
}

}  // namespace ss::check
