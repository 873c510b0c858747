// Patterns: rearrange, split and einsum, einops-style, without quotes.
//
// Note [Pattern aliases]
// A pattern's labels bind the operand's axes by position. A label that is a
// dim must be that dim; one already in scope (a size variable or an earlier
// alias) must be that same axis; any other label becomes an *alias* of the
// axis it binds, for the rest of the fn: later types, over= and patterns
// may use it, and it prints as written. A group in an input pattern cut out
// of a single axis (`(K m)` of an axis of size K·m) binds its one unknown
// label to the quotient and remembers the cut, so a later `(K m)` is the
// original axis again (microbatching and joining back).
#include "interp/check/checker_impl.h"

namespace ss::check {

using diag::Code;
using PK = ast::PatternItem::Kind;

namespace {

std::string item_str(const ast::PatternItem& it) {
  switch (it.kind) {
    case PK::Name:
      return it.name;
    case PK::Literal:
      return std::to_string(it.value);
    case PK::Group: {
      std::string s = "(";
      for (size_t i = 0; i < it.items.size(); ++i)
        s += (i ? " " : "") + item_str(it.items[i]);
      return s + ")";
    }
  }
  return "?";
}

std::string side_str(const ast::PatternSide& s) {
  std::string r;
  for (size_t i = 0; i < s.items.size(); ++i)
    r += (i ? " " : "") + item_str(s.items[i]);
  return r;
}

Axis bare(Axis a) {
  a.label.clear();
  return a;
}

void collect_labels(const ast::PatternItem& it, std::vector<std::string>& out) {
  if (it.kind == PK::Name) out.push_back(it.name);
  for (const auto& i : it.items) collect_labels(i, out);
}

void collect_literals(const ast::PatternItem& it,
                      std::vector<const ast::PatternItem*>& out) {
  if (it.kind == PK::Literal) out.push_back(&it);
  for (const auto& i : it.items) collect_literals(i, out);
}

// Binds one pattern call's labels.
class PatternBinder {
 public:
  PatternBinder(Checker& ck, FnCtx& c) : ck_(ck), c_(c) {}

  bool bind(const ast::PatternItem& it, const Axis& axis) {
    switch (it.kind) {
      case PK::Literal: {
        auto s = axis.static_size();
        if (s && *s == it.value) return true;
        ck_.error(Code::E0306,
                  it.span,
                  "the pattern says " + std::to_string(it.value) +
                      " here, but the axis is " + axis.str_sized(),
                  "does not match " + axis.str());
        return false;
      }
      case PK::Name:
        return bind_name(it, axis);
      case PK::Group:
        return bind_group(it, axis);
    }
    return false;
  }

  // The axis an output item names.
  std::optional<Axis> output(const ast::PatternItem& it) {
    switch (it.kind) {
      case PK::Literal:
        if (it.value == 1) return Axis::lit(1);
        ck_.error(Code::E0306,
                  it.span,
                  "only the literal 1 may be inserted in an output "
                  "pattern, found " +
                      std::to_string(it.value),
                  "not an input label");
        return std::nullopt;
      case PK::Name: {
        auto b = bound_.find(it.name);
        if (b != bound_.end()) return b->second;
        ck_.error(Code::E0306,
                  it.span,
                  "label `" + it.name + "` of the output is not in the input",
                  "unknown label")
            .help("every output label must name an input axis");
        return std::nullopt;
      }
      case PK::Group: {
        std::vector<Axis> items;
        for (const auto& i : it.items) {
          auto a = output(i);
          if (!a) return std::nullopt;
          items.push_back(*a);
        }
        Axis g = Axis::group(items);
        // A group cut out of one axis earlier is that axis again.
        for (const auto& [grp, orig] : c_.axes.decompositions)
          if (grp == g) return orig;
        for (const auto& [grp, orig] : cuts_)
          if (grp == g) return orig;
        return g;
      }
    }
    return std::nullopt;
  }

  // Makes this call's new labels aliases for the rest of the fn, and tells
  // the evaluator every label's axis (Note [Binding a pattern's labels at
  // run time], eval_pattern.cpp).
  void commit(ExprInfo& info) {
    for (const auto& [name, axis] : fresh_) c_.axes.names[name] = axis;
    for (const auto& cut : cuts_) c_.axes.decompositions.push_back(cut);
    info.pattern_labels.clear();
    for (const auto& [name, axis] : bound_)
      info.pattern_labels[name] = {axis, divided_.count(name) > 0};
  }

