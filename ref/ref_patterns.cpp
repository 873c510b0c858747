// The reference: rearrange, split and einsum by their definitions, and
// their VJPs. See Note [Patterns by their definition] in ref_patterns.h.

#include "ref/ref_patterns.h"

#include <cctype>
#include <stdexcept>

namespace ss::ref {

using IK = PatternItem::Kind;

namespace {

[[noreturn]] void bad(const std::string& why) {
  throw std::invalid_argument("ref: pattern: " + why);
}

// ---------------------------------------------------------------- text

class PatternParser {
 public:
  explicit PatternParser(const std::string& s) : s_(s) {}

  Pattern parse() {
    Pattern p;
    for (;;) {
      p.inputs.push_back(side());
      skip();
      if (eat(",")) continue;
      if (eat("->")) break;
      bad("expected `,` or `->` at " + std::to_string(i_) + " of `" + s_ + "`");
    }
    p.output = side();
    skip();
    if (i_ != s_.size()) bad("trailing text in `" + s_ + "`");
    return p;
  }

 private:
  PatternSide side() {
    PatternSide out;
    for (;;) {
      skip();
      if (i_ == s_.size() || s_[i_] == ',' || s_[i_] == ')' ||
          s_.compare(i_, 2, "->") == 0)
        return out;
      out.push_back(item());
    }
  }

  PatternItem item() {
    PatternItem it;
    char c = s_[i_];
    if (c == '(') {
      ++i_;
      it.kind = IK::Group;
      it.items = side();
      if (!eat(")")) bad("unclosed group in `" + s_ + "`");
      if (it.items.empty()) bad("empty group in `" + s_ + "`");
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      it.kind = IK::Literal;
      size_t b = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        ++i_;
      it.value = std::stoll(s_.substr(b, i_ - b));
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      it.kind = IK::Label;
      size_t b = i_;
      while (
          i_ < s_.size() &&
          (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        ++i_;
      it.label = s_.substr(b, i_ - b);
    } else {
      bad(std::string("unexpected `") + c + "` in `" + s_ + "`");
    }
    return it;
  }

  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool eat(const char* tok) {
    skip();
    size_t n = std::char_traits<char>::length(tok);
    if (s_.compare(i_, n, tok) != 0) return false;
    i_ += n;
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
};

std::string item_str(const PatternItem& it) {
  if (it.kind == IK::Label) return it.label;
  if (it.kind == IK::Literal) return std::to_string(it.value);
  std::string s = "(";
  for (size_t i = 0; i < it.items.size(); ++i)
    s += (i ? " " : "") + item_str(it.items[i]);
  return s + ")";
}

std::string side_str(const PatternSide& side) {
  std::string s;
  for (size_t i = 0; i < side.size(); ++i)
    s += (i ? " " : "") + item_str(side[i]);
  return s;
}

// ---------------------------------------------------------------- labels

void labels_in(const PatternItem& it, std::vector<std::string>& out) {
  if (it.kind == IK::Label) out.push_back(it.label);
  for (const PatternItem& i : it.items) labels_in(i, out);
}

std::vector<std::string> labels_of(const PatternSide& side) {
  std::vector<std::string> out;
  for (const PatternItem& it : side) labels_in(it, out);
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = i + 1; j < out.size(); ++j)
      if (out[i] == out[j])
        bad("label `" + out[i] + "` twice in `" + side_str(side) + "`");
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v)
    if (x == s) return true;
  return false;
}

void literals_in(const PatternItem& it, std::vector<const PatternItem*>& out) {
  if (it.kind == IK::Literal) out.push_back(&it);
  for (const PatternItem& i : it.items) literals_in(i, out);
}

// The literals other than 1 of [side] (split's k; elsewhere an error).
std::vector<const PatternItem*> cut_literals(const PatternSide& side) {
  std::vector<const PatternItem*> all, out;
  for (const PatternItem& it : side) literals_in(it, all);
  for (const PatternItem* l : all)
    if (l->value != 1) out.push_back(l);
  return out;
}

// The sizes of one call's labels (numbered in order of appearance), bound
// from the operands' shapes: labels alone on an axis first, then each
// group's one unknown as the quotient, until nothing changes.
class Labels {
 public:
  Labels(const Pattern& p,
         const std::vector<Shape>& shapes,
         const LabelSizes& known) {
    if (shapes.size() != p.inputs.size())
      bad(std::to_string(shapes.size()) + " operands for " +
          std::to_string(p.inputs.size()) + " input sides");
    for (const auto& [l, s] : known) size_[l] = s;
    std::vector<std::pair<const PatternItem*, int64_t>> groups;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const PatternSide& side = p.inputs[i];
      if (side.size() != shapes[i].size())
        bad("`" + side_str(side) + "` for a rank-" +
            std::to_string(shapes[i].size()) + " operand");
      for (size_t k = 0; k < side.size(); ++k) {
        const PatternItem& it = side[k];
        if (it.kind == IK::Label)
          set(it.label, shapes[i][k]);
        else if (it.kind == IK::Literal && it.value != shapes[i][k])
          bad("literal " + std::to_string(it.value) + " on an axis of " +
              std::to_string(shapes[i][k]));
        else if (it.kind == IK::Group)
          groups.push_back({&it, shapes[i][k]});
      }
    }
    for (bool progress = true; progress;) {
      progress = false;
      for (auto g = groups.begin(); g != groups.end();) {
        std::vector<std::string> ls;
        labels_in(*g->first, ls);
        int64_t prod = literal_product(*g->first);
        std::vector<std::string> unknown;
        for (const std::string& l : ls) {
          auto s = size_.find(l);
          if (s == size_.end())
            unknown.push_back(l);
          else
            prod *= s->second;
        }
        if (unknown.size() > 1) {
          ++g;
          continue;
        }
        if (unknown.empty()) {
          if (prod != g->second)
            bad("group " + item_str(*g->first) + " is " + std::to_string(prod) +
                " on an axis of " + std::to_string(g->second));
        } else {
          if (prod == 0 || g->second % prod != 0)
            bad("group " + item_str(*g->first) + " does not divide " +
                std::to_string(g->second));
          size_[unknown[0]] = g->second / prod;
        }
        g = groups.erase(g);
        progress = true;
      }
    }
    if (!groups.empty())
      bad("group " + item_str(*groups[0].first) + " has two unknown sizes");
    for (const PatternSide& side : p.inputs) number(side);
    number(p.output);
  }

