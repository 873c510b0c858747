#pragma once
// A RuleCtx for unit tests of the builtins' shape rules: arguments are
// given as types (positionally or by param name), over= as axis names
// matched against the operand's axes, and errors and fn calls are recorded.

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ops/registry/registry.h"
#include "ops/registry/rule_ctx.h"

namespace ss::ops::testing {

using types::Axis;
using types::Type;
using K = Type::Kind;

class FakeCtx : public RuleCtx {
 public:
  explicit FakeCtx(const char* op) : def_(find_op(op)), name_(op) {
    REQUIRE(def_ != nullptr);
    args_.resize(def_->params.size());
    texts_.resize(def_->params.size());
  }

  size_t index(const std::string& param) const {
    for (size_t i = 0; i < def_->params.size(); ++i)
      if (param == def_->params[i].name) return i;
    FAIL("no param " << param << " in " << name_);
    return 0;
  }
  // Positional value argument.
  FakeCtx& arg(Type t, std::string text = "") {
    // Skip params given by name and keyword-only ones.
    while (next_ < args_.size() &&
           (args_[next_] || def_->params[next_].keyword_only))
      ++next_;
    size_t i = next_++;
    if (i >= args_.size()) {
      extras_.push_back(t);
      return *this;
    }
    if (text.empty()) text = "a" + std::to_string(i);
    args_[i] = std::move(t);
    texts_[i] = std::move(text);
    return *this;
  }
  FakeCtx& kw(const std::string& p, Type t, std::string text = "") {
    size_t i = index(p);
    args_[i] = std::move(t);
    texts_[i] = text.empty() ? p : text;
    return *this;
  }
  FakeCtx& extra_kw(const std::string& k, Type t) {
    kws_.emplace_back(k, std::move(t));
    return *this;
  }
  FakeCtx& over(std::vector<std::string> names, const std::string& p = "over") {
    size_t i = index(p);
    overs_[i] = names;
    args_[i] = Type::of(K::AxisArg);
    texts_[i] = names.size() == 1 ? names[0] : "(...)";
    return *this;
  }
  FakeCtx& int_const(const std::string& p, int64_t v) {
    ints_[index(p)] = v;
    return *this;
  }
  FakeCtx& bool_const(const std::string& p, bool v) {
    size_t i = index(p);
    bools_[i] = v;
    args_[i] = Type::of(K::Bool);
    texts_[i] = v ? "true" : "false";
    return *this;
  }
  FakeCtx& list_lengths(const std::string& p, std::vector<int64_t> v) {
    lists_[index(p)] = std::move(v);
    return *this;
  }
  FakeCtx& type_arg(const std::string& p, Type t) {
    size_t i = index(p);
    type_args_[i] = t;
    args_[i] = Type::of(K::TypeValue);
    texts_[i] = t.str();
    return *this;
  }
  FakeCtx& axis_arg(const std::string& p, Axis a, std::string text = "") {
    size_t i = index(p);
    axes_[i] = a;
    args_[i] = Type::of(K::AxisArg);
    texts_[i] = text.empty() ? a.str() : text;
    return *this;
  }
  FakeCtx& spmd(std::map<std::string, int64_t> mesh) {
    spmd_ = true;
    mesh_ = std::move(mesh);
    return *this;
  }
  FakeCtx& fn(std::function<Type(const std::vector<Type>&)> f) {
    fn_ = std::move(f);
    return *this;
  }

  Type run() {
    REQUIRE(def_->rule != nullptr);
    return def_->rule(*this);
  }

  std::vector<diag::Diagnostic> errors;
  std::vector<std::vector<Type>> calls;