  const std::map<std::string, Axis>& bound() const { return bound_; }

 private:
  bool is_dim(const std::string& n) const {
    return !c_.axes.names.count(n) && ck_.prog_->dims().count(n);
  }

  // A size variable only the result type names: the pattern binds it (the
  // return checks the binding), as a new label would.
  bool result_only(const Axis& a) const {
    return a.kind == Axis::Kind::Var && c_.result_only.count(a.var);
  }

  bool bind_name(const ast::PatternItem& it, const Axis& axis) {
    const std::string& n = it.name;
    std::optional<Axis> want;
    auto b = bound_.find(n);
    if (b != bound_.end()) {
      want = b->second;
    } else if (auto a = ck_.lookup_axis(n, c_.axes); a && !result_only(*a)) {
      want = a;
    }
    if (want) {
      if (bare(*want) == bare(axis)) {
        Axis named = axis;
        if (!is_dim(n)) named.label = n;
        bound_[n] = named;
        return true;
      }
      auto& d = ck_.error(Code::E0306,
                          it.span,
                          "label `" + n + "` is " + want->str_sized() +
                              (is_dim(n) ? " (a dim)" : "") +
                              ", but this axis is " + axis.str_sized(),
                          "binds " + axis.str());
      if (!is_dim(n))
        d.note("a label already in scope must bind that same axis");
      return false;
    }
    Axis named = axis;
    named.label = n;
    bound_[n] = named;
    fresh_[n] = named;
    return true;
  }

  bool bind_group(const ast::PatternItem& it, const Axis& axis) {
    if (axis.kind == Axis::Kind::Group &&
        axis.items.size() == it.items.size()) {
      for (size_t i = 0; i < it.items.size(); ++i)
        if (!bind(it.items[i], axis.items[i])) return false;
      return true;
    }
    // A group cut out of one axis: at most one label new to the fn or only
    // in the result type (the unknown). A label in scope whose size only a
    // call knows (a param's size variable, an alias of one) is known, not
    // unknown: it must bind its own axis (Note [Pattern aliases]), so the
    // cut is checked at run time.
    int64_t known = 1;
    bool symbolic = false;
    const ast::PatternItem* unknown = nullptr;
    std::vector<std::optional<Axis>> parts(it.items.size());
    for (size_t i = 0; i < it.items.size(); ++i) {
      const ast::PatternItem& p = it.items[i];
      std::optional<Axis> a;
      if (p.kind == PK::Literal) {
        a = Axis::lit(p.value);
      } else if (p.kind == PK::Name) {
        auto b = bound_.find(p.name);
        if (b != bound_.end())
          a = b->second;
        else
          a = ck_.lookup_axis(p.name, c_.axes);
      } else {
        ck_.error(Code::E0306,
                  p.span,
                  "a nested group cannot be cut out of one axis",
                  "nested group");
        return false;
      }
      // A size variable only the result names is bound by this cut.
      if (a && result_only(*a)) a.reset();
      if (!a) {
        if (unknown) {
          ck_.error(Code::E0306,
                    it.span,
                    "group " + item_str(it) + " leaves two sizes unknown (" +
                        item_str(*unknown) + " and " + item_str(p) + ")",
                    "cannot infer both")
              .help("make all but one of its labels dims or known sizes");
          return false;
        }
        unknown = &p;
        continue;
      }
      if (auto s = a->static_size())
        known *= *s;
      else
        symbolic = true;
      parts[i] = a;
    }
    auto total = axis.static_size();
    Axis whole = axis;
    if (!unknown && symbolic) {
      // Sizes only a call knows: a ShapeError there if they do not fit.
    } else if (!unknown) {
      if (total && *total != known) {
        ck_.error(Code::E0306,
                  it.span,
                  "group " + item_str(it) + " is " + std::to_string(known) +
                      ", but the axis is " + axis.str_sized(),
                  "sizes differ");
        return false;
      }
      if (!total) {
        ck_.error(Code::E0306,
                  it.span,
                  "group " + item_str(it) + " of fixed size " +
                      std::to_string(known) + " cannot bind " + axis.str() +
                      ", whose size is only known at run time",
                  "binds " + axis.str());
        return false;
      }
    } else {
      Axis q;
      if (total && !symbolic) {
        if (known == 0 || *total % known != 0) {
          ck_.error(Code::E0306,
                    it.span,
                    "group " + item_str(it) + " does not divide " +
                        axis.str_sized() + ": " + std::to_string(*total) +
                        " is not a multiple of " + std::to_string(known),
                    "does not divide");
          return false;
        }
        q = Axis::lit(*total / known);
      } else {
        // Known at run time only: a ShapeError there if it does not divide.
        q = ck_.fresh_var(unknown->name);
      }
      q.label = unknown->name;
      for (size_t i = 0; i < it.items.size(); ++i)
        if (&it.items[i] == unknown) parts[i] = q;
      bound_[unknown->name] = q;
      fresh_[unknown->name] = q;
      divided_.insert(unknown->name);
    }
    std::vector<Axis> items;
    for (size_t i = 0; i < it.items.size(); ++i) {
      const ast::PatternItem& p = it.items[i];
      if (p.kind == PK::Name && !bound_.count(p.name)) {
        Axis a = *parts[i];
        if (!is_dim(p.name)) a.label = p.name;
        bound_[p.name] = a;
      }
      items.push_back(*parts[i]);
    }
    cuts_.push_back({Axis::group(items), whole});
    return true;
  }

