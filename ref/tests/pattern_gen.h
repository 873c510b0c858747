#pragma once
// Random pattern calls for the pattern property test
// (pattern_property_test.cpp): a rearrange, split or einsum with its
// operands' types, written as .ss text, and the label sizes the reference
// needs.
//
// Note [How a label is typed]
// A label reaches the checker through the type of the axis it binds, in
// one of the ways a program writes it: a dim (`dim A3 = 4`, the label is
// the dim), a size variable of the fn's signature named like the label, a
// size variable of another name (the label an alias of it), a literal size
// (the label an alias of a literal), or the one unknown of a group cut out
// of a single axis (typed as the product, checked statically, or as a size
// variable, divided at run time). A group is typed as a group of its
// labels' types, or cut. Each way is drawn at random, with the constraints
// that make the program valid: a size variable inside a group type must
// also bind an axis alone somewhere (else no call can bind it), and a cut's
// unknown belongs to that operand only.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ref/ref_patterns.h"

namespace ss::testing {

enum class PatternOp { Rearrange, Split, Einsum };

/// One random pattern call: its pattern, its operands' types and shapes,
/// and the program declarations it needs.
struct PatternCase {
  PatternOp op = PatternOp::Einsum;
  ref::Pattern pattern;
  std::vector<std::string> operand_types;  ///< ".ss" types, e.g. "[A3 n3] f64"
  std::vector<ops::Shape> shapes;
  std::string result_type;        ///< the fn's declared result type
  std::vector<std::string> dims;  ///< "dim A3 = 4" lines
  ref::LabelSizes known;          ///< every label's size but the cuts'
  int64_t parts = 1;              ///< split's k
  bool method = false;            ///< written `x0.rearrange(...)`
  ops::Shape out_shape;           ///< of the result (each part of a split)
  /// What the case exercises ("contracted", "cut-runtime", ...), so the
  /// test can insist that every kind keeps being drawn.
  std::set<std::string> features;
  std::string text() const { return ref::pattern_str(pattern); }
};

class PatternGen {
 public:
  PatternGen(uint64_t seed, int id) : rng_(seed), id_(std::to_string(id)) {}

  PatternCase draw() {
    int r = pick(100);
    c_.op = r < 30   ? PatternOp::Rearrange
            : r < 50 ? PatternOp::Split
                     : PatternOp::Einsum;
    if (c_.op == PatternOp::Einsum) {
      draw_einsum();
    } else {
      draw_moves();
      c_.method = chance(30);
      if (c_.method) c_.features.insert("method");
    }
    finish();
    return c_;
  }

 private:
  enum class Form { Dim, Var, Alias, Literal, Cut, CutRuntime };
  struct Label {
    std::string name;
    int64_t size = 1;
    Form form = Form::Var;
  };
  // An input axis as drawn: labels (or literals: "#k") and how it is typed.
  enum class Typing { Alone, Group, CutStatic, CutRuntime };
  struct Axis {
    std::vector<std::string> atoms;
    Typing typing = Typing::Alone;
    std::string type;  // as the signature writes it (set by finish)
  };

  int pick(int n) { return static_cast<int>(rng_() % n); }
  bool chance(int percent) { return pick(100) < percent; }
  template <class T>
  void shuffle(std::vector<T>& v) {
    std::shuffle(v.begin(), v.end(), rng_);
  }

