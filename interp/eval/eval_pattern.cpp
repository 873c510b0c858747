// Patterns at run time: rearrange, split and einsum as reshapes,
// permutations and matmuls of the differentiable API (so they have
// gradients and run on any backend). The checker proved the labels fit;
// here each label gets its run-time size.
#include <algorithm>
#include <map>
#include <numeric>

#include "interp/eval/interpreter.h"
#include "ops/api.h"

namespace ss::eval {

using PK = ast::PatternItem::Kind;
using VK = Value::Kind;

namespace {

// Label sizes of one pattern call, and the flat "atoms" of each side: every
// group expanded to its labels, so a side is a reshape of its operand.
class Sizes {
 public:
  Sizes(Interpreter& in, diag::Span at) : in_(in), at_(at) {}

  // Binds the labels of [side] to [shape].
  void bind(const ast::PatternSide& side, const ops::Shape& shape) {
    for (size_t k = 0; k < side.items.size(); ++k)
      bind_item(side.items[k], shape[k]);
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
    auto d = in_.program().dims().find(name);
    if (d != in_.program().dims().end()) return d->second;
    return std::nullopt;
  }

  void bind_item(const ast::PatternItem& it, int64_t size) {
    if (it.kind == PK::Name) {
      sizes_[it.name] = size;
      return;
    }
    if (it.kind == PK::Literal) return;
    // A group: every size known but at most one, which is the quotient.
    int64_t prod = 1;
    const ast::PatternItem* unknown = nullptr;
    for (const auto& i : it.items) {
      std::optional<int64_t> s;
      if (i.kind == PK::Literal)
        s = i.value;
      else if (i.kind == PK::Name)
        s = known(i.name);
      else
        s = nested(i);
      if (s)
        prod *= *s;
      else
        unknown = &i;
    }
    if (unknown) {
      if (prod == 0 || size % prod != 0)
        in_.fail("ShapeError",
                 at_,
                 "a group of this pattern does not divide the axis: " +
                     std::to_string(size) + " is not a multiple of " +
                     std::to_string(prod));
      sizes_[unknown->name] = size / prod;
    } else if (prod != size) {
      in_.fail("ShapeError",
               at_,
               "a group of this pattern is " + std::to_string(prod) +
                   " but the axis is " + std::to_string(size));
    }
    for (const auto& i : it.items)
      if (i.kind == PK::Name && !sizes_.count(i.name))
        sizes_[i.name] = *known(i.name);
  }

  std::optional<int64_t> nested(const ast::PatternItem& g) const {
    int64_t p = 1;
    for (const auto& i : g.items) {
      if (i.kind == PK::Literal)
        p *= i.value;
      else if (auto s = known(i.name))
        p *= *s;
      else
        return std::nullopt;
    }
    return p;
  }

