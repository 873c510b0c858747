// Patterns at run time: rearrange, split and einsum as reshapes,
// permutations and matmuls of the differentiable API (so they have
// gradients and run on any backend; einsum's lowering is in
// einsum_lowering.cpp). The checker proved the labels fit;
// here each label gets its run-time size.
#include "interp/eval/eval_pattern.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "interp/eval/autocast.h"
#include "interp/eval/einsum_lowering.h"
#include "interp/eval/interpreter.h"
#include "ops/api.h"

namespace ss::eval {

using PK = ast::PatternItem::Kind;
using VK = Value::Kind;

namespace {

// Note [Binding a pattern's labels at run time]
// Every label gets its size before any group is divided, as the checker
// binds them. A label takes its axis's size in this call when the checker
// knows the axis (ExprInfo::pattern_labels: a dim, a size variable, an
// alias, a group's item): `[(3 4)]` under `(a b)` is a = 3, b = 4, which
// the tensor's 12 alone cannot say. Then each label that binds an axis
// alone, in any operand, takes that axis's size (a mismatch is a
// ShapeError, never a silent choice), and each group cut out of one axis
// gives its one unknown label the quotient, until every group is known.
// Binding operand by operand instead left `(n k)` before a later `n` with
// two unknowns. A quotient on a size variable the checker made up for it
// is recorded in the frame, so that later types and patterns with that
// variable see the same size (a loop's next pass divides it again).
class Sizes {
 public:
  Sizes(Interpreter& in,
        const Frame& f,
        diag::Span at,
        const check::ExprInfo* info)
      : in_(in), at_(at), info_(info) {
    if (!info_) return;
    for (const auto& [name, l] : info_->pattern_labels)
      if (!l.divided && sizable(l.axis, f))
        set(name, in_.axis_size(l.axis, f, at_));
  }

  // Binds the labels of [side] to [shape].
  void bind(const ast::PatternSide& side, const ops::Shape& shape) {
    for (size_t k = 0; k < side.items.size(); ++k)
      bind_item(side.items[k], shape[k]);
  }

  // Divides the groups cut out of one axis; call after every bind.
  void resolve() {
    for (bool progress = true; progress && !pending_.empty();) {
      progress = false;
      for (auto g = pending_.begin(); g != pending_.end();) {
        if (divide(*g->first, g->second)) {
          g = pending_.erase(g);
          progress = true;
        } else {
          ++g;
        }
      }
    }
    if (!pending_.empty())
      in_.fail("ShapeError",
               at_,
               "a group of this pattern leaves two sizes unknown");
  }

  // Records the quotients' size variables (see the Note).
  void record(Frame& f) const {
    if (!info_) return;
    for (const auto& [name, l] : info_->pattern_labels)
      if (l.divided && l.axis.kind == types::Axis::Kind::Var)
        f.sizes[l.axis.var] = sizes_.at(name);
  }

  // The atoms of [side]: labels (groups flattened), literals as "#n".
  static void atoms(const ast::PatternItem& it, std::vector<std::string>& out) {
    switch (it.kind) {
      case PK::Name:
        out.push_back(it.name);
        break;
      case PK::Literal:
        out.push_back("#" + std::to_string(it.value));
        break;
      case PK::Group:
        for (const auto& i : it.items) atoms(i, out);
        break;
    }
  }

  // "#n" or "#n@i.k" (an input's literal, see side_atoms) is n.
  int64_t size_of(const std::string& atom) const {
    if (atom[0] == '#') return std::stoll(atom.substr(1));
    return sizes_.at(atom);
  }
  int64_t item_size(const ast::PatternItem& it) const {
    std::vector<std::string> a;
    atoms(it, a);
    int64_t p = 1;
    for (const auto& x : a) p *= size_of(x);
    return p;
  }

 private:
  std::optional<int64_t> known(const std::string& name) const {
    auto it = sizes_.find(name);
    if (it != sizes_.end()) return it->second;
    return in_.dim_size(name);
  }

  // Whether [a]'s size is known in this call (its size variables bound).
  bool sizable(const types::Axis& a, const Frame& f) const {
    if (a.kind == types::Axis::Kind::Var) return f.sizes.count(a.var) > 0;
    for (const auto& i : a.items)
      if (!sizable(i, f)) return false;
    return a.kind != types::Axis::Kind::Dim || a.size >= 0 ||
           in_.program().dims().count(a.name);
  }