  // [n] labels with random sizes (1 often) and ways of being typed.
  void make_labels(int n) {
    static const int64_t kSizes[] = {1, 1, 2, 2, 3, 4};
    for (int i = 0; i < n; ++i) {
      Label l;
      l.size = kSizes[pick(6)];
      int f = pick(100);
      l.form = f < 30   ? Form::Dim
               : f < 60 ? Form::Var
               : f < 75 ? Form::Alias
                        : Form::Literal;
      std::string base(1, static_cast<char>('a' + i));
      l.name =
          (l.form == Form::Dim ? std::string(1, char('A' + i)) : base) + id_;
      labels_.push_back(l);
    }
  }
  Label& label(const std::string& name) {
    for (Label& l : labels_)
      if (l.name == name) return l;
    throw std::logic_error("no label " + name);
  }
  // A label's own type (Note [How a label is typed]); "" when it has none
  // a signature can write (a cut divided at run time).
  std::string label_type(const std::string& atom) {
    if (atom[0] == '#') return atom.substr(1);
    const Label& l = label(atom);
    switch (l.form) {
      case Form::Dim:
      case Form::Var:
        return l.name;
      case Form::Alias:
        return "v" + l.name;
      case Form::Literal:
      case Form::Cut:
        return std::to_string(l.size);
      case Form::CutRuntime:
        return "";
    }
    return "";
  }
  int64_t atom_size(const std::string& atom) {
    return atom[0] == '#' ? std::stoll(atom.substr(1)) : label(atom).size;
  }
  // Makes a Dim of a label whose form is free to change (it binds one
  // axis only), with the name of a dim.
  void make_dim(const std::string& atom) {
    Label& l = label(atom);
    if (l.form == Form::Dim) return;
    std::string old = l.name;
    l.form = Form::Dim;
    l.name[0] = static_cast<char>(std::toupper(l.name[0]));
    for (auto& a : operands_)
      for (auto& ax : a)
        for (auto& s : ax.atoms)
          if (s == old) s = l.name;
  }

  // Groups some adjacent axes of operand [k], each group typed as a group
  // of its labels' types or cut (Note [How a label is typed]).
  void maybe_group(size_t k, int percent) {
    auto& ax = operands_[k];
    for (size_t i = 0; i + 1 < ax.size(); ++i) {
      if (!chance(percent) || !groupable(k, i) || !groupable(k, i + 1))
        continue;
      size_t n =
          (i + 2 < ax.size() && groupable(k, i + 2) && chance(30)) ? 3 : 2;
      if (chance(60) && cut(k, i, n)) continue;
      bool ok = true;
      for (size_t j = i; j < i + n; ++j) {
        const std::string& a = ax[j].atoms[0];
        if (a[0] == '#') continue;
        Form f = label(a).form;
        // A size variable inside a group type must bind an axis alone
        // elsewhere, or no call could bind it.
        if ((f == Form::Var || f == Form::Alias) && !alone_elsewhere(a, k))
          ok = false;
      }
      if (!ok) continue;
      for (size_t j = i; j < i + n; ++j) pin(ax[j].atoms[0], k);
      join(ax, i, n, Typing::Group);
    }
  }

  bool groupable(size_t k, size_t i) {
    const Axis& a = operands_[k][i];
    return a.typing == Typing::Alone && !pinned_.count({k, a.atoms[0]});
  }

  // Cuts axes [i, i + n) of operand [k] into a group whose one unknown is
  // a label of this operand only, the others made dims; false when no
  // label fits.
  bool cut(size_t k, size_t i, size_t n) {
    auto& ax = operands_[k];
    std::map<std::string, int> n_uses = uses();
    std::vector<std::string> free;
    for (size_t j = i; j < i + n; ++j) {
      const std::string& a = ax[j].atoms[0];
      if (a[0] != '#' && n_uses[a] == 1) free.push_back(a);
    }
    if (free.empty()) return false;
    const std::string unknown = free[pick(free.size())];
    // The others are dims (made so when this is their only use), or size
    // variables that bind an axis alone in another operand: known only in
    // a call, so the checker makes the quotient a size variable of its own.
    bool symbolic = false;
    for (size_t j = i; j < i + n; ++j) {
      const std::string& a = ax[j].atoms[0];
      if (a[0] == '#' || a == unknown || n_uses[a] == 1 ||
          label(a).form == Form::Dim)
        continue;
      Form f = label(a).form;
      if ((f != Form::Var && f != Form::Alias) || !alone_elsewhere(a, k))
        return false;
      symbolic = true;
    }
    for (size_t j = i; j < i + n; ++j) {
      const std::string a = ax[j].atoms[0];
      if (a[0] != '#' && a != unknown && n_uses[a] == 1) make_dim(a);
    }
    for (size_t j = i; j < i + n; ++j) pin(ax[j].atoms[0], k);
    bool runtime = chance(50);
    label(unknown).form = runtime || symbolic ? Form::CutRuntime : Form::Cut;
    join(ax, i, n, runtime ? Typing::CutRuntime : Typing::CutStatic);
    if (symbolic) c_.features.insert("cut-symbolic");
    return true;
  }