  Interpreter& in_;
  diag::Span at_;
  std::map<std::string, int64_t> sizes_;
};

std::vector<std::string> side_atoms(const ast::PatternSide& s) {
  std::vector<std::string> out;
  for (const auto& it : s.items) Sizes::atoms(it, out);
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

}  // namespace

Value Interpreter::call_pattern(const ops::OpDef& op,
                                const ast::Expr& call,
                                const ast::Expr* receiver,
                                Frame& f) {
  const ast::Pattern& pat = *call.pattern;
  std::vector<ops::Tensor> xs;
  if (receiver) xs.push_back(eval(*receiver, f).t);
  for (const ast::Arg& a : call.args)
    if (a.keyword.empty()) xs.push_back(eval(*a.value, f).t);
  Sizes sz(*this, call.span);
  for (size_t i = 0; i < xs.size() && i < pat.inputs.size(); ++i) {
    if (xs[i].rank() != pat.inputs[i].items.size())
      fail("ShapeError",
           call.span,
           "the operand's rank does not fit the pattern");
    sz.bind(pat.inputs[i], xs[i].shape());
  }
  ops::Shape out_shape;
  for (const auto& it : pat.output.items) out_shape.push_back(sz.item_size(it));
  std::vector<std::string> out_atoms = side_atoms(pat.output);
  try {
    if (op.intrinsic == ops::Intrinsic::Rearrange ||
        op.intrinsic == ops::Intrinsic::Split) {
      std::vector<std::string> in_atoms = side_atoms(pat.inputs[0]);
      ops::Shape flat;
      for (const auto& a : in_atoms) flat.push_back(sz.size_of(a));
      ops::Tensor x = ops::reshape(xs[0], flat);
      if (op.intrinsic == ops::Intrinsic::Rearrange)
        return Value::tensor(
            ops::reshape(to_order(x, in_atoms, out_atoms, sz), out_shape));
      // split: the one literal k absent from the output is cut into parts.
      std::string cut;
      for (const auto& a : in_atoms)
        if (a[0] == '#' && a != "#1" &&
            std::find(out_atoms.begin(), out_atoms.end(), a) == out_atoms.end())
          cut = a;
      int axis = static_cast<int>(
          std::find(in_atoms.begin(), in_atoms.end(), cut) - in_atoms.begin());
      int64_t k = sz.size_of(cut);
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
    // einsum: contract operands pairwise, left to right, with matmul.
    std::vector<std::vector<std::string>> atoms;
    for (size_t i = 0; i < xs.size(); ++i) {
      atoms.push_back(side_atoms(pat.inputs[i]));
      ops::Shape flat;
      for (const auto& a : atoms[i]) flat.push_back(sz.size_of(a));
      xs[i] = ops::reshape(xs[i], flat);
    }
    auto needed_later = [&](const std::string& a, size_t from) {
      if (std::find(out_atoms.begin(), out_atoms.end(), a) != out_atoms.end())
        return true;
      for (size_t j = from; j < atoms.size(); ++j)
        if (std::find(atoms[j].begin(), atoms[j].end(), a) != atoms[j].end())
          return true;
      return false;
    };
    // Sum away labels of the first operand used nowhere else.
    auto reduce_unused =
        [&](ops::Tensor& t, std::vector<std::string>& at, size_t from) {
          std::vector<int> axes;
          std::vector<std::string> keep;
          for (size_t i = 0; i < at.size(); ++i) {
            if (needed_later(at[i], from))
              keep.push_back(at[i]);
            else
              axes.push_back(static_cast<int>(i));
          }
          if (!axes.empty()) {
            t = ops::sum(t, axes);
            at = keep;
          }
        };
    ops::Tensor acc = xs[0];
    std::vector<std::string> acc_atoms = atoms[0];
    reduce_unused(acc, acc_atoms, 1);
    for (size_t j = 1; j < xs.size(); ++j) {
      ops::Tensor b = xs[j];
      std::vector<std::string> b_atoms = atoms[j];
      reduce_unused(b, b_atoms, j + 1);
      // Classify: batch (both, kept), contracted (both, not kept), left
      // only, right only.
      std::vector<std::string> batch, contract, left, right;
      for (const auto& a : acc_atoms) {
        bool in_b =
            std::find(b_atoms.begin(), b_atoms.end(), a) != b_atoms.end();
        if (in_b)
          (needed_later(a, j + 1) ? batch : contract).push_back(a);
        else
          left.push_back(a);
      }
      for (const auto& a : b_atoms)
        if (std::find(acc_atoms.begin(), acc_atoms.end(), a) == acc_atoms.end())
          right.push_back(a);
      auto prod = [&](const std::vector<std::string>& v) {
        int64_t p = 1;
        for (const auto& a : v) p *= sz.size_of(a);
        return p;
      };
      std::vector<std::string> a_order = batch, b_order = batch;
      a_order.insert(a_order.end(), left.begin(), left.end());
      a_order.insert(a_order.end(), contract.begin(), contract.end());
      b_order.insert(b_order.end(), contract.begin(), contract.end());
      b_order.insert(b_order.end(), right.begin(), right.end());
      ops::Tensor a3 = ops::reshape(to_order(acc, acc_atoms, a_order, sz),
                                    {prod(batch), prod(left), prod(contract)});
      ops::Tensor b3 = ops::reshape(to_order(b, b_atoms, b_order, sz),
                                    {prod(batch), prod(contract), prod(right)});
      acc = ops::matmul(a3, b3);
      acc_atoms = batch;
      acc_atoms.insert(acc_atoms.end(), left.begin(), left.end());
      acc_atoms.insert(acc_atoms.end(), right.begin(), right.end());
      ops::Shape s;
      for (const auto& a : acc_atoms) s.push_back(sz.size_of(a));
      acc = ops::reshape(acc, s);
    }
    reduce_unused(acc, acc_atoms, xs.size());
    return Value::tensor(
        ops::reshape(to_order(acc, acc_atoms, out_atoms, sz), out_shape));
  } catch (const ops::OpError& e) {
    fail("ShapeError", call.span, e.what());
  }
}

}  // namespace ss::eval