  Checker& ck_;
  FnCtx& c_;
  std::map<std::string, Axis> bound_;  // every label of this call
  std::map<std::string, Axis> fresh_;  // labels new to the fn
  std::set<std::string> divided_;      // the unknowns of cut groups
  std::vector<std::pair<Axis, Axis>> cuts_;
};

}  // namespace

Type Checker::check_pattern_call(ops::Intrinsic kind,
                                 const ast::Expr& call,
                                 const std::vector<Type>& operands,
                                 const std::vector<diag::Span>& spans,
                                 FnCtx& c) {
  const ast::Pattern& pat = *call.pattern;
  const char* name = kind == ops::Intrinsic::Einsum  ? "einsum"
                     : kind == ops::Intrinsic::Split ? "split"
                                                     : "rearrange";
  for (const Type& t : operands)
    if (t.is_error()) return Type::error();
  if (kind != ops::Intrinsic::Einsum &&
      (operands.size() != 1 || pat.inputs.size() != 1)) {
    error(Code::E0306,
          pat.span,
          std::string(name) + " takes one tensor and one pattern `in -> out`",
          std::to_string(operands.size()) + " operand(s), " +
              std::to_string(pat.inputs.size()) + " input pattern(s)");
    return Type::error();
  }
  if (operands.size() != pat.inputs.size() || operands.empty()) {
    error(Code::E0306,
          pat.span,
          "einsum has " + std::to_string(operands.size()) + " tensor(s) but " +
              std::to_string(pat.inputs.size()) + " input pattern(s)",
          "one pattern per tensor");
    return Type::error();
  }
  PatternBinder binder(*this, c);
  types::DType dtype = types::DType::Bool;
  std::set<std::string> varying;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Type& t = operands[i];
    const ast::PatternSide& side = pat.inputs[i];
    if (t.kind != TK::Tensor) {
      error(Code::E0306,
            spans[i],
            std::string(name) + " needs a tensor, found " + t.str(),
            "not a tensor");
      return Type::error();
    }
    if (side.items.size() != t.shape.size()) {
      error(Code::E0306,
            side.span,
            "pattern `" + side_str(side) + "` has " +
                std::to_string(side.items.size()) + " labels, but " +
                text(spans[i]) + " has " + std::to_string(t.shape.size()) +
                " axes: " + t.str(),
            "one label per axis");
      return Type::error();
    }
    // Labels may not repeat within one side.
    std::vector<std::string> labels;
    for (const auto& it : side.items) collect_labels(it, labels);
    std::set<std::string> seen;
    for (const std::string& l : labels)
      if (!seen.insert(l).second) {
        error(Code::E0306,
              side.span,
              "label `" + l + "` appears twice in `" + side_str(side) + "`",
              "repeated label");
        return Type::error();
      }
    dtype = i == 0 ? t.dtype : types::promote(dtype, t.dtype);
    varying.insert(t.varying.begin(), t.varying.end());
  }
  // Labels alone on an axis first, in every operand, then literals and
  // groups: a group `(k n)` may be cut with the `n` of a later operand.
  for (bool alone : {true, false})
    for (size_t i = 0; i < operands.size(); ++i) {
      const ast::PatternSide& side = pat.inputs[i];
      for (size_t k = 0; k < side.items.size(); ++k)
        if ((side.items[k].kind == PK::Name) == alone &&
            !binder.bind(side.items[k], operands[i].shape[k]))
          return Type::error();
    }
  // The output.
  std::vector<std::string> out_labels;
  for (const auto& it : pat.output.items) collect_labels(it, out_labels);
  {
    std::set<std::string> seen;
    for (const std::string& l : out_labels)
      if (!seen.insert(l).second) {
        error(Code::E0306,
              pat.output.span,
              "label `" + l + "` appears twice in the output",
              "repeated label");
        return Type::error();
      }
  }
  std::vector<Axis> shape;
  for (const auto& it : pat.output.items) {
    auto a = binder.output(it);
    if (!a) return Type::error();
    shape.push_back(*a);
  }
  std::set<std::string> in_out(out_labels.begin(), out_labels.end());
  if (kind != ops::Intrinsic::Einsum) {
    std::vector<std::string> in_labels;
    for (const auto& it : pat.inputs[0].items) collect_labels(it, in_labels);
    for (const std::string& l : in_labels)
      if (!in_out.count(l)) {
        error(Code::E0306,
              pat.inputs[0].span,
              "label `" + l + "` of the input is missing from the output",
              "dropped here")
            .help(std::string(name) +
                  " moves axes; to sum one away use "
                  "sum(x, over=" +
                  l + ") or einsum");
        return Type::error();
      }
  }
  // Literals other than 1 in the inputs: split's k, and nothing else
  // (rearrange would drop the axis; einsum has no label to keep or sum).
  if (kind != ops::Intrinsic::Split)
    for (const ast::PatternSide& side : pat.inputs) {
      std::vector<const ast::PatternItem*> lits;
      for (const auto& it : side.items) collect_literals(it, lits);
      for (const auto* l : lits)
        if (l->value != 1) {
          auto& d = error(Code::E0306,
                          l->span,
                          "literal " + std::to_string(l->value) + " in " +
                              name + "'s input has no label: " +
                              (kind == ops::Intrinsic::Einsum
                                   ? "einsum can neither keep nor sum it"
                                   : "rearrange cannot drop it"),
                          "an axis of " + std::to_string(l->value));
          if (kind == ops::Intrinsic::Einsum)
            d.help(
                "name the axis with a label; leave the label out of the "
                "output to sum it");
          else
            d.help("split(x, " + side_str(side) + " -> ...) cuts it into " +
                   std::to_string(l->value) + " parts");
          return Type::error();
        }
    }
  Type out = Type::tensor(std::move(shape), dtype);
  out.varying.assign(varying.begin(), varying.end());
  if (kind == ops::Intrinsic::Split) {
    std::vector<const ast::PatternItem*> lits;
    for (const auto& it : pat.inputs[0].items) collect_literals(it, lits);
    std::vector<const ast::PatternItem*> cut;
    for (const auto* l : lits)
      if (l->value != 1) cut.push_back(l);
    if (cut.size() != 1) {
      error(Code::E0306,
            pat.inputs[0].span,
            "split needs exactly one literal k in the input (the number of "
            "parts), found " +
                std::to_string(cut.size()),
            "in `" + side_str(pat.inputs[0]) + "`")
          .help("split(x, b n (3 H Dh) -> b H n Dh) gives 3 parts");
      return Type::error();
    }
    // The parts are a tuple's types here and its values at run time, one
    // per part: a hostile k (2^31, the runtime fuzzer's) was gigabytes of
    // types before any tensor (docs/bounds.md). 0 parts cut nothing.
    constexpr int64_t kMaxParts = 4096;
    if (cut[0]->value < 2 || cut[0]->value > kMaxParts) {
      error(Code::E0306,
            cut[0]->span,
            "split into " + std::to_string(cut[0]->value) +
                " parts: the number of parts is 2 to 4,096",
            "the number of parts")
          .help("split(x, b n (3 H Dh) -> b H n Dh) gives 3 parts");
      return Type::error();
    }
    binder.commit(info_for(&call));
    return Type::tuple(std::vector<Type>(cut[0]->value, out));
  }
  binder.commit(info_for(&call));
  return out;
}

}  // namespace ss::check