  static void join(std::vector<Axis>& ax, size_t i, size_t n, Typing t) {
    Axis g;
    g.typing = t;
    for (size_t j = i; j < i + n; ++j) g.atoms.push_back(ax[j].atoms[0]);
    ax.erase(ax.begin() + i, ax.begin() + i + n);
    ax.insert(ax.begin() + i, std::move(g));
  }
  // Whether [l] binds an axis alone in an operand other than [k].
  bool alone_elsewhere(const std::string& l, size_t k) {
    for (size_t j = 0; j < operands_.size(); ++j)
      if (j != k)
        for (const auto& a : operands_[j])
          if (a.typing == Typing::Alone && a.atoms[0] == l) return true;
    return false;
  }
  // Keeps every axis where a size variable [l] of a group in operand [k]
  // binds alone elsewhere out of later groups, so some axis still binds it.
  void pin(const std::string& l, size_t k) {
    if (l[0] == '#') return;
    Form f = label(l).form;
    if (f == Form::Var || f == Form::Alias)
      for (size_t j = 0; j < operands_.size(); ++j)
        if (j != k) pinned_.insert({j, l});
  }

  // ------------------------------------------------------------- einsum
  void draw_einsum() {
    make_labels(1 + pick(5));
    int nops = 1 + pick(3);
    std::vector<std::string> used;
    for (int k = 0; k < nops; ++k) {
      // A 0-d operand's pattern is empty, which the parser takes only as
      // the last of several (`einsum(x, s, n d, -> n)`).
      int rank = (k > 0 && k + 1 == nops && chance(15)) ? 0 : 1 + pick(3);
      std::vector<std::string> mine;
      for (int t = 0; t < rank * 3 && static_cast<int>(mine.size()) < rank;
           ++t) {
        const std::vector<std::string>* from = &used;
        std::vector<std::string> all;
        for (const Label& l : labels_) all.push_back(l.name);
        if (used.empty() || chance(40)) from = &all;
        const std::string& l = (*from)[pick(from->size())];
        if (std::find(mine.begin(), mine.end(), l) == mine.end())
          mine.push_back(l);
      }
      std::vector<Axis> ax;
      for (const auto& l : mine) ax.push_back({{l}, Typing::Alone});
      insert_ones(ax, 10);
      operands_.push_back(ax);
      for (const auto& l : mine)
        if (std::find(used.begin(), used.end(), l) == used.end())
          used.push_back(l);
    }
    // Labels no operand drew are not part of this call.
    std::vector<Label> kept;
    for (const Label& l : labels_)
      if (std::find(used.begin(), used.end(), l.name) != used.end())
        kept.push_back(l);
    labels_ = kept;
    for (size_t k = 0; k < operands_.size(); ++k) maybe_group(k, 20);
    // The output: each label kept or summed, in a random order.
    std::vector<std::string> out;
    if (!chance(10))
      for (const Label& l : labels_)
        if (chance(50)) out.push_back(l.name);
    shuffle(out);
    draw_output(out, 20, 15);
  }

  std::map<std::string, int> uses() {
    std::map<std::string, int> n;
    for (const auto& a : operands_)
      for (const auto& ax : a)
        for (const auto& s : ax.atoms)
          if (s[0] != '#') ++n[s];
    return n;
  }

  // ------------------------------------------------ rearrange and split
  void draw_moves() {
    make_labels(1 + pick(4));
    std::vector<Axis> ax;
    for (const Label& l : labels_) ax.push_back({{l.name}, Typing::Alone});
    shuffle(ax);
    if (c_.op == PatternOp::Split) {
      c_.parts = 2 + pick(2);
      ax.insert(ax.begin() + pick(ax.size() + 1),
                Axis{{"#" + std::to_string(c_.parts)}, Typing::Alone});
    }
    insert_ones(ax, 25);
    operands_.push_back(ax);
    maybe_group(0, 35);
    std::vector<std::string> out;
    for (const Label& l : labels_) out.push_back(l.name);
    shuffle(out);
    draw_output(out, 30, 25);
  }