  // --- RuleCtx
  bool has(size_t i) const override { return i < args_.size() && args_[i]; }
  const Type& type(size_t i) const override {
    static const Type err = Type::error();
    return has(i) ? *args_[i] : err;
  }
  diag::Span span(size_t i) const override {
    return {0, uint32_t(10 * i), uint32_t(10 * i + 5)};
  }
  diag::Span call_span() const override { return {0, 0, 100}; }
  std::string text(size_t i) const override {
    return i < texts_.size() ? texts_[i] : "";
  }
  size_t extra_count() const override { return extras_.size(); }
  const Type& extra_type(size_t k) const override { return extras_[k]; }
  diag::Span extra_span(size_t k) const override { return call_span(); }
  std::vector<std::pair<std::string, Type>> extra_keywords() const override {
    return kws_;
  }
  std::optional<Axis> axis(size_t i) override {
    auto it = axes_.find(i);
    if (it == axes_.end()) {
      error(diag::Code::E0201, span(i), "unknown axis");
      return std::nullopt;
    }
    return it->second;
  }
  std::optional<std::vector<size_t>> over(
      size_t i, const std::vector<Axis>& operand) override {
    std::vector<size_t> out;
    for (const std::string& nm : overs_[i]) {
      std::optional<size_t> found;
      for (size_t k = 0; k < operand.size(); ++k) {
        Axis a = operand[k];
        a.split.clear();
        if (a.str() == nm) {
          if (found) {
            error(diag::Code::E0308, span(i), nm + " twice");
            return std::nullopt;
          }
          found = k;
        }
      }
      if (!found) {
        error(diag::Code::E0308,
              span(i),
              "over=" + nm + " is not an axis of " + types::shape_str(operand));
        return std::nullopt;
      }
      out.push_back(*found);
    }
    return out;
  }
  Type type_arg(size_t i) override {
    auto it = type_args_.find(i);
    return it == type_args_.end() ? Type::error() : it->second;
  }
  std::optional<int64_t> const_int(size_t i) override {
    auto it = ints_.find(i);
    if (it == ints_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<double> const_float(size_t i) override {
    if (auto v = const_int(i)) return double(*v);
    return std::nullopt;
  }
  std::optional<std::string> const_str(size_t i) override {
    return std::nullopt;
  }
  std::optional<bool> const_bool(size_t i) override {
    auto it = bools_.find(i);
    if (it == bools_.end()) return std::nullopt;
    return it->second;
  }
  // Mesh axis names from the argument's text: `x`, `(x, y)`.
  std::optional<std::vector<std::string>> mesh_axes(size_t i) override {
    std::vector<std::string> names;
    std::string cur;
    for (char c : text(i) + " ") {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        cur += c;
      } else if (!cur.empty()) {
        names.push_back(cur);
        cur.clear();
      }
    }
    for (const std::string& n : names)
      if (!mesh_axis(n)) {
        error(diag::Code::E2002, span(i), n + " is not a mesh axis");
        return std::nullopt;
      }
    if (names.empty()) return std::nullopt;
    return names;
  }
  Axis size_axis(size_t i) override {
    if (auto v = const_int(i)) return Axis::lit(*v);
    return fresh("n");
  }
  std::optional<std::vector<int64_t>> list_shape(size_t i) override {
    auto it = lists_.find(i);
    if (it == lists_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::vector<IntPair>> const_int_pairs(size_t) override {
    return std::nullopt;  // the checker's tests cover literal pairs
  }
  diag::Diagnostic& error(diag::Code code,
                          diag::Span span,
                          std::string msg,
                          std::string label = {}) override {
    diag::Diagnostic d;
    d.code = code;
    d.span = span;
    d.message = std::move(msg);
    d.label = std::move(label);
    errors.push_back(std::move(d));
    return errors.back();
  }
  Axis fresh(const std::string& nm) override {
    return Axis::variable(next_var_++, nm);
  }
  Type call_fn(const Type& f,
               const std::vector<Type>& args,
               diag::Span) override {
    calls.push_back(args);
    return fn_ ? fn_(args) : Type::error();
  }
  std::optional<int64_t> mesh_axis(const std::string& nm) const override {
    auto it = mesh_.find(nm);
    if (it == mesh_.end()) return std::nullopt;
    return it->second;
  }
  bool in_spmd() const override { return spmd_; }
  const char* op_name() const override { return name_; }

 private:
  const OpDef* def_;
  const char* name_;
  size_t next_ = 0;
  std::vector<std::optional<Type>> args_;
  std::vector<std::string> texts_;
  std::vector<Type> extras_;
  std::vector<std::pair<std::string, Type>> kws_;
  std::map<size_t, std::vector<std::string>> overs_;
  std::map<size_t, bool> bools_;
  std::map<size_t, std::vector<int64_t>> lists_;
  std::map<size_t, int64_t> ints_;
  std::map<size_t, Type> type_args_;
  std::map<size_t, Axis> axes_;
  std::map<std::string, int64_t> mesh_;
  bool spmd_ = false;
  std::function<Type(const std::vector<Type>&)> fn_;
  uint32_t next_var_ = 1000;
};

}  // namespace ss::ops::testing