  int64_t size(const std::string& l) const {
    auto s = size_.find(l);
    if (s == size_.end()) bad("label `" + l + "` has no size");
    return s->second;
  }
  int count() const { return static_cast<int>(order_.size()); }
  int id(const std::string& l) const { return id_.at(l); }
  int64_t size(int id) const { return size(order_[id]); }

  int64_t item_size(const PatternItem& it) const {
    if (it.kind == IK::Label) return size(it.label);
    if (it.kind == IK::Literal) return it.value;
    int64_t p = 1;
    for (const PatternItem& i : it.items) p *= item_size(i);
    return p;
  }
  Shape shape(const PatternSide& side) const {
    Shape s;
    for (const PatternItem& it : side) s.push_back(item_size(it));
    return s;
  }

 private:
  void set(const std::string& l, int64_t s) {
    auto [it, fresh] = size_.insert({l, s});
    if (!fresh && it->second != s)
      bad("label `" + l + "` is " + std::to_string(it->second) + " and " +
          std::to_string(s));
  }
  static int64_t literal_product(const PatternItem& it) {
    if (it.kind == IK::Literal) return it.value;
    int64_t p = 1;
    for (const PatternItem& i : it.items) p *= literal_product(i);
    return p;
  }
  void number(const PatternSide& side) {
    for (const std::string& l : labels_of(side))
      if (id_.insert({l, static_cast<int>(order_.size())}).second) {
        size(l);  // every label needs a size
        order_.push_back(l);
      }
  }