  // The output side from its labels in order: some adjacent ones grouped,
  // a literal 1 inserted.
  void draw_output(const std::vector<std::string>& labels,
                   int group_percent,
                   int one_percent) {
    std::vector<std::vector<std::string>> items;
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i + 1 < labels.size() && chance(group_percent)) {
        items.push_back({labels[i], labels[i + 1]});
        ++i;
      } else {
        items.push_back({labels[i]});
      }
    }
    // Sometimes an input group comes back whole (`(K m) -> (K m)`).
    for (const auto& ax : operands_[0])
      if (ax.atoms.size() > 1 && c_.op != PatternOp::Einsum && chance(40)) {
        bool labels_only = true;
        for (const auto& a : ax.atoms) labels_only &= a[0] != '#';
        if (!labels_only) continue;
        std::vector<std::vector<std::string>> rest;
        for (const auto& it : items) {
          std::vector<std::string> left;
          for (const auto& a : it)
            if (std::find(ax.atoms.begin(), ax.atoms.end(), a) ==
                ax.atoms.end())
              left.push_back(a);
          if (!left.empty()) rest.push_back(left);
        }
        rest.insert(rest.begin() + pick(rest.size() + 1), ax.atoms);
        items = rest;
      }
    // Literal 1s inserted, sometimes two (`1 a 1`).
    for (int t = 0; t < 2 && chance(one_percent); ++t)
      items.insert(items.begin() + pick(items.size() + 1), {"#1"});
    output_ = items;
  }

  // Literal 1 axes at random places of an input, sometimes two.
  void insert_ones(std::vector<Axis>& ax, int percent) {
    for (int t = 0; t < 2 && chance(percent); ++t)
      ax.insert(ax.begin() + pick(ax.size() + 1), Axis{{"#1"}, Typing::Alone});
  }

  // ------------------------------------------------------------ finish
  ref::PatternItem item_of(const std::string& atom) {
    ref::PatternItem it;
    if (atom[0] == '#') {
      it.kind = ref::PatternItem::Kind::Literal;
      it.value = std::stoll(atom.substr(1));
    } else {
      it.label = atom;
    }
    return it;
  }
  ref::PatternItem item_of(const std::vector<std::string>& atoms) {
    if (atoms.size() == 1) return item_of(atoms[0]);
    ref::PatternItem g;
    g.kind = ref::PatternItem::Kind::Group;
    for (const auto& a : atoms) g.items.push_back(item_of(a));
    return g;
  }

  // The type of an axis of a group [atoms] as the checker computes it for
  // the output, or "" when a signature cannot write it.
  std::string group_type(const std::vector<std::string>& atoms) {
    // A group equal to an input group is that input's axis (the checker
    // compares axes, not names: `(a b)` of two literal aliases is a cut
    // `(c 1)` of the same literals).
    for (const auto& a : operands_)
      for (const auto& ax : a)
        if (ax.atoms.size() > 1 && identity(ax.atoms) == identity(atoms))
          return ax.type;
    std::string s = "(";
    for (size_t i = 0; i < atoms.size(); ++i) {
      std::string t = label_type(atoms[i]);
      if (t.empty()) return "";
      s += (i ? " " : "") + t;
    }
    return s + ")";
  }
  // What the checker compares of each atom: its type, or its name where
  // the type is a fresh size variable.
  std::vector<std::string> identity(const std::vector<std::string>& atoms) {
    std::vector<std::string> v;
    for (const auto& a : atoms) {
      std::string t = label_type(a);
      v.push_back(t.empty() ? a : t);
    }
    return v;
  }
  std::string axis_type(const Axis& ax) {
    switch (ax.typing) {
      case Typing::Alone:
        return label_type(ax.atoms[0]);
      case Typing::Group: {
        std::string s = "(";
        for (size_t i = 0; i < ax.atoms.size(); ++i)
          s += (i ? " " : "") + label_type(ax.atoms[i]);
        return s + ")";
      }
      case Typing::CutStatic: {
        int64_t p = 1;
        for (const auto& a : ax.atoms) p *= atom_size(a);
        return std::to_string(p);
      }
      case Typing::CutRuntime:
        return "g" + id_ + "_" + std::to_string(runtime_vars_++);
    }
    return "";
  }

  void finish() {
    for (auto& a : operands_)
      for (auto& ax : a) ax.type = axis_type(ax);
    for (const auto& a : operands_) {
      ref::PatternSide side;
      std::string type = "[";
      ops::Shape shape;
      for (size_t i = 0; i < a.size(); ++i) {
        side.push_back(item_of(a[i].atoms));
        type += (i ? " " : "") + a[i].type;
        int64_t p = 1;
        for (const auto& s : a[i].atoms) p *= atom_size(s);
        shape.push_back(p);
      }
      c_.pattern.inputs.push_back(side);
      c_.operand_types.push_back(a.empty() ? "f64" : type + "] f64");
      c_.shapes.push_back(shape);
    }
    std::string out = "[";
    int fresh = 0;
    for (size_t i = 0; i < output_.size(); ++i) {
      const auto& it = output_[i];
      c_.pattern.output.push_back(item_of(it));
      std::string t = it.size() == 1 ? label_type(it[0]) : group_type(it);
      if (t.empty()) t = "r" + id_ + "_" + std::to_string(fresh++);
      out += (i ? " " : "") + t;
      int64_t p = 1;
      for (const auto& s : it) p *= atom_size(s);
      c_.out_shape.push_back(p);
    }
    std::string one = output_.empty() ? "f64" : out + "] f64";
    if (c_.op == PatternOp::Split) {
      c_.result_type = "(";
      for (int64_t k = 0; k < c_.parts; ++k)
        c_.result_type += (k ? ", " : "") + one;
      c_.result_type += ")";
    } else {
      c_.result_type = one;
    }
    note_features();
    for (const Label& l : labels_) {
      if (l.form == Form::Dim)
        c_.dims.push_back("dim " + l.name + " = " + std::to_string(l.size));
      if (l.form != Form::Cut && l.form != Form::CutRuntime)
        c_.known[l.name] = l.size;
    }
  }

  void note_features() {
    auto& f = c_.features;
    std::map<std::string, int> n = uses();
    std::set<std::string> out;
    for (const auto& it : output_) {
      for (const auto& a : it) out.insert(a);
      if (it.size() > 1) f.insert("group-out");
      if (it[0] == "#1") f.insert("literal-1-out");
    }
    for (const auto& [l, k] : n) {
      bool kept = out.count(l) > 0;
      if (c_.op != PatternOp::Einsum) break;
      f.insert(k > 1 ? (kept ? "kept-shared" : "contracted")
                     : (kept ? "kept-alone" : "summed-alone"));
    }
    if (output_.empty()) f.insert("0-d");
    if (operands_.size() == 3) f.insert("three-operands");
    int out_ones = 0;
    for (const auto& it : output_) out_ones += it[0] == "#1";
    if (out_ones > 1) f.insert("two-ones");
    for (const auto& a : operands_) {
      int ones = 0;
      for (const auto& ax : a)
        for (const auto& s : ax.atoms) ones += s == "#1";
      if (ones > 1) f.insert("two-ones");
    }
    for (const auto& a : operands_)
      for (const auto& ax : a) {
        if (ax.atoms.size() > 1) f.insert("group-in");
        for (const auto& s : ax.atoms)
          if (s == "#1") f.insert("literal-1-in");
        if (ax.typing == Typing::CutStatic) f.insert("cut-static");
        if (ax.typing == Typing::CutRuntime) f.insert("cut-runtime");
        if (ax.typing == Typing::Group) f.insert("group-type");
      }
    for (const Label& l : labels_) {
      if (l.size == 1) f.insert("size-1");
      if (l.form == Form::Alias) f.insert("alias");
      if (l.form == Form::Literal) f.insert("literal-alias");
    }
  }

  std::mt19937_64 rng_;
  std::string id_;
  PatternCase c_;
  std::vector<Label> labels_;
  std::vector<std::vector<Axis>> operands_;
  std::vector<std::vector<std::string>> output_;
  int runtime_vars_ = 0;
  std::set<std::pair<size_t, std::string>> pinned_;
};

}  // namespace ss::testing