  void set(const std::string& name, int64_t size) {
    auto [it, fresh] = sizes_.insert({name, size});
    if (!fresh && it->second != size)
      in_.fail("ShapeError",
               at_,
               "label `" + name + "` of this pattern is " +
                   std::to_string(it->second) + " and " + std::to_string(size));
  }

  void bind_item(const ast::PatternItem& it, int64_t size) {
    if (it.kind == PK::Name) return set(it.name, size);
    if (it.kind == PK::Literal) {
      if (it.value != size)
        in_.fail("ShapeError",
                 at_,
                 "the pattern says " + std::to_string(it.value) +
                     " where the axis is " + std::to_string(size));
      return;
    }
    pending_.push_back({&it, size});
  }

  // The group [g] on an axis of [size]: true once its labels are known
  // (every size but at most one known, that one the quotient).
  bool divide(const ast::PatternItem& g, int64_t size) {
    std::vector<std::string> as;
    atoms(g, as);
    int64_t prod = 1;
    std::string unknown;
    for (const auto& a : as) {
      std::optional<int64_t> s =
          a[0] == '#' ? std::optional<int64_t>(size_of(a)) : known(a);
      if (s) {
        prod *= *s;
      } else if (!unknown.empty()) {
        return false;
      } else {
        unknown = a;
      }
    }
    if (!unknown.empty()) {
      if (prod == 0 || size % prod != 0)
        in_.fail("ShapeError",
                 at_,
                 "a group of this pattern does not divide the axis: " +
                     std::to_string(size) + " is not a multiple of " +
                     std::to_string(prod));
      sizes_[unknown] = size / prod;
    } else if (prod != size) {
      in_.fail("ShapeError",
               at_,
               "a group of this pattern is " + std::to_string(prod) +
                   " but the axis is " + std::to_string(size));
    }
    for (const auto& a : as)
      if (a[0] != '#' && !sizes_.count(a)) sizes_[a] = *known(a);
    return true;
  }

  Interpreter& in_;
  diag::Span at_;
  const check::ExprInfo* info_;
  std::map<std::string, int64_t> sizes_;
  std::vector<std::pair<const ast::PatternItem*, int64_t>> pending_;
};

// The atoms of a side. The literals of input [operand] are named by
// position ("#1@0.2"), so they are never taken for one another or for an
// output's literal 1 ("#1", inserted): each input literal is an axis of its
// own, squeezed (1) or cut (split's k). [operand] is -1 for the output.
std::vector<std::string> side_atoms(const ast::PatternSide& s, int operand) {
  std::vector<std::string> out;
  for (const auto& it : s.items) Sizes::atoms(it, out);
  if (operand >= 0)
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i][0] == '#')
        out[i] += "@" + std::to_string(operand) + "." + std::to_string(i);
  return out;
}

// [x] (whose axes are [from]'s atoms, flattened) to the order of [to]'s
// atoms; atoms of [to] absent from [from] must be literal 1s (inserted).
ops::Tensor to_order(const ops::Tensor& x,
                     const std::vector<std::string>& from,
                     const std::vector<std::string>& to,
                     const Sizes& sz) {
  std::vector<int> perm;
  std::vector<std::string> kept;
  for (const auto& a : to) {
    auto it = std::find(from.begin(), from.end(), a);
    if (it != from.end()) {
      perm.push_back(static_cast<int>(it - from.begin()));
      kept.push_back(a);
    }
  }
  // Atoms of the input that are not in the output are literal 1s
  // (squeezed) or the split literal (handled by the caller).
  ops::Tensor y = x;
  if (perm.size() == from.size()) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int(i);
    if (!identity) y = ops::permute(y, perm);
  } else {
    // Drop size-1 atoms first.
    ops::Shape s;
    std::vector<std::string> f2;
    for (size_t i = 0; i < from.size(); ++i)
      if (std::find(to.begin(), to.end(), from[i]) != to.end()) {
        s.push_back(sz.size_of(from[i]));
        f2.push_back(from[i]);
      }
    y = ops::reshape(y, s);
    return to_order(y, f2, to, sz);
  }
  ops::Shape out;
  for (const auto& a : to) out.push_back(sz.size_of(a));
  return ops::reshape(y, out);
}