  std::map<std::string, int64_t> size_;
  std::map<std::string, int> id_;
  std::vector<std::string> order_;
};

// One assignment of every label (an index per label id), counted through
// like an odometer; [cut] is the index of split's literal k.
struct Assignment {
  std::vector<int64_t> idx;
  int64_t cut = 0;
};

// The index of [it] in the assignment, with [cut] the item of split's k.
int64_t item_index(const PatternItem& it,
                   const Assignment& a,
                   const Labels& ls,
                   const PatternItem* cut) {
  if (it.kind == IK::Label) return a.idx[ls.id(it.label)];
  if (it.kind == IK::Literal) {
    if (&it == cut) return a.cut;
    if (it.value != 1) bad("a literal " + std::to_string(it.value));
    return 0;
  }
  int64_t i = 0;
  for (const PatternItem& p : it.items)
    i = i * ls.item_size(p) + item_index(p, a, ls, cut);
  return i;
}

// The flat (row-major) index of the element [side] names in [a].
int64_t flat_index(const PatternSide& side,
                   const Assignment& a,
                   const Labels& ls,
                   const PatternItem* cut = nullptr) {
  int64_t f = 0;
  for (const PatternItem& it : side)
    f = f * ls.item_size(it) + item_index(it, a, ls, cut);
  return f;
}

// Calls [body] for every assignment of every label of [ls].
template <class F>
void for_each_assignment(const Labels& ls, F&& body) {
  Assignment a;
  a.idx.assign(ls.count(), 0);
  for (int i = 0; i < ls.count(); ++i)
    if (ls.size(i) == 0) return;
  for (;;) {
    body(a);
    int i = ls.count() - 1;
    for (; i >= 0; --i) {
      if (++a.idx[i] < ls.size(i)) break;
      a.idx[i] = 0;
    }
    if (i < 0) return;
  }
}

std::vector<Shape> shapes_of(const std::vector<Tensor>& xs) {
  std::vector<Shape> s;
  for (const Tensor& x : xs) s.push_back(x.shape());
  return s;
}

// The generalised contraction: out[output] += prod of the inputs at their
// sides, for every assignment of every label; output labels that no input
// has broadcast (the VJP's case).
std::vector<double> contract(const std::vector<std::vector<double>>& vals,
                             const Pattern& p,
                             const Labels& ls) {
  std::vector<double> out(ops::numel_of(ls.shape(p.output)), 0.0);
  for_each_assignment(ls, [&](const Assignment& a) {
    double prod = 1;
    for (size_t i = 0; i < vals.size(); ++i)
      prod *= vals[i][flat_index(p.inputs[i], a, ls)];
    out[flat_index(p.output, a, ls)] += prod;
  });
  return out;
}

// rearrange's and split's rules: one operand, no label dropped or added,
// and (split) exactly one literal k, absent from the output.
const PatternItem* check_moves(const Pattern& p, bool split) {
  if (p.inputs.size() != 1) bad("one operand expected");
  std::vector<std::string> in = labels_of(p.inputs[0]);
  std::vector<std::string> out = labels_of(p.output);
  for (const std::string& l : in)
    if (!has(out, l)) bad("label `" + l + "` dropped");
  for (const std::string& l : out)
    if (!has(in, l)) bad("label `" + l + "` not in the input");
  if (!cut_literals(p.output).empty()) bad("a literal k in the output");
  std::vector<const PatternItem*> cut = cut_literals(p.inputs[0]);
  if (cut.size() != (split ? 1u : 0u))
    bad(std::to_string(cut.size()) + " literals other than 1 in the input");
  return split ? cut[0] : nullptr;
}

void check_einsum(const Pattern& p) {
  std::vector<std::string> in;
  for (const PatternSide& side : p.inputs) {
    if (!cut_literals(side).empty()) bad("a literal k in an einsum input");
    for (const std::string& l : labels_of(side)) in.push_back(l);
  }
  for (const std::string& l : labels_of(p.output))
    if (!has(in, l)) bad("label `" + l + "` not in any input");
  if (!cut_literals(p.output).empty()) bad("a literal k in the output");
}

types::DType promoted(const std::vector<Tensor>& xs) {
  types::DType d = xs.at(0).dtype();
  for (const Tensor& x : xs) d = types::promote(d, x.dtype());
  return d;
}

}  // namespace

Pattern parse_pattern(const std::string& text) {
  return PatternParser(text).parse();
}

std::string pattern_str(const Pattern& p) {
  std::string s;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    s += (i ? ", " : "") + side_str(p.inputs[i]);
  return s + " -> " + side_str(p.output);
}

Tensor rearrange(const Tensor& x,
                 const std::string& pattern,
                 const LabelSizes& known) {
  Pattern p = parse_pattern(pattern);
  check_moves(p, false);
  Labels ls(p, {x.shape()}, known);
  std::vector<double> v = x.to_doubles();
  Shape out = ls.shape(p.output);
  std::vector<double> r(ops::numel_of(out));
  for_each_assignment(ls, [&](const Assignment& a) {
    r[flat_index(p.output, a, ls)] = v[flat_index(p.inputs[0], a, ls)];
  });
  return Tensor::from_doubles(out, r, x.dtype());
}

std::vector<Tensor> split(const Tensor& x,
                          const std::string& pattern,
                          const LabelSizes& known) {
  Pattern p = parse_pattern(pattern);
  const PatternItem* cut = check_moves(p, true);
  Labels ls(p, {x.shape()}, known);
  std::vector<double> v = x.to_doubles();
  Shape out = ls.shape(p.output);
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < cut->value; ++k) {
    std::vector<double> r(ops::numel_of(out));
    for_each_assignment(ls, [&](Assignment a) {
      a.cut = k;
      r[flat_index(p.output, a, ls)] = v[flat_index(p.inputs[0], a, ls, cut)];
    });
    parts.push_back(Tensor::from_doubles(out, r, x.dtype()));
  }
  return parts;
}