// The pattern of [call] applied to [xs].
Value apply_pattern(Interpreter& in,
                    const ops::OpDef& op,
                    const ast::Expr& call,
                    std::vector<ops::Tensor> xs,
                    Frame& f) {
  const ast::Pattern& pat = *call.pattern;
  Sizes sz(in, f, call.span, in.program().info(&call));
  for (size_t i = 0; i < xs.size() && i < pat.inputs.size(); ++i) {
    if (xs[i].rank() != pat.inputs[i].items.size())
      in.fail("ShapeError",
              call.span,
              "the operand's rank does not fit the pattern");
    sz.bind(pat.inputs[i], xs[i].shape());
  }
  sz.resolve();
  sz.record(f);
  ops::Shape out_shape;
  for (const auto& it : pat.output.items) out_shape.push_back(sz.item_size(it));
  std::vector<std::string> out_atoms = side_atoms(pat.output, -1);
  try {
    if (op.intrinsic == ops::Intrinsic::Rearrange ||
        op.intrinsic == ops::Intrinsic::Split) {
      std::vector<std::string> in_atoms = side_atoms(pat.inputs[0], 0);
      ops::Shape flat;
      for (const auto& a : in_atoms) flat.push_back(sz.size_of(a));
      ops::Tensor x = ops::reshape(xs[0], flat);
      if (op.intrinsic == ops::Intrinsic::Rearrange)
        return Value::tensor(
            ops::reshape(to_order(x, in_atoms, out_atoms, sz), out_shape));
      // split: the one literal k (not 1) of the input is cut into parts.
      auto cut = std::find_if(in_atoms.begin(), in_atoms.end(), [&](auto& a) {
        return a[0] == '#' && sz.size_of(a) != 1;
      });
      int axis = static_cast<int>(cut - in_atoms.begin());
      int64_t k = sz.size_of(*cut);
      std::vector<std::string> rest = in_atoms;
      rest.erase(rest.begin() + axis);
      std::vector<Value> parts;
      for (int64_t p = 0; p < k; ++p) {
        ops::Tensor part = ops::take_one(x, p, axis);
        parts.push_back(Value::tensor(
            ops::reshape(to_order(part, rest, out_atoms, sz), out_shape)));
      }
      return Value::tuple(std::move(parts));
    }
    // The checker's dtype, the operands' promotion, each operand cast to it
    // first, as torch casts a binary op's: multiplied pairwise in their own
    // promotions, an f16 times an i64 2^53 was inf in f16, and inf times
    // an f32 0 NaN. The API sums ints in i64 (einsum(u, a ->) of an i32 u
    // was an i64 typed i32): cast back.
    types::DType dtype = xs[0].dtype();
    for (const ops::Tensor& x : xs) dtype = types::promote(dtype, x.dtype());
    for (ops::Tensor& x : xs)
      if (x.dtype() != dtype) x = ops::cast(x, dtype);
    std::vector<std::vector<std::string>> atoms;
    for (size_t i = 0; i < xs.size(); ++i) {
      atoms.push_back(side_atoms(pat.inputs[i], static_cast<int>(i)));
      ops::Shape flat;
      for (const auto& a : atoms[i]) flat.push_back(sz.size_of(a));
      xs[i] = ops::reshape(xs[i], flat);
    }
    ops::Tensor y = ops::reshape(
        einsum_atoms(std::move(xs), std::move(atoms), out_atoms), out_shape);
    return Value::tensor(y.dtype() == dtype ? y : ops::cast(y, dtype));
  } catch (const ops::OpError& e) {
    in.fail("ShapeError", call.span, e.what());
  }
}

}  // namespace

Value call_pattern(Interpreter& in,
                   const ops::OpDef& op,
                   const ast::Expr& call,
                   const ast::Expr* receiver,
                   Frame& f) {
  std::vector<ops::Tensor> xs;
  std::vector<const ast::Expr*> given;
  if (receiver) given.push_back(receiver);
  for (const ast::Arg& a : call.args)
    if (a.keyword.empty()) given.push_back(a.value.get());
  for (const ast::Expr* e : given) xs.push_back(in.eval(*e, f).t);
  // Note [Autocast]: einsum inside an autocast fn runs in its dtype.
  if (const check::ExprInfo* info = in.program().info(&call);
      info && info->autocast)
    for (ops::Tensor& x : xs) x = autocast_operand(x, info->autocast);
  // An op site (Note [Op sites]) of the operands.
  OpSite s(OpSite::Kind::Pattern, in, call.span, [&] {
    return apply_pattern(in, op, call, xs, f);
  });
  s.op = &op;
  s.expr = &call;
  for (size_t i = 0; i < xs.size(); ++i) {
    s.operands.push_back(&xs[i]);
    s.operand_exprs.push_back(given[i]);
  }
  return in.run_op(s);
}

}  // namespace ss::eval