Tensor einsum(const std::vector<Tensor>& xs,
              const std::string& pattern,
              const LabelSizes& known) {
  Pattern p = parse_pattern(pattern);
  check_einsum(p);
  Labels ls(p, shapes_of(xs), known);
  std::vector<std::vector<double>> vals;
  for (const Tensor& x : xs) vals.push_back(x.to_doubles());
  return Tensor::from_doubles(
      ls.shape(p.output), contract(vals, p, ls), promoted(xs));
}

Tensor rearrange_vjp(const Tensor& x,
                     const std::string& pattern,
                     const Tensor& ct,
                     const LabelSizes& known) {
  Pattern p = parse_pattern(pattern);
  check_moves(p, false);
  Labels ls(p, {x.shape()}, known);
  if (ct.shape() != ls.shape(p.output)) bad("cotangent of another shape");
  std::vector<double> c = ct.to_doubles(), r(x.numel(), 0.0);
  for_each_assignment(ls, [&](const Assignment& a) {
    r[flat_index(p.inputs[0], a, ls)] += c[flat_index(p.output, a, ls)];
  });
  return Tensor::from_doubles(x.shape(), r, x.dtype());
}

Tensor split_vjp(const Tensor& x,
                 const std::string& pattern,
                 const std::vector<Tensor>& cts,
                 const LabelSizes& known) {
  Pattern p = parse_pattern(pattern);
  const PatternItem* cut = check_moves(p, true);
  Labels ls(p, {x.shape()}, known);
  if (static_cast<int64_t>(cts.size()) != cut->value)
    bad("a cotangent per part expected");
  std::vector<double> r(x.numel(), 0.0);
  for (int64_t k = 0; k < cut->value; ++k) {
    if (cts[k].shape() != ls.shape(p.output)) bad("cotangent of another shape");
    std::vector<double> c = cts[k].to_doubles();
    for_each_assignment(ls, [&](Assignment a) {
      a.cut = k;
      r[flat_index(p.inputs[0], a, ls, cut)] += c[flat_index(p.output, a, ls)];
    });
  }
  return Tensor::from_doubles(x.shape(), r, x.dtype());
}

std::vector<Tensor> einsum_vjp(const std::vector<Tensor>& xs,
                               const std::string& pattern,
                               const Tensor& ct,
                               const LabelSizes& known) {
  Pattern p = parse_pattern(pattern);
  check_einsum(p);
  Labels ls(p, shapes_of(xs), known);
  if (ct.shape() != ls.shape(p.output)) bad("cotangent of another shape");
  std::vector<Tensor> grads;
  for (size_t i = 0; i < xs.size(); ++i) {
    // d x_i = einsum(ct, the others, output's side, their sides -> side i).
    Pattern back;
    std::vector<std::vector<double>> vals{ct.to_doubles()};
    back.inputs.push_back(p.output);
    for (size_t j = 0; j < xs.size(); ++j)
      if (j != i) {
        back.inputs.push_back(p.inputs[j]);
        vals.push_back(xs[j].to_doubles());
      }
    back.output = p.inputs[i];
    grads.push_back(Tensor::from_doubles(
        xs[i].shape(), contract(vals, back, ls), xs[i].dtype()));
  }
  return grads;
}

}  // namespace ss::ref
